//! What a library exports to TensorFlow, decided from the registry alone
//! (no TensorFlow needed): which ops, and which are left out and why.

use op_core::registry::{OP_KERNELS_OPS, OpEntry};
use op_core::{ArgType, DType, DeviceType, KernelRegistration, Registry};

/// Python's keywords ([`op_host::names::PYTHON_KEYWORDS`]): TensorFlow
/// 2.21 writes wrappers that do not compile for some args of these names
/// (`len(in)`), and a wrapper that does not compile fails
/// `tf.load_op_library` for the whole library.
pub use op_host::names::PYTHON_KEYWORDS;

/// Why an op of the registry is not exported.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Skipped {
    /// TensorFlow has an op of this name (we register it under
    /// TensorFlow's name), and silently drops a second one.
    TensorFlowHasIt,
    /// An arg or attr is named after a Python keyword (`kind` is `input`,
    /// `output` or `attr`), for which TensorFlow may write a wrapper that
    /// does not compile. Such an op is held back, not left out: the Python
    /// package registers it after the load, with a wrapper of its own
    /// ([`ExportPlan::held_back`]).
    PythonKeyword {
        /// `input`, `output` or `attr`.
        kind: &'static str,
        /// The arg's or attr's name.
        name: String,
    },
    /// An arg is a `resource`, and this build has no shim
    /// ([`crate::resources`]), which resource handles need.
    NeedsResourceShim,
    /// The op is of a crate the library does not export
    /// (`export!(crates = [...])`).
    OtherCrate {
        /// The op's crate.
        name: String,
    },
}

/// Why a GPU kernel of an exported op is not registered with TensorFlow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuSkipped {
    /// op-tf was built without its `gpu` feature (which links op-cuda).
    NoGpuFeature,
    /// This build has no shim: TensorFlow's C API gives a kernel no CUDA
    /// stream of TensorFlow's own GPU device (`TF_GetStream` answers only
    /// for pluggable devices), and the shim does.
    NoShim,
    /// The op has a `resource` arg: GPU-resident resources do not cross
    /// yet.
    ResourceArg,
}

impl std::fmt::Display for GpuSkipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GpuSkipped::NoGpuFeature => {
                f.write_str("op-tf was built without its `gpu` feature, which links op-cuda")
            }
            GpuSkipped::NoShim => write!(
                f,
                "GPU kernels need the shim for TensorFlow's CUDA stream, and this build has none ({})",
                crate::shim::SHIM_BUILD
            ),
            GpuSkipped::ResourceArg => f.write_str(
                "the op has a resource arg, which GPU kernels do not take in TensorFlow yet",
            ),
        }
    }
}

pub use op_host::Crates;

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skipped::TensorFlowHasIt => {
                f.write_str("TensorFlow has an op of this name, and would drop ours")
            }
            Skipped::PythonKeyword { kind, name } => write!(
                f,
                "its {kind} '{name}' is a Python keyword, for which TensorFlow may write a \
                 wrapper that does not compile (and then loads none of the library's ops): \
                 the package registers it after the load, with its own wrapper \
                 (argument '{name}_')"
            ),
            Skipped::OtherCrate { name } => write!(
                f,
                "it is an op of crate {name}, which this library does not export"
            ),
            Skipped::NeedsResourceShim => write!(
                f,
                "it has a resource arg, and this build has no shim ({})",
                crate::shim::SHIM_BUILD
            ),
        }
    }
}

