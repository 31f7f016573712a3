//! Building graphs: names and scopes, the checks made when a node is
//! added, and the typed wrappers on a graph builder.

use op_core::shape_inference::PartialShape;
use op_core::{AttrValue, Code, DType, ShapeValue, Tensor};
use op_graph::{Graph, GraphBuilder, NewNode, TensorName};
use op_kernels::example::Example;
use op_kernels::identity::IdentityN;
use op_kernels::list::IntListInputExample;
use op_kernels::matmul::MatMul;

mod common;
use common::{TestMatMul, TestZeros, assert_contains};

fn placeholder(name: &str, dtype: DType, shape: &[i64]) -> NewNode {
    NewNode::new("Placeholder")
        .name(name)
        .attr("dtype", dtype)
        .attr("shape", ShapeValue::from_sizes(shape))
}

#[test]
fn nodes_are_named_after_their_op_and_made_unique() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[2]").unwrap();
    let y1 = Example::call_with(x).run_on(&b).unwrap();
    let y2 = Example::call_with(y1).run_on(&b).unwrap();
    let y3 = Example::call_with(y2)
        .node_name("double")
        .run_on(&b)
        .unwrap();
    let y4 = Example::call_with(y3)
        .node_name("double")
        .run_on(&b)
        .unwrap();
    let g = b.into_graph();
    let names: Vec<&str> = g.nodes().iter().map(|n| n.name()).collect();
    assert_eq!(names, ["x", "Example", "Example_1", "double", "double_1"]);
    assert_eq!(g.tensor_name(y4).to_string(), "double_1");
}

#[test]
fn name_scopes_prefix_names_nest_and_are_made_unique() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[2]").unwrap();
    let names = |b: &GraphBuilder| -> Vec<String> {
        b.graph()
            .nodes()
            .iter()
            .map(|n| n.name().to_owned())
            .collect()
    };
    {
        let layer = b.name_scope("layer1");
        assert_eq!(layer.name(), "layer1/");
        Example::call_with(x).run_on(&b).unwrap();
        {
            let _inner = b.name_scope("inner");
            Example::call_with(x).run_on(&b).unwrap();
        }
        Example::call_with(x).run_on(&b).unwrap();
    }
    {
        let _again = b.name_scope("layer1");
        Example::call_with(x).run_on(&b).unwrap();
        let _absolute = b.name_scope("fixed/");
        Example::call_with(x).run_on(&b).unwrap();
        let _top = b.name_scope("");
        Example::call_with(x).run_on(&b).unwrap();
    }
    Example::call_with(x).run_on(&b).unwrap();
    assert_eq!(
        names(&b),
        [
            "x",
            "layer1/Example",
            "layer1/inner/Example",
            "layer1/Example_1",
            "layer1_1/Example",
            "fixed/Example",
            "Example",
            "Example_1"
        ]
    );
    assert_eq!(b.current_name_scope(), "");
}

#[test]
fn an_invalid_name_scope_makes_adding_a_node_in_it_an_error() {
    common::link();
    let b = GraphBuilder::new();
    let _scope = b.name_scope("bad scope");
    let err = b.placeholder("x", DType::F32, "?").unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["'bad scope/' is not a valid name scope"]);
}

#[test]
fn device_and_control_scopes_apply_to_the_nodes_made_inside() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[2]").unwrap();
    let first = Example::call_with(x).run_on(&b).unwrap();
    let (second, third) = {
        let _device = b.device("/device:CPU:0");
        let _after = b.control_dependencies(&[first.node()]);
        let second = Example::call_with(x).run_on(&b).unwrap();
        let _nested = b.control_dependencies(&[second.node()]);
        (second, Example::call_with(x).run_on(&b).unwrap())
    };
    let fourth = Example::call_with(x).run_on(&b).unwrap();
    let g = b.graph();
    let node = |o: op_graph::Output| g.node(o.node()).unwrap();
    assert_eq!(node(second).device(), "/device:CPU:0");
    assert_eq!(node(second).control_inputs(), [first.node()]);
    assert_eq!(node(third).control_inputs(), [first.node(), second.node()]);
    assert_eq!(node(fourth).device(), "");
    assert!(node(fourth).control_inputs().is_empty());
    assert_eq!(
        g.to_string().lines().nth(3).unwrap(),
        "Example_2 = Example(x, ^Example, ^Example_1) -> float [2]"
    );
}

