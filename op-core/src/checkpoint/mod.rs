//! Checkpoints: named resources and variables saved to one safetensors file
//! and restored from it.
//!
//! An object opts in by implementing [`Saveable`], the counterpart of
//! TensorFlow's `_serialize_to_tensors` / `_restore_from_tensors`: it gives
//! its state as tensors named by short keys, and takes them back. A
//! [`Checkpoint`] names each object, writes all their tensors to one file
//! ([`Checkpoint::save`]) and hands them back ([`Checkpoint::restore`]).
//! [`read`] and [`write`](write()) read and write such files as plain maps from tensor
//! names to tensors, for tools and tests; [`read_bytes`] decodes one held in
//! memory.
//!
//! ```
//! use std::sync::Mutex;
//!
//! use op_core::checkpoint::{self, Checkpoint, Saveable};
//! use op_core::{Error, Result, Tensor};
//!
//! /// A counter whose state is one `int64` scalar, stored under the key `value`.
//! struct Counter(Mutex<i64>);
//!
//! impl Saveable for Counter {
//!     fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
//!         Ok(vec![("value".into(), Tensor::scalar(*self.0.lock().unwrap()))])
//!     }
//!
//!     fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()> {
//!         let [value] = checkpoint::take_tensors(tensors, ["value"], "counter", "counter")?;
//!         *self.0.lock().unwrap() = value.scalar_value::<i64>()?;
//!         Ok(())
//!     }
//! }
//!
//! let path = std::env::temp_dir().join(format!("op-core-doc-{}.safetensors", std::process::id()));
//! let steps = Counter(Mutex::new(7));
//! let mut ckpt = Checkpoint::new();
//! ckpt.add("steps", &steps)?;
//! assert_eq!(ckpt.save(&path)?, ["steps/value"]);
//!
//! *steps.0.lock().unwrap() = 100;
//! ckpt.restore(&path)?;
//! assert_eq!(*steps.0.lock().unwrap(), 7);
//!
//! // The file without the objects: tensor names to tensors.
//! let tensors = checkpoint::read(&path)?;
//! assert_eq!(tensors["steps/value"], Tensor::scalar(7i64));
//! # std::fs::remove_file(&path).unwrap();
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! # File layout
//!
//! A checkpoint is a [safetensors](https://github.com/huggingface/safetensors)
//! file, so that Python's `safetensors` (`safetensors.numpy.load_file`,
//! `safe_open`) and other safetensors readers read it:
//!
//! - 8 bytes: `N`, the length of the header, an unsigned little-endian
//!   64-bit integer. This writer pads the header with spaces so that `N` is a
//!   multiple of 8.
//! - `N` bytes: the header, a UTF-8 JSON object. Each tensor has an entry
//!   `"<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin,
//!   end]}`, the offsets in bytes from the start of the data section (the
//!   byte after the header). The entry `"__metadata__"` maps strings to
//!   strings (below).
//! - The data section: each tensor's elements in row-major order,
//!   little-endian, one tensor after another with no gaps, covering the rest
//!   of the file exactly. This writer orders the tensors by decreasing element
//!   size, then by name, so every tensor is aligned to its element size.
//!
//! **Tensor names.** The tensor with key `<key>` of the object named
//! `<object>` is stored as `<object>/<key>`: `table/keys`, `table/values`,
//! `v/value`. Object names are non-empty and contain no `/`, so the first `/`
//! separates the two; keys are any non-empty strings.
//!
//! **Dtypes.** These dtypes are stored as the safetensors dtype of the same
//! element type:
//!
//! | dtype | safetensors | | dtype | safetensors |
//! |---|---|---|---|---|
//! | `bool` (one byte, 0 or 1) | `BOOL` | | `uint8` | `U8` |
//! | `int8` | `I8` | | `uint16` | `U16` |
//! | `int16` | `I16` | | `uint32` | `U32` |
//! | `int32` | `I32` | | `uint64` | `U64` |
//! | `int64` | `I64` | | `half` | `F16` |
//! | `float` | `F32` | | `bfloat16` | `BF16` |
//! | `double` | `F64` | | | |
//!
//! Two more are encoded with other safetensors tensors and listed in the
//! metadata:
//!
//! - **`string`**: a string tensor named `T` of shape `S` becomes two
//!   tensors: `T`, dtype `U8`, shape `[total bytes]`, the bytes of every
//!   element concatenated in row-major order; and `T.lengths`, dtype `I64`,
//!   shape `S`, the length in bytes of each element. Element `i` is the
//!   bytes from the sum of the lengths before it, for its length. (Bytes, not
//!   required to be UTF-8.)
//! - **`complex64`, `complex128`**: a complex tensor `T` of shape `S` is
//!   stored as `T`, dtype `F32` (`complex64`) or `F64` (`complex128`), shape
//!   `S + [2]`: real part, then imaginary part (numpy's
//!   `x.view(np.complex64)` takes them back). Many safetensors readers do not
//!   know the `C64` dtype; [`read`] still accepts `C64` tensors in a file as
//!   `complex64`.
//!
//! `resource`, `variant` and the quantized dtypes cannot be stored: saving
//! such a tensor is an `Unimplemented` error that names the tensor and its
//! dtype.
//!
//! **Metadata.** `__metadata__` holds:
//!
//! | key | value |
//! |---|---|
//! | `format` | `op-core-checkpoint` ([`FORMAT`]) |
//! | `version` | `1` ([`VERSION`]) |
//! | `strings` | a JSON array (inside the string) of the names of the string tensors, e.g. `["table/keys"]` |
//! | `complex` | a JSON array of the names of the complex tensors |
//! | `crc32c` | a JSON object mapping the name of every safetensors tensor in the file (`.lengths` ones included) to the CRC32C (Castagnoli) of its bytes in the data section, as 8 lower-case hex digits, e.g. `{"table/keys": "e3069283", "v/value": "00000000"}` |
//!
//! **Checksums.** The `crc32c` key was added within version `1`: readers
//! that do not know it ignore it, and files written before it (without the
//! key) are still read, unchecked. When the key is there, [`read`] checks,
//! before decoding any tensor, that every tensor has a checksum, that every
//! checksum names a tensor, and that each tensor's bytes have their
//! checksum; a mismatch is a `DataLoss` error naming the tensor, so a
//! flipped bit in the data is not restored as another value. (The header is
//! not checksummed; its structure is checked instead.)
//!
//! **Reading.** [`read`] reads any safetensors file. If `format` is
//! `op-core-checkpoint`, `version` must be `1` (another version is an
//! `Unimplemented` error), the checksums are checked, and the `strings` and
//! `complex` lists are decoded as above. Otherwise the file is a plain safetensors file (written by
//! Python, say; its metadata is ignored): each tensor is read as the dtype of
//! the table above, `C64` as `complex64`, and a tensor of any other
//! safetensors dtype (`F8_E4M3`, ...) is an `Unimplemented` error naming it.
//!
//! **From Python**, with `safetensors` and numpy (numpy has no `bfloat16`;
//! read such tensors with `framework="pt"`):
//!
//! ```python
//! import json, numpy as np
//! from safetensors import safe_open
//!
//! with safe_open("ckpt.safetensors", framework="np") as f:
//!     meta = f.metadata()
//!     t = {name: f.get_tensor(name) for name in f.keys()}
//!
//! def string_tensor(name):  # an object array of bytes, of the original shape
//!     data, lengths = t[name].tobytes(), t[name + ".lengths"]
//!     ends = np.cumsum(lengths.ravel())
//!     starts = ends - lengths.ravel()
//!     elements = [data[s:e] for s, e in zip(starts, ends)]
//!     return np.array(elements, dtype=object).reshape(lengths.shape)
//!
//! def complex_tensor(name):
//!     a = t[name]
//!     return a.view(np.complex64 if a.dtype == np.float32 else np.complex128)[..., 0]
//!
//! strings = {n: string_tensor(n) for n in json.loads(meta["strings"])}
//! complexes = {n: complex_tensor(n) for n in json.loads(meta["complex"])}
//!
//! # The checksums, with the `crc32c` package (`pip install crc32c`):
//! from crc32c import crc32c
//! for name, digits in json.loads(meta.get("crc32c", "{}")).items():
//!     assert crc32c(t[name].tobytes()) == int(digits, 16), name
//! ```
//!
//! # Errors and atomicity
//!
//! - Saving writes a temporary file `.<file name>.<random>.op-ckpt.tmp` in
//!   the target's directory (`<random>`: 6 ASCII letters and digits; the
//!   file name cut short, at a character boundary, so that the temporary
//!   name fits in 255 bytes: any file name that the file system allows can
//!   be saved), flushes and syncs it, renames it over the target,
//!   then syncs the directory (on Unix). If saving fails or the process dies
//!   before the rename, the previous file at the path is untouched; a process
//!   that dies may leave its temporary file behind, which is never read as
//!   the checkpoint.
//! - **Stale temporary files.** On Unix a writer holds an exclusive advisory
//!   lock (`flock`, [`File::lock`](std::fs::File::lock)) on its temporary
//!   file from just after creating it until it is renamed into place or
//!   removed; the system releases the lock when the writer dies, however it
//!   dies. Each save ([`Checkpoint::save`], [`write`](write())) and each
//!   [`Checkpoint::restore`] first removes the stale temporary files in the
//!   checkpoint's directory: those whose name has the form above (a leading
//!   `.`, 6 letters or digits, `.op-ckpt.tmp`), for any checkpoint in the
//!   directory, that are regular files and whose lock it can take at once.
//!   A live writer's file is locked and kept; other files, and the
//!   checkpoint being saved or restored even if so named, are never
//!   touched. This is best effort: a file that cannot be locked or removed
//!   (another user's, a file system without locks) stays, and errors here
//!   never fail the save or restore. [`read`] removes nothing. Temporary
//!   files of writers from before this scheme (named
//!   `.<file name>.<random>.tmp`, without a lock) are not recognized and
//!   stay. On other systems nothing is removed.
//! - Reading a truncated or corrupted file, or one that is not a safetensors
//!   file, is a `DataLoss` error; a file that does not exist is `NotFound`.
//!   Every error names the path.
//! - Other I/O errors, reading or writing, get TensorFlow's code for their
//!   errno ([`Code::from_io_error`](crate::Code::from_io_error)): a
//!   directory where the file should be is `FailedPrecondition`, a name
//!   longer than the file system allows `InvalidArgument`, a full disk
//!   `ResourceExhausted`, a denied access `PermissionDenied`. The message
//!   says what was being done (`opening`, `renaming the temporary file
//!   to`, ...) and names the path.
//! - A hostile file is an error, never a panic or an unbounded allocation.
//!   Before any tensor is built, the reader checks the header length
//!   (at most 100 MB, as the safetensors crate requires, and within the
//!   file) and every tensor's entry: its shape must have a representable
//!   element count (the product of its nonzero dimensions at most
//!   `isize::MAX`, the rule of [`TensorShape`](crate::TensorShape)), its
//!   `data_offsets` must span exactly the bytes its dtype and shape need,
//!   and the tensors must tile the data section. A string tensor's lengths
//!   must be non-negative and add up to its bytes. Each is a `DataLoss`
//!   error naming the tensor (and the shape or offsets at fault), so memory
//!   stays proportional to the file's size.
//! - [`Checkpoint::restore`] reads and decodes the whole file, and checks
//!   that it has a tensor of the right dtype for every key that each object
//!   would save now, before it restores any object. So a truncated file, a
//!   missing tensor or a changed dtype leaves every object unchanged. Other
//!   errors (a wrong shape, say) come from an object's
//!   [`restore_from_tensors`](Saveable::restore_from_tensors), which leaves
//!   that object unchanged; objects restored before it keep their restored
//!   state.
//! - Only regular files are read: a directory, a FIFO or a device (the
//!   endless `/dev/zero`) is a `FailedPrecondition` error. On Unix the file
//!   is opened with `O_NONBLOCK`, so that opening a FIFO with no writer
//!   fails at once instead of blocking; its type is then checked on the open
//!   file.
//! - [`read`] reads at most the file's size as the open file reports it,
//!   and holds the whole file in memory while decoding it; a file that grows
//!   or shrinks while it is read is `DataLoss`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use crate::{Error, Result, Tensor};

