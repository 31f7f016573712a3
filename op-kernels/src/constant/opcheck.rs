//! How opcheck (`op_core::testing`) draws `Const`, whose `value` attr (a
//! tensor) has no default the generic case could use, and why it skips
//! `Placeholder`.

use op_core::testing::{COMMON_TYPES, Case, Draw, OpCheckRegistration};
use op_core::{DType, Result, inventory};

/// Const: a random tensor of a random common dtype (its one kernel takes
/// any), and that dtype.
fn const_cases(d: &mut Draw<'_>) -> Result<Case> {
    let dtype = *d.choose(&COMMON_TYPES).unwrap_or(&DType::F32);
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
