//! TensorFlow Lite's flatbuffer schema (`schema.fbs`), as Rust: the code
//! `flatc --rust` generated from it, committed (see `README.md` beside this
//! file for where the schema came from and how to regenerate).
//!
//! Private to the crate: the readers and writers in [`crate::model`]
//! translate between these zero-copy views and the plain, checked model
//! types, which are the public API. Lints are allowed here only, because the
//! code is generated and never edited by hand.

#[allow(
    clippy::all,
    clippy::pedantic,
    clippy::undocumented_unsafe_blocks,
    dead_code,
    deprecated,
    missing_docs,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    unsafe_op_in_unsafe_fn,
    unused_imports,
    mismatched_lifetime_syntaxes,
    unused_lifetimes
)]
#[rustfmt::skip]
mod schema_generated;

pub(crate) use schema_generated::tflite::*;
