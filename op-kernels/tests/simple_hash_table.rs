//! The hash table ops (`Examples>SimpleHashTable*`): the guide's tests in
//! Rust (find-insert-find, strings, every dtype pair, the table freed with
//! its last handle or when the function using it returns), errors (a
//! missing key, the wrong dtypes, non-scalar keys, mismatched lengths), the
//! batch ops (any shape, every dtype pair, one lock per call), the shape
//! functions one line per case, the registered kernels, the resource
//! against a model map, checkpoints (`Saveable`), and many threads on one
//! table under a watchdog.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use op_core::checkpoint::{Checkpoint, Saveable};
use op_core::resource::Resource;
use op_core::shape_inference::testing::ShapeTest;
use op_core::threads::ThreadPool;
use op_core::{Code, DType, OpCall, Registry, ResourceHandle, Runtime, Tensor};
use op_kernels::hash_table::{SimpleHashTable, SimpleHashTableHandle, TableElement, TableKey};
use proptest::prelude::*;

mod common;
use common::{assert_contains, run_jobs};

const CREATE: &str = "Examples>SimpleHashTableCreate";
const FIND: &str = "Examples>SimpleHashTableFind";
const INSERT: &str = "Examples>SimpleHashTableInsert";
const REMOVE: &str = "Examples>SimpleHashTableRemove";
const EXPORT: &str = "Examples>SimpleHashTableExport";
const IMPORT: &str = "Examples>SimpleHashTableImport";
const FIND_MANY: &str = "Examples>SimpleHashTableFindMany";
const INSERT_MANY: &str = "Examples>SimpleHashTableInsertMany";
const OPS: [&str; 8] = [
    CREATE,
    FIND,
    INSERT,
    REMOVE,
    EXPORT,
    IMPORT,
    FIND_MANY,
    INSERT_MANY,
];

/// The guide's `REGISTER_KERNEL(key_dtype, value_dtype)` list.
const PAIRS: [(DType, DType); 15] = [
    (DType::I32, DType::F64),
    (DType::I32, DType::F32),
    (DType::I32, DType::I32),
    (DType::I32, DType::String),
    (DType::I64, DType::F64),
    (DType::I64, DType::F32),
    (DType::I64, DType::I32),
    (DType::I64, DType::I64),
    (DType::I64, DType::String),
    (DType::String, DType::Bool),
    (DType::String, DType::F64),
    (DType::String, DType::F32),
    (DType::String, DType::I32),
    (DType::String, DType::I64),
    (DType::String, DType::String),
];

fn bytes(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// Creates a table with the ops directly; returns its handle tensor.
fn create(key: DType, value: DType) -> Tensor {
    op_kernels::link();
    let mut out = OpCall::new(CREATE)
        .attr("key_dtype", key)
        .attr("value_dtype", value)
        .run()
        .unwrap();
    assert_eq!(out.len(), 1);
    out.remove(0)
}

#[test]
fn find_insert_find() {
    op_kernels::link();
    // The guide's usage: SimpleHashTable(tf.int32, float, default_value=-999.0).
    let table = SimpleHashTableHandle::<i32, f32>::new(-999.0).unwrap();
    assert_eq!(table.find_or(1, -999.0).unwrap(), -999.0);
    table.insert(1, 100.0).unwrap();
    assert_eq!(table.find_or(1, -999.0).unwrap(), 100.0);
    assert_eq!(table.find(1).unwrap(), 100.0);
    assert_eq!(table.find(2).unwrap(), -999.0);
}

#[test]
fn find_insert_find_strings() {
    op_kernels::link();
    let (default, foo, bar) = (bytes("Default"), bytes("Foo"), bytes("Bar"));
    let table = SimpleHashTableHandle::<Vec<u8>, Vec<u8>>::new(default.clone()).unwrap();
    assert_eq!(
        table.find_or(foo.clone(), default.clone()).unwrap(),
        default
    );
    table.insert(foo.clone(), bar.clone()).unwrap();
    assert_eq!(table.find_or(foo, default).unwrap(), bar);
}

/// Builds test values of every element type from small integers.
trait Sample: TableElement {
    fn sample(n: i64) -> Self;
}

macro_rules! sample_by_cast {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn sample(n: i64) -> Self { n as $t }
        }
    )*};
}
sample_by_cast!(i32, i64, f32, f64);

impl Sample for bool {
    fn sample(n: i64) -> Self {
        n > 0
    }
}

impl Sample for Vec<u8> {
    fn sample(n: i64) -> Self {
        n.to_string().into_bytes()
    }
}

/// The guide's `_use_table`: find, insert, find, remove, find.
fn use_table<K: TableKey + Sample, V: Sample>() -> [V; 3] {
    let table = SimpleHashTableHandle::<K, V>::new(V::sample(111)).unwrap();
    let result1 = table.find_or(K::sample(1), V::sample(-999)).unwrap();
    table.insert(K::sample(1), V::sample(100)).unwrap();
    let result2 = table.find_or(K::sample(1), V::sample(-999)).unwrap();
    table.remove(K::sample(1)).unwrap();
    let result3 = table.find_or(K::sample(1), V::sample(-999)).unwrap();
    [result1, result2, result3]
}

fn check_use_table<K: TableKey + Sample, V: Sample>() {
    let expected = [V::sample(-999), V::sample(100), V::sample(-999)];
    assert_eq!(
        use_table::<K, V>(),
        expected,
        "key_dtype={}, value_dtype={}",
        K::DTYPE,
        V::DTYPE
    );
}

/// Calls `$check::<K, V>()` for each of the guide's 15 (key, value) pairs.
macro_rules! for_every_dtype_pair {
    ($check:ident) => {
        $check::<i32, f64>();
        $check::<i32, f32>();
        $check::<i32, i32>();
        $check::<i32, Vec<u8>>();
        $check::<i64, f64>();
        $check::<i64, f32>();
        $check::<i64, i32>();
        $check::<i64, i64>();
        $check::<i64, Vec<u8>>();
        $check::<Vec<u8>, bool>();
        $check::<Vec<u8>, f64>();
        $check::<Vec<u8>, f32>();
        $check::<Vec<u8>, i32>();
        $check::<Vec<u8>, i64>();
        $check::<Vec<u8>, Vec<u8>>();
    };
}

#[test]
fn find_insert_find_for_every_dtype_pair() {
    op_kernels::link();
    for_every_dtype_pair!(check_use_table);
}

#[test]
fn a_pair_the_guide_does_not_register_has_no_kernel() {
    op_kernels::link();
    let err = SimpleHashTableHandle::<i32, i64>::new(0).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["Examples>SimpleHashTableCreate"]);
}

