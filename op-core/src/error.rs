//! The framework's error type, with TensorFlow's status codes.
//!
//! An [`Error`] is TensorFlow's `Status` without the OK case: a [`Code`], a
//! message, and a chain of context frames that callers add on the way out
//! ([`Error::with_context`], [`ResultExt`]). Kernels return early with
//! [`op_requires!`](crate::op_requires) and
//! [`op_requires_ok!`](crate::op_requires_ok), the counterparts of
//! TensorFlow's `OP_REQUIRES` and `OP_REQUIRES_OK`.

use std::fmt;
use std::io;

/// Quoting a caller's input in a message at a bounded length: every error
/// that echoes a name or string it was given (an op, attr, node or
/// resource name, a string value) shows it through these, so that a huge
/// input makes a short message. `quoted("x")` is `'x'`; past
/// [`QUOTE_LIMIT`] chars, `'xxx…' (1048576 bytes)`. A list of such inputs
/// goes through [`listed`]: `'a', 'b', 'c' and 9,997 more (10,000 in all)`,
/// a large count through [`grouped`]: `10,000`, and a shape through
/// [`dims`].
pub use op_spec::quote::{
    DIMS_LIMIT, Dims, Grouped, Listed, QUOTE_LIMIT, Quoted, Summarized, capped, dims, grouped,
    listed, quoted, summarized,
};

/// A `Result` whose error defaults to the framework's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// TensorFlow's canonical error codes (`absl::StatusCode` without `OK`).
///
/// [`Code::value`] gives TensorFlow's numeric value; `Display` writes the
/// CamelCase name (`InvalidArgument`), [`Code::tf_name`] the upper-case one
/// (`INVALID_ARGUMENT`).
///
/// ```
/// use op_core::Code;
/// assert_eq!(Code::InvalidArgument.value(), 3);
/// assert_eq!(Code::InvalidArgument.to_string(), "InvalidArgument");
/// assert_eq!(Code::InvalidArgument.tf_name(), "INVALID_ARGUMENT");
/// assert_eq!(Code::from_value(12), Some(Code::Unimplemented));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Code {
    /// The operation was cancelled, typically by the caller.
    Cancelled = 1,
    /// An unknown error, or one from another error space.
    Unknown = 2,
    /// The caller gave an invalid argument (a bad shape, dtype or attr value).
    InvalidArgument = 3,
    /// A deadline expired before the operation could complete.
    DeadlineExceeded = 4,
    /// Some requested entity (a file, a resource) was not found.
    NotFound = 5,
    /// An entity that the operation tried to create already exists.
    AlreadyExists = 6,
    /// The caller may not perform the operation.
    PermissionDenied = 7,
    /// Some resource (memory, a quota) has been exhausted.
    ResourceExhausted = 8,
    /// The system is not in a state the operation requires (an uninitialized variable).
    FailedPrecondition = 9,
    /// The operation was aborted, e.g. by a concurrency conflict.
    Aborted = 10,
    /// The operation went past the valid range (reading past the end of input).
    OutOfRange = 11,
    /// The operation is not implemented or supported.
    Unimplemented = 12,
    /// An internal invariant is broken: a bug.
    Internal = 13,
    /// The service is currently unavailable; retrying may succeed.
    Unavailable = 14,
    /// Unrecoverable data loss or corruption.
    DataLoss = 15,
    /// The request lacks valid authentication credentials.
    Unauthenticated = 16,
}

