//! The hash table ops (`Examples>SimpleHashTable*`): the guide's tests in
//! Rust (find-insert-find, strings, every dtype pair, the table freed with
//! its last handle), errors (a missing key, the wrong dtypes, non-scalar
//! keys, mismatched lengths), the shape functions one line per case, the
//! registered kernels, and many threads on one table.

use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use op_core::resource::Resource;
use op_core::shape_inference::testing::ShapeTest;
use op_core::{Code, DType, OpCall, Registry, ResourceHandle, Runtime, Tensor};
use op_kernels::simple_hash_table::{
    SimpleHashTable, SimpleHashTableHandle, TableElement, TableKey,
};

mod common;
use common::assert_contains;

const CREATE: &str = "Examples>SimpleHashTableCreate";
const FIND: &str = "Examples>SimpleHashTableFind";
const INSERT: &str = "Examples>SimpleHashTableInsert";
const REMOVE: &str = "Examples>SimpleHashTableRemove";
const EXPORT: &str = "Examples>SimpleHashTableExport";
const IMPORT: &str = "Examples>SimpleHashTableImport";
const OPS: [&str; 6] = [CREATE, FIND, INSERT, REMOVE, EXPORT, IMPORT];

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

#[test]
fn find_insert_find_for_every_dtype_pair() {
    op_kernels::link();
    check_use_table::<i32, f64>();
    check_use_table::<i32, f32>();
    check_use_table::<i32, i32>();
    check_use_table::<i32, Vec<u8>>();
    check_use_table::<i64, f64>();
    check_use_table::<i64, f32>();
    check_use_table::<i64, i32>();
    check_use_table::<i64, i64>();
    check_use_table::<i64, Vec<u8>>();
    check_use_table::<Vec<u8>, bool>();
    check_use_table::<Vec<u8>, f64>();
    check_use_table::<Vec<u8>, f32>();
    check_use_table::<Vec<u8>, i32>();
    check_use_table::<Vec<u8>, i64>();
    check_use_table::<Vec<u8>, Vec<u8>>();
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
            "key_dtype=int32 and value_dtype=float",
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
    assert_contains(&err, &["key_dtype=int64 and value_dtype=double"]);
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
    let named = ResourceHandle::named::<SimpleHashTable<i64, f32>>("cpu", "", "missing");
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
                assert_eq!(k.device, "cpu");
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
}

/// 8 threads insert, find and remove on one table through the ops (and
/// the batch methods), each on its own keys and all on shared ones; the
/// final contents are exactly what the operations leave, and every thread
/// finishes (a deadlock fails the test instead of hanging it).
#[test]
fn many_threads_on_one_table() {
    op_kernels::link();
    const THREADS: i64 = 8;
    const KEYS: i64 = 200;
    const SHARED: i64 = 16;
    let table = SimpleHashTableHandle::<i64, i64>::new(-1).unwrap();
    let barrier = Arc::new(Barrier::new(THREADS as usize));
    let (done, finished) = mpsc::channel();
    for t in 0..THREADS {
        let (table, barrier, done) = (table.clone(), barrier.clone(), done.clone());
        std::thread::spawn(move || {
            barrier.wait();
            let base = (t + 1) * 1_000_000;
            for i in 0..KEYS {
                let key = base + i;
                table.insert(key, key * 2).unwrap();
                assert_eq!(table.find(key).unwrap(), key * 2);
                // Shared keys: any thread's value, never a torn or missing one
                // once inserted.
                table.insert(i % SHARED, t).unwrap();
                let shared = table.find(i % SHARED).unwrap();
                assert!((0..THREADS).contains(&shared), "{shared}");
                if i % 2 == 1 {
                    table.remove(key).unwrap();
                    assert_eq!(table.find(key).unwrap(), -1);
                }
            }
            let batch: Vec<i64> = (0..KEYS).map(|i| base + KEYS + i).collect();
            table.insert_many(&batch, &batch).unwrap();
            assert_eq!(table.find_many(&batch).unwrap(), batch);
            done.send(t).unwrap();
        });
    }
    drop(done);
    for _ in 0..THREADS {
        finished
            .recv_timeout(Duration::from_secs(120))
            .expect("a thread panicked or deadlocked");
    }
    let (keys, values) = table.export().unwrap();
    let mut pairs: Vec<(i64, i64)> = keys.into_iter().zip(values).collect();
    pairs.sort();
    let (shared, own) = pairs.split_at(SHARED as usize);
    for (i, (k, v)) in shared.iter().enumerate() {
        assert_eq!(*k, i as i64);
        assert!((0..THREADS).contains(v));
    }
    let mut expected = Vec::new();
    for t in 0..THREADS {
        let base = (t + 1) * 1_000_000;
        expected.extend((0..KEYS).step_by(2).map(|i| (base + i, (base + i) * 2)));
        expected.extend((0..KEYS).map(|i| (base + KEYS + i, base + KEYS + i)));
    }
    assert_eq!(own, expected);
}
