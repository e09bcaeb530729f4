//! Taking ownership of the descriptors compiled code returns: each is
//! checked ([`describe_result`]), recognised as an input's memory, static
//! memory or a fresh allocation, and adopted as an [`Array`]
//! ([`adopt_results`] and its variants).

use super::*;

/// The memory of one memref argument, for recognising results that alias it.
///
/// ```
/// use fnabi_mlir::memref::{DynMemRef, InputMemory};
/// use fnabi_core::Array;
/// let a = Array::from_vec(&[4], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
/// let d = DynMemRef::new(1); // (filled by `fill_descriptor` in a real call)
/// let m = InputMemory { array: &a, allocated: d.allocated() };
/// assert_eq!(m.array.len(), 4);
/// ```
pub struct InputMemory<'r> {
    /// The array passed (or its converted copy).
    pub array: &'r Array<'r>,
    /// The `allocated` pointer its descriptor carried.
    pub allocated: usize,
}

/// The layout of a returned descriptor given by its words (`3 + 2·rank`,
/// in C layout), checked: shape, strides, the address of element 0, and
/// the absolute byte range it touches (`None` when empty). Errors for
/// negative sizes, an element count or extent that overflows `isize`, a
/// range that wraps the address space, misaligned data.
///
/// No allocation up to rank 6 (the general path of adopting memref
/// results; the one-result hot path, [`adopt_fresh_result`], takes only
/// the [`result_extent`] and writes the dims into the array itself).
#[inline(always)]
pub(crate) fn describe_result(i: usize, dtype: DType, words: &[i64]) -> Result<ResultLayout, Error> {
    result_extent(i, dtype, words).map(|e| e.layout())
}

/// What [`result_extent`] finds in a descriptor's words.
pub(crate) struct ResultExtent<'w> {
    /// Address of element 0.
    data: usize,
    /// Absolute byte range `[lo, hi)` touched (`None` when empty).
    range: Option<(usize, usize)>,
    /// The sizes, each non-negative.
    sizes: &'w [i64],
    /// The strides, one per size.
    strides: &'w [i64],
}

impl ResultExtent<'_> {
    /// The layout with its dims (no allocation up to rank 6).
    fn layout(&self) -> ResultLayout {
        let shape: DimVec<usize> = self.sizes.iter().map(|&n| n as usize).collect();
        let strides: DimVec<isize> = self.strides.iter().map(|&s| s as isize).collect();
        ResultLayout { shape, strides, data: self.data, range: self.range }
    }
}

/// The checks of [`describe_result`] and what they find, without building
/// dims: the address of element 0, the absolute byte range `[lo, hi)` the
/// descriptor touches (`None` when it is empty), and its sizes and strides
/// (`3 + 2·rank` words, every size non-negative). One pass over the dims.
#[inline(always)]
pub(crate) fn result_extent(i: usize, dtype: DType, words: &[i64]) -> Result<ResultExtent<'_>, Error> {
    let es = dtype.size() as isize;
    let (head, dims) = words.split_at_checked(3).ok_or_else(|| bad_result(i, "fewer than 3 words"))?;
    let rank = dims.len() / 2;
    let (sizes, strides_in) = dims.split_at(rank);
    if sizes.len() != strides_in.len() {
        return Err(bad_result(i, format!("{} words are no ranked descriptor", words.len())));
    }
    // The extent [lo, hi) relative to element 0, as `byte_extent` computes
    // it; `fits` turns false on overflow (an error unless the array is empty).
    let (mut lo, mut hi, mut fits, mut empty) = (0isize, es, true, false);
    let mut count: usize = 1;
    for (&n, &s) in sizes.iter().zip(strides_in) {
        if n < 0 {
            return Err(bad_result(i, format!("negative size {n}")));
        }
        count = count
            .checked_mul(n as usize)
            .filter(|&c| c <= isize::MAX as usize)
            .ok_or_else(|| bad_result(i, format!("{sizes:?} elements overflow")))?;
        if n == 0 {
            empty = true;
            continue;
        }
        match (n as isize - 1).checked_mul(s as isize).and_then(|v| v.checked_mul(es)) {
            Some(v) if v < 0 => {
                lo = lo.checked_add(v).unwrap_or_else(|| {
                    fits = false;
                    0
                })
            }
            Some(v) => {
                hi = hi.checked_add(v).unwrap_or_else(|| {
                    fits = false;
                    0
                })
            }
            None => fits = false,
        }
    }
    if !empty && !fits {
        return Err(bad_result(i, format!("sizes {sizes:?} with strides {strides_in:?} address too far")));
    }
    let data = (head[2] as isize)
        .checked_mul(es)
        .and_then(|b| (head[1] as isize).checked_add(b))
        .ok_or_else(|| bad_result(i, "offset overflows"))? as usize;
    let range = if empty {
        None
    } else {
        let a = (data as isize).checked_add(lo).filter(|&a| a > 0);
        let b = (data as isize).checked_add(hi);
        match (a, b) {
            (Some(a), Some(b)) => Some((a as usize, b as usize)),
            _ => return Err(bad_result(i, "its extent wraps around the address space")),
        }
    };
    if range.is_some() && !dtype.is_aligned(data) {
        return Err(bad_result(i, format!("data at {data:#x} is not aligned to {es}-byte elements")));
    }
    Ok(ResultExtent { data, range, sizes, strides: strides_in })
}

