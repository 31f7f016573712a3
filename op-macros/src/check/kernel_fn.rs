//! `#[kernel]` on a function: its rules on the shared signature model.
//! The context comes first, then optionally the attrs struct and
//! resources; the return is `Result<()>` or a value stored in output 0.

use syn::spanned::Spanned;

use super::error;
use super::signature::{
    FnSignature, Param, ReturnValue, Returns, check_plain_signature, check_result_output,
    is_context_param, is_unit, split_result,
};
use crate::parse::take_resource_options;

const KERNEL_PARAMS: &str = "`ctx: &mut KernelContext<'_>` (or a device's context, `ctx: &mut GpuContext<'_, '_>`), then optionally `attrs: &MyOp` and resources marked `#[resource]` (`#[resource] table: &MyTable`)";

/// Checks `fn k<T>(ctx: &mut KernelContext<'_>[, attrs: &A][, #[resource]
/// r: &R ...]) -> Result<()>` (or `Result<Tensor>`, `Result<Arc<R>>`),
/// taking the `#[resource]` attributes out of the signature.
pub fn kernel_fn_signature(sig: &mut syn::Signature) -> darling::Result<FnSignature> {
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
            format!("a kernel function takes {KERNEL_PARAMS}"),
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
    let mut seen = Vec::new();
    for param in params {
        let syn::FnArg::Typed(param) = param else {
            continue;
        };
        let has_attrs = signature.attrs_ty().is_some();
        if let Some(param) = kernel_param(param, &mut seen, has_attrs, &mut errors) {
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

/// One parameter after `ctx`: `#[resource]` (taking the attribute out of
/// the item) or the attrs.
fn kernel_param(
    param: &mut syn::PatType,
    seen: &mut Vec<String>,
    has_attrs: bool,
    errors: &mut darling::error::Accumulator,
) -> Option<Param> {
    let options = errors.handle(take_resource_options(&mut param.attrs))?;
    let Some((options, _)) = options else {
        return attrs_param(param, has_attrs, errors);
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

/// The attrs parameter, `attrs: &MyOp`: one at most, by shared reference
/// (the kernel borrows the attrs it was created with).
fn attrs_param(
    param: &syn::PatType,
    has_attrs: bool,
    errors: &mut darling::error::Accumulator,
) -> Option<Param> {
    match &*param.ty {
        _ if has_attrs => {
            let name = match &*param.pat {
                syn::Pat::Ident(p) => format!("`{}`", p.ident),
                _ => "this".to_owned(),
            };
            errors.push(error(
                param.span(),
                format!("a kernel function takes one attrs parameter, and {name} is a second one: read inputs from `ctx`, and mark a resource parameter `#[resource]` (`#[resource] table: &MyTable`)"),
            ));
            None
        }
        syn::Type::Reference(r) if r.mutability.is_none() => Some(Param::Attrs(r.elem.clone())),
        other => {
            errors.push(error(
                other.span(),
                "a kernel takes the op's attrs by shared reference, `attrs: &MyOp` (and a resource as `#[resource] table: &MyTable`)",
            ));
            None
        }
    }
}
