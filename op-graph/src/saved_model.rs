//! Saved models: a program with its state, in a directory that a later
//! process loads to compute the same outputs.
//!
//! ```text
//! model/
//!   graph.pb               the program: a TensorFlow GraphDef
//!   variables.safetensors  each variable's value, in op-core's checkpoint
//!                          format (safetensors with checksums), by node name
//!   signatures.json        named entry points: input and output keys to
//!                          tensor names, {"serving_default": {"inputs":
//!                          {"x": "x:0"}, "outputs": {"y": "dense/Relu:0"}}}
//!   resources.safetensors  the state of every other resource that can be
//!                          saved (lookup tables, queues, a user's own),
//!                          by node output and key: "table:0/keys"
//! ```
//!
//! A variable is a `VarHandleOp` node with a `shared_name`: its value lives
//! in the runtime's resource manager under that name, so it is read and
//! assigned with the variable ops (`ReadVariableOp`, `AssignVariableOp`)
//! on the session's runtime, whatever crate implements them. An anonymous
//! variable (an empty `shared_name`) has no name to find it by after the
//! run that made it, and saving one is an error.
//!
//! **Other resources.** A resource-creating node (a stateful op with no
//! inputs and a `resource` output, such as `MutableHashTableV2` or
//! `FIFOQueueV2`) makes one resource per node in a session. If that
//! resource can be saved ([`Resource::saveable`](op_core::resource::Resource::saveable)
//! gives its [`Saveable`](op_core::checkpoint::Saveable)), `save` writes its
//! tensors to `resources.safetensors` as `<node>:<output>/<key>`, and `load`
//! restores them into the resource the new session creates for that node,
//! so that a table finds in the loaded model what it found when saved.
//! Resources that cannot be saved are left out (`opkit saved-model show`
//! lists what was saved).
//!
//! ```standalone_crate
//! use std::collections::BTreeMap;
//! use op_core::{DType, Tensor};
//! use op_graph::{GraphBuilder, Session, saved_model::{self, Signature}};
//! use op_kernels::example::Example;
//! # op_kernels::link();
//!
//! let b = GraphBuilder::new();
//! let x = b.placeholder("x", DType::F32, "[?]")?;
//! Example::call_with(x).node_name("y").run_on(&b)?;
//! let session = Session::new(b.into_graph())?;
//!
//! let dir = std::env::temp_dir().join(format!("opkit-saved-{}", std::process::id()));
//! let signature = Signature::new().input("x", "x").output("y", "y");
//! saved_model::save(&dir, &session, [("serving_default", signature)])?;
//!
//! let model = saved_model::load(&dir, op_core::Registry::global())?;
//! let out = model.run("serving_default", [("x", Tensor::from_vec([2], vec![1.0f32, 2.0])?)])?;
//! assert_eq!(out["y"].as_slice::<f32>()?, [2.0, 4.0]);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), op_core::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use op_core::error::{capped, listed, quoted};
use op_core::{AttrValue, Code, Error, Executor, OpCall, Registry, Result, Runtime, Tensor};

use crate::graph::Node;
use crate::{Session, graphdef};

/// The file names in a saved model's directory.
const GRAPH: &str = "graph.pb";
const VARIABLES: &str = "variables.safetensors";
const SIGNATURES: &str = "signatures.json";
const RESOURCES: &str = "resources.safetensors";

/// A named entry point of a saved model: its inputs and outputs, each a key
/// for the caller and the tensor (`node` or `node:k`) it stands for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Signature {
    /// Input key → the tensor fed.
    pub inputs: BTreeMap<String, String>,
    /// Output key → the tensor fetched.
    pub outputs: BTreeMap<String, String>,
}

impl Signature {
    /// A signature with no inputs or outputs yet.
    pub fn new() -> Signature {
        Signature::default()
    }

    /// Adds input `key`, fed to `tensor`.
    pub fn input(mut self, key: &str, tensor: &str) -> Signature {
        self.inputs.insert(key.into(), tensor.into());
        self
    }

    /// Adds output `key`, fetched from `tensor`.
    pub fn output(mut self, key: &str, tensor: &str) -> Signature {
        self.outputs.insert(key.into(), tensor.into());
        self
    }
}