#[test]
fn the_table_is_freed_with_its_last_handle() {
    op_kernels::link();
    let table = SimpleHashTableHandle::<i64, f32>::new(0.0).unwrap();
    table.insert(1, 2.0).unwrap();
    let weak = Arc::downgrade(&table.table().unwrap());
    let copy = table.clone();
    assert!(weak.upgrade().is_some());
    // The clone shares the handle tensor: one owner, plus the upgrade.
    assert_eq!(Arc::strong_count(&weak.upgrade().unwrap()), 2);
    drop(table);
    assert_eq!(copy.find(1).unwrap(), 2.0);
    assert!(weak.upgrade().is_some(), "a handle remains");
    drop(copy);
    assert!(weak.upgrade().is_none(), "the last handle is gone");
}

#[test]
fn the_table_is_freed_after_ops_that_used_its_handle_tensor() {
    let handle = create(DType::I32, DType::String);
    for i in 0..3 {
        OpCall::new(INSERT)
            .input(&handle)
            .input(Tensor::scalar(i))
            .input(Tensor::string("x"))
            .run()
            .unwrap();
    }
    let outputs = OpCall::new(EXPORT)
        .input(&handle)
        .attr("key_dtype", DType::I32)
        .attr("value_dtype", DType::String)
        .run()
        .unwrap();
    assert_eq!(outputs[0].dims(), [3]);
    let resource = handle.scalar_value::<ResourceHandle>().unwrap();
    let table = Runtime::global()
        .resource_manager()
        .resource::<SimpleHashTable<i32, Vec<u8>>>(&resource)
        .unwrap();
    let weak = Arc::downgrade(&table);
    drop((table, resource));
    // Neither the ops run nor the runtime's caches hold the table.
    drop(handle);
    assert!(weak.upgrade().is_none());
}

#[test]
fn remove_of_a_missing_key_is_not_found() {
    op_kernels::link();
    let table = SimpleHashTableHandle::<i64, i64>::new(0).unwrap();
    let err = table.remove(7).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["Key for remove not found: 7"]);
    table.insert(7, 1).unwrap();
    table.remove(7).unwrap();
    assert_eq!(table.remove(7).unwrap_err().code(), Code::NotFound);

    let strings = SimpleHashTableHandle::<Vec<u8>, f32>::new(0.0).unwrap();
    let err = strings.remove(bytes("nope")).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["Key for remove not found: \"nope\""]);
}

#[test]
fn a_table_used_with_other_dtypes_is_invalid_argument() {
    let handle = create(DType::I64, DType::F32);
    // int32 keys: a kernel exists for (int32, float), but not this table.
    let err = OpCall::new(FIND)
        .input(&handle)
        .input(Tensor::scalar(1i32))
        .input(Tensor::scalar(0.0f32))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "not a op_kernels::hash_table::resource::SimpleHashTable<i32, f32>",
            "SimpleHashTable<i64, f32>",
        ],
    );
    // The value dtype of Remove comes from its attr.
    let err = OpCall::new(REMOVE)
        .input(&handle)
        .input(Tensor::scalar(1i64))
        .attr("value_dtype", DType::F64)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["not a op_kernels::hash_table::resource::SimpleHashTable<i64, f64>"],
    );
    // A key of the wrong type for the node is caught before any kernel.
    let err = OpCall::new(FIND)
        .input(&handle)
        .input(Tensor::scalar(1i64))
        .input(Tensor::scalar(0.0f32))
        .attr("key_dtype", DType::I32)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn a_handle_without_a_table_is_not_found() {
    op_kernels::link();
    let named =
        ResourceHandle::named::<SimpleHashTable<i64, f32>>(op_core::Device::CPU, "", "missing");
    let err = OpCall::new(FIND)
        .input(Tensor::scalar(named))
        .input(Tensor::scalar(1i64))
        .input(Tensor::scalar(0.0f32))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["'missing'"]);
}

#[test]
fn keys_and_values_must_be_scalars() {
    let handle = create(DType::I64, DType::F32);
    let two = Tensor::from_vec([2], vec![1i64, 2]).unwrap();
    let err = OpCall::new(FIND)
        .input(&handle)
        .input(&two)
        .input(Tensor::scalar(0.0f32))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["input 1 ('key') must be a scalar, but has shape [2]"],
    );
    let err = OpCall::new(INSERT)
        .input(&handle)
        .input(Tensor::scalar(1i64))
        .input(Tensor::from_vec([1, 1], vec![1.0f32]).unwrap())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["input 2 ('value') must be a scalar, but has shape [1,1]"],
    );
    let err = OpCall::new(REMOVE)
        .input(&handle)
        .input(&two)
        .attr("value_dtype", DType::F32)
        .run()
        .unwrap_err();
    assert_contains(
        &err,
        &["input 1 ('key') must be a scalar, but has shape [2]"],
    );
    let handles = Tensor::from_vec([1], vec![handle.scalar_value::<ResourceHandle>().unwrap()]);
    let err = OpCall::new(INSERT)
        .input(handles.unwrap())
        .input(Tensor::scalar(1i64))
        .input(Tensor::scalar(1.0f32))
        .run()
        .unwrap_err();
    assert_contains(
        &err,
        &["input 0 ('resource_handle') must be a scalar, but has shape [1]"],
    );
}

#[test]
fn export_and_import_round_trip() {
    op_kernels::link();
    let table = SimpleHashTableHandle::<i64, Vec<u8>>::new(Vec::new()).unwrap();
    let (keys, values) = table.export().unwrap();
    assert!(keys.is_empty() && values.is_empty());
    for i in 0..5 {
        table.insert(i, i.to_string().into_bytes()).unwrap();
    }
    let (keys, values) = table.export().unwrap();
    let mut pairs: Vec<(i64, Vec<u8>)> = keys.into_iter().zip(values).collect();
    pairs.sort();
    assert_eq!(
        pairs,
        (0..5)
            .map(|i| (i, i.to_string().into_bytes()))
            .collect::<Vec<_>>()
    );

    // Import replaces the contents (a later duplicate key wins).
    let other = SimpleHashTableHandle::<i64, Vec<u8>>::new(bytes("none")).unwrap();
    other.insert(99, bytes("gone")).unwrap();
    let (keys, values): (Vec<i64>, Vec<Vec<u8>>) = pairs.into_iter().unzip();
    other.import(keys, values).unwrap();
    assert_eq!(other.find(99).unwrap(), bytes("none"));
    assert_eq!(other.find(3).unwrap(), bytes("3"));
    other
        .import(vec![1, 1], vec![bytes("a"), bytes("b")])
        .unwrap();
    assert_eq!(other.export().unwrap(), (vec![1], vec![bytes("b")]));
    other.import(Vec::new(), Vec::new()).unwrap();
    assert_eq!(other.table().unwrap().len(), 0);
}

