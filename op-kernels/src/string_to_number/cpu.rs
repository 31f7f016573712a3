//! The CPU kernel of `StringToNumber`: [`parse`] over the input, one kernel
//! per `out_type`.

use std::str::FromStr;

use op_core::{Element, KernelContext, Result, kernel};

use super::math::parse;
use super::ops::StringToNumber;

#[kernel(op = StringToNumber, types(out_type = [f32, f64, i32, i64, u32, u64]))]
fn string_to_number<T: Element + FromStr>(ctx: &mut KernelContext<'_>) -> Result<()> {
    ctx.try_unary_to(0, 0, COST_PER_STRING, |bytes: &Vec<u8>| parse::<T>(bytes))
}

/// Parsing a short number: some tens of cycles.
const COST_PER_STRING: usize = 50;