/// Every code, in TensorFlow's numeric order.
const CODES: [(Code, &str, &str); 16] = [
    (Code::Cancelled, "Cancelled", "CANCELLED"),
    (Code::Unknown, "Unknown", "UNKNOWN"),
    (Code::InvalidArgument, "InvalidArgument", "INVALID_ARGUMENT"),
    (
        Code::DeadlineExceeded,
        "DeadlineExceeded",
        "DEADLINE_EXCEEDED",
    ),
    (Code::NotFound, "NotFound", "NOT_FOUND"),
    (Code::AlreadyExists, "AlreadyExists", "ALREADY_EXISTS"),
    (
        Code::PermissionDenied,
        "PermissionDenied",
        "PERMISSION_DENIED",
    ),
    (
        Code::ResourceExhausted,
        "ResourceExhausted",
        "RESOURCE_EXHAUSTED",
    ),
    (
        Code::FailedPrecondition,
        "FailedPrecondition",
        "FAILED_PRECONDITION",
    ),
    (Code::Aborted, "Aborted", "ABORTED"),
    (Code::OutOfRange, "OutOfRange", "OUT_OF_RANGE"),
    (Code::Unimplemented, "Unimplemented", "UNIMPLEMENTED"),
    (Code::Internal, "Internal", "INTERNAL"),
    (Code::Unavailable, "Unavailable", "UNAVAILABLE"),
    (Code::DataLoss, "DataLoss", "DATA_LOSS"),
    (Code::Unauthenticated, "Unauthenticated", "UNAUTHENTICATED"),
];

impl Code {
    /// Every code, in TensorFlow's numeric order.
    pub const ALL: [Code; 16] = {
        let mut all = [Code::Cancelled; 16];
        let mut i = 0;
        while i < 16 {
            all[i] = CODES[i].0;
            i += 1;
        }
        all
    };

    /// TensorFlow's numeric value of the code (1 to 16).
    pub fn value(self) -> i32 {
        self as i32
    }

    /// The code with TensorFlow's numeric value `value`; `None` for 0 (OK) and
    /// values out of range.
    pub fn from_value(value: i32) -> Option<Code> {
        let index = usize::try_from(value).ok()?.checked_sub(1)?;
        CODES.get(index).map(|entry| entry.0)
    }

    /// The CamelCase name (`InvalidArgument`), as `Display` writes it.
    pub fn name(self) -> &'static str {
        CODES[self.value() as usize - 1].1
    }

    /// TensorFlow's upper-case name (`INVALID_ARGUMENT`).
    pub fn tf_name(self) -> &'static str {
        CODES[self.value() as usize - 1].2
    }
}

impl Code {
    /// TensorFlow's code for an I/O error, the mapping of its `ErrnoToCode`
    /// (`tsl/platform/errors.cc`): `ENOENT` is `NotFound`, `EACCES`
    /// `PermissionDenied`, `ENOSPC` `ResourceExhausted`, `EISDIR`
    /// `FailedPrecondition`, `ENAMETOOLONG` `InvalidArgument`, and so on;
    /// an errno TensorFlow does not list is `Unknown`.
    ///
    /// On Unix an error that carries an errno
    /// ([`raw_os_error`](io::Error::raw_os_error)) is mapped by it; any
    /// other error (elsewhere, or one built from an [`io::ErrorKind`], as
    /// wrappers such as `tempfile` make them) by its kind, each kind with the
    /// code of the errnos it stands for.
    ///
    /// ```
    /// use std::io;
    /// use op_core::Code;
    /// let err = io::Error::new(io::ErrorKind::StorageFull, "disk full");
    /// assert_eq!(Code::from_io_error(&err), Code::ResourceExhausted);
    /// let err = io::Error::from(io::ErrorKind::IsADirectory);
    /// assert_eq!(Code::from_io_error(&err), Code::FailedPrecondition);
    /// ```
    pub fn from_io_error(error: &io::Error) -> Code {
        #[cfg(unix)]
        if let Some(errno) = error.raw_os_error() {
            return errno_to_code(errno);
        }
        kind_to_code(error.kind())
    }
}

