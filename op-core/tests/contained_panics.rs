//! A contained panic (in a kernel, a kernel's constructor, a shape
//! function, a kernel's block of work on the intra-op pool) is reported
//! once, by the error the caller gets, with its location, and prints
//! nothing to stderr; a panic the runtime does not contain is printed as
//! before, by the default hook or by the program's own.
//!
//! What a process prints to stderr can only be seen from outside it: each
//! test runs this test binary again as a child (`child`, selected by an
//! environment variable, with `--nocapture` so that nothing is captured),
//! and reads the child's stderr.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Command;
use std::sync::Arc;

use op_core::shape_inference::InferenceContext;
use op_core::threads::ThreadPool;
use op_core::{
    Code, DType, KernelConstruction, KernelContext, OpCall, Registry, Result, Runtime, Tensor,
    kernel, register_op,
};

/// The environment variable that makes `child` run a scenario.
const SCENARIO: &str = "OP_CORE_CONTAINED_PANICS_SCENARIO";
/// What `child` prints to stdout when its scenario finished.
const DONE: &str = "scenario finished";

/// `y = x`, panicking on a negative element, in whichever block of the
/// intra-op pool holds it.
#[register_op(name = "Cp>PanicsOnNegative", inputs("x: float"), outputs("y: float"))]
struct PanicsOnNegative;

#[kernel(op = PanicsOnNegative)]
fn panics_on_negative(ctx: &mut KernelContext<'_>) -> Result<()> {
    // A high cost per element, so that a few thousand are split into blocks.
    ctx.unary(0, 0, 10_000, |x: &f32| {
        assert!(*x >= 0.0, "a negative element: {x}");
        *x
    })
}

/// `y = x`, checking the elements in blocks with `ThreadPool::shard` (the
/// pool's other entry) and panicking on a negative one.
#[register_op(name = "Cp>ShardPanics", inputs("x: float"), outputs("y: float"))]
struct ShardPanics;

#[kernel(op = ShardPanics)]
fn shard_panics(ctx: &mut KernelContext<'_>) -> Result<()> {
    let x = ctx.input(0)?.clone();
    let values = x.as_slice::<f32>()?;
    ctx.threads().shard(values.len(), 10_000, |range| {
        let negative = values[range].iter().find(|v| **v < 0.0);
        assert!(
            negative.is_none(),
            "a negative element in a shard: {negative:?}"
        );
    });
    ctx.set_output(0, x)
}

/// A kernel whose constructor panics.
#[register_op(name = "Cp>ExplodesOnCreate", outputs("y: float"))]
struct ExplodesOnCreate;

struct Exploding;

#[kernel(op = ExplodesOnCreate)]
impl Exploding {
    fn new(_: &KernelConstruction<'_>) -> Result<Self> {
        panic!("the constructor exploded")
    }

    fn compute(&self, _: &mut KernelContext<'_>) -> Result<()> {
        Ok(())
    }
}

/// An op whose shape function panics.
#[register_op(
    name = "Cp>BadShape",
    inputs("x: float"),
    outputs("y: float"),
    shape_fn = bad_shape
)]
struct BadShape;

fn bad_shape(_: &mut InferenceContext<'_>) -> Result<()> {
    panic!("the shape function has a bug")
}

