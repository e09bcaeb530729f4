//! fnabi's Rust errors as Python exceptions: every `fnabi::Error` becomes
//! one class of the hierarchy rooted at `fnabi.Error` (defined in
//! `fnabi/_errors.py`), with the index path, expected and got as attributes
//! where the error carries them.

use fnabi::error::CallSide;
use fnabi::mlir::MlirError;
use fnabi::structure::{StructureError, StructureErrorKind};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// The exception classes of `fnabi._errors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `fnabi.Error`: the base class.
    Base,
    /// `fnabi.SignatureError`: a signature text that does not parse.
    Signature,
    /// `fnabi.CallError`: arguments that do not fit the function.
    Call,
    /// `fnabi.LoadError`: a module that cannot be read or loaded.
    Load,
    /// `fnabi.FunctionNotFoundError`: no function of that name.
    NotFound,
    /// `fnabi.CompileError`: the MLIR compile pipeline failed.
    Compile,
    /// `fnabi.ExecutionError`: the code or its runtime failed while running.
    Execution,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::Base => "Error",
            Kind::Signature => "SignatureError",
            Kind::Call => "CallError",
            Kind::Load => "LoadError",
            Kind::NotFound => "FunctionNotFoundError",
            Kind::Compile => "CompileError",
            Kind::Execution => "ExecutionError",
        }
    }

    fn class<'py>(self, py: Python<'py>) -> PyResult<&'py Bound<'py, PyType>> {
        static CLASSES: [PyOnceLock<Py<PyType>>; 7] = [const { PyOnceLock::new() }; 7];
        CLASSES[self as usize].import(py, "fnabi._errors", self.class_name())
    }
}

/// A Python exception of `kind` with its attributes.
#[derive(Debug, Default)]
pub struct Raised {
    /// The message (`str(e)`).
    pub message: String,
    /// The index path of the value at fault.
    pub path: Option<String>,
    /// What was expected there.
    pub expected: Option<String>,
    /// What was given.
    pub got: Option<String>,
    /// A signature error's byte offset.
    pub offset: Option<usize>,
}

/// Builds the exception `kind(message, path=…, expected=…, got=…)`.
pub fn raise(py: Python<'_>, kind: Kind, r: Raised) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = kind.class(py)?;
        let kw = PyDict::new(py);
        kw.set_item("path", r.path)?;
        kw.set_item("expected", r.expected)?;
        kw.set_item("got", r.got)?;
        if kind == Kind::Signature {
            kw.set_item("offset", r.offset)?;
        }
        let e = cls.call((r.message,), Some(&kw))?;
        Ok(PyErr::from_value(e))
    };
    build().unwrap_or_else(|e| e)
}

/// A `fnabi.Error` subclass with a plain message.
pub fn error(py: Python<'_>, kind: Kind, message: impl Into<String>) -> PyErr {
    raise(py, kind, Raised { message: message.into(), ..Raised::default() })
}

/// A `fnabi.CallError` at `path` (an index path as fnabi prints it).
pub fn call_error(
    py: Python<'_>,
    path: String,
    message: String,
    expected: Option<String>,
    got: Option<String>,
) -> PyErr {
    raise(py, Kind::Call, Raised { message, path: Some(path), expected, got, offset: None })
}

/// `fnabi.Error` for a Rust error of fnabi.
pub fn to_py(py: Python<'_>, e: fnabi::Error) -> PyErr {
    use fnabi::ErrorKind as E;
    let message = e.to_string();
    let plain = |kind: Kind| raise(py, kind, Raised { message: message.clone(), ..Raised::default() });
    if let Some(m) = e.backend_error::<MlirError>() {
        return match m {
            MlirError::Syntax { offset, .. } => {
                raise(py, Kind::Compile, Raised { message, offset: Some(*offset), ..Raised::default() })
            }
            MlirError::ToolsMissing(_) | MlirError::ToolFailed { .. } | MlirError::Timeout { .. } => {
                plain(Kind::Compile)
            }
            MlirError::RuntimeCheck { .. } | MlirError::AllocationFailed { .. } => plain(Kind::Execution),
            MlirError::NotFound(_) => plain(Kind::NotFound),
            MlirError::NeedsSignature(_) => plain(Kind::Load),
            MlirError::HostFunction { .. } => plain(Kind::Execution),
            MlirError::Io { .. } | MlirError::Load(_) => plain(Kind::Load),
            _ => plain(Kind::Base),
        };
    }
    match e.kind() {
        E::Parse(p) => raise(py, Kind::Signature, Raised { message, offset: Some(p.offset()), ..Raised::default() }),
        E::Mismatch { expected, got, .. } => raise(
            py,
            Kind::Call,
            Raised { expected: Some(expected.clone()), got: Some(got.clone()), message, ..Raised::default() },
        ),
        E::InvalidArgument(_) => plain(Kind::Call),
        E::Structure(s) => structure_error(py, s, message),
        E::Call(c) => {
            let (expected, got) = c.expected_got().unzip();
            // The path indexes the arguments; a result's is in the message only.
            let path = (c.side == CallSide::Argument).then(|| c.path.to_string());
            raise(py, Kind::Call, Raised { message, path, expected, got, offset: None })
        }
        E::Header(h) => {
            let offset = match h {
                fnabi::mlir::HeaderError::Syntax { offset, .. } => Some(*offset),
                _ => None,
            };
            raise(py, Kind::Compile, Raised { message, offset, ..Raised::default() })
        }
        E::Attributes(_) | E::Io { .. } | E::Reflection(_) | E::Vmfb(_) => plain(Kind::Load),
        E::Backend(_) => plain(Kind::Execution),
        _ => plain(Kind::Base),
    }
}

fn structure_error(py: Python<'_>, s: &StructureError, message: String) -> PyErr {
    use StructureErrorKind as K;
    let (expected, got) = match s.kind() {
        K::Expected { expected, got } => (Some(expected.to_string()), Some(got.to_string())),
        K::GapNotNone { got } => (Some("None".into()), Some(got.to_string())),
        K::Length { has, needs } => (Some(format!("{needs} items")), Some(format!("{has} items"))),
        K::LeafCount { expected, got } => (Some(expected.to_string()), Some(got.to_string())),
        K::MissingKey(k) => (Some(format!("key {k:?}")), Some("no such key".into())),
        K::UnexpectedKey(k) => (Some("no such key".into()), Some(format!("key {k:?}"))),
        _ => (None, None),
    };
    let path = s.path().to_string();
    raise(py, Kind::Call, Raised { message, path: Some(path), expected, got, offset: None })
}