#[test]
fn import_needs_vectors_of_one_length() {
    let handle = create(DType::String, DType::Bool);
    let import = |keys: Tensor, values: Tensor| {
        OpCall::new(IMPORT)
            .input(&handle)
            .input(keys)
            .input(values)
            .run()
            .unwrap_err()
    };
    let err = import(
        Tensor::strings([3], ["a", "b", "c"]).unwrap(),
        Tensor::from_vec([2], vec![true, false]).unwrap(),
    );
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["keys and values must have one length, but there are 3 key(s) and 2 value(s)"],
    );
    let err = import(Tensor::string("a"), Tensor::scalar(true));
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["input 1 ('keys') must be a vector, but has shape []"],
    );
    let err = import(
        Tensor::strings([1], ["a"]).unwrap(),
        Tensor::from_vec([1, 1], vec![true]).unwrap(),
    );
    assert_contains(
        &err,
        &["input 2 ('values') must be a vector, but has shape [1,1]"],
    );
    // A failed import leaves the table as it was.
    let table = SimpleHashTableHandle::<i32, f64>::new(0.0).unwrap();
    table.insert(1, 1.5).unwrap();
    let err = table.import(vec![1, 2], vec![3.0]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(table.find(1).unwrap(), 1.5);
}

#[test]
fn batch_methods_take_many_keys() {
    op_kernels::link();
    let table = SimpleHashTableHandle::<Vec<u8>, i64>::new(-1).unwrap();
    let keys: Vec<Vec<u8>> = (0..100).map(|i: i64| i.to_string().into_bytes()).collect();
    let values: Vec<i64> = (0..100).map(|i| i * 10).collect();
    table.insert_many(&keys, &values).unwrap();
    assert_eq!(table.find(bytes("42")).unwrap(), 420);
    let found = table
        .find_many(&[bytes("7"), bytes("missing"), bytes("99")])
        .unwrap();
    assert_eq!(found, [70, -1, 990]);
    let err = table.insert_many(&keys[..2], &values[..1]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(table.table().unwrap().len(), 100);
}

#[test]
fn the_resource_describes_itself_briefly() {
    let table = SimpleHashTable::<i64, f32>::new();
    let keys: Vec<i64> = (0..1000).collect();
    table.insert_many(&keys, &vec![0.5; 1000]).unwrap();
    assert_eq!(
        table.debug_string(),
        "SimpleHashTable<int64, float> of 1000 entries"
    );
    assert_eq!(format!("{table:?}"), table.debug_string());
    assert!(table.memory_used() >= 1000 * (8 + 4));
    assert!(table.memory_used() < 1000 * 64, "{}", table.memory_used());

    let strings = SimpleHashTable::<Vec<u8>, Vec<u8>>::new();
    assert_eq!(
        strings.debug_string(),
        "SimpleHashTable<string, string> of 0 entries"
    );
    let empty = strings.memory_used();
    strings.insert(vec![b'k'; 1000], vec![b'v'; 5000]);
    assert!(strings.memory_used() >= empty + 6000);
    assert!(strings.debug_string().len() < 60);
}

#[test]
fn the_resource_methods() {
    let table = SimpleHashTable::<i32, i32>::new();
    assert!(table.is_empty());
    assert_eq!(table.insert(1, 10), None);
    assert_eq!(table.insert(1, 11), Some(10));
    assert_eq!(table.find(&1, &0), 11);
    assert_eq!(table.find(&2, &0), 0);
    assert_eq!(table.remove(&1).unwrap(), 11);
    assert_eq!(table.remove(&1).unwrap_err().code(), Code::NotFound);
    table.import(&[1, 2, 3], &[4, 5, 6]).unwrap();
    let (mut keys, mut values) = table.export();
    keys.sort();
    values.sort();
    assert_eq!((keys, values), (vec![1, 2, 3], vec![4, 5, 6]));
    assert_eq!(table.find_many(&[3, 4, 1], &-1), [6, -1, 4]);
}

/// The shape function of `op`, for a (int64, float) table (Create, Remove
/// and Export cannot infer their dtype attrs from their inputs).
fn t(op: &str) -> ShapeTest {
    op_kernels::link();
    ShapeTest::new(op)
        .attr("key_dtype", DType::I64)
        .attr("value_dtype", DType::F32)
}

#[test]
fn create_outputs_a_scalar() {
    let t = t(CREATE);
    t.ok("", "[]");
    t.error("[]", "got 1 input shape(s) for 0 input tensor(s)");
}

#[test]
fn find_takes_three_scalars_and_outputs_a_scalar() {
    let t = t(FIND);
    t.ok("[];[];[]", "[]");
    t.ok("?;?;?", "[]");
    t.error(
        "[2];[];[]",
        "op Examples>SimpleHashTableFind (node 'Examples>SimpleHashTableFind'): input 0 ('resource_handle') has shape [2], which must be rank 0 but is rank 1",
    );
    t.error(
        "[];[3];[]",
        "input 1 ('key') has shape [3], which must be rank 0 but is rank 1",
    );
    t.error(
        "[];[];[?,2]",
        "input 2 ('default_value') has shape [?,2], which must be rank 0 but is rank 2",
    );
    t.error("[];[]", "got 2 input shape(s) for 3 input tensor(s)");
}

#[test]
fn insert_takes_three_scalars() {
    let t = t(INSERT);
    t.ok("[];[];[]", "");
    t.ok("?;[];?", "");
    t.error(
        "[];[1];[]",
        "input 1 ('key') has shape [1], which must be rank 0 but is rank 1",
    );
    t.error(
        "[];[];[2,2]",
        "input 2 ('value') has shape [2,2], which must be rank 0 but is rank 2",
    );
}

#[test]
fn remove_takes_two_scalars() {
    let t = t(REMOVE);
    t.ok("[];[]", "");
    t.ok("?;?", "");
    t.error(
        "[?];[]",
        "input 0 ('resource_handle') has shape [?], which must be rank 0 but is rank 1",
    );
    t.error(
        "[];[4]",
        "input 1 ('key') has shape [4], which must be rank 0 but is rank 1",
    );
}

#[test]
fn export_outputs_two_vectors() {
    let t = t(EXPORT);
    t.ok("[]", "[?];[?]");
    t.ok("?", "[?];[?]");
    t.error(
        "[1]",
        "input 0 ('table_handle') has shape [1], which must be rank 0 but is rank 1",
    );
}

#[test]
fn import_takes_two_vectors_of_one_length() {
    let t = t(IMPORT);
    t.ok("[];[3];[3]", "");
    t.ok("[];[?];[3]", "");
    t.ok("?;?;?", "");
    t.ok("[];[0];[0]", "");
    t.error(
        "[];[3];[4]",
        "dimensions must be equal, but are 3 and 4 (dimension 0 of input 1 ('keys') with shape [3]; dimension 0 of input 2 ('values') with shape [4])",
    );
    t.error(
        "[];[3,1];[3]",
        "input 1 ('keys') has shape [3,1], which must be rank 1 but is rank 2",
    );
    t.error(
        "[];[3];[]",
        "input 2 ('values') has shape [], which must be rank 1 but is rank 0",
    );
    t.error(
        "[2];[3];[3]",
        "input 0 ('table_handle') has shape [2], which must be rank 0 but is rank 1",
    );
}

/// The guide's six ops keep its signatures exactly; the two batch ops
/// follow them; all eight have a kernel for each of the guide's 15 pairs.
#[test]
fn every_op_has_the_guides_signature_and_kernels() {
    op_kernels::link();
    let registry = Registry::global();
    registry.check().unwrap();
    let mut expected = PAIRS.to_vec();
    expected.sort_by_key(|(k, v)| (k.enum_value(), v.enum_value()));
    for op in OPS {
        let entry = registry.op(op).unwrap();
        let def = entry.def();
        assert!(def.is_stateful, "{op} has a resource arg");
        let attrs: Vec<&str> = def.attrs.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(attrs, ["key_dtype", "value_dtype"], "{op}");
        let mut pairs: Vec<(DType, DType)> = entry
            .kernels()
            .iter()
            .map(|k| {
                assert_eq!(k.device, op_core::DeviceType::Cpu);
                let dtype = |attr: &str| {
                    k.constraints
                        .iter()
                        .find(|c| c.attr == attr)
                        .unwrap_or_else(|| panic!("{op}: kernel {} has no {attr}", k.name))
                        .dtype
                };
                assert_eq!(k.constraints.len(), 2);
                (dtype("key_dtype"), dtype("value_dtype"))
            })
            .collect();
        pairs.sort_by_key(|(k, v)| (k.enum_value(), v.enum_value()));
        assert_eq!(pairs, expected, "kernels of {op}");
    }
    let text = |op: &str| {
        let def = registry.op(op).unwrap().def();
        let args = |args: &[op_core::ArgDef]| {
            args.iter()
                .map(op_core::ArgDef::to_spec)
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!("({}) -> ({})", args(&def.inputs), args(&def.outputs))
    };
    assert_eq!(text(CREATE), "() -> (output: resource)");
    assert_eq!(
        text(FIND),
        "(resource_handle: resource, key: key_dtype, default_value: value_dtype) -> (value: value_dtype)"
    );
    assert_eq!(
        text(INSERT),
        "(resource_handle: resource, key: key_dtype, value: value_dtype) -> ()"
    );
    assert_eq!(
        text(REMOVE),
        "(resource_handle: resource, key: key_dtype) -> ()"
    );
    assert_eq!(
        text(EXPORT),
        "(table_handle: resource) -> (keys: key_dtype, values: value_dtype)"
    );
    assert_eq!(
        text(IMPORT),
        "(table_handle: resource, keys: key_dtype, values: value_dtype) -> ()"
    );
    assert_eq!(
        text(FIND_MANY),
        "(resource_handle: resource, keys: key_dtype, default_value: value_dtype) -> (values: value_dtype)"
    );
    assert_eq!(
        text(INSERT_MANY),
        "(resource_handle: resource, keys: key_dtype, values: value_dtype) -> ()"
    );
}

// ---- The guide's `tf.function` test: the table dies with the function ----

/// The guide's `_use_table`, also giving back a weak reference to the
/// table it made.
fn use_table_and_watch<K: TableKey + Sample, V: Sample>()
-> ([V; 3], std::sync::Weak<SimpleHashTable<K, V>>) {
    let table = SimpleHashTableHandle::<K, V>::new(V::sample(111)).unwrap();
    let weak = Arc::downgrade(&table.table().unwrap());
    let result1 = table.find_or(K::sample(1), V::sample(-999)).unwrap();
    table.insert(K::sample(1), V::sample(100)).unwrap();
    let result2 = table.find_or(K::sample(1), V::sample(-999)).unwrap();
    table.remove(K::sample(1)).unwrap();
    let result3 = table.find_or(K::sample(1), V::sample(-999)).unwrap();
    assert!(weak.upgrade().is_some(), "the table lives while in use");
    ([result1, result2, result3], weak)
}

/// The guide's `test_find_insert_find_tf_function`, parameterized as there
/// for (int32, float) and (int64, int32): the results are right, and the
/// table is freed when the function that made it returns.
#[test]
fn the_table_is_freed_when_the_function_using_it_returns() {
    op_kernels::link();
    let (results, weak) = use_table_and_watch::<i32, f32>();
    assert_eq!(results, [-999.0, 100.0, -999.0]);
    assert!(
        weak.upgrade().is_none(),
        "(int32, float) table outlived its function"
    );
    let (results, weak) = use_table_and_watch::<i64, i32>();
    assert_eq!(results, [-999, 100, -999]);
    assert!(
        weak.upgrade().is_none(),
        "(int64, int32) table outlived its function"
    );
}

// ---- The batch ops ----

/// Inserts 150 keys (more than one hashing block) with InsertMany, reads
/// them back with FindMany along with missing keys, and checks each
/// against Find.
fn check_batch<K: TableKey + Sample, V: Sample>() {
    let table = SimpleHashTableHandle::<K, V>::new(V::sample(-1)).unwrap();
    let keys: Vec<K> = (0..150).map(K::sample).collect();
    let values: Vec<V> = (0..150).map(|i| V::sample(i % 7 + 2)).collect();
    table.insert_many(&keys, &values).unwrap();
    let mut asked = keys.clone();
    asked.extend((1000..1010).map(K::sample));
    let mut expected = values.clone();
    expected.extend((0..10).map(|_| V::sample(-1)));
    let what = format!("key_dtype={}, value_dtype={}", K::DTYPE, V::DTYPE);
    assert_eq!(table.find_many(&asked).unwrap(), expected, "{what}");
    assert_eq!(
        table.find_many_or(&asked[140..], V::sample(3)).unwrap(),
        [&values[140..], &vec![V::sample(3); 10]].concat(),
        "{what}"
    );
    for (k, v) in keys.iter().zip(&values).step_by(37) {
        assert_eq!(&table.find(k.clone()).unwrap(), v, "{what}");
    }
    assert_eq!(table.table().unwrap().len(), 150, "{what}");
}

#[test]
fn find_many_and_insert_many_for_every_dtype_pair() {
    op_kernels::link();
    for_every_dtype_pair!(check_batch);
}

#[test]
fn find_many_keeps_the_shape_of_its_keys() {
    op_kernels::link();
    let table = SimpleHashTableHandle::<i64, f64>::new(-1.0).unwrap();
    table.insert_many(&[1, 2, 3], &[10.0, 20.0, 30.0]).unwrap();
    let keys = Tensor::from_vec([2, 3], vec![3i64, 9, 1, 2, 2, 0]).unwrap();
    let values = table.find_tensor(&keys).unwrap();
    assert_eq!(values.dtype(), DType::F64);
    assert_eq!(values.dims(), [2, 3]);
    assert_eq!(
        values.as_slice::<f64>().unwrap(),
        [30.0, -1.0, 10.0, 20.0, 20.0, -1.0]
    );
    // A scalar key gives a scalar value; empty keys give empty values.
    let one = table.find_tensor(Tensor::scalar(2i64)).unwrap();
    assert_eq!(one.rank(), 0);
    assert_eq!(one.scalar_value::<f64>().unwrap(), 20.0);
    let none = table
        .find_tensor_or(Tensor::from_vec([2, 0], Vec::<i64>::new()).unwrap(), 5.0)
        .unwrap();
    assert_eq!(none.dims(), [2, 0]);
    assert_eq!(table.find_many(&[]).unwrap(), Vec::<f64>::new());
    // Through the op by name, with a default of its own.
    let out = OpCall::new(FIND_MANY)
        .input(table.handle())
        .input(&keys)
        .input(Tensor::scalar(0.5f64))
        .run()
        .unwrap();
    assert_eq!(
        out[0].as_slice::<f64>().unwrap(),
        [30.0, 0.5, 10.0, 20.0, 20.0, 0.5]
    );
}

#[test]
fn insert_many_takes_keys_and_values_of_any_one_shape() {
    op_kernels::link();
    let table = SimpleHashTableHandle::<Vec<u8>, i32>::new(0).unwrap();
    table
        .insert_tensors(
            Tensor::strings([2, 2], ["a", "b", "c", "a"]).unwrap(),
            Tensor::from_vec([2, 2], vec![1, 2, 3, 4]).unwrap(),
        )
        .unwrap();
    // A later duplicate key wins.
    assert_eq!(
        table
            .find_many(&[bytes("a"), bytes("b"), bytes("c")])
            .unwrap(),
        [4, 2, 3]
    );
    table
        .insert_tensors(Tensor::string("d"), Tensor::scalar(7))
        .unwrap();
    assert_eq!(table.find(bytes("d")).unwrap(), 7);
    table.insert_many(&[], &[]).unwrap();
    assert_eq!(table.table().unwrap().len(), 4);
}

#[test]
fn batch_op_errors_name_the_op_and_the_argument() {
    op_kernels::link();
    let table = SimpleHashTableHandle::<i64, f32>::new(0.0).unwrap();
    table.insert(1, 1.0).unwrap();
    let keys = Tensor::from_vec([3], vec![1i64, 2, 3]).unwrap();

    let err = OpCall::new(FIND_MANY)
        .input(table.handle())
        .input(&keys)
        .input(Tensor::from_vec([2], vec![0.0f32, 1.0]).unwrap())
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "op Examples>SimpleHashTableFindMany",
            "input 2 ('default_value') must be a scalar, but has shape [2]",
        ],
    );

    let insert_many = |keys: Tensor, values: Tensor| {
        OpCall::new(INSERT_MANY)
            .input(table.handle())
            .input(keys)
            .input(values)
            .run()
            .unwrap_err()
    };
    let err = insert_many(
        keys.clone(),
        Tensor::from_vec([2], vec![5.0f32, 6.0]).unwrap(),
    );
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "op Examples>SimpleHashTableInsertMany",
            "input 1 ('keys') and input 2 ('values') must have one shape, but have shapes [3] and [2]",
        ],
    );
    // As many elements is not enough: the shapes must be equal.
    let err = insert_many(
        keys.reshape([3, 1]).unwrap(),
        Tensor::from_vec([3], vec![5.0f32, 6.0, 7.0]).unwrap(),
    );
    assert_contains(
        &err,
        &["must have one shape, but have shapes [3,1] and [3]"],
    );
    let err = table.insert_many(&[5, 6], &[1.0]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    // No failed call changed the table.
    assert_eq!(table.export().unwrap(), (vec![1], vec![1.0]));

    // A table of other dtypes, and a handle that is not a scalar.
    let err = OpCall::new(FIND_MANY)
        .input(table.handle())
        .input(Tensor::from_vec([1], vec![1i32]).unwrap())
        .input(Tensor::scalar(0.0f32))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "op Examples>SimpleHashTableFindMany",
            "input 0 ('resource_handle')",
            "not a op_kernels::hash_table::resource::SimpleHashTable<i32, f32>",
        ],
    );
    let handles = Tensor::from_vec(
        [1],
        vec![table.handle().scalar_value::<ResourceHandle>().unwrap()],
    )
    .unwrap();
    let err = OpCall::new(FIND_MANY)
        .input(handles)
        .input(&keys)
        .input(Tensor::scalar(0.0f32))
        .run()
        .unwrap_err();
    assert_contains(
        &err,
        &["input 0 ('resource_handle') must be a scalar, but has shape [1]"],
    );
}

