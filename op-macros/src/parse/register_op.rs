//! `#[register_op(...)]`.

use super::keys::arguments;
use super::{CratePath, FlagArgs, RawExpr, StrList};

arguments! {
    /// `#[register_op(...)]`.
    #[derive(Debug)]
    pub struct RegisterOpArgs {
        name: Option<syn::LitStr>,
        #[darling(default)]
        attrs: StrList,
        #[darling(default)]
        inputs: StrList,
        #[darling(default)]
        outputs: StrList,
        /// `full_types("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]")`:
        /// outputs' full types (TensorFlow's `experimental_full_type`).
        #[darling(default)]
        full_types: StrList,
        wrapper: Option<syn::Ident>,
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
