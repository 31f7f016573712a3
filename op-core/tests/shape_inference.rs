//! Shape inference, against TensorFlow's `InferenceContext` semantics:
//! `PartialShape` text and compatibility, every `InferenceContext`
//! operation on known, partially known and unknown-rank shapes (values,
//! handle identity and error messages), the library of common shape
//! functions in the `ShapeTest` notation, `Registry::infer_shapes` over
//! hand-registered ops (with and without a shape function, with constant
//! input values), and the runtime's check of kernel outputs against the
//! shape function.

use std::sync::{Arc, LazyLock};

use op_core::registry::{KernelRegistration, OpRegistration, Registry};
use op_core::shape_inference::testing::ShapeTest;
use op_core::shape_inference::{DimOrValue, InferenceContext, PartialShape, infer, library};
use op_core::{
    AttrValue, Code, DType, Error, FnKernel, InputTypes, KernelContext, OpCall, OpDef,
    OpDefBuilder, OpInstanceBuilder, Result, Runtime, Tensor,
};
use proptest::prelude::*;

mod common;
use common::{assert_contains, assert_panicked_at};

#[track_caller]
fn shape(text: &str) -> PartialShape {
    text.parse()
        .unwrap_or_else(|e| panic!("cannot parse {text:?}: {e}"))
}

// ---------------------------------------------------------------------------
// PartialShape

#[test]
fn partial_shape_parses_and_displays() {
    type Dims = Option<Vec<Option<usize>>>;
    let cases: &[(&str, Dims, &str)] = &[
        ("?", None, "?"),
        (" ? ", None, "?"),
        ("[]", Some(vec![]), "[]"),
        ("[ ]", Some(vec![]), "[]"),
        ("[0]", Some(vec![Some(0)]), "[0]"),
        ("[?]", Some(vec![None]), "[?]"),
        ("[2,?,3]", Some(vec![Some(2), None, Some(3)]), "[2,?,3]"),
        (
            " [ 2 , ? , 3 ] ",
            Some(vec![Some(2), None, Some(3)]),
            "[2,?,3]",
        ),
        ("[-1,4]", Some(vec![None, Some(4)]), "[?,4]"),
        ("[-1]", Some(vec![None]), "[?]"),
    ];
    for (text, value, shown) in cases {
        let parsed = shape(text);
        assert_eq!(parsed.0, *value, "parsing {text:?}");
        assert_eq!(parsed.to_string(), *shown, "displaying {text:?}");
        assert_eq!(shape(shown), parsed, "round trip of {text:?}");
    }
}

#[test]
fn partial_shape_rejects_bad_text() {
    for text in [
        "", "??", "2", "[", "]", "[2,3", "2,3]", "(2,3)", "[2,,3]", "[2,]", "[,2]", "[a]", "[-2]",
        "[1.5]", "[2;3]", "[[2]]", "[?3]",
    ] {
        let error = text
            .parse::<PartialShape>()
            .expect_err(&format!("{text:?} should not parse"));
        assert_eq!(error.code(), Code::InvalidArgument, "{text:?}");
        assert!(
            error.message().contains("cannot parse shape"),
            "{text:?}: {error}"
        );
    }
    // The element at fault is named.
    let error = "[2,x]".parse::<PartialShape>().unwrap_err();
    assert_contains(&error, &["\"x\" is not a size or ?"]);
}

#[test]
fn partial_shape_constructors() {
    assert_eq!(PartialShape::unknown(), shape("?"));
    assert_eq!(PartialShape::default(), PartialShape::unknown());
    assert_eq!(PartialShape::known(&[]), shape("[]"));
    assert_eq!(PartialShape::known(&[2, 0, 3]), shape("[2,0,3]"));
    assert_eq!(PartialShape::unknown().rank(), None);
    assert_eq!(shape("[]").rank(), Some(0));
    assert_eq!(shape("[?,?,3]").rank(), Some(3));
}

#[test]
fn partial_shape_compatibility() {
    let cases: &[(&str, &[usize], bool)] = &[
        ("?", &[], true),
        ("?", &[2, 3, 4], true),
        ("[]", &[], true),
        ("[]", &[1], false),
        ("[2,3]", &[2, 3], true),
        ("[2,3]", &[3, 2], false),
        ("[2,3]", &[2], false),
        ("[2,3]", &[2, 3, 1], false),
        ("[?,3]", &[7, 3], true),
        ("[?,3]", &[7, 4], false),
        ("[?,?]", &[0, 0], true),
        ("[?]", &[], false),
        ("[0]", &[0], true),
        ("[1]", &[0], false),
    ];
    for (text, dims, expected) in cases {
        assert_eq!(
            shape(text).is_compatible_with(dims),
            *expected,
            "{text} with {dims:?}"
        );
    }
}

fn partial_shapes() -> impl Strategy<Value = PartialShape> {
    proptest::option::of(proptest::collection::vec(
        proptest::option::of(0usize..1_000_000),
        0..6,
    ))
    .prop_map(PartialShape)
}

proptest! {
    #[test]
    fn partial_shape_round_trips(s in partial_shapes()) {
        let text = s.to_string();
        prop_assert_eq!(text.parse::<PartialShape>()?, s.clone());
        // With spaces around every element, and -1 for unknown sizes.
        let spaced = match &s.0 {
            None => " ? ".to_owned(),
            Some(dims) => {
                let dims: Vec<String> = dims
                    .iter()
                    .map(|d| d.map_or(" -1 ".to_owned(), |d| format!(" {d} ")))
                    .collect();
                format!(" [{}] ", dims.join(","))
            }
        };
        prop_assert_eq!(spaced.parse::<PartialShape>()?, s);
    }

    #[test]
    fn known_shapes_are_compatible_with_their_dims(
        dims in proptest::collection::vec(0usize..100, 0..5),
        extra in 0usize..100,
    ) {
        let s = PartialShape::known(&dims);
        prop_assert!(s.is_compatible_with(&dims));
        prop_assert!(PartialShape::unknown().is_compatible_with(&dims));
        let mut longer = dims.clone();
        longer.push(extra);
        prop_assert!(!s.is_compatible_with(&longer));
        // Forgetting any dimension keeps it compatible.
        for i in 0..dims.len() {
            let mut partial = s.clone();
            partial.0.as_mut().unwrap()[i] = None;
            prop_assert!(partial.is_compatible_with(&dims));
        }
    }
}

// ---------------------------------------------------------------------------
// InferenceContext, directly: an op `Probe` with single float inputs named
// a, b, c, ... (one per shape) and one output, node 'probe_node'.

const NAMES: [&str; 4] = ["a", "b", "c", "d"];

