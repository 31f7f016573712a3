//! The generated op artifacts (`op_core::artifacts`) over a small registry
//! built here from `static` registrations: the exact text of each file,
//! filters, source paths, determinism, and writing and checking a folder.

use op_core::artifacts::{Artifacts, COVERAGE, OP_LIST, REFERENCE, Staleness, relative_source};
use op_core::gradient::{Gradient, GradientRegistration, Value};
use op_core::registry::{KernelRegistration, OpRegistration, Registry, TypeConstraint};
use op_core::shape_inference::library::unchanged;
use op_core::symbolic::Output;
use op_core::{DType, DeviceType, FnKernel, KernelContext, OpDefBuilder, Result, Tensor};

fn identity(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

/// A kernel of `op` on `device` named `name`, copying its input, at
/// `file:line`.
const fn kernel(
    (op, device, name): (&'static str, DeviceType, &'static str),
    constraints: &'static [TypeConstraint],
    (file, line): (&'static str, u32),
) -> KernelRegistration {
    KernelRegistration::new(
        op,
        device,
        name,
        |c| FnKernel::<()>::create(c, identity),
        file,
        line,
    )
    .with_constraints(constraints)
}

fn no_gradient<V: Value>(_: &Gradient<'_, V>) -> Result<Vec<Option<V>>> {
    Ok(vec![None])
}

/// `Scale`: documented, a constrained type attr with a default, an int
/// attr with a minimum, a shape function, kernels on two devices, and a
/// gradient.
static SCALE: OpRegistration = OpRegistration::new(
    "Scale",
    || {
        OpDefBuilder::new("Scale")
            .attr("T: {float, double, int32} = DT_FLOAT")
            .attr("times: int >= 1 = 2")
            .input("x: T")
            .output("y: T")
            .doc(
                "Multiplies x by `times`.\n\nOnce per call.\n\nx: the values.\ny: `x` scaled,\n  in `x`'s shape.\ntimes: how often.",
            )
            .build()
    },
    "my-ops/src/scale.rs",
    10,
)
.with_shape_fn(unchanged);
static SCALE_CPU_F32: KernelRegistration = kernel(
    ("Scale", DeviceType::Cpu, "scale::<f32>"),
    &[TypeConstraint::new("T", DType::F32)],
    ("my-ops/src/scale.rs", 20),
);
static SCALE_CPU_I32: KernelRegistration = kernel(
    ("Scale", DeviceType::Cpu, "scale::<i32>"),
    &[TypeConstraint::new("T", DType::I32)],
    ("my-ops/src/scale.rs", 21),
);
static SCALE_GPU_F32: KernelRegistration = kernel(
    ("Scale", DeviceType::Gpu, "scale_gpu::<f32>"),
    &[TypeConstraint::new("T", DType::F32)],
    ("my-ops/src/scale.rs", 30),
)
.with_host_memory(&["x"]);
static SCALE_GRAD: GradientRegistration = GradientRegistration::new(
    "Scale",
    no_gradient::<Tensor>,
    no_gradient::<Output>,
    "my-ops/src/grad.rs",
    5,
);

/// `Count`: stateful, no inputs, a kernel without constraints, no shape
/// function, not differentiable, declared at an absolute path.
static COUNT: OpRegistration = OpRegistration::new(
    "Count",
    || {
        OpDefBuilder::new("Count")
            .output("n: int64")
            .set_is_stateful()
            .doc("Counts calls.")
            .build()
    },
    "/home/someone/.cargo/registry/src/index/count-0.1.0/src/lib.rs",
    3,
);
static COUNT_CPU: KernelRegistration = kernel(
    ("Count", DeviceType::Cpu, "count"),
    &[],
    (
        "/home/someone/.cargo/registry/src/index/count-0.1.0/src/lib.rs",
        4,
    ),
);
static COUNT_NOT_DIFFERENTIABLE: GradientRegistration =
    GradientRegistration::not_differentiable("Count", "my-ops/src/grad.rs", 9);

/// `Ns>Plain`: namespaced, undocumented, deprecated, no kernels.
static PLAIN: OpRegistration = OpRegistration::new(
    "Ns>Plain",
    || {
        OpDefBuilder::new("Ns>Plain")
            .input("a: float")
            .input("b: N * int32")
            .attr("N: int >= 1")
            .output("c: float")
            .deprecated(7, "Use Scale.")
            .build()
    },
    "other/src/plain.rs",
    1,
);

/// `Pick`: two type attrs, its kernels registered by both; rustdoc links
/// in its docs, and a summary that ends mid-sentence.
static PICK: OpRegistration = OpRegistration::new(
    "Pick",
    || {
        OpDefBuilder::new("Pick")
            .attr("Tidx: {int32, int64}")
            .attr("dtype: {float, double, int32, half}")
            .input("index: Tidx")
            .input("values: dtype")
            .output("picked: dtype")
            .full_type("picked: TFT_TENSOR[TFT_VAR{'dtype'}]")
            .doc(
                "Picks one of the values, as [`Scale`] scales\nthem (see [`math`](super::math), [docs](https://example.com/a) and `[`x`]`).\n\nindex: which one; [`Pick::values`] holds them.",
            )
            .build()
    },
    "my-ops/src/pick.rs",
    1,
);
static PICK_F32_I32: KernelRegistration = kernel(
    ("Pick", DeviceType::Cpu, "pick::<f32, i32>"),
    &[
        TypeConstraint::new("dtype", DType::F32),
        TypeConstraint::new("Tidx", DType::I32),
    ],
    ("my-ops/src/pick.rs", 10),
);
static PICK_F32_I64: KernelRegistration = kernel(
    ("Pick", DeviceType::Cpu, "pick::<f32, i64>"),
    &[
        TypeConstraint::new("dtype", DType::F32),
        TypeConstraint::new("Tidx", DType::I64),
    ],
    ("my-ops/src/pick.rs", 11),
);
static PICK_F64_I32: KernelRegistration = kernel(
    ("Pick", DeviceType::Cpu, "pick::<f64, i32>"),
    &[
        TypeConstraint::new("dtype", DType::F64),
        TypeConstraint::new("Tidx", DType::I32),
    ],
    ("my-ops/src/pick.rs", 12),
);
static PICK_I32_I32: KernelRegistration = kernel(
    ("Pick", DeviceType::Cpu, "pick::<i32, i32>"),
    &[
        TypeConstraint::new("dtype", DType::I32),
        TypeConstraint::new("Tidx", DType::I32),
    ],
    ("my-ops/src/pick.rs", 13),
);

fn registry() -> Registry {
    Registry::new(
        [&SCALE, &COUNT, &PLAIN, &PICK],
        [
            &SCALE_CPU_F32,
            &SCALE_CPU_I32,
            &SCALE_GPU_F32,
            &COUNT_CPU,
            &PICK_F32_I32,
            &PICK_F32_I64,
            &PICK_F64_I32,
            &PICK_I32_I32,
        ],
    )
    .with_gradients([&SCALE_GRAD, &COUNT_NOT_DIFFERENTIABLE])
}

fn artifacts(registry: &Registry) -> Artifacts<'_> {
    Artifacts::new(registry)
        .title("My ops")
        .generated_by("cargo run --bin gen")
}

#[test]
fn the_op_list_is_tensorflows_text_format_of_every_op_sorted_by_name() {
    let registry = registry();
    assert!(
        registry.conflicts().is_empty(),
        "{:?}",
        registry.conflicts()
    );
    let text = artifacts(&registry).op_list();
    let defs: Vec<&op_core::OpDef> = registry.ops().map(|op| op.def().as_ref()).collect();
    assert_eq!(text, op_core::op_spec::pbtxt::op_list_to_string(defs));
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  name: \""))
        .map(|l| l.trim_end_matches('"'))
        .collect();
    assert_eq!(names, ["Count", "Ns>Plain", "Pick", "Scale"]);
    assert!(text.contains("  summary: \"Multiplies x by `times`.\"\n"));
    assert!(text.contains("    description: \"the values.\"\n"));
}

