//! Seed 002's model, `y = sin(x + offset)` with `offset` trainable,
//! trained with Adam on the seed's five points: once eagerly with a
//! gradient tape, once as a graph with symbolic gradients. What
//! `cargo run --example sin_training` runs and `benches/sin_training.rs`
//! times.
//!
//! Both programs are the seed's:
//!
//! ```python
//! with tf.GradientTape() as t:
//!     predicted_y = tf.sin(x + offset, name="Sin")
//!     loss = tf.reduce_sum(tf.square(predicted_y - y))
//! grads = t.gradient(loss, [offset])
//! optimizer.apply_gradients(zip(grads, [offset]))
//! ```

use std::path::Path;
use std::sync::Arc;

use op_autodiff::GradientTape;
use op_autodiff::optimizers::{Adam, Optimizer};
use op_autodiff::symbolic::gradients;
use op_core::symbolic::{NodeId, Output};
use op_core::{DType, Error, Executor, Result, Runtime, ShapeValue, Tensor};
use op_graph::saved_model::{self, Signature};
use op_graph::tflite::{self, ExportOptions};
use op_graph::{Graph, GraphBuilder, Runner, Session};
use op_kernels::math::{AddV2, Sin, Square, Sub};
use op_kernels::reduction::Sum;
use op_kernels::variable::{AssignVariableOp, ReadVariableOp, VarHandleOp, Variable};

/// The seed's inputs.
pub const X: [f32; 5] = [-8.0, 0.5, 2.0, 2.2, 201.0];
/// The seed's targets: `sin(x + 1)`.
pub const Y: [f32; 5] = [-0.6569866, 0.997_495, 0.14112001, -0.05837414, 0.806_418_4];
/// The seed's learning rate.
pub const LEARNING_RATE: f64 = 0.01;

/// The seed's inputs and targets as tensors.
pub fn data() -> Result<(Tensor, Tensor)> {
    Ok((
        Tensor::from_vec([5], X.to_vec())?,
        Tensor::from_vec([5], Y.to_vec())?,
    ))
}

/// The model and its loss on any executor: `(predicted_y, loss)` from `x`,
/// `y` and the value of `offset`. The same code builds the eager step
/// and the graph.
fn model<E: Executor>(
    e: &E,
    x: E::Value,
    y: E::Value,
    offset: E::Value,
    axis: E::Value,
) -> Result<(E::Value, E::Value)>
where
    E::Value: Clone,
{
    let shifted = AddV2::call_with(x, offset).run_on(e)?;
    let predicted = Sin::call_with(shifted).node_name("Sin").run_on(e)?;
    let error = Sub::call_with(predicted.clone(), y).run_on(e)?;
    let squared = Square::call_with(error).run_on(e)?;
    let loss = Sum::call_with(squared, axis).run_on(e)?;
    Ok((predicted, loss))
}

/// The eager program: a variable, a tape per step, Adam; on a runtime
/// (the global CPU runtime by default, a GPU's with [`on`](Self::on)).
pub struct EagerTraining<'r> {
    runtime: &'r Runtime,
    offset: Variable<'r>,
    adam: Adam<Tensor>,
    x: Tensor,
    y: Tensor,
    axis: Tensor,
}

impl EagerTraining<'static> {
    /// `offset` at 0, Adam at the seed's learning rate, on
    /// [`Runtime::global`].
    pub fn new() -> Result<Self> {
        EagerTraining::on(Runtime::global())
    }
}

impl<'r> EagerTraining<'r> {
    /// The program on `runtime`: its variable lives on the runtime's
    /// device, and so do the data (copied there once), so that on a GPU
    /// runtime the steps read and write GPU memory.
    pub fn on(runtime: &'r Runtime) -> Result<Self> {
        let (x, y) = data()?;
        let device = runtime.device();
        Ok(EagerTraining {
            runtime,
            offset: Variable::new_on(runtime, Tensor::scalar(0.0f32))?,
            adam: Adam::with_learning_rate(LEARNING_RATE),
            x: x.to_device(device)?,
            y: y.to_device(device)?,
            // Axes are read on the host (`host_memory`).
            axis: Tensor::from_vec([1], vec![0i32])?,
        })
    }

    /// The runtime the program runs on.
    pub fn runtime(&self) -> &'r Runtime {
        self.runtime
    }

    /// The forward pass alone: the loss.
    pub fn forward(&self) -> Result<Tensor> {
        let offset = self.offset.read()?;
        let (x, y, axis) = (self.x.clone(), self.y.clone(), self.axis.clone());
        let (_, loss) = model(self.runtime, x, y, offset, axis)?;
        Ok(loss)
    }

    /// One training step (forward on a tape, backward, Adam); the loss
    /// before it.
    pub fn step(&mut self) -> Result<Tensor> {
        let tape = GradientTape::over(self.runtime);
        // The forward pass, recorded on the tape (variable read included).
        let loss = self.forward()?;
        let [grad] = <[_; 1]>::try_from(tape.gradient(&loss, &[self.offset.handle()])?)
            .map_err(|_| Error::internal("one gradient per source"))?;
        let grad = grad.ok_or_else(|| Error::internal("the loss does not depend on offset"))?;
        self.adam
            .apply_gradients(self.runtime, &[(grad, self.offset.handle().clone())])?;
        Ok(loss)
    }

    /// The offset now (copied to the host).
    pub fn offset(&self) -> Result<f32> {
        self.offset.read()?.to_host()?.scalar_value::<f32>()
    }

    /// The variable's value as it is stored (on the runtime's device).
    pub fn offset_value(&self) -> Result<Tensor> {
        self.offset.read()
    }
}

