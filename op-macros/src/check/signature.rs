//! The one signature model of the functions the macros wrap (pyo3's
//! `FnSpec`): a `#[kernel]` function and an `#[op]` function are both
//! read into a [`FnSignature`], whose parameters and return are classified
//! once, here. Each macro then applies its own rules on what it accepts
//! (`kernel_fn.rs`, `op.rs`), and one adapter generator
//! (`expand/adapter.rs`) feeds every kind of parameter and stores every
//! kind of return.

use op_spec::DType;
use proc_macro2::Span;
use syn::spanned::Spanned;

use super::AttrField;
use super::attr::attr_kind;
use super::error;
use crate::dtypes;

/// A wrapped function's signature, classified.
#[derive(Clone, Debug)]
pub struct FnSignature {
    /// The parameters, in order.
    pub params: Vec<Param>,
    pub returns: Returns,
}

/// What one parameter receives.
#[derive(Clone, Debug)]
pub enum Param {
    /// `ctx: &mut KernelContext<'_>`: the call's context.
    Context,
    /// `ctx: &mut GpuContext<'_, '_>`: a device's view of the call's
    /// context, made through `FromKernelContext` (the type as written).
    DeviceContext(Box<syn::Type>),
    /// `attrs: &MyOp`: the op's attrs struct, parsed once per node.
    Attrs(Box<syn::Type>),
    /// `#[resource] table: &MyTable`: the resource an input's handle
    /// refers to, resolved on each call.
    Resource {
        /// The input holding the handle.
        input: syn::LitStr,
        /// The resource type (`MyTable`).
        ty: Box<syn::Type>,
    },
    /// A tensor input: `x: ArrayViewD<'_, T>`, or a list input
    /// `xs: &[ArrayViewD<'_, T>]`.
    Tensor {
        ident: syn::Ident,
        element: Element,
        list: bool,
    },
    /// One attr: `axis: i64`, read once when the kernel is created, passed
    /// by reference for `&str` and `&[T]`.
    Attr { field: Box<AttrField>, by_ref: bool },
}

/// What the function returns.
#[derive(Clone, Debug)]
pub struct Returns {
    /// Whether it is a `Result` (whose error goes to the caller).
    pub fallible: bool,
    pub value: ReturnValue,
}

/// The value returned, inside any `Result`.
#[derive(Clone, Debug)]
pub enum ReturnValue {
    /// `()`: the function set its outputs itself.
    Nothing,
    /// A value the runtime stores in output 0 (`op_core::kernel::KernelReturn`:
    /// `Tensor`, or `Arc<R>` for an owning resource handle).
    Stored(Box<syn::Type>),
    /// Arrays and scalars, one per output (a tuple returns several).
    Outputs(Vec<Output>),
}

/// One output of an `#[op]` function.
#[derive(Clone, Debug)]
pub struct Output {
    pub element: Element,
    /// A scalar (`-> T`) rather than an array (`-> ArrayD<T>`).
    pub scalar: bool,
    /// The type as written, for errors.
    pub span: Span,
}

/// The element type of a tensor in a signature.
#[derive(Clone, Debug)]
pub enum Element {
    /// A generic parameter, i.e. a type attr.
    Generic(syn::Ident),
    /// A fixed dtype.
    Fixed(DType, Box<syn::Type>),
}

impl Element {
    /// The element type as a spec writes it: `T` or `float`.
    pub fn spec_text(&self) -> String {
        match self {
            Element::Generic(g) => g.to_string(),
            Element::Fixed(d, _) => d.spec_name().to_owned(),
        }
    }

    /// The token that named the element type.
    pub fn span(&self) -> Span {
        match self {
            Element::Generic(g) => g.span(),
            Element::Fixed(_, ty) => ty.span(),
        }
    }
}

impl FnSignature {
    /// A signature that could not be read, for a check that goes on to
    /// find other errors.
    pub fn unknown() -> Self {
        FnSignature {
            params: Vec::new(),
            returns: Returns {
                fallible: true,
                value: ReturnValue::Nothing,
            },
        }
    }

    /// The type of the attrs the kernel is created with: the attrs
    /// struct a parameter takes, if any.
    pub fn attrs_ty(&self) -> Option<&syn::Type> {
        self.params.iter().find_map(|p| match p {
            Param::Attrs(ty) => Some(&**ty),
            _ => None,
        })
    }

    /// Whether the adapter reads or writes tensors of the function's type
    /// parameters, which then need the `Element` bound.
    pub fn uses_elements(&self) -> bool {
        self.params
            .iter()
            .any(|p| matches!(p, Param::Tensor { .. }))
            || matches!(&self.returns.value, ReturnValue::Outputs(o) if !o.is_empty())
    }
}

/// What a parameter's type makes it, before any macro's rules: the one
/// reading of a parameter type that both forms share.
pub enum ParamType {
    /// `&mut KernelContext<'_>`.
    Context,
    /// `ArrayViewD<'_, E>` or `&[ArrayViewD<'_, E>]`.
    Tensor { element: Element, list: bool },
    /// A type an attr is read as: `i64`, `&str` (read as `String`) or
    /// `&[i64]` (read as `Vec<i64>`).
    Attr { owned: syn::Type, by_ref: bool },
    /// Anything else.
    Other,
}

/// The names of a tensor view type.
pub const VIEW_NAMES: &[&str] = &["ArrayViewD", "ArrayView"];
/// The names of an owned array type.
const ARRAY_NAMES: &[&str] = &["ArrayD", "Array"];

