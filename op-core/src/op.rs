//! [`Op`]: a Rust type standing for a registered op, as `#[register_op]`
//! and `#[op]` generate, with the data `#[kernel]` checks at compile time.

use op_spec::{DType, OpDef, SpecErrors};

/// A Rust type that stands for an op: the struct `#[register_op]` is
/// written on, or the struct `#[op]` generates for a function.
///
/// `#[kernel(op = ZeroOut, ...)]` names such a type, so that its type
/// constraints and `host_memory` args are checked at compile time against
/// [`SIGNATURE`](Self::SIGNATURE).
pub trait Op {
    /// The op's registered name.
    const NAME: &'static str;
    /// The op's type attrs and arg names, for compile-time checks of kernels.
    const SIGNATURE: OpSignature;
    /// Builds the op's definition from its spec strings. Cannot fail for an
    /// op declared with the macros: they ran the same parser at compile time.
    fn op_def() -> Result<OpDef, SpecErrors>;
}

/// What kernels need to know about an op at compile time.
#[derive(Clone, Copy, Debug)]
pub struct OpSignature {
    /// The `type` and `list(type)` attrs.
    pub type_attrs: &'static [TypeAttrSignature],
    /// The input arg names, in order.
    pub inputs: &'static [&'static str],
    /// The output arg names, in order.
    pub outputs: &'static [&'static str],
    /// The inputs of dtype `resource` (a subset of `inputs`).
    pub resource_inputs: &'static [&'static str],
    /// The outputs of dtype `resource` (a subset of `outputs`).
    pub resource_outputs: &'static [&'static str],
}

/// One `type` or `list(type)` attr of an [`OpSignature`].
#[derive(Clone, Copy, Debug)]
pub struct TypeAttrSignature {
    /// The attr's name.
    pub name: &'static str,
    /// The allowed types; `None` when any type is allowed.
    pub allowed: Option<&'static [DType]>,
}

/// The compile-time checks `#[kernel]` generates, as `const` assertions
/// (`const _: () = if !has_type_attr(&<Op>::SIGNATURE, "T") { panic!(..) };`).
/// Generated code reaches them through `op_core::__private`; they are not
/// part of the public API.
pub(crate) mod checks {
    use super::{OpSignature, TypeAttrSignature};
    use op_spec::DType;

    /// Whether `a` and `b` are the same string, in a `const` context.
    pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Whether `names` contains `name`.
    const fn contains(names: &[&str], name: &str) -> bool {
        let mut i = 0;
        while i < names.len() {
            if str_eq(names[i], name) {
                return true;
            }
            i += 1;
        }
        false
    }

    /// The type attr of `signature` named `attr`.
    const fn find_type_attr<'s>(
        signature: &'s OpSignature,
        attr: &str,
    ) -> Option<&'s TypeAttrSignature> {
        let mut i = 0;
        while i < signature.type_attrs.len() {
            if str_eq(signature.type_attrs[i].name, attr) {
                return Some(&signature.type_attrs[i]);
            }
            i += 1;
        }
        None
    }

    /// Whether `signature` has a `type` or `list(type)` attr named `attr`
    /// (for `#[kernel]`'s compile-time checks).
    pub const fn has_type_attr(signature: &OpSignature, attr: &str) -> bool {
        find_type_attr(signature, attr).is_some()
    }

    /// Whether type attr `attr` of `signature` allows `dtype` (for `#[kernel]`'s
    /// compile-time checks).
    pub const fn type_attr_allows(signature: &OpSignature, attr: &str, dtype: DType) -> bool {
        let Some(found) = find_type_attr(signature, attr) else {
            return false;
        };
        let Some(allowed) = found.allowed else {
            return true;
        };
        let mut j = 0;
        while j < allowed.len() {
            if allowed[j] as i32 == dtype as i32 {
                return true;
            }
            j += 1;
        }
        false
    }

    /// Whether `signature` has an input or output named `arg` (for
    /// `#[kernel(host_memory(...))]`'s compile-time checks).
    pub const fn has_arg(signature: &OpSignature, arg: &str) -> bool {
        contains(signature.inputs, arg) || contains(signature.outputs, arg)
    }

    /// Whether `signature` has an input named `arg` of dtype `resource` (for a
    /// `#[kernel]` function's `#[resource]` parameters).
    pub const fn has_resource_input(signature: &OpSignature, arg: &str) -> bool {
        contains(signature.resource_inputs, arg)
    }

    /// Whether `signature` has an input named `arg` (of any dtype).
    pub const fn has_input(signature: &OpSignature, arg: &str) -> bool {
        contains(signature.inputs, arg)
    }

    /// Whether the first output of `signature` has dtype `resource` (for a
    /// `#[kernel]` function that returns a resource).
    pub const fn first_output_is_resource(signature: &OpSignature) -> bool {
        !signature.outputs.is_empty()
            && !signature.resource_outputs.is_empty()
            && str_eq(signature.outputs[0], signature.resource_outputs[0])
    }
}
