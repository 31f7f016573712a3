//! What the interpreter's tests and benchmark share: a builder of models in
//! code (the `.tflite` reader is another part's) and the small kernels they
//! run — an elementwise ADD and MUL (the real builtins are another part's)
//! and the seed's `Sin`, as `SinPrepare`/`SinEval` written in Rust.

// Each test binary uses part of this module.
#![allow(dead_code)]

use op_core::{DType, Result};
use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
use op_lite::model::{
    Buffer, BuiltinOperator, BuiltinOptions, Model, Operator, OperatorCode, Signature, Subgraph,
    TensorInfo,
};
use op_lite::{lite_ensure, lite_ensure_eq, lite_ensure_types_eq};

/// Builds a one-subgraph model, tensor by tensor and node by node.
#[derive(Default)]
pub struct ModelBuilder {
    model: Model,
}

impl ModelBuilder {
    pub fn new() -> ModelBuilder {
        let mut builder = ModelBuilder::default();
        builder.model.version = 3;
        // Buffer 0 is the empty buffer, by convention.
        builder.model.buffers.push(Buffer::default());
        builder.model.subgraphs.push(Subgraph::default());
        builder
    }

    fn subgraph(&mut self) -> &mut Subgraph {
        &mut self.model.subgraphs[0]
    }

    /// A tensor without data; returns its index.
    pub fn tensor(&mut self, name: &str, dtype: DType, shape: &[usize]) -> usize {
        let tensors = &mut self.subgraph().tensors;
        tensors.push(TensorInfo {
            name: name.into(),
            dtype,
            shape: shape.to_vec(),
            shape_signature: None,
            buffer: 0,
            quantization: None,
            is_variable: false,
        });
        tensors.len() - 1
    }

    /// A float tensor without data.
    pub fn f32(&mut self, name: &str, shape: &[usize]) -> usize {
        self.tensor(name, DType::F32, shape)
    }

    /// A tensor whose buffer holds `bytes`.
    pub fn with_data(&mut self, name: &str, dtype: DType, shape: &[usize], bytes: &[u8]) -> usize {
        let t = self.tensor(name, dtype, shape);
        self.model.buffers.push(Buffer {
            data: bytes.to_vec(),
        });
        let buffer = self.model.buffers.len() - 1;
        self.subgraph().tensors[t].buffer = buffer;
        t
    }

    /// A float constant.
    pub fn constant(&mut self, name: &str, shape: &[usize], values: &[f32]) -> usize {
        self.with_data(name, DType::F32, shape, bytemuck::cast_slice(values))
    }

    /// A float variable, with an initial value or zeros.
    pub fn variable(&mut self, name: &str, shape: &[usize], initial: Option<&[f32]>) -> usize {
        let t = match initial {
            Some(values) => self.constant(name, shape, values),
            None => self.f32(name, shape),
        };
        self.subgraph().tensors[t].is_variable = true;
        t
    }

    pub fn input(&mut self, t: usize) -> &mut Self {
        self.subgraph().inputs.push(t);
        self
    }

    pub fn output(&mut self, t: usize) -> &mut Self {
        self.subgraph().outputs.push(t);
        self
    }

    /// Names the subgraph's inputs and outputs in a signature.
    pub fn signature(&mut self, inputs: &[(&str, usize)], outputs: &[(&str, usize)]) -> &mut Self {
        let owned =
            |list: &[(&str, usize)]| list.iter().map(|(n, t)| (n.to_string(), *t)).collect();
        self.model.signatures.push(Signature {
            key: "serving_default".into(),
            subgraph: 0,
            inputs: owned(inputs),
            outputs: owned(outputs),
        });
        self
    }

    fn opcode(&mut self, code: OperatorCode) -> usize {
        let codes = &mut self.model.operator_codes;
        codes.iter().position(|c| *c == code).unwrap_or_else(|| {
            codes.push(code);
            codes.len() - 1
        })
    }

    /// A node of `code` reading `inputs` and writing `outputs`.
    fn coded(
        &mut self,
        code: OperatorCode,
        inputs: Vec<Option<usize>>,
        outputs: &[usize],
        custom_options: Vec<u8>,
    ) -> usize {
        let opcode_index = self.opcode(code);
        self.node(Operator {
            opcode_index,
            inputs,
            outputs: outputs.to_vec(),
            intermediates: vec![],
            builtin_options: BuiltinOptions::None,
            custom_options,
        })
    }

    /// A node of a custom op (version 1) with custom options.
    pub fn custom_with(
        &mut self,
        name: &str,
        inputs: &[usize],
        outputs: &[usize],
        options: Vec<u8>,
    ) -> usize {
        let inputs = inputs.iter().map(|&t| Some(t)).collect();
        self.coded(custom_code(name), inputs, outputs, options)
    }

