//! TensorFlow's generic lookup tables (`tf.lookup.experimental.MutableHashTable`):
//! `MutableHashTableV2` makes a table, and the `LookupTable*V2` ops work on
//! any resource that is a lookup table, through its
//! [`LookupInterface`](op_core::resource::lookup::LookupInterface)
//! ([`Resource::as_lookup`](op_core::resource::Resource::as_lookup)): this
//! crate's [`SimpleHashTable`](crate::hash_table::SimpleHashTable), or a
//! table of another crate that implements the interface.
//!
//! | op | what it does | shape function |
//! | --- | --- | --- |
//! | `MutableHashTableV2` | a handle to a hash table: shared by name, one per graph node, or a new one per eager call | the library's `scalar` |
//! | `LookupTableFindV2` | the value of each key of a tensor of keys, or the default (one, or one per key) | [`find_shape`]: unknown |
//! | `LookupTableInsertV2` | sets the values of a tensor of keys | [`scalar_handle`](crate::variable::scalar_handle) |
//! | `LookupTableRemoveV2` | removes keys (ignoring absent ones) | [`scalar_handle`](crate::variable::scalar_handle) |
//! | `LookupTableSizeV2` | the number of entries | [`scalar_handle_scalar_output`](crate::variable::scalar_handle_scalar_output) |
//! | `LookupTableExportV2` | every key and value, as two tensors | [`export_shape`] |
//! | `LookupTableImportV2` | replaces the contents | [`scalar_handle`](crate::variable::scalar_handle) |
//!
//! The ops have TensorFlow's names, OpDefs and argument checks (a key of
//! another dtype: "Key must be type int64 but got int32"). A
//! `MutableHashTableV2` has a kernel for each of the hash table guide's 15
//! (key, value) dtype pairs. The table is one per graph node (so it keeps
//! its entries across a session's runs), and it can be saved: a saved model
//! of a graph with one holds its entries (`op_graph::saved_model`).
//!
//! ```
//! use op_core::{DType, OpCall, Tensor};
//! op_kernels::link();
//!
//! let table = OpCall::new("MutableHashTableV2")
//!     .attr("key_dtype", DType::I64)
//!     .attr("value_dtype", DType::F32)
//!     .run()?
//!     .remove(0);
//! OpCall::new("LookupTableInsertV2")
//!     .input(&table)
//!     .input(Tensor::from_vec([2], vec![1i64, 2])?)
//!     .input(Tensor::from_vec([2], vec![0.5f32, 1.5])?)
//!     .run()?;
//! let found = OpCall::new("LookupTableFindV2")
//!     .input(&table)
//!     .input(Tensor::from_vec([3], vec![2i64, 3, 1])?)
//!     .input(Tensor::scalar(-1.0f32))
//!     .run()?;
//! assert_eq!(found[0].as_slice::<f32>()?, [1.5, -1.0, 0.5]);
//! # Ok::<(), op_core::Error>(())
//! ```

mod cpu;
mod opcheck;
mod ops;

pub use ops::*;
