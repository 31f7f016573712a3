//! Our ops' definitions against TensorFlow 2.21's own text
//! (`tests/data/tensorflow_ops.pbtxt`, written by
//! `tools/tensorflow/dump_opdefs.py`).

use op_core::Registry;
use op_core::op_spec::pbtxt::op_list_to_string;

/// TensorFlow's text of op `name`, `op { ... }`, as the dump has it.
fn tensorflow_text(name: &str) -> String {
    let dump = include_str!("../data/tensorflow_ops.pbtxt");
    let start = format!("op {{\n  name: \"{name}\"\n");
    let at = dump
        .find(&start)
        .unwrap_or_else(|| panic!("TensorFlow's dump has no op {name}"));
    let end = dump[at..]
        .find("\n}\n")
        .map(|e| at + e + 3)
        .expect("every op's text ends with a closing brace");
    dump[at..end].to_owned()
}

/// Asserts that each op's definition, docs left out (TensorFlow's dump has
/// none), prints exactly as TensorFlow's.
#[track_caller]
pub fn assert_same_as_tensorflow(ops: &[&str]) {
    op_kernels::link();
    for name in ops {
        let mut def = (**Registry::global().op(name).unwrap().def()).clone();
        def.summary.clear();
        def.description.clear();
        for arg in def.inputs.iter_mut().chain(&mut def.outputs) {
            arg.description.clear();
        }
        for attr in &mut def.attrs {
            attr.description.clear();
        }
        assert_eq!(
            op_list_to_string([&def]),
            tensorflow_text(name),
            "op {name}"
        );
    }
}
