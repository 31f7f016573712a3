//! What the gradient tests (`symbolic.rs`, `tape.rs`) share: the
//! declarations of their test ops. Each test file has ops of its own, with
//! their kernels and gradients (gradient registrations are global, and a
//! second registration for one op is a conflict); these macros make the
//! common kinds one line each.

/// Declares ops of one `float` or `double` input `x` and one output `y` of
/// its shape, each with its doc comment: `unary_ops! { /// doc\n pub Name; }`.
macro_rules! unary_ops {
    ($($(#[$doc:meta])* $vis:vis $name:ident;)*) => {$(
        $(#[$doc])*
        #[register_op(
            attrs("T: {float, double}"),
            inputs("x: T"),
            outputs("y: T"),
            shape = "unchanged"
        )]
        $vis struct $name;
    )*};
}

/// The `float` and `double` kernels of ops whose output is their input (ops
/// that differ only by their gradients): `identity_kernels! { Op =>
/// kernel_name }`.
macro_rules! identity_kernels {
    ($($op:ident => $name:ident),* $(,)?) => {$(
        #[kernel(op = $op, types(f32, f64))]
        fn $name<T: op_core::Element + Copy>(ctx: &mut KernelContext<'_>) -> Result<()> {
            ctx.unary(0, 0, 1, |x: &T| *x)
        }
    )*};
}
