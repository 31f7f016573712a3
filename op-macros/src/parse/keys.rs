//! Each macro's keys, declared once (pyo3's `attributes::kw` idea): the
//! [`arguments!`] macro writes the darling struct and, from the same field
//! list, the [`Keys`] that the unknown-key error lists and suggests from.
//! A key added to a struct is a key the error knows, with no second list
//! to keep in step.

use std::any::TypeId;

use super::StrList;

/// The keys a macro's arguments accept, in declaration order.
pub trait Keys {
    /// Every key, `crate` spelt as written (not as its field `krate`).
    fn keys() -> Vec<&'static str>;

    /// The keys whose values are quoted spec strings (`inputs("x: T")`),
    /// for the error on a spec written without its quotes.
    fn string_list_keys() -> Vec<&'static str>;
}

/// Whether a field of type `T` holds quoted spec strings.
pub fn is_string_list<T: 'static>() -> bool {
    TypeId::of::<T>() == TypeId::of::<StrList>()
}

/// Declares a macro's arguments: a `darling::FromMeta` struct with one
/// public field per key, and its [`Keys`].
///
/// A field is `name: Type` for the key `name`, or `field as "key": Type`
/// when the key is not an identifier (`krate as "crate"`). A last
/// `..field: Type` flattens another declaration's keys in (the op flags),
/// after the struct's own.
macro_rules! arguments {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                $field:ident $(as $key:literal)? : $ty:ty,
            )*
            $(.. $flat:ident : $flat_ty:ty,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(darling::FromMeta)]
        pub struct $name {
            $(
                $(#[$field_meta])*
                $(#[darling(rename = $key)])?
                pub $field: $ty,
            )*
            $(
                #[darling(flatten)]
                pub $flat: $flat_ty,
            )?
        }

        impl $crate::parse::keys::Keys for $name {
            fn keys() -> Vec<&'static str> {
                #[allow(unused_mut)]
                let mut keys = vec![$($crate::parse::keys::arguments!(@key $field $($key)?)),*];
                $(keys.extend(<$flat_ty as $crate::parse::keys::Keys>::keys());)?
                keys
            }

            fn string_list_keys() -> Vec<&'static str> {
                let mut keys = Vec::new();
                $(
                    if $crate::parse::keys::is_string_list::<$ty>() {
                        keys.push($crate::parse::keys::arguments!(@key $field $($key)?));
                    }
                )*
                $(keys.extend(<$flat_ty as $crate::parse::keys::Keys>::string_list_keys());)?
                keys
            }
        }
    };
    (@key $field:ident) => {
        stringify!($field)
    };
    (@key $field:ident $key:literal) => {
        $key
    };
}

pub(crate) use arguments;

#[cfg(test)]
mod tests {
    use darling::FromMeta;
    use darling::ast::NestedMeta;

    use super::Keys;
    use crate::parse::{
        AttrOptions, FnOpArgs, GradientArgs, KernelArgs, LiteKernelArgs, RegisterOpArgs,
    };

    /// Darling knows every key that the unknown-key error lists: a value
    /// of the wrong kind is an error, but never "Unknown field".
    fn every_key_is_a_field<T: FromMeta + Keys>() {
        for key in T::keys() {
            let item: NestedMeta = syn::parse_str(&format!("{key} = 1")).expect("a key");
            if let Err(e) = T::from_list(&[item]) {
                assert!(!e.to_string().contains("Unknown field"), "{key}: {e}");
            }
        }
    }

    #[test]
    fn the_listed_keys_are_the_fields() {
        every_key_is_a_field::<RegisterOpArgs>();
        every_key_is_a_field::<FnOpArgs>();
        every_key_is_a_field::<KernelArgs>();
        every_key_is_a_field::<AttrOptions>();
        every_key_is_a_field::<GradientArgs>();
        every_key_is_a_field::<LiteKernelArgs>();
    }

    #[test]
    fn keys_keep_their_order_with_the_flags_last() {
        assert_eq!(
            KernelArgs::keys(),
            ["op", "device", "types", "host_memory", "crate"]
        );
        let keys = RegisterOpArgs::keys();
        assert_eq!(
            keys[..9],
            [
                "name",
                "attrs",
                "inputs",
                "outputs",
                "full_types",
                "wrapper",
                "shape",
                "shape_fn",
                "crate"
            ]
        );
        assert_eq!(keys.last(), Some(&"deprecated"));
        assert!(keys.contains(&"not_differentiable"));
        assert_eq!(GradientArgs::keys(), ["op", "crate"]);
        assert_eq!(KernelArgs::string_list_keys(), ["host_memory"]);
    }
}