/// A loaded saved model: a session over its graph, with its variables
/// restored into the session's runtime, and its signatures.
pub struct SavedModel {
    /// The session that runs the program.
    pub session: Session,
    /// The entry points, by name.
    pub signatures: BTreeMap<String, Signature>,
    /// The resources other than variables whose state was restored, as
    /// the outputs of the nodes that create them (`table:0`), sorted.
    pub resources: Vec<String>,
}

impl std::fmt::Debug for SavedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedModel")
            .field("nodes", &self.session.graph().len())
            .field("signatures", &self.signatures)
            .finish_non_exhaustive()
    }
}

impl SavedModel {
    /// The model's variables: the graph's `VarHandleOp` nodes, whose
    /// values were restored from `variables.safetensors`.
    pub fn variables(&self) -> impl Iterator<Item = &Node> {
        variables(&self.session)
    }

    /// Runs signature `name` on `inputs` (input key, value); returns every
    /// output by key. Unknown signatures and keys, and missing inputs, are
    /// `InvalidArgument` errors that list what the signature has.
    pub fn run<'k>(
        &self,
        name: &str,
        inputs: impl IntoIterator<Item = (&'k str, Tensor)>,
    ) -> Result<BTreeMap<String, Tensor>> {
        let signature = self.signatures.get(name).ok_or_else(|| {
            Error::invalid_argument(format!(
                "the saved model has no signature {}; it has: {}",
                quoted(name),
                listed(self.signatures.keys().map(quoted), 8)
            ))
        })?;
        let mut runner = self.session.runner();
        let mut fed = Vec::new();
        for (key, value) in inputs {
            let tensor = signature.inputs.get(key).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "signature {} has no input {}; its inputs are: {}",
                    quoted(name),
                    quoted(key),
                    listed(signature.inputs.keys().map(quoted), 8)
                ))
            })?;
            fed.push(key);
            runner = runner.feed(tensor.as_str(), value);
        }
        if let Some(missing) = signature.inputs.keys().find(|k| !fed.contains(&k.as_str())) {
            return Err(Error::invalid_argument(format!(
                "signature {} needs input {}",
                quoted(name),
                quoted(missing)
            )));
        }
        for tensor in signature.outputs.values() {
            runner = runner.fetch(tensor.as_str());
        }
        let values = runner.run()?;
        Ok(signature.outputs.keys().cloned().zip(values).collect())
    }
}

/// The variables of the graph: its `VarHandleOp` nodes.
fn variables(session: &Session) -> impl Iterator<Item = &Node> {
    session
        .graph()
        .nodes()
        .iter()
        .filter(|n| n.op() == "VarHandleOp")
}

/// The outputs of the graph's resource-creating nodes other than variables:
/// nodes of stateful ops with no inputs and a `resource` output (what
/// creates one resource per node in a session), as `node:k`.
fn resource_outputs(session: &Session) -> Vec<String> {
    let mut outputs = Vec::new();
    for node in session.graph().nodes() {
        if node.op() == "VarHandleOp" || !node.is_stateful() || !node.inputs().is_empty() {
            continue;
        }
        for k in 0..node.outputs().len() {
            if node.output_dtype(k) == Some(op_core::DType::Resource) {
                outputs.push(format!("{}:{k}", node.name()));
            }
        }
    }
    outputs
}

/// The resources of `outputs` (from [`resource_outputs`]) in `session`, run
/// there to get their handles, each with its output name; only those that
/// can be saved.
fn saveable_resources(
    session: &Session,
    outputs: &[String],
) -> Result<Vec<(String, Arc<dyn op_core::resource::Resource>)>> {
    if outputs.is_empty() {
        return Ok(Vec::new());
    }
    let mut runner = session.runner();
    for output in outputs {
        runner = runner.fetch(output.as_str());
    }
    let handles = runner.run()?;
    let mgr = session.runtime().resource_manager();
    let mut resources = Vec::new();
    for (output, handle) in outputs.iter().zip(handles) {
        let handle = handle
            .scalar_value::<op_core::ResourceHandle>()
            .map_err(|e| e.with_context(format!("resource {}", quoted(output))))?;
        let resource = mgr
            .resource_dyn(&handle)
            .map_err(|e| e.with_context(format!("resource {}", quoted(output))))?;
        if resource.saveable().is_some() {
            resources.push((output.clone(), resource));
        }
    }
    Ok(resources)
}

