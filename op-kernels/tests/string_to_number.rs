//! `StringToNumber`: parses strings to float (the default), double, int32,
//! int64, uint32 or uint64 (TensorFlow's six), keeps the shape, and rejects
//! unparsable strings, non-string inputs and other output types.

use op_core::{AttrValue, Code, DType, OpCall, Tensor};
use op_kernels::string_to_number::StringToNumber;

mod common;
use common::assert_contains;

#[test]
fn parses_floats_by_default() {
    op_kernels::link();
    let s = Tensor::strings([2, 2], ["1.5", "-2", " 3e2 ", "0"]).unwrap();
    let out = StringToNumber::call(&s).run().unwrap();
    assert_eq!(out.dtype(), DType::F32);
    assert_eq!(out.dims(), [2, 2]);
    assert_eq!(out.as_slice::<f32>().unwrap(), [1.5, -2.0, 300.0, 0.0]);

    let out = OpCall::new("StringToNumber").input(&s).run().unwrap();
    assert_eq!(out[0].dtype(), DType::F32);
    assert_eq!(out[0].as_slice::<f32>().unwrap(), [1.5, -2.0, 300.0, 0.0]);
}

#[test]
fn parses_int32_when_asked() {
    let s = Tensor::strings([3], ["7", "-2147483648", "2147483647"]).unwrap();
    let out = StringToNumber::call(&s).out_type(DType::I32).run().unwrap();
    assert_eq!(out.dtype(), DType::I32);
    assert_eq!(out.dims(), [3]);
    assert_eq!(out.as_slice::<i32>().unwrap(), [7, i32::MIN, i32::MAX]);

    let out = OpCall::new("StringToNumber")
        .input(&s)
        .attr("out_type", DType::I32)
        .run()
        .unwrap();
    assert_eq!(out[0].as_slice::<i32>().unwrap(), [7, i32::MIN, i32::MAX]);

    // Explicitly float, too.
    let out = StringToNumber::call(Tensor::string("2.25"))
        .out_type(DType::F32)
        .run()
        .unwrap();
    assert_eq!(out.rank(), 0);
    assert_eq!(out.scalar_value::<f32>().unwrap(), 2.25);
}

#[test]
fn an_empty_tensor_gives_an_empty_output() {
    let s = Tensor::strings([0], Vec::<&str>::new()).unwrap();
    let out = StringToNumber::call(&s).out_type(DType::I32).run().unwrap();
    assert_eq!(out.dtype(), DType::I32);
    assert_eq!(out.dims(), [0]);
}

#[test]
fn unparsable_strings_are_invalid_arguments() {
    let s = Tensor::strings([3], ["1", "abc", "3"]).unwrap();
    let err = StringToNumber::call(&s).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        err.message(),
        "StringToNumberOp could not correctly convert string: abc"
    );
    assert_contains(
        &err,
        &["in kernel string_to_number::<f32>", "StringToNumber"],
    );

    // A float is not an int32, nor is an int32 out of range, nor empty text.
    for bad in ["1.5", "2147483648", "", "12abc"] {
        let s = Tensor::strings([1], [bad]).unwrap();
        let err = StringToNumber::call(&s)
            .out_type(DType::I32)
            .run()
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{bad:?}");
        assert_eq!(
            err.message(),
            format!("StringToNumberOp could not correctly convert string: {bad}")
        );
        assert_contains(&err, &["string_to_number::<i32>"]);
    }

    // Bytes that are not UTF-8.
    let s = Tensor::from_vec([1], vec![vec![0xffu8, b'1']]).unwrap();
    let err = StringToNumber::call(&s).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["could not correctly convert string"]);
}

