//! The README's `#[op]` example, verbatim: it must compile and run in a
//! crate that depends on op-core and nothing else it names (this crate has
//! no `num-traits` dependency: `Float` comes through `op_core::num_traits`).

use op_core::ndarray::ArrayViewD;
use op_core::num_traits::Float; // re-exported: no dependency to add
use op_core::{Element, op};

/// The Euclidean norm of a tensor.
#[op(types(f32, f64), outputs("norm"))]
pub fn l2_norm<T: Element + Float>(x: ArrayViewD<'_, T>) -> T {
    x.iter().fold(T::zero(), |s, v| s + *v * *v).sqrt()
}

#[test]
fn the_readme_s_op_declares_l2norm_and_runs_for_both_types() -> op_core::Result<()> {
    let x = op_core::Tensor::from_vec([2, 2], vec![1.0f32, 2.0, 2.0, 4.0])?;
    assert_eq!(L2Norm::call(&x).run()?.scalar_value::<f32>()?, 5.0);
    let x = op_core::Tensor::from_vec([2], vec![3.0f64, 4.0])?;
    assert_eq!(L2Norm::call(&x).run()?.scalar_value::<f64>()?, 5.0);
    // The function stays an ordinary Rust function.
    let view = op_core::ndarray::arr1(&[6.0f32, 8.0]).into_dyn();
    assert_eq!(l2_norm(view.view()), 10.0);
    Ok(())
}

/// An `#[op]` whose outputs are all scalars gets the library's `scalar`
/// shape function: a graph knows the norm is a scalar without running it.
#[test]
fn scalar_outputs_have_a_scalar_shape_without_a_shape_function() -> op_core::Result<()> {
    let registry = op_core::Registry::global();
    let shapes = registry.infer_shapes(
        "L2Norm",
        &[op_core::DType::F32.into()],
        &[],
        &["[2,?]".parse()?],
        &[],
    )?;
    assert_eq!(
        shapes,
        ["[]".parse::<op_core::shape_inference::PartialShape>()?]
    );
    assert!(registry.op("L2Norm")?.shape_fn().is_some());
    Ok(())
}
