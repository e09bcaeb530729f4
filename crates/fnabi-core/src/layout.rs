//! Layout conversion: copying the elements of a strided [`Array`] (any rank,
//! negative and zero strides) into another layout — a dense row-major or
//! column-major buffer, or any non-overlapping strided destination — at
//! close to `memcpy` speed.
//!
//! A copy is planned once: dims of extent 1 are dropped, dims are ordered by
//! the destination's strides (reversing those that run backwards), and dims
//! that are contiguous in both source and destination are merged. The
//! innermost dim then picks a kernel:
//!
//! | source along the innermost dim | kernel |
//! | --- | --- |
//! | contiguous (the whole copy merges to one dim) | one `memcpy` |
//! | contiguous | one `memcpy` per row |
//! | stride 0 (broadcast) | fill a row with one element |
//! | another dim is contiguous, this one is far apart | tile transpose: 4-byte elements in 16×16 AVX-512 register tiles (each cache line read and written once, whole) when the CPU has AVX-512F, else cache-blocked 32×32 tiles of SSE 4×4 (4-byte) / 2×2 (8-byte) transposes, scalar tiles for 1- and 2-byte elements |
//! | small stride (`a[:, ::2]`) | strided gather (AVX-512 / SSE de-interleave for 4-byte stride 2; constant-stride loops the compiler vectorizes for strides 2–4) |
//! | anything else | element loop |
//!
//! Outer dims of stride 0 are produced once and then duplicated with
//! `memcpy`. Outputs of [`NON_TEMPORAL_THRESHOLD`] bytes or more are written
//! with non-temporal stores where the kernel has them, as `memcpy` does for
//! large copies. Element sizes 1, 2, 4 and 8 bytes are supported (every
//! [`DType`]).
//!
//! ```
//! use fnabi_core::{Array, DimOrder, layout};
//! let a = Array::from_vec(&[2, 3], vec![1u16, 2, 3, 4, 5, 6]).unwrap();
//! let t = a.permuted(&[1, 0]).unwrap(); // 3x2 view, not contiguous
//! let dense = layout::to_dense(&t, DimOrder::RowMajor).unwrap();
//! assert_eq!(dense.as_slice::<u16>().unwrap(), &[1, 4, 2, 5, 3, 6]);
//! let fortran = layout::to_dense(&t, DimOrder::ColumnMajor).unwrap();
//! assert!(fortran.is_f_contiguous());
//! assert_eq!(fortran.to_vec::<u16>().unwrap(), [1, 4, 2, 5, 3, 6]);
//! ```

use crate::array::{Array, DimVec, HostBuffer, c_strides, element_count, f_strides};
use crate::error::Error;
use fnabi_abi::raw::DimOrder;
use fnabi_abi::scalar::{DType, ScalarType};
use std::sync::Arc;

/// Outputs of at least this many bytes are written with non-temporal
/// (streaming) stores where a kernel supports them, bypassing the caches as
/// `memcpy` does for large copies.
pub const NON_TEMPORAL_THRESHOLD: usize = 8 << 20;

/// Tile edge (in elements) of the blocked transpose: a 32×32 tile of 8-byte
/// elements is 8 KiB of source and 8 KiB of destination, well inside L1.
const TILE: usize = 32;

/// Strides (in elements) of a dense array of `shape` in `order`.
pub fn dense_strides(shape: &[usize], order: DimOrder) -> DimVec<isize> {
    match order {
        DimOrder::RowMajor => c_strides(shape),
        DimOrder::ColumnMajor => f_strides(shape),
    }
}

/// A dense copy of `src` in `order`, in fresh memory (64-byte aligned; from
/// [`HUGE_PAGE_THRESHOLD`](crate::array::HUGE_PAGE_THRESHOLD) bytes up a
/// huge-page-advised mapping).
pub fn to_dense(src: &Array<'_>, order: DimOrder) -> Result<Array<'static>, Error> {
    let n = element_count(src.shape())?;
    let bytes = n.checked_mul(src.dtype().size()).ok_or_else(|| too_large(src.shape()))?;
    let buf = Arc::new(HostBuffer::zeroed(bytes)?);
    let strides = dense_strides(src.shape(), order);
    let mut out = Array::from_buffer(src.dtype(), src.shape(), Some(&strides), buf, 0)?;
    copy(src, &mut out)?;
    Ok(out)
}

/// Array methods that run the conversion kernels (here, so that `array`
/// stays below `layout`).
impl Array<'_> {
    /// A dense, row-major copy into fresh memory.
    pub fn to_contiguous(&self) -> Result<Array<'static>, Error> {
        to_dense(self, DimOrder::RowMajor)
    }
}

