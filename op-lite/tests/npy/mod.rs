//! A reader of the `.npy` files under `tests/data/` (NumPy's format,
//! versions 1 to 3, C order), and the comparison with LiteRT's outputs.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A `.npy` array: its dtype (`<f4`, `<i4`, ...), shape and element bytes.
pub struct Npy {
    pub descr: String,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

/// The path of `tests/data/<name>`.
pub fn data_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Reads `tests/data/<name>`.
pub fn read(name: &str) -> Npy {
    let path = data_path(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse(&bytes).unwrap_or_else(|| panic!("{}: not a .npy file this reader reads", path.display()))
}

/// Parses a `.npy` file's bytes.
pub fn parse(bytes: &[u8]) -> Option<Npy> {
    if bytes.get(..6)? != b"\x93NUMPY" {
        return None;
    }
    let (len, start) = if *bytes.get(6)? == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes(bytes.get(8..12)?.try_into().ok()?) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(bytes.get(start..start + len)?).ok()?;
    if !header.contains("'fortran_order': False") {
        return None;
    }
    let field = |key: &str| {
        header
            .split(key)
            .nth(1)
            .map(|s| s.trim_start_matches([':', ' ']))
    };
    let descr = field("'descr'")?
        .trim_start_matches('\'')
        .split('\'')
        .next()?
        .to_string();
    let shape_text = field("'shape'")?
        .trim_start_matches('(')
        .split(')')
        .next()?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().ok())
        .collect::<Option<Vec<usize>>>()?;
    Some(Npy {
        descr,
        shape,
        data: bytes[start + len..].to_vec(),
    })
}

impl Npy {
    /// The elements as `f32`s (the file must hold `<f4`).
    pub fn f32(&self) -> Vec<f32> {
        assert_eq!(self.descr, "<f4");
        self.data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// The elements as `i32`s (the file must hold `<i4`).
    pub fn i32(&self) -> Vec<i32> {
        assert_eq!(self.descr, "<i4");
        self.data
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
}

/// Asserts `got` matches LiteRT's `want` to `rel` relative tolerance (on
/// `1 + |want|`, so that values near zero compare absolutely), exactly where
/// either is NaN or infinite.
#[track_caller]
pub fn assert_matches(what: &str, got: &[f32], want: &[f32], rel: f32) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= rel * (1.0 + w.abs());
        assert!(ok, "{what}, element {i}: op-lite {g}, LiteRT {w}");
    }
}
