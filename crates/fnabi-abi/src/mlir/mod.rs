//! MLIR function headers: the `func.func` (and external declaration)
//! headers of a module's text and the MLIR types in them, read without
//! MLIR's own tools.

pub mod signature;
pub mod types;

pub use signature::{AttrValue, FuncDecl, HeaderError, VectorEntry, Visibility, find_function, parse_functions};
pub use types::{ElementType, FunctionType, MemRefLayout, MemRefType, MlirType};
