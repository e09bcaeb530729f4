//! The one error of a whole call: [`Error`], a boxed, one-word error whose
//! [`ErrorKind`] says what went wrong, wrapping the precise error of the
//! layer that found it (a byte offset, an index path, a JSON path,
//! expected vs got). Also [`CallError`], every problem with the values of
//! a call (binding, dtype, rank, dims, ranges), typed and at an index path.

use fnabi_abi::attrs::AttributeError;
use fnabi_abi::mlir::HeaderError;
use fnabi_abi::raw::DimOutOfRange;
use fnabi_abi::reflection::ReflectionError;
use fnabi_abi::scalar::DType;
use fnabi_abi::structure::{IndexPath, Key, PathKey, StructureError, StructureErrorKind};
use fnabi_abi::vmfb::VmfbError;
use std::borrow::Cow;
use std::fmt;

pub use fnabi_abi::error::{ParseError, ParseErrorKind};

/// Result alias over [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every error a call through fnabi reports: one machine word (a box), so
/// `Result<T, Error>` stays small on the hot path; match on [`Error::kind`].
///
/// ```
/// use fnabi_core::error::{Error, ErrorKind};
/// let e = Error::mismatch("element count of shape [3]", "3", "2");
/// assert!(matches!(e.kind(), ErrorKind::Mismatch { .. }));
/// assert_eq!(e.to_string(), "element count of shape [3]: expected 3, got 2");
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
    /// A value does not match what was expected, outside a call's values
    /// (an element count for a shape, a `--signature` that contradicts a
    /// library's own): a call's values report [`ErrorKind::Call`] instead.
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
    /// A call's values do not fit the function: binding, arity, dtype, rank,
    /// dims, value kinds, ranges, at an index path.
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

    /// A value that does not match what was expected (outside a call's
    /// values: those are [`CallError`]s).
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

/// Which values of a call a [`CallError`]'s path indexes.
///
/// ```
/// use fnabi_core::error::{CallError, CallErrorKind, CallSide};
/// use fnabi_core::{IndexPath, PathKey};
/// let kind = CallErrorKind::Rank { expected: 2, got: 1 };
/// let at = |side| CallError::new(side, IndexPath(vec![PathKey::Index(0)]), kind.clone()).to_string();
/// assert_eq!(at(CallSide::Argument), "argument [0]: rank: expected 2, got 1");
/// assert_eq!(at(CallSide::Result), "result [0]: rank: expected 2, got 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallSide {
    /// The arguments: the path's first key is the argument (its position,
    /// or its keyword for a dict root).
    Argument,
    /// The results: the path's first key is the result's position.
    Result,
    /// One value converted on its own (not part of a call).
    Value,
}

impl CallSide {
    fn words(self) -> (&'static str, &'static str) {
        match self {
            CallSide::Argument => ("argument", "arguments"),
            CallSide::Result => ("result", "results"),
            CallSide::Value => ("value", "value"),
        }
    }
}

