//! opcheck, the per-op contract tests (`op_core::testing`): it passes a
//! correct op, and fails, naming the problem, deliberately broken ones (an
//! output shape the shape function disagrees with, a nondeterministic
//! kernel, one whose result depends on the thread count, one that panics
//! on an empty input, one that accepts what its shape function rejects, a
//! gradient a checker disagrees with); it warns about missing shape
//! functions, docs and gradients; registered generators and skips are
//! used; and [`Draw`] answers within its ranges, shrinking with its
//! choices.
//!
//! Every op here is named `OpCheckTest>...`: registrations are global.

use std::sync::atomic::{AtomicU64, Ordering};

use op_core::shape_inference::InferenceContext;
use op_core::testing::{
    Case, Check, Draw, GradientComparison, OpCheckRegistration, Report, opcheck,
};
use op_core::{Code, DType, Element, KernelContext, Result, Tensor, kernel, register_op};
use proptest::prelude::*;

/// Declares float ops `x: T -> y: T` (`T: {float}`, shape unchanged, not
/// differentiable), each named as given and with its doc comment: the
/// shape of every broken op below, which differ only by their kernels.
macro_rules! float_ops {
    ($($(#[$doc:meta])* $name:literal $op:ident;)*) => {$(
        $(#[$doc])*
        #[register_op(
            name = $name,
            attrs("T: {float}"),
            inputs("x: T"),
            outputs("y: T"),
            shape = "unchanged",
            not_differentiable
        )]
        pub struct $op;
    )*};
}

// ---- A correct op ----

/// Doubles every element (integers wrap on overflow).
///
/// x: the values.
/// y: `x + x`.
#[register_op(
    name = "OpCheckTest>Double",
    attrs("T: {float, double, int32}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged",
    not_differentiable
)]
pub struct Double;

/// `x + x`, wrapping for integers (the extremes opcheck tries must not
/// overflow a debug build's arithmetic).
trait Twice: Element + Copy {
    fn twice(self) -> Self;
}

impl Twice for f32 {
    fn twice(self) -> Self {
        self + self
    }
}

impl Twice for f64 {
    fn twice(self) -> Self {
        self + self
    }
}

impl Twice for i32 {
    fn twice(self) -> Self {
        self.wrapping_add(self)
    }
}

#[kernel(op = Double, types(f32, f64, i32))]
fn double<T: Twice>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &T| x.twice())
}

#[test]
fn a_correct_op_passes_on_every_kernel_with_cases_that_ran_and_error_cases() {
    let report = opcheck("OpCheckTest>Double").assert_passes();
    let op = &report.ops[0];
    assert_eq!(op.kernels.len(), 3);
    for kernel in &op.kernels {
        assert_eq!(kernel.cases, 8, "{op}");
        assert!(kernel.ran > 0, "{op}");
        assert!(kernel.error_cases > 0, "{op}");
        assert!(kernel.skipped.is_none(), "{op}");
    }
    assert!(op.warnings.is_empty(), "{op}");
    assert_eq!(
        report.summary(),
        "1 ops, 3 kernels checked, 0 failures, 0 warnings"
    );
}

#[test]
fn the_same_seed_draws_the_same_cases_and_another_seed_others() {
    let first = opcheck("OpCheckTest>Double").cases(4).run();
    assert_eq!(first, opcheck("OpCheckTest>Double").cases(4).run());
    assert_eq!(first.ops[0].kernels[0].cases, 4);
    let seeds: Vec<Report> = (1..6)
        .map(|seed| opcheck("OpCheckTest>Double").cases(4).seed(seed).run())
        .collect();
    assert!(seeds.iter().any(|r| *r != first), "{first}");
}

// ---- Broken ops ----

/// The one failure of the report of `op` (which must fail).
fn the_failure(report: &Report) -> &op_core::testing::Failure {
    let failures: Vec<_> = report.failures().collect();
    assert!(!failures.is_empty(), "expected a failure:\n{report}");
    failures[0]
}

float_ops! {
    /// Returns its input with one more element than its shape function says.
    ///
    /// x: the values.
    /// y: `x`, flattened, and a zero.
    "OpCheckTest>WrongShape" WrongShape;
}

#[kernel(op = WrongShape, types(f32))]
fn wrong_shape(ctx: &mut KernelContext<'_>) -> Result<()> {
    let mut values = ctx.input_slice::<f32>(0)?.to_vec();
    values.push(0.0);
    let n = values.len();
    ctx.set_output(0, Tensor::from_vec([n], values)?)
}

