//! The gradient checker (TensorFlow's `tf.test.compute_gradient`, the
//! guide's step 5): the Jacobian that the registered gradients give, and
//! the one central differences give, side by side.
//!
//! For a function `f` of tensors `xs` to one tensor `y`, both Jacobians
//! are, per `x`, a matrix of `x.num_elements()` rows and
//! `y.num_elements()` columns (row `k`, column `j` is `dy_j / dx_k`), as
//! TensorFlow lays them out:
//!
//! - the **theoretical** one comes from one forward run on a persistent
//!   [`GradientTape`] and one backward pass per element of `y`, started
//!   from a one-hot gradient;
//! - the **numeric** one from `(f(x + delta) - f(x - delta)) / (2 delta)`,
//!   perturbing one element at a time.
//!
//! Their largest difference ([`GradientCheck::max_error`]) is small when
//! the gradients are right: about `delta²` times the third derivative for
//! smooth functions, plus rounding (float32 needs a looser bound). Where
//! derivatives grow large (products, powers), rounding grows with them:
//! [`GradientCheck::max_relative_error`] measures the difference relative
//! to the entries.
//!
//! An `x` may also be a variable's handle (a `resource` tensor): its rows
//! are the elements of the variable's value, the tape's gradient for the
//! handle gives the theoretical Jacobian, and the numeric one assigns the
//! perturbed values to the variable (its value is assigned back after),
//! so `f` reads it with `ReadVariableOp` as a model would.
//!
//! ```
//! use op_autodiff::checker::compute_gradient;
//! use op_core::Tensor;
//! use op_kernels::math::{Mul, Sin};
//! # op_kernels::link();
//!
//! // f(x) = sin(x) * x
//! let x = Tensor::from_vec([3], vec![0.5f64, -1.0, 2.0])?;
//! let check = compute_gradient(|xs| Mul::call(Sin::call(&xs[0]).run()?, &xs[0]).run(), &[x])?;
//! assert!(check.max_error() < 1e-8, "{check}");
//! # Ok::<(), op_core::Error>(())
//! ```

use std::fmt;
use std::sync::Arc;

use op_core::testing::GradientComparison;
use op_core::{DType, Error, ResourceHandle, Result, Runtime, Tensor, bf16, f16};
use op_kernels::variable::Var;

use crate::symbolic::Unconnected;
use crate::tape::{GradientOptions, GradientTape};

/// A Jacobian of one `y` with respect to one `x`: `rows` elements of `x`
/// by `columns` elements of `y`, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Jacobian {
    /// Elements of `x`.
    pub rows: usize,
    /// Elements of `y`.
    pub columns: usize,
    /// `dy_j / dx_k` at `k * columns + j`.
    pub values: Vec<f64>,
}

impl Jacobian {
    fn zeros(rows: usize, columns: usize) -> Jacobian {
        Jacobian {
            rows,
            columns,
            values: vec![0.0; rows * columns],
        }
    }

    /// `dy_column / dx_row`.
    pub fn get(&self, row: usize, column: usize) -> f64 {
        self.values[row * self.columns + column]
    }
}

/// What [`compute_gradient`] found: per `x`, the theoretical and the
/// numeric Jacobian.
#[derive(Clone, Debug, PartialEq)]
pub struct GradientCheck {
    /// From the registered gradients, one per `x`.
    pub theoretical: Vec<Jacobian>,
    /// From central differences, one per `x`.
    pub numeric: Vec<Jacobian>,
}

impl GradientCheck {
    /// The largest absolute difference between the two Jacobians (NaN
    /// when either holds a NaN where the other does not).
    pub fn max_error(&self) -> f64 {
        self.max_scaled_error(|_, _| 1.0)
    }

