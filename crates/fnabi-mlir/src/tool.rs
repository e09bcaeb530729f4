//! fnabi-mlir's side of running the pipeline's tools: the shared runner
//! and compile timeout of [`fnabi_core::tool`], with failures as
//! [`MlirError`]s.

use crate::MlirError;
pub use fnabi_core::tool::{
    DEFAULT_COMPILE_TIMEOUT, ToolError, compile_timeout_from_env, parse_timeout, set_compile_timeout,
};
use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

impl From<ToolError> for MlirError {
    fn from(e: ToolError) -> MlirError {
        match e {
            ToolError::Io { context, source } => MlirError::Io { context, source },
            ToolError::Failed { tool, status, stderr } => MlirError::ToolFailed { tool, status, stderr },
            ToolError::Timeout { tool, limit } => MlirError::Timeout { tool, limit },
            other => MlirError::Unsupported(other.to_string()),
        }
    }
}

/// The deadline of a compile that starts now ([`fnabi_core::tool::deadline`]).
pub(crate) fn deadline(timeout: Option<Duration>) -> Result<Option<(Instant, Duration)>, MlirError> {
    Ok(fnabi_core::tool::deadline(timeout)?)
}

/// Runs one tool of the pipeline ([`fnabi_core::tool::run_tool`]).
pub(crate) fn run_capture(
    tool: &Path,
    args: &[&OsStr],
    dir: Option<&Path>,
    deadline: Option<(Instant, Duration)>,
) -> Result<String, MlirError> {
    Ok(fnabi_core::tool::run_tool(tool, args, dir, deadline)?)
}
