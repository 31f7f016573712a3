//! TensorFlow's generic lookup table ops (`MutableHashTableV2`,
//! `LookupTable{Find,Insert,Remove,Size,Export,Import}V2`): through any
//! resource that is a lookup table, with TensorFlow's argument errors;
//! which table a call gets (a new one per eager call, one per shared name,
//! one per graph node); and a table of another crate's type reached by the
//! same ops.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use op_core::resource::Resource;
use op_core::resource::lookup::LookupInterface;
use op_core::{Code, DType, OpCall, ResourceHandle, Runtime, Tensor, TensorShape};

mod common;
use common::assert_contains;

fn create(runtime: &Runtime, key: DType, value: DType, shared_name: &str) -> Tensor {
    OpCall::new("MutableHashTableV2")
        .attr("key_dtype", key)
        .attr("value_dtype", value)
        .attr("shared_name", shared_name)
        .run_on(runtime)
        .unwrap()
        .remove(0)
}

fn i64s(values: &[i64]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

fn f32s(values: &[f32]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

fn insert(runtime: &Runtime, table: &Tensor, keys: Tensor, values: Tensor) -> op_core::Result<()> {
    OpCall::new("LookupTableInsertV2")
        .input(table)
        .input(keys)
        .input(values)
        .run_on(runtime)
        .map(drop)
}

fn find(
    runtime: &Runtime,
    table: &Tensor,
    keys: Tensor,
    default: Tensor,
) -> op_core::Result<Tensor> {
    OpCall::new("LookupTableFindV2")
        .input(table)
        .input(keys)
        .input(default)
        .run_on(runtime)
        .map(|mut out| out.remove(0))
}

fn size(runtime: &Runtime, table: &Tensor) -> i64 {
    OpCall::new("LookupTableSizeV2")
        .input(table)
        .run_on(runtime)
        .unwrap()[0]
        .scalar_value()
        .unwrap()
}

#[test]
fn find_insert_remove_size_export_and_import_work_on_a_mutable_hash_table() {
    op_kernels::link();
    let runtime = Runtime::new();
    let table = create(&runtime, DType::I64, DType::F32, "");
    insert(&runtime, &table, i64s(&[1, 2, 3]), f32s(&[0.5, 1.5, 2.5])).unwrap();
    assert_eq!(size(&runtime, &table), 3);
    let keys = Tensor::from_vec([2, 2], vec![3i64, 9, 1, 2]).unwrap();
    let found = find(&runtime, &table, keys, Tensor::scalar(-1.0f32)).unwrap();
    assert_eq!(found.dims(), [2, 2]);
    assert_eq!(found.as_slice::<f32>().unwrap(), [2.5, -1.0, 0.5, 1.5]);

    // Removing ignores absent keys, as TensorFlow's tables do.
    OpCall::new("LookupTableRemoveV2")
        .input(&table)
        .input(i64s(&[2, 42]))
        .run_on(&runtime)
        .unwrap();
    assert_eq!(size(&runtime, &table), 2);

    let exported = OpCall::new("LookupTableExportV2")
        .input(&table)
        .attr("Tkeys", DType::I64)
        .attr("Tvalues", DType::F32)
        .run_on(&runtime)
        .unwrap();
    let mut pairs: Vec<(i64, f32)> = exported[0]
        .as_slice::<i64>()
        .unwrap()
        .iter()
        .copied()
        .zip(exported[1].as_slice::<f32>().unwrap().iter().copied())
        .collect();
    pairs.sort_by_key(|p| p.0);
    assert_eq!(pairs, [(1, 0.5), (3, 2.5)]);

    OpCall::new("LookupTableImportV2")
        .input(&table)
        .input(i64s(&[7]))
        .input(f32s(&[7.5]))
        .run_on(&runtime)
        .unwrap();
    assert_eq!(size(&runtime, &table), 1);
    let found = find(&runtime, &table, i64s(&[7, 1]), Tensor::scalar(0.0f32)).unwrap();
    assert_eq!(found.as_slice::<f32>().unwrap(), [7.5, 0.0]);
}

#[test]
fn wrong_dtypes_and_handles_are_tensorflows_errors_naming_the_node() {
    op_kernels::link();
    let runtime = Runtime::new();
    let table = create(&runtime, DType::I64, DType::F32, "");
    let err = insert(
        &runtime,
        &table,
        Tensor::from_vec([1], vec![1i32]).unwrap(),
        f32s(&[1.0]),
    )
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "LookupTableInsertV2",
            "Key must be type int64 but got int32",
        ],
    );
    let err = find(&runtime, &table, i64s(&[1]), Tensor::scalar(1.0f64)).unwrap_err();
    assert_contains(&err, &["LookupTableFindV2", "type float but got double"]);

    // A handle to a resource that is not a table.
    let queue = OpCall::new("FIFOQueueV2")
        .attr("component_types", vec![DType::I32])
        .run_on(&runtime)
        .unwrap()
        .remove(0);
    let err = find(&runtime, &queue, i64s(&[1]), Tensor::scalar(0.0f32)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["input 0 (table_handle)", "which is not a lookup table"],
    );
}

