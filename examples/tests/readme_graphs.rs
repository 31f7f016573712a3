//! The README's graph example, verbatim: it must compile and run.

use op_core::{DType, Tensor};
use op_graph::{GraphBuilder, Session};
use op_kernels::math::{AddV2, Relu};
use op_kernels::matmul::MatMul;

#[test]
fn the_readme_graph_example_runs() -> op_core::Result<()> {
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?,4]")?;
    let w = b.constant(Tensor::from_vec([4, 2], vec![1.0f32; 8])?)?;
    let h = MatMul::call_with(x, w).run_on(&b)?;
    let y = Relu::call_with(AddV2::call_with(h, h).run_on(&b)?)
        .node_name("y")
        .run_on(&b)?;
    let graph = b.into_graph();
    assert_eq!(graph.output_shape(y)?.to_string(), "[?,2]");

    let session = Session::new(graph)?; // kernels prepared once, plans kept
    let out = session
        .runner()
        .feed("x", Tensor::from_vec([1, 4], vec![1.0f32; 4])?)
        .fetch("y")
        .run()?;
    assert_eq!(out[0].as_slice::<f32>()?, [8.0, 8.0]);
    Ok(())
}
