//! MLIR-compiled native code: reading function headers from `.mlir` text
//! ([`signature`]), the MLIR types that cross the boundary ([`types`]),
//! compiling `.mlir` to a shared library with Debian's tools ([`compile`]),
//! loading such a library and calling its `_mlir_ciface_` functions
//! ([`call`]), and its functions as [`Function`](crate::Function)s bound
//! through their ABI attributes ([`module`]). The other direction — MLIR
//! code calling external functions that Rust ([`host`]) or MLIR's runtime
//! utilities ([`runtime_utils`]) provide — is resolved in [`externals`].
//! Memref descriptors themselves
//! live in [`crate::memref`].
//!
//! ## How MLIR types map to the raw function ABI
//!
//! [`FunctionType::to_raw`] gives the [`RawSignature`](crate::RawSignature)
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

pub mod call;
pub mod compile;
pub mod externals;
pub mod host;
pub mod module;
mod program;
pub mod runtime_utils;
pub mod signature;
mod trampoline;
pub mod types;

pub use call::{Arg, BoundCall, MlirFunction, MlirLibrary, PreparedCall, Results, Scalar};
pub use compile::{CompileOptions, Compiler, LinkInputs, Toolchain};
pub use externals::{External, Externals, Provider};
pub use host::{HostArgs, HostError, HostFunctions, HostPanic, HostResult};
pub use module::{MlirBackend, MlirModule};
pub use runtime_utils::RuntimeUtils;
pub use signature::{
    AttrValue, FuncDecl, ScannedFunctions, Visibility, find_function, parse_functions, scan_functions,
};
pub use types::{ElementType, FunctionType, MemRefLayout, MemRefType, MlirType};

/// What can go wrong reading, compiling, loading or calling MLIR code.
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

impl MlirError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        MlirError::Io { context: context.into(), source }
    }
}