    /// The largest difference between the two Jacobians relative to the
    /// larger of the two entries, where that exceeds 1 in magnitude
    /// (absolute below): `|t - n| / max(1, |t|, |n|)`, NaN as in
    /// [`max_error`](Self::max_error). For functions whose derivatives
    /// grow large (products, powers), where central differences lose
    /// digits in proportion to the values.
    ///
    /// ```
    /// use op_autodiff::checker::{GradientCheck, Jacobian};
    ///
    /// let jacobian = |values: Vec<f64>| Jacobian { rows: 2, columns: 1, values };
    /// let check = GradientCheck {
    ///     theoretical: vec![jacobian(vec![1000.0, 0.5])],
    ///     numeric: vec![jacobian(vec![1001.0, 0.25])],
    /// };
    /// assert_eq!(check.max_error(), 1.0);
    /// assert_eq!(check.max_relative_error(), 0.25);
    /// ```
    pub fn max_relative_error(&self) -> f64 {
        self.max_scaled_error(|a, b| a.abs().max(b.abs()).max(1.0))
    }

    /// The largest `|a - b| / scale(a, b)` over the entries `a`, `b` of
    /// the two Jacobians (NaN where one entry is NaN and the other not).
    fn max_scaled_error(&self, scale: impl Fn(f64, f64) -> f64) -> f64 {
        let mut worst = 0.0f64;
        for (t, n) in self.theoretical.iter().zip(&self.numeric) {
            for (&a, &b) in t.values.iter().zip(&n.values) {
                let error = (a - b).abs();
                if error.is_nan() && !(a.is_nan() && b.is_nan()) {
                    return f64::NAN;
                }
                worst = worst.max(error / scale(a, b));
            }
        }
        worst
    }

    /// Where the largest difference is: `(x, row, column)`.
    pub fn worst(&self) -> Option<(usize, usize, usize)> {
        let mut worst: Option<(f64, usize, usize, usize)> = None;
        for (i, (t, n)) in self.theoretical.iter().zip(&self.numeric).enumerate() {
            for (at, (a, b)) in t.values.iter().zip(&n.values).enumerate() {
                let error = (a - b).abs();
                let error = if error.is_nan() { f64::INFINITY } else { error };
                if worst.is_none_or(|w| error > w.0) {
                    worst = Some((error, i, at / t.columns.max(1), at % t.columns.max(1)));
                }
            }
        }
        worst.map(|(_, i, row, column)| (i, row, column))
    }
}

impl fmt::Display for GradientCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "max error {:e}", self.max_error())?;
        if let Some((i, row, column)) = self.worst() {
            write!(
                f,
                " at x{i}[{row}] -> y[{column}]: theoretical {}, numeric {}",
                self.theoretical[i].get(row, column),
                self.numeric[i].get(row, column)
            )?;
        }
        Ok(())
    }
}

/// The theoretical and numeric Jacobians of `f` at `xs` (see the
/// [module docs](self)), with the default `delta`: `1e-6` where `x` and
/// `y` are both float64, else `1e-3` (TensorFlow's `1/1024` in spirit: a
/// float32 `y` of float64 inputs keeps only float32's digits of each
/// difference, which a step of `1e-6` would drown in rounding).
pub fn compute_gradient<F>(f: F, xs: &[Tensor]) -> Result<GradientCheck>
where
    F: Fn(&[Tensor]) -> Result<Tensor>,
{
    compute_gradient_with_delta(f, xs, None)
}