/// Copies `src` densely in `order` into `dst`, which must be exactly
/// `src.nbytes()` long and aligned for the element type.
///
/// ```
/// use fnabi_core::{Array, DimOrder, layout};
/// let a = Array::from_vec(&[2, 2], vec![1u8, 2, 3, 4]).unwrap();
/// let mut out = [0u8; 4];
/// layout::copy_to_slice(&a, DimOrder::ColumnMajor, &mut out).unwrap();
/// assert_eq!(out, [1, 3, 2, 4]);
/// assert!(layout::copy_to_slice(&a, DimOrder::RowMajor, &mut [0u8; 3]).is_err());
/// ```
pub fn copy_to_slice(src: &Array<'_>, order: DimOrder, dst: &mut [u8]) -> Result<(), Error> {
    if dst.len() != src.nbytes() {
        return Err(Error::mismatch(
            format!("destination bytes for a dense copy of {}{:?}", src.dtype(), src.shape()),
            src.nbytes().to_string(),
            dst.len().to_string(),
        ));
    }
    if src.is_empty() {
        return Ok(());
    }
    let strides = dense_strides(src.shape(), order);
    let mut out = Array::from_mut_bytes(src.dtype(), src.shape(), Some(&strides), dst, 0)?;
    copy(src, &mut out)
}

/// Copies the elements of `src` into `dst` (same dtype and shape; `dst`
/// writable, with any strides that do not make two of its elements
/// overlap).
///
/// ```
/// use fnabi_core::{Array, DType, layout};
/// let src = Array::from_vec(&[3], vec![1.0f64, 2.0, 3.0]).unwrap();
/// let mut dst = Array::zeros(DType::F64, &[3]).unwrap();
/// layout::copy(&src.restrided(&[3], &[-1], 16).unwrap(), &mut dst).unwrap();
/// assert_eq!(dst.to_vec::<f64>().unwrap(), [3.0, 2.0, 1.0]);
/// ```
pub fn copy(src: &Array<'_>, dst: &mut Array<'_>) -> Result<(), Error> {
    check_pair(src, dst, false)?;
    let es = src.dtype().size();
    let dst_ptr = dst.as_mut_ptr()?;
    // SAFETY: both arrays were bounds-checked at construction, so every
    // offset the copy forms (index within shape × stride) lies inside their
    // storages; `dst` is uniquely writable (as_mut_ptr checked it) and thus
    // cannot share memory with `src`; `check_pair` rejected a destination
    // whose elements overlap each other.
    unsafe { strided_copy(src.as_ptr(), src.strides(), dst_ptr, dst.strides(), src.shape(), es) };
    Ok(())
}

/// Copies `src` into `dst` converting each element to `dst`'s element type
/// (the oracle's opt-in cast). Conversions follow Rust's `as`: integers
/// wrap, floats round to nearest, float → integer truncates toward zero and
/// saturates (NaN → 0); `bool` reads as 0/1 and is written as `value != 0`;
/// float16/bfloat16 go through float32.
///
/// ```
/// use fnabi_core::{Array, DType, layout};
/// let src = Array::from_vec(&[3], vec![-1.5f32, 300.0, f32::NAN]).unwrap();
/// let mut dst = Array::zeros(DType::U8, &[3]).unwrap();
/// layout::cast_copy(&src, &mut dst).unwrap();
/// assert_eq!(dst.to_vec::<u8>().unwrap(), [0, 255, 0]);
/// ```
pub fn cast_copy(src: &Array<'_>, dst: &mut Array<'_>) -> Result<(), Error> {
    if src.dtype() == dst.dtype() {
        return copy(src, dst);
    }
    check_pair(src, dst, true)?;
    let (se, de) = (src.dtype().size(), dst.dtype().size());
    let s = byte_strides(src.strides(), se);
    let d = byte_strides(dst.strides(), de);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr()?);
    let (st, dt) = (src.dtype(), dst.dtype());
    // SAFETY: as in `copy`: every visited offset is inside the checked
    // extents of the two (distinct) arrays.
    unsafe {
        for_each_pair(src.shape(), &s, &d, |so, doff| {
            write_num(dt, dp.offset(doff), read_num(st, sp.offset(so)));
        })
    };
    Ok(())
}

fn too_large(shape: &[usize]) -> Error {
    Error::invalid_argument(format!("array of shape {shape:?} is too large (size overflows)"))
}

fn byte_strides(strides: &[isize], es: usize) -> DimVec<isize> {
    // In range: the array's extent (checked at construction) bounds every
    // stride × element size for dims of extent > 1; dims of extent <= 1 are
    // never stepped, so wrapping there is harmless.
    strides.iter().map(|&s| s.wrapping_mul(es as isize)).collect()
}

fn check_pair(src: &Array<'_>, dst: &Array<'_>, cast: bool) -> Result<(), Error> {
    if !cast && src.dtype() != dst.dtype() {
        return Err(Error::mismatch(
            "element type of a layout copy (casting is explicit: use cast_copy)",
            dst.dtype().to_string(),
            src.dtype().to_string(),
        ));
    }
    if src.shape() != dst.shape() {
        return Err(Error::mismatch(
            "shape of a layout copy",
            format!("{:?}", dst.shape()),
            format!("{:?}", src.shape()),
        ));
    }
    if !non_overlapping(dst.shape(), dst.strides()) {
        return Err(Error::invalid_argument(format!(
            "destination strides {:?} for shape {:?} make elements overlap",
            dst.strides(),
            dst.shape()
        )));
    }
    Ok(())
}