    /// A node of a custom op (version 1) with optional inputs (`None`:
    /// omitted).
    pub fn custom_optional(
        &mut self,
        name: &str,
        inputs: &[Option<usize>],
        outputs: &[usize],
    ) -> usize {
        self.coded(custom_code(name), inputs.to_vec(), outputs, Vec::new())
    }

    /// A node of a custom op (version 1) without options.
    pub fn custom(&mut self, name: &str, inputs: &[usize], outputs: &[usize]) -> usize {
        self.custom_with(name, inputs, outputs, Vec::new())
    }

    /// A node of a builtin op at `version`.
    pub fn builtin(
        &mut self,
        op: BuiltinOperator,
        version: i32,
        inputs: &[usize],
        outputs: &[usize],
    ) -> usize {
        let code = OperatorCode {
            builtin: op,
            custom_name: None,
            version,
        };
        let inputs = inputs.iter().map(|&t| Some(t)).collect();
        self.coded(code, inputs, outputs, Vec::new())
    }

    /// A model of one custom op `name` from float input `x` to output `y`,
    /// both of `shape`.
    pub fn unary(name: &str, shape: &[usize]) -> ModelBuilder {
        ModelBuilder::chain(&[name], shape)
    }

    /// A model of custom ops applied one after the other, from float input
    /// `x` through `t1`, `t2`... to output `y`, all of `shape`.
    pub fn chain(names: &[&str], shape: &[usize]) -> ModelBuilder {
        let mut b = ModelBuilder::new();
        let x = b.f32("x", shape);
        b.input(x);
        let mut previous = x;
        for (k, name) in names.iter().enumerate() {
            let tensor = if k + 1 == names.len() {
                "y".to_string()
            } else {
                format!("t{}", k + 1)
            };
            let t = b.f32(&tensor, shape);
            b.custom(name, &[previous], &[t]);
            previous = t;
        }
        b.output(previous);
        b
    }

    /// Adds an operator as given; returns the node's index.
    pub fn node(&mut self, operator: Operator) -> usize {
        let operators = &mut self.subgraph().operators;
        operators.push(operator);
        operators.len() - 1
    }

    /// The model so far, for tests that break it on purpose.
    pub fn model_mut(&mut self) -> &mut Model {
        &mut self.model
    }

    pub fn build(&self) -> Model {
        self.model.clone()
    }
}

/// The code of the custom op `name`, version 1.
fn custom_code(name: &str) -> OperatorCode {
    OperatorCode {
        builtin: BuiltinOperator::CUSTOM,
        custom_name: Some(name.into()),
        version: 1,
    }
}

/// Elementwise float `out = f(a, b)`, where `b` has `a`'s shape or one
/// element (the test's ADD and MUL; not TensorFlow Lite's broadcasting).
fn binary_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    lite_ensure_eq!(ctx, ctx.num_inputs(), 2);
    lite_ensure_eq!(ctx, ctx.num_outputs(), 1);
    lite_ensure_types_eq!(ctx, ctx.input_dtype(0)?, DType::F32);
    lite_ensure_types_eq!(ctx, ctx.input_dtype(1)?, DType::F32);
    lite_ensure!(
        ctx,
        ctx.input_shape(1)? == ctx.input_shape(0)? || ctx.input_len(1)? == 1,
        "input 1 of shape {:?} neither matches input 0's {:?} nor has one element",
        ctx.input_shape(1)?,
        ctx.input_shape(0)?
    );
    let shape = ctx.input_shape(0)?;
    ctx.set_output_dtype(0, DType::F32)?;
    ctx.set_output_shape(0, shape)
}

/// `out = f(a, b)` elementwise, `b` of `a`'s length or one element.
#[inline]
fn binary(f: impl Fn(f32, f32) -> f32, a: &[f32], b: &[f32], out: &mut [f32]) {
    if let [b] = b {
        for (o, a) in out.iter_mut().zip(a) {
            *o = f(*a, *b);
        }
    } else {
        for ((o, a), b) in out.iter_mut().zip(a).zip(b) {
            *o = f(*a, *b);
        }
    }
}

pub fn add(a: f32, b: f32) -> f32 {
    a + b
}

pub fn mul(a: f32, b: f32) -> f32 {
    a * b
}

/// The test ADD's arithmetic: what its invoke calls, and the benchmark's
/// baseline calls directly.
#[inline(never)]
pub fn add_into(a: &[f32], b: &[f32], out: &mut [f32]) {
    binary(add, a, b, out);
}

/// The test MUL's arithmetic.
#[inline(never)]
pub fn mul_into(a: &[f32], b: &[f32], out: &mut [f32]) {
    binary(mul, a, b, out);
}

fn binary_invoke(ctx: &mut InvokeContext<'_>, f: fn(&[f32], &[f32], &mut [f32])) -> Result<()> {
    let (a, b) = (ctx.input::<f32>(0)?, ctx.input::<f32>(1)?);
    f(a, b, ctx.output_mut::<f32>(0)?);
    Ok(())
}

fn add_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    binary_invoke(ctx, add_into)
}

