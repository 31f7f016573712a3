//! Checkpoints: named resources and variables saved to one safetensors file
//! and restored from it.
//!
//! An object opts in by implementing [`Saveable`], the counterpart of
//! TensorFlow's `_serialize_to_tensors` / `_restore_from_tensors`: it gives
//! its state as tensors named by short keys, and takes them back. A
//! [`Checkpoint`] names each object, writes all their tensors to one file
//! ([`Checkpoint::save`]) and hands them back ([`Checkpoint::restore`]).
//! [`read`] and [`write`](write()) read and write such files as plain maps from tensor
//! names to tensors, for tools and tests.
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
//!
//! **Reading.** [`read`] reads any safetensors file. If `format` is
//! `op-core-checkpoint`, `version` must be `1` (another version is an
//! `Unimplemented` error) and the `strings` and `complex` lists are decoded
//! as above. Otherwise the file is a plain safetensors file (written by
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
//! ```
//!
//! # Errors and atomicity
//!
//! - Saving writes a temporary file `.<file name>.<random>.tmp` in the
//!   target's directory, flushes and syncs it, renames it over the target,
//!   then syncs the directory (on Unix). If saving fails or the process dies
//!   before the rename, the previous file at the path is untouched; a process
//!   that dies may leave its temporary file behind, which is never read as
//!   the checkpoint.
//! - Reading a truncated or corrupted file, or one that is not a safetensors
//!   file, is a `DataLoss` error; a file that does not exist is `NotFound`.
//!   Every error names the path.
//! - [`Checkpoint::restore`] reads and decodes the whole file, and checks
//!   that it has a tensor of the right dtype for every key that each object
//!   would save now, before it restores any object. So a truncated file, a
//!   missing tensor or a changed dtype leaves every object unchanged. Other
//!   errors (a wrong shape, say) come from an object's
//!   [`restore_from_tensors`](Saveable::restore_from_tensors), which leaves
//!   that object unchanged; objects restored before it keep their restored
//!   state.
//! - [`read`] holds the whole file in memory while decoding it.

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use half::{bf16, f16};
use safetensors::SafeTensors;
use safetensors::tensor::{Dtype, Metadata, TensorInfo};

use crate::{Code, Complex, Complex64, Complex128, DType, Element, Error, Result, Tensor};

/// The value of the metadata key `format` in checkpoints this module writes.
pub const FORMAT: &str = "op-core-checkpoint";

/// The value of the metadata key `version`: the layout the
/// [module docs](self) describe.
pub const VERSION: &str = "1";

/// The suffix of the name of the tensor holding a string tensor's element
/// lengths: `table/keys` has `table/keys.lengths`.
pub const LENGTHS_SUFFIX: &str = ".lengths";

/// Metadata key: the format marker, [`FORMAT`].
const FORMAT_KEY: &str = "format";
/// Metadata key: the format version, [`VERSION`].
const VERSION_KEY: &str = "version";
/// Metadata key: the JSON array of the string tensors' names.
const STRINGS_KEY: &str = "strings";
/// Metadata key: the JSON array of the complex tensors' names.
const COMPLEX_KEY: &str = "complex";

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
    /// Before restoring any object, this reads and decodes the whole file
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

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

/// Writes `tensors` (names and tensors: a `&BTreeMap<String, Tensor>`, a
/// `Vec<(&str, &Tensor)>`, ...) to the file at `path` in the layout of the
/// [module docs](self), replacing the file atomically: a temporary file in
/// the same directory, synced, then renamed over `path`.
///
/// Returns an `InvalidArgument` error for an empty, duplicate or reserved
/// (`__metadata__`) name, or if a string tensor's `.lengths` companion has
/// the name of another tensor; an `Unimplemented` error for a tensor whose
/// dtype cannot be stored; and the I/O error (`NotFound` for a missing
/// directory, `PermissionDenied`, ...). Every error names the path, and on
/// error the file at `path` is unchanged.
///
/// ```
/// use op_core::{checkpoint, Tensor};
/// let path = std::env::temp_dir().join(format!("op-core-write-{}.safetensors", std::process::id()));
/// let words = Tensor::strings([2], ["hello", "world"])?;
/// let ids = Tensor::from_vec([2], vec![4i64, 2])?;
/// checkpoint::write(&path, [("words", &words), ("ids", &ids)])?;
/// let back = checkpoint::read(&path)?;
/// assert_eq!(back["words"], words);
/// assert_eq!(back["ids"], ids);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn write<I, K, T>(path: impl AsRef<Path>, tensors: I) -> Result<()>
where
    I: IntoIterator<Item = (K, T)>,
    K: AsRef<str>,
    T: Borrow<Tensor>,
{
    let path = path.as_ref();
    let tensors: Vec<(K, T)> = tensors.into_iter().collect();
    write_tensors(path, &tensors)
        .map_err(|e| e.with_context(format!("writing checkpoint '{}'", path.display())))
}

