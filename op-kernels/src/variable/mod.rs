//! Variables: TensorFlow's resource variables (`tf.Variable`), a tensor
//! held in a [`Resource`](op_core::resource::Resource) and reached through ops that pass its handle.
//!
//! | op | what it does | shape function |
//! | --- | --- | --- |
//! | `VarHandleOp` | a handle to a variable: named (`shared_name`) or a new anonymous one | the library's `scalar` |
//! | `ReadVariableOp` | the variable's value | [`read_variable_shape`]: unknown |
//! | `AssignVariableOp` | replaces the value (creates a named variable on first assign) | [`scalar_handle`] |
//! | `VarIsInitializedOp` | whether the variable exists and has a value | [`scalar_handle_scalar_output`] |
//! | `DestroyResourceOp` | deletes the named resource a handle refers to (any type) | [`scalar_handle`] |
//!
//! The ops have TensorFlow's names, signatures and defaults. Of
//! `VarHandleOp`'s attrs, the kernel ignores `debug_name` (a name for
//! TensorFlow's debugging output) and `allowed_devices` (other devices a
//! variable may live on; there is one here).
//! `VarHandleOp`, `ReadVariableOp` and `AssignVariableOp` have a kernel for
//! each dtype a variable can hold: `realnumbertype`, `complex64`,
//! `complex128`, `bool`, `string` and `quantizedtype`, all from one generic
//! function per op.
//!
//! # Named and anonymous variables
//!
//! - **Named** (`shared_name` not empty): `VarHandleOp` outputs a handle
//!   naming `container`/`shared_name` in the runtime's
//!   [`ResourceMgr`](op_core::resource::ResourceMgr) (TensorFlow's
//!   `ContainerInfo` rules: an empty container is the manager's default,
//!   `localhost`). It does not create the variable: the first
//!   `AssignVariableOp` does ([`lookup_or_create`](op_core::resource::ResourceMgr::lookup_or_create)),
//!   with the dtype of the value it assigns. Every handle with that name
//!   reaches the same variable, which lives in the manager until
//!   `DestroyResourceOp` removes it.
//! - **Anonymous** (`shared_name` empty, the default): each run of
//!   `VarHandleOp` makes a new, uninitialized variable of the `dtype` attr
//!   and outputs an *owning* handle to it, as TensorFlow's eager mode does.
//!   The variable lives exactly as long as some copy of that handle does.
//!   (TensorFlow's graph-mode alternative, the node's name as the shared
//!   name, would make every unnamed `VarHandleOp` call here share one
//!   variable, since calls of one op share a node name.)
//!
//! `DestroyResourceOp` of an owning handle succeeds and does nothing,
//! whatever `ignore_lookup_error` says, as TensorFlow's `DeleteResource`
//! does for ref-counting handles (an anonymous `VarHandleOp` variable,
//! destroyed with `ignore_lookup_error=false` in TensorFlow 2.21, still
//! reads): an anonymous variable is in no manager, other copies of the
//! handle may still use it, and it is freed when the last copy is dropped.
//!
//! Reads and assigns take the variable's lock once each: a read sees one
//! whole assigned value, never a mix of two. A read shares the value's
//! buffer (no copy); writing to the tensor it returned copies it first
//! (copy-on-write), so the variable never changes behind a reader's back.
//!
//! # The typed API
//!
//! [`Variable`] is the Rust counterpart of `tf.Variable`; each method runs
//! the ops above:
//!
//! ```
//! use op_core::Tensor;
//! use op_kernels::variable::Variable;
//!
//! let v = Variable::new(Tensor::from_vec([3], vec![1i64, 2, 3])?)?;
//! assert_eq!(v.read()?.as_slice::<i64>()?, [1, 2, 3]);
//! v.assign(Tensor::from_vec([3], vec![4i64, 5, 6])?)?;
//! assert_eq!(v.read()?.as_slice::<i64>()?, [4, 5, 6]);
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! # The files
//!
//! - `resource.rs`: the resource, [`Var`], and [`VarGuard`], its value
//!   locked for an update in place (the training ops).
//! - `ops.rs`: the five ops and their shape functions.
//! - `cpu.rs`: the CPU kernels, one generic function per op for the dtyped
//!   ones.
//! - `gpu.rs` (feature `gpu`): the same functions registered for the GPU
//!   (the plain real dtypes): a value a GPU program assigns stays in GPU
//!   memory.
//! - `client.rs`: the typed API, [`Variable`] (with its checkpoint support).
//! - `grad.rs`: `ReadVariableOp`'s gradient, which reaches the variable's
//!   handle; `VarIsInitializedOp` is not differentiable.
//! - `opcheck.rs`: how opcheck (`op_core::testing`) draws variables for the
//!   ops' contract tests.

mod client;
mod cpu;
#[cfg(feature = "gpu")]
mod gpu;
mod grad;
mod opcheck;
mod ops;
mod resource;

pub use client::Variable;
pub use ops::*;
pub(crate) use resource::tensor_bytes;
pub use resource::{Var, VarGuard};