fn with_context<R>(shapes: &[&str], f: impl FnOnce(&mut InferenceContext<'_>) -> R) -> R {
    let mut builder = OpDefBuilder::new("Probe")
        .attr("flag: int = 7")
        .output("y: float");
    for name in &NAMES[..shapes.len()] {
        builder = builder.input(format!("{name}: float"));
    }
    let op = builder.build().unwrap();
    let mut node = OpInstanceBuilder::new(&op).name("probe_node");
    for _ in shapes {
        node = node.input(DType::F32);
    }
    let node = node.build().unwrap();
    let shapes: Vec<PartialShape> = shapes.iter().map(|s| shape(s)).collect();
    let mut c = InferenceContext::new(&op, &node, &shapes, &[]).unwrap();
    f(&mut c)
}

/// The error's message, which must start with the op and node.
#[track_caller]
fn message<T: std::fmt::Debug>(result: Result<T>) -> String {
    let error = result.expect_err("expected an error");
    assert_eq!(error.code(), Code::InvalidArgument, "{error}");
    let message = error.message();
    let prefix = "op Probe (node 'probe_node'): ";
    assert!(
        message.starts_with(prefix),
        "expected {prefix:?} at the start of {message:?}"
    );
    message[prefix.len()..].to_owned()
}

#[test]
fn context_basics() {
    with_context(&["[2,3]", "[?,3]", "?"], |c| {
        assert_eq!(c.num_inputs(), 3);
        assert_eq!(c.num_outputs(), 1);
        assert_eq!(c.op_def().name, "Probe");
        assert_eq!(c.get_attr::<i64>("flag").unwrap(), 7);
        assert!(c.get_attr::<i64>("missing").is_err());

        let (a, b, u) = (
            c.input(0).unwrap(),
            c.input(1).unwrap(),
            c.input(2).unwrap(),
        );
        // The same handle every time.
        assert_eq!(c.input(0).unwrap(), a);
        assert_ne!(a, b);
        assert_eq!(c.rank(a), Some(2));
        assert_eq!(c.rank(b), Some(2));
        assert_eq!(c.rank(u), None);
        assert!(c.fully_defined(a));
        assert!(!c.fully_defined(b));
        assert!(!c.fully_defined(u));
        assert_eq!(c.shape_string(a), "[2,3]");
        assert_eq!(c.shape_string(b), "[?,3]");
        assert_eq!(c.shape_string(u), "?");
        assert_eq!(c.partial_shape(b), shape("[?,3]"));
        assert_eq!(c.input_tensor(0), None);
        assert_eq!(c.input_tensor(9), None);

        assert_eq!(
            message(c.input(3)),
            "asked for input 3, but the op has 3 input tensor(s)"
        );
    });
    with_context(&["[]"], |c| {
        let s = c.input(0).unwrap();
        assert!(c.fully_defined(s));
        assert_eq!(c.rank(s), Some(0));
    });
}

#[test]
fn context_rejects_a_wrong_number_of_input_shapes() {
    let op = OpDefBuilder::new("Probe")
        .input("a: float")
        .input("b: float")
        .output("y: float")
        .build()
        .unwrap();
    let node = OpInstanceBuilder::new(&op)
        .name("probe_node")
        .input(DType::F32)
        .input(DType::F32)
        .build()
        .unwrap();
    let error = InferenceContext::new(&op, &node, &[shape("[2]")], &[])
        .err()
        .unwrap();
    assert_eq!(
        error.message(),
        "op Probe (node 'probe_node'): shape inference got 1 input shape(s) for 2 input tensor(s)"
    );
}

#[test]
fn outputs() {
    with_context(&["[2]"], |c| {
        assert_eq!(c.output(0), None);
        // Unset outputs are unknown.
        assert_eq!(c.output_shapes(), [PartialShape::unknown()]);
        let a = c.input(0).unwrap();
        c.set_output(0, a).unwrap();
        assert_eq!(c.output(0), Some(a));
        assert_eq!(c.output_shapes(), [shape("[2]")]);
        // Setting again replaces.
        let s = c.scalar();
        c.set_output(0, s).unwrap();
        assert_eq!(c.output(0), Some(s));
        assert_eq!(c.output_shapes(), [shape("[]")]);
        assert_eq!(c.output(1), None);
        assert_eq!(
            message(c.set_output(1, s)),
            "set the shape of output 1, but the op has 1 output tensor(s)"
        );
    });
}

#[test]
fn dim_on_known_and_partial_shapes() {
    with_context(&["[2,?,3]"], |c| {
        let s = c.input(0).unwrap();
        let d0 = c.dim(s, 0).unwrap();
        let d1 = c.dim(s, 1).unwrap();
        let d2 = c.dim(s, 2).unwrap();
        assert_eq!(c.value(d0), Some(2));
        assert_eq!(c.value(d1), None);
        assert_eq!(c.value(d2), Some(3));
        // A dimension is the shape's own, every time, by either index.
        assert_eq!(c.dim(s, 1).unwrap(), d1);
        assert_eq!(c.dim(s, -1).unwrap(), d2);
        assert_eq!(c.dim(s, -2).unwrap(), d1);
        assert_eq!(c.dim(s, -3).unwrap(), d0);
        assert_ne!(d0, d2);

        assert_eq!(
            message(c.dim(s, 3)),
            "input 0 ('a') has shape [2,?,3], which has no dimension 3"
        );
        assert_eq!(
            message(c.dim(s, -4)),
            "input 0 ('a') has shape [2,?,3], which has no dimension -4"
        );
        // A shape that is no input's is shown without a name.
        let t = c.make_shape([5usize]);
        assert_eq!(message(c.dim(t, 1)), "shape [5], which has no dimension 1");
    });
    with_context(&["[]"], |c| {
        let s = c.input(0).unwrap();
        assert!(c.dim(s, 0).is_err());
        assert!(c.dim(s, -1).is_err());
    });
}

#[test]
fn dim_on_unknown_rank_is_a_new_unknown_dimension() {
    with_context(&["?"], |c| {
        let s = c.input(0).unwrap();
        let x = c.dim(s, 0).unwrap();
        let y = c.dim(s, 0).unwrap();
        let z = c.dim(s, -5).unwrap();
        assert_eq!(c.value(x), None);
        assert_eq!(c.value(z), None);
        // Nothing ties them: two unknown dimensions, not one.
        assert_ne!(x, y);
        assert_ne!(x, z);
    });
}

#[test]
fn constructors() {
    with_context(&["[2,?]"], |c| {
        let s = c.input(0).unwrap();
        let (d0, d1) = (c.dim(s, 0).unwrap(), c.dim(s, 1).unwrap());

        let k = c.make_dim(Some(4));
        assert_eq!(c.value(k), Some(4));
        let u = c.unknown_dim();
        assert_eq!(c.value(u), None);
        assert_ne!(u, c.unknown_dim());
        let n = c.make_dim(None);
        assert_eq!(c.value(n), None);

        let scalar = c.scalar();
        assert_eq!(c.shape_string(scalar), "[]");
        assert!(c.fully_defined(scalar));
        assert_ne!(scalar, c.scalar());

        let v = c.vector(d1);
        assert_eq!(c.shape_string(v), "[?]");
        assert_eq!(c.dim(v, 0).unwrap(), d1);
        let v = c.vector(5usize);
        assert_eq!(c.shape_string(v), "[5]");

        let m = c.matrix(d1, d0);
        assert_eq!(c.shape_string(m), "[?,2]");
        assert_eq!(c.dim(m, 0).unwrap(), d1);
        assert_eq!(c.dim(m, 1).unwrap(), d0);
        let m = c.matrix(3usize, d0);
        assert_eq!(c.shape_string(m), "[3,2]");
        assert_eq!(c.dim(m, 1).unwrap(), d0);

        let mixed = c.make_shape([
            DimOrValue::Dim(d0),
            DimOrValue::Value(None),
            DimOrValue::Value(Some(7)),
        ]);
        assert_eq!(c.shape_string(mixed), "[2,?,7]");
        assert_eq!(c.dim(mixed, 0).unwrap(), d0);
        let empty = c.make_shape(Vec::<usize>::new());
        assert_eq!(c.shape_string(empty), "[]");

        let unknown = c.unknown_shape();
        assert_eq!(c.rank(unknown), None);
        assert_eq!(c.shape_string(unknown), "?");
        assert_ne!(unknown, c.unknown_shape());

        let r3 = c.unknown_shape_of_rank(3);
        assert_eq!(c.shape_string(r3), "[?,?,?]");
        let dims: Vec<_> = (0..3).map(|i| c.dim(r3, i).unwrap()).collect();
        assert_ne!(dims[0], dims[1]);
        assert_ne!(dims[1], dims[2]);
        let r0 = c.unknown_shape_of_rank(0);
        assert_eq!(c.shape_string(r0), "[]");
    });
}

#[test]
fn with_rank() {
    with_context(&["[2,3]", "[?,?]", "?", "[]"], |c| {
        let (a, b, u, s) = (
            c.input(0).unwrap(),
            c.input(1).unwrap(),
            c.input(2).unwrap(),
            c.input(3).unwrap(),
        );
        // A known rank that fits: the shape itself.
        assert_eq!(c.with_rank(a, 2).unwrap(), a);
        assert_eq!(c.with_rank(b, 2).unwrap(), b);
        assert_eq!(c.with_rank(s, 0).unwrap(), s);
        // Unknown rank: a new shape of that rank, every dimension a new unknown.
        let r = c.with_rank(u, 2).unwrap();
        assert_ne!(r, u);
        assert_eq!(c.shape_string(r), "[?,?]");
        let (r0, r1) = (c.dim(r, 0).unwrap(), c.dim(r, 1).unwrap());
        assert_ne!(r0, r1);
        let again = c.with_rank(u, 2).unwrap();
        assert_ne!(c.dim(again, 0).unwrap(), r0);
        let r0 = c.with_rank(u, 0).unwrap();
        assert_eq!(c.shape_string(r0), "[]");

        assert_eq!(
            message(c.with_rank(a, 3)),
            "input 0 ('a') has shape [2,3], which must be rank 3 but is rank 2"
        );
        assert_eq!(
            message(c.with_rank(b, 1)),
            "input 1 ('b') has shape [?,?], which must be rank 1 but is rank 2"
        );
        assert_eq!(
            message(c.with_rank(s, 1)),
            "input 3 ('d') has shape [], which must be rank 1 but is rank 0"
        );
        let t = c.make_shape([1usize]);
        assert_eq!(
            message(c.with_rank(t, 2)),
            "shape [1], which must be rank 2 but is rank 1"
        );
    });
}

#[test]
fn with_rank_at_least_and_at_most() {
    with_context(&["[2,?]", "?"], |c| {
        let (a, u) = (c.input(0).unwrap(), c.input(1).unwrap());
        for r in 0..=2 {
            assert_eq!(c.with_rank_at_least(a, r).unwrap(), a);
        }
        for r in 2..=4 {
            assert_eq!(c.with_rank_at_most(a, r).unwrap(), a);
        }
        // Unknown rank passes through as itself.
        assert_eq!(c.with_rank_at_least(u, 5).unwrap(), u);
        assert_eq!(c.with_rank_at_most(u, 0).unwrap(), u);

        assert_eq!(
            message(c.with_rank_at_least(a, 3)),
            "input 0 ('a') has shape [2,?], which must be at least rank 3 but is rank 2"
        );
        assert_eq!(
            message(c.with_rank_at_most(a, 1)),
            "input 0 ('a') has shape [2,?], which must be at most rank 1 but is rank 2"
        );
    });
}

#[test]
fn with_value() {
    with_context(&["[3,?]"], |c| {
        let s = c.input(0).unwrap();
        let (known, unknown) = (c.dim(s, 0).unwrap(), c.dim(s, 1).unwrap());
        assert_eq!(c.with_value(known, 3).unwrap(), known);
        let learned = c.with_value(unknown, 5).unwrap();
        assert_eq!(c.value(learned), Some(5));
        // The input's dimension itself stays unknown.
        assert_eq!(c.value(unknown), None);
        assert_eq!(
            message(c.with_value(known, 4)),
            "dimension must be 4 but is 3"
        );
        let zero = c.make_dim(Some(0));
        assert_eq!(c.with_value(zero, 0).unwrap(), zero);
    });
}

#[test]
fn merge_dim() {
    with_context(&[], |c| {
        let (two, other_two, three) = (
            c.make_dim(Some(2)),
            c.make_dim(Some(2)),
            c.make_dim(Some(3)),
        );
        let (u, v) = (c.unknown_dim(), c.unknown_dim());
        assert_eq!(c.merge_dim(two, two).unwrap(), two);
        assert_eq!(c.merge_dim(two, other_two).unwrap(), two);
        assert_eq!(c.merge_dim(other_two, two).unwrap(), other_two);
        assert_eq!(c.merge_dim(two, u).unwrap(), two);
        assert_eq!(c.merge_dim(u, two).unwrap(), two);
        assert_eq!(c.merge_dim(u, v).unwrap(), u);
        assert_eq!(c.merge_dim(v, u).unwrap(), v);
        assert_eq!(
            message(c.merge_dim(two, three)),
            "dimensions must be equal, but are 2 and 3"
        );
        assert_eq!(
            message(c.merge_dim(three, two)),
            "dimensions must be equal, but are 3 and 2"
        );
    });
}

#[test]
fn merge_returns_an_input_when_it_is_as_specific() {
    // Same values: the first.
    with_context(&["[2,3]", "[2,3]"], |c| {
        let (a, b) = (c.input(0).unwrap(), c.input(1).unwrap());
        assert_eq!(c.merge(a, b).unwrap(), a);
        assert_eq!(c.merge(b, a).unwrap(), b);
        assert_eq!(c.merge(a, a).unwrap(), a);
    });
    // One more specific than the other: that one, either way round.
    with_context(&["[2,?]", "[2,3]"], |c| {
        let (a, b) = (c.input(0).unwrap(), c.input(1).unwrap());
        assert_eq!(c.merge(a, b).unwrap(), b);
        assert_eq!(c.merge(b, a).unwrap(), b);
    });
    // Both unknown in the same places: the first.
    with_context(&["[?,4]", "[?,4]"], |c| {
        let (a, b) = (c.input(0).unwrap(), c.input(1).unwrap());
        assert_eq!(c.merge(a, b).unwrap(), a);
        assert_eq!(c.merge(b, a).unwrap(), b);
    });
    // Unknown rank: the other; both unknown: the first.
    with_context(&["?", "[?,2]", "?"], |c| {
        let (u, k, w) = (
            c.input(0).unwrap(),
            c.input(1).unwrap(),
            c.input(2).unwrap(),
        );
        assert_eq!(c.merge(u, k).unwrap(), k);
        assert_eq!(c.merge(k, u).unwrap(), k);
        assert_eq!(c.merge(u, w).unwrap(), u);
        assert_eq!(c.merge(w, u).unwrap(), w);
    });
    with_context(&["[]", "?"], |c| {
        let (s, u) = (c.input(0).unwrap(), c.input(1).unwrap());
        assert_eq!(c.merge(s, u).unwrap(), s);
        assert_eq!(c.merge(u, s).unwrap(), s);
        assert_eq!(c.merge(s, s).unwrap(), s);
    });
}

#[test]
fn merge_combines_what_each_knows() {
    with_context(&["[2,?,?]", "[?,3,?]"], |c| {
        let (a, b) = (c.input(0).unwrap(), c.input(1).unwrap());
        let m = c.merge(a, b).unwrap();
        assert_ne!(m, a);
        assert_ne!(m, b);
        assert_eq!(c.shape_string(m), "[2,3,?]");
        // Its dimensions are the inputs' own: the known one, else the first's.
        assert_eq!(c.dim(m, 0).unwrap(), c.dim(a, 0).unwrap());
        assert_eq!(c.dim(m, 1).unwrap(), c.dim(b, 1).unwrap());
        assert_eq!(c.dim(m, 2).unwrap(), c.dim(a, 2).unwrap());
        // Merging in the result learns nothing more.
        assert_eq!(c.merge(m, a).unwrap(), m);
        assert_eq!(c.merge(b, m).unwrap(), m);
    });
}

#[test]
fn merge_errors_name_both_shapes() {
    with_context(&["[2]", "[3]"], |c| {
        let (a, b) = (c.input(0).unwrap(), c.input(1).unwrap());
        let error = c.merge(a, b).unwrap_err();
        assert_eq!(
            error.message(),
            "op Probe (node 'probe_node'): dimension 0 in both shapes must be equal, \
             but input 0 ('a') has shape [2] and input 1 ('b') has shape [3]"
        );
        assert_eq!(error.code(), Code::InvalidArgument);
    });
    with_context(&["[?,2,5]", "[4,?,6]"], |c| {
        let (a, b) = (c.input(0).unwrap(), c.input(1).unwrap());
        assert_eq!(
            message(c.merge(b, a)),
            "dimension 2 in both shapes must be equal, \
             but input 1 ('b') has shape [4,?,6] and input 0 ('a') has shape [?,2,5]"
        );
    });
    with_context(&["[2]", "[2,3]"], |c| {
        let (a, b) = (c.input(0).unwrap(), c.input(1).unwrap());
        assert_eq!(
            message(c.merge(a, b)),
            "shapes must be equal rank, \
             but input 0 ('a') has shape [2] and input 1 ('b') has shape [2,3]"
        );
        // Shapes made by the function are shown without a name.
        let t = c.make_shape([7usize]);
        assert_eq!(
            message(c.merge(t, a)),
            "dimension 0 in both shapes must be equal, \
             but shape [7] and input 0 ('a') has shape [2]"
        );
        let s = c.scalar();
        assert_eq!(
            message(c.merge(b, s)),
            "shapes must be equal rank, but input 1 ('b') has shape [2,3] and shape []"
        );
    });
}

#[test]
fn add() {
    with_context(&["[2,0,?]"], |c| {
        let s = c.input(0).unwrap();
        let (two, zero, u) = (
            c.dim(s, 0).unwrap(),
            c.dim(s, 1).unwrap(),
            c.dim(s, 2).unwrap(),
        );
        let five = c.add(two, 3usize).unwrap();
        assert_eq!(c.value(five), Some(5));
        let seven = c.add(two, five).unwrap();
        assert_eq!(c.value(seven), Some(7));
        // Unknown stays unknown, and is a new dimension.
        let x = c.add(u, 1usize).unwrap();
        assert_eq!(c.value(x), None);
        assert_ne!(x, u);
        let x = c.add(two, u).unwrap();
        assert_eq!(c.value(x), None);
        let x = c.add(two, DimOrValue::Value(None)).unwrap();
        assert_eq!(c.value(x), None);
        // Adding 0 is the dimension itself, either side, known or not.
        assert_eq!(c.add(u, 0usize).unwrap(), u);
        assert_eq!(c.add(two, 0usize).unwrap(), two);
        assert_eq!(c.add(u, zero).unwrap(), u);
        assert_eq!(c.add(zero, u).unwrap(), u);
        assert_eq!(c.add(zero, two).unwrap(), two);
        assert_eq!(c.add(zero, zero).unwrap(), zero);

        let big = c.make_dim(Some(usize::MAX));
        assert_eq!(message(c.add(big, 1usize)), "dimension overflow");
    });
}

#[test]
fn subtract() {
    with_context(&["[5,0,?]"], |c| {
        let s = c.input(0).unwrap();
        let (five, zero, u) = (
            c.dim(s, 0).unwrap(),
            c.dim(s, 1).unwrap(),
            c.dim(s, 2).unwrap(),
        );
        let three = c.subtract(five, 2usize).unwrap();
        assert_eq!(c.value(three), Some(3));
        let two = c.subtract(five, three).unwrap();
        assert_eq!(c.value(two), Some(2));
        let none = c.subtract(five, five).unwrap();
        assert_eq!(c.value(none), Some(0));
        assert_eq!(c.subtract(five, 0usize).unwrap(), five);
        assert_eq!(c.subtract(u, zero).unwrap(), u);
        let x = c.subtract(u, 1usize).unwrap();
        assert_eq!(c.value(x), None);
        assert_ne!(x, u);
        let x = c.subtract(five, u).unwrap();
        assert_eq!(c.value(x), None);
        assert_eq!(
            message(c.subtract(three, 5usize)),
            "negative dimension size from subtracting 5 from 3"
        );
        assert_eq!(
            message(c.subtract(zero, five)),
            "negative dimension size from subtracting 5 from 0"
        );
    });
}

#[test]
fn multiply() {
    with_context(&["[3,1,0,?]"], |c| {
        let s = c.input(0).unwrap();
        let (three, one, zero, u) = (
            c.dim(s, 0).unwrap(),
            c.dim(s, 1).unwrap(),
            c.dim(s, 2).unwrap(),
            c.dim(s, 3).unwrap(),
        );
        let twelve = c.multiply(three, 4usize).unwrap();
        assert_eq!(c.value(twelve), Some(12));
        let nine = c.multiply(three, three).unwrap();
        assert_eq!(c.value(nine), Some(9));
        // Times 1 is the other dimension itself.
        assert_eq!(c.multiply(u, 1usize).unwrap(), u);
        assert_eq!(c.multiply(u, one).unwrap(), u);
        assert_eq!(c.multiply(one, u).unwrap(), u);
        assert_eq!(c.multiply(three, one).unwrap(), three);
        assert_eq!(c.multiply(one, three).unwrap(), three);
        // Times 0 is known to be 0 even when the other is unknown.
        let x = c.multiply(u, 0usize).unwrap();
        assert_eq!(c.value(x), Some(0));
        assert_eq!(c.multiply(u, zero).unwrap(), zero);
        assert_eq!(c.multiply(zero, u).unwrap(), zero);
        assert_eq!(c.multiply(zero, three).unwrap(), zero);
        // Otherwise unknown stays unknown.
        let x = c.multiply(u, 2usize).unwrap();
        assert_eq!(c.value(x), None);
        assert_ne!(x, u);
        let x = c.multiply(three, u).unwrap();
        assert_eq!(c.value(x), None);

        let big = c.make_dim(Some(usize::MAX / 2 + 1));
        assert_eq!(message(c.multiply(big, 2usize)), "dimension overflow");
    });
}

#[test]
fn divide() {
    with_context(&["[12,7,1,0,?]"], |c| {
        let s = c.input(0).unwrap();
        let (twelve, seven, one, zero, u) = (
            c.dim(s, 0).unwrap(),
            c.dim(s, 1).unwrap(),
            c.dim(s, 2).unwrap(),
            c.dim(s, 3).unwrap(),
            c.dim(s, 4).unwrap(),
        );
        let four = c.divide(twelve, 3usize, true).unwrap();
        assert_eq!(c.value(four), Some(4));
        let three = c.divide(twelve, four, true).unwrap();
        assert_eq!(c.value(three), Some(3));
        // Not evenly: rounds down, or is an error when asked for evenly.
        let x = c.divide(seven, 2usize, false).unwrap();
        assert_eq!(c.value(x), Some(3));
        assert_eq!(
            message(c.divide(seven, 2usize, true)),
            "dimension size 7 must be evenly divisible by 2"
        );
        let x = c.divide(zero, 5usize, true).unwrap();
        assert_eq!(c.value(x), Some(0));
        // By 1: the dimension itself.
        assert_eq!(c.divide(u, 1usize, true).unwrap(), u);
        assert_eq!(c.divide(seven, one, true).unwrap(), seven);
        // Unknown stays unknown.
        let x = c.divide(u, 2usize, true).unwrap();
        assert_eq!(c.value(x), None);
        assert_ne!(x, u);
        let x = c.divide(twelve, u, true).unwrap();
        assert_eq!(c.value(x), None);
        // By 0: an error.
        assert_eq!(
            message(c.divide(twelve, 0usize, false)),
            "division by zero in a dimension"
        );
        assert!(c.divide(twelve, zero, true).is_err());
        assert!(c.divide(u, zero, false).is_err());
    });
}

#[test]
fn concatenate() {
    with_context(&["[2,?]", "[3]", "?", "[]"], |c| {
        let (a, b, u, s) = (
            c.input(0).unwrap(),
            c.input(1).unwrap(),
            c.input(2).unwrap(),
            c.input(3).unwrap(),
        );
        let ab = c.concatenate(a, b);
        assert_eq!(c.shape_string(ab), "[2,?,3]");
        assert_eq!(c.dim(ab, 0).unwrap(), c.dim(a, 0).unwrap());
        assert_eq!(c.dim(ab, 1).unwrap(), c.dim(a, 1).unwrap());
        assert_eq!(c.dim(ab, 2).unwrap(), c.dim(b, 0).unwrap());
        // The inputs are unchanged.
        assert_eq!(c.shape_string(a), "[2,?]");
        assert_eq!(c.shape_string(b), "[3]");
        let ba = c.concatenate(b, a);
        assert_eq!(c.shape_string(ba), "[3,2,?]");
        let sa = c.concatenate(s, a);
        assert_eq!(c.shape_string(sa), "[2,?]");
        let ss = c.concatenate(s, s);
        assert_eq!(c.shape_string(ss), "[]");
        // Unknown rank on either side: unknown rank.
        let x = c.concatenate(a, u);
        assert_eq!(c.rank(x), None);
        let x = c.concatenate(u, b);
        assert_eq!(c.rank(x), None);
        let x = c.concatenate(u, u);
        assert_eq!(c.rank(x), None);
    });
}

#[test]
fn subshape() {
    with_context(&["[2,3,4,5]", "?"], |c| {
        let (s, u) = (c.input(0).unwrap(), c.input(1).unwrap());
        let cases: &[(i64, Option<i64>, &str)] = &[
            (1, None, "[3,4,5]"),
            (0, Some(2), "[2,3]"),
            (1, Some(3), "[3,4]"),
            (-2, None, "[4,5]"),
            (-4, None, "[2,3,4,5]"),
            (0, Some(-1), "[2,3,4]"),
            (-3, Some(-1), "[3,4]"),
            (1, Some(100), "[3,4,5]"),
            (2, Some(2), "[]"),
            (4, None, "[]"),
            (9, None, "[]"),
            (-1, Some(-1), "[]"),
        ];
        for (start, end, expected) in cases {
            let sub = c.subshape(s, *start, *end).unwrap();
            assert_eq!(c.shape_string(sub), *expected, "{start}..{end:?}");
        }
        // The dimensions are the shape's own.
        let sub = c.subshape(s, 1, Some(3)).unwrap();
        assert_eq!(c.dim(sub, 0).unwrap(), c.dim(s, 1).unwrap());
        assert_eq!(c.dim(sub, 1).unwrap(), c.dim(s, 2).unwrap());
        // The whole shape is the shape itself.
        assert_eq!(c.subshape(s, 0, None).unwrap(), s);
        assert_eq!(c.subshape(s, 0, Some(4)).unwrap(), s);
        assert_eq!(c.subshape(s, 0, Some(10)).unwrap(), s);

        assert_eq!(
            message(c.subshape(s, -5, None)),
            "input 0 ('a') has shape [2,3,4,5], for which subshape -5.. is out of range"
        );
        assert_eq!(
            message(c.subshape(s, 0, Some(-5))),
            "input 0 ('a') has shape [2,3,4,5], for which subshape 0..-5 is out of range"
        );
        assert_eq!(
            message(c.subshape(s, 3, Some(1))),
            "input 0 ('a') has shape [2,3,4,5], for which subshape 3..1 is out of range"
        );
        assert!(c.subshape(s, -1, Some(-2)).is_err());

        // Unknown rank: unknown rank (the shape itself when taken whole).
        assert_eq!(c.subshape(u, 0, None).unwrap(), u);
        for (start, end) in [(1, None), (-1, None), (0, Some(2)), (5, Some(1))] {
            let sub = c.subshape(u, start, end).unwrap();
            assert_eq!(c.rank(sub), None, "{start}..{end:?}");
        }
    });
}

#[test]
fn list_inputs_are_named_with_their_index() {
    let op = Arc::new(
        OpDefBuilder::new("Listy")
            .attr("N: int >= 1")
            .input("x: float")
            .input("xs: N * float")
            .output("y: float")
            .build()
            .unwrap(),
    );
    let t = ShapeTest::with_fn(op, library::merge_inputs);
    t.ok("[2];[2];[?]", "in0");
    t.error(
        "[2];[2];[3]",
        "dimension 0 in both shapes must be equal, but input 0 ('x') has shape [2] \
         and input 2 ('xs'[1]) has shape [3]",
    );
    t.error(
        "[2];[3];[?]",
        "input 0 ('x') has shape [2] and input 1 ('xs'[0]) has shape [3]",
    );
    t.error("[2];[2,1];[2]", "shapes must be equal rank");
}

#[test]
fn infer_runs_a_shape_function_on_values() {
    let op = OpDefBuilder::new("Mm")
        .input("a: float")
        .input("b: float")
        .output("c: float")
        .build()
        .unwrap();
    let node = OpInstanceBuilder::new(&op)
        .input(DType::F32)
        .input(DType::F32)
        .build()
        .unwrap();
    let shapes = [shape("[2,?]"), shape("[3,4]")];
    assert_eq!(
        infer(&op, &node, matmul, &shapes, &[]).unwrap(),
        [shape("[2,4]")]
    );
    assert_eq!(
        infer(&op, &node, matmul, &[shape("?"), shape("?")], &[]).unwrap(),
        [shape("[?,?]")]
    );
    let error = infer(&op, &node, matmul, &[shape("[2,3]"), shape("[4,5]")], &[]).unwrap_err();
    // `infer` names the node after the op; a conflict names the dimensions' inputs.
    assert!(
        error
            .message()
            .starts_with("op Mm (node 'Mm'): dimensions must be equal, but are 3 and 4"),
        "{error}"
    );
    assert_contains(
        &error,
        &[
            "dimension 1 of input 0 ('a') with shape [2,3]",
            "dimension 0 of input 1 ('b') with shape [4,5]",
        ],
    );
    let error = infer(&op, &node, matmul, &[shape("[2]"), shape("[2,5]")], &[]).unwrap_err();
    assert_eq!(
        error.message(),
        "op Mm (node 'Mm'): input 0 ('a') has shape [2], which must be rank 2 but is rank 1"
    );
    // A shape function that sets nothing leaves the outputs unknown.
    assert_eq!(
        infer(&op, &node, |_| Ok(()), &shapes, &[]).unwrap(),
        [PartialShape::unknown()]
    );
}

// ---------------------------------------------------------------------------
// The library, in the ShapeTest notation.

fn op_def(name: &str, attrs: &[&str], inputs: &[&str], outputs: &[&str]) -> Arc<OpDef> {
    let mut builder = OpDefBuilder::new(name);
    for a in attrs {
        builder = builder.attr(*a);
    }
    for i in inputs {
        builder = builder.input(*i);
    }
    for o in outputs {
        builder = builder.output(*o);
    }
    Arc::new(builder.build().unwrap())
}

fn unary() -> Arc<OpDef> {
    op_def("Unary", &[], &["x: float"], &["y: float"])
}

fn binary() -> Arc<OpDef> {
    op_def("Binary", &[], &["x: float", "y: float"], &["z: float"])
}

#[test]
fn library_lists_every_function_by_name() {
    let names: Vec<&str> = library::SHAPE_FNS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "unchanged",
            "scalar",
            "unknown",
            "broadcast",
            "merge_inputs",
            "pass_through"
        ]
    );
    for (name, f) in library::SHAPE_FNS {
        assert_eq!(
            library::by_name(name).map(|g| g as usize),
            Some(*f as usize)
        );
    }
    assert!(library::by_name("Unchanged").is_none());
    assert!(library::by_name("").is_none());
}

