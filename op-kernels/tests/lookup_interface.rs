//! `SimpleHashTable` through TensorFlow's lookup-table interface
//! (`op_core::resource::lookup::LookupInterface`): batch find with one
//! default or one per key, insert, remove (absent keys ignored), export and
//! import, the argument checks with TensorFlow's messages, the table the
//! ops see, and the trait against a model map.

use std::collections::HashMap;
use std::sync::Arc;

use op_core::resource::lookup::LookupInterface;
use op_core::{Code, DType, ResourceHandle, Runtime, Tensor};
use op_kernels::hash_table::{SimpleHashTable, SimpleHashTableHandle};
use proptest::prelude::*;

fn i64s(dims: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_vec(dims, values.to_vec()).unwrap()
}

fn f32s(dims: &[usize], values: &[f32]) -> Tensor {
    Tensor::from_vec(dims, values.to_vec()).unwrap()
}

#[test]
fn the_table_is_a_lookup_table() {
    let table: Arc<dyn LookupInterface> = Arc::new(SimpleHashTable::<i64, f32>::new());
    assert_eq!(table.key_dtype(), DType::I64);
    assert_eq!(table.value_dtype(), DType::F32);
    assert!(table.key_shape().is_scalar());
    assert!(table.value_shape().is_scalar());
    assert_eq!(table.size(), 0);

    table
        .insert(&i64s(&[3], &[1, 2, 3]), &f32s(&[3], &[10.0, 20.0, 30.0]))
        .unwrap();
    assert_eq!(table.size(), 3);

    // One default for every key; the result has the keys' shape.
    let keys = i64s(&[2, 2], &[3, 9, 1, 2]);
    let found = table.find(&keys, &Tensor::scalar(-1.0f32)).unwrap();
    assert_eq!(found.dims(), [2, 2]);
    assert_eq!(found.as_slice::<f32>().unwrap(), [30.0, -1.0, 10.0, 20.0]);
    // One default per key.
    let defaults = f32s(&[2, 2], &[-1.0, -2.0, -3.0, -4.0]);
    let found = table.find(&keys, &defaults).unwrap();
    assert_eq!(found.as_slice::<f32>().unwrap(), [30.0, -2.0, 10.0, 20.0]);
    // A scalar key.
    let found = table
        .find(&Tensor::scalar(2i64), &Tensor::scalar(0.0f32))
        .unwrap();
    assert_eq!(found.scalar_value::<f32>().unwrap(), 20.0);

    // Absent keys are ignored by remove, as in TensorFlow's tables.
    table.remove(&i64s(&[3], &[2, 7, 2])).unwrap();
    assert_eq!(table.size(), 2);
    let found = table
        .find(&i64s(&[1], &[2]), &Tensor::scalar(0.0f32))
        .unwrap();
    assert_eq!(found.as_slice::<f32>().unwrap(), [0.0]);

    // Export, then import into another table.
    let (keys, values) = table.export().unwrap();
    assert_eq!(
        (keys.dims(), values.dims()),
        ([2].as_slice(), [2].as_slice())
    );
    let copy: &dyn LookupInterface = &SimpleHashTable::<i64, f32>::new();
    copy.insert(&i64s(&[1], &[100]), &f32s(&[1], &[1.0]))
        .unwrap();
    copy.import(&keys, &values).unwrap();
    assert_eq!(copy.size(), 2, "import replaces the contents");
    let found = copy
        .find(&i64s(&[3], &[1, 3, 100]), &Tensor::scalar(0.0f32))
        .unwrap();
    assert_eq!(found.as_slice::<f32>().unwrap(), [10.0, 30.0, 0.0]);
}

#[test]
fn string_keys_and_values() {
    let table: &dyn LookupInterface = &SimpleHashTable::<Vec<u8>, Vec<u8>>::new();
    assert_eq!(table.key_dtype(), DType::String);
    let keys = Tensor::from_vec([2], vec![b"a".to_vec(), b"b".to_vec()]).unwrap();
    let values = Tensor::from_vec([2], vec![b"x".to_vec(), b"y".to_vec()]).unwrap();
    table.insert(&keys, &values).unwrap();
    let asked = Tensor::from_vec([3], vec![b"b".to_vec(), b"c".to_vec(), b"a".to_vec()]).unwrap();
    let found = table.find(&asked, &Tensor::scalar(b"?".to_vec())).unwrap();
    assert_eq!(
        found.as_slice::<Vec<u8>>().unwrap(),
        [b"y".to_vec(), b"?".to_vec(), b"x".to_vec()]
    );
}

