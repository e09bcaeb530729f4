//! Rust functions and closures as the external functions of MLIR modules
//! ([`HostFunctions`]), what they receive ([`HostArgs`]: bounds-checked
//! [`Array`] views over the caller's memory, scalars by value) and how
//! their results go back; loading a library and binding its host slots;
//! and reporting a host function's failure from the module call that ran it.
//!
//! ```
//! use fnabi_mlir::{Arg, HostFunctions, MlirLibrary};
//! use fnabi_core::{Array, Value};
//! let src = r#"
//!   func.func private @clip(memref<?xf32>, f32) -> (memref<?xf32>, index)
//!   func.func @run(%x: memref<?xf32>) -> (memref<?xf32>, index) {
//!     %limit = arith.constant 2.0 : f32
//!     %y, %n = func.call @clip(%x, %limit) : (memref<?xf32>, f32) -> (memref<?xf32>, index)
//!     return %y, %n : memref<?xf32>, index
//!   }"#;
//! let mut host = HostFunctions::new();
//! host.register("clip", |args| {
//!     let limit = args.float(1)? as f32;
//!     let x = args.array(0)?.to_vec::<f32>()?;
//!     let clipped = x.iter().filter(|&&v| v > limit).count() as i64;
//!     let y: Vec<f32> = x.iter().map(|v| v.min(limit)).collect();
//!     Ok(vec![Value::from(Array::from_vec(&[y.len()], y)?), Value::Int(clipped)])
//! });
//! // SAFETY: the module writes only memory it allocates.
//! let lib = unsafe { MlirLibrary::compile_with_host(src, &host)? };
//! assert_eq!(lib.externals().to_string(), "provided: @clip (host function)");
//! let x = Array::from_vec(&[4], vec![1.0f32, 3.0, -1.0, 5.0])?;
//! let out = lib.function("run")?.call(&mut [Arg::Array(&x)])?;
//! let Value::Array(y) = &out[0] else { unreachable!() };
//! assert_eq!(y.to_vec::<f32>()?, [1.0, 2.0, -1.0, 2.0]);
//! assert_eq!(out[1], Value::Int(2));
//! # Ok::<(), fnabi_core::Error>(())
//! ```
//!
//! How the module reaches a host function is described in
//! [`crate::externals`]: a generated trampoline per declaration calls one
//! Rust entry through a slot of the module's own table, which fnabi fills
//! when it loads the library.
//!
//! ## Arguments and results
//!
//! A memref argument arrives as a descriptor pointer; [`HostArgs::array`]
//! checks the descriptor against the declared type (static dims, and for an
//! identity layout the row-major strides and zero offset that MLIR code
//! assumes; for `strided<…>` the static strides and offset) and returns a
//! read-only view of exactly the bytes it addresses — no copy.
//! [`HostArgs::array_mut`] and [`HostArgs::write`] write into an argument
//! (MLIR's destination-passing style); they borrow the arguments mutably,
//! so no other view exists at the same time.
//!
//! The closure returns one [`Value`] per declared result: an array for a
//! memref (its elements are copied into memory from libc `malloc`, laid out
//! as the result type says, with `allocated == aligned`, so MLIR code may
//! `memref.dealloc` it or return it to its caller, who frees it), a
//! `Bool`/`Int`/`Float` or rank-0 array for a scalar (range-checked against
//! the declared type, as arguments of [`MlirFunction::call`] are).
//!
//! ## Failures
//!
//! A host function that returns an error or panics never unwinds into MLIR
//! frames: the entry catches the panic, hands MLIR **zero-filled results**
//! (scalars 0; memrefs from `calloc` with their static dims and every
//! dynamic dim 0; an unranked memref of rank 8 with all sizes 0) and
//! records the error for the module call running on this thread, which
//! returns it as [`MlirError::HostFunction`] (naming the function) once the
//! MLIR code has returned; results that the call produced meanwhile are
//! freed. The MLIR code itself keeps running after the failed call: code
//! that trusts a result's contents beyond its sizes (an index taken from a
//! scalar result, a length it assumes) can still misbehave before the
//! error is reported. Only the first failure of a module call is reported.
//! The panic message is printed by Rust's panic hook as usual.
//!
//! Failures are kept per thread, so concurrent calls from several threads
//! never see each other's errors. fnabi's pipeline lowers no parallel
//! dialect, so host functions run on the thread that called the module; one
//! that runs outside any fnabi call (a module called through its raw
//! symbol) prints its error on stderr instead.
//!
//! [`MlirFunction::call`]: crate::MlirFunction::call

use crate::MlirError;
use crate::args::{Arg, Scalar, scalar_bits};
use crate::memref::{DynMemRef, MAX_RANK, convert_for, copy_into, fill_descriptor};
use fnabi_abi::mlir::types::{ElementType, FunctionType, MemRefLayout, MemRefType, MlirType};
use fnabi_abi::raw::Dim;
use fnabi_core::array::{Array, DimVec, byte_extent, c_strides};
use fnabi_core::error::{CallError, CallErrorKind, CallSide, Error};
use fnabi_core::structure::{IndexPath, PathKey};
use fnabi_core::value::Value;
use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