/// Checks that every element of a returned bool memref holds 0 or 1, as
/// an [`Array`] of bools must (it may be read as `&[bool]`). MLIR stores
/// `i1` elements as whole bytes; a callee that leaves other bits set there
/// returns an invalid result.
///
/// # Safety
/// Every element of `l` must be readable (one byte each, at `l.data` plus
/// its strides).
unsafe fn check_result_bools(i: usize, l: &ResultLayout) -> Result<(), Error> {
    if l.range.is_none() {
        return Ok(());
    }
    let rank = l.shape.len();
    let mut idx: DimVec<usize> = smallvec::smallvec![0; rank];
    let mut off: isize = 0;
    loop {
        // SAFETY: `off` is the offset of one element from element 0 (the
        // caller guarantees the elements are readable).
        let b = unsafe { (l.data as *const u8).offset(off).read() };
        if b > 1 {
            return Err(bad_result(i, format!("bool element holds byte {b} (expected 0 or 1)")));
        }
        let mut d = rank;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            off += l.strides[d];
            if idx[d] < l.shape[d] {
                break;
            }
            off -= l.strides[d] * l.shape[d] as isize;
            idx[d] = 0;
        }
    }
}

/// The checked layout of a returned descriptor ([`describe_result`]).
pub(crate) struct ResultLayout {
    shape: DimVec<usize>,
    strides: DimVec<isize>,
    /// Address of element 0.
    data: usize,
    /// Absolute byte range touched (`None` when empty).
    range: Option<(usize, usize)>,
}

/// Where a returned descriptor's memory belongs.
enum Owner {
    /// Heap memory the callee allocated: free `allocated` when dropped.
    Callee(usize),
    /// Inside the storage of input `i`.
    Input(usize),
    /// Static memory (a module global, or no allocation): copy it.
    Static,
}

struct Returned {
    dtype: DType,
    shape: DimVec<usize>,
    strides: DimVec<isize>,
    /// Address of element 0.
    data: usize,
    /// Absolute byte range touched (`None` when empty).
    range: Option<(usize, usize)>,
    owner: Owner,
}

unsafe extern "C" {
    fn free(p: *mut c_void);
}

/// True when `allocated` (a returned descriptor's first word) is no callee
/// allocation: MLIR's global sentinel, null, or inside one of the module's
/// static ranges.
fn is_static_memory(allocated: usize, static_ranges: &[(usize, usize)]) -> bool {
    allocated == GLOBAL_SENTINEL
        || allocated == 0
        || static_ranges.iter().any(|&(a, b)| allocated >= a && allocated < b)
}

/// True when a result whose allocation is `allocated` and whose bytes are
/// `[lo, hi)` carries or touches one of the `inputs` (byte ranges of the
/// arguments' storage). Every input is looked at (no early exit): a few
/// flag operations each.
#[inline]
fn touches_input(inputs: &[(usize, usize)], allocated: usize, lo: usize, hi: usize) -> bool {
    let mut touches = false;
    for &(a, b) in inputs {
        touches |= (allocated == a) | ((lo < b) & (hi > a));
    }
    touches
}

