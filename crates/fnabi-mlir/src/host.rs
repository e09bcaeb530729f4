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

/// The arguments of one call of a host function.
///
/// Views borrow the arguments (they cannot outlive the call); a mutable
/// view borrows them exclusively, so at most one exists at a time and no
/// read-only view coexists with it.
pub struct HostArgs<'a> {
    slot: &'a Slot,
    words: &'a [u64],
}

/// The parts of a validated argument view.
struct View {
    dtype: fnabi_abi::scalar::DType,
    shape: DimVec<usize>,
    strides: DimVec<isize>,
    /// Address of the lowest byte addressed, and the number of bytes.
    start: usize,
    len: usize,
    /// Byte offset of element `[0, …]` from `start`.
    offset: usize,
}

/// A non-null, 8-aligned address for the storage of empty views.
const EMPTY: usize = 8;

impl<'a> HostArgs<'a> {
    /// The external function's name (without `@`).
    pub fn name(&self) -> &str {
        &self.slot.name
    }

    /// Its declared type.
    pub fn ty(&self) -> &FunctionType {
        &self.slot.ty
    }

    /// The number of arguments.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    fn error(&self, i: usize, msg: impl fmt::Display) -> Error {
        match self.slot.ty.inputs.get(i) {
            Some(t) => Error::invalid_argument(format!("argument {i} ({t}) of @{}: {msg}", self.slot.name)),
            None => Error::invalid_argument(format!("@{} has no argument {i}: {msg}", self.slot.name)),
        }
    }

    fn input(&self, i: usize) -> Result<(&MlirType, u64), Error> {
        match (self.slot.ty.inputs.get(i), self.words.get(i)) {
            (Some(t), Some(&w)) => Ok((t, w)),
            _ => Err(self.error(i, format!("it has {} arguments", self.words.len()))),
        }
    }

    /// Argument `i`, a scalar, with its exact type.
    pub fn scalar(&self, i: usize) -> Result<Scalar, Error> {
        match self.input(i)? {
            (MlirType::Scalar(e), bits) => Ok(Scalar::from_bits(*e, bits)),
            _ => Err(self.error(i, "it is a memref, not a scalar")),
        }
    }

    /// Argument `i`, an integer (`i1` is 0 or 1, `index` and unsigned types
    /// included; a `ui64` above `i64::MAX` is an error).
    pub fn int(&self, i: usize) -> Result<i64, Error> {
        Ok(match self.scalar(i)? {
            Scalar::Bool(b) => i64::from(b),
            Scalar::I8(v) => v.into(),
            Scalar::I16(v) => v.into(),
            Scalar::I32(v) => v.into(),
            Scalar::I64(v) | Scalar::Index(v) => v,
            Scalar::U8(v) => v.into(),
            Scalar::U16(v) => v.into(),
            Scalar::U32(v) => v.into(),
            Scalar::U64(v) => {
                i64::try_from(v).map_err(|_| self.error(i, format!("{v} does not fit 64 signed bits")))?
            }
            _ => return Err(self.error(i, "it is a float, not an integer")),
        })
    }

    /// Argument `i`, a float (`f16`, `bf16`, `f32` widened exactly).
    pub fn float(&self, i: usize) -> Result<f64, Error> {
        Ok(match self.scalar(i)? {
            Scalar::F16(v) => v.to_f64(),
            Scalar::BF16(v) => v.to_f64(),
            Scalar::F32(v) => v.into(),
            Scalar::F64(v) => v,
            _ => return Err(self.error(i, "it is an integer, not a float")),
        })
    }

    /// Argument `i` as a host value: an array view for a memref, else the
    /// scalar's `Bool`/`Int`/`Float`.
    pub fn value(&self, i: usize) -> Result<Value<'_>, Error> {
        match self.input(i)? {
            (MlirType::Scalar(_), _) => self.scalar(i)?.to_value(),
            _ => Ok(Value::from(self.array(i)?)),
        }
    }

    /// Argument `i`, a memref, as a read-only view of the caller's memory.
    pub fn array(&self, i: usize) -> Result<Array<'_>, Error> {
        let v = self.view(i)?;
        // SAFETY: `view` checked the descriptor against the type and computed
        // the exact byte range the argument addresses; the MLIR caller keeps
        // that memory valid for the duration of this call, which the
        // returned view (borrowing `self`) cannot outlive, and no mutable
        // view exists meanwhile (those borrow `self` mutably).
        let bytes = unsafe { std::slice::from_raw_parts(v.start as *const u8, v.len) };
        Array::from_bytes(v.dtype, &v.shape, Some(&v.strides), bytes, v.offset).map_err(|e| self.error(i, e))
    }

    /// Argument `i`, a memref, as a writable view of the caller's memory
    /// (see [`fnabi_core::tensor::store`], [`fnabi_core::tensor::update`], or
    /// `as_ndarray_mut` for writing through it).
    pub fn array_mut(&mut self, i: usize) -> Result<Array<'_>, Error> {
        let v = self.view(i)?;
        // SAFETY: as for `array`; the view borrows `self` mutably, so it is
        // the only Rust reference to this memory while it lives.
        let bytes = unsafe { std::slice::from_raw_parts_mut(v.start as *mut u8, v.len) };
        Array::from_mut_bytes(v.dtype, &v.shape, Some(&v.strides), bytes, v.offset).map_err(|e| self.error(i, e))
    }

    /// Copies `src` into argument `i` (same element type and shape).
    pub fn write(&mut self, i: usize, src: &Array<'_>) -> Result<(), Error> {
        let mut dst = self.array_mut(i)?;
        copy_into(src, &mut dst)
    }

    /// The checked parts of memref argument `i`.
    fn view(&self, i: usize) -> Result<View, Error> {
        let (t, w) = self.input(i)?;
        let p = w as usize;
        if p == 0 {
            return Err(self.error(i, "the descriptor pointer is null"));
        }
        match t {
            MlirType::Scalar(_) => Err(self.error(i, "it is a scalar, not a memref")),
            MlirType::MemRef(m) => {
                // SAFETY: MLIR passes a pointer to a rank-m descriptor of
                // 3 + 2·rank 8-aligned words (the declared type, which the
                // module was compiled with).
                let d = unsafe { DynMemRef::read(p as *const c_void, m.rank()) };
                view_of(&d, m.element, Some(m)).map_err(|e| self.error(i, e))
            }
            MlirType::UnrankedMemRef(e) => {
                // SAFETY: MLIR passes a pointer to `{i64 rank, ptr}`.
                let (rank, dp) = unsafe { ((p as *const i64).read(), (p as *const usize).add(1).read()) };
                if !(0..=MAX_RANK as i64).contains(&rank) || dp == 0 {
                    return Err(self.error(i, format!("invalid unranked memref (rank {rank}, descriptor {dp:#x})")));
                }
                // SAFETY: the ranked descriptor of an unranked memref has `rank`.
                let d = unsafe { DynMemRef::read(dp as *const c_void, rank as usize) };
                view_of(&d, *e, None).map_err(|e| self.error(i, e))
            }
        }
    }
}

