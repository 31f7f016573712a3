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
#[derive(Clone, Debug, FromMeta)]
pub struct Deprecated {
    pub version: i32,
    pub explanation: syn::LitStr,
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
    #[darling(flatten)]
    pub flags: FlagArgs,
}

/// `#[op(...)]`.
#[derive(Debug, FromMeta)]
pub struct FnOpArgs {
    pub name: Option<syn::LitStr>,
    #[darling(multiple)]
    pub types: Vec<TypesArg>,
    #[darling(default)]
    pub outputs: StrList,
    #[darling(flatten)]
    pub flags: FlagArgs,
}

/// `#[kernel(...)]`.
#[derive(Debug, FromMeta)]
pub struct KernelArgs {
    pub op: OpRef,
    pub device: Option<syn::LitStr>,
    #[darling(multiple)]
    pub types: Vec<TypesArg>,
    #[darling(default)]
    pub host_memory: StrList,
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
    pub default: Option<syn::Expr>,
    /// The minimum, for an int (`min = 0`) or a list's length.
    pub min: Option<syn::Expr>,
    /// The allowed values, for a string (`one_of("a", "b")`) or type
    /// (`one_of(f32, i32)`) attr.
    pub one_of: Option<OneOf>,
}

/// The values of `one_of(...)`.
#[derive(Clone, Debug)]
pub struct OneOf {
    pub items: Vec<NestedMeta>,
    pub span: Span,
}

impl FromMeta for OneOf {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        Ok(OneOf {
            items: items.to_vec(),
            span: items.first().map_or_else(Span::call_site, |i| i.span()),
        })
    }
}

/// Takes the `#[attr(...)]` attributes out of `attrs` (the compiler must
/// not see them) and parses the last.
pub fn take_attr_options(
    attrs: &mut Vec<syn::Attribute>,
) -> darling::Result<Option<(AttrOptions, Span)>> {
    let mut found = None;
    let mut errors = darling::Error::accumulator();
    attrs.retain(|attr| {
        if !attr.path().is_ident("attr") {
            return true;
        }
        let options = match &attr.meta {
            syn::Meta::Path(_) => Ok(AttrOptions::default()),
            meta => AttrOptions::from_meta(meta),
        };
        if let Some(options) = errors.handle(options) {
            found = Some((options, attr.span()));
        }
        false
    });
    errors.finish_with(found)
}
