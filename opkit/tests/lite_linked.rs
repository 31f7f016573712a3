//! `opkit lite` runs the lite kernels linked into the program with
//! `#[lite_kernel]`: this test binary links two, a custom op of its own and
//! an override of the seed's `Sin`, as a downstream crate calling
//! `opkit::cli::main` from its own `main` would.

mod common;

use std::process::ExitCode;

use common::{custom_model, lite_run, opkit, s, scratch, write_f32};
use ndarray::ArrayD;
use ndarray_npy::read_npy;
use op_core::Result;
use op_lite::kernel::{InvokeContext, PrepareContext};
use op_lite::lite_kernel;

fn same_shape(ctx: &mut PrepareContext<'_>) -> Result<()> {
    let shape = ctx.input_shape(0)?;
    ctx.set_output_shape(0, shape)
}

struct Triple;

#[lite_kernel(custom = "Triple")]
impl Triple {
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        same_shape(ctx)
    }

    fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
        let (x, y) = (ctx.input::<f32>(0)?, ctx.output_mut::<f32>(0)?);
        y.iter_mut().zip(x).for_each(|(y, x)| *y = 3.0 * x);
        Ok(())
    }
}

/// A `Sin` of the program's own: linked kernels override the tool's.
struct NegatedSin;

#[lite_kernel(custom = "Sin")]
impl NegatedSin {
    fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
        same_shape(ctx)
    }

    fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
        let (x, y) = (ctx.input::<f32>(0)?, ctx.output_mut::<f32>(0)?);
        y.iter_mut().zip(x).for_each(|(y, x)| *y = -x.sin());
        Ok(())
    }
}

/// Runs the one-op model of `op` on `[0, 1, 2]`; returns its output.
fn run(op: &str) -> Vec<f32> {
    let dir = scratch(&format!("linked-{op}"));
    let model = custom_model(&dir, op);
    let x = dir.join("x.npy");
    write_f32(&x, &[1, 3], &[0.0, 1.0, 2.0]);
    let input = format!("#0={}", s(&x));
    let out = dir.join("out");
    let (status, _, err) = opkit(&lite_run(s(&model), &input, &out));
    assert_eq!(status, ExitCode::SUCCESS, "{err}");
    let y: ArrayD<f32> = read_npy(out.join("StatefulPartitionedCall_0.npy")).unwrap();
    y.iter().copied().collect()
}

#[test]
fn a_linked_custom_op_runs_and_a_linked_override_replaces_the_tool_s_own() {
    assert_eq!(run("Triple"), [0.0, 3.0, 6.0]);
    assert_eq!(run("Sin"), [-0.0, -(1.0f32.sin()), -(2.0f32.sin())]);
}

#[test]
fn lite_ops_says_which_kernel_runs_each_op() {
    let dir = scratch("linked-ops");
    for (op, kernel) in [
        ("Triple", "#[lite_kernel] at opkit/tests/lite_linked.rs:"),
        ("Sin", "#[lite_kernel] at opkit/tests/lite_linked.rs:"),
        ("Cos", "framework op 'Cos' (op_lite::bridge)"),
    ] {
        let model = custom_model(&dir, op);
        let (status, out, err) = opkit(&["lite", "ops", s(&model)]);
        assert_eq!(status, ExitCode::SUCCESS, "{err}");
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("'{op}'")))
            .unwrap();
        assert!(line.contains(&format!("  {kernel}")), "{op}: {line:?}");
    }
}
