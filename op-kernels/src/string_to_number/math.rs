//! The conversion of `StringToNumber`, one element at a time, for every
//! device's kernel to share.

use std::str::FromStr;

use op_core::{Code, Error, Result};

/// The arithmetic of one element: the number `bytes` spell (surrounding
/// whitespace allowed), or TensorFlow's error.
pub fn parse<T: FromStr>(bytes: &[u8]) -> Result<T> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.trim().parse::<T>().ok())
        .ok_or_else(|| {
            Error::new(
                Code::InvalidArgument,
                // The string is the caller's: quoted at a bounded length.
                format!(
                    "StringToNumberOp could not correctly convert string: {}",
                    op_core::error::capped(bytes)
                ),
            )
        })
}
