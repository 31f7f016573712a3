//! `#[kernel]` on a function: its rules on the shared signature model.
//! The context comes first, then optionally the attrs struct and
//! resources; the return is `Result<()>` or a value stored in output 0.

use syn::spanned::Spanned;

use super::error;
use super::signature::{
    Element, FnSignature, Param, ParamType, ReturnValue, Returns, check_plain_signature,
    check_result_output, is_context_param, is_unit, param_type, split_result,
};
use crate::parse::{OpRef, take_resource_options};

/// How messages write the attrs parameter of a kernel of `op`, the op the
/// author named: `` `attrs: &ZeroOut` ``. By name, the struct is the one
/// `#[register_op]` declares the name on, by default the name's last part.
fn attrs_param_example(op: Option<&OpRef>) -> String {
    match op {
        Some(OpRef::Path(path)) => format!(
            "`attrs: &{}`",
            quote::quote!(#path).to_string().replace(' ', "")
        ),
        Some(OpRef::Name(name)) => {
            let name = name.value();
            let last = name.rsplit('>').next().unwrap_or(&name);
            format!("`attrs: &{last}` (the struct that declares op \"{name}\")")
        }
        None => "`attrs: &MyOp` (the op's struct)".to_owned(),
    }
}

/// Checks `fn k<T>(ctx: &mut KernelContext<'_>[, attrs: &A][, #[resource]
/// r: &R ...]) -> Result<()>` (or `Result<Tensor>`, `Result<Arc<R>>`),
/// taking the `#[resource]` attributes out of the signature. Messages name
/// `op`, the op the kernel is for (when the author gave one).
pub fn kernel_fn_signature(
    sig: &mut syn::Signature,
    op: Option<&OpRef>,
) -> darling::Result<FnSignature> {
    let attrs_example = attrs_param_example(op);
    let mut errors = darling::Error::accumulator();
    check_plain_signature(sig, &mut errors);
    check_result_output(sig, "a kernel function", &mut errors);
    let mut signature = FnSignature {
        params: Vec::new(),
        returns: kernel_returns(&sig.output),
    };
    let paren_span = sig.paren_token.span.join();
    let mut params = sig.inputs.iter_mut();
    match params.next() {
        None => errors.push(error(
            paren_span,
            format!("a kernel function takes `ctx: &mut KernelContext<'_>` (or a device's context, `ctx: &mut GpuContext<'_, '_>`), then optionally {attrs_example} and resources marked `#[resource]` (`#[resource] table: &MyTable`)"),
        )),
        Some(syn::FnArg::Receiver(r)) => {
            let span = r.self_token.span;
            errors.push(error(span, "a kernel function cannot take `self`; for a kernel with state, put `#[kernel]` on the impl block, with `fn new(ctx: &KernelConstruction<'_>) -> Result<Self>` and `fn compute(&self, ctx: &mut KernelContext<'_>) -> Result<()>`"));
            return errors.finish_with(signature);
        }
        Some(first) => match device_context(first) {
            Some(ty) => signature.params.push(Param::DeviceContext(ty)),
            None => {
                if !is_context_param(first, "KernelContext", true) {
                    errors.push(error(
                        first.span(),
                        "the first parameter of a kernel function must be `ctx: &mut KernelContext<'_>` (or, for a device kernel, its context: `ctx: &mut GpuContext<'_, '_>`)",
                    ));
                }
                signature.params.push(Param::Context);
            }
        },
    }
    let generics: Vec<syn::Ident> = sig
        .generics
        .type_params()
        .map(|p| p.ident.clone())
        .collect();
    let mut seen = Vec::new();
    for param in params {
        let syn::FnArg::Typed(param) = param else {
            continue;
        };
        let rules = ParamRules {
            has_attrs: signature.attrs_ty().is_some(),
            attrs_example: &attrs_example,
            generics: &generics,
        };
        if let Some(param) = kernel_param(param, &mut seen, &rules, &mut errors) {
            signature.params.push(param);
        }
    }
    errors.finish_with(signature)
}

/// The type of a first parameter `&mut XContext<...>` other than
/// `KernelContext`: a device's context (op-cuda's `GpuContext`), which the
/// adapter makes from the kernel context through `FromKernelContext` (so a
/// type that is no context fails there, naming the trait).
fn device_context(arg: &syn::FnArg) -> Option<Box<syn::Type>> {
    let syn::FnArg::Typed(p) = arg else {
        return None;
    };
    let syn::Type::Reference(r) = &*p.ty else {
        return None;
    };
    r.mutability?;
    let syn::Type::Path(path) = &*r.elem else {
        return None;
    };
    let name = path.path.segments.last()?.ident.to_string();
    (name.ends_with("Context") && name != "KernelContext").then(|| r.elem.clone())
}

/// A kernel function's return: `()` inside the `Result`, or the value the
/// runtime stores in output 0 (`KernelReturn` says which types can be).
fn kernel_returns(output: &syn::ReturnType) -> Returns {
    let syn::ReturnType::Type(_, ty) = output else {
        return Returns {
            fallible: false,
            value: ReturnValue::Nothing,
        };
    };
    let (fallible, inner) = split_result(ty);
    let value = if !fallible || is_unit(inner) {
        ReturnValue::Nothing
    } else {
        ReturnValue::Stored(Box::new(inner.clone()))
    };
    Returns { fallible, value }
}

/// What a parameter after `ctx` is checked against.
struct ParamRules<'a> {
    /// Whether an earlier parameter took the attrs.
    has_attrs: bool,
    /// The attrs parameter as messages write it (`attrs: &ZeroOut`).
    attrs_example: &'a str,
    /// The function's type parameters (element types).
    generics: &'a [syn::Ident],
}

