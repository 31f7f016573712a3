//! `opkit saved-model`: TensorFlow's `saved_model_cli` for the saved models
//! of [`op_graph::saved_model`].
//!
//! - `opkit saved-model show DIR`: each signature's inputs and outputs
//!   (key, dtype, shape, the tensor it stands for), the variables with
//!   their declared dtype and shape, and the other resources whose state
//!   the model holds (lookup tables, queues), with their ops. Loading the
//!   model checks it whole first, so a model that `show` prints loads.
//! - `opkit saved-model run DIR [--signature NAME] --input KEY=FILE.npy
//!   [--output KEY] --output-dir OUT`: runs a signature on inputs from
//!   `.npy` files and writes each output as `OUT/<key>.npy`.

use std::io::Write;
use std::path::Path;

use op_core::error::quoted;
use op_core::{Error, Registry, Result};
use op_graph::Graph;
use op_graph::saved_model::{self, SavedModel};

use crate::cli::{input_arg, io_error};
use crate::lite::sanitize;
use crate::npy;

/// The signature `run` uses when none is named: TensorFlow's default.
pub const DEFAULT_SIGNATURE: &str = "serving_default";

/// `opkit saved-model show DIR`.
pub fn show(dir: &Path, out: &mut dyn Write) -> Result<()> {
    let model = saved_model::load(dir, Registry::global())?;
    let graph = model.session.graph();
    for (name, signature) in &model.signatures {
        writeln!(out, "signature {}:", quoted(name)).map_err(io_error)?;
        for (side, tensors) in [
            ("inputs", &signature.inputs),
            ("outputs", &signature.outputs),
        ] {
            writeln!(out, "  {side}:").map_err(io_error)?;
            for (key, tensor) in tensors {
                writeln!(
                    out,
                    "    {key}: {} <- {tensor}",
                    tensor_type(graph, tensor)?
                )
                .map_err(io_error)?;
            }
        }
    }
    let variables: Vec<_> = model.variables().collect();
    writeln!(out, "variables:").map_err(io_error)?;
    for node in &variables {
        let attr = |name| {
            node.attr(name)
                .map_or_else(|| "?".to_owned(), |v| v.to_string())
        };
        writeln!(
            out,
            "  {}: {} {}",
            node.name(),
            attr("dtype"),
            attr("shape")
        )
        .map_err(io_error)?;
    }
    if !model.resources.is_empty() {
        writeln!(out, "saved resources:").map_err(io_error)?;
        for output in &model.resources {
            let node = graph
                .find_output(output)
                .and_then(|o| graph.node(o.node()))?;
            writeln!(out, "  {output}: {}", node.op()).map_err(io_error)?;
        }
    }
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    writeln!(
        out,
        "{}, {}, {}",
        plural(model.signatures.len(), "signature"),
        plural(variables.len(), "variable"),
        plural(model.resources.len(), "saved resource")
    )
    .map_err(io_error)
}

/// The inferred dtype and shape of `tensor` (`node` or `node:k`) in
/// `graph`, as `float [?,4]`.
fn tensor_type(graph: &Graph, tensor: &str) -> Result<String> {
    let output = graph.find_output(tensor)?;
    let dtype = graph.output_dtype(output)?;
    let shape = graph.output_shape(output)?;
    Ok(format!("{dtype} {shape}"))
}

/// `opkit saved-model run`: what to run and where the results go.
#[derive(Debug)]
pub struct RunOptions<'a> {
    /// The signature to run.
    pub signature: &'a str,
    /// `KEY=FILE.npy`, one per input of the signature.
    pub inputs: &'a [String],
    /// The output keys to write; every output of the signature when empty.
    pub outputs: &'a [String],
    /// Where the outputs go, one `.npy` file each.
    pub output_dir: &'a Path,
}

/// `opkit saved-model run`.
pub fn run(dir: &Path, options: &RunOptions<'_>, out: &mut dyn Write) -> Result<()> {
    let model = saved_model::load(dir, Registry::global())?;
    let mut feeds = Vec::with_capacity(options.inputs.len());
    for arg in options.inputs {
        let (key, file) = input_arg(arg, "--input x=x.npy")?;
        let value =
            npy::read(Path::new(file)).map_err(|e| e.with_context(format!("--input {arg}")))?;
        feeds.push((key, value));
    }
    check_outputs(&model, options)?;
    let results = model.run(options.signature, feeds)?;
    for (key, value) in &results {
        if !options.outputs.is_empty() && !options.outputs.contains(key) {
            continue;
        }
        let path = options.output_dir.join(format!("{}.npy", sanitize(key)));
        npy::write(&path, value)?;
        writeln!(
            out,
            "{key}: {} {} -> {}",
            value.dtype(),
            value.shape(),
            path.display()
        )
        .map_err(io_error)?;
    }
    Ok(())
}

/// `InvalidArgument` for an `--output` the signature does not have, before
/// anything runs. (An unknown signature is [`SavedModel::run`]'s error.)
fn check_outputs(model: &SavedModel, options: &RunOptions<'_>) -> Result<()> {
    let Some(signature) = model.signatures.get(options.signature) else {
        return Ok(());
    };
    if let Some(key) = options
        .outputs
        .iter()
        .find(|k| !signature.outputs.contains_key(k.as_str()))
    {
        return Err(Error::invalid_argument(format!(
            "--output {}: signature {} has no such output; its outputs are: {}",
            quoted(key),
            quoted(options.signature),
            op_core::error::listed(signature.outputs.keys().map(quoted), 8)
        )));
    }
    Ok(())
}
