//! `#[op(...)]`.

use super::keys::arguments;
use super::{CratePath, FlagArgs, RawExpr, StrList, TypesArg};

arguments! {
    /// `#[op(...)]`.
    #[derive(Debug)]
    pub struct FnOpArgs {
        name: Option<syn::LitStr>,
        #[darling(multiple)]
        types: Vec<TypesArg>,
        #[darling(default)]
        outputs: StrList,
        /// `full_types("y: TFT_TENSOR[TFT_VAR{'T'}]")`: outputs' full types.
        #[darling(default)]
        full_types: StrList,
        /// `shape = "unchanged"`: a library shape function, by name (any
        /// expression here, so that the check can explain one without quotes).
        shape: Option<RawExpr>,
        /// `shape_fn = my_fn` (or a closure): a custom shape function.
        shape_fn: Option<syn::Expr>,
        /// `crate = "facade::op_core"`: where generated code finds op-core,
        /// for a crate that re-exports it (default `::op_core`).
        krate as "crate": Option<CratePath>,
        ..flags: FlagArgs,
    }
}
