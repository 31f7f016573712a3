//! Data types: TensorFlow's `DataType` enum, its names, and its type classes.

use std::fmt;
use std::str::FromStr;

/// The element type of a tensor, or the value of a `type` attr.
///
/// The discriminants are TensorFlow's `DataType` enum values, so a `DType`
/// converts to and from TensorFlow's wire format without a table.
///
/// Every variant has two names, both accepted by [`DType::from_str`]:
/// the spec name used in op specs (`float`, `int32`) and the enum name used
/// in attr values and text protos (`DT_FLOAT`, `DT_INT32`).
///
/// ```
/// use op_spec::DType;
/// assert_eq!("float".parse::<DType>().unwrap(), DType::F32);
/// assert_eq!("DT_INT32".parse::<DType>().unwrap(), DType::I32);
/// assert_eq!(DType::F16.spec_name(), "half");
/// assert_eq!(DType::F16.enum_name(), "DT_HALF");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i32)]
pub enum DType {
    /// 32-bit IEEE float: `float`, `DT_FLOAT`.
    F32 = 1,
    /// 64-bit IEEE float: `double`, `DT_DOUBLE`.
    F64 = 2,
    /// `int32`, `DT_INT32`.
    I32 = 3,
    /// `uint8`, `DT_UINT8`.
    U8 = 4,
    /// `int16`, `DT_INT16`.
    I16 = 5,
    /// `int8`, `DT_INT8`.
    I8 = 6,
    /// Byte strings, not required to be UTF-8: `string`, `DT_STRING`.
    String = 7,
    /// Complex of two f32: `complex64`, `DT_COMPLEX64`.
    Complex64 = 8,
    /// `int64`, `DT_INT64`.
    I64 = 9,
    /// `bool`, `DT_BOOL`.
    Bool = 10,
    /// Quantized signed 8-bit: `qint8`, `DT_QINT8`.
    QInt8 = 11,
    /// Quantized unsigned 8-bit: `quint8`, `DT_QUINT8`.
    QUInt8 = 12,
    /// Quantized signed 32-bit: `qint32`, `DT_QINT32`.
    QInt32 = 13,
    /// Brain float: `bfloat16`, `DT_BFLOAT16`.
    BF16 = 14,
    /// Quantized signed 16-bit: `qint16`, `DT_QINT16`.
    QInt16 = 15,
    /// Quantized unsigned 16-bit: `quint16`, `DT_QUINT16`.
    QUInt16 = 16,
    /// `uint16`, `DT_UINT16`.
    U16 = 17,
    /// Complex of two f64: `complex128`, `DT_COMPLEX128`.
    Complex128 = 18,
    /// IEEE half float: `half` (alias `float16`), `DT_HALF`.
    F16 = 19,
    /// A handle to a resource: `resource`, `DT_RESOURCE`.
    Resource = 20,
    /// An opaque variant value: `variant`, `DT_VARIANT`. Accepted in op specs so
    /// that TensorFlow registrations convert; tensors of this type are not supported.
    Variant = 21,
    /// `uint32`, `DT_UINT32`.
    U32 = 22,
    /// `uint64`, `DT_UINT64`.
    U64 = 23,
}

/// `(dtype, spec name, enum name)` in enum order.
const NAMES: [(DType, &str, &str); 23] = [
    (DType::F32, "float", "DT_FLOAT"),
    (DType::F64, "double", "DT_DOUBLE"),
    (DType::I32, "int32", "DT_INT32"),
    (DType::U8, "uint8", "DT_UINT8"),
    (DType::I16, "int16", "DT_INT16"),
    (DType::I8, "int8", "DT_INT8"),
    (DType::String, "string", "DT_STRING"),
    (DType::Complex64, "complex64", "DT_COMPLEX64"),
    (DType::I64, "int64", "DT_INT64"),
    (DType::Bool, "bool", "DT_BOOL"),
    (DType::QInt8, "qint8", "DT_QINT8"),
    (DType::QUInt8, "quint8", "DT_QUINT8"),
    (DType::QInt32, "qint32", "DT_QINT32"),
    (DType::BF16, "bfloat16", "DT_BFLOAT16"),
    (DType::QInt16, "qint16", "DT_QINT16"),
    (DType::QUInt16, "quint16", "DT_QUINT16"),
    (DType::U16, "uint16", "DT_UINT16"),
    (DType::Complex128, "complex128", "DT_COMPLEX128"),
    (DType::F16, "half", "DT_HALF"),
    (DType::Resource, "resource", "DT_RESOURCE"),
    (DType::Variant, "variant", "DT_VARIANT"),
    (DType::U32, "uint32", "DT_UINT32"),
    (DType::U64, "uint64", "DT_UINT64"),
];