/// True when no two indices of `shape` map to the same element under
/// `strides` — by the sufficient nesting test: sorted by |stride|, each
/// stride is at least the extent of the dims inside it. (Exotic
/// interleavings that happen not to overlap are rejected too.)
pub fn non_overlapping(shape: &[usize], strides: &[isize]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut dims: DimVec<(usize, usize)> =
        shape.iter().zip(strides).filter(|(n, _)| **n > 1).map(|(&n, &s)| (s.unsigned_abs(), n)).collect();
    dims.sort_unstable();
    let mut extent: usize = 1;
    for (s, n) in dims {
        if s < extent {
            return false;
        }
        // extent = s * (n - 1) + extent, saturating: a saturated extent makes
        // every larger stride fail the check, which is conservative.
        extent = s.saturating_mul(n - 1).saturating_add(extent);
    }
    true
}

// ---------------------------------------------------------------------------
// Planning
// ---------------------------------------------------------------------------

/// One dim of a copy: extent, source and destination strides in bytes.
#[derive(Clone, Copy, Debug)]
struct D3 {
    n: usize,
    s: isize,
    d: isize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    /// The innermost dim is contiguous on both sides: one memcpy per row.
    Rows,
    /// Source stride 0 along the innermost dim: repeat one element.
    Fill,
    /// Source dim `k` is contiguous while the innermost dim is far apart.
    Transpose { k: usize },
    /// Small source stride along the innermost dim, contiguous destination.
    Gather,
    /// Anything else: one element at a time.
    Elements,
}

/// The one strided-copy kernel: copies element `i` of `src` to element `i`
/// of `dst` for every index `i` of `shape`, where element `i` lies at
/// `Σ i·strides` elements of `es` bytes from the pointer (strides in
/// elements, as in [`Array`]; `es` ∈ {1, 2, 4, 8} runs the vector kernels,
/// other sizes fall back to byte copies). Picks memcpy of merged dense
/// runs, row copies, broadcast fills, gathers or tile transposes.
///
/// # Safety
/// Every such source element must be readable and every destination element
/// writable for `es` bytes; the destination elements must not overlap each
/// other nor the source.
pub unsafe fn strided_copy(
    src: *const u8,
    src_strides: &[isize],
    dst: *mut u8,
    dst_strides: &[isize],
    shape: &[usize],
    es: usize,
) {
    if shape.contains(&0) {
        return;
    }
    let src_strides = byte_strides(src_strides, es);
    let dst_strides = byte_strides(dst_strides, es);
    let mut src = src;
    let mut dst = dst;
    let mut dims: DimVec<D3> = DimVec::new();
    let mut total: usize = es;
    for ((&n, &s), &d) in shape.iter().zip(&src_strides).zip(&dst_strides) {
        if n == 1 {
            continue;
        }
        total = total.saturating_mul(n);
        if d < 0 {
            // Walk this dim backwards on both sides so the destination runs forward.
            let last = n as isize - 1;
            src = src.wrapping_offset(last * s);
            dst = dst.wrapping_offset(last * d);
            dims.push(D3 { n, s: -s, d: -d });
        } else {
            dims.push(D3 { n, s, d });
        }
    }
    // Order by destination stride, outermost (largest) first; ranks are small.
    for i in 1..dims.len() {
        let mut j = i;
        while j > 0 && dims[j - 1].d < dims[j].d {
            dims.swap(j - 1, j);
            j -= 1;
        }
    }
    // Merge dims that nest contiguously on both sides.
    let mut merged: DimVec<D3> = DimVec::new();
    for x in dims.into_iter().rev() {
        match merged.last_mut() {
            Some(inner)
                if Some(x.s) == inner.s.checked_mul(inner.n as isize)
                    && Some(x.d) == inner.d.checked_mul(inner.n as isize) =>
            {
                inner.n *= x.n;
            }
            _ => merged.push(x),
        }
    }
    merged.reverse();
    let dims = merged;
    if dims.is_empty() {
        // SAFETY: a single element (caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(src, dst, es) };
        return;
    }
    let last = dims.len() - 1;
    let inner = dims[last];
    let es_i = es as isize;
    let kernel = if !matches!(es, 1 | 2 | 4 | 8) || inner.d != es_i {
        Kernel::Elements
    } else if inner.s == es_i {
        Kernel::Rows
    } else if inner.s == 0 {
        Kernel::Fill
    } else if let Some(k) = (0..last).rev().find(|&k| dims[k].s == es_i && dims[k].n >= 4 && inner.s.abs() >= 64) {
        Kernel::Transpose { k }
    } else {
        Kernel::Gather
    };
    let nt = total >= NON_TEMPORAL_THRESHOLD;
    let ctx = Ctx { dims: &dims, kernel, es, nt };
    // Dims iterated around the kernel, outermost first.
    let outer: DimVec<usize> = (0..last).filter(|&i| !matches!(kernel, Kernel::Transpose { k } if k == i)).collect();
    // Destination bytes covered by dims i.. when they form a dense block.
    let mut dense_block: DimVec<Option<usize>> = smallvec::smallvec![None; dims.len() + 1];
    dense_block[dims.len()] = Some(es);
    for i in (0..dims.len()).rev() {
        dense_block[i] = dense_block[i + 1].filter(|&b| dims[i].d as usize == b).and_then(|b| b.checked_mul(dims[i].n));
    }
    let first_kernel_dim = match kernel {
        Kernel::Transpose { k } => k,
        _ => last,
    };
    // SAFETY: forwarded caller contract.
    unsafe { run(&ctx, &outer, &dense_block, first_kernel_dim, src, dst) };
    #[cfg(target_arch = "x86_64")]
    if nt {
        // SAFETY: SSE is baseline on x86-64; orders the streaming stores.
        unsafe { std::arch::x86_64::_mm_sfence() };
    }
}

