//! The vector arithmetic of the hot loops (the direct convolutions, the
//! packed FULLY_CONNECTED), chosen once per call at run time.
//!
//! A loop is written once, generic over a [`MulAdd`] (`acc += a * b` on
//! `[f32; N]` lanes), as a [`WithMulAdd`]; [`dispatch`] runs it with
//! [`Fma`] (AVX2 and FMA: a fused multiply-add, eight lanes a register)
//! where the processor has both, and with [`Separate`] (SSE, x86-64's
//! baseline: a product then a sum, four lanes) otherwise. The loop is
//! inlined into a function compiled for AVX2 and FMA, so all of it, not
//! just the arithmetic, is compiled for them.
//!
//! The fused multiply-add rounds once where the separate ones round twice:
//! results differ from [`Separate`]'s in the last bits, as XNNPACK's (which
//! fuses too) differ from TensorFlow Lite's reference kernels.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m128, __m256, _mm_add_ps, _mm_fmadd_ps, _mm_loadu_ps, _mm_mul_ps, _mm_storeu_ps,
    _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_storeu_ps,
};

/// `acc += a * b`, lane by lane, over `[f32; N]`.
pub(super) trait MulAdd: Copy {
    /// `acc[l] += a[l] * b[l]` for every lane `l`.
    fn mul_add<const N: usize>(self, acc: &mut [f32; N], a: &[f32; N], b: &[f32; N]);

    /// `acc[l] += a * b[l]`: `a` broadcast to every lane.
    #[inline(always)]
    fn mul_add_scalar<const N: usize>(self, acc: &mut [f32; N], a: f32, b: &[f32; N]) {
        self.mul_add(acc, &[a; N], b);
    }
}

/// A product then a sum, each rounded, as the scalar code would: four
/// lanes at a time in SSE registers on x86-64, plain `f32` arithmetic
/// elsewhere or for lane counts that are not a multiple of four.
#[derive(Copy, Clone, Debug)]
pub(super) struct Separate;

impl MulAdd for Separate {
    /// Left to itself LLVM vectorizes the `[[f32; N]; M]` blocks of the
    /// callers poorly, mixing scalar and shuffled lanes; the casts are
    /// bytemuck's, and the only `unsafe` is calling the two arithmetic
    /// intrinsics.
    #[inline(always)]
    fn mul_add<const N: usize>(self, acc: &mut [f32; N], a: &[f32; N], b: &[f32; N]) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
        if N.is_multiple_of(4) {
            let (acc4, _) = acc.as_chunks_mut::<4>();
            let (a4, _) = a.as_chunks::<4>();
            let (b4, _) = b.as_chunks::<4>();
            for ((c, &x), &y) in acc4.iter_mut().zip(a4).zip(b4) {
                let [c_, x, y]: [__m128; 3] =
                    [bytemuck::cast(*c), bytemuck::cast(x), bytemuck::cast(y)];
                // SAFETY: the intrinsics need SSE, which this code is
                // compiled for (the cfg above: x86-64's baseline has it),
                // and take no pointers.
                *c = bytemuck::cast(unsafe { _mm_add_ps(c_, _mm_mul_ps(x, y)) });
            }
            return;
        }
        for l in 0..N {
            acc[l] += a[l] * b[l];
        }
    }
}

/// AVX2 and FMA, detected at run time: a value exists only where the
/// processor has both ([`Fma::detect`]), so its methods may use their
/// instructions.
#[cfg(target_arch = "x86_64")]
#[derive(Copy, Clone, Debug)]
pub(super) struct Fma(());

#[cfg(target_arch = "x86_64")]
impl Fma {
    /// The token, where the processor has AVX2 and FMA (never under Miri,
    /// which does not run their intrinsics). std caches the detection, so
    /// this costs a load and a test.
    #[inline]
    pub(super) fn detect() -> Option<Fma> {
        let has = !cfg!(miri)
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma");
        has.then_some(Fma(()))
    }
}

/// `acc += a * b` over eight lanes, fused.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn fma8(acc: &mut [f32; 8], a: &[f32; 8], b: &[f32; 8]) {
    // SAFETY: each pointer is to eight floats, borrowed for the call (the
    // unaligned loads and store need no alignment); the function's target
    // features enable the arithmetic.
    unsafe {
        let sum: __m256 = _mm256_fmadd_ps(
            _mm256_loadu_ps(a.as_ptr()),
            _mm256_loadu_ps(b.as_ptr()),
            _mm256_loadu_ps(acc.as_ptr()),
        );
        _mm256_storeu_ps(acc.as_mut_ptr(), sum);
    }
}

/// `acc += a * b` over four lanes, fused.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn fma4(acc: &mut [f32; 4], a: &[f32; 4], b: &[f32; 4]) {
    // SAFETY: as in `fma8`, with four floats.
    unsafe {
        let sum = _mm_fmadd_ps(
            _mm_loadu_ps(a.as_ptr()),
            _mm_loadu_ps(b.as_ptr()),
            _mm_loadu_ps(acc.as_ptr()),
        );
        _mm_storeu_ps(acc.as_mut_ptr(), sum);
    }
}

