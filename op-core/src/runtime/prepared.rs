//! [`PreparedOp`]: one node with its kernel, ready to run.

use std::sync::Arc;

use op_spec::OpDef;

use crate::context::KernelContext;
use crate::device::DeviceState;
use crate::error::{listed, summarized};
use crate::gradient::recording;
use crate::kernel::OpKernel;
use crate::op_instance::OpInstance;
use crate::registry::KernelRegistration;
use crate::runtime::placement::Placement;
use crate::shape_inference::{self, PartialShape, ShapeFn};
use crate::tensor::Tensor;
use crate::unwind::catch_panic;
use crate::{Error, Result};

/// A node with its kernel, ready to run any number of times from any
/// thread; what a graph node holds.
pub struct PreparedOp {
    pub(super) op: Arc<OpDef>,
    pub(super) node: Arc<OpInstance>,
    /// The kernel's device (the runtime's, or the host's for a node that
    /// fell back to a host kernel): allocator, threads and resources.
    pub(super) state: Arc<DeviceState>,
    /// Where the kernel reads its inputs and makes its outputs.
    pub(super) placement: Placement,
    pub(super) kernel: Box<dyn OpKernel>,
    pub(super) registration: &'static KernelRegistration,
    /// The shape function to check outputs against, when checking is on.
    pub(super) shape_check: Option<ShapeFn>,
}

impl std::fmt::Debug for PreparedOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedOp")
            .field("node_name", &self.node.name())
            .field("node", &self.node)
            .field("kernel", &self.registration.name)
            .finish_non_exhaustive()
    }
}

impl PreparedOp {
    /// The op's definition.
    pub fn op_def(&self) -> &OpDef {
        &self.op
    }

    /// The node: resolved attrs and input and output dtypes.
    pub fn instance(&self) -> &OpInstance {
        &self.node
    }

    /// The node's name.
    pub fn node_name(&self) -> &str {
        self.node.name()
    }

