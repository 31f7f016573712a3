//! Which ops a host's export holds, and why it leaves each other op out:
//! the rules every host's plan shares (the crate filter, a CPU kernel,
//! single-tensor args of dtypes that cross, attrs of kinds the host
//! carries), and the reasons, each said for the host it is about.
//!
//! ```
//! op_kernels::link();
//! use op_host::plan::{Rules, Skipped, common_reason};
//! let rules = Rules {
//!     host: "my host",
//!     crosses: &|d| d != op_core::DType::String,
//!     carries: &|ty| !ty.is_list,
//! };
//! let add_n = op_core::Registry::global().op("AddN")?;
//! let why = common_reason(add_n, op_host::Crates::All, &rules).unwrap();
//! assert!(matches!(why, Skipped::ListArg { .. }));
//! assert!(why.describe("my host").contains("my host"));
//! # Ok::<(), op_core::Error>(())
//! ```

use op_core::registry::OpEntry;
use op_core::{AttrType, DType, DeviceType};

use crate::Crates;

/// Why a host's export leaves an op out.
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
    /// An arg is a list of tensors (`N * T`, `list(type)`).
    ListArg {
        /// `input` or `output`.
        kind: &'static str,
        /// The arg.
        name: String,
    },
    /// An arg's dtype does not cross to the host.
    ArgDtype {
        /// `input` or `output`.
        kind: &'static str,
        /// The arg.
        name: String,
        /// Its dtype.
        dtype: DType,
    },
    /// An attr is of a kind the host does not carry.
    AttrKind {
        /// The attr.
        name: String,
        /// Its type, as the spec writes it.
        ty: String,
    },
    /// A `type` attr is set by no input, and the host picks kernels by
    /// input types alone (ONNX Runtime).
    TypeAttrWithoutInput {
        /// The attr.
        name: String,
    },
    /// No combination of allowed dtypes has a CPU kernel whose dtypes
    /// cross.
    NoCombination,
}

impl Skipped {
    /// The reason, said for `host` (`ONNX Runtime`, `JAX`).
    pub fn describe(&self, host: &str) -> String {
        match self {
            Skipped::OtherCrate { name } => {
                format!("it is an op of crate {name}, which this library does not export")
            }
            Skipped::NoCpuKernel => "it has no CPU kernel".into(),
            Skipped::ListArg { kind, name } => format!(
                "its {kind} '{name}' is a list of tensors, which the {host} export does not take yet"
            ),
            Skipped::ArgDtype { kind, name, dtype } => {
                let resource = if *dtype == DType::Resource {
                    format!(" (a stateful op has no sound mapping onto {host}'s kernels yet)")
                } else {
                    String::new()
                };
                format!("its {kind} '{name}' is {dtype}, which does not cross to {host}{resource}")
            }
            Skipped::AttrKind { name, ty } => {
                format!("its attr '{name}' is a {ty}, which the {host} export does not carry")
            }
            Skipped::TypeAttrWithoutInput { name } => format!(
                "its type attr '{name}' is set by no input, and {host} picks a kernel by input \
                 types alone"
            ),
            Skipped::NoCombination => {
                "no combination of its allowed dtypes has a CPU kernel of dtypes that cross".into()
            }
        }
    }
}

/// What a host takes, for [`common_reason`].
pub struct Rules<'a> {
    /// The host, as reasons name it.
    pub host: &'static str,
    /// Whether tensors of a dtype cross to the host.
    pub crosses: &'a dyn Fn(DType) -> bool,
    /// Whether the host carries attrs of a type.
    pub carries: &'a dyn Fn(AttrType) -> bool,
}

/// Why `entry` is left out by the rules every host shares, or `None`.
pub fn common_reason(entry: &OpEntry, crates: Crates, rules: &Rules<'_>) -> Option<Skipped> {
    if let Some(name) = crates.leaves_out(entry) {
        return Some(Skipped::OtherCrate { name: name.into() });
    }
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
            && !(rules.crosses)(dtype)
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
        .find(|a| !(rules.carries)(a.ty))
        .map(|a| Skipped::AttrKind {
            name: a.name.clone(),
            ty: a.ty.to_string(),
        })
}
