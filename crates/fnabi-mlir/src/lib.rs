//! # fnabi-mlir
//!
//! fnabi's MLIR backend: MLIR-compiled native code. Function headers from
//! `.mlir` text ([`signature`]) and the MLIR types that cross the boundary
//! ([`types`]) are the ABI layer's (`fnabi_abi::mlir`, re-exported here);
//! this crate owns memref descriptors ([`memref`]), compiling `.mlir` to a shared library with Debian's tools ([`compile`]),
//! loading such a library and calling its `_mlir_ciface_` functions
//! ([`call`]), and its functions as [`Function`](fnabi_core::Function)s bound
//! through their ABI attributes ([`module`]). The other direction — MLIR
//! code calling external functions that Rust ([`host`]) or MLIR's runtime
//! utilities ([`runtime_utils`]) provide — is resolved in [`externals`].
//! The dynamic symbols of a shared library are read by [`elf`].
//!
//! ## How MLIR types map to the raw function ABI
//!
//! [`FunctionType::to_raw`] gives the [`RawSignature`](fnabi_abi::raw::RawSignature)
//! that structure (SIP) binding works over:
//!
//! | MLIR | raw | why |
//! | --- | --- | --- |
//! | `memref<4x?xf32>` (any layout) | `Buffer<float32[4x?]>` | the layout is a calling detail, handled by the descriptor |
//! | `tensor<4x?xf32>` | `Buffer<float32[4x?]>` | the pipeline bufferizes it to `memref<4x?xf32>` (identity layout at function boundaries) |
//! | `f16 bf16 f32 f64 i8…i64 si8…si64 ui8…ui64` | the scalar of that type | signless `iN` reads as signed |
//! | `index` | `sint64` | the raw ABI has no pointer-sized integer; fnabi supports 64-bit hosts only |
//! | `i1`, `memref<…xi1>` | `Unrecognized<?>` | the raw ABI has no boolean; fnabi still passes them (as `bool`) |
//! | `memref<*xT>` | `Unrecognized<?>` | the raw ABI has no rank-erased buffer; fnabi passes any rank |
//!
//! Calls always use the exact MLIR types, so nothing is lost by the mapping.

pub mod abi_embed;
mod args;
pub mod cache;
pub mod call;
pub mod compile;
pub mod elf;
pub mod externals;
pub mod host;
pub mod llvm_level;
mod loader;
pub mod memref;
pub mod module;
mod program;
pub mod runtime_utils;
pub mod symbol;
pub mod tiling;
pub mod tool;
mod trampoline;
pub mod vector_entry;

pub use fnabi_abi::mlir::{signature, types};

pub use args::{Arg, Scalar};
pub use call::{BoundCall, MlirFunction, MlirLibrary, PreparedMlirCall, Results};
pub use compile::{CompileOptions, Compiler, LinkInputs, Toolchain};
pub use externals::{External, Externals, Provider};
pub use host::{HostArgs, HostError, HostFunctions, HostPanic, HostResult};
pub use llvm_level::{InputLevel, LlvmFunctions};
pub use module::{MlirBackend, MlirModule};
pub use runtime_utils::RuntimeUtils;
pub use signature::{
    AttrValue, FuncDecl, HeaderError, ScannedFunctions, Visibility, find_function, parse_functions, scan_functions,
};
pub use types::{ElementType, FunctionType, MemRefLayout, MemRefType, MlirType};

