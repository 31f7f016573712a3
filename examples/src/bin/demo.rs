//! The main demo: declare an op in TensorFlow's spec language, see its
//! definition as TensorFlow would print it, instantiate it, work with tensors,
//! and watch mistakes get caught with messages that say how to fix them.
//!
//! Run it with `cargo run -p examples`.

use op_core::ndarray::ArrayD;
use op_core::node::NodeBuilder;
use op_core::{DType, OpDefBuilder, Tensor, op_requires};

/// ZeroOut's computation on a typed view (kernels arrive with the macros).
fn zero_out(input: &Tensor) -> op_core::Result<Tensor> {
    op_requires!(
        input.rank() == 1,
        op_core::Code::InvalidArgument,
        "ZeroOut expects a 1-D vector, got shape {}",
        input.shape()
    );
    let values = input.view::<i32>()?;
    let mut out = ArrayD::<i32>::zeros(values.raw_dim());
    if let (Some(first), Some(slot)) = (values.first(), out.first_mut()) {
        *slot = *first;
    }
    Ok(Tensor::from_array(out))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("== 1. An op declared with TensorFlow's spec strings\n");
    let op = OpDefBuilder::new("ZeroOut")
        .attr("T: {float, int32} = DT_INT32")
        .input("to_zero: T")
        .output("zeroed: T")
        .doc("Zeros all but the first element.\n\nto_zero: The tensor to zero out.")
        .build()?;
    println!("{}", op_core::op_spec::pbtxt::op_list_to_string([&op]));

    println!("== 2. A node of it: T is inferred from the input\n");
    let node = NodeBuilder::new(&op).input(DType::F32).build()?;
    println!(
        "attrs: {:?}",
        node.attrs()
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
    );
    println!(
        "output dtypes: {:?}\n",
        node.output_types()
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
    );

    println!("== 3. Tensors: zero-copy typed views\n");
    let input = Tensor::from_vec([5], vec![5, 4, 3, 2, 1])?;
    let output = zero_out(&input)?;
    println!(
        "zero_out({:?}) = {:?}\n",
        input.as_slice::<i32>()?,
        output.as_slice::<i32>()?
    );

    println!("== 4. Mistakes, caught\n");
    let typo = OpDefBuilder::new("ZeroOut")
        .attr("T: {float, in32}")
        .input("to_zero: T")
        .build();
    println!("{}\n", typo.unwrap_err());
    let bad_name = OpDefBuilder::new("ZeroOut").input("ToZero: int32").build();
    println!("{}\n", bad_name.unwrap_err());
    let bad_default = OpDefBuilder::new("ZeroOut")
        .attr("T: {float, int32} = DT_INT64")
        .build();
    println!("{}\n", bad_default.unwrap_err());
    let wrong_input = NodeBuilder::new(&op).input(DType::I64).build();
    println!("{}\n", wrong_input.unwrap_err());
    let wrong_view = input.view::<f32>();
    println!("{}\n", wrong_view.unwrap_err());
    let matrix = Tensor::from_vec([2, 2], vec![1, 2, 3, 4])?;
    println!("{}", zero_out(&matrix).unwrap_err());
    Ok(())
}
