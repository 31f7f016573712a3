//! Seed 002's example, end to end in the lite runtime: `y = sin(x +
//! offset)` trained (as in `sin_training`), exported to a `.tflite` file
//! with `Sin` kept a custom op, loaded without a `Sin` kernel (TensorFlow
//! Lite's error is printed), then with the seed's `SinPrepare`/`SinEval`
//! registered through the resolver, and run.
//!
//! ```text
//! cargo run --example sin_lite
//! ```

use std::process::ExitCode;

use examples::sin::{self, GraphTraining};
use examples::sin_lite;
use op_core::{Error, Result};
use op_lite::{BuiltinOpResolver, Model};

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
    let training = GraphTraining::new()?;
    for _ in 0..STEPS {
        training.step()?;
    }
    let offset = training.offset()?;
    println!("trained {STEPS} steps: the predicted offset is {offset} (the actual offset is 1.0)");

    let path = std::env::temp_dir().join(format!("opkit-sin-{}.tflite", std::process::id()));
    let bytes = sin_lite::export(&training)?;
    std::fs::write(&path, &bytes)
        .map_err(|e| Error::internal(format!("cannot write {}: {e}", path.display())))?;
    let read = std::fs::read(&path);
    std::fs::remove_file(&path).ok();
    let model = Model::from_bytes(
        &read.map_err(|e| Error::internal(format!("cannot read {}: {e}", path.display())))?,
    )?;
    let ops: Vec<String> = model
        .operator_codes
        .iter()
        .map(|c| match &c.custom_name {
            Some(name) => format!("custom {name}"),
            None => c.builtin.to_string(),
        })
        .collect();
    println!(
        "exported, written to {} and read back ({} bytes): {}",
        path.display(),
        bytes.len(),
        ops.join(", ")
    );

    println!("\nwith the builtin resolver alone:");
    match sin_lite::run(&model, &BuiltinOpResolver::new(), &sin::X) {
        Ok(_) => return Err(Error::internal("the model ran without a Sin kernel")),
        Err(e) => println!("Error:\n{}\nRegistration failed.", e.message()),
    }

    println!("\nwith resolver.add_custom(\"Sin\", FnOp::new(sin_prepare, sin_eval)):");
    let mut resolver = BuiltinOpResolver::new();
    sin_lite::register_sin(&mut resolver);
    let y = sin_lite::run(&model, &resolver, &sin::X)?;
    println!("{:>8}  {:>12}  {:>12}", "x", "sin(x+offset)", "seed's y");
    for ((x, y), expected) in sin::X.iter().zip(&y).zip(sin::Y) {
        println!("{x:>8}  {y:>12.7}  {expected:>12.7}");
    }
    Ok(())
}