/// What can go wrong reading, compiling, loading or calling MLIR code.
///
/// ```
/// use fnabi_mlir::{MlirError, Toolchain};
/// // no folder to look in: the tools are missing
/// let e = Toolchain::find_in(&[], &[22], "cc").unwrap_err();
/// assert!(matches!(e, MlirError::ToolsMissing(_)), "{e}");
/// let e: MlirError = fnabi_mlir::find_function("func.func @f(%x: vector<2xf32>)", "f").unwrap_err().into();
/// assert!(matches!(e, MlirError::Syntax { line: 1, .. }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MlirError {
    /// `.mlir` text (or a function type) that fnabi cannot read.
    #[error("line {line}:{column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column, in bytes.
        column: usize,
        /// Byte offset in the text.
        offset: usize,
        /// What was wrong.
        message: String,
    },
    /// A function or symbol that is not there.
    #[error("{0}")]
    NotFound(String),
    /// A function of an LLVM-level module that fnabi cannot type by itself
    /// (it takes pointers, memref descriptors whose element types the module
    /// no longer records): the message says what to give, usually its MLIR
    /// function type as a signature.
    #[error("{0}")]
    NeedsSignature(String),
    /// The MLIR/LLVM command-line tools are not installed.
    #[error("{0}")]
    ToolsMissing(String),
    /// A tool of the compile pipeline failed; its stderr is kept.
    #[error("{tool} failed ({status}) compiling MLIR:\n{stderr}")]
    ToolFailed {
        /// The command (`mlir-opt-22`, …).
        tool: String,
        /// Its exit status.
        status: String,
        /// Everything it wrote to stderr.
        stderr: String,
    },
    /// One of the module's runtime checks (`CompileOptions::runtime_verification`)
    /// failed during a call: the call stopped before the failing op ran.
    /// What it had allocated until then is not freed.
    #[error("@{function}: {}", runtime_check_summary(report))]
    RuntimeCheck {
        /// The function called.
        function: String,
        /// The module's report (MLIR's `ERROR: Runtime op verification
        /// failed`, the op, `^ reason`, `Location: loc(...)`).
        report: String,
    },
    /// The module's code asked for more memory than one array may take
    /// (`limit`: fnabi's per-array byte limit when the module was loaded,
    /// [`ByteLimit::Array`](fnabi_abi::limits::ByteLimit::Array)), or than
    /// the allocator could give (`limit` is `None`): the call stopped at
    /// that allocation (MLIR's code would have written through the null
    /// pointer). What it had allocated until then is not freed. Only calls
    /// of modules compiled with runtime checks stop this way; without them
    /// the process aborts, saying what was asked.
    #[error("@{function}: memory exhausted: {}", allocation_failure(*requested, *limit))]
    AllocationFailed {
        /// The function called.
        function: String,
        /// The bytes the allocation asked for.
        requested: u64,
        /// The limit it was over, if it was.
        limit: Option<u64>,
    },
    /// A compile tool ran past the compile timeout and was killed.
    #[error("{}", fnabi_core::tool::timeout_message(tool, *limit))]
    Timeout {
        /// The command (`mlir-opt-22`, …).
        tool: String,
        /// The timeout.
        limit: std::time::Duration,
    },
    /// A file-system operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A shared library could not be loaded, or a symbol not found in it.
    #[error("{0}")]
    Load(String),
    /// Calling compiled code is not supported on this platform.
    #[error("{0}")]
    Unsupported(String),
    /// A host function that the module called failed or panicked (see
    /// [`host`]); the module call returned normally and its results were
    /// dropped.
    #[error("host function @{name}: {source}")]
    HostFunction {
        /// The external function's name.
        name: String,
        /// What it returned, or a [`HostPanic`].
        source: HostError,
    },
}

impl From<fnabi_abi::mlir::HeaderError> for MlirError {
    fn from(e: fnabi_abi::mlir::HeaderError) -> Self {
        match e {
            fnabi_abi::mlir::HeaderError::Syntax { line, column, offset, message } => {
                MlirError::Syntax { line, column, offset, message }
            }
            fnabi_abi::mlir::HeaderError::NotFound(msg) => MlirError::NotFound(msg),
            other => MlirError::NotFound(other.to_string()),
        }
    }
}

/// An MLIR error is a backend error of a call (recover it with
/// [`Error::backend_error`](fnabi_core::Error::backend_error)).
impl From<MlirError> for fnabi_core::Error {
    #[cold]
    fn from(e: MlirError) -> Self {
        fnabi_core::Error::backend(e)
    }
}

/// One line for a runtime check's report, then the report:
/// `runtime op verification failed at verify.mlir:5:8: out-of-bounds access`.
fn runtime_check_summary(report: &str) -> String {
    let reason = report.lines().find_map(|l| l.strip_prefix("^ ")).unwrap_or("a runtime check failed");
    let at = report
        .lines()
        .find_map(|l| l.strip_prefix("Location: loc(")?.strip_suffix(')'))
        .map(|l| format!(" at {}", l.replacen('"', "", 2)))
        .unwrap_or_default();
    let head = report.lines().next().unwrap_or_default().trim_start_matches("ERROR: ");
    let head = if head.is_empty() { "runtime check failed".to_owned() } else { head.to_lowercase() };
    format!("{head}{at}: {reason}\n{}", report.trim_end())
}

/// What a failed allocation of a module's code asked for, and why it failed.
fn allocation_failure(requested: u64, limit: Option<u64>) -> String {
    match limit {
        Some(limit) => {
            let e = fnabi_abi::limits::LimitError {
                what: "an allocation of the compiled code".into(),
                requested: requested.into(),
                limit,
                kind: fnabi_abi::limits::ByteLimit::Array,
            };
            format!("{e}; a module keeps the limit in force when it was loaded")
        }
        None => format!("the compiled code asked for {requested} bytes, which the allocator could not give"),
    }
}

impl MlirError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        MlirError::Io { context: context.into(), source }
    }
}
