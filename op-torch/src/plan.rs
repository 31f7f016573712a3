//! Which ops a library exports to PyTorch, decided from the registry
//! alone, and why each other op is left out.
//!
//! An op is exported when it has a CPU kernel, every input and output is
//! a single tensor of a dtype PyTorch has ([`crate::shim::crosses`]: not
//! strings, resources or variants), and every attr has a schema type
//! ([`crate::schema`]: ints, floats, bools, strings and lists of those,
//! and type attrs). An op with a `#[gradient]` exports its gradient too,
//! as `<name>_backward`.
//!
//! ```
//! op_kernels::link();
//! let plan = op_torch::TorchPlan::new(op_core::Registry::global(), op_host::Crates::All);
//! assert!(plan.exported().any(|op| op.schema.name == "zero_out"));
//! assert!(plan.skipped().any(|(op, _)| op.def().name == "AddN"));
//! ```

use op_core::registry::OpEntry;
use op_core::{AttrKind, Registry};
use op_host::Crates;
use op_host::plan::{Rules, common_reason};

pub use op_host::plan::Skipped;

use crate::schema::Schema;

/// The host, as reasons name it.
pub const HOST: &str = "PyTorch";

/// An exported op.
pub struct TorchOp {
    /// The op.
    pub entry: &'static OpEntry,
    /// Its schema.
    pub schema: Schema,
    /// Its gradient's, when it has a `#[gradient]`.
    pub gradient: Option<Schema>,
}

/// The ops a library exports to PyTorch, and those it leaves out.
pub struct TorchPlan {
    exported: Vec<TorchOp>,
    skipped: Vec<(&'static OpEntry, Skipped)>,
}

impl TorchPlan {
    /// The plan for the ops of `crates`, in name order.
    pub fn new(registry: &'static Registry, crates: Crates) -> TorchPlan {
        let mut entries: Vec<&'static OpEntry> = registry.ops().collect();
        entries.sort_by(|a, b| a.def().name.cmp(&b.def().name));
        let rules = Rules {
            host: HOST,
            crosses: &crate::shim::crosses,
            carries: &|ty| match ty.kind {
                AttrKind::Int | AttrKind::Float | AttrKind::Bool | AttrKind::String => true,
                AttrKind::Type => !ty.is_list,
                _ => false,
            },
        };
        let mut plan = TorchPlan {
            exported: Vec::new(),
            skipped: Vec::new(),
        };
        for entry in entries {
            if let Some(why) = common_reason(entry, crates, &rules) {
                plan.skipped.push((entry, why));
                continue;
            }
            match Schema::new(entry) {
                Ok(schema) => {
                    let gradient = op_host::gradient::has_gradient(entry)
                        .then(|| Schema::gradient(entry).ok())
                        .flatten();
                    plan.exported.push(TorchOp {
                        entry,
                        schema,
                        gradient,
                    });
                }
                Err(unmapped) => plan.skipped.push((
                    entry,
                    Skipped::AttrKind {
                        name: unmapped.attr,
                        ty: unmapped.why,
                    },
                )),
            }
        }
        plan
    }

    /// The exported ops.
    pub fn exported(&self) -> impl Iterator<Item = &TorchOp> + '_ {
        self.exported.iter()
    }

    /// The ops left out, with why.
    pub fn skipped(&self) -> impl Iterator<Item = (&'static OpEntry, &Skipped)> + '_ {
        self.skipped.iter().map(|(op, why)| (*op, why))
    }
}
