//! `opkit lite ...`: TensorFlow Lite models (`.tflite`) in the lite runtime
//! (`op-lite`): run one on `.npy` inputs, list the ops it uses, benchmark
//! it with an op profile as TensorFlow Lite's `benchmark_model` prints it.
//!
//! The kernels are [`resolver`]'s: the builtins of this build and the
//! custom ops linked into it, the seed's `Sin` included.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use op_core::error::{dims, listed, quoted};
use op_core::{Code, DType, Error, Result, Tensor};
use op_lite::bridge::{FrameworkOps, Layered};
use op_lite::interpreter::Profile;
use op_lite::kernel::{FnOp, InvokeContext, PrepareContext};
use op_lite::model::{BuiltinOperator, OperatorCode};
use op_lite::registration::LiteOpName;
use op_lite::resolver::ops_used;
use op_lite::{
    BuiltinOpResolver, Interpreter, Model, MutableOpResolver, OpResolver, lite_ensure_eq,
};

use crate::cli::input_arg;
use crate::npy;

/// The seed's `SinPrepare`: one float input, one output of its shape.
fn sin_prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
    lite_ensure_eq!(ctx, ctx.num_inputs(), 1);
    lite_ensure_eq!(ctx, ctx.num_outputs(), 1);
    op_lite::lite_ensure_types_eq!(ctx, ctx.input_dtype(0)?, DType::F32);
    let shape = ctx.input_shape(0)?;
    ctx.set_output_dtype(0, DType::F32)?;
    ctx.set_output_shape(0, shape)
}

/// The seed's `SinEval`: `y = sin(x)`, elementwise.
fn sin_eval(ctx: &mut InvokeContext<'_>) -> Result<()> {
    let input = ctx.input::<f32>(0)?;
    let output = ctx.output_mut::<f32>(0)?;
    for (y, x) in output.iter_mut().zip(input) {
        *y = x.sin();
    }
    Ok(())
}

/// The seed's custom op `Sin` (TensorFlow Lite's custom-operator guide):
/// `{nullptr, nullptr, SinPrepare, SinEval}`.
pub fn seed_sin() -> FnOp {
    FnOp::new(sin_prepare, sin_eval)
}

/// The resolver the tool runs models with: every builtin of this build
/// (TensorFlow Lite's `BuiltinOpResolver`), the seed's `Sin`, then the
/// kernels linked into the program with `#[lite_kernel]` (which override
/// those for their ops and versions); for a custom op none of these has,
/// the framework op of that name linked into the program (`op-kernels`'
/// ops and a downstream crate's, through `op_lite::bridge`).
pub fn resolver() -> Layered<MutableOpResolver> {
    op_kernels::link();
    let mut resolver = BuiltinOpResolver::new().into_inner();
    resolver.add_custom("Sin", seed_sin()).add_linked();
    FrameworkOps::new().over(resolver)
}

fn io_error(e: std::io::Error) -> Error {
    Error::new(Code::from_io_error(&e), e.to_string())
}

/// The interpreter for `model`, its errors (a missing op above all)
/// framed with the file and what lists the model's ops.
fn build(path: &Path, model: &Model, resolver: &dyn OpResolver) -> Result<Interpreter> {
    Interpreter::new(model, resolver).map_err(|e| {
        e.with_context(format!(
            "loading {} (`opkit lite ops {}` lists its ops and whether this build has each)",
            path.display(),
            path.display()
        ))
    })
}

/// One `--input NAME=FILE.npy`: the input's position and the file's tensor.
struct Feed {
    arg: String,
    input: usize,
    value: Tensor,
}

/// Parses `NAME=FILE.npy` (`NAME` a tensor name, a signature name or `#k`),
/// finds the input and reads the file.
fn feed(interpreter: &Interpreter, arg: &str) -> Result<Feed> {
    let (name, file) = input_arg(arg, "--input x=x.npy or --input '#0=x.npy'")?;
    let context = |e: Error| e.with_context(format!("--input {arg}"));
    let input = match name.strip_prefix('#') {
        Some(k) => {
            let k: usize = k.parse().map_err(|_| {
                context(Error::invalid_argument(format!(
                    "{} is not an input's position: write #0, #1, ...",
                    quoted(name)
                )))
            })?;
            interpreter.input_name(k).map_err(context)?;
            k
        }
        None => interpreter.input_index(name).map_err(context)?,
    };
    let value = npy::read(Path::new(file)).map_err(context)?;
    Ok(Feed {
        arg: arg.to_owned(),
        input,
        value,
    })
}

