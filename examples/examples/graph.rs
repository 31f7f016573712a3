//! A two-layer MLP as a graph: built with the same typed wrappers that run
//! eagerly (`MatMul::call`, `AddV2::call`, `Relu::call`), its shapes
//! inferred at construction from a placeholder of shape `[?,4]`, run on a
//! batch, written to a TensorFlow GraphDef (`.pb`), read back and run
//! again with the same result.
//!
//! ```sh
//! cargo run --example graph
//! cargo run --example graph -- --export-dir DIR   # also writes DIR for TensorFlow to check
//! ```
//!
//! With `--export-dir DIR` it also writes what `tools/tensorflow/check_export.py`
//! reads: `DIR/graph.pb`, `DIR/feeds/x.npy`, `DIR/fetches.txt` and our
//! output in `DIR/expected/` (`cargo xtask tensorflow check-export` runs
//! it so).

use std::path::PathBuf;

use op_core::{DType, Result, Tensor};
use op_graph::{GraphBuilder, Output, Session, graphdef};
use op_kernels::math::{AddV2, Relu};
use op_kernels::matmul::MatMul;

/// A deterministic matrix of `rows x cols` small values.
fn weights(rows: usize, cols: usize, seed: f32) -> Result<Tensor> {
    let values = (0..rows * cols)
        .map(|i| (i as f32 * 0.37 + seed).sin() * 0.5)
        .collect();
    Tensor::from_vec([rows, cols], values)
}

/// One dense layer: `x @ w + b`, then Relu when `relu`.
fn dense(b: &GraphBuilder, x: Output, w: Tensor, bias: Tensor, relu: bool) -> Result<Output> {
    let w = b.constant(w)?;
    let bias = b.constant(bias)?;
    let y = MatMul::call_with(x, w).run_on(b)?;
    let y = AddV2::call_with(y, bias).run_on(b)?;
    if relu {
        let y = Relu::call_with(y).run_on(b)?;
        return Ok(y);
    }
    Ok(y)
}

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    op_kernels::link();
    let export_dir = match std::env::args().nth(1).as_deref() {
        Some("--export-dir") => std::env::args().nth(2).map(PathBuf::from),
        _ => None,
    };

    // Build: every node is checked as it is added, shapes included.
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?,4]")?;
    let hidden = {
        let _scope = b.name_scope("layer1");
        dense(
            &b,
            x,
            weights(4, 8, 0.1)?,
            weights(1, 8, 0.2)?.reshape([8])?,
            true,
        )?
    };
    let y = {
        let _scope = b.name_scope("layer2");
        dense(
            &b,
            hidden,
            weights(8, 3, 0.3)?,
            weights(1, 3, 0.4)?.reshape([3])?,
            false,
        )?
    };
    let graph = b.into_graph();
    println!("The graph, with the shapes inferred while it was built:");
    print!("{graph}");
    let y_name = graph.tensor_name(y).to_string();

    // Run on a batch of 2.
    let batch = Tensor::from_vec([2, 4], vec![1.0f32, 2.0, 3.0, 4.0, -1.0, 0.5, 0.0, 2.0])?;
    let session = Session::new(graph)?;
    let out = session
        .runner()
        .feed("x", batch.clone())
        .fetch(y_name.as_str())
        .run()?;
    println!(
        "\n{y_name} for a batch of 2: {:?}",
        out[0].as_slice::<f32>()?
    );

    // Write to a GraphDef, read it back, run again.
    let path = std::env::temp_dir().join(format!("opkit-mlp-{}.pb", std::process::id()));
    graphdef::write(session.graph(), &path)?;
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let loaded = graphdef::read(&path, op_core::Registry::global())?;
    std::fs::remove_file(&path).ok();
    let again = Session::new(loaded)?
        .runner()
        .feed("x", batch.clone())
        .fetch(y_name.as_str())
        .run()?;
    println!(
        "written to {} ({bytes} bytes), read back and run: {:?}",
        path.display(),
        again[0].as_slice::<f32>()?
    );
    assert_eq!(again[0], out[0], "the program read back computes the same");
    println!("same result: yes");

    if let Some(dir) = export_dir {
        std::fs::create_dir_all(dir.join("feeds"))?;
        std::fs::create_dir_all(dir.join("expected"))?;
        graphdef::write(session.graph(), dir.join("graph.pb"))?;
        opkit::npy::write(&dir.join("feeds/x.npy"), &batch)?;
        std::fs::write(dir.join("fetches.txt"), format!("{y_name}\n"))?;
        let file = format!("{}.npy", y_name.replace(':', "_"));
        opkit::npy::write(&dir.join("expected").join(file), &out[0])?;
        println!("exported for TensorFlow to {}", dir.display());
    }
    Ok(())
}
