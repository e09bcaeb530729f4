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

/// A ranked memref descriptor with a rank known at compile time, laid out
/// exactly as MLIR's C interface expects (`8 * (3 + 2N)` bytes).
///
/// ```
/// use fnabi_mlir::memref::MemRefDescriptor;
/// use fnabi_core::Array;
/// let a = Array::from_vec(&[2, 3], vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
/// let d = MemRefDescriptor::<f32, 2>::from_array(&a).unwrap();
/// assert_eq!((d.sizes, d.strides, d.offset), ([2, 3], [3, 1], 0));
/// assert_eq!(d.linear_index(&[1, 2]).unwrap(), 5);
/// assert!(d.linear_index(&[2, 0]).is_err());
/// assert_eq!(std::mem::size_of::<MemRefDescriptor<f32, 2>>(), 56);
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct MemRefDescriptor<T, const N: usize> {
    /// The pointer to free (for callee-allocated memory); not used for access.
    pub allocated: *mut T,
    /// The pointer that element addresses are computed from.
    pub aligned: *mut T,
    /// Offset of element `[0, …, 0]` from `aligned`, in elements.
    pub offset: i64,
    /// Extents.
    pub sizes: [i64; N],
    /// Strides in elements.
    pub strides: [i64; N],
}

impl<T, const N: usize> Clone for MemRefDescriptor<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const N: usize> Copy for MemRefDescriptor<T, N> {}

impl<T: Element, const N: usize> MemRefDescriptor<T, N> {
    /// Describes `array` as it is (any strides, the offset taken from the
    /// array's position in its storage): right for a `strided<[?…], offset: ?>`
    /// parameter. For other memref types use [`fill_descriptor`], which
    /// checks that the array fits the type.
    ///
    /// The descriptor borrows the array's memory: it is valid while the array is.
    pub fn from_array(array: &Array<'_>) -> Result<Self, Error> {
        let ty = MemRefType {
            element: ElementType::Scalar(match T::DTYPE {
                DType::Scalar(s) => s,
                DType::Bool => return Self::from_bool_array(array),
                // No Rust element type is an 8-bit float (Element is sealed).
                DType::Float8(f) => return Err(Error::invalid_argument(format!("no Rust element type is {f}"))),
            }),
            dims: vec![Dim::Dynamic; N],
            layout: MemRefLayout::Strided { strides: vec![None; N], offset: None },
        };
        Self::fill(array, &ty)
    }

    fn from_bool_array(array: &Array<'_>) -> Result<Self, Error> {
        let ty = MemRefType {
            element: ElementType::I1,
            dims: vec![Dim::Dynamic; N],
            layout: MemRefLayout::Strided { strides: vec![None; N], offset: None },
        };
        Self::fill(array, &ty)
    }

    fn fill(array: &Array<'_>, ty: &MemRefType) -> Result<Self, Error> {
        let mut d = DynMemRef::new(N);
        if !fill_descriptor(array, ty, d.words_mut())? {
            // A fully dynamic strided type accepts every array.
            unreachable!("a dynamic strided layout fits any array");
        }
        let w = d.words();
        let mut out = MemRefDescriptor {
            allocated: w[0] as usize as *mut T,
            aligned: w[1] as usize as *mut T,
            offset: w[2],
            sizes: [0; N],
            strides: [0; N],
        };
        out.sizes.copy_from_slice(&w[3..3 + N]);
        out.strides.copy_from_slice(&w[3 + N..3 + 2 * N]);
        Ok(out)
    }
}

impl<T, const N: usize> MemRefDescriptor<T, N> {
    /// `offset + Σ index[i]·strides[i]`, with every index bounds-checked
    /// against `sizes` and the arithmetic overflow-checked.
    pub fn linear_index(&self, index: &[i64; N]) -> Result<i64, Error> {
        linear_index(self.offset, &self.sizes, &self.strides, index)
    }

    /// The same descriptor with a run-time rank.
    pub fn to_dyn(&self) -> DynMemRef {
        let mut d = DynMemRef::new(N);
        let w = d.words_mut();
        w[0] = self.allocated as usize as i64;
        w[1] = self.aligned as usize as i64;
        w[2] = self.offset;
        w[3..3 + N].copy_from_slice(&self.sizes);
        w[3 + N..].copy_from_slice(&self.strides);
        d
    }
}

