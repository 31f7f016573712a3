//! `#[kernel]`: a kernel function or an inherent impl, checked against
//! its arguments.

use op_spec::DeviceType;
use proc_macro2::Span;
use syn::spanned::Spanned;

use super::error;
use super::kernel_fn::kernel_fn_signature;
use super::signature::{FnSignature, check_plain_signature, check_result_output, is_context_param};
use super::types::{TypeCombos, type_combos};
use crate::dtypes;
use crate::parse::{KernelArgs, OpRef};
use crate::runtime_path::RuntimePath;

/// A kernel's code: a function, or an inherent impl with `new` and `compute`.
#[derive(Clone, Debug)]
pub enum KernelBody {
    Fn {
        item: Box<syn::ItemFn>,
        signature: FnSignature,
    },
    Impl {
        item: Box<syn::ItemImpl>,
    },
}

impl KernelBody {
    /// The generics the type combinations instantiate.
    pub fn generics(&self) -> &syn::Generics {
        match self {
            KernelBody::Fn { item, .. } => &item.sig.generics,
            KernelBody::Impl { item } => &item.generics,
        }
    }

    /// The kernel's name in messages, before its types: the function's,
    /// or the last segment of the impl's type.
    pub fn name(&self) -> String {
        match self {
            KernelBody::Fn { item, .. } => item.sig.ident.to_string(),
            KernelBody::Impl { item } => match &*item.self_ty {
                syn::Type::Path(p) => p
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default(),
                other => quote::quote!(#other).to_string(),
            },
        }
    }
}

/// A checked `#[kernel]`.
#[derive(Clone, Debug)]
pub struct CheckedKernel {
    pub op: OpRef,
    pub device: DeviceType,
    pub types: TypeCombos,
    pub host_memory: Vec<syn::LitStr>,
    pub body: KernelBody,
    /// Where generated code finds the runtime.
    pub runtime: RuntimePath,
}

/// `#[kernel]` on `item`: the op, device and types of its arguments, then
/// its code, then the code's generics against the types. Takes the
/// `#[resource]` attributes out of a function's parameters.
pub fn kernel(args: &KernelArgs, item: syn::Item) -> darling::Result<CheckedKernel> {
    let mut errors = darling::Error::accumulator();
    let op = errors.handle(kernel_op(args));
    let device = errors
        .handle(kernel_device(args))
        .unwrap_or(DeviceType::Cpu);
    // On an error in `types(...)`, the kernel's generics are not compared
    // with it: that would only repeat the error.
    let types = errors.handle(type_combos(&args.types, Some("T")));
    let Some(body) = kernel_body(item, op.as_ref(), &mut errors) else {
        errors.finish()?;
        unreachable!("an error was pushed");
    };
    check_no_const_generics(body.generics(), &mut errors);
    if let Some(types) = &types {
        errors.handle(check_type_params_match_types(body.generics(), types));
        errors.handle(check_generic_for_several_types(&body, types));
    }
    errors.finish()?;
    Ok(CheckedKernel {
        op: op.expect("no errors, so an op was given"),
        device,
        types: types.unwrap_or_else(TypeCombos::none),
        host_memory: args.host_memory.0.clone(),
        body,
        runtime: RuntimePath::new(args.krate.as_ref().map(|k| &k.0)),
    })
}

/// A kernel is registered for one op, so it must say which; by type the
/// op is checked at compile time, by name when the registry is built.
fn kernel_op(args: &KernelArgs) -> darling::Result<OpRef> {
    args.op.clone().ok_or_else(|| {
        error(
            Span::call_site(),
            "say which op this kernel implements: `#[kernel(op = MyOp)]` (the op's Rust type, checked at compile time) or `#[kernel(op = \"MyOp\")]` (its registered name)",
        )
    })
}

/// The device is one the runtime knows (`op_spec::DeviceType`, lowercase
/// as registrations and messages spell it); CPU when not given.
fn kernel_device(args: &KernelArgs) -> darling::Result<DeviceType> {
    let Some(device) = &args.device else {
        return Ok(DeviceType::Cpu);
    };
    let names = DeviceType::ALL.map(DeviceType::name);
    let value = device.value();
    if let Some(i) = names.iter().position(|n| *n == value) {
        return Ok(DeviceType::ALL[i]);
    }
    let hint = op_spec::suggest::closest(&value, names)
        .map(|s| format!("did you mean \"{s}\"? "))
        .unwrap_or_default();
    let list: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    Err(error(
        device.span(),
        format!(
            "unknown device \"{value}\": {hint}the devices are {}",
            list.join(" and ")
        ),
    ))
}

/// A kernel is a function or an inherent impl with `new` and `compute`;
/// anything else cannot run. Errors in a function or impl are pushed and
/// it is kept, so that the rest is checked too; for another item, `None`.
fn kernel_body(
    item: syn::Item,
    op: Option<&OpRef>,
    errors: &mut darling::error::Accumulator,
) -> Option<KernelBody> {
    match item {
        syn::Item::Fn(mut f) => {
            let signature = errors.handle(kernel_fn_signature(&mut f.sig, op));
            Some(KernelBody::Fn {
                item: Box::new(f),
                signature: signature.unwrap_or_else(FnSignature::unknown),
            })
        }
        syn::Item::Impl(i) => {
            errors.handle(kernel_impl(&i));
            Some(KernelBody::Impl { item: Box::new(i) })
        }
        other => {
            errors.push(error(
                item_keyword_span(&other),
                "`#[kernel]` goes on a function `fn k<T>(ctx: &mut KernelContext<'_>, attrs: &Op) -> Result<()>` or on an inherent impl with `fn new(..)` and `fn compute(&self, ..)`",
            ));
            None
        }
    }
}

/// Registrations instantiate the kernel with element types; a const
/// parameter has no attr to take its value from.
fn check_no_const_generics(generics: &syn::Generics, errors: &mut darling::error::Accumulator) {
    if let Some(c) = generics.const_params().next() {
        errors.push(error(
            c.span(),
            "a kernel cannot have const generic parameters",
        ));
    }
}

/// The type parameters take the constrained attrs' types in order, so a
/// generic kernel needs one per constrained attr. A kernel without type
/// parameters may still be registered for chosen types (TensorFlow's
/// `ZeroOutInt32Op` with `TypeConstraint<int32>`).
fn check_type_params_match_types(
    generics: &syn::Generics,
    types: &TypeCombos,
) -> darling::Result<()> {
    let type_params: Vec<&syn::TypeParam> = generics.type_params().collect();
    if type_params.is_empty() || type_params.len() == types.attrs.len() {
        return Ok(());
    }
    let attrs: Vec<&str> = types.attrs.iter().map(|(n, _)| n.as_str()).collect();
    let (span, message) = match (type_params.len(), attrs.len()) {
        (n, 0) => (
            type_params[0].ident.span(),
            format!(
                "the kernel is generic over {n} type(s) but has no `types(...)`: list the types to register, as in `#[kernel(op = .., types(f32, i32))]`"
            ),
        ),
        (n, m) if n < m => (
            types.attrs[n].1,
            format!(
                "`types(...)` constrains {m} attrs ({}) but the kernel has {n} type parameter(s): add a type parameter for `{}`, or remove it from `types(...)` (the type parameters take the attrs' types in order)",
                attrs.join(", "),
                attrs[n],
            ),
        ),
        (n, m) => (
            type_params[m].ident.span(),
            format!(
                "the kernel has {n} type parameters but `types(...)` constrains {m} attr(s) ({}): list the types of this one in `types(...)`, as in `types({} = [f32])`, or remove it",
                attrs.join(", "),
                type_params[m].ident,
            ),
        ),
    };
    Err(error(span, message))
}

/// A kernel without type parameters runs the same code for every type it
/// is registered for, so one registered for several types would read an
/// `f32` kernel's tensors as `i32` too (an error at run time, on the first
/// call of the other type). One type is TensorFlow's `ZeroOutInt32Op`; for
/// several, the kernel is generic (a kernel that never reads elements can
/// take `<T>` and ignore it).
fn check_generic_for_several_types(body: &KernelBody, types: &TypeCombos) -> darling::Result<()> {
    if body.generics().type_params().next().is_some() || types.combos.len() < 2 {
        return Ok(());
    }
    let mut listed: Vec<String> = types
        .combos
        .iter()
        .map(|combo| {
            let names: Vec<&str> = combo.iter().map(|(d, _)| dtypes::rust_name(*d)).collect();
            one_or_tuple(&names)
        })
        .collect();
    let count = listed.len();
    if count > 4 {
        listed.truncate(3);
        listed.push("...".to_owned());
    }
    let unit = if types.attrs.len() > 1 {
        "type combination"
    } else {
        "type"
    };
    let params: Vec<String> = match types.attrs.as_slice() {
        [_] => vec!["T: Element".to_owned()],
        attrs => (0..attrs.len()).map(|i| format!("T{i}: Element")).collect(),
    };
    let params = params.join(", ");
    let (span, name, generic) = match body {
        KernelBody::Fn { item, .. } => (
            item.sig.ident.span(),
            format!("`{}`", item.sig.ident),
            format!("`fn {}<{params}>(..)`", item.sig.ident),
        ),
        KernelBody::Impl { item } => (
            item.self_ty.span(),
            format!("`{}`", body.name()),
            format!("`impl<{params}> {}<..>`", body.name()),
        ),
    };
    Err(error(
        span,
        format!(
            "`types(...)` registers this kernel for {count} {unit}s ({}), but {name} is not generic, so each of them would run the same code: make it generic over the element type, {generic} (one instantiation per {unit}), or list one {unit}",
            listed.join(", "),
        ),
    ))
}

/// `a`, or `(a, b)` for a combination of several attrs' types.
fn one_or_tuple(names: &[&str]) -> String {
    match names {
        [one] => (*one).to_owned(),
        _ => format!("({})", names.join(", ")),
    }
}

/// The method `name` of a kernel impl, which the generated `OpKernel`
/// impl calls, so it must exist (`missing` says how to write it), be
/// plain and return a `Result`.
fn impl_method<'i>(
    item: &'i syn::ItemImpl,
    name: &str,
    missing: &str,
    errors: &mut darling::error::Accumulator,
) -> Option<&'i syn::ImplItemFn> {
    let method = item.items.iter().find_map(|i| match i {
        syn::ImplItem::Fn(f) if f.sig.ident == name => Some(f),
        _ => None,
    });
    let Some(method) = method else {
        errors.push(error(item.self_ty.span(), missing));
        return None;
    };
    check_plain_signature(&method.sig, errors);
    check_result_output(&method.sig, &format!("`{name}`"), errors);
    Some(method)
}

