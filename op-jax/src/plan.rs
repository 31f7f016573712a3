//! Which ops a library exports to JAX, decided from the registry alone,
//! and why each other op is left out.
//!
//! An op is exported when it has a CPU kernel, every input and output is
//! a single tensor (no `N * T` or `list(type)` args) of a dtype that
//! crosses ([`crate::handler::from_xla`]; not strings, resources or
//! variants), and every attr is an int, float, bool, string or type (or a
//! list of one of those), which a request carries as JSON. Stateful ops
//! (resources) have no sound mapping onto JAX's pure functions yet.
//!
//! ```
//! op_kernels::link();
//! let plan = op_jax::JaxPlan::new(op_core::Registry::global(), op_host::Crates::All);
//! assert!(plan.exported().any(|op| op.def().name == "ZeroOut"));
//! assert!(plan.skipped().any(|(op, _)| op.def().name == "AddN"));
//! ```

use op_core::registry::OpEntry;
use op_core::{AttrKind, DType, DeviceType, Registry};
use op_host::Crates;

/// Why an op is not exported to JAX.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Skipped {
    /// The op is of a crate the library does not export.
    OtherCrate {
        /// The op's crate.
        name: String,
    },
    /// It has no CPU kernel.
    NoCpuKernel,
    /// An arg is a list of tensors.
    ListArg {
        /// `input` or `output`.
        kind: &'static str,
        /// The arg.
        name: String,
    },
    /// An arg's dtype does not cross.
    ArgDtype {
        /// `input` or `output`.
        kind: &'static str,
        /// The arg.
        name: String,
        /// Its dtype.
        dtype: DType,
    },
    /// An attr is of a kind a request does not carry.
    AttrKind {
        /// The attr.
        name: String,
        /// Its type, as the spec writes it.
        ty: String,
    },
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skipped::OtherCrate { name } => write!(
                f,
                "it is an op of crate {name}, which this library does not export"
            ),
            Skipped::NoCpuKernel => f.write_str("it has no CPU kernel"),
            Skipped::ListArg { kind, name } => write!(
                f,
                "its {kind} '{name}' is a list of tensors, which the JAX export does not take yet"
            ),
            Skipped::ArgDtype { kind, name, dtype } => {
                let why = if *dtype == DType::Resource {
                    " (a resource: JAX functions are pure, and a stateful op has no sound mapping yet)"
                } else {
                    ""
                };
                write!(
                    f,
                    "its {kind} '{name}' is {dtype}, which does not cross to JAX{why}"
                )
            }
            Skipped::AttrKind { name, ty } => write!(
                f,
                "its attr '{name}' is a {ty}, which the JAX export does not carry (int, float, bool, string, type and lists of them)"
            ),
        }
    }
}

/// The ops a library exports to JAX, and those it leaves out.
pub struct JaxPlan {
    exported: Vec<&'static OpEntry>,
    skipped: Vec<(&'static OpEntry, Skipped)>,
}

impl JaxPlan {
    /// The plan for the ops of `crates`, in name order.
    pub fn new(registry: &'static Registry, crates: Crates) -> JaxPlan {
        let mut entries: Vec<&'static OpEntry> = registry.ops().collect();
        entries.sort_by(|a, b| a.def().name.cmp(&b.def().name));
        let mut plan = JaxPlan {
            exported: Vec::new(),
            skipped: Vec::new(),
        };
        for entry in entries {
            let why = match crates.leaves_out(entry) {
                Some(name) => Some(Skipped::OtherCrate { name: name.into() }),
                None => skip_reason(entry),
            };
            match why {
                Some(why) => plan.skipped.push((entry, why)),
                None => plan.exported.push(entry),
            }
        }
        plan
    }

    /// The exported ops.
    pub fn exported(&self) -> impl Iterator<Item = &'static OpEntry> + '_ {
        self.exported.iter().copied()
    }

    /// The ops left out, with why.
    pub fn skipped(&self) -> impl Iterator<Item = (&'static OpEntry, &Skipped)> + '_ {
        self.skipped.iter().map(|(op, why)| (*op, why))
    }
}

fn skip_reason(entry: &OpEntry) -> Option<Skipped> {
    let def = entry.def();
    if !entry.kernels().iter().any(|k| k.device == DeviceType::Cpu) {
        return Some(Skipped::NoCpuKernel);
    }
    let args =
        (def.inputs.iter().map(|a| ("input", a))).chain(def.outputs.iter().map(|a| ("output", a)));
    for (kind, arg) in args {
        if arg.number_attr.is_some() || arg.type_list_attr().is_some() {
            return Some(Skipped::ListArg {
                kind,
                name: arg.name.clone(),
            });
        }
        if let Some(dtype) = arg.fixed_type()
            && !crosses(dtype)
        {
            return Some(Skipped::ArgDtype {
                kind,
                name: arg.name.clone(),
                dtype,
            });
        }
    }
    def.attrs
        .iter()
        .find(|a| {
            !matches!(
                a.ty.kind,
                AttrKind::Int
                    | AttrKind::Float
                    | AttrKind::Bool
                    | AttrKind::String
                    | AttrKind::Type
            )
        })
        .map(|a| Skipped::AttrKind {
            name: a.name.clone(),
            ty: a.ty.to_string(),
        })
}

/// Whether `dtype`'s tensors cross to JAX.
fn crosses(dtype: DType) -> bool {
    (1..=33).any(|x| crate::handler::from_xla(x) == Some(dtype))
}