/// An unranked memref: the rank and a pointer to a ranked descriptor.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct UnrankedMemRef {
    /// The rank of the descriptor pointed to.
    pub rank: i64,
    /// A ranked descriptor of that rank.
    pub descriptor: *mut c_void,
}

/// A ranked descriptor whose rank is known at run time: `3 + 2·rank` words
/// laid out exactly like the C struct, inline (no allocation) up to rank 6.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynMemRef {
    words: SmallVec<[i64; 15]>,
}

impl DynMemRef {
    /// A zeroed descriptor of `rank`.
    pub fn new(rank: usize) -> Self {
        DynMemRef { words: smallvec::smallvec![0; 3 + 2 * rank] }
    }

    /// Copies a descriptor of `rank` from memory.
    ///
    /// # Safety
    /// `ptr` must point to `3 + 2·rank` readable, 8-byte aligned words.
    pub unsafe fn read(ptr: *const c_void, rank: usize) -> Self {
        let n = 3 + 2 * rank;
        // SAFETY: the caller guarantees n readable aligned words at ptr.
        let words = unsafe { std::slice::from_raw_parts(ptr.cast::<i64>(), n) };
        DynMemRef { words: SmallVec::from_slice(words) }
    }

    /// Rank.
    pub fn rank(&self) -> usize {
        (self.words.len() - 3) / 2
    }

    /// The words, in C layout.
    pub fn words(&self) -> &[i64] {
        &self.words
    }

    /// The words, for filling.
    pub fn words_mut(&mut self) -> &mut [i64] {
        &mut self.words
    }

    /// Pointer to the C struct (valid while `self` is not moved or changed).
    pub fn as_ptr(&self) -> *const c_void {
        self.words.as_ptr().cast()
    }

    /// The `allocated` pointer.
    pub fn allocated(&self) -> usize {
        self.words[0] as usize
    }

    /// The `aligned` pointer.
    pub fn aligned(&self) -> usize {
        self.words[1] as usize
    }

    /// The offset in elements.
    pub fn offset(&self) -> i64 {
        self.words[2]
    }

    /// Extents.
    pub fn sizes(&self) -> &[i64] {
        &self.words[3..3 + self.rank()]
    }

    /// Strides in elements.
    pub fn strides(&self) -> &[i64] {
        &self.words[3 + self.rank()..]
    }

    /// `offset + Σ index[i]·strides[i]`, bounds- and overflow-checked.
    pub fn linear_index(&self, index: &[i64]) -> Result<i64, Error> {
        linear_index(self.offset(), self.sizes(), self.strides(), index)
    }
}

/// MLIR's index linearization, `offset + Σ index[i]·strides[i]`, with each
/// index checked against `0 ≤ index[i] < sizes[i]` and every step
/// overflow-checked.
///
/// ```
/// use fnabi_mlir::memref::linear_index;
/// assert_eq!(linear_index(10, &[4, 8], &[8, 1], &[3, 7]).unwrap(), 10 + 24 + 7);
/// assert_eq!(linear_index(0, &[4, 8], &[1, 4], &[1, 2]).unwrap(), 9); // column-major
/// assert!(linear_index(0, &[4], &[1], &[4]).is_err());
/// assert!(linear_index(0, &[4], &[1], &[-1]).is_err());
/// assert!(linear_index(i64::MAX, &[4], &[1], &[1]).is_err());
/// ```
pub fn linear_index(offset: i64, sizes: &[i64], strides: &[i64], index: &[i64]) -> Result<i64, Error> {
    if index.len() != sizes.len() || strides.len() != sizes.len() {
        return Err(Error::mismatch("memref index rank", sizes.len().to_string(), index.len().to_string()));
    }
    let mut at = offset;
    for (d, ((&i, &n), &s)) in index.iter().zip(sizes).zip(strides).enumerate() {
        if i < 0 || i >= n {
            return Err(Error::invalid_argument(format!(
                "index {index:?} is out of bounds in dim {d} of memref sizes {sizes:?}"
            )));
        }
        at = i
            .checked_mul(s)
            .and_then(|v| at.checked_add(v))
            .ok_or_else(|| Error::invalid_argument(format!("linear index of {index:?} overflows 64 bits")))?;
    }
    Ok(at)
}

