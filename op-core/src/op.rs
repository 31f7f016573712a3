//! [`Op`]: a Rust type standing for a registered op, as `#[register_op]`
//! and `#[op]` generate, with the data `#[kernel]` and `#[gradient]` check
//! at compile time.

use op_spec::{DType, OpDef, SpecErrors};

/// A Rust type that stands for an op: the struct `#[register_op]` is
/// written on, or the struct `#[op]` generates for a function.
///
/// `#[kernel(op = ZeroOut, ...)]` names such a type, so that its type
/// constraints and `host_memory` args are checked at compile time against
/// [`SIGNATURE`](Self::SIGNATURE); so does `#[gradient(op = ZeroOut)]`, for
/// the number of gradients its function returns.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an op",
    label = "not an op type",
    note = "an op type is a struct with `#[register_op(...)]`, or the struct `#[op]` generates from a function (`times_two` declares `TimesTwo`)",
    note = "for an op declared elsewhere (another crate, `op_def!`, a hand-written registration), name it by its registered name: `op = \"MyOp\"`"
)]
pub trait Op {
    /// The op's registered name.
    const NAME: &'static str;
    /// The op's type attrs and arg names, for compile-time checks of kernels
    /// and gradients.
    const SIGNATURE: OpSignature;
    /// Builds the op's definition from its spec strings. Cannot fail for an
    /// op declared with the macros: they ran the same parser at compile time.
    fn op_def() -> Result<OpDef, SpecErrors>;
}

/// What kernels and gradients need to know about an op at compile time.
#[derive(Clone, Copy, Debug)]
pub struct OpSignature {
    /// The `type` and `list(type)` attrs.
    pub type_attrs: &'static [TypeAttrSignature],
    /// The input arg names, in order.
    pub inputs: &'static [&'static str],
    /// The inputs that are lists of tensors (`N * T`, or a `list(type)`
    /// attr): a subset of `inputs`. An op with any has a number of input
    /// tensors known only per node.
    pub list_inputs: &'static [&'static str],
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