struct Ctx<'a> {
    dims: &'a [D3],
    kernel: Kernel,
    es: usize,
    nt: bool,
}

/// Iterates the outer dims recursively (depth = number of dims of extent
/// above 1, at most 64 for any array whose element count fits a `usize`),
/// duplicating the destination block of a broadcast dim instead of
/// recomputing it.
///
/// # Safety
/// As `strided_copy`.
unsafe fn run(
    ctx: &Ctx<'_>,
    outer: &[usize],
    dense_block: &[Option<usize>],
    first_kernel_dim: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let Some((&i, rest)) = outer.split_first() else {
        // SAFETY: forwarded.
        unsafe { kernel(ctx, src, dst) };
        return;
    };
    let D3 { n, s, d } = ctx.dims[i];
    if s == 0 && i < first_kernel_dim && dense_block[i].is_some() {
        let block = d as usize;
        // Broadcast: compute one block, then copy it.
        // SAFETY: forwarded; the copies stay in the destination block of dim i.
        unsafe {
            run(ctx, rest, dense_block, first_kernel_dim, src, dst);
            // Streaming stores of the block must be visible before it is read back.
            #[cfg(target_arch = "x86_64")]
            if ctx.nt {
                std::arch::x86_64::_mm_sfence();
            }
            for t in 1..n {
                std::ptr::copy_nonoverlapping(dst, dst.offset(t as isize * d), block);
            }
        }
        return;
    }
    for t in 0..n as isize {
        // SAFETY: forwarded; offsets stay inside the caller's extents.
        unsafe {
            run(ctx, rest, dense_block, first_kernel_dim, src.wrapping_offset(t * s), dst.wrapping_offset(t * d))
        };
    }
}

