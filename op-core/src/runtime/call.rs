//! [`OpCall`]: one call of an op by name, for any [`Executor`].

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use op_spec::AttrValue;
use rustc_hash::FxHasher;

use super::cache::{CachedRequest, CallCache};
use super::{PreparedOp, Runtime};
use crate::Result;
use crate::executor::Executor;
use crate::op_instance::InputTypes;
use crate::tensor::Tensor;

/// One call of an op by name: inputs (single values and lists), explicit
/// attrs, an optional node name; run on the global runtime or on any
/// [`Executor`].
///
/// The inputs are the executor's values: [`Tensor`]s by default (what
/// [`OpCall::new`] makes), any `V` with [`OpCall::with_values`].
///
/// On the runtime, repeated calls with the same op, input dtypes and attrs
/// reuse the kernel through a per-thread cache, without locking.
///
/// ```standalone_crate
/// use op_core::{OpCall, Tensor};
/// # op_core::inventory::submit! { op_core::registry::OpRegistration::new("AddN2", || op_core::OpDefBuilder::new("AddN2").attr("N: int").input("in: N * int32").output("sum: int32").build(), file!(), line!()) }
/// # fn add_n(ctx: &mut op_core::KernelContext<'_>, _: &()) -> op_core::Result<()> {
/// #     let total: i32 = ctx.input_list("in")?.iter().map(|t| t.scalar_value::<i32>().unwrap()).sum();
/// #     ctx.set_output(0, Tensor::scalar(total))
/// # }
/// # op_core::inventory::submit! { op_core::registry::KernelRegistration::new("AddN2", op_core::DeviceType::Cpu, "add_n", |c| op_core::FnKernel::<()>::create(c, add_n), file!(), line!()) }
///
/// let sum = OpCall::new("AddN2")
///     .input_list([Tensor::scalar(1i32), Tensor::scalar(2i32), Tensor::scalar(3i32)])
///     .run()?;
/// assert_eq!(sum[0].scalar_value::<i32>()?, 6);
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OpCall<'a, V = Tensor> {
    pub(super) op: &'a str,
    pub(super) inputs: Vec<V>,
    /// Per input arg: `None` for a single value, `Some(n)` for a list of n.
    /// Empty while every input arg is a single value (no allocation).
    pub(super) args: Vec<Option<usize>>,
    pub(super) attrs: Vec<(&'a str, AttrValue)>,
    pub(super) node_name: Option<&'a str>,
}

impl<'a> OpCall<'a> {
    /// A call of op `op` on tensors.
    pub fn new(op: &'a str) -> Self {
        Self::with_values(op)
    }

    /// Runs on [`Runtime::global`]; returns the outputs, flattened.
    pub fn run(self) -> Result<Vec<Tensor>> {
        Runtime::global().execute(self)
    }

    /// Runs on [`Runtime::global`]; returns the outputs grouped by output
    /// arg (one tensor for a single output, n for a list output).
    pub fn run_grouped(self) -> Result<Vec<Vec<Tensor>>> {
        Runtime::global().execute_grouped(self)
    }

    /// The prepared node for this call on `runtime`, from the per-thread
    /// cache when this thread made the same request before; its kernel
    /// serves eager calls ([`KernelConstruction::is_eager`](crate::KernelConstruction::is_eager)):
    /// what an executor outside op-core runs with
    /// [`PreparedOp::run_into`](super::PreparedOp::run_into) on buffers it
    /// owns.
    pub fn prepared(&self, runtime: &Runtime) -> Result<Arc<PreparedOp>> {
        if let Some(prepared) =
            CallCache::lookup(runtime, self).and_then(|hit| hit.entry.prepared.upgrade())
        {
            return Ok(prepared);
        }
        let hash = self.request_hash(runtime.id);
        // The runtime's own `Arc` (it keeps it in its slot while it lives):
        // the cache holds a `Weak` to it.
        let prepared = runtime.prepare_node(
            self.op,
            &self.input_types(),
            &self.attrs,
            self.node_name,
            true,
        )?;
        CallCache::insert(
            hash,
            CachedRequest::new(runtime.id, self),
            Arc::downgrade(&prepared),
        );
        Ok(prepared)
    }

    /// The dtypes of the inputs, by arg.
    pub fn input_types(&self) -> Vec<InputTypes> {
        let mut next = 0;
        self.input_groups()
            .map(|group| {
                let n = group.unwrap_or(1);
                let dtypes = self.inputs[next..next + n].iter().map(Tensor::dtype);
                next += n;
                match group {
                    None => InputTypes::Single(self.inputs[next - 1].dtype()),
                    Some(_) => InputTypes::List(dtypes.collect()),
                }
            })
            .collect()
    }