fn mul_invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
    binary_invoke(ctx, mul_into)
}

/// The test's float ADD.
pub fn add_op() -> FnOp {
    FnOp::new(binary_prepare, add_invoke)
}

/// The test's float MUL.
pub fn mul_op() -> FnOp {
    FnOp::new(binary_prepare, mul_invoke)
}

/// The seed's `SinPrepare`, in Rust.
pub fn sin_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    lite_ensure_eq!(ctx, ctx.num_inputs(), 1);
    lite_ensure_eq!(ctx, ctx.num_outputs(), 1);
    let shape = ctx.input_shape(0)?;
    ctx.set_output_shape(0, shape)
}

/// The seed's `SinEval`, in Rust.
pub fn sin_eval(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let input = ctx.input::<f32>(0)?;
    let output = ctx.output_mut::<f32>(0)?;
    for (y, x) in output.iter_mut().zip(input) {
        *y = x.sin();
    }
    Ok(())
}

/// The seed's `Register_SIN`: `{nullptr, nullptr, SinPrepare, SinEval}`.
pub fn register_sin() -> FnOp {
    FnOp::new(sin_prepare, sin_eval)
}

/// The seed's model, `y = sin(x + offset)` on five floats, with the offset
/// its training finds (1.0) as a constant: an ADD and a custom `Sin`.
pub fn seed_sin_model() -> Model {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[5]);
    let offset = b.constant("offset", &[1], &[1.0]);
    let sum = b.f32("add", &[5]);
    let y = b.f32("Identity", &[5]);
    b.builtin(BuiltinOperator::ADD, 1, &[x, offset], &[sum]);
    b.custom("Sin", &[sum], &[y]);
    b.input(x).output(y);
    b.build()
}

/// Asserts `actual` is `expected` to within a few ulps: `sin` here and in
/// the kernel give the same bits on hardware, but Miri, which runs these
/// tests to check the arena's `unsafe`, varies the last bits of float
/// functions on purpose.
#[track_caller]
pub fn assert_close(actual: &[f32], expected: &[f32]) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} != {expected:?}");
    for (a, e) in actual.iter().zip(expected) {
        assert!(
            (a - e).abs() <= 4.0 * f32::EPSILON * e.abs().max(1.0),
            "{actual:?} != {expected:?}"
        );
    }
}

/// The seed's training inputs and targets (`sin(x + 1)`).
pub const SEED_X: [f32; 5] = [-8.0, 0.5, 2.0, 2.2, 201.0];
pub const SEED_Y: [f32; 5] = [-0.6569866, 0.997_495, 0.14112001, -0.05837414, 0.806_418_4];

/// A chain of `n` ADD nodes of `len` floats: `t[k+1] = t[k] + c` with `c`
/// a constant of ones, from input `x` to output `y`.
pub fn add_chain(n: usize, len: usize) -> Model {
    let mut b = ModelBuilder::new();
    let x = b.f32("x", &[len]);
    let c = b.constant("c", &[len], &vec![1.0; len]);
    b.input(x);
    let mut previous = x;
    for k in 0..n {
        let name = if k + 1 == n {
            "y".to_string()
        } else {
            format!("t{k}")
        };
        let t = b.f32(&name, &[len]);
        b.builtin(BuiltinOperator::ADD, 1, &[previous, c], &[t]);
        previous = t;
    }
    b.output(previous);
    b.build()
}

/// A resolver with one custom op.
pub fn resolver_of(name: &str, op: impl op_lite::LiteOp + 'static) -> op_lite::MutableOpResolver {
    let mut resolver = op_lite::MutableOpResolver::new();
    resolver.add_custom(name, op);
    resolver
}

/// A resolver with the test's ADD and MUL as builtins and `Sin` as a
/// custom op.
pub fn resolver() -> op_lite::MutableOpResolver {
    let mut resolver = op_lite::MutableOpResolver::new();
    resolver
        .add_builtin(BuiltinOperator::ADD, add_op())
        .add_builtin(BuiltinOperator::MUL, mul_op())
        .add_custom("Sin", register_sin());
    resolver
}

/// A float32 `.npy` file of `tests/data/` (version 1 to 3, C order): its
/// shape and values.
pub fn read_npy_f32(name: &str) -> (Vec<usize>, Vec<f32>) {
    let path = format!("{}/tests/data/{name}.npy", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(&bytes[..6], b"\x93NUMPY", "{path}");
    let (len, start) = if bytes[6] == 1 {
        (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10)
    } else {
        let len = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        (len as usize, 12)
    };
    let header = std::str::from_utf8(&bytes[start..start + len]).unwrap();
    assert!(header.contains("'descr': '<f4'"), "{path}: {header}");
    assert!(
        header.contains("'fortran_order': False"),
        "{path}: {header}"
    );
    let shape = header
        .split("'shape': (")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("{path}: {header}"))
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let values = bytes[start + len..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (shape, values)
}
