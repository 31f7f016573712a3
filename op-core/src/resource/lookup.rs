//! [`LookupInterface`]: what every lookup table is to the ops that use one
//! (TensorFlow's `LookupInterface`, `lookup_interface.h`): batch find,
//! insert, remove, export and import over tensors of keys and values, and
//! the key and value dtypes and shapes.
//!
//! A table implements it over its own typed storage; code that takes a
//! `&dyn LookupInterface` works with any table. The provided `check_*`
//! methods are TensorFlow's argument checks, with its messages, for an
//! implementation to call first.
//!
//! ```
//! use op_core::resource::lookup::LookupInterface;
//! use op_core::resource::Resource;
//! use op_core::{DType, Result, Tensor, TensorShape};
//! use std::collections::HashMap;
//! use std::sync::Mutex;
//!
//! /// The smallest table: int64 keys, float values, one lock.
//! #[derive(Default)]
//! struct Table(Mutex<HashMap<i64, f32>>);
//!
//! impl Resource for Table {
//!     fn debug_string(&self) -> String {
//!         format!("Table of {} entries", self.size())
//!     }
//! }
//!
//! impl LookupInterface for Table {
//!     fn key_dtype(&self) -> DType { DType::I64 }
//!     fn value_dtype(&self) -> DType { DType::F32 }
//!     fn value_shape(&self) -> TensorShape { TensorShape::scalar() }
//!     fn size(&self) -> usize { self.0.lock().unwrap().len() }
//!     fn find(&self, keys: &Tensor, default_value: &Tensor) -> Result<Tensor> {
//!         self.check_find_arguments(keys, default_value)?;
//!         let map = self.0.lock().unwrap();
//!         let default = default_value.as_slice::<f32>()?;
//!         let values = keys.as_slice::<i64>()?.iter().enumerate().map(|(i, k)| {
//!             map.get(k).copied().unwrap_or(default[if default.len() == 1 { 0 } else { i }])
//!         });
//!         Tensor::from_vec(keys.dims(), values.collect())
//!     }
//!     fn insert(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
//!         self.check_insert_arguments(keys, values)?;
//!         let pairs = keys.as_slice::<i64>()?.iter().zip(values.as_slice::<f32>()?);
//!         self.0.lock().unwrap().extend(pairs.map(|(k, v)| (*k, *v)));
//!         Ok(())
//!     }
//!     fn remove(&self, keys: &Tensor) -> Result<()> {
//!         self.check_remove_arguments(keys)?;
//!         let mut map = self.0.lock().unwrap();
//!         keys.as_slice::<i64>()?.iter().for_each(|k| { map.remove(k); });
//!         Ok(())
//!     }
//!     fn export(&self) -> Result<(Tensor, Tensor)> {
//!         let map = self.0.lock().unwrap();
//!         let (keys, values): (Vec<i64>, Vec<f32>) = map.iter().map(|(k, v)| (*k, *v)).unzip();
//!         Ok((Tensor::from_vec([keys.len()], keys)?, Tensor::from_vec([values.len()], values)?))
//!     }
//!     fn import(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
//!         self.check_import_arguments(keys, values)?;
//!         let pairs = keys.as_slice::<i64>()?.iter().zip(values.as_slice::<f32>()?);
//!         *self.0.lock().unwrap() = pairs.map(|(k, v)| (*k, *v)).collect();
//!         Ok(())
//!     }
//! }
//!
//! let table: &dyn LookupInterface = &Table::default();
//! table.insert(&Tensor::from_vec([2], vec![1i64, 2])?, &Tensor::from_vec([2], vec![10.0f32, 20.0])?)?;
//! let found = table.find(&Tensor::from_vec([3], vec![2i64, 3, 1])?, &Tensor::scalar(-1.0f32))?;
//! assert_eq!(found.as_slice::<f32>()?, [20.0, -1.0, 10.0]);
//! let err = table.find(&Tensor::scalar(1i32), &Tensor::scalar(0.0f32)).unwrap_err();
//! assert_eq!(err.message(), "Key must be type int64 but got int32");
//! # Ok::<(), op_core::Error>(())
//! ```

use crate::resource::Resource;
use crate::shape::TensorShape;
use crate::tensor::Tensor;
use crate::{DType, Error, Result};

/// A lookup table, as the ops that use one see it (TensorFlow's
/// `LookupInterface`).
///
/// Keys come in a tensor of any shape that ends with
/// [`key_shape`](Self::key_shape) (a scalar key shape, the usual case,
/// allows any shape): each key is one such trailing block, and the values
/// tensor has the keys' leading dimensions followed by
/// [`value_shape`](Self::value_shape). Every method is atomic (a table
/// guards its own state, as every [`Resource`] does).
pub trait LookupInterface: Resource {
    /// The dtype of the keys.
    fn key_dtype(&self) -> DType;

    /// The dtype of the values.
    fn value_dtype(&self) -> DType;

