//! `#[register_op(...)]`.

use darling::FromMeta;

use super::{CratePath, FlagArgs, RawExpr, StrList};

/// `#[register_op(...)]`.
#[derive(Debug, FromMeta)]
pub struct RegisterOpArgs {
    pub name: Option<syn::LitStr>,
    #[darling(default)]
    pub attrs: StrList,
    #[darling(default)]
    pub inputs: StrList,
    #[darling(default)]
    pub outputs: StrList,
    pub wrapper: Option<syn::Ident>,
    /// `shape = "unchanged"`: a library shape function, by name (any
    /// expression here, so that check.rs can explain one without quotes).
    pub shape: Option<RawExpr>,
    /// `shape_fn = my_fn` (or a closure): a custom shape function.
    pub shape_fn: Option<syn::Expr>,
    #[darling(flatten)]
    pub flags: FlagArgs,
    /// `crate = "facade::op_core"`: where generated code finds op-core,
    /// for a crate that re-exports it (default `::op_core`).
    #[darling(rename = "crate")]
    pub krate: Option<CratePath>,
}