/// Calls `$m!` with the dtypes whose tensors both `.npy` files and the
/// arena hold as typed slices (`bool` aside: its arena bytes are `u8`).
macro_rules! arena_types {
    ($m:ident) => {
        $m! {
            DType::F32 => f32,
            DType::F64 => f64,
            DType::I32 => i32,
            DType::I64 => i64,
            DType::U8 => u8,
            DType::I8 => i8,
            DType::I16 => i16,
            DType::U16 => u16,
            DType::U32 => u32,
            DType::U64 => u64,
        }
    };
}

/// How an `--input` whose shape differs from the model's input is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Resize {
    /// Resize the input to the file's shape, then allocate, as LiteRT's
    /// `resize_tensor_input` does (its default, `strict=False`): the
    /// model's kernels check the new shapes when they are prepared, and a
    /// shape they cannot take is their error.
    #[default]
    Any,
    /// Resize only the dimensions the model's shape signature leaves open
    /// (-1, as a dynamic batch); refuse any other difference (LiteRT's
    /// `strict=True`, `--strict` on the command line).
    Strict,
}

/// Checks each feed's dtype against its input and resizes inputs of another
/// shape (as `resize` allows), then allocates the tensors and copies the
/// feeds in. Each resize is reported on `out`.
fn set_inputs(
    interpreter: &mut Interpreter,
    model: &Model,
    feeds: &[Feed],
    resize: Resize,
    out: &mut dyn Write,
) -> Result<()> {
    let mut resized = Vec::new();
    for (k, feed) in feeds.iter().enumerate() {
        if let Some(other) = feeds[..k].iter().find(|f| f.input == feed.input) {
            return Err(Error::invalid_argument(format!(
                "--input {} and --input {} both feed input {} ({})",
                other.arg,
                feed.arg,
                feed.input,
                quoted(interpreter.input_name(feed.input)?)
            )));
        }
        let i = feed.input;
        let name = quoted(interpreter.input_name(i)?).to_string();
        let dtype = interpreter.input_dtype(i)?;
        let shape = interpreter.input_shape(i)?.to_vec();
        let context = |e: Error| e.with_context(format!("--input {}", feed.arg));
        if feed.value.dtype() != dtype {
            return Err(context(Error::invalid_argument(format!(
                "the file holds {}, but input {i} ({name}) of the model is {dtype}",
                feed.value.dtype()
            ))));
        }
        let file_dims = feed.value.dims();
        if file_dims == shape {
            continue;
        }
        let result = match resize {
            Resize::Any => interpreter.resize_input_tensor(i, file_dims),
            Resize::Strict => interpreter
                .resize_input_tensor_strict(i, file_dims)
                .map_err(|_| {
                    let t = interpreter.inputs()[i];
                    let signature = model.subgraphs[0].tensors[t].shape_signature.as_deref();
                    let open = match signature {
                        Some(s) if s.contains(&-1) => format!(" (shape signature {})", dims(s)),
                        _ => String::new(),
                    };
                    Error::invalid_argument(format!(
                        "the file's array has shape {}, but input {i} ({name}) has shape \
                         {}{open}, and --strict resizes only the dimensions a shape \
                         signature leaves open (-1)",
                        dims(file_dims),
                        dims(&shape)
                    ))
                }),
        };
        result.map_err(context)?;
        resized.push(format!(
            "input {i} ({name}) resized from {} to {}",
            dims(&shape),
            dims(file_dims)
        ));
    }
    interpreter
        .allocate_tensors()
        .map_err(|e| match resized.first() {
            Some(first) => e.with_context(format!(
                "after {first}{} (--strict refuses such inputs)",
                if resized.len() > 1 { " and more" } else { "" }
            )),
            None => e,
        })?;
    for line in &resized {
        writeln!(out, "{line}").map_err(io_error)?;
    }
    for feed in feeds {
        copy_in(interpreter, feed.input, &feed.value)?;
    }
    Ok(())
}

/// Copies `value` (of input `i`'s dtype and shape) into input `i`.
fn copy_in(interpreter: &mut Interpreter, i: usize, value: &Tensor) -> Result<()> {
    macro_rules! copy {
        ($($dtype:path => $t:ty,)*) => {
            match value.dtype() {
                $($dtype => interpreter
                    .input_mut::<$t>(i)?
                    .copy_from_slice(value.as_slice::<$t>()?),)*
                DType::Bool => {
                    let bools = value.as_slice::<bool>()?;
                    for (byte, b) in interpreter.input_bytes_mut(i)?.iter_mut().zip(bools) {
                        *byte = u8::from(*b);
                    }
                }
                other => {
                    return Err(Error::unimplemented(format!(
                        "input {i} has dtype {other}, which .npy files here do not hold"
                    )));
                }
            }
        };
    }
    arena_types!(copy);
    Ok(())
}