#[test]
fn library_unchanged() {
    let t = ShapeTest::with_fn(unary(), library::unchanged);
    t.ok("[2,?]", "in0");
    t.ok("?", "in0");
    t.ok("[]", "in0");
    let none = op_def("Nothing", &[], &[], &["y: float"]);
    ShapeTest::with_fn(none, library::unchanged).error("", "asked for input 0");
}

#[test]
fn library_scalar_and_unknown() {
    let two_out = op_def("TwoOut", &[], &["x: float"], &["a: float", "b: int32"]);
    let t = ShapeTest::with_fn(two_out.clone(), library::scalar);
    t.ok("[2,3]", "[];[]");
    t.ok("?", "[];[]");
    let t = ShapeTest::with_fn(two_out, library::unknown);
    t.ok("[2,3]", "?;?");
    let none = op_def("NoOut", &[], &["x: float"], &[]);
    ShapeTest::with_fn(none.clone(), library::scalar).ok("[2]", "");
    ShapeTest::with_fn(none, library::unknown).ok("[2]", "");
}

#[test]
fn library_broadcast() {
    let t = ShapeTest::with_fn(binary(), library::broadcast);
    // Same shapes.
    t.ok("[2,3];[2,3]", "[d0_0,d0_1]");
    t.ok("[];[]", "[]");
    // A 1 stretches; missing leading dimensions count as 1.
    t.ok("[2,1,3];[4,1]", "[d0_0,d1_0,d0_2]");
    t.ok("[4,1];[2,1,3]", "[d1_0,d0_0,d1_2]");
    t.ok("[5,1];[1,7]", "[d0_0,d1_1]");
    t.ok("[];[2,3]", "[d1_0,d1_1]");
    t.ok("[2,3];[]", "[d0_0,d0_1]");
    t.ok("[1];[1]", "[d0_0]");
    t.ok("[2,3];[1]", "[d0_0,d0_1]");
    t.ok("[0];[1]", "[d0_0]");
    t.ok("[1];[0]", "[d1_0]");
    // Unknown rank on either side: unknown rank.
    t.ok("?;[2]", "?");
    t.ok("[2];?", "?");
    t.ok("?;?", "?");
    // Unknown dimensions: the known one unless it is 1.
    t.ok("[?];[3]", "[d1_0]");
    t.ok("[3];[?]", "[d0_0]");
    t.ok("[?];[1]", "[d0_0]");
    t.ok("[1];[?]", "[d1_0]");
    t.ok("[?];[?]", "[?]");
    t.ok("[?,2];[3,?]", "[d1_0,d0_1]");
    t.ok("[?];[]", "[d0_0]");
    t.ok("[];[?,?]", "[d1_0,d1_1]");
    // Incompatible known sizes.
    t.error(
        "[2];[3]",
        "op Binary (node 'Binary'): incompatible shapes for broadcasting: \
         input 0 ('x') has shape [2] and input 1 ('y') has shape [3]",
    );
    t.error(
        "[2,3];[4,3]",
        "input 0 ('x') has shape [2,3] and input 1 ('y') has shape [4,3]",
    );
    t.error(
        "[5,2,?];[3,1]",
        "has shape [5,2,?] and input 1 ('y') has shape [3,1]",
    );
    t.error("[0];[2]", "incompatible shapes for broadcasting");
}

