//! [`Graph`] → ONNX model: what `opkit graph export --onnx` writes.
//!
//! | our node | its ONNX form |
//! | --- | --- |
//! | `Placeholder` | a graph input of its dtype and shape (an unknown dim named after the input) |
//! | `Const` | an initializer |
//! | an op with an ONNX equivalent ([`ONNX_EQUIVALENTS`]) | that ONNX op (opset [`OPSET`]); `MatMul`'s transposes as `Transpose` nodes |
//! | any other op | a node of the custom-op domain given (op-onnx's library holds it), its attrs as ONNX attributes (`int`, `float`, `bool` as an int, `string`, and lists of those), the type attrs its inputs set left out |
//! | a node with no outputs (`NoOp`), control edges | left out: ONNX runs by data flow alone |
//!
//! The fetched tensors are the graph's outputs. What cannot be written (a
//! type attr no input sets, a tensor attr) is an error naming the node.
//!
//! ```standalone_crate
//! # op_kernels::link();
//! use op_core::DType;
//! use op_graph::GraphBuilder;
//! use op_graph::graph::NewNode;
//! let b = GraphBuilder::new();
//! let x = b.placeholder("x", DType::I32, "[2,3]")?;
//! let mut graph = b.into_graph();
//! let z = graph.add(NewNode::new("ZeroOut").name("z").input(x))?;
//! let z = graph.node(z)?.output(0);
//! graph.add(NewNode::new("AddV2").name("y").input(z).input(x))?;
//! let model = op_graph::onnx::export(&graph, &["y"], "opkit_ops")?;
//! let nodes = &model.graph.as_ref().unwrap().node;
//! assert_eq!((nodes[0].op_type.as_str(), nodes[0].domain.as_str()), ("ZeroOut", "opkit_ops"));
//! assert_eq!((nodes[1].op_type.as_str(), nodes[1].domain.as_str()), ("Add", ""));
//! assert_eq!(model.graph.as_ref().unwrap().input[0].name, "x");
//! # Ok::<(), op_core::Error>(())
//! ```

pub mod proto;

use std::path::Path;

use op_core::{AttrKind, AttrValue, DType, Error, ListValue, Result};

use crate::graph::{Graph, Node, Output};
use proto::attribute_type;

/// The ONNX opset version the export's ONNX ops are of.
pub const OPSET: i64 = 17;

/// The IR version written (ONNX 1.12's, which opset 17 came with).
pub const IR_VERSION: i64 = 8;

/// Our ops with an ONNX equivalent of the same semantics (broadcasting
/// included), and that equivalent.
pub const ONNX_EQUIVALENTS: &[(&str, &str)] = &[
    ("AddV2", "Add"),
    ("Cos", "Cos"),
    ("Exp", "Exp"),
    ("Identity", "Identity"),
    ("Log", "Log"),
    ("MatMul", "MatMul"),
    ("Maximum", "Max"),
    ("Minimum", "Min"),
    ("Mul", "Mul"),
    ("Neg", "Neg"),
    ("RealDiv", "Div"),
    ("Relu", "Relu"),
    ("Sigmoid", "Sigmoid"),
    ("Sin", "Sin"),
    ("Sqrt", "Sqrt"),
    ("Sub", "Sub"),
    ("Tanh", "Tanh"),
];

/// ONNX's element type (`TensorProto.DataType`) of `dtype`, when ONNX has
/// one.
pub fn elem_type(dtype: DType) -> Option<i32> {
    Some(match dtype {
        DType::F32 => 1,
        DType::U8 => 2,
        DType::I8 => 3,
        DType::U16 => 4,
        DType::I16 => 5,
        DType::I32 => 6,
        DType::I64 => 7,
        DType::String => 8,
        DType::Bool => 9,
        DType::F16 => 10,
        DType::F64 => 11,
        DType::U32 => 12,
        DType::U64 => 13,
        DType::Complex64 => 14,
        DType::Complex128 => 15,
        DType::BF16 => 16,
        _ => return None,
    })
}