/// [`write`](write()) without the context.
fn write_tensors<K: AsRef<str>, T: Borrow<Tensor>>(path: &Path, tensors: &[(K, T)]) -> Result<()> {
    let mut stored = Vec::new();
    let mut strings = Vec::new();
    let mut complex = Vec::new();
    // Every safetensors name, with the name of the tensor it stores.
    let mut owners: BTreeMap<String, &str> = BTreeMap::new();
    for (name, tensor) in tensors {
        let name = name.as_ref();
        if name.is_empty() || name == "__metadata__" {
            return Err(Error::invalid_argument(format!(
                "invalid tensor name {name:?}: names are non-empty and not '__metadata__'"
            )));
        }
        let tensor = tensor.borrow();
        match tensor.dtype() {
            DType::String => strings.push(name.to_string()),
            DType::Complex64 | DType::Complex128 => complex.push(name.to_string()),
            _ => {}
        }
        for entry in encode(name, tensor)? {
            if let Some(owner) = owners.insert(entry.name.clone(), name) {
                return Err(Error::invalid_argument(if owner == name {
                    format!("two tensors are named '{name}'")
                } else {
                    format!(
                        "tensor names '{owner}' and '{name}' both need the name '{}' (a string \
                         tensor's lengths are stored as '<name>{LENGTHS_SUFFIX}')",
                        entry.name
                    )
                }));
            }
            stored.push(entry);
        }
    }
    // Largest elements first, so every tensor is aligned to its element size.
    stored.sort_by(|a, b| {
        b.dtype
            .bitsize()
            .cmp(&a.dtype.bitsize())
            .then_with(|| a.name.cmp(&b.name))
    });

    strings.sort();
    complex.sort();
    let header = header(&stored, &strings, &complex)?;
    write_atomically(path, &header, &stored)
}

/// A tensor as safetensors stores it: name, dtype, shape and elements.
struct Stored<'t> {
    name: String,
    dtype: Dtype,
    shape: Vec<usize>,
    /// The size of the data in bytes.
    bytes: usize,
    data: Source<'t>,
}

