//! `#[lite_kernel(...)]`.

use super::RawExpr;
use super::keys::arguments;

arguments! {
    /// `#[lite_kernel(...)]`.
    #[derive(Debug)]
    pub struct LiteKernelArgs {
        /// `custom = "Sin"`: the custom op's name, as a model's operator
        /// code writes it.
        custom: Option<syn::LitStr>,
        /// `builtin = "ADD"`: the builtin this kernel overrides, by
        /// TensorFlow Lite's name.
        builtin: Option<syn::LitStr>,
        /// `versions = 1..=2`, `versions = 2..` or `versions = 1`: the
        /// versions served (default all).
        versions: Option<RawExpr>,
    }
}