const REFERENCE_TEXT: &str = r#"# My ops: reference

<!-- Generated by `cargo run --bin gen` from the op registry: do not edit. -->

4 op(s). Per op: its docs, signature, inputs, outputs and attrs (with their constraints, defaults and docs), kernels by device and dtype, shape function, gradient and where it is declared. The same ops in TensorFlow's text format: [`ops.pbtxt`](ops.pbtxt); kernels and gradients by dtype: [`coverage.md`](coverage.md).

- [`Count`](#count): Counts calls.
- [`Ns>Plain`](#nsplain)
- [`Pick`](#pick): Picks one of the values, as `Scale` scales them (see `math`, [docs](https://example.com/a) and `[`x`]`).
- [`Scale`](#scale): Multiplies x by `times`.

## `Count`

Counts calls.

```text
Count() -> (n: int64)
```

Outputs:

- `n: int64`

Properties: stateful.

Kernels:

- `cpu`: any type (no type constraints)

Shape function: no.

Gradient: not differentiable (marked at `my-ops/src/grad.rs:9`).

Declared at `count-0.1.0/src/lib.rs:3`.

## `Ns>Plain`

**Deprecated** at GraphDef version 7: Use Scale.

```text
Ns>Plain(a: float, b: N * int32) -> (c: float)
```

Inputs:

- `a: float`
- `b: N * int32`

Outputs:

- `c: float`

Attrs:

- `N: int >= 1` (inferred from the inputs)

Kernels:

- none

Shape function: no.

Gradient: none registered.

Declared at `other/src/plain.rs:1`.

## `Pick`

Picks one of the values, as `Scale` scales them (see `math`, [docs](https://example.com/a) and `[`x`]`).

```text
Pick(index: Tidx, values: dtype) -> (picked: dtype)
```

Inputs:

- `index: Tidx`: which one; `Pick::values` holds them.
- `values: dtype`

Outputs:

- `picked: dtype` (full type `TFT_TENSOR[TFT_VAR{'dtype'}]`)

Attrs:

- `Tidx: {int32, int64}` (inferred from the inputs)
- `dtype: {float, double, int32, half}` (inferred from the inputs)

Kernels:

- `cpu`: dtype=float Tidx=int32, dtype=float Tidx=int64, dtype=double Tidx=int32, dtype=int32 Tidx=int32

Shape function: no.

Gradient: none registered.

Declared at `my-ops/src/pick.rs:1`.

## `Scale`

Multiplies x by `times`.

Once per call.

```text
Scale(x: T) -> (y: T)
```

Inputs:

- `x: T`: the values.

Outputs:

- `y: T`: `x` scaled,
  in `x`'s shape.

Attrs:

- `T: {float, double, int32} = DT_FLOAT` (inferred from the inputs)
- `times: int >= 1 = 2`: how often.

Kernels:

- `cpu`: float, int32
- `gpu`: float (host memory: x)

Shape function: yes.

Gradient: registered at `my-ops/src/grad.rs:5`.

Declared at `my-ops/src/scale.rs:10`.
"#;

#[test]
fn the_reference_documents_each_op_with_kernels_shape_gradient_and_source() {
    let registry = registry();
    assert_eq!(artifacts(&registry).reference(), REFERENCE_TEXT);
}

const COVERAGE_TEXT: &str = r#"# My ops: coverage

<!-- Generated by `cargo run --bin gen` from the op registry: do not edit. -->

4 op(s), 8 kernel(s) (cpu: 7, gpu: 1); 1 op(s) without kernels; 1 with a shape function; 1 with a gradient, 1 not differentiable, 2 with neither.

The dtype columns are the values of the type attr in the `attr` column: `T` when the op's kernels are registered by it, otherwise the one they are registered by with the most types; for an op whose kernels have no type constraints, the type of its first input (or output): the attr, or a fixed type (`attr` empty). A cell: `K` a kernel for that device and dtype (`K2`, ... when several, e.g. one per value of another type attr); `K G` a kernel, and gradients flow (the op has a gradient and the dtype is trainable); `-` the op allows the dtype but has no kernel for it on that device; empty: the op does not allow it. `any`: a kernel without type constraints for a type attr that allows every type; `untyped`: an op with no inputs or outputs. Columns are in the order of TensorFlow's `DataType` enum.

| op | device | attr | float | double | int32 | int64 | half | gradient |
| --- | --- | --- | :-: | :-: | :-: | :-: | :-: | --- |
| `Count` | cpu |  |  |  |  | K |  | not differentiable |
| `Ns>Plain` | none |  | - |  |  |  |  |  |
| `Pick` | cpu | `dtype` | K2 | K | K |  | - |  |
| `Scale` | cpu | `T` | K G | - | K |  |  | gradient |
| `Scale` | gpu | `T` | K G | - | - |  |  | gradient |
"#;

#[test]
fn the_coverage_matrix_marks_kernels_and_gradients_by_op_device_and_dtype() {
    let registry = registry();
    assert_eq!(artifacts(&registry).coverage(), COVERAGE_TEXT);
}

#[test]
fn files_are_the_op_list_the_reference_and_the_coverage_in_order() {
    let registry = registry();
    let artifacts = artifacts(&registry);
    let files = artifacts.files();
    let names: Vec<&str> = files.iter().map(|f| f.name).collect();
    assert_eq!(names, [OP_LIST, REFERENCE, COVERAGE]);
    assert_eq!(files[0].contents, artifacts.op_list());
    assert_eq!(files[1].contents, REFERENCE_TEXT);
    assert_eq!(files[2].contents, COVERAGE_TEXT);
}

#[test]
fn output_does_not_depend_on_registration_order_or_on_the_run() {
    let forward = registry();
    let backward = Registry::new(
        [&PICK, &PLAIN, &COUNT, &SCALE],
        [
            &PICK_I32_I32,
            &PICK_F64_I32,
            &PICK_F32_I64,
            &PICK_F32_I32,
            &COUNT_CPU,
            &SCALE_GPU_F32,
            &SCALE_CPU_I32,
            &SCALE_CPU_F32,
        ],
    )
    .with_gradients([&COUNT_NOT_DIFFERENTIABLE, &SCALE_GRAD]);
    let first = artifacts(&forward).files();
    assert_eq!(first, artifacts(&forward).files());
    assert_eq!(first, artifacts(&backward).files());
}

#[test]
fn filters_keep_only_the_ops_they_accept() {
    let registry = registry();
    let under = artifacts(&registry).declared_under("my-ops/");
    let names: Vec<&str> = under
        .ops()
        .iter()
        .map(|op| op.def().name.as_str())
        .collect();
    assert_eq!(names, ["Pick", "Scale"]);
    assert!(!under.op_list().contains("Count"));
    assert!(!under.reference().contains("`Ns>Plain`"));
    assert!(!under.coverage().contains("`Count`"));
    assert!(under.coverage().starts_with("# My ops: coverage\n"));

    let only = artifacts(&registry).only(|op| op.def().name.starts_with("Ns>"));
    let names: Vec<&str> = only.ops().iter().map(|op| op.def().name.as_str()).collect();
    assert_eq!(names, ["Ns>Plain"]);
    assert!(only.reference().contains("1 op(s)."));
}

#[test]
fn an_empty_selection_still_gives_well_formed_files() {
    let registry = registry();
    let none = artifacts(&registry).only(|_| false);
    assert_eq!(none.op_list(), "");
    assert!(none.reference().contains("0 op(s)."));
    assert!(
        none.coverage()
            .ends_with("| op | device | attr | gradient |\n| --- | --- | --- | --- |\n")
    );
}

#[test]
fn source_paths_are_relative_to_the_workspace() {
    assert_eq!(
        relative_source("op-kernels/src/a.rs", None),
        "op-kernels/src/a.rs"
    );
    assert_eq!(
        relative_source("op-kernels\\src\\a.rs", None),
        "op-kernels/src/a.rs"
    );
    let root = std::path::Path::new("/work/repo");
    assert_eq!(
        relative_source("/work/repo/my-ops/src/lib.rs", Some(root)),
        "my-ops/src/lib.rs"
    );
    assert_eq!(
        relative_source("/elsewhere/dep-1.0.0/src/lib.rs", Some(root)),
        "dep-1.0.0/src/lib.rs"
    );
    assert_eq!(
        relative_source("/elsewhere/dep-1.0.0/src/a/src/b.rs", None),
        "a/src/b.rs"
    );
    assert_eq!(relative_source("/tmp/gen.rs", None), "gen.rs");

    let registry = registry();
    let rooted = artifacts(&registry).source_root("/home/someone/.cargo/registry/src/index");
    assert!(
        rooted
            .reference()
            .contains("Declared at `count-0.1.0/src/lib.rs:3`.")
    );
    let reference = artifacts(&registry).reference();
    assert!(!reference.contains("/home/"), "{reference}");
}

#[test]
fn check_names_missing_and_stale_files_and_write_fixes_them() {
    let registry = registry();
    let artifacts = artifacts(&registry);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("generated");

    let missing = artifacts.check(&out).unwrap();
    let problems: Vec<_> = missing
        .iter()
        .map(|s| (s.path.clone(), s.problem.clone()))
        .collect();
    assert_eq!(
        problems,
        [OP_LIST, REFERENCE, COVERAGE].map(|n| (out.join(n), Staleness::Missing))
    );
    assert_eq!(
        missing[0].to_string(),
        format!("{}: missing", out.join(OP_LIST).display())
    );

    let written = artifacts.write(&out).unwrap();
    assert_eq!(written, [OP_LIST, REFERENCE, COVERAGE].map(|n| out.join(n)));
    assert!(artifacts.check(&out).unwrap().is_empty());
    assert_eq!(
        std::fs::read_to_string(out.join(REFERENCE)).unwrap(),
        REFERENCE_TEXT
    );
    // Unchanged files are not rewritten.
    assert!(artifacts.write(&out).unwrap().is_empty());

    let edited = REFERENCE_TEXT.replacen("Counts calls.", "Counts calls!", 1);
    std::fs::write(out.join(REFERENCE), edited).unwrap();
    let stale = artifacts.check(&out).unwrap();
    assert_eq!(stale.len(), 1);
    assert_eq!(stale[0].path, out.join(REFERENCE));
    assert_eq!(stale[0].problem, Staleness::Differs { line: 7 });
    assert_eq!(
        stale[0].to_string(),
        format!(
            "{}: stale (first difference at line 7)",
            out.join(REFERENCE).display()
        )
    );

    assert_eq!(artifacts.write(&out).unwrap(), [out.join(REFERENCE)]);
    assert!(artifacts.check(&out).unwrap().is_empty());
}
