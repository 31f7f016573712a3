//! Tensors to and from `TensorValue` (TensorFlow's `TensorProto`): both of
//! TensorFlow's encodings read, the fill rule for short typed fields, and
//! every malformed proto an error.

use op_core::op_spec::ShapeValue;
use op_core::{Code, Complex64, DType, Tensor, TensorValue, bf16, f16};
use proptest::prelude::*;

fn proto(dtype: DType, dims: &[i64]) -> TensorValue {
    TensorValue {
        dtype: Some(dtype),
        shape: Some(ShapeValue::from_sizes(dims)),
        ..TensorValue::default()
    }
}

fn decode_error(value: &TensorValue) -> String {
    let error = Tensor::from_tensor_value(value).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument, "{error}");
    error.message().to_owned()
}

#[test]
fn tensor_content_is_read_as_little_endian_elements() {
    let mut value = proto(DType::F32, &[2]);
    value.tensor_content = [1.5f32, -2.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let t = Tensor::from_tensor_value(&value).unwrap();
    assert_eq!(t.dims(), [2]);
    assert_eq!(t.as_slice::<f32>().unwrap(), [1.5, -2.0]);
}

#[test]
fn a_short_typed_field_repeats_its_last_value() {
    let mut value = proto(DType::I64, &[2, 3]);
    value.int64_val = vec![1, 2];
    let t = Tensor::from_tensor_value(&value).unwrap();
    assert_eq!(t.as_slice::<i64>().unwrap(), [1, 2, 2, 2, 2, 2]);
}

#[test]
fn no_values_at_all_means_zeros() {
    let t = Tensor::from_tensor_value(&proto(DType::F64, &[3])).unwrap();
    assert_eq!(t.as_slice::<f64>().unwrap(), [0.0; 3]);
    let t = Tensor::from_tensor_value(&proto(DType::String, &[2])).unwrap();
    assert_eq!(t.as_slice::<Vec<u8>>().unwrap(), [b"", b""]);
}

#[test]
fn a_missing_shape_is_a_scalar() {
    let value = TensorValue {
        dtype: Some(DType::I32),
        int_val: vec![7],
        ..TensorValue::default()
    };
    let t = Tensor::from_tensor_value(&value).unwrap();
    assert_eq!(t.rank(), 0);
    assert_eq!(t.scalar_value::<i32>().unwrap(), 7);
}

#[test]
fn small_types_and_halves_use_their_tensorflow_fields() {
    let mut value = proto(DType::I8, &[2]);
    value.int_val = vec![-3, 4];
    let t = Tensor::from_tensor_value(&value).unwrap();
    assert_eq!(t.as_slice::<i8>().unwrap(), [-3, 4]);

    let mut value = proto(DType::F16, &[1]);
    value.half_val = vec![i32::from(f16::from_f32(0.5).to_bits())];
    let t = Tensor::from_tensor_value(&value).unwrap();
    assert_eq!(t.as_slice::<f16>().unwrap(), [f16::from_f32(0.5)]);

    let mut value = proto(DType::Complex64, &[1]);
    value.scomplex_val = vec![1.0, -1.0];
    let t = Tensor::from_tensor_value(&value).unwrap();
    assert_eq!(
        t.as_slice::<Complex64>().unwrap(),
        [Complex64::new(1.0, -1.0)]
    );

    let mut value = proto(DType::Bool, &[3]);
    value.tensor_content = vec![1, 0, 1];
    let t = Tensor::from_tensor_value(&value).unwrap();
    assert_eq!(t.as_slice::<bool>().unwrap(), [true, false, true]);
}

#[test]
fn writing_uses_a_typed_field_for_one_element_and_tensor_content_for_more() {
    let scalar = Tensor::scalar(2.5f32).to_tensor_value().unwrap();
    assert_eq!(scalar.float_val, [2.5]);
    assert!(scalar.tensor_content.is_empty());
    assert_eq!(scalar.shape, Some(ShapeValue::from_sizes(&[])));

    let vector = Tensor::from_vec([2], vec![1i32, -1]).unwrap();
    let value = vector.to_tensor_value().unwrap();
    assert!(value.int_val.is_empty());
    assert_eq!(value.tensor_content, [1, 0, 0, 0, 255, 255, 255, 255]);

    let strings = Tensor::strings([2], ["a", "bc"]).unwrap();
    assert_eq!(
        strings.to_tensor_value().unwrap().string_val,
        [b"a".to_vec(), b"bc".to_vec()]
    );
}

#[test]
fn malformed_protos_are_errors_that_say_what_disagrees() {
    let mut value = proto(DType::F32, &[3]);
    value.tensor_content = vec![0; 8];
    assert_eq!(
        decode_error(&value),
        "the tensor proto's tensor_content has 8 bytes, but shape [3] of float needs 3 x 4 bytes"
    );

    let mut value = proto(DType::I32, &[2]);
    value.int_val = vec![1, 2, 3];
    assert_eq!(
        decode_error(&value),
        "the tensor proto holds 3 values of int32, more than shape [2]'s 2 elements"
    );

    let mut value = proto(DType::U8, &[1]);
    value.int_val = vec![300];
    assert_eq!(
        decode_error(&value),
        "the tensor proto's int_val holds 300, which is out of range for uint8"
    );

    let mut value = proto(DType::Complex64, &[1]);
    value.scomplex_val = vec![1.0];
    assert!(decode_error(&value).contains("(real, imaginary) pairs"));

    assert!(decode_error(&proto(DType::F32, &[-1, 2])).contains("fully known shape"));
    let mut unknown = proto(DType::F32, &[]);
    unknown.shape = Some(ShapeValue {
        dims: vec![],
        unknown_rank: true,
    });
    assert!(decode_error(&unknown).contains("unknown rank"));
    assert_eq!(
        decode_error(&TensorValue::default()),
        "the tensor proto has no dtype"
    );
    assert!(decode_error(&proto(DType::Resource, &[])).contains("resource"));
    assert!(decode_error(&proto(DType::F32, &[1 << 62, 4])).contains("[4611686018427387904,4]"));
}

fn any_tensor() -> impl Strategy<Value = Tensor> {
    let dims = prop::collection::vec(0usize..4, 0..4);
    (dims, 0..7u8).prop_flat_map(|(dims, kind)| {
        let n: usize = dims.iter().product();
        let dims2 = dims.clone();
        match kind {
            0 => prop::collection::vec(any::<f32>(), n)
                .prop_map(move |v| Tensor::from_vec(&dims2, v).unwrap())
                .boxed(),
            1 => prop::collection::vec(any::<i64>(), n)
                .prop_map(move |v| Tensor::from_vec(&dims2, v).unwrap())
                .boxed(),
            2 => prop::collection::vec(any::<i8>(), n)
                .prop_map(move |v| Tensor::from_vec(&dims2, v).unwrap())
                .boxed(),
            3 => prop::collection::vec(any::<bool>(), n)
                .prop_map(move |v| Tensor::from_vec(&dims2, v).unwrap())
                .boxed(),
            4 => prop::collection::vec(any::<u16>(), n)
                .prop_map(move |v| {
                    let v = v.into_iter().map(bf16::from_bits).collect();
                    Tensor::from_vec(&dims2, v).unwrap()
                })
                .boxed(),
            5 => prop::collection::vec(prop::collection::vec(any::<u8>(), 0..4), n)
                .prop_map(move |v| Tensor::from_vec(&dims2, v).unwrap())
                .boxed(),
            _ => prop::collection::vec((any::<f64>(), any::<f64>()), n)
                .prop_map(move |v| {
                    let v = v
                        .into_iter()
                        .map(|(re, im)| op_core::Complex128::new(re, im))
                        .collect();
                    Tensor::from_vec(&dims2, v).unwrap()
                })
                .boxed(),
        }
    })
}

/// Bitwise equality, so that NaNs compare equal to themselves.
fn same_bits(a: &Tensor, b: &Tensor) -> bool {
    a.dtype() == b.dtype()
        && a.dims() == b.dims()
        && format!("{:?}", a.to_tensor_value().unwrap())
            == format!("{:?}", b.to_tensor_value().unwrap())
}

proptest! {
    /// Writing then reading gives the tensor back, whichever encoding the
    /// writer chose.
    #[test]
    fn a_tensor_survives_a_round_trip(t in any_tensor()) {
        let value = t.to_tensor_value().unwrap();
        let back = Tensor::from_tensor_value(&value).unwrap();
        prop_assert!(same_bits(&t, &back), "{t:?} came back as {back:?}");
    }

    /// Bytes of any length never panic the reader.
    #[test]
    fn arbitrary_content_is_read_or_rejected(bytes in prop::collection::vec(any::<u8>(), 0..40), n in 0i64..10) {
        let mut value = proto(DType::F64, &[n]);
        value.tensor_content = bytes;
        let _ = Tensor::from_tensor_value(&value);
    }
}
