//! How opcheck (`op_core::testing`) draws valid inputs for `Cumsum` and
//! `Cumprod`, whose `axis` must be a scalar naming one of the input's
//! dimensions (the generic case seldom draws one). The four reductions'
//! axes are drawn well by the generic case.

use op_core::testing::{Case, Draw, OpCheckRegistration};
use op_core::{DType, Result, Tensor, inventory};

/// Cumsum and Cumprod: the generic case, the input at least a vector, and
/// `axis` a scalar in `-rank..rank`.
fn scan_cases(d: &mut Draw<'_>) -> Result<Case> {
    let mut case = d.generic()?;
    let input = case
        .tensor(0)
        .cloned()
        .unwrap_or_else(|| Tensor::scalar(0.0f32));
    if input.rank() == 0 {
        let n = d.size(1..=4);
        let vector = d.tensor(input.dtype(), &[n])?;
        case.set_input(0, vector)?;
    }
    let rank = case.tensor(0).map_or(1, Tensor::rank) as i64;
    let axis = d.int(-rank..=rank - 1);
    let dtype = case.tensor(1).map_or(DType::I32, Tensor::dtype);
    case.set_input(1, d.int_tensor(dtype, &[], &[axis])?)?;
    Ok(case)
}

inventory::submit! { OpCheckRegistration::generator("Cumsum", scan_cases, file!(), line!()) }
inventory::submit! { OpCheckRegistration::generator("Cumprod", scan_cases, file!(), line!()) }