/// Output `i` as a tensor (a copy).
fn output_tensor(interpreter: &Interpreter, i: usize) -> Result<Tensor> {
    let shape = interpreter.output_shape(i)?.to_vec();
    macro_rules! copy {
        ($($dtype:path => $t:ty,)*) => {
            match interpreter.output_dtype(i)? {
                $($dtype => Tensor::from_vec(&shape, interpreter.output::<$t>(i)?.to_vec()),)*
                DType::Bool => {
                    let bytes = interpreter.output_bytes(i)?;
                    Tensor::from_vec(&shape, bytes.iter().map(|&b| b != 0).collect::<Vec<bool>>())
                }
                other => Err(Error::unimplemented(format!(
                    "output {i} has dtype {other}, which .npy files here do not hold"
                ))),
            }
        };
    }
    arena_types!(copy)
}

/// A file name for a tensor name: letters, digits, `.`, `-` and `_` kept,
/// anything else (`:`, `/`, spaces) an `_`.
pub fn sanitize(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Never a hidden file nor `.`/`..`.
    match clean.trim_start_matches('.') {
        "" => format!("_{clean}"),
        _ if clean.starts_with('.') => format!("_{clean}"),
        _ => clean,
    }
}

/// `opkit lite run`.
pub fn run(
    model_path: &Path,
    inputs: &[String],
    output_dir: &Path,
    resize: Resize,
    out: &mut dyn Write,
) -> Result<()> {
    let model = Model::from_file(model_path)?;
    let resolver = resolver();
    let mut interpreter = build(model_path, &model, &resolver)?;
    let feeds: Vec<Feed> = inputs
        .iter()
        .map(|arg| feed(&interpreter, arg))
        .collect::<Result<_>>()?;
    let missing: Vec<String> = (0..interpreter.inputs().len())
        .filter(|i| !feeds.iter().any(|f| f.input == *i))
        .map(|i| Ok(format!("#{i} {}", quoted(interpreter.input_name(i)?))))
        .collect::<Result<_>>()?;
    if !missing.is_empty() {
        return Err(Error::invalid_argument(format!(
            "no --input for {}: give every input of the model, as NAME=FILE.npy",
            listed(&missing, 8)
        )));
    }
    set_inputs(&mut interpreter, &model, &feeds, resize, out)?;
    interpreter.invoke()?;

    std::fs::create_dir_all(output_dir).map_err(|e| {
        Error::new(
            Code::from_io_error(&e),
            format!("cannot create {}: {e}", output_dir.display()),
        )
    })?;
    let mut written: Vec<PathBuf> = Vec::new();
    for i in 0..interpreter.outputs().len() {
        let name = interpreter.output_name(i)?;
        let mut path = output_dir.join(format!("{}.npy", sanitize(name)));
        // Two names that sanitize alike: the later gets its position.
        if written.contains(&path) {
            path = output_dir.join(format!("{}_{i}.npy", sanitize(name)));
        }
        let value = output_tensor(&interpreter, i)?;
        npy::write(&path, &value)?;
        writeln!(
            out,
            "{name}: {} {} -> {}",
            value.dtype(),
            value.shape(),
            path.display()
        )
        .map_err(io_error)?;
        written.push(path);
    }
    Ok(())
}

/// Which of `resolver`'s layers runs the op of `code`, as `lite ops` shows
/// it: a `#[lite_kernel]` linked into the program (it overrides the
/// others), the builtin kernel, the seed's `Sin`, or a framework op through
/// the bridge; `None` if none has it.
fn kernel_source(resolver: &Layered<MutableOpResolver>, code: &OperatorCode) -> Option<String> {
    let custom = (code.builtin == BuiltinOperator::CUSTOM)
        .then(|| code.custom_name.as_deref().unwrap_or(""));
    let linked = op_lite::linked_kernels().into_iter().find(|k| {
        k.versions().contains(code.version)
            && match (k.name(), custom) {
                (LiteOpName::Custom(name), Some(custom)) => name == custom,
                (LiteOpName::Builtin(op), None) => op == code.builtin,
                _ => false,
            }
    });
    if let Some(kernel) = linked {
        return Some(format!("#[lite_kernel] at {}", kernel.location()));
    }
    match custom {
        None => resolver
            .find_builtin(code.builtin, code.version)
            .map(|_| "builtin".to_owned()),
        Some(name) if resolver.base().find_custom(name, code.version).is_some() => {
            Some("the seed's Sin (opkit::lite::seed_sin)".to_owned())
        }
        Some(name) => resolver
            .find_custom(name, code.version)
            .map(|_| format!("framework op {} (op_lite::bridge)", quoted(name))),
    }
}

