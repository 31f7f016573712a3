//! BATCH_MATMUL: a matrix product per batch, with the batch dimensions
//! broadcast and either operand optionally transposed (`adj_x`, `adj_y`).
//!
//! Semantics are TensorFlow Lite's `reference/batch_matmul.h` and
//! `tensorflow/lite/kernels/batch_matmul.cc`: operands of rank 2 to 5,
//! `lhs [..., M, K]` (`[..., K, M]` with `adj_x`), `rhs [..., K, N]`
//! (`[..., N, K]` with `adj_y`), batch dimensions broadcast by NumPy's
//! rule, output `[broadcast batch..., M, N]`. Float32; each product goes
//! through the private `gemm` module (`gemm.rs`) on strided views, so no scratch is needed.

use op_core::{Error, Result};

use super::common::{check_len, extend, num_elements, strides};
use super::gemm::{MatMut, MatRef, matmul};

/// The most dimensions of a BATCH_MATMUL operand (TensorFlow Lite's cap).
pub const MAX_BATCH_MATMUL_RANK: usize = 5;

/// Batch dimensions: the operand rank cap less the two matrix dimensions.
const BATCH_RANK: usize = MAX_BATCH_MATMUL_RANK - 2;

/// BATCH_MATMUL's options.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchMatMulParams {
    /// Use the lhs transposed (its last two dimensions swapped).
    pub adj_x: bool,
    /// Use the rhs transposed.
    pub adj_y: bool,
}

struct Geometry {
    m: usize,
    k: usize,
    n: usize,
    /// The batch dimensions of lhs, rhs and the output, extended.
    lhs_batch: [usize; BATCH_RANK],
    rhs_batch: [usize; BATCH_RANK],
    out_batch: [usize; BATCH_RANK],
    out_rank: usize,
}

fn geometry(lhs: &[usize], rhs: &[usize], params: &BatchMatMulParams) -> Result<Geometry> {
    for (what, shape) in [("lhs", lhs), ("rhs", rhs)] {
        if !(2..=MAX_BATCH_MATMUL_RANK).contains(&shape.len()) {
            return Err(Error::invalid_argument(format!(
                "BATCH_MATMUL: the {what} must have rank 2 to {MAX_BATCH_MATMUL_RANK}, got shape {shape}",
                shape = op_core::error::dims(shape)
            )));
        }
        num_elements(shape)?;
    }
    let (lr, lc) = (lhs[lhs.len() - 2], lhs[lhs.len() - 1]);
    let (rr, rc) = (rhs[rhs.len() - 2], rhs[rhs.len() - 1]);
    let (m, k) = if params.adj_x { (lc, lr) } else { (lr, lc) };
    let (k2, n) = if params.adj_y { (rc, rr) } else { (rr, rc) };
    if k != k2 {
        return Err(Error::invalid_argument(format!(
            "BATCH_MATMUL: the lhs {lhs} (adj_x {}) and rhs {rhs} (adj_y {}) disagree on the inner dimension ({k} vs {k2})",
            params.adj_x,
            params.adj_y,
            lhs = op_core::error::dims(lhs),
            rhs = op_core::error::dims(rhs)
        )));
    }
    let lhs_batch = extend::<BATCH_RANK>("the lhs batch", &lhs[..lhs.len() - 2])?;
    let rhs_batch = extend::<BATCH_RANK>("the rhs batch", &rhs[..rhs.len() - 2])?;
    let mut out_batch = [1; BATCH_RANK];
    for i in 0..BATCH_RANK {
        out_batch[i] = match (lhs_batch[i], rhs_batch[i]) {
            (a, b) if a == b => a,
            (1, b) => b,
            (a, 1) => a,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "BATCH_MATMUL: the batch dimensions of {lhs} and {rhs} are not broadcastable",
                    lhs = op_core::error::dims(lhs),
                    rhs = op_core::error::dims(rhs)
                )));
            }
        };
    }
    let g = Geometry {
        m,
        k,
        n,
        lhs_batch,
        rhs_batch,
        out_batch,
        out_rank: lhs.len().max(rhs.len()),
    };
    num_elements(&[num_elements(&g.out_batch)?, g.m, g.n])?;
    Ok(g)
}