/// `new` runs once per node, with the node's attrs and nothing else.
fn check_new_params(sig: &syn::Signature, errors: &mut darling::error::Accumulator) {
    let ok = sig.inputs.len() == 1
        && sig
            .inputs
            .first()
            .is_some_and(|a| is_context_param(a, "KernelConstruction", false));
    if !ok {
        errors.push(error(
            sig.inputs.span(),
            "`new` takes one parameter, `ctx: &KernelConstruction<'_>`",
        ));
    }
}

/// One kernel serves concurrent calls, so `compute` takes `&self` (state
/// that changes lives behind a lock or an atomic) and the call's context.
fn check_compute_params(sig: &syn::Signature, errors: &mut darling::error::Accumulator) {
    let params: Vec<&syn::FnArg> = sig.inputs.iter().collect();
    let ok = matches!(params.as_slice(), [syn::FnArg::Receiver(r), ctx]
        if r.reference.is_some() && r.mutability.is_none() && is_context_param(ctx, "KernelContext", true));
    if let Some(syn::FnArg::Receiver(r)) = params.first()
        && r.reference.is_some()
        && let Some(m) = r.mutability
    {
        errors.push(error(
            m.span,
            "`compute` takes `&self`, not `&mut self`: one kernel serves concurrent calls; keep changing state in a `Mutex` or an atomic",
        ));
    } else if !ok {
        errors.push(error(
            sig.inputs.span(),
            "`compute` takes `&self` and `ctx: &mut KernelContext<'_>` (kernels run concurrently, so not `&mut self`)",
        ));
    }
}

