//! Where generated code finds the runtime.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote_spanned};
use syn::spanned::Spanned;

/// The module generated code reaches op-core through:
/// `::op_core::__private` by default, or `<path>::__private` when a macro is
/// given `crate = "path"` (a facade crate that re-exports op-core, as
/// pyo3's and serde's `crate` arguments allow). Every generated path starts
/// here, so this is the one place that names op-core.
#[derive(Clone, Debug)]
pub struct RuntimePath {
    krate: syn::Path,
    /// Where an error about the path points: the author's `crate = "..."`
    /// string, or the macro call.
    span: Span,
}

impl RuntimePath {
    /// The runtime at `krate`, or at `::op_core` when none was given.
    pub fn new(krate: Option<&syn::Path>) -> Self {
        match krate {
            Some(krate) => RuntimePath {
                krate: krate.clone(),
                span: krate.span(),
            },
            None => RuntimePath {
                krate: syn::parse_quote!(::op_core),
                span: Span::call_site(),
            },
        }
    }

    /// The lite runtime, `::op_lite::__private`, which `#[lite_kernel]`'s
    /// code reaches (op-lite re-exports what it needs of op-core there).
    pub fn lite() -> Self {
        RuntimePath {
            krate: syn::parse_quote!(::op_lite),
            span: Span::call_site(),
        }
    }
}

impl Default for RuntimePath {
    fn default() -> Self {
        RuntimePath::new(None)
    }
}

impl ToTokens for RuntimePath {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        let krate = &self.krate;
        tokens.extend(quote_spanned!(self.span=> #krate::__private));
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::{Path, PathBuf};

    /// Generated code reaches op-core only through [`super::RuntimePath`]:
    /// no other source file of the macros names `::op_core` outside
    /// comments, so `crate = "..."` covers every generated path.
    #[test]
    fn only_the_runtime_path_names_op_core() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut offenders = Vec::new();
        for path in source_files(&src) {
            if path.file_name().is_some_and(|n| n == "runtime_path.rs") {
                continue;
            }
            let text = fs::read_to_string(&path).expect("a source file");
            for (i, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if !code.starts_with("//") && names_op_core_absolutely(code) {
                    offenders.push(format!("{}:{}: {code}", path.display(), i + 1));
                }
            }
        }
        assert!(offenders.is_empty(), "{}", offenders.join("\n"));
    }

    /// The `.rs` files under `dir`, in the stage folders too.
    fn source_files(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in fs::read_dir(dir).expect("the macros' sources") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                files.extend(source_files(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
        files
    }

    /// Whether `code` has the absolute path `::op_core` (not a path that
    /// merely ends in it, such as `my_facade::op_core` in a message).
    fn names_op_core_absolutely(code: &str) -> bool {
        code.match_indices("::op_core").any(|(i, _)| {
            !code[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    }

    #[test]
    fn the_scan_finds_absolute_paths_only() {
        assert!(names_op_core_absolutely("quote!(::op_core::Tensor)"));
        assert!(names_op_core_absolutely("::op_core::Tensor"));
        assert!(!names_op_core_absolutely(
            "`crate = \"my_facade::op_core\"`"
        ));
        assert!(!names_op_core_absolutely("#rt::Tensor"));
    }
}
