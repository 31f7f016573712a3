//! The GraphDef importer on malformed programs: every problem is a typed
//! error that names the node and the field, never a panic; and on what
//! TensorFlow's writers differ in (order, defaults, internal attrs).

use std::sync::Arc;

use op_core::{Code, DType, Error, Registry};
use op_graph::graphdef::proto::{self, attr_value::Value};
use op_graph::graphdef::{self, import};

fn attr(value: Value) -> proto::AttrValue {
    proto::AttrValue { value: Some(value) }
}

fn node(name: &str, op: &str, inputs: &[&str], attrs: &[(&str, Value)]) -> proto::NodeDef {
    proto::NodeDef {
        name: name.into(),
        op: op.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        device: String::new(),
        attr: attrs
            .iter()
            .map(|(k, v)| (k.to_string(), attr(v.clone())))
            .collect(),
    }
}

fn placeholder(name: &str) -> proto::NodeDef {
    node(
        name,
        "Placeholder",
        &[],
        &[("dtype", Value::Type(DType::F32.enum_value()))],
    )
}

fn identity(name: &str, input: &str) -> proto::NodeDef {
    node(
        name,
        "Identity",
        &[input],
        &[("T", Value::Type(DType::F32.enum_value()))],
    )
}

fn graph(nodes: Vec<proto::NodeDef>) -> proto::GraphDef {
    proto::GraphDef {
        node: nodes,
        versions: None,
        version: 0,
    }
}

fn import_error(nodes: Vec<proto::NodeDef>) -> Error {
    op_kernels::link();
    import(&graph(nodes), Registry::global()).unwrap_err()
}

#[test]
fn nodes_in_any_order_are_imported_inputs_first() {
    op_kernels::link();
    let def = graph(vec![
        identity("b", "a:0"),
        identity("a", "x"),
        placeholder("x"),
    ]);
    let g = import(&def, Registry::global()).unwrap();
    let names: Vec<&str> = g.nodes().iter().map(|n| n.name()).collect();
    assert_eq!(names, ["x", "a", "b"]);
}

#[test]
fn defaults_are_filled_and_internal_attrs_kept() {
    op_kernels::link();
    let mut x = placeholder("x");
    x.attr.insert(
        "_class".into(),
        attr(Value::List(Box::new(proto::attr_value::ListValue {
            s: vec![b"loc:@x".to_vec()],
            ..Default::default()
        }))),
    );
    let g = import(&graph(vec![x]), Registry::global()).unwrap();
    let node = g.node_by_name("x").unwrap();
    // `shape` defaults to an unknown shape; `_class` is kept as written.
    assert!(node.attr("shape").is_some());
    assert_eq!(node.internal_attrs().len(), 1);
    let back = graphdef::export(&g);
    assert!(back.node[0].attr.contains_key("_class"));
    assert!(back.node[0].attr.contains_key("shape"));
}

#[test]
fn every_unknown_op_is_listed_in_one_error() {
    let e = import_error(vec![
        placeholder("x"),
        node("a", "Frobnicate", &["x"], &[]),
        node("b", "Frobnicate", &["a"], &[]),
        node("c", "Zap", &[], &[]),
        node("d", "Idenity", &["x"], &[]),
    ]);
    assert_eq!(e.code(), Code::NotFound);
    assert_eq!(
        e.message(),
        "the GraphDef uses 3 op(s) that are not registered:\n\
         \x20 'Frobnicate' (nodes 'a', 'b')\n\
         \x20 'Idenity' (node 'd'): did you mean 'Identity'?\n\
         \x20 'Zap' (node 'c')\n\
         if another crate defines them, link it: call its `link()` once, or write \
         `use that_crate as _;`"
    );
}

#[test]
fn a_missing_framework_op_says_op_kernels_is_not_linked() {
    // A registry without op-kernels, as a program that does not link it.
    let registry = Arc::new(Registry::new(Vec::new(), Vec::new()));
    let def = graph(vec![placeholder("x"), node("y", "Identty", &["x"], &[])]);
    let e = import(&def, &registry).unwrap_err();
    assert_eq!(
        e.message(),
        "the GraphDef uses 2 op(s) that are not registered:\n\
         \x20 'Identty' (node 'y'): did you mean 'Identity'? (it ships in op-kernels)\n\
         \x20 'Placeholder' (node 'x'): it ships in op-kernels\n\
         op-kernels is not linked: add op-kernels to [dependencies] and call \
         `op_kernels::link()` once, in `main` or in each test file (or write \
         `use op_kernels as _;`)"
    );
}

