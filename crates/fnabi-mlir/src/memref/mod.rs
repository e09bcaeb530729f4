//! MLIR memref descriptors: the ranked `{allocated, aligned, offset,
//! sizes[N], strides[N]}` struct for a static rank ([`MemRefDescriptor`])
//! and for a rank known only at run time ([`DynMemRef`], the same words in
//! one inline buffer), the unranked `{rank, descriptor*}`
//! ([`UnrankedMemRef`]); describing an [`Array`] as a descriptor of a given
//! memref type without copying when its layout fits ([`fill_descriptor`]),
//! converting it when not ([`convert_for`]); index linearization; and taking
//! ownership of descriptors that compiled code returns ([`adopt_results`]).
//!
//! Layout rules (MLIR's lowering, verified on real code):
//! - an **identity** layout (`memref<?x?xf32>`) makes the callee assume a
//!   dense row-major array at `aligned` and *ignore* the descriptor's offset
//!   and strides: only a C-contiguous array fits as-is;
//! - a **`strided<[…], offset: …>`** layout takes the descriptor's dynamic
//!   (`?`) strides and offset; static ones are compiled in, so the array's
//!   must equal them (dims of extent 1 excepted: their stride never matters);
//! - static dims are compiled in too, so they must equal the array's.
//!
//! A descriptor built here from a validated [`Array`] addresses, as the
//! callee will read it (type plus descriptor), only bytes inside the array's
//! storage: that is what these checks guarantee before native code sees it.

use crate::{ElementType, MemRefLayout, MemRefType};
use fnabi_abi::raw::Dim;
use fnabi_abi::scalar::{DType, Element};
use fnabi_core::array::{Array, DimVec, HostBuffer, byte_extent};
use fnabi_core::error::{CallError, CallErrorKind, Error};
use smallvec::SmallVec;
use std::ffi::c_void;
use std::sync::Arc;

/// The `allocated` pointer MLIR puts in descriptors of `memref.get_global`
/// results (module globals are never to be freed).
pub const GLOBAL_SENTINEL: usize = 0xdead_beef;

pub(crate) use fnabi_abi::limits::MAX_RANK;

mod descriptor;
mod fill;
mod results;
#[cfg(test)]
mod tests;

pub use descriptor::{DynMemRef, MemRefDescriptor, UnrankedMemRef, linear_index};
pub use fill::{convert_for, copy_into, fill_descriptor};
pub use results::*;