mod file;
mod reader;
mod writer;

pub use reader::{read, read_bytes};
pub use writer::write;

/// The value of the metadata key `format` in checkpoints this module writes.
pub const FORMAT: &str = "op-core-checkpoint";

/// The value of the metadata key `version`: the layout the
/// [module docs](self) describe.
pub const VERSION: &str = "1";

/// The suffix of the name of the tensor holding a string tensor's element
/// lengths: `table/keys` has `table/keys.lengths`.
pub const LENGTHS_SUFFIX: &str = ".lengths";

/// The name of the safetensors header entry holding the metadata.
const METADATA: &str = "__metadata__";
/// Metadata key: the format marker, [`FORMAT`].
const FORMAT_KEY: &str = "format";
/// Metadata key: the format version, [`VERSION`].
const VERSION_KEY: &str = "version";
/// Metadata key: the JSON array of the string tensors' names.
const STRINGS_KEY: &str = "strings";
/// Metadata key: the JSON array of the complex tensors' names.
const COMPLEX_KEY: &str = "complex";
/// Metadata key: the JSON object mapping each safetensors tensor's name to
/// the CRC32C of its data.
const CRC32C_KEY: &str = "crc32c";

/// State that can be saved to a checkpoint and restored from one: the
/// seed's `_serialize_to_tensors` / `_restore_from_tensors`.
///
/// A saveable object names its tensors with short keys (a hash table:
/// `keys` and `values`; a variable: `value`); the checkpoint stores each
/// as `<object name>/<key>`.
pub trait Saveable {
    /// The object's state as named tensors.
    fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>>;