#[cfg(target_arch = "x86_64")]
impl MulAdd for Fma {
    /// Eight lanes at a time, then four, then one (`f32::mul_add`, fused
    /// as well).
    #[inline(always)]
    fn mul_add<const N: usize>(self, acc: &mut [f32; N], a: &[f32; N], b: &[f32; N]) {
        let (acc8, acc_rest) = acc.as_chunks_mut::<8>();
        let (a8, a_rest) = a.as_chunks::<8>();
        let (b8, b_rest) = b.as_chunks::<8>();
        for ((c, x), y) in acc8.iter_mut().zip(a8).zip(b8) {
            // SAFETY: `self` exists only where AVX2 and FMA were detected.
            unsafe { fma8(c, x, y) };
        }
        let (acc4, acc1) = acc_rest.as_chunks_mut::<4>();
        let (a4, a1) = a_rest.as_chunks::<4>();
        let (b4, b1) = b_rest.as_chunks::<4>();
        for ((c, x), y) in acc4.iter_mut().zip(a4).zip(b4) {
            // SAFETY: as above.
            unsafe { fma4(c, x, y) };
        }
        for ((c, &x), &y) in acc1.iter_mut().zip(a1).zip(b1) {
            *c = x.mul_add(y, *c);
        }
    }
}

/// A loop generic over its [`MulAdd`], for [`dispatch`].
pub(super) trait WithMulAdd {
    /// What the loop returns.
    type Output;

    /// Runs the loop with `arith`. Mark it `#[inline(always)]`, and what
    /// it calls too: only what is inlined into [`dispatch`]'s AVX2
    /// function is compiled for AVX2.
    fn run<A: MulAdd>(self, arith: A) -> Self::Output;
}

/// Runs `op` with the best [`MulAdd`] this processor has.
#[inline]
pub(super) fn dispatch<W: WithMulAdd>(op: W) -> W::Output {
    #[cfg(target_arch = "x86_64")]
    if let Some(fma) = Fma::detect() {
        // SAFETY: `fma` exists only where AVX2 and FMA were detected,
        // the features `run_fma` is compiled for.
        return unsafe { run_fma(op, fma) };
    }
    op.run(Separate)
}

/// `op.run(fma)`, compiled for AVX2 and FMA (with everything it inlines).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn run_fma<W: WithMulAdd>(op: W, fma: Fma) -> W::Output {
    op.run(fma)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Equal bits, or both NaN (whose payloads may differ).
    fn same(x: f32, y: f32) -> bool {
        x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
    }

    /// `acc + a * b` lane by lane, as each arithmetic rounds it.
    fn check<A: MulAdd, const N: usize>(
        arith: A,
        fused: bool,
        acc: [f32; N],
        a: [f32; N],
        b: [f32; N],
    ) {
        let mut got = acc;
        arith.mul_add(&mut got, &a, &b);
        for l in 0..N {
            let want = if fused {
                a[l].mul_add(b[l], acc[l])
            } else {
                acc[l] + a[l] * b[l]
            };
            assert!(
                same(got[l], want),
                "N = {N}, lane {l}: {} vs {want}",
                got[l]
            );
        }
        let mut got = acc;
        arith.mul_add_scalar(&mut got, a[0], &b);
        for l in 0..N {
            let want = if fused {
                a[0].mul_add(b[l], acc[l])
            } else {
                acc[l] + a[0] * b[l]
            };
            assert!(
                same(got[l], want),
                "N = {N}, lane {l}: {} vs {want}",
                got[l]
            );
        }
    }

    /// Every lane count the callers use, and odd ones (the tails).
    fn check_all<A: MulAdd>(arith: A, fused: bool, v: &[f32]) {
        fn arr<const N: usize>(v: &[f32], at: usize) -> [f32; N] {
            std::array::from_fn(|i| v[(at + i) % v.len()])
        }
        macro_rules! sizes {
            ($($n:literal)*) => {$(
                check::<A, $n>(arith, fused, arr(v, 0), arr(v, 7), arr(v, 13));
            )*};
        }
        sizes!(1 3 4 5 7 8 9 12 13 16 20 31 32);
    }

    fn values() -> impl Strategy<Value = Vec<f32>> {
        prop::collection::vec(prop_oneof![-1e3f32..1e3, prop::num::f32::ANY], 1..64)
    }

    proptest! {
        /// The SSE path (an `unsafe` block; CI runs this under Miri) and
        /// the scalar arithmetic agree bit for bit.
        #[test]
        fn separate_matches_scalar_arithmetic(v in values()) {
            check_all(Separate, false, &v);
        }

        /// The AVX2 path matches `f32::mul_add`, bit for bit.
        #[test]
        #[cfg_attr(miri, ignore)]
        fn fma_matches_scalar_fused_arithmetic(v in values()) {
            #[cfg(target_arch = "x86_64")]
            match Fma::detect() {
                Some(fma) => check_all(fma, true, &v),
                None => println!("no AVX2 and FMA here: the fused path is not tested"),
            }
        }
    }
}
