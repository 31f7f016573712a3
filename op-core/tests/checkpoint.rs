//! Tests of `op_core::checkpoint`: round trips, the file layout other tools
//! read, atomic writes (a writer killed mid-write), and typed errors for
//! truncated, corrupted and mismatched files.

#![cfg(feature = "checkpoint")]

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use op_core::checkpoint::{self, Checkpoint, LENGTHS_SUFFIX, Saveable};
use op_core::{
    Code, Complex64, Complex128, DType, Error, QInt8, ResourceHandle, Result, Tensor, bf16, f16,
};
use proptest::prelude::*;
use tempfile::TempDir;

// ---------------------------------------------------------------------------
// Test objects
// ---------------------------------------------------------------------------

/// The tensor with key `key`, or a `NotFound` error naming it.
fn take(tensors: &[(String, Tensor)], key: &str) -> Result<Tensor> {
    tensors
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, t)| t.clone())
        .ok_or_else(|| Error::not_found(format!("no tensor for key '{key}'")))
}

/// A hash table's state: string keys and float values, saved as `keys` and
/// `values`.
#[derive(Default)]
struct Table {
    keys: Mutex<Vec<Vec<u8>>>,
    values: Mutex<Vec<f32>>,
}

impl Table {
    fn new(pairs: &[(&str, f32)]) -> Table {
        Table {
            keys: Mutex::new(pairs.iter().map(|(k, _)| k.as_bytes().to_vec()).collect()),
            values: Mutex::new(pairs.iter().map(|(_, v)| *v).collect()),
        }
    }

    fn pairs(&self) -> Vec<(String, f32)> {
        let keys = self.keys.lock().unwrap();
        let values = self.values.lock().unwrap();
        keys.iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .zip(values.iter().copied())
            .collect()
    }
}

impl Saveable for Table {
    fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
        let keys = self.keys.lock().unwrap().clone();
        let values = self.values.lock().unwrap().clone();
        Ok(vec![
            ("keys".into(), Tensor::from_vec([keys.len()], keys)?),
            ("values".into(), Tensor::from_vec([values.len()], values)?),
        ])
    }

    fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()> {
        let keys = take(&tensors, "keys")?;
        let values = take(&tensors, "values")?;
        if keys.rank() != 1 || keys.dims() != values.dims() {
            return Err(Error::invalid_argument(format!(
                "keys of shape {} do not match values of shape {}",
                keys.shape(),
                values.shape()
            )));
        }
        let keys = keys.as_slice::<Vec<u8>>()?.to_vec();
        let values = values.as_slice::<f32>()?.to_vec();
        *self.keys.lock().unwrap() = keys;
        *self.values.lock().unwrap() = values;
        Ok(())
    }
}

/// A variable: one tensor of fixed dtype and shape, saved as `value`.
struct Var(Mutex<Tensor>);

impl Var {
    fn new(value: Tensor) -> Var {
        Var(Mutex::new(value))
    }

    fn get(&self) -> Tensor {
        self.0.lock().unwrap().clone()
    }

    fn set(&self, value: Tensor) {
        *self.0.lock().unwrap() = value;
    }
}

impl Saveable for Var {
    fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
        Ok(vec![("value".into(), self.get())])
    }

    fn restore_from_tensors(&self, tensors: Vec<(String, Tensor)>) -> Result<()> {
        let value = take(&tensors, "value")?;
        let mut current = self.0.lock().unwrap();
        if value.dtype() != current.dtype() || value.dims() != current.dims() {
            return Err(Error::invalid_argument(format!(
                "expected a {} tensor of shape {} but got a {} tensor of shape {}",
                current.dtype(),
                current.shape(),
                value.dtype(),
                value.shape()
            )));
        }
        *current = value;
        Ok(())
    }
}

/// An object whose serialization fails.
struct Broken;

impl Saveable for Broken {
    fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
        Err(Error::internal("the device is gone"))
    }

    fn restore_from_tensors(&self, _: Vec<(String, Tensor)>) -> Result<()> {
        Err(Error::internal("the device is gone"))
    }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn tensor<T: op_core::Element>(shape: &[usize], values: Vec<T>) -> Tensor {
    Tensor::from_vec(shape, values).unwrap()
}

fn f32s(values: &[f32]) -> Tensor {
    tensor(&[values.len()], values.to_vec())
}

/// Asserts that the error has `code` and that its full text (message and
/// context) contains every one of `parts`.
#[track_caller]
fn assert_error(error: &Error, code: Code, parts: &[&str]) {
    assert_eq!(error.code(), code, "wrong code in:\n{error}");
    let text = error.to_string();
    for part in parts {
        assert!(
            text.contains(part),
            "expected {part:?} in the error:\n{text}"
        );
    }
}

/// A fresh directory and a checkpoint path in it.
fn scratch() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ckpt.safetensors");
    (dir, path)
}

/// The temporary files that writing `ckpt.safetensors` creates in `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(".ckpt.safetensors.") && name.ends_with(".tmp")
        })
        .collect();
    found.sort();
    found
}

/// The header of a safetensors file, parsed by hand: the 8-byte
/// little-endian length, then that many bytes of JSON.
fn parse_header(bytes: &[u8]) -> (usize, serde_json::Map<String, serde_json::Value>) {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    (n, json.as_object().unwrap().clone())
}

/// Bitwise equality of two tensor maps: floats by their bits, so that NaN
/// equals itself and -0.0 differs from 0.0.
fn same_bits(a: &BTreeMap<String, Tensor>, b: &BTreeMap<String, Tensor>) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((na, ta), (nb, tb))| {
            na == nb
                && ta.dtype() == tb.dtype()
                && ta.dims() == tb.dims()
                && match ta.dtype() {
                    DType::F32 => {
                        let bits = |t: &Tensor| -> Vec<u32> {
                            t.as_slice::<f32>()
                                .unwrap()
                                .iter()
                                .map(|x| x.to_bits())
                                .collect()
                        };
                        bits(ta) == bits(tb)
                    }
                    _ => ta == tb,
                }
        })
}

/// One tensor of every dtype a checkpoint stores, including a scalar and
/// empty shapes.
fn every_dtype() -> BTreeMap<String, Tensor> {
    let mut m = BTreeMap::new();
    let mut put = |name: &str, t: Tensor| {
        m.insert(name.to_string(), t);
    };
    put("bool", tensor(&[2, 2], vec![true, false, false, true]));
    put("u8", tensor(&[3], vec![0u8, 7, 255]));
    put("i8", tensor(&[3], vec![-128i8, 0, 127]));
    put("i16", tensor(&[3], vec![i16::MIN, -1, i16::MAX]));
    put("u16", tensor(&[3], vec![0u16, 1, u16::MAX]));
    put("i32", tensor(&[1, 3], vec![i32::MIN, 5, i32::MAX]));
    put("u32", tensor(&[3], vec![0u32, 9, u32::MAX]));
    put("i64", tensor(&[3, 1], vec![i64::MIN, -7, i64::MAX]));
    put("u64", tensor(&[3], vec![0u64, 11, u64::MAX]));
    put(
        "f16",
        tensor(&[2], vec![f16::from_f32(1.5), f16::from_f32(-0.25)]),
    );
    put(
        "bf16",
        tensor(&[2], vec![bf16::from_f32(3.0), bf16::from_f32(-8.5)]),
    );
    put(
        "f32",
        tensor(&[2, 3], vec![1.0f32, -2.5, 1e30, f32::INFINITY, 0.0, 7.0]),
    );
    put("f64", tensor(&[2], vec![std::f64::consts::PI, -1e-300]));
    put(
        "c64",
        tensor(
            &[2],
            vec![Complex64::new(1.0, -2.0), Complex64::new(0.5, 3.0)],
        ),
    );
    put("c128", tensor(&[1, 1], vec![Complex128::new(-1.25, 1e100)]));
    put(
        "strings",
        Tensor::strings([2, 2], ["", "hello", "wörld", "\0\u{ff}"]).unwrap(),
    );
    put("bytes", tensor(&[2], vec![vec![0xffu8, 0xfe], vec![]]));
    put("scalar", Tensor::scalar(42i32));
    put("scalar_string", Tensor::string("alone"));
    put("empty", tensor::<f32>(&[0], vec![]));
    put("empty_matrix", tensor::<i64>(&[2, 0, 3], vec![]));
    put("empty_strings", tensor::<Vec<u8>>(&[0, 2], vec![]));
    m
}

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