/// An array that does not fit a memref type, as a [`CallError`] at the root
/// (the caller places it at its argument with [`CallError::locate`]).
#[cold]
fn misfit(kind: CallErrorKind) -> Error {
    CallError::argument(kind).into()
}

/// Checks that `array` can be an argument of memref type `ty` (element
/// type, rank, static dims: hard errors) and, if its layout fits, writes
/// the descriptor words (`3 + 2·rank`) into `out` and returns `true`.
/// Returns `false` when the array must first be converted
/// ([`convert_for`]): a non-dense array for an identity layout, a stride
/// other than a static one, an offset the static offset cannot reach.
///
/// The descriptor points into the array's storage (`allocated` = storage
/// start): it is valid while the array is.
#[inline]
pub fn fill_descriptor(array: &Array<'_>, ty: &MemRefType, out: &mut [i64]) -> Result<bool, Error> {
    if fill_identity_fast(array, ty, out) {
        return Ok(true);
    }
    fill_descriptor_general(array, ty, out)
}

/// The hot case of [`fill_descriptor`], small enough to inline: an identity
/// layout and a non-empty array that fits it exactly (element type, rank,
/// static dims, dense row-major). `false` means "ask the general path",
/// which decides (and explains) everything else.
#[inline(always)]
fn fill_identity_fast(array: &Array<'_>, ty: &MemRefType, out: &mut [i64]) -> bool {
    let rank = ty.dims.len();
    let shape = array.shape();
    let strides = array.strides();
    if !matches!(ty.layout, MemRefLayout::Identity)
        || array.dtype() != ty.element.dtype()
        || shape.len() != rank
        || out.len() != 3 + 2 * rank
    {
        return false;
    }
    let (head, dims) = out.split_at_mut(3);
    let (sizes_out, strides_out) = dims.split_at_mut(rank);
    let mut acc: i64 = 1;
    for i in (0..rank).rev() {
        let n = shape[i];
        let fixed = match ty.dims[i] {
            Dim::Static(s) => s as usize == n,
            Dim::Dynamic => true,
        };
        if n == 0 || !fixed || (n != 1 && strides[i] as i64 != acc) {
            return false;
        }
        sizes_out[i] = n as i64;
        strides_out[i] = acc;
        // Non-empty and validated: the element count fits in isize.
        acc = acc.wrapping_mul(n as i64);
    }
    let base = array.storage_ptr() as i64;
    head[0] = base;
    head[1] = base.wrapping_add(array.byte_offset() as i64);
    head[2] = 0;
    true
}

#[inline(never)]
fn fill_descriptor_general(array: &Array<'_>, ty: &MemRefType, out: &mut [i64]) -> Result<bool, Error> {
    let rank = ty.dims.len();
    if out.len() != 3 + 2 * rank {
        return Err(Error::invalid_argument(format!(
            "a rank-{rank} descriptor has {} words, not {}",
            3 + 2 * rank,
            out.len()
        )));
    }
    if array.dtype() != ty.element.dtype() {
        return Err(misfit(CallErrorKind::Dtype { expected: ty.element.dtype(), got: array.dtype() }));
    }
    let shape = array.shape();
    if shape.len() != rank {
        return Err(misfit(CallErrorKind::Rank { expected: rank, got: shape.len() }));
    }
    for (axis, (&d, &n)) in ty.dims.iter().zip(shape).enumerate() {
        if let Dim::Static(s) = d
            && s as usize != n
        {
            return Err(misfit(CallErrorKind::Dim { axis, expected: s as usize, got: n }));
        }
    }
    let strides = array.strides();
    let es = array.dtype().size();
    let base = array.storage_ptr() as usize;
    let byte_offset = array.byte_offset();
    let data = base + byte_offset;
    let (sizes_out, strides_out) = out[3..].split_at_mut(rank);
    match &ty.layout {
        MemRefLayout::Identity => {
            let empty = shape.contains(&0);
            let mut acc: i64 = 1;
            for i in (0..rank).rev() {
                let n = shape[i];
                if n != 1 && !empty && strides[i] as i64 != acc {
                    return Ok(false);
                }
                sizes_out[i] = n as i64;
                strides_out[i] = acc;
                // The element count fits in isize (checked when the array was built).
                acc = acc.wrapping_mul(n.max(1) as i64);
            }
            out[0] = base as i64;
            out[1] = data as i64;
            out[2] = 0;
        }
        MemRefLayout::Strided { strides: fixed, offset } => {
            for i in 0..rank {
                let s = match fixed[i] {
                    Some(f) if shape[i] > 1 && f != strides[i] as i64 => return Ok(false),
                    Some(f) => f,
                    None => strides[i] as i64,
                };
                sizes_out[i] = shape[i] as i64;
                strides_out[i] = s;
            }
            let (aligned, off) = match *offset {
                Some(o) => {
                    // The callee reads element [0…] at aligned + o·es: put
                    // aligned that far before the data, inside the storage.
                    let back = usize::try_from(o).ok().and_then(|o| o.checked_mul(es));
                    match back {
                        Some(b) if b <= byte_offset => (data - b, o),
                        _ => return Ok(false),
                    }
                }
                None if byte_offset.is_multiple_of(es) => (base, (byte_offset / es) as i64),
                None => (data, 0),
            };
            out[0] = base as i64;
            out[1] = aligned as i64;
            out[2] = off;
        }
    }
    Ok(true)
}

