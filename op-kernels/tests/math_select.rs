//! `Select`, `SelectV2` and `AddN`: TensorFlow's rules and messages,
//! random shapes against a naive loop (with shared and with handed-over
//! inputs), and buffers reused in place.

use op_core::{Code, Element, Runtime, Tensor};
use op_kernels::math::{AddN, Select, SelectV2};
use proptest::prelude::*;

mod common;
mod math_common;
use common::assert_contains;
use math_common::{broadcast_dims, broadcastable, run_both_ways, source_index, tensor};

fn vector<T: Element>(values: &[T]) -> Tensor {
    Tensor::from_vec([values.len()], values.to_vec()).unwrap()
}

fn address<T: Element>(t: &Tensor) -> *const T {
    t.as_slice::<T>().unwrap().as_ptr()
}

// ---- Select ----

#[test]
fn select_chooses_elements_rows_or_whole_tensors() {
    op_kernels::link();
    let t = tensor(&[2, 2], &[1i32, 2, 3, 4]);
    let e = tensor(&[2, 2], &[5i32, 6, 7, 8]);
    // Element by element.
    let cond = tensor(&[2, 2], &[true, false, false, true]);
    let out = Select::call(&cond, &t, &e).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [1, 6, 7, 4]);
    // One condition per row (TensorFlow: [[1,2],[7,8]]).
    let out = Select::call(vector(&[true, false]), &t, &e).run().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [1, 2, 7, 8]);
    // A vector condition with vectors: element by element ([1,6]).
    let out = Select::call(
        vector(&[true, false]),
        vector(&[1i32, 2]),
        vector(&[5i32, 6]),
    )
    .run()
    .unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), [1, 6]);
    // A scalar condition picks a whole tensor, sharing its buffer.
    let out = Select::call(Tensor::scalar(false), &t, &e).run().unwrap();
    assert_eq!(out, e);
    assert_eq!(address::<i32>(&out), address::<i32>(&e));
    // Strings, and empty values with an empty condition.
    let out = Select::call(
        vector(&[false, true]),
        Tensor::strings([2], ["a", "b"]).unwrap(),
        Tensor::strings([2], ["x", "y"]).unwrap(),
    )
    .run()
    .unwrap();
    assert_eq!(out, Tensor::strings([2], ["x", "b"]).unwrap());
    let empty = Tensor::from_vec([0, 2], Vec::<f32>::new()).unwrap();
    let out = Select::call(vector::<bool>(&[]), &empty, &empty)
        .run()
        .unwrap();
    assert_eq!(out.dims(), [0, 2]);
}