#[test]
fn find_many_outputs_the_shape_of_its_keys() {
    let t = t(FIND_MANY);
    t.ok("[];[2,3];[]", "in1");
    t.ok("[];[];[]", "in1");
    t.ok("?;?;?", "in1");
    t.ok("[];[?,4,?];[]", "in1");
    t.error(
        "[];[2];[2]",
        "input 2 ('default_value') has shape [2], which must be rank 0 but is rank 1",
    );
    t.error(
        "[3];[2];[]",
        "input 0 ('resource_handle') has shape [3], which must be rank 0 but is rank 1",
    );
}

#[test]
fn insert_many_takes_keys_and_values_of_one_shape() {
    let t = t(INSERT_MANY);
    t.ok("[];[2,3];[2,3]", "");
    t.ok("[];[];[]", "");
    t.ok("[];?;[4]", "");
    t.ok("[];[?,3];[2,?]", "");
    t.error(
        "[];[3];[4]",
        "dimension 0 in both shapes must be equal, but input 1 ('keys') has shape [3] and input 2 ('values') has shape [4]",
    );
    t.error(
        "[];[3];[3,1]",
        "shapes must be equal rank, but input 1 ('keys') has shape [3] and input 2 ('values') has shape [3,1]",
    );
    t.error(
        "[2];[3];[3]",
        "input 0 ('resource_handle') has shape [2], which must be rank 0 but is rank 1",
    );
}