/// Checks a descriptor against its type (`m`; `None`: any layout, from an
/// unranked memref) and computes the view it describes, as MLIR code
/// reading it through that type would.
fn view_of(d: &DynMemRef, elem: ElementType, m: Option<&MemRefType>) -> Result<View, String> {
    let dtype = elem.dtype();
    let es = dtype.size();
    let mut shape = DimVec::new();
    for &n in d.sizes() {
        shape.push(usize::try_from(n).map_err(|_| format!("negative size {n} in its descriptor"))?);
    }
    let empty = shape.contains(&0);
    let mut strides: DimVec<isize> = d.strides().iter().map(|&s| s as isize).collect();
    let mut offset = d.offset();
    if let Some(m) = m {
        for (k, (dim, &n)) in m.dims.iter().zip(&shape).enumerate() {
            if let Dim::Static(s) = dim
                && *s as usize != n
            {
                return Err(format!("its descriptor has size {n} in static dim {k}"));
            }
        }
        let (fixed, fixed_offset): (DimVec<Option<i64>>, Option<i64>) = match &m.layout {
            MemRefLayout::Identity => (c_strides(&shape).iter().map(|&s| Some(s as i64)).collect(), Some(0)),
            MemRefLayout::Strided { strides, offset } => (strides.iter().copied().collect(), *offset),
        };
        if !empty {
            for (k, (f, &n)) in fixed.iter().zip(&shape).enumerate() {
                if let Some(f) = f
                    && n > 1
                    && d.strides()[k] != *f
                {
                    return Err(format!("its descriptor has stride {} in dim {k}, its type {f}", d.strides()[k]));
                }
            }
            if let Some(o) = fixed_offset
                && o != offset
            {
                return Err(format!("its descriptor has offset {offset}, its type {o}"));
            }
        }
        // Where the type fixes a value, use it (extent-1 dims, empty arrays).
        for (s, f) in strides.iter_mut().zip(&fixed) {
            if let Some(f) = f {
                *s = *f as isize;
            }
        }
        offset = fixed_offset.unwrap_or(offset);
    }
    let extent = byte_extent(&shape, &strides, es).map_err(|e| e.to_string())?;
    let Some((lo, hi)) = extent else {
        return Ok(View { dtype, shape, strides, start: EMPTY, len: 0, offset: 0 });
    };
    if d.aligned() == 0 {
        return Err("its descriptor's aligned pointer is null".into());
    }
    let data = offset
        .checked_mul(es as i64)
        .and_then(|b| isize::try_from(b).ok())
        .and_then(|b| (d.aligned() as isize).checked_add(b))
        .ok_or("its offset overflows")?;
    let start = data.checked_add(lo).filter(|&s| s > 0).ok_or("its extent wraps around the address space")?;
    data.checked_add(hi).ok_or("its extent wraps around the address space")?;
    Ok(View { dtype, shape, strides, start: start as usize, len: (hi - lo) as usize, offset: (-lo) as usize })
}

