//! [`IreeError`]: a failure that the IREE runtime reported, with its status
//! code and its own message, and the operation fnabi was doing. Every
//! non-OK `iree_status_t` becomes one of these (and is freed).

use std::fmt;

/// IREE's status codes (`iree_status_code_t`, the same as absl's).
///
/// ```
/// use fnabi_iree::StatusCode;
/// // `iree_status_code_t` 3 and 9, and one past the known codes.
/// assert_eq!(StatusCode::from_raw(3), StatusCode::InvalidArgument);
/// assert_eq!(StatusCode::from_raw(9).to_string(), "FAILED_PRECONDITION");
/// assert_eq!(StatusCode::from_raw(25), StatusCode::Other(25));
/// assert_eq!(StatusCode::Other(25).to_string(), "status code 25");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StatusCode {
    /// `CANCELLED`.
    Cancelled,
    /// `UNKNOWN`.
    Unknown,
    /// `INVALID_ARGUMENT`.
    InvalidArgument,
    /// `DEADLINE_EXCEEDED`.
    DeadlineExceeded,
    /// `NOT_FOUND`.
    NotFound,
    /// `ALREADY_EXISTS`.
    AlreadyExists,
    /// `PERMISSION_DENIED`.
    PermissionDenied,
    /// `RESOURCE_EXHAUSTED`.
    ResourceExhausted,
    /// `FAILED_PRECONDITION`.
    FailedPrecondition,
    /// `ABORTED`.
    Aborted,
    /// `OUT_OF_RANGE`.
    OutOfRange,
    /// `UNIMPLEMENTED`.
    Unimplemented,
    /// `INTERNAL`.
    Internal,
    /// `UNAVAILABLE`.
    Unavailable,
    /// `DATA_LOSS`.
    DataLoss,
    /// `UNAUTHENTICATED`.
    Unauthenticated,
    /// `DEFERRED`.
    Deferred,
    /// `INCOMPATIBLE`.
    Incompatible,
    /// A code this version of fnabi does not know.
    Other(u32),
}

impl StatusCode {
    /// The code of IREE's numeric status code.
    pub fn from_raw(code: u32) -> StatusCode {
        use StatusCode::*;
        match code {
            1 => Cancelled,
            2 => Unknown,
            3 => InvalidArgument,
            4 => DeadlineExceeded,
            5 => NotFound,
            6 => AlreadyExists,
            7 => PermissionDenied,
            8 => ResourceExhausted,
            9 => FailedPrecondition,
            10 => Aborted,
            11 => OutOfRange,
            12 => Unimplemented,
            13 => Internal,
            14 => Unavailable,
            15 => DataLoss,
            16 => Unauthenticated,
            17 => Deferred,
            18 => Incompatible,
            c => Other(c),
        }
    }

    /// IREE's name of the code (`INVALID_ARGUMENT`).
    pub fn name(self) -> &'static str {
        use StatusCode::*;
        match self {
            Cancelled => "CANCELLED",
            Unknown => "UNKNOWN",
            InvalidArgument => "INVALID_ARGUMENT",
            DeadlineExceeded => "DEADLINE_EXCEEDED",
            NotFound => "NOT_FOUND",
            AlreadyExists => "ALREADY_EXISTS",
            PermissionDenied => "PERMISSION_DENIED",
            ResourceExhausted => "RESOURCE_EXHAUSTED",
            FailedPrecondition => "FAILED_PRECONDITION",
            Aborted => "ABORTED",
            OutOfRange => "OUT_OF_RANGE",
            Unimplemented => "UNIMPLEMENTED",
            Internal => "INTERNAL",
            Unavailable => "UNAVAILABLE",
            DataLoss => "DATA_LOSS",
            Unauthenticated => "UNAUTHENTICATED",
            Deferred => "DEFERRED",
            Incompatible => "INCOMPATIBLE",
            Other(_) => "UNKNOWN_CODE",
        }
    }
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatusCode::Other(c) => write!(f, "status code {c}"),
            c => f.write_str(c.name()),
        }
    }
}

/// A failure reported by the IREE runtime.
///
/// Displays as `IREE runtime (OPERATION): MESSAGE`, where the message is
/// IREE's own (`iree/runtime/src/iree/vm/invocation.c:99: INVALID_ARGUMENT;
/// input list and function mismatch; …`). Inside a [`fnabi_core::Error`] it is
/// the source of [`fnabi_core::ErrorKind::Backend`] and can be recovered with
/// `downcast_ref::<IreeError>()`.
///
/// ```
/// use fnabi_core::Array;
/// use fnabi_iree::{Device, IreeError, IreeModule, StatusCode};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/sync_async.vmfb");
/// // SAFETY: a module compiled by iree-compile that we trust to run.
/// let module = unsafe { IreeModule::load(path, Device::LocalSync)? };
/// let sqrt = module.function("checked_sqrt")?;
/// let four = sqrt.call([Array::scalar(6.25f32).into()])?;
/// assert_eq!(f32::try_from(four)?, 2.5);
/// // The module's `cf.assert` fails for a negative input.
/// let e = sqrt.call([Array::scalar(-1.0f32).into()]).unwrap_err();
/// let iree = e.backend_error::<IreeError>().expect("an IREE runtime error");
/// assert_eq!(iree.code(), StatusCode::FailedPrecondition);
/// assert!(iree.message().contains("checked_sqrt: the input must not be negative"));
/// assert!(e.to_string().starts_with("IREE runtime ("));
/// # Ok::<(), fnabi_core::Error>(())
/// ```
///
/// One word (boxed), so that `Result<(), IreeError>`, which every runtime
/// call returns, is one word too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IreeError(Box<IreeErrorInner>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct IreeErrorInner {
    code: StatusCode,
    operation: String,
    message: String,
}

impl IreeError {
    #[cold]
    pub(crate) fn new(code: StatusCode, operation: String, message: String) -> IreeError {
        IreeError(Box::new(IreeErrorInner { code, operation, message }))
    }

    /// The status code.
    pub fn code(&self) -> StatusCode {
        self.0.code
    }

    /// What fnabi asked the runtime to do (`invoking module.add`).
    pub fn operation(&self) -> &str {
        &self.0.operation
    }

    /// IREE's message, as `iree_status_to_string` formats it.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for IreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IREE runtime ({}): {}", self.0.operation, self.0.message)
    }
}

impl std::error::Error for IreeError {}

impl From<IreeError> for fnabi_core::Error {
    fn from(e: IreeError) -> fnabi_core::Error {
        fnabi_core::Error::backend(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_display() {
        for raw in 1..=18 {
            let c = StatusCode::from_raw(raw);
            assert!(!matches!(c, StatusCode::Other(_)), "{raw}");
            assert_ne!(c.name(), "UNKNOWN_CODE");
        }
        assert_eq!(StatusCode::from_raw(3).to_string(), "INVALID_ARGUMENT");
        assert_eq!(StatusCode::from_raw(25), StatusCode::Other(25));
        assert_eq!(StatusCode::from_raw(25).to_string(), "status code 25");
        let e = IreeError::new(StatusCode::NotFound, "looking up x".into(), "f.c:1: NOT_FOUND; no x".into());
        assert_eq!(e.to_string(), "IREE runtime (looking up x): f.c:1: NOT_FOUND; no x");
        let f: fnabi_core::Error = e.clone().into();
        assert_eq!(f.to_string(), e.to_string());
        assert_eq!(f.backend_error::<IreeError>(), Some(&e));
        assert_eq!(std::mem::size_of::<Result<(), IreeError>>(), std::mem::size_of::<usize>());
    }
}
