//! The gradient checker run on every op that has a registered gradient
//! (issue 14's `tf.test.compute_gradient`): for each, the Jacobian its
//! gradient gives through a tape against central differences, in float64
//! and float32, on random shapes (broadcasting ones for every broadcasting
//! op), axes, permutations, flags and index types.
//!
//! The table of [`Case`]s holds one case per op: how to draw the op's
//! float inputs (the `xs` the checker perturbs) and the fixed inputs and
//! attrs it needs (captured by the function the checker calls). Inputs of
//! ops that are not smooth everywhere (`Relu`, `Max`, `Maximum`,
//! `FloorMod`, ...) are kept away from their kinks and ties.
//! [`every_differentiable_op_has_a_checker_case`] lists the registry's
//! differentiable ops, so a gradient added without a case here fails it.
//! Each family's own tests in op-kernels check the same gradients one op
//! at a time with their own harness; this one checks them through the
//! tape, as a user of the checker would.
//!
//! The tests at the end check the checker itself: that it catches a wrong
//! gradient, lays Jacobians out as TensorFlow does, differentiates through
//! variables, picks its step by the result's dtype too, measures relative
//! errors, and refuses what it cannot differentiate.
//!
//! `PROPTEST_CASES=300 cargo test -p op-autodiff --test checker` draws more
//! instances per op and dtype than the default [`RUNS`]. A failure names
//! its op, dtype, seed, inputs and the checker's report;
//! `check_instance(case, dtype, seed)` draws the same instance again.

use std::collections::BTreeSet;
use std::ops::RangeInclusive;

use op_autodiff::checker::{GradientCheck, compute_gradient, compute_gradient_with_delta};
use op_core::{Complex64, Complex128, DType, OpCall, Registry, Result, ShapeValue, Tensor};
use op_kernels::variable::Variable;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

// ---- Cases ----

/// One op's case: how to draw an instance of it.
struct Case {
    /// The op, as registered.
    op: &'static str,
    /// Draws the inputs, attrs and function for one check.
    draw: Box<dyn Fn(&mut Draw) -> Instance>,
    /// Whether the error is measured relative to the Jacobians' entries
    /// ([`GradientCheck::max_relative_error`]) rather than absolutely: for
    /// ops whose derivatives grow large (products, powers).
    relative: bool,
}

impl Case {
    fn new(op: &'static str, draw: impl Fn(&mut Draw) -> Instance + 'static) -> Case {
        Case {
            op,
            draw: Box::new(draw),
            relative: false,
        }
    }

    /// The same case, its error measured relative to the entries.
    fn relative(mut self) -> Case {
        self.relative = true;
        self
    }
}

/// The function the checker differentiates.
type Function = Box<dyn Fn(&[Tensor]) -> Result<Tensor>>;

/// What one check runs: the float inputs the checker perturbs, and the
/// function of them (the op, with its fixed inputs and attrs captured).
struct Instance {
    xs: Vec<Tensor>,
    f: Function,
    /// The fixed inputs and attrs, for a failure's message.
    about: String,
}

/// The `Instance` of `xs` and `f`, described by `about`.
fn instance(
    xs: Vec<Tensor>,
    about: impl Into<String>,
    f: impl Fn(&[Tensor]) -> Result<Tensor> + 'static,
) -> Instance {
    Instance {
        xs,
        f: Box::new(f),
        about: about.into(),
    }
}

/// Output `k` of `call`, run.
fn output(call: OpCall<'_>, k: usize) -> Result<Tensor> {
    Ok(call.run()?.swap_remove(k))
}

/// `op(cond, t, e)`, an op that picks from `t` or `e` by a fixed boolean
/// `cond` (`Select`, `SelectV2`, `MultiplexDense`), differentiated in
/// `t` and `e`.
fn selection(op: &'static str, cond: Tensor, t: Tensor, e: Tensor) -> Instance {
    instance(vec![t, e], format!("condition {cond:?}"), move |xs| {
        output(OpCall::new(op).input(&cond).input(&xs[0]).input(&xs[1]), 0)
    })
}

/// `op` on the `xs` in order, one input each; output 0.
fn plain(op: &'static str) -> impl Fn(&[Tensor]) -> Result<Tensor> {
    move |xs| output(xs.iter().fold(OpCall::new(op), |call, x| call.input(x)), 0)
}

/// A unary op whose gradient is smooth on `[low, high]`.
fn unary(op: &'static str, low: f64, high: f64) -> Case {
    Case::new(op, move |d| {
        let dims = d.dims_or_empty(0..=3, 3);
        instance(vec![d.uniform(&dims, low, high)], "", plain(op))
    })
}

/// A broadcasting binary op, its inputs drawn by `values` for the shapes
/// given.
fn binary(
    op: &'static str,
    values: impl Fn(&mut Draw, &[usize], &[usize]) -> (Tensor, Tensor) + 'static,
) -> Case {
    Case::new(op, move |d| {
        let shapes = d.broadcasting(2);
        let (x, y) = values(d, &shapes[0], &shapes[1]);
        instance(vec![x, y], "", plain(op))
    })
}

/// A binary op on two inputs of one shape, drawn by `values`.
fn same_shape(
    op: &'static str,
    values: impl Fn(&mut Draw, &[usize]) -> (Tensor, Tensor) + 'static,
) -> Case {
    Case::new(op, move |d| {
        let dims = d.dims(0..=3, 1..=3);
        let (x, y) = values(d, &dims);
        instance(vec![x, y], "", plain(op))
    })
}