#[test]
fn every_supported_dtype_round_trips() {
    let (_dir, path) = scratch();
    let tensors = every_dtype();
    checkpoint::write(&path, &tensors).unwrap();
    let back = checkpoint::read(&path).unwrap();
    assert_eq!(back, tensors);
    for (name, t) in &back {
        assert_eq!(t.dtype(), tensors[name].dtype(), "{name}");
        assert_eq!(t.dims(), tensors[name].dims(), "{name}");
    }

    // The same through objects: one variable per tensor.
    let vars: Vec<(String, Var)> = tensors
        .iter()
        .map(|(name, t)| (name.clone(), Var::new(t.clone())))
        .collect();
    let mut ckpt = Checkpoint::new();
    for (name, var) in &vars {
        ckpt.add(name.as_str(), var).unwrap();
    }
    let names = ckpt.save(&path).unwrap();
    let expected: Vec<String> = tensors.keys().map(|n| format!("{n}/value")).collect();
    assert_eq!(names, expected);
    for (name, var) in &vars {
        var.set(Tensor::zeros(tensors[name].dtype(), tensors[name].dims()).unwrap());
    }
    ckpt.restore(&path).unwrap();
    for (name, var) in &vars {
        assert_eq!(var.get(), tensors[name], "{name}");
    }
}

#[test]
fn save_names_tensors_object_slash_key_and_restore_puts_them_back() {
    let (dir, path) = scratch();
    let table = Table::new(&[("apple", 1.0), ("pear", 2.5)]);
    let v = Var::new(f32s(&[1.0, 2.0, 3.0]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap().add("table", &table).unwrap();
    assert_eq!(ckpt.names().collect::<Vec<_>>(), ["table", "v"]);
    assert_eq!(
        format!("{ckpt:?}"),
        r#"Checkpoint { objects: ["table", "v"] }"#
    );

    let names = ckpt.save(&path).unwrap();
    assert_eq!(names, ["table/keys", "table/values", "v/value"]);
    assert_eq!(
        ckpt.tensors().unwrap().into_keys().collect::<Vec<_>>(),
        names
    );
    assert!(temp_files(dir.path()).is_empty());

    // The file as a plain map: a string tensor's lengths do not show.
    let file = checkpoint::read(&path).unwrap();
    assert_eq!(
        file.keys().collect::<Vec<_>>(),
        names.iter().collect::<Vec<_>>()
    );
    assert_eq!(
        file["table/keys"],
        Tensor::strings([2], ["apple", "pear"]).unwrap()
    );

    table.keys.lock().unwrap().clear();
    table.values.lock().unwrap().clear();
    v.set(f32s(&[0.0; 3]));
    ckpt.restore(&path).unwrap();
    assert_eq!(
        table.pairs(),
        [("apple".to_string(), 1.0), ("pear".to_string(), 2.5)]
    );
    assert_eq!(v.get(), f32s(&[1.0, 2.0, 3.0]));

    // A checkpoint of a subset ignores the file's other objects.
    let only_v = Var::new(f32s(&[9.0; 3]));
    let mut subset = Checkpoint::new();
    subset.add("v", &only_v).unwrap();
    subset.restore(&path).unwrap();
    assert_eq!(only_v.get(), f32s(&[1.0, 2.0, 3.0]));

    // Saving again replaces the file.
    v.set(f32s(&[4.0, 5.0, 6.0]));
    ckpt.save(&path).unwrap();
    assert_eq!(
        checkpoint::read(&path).unwrap()["v/value"],
        f32s(&[4.0, 5.0, 6.0])
    );
    assert!(temp_files(dir.path()).is_empty());
}

#[test]
fn an_empty_checkpoint_round_trips() {
    let (_dir, path) = scratch();
    let ckpt = Checkpoint::new();
    assert!(ckpt.save(&path).unwrap().is_empty());
    assert!(checkpoint::read(&path).unwrap().is_empty());
    ckpt.restore(&path).unwrap();
}

#[test]
fn the_same_state_gives_the_same_bytes() {
    let (dir, path) = scratch();
    let other = dir.path().join("other.safetensors");
    checkpoint::write(&path, &every_dtype()).unwrap();
    checkpoint::write(&other, every_dtype().iter().rev()).unwrap();
    assert!(fs::read(&path).unwrap() == fs::read(&other).unwrap());
}

#[cfg(unix)]
#[test]
fn saved_files_get_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, path) = scratch();
    checkpoint::write(&path, [("x", f32s(&[1.0]))]).unwrap();
    let reference = dir.path().join("reference");
    fs::File::create(&reference).unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), mode(&reference));
}

// ---------------------------------------------------------------------------
// The layout other tools read
// ---------------------------------------------------------------------------