#[test]
fn an_output_shape_the_shape_function_disagrees_with_fails_naming_both() {
    let report = opcheck("OpCheckTest>WrongShape").run();
    let failure = the_failure(&report);
    assert_eq!(failure.check, Check::Shape, "{report}");
    assert_eq!(failure.op, "OpCheckTest>WrongShape");
    assert!(failure.kernel.contains("wrong_shape"), "{report}");
    assert!(
        failure.message.contains("output 0 ('y') has shape"),
        "{report}"
    );
    assert!(
        failure.message.contains("but the shape function infers"),
        "{report}"
    );
    assert!(failure.case.starts_with("float["), "{report}");
    assert_eq!(
        report.summary(),
        "1 ops, 1 kernels checked, 1 failures, 0 warnings"
    );
}

static CALLS: AtomicU64 = AtomicU64::new(0);

float_ops! {
    /// Adds how many times it ran before: a different result every run.
    ///
    /// x: the values.
    /// y: `x + calls`.
    "OpCheckTest>Counter" Counter;
}

#[kernel(op = Counter, types(f32))]
fn counter(ctx: &mut KernelContext<'_>) -> Result<()> {
    let calls = CALLS.fetch_add(1, Ordering::Relaxed) as f32;
    ctx.unary(0, 0, 1, move |x: &f32| x + calls)
}

#[test]
fn a_nondeterministic_kernel_fails_run_to_run() {
    let report = opcheck("OpCheckTest>Counter").run();
    let failure = the_failure(&report);
    assert_eq!(failure.check, Check::RunToRun, "{report}");
    assert!(failure.message.contains("a second run"), "{report}");
}

float_ops! {
    /// Adds the number of intra-op threads less one.
    ///
    /// x: the values.
    /// y: `x + threads - 1`.
    "OpCheckTest>ThreadCount" ThreadCount;
}

#[kernel(op = ThreadCount, types(f32))]
fn thread_count(ctx: &mut KernelContext<'_>) -> Result<()> {
    let extra = ctx.threads().num_threads() as f32 - 1.0;
    ctx.unary(0, 0, 1, move |x: &f32| x + extra)
}

#[test]
fn a_result_that_depends_on_the_thread_count_fails() {
    let report = opcheck("OpCheckTest>ThreadCount").threads(3).run();
    let failure = the_failure(&report);
    assert_eq!(failure.check, Check::Threads, "{report}");
    assert!(
        failure
            .message
            .contains("3 threads gave other outputs than 1"),
        "{report}"
    );
}

float_ops! {
    /// Subtracts the first element from every element.
    ///
    /// x: the values.
    /// y: `x - x[0]`.
    "OpCheckTest>MinusFirst" MinusFirst;
}

#[kernel(op = MinusFirst, types(f32))]
fn minus_first(ctx: &mut KernelContext<'_>) -> Result<()> {
    // The bug: no first element when the input is empty.
    let first = ctx.input_slice::<f32>(0)?[0];
    ctx.unary(0, 0, 1, move |x: &f32| x - first)
}

#[test]
fn a_kernel_that_panics_on_an_empty_input_fails_with_the_panic() {
    let report = opcheck("OpCheckTest>MinusFirst").run();
    let failure = the_failure(&report);
    assert_eq!(failure.check, Check::Panic, "{report}");
    assert!(failure.message.contains("index out of bounds"), "{report}");
    // The case that panicked has an empty dimension.
    assert!(
        failure.case.contains("[0") || failure.case.contains(",0"),
        "{report}"
    );
}

/// Vectors only, says the shape function; the kernel takes anything.
///
/// x: a vector.
/// y: `x`.
#[register_op(
    name = "OpCheckTest>VectorOnly",
    attrs("T: {float}"),
    inputs("x: T"),
    outputs("y: T"),
    shape_fn = vector_only,
    not_differentiable
)]
pub struct VectorOnly;

fn vector_only(c: &mut InferenceContext<'_>) -> Result<()> {
    let x = c.with_rank(c.input(0)?, 1)?;
    c.set_output(0, x)
}

#[kernel(op = VectorOnly, types(f32))]
fn vector_only_kernel(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &f32| *x)
}

#[test]
fn a_kernel_that_accepts_what_its_shape_function_rejects_fails() {
    let report = opcheck("OpCheckTest>VectorOnly").run();
    let failure = the_failure(&report);
    assert_eq!(failure.check, Check::Shape, "{report}");
    assert!(
        failure
            .message
            .contains("the kernel ran, but the shape function"),
        "{report}"
    );
}

// ---- Gradients, with a checker plugged in ----