#[test]
fn select_refuses_what_tensorflow_refuses_with_its_messages() {
    op_kernels::link();
    let i = |dims: &[usize]| tensor(dims, &[1i32]);
    let b = |dims: &[usize]| tensor(dims, &[true]);
    let cases: &[(Tensor, Tensor, Tensor, &str)] = &[
        (
            b(&[2]),
            i(&[3]),
            i(&[3]),
            "Inputs to operation select of type Select must have the same size and shape.  Input 0: [2] != input 1: [3]",
        ),
        (
            b(&[2]),
            i(&[2]),
            i(&[3]),
            "must have the same size and shape.  Input 0: [2] != input 2: [3]",
        ),
        (
            b(&[1, 1]),
            i(&[1, 2]),
            i(&[1, 2]),
            "Input 0: [1,1] != input 1: [1,2]",
        ),
        (
            b(&[2]),
            i(&[1, 3]),
            i(&[1, 3]),
            "Number of batches of 'then' must match size of 'cond', but saw: 1 vs. 2",
        ),
        (
            b(&[2]),
            i(&[2, 1]),
            i(&[1, 2]),
            "'then' and 'else' must have the same size.  but received: [2,1] vs. [1,2]",
        ),
        (
            b(&[]),
            i(&[2]),
            i(&[3]),
            "'then' and 'else' must have the same size.  but received: [2] vs. [3]",
        ),
        (
            b(&[2]),
            i(&[]),
            i(&[]),
            "'then' must be at least a vector, but saw shape: []",
        ),
        (
            b(&[1]),
            i(&[0, 2]),
            i(&[0, 2]),
            "Number of batches of 'then' must match size of 'cond', but saw: 0 vs. 1",
        ),
    ];
    for (cond, t, e, message) in cases {
        let err = Select::call(cond, t, e)
            .node_name("select")
            .run()
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{message}");
        assert_contains(&err, &["op Select (node 'select')", message]);
    }
    // The values must have one type, and the condition be bool.
    let err = Select::call(b(&[1]), i(&[1]), tensor(&[1], &[1.0f32]))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = Select::call(i(&[1]), i(&[1]), i(&[1])).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn select_writes_into_the_values_handed_over() {
    op_kernels::link();
    let cond = tensor(&[1000], &[true, false, false]);
    let t = tensor(&[1000], &[1.0f64]);
    let e = tensor(&[1000], &[2.0f64]);
    let at_t = address::<f64>(&t);
    let out = Select::call(&cond, t, &e).run().unwrap();
    assert_eq!(address::<f64>(&out), at_t);
    assert_eq!(out.as_slice::<f64>().unwrap()[..4], [1.0, 2.0, 2.0, 1.0]);
    // `e` when `t` is shared.
    let t = tensor(&[1000], &[1.0f64]);
    let at_e = address::<f64>(&e);
    let out = Select::call(&cond, &t, e).run().unwrap();
    assert_eq!(address::<f64>(&out), at_e);
    assert_eq!(out.as_slice::<f64>().unwrap()[..4], [1.0, 2.0, 2.0, 1.0]);
    // Rows, into `t`.
    let t = tensor(&[10, 100], &[3i64]);
    let at_t = address::<i64>(&t);
    let rows = tensor(&[10], &[false, true]);
    let out = Select::call(rows, t, tensor(&[10, 100], &[4i64]))
        .run()
        .unwrap();
    assert_eq!(address::<i64>(&out), at_t);
    assert_eq!(out.as_slice::<i64>().unwrap()[..2], [4, 4]);
    assert_eq!(out.as_slice::<i64>().unwrap()[100..102], [3, 3]);
}

/// The naive `Select` with a vector condition over rows, or elementwise.
fn naive_select<T: Element>(cond: &[bool], t: &Tensor, e: &Tensor, rows: bool) -> Vec<T> {
    let (t, e) = (t.as_slice::<T>().unwrap(), e.as_slice::<T>().unwrap());
    let per_row = if rows { t.len() / cond.len().max(1) } else { 1 };
    (0..t.len())
        .map(|i| {
            if cond[i / per_row.max(1)] {
                t[i].clone()
            } else {
                e[i].clone()
            }
        })
        .collect()
}

proptest! {
    #[test]
    fn select_matches_a_naive_loop(
        dims in prop::collection::vec(0usize..4, 1..4),
        rows in any::<bool>(),
        bits in prop::collection::vec(any::<bool>(), 1..20),
        values in prop::collection::vec(any::<i32>(), 2..20),
    ) {
        op_kernels::link();
        let cond_dims = if rows { vec![dims[0]] } else { dims.clone() };
        let cond = tensor(&cond_dims, &bits);
        let t = tensor(&dims, &values);
        let e = tensor(&dims, &values[1..]);
        let rows = rows && dims.len() != 1;
        let got = run_both_ways(Runtime::global(), "Select", &[cond.clone(), t.clone(), e.clone()], &[]).unwrap();
        let want = naive_select::<i32>(cond.as_slice().unwrap(), &t, &e, rows);
        prop_assert_eq!(got.dims(), &dims[..]);
        prop_assert_eq!(got.as_slice::<i32>().unwrap(), &want[..]);
    }

    #[test]
    fn select_v2_matches_a_naive_three_way_broadcast(
        shapes in broadcastable(3),
        bits in prop::collection::vec(any::<bool>(), 1..20),
        values in prop::collection::vec(-50.0f32..50.0, 2..20),
    ) {
        op_kernels::link();
        let cond = tensor(&shapes[0], &bits);
        let t = tensor(&shapes[1], &values);
        let e = tensor(&shapes[2], &values[1..]);
        let got = run_both_ways(Runtime::global(), "SelectV2", &[cond.clone(), t.clone(), e.clone()], &[]).unwrap();
        let out = broadcast_dims(&[&shapes[0], &shapes[1], &shapes[2]]).unwrap();
        let count: usize = out.iter().product();
        let (c, tv, ev) = (cond.as_slice::<bool>().unwrap(), t.as_slice::<f32>().unwrap(), e.as_slice::<f32>().unwrap());
        let want: Vec<f32> = (0..count)
            .map(|i| {
                if c[source_index(&out, &shapes[0], i)] {
                    tv[source_index(&out, &shapes[1], i)]
                } else {
                    ev[source_index(&out, &shapes[2], i)]
                }
            })
            .collect();
        prop_assert_eq!(got.dims(), &out[..]);
        prop_assert_eq!(got.as_slice::<f32>().unwrap(), &want[..]);
    }
}

#[test]
fn select_v2_broadcasts_strings_and_names_all_three_shapes_when_it_cannot() {
    op_kernels::link();
    let out = SelectV2::call(
        tensor(&[2, 1], &[true, false]),
        Tensor::strings([3], ["a", "b", "c"]).unwrap(),
        Tensor::strings([], ["z"]).unwrap(),
    )
    .run()
    .unwrap();
    assert_eq!(
        out,
        Tensor::strings([2, 3], ["a", "b", "c", "z", "z", "z"]).unwrap()
    );
    let err = SelectV2::call(
        vector(&[true, false]),
        vector(&[1i32, 2, 3]),
        Tensor::scalar(2i32),
    )
    .run()
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["condition [2], then [3], and else [] must be broadcastable"],
    );
    // Into `e`, handed over with the output's shape.
    let e = tensor(&[4, 300], &[1u16]);
    let at = address::<u16>(&e);
    let out = SelectV2::call(tensor(&[300], &[true, false]), Tensor::scalar(9u16), e)
        .run()
        .unwrap();
    assert_eq!(address::<u16>(&out), at);
    assert_eq!(out.as_slice::<u16>().unwrap()[..3], [9, 1, 9]);
}