/// A problem with the values of a call: where ([`CallSide`] and the
/// [`IndexPath`] of the value at fault, in fnabi's index-path form
/// `[1]["w"]`) and what ([`CallErrorKind`], with expected and got as typed
/// values). It travels inside the boxed [`Error`] ([`ErrorKind::Call`]);
/// every constructor that builds one for an error path is `#[cold]`.
///
/// ```
/// use fnabi_core::error::{CallError, CallErrorKind, CallSide};
/// use fnabi_core::{DType, Error, ErrorKind, PathKey};
/// let e: Error = CallError::new(CallSide::Argument, vec![PathKey::Index(1), PathKey::Name("w".into())].into(),
///     CallErrorKind::Dim { axis: 1, expected: 3, got: 4 }).with_note("memref<4x3xf32>").into();
/// assert_eq!(e.to_string(), r#"argument [1]["w"] (memref<4x3xf32>): dim 1: expected 3, got 4"#);
/// match e.kind() {
///     ErrorKind::Call(CallError { path, kind: CallErrorKind::Dim { axis, expected, got }, .. }) => {
///         assert_eq!((path.to_string(), *axis, *expected, *got), (r#"[1]["w"]"#.to_string(), 1, 3, 4));
///     }
///     other => panic!("another kind: {other}"),
/// }
/// // Binding errors name themselves.
/// let e: Error = CallError::argument(CallErrorKind::TooManyPositional { max: 2, got: 3 }).into();
/// assert_eq!(e.to_string(), "takes 2 positional arguments but 3 were given");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallError {
    /// Arguments or results.
    pub side: CallSide,
    /// The index path of the value at fault (the root for the call as a whole).
    pub path: IndexPath,
    /// What went wrong there.
    pub kind: CallErrorKind,
    /// What the function declares at the path, for messages
    /// (`memref<4x3xf32>`, `f32[1x4]`).
    pub note: Option<Box<str>>,
}

/// What is wrong with a value of a call, with expected and got as typed values.
///
/// ```
/// use fnabi_core::error::{CallError, CallErrorKind};
/// use fnabi_core::DType;
/// let e = CallError::at_argument(2, CallErrorKind::Dtype { expected: DType::F32, got: DType::F64 });
/// assert_eq!(e.to_string(), "argument [2]: element type: expected f32, got f64");
/// assert_eq!(e.expected_got(), Some(("f32".to_string(), "f64".to_string())));
/// let e = CallError::argument(CallErrorKind::UnknownKeyword("beta".into()));
/// assert_eq!(e.to_string(), "unexpected keyword argument \"beta\"");
/// let e = CallError::result(CallErrorKind::Arity { expected: 2, at_least: false, got: 1 });
/// assert_eq!(e.to_string(), "wrong number of results: expected 2, got 1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallErrorKind {
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
    /// A value list of the wrong length (the arguments or results of a call).
    Arity {
        /// The expected count (the least count when `at_least`).
        expected: usize,
        /// `expected` is a lower bound (a variadic list).
        at_least: bool,
        /// The count found.
        got: usize,
    },
    /// An array of the wrong element type.
    Dtype {
        /// The declared element type.
        expected: DType,
        /// The array's.
        got: DType,
    },
    /// An array of the wrong rank.
    Rank {
        /// The declared rank.
        expected: usize,
        /// The array's.
        got: usize,
    },
    /// An array whose extent along `axis` differs from a static dim.
    Dim {
        /// Which dim (0 = outermost).
        axis: usize,
        /// The declared extent.
        expected: usize,
        /// The array's.
        got: usize,
    },
    /// A value of the wrong kind: `expected an array, got a dict`.
    ValueKind {
        /// What the parameter takes (`an array`, `f32[4]`, `None (a null slot)`).
        expected: Cow<'static, str>,
        /// What was given (`a dict`, `float 1.5`).
        got: Cow<'static, str>,
    },
    /// A sequence of the wrong length.
    Length {
        /// The items the parameter takes.
        expected: usize,
        /// The items given.
        got: usize,
    },
    /// A dict lacks a key the parameter takes.
    MissingKey(Key),
    /// A dict has a key the parameter does not take.
    UnexpectedKey(Key),
    /// A number outside the range of its type.
    OutOfRange {
        /// The type, and its range where it says more (`i8 in -128..=127`, `f32`).
        expected: Cow<'static, str>,
        /// The number (`300`).
        got: Cow<'static, str>,
    },
    /// A value the parameter cannot take for a reason of its own (a
    /// layout no conversion reaches, a read-only array for a destination).
    Invalid(String),
}

impl CallError {
    /// An error of `kind` at `path` of `side`.
    #[cold]
    pub fn new(side: CallSide, path: IndexPath, kind: CallErrorKind) -> Self {
        CallError { side, path, kind, note: None }
    }