/// `opkit lite ops`: each op the model uses, its version, how many nodes
/// run it, and whether this build has a kernel for it.
pub fn ops(model_path: &Path, out: &mut dyn Write) -> Result<()> {
    let model = Model::from_file(model_path)?;
    let resolver = resolver();
    let used = ops_used(&[&model])?;
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(
        text,
        "{:<28} {:>5} {:>8} {:>6}  kernel",
        "op", "code", "version", "nodes"
    );
    let mut missing = 0;
    for op in &used {
        let code = &op.code;
        let name = match code.builtin {
            BuiltinOperator::CUSTOM => {
                format!(
                    "{} (custom)",
                    quoted(code.custom_name.as_deref().unwrap_or(""))
                )
            }
            builtin => builtin.to_string(),
        };
        let kernel = if let Some(source) = kernel_source(&resolver, code) {
            source
        } else {
            missing += 1;
            let other: Vec<String> = if code.builtin == BuiltinOperator::CUSTOM {
                resolver
                    .custom_ops()
                    .into_iter()
                    .filter(|(n, _)| Some(n.as_str()) == code.custom_name.as_deref())
                    .map(|(_, v)| v.to_string())
                    .collect()
            } else {
                resolver
                    .builtin_ops()
                    .into_iter()
                    .filter(|(c, _)| *c == code.builtin)
                    .map(|(_, v)| v.to_string())
                    .collect()
            };
            if other.is_empty() {
                "no".to_owned()
            } else {
                format!("no (this build has {})", other.join(", "))
            }
        };
        let _ = writeln!(
            text,
            "{name:<28} {:>5} {:>8} {:>6}  {kernel}",
            code.builtin.0, code.version, op.nodes
        );
    }
    let nodes: usize = used.iter().map(|op| op.nodes).sum();
    let _ = writeln!(
        text,
        "{} ops, {nodes} nodes; {}",
        used.len(),
        match missing {
            0 => "this build runs every one".to_owned(),
            n => format!("this build lacks {n}"),
        }
    );
    out.write_all(text.as_bytes()).map_err(io_error)
}

/// What `opkit lite benchmark` measures.
#[derive(Clone, Debug)]
pub struct BenchmarkOptions {
    /// Timed runs of plain `invoke` (and as many profiled runs for the op
    /// table).
    pub runs: usize,
    /// Untimed runs before them.
    pub warmup: usize,
    /// Inputs to feed (`NAME=FILE.npy`); the others are filled with
    /// pseudo-random values.
    pub inputs: Vec<String>,
    /// Print one JSON object instead of the tables.
    pub json: bool,
    /// How inputs of another shape than the model's are taken.
    pub resize: Resize,
}

