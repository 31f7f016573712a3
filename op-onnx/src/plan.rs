//! What a library exports to ONNX Runtime, decided from the registry
//! alone: one ONNX Runtime custom op per op and combination of its input
//! dtypes, and the ops left out, each with why.
//!
//! ONNX Runtime picks a custom op's kernel by the node's input types, and
//! gives a kernel only the node's ONNX attributes. So an op is exported
//! when every arg is a single tensor of a dtype that crosses
//! ([`crate::dtype::CROSSING`]), every `type` attr is set by an input, and
//! every other attr is of a kind ONNX attributes hold (`int`, `float`,
//! `bool` as an int, `string`, `list(int)`, `list(float)`); each
//! combination of its type attrs' allowed dtypes that one of its CPU
//! kernels takes is one custom op.
//!
//! ```
//! op_kernels::link();
//! let plan = op_onnx::OnnxPlan::new(op_core::Registry::global(), op_host::Crates::All);
//! let zero_out: Vec<_> = plan.ops().filter(|op| op.entry.def().name == "ZeroOutPolymorphic").collect();
//! // T in {float, double, int32}: one custom op each.
//! assert_eq!(zero_out.len(), 3);
//! ```

use op_core::registry::OpEntry;
use op_core::{ArgDef, AttrKind, DType, DeviceType, Registry};
use op_host::Crates;
use op_host::plan::{Rules, common_reason};

use crate::dtype::{CROSSING, to_onnx};

/// The most custom ops one op gets: its dtype combinations past this are
/// left out (an op with several free type attrs has many).
pub const MAX_COMBINATIONS: usize = 64;

/// One ONNX Runtime custom op: an op of ours with its type attrs bound.
#[derive(Clone, Debug)]
pub struct OnnxOpSpec {
    /// Our op.
    pub entry: &'static OpEntry,
    /// Each type attr's dtype in this combination.
    pub types: Vec<(&'static str, DType)>,
    /// The dtype of each input.
    pub inputs: Vec<DType>,
    /// The dtype of each output.
    pub outputs: Vec<DType>,
}

pub use op_host::plan::Skipped;

/// The host, as reasons name it.
pub const HOST: &str = "ONNX Runtime";

/// The custom ops a library exports to ONNX Runtime, and the ops it
/// leaves out.
pub struct OnnxPlan {
    ops: Vec<OnnxOpSpec>,
    skipped: Vec<(&'static OpEntry, Skipped)>,
}

impl OnnxPlan {
    /// The plan for the ops of `crates` in `registry`, in name order.
    pub fn new(registry: &'static Registry, crates: Crates) -> OnnxPlan {
        let mut entries: Vec<&OpEntry> = registry.ops().collect();
        entries.sort_by(|a, b| a.def().name.cmp(&b.def().name));
        let mut plan = OnnxPlan {
            ops: Vec::new(),
            skipped: Vec::new(),
        };
        for entry in entries {
            let rules = Rules {
                host: HOST,
                crosses: &|d| to_onnx(d).is_some(),
                carries: &|ty| {
                    matches!(
                        (ty.kind, ty.is_list),
                        (
                            AttrKind::Type
                                | AttrKind::Int
                                | AttrKind::Float
                                | AttrKind::Bool
                                | AttrKind::String,
                            false
                        ) | (AttrKind::Int | AttrKind::Float, true)
                    )
                },
            };
            let result = match common_reason(entry, crates, &rules) {
                Some(why) => Err(why),
                None => combinations(entry),
            };
            match result {
                Ok(specs) => plan.ops.extend(specs),
                Err(why) => plan.skipped.push((entry, why)),
            }
        }
        plan
    }

    /// Every custom op, by op name, then combination.
    pub fn ops(&self) -> impl Iterator<Item = &OnnxOpSpec> + '_ {
        self.ops.iter()
    }

    /// The ops left out, with why.
    pub fn skipped(&self) -> impl Iterator<Item = (&'static OpEntry, &Skipped)> + '_ {
        self.skipped.iter().map(|(op, why)| (*op, why))
    }
}

/// The custom ops of `entry`, or why it has none.
fn combinations(entry: &'static OpEntry) -> Result<Vec<OnnxOpSpec>, Skipped> {
    let def: &'static op_core::OpDef = entry.def();
    let cpu: Vec<_> = entry
        .kernels()
        .iter()
        .filter(|k| k.device == DeviceType::Cpu)
        .collect();
    let set_by_input = |name: &str| def.inputs.iter().any(|a| a.type_attr() == Some(name));
    let mut free: Vec<(&'static str, Vec<DType>)> = Vec::new();
    // Only the type attrs matter here: the shared rules took the others.
    let type_attrs = def
        .attrs
        .iter()
        .filter(|a| a.ty.kind == AttrKind::Type && !a.ty.is_list);
    for attr in type_attrs {
        if !set_by_input(&attr.name) {
            return Err(Skipped::TypeAttrWithoutInput {
                name: attr.name.clone(),
            });
        }
        let allowed: Vec<DType> = CROSSING
            .iter()
            .map(|(d, _)| *d)
            .filter(|d| match &attr.allowed_values {
                Some(op_core::ListValue::Type(types)) => types.contains(d),
                _ => true,
            })
            .collect();
        free.push((attr.name.as_str(), allowed));
    }
    let mut specs = Vec::new();
    let mut combination: Vec<(&'static str, DType)> = Vec::new();
    enumerate(&free, &mut combination, &mut |types| {
        if specs.len() >= MAX_COMBINATIONS {
            return;
        }
        let kernel_takes = cpu.iter().any(|k| {
            k.constraints
                .iter()
                .all(|c| types.iter().any(|(a, d)| *a == c.attr && *d == c.dtype))
        });
        if !kernel_takes {
            return;
        }
        let dtype_of = |arg: &ArgDef| {
            arg.fixed_type().or_else(|| {
                let name = arg.type_attr()?;
                types.iter().find(|(a, _)| *a == name).map(|(_, d)| *d)
            })
        };
        let inputs: Option<Vec<DType>> = def.inputs.iter().map(dtype_of).collect();
        let outputs: Option<Vec<DType>> = def.outputs.iter().map(dtype_of).collect();
        if let (Some(inputs), Some(outputs)) = (inputs, outputs) {
            specs.push(OnnxOpSpec {
                entry,
                types: types.to_vec(),
                inputs,
                outputs,
            });
        }
    });
    if specs.is_empty() {
        return Err(Skipped::NoCombination);
    }
    Ok(specs)
}

/// Calls `f` with every combination of one dtype per free attr.
fn enumerate(
    free: &[(&'static str, Vec<DType>)],
    chosen: &mut Vec<(&'static str, DType)>,
    f: &mut impl FnMut(&[(&'static str, DType)]),
) {
    let Some(((name, dtypes), rest)) = free.split_first() else {
        f(chosen);
        return;
    };
    for dtype in dtypes {
        chosen.push((name, *dtype));
        enumerate(rest, chosen, f);
        chosen.pop();
    }
}
