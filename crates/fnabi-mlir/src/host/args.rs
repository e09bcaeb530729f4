//! What a host function receives: [`HostArgs`], bounds-checked views of
//! its memref arguments (checked against their declared types) and its scalars.

use super::*;

/// The arguments of one call of a host function.
///
/// Views borrow the arguments (they cannot outlive the call); a mutable
/// view borrows them exclusively, so at most one exists at a time and no
/// read-only view coexists with it.
///
/// ```
/// use fnabi_mlir::{Arg, HostFunctions, MlirLibrary};
/// use fnabi_core::{Array, Value};
/// let src = r#"
///   func.func private @fill(memref<3xi32>, i32)
///   func.func @run(%out: memref<3xi32>) {
///     %c = arith.constant 7 : i32
///     func.call @fill(%out, %c) : (memref<3xi32>, i32) -> ()
///     return
///   }"#;
/// let mut host = HostFunctions::new();
/// host.register("fill", |args| {
///     assert_eq!((args.name(), args.len()), ("fill", 2));
///     assert_eq!(args.ty().to_string(), "(memref<3xi32>, i32) -> ()");
///     let v = args.int(1)? as i32;
///     let mut out = args.array_mut(0)?; // destination-passing: write the caller's memory
///     for (i, x) in out.as_mut_slice::<i32>()?.iter_mut().enumerate() {
///         *x = v + i as i32;
///     }
///     Ok(vec![])
/// });
/// // SAFETY: the module writes only its memref argument.
/// let lib = unsafe { MlirLibrary::compile_with_host(src, &host)? };
/// let mut out = Array::zeros(fnabi_core::DType::I32, &[3])?;
/// lib.function("run")?.call(&mut [Arg::Mut(&mut out)])?;
/// assert_eq!(out.to_vec::<i32>()?, [7, 8, 9]);
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub struct HostArgs<'a> {
    pub(super) slot: &'a Slot,
    pub(super) words: &'a [u64],
}

/// The parts of a validated argument view.
pub(super) struct View {
    pub(super) dtype: fnabi_abi::scalar::DType,
    pub(super) shape: DimVec<usize>,
    pub(super) strides: DimVec<isize>,
    /// Address of the lowest byte addressed, and the number of bytes.
    pub(super) start: usize,
    pub(super) len: usize,
    /// Byte offset of element `[0, …]` from `start`.
    pub(super) offset: usize,
}

/// A non-null, 8-aligned address for the storage of empty views.
pub(super) const EMPTY: usize = 8;

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
pub(super) fn view_of(d: &DynMemRef, elem: ElementType, m: Option<&MemRefType>) -> Result<View, String> {
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
