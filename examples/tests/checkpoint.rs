//! Train a little, save, start from nothing in a fresh runtime, restore,
//! and get the same answers: a hash table and a variable in one
//! checkpoint.

use op_core::checkpoint::{self, Checkpoint};
use op_core::{DType, Runtime, ShapeValue, Tensor};
use op_kernels::hash_table::SimpleHashTableHandle;
use op_kernels::variable::Variable;

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "examples_checkpoint_{}_{name}.safetensors",
        std::process::id()
    ))
}

/// One step of gradient descent on `(w - target)^2`, through the ops.
fn train_step(weights: &Variable<'_>, target: &[f32]) -> op_core::Result<()> {
    let w = weights.read()?;
    let updated: Vec<f32> = w
        .as_slice::<f32>()?
        .iter()
        .zip(target)
        .map(|(w, t)| w - 0.2 * 2.0 * (w - t))
        .collect();
    weights.assign(Tensor::from_vec([target.len()], updated)?)
}

#[test]
fn a_fresh_runtime_restores_what_another_saved() {
    op_kernels::link();
    let path = temp_path("fresh");
    let queries: Vec<i64> = (-10..1100).collect();
    let target = [1.0f32, -2.0, 0.5, 3.0];

    let (answers, trained, names) = {
        let runtime = Runtime::new();
        let table = SimpleHashTableHandle::<i64, f32>::new_on(&runtime, -1.0).unwrap();
        // Fill it one op at a time, overwrite some, remove some.
        for k in 0..1000 {
            table.insert(k, k as f32).unwrap();
        }
        for k in (0..1000).step_by(3) {
            table.insert(k, -(k as f32)).unwrap();
        }
        for k in (0..1000).step_by(7) {
            table.remove(k).unwrap();
        }
        let weights =
            Variable::new_on(&runtime, Tensor::from_vec([4], vec![0.0f32; 4]).unwrap()).unwrap();
        for _ in 0..20 {
            train_step(&weights, &target).unwrap();
        }

        let mut saved = Checkpoint::new();
        saved.add("table", &table).unwrap();
        saved.add("weights", &weights).unwrap();
        let names = saved.save(&path).unwrap();
        (
            table.find_many(&queries).unwrap(),
            weights.read().unwrap(),
            names,
        )
        // The runtime, its resources and every handle go here.
    };
    assert_eq!(names, ["table/keys", "table/values", "weights/value"]);

    let runtime = Runtime::new();
    let table = SimpleHashTableHandle::<i64, f32>::new_on(&runtime, -1.0).unwrap();
    let weights =
        Variable::uninitialized_on(&runtime, DType::F32, ShapeValue::from_sizes(&[4])).unwrap();
    assert_eq!(table.find(5).unwrap(), -1.0, "starts empty");
    let mut restored = Checkpoint::new();
    restored.add("table", &table).unwrap();
    restored.add("weights", &weights).unwrap();
    restored.restore(&path).unwrap();

    assert_eq!(table.find_many(&queries).unwrap(), answers);
    assert_eq!(table.find(7).unwrap(), -1.0, "removed keys stay removed");
    assert_eq!(table.find(3).unwrap(), -3.0);
    assert_eq!(weights.read().unwrap(), trained);
    let w = trained.as_slice::<f32>().unwrap();
    for (w, t) in w.iter().zip(target) {
        assert!((w - t).abs() < 1e-3, "trained: {w} vs {t}");
    }

    // Training goes on from the restored state.
    train_step(&weights, &target).unwrap();
    assert_ne!(
        weights.read().unwrap(),
        Tensor::from_vec([4], vec![0.0f32; 4]).unwrap()
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn restoring_into_a_table_of_other_dtypes_is_an_error_and_changes_nothing() {
    op_kernels::link();
    let path = temp_path("mismatch");
    let table = SimpleHashTableHandle::<i64, f32>::new(-1.0).unwrap();
    table.insert(1, 2.0).unwrap();
    let mut saved = Checkpoint::new();
    saved.add("table", &table).unwrap();
    saved.save(&path).unwrap();

    let other = SimpleHashTableHandle::<i64, f64>::new(-1.0).unwrap();
    other.insert(9, 9.0).unwrap();
    let mut restore = Checkpoint::new();
    restore.add("table", &other).unwrap();
    let err = restore.restore(&path).unwrap_err();
    assert_eq!(err.code(), op_core::Code::InvalidArgument, "{err}");
    let message = err.to_string();
    assert!(message.contains("table/values"), "{message}");
    assert!(
        message.contains("double") && message.contains("float"),
        "{message}"
    );
    assert_eq!(other.find(9).unwrap(), 9.0);

    // The file is what other tools see: the keys and values.
    let tensors = checkpoint::read(&path).unwrap();
    assert_eq!(tensors["table/keys"].dtype(), DType::I64);
    assert_eq!(tensors["table/values"].dtype(), DType::F32);
    std::fs::remove_file(&path).unwrap();
}