#[test]
fn library_merge_inputs() {
    let op = op_def("Sum", &["N: int >= 1"], &["xs: N * float"], &["y: float"]);
    let t = ShapeTest::with_fn(op, library::merge_inputs);
    t.ok("[2,3]", "in0");
    t.ok("[2,3];[2,3];[2,3]", "in0");
    t.ok("[2,?];[?,3]", "[d0_0,d1_1]");
    // A merged shape already as specific as the next input stays (as in
    // TensorFlow, the first of two equally specific shapes).
    t.ok("[2,?];[?,3];[2,3]", "[d0_0,d1_1]");
    t.ok("[2,?];[?,?];[2,3]", "in2");
    t.ok("[?,?];[2,3]", "in1");
    t.ok("[2,3];[?,?]", "in0");
    t.ok("?;[2]", "in1");
    t.ok("[2];?", "in0");
    t.ok("?;?", "in0");
    t.ok("?;[?];?", "in1");
    t.error(
        "[2];[3]",
        "dimension 0 in both shapes must be equal, \
         but input 0 ('xs'[0]) has shape [2] and input 1 ('xs'[1]) has shape [3]",
    );
    // A merged shape that is no input's is shown by value.
    t.error(
        "[2,?];[?,3];[4,3]",
        "dimension 0 in both shapes must be equal, \
         but shape [2,3] and input 2 ('xs'[2]) has shape [4,3]",
    );
    t.error(
        "[2];[2,3]",
        "shapes must be equal rank, \
         but input 0 ('xs'[0]) has shape [2] and input 1 ('xs'[1]) has shape [2,3]",
    );
}