/// TensorFlow's `ErrnoToCode`, case by case.
#[cfg(unix)]
fn errno_to_code(errno: i32) -> Code {
    use libc::*;
    match errno {
        EINVAL | ENAMETOOLONG | E2BIG | EDESTADDRREQ | EDOM | EFAULT | EILSEQ | ENOPROTOOPT
        | ENOTSOCK | ENOTTY | EPROTOTYPE | ESPIPE => Code::InvalidArgument,
        ETIMEDOUT => Code::DeadlineExceeded,
        ENODEV | ENOENT | ENXIO | ESRCH => Code::NotFound,
        EEXIST | EADDRNOTAVAIL | EALREADY => Code::AlreadyExists,
        EPERM | EACCES | EROFS => Code::PermissionDenied,
        ENOTEMPTY | EISDIR | ENOTDIR | EADDRINUSE | EBADF | EBUSY | ECHILD | EISCONN | ENOTCONN
        | EPIPE | ETXTBSY => Code::FailedPrecondition,
        ENOSPC | EDQUOT | EMFILE | EMLINK | ENFILE | ENOBUFS | ENOMEM => Code::ResourceExhausted,
        EFBIG | EOVERFLOW | ERANGE => Code::OutOfRange,
        ENOSYS | ENOTSUP | EAFNOSUPPORT | EPROTONOSUPPORT | EXDEV => Code::Unimplemented,
        EAGAIN | ECONNREFUSED | ECONNABORTED | ECONNRESET | EINTR | EHOSTUNREACH | ENETDOWN
        | ENETRESET | ENETUNREACH | ENOLCK => Code::Unavailable,
        EDEADLK | ESTALE => Code::Aborted,
        ECANCELED => Code::Cancelled,
        // The rest of TensorFlow's list: errnos that not every Unix has.
        #[cfg(any(target_os = "linux", target_os = "android", target_vendor = "apple"))]
        errno => match errno {
            ENOSTR => Code::InvalidArgument,
            ETIME => Code::DeadlineExceeded,
            ENOTBLK | ESHUTDOWN => Code::FailedPrecondition,
            ENODATA | ENOSR | EUSERS => Code::ResourceExhausted,
            EPFNOSUPPORT | ESOCKTNOSUPPORT => Code::Unimplemented,
            EHOSTDOWN | ENOLINK => Code::Unavailable,
            #[cfg(any(target_os = "linux", target_os = "android"))]
            ENONET => Code::Unavailable,
            _ => Code::Unknown,
        },
        #[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
        _ => Code::Unknown,
    }
}

/// The code of the errnos that `kind` stands for (see [`errno_to_code`]).
fn kind_to_code(kind: io::ErrorKind) -> Code {
    use io::ErrorKind as K;
    match kind {
        K::InvalidInput | K::InvalidFilename | K::ArgumentListTooLong | K::NotSeekable => {
            Code::InvalidArgument
        }
        K::TimedOut => Code::DeadlineExceeded,
        K::NotFound => Code::NotFound,
        K::AlreadyExists | K::AddrNotAvailable => Code::AlreadyExists,
        K::PermissionDenied | K::ReadOnlyFilesystem => Code::PermissionDenied,
        K::DirectoryNotEmpty
        | K::IsADirectory
        | K::NotADirectory
        | K::AddrInUse
        | K::ResourceBusy
        | K::NotConnected
        | K::BrokenPipe
        | K::ExecutableFileBusy => Code::FailedPrecondition,
        K::StorageFull | K::QuotaExceeded | K::TooManyLinks | K::OutOfMemory => {
            Code::ResourceExhausted
        }
        // Reading past the end of the input, TensorFlow's `OutOfRange`.
        K::FileTooLarge | K::UnexpectedEof => Code::OutOfRange,
        K::Unsupported | K::CrossesDevices => Code::Unimplemented,
        K::WouldBlock
        | K::ConnectionRefused
        | K::ConnectionAborted
        | K::ConnectionReset
        | K::Interrupted
        | K::HostUnreachable
        | K::NetworkDown
        | K::NetworkUnreachable => Code::Unavailable,
        K::Deadlock | K::StaleNetworkFileHandle => Code::Aborted,
        _ => Code::Unknown,
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An error: a [`Code`], a message, and context frames added by callers.
///
/// `Display` writes `Code: message` followed by each context frame on its own
/// line, indented by a tab, innermost (first added) first, the way TensorFlow
/// appends context to a status message:
///
/// ```
/// use op_core::{Code, Error};
/// let err = Error::invalid_argument("indices[2] = 7 is not in [0, 5)")
///     .with_context("in input 'indices'")
///     .with_context("in node 'gather'");
/// assert_eq!(err.code(), Code::InvalidArgument);
/// assert_eq!(err.message(), "indices[2] = 7 is not in [0, 5)");
/// assert_eq!(err.context(), ["in input 'indices'", "in node 'gather'"]);
/// assert_eq!(
///     err.to_string(),
///     "InvalidArgument: indices[2] = 7 is not in [0, 5)\n\tin input 'indices'\n\tin node 'gather'"
/// );
/// ```
///
/// An error is one pointer (its parts are boxed), so a `Result<()>` is one
/// word and the `Result`s every kernel and dispatch returns stay small
/// on the path where nothing fails.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorParts>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct ErrorParts {
    code: Code,
    message: String,
    context: Vec<String>,
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("code", &self.0.code)
            .field("message", &self.0.message)
            .field("context", &self.0.context)
            .finish()
    }
}

