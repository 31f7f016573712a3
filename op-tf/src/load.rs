//! What runs when TensorFlow loads the library: find the C API, register
//! every exported op (from the spec strings our parser checked) and its
//! CPU kernels, and keep a report of what was done for the Python side.

use std::ffi::{CString, c_char};
use std::fmt::Write as _;
use std::sync::OnceLock;

use op_core::registry::OpEntry;
use op_core::{DeviceType, Error, KernelRegistration, Registry, Result};

use crate::api::{Api, ShapeFn};
use crate::gradient;
use crate::kernel::{self, API, TfKernel};
use crate::plan::{Crates, ExportPlan};
use crate::shape::{self, ShapeSupport};
use crate::status::{check, status};

/// What the load did, as text: `ok` and a line per op, or `error:` and why.
static REPORT: OnceLock<CString> = OnceLock::new();

/// Registers the library's ops with TensorFlow: the hook `export!`'s
/// constructor queues for after every registration is in. Never panics
/// (a constructor must not unwind); what went wrong is in the report.
pub fn on_load() {
    on_load_for(Crates::All);
}

/// [`on_load`] for the ops of `crates` only (`export!(crates = [...])`).
pub fn on_load_for(crates: Crates) {
    let report = match op_core::contain_panic("registering with TensorFlow", || register(crates)) {
        Ok(text) => format!("ok\n{text}"),
        Err(error) => format!("error: {error}"),
    };
    let _ = REPORT.set(CString::new(report.replace('\0', "\\0")).unwrap_or_default());
}

/// The load's report, as a C string: what `export!`'s `op_tf_load_report`
/// returns. Before the load, `error: the library was not loaded by TensorFlow`.
pub fn report() -> *const c_char {
    REPORT
        .get()
        .map(|r| r.as_ptr())
        .unwrap_or(c"error: the library's ops were not registered (not loaded yet)".as_ptr())
}

/// A new op builder for `name` with these spec strings: TensorFlow parses
/// them again (ours checked them already).
fn new_builder(
    api: &Api,
    name: &str,
    attrs: &[String],
    inputs: &[String],
    outputs: &[String],
) -> Result<*mut crate::api::TF_OpDefinitionBuilder> {
    let name = c_string(name, "an op's name")?;
    let (attrs, inputs, outputs) = (c_strings(attrs)?, c_strings(inputs)?, c_strings(outputs)?);
    // SAFETY: a C string TensorFlow copies; the builder is the caller's
    // until it registers it.
    let builder = unsafe { (api.TF_NewOpDefinitionBuilder)(name.as_ptr()) };
    // SAFETY: live builder, C strings TensorFlow copies.
    unsafe {
        for spec in &attrs {
            (api.TF_OpDefinitionBuilderAddAttr)(builder, spec.as_ptr());
        }
        for spec in &inputs {
            (api.TF_OpDefinitionBuilderAddInput)(builder, spec.as_ptr());
        }
        for spec in &outputs {
            (api.TF_OpDefinitionBuilderAddOutput)(builder, spec.as_ptr());
        }
    }
    Ok(builder)
}

fn c_strings(specs: &[String]) -> Result<Vec<CString>> {
    specs.iter().map(|s| c_string(s, "a spec")).collect()
}

/// Registers the gradient op of `def` ([`gradient`]) and its kernel.
fn register_gradient(api: &Api, def: &op_core::OpDef, name: &str) -> Result<()> {
    let (attrs, inputs, outputs) = gradient::specs(def);
    let builder = new_builder(api, name, &attrs, &inputs, &outputs)?;
    // SAFETY: live builder; a plain C function.
    unsafe { (api.TF_OpDefinitionBuilderSetShapeInferenceFunction)(builder, shape::unknown_shape) };
    let registered = status(api);
    // SAFETY: TensorFlow takes the builder.
    unsafe { (api.TF_RegisterOpDefinition)(builder, registered) };
    check(api, registered, || format!("registering op {name}"))?;
    let op = c_string(name, "an op's name")?;
    let builder = kernel_builder(api, &op, DeviceType::Cpu)?;
    let status = status(api);
    // SAFETY: TensorFlow takes the builder.
    unsafe { (api.TF_RegisterKernelBuilder)(op.as_ptr(), builder, status) };
    check(api, status, || format!("registering the kernel of {name}"))
}

/// The library's manifest ([`crate::manifest`]) as a C string, made on
/// first call: what `export!`'s `op_tf_manifest` returns.
pub fn manifest() -> *const c_char {
    manifest_for(Crates::All)
}

/// [`manifest`] for the ops of `crates` only (`export!(crates = [...])`).
pub fn manifest_for(crates: Crates) -> *const c_char {
    static MANIFEST: OnceLock<CString> = OnceLock::new();
    MANIFEST
        .get_or_init(|| {
            let text = op_core::contain_panic("writing the manifest", || {
                Ok(crate::manifest::to_json(&ExportPlan::for_crates(
                    Registry::global(),
                    crates,
                )))
            })
            .unwrap_or_else(|e| serde_json::json!({"error": e.to_string()}).to_string());
            CString::new(text).unwrap_or_default()
        })
        .as_ptr()
}

