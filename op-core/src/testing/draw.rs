//! [`Draw`], the source of random choices an input generator draws from,
//! and [`Case`], the inputs and attrs it returns.
//!
//! A `Draw` reads a sequence of random numbers (the *choices*) and turns
//! each request (a size, a dimension, a value) into one of them. opcheck
//! draws the choices with proptest, and when a case fails, proptest shrinks
//! the numbers towards zero; since every request maps a smaller number to
//! a smaller answer (lower end of a range, first item, fewer dimensions),
//! the failing case shrinks with them, and the report shows a small one. A
//! generator therefore gets shrinking without writing a strategy: it only
//! asks its `Draw`. The sequence is short ([`CHOICES`] numbers, so that
//! shrinking ends quickly): past its end the numbers are pseudo-random,
//! derived from the sequence, so they change when it shrinks but do not
//! shrink themselves. Requests made first (attrs, ranks, dimensions) are
//! the ones that shrink.

use std::ops::RangeInclusive;

use op_spec::{AttrValue, DType};

use crate::op_instance::InputTypes;
use crate::registry::{KernelRegistration, OpEntry};
use crate::tensor::Tensor;
use crate::{Complex64, Complex128, Error, QInt8, QInt16, QInt32, QUInt8, QUInt16, Result};
use crate::{bf16, f16};

/// The random choices behind one case of one kernel of one op, with the
/// requests an input generator makes of them.
///
/// Each request (a size, a dimension, a value) takes the next of a short
/// sequence of random numbers, which opcheck draws with proptest. A
/// smaller number always gives a smaller answer (the lower end of a
/// range, the first item, fewer dimensions), so when proptest shrinks the
/// numbers of a failing case towards zero, the case shrinks with them: a
/// generator gets shrinking without writing a strategy. Past the end of
/// the sequence the numbers are pseudo-random, derived from it; the first
/// requests (attrs, ranks, dimensions) are the ones that shrink.
///
/// ```
/// use op_core::testing::Draw;
///
/// let choices = [u32::MAX / 2, 0, u32::MAX];
/// let mut d = Draw::from_choices(&choices);
/// assert_eq!(d.int(0..=10), 5);
/// assert_eq!(d.int(-3..=3), -3);
/// assert!(d.bool());
/// let past_the_end = d.int(1..=4); // pseudo-random, from the choices
/// assert!((1..=4).contains(&past_the_end));
/// ```
pub struct Draw<'a> {
    entry: Option<&'a OpEntry>,
    kernel: Option<&'static KernelRegistration>,
    choices: &'a [u32],
    next: usize,
    /// The state of the pseudo-random numbers past the end of `choices`
    /// (splitmix64), seeded from them on first use.
    tail: Option<u64>,
    float_range: (f64, f64),
}

/// How many choices opcheck draws per case (see the [module docs](self)).
#[cfg(feature = "testing")]
pub(crate) const CHOICES: usize = 64;

impl std::fmt::Debug for Draw<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Draw")
            .field("op", &self.entry.map(|e| e.def().name.as_str()))
            .field("kernel", &self.kernel.map(|k| k.name))
            .field("used", &self.next)
            .finish_non_exhaustive()
    }
}

/// Where float values are drawn from unless a generator says otherwise
/// ([`Draw::float_range`]): wide enough for signs and magnitudes on both
/// sides of 1, narrow enough that products and powers of a few stay finite.
const FLOAT_RANGE: (f64, f64) = (-2.0, 2.0);

impl<'a> Draw<'a> {
    /// A draw for a case of `kernel` of op `entry`, from `choices`. What
    /// opcheck makes; a generator's own test can make one too.
    pub fn new(
        entry: &'a OpEntry,
        kernel: &'static KernelRegistration,
        choices: &'a [u32],
    ) -> Self {
        Draw {
            entry: Some(entry),
            kernel: Some(kernel),
            choices,
            next: 0,
            tail: None,
            float_range: FLOAT_RANGE,
        }
    }

