//! Ops on a GPU: a GPU runtime runs each node on the GPU when the op has a
//! GPU kernel, and on the host's kernel otherwise, copying inputs to where
//! each kernel reads them; strict placement makes the fallback an error.
//!
//! ```sh
//! cargo run --example gpu
//! ```
//!
//! On a machine without a GPU (or without the CUDA driver) it says why,
//! and exits successfully: there is nothing to show.

use op_core::{Device, Executor, OpCall, Result, Runtime, Tensor};
use op_kernels::example::Example;
use op_kernels::math::{AddV2, Sin};
use op_kernels::matmul::MatMul;
use op_kernels::reduction::Mean;

fn main() -> Result<()> {
    op_kernels::link();
    let gpu = match Runtime::gpu(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            println!("no GPU to run on: {e}");
            return Ok(());
        }
    };
    let device = op_kernels::gpu::cuda::GpuDevice::get(0)?;
    println!(
        "GPU 0: {} (compute capability {}.{}, {} SMs)",
        device.name(),
        device.compute_capability().0,
        device.compute_capability().1,
        device.sm_count()
    );

    // Inputs on the host are copied to the GPU by the first node that
    // reads them there; outputs stay on the GPU.
    let x = Tensor::from_vec([2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    let doubled = Example::call_with(x.clone()).run_on(&gpu)?;
    let shifted = AddV2::call_with(doubled, Tensor::scalar(0.5f32)).run_on(&gpu)?;
    let waves = Sin::call_with(shifted).run_on(&gpu)?;
    let w = Tensor::from_vec([3, 2], vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0])?;
    let product = MatMul::call_with(waves.clone(), w).run_on(&gpu)?;
    let mean = Mean::call_with(product.clone(), Tensor::from_vec([1], vec![1i32])?).run_on(&gpu)?;
    println!("sin(2x + 0.5) is on {}", short(waves.device()));
    println!(
        "... @ w is on {}: {:?}",
        short(product.device()),
        product.to_host()?
    );
    println!("its mean over axis 1: {:?}", mean.to_host()?);

    // Where each op ran: a prepared node knows its kernel's device.
    println!("\nplacement of each op on this runtime:");
    for op in [
        "Example",
        "AddV2",
        "Sin",
        "MatMul",
        "Mean",
        "StringToNumber",
    ] {
        let call = match op {
            "StringToNumber" => OpCall::new(op).input(Tensor::string("1.5")),
            "MatMul" => OpCall::new(op).input(&x).input(x.reshape([3, 2])?),
            "Mean" => OpCall::new(op).input(&x).input(Tensor::scalar(0i32)),
            "AddV2" => OpCall::new(op).input(&x).input(&x),
            _ => OpCall::new(op).input(&x),
        };
        let prepared = call.prepared(&gpu)?;
        println!(
            "  {op:<15} runs on {:<4} ({})",
            short(prepared.device()),
            prepared.kernel().name
        );
    }

    // Strict placement: a node without a GPU kernel is an error.
    let strict = Runtime::gpu(0)?.strict_placement(true);
    let err = OpCall::new("StringToNumber")
        .input(Tensor::string("1.5"))
        .run_on(&strict)
        .unwrap_err();
    println!("\nwith strict placement, StringToNumber fails:\n{err}");
    let _ = strict.execute(OpCall::new("Sin").input(&x))?;
    Ok(())
}

/// `cpu` or `gpu:0`.
fn short(device: Device) -> String {
    match device.kind() {
        op_core::DeviceType::Cpu => "cpu".into(),
        kind => format!("{kind}:{}", device.index()),
    }
}
