//! Stage 1: the macros' arguments parsed into plain models (with darling),
//! before any checking.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::util::Flag;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// A list of string literals: `inputs("x: T", "y: T")`, or one as
/// `inputs = "x: T"`.
#[derive(Clone, Debug, Default)]
pub struct StrList(pub Vec<syn::LitStr>);

impl FromMeta for StrList {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut list = Vec::new();
        for item in items {
            match item {
                NestedMeta::Lit(syn::Lit::Str(s)) => list.push(s.clone()),
                other => errors.push(
                    darling::Error::custom(
                        "expected a string literal, as in `inputs(\"x: float\")`",
                    )
                    .with_span(other),
                ),
            }
        }
        errors.finish_with(StrList(list))
    }

    fn from_string(value: &str) -> darling::Result<Self> {
        Ok(StrList(vec![syn::LitStr::new(value, Span::call_site())]))
    }

    fn from_value(value: &syn::Lit) -> darling::Result<Self> {
        match value {
            syn::Lit::Str(s) => Ok(StrList(vec![s.clone()])),
            _ => Err(darling::Error::unexpected_lit_type(value)),
        }
    }
}

/// `deprecated(version = 4, explanation = "use Bar")`.
#[derive(Clone, Debug)]
pub struct Deprecated {
    pub version: i32,
    pub explanation: syn::LitStr,
}

const DEPRECATED_EXAMPLE: &str = "`deprecated(version = 4, explanation = \"use AddV2 instead\")`";

impl FromMeta for Deprecated {
    fn from_meta(meta: &syn::Meta) -> darling::Result<Self> {
        let syn::Meta::List(list) = meta else {
            return Err(darling::Error::custom(format!(
                "`deprecated` takes the GraphDef version that removed the op and why: {DEPRECATED_EXAMPLE}"
            ))
            .with_span(meta));
        };
        let items = NestedMeta::parse_meta_list(list.tokens.clone())?;
        let mut errors = darling::Error::accumulator();
        let (mut version, mut explanation) = (None, None);
        let mut seen = Vec::new();
        for item in &items {
            let NestedMeta::Meta(syn::Meta::NameValue(nv)) = item else {
                errors.push(
                    darling::Error::custom(format!("expected `version = ..` or `explanation = \"..\"`, as in {DEPRECATED_EXAMPLE}"))
                        .with_span(item),
                );
                continue;
            };
            let key = nv
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            seen.push(key.clone());
            match (key.as_str(), &nv.value) {
                (
                    "version",
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }),
                ) => match i.base10_parse::<i32>() {
                    Ok(v) => version = Some(v),
                    Err(e) => errors.push(e.into()),
                },
                ("version", other) => errors.push(
                    darling::Error::custom(
                        "`version` is the GraphDef version number that removed the op, an integer literal: `version = 4`",
                    )
                    .with_span(other),
                ),
                (
                    "explanation",
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }),
                ) => explanation = Some(s.clone()),
                ("explanation", other) => errors.push(
                    darling::Error::custom(
                        "`explanation` is a string literal saying what to use instead: `explanation = \"use AddV2 instead\"`",
                    )
                    .with_span(other),
                ),
                _ => errors.push(unknown_key(&nv.path, &key, "deprecated(...)", &["version", "explanation"])),
            }
        }
        let missing = |what: &str| {
            darling::Error::custom(format!("`deprecated` needs `{what}`: {DEPRECATED_EXAMPLE}"))
                .with_span(&list.path)
        };
        if !seen.iter().any(|k| k == "version") {
            errors.push(missing("version = .."));
        }
        if !seen.iter().any(|k| k == "explanation") {
            errors.push(missing("explanation = \"..\""));
        }
        errors.finish()?;
        Ok(Deprecated {
            version: version.expect("checked"),
            explanation: explanation.expect("checked"),
        })
    }
}

/// The flags an op registration can set, shared by `#[register_op]` and `#[op]`.
#[derive(Clone, Debug, Default, FromMeta)]
pub struct FlagArgs {
    pub stateful: Flag,
    pub commutative: Flag,
    pub aggregate: Flag,
    pub allows_uninitialized_input: Flag,
    pub distributed_communication: Flag,
    pub deprecated: Option<Deprecated>,
}

const FLAG_KEYS: [&str; 6] = [
    "stateful",
    "commutative",
    "aggregate",
    "allows_uninitialized_input",
    "distributed_communication",
    "deprecated",
];

