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
//! - [`array`]: host n-d arrays and the memory behind them;
//! - [`value`]: dynamic host values (nested lists, tuples, dicts, arrays);
//! - [`structure`]: the tree that maps flat argument lists onto nested values;
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
pub mod conventions;
pub mod error;
pub mod mangle;
pub mod raw;
pub mod reflection;
pub mod scalar;
pub mod structure;
pub mod value;
pub mod vm;
pub mod vmfb;

mod flatbuf;

pub use array::{Array, HostBuffer};
pub use attrs::AbiAttributes;
pub use error::{Error, ParseError, ParseErrorKind, Result};
pub use raw::{BufferType, Dim, Layout, RawSignature, RawType};
pub use scalar::{DType, Element, ScalarType};
pub use structure::{IndexPath, PathKey, Structure};
pub use value::{Dict, Value};