#[test]
fn every_node_holds_its_checked_instance_inputs_and_inferred_outputs() {
    common::link();
    let mut g = Graph::new();
    let x = g.add(placeholder("x", DType::F64, &[-1, 3])).unwrap();
    let y = g
        .add(NewNode::new("Example").name("y").input(x.output(0)))
        .unwrap();
    let node = g.node(y).unwrap();
    assert_eq!(node.op(), "Example");
    assert_eq!(node.instance().name(), "y");
    assert_eq!(
        node.attrs(),
        [("T".to_owned(), AttrValue::Type(DType::F64))]
    );
    assert_eq!(node.inputs(), [x.output(0)]);
    assert_eq!(node.output_dtype(0), Some(DType::F64));
    assert_eq!(
        node.output_shape(0),
        Some(&"[?,3]".parse::<PartialShape>().unwrap())
    );
    assert_eq!(node.output_dtype(1), None);
    assert!(!node.is_stateful());
    // Every attr decided: Placeholder's shape was given, and a default
    // fills it when not.
    let p = g
        .add(NewNode::new("Placeholder").attr("dtype", DType::I32))
        .unwrap();
    let p = g.node(p).unwrap();
    assert_eq!(p.name(), "Placeholder");
    assert_eq!(
        p.attr("shape"),
        Some(&AttrValue::Shape(ShapeValue::unknown_rank()))
    );
    assert_eq!(p.output_shape(0), Some(&PartialShape::unknown()));
}

#[test]
fn a_shape_mismatch_is_an_error_naming_the_node_its_inputs_and_both_shapes() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?,3]").unwrap();
    let w = b.placeholder("w", DType::F32, [4, 5]).unwrap();
    let err = TestMatMul::call_with(x, w)
        .node_name("layer1")
        .run_on(&b)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "node 'layer1'",
            "dimension 1 of input 0 ('a') with shape [?,3]",
            "dimension 0 of input 1 ('b') with shape [4,5]",
            "inputs: x [?,3], w [4,5]",
        ],
    );
    // Nothing was added.
    assert_eq!(b.graph().len(), 2);
    // The shapes that fit give the product's.
    let w = b.placeholder("w", DType::F32, [3, 5]).unwrap();
    let y = TestMatMul::call_with(x, w).run_on(&b).unwrap();
    assert_eq!(b.graph().output_shape(y).unwrap().to_string(), "[?,5]");
}

#[test]
fn a_node_of_many_inputs_names_the_first_few_in_its_error() {
    common::link();
    let mut g = Graph::new();
    let x = g.add(placeholder("x", DType::F32, &[2])).unwrap();
    let y = g.add(placeholder("y", DType::F32, &[3])).unwrap();
    let mut inputs = vec![x.output(0); 10_000];
    inputs.push(y.output(0));
    let err = g.add(NewNode::new("AddN").input_list(inputs)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let text = err.to_string();
    assert!(text.len() < 2_000, "{} bytes: {text}", text.len());
    assert_contains(
        &err,
        &[
            "inputs: x [2], x [2], x [2], x [2], x [2], x [2], x [2], x [2] and 9,993 more (10,001 in all)",
        ],
    );
}

#[test]
fn tensorflows_matmul_of_mismatched_shapes_is_an_error_naming_both() {
    common::link();
    let b = GraphBuilder::new();
    let x = b.placeholder("x", DType::F32, "[?,3]").unwrap();
    let w = b.placeholder("w", DType::F32, [4, 5]).unwrap();
    let err = MatMul::call_with(x, w)
        .node_name("layer1")
        .run_on(&b)
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[
            "node 'layer1'",
            "[?,3]",
            "[4,5]",
            "inputs: x [?,3], w [4,5]",
        ],
    );
    let w = b.placeholder("w", DType::F32, [3, 5]).unwrap();
    let y = MatMul::call_with(x, w).run_on(&b).unwrap();
    assert_eq!(b.graph().output_shape(y).unwrap().to_string(), "[?,5]");
}

#[test]
fn an_unknown_op_is_a_not_found_error_naming_the_node() {
    common::link();
    let mut g = Graph::new();
    let err = g.add(NewNode::new("Exampel").name("e")).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &[
            "'Exampel' is not registered",
            "did you mean 'Example'?",
            "while adding node 'e'",
        ],
    );
    assert!(g.is_empty());
}