/// A handle to the variable of `node` (a `VarHandleOp`), made by running
/// the node's own attrs eagerly on `runtime`.
fn handle(runtime: &Runtime, node: &Node) -> Result<Tensor> {
    match node.attr("shared_name") {
        Some(AttrValue::String(name)) if !name.is_empty() => {}
        _ => {
            return Err(Error::failed_precondition(format!(
                "variable node {} has no shared_name: an anonymous variable cannot be saved or \
                 restored; give it a shared_name",
                quoted(node.name())
            )));
        }
    }
    let mut call = OpCall::new("VarHandleOp");
    for (name, value) in node.attrs() {
        call = call.attr(name, value.clone());
    }
    let [handle] = runtime.execute_array(call)?;
    Ok(handle)
}

fn dtype_of(node: &Node) -> Result<AttrValue> {
    node.attr("dtype").cloned().ok_or_else(|| {
        Error::internal(format!(
            "variable node {} has no dtype",
            quoted(node.name())
        ))
    })
}

/// `InvalidArgument` unless `value`, read for the variable of `node`,
/// has the dtype and a shape compatible with the shape the node declares
/// (its `dtype` and `shape` attrs): a value of another shape would be
/// assigned and then broadcast, or fail only when the graph runs.
fn check_declared(node: &Node, value: &Tensor) -> Result<()> {
    if let Some(AttrValue::Type(dtype)) = node.attr("dtype")
        && *dtype != value.dtype()
    {
        return Err(Error::invalid_argument(format!(
            "variable {} is declared as {dtype}, but {VARIABLES} holds a value of dtype {} \
             for it",
            quoted(node.name()),
            value.dtype()
        )));
    }
    if let Some(AttrValue::Shape(shape)) = node.attr("shape")
        && !shape.is_compatible_with(value.dims())
    {
        return Err(Error::invalid_argument(format!(
            "variable {} is declared with shape {shape}, but {VARIABLES} holds a value of \
             shape {} for it",
            quoted(node.name()),
            value.shape()
        )));
    }
    Ok(())
}

fn io(e: std::io::Error, doing: &str, path: &Path) -> Error {
    Error::new(
        Code::from_io_error(&e),
        format!("cannot {doing} {}: {e}", path.display()),
    )
}

/// Saves `session`'s graph, the current values of its variables (in its
/// runtime) and `signatures` to the directory `dir` (made if missing).
///
/// Every signature's tensors must name outputs of the graph, and every
/// variable must have a value (`FailedPrecondition` otherwise, naming
/// it).
pub fn save<'n>(
    dir: impl AsRef<Path>,
    session: &Session,
    signatures: impl IntoIterator<Item = (&'n str, Signature)>,
) -> Result<()> {
    let dir = dir.as_ref();
    let signatures: BTreeMap<String, Signature> = signatures
        .into_iter()
        .map(|(name, s)| (name.to_owned(), s))
        .collect();
    let graph = session.graph();
    for (name, signature) in &signatures {
        for tensor in signature.inputs.values().chain(signature.outputs.values()) {
            graph
                .find_output(tensor)
                .map_err(|e| e.with_context(format!("signature {}", quoted(name))))?;
        }
    }
    let mut values = Vec::new();
    for node in variables(session) {
        let read = |node: &Node| -> Result<Tensor> {
            let handle = handle(session.runtime(), node)?;
            let call = OpCall::new("ReadVariableOp")
                .input(handle)
                .attr("dtype", dtype_of(node)?);
            let [value] = session.runtime().execute_array(call)?;
            Ok(value)
        };
        let value = read(node)
            .map_err(|e| e.with_context(format!("saving variable {}", quoted(node.name()))))?;
        values.push((node.name().to_owned(), value));
    }
    let mut state = Vec::new();
    for (output, resource) in saveable_resources(session, &resource_outputs(session))? {
        let saveable = resource.saveable().expect("kept only if saveable");
        let tensors = saveable
            .serialize_to_tensors()
            .map_err(|e| e.with_context(format!("saving resource {}", quoted(&output))))?;
        for (key, tensor) in tensors {
            state.push((format!("{output}/{key}"), tensor));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| io(e, "create", dir))?;
    graphdef::write(graph, dir.join(GRAPH))?;
    op_core::checkpoint::write(dir.join(VARIABLES), values)?;
    // Written only when there is state, so that models without it stay as
    // they were; an old file from an earlier save is removed.
    let resources_path = dir.join(RESOURCES);
    if state.is_empty() {
        match std::fs::remove_file(&resources_path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io(e, "remove", &resources_path));
            }
            _ => {}
        }
    } else {
        op_core::checkpoint::write(&resources_path, state)?;
    }
    let json = write_signatures(&signatures);
    let path = dir.join(SIGNATURES);
    std::fs::write(&path, json).map_err(|e| io(e, "write", &path))
}