/// The nodes of the training graph that a [`GraphTraining`] feeds, fetches
/// and runs.
struct GraphNodes {
    x: Output,
    y: Output,
    offset: Output,
    predicted: Output,
    loss: Output,
    step: NodeId,
    initializers: Vec<NodeId>,
}

/// The graph program: built once, run a step at a time.
pub struct GraphTraining {
    session: Session,
    nodes: GraphNodes,
    data: (Tensor, Tensor),
}

impl GraphTraining {
    /// Builds the graph (a variable `offset`, the model, its gradient,
    /// Adam's update) and runs the initializers, on [`Runtime::global`].
    pub fn new() -> Result<Self> {
        GraphTraining::build(Session::new)
    }

    /// [`new`](Self::new) on `runtime` (a GPU's: `Runtime::gpu(0)`), whose
    /// device holds the variables.
    pub fn on(runtime: Arc<Runtime>) -> Result<Self> {
        GraphTraining::build(|graph| Session::builder(graph).runtime(runtime).build())
    }

    /// The graph alone, as [`new`](Self::new) builds it (to inspect where
    /// its nodes would run).
    pub fn graph() -> Result<Graph> {
        Ok(GraphTraining::build_graph()?.0)
    }

    fn build(session: impl FnOnce(Graph) -> Result<Session>) -> Result<Self> {
        let (graph, nodes) = GraphTraining::build_graph()?;
        let session = session(graph)?;
        let mut init_run = session.runner();
        for &node in &nodes.initializers {
            init_run = init_run.target(node);
        }
        init_run.run()?;
        Ok(GraphTraining {
            session,
            nodes,
            data: data()?,
        })
    }

    fn build_graph() -> Result<(Graph, GraphNodes)> {
        let b = GraphBuilder::new();
        let x = b.placeholder("x", DType::F32, "[5]")?;
        let y = b.placeholder("y", DType::F32, "[5]")?;
        let handle = VarHandleOp::call_with(DType::F32, ShapeValue::from_sizes(&[]))
            .shared_name("offset")
            .node_name("offset")
            .run_on(&b)?;
        let zero = b.constant(Tensor::scalar(0.0f32))?;
        AssignVariableOp::call_with(handle, zero)
            .node_name("offset/init")
            .run_on(&b)?;
        let init = b.graph().find_node("offset/init")?;
        let offset = ReadVariableOp::call_with(handle, DType::F32)
            .node_name("offset/read")
            .run_on(&b)?;
        let axis = b.constant(Tensor::from_vec([1], vec![0i32])?)?;
        let (predicted, loss) = model(&b, x, y, offset, axis)?;
        let grad = gradients(&b, &[loss], &[handle])?
            .remove(0)
            .ok_or_else(|| Error::internal("the loss does not depend on offset"))?;
        let mut adam = Adam::with_learning_rate(LEARNING_RATE);
        let step = adam.apply_gradients(&b, &[(grad, handle)])?;
        let mut initializers = vec![init];
        initializers.extend(adam.initializers().iter().copied());
        let nodes = GraphNodes {
            x,
            y,
            offset,
            predicted,
            loss,
            step,
            initializers,
        };
        Ok((b.into_graph(), nodes))
    }

    /// The session the program runs in.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// A run of the forward pass on the seed's data, fetching the loss.
    fn forward_run(&self) -> Runner<'_> {
        let (x, y) = &self.data;
        self.session
            .runner()
            .feed(self.nodes.x, x.clone())
            .feed(self.nodes.y, y.clone())
            .fetch(self.nodes.loss)
    }

    /// The forward pass alone: the loss.
    pub fn forward(&self) -> Result<Tensor> {
        Ok(self.forward_run().run()?.remove(0))
    }

    /// One training step; the loss before it.
    pub fn step(&self) -> Result<Tensor> {
        Ok(self.forward_run().target(self.nodes.step).run()?.remove(0))
    }

    /// The offset now (copied to the host).
    pub fn offset(&self) -> Result<f32> {
        self.session
            .runner()
            .fetch(self.nodes.offset)
            .run()?
            .remove(0)
            .to_host()?
            .scalar_value::<f32>()
    }

    /// The predictions for `x`.
    pub fn predict(&self, x: Tensor) -> Result<Tensor> {
        Ok(self
            .session
            .runner()
            .feed(self.nodes.x, x)
            .fetch(self.nodes.predicted)
            .run()?
            .remove(0))
    }

    /// The trained program as a TensorFlow Lite model from `x` to the
    /// predictions, `offset` frozen at its value now (see
    /// [`op_graph::tflite`]).
    pub fn export_tflite(&self, options: &ExportOptions) -> Result<op_lite::Model> {
        tflite::export(&self.session, [self.nodes.predicted], options)
    }

    /// Saves the trained program: signature `serving_default` from `x` to
    /// `y` (the predictions).
    pub fn save(&self, dir: &Path) -> Result<()> {
        let graph = self.session.graph();
        let signature = Signature::new()
            .input("x", &graph.tensor_name(self.nodes.x).to_string())
            .output("y", &graph.tensor_name(self.nodes.predicted).to_string());
        saved_model::save(dir, &self.session, [("serving_default", signature)])
    }
}
