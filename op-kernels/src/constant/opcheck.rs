//! How opcheck (`op_core::testing`) draws `Const`, whose `value` attr (a
//! tensor) has no default the generic case could use, and why it skips
//! `Placeholder`.

use op_core::testing::{Case, Draw, OpCheckRegistration};
use op_core::{DType, Result, inventory};

/// The dtypes `Const` is drawn with (its one kernel takes any).
const DTYPES: [DType; 8] = [
    DType::F32,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::Bool,
    DType::String,
    DType::F16,
    DType::Complex64,
];

/// Const: a random tensor of a random dtype, and that dtype.
fn const_cases(d: &mut Draw<'_>) -> Result<Case> {
    let dtype = *d.choose(&DTYPES).unwrap_or(&DType::F32);
    let dims = d.dims(0..=3, 0..=3);
    let value = d.tensor(dtype, &dims)?.to_tensor_value()?;
    Ok(Case::new().attr("value", value).attr("dtype", dtype))
}

inventory::submit! { OpCheckRegistration::generator("Const", const_cases, file!(), line!()) }
inventory::submit! {
    OpCheckRegistration::skip(
        "Placeholder",
        "it only ever fails when run: it stands for a value a graph feeds (op-kernels' constant tests check its error)",
        file!(),
        line!()
    )
}