    /// The shape of one key: a scalar unless the table says otherwise.
    fn key_shape(&self) -> TensorShape {
        TensorShape::scalar()
    }

    /// The shape of one value.
    fn value_shape(&self) -> TensorShape;

    /// The number of entries.
    fn size(&self) -> usize;

    /// The value of each key, or the default: `default_value` has the
    /// shape of one value (one default for every key) or of the whole
    /// result (a default per key). TensorFlow's `Find`.
    fn find(&self, keys: &Tensor, default_value: &Tensor) -> Result<Tensor>;

    /// Sets the value of each key (a later duplicate wins). TensorFlow's
    /// `Insert`.
    fn insert(&self, keys: &Tensor, values: &Tensor) -> Result<()>;

    /// Removes each key; keys the table does not hold are ignored.
    /// TensorFlow's `Remove`.
    fn remove(&self, keys: &Tensor) -> Result<()>;

    /// Every key and its value, as two tensors whose first dimension is
    /// [`size`](Self::size), in the same (unspecified) order. TensorFlow's
    /// `ExportValues`.
    fn export(&self) -> Result<(Tensor, Tensor)>;

    /// Replaces the contents with the given keys and values. TensorFlow's
    /// `ImportValues`.
    fn import(&self, keys: &Tensor, values: &Tensor) -> Result<()>;

    /// `InvalidArgument` unless `shape` ends with the key shape
    /// (TensorFlow's `CheckKeyShape`).
    fn check_key_shape(&self, shape: &TensorShape) -> Result<()> {
        let key = self.key_shape();
        if !shape.dims().ends_with(key.dims()) {
            return Err(Error::invalid_argument(format!(
                "Input key shape {shape} must end with the table's key shape {key}"
            )));
        }
        Ok(())
    }

    /// `InvalidArgument` unless `keys` and `values` have the table's
    /// dtypes (TensorFlow's `CheckKeyAndValueTypes`).
    fn check_key_and_value_types(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
        check_dtype("Key", self.key_dtype(), keys)?;
        check_dtype("Value", self.value_dtype(), values)
    }

    /// The checks of [`insert`](Self::insert): the dtypes, the key shape,
    /// and values of the keys' leading dimensions followed by the value
    /// shape (TensorFlow's `CheckKeyAndValueTensorsForInsert`).
    fn check_insert_arguments(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
        self.check_key_and_value_types(keys, values)?;
        let keys_shape = keys.shape();
        self.check_key_shape(&keys_shape)?;
        let expected = values_shape(self, &keys_shape)?;
        if values.dims() != expected.dims() {
            return Err(Error::invalid_argument(format!(
                "Expected shape {expected} for value, got {}",
                values.shape()
            )));
        }
        Ok(())
    }

    /// The checks of [`import`](Self::import): those of an insert
    /// (TensorFlow's `CheckKeyAndValueTensorsForImport`).
    fn check_import_arguments(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
        self.check_insert_arguments(keys, values)
    }

    /// The checks of [`remove`](Self::remove): the key dtype and shape
    /// (TensorFlow's `CheckKeyTensorForRemove`).
    fn check_remove_arguments(&self, keys: &Tensor) -> Result<()> {
        check_dtype("Key", self.key_dtype(), keys)?;
        self.check_key_shape(&keys.shape())
    }

    /// The checks of [`find`](Self::find): the dtypes, the key shape, and
    /// a default of one value's shape or of the whole result's
    /// (TensorFlow's `CheckFindArguments`).
    fn check_find_arguments(&self, keys: &Tensor, default_value: &Tensor) -> Result<()> {
        self.check_key_and_value_types(keys, default_value)?;
        let keys_shape = keys.shape();
        self.check_key_shape(&keys_shape)?;
        let value = self.value_shape();
        let full = values_shape(self, &keys_shape)?;
        let given = default_value.dims();
        if given != value.dims() && given != full.dims() {
            return Err(Error::invalid_argument(format!(
                "Expected shape {value} or {full} for default value, got {}",
                default_value.shape()
            )));
        }
        Ok(())
    }
}

/// `InvalidArgument` unless `tensor` is of `dtype`: "Key must be type
/// int64 but got int32", as TensorFlow says it.
fn check_dtype(what: &str, dtype: DType, tensor: &Tensor) -> Result<()> {
    if tensor.dtype() != dtype {
        return Err(Error::invalid_argument(format!(
            "{what} must be type {dtype} but got {}",
            tensor.dtype()
        )));
    }
    Ok(())
}

/// The shape of the values of `keys`: the keys' leading dimensions (all
/// but the key shape's), then the value shape.
/// `InvalidArgument` if that shape has too many elements to hold.
fn values_shape<T: LookupInterface + ?Sized>(table: &T, keys: &TensorShape) -> Result<TensorShape> {
    let leading = keys.rank().saturating_sub(table.key_shape().rank());
    let mut dims = keys.dims()[..leading].to_vec();
    dims.extend_from_slice(table.value_shape().dims());
    TensorShape::try_new(dims)
}
