//! `Identity`, `IdentityN`, `NoOp` and `StopGradient`: TensorFlow's shape
//! functions, and kernels that copy nothing (`tensorflow_opdefs.rs`
//! compares their OpDefs with TensorFlow's).

use op_core::shape_inference::testing::ShapeTest;
use op_core::{DType, ResourceHandle, Tensor};
use op_kernels::identity::{Identity, IdentityN, NoOp, StopGradient};

#[test]
fn identity_and_stop_gradient_return_the_input_buffer_itself() {
    for handed_over in [true, false] {
        let x = Tensor::from_vec([1000], vec![2.5f32; 1000]).unwrap();
        let at = x.as_slice::<f32>().unwrap().as_ptr();
        let (y, z) = if handed_over {
            let y = Identity::call(x).run().unwrap();
            let z = StopGradient::call(y.clone()).run().unwrap();
            (y, z)
        } else {
            (
                Identity::call(&x).run().unwrap(),
                StopGradient::call(&x).run().unwrap(),
            )
        };
        assert_eq!(y.as_slice::<f32>().unwrap().as_ptr(), at);
        assert_eq!(z.as_slice::<f32>().unwrap().as_ptr(), at);
        assert_eq!(z, Tensor::from_vec([1000], vec![2.5f32; 1000]).unwrap());
    }
}

#[test]
fn an_identity_of_a_handed_over_tensor_leaves_its_output_the_only_holder() {
    let x = Tensor::from_vec([100], vec![1i64; 100]).unwrap();
    let y = Identity::call(x).run().unwrap();
    assert!(y.is_unique(), "the next kernel can work in place");
}

#[test]
fn identity_takes_every_dtype() {
    let tensors = [
        Tensor::strings([2], ["a", "b"]).unwrap(),
        Tensor::from_vec([2], vec![true, false]).unwrap(),
        Tensor::scalar(op_core::f16::from_f32(1.5)),
        Tensor::scalar(ResourceHandle::default()),
        Tensor::from_vec([3], vec![1u16, 2, 3]).unwrap(),
    ];
    for t in tensors {
        let dtype = t.dtype();
        let y = Identity::call(&t).run().unwrap();
        assert_eq!(y.dtype(), dtype);
        if dtype != DType::Resource {
            assert_eq!(y, t);
        }
    }
}

#[test]
fn identity_n_returns_each_input_of_its_own_dtype() {
    let a = Tensor::from_vec([2], vec![1.0f64, 2.0]).unwrap();
    let b = Tensor::scalar(7i32);
    let out = IdentityN::call([a.clone(), b.clone()]).run().unwrap();
    assert_eq!(out, [a.clone(), b]);
    assert_eq!(
        out[0].as_slice::<f64>().unwrap().as_ptr(),
        a.as_slice::<f64>().unwrap().as_ptr()
    );
}

#[test]
fn identity_n_of_no_tensors_is_an_error() {
    let err = IdentityN::call(Vec::<Tensor>::new()).run().unwrap_err();
    assert_eq!(err.code(), op_core::Code::InvalidArgument);
}

#[test]
fn no_op_runs_and_outputs_nothing() {
    NoOp::call().run().unwrap();
}

#[test]
fn shapes_pass_through() {
    op_kernels::link();
    ShapeTest::new("Identity").ok("[2,?]", "in0");
    ShapeTest::new("Identity").ok("?", "in0");
    ShapeTest::new("StopGradient").ok("[]", "in0");
    ShapeTest::new("IdentityN")
        .attr("T", vec![DType::F32, DType::I32])
        .ok("[2,?];?", "in0;in1");
    ShapeTest::new("NoOp").ok("", "");
}