/// [`compute_gradient`] with this `delta` for the central differences
/// (`None`: the dtypes' default).
pub fn compute_gradient_with_delta<F>(
    f: F,
    xs: &[Tensor],
    delta: Option<f64>,
) -> Result<GradientCheck>
where
    F: Fn(&[Tensor]) -> Result<Tensor>,
{
    let values = xs
        .iter()
        .enumerate()
        .map(|(i, x)| value_of(x, i))
        .collect::<Result<Vec<_>>>()?;
    for (i, (x, value)) in xs.iter().zip(&values).enumerate() {
        if !is_real_float(value.dtype()) {
            let what = if x.dtype() == DType::Resource {
                format!("a variable of {}", value.dtype())
            } else {
                value.dtype().to_string()
            };
            return Err(Error::invalid_argument(format!(
                "the gradient checker differentiates float tensors and variables (half, bfloat16, float, double), but x{i} is {what}"
            )));
        }
    }
    let (theoretical, y_dtype) = theoretical_jacobians(&f, xs, &values)?;
    let numeric = values
        .iter()
        .enumerate()
        .map(|(i, value)| {
            let both_double = value.dtype() == DType::F64 && y_dtype == DType::F64;
            let delta = delta.unwrap_or(if both_double { 1e-6 } else { 1e-3 });
            numeric_jacobian(&f, xs, i, value, delta)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(GradientCheck {
        theoretical,
        numeric,
    })
}

/// [`compute_gradient`] as the gradient checker of op-core's per-op
/// contract tests: the largest difference relative to the entries
/// ([`GradientCheck::max_relative_error`]) and where it is.
///
/// ```
/// use op_core::testing::GradientChecker;
/// use op_core::{OpCall, Tensor};
/// # op_kernels::link();
///
/// let checker = op_autodiff::checker::opcheck_gradients;
/// let x = Tensor::from_vec([2], vec![0.5f64, -1.0])?;
/// let sin = |xs: &[Tensor]| Ok(OpCall::new("Sin").input(&xs[0]).run()?.remove(0));
/// let comparison = checker.compare(&sin, &[x])?;
/// assert!(comparison.max_error < 1e-8, "{}", comparison.detail);
/// # Ok::<(), op_core::Error>(())
/// ```
///
/// With the `testing` feature of op-core, `op_core::testing::opcheck("Op")
/// .gradient_checker(op_autodiff::checker::opcheck_gradients)` compares
/// every registered gradient it reaches with this.
pub fn opcheck_gradients(
    f: &dyn Fn(&[Tensor]) -> Result<Tensor>,
    xs: &[Tensor],
) -> Result<GradientComparison> {
    let check = compute_gradient(f, xs)?;
    Ok(GradientComparison {
        max_error: check.max_relative_error(),
        detail: check.to_string(),
    })
}

fn is_real_float(dtype: DType) -> bool {
    matches!(dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
}

/// The variable whose handle `x` is; `None` for a tensor of values.
fn variable(x: &Tensor) -> Result<Option<Arc<Var>>> {
    if x.dtype() != DType::Resource {
        return Ok(None);
    }
    let handle: ResourceHandle = x.scalar_value()?;
    let var = Runtime::global()
        .resource_manager()
        .resource::<Var>(&handle)?;
    Ok(Some(var))
}

/// Input `x` (number `i`)'s value: itself, or its variable's.
fn value_of(x: &Tensor, i: usize) -> Result<Tensor> {
    match variable(x)? {
        None => Ok(x.clone()),
        Some(var) => var.value().ok_or_else(|| {
            Error::failed_precondition(format!(
                "the gradient checker reads x{i}, a variable that has no value"
            ))
        }),
    }
}

/// One forward run on a persistent tape, then one backward pass per
/// element of `y` from a one-hot gradient: column `j` of each Jacobian;
/// and `y`'s dtype. `values` are the inputs' values (a variable's for its
/// handle).
fn theoretical_jacobians<F>(
    f: &F,
    xs: &[Tensor],
    values: &[Tensor],
) -> Result<(Vec<Jacobian>, DType)>
where
    F: Fn(&[Tensor]) -> Result<Tensor>,
{
    let tape = GradientTape::persistent();
    let mut watched = xs.to_vec();
    for x in &mut watched {
        tape.watch(x);
    }
    let y = f(&watched)?;
    tape.stop();
    if !is_real_float(y.dtype()) {
        return Err(Error::invalid_argument(format!(
            "the gradient checker differentiates a float result, but f gave {}",
            y.dtype()
        )));
    }
    let columns = y.num_elements();
    let mut jacobians: Vec<Jacobian> = values
        .iter()
        .map(|x| Jacobian::zeros(x.num_elements(), columns))
        .collect();
    for j in 0..columns {
        let mut one_hot = vec![0.0; columns];
        one_hot[j] = 1.0;
        let seed = from_f64(y.dtype(), y.dims(), &one_hot)?;
        let options = GradientOptions::new()
            .output_gradients([Some(seed)])
            .unconnected(Unconnected::Zeros);
        let grads = tape.gradient_with(&y, &watched, options)?;
        for (jacobian, grad) in jacobians.iter_mut().zip(grads) {
            let grad = grad.ok_or_else(|| Error::internal("an unconnected source got no zeros"))?;
            for (k, value) in to_f64(&grad)?.into_iter().enumerate() {
                jacobian.values[k * columns + j] = value;
            }
        }
    }
    Ok((jacobians, y.dtype()))
}

/// Row by row of `x_i` (whose value is `value`): `f` at `x_i[k] ± delta`.
/// A variable's value is assigned the perturbed values, and its own value
/// again afterwards.
fn numeric_jacobian<F>(
    f: &F,
    xs: &[Tensor],
    i: usize,
    value: &Tensor,
    delta: f64,
) -> Result<Jacobian>
where
    F: Fn(&[Tensor]) -> Result<Tensor>,
{
    match variable(&xs[i])? {
        None => {
            let mut inputs = xs.to_vec();
            differences(value, delta, |x| {
                inputs[i] = x;
                f(&inputs)
            })
        }
        Some(var) => {
            let jacobian = differences(value, delta, |x| {
                var.assign(x, true)?;
                f(xs)
            });
            var.assign(value.clone(), true)?;
            jacobian
        }
    }
}

/// The central differences of `at` around `value`, one row per element
/// of `value`.
fn differences(
    value: &Tensor,
    delta: f64,
    mut at: impl FnMut(Tensor) -> Result<Tensor>,
) -> Result<Jacobian> {
    let base = to_f64(value)?;
    let mut evaluate = |k: usize, step: f64| -> Result<Vec<f64>> {
        let mut values = base.clone();
        values[k] += step;
        to_f64(&at(from_f64(value.dtype(), value.dims(), &values)?)?)
    };
    let mut jacobian: Option<Jacobian> = None;
    for k in 0..base.len() {
        let plus = evaluate(k, delta)?;
        let minus = evaluate(k, -delta)?;
        let jacobian = jacobian.get_or_insert_with(|| Jacobian::zeros(base.len(), plus.len()));
        for (j, (p, m)) in plus.iter().zip(&minus).enumerate() {
            jacobian.values[k * jacobian.columns + j] = (p - m) / (2.0 * delta);
        }
    }
    match jacobian {
        Some(jacobian) => Ok(jacobian),
        // An empty x: no rows; the columns are y's elements.
        None => Ok(Jacobian::zeros(0, to_f64(&at(value.clone())?)?.len())),
    }
}

/// A float tensor's elements as `f64`.
fn to_f64(t: &Tensor) -> Result<Vec<f64>> {
    Ok(match t.dtype() {
        DType::F64 => t.as_slice::<f64>()?.to_vec(),
        DType::F32 => t.as_slice::<f32>()?.iter().map(|&v| f64::from(v)).collect(),
        DType::F16 => t.as_slice::<f16>()?.iter().map(|v| v.to_f64()).collect(),
        DType::BF16 => t.as_slice::<bf16>()?.iter().map(|v| v.to_f64()).collect(),
        other => {
            return Err(Error::invalid_argument(format!(
                "the gradient checker reads float tensors, not {other}"
            )));
        }
    })
}

/// A float tensor of `dtype` and `dims` holding `values` (rounded).
fn from_f64(dtype: DType, dims: &[usize], values: &[f64]) -> Result<Tensor> {
    match dtype {
        DType::F64 => Tensor::from_vec(dims, values.to_vec()),
        DType::F32 => Tensor::from_vec(dims, values.iter().map(|&v| v as f32).collect()),
        DType::F16 => Tensor::from_vec(dims, values.iter().map(|&v| f16::from_f64(v)).collect()),
        DType::BF16 => Tensor::from_vec(dims, values.iter().map(|&v| bf16::from_f64(v)).collect()),
        other => Err(Error::invalid_argument(format!(
            "the gradient checker writes float tensors, not {other}"
        ))),
    }
}