/// Squares every element.
///
/// x: the values.
/// y: `x * x`.
#[register_op(
    name = "OpCheckTest>Square",
    attrs("T: {float, double}"),
    inputs("x: T"),
    outputs("y: T"),
    shape = "unchanged"
)]
pub struct Square;

#[kernel(op = Square, types(f32, f64))]
fn square<T: Element + Copy + std::ops::Mul<Output = T>>(
    ctx: &mut KernelContext<'_>,
) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &T| *x * *x)
}

/// Whatever the gradient, a checker decides: this one passes the incoming
/// gradient through.
#[op_core::gradient(op = Square)]
fn square_grad<V: op_core::gradient::Value>(
    g: &op_core::gradient::Gradient<'_, V>,
) -> Result<[Option<V>; 1]> {
    Ok([Some(g.grad(0)?)])
}

#[test]
fn a_gradient_checker_that_agrees_passes_and_gets_the_float_inputs() {
    let report = opcheck("OpCheckTest>Square")
        .gradient_checker(|f: &dyn Fn(&[Tensor]) -> Result<Tensor>, xs: &[Tensor]| {
            // The function runs the op on the inputs given.
            assert_eq!(xs.len(), 1);
            assert_eq!(xs[0].dtype(), DType::F64, "float64 kernels are compared");
            let y = f(xs)?;
            assert_eq!(y.dims(), xs[0].dims());
            Ok(GradientComparison {
                max_error: 0.0,
                detail: String::new(),
            })
        })
        .assert_passes();
    assert!(report.gradient_checks() > 0, "{report}");
}

#[test]
fn a_gradient_checker_that_disagrees_fails_with_its_detail() {
    let report = opcheck("OpCheckTest>Square")
        .gradient_checker(|_: &dyn Fn(&[Tensor]) -> Result<Tensor>, _: &[Tensor]| {
            Ok(GradientComparison {
                max_error: 0.5,
                detail: "at x0[0] -> y[0]: theoretical 1, numeric 1.5".to_owned(),
            })
        })
        .run();
    let failure = the_failure(&report);
    assert_eq!(failure.check, Check::Gradient, "{report}");
    assert!(failure.kernel.contains("T=double"), "{report}");
    assert!(failure.message.contains("differ by 5e-1"), "{report}");
    assert!(
        failure.message.contains("theoretical 1, numeric 1.5"),
        "{report}"
    );
}

#[test]
fn without_a_checker_gradients_are_not_compared() {
    let report = opcheck("OpCheckTest>Square").assert_passes();
    assert_eq!(report.gradient_checks(), 0);
}

// ---- Warnings ----

/// An op with an undocumented arg, no shape function and no gradient.
///
/// x: the values.
#[register_op(
    name = "OpCheckTest>Careless",
    attrs("T: {float}", "scale: float = 1.0"),
    inputs("x: T"),
    outputs("y: T")
)]
pub struct Careless;

#[kernel(op = Careless, types(f32))]
fn careless(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.unary(0, 0, 1, |x: &f32| *x)
}

#[test]
fn missing_shape_functions_docs_and_gradients_are_warnings() {
    let report = opcheck("OpCheckTest>Careless").assert_passes();
    let warnings = &report.ops[0].warnings;
    assert_eq!(warnings.len(), 3, "{report}");
    assert!(warnings[0].starts_with("no shape function"), "{report}");
    // `T` is inferred from `x`, so only `scale` needs docs.
    assert_eq!(warnings[1], "no docs for arg(s) y and attr(s) scale");
    assert!(
        warnings[2].starts_with("a float op with neither a gradient"),
        "{report}"
    );
    assert!(report.summary().ends_with("0 failures, 3 warnings"));
}

// ---- Generators and skips ----

/// Gathers `x` by a permutation.
///
/// x: a vector of at least 5 values (more than the generic case draws).
/// perm: a permutation of `x`'s indices.
/// y: `x[perm]`.
#[register_op(
    name = "OpCheckTest>Permute",
    attrs("T: {float}"),
    inputs("x: T", "perm: int32"),
    outputs("y: T"),
    shape = "unchanged",
    not_differentiable
)]
pub struct Permute;