    /// The hash of this request on runtime `runtime`: what the per-thread
    /// call cache files it under.
    #[inline]
    pub(super) fn request_hash(&self, runtime: u64) -> u64 {
        let mut h = FxHasher::default();
        runtime.hash(&mut h);
        self.op.hash(&mut h);
        self.node_name.hash(&mut h);
        self.args.hash(&mut h);
        for t in &self.inputs {
            t.dtype().enum_value().hash(&mut h);
        }
        for (name, value) in &self.attrs {
            name.hash(&mut h);
            hash_attr_value(value, &mut h);
        }
        h.finish()
    }
}

impl<'a, V> OpCall<'a, V> {
    /// A call of op `op` whose inputs are an executor's values `V` (a
    /// graph builder's outputs, say); [`OpCall::new`] is the call on
    /// tensors.
    pub fn with_values(op: &'a str) -> Self {
        OpCall {
            op,
            // Most ops have at most four inputs; the runtime gives the same
            // Vec back holding the outputs. (Inline storage would make the
            // builder's moves cost more than this one allocation.)
            inputs: Vec::with_capacity(4),
            args: Vec::new(),
            attrs: Vec::new(),
            node_name: None,
        }
    }

    /// Adds the next input arg: one value (for tensors, a `&Tensor` is
    /// shared, a `Tensor` handed over).
    pub fn input(mut self, value: impl Into<V>) -> Self {
        self.inputs.push(value.into());
        if !self.args.is_empty() {
            self.args.push(None);
        }
        self
    }

    /// Adds the next input arg: a list of values.
    pub fn input_list<T: Into<V>>(mut self, values: impl IntoIterator<Item = T>) -> Self {
        let before = self.inputs.len();
        if self.args.is_empty() {
            // Every earlier arg was a single value.
            self.args.resize(before, None);
        }
        self.inputs.extend(values.into_iter().map(Into::into));
        self.args.push(Some(self.inputs.len() - before));
        self
    }

    /// Sets attr `name` (again: the last value wins).
    pub fn attr(mut self, name: &'a str, value: impl Into<AttrValue>) -> Self {
        let value = value.into();
        match self.attrs.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.attrs.push((name, value)),
        }
        self
    }

    /// Names the node (in errors, and a graph node's name); defaults to
    /// the op's name.
    pub fn node_name(mut self, name: &'a str) -> Self {
        self.node_name = Some(name);
        self
    }

    /// Runs (or records) the call on `executor`; returns the outputs,
    /// flattened.
    pub fn run_on<E: Executor<Value = V> + ?Sized>(self, executor: &E) -> Result<Vec<V>> {
        executor.execute(self)
    }

    /// Runs (or records) the call on `executor`; returns the outputs
    /// grouped by output arg.
    pub fn run_grouped_on<E: Executor<Value = V> + ?Sized>(
        self,
        executor: &E,
    ) -> Result<Vec<Vec<V>>> {
        executor.execute_grouped(self)
    }

    /// The op's name.
    pub fn op(&self) -> &'a str {
        self.op
    }

    /// The inputs, flattened (a list arg contributes one value per
    /// element); [`input_groups`](Self::input_groups) tells the args apart.
    pub fn inputs(&self) -> &[V] {
        &self.inputs
    }

    /// The inputs, flattened, handed over (to run them, say).
    pub fn into_inputs(self) -> Vec<V> {
        self.inputs
    }

    /// Per input arg: `None` for a single value, `Some(n)` for a list of
    /// n values.
    pub fn input_groups(&self) -> impl Iterator<Item = Option<usize>> + '_ {
        let singles = if self.args.is_empty() {
            self.inputs.len()
        } else {
            0
        };
        self.args
            .iter()
            .copied()
            .chain(std::iter::repeat_n(None, singles))
    }

    /// The attrs given explicitly, in the order first given.
    pub fn attrs(&self) -> &[(&'a str, AttrValue)] {
        &self.attrs
    }

    /// The node's name, if one was given.
    pub fn given_node_name(&self) -> Option<&'a str> {
        self.node_name
    }
}

/// Hashes the common attr values fully and the others by kind only (equal
/// hashes are confirmed by comparing the values).
#[inline]
fn hash_attr_value(value: &AttrValue, h: &mut FxHasher) {
    std::mem::discriminant(value).hash(h);
    match value {
        AttrValue::Int(i) => i.hash(h),
        AttrValue::Float(f) => f.to_bits().hash(h),
        AttrValue::Bool(b) => b.hash(h),
        AttrValue::Type(t) => t.enum_value().hash(h),
        AttrValue::String(s) => s.hash(h),
        _ => {}
    }
}
