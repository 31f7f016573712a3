//! Tile: a tensor repeated along each dimension. The kernel copies the
//! input's [`tile_view`] out block by block over the runtime's threads; a
//! tile that changes nothing (a scalar, or every multiple 1) shares the
//! input's buffer, as TensorFlow's does.

use op_core::shape_inference::InferenceContext;
use op_core::{Element, KernelContext, Result, kernel};

use super::cpu::write_view;
use super::index::{in_kernel, input_vector, shape_from_shape_tensor};
use super::math::{tile_dims, tile_view};
use super::ops::Tile;

/// Tile's shape function (TensorFlow's): `multiples` must be a vector of
/// one count per input dimension; output dimension `i` is input dimension
/// `i` times `multiples[i]` (the input's own dimension where the multiple
/// is 1), unknown where either is. With neither the input's rank nor
/// `multiples`' length known, the output is unknown.
pub fn tile_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let input = c.input(0)?;
    let multiples_shape = c.input(1)?;
    let mut multiples = shape_from_shape_tensor(c, 1)?;
    if let Some(rank) = c.rank(input) {
        let length = c.dim(multiples_shape, 0)?;
        if let Some(n) = c.value(length).or(c.rank(multiples))
            && n != rank
        {
            return Err(c.error(format!(
                "input 1 ('multiples') has {n} elements, but input 0 ('input') has rank {rank}: expected one multiple per dimension"
            )));
        }
        multiples = c.with_rank(multiples, rank)?;
    }
    let Some(rank) = c.rank(multiples) else {
        let unknown = c.unknown_shape();
        return c.set_output(0, unknown);
    };
    let input = c.with_rank(input, rank)?;
    let mut dims = Vec::with_capacity(rank);
    for i in 0..rank as i64 {
        let (d, m) = (c.dim(input, i)?, c.dim(multiples, i)?);
        dims.push(c.multiply(d, m)?);
    }
    let output = c.make_shape(dims);
    c.set_output(0, output)
}

#[kernel(op = Tile, types(numbertype, bool, string))]
fn tile<T: Element>(ctx: &mut KernelContext<'_>) -> Result<()> {
    let multiples = input_vector(ctx, 1, "multiples")?;
    let input = ctx.input(0)?.clone();
    let shape = tile_dims(input.dims(), &multiples).map_err(|e| in_kernel(ctx, e))?;
    if shape.dims() == input.dims() {
        return ctx.set_output(0, input);
    }
    // Non-negative: `tile_dims` checked them.
    let multiples: Vec<usize> = multiples.iter().map(|&m| m as usize).collect();
    let view = tile_view(input.dims(), &multiples);
    write_view::<T>(ctx, &input, &view, shape.dims())
}
