//! What the math tests share: NumPy broadcasting written the plain way (an
//! index per output element), random broadcastable shapes, and running an
//! op twice, once on shared inputs and once on inputs handed over (so that
//! both the allocating and the in-place paths are checked).

#![allow(dead_code)] // not every test crate uses every helper

use op_core::{Element, OpCall, Result, Runtime, Tensor};
use proptest::prelude::*;

/// The shape `shapes` broadcast to, by NumPy's rules, or `None`.
pub fn broadcast_dims(shapes: &[&[usize]]) -> Option<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1; rank];
    for shape in shapes {
        for (j, &d) in shape.iter().enumerate() {
            let o = &mut out[rank - shape.len() + j];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    Some(out)
}

/// The element of an operand of shape `dims` that output element `index`
/// of a broadcast to `out` reads.
pub fn source_index(out: &[usize], dims: &[usize], mut index: usize) -> usize {
    let mut coords = vec![0; out.len()];
    for i in (0..out.len()).rev() {
        coords[i] = index % out[i];
        index /= out[i];
    }
    let skip = out.len() - dims.len();
    dims.iter().enumerate().fold(0, |acc, (j, &d)| {
        acc * d + if d == 1 { 0 } else { coords[skip + j] }
    })
}

/// `f` of the broadcast elements of `a` and `b`, with the output's shape.
pub fn naive_binary<A, B, U>(
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(&A, &B) -> U,
) -> (Vec<usize>, Vec<U>)
where
    A: Element,
    B: Element,
{
    let out = broadcast_dims(&[a.dims(), b.dims()]).expect("broadcastable shapes");
    let (xa, xb) = (a.as_slice::<A>().unwrap(), b.as_slice::<B>().unwrap());
    let count: usize = out.iter().product();
    let values = (0..count)
        .map(|i| {
            f(
                &xa[source_index(&out, a.dims(), i)],
                &xb[source_index(&out, b.dims(), i)],
            )
        })
        .collect();
    (out, values)
}

/// Shapes of `count` operands that broadcast together: a random output
/// shape (rank 0 to 4, sizes 0 to 3), and operands that keep a random
/// suffix of it with random dimensions set to 1.
pub fn broadcastable(count: usize) -> impl Strategy<Value = Vec<Vec<usize>>> {
    prop::collection::vec(prop_oneof![1 => Just(0usize), 8 => 1usize..4], 0..5).prop_flat_map(
        move |out| {
            let rank = out.len();
            let operand = (0..=rank, prop::collection::vec(any::<bool>(), rank)).prop_map({
                let out = out.clone();
                move |(keep, ones)| {
                    (rank - keep..rank)
                        .map(|i| if ones[i] { 1 } else { out[i] })
                        .collect::<Vec<usize>>()
                }
            });
            prop::collection::vec(operand, count)
        },
    )
}

/// A tensor of shape `dims` with values from `values`, cycled.
pub fn tensor<T: Element>(dims: &[usize], values: &[T]) -> Tensor {
    let count: usize = dims.iter().product();
    let data = (0..count)
        .map(|i| values[i % values.len()].clone())
        .collect();
    Tensor::from_vec(dims, data).unwrap()
}

/// Runs `op` on `inputs` (and `attrs`) on `runtime`, twice: with the
/// inputs shared (the caller keeps them) and handed over (a kernel may
/// write in their buffers). Both runs must agree, in result or in error;
/// returns the result.
pub fn run_both_ways(
    runtime: &Runtime,
    op: &str,
    inputs: &[Tensor],
    attrs: &[(&str, op_core::AttrValue)],
) -> Result<Tensor> {
    let call = |handed_over: bool| {
        let mut call = OpCall::new(op);
        for input in inputs {
            call = if handed_over {
                // A deep copy nobody else holds.
                call.input(fresh_copy(input))
            } else {
                call.input(input)
            };
        }
        for (name, value) in attrs {
            call = call.attr(name, value.clone());
        }
        call.run_on(runtime).map(|mut out| out.remove(0))
    };
    let shared = call(false);
    let handed_over = call(true);
    match (&shared, &handed_over) {
        (Ok(a), Ok(b)) => assert!(
            same_tensors(a, b),
            "{op}: shared inputs gave {a:?}, handed-over inputs {b:?}"
        ),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("{op}: shared inputs gave {shared:?}, handed-over inputs {handed_over:?}"),
    }
    shared
}

/// A copy of `t` in a buffer of its own.
pub fn fresh_copy(t: &Tensor) -> Tensor {
    let mut copy = t.clone();
    // Writing to a shared buffer copies it (copy-on-write).
    macro_rules! touch {
        ($($ty:ty),*) => {
            $(if copy.dtype() == <$ty as Element>::DTYPE {
                copy.as_slice_mut::<$ty>().unwrap();
                return copy;
            })*
        };
    }
    touch!(
        f32,
        f64,
        op_core::f16,
        op_core::bf16,
        i8,
        i16,
        i32,
        i64,
        u8,
        u16,
        u32,
        u64,
        bool,
        op_core::Complex64,
        op_core::Complex128,
        Vec<u8>,
        op_core::ResourceHandle
    );
    panic!("no copy for dtype {}", t.dtype())
}

/// Equal tensors, with NaN equal to NaN.
pub fn same_tensors(a: &Tensor, b: &Tensor) -> bool {
    if a == b {
        return true;
    }
    if a.dtype() != b.dtype() || a.dims() != b.dims() {
        return false;
    }
    macro_rules! nan_aware {
        ($($ty:ty),*) => {
            $(if a.dtype() == <$ty as Element>::DTYPE {
                let (x, y) = (a.as_slice::<$ty>().unwrap(), b.as_slice::<$ty>().unwrap());
                return x.iter().zip(y).all(|(x, y)| x == y || (x.is_nan() && y.is_nan()));
            })*
        };
    }
    nan_aware!(f32, f64, op_core::f16, op_core::bf16);
    false
}
