//! Proc macros of the op framework: declare ops and kernels in plain Rust,
//! checked at compile time by the very parser the runtime uses (the
//! `op-spec` crate), so a registration that compiles is one the runtime
//! accepts, with the same meaning.
//!
//! - [`macro@register_op`] on a struct declares an op; the struct's fields
//!   are its typed attrs.
//! - [`macro@kernel`] on a function or an `impl` block registers kernels.
//! - [`macro@op`] on a function declares an op and its CPU kernel from the
//!   function's signature.
//! - [`op_def!`] builds an `OpDefBuilder` from checked spec strings.
//! - [`macro@lite_kernel`] on an `impl` registers a kernel of the lite
//!   runtime (`op-lite`) for a custom op or a builtin.
//!
//! Each macro works in three stages, one folder each, as serde_derive
//! splits its generators:
//! - `parse/`: arguments into plain models, with darling; one file per
//!   macro and per shared piece, each macro's keys declared once
//!   (`parse/keys.rs`);
//! - `check/`: validation, every error on the author's token, several at
//!   once; one function per rule, and one signature model for `#[kernel]`
//!   and `#[op]` functions (`check/signature.rs`);
//! - `expand/`: code generation; every registration is written by
//!   `expand/registration.rs`, every typed wrapper by `expand/wrapper.rs`,
//!   and every function adapter by `expand/adapter.rs`.
//!
//! After an error, a macro still generates what it can (the other keys'
//! code, or a stand-in op), so that one mistake is one error.
//!
//! The guide is the README's "Quickstart: your own op and kernel" section,
//! with a part per macro and "Mistakes are compile errors"; the
//! `op-kernels` crate and the `examples` crate use every form.

use proc_macro::TokenStream;
use quote::quote;

mod check;
mod dtypes;
mod expand;
mod parse;
mod runtime_path;
mod spec;
mod tflite_builtins;