/// `graph` as an ONNX model whose outputs are the tensors `outputs` (`node`
/// or `node:k`), our other ops in custom-op domain `domain`: see the
/// [module docs](self).
pub fn export(graph: &Graph, outputs: &[&str], domain: &str) -> Result<proto::ModelProto> {
    let mut onnx = proto::GraphProto {
        name: "opkit".into(),
        ..Default::default()
    };
    let mut custom = false;
    for node in graph.nodes() {
        let context = |e: Error| {
            e.with_context(format!(
                "exporting node '{}' ({}) to ONNX",
                node.name(),
                node.op()
            ))
        };
        match node.op() {
            "Placeholder" => onnx
                .input
                .push(value_info(graph, node.output(0)).map_err(context)?),
            "Const" => onnx
                .initializer
                .push(initializer(graph, node).map_err(context)?),
            _ if node.outputs().is_empty() => {}
            op => {
                if let Some((_, onnx_op)) = ONNX_EQUIVALENTS.iter().find(|(ours, _)| *ours == op) {
                    onnx.node
                        .extend(builtin(graph, node, onnx_op).map_err(context)?);
                } else {
                    onnx.node
                        .push(custom_node(graph, node, domain).map_err(context)?);
                    custom = true;
                }
            }
        }
    }
    for name in outputs {
        let output = graph.find_output(name)?;
        let mut info = value_info(graph, output)?;
        info.name = name.to_string();
        // A fetch by another spelling than the tensor's own name (`x:0`)
        // gets an Identity to give it that name.
        let own = value_name(graph, output);
        if own != *name {
            onnx.node.push(proto::NodeProto {
                input: vec![own],
                output: vec![name.to_string()],
                op_type: "Identity".into(),
                name: format!("{name}/output"),
                ..Default::default()
            });
        }
        onnx.output.push(info);
    }
    let mut opset_import = vec![proto::OperatorSetIdProto {
        domain: String::new(),
        version: OPSET,
    }];
    if custom {
        opset_import.push(proto::OperatorSetIdProto {
            domain: domain.into(),
            version: 1,
        });
    }
    Ok(proto::ModelProto {
        ir_version: IR_VERSION,
        producer_name: "opkit".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        graph: Some(onnx),
        opset_import,
    })
}

/// Writes [`export`]'s model to `path`.
pub fn write(graph: &Graph, outputs: &[&str], domain: &str, path: impl AsRef<Path>) -> Result<()> {
    use prost::Message;
    let model = export(graph, outputs, domain)?;
    let path = path.as_ref();
    std::fs::write(path, model.encode_to_vec())
        .map_err(|e| Error::internal(format!("writing {}: {e}", path.display())))
}

/// The ONNX value name of `output`: its tensor name.
fn value_name(graph: &Graph, output: Output) -> String {
    graph.tensor_name(output).to_string()
}

fn onnx_type(dtype: DType) -> Result<i32> {
    elem_type(dtype).ok_or_else(|| Error::unimplemented(format!("ONNX has no {dtype} tensors")))
}

/// `output` as a graph input or output: its dtype and shape.
fn value_info(graph: &Graph, output: Output) -> Result<proto::ValueInfoProto> {
    let name = value_name(graph, output);
    let shape = graph.output_shape(output)?;
    let shape = shape.0.as_ref().map(|dims| proto::TensorShapeProto {
        dim: dims
            .iter()
            .enumerate()
            .map(|(d, size)| match size {
                Some(size) => proto::Dimension {
                    dim_value: Some(*size as i64),
                    dim_param: None,
                },
                None => proto::Dimension {
                    dim_value: None,
                    dim_param: Some(format!("{name}_{d}")),
                },
            })
            .collect(),
    });
    Ok(proto::ValueInfoProto {
        r#type: Some(proto::TypeProto {
            tensor_type: Some(proto::TensorTypeProto {
                elem_type: onnx_type(graph.output_dtype(output)?)?,
                shape,
            }),
        }),
        name,
    })
}

/// A `Const` node as an initializer.
fn initializer(graph: &Graph, node: &Node) -> Result<proto::TensorProto> {
    let value = node
        .constant_value()
        .ok_or_else(|| Error::internal("the Const node has no value"))?;
    let raw: Vec<u8> = match value.dtype() {
        DType::Bool => value
            .as_slice::<bool>()?
            .iter()
            .map(|&b| u8::from(b))
            .collect(),
        _ => value.plain_bytes()?.to_vec(),
    };
    Ok(proto::TensorProto {
        dims: value.dims().iter().map(|&d| d as i64).collect(),
        data_type: onnx_type(value.dtype())?,
        name: value_name(graph, node.output(0)),
        raw_data: raw,
    })
}