    /// The registration of the kernel that runs it.
    pub fn kernel(&self) -> &'static KernelRegistration {
        self.registration
    }

    /// Whether the kernel may wait for another kernel
    /// ([`OpKernel::may_block`]): an executor runs such a node where its
    /// waiting holds up no other, with a cancellation
    /// ([`run_cancellable`](Self::run_cancellable)).
    pub fn may_block(&self) -> bool {
        self.kernel.may_block()
    }

    /// The device the kernel runs on: the runtime's, or the host for a
    /// node whose device has no kernel for it (see
    /// [`Runtime::strict_placement`](crate::Runtime::strict_placement)).
    pub fn device(&self) -> crate::Device {
        self.state.device
    }

    fn context_frame(&self) -> String {
        format!(
            "in kernel {} of {}",
            self.registration.name,
            self.node
                .describe_with(format_args!("device '{}'", short_name(self.state.device)))
        )
    }

    /// Runs the kernel on `inputs` (flattened: a list arg contributes one
    /// tensor per element) and returns the outputs, flattened.
    ///
    /// An input the caller alone holds may have its buffer reused for an
    /// output (see [`KernelContext::forward_input_or_allocate_output`]).
    pub fn run(&self, mut inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let count = self.node.output_types().len();
        // One output (the common case) lives on the stack; more go in a Vec.
        let mut single: [Option<Tensor>; 1] = [None];
        let mut many: Vec<Option<Tensor>>;
        let outputs: &mut [Option<Tensor>] = if count == 1 {
            &mut single
        } else {
            many = Vec::with_capacity(count);
            many.resize(count, None);
            &mut many
        };
        self.run_into(&mut inputs, outputs)?;
        // The inputs are done with: their Vec's buffer holds the outputs
        // (no allocation when there are at least as many inputs as outputs).
        inputs.clear();
        inputs.extend(
            outputs
                .iter_mut()
                .map(|o| o.take().expect("run_into set it")),
        );
        Ok(inputs)
    }

    /// Runs the kernel on `inputs` (flattened) and puts the outputs in
    /// `outputs` (flattened, one slot per output tensor of the node): the
    /// entry point for callers that place tensors themselves and allocate
    /// nothing per call. Every slot is `Some` afterwards.
    ///
    /// An input the caller alone holds may have its buffer moved to an
    /// output; its slot in `inputs` then holds a placeholder (a scalar).
    ///
    /// ```standalone_crate
    /// use op_core::{DType, Runtime, Tensor};
    /// # op_core::inventory::submit! { op_core::registry::OpRegistration::new("Twice", || op_core::OpDefBuilder::new("Twice").input("x: float").output("y: float").build(), file!(), line!()) }
    /// # fn twice(ctx: &mut op_core::KernelContext<'_>, _: &()) -> op_core::Result<()> {
    /// #     ctx.unary(0, 0, 1, |x: &f32| x * 2.0)
    /// # }
    /// # op_core::inventory::submit! { op_core::registry::KernelRegistration::new("Twice", op_core::DeviceType::Cpu, "twice", |c| op_core::FnKernel::<()>::create(c, twice), file!(), line!()) }
    /// let twice = Runtime::global().prepare("Twice", &[DType::F32.into()], &[])?;
    /// let mut inputs = [Tensor::from_vec([2], vec![1.0f32, 2.0])?];
    /// let mut outputs = [None];
    /// twice.run_into(&mut inputs, &mut outputs)?;
    /// assert_eq!(outputs[0].as_ref().unwrap().as_slice::<f32>()?, [2.0, 4.0]);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn run_into(&self, inputs: &mut [Tensor], outputs: &mut [Option<Tensor>]) -> Result<()> {
        self.run_into_with(inputs, outputs, None)
    }

    /// [`run_into`](Self::run_into), with waits that `cancellation` cuts
    /// short ([`KernelContext::cancellation`]): how a graph's executor
    /// runs its nodes, cancelling the run's waits when one fails.
    pub fn run_cancellable(
        &self,
        inputs: &mut [Tensor],
        outputs: &mut [Option<Tensor>],
        cancellation: &crate::wait::CancellationManager,
    ) -> Result<()> {
        self.run_into_with(inputs, outputs, Some(cancellation))
    }

    #[inline]
    fn run_into_with(
        &self,
        inputs: &mut [Tensor],
        outputs: &mut [Option<Tensor>],
        cancellation: Option<&crate::wait::CancellationManager>,
    ) -> Result<()> {
        if recording::is_active() {
            return self.run_recorded(inputs, outputs, cancellation);
        }
        self.run_kernel(inputs, &mut [], outputs, true, cancellation)
    }

    /// Runs the kernel as [`run_into`](Self::run_into) does, with outputs
    /// placed in buffers the caller owns: how another runtime (the lite
    /// interpreter, which plans every tensor in one arena) runs a framework
    /// kernel without allocating its outputs.
    ///
    /// `placed[i]`, when `Some`, is the buffer for output `i`: a tensor of
    /// the output's dtype in the shape the caller expects, usually over
    /// lent memory ([`Tensor::lend_mut`]). When the kernel makes output `i`
    /// of that dtype and shape ([`KernelContext::allocate_output`], the
    /// elementwise helpers), it gets that tensor (zeroed, when the call
    /// zeroes), and `placed[i]` is left `None`. After the call `outputs`
    /// holds every output, as after `run_into`: output `i` is in the
    /// placed buffer exactly when `outputs[i]` has its
    /// [`buffer_address`](Tensor::buffer_address). A kernel that made it
    /// otherwise (forwarded an input, set a tensor of its own, asked for
    /// another shape) leaves its own tensor there, for the caller to copy.
    ///
    /// Unlike `run_into`, no gradient tape records the call and the output
    /// shapes are not checked against the shape function (the caller ran
    /// it to plan the buffers). Nothing is allocated for the call itself.
    ///
    /// ```standalone_crate
    /// use op_core::{DType, Runtime, Tensor};
    /// # op_core::inventory::submit! { op_core::registry::OpRegistration::new("Twice", || op_core::OpDefBuilder::new("Twice").input("x: float").output("y: float").build(), file!(), line!()) }
    /// # fn twice(ctx: &mut op_core::KernelContext<'_>, _: &()) -> op_core::Result<()> {
    /// #     ctx.unary(0, 0, 1, |x: &f32| x * 2.0)
    /// # }
    /// # op_core::inventory::submit! { op_core::registry::KernelRegistration::new("Twice", op_core::DeviceType::Cpu, "twice", |c| op_core::FnKernel::<()>::create(c, twice), file!(), line!()) }
    /// let twice = Runtime::global().prepare("Twice", &[DType::F32.into()], &[])?;
    /// let x = [1.0f32, 2.0];
    /// let mut y = [0.0f32; 2];
    /// {
    ///     // SAFETY: both tensors, and every clone, are gone by the end of the block.
    ///     let mut inputs = [unsafe { Tensor::lend(DType::F32, &[2], bytemuck::cast_slice(&x)) }?];
    ///     let mut placed = [Some(unsafe { Tensor::lend_mut(DType::F32, &[2], bytemuck::cast_slice_mut(&mut y)) }?)];
    ///     let address = placed[0].as_ref().unwrap().buffer_address();
    ///     let mut outputs = [None];
    ///     twice.run_placed(&mut inputs, &mut placed, &mut outputs)?;
    ///     assert_eq!(outputs[0].as_ref().unwrap().buffer_address(), address);
    /// }
    /// assert_eq!(y, [2.0, 4.0]);
    /// # Ok::<(), op_core::Error>(())
    /// ```
    pub fn run_placed(
        &self,
        inputs: &mut [Tensor],
        placed: &mut [Option<Tensor>],
        outputs: &mut [Option<Tensor>],
    ) -> Result<()> {
        self.run_kernel(inputs, placed, outputs, false, None)
    }

    /// [`run_into`](Self::run_into) while a gradient tape is active on
    /// this thread: the tapes that watch an input see the run (they keep
    /// the inputs they need before the kernel runs, so no kernel reuses
    /// those buffers).
    #[cold]
    fn run_recorded(
        &self,
        inputs: &mut [Tensor],
        outputs: &mut [Option<Tensor>],
        cancellation: Option<&crate::wait::CancellationManager>,
    ) -> Result<()> {
        let recording = recording::begin(&self.op, &self.node, inputs);
        if recording.is_empty() {
            return self.run_kernel(inputs, &mut [], outputs, true, cancellation);
        }
        let result = self.run_kernel(inputs, &mut [], outputs, true, cancellation);
        let mut first = true;
        for recorder in &recording {
            let outputs = result.is_ok().then_some(&mut *outputs);
            first &= !recorder.end(outputs, first);
        }
        result
    }

    /// Runs the kernel, with outputs in `placed` buffers where they fit,
    /// and checks the output shapes against the shape function if
    /// `check_shapes` and the runtime checks them; `cancellation` cuts its
    /// waits short.
    fn run_kernel(
        &self,
        inputs: &mut [Tensor],
        placed: &mut [Option<Tensor>],
        outputs: &mut [Option<Tensor>],
        check_shapes: bool,
        cancellation: Option<&crate::wait::CancellationManager>,
    ) -> Result<()> {
        self.check_inputs(inputs)?;
        self.placement
            .place_inputs(&self.state, inputs)
            .map_err(|e| e.with_context(self.context_frame()))?;
        if outputs.len() != self.node.output_types().len() {
            return Err(Error::invalid_argument(format!(
                "{} has {} output tensor(s), but {} slot(s) were given",
                self.node,
                self.node.output_types().len(),
                outputs.len()
            )));
        }
        // What the slots held before goes now (a fresh array of `None`s,
        // the usual case, has nothing to drop).
        if outputs.iter().any(Option::is_some) {
            outputs.fill(None);
        }
        let shape_check = self.shape_check.filter(|_| check_shapes);
        let input_shapes: Option<Vec<PartialShape>> = shape_check.map(|_| {
            inputs
                .iter()
                .map(|t| PartialShape::known(t.dims()))
                .collect()
        });
        let result = {
            let mut ctx = KernelContext::new(
                &self.op,
                &self.node,
                inputs,
                outputs,
                &self.state,
                &self.placement,
            )
            .with_placed(placed)
            .with_cancellation(cancellation);
            catch_panic(|| self.kernel.compute(&mut ctx))
        };
        match result {
            Ok(Ok(())) => {}
            Ok(Err(error)) => return Err(error.with_context(self.context_frame())),
            Err(panic) => {
                return Err(Error::internal(format!("kernel panicked{panic}"))
                    .with_context(self.context_frame()));
            }
        }
        if let Some(missing) = outputs.iter().position(Option::is_none) {
            return Err(Error::internal(format!(
                "the kernel did not set output {missing} ({})",
                self.output_name(missing)
            ))
            .with_context(self.context_frame()));
        }
        if let (Some(shape_fn), Some(input_shapes)) = (shape_check, input_shapes) {
            self.check_output_shapes(shape_fn, &input_shapes, outputs)?;
        }
        Ok(())
    }

    /// Checks the outputs against what `shape_fn` infers from the inputs.
    #[cold]
    fn check_output_shapes(
        &self,
        shape_fn: ShapeFn,
        input_shapes: &[PartialShape],
        outputs: &[Option<Tensor>],
    ) -> Result<()> {
        // Bounded: a call may have any number of inputs, of any rank.
        let shapes = listed(input_shapes.iter().map(summarized), 8);
        let rejected = |e: Error| {
            Error::internal(format!(
                "the kernel accepted input shapes {}, but the op's shape function rejects them: {}",
                shapes,
                e.message()
            ))
            .with_context(self.context_frame())
        };
        let mut c = shape_inference::InferenceContext::new(&self.op, &self.node, input_shapes, &[])
            .map_err(rejected)?;
        // A shape function that panics is a bug in the op: an error for the
        // caller, not a panic in it.
        let inferred = match catch_panic(|| shape_fn(&mut c)) {
            Ok(Ok(())) => c.output_shapes(),
            Ok(Err(e)) => return Err(rejected(e)),
            Err(panic) => {
                return Err(Error::internal(format!(
                    "the op's shape function panicked on input shapes {shapes}{panic}",
                ))
                .with_context(self.context_frame()));
            }
        };
        for (i, (output, expected)) in outputs.iter().zip(&inferred).enumerate() {
            let Some(output) = output else { continue };
            if !expected.is_compatible_with(output.dims()) {
                return Err(Error::internal(format!(
                    "output {i} ({}) has shape {}, but the op's shape function infers {expected} from input shapes {}: the kernel and the shape function disagree",
                    self.output_name(i),
                    summarized(&output.shape()),
                    shapes
                ))
                .with_context(self.context_frame()));
            }
        }
        Ok(())
    }

    fn output_name(&self, index: usize) -> String {
        self.node
            .output_arg_of(index)
            .map(|(arg, _)| format!("'{}'", self.op.outputs[arg].name))
            .unwrap_or_default()
    }

    fn check_inputs(&self, inputs: &[Tensor]) -> Result<()> {
        let expected = self.node.input_types();
        if inputs.len() == expected.len()
            && inputs.iter().zip(expected).all(|(t, d)| t.dtype() == *d)
        {
            return Ok(());
        }
        Err(self.input_mismatch(inputs))
    }

    #[cold]
    fn input_mismatch(&self, inputs: &[Tensor]) -> Error {
        let expected = self.node.input_types();
        if inputs.len() != expected.len() {
            return Error::invalid_argument(format!(
                "{} was prepared for {} input tensor(s), got {}",
                self.node,
                expected.len(),
                inputs.len()
            ));
        }
        let Some(i) = (0..inputs.len()).find(|&i| inputs[i].dtype() != expected[i]) else {
            return Error::internal("input check failed without a mismatch");
        };
        let (arg, position) = self.node.input_arg_of(i).unwrap_or_default();
        let def = &self.op.inputs[arg];
        let position = if def.is_list() {
            format!("[{position}]")
        } else {
            String::new()
        };
        Error::invalid_argument(format!(
            "{}: input '{}'{position} must be {}, got a tensor of {}",
            self.node,
            def.name,
            expected[i],
            inputs[i].dtype()
        ))
    }
}

/// `cpu` for the host, `gpu:1` for a device: the device in messages.
pub(crate) fn short_name(device: crate::Device) -> String {
    match device.kind() {
        crate::DeviceType::Cpu => "cpu".to_owned(),
        kind => format!("{kind}:{}", device.index()),
    }
}