/// A copy of `array` in a layout that fits memref type `ty`: dense row-major
/// for an identity layout; for a strided one, the static strides (row- or
/// column-major where strides are dynamic) and room for a static offset.
pub fn convert_for(array: &Array<'_>, ty: &MemRefType) -> Result<Array<'static>, Error> {
    let MemRefLayout::Strided { strides: fixed, offset } = &ty.layout else {
        return array.to_contiguous();
    };
    let shape = array.shape();
    let rank = shape.len();
    let es = array.dtype().size();
    let fits = |cand: &[isize]| (0..rank).all(|i| shape[i] <= 1 || fixed[i].is_none_or(|f| f == cand[i] as i64));
    let strides: DimVec<isize> = if fixed.iter().all(Option::is_some) {
        fixed.iter().map(|f| f.map_or(0, |f| f as isize)).collect()
    } else {
        let c = fnabi_core::array::c_strides(shape);
        let f = fnabi_core::array::f_strides(shape);
        if fits(&c) {
            c
        } else if fits(&f) {
            f
        } else {
            return Err(Error::invalid_argument(format!(
                "cannot lay out a {shape:?} array for {ty}: its static strides are neither row- nor column-major"
            )));
        }
    };
    let (lo, hi) = byte_extent(shape, &strides, es)?.unwrap_or((0, 0));
    let lead = match offset {
        None => usize::try_from(-lo).unwrap_or(0),
        Some(o) => {
            let at = usize::try_from(*o).ok().and_then(|o| o.checked_mul(es)).filter(|&b| b as isize + lo >= 0);
            at.ok_or_else(|| {
                Error::invalid_argument(format!("cannot lay out a {shape:?} array for {ty}: offset {o} is too small"))
            })?
        }
    };
    let total = (lead as isize)
        .checked_add(hi)
        .and_then(|t| usize::try_from(t).ok())
        .ok_or_else(|| Error::invalid_argument(format!("a {shape:?} array for {ty} is too large")))?;
    let out = Array::zeros(array.dtype(), &[total / es.max(1) + 1])?;
    let buf = out.buffer().cloned().ok_or_else(|| Error::invalid_argument("fresh array has no buffer"))?;
    drop(out);
    let mut dst = Array::from_buffer(array.dtype(), shape, Some(&strides), buf, lead)?;
    let dst_ptr = dst.as_mut_ptr()?;
    // SAFETY: both arrays are validated views of `shape`; dst is freshly
    // allocated and uniquely held, so nothing else reads or writes it.
    unsafe { fnabi_core::layout::strided_copy(array.as_ptr(), array.strides(), dst_ptr, &strides, shape, es) };
    Ok(dst)
}

/// Copies the elements of `src` into the writable array `dst` of the same
/// dtype and shape (the write-back of a converted destination argument).
pub fn copy_into(src: &Array<'_>, dst: &mut Array<'_>) -> Result<(), Error> {
    if src.dtype() != dst.dtype() || src.shape() != dst.shape() {
        return Err(Error::mismatch(
            "copy destination",
            format!("{}{:?}", src.dtype(), src.shape()),
            format!("{}{:?}", dst.dtype(), dst.shape()),
        ));
    }
    let p = dst.as_mut_ptr()?;
    // SAFETY: both are validated views of the same shape; dst is writable
    // through a unique borrow, and src is a different (converted) storage.
    unsafe {
        fnabi_core::layout::strided_copy(src.as_ptr(), src.strides(), p, dst.strides(), src.shape(), src.dtype().size())
    };
    Ok(())
}

/// The memory of one memref argument, for recognising results that alias it.
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
/// One pass over the dims, no allocation up to rank 6 (the hot path of
/// adopting every memref result).
#[inline(always)]
pub(crate) fn describe_result(i: usize, dtype: DType, words: &[i64]) -> Result<ResultLayout, Error> {
    let es = dtype.size() as isize;
    let (head, dims) = words.split_at_checked(3).ok_or_else(|| bad_result(i, "fewer than 3 words"))?;
    let rank = dims.len() / 2;
    let (sizes, strides_in) = dims.split_at(rank);
    if sizes.len() != strides_in.len() {
        return Err(bad_result(i, format!("{} words are no ranked descriptor", words.len())));
    }
    let mut shape: DimVec<usize> =
        if rank <= 6 { SmallVec::from_buf_and_len([0; 6], rank) } else { smallvec::smallvec![0; rank] };
    let mut strides: DimVec<isize> =
        if rank <= 6 { SmallVec::from_buf_and_len([0; 6], rank) } else { smallvec::smallvec![0; rank] };
    // The extent [lo, hi) relative to element 0, as `byte_extent` computes
    // it; `fits` turns false on overflow (an error unless the array is empty).
    let (mut lo, mut hi, mut fits, mut empty) = (0isize, es, true, false);
    let mut count: usize = 1;
    for (k, (&n, &s)) in sizes.iter().zip(strides_in).enumerate() {
        if n < 0 {
            return Err(bad_result(i, format!("negative size {n}")));
        }
        shape[k] = n as usize;
        strides[k] = s as isize;
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
    if range.is_some() && !data.is_multiple_of(es as usize) {
        return Err(bad_result(i, format!("data at {data:#x} is not aligned to {es}-byte elements")));
    }
    Ok(ResultLayout { shape, strides, data, range })
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
/// `[lo, hi)`; it frees `allocated` with libc `free` when dropped.
///
/// # Safety
/// `allocated` came from libc `malloc`, is owned by the caller alone and is
/// not 0; `[lo, hi)` lies inside that allocation and `lo > 0`.
unsafe fn malloc_buffer(
    allocated: usize,
    lo: usize,
    hi: usize,
    keep_alive: Option<Arc<dyn std::any::Any + Send + Sync>>,
) -> HostBuffer {
    // SAFETY: both pointers are non-null and the memory is the caller's to
    // hand over (function contract).
    unsafe {
        HostBuffer::from_malloc(
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
/// ranges `[start, end)` of the arguments' storage.
///
/// # Safety
/// As for [`adopt_results`].
pub unsafe fn adopt_fresh_results(
    returned: &[(ElementType, DynMemRef)],
    inputs: &[(usize, usize)],
    static_ranges: &[(usize, usize)],
    keep_alive: Option<Arc<dyn std::any::Any + Send + Sync>>,
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
        let buf = unsafe { malloc_buffer(allocated, lo, hi, keep_alive.clone()) };
        // SAFETY: the buffer spans exactly the result's extent; its data is
        // aligned and its shape fits `isize` (`describe_result`).
        put(i, unsafe { Array::from_parts(dtype, shape, strides, data - lo, Arc::new(buf)) });
    }
    Ok(true)
}

/// [`adopt_fresh_results`] for a single descriptor, read in place from its
/// `3 + 2·rank` words (C layout) instead of a [`DynMemRef`] copy, and with
/// no error path: when the descriptor is valid and is a non-empty
/// allocation of the callee that lies in none of the `inputs` (the
/// arguments' storage, byte ranges `[start, end)`) and is no static memory,
/// the array owning it, boxed as a [`Value::Array`](crate::Value) holds it;
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
    keep_alive: Option<Arc<dyn std::any::Any + Send + Sync>>,
) -> Option<Box<Array<'static>>> {
    let dtype = elem.dtype();
    let layout = describe_result(0, dtype, words).ok()?;
    let (lo, hi) = layout.range?;
    let allocated = *words.first()? as usize;
    if touches_input(inputs, allocated, lo, hi) || is_static_memory(allocated, static_ranges) {
        return None;
    }
    if dtype == DType::Bool {
        // SAFETY: the callee's result addresses valid memory (caller contract).
        unsafe { check_result_bools(0, &layout) }.ok()?;
    }
    let ResultLayout { shape, strides, data, .. } = layout;
    // SAFETY: `allocated` is a callee allocation from libc malloc, ours now
    // (caller contract), not 0 and not static (checked above); [lo, hi) is
    // this result's extent (overflow-checked, lo > 0), inside it.
    let buf = unsafe { malloc_buffer(allocated, lo, hi, keep_alive) };
    // SAFETY: the buffer spans exactly the result's extent; its data is
    // aligned, its shape fits `isize` and its bools are 0 or 1
    // (`describe_result`, `check_result_bools`).
    Some(unsafe { Array::boxed_from_parts(dtype, shape, strides, data - lo, Arc::new(buf)) })
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
                Some(Arc::new(unsafe { malloc_buffer(a, lo, hi, keep_alive.clone()) }))
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

#[cfg(test)]
mod tests {
    use super::*;
    use fnabi_abi::scalar::ScalarType;

    fn ty(s: &str) -> MemRefType {
        match s.parse::<crate::MlirType>().unwrap() {
            crate::MlirType::MemRef(m) => m,
            _ => panic!(),
        }
    }

    fn fill(a: &Array<'_>, t: &str) -> Result<Option<Vec<i64>>, Error> {
        let t = ty(t);
        let mut w = vec![0; 3 + 2 * t.rank()];
        Ok(fill_descriptor(a, &t, &mut w)?.then_some(w))
    }

    #[test]
    fn identity_needs_dense_row_major() {
        let a = Array::from_vec(&[2, 3], (0..6).map(|x| x as f32).collect()).unwrap();
        let base = a.storage_ptr() as i64;
        assert_eq!(fill(&a, "memref<?x3xf32>").unwrap().unwrap(), vec![base, base, 0, 2, 3, 3, 1]);
        let t = a.permuted(&[1, 0]).unwrap();
        assert_eq!(fill(&t, "memref<?x?xf32>").unwrap(), None);
        assert_eq!(
            fill(&t, "memref<?x?xf32, strided<[?, ?], offset: ?>>").unwrap().unwrap(),
            vec![base, base, 0, 3, 2, 1, 3]
        );
        // A row of a bigger array: offset carried by the dynamic offset, or by `aligned`.
        let row = a.restrided(&[3], &[1], 12).unwrap();
        assert_eq!(fill(&row, "memref<3xf32>").unwrap().unwrap(), vec![base, base + 12, 0, 3, 1]);
        assert_eq!(fill(&row, "memref<3xf32, strided<[1], offset: ?>>").unwrap().unwrap(), vec![base, base, 3, 3, 1]);
        assert_eq!(
            fill(&row, "memref<3xf32, strided<[1], offset: 2>>").unwrap().unwrap(),
            vec![base, base + 4, 2, 3, 1]
        );
        assert_eq!(fill(&row, "memref<3xf32, strided<[1], offset: 4>>").unwrap(), None);
        assert_eq!(fill(&row, "memref<3xf32, strided<[2], offset: ?>>").unwrap(), None);
        // Extent-1 dims may have any stride.
        let col = a.restrided(&[2, 1], &[1, 7], 0).unwrap();
        assert!(fill(&col, "memref<2x1xf32>").unwrap().is_some());
        // Hard errors.
        let kind = |t: &str| match fill(&a, t).unwrap_err().into_kind() {
            fnabi_core::ErrorKind::Call(c) => c.kind,
            other => panic!("{other}"),
        };
        assert_eq!(kind("memref<?x4xf32>"), CallErrorKind::Dim { axis: 1, expected: 4, got: 3 });
        assert_eq!(kind("memref<?xf32>"), CallErrorKind::Rank { expected: 1, got: 2 });
        assert_eq!(kind("memref<?x?xi32>"), CallErrorKind::Dtype { expected: DType::I32, got: DType::F32 });
        let mut short = [0i64; 3];
        assert!(fill_descriptor(&a, &ty("memref<?x?xf32>"), &mut short).is_err());
    }

    #[test]
    fn conversions_fit_the_type() {
        let a = Array::from_vec(&[2, 3], (0..6).map(|x| x as i16).collect()).unwrap();
        let t = a.permuted(&[1, 0]).unwrap();
        for s in [
            "memref<3x2xi16>",
            "memref<3x2xi16, strided<[1, 3]>>",
            "memref<3x2xi16, strided<[?, 1], offset: 5>>",
            "memref<3x2xi16, strided<[1, ?]>>",
            "memref<3x2xi16, strided<[-2, 1], offset: 4>>",
        ] {
            let c = convert_for(&t, &ty(s)).unwrap();
            assert!(fill(&c, s).unwrap().is_some(), "{s}");
            assert_eq!(c.to_vec::<i16>().unwrap(), t.to_vec::<i16>().unwrap(), "{s}");
        }
        assert!(convert_for(&a, &ty("memref<2x3xi16, strided<[-3, 1], offset: 1>>")).is_err());
        assert!(
            convert_for(&a.restrided(&[2, 3, 1], &[3, 1, 1], 0).unwrap(), &ty("memref<2x3x1xi16, strided<[1, ?, 5]>>"))
                .is_ok()
        );
        let cube = Array::zeros(DType::I16, &[2, 3, 4]).unwrap();
        let e = convert_for(&cube, &ty("memref<2x3x4xi16, strided<[1, ?, 7]>>")).unwrap_err().to_string();
        assert!(e.contains("neither row- nor column-major"), "{e}");
    }

    #[test]
    fn write_back_copies_into_strided_destination() {
        let src = Array::from_vec(&[2, 2], vec![1u8, 2, 3, 4]).unwrap();
        let mut data = [0u8; 4];
        {
            let mut dst = Array::from_mut_slice(&[2, 2], &mut data).unwrap();
            let view = dst.restrided(&[2, 2], &[1, 2], 0).unwrap().to_contiguous().unwrap();
            assert_eq!(view.shape(), &[2, 2]);
            copy_into(&src, &mut dst).unwrap();
            assert!(copy_into(&src, &mut Array::zeros(DType::U8, &[4]).unwrap()).is_err());
        }
        assert_eq!(data, [1, 2, 3, 4]);
    }

    #[test]
    fn static_rank_and_dyn_agree() {
        let a = Array::from_vec(&[4], vec![true, false, true, true]).unwrap();
        let d = MemRefDescriptor::<bool, 1>::from_array(&a).unwrap();
        let dy = d.to_dyn();
        assert_eq!(dy.rank(), 1);
        assert_eq!(dy.sizes(), &[4]);
        assert_eq!(dy.linear_index(&[3]).unwrap(), 3);
        // SAFETY: `dy` holds 5 words.
        let back = unsafe { DynMemRef::read(dy.as_ptr(), 1) };
        assert_eq!(back, dy);
        assert_eq!(std::mem::size_of::<UnrankedMemRef>(), 16);
        assert!(linear_index(0, &[2], &[1], &[0, 0]).is_err());
        let _ = ScalarType::F32;
    }

    fn desc(allocated: usize, aligned: usize, offset: i64, sizes: &[i64], strides: &[i64]) -> DynMemRef {
        let mut d = DynMemRef::new(sizes.len());
        let w = d.words_mut();
        w[0] = allocated as i64;
        w[1] = aligned as i64;
        w[2] = offset;
        w[3..3 + sizes.len()].copy_from_slice(sizes);
        w[3 + sizes.len()..].copy_from_slice(strides);
        d
    }

    unsafe extern "C" {
        fn malloc(n: usize) -> *mut c_void;
    }

    #[test]
    fn adoption_shares_frees_once_and_copies_statics() {
        let f32e = ElementType::Scalar(ScalarType::F32);
        // Input alias: shares the input's buffer.
        let input = Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let base = input.storage_ptr() as usize;
        let inputs = [InputMemory { array: &input, allocated: base }];
        // SAFETY: the descriptors below describe memory of `input`, a static, or a malloc'ed block.
        let out = unsafe { adopt_results(&[(f32e, desc(base, base, 1, &[2], &[2]))], &inputs, &[], None) }.unwrap();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), [2.0, 4.0]);
        assert!(Arc::ptr_eq(out[0].buffer().unwrap(), input.buffer().unwrap()));
        // Borrowed input: copied.
        let data = [5i32, 6];
        let b = Array::from_slice(&[2], &data).unwrap();
        let bp = data.as_ptr() as usize;
        let inputs = [InputMemory { array: &b, allocated: bp }];
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let out = unsafe {
            adopt_results(&[(ElementType::Scalar(ScalarType::I32), desc(bp, bp, 0, &[2], &[1]))], &inputs, &[], None)
        }
        .unwrap();
        assert_eq!(out[0].to_vec::<i32>().unwrap(), [5, 6]);
        assert_ne!(out[0].as_ptr(), b.as_ptr());
        // Static memory: the sentinel, or inside a static range.
        static TABLE: [f32; 2] = [7.0, 8.0];
        let t = TABLE.as_ptr() as usize;
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let out = unsafe {
            adopt_results(
                &[(f32e, desc(GLOBAL_SENTINEL, t, 0, &[2], &[1])), (f32e, desc(t, t, 1, &[1], &[1]))],
                &[],
                &[(t, t + 8)],
                None,
            )
        }
        .unwrap();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), [7.0, 8.0]);
        assert_eq!(out[1].to_vec::<f32>().unwrap(), [8.0]);
        // Callee allocation returned twice: one buffer, freed once (valgrind checks).
        // SAFETY: a fresh 16-byte block, written before use.
        let p = unsafe { malloc(16) } as usize;
        unsafe { std::slice::from_raw_parts_mut(p as *mut f32, 4).copy_from_slice(&[1.0, 2.0, 3.0, 4.0]) };
        let keep: Arc<dyn std::any::Any + Send + Sync> = Arc::new(5u8);
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let out = unsafe {
            adopt_results(
                &[(f32e, desc(p, p, 0, &[4], &[1])), (f32e, desc(p, p, 2, &[2], &[1]))],
                &[],
                &[],
                Some(keep.clone()),
            )
        }
        .unwrap();
        assert!(Arc::ptr_eq(out[0].buffer().unwrap(), out[1].buffer().unwrap()));
        assert_eq!(out[1].to_vec::<f32>().unwrap(), [3.0, 4.0]);
        assert_eq!(Arc::strong_count(&keep), 2);
        drop(out);
        assert_eq!(Arc::strong_count(&keep), 1);
        // Empty callee result: freed at once.
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let p = unsafe { malloc(1) } as usize;
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let out = unsafe { adopt_results(&[(f32e, desc(p, p, 0, &[0], &[1]))], &[], &[], None) }.unwrap();
        assert_eq!(out[0].shape(), &[0]);
        // Invalid descriptors are errors.
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let e = unsafe { adopt_results(&[(f32e, desc(8, 8, 0, &[-1], &[1]))], &[], &[], None) }.unwrap_err();
        assert!(e.to_string().contains("negative size -1"), "{e}");
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let e = unsafe { adopt_results(&[(f32e, desc(8, 6, 0, &[1], &[1]))], &[], &[], None) }.unwrap_err();
        assert!(e.to_string().contains("not aligned"), "{e}");
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let e = unsafe { adopt_results(&[(f32e, desc(8, 8, i64::MAX, &[1], &[1]))], &[], &[], None) }.unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let e = unsafe { adopt_results(&[(f32e, desc(8, 8, 0, &[2], &[i64::MAX]))], &[], &[], None) }.unwrap_err();
        assert!(e.to_string().contains("invalid memref descriptor"), "{e}");
        let inputs = [InputMemory { array: &input, allocated: base }];
        // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
        let e = unsafe { adopt_results(&[(f32e, desc(base, base, 0, &[8], &[1]))], &inputs, &[], None) }.unwrap_err();
        assert!(e.to_string().contains("outside it"), "{e}");
    }
}
