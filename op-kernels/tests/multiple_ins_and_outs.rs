//! `MultipleInsAndOuts`, declared with `#[op]`: two inputs (int32 `y`,
//! float `z`) and two outputs (`a`: `z` as text, `b`: `y` unchanged).

use op_core::{Code, DType, OpCall, Tensor};
use op_kernels::multiple_ins_and_outs::{MultipleInsAndOuts, multiple_ins_and_outs};

mod common;
use common::assert_contains;

fn strings(t: &Tensor) -> Vec<String> {
    t.as_slice::<Vec<u8>>()
        .unwrap()
        .iter()
        .map(|s| String::from_utf8(s.clone()).unwrap())
        .collect()
}

#[test]
fn formats_z_and_passes_y_through() {
    op_kernels::link();
    let y = Tensor::from_vec([3], vec![1i32, -2, 3]).unwrap();
    let z = Tensor::from_vec([2, 2], vec![0.5f32, -1.0, 3.25, 100.0]).unwrap();
    let (a, b) = MultipleInsAndOuts::call(&y, &z).run().unwrap();
    assert_eq!(a.dtype(), DType::String);
    assert_eq!(a.dims(), [2, 2]);
    assert_eq!(strings(&a), ["0.5", "-1", "3.25", "100"]);
    assert_eq!(b.dtype(), DType::I32);
    assert_eq!(b.dims(), [3]);
    assert_eq!(b.as_slice::<i32>().unwrap(), [1, -2, 3]);

    let out = OpCall::new("MultipleInsAndOuts")
        .input(&y)
        .input(&z)
        .run()
        .unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0], a);
    assert_eq!(out[1], b);

    // The plain function is still callable and agrees.
    let (fa, fb) = multiple_ins_and_outs(y.view::<i32>().unwrap(), z.view::<f32>().unwrap());
    assert_eq!(Tensor::from_array(fa), a);
    assert_eq!(Tensor::from_array(fb), b);
}

#[test]
fn scalars_and_empty_tensors() {
    let (a, b) = MultipleInsAndOuts::call(Tensor::scalar(7i32), Tensor::scalar(1.5f32))
        .run()
        .unwrap();
    assert_eq!(a.rank(), 0);
    assert_eq!(a.scalar_value::<Vec<u8>>().unwrap(), b"1.5");
    assert_eq!(b.scalar_value::<i32>().unwrap(), 7);

    let (a, b) = MultipleInsAndOuts::call(
        Tensor::from_vec([0], Vec::<i32>::new()).unwrap(),
        Tensor::from_vec([0, 2], Vec::<f32>::new()).unwrap(),
    )
    .run()
    .unwrap();
    assert_eq!(a.dims(), [0, 2]);
    assert_eq!(b.dims(), [0]);
}

#[test]
fn the_op_def_names_its_args() {
    let entry = op_core::Registry::global()
        .op("MultipleInsAndOuts")
        .unwrap();
    let def = entry.def();
    let inputs: Vec<&str> = def.inputs.iter().map(|a| a.name.as_str()).collect();
    let outputs: Vec<&str> = def.outputs.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(inputs, ["y", "z"]);
    assert_eq!(outputs, ["a", "b"]);
    assert_eq!(entry.kernels().len(), 1);
    assert_eq!(entry.kernels()[0].device, op_core::DeviceType::Cpu);
}

#[test]
fn wrong_dtypes_are_rejected_naming_the_input() {
    let i = Tensor::from_vec([1], vec![1i32]).unwrap();
    let f = Tensor::from_vec([1], vec![1.0f32]).unwrap();
    let err = MultipleInsAndOuts::call(&f, &f).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["MultipleInsAndOuts", "input 'y' must be int32", "float"],
    );

    let err = MultipleInsAndOuts::call(&i, &i).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["MultipleInsAndOuts", "input 'z' must be float", "int32"],
    );

    let d = Tensor::from_vec([1], vec![1.0f64]).unwrap();
    let err = OpCall::new("MultipleInsAndOuts")
        .input(&i)
        .input(&d)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["input 'z' must be float", "double"]);
}

#[test]
fn wrong_number_of_inputs_is_rejected() {
    let i = Tensor::from_vec([1], vec![1i32]).unwrap();
    let err = OpCall::new("MultipleInsAndOuts")
        .input(&i)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["MultipleInsAndOuts", "expects 2 input(s) (y, z), got 1"],
    );

    let f = Tensor::from_vec([1], vec![1.0f32]).unwrap();
    let err = OpCall::new("MultipleInsAndOuts")
        .input(&i)
        .input(&f)
        .input(&f)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["expects 2 input(s) (y, z), got 3"]);
}
