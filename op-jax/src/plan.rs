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
use op_core::{AttrKind, DType, Registry};
use op_host::Crates;
use op_host::plan::{Rules, common_reason};

pub use op_host::plan::Skipped;

/// The host, as reasons name it.
pub const HOST: &str = "JAX";

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
        let rules = Rules {
            host: HOST,
            crosses: &crosses,
            carries: &|ty| {
                matches!(
                    ty.kind,
                    AttrKind::Int
                        | AttrKind::Float
                        | AttrKind::Bool
                        | AttrKind::String
                        | AttrKind::Type
                )
            },
        };
        let mut plan = JaxPlan {
            exported: Vec::new(),
            skipped: Vec::new(),
        };
        for entry in entries {
            match common_reason(entry, crates, &rules) {
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

/// Whether `dtype`'s tensors cross to JAX.
fn crosses(dtype: DType) -> bool {
    (1..=33).any(|x| crate::handler::from_xla(x) == Some(dtype))
}
