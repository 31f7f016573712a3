//! One of our kernels run over memory a host owns: the inputs lent without
//! a copy, each output written into a buffer the host allocates.
//!
//! | step | what happens |
//! | --- | --- |
//! | prepare ([`HostKernel::new`]) | the node's kernel made once, for its input dtypes ([`input_types`], from the attrs where a host gives only those) and attrs |
//! | lend the inputs ([`lend_input`]) | a tensor over the host's buffer; bools checked (ours are 0 or 1) |
//! | run ([`HostKernel::run`]) | a large call whose output shapes our shape function knows has its outputs allocated by the host first and written in place ([`run_placed`]); any other runs first, and each output is copied into the buffer the host then allocates for its shape |
//!
//! Strings, resources and variants are each host's own layout, and are
//! not taken here: a host crate that supports them handles them itself.

use std::sync::Arc;

use op_core::shape_inference::{PartialShape, ShapeFn};
use op_core::{AttrValue, DType, Error, InputTypes, OpDef, PreparedOp, Result, Runtime, Tensor};
use smallvec::SmallVec;

/// Inputs of at least this many bytes in all have their kernel's outputs
/// placed in buffers the host allocates before the kernel runs; smaller
/// calls skip the shape function this costs and copy their outputs.
pub const PLACED_BYTES: usize = 64 * 1024;

/// A tensor's dims, on the stack up to rank 8.
pub type Dims = SmallVec<[usize; 8]>;

/// A buffer in host memory that a host owns: `len` bytes at `data` (which
/// may be null when `len` is 0).
#[derive(Clone, Copy, Debug)]
pub struct HostBuffer {
    /// The first byte.
    pub data: *mut u8,
    /// How many bytes.
    pub len: usize,
}

impl HostBuffer {
    /// The bytes, writable.
    ///
    /// # Safety
    ///
    /// The buffer is live, and nothing else reads or writes it while the
    /// slice lives.
    pub unsafe fn as_mut_slice<'a>(self) -> &'a mut [u8] {
        if self.len == 0 || self.data.is_null() {
            return &mut [];
        }
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }
}

/// Where a host puts a kernel's outputs: it allocates each when asked, in
/// its own memory, and the kernel's output is written there.
pub trait OutputSink {
    /// A buffer of `dtype` and `dims` for output `index` (flattened, as
    /// the node's output tensors count), or why the host cannot give one
    /// (a host that fixed output shapes before the call, as JAX does,
    /// refuses other dims).
    fn allocate(&mut self, index: usize, dtype: DType, dims: &[usize]) -> Result<HostBuffer>;
}

/// Whether `dtype`'s elements are plain bytes that a host holds as we do.
pub fn is_plain(dtype: DType) -> bool {
    !matches!(dtype, DType::String | DType::Resource | DType::Variant)
}

/// A host's input as our tensor, lent (read-only) over its buffer;
/// `bytes` must be `dims`' elements of `dtype`. Bools are copied and
/// checked (ours must be 0 or 1); strings, resources and variants are each
/// host's own layout and are refused.
///
/// # Safety
///
/// `bytes` is live, and nothing writes it, while the tensor (and any
/// clone) is used.
pub unsafe fn lend_input(dtype: DType, dims: &[usize], bytes: &[u8]) -> Result<Tensor> {
    match dtype {
        DType::String | DType::Resource | DType::Variant => Err(Error::unimplemented(format!(
            "{dtype} tensors cross to a host in its own layout, which this host does not take"
        ))),
        DType::Bool => {
            let values = bytes
                .iter()
                .map(|&b| match b {
                    0 => Ok(false),
                    1 => Ok(true),
                    _ => Err(Error::invalid_argument(format!(
                        "a bool input holds byte {b}"
                    ))),
                })
                .collect::<Result<Vec<bool>>>()?;
            Tensor::from_vec(dims, values)
        }
        // SAFETY: the caller's contract.
        _ => unsafe { Tensor::lend(dtype, dims, bytes) },
    }
}