/// # Safety
/// As `strided_copy`.
unsafe fn kernel(ctx: &Ctx<'_>, src: *const u8, dst: *mut u8) {
    let inner = ctx.dims[ctx.dims.len() - 1];
    // SAFETY (all arms): forwarded caller contract.
    unsafe {
        match ctx.kernel {
            Kernel::Rows => std::ptr::copy_nonoverlapping(src, dst, inner.n * ctx.es),
            Kernel::Elements => match ctx.es {
                1 => elements::<u8>(src, inner.s, dst, inner.d, inner.n),
                2 => elements::<u16>(src, inner.s, dst, inner.d, inner.n),
                4 => elements::<u32>(src, inner.s, dst, inner.d, inner.n),
                8 => elements::<u64>(src, inner.s, dst, inner.d, inner.n),
                es => {
                    for t in 0..inner.n as isize {
                        std::ptr::copy_nonoverlapping(src.offset(t * inner.s), dst.offset(t * inner.d), es);
                    }
                }
            },
            Kernel::Fill => match ctx.es {
                1 => fill::<u8>(src, dst, inner.n),
                2 => fill::<u16>(src, dst, inner.n),
                4 => fill::<u32>(src, dst, inner.n),
                _ => fill::<u64>(src, dst, inner.n),
            },
            Kernel::Gather => match ctx.es {
                1 => gather::<u8>(src, inner.s, dst, inner.n),
                2 => gather::<u16>(src, inner.s, dst, inner.n),
                4 => gather_u32(src, inner.s, dst, inner.n, ctx.nt),
                _ => gather::<u64>(src, inner.s, dst, inner.n),
            },
            Kernel::Transpose { k } => {
                let p = ctx.dims[k];
                let t = Tile { p: p.n, q: inner.n, src_q: inner.s, dst_p: p.d };
                match ctx.es {
                    1 => transpose_scalar::<u8>(&t, src, dst),
                    2 => transpose_scalar::<u16>(&t, src, dst),
                    4 => transpose_u32(&t, src, dst, ctx.nt),
                    _ => transpose_u64(&t, src, dst, ctx.nt),
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Kernels. Element pointers may be unaligned when the caller's memory is
// (raw byte destinations), so all accesses are unaligned loads/stores, which
// cost nothing extra on the targets fnabi runs on.
// ---------------------------------------------------------------------------

/// # Safety
/// `n` elements at `src + t·s` readable, at `dst + t·d` writable.
#[inline]
unsafe fn elements<T: Copy>(src: *const u8, s: isize, dst: *mut u8, d: isize, n: usize) {
    for t in 0..n as isize {
        // SAFETY: caller contract.
        unsafe { dst.offset(t * d).cast::<T>().write_unaligned(src.offset(t * s).cast::<T>().read_unaligned()) };
    }
}

/// # Safety
/// One element at `src` readable, `n` contiguous elements at `dst` writable.
#[inline]
unsafe fn fill<T: Copy>(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: caller contract.
    unsafe {
        let v = src.cast::<T>().read_unaligned();
        let dst = dst.cast::<T>();
        for t in 0..n {
            dst.add(t).write_unaligned(v);
        }
    }
}

/// Strided row gather into a contiguous row; constant small strides are
/// specialized so that the compiler vectorizes them.
///
/// # Safety
/// `n` elements at `src + t·s` readable, `n` contiguous elements at `dst` writable.
#[inline]
unsafe fn gather<T: Copy>(src: *const u8, s: isize, dst: *mut u8, n: usize) {
    let es = std::mem::size_of::<T>() as isize;
    // SAFETY: caller contract.
    unsafe {
        match s / es {
            2 if s % es == 0 => gather_const::<T, 2>(src.cast(), dst.cast(), n),
            3 if s % es == 0 => gather_const::<T, 3>(src.cast(), dst.cast(), n),
            4 if s % es == 0 => gather_const::<T, 4>(src.cast(), dst.cast(), n),
            _ => elements::<T>(src, s, dst, es, n),
        }
    }
}

/// # Safety
/// As `gather` with stride `S` elements.
#[inline]
unsafe fn gather_const<T: Copy, const S: usize>(src: *const T, dst: *mut T, n: usize) {
    for t in 0..n {
        // SAFETY: caller contract.
        unsafe { dst.add(t).write_unaligned(src.add(t * S).read_unaligned()) };
    }
}

/// 4-byte gather: SSE de-interleave (with streaming stores for large
/// outputs) for stride 2, else the generic gather.
///
/// # Safety
/// As `gather`.
#[inline]
unsafe fn gather_u32(src: *const u8, s: isize, dst: *mut u8, n: usize, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if s == 8 && n >= 32 && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked above); caller contract.
        unsafe { gather2_u32_avx512(src, dst, n, nt) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if s == 8 {
        use std::arch::x86_64::*;
        // SAFETY: SSE/SSE2 are baseline on x86-64. Destination element t
        // comes from source element 2t; a vector step at t reads source
        // elements 2t..=2t+7, and running it only while t + 4 < n keeps
        // 2t + 7 <= 2(n-1) - 1, inside the row's checked extent.
        unsafe {
            let mut t = 0usize;
            if nt {
                // Scalar head up to a 16-byte aligned destination.
                while t < n && !(dst.add(t * 4) as usize).is_multiple_of(16) {
                    dst.add(t * 4).cast::<u32>().write_unaligned(src.add(t * 8).cast::<u32>().read_unaligned());
                    t += 1;
                }
            }
            while t + 4 < n {
                let a = _mm_loadu_ps(src.add(t * 8).cast());
                let b = _mm_loadu_ps(src.add(t * 8 + 16).cast());
                let v = _mm_shuffle_ps::<0b10_00_10_00>(a, b);
                if nt {
                    _mm_stream_ps(dst.add(t * 4).cast(), v);
                } else {
                    _mm_storeu_ps(dst.add(t * 4).cast(), v);
                }
                t += 4;
            }
            while t < n {
                dst.add(t * 4).cast::<u32>().write_unaligned(src.add(t * 8).cast::<u32>().read_unaligned());
                t += 1;
            }
        }
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = nt;
    // SAFETY: caller contract.
    unsafe { gather::<u32>(src, s, dst, n) }
}

/// 4-byte stride-2 gather with AVX-512: two source lines in, one whole
/// destination line out (a streaming store when `nt`).
///
/// # Safety
/// As `gather` with a stride of 2 elements; the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gather2_u32_avx512(src: *const u8, dst: *mut u8, n: usize, nt: bool) {
    use std::arch::x86_64::*;
    let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    let mut t = 0usize;
    // SAFETY (whole body): destination element t comes from source element
    // 2t, and the caller guarantees elements 0, 2, …, 2(n-1). A vector step
    // at t reads source elements 2t..=2t+31; running it only while
    // t + 16 < n keeps 2t + 31 <= 2(n-1) - 1, inside the row's extent (the
    // odd elements in between belong to the same checked extent).
    unsafe {
        if nt {
            while t < n && !(dst.add(t * 4) as usize).is_multiple_of(64) {
                dst.add(t * 4).cast::<u32>().write_unaligned(src.add(t * 8).cast::<u32>().read_unaligned());
                t += 1;
            }
        }
        while t + 16 < n {
            let a = _mm512_loadu_ps(src.add(t * 8).cast());
            let b = _mm512_loadu_ps(src.add(t * 8 + 64).cast());
            let v = _mm512_permutex2var_ps(a, even, b);
            if nt {
                _mm512_stream_ps(dst.add(t * 4).cast(), v);
            } else {
                _mm512_storeu_ps(dst.add(t * 4).cast(), v);
            }
            t += 16;
        }
        while t < n {
            dst.add(t * 4).cast::<u32>().write_unaligned(src.add(t * 8).cast::<u32>().read_unaligned());
            t += 1;
        }
    }
}

/// A 2-D transpose problem: `dst[p·dst_p + q·es] = src[p·es + q·src_q]`
/// for `p < self.p`, `q < self.q` (byte strides).
struct Tile {
    p: usize,
    q: usize,
    src_q: isize,
    dst_p: isize,
}

/// Cache-blocked transpose, one element at a time inside a tile.
///
/// # Safety
/// Every `(p, q)` source and destination element of `t` is accessible.
unsafe fn transpose_scalar<T: Copy>(t: &Tile, src: *const u8, dst: *mut u8) {
    let es = std::mem::size_of::<T>() as isize;
    for pb in (0..t.p).step_by(TILE) {
        let pe = (pb + TILE).min(t.p);
        for qb in (0..t.q).step_by(TILE) {
            let qe = (qb + TILE).min(t.q);
            // SAFETY: caller contract (p < t.p, q < t.q).
            unsafe { tile_scalar::<T>(t, src, dst, es, pb..pe, qb..qe) };
        }
    }
}

/// # Safety
/// As `transpose_scalar`, for the given sub-ranges.
#[inline]
unsafe fn tile_scalar<T: Copy>(
    t: &Tile,
    src: *const u8,
    dst: *mut u8,
    es: isize,
    ps: std::ops::Range<usize>,
    qs: std::ops::Range<usize>,
) {
    for p in ps {
        let p = p as isize;
        for q in qs.clone() {
            let q = q as isize;
            // SAFETY: caller contract.
            unsafe {
                dst.offset(p * t.dst_p + q * es)
                    .cast::<T>()
                    .write_unaligned(src.offset(p * es + q * t.src_q).cast::<T>().read_unaligned())
            };
        }
    }
}

/// 4-byte transpose: tiles of 4×4 SSE in-register transposes; streaming
/// stores when `nt` and the destination rows are 16-byte aligned.
///
/// # Safety
/// As `transpose_scalar`.
unsafe fn transpose_u32(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if t.p >= 16 && t.q >= 16 && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked above); caller contract.
        unsafe { transpose_u32_avx512(t, src, dst, nt) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let aligned = (dst as usize).is_multiple_of(16) && t.dst_p % 16 == 0;
        let nt = nt && aligned;
        let (p4, q4) = (t.p & !3, t.q & !3);
        for pb in (0..p4).step_by(TILE) {
            let pe = (pb + TILE).min(p4);
            for qb in (0..q4).step_by(TILE) {
                let qe = (qb + TILE).min(q4);
                let mut p = pb;
                while p < pe {
                    let mut q = qb;
                    while q < qe {
                        // SAFETY: SSE is baseline on x86-64; p + 3 < t.p and
                        // q + 3 < t.q, so all 16 elements are in the problem.
                        unsafe {
                            let s = src.offset(p as isize * 4 + q as isize * t.src_q);
                            let mut r0 = _mm_loadu_ps(s.cast());
                            let mut r1 = _mm_loadu_ps(s.offset(t.src_q).cast());
                            let mut r2 = _mm_loadu_ps(s.offset(2 * t.src_q).cast());
                            let mut r3 = _mm_loadu_ps(s.offset(3 * t.src_q).cast());
                            _MM_TRANSPOSE4_PS(&mut r0, &mut r1, &mut r2, &mut r3);
                            let d = dst.offset(p as isize * t.dst_p + q as isize * 4);
                            if nt {
                                _mm_stream_ps(d.cast(), r0);
                                _mm_stream_ps(d.offset(t.dst_p).cast(), r1);
                                _mm_stream_ps(d.offset(2 * t.dst_p).cast(), r2);
                                _mm_stream_ps(d.offset(3 * t.dst_p).cast(), r3);
                            } else {
                                _mm_storeu_ps(d.cast(), r0);
                                _mm_storeu_ps(d.offset(t.dst_p).cast(), r1);
                                _mm_storeu_ps(d.offset(2 * t.dst_p).cast(), r2);
                                _mm_storeu_ps(d.offset(3 * t.dst_p).cast(), r3);
                            }
                        }
                        q += 4;
                    }
                    p += 4;
                }
            }
        }
        // SAFETY: the ragged edges are inside the problem.
        unsafe {
            tile_scalar::<u32>(t, src, dst, 4, 0..p4, q4..t.q);
            tile_scalar::<u32>(t, src, dst, 4, p4..t.p, 0..t.q);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = nt;
        // SAFETY: caller contract.
        unsafe { transpose_scalar::<u32>(t, src, dst) }
    }
}

/// 4-byte transpose with AVX-512: 16×16 in-register transposes, so that each
/// source cache line is read once, whole, and each destination line is
/// written once, whole (one streaming store when `nt` and the rows are
/// 64-byte aligned — no read-for-ownership, no partial lines).
///
/// # Safety
/// As `transpose_scalar`, and the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn transpose_u32_avx512(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    use std::arch::x86_64::*;
    let nt = nt && (dst as usize).is_multiple_of(64) && t.dst_p % 64 == 0;
    let (p16, q16) = (t.p & !15, t.q & !15);
    // Tile order. With streaming stores (outputs too large for the cache)
    // walk the source in order: reads stream, and every store is a whole
    // line that bypasses the cache anyway. With ordinary stores walk the
    // destination in order: its 16 rows advance together and the scattered
    // accesses are the loads, which are cheaper than scattered stores (a
    // store that misses reads the line first and later evicts it dirty).
    // 1024² f32: 252 -> 218 µs.
    let (tp, tq) = (p16 / 16, q16 / 16);
    for i in 0..tp * tq {
        let (p, q) = if nt { (i % tp * 16, i / tp * 16) } else { (i / tq * 16, i % tq * 16) };
        // SAFETY: p + 15 < t.p and q + 15 < t.q: all 256 elements are in
        // the problem (caller contract); AVX-512F is enabled.
        unsafe {
            let s = src.offset(p as isize * 4 + q as isize * t.src_q);
            let mut r = [_mm512_setzero_ps(); 16];
            for (i, v) in r.iter_mut().enumerate() {
                *v = _mm512_loadu_ps(s.offset(i as isize * t.src_q).cast());
            }
            transpose16(&mut r);
            let d = dst.offset(p as isize * t.dst_p + q as isize * 4);
            if nt {
                for (i, v) in r.iter().enumerate() {
                    _mm512_stream_ps(d.offset(i as isize * t.dst_p).cast(), *v);
                }
            } else {
                for (i, v) in r.iter().enumerate() {
                    _mm512_storeu_ps(d.offset(i as isize * t.dst_p).cast(), *v);
                }
            }
        }
    }
    // SAFETY: the ragged edges are inside the problem.
    unsafe {
        tile_scalar::<u32>(t, src, dst, 4, 0..p16, q16..t.q);
        tile_scalar::<u32>(t, src, dst, 4, p16..t.p, 0..t.q);
    }
}

/// Transposes a 16×16 block of 32-bit lanes held in 16 registers:
/// afterwards `r[j]` lane `i` is the old `r[i]` lane `j`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn transpose16(r: &mut [std::arch::x86_64::__m512; 16]) {
    use std::arch::x86_64::*;
    let mut t = [_mm512_setzero_ps(); 16];
    // 32-bit interleave of row pairs.
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // 64-bit interleave of pair pairs.
    for i in 0..4 {
        let (a, b, c, d) = (t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(c)));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(c)));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(b), _mm512_castps_pd(d)));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(b), _mm512_castps_pd(d)));
    }
    // 128-bit lanes: rows 0-3 with 4-7, 8-11 with 12-15.
    for h in 0..2 {
        for i in 0..4 {
            let (a, b) = (r[8 * h + i], r[8 * h + 4 + i]);
            t[8 * h + i] = _mm512_shuffle_f32x4::<0x88>(a, b);
            t[8 * h + 4 + i] = _mm512_shuffle_f32x4::<0xdd>(a, b);
        }
    }
    // 128-bit lanes again: rows 0-7 with 8-15.
    for i in 0..8 {
        let (a, b) = (t[i], t[8 + i]);
        r[i] = _mm512_shuffle_f32x4::<0x88>(a, b);
        r[8 + i] = _mm512_shuffle_f32x4::<0xdd>(a, b);
    }
}