#[test]
fn library_pass_through() {
    let op = op_def("Identities", &["T: list(type)"], &["xs: T"], &["ys: T"]);
    let t = ShapeTest::with_fn(op, library::pass_through);
    t.ok("[2];?;[3,?]", "in0;in1;in2");
    t.ok("[]", "in0");
    let op = op_def("Lossy", &[], &["x: float", "y: float"], &["z: float"]);
    ShapeTest::with_fn(op, library::pass_through).error(
        "[2];[3]",
        "op Lossy (node 'Lossy'): pass_through needs as many outputs as inputs, got 1 and 2",
    );
}

/// Output 0 has rank attr `rank`, dims unknown; output 1 is input 0's
/// dimensions from attr `from` on.
fn ranked(c: &mut InferenceContext<'_>) -> Result<()> {
    let rank: i64 = c.get_attr("rank")?;
    let s = c.unknown_shape_of_rank(rank as usize);
    c.set_output(0, s)?;
    let from: i64 = c.get_attr("from")?;
    let x = c.input(0)?;
    let tail = c.subshape(x, from, None)?;
    c.set_output(1, tail)
}

#[test]
fn shape_test_with_attrs() {
    let op = op_def(
        "Ranked",
        &["rank: int = 2", "from: int = 0"],
        &["x: float"],
        &["a: float", "b: float"],
    );
    let t = ShapeTest::with_fn(op, ranked);
    t.ok("[4,5,6]", "[?,?];in0");
    t.ok("?", "[?,?];in0");
    let t = t.attr("rank", 1i64).attr("from", -2i64);
    t.ok("[4,5,6]", "[?];[d0_1,d0_2]");
    t.ok("?", "[?];?");
    t.error(
        "[4]",
        "input 0 ('x') has shape [4], for which subshape -2.. is out of range",
    );
    // Bad notation is an error, not a panic.
    assert!(t.run("[4").is_err());
    assert!(t.run("[4];[5]").is_err());
}