#[kernel(op = Permute, types(f32))]
fn permute(ctx: &mut KernelContext<'_>) -> Result<()> {
    let x = ctx.input_slice::<f32>(0)?;
    let perm = ctx.input_slice::<i32>(1)?;
    let mut seen = vec![false; x.len()];
    for &p in perm {
        let fits = usize::try_from(p).ok().filter(|&p| p < x.len() && !seen[p]);
        let Some(p) = fits else {
            return Err(ctx.error(
                Code::InvalidArgument,
                "perm is not a permutation of x's indices",
            ));
        };
        seen[p] = true;
    }
    if perm.len() != x.len() || ctx.input(0)?.rank() != 1 || x.len() < 5 {
        return Err(ctx.error(
            Code::InvalidArgument,
            "perm is not a permutation of x's indices",
        ));
    }
    let y: Vec<f32> = perm.iter().map(|&p| x[p as usize]).collect();
    ctx.set_output(0, Tensor::from_vec([y.len()], y)?)
}

/// A vector of 5 to 8 elements and a permutation of its indices.
fn permute_cases(d: &mut Draw<'_>) -> Result<Case> {
    let n = d.size(5..=8);
    let x = d.tensor(DType::F32, &[n])?;
    let perm: Vec<i64> = d.permutation(n).into_iter().map(|p| p as i64).collect();
    Ok(Case::new()
        .input(x)
        .input(d.int_tensor(DType::I32, &[n], &perm)?))
}

/// The same op under another name, whose generator is registered.
///
/// x: a vector of at least 5 values.
/// perm: a permutation of `x`'s indices.
/// y: `x[perm]`.
#[register_op(
    name = "OpCheckTest>PermuteWithGenerator",
    attrs("T: {float}"),
    inputs("x: T", "perm: int32"),
    outputs("y: T"),
    shape = "unchanged",
    not_differentiable
)]
pub struct PermuteWithGenerator;

#[kernel(op = PermuteWithGenerator, types(f32))]
fn permute_with_generator(ctx: &mut KernelContext<'_>) -> Result<()> {
    permute(ctx)
}

op_core::inventory::submit! {
    OpCheckRegistration::generator("OpCheckTest>PermuteWithGenerator", permute_cases, file!(), line!())
}

#[test]
fn an_op_whose_cases_never_run_warns_and_a_generator_makes_them_run() {
    let generic = opcheck("OpCheckTest>Permute").assert_passes();
    let warning = generic.ops[0].warnings.last().expect("a warning");
    assert!(
        warning.starts_with("no drawn case ran on 1 of 1 kernel(s)"),
        "{generic}"
    );
    assert!(warning.contains("perm is not a permutation"), "{generic}");

    let given = opcheck("OpCheckTest>Permute")
        .generator(permute_cases)
        .assert_passes();
    assert_eq!(given.ops[0].kernels[0].ran, 8, "{given}");
    assert!(given.ops[0].warnings.is_empty(), "{given}");

    let registered = opcheck("OpCheckTest>PermuteWithGenerator").assert_passes();
    assert_eq!(registered.ops[0].kernels[0].ran, 8, "{registered}");
}

/// A generator that draws for another kernel than the one checked.
fn double_as_f64(d: &mut Draw<'_>) -> Result<Case> {
    Ok(Case::new().input(d.tensor(DType::F64, &[2])?))
}

#[test]
fn a_generator_that_draws_another_kernels_types_fails() {
    let report = opcheck("OpCheckTest>Double").generator(double_as_f64).run();
    let failure = the_failure(&report);
    assert_eq!(failure.check, Check::Kernel, "{report}");
    assert!(failure.message.contains("Draw::kernel_dtype"), "{report}");
}

/// Stands for a value that is never there.
///
/// y: nothing, ever.
#[register_op(
    name = "OpCheckTest>Unrunnable",
    outputs("y: float"),
    shape = "unknown",
    not_differentiable
)]
pub struct Unrunnable;

#[kernel(op = Unrunnable)]
fn unrunnable(ctx: &mut KernelContext<'_>) -> Result<()> {
    Err(ctx.error(Code::FailedPrecondition, "never runs"))
}

op_core::inventory::submit! {
    OpCheckRegistration::skip("OpCheckTest>Unrunnable", "it only ever fails, by design", file!(), line!())
}

#[test]
fn a_registered_skip_is_reported_with_its_reason() {
    let report = opcheck("OpCheckTest>Unrunnable").assert_passes();
    assert_eq!(
        report.ops[0].skipped.as_deref(),
        Some("it only ever fails, by design")
    );
    assert!(
        report
            .to_string()
            .contains("OpCheckTest>Unrunnable: skipped: it only ever fails, by design")
    );
    assert_eq!(
        report.summary(),
        "1 ops, 0 kernels checked, 0 failures, 0 warnings"
    );
}

