//! Seed 002's example: `y = sin(x + offset)` with `offset` trainable,
//! learned from five points with Adam(0.01) in 1,000 steps, once eagerly
//! with a gradient tape and once as a graph; then the trained graph is
//! saved and loaded back.
//!
//! ```text
//! cargo run --example sin_training
//! ```
//!
//! TensorFlow 2.21 gives 1.0000001 both ways
//! (`tools/tensorflow/sin_training.py`).

use std::process::ExitCode;

use examples::sin::{self, EagerTraining, GraphTraining};
use op_core::{Result, Tensor};
use op_graph::saved_model;

const STEPS: usize = 1000;

fn main() -> ExitCode {
    op_kernels::link();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let mut eager = EagerTraining::new()?;
    for _ in 0..STEPS {
        eager.step()?;
    }
    println!("eagerly, with a gradient tape:");
    println!("The actual offset is: 1.0");
    println!("The predicted offset is: {}", eager.offset()?);

    let graph = GraphTraining::new()?;
    for _ in 0..STEPS {
        graph.step()?;
    }
    println!("as a graph, with symbolic gradients:");
    println!("The actual offset is: 1.0");
    println!("The predicted offset is: {}", graph.offset()?);

    let dir = std::env::temp_dir().join(format!("opkit-sin-training-{}", std::process::id()));
    graph.save(&dir)?;
    let model = saved_model::load(&dir, op_core::Registry::global())?;
    let x = Tensor::from_vec([5], sin::X.to_vec())?;
    let reloaded = model.run("serving_default", [("x", x.clone())])?;
    let same = reloaded["y"] == graph.predict(x)?;
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "saved to {} and loaded back: same predictions: {}",
        dir.display(),
        if same { "yes" } else { "no" }
    );
    Ok(())
}