/// Classifies a parameter's type; `generics` are the function's type
/// parameters, which stand for element types.
pub fn param_type(ty: &syn::Type, generics: &[syn::Ident]) -> ParamType {
    if is_context(ty, "KernelContext", true) {
        return ParamType::Context;
    }
    let (view, list) = view_of(ty);
    if let Some(element) = view.and_then(|t| array_element(t, VIEW_NAMES, generics)) {
        return ParamType::Tensor { element, list };
    }
    let (owned, by_ref): (syn::Type, bool) = match ty {
        syn::Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
            syn::Type::Path(p) if p.path.is_ident("str") => {
                (syn::parse_quote!(::std::string::String), true)
            }
            syn::Type::Slice(s) => {
                let elem = &s.elem;
                (syn::parse_quote!(::std::vec::Vec<#elem>), true)
            }
            other => (other.clone(), true),
        },
        other => (other.clone(), false),
    };
    if attr_kind(&owned).is_some() {
        return ParamType::Attr { owned, by_ref };
    }
    ParamType::Other
}

/// The type a tensor view would be, and whether it is a list: `&[V]` is a
/// list of `V`, and a type other than a reference may be one view.
pub fn view_of(ty: &syn::Type) -> (Option<&syn::Type>, bool) {
    match ty {
        syn::Type::Reference(r) => match &*r.elem {
            syn::Type::Slice(s) => (Some(&*s.elem), true),
            _ => (None, false),
        },
        other => (Some(other), false),
    }
}

/// A returned type read past any `Result`: whether it was one, and the
/// value type inside.
pub fn split_result(ty: &syn::Type) -> (bool, &syn::Type) {
    match result_inner(ty) {
        Some(inner) => (true, inner),
        None => (false, ty),
    }
}

/// Whether `ty` is `()`.
pub fn is_unit(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Tuple(t) if t.elems.is_empty())
}

/// One returned array (`ArrayD<T>`) or scalar (`T`, `f32`).
pub fn output(ty: &syn::Type, generics: &[syn::Ident]) -> Option<Output> {
    let span = ty.span();
    if let Some(element) = array_element(ty, ARRAY_NAMES, generics) {
        return Some(Output {
            element,
            scalar: false,
            span,
        });
    }
    element_of(ty, generics).map(|element| Output {
        element,
        scalar: true,
        span,
    })
}

fn element_of(ty: &syn::Type, generics: &[syn::Ident]) -> Option<Element> {
    if let syn::Type::Path(p) = ty
        && let Some(ident) = p.path.get_ident()
        && generics.contains(ident)
    {
        return Some(Element::Generic(ident.clone()));
    }
    dtypes::dtype_of_rust_type(ty).map(|d| Element::Fixed(d, Box::new(ty.clone())))
}

/// The element type of `ArrayViewD<'_, E>` / `ArrayD<E>` / `Array<E, D>`.
fn array_element(ty: &syn::Type, names: &[&str], generics: &[syn::Ident]) -> Option<Element> {
    dtypes::type_args(ty, names)?.find_map(|t| element_of(t, generics))
}

/// `T` in `Result<T>` / `Result<T, E>`.
pub fn result_inner(ty: &syn::Type) -> Option<&syn::Type> {
    dtypes::type_args(ty, &["Result"])?.next()
}

fn last_segment_is(ty: &syn::Type, name: &str) -> bool {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == name),
        _ => false,
    }
}

/// Whether `ty` is `&Context` (or `&mut Context`, per `mutable`), for
/// `KernelContext` and `KernelConstruction`.
pub fn is_context(ty: &syn::Type, context: &str, mutable: bool) -> bool {
    match ty {
        syn::Type::Reference(r) => {
            r.mutability.is_some() == mutable && last_segment_is(&r.elem, context)
        }
        _ => false,
    }
}

/// [`is_context`] of a parameter, `self` never being one.
pub fn is_context_param(arg: &syn::FnArg, context: &str, mutable: bool) -> bool {
    match arg {
        syn::FnArg::Typed(p) => is_context(&p.ty, context, mutable),
        syn::FnArg::Receiver(_) => false,
    }
}

/// The runtime calls kernels through plain function pointers on its own
/// threads: nothing async, unsafe, const or of another ABI can be one.
pub fn check_plain_signature(sig: &syn::Signature, errors: &mut darling::error::Accumulator) {
    if let Some(t) = &sig.asyncness {
        errors.push(error(t.span(), "a kernel cannot be async: remove `async`"));
    }
    if let Some(t) = &sig.unsafety {
        errors.push(error(
            t.span(),
            "a kernel cannot be unsafe: remove `unsafe`",
        ));
    }
    if let Some(t) = &sig.constness {
        errors.push(error(t.span(), "a kernel cannot be const: remove `const`"));
    }
    if let Some(abi) = &sig.abi {
        errors.push(error(abi.span(), "a kernel cannot have an ABI: remove it"));
    }
}

/// A kernel's errors must reach the caller as `op_core::Error`s, so a
/// kernel function (and an impl's `new` and `compute`) returns a `Result`.
pub fn check_result_output(
    sig: &syn::Signature,
    what: &str,
    errors: &mut darling::error::Accumulator,
) {
    match &sig.output {
        syn::ReturnType::Type(_, ty) if last_segment_is(ty, "Result") => {}
        syn::ReturnType::Type(_, ty) => errors.push(error(
            ty.span(),
            format!("{what} must return `op_core::Result<..>` so that errors reach the caller"),
        )),
        syn::ReturnType::Default => errors.push(error(
            sig.ident.span(),
            format!("{what} must return `op_core::Result<..>`: add `-> Result<()>` and end with `Ok(())`"),
        )),
    }
}