/// Reads a resource.
///
/// handle: a resource.
/// y: a number.
#[register_op(
    name = "OpCheckTest>ReadsResource",
    inputs("handle: resource"),
    outputs("y: float"),
    shape = "scalar",
    not_differentiable
)]
pub struct ReadsResource;

#[kernel(op = ReadsResource)]
fn reads_resource(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.set_output(0, Tensor::scalar(0.0f32))
}

#[test]
fn an_op_the_generic_case_cannot_draw_is_skipped_saying_why() {
    let report = opcheck("OpCheckTest>ReadsResource").assert_passes();
    let reason = report.ops[0].skipped.as_deref().unwrap_or_default();
    assert!(reason.contains("input 'handle' is a resource"), "{report}");
}

#[test]
fn an_unknown_op_is_a_registration_failure_with_the_closest_name() {
    let report = opcheck("OpCheckTest>Doubel").run();
    let failure = the_failure(&report);
    assert_eq!(failure.check, Check::Registration);
    assert!(
        failure
            .message
            .contains("did you mean 'OpCheckTest>Double'?"),
        "{report}"
    );
}

// ---- Draw ----

proptest! {
    #[test]
    fn draws_stay_in_their_ranges(
        choices in proptest::collection::vec(any::<u32>(), 0..16),
        low in -50i64..50,
        span in 0i64..100,
    ) {
        let mut d = Draw::from_choices(&choices);
        for _ in 0..20 {
            let v = d.int(low..=low + span);
            prop_assert!((low..=low + span).contains(&v));
            let f = d.float(-1.5, 2.5);
            prop_assert!((-1.5..=2.5).contains(&f));
            let dims = d.dims(1..=3, 2..=4);
            prop_assert!((1..=3).contains(&dims.len()));
            prop_assert!(dims.iter().all(|v| (2..=4).contains(v)));
            let mut perm = d.permutation(5);
            perm.sort_unstable();
            prop_assert_eq!(perm, vec![0, 1, 2, 3, 4]);
        }
    }

    #[test]
    fn a_smaller_choice_never_gives_a_larger_answer(a in any::<u32>(), b in any::<u32>()) {
        let (small, large) = (a.min(b), a.max(b));
        let answer = |c: u32| (
            Draw::from_choices(&[c]).int(-7..=9),
            Draw::from_choices(&[c]).size(0..=4),
            Draw::from_choices(&[c]).float(-2.0, 2.0),
        );
        let (s, l) = (answer(small), answer(large));
        prop_assert!(s.0 <= l.0 && s.1 <= l.1 && s.2 <= l.2);
    }
}

#[test]
fn zero_choices_give_the_smallest_answers() {
    let zeros = [0u32; 8];
    let mut d = Draw::from_choices(&zeros);
    assert_eq!(d.int(3..=9), 3);
    assert_eq!(d.dims(1..=3, 2..=4), vec![2]);
    assert!(!d.bool());
    assert_eq!(d.choose(&["a", "b"]), Some(&"a"));
    assert_eq!(d.permutation(3), vec![0, 1, 2]);
}

#[test]
fn tensors_of_every_plain_dtype_are_drawn_and_resources_are_not() {
    let choices: Vec<u32> = (0..64).map(|i| i * 0x0400_0000).collect();
    let mut d = Draw::from_choices(&choices);
    for dtype in [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::Bool,
        DType::String,
        DType::Complex64,
        DType::Complex128,
        DType::QInt8,
        DType::QUInt8,
        DType::QInt16,
        DType::QUInt16,
        DType::QInt32,
    ] {
        let t = d.tensor(dtype, &[2, 3]).unwrap();
        assert_eq!((t.dtype(), t.dims()), (dtype, &[2, 3][..]));
    }
    let floats = d.float_range(0.5, 1.0).tensor(DType::F64, &[16]).unwrap();
    assert!(
        floats
            .as_slice::<f64>()
            .unwrap()
            .iter()
            .all(|v| (0.5..=1.0).contains(v))
    );
    let err = d.tensor(DType::Resource, &[1]).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
}

#[test]
fn a_case_describes_its_inputs_and_attrs() {
    let case = Case::new()
        .input_list([
            Tensor::scalar(1.5f32),
            Tensor::from_vec([2], vec![0i64, 3]).unwrap(),
        ])
        .input(Tensor::from_vec([2, 0], Vec::<f64>::new()).unwrap())
        .attr("axis", 1i64);
    assert_eq!(
        case.describe(),
        "[float[], int64[2] = [0, 3]], double[2,0]; axis=1"
    );
    assert_eq!(case.flat_inputs().len(), 3);
}