/// 8-byte transpose: tiles of 2×2 SSE2 in-register transposes.
///
/// # Safety
/// As `transpose_scalar`.
unsafe fn transpose_u64(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let aligned = (dst as usize).is_multiple_of(16) && t.dst_p % 16 == 0;
        let nt = nt && aligned;
        let (p2, q2) = (t.p & !1, t.q & !1);
        for pb in (0..p2).step_by(TILE) {
            let pe = (pb + TILE).min(p2);
            for qb in (0..q2).step_by(TILE) {
                let qe = (qb + TILE).min(q2);
                let mut p = pb;
                while p < pe {
                    let mut q = qb;
                    while q < qe {
                        // SAFETY: SSE2 is baseline on x86-64; p + 1 < t.p and
                        // q + 1 < t.q.
                        unsafe {
                            let s = src.offset(p as isize * 8 + q as isize * t.src_q);
                            let a = _mm_loadu_si128(s.cast());
                            let b = _mm_loadu_si128(s.offset(t.src_q).cast());
                            let r0 = _mm_unpacklo_epi64(a, b);
                            let r1 = _mm_unpackhi_epi64(a, b);
                            let d = dst.offset(p as isize * t.dst_p + q as isize * 8);
                            if nt {
                                _mm_stream_si128(d.cast(), r0);
                                _mm_stream_si128(d.offset(t.dst_p).cast(), r1);
                            } else {
                                _mm_storeu_si128(d.cast(), r0);
                                _mm_storeu_si128(d.offset(t.dst_p).cast(), r1);
                            }
                        }
                        q += 2;
                    }
                    p += 2;
                }
            }
        }
        // SAFETY: the ragged edges are inside the problem.
        unsafe {
            tile_scalar::<u64>(t, src, dst, 8, 0..p2, q2..t.q);
            tile_scalar::<u64>(t, src, dst, 8, p2..t.p, 0..t.q);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = nt;
        // SAFETY: caller contract.
        unsafe { transpose_scalar::<u64>(t, src, dst) }
    }
}

