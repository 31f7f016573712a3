//! Stage 2: the parsed models checked, with every error on the author's
//! token and as many errors as can be found reported together.

use op_spec::OpDef;
use proc_macro2::Span;

use crate::parse::FlagArgs;
use crate::runtime_path::RuntimePath;
use crate::spec::{Flags, OpSpec};

mod attr;
mod gradient;
mod kernel;
mod kernel_fn;
mod lite_kernel;
mod op;
mod register_op;
mod shape_fn;
mod signature;
mod types;

pub use gradient::{CheckedGradient, gradient};
pub use kernel::{CheckedKernel, KernelBody, kernel};
pub use lite_kernel::{CheckedLiteKernel, LiteOpName, lite_kernel};
pub use op::{CheckedFnOp, fn_op};
pub use register_op::register_op;
pub use signature::{Element, FnSignature, Output, Param, ReturnValue};

fn error(span: Span, message: impl std::fmt::Display) -> darling::Error {
    darling::Error::custom(message).with_span(&span)
}

/// A check that failed: every error, and the model to generate stand-in
/// code from when one could be made, so that code using the item reports
/// nothing more (one mistake, one error).
pub struct Failed<T> {
    pub errors: darling::Error,
    pub stand_in: Option<Box<T>>,
}

impl<T> From<darling::Error> for Failed<T> {
    fn from(errors: darling::Error) -> Self {
        Failed {
            errors,
            stand_in: None,
        }
    }
}

/// A struct field or function parameter that receives an attr's value.
#[derive(Clone, Debug)]
pub struct AttrField {
    pub ident: syn::Ident,
    pub attr: String,
    /// The field's type in the generated struct (owned).
    pub ty: syn::Type,
}

/// A checked op: its registration and the Rust items around it.
#[derive(Clone, Debug)]
pub struct CheckedOp {
    pub ident: syn::Ident,
    pub vis: syn::Visibility,
    pub spec: OpSpec,
    pub def: OpDef,
    pub fields: Vec<AttrField>,
    /// Whether the struct has no fields (`struct Foo;`).
    pub unit: bool,
    /// The snake_case wrapper function to generate, if any.
    pub wrapper: Option<syn::Ident>,
    /// The shape function, if any.
    pub shape_fn: Option<ShapeFnModel>,
    /// Where generated code finds the runtime.
    pub runtime: RuntimePath,
}

/// Where an op's shape function comes from.
#[derive(Clone, Debug)]
pub enum ShapeFnModel {
    /// `shape = "unchanged"`: a function of `op_core::shape_inference::library`.
    Library(syn::Ident),
    /// `shape_fn = my_fn` or a closure.
    Custom(Box<syn::Expr>),
}
/// The flags as the spec model holds them.
fn flags(args: &FlagArgs) -> Flags {
    Flags {
        stateful: args.stateful.is_present(),
        commutative: args.commutative.is_present(),
        aggregate: args.aggregate.is_present(),
        allows_uninitialized_input: args.allows_uninitialized_input.is_present(),
        distributed_communication: args.distributed_communication.is_present(),
        deprecated: args
            .deprecated
            .as_ref()
            .map(|d| (d.version, d.explanation.value())),
        not_differentiable: args.not_differentiable.is_present(),
    }
}