// ---------------------------------------------------------------------------
// Registry::infer_shapes over ops registered by hand.

/// MatMul without transposes: [n,k] x [k,m] -> [n,m].
fn matmul(c: &mut InferenceContext<'_>) -> Result<()> {
    let a = c.with_rank(c.input(0)?, 2)?;
    let b = c.with_rank(c.input(1)?, 2)?;
    let (a_k, b_k) = (c.dim(a, 1)?, c.dim(b, 0)?);
    c.merge_dim(a_k, b_k)?;
    let (n, m) = (c.dim(a, 0)?, c.dim(b, 1)?);
    let out = c.matrix(n, m);
    c.set_output(0, out)
}

/// Fill: output of shape `dims` (a constant int32 vector), every element
/// `value`. Without the value of `dims`, only the rank is known (from the
/// length of `dims`), if that.
fn fill_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let dims = c.with_rank(c.input(0)?, 1)?;
    c.with_rank(c.input(1)?, 0)?;
    let out = match c.input_tensor(0) {
        Some(tensor) => {
            let values = tensor.as_slice::<i32>()?;
            let mut sizes = Vec::with_capacity(values.len());
            for v in values {
                let size = usize::try_from(*v).map_err(|_| {
                    Error::invalid_argument(format!("Fill: dims must be non-negative, got {v}"))
                })?;
                sizes.push(size);
            }
            c.make_shape(sizes)
        }
        None => {
            let n = c.dim(dims, 0)?;
            match c.value(n) {
                Some(n) => c.unknown_shape_of_rank(n),
                None => c.unknown_shape(),
            }
        }
    };
    c.set_output(0, out)
}

fn fill_kernel(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let dims: Vec<usize> = ctx
        .input(0)?
        .as_slice::<i32>()?
        .iter()
        .map(|d| *d as usize)
        .collect();
    let value = ctx.input(1)?.scalar_value::<f32>()?;
    let count = dims.iter().product();
    ctx.set_output(0, Tensor::from_vec(dims, vec![value; count])?)
}

static SI_MATMUL: OpRegistration = OpRegistration::new(
    "SiMatMul",
    || {
        OpDefBuilder::new("SiMatMul")
            .attr("T: {float, int32}")
            .input("a: T")
            .input("b: T")
            .output("product: T")
            .build()
    },
    "tests/shape_inference.rs",
    1,
)
.with_shape_fn(matmul);
static SI_NO_SHAPE_FN: OpRegistration = OpRegistration::new(
    "SiNoShapeFn",
    || {
        OpDefBuilder::new("SiNoShapeFn")
            .input("x: float")
            .output("a: float")
            .output("b: int32")
            .build()
    },
    "tests/shape_inference.rs",
    2,
);
static SI_FILL: OpRegistration = OpRegistration::new(
    "SiFill",
    || {
        OpDefBuilder::new("SiFill")
            .input("dims: int32")
            .input("value: float")
            .output("y: float")
            .build()
    },
    "tests/shape_inference.rs",
    3,
)
.with_shape_fn(fill_shape);
static SI_FILL_CPU: KernelRegistration = KernelRegistration::new(
    "SiFill",
    op_core::DeviceType::Cpu,
    "fill",
    |c| FnKernel::<()>::create(c, fill_kernel),
    "tests/shape_inference.rs",
    4,
);
static SI_RANKED: OpRegistration = OpRegistration::new(
    "SiRanked",
    || {
        OpDefBuilder::new("SiRanked")
            .attr("rank: int = 2")
            .attr("from: int = 0")
            .input("x: float")
            .output("a: float")
            .output("b: float")
            .build()
    },
    "tests/shape_inference.rs",
    5,
)
.with_shape_fn(ranked);

/// The shape function says a scalar for `b`; the kernel outputs `[2]`.
fn liar_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let x = c.input(0)?;
    c.set_output(0, x)?;
    let s = c.scalar();
    c.set_output(1, s)
}

fn liar_kernel(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)?;
    ctx.set_output(1, Tensor::from_vec([2], vec![1.0f32, 2.0])?)
}

static SI_LIAR: OpRegistration = OpRegistration::new(
    "SiLiar",
    || {
        OpDefBuilder::new("SiLiar")
            .input("x: float")
            .output("a: float")
            .output("b: float")
            .build()
    },
    "tests/shape_inference.rs",
    6,
)
.with_shape_fn(liar_shape);
static SI_LIAR_CPU: KernelRegistration = KernelRegistration::new(
    "SiLiar",
    op_core::DeviceType::Cpu,
    "liar",
    |c| FnKernel::<()>::create(c, liar_kernel),
    "tests/shape_inference.rs",
    7,
);

/// The shape function takes scalars only; the kernel takes anything.
fn picky_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let x = c.with_rank(c.input(0)?, 0)?;
    c.set_output(0, x)
}

fn identity_kernel(ctx: &mut KernelContext<'_>, _: &()) -> Result<()> {
    let x = ctx.input(0)?.clone();
    ctx.set_output(0, x)
}

static SI_PICKY: OpRegistration = OpRegistration::new(
    "SiPicky",
    || {
        OpDefBuilder::new("SiPicky")
            .input("x: float")
            .output("y: float")
            .build()
    },
    "tests/shape_inference.rs",
    8,
)
.with_shape_fn(picky_shape);
static SI_PICKY_CPU: KernelRegistration = KernelRegistration::new(
    "SiPicky",
    op_core::DeviceType::Cpu,
    "picky_identity",
    |c| FnKernel::<()>::create(c, identity_kernel),
    "tests/shape_inference.rs",
    9,
);

