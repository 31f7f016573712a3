//! `#[op]`: an op and its CPU kernel from a function's signature.

use op_core::ndarray::{ArrayD, ArrayViewD};
use op_core::{Code, DType, Element, Error, Op, Result, op};

/// Doubles every element.
#[op(types(f32, f64, i32, i64))]
pub fn times_two<T: Element + Copy + std::ops::Add<Output = T>>(input: ArrayViewD<'_, T>) -> ArrayD<T> {
    input.mapv(|x| x + x)
}

/// Fixed element types, two outputs named explicitly.
#[op(outputs("text", "same"))]
pub fn fixed_types(y: ArrayViewD<'_, i32>, z: ArrayViewD<'_, f32>) -> (ArrayD<Vec<u8>>, ArrayD<i32>) {
    (z.mapv(|v| v.to_string().into_bytes()), y.to_owned())
}

/// A list input (`N * T`) and a scalar output.
#[op(name = "Ui>SumAll", types(realnumbertype))]
pub fn sum_all<T: Element + Copy + Default + std::ops::Add<Output = T>>(xs: &[ArrayViewD<'_, T>]) -> T {
    xs.iter().flat_map(|x| x.iter().copied()).fold(T::default(), |a, b| a + b)
}

/// Attr parameters of every kind, with defaults and a minimum.
#[op]
pub fn with_attrs(
    x: ArrayViewD<'_, f32>,
    #[attr(default = 1, min = 0)] times: i64,
    #[attr(default = 0.5)] scale: f32,
    flip: bool,
    #[attr(default = "sum")] mode: &str,
    #[attr(default = [1, 2])] axes: &[i64],
    dtype: DType,
) -> Result<ArrayD<f32>> {
    if mode != "sum" {
        return Err(Error::new(Code::InvalidArgument, format!("bad mode {mode}")));
    }
    let _ = (axes, dtype, flip);
    Ok(x.mapv(|v| v * scale * times as f32))
}

/// Two generic parameters, a tuple output of an array and a scalar, a
/// `Result`, and flags.
#[op(types(K = [i32, i64], V = [f32, f64]), outputs("gathered", "count"), stateful, deprecated(version = 3, explanation = "use Other"))]
pub fn gather<K: Element + Copy, V: Element + Copy>(
    keys: ArrayViewD<'_, K>,
    values: ArrayViewD<'_, V>,
) -> Result<(ArrayD<V>, i64)> {
    Ok((values.to_owned(), keys.len() as i64))
}

/// Several list inputs get their own length attrs.
#[op(types(T = [f32]))]
pub fn concat_two<T: Element + Copy>(a: &[ArrayViewD<'_, T>], b: &[ArrayViewD<'_, T>]) -> i64 {
    (a.len() + b.len()) as i64
}

fn main() {
    // The functions stay callable as written.
    let x = ArrayD::from_elem(vec![2], 3.0f32);
    assert_eq!(times_two(x.view())[[0]], 6.0);
    assert_eq!(sum_all(&[x.view(), x.view()]), 12.0);
    assert_eq!(TimesTwo::NAME, "TimesTwo");
    assert_eq!(SumAll::NAME, "Ui>SumAll");
    let def = WithAttrs::op_def().unwrap();
    assert!(def.attr("times").is_some() && def.attr("mode").is_some());
    let def = FixedTypes::op_def().unwrap();
    assert_eq!(def.outputs[0].name, "text");
    let def = Gather::op_def().unwrap();
    assert!(def.is_stateful);
    assert!(ConcatTwo::op_def().unwrap().attr("N_b").is_some());

    // The kernels run.
    let doubled = TimesTwo::call(op_core::Tensor::from_array(x.clone())).run().unwrap();
    assert_eq!(doubled.as_slice::<f32>().unwrap(), &[6.0, 6.0]);
    let total = SumAll::call(vec![op_core::Tensor::from_array(x.clone()); 3]).run().unwrap();
    assert_eq!(total.as_slice::<f32>().unwrap(), &[18.0]);
    let scaled = WithAttrs::call(op_core::Tensor::from_array(x.clone()), true, DType::F32)
        .times(2)
        .run()
        .unwrap();
    assert_eq!(scaled.as_slice::<f32>().unwrap(), &[3.0, 3.0]);
    let keys = op_core::Tensor::from_array(ArrayD::from_elem(vec![4], 1i64));
    let (gathered, count) = Gather::call(keys, op_core::Tensor::from_array(x)).run().unwrap();
    assert_eq!(gathered.as_slice::<f32>().unwrap(), &[3.0, 3.0]);
    assert_eq!(count.as_slice::<i64>().unwrap(), &[4]);
}
