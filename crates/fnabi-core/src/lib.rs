//! # fnabi-core
//!
//! fnabi's host side: the values a caller thinks in, and everything that
//! turns them into the flat arguments of a compiled function and back,
//! independent of any backend.
//!
//! - [`value`]: dynamic host values (nested lists, tuples, dicts, arrays);
//! - [`array`](mod@array): host n-d arrays and the memory behind them;
//! - [`bind`]: binding a call's positional and keyword arguments (one binder for every backend);
//! - [`structure`]: [`Plan`], flattening values by a structure (or visiting them, containers included) and binding calls;
//! - [`buffer`]: buffer descriptions, the buffer oracle and the factory;
//! - [`layout`]: layout conversion kernels (strided → dense at memcpy speed);
//! - [`memory`]: memory scopes (per-call arena, fenced ring buffer, persistent and mapped buffers);
//! - [`deferred`]: deferred result allocation (`fbr`);
//! - [`tensor`]: host tensor ops (load, store, splat, slice, update, clone, reshape);
//! - [`npy`], [`text`], [`json`]: NumPy `.npy` files, IREE's text form, the JSON form of values;
//! - [`nest`]: flattening and rebuilding any serde type by a structure;
//! - `ndarray` (feature `ndarray`, on by default): zero-copy views to and from `ndarray`;
//! - [`vm`], [`conventions`]: the IREE VM value model, host values ⇄ VM values;
//! - [`function`]: [`Function`], one compiled function called with host
//!   values, and the [`function::Backend`] trait every backend implements;
//! - [`inputs`]: a call's arguments from their command-line forms (`--input`
//!   specs, JSON files with `"@FILE.npy"`), files read through a trait;
//! - [`error`]: [`Error`], the one boxed error of a call;
//! - [`cache`], [`progress`]: the on-disk compile cache and the progress line
//!   of a long compile, which the compiling backends share.
//!
//! The ABI metadata (signatures, structures, records) is the pure layer
//! below, `fnabi_abi`; the backends (`fnabi_mlir`, `fnabi_iree`) are above.
#![warn(missing_docs)]

pub mod array;
pub mod bind;
pub mod buffer;
pub mod cache;
pub mod coerce;
pub mod conventions;
pub mod deferred;
pub mod error;
pub mod extract;
pub mod function;
pub mod inputs;
pub mod json;
pub mod layout;
pub mod memory;
#[cfg(feature = "ndarray")]
pub mod ndarray;
pub mod nest;
pub mod npy;
pub mod progress;
#[cfg(test)]
#[path = "../tests/support/scratch.rs"]
mod scratch;
pub mod structure;
pub mod tensor;
pub mod text;
pub mod tool;
pub mod value;
pub mod vm;

pub use array::{Array, HostBuffer};
pub use error::{CallError, CallErrorKind, CallSide, Error, ErrorKind, Result};
pub use fnabi_abi::{
    AbiAttributes, BufferType, Complex, ComplexType, DType, Dim, DimOrder, Element, Float8, IndexPath, ParseError,
    ParseErrorKind, PathKey, RawSignature, RawType, ScalarType, SipSignature, Structure, StructureError,
};
pub use function::Function;
pub use structure::{Plan, StructureExt};
pub use value::{Dict, Value};