/// An honest op: identity, shape fn `unchanged`.
static SI_SAME: OpRegistration = OpRegistration::new(
    "SiSame",
    || {
        OpDefBuilder::new("SiSame")
            .input("x: float")
            .output("y: float")
            .build()
    },
    "tests/shape_inference.rs",
    10,
)
.with_shape_fn(library::unchanged);
static SI_SAME_CPU: KernelRegistration = KernelRegistration::new(
    "SiSame",
    op_core::DeviceType::Cpu,
    "same",
    |c| FnKernel::<()>::create(c, identity_kernel),
    "tests/shape_inference.rs",
    11,
);
/// No shape function: never checked.
static SI_UNCHECKED: OpRegistration = OpRegistration::new(
    "SiUnchecked",
    || {
        OpDefBuilder::new("SiUnchecked")
            .input("x: float")
            .output("a: float")
            .output("b: float")
            .build()
    },
    "tests/shape_inference.rs",
    12,
);
static SI_UNCHECKED_CPU: KernelRegistration = KernelRegistration::new(
    "SiUnchecked",
    op_core::DeviceType::Cpu,
    "unchecked",
    |c| FnKernel::<()>::create(c, liar_kernel),
    "tests/shape_inference.rs",
    13,
);

/// A panic payload whose `Drop` panics too.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("the payload's drop panicked");
    }
}

/// A buggy shape function: panics on any input of rank 1, with a payload
/// that panics when dropped on rank 2.
fn panicky_shape(c: &mut InferenceContext<'_>) -> Result<()> {
    let x = c.input(0)?;
    match c.rank(x) {
        Some(1) => panic!("shape function bug"),
        Some(2) => std::panic::panic_any(PanicsOnDrop),
        _ => c.set_output(0, x),
    }
}

static SI_PANICKY: OpRegistration = OpRegistration::new(
    "SiPanicky",
    || {
        OpDefBuilder::new("SiPanicky")
            .input("x: float")
            .output("y: float")
            .build()
    },
    "tests/shape_inference.rs",
    14,
)
.with_shape_fn(panicky_shape);
static SI_PANICKY_CPU: KernelRegistration = KernelRegistration::new(
    "SiPanicky",
    op_core::DeviceType::Cpu,
    "panicky_identity",
    |c| FnKernel::<()>::create(c, identity_kernel),
    "tests/shape_inference.rs",
    15,
);

static REGISTRY: LazyLock<Arc<Registry>> = LazyLock::new(|| {
    let registry = Registry::new(
        [
            &SI_MATMUL,
            &SI_NO_SHAPE_FN,
            &SI_FILL,
            &SI_RANKED,
            &SI_LIAR,
            &SI_PICKY,
            &SI_SAME,
            &SI_UNCHECKED,
            &SI_PANICKY,
        ],
        [
            &SI_FILL_CPU,
            &SI_LIAR_CPU,
            &SI_PICKY_CPU,
            &SI_SAME_CPU,
            &SI_UNCHECKED_CPU,
            &SI_PANICKY_CPU,
        ],
    );
    registry.check().unwrap();
    Arc::new(registry)
});

fn infer_shapes(
    op: &str,
    input_types: &[InputTypes],
    attrs: &[(&str, AttrValue)],
    shapes: &[&str],
    tensors: &[Option<&Tensor>],
) -> Result<Vec<PartialShape>> {
    let shapes: Vec<PartialShape> = shapes.iter().map(|s| shape(s)).collect();
    REGISTRY.infer_shapes(op, input_types, attrs, &shapes, tensors)
}

fn shapes(texts: &[&str]) -> Vec<PartialShape> {
    texts.iter().map(|s| shape(s)).collect()
}

#[test]
fn registry_infers_with_the_shape_fn() {
    let f32x2: [InputTypes; 2] = [DType::F32.into(), DType::F32.into()];
    let i32x2: [InputTypes; 2] = [DType::I32.into(), DType::I32.into()];
    assert_eq!(
        infer_shapes("SiMatMul", &f32x2, &[], &["[2,?]", "[3,4]"], &[]).unwrap(),
        shapes(&["[2,4]"])
    );
    assert_eq!(
        infer_shapes("SiMatMul", &i32x2, &[], &["?", "[?,5]"], &[]).unwrap(),
        shapes(&["[?,5]"])
    );
    let error = infer_shapes("SiMatMul", &f32x2, &[], &["[2,3]", "[4,5]"], &[]).unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    assert!(
        error.message().starts_with(
            "op SiMatMul (node 'SiMatMul'): dimensions must be equal, but are 3 and 4"
        ),
        "{error}"
    );
    let error = infer_shapes("SiMatMul", &f32x2, &[], &["[2,3,4]", "[4,5]"], &[]).unwrap_err();
    assert_contains(
        &error,
        &["input 0 ('a') has shape [2,3,4], which must be rank 2 but is rank 3"],
    );
    // The shapes must match the inputs.
    let error = infer_shapes("SiMatMul", &f32x2, &[], &["[2,3]"], &[]).unwrap_err();
    assert_contains(&error, &["got 1 input shape(s) for 2 input tensor(s)"]);
    // The node must build.
    let error = infer_shapes(
        "SiMatMul",
        &[DType::F64.into(), DType::F64.into()],
        &[],
        &["?", "?"],
        &[],
    )
    .unwrap_err();
    assert_eq!(error.code(), Code::InvalidArgument);
    // Through ShapeTest, too.
    let t = ShapeTest::in_registry(&REGISTRY, "SiMatMul");
    t.ok("[2,?];[?,4]", "[d0_0,d1_1]");
    t.ok("[2,3];[3,4]", "[d0_0,d1_1]");
    t.error("[2,3];[4,5]", "dimensions must be equal, but are 3 and 4");
}

#[test]
fn registry_passes_attrs() {
    let x: [InputTypes; 1] = [DType::F32.into()];
    assert_eq!(
        infer_shapes("SiRanked", &x, &[], &["[4,5,6]"], &[]).unwrap(),
        shapes(&["[?,?]", "[4,5,6]"])
    );
    let attrs = [("rank", AttrValue::Int(3)), ("from", AttrValue::Int(1))];
    assert_eq!(
        infer_shapes("SiRanked", &x, &attrs, &["[4,?,6]"], &[]).unwrap(),
        shapes(&["[?,?,?]", "[?,6]"])
    );
    let attrs = [("from", AttrValue::Int(-5))];
    let error = infer_shapes("SiRanked", &x, &attrs, &["[4,?,6]"], &[]).unwrap_err();
    assert_contains(&error, &["subshape -5.. is out of range"]);
}

#[test]
fn registry_without_a_shape_fn_gives_unknown_shapes() {
    let x: [InputTypes; 1] = [DType::F32.into()];
    assert_eq!(
        infer_shapes("SiNoShapeFn", &x, &[], &["[2,3]"], &[]).unwrap(),
        shapes(&["?", "?"])
    );
    assert!(REGISTRY.op("SiNoShapeFn").unwrap().shape_fn().is_none());
    assert!(REGISTRY.op("SiMatMul").unwrap().shape_fn().is_some());
}

#[test]
fn registry_unknown_op() {
    let error = infer_shapes("SiMatMull", &[], &[], &[], &[]).unwrap_err();
    assert_eq!(error.code(), Code::NotFound);
    assert_contains(&error, &["did you mean 'SiMatMul'?"]);
}