    /// An error of `kind` about the arguments as a whole (the root path).
    #[cold]
    pub fn argument(kind: CallErrorKind) -> Self {
        CallError::new(CallSide::Argument, IndexPath::root(), kind)
    }

    /// An error of `kind` about the results as a whole (the root path).
    #[cold]
    pub fn result(kind: CallErrorKind) -> Self {
        CallError::new(CallSide::Result, IndexPath::root(), kind)
    }

    /// An error of `kind` at argument `index`.
    #[cold]
    pub fn at_argument(index: usize, kind: CallErrorKind) -> Self {
        CallError::new(CallSide::Argument, IndexPath(vec![PathKey::Index(index)]), kind)
    }

    /// The same error at `path`.
    #[cold]
    pub fn at(mut self, path: IndexPath) -> Self {
        self.path = path;
        self
    }

    /// The same error with what the function declares at its path.
    #[cold]
    pub fn with_note(mut self, note: impl fmt::Display) -> Self {
        self.note = Some(note.to_string().into_boxed_str());
        self
    }

    /// A value of the wrong kind.
    #[cold]
    pub fn value_kind(expected: impl Into<Cow<'static, str>>, got: impl Into<Cow<'static, str>>) -> CallErrorKind {
        CallErrorKind::ValueKind { expected: expected.into(), got: got.into() }
    }

    /// Places an error found below a call's value (by a check that knows no
    /// path: a memref descriptor, a buffer's shape) at `side`/`path`, with
    /// what the function declares there: a [`CallError`] at the root takes
    /// the place (a deeper one keeps its path under `path`); an
    /// [`ErrorKind::InvalidArgument`] or [`ErrorKind::Mismatch`] becomes a
    /// [`CallErrorKind::Invalid`]/[`CallErrorKind::ValueKind`] there; any
    /// other error is returned as it is.
    #[cold]
    pub fn locate(e: Error, side: CallSide, path: &IndexPath, note: impl fmt::Display) -> Error {
        let kind = match e.into_kind() {
            ErrorKind::Call(mut c) => {
                let mut keys = path.0.clone();
                keys.append(&mut c.path.0);
                c.side = side;
                c.path = IndexPath(keys);
                if c.note.is_none() {
                    c = c.with_note(note);
                }
                return c.into();
            }
            ErrorKind::InvalidArgument(m) => CallErrorKind::Invalid(m),
            ErrorKind::Mismatch { context, expected, got } => CallErrorKind::ValueKind {
                expected: Cow::Owned(format!("{context}: {expected}")),
                got: Cow::Owned(got),
            },
            other => return other.into(),
        };
        CallError::new(side, path.clone(), kind).with_note(note).into()
    }

    /// The call error of a value that does not fit a structure (the
    /// arguments of a structured function): the kinds that describe a value
    /// (wrong kind, missing or unexpected key, length, a gap that is not
    /// None) at the structure error's path; any other structure error as it is.
    #[cold]
    pub fn from_structure(e: StructureError, side: CallSide) -> Error {
        let kind = match e.kind() {
            StructureErrorKind::Expected { expected, got } => CallError::value_kind(*expected, *got),
            StructureErrorKind::GapNotNone { got } => CallError::value_kind("None (a gap of the structure)", *got),
            StructureErrorKind::MissingKey(k) => CallErrorKind::MissingKey(k.clone()),
            StructureErrorKind::UnexpectedKey(k) => CallErrorKind::UnexpectedKey(k.clone()),
            StructureErrorKind::Length { has, needs } => CallErrorKind::Length { expected: *needs, got: *has },
            _ => return e.into(),
        };
        CallError::new(side, e.path().clone(), kind).into()
    }