/// Loads the saved model in `dir` over the ops of `registry`: its graph in
/// a new session on a new runtime, its variables assigned there, and its
/// signatures.
pub fn load(dir: impl AsRef<Path>, registry: &Arc<Registry>) -> Result<SavedModel> {
    let runtime = Arc::new(Runtime::with_registry(registry.clone()));
    load_on(dir, runtime)
}

/// Like [`load`], on `runtime` (its registry, device, threads and
/// resources): the variables are assigned in its resource manager.
pub fn load_on(dir: impl AsRef<Path>, runtime: Arc<Runtime>) -> Result<SavedModel> {
    let dir = dir.as_ref();
    let in_dir = |e: Error| e.with_context(format!("loading the saved model {}", dir.display()));
    let graph = graphdef::read(dir.join(GRAPH), runtime.shared_registry()).map_err(in_dir)?;
    let path = dir.join(SIGNATURES);
    let json = op_core::file::read_text_file(&path).map_err(in_dir)?;
    let signatures = parse_signatures(&json).map_err(in_dir)?;
    let mut values = op_core::checkpoint::read(dir.join(VARIABLES)).map_err(in_dir)?;
    let session = Session::builder(graph)
        .runtime(runtime)
        .build()
        .map_err(in_dir)?;
    for node in variables(&session) {
        let value = values.remove(node.name()).ok_or_else(|| {
            in_dir(Error::data_loss(format!(
                "{VARIABLES} has no value for variable {}",
                quoted(node.name())
            )))
        })?;
        check_declared(node, &value).map_err(in_dir)?;
        let assign = |node: &Node| -> Result<()> {
            let handle = handle(session.runtime(), node)?;
            let call = OpCall::new("AssignVariableOp")
                .input(handle)
                .input(value)
                .attr("dtype", dtype_of(node)?);
            session.runtime().execute(call)?;
            Ok(())
        };
        assign(node).map_err(|e| {
            in_dir(e.with_context(format!("restoring variable {}", quoted(node.name()))))
        })?;
    }
    if let Some(name) = values.keys().next() {
        return Err(in_dir(Error::data_loss(format!(
            "{VARIABLES} holds {}, which is not a variable of the graph",
            quoted(name)
        ))));
    }
    let resources = restore_resources(dir, &session).map_err(in_dir)?;
    for (name, signature) in &signatures {
        for tensor in signature.inputs.values().chain(signature.outputs.values()) {
            session
                .graph()
                .find_output(tensor)
                .map_err(|e| in_dir(e.with_context(format!("signature {}", quoted(name)))))?;
        }
    }
    Ok(SavedModel {
        session,
        signatures,
        resources,
    })
}