fn register(crates: Crates) -> Result<String> {
    let api = Api::load().map_err(|missing| {
        Error::failed_precondition(format!(
            "this TensorFlow lacks C function(s) the plugin needs: {} (is TensorFlow loaded, \
             and of version 2.21 or close?)",
            op_core::error::listed(&missing, 8)
        ))
    })?;
    let api = API.get_or_init(|| api);
    let registry = Registry::global();
    let plan = ExportPlan::for_crates(registry, crates);
    let mut report = String::new();
    if crate::shim::shim_built() {
        // Before any op. Resource ops cannot go without the shim: a shim
        // that does not fit this TensorFlow then fails the whole load, with
        // the reason, as a missing C function does; other ops take the C
        // API instead.
        match crate::shim::load() {
            Ok(line) => {
                let _ = writeln!(report, "{line}; {}", crate::shim::choose_views());
            }
            Err(error) if !plan.needs_resources() => {
                let _ = writeln!(report, "no shim: {error} (plain tensors take the C API)");
            }
            Err(error) => return Err(error),
        }
    }
    // One set of shape trampolines for both kinds: the slots are given once.
    let exported: Vec<_> = plan.exported().collect();
    let held_back: Vec<_> = plan.held_back().map(|(op, _)| op).collect();
    let mut shape_fns = shape::functions(&[&exported[..], &held_back[..]].concat());
    let held_back_shape_fns = shape_fns.split_off(exported.len());
    register_all(api, &exported, shape_fns, plan.kernels(), &mut report)?;
    let _ = HELD_BACK.set(HeldBack {
        ops: held_back,
        shape_fns: held_back_shape_fns,
        kernels: plan.held_back_kernels().collect(),
    });
    let threads = crate::kernel::runtime().threads().num_threads();
    let _ = writeln!(
        report,
        "threads {threads} (our kernels' own pool; {} sets it)",
        crate::kernel::THREADS_VARIABLE
    );
    for (op, why) in plan.held_back() {
        let _ = writeln!(report, "held back {}: {why}", op.def().name);
    }
    for (op, why) in plan.skipped() {
        let _ = writeln!(report, "skipped {}: {why}", op.def().name);
    }
    for (kernel, why) in plan.skipped_kernels() {
        let _ = writeln!(
            report,
            "skipped kernel {} {}: {why}",
            kernel.op, kernel.name
        );
    }
    Ok(report)
}

/// Registers `ops` (each with its shape function), their gradient ops and
/// `kernels`, a line each in `report`.
fn register_all(
    api: &Api,
    ops: &[&'static OpEntry],
    shape_fns: Vec<(ShapeFn, ShapeSupport)>,
    kernels: impl IntoIterator<Item = &'static KernelRegistration>,
    report: &mut String,
) -> Result<()> {
    for (op, (shape_fn, shapes)) in ops.iter().zip(shape_fns) {
        register_op(api, op.def(), shape_fn)?;
        let _ = match shapes {
            ShapeSupport::Ours => writeln!(report, "op {} (shapes: ours)", op.def().name),
            ShapeSupport::Unknown(why) => {
                writeln!(report, "op {} (shapes: unknown, {why})", op.def().name)
            }
        };
    }
    for op in ops {
        if let Some(name) = gradient::gradient_op_name(op) {
            register_gradient(api, op.def(), &name)?;
            let _ = writeln!(report, "gradient {} {name}", op.def().name);
        }
    }
    for kernel in kernels {
        register_kernel(api, kernel)?;
        let _ = writeln!(
            report,
            "kernel {} {} ({})",
            kernel.op,
            kernel.name,
            kernel.device.tf_name()
        );
    }
    Ok(())
}

/// The ops held back at load ([`ExportPlan::held_back`]), with what their
/// registration needs.
struct HeldBack {
    ops: Vec<&'static OpEntry>,
    shape_fns: Vec<(ShapeFn, ShapeSupport)>,
    kernels: Vec<&'static KernelRegistration>,
}

static HELD_BACK: OnceLock<HeldBack> = OnceLock::new();

/// Registers the held-back ops, their gradient ops and kernels, once;
/// returns the report (`ok` and a line each, or `error:` and why), a C
/// string the library keeps: what `export!`'s `op_tf_register_held_back`
/// returns. The package calls it right after `tf.load_op_library`, so that
/// TensorFlow writes no wrappers for these ops (its own would not compile).
pub fn register_held_back() -> *const c_char {
    static REPORT: OnceLock<CString> = OnceLock::new();
    REPORT
        .get_or_init(|| {
            let result = op_core::contain_panic("registering the held-back ops", || {
                let (Some(api), Some(held_back)) = (API.get(), HELD_BACK.get()) else {
                    return Err(Error::failed_precondition(
                        "the library did not load into TensorFlow (see op_tf_load_report)",
                    ));
                };
                let mut report = String::new();
                register_all(
                    api,
                    &held_back.ops,
                    held_back.shape_fns.clone(),
                    held_back.kernels.iter().copied(),
                    &mut report,
                )?;
                Ok(report)
            });
            let text = match result {
                Ok(report) => format!("ok\n{report}"),
                Err(error) => format!("error: {error}"),
            };
            CString::new(text.replace('\0', "\\0")).unwrap_or_default()
        })
        .as_ptr()
}

fn c_string(text: &str, what: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::invalid_argument(format!("{what} holds a NUL")))
}

