//! A host's C functions, found in the process that loaded our library
//! rather than linked: TensorFlow's C API, PyTorch's stable ABI. Looking
//! each function up by name at load needs nothing of the host to build
//! (every host crate and its tests build on any machine), and a host that
//! lacks one is told which by name instead of failing in the dynamic
//! linker or crashing later.
//!
//! [`c_api!`](macro@crate::c_api) declares the table; [`in_process`] is the
//! lookup most hosts want.
//!
//! ```
//! op_host::c_api! {
//!     /// Two functions of the C library.
//!     pub struct Libc {
//!         fn strlen(s: *const std::ffi::c_char) -> usize;
//!         fn abs(x: std::ffi::c_int) -> std::ffi::c_int;
//!     }
//! }
//! let libc = Libc::resolve(op_host::c_api::in_process(c"libc.so.6", false)).expect("a C library");
//! // SAFETY: `strlen` of a C string.
//! assert_eq!(unsafe { (libc.strlen)(c"four".as_ptr()) }, 4);
//!
//! op_host::c_api! {
//!     /// A function no library has.
//!     pub struct Missing {
//!         fn opkit_no_such_function();
//!     }
//! }
//! let missing = Missing::resolve(op_host::c_api::in_process(c"libnothing.so", false)).err();
//! assert_eq!(missing, Some(vec!["opkit_no_such_function"]));
//! ```

use std::ffi::{CStr, c_void};

/// Declares a table of C functions, one field per function (`unsafe
/// extern "C"`), and `resolve(lookup)`: the table with each function
/// looked up by name, or the names of those `lookup` did not find (null).
/// `NAMES` lists every function's name. See the [module docs](mod@crate::c_api).
#[macro_export]
macro_rules! c_api {
    (
        $(#[$doc:meta])*
        $vis:vis struct $table:ident {
            $(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;)*
        }
    ) => {
        $(#[$doc])*
        #[allow(non_snake_case, reason = "the fields are the C functions' own names")]
        $vis struct $table {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                $vis $name: unsafe extern "C" fn($($ty),*) $(-> $ret)?,
            )*
        }

        impl $table {
            /// The names of every function the table holds.
            #[allow(dead_code, reason = "not every table's names are listed outside tests")]
            pub const NAMES: &[&str] = &[$(stringify!($name)),*];

            /// The table, each function looked up with `lookup`; the names
            /// of those it does not find otherwise.
            #[allow(dead_code, reason = "a table may be made another way")]
            pub fn resolve(
                lookup: impl Fn(&::std::ffi::CStr) -> *mut ::std::ffi::c_void,
            ) -> ::std::result::Result<$table, ::std::vec::Vec<&'static str>> {
                let mut missing = ::std::vec::Vec::new();
                $(
                    #[allow(non_snake_case)]
                    let $name = lookup(
                        // The name with its NUL, for dlsym.
                        ::std::ffi::CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes())
                            .expect("no NUL inside a function's name"),
                    );
                    if $name.is_null() {
                        missing.push(stringify!($name));
                    }
                )*
                if !missing.is_empty() {
                    return Err(missing);
                }
                Ok($table {
                    $(
                        // SAFETY: the lookup found a function of this name
                        // in the host's library, whose C signature the
                        // field declares (from the host's header or
                        // source); a data pointer and a function pointer
                        // have one size on every platform we build for.
                        $name: unsafe {
                            ::std::mem::transmute::<*mut ::std::ffi::c_void, unsafe extern "C" fn($($ty),*) $(-> $ret)?>($name)
                        },
                    )*
                })
            }
        }
    };
}

/// A lookup for [`c_api!`](macro@crate::c_api)'s `resolve`: each name among the
/// process's global symbols, then in `library` (a soname: `libtorch_cpu.so`)
/// if the process has loaded it, as hosts that load their own libraries
/// without `RTLD_GLOBAL` (PyTorch) do. Loads nothing. With `make_global`,
/// a `library` found is made global too, for a helper library loaded
/// later that needs its symbols (TensorFlow's resource shim).
pub fn in_process(library: &CStr, make_global: bool) -> impl Fn(&CStr) -> *mut c_void + use<> {
    let global = if make_global { libc::RTLD_GLOBAL } else { 0 };
    // SAFETY: dlopen with RTLD_NOLOAD only looks for a library already
    // loaded (it loads nothing, runs no constructor); the name is a C
    // string. The handle is never closed: the host stays loaded.
    let handle = unsafe {
        libc::dlopen(
            library.as_ptr(),
            libc::RTLD_NOW | libc::RTLD_NOLOAD | global,
        )
    } as usize;
    move |name: &CStr| {
        // SAFETY: `name` is a C string; RTLD_DEFAULT and a handle from
        // dlopen are valid for dlsym, which only looks the name up.
        let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        if global.is_null() && handle != 0 {
            // SAFETY: as above.
            unsafe { libc::dlsym(handle as *mut c_void, name.as_ptr()) }
        } else {
            global
        }
    }
}

#[cfg(test)]
mod tests {
    crate::c_api! {
        /// Two names.
        #[allow(dead_code, reason = "resolved, never called")]
        struct Two {
            fn first();
            fn second(x: i32) -> i32;
        }
    }

    #[test]
    fn resolve_names_every_function_it_does_not_find() {
        let missing = Two::resolve(|name| {
            if name == c"first" {
                std::ptr::null_mut()
            } else {
                // Any non-null address: the table is not called.
                std::ptr::NonNull::<u8>::dangling().as_ptr().cast()
            }
        })
        .err();
        assert_eq!(missing, Some(vec!["first"]));
        assert_eq!(Two::NAMES, ["first", "second"]);
    }
}
