//! Host tensor ops on [`Array`], mirroring the flow dialect's tensor ops
//! (`flow.tensor.load/store/splat/slice/update/clone/reshape`): what a host
//! needs to build, inspect and patch arguments and results without a
//! device. Every index is bounds-checked; errors name the dim and the
//! values.
//!
//! ```
//! use fnabi_core::tensor;
//! let mut a = tensor::splat(&[3, 4], 0i32).unwrap();
//! tensor::store(&mut a, &[1, 2], 7).unwrap();
//! let s = tensor::slice(&a, &[1, 1], &[2, 3]).unwrap(); // rows 1-2, cols 1-3, no copy
//! assert_eq!(s.to_vec::<i32>().unwrap(), [0, 7, 0, 0, 0, 0]);
//! let r = tensor::reshape(&a, &[2, 6]).unwrap(); // a view: `a` is dense
//! assert_eq!(tensor::load::<i32>(&r, &[0, 6]).unwrap_err().to_string(),
//!            "invalid argument: index [0, 6] is out of bounds in dim 1 of shape [2, 6]");
//! assert_eq!(tensor::load::<i32>(&r, &[1, 0]).unwrap(), 7);
//! ```

use crate::array::{Array, DimVec, HostBuffer, c_strides, element_count};
use crate::error::Error;
use crate::layout::{non_overlapping, strided_copy};
use fnabi_abi::scalar::Element;
use std::sync::Arc;

/// `flow.tensor.load`: the element at `index`.
pub fn load<T: Element>(a: &Array<'_>, index: &[usize]) -> Result<T, Error> {
    a.get(index)
}

/// `flow.tensor.store`: writes `value` at `index` (the array must be
/// writable: uniquely owned or mutably borrowed).
pub fn store<T: Element>(a: &mut Array<'_>, index: &[usize], value: T) -> Result<(), Error> {
    if a.dtype() != T::DTYPE {
        return Err(Error::mismatch("element type of a stored value", a.dtype().to_string(), T::DTYPE.to_string()));
    }
    let off = a.element_offset(index)?;
    // The bytes of a T of the array's own dtype: a bool stays 0 or 1.
    let value = std::slice::from_ref(&value);
    let bytes = crate::array::bytes_of(value);
    a.storage_bytes_mut()?[off..off + bytes.len()].copy_from_slice(bytes);
    Ok(())
}

/// `flow.tensor.splat`: a new dense array of `shape` filled with `value`.
pub fn splat<T: Element>(shape: &[usize], value: T) -> Result<Array<'static>, Error> {
    let mut a = Array::zeros(T::DTYPE, shape)?;
    a.as_mut_slice::<T>()?.fill(value);
    Ok(a)
}

/// `flow.tensor.slice`: the sub-array at `offsets` of extents `sizes`, as a
/// zero-copy view.
pub fn slice<'a>(a: &'a Array<'_>, offsets: &[usize], sizes: &[usize]) -> Result<Array<'a>, Error> {
    let steps: DimVec<isize> = smallvec::smallvec![1; a.rank()];
    slice_strided(a, offsets, sizes, &steps)
}