/// The keys of `#[register_op(...)]`.
pub const REGISTER_OP_KEYS: &[&str] = &[
    "name", "attrs", "inputs", "outputs", "wrapper", "shape", "shape_fn", "crate",
];
/// The keys of `#[op(...)]`.
pub const FN_OP_KEYS: &[&str] = &["name", "types", "outputs", "shape", "shape_fn", "crate"];
/// The keys of `#[kernel(...)]`.
pub const KERNEL_KEYS: &[&str] = &["op", "device", "types", "host_memory", "crate"];
/// The keys of `#[attr(...)]`.
pub const ATTR_KEYS: &[&str] = &["name", "default", "min", "one_of"];
/// The keys of `#[resource(...)]`.
pub const RESOURCE_KEYS: &[&str] = &["input"];
/// The keys that take quoted strings, as `inputs("x: float")`.
const STRING_LIST_KEYS: [&str; 4] = ["attrs", "inputs", "outputs", "host_memory"];

/// "unknown key `statefull` in `#[register_op]`: did you mean `stateful`? ..."
fn unknown_key(path: &syn::Path, key: &str, what: &str, keys: &[&str]) -> darling::Error {
    let hint = op_spec::suggest::closest(key, keys.iter().copied())
        .map(|k| format!("did you mean `{k}`? "))
        .unwrap_or_default();
    let key = if key.is_empty() {
        quote::quote!(#path).to_string().replace(' ', "")
    } else {
        key.to_owned()
    };
    darling::Error::custom(format!(
        "unknown key `{key}` in `{what}`: {hint}the keys are {}",
        keys.join(", ")
    ))
    .with_span(path)
}

/// Arguments parsed as far as they would go: `value` is `None` only when
/// nothing usable was left, and `errors` holds every mistake found. A typo
/// in one key leaves the others parsed, so the macro can still generate
/// its code and the author sees one error, not that error and the ones
/// that missing code would cause.
pub struct Recovered<T> {
    pub value: Option<T>,
    pub errors: Vec<darling::Error>,
}

impl<T> Recovered<T> {
    /// The arguments if there was no mistake at all, else every error.
    pub fn strict(self) -> darling::Result<T> {
        match self.value {
            Some(value) if self.errors.is_empty() => Ok(value),
            _ => Err(darling::Error::multiple(self.errors)),
        }
    }
}

/// Arguments of `#[what(...)]` parsed into `T`, with unknown keys reported
/// by name with a suggestion (and skipped), and spec lists written without
/// quotes caught before they become syntax errors.
pub fn args<T: FromMeta>(
    tokens: proc_macro2::TokenStream,
    what: &str,
    keys: &[&str],
    flags: bool,
) -> Recovered<T> {
    let failed = |e: darling::Error| Recovered {
        value: None,
        errors: vec![e],
    };
    if let Err(e) = unquoted_strings(&tokens) {
        return failed(e);
    }
    let items = match NestedMeta::parse_meta_list(tokens) {
        Ok(items) => items,
        Err(e) => return failed(e.into()),
    };
    let mut all: Vec<&str> = keys.to_vec();
    if flags {
        all.extend(FLAG_KEYS);
    }
    let mut errors = Vec::new();
    let mut known = Vec::new();
    for item in items {
        let path = match &item {
            NestedMeta::Meta(m) => m.path(),
            NestedMeta::Lit(lit) => {
                errors.push(
                    darling::Error::custom(format!(
                        "expected `key = value` or `key(...)`; the keys of `{what}` are {}",
                        all.join(", ")
                    ))
                    .with_span(lit),
                );
                continue;
            }
        };
        let key = path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        if all.contains(&key.as_str()) {
            known.push(item);
        } else {
            errors.push(unknown_key(path, &key, what, &all));
        }
    }
    let value = match T::from_list(&known) {
        Ok(value) => Some(value),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    Recovered { value, errors }
}

/// Catches `inputs(x: float)` (a spec without its quotes), which would
/// otherwise be a bare syntax error.
fn unquoted_strings(tokens: &proc_macro2::TokenStream) -> darling::Result<()> {
    use proc_macro2::TokenTree;
    let mut errors = darling::Error::accumulator();
    let mut previous: Option<proc_macro2::Ident> = None;
    for token in tokens.clone() {
        match token {
            TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Parenthesis => {
                if let Some(key) = previous
                    .take()
                    .filter(|k| STRING_LIST_KEYS.contains(&k.to_string().as_str()))
                    && let Some(bad) = g.stream().into_iter().find(|t| match t {
                        TokenTree::Literal(_) => false,
                        TokenTree::Punct(p) => p.as_char() != ',',
                        _ => true,
                    })
                {
                    let example = if key == "host_memory" {
                        "host_memory(\"to_zero\")"
                    } else if key == "attrs" {
                        "attrs(\"T: {float, int32}\")"
                    } else {
                        "inputs(\"x: float\", \"y: T\")"
                    };
                    errors.push(
                        darling::Error::custom(format!(
                            "`{key}(...)` takes quoted strings, one per entry, as in `{example}`"
                        ))
                        .with_span(&bad.span()),
                    );
                }
            }
            TokenTree::Ident(i) => previous = Some(i),
            _ => previous = None,
        }
    }
    errors.finish()
}

/// An expression as written. (darling's `syn::Expr` would parse the
/// contents of a string literal as the expression.)
#[derive(Clone, Debug)]
pub struct RawExpr(pub syn::Expr);

impl FromMeta for RawExpr {
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        Ok(RawExpr(expr.clone()))
    }
}

/// How to write `crate = "..."`, for errors.
pub const CRATE_HELP: &str = "`crate` takes the path of a crate that re-exports op-core, in a string: `crate = \"my_facade::op_core\"`";

/// `crate = "facade::op_core"`: where generated code finds op-core, its
/// tokens spanned at the string so that an error about the path (no
/// `__private` there) points at it.
#[derive(Clone, Debug)]
pub struct CratePath(pub syn::Path);

impl FromMeta for CratePath {
    fn from_value(value: &syn::Lit) -> darling::Result<Self> {
        match value {
            syn::Lit::Str(s) => s
                .parse::<syn::Path>()
                .map(CratePath)
                .map_err(|_| darling::Error::custom(CRATE_HELP).with_span(s)),
            other => Err(darling::Error::custom(CRATE_HELP).with_span(other)),
        }
    }
}

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

/// `#[op(...)]`.
#[derive(Debug, FromMeta)]
pub struct FnOpArgs {
    pub name: Option<syn::LitStr>,
    #[darling(multiple)]
    pub types: Vec<TypesArg>,
    #[darling(default)]
    pub outputs: StrList,
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

/// `#[kernel(...)]`.
#[derive(Debug, FromMeta)]
pub struct KernelArgs {
    pub op: Option<OpRef>,
    pub device: Option<syn::LitStr>,
    #[darling(multiple)]
    pub types: Vec<TypesArg>,
    #[darling(default)]
    pub host_memory: StrList,
    /// `crate = "facade::op_core"`: where generated code finds op-core,
    /// for a crate that re-exports it (default `::op_core`).
    #[darling(rename = "crate")]
    pub krate: Option<CratePath>,
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

/// A type name as written in `types(...)`.
#[derive(Clone, Debug)]
pub struct TypeName {
    pub name: String,
    pub span: Span,
}

/// One entry of `types(...)`: `f32` (for the default attr) or
/// `T = f32` or `T = [f32, realnumbertype]`.
#[derive(Clone, Debug)]
pub struct TypesEntry {
    pub attr: Option<syn::Ident>,
    pub names: Vec<TypeName>,
    pub span: Span,
}

/// One `types(...)`: a cross product of its entries.
#[derive(Clone, Debug)]
pub struct TypesArg {
    pub entries: Vec<TypesEntry>,
    pub span: Span,
}

fn type_name(expr: &syn::Expr) -> darling::Result<TypeName> {
    match expr {
        syn::Expr::Path(p) if p.path.get_ident().is_some() => Ok(TypeName {
            name: p.path.segments[0].ident.to_string(),
            span: p.span(),
        }),
        other => Err(darling::Error::custom(
            "expected a type name such as `f32`, `int32` or `realnumbertype`",
        )
        .with_span(other)),
    }
}

impl FromMeta for TypesArg {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut entries = Vec::new();
        for item in items {
            let entry = match item {
                NestedMeta::Meta(syn::Meta::Path(p)) if p.get_ident().is_some() => {
                    Ok(TypesEntry {
                        attr: None,
                        names: vec![TypeName {
                            name: p.segments[0].ident.to_string(),
                            span: p.span(),
                        }],
                        span: p.span(),
                    })
                }
                NestedMeta::Meta(syn::Meta::NameValue(nv)) if nv.path.get_ident().is_some() => {
                    let names = match &nv.value {
                        syn::Expr::Array(array) => {
                            array.elems.iter().map(type_name).collect::<darling::Result<_>>()
                        }
                        single => type_name(single).map(|n| vec![n]),
                    };
                    names.map(|names| TypesEntry {
                        attr: nv.path.get_ident().cloned(),
                        names,
                        span: nv.span(),
                    })
                }
                other => Err(darling::Error::custom(
                    "expected a type (`f32`), a type group (`realnumbertype`), or an attr with types (`T = [f32, i32]`)",
                )
                .with_span(other)),
            };
            if let Some(entry) = errors.handle(entry) {
                entries.push(entry);
            }
        }
        let span = items.first().map_or_else(Span::call_site, |i| i.span());
        if entries.is_empty() && items.is_empty() {
            errors.push(
                darling::Error::custom(
                    "`types()` is empty: list at least one type, as in `types(f32)`",
                )
                .with_span(&span),
            );
        }
        errors.finish_with(TypesArg { entries, span })
    }
}

/// `#[attr(...)]` on an op struct's field or an `#[op]` function's
/// parameter: how the typed attr is declared.
#[derive(Clone, Debug, Default, FromMeta)]
pub struct AttrOptions {
    /// The attr's name, when it is not the field's (`name = "T"`).
    pub name: Option<syn::LitStr>,
    /// The default value, as a Rust literal (`default = 0`, `default = [1, 2]`).
    pub default: Option<ValueExpr>,
    /// The minimum, for an int (`min = 0`) or a list's length.
    pub min: Option<ValueExpr>,
    /// The allowed values, for a string (`one_of("a", "b")`) or type
    /// (`one_of(f32, i32)`) attr.
    pub one_of: Option<OneOf>,
}

/// An expression taken as written. (darling's own `syn::Expr` parses a
/// string literal's contents as an expression, which would turn
/// `default = "same"` into the path `same`.)
#[derive(Clone, Debug)]
pub struct ValueExpr(pub syn::Expr);

impl FromMeta for ValueExpr {
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        Ok(ValueExpr(expr.clone()))
    }
}

/// The values of `one_of(...)`.
#[derive(Clone, Debug)]
pub struct OneOf {
    pub items: Vec<NestedMeta>,
    pub span: Span,
}

impl FromMeta for OneOf {
    fn from_meta(meta: &syn::Meta) -> darling::Result<Self> {
        match meta {
            syn::Meta::List(list) => Ok(OneOf {
                items: NestedMeta::parse_meta_list(list.tokens.clone())?,
                span: list.path.span(),
            }),
            other => Err(darling::Error::custom(
                "`one_of` lists the allowed values: `one_of(\"same\", \"valid\")` or `one_of(f32, i32)`",
            )
            .with_span(other)),
        }
    }
}

/// Takes the `#[attr(...)]` attributes out of `attrs` (the compiler must
/// not see them) and parses the last.
pub fn take_attr_options(
    attrs: &mut Vec<syn::Attribute>,
) -> darling::Result<Option<(AttrOptions, Span)>> {
    take_helper_attr(
        attrs,
        "attr",
        ATTR_KEYS,
        "write the attr's options in parentheses: `#[attr(default = 0, min = 0)]`",
    )
}

/// Takes the helper attributes `#[name]` / `#[name(...)]` out of `attrs`
/// (the compiler must not see them) and parses the last, with its span;
/// `name_value` is the error for `#[name = ...]`.
fn take_helper_attr<T: FromMeta + Default>(
    attrs: &mut Vec<syn::Attribute>,
    name: &str,
    keys: &[&str],
    name_value: &str,
) -> darling::Result<Option<(T, Span)>> {
    let mut found = None;
    let mut errors = darling::Error::accumulator();
    let what = format!("#[{name}(...)]");
    attrs.retain(|attr| {
        if !attr.path().is_ident(name) {
            return true;
        }
        let options = match &attr.meta {
            syn::Meta::Path(_) => Ok(T::default()),
            syn::Meta::List(list) => args(list.tokens.clone(), &what, keys, false).strict(),
            meta @ syn::Meta::NameValue(_) => {
                Err(darling::Error::custom(name_value).with_span(meta))
            }
        };
        if let Some(options) = errors.handle(options) {
            found = Some((options, attr.path().span()));
        }
        false
    });
    errors.finish_with(found)
}

/// `#[resource]` or `#[resource(input = "table_handle")]` on a kernel
/// function's parameter: the parameter receives the resource that a
/// `resource` input's handle refers to.
#[derive(Clone, Debug, Default, FromMeta)]
pub struct ResourceOptions {
    /// The input, when it is not named like the parameter.
    pub input: Option<syn::LitStr>,
}

/// Takes the `#[resource(...)]` attributes out of `attrs` (the compiler
/// must not see them) and parses the last; its span is the attribute's
/// path.
pub fn take_resource_options(
    attrs: &mut Vec<syn::Attribute>,
) -> darling::Result<Option<(ResourceOptions, Span)>> {
    take_helper_attr(
        attrs,
        "resource",
        RESOURCE_KEYS,
        "write `#[resource]`, or name the input in parentheses: `#[resource(input = \"table_handle\")]`",
    )
}