fn inputs(graph: &Graph, node: &Node) -> Vec<String> {
    node.inputs()
        .iter()
        .map(|o| value_name(graph, *o))
        .collect()
}

fn outputs(graph: &Graph, node: &Node) -> Vec<String> {
    (0..node.outputs().len())
        .map(|k| value_name(graph, node.output(k)))
        .collect()
}

/// A node of an op with an ONNX equivalent: that op (MatMul's transposes
/// first, as `Transpose` nodes).
fn builtin(graph: &Graph, node: &Node, onnx_op: &str) -> Result<Vec<proto::NodeProto>> {
    let mut nodes = Vec::new();
    let mut input = inputs(graph, node);
    if node.op() == "MatMul" {
        for (k, attr) in ["transpose_a", "transpose_b"].iter().enumerate() {
            if node.attr(attr) == Some(&AttrValue::Bool(true)) {
                let transposed = format!("{}/{attr}", node.name());
                nodes.push(proto::NodeProto {
                    input: vec![input[k].clone()],
                    output: vec![transposed.clone()],
                    name: transposed.clone(),
                    op_type: "Transpose".into(),
                    attribute: vec![proto::AttributeProto {
                        name: "perm".into(),
                        ints: vec![1, 0],
                        r#type: attribute_type::INTS,
                        ..Default::default()
                    }],
                    ..Default::default()
                });
                input[k] = transposed;
            }
        }
    }
    nodes.push(proto::NodeProto {
        input,
        output: outputs(graph, node),
        name: node.name().into(),
        op_type: onnx_op.into(),
        ..Default::default()
    });
    Ok(nodes)
}

/// A node of one of our ops in the custom-op domain.
fn custom_node(graph: &Graph, node: &Node, domain: &str) -> Result<proto::NodeProto> {
    let def = node.op_def();
    let inferred: Vec<&str> = def
        .inputs
        .iter()
        .flat_map(|a| [a.type_attr(), a.type_list_attr(), a.number_attr.as_deref()])
        .flatten()
        .collect();
    let mut attribute = Vec::new();
    for (name, value) in node.attrs() {
        if inferred.contains(&name.as_str()) {
            continue;
        }
        attribute.push(onnx_attr(name, value)?);
    }
    Ok(proto::NodeProto {
        input: inputs(graph, node),
        output: outputs(graph, node),
        name: node.name().into(),
        op_type: node.op().into(),
        attribute,
        domain: domain.into(),
    })
}

/// One attr as an ONNX attribute.
fn onnx_attr(name: &str, value: &AttrValue) -> Result<proto::AttributeProto> {
    let mut attr = proto::AttributeProto {
        name: name.into(),
        ..Default::default()
    };
    match value {
        AttrValue::Int(i) => (attr.i, attr.r#type) = (*i, attribute_type::INT),
        AttrValue::Bool(b) => (attr.i, attr.r#type) = (i64::from(*b), attribute_type::INT),
        AttrValue::Float(f) => (attr.f, attr.r#type) = (*f, attribute_type::FLOAT),
        AttrValue::String(s) => (attr.s, attr.r#type) = (s.clone(), attribute_type::STRING),
        AttrValue::List(ListValue::Int(v)) => {
            (attr.ints, attr.r#type) = (v.clone(), attribute_type::INTS)
        }
        AttrValue::List(ListValue::Float(v)) => {
            (attr.floats, attr.r#type) = (v.clone(), attribute_type::FLOATS)
        }
        AttrValue::List(ListValue::String(v)) => {
            (attr.strings, attr.r#type) = (v.clone(), attribute_type::STRINGS)
        }
        other => {
            let kind = other.attr_type();
            let why = if kind.kind == AttrKind::Type {
                "a type that no input sets, and ONNX Runtime picks a custom op's kernel by input types"
            } else {
                "of a kind ONNX attributes do not hold here"
            };
            return Err(Error::unimplemented(format!(
                "attr '{name}' is {other}: {why}"
            )));
        }
    }
    Ok(attr)
}
