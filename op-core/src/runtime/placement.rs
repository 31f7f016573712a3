//! Placement: where each node runs and where its inputs and outputs live.
//!
//! A runtime on a device other than the host (a GPU) runs a node there
//! when the device has a kernel for it, and otherwise on the host's kernel
//! (TensorFlow's soft placement), unless placement is strict
//! ([`Runtime::strict_placement`](super::Runtime::strict_placement)). Each
//! input is copied to where the kernel reads it: into the device's memory
//! for a device kernel, except the args its registration keeps in host
//! memory (`host_memory("shape")`: shapes and axes read on the host) and
//! the dtypes no device holds (bools, strings, resource handles); into
//! host memory for a host kernel. Outputs stay where the kernel made them,
//! so the next node copies only what it must.

use op_spec::{DType, Device, DeviceType, OpDef};

use crate::device::DeviceState;
use crate::error::{Error, Result};
use crate::op_instance::OpInstance;
use crate::registry::KernelRegistration;
use crate::tensor::Tensor;

/// Where a prepared node's kernel runs and reads each input.
#[derive(Debug)]
pub(crate) struct Placement {
    /// For each flattened input of a device kernel, whether it stays in
    /// host memory; empty for a host kernel (every input on the host).
    host_inputs: Box<[bool]>,
    /// For each flattened output of a device kernel, whether the kernel
    /// makes it in host memory; empty for a host kernel.
    host_outputs: Box<[bool]>,
}

impl Placement {
    /// The placement of `node` (of `op`) under `kernel` on `device`.
    pub(crate) fn new(
        op: &OpDef,
        node: &OpInstance,
        kernel: &KernelRegistration,
        device: Device,
    ) -> Placement {
        if device.kind() == DeviceType::Cpu {
            return Placement {
                host_inputs: Box::new([]),
                host_outputs: Box::new([]),
            };
        }
        let on_host = |arg: Option<(usize, usize)>, args: &[op_spec::ArgDef], dtype: DType| {
            !on_devices(dtype)
                || arg.is_some_and(|(arg, _)| kernel.host_memory.contains(&args[arg].name.as_str()))
        };
        Placement {
            host_inputs: (0..node.input_types().len())
                .map(|i| on_host(node.input_arg_of(i), &op.inputs, node.input_types()[i]))
                .collect(),
            host_outputs: (0..node.output_types().len())
                .map(|i| on_host(node.output_arg_of(i), &op.outputs, node.output_types()[i]))
                .collect(),
        }
    }

    /// Whether output `index` of a kernel on `state`'s device is made in
    /// host memory.
    #[inline]
    pub(crate) fn output_on_host(&self, state: &DeviceState, index: usize) -> bool {
        state.device.kind() == DeviceType::Cpu
            || self.host_outputs.get(index).copied().unwrap_or(true)
    }

    /// Moves each of `inputs` to where the kernel on `state`'s device reads
    /// it. Allocates nothing when every input is in place already (the
    /// host runtime's case).
    #[inline]
    pub(crate) fn place_inputs(&self, state: &DeviceState, inputs: &mut [Tensor]) -> Result<()> {
        if state.device.kind() == DeviceType::Cpu {
            if inputs.iter().all(Tensor::is_on_host) {
                return Ok(());
            }
            return Self::to_host(inputs);
        }
        for (i, input) in inputs.iter_mut().enumerate() {
            let on_host = self.host_inputs.get(i).copied().unwrap_or(true);
            if on_host {
                if !input.is_on_host() {
                    *input = input.to_host()?;
                }
            } else if input.device() != state.device {
                let backend = state.device_backend()?;
                *input = if input.is_on_host() {
                    input.upload(backend, state.device)?
                } else {
                    input.to_device(state.device)?
                };
            }
        }
        Ok(())
    }

    #[cold]
    fn to_host(inputs: &mut [Tensor]) -> Result<()> {
        for input in inputs.iter_mut().filter(|t| !t.is_on_host()) {
            *input = input.to_host()?;
        }
        Ok(())
    }
}

/// Whether tensors of `dtype` can live in a device's memory (plain
/// numbers; not bools, strings, resource handles or variants).
pub(crate) fn on_devices(dtype: DType) -> bool {
    !matches!(
        dtype,
        DType::Bool | DType::String | DType::Resource | DType::Variant
    ) && dtype.size_of().is_some()
}

/// The error for a node with no kernel on its device when placement is
/// strict: the device's own lookup error, and that a host kernel exists.
#[cold]
pub(crate) fn strict_error(device_error: Error, device: Device) -> Error {
    let message = format!(
        "{}\n  a host kernel exists, but this runtime's placement is strict: nodes must run on {device} (Runtime::strict_placement(false) lets them fall back to the host, with copies)",
        device_error.message()
    );
    Error::new(device_error.code(), message)
}