impl Geometry {
    fn out_shape(&self) -> Vec<usize> {
        let mut out = self.out_batch[BATCH_RANK + 2 - self.out_rank..].to_vec();
        out.extend([self.m, self.n]);
        out
    }
}

/// BATCH_MATMUL's output shape.
///
/// ```
/// use op_lite::builtins::math::batch_matmul::{BatchMatMulParams, batch_matmul_shape};
/// let p = BatchMatMulParams { adj_x: false, adj_y: true };
/// assert_eq!(batch_matmul_shape(&[2, 1, 3, 4], &[5, 6, 4], &p).unwrap(), [2, 5, 3, 6]);
/// ```
pub fn batch_matmul_shape(
    lhs: &[usize],
    rhs: &[usize],
    params: &BatchMatMulParams,
) -> Result<Vec<usize>> {
    Ok(geometry(lhs, rhs, params)?.out_shape())
}

/// BATCH_MATMUL: `output[b] = op(lhs[b]) · op(rhs[b])` over the broadcast
/// batch, into `output` of [`batch_matmul_shape`]. Allocates nothing.
pub fn batch_matmul(
    params: &BatchMatMulParams,
    lhs_shape: &[usize],
    lhs: &[f32],
    rhs_shape: &[usize],
    rhs: &[f32],
    output: &mut [f32],
) -> Result<()> {
    let g = geometry(lhs_shape, rhs_shape, params)?;
    check_len("BATCH_MATMUL: the lhs", lhs.len(), lhs_shape)?;
    check_len("BATCH_MATMUL: the rhs", rhs.len(), rhs_shape)?;
    let out_batches = num_elements(&g.out_batch)?;
    if output.len() != out_batches * g.m * g.n {
        return Err(Error::invalid_argument(format!(
            "BATCH_MATMUL: the output has {} elements, its shape {} needs {}",
            output.len(),
            op_core::error::dims(&g.out_shape()),
            out_batches * g.m * g.n
        )));
    }
    let (lhs_mat, rhs_mat, out_mat) = (g.m * g.k, g.k * g.n, g.m * g.n);
    // Batch strides (in matrices), 0 along broadcast dimensions.
    let (ls, rs) = (strides(&g.lhs_batch), strides(&g.rhs_batch));
    let mut b = 0;
    for i0 in 0..g.out_batch[0] {
        for i1 in 0..g.out_batch[1] {
            for i2 in 0..g.out_batch[2] {
                let idx = [i0, i1, i2];
                let (mut lo, mut ro) = (0, 0);
                for d in 0..BATCH_RANK {
                    if g.lhs_batch[d] != 1 {
                        lo += idx[d] * ls[d];
                    }
                    if g.rhs_batch[d] != 1 {
                        ro += idx[d] * rs[d];
                    }
                }
                let l = &lhs[lo * lhs_mat..(lo + 1) * lhs_mat];
                let r = &rhs[ro * rhs_mat..(ro + 1) * rhs_mat];
                let lhs_view = if params.adj_x {
                    MatRef::row_major(l, g.k, g.m).t()
                } else {
                    MatRef::row_major(l, g.m, g.k)
                };
                let rhs_view = if params.adj_y {
                    MatRef::row_major(r, g.n, g.k).t()
                } else {
                    MatRef::row_major(r, g.k, g.n)
                };
                let out = &mut output[b * out_mat..(b + 1) * out_mat];
                matmul(MatMut::row_major(out, g.m, g.n), lhs_view, rhs_view)?;
                b += 1;
            }
        }
    }
    Ok(())
}
