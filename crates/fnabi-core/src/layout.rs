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
//! | another dim is contiguous, this one is far apart | tile transpose: 4-byte elements in 16×16, 8-byte in 8×8 AVX-512 register tiles, 2-byte in 32×32 and 1-byte in 64×64 AVX-512BW blocks (each cache line read and written once, whole; tiles walked along diagonals) when the CPU has them, else cache-blocked 32×32 tiles of SSE 4×4 (4-byte) / 2×2 (8-byte) transposes, scalar tiles for 1- and 2-byte elements |
//! | small stride (`a[:, ::2]`) | strided gather (AVX-512 / SSE de-interleave for 4-byte stride 2; constant-stride loops the compiler vectorizes for strides 2–4) |
//! | anything else | element loop |
//!
//! Outer dims of stride 0 are produced once and then duplicated with
//! `memcpy`. Outputs of [`non_temporal_threshold`] bytes or more are
//! written with non-temporal stores where the kernel has them, as `memcpy`
//! does for large copies. Element sizes 1, 2, 4 and 8 bytes are supported (every
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

mod cache;
mod kernels;

use kernels::kernel;

/// The largest [`non_temporal_threshold`] on any CPU: outputs of this many
/// bytes or more are always written with non-temporal (streaming) stores
/// where a kernel supports them, bypassing the caches as `memcpy` does for
/// large copies.
pub const NON_TEMPORAL_CEILING: usize = 8 << 20;

/// The smallest [`non_temporal_threshold`] on any CPU: smaller outputs
/// never stream, and converting one never reads the cache size.
const NON_TEMPORAL_FLOOR: usize = 1 << 20;

/// Outputs of at least this many bytes are written with non-temporal
/// stores where a kernel supports them: half the last-level cache the
/// system reports for CPU 0 (an output that large and its source fill that
/// cache, so ordinary stores would only evict one with the other and read
/// each output line before writing it), between 1 MiB and
/// [`NON_TEMPORAL_CEILING`]; the ceiling where the system does not say
/// (outside Linux). Read once per process. Threads that convert at the
/// same time share the cache, which this does not count.
///
/// ```
/// use fnabi_core::layout::{NON_TEMPORAL_CEILING, non_temporal_threshold};
/// assert!((1 << 20..=NON_TEMPORAL_CEILING).contains(&non_temporal_threshold()));
/// ```
pub fn non_temporal_threshold() -> usize {
    match cache::last_level_cache_bytes() {
        Some(bytes) => (bytes / 2).clamp(NON_TEMPORAL_FLOOR, NON_TEMPORAL_CEILING),
        None => NON_TEMPORAL_CEILING,
    }
}

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
    // (Small outputs are decided without the threshold, whose first use
    // reads the cache size from the system.)
    let nt = total >= NON_TEMPORAL_FLOOR && total >= non_temporal_threshold();
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
    /// A complex number (re, im); to a real type its real part goes, as
    /// numpy's `astype` does.
    C(f64, f64),
}

/// # Safety
/// `p` points to a readable element of type `t`.
unsafe fn read_num(t: DType, p: *const u8) -> Num {
    // SAFETY: caller contract.
    unsafe {
        match t {
            DType::Bool => Num::I(i128::from(p.read() != 0)),
            DType::Float8(f) => Num::F(f.to_f32(p.read()).into()),
            DType::C64 => {
                let c = p.cast::<fnabi_abi::Complex<f32>>().read_unaligned();
                Num::C(c.re.into(), c.im.into())
            }
            DType::C128 => {
                let c = p.cast::<fnabi_abi::Complex<f64>>().read_unaligned();
                Num::C(c.re, c.im)
            }
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
                Num::F(f) | Num::C(f, _) => f as $ty,
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
                Num::C(re, im) => re != 0.0 || im != 0.0,
            })),
            DType::C64 => {
                let im = if let Num::C(_, im) = v { im as f32 } else { 0.0 };
                p.cast::<fnabi_abi::Complex<f32>>().write_unaligned(fnabi_abi::Complex::new(conv!(f32), im))
            }
            DType::C128 => {
                let im = if let Num::C(_, im) = v { im } else { 0.0 };
                p.cast::<fnabi_abi::Complex<f64>>().write_unaligned(fnabi_abi::Complex::new(conv!(f64), im))
            }
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
