//! `Interpreter::invoke` with the builtin kernels performs no heap
//! allocation: the CNN (CONV_2D's im2col in a planned temporary), the MLP,
//! and the op models that use every builtin, counted by this test binary's
//! global allocator on the thread that invokes.

mod npy;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use op_lite::{BuiltinOpResolver, Interpreter, Model};

/// The system allocator, counting the allocations (and reallocations) of
/// threads that turned counting on (the pattern of `zero_alloc.rs`).
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: the thread's locals may be gone while it exits.
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = COUNT.try_with(|n| n.set(n.get() + 1));
        }
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments,
// which the caller guarantees as `GlobalAlloc` requires.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded, see the impl.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded, see the impl.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: forwarded, see the impl.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded, see the impl.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// How many allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
    f();
    COUNTING.with(|on| on.set(false));
    COUNT.with(|n| n.get())
}

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
        let count = allocations(|| interpreter.invoke().unwrap());
        assert_eq!(count, 0, "{name}: invoke {round} allocated {count} times");
    }
    let want = npy::read(&format!("{name}.output.npy")).f32();
    npy::assert_matches(name, interpreter.output::<f32>(0).unwrap(), &want, 1e-5);
}

#[test]
fn the_counter_sees_allocations() {
    assert!(allocations(|| drop(std::hint::black_box(vec![1u8; 10]))) >= 1);
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