#[test]
fn each_eager_call_makes_a_table_and_a_shared_name_shares_one() {
    op_kernels::link();
    let runtime = Runtime::new();
    let (a, b) = (
        create(&runtime, DType::I64, DType::F32, ""),
        create(&runtime, DType::I64, DType::F32, ""),
    );
    insert(&runtime, &a, i64s(&[1]), f32s(&[1.0])).unwrap();
    assert_eq!((size(&runtime, &a), size(&runtime, &b)), (1, 0));

    let (c, d) = (
        create(&runtime, DType::I64, DType::F32, "shared_table"),
        create(&runtime, DType::I64, DType::F32, "shared_table"),
    );
    insert(&runtime, &c, i64s(&[1, 2]), f32s(&[1.0, 2.0])).unwrap();
    assert_eq!(size(&runtime, &d), 2);
    let handle: ResourceHandle = d.scalar_value().unwrap();
    assert_eq!(handle.name, "shared_table");
}

/// A table of this test's own type: the generic ops reach it through its
/// `LookupInterface` as they reach the shipped one.
#[derive(Default)]
struct StringLengths(Mutex<HashMap<Vec<u8>, i64>>);

impl Resource for StringLengths {
    fn debug_string(&self) -> String {
        "StringLengths".into()
    }

    fn as_lookup(&self) -> Option<&dyn LookupInterface> {
        Some(self)
    }
}

impl LookupInterface for StringLengths {
    fn key_dtype(&self) -> DType {
        DType::String
    }
    fn value_dtype(&self) -> DType {
        DType::I64
    }
    fn value_shape(&self) -> TensorShape {
        TensorShape::scalar()
    }
    fn size(&self) -> usize {
        self.0.lock().unwrap().len()
    }
    fn find(&self, keys: &Tensor, default_value: &Tensor) -> op_core::Result<Tensor> {
        self.check_find_arguments(keys, default_value)?;
        let map = self.0.lock().unwrap();
        let default: i64 = default_value.scalar_value()?;
        let values = keys
            .as_slice::<Vec<u8>>()?
            .iter()
            .map(|k| *map.get(k).unwrap_or(&default));
        Tensor::from_vec(keys.dims(), values.collect())
    }
    fn insert(&self, keys: &Tensor, values: &Tensor) -> op_core::Result<()> {
        self.check_insert_arguments(keys, values)?;
        let mut map = self.0.lock().unwrap();
        for (k, v) in keys
            .as_slice::<Vec<u8>>()?
            .iter()
            .zip(values.as_slice::<i64>()?)
        {
            map.insert(k.clone(), *v);
        }
        Ok(())
    }
    fn remove(&self, keys: &Tensor) -> op_core::Result<()> {
        self.check_remove_arguments(keys)?;
        let mut map = self.0.lock().unwrap();
        for k in keys.as_slice::<Vec<u8>>()? {
            map.remove(k);
        }
        Ok(())
    }
    fn export(&self) -> op_core::Result<(Tensor, Tensor)> {
        let map = self.0.lock().unwrap();
        let (keys, values): (Vec<Vec<u8>>, Vec<i64>) =
            map.iter().map(|(k, v)| (k.clone(), *v)).unzip();
        Ok((
            Tensor::from_vec([keys.len()], keys)?,
            Tensor::from_vec([values.len()], values)?,
        ))
    }
    fn import(&self, keys: &Tensor, values: &Tensor) -> op_core::Result<()> {
        self.check_import_arguments(keys, values)?;
        self.0.lock().unwrap().clear();
        self.insert(keys, values)
    }
}

#[test]
fn the_ops_work_on_a_table_of_another_type() {
    op_kernels::link();
    let runtime = Runtime::new();
    let handle = ResourceHandle::owning(op_core::Device::CPU, Arc::new(StringLengths::default()));
    let table = Tensor::scalar(handle);
    let keys = Tensor::strings([2], [&b"ab"[..], b"abc"]).unwrap();
    insert(&runtime, &table, keys, i64s(&[2, 3])).unwrap();
    let probe = Tensor::strings([2], [&b"abc"[..], b"x"]).unwrap();
    let found = find(&runtime, &table, probe, Tensor::scalar(-1i64)).unwrap();
    assert_eq!(found.as_slice::<i64>().unwrap(), [3, -1]);
    assert_eq!(size(&runtime, &table), 2);
}