/// One of our kernels, prepared for one node of a host's graph (or one
/// call site of a traced function): see the [module docs](self).
pub struct HostKernel {
    prepared: Arc<PreparedOp>,
    shape_fn: Option<ShapeFn>,
    /// Whether inputs may be lent: a stateless kernel keeps nothing of a
    /// call, a stateful one (a variable's assign) may keep an input.
    lend_inputs: bool,
}

impl HostKernel {
    /// The kernel of op `op` for inputs of these dtypes and these attrs,
    /// prepared on `runtime`; `node` names it in errors.
    pub fn new(
        runtime: &Runtime,
        op: &str,
        inputs: &[InputTypes],
        attrs: &[(&str, AttrValue)],
        node: &str,
    ) -> Result<HostKernel> {
        let prepared = runtime.prepare_named(op, inputs, attrs, node)?;
        let lend_inputs = !prepared.op_def().is_stateful;
        Ok(HostKernel {
            shape_fn: runtime.registry().op(op)?.shape_fn(),
            prepared,
            lend_inputs,
        })
    }

    /// The prepared kernel.
    pub fn prepared(&self) -> &PreparedOp {
        &self.prepared
    }

    /// The dtypes of the node's output tensors.
    pub fn output_types(&self) -> &[DType] {
        self.prepared.instance().output_types()
    }

    /// Runs the kernel on `inputs` (lent with [`lend_input`], flattened),
    /// each output written into a buffer `sink` gives: see the [module
    /// docs](self). The inputs may be replaced (a placeholder where the
    /// kernel moved one); drop them before the host reuses their memory.
    ///
    /// # Safety
    ///
    /// Each buffer `sink` gives holds `dims`' elements of `dtype`, and is
    /// the host's alone (no input's, nothing else reading or writing it)
    /// until the call returns.
    pub unsafe fn run(&self, inputs: &mut [Tensor], sink: &mut impl OutputSink) -> Result<()> {
        if !self.lend_inputs {
            for input in inputs.iter_mut() {
                input.make_distinct()?;
            }
        }
        if let Some(dims) = planned_output_dims(&self.prepared, self.shape_fn, inputs)? {
            let mut placed: SmallVec<[PlacedOutput; 4]> = SmallVec::new();
            for (j, (dtype, dims)) in self.output_types().iter().zip(dims).enumerate() {
                let buffer = sink.allocate(j, *dtype, &dims)?;
                check_size(j, *dtype, &dims, buffer)?;
                placed.push(PlacedOutput {
                    buffer,
                    dims,
                    lent_as_input: false,
                });
            }
            // SAFETY: the caller's contract: each buffer is the host's alone.
            return unsafe { run_placed(&self.prepared, inputs, &placed) };
        }
        let mut outputs: SmallVec<[Option<Tensor>; 4]> =
            smallvec::smallvec![None; self.output_types().len()];
        self.prepared.run_into(inputs, &mut outputs)?;
        let outputs = outputs.iter().map(|output| {
            output
                .as_ref()
                .ok_or_else(|| Error::internal("the kernel left an output unset"))
        });
        // SAFETY: the caller's contract.
        unsafe { copy_outputs(outputs, sink) }
    }
}

/// Copies each of `outputs` (made by our runtime: a kernel's, a
/// gradient's) into a buffer `sink` allocates for its dtype and dims.
///
/// # Safety
///
/// As [`HostKernel::run`]: each buffer `sink` gives holds its output and
/// is the host's alone until the call returns.
pub unsafe fn copy_outputs<'t>(
    outputs: impl IntoIterator<Item = Result<&'t Tensor>>,
    sink: &mut impl OutputSink,
) -> Result<()> {
    for (j, output) in outputs.into_iter().enumerate() {
        let output = output?;
        let bytes = plain_bytes(j, output)?;
        let buffer = sink.allocate(j, output.dtype(), output.dims())?;
        check_size(j, output.dtype(), output.dims(), buffer)?;
        // SAFETY: the caller's contract: the host's buffer of `len` bytes
        // (checked), written only here.
        unsafe { buffer.as_mut_slice() }.copy_from_slice(bytes);
    }
    Ok(())
}

