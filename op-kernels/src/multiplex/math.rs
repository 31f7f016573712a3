//! The arithmetic of `Examples>MultiplexDense`, over elements and slices,
//! for every device's kernel to share.

/// `output[i] = if cond[i] { a[i] } else { b[i] }`; the three slices have
/// one length.
/// The arithmetic of one element: `a` where `cond`, else `b`.
pub fn select<T: Clone>(cond: &bool, a: &T, b: &T) -> T {
    if *cond { a.clone() } else { b.clone() }
}

/// The arithmetic over slices: `cond[i] ? a[i] : b[i]`, collected.
pub fn multiplex<T: Clone>(cond: &[bool], a: &[T], b: &[T]) -> Vec<T> {
    cond.iter()
        .zip(a.iter().zip(b))
        .map(|(c, (a, b))| select(c, a, b))
        .collect()
}
