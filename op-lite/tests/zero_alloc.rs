//! `Interpreter::invoke` performs no heap allocation: counted by this test
//! binary's global allocator, on the thread that invokes.

mod common;
mod counting;

use common::{ModelBuilder, SEED_X, add_chain, assert_close, resolver, seed_sin_model};
use op_lite::Interpreter;
use op_lite::model::BuiltinOperator;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

#[test]
fn the_counter_sees_allocations() {
    assert!(counting::allocations(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
}

#[test]
fn invoking_the_sin_model_allocates_nothing() {
    let mut interpreter = Interpreter::new(&seed_sin_model(), &resolver()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.set_input(0, &SEED_X).unwrap();
    let n = counting::allocations(|| {
        for _ in 0..3 {
            interpreter.invoke().unwrap();
        }
    });
    assert_eq!(n, 0, "invoke allocated {n} times");
    let expected: Vec<f32> = SEED_X.iter().map(|x| (x + 1.0).sin()).collect();
    assert_close(interpreter.output::<f32>(0).unwrap(), &expected);
}

#[test]
fn invoking_a_model_of_adds_and_muls_allocates_nothing() {
    // y = ((x + x) * c) + (x * x), with intermediates sharing the arena.
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[64]);
    let c = b.constant("c", &[1], &[0.5]);
    let [s, p, q, y] = ["s", "p", "q", "y"].map(|name| b.f32(name, &[64]));
    b.builtin(BuiltinOperator::ADD, 1, &[x, x], &[s]);
    b.builtin(BuiltinOperator::MUL, 1, &[s, c], &[p]);
    b.builtin(BuiltinOperator::MUL, 1, &[x, x], &[q]);
    b.builtin(BuiltinOperator::ADD, 1, &[p, q], &[y]);
    b.input(x).output(y);
    let mut interpreter = Interpreter::new(&b.build(), &resolver()).unwrap();
    interpreter.allocate_tensors().unwrap();
    let xs: Vec<f32> = (0..64).map(|i| i as f32 - 20.0).collect();
    interpreter.set_input(0, &xs).unwrap();
    let n = counting::allocations(|| interpreter.invoke().unwrap());
    assert_eq!(n, 0, "invoke allocated {n} times");
    let expected: Vec<f32> = xs.iter().map(|x| (x + x) * 0.5 + x * x).collect();
    assert_eq!(interpreter.output::<f32>(0).unwrap(), expected);
}

#[test]
fn invoking_a_long_chain_allocates_nothing_and_reading_outputs_neither() {
    let mut interpreter = Interpreter::new(&add_chain(200, 4), &resolver()).unwrap();
    interpreter.allocate_tensors().unwrap();
    let n = counting::allocations(|| {
        interpreter.input_mut::<f32>(0).unwrap().fill(1.0);
        interpreter.invoke().unwrap();
        assert_eq!(interpreter.output::<f32>(0).unwrap(), [201.0; 4]);
    });
    assert_eq!(n, 0, "allocated {n} times");
}

#[test]
fn a_profiled_invoke_allocates_nothing_either() {
    let mut interpreter = Interpreter::new(&add_chain(50, 4), &resolver()).unwrap();
    interpreter.allocate_tensors().unwrap();
    interpreter.input_mut::<f32>(0).unwrap().fill(1.0);
    let mut profile = op_lite::interpreter::Profile::new(&interpreter);
    let n = counting::allocations(|| {
        for _ in 0..3 {
            interpreter.invoke_profiled(&mut profile).unwrap();
        }
    });
    assert_eq!(n, 0, "invoke_profiled allocated {n} times");
    assert_eq!(profile.runs(), 3);
    assert_eq!(interpreter.output::<f32>(0).unwrap(), [51.0; 4]);
}
