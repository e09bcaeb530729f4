//! The descriptor structs: [`MemRefDescriptor`] (a static rank, MLIR's C
//! layout), [`DynMemRef`] (a rank known at run time), [`UnrankedMemRef`];
//! and MLIR's index linearization ([`linear_index`]).

use super::*;

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
            element: match T::DTYPE {
                DType::Scalar(s) => ElementType::Scalar(s),
                DType::Bool => return Self::from_bool_array(array),
                DType::Complex(c) => ElementType::Complex(c),
                // No Rust element type is an 8-bit float (Element is sealed).
                DType::Float8(f) => return Err(Error::invalid_argument(format!("no Rust element type is {f}"))),
            },
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
///
/// ```
/// use fnabi_mlir::memref::{DynMemRef, UnrankedMemRef};
/// // what a `memref<*xf32>` argument of rank 3 points to
/// let d = DynMemRef::new(3);
/// let u = UnrankedMemRef { rank: 3, descriptor: d.as_ptr().cast_mut() };
/// assert_eq!(std::mem::size_of::<UnrankedMemRef>(), 16); // {i64, ptr}
/// assert_eq!(u.rank as usize, d.rank());
/// ```
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
///
/// ```
/// use fnabi_mlir::memref::{fill_descriptor, DynMemRef};
/// use fnabi_mlir::MlirType;
/// use fnabi_core::Array;
/// // the transpose of a 2x3 array, for a fully strided memref<?x?xi32>
/// let a = Array::from_vec(&[2, 3], vec![0i32, 1, 2, 3, 4, 5]).unwrap();
/// let t = a.permuted(&[1, 0]).unwrap();
/// let MlirType::MemRef(ty) = "memref<?x?xi32, strided<[?, ?], offset: ?>>".parse().unwrap() else { unreachable!() };
/// let mut d = DynMemRef::new(2);
/// assert!(fill_descriptor(&t, &ty, d.words_mut()).unwrap());
/// assert_eq!((d.rank(), d.offset(), d.sizes(), d.strides()), (2, 0, &[3, 2][..], &[1, 3][..]));
/// // element [2, 1] of the transpose is element [1, 2] of `a`: 5, at 2·1 + 1·3
/// assert_eq!(d.linear_index(&[2, 1]).unwrap(), 5);
/// assert_eq!(d.aligned(), a.as_ptr() as usize);
/// // an identity layout needs dense row-major data: the transpose must be converted
/// let MlirType::MemRef(dense) = "memref<3x2xi32>".parse().unwrap() else { unreachable!() };
/// assert!(!fill_descriptor(&t, &dense, d.words_mut()).unwrap());
/// ```
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