/// Output `index`'s bytes, or why a host cannot take them.
fn plain_bytes(index: usize, output: &Tensor) -> Result<&[u8]> {
    output
        .plain_bytes()
        .map_err(|e| e.with_context(format!("handing output {index} to the host")))
}

/// That the host's `buffer` for output `index` holds `dims`' elements of
/// `dtype`.
fn check_size(index: usize, dtype: DType, dims: &[usize], buffer: HostBuffer) -> Result<()> {
    let expected = dims.iter().product::<usize>() * dtype.size_of().unwrap_or(0);
    if buffer.len != expected {
        return Err(Error::internal(format!(
            "the host gave output {index} ({dtype} {dims:?}) {} bytes, not {expected}",
            buffer.len
        )));
    }
    Ok(())
}

/// For a large call (at least [`PLACED_BYTES`] of inputs) of plain dtypes
/// whose output shapes our shape function knows from the inputs (their
/// shapes and values) through `shape_fn`, those shapes; `None` when the
/// call does not qualify.
pub fn planned_output_dims(
    prepared: &PreparedOp,
    shape_fn: Option<ShapeFn>,
    inputs: &[Tensor],
) -> Result<Option<SmallVec<[Dims; 4]>>> {
    let bytes: usize = inputs
        .iter()
        .map(|t| t.num_elements() * t.dtype().size_of().unwrap_or(0))
        .sum();
    let node = prepared.instance();
    let plain = |d: &DType| is_plain(*d) && *d != DType::Bool;
    if bytes < PLACED_BYTES
        || !inputs.iter().all(|t| plain(&t.dtype()))
        || !node.output_types().iter().all(plain)
    {
        return Ok(None);
    }
    let Some(shape_fn) = shape_fn else {
        return Ok(None);
    };
    let shapes: SmallVec<[PartialShape; 8]> = inputs
        .iter()
        .map(|t| PartialShape::known(t.dims()))
        .collect();
    let values: SmallVec<[Option<&Tensor>; 8]> = inputs.iter().map(Some).collect();
    let shapes =
        op_core::shape_inference::infer(prepared.op_def(), node, shape_fn, &shapes, &values)?;
    let mut dims = SmallVec::new();
    for shape in shapes {
        match shape
            .0
            .and_then(|d| d.into_iter().collect::<Option<Dims>>())
        {
            Some(known) => dims.push(known),
            None => return Ok(None),
        }
    }
    Ok(Some(dims))
}

/// An output buffer the host allocated before the kernel runs.
#[derive(Clone, Debug)]
pub struct PlacedOutput {
    /// The buffer.
    pub buffer: HostBuffer,
    /// The output's dims, as the host allocated it.
    pub dims: Dims,
    /// Whether the buffer is an input's, which the host forwarded to this
    /// output and the caller lent writable in `inputs` (the kernel finds
    /// it there, and writes in place when it forwards that input).
    pub lent_as_input: bool,
}

