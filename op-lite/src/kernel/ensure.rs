//! TensorFlow Lite's `TF_LITE_ENSURE` family, as macros that return an
//! [`op_core::Error`] from the enclosing phase.
//!
//! Each takes the phase's context first, as TensorFlow Lite's take
//! `context`: the error is built by the context's `error`, so it carries
//! the node's frame (`Node number 0 (Sin) failed to prepare.`) under a
//! message in TensorFlow Lite's words, with the source location, the
//! condition as written and, for comparisons, both values:
//!
//! ```text
//! InvalidArgument: op-lite/src/kernel/mod.rs:12 ctx.num_inputs() != 1 (2 != 1)
//!     Node number 0 (Sin) failed to prepare.
//! ```
//!
//! The error converts with `From`, so the enclosing function may return
//! any `Result<_, E>` with `E: From<op_core::Error>`.

/// Returns an error unless `cond` holds: `TF_LITE_ENSURE` (and, with a
/// message, `TF_LITE_ENSURE_MSG`).
///
/// ```
/// use op_lite::kernel::PrepareContext;
/// use op_lite::lite_ensure;
///
/// fn prepare(ctx: &mut PrepareContext<'_>) -> op_core::Result<()> {
///     lite_ensure!(ctx, ctx.input_shape(0)?.len() <= 4);
///     lite_ensure!(ctx, ctx.has_input(1), "the bias is required");
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! lite_ensure {
    ($ctx:expr, $cond:expr $(,)?) => {
        if !$cond {
            $crate::__lite_fail!($ctx, "{} was not true.", ::core::stringify!($cond));
        }
    };
    ($ctx:expr, $cond:expr, $($format:tt)+) => {
        if !$cond {
            $crate::__lite_fail!($ctx, $($format)+);
        }
    };
}

/// Returns an error unless `a == b`: `TF_LITE_ENSURE_EQ`, with both values
/// (`Debug`) in the message.
///
/// ```
/// use op_lite::kernel::PrepareContext;
/// use op_lite::lite_ensure_eq;
///
/// fn prepare(ctx: &mut PrepareContext<'_>) -> op_core::Result<()> {
///     lite_ensure_eq!(ctx, ctx.num_inputs(), 2);
///     lite_ensure_eq!(ctx, ctx.input_shape(0)?, ctx.input_shape(1)?);
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! lite_ensure_eq {
    ($ctx:expr, $a:expr, $b:expr $(,)?) => {
        match (&$a, &$b) {
            (a, b) => {
                if !(*a == *b) {
                    $crate::__lite_fail!(
                        $ctx,
                        "{} != {} ({:?} != {:?})",
                        ::core::stringify!($a),
                        ::core::stringify!($b),
                        a,
                        b
                    );
                }
            }
        }
    };
}

/// Returns an error unless the dtypes `a` and `b` are equal:
/// `TF_LITE_ENSURE_TYPES_EQ`, with both dtypes by name (`float`, `int32`).
///
/// ```
/// use op_core::DType;
/// use op_lite::kernel::PrepareContext;
/// use op_lite::lite_ensure_types_eq;
///
/// fn prepare(ctx: &mut PrepareContext<'_>) -> op_core::Result<()> {
///     lite_ensure_types_eq!(ctx, ctx.input_dtype(0)?, DType::F32);
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! lite_ensure_types_eq {
    ($ctx:expr, $a:expr, $b:expr $(,)?) => {
        match (&$a, &$b) {
            (a, b) => {
                let (a, b): (&$crate::__private::DType, &$crate::__private::DType) = (a, b);
                if *a != *b {
                    $crate::__lite_fail!(
                        $ctx,
                        "{} != {} ({} != {})",
                        ::core::stringify!($a),
                        ::core::stringify!($b),
                        a,
                        b
                    );
                }
            }
        }
    };
}

/// Returns an error unless `|a - b| <= epsilon`: `TF_LITE_ENSURE_NEAR`.
///
/// ```
/// use op_lite::kernel::PrepareContext;
/// use op_lite::lite_ensure_near;
///
/// fn check_scale(ctx: &PrepareContext<'_>, scale: f64) -> op_core::Result<()> {
///     lite_ensure_near!(ctx, scale, 1.0, 1e-6);
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! lite_ensure_near {
    ($ctx:expr, $a:expr, $b:expr, $epsilon:expr $(,)?) => {
        match (&$a, &$b, &$epsilon) {
            (a, b, epsilon) => {
                // Written so that a NaN on either side fails.
                if !((*a - *b).abs() <= *epsilon) {
                    $crate::__lite_fail!(
                        $ctx,
                        "{} not near {} ({} != {})",
                        ::core::stringify!($a),
                        ::core::stringify!($b),
                        a,
                        b
                    );
                }
            }
        }
    };
}

/// Returns the context's error for a failed check, its message prefixed
/// with the source location as TensorFlow Lite's are. Not part of the API.
#[doc(hidden)]
#[macro_export]
macro_rules! __lite_fail {
    ($ctx:expr, $($format:tt)+) => {
        return ::core::result::Result::Err(::core::convert::From::from($ctx.error(
            ::core::format_args!(
                "{}:{} {}",
                ::core::file!(),
                ::core::line!(),
                ::core::format_args!($($format)+)
            ),
        )))
    };
}
