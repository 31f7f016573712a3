//! How opcheck (`op_core::testing`) draws `StringToNumber`'s strings:
//! numbers its `out_type` holds (the generic case's strings are mostly
//! not, so that no case would run); opcheck's derived cases bring the
//! invalid ones.

use op_core::testing::{Case, Draw, OpCheckRegistration};
use op_core::{DType, Result, Tensor, inventory};

/// Numbers every output type holds.
const UNSIGNED: [&str; 5] = ["0", "7", "42", "255", "65535"];
/// Numbers the signed and float types hold too.
const SIGNED: [&str; 3] = ["-3", "-128", "-0"];
/// Numbers only the float types hold.
const FLOATS: [&str; 5] = ["1.5", "-2.25", "1e3", "inf", "nan"];

/// StringToNumber: strings of numbers the kernel's `out_type` holds.
fn string_to_number_cases(d: &mut Draw<'_>) -> Result<Case> {
    let out_type = d.kernel_dtype("out_type").unwrap_or(DType::F32);
    let mut pool: Vec<&str> = UNSIGNED.to_vec();
    if !matches!(out_type, DType::U32 | DType::U64) {
        pool.extend(SIGNED);
    }
    if out_type.is_float() {
        pool.extend(FLOATS);
    }
    let dims = d.dims(0..=3, 0..=3);
    let n: usize = dims.iter().product();
    let strings: Vec<&str> = (0..n).map(|_| *d.choose(&pool).unwrap_or(&"0")).collect();
    Ok(Case::new()
        .input(Tensor::strings(&dims, strings)?)
        .attr("out_type", out_type))
}

inventory::submit! {
    OpCheckRegistration::generator("StringToNumber", string_to_number_cases, file!(), line!())
}