// ---- AddN ----

proptest! {
    #[test]
    fn add_n_sums_like_a_naive_loop(
        dims in prop::collection::vec(0usize..5, 0..4),
        count in 1usize..6,
        values in prop::collection::vec(any::<i32>(), 1..30),
    ) {
        op_kernels::link();
        let inputs: Vec<Tensor> = (0..count).map(|k| tensor(&dims, &values[k % values.len()..])).collect();
        // Every other input handed over (a copy nobody else holds), the
        // others shared.
        let list = inputs.iter().enumerate().map(|(k, input)| {
            if k % 2 == 0 { input.clone() } else { math_common::fresh_copy(input) }
        });
        let call = op_core::OpCall::new("AddN").input_list(list.collect::<Vec<_>>());
        let got = call.run().unwrap().remove(0);
        let n: usize = dims.iter().product();
        let want: Vec<i32> = (0..n)
            .map(|i| inputs.iter().fold(0i32, |s, t| s.wrapping_add(t.as_slice::<i32>().unwrap()[i])))
            .collect();
        prop_assert_eq!(got.dims(), &dims[..]);
        prop_assert_eq!(got.as_slice::<i32>().unwrap(), &want[..]);
        // Floats of small whole values sum exactly in any order.
        let floats: Vec<Tensor> = inputs
            .iter()
            .map(|t| {
                let v: Vec<f64> = t.as_slice::<i32>().unwrap().iter().map(|&x| (x % 1000) as f64).collect();
                Tensor::from_vec(&dims, v).unwrap()
            })
            .collect();
        let got = op_core::OpCall::new("AddN").input_list(&floats).run().unwrap().remove(0);
        let want: Vec<f64> = (0..n).map(|i| floats.iter().map(|t| t.as_slice::<f64>().unwrap()[i]).sum()).collect();
        prop_assert_eq!(got.as_slice::<f64>().unwrap(), &want[..]);
    }
}

#[test]
fn add_n_reuses_an_input_handed_over_and_returns_a_lone_input() {
    op_kernels::link();
    let a = tensor(&[1000], &[1.0f32]);
    let b = tensor(&[1000], &[2.0f32]);
    let c = tensor(&[1000], &[4.0f32]);
    let at_b = address::<f32>(&b);
    let out = AddN::call(vec![a.clone(), b, c.clone()]).run().unwrap();
    // `a` and `c` are shared (this test keeps them): `b` is the output.
    assert_eq!(address::<f32>(&out), at_b);
    assert!(out.as_slice::<f32>().unwrap().iter().all(|&v| v == 7.0));
    assert!(a.as_slice::<f32>().unwrap().iter().all(|&v| v == 1.0));
    // Nothing handed over: a new buffer.
    let out = AddN::call(vec![&a, &c]).run().unwrap();
    assert_ne!(address::<f32>(&out), address::<f32>(&a));
    assert!(out.as_slice::<f32>().unwrap().iter().all(|&v| v == 5.0));
    // One input: itself.
    let out = AddN::call(vec![&a]).run().unwrap();
    assert_eq!(address::<f32>(&out), address::<f32>(&a));
    // Integers wrap; complex numbers add.
    let out = AddN::call(vec![vector(&[i64::MAX]), vector(&[1i64])])
        .run()
        .unwrap();
    assert_eq!(out.as_slice::<i64>().unwrap(), [i64::MIN]);
    let z = op_core::Complex64::new(1.0, -1.0);
    let out = AddN::call(vec![vector(&[z]), vector(&[z]), vector(&[z])])
        .run()
        .unwrap();
    assert_eq!(out.as_slice::<op_core::Complex64>().unwrap(), [z * 3.0]);
}

#[test]
fn add_n_refuses_inputs_of_different_shapes_with_tensorflows_message() {
    op_kernels::link();
    for (second, shape) in [
        (tensor(&[3], &[1i32]), "[3]"),
        (tensor(&[1, 2], &[1i32]), "[1,2]"),
    ] {
        let err = AddN::call(vec![tensor(&[2], &[1i32]), second])
            .node_name("sum")
            .run()
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert_contains(
            &err,
            &[&format!(
                "Inputs to operation sum of type AddN must have the same size and shape.  Input 0: [2] != input 1: {shape}"
            )],
        );
    }
    // Two types in one list.
    let err = op_core::OpCall::new("AddN")
        .input_list([tensor(&[2], &[1i32]), tensor(&[2], &[1.0f32])])
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}
