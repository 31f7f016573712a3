//! Seed 002's training, eagerly and as a graph: both land within 1e-3 of
//! the true offset 1.0 and within 1e-4 of what TensorFlow 2.21 computes
//! for the same program (`tools/tensorflow/sin_training.py` printed
//! `1.00000012` both ways), and the saved graph loads back computing the
//! same predictions.

use examples::sin::{EagerTraining, GraphTraining, X};
use op_core::Tensor;
use op_graph::saved_model;

/// `tools/tensorflow/sin_training.py`'s offset after 1,000 steps, eager
/// and `tf.function` alike (float32 `1.0000001`).
const TENSORFLOW_OFFSET: f32 = 1.000_000_1;

fn assert_trained(offset: f32, how: &str) {
    assert!((offset - 1.0).abs() < 1e-3, "{how}: offset {offset}");
    assert!(
        (offset - TENSORFLOW_OFFSET).abs() < 1e-4,
        "{how}: offset {offset}, TensorFlow {TENSORFLOW_OFFSET}"
    );
}

#[test]
fn eager_training_with_a_tape_learns_the_offset_as_tensorflow_does() {
    op_kernels::link();
    let mut model = EagerTraining::new().unwrap();
    let first = model.step().unwrap().scalar_value::<f32>().unwrap();
    for _ in 1..1000 {
        model.step().unwrap();
    }
    let last = model.forward().unwrap().scalar_value::<f32>().unwrap();
    assert!(last < first * 1e-6, "loss {first} -> {last}");
    assert_trained(model.offset().unwrap(), "eager");
}

#[test]
fn graph_training_learns_the_same_offset_and_its_saved_model_predicts_the_same() {
    op_kernels::link();
    let model = GraphTraining::new().unwrap();
    for _ in 0..1000 {
        model.step().unwrap();
    }
    assert_trained(model.offset().unwrap(), "graph");

    let dir = std::env::temp_dir().join(format!("opkit-sin-test-{}", std::process::id()));
    model.save(&dir).unwrap();
    let loaded = saved_model::load(&dir, op_core::Registry::global()).unwrap();
    let x = Tensor::from_vec([5], X.to_vec()).unwrap();
    let reloaded = loaded.run("serving_default", [("x", x.clone())]).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(reloaded["y"], model.predict(x).unwrap());
}