    /// Replaces the object's state with `tensors`, the ones
    /// [`serialize_to_tensors`](Self::serialize_to_tensors) produced, by
    /// key. A missing key or a tensor of the wrong dtype or shape is an
    /// error, and the object is left unchanged.
    fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()>;
}

/// The first step of a [`Saveable::restore_from_tensors`]: the tensor of
/// each of `keys`, in that order, out of the `tensors` it received.
///
/// `object` names the object in messages (`variable 'v'`) and `kind` says
/// what it is (`variable`). A key missing from `tensors` is `NotFound`; a
/// key not in `keys`, or one given twice, is `InvalidArgument`.
///
/// ```
/// use op_core::Tensor;
/// use op_core::checkpoint::take_tensors;
///
/// let tensors = vec![
///     ("values".to_owned(), Tensor::scalar(2.0f32)),
///     ("keys".to_owned(), Tensor::scalar(1i64)),
/// ];
/// let [keys, values] = take_tensors(tensors, ["keys", "values"], "table 't'", "table")?;
/// assert_eq!(keys, Tensor::scalar(1i64));
///
/// let err = take_tensors(vec![], ["value"], "variable 'v'", "variable").unwrap_err();
/// assert_eq!(err.message(), "cannot restore variable 'v': no tensor for key 'value'");
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn take_tensors<const N: usize>(
    tensors: Vec<(String, Tensor)>,
    keys: [&str; N],
    object: &str,
    kind: &str,
) -> Result<[Tensor; N]> {
    let mut slots: [Option<Tensor>; N] = std::array::from_fn(|_| None);
    for (key, tensor) in tensors {
        let Some(i) = keys.iter().position(|k| *k == key) else {
            let quoted: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
            let saves = match quoted.as_slice() {
                [one] => format!("only {one}"),
                [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
                [] => "nothing".to_owned(),
            };
            return Err(Error::invalid_argument(format!(
                "cannot restore {object}: unexpected key '{key}' (a {kind} saves {saves})"
            )));
        };
        if slots[i].replace(tensor).is_some() {
            return Err(Error::invalid_argument(format!(
                "cannot restore {object}: key '{key}' is given twice"
            )));
        }
    }
    let mut taken = Vec::with_capacity(N);
    for (slot, key) in slots.into_iter().zip(keys) {
        taken.push(slot.ok_or_else(|| {
            Error::not_found(format!(
                "cannot restore {object}: no tensor for key '{key}'"
            ))
        })?);
    }
    Ok(taken
        .try_into()
        .unwrap_or_else(|_| unreachable!("one tensor per key")))
}

/// A set of named [`Saveable`] objects, saved to one file and restored from
/// it.
///
/// Objects are borrowed for `'a`. See the [module docs](self) for the file
/// layout and an example.
///
/// ```
/// # use op_core::checkpoint::{Checkpoint, Saveable};
/// # use op_core::{Result, Tensor};
/// # struct Nothing;
/// # impl Saveable for Nothing {
/// #     fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> { Ok(vec![]) }
/// #     fn restore_from_tensors(&self, _: Vec<(String, Tensor)>) -> Result<()> { Ok(()) }
/// # }
/// let (a, b) = (Nothing, Nothing);
/// let mut ckpt = Checkpoint::new();
/// ckpt.add("a", &a)?.add("b", &b)?;
/// assert_eq!(ckpt.names().collect::<Vec<_>>(), ["a", "b"]);
/// assert!(ckpt.add("a", &b).is_err()); // taken
/// assert!(ckpt.add("x/y", &b).is_err()); // no '/'
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Default)]
pub struct Checkpoint<'a> {
    objects: BTreeMap<String, &'a dyn Saveable>,
}