#[test]
fn bad_arguments_are_invalid_argument_with_tensorflows_messages() {
    let table: &dyn LookupInterface = &SimpleHashTable::<i64, f32>::new();
    let cases = [
        (
            table
                .find(&Tensor::scalar(1i32), &Tensor::scalar(0.0f32))
                .map(drop),
            "Key must be type int64 but got int32",
        ),
        (
            table
                .find(&Tensor::scalar(1i64), &Tensor::scalar(0.0f64))
                .map(drop),
            "Value must be type float but got double",
        ),
        (
            table
                .find(&i64s(&[2], &[1, 2]), &f32s(&[3], &[0.0; 3]))
                .map(drop),
            "Expected shape [] or [2] for default value, got [3]",
        ),
        (
            table.insert(&i64s(&[2], &[1, 2]), &f32s(&[3], &[0.0; 3])),
            "Expected shape [2] for value, got [3]",
        ),
        (
            table.insert(&i64s(&[2], &[1, 2]), &f32s(&[1, 2], &[0.0; 2])),
            "Expected shape [2] for value, got [1,2]",
        ),
        (
            table.import(&i64s(&[2], &[1, 2]), &f32s(&[1], &[0.0])),
            "Expected shape [2] for value, got [1]",
        ),
        (
            table.remove(&Tensor::scalar(1.0f32)),
            "Key must be type int64 but got float",
        ),
    ];
    for (result, message) in cases {
        let err = result.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err}");
        assert_eq!(err.message(), message);
    }
    assert_eq!(table.size(), 0, "nothing was inserted");
}

#[test]
fn the_trait_and_the_ops_see_one_table() {
    let runtime = Runtime::global();
    let handle = SimpleHashTableHandle::<i64, f32>::new(0.0).unwrap();
    handle.insert(5, 2.5).unwrap();
    let resource: ResourceHandle = handle.handle().scalar_value().unwrap();
    let table = runtime
        .resource_manager()
        .resource::<SimpleHashTable<i64, f32>>(&resource)
        .unwrap();
    let table: &dyn LookupInterface = &*table;
    let found = table
        .find(&Tensor::scalar(5i64), &Tensor::scalar(0.0f32))
        .unwrap();
    assert_eq!(found.scalar_value::<f32>().unwrap(), 2.5);
    table
        .insert(&i64s(&[1], &[6]), &f32s(&[1], &[3.5]))
        .unwrap();
    assert_eq!(
        handle.find(6).unwrap(),
        3.5,
        "the op sees the trait's insert"
    );
}

/// A change to a table: insert keys with values, or remove keys.
#[derive(Clone, Debug)]
enum Change {
    Insert(Vec<(i64, f32)>),
    Remove(Vec<i64>),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        prop::collection::vec((0i64..16, -10.0f32..10.0), 0..6).prop_map(Change::Insert),
        prop::collection::vec(0i64..16, 0..6).prop_map(Change::Remove),
    ]
}

proptest! {
    #[test]
    fn the_trait_agrees_with_a_model_map(changes in prop::collection::vec(change(), 0..20)) {
        let table: &dyn LookupInterface = &SimpleHashTable::<i64, f32>::new();
        let mut model = HashMap::new();
        for change in changes {
            match change {
                Change::Insert(pairs) => {
                    let (keys, values): (Vec<i64>, Vec<f32>) = pairs.iter().copied().unzip();
                    table.insert(&i64s(&[keys.len()], &keys), &f32s(&[values.len()], &values)).unwrap();
                    model.extend(pairs);
                }
                Change::Remove(keys) => {
                    table.remove(&i64s(&[keys.len()], &keys)).unwrap();
                    for k in keys {
                        model.remove(&k);
                    }
                }
            }
            prop_assert_eq!(table.size(), model.len());
        }
        let all: Vec<i64> = (0..16).collect();
        let found = table.find(&i64s(&[16], &all), &Tensor::scalar(f32::NAN)).unwrap();
        for (k, v) in all.iter().zip(found.as_slice::<f32>().unwrap()) {
            match model.get(k) {
                Some(expected) => prop_assert_eq!(v, expected),
                None => prop_assert!(v.is_nan()),
            }
        }
        let (keys, values) = table.export().unwrap();
        let exported: HashMap<i64, f32> = keys
            .as_slice::<i64>()
            .unwrap()
            .iter()
            .copied()
            .zip(values.as_slice::<f32>().unwrap().iter().copied())
            .collect();
        prop_assert_eq!(exported, model);
    }
}