/// Restores `resources.safetensors` of `dir`, if there is one, into the
/// resources `session` creates for their nodes; returns their outputs.
fn restore_resources(dir: &Path, session: &Session) -> Result<Vec<String>> {
    let path = dir.join(RESOURCES);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Vec::new());
    }
    // Tensor "<node>:<k>/<key>": node names hold no ':', keys may hold '/'.
    let mut saved: BTreeMap<String, Vec<(String, Tensor)>> = BTreeMap::new();
    for (name, tensor) in op_core::checkpoint::read(&path)? {
        let split = name
            .find(':')
            .and_then(|colon| name[colon..].find('/').map(|slash| colon + slash));
        let Some(slash) = split else {
            return Err(Error::data_loss(format!(
                "{RESOURCES} holds {}, which is not named <node>:<output>/<key>",
                quoted(&name)
            )));
        };
        let (output, key) = (name[..slash].to_owned(), name[slash + 1..].to_owned());
        saved.entry(output).or_default().push((key, tensor));
    }
    let outputs = resource_outputs(session);
    if let Some(unknown) = saved.keys().find(|o| !outputs.contains(o)) {
        return Err(Error::data_loss(format!(
            "{RESOURCES} holds resource {}, which no resource-creating node of the graph makes",
            quoted(unknown)
        )));
    }
    let wanted: Vec<String> = saved.keys().cloned().collect();
    let resources = saveable_resources(session, &wanted)?;
    for (output, tensors) in saved {
        let Some((_, resource)) = resources.iter().find(|(o, _)| *o == output) else {
            return Err(Error::data_loss(format!(
                "{RESOURCES} holds state for resource {}, but the resource this session \
                 creates for it cannot be restored (its `Resource::saveable` is None)",
                quoted(&output)
            )));
        };
        let saveable = resource.saveable().expect("kept only if saveable");
        saveable
            .restore_from_tensors(tensors)
            .map_err(|e| e.with_context(format!("restoring resource {}", quoted(&output))))?;
    }
    Ok(wanted)
}

/// The text of `signatures.json` for `signatures`: what [`save`] writes,
/// and [`parse_signatures`] reads back to the same map.
pub fn write_signatures(signatures: &BTreeMap<String, Signature>) -> String {
    use serde_json::{Map, Value};
    let side = |m: &BTreeMap<String, String>| {
        Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    };
    let all: Map<String, Value> = signatures
        .iter()
        .map(|(name, s)| {
            let mut entry = Map::new();
            entry.insert("inputs".into(), side(&s.inputs));
            entry.insert("outputs".into(), side(&s.outputs));
            (name.clone(), Value::Object(entry))
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&Value::Object(all)).unwrap_or_default();
    text.push('\n');
    text
}

/// Reads the text of a `signatures.json` (what [`load`] reads from a saved
/// model's directory): an object of signatures, each an object with an
/// `inputs` and an `outputs` object of key to tensor name. Anything else is
/// a `DataLoss` error naming what is wrong, with caller strings shown cut
/// to a bounded length. (The fuzz target `signatures_reader` feeds it
/// arbitrary text.)
///
/// ```
/// use op_graph::saved_model::{parse_signatures, write_signatures};
/// let json = r#"{"serving_default": {"inputs": {"x": "x:0"}, "outputs": {"y": "y:0"}}}"#;
/// let signatures = parse_signatures(json)?;
/// assert_eq!(signatures["serving_default"].outputs["y"], "y:0");
/// assert_eq!(parse_signatures(&write_signatures(&signatures))?, signatures);
/// assert_eq!(parse_signatures("[]").unwrap_err().code(), op_core::Code::DataLoss);
/// # Ok::<(), op_core::Error>(())
/// ```
pub fn parse_signatures(json: &str) -> Result<BTreeMap<String, Signature>> {
    use serde_json::Value;
    let bad = |what: String| Error::data_loss(format!("{SIGNATURES}: {what}"));
    let value: Value = serde_json::from_str(json)
        .map_err(|e| bad(format!("not valid JSON: {}", capped(&e.to_string()))))?;
    let Value::Object(all) = value else {
        return Err(bad("expected an object of signatures".into()));
    };
    let side = |name: &str, entry: &serde_json::Map<String, Value>, key: &str| {
        let Some(Value::Object(map)) = entry.get(key) else {
            return Err(bad(format!(
                "signature {} has no {key} object",
                quoted(name)
            )));
        };
        map.iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(bad(format!(
                    "signature {} {key} {}: expected a tensor name",
                    quoted(name),
                    quoted(k)
                ))),
            })
            .collect::<Result<BTreeMap<_, _>>>()
    };
    all.iter()
        .map(|(name, entry)| {
            let Value::Object(entry) = entry else {
                return Err(bad(format!("signature {} is not an object", quoted(name))));
            };
            Ok((
                name.clone(),
                Signature {
                    inputs: side(name, entry, "inputs")?,
                    outputs: side(name, entry, "outputs")?,
                },
            ))
        })
        .collect()
}
