//! Zero-copy views between fnabi's [`Array`] and the `ndarray` crate
//! (feature `ndarray`, on by default).
//!
//! - [`Array::as_ndarray`] / [`Array::as_ndarray_mut`]: an `ndarray` view of
//!   an array's memory, any strides (negative ones too); the mutable view
//!   needs a writable array whose strides do not overlap.
//! - `Array::try_from(ArrayView)`: borrows the view's memory when the view is
//!   dense (covers every element of its extent, in any axis order or
//!   direction); a view that skips elements is an error, since borrowing
//!   the bytes between its elements could alias someone else's `&mut`.
//! - `Array::try_from(ArrayViewMut)`: borrows mutably, for row-major views.
//! - `Array::try_from(ndarray::Array)`: takes the owned array's vector (no copy).
//!
//! ```
//! use fnabi_core::Array;
//! let a = ndarray::array![[1.0f32, 2.0], [3.0, 4.0]];
//! let t = a.t();
//! let f = Array::try_from(t.view()).unwrap(); // borrows a's memory
//! assert_eq!(f.strides(), &[1, 2]);
//! assert_eq!(f.as_ptr(), a.as_ptr().cast());
//! let back = f.as_ndarray::<f32>().unwrap();
//! assert_eq!(back, t.into_dyn());
//! ```

use crate::array::{Array, HostBuffer};
use crate::error::Error;
use ::ndarray::{ArrayView, ArrayViewD, ArrayViewMut, ArrayViewMutD, Axis, Dimension, IxDyn, ShapeBuilder};
use fnabi_abi::scalar::Element;
use std::sync::Arc;

fn mismatch(expected: impl ToString, got: impl ToString) -> Error {
    Error::mismatch("array element type", expected.to_string(), got.to_string())
}

/// Offset in elements from element `[0, …, 0]` to the lowest-addressed
/// element (`<= 0`).
fn low_offset(shape: &[usize], strides: &[isize]) -> isize {
    shape.iter().zip(strides).filter(|(n, s)| **n > 0 && **s < 0).map(|(n, s)| (*n as isize - 1) * s).sum()
}

/// True when no two indices of the array address the same element.
fn non_overlapping(shape: &[usize], strides: &[isize]) -> bool {
    let mut dims: Vec<(usize, usize)> =
        shape.iter().zip(strides).filter(|(n, _)| **n > 1).map(|(n, s)| (s.unsigned_abs(), *n)).collect();
    dims.sort_unstable();
    let mut needed = 1usize;
    for (s, n) in dims {
        if s < needed {
            return false;
        }
        needed = s.saturating_mul(n);
    }
    true
}

impl<'a> Array<'a> {
    fn check_elem<T: Element>(&self) -> Result<(), Error> {
        if T::DTYPE == self.dtype() { Ok(()) } else { Err(mismatch(T::DTYPE, self.dtype())) }
    }

