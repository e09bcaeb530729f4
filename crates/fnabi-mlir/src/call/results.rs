//! What a call returns: scalars from registers, memrefs adopted from the packed result struct.

#[allow(unused_imports)]
use super::*;

/// The results of one call, in raw order. Arrays not taken are dropped
/// (their memory released) with it.
///
/// ```
/// use fnabi_mlir::{Arg, MlirLibrary, Scalar};
/// let src = r#"
///   func.func @sum_and_fill(%a: i32, %b: i32) -> (i32, memref<2xi32>) attributes {llvm.emit_c_interface} {
///     %s = arith.addi %a, %b : i32
///     %m = memref.alloc() : memref<2xi32>
///     linalg.fill ins(%s : i32) outs(%m : memref<2xi32>)
///     return %s, %m : i32, memref<2xi32>
///   }"#;
/// // SAFETY: the function writes only into the memref it allocates.
/// let lib = unsafe { MlirLibrary::compile(src)? };
/// let mut call = lib.function("sum_and_fill")?.prepare();
/// let mut results = call.call(&mut [Arg::Int(2), Arg::Int(40)])?;
/// assert_eq!(results.len(), 2);
/// assert_eq!(results.scalar(0), Some(Scalar::I32(42)));
/// assert_eq!(results.scalar(1), None); // not a scalar
/// assert_eq!(results.take_array(1).unwrap().to_string(), "2xi32=42 42");
/// assert!(results.take_array(1).is_none()); // taken already
/// assert_eq!(i32::try_from(results.take_value(0).unwrap()?)?, 42);
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub struct Results<'s> {
    pub(super) outs: &'s mut Vec<Out>,
    /// The type and bits of the one scalar result returned in a register
    /// (then `outs` is empty). Kept as bits: a `Scalar` is built on request.
    pub(super) direct: Option<(RegKind, u64)>,
}

impl Results<'_> {
    /// Number of results.
    pub fn len(&self) -> usize {
        usize::from(self.direct.is_some()) + self.outs.len()
    }

    /// True for a function without results.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Result `i`, if it is a scalar.
    #[inline]
    pub fn scalar(&self, i: usize) -> Option<Scalar> {
        if let Some((k, bits)) = self.direct {
            return (i == 0).then(|| k.scalar(bits));
        }
        match self.outs.get(i) {
            Some(Out::Scalar(s)) => Some(*s),
            _ => None,
        }
    }

    /// Takes result `i`, if it is an array not taken yet.
    pub fn take_array(&mut self, i: usize) -> Option<Array<'static>> {
        let slot = self.outs.get_mut(i)?;
        match std::mem::replace(slot, Out::Taken) {
            Out::Array(a) => Some(a),
            other => {
                *slot = other;
                None
            }
        }
    }

    /// Takes result `i` as a value (`None` past the end or when already taken).
    pub fn take_value(&mut self, i: usize) -> Option<Result<Value<'static>, Error>> {
        if let Some((k, bits)) = self.direct {
            return (i == 0).then(|| {
                self.direct = None;
                k.scalar(bits).to_value()
            });
        }
        match std::mem::replace(self.outs.get_mut(i)?, Out::Taken) {
            Out::Scalar(s) => Some(s.to_value()),
            Out::Array(a) => Some(Ok(Value::from(a))),
            Out::Taken => None,
        }
    }

    /// All results as values (an array already taken is an error).
    pub fn into_values(self) -> Result<Vec<Value<'static>>, Error> {
        if let Some((k, bits)) = self.direct {
            return Ok(vec![k.scalar(bits).to_value()?]);
        }
        self.outs
            .drain(..)
            .enumerate()
            .map(|(i, o)| match o {
                Out::Scalar(s) => s.to_value(),
                Out::Array(a) => Ok(Value::from(a)),
                Out::Taken => Err(Error::invalid_argument(format!("result {i} was already taken"))),
            })
            .collect()
    }
}

impl Drop for Results<'_> {
    #[inline]
    fn drop(&mut self) {
        if !self.outs.is_empty() {
            clear_outs(self.outs);
        }
    }
}

/// Drops results not taken (out of line: a register result has none).
#[cold]
#[inline(never)]
pub(super) fn clear_outs(outs: &mut Vec<Out>) {
    outs.clear();
}

