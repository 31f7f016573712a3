//! Programs of ops: graphs that are built once, checked while they are
//! built, run many times, saved, and exchanged with TensorFlow.
//!
//! Why a crate of its own: a program is a concept the eager runtime does not
//! need (op-core runs one op at a time), and exchanging programs with
//! TensorFlow brings in protobuf (`prost`), which neither op-core nor a
//! deployment runtime should pull in. The split follows tract's model /
//! plan / state: a graph is plain data, a plan is computed from it once and
//! shared, and a run's values live in a per-run state.
//!
//! # Building, checked as you go
//!
//! The typed wrappers that `#[register_op]` generates run eagerly on
//! tensors and, given a [`GraphBuilder`], add nodes instead: one wrapper,
//! both modes. Every node is checked when added: its attrs inferred and
//! validated as in an eager call, its output shapes inferred from its
//! inputs' (partially known) shapes, so a mistake is an error naming the
//! node, its inputs and their shapes, before anything runs.
//!
//! ```standalone_crate
//! use op_core::{DType, Tensor};
//! use op_graph::{GraphBuilder, Session};
//! use op_kernels::example::Example;
//! use op_kernels::identity::IdentityN;
//! # op_kernels::link();
//!
//! let b = GraphBuilder::new();
//! let x = b.placeholder("x", DType::F32, "[?,3]")?;          // a batch of 3-vectors
//! let scale = b.constant(Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0])?)?;
//! let (twice, scaled) = {
//!     let _layer = b.name_scope("layer1");
//!     let twice = Example::call_with(x).run_on(&b)?;          // node layer1/Example
//!     let both = IdentityN::call_with([twice, scale]).run_on(&b)?;
//!     (twice, both[1])
//! };
//! let graph = b.into_graph();
//! assert_eq!(graph.tensor_name(twice).to_string(), "layer1/Example");
//! assert_eq!(graph.output_shape(twice)?.to_string(), "[?,3]");  // inferred
//! assert_eq!(graph.tensor_name(scaled).to_string(), "layer1/IdentityN:1");
//!
//! // Run: feeds, fetches (`node` or `node:k`) and targets. Only what the
//! // fetches need runs; the plan is made once and kept.
//! let session = Session::new(graph)?;
//! let batch = Tensor::from_vec([2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let out = session.runner().feed("x", batch).fetch("layer1/Example").run()?;
//! assert_eq!(out[0].as_slice::<f32>()?, [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
//! # Ok::<(), op_core::Error>(())
//! ```
//!
//! # Adding nodes by name (for importers)
//!
//! [`Graph::add`] takes a [`NewNode`]: an op by name, inputs (per arg, or
//! flat as a `NodeDef` lists them), control inputs, attrs as written
//! (defaults filled, `_`-prefixed attrs the op does not declare kept for
//! export), an exact name and a device. It makes every check the builder
//! makes. Nodes must be added after their inputs, so a graph holds no
//! cycle, and [`Graph::nodes`] is a topological order.
//!
//! # Running, fast
//!
//! A [`Plan`] is pruned to what its fetches and targets need, ordered by
//! data and control edges, each kernel prepared once; each value is freed
//! after its last consumer, and handed over by move to that consumer, so
//! kernels that reuse a buffer they alone hold run chains in place.
//! Independent branches run in parallel on the session's inter-op pool.
//! Per node and run, nothing is looked up, hashed, locked or allocated.
//!
//! # Modules
//!
//! - [`graph`]: the model ([`Graph`], [`Node`], ids) and the builder;
//! - `plan/`: [`Plan`], from a graph: pruning, order, value lifetimes;
//! - `run/`: running a plan, on one thread or on the inter-op pool;
//! - `session.rs`: [`Session`], a graph with a runtime, its kernels and
//!   plans;
//! - [`graphdef`]: TensorFlow's `GraphDef`, read and written;
//! - [`tflite`]: graphs written as TensorFlow Lite models (`.tflite`).

pub mod graph;
pub mod graphdef;
pub mod onnx;
mod plan;
mod run;
pub mod saved_model;
mod session;
pub mod tflite;

pub use graph::KEPT_CONSTANT_ELEMENTS;
pub use graph::{
    ControlScope, DeviceScope, Graph, GraphBuilder, GraphId, IntoPartialShape, NameScope, NewNode,
    Node, NodeId, Output, OutputInfo, TensorName, is_valid_node_name,
};
pub use plan::Plan;
pub use session::{NodeRef, OutputRef, PlanRequest, Runner, Session, SessionBuilder};