/// Runs the kernel with its outputs in the host's buffers; an output the
/// kernel made elsewhere (a tensor of its own, a forwarded input) is
/// copied into its buffer.
///
/// # Safety
///
/// Each buffer holds its output's dims of its dtype, and is used only
/// through this call (a `lent_as_input` one only through its input in
/// `inputs`) until it returns.
pub unsafe fn run_placed(
    prepared: &PreparedOp,
    inputs: &mut [Tensor],
    placed: &[PlacedOutput],
) -> Result<()> {
    let mut buffers: SmallVec<[Option<Tensor>; 4]> = SmallVec::new();
    for (output, dtype) in placed.iter().zip(prepared.instance().output_types()) {
        buffers.push(if output.lent_as_input {
            None
        } else {
            // SAFETY: the caller's contract: the host's buffer for this
            // output, used only through this tensor while the kernel runs.
            Some(unsafe { Tensor::lend_mut(*dtype, &output.dims, output.buffer.as_mut_slice()) }?)
        });
    }
    let mut outputs: SmallVec<[Option<Tensor>; 4]> = smallvec::smallvec![None; placed.len()];
    prepared.run_placed(inputs, &mut buffers, &mut outputs)?;
    for (j, (made, output)) in outputs.iter().zip(placed).enumerate() {
        let made = made
            .as_ref()
            .ok_or_else(|| Error::internal("the kernel left an output unset"))?;
        if made.buffer_address() == Some(output.buffer.data as usize) || output.buffer.len == 0 {
            continue;
        }
        let bytes = plain_bytes(j, made)?;
        if bytes.len() != output.buffer.len {
            return Err(Error::internal(format!(
                "the kernel made output {j} of {} bytes, but its shape function gave {}",
                bytes.len(),
                output.buffer.len
            )));
        }
        // SAFETY: the caller's contract; the kernel's own tensor is
        // elsewhere, and the kernel no longer reads this buffer.
        unsafe { output.buffer.as_mut_slice() }.copy_from_slice(bytes);
    }
    Ok(())
}

/// The dtypes of a node's inputs, from its attrs, for a host that builds
/// a kernel from a node alone (TensorFlow) or that reads dtypes off attrs
/// it was given: each arg's fixed type, or its type attr's value (or
/// default), `N` times for `N * T`, or its `list(type)` attr's values.
///
/// ```
/// op_kernels::link();
/// use op_core::{AttrValue, DType, InputTypes};
/// let def = op_core::Registry::global().op("ZeroOutPolymorphic")?.def();
/// let types = op_host::kernel::input_types(def, &[("T", AttrValue::Type(DType::F64))])?;
/// assert_eq!(types, [InputTypes::Single(DType::F64)]);
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn input_types(def: &OpDef, attrs: &[(&str, AttrValue)]) -> Result<Vec<InputTypes>> {
    let attr = |name: &str| {
        attrs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .or_else(|| {
                def.attrs
                    .iter()
                    .find(|a| a.name == name)
                    .and_then(|a| a.default_value.as_ref())
            })
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "op {} needs attr '{name}' to know its input dtypes",
                    def.name
                ))
            })
    };
    def.inputs
        .iter()
        .map(|arg| {
            let one = match (arg.fixed_type(), arg.type_attr()) {
                (Some(dtype), _) => Some(dtype),
                (None, Some(name)) => match attr(name)? {
                    AttrValue::Type(dtype) => Some(*dtype),
                    other => {
                        return Err(Error::invalid_argument(format!(
                            "attr '{name}' of op {} is {other}, not a type",
                            def.name
                        )));
                    }
                },
                (None, None) => None,
            };
            if let Some(n) = &arg.number_attr {
                let count = match attr(n)? {
                    AttrValue::Int(count) => usize::try_from(*count).map_err(|_| {
                        Error::invalid_argument(format!("attr '{n}' of op {} is {count}", def.name))
                    })?,
                    other => {
                        return Err(Error::invalid_argument(format!(
                            "attr '{n}' of op {} is {other}, not an int",
                            def.name
                        )));
                    }
                };
                let dtype = one.unwrap_or(DType::F32);
                return Ok(InputTypes::List(vec![dtype; count]));
            }
            if let Some(list) = arg.type_list_attr() {
                return match attr(list)? {
                    AttrValue::List(op_core::ListValue::Type(types)) => {
                        Ok(InputTypes::List(types.clone()))
                    }
                    other => Err(Error::invalid_argument(format!(
                        "attr '{list}' of op {} is {other}, not a list of types",
                        def.name
                    ))),
                };
            }
            one.map(InputTypes::Single).ok_or_else(|| {
                Error::internal(format!(
                    "input '{}' of op {} has no type",
                    arg.name, def.name
                ))
            })
        })
        .collect()
}