/// Defines one constructor per code.
macro_rules! constructors {
    ($($name:ident => $code:ident),* $(,)?) => {
        $(
            #[doc = concat!("An error with code [`Code::", stringify!($code), "`].")]
            pub fn $name(message: impl Into<String>) -> Error {
                Error::new(Code::$code, message)
            }
        )*
    };
}

impl Error {
    /// An error with `code` and `message` and no context.
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error(Box::new(ErrorParts {
            code,
            message: message.into(),
            context: Vec::new(),
        }))
    }

    constructors! {
        cancelled => Cancelled,
        unknown => Unknown,
        invalid_argument => InvalidArgument,
        deadline_exceeded => DeadlineExceeded,
        not_found => NotFound,
        already_exists => AlreadyExists,
        permission_denied => PermissionDenied,
        resource_exhausted => ResourceExhausted,
        failed_precondition => FailedPrecondition,
        aborted => Aborted,
        out_of_range => OutOfRange,
        unimplemented => Unimplemented,
        internal => Internal,
        unavailable => Unavailable,
        data_loss => DataLoss,
        unauthenticated => Unauthenticated,
    }

    /// The error's code.
    pub fn code(&self) -> Code {
        self.0.code
    }

    /// The message, without code or context.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The context frames, innermost (first added) first.
    pub fn context(&self) -> &[String] {
        &self.0.context
    }

    /// Adds an outer context frame, such as "while computing node 'foo'".
    pub fn with_context(mut self, context: impl Into<String>) -> Error {
        self.0.context.push(context.into());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.code, self.0.message)?;
        for frame in &self.0.context {
            write!(f, "\n\t{frame}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Adds context to the error of a `Result<T, Error>`.
///
/// ```
/// use op_core::{Error, Result, ResultExt};
/// fn parse(s: &str) -> Result<i64> {
///     s.parse().map_err(|_| Error::invalid_argument(format!("not a number: {s:?}")))
/// }
/// let err = parse("x").context("in attr 'axis'").unwrap_err();
/// assert_eq!(err.context(), ["in attr 'axis'"]);
/// let err = parse("y").with_context(|| format!("in input {}", 2)).unwrap_err();
/// assert_eq!(err.context(), ["in input 2"]);
/// ```
pub trait ResultExt<T> {
    /// Adds `context` as an outer frame if this is an error.
    fn context(self, context: impl Into<String>) -> Result<T>;

    /// Adds the frame that `context` returns if this is an error; `context`
    /// runs only then.
    fn with_context<C, F>(self, context: F) -> Result<T>
    where
        C: Into<String>,
        F: FnOnce() -> C;
}

impl<T> ResultExt<T> for Result<T> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|e| e.with_context(context))
    }

    fn with_context<C, F>(self, context: F) -> Result<T>
    where
        C: Into<String>,
        F: FnOnce() -> C,
    {
        self.map_err(|e| e.with_context(context()))
    }
}