/// A marker error: the host function panicked (the payload's message).
#[derive(Debug)]
pub struct HostPanic(pub String);

impl fmt::Display for HostPanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "panicked: {}", self.0)
    }
}

impl std::error::Error for HostPanic {}

/// One bound external function of one loaded library: what its slot's
/// context points to.
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(crate) ty: FunctionType,
    pub(crate) f: Arc<HostFunction>,
    /// Byte offsets of the packed result fields.
    pub(crate) offsets: Vec<usize>,
    /// True when every result is a scalar (no allocation to stage).
    pub(crate) scalar_results: bool,
}

/// A block from libc `malloc`/`calloc`, freed on drop unless released.
struct Block(*mut c_void);

impl Block {
    fn malloc(bytes: usize) -> Result<Block, Error> {
        // SAFETY: plain allocation; a null result is handled.
        let p = unsafe { libc::malloc(bytes.max(1)) };
        if p.is_null() {
            return Err(Error::exhausted(format!("malloc of {bytes} bytes for a host function result failed")));
        }
        Ok(Block(p))
    }

    /// Zeroed memory; running out of it here (a failed host call's default
    /// results) is fatal, as any allocation failure in Rust is.
    fn calloc(bytes: usize) -> Block {
        // SAFETY: plain allocation; a null result is handled.
        let p = unsafe { libc::calloc(bytes.max(1), 1) };
        if p.is_null() {
            eprintln!("fnabi: cannot allocate {bytes} bytes for the default results of a failed host function");
            std::process::abort();
        }
        Block(p)
    }

    fn release(self) -> usize {
        let p = self.0 as usize;
        std::mem::forget(self);
        p
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: the block came from libc malloc/calloc and was not released.
        unsafe { libc::free(self.0) }
    }
}

/// A result ready to be written into MLIR's result slot.
enum Staged {
    Bits(ElementType, u64),
    Ranked(DynMemRef, Block),
    Unranked { desc: Block, data: Block, rank: usize },
}

/// Rank of the zero descriptor handed back for an unranked result of a
/// failed host function: code casting it to any rank up to this reads
/// sizes of 0 (see the module docs).
const DEFAULT_UNRANKED_RANK: usize = 8;

impl Slot {
    fn invoke(&self, words: &[u64], result: *mut c_void) -> Result<(), HostError> {
        let mut args = HostArgs { slot: self, words };
        let values = (self.f.f)(&mut args)?;
        if self.scalar_results && values.len() == self.ty.results.len() {
            // Nothing to allocate: convert and write each result directly
            // (after a failure, the defaults overwrite what was written).
            let packed = self.ty.results_packed();
            for (k, (t, v)) in self.ty.results.iter().zip(&values).enumerate() {
                let MlirType::Scalar(e) = t else { continue };
                let bits = self.scalar_result(k, t, *e, v)?;
                let at = if packed { self.offsets[k] } else { 0 };
                // SAFETY: as in `commit`: the field lies in the result struct,
                // or is the trampoline's one result word.
                unsafe { write_bits(result.cast::<u8>().add(at), *e, bits, packed) };
            }
            return Ok(());
        }
        let staged = self.stage(values)?;
        // SAFETY: `result` is where this declaration's results go (MLIR's
        // packed struct, or the trampoline's word for one scalar).
        unsafe { self.commit(staged, result) };
        Ok(())
    }

    /// The bits of scalar result `k` of type `e`.
    fn scalar_result(&self, k: usize, t: &MlirType, e: ElementType, v: &Value<'_>) -> Result<u64, HostError> {
        let arg = match v {
            Value::Int(i) => Arg::Int(*i),
            Value::Float(f) => Arg::Float(*f),
            Value::Bool(b) => Arg::Bool(*b),
            Value::Array(a) => Arg::Array(a),
            _ => {
                return Err(
                    self.result_error(k, CallError::argument(CallError::value_kind("a scalar", v.kind())).into())
                );
            }
        };
        let label = crate::args::ArgLabel { index: k, side: CallSide::Result, path: None };
        scalar_bits(label, t, e, &arg).map_err(|err| Box::new(err) as HostError)
    }

    /// The error placed at result `k`: `result [k] (type): …`.
    #[cold]
    fn result_error(&self, k: usize, e: Error) -> HostError {
        let t = &self.ty.results[k];
        Box::new(CallError::locate(e, CallSide::Result, &IndexPath(vec![PathKey::Index(k)]), t))
    }