// ---- The resource against a model ----

/// One operation on a table and on the model map.
#[derive(Clone, Debug)]
enum Step {
    Insert(i32, i32),
    Remove(i32),
    InsertMany(Vec<(i32, i32)>),
    Import(Vec<(i32, i32)>),
    Find(i32),
    FindMany(Vec<i32>),
    /// Exports the table and checks the export against the model.
    Export,
}

/// Few distinct keys, so that inserts replace and removes find keys: `0..40`,
/// and eight keys whose low 24 bits are all zero (they collide in the low
/// bits, where a weak hash would put them in one slot).
fn key() -> impl Strategy<Value = i32> + Clone {
    prop_oneof![4 => 0..40i32, 1 => (0..8i32).prop_map(|k| k << 24)]
}

fn step() -> impl Strategy<Value = Step> {
    let pairs = proptest::collection::vec((key(), any::<i32>()), 0..80);
    prop_oneof![
        4 => (key(), any::<i32>()).prop_map(|(k, v)| Step::Insert(k, v)),
        3 => key().prop_map(Step::Remove),
        2 => pairs.clone().prop_map(Step::InsertMany),
        1 => pairs.prop_map(Step::Import),
        1 => key().prop_map(Step::Find),
        1 => proptest::collection::vec(key(), 0..60).prop_map(Step::FindMany),
        1 => Just(Step::Export),
    ]
}