mod args;
mod entry;
mod results;
#[cfg(test)]
mod tests;

pub use args::HostArgs;
pub(crate) use entry::{Binding, CallScope, host_entry};
pub(crate) use results::Slot;

/// What a host function's failure is: any error (`?` works on fnabi's
/// [`Error`] and on most others, `Err("message".into())` too).
pub type HostError = Box<dyn std::error::Error + Send + Sync>;

/// What a host function returns: one value per declared result.
pub type HostResult = Result<Vec<Value<'static>>, HostError>;

type HostFn = dyn Fn(&mut HostArgs<'_>) -> HostResult + Send + Sync;

pub(crate) struct HostFunction {
    pub(crate) ty: Option<FunctionType>,
    f: Box<HostFn>,
}

/// Rust functions and closures registered under the names of external MLIR
/// functions. Cheap to clone; `Send + Sync` (a host function may run on
/// several threads at once).
///
/// ```
/// use fnabi_mlir::HostFunctions;
/// use fnabi_core::{Array, Value};
/// let mut host = HostFunctions::new();
/// // func.func private @scale(memref<?xf32>, f32) -> memref<?xf32>
/// host.register("scale", |args| {
///     let s = args.float(1)? as f32;
///     let x = args.array(0)?.to_vec::<f32>()?;
///     let y: Vec<f32> = x.iter().map(|v| v * s).collect();
///     Ok(vec![Value::from(Array::from_vec(&[y.len()], y)?)])
/// });
/// assert!(host.contains("scale"));
/// ```
#[derive(Clone, Default)]
pub struct HostFunctions {
    fns: Vec<(String, Arc<HostFunction>)>,
}

impl fmt::Debug for HostFunctions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.fns.iter().map(|(n, _)| n)).finish()
    }
}

impl HostFunctions {
    /// No host functions.
    pub fn new() -> HostFunctions {
        HostFunctions::default()
    }

    /// Registers `f` as the external function `@name` (without `@`), typed
    /// by the module's declaration. A later registration of the same name
    /// replaces it.
    pub fn register<F>(&mut self, name: impl Into<String>, f: F) -> &mut Self
    where
        F: Fn(&mut HostArgs<'_>) -> HostResult + Send + Sync + 'static,
    {
        self.insert(name.into(), None, Box::new(f))
    }

    /// Registers `f` with an explicit type, which a module's declaration
    /// of `@name` must equal (and which types it in a library loaded without
    /// its source).
    pub fn register_typed<F>(&mut self, name: impl Into<String>, ty: FunctionType, f: F) -> &mut Self
    where
        F: Fn(&mut HostArgs<'_>) -> HostResult + Send + Sync + 'static,
    {
        self.insert(name.into(), Some(ty), Box::new(f))
    }

    fn insert(&mut self, name: String, ty: Option<FunctionType>, f: Box<HostFn>) -> &mut Self {
        let hf = Arc::new(HostFunction { ty, f });
        match self.fns.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = hf,
            None => self.fns.push((name, hf)),
        }
        self
    }

    /// True when a function is registered under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The registered names, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fns.iter().map(|(n, _)| n.as_str())
    }

    /// True when none is registered.
    pub fn is_empty(&self) -> bool {
        self.fns.is_empty()
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<HostFunction>> {
        self.fns.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }

    /// `Some(given type)` when `name` is registered.
    pub(crate) fn declared_type(&self, name: &str) -> Option<Option<&FunctionType>> {
        self.get(name).map(|f| f.ty.as_ref())
    }
}

/// A marker error: the host function panicked (the payload's message).
///
/// ```
/// use fnabi_mlir::{Arg, HostFunctions, HostPanic, MlirError, MlirLibrary};
/// let src = r#"
///   func.func private @check(i64) -> i64
///   func.func @run(%x: i64) -> i64 {
///     %y = func.call @check(%x) : (i64) -> i64
///     return %y : i64
///   }"#;
/// let mut host = HostFunctions::new();
/// host.register("check", |args| {
///     let x = args.int(0)?;
///     assert!(x >= 0, "negative input {x}");
///     Ok(vec![fnabi_core::Value::Int(x)])
/// });
/// // SAFETY: the module only calls the host function.
/// let lib = unsafe { MlirLibrary::compile_with_host(src, &host)? };
/// let run = lib.function("run")?;
/// assert_eq!(run.call(&mut [Arg::Int(4)])?[0], fnabi_core::Value::Int(4));
/// let e = run.call(&mut [Arg::Int(-1)]).unwrap_err(); // (the panic hook prints the message)
/// let Some(MlirError::HostFunction { name, source }) = e.backend_error::<MlirError>() else { panic!("{e}") };
/// assert_eq!(name, "check");
/// let panic = source.downcast_ref::<HostPanic>().unwrap();
/// assert_eq!(panic.0, "negative input -1");
/// # Ok::<(), fnabi_core::Error>(())
/// ```
#[derive(Debug)]
pub struct HostPanic(pub String);

impl fmt::Display for HostPanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "panicked: {}", self.0)
    }
}

impl std::error::Error for HostPanic {}