    /// An `ndarray` view of this array's memory (no copy), for element type `T`.
    pub fn as_ndarray<T: Element>(&self) -> Result<ArrayViewD<'_, T>, Error> {
        self.check_elem::<T>()?;
        if self.is_empty() {
            return ArrayViewD::from_shape(IxDyn(self.shape()), &[])
                .map_err(|e| Error::invalid_argument(e.to_string()));
        }
        let abs: Vec<usize> = self.strides().iter().map(|s| s.unsigned_abs()).collect();
        let low = self.as_ptr().cast::<T>().wrapping_offset(low_offset(self.shape(), self.strides()));
        // SAFETY: construction checked that every element this shape and
        // these strides address lies inside the storage, aligned for T (the
        // dtype is T's), and that bool data is 0/1; `low` is the lowest of
        // them, and the strides from it are non-negative. The storage lives
        // and is not written while `&self` is borrowed (shared buffers and
        // borrows are read through `&self` only; writing needs `&mut self`).
        let mut v = unsafe { ArrayView::from_shape_ptr(IxDyn(self.shape()).strides(IxDyn(&abs)), low) };
        for (i, s) in self.strides().iter().enumerate() {
            if *s < 0 {
                v.invert_axis(Axis(i));
            }
        }
        Ok(v)
    }

    /// A mutable `ndarray` view of this array's memory (no copy). The array
    /// must be writable (see [`Array::is_writable`]) and its strides must not
    /// overlap (no broadcast axes).
    pub fn as_ndarray_mut<T: Element>(&mut self) -> Result<ArrayViewMutD<'_, T>, Error> {
        self.check_elem::<T>()?;
        if !non_overlapping(self.shape(), self.strides()) {
            return Err(Error::invalid_argument(format!(
                "strides {:?} of shape {:?} overlap: a mutable view would alias",
                self.strides(),
                self.shape()
            )));
        }
        let (shape, strides) = (self.shape().to_vec(), self.strides().to_vec());
        let ptr = self.as_mut_ptr()?;
        if shape.contains(&0) {
            return ArrayViewMutD::from_shape(IxDyn(&shape), &mut [])
                .map_err(|e| Error::invalid_argument(e.to_string()));
        }
        let abs: Vec<usize> = strides.iter().map(|s| s.unsigned_abs()).collect();
        let low = ptr.cast::<T>().wrapping_offset(low_offset(&shape, &strides));
        // SAFETY: as in `as_ndarray`, and `as_mut_ptr` succeeded, so this array
        // holds its memory uniquely (a unique buffer or a `&mut` borrow) and
        // `&mut self` keeps it so for the view's lifetime; the strides do not
        // overlap, so the view's elements are distinct.
        let mut v = unsafe { ArrayViewMut::from_shape_ptr(IxDyn(&shape).strides(IxDyn(&abs)), low) };
        for (i, s) in strides.iter().enumerate() {
            if *s < 0 {
                v.invert_axis(Axis(i));
            }
        }
        Ok(v)
    }
}

impl<'a, T: Element, D: Dimension> TryFrom<ArrayView<'a, T, D>> for Array<'a> {
    type Error = Error;

    /// Borrows a dense view's memory (any axis order or direction).
    fn try_from(v: ArrayView<'a, T, D>) -> Result<Self, Error> {
        let shape = v.shape().to_vec();
        let strides = v.strides().to_vec();
        let len = v.len();
        if len == 0 {
            return Array::from_slice::<T>(&shape, &[]);
        }
        let low_off = low_offset(&shape, &strides);
        let span = shape.iter().zip(&strides).map(|(n, s)| (*n - 1) * s.unsigned_abs()).sum::<usize>() + 1;
        if span != len || !non_overlapping(&shape, &strides) {
            return Err(Error::invalid_argument(format!(
                "an ndarray view with strides {strides:?} skips elements or repeats them; \
                 only dense views can be borrowed (use .as_standard_layout() or .to_owned())"
            )));
        }
        let ptr = v.as_ptr();
        let low = ptr.wrapping_offset(low_off);
        // SAFETY: the view is dense (its `len` elements fill exactly the
        // `span` from `low`), so every element of the slice is an element of
        // the view, valid and not mutably aliased for 'a.
        let data: &'a [T] = unsafe { std::slice::from_raw_parts(low, len) };
        let bytes: &'a [u8] = crate::array::bytes_of(data);
        let offset = (-low_off) as usize * std::mem::size_of::<T>();
        Array::from_bytes(T::DTYPE, &shape, Some(&strides), bytes, offset)
    }
}

impl<'a, T: Element, D: Dimension> TryFrom<ArrayViewMut<'a, T, D>> for Array<'a> {
    type Error = Error;

    /// Borrows a row-major (standard layout) view's memory mutably.
    fn try_from(v: ArrayViewMut<'a, T, D>) -> Result<Self, Error> {
        let shape = v.shape().to_vec();
        match v.into_slice() {
            Some(data) => Array::from_mut_slice(&shape, data),
            None => {
                Err(Error::invalid_argument("only a row-major (standard layout) mutable ndarray view can be borrowed"))
            }
        }
    }
}