/// The elementwise math ops of one input.
fn unary_cases() -> Vec<Case> {
    vec![
        unary("Neg", -2.0, 2.0),
        unary("Square", -2.0, 2.0),
        unary("Sqrt", 0.5, 2.0),
        unary("Rsqrt", 0.5, 2.0),
        unary("Exp", -1.0, 1.0),
        unary("Log", 0.5, 2.0),
        unary("Sin", -2.0, 2.0),
        unary("Cos", -2.0, 2.0),
        unary("Tanh", -2.0, 2.0),
        unary("Sigmoid", -2.0, 2.0),
        Case::new("Reciprocal", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            instance(vec![d.signed(&dims, 0.5, 2.0)], "", plain("Reciprocal"))
        }),
        // Away from the kink at 0.
        Case::new("Relu", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            instance(vec![d.signed(&dims, 0.1, 2.0)], "", plain("Relu"))
        }),
        // Conj takes complex numbers only: z = a + bi from two real inputs
        // (Cast and a multiplication by i), and the real part of
        // conj(z) * w for a complex constant w, so that both parts of z
        // reach the output and a gradient that missed the conjugate would
        // get b's sign wrong.
        Case::new("Conj", |d| {
            let dims = d.dims_or_empty(0..=2, 3);
            let (a, b) = (d.uniform(&dims, -2.0, 2.0), d.uniform(&dims, -2.0, 2.0));
            let w = d.uniform(&[2], -2.0, 2.0);
            let w = to_f64(&w);
            let n: usize = dims.iter().product();
            let complex = if d.dtype == DType::F64 {
                DType::Complex128
            } else {
                DType::Complex64
            };
            let constant = |re: f64, im: f64| match complex {
                DType::Complex128 => Tensor::from_vec(&dims, vec![Complex128::new(re, im); n]),
                _ => Tensor::from_vec(&dims, vec![Complex64::new(re as f32, im as f32); n]),
            };
            let (i, w_tensor) = (constant(0.0, 1.0).unwrap(), constant(w[0], w[1]).unwrap());
            let real = d.dtype;
            let cast = move |x: &Tensor, to: DType| {
                output(OpCall::new("Cast").input(x).attr("DstT", to), 0)
            };
            instance(vec![a, b], format!("w {} + {}i", w[0], w[1]), move |xs| {
                let bi = output(
                    OpCall::new("Mul").input(cast(&xs[1], complex)?).input(&i),
                    0,
                )?;
                let z = output(
                    OpCall::new("AddV2").input(cast(&xs[0], complex)?).input(bi),
                    0,
                )?;
                let conj = output(OpCall::new("Conj").input(z), 0)?;
                let product = output(OpCall::new("Mul").input(conj).input(&w_tensor), 0)?;
                cast(&product, real)
            })
        }),
    ]
}

/// The broadcasting binary ops.
fn binary_cases() -> Vec<Case> {
    let any =
        |d: &mut Draw, x: &[usize], y: &[usize]| (d.uniform(x, -2.0, 2.0), d.uniform(y, -2.0, 2.0));
    let divisor =
        |d: &mut Draw, x: &[usize], y: &[usize]| (d.uniform(x, -2.0, 2.0), d.signed(y, 0.5, 2.0));
    // Distinct values, spaced far beyond the step: no ties between x and y.
    let untied = |d: &mut Draw, x: &[usize], y: &[usize]| {
        let mut both = d.spaced(&[x, y]);
        let y = both.pop().unwrap();
        (both.pop().unwrap(), y)
    };
    vec![
        binary("AddV2", any),
        binary("Sub", any),
        binary("Mul", any),
        binary("RealDiv", divisor),
        binary("DivNoNan", divisor),
        binary("SquaredDifference", any),
        binary("Maximum", untied),
        binary("Minimum", untied),
        binary("Pow", |d, x, y| {
            (d.uniform(x, 0.5, 2.0), d.uniform(y, -2.0, 2.0))
        })
        .relative(),
        // x / y kept away from integers, where FloorMod jumps.
        binary("FloorMod", |d, x, y| {
            let pairs = broadcast_pairs(x, y);
            loop {
                let (a, b) = (d.uniform(x, -3.0, 3.0), d.signed(y, 0.5, 2.0));
                let (va, vb) = (to_f64(&a), to_f64(&b));
                let clear = pairs.iter().all(|&(i, j)| {
                    let q = va[i] / vb[j];
                    (q - q.round()).abs() > 0.02
                });
                if clear {
                    return (a, b);
                }
            }
        }),
    ]
}

/// The gradient ops whose own gradients are registered (second
/// derivatives): `(y, dy)`, or `(gradients, features)` for `ReluGrad`.
fn gradient_op_cases() -> Vec<Case> {
    vec![
        same_shape("SqrtGrad", |d, s| {
            (d.uniform(s, 0.5, 2.0), d.uniform(s, -2.0, 2.0))
        }),
        same_shape("RsqrtGrad", |d, s| {
            (d.uniform(s, 0.5, 2.0), d.uniform(s, -2.0, 2.0))
        }),
        same_shape("TanhGrad", |d, s| {
            (d.uniform(s, -2.0, 2.0), d.uniform(s, -2.0, 2.0))
        }),
        same_shape("SigmoidGrad", |d, s| {
            (d.uniform(s, -2.0, 2.0), d.uniform(s, -2.0, 2.0))
        }),
        same_shape("ReciprocalGrad", |d, s| {
            (d.signed(s, 0.5, 2.0), d.uniform(s, -2.0, 2.0))
        }),
        // Features away from the kink at 0.
        same_shape("ReluGrad", |d, s| {
            (d.uniform(s, -2.0, 2.0), d.signed(s, 0.1, 2.0))
        }),
    ]
}