#[test]
fn ten_thousand_unknown_ops_make_a_short_message() {
    let nodes: Vec<proto::NodeDef> = (0..10_000)
        .map(|i| node(&format!("n{i}"), &format!("Unknown{i}"), &[], &[]))
        .chain((0..10_000).map(|i| node(&format!("m{i}"), "Frobnicate", &[], &[])))
        .collect();
    let e = import_error(nodes);
    let message = e.to_string();
    assert!(message.len() < 2_000, "{} bytes:\n{message}", message.len());
    assert!(
        message.starts_with(
            "NotFound: the GraphDef uses 10,001 op(s) that are not registered:\n\
             \x20 'Frobnicate' (nodes 'm0', 'm1', 'm2' and 9,997 more (10,000 in all))\n\
             \x20 'Unknown0' (node 'n0')\n"
        ),
        "{message}"
    );
    assert!(
        message.contains("\n  and 9,993 more op(s) (10,001 in all)\n"),
        "{message}"
    );
}

#[test]
fn an_input_naming_a_missing_node_or_output_is_an_error() {
    let e = import_error(vec![identity("a", "nowhere:0")]);
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(
        e.message(),
        "node 'a' input 0 names node 'nowhere', which is not in the GraphDef"
    );
    let e = import_error(vec![placeholder("x"), identity("a", "x:3")]);
    assert!(
        e.to_string()
            .contains("input 0 ('x:3') names output 3 of node 'x', which has 1 output(s)"),
        "{e}"
    );
    assert!(e.to_string().contains("node 'a'"), "{e}");
    let e = import_error(vec![placeholder("x"), identity("a", "x:one")]);
    assert!(e.to_string().contains("node 'a' input 0"), "{e}");
}

#[test]
fn duplicate_and_empty_names_are_errors() {
    let e = import_error(vec![placeholder("x"), placeholder("x")]);
    assert_eq!(
        e.message(),
        "nodes 0 and 1 of the GraphDef are both named 'x'; node names are unique"
    );
    let e = import_error(vec![placeholder("")]);
    assert_eq!(
        e.message(),
        "node 0 of the GraphDef (op 'Placeholder') has no name"
    );
}

#[test]
fn a_cycle_is_an_error_naming_its_nodes() {
    let e = import_error(vec![
        identity("a", "b"),
        identity("b", "a"),
        placeholder("x"),
    ]);
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(
        e.message(),
        "the GraphDef has a cycle: 2 node(s) wait on each other: 'a', 'b'"
    );
    let e = import_error(vec![node("n", "NoOp", &["^n"], &[])]);
    assert!(e.message().contains("cycle"), "{e}");
    // A long one is named in part.
    let ring: Vec<proto::NodeDef> = (0..10_000)
        .map(|i| identity(&format!("r{i}"), &format!("r{}", (i + 1) % 10_000)))
        .collect();
    assert_eq!(
        import_error(ring).message(),
        "the GraphDef has a cycle: 10,000 node(s) wait on each other: 'r0', 'r1', 'r2', 'r3', \
         'r4', 'r5', 'r6', 'r7' and 9,992 more (10,000 in all)"
    );
}

#[test]
fn a_control_input_before_a_data_input_is_an_error() {
    let e = import_error(vec![placeholder("x"), identity("a", "^x"), {
        let mut b = identity("b", "x");
        b.input.insert(0, "^a".into());
        b
    }]);
    assert!(e.message().contains("follows a control input"), "{e}");
}

#[test]
fn attrs_of_the_wrong_type_or_missing_are_errors_naming_the_node_and_attr() {
    let e = import_error(vec![node(
        "x",
        "Placeholder",
        &[],
        &[("dtype", Value::I(3))],
    )]);
    let text = e.to_string();
    assert!(text.contains("'x'") && text.contains("dtype"), "{text}");

    let e = import_error(vec![node("x", "Placeholder", &[], &[])]);
    let text = e.to_string();
    assert!(text.contains("'x'") && text.contains("dtype"), "{text}");

    let e = import_error(vec![node(
        "x",
        "Placeholder",
        &[],
        &[("dtype", Value::Type(99))],
    )]);
    assert_eq!(e.message(), "unknown DataType 99");
    assert!(e.to_string().contains("attr 'dtype'"), "{e}");
    assert!(e.to_string().contains("importing node 'x'"), "{e}");

    let e = import_error(vec![node(
        "x",
        "Placeholder",
        &[],
        &[("dtype", Value::Type(101))],
    )]);
    assert_eq!(e.code(), Code::Unimplemented);
    assert!(e.message().contains("DT_FLOAT_REF"), "{e}");
}