/// Returns an error from the enclosing function unless a condition holds:
/// TensorFlow's `OP_REQUIRES`.
///
/// Two forms:
///
/// - `op_requires!(cond, code, "format {}", args...)` returns
///   `Err(Error::new(code, format!("format {}", args...)))`;
/// - `op_requires!(cond, error)` returns `Err(error)` for a ready [`Error`].
///
/// The error is converted with `Into`, so the enclosing function may return
/// any `Result<_, E>` with `E: From<Error>`. The message is formatted only
/// when the condition fails.
///
/// ```
/// use op_core::{op_requires, Code, Error, Result};
///
/// fn check_axis(axis: i64, rank: i64) -> Result<usize> {
///     op_requires!(
///         -rank <= axis && axis < rank,
///         Code::InvalidArgument,
///         "axis {axis} is out of range for a tensor of rank {}",
///         rank
///     );
///     op_requires!(rank > 0, Error::unimplemented("scalars"));
///     Ok(axis.rem_euclid(rank) as usize)
/// }
///
/// assert_eq!(check_axis(-1, 3).unwrap(), 2);
/// let err = check_axis(3, 3).unwrap_err();
/// assert_eq!(err.code(), Code::InvalidArgument);
/// assert_eq!(err.message(), "axis 3 is out of range for a tensor of rank 3");
/// ```
#[macro_export]
macro_rules! op_requires {
    ($cond:expr, $code:expr, $($format:tt)+) => {
        if !($cond) {
            return ::core::result::Result::Err(::core::convert::From::from(
                $crate::Error::new($code, ::std::format!($($format)+)),
            ));
        }
    };
    ($cond:expr, $error:expr $(,)?) => {
        if !($cond) {
            return ::core::result::Result::Err(::core::convert::From::from($error));
        }
    };
}

/// Evaluates a `Result`, returning its error from the enclosing function and
/// yielding its value otherwise: TensorFlow's `OP_REQUIRES_OK`.
///
/// `op_requires_ok!(expr)` behaves like `expr?`. `op_requires_ok!(expr,
/// "format {}", args...)` converts the error into an [`Error`] and adds the
/// formatted text as an outer context frame (formatted only on error).
///
/// ```
/// use op_core::{op_requires_ok, Error, Result};
///
/// fn non_negative(x: i64) -> Result<u64> {
///     u64::try_from(x).map_err(|_| Error::invalid_argument(format!("{x} is negative")))
/// }
///
/// fn total(xs: &[i64]) -> Result<u64> {
///     let mut sum = 0;
///     for (i, &x) in xs.iter().enumerate() {
///         sum += op_requires_ok!(non_negative(x), "in element {i}");
///     }
///     Ok(sum)
/// }
///
/// assert_eq!(total(&[1, 2]).unwrap(), 3);
/// assert_eq!(
///     total(&[1, -2]).unwrap_err().to_string(),
///     "InvalidArgument: -2 is negative\n\tin element 1"
/// );
/// ```
#[macro_export]
macro_rules! op_requires_ok {
    ($result:expr $(,)?) => {
        match $result {
            ::core::result::Result::Ok(value) => value,
            ::core::result::Result::Err(error) => {
                return ::core::result::Result::Err(::core::convert::From::from(error));
            }
        }
    };
    ($result:expr, $($format:tt)+) => {
        match $result {
            ::core::result::Result::Ok(value) => value,
            ::core::result::Result::Err(error) => {
                let error: $crate::Error = ::core::convert::From::from(error);
                return ::core::result::Result::Err(::core::convert::From::from(
                    error.with_context(::std::format!($($format)+)),
                ));
            }
        }
    };
}

