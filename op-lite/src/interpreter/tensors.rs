//! The interpreter's tensor table: per tensor, what the model says (name,
//! dtype, role) and what planning decided (shape, size, place). The kernel
//! contexts read it; only the interpreter writes it.

use op_core::DType;

use crate::kernel::TemporaryLifetime;

/// One tensor of the running subgraph, or a temporary a node requested.
#[derive(Clone, Debug)]
pub(crate) struct TensorSlot {
    pub(crate) name: String,
    pub(crate) dtype: DType,
    /// The current shape: the model's, an input's as resized, an output's
    /// as its node's prepare set it.
    pub(crate) shape: Vec<usize>,
    pub(crate) kind: TensorKind,
    /// Where the bytes are, once planned (constants: from the start).
    pub(crate) place: Place,
    /// The size in bytes of `shape` elements of `dtype`, once planned.
    pub(crate) bytes: usize,
}

/// What a tensor is to the subgraph. The flags are not exclusive: a
/// subgraph input may also be an output.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct TensorKind {
    pub(crate) constant: bool,
    pub(crate) input: bool,
    pub(crate) output: bool,
    pub(crate) variable: bool,
    pub(crate) temporary: Option<TemporaryLifetime>,
}

impl TensorKind {
    /// Whether the tensor must keep its bytes for the whole of an invoke
    /// and from one invoke to the next.
    pub(crate) fn persists(&self) -> bool {
        self.input
            || self.output
            || self.variable
            || self.temporary == Some(TemporaryLifetime::Persistent)
    }
}

/// Where a tensor's bytes are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Nowhere: a tensor no node uses.
    Nowhere,
    /// At this offset of the constants block.
    Constant(usize),
    /// At this offset of the arena.
    Arena(usize),
    /// In memory of another runtime: entry `k` of the contexts' host table
    /// ([`crate::external`]).
    Host(usize),
}

/// An output's shape and dtype while its node's prepare sets them.
#[derive(Clone, Debug)]
pub(crate) struct OutputSpec {
    pub(crate) shape: Vec<usize>,
    pub(crate) dtype: DType,
}

/// A temporary as prepare requested it.
#[derive(Clone, Debug)]
pub(crate) struct TemporarySpec {
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
    pub(crate) lifetime: TemporaryLifetime,
}

/// The number of elements of `shape`, or `None` when it overflows.
pub(crate) fn element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// The size in bytes of a tensor of `dtype` and `shape`: `Ok(None)` for a
/// dtype without a fixed size, `Err(())` when the size overflows.
pub(crate) fn byte_size(dtype: DType, shape: &[usize]) -> Result<Option<usize>, ()> {
    let Some(size) = dtype.size_of() else {
        return Ok(None);
    };
    element_count(shape)
        .and_then(|n| n.checked_mul(size))
        .map(Some)
        .ok_or(())
}