/// The ops a library exports and those it leaves out.
///
/// ```
/// op_kernels::link();
/// let plan = op_tf::ExportPlan::new(op_core::Registry::global());
/// assert!(plan.exported().any(|op| op.def().name == "ZeroOut"));
/// // TensorFlow has its own AddV2.
/// assert!(plan.skipped().any(|(op, _)| op.def().name == "AddV2"));
/// ```
pub struct ExportPlan<'r> {
    exported: Vec<&'r OpEntry>,
    held_back: Vec<(&'r OpEntry, Skipped)>,
    skipped: Vec<(&'r OpEntry, Skipped)>,
}

impl<'r> ExportPlan<'r> {
    /// The plan for every op of `registry`, by name.
    pub fn new(registry: &'r Registry) -> ExportPlan<'r> {
        ExportPlan::for_crates(registry, Crates::All)
    }

    /// The plan for the ops of `crates` in `registry`, by name; the
    /// others are skipped ([`Skipped::OtherCrate`]).
    pub fn for_crates(registry: &'r Registry, crates: Crates) -> ExportPlan<'r> {
        let mut ops: Vec<&OpEntry> = registry.ops().collect();
        ops.sort_by(|a, b| a.def().name.cmp(&b.def().name));
        let mut plan = ExportPlan {
            exported: Vec::new(),
            held_back: Vec::new(),
            skipped: Vec::new(),
        };
        for op in ops {
            let reason = match crates.leaves_out(op) {
                Some(name) => Some(Skipped::OtherCrate { name: name.into() }),
                None => skip_reason(op),
            };
            match reason {
                Some(reason @ Skipped::PythonKeyword { .. }) => plan.held_back.push((op, reason)),
                Some(reason) => plan.skipped.push((op, reason)),
                None => plan.exported.push(op),
            }
        }
        plan
    }

    /// Whether an op the library registers has a `resource` arg (the
    /// library then needs its shim at load).
    pub fn needs_resources(&self) -> bool {
        (self
            .exported
            .iter()
            .chain(self.held_back.iter().map(|(op, _)| op)))
        .any(|op| has_resource_arg(op.def()))
    }

    /// The ops registered after the load, by name, each with the reason
    /// ([`Skipped::PythonKeyword`]): TensorFlow writes the wrappers of the
    /// ops a library registers while it loads, and one that does not
    /// compile fails them all; these the package registers afterwards
    /// (through the library's `op_tf_register_held_back()`) and wraps with
    /// Python of its own.
    pub fn held_back(&self) -> impl Iterator<Item = (&'r OpEntry, &Skipped)> + '_ {
        self.held_back.iter().map(|(op, why)| (*op, why))
    }

    /// The kernels of the held-back ops that TensorFlow gets (as
    /// [`kernels`](Self::kernels)).
    pub fn held_back_kernels(&self) -> impl Iterator<Item = &'static KernelRegistration> + '_ {
        self.held_back
            .iter()
            .flat_map(|(op, _)| registered_kernels(op))
    }

    /// The ops exported, by name.
    pub fn exported(&self) -> impl Iterator<Item = &'r OpEntry> + '_ {
        self.exported.iter().copied()
    }

    /// The ops left out, by name, each with the reason.
    pub fn skipped(&self) -> impl Iterator<Item = (&'r OpEntry, &Skipped)> + '_ {
        self.skipped.iter().map(|(op, why)| (*op, why))
    }

    /// The kernels of the exported ops that TensorFlow gets: every CPU
    /// kernel, and each GPU kernel that this build can run on TensorFlow's
    /// GPU device (the others are in
    /// [`skipped_kernels`](Self::skipped_kernels)).
    pub fn kernels(&self) -> impl Iterator<Item = &'static KernelRegistration> + '_ {
        self.exported.iter().flat_map(|op| registered_kernels(op))
    }

    /// The GPU kernels of exported and held-back ops that TensorFlow does
    /// not get, each with the reason.
    pub fn skipped_kernels(
        &self,
    ) -> impl Iterator<Item = (&'static KernelRegistration, GpuSkipped)> + '_ {
        (self.exported.iter().copied())
            .chain(self.held_back.iter().map(|(op, _)| *op))
            .flat_map(|op| {
                op.kernels()
                    .iter()
                    .filter_map(move |k| Some((*k, gpu_skip_reason(op, k)?)))
            })
    }
}

/// The kernels of `op` that TensorFlow gets: on the CPU, or on the GPU
/// where nothing stops it ([`gpu_skip_reason`]).
fn registered_kernels(op: &OpEntry) -> impl Iterator<Item = &'static KernelRegistration> + '_ {
    op.kernels()
        .iter()
        .copied()
        .filter(move |k| match k.device {
            DeviceType::Cpu => true,
            DeviceType::Gpu => gpu_skip_reason(op, k).is_none(),
        })
}

/// Why GPU kernel `kernel` of `op` is not registered; `None` for one that
/// is, and for a kernel of another device.
fn gpu_skip_reason(op: &OpEntry, kernel: &KernelRegistration) -> Option<GpuSkipped> {
    if kernel.device != DeviceType::Gpu {
        return None;
    }
    if !cfg!(feature = "gpu") {
        Some(GpuSkipped::NoGpuFeature)
    } else if !crate::shim::shim_built() {
        Some(GpuSkipped::NoShim)
    } else if has_resource_arg(op.def()) {
        Some(GpuSkipped::ResourceArg)
    } else {
        None
    }
}

fn skip_reason(op: &OpEntry) -> Option<Skipped> {
    let def = op.def();
    if OP_KERNELS_OPS.binary_search(&def.name.as_str()).is_ok() {
        return Some(Skipped::TensorFlowHasIt);
    }
    if !crate::shim::shim_built() && has_resource_arg(def) {
        return Some(Skipped::NeedsResourceShim);
    }
    let args = (def.inputs.iter().map(|a| ("input", &a.name)))
        .chain(def.outputs.iter().map(|a| ("output", &a.name)))
        .chain(def.attrs.iter().map(|a| ("attr", &a.name)));
    for (kind, name) in args {
        if PYTHON_KEYWORDS.contains(&name.as_str()) {
            return Some(Skipped::PythonKeyword {
                kind,
                name: name.clone(),
            });
        }
    }
    None
}

/// Whether an input or output of `def` is a `resource` tensor.
fn has_resource_arg(def: &op_core::OpDef) -> bool {
    def.inputs
        .iter()
        .chain(&def.outputs)
        .any(|arg| arg.ty == ArgType::Fixed(DType::Resource))
}