/// The buffer that owns callee allocation `allocated` and exposes its bytes
/// `[lo, hi)`, made in its `Arc`; it frees `allocated` with libc `free`
/// when dropped.
///
/// # Safety
/// `allocated` came from libc `malloc`, is owned by the caller alone and is
/// not 0; `[lo, hi)` lies inside that allocation and `lo > 0`.
#[inline(always)]
unsafe fn malloc_buffer(
    allocated: usize,
    lo: usize,
    hi: usize,
    keep_alive: Option<Arc<dyn std::any::Any + Send + Sync>>,
) -> Arc<HostBuffer> {
    // SAFETY: both pointers are non-null and the memory is the caller's to
    // hand over (function contract).
    unsafe {
        HostBuffer::shared_from_malloc(
            std::ptr::NonNull::new_unchecked(allocated as *mut u8),
            std::ptr::NonNull::new_unchecked(lo as *mut u8),
            hi - lo,
            true,
            keep_alive,
        )
    }
}

/// Frees memory from libc `malloc` (what MLIR's `memref.alloc` and
/// unranked-result descriptors use).
///
/// # Safety
/// `p` must be null or a live pointer from libc `malloc`, not freed before.
pub(crate) unsafe fn libc_free(p: usize) {
    // SAFETY: as the caller guarantees.
    unsafe { free(p as *mut c_void) }
}

fn bad_result(i: usize, msg: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("result {i}: the callee returned an invalid memref descriptor: {msg}"))
}

