//! `Interpreter::invoke` with the builtin kernels performs no heap
//! allocation: the CNN (CONV_2D's im2col in a planned temporary), the MLP,
//! and the op models that use every builtin, counted by this test binary's
//! global allocator on the thread that invokes.

mod counting;
mod npy;

use op_lite::{BuiltinOpResolver, Interpreter, Model};

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

/// The interpreter of `tests/data/<name>.tflite`, planned for its `.npy`
/// input and filled with it.
fn ready(name: &str) -> Interpreter {
    let bytes = std::fs::read(npy::data_path(&format!("{name}.tflite"))).unwrap();
    let model = Model::from_bytes(&bytes).unwrap();
    let input = npy::read(&format!("{name}.input.npy"));
    let mut interpreter = Interpreter::new(&model, &BuiltinOpResolver::new()).unwrap();
    if interpreter.input_shape(0).unwrap() != input.shape {
        interpreter.resize_input_tensor(0, &input.shape).unwrap();
    }
    interpreter.allocate_tensors().unwrap();
    interpreter
        .input_bytes_mut(0)
        .unwrap()
        .copy_from_slice(&input.data);
    interpreter
}

/// Asserts that invoking `name`'s model allocates nothing, on the first
/// invoke and on later ones, and still gives LiteRT's output.
fn assert_invoke_allocates_nothing(name: &str) {
    let mut interpreter = ready(name);
    for round in 0..3 {
        let count = counting::allocations(|| interpreter.invoke().unwrap());
        assert_eq!(count, 0, "{name}: invoke {round} allocated {count} times");
    }
    let want = npy::read(&format!("{name}.output.npy")).f32();
    npy::assert_matches(name, interpreter.output::<f32>(0).unwrap(), &want, 1e-5);
}

#[test]
fn the_counter_sees_allocations() {
    assert!(counting::allocations(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
}

#[test]
fn invoking_the_cnn_allocates_nothing() {
    assert_invoke_allocates_nothing("cnn");
}

#[test]
fn invoking_the_mlp_allocates_nothing() {
    assert_invoke_allocates_nothing("mlp");
}

#[test]
fn invoking_every_builtin_allocates_nothing() {
    for name in ["unary", "binary", "shapes", "nn", "dims", "int32"] {
        assert_invoke_allocates_nothing(&format!("ops/{name}"));
    }
}