// ---------------------------------------------------------------------------
// Element-wise walk and casts
// ---------------------------------------------------------------------------

/// Calls `f(src_offset, dst_offset)` (bytes) for every index of `shape`, in
/// row-major order.
///
/// # Safety
/// None by itself; callers dereference the offsets.
unsafe fn for_each_pair(shape: &[usize], s: &[isize], d: &[isize], mut f: impl FnMut(isize, isize)) {
    if shape.contains(&0) {
        return;
    }
    let rank = shape.len();
    let mut idx: DimVec<usize> = smallvec::smallvec![0; rank];
    let (mut so, mut doff) = (0isize, 0isize);
    loop {
        f(so, doff);
        let mut k = rank;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            so = so.wrapping_add(s[k]);
            doff = doff.wrapping_add(d[k]);
            if idx[k] < shape[k] {
                break;
            }
            so = so.wrapping_sub(s[k].wrapping_mul(shape[k] as isize));
            doff = doff.wrapping_sub(d[k].wrapping_mul(shape[k] as isize));
            idx[k] = 0;
        }
    }
}

/// An element value on its way through a cast.
#[derive(Clone, Copy)]
enum Num {
    F(f64),
    I(i128),
}

/// # Safety
/// `p` points to a readable element of type `t`.
unsafe fn read_num(t: DType, p: *const u8) -> Num {
    // SAFETY: caller contract.
    unsafe {
        match t {
            DType::Bool => Num::I(i128::from(p.read() != 0)),
            DType::Float8(f) => Num::F(f.to_f32(p.read()).into()),
            DType::Scalar(s) => match s {
                ScalarType::F32 => Num::F(f64::from(p.cast::<f32>().read_unaligned())),
                ScalarType::F16 => Num::F(p.cast::<half::f16>().read_unaligned().to_f64()),
                ScalarType::F64 => Num::F(p.cast::<f64>().read_unaligned()),
                ScalarType::BF16 => Num::F(p.cast::<half::bf16>().read_unaligned().to_f64()),
                ScalarType::I8 => Num::I(i128::from(p.cast::<i8>().read())),
                ScalarType::I16 => Num::I(i128::from(p.cast::<i16>().read_unaligned())),
                ScalarType::I32 => Num::I(i128::from(p.cast::<i32>().read_unaligned())),
                ScalarType::I64 => Num::I(i128::from(p.cast::<i64>().read_unaligned())),
                ScalarType::U8 => Num::I(i128::from(p.read())),
                ScalarType::U16 => Num::I(i128::from(p.cast::<u16>().read_unaligned())),
                ScalarType::U32 => Num::I(i128::from(p.cast::<u32>().read_unaligned())),
                ScalarType::U64 => Num::I(i128::from(p.cast::<u64>().read_unaligned())),
            },
        }
    }
}