    /// A draw from `choices` for no op in particular: only the plain
    /// requests (numbers, shapes, tensors) work; [`generic`](Self::generic)
    /// and [`kernel_dtype`](Self::kernel_dtype) need an op.
    pub fn from_choices(choices: &'a [u32]) -> Self {
        Draw {
            entry: None,
            kernel: None,
            choices,
            next: 0,
            tail: None,
            float_range: FLOAT_RANGE,
        }
    }

    /// The op being checked.
    pub fn op(&self) -> Result<&'a OpEntry> {
        self.entry
            .ok_or_else(|| Error::failed_precondition("this draw is for no op"))
    }

    /// The kernel being checked.
    pub fn kernel(&self) -> Result<&'static KernelRegistration> {
        self.kernel
            .ok_or_else(|| Error::failed_precondition("this draw is for no kernel"))
    }

    /// The type the kernel being checked is registered for in type attr
    /// `attr` (its `types(..)`), if it constrains that attr: a generator
    /// draws inputs of this type so that the case runs that kernel.
    pub fn kernel_dtype(&self, attr: &str) -> Option<DType> {
        self.kernel?
            .constraints
            .iter()
            .find(|c| c.attr == attr)
            .map(|c| c.dtype)
    }

    /// The next random number, over the whole `u64` range: the next
    /// choice (spread so that the largest choice gives `u64::MAX`), or
    /// past the end of the sequence the next pseudo-random number.
    pub fn raw(&mut self) -> u64 {
        let value = match self.choices.get(self.next) {
            Some(&c) => (u64::from(c) << 32) | u64::from(c),
            None => self.tail_next(),
        };
        self.next += 1;
        value
    }

    /// splitmix64, seeded from the choices.
    fn tail_next(&mut self) -> u64 {
        let choices = self.choices;
        let state = self.tail.get_or_insert_with(|| {
            choices.iter().fold(0x243F_6A88_85A3_08D3u64, |h, &c| {
                (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01B3)
            })
        });
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// How many choices were used so far.
    pub fn used(&self) -> usize {
        self.next
    }

    /// A number in `0..n` (0 when `n` is 0), smaller for smaller choices.
    pub fn below(&mut self, n: usize) -> usize {
        // The choice scaled to 0..n: monotonic, so shrinking the choice
        // shrinks the answer.
        ((u128::from(self.raw()) * n as u128) >> 64) as usize
    }

    /// An integer in `range` (its start when empty).
    pub fn int(&mut self, range: RangeInclusive<i64>) -> i64 {
        let (start, end) = (*range.start(), *range.end());
        if end <= start {
            return start;
        }
        let span = (end as i128 - start as i128 + 1) as u128;
        let offset = (u128::from(self.raw()) * span) >> 64;
        (start as i128 + offset as i128) as i64
    }

    /// A size in `range`.
    pub fn size(&mut self, range: RangeInclusive<usize>) -> usize {
        let (start, end) = (*range.start(), *range.end());
        start + self.below(end.saturating_sub(start) + 1)
    }

    /// True or false, even odds (false for a zero choice).
    pub fn bool(&mut self) -> bool {
        self.raw() > u64::MAX / 2
    }

    /// True with probability `p` (false for a zero choice).
    pub fn chance(&mut self, p: f64) -> bool {
        let threshold = ((1.0 - p.clamp(0.0, 1.0)) * u64::MAX as f64) as u64;
        self.raw() > threshold
    }

    /// A float in `[low, high]` (`low` for a zero choice).
    pub fn float(&mut self, low: f64, high: f64) -> f64 {
        let unit = self.raw() as f64 / u64::MAX as f64;
        low + (high - low) * unit
    }

    /// One of `items` (the first for a zero choice); `None` when empty.
    pub fn choose<'t, T>(&mut self, items: &'t [T]) -> Option<&'t T> {
        let index = self.below(items.len());
        items.get(index)
    }

    /// A permutation of `0..n`.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut items: Vec<usize> = (0..n).collect();
        // Fisher-Yates from the front: zero choices leave it in order.
        for i in 0..n {
            let j = i + self.below(n - i);
            items.swap(i, j);
        }
        items
    }

    /// Dimensions: a rank in `rank`, each dimension in `dim`.
    pub fn dims(&mut self, rank: RangeInclusive<usize>, dim: RangeInclusive<usize>) -> Vec<usize> {
        let rank = self.size(rank);
        (0..rank).map(|_| self.size(dim.clone())).collect()
    }

    /// Sets the range [`tensor`](Self::tensor) draws float values from
    /// (default `[-2, 2]`): for ops whose gradient is only checked
    /// meaningfully on part of the line (a logarithm on positive values).
    pub fn float_range(&mut self, low: f64, high: f64) -> &mut Self {
        self.float_range = (low, high);
        self
    }

    /// A tensor of `dtype` and `dims` with random values: floats (and the
    /// parts of complex numbers) in the [`float_range`](Self::float_range);
    /// integers mostly small (0 to 3, sometimes -3 to -1, rarely up to 100
    /// either way), as axes, sizes and indices are; bools either way;
    /// strings short, some of them numbers. `resource` and `variant`
    /// tensors cannot be drawn: an `Unimplemented` error.
    pub fn tensor(&mut self, dtype: DType, dims: &[usize]) -> Result<Tensor> {
        let n = crate::TensorShape::try_new(dims)?.num_elements();
        let (low, high) = self.float_range;
        macro_rules! values {
            ($f:expr) => {{
                let values = (0..n).map(|_| $f(&mut *self)).collect::<Vec<_>>();
                Tensor::from_vec(dims, values)
            }};
        }
        match dtype {
            DType::F32 => values!(|d: &mut Self| d.float(low, high) as f32),
            DType::F64 => values!(|d: &mut Self| d.float(low, high)),
            DType::F16 => values!(|d: &mut Self| f16::from_f64(d.float(low, high))),
            DType::BF16 => values!(|d: &mut Self| bf16::from_f64(d.float(low, high))),
            DType::Complex64 => values!(|d: &mut Self| Complex64::new(
                d.float(low, high) as f32,
                d.float(low, high) as f32
            )),
            DType::Complex128 => {
                values!(|d: &mut Self| Complex128::new(d.float(low, high), d.float(low, high)))
            }
            DType::I8 => values!(|d: &mut Self| d.small_int() as i8),
            DType::I16 => values!(|d: &mut Self| d.small_int() as i16),
            DType::I32 => values!(|d: &mut Self| d.small_int() as i32),
            DType::I64 => values!(Self::small_int),
            DType::U8 => values!(|d: &mut Self| d.small_int().unsigned_abs() as u8),
            DType::U16 => values!(|d: &mut Self| d.small_int().unsigned_abs() as u16),
            DType::U32 => values!(|d: &mut Self| d.small_int().unsigned_abs() as u32),
            DType::U64 => values!(|d: &mut Self| d.small_int().unsigned_abs()),
            DType::QInt8 => values!(|d: &mut Self| QInt8(d.small_int() as i8)),
            DType::QUInt8 => values!(|d: &mut Self| QUInt8(d.small_int().unsigned_abs() as u8)),
            DType::QInt16 => values!(|d: &mut Self| QInt16(d.small_int() as i16)),
            DType::QUInt16 => {
                values!(|d: &mut Self| QUInt16(d.small_int().unsigned_abs() as u16))
            }
            DType::QInt32 => values!(|d: &mut Self| QInt32(d.small_int() as i32)),
            DType::Bool => values!(Self::bool),
            DType::String => {
                const STRINGS: [&str; 8] = ["", "a", "0", "1.5", "-3", "abc", "x y", "1e3"];
                values!(|d: &mut Self| d.choose(&STRINGS).unwrap_or(&"").as_bytes().to_vec())
            }
            DType::Resource | DType::Variant => Err(Error::unimplemented(format!(
                "random {dtype} tensors cannot be drawn: a {dtype} value must be made by an op"
            ))),
        }
    }

    /// A tensor of integer `dtype` holding `values` (cast), for inputs whose
    /// values a generator computes (axes, shapes, permutations).
    pub fn int_tensor(&self, dtype: DType, dims: &[usize], values: &[i64]) -> Result<Tensor> {
        match dtype {
            DType::I32 => {
                let values = values
                    .iter()
                    .map(|&v| {
                        i32::try_from(v).map_err(|_| {
                            Error::invalid_argument(format!("{v} does not fit in an int32"))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Tensor::from_vec(dims, values)
            }
            DType::I64 => Tensor::from_vec(dims, values.to_vec()),
            other => Err(Error::invalid_argument(format!(
                "int_tensor makes int32 or int64 tensors, not {other}"
            ))),
        }
    }

    /// A small integer: 0 to 3 mostly, -3 to -1 sometimes, -100 to 100
    /// rarely (negative sizes and out-of-range indices are cases too).
    fn small_int(&mut self) -> i64 {
        match self.below(10) {
            0..=6 => self.int(0..=3),
            7 | 8 => self.int(-3..=-1),
            _ => self.int(-100..=100),
        }
    }

    /// The generic case for the op and kernel being checked: every input
    /// drawn from the OpDef's types (the kernel's, for the attrs it
    /// constrains) and shapes its shape function accepts, every attr
    /// without a default drawn from its type (see the module docs of
    /// `op_core::testing`). A generator may start from it and replace
    /// what the op needs (a valid shape for `Reshape`, say). An
    /// `Unimplemented` error when the op has something the generic case
    /// cannot draw (a resource input, a tensor attr without default).
    pub fn generic(&mut self) -> Result<Case> {
        super::generic::generic_case(self)
    }
}

/// One input arg of a [`Case`]: a tensor, or a list of tensors (for
/// `N * T` and `list(type)` args).
#[derive(Clone, Debug)]
pub enum Input {
    /// A single tensor.
    Tensor(Tensor),
    /// A list of tensors.
    List(Vec<Tensor>),
}

impl Input {
    /// The tensors, one for a single tensor.
    pub fn tensors(&self) -> &[Tensor] {
        match self {
            Input::Tensor(t) => std::slice::from_ref(t),
            Input::List(ts) => ts,
        }
    }

    /// The tensors, for changing.
    pub fn tensors_mut(&mut self) -> &mut [Tensor] {
        match self {
            Input::Tensor(t) => std::slice::from_mut(t),
            Input::List(ts) => ts,
        }
    }

    fn types(&self) -> InputTypes {
        match self {
            Input::Tensor(t) => InputTypes::Single(t.dtype()),
            Input::List(ts) => InputTypes::List(ts.iter().map(Tensor::dtype).collect()),
        }
    }
}

/// The inputs (one per input arg, in order) and explicit attrs of one call
/// of an op: what an input generator returns. Attrs left out are inferred
/// from the inputs or take their defaults, as in any call.
///
/// ```
/// use op_core::testing::Case;
/// use op_core::Tensor;
///
/// let case = Case::new()
///     .input(Tensor::from_vec([2], vec![1.0f32, 2.0])?)
///     .input(Tensor::scalar(0i32))
///     .attr("keep_dims", true);
/// assert_eq!(case.describe(), "float[2], int32[] = [0]; keep_dims=true");
/// # Ok::<(), op_core::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Case {
    inputs: Vec<Input>,
    attrs: Vec<(String, AttrValue)>,
}

impl Case {
    /// A case with no inputs and no attrs.
    pub fn new() -> Case {
        Case::default()
    }

    /// Adds the next input arg: one tensor.
    pub fn input(mut self, tensor: Tensor) -> Case {
        self.inputs.push(Input::Tensor(tensor));
        self
    }

    /// Adds the next input arg: a list of tensors.
    pub fn input_list(mut self, tensors: impl IntoIterator<Item = Tensor>) -> Case {
        self.inputs.push(Input::List(tensors.into_iter().collect()));
        self
    }

    /// Sets attr `name` (again: the last value wins).
    pub fn attr(mut self, name: impl Into<String>, value: impl Into<AttrValue>) -> Case {
        self.set_attr(name, value);
        self
    }

    /// Sets attr `name` in place.
    pub fn set_attr(&mut self, name: impl Into<String>, value: impl Into<AttrValue>) {
        let (name, value) = (name.into(), value.into());
        match self.attrs.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.attrs.push((name, value)),
        }
    }

    /// Replaces input arg `index` with one tensor.
    pub fn set_input(&mut self, index: usize, tensor: Tensor) -> Result<()> {
        let slot = self
            .inputs
            .get_mut(index)
            .ok_or_else(|| Error::invalid_argument(format!("the case has no input {index}")))?;
        *slot = Input::Tensor(tensor);
        Ok(())
    }

    /// The input args.
    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }

    /// The input args, for changing.
    pub fn inputs_mut(&mut self) -> &mut [Input] {
        &mut self.inputs
    }

    /// Input arg `index`'s tensor (the first, for a list).
    pub fn tensor(&self, index: usize) -> Option<&Tensor> {
        self.inputs.get(index).and_then(|i| i.tensors().first())
    }

    /// The explicit attrs.
    pub fn attrs(&self) -> &[(String, AttrValue)] {
        &self.attrs
    }

    /// The inputs, flattened (a list contributes each of its tensors).
    pub fn flat_inputs(&self) -> Vec<Tensor> {
        self.inputs
            .iter()
            .flat_map(|i| i.tensors().iter().cloned())
            .collect()
    }

    /// The dtypes of the input args.
    pub fn input_types(&self) -> Vec<InputTypes> {
        self.inputs.iter().map(Input::types).collect()
    }

    /// The attrs, borrowed as the runtime takes them.
    #[cfg(feature = "testing")]
    pub(crate) fn attr_refs(&self) -> Vec<(&str, AttrValue)> {
        self.attrs
            .iter()
            .map(|(n, v)| (n.as_str(), v.clone()))
            .collect()
    }

    /// `float[2,3], [int32[], int32[]], int32[2] = [0, 1]; keep_dims=true`:
    /// each input's dtype and shape (and the values of small integer and
    /// bool inputs, which are usually axes, sizes or flags), then the attrs.
    pub fn describe(&self) -> String {
        let args: Vec<String> = self
            .inputs
            .iter()
            .map(|input| match input {
                Input::Tensor(t) => describe_tensor(t),
                Input::List(ts) => {
                    let items: Vec<String> = ts.iter().map(describe_tensor).collect();
                    format!("[{}]", items.join(", "))
                }
            })
            .collect();
        let mut text = args.join(", ");
        if !self.attrs.is_empty() {
            let attrs: Vec<String> = self
                .attrs
                .iter()
                .map(|(n, v)| format!("{n}={}", crate::error::summarized(v)))
                .collect();
            text.push_str("; ");
            text.push_str(&attrs.join(", "));
        }
        text
    }
}

/// `float[2,3]`, or `int32[2] = [0, 1]` for a small integer or bool tensor.
pub(crate) fn describe_tensor(t: &Tensor) -> String {
    let shape = t.shape();
    let dims: Vec<String> = shape.dims().iter().map(ToString::to_string).collect();
    let mut text = format!("{}[{}]", t.dtype(), dims.join(","));
    let dtype = t.dtype();
    if (dtype.is_integer() || dtype == DType::Bool) && t.num_elements() <= 8 {
        // The Debug form ends with the values: `..., values: [0, 1] }`.
        let debug = format!("{t:?}");
        if let Some(values) = debug
            .rsplit_once("values: ")
            .map(|(_, v)| v.trim_end_matches([' ', '}']))
        {
            text.push_str(" = ");
            text.push_str(values);
        }
    }
    text
}
