//! Programs of ops: graphs that are built once, checked while they are
//! built, run many times, saved, and exchanged with TensorFlow.
//!
//! Why a crate of its own: a program is a concept the eager runtime does not
//! need (op-core runs one op at a time), and exchanging programs with
//! TensorFlow brings in protobuf (`prost`), which neither op-core nor a
//! deployment runtime should pull in. The split follows tract's model /
//! plan / state: a graph is plain data, a plan is computed from it once and
//! shared, and a run's values live in a per-run state.

pub mod graphdef;