    fn stage(&self, values: Vec<Value<'static>>) -> Result<Vec<Staged>, HostError> {
        if values.len() != self.ty.results.len() {
            let kind = CallErrorKind::Arity { expected: self.ty.results.len(), at_least: false, got: values.len() };
            return Err(Box::new(Error::from(CallError::result(kind))));
        }
        let mut out = Vec::with_capacity(values.len());
        for (k, (t, v)) in self.ty.results.iter().zip(&values).enumerate() {
            let not = |what: &'static str| Error::from(CallError::argument(CallError::value_kind(what, v.kind())));
            out.push(match t {
                MlirType::Scalar(e) => Staged::Bits(*e, self.scalar_result(k, t, *e, v)?),
                MlirType::MemRef(m) => {
                    let a = as_array(v).ok_or_else(|| self.result_error(k, not("an array")))?;
                    stage_ranked(a, m).map_err(|e| self.result_error(k, e))?
                }
                MlirType::UnrankedMemRef(e) => {
                    let a = as_array(v).ok_or_else(|| self.result_error(k, not("an array")))?;
                    stage_unranked(a, *e).map_err(|e| self.result_error(k, e))?
                }
            });
        }
        Ok(out)
    }

    /// Zero-filled results (see the module docs).
    fn defaults(&self) -> Vec<Staged> {
        self.ty
            .results
            .iter()
            .map(|t| match t {
                MlirType::Scalar(e) => Staged::Bits(*e, 0),
                MlirType::MemRef(m) => default_ranked(m),
                MlirType::UnrankedMemRef(_) => {
                    let rank = DEFAULT_UNRANKED_RANK;
                    let data = Block::calloc(16);
                    let desc = Block::calloc(8 * (3 + 2 * rank));
                    let w = desc.0.cast::<usize>();
                    // SAFETY: the descriptor block holds 3 + 2·rank words.
                    unsafe { (w.write(data.0 as usize), w.add(1).write(data.0 as usize)) };
                    Staged::Unranked { desc, data, rank }
                }
            })
            .collect()
    }

    /// Writes staged results; their memory now belongs to the MLIR caller.
    ///
    /// # Safety
    /// `result` must point to this declaration's result struct (packed
    /// results) or to one 8-byte word (a single scalar result); it is
    /// unused without results.
    unsafe fn commit(&self, staged: Vec<Staged>, result: *mut c_void) {
        let packed = self.ty.results_packed();
        for (k, s) in staged.into_iter().enumerate() {
            let at = if packed { self.offsets[k] } else { 0 };
            // SAFETY: (every arm) `at` + the field size lies in the result
            // struct (the offsets are its C layout), or is the one word.
            let field = unsafe { result.cast::<u8>().add(at) };
            match s {
                // SAFETY: see above.
                Staged::Bits(e, bits) => unsafe { write_bits(field, e, bits, packed) },
                Staged::Ranked(mut d, block) => {
                    let p = block.release();
                    let w = d.words_mut();
                    // The words hold pointers relative to the block's start.
                    w[0] = w[0].wrapping_add(p as i64);
                    w[1] = w[1].wrapping_add(p as i64);
                    // SAFETY: see above; 8·(3 + 2·rank) bytes.
                    unsafe { std::ptr::copy_nonoverlapping(w.as_ptr().cast::<u8>(), field, w.len() * 8) };
                }
                Staged::Unranked { desc, data, rank } => {
                    data.release();
                    let dp = desc.release();
                    // SAFETY: see above; `{i64 rank, ptr}`.
                    unsafe {
                        field.cast::<i64>().write_unaligned(rank as i64);
                        field.add(8).cast::<usize>().write_unaligned(dp);
                    }
                }
            }
        }
    }
}

/// Writes a scalar result: `e.size()` bytes into a packed struct's field,
/// or the whole word the trampoline returns.
///
/// # Safety
/// `field` must be valid for writing that many bytes.
unsafe fn write_bits(field: *mut u8, e: ElementType, bits: u64, packed: bool) {
    let n = if packed { e.size() } else { 8 };
    // SAFETY: as the caller guarantees.
    unsafe { std::ptr::copy_nonoverlapping(bits.to_le_bytes().as_ptr(), field, n) };
}

fn as_array<'v>(v: &'v Value<'static>) -> Option<&'v Array<'static>> {
    match v {
        Value::Array(a) => Some(a),
        _ => None,
    }
}