proptest! {
    /// Any sequence of updates leaves the table holding what a std
    /// `HashMap` holds after the same updates, by every read method.
    #[test]
    fn the_resource_agrees_with_a_model_map(steps in proptest::collection::vec(step(), 0..40)) {
        let table = SimpleHashTable::<i32, i32>::new();
        let mut model = HashMap::new();
        for step in steps {
            match step {
                Step::Insert(k, v) => prop_assert_eq!(table.insert(k, v), model.insert(k, v)),
                Step::Remove(k) => match model.remove(&k) {
                    Some(v) => prop_assert_eq!(table.remove(&k).unwrap(), v),
                    None => prop_assert_eq!(table.remove(&k).unwrap_err().code(), Code::NotFound),
                },
                Step::InsertMany(pairs) => {
                    let (keys, values): (Vec<i32>, Vec<i32>) = pairs.iter().copied().unzip();
                    table.insert_many(&keys, &values).unwrap();
                    model.extend(pairs);
                }
                Step::Import(pairs) => {
                    let (keys, values): (Vec<i32>, Vec<i32>) = pairs.iter().copied().unzip();
                    table.import(&keys, &values).unwrap();
                    model = pairs.into_iter().collect();
                }
                Step::Find(k) => prop_assert_eq!(table.find(&k, &-7), *model.get(&k).unwrap_or(&-7)),
                Step::FindMany(keys) => {
                    let expected: Vec<i32> = keys.iter().map(|k| *model.get(k).unwrap_or(&-7)).collect();
                    prop_assert_eq!(table.find_many(&keys, &-7), expected);
                }
                Step::Export => {
                    let (keys, values) = table.export();
                    prop_assert_eq!(keys.len(), model.len());
                    let exported: HashMap<i32, i32> = keys.into_iter().zip(values).collect();
                    prop_assert_eq!(&exported, &model);
                }
            }
            prop_assert_eq!(table.len(), model.len());
        }
        let mut all: Vec<i32> = (-1..41).collect();
        all.extend((0..9).map(|k| k << 24));
        let expected: Vec<i32> = all.iter().map(|k| *model.get(k).unwrap_or(&-7)).collect();
        prop_assert_eq!(table.find_many(&all, &-7), expected.clone());
        let singles: Vec<i32> = all.iter().map(|k| table.find(k, &-7)).collect();
        prop_assert_eq!(singles, expected);
        let (keys, values) = table.export();
        let exported: HashMap<i32, i32> = keys.into_iter().zip(values).collect();
        prop_assert_eq!(exported, model);
    }
}

// ---- Checkpoints (`Saveable`) ----

/// The checkpoint tensors of `table`, sorted by key: what a restored
/// table must give back.
fn sorted_export<K: TableKey + Ord, V: TableElement>(
    table: &SimpleHashTableHandle<'_, K, V>,
) -> Vec<(K, V)> {
    let (keys, values) = table.export().unwrap();
    let mut pairs: Vec<(K, V)> = keys.into_iter().zip(values).collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    pairs
}

#[test]
fn a_table_round_trips_through_its_checkpoint_tensors() {
    op_kernels::link();
    let table = SimpleHashTableHandle::<i64, Vec<u8>>::new(bytes("?")).unwrap();
    let keys: Vec<i64> = (0..200).map(|i| i * 7 - 300).collect();
    let values: Vec<Vec<u8>> = keys.iter().map(|k| format!("v{k}").into_bytes()).collect();
    table.insert_many(&keys, &values).unwrap();

    let tensors = table.serialize_to_tensors().unwrap();
    let names: Vec<&str> = tensors.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["keys", "values"]);
    assert_eq!(tensors[0].1.dtype(), DType::I64);
    assert_eq!(tensors[1].1.dtype(), DType::String);
    assert_eq!(tensors[0].1.dims(), [200]);
    assert_eq!(tensors[1].1.dims(), [200]);

    // A fresh table with other contents: the restore replaces them.
    let fresh = SimpleHashTableHandle::<i64, Vec<u8>>::new(bytes("?")).unwrap();
    fresh.insert(100_000, bytes("stale")).unwrap();
    fresh.restore_from_tensors(tensors).unwrap();
    assert_eq!(sorted_export(&fresh), sorted_export(&table));
    assert_eq!(fresh.find_many(&keys).unwrap(), values);
    assert_eq!(fresh.find(100_000).unwrap(), bytes("?"));
    assert_eq!(fresh.find(-300).unwrap(), bytes("v-300"));

    // String keys, and an empty table.
    let strings = SimpleHashTableHandle::<Vec<u8>, f32>::new(0.0).unwrap();
    strings
        .insert_many(&[bytes("a"), bytes(""), bytes("\u{e9}")], &[1.0, 2.0, 3.0])
        .unwrap();
    let copy = SimpleHashTableHandle::<Vec<u8>, f32>::new(0.0).unwrap();
    copy.restore_from_tensors(strings.serialize_to_tensors().unwrap())
        .unwrap();
    assert_eq!(sorted_export(&copy), sorted_export(&strings));
    let empty = SimpleHashTableHandle::<Vec<u8>, f32>::new(0.0).unwrap();
    copy.restore_from_tensors(empty.serialize_to_tensors().unwrap())
        .unwrap();
    assert_eq!(copy.table().unwrap().len(), 0);
}

#[test]
fn restore_checks_its_tensors_and_leaves_the_table_unchanged() {
    op_kernels::link();
    let table = SimpleHashTableHandle::<i32, f64>::new(0.0).unwrap();
    table.insert(1, 1.5).unwrap();
    let keys = || Tensor::from_vec([2], vec![7i32, 8]).unwrap();
    let values = || Tensor::from_vec([2], vec![7.5f64, 8.5]).unwrap();
    let restore = |tensors: Vec<(&str, Tensor)>| {
        let tensors = tensors
            .into_iter()
            .map(|(k, t)| (k.to_owned(), t))
            .collect();
        let err = table.restore_from_tensors(tensors).unwrap_err();
        assert_eq!(table.export().unwrap(), (vec![1], vec![1.5]), "{err}");
        err
    };

    let err = restore(vec![("keys", keys())]);
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &["cannot restore SimpleHashTable<int32, double>: no tensor for key 'values'"],
    );
    let err = restore(vec![("values", values())]);
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(&err, &["no tensor for key 'keys'"]);

    let err = restore(vec![
        ("keys", keys()),
        ("values", values()),
        ("table-keys", keys()),
    ]);
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["unexpected key 'table-keys'"]);
    let err = restore(vec![
        ("keys", keys()),
        ("keys", keys()),
        ("values", values()),
    ]);
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["key 'keys' is given twice"]);

    let err = restore(vec![
        ("keys", Tensor::from_vec([2], vec![7i64, 8]).unwrap()),
        ("values", values()),
    ]);
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["tensor 'keys' has dtype int64, but the table's key_dtype is int32"],
    );
    let err = restore(vec![
        ("keys", keys()),
        ("values", Tensor::strings([2], ["a", "b"]).unwrap()),
    ]);
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["tensor 'values' has dtype string, but the table's value_dtype is double"],
    );

    let err = restore(vec![("keys", Tensor::scalar(7i32)), ("values", values())]);
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["tensor 'keys' must be a vector, but has shape []"]);
    let err = restore(vec![
        ("keys", keys()),
        ("values", Tensor::from_vec([1], vec![7.5f64]).unwrap()),
    ]);
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["tensors 'keys' and 'values' must have one length, but have 2 and 1 elements"],
    );

    // And the right tensors do restore.
    table
        .restore_from_tensors(vec![("values".into(), values()), ("keys".into(), keys())])
        .unwrap();
    assert_eq!(table.find_many(&[1, 7, 8]).unwrap(), [0.0, 7.5, 8.5]);
}