/// Reads the packed result struct: scalars, ranked descriptors, unranked
/// descriptors (whose malloc'ed ranked part is copied and freed).
/// `inputs` are the arrays whose memory the callee was given (converted
/// copies in place of the arguments they stand for), for results that
/// alias them.
pub(super) fn take_packed(
    f: &FnInner,
    words: &[i64],
    outs: &mut Vec<Out>,
    inputs: &[&Array<'_>],
    total: usize,
) -> Result<(), Error> {
    let base = words.as_ptr().cast::<u8>();
    let scratch_range = (base as usize, base as usize + total * 8);
    let mut returned: SmallVec<[(ElementType, DynMemRef); 2]> = SmallVec::new();
    let mut slots: SmallVec<[Option<usize>; 4]> = SmallVec::with_capacity(f.ty.results.len());
    let mut first_error = None;
    for (k, (t, &off)) in f.ty.results.iter().zip(&f.plan.result_offsets).enumerate() {
        // SAFETY: `off` + the field size lies inside the result struct at the
        // start of the scratch words, which the callee has filled.
        let field = unsafe { base.add(off) };
        match t {
            MlirType::Scalar(e) => {
                // SAFETY: as above; e.size() bytes at the field.
                outs.push(Out::Scalar(unsafe { Scalar::read(*e, field) }));
                slots.push(None);
            }
            MlirType::MemRef(m) => {
                // SAFETY: a rank-m descriptor of 3 + 2·rank 8-aligned words at the field.
                returned.push((m.element, unsafe { DynMemRef::read(field.cast(), m.rank()) }));
                outs.push(Out::Taken);
                slots.push(Some(returned.len() - 1));
            }
            MlirType::UnrankedMemRef(e) => {
                // SAFETY: `{i64 rank, ptr}` at the 8-aligned field.
                let (rank, p) = unsafe { (field.cast::<i64>().read(), field.cast::<usize>().add(1).read()) };
                outs.push(Out::Taken);
                slots.push(None);
                if !(0..=MAX_RANK as i64).contains(&rank) || p == 0 {
                    first_error.get_or_insert(Error::invalid_argument(format!(
                        "result {k}: the callee returned an invalid unranked memref (rank {rank}, descriptor {p:#x})"
                    )));
                    continue;
                }
                // SAFETY: the callee's unranked result points at a ranked
                // descriptor of `rank` (MLIR's convention).
                let d = unsafe { DynMemRef::read(p as *const c_void, rank as usize) };
                if p < scratch_range.0 || p >= scratch_range.1 {
                    // SAFETY: MLIR malloc's the ranked part of a returned
                    // unranked memref; the caller owns and frees it. (One
                    // pointing into our own scratch — an argument passed
                    // through — is not freed.)
                    unsafe { crate::memref::libc_free(p) };
                }
                returned.push((*e, d));
                *slots.last_mut().unwrap_or(&mut None) = Some(returned.len() - 1);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    if returned.is_empty() {
        return Ok(());
    }
    let image = f.lib.image.get().map_or(&[][..], Vec::as_slice);
    // Returned descriptor k is result slot_of[k].
    let mut slot_of: SmallVec<[usize; 4]> = SmallVec::new();
    for (r, k) in slots.iter().enumerate() {
        if k.is_some() {
            slot_of.push(r);
        }
    }
    let storage = |a: &&Array<'_>| (a.storage_ptr() as usize, a.storage_ptr() as usize + a.storage_len());
    let ranges: SmallVec<[(usize, usize); 16]> = inputs.iter().map(storage).collect();
    // SAFETY: the descriptors were just returned by the callee, which follows
    // MLIR's conventions (the library's contract): callee memory comes from
    // libc malloc and is ours now; `ranges` are the arguments' storage.
    let done = unsafe { adopt_fresh_results(&returned, &ranges, image, &mut |k, a| outs[slot_of[k]] = Out::Array(a)) }?;
    if done {
        return Ok(());
    }
    let inputs: SmallVec<[InputMemory<'_>; 16]> =
        inputs.iter().map(|a| InputMemory { array: a, allocated: a.storage_ptr() as usize }).collect();
    // The general path's callee buffers hold the library as before (static
    // results are copied, so none needs it: a fresh result on the paths
    // above holds nothing).
    let keep: Arc<dyn std::any::Any + Send + Sync> = f.lib.clone();
    // SAFETY: the descriptors were just returned by the callee, which follows
    // MLIR's conventions (the library's contract): callee memory comes from
    // libc malloc and is ours now; `inputs` are the arrays we passed.
    unsafe { adopt_results_into(&returned, &inputs, image, Some(keep), &mut |k, a| outs[slot_of[k]] = Out::Array(a)) }?;
    Ok(())
}
