//! `#[kernel(...)]`.

use darling::FromMeta;

use super::keys::arguments;
use super::{CratePath, StrList, TypesArg};

arguments! {
    /// `#[kernel(...)]`.
    #[derive(Debug)]
    pub struct KernelArgs {
        op: Option<OpRef>,
        device: Option<syn::LitStr>,
        #[darling(multiple)]
        types: Vec<TypesArg>,
        #[darling(default)]
        host_memory: StrList,
        /// `crate = "facade::op_core"`: where generated code finds op-core,
        /// for a crate that re-exports it (default `::op_core`).
        krate as "crate": Option<CratePath>,
    }
}

/// The op a kernel implements: its Rust type (checked at compile time) or
/// its registered name.
#[derive(Clone, Debug)]
pub enum OpRef {
    Path(syn::Path),
    Name(syn::LitStr),
}

impl FromMeta for OpRef {
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        match expr {
            syn::Expr::Path(p) if p.qself.is_none() => Ok(OpRef::Path(p.path.clone())),
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Ok(OpRef::Name(s.clone())),
            other => Err(darling::Error::custom(
                "`op` takes the op's Rust type, as in `op = ZeroOut`, or its registered name, as in `op = \"ZeroOut\"`",
            )
            .with_span(other)),
        }
    }
}