/// TensorFlow's `numbertype`: every numeric type, complex and quantized included,
/// in TensorFlow's order (enum order, as its `DataTypeSet` iterates).
pub const NUMBER_TYPES: &[DType] = &[
    DType::F32,
    DType::F64,
    DType::I32,
    DType::U8,
    DType::I16,
    DType::I8,
    DType::Complex64,
    DType::I64,
    DType::QInt8,
    DType::QUInt8,
    DType::QInt32,
    DType::BF16,
    DType::QInt16,
    DType::QUInt16,
    DType::U16,
    DType::Complex128,
    DType::F16,
    DType::U32,
    DType::U64,
];

/// TensorFlow's `realnumbertype`: the types that support `<` and `>`.
pub const REAL_NUMBER_TYPES: &[DType] = &[
    DType::F32,
    DType::F64,
    DType::I32,
    DType::U8,
    DType::I16,
    DType::I8,
    DType::I64,
    DType::BF16,
    DType::U16,
    DType::F16,
    DType::U32,
    DType::U64,
];

/// TensorFlow's `quantizedtype`: the quantized integer types.
pub const QUANTIZED_TYPES: &[DType] = &[
    DType::QInt8,
    DType::QUInt8,
    DType::QInt32,
    DType::QInt16,
    DType::QUInt16,
];

/// Every data type, in enum order.
pub const ALL_TYPES: &[DType] = &{
    let mut all = [DType::F32; NAMES.len()];
    let mut i = 0;
    while i < NAMES.len() {
        all[i] = NAMES[i].0;
        i += 1;
    }
    all
};

/// A named group of types that an op spec may use as an attr's type
/// (`T: numbertype`) or inside a type set (`{numbertype, bool}`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeClass {
    /// `numbertype` (alias `numerictype`).
    Number,
    /// `realnumbertype` (alias `realnumerictype`).
    RealNumber,
    /// `quantizedtype`.
    Quantized,
}

impl TypeClass {
    /// Every class, in the order messages list them.
    pub const ALL: [TypeClass; 3] = [
        TypeClass::Number,
        TypeClass::RealNumber,
        TypeClass::Quantized,
    ];

    /// The class named `name` in a spec, aliases included.
    pub fn from_spec_name(name: &str) -> Option<TypeClass> {
        match name {
            "numbertype" | "numerictype" => Some(TypeClass::Number),
            "realnumbertype" | "realnumerictype" => Some(TypeClass::RealNumber),
            "quantizedtype" => Some(TypeClass::Quantized),
            _ => None,
        }
    }

    /// The canonical spec name (`numbertype`, ...).
    pub fn spec_name(self) -> &'static str {
        match self {
            TypeClass::Number => "numbertype",
            TypeClass::RealNumber => "realnumbertype",
            TypeClass::Quantized => "quantizedtype",
        }
    }

    /// The types of the class, in TensorFlow's order.
    pub fn types(self) -> &'static [DType] {
        match self {
            TypeClass::Number => NUMBER_TYPES,
            TypeClass::RealNumber => REAL_NUMBER_TYPES,
            TypeClass::Quantized => QUANTIZED_TYPES,
        }
    }
}

