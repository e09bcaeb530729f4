//! Arrays as memref arguments: [`fill_descriptor`] describes an array
//! without copying when its layout fits the type (and says why not when
//! it cannot), [`convert_for`] converts one that does not fit, and
//! [`copy_into`] writes a converted destination back.

use super::*;

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