/// A reduction over random axes (a vector, or a scalar for one axis;
/// negative or not; int32 or int64), with `keep_dims` either way; its
/// input drawn by `values`.
fn reduction(op: &'static str, values: impl Fn(&mut Draw, &[usize]) -> Tensor + 'static) -> Case {
    Case::new(op, move |d| {
        let dims = d.dims_or_empty(0..=3, 3);
        let x = values(d, &dims);
        let rank = dims.len();
        let mut axes: Vec<i64> = d
            .permutation(rank)
            .into_iter()
            .take(d.below(rank + 1))
            .map(|a| d.maybe_negative(a, rank))
            .collect();
        let axes = if axes.len() == 1 && d.coin() {
            d.index_scalar(axes.pop().unwrap())
        } else {
            d.index(&axes)
        };
        let keep_dims = d.coin();
        let about = format!("axes {axes:?}, keep_dims {keep_dims}");
        instance(vec![x], about, move |xs| {
            let call = OpCall::new(op).input(&xs[0]).input(&axes);
            output(call.attr("keep_dims", keep_dims), 0)
        })
    })
}

/// A scan along a random axis, exclusive and reverse either way.
fn scan(op: &'static str, low: f64, high: f64) -> Case {
    Case::new(op, move |d| {
        let dims = d.dims_or_empty(1..=3, 3);
        let x = d.signed(&dims, low, high);
        let axis = d.below(dims.len());
        let axis = d.maybe_negative(axis, dims.len());
        let axis = d.index_scalar(axis);
        let (exclusive, reverse) = (d.coin(), d.coin());
        let about = format!("axis {axis:?}, exclusive {exclusive}, reverse {reverse}");
        instance(vec![x], about, move |xs| {
            let call = OpCall::new(op).input(&xs[0]).input(&axis);
            output(
                call.attr("exclusive", exclusive).attr("reverse", reverse),
                0,
            )
        })
    })
}

/// The reductions, scans and `MatMul`.
fn reduction_cases() -> Vec<Case> {
    vec![
        reduction("Sum", |d, s| d.uniform(s, -2.0, 2.0)),
        reduction("Mean", |d, s| d.uniform(s, -2.0, 2.0)),
        // Distinct values: no ties for the maximum.
        reduction("Max", |d, s| d.spaced(&[s]).remove(0)),
        // Sometimes with a zero or two, which the gradient handles without
        // dividing (and central differences exactly: a product is linear
        // in each element).
        reduction("Prod", |d, s| {
            let x = d.signed(s, 0.5, 1.5);
            let mut values = to_f64(&x);
            for _ in 0..d.below(3) {
                if !values.is_empty() {
                    let at = d.below(values.len());
                    values[at] = 0.0;
                }
            }
            float(d.dtype, s, &values)
        })
        .relative(),
        scan("Cumsum", 0.0, 2.0),
        scan("Cumprod", 0.5, 1.5).relative(),
        Case::new("MatMul", |d| {
            let (m, k, n) = (d.size(0..=3), d.size(0..=3), d.size(0..=3));
            let (ta, tb) = (d.coin(), d.coin());
            let a = d.uniform(&if ta { [k, m] } else { [m, k] }, -2.0, 2.0);
            let b = d.uniform(&if tb { [n, k] } else { [k, n] }, -2.0, 2.0);
            let about = format!("transpose_a {ta}, transpose_b {tb}");
            instance(vec![a, b], about, move |xs| {
                let call = OpCall::new("MatMul").input(&xs[0]).input(&xs[1]);
                output(call.attr("transpose_a", ta).attr("transpose_b", tb), 0)
            })
        }),
    ]
}

