//! A host function's results on their way back to MLIR: each bound slot
//! ([`Slot`]) runs its function, checks and stages the values (memrefs in
//! `malloc`ed blocks laid out as their types say), and writes them, or
//! zero-filled defaults after a failure, into MLIR's result struct.

use super::*;

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
pub(super) struct Block(pub(super) *mut c_void);

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
pub(super) enum Staged {
    Bits(ElementType, u64),
    Ranked(DynMemRef, Block),
    Unranked { desc: Block, data: Block, rank: usize },
}

/// Rank of the zero descriptor handed back for an unranked result of a
/// failed host function: code casting it to any rank up to this reads
/// sizes of 0 (see the module docs).
pub(super) const DEFAULT_UNRANKED_RANK: usize = 8;

impl Slot {
    pub(super) fn invoke(&self, words: &[u64], result: *mut c_void) -> Result<(), HostError> {
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
    pub(super) fn defaults(&self) -> Vec<Staged> {
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
    pub(super) unsafe fn commit(&self, staged: Vec<Staged>, result: *mut c_void) {
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
pub(super) unsafe fn write_bits(field: *mut u8, e: ElementType, bits: u64, packed: bool) {
    let n = if packed { e.size() } else { 8 };
    // SAFETY: as the caller guarantees.
    unsafe { std::ptr::copy_nonoverlapping(bits.to_le_bytes().as_ptr(), field, n) };
}

pub(super) fn as_array<'v>(v: &'v Value<'static>) -> Option<&'v Array<'static>> {
    match v {
        Value::Array(a) => Some(a),
        _ => None,
    }
}

/// A host array copied into `malloc`ed memory laid out for ranked type `m`.
/// The descriptor's pointers are relative to the block (rebased on commit).
pub(super) fn stage_ranked(a: &Array<'_>, m: &MemRefType) -> Result<Staged, Error> {
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
pub(super) unsafe fn copy_dense(a: &Array<'_>, dst: *mut u8) {
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
pub(super) fn stage_unranked(a: &Array<'_>, e: ElementType) -> Result<Staged, Error> {
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
pub(super) fn default_ranked(m: &MemRefType) -> Staged {
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
