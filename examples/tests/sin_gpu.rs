//! Seed 002's training on a GPU (`Runtime::gpu(0)`), eagerly and as a
//! graph: the offset equals the CPU run's within 1e-5, the variable and
//! the loss live in GPU memory (the variable ops, `Sum` and
//! `ResourceApplyAdam` ran there), and a strict-placement run says which
//! ops of the training graph still need the CPU. Without a GPU each test
//! shows as `ignored (needs a GPU; ...)`, except the one that reads, from
//! the registry alone, which nodes of the graph have no GPU kernel
//! (counted, and the ones this program relies on checked).
//!
//! On a GPU machine: `cargo test -p examples --test sin_gpu -- --nocapture`.

use std::sync::Arc;

use examples::sin::{EagerTraining, GraphTraining};
use op_core::{Device, DeviceType, Registry, Runtime};

const STEPS: usize = 1000;

/// The nodes of the training graph that no GPU kernel matches, as
/// `name (op)`, in graph order: where a GPU runtime falls back to the CPU.
fn host_only_nodes() -> Vec<String> {
    op_kernels::link();
    let graph = GraphTraining::graph().unwrap();
    let registry = Registry::global();
    graph
        .nodes()
        .iter()
        .filter(|node| {
            let Ok(entry) = registry.op(node.op()) else {
                return true;
            };
            !entry
                .kernels()
                .iter()
                .any(|k| k.matches(node.instance(), DeviceType::Gpu))
        })
        .map(|node| format!("{} ({})", node.name(), node.op()))
        .collect()
}

fn the_training_graphs_variable_ops_sum_and_adam_have_gpu_kernels() {
    let host_only = host_only_nodes();
    // The harness does not capture output: the count here, the list in
    // `strict_placement_lists_the_ops_still_on_the_cpu` (on a GPU).
    println!(
        "{} nodes of the training graph have no GPU kernel (they run on the CPU of a GPU runtime)",
        host_only.len()
    );
    for op in [
        "(VarHandleOp)",
        "(ReadVariableOp)",
        "(AssignVariableOp)",
        "(Sum)",
        "(ResourceApplyAdam)",
    ] {
        assert!(
            !host_only.iter().any(|n| n.ends_with(op)),
            "{op} has no GPU kernel: {host_only:?}"
        );
    }
}

/// A GPU runtime, for a test declared `Gpu`.
fn gpu() -> Runtime {
    op_kernels::link();
    Runtime::gpu(0).unwrap()
}

fn eager_training_on_the_gpu_learns_the_cpus_offset() {
    let runtime = gpu();
    let mut on_gpu = EagerTraining::on(&runtime).unwrap();
    let cpu = Runtime::new();
    let mut on_cpu = EagerTraining::on(&cpu).unwrap();
    for _ in 0..STEPS {
        let loss = on_gpu.step().unwrap();
        assert_eq!(loss.device(), Device::gpu(0), "Sum ran on the GPU");
        on_cpu.step().unwrap();
    }
    assert_eq!(on_gpu.offset_value().unwrap().device(), Device::gpu(0));
    let (gpu, cpu) = (on_gpu.offset().unwrap(), on_cpu.offset().unwrap());
    println!("eager offset after {STEPS} steps: GPU {gpu}, CPU {cpu}");
    assert!((gpu - cpu).abs() < 1e-5, "GPU {gpu}, CPU {cpu}");
}

fn graph_training_on_the_gpu_learns_the_cpus_offset() {
    let runtime = gpu();
    let on_gpu = GraphTraining::on(Arc::new(runtime)).unwrap();
    let on_cpu = GraphTraining::on(Arc::new(Runtime::new())).unwrap();
    for _ in 0..STEPS {
        let loss = on_gpu.step().unwrap();
        assert_eq!(loss.device(), Device::gpu(0), "Sum ran on the GPU");
        on_cpu.step().unwrap();
    }
    let (gpu, cpu) = (on_gpu.offset().unwrap(), on_cpu.offset().unwrap());
    println!("graph offset after {STEPS} steps: GPU {gpu}, CPU {cpu}");
    assert!((gpu - cpu).abs() < 1e-5, "GPU {gpu}, CPU {cpu}");
}

fn strict_placement_lists_the_ops_still_on_the_cpu() {
    let runtime = gpu();
    let host_only = host_only_nodes();
    println!("falling back to the CPU: {host_only:?}");
    let strict = Arc::new(runtime.strict_placement(true));
    match GraphTraining::on(strict).and_then(|model| model.step().map(drop)) {
        Ok(()) => {
            println!("strict placement: every node of the training graph ran on the GPU");
            assert!(host_only.is_empty(), "{host_only:?}");
        }
        Err(e) => {
            println!("strict placement refused the graph: {e}");
            assert!(!host_only.is_empty(), "{e}");
        }
    }
}

op_cuda::test_main! {
    the_training_graphs_variable_ops_sum_and_adam_have_gpu_kernels,
    eager_training_on_the_gpu_learns_the_cpus_offset: Gpu,
    graph_training_on_the_gpu_learns_the_cpus_offset: Gpu,
    strict_placement_lists_the_ops_still_on_the_cpu: Gpu,
}