/// The array ops.
fn array_cases() -> Vec<Case> {
    vec![
        // To a random shape of as many elements, maybe with a -1.
        Case::new("Reshape", |d| {
            let dims = d.dims(0..=3, 1..=3);
            let x = d.uniform(&dims, -2.0, 2.0);
            let mut shape: Vec<i64> = d.factor(dims.iter().product());
            if !shape.is_empty() && d.coin() {
                let at = d.below(shape.len());
                shape[at] = -1;
            }
            let shape = d.index(&shape);
            instance(vec![x], format!("shape {shape:?}"), move |xs| {
                output(OpCall::new("Reshape").input(&xs[0]).input(&shape), 0)
            })
        }),
        Case::new("ExpandDims", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            let x = d.uniform(&dims, -2.0, 2.0);
            let axis = d.below(dims.len() + 1);
            let axis = d.maybe_negative(axis, dims.len() + 1);
            let axis = d.index_scalar(axis);
            instance(vec![x], format!("axis {axis:?}"), move |xs| {
                output(OpCall::new("ExpandDims").input(&xs[0]).input(&axis), 0)
            })
        }),
        // Some size-1 axes, all squeezed or a random few.
        Case::new("Squeeze", |d| {
            let rank = d.below(5);
            let dims: Vec<usize> = (0..rank).map(|_| [1, 1, 2, 3][d.below(4)]).collect();
            let x = d.uniform(&dims, -2.0, 2.0);
            let ones: Vec<usize> = (0..rank).filter(|&a| dims[a] == 1).collect();
            let squeeze: Vec<i64> = if d.coin() {
                Vec::new()
            } else {
                let chosen: Vec<usize> = ones.into_iter().filter(|_| d.coin()).collect();
                chosen
                    .into_iter()
                    .map(|a| d.maybe_negative(a, rank))
                    .collect()
            };
            instance(vec![x], format!("squeeze_dims {squeeze:?}"), move |xs| {
                let call = OpCall::new("Squeeze").input(&xs[0]);
                output(call.attr("squeeze_dims", squeeze.clone()), 0)
            })
        }),
        Case::new("Transpose", |d| {
            let dims = d.dims_or_empty(0..=4, 3);
            let x = d.uniform(&dims, -2.0, 2.0);
            let perm: Vec<i64> = d
                .permutation(dims.len())
                .into_iter()
                .map(|a| a as i64)
                .collect();
            let perm = d.index(&perm);
            instance(vec![x], format!("perm {perm:?}"), move |xs| {
                output(OpCall::new("Transpose").input(&xs[0]).input(&perm), 0)
            })
        }),
        // 2 or 3 values, of sizes 0 to 3 along a random axis.
        Case::new("ConcatV2", |d| {
            let base = d.dims_or_empty(1..=3, 3);
            let axis = d.below(base.len());
            let xs: Vec<Tensor> = (0..d.size(2..=3))
                .map(|_| {
                    let mut dims = base.clone();
                    dims[axis] = d.size(0..=3);
                    d.uniform(&dims, -2.0, 2.0)
                })
                .collect();
            let axis = d.maybe_negative(axis, base.len());
            let axis = d.index_scalar(axis);
            instance(xs, format!("axis {axis:?}"), move |xs| {
                output(OpCall::new("ConcatV2").input_list(xs).input(&axis), 0)
            })
        }),
        Case::new("Pack", |d| {
            let dims = d.dims_or_empty(0..=2, 3);
            let xs: Vec<Tensor> = (0..d.size(1..=3))
                .map(|_| d.uniform(&dims, -2.0, 2.0))
                .collect();
            let axis = d.below(dims.len() + 1);
            let axis = d.maybe_negative(axis, dims.len() + 1);
            instance(xs, format!("axis {axis}"), move |xs| {
                output(OpCall::new("Pack").input_list(xs).attr("axis", axis), 0)
            })
        }),
        // One output, or the sum of all (AddN) so that every output's
        // gradient flows.
        Case::new("Unpack", |d| {
            let dims = d.dims(1..=3, 1..=3);
            let x = d.uniform(&dims, -2.0, 2.0);
            let axis = d.below(dims.len());
            let num = dims[axis];
            let axis = d.maybe_negative(axis, dims.len());
            let pick = (d.coin()).then(|| d.below(num));
            let about = format!("axis {axis}, num {num}, output {pick:?} (None: AddN of all)");
            instance(vec![x], about, move |xs| {
                let call = OpCall::new("Unpack").input(&xs[0]);
                let outputs = call.attr("num", num as i64).attr("axis", axis).run()?;
                match pick {
                    Some(k) => Ok(outputs[k].clone()),
                    None => output(OpCall::new("AddN").input_list(outputs), 0),
                }
            })
        }),
        Case::new("Tile", |d| {
            let dims = d.dims_or_empty(0..=3, 2);
            let x = d.uniform(&dims, -2.0, 2.0);
            // Now and then 0: an empty output.
            let multiples: Vec<i64> = dims
                .iter()
                .map(|_| {
                    if d.below(8) == 0 {
                        0
                    } else {
                        d.size(1..=2) as i64
                    }
                })
                .collect();
            let multiples = d.index(&multiples);
            instance(vec![x], format!("multiples {multiples:?}"), move |xs| {
                output(OpCall::new("Tile").input(&xs[0]).input(&multiples), 0)
            })
        }),
        // To a shape it broadcasts to.
        Case::new("BroadcastTo", |d| {
            let target = d.dims_or_empty(0..=3, 3);
            // A suffix of the target, some sizes 1.
            let keep = d.below(target.len() + 1);
            let dims: Vec<usize> = target[target.len() - keep..]
                .iter()
                .map(|&t| if d.coin() { 1 } else { t })
                .collect();
            let x = d.uniform(&dims, -2.0, 2.0);
            let shape: Vec<i64> = target.iter().map(|&s| s as i64).collect();
            let shape = d.index(&shape);
            instance(vec![x], format!("shape {shape:?}"), move |xs| {
                output(OpCall::new("BroadcastTo").input(&xs[0]).input(&shape), 0)
            })
        }),
        // The value is the float input.
        Case::new("Fill", |d| {
            let dims: Vec<i64> = d
                .dims_or_empty(0..=3, 3)
                .iter()
                .map(|&s| s as i64)
                .collect();
            let dims = d.index(&dims);
            let value = d.uniform(&[], -2.0, 2.0);
            instance(vec![value], format!("dims {dims:?}"), move |xs| {
                output(OpCall::new("Fill").input(&dims).input(&xs[0]), 0)
            })
        }),
        // A random window; a size of -1 runs to the end.
        Case::new("Slice", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            let x = d.uniform(&dims, -2.0, 2.0);
            let begin: Vec<i64> = dims.iter().map(|&s| d.below(s + 1) as i64).collect();
            let size: Vec<i64> = dims
                .iter()
                .zip(&begin)
                .map(|(&s, &b)| {
                    let rest = s - b as usize;
                    // (TensorFlow refuses -1 for an empty dimension.)
                    if s > 0 && d.below(4) == 0 {
                        -1
                    } else {
                        d.below(rest + 1) as i64
                    }
                })
                .collect();
            let int64 = d.coin();
            let (begin, size) = (index(&begin, int64), index(&size, int64));
            instance(
                vec![x],
                format!("begin {begin:?}, size {size:?}"),
                move |xs| {
                    output(
                        OpCall::new("Slice")
                            .input(&xs[0])
                            .input(&begin)
                            .input(&size),
                        0,
                    )
                },
            )
        }),
        Case::new("Pad", |d| {
            let dims = d.dims_or_empty(0..=3, 2);
            let x = d.uniform(&dims, -2.0, 2.0);
            let paddings: Vec<i64> = (0..2 * dims.len()).map(|_| d.below(2) as i64).collect();
            let paddings = if d.coin() {
                Tensor::from_vec([dims.len(), 2], paddings).unwrap()
            } else {
                let paddings = paddings.iter().map(|&p| p as i32).collect();
                Tensor::from_vec([dims.len(), 2], paddings).unwrap()
            };
            instance(vec![x], format!("paddings {paddings:?}"), move |xs| {
                output(OpCall::new("Pad").input(&xs[0]).input(&paddings), 0)
            })
        }),
    ]
}

