//! The kernels the framework ships: every op of TensorFlow's "Adding a New
//! Op" guide that has semantics, written with the macros as an author
//! would.
//!
//! | op | form |
//! | --- | --- |
//! | [`ZeroOut`](zero_out::ZeroOut) (int32 only) | `#[register_op]` + `#[kernel]` function |
//! | [`ZeroOutPolymorphic`](zero_out::ZeroOutPolymorphic) (float, double, int32; default int32) | generic `#[kernel]` function |
//! | [`ZeroOutPreserveIndex`](zero_out::ZeroOutPreserveIndex) (`preserve_index` checked once) | `#[kernel]` on an impl with `new` and `compute` |
//! | [`ZeroOutVector`](zero_out::ZeroOutVector) (1-D only) | `#[kernel]` function with a check |
//! | [`Example`](example::Example) (numbertype, doubles its input) | seed 003's functor pattern: one kernel body over a [`Device`](device::Device), a CPU and a GPU functor ([`example`]) |
//! | [`StringToNumber`](string_to_number::StringToNumber) | kernel generic over the output type attr `out_type` |
//! | the list ops ([`list`]) | list inputs and outputs, `N * T` and `list(type)` |
//! | [`MultipleInsAndOuts`](multiple_ins_and_outs::MultipleInsAndOuts) | `#[op]`: op and kernel from a function signature |
//! | the hash table ops ([`hash_table`]), `Examples>SimpleHashTable*` | a [`Resource`](op_core::resource::Resource) behind owning handles; generic kernels over explicit `(key_dtype, value_dtype)` pairs |
//! | [`MultiplexDense`](multiplex::MultiplexDense) (`Examples>MultiplexDense`, elementwise `cond ? a : b`) | one generic `#[kernel]` over every dtype but `resource`; the library's `merge_inputs` shape function |
//! | [`Sum`](reduction::Sum), [`Mean`](reduction::Mean), [`Max`](reduction::Max), [`Prod`](reduction::Prod), [`Cumsum`](reduction::Cumsum), [`Cumprod`](reduction::Cumprod) ([`reduction`]) | one generic engine over the element type and the reducer; the shape function reads constant axes |
//! | [`MatMul`](matmul::MatMul) ([`matmul`]) | ndarray's GEMM over (transposed) views of the inputs |
//! | the queue ops ([`queue`]): `FIFOQueueV2`, `QueueEnqueueV2`, `QueueDequeueV2`, `QueueSizeV2`, `QueueCloseV2` | TensorFlow's FIFO queue: a [`QueueInterface`](op_core::resource::queue::QueueInterface) resource; kernels that wait (`may_block`), with deadlines and cancellation; a typed [`FifoQueueHandle`](queue::FifoQueueHandle) API |
//! | the variable ops ([`variable`]): `VarHandleOp`, `ReadVariableOp`, `AssignVariableOp`, `VarIsInitializedOp`, `DestroyResourceOp` | TensorFlow's resource variables: a [`Var`](variable::Var) resource reached by named or owning handles; a typed [`Variable`](variable::Variable) API over the ops |
//! | the graph leaves ([`constant`]): `Const`, `Placeholder`, `PlaceholderWithDefault` | TensorFlow's; `Const` turns its `value` attr into a tensor once, when its kernel is created |
//! | the identities ([`identity`]): `Identity`, `IdentityN`, `NoOp`, `StopGradient` | TensorFlow's; outputs share their inputs' buffers (no copy) |
//! | the array ops ([`array`](mod@array)): `Reshape`, `Shape`, `Size`, `Rank`, `Fill`, `ZerosLike`, `OnesLike`, `ExpandDims`, `Squeeze`, `Transpose`, `ConcatV2`, `Pack`, `BroadcastTo`, `BroadcastGradientArgs`, `Tile`, and for the gradients `Slice`, `Pad`, `Unpack`, `ConcatOffset`, `InvertPermutation`, `ListDiff`, `DynamicStitch` | TensorFlow's shape-manipulation ops: generic copies over strided views and rows, zero-copy reshapes; shape functions that read constant inputs |
//! | the math ops ([`math`]): `Neg`, `Square`, `Sqrt`, `Rsqrt`, `Exp`, `Log`, `Sin`, `Cos`, `Tanh`, `Sigmoid`, `Relu`, `Reciprocal`, `Conj`, `AddV2`, `Sub`, `Mul`, `RealDiv`, `Maximum`, `Minimum`, `Pow`, `SquaredDifference`, `FloorDiv`, `FloorMod`, `DivNoNan`, `Greater`, `Less`, `GreaterEqual`, `LessEqual`, `Equal`, `Select`, `SelectV2`, `AddN`, `Cast`, `Range`, and for the gradients `SqrtGrad`, `RsqrtGrad`, `TanhGrad`, `SigmoidGrad`, `ReciprocalGrad`, `ReluGrad` | TensorFlow's elementwise ops: one element function each through the `KernelContext` helpers, NumPy broadcasting, in place when an input is handed over |
//!
//! Every differentiable op has a gradient with TensorFlow's formula, in
//! its family's `grad.rs` (`#[gradient]`, one generic function for a
//! tape's tensors and a graph's outputs), and the ops TensorFlow marks not
//! differentiable are marked so there too.
//!
//! Every op has a shape function (by library name, `shape = "unchanged"`,
//! where one fits; [`zero_out::vector_shape`] and
//! [`multiple_ins_and_outs::multiple_ins_and_outs_shape`] are custom), so
//! [`Registry::infer_shapes`](op_core::Registry::infer_shapes) gives their
//! output shapes without running a kernel, and in debug builds the runtime
//! checks every kernel's outputs against it.
//!
//! # Layout
//!
//! One module (a folder) per op family, each divided the same way, one
//! concept per file: `ops.rs` declares the ops (`#[register_op]`, `#[op]`)
//! and their shape functions, `cpu.rs` holds the CPU kernels, `math.rs` the
//! plain arithmetic over elements and slices that every device's kernels
//! share, `resource.rs` the resource type the ops' handles reach, and
//! `client.rs` the typed API over the ops. A family has only the files it
//! needs; its `mod.rs` says which, and re-exports the public items, so they
//! are named by family whichever file holds them
//! (`op_kernels::hash_table::SimpleHashTableHandle`). The hash table's
//! module was `simple_hash_table`; [`simple_hash_table`] still names it.
//!
//! # Linking
//!
//! A program sees these ops only if it names this crate (see
//! [`op_core::registry`]): call [`link`] once, or write
//! `use op_kernels as _;`.

pub mod array;
pub mod constant;
pub mod device;
pub mod example;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod hash_table;
pub mod identity;
pub mod list;
pub mod lookup;
pub mod math;
pub mod matmul;
pub mod multiple_ins_and_outs;
pub mod multiplex;
pub mod queue;
pub mod reduction;
pub mod string_to_number;
pub mod training;
pub mod variable;
pub mod zero_out;

/// The hash table ops under their module's former name: the same items as
/// [`hash_table`].
pub use hash_table as simple_hash_table;

/// Makes sure this crate, and so its ops and kernels (and, with the `gpu`
/// feature, the CUDA backend), is linked into the program. Call it once
/// (e.g. first thing in `main` or in a test) if nothing else in your
/// program names this crate.
///
/// ```standalone_crate
/// op_kernels::link();
/// assert!(op_core::Registry::global().get("ZeroOut").is_some());
/// ```
pub fn link() {}