#[test]
fn registry_reads_constant_inputs() {
    let types: [InputTypes; 2] = [DType::I32.into(), DType::F32.into()];
    let dims = Tensor::from_vec([3], vec![2i32, 0, 5]).unwrap();
    // The value of `dims` gives the whole shape.
    assert_eq!(
        infer_shapes("SiFill", &types, &[], &["[3]", "[]"], &[Some(&dims), None]).unwrap(),
        shapes(&["[2,0,5]"])
    );
    assert_eq!(
        infer_shapes("SiFill", &types, &[], &["?", "?"], &[Some(&dims)]).unwrap(),
        shapes(&["[2,0,5]"])
    );
    let no_dims = Tensor::from_vec([0], Vec::<i32>::new()).unwrap();
    assert_eq!(
        infer_shapes("SiFill", &types, &[], &["[0]", "[]"], &[Some(&no_dims)]).unwrap(),
        shapes(&["[]"])
    );
    // Without it, only what the shape of `dims` tells.
    assert_eq!(
        infer_shapes("SiFill", &types, &[], &["[3]", "[]"], &[]).unwrap(),
        shapes(&["[?,?,?]"])
    );
    assert_eq!(
        infer_shapes("SiFill", &types, &[], &["[3]", "[]"], &[None, None]).unwrap(),
        shapes(&["[?,?,?]"])
    );
    assert_eq!(
        infer_shapes("SiFill", &types, &[], &["[?]", "[]"], &[]).unwrap(),
        shapes(&["?"])
    );
    assert_eq!(
        infer_shapes("SiFill", &types, &[], &["?", "?"], &[]).unwrap(),
        shapes(&["?"])
    );
    // A value for another input is not taken for `dims`.
    let value = Tensor::scalar(1.5f32);
    assert_eq!(
        infer_shapes("SiFill", &types, &[], &["[3]", "[]"], &[None, Some(&value)]).unwrap(),
        shapes(&["[?,?,?]"])
    );
    // Bad values and shapes are errors.
    let negative = Tensor::from_vec([2], vec![2i32, -1]).unwrap();
    let error =
        infer_shapes("SiFill", &types, &[], &["[2]", "[]"], &[Some(&negative)]).unwrap_err();
    assert_contains(&error, &["dims must be non-negative, got -1"]);
    let error = infer_shapes("SiFill", &types, &[], &["[2,2]", "[]"], &[]).unwrap_err();
    assert_contains(
        &error,
        &["input 0 ('dims') has shape [2,2], which must be rank 1 but is rank 2"],
    );
    let error = infer_shapes("SiFill", &types, &[], &["[2]", "[1]"], &[]).unwrap_err();
    assert_contains(
        &error,
        &["input 1 ('value') has shape [1], which must be rank 0 but is rank 1"],
    );
}

// ---------------------------------------------------------------------------
// The runtime's check of kernel outputs against the shape function.

fn checking() -> Runtime {
    Runtime::with_registry(REGISTRY.clone()).check_shapes(true)
}

fn not_checking() -> Runtime {
    Runtime::with_registry(REGISTRY.clone()).check_shapes(false)
}

#[test]
fn runtime_reports_a_kernel_that_disagrees_with_its_shape_fn() {
    let x = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap();
    let error = checking().run("SiLiar", vec![x.clone()], &[]).unwrap_err();
    assert_eq!(error.code(), Code::Internal, "{error}");
    assert_eq!(
        error.message(),
        "output 1 ('b') has shape [2], but the op's shape function infers [] \
         from input shapes [3]: the kernel and the shape function disagree"
    );
    assert_eq!(
        error.context(),
        ["in kernel liar of op SiLiar (node 'SiLiar', device 'cpu')"]
    );
    // The node's own name, through OpCall.
    let error = OpCall::new("SiLiar")
        .input(&x)
        .node_name("liar_node")
        .run_on(&checking())
        .unwrap_err();
    assert_contains(&error, &["node 'liar_node'"]);

    // Unchecked, the outputs come back as the kernel made them.
    let outputs = not_checking().run("SiLiar", vec![x], &[]).unwrap();
    assert_eq!(outputs[0].dims(), [3]);
    assert_eq!(outputs[1].dims(), [2]);
}

#[test]
fn runtime_reports_a_shape_fn_that_rejects_what_the_kernel_accepted() {
    let x = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
    let error = OpCall::new("SiPicky")
        .input(&x)
        .node_name("picky_node")
        .run_on(&checking())
        .unwrap_err();
    assert_eq!(error.code(), Code::Internal, "{error}");
    assert_eq!(
        error.message(),
        "the kernel accepted input shapes [2], but the op's shape function rejects them: \
         op SiPicky (node 'picky_node'): input 0 ('x') has shape [2], \
         which must be rank 0 but is rank 1"
    );
    assert_eq!(
        error.context(),
        ["in kernel picky_identity of op SiPicky (node 'picky_node', device 'cpu')"]
    );
    // Scalars agree with it.
    let y = checking()
        .run("SiPicky", vec![Tensor::scalar(4.0f32)], &[])
        .unwrap();
    assert_eq!(y[0].scalar_value::<f32>().unwrap(), 4.0);
    // Unchecked, the kernel's result stands.
    let y = not_checking().run("SiPicky", vec![x], &[]).unwrap();
    assert_eq!(y[0].dims(), [2]);
}

#[test]
fn runtime_check_passes_when_kernel_and_shape_fn_agree() {
    let runtime = checking();
    for dims in [vec![], vec![0], vec![2, 3], vec![1, 1, 4]] {
        let count = dims.iter().product();
        let x = Tensor::from_vec(dims.clone(), vec![0.5f32; count]).unwrap();
        let y = runtime.run("SiSame", vec![x], &[]).unwrap();
        assert_eq!(y[0].dims(), dims);
    }
    // A shape fn that needs a constant input's value, which the check does
    // not give: it infers less, and agrees.
    let dims = Tensor::from_vec([2], vec![2i32, 3]).unwrap();
    let y = runtime
        .run("SiFill", vec![dims, Tensor::scalar(1.5f32)], &[])
        .unwrap();
    assert_eq!(y[0].dims(), [2, 3]);
    assert_eq!(y[0].as_slice::<f32>().unwrap(), [1.5; 6]);
    // An op without a shape fn is not checked.
    let x = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap();
    let y = runtime.run("SiUnchecked", vec![x], &[]).unwrap();
    assert_eq!(y[1].dims(), [2]);
}

#[test]
fn runtime_check_is_the_runtime_s_setting() {
    // Prepared ops keep the setting of the runtime that prepared them.
    let x = Tensor::from_vec([3], vec![1.0f32, 2.0, 3.0]).unwrap();
    let checked = checking()
        .prepare("SiLiar", &[DType::F32.into()], &[])
        .unwrap();
    let unchecked = not_checking()
        .prepare("SiLiar", &[DType::F32.into()], &[])
        .unwrap();
    assert!(checked.run(vec![x.clone()]).is_err());
    assert!(unchecked.run(vec![x.clone()]).is_ok());
    // The default follows debug assertions.
    let default = Runtime::with_registry(REGISTRY.clone());
    assert_eq!(
        default.run("SiLiar", vec![x], &[]).is_err(),
        cfg!(debug_assertions)
    );
}

#[test]
fn a_panicking_shape_fn_is_an_internal_error_naming_the_op() {
    let f32x1 = [InputTypes::Single(DType::F32)];
    for (input, message) in [
        ("[3]", "shape function bug"),
        ("[2,2]", "(a panic payload that is not a string)"),
    ] {
        let error = infer_shapes("SiPanicky", &f32x1, &[], &[input], &[]).unwrap_err();
        assert_eq!(error.code(), Code::Internal, "{error}");
        assert_panicked_at(
            error.message(),
            "op SiPanicky (node 'SiPanicky'): the shape function panicked",
            file!(),
            message,
        );
    }
    assert_eq!(
        infer_shapes("SiPanicky", &f32x1, &[], &["[]"], &[]).unwrap(),
        shapes(&["[]"])
    );
}

#[test]
fn the_runtime_s_shape_check_contains_a_panicking_shape_fn() {
    let runtime = checking();
    for (dims, message) in [
        (vec![3], "shape function bug"),
        (vec![2, 2], "(a panic payload that is not a string)"),
    ] {
        let count = dims.iter().product();
        let x = Tensor::from_vec(dims.clone(), vec![1.0f32; count]).unwrap();
        let error = OpCall::new("SiPanicky")
            .input(&x)
            .node_name("panicky_node")
            .run_on(&runtime)
            .unwrap_err();
        assert_eq!(error.code(), Code::Internal, "{error}");
        assert_panicked_at(
            error.message(),
            &format!(
                "the op's shape function panicked on input shapes {}",
                PartialShape::known(&dims)
            ),
            file!(),
            message,
        );
        assert_eq!(
            error.context(),
            ["in kernel panicky_identity of op SiPanicky (node 'panicky_node', device 'cpu')"]
        );
    }
    // The runtime and the op still work.
    let y = runtime
        .run("SiPanicky", vec![Tensor::scalar(2.0f32)], &[])
        .unwrap();
    assert_eq!(y[0].scalar_value::<f32>().unwrap(), 2.0);
}

#[test]
fn the_shape_test_helper_turns_a_panicking_shape_fn_into_an_error() {
    let t = ShapeTest::with_fn(unary(), |_| panic!("rank table out of date"));
    let err = t.run("[2]").unwrap_err();
    assert_eq!(err.code(), op_core::Code::Internal);
    assert_panicked_at(
        err.message(),
        "op Unary (node 'Unary'): the shape function panicked",
        file!(),
        "rank table out of date",
    );
    t.error("[2]", "rank table out of date");
}