/// Selection, sums, casts, identities and the guide's ops.
fn other_cases() -> Vec<Case> {
    vec![
        Case::new("AddN", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            let xs = (0..d.size(1..=4))
                .map(|_| d.uniform(&dims, -2.0, 2.0))
                .collect();
            instance(xs, "", |xs| output(OpCall::new("AddN").input_list(xs), 0))
        }),
        // To float or double.
        Case::new("Cast", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            let x = d.uniform(&dims, -2.0, 2.0);
            let to = if d.coin() { DType::F64 } else { DType::F32 };
            let truncate = d.coin();
            instance(
                vec![x],
                format!("DstT {to}, Truncate {truncate}"),
                move |xs| {
                    let call = OpCall::new("Cast").input(&xs[0]).attr("DstT", to);
                    output(call.attr("Truncate", truncate), 0)
                },
            )
        }),
        // The condition of the values' shape, a vector along their first
        // dimension, or a scalar.
        Case::new("Select", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            let cond_dims = match d.below(3) {
                0 if !dims.is_empty() => vec![dims[0]],
                1 => vec![],
                _ => dims.clone(),
            };
            let cond = d.bools(&cond_dims);
            let (t, e) = (d.uniform(&dims, -2.0, 2.0), d.uniform(&dims, -2.0, 2.0));
            selection("Select", cond, t, e)
        }),
        // The condition and both values broadcast.
        Case::new("SelectV2", |d| {
            let shapes = d.broadcasting(3);
            let cond = d.bools(&shapes[0]);
            let (t, e) = (
                d.uniform(&shapes[1], -2.0, 2.0),
                d.uniform(&shapes[2], -2.0, 2.0),
            );
            selection("SelectV2", cond, t, e)
        }),
        Case::new("Examples>MultiplexDense", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            let cond = d.bools(&dims);
            let (a, b) = (d.uniform(&dims, -2.0, 2.0), d.uniform(&dims, -2.0, 2.0));
            selection("Examples>MultiplexDense", cond, a, b)
        }),
        unary("Identity", -2.0, 2.0),
        // One output of several values of different shapes.
        Case::new("IdentityN", |d| {
            let xs: Vec<Tensor> = (0..d.size(1..=3))
                .map(|_| {
                    let dims = d.dims_or_empty(0..=2, 3);
                    d.uniform(&dims, -2.0, 2.0)
                })
                .collect();
            let pick = d.below(xs.len());
            instance(xs, format!("output {pick}"), move |xs| {
                output(OpCall::new("IdentityN").input_list(xs), pick)
            })
        }),
        // The shape attr: the input's, partly known, or of unknown rank.
        Case::new("PlaceholderWithDefault", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            let x = d.uniform(&dims, -2.0, 2.0);
            let shape = match d.below(3) {
                0 => ShapeValue::unknown_rank(),
                1 => {
                    let sizes: Vec<i64> = dims
                        .iter()
                        .map(|&s| if d.coin() { -1 } else { s as i64 })
                        .collect();
                    ShapeValue::from_sizes(&sizes)
                }
                _ => ShapeValue::from_sizes(&dims.iter().map(|&s| s as i64).collect::<Vec<_>>()),
            };
            instance(vec![x], format!("shape {shape}"), move |xs| {
                let call = OpCall::new("PlaceholderWithDefault").input(&xs[0]);
                output(call.attr("shape", shape.clone()), 0)
            })
        }),
        unary("Example", -2.0, 2.0),
        // The float input is a variable's handle: the checker assigns the
        // variable its perturbed values.
        Case::new("ReadVariableOp", |d| {
            let dims = d.dims_or_empty(0..=3, 3);
            let variable = Variable::new(d.uniform(&dims, -2.0, 2.0)).unwrap();
            let dtype = d.dtype;
            instance(vec![variable.handle().clone()], "", move |xs| {
                output(
                    OpCall::new("ReadVariableOp")
                        .input(&xs[0])
                        .attr("dtype", dtype),
                    0,
                )
            })
        }),
        // Not empty: an empty input has no first element to keep.
        Case::new("ZeroOutPolymorphic", |d| {
            let dims = d.dims(0..=3, 1..=3);
            instance(
                vec![d.uniform(&dims, -2.0, 2.0)],
                "",
                plain("ZeroOutPolymorphic"),
            )
        }),
    ]
}