#[test]
fn a_table_round_trips_through_a_checkpoint_file() {
    op_kernels::link();
    let path = std::env::temp_dir().join(format!(
        "op-kernels-simple-hash-table-{}.safetensors",
        std::process::id()
    ));
    let table = SimpleHashTableHandle::<Vec<u8>, Vec<u8>>::new(bytes("none")).unwrap();
    let keys: Vec<Vec<u8>> = (0..50)
        .map(|i: i32| format!("key {i}").into_bytes())
        .collect();
    let values: Vec<Vec<u8>> = (0..50).map(|i: i32| vec![b'x'; i as usize]).collect();
    table.insert_many(&keys, &values).unwrap();
    let before = sorted_export(&table);

    let mut ckpt = Checkpoint::new();
    ckpt.add("table", &table).unwrap();
    let saved = ckpt.save(&path).unwrap();
    assert!(saved.contains(&"table/keys".to_owned()), "{saved:?}");
    assert!(saved.contains(&"table/values".to_owned()), "{saved:?}");

    table.remove(bytes("key 3")).unwrap();
    table
        .insert(bytes("new"), bytes("gone after restore"))
        .unwrap();
    let restored = ckpt.restore(&path);
    std::fs::remove_file(&path).unwrap();
    restored.unwrap();
    assert_eq!(sorted_export(&table), before);
    assert_eq!(table.find(bytes("new")).unwrap(), bytes("none"));
    assert_eq!(table.find(bytes("key 3")).unwrap(), bytes("xxx"));
}

// ---- Many threads ----

/// 8 writer threads insert, find and remove on one table through the ops
/// (single and batch), each on a key range of its own and all on a few
/// shared keys, while 4 reader threads check a range nobody writes with
/// FindMany, Find and Export. At the end the table holds exactly the
/// expected entries (no lost update), and every thread finished within 60
/// seconds (no deadlock).
#[test]
fn many_threads_on_one_table() {
    op_kernels::link();
    const WRITERS: i64 = 8;
    const READERS: usize = 4;
    const KEYS: i64 = 400;
    const SHARED: i64 = 16;
    const STABLE: i64 = 500;
    let table = SimpleHashTableHandle::<i64, i64>::new(-1).unwrap();
    let stable: Arc<Vec<i64>> = Arc::new((-STABLE..0).collect());
    let stable_values: Arc<Vec<i64>> = Arc::new(stable.iter().map(|k| k * 3).collect());
    table.insert_many(&stable, &stable_values).unwrap();

    let barrier = Arc::new(Barrier::new(WRITERS as usize + READERS));
    let writers_left = Arc::new(AtomicUsize::new(WRITERS as usize));
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let mut jobs: Vec<(String, Box<dyn FnOnce() + Send>)> = Vec::new();
    for t in 0..WRITERS {
        let (table, barrier) = (table.clone(), barrier.clone());
        let (writers_left, stop) = (writers_left.clone(), stop.clone());
        jobs.push((
            format!("writer {t}"),
            Box::new(move || {
                barrier.wait();
                let base = (t + 1) * 1_000_000;
                for i in 0..KEYS {
                    let key = base + i;
                    table.insert(key, key * 2).unwrap();
                    assert_eq!(table.find(key).unwrap(), key * 2);
                    // Shared keys: some writer's value, never a missing one.
                    table.insert(i % SHARED, t).unwrap();
                    let shared = table.find(i % SHARED).unwrap();
                    assert!((0..WRITERS).contains(&shared), "{shared}");
                    if i % 2 == 1 {
                        table.remove(key).unwrap();
                        assert_eq!(table.find(key).unwrap(), -1);
                        assert_eq!(table.remove(key).unwrap_err().code(), Code::NotFound);
                    }
                }
                // A batch: insert, read back, remove every third.
                let batch: Vec<i64> = (0..KEYS).map(|i| base + KEYS + i).collect();
                let doubled: Vec<i64> = batch.iter().map(|k| k * 2).collect();
                table.insert_many(&batch, &doubled).unwrap();
                assert_eq!(table.find_many(&batch).unwrap(), doubled);
                for key in batch.iter().step_by(3) {
                    table.remove(*key).unwrap();
                }
                if writers_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    stop.store(true, Ordering::Release);
                }
            }),
        ));
    }
    for r in 0..READERS {
        let (table, barrier, stop, reads) =
            (table.clone(), barrier.clone(), stop.clone(), reads.clone());
        let (stable, stable_values) = (stable.clone(), stable_values.clone());
        jobs.push((
            format!("reader {r}"),
            Box::new(move || {
                barrier.wait();
                loop {
                    // Read the flag first, so that at least one full round
                    // of reads runs after the writers are done.
                    let last = stop.load(Ordering::Acquire);
                    assert_eq!(&table.find_many(&stable).unwrap(), &*stable_values);
                    assert_eq!(table.find(-1).unwrap(), -3);
                    if r == 0 {
                        // Export takes one lock: every stable entry is there.
                        let (keys, values) = table.export().unwrap();
                        let snapshot: HashMap<i64, i64> = keys.into_iter().zip(values).collect();
                        for (k, v) in stable.iter().zip(stable_values.iter()) {
                            assert_eq!(snapshot.get(k), Some(v));
                        }
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                    if last {
                        break;
                    }
                }
            }),
        ));
    }
    run_jobs(jobs, Duration::from_secs(60));
    assert!(reads.load(Ordering::Relaxed) >= READERS);

    let (keys, values) = table.export().unwrap();
    let mut pairs: Vec<(i64, i64)> = keys.into_iter().zip(values).collect();
    pairs.sort();
    let (stable_part, rest) = pairs.split_at(STABLE as usize);
    let (shared, own) = rest.split_at(SHARED as usize);
    let expected_stable: Vec<(i64, i64)> = stable
        .iter()
        .copied()
        .zip(stable_values.iter().copied())
        .collect();
    assert_eq!(stable_part, expected_stable);
    for (i, (k, v)) in shared.iter().enumerate() {
        assert_eq!(*k, i as i64);
        assert!((0..WRITERS).contains(v));
    }
    let mut expected = Vec::new();
    for t in 0..WRITERS {
        let base = (t + 1) * 1_000_000;
        expected.extend((0..KEYS).step_by(2).map(|i| (base + i, (base + i) * 2)));
        expected.extend(
            (0..KEYS)
                .filter(|i| i % 3 != 0)
                .map(|i| (base + KEYS + i, (base + KEYS + i) * 2)),
        );
    }
    assert_eq!(own, expected);
}