/// A host array copied into `malloc`ed memory laid out for ranked type `m`.
/// The descriptor's pointers are relative to the block (rebased on commit).
fn stage_ranked(a: &Array<'_>, m: &MemRefType) -> Result<Staged, Error> {
    let mut w = DynMemRef::new(m.rank());
    // Checks element type, rank and static dims (the descriptor is discarded).
    fill_descriptor(a, m, w.words_mut())?;
    if m.layout == MemRefLayout::Identity {
        let block = Block::malloc(a.nbytes())?;
        let strides = c_strides(a.shape());
        // SAFETY: `a` is a validated view; the block holds nbytes, exactly
        // the dense row-major copy, and is fresh (no overlap).
        unsafe { copy_dense(a, block.0.cast()) };
        let words = w.words_mut();
        words[..3].copy_from_slice(&[0, 0, 0]);
        let r = m.rank();
        for (k, (&n, &s)) in a.shape().iter().zip(&strides).enumerate() {
            words[3 + k] = n as i64;
            words[3 + r + k] = s as i64;
        }
        return Ok(Staged::Ranked(w, block));
    }
    let c = convert_for(a, m)?;
    if !fill_descriptor(&c, m, w.words_mut())? {
        return Err(Error::invalid_argument("the converted array does not fit its type"));
    }
    let block = Block::malloc(c.storage_len())?;
    // SAFETY: the block holds the converted array's whole storage.
    unsafe { std::ptr::copy_nonoverlapping(c.storage_ptr(), block.0.cast::<u8>(), c.storage_len()) };
    let base = c.storage_ptr() as i64;
    let words = w.words_mut();
    words[0] = words[0].wrapping_sub(base);
    words[1] = words[1].wrapping_sub(base);
    Ok(Staged::Ranked(w, block))
}

/// Copies `a` into `dst` as a dense row-major array (one `memcpy` when it
/// already is one).
///
/// # Safety
/// `dst` must be valid for writing `a.nbytes()` bytes and not overlap `a`.
unsafe fn copy_dense(a: &Array<'_>, dst: *mut u8) {
    if a.is_c_contiguous() {
        // SAFETY: a contiguous array's nbytes start at as_ptr (validated view).
        unsafe { std::ptr::copy_nonoverlapping(a.as_ptr(), dst, a.nbytes()) };
    } else {
        // SAFETY: as the caller guarantees; `a` is a validated view.
        unsafe {
            fnabi_core::layout::strided_copy(
                a.as_ptr(),
                a.strides(),
                dst,
                &c_strides(a.shape()),
                a.shape(),
                a.dtype().size(),
            )
        };
    }
}

/// A host array as an unranked result: dense data and a ranked descriptor,
/// both `malloc`ed (MLIR's caller copies the descriptor and frees it).
fn stage_unranked(a: &Array<'_>, e: ElementType) -> Result<Staged, Error> {
    if a.dtype() != e.dtype() {
        return Err(CallError::argument(CallErrorKind::Dtype { expected: e.dtype(), got: a.dtype() }).into());
    }
    let rank = a.rank();
    if rank > MAX_RANK {
        return Err(Error::invalid_argument(format!("rank {rank} is above {MAX_RANK}")));
    }
    let data = Block::malloc(a.nbytes())?;
    let strides = c_strides(a.shape());
    // SAFETY: as in `stage_ranked`.
    unsafe { copy_dense(a, data.0.cast()) };
    let desc = Block::malloc(8 * (3 + 2 * rank))?;
    let w = desc.0.cast::<i64>();
    // SAFETY: the descriptor block holds 3 + 2·rank words.
    unsafe {
        w.write(data.0 as i64);
        w.add(1).write(data.0 as i64);
        w.add(2).write(0);
        for (k, (&n, &s)) in a.shape().iter().zip(&strides).enumerate() {
            w.add(3 + k).write(n as i64);
            w.add(3 + rank + k).write(s as i64);
        }
    }
    Ok(Staged::Unranked { desc, data, rank })
}

/// A zero-filled ranked result: static dims as declared, dynamic dims 0.
fn default_ranked(m: &MemRefType) -> Staged {
    let rank = m.rank();
    let shape: DimVec<usize> = m.dims.iter().map(|d| if let Dim::Static(s) = d { *s as usize } else { 0 }).collect();
    let mut strides = c_strides(&shape);
    let mut offset = 0i64;
    if let MemRefLayout::Strided { strides: fixed, offset: o } = &m.layout {
        for (s, f) in strides.iter_mut().zip(fixed) {
            if let Some(f) = f {
                *s = *f as isize;
            }
        }
        offset = o.unwrap_or(0);
    }
    let es = m.element.size() as i64;
    // Bytes before element 0 that the view reaches (negative strides), and after.
    let (lo, hi) = match byte_extent(&shape, &strides, es as usize) {
        Ok(Some((lo, hi))) => (lo as i64, hi as i64),
        _ => (0, 0),
    };
    let at = offset.saturating_mul(es);
    let shift = (-(at.saturating_add(lo))).max(0);
    let bytes = shift.saturating_add(at).saturating_add(hi).max(0) as usize;
    let block = Block::calloc(bytes);
    let mut d = DynMemRef::new(rank);
    let w = d.words_mut();
    w[0] = 0;
    w[1] = shift;
    w[2] = offset;
    for k in 0..rank {
        w[3 + k] = shape[k] as i64;
        w[3 + rank + k] = strides[k] as i64;
    }
    Staged::Ranked(d, block)
}