#[test]
fn wrong_attrs_are_errors_naming_the_node_and_the_attr() {
    common::link();
    let mut g = Graph::new();
    let x = g.add(placeholder("x", DType::F32, &[2])).unwrap().output(0);
    let err = g
        .add(
            NewNode::new("Example")
                .name("a")
                .input(x)
                .attr("TT", DType::F32),
        )
        .unwrap_err();
    assert_contains(
        &err,
        &["has no attr named 'TT'", "did you mean 'T'?", "node 'a'"],
    );
    let err = g
        .add(
            NewNode::new("Example")
                .name("b")
                .input(x)
                .attr("T", DType::I32),
        )
        .unwrap_err();
    assert_contains(
        &err,
        &[
            "attr 'T' was given as int32, but input 'input' implies float",
            "node 'b'",
        ],
    );
    let err = g
        .add(NewNode::new("Placeholder").name("c").attr("dtype", 3i64))
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["'dtype'", "node 'c'"]);
    let err = g.add(NewNode::new("Placeholder").name("d")).unwrap_err();
    assert_contains(&err, &["attr 'dtype' (type) is required", "node 'd'"]);
    let err = g.add(NewNode::new("Example").name("e")).unwrap_err();
    assert_contains(&err, &["expects 1 input(s) (input), got 0", "node 'e'"]);
    assert_eq!(g.len(), 1);
}

#[test]
fn internal_attrs_are_kept_as_given_and_other_unknown_attrs_are_errors() {
    common::link();
    let mut g = Graph::new();
    let x = g
        .add(
            placeholder("x", DType::F32, &[2])
                .attr(
                    "_output_shapes",
                    AttrValue::from(vec![ShapeValue::from_sizes(&[2])]),
                )
                .attr("_class", AttrValue::from(vec!["loc:@x"])),
        )
        .unwrap();
    let node = g.node(x).unwrap();
    assert_eq!(node.internal_attrs().len(), 2);
    assert_eq!(node.attrs().len(), 2, "dtype and shape");
    assert_eq!(node.attr("_class"), Some(&AttrValue::from(vec!["loc:@x"])));
    let err = g
        .add(placeholder("y", DType::F32, &[2]).attr("class", 1i64))
        .unwrap_err();
    assert_contains(&err, &["has no attr named 'class'"]);
}

