//! The one error of a whole call: [`Error`], a boxed, one-word error whose
//! [`ErrorKind`] says what went wrong, wrapping the precise error of the
//! layer that found it (a byte offset, an index path, a JSON path,
//! expected vs got). Also [`CallError`], the binding errors of a call.

use fnabi_abi::attrs::AttributeError;
use fnabi_abi::mlir::HeaderError;
use fnabi_abi::raw::DimOutOfRange;
use fnabi_abi::reflection::ReflectionError;
use fnabi_abi::structure::{Key, StructureError};
use fnabi_abi::vmfb::VmfbError;
use std::fmt;

pub use fnabi_abi::error::{ParseError, ParseErrorKind};

/// Result alias over [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error a call through fnabi reports: one machine word (a box), so
/// `Result<T, Error>` stays small on the hot path; match on [`Error::kind`].
///
/// ```
/// use fnabi_core::error::{Error, ErrorKind};
/// let e = Error::mismatch("dim 1 of argument 0", "4", "3");
/// assert!(matches!(e.kind(), ErrorKind::Mismatch { .. }));
/// assert_eq!(e.to_string(), "dim 1 of argument 0: expected 4, got 3");
/// assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
/// ```
pub struct Error(Box<ErrorKind>);

/// What went wrong, with the precise error of the layer that found it.
///
/// ```
/// use fnabi_core::{Array, ErrorKind};
/// let e = Array::from_vec(&[3], vec![1.0f32, 2.0]).unwrap_err();
/// match e.kind() {
///     ErrorKind::Mismatch { context, expected, got } => {
///         println!("{context}: {expected} vs {got}");
///     }
///     other => panic!("another kind: {other}"),
/// }
/// let e = fnabi_core::npy::read_file("/nonexistent.npy").unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::Io { .. }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A signature or other text form failed to parse (byte offset).
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A function's ABI attributes are inconsistent or of an unknown version.
    #[error(transparent)]
    Attributes(#[from] AttributeError),
    /// MLIR text (a function header or type) that fnabi cannot read (line and column).
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// A value does not match what was expected (dtype, rank, shape, count, range).
    #[error("{context}: expected {expected}, got {got}")]
    Mismatch {
        /// What was checked, and where (`"dim 1 of input 0"`).
        context: String,
        /// What was expected.
        expected: String,
        /// What was found.
        got: String,
    },
    /// An argument that the caller gave is invalid for the API it was given to.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A memory scope has no room for a request (a full ring buffer that
    /// did not free up in time, a request larger than the scope).
    #[error("memory exhausted: {0}")]
    Exhausted(String),
    /// An I/O error (reading or mapping a file), with the path.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// A value does not fit a structure (or a structure is malformed); names the index path.
    #[error(transparent)]
    Structure(#[from] StructureError),
    /// A JSON text is not valid JSON, or not a valid JSON form of a value.
    #[error("JSON: {0}")]
    Json(String),
    /// An `iree.abi` reflection record failed to parse (byte offset and JSON path).
    #[error(transparent)]
    Reflection(#[from] ReflectionError),
    /// Arguments do not bind to a function, or a value list has the wrong length.
    #[error(transparent)]
    Call(#[from] CallError),
    /// A `.vmfb` module file is malformed (byte offset).
    #[error(transparent)]
    Vmfb(#[from] VmfbError),
    /// A backend reported a failure: the backend's own error type
    /// (`fnabi_mlir::MlirError` for compiling, loading and calling MLIR code;
    /// `fnabi_iree::IreeError` for the IREE runtime), recoverable with
    /// [`Error::backend_error`].
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// The kind, by value.
    pub fn into_kind(self) -> ErrorKind {
        *self.0
    }

    /// A value that does not match what was expected.
    #[cold]
    pub fn mismatch(context: impl Into<String>, expected: impl Into<String>, got: impl Into<String>) -> Self {
        ErrorKind::Mismatch { context: context.into(), expected: expected.into(), got: got.into() }.into()
    }

    /// An argument that is invalid for the API it was given to.
    #[cold]
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        ErrorKind::InvalidArgument(message.into()).into()
    }

    /// A memory scope without room for a request.
    #[cold]
    pub fn exhausted(message: impl Into<String>) -> Self {
        ErrorKind::Exhausted(message.into()).into()
    }

    /// A file operation that failed, with the path.
    #[cold]
    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        ErrorKind::Io { path: path.into(), source }.into()
    }

    /// Malformed JSON, or JSON that is no valid form of a value.
    #[cold]
    pub fn json(message: impl Into<String>) -> Self {
        ErrorKind::Json(message.into()).into()
    }

    /// A backend's own error (see [`ErrorKind::Backend`]).
    #[cold]
    pub fn backend(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        ErrorKind::Backend(Box::new(error)).into()
    }

    /// The backend's own error, when this is one of type `E`.
    pub fn backend_error<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self.kind() {
            ErrorKind::Backend(e) => e.downcast_ref::<E>(),
            _ => None,
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&*self.0)
    }
}

impl From<ErrorKind> for Error {
    #[cold]
    fn from(kind: ErrorKind) -> Self {
        Error(Box::new(kind))
    }
}

/// `From` each layer's error, through its [`ErrorKind`].
macro_rules! from_layer_error {
    ($($t:ty),*) => {$(
        impl From<$t> for Error {
            #[cold]
            fn from(e: $t) -> Self {
                ErrorKind::from(e).into()
            }
        }
    )*};
}
from_layer_error!(ParseError, AttributeError, HeaderError, StructureError, ReflectionError, CallError, VmfbError);

impl From<DimOutOfRange> for Error {
    #[cold]
    fn from(e: DimOutOfRange) -> Self {
        Error::invalid_argument(e.to_string())
    }
}

/// Why arguments do not bind to a function, or a result list does not fit.
///
/// ```
/// use fnabi_core::{CallError, Error, ErrorKind};
/// // What a backend reports for f(x, y) called with three positional arguments.
/// let e: Error = CallError::TooManyPositional { max: 2, got: 3 }.into();
/// assert!(matches!(e.kind(), ErrorKind::Call(CallError::TooManyPositional { max: 2, got: 3 })));
/// assert_eq!(e.to_string(), "takes 2 positional arguments but 3 were given");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// A parameter got no value.
    MissingArgument {
        /// Its position.
        index: usize,
        /// Its keyword name, if it has one.
        name: Option<Key>,
    },
    /// A keyword that names no parameter.
    UnknownKeyword(Key),
    /// A parameter given twice (by two keywords, or by position and keyword).
    DuplicateKeyword(Key),
    /// More positional arguments than parameters.
    TooManyPositional {
        /// The number of parameters.
        max: usize,
        /// The number of positional arguments.
        got: usize,
    },
    /// A value list of the wrong length (VM arguments or results).
    Arity {
        /// `"arguments"` or `"results"`.
        what: &'static str,
        /// The expected count (`"2"`, `"at least 1"`).
        expected: String,
        /// The count found.
        got: usize,
    },
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::MissingArgument { index, name: Some(n) } => {
                write!(f, "missing argument {n:?} (argument {index})")
            }
            CallError::MissingArgument { index, name: None } => write!(f, "missing positional argument {index}"),
            CallError::UnknownKeyword(k) => write!(f, "unexpected keyword argument {k:?}"),
            CallError::DuplicateKeyword(k) => write!(f, "got multiple values for argument {k:?}"),
            CallError::TooManyPositional { max, got } => write!(
                f,
                "takes {max} positional argument{} but {got} {} given",
                if *max == 1 { "" } else { "s" },
                if *got == 1 { "was" } else { "were" }
            ),
            CallError::Arity { what, expected, got } => {
                write!(f, "wrong number of {what}: expected {expected}, got {got}")
            }
        }
    }
}

impl std::error::Error for CallError {}