// ---- the entry and per-thread failures ---------------------------------------

thread_local! {
    /// Nesting depth of fnabi calls into modules with bindings on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The first host-function failure of the innermost such call.
    static PENDING: RefCell<Option<MlirError>> = const { RefCell::new(None) };
}

/// The one Rust entry every trampoline calls (through its slot).
///
/// # Safety
/// `ctx` is the `Slot` fnabi stored with this entry; `words` holds one word
/// per declared argument; `result` is where the results go (see `Slot::commit`).
pub(crate) unsafe extern "C" fn host_entry(ctx: *const c_void, words: *const u64, result: *mut c_void) {
    // SAFETY: fnabi stored a pointer to a boxed Slot that the library's
    // binding keeps alive while the library is loaded.
    let slot = unsafe { &*ctx.cast::<Slot>() };
    let n = slot.ty.inputs.len();
    // SAFETY: the trampoline passes an array of at least `n` words.
    let words = if n == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(words, n) } };
    let outcome = catch_unwind(AssertUnwindSafe(|| slot.invoke(words, result)));
    let error: HostError = match outcome {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic payload that is not a string".into());
            // Dropping a payload may itself panic: never let that unwind.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            Box::new(HostPanic(msg))
        }
    };
    let defaults = slot.defaults();
    // SAFETY: as for the successful path.
    unsafe { slot.commit(defaults, result) };
    let e = MlirError::HostFunction { name: slot.name.clone(), source: error };
    if DEPTH.try_with(|d| d.get() > 0).unwrap_or(false) {
        let mut e = Some(e);
        let _ = PENDING.try_with(|p| {
            let mut p = p.borrow_mut();
            if p.is_none() {
                *p = e.take();
            }
        });
    } else {
        eprintln!("fnabi: {e} (outside any fnabi call, so no call reports it)");
    }
}

/// Brackets one native call into a module with a binding: flushes Rust's
/// stdout first and C's stdio after (when the module uses the runtime
/// utilities), and collects the host-function failure of this call.
pub(crate) struct CallScope {
    outer: Option<MlirError>,
    flush: bool,
}

impl CallScope {
    pub(crate) fn enter(binding: &Binding) -> CallScope {
        if binding.flush_stdio {
            use std::io::Write;
            let _ = std::io::stdout().flush();
        }
        DEPTH.with(|d| d.set(d.get() + 1));
        let outer = PENDING.with(|p| p.borrow_mut().take());
        CallScope { outer, flush: binding.flush_stdio }
    }

    /// The failure of this call, if any (the enclosing call's is restored).
    pub(crate) fn finish(self) -> Option<Error> {
        if self.flush {
            // SAFETY: fflush(NULL) flushes every C output stream.
            unsafe { libc::fflush(std::ptr::null_mut()) };
        }
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        PENDING.with(|p| std::mem::replace(&mut *p.borrow_mut(), self.outer)).map(Error::from)
    }
}