/// One parameter after `ctx`: `#[resource]` (taking the attribute out of
/// the item) or the attrs.
fn kernel_param(
    param: &mut syn::PatType,
    seen: &mut Vec<String>,
    rules: &ParamRules<'_>,
    errors: &mut darling::error::Accumulator,
) -> Option<Param> {
    let options = errors.handle(take_resource_options(&mut param.attrs))?;
    let Some((options, _)) = options else {
        return attrs_param(param, rules, errors);
    };
    let ty = match &*param.ty {
        syn::Type::Reference(r) if r.mutability.is_none() => Some(r.elem.clone()),
        other => {
            errors.push(error(
                other.span(),
                "a `#[resource]` parameter takes the resource by shared reference, as in `table: &MyTable`: other kernels and threads share it, so it guards its own state (a Mutex, RwLock or atomics)",
            ));
            None
        }
    };
    let input = match (&options.input, &*param.pat) {
        (Some(input), _) => Some(input.clone()),
        (None, syn::Pat::Ident(p)) => {
            let name = p.ident.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name);
            Some(syn::LitStr::new(name, p.ident.span()))
        }
        (None, other) => {
            errors.push(error(
                other.span(),
                "a `#[resource]` parameter receives the input of its name: name it like the op's `resource` input, or write `#[resource(input = \"table_handle\")]`",
            ));
            None
        }
    };
    let (input, ty) = (input?, ty?);
    if seen.contains(&input.value()) {
        errors.push(error(
            input.span(),
            format!(
                "input `{}` already has a `#[resource]` parameter: take it once",
                input.value()
            ),
        ));
        return None;
    }
    seen.push(input.value());
    Some(Param::Resource { input, ty })
}

/// The attrs parameter, `attrs: &ZeroOut`: one at most, by shared
/// reference (the kernel borrows the attrs it was created with). A tensor
/// is no parameter of a kernel (as it is of an `#[op]` function): the
/// kernel reads its inputs from `ctx`.
fn attrs_param(
    param: &syn::PatType,
    rules: &ParamRules<'_>,
    errors: &mut darling::error::Accumulator,
) -> Option<Param> {
    let attrs_example = rules.attrs_example;
    if let Some(read) = tensor_read(&param.ty, rules.generics) {
        // At the type's name, past any `&` (a span covers one token).
        let at = match &*param.ty {
            syn::Type::Reference(r) => r.elem.span(),
            other => other.span(),
        };
        errors.push(error(
            at,
            format!("a kernel reads its inputs from `ctx`, as in `{read}`, not from parameters: after `ctx` it takes optionally {attrs_example} and resources marked `#[resource]` (an `#[op]` function is the one that takes its inputs as parameters)"),
        ));
        return None;
    }
    match &*param.ty {
        _ if rules.has_attrs => {
            let name = match &*param.pat {
                syn::Pat::Ident(p) => format!("`{}`", p.ident),
                _ => "this".to_owned(),
            };
            errors.push(error(
                param.span(),
                format!("a kernel function takes one attrs parameter, {attrs_example}, and {name} is a second one: read inputs from `ctx`, and mark a resource parameter `#[resource]` (`#[resource] table: &MyTable`)"),
            ));
            None
        }
        syn::Type::Reference(r) if r.mutability.is_none() => Some(Param::Attrs(r.elem.clone())),
        other => {
            errors.push(error(
                other.span(),
                format!("a kernel takes the op's attrs by shared reference, {attrs_example} (and a resource as `#[resource] table: &MyTable`)"),
            ));
            None
        }
    }
}

/// How a kernel reads the input that a parameter of type `ty` would be:
/// `ctx.input_view::<T>(0)?` for an array view, `ctx.input(0)?` for a
/// tensor; `None` for a type that is no input.
fn tensor_read(ty: &syn::Type, generics: &[syn::Ident]) -> Option<String> {
    if let ParamType::Tensor { element, list } = param_type(ty, generics) {
        let element = match &element {
            Element::Generic(g) => g.to_string(),
            Element::Fixed(_, ty) => quote::quote!(#ty).to_string().replace(' ', ""),
        };
        return Some(if list {
            "ctx.input_list(\"name\")?".to_owned()
        } else {
            format!("ctx.input_view::<{element}>(0)?")
        });
    }
    let named_tensor = |ty: &syn::Type| matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Tensor"));
    let is_tensor = match ty {
        syn::Type::Reference(r) => {
            named_tensor(&r.elem)
                || matches!(&*r.elem, syn::Type::Slice(s) if named_tensor(&s.elem))
        }
        other => named_tensor(other),
    };
    is_tensor.then(|| "ctx.input(0)?".to_owned())
}