/// Import and InsertMany each change the whole table under one lock, and
/// FindMany and Export each read it under one: while one thread switches
/// the table between three contents, readers only ever see one of them
/// whole, never a mix.
#[test]
fn batch_updates_and_reads_are_atomic() {
    op_kernels::link();
    const N: i32 = 300;
    const ROUNDS: i32 = 30;
    let table = SimpleHashTableHandle::<i32, i32>::new(-1).unwrap();
    let keys: Arc<Vec<i32>> = Arc::new((0..N).collect());
    table.import(keys.to_vec(), vec![0; N as usize]).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let mut jobs: Vec<(String, Box<dyn FnOnce() + Send>)> = Vec::new();
    {
        let (table, keys, stop, reads) = (table.clone(), keys.clone(), stop.clone(), reads.clone());
        jobs.push((
            "writer".into(),
            Box::new(move || {
                // At least ROUNDS rounds, and on until the readers have
                // read many times while the table changes.
                let mut round = 0;
                while round < ROUNDS || reads.load(Ordering::Relaxed) < 200 {
                    round += 1;
                    // Keys 0..N with value 1, then keys 0..N with value 2
                    // and N more keys, then every value 3.
                    table.import(keys.to_vec(), vec![1; N as usize]).unwrap();
                    let more: Vec<i32> = (0..2 * N).collect();
                    table.import(more, vec![2; 2 * N as usize]).unwrap();
                    table
                        .insert_many(&keys, &vec![3 + round; N as usize])
                        .unwrap();
                }
                stop.store(true, Ordering::Release);
            }),
        ));
    }
    for r in 0..3 {
        let (table, keys, stop, reads) = (table.clone(), keys.clone(), stop.clone(), reads.clone());
        jobs.push((
            format!("reader {r}"),
            Box::new(move || {
                while !stop.load(Ordering::Acquire) {
                    let values = table.find_many(&keys).unwrap();
                    assert_eq!(values.len(), N as usize);
                    assert!(
                        values.iter().all(|v| *v == values[0]),
                        "FindMany saw a mix: {:?}",
                        &values[..10]
                    );
                    // Keys 0..N all with one value, and keys N..2N
                    // (if any) all with 2.
                    let (keys, values) = table.export().unwrap();
                    let len = keys.len();
                    assert!(len == N as usize || len == 2 * N as usize, "{len}");
                    let low: Vec<i32> = keys
                        .iter()
                        .zip(&values)
                        .filter(|(k, _)| **k < N)
                        .map(|(_, v)| *v)
                        .collect();
                    assert_eq!(low.len(), N as usize);
                    assert!(low.iter().all(|v| *v == low[0]), "Export saw a mix");
                    let high = keys.iter().zip(&values).filter(|(k, _)| **k >= N);
                    assert!(high.clone().all(|(_, v)| *v == 2), "Export saw a mix");
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            }),
        ));
    }
    run_jobs(jobs, Duration::from_secs(60));
    assert_eq!(table.table().unwrap().len(), N as usize * 2);
}

/// FindMany splits a big batch over the runtime's intra-op threads: through
/// a runtime of 2 threads it gives exactly what one thread gives, for
/// values on the heap (strings) too.
#[test]
fn find_many_on_two_threads_gives_the_single_threaded_result() {
    op_kernels::link();
    let pool = Arc::new(ThreadPool::new(2).unwrap());
    let two = Runtime::new().with_threads(pool.clone());
    // Half of the queried keys are in the table, in no particular order.
    let queries: Vec<i64> = (0..100_000).map(|i| i * 7919 % 200_000).collect();
    assert!(pool.num_blocks(queries.len(), 1) > 1, "the batch is split");
    let keys: Vec<i64> = (0..100_000).map(|k| k * 2).collect();

    let floats = SimpleHashTableHandle::<i64, f32>::new_on(&two, -1.0).unwrap();
    let values: Vec<f32> = keys.iter().map(|k| *k as f32 * 0.5).collect();
    floats.insert_many(&keys, &values).unwrap();
    let found = floats.find_many(&queries).unwrap();
    let table = floats.table().unwrap();
    assert_eq!(found, table.find_many(&queries, &-1.0));
    assert_eq!(found, table.find_many_on(&pool, &queries, &-1.0));
    let expected: Vec<f32> = queries
        .iter()
        .map(|k| if k % 2 == 0 { *k as f32 * 0.5 } else { -1.0 })
        .collect();
    assert_eq!(found, expected);

    let strings = SimpleHashTableHandle::<i64, Vec<u8>>::new_on(&two, bytes("none")).unwrap();
    let values: Vec<Vec<u8>> = keys.iter().map(|k| k.to_string().into_bytes()).collect();
    strings.insert_many(&keys, &values).unwrap();
    let found = strings.find_many(&queries).unwrap();
    assert_eq!(
        found,
        strings.table().unwrap().find_many(&queries, &bytes("none"))
    );
    let expected: Vec<Vec<u8>> = queries
        .iter()
        .map(|k| {
            if k % 2 == 0 {
                k.to_string().into_bytes()
            } else {
                bytes("none")
            }
        })
        .collect();
    assert_eq!(found, expected);
}

/// The watchdog of the thread tests: a thread that never finishes fails
/// the test after the limit instead of hanging it.
#[test]
#[should_panic(expected = "deadlock or hang: 1 of 2 threads still running after 200ms")]
fn the_watchdog_fails_a_hung_thread() {
    let (_never, wait) = mpsc::channel::<()>();
    let jobs: Vec<(String, Box<dyn FnOnce() + Send>)> = vec![
        ("quick".into(), Box::new(|| {})),
        // Blocks until this test's sender is dropped (when it fails).
        (
            "stuck".into(),
            Box::new(move || {
                let _ = wait.recv();
            }),
        ),
    ];
    run_jobs(jobs, Duration::from_millis(200));
}

/// ... and a thread that panics fails it with its name and message.
#[test]
#[should_panic(expected = "boom thread panicked: boom")]
fn the_watchdog_reports_a_panicking_thread() {
    let jobs: Vec<(String, Box<dyn FnOnce() + Send>)> =
        vec![("boom thread".into(), Box::new(|| panic!("boom")))];
    run_jobs(jobs, Duration::from_secs(60));
}

#[test]
fn a_huge_missing_key_is_quoted_at_a_bounded_length() {
    op_kernels::link();
    let strings = SimpleHashTableHandle::<Vec<u8>, f32>::new(0.0).unwrap();
    let key = vec![b'k'; 10 << 20];
    let err = strings.remove(key.clone()).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let text = err.to_string();
    assert!(text.len() < 1024, "{} bytes", text.len());
    assert_contains(
        &err,
        &[
            "Key for remove not found: \"kkk",
            &format!("…\" ({} bytes)", key.len()),
        ],
    );
}
