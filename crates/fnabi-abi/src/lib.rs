//! # fnabi-abi
//!
//! The pure function-ABI layer of fnabi: reading, writing and checking the
//! metadata of compiled tensor functions, with no FFI and no `unsafe` code.
//!
//! - [`mangle`]: the lexical layer of IREE's signature mangling (tagged
//!   integers, length-prefixed spans);
//! - [`scalar`]: the ABI's scalar type codes and host element types;
//! - [`raw`]: the raw function ABI (`fv`, `f`, `fbr`);
//! - [`structure`]: the tree that maps flat argument lists onto nested
//!   sequences and dicts, and its index paths;
//! - [`sip`]: the structured index path (SIP) ABI, which describes that tree;
//! - [`attrs`]: a checked view over a function's ABI attributes;
//! - [`reflection`]: `iree.abi` type records and the `iree.abi.declaration` text;
//! - [`cconv`]: IREE VM calling-convention strings (`0rr_r`);
//! - [`vmfb`]: reading IREE `.vmfb` module files (exports, signatures, reflection);
//! - [`mlir`]: MLIR `func.func` headers and their types;
//! - [`limits`]: the bounds on what an input may ask for (nesting depth, gap slots).
//!
//! Every error of this crate carries where it happened: a byte offset
//! ([`ParseError`], [`vmfb::VmfbError`], [`reflection::ReflectionError`]),
//! an index path ([`StructureError`]) or a line and column
//! ([`mlir::HeaderError`]).
//!
//! ```
//! use fnabi_abi::RawSignature;
//! let sig: RawSignature = "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64".parse().unwrap();
//! assert_eq!(sig.to_string(), "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod attrs;
pub mod cconv;
pub mod error;
pub mod limits;
pub mod mangle;
pub mod mlir;
pub mod raw;
pub mod reflection;
pub mod scalar;
pub mod sip;
pub mod structure;
pub mod vmfb;

pub use attrs::{AbiAttributes, AttributeError};
pub use error::{ParseError, ParseErrorKind};
pub use raw::{BufferType, Dim, DimOrder, RawSignature, RawType};
pub use scalar::{Complex, ComplexType, DType, Element, Float8, ScalarType};
pub use sip::SipSignature;
pub use structure::{IndexPath, Key, PathKey, Structure, StructureError};