#[test]
fn explicit_names_must_be_valid_and_free() {
    common::link();
    let mut g = Graph::new();
    g.add(placeholder("x", DType::F32, &[2])).unwrap();
    let err = g.add(placeholder("x", DType::F32, &[2])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(&err, &["already has a node named 'x'"]);
    for bad in ["", "a b", "_x", "x:0", "a>", "^x"] {
        let err = g.add(placeholder(bad, DType::F32, &[2])).unwrap_err();
        assert_contains(&err, &["is not a valid node name"]);
    }
    // All-digit and slash-scoped names are fine, and a name given exactly
    // is skipped by the names made later.
    g.add(placeholder("2", DType::F32, &[2])).unwrap();
    g.add(placeholder("a/b-c.d_e", DType::F32, &[2])).unwrap();
    g.add(placeholder("Placeholder", DType::F32, &[2])).unwrap();
    let p = g
        .add(NewNode::new("Placeholder").attr("dtype", DType::F32))
        .unwrap();
    assert_eq!(g.node(p).unwrap().name(), "Placeholder_1");
}

#[test]
fn outputs_of_another_graph_are_an_error_never_a_wrong_node() {
    common::link();
    let other = GraphBuilder::new();
    let foreign = other.placeholder("x", DType::F32, "[2]").unwrap();
    let b = GraphBuilder::new();
    let own = b.placeholder("x", DType::F32, "[2]").unwrap();
    assert_eq!(own.node().index(), foreign.node().index());
    let err = Example::call_with(foreign).run_on(&b).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_contains(
        &err,
        &[&format!("belongs to {}", other.graph().id()), "input 0"],
    );
    let err = b
        .graph_mut()
        .add(NewNode::new("NoOp").control_input(foreign.node()))
        .unwrap_err();
    assert_contains(&err, &["control input", "belongs to graph #"]);
    assert!(b.graph().node(foreign.node()).is_err());
    assert_eq!(b.graph().len(), 1);
}

#[test]
fn an_output_index_the_node_does_not_have_is_an_error() {
    common::link();
    let mut g = Graph::new();
    let x = g.add(placeholder("x", DType::F32, &[2])).unwrap();
    let err = g
        .add(NewNode::new("Example").input(x.output(1)))
        .unwrap_err();
    assert_contains(
        &err,
        &["input 0: node 'x' (op Placeholder) has 1 output(s), so it has no output 1"],
    );
}

#[test]
fn flat_inputs_are_divided_among_args_as_a_nodedef_lists_them() {
    common::link();
    let mut g = Graph::new();
    let a = g.add(placeholder("a", DType::I32, &[2])).unwrap().output(0);
    let sum = g
        .add(NewNode::new("IntListInputExample").inputs([a, a, a]))
        .unwrap();
    assert_eq!(g.node(sum).unwrap().attr("N"), Some(&AttrValue::Int(3)));
    // With the length attr given, it must agree.
    let err = g
        .add(
            NewNode::new("IntListInputExample")
                .inputs([a, a])
                .attr("N", 3i64),
        )
        .unwrap_err();
    assert_contains(
        &err,
        &["takes 3 input tensor(s) (in) with these attrs, but 2 were given"],
    );
    let m = g
        .add(NewNode::new("Examples>MultiplexDense").inputs([]))
        .unwrap_err();
    assert_contains(&m, &["takes 3 input tensor(s)", "but 0 were given"]);
}

#[test]
fn list_inputs_and_outputs_go_through_the_typed_wrappers() {
    common::link();
    let b = GraphBuilder::new();
    let a = b.placeholder("a", DType::I32, "[2]").unwrap();
    let f = b.placeholder("f", DType::F32, "?").unwrap();
    let sum = IntListInputExample::call_with([a, a]).run_on(&b).unwrap();
    let same = IdentityN::call_with([a, f]).run_on(&b).unwrap();
    let g = b.into_graph();
    assert_eq!(g.node(sum.node()).unwrap().inputs(), [a, a]);
    assert_eq!(same.len(), 2);
    assert_eq!(g.output_dtype(same[1]).unwrap(), DType::F32);
    assert_eq!(g.output_shape(same[0]).unwrap().to_string(), "[2]");
    assert_eq!(g.tensor_name(same[1]).to_string(), "IdentityN:1");
}

#[test]
fn shape_functions_see_the_values_of_constant_inputs() {
    common::link();
    let b = GraphBuilder::new();
    let dims = b
        .constant(Tensor::from_vec([2], vec![2i32, 3]).unwrap())
        .unwrap();
    let zeros = TestZeros::call_with(dims).run_on(&b).unwrap();
    assert_eq!(b.graph().output_shape(zeros).unwrap().to_string(), "[2,3]");
    // Fed dims are known only by their count.
    let fed = b.placeholder("dims", DType::I32, "[2]").unwrap();
    let zeros = TestZeros::call_with(fed).run_on(&b).unwrap();
    assert_eq!(b.graph().output_shape(zeros).unwrap().to_string(), "[?,?]");
    assert_eq!(
        b.graph().node(dims.node()).unwrap().constant_value(),
        Some(&Tensor::from_vec([2], vec![2i32, 3]).unwrap())
    );
}

#[test]
fn a_constant_whose_value_does_not_match_its_dtype_is_an_error_at_construction() {
    common::link();
    let mut g = Graph::new();
    let value = Tensor::from_vec([2], vec![1i64, 2])
        .unwrap()
        .to_tensor_value()
        .unwrap();
    let err = g
        .add(
            NewNode::new("Const")
                .name("c")
                .attr("value", value)
                .attr("dtype", DType::F32),
        )
        .unwrap_err();
    assert_contains(
        &err,
        &[
            "Type mismatch between value (int64) and dtype (float)",
            "node 'c'",
        ],
    );
}

#[test]
fn outputs_are_found_by_tensor_name() {
    common::link();
    let b = GraphBuilder::new();
    let a = b.placeholder("a", DType::I32, "[2]").unwrap();
    let f = b.placeholder("f", DType::F32, "?").unwrap();
    let same = IdentityN::call_with([a, f]).run_on(&b).unwrap();
    let g = b.into_graph();
    assert_eq!(g.find_output("IdentityN:1").unwrap(), same[1]);
    assert_eq!(g.find_output("a:0").unwrap(), a);
    assert_eq!(g.find_output("a").unwrap(), a);
    let err = g.find_output("IdentityN:2").unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = g.find_output("Identity:0").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_contains(
        &err,
        &["no node named 'Identity'", "did you mean 'IdentityN'?"],
    );
    assert_eq!(
        g.tensor_name(same[1]),
        TensorName {
            node: "IdentityN".into(),
            index: 1
        }
    );
}