/// The span of an item's keyword (`struct`, `enum`, ...), for errors about
/// what kind of item it is.
fn item_keyword_span(item: &syn::Item) -> Span {
    match item {
        syn::Item::Struct(i) => i.struct_token.span,
        syn::Item::Enum(i) => i.enum_token.span,
        syn::Item::Trait(i) => i.trait_token.span,
        syn::Item::Mod(i) => i.mod_token.span,
        syn::Item::Const(i) => i.const_token.span,
        syn::Item::Static(i) => i.static_token.span,
        syn::Item::Type(i) => i.type_token.span,
        other => other.span(),
    }
}

/// Checks an `impl` for a struct kernel: inherent, with `new` and `compute`.
fn kernel_impl(item: &syn::ItemImpl) -> darling::Result<()> {
    let mut errors = darling::Error::accumulator();
    if let Some((_, path, _)) = &item.trait_ {
        errors.push(error(
            path.span(),
            format!(
                "`#[kernel]` goes on an inherent impl (`impl MyKernel {{ fn new(..); fn compute(..) }}`); it implements `{}` for you",
                quote::quote!(#path).to_string().replace(' ', "")
            ),
        ));
        return errors.finish();
    }
    if let Some(new) = impl_method(
        item,
        "new",
        "a kernel impl needs `fn new(ctx: &KernelConstruction<'_>) -> Result<Self>`, which reads and checks the attrs once",
        &mut errors,
    ) {
        check_new_params(&new.sig, &mut errors);
    }
    if let Some(compute) = impl_method(
        item,
        "compute",
        "a kernel impl needs `fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()>`",
        &mut errors,
    ) {
        check_compute_params(&compute.sig, &mut errors);
    }
    check_may_block(item, &mut errors);
    errors.finish()
}

/// An impl's optional `fn may_block`, which the macro forwards to
/// `OpKernel::may_block`, must have that method's signature.
fn check_may_block(item: &syn::ItemImpl, errors: &mut darling::error::Accumulator) {
    let Some(sig) = item.items.iter().find_map(|i| match i {
        syn::ImplItem::Fn(f) if f.sig.ident == "may_block" => Some(&f.sig),
        _ => None,
    }) else {
        return;
    };
    let params: Vec<&syn::FnArg> = sig.inputs.iter().collect();
    let takes_self = matches!(params.as_slice(), [syn::FnArg::Receiver(r)]
        if r.reference.is_some() && r.mutability.is_none());
    let returns_bool = matches!(&sig.output, syn::ReturnType::Type(_, ty)
        if matches!(&**ty, syn::Type::Path(p) if p.path.is_ident("bool")));
    if !takes_self || !returns_bool {
        errors.push(error(
            sig.ident.span(),
            "a kernel impl's `may_block` is `fn may_block(&self) -> bool`: whether `compute` may wait for another kernel (the macro forwards it to `OpKernel::may_block`)",
        ));
    }
}