/// The compile-time checks `#[kernel]` and `#[gradient]` generate, as
/// `const` assertions
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

    /// Whether a gradient function returning an array of `returned`
    /// gradients fits an op of `signature` (for `#[gradient]`'s
    /// compile-time check): one per input, and no list input, since a list
    /// input's number of tensors is known only per node (such an op's
    /// gradient function returns a `Vec`).
    pub const fn gradient_count_matches(signature: &OpSignature, returned: usize) -> bool {
        signature.list_inputs.is_empty() && signature.inputs.len() == returned
    }

    /// Why a gradient function returning an array of `returned` gradients
    /// does not fit op `op` of `signature`, and how to fix it (what
    /// `#[gradient]`'s compile-time check panics with).
    pub const fn gradient_count_message(
        op: &str,
        signature: &OpSignature,
        returned: usize,
    ) -> ConstMessage {
        let message = ConstMessage::EMPTY.push("op `").push(op).push("`");
        if !signature.list_inputs.is_empty() {
            return message
                .push(" has list inputs (")
                .push_names(signature.list_inputs)
                .push("), whose number of tensors is known only per node: return `Result<Vec<Option<V>>>`, one gradient per input tensor (flattened), instead of an array");
        }
        let message = message.push(" has ").push_count(signature.inputs.len());
        let message = if signature.inputs.is_empty() {
            message.push(" inputs")
        } else {
            message
                .push(" input(s) (")
                .push_names(signature.inputs)
                .push(")")
        };
        message
            .push(" but the gradient function returns ")
            .push_count(returned)
            .push(": return one `Option<V>` per input, in the op's order (`None` for an input that receives no gradient)")
    }

    /// A message built in a `const` context, where `format!` is not
    /// available: what a compile-time check panics with when the message
    /// needs numbers or names from an op's signature. Text past 512 bytes
    /// is cut, with `...`.
    #[derive(Clone, Copy, Debug)]
    pub struct ConstMessage {
        bytes: [u8; ConstMessage::CAPACITY],
        len: usize,
        cut: bool,
    }

    impl ConstMessage {
        const CAPACITY: usize = 512;
        const CUT: &str = "...";

        /// No text yet.
        pub const EMPTY: ConstMessage = ConstMessage {
            bytes: [0; ConstMessage::CAPACITY],
            len: 0,
            cut: false,
        };

        /// The message with `text` appended (whole, or `...` and nothing
        /// more once full, so that a character is never split).
        pub const fn push(mut self, text: &str) -> Self {
            if self.cut {
                return self;
            }
            let text = text.as_bytes();
            if self.len + text.len() > Self::CAPACITY - Self::CUT.len() {
                self.cut = true;
                return self.push_bytes(Self::CUT.as_bytes());
            }
            self.push_bytes(text)
        }

        const fn push_bytes(mut self, bytes: &[u8]) -> Self {
            let mut i = 0;
            while i < bytes.len() {
                self.bytes[self.len] = bytes[i];
                self.len += 1;
                i += 1;
            }
            self
        }

        /// The message with `n` appended in decimal.
        pub const fn push_count(self, n: usize) -> Self {
            let mut digits = [0u8; 20];
            let (mut n, mut start) = (n, digits.len());
            loop {
                start -= 1;
                digits[start] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            match core::str::from_utf8(digits.split_at(start).1) {
                Ok(text) => self.push(text),
                Err(_) => self,
            }
        }

        /// The message with `names` appended, each in backquotes, separated
        /// by commas: `` `x`, `y` ``.
        pub const fn push_names(mut self, names: &[&str]) -> Self {
            let mut i = 0;
            while i < names.len() {
                if i > 0 {
                    self = self.push(", ");
                }
                self = self.push("`").push(names[i]).push("`");
                i += 1;
            }
            self
        }

        /// The text so far.
        pub const fn as_str(&self) -> &str {
            match core::str::from_utf8(self.bytes.split_at(self.len).0) {
                Ok(text) => text,
                // Only whole `&str`s are appended, so the bytes are UTF-8.
                Err(_) => "",
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::checks::{ConstMessage, gradient_count_matches, gradient_count_message};
    use super::{OpSignature, TypeAttrSignature};

    const fn signature(
        inputs: &'static [&'static str],
        list_inputs: &'static [&'static str],
    ) -> OpSignature {
        OpSignature {
            type_attrs: &[TypeAttrSignature {
                name: "T",
                allowed: None,
            }],
            inputs,
            outputs: &["y"],
            list_inputs,
            resource_inputs: &[],
            resource_outputs: &[],
        }
    }

    #[test]
    fn a_const_message_writes_counts_in_decimal() {
        for n in [0, 7, 10, 1234, usize::MAX] {
            let message = ConstMessage::EMPTY.push("n=").push_count(n);
            assert_eq!(message.as_str(), format!("n={n}"));
        }
    }

    #[test]
    fn a_const_message_lists_names_in_backquotes() {
        let message = ConstMessage::EMPTY.push_names(&["x", "y", "z"]);
        assert_eq!(message.as_str(), "`x`, `y`, `z`");
        assert_eq!(ConstMessage::EMPTY.push_names(&[]).as_str(), "");
    }

    #[test]
    fn a_long_const_message_is_cut_between_pieces_with_dots() {
        let mut message = ConstMessage::EMPTY;
        for _ in 0..200 {
            message = message.push("é, ");
        }
        let text = message.as_str();
        assert!(text.len() <= 512, "{}", text.len());
        assert!(text.ends_with("é, ..."), "{text}");
        // Once cut, nothing more is appended.
        assert_eq!(message.push("more").as_str(), text);
    }

    #[test]
    fn a_gradient_count_matches_only_the_number_of_inputs_without_lists() {
        const TWO: OpSignature = signature(&["x", "y"], &[]);
        const LIST: OpSignature = signature(&["values"], &["values"]);
        assert!(gradient_count_matches(&TWO, 2));
        assert!(!gradient_count_matches(&TWO, 1));
        assert!(!gradient_count_matches(&TWO, 3));
        assert!(!gradient_count_matches(&LIST, 1));
    }

    #[test]
    fn the_gradient_count_message_names_the_inputs_or_the_list_inputs() {
        const TWO: OpSignature = signature(&["x", "y"], &[]);
        const NONE: OpSignature = signature(&[], &[]);
        const LIST: OpSignature = signature(&["values", "axis"], &["values"]);
        assert_eq!(
            gradient_count_message("Plus", &TWO, 1).as_str(),
            "op `Plus` has 2 input(s) (`x`, `y`) but the gradient function returns 1: return one `Option<V>` per input, in the op's order (`None` for an input that receives no gradient)"
        );
        assert!(
            gradient_count_message("Const", &NONE, 1)
                .as_str()
                .starts_with("op `Const` has 0 inputs but the gradient function returns 1:")
        );
        assert!(
            gradient_count_message("Concat", &LIST, 2)
                .as_str()
                .starts_with("op `Concat` has list inputs (`values`), whose number of tensors is known only per node: return `Result<Vec<Option<V>>>`")
        );
    }
}