/// A strided slice (MLIR's `subview`): along dim `d`, `sizes[d]` elements
/// starting at `offsets[d]`, `steps[d]` apart (negative steps walk
/// backwards from the offset). A zero-copy view.
///
/// ```
/// use fnabi_core::{Array, tensor};
/// let a = Array::from_vec(&[6], vec![0u8, 1, 2, 3, 4, 5]).unwrap();
/// assert_eq!(tensor::slice_strided(&a, &[1], &[3], &[2]).unwrap().to_vec::<u8>().unwrap(), [1, 3, 5]);
/// assert_eq!(tensor::slice_strided(&a, &[4], &[3], &[-2]).unwrap().to_vec::<u8>().unwrap(), [4, 2, 0]);
/// let e = tensor::slice_strided(&a, &[1], &[4], &[2]).unwrap_err().to_string();
/// assert_eq!(e, "invalid argument: slice of dim 0 (extent 6) from 1 by 4 with step 2 reaches index 7, out of bounds");
/// ```
pub fn slice_strided<'a>(
    a: &'a Array<'_>,
    offsets: &[usize],
    sizes: &[usize],
    steps: &[isize],
) -> Result<Array<'a>, Error> {
    for (what, len) in [("offsets", offsets.len()), ("sizes", sizes.len()), ("steps", steps.len())] {
        if len != a.rank() {
            return Err(Error::mismatch(format!("number of slice {what}"), a.rank().to_string(), len.to_string()));
        }
    }
    let es = a.dtype().size() as isize;
    let empty = sizes.contains(&0);
    let mut byte_offset = a.byte_offset() as isize;
    let mut strides: DimVec<isize> = DimVec::new();
    for d in 0..a.rank() {
        let (n, off, size, step) = (a.shape()[d], offsets[d], sizes[d], steps[d]);
        if step == 0 {
            return Err(Error::invalid_argument(format!("slice step of dim {d} is 0")));
        }
        let bad = |end: String| {
            Error::invalid_argument(format!(
                "slice of dim {d} (extent {n}) from {off} by {size} with step {step} reaches index {end}, out of bounds"
            ))
        };
        if size == 0 {
            if off > n {
                return Err(bad(off.to_string()));
            }
        } else {
            // The last index visited, overflow-checked.
            let span = (size as u128 - 1) * step.unsigned_abs() as u128;
            if step > 0 {
                let last = off as u128 + span;
                if last >= n as u128 {
                    return Err(bad(last.to_string()));
                }
            } else if off >= n || span > off as u128 {
                return Err(bad((off as i128 - span as i128).to_string()));
            }
        }
        // A dim of extent <= 1 is never stepped: its stride is irrelevant.
        let stride = if size <= 1 {
            a.strides()[d]
        } else {
            a.strides()[d].checked_mul(step).ok_or_else(|| bad(format!("{off} + {size} x {step} (stride overflow)")))?
        };
        strides.push(stride);
        // In bounds, so the offset stays within the array's checked extent.
        if !empty {
            byte_offset += off as isize * a.strides()[d] * es;
        }
    }
    a.restrided(sizes, &strides, byte_offset as usize)
}

/// `flow.tensor.update`: writes `update` into `target` at `offsets`
/// (same element type and rank; the update must fit).
///
/// ```
/// use fnabi_core::{Array, tensor};
/// let mut t = tensor::splat(&[3, 3], 0u8).unwrap();
/// tensor::update(&mut t, &Array::from_vec(&[2, 1], vec![5u8, 6]).unwrap(), &[1, 2]).unwrap();
/// assert_eq!(t.to_vec::<u8>().unwrap(), [0, 0, 0, 0, 0, 5, 0, 0, 6]);
/// ```
pub fn update(target: &mut Array<'_>, update: &Array<'_>, offsets: &[usize]) -> Result<(), Error> {
    if target.dtype() != update.dtype() {
        return Err(Error::mismatch(
            "element type of a tensor update",
            target.dtype().to_string(),
            update.dtype().to_string(),
        ));
    }
    if update.rank() != target.rank() || offsets.len() != target.rank() {
        return Err(Error::mismatch(
            "rank of a tensor update (update, offsets)",
            target.rank().to_string(),
            format!("{}, {}", update.rank(), offsets.len()),
        ));
    }
    for (d, ((&n, &off), &size)) in target.shape().iter().zip(offsets).zip(update.shape()).enumerate() {
        if off.checked_add(size).is_none_or(|end| end > n) {
            return Err(Error::invalid_argument(format!(
                "update of extent {size} at offset {off} does not fit dim {d} of extent {n}"
            )));
        }
    }
    if update.is_empty() {
        return Ok(());
    }
    if !non_overlapping(update.shape(), target.strides()) {
        return Err(Error::invalid_argument(format!(
            "target strides {:?} make the updated elements overlap",
            target.strides()
        )));
    }
    let es = target.dtype().size();
    let start: isize = offsets.iter().zip(target.strides()).map(|(&o, &s)| o as isize * s * es as isize).sum();
    let dst = target.as_mut_ptr()?;
    // SAFETY: the updated region (offset + index < extent in every dim) is
    // inside the target's checked extent; the target is uniquely writable
    // (so `update` cannot share its memory) and its updated elements do not
    // overlap each other; the source offsets are within `update`'s extent.
    unsafe { strided_copy(update.as_ptr(), update.strides(), dst.offset(start), target.strides(), update.shape(), es) };
    Ok(())
}