fn register_op(api: &Api, def: &op_core::OpDef, shape_fn: ShapeFn) -> Result<()> {
    let specs = |args: &[op_core::ArgDef]| args.iter().map(|a| a.to_spec()).collect::<Vec<_>>();
    let attrs: Vec<String> = def.attrs.iter().map(|a| a.to_spec()).collect();
    let builder = new_builder(
        api,
        &def.name,
        &attrs,
        &specs(&def.inputs),
        &specs(&def.outputs),
    )?;
    // TensorFlow 2.21's setters ignore their bool and set the flag: each is
    // called only for a flag that is set. (Called for every op, they made
    // ZeroOut "aggregate", and Grappler's arithmetic optimizer then replaced
    // it, an aggregate of one input, by that input.)
    let flags = [
        (
            def.is_commutative,
            api.TF_OpDefinitionBuilderSetIsCommutative,
        ),
        (def.is_aggregate, api.TF_OpDefinitionBuilderSetIsAggregate),
        (def.is_stateful, api.TF_OpDefinitionBuilderSetIsStateful),
        (
            def.allows_uninitialized_input,
            api.TF_OpDefinitionBuilderSetAllowsUninitializedInput,
        ),
    ];
    for (_, set) in flags.into_iter().filter(|(on, _)| *on) {
        // SAFETY: live builder.
        unsafe { set(builder, true) };
    }
    // SAFETY: live builder; the shape function is a plain C function.
    unsafe { (api.TF_OpDefinitionBuilderSetShapeInferenceFunction)(builder, shape_fn) };
    let status = status(api);
    // SAFETY: TensorFlow takes the builder (registered or not).
    unsafe { (api.TF_RegisterOpDefinition)(builder, status) };
    check(api, status, || format!("registering op {}", def.name))
}

/// A builder of a kernel of `op` on `device` with our callbacks ([`kernel`],
/// and for the GPU `gpu`), which read the op from the node they are made
/// for.
fn kernel_builder(
    api: &Api,
    op: &CString,
    device: DeviceType,
) -> Result<*mut crate::api::TF_KernelBuilder> {
    let (create, compute, delete): (
        crate::api::CreateFn,
        crate::api::ComputeFn,
        crate::api::DeleteFn,
    ) = match device {
        DeviceType::Cpu => (
            kernel::create::<TfKernel>,
            kernel::compute::<TfKernel>,
            kernel::delete::<TfKernel>,
        ),
        #[cfg(feature = "gpu")]
        DeviceType::Gpu => {
            use crate::gpu::GpuKernel;
            (
                kernel::create::<GpuKernel>,
                kernel::compute::<GpuKernel>,
                kernel::delete::<GpuKernel>,
            )
        }
        #[cfg(not(feature = "gpu"))]
        DeviceType::Gpu => {
            return Err(Error::internal(
                "a GPU kernel in a build without op-tf's gpu feature",
            ));
        }
    };
    let device = c_string(device.tf_name(), "a device's name")?;
    // SAFETY: C strings TensorFlow copies; the callbacks are ours.
    Ok(unsafe { (api.TF_NewKernelBuilder)(op.as_ptr(), device.as_ptr(), create, compute, delete) })
}

fn register_kernel(api: &Api, kernel: &'static KernelRegistration) -> Result<()> {
    let op = c_string(kernel.op, "an op's name")?;
    let builder = kernel_builder(api, &op, kernel.device)?;
    for constraint in kernel.constraints {
        let attr = c_string(constraint.attr, "a type constraint's attr")?;
        let status = status(api);
        // SAFETY: live builder and status, C string copied.
        unsafe {
            (api.TF_KernelBuilder_TypeConstraint)(
                builder,
                attr.as_ptr(),
                constraint.dtype.enum_value(),
                status,
            )
        };
        if let Err(error) = check(api, status, || {
            format!("constraining kernel {}", kernel.name)
        }) {
            // SAFETY: the builder was not registered.
            unsafe { (api.TF_DeleteKernelBuilder)(builder) };
            return Err(error);
        }
    }
    for arg in kernel.host_memory {
        let arg = c_string(arg, "a host-memory arg")?;
        // SAFETY: live builder, C string copied.
        unsafe { (api.TF_KernelBuilder_HostMemory)(builder, arg.as_ptr()) };
    }
    let name = c_string(kernel.name, "a kernel's name")?;
    let status = status(api);
    // SAFETY: TensorFlow takes the builder.
    unsafe { (api.TF_RegisterKernelBuilder)(name.as_ptr(), builder, status) };
    check(api, status, || {
        format!("registering kernel {}", kernel.name)
    })
}