/// The elements of a [`Stored`] tensor, borrowed from the tensor.
enum Source<'t> {
    Bool(&'t [bool]),
    U8(&'t [u8]),
    I8(&'t [i8]),
    I16(&'t [i16]),
    U16(&'t [u16]),
    I32(&'t [i32]),
    U32(&'t [u32]),
    I64(&'t [i64]),
    U64(&'t [u64]),
    F16(&'t [f16]),
    BF16(&'t [bf16]),
    F32(&'t [f32]),
    F64(&'t [f64]),
    Complex64(&'t [Complex64]),
    Complex128(&'t [Complex128]),
    /// A string tensor's bytes, concatenated.
    StringBytes(&'t [Vec<u8>]),
    /// A string tensor's element lengths, as `i64`.
    StringLengths(&'t [Vec<u8>]),
}

/// The safetensors tensors that store `tensor`, named `name`.
fn encode<'t>(name: &str, tensor: &'t Tensor) -> Result<Vec<Stored<'t>>> {
    let dims = tensor.dims();
    let n = tensor.num_elements();
    let size = |element_bytes: usize| {
        n.checked_mul(element_bytes).ok_or_else(|| {
            Error::invalid_argument(format!("tensor '{name}' is too large to store"))
        })
    };
    let one = |dtype: Dtype, shape: Vec<usize>, bytes: usize, data: Source<'t>| {
        Ok(vec![Stored {
            name: name.to_string(),
            dtype,
            shape,
            bytes,
            data,
        }])
    };
    macro_rules! plain {
        ($ty:ty, $variant:ident, $dtype:ident) => {
            one(
                Dtype::$dtype,
                dims.to_vec(),
                size(size_of::<$ty>())?,
                Source::$variant(tensor.as_slice::<$ty>()?),
            )
        };
    }
    match tensor.dtype() {
        DType::Bool => plain!(bool, Bool, BOOL),
        DType::U8 => plain!(u8, U8, U8),
        DType::I8 => plain!(i8, I8, I8),
        DType::I16 => plain!(i16, I16, I16),
        DType::U16 => plain!(u16, U16, U16),
        DType::I32 => plain!(i32, I32, I32),
        DType::U32 => plain!(u32, U32, U32),
        DType::I64 => plain!(i64, I64, I64),
        DType::U64 => plain!(u64, U64, U64),
        DType::F16 => plain!(f16, F16, F16),
        DType::BF16 => plain!(bf16, BF16, BF16),
        DType::F32 => plain!(f32, F32, F32),
        DType::F64 => plain!(f64, F64, F64),
        DType::Complex64 => one(
            Dtype::F32,
            [dims, &[2]].concat(),
            size(8)?,
            Source::Complex64(tensor.as_slice()?),
        ),
        DType::Complex128 => one(
            Dtype::F64,
            [dims, &[2]].concat(),
            size(16)?,
            Source::Complex128(tensor.as_slice()?),
        ),
        DType::String => {
            let elements = tensor.as_slice::<Vec<u8>>()?;
            let total = elements
                .iter()
                .try_fold(0usize, |sum, s| sum.checked_add(s.len()))
                .ok_or_else(|| {
                    Error::invalid_argument(format!("tensor '{name}' is too large to store"))
                })?;
            Ok(vec![
                Stored {
                    name: name.to_string(),
                    dtype: Dtype::U8,
                    shape: vec![total],
                    bytes: total,
                    data: Source::StringBytes(elements),
                },
                Stored {
                    name: format!("{name}{LENGTHS_SUFFIX}"),
                    dtype: Dtype::I64,
                    shape: dims.to_vec(),
                    bytes: size(8)?,
                    data: Source::StringLengths(elements),
                },
            ])
        }
        dtype @ (DType::QInt8
        | DType::QUInt8
        | DType::QInt16
        | DType::QUInt16
        | DType::QInt32
        | DType::Resource
        | DType::Variant) => Err(Error::unimplemented(format!(
            "tensor '{name}' has dtype {dtype}, which a checkpoint cannot store"
        ))),
    }
}

/// The header JSON, padded with spaces to a multiple of 8 bytes.
fn header(stored: &[Stored<'_>], strings: &[String], complex: &[String]) -> Result<Vec<u8>> {
    let json =
        |e: serde_json::Error| Error::internal(format!("encoding the checkpoint header: {e}"));
    let metadata: BTreeMap<&str, String> = [
        (FORMAT_KEY, FORMAT.to_string()),
        (VERSION_KEY, VERSION.to_string()),
        (STRINGS_KEY, serde_json::to_string(strings).map_err(json)?),
        (COMPLEX_KEY, serde_json::to_string(complex).map_err(json)?),
    ]
    .into();
    let mut header = serde_json::Map::new();
    header.insert(
        "__metadata__".to_string(),
        serde_json::to_value(metadata).map_err(json)?,
    );
    let mut offset = 0usize;
    for entry in stored {
        let end = offset
            .checked_add(entry.bytes)
            .ok_or_else(|| Error::invalid_argument("the checkpoint is too large to store"))?;
        let info = TensorInfo {
            dtype: entry.dtype,
            shape: entry.shape.clone(),
            data_offsets: (offset, end),
        };
        header.insert(
            entry.name.clone(),
            serde_json::to_value(info).map_err(json)?,
        );
        offset = end;
    }
    let mut text = serde_json::Value::Object(header).to_string();
    // The safetensors library must accept what we write: it checks that the
    // offsets cover the data, each exactly as large as dtype and shape say.
    serde_json::from_str::<Metadata>(&text)
        .map_err(|e| Error::internal(format!("the checkpoint header is invalid: {e}")))?;
    while !text.len().is_multiple_of(8) {
        text.push(' ');
    }
    Ok(text.into_bytes())
}

/// Writes the file to a temporary file next to `path`, syncs it, renames it
/// over `path` and syncs the directory.
fn write_atomically(path: &Path, header: &[u8], stored: &[Stored<'_>]) -> Result<()> {
    let file_name = path.file_name().ok_or_else(|| {
        Error::invalid_argument(format!(
            "checkpoint path '{}' names no file",
            path.display()
        ))
    })?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let prefix = format!(".{}.", file_name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Like `File::create`: 0o666 less the umask (tempfile's default is 0o600).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut temp = builder
        .tempfile_in(dir)
        .map_err(|e| io_error(e, "creating a temporary file in", dir))?;

    let written = (|| {
        let mut out = BufWriter::with_capacity(1 << 20, temp.as_file_mut());
        out.write_all(&(header.len() as u64).to_le_bytes())?;
        out.write_all(header)?;
        for entry in stored {
            entry.data.write_to(&mut out)?;
        }
        out.flush()?;
        drop(out);
        temp.as_file().sync_all()
    })();
    // On error, dropping `temp` deletes the temporary file.
    written.map_err(|e| io_error(e, "writing", temp.path()))?;
    temp.persist(path)
        .map_err(|e| io_error(e.error, "renaming the temporary file to", path))?;
    #[cfg(unix)]
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error(e, "syncing the directory", dir))?;
    Ok(())
}

impl Source<'_> {
    /// Writes the elements, little-endian.
    fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        match *self {
            Source::Bool(v) => write_le(out, v, |&b| [u8::from(b)]),
            Source::U8(v) => out.write_all(v),
            Source::I8(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::I16(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::U16(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::I32(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::U32(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::I64(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::U64(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::F16(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::BF16(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::F32(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::F64(v) => write_le(out, v, |x| x.to_le_bytes()),
            Source::Complex64(v) => write_le(out, v, |c| {
                pair::<4, 8>(c.re.to_le_bytes(), c.im.to_le_bytes())
            }),
            Source::Complex128(v) => write_le(out, v, |c| {
                pair::<8, 16>(c.re.to_le_bytes(), c.im.to_le_bytes())
            }),
            Source::StringBytes(v) => v.iter().try_for_each(|s| out.write_all(s)),
            Source::StringLengths(v) => write_le(out, v, |s| (s.len() as i64).to_le_bytes()),
        }
    }
}

/// The bytes of `a` then those of `b`.
fn pair<const N: usize, const M: usize>(a: [u8; N], b: [u8; N]) -> [u8; M] {
    let mut out = [0; M];
    for (o, x) in out.iter_mut().zip(a.into_iter().chain(b)) {
        *o = x;
    }
    out
}

/// Writes `values` converted by `bytes`, through a buffer of about 64 KiB.
fn write_le<T, const N: usize>(
    out: &mut impl Write,
    values: &[T],
    bytes: impl Fn(&T) -> [u8; N],
) -> io::Result<()> {
    let mut buffer = Vec::with_capacity(1 << 16);
    for chunk in values.chunks(((1 << 16) / N).max(1)) {
        buffer.clear();
        for value in chunk {
            buffer.extend_from_slice(&bytes(value));
        }
        out.write_all(&buffer)?;
    }
    Ok(())
}

/// An I/O error as an [`Error`] with TensorFlow's code for it.
fn io_error(error: io::Error, doing: &str, path: &Path) -> Error {
    let code = match error.kind() {
        io::ErrorKind::NotFound => Code::NotFound,
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            Code::PermissionDenied
        }
        io::ErrorKind::AlreadyExists => Code::AlreadyExists,
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => Code::ResourceExhausted,
        _ => Code::Unknown,
    };
    Error::new(code, format!("{doing} '{}': {error}", path.display()))
}

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

/// Reads every tensor of the safetensors file at `path`, by name, decoding
/// the string and complex tensors of the [module docs](self)' layout.
///
/// Returns a `NotFound` error if there is no file, a `DataLoss` error if the
/// file is truncated, corrupted or not a safetensors file, and an
/// `Unimplemented` error for a newer format version or a tensor whose
/// safetensors dtype has no dtype here; every error names the path.
///
/// ```
/// use op_core::{checkpoint, Code};
/// let path = std::env::temp_dir().join(format!("op-core-read-{}.txt", std::process::id()));
/// std::fs::write(&path, "not a checkpoint").unwrap();
/// let err = checkpoint::read(&path).unwrap_err();
/// assert_eq!(err.code(), Code::DataLoss);
/// assert!(err.to_string().contains(&*path.to_string_lossy()));
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn read(path: impl AsRef<Path>) -> Result<BTreeMap<String, Tensor>> {
    let path = path.as_ref();
    let context = || format!("reading checkpoint '{}'", path.display());
    let bytes = fs::read(path).map_err(|e| io_error(e, "reading", path).with_context(context()))?;
    decode(&bytes).map_err(|e| e.with_context(context()))
}

/// The tensors of a whole safetensors file.
fn decode(bytes: &[u8]) -> Result<BTreeMap<String, Tensor>> {
    let (header_len, metadata) = SafeTensors::read_metadata(bytes)
        .map_err(|e| Error::data_loss(format!("not a valid safetensors file: {e}")))?;
    let data = 8usize
        .checked_add(header_len)
        .and_then(|start| bytes.get(start..))
        .ok_or_else(|| Error::data_loss("the header runs past the end of the file"))?;
    let infos = metadata.tensors();
    let (strings, complex) = encodings(metadata.metadata().as_ref())?;

    let mut out = BTreeMap::new();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut take = |name: &str| -> Result<(&TensorInfo, &[u8])> {
        let Some(&info) = infos.get(name) else {
            return Err(Error::data_loss(format!(
                "the metadata lists tensor '{name}' but the file has no tensor of that name"
            )));
        };
        if !done.insert(name.to_string()) {
            return Err(Error::data_loss(format!(
                "the metadata lists tensor '{name}' twice"
            )));
        }
        let (begin, end) = info.data_offsets;
        let data = data.get(begin..end).ok_or_else(|| {
            Error::data_loss(format!("tensor '{name}' lies outside the file's data"))
        })?;
        Ok((info, data))
    };

    for name in &strings {
        let lengths_name = format!("{name}{LENGTHS_SUFFIX}");
        let (bytes_info, bytes) = take(name)?;
        let (lengths_info, lengths) = take(&lengths_name)?;
        if bytes_info.dtype != Dtype::U8 || bytes_info.shape.len() != 1 {
            return Err(Error::data_loss(format!(
                "string tensor '{name}' is stored as {} {:?}, not as U8 of rank 1",
                bytes_info.dtype, bytes_info.shape
            )));
        }
        if lengths_info.dtype != Dtype::I64 {
            return Err(Error::data_loss(format!(
                "the lengths '{lengths_name}' of string tensor '{name}' are {}, not I64",
                lengths_info.dtype
            )));
        }
        let lengths = elements(&lengths_name, lengths, i64::from_le_bytes)?;
        let mut rest = bytes;
        let mut values = Vec::with_capacity(lengths.len());
        for length in lengths {
            let element = usize::try_from(length)
                .ok()
                .and_then(|length| rest.split_at_checked(length));
            let Some((element, tail)) = element else {
                return Err(Error::data_loss(format!(
                    "the lengths '{lengths_name}' of string tensor '{name}' do not match its \
                     {} bytes",
                    bytes.len()
                )));
            };
            values.push(element.to_vec());
            rest = tail;
        }
        if !rest.is_empty() {
            return Err(Error::data_loss(format!(
                "the lengths '{lengths_name}' of string tensor '{name}' do not match its {} bytes",
                bytes.len()
            )));
        }
        out.insert(name.clone(), from_vec(name, &lengths_info.shape, values)?);
    }

    for name in &complex {
        let (info, bytes) = take(name)?;
        let Some((&2, dims)) = info.shape.split_last() else {
            return Err(Error::data_loss(format!(
                "complex tensor '{name}' has shape {:?}, not one ending in 2",
                info.shape
            )));
        };
        let tensor = match info.dtype {
            Dtype::F32 => complex_tensor(name, dims, bytes, f32::from_le_bytes)?,
            Dtype::F64 => complex_tensor(name, dims, bytes, f64::from_le_bytes)?,
            other => {
                return Err(Error::data_loss(format!(
                    "complex tensor '{name}' is stored as {other}, not as F32 or F64"
                )));
            }
        };
        out.insert(name.clone(), tensor);
    }

    for (name, info) in &infos {
        if done.contains(name) {
            continue;
        }
        let (begin, end) = info.data_offsets;
        let bytes = data.get(begin..end).ok_or_else(|| {
            Error::data_loss(format!("tensor '{name}' lies outside the file's data"))
        })?;
        out.insert(name.clone(), plain_tensor(name, info, bytes)?);
    }
    Ok(out)
}

/// The names of the string and complex tensors, from the metadata of an
/// op-core checkpoint; none for a plain safetensors file.
fn encodings(metadata: Option<&HashMap<String, String>>) -> Result<(Vec<String>, Vec<String>)> {
    let Some(metadata) = metadata else {
        return Ok(Default::default());
    };
    if metadata.get(FORMAT_KEY).map(String::as_str) != Some(FORMAT) {
        return Ok(Default::default());
    }
    match metadata.get(VERSION_KEY) {
        Some(version) if version == VERSION => {}
        Some(version) => {
            return Err(Error::unimplemented(format!(
                "checkpoint format version {version:?} is not supported (this reader knows \
                 version {VERSION})"
            )));
        }
        None => {
            return Err(Error::data_loss(format!(
                "the metadata says format '{FORMAT}' but gives no version"
            )));
        }
    }
    let names = |key: &str| -> Result<Vec<String>> {
        match metadata.get(key) {
            None => Ok(Vec::new()),
            Some(text) => serde_json::from_str(text).map_err(|e| {
                Error::data_loss(format!(
                    "metadata '{key}' is not a JSON array of names: {e}: {text:?}"
                ))
            }),
        }
    };
    Ok((names(STRINGS_KEY)?, names(COMPLEX_KEY)?))
}

/// A tensor stored as the safetensors dtype of its own element type.
fn plain_tensor(name: &str, info: &TensorInfo, bytes: &[u8]) -> Result<Tensor> {
    let shape = &info.shape;
    macro_rules! le {
        ($ty:ty) => {
            from_vec(name, shape, elements(name, bytes, <$ty>::from_le_bytes)?)
        };
    }
    match info.dtype {
        Dtype::BOOL => {
            let values = bytes
                .iter()
                .map(|&b| match b {
                    0 => Ok(false),
                    1 => Ok(true),
                    _ => Err(Error::data_loss(format!(
                        "bool tensor '{name}' holds the byte {b}, not 0 or 1"
                    ))),
                })
                .collect::<Result<Vec<bool>>>()?;
            from_vec(name, shape, values)
        }
        Dtype::U8 => from_vec(name, shape, bytes.to_vec()),
        Dtype::I8 => le!(i8),
        Dtype::I16 => le!(i16),
        Dtype::U16 => le!(u16),
        Dtype::I32 => le!(i32),
        Dtype::U32 => le!(u32),
        Dtype::I64 => le!(i64),
        Dtype::U64 => le!(u64),
        Dtype::F16 => le!(f16),
        Dtype::BF16 => le!(bf16),
        Dtype::F32 => le!(f32),
        Dtype::F64 => le!(f64),
        Dtype::C64 => complex_tensor(name, shape, bytes, f32::from_le_bytes),
        other => Err(Error::unimplemented(format!(
            "tensor '{name}' has safetensors dtype {other}, which has no dtype here"
        ))),
    }
}

/// A complex tensor of shape `dims` from pairs of little-endian floats.
fn complex_tensor<F, const N: usize>(
    name: &str,
    dims: &[usize],
    bytes: &[u8],
    float: fn([u8; N]) -> F,
) -> Result<Tensor>
where
    F: Copy,
    Complex<F>: Element,
{
    let parts = elements(name, bytes, float)?;
    let (pairs, rest) = parts.as_chunks::<2>();
    if !rest.is_empty() {
        return Err(Error::data_loss(format!(
            "complex tensor '{name}' has an odd number of parts"
        )));
    }
    let values = pairs.iter().map(|&[re, im]| Complex::new(re, im)).collect();
    from_vec(name, dims, values)
}

/// The little-endian elements in `bytes`.
fn elements<T, const N: usize>(
    name: &str,
    bytes: &[u8],
    element: fn([u8; N]) -> T,
) -> Result<Vec<T>> {
    let (chunks, rest) = bytes.as_chunks::<N>();
    if !rest.is_empty() {
        return Err(Error::data_loss(format!(
            "tensor '{name}' has {} bytes, not a multiple of its element size {N}",
            bytes.len()
        )));
    }
    Ok(chunks.iter().map(|&chunk| element(chunk)).collect())
}

/// [`Tensor::from_vec`], a count mismatch being data loss in tensor `name`.
fn from_vec<T: Element>(name: &str, shape: &[usize], values: Vec<T>) -> Result<Tensor> {
    Tensor::from_vec(shape, values)
        .map_err(|e| Error::data_loss(format!("tensor '{name}': {}", e.message())))
}