impl<T: Element, D: Dimension> TryFrom<::ndarray::Array<T, D>> for Array<'static> {
    type Error = Error;

    /// Takes the owned array's memory (no copy), keeping its strides.
    fn try_from(a: ::ndarray::Array<T, D>) -> Result<Self, Error> {
        let shape = a.shape().to_vec();
        let strides = a.strides().to_vec();
        let (data, offset) = a.into_raw_vec_and_offset();
        let offset = offset.unwrap_or(0) * std::mem::size_of::<T>();
        Array::from_buffer(T::DTYPE, &shape, Some(&strides), Arc::new(HostBuffer::from_vec(data)), offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::ndarray::{Array2, Array3, s};

    #[test]
    fn views_both_ways_with_any_strides() {
        let a = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 100 + j * 10 + k) as i32);
        // Reversed and permuted: dense, so borrowable.
        let v = a.slice(s![..;-1, .., ..;-1]).permuted_axes([2, 0, 1]);
        let f = Array::try_from(v.view()).unwrap();
        assert_eq!(f.shape(), &[4, 2, 3]);
        assert_eq!(f.to_vec::<i32>().unwrap(), v.iter().copied().collect::<Vec<_>>());
        assert_eq!(f.as_ndarray::<i32>().unwrap(), v.into_dyn());
        // A view that skips elements cannot be borrowed.
        let e = Array::try_from(a.slice(s![.., ..;2, ..])).unwrap_err();
        assert!(e.to_string().contains("only dense views"), "{e}");
        // Broadcast (zero stride) fnabi arrays give read-only views.
        let b = Array::from_vec(&[3], vec![1u8, 2, 3]).unwrap();
        let bc = b.restrided(&[2, 3], &[0, 1], 0).unwrap();
        assert_eq!(bc.as_ndarray::<u8>().unwrap(), ::ndarray::array![[1u8, 2, 3], [1, 2, 3]].into_dyn());
        assert!(bc.as_ndarray::<i8>().is_err());
        let e = Array::zeros(crate::DType::F32, &[0, 2]).unwrap();
        assert_eq!(e.as_ndarray::<f32>().unwrap().shape(), &[0, 2]);
    }

    #[test]
    fn owned_and_mutable() {
        let a = Array2::from_shape_vec((2, 2), vec![1.0f64, 2.0, 3.0, 4.0]).unwrap().reversed_axes();
        let ptr = a.as_ptr();
        let mut f = Array::try_from(a).unwrap();
        assert_eq!(f.as_ptr(), ptr.cast());
        assert_eq!(f.to_vec::<f64>().unwrap(), [1.0, 3.0, 2.0, 4.0]);
        f.as_ndarray_mut::<f64>().unwrap()[[0, 1]] = 9.0;
        assert_eq!(f.to_vec::<f64>().unwrap(), [1.0, 9.0, 2.0, 4.0]);
        let shared = f.clone();
        assert!(f.as_ndarray_mut::<f64>().is_err(), "shared arrays are not writable");
        drop(shared);
        let mut data = Array2::<u16>::zeros((2, 3));
        {
            let mut m = Array::try_from(data.view_mut()).unwrap();
            m.as_ndarray_mut::<u16>().unwrap().fill(7);
        }
        assert!(data.iter().all(|&x| x == 7));
        assert!(Array::try_from(data.view_mut().reversed_axes()).is_err());
        let mut owner = Array::from_vec(&[3], vec![1u8, 2, 3]).unwrap();
        let mut bc = owner.restrided(&[2, 3], &[0, 1], 0).unwrap().into_owned().unwrap();
        let e = bc.as_ndarray_mut::<u8>().unwrap_err().to_string();
        assert!(e.contains("overlap"), "{e}");
        drop(bc);
        assert!(owner.as_ndarray_mut::<u8>().is_ok());
        assert!(!non_overlapping(&[2, 3], &[0, 1]));
        assert!(non_overlapping(&[2, 3], &[1, 2]));
        assert!(!non_overlapping(&[2, 3], &[1, 1]));
    }
}