/// Takes ownership of ranked descriptors returned by compiled code and turns
/// each into an owned [`Array`]:
/// - callee-allocated memory becomes a buffer whose deleter frees
///   `allocated` (never `aligned`) with libc `free`, once even when several
///   results share it; `keep_alive` is held until then;
/// - a result inside an input's storage (or carrying an input's `allocated`)
///   shares that input's buffer, or is copied when the input was borrowed;
/// - a result in static memory — `allocated` is MLIR's `0xdeadbeef`
///   (`memref.get_global`), null, or inside `static_ranges` (the library's
///   own image) — is copied and never freed.
///
/// Each descriptor is checked (non-negative sizes, overflow-free extent,
/// aligned data); an invalid one is an error and nothing of it is freed.
///
/// # Safety
/// The descriptors must come from code that follows MLIR's conventions:
/// each addresses valid memory, and every `allocated` that is not an input's
/// nor static was returned by libc `malloc` and is now owned by the caller.
pub unsafe fn adopt_results(
    returned: &[(ElementType, DynMemRef)],
    inputs: &[InputMemory<'_>],
    static_ranges: &[(usize, usize)],
    keep_alive: Option<Arc<dyn std::any::Any + Send + Sync>>,
) -> Result<SmallVec<[Array<'static>; 2]>, Error> {
    let mut out = SmallVec::with_capacity(returned.len());
    // SAFETY: forwarded to the caller.
    unsafe { adopt_results_into(returned, inputs, static_ranges, keep_alive, &mut |_, a| out.push(a)) }?;
    Ok(out)
}

/// The common case of [`adopt_results_into`] without its bookkeeping: every
/// returned descriptor is a distinct, non-empty allocation of the callee
/// that is no input's storage and no static memory (a fresh `memref.alloc`).
/// Then each becomes an array owning its allocation and is handed to `put`,
/// and the result is `Ok(true)`. Otherwise nothing is taken and the result
/// is `Ok(false)`: the general adoption must run. `inputs` are the byte
/// ranges `[start, end)` of the arguments' storage. The arrays hold nothing
/// but their memory, which libc `free` releases: no library need stay
/// loaded for them.
///
/// # Safety
/// As for [`adopt_results`].
pub unsafe fn adopt_fresh_results(
    returned: &[(ElementType, DynMemRef)],
    inputs: &[(usize, usize)],
    static_ranges: &[(usize, usize)],
    put: &mut dyn FnMut(usize, Array<'static>),
) -> Result<bool, Error> {
    type Fresh = (DType, DimVec<usize>, DimVec<isize>, usize, usize, usize, usize);
    let mut fresh: SmallVec<[Fresh; 2]> = SmallVec::new();
    for (i, (elem, d)) in returned.iter().enumerate() {
        let dtype = elem.dtype();
        let allocated = d.allocated();
        let layout = describe_result(i, dtype, d.words())?;
        if dtype == DType::Bool {
            // SAFETY: the callee's result addresses valid memory (caller contract).
            unsafe { check_result_bools(i, &layout) }?;
        }
        let ResultLayout { shape, strides, data, range } = layout;
        let Some((lo, hi)) = range else { return Ok(false) };
        if is_static_memory(allocated, static_ranges)
            || touches_input(inputs, allocated, lo, hi)
            || fresh.iter().any(|f| f.3 == allocated)
        {
            return Ok(false);
        }
        fresh.push((dtype, shape, strides, allocated, data, lo, hi));
    }
    for (i, (dtype, shape, strides, allocated, data, lo, hi)) in fresh.into_iter().enumerate() {
        // SAFETY: `allocated` is a distinct callee allocation from libc malloc,
        // ours now (caller contract), not 0 and not static (checked above);
        // [lo, hi) is this result's extent (overflow-checked, lo > 0), inside it.
        let buf = unsafe { malloc_buffer(allocated, lo, hi, None) };
        // SAFETY: the buffer spans exactly the result's extent; its data is
        // aligned and its shape fits `isize` (`describe_result`).
        put(i, unsafe { Array::from_parts(dtype, shape, strides, data - lo, buf) });
    }
    Ok(true)
}

/// [`adopt_fresh_results`] for a single descriptor, read in place from its
/// `3 + 2·rank` words (C layout) instead of a [`DynMemRef`] copy, and with
/// no error path: when the descriptor is valid and is a non-empty
/// allocation of the callee that lies in none of the `inputs` (the
/// arguments' storage, byte ranges `[start, end)`) and is no static memory,
/// the array owning it, boxed as a [`Value::Array`](fnabi_core::value::Value::Array) holds it;
/// otherwise `None` and nothing is taken: the general adoption
/// ([`adopt_results_into`]) must run, and reports an invalid descriptor.
///
/// (The result is one pointer, returned in a register: the hot path of a
/// call that returns one array moves no large values around.)
///
/// # Safety
/// As for [`adopt_results`].
#[inline]
pub unsafe fn adopt_fresh_result(
    elem: ElementType,
    words: &[i64],
    inputs: &[(usize, usize)],
    static_ranges: &[(usize, usize)],
) -> Option<Box<Array<'static>>> {
    let dtype = elem.dtype();
    let extent = result_extent(0, dtype, words).ok()?;
    let (lo, hi) = extent.range?;
    let allocated = words[0] as usize;
    if touches_input(inputs, allocated, lo, hi) || is_static_memory(allocated, static_ranges) {
        return None;
    }
    if dtype == DType::Bool {
        // SAFETY: the callee's result addresses valid memory (caller contract).
        unsafe { check_result_bools(0, &extent.layout()) }.ok()?;
    }
    // SAFETY: `allocated` is a callee allocation from libc malloc, ours now
    // (caller contract), not 0 and not static (checked above); [lo, hi) is
    // this result's extent (overflow-checked, lo > 0), inside it.
    let buf = unsafe { malloc_buffer(allocated, lo, hi, None) };
    // SAFETY: the buffer spans exactly the result's extent; its data is
    // aligned, its sizes are non-negative, its element count fits `isize`
    // and its bools are 0 or 1 (`result_extent`, `check_result_bools`).
    Some(unsafe { Array::boxed_from_dims(dtype, extent.sizes, extent.strides, extent.data - lo, buf) })
}

/// [`adopt_results`] handing each array to `put(result index, array)` as
/// soon as it is made, instead of collecting them (the hot path of a call:
/// an array is written once, into its final place).
///
/// # Safety
/// As for [`adopt_results`].
pub unsafe fn adopt_results_into(
    returned: &[(ElementType, DynMemRef)],
    inputs: &[InputMemory<'_>],
    static_ranges: &[(usize, usize)],
    keep_alive: Option<Arc<dyn std::any::Any + Send + Sync>>,
    put: &mut dyn FnMut(usize, Array<'static>),
) -> Result<(), Error> {
    // Stack storage for the common case of a few results: adopting them
    // allocates only the buffers that own callee memory.
    let mut items: SmallVec<[Returned; 2]> = SmallVec::with_capacity(returned.len());
    for (i, (elem, d)) in returned.iter().enumerate() {
        let dtype = elem.dtype();
        let layout = describe_result(i, dtype, d.words())?;
        let range = layout.range;
        let allocated = d.allocated();
        let owner = if is_static_memory(allocated, static_ranges) {
            Owner::Static
        } else if let Some(k) = inputs.iter().position(|m| {
            let (lo, hi) = (m.array.storage_ptr() as usize, m.array.storage_ptr() as usize + m.array.storage_len());
            m.allocated == allocated || range.is_some_and(|(a, b)| a >= lo && b <= hi)
        }) {
            let m = &inputs[k];
            let (lo, hi) = (m.array.storage_ptr() as usize, m.array.storage_ptr() as usize + m.array.storage_len());
            if range.is_some_and(|(a, b)| a < lo || b > hi) {
                return Err(bad_result(
                    i,
                    format!("it carries input {k}'s allocation but addresses memory outside it"),
                ));
            }
            Owner::Input(k)
        } else {
            if dtype == DType::Bool {
                // SAFETY: the callee's result addresses valid memory (caller
                // contract). (Copies of inputs and statics check their bools.)
                unsafe { check_result_bools(i, &layout) }?;
            }
            Owner::Callee(allocated)
        };
        let ResultLayout { shape, strides, data, range } = layout;
        items.push(Returned { dtype, shape, strides, data, range, owner });
    }

    // One buffer per distinct callee allocation, spanning what its results touch.
    let mut buffers: SmallVec<[(usize, Option<Arc<HostBuffer>>); 2]> = SmallVec::new();
    for it in &items {
        let Owner::Callee(a) = it.owner else { continue };
        if buffers.iter().any(|(p, _)| *p == a) {
            continue;
        }
        let span = items
            .iter()
            .filter(|o| matches!(o.owner, Owner::Callee(p) if p == a))
            .filter_map(|o| o.range)
            .reduce(|x, y| (x.0.min(y.0), x.1.max(y.1)));
        let buf = match span {
            None => {
                // Every result of this allocation is empty: nothing to read, free it now.
                // SAFETY: `a` is a callee allocation now owned by us (caller contract).
                unsafe { libc_free(a) };
                None
            }
            Some((lo, hi)) => {
                // SAFETY: `a` came from libc malloc in the callee and is owned
                // by this buffer alone (one buffer per allocation; caller
                // contract); [lo, hi) lies in it (a result's extent, checked
                // above not to wrap) and stays valid until the buffer frees it.
                // Both pointers are non-null: `a` is not 0 (Owner::Static) and
                // `lo > 0` (checked when the range was computed).
                Some(unsafe { malloc_buffer(a, lo, hi, keep_alive.clone()) })
            }
        };
        buffers.push((a, buf));
    }

    for (i, it) in items.into_iter().enumerate() {
        let arr = match (&it.owner, it.range) {
            (_, None) => Array::zeros(it.dtype, &it.shape)?,
            (Owner::Callee(a), Some(_)) => {
                let buf = buffers.iter().find(|(p, _)| p == a).and_then(|(_, b)| b.clone());
                let buf = buf.ok_or_else(|| Error::invalid_argument("lost a result buffer"))?;
                let off = it.data - buf.as_ptr() as usize;
                // SAFETY: the buffer spans the union of the extents of its
                // allocation's results (computed above with overflow checks),
                // so this result's elements lie inside it; its data is aligned
                // (checked above) and its shape fits `isize` (`byte_extent`).
                unsafe { Array::from_parts(it.dtype, it.shape, it.strides, off, buf) }
            }
            (Owner::Input(k), Some(_)) => {
                let src = inputs[*k].array;
                match src.buffer() {
                    Some(buf) => {
                        let off = it.data - buf.as_ptr() as usize;
                        Array::from_buffer(it.dtype, &it.shape, Some(&it.strides), buf.clone(), off)?
                    }
                    None => {
                        let base = src.storage_ptr();
                        // SAFETY: the input's storage is borrowed for the call and valid.
                        let bytes = unsafe { std::slice::from_raw_parts(base, src.storage_len()) };
                        Array::from_bytes(it.dtype, &it.shape, Some(&it.strides), bytes, it.data - base as usize)?
                            .to_contiguous()?
                    }
                }
            }
            (Owner::Static, Some((lo, hi))) => {
                // SAFETY: static memory of the library (caller contract), valid while it is loaded.
                let bytes = unsafe { std::slice::from_raw_parts(lo as *const u8, hi - lo) };
                Array::from_bytes(it.dtype, &it.shape, Some(&it.strides), bytes, it.data - lo)?.to_contiguous()?
            }
        };
        put(i, arr);
    }
    Ok(())
}