/// Every case, family by family.
fn all_cases() -> Vec<Case> {
    [
        unary_cases(),
        binary_cases(),
        gradient_op_cases(),
        reduction_cases(),
        array_cases(),
        other_cases(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Ops with a registered gradient that have no case, and why.
const EXCLUDED: &[(&str, &str)] = &[
    // ZeroOut is int32 only, so no gradient ever flows into it; its
    // gradient function is the one registered for ZeroOutPolymorphic,
    // whose case checks it.
    (
        "ZeroOut",
        "int32 only; its gradient function is ZeroOutPolymorphic's, checked there",
    ),
];

// ---- Random draws ----

/// The random choices of one instance: a generator seeded from the
/// proptest case, and the float dtype of the instance.
struct Draw {
    rng: TestRng,
    dtype: DType,
}

impl Draw {
    fn new(seed: u64, dtype: DType) -> Draw {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        bytes[8..].copy_from_slice(&(!seed).to_le_bytes());
        Draw {
            rng: TestRng::from_seed(RngAlgorithm::XorShift, &bytes),
            dtype,
        }
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    /// A size in `sizes`.
    fn size(&mut self, sizes: RangeInclusive<usize>) -> usize {
        self.rng.random_range(sizes)
    }

    fn coin(&mut self) -> bool {
        self.rng.random_bool(0.5)
    }

    /// A shape of rank in `ranks`, each size in `sizes`.
    fn dims(&mut self, ranks: RangeInclusive<usize>, sizes: RangeInclusive<usize>) -> Vec<usize> {
        let rank = self.size(ranks);
        (0..rank).map(|_| self.size(sizes.clone())).collect()
    }

    /// A shape of rank in `ranks`, sizes from 1 to `max`, but one in eight
    /// with one size 0 (an empty tensor).
    fn dims_or_empty(&mut self, ranks: RangeInclusive<usize>, max: usize) -> Vec<usize> {
        let mut dims = self.dims(ranks, 1..=max);
        if !dims.is_empty() && self.below(8) == 0 {
            let axis = self.below(dims.len());
            dims[axis] = 0;
        }
        dims
    }

    /// `n` shapes that broadcast together: each a suffix of one shape of
    /// rank 0 to 3, some of its sizes made 1.
    fn broadcasting(&mut self, n: usize) -> Vec<Vec<usize>> {
        let base = self.dims(0..=3, 1..=3);
        (0..n)
            .map(|_| {
                let keep = self.below(base.len() + 1);
                let suffix = &base[base.len() - keep..];
                suffix
                    .iter()
                    .map(|&s| if self.below(3) == 0 { 1 } else { s })
                    .collect()
            })
            .collect()
    }

    /// `axis` (of `rank` axes), made negative half the time.
    fn maybe_negative(&mut self, axis: usize, rank: usize) -> i64 {
        if self.coin() {
            axis as i64 - rank as i64
        } else {
            axis as i64
        }
    }

    /// A random permutation of `0..n`.
    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut perm: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            perm.swap(i, self.below(i + 1));
        }
        perm
    }

    /// Random sizes whose product is `n`.
    fn factor(&mut self, mut n: usize) -> Vec<i64> {
        let rank = if n == 1 {
            self.below(4)
        } else {
            self.size(1..=3)
        };
        let mut shape = Vec::new();
        for _ in 1..rank {
            let divisors: Vec<usize> = (1..=n).filter(|&k| n.is_multiple_of(k)).collect();
            let k = divisors[self.below(divisors.len())];
            shape.push(k as i64);
            n /= k;
        }
        if rank > 0 {
            shape.push(n as i64);
        }
        shape
    }

    /// Uniform values in `[low, high)`, of the instance's dtype.
    fn uniform(&mut self, dims: &[usize], low: f64, high: f64) -> Tensor {
        let n = dims.iter().product();
        let values: Vec<f64> = (0..n).map(|_| self.rng.random_range(low..high)).collect();
        float(self.dtype, dims, &values)
    }

    /// Values of magnitude in `[low, high)` and random sign.
    fn signed(&mut self, dims: &[usize], low: f64, high: f64) -> Tensor {
        let n: usize = dims.iter().product();
        let values: Vec<f64> = (0..n)
            .map(|_| {
                let magnitude = self.rng.random_range(low..high);
                if self.coin() { -magnitude } else { magnitude }
            })
            .collect();
        float(self.dtype, dims, &values)
    }

    /// Tensors of these shapes whose values are all distinct, at least
    /// 0.1 apart (beyond any step the checker takes), in random order.
    fn spaced(&mut self, shapes: &[&[usize]]) -> Vec<Tensor> {
        let total: usize = shapes.iter().map(|s| s.iter().product::<usize>()).sum();
        let mut values: Vec<f64> = self
            .permutation(total)
            .into_iter()
            .map(|k| (k as f64 - total as f64 / 2.0) * 0.15 + self.rng.random_range(0.0..0.05))
            .collect();
        shapes
            .iter()
            .map(|dims| {
                let rest = values.split_off(dims.iter().product());
                let these = std::mem::replace(&mut values, rest);
                float(self.dtype, dims, &these)
            })
            .collect()
    }

    /// Random booleans.
    fn bools(&mut self, dims: &[usize]) -> Tensor {
        let n = dims.iter().product();
        Tensor::from_vec(dims, (0..n).map(|_| self.coin()).collect()).unwrap()
    }

    /// An index vector, int32 or int64.
    fn index(&mut self, values: &[i64]) -> Tensor {
        let int64 = self.coin();
        index(values, int64)
    }

    /// An index scalar, int32 or int64.
    fn index_scalar(&mut self, value: i64) -> Tensor {
        if self.coin() {
            Tensor::scalar(value)
        } else {
            Tensor::scalar(value as i32)
        }
    }
}

/// An index vector, int64 or int32.
fn index(values: &[i64], int64: bool) -> Tensor {
    if int64 {
        Tensor::from_vec([values.len()], values.to_vec()).unwrap()
    } else {
        Tensor::from_vec([values.len()], values.iter().map(|&v| v as i32).collect()).unwrap()
    }
}

/// A float or double tensor of `values`.
fn float(dtype: DType, dims: &[usize], values: &[f64]) -> Tensor {
    match dtype {
        DType::F64 => Tensor::from_vec(dims, values.to_vec()).unwrap(),
        _ => Tensor::from_vec(dims, values.iter().map(|&v| v as f32).collect()).unwrap(),
    }
}

/// A float or double tensor's values.
fn to_f64(t: &Tensor) -> Vec<f64> {
    match t.dtype() {
        DType::F64 => t.as_slice::<f64>().unwrap().to_vec(),
        _ => t
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|&v| f64::from(v))
            .collect(),
    }
}

/// For two shapes that broadcast, the flat indices into each of the two
/// elements every output element combines.
fn broadcast_pairs(x: &[usize], y: &[usize]) -> Vec<(usize, usize)> {
    let rank = x.len().max(y.len());
    let pad = |s: &[usize]| [vec![1; rank - s.len()], s.to_vec()].concat();
    let (x, y) = (pad(x), pad(y));
    let out: Vec<usize> = x.iter().zip(&y).map(|(a, b)| *a.max(b)).collect();
    (0..out.iter().product())
        .map(|mut flat| {
            let (mut xi, mut yi, mut x_stride, mut y_stride) = (0, 0, 1, 1);
            for axis in (0..rank).rev() {
                let i = flat % out[axis];
                flat /= out[axis];
                if x[axis] > 1 {
                    xi += i * x_stride;
                }
                if y[axis] > 1 {
                    yi += i * y_stride;
                }
                x_stride *= x[axis];
                y_stride *= y[axis];
            }
            (xi, yi)
        })
        .collect()
}

// ---- Running the cases ----

/// Random instances per case and dtype (`PROPTEST_CASES` overrides).
const RUNS: u32 = 16;

fn runs() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(RUNS)
}