#[test]
fn attrs_without_defaults_are_required_not_inferred_from_the_inputs() {
    // The graph builder infers `T` from the inputs; a GraphDef must give
    // it, as TensorFlow's importer requires.
    let e = import_error(vec![
        placeholder("x"),
        node("sum", "AddV2", &["x", "x"], &[]),
    ]);
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "InvalidArgument: NodeDef missing attr 'T' of op AddV2: it is declared `T: {bfloat16, \
         half, float, double, uint8, uint16, uint32, uint64, int8, int16, int32, int64, \
         complex64, complex128}`, with no default, so a NodeDef must give it (a GraphDef's \
         attrs are not inferred from its inputs)\n\timporting node 'sum'"
    );
    // A count attr and a list of types alike.
    let float = || Value::Type(DType::F32.enum_value());
    let e = import_error(vec![
        placeholder("x"),
        node("n", "AddN", &["x", "x"], &[("T", float())]),
    ]);
    assert!(
        e.message()
            .starts_with("NodeDef missing attr 'N' of op AddN"),
        "{e}"
    );
    let e = import_error(vec![placeholder("x"), node("i", "IdentityN", &["x"], &[])]);
    assert!(
        e.message()
            .starts_with("NodeDef missing attr 'T' of op IdentityN"),
        "{e}"
    );
    // Given, they are checked against the inputs.
    let e = import_error(vec![
        placeholder("x"),
        node(
            "sum",
            "AddV2",
            &["x", "x"],
            &[("T", Value::Type(DType::I32.enum_value()))],
        ),
    ]);
    assert!(e.to_string().contains("node 'sum'"), "{e}");
}

#[test]
fn attrs_the_op_does_not_declare_are_kept_and_written_back() {
    op_kernels::link();
    // TensorFlow's importer keeps them (a newer producer may write attrs
    // this op does not have yet) and the op ignores them.
    let def = graph(vec![node(
        "x",
        "Placeholder",
        &[],
        &[
            ("dtype", Value::Type(1)),
            ("colour", Value::I(1)),
            // An attr written without a value takes its default ...
            ("shape", Value::I(0)),
        ],
    )]);
    let mut def = def;
    def.node[0].attr.get_mut("shape").unwrap().value = None;
    // ... and an undeclared one without a value is dropped.
    def.node[0]
        .attr
        .insert("no_value".into(), proto::AttrValue { value: None });
    let g = import(&def, Registry::global()).unwrap();
    let x = g.node_by_name("x").unwrap();
    assert_eq!(x.attr("colour"), Some(&op_core::AttrValue::Int(1)));
    assert_eq!(
        x.attr("shape"),
        Some(&op_core::AttrValue::Shape(
            op_core::ShapeValue::unknown_rank()
        ))
    );
    assert_eq!(x.internal_attrs().len(), 1);
    let back = graphdef::export(&g);
    assert!(back.node[0].attr.contains_key("colour"));
    assert!(!back.node[0].attr.contains_key("no_value"));
}

#[test]
fn shapes_an_op_rejects_are_errors_at_import() {
    op_kernels::link();
    let shaped = |name: &str, dims: &[i64]| {
        node(
            name,
            "Placeholder",
            &[],
            &[
                ("dtype", Value::Type(DType::F32.enum_value())),
                (
                    "shape",
                    Value::Shape(Box::new(graphdef::convert::shape_to_proto(
                        &op_core::ShapeValue::from_sizes(dims),
                    ))),
                ),
            ],
        )
    };
    let e = import(
        &graph(vec![
            shaped("a", &[-1, 3]),
            shaped("b", &[4, 5]),
            node("m", "MatMul", &["a", "b"], &[("T", Value::Type(1))]),
        ]),
        Registry::global(),
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("'m'") && text.contains("[?,3]") && text.contains("[4,5]"),
        "{text}"
    );
}

#[test]
fn malformed_bytes_never_panic() {
    op_kernels::link();
    let x = graphdef::to_bytes(
        &import(
            &graph(vec![placeholder("x"), identity("a", "x")]),
            Registry::global(),
        )
        .unwrap(),
    );
    for len in 0..x.len() {
        let _ = graphdef::from_bytes(&x[..len]);
    }
    for i in 0..x.len() {
        let mut bytes = x.clone();
        bytes[i] ^= 0xA5;
        let _ = graphdef::from_bytes(&bytes);
    }
}

#[test]
fn files_that_are_not_regular_files_are_refused_at_once() {
    op_kernels::link();
    let dir = tempfile::tempdir().unwrap();
    for name in ["graph.pb", "graph.pbtxt"] {
        let path = dir.path().join(name);
        let at = path.clone();
        op_core::testing::files::assert_refuses_non_regular_files(&path, move || {
            graphdef::read(&at, Registry::global()).map(drop)
        });
    }
}