/// `opkit lite benchmark`.
pub fn benchmark(model_path: &Path, options: &BenchmarkOptions, out: &mut dyn Write) -> Result<()> {
    if options.runs == 0 {
        return Err(Error::invalid_argument("--runs must be at least 1"));
    }
    let model = Model::from_file(model_path)?;
    let resolver = resolver();
    let init_start = Instant::now();
    let mut interpreter = build(model_path, &model, &resolver)?;
    let feeds: Vec<Feed> = options
        .inputs
        .iter()
        .map(|arg| feed(&interpreter, arg))
        .collect::<Result<_>>()?;
    // The JSON report is one object: resizes are not reported there.
    let mut notes = Vec::new();
    let report: &mut dyn Write = if options.json { &mut notes } else { out };
    set_inputs(&mut interpreter, &model, &feeds, options.resize, report)?;
    let init = init_start.elapsed();
    for i in 0..interpreter.inputs().len() {
        if !feeds.iter().any(|f| f.input == i) {
            fill_pseudo_random(&mut interpreter, i)?;
        }
    }

    let first = timed(|| interpreter.invoke())?;
    let mut warmup = Duration::ZERO;
    for _ in 0..options.warmup {
        warmup += timed(|| interpreter.invoke())?;
    }
    let mut times = Vec::with_capacity(options.runs);
    for _ in 0..options.runs {
        times.push(timed(|| interpreter.invoke())?);
    }
    let mut profile = Profile::new(&interpreter);
    for _ in 0..options.runs {
        interpreter.invoke_profiled(&mut profile)?;
    }

    let stats = Stats::of(&times);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let warmup_avg = if options.warmup == 0 {
        0.0
    } else {
        us(warmup) / options.warmup as f64
    };
    let text = if options.json {
        let ops: Vec<serde_json::Value> = profile
            .by_op()
            .iter()
            .map(|row| {
                serde_json::json!({
                    "op": row.op,
                    "count": row.count,
                    "avg_ms": row.average.as_secs_f64() * 1e3,
                    "percent": row.percent,
                    "cdf_percent": row.cumulative_percent,
                })
            })
            .collect();
        let json = serde_json::json!({
            "model": model_path.display().to_string(),
            "nodes": interpreter.node_count(),
            "runs": options.runs,
            "init_us": us(init),
            "first_us": us(first),
            "warmup_avg_us": warmup_avg,
            "avg_us": stats.mean_us,
            "min_us": stats.min_us,
            "max_us": stats.max_us,
            "median_us": stats.median_us,
            "std_us": stats.std_us,
            "profiled_avg_us": us(profile.average()),
            "ops": ops,
        });
        format!("{json}\n")
    } else {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "Model: {} ({} nodes, arena {} bytes, constants {} bytes)",
            model_path.display(),
            interpreter.node_count(),
            interpreter.arena_size(),
            interpreter.constants_size()
        );
        let _ = writeln!(
            text,
            "count={} first={:.0} curr={:.0} min={:.0} max={:.0} avg={:.1} median={:.1} std={:.1}",
            options.runs,
            us(first),
            times.last().map_or(0.0, |&t| us(t)),
            stats.min_us,
            stats.max_us,
            stats.mean_us,
            stats.median_us,
            stats.std_us
        );
        let _ = writeln!(
            text,
            "Inference timings in us: Init: {:.0}, First inference: {:.0}, Warmup (avg): {warmup_avg:.1}, \
             Inference (avg): {:.1}",
            us(init),
            us(first),
            stats.mean_us
        );
        let _ = writeln!(text);
        let _ = writeln!(
            text,
            "Operator-wise Profiling Info for Regular Benchmark Runs ({} profiled runs):",
            profile.runs()
        );
        let _ = write!(text, "{profile}");
        text
    };
    out.write_all(text.as_bytes()).map_err(io_error)
}

/// The wall time of one call.
fn timed(f: impl FnOnce() -> Result<()>) -> Result<Duration> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}

/// Summary statistics of run times, in microseconds.
struct Stats {
    min_us: f64,
    max_us: f64,
    mean_us: f64,
    median_us: f64,
    std_us: f64,
}

impl Stats {
    /// Of at least one time.
    fn of(times: &[Duration]) -> Stats {
        let mut us: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        let n = us.len() as f64;
        let mean = us.iter().sum::<f64>() / n;
        let variance = us.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / n;
        let middle = us.len() / 2;
        let median = if us.len() % 2 == 1 {
            us[middle]
        } else {
            (us[middle - 1] + us[middle]) / 2.0
        };
        Stats {
            min_us: us[0],
            max_us: us[us.len() - 1],
            mean_us: mean,
            median_us: median,
            std_us: variance.sqrt(),
        }
    }
}

/// Fills input `i` with values from a fixed-seed generator: floats in
/// [-1, 1), integers and bools zero (always a valid index or flag), as
/// `benchmark_model` fills inputs it is not given.
fn fill_pseudo_random(interpreter: &mut Interpreter, i: usize) -> Result<()> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64 ^ i as u64;
    let mut next = move || {
        // xorshift64*: plenty for benchmark inputs.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let bits = state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
        bits as f64 / (1u64 << 24) as f64 * 2.0 - 1.0
    };
    match interpreter.input_dtype(i)? {
        DType::F32 => interpreter
            .input_mut::<f32>(i)?
            .iter_mut()
            .for_each(|x| *x = next() as f32),
        DType::F64 => interpreter
            .input_mut::<f64>(i)?
            .iter_mut()
            .for_each(|x| *x = next()),
        _ => interpreter.input_bytes_mut(i)?.fill(0),
    }
    Ok(())
}
