//! The op-spec language: what an op *is*, independent of how it runs.
//!
//! This crate exists so that one parser serves two masters. The proc macros in
//! `op-macros` parse and validate every spec string at compile time, and the
//! runtime in `op-core` parses the same strings (from `cargo xtask opdef`, from
//! tests, from ops registered without macros) at run time. A proc-macro crate
//! cannot export ordinary items and the runtime should not depend on `syn`, so
//! the shared part lives here, with no dependencies at all.
//!
//! It holds:
//! - [`DType`], TensorFlow's data types with their spec and enum names and the
//!   type classes (`numbertype`, ...);
//! - [`Device`] and [`DeviceType`], where kernels run, named as TensorFlow
//!   names them;
//! - the [`OpDef`] model (args, attrs, flags), with [`AttrValue`] for attr values
//!   and [`FullType`] for an output's full type (TensorFlow's
//!   `experimental_full_type`);
//! - [`OpDefBuilder`], which parses the `Input`, `Output` and `Attr` spec strings
//!   exactly as TensorFlow's `REGISTER_OP` does and validates the result,
//!   reporting every problem with the spec it came from and the column;
//! - [`pbtxt`], which writes op definitions in TensorFlow's text format;
//! - [`compat`], TensorFlow's backwards-compatibility rules between two
//!   versions of an op;
//! - the tables that the proc macros and the runtime must agree on: each
//!   dtype's Rust element type ([`dtype::RUST_TYPES`]) and the names of the
//!   runtime's library shape functions ([`shape_library::NAMES`]).
//!
//! ```
//! use op_spec::{DType, OpDefBuilder};
//!
//! let op = OpDefBuilder::new("ZeroOut")
//!     .attr("T: {float, int32} = DT_INT32")
//!     .input("to_zero: T")
//!     .output("zeroed: T")
//!     .build()
//!     .unwrap();
//! assert_eq!(op.attrs[0].allowed_types(), Some(&[DType::F32, DType::I32][..]));
//! ```

mod builder;
mod doc;
mod spec;

pub mod attr_value;
pub mod compat;
pub mod device;
pub mod dtype;
pub mod error;
pub mod full_type;
pub mod op_def;
pub mod pbtxt;
pub mod quote;
pub mod shape_library;
pub mod suggest;
pub mod text;
pub mod validate;

pub use attr_value::{
    AttrKind, AttrType, AttrValue, DimValue, FuncValue, ListValue, ShapeError, ShapeValue,
    TensorValue,
};
pub use builder::{OpDefBuilder, is_valid_op_name};
pub use device::{Device, DeviceType, UnknownDevice};
pub use dtype::{DType, TypeClass, UnknownDType};
pub use error::{SpecError, SpecErrors, SpecSource};
pub use full_type::{FullType, FullTypeAttr, FullTypeError, FullTypeId};
pub use op_def::{ArgDef, ArgType, AttrDef, Deprecation, OpDef};