/// `flow.tensor.clone`: a dense, owned copy.
pub fn clone(a: &Array<'_>) -> Result<Array<'static>, Error> {
    a.to_contiguous()
}

/// `flow.tensor.reshape`: the elements in row-major order under a new
/// shape — a view of the same memory when the strides allow it (always for
/// dense arrays), otherwise a dense copy.
///
/// ```
/// use fnabi_core::{Array, tensor};
/// let a = Array::from_vec(&[2, 3], vec![1i16, 2, 3, 4, 5, 6]).unwrap();
/// let t = a.permuted(&[1, 0]).unwrap(); // not row-major: reshaping copies
/// let r = tensor::reshape(&t, &[6]).unwrap();
/// assert_eq!(r.to_vec::<i16>().unwrap(), [1, 4, 2, 5, 3, 6]);
/// assert_eq!(tensor::reshape(&a, &[4, 2]).unwrap_err().to_string(),
///            "element count of a reshape to [4, 2]: expected 6, got 8");
/// ```
pub fn reshape<'a>(a: &'a Array<'_>, shape: &[usize]) -> Result<Array<'a>, Error> {
    let n = element_count(shape)?;
    if n != a.len() {
        return Err(Error::mismatch(
            format!("element count of a reshape to {shape:?}"),
            a.len().to_string(),
            n.to_string(),
        ));
    }
    if let Some(strides) = view_strides(a.shape(), a.strides(), shape) {
        return a.restrided(shape, &strides, a.byte_offset());
    }
    let dense = a.to_contiguous()?;
    let buf: Arc<HostBuffer> = match dense.buffer() {
        Some(b) => b.clone(),
        None => return Err(Error::invalid_argument("a dense copy has no buffer")),
    };
    Array::from_buffer(a.dtype(), shape, None, buf, dense.byte_offset())
}

/// Strides that show an array of `old` shape/strides as `new` (same
/// element count) in row-major element order without copying; `None`
/// when the memory does not allow it.
fn view_strides(old: &[usize], old_strides: &[isize], new: &[usize]) -> Option<DimVec<isize>> {
    if new.contains(&0) {
        return Some(c_strides(new));
    }
    let od: DimVec<(usize, isize)> =
        old.iter().zip(old_strides).filter(|(n, _)| **n != 1).map(|(&n, &s)| (n, s)).collect();
    let ni: DimVec<usize> = (0..new.len()).filter(|&k| new[k] != 1).collect();
    let mut strides: DimVec<isize> = smallvec::smallvec![0; new.len()];
    let (mut i, mut j) = (0usize, 0usize);
    while i < od.len() && j < ni.len() {
        let (i0, j0) = (i, j);
        let (mut po, mut pn) = (od[i].0, new[ni[j]]);
        while po != pn {
            if pn < po {
                j += 1;
                pn = pn.checked_mul(new[*ni.get(j)?])?;
            } else {
                i += 1;
                po = po.checked_mul(od.get(i)?.0)?;
            }
        }
        // The merged old dims must nest contiguously.
        if (i0..i).any(|k| Some(od[k].1) != od[k + 1].1.checked_mul(od[k + 1].0 as isize)) {
            return None;
        }
        let mut st = od[i].1;
        for k in (j0..=j).rev() {
            strides[ni[k]] = st;
            st = st.checked_mul(new[ni[k]] as isize)?;
        }
        i += 1;
        j += 1;
    }
    if i != od.len() || j != ni.len() {
        return None;
    }
    // Dims of extent 1: the stride a dense layout would give them.
    for k in (0..new.len()).rev() {
        if new[k] == 1 {
            strides[k] = if k + 1 < new.len() { strides[k + 1].saturating_mul(new[k + 1] as isize) } else { 1 };
        }
    }
    Some(strides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fnabi_abi::scalar::DType;

    fn iota(shape: &[usize]) -> Array<'static> {
        let n: usize = shape.iter().product();
        Array::from_vec(shape, (0..n as i32).collect()).unwrap()
    }

    #[test]
    fn load_store_splat() {
        let mut a = splat(&[2, 2], 1.5f32).unwrap();
        assert_eq!(a.to_vec::<f32>().unwrap(), [1.5; 4]);
        store(&mut a, &[1, 0], 2.5f32).unwrap();
        assert_eq!(load::<f32>(&a, &[1, 0]).unwrap(), 2.5);
        assert_eq!(
            store(&mut a, &[1, 0], 1u8).unwrap_err().to_string(),
            "element type of a stored value: expected f32, got u8"
        );
        assert!(store(&mut a, &[2, 0], 1f32).unwrap_err().to_string().contains("out of bounds in dim 0"));
        assert!(store(&mut a, &[0], 1f32).is_err());
        let keep = a.clone();
        assert!(store(&mut a, &[0, 0], 1f32).unwrap_err().to_string().contains("not writable"));
        drop(keep);
        // Store through a strided, offset view.
        let mut data = [0i32; 6];
        {
            let mut m = Array::from_mut_slice(&[2, 3], &mut data).unwrap();
            store(&mut m, &[1, 2], 9).unwrap();
        }
        assert_eq!(data, [0, 0, 0, 0, 0, 9]);
        assert_eq!(splat(&[0], 1u64).unwrap().len(), 0);
        assert!(splat(&[], true).unwrap().get::<bool>(&[]).unwrap());
        assert!(splat(&[usize::MAX, 2], 0u8).is_err());
    }

    #[test]
    fn slices_are_views_and_checked() {
        let a = iota(&[4, 5]);
        let s = slice(&a, &[1, 2], &[2, 3]).unwrap();
        assert_eq!(s.to_vec::<i32>().unwrap(), [7, 8, 9, 12, 13, 14]);
        assert_eq!(s.as_ptr(), a.as_ptr().wrapping_add(7 * 4), "a view, not a copy");
        let e = slice(&a, &[3, 0], &[2, 5]).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid argument: slice of dim 0 (extent 4) from 3 by 2 with step 1 reaches index 4, out of bounds"
        );
        let e = slice_strided(&a, &[1, 0], &[3, 1], &[-1, 1]).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid argument: slice of dim 0 (extent 4) from 1 by 3 with step -1 reaches index -1, out of bounds"
        );
        assert!(slice_strided(&a, &[0, 0], &[1, 1], &[0, 1]).unwrap_err().to_string().contains("step of dim 0 is 0"));
        assert_eq!(slice(&a, &[0], &[1]).unwrap_err().to_string(), "number of slice offsets: expected 2, got 1");
        assert!(slice(&a, &[4, 0], &[0, 5]).unwrap().is_empty());
        assert!(slice(&a, &[5, 0], &[0, 5]).is_err());
        assert!(slice_strided(&a, &[0, 0], &[usize::MAX, 1], &[isize::MAX, 1]).is_err());
        assert_eq!(
            slice_strided(&a, &[2, 0], &[1, 1], &[isize::MAX, isize::MIN]).unwrap().to_vec::<i32>().unwrap(),
            [10]
        );
        // Slices of slices, reversed columns.
        let r = slice_strided(&s, &[1, 2], &[2, 3], &[-1, -1]).unwrap();
        assert_eq!(r.to_vec::<i32>().unwrap(), [14, 13, 12, 9, 8, 7]);
    }

    #[test]
    fn updates() {
        let mut t = iota(&[3, 4]).to_contiguous().unwrap();
        let u = Array::from_vec(&[2, 2], vec![-1i32, -2, -3, -4]).unwrap();
        update(&mut t, &u.permuted(&[1, 0]).unwrap(), &[1, 1]).unwrap();
        assert_eq!(t.to_vec::<i32>().unwrap(), [0, 1, 2, 3, 4, -1, -3, 7, 8, -2, -4, 11]);
        let e = update(&mut t, &u, &[2, 0]).unwrap_err().to_string();
        assert_eq!(e, "invalid argument: update of extent 2 at offset 2 does not fit dim 0 of extent 3");
        assert!(update(&mut t, &u, &[usize::MAX, 0]).is_err());
        assert!(update(&mut t, &u, &[0]).unwrap_err().to_string().starts_with("rank of a tensor update"));
        let f = Array::from_vec(&[1, 1], vec![1.0f32]).unwrap();
        assert!(update(&mut t, &f, &[0, 0]).unwrap_err().to_string().starts_with("element type of a tensor update"));
        // Into a column-major target.
        let mut c = crate::layout::to_dense(&iota(&[2, 3]), fnabi_abi::raw::DimOrder::ColumnMajor).unwrap();
        update(&mut c, &Array::from_vec(&[1, 2], vec![7i32, 8]).unwrap(), &[1, 1]).unwrap();
        assert_eq!(c.to_vec::<i32>().unwrap(), [0, 1, 2, 3, 7, 8]);
        let empty = Array::zeros(DType::I32, &[0, 2]).unwrap();
        update(&mut c, &empty, &[2, 0]).unwrap();
        // A target whose elements alias each other cannot be updated.
        #[repr(align(8))]
        struct A([u8; 8]);
        let mut mem = A([0; 8]);
        let mut bcast = Array::from_mut_bytes(DType::I32, &[2, 2], Some(&[0, 1]), &mut mem.0, 0).unwrap();
        let e = update(&mut bcast, &u, &[0, 0]).unwrap_err().to_string();
        assert!(e.contains("overlap"), "{e}");
    }

    #[test]
    fn reshape_views_when_possible() {
        let a = iota(&[2, 3, 4]);
        let r = reshape(&a, &[6, 1, 4]).unwrap();
        assert_eq!(r.as_ptr(), a.as_ptr());
        assert!(r.is_c_contiguous());
        assert_eq!(r.to_vec::<i32>().unwrap(), a.to_vec::<i32>().unwrap());
        // A column slice keeps rows apart: [2,3,2] of stride [12,4,1] → [6,2] is a view.
        let s = slice(&a, &[0, 0, 1], &[2, 3, 2]).unwrap();
        let v = reshape(&s, &[6, 2]).unwrap();
        assert_eq!(v.strides(), &[4, 1]);
        assert_eq!(v.to_vec::<i32>().unwrap(), s.to_vec::<i32>().unwrap());
        // … but flattening it needs a copy.
        let f = reshape(&s, &[12]).unwrap();
        assert!(f.is_c_contiguous());
        assert_eq!(f.to_vec::<i32>().unwrap(), s.to_vec::<i32>().unwrap());
        // Splitting a reversed dim is a view.
        let rev = slice_strided(&a, &[0, 0, 3], &[2, 3, 4], &[1, 1, -1]).unwrap();
        let rv = reshape(&rev, &[2, 3, 2, 2]).unwrap();
        assert_eq!(rv.strides(), &[12, 4, -2, -1]);
        assert_eq!(rv.to_vec::<i32>().unwrap(), rev.to_vec::<i32>().unwrap());
        assert_eq!(reshape(&a, &[0]).unwrap_err().to_string(), "element count of a reshape to [0]: expected 24, got 0");
        let e = Array::zeros(DType::F32, &[0, 3]).unwrap();
        assert_eq!(reshape(&e, &[3, 0]).unwrap().shape(), &[3, 0]);
        let sc = Array::scalar(5u8);
        assert_eq!(reshape(&sc, &[1, 1]).unwrap().get::<u8>(&[0, 0]).unwrap(), 5);
        assert_eq!(reshape(&reshape(&sc, &[1, 1]).unwrap(), &[]).unwrap().get::<u8>(&[]).unwrap(), 5);
        assert_eq!(clone(&s).unwrap(), s);
    }
}