    /// What was expected and what was given, as text (for bindings that
    /// hand them on, such as the Python package's exception attributes).
    pub fn expected_got(&self) -> Option<(String, String)> {
        use CallErrorKind as K;
        Some(match &self.kind {
            K::MissingArgument { .. } => ("an argument".into(), "none".into()),
            K::TooManyPositional { max, got } => (format!("{max} positional"), got.to_string()),
            K::Arity { expected, at_least, got } => {
                (if *at_least { format!("at least {expected}") } else { expected.to_string() }, got.to_string())
            }
            K::Dtype { expected, got } => (expected.to_string(), got.to_string()),
            K::Rank { expected, got } | K::Length { expected, got } | K::Dim { expected, got, .. } => {
                (expected.to_string(), got.to_string())
            }
            K::ValueKind { expected, got } | K::OutOfRange { expected, got } => (expected.to_string(), got.to_string()),
            K::MissingKey(k) => (format!("key {k:?}"), "no such key".into()),
            K::UnexpectedKey(k) => ("no such key".into(), format!("key {k:?}")),
            K::UnknownKeyword(_) | K::DuplicateKeyword(_) | K::Invalid(_) => return None,
        })
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CallErrorKind as K;
        let (one, many) = self.side.words();
        match &self.kind {
            // Binding errors name the parameter themselves.
            K::MissingArgument { index, name: Some(n) } => {
                return write!(f, "missing argument {n:?} (argument {index})");
            }
            K::MissingArgument { index, name: None } => return write!(f, "missing positional argument {index}"),
            K::UnknownKeyword(k) => {
                write!(f, "unexpected keyword argument {k:?}")?;
                return match &self.note {
                    Some(n) => write!(f, " ({n})"),
                    None => Ok(()),
                };
            }
            K::DuplicateKeyword(k) => return write!(f, "got multiple values for argument {k:?}"),
            K::TooManyPositional { max, got } => {
                return write!(
                    f,
                    "takes {max} positional argument{} but {got} {} given",
                    if *max == 1 { "" } else { "s" },
                    if *got == 1 { "was" } else { "were" }
                );
            }
            K::Arity { expected, at_least, got } if self.path.0.is_empty() => {
                let least = if *at_least { "at least " } else { "" };
                return write!(f, "wrong number of {many}: expected {least}{expected}, got {got}");
            }
            _ => {}
        }
        match (self.path.0.is_empty(), &self.note) {
            // Found by a check that knows no place (a caller places it with `locate`).
            (true, None) if self.side == CallSide::Value => f.write_str("value: ")?,
            (true, None) => {}
            (true, Some(n)) => write!(f, "{many} ({n}): ")?,
            (false, None) => write!(f, "{one} {}: ", self.path)?,
            (false, Some(n)) => write!(f, "{one} {} ({n}): ", self.path)?,
        }
        match &self.kind {
            K::Dtype { expected, got } => write!(f, "element type: expected {expected}, got {got}"),
            K::Rank { expected, got } => write!(f, "rank: expected {expected}, got {got}"),
            K::Dim { axis, expected, got } => write!(f, "dim {axis}: expected {expected}, got {got}"),
            K::ValueKind { expected, got } => write!(f, "expected {expected}, got {got}"),
            K::Length { expected, got } => {
                write!(f, "expected {expected} item{}, got {got}", if *expected == 1 { "" } else { "s" })
            }
            K::Arity { expected, at_least, got } => {
                let least = if *at_least { "at least " } else { "" };
                write!(f, "wrong number of items: expected {least}{expected}, got {got}")
            }
            K::MissingKey(k) => write!(f, "missing key {k:?}"),
            K::UnexpectedKey(k) => write!(f, "unexpected key {k:?}"),
            K::OutOfRange { expected, got } => write!(f, "{got} is out of range for {expected}"),
            K::Invalid(m) => f.write_str(m),
            // Named above.
            K::MissingArgument { .. } | K::UnknownKeyword(_) | K::DuplicateKeyword(_) | K::TooManyPositional { .. } => {
                Ok(())
            }
        }
    }
}

impl std::error::Error for CallError {}