impl DType {
    /// The name used in op specs and by TensorFlow's `DataTypeString` (`float`, `half`).
    pub fn spec_name(self) -> &'static str {
        NAMES[self.index()].1
    }

    /// The `DataType` enum name (`DT_FLOAT`).
    pub fn enum_name(self) -> &'static str {
        NAMES[self.index()].2
    }

    /// TensorFlow's `DataType` enum value.
    pub fn enum_value(self) -> i32 {
        self as i32
    }

    fn index(self) -> usize {
        self as usize - 1
    }

    /// The dtype named `name` in an op spec: a spec name or one of TensorFlow's
    /// aliases (`float32`, `float64`, `float16`). Enum names are not spec names.
    pub fn from_spec_name(name: &str) -> Option<DType> {
        match name {
            "float32" => return Some(DType::F32),
            "float64" => return Some(DType::F64),
            "float16" => return Some(DType::F16),
            _ => {}
        }
        NAMES
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(d, _, _)| *d)
    }

    /// The dtype with the enum name `name` (`DT_FLOAT`).
    pub fn from_enum_name(name: &str) -> Option<DType> {
        NAMES
            .iter()
            .find(|(_, _, n)| *n == name)
            .map(|(d, _, _)| *d)
    }

    /// The dtype with TensorFlow's enum value `value`.
    pub fn from_enum_value(value: i32) -> Option<DType> {
        ALL_TYPES
            .get(usize::try_from(value).ok()?.checked_sub(1)?)
            .copied()
    }

    /// Whether this is a floating point type (half, bfloat16, float, double).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// Whether this is a (non-quantized) integer type.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DType::I8
                | DType::I16
                | DType::I32
                | DType::I64
                | DType::U8
                | DType::U16
                | DType::U32
                | DType::U64
        )
    }

    /// Whether this is a complex type.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    /// Whether this is a quantized type.
    pub fn is_quantized(self) -> bool {
        QUANTIZED_TYPES.contains(&self)
    }

    /// The size in bytes of one element, for types with a fixed size.
    /// `None` for string, resource and variant.
    pub fn size_of(self) -> Option<usize> {
        Some(match self {
            DType::Bool | DType::I8 | DType::U8 | DType::QInt8 | DType::QUInt8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 | DType::QInt16 | DType::QUInt16 => {
                2
            }
            DType::I32 | DType::U32 | DType::F32 | DType::QInt32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
            DType::String | DType::Resource | DType::Variant => return None,
        })
    }
}

impl fmt::Display for DType {
    /// Writes the spec name, as TensorFlow's `DataTypeString` does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spec_name())
    }
}

/// Where the name of a dtype's Rust element type resolves, for code
/// generated by the proc macros.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RustPath {
    /// A language type: `f32`, `bool`.
    Primitive,
    /// A type op-core defines or re-exports for generated code: `f16`,
    /// `Complex64`, `QInt8`, `ResourceHandle`.
    Runtime,
    /// `Vec<u8>`, the bytes of a `string` element, from std.
    Bytes,
}

/// Each dtype's Rust element type, as op-core stores tensors of it and as
/// authors name it in `#[kernel(types(f32))]`: the proc macros read names
/// in `types(...)`, write paths in generated code and name kernels in
/// messages from this one table. op-core declares its `Element` impls by
/// type (`elements!` in its `element.rs`), which a string table cannot
/// drive; generated code names each `Runtime` type through op-core, so a
/// name op-core lacks fails to compile. `variant` has none.
pub const RUST_TYPES: [(DType, &str, RustPath); 22] = [
    (DType::F32, "f32", RustPath::Primitive),
    (DType::F64, "f64", RustPath::Primitive),
    (DType::I32, "i32", RustPath::Primitive),
    (DType::U8, "u8", RustPath::Primitive),
    (DType::I16, "i16", RustPath::Primitive),
    (DType::I8, "i8", RustPath::Primitive),
    (DType::String, "Vec<u8>", RustPath::Bytes),
    (DType::Complex64, "Complex64", RustPath::Runtime),
    (DType::I64, "i64", RustPath::Primitive),
    (DType::Bool, "bool", RustPath::Primitive),
    (DType::QInt8, "QInt8", RustPath::Runtime),
    (DType::QUInt8, "QUInt8", RustPath::Runtime),
    (DType::QInt32, "QInt32", RustPath::Runtime),
    (DType::BF16, "bf16", RustPath::Runtime),
    (DType::QInt16, "QInt16", RustPath::Runtime),
    (DType::QUInt16, "QUInt16", RustPath::Runtime),
    (DType::U16, "u16", RustPath::Primitive),
    (DType::Complex128, "Complex128", RustPath::Runtime),
    (DType::F16, "f16", RustPath::Runtime),
    (DType::Resource, "ResourceHandle", RustPath::Runtime),
    (DType::U32, "u32", RustPath::Primitive),
    (DType::U64, "u64", RustPath::Primitive),
];