/// The tolerance on the largest Jacobian difference.
fn tolerance(dtype: DType) -> f64 {
    if dtype == DType::F64 { 1e-6 } else { 2e-2 }
}

/// Checks one instance of `case` in `dtype`: a message naming the op,
/// dtype, inputs and error when the Jacobians differ.
fn check_instance(case: &Case, dtype: DType, seed: u64) -> std::result::Result<(), String> {
    let instance = (case.draw)(&mut Draw::new(seed, dtype));
    let describe = || {
        let xs: Vec<String> = instance.xs.iter().map(|x| format!("{x:?}")).collect();
        format!(
            "{} {dtype} (seed {seed}), xs [{}]{}{}",
            case.op,
            xs.join(", "),
            if instance.about.is_empty() { "" } else { ", " },
            instance.about
        )
    };
    let check: GradientCheck =
        compute_gradient(&*instance.f, &instance.xs).map_err(|e| format!("{}: {e}", describe()))?;
    // A float32 result (Cast's) of double inputs keeps float32's digits.
    let y = (instance.f)(&instance.xs).map_err(|e| format!("{}: {e}", describe()))?;
    let dtype = if y.dtype() == DType::F64 {
        dtype
    } else {
        DType::F32
    };
    let error = if case.relative {
        check.max_relative_error()
    } else {
        check.max_error()
    };
    // NaN fails too.
    if error.is_nan() || error >= tolerance(dtype) {
        let kind = if case.relative { "relative " } else { "" };
        return Err(format!("{}: {kind}error {error:e}; {check}", describe()));
    }
    Ok(())
}