#[test]
fn parses_double_int64_uint32_and_uint64_when_asked() {
    let s = Tensor::strings([3], ["0.1", " -2.5e300 ", "+7"]).unwrap();
    let out = StringToNumber::call(&s).out_type(DType::F64).run().unwrap();
    assert_eq!(out.as_slice::<f64>().unwrap(), [0.1, -2.5e300, 7.0]);

    let s = Tensor::strings([3], ["-9223372036854775808", " 9223372036854775807 ", "+5"]).unwrap();
    let out = StringToNumber::call(&s).out_type(DType::I64).run().unwrap();
    assert_eq!(out.as_slice::<i64>().unwrap(), [i64::MIN, i64::MAX, 5]);

    let s = Tensor::strings([2], ["4294967295", " 0 "]).unwrap();
    let out = StringToNumber::call(&s).out_type(DType::U32).run().unwrap();
    assert_eq!(out.as_slice::<u32>().unwrap(), [u32::MAX, 0]);

    let s = Tensor::strings([2], ["18446744073709551615", "+8"]).unwrap();
    let out = StringToNumber::call(&s).out_type(DType::U64).run().unwrap();
    assert_eq!(out.as_slice::<u64>().unwrap(), [u64::MAX, 8]);
}

#[test]
fn out_of_range_or_negative_unsigned_strings_are_invalid_arguments() {
    // As TensorFlow 2.21: each of these is an error for that type.
    let cases = [
        (DType::U32, "-1"),
        (DType::U32, "4294967296"),
        (DType::U64, "-1"),
        (DType::U64, "18446744073709551616"),
        (DType::I64, "9223372036854775808"),
        (DType::I64, "1.5"),
        (DType::U64, "1e3"),
    ];
    for (dtype, text) in cases {
        let s = Tensor::strings([1], [text]).unwrap();
        let err = StringToNumber::call(&s).out_type(dtype).run().unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{dtype} {text:?}");
        assert_eq!(
            err.message(),
            format!("StringToNumberOp could not correctly convert string: {text}")
        );
    }
}

#[test]
fn only_tensorflows_six_output_types_are_allowed() {
    let s = Tensor::strings([1], ["1"]).unwrap();
    for dtype in [DType::F16, DType::I8, DType::U8, DType::Bool, DType::String] {
        let err = StringToNumber::call(&s).out_type(dtype).run().unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{dtype}");
        assert_contains(
            &err,
            &[
                "StringToNumber",
                "out_type",
                &dtype.to_string(),
                "float",
                "double",
                "int32",
                "int64",
                "uint32",
                "uint64",
            ],
        );
    }
    let err = OpCall::new("StringToNumber")
        .input(&s)
        .attr("out_type", AttrValue::Int(3))
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["StringToNumber", "out_type"]);

    let err = OpCall::new("StringToNumber")
        .input(&s)
        .attr("out_typ", DType::I32)
        .run()
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &["no attr named 'out_typ'", "did you mean 'out_type'?"],
    );
}

#[test]
fn the_input_must_be_a_string_tensor() {
    let t = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
    let err = StringToNumber::call(&t).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "StringToNumber",
            "input 'string_tensor' must be string",
            "float",
        ],
    );

    let err = OpCall::new("StringToNumber").run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "StringToNumber",
            "expects 1 input(s) (string_tensor), got 0",
        ],
    );
}

#[test]
fn one_kernel_per_output_type() {
    let entry = op_core::Registry::global().op("StringToNumber").unwrap();
    let mut described: Vec<String> = entry.kernels().iter().map(|k| k.describe()).collect();
    described.sort();
    assert_eq!(
        described,
        [
            "device='cpu'; out_type=double",
            "device='cpu'; out_type=float",
            "device='cpu'; out_type=int32",
            "device='cpu'; out_type=int64",
            "device='cpu'; out_type=uint32",
            "device='cpu'; out_type=uint64",
        ]
    );
}

#[test]
fn a_huge_unparsable_string_is_quoted_at_a_bounded_length() {
    let huge = vec![b'x'; 10 << 20];
    let s = Tensor::from_vec([1], vec![huge.clone()]).unwrap();
    let err = StringToNumber::call(&s).run().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let text = err.to_string();
    assert!(text.len() < 1024, "{} bytes", text.len());
    assert_contains(
        &err,
        &[
            "could not correctly convert string: xxx",
            &format!("… ({} bytes)", huge.len()),
        ],
    );
}