/// # Safety
/// `p` points to a writable element of type `t`.
unsafe fn write_num(t: DType, p: *mut u8, v: Num) {
    macro_rules! conv {
        ($ty:ty) => {
            match v {
                Num::F(f) => f as $ty,
                Num::I(i) => i as $ty,
            }
        };
    }
    // SAFETY: caller contract.
    unsafe {
        match t {
            DType::Bool => p.write(u8::from(match v {
                Num::F(f) => f != 0.0,
                Num::I(i) => i != 0,
            })),
            // Beyond the format's range: its infinity, else NaN (as ml_dtypes casts).
            DType::Float8(f) => p.write(f.from_f64(conv!(f64)).or_else(|| f.from_f64(f64::NAN)).unwrap_or_default()),
            DType::Scalar(s) => match s {
                ScalarType::F32 => p.cast::<f32>().write_unaligned(conv!(f32)),
                ScalarType::F16 => p.cast::<half::f16>().write_unaligned(half::f16::from_f32(conv!(f32))),
                ScalarType::F64 => p.cast::<f64>().write_unaligned(conv!(f64)),
                ScalarType::BF16 => p.cast::<half::bf16>().write_unaligned(half::bf16::from_f32(conv!(f32))),
                ScalarType::I8 => p.cast::<i8>().write(conv!(i8)),
                ScalarType::I16 => p.cast::<i16>().write_unaligned(conv!(i16)),
                ScalarType::I32 => p.cast::<i32>().write_unaligned(conv!(i32)),
                ScalarType::I64 => p.cast::<i64>().write_unaligned(conv!(i64)),
                ScalarType::U8 => p.write(conv!(u8)),
                ScalarType::U16 => p.cast::<u16>().write_unaligned(conv!(u16)),
                ScalarType::U32 => p.cast::<u32>().write_unaligned(conv!(u32)),
                ScalarType::U64 => p.cast::<u64>().write_unaligned(conv!(u64)),
            },
        }
    }
}

#[cfg(test)]
mod tests;