impl DType {
    /// The name of the Rust element type (`f32`, `Vec<u8>`, `Complex64`),
    /// and where it resolves; `None` for `variant`.
    ///
    /// ```
    /// use op_spec::DType;
    /// use op_spec::dtype::RustPath;
    /// assert_eq!(DType::F16.rust_type(), Some(("f16", RustPath::Runtime)));
    /// assert_eq!(DType::from_rust_name("Complex64"), Some(DType::Complex64));
    /// ```
    pub fn rust_type(self) -> Option<(&'static str, RustPath)> {
        RUST_TYPES
            .iter()
            .find(|(d, _, _)| *d == self)
            .map(|(_, name, path)| (*name, *path))
    }

    /// The dtype whose Rust element type is named `name` (`f32`, `bf16`,
    /// `Vec<u8>`).
    pub fn from_rust_name(name: &str) -> Option<DType> {
        RUST_TYPES
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(d, _, _)| *d)
    }
}

/// The error of parsing a [`DType`] from a string that names none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownDType(pub String);

impl fmt::Display for UnknownDType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown data type {}", crate::quote::quoted(&self.0))?;
        if let Some(near) = closest_dtype_name(&self.0) {
            write!(f, " (did you mean '{near}'?)")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownDType {}

impl FromStr for DType {
    type Err = UnknownDType;

    /// Accepts spec names (`float`), aliases (`float32`) and enum names (`DT_FLOAT`).
    fn from_str(s: &str) -> Result<DType, UnknownDType> {
        DType::from_spec_name(s)
            .or_else(|| DType::from_enum_name(s))
            .ok_or_else(|| UnknownDType(s.to_owned()))
    }
}

/// The spec name or alias closest to `name`, when one is close enough to be a
/// likely typo. Used for "did you mean" hints.
pub fn closest_dtype_name(name: &str) -> Option<&'static str> {
    let candidates = NAMES
        .iter()
        .map(|(_, n, _)| *n)
        .chain(["float32", "float64", "float16"]);
    crate::suggest::closest(name, candidates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_for_every_dtype() {
        for &dt in ALL_TYPES {
            assert_eq!(DType::from_spec_name(dt.spec_name()), Some(dt));
            assert_eq!(DType::from_enum_name(dt.enum_name()), Some(dt));
            assert_eq!(DType::from_enum_value(dt.enum_value()), Some(dt));
            assert_eq!(dt.to_string().parse::<DType>(), Ok(dt));
            assert_eq!(dt.enum_name().parse::<DType>(), Ok(dt));
        }
    }

    #[test]
    fn aliases_and_unknowns() {
        assert_eq!("float32".parse::<DType>(), Ok(DType::F32));
        assert_eq!("float64".parse::<DType>(), Ok(DType::F64));
        assert_eq!("float16".parse::<DType>(), Ok(DType::F16));
        assert_eq!(DType::from_enum_value(0), None);
        assert_eq!(DType::from_enum_value(24), None);
        assert_eq!(DType::from_enum_value(-1), None);
        let err = "flaot".parse::<DType>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown data type 'flaot' (did you mean 'float'?)"
        );
        assert!(DType::from_spec_name("DT_FLOAT").is_none());
    }

    #[test]
    fn type_classes_have_tensorflows_sizes_and_order() {
        assert_eq!(NUMBER_TYPES.len(), 19);
        assert_eq!(REAL_NUMBER_TYPES.len(), 12);
        assert_eq!(QUANTIZED_TYPES.len(), 5);
        for class in [NUMBER_TYPES, REAL_NUMBER_TYPES, QUANTIZED_TYPES] {
            assert!(class.windows(2).all(|w| w[0] < w[1]), "enum order");
        }
        assert!(REAL_NUMBER_TYPES.iter().all(|t| NUMBER_TYPES.contains(t)));
        assert!(!NUMBER_TYPES.contains(&DType::Bool));
        assert!(!NUMBER_TYPES.contains(&DType::String));
        assert!(!REAL_NUMBER_TYPES.iter().any(|t| t.is_complex()));
    }

    #[test]
    fn every_dtype_but_variant_has_one_rust_type() {
        for &dt in ALL_TYPES {
            match dt.rust_type() {
                Some((name, _)) => assert_eq!(DType::from_rust_name(name), Some(dt)),
                None => assert_eq!(dt, DType::Variant),
            }
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(DType::F32.size_of(), Some(4));
        assert_eq!(DType::Complex128.size_of(), Some(16));
        assert_eq!(DType::String.size_of(), None);
    }
}