/// Runs every case of `cases` in float64 and float32, [`RUNS`] random
/// instances each; panics listing every failure.
fn check_all(cases: Vec<Case>) {
    op_kernels::link();
    let mut failures = Vec::new();
    for case in &cases {
        for dtype in [DType::F64, DType::F32] {
            let config = Config {
                cases: runs(),
                failure_persistence: None,
                // A smaller seed is no simpler an instance.
                max_shrink_iters: 0,
                ..Config::default()
            };
            let mut runner = TestRunner::new(config);
            let result = runner.run(&any::<u64>(), |seed| {
                check_instance(case, dtype, seed).map_err(TestCaseError::fail)
            });
            if let Err(error) = result {
                failures.push(error.to_string());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn unary_math_gradients_match_central_differences() {
    check_all(unary_cases());
}

#[test]
fn broadcasting_binary_gradients_match_central_differences() {
    check_all(binary_cases());
}

#[test]
fn the_gradients_of_the_gradient_ops_match_central_differences() {
    check_all(gradient_op_cases());
}

#[test]
fn reduction_scan_and_matmul_gradients_match_central_differences() {
    check_all(reduction_cases());
}

#[test]
fn array_op_gradients_match_central_differences() {
    check_all(array_cases());
}

#[test]
fn selection_sum_cast_identity_and_guide_op_gradients_match_central_differences() {
    check_all(other_cases());
}

#[test]
fn every_differentiable_op_has_a_checker_case() {
    op_kernels::link();
    let registry = Registry::global();
    let differentiable: BTreeSet<&str> = registry
        .ops()
        .map(|op| op.def().name.as_str())
        .filter(|&name| {
            let gradient = registry.gradient(name).unwrap();
            gradient.is_some_and(|g| g.functions.is_some())
        })
        .collect();
    let cases = all_cases();
    let mut covered = BTreeSet::new();
    for case in &cases {
        assert!(covered.insert(case.op), "two cases for {}", case.op);
    }
    let excluded: BTreeSet<&str> = EXCLUDED.iter().map(|(op, _)| *op).collect();
    let missing: Vec<&str> = differentiable
        .iter()
        .filter(|op| !covered.contains(*op) && !excluded.contains(*op))
        .copied()
        .collect();
    assert!(
        missing.is_empty(),
        "ops with a registered gradient but no checker case (add one, or an exclusion saying why): {missing:?}"
    );
    let stale: Vec<&str> = covered
        .union(&excluded)
        .filter(|op| !differentiable.contains(*op))
        .copied()
        .collect();
    assert!(
        stale.is_empty(),
        "checker cases or exclusions for ops with no registered gradient: {stale:?}"
    );
    let overlap: Vec<&&str> = covered.intersection(&excluded).collect();
    assert!(
        overlap.is_empty(),
        "both a case and an exclusion: {overlap:?}"
    );
}

// ---- The checker itself ----

fn run(op: &str, xs: &[Tensor]) -> Result<Tensor> {
    let mut call = OpCall::new(op);
    for x in xs {
        call = call.input(x);
    }
    Ok(call.run()?.remove(0))
}

#[test]
fn a_wrong_gradient_is_caught() {
    op_kernels::link();
    // d/dx of x * x is 2x; the checker given x * stop(x), whose gradient is
    // x, finds a difference of x where the numeric Jacobian sees 2x.
    let x = float(DType::F64, &[3], &[0.5, 1.0, 2.0]);
    let check = compute_gradient(
        |xs| {
            let stopped = run("StopGradient", &xs[..1])?;
            run("Mul", &[xs[0].clone(), stopped])
        },
        &[x],
    )
    .unwrap();
    assert!((check.max_error() - 2.0).abs() < 1e-6, "{check}");
    assert!(check.to_string().starts_with("max error"), "{check}");
}

#[test]
fn jacobians_are_laid_out_as_tensorflow_does() {
    op_kernels::link();
    // y = x[0..2] * w: dy_j/dx_k at row k, column j.
    let x = float(DType::F64, &[2], &[1.0, 2.0]);
    let w = float(DType::F64, &[2], &[3.0, 5.0]);
    let check = compute_gradient_with_delta(|xs| run("Mul", xs), &[x, w], Some(1e-4)).unwrap();
    let dx = &check.theoretical[0];
    assert_eq!((dx.rows, dx.columns), (2, 2));
    assert_eq!(dx.values, [3.0, 0.0, 0.0, 5.0]);
    assert_eq!(check.theoretical[1].values, [1.0, 0.0, 0.0, 2.0]);
    assert!(check.max_error() < 1e-9, "{check}");
}

#[test]
fn integer_inputs_are_refused_with_a_message() {
    op_kernels::link();
    let x = Tensor::from_vec([2], vec![1i32, 2]).unwrap();
    let error = compute_gradient(|xs| run("Neg", xs), &[x]).unwrap_err();
    assert!(error.message().contains("x0 is int32"), "{error}");
}

#[test]
fn integer_variables_are_refused_with_a_message() {
    op_kernels::link();
    let variable = Variable::new(Tensor::from_vec([1], vec![3i32]).unwrap()).unwrap();
    let error =
        compute_gradient(|xs| run("Identity", xs), &[variable.handle().clone()]).unwrap_err();
    assert!(
        error.message().contains("x0 is a variable of int32"),
        "{error}"
    );
}

#[test]
fn variables_are_differentiated_through_their_reads_and_keep_their_value() {
    op_kernels::link();
    let variable = Variable::new(float(DType::F64, &[2], &[1.0, -3.0])).unwrap();
    let x = float(DType::F64, &[2], &[2.0, 0.5]);
    // y = read(v) * x
    let check = compute_gradient(
        |xs| {
            let read = OpCall::new("ReadVariableOp").input(&xs[0]);
            let v = output(read.attr("dtype", DType::F64), 0)?;
            run("Mul", &[v, xs[1].clone()])
        },
        &[variable.handle().clone(), x],
    )
    .unwrap();
    assert_eq!(check.theoretical[0].values, [2.0, 0.0, 0.0, 0.5]);
    assert_eq!(check.theoretical[1].values, [1.0, 0.0, 0.0, -3.0]);
    assert!(check.max_error() < 1e-9, "{check}");
    assert_eq!(
        variable.read().unwrap().as_slice::<f64>().unwrap(),
        [1.0, -3.0]
    );
}

#[test]
fn a_float32_result_of_float64_inputs_is_differenced_with_a_float32_step() {
    op_kernels::link();
    // Near 2, float32's spacing is 1.2e-7: a step of 1e-6 would see
    // differences off by up to 6%; the default step for a float result
    // (1e-3) keeps them within 1e-4.
    let x = float(DType::F64, &[4], &[1.9, -1.3, 1.7, -1.99]);
    let to_float = |xs: &[Tensor]| {
        output(
            OpCall::new("Cast").input(&xs[0]).attr("DstT", DType::F32),
            0,
        )
    };
    let check = compute_gradient(to_float, std::slice::from_ref(&x)).unwrap();
    assert!(check.max_error() < 1e-4, "{check}");
    let fine = compute_gradient_with_delta(to_float, &[x], Some(1e-6)).unwrap();
    assert!(fine.max_error() > 1e-3, "{fine}");
}

#[test]
fn relative_errors_are_absolute_below_one() {
    use op_autodiff::checker::Jacobian;
    let jacobian = |values: Vec<f64>| Jacobian {
        rows: 3,
        columns: 1,
        values,
    };
    let check = GradientCheck {
        theoretical: vec![jacobian(vec![200.0, -0.5, 0.0])],
        numeric: vec![jacobian(vec![202.0, -0.52, 0.0])],
    };
    assert_eq!(check.max_error(), 2.0);
    assert!((check.max_relative_error() - 0.02).abs() < 1e-12);
    let nan = GradientCheck {
        theoretical: vec![jacobian(vec![1.0, f64::NAN, 0.0])],
        numeric: vec![jacobian(vec![1.0, 0.0, 0.0])],
    };
    assert!(nan.max_relative_error().is_nan());
}