#[kernel(op = BadShape)]
fn bad_shape_kernel(ctx: &mut KernelContext<'_>) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

/// Asserts that `result` is an `Internal` error saying `what` panicked at
/// a location in this file, with `message`.
#[track_caller]
fn assert_contained<T: std::fmt::Debug>(result: Result<T>, what: &str, message: &str) {
    let err = result.unwrap_err();
    assert_eq!(err.code(), Code::Internal, "{err}");
    let text = err.message();
    let prefix = format!("{what} at {}:", file!());
    assert!(
        text.contains(&prefix) && text.ends_with(&format!(": {message}")),
        "expected {prefix:?}..{message:?}, got {err}"
    );
}

/// Panics of every kind the runtime contains: each an error, none printed.
fn contained_panics() {
    let runtime = Runtime::new().with_threads(Arc::new(ThreadPool::new(4).unwrap()));
    // On the caller's thread (one element: no blocks).
    assert_contained(
        PanicsOnNegative::call(Tensor::scalar(-1.0f32)).run_on(&runtime),
        "kernel panicked",
        "a negative element: -1",
    );
    // In a block on one of the pool's threads.
    let mut values = vec![1.0f32; 4096];
    values[4000] = -2.0;
    let x = Tensor::from_vec([4096], values).unwrap();
    assert!(runtime.threads().num_blocks(4096, 10_000) > 1);
    assert_contained(
        PanicsOnNegative::call(&x).run_on(&runtime),
        "kernel panicked",
        "a negative element: -2",
    );
    assert_contained(
        ShardPanics::call(&x).run_on(&runtime),
        "kernel panicked",
        "a negative element in a shard: Some(-2.0)",
    );
    assert_contained(
        OpCall::new("Cp>ExplodesOnCreate").run_on(&runtime),
        "panicked",
        "the constructor exploded",
    );
    assert_contained(
        Registry::global().infer_shapes(
            "Cp>BadShape",
            &[DType::F32.into()],
            &[],
            &["[2]".parse().unwrap()],
            &[],
        ),
        "the shape function panicked",
        "the shape function has a bug",
    );
    // The runtime and its pool keep working.
    let y = PanicsOnNegative::call(Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap())
        .run_on(&runtime)
        .unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), [1.0, 2.0]);
}

/// Panics the runtime does not contain, after it contained some (so that
/// its hook is installed): each is printed by the hook it replaced.
fn uncontained_panics() {
    contained_panics();
    let thread = std::thread::spawn(|| panic!("a thread's own panic"));
    assert!(thread.join().is_err());
    assert!(catch_unwind(|| panic!("a panic the program catches itself")).is_err());
    // Work on a pool outside any kernel: its blocks are not contained.
    let pool = ThreadPool::new(2).unwrap();
    let sharded = catch_unwind(AssertUnwindSafe(|| {
        pool.shard(100, 1_000, |range| {
            assert!(range.end < 100, "a block's panic outside the runtime");
        })
    }));
    assert!(sharded.is_err());
}

/// Runs a scenario when this binary was started by `run_child`; does
/// nothing in an ordinary test run.
#[test]
fn child() {
    let Ok(scenario) = std::env::var(SCENARIO) else {
        return;
    };
    match scenario.as_str() {
        "contained" => contained_panics(),
        "uncontained" => uncontained_panics(),
        "program_hook" => {
            // The program's hook, set before the runtime's: still called
            // for what the runtime does not contain, and only for that.
            std::panic::set_hook(Box::new(|info| {
                eprintln!(
                    "the program's hook: {}",
                    info.payload_as_str().unwrap_or("?")
                );
            }));
            uncontained_panics();
        }
        other => panic!("unknown scenario {other:?}"),
    }
    println!("{DONE}");
}

/// Runs `child` with `scenario` in a new process and returns its stderr,
/// checking that it finished.
fn run_child(scenario: &str) -> String {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(SCENARIO, scenario)
        // A backtrace would be the loudest part of the noise.
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success() && stdout.contains(DONE),
        "the child failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    stderr
}

#[test]
fn a_contained_panic_prints_nothing() {
    let stderr = run_child("contained");
    assert_eq!(stderr, "", "a contained panic printed to stderr");
}

#[test]
fn a_panic_the_runtime_does_not_contain_is_still_printed() {
    let stderr = run_child("uncontained");
    for printed in [
        "a thread's own panic",
        "a panic the program catches itself",
        "a block's panic outside the runtime",
    ] {
        assert!(
            stderr.contains(printed),
            "{printed:?} missing from:\n{stderr}"
        );
    }
    assert!(
        stderr.contains(&format!("panicked at {}:", file!())),
        "{stderr}"
    );
    assert!(stderr.contains("stack backtrace"), "{stderr}");
    for contained in [
        "a negative element",
        "the constructor exploded",
        "the shape function has a bug",
    ] {
        assert!(
            !stderr.contains(contained),
            "{contained:?} printed:\n{stderr}"
        );
    }
}

#[test]
fn the_program_s_own_hook_still_sees_what_the_runtime_does_not_contain() {
    let stderr = run_child("program_hook");
    let mut lines: Vec<&str> = stderr.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "the program's hook: a block's panic outside the runtime",
            "the program's hook: a panic the program catches itself",
            "the program's hook: a thread's own panic",
        ],
        "{stderr}"
    );
}
