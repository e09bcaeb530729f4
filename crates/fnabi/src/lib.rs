//! # fnabi
//!
//! The *function ABI* of compiled tensor functions, and calling them with
//! host values.
//!
//! Compilers such as MLIR and IREE turn a model function into native code
//! with a flat, type-erased interface: pointers, sizes, strides, integers.
//! fnabi implements the metadata and calling conventions between that
//! interface and the nested dicts, lists and n-d arrays a caller thinks in:
//!
//! - [`mangle`]: the lexical layer of IREE's signature mangling (tagged
//!   integers, length-prefixed spans);
//! - [`scalar`]: the ABI's scalar type codes and host element types;
//! - [`raw`]: the raw function ABI (`fv`, `f`, `fbr`);
//! - [`attrs`]: a checked view over a function's ABI attributes;
//! - [`array`](mod@array): host n-d arrays and the memory behind them;
//! - [`buffer`]: buffer descriptions, the buffer oracle and the factory;
//! - [`deferred`]: deferred result allocation (`fbr`);
//! - [`layout`]: layout conversion kernels (strided → dense at memcpy speed);
//! - [`memory`]: memory scopes (per-call arena, fenced ring buffer, persistent and mapped buffers);
//! - [`tensor`]: host tensor ops (load, store, splat, slice, update, clone, reshape);
//! - [`npy`]: NumPy `.npy` files;
//! - [`value`]: dynamic host values (nested lists, tuples, dicts, arrays);
//! - [`structure`]: the tree that maps flat argument lists onto nested values;
//! - [`memref`]: MLIR memref descriptors built from and adopted into arrays;
//! - [`mlir`]: MLIR function headers, the compile pipeline, calling `_mlir_ciface_` functions;
//! - [`elf`]: the dynamic symbols of a shared library;
//! - [`text`]: IREE's text form of arrays and scalars;
//! - [`sip`]: the structured index path (SIP) ABI, which describes that tree;
//! - [`json`]: the JSON form of values (files, the CLI, ordinary serde);
//! - [`function`]: [`Function`], one compiled function called with host values, and the [`function::Backend`] trait;
//! - [`nest`]: flattening and rebuilding any serde type by a structure;
//! - `ndarray` (feature `ndarray`, on by default): zero-copy views to and from `ndarray`.
//! - [`reflection`]: `iree.abi` type records and the `iree.abi.declaration` text;
//! - [`vm`]: the IREE VM value model (variants, lists, buffer views, calling conventions);
//! - [`conventions`]: host values ⇄ VM values as the `iree.abi` conventions say;
//! - [`vmfb`]: reading IREE `.vmfb` module files (exports, signatures, reflection).
//!
//! ```
//! use fnabi::RawSignature;
//! let sig: RawSignature = "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64".parse().unwrap();
//! assert_eq!(sig.to_string(), "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)");
//! ```
#![warn(missing_docs)]

pub mod array;
pub mod attrs;
pub mod buffer;
pub mod coerce;
pub mod conventions;
pub mod deferred;
pub mod elf;
pub mod error;
mod flatbuf;
pub mod function;
pub mod json;
pub mod layout;
pub mod mangle;
pub mod memory;
pub mod memref;
pub mod mlir;
#[cfg(feature = "ndarray")]
pub mod ndarray;
pub mod nest;
pub mod npy;
pub mod raw;
pub mod reflection;
pub mod scalar;
pub mod sip;
pub mod structure;
pub mod tensor;
pub mod text;
pub mod value;
pub mod vm;
pub mod vmfb;

pub use array::{Array, HostBuffer};
pub use attrs::AbiAttributes;
pub use error::{Error, ParseError, ParseErrorKind, Result};
pub use function::Function;
pub use raw::{BufferType, Dim, Layout, RawSignature, RawType};
pub use scalar::{DType, Element, ScalarType};
pub use sip::SipSignature;
pub use structure::{IndexPath, PathKey, Plan, Structure, StructureError};
pub use value::{Dict, Value};
