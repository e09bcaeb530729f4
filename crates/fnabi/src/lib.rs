//! # fnabi
//!
//! The *function ABI* of compiled tensor functions, and calling them with
//! host values.
//!
//! Compilers such as MLIR and IREE turn a model function into native code
//! with a flat, type-erased interface: pointers, sizes, strides, integers.
//! fnabi implements the metadata and calling conventions between that
//! interface and the nested dicts, lists and n-d arrays a caller thinks in.
//!
//! This crate is the facade: it re-exports the layers, each a crate that
//! depends only on the ones below it.
//!
//! | layer | crate | modules here |
//! | --- | --- | --- |
//! | the pure ABI (no FFI, `forbid(unsafe_code)`) | `fnabi-abi` | [`mangle`], [`scalar`], [`raw`], [`attrs`], [`sip`], [`reflection`], [`cconv`], [`vmfb`] (and the tree of [`structure`], the headers of [`mlir`]) |
//! | host values and the call path | `fnabi-core` | [`value`], [`array`](mod@array), [`structure`], [`buffer`], [`layout`], [`memory`], [`deferred`], [`tensor`], [`npy`], [`text`], [`json`], [`nest`], `ndarray`, [`vm`], [`conventions`], [`function`], [`inputs`], [`error`] |
//! | the MLIR backend | `fnabi-mlir` | [`mlir`], [`memref`], [`elf`] |
//! | the IREE backend | `fnabi-iree` | (a crate of its own: it builds IREE's C runtime) |
//!
//! ```
//! use fnabi::RawSignature;
//! let sig: RawSignature = "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64".parse().unwrap();
//! assert_eq!(sig.to_string(), "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use fnabi_abi::{attrs, cconv, limits, mangle, raw, reflection, scalar, sip, vmfb};
#[cfg(feature = "ndarray")]
pub use fnabi_core::ndarray;
pub use fnabi_core::{
    array, buffer, coerce, conventions, deferred, error, function, inputs, json, layout, memory, nest, npy, structure,
    tensor, text, tool, value, vm,
};
pub use fnabi_mlir::{elf, memref};

/// MLIR-compiled native code: the `fnabi-mlir` crate.
///
/// Compile and call the two-layer MLP of `examples/` (its parameters are one
/// dict, bound through the function's `sip` signature); the expected values
/// are the hand-computed `relu(x @ w1 + b1) @ w2 + b2` of its README line:
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use fnabi::{mlir::MlirModule, Array, Value};
/// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
/// // SAFETY: running the module's code is the point; it writes only memory it allocates.
/// let module = unsafe { MlirModule::load(format!("{dir}/mlp.mlir"))? };
/// let mlp = module.function("mlp")?;
/// // [x, {"w1": …, "b1": …, "w2": …, "b2": …}], the JSON form of the inputs.
/// let Value::List(inputs) = fnabi::json::from_reader(std::fs::File::open(format!("{dir}/mlp_inputs.json"))?)? else {
///     panic!("a list of positional arguments")
/// };
/// let y = mlp.call(inputs)?;
/// let y: &Array = y.as_array().unwrap();
/// assert_eq!(y.shape(), &[2, 3]);
/// let expected = [-0.35, -0.88125, 0.0, -0.428125, -1.021875, -0.203125];
/// // f32 sums in another order than the hand computation: within 2 ulp.
/// for (got, want) in y.to_vec::<f32>()?.iter().zip(expected) {
///     assert!((got - want).abs() <= 2.0 * f32::EPSILON * want.abs().max(1.0), "{got} vs {want}");
/// }
/// # Ok(()) }
/// ```
pub mod mlir {
    pub use fnabi_mlir::*;
}

pub use fnabi_abi::{
    AbiAttributes, BufferType, Complex, ComplexType, DType, Dim, DimOrder, Element, Float8, IndexPath, ParseError,
    ParseErrorKind, PathKey, RawSignature, RawType, ScalarType, SipSignature, Structure, StructureError,
};
pub use fnabi_core::{
    Array, CallError, CallErrorKind, CallSide, Dict, Error, ErrorKind, Function, HostBuffer, Plan, Result,
    StructureExt, Value,
};

/// The README, whose Rust code `cargo test --doc` compiles and runs (its
/// `console` commands are run by `crates/fnabi-cli/tests/readme.rs`).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