impl From<op_spec::SpecErrors> for Error {
    /// An op registration that does not parse or validate is an invalid argument.
    fn from(e: op_spec::SpecErrors) -> Error {
        Error::invalid_argument(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What dispatch returns on success costs one word to move.
    #[test]
    fn a_result_of_nothing_is_one_word_and_debug_shows_the_parts() {
        assert_eq!(size_of::<Result<()>>(), size_of::<usize>());
        let err = Error::not_found("no op 'Foo'").with_context("in node 'n'");
        assert_eq!(
            format!("{err:?}"),
            r#"Error { code: NotFound, message: "no op 'Foo'", context: ["in node 'n'"] }"#
        );
        assert_eq!(err.clone(), err);
    }

    #[test]
    fn codes_round_trip() {
        for (i, code) in Code::ALL.into_iter().enumerate() {
            assert_eq!(code.value(), i as i32 + 1);
            assert_eq!(Code::from_value(code.value()), Some(code));
            assert_eq!(format!("{code:?}"), code.name());
        }
        assert_eq!(Code::from_value(0), None);
        assert_eq!(Code::from_value(17), None);
        assert_eq!(Code::from_value(-3), None);
    }

    #[cfg(unix)]
    #[test]
    fn errnos_map_as_in_tensorflow() {
        let code = |errno| Code::from_io_error(&io::Error::from_raw_os_error(errno));
        for (errno, expected) in [
            (libc::ENOENT, Code::NotFound),
            (libc::EACCES, Code::PermissionDenied),
            (libc::EPERM, Code::PermissionDenied),
            (libc::EROFS, Code::PermissionDenied),
            (libc::EEXIST, Code::AlreadyExists),
            (libc::EINVAL, Code::InvalidArgument),
            (libc::ENAMETOOLONG, Code::InvalidArgument),
            (libc::EISDIR, Code::FailedPrecondition),
            (libc::ENOTDIR, Code::FailedPrecondition),
            (libc::ENOTEMPTY, Code::FailedPrecondition),
            (libc::ENOSPC, Code::ResourceExhausted),
            (libc::EDQUOT, Code::ResourceExhausted),
            (libc::ENOMEM, Code::ResourceExhausted),
            (libc::EMFILE, Code::ResourceExhausted),
            (libc::EFBIG, Code::OutOfRange),
            (libc::ENOSYS, Code::Unimplemented),
            (libc::EXDEV, Code::Unimplemented),
            (libc::EAGAIN, Code::Unavailable),
            (libc::EINTR, Code::Unavailable),
            (libc::ETIMEDOUT, Code::DeadlineExceeded),
            (libc::EDEADLK, Code::Aborted),
            (libc::ESTALE, Code::Aborted),
            (libc::ECANCELED, Code::Cancelled),
            (libc::EIO, Code::Unknown),
            (libc::ELOOP, Code::Unknown),
        ] {
            assert_eq!(code(errno), expected, "errno {errno}");
        }
        #[cfg(target_os = "linux")]
        for (errno, expected) in [
            (libc::ENODATA, Code::ResourceExhausted),
            (libc::ETIME, Code::DeadlineExceeded),
            (libc::ENONET, Code::Unavailable),
        ] {
            assert_eq!(code(errno), expected, "errno {errno}");
        }
    }

    #[test]
    fn kinds_map_like_their_errnos() {
        let code = |kind| Code::from_io_error(&io::Error::new(kind, "wrapped"));
        assert_eq!(code(io::ErrorKind::NotFound), Code::NotFound);
        assert_eq!(code(io::ErrorKind::IsADirectory), Code::FailedPrecondition);
        assert_eq!(code(io::ErrorKind::InvalidFilename), Code::InvalidArgument);
        assert_eq!(code(io::ErrorKind::OutOfMemory), Code::ResourceExhausted);
        assert_eq!(code(io::ErrorKind::StorageFull), Code::ResourceExhausted);
        assert_eq!(code(io::ErrorKind::UnexpectedEof), Code::OutOfRange);
        assert_eq!(code(io::ErrorKind::Other), Code::Unknown);
        // The kind std gives an errno maps to the errno's code.
        #[cfg(unix)]
        for errno in [libc::ENAMETOOLONG, libc::EISDIR, libc::ENOSPC, libc::EACCES] {
            let error = io::Error::from_raw_os_error(errno);
            assert_eq!(
                code(error.kind()),
                Code::from_io_error(&error),
                "errno {errno}"
            );
        }
    }
}