impl fmt::Debug for Checkpoint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checkpoint")
            .field("objects", &self.objects.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl<'a> Checkpoint<'a> {
    /// A checkpoint with no objects.
    pub fn new() -> Checkpoint<'a> {
        Checkpoint::default()
    }

    /// Adds `object` under `name`, the prefix of its tensors' names.
    ///
    /// Returns an `InvalidArgument` error if `name` is empty or contains
    /// `/`, and an `AlreadyExists` error if another object has the name.
    pub fn add(&mut self, name: impl Into<String>, object: &'a dyn Saveable) -> Result<&mut Self> {
        let name = name.into();
        if name.is_empty() || name.contains('/') {
            return Err(Error::invalid_argument(format!(
                "invalid checkpoint object name {name:?}: names are non-empty and contain no '/'"
            )));
        }
        if self.objects.contains_key(&name) {
            return Err(Error::already_exists(format!(
                "the checkpoint already has an object named '{name}'"
            )));
        }
        self.objects.insert(name, object);
        Ok(self)
    }

    /// The objects' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.objects.keys().map(String::as_str)
    }

    /// Every object's tensors, named `<object>/<key>`: what
    /// [`save`](Self::save) writes.
    ///
    /// Returns the error of an object's
    /// [`serialize_to_tensors`](Saveable::serialize_to_tensors), with the
    /// object's name as context, and an `InvalidArgument` error if an object
    /// gives an empty key or the same key twice.
    pub fn tensors(&self) -> Result<BTreeMap<String, Tensor>> {
        let mut all = BTreeMap::new();
        for (name, object) in &self.objects {
            let tensors = object
                .serialize_to_tensors()
                .map_err(|e| e.with_context(format!("serializing checkpoint object '{name}'")))?;
            for (key, tensor) in tensors {
                if key.is_empty() {
                    return Err(Error::invalid_argument(format!(
                        "checkpoint object '{name}' gave a tensor with an empty key"
                    )));
                }
                let full = format!("{name}/{key}");
                if all.insert(full, tensor).is_some() {
                    return Err(Error::invalid_argument(format!(
                        "checkpoint object '{name}' gave two tensors with key '{key}'"
                    )));
                }
            }
        }
        Ok(all)
    }

    /// Saves every object's tensors to the file at `path`, replacing it
    /// atomically, and returns the names of the tensors written, sorted (as
    /// [`read`] gives them back: a string tensor's `.lengths` companion is
    /// not listed).
    ///
    /// Returns the errors of [`tensors`](Self::tensors) and [`write`](write()); on
    /// error the file at `path` is unchanged.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<Vec<String>> {
        let path = path.as_ref();
        let tensors = self
            .tensors()
            .map_err(|e| e.with_context(format!("saving checkpoint '{}'", path.display())))?;
        write(path, &tensors)?;
        Ok(tensors.into_keys().collect())
    }

    /// Restores every object from the file at `path`: each object's
    /// [`restore_from_tensors`](Saveable::restore_from_tensors) gets the
    /// file's tensors named `<object>/<key>`, as `(key, tensor)` sorted by
    /// key. Tensors of objects not in this checkpoint are ignored.
    ///
    /// First it removes the stale temporary files that dead writers left in
    /// the file's directory (on Unix; see the [module docs](self)). Before
    /// restoring any object, this reads and decodes the whole file
    /// (the errors of [`read`]) and checks, for each object, that the file
    /// has a tensor of the same dtype for every key the object's
    /// [`serialize_to_tensors`](Saveable::serialize_to_tensors) gives now: a
    /// `NotFound` error names the missing tensor and lists the object's
    /// tensors in the file, an `InvalidArgument` error names both dtypes. (An
    /// object whose `serialize_to_tensors` fails is not checked.) Then the
    /// objects are restored in name order; an object's error (a wrong shape,
    /// say) stops there with the object's name, the path and the tensors
    /// passed as context, and the objects restored before it keep their
    /// restored state.
    pub fn restore(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let context = || format!("restoring checkpoint '{}'", path.display());
        file::remove_stale_temp_files_beside(path);
        let file = read(path)?;

        // The file's tensors, grouped by object; objects not added are skipped.
        let mut groups: BTreeMap<&str, Vec<(String, Tensor)>> = self
            .objects
            .keys()
            .map(|name| (name.as_str(), Vec::new()))
            .collect();
        let file_objects: BTreeSet<&str> = file
            .keys()
            .filter_map(|full| full.split_once('/').map(|(object, _)| object))
            .collect();
        for (full, tensor) in &file {
            if let Some((object, key)) = full.split_once('/')
                && let Some(group) = groups.get_mut(object)
            {
                group.push((key.to_string(), tensor.clone()));
            }
        }

        for (name, object) in &self.objects {
            let group = groups.get(name.as_str()).map_or(&[][..], Vec::as_slice);
            let Ok(expected) = object.serialize_to_tensors() else {
                continue;
            };
            for (key, tensor) in expected {
                match group.iter().find(|(k, _)| *k == key) {
                    None => {
                        let has = if group.is_empty() {
                            format!(
                                "it has no tensors for '{name}' (it has objects: {})",
                                list(file_objects.iter())
                            )
                        } else {
                            format!(
                                "it has for '{name}': {}",
                                list(group.iter().map(|(k, _)| format!("{name}/{k}")))
                            )
                        };
                        return Err(Error::not_found(format!(
                            "the checkpoint has no tensor '{name}/{key}' for key '{key}' of \
                             object '{name}'; {has}"
                        ))
                        .with_context(context()));
                    }
                    Some((_, found)) if found.dtype() != tensor.dtype() => {
                        return Err(Error::invalid_argument(format!(
                            "tensor '{name}/{key}' has dtype {} in the checkpoint but object \
                             '{name}' holds {} for key '{key}'",
                            found.dtype(),
                            tensor.dtype()
                        ))
                        .with_context(context()));
                    }
                    Some(_) => {}
                }
            }
        }

        for (name, group) in groups {
            let Some(object) = self.objects.get(name) else {
                continue;
            };
            let names = list(group.iter().map(|(k, _)| format!("{name}/{k}")));
            object.restore_from_tensors(group).map_err(|e| {
                e.with_context(format!(
                    "restoring checkpoint object '{name}' from tensors {names}"
                ))
                .with_context(context())
            })?;
        }
        Ok(())
    }
}

/// Formats names as a comma-separated list, at most 20 of them.
fn list<S: fmt::Display>(names: impl IntoIterator<Item = S>) -> String {
    const LIMIT: usize = 20;
    let mut out = String::new();
    let mut count = 0;
    for name in names {
        if count < LIMIT {
            if count > 0 {
                out.push_str(", ");
            }
            out.push_str(&name.to_string());
        }
        count += 1;
    }
    if count == 0 {
        out.push_str("(none)");
    } else if count > LIMIT {
        out.push_str(&format!(", and {} more", count - LIMIT));
    }
    out
}