/// Declares an op on a struct whose fields are its typed attrs.
///
/// ```ignore
/// /// Zeroes every element of a vector but one.
/// ///
/// /// to_zero: the vector.
/// /// zeroed: `to_zero` with every element but one set to zero.
/// #[register_op(
///     attrs("T: {float, double, int32} = DT_INT32"),
///     inputs("to_zero: T"),
///     outputs("zeroed: T"),
/// )]
/// pub struct ZeroOut {
///     /// The index of the element to keep.
///     #[attr(default = 0, min = 0)]
///     pub preserve_index: i64,
/// }
/// ```
///
/// Arguments (all optional): `name = "Ns>Name"` (default: the struct's
/// name), `attrs(...)`, `inputs(...)`, `outputs(...)` (TensorFlow spec
/// strings), `full_types(...)` (an output's full type, TensorFlow's
/// `experimental_full_type`, as `"<output>: <full type>"` in the notation
/// of TensorFlow's `full_type.proto`: `Shape`'s is
/// `full_types("output: TFT_SHAPE_TENSOR[TFT_VAR{'out_type'}]")`; an
/// unknown id, or a `TFT_VAR` naming no `type` attr of the op, is a
/// compile error on the string), the flags `stateful`, `commutative`, `aggregate`,
/// `allows_uninitialized_input`, `distributed_communication`,
/// `deprecated(version = N, explanation = "...")`, `not_differentiable`
/// (no gradient flows through the op, and a path through it is not an
/// error: TensorFlow's `tf.no_gradient`; it registers
/// `GradientRegistration::not_differentiable` beside the op, so it is not
/// part of the `OpDef`), the shape function
/// (`shape = "unchanged"` for one of `op_core::shape_inference::library`,
/// or `shape_fn = my_fn` / a closure), and `wrapper = name`
/// (also generate a snake_case function `name(...)`, like TensorFlow's
/// Python wrapper; off by default because kernel functions often want that
/// name: a kernel function of that name in the op's module is a compile
/// error at `wrapper = name`, and any other item of that name hides the
/// wrapper, as an item hides a glob import).
///
/// Fields: each is an attr named after the field (or `#[attr(name = "T")]`),
/// of the kind its type says (`i64` → `int`, `usize` → `int >= 0`, `f32` →
/// `float`, `bool`, `String` → `string`, `DType` → `type`, `Vec<i64>` →
/// `list(int)`, ...), with `#[attr(default = .., min = .., one_of(..))]`.
/// Doc comments become the op's and the attrs' docs.
///
/// Generated: `impl op_core::Op` and `op_core::OpAttrs` (the attr parsing),
/// the registration, and the typed wrapper: `ZeroOut::call(inputs,
/// required attrs)` returning a `ZeroOutCall` with a setter per optional
/// attr and `run()`.
#[proc_macro_attribute]
pub fn register_op(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = syn::parse_macro_input!(item as syn::ItemStruct);
    let parsed = parse::args::<parse::RegisterOpArgs>(args.into(), "#[register_op(...)]");
    let Some(args) = parsed.value else {
        return with_item(parsed.errors, quote!(#item));
    };
    match check::register_op(&args, &mut item) {
        Ok(op) => with_code(parsed.errors, expand::register_op(&item, &op)),
        Err(check::Failed {
            errors,
            stand_in: Some(op),
        }) => with_code(
            first_errors(parsed.errors, errors),
            expand::register_op(&item, &op),
        ),
        Err(failed) => with_item(first_errors(parsed.errors, failed.errors), quote!(#item)),
    }
}

/// Registers kernels: one per combination of `types(...)`.
///
/// On a function generic over the element type(s):
///
/// ```ignore
/// #[kernel(op = ZeroOut, device = "cpu", types(f32, f64, i32))]
/// fn zero_out<T: Element + Copy + Default>(ctx: &mut KernelContext<'_>, attrs: &ZeroOut) -> Result<()> {
///     // ...
/// }
/// ```
///
/// On an inherent `impl` with `fn new(&KernelConstruction) -> Result<Self>`
/// (run once per node: read and check attrs) and `fn compute(&self, &mut
/// KernelContext) -> Result<()>`; the macro implements `OpKernel`. An
/// optional `fn may_block(&self) -> bool` there overrides
/// `OpKernel::may_block` (a kernel that may wait for another, such as a
/// queue's dequeue).
///
/// Arguments: `op = OpType` (checked at compile time: every type must be
/// allowed by the op, every `host_memory` arg must exist) or `op =
/// "OpName"` (checked when the registry is built); `device = "cpu" |
/// "gpu"` (default cpu); `types(...)`, repeatable: `types(f32, i32)` for
/// attr `T`, `types(realnumbertype)` for a group, `types(K = [i32, i64], V
/// = f32)` for a cross product of named attrs, one `types(...)` per
/// explicit combination; `host_memory("arg", ...)`. The kernel's type
/// parameters take the constrained attrs' types in order; a kernel without
/// type parameters may be registered for one type only (it would run the
/// same code for each). A kernel function's attrs parameter is its own
/// op's: with `op = OpType`, `attrs: &OtherOp` is a compile error.
///
/// A kernel function of a stateful op may take resources and return one:
///
/// ```ignore
/// // `SimpleHashTableCreate() -> output: resource`: an owning handle to a new table.
/// #[kernel(op = SimpleHashTableCreate, types(key_dtype = i64, value_dtype = f32))]
/// fn create<K: TableKey, V: TableElement>(_ctx: &mut KernelContext<'_>) -> Result<Arc<SimpleHashTable<K, V>>> {
///     Ok(Arc::new(SimpleHashTable::new()))
/// }
///
/// // `SimpleHashTableFind(resource_handle: resource, key: K, ...) -> value: V`.
/// #[kernel(op = SimpleHashTableFind, types(key_dtype = i64, value_dtype = f32))]
/// fn find<K: TableKey, V: TableElement>(
///     ctx: &mut KernelContext<'_>,
///     #[resource] resource_handle: &SimpleHashTable<K, V>,
/// ) -> Result<Tensor> { /* ... */ }
/// ```
///
/// A `#[resource]` parameter receives the resource that the handle in the
/// `resource` input of its name refers to (`#[resource(input = "handle")]
/// t: &T` names another), type-checked on each call (a handle to another
/// type is `InvalidArgument`, a deleted resource `NotFound`, both naming
/// the op, node and input). The function may return `Result<()>`,
/// `Result<Tensor>` (output 0) or `Result<Arc<R>>` (an owning handle in
/// output 0). With `op = OpType`, the input names and the `resource`
/// output are checked at compile time.
#[proc_macro_attribute]
pub fn kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(item as syn::Item);
    let parsed = parse::args::<parse::KernelArgs>(args.into(), "#[kernel(...)]");
    let Some(args) = parsed.value else {
        return with_item(parsed.errors, quote!(#item));
    };
    match check::kernel(&args, item.clone()) {
        Ok(k) => with_code(parsed.errors, expand::kernel(&k)),
        Err(e) => with_item(first_errors(parsed.errors, e), quote!(#item)),
    }
}

/// Registers a gradient function for an op (TensorFlow's
/// `RegisterGradient`), used by gradient tapes and by symbolic
/// `gradients` alike.
///
/// ```ignore
/// /// d sin(x) = cos(x) dx
/// #[gradient(op = Sin)]
/// fn sin_grad<V: Value>(g: &Gradient<'_, V>) -> Result<[Option<V>; 1]> {
///     let cos = Cos::call_with(g.input(0)).run_on(g)?;
///     Ok([Some(Mul::call_with(g.grad(0)?, cos).run_on(g)?)])
/// }
/// ```
///
/// `op` is the op's Rust type (checked at compile time) or, for an op
/// declared elsewhere, its registered name (`op = "Sin"`, checked when the
/// registry is built: an unknown name is a `GradientForUnknownOp`
/// conflict). The function is generic over the value it builds with
/// (`op_core::gradient::Value`: tensors on a tape, graph outputs in
/// `gradients`), takes the forward node with its incoming gradients
/// (`&Gradient<'_, V>`), and returns one optional gradient per input:
/// `None` where none flows (an integer index, say). An op with list inputs
/// (`N * T`) returns `Result<Vec<Option<V>>>`, one per input tensor.
///
/// Compile errors, each on the author's token: a missing `op`, an unknown
/// key, an item that is not a function, generics other than one type
/// parameter, parameters other than one, no return type; with `op = Type`,
/// a type that is not an op, and an array length `N` that is not the op's
/// number of inputs (or an array for an op with list inputs). Two gradients
/// for one op are a `DuplicateGradient` conflict in the registry, naming
/// both source locations; the op still runs.
///
/// Argument `crate = "facade::op_core"`: where generated code finds
/// op-core, for a crate that re-exports it.
#[proc_macro_attribute]
pub fn gradient(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(item as syn::Item);
    let parsed = parse::args::<parse::GradientArgs>(args.into(), "#[gradient(...)]");
    let Some(args) = parsed.value else {
        return with_item(parsed.errors, quote!(#item));
    };
    match check::gradient(&args, item.clone()) {
        Ok(g) => with_code(parsed.errors, expand::gradient(&g)),
        Err(e) => with_item(first_errors(parsed.errors, e), quote!(#item)),
    }
}

/// Declares an op and its CPU kernel from a function's signature.
///
/// ```ignore
/// /// Doubles every element.
/// #[op(types(f32, f64, i32, i64))]
/// pub fn times_two<T: Element + Copy + std::ops::Add<Output = T>>(input: ArrayViewD<'_, T>) -> ArrayD<T> {
///     input.mapv(|x| x + x)
/// }
/// ```
///
/// declares op `TimesTwo` with attr `T: {float, double, int32, int64}`,
/// input `input: T` and output `output: T`, registers one kernel per type,
/// and generates `struct TimesTwo` with `TimesTwo::call(input).run()`. The
/// function stays callable as written.
///
/// Parameters: `ArrayViewD<'_, E>` is an input, `&[ArrayViewD<'_, E>]` a
/// list input (`N * E`); anything else is an attr (`i64`, `f32`, `bool`,
/// `&str`, `DType`, slices of them), with `#[attr(default = .., min = ..)]`.
/// `E` is a generic parameter (a type attr named like it, listed in
/// `types(...)`) or a fixed element type. The return type is an array
/// (`ArrayD<E>`), a scalar (`E`), a tuple of them, or a `Result` of those.
/// Arguments: `name = "..."` (default: the function's name in CamelCase),
/// `types(...)`, `outputs("a", "b")` (names; default `output` or
/// `output_0`, `output_1`, ...), and the `full_types(...)`,
/// `shape`/`shape_fn` and flags of [`macro@register_op`].
#[proc_macro_attribute]
pub fn op(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = syn::parse_macro_input!(item as syn::ItemFn);
    let parsed = parse::args::<parse::FnOpArgs>(args.into(), "#[op(...)]");
    let Some(args) = parsed.value else {
        return with_item(parsed.errors, quote!(#item));
    };
    match check::fn_op(&args, &mut item) {
        Ok(f) => with_code(parsed.errors, expand::fn_op(&f)),
        Err(e) => with_item(first_errors(parsed.errors, e), quote!(#item)),
    }
}

/// Registers a kernel of the lite runtime (`op-lite`) at link time, for a
/// custom op or as an override of a TensorFlow Lite builtin.
///
/// On the kernel's inherent `impl`, which holds TensorFlow Lite's phases.
/// A kernel without state is two associated functions, as the seed's
/// `SinPrepare`/`SinEval`:
///
/// ```ignore
/// use op_lite::kernel::{InvokeContext, PrepareContext};
/// use op_lite::lite_kernel;
///
/// struct Sin;
///
/// #[lite_kernel(custom = "Sin")]
/// impl Sin {
///     fn prepare(ctx: &mut PrepareContext<'_>) -> Result<()> {
///         let shape = ctx.input_shape(0)?;
///         ctx.set_output_shape(0, shape)
///     }
///     fn invoke(ctx: &mut InvokeContext<'_>) -> Result<()> {
///         let (x, y) = (ctx.input::<f32>(0)?, ctx.output_mut::<f32>(0)?);
///         y.iter_mut().zip(x).for_each(|(y, x)| *y = x.sin());
///         Ok(())
///     }
/// }
/// ```
///
/// A kernel with state adds `fn init(ctx: &InitContext<'_>) -> Result<Self>`
/// (TensorFlow Lite's `init`: read the node's options, once per node) and
/// takes `&mut self` in `prepare` and `invoke`; `free` is `Drop`. The
/// macro implements `LiteNode` for the type by forwarding to these.
///
/// Arguments: `custom = "Sin"` (the custom op's name, an identifier) or
/// `builtin = "ADD"` (TensorFlow Lite's name for the builtin, checked
/// against its schema at compile time, with the closest name suggested),
/// exactly one of them; `versions = 1..=2`, `versions = 2..` or
/// `versions = 1` (default all versions).
///
/// The registration is an `op_lite::LiteRegistration` submitted with
/// `inventory`: `op_lite::linked_kernels()` lists every one linked in,
/// `MutableOpResolver::add_linked()` registers them all, and
/// `MutableOpResolver::add(&registration)` one. Every mistake is a compile
/// error on the author's token: a missing or doubled op, an unknown
/// builtin, a bad version range, an unknown key, an item that is not an
/// inherent impl, a generic impl, a missing phase, `self` where the kernel
/// has no state (or none where it has), and a phase of the wrong type.
#[proc_macro_attribute]
pub fn lite_kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(item as syn::Item);
    let parsed = parse::args::<parse::LiteKernelArgs>(args.into(), "#[lite_kernel(...)]");
    let Some(args) = parsed.value else {
        return with_item(parsed.errors, quote!(#item));
    };
    match check::lite_kernel(&args, item.clone()) {
        Ok(k) => with_code(parsed.errors, expand::lite_kernel(&k)),
        Err(e) => with_item(first_errors(parsed.errors, e), quote!(#item)),
    }
}

/// The errors, followed by the item as written (minus our helper
/// attributes), so that code using the item reports no errors of its own.
fn with_item(errors: Vec<darling::Error>, item: proc_macro2::TokenStream) -> TokenStream {
    let errors = darling::Error::multiple(errors).write_errors();
    let item = strip_attr_helpers(item);
    quote!(#errors #item).into()
}

/// The errors of arguments that were skipped (an unknown key), followed by
/// the code generated from the rest: the author sees the mistake, and code
/// using the op compiles as if it were fixed.
fn with_code(errors: Vec<darling::Error>, code: proc_macro2::TokenStream) -> TokenStream {
    if errors.is_empty() {
        return code.into();
    }
    let errors = darling::Error::multiple(errors).write_errors();
    quote!(#errors #code).into()
}

/// The errors to show when checking failed after arguments were skipped:
/// the skipped arguments' alone, since the check's errors may only follow
/// from them (`typs(f32)` misspelt, then "no `types(...)`"). Fixing them
/// shows any others.
fn first_errors(skipped: Vec<darling::Error>, check: darling::Error) -> Vec<darling::Error> {
    if skipped.is_empty() {
        vec![check]
    } else {
        skipped
    }
}

/// Removes the `#[attr(...)]` and `#[resource(...)]` helper attributes,
/// which would otherwise be reported as unknown attributes on top of the
/// real errors.
fn strip_attr_helpers(item: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    use proc_macro2::TokenTree;
    let mut out = Vec::new();
    let mut tokens = item.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tokens.peek()
                    && g.delimiter() == proc_macro2::Delimiter::Bracket
                    && g.stream().into_iter().next().is_some_and(
                        |t| matches!(t, TokenTree::Ident(i) if i == "attr" || i == "resource"),
                    )
                {
                    tokens.next();
                    continue;
                }
                out.push(TokenTree::Punct(p));
            }
            TokenTree::Group(g) => {
                let mut inner =
                    proc_macro2::Group::new(g.delimiter(), strip_attr_helpers(g.stream()));
                inner.set_span(g.span());
                out.push(TokenTree::Group(inner));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// Declares an op from TensorFlow spec strings, checked at compile time, and
/// expands to an `op_core::OpDefBuilder` holding them (call `.build()` on it,
/// which cannot fail for a registration that compiled).
///
/// ```
/// let op = op_macros::op_def! {
///     name: "ZeroOut",
///     attrs: ["T: {float, int32} = DT_INT32"],
///     inputs: ["to_zero: T"],
///     outputs: ["zeroed: T"],
///     full_types: ["zeroed: TFT_TENSOR[TFT_VAR{'T'}]"],
/// }
/// .build()
/// .unwrap();
/// assert_eq!(op.name, "ZeroOut");
/// assert_eq!(
///     op.outputs[0].full_type.as_ref().map(ToString::to_string).as_deref(),
///     Some("TFT_TENSOR[TFT_VAR{'T'}]")
/// );
/// ```
///
/// A mistake in a spec is a compile error on that string, saying where in it
/// and how to fix it:
///
/// ```compile_fail
/// op_macros::op_def! { name: "ZeroOut", attrs: ["T: {float, in32}"] };
/// // error: Attr("T: {float, in32}") at column 12: unknown type 'in32' (help: did you mean 'int32'?)
/// ```
#[proc_macro]
pub fn op_def(input: TokenStream) -> TokenStream {
    let op_def = syn::parse_macro_input!(input as parse::OpDefInput);
    let spec = op_def.spec();
    match spec.check() {
        Ok(_) => expand::registration::op_def_builder(&spec, &op_def.runtime).into(),
        Err(e) => {
            // Still an OpDefBuilder, so that code using the result reports no
            // errors of its own on top of the real ones.
            let errors = e.write_errors();
            let name = &op_def.name;
            let rt = &op_def.runtime;
            quote!({ #errors #rt::OpDefBuilder::new(#name) }).into()
        }
    }
}

#[cfg(test)]
mod tests {
    /// The crate docs send readers to README sections by their titles (in
    /// double quotes): each must be a heading there, or the pointer leads
    /// nowhere (it once named a "Writing ops" that did not exist).
    #[test]
    fn every_readme_section_the_crate_docs_name_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let readme = std::fs::read_to_string(root.join("README.md")).expect("the README");
        let headings: Vec<&str> = readme
            .lines()
            .filter(|l| l.starts_with('#'))
            .map(|l| l.trim_start_matches('#').trim())
            .collect();
        let docs: String = include_str!("lib.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//!"))
            .collect::<Vec<_>>()
            .join(" ");
        let named: Vec<&str> = docs.split('"').skip(1).step_by(2).collect();
        assert!(!named.is_empty(), "the crate docs name no README section");
        for section in named {
            let section = section.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(
                headings.contains(&section.as_str()),
                "the crate docs name README section {section:?}, which the README lacks; its headings: {headings:#?}"
            );
        }
    }
}