#[test]
fn the_header_is_plain_safetensors() {
    let (_dir, path) = scratch();
    let tensors = every_dtype();
    checkpoint::write(&path, &tensors).unwrap();
    let bytes = fs::read(&path).unwrap();
    let (n, header) = parse_header(&bytes);
    assert_eq!(n % 8, 0, "the header is padded to 8 bytes");
    let data = &bytes[8 + n..];

    let metadata = header["__metadata__"].as_object().unwrap();
    assert_eq!(metadata["format"], "op-core-checkpoint");
    assert_eq!(metadata["version"], "1");
    let list = |key: &str| -> Vec<String> {
        serde_json::from_str(metadata[key].as_str().unwrap()).unwrap()
    };
    assert_eq!(
        list("strings"),
        ["bytes", "empty_strings", "scalar_string", "strings"]
    );
    assert_eq!(list("complex"), ["c128", "c64"]);

    // dtype and shape as safetensors stores them.
    let expect = [
        ("bool", "BOOL", vec![2, 2]),
        ("u8", "U8", vec![3]),
        ("i8", "I8", vec![3]),
        ("i16", "I16", vec![3]),
        ("u16", "U16", vec![3]),
        ("i32", "I32", vec![1, 3]),
        ("u32", "U32", vec![3]),
        ("i64", "I64", vec![3, 1]),
        ("u64", "U64", vec![3]),
        ("f16", "F16", vec![2]),
        ("bf16", "BF16", vec![2]),
        ("f32", "F32", vec![2, 3]),
        ("f64", "F64", vec![2]),
        ("c64", "F32", vec![2, 2]),
        ("c128", "F64", vec![1, 1, 2]),
        ("strings", "U8", vec![14]),
        ("strings.lengths", "I64", vec![2, 2]),
        ("bytes", "U8", vec![2]),
        ("bytes.lengths", "I64", vec![2]),
        ("scalar", "I32", vec![]),
        ("scalar_string", "U8", vec![5]),
        ("scalar_string.lengths", "I64", vec![]),
        ("empty", "F32", vec![0]),
        ("empty_matrix", "I64", vec![2, 0, 3]),
        ("empty_strings", "U8", vec![0]),
        ("empty_strings.lengths", "I64", vec![0, 2]),
    ];
    assert_eq!(header.len(), expect.len() + 1, "{header:?}");
    let size = |dtype: &str| match dtype {
        "BOOL" | "U8" | "I8" => 1,
        "I16" | "U16" | "F16" | "BF16" => 2,
        "I32" | "U32" | "F32" => 4,
        _ => 8,
    };
    let mut ranges = Vec::new();
    for (name, dtype, shape) in &expect {
        let entry = header[*name].as_object().unwrap();
        assert_eq!(entry["dtype"], *dtype, "{name}");
        assert_eq!(entry["shape"], serde_json::json!(shape), "{name}");
        let offsets = entry["data_offsets"].as_array().unwrap();
        let (begin, end) = (
            offsets[0].as_u64().unwrap() as usize,
            offsets[1].as_u64().unwrap() as usize,
        );
        let count: usize = shape.iter().product();
        assert_eq!(end - begin, count * size(dtype), "{name}");
        assert_eq!(begin % size(dtype), 0, "{name} is aligned");
        ranges.push((begin, end, *name));
    }
    // The data ranges tile the data section exactly.
    ranges.sort();
    let mut at = 0;
    for (begin, end, name) in &ranges {
        assert_eq!(*begin, at, "{name} follows the previous tensor");
        at = *end;
    }
    assert_eq!(at, data.len());

    // The bytes are little-endian elements in row-major order.
    let bytes_of = |name: &str| {
        let offsets = header[name]["data_offsets"].as_array().unwrap();
        let begin = offsets[0].as_u64().unwrap() as usize;
        let end = offsets[1].as_u64().unwrap() as usize;
        &data[begin..end]
    };
    let f32_bytes: Vec<u8> = [1.0f32, -2.5, 1e30, f32::INFINITY, 0.0, 7.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert_eq!(bytes_of("f32"), f32_bytes);
    assert_eq!(bytes_of("bool"), [1, 0, 0, 1]);
    assert_eq!(
        bytes_of("c64"),
        [1.0f32, -2.0, 0.5, 3.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>()
    );
    assert_eq!(bytes_of("strings"), "hellowörld\0\u{ff}".as_bytes());
    assert_eq!(
        bytes_of("strings.lengths"),
        [0i64, 5, 6, 3]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>()
    );
    assert_eq!(bytes_of("i16"), [0x00, 0x80, 0xff, 0xff, 0xff, 0x7f]);

    // The safetensors crate itself reads the file.
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(st.len(), expect.len());
    let view = st.tensor("f32").unwrap();
    assert_eq!(view.dtype(), safetensors::Dtype::F32);
    assert_eq!(view.shape(), [2, 3]);
    assert_eq!(view.data(), f32_bytes);
}

// ---------------------------------------------------------------------------
// Names and dtypes that cannot be stored
// ---------------------------------------------------------------------------

#[test]
fn object_names_are_validated() {
    let v = Var::new(f32s(&[1.0]));
    let mut ckpt = Checkpoint::new();
    assert_error(
        &ckpt.add("", &v).unwrap_err(),
        Code::InvalidArgument,
        &["\"\""],
    );
    assert_error(
        &ckpt.add("a/b", &v).unwrap_err(),
        Code::InvalidArgument,
        &["\"a/b\"", "'/'"],
    );
    ckpt.add("a", &v).unwrap();
    assert_error(
        &ckpt.add("a", &v).unwrap_err(),
        Code::AlreadyExists,
        &["'a'"],
    );
}

#[test]
fn bad_tensor_names_and_keys_are_refused_without_writing() {
    let (dir, path) = scratch();
    let x = f32s(&[1.0]);
    let s = Tensor::strings([1], ["a"]).unwrap();
    for (tensors, parts) in [
        (vec![("", &x)], &["\"\""][..]),
        (vec![("__metadata__", &x)], &["__metadata__"]),
        (vec![("x", &x), ("x", &x)], &["two tensors are named 'x'"]),
        (vec![("s", &s), ("s.lengths", &x)], &["'s'", "'s.lengths'"]),
    ] {
        let err = checkpoint::write(&path, tensors).unwrap_err();
        assert_error(&err, Code::InvalidArgument, parts);
        assert_error(&err, Code::InvalidArgument, &[&path.display().to_string()]);
    }
    assert!(!path.exists());
    assert!(temp_files(dir.path()).is_empty());

    /// An object that gives the same key twice.
    struct Twice;
    impl Saveable for Twice {
        fn serialize_to_tensors(&self) -> Result<Vec<(String, Tensor)>> {
            let t = Tensor::scalar(1i64);
            Ok(vec![("k".into(), t.clone()), ("k".into(), t)])
        }
        fn restore_from_tensors(&self, _: Vec<(String, Tensor)>) -> Result<()> {
            Ok(())
        }
    }
    let mut ckpt = Checkpoint::new();
    ckpt.add("twice", &Twice).unwrap();
    let err = ckpt.save(&path).unwrap_err();
    assert_error(&err, Code::InvalidArgument, &["'twice'", "key 'k'"]);
    assert!(!path.exists());
}

#[test]
fn unsupported_dtypes_are_refused_naming_the_tensor() {
    let (dir, path) = scratch();
    let cases = [
        (
            Tensor::scalar(ResourceHandle::new(op_core::Device::CPU, "", "w", "Var")),
            "resource",
        ),
        (tensor(&[1], vec![QInt8(3)]), "qint8"),
    ];
    for (t, dtype) in cases {
        let v = Var::new(t);
        let mut ckpt = Checkpoint::new();
        ckpt.add("handle", &v).unwrap();
        let err = ckpt.save(&path).unwrap_err();
        assert_error(
            &err,
            Code::Unimplemented,
            &["'handle/value'", dtype, &path.display().to_string()],
        );
    }
    assert!(!path.exists());
    assert!(temp_files(dir.path()).is_empty());
}

// ---------------------------------------------------------------------------
// Atomic writes
// ---------------------------------------------------------------------------

#[test]
fn a_failed_save_leaves_the_previous_file_and_no_temporary_files() {
    let (dir, path) = scratch();
    let v = Var::new(f32s(&[1.0, 2.0]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap();
    ckpt.save(&path).unwrap();
    let before = fs::read(&path).unwrap();

    // The second object fails halfway through the checkpoint's serialization.
    v.set(f32s(&[3.0, 4.0]));
    ckpt.add("w", &Broken).unwrap();
    let err = ckpt.save(&path).unwrap_err();
    assert_error(
        &err,
        Code::Internal,
        &[
            "the device is gone",
            "object 'w'",
            &path.display().to_string(),
        ],
    );
    assert_eq!(fs::read(&path).unwrap(), before);
    assert!(temp_files(dir.path()).is_empty());

    // An unstorable tensor after good ones: also before any byte is written.
    let mut ckpt = Checkpoint::new();
    let handle = Var::new(Tensor::scalar(ResourceHandle::default()));
    ckpt.add("a", &v).unwrap().add("z", &handle).unwrap();
    assert!(ckpt.save(&path).is_err());
    assert_eq!(fs::read(&path).unwrap(), before);
    assert!(temp_files(dir.path()).is_empty());
}

#[test]
fn writing_into_a_missing_directory_is_not_found() {
    let (dir, _) = scratch();
    let path = dir.path().join("no/such/dir/ckpt.safetensors");
    let err = checkpoint::write(&path, [("x", f32s(&[1.0]))]).unwrap_err();
    assert_error(&err, Code::NotFound, &[&path.display().to_string()]);
}

#[test]
fn io_errors_get_tensorflows_codes_and_name_the_path() {
    let (dir, path) = scratch();
    let x = f32s(&[1.0]);
    let v = Var::new(x.clone());
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap();

    // A directory where the file should be (EISDIR): FailedPrecondition.
    let sub = dir.path().join("sub.safetensors");
    fs::create_dir(&sub).unwrap();
    let err = checkpoint::write(&sub, [("x", &x)]).unwrap_err();
    assert_error(
        &err,
        Code::FailedPrecondition,
        &["renaming", &sub.display().to_string()],
    );
    assert_error(
        &ckpt.save(&sub).unwrap_err(),
        Code::FailedPrecondition,
        &[&sub.display().to_string()],
    );
    assert_error(
        &ckpt.restore(&sub).unwrap_err(),
        Code::FailedPrecondition,
        &["directory", &sub.display().to_string()],
    );
    assert!(sub.is_dir());

    // A file where a directory should be (ENOTDIR): FailedPrecondition.
    checkpoint::write(&path, [("x", &x)]).unwrap();
    let under_file = path.join("ckpt.safetensors");
    let err = checkpoint::read(&under_file).unwrap_err();
    assert_error(
        &err,
        Code::FailedPrecondition,
        &["opening", &under_file.display().to_string()],
    );
    let err = checkpoint::write(&under_file, [("x", &x)]).unwrap_err();
    assert_error(
        &err,
        Code::FailedPrecondition,
        &[&under_file.display().to_string()],
    );

    // A name longer than NAME_MAX, 255 bytes (ENAMETOOLONG): InvalidArgument.
    let long = dir.path().join("n".repeat(256));
    let err = checkpoint::read(&long).unwrap_err();
    assert_error(
        &err,
        Code::InvalidArgument,
        &["opening", &long.display().to_string()],
    );
    assert_error(
        &ckpt.restore(&long).unwrap_err(),
        Code::InvalidArgument,
        &[&long.display().to_string()],
    );
    let err = checkpoint::write(&long, [("x", &x)]).unwrap_err();
    assert_error(&err, Code::InvalidArgument, &[&long.display().to_string()]);
    assert!(temp_files(dir.path()).is_empty());
}

#[test]
fn names_of_up_to_255_bytes_are_saved() {
    let (dir, _) = scratch();
    let x = f32s(&[1.0, 2.0]);
    let v = Var::new(x.clone());
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap();
    // NAME_MAX is 255 bytes; the temporary file's name must fit too. A name
    // of two-byte characters checks that the temporary name is cut at a
    // character boundary.
    for name in [
        "a".repeat(243),
        "b".repeat(244),
        "c".repeat(255),
        format!("{}.safetensors", "é".repeat(121)),
    ] {
        assert!(name.len() >= 243 && name.len() <= 255, "{}", name.len());
        let path = dir.path().join(&name);
        checkpoint::write(&path, [("x", &x)]).unwrap();
        assert_eq!(checkpoint::read(&path).unwrap()["x"], x);
        ckpt.save(&path).unwrap();
        v.set(f32s(&[0.0, 0.0]));
        ckpt.restore(&path).unwrap();
        assert_eq!(v.get(), x);
    }
    let left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// The environment variable that makes [`crash_child`] write a big checkpoint
/// to the path it holds.
const CRASH_CHILD: &str = "OP_CORE_CHECKPOINT_CRASH_CHILD";

/// The number of `f32`s the crash child writes: 256 MiB.
const CRASH_ELEMENTS: usize = 64 << 20;

/// Not a test on its own: run by [`a_writer_killed_mid_write_leaves_the_previous_checkpoint`]
/// in a child process, it writes a 256 MiB checkpoint; without the
/// environment variable it does nothing.
#[test]
fn crash_child() {
    let Some(path) = std::env::var_os(CRASH_CHILD) else {
        return;
    };
    let big = Var::new(Tensor::from_vec([CRASH_ELEMENTS], vec![0.5f32; CRASH_ELEMENTS]).unwrap());
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &big).unwrap();
    ckpt.save(PathBuf::from(path)).unwrap();
}

/// Kills the child process when dropped, so that a failing test leaves none.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_writer_killed_mid_write_leaves_the_previous_checkpoint() {
    let (dir, path) = scratch();
    let old = Var::new(f32s(&[1.0, 2.0, 3.0]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &old).unwrap();
    ckpt.save(&path).unwrap();
    let old_bytes = fs::read(&path).unwrap();

    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CRASH_CHILD, &path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);

    // Wait until the child's temporary file exists and is growing, then kill
    // the child: a crash in the middle of writing the file.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen: Option<u64> = None;
    let partial = loop {
        if let Some(temp) = temp_files(dir.path()).first() {
            let len = fs::metadata(temp).map(|m| m.len()).unwrap_or(0);
            match seen {
                Some(before) if len > before => break temp.clone(),
                _ if len > 0 => seen = Some(len),
                _ => {}
            }
        }
        if let Some(status) = child.0.try_wait().unwrap() {
            panic!("the child exited ({status}) before its write was interrupted");
        }
        assert!(
            Instant::now() < deadline,
            "the child's temporary file did not appear and grow within 60 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    child.0.kill().unwrap();
    let status = child.0.wait().unwrap();
    assert!(!status.success(), "the child finished its write: {status}");

    // The write was cut short: the temporary file holds part of the data.
    let partial_len = fs::metadata(&partial).unwrap().len();
    println!(
        "killed the writer with {partial_len} of over {} bytes written",
        CRASH_ELEMENTS * 4
    );
    assert!(partial_len > 0 && partial_len < (CRASH_ELEMENTS * 4) as u64);

    // The partial file is not a checkpoint.
    let err = checkpoint::read(&partial).unwrap_err();
    assert_error(&err, Code::DataLoss, &[&partial.display().to_string()]);

    // The checkpoint at the path is the old one, byte for byte, and restores.
    assert_eq!(fs::read(&path).unwrap(), old_bytes);
    old.set(f32s(&[0.0; 3]));
    ckpt.restore(&path).unwrap();
    assert_eq!(old.get(), f32s(&[1.0, 2.0, 3.0]));
    // The dead writer's lock went with it: on Unix the restore removed its
    // stale temporary file.
    if cfg!(unix) {
        assert!(temp_files(dir.path()).is_empty());
    } else {
        assert_eq!(temp_files(dir.path()), std::slice::from_ref(&partial));
    }

    // Saving again works and replaces the checkpoint.
    old.set(f32s(&[7.0, 8.0, 9.0]));
    ckpt.save(&path).unwrap();
    assert_eq!(
        checkpoint::read(&path).unwrap()["v/value"],
        f32s(&[7.0, 8.0, 9.0])
    );
    if cfg!(unix) {
        assert!(temp_files(dir.path()).is_empty());
    } else {
        assert_eq!(temp_files(dir.path()), [partial]);
    }
}

/// The environment variable that makes [`loop_child`] save checkpoints to
/// the path it holds, over and over.
const LOOP_CHILD: &str = "OP_CORE_CHECKPOINT_LOOP_CHILD";

/// Not a test on its own: run by
/// [`writers_killed_at_random_moments_leave_nothing_after_the_next_save`]
/// in child processes, it saves a 4 MiB checkpoint until it is killed;
/// without the environment variable it does nothing.
#[test]
fn loop_child() {
    let Some(path) = std::env::var_os(LOOP_CHILD) else {
        return;
    };
    let v = Var::new(f32s(&vec![0.25; 1 << 20]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap();
    loop {
        ckpt.save(PathBuf::from(&path)).unwrap();
    }
}

#[test]
fn writers_killed_at_random_moments_leave_nothing_after_the_next_save() {
    let (dir, path) = scratch();
    let v = Var::new(f32s(&[1.0]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap();
    ckpt.save(&path).unwrap();

    // Four writers at a time, each killed after 0 to 60 ms (a fixed
    // pseudo-random sequence): in its temporary file or between saves.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut killed_mid_write = 0;
    for _ in 0..6 {
        let children: Vec<KillOnDrop> = (0..4)
            .map(|_| {
                let child = Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "loop_child", "--nocapture", "--test-threads=1"])
                    .env(LOOP_CHILD, &path)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                KillOnDrop(child)
            })
            .collect();
        for mut child in children {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            std::thread::sleep(Duration::from_millis(state % 60));
            child.0.kill().unwrap();
            child.0.wait().unwrap();
        }
        killed_mid_write += temp_files(dir.path()).len();
        // Another writer's stale files go with each save.
        if cfg!(unix) {
            ckpt.save(&path).unwrap();
            assert!(temp_files(dir.path()).is_empty());
        }
    }
    println!("{killed_mid_write} writers were killed mid-write");
    // The checkpoint is whole: the last save's.
    assert_eq!(checkpoint::read(&path).unwrap()["v/value"], f32s(&[1.0]));
}

#[test]
fn concurrent_saves_in_one_directory_keep_each_others_files() {
    // Each save removes the stale temporary files in the directory; none
    // may remove the one another thread is writing.
    let (dir, _) = scratch();
    let dir = dir.path().to_path_buf();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let v = Var::new(f32s(&vec![t as f32; 1 << 16]));
                let mut ckpt = Checkpoint::new();
                ckpt.add("v", &v).unwrap();
                for i in 0..25 {
                    // Two threads per file, and a file per thread.
                    let shared = dir.join(format!("shared{}.safetensors", t % 2));
                    ckpt.save(&shared).unwrap();
                    ckpt.save(dir.join(format!("own{t}.safetensors"))).unwrap();
                    if i % 5 == 0 {
                        ckpt.restore(&shared).unwrap();
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let left: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// Creates an empty file at `dir/name` and returns its path.
fn touch(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    fs::File::create(&path).unwrap();
    path
}

#[cfg(unix)]
#[test]
fn stale_temporary_files_are_removed_by_the_next_save_or_restore() {
    let (dir, path) = scratch();
    let dir = dir.path();
    let v = Var::new(f32s(&[1.0]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap();
    ckpt.save(&path).unwrap();

    // Left by writers that died: nobody holds a lock on them. Ours whatever
    // checkpoint they were for, including a cut-short name.
    let stale_names = [
        ".ckpt.safetensors.AbC123.op-ckpt.tmp",
        ".other.safetensors.x1y2z3.op-ckpt.tmp",
        "..q1w2e3.op-ckpt.tmp",
    ];
    // A writer that is still writing: it holds the lock.
    let live = touch(dir, ".ckpt.safetensors.LiVe01.op-ckpt.tmp");
    let live_file = fs::File::open(&live).unwrap();
    live_file.lock().unwrap();
    // Not ours: other names, another kind of file.
    let unrelated: Vec<PathBuf> = [
        ".ckpt.safetensors.abc123.tmp",
        "ckpt.safetensors.AbC123.op-ckpt.tmp",
        ".ckpt.safetensors.abc12.op-ckpt.tmp",
        ".ckpt.safetensors.abc!23.op-ckpt.tmp",
        ".ckpt.safetensors.abc1234.op-ckpt.tmp",
        "ckpt.safetensors.bak",
    ]
    .iter()
    .map(|name| touch(dir, name))
    .chain([{
        let sub = dir.join(".sub.abcdef.op-ckpt.tmp");
        fs::create_dir(&sub).unwrap();
        sub
    }])
    .collect();

    let exists = |name: &str| dir.join(name).exists();
    let kept = || live.exists() && unrelated.iter().all(|p| p.exists()) && path.exists();

    // Reading only reads.
    for name in stale_names {
        touch(dir, name);
    }
    checkpoint::read(&path).unwrap();
    assert!(stale_names.iter().all(|name| exists(name)));

    // A save removes the stale files of every checkpoint in the directory.
    ckpt.save(&path).unwrap();
    assert!(!stale_names.iter().any(|name| exists(name)));
    assert!(kept());

    // So does a restore.
    for name in stale_names {
        touch(dir, name);
    }
    ckpt.restore(&path).unwrap();
    assert!(!stale_names.iter().any(|name| exists(name)));
    assert!(kept());

    // Once its writer is gone (the lock released), the live file is stale.
    drop(live_file);
    checkpoint::write(dir.join("other.safetensors"), [("x", f32s(&[2.0]))]).unwrap();
    assert!(!live.exists());
    assert!(unrelated.iter().all(|p| p.exists()));
}

#[cfg(unix)]
#[test]
fn a_checkpoint_named_like_a_temporary_file_is_not_removed() {
    let (dir, _) = scratch();
    let path = dir.path().join(".odd.AbC123.op-ckpt.tmp");
    checkpoint::write(&path, [("x", f32s(&[1.0]))]).unwrap();
    let v = Var::new(f32s(&[0.0]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap();
    ckpt.save(&path).unwrap();
    ckpt.restore(&path).unwrap();
    assert!(path.exists());
}

// ---------------------------------------------------------------------------
// Bad files
// ---------------------------------------------------------------------------

/// A small checkpoint of a table and a variable, as bytes.
fn fixture() -> (TempDir, PathBuf, Vec<u8>) {
    let (dir, path) = scratch();
    let table = Table::new(&[("apple", 1.5), ("kiwi", -2.0), ("", 3.25)]);
    let v = Var::new(f32s(&[0.5, 1.5, 2.5, 3.5]));
    let flags = Var::new(tensor(&[3], vec![true, false, true]));
    let ids = Var::new(tensor(&[2], vec![10i64, -20]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("table", &table).unwrap();
    ckpt.add("v", &v).unwrap();
    ckpt.add("flags", &flags).unwrap();
    ckpt.add("ids", &ids).unwrap();
    ckpt.save(&path).unwrap();
    let bytes = fs::read(&path).unwrap();
    (dir, path, bytes)
}

#[test]
fn missing_files_are_not_found() {
    let (_dir, path) = scratch();
    let err = checkpoint::read(&path).unwrap_err();
    assert_error(&err, Code::NotFound, &[&path.display().to_string()]);
    let v = Var::new(f32s(&[1.0]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap();
    assert_eq!(ckpt.restore(&path).unwrap_err().code(), Code::NotFound);
}

#[test]
fn truncated_files_are_data_loss() {
    let (dir, _path, bytes) = fixture();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let cut = dir.path().join("cut.safetensors");
    for len in [
        0,
        1,
        7,
        8,
        9,
        n / 2,
        8 + n - 1,
        8 + n,
        8 + n + 1,
        bytes.len() - 1,
    ] {
        fs::write(&cut, &bytes[..len]).unwrap();
        let err = checkpoint::read(&cut).unwrap_err();
        assert_error(&err, Code::DataLoss, &[&cut.display().to_string()]);
    }
}

#[test]
fn files_that_are_not_safetensors_are_data_loss() {
    let (dir, path, bytes) = fixture();
    let other = dir.path().join("other");
    let mut corrupt_header = bytes.clone();
    corrupt_header[8] = b'[';
    let mut bad_utf8 = bytes.clone();
    bad_utf8[9] = 0xff;
    let huge_length = [&u64::MAX.to_le_bytes()[..], &bytes[8..]].concat();
    for (contents, why) in [
        (
            b"Hello, this is a text file, not a checkpoint.\n".to_vec(),
            "text",
        ),
        (vec![0u8; 64], "zeros"),
        (corrupt_header, "JSON"),
        (bad_utf8, "UTF-8"),
        (huge_length, "length"),
    ] {
        fs::write(&other, contents).unwrap();
        let err = checkpoint::read(&other).unwrap_err();
        assert_eq!(err.code(), Code::DataLoss, "{why}: {err}");
        assert_error(
            &err,
            Code::DataLoss,
            &["safetensors", &other.display().to_string()],
        );
    }
    // The good file is still fine.
    checkpoint::read(&path).unwrap();
}

/// A tensor as safetensors stores it: name, dtype, shape and bytes.
type RawTensor<'a> = (&'a str, safetensors::Dtype, Vec<usize>, Vec<u8>);

/// Writes a safetensors file with the safetensors crate itself: `tensors` and
/// `metadata`.
fn raw_file(path: &Path, tensors: &[RawTensor<'_>], metadata: &[(&str, &str)]) {
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .iter()
        .map(|(name, dtype, shape, data)| {
            let view = safetensors::tensor::TensorView::new(*dtype, shape.clone(), data).unwrap();
            (name.to_string(), view)
        })
        .collect();
    let metadata: HashMap<String, String> = metadata
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let metadata = (!metadata.is_empty()).then_some(metadata);
    fs::write(path, safetensors::serialize(views, metadata).unwrap()).unwrap();
}

fn le<const N: usize>(values: impl IntoIterator<Item = [u8; N]>) -> Vec<u8> {
    values.into_iter().flatten().collect()
}

const OURS: [(&str, &str); 2] = [("format", "op-core-checkpoint"), ("version", "1")];

#[test]
fn plain_safetensors_files_are_read_and_odd_dtypes_refused() {
    use safetensors::Dtype as S;
    let (_dir, path) = scratch();
    let pairs = le([1.0f32, 2.0, 3.0, -4.0].map(f32::to_le_bytes));
    // As Python writes it: no op-core metadata, complex as C64.
    raw_file(
        &path,
        &[
            ("weight", S::F32, vec![2, 2], pairs.clone()),
            ("z", S::C64, vec![2], pairs.clone()),
            ("names", S::U8, vec![3], b"abc".to_vec()),
            ("names.lengths", S::I64, vec![1], le([3i64.to_le_bytes()])),
        ],
        &[("format", "pt"), ("strings", "[\"names\"]")],
    );
    let tensors = checkpoint::read(&path).unwrap();
    assert_eq!(
        tensors["weight"],
        tensor(&[2, 2], vec![1.0f32, 2.0, 3.0, -4.0])
    );
    assert_eq!(
        tensors["z"],
        tensor(
            &[2],
            vec![Complex64::new(1.0, 2.0), Complex64::new(3.0, -4.0)]
        )
    );
    // Not our format: the string metadata is not applied.
    assert_eq!(tensors["names"], tensor(&[3], b"abc".to_vec()));
    assert_eq!(tensors["names.lengths"], tensor(&[1], vec![3i64]));

    raw_file(
        &path,
        &[
            ("ok", S::F32, vec![1], le([1.0f32.to_le_bytes()])),
            ("fp8", S::F8_E4M3, vec![2], vec![1, 2]),
        ],
        &[],
    );
    let err = checkpoint::read(&path).unwrap_err();
    assert_error(
        &err,
        Code::Unimplemented,
        &["'fp8'", "F8_E4M3", &path.display().to_string()],
    );
}

#[test]
fn bad_encodings_in_our_format_are_data_loss() {
    use safetensors::Dtype as S;
    let (_dir, path) = scratch();
    let lengths = |v: &[i64]| le(v.iter().map(|x| x.to_le_bytes()));
    let strings = [OURS[0], OURS[1], ("strings", "[\"s\"]")];
    let cases = vec![
        // lengths that do not add up to the bytes
        (
            vec![
                ("s", S::U8, vec![3], b"abc".to_vec()),
                ("s.lengths", S::I64, vec![2], lengths(&[1, 1])),
            ],
            strings.to_vec(),
            "do not match",
        ),
        (
            vec![
                ("s", S::U8, vec![3], b"abc".to_vec()),
                ("s.lengths", S::I64, vec![2], lengths(&[4, -1])),
            ],
            strings.to_vec(),
            "do not match",
        ),
        // no lengths at all
        (
            vec![("s", S::U8, vec![3], b"abc".to_vec())],
            strings.to_vec(),
            "'s.lengths'",
        ),
        // lengths of the wrong dtype
        (
            vec![
                ("s", S::U8, vec![3], b"abc".to_vec()),
                ("s.lengths", S::I32, vec![1], le([3i32.to_le_bytes()])),
            ],
            strings.to_vec(),
            "not I64",
        ),
        // a listed tensor that is not there
        (
            vec![],
            vec![OURS[0], OURS[1], ("complex", "[\"c\"]")],
            "'c'",
        ),
        // complex without the trailing 2
        (
            vec![("c", S::F32, vec![3], vec![0; 12])],
            vec![OURS[0], OURS[1], ("complex", "[\"c\"]")],
            "ending in 2",
        ),
        // metadata that is not a JSON list
        (vec![], vec![OURS[0], OURS[1], ("strings", "s")], "JSON"),
        // a bool that is neither 0 nor 1
        (
            vec![("b", S::BOOL, vec![2], vec![1, 2])],
            OURS.to_vec(),
            "byte 2",
        ),
        // our format without a version
        (vec![], vec![OURS[0]], "no version"),
    ];
    for (tensors, metadata, part) in cases {
        raw_file(&path, &tensors, &metadata);
        let err = checkpoint::read(&path).unwrap_err();
        assert_error(&err, Code::DataLoss, &[part, &path.display().to_string()]);
    }

    // A shape with a zero and a huge dimension: no data, but more elements
    // per row than fit in memory. An error or a tensor, never a panic.
    raw_file(&path, &[("e", S::F32, vec![0, 1 << 62], vec![])], &[]);
    let _ = checkpoint::read(&path);

    raw_file(&path, &[], &[OURS[0], ("version", "2")]);
    let err = checkpoint::read(&path).unwrap_err();
    assert_error(&err, Code::Unimplemented, &["version \"2\"", "version 1"]);
}

// ---------------------------------------------------------------------------
// Restoring objects that do not match the file
// ---------------------------------------------------------------------------

#[test]
fn a_missing_object_or_key_fails_before_anything_is_restored() {
    let (_dir, path) = scratch();
    let table = Table::new(&[("a", 1.0)]);
    let mut ckpt = Checkpoint::new();
    ckpt.add("table", &table).unwrap();
    ckpt.save(&path).unwrap();

    // The file has no tensors for 'v'; 'table', restored first, is untouched.
    let v = Var::new(f32s(&[1.0]));
    ckpt.add("v", &v).unwrap();
    table.values.lock().unwrap()[0] = 9.0;
    let err = ckpt.restore(&path).unwrap_err();
    assert_error(
        &err,
        Code::NotFound,
        &[
            "'v/value'",
            "object 'v'",
            "objects: table",
            &path.display().to_string(),
        ],
    );
    assert_eq!(table.pairs(), [("a".to_string(), 9.0)]);

    // The file lacks one of the table's keys.
    let keys = Tensor::strings([1], ["a"]).unwrap();
    checkpoint::write(&path, [("table/keys", &keys)]).unwrap();
    let mut ckpt = Checkpoint::new();
    ckpt.add("table", &table).unwrap();
    let err = ckpt.restore(&path).unwrap_err();
    assert_error(
        &err,
        Code::NotFound,
        &[
            "'table/values'",
            "key 'values'",
            "it has for 'table': table/keys",
        ],
    );
    assert_eq!(table.pairs(), [("a".to_string(), 9.0)]);
}

#[test]
fn a_wrong_dtype_fails_before_anything_is_restored() {
    let (_dir, path) = scratch();
    checkpoint::write(
        &path,
        [
            ("a/value", f32s(&[5.0])),
            ("b/value", tensor(&[1], vec![5i64])),
        ],
    )
    .unwrap();
    let a = Var::new(f32s(&[1.0]));
    let b = Var::new(f32s(&[1.0]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("a", &a).unwrap().add("b", &b).unwrap();
    let err = ckpt.restore(&path).unwrap_err();
    assert_error(
        &err,
        Code::InvalidArgument,
        &["'b/value'", "int64", "float", &path.display().to_string()],
    );
    assert_eq!(a.get(), f32s(&[1.0]), "nothing was restored");
}

#[test]
fn an_objects_own_error_names_the_object_and_the_file() {
    let (_dir, path) = scratch();
    checkpoint::write(&path, [("v/value", f32s(&[1.0, 2.0, 3.0]))]).unwrap();
    let v = Var::new(f32s(&[0.0, 0.0]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &v).unwrap();
    let err = ckpt.restore(&path).unwrap_err();
    assert_error(
        &err,
        Code::InvalidArgument,
        &[
            "shape [2]",
            "shape [3]",
            "object 'v'",
            "v/value",
            &path.display().to_string(),
        ],
    );
    assert_eq!(v.get(), f32s(&[0.0, 0.0]));

    // An object that cannot serialize is not pre-checked; its restore runs.
    let mut ckpt = Checkpoint::new();
    ckpt.add("v", &Broken).unwrap();
    let err = ckpt.restore(&path).unwrap_err();
    assert_error(&err, Code::Internal, &["the device is gone", "object 'v'"]);
}

#[test]
fn a_corrupt_file_restores_nothing() {
    // Make the first key's length 127 bytes: more than the keys' bytes.
    let (_dir, path, mut bytes) = fixture();
    let (n, header) = parse_header(&bytes);
    let begin = header["table/keys.lengths"]["data_offsets"][0]
        .as_u64()
        .unwrap() as usize;
    bytes[8 + n + begin] = 0x7f;
    fs::write(&path, &bytes).unwrap();

    let table = Table::new(&[("x", 0.0)]);
    let v = Var::new(f32s(&[0.0; 4]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("table", &table).unwrap().add("v", &v).unwrap();
    let err = ckpt.restore(&path).unwrap_err();
    assert_error(
        &err,
        Code::DataLoss,
        &["table/keys", &path.display().to_string()],
    );
    assert_eq!(table.pairs(), [("x".to_string(), 0.0)]);
    assert_eq!(v.get(), f32s(&[0.0; 4]));
}

// ---------------------------------------------------------------------------
// Hostile files
// ---------------------------------------------------------------------------

/// A safetensors file made by hand, for headers that the safetensors crate
/// refuses to write: the 8-byte little-endian length of `header`, `header`,
/// then `data`.
fn hand_made(header: &str, data: &[u8]) -> Vec<u8> {
    [
        &(header.len() as u64).to_le_bytes()[..],
        header.as_bytes(),
        data,
    ]
    .concat()
}

/// The header entry of one tensor: `"<name>": {...}`.
fn entry(name: &str, dtype: &str, shape: &str, begin: u64, end: u64) -> String {
    format!(r#""{name}":{{"dtype":"{dtype}","shape":{shape},"data_offsets":[{begin},{end}]}}"#)
}

/// Reads `bytes` as a file and as a checkpoint restoring a table and a
/// variable, and returns the two errors (never a panic).
fn read_both_ways(path: &Path, bytes: &[u8]) -> (Error, Error) {
    fs::write(path, bytes).unwrap();
    let read = checkpoint::read(path).unwrap_err();
    let table = Table::default();
    let v = Var::new(f32s(&[0.0; 4]));
    let mut ckpt = Checkpoint::new();
    ckpt.add("table", &table).unwrap().add("v", &v).unwrap();
    let restored = ckpt.restore(path).unwrap_err();
    (read, restored)
}

#[test]
fn shapes_with_too_many_elements_are_data_loss_naming_tensor_and_shape() {
    let (_dir, path) = scratch();
    let max = u64::MAX;
    let past_isize = isize::MAX as u64 + 1;
    let shapes = [
        // A zero beside a huge dimension: no data, and no overflow in the
        // plain product either, but more elements per row than fit in memory.
        format!("[0,{max},2]"),
        format!("[{max},0]"),
        format!("[0,{past_isize}]"),
        // Products that overflow, with and without a zero.
        "[4294967296,4294967296]".to_string(),
        "[4294967296,4294967296,0]".to_string(),
        "[0,3037000500,3037000500]".to_string(),
    ];
    // The 84-byte file of the bug report.
    assert_eq!(
        hand_made(&format!("{{{}}}", entry("e", "U8", &shapes[0], 0, 0)), &[]).len(),
        84
    );
    let ours = r#""__metadata__":{"format":"op-core-checkpoint","version":"1","#;
    for shape in &shapes {
        for dtype in ["U8", "F32", "BOOL", "I64"] {
            let header = format!("{{{}}}", entry("e", dtype, shape, 0, 0));
            let (read, restored) = read_both_ways(&path, &hand_made(&header, &[]));
            for err in [&read, &restored] {
                assert_error(
                    err,
                    Code::DataLoss,
                    &["'e'", shape, &path.display().to_string()],
                );
            }
        }
        // The same shape as a string tensor's lengths.
        let header = format!(
            r#"{{{ours}"strings":"[\"s\"]"}},{},{}}}"#,
            entry("s", "U8", "[0]", 0, 0),
            entry("s.lengths", "I64", shape, 0, 0)
        );
        let (read, _) = read_both_ways(&path, &hand_made(&header, &[]));
        assert_error(
            &read,
            Code::DataLoss,
            &["'s.lengths'", shape, &path.display().to_string()],
        );
        // As a complex tensor: the shape and a trailing 2.
        let complex_shape = format!("{},2]", shape.trim_end_matches(']'));
        let header = format!(
            r#"{{{ours}"complex":"[\"c\"]"}},{}}}"#,
            entry("c", "F32", &complex_shape, 0, 0)
        );
        let (read, _) = read_both_ways(&path, &hand_made(&header, &[]));
        assert_error(&read, Code::DataLoss, &["'c'", &path.display().to_string()]);
    }
}

#[test]
fn empty_tensors_with_the_largest_legal_dimensions_read_or_are_data_loss() {
    // Legal by the counting rule (the nonzero dims multiply to at most
    // isize::MAX), but no element type's bytes for one row fit in memory:
    // a tensor or a DataLoss error, never a panic.
    let (_dir, path) = scratch();
    let max = isize::MAX as u64;
    let ours = r#""__metadata__":{"format":"op-core-checkpoint","version":"1","#;
    for shape in [
        format!("[0,{max}]"),
        format!("[{max},0]"),
        format!("[0,{max},1]"),
    ] {
        for dtype in ["U8", "BOOL", "F32", "F64", "C64", "I64"] {
            let header = format!("{{{}}}", entry("e", dtype, &shape, 0, 0));
            fs::write(&path, hand_made(&header, &[])).unwrap();
            if let Err(err) = checkpoint::read(&path) {
                assert_error(&err, Code::DataLoss, &["'e'", &path.display().to_string()]);
            }
        }
        let header = format!(
            r#"{{{ours}"strings":"[\"s\"]","complex":"[\"c\"]"}},{},{},{}}}"#,
            entry("s", "U8", "[0]", 0, 0),
            entry("s.lengths", "I64", &shape, 0, 0),
            entry(
                "c",
                "F64",
                &format!("{},2]", shape.trim_end_matches(']')),
                0,
                0
            )
        );
        fs::write(&path, hand_made(&header, &[])).unwrap();
        match checkpoint::read(&path) {
            Ok(tensors) => assert!(tensors.values().all(|t| t.num_elements() == 0)),
            Err(err) => assert_error(&err, Code::DataLoss, &[&path.display().to_string()]),
        }
    }
}

#[test]
fn hostile_headers_and_offsets_are_data_loss() {
    let (_dir, path) = scratch();
    let four = [0u8; 4];
    // 2^61 - 1 bytes of U8: eight of them end just below 2^64, so the end of
    // the data plus the header overflows.
    let big = (1u64 << 61) - 1;
    let eight_huge: Vec<String> = (0..8)
        .map(|i| {
            entry(
                &format!("t{i}"),
                "U8",
                &format!("[{big}]"),
                i * big,
                (i + 1) * big,
            )
        })
        .collect();
    let cases: Vec<(String, Vec<u8>, &str)> = vec![
        // Offsets past the data, reversed, overlapping, with a gap, huge.
        (
            format!("{{{}}}", entry("a", "U8", "[4]", 0, 8)),
            four.to_vec(),
            "'a'",
        ),
        (
            format!("{{{}}}", entry("a", "U8", "[4]", 4, 0)),
            four.to_vec(),
            "'a'",
        ),
        (
            format!(
                "{{{},{}}}",
                entry("a", "U8", "[4]", 0, 4),
                entry("b", "U8", "[2]", 2, 4)
            ),
            four.to_vec(),
            "'b'",
        ),
        (
            format!(
                "{{{},{}}}",
                entry("a", "U8", "[1]", 0, 1),
                entry("b", "U8", "[2]", 2, 4)
            ),
            four.to_vec(),
            "'b'",
        ),
        (
            format!("{{{}}}", entry("a", "U8", "[4]", 0, u64::MAX)),
            four.to_vec(),
            "'a'",
        ),
        (
            format!("{{{}}}", entry("a", "U8", "[4]", u64::MAX - 1, u64::MAX)),
            four.to_vec(),
            "'a'",
        ),
        (
            format!("{{{}}}", eight_huge.join(",")),
            four.to_vec(),
            "'t0'",
        ),
        // Offsets that do not match the dtype and shape.
        (
            format!("{{{}}}", entry("a", "F32", "[2]", 0, 4)),
            four.to_vec(),
            "'a'",
        ),
        // Data left over after the last tensor.
        (
            format!("{{{}}}", entry("a", "U8", "[2]", 0, 2)),
            four.to_vec(),
            "2 bytes",
        ),
        // The same tensor twice.
        (
            format!(
                "{{{},{}}}",
                entry("a", "U8", "[2]", 0, 2),
                entry("a", "U8", "[2]", 2, 4)
            ),
            four.to_vec(),
            "'a'",
        ),
        // Metadata that is not a map of strings.
        (
            r#"{"__metadata__":{"format":1}}"#.to_string(),
            vec![],
            "__metadata__",
        ),
        (r#"{"__metadata__":[]}"#.to_string(), vec![], "__metadata__"),
        // A header that is not a JSON object, or has trailing garbage.
        ("[]".to_string(), vec![], "safetensors"),
        ("{} {}".to_string(), vec![], "safetensors"),
        // An unknown dtype.
        (
            format!("{{{}}}", entry("a", "F99", "[4]", 0, 4)),
            four.to_vec(),
            "'a'",
        ),
    ];
    for (header, data, part) in cases {
        let bytes = hand_made(&header, &data);
        let (read, restored) = read_both_ways(&path, &bytes);
        for err in [&read, &restored] {
            assert_error(err, Code::DataLoss, &[part, &path.display().to_string()]);
        }
    }

    // A header length of just over the 100 MB limit in a short file, and a
    // header length the file does not have.
    for n in [100_000_001u64, 1 << 40, 12] {
        let bytes = [&n.to_le_bytes()[..], b"{}"].concat();
        let (read, _) = read_both_ways(&path, &bytes);
        assert_error(
            &read,
            Code::DataLoss,
            &["header", &path.display().to_string()],
        );
    }
}

#[test]
fn hostile_string_lengths_are_data_loss_naming_the_tensor() {
    use safetensors::Dtype as S;
    let (_dir, path) = scratch();
    let strings = [OURS[0], OURS[1], ("strings", "[\"s\"]")];
    let lengths = |v: &[i64]| le(v.iter().map(|x| x.to_le_bytes()));
    for (values, part) in [
        (vec![-1], "-1"),
        (vec![i64::MIN], "negative"),
        (vec![i64::MAX], "do not match"),
        (vec![1, i64::MAX], "do not match"),
        (vec![2, -1, 2], "-1"),
        (vec![3, 1], "do not match"),
        (vec![1, 1], "add up to 2"),
    ] {
        let n = values.len();
        raw_file(
            &path,
            &[
                ("s", S::U8, vec![3], b"abc".to_vec()),
                ("s.lengths", S::I64, vec![n], lengths(&values)),
            ],
            &strings,
        );
        let err = checkpoint::read(&path).unwrap_err();
        assert_error(
            &err,
            Code::DataLoss,
            &["'s.lengths'", "'s'", part, &path.display().to_string()],
        );
    }
}

// ---------------------------------------------------------------------------
// Checksums
// ---------------------------------------------------------------------------

/// The safetensors tensor whose data holds byte `at` of the data section,
/// from the header.
fn tensor_at(header: &serde_json::Map<String, serde_json::Value>, at: usize) -> String {
    header
        .iter()
        .filter(|(name, _)| *name != "__metadata__")
        .find(|(_, entry)| {
            let offsets = entry["data_offsets"].as_array().unwrap();
            let (begin, end) = (offsets[0].as_u64().unwrap(), offsets[1].as_u64().unwrap());
            (begin..end).contains(&(at as u64))
        })
        .map(|(name, _)| name.clone())
        .unwrap()
}

#[test]
fn every_single_byte_flip_in_the_data_is_data_loss() {
    let (dir, _path, bytes) = fixture();
    let (n, header) = parse_header(&bytes);
    let flipped = dir.path().join("flipped");
    let data_len = bytes.len() - 8 - n;
    assert!(data_len > 50, "{data_len}");
    for at in 0..data_len {
        let tensor = tensor_at(&header, at);
        for mask in [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff] {
            let mut bytes = bytes.clone();
            bytes[8 + n + at] ^= mask;
            fs::write(&flipped, &bytes).unwrap();
            let err = checkpoint::read(&flipped).unwrap_err();
            assert_error(
                &err,
                Code::DataLoss,
                &[
                    &format!("'{tensor}'"),
                    "checksum",
                    &flipped.display().to_string(),
                ],
            );
        }
        // Restoring the objects: nothing changes.
        let mut bytes = bytes.clone();
        bytes[8 + n + at] ^= 0x01;
        fs::write(&flipped, &bytes).unwrap();
        let table = Table::new(&[("x", 0.0)]);
        let v = Var::new(f32s(&[0.0; 4]));
        let mut ckpt = Checkpoint::new();
        ckpt.add("table", &table).unwrap().add("v", &v).unwrap();
        let err = ckpt.restore(&flipped).unwrap_err();
        assert_error(&err, Code::DataLoss, &[&format!("'{tensor}'")]);
        assert_eq!(table.pairs(), [("x".to_string(), 0.0)]);
        assert_eq!(v.get(), f32s(&[0.0; 4]));
    }
}

#[test]
fn the_metadata_holds_each_tensors_crc32c() {
    let (_dir, path, bytes) = fixture();
    let (n, header) = parse_header(&bytes);
    let data = &bytes[8 + n..];
    let sums: BTreeMap<String, String> =
        serde_json::from_str(header["__metadata__"]["crc32c"].as_str().unwrap()).unwrap();
    let names: Vec<&String> = header.keys().filter(|k| *k != "__metadata__").collect();
    assert_eq!(sums.keys().collect::<Vec<_>>(), names);
    for (name, sum) in &sums {
        let offsets = header[name]["data_offsets"].as_array().unwrap();
        let begin = offsets[0].as_u64().unwrap() as usize;
        let end = offsets[1].as_u64().unwrap() as usize;
        // 8 lower-case hex digits.
        assert_eq!(
            *sum,
            format!("{:08x}", crc32c::crc32c(&data[begin..end])),
            "{name}"
        );
    }
    // The empty tensor's is 0.
    checkpoint::write(&path, [("e", tensor::<f32>(&[0], vec![]))]).unwrap();
    let (_, header) = parse_header(&fs::read(&path).unwrap());
    assert_eq!(header["__metadata__"]["crc32c"], r#"{"e":"00000000"}"#);
}

#[test]
fn files_without_checksums_still_read_and_bad_checksums_are_data_loss() {
    use safetensors::Dtype as S;
    let (_dir, path) = scratch();
    let floats = le([1.0f32, 2.0].map(f32::to_le_bytes));
    let tensors = [
        ("a", S::F32, vec![2], floats.clone()),
        ("s", S::U8, vec![2], b"hi".to_vec()),
        ("s.lengths", S::I64, vec![1], le([2i64.to_le_bytes()])),
    ];
    let strings = ("strings", r#"["s"]"#);
    // A version 1 file from before checksums: no "crc32c" key.
    raw_file(&path, &tensors, &[OURS[0], OURS[1], strings]);
    let back = checkpoint::read(&path).unwrap();
    assert_eq!(back["a"], f32s(&[1.0, 2.0]));
    assert_eq!(back["s"], Tensor::strings([1], ["hi"]).unwrap());

    let right = format!(
        r#"{{"a":"{:08x}","s":"{:08x}","s.lengths":"{:08x}"}}"#,
        crc32c::crc32c(&floats),
        crc32c::crc32c(b"hi"),
        crc32c::crc32c(&2i64.to_le_bytes())
    );
    raw_file(
        &path,
        &tensors,
        &[OURS[0], OURS[1], strings, ("crc32c", &right)],
    );
    assert_eq!(checkpoint::read(&path).unwrap(), back);

    let a = format!("{:08x}", crc32c::crc32c(&floats));
    let other = format!("{:08x}", crc32c::crc32c(&floats) ^ 1);
    let wrong = right.replacen(&a, &other, 1);
    let missing = right.replacen(&format!(r#""a":"{a}","#), "", 1);
    let extra = right.replacen('{', r#"{"b":"00000000","#, 1);
    for (sums, parts) in [
        (wrong.as_str(), &["'a'", "checksum"][..]),
        (&missing, &["'a'", "no checksum"]),
        (&extra, &["'b'", "no such tensor"]),
        ("[1, 2]", &["crc32c", "JSON"]),
        (r#"{"a":1}"#, &["crc32c", "JSON"]),
        (r#"{"a":"1234567"}"#, &["'a'", "8 hex digits"]),
        (r#"{"a":"+1234567"}"#, &["'a'", "8 hex digits"]),
        (r#"{"a":"123456789"}"#, &["'a'", "8 hex digits"]),
    ] {
        raw_file(
            &path,
            &tensors,
            &[OURS[0], OURS[1], strings, ("crc32c", sums)],
        );
        let err = checkpoint::read(&path).unwrap_err();
        let mut parts = parts.to_vec();
        let shown = path.display().to_string();
        parts.push(&shown);
        assert_error(&err, Code::DataLoss, &parts);
    }
}

#[test]
fn read_bytes_decodes_what_read_reads() {
    let (_dir, path) = scratch();
    let tensors = every_dtype();
    checkpoint::write(&path, &tensors).unwrap();
    let bytes = fs::read(&path).unwrap();
    assert_eq!(checkpoint::read_bytes(&bytes).unwrap(), tensors);
    assert_eq!(checkpoint::read(&path).unwrap(), tensors);
    for len in [0, 8, bytes.len() - 1] {
        let err = checkpoint::read_bytes(&bytes[..len]).unwrap_err();
        assert_eq!(err.code(), Code::DataLoss, "{err}");
    }
}

// ---------------------------------------------------------------------------
// Files that are not regular files
// ---------------------------------------------------------------------------

/// Runs `f` on another thread and returns its result, or `None` if it has
/// not finished within `limit`: a read that blocks fails instead of hanging.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    receive.recv_timeout(limit).ok()
}

#[cfg(unix)]
#[test]
fn reading_a_fifo_without_a_writer_fails_at_once() {
    let (dir, _) = scratch();
    let fifo = dir.path().join("fifo.safetensors");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c_path` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);

    let path = fifo.clone();
    let Some(result) = within(Duration::from_secs(10), move || {
        let read = checkpoint::read(&path);
        let v = Var::new(f32s(&[1.0]));
        let mut ckpt = Checkpoint::new();
        ckpt.add("v", &v).unwrap();
        (read, ckpt.restore(&path))
    }) else {
        // Let the blocked reader go: open the write end, then fail.
        drop(fs::OpenOptions::new().write(true).open(&fifo));
        panic!("reading a FIFO with no writer blocked for 10 s");
    };
    let (read, restored) = result;
    for err in [read.unwrap_err(), restored.unwrap_err()] {
        assert_error(
            &err,
            Code::FailedPrecondition,
            &["FIFO", "not a regular file", &fifo.display().to_string()],
        );
    }
}

#[cfg(unix)]
#[test]
fn devices_are_not_read() {
    // /dev/zero never ends: reading it to the end would fill the memory.
    for device in ["/dev/zero", "/dev/null"] {
        let err = within(Duration::from_secs(10), move || {
            checkpoint::read(device).unwrap_err()
        })
        .unwrap_or_else(|| panic!("reading {device} did not stop within 10 s"));
        assert_error(
            &err,
            Code::FailedPrecondition,
            &["character device", "not a regular file", device],
        );
    }
}

#[test]
fn a_directory_is_not_read() {
    let (dir, _) = scratch();
    let err = checkpoint::read(dir.path()).unwrap_err();
    assert_error(
        &err,
        Code::FailedPrecondition,
        &["directory", &dir.path().display().to_string()],
    );
}

/// A file whose size says 0 but which has contents: what a file that grows
/// while it is read looks like. (Linux's /proc files are such files.)
#[cfg(target_os = "linux")]
#[test]
fn a_file_longer_than_its_size_is_data_loss() {
    let path = Path::new("/proc/self/status");
    assert_eq!(fs::metadata(path).unwrap().len(), 0);
    let err = checkpoint::read(path).unwrap_err();
    assert_error(&err, Code::DataLoss, &["changed size", "/proc/self/status"]);
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

/// A shape of rank 0 to 3 with small dimensions, and its element count.
fn shape() -> impl Strategy<Value = (Vec<usize>, usize)> {
    prop::collection::vec(0usize..4, 0..4).prop_map(|dims| {
        let n = dims.iter().product();
        (dims, n)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn f32_i64_and_string_tensors_round_trip(
        floats in shape().prop_flat_map(|(dims, n)| (Just(dims), prop::collection::vec(any::<f32>(), n))),
        ints in shape().prop_flat_map(|(dims, n)| (Just(dims), prop::collection::vec(any::<i64>(), n))),
        strings in shape().prop_flat_map(|(dims, n)| {
            (Just(dims), prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6), n))
        }),
    ) {
        let (_dir, path) = scratch();
        let tensors: BTreeMap<String, Tensor> = [
            ("obj/floats".to_string(), Tensor::from_vec(&floats.0, floats.1).unwrap()),
            ("obj/ints".to_string(), Tensor::from_vec(&ints.0, ints.1).unwrap()),
            ("obj/strings".to_string(), Tensor::from_vec(&strings.0, strings.1).unwrap()),
        ]
        .into();
        checkpoint::write(&path, &tensors).unwrap();
        let back = checkpoint::read(&path).unwrap();
        prop_assert!(same_bits(&back, &tensors), "{back:?} != {tensors:?}");
    }

    #[test]
    fn every_truncation_is_data_loss(cut in any::<prop::sample::Index>()) {
        let (dir, _path, bytes) = fixture();
        let len = cut.index(bytes.len());
        let cut_path = dir.path().join("cut");
        fs::write(&cut_path, &bytes[..len]).unwrap();
        let err = checkpoint::read(&cut_path).unwrap_err();
        prop_assert_eq!(err.code(), Code::DataLoss);
    }

    #[test]
    fn byte_flips_give_errors_or_different_data(
        at in any::<prop::sample::Index>(),
        mask in 1u8..=255,
    ) {
        let (dir, path, mut bytes) = fixture();
        let original = checkpoint::read(&path).unwrap();
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let at = at.index(bytes.len());
        bytes[at] ^= mask;
        let flipped = dir.path().join("flipped");
        fs::write(&flipped, &bytes).unwrap();
        match checkpoint::read(&flipped) {
            Err(_) => {}
            // A flip in the data changes the data.
            Ok(tensors) if at >= 8 + n => prop_assert!(!same_bits(&tensors, &original)),
            // A flip in the header may keep it valid JSON (a space becomes a
            // newline, a name changes): any result but a panic will do.
            Ok(_) => {}
        }
        // The same through objects never panics either.
        let table = Table::default();
        let v = Var::new(f32s(&[0.0; 4]));
        let mut ckpt = Checkpoint::new();
        ckpt.add("table", &table).unwrap().add("v", &v).unwrap();
        let _ = ckpt.restore(&flipped);
    }
}

#[test]
fn lengths_suffix_is_documented_value() {
    assert_eq!(LENGTHS_SUFFIX, ".lengths");
    assert_eq!(checkpoint::FORMAT, "op-core-checkpoint");
    assert_eq!(checkpoint::VERSION, "1");
}

/// A hostile file's tensor names are quoted capped in errors: a 1 MB name
/// gives a short message, not a 1 MB one.
#[test]
fn errors_about_a_file_quote_its_tensor_names_capped() {
    let (_dir, path) = scratch();
    let name = "n".repeat(1 << 20);
    let header = format!(
        r#"{{"{name}":{{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,4]}}}}"#
    );
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0; 4]);
    fs::write(&path, bytes).unwrap();
    let err = checkpoint::read(&path).unwrap_err();
    assert_eq!(err.code(), Code::DataLoss, "{err}");
    assert!(
        err.message().starts_with("tensor 'nnn"),
        "{}",
        &err.message()[..100]
    );
    assert!(
        err.to_string().len() < 2000,
        "{} bytes",
        err.to_string().len()
    );
}