/// What a loaded library's externals are bound to; owned by the library.
pub(crate) struct Binding {
    pub(crate) slots: Vec<Slot>,
    pub(crate) flush_stdio: bool,
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("host", &self.slots.iter().map(|s| s.name.as_str()).collect::<Vec<_>>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(aligned: usize, offset: i64, sizes: &[i64], strides: &[i64]) -> DynMemRef {
        let mut d = DynMemRef::new(sizes.len());
        let w = d.words_mut();
        w[0] = aligned as i64;
        w[1] = aligned as i64;
        w[2] = offset;
        w[3..3 + sizes.len()].copy_from_slice(sizes);
        w[3 + sizes.len()..].copy_from_slice(strides);
        d
    }

    fn ty(s: &str) -> MemRefType {
        match s.parse::<MlirType>().unwrap() {
            MlirType::MemRef(m) => m,
            _ => panic!(),
        }
    }

    #[test]
    fn descriptors_are_checked_against_their_types() {
        let f32e = ElementType::Scalar(fnabi_abi::ScalarType::F32);
        let base = 0x1000usize;
        let v = view_of(&desc(base, 0, &[2, 3], &[3, 1]), f32e, Some(&ty("memref<?x3xf32>"))).unwrap();
        assert_eq!((v.start, v.len, v.offset, &v.strides[..]), (base, 24, 0, &[3isize, 1][..]));
        // Identity layouts: strides and offset must be what MLIR code assumes.
        let e = view_of(&desc(base, 0, &[2, 3], &[1, 2]), f32e, Some(&ty("memref<?x?xf32>"))).err().unwrap();
        assert_eq!(e, "its descriptor has stride 1 in dim 0, its type 3");
        let e = view_of(&desc(base, 4, &[2, 3], &[3, 1]), f32e, Some(&ty("memref<?x?xf32>"))).err().unwrap();
        assert_eq!(e, "its descriptor has offset 4, its type 0");
        let e = view_of(&desc(base, 0, &[2, 4], &[4, 1]), f32e, Some(&ty("memref<?x3xf32>"))).err().unwrap();
        assert_eq!(e, "its descriptor has size 4 in static dim 1");
        // Extent-1 dims and empty arrays: strides do not matter.
        assert!(view_of(&desc(base, 0, &[1, 3], &[99, 1]), f32e, Some(&ty("memref<?x?xf32>"))).is_ok());
        let v = view_of(&desc(0, 7, &[0, 3], &[5, 5]), f32e, Some(&ty("memref<?x?xf32>"))).unwrap();
        assert_eq!((v.start, v.len), (EMPTY, 0));
        // Strided: dynamic parts from the descriptor, static ones checked.
        let s = ty("memref<?x?xf32, strided<[?, 2], offset: ?>>");
        let v = view_of(&desc(base, 5, &[2, 3], &[-8, 2]), f32e, Some(&s)).unwrap();
        // Element 0 at base + 20; the view reaches back 8 elements (32 bytes).
        assert_eq!((v.start, v.len, v.offset), (base + 20 - 32, 32 + 4 * 4 + 4, 32));
        let e = view_of(&desc(base, 5, &[2, 3], &[8, 1]), f32e, Some(&s)).err().unwrap();
        assert_eq!(e, "its descriptor has stride 1 in dim 1, its type 2");
        let s = ty("memref<3xf32, strided<[1], offset: 2>>");
        assert!(view_of(&desc(base, 1, &[3], &[1]), f32e, Some(&s)).err().unwrap().contains("offset 1, its type 2"));
        // Broken descriptors.
        let e = view_of(&desc(base, 0, &[-1], &[1]), f32e, None).err().unwrap();
        assert_eq!(e, "negative size -1 in its descriptor");
        let e = view_of(&desc(0, 0, &[2], &[1]), f32e, None).err().unwrap();
        assert!(e.contains("aligned pointer is null"));
        let e = view_of(&desc(base, i64::MAX, &[2], &[1]), f32e, None).err().unwrap();
        assert!(e.contains("overflows"), "{e}");
        let e = view_of(&desc(base, 0, &[2], &[i64::MAX]), f32e, None).err().unwrap();
        assert!(e.contains("too large"), "{e}");
        let e = view_of(&desc(8, -4, &[2], &[1]), f32e, None).err().unwrap();
        assert!(e.contains("wraps"), "{e}");
    }

    #[test]
    fn default_results_cover_what_the_type_fixes() {
        let Staged::Ranked(d, b) = default_ranked(&ty("memref<2x?xf32>")) else { panic!() };
        assert_eq!(d.words(), &[0, 0, 0, 2, 0, 1, 1]);
        drop(b);
        let Staged::Ranked(d, b) = default_ranked(&ty("memref<3x2xi16, strided<[-2, 1], offset: 4>>")) else {
            panic!()
        };
        // Element 0 at byte 8; rows go back 2 elements each: bytes [0, 12) used.
        assert_eq!(d.words(), &[0, 0, 4, 3, 2, -2, 1]);
        drop(b);
    }

    #[test]
    fn staged_results_have_the_layout_of_their_type() {
        let a = Array::from_vec(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        // Identity: dense row-major, pointers relative to the block.
        let Staged::Ranked(d, b) = stage_ranked(&a.permuted(&[1, 0]).unwrap(), &ty("memref<3x?xf32>")).unwrap() else {
            panic!()
        };
        assert_eq!(d.words(), &[0, 0, 0, 3, 2, 2, 1]);
        // SAFETY: the block holds the 6 floats just copied.
        let got = unsafe { std::slice::from_raw_parts(b.0.cast::<f32>(), 6) };
        assert_eq!(got, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        // Static column-major strides and a static offset: converted.
        let m = ty("memref<2x3xf32, strided<[1, 2], offset: 1>>");
        let Staged::Ranked(d, b) = stage_ranked(&a, &m).unwrap() else { panic!() };
        assert_eq!(d.words()[2..], [1, 2, 3, 1, 2]);
        let at = (d.words()[1] - d.words()[0]) as usize / 4 + 1;
        // SAFETY: the block holds the converted storage (offset 1 + 6 elements).
        let got = unsafe { std::slice::from_raw_parts(b.0.cast::<f32>().add(at), 6) };
        assert_eq!(got, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        // Type errors.
        let e = stage_ranked(&a, &ty("memref<2x4xf32>")).err().unwrap().to_string();
        assert_eq!(e, "dim 1: expected 4, got 3");
        let e = stage_ranked(&a, &ty("memref<?x?xi32>")).err().unwrap().to_string();
        assert_eq!(e, "element type: expected i32, got f32");
        let e = stage_unranked(&a, ElementType::Index).err().unwrap().to_string();
        assert_eq!(e, "element type: expected i64, got f32");
        let Staged::Unranked { desc, data, rank } = stage_unranked(&a, f32_elem()).unwrap() else { panic!() };
        // SAFETY: a rank-2 descriptor block.
        let w = unsafe { std::slice::from_raw_parts(desc.0.cast::<i64>(), 7) };
        assert_eq!((rank, w[0], w[1], &w[2..]), (2, data.0 as i64, data.0 as i64, &[0, 2, 3, 3, 1][..]));
    }

    fn f32_elem() -> ElementType {
        ElementType::Scalar(fnabi_abi::ScalarType::F32)
    }

    /// An array of `shape` (i32, values 0..), maybe transposed, maybe every
    /// other row: the views a descriptor can describe.
    fn arrays() -> impl proptest::strategy::Strategy<Value = Array<'static>> {
        use proptest::prelude::*;
        (proptest::collection::vec(0usize..5, 0..4), any::<bool>(), any::<bool>()).prop_map(|(shape, flip, step)| {
            let n: usize = shape.iter().product();
            let a = Array::from_vec(&shape, (0..n as i32).collect()).unwrap();
            let mut v = a.view().into_owned().unwrap();
            if flip && shape.len() > 1 {
                let axes: Vec<usize> = (0..shape.len()).rev().collect();
                v = v.permuted(&axes).unwrap().shared().unwrap();
            }
            if step && v.rank() > 0 && v.shape()[0] > 1 {
                let mut sh = v.shape().to_vec();
                sh[0] = sh[0].div_ceil(2);
                let mut st = v.strides().to_vec();
                st[0] *= 2;
                v = v.restrided(&sh, &st, v.byte_offset()).unwrap().shared().unwrap();
            }
            v
        })
    }

    proptest::proptest! {
        /// Array -> descriptor (as fnabi passes it to MLIR) -> host view: the
        /// same elements, for a fully dynamic strided type and, for dense
        /// arrays, the identity layout.
        #[test]
        fn descriptor_views_round_trip(a in arrays()) {
            let i32e = ElementType::Scalar(fnabi_abi::ScalarType::I32);
            let dims = vec![Dim::Dynamic; a.rank()];
            let strided = MemRefType {
                element: i32e,
                dims: dims.clone(),
                layout: MemRefLayout::Strided { strides: vec![None; a.rank()], offset: None },
            };
            let mut types = vec![strided];
            if a.is_c_contiguous() {
                types.push(MemRefType::new(i32e, dims));
            }
            for m in &types {
                let mut d = DynMemRef::new(a.rank());
                proptest::prop_assert!(fill_descriptor(&a, m, d.words_mut()).unwrap());
                let v = view_of(&d, i32e, Some(m)).unwrap();
                // SAFETY: the view lies inside `a`'s storage (what is checked here).
                let bytes = unsafe { std::slice::from_raw_parts(v.start as *const u8, v.len) };
                if v.len > 0 {
                    let (lo, hi) = (a.storage_ptr() as usize, a.storage_ptr() as usize + a.storage_len());
                    proptest::prop_assert!(v.start >= lo && v.start + v.len <= hi);
                }
                let back = Array::from_bytes(v.dtype, &v.shape, Some(&v.strides), bytes, v.offset).unwrap();
                proptest::prop_assert_eq!(back.shape(), a.shape());
                proptest::prop_assert_eq!(back.to_vec::<i32>().unwrap(), a.to_vec::<i32>().unwrap());
            }
        }

        /// Any descriptor words: a view or an error, never a panic; a view's
        /// bytes contain its element [0, …].
        #[test]
        fn arbitrary_descriptors_never_panic(
            sizes in proptest::collection::vec(-2i64..6, 0..4),
            strides in proptest::collection::vec(proptest::prelude::any::<i64>(), 4),
            small in proptest::collection::vec(-9i64..9, 4),
            offset in -40i64..40,
            use_small in proptest::prelude::any::<bool>(),
        ) {
            let rank = sizes.len();
            let st: Vec<i64> = if use_small { small[..rank].to_vec() } else { strides[..rank].to_vec() };
            let d = desc(0x10_0000, offset, &sizes, &st);
            let f64e = ElementType::Scalar(fnabi_abi::ScalarType::F64);
            if let Ok(v) = view_of(&d, f64e, None)
                && v.len > 0
            {
                proptest::prop_assert!(v.offset + 8 <= v.len);
                proptest::prop_assert_eq!(v.start + v.offset, (0x10_0000 + offset * 8) as usize);
            }
        }
    }
}
