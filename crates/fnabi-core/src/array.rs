//! Host n-d arrays: [`Array`] = element type + shape + strides (in elements,
//! negative and zero allowed) + a byte offset into its storage, where the
//! storage is a shared [`HostBuffer`] (fnabi's own 64-byte aligned memory, a
//! moved-in `Vec`, or foreign memory with a deleter) or memory borrowed from
//! the caller (read-only or mutable).
//!
//! Every constructor checks, with overflow-checked arithmetic, that the array
//! addresses only bytes inside its storage and that its first element is
//! aligned for its type; code that hands an array to native code can rely on
//! that.
//!
//! Arrays have value semantics: [`Clone`] shares a `HostBuffer` (cheap) and
//! mutation goes through [`Array::as_mut_ptr`], which requires unique access
//! (a uniquely held or mutably borrowed storage).
//!
//! ```
//! use fnabi_core::{Array, DType};
//! let a = Array::from_vec(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
//! assert_eq!(a.dtype(), DType::F32);
//! assert_eq!(a.strides(), &[3, 1]);
//! let t = a.permuted(&[1, 0]).unwrap(); // a zero-copy transpose
//! assert!(!t.is_c_contiguous());
//! assert_eq!(t.to_vec::<f32>().unwrap(), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
//! assert_eq!(t.get::<f32>(&[2, 1]).unwrap(), 6.0);
//! ```

use crate::error::Error;
use fnabi_abi::scalar::{DType, Element};
use smallvec::SmallVec;
use std::ptr::NonNull;
use std::sync::Arc;

mod host_buffer;

pub use host_buffer::{HUGE_PAGE_THRESHOLD, HostBuffer};

/// Alignment of memory that fnabi allocates (a cache line; enough for any
/// element type and for MLIR's `{alignment = 64}`).
pub const ALIGNMENT: usize = 64;

/// Inline storage for shapes and strides (no allocation up to rank 6).
pub type DimVec<T> = SmallVec<[T; 6]>;

trait DanglingAligned {
    fn dangling_aligned() -> Self;
}

impl DanglingAligned for NonNull<u8> {
    /// A non-null pointer aligned to [`ALIGNMENT`] for zero-length memory.
    fn dangling_aligned() -> Self {
        // ALIGNMENT is a non-zero constant; no memory is behind it.
        NonNull::<u8>::dangling().with_addr(std::num::NonZeroUsize::MIN.saturating_add(ALIGNMENT - 1))
    }
}

/// Where an array's bytes are and what keeps them alive. The start and
/// length are read once, when the array is made: [`Array::storage_ptr`]
/// and [`Array::storage_len`] are field reads, not a match and a chase
/// through the buffer's `Arc` (binding an array as a call argument reads
/// both; measured on `fnabi/dict8`, 8 arrays bound per call).
#[derive(Clone)]
struct Storage<'a> {
    base: NonNull<u8>,
    len: usize,
    owner: Owner<'a>,
}

/// Who owns an array's memory.
#[derive(Clone)]
enum Owner<'a> {
    /// A buffer shared by reference count.
    Shared(Arc<HostBuffer>),
    /// A read-only borrow: the memory is a `&'a [u8]`.
    Borrowed(std::marker::PhantomData<&'a [u8]>),
    /// A mutable borrow: the memory is a `&'a mut [u8]`.
    BorrowedMut(std::marker::PhantomData<&'a mut [u8]>),
}

// SAFETY: the storage stands for a shared buffer (Send + Sync), a `&'a [u8]`
// or a `&'a mut [u8]` (both Send + Sync), whose start and length it keeps.
unsafe impl Send for Storage<'_> {}
// SAFETY: as above.
unsafe impl Sync for Storage<'_> {}

impl<'a> Storage<'a> {
    #[inline]
    fn shared(buffer: Arc<HostBuffer>) -> Storage<'a> {
        Storage { base: buffer.as_non_null(), len: buffer.len(), owner: Owner::Shared(buffer) }
    }

    #[inline]
    fn borrowed(bytes: &'a [u8]) -> Storage<'a> {
        Storage {
            base: NonNull::from(bytes).cast(),
            len: bytes.len(),
            owner: Owner::Borrowed(std::marker::PhantomData),
        }
    }

    /// [`Storage::borrowed`] for an array of this layout over `bytes`,
    /// checked as every view of bytes is ([`Array::from_bytes`],
    /// [`Array::boxed_from_bytes`]): the layout first ([`check_layout`]),
    /// then a bool array's bytes (0 or 1).
    #[inline]
    fn checked_view(
        bytes: &'a [u8],
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Storage<'a>, Error> {
        let storage = Storage::borrowed(bytes);
        check_layout(dtype, shape, strides, offset, storage.base(), storage.len())?;
        if dtype == DType::Bool {
            check_bools(bytes)?;
        }
        Ok(storage)
    }

    /// The memory of a `&'a mut [u8]` starting at `base`, `len` bytes.
    #[inline]
    fn borrowed_mut(base: NonNull<u8>, len: usize) -> Storage<'a> {
        Storage { base, len, owner: Owner::BorrowedMut(std::marker::PhantomData) }
    }

    #[inline]
    fn base(&self) -> *const u8 {
        self.base.as_ptr()
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }
}

/// A host n-d array (see the module docs).
///
/// ```
/// use fnabi_core::{Array, DType};
/// // Owned: a Vec becomes the array's shared buffer (no copy).
/// let a = Array::from_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
/// assert_eq!((a.dtype(), a.shape(), a.strides()), (DType::I32, &[2, 3][..], &[3, 1][..]));
/// assert_eq!(a.get::<i32>(&[1, 0]).unwrap(), 4);
/// // A transposed view of the same memory; to_vec reads it in C order.
/// let t = a.permuted(&[1, 0]).unwrap();
/// assert_eq!(t.to_vec::<i32>().unwrap(), [1, 4, 2, 5, 3, 6]);
/// assert_eq!(t.to_string(), "3x2xi32=[1 4][2 5][3 6]");
/// // Borrowed: the caller's memory, checked against the shape.
/// let data = [1.0f32, 2.0];
/// let b = Array::from_slice(&[2], &data).unwrap();
/// assert_eq!(b.as_ptr(), data.as_ptr().cast());
/// assert!(Array::from_slice(&[3], &data).is_err());
/// // The wrong element type is an error, not a reinterpretation.
/// assert!(b.get::<i32>(&[0]).is_err());
/// ```
pub struct Array<'a> {
    dtype: DType,
    shape: DimVec<usize>,
    strides: DimVec<isize>,
    /// Byte offset of element `[0, …, 0]` from the start of the storage.
    offset: usize,
    storage: Storage<'a>,
}

/// Row-major (C order) strides in elements for `shape`.
#[inline]
pub fn c_strides(shape: &[usize]) -> DimVec<isize> {
    let mut strides: DimVec<isize> = smallvec::smallvec![0; shape.len()];
    let mut acc: isize = 1;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(shape[i].max(1) as isize);
    }
    strides
}

/// Column-major (Fortran order) strides in elements for `shape`.
pub fn f_strides(shape: &[usize]) -> DimVec<isize> {
    let mut strides: DimVec<isize> = smallvec::smallvec![0; shape.len()];
    let mut acc: isize = 1;
    for (i, &n) in shape.iter().enumerate() {
        strides[i] = acc;
        acc = acc.saturating_mul(n.max(1) as isize);
    }
    strides
}

/// Number of elements of `shape`, overflow-checked.
#[inline]
pub fn element_count(shape: &[usize]) -> Result<usize, Error> {
    shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n)).ok_or_else(|| overflow(shape))
}

fn overflow(shape: &[usize]) -> Error {
    Error::invalid_argument(format!("array of shape {shape:?} is too large (size overflows)"))
}

/// The byte range `[lo, hi)` relative to element `[0, …, 0]` that an array
/// of this shape, strides (in elements) and element size touches; `None` when
/// it has no elements. Overflow-checked.
pub fn byte_extent(shape: &[usize], strides: &[isize], elem_size: usize) -> Result<Option<(isize, isize)>, Error> {
    if shape.len() != strides.len() {
        return Err(Error::invalid_argument(format!(
            "shape has rank {} but strides have rank {}",
            shape.len(),
            strides.len()
        )));
    }
    if shape.contains(&0) {
        return Ok(None);
    }
    let es = isize::try_from(elem_size).map_err(|_| overflow(shape))?;
    let (mut lo, mut hi) = (0isize, es);
    for (&n, &s) in shape.iter().zip(strides) {
        let last = isize::try_from(n - 1).ok().and_then(|n1| n1.checked_mul(s)).and_then(|v| v.checked_mul(es));
        let last = last.ok_or_else(|| overflow(shape))?;
        if last < 0 {
            lo = lo.checked_add(last).ok_or_else(|| overflow(shape))?;
        } else {
            hi = hi.checked_add(last).ok_or_else(|| overflow(shape))?;
        }
    }
    Ok(Some((lo, hi)))
}

fn check_layout(
    dtype: DType,
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    base: *const u8,
    len: usize,
) -> Result<(), Error> {
    element_count(shape)?;
    let es = dtype.size();
    if let Some((lo, hi)) = byte_extent(shape, strides, es)? {
        let off = isize::try_from(offset).map_err(|_| overflow(shape))?;
        let (start, end) = (off.checked_add(lo), off.checked_add(hi));
        let ok = matches!((start, end), (Some(s), Some(e)) if s >= 0 && e as usize <= len);
        if !ok {
            let bytes = (off.saturating_add(lo), off.saturating_add(hi));
            return Err(outside_storage(dtype, shape, strides, offset, bytes, len));
        }
    } else if offset > len {
        return Err(Error::invalid_argument(format!("byte offset {offset} is past the {len}-byte storage")));
    }
    if !dtype.is_aligned((base as usize).wrapping_add(offset)) {
        return Err(misaligned(dtype, offset));
    }
    Ok(())
}

/// The error of an array whose elements address `bytes` (relative to its
/// storage) beyond its `len`-byte storage.
#[cold]
fn outside_storage(
    dtype: DType,
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    bytes: (isize, isize),
    len: usize,
) -> Error {
    Error::invalid_argument(format!(
        "array {dtype}{shape:?} with strides {strides:?} at byte offset {offset} addresses bytes [{}, {}) outside \
         its {len}-byte storage",
        bytes.0, bytes.1
    ))
}

/// The error of an array whose first element, at byte `offset` of its
/// storage, is not aligned for `dtype`.
#[cold]
fn misaligned(dtype: DType, offset: usize) -> Error {
    Error::invalid_argument(format!(
        "array data at byte offset {offset} is not aligned to its {}-byte {dtype} elements",
        dtype.size()
    ))
}

/// [`check_layout`] of a row-major array at byte offset 0, the same
/// outcome and errors: its bytes end at `count × element size`, so that
/// product is all there is to check (each stride's extent is below it).
fn check_row_major(dtype: DType, shape: &[usize], base: *const u8, len: usize) -> Result<(), Error> {
    let count = element_count(shape)?;
    if count > 0 {
        let end =
            count.checked_mul(dtype.size()).filter(|&e| isize::try_from(e).is_ok()).ok_or_else(|| overflow(shape))?;
        if end > len {
            // `end` fits in isize (checked above).
            return Err(outside_storage(dtype, shape, &c_strides(shape), 0, (0, end as isize), len));
        }
    }
    if !dtype.is_aligned(base as usize) {
        return Err(misaligned(dtype, 0));
    }
    Ok(())
}

pub(crate) fn bytes_of<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: Element types are plain data; a `[T]` is readable as bytes.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

fn check_bools(bytes: &[u8]) -> Result<(), Error> {
    match bytes.iter().position(|&b| b > 1) {
        None => Ok(()),
        Some(i) => {
            Err(Error::invalid_argument(format!("bool array holds byte {} at byte {i} (expected 0 or 1)", bytes[i])))
        }
    }
}

impl<'a> Array<'a> {
    fn build(
        dtype: DType,
        shape: &[usize],
        strides: DimVec<isize>,
        offset: usize,
        storage: Storage<'a>,
    ) -> Result<Array<'a>, Error> {
        check_layout(dtype, shape, &strides, offset, storage.base(), storage.len())?;
        Ok(Array { dtype, shape: shape.into(), strides, offset, storage })
    }

    /// A zero-filled, row-major array (64-byte aligned). An array over the
    /// byte limit per array ([`fnabi_abi::limits`]) is an
    /// [`Exhausted`](crate::error::ErrorKind::Exhausted) error, before
    /// anything is allocated.
    pub fn zeros(dtype: DType, shape: &[usize]) -> Result<Array<'static>, Error> {
        let n = element_count(shape)?;
        let bytes = n.checked_mul(dtype.size()).ok_or_else(|| overflow(shape))?;
        fnabi_abi::limits::check_bytes(fnabi_abi::limits::ByteLimit::Array, bytes as u128, || {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).chain([dtype.to_string()]).collect();
            format!("an array of {}", dims.join("x"))
        })
        .map_err(|e| Error::exhausted(e.to_string()))?;
        let buf = Arc::new(HostBuffer::zeroed(bytes)?);
        Array::build(dtype, shape, c_strides(shape), 0, Storage::shared(buf))
    }

    /// A row-major array that takes ownership of `data` (no copy).
    /// `data.len()` must equal the element count of `shape`.
    pub fn from_vec<T: Element>(shape: &[usize], data: Vec<T>) -> Result<Array<'static>, Error> {
        check_count(shape, data.len())?;
        Array::from_buffer(T::DTYPE, shape, None, Arc::new(HostBuffer::from_vec(data)), 0)
    }

    /// A rank-0 array holding one value.
    pub fn scalar<T: Element>(value: T) -> Array<'static> {
        Array::from_vec(&[], vec![value]).unwrap_or_else(|_| unreachable!("one element fits rank 0"))
    }

    /// A row-major, read-only view of a slice (no copy).
    pub fn from_slice<T: Element>(shape: &[usize], data: &'a [T]) -> Result<Array<'a>, Error> {
        check_count(shape, data.len())?;
        Array::build(T::DTYPE, shape, c_strides(shape), 0, Storage::borrowed(bytes_of(data)))
    }

    /// A row-major, writable view of a slice (no copy): a function may write
    /// into it (destination-passing style).
    pub fn from_mut_slice<T: Element>(shape: &[usize], data: &'a mut [T]) -> Result<Array<'a>, Error> {
        check_count(shape, data.len())?;
        let len = std::mem::size_of_val(data);
        let ptr = NonNull::new(data.as_mut_ptr().cast::<u8>()).unwrap_or(NonNull::dangling_aligned());
        Array::build(T::DTYPE, shape, c_strides(shape), 0, Storage::borrowed_mut(ptr, len))
    }

    /// A view of borrowed bytes with explicit strides (in elements; `None`
    /// for row-major) and byte offset of element `[0, …, 0]`. Bool data is
    /// checked to hold only 0 and 1.
    pub fn from_bytes(
        dtype: DType,
        shape: &[usize],
        strides: Option<&[isize]>,
        bytes: &'a [u8],
        offset: usize,
    ) -> Result<Array<'a>, Error> {
        let strides = strides.map_or_else(|| c_strides(shape), DimVec::from);
        let storage = Storage::checked_view(bytes, dtype, shape, &strides, offset)?;
        Ok(Array { dtype, shape: shape.into(), strides, offset, storage })
    }

    /// A writable view of borrowed bytes with explicit strides (in
    /// elements; `None` for row-major) and byte offset of element
    /// `[0, …, 0]`: memory a function may write into (arena scratch, a
    /// mutable byte buffer). Bool data is checked to hold only 0 and 1.
    pub fn from_mut_bytes(
        dtype: DType,
        shape: &[usize],
        strides: Option<&[isize]>,
        bytes: &'a mut [u8],
        offset: usize,
    ) -> Result<Array<'a>, Error> {
        if dtype == DType::Bool {
            check_bools(bytes)?;
        }
        let strides = strides.map_or_else(|| c_strides(shape), DimVec::from);
        let len = bytes.len();
        let ptr = NonNull::new(bytes.as_mut_ptr()).unwrap_or(NonNull::dangling_aligned());
        Array::build(dtype, shape, strides, offset, Storage::borrowed_mut(ptr, len))
    }

    /// An array over a shared buffer with explicit strides (in elements;
    /// `None` for row-major) and byte offset. Bool data is checked to hold
    /// only 0 and 1.
    pub fn from_buffer(
        dtype: DType,
        shape: &[usize],
        strides: Option<&[isize]>,
        buffer: Arc<HostBuffer>,
        offset: usize,
    ) -> Result<Array<'static>, Error> {
        let strides = strides.map_or_else(|| c_strides(shape), DimVec::from);
        if dtype == DType::Bool {
            check_bools(buffer.as_bytes())?;
        }
        Array::build(dtype, shape, strides, offset, Storage::shared(buffer))
    }

    /// [`Array::from_buffer`] of a row-major array at byte offset 0, written
    /// straight into its box (what a [`Value::Array`](crate::Value::Array)
    /// holds) rather than built and moved there: the same checks, no copy
    /// of the array after them.
    ///
    /// ```
    /// use fnabi_core::{Array, DType, HostBuffer};
    /// use std::sync::Arc;
    /// let buf = Arc::new(HostBuffer::from_vec(vec![1u8, 2, 3, 4, 5, 6]));
    /// let a = Array::boxed_from_buffer(DType::U8, &[2, 3], buf.clone()).unwrap();
    /// assert_eq!(a.to_string(), "2x3xui8=[1 2 3][4 5 6]");
    /// assert!(Array::boxed_from_buffer(DType::U8, &[7], buf.clone()).is_err()); // past the end
    /// assert!(Array::boxed_from_buffer(DType::BOOL, &[6], buf).is_err()); // not 0 or 1
    /// ```
    pub fn boxed_from_buffer(
        dtype: DType,
        shape: &[usize],
        buffer: Arc<HostBuffer>,
    ) -> Result<Box<Array<'static>>, Error> {
        if dtype == DType::Bool {
            check_bools(buffer.as_bytes())?;
        }
        let storage = Storage::shared(buffer);
        check_row_major(dtype, shape, storage.base(), storage.len())?;
        let strides = c_strides(shape);
        // SAFETY: `shape` and its row-major strides have one length; the
        // layout was just checked against the storage, and so were a bool
        // array's bytes.
        Ok(unsafe {
            Array::boxed_in_place(dtype, shape.iter().copied(), strides.iter().copied(), shape.len(), 0, storage)
        })
    }

    /// An array over a shared buffer from parts that the caller has already
    /// checked, without re-checking them (the hot path of adopting results
    /// whose buffer was made to span exactly their extent).
    ///
    /// # Safety
    /// `shape` and `strides` have the same length, the element count and
    /// every byte extent fit in `isize`, every element addressed (from
    /// `offset` with `strides` in elements) lies inside `buffer`, element
    /// `[0, …, 0]` is aligned for `dtype`, and a bool array holds only 0/1.
    pub unsafe fn from_parts(
        dtype: DType,
        shape: DimVec<usize>,
        strides: DimVec<isize>,
        offset: usize,
        buffer: Arc<HostBuffer>,
    ) -> Array<'static> {
        debug_assert!(check_layout(dtype, &shape, &strides, offset, buffer.as_ptr(), buffer.len()).is_ok());
        Array { dtype, shape, strides, offset, storage: Storage::shared(buffer) }
    }

    /// [`from_parts`](Array::from_parts) written straight into a fresh box
    /// (what a [`Value::Array`](crate::Value) holds), with the shape and
    /// strides given as a memref descriptor's `sizes` and `strides` words:
    /// the hot path of adopting a result. Every field is written once, in
    /// place in the box (an array built on the stack and moved in is copied
    /// with wide loads over narrower stores, which the CPU cannot forward).
    ///
    /// # Safety
    /// As for [`from_parts`](Array::from_parts), with `sizes` non-negative
    /// and as long as `strides`.
    #[inline(always)]
    pub unsafe fn boxed_from_dims(
        dtype: DType,
        sizes: &[i64],
        strides: &[i64],
        offset: usize,
        buffer: Arc<HostBuffer>,
    ) -> Box<Array<'static>> {
        debug_assert_eq!(sizes.len(), strides.len());
        // SAFETY: forwarded to the caller (the same contract).
        unsafe {
            Array::boxed_in_place(
                dtype,
                sizes.iter().map(|&n| n as usize),
                strides.iter().map(|&s| s as isize),
                sizes.len(),
                offset,
                Storage::shared(buffer),
            )
        }
    }

    /// [`from_bytes`](Array::from_bytes) written straight into a fresh box
    /// (what a [`Value::Array`](crate::Value) holds): the layout is checked
    /// first, then each field is written once, in place. (An array built
    /// on the stack and moved into its box is copied whole, a `memcpy` of
    /// its ~150 bytes: most of the cost of viewing a small host array.)
    ///
    /// ```
    /// use fnabi_core::{Array, DType};
    /// let bytes = [1u8, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0];
    /// let a = Array::boxed_from_bytes(DType::I32, &[3], None, &bytes, 0).unwrap();
    /// assert_eq!(*a, Array::from_bytes(DType::I32, &[3], None, &bytes, 0).unwrap());
    /// assert!(Array::boxed_from_bytes(DType::I32, &[4], None, &bytes, 0).is_err());
    /// ```
    pub fn boxed_from_bytes(
        dtype: DType,
        shape: &[usize],
        strides: Option<&[isize]>,
        bytes: &'a [u8],
        offset: usize,
    ) -> Result<Box<Array<'a>>, Error> {
        let row_major;
        let strides = match strides {
            Some(s) => s,
            None => {
                row_major = c_strides(shape);
                &row_major[..]
            }
        };
        let storage = Storage::checked_view(bytes, dtype, shape, strides, offset)?;
        // SAFETY: the layout was checked (shape and strides of one length,
        // every element inside the storage, aligned), and so were a bool
        // array's bytes.
        Ok(unsafe {
            Array::boxed_in_place(dtype, shape.iter().copied(), strides.iter().copied(), shape.len(), offset, storage)
        })
    }

    /// An array written straight into a fresh box, each field once, in
    /// place: building it (or its dims) on the stack and moving it in
    /// copies it with wide loads over narrower stores, which the CPU
    /// cannot forward (the copy waits for the stores to retire).
    ///
    /// # Safety
    /// `shape` and `strides` yield `rank` items each, and the layout fits
    /// `storage` as [`check_layout`] checks; a bool array holds only 0/1.
    #[inline(always)]
    unsafe fn boxed_in_place(
        dtype: DType,
        shape: impl Iterator<Item = usize>,
        strides: impl Iterator<Item = isize>,
        rank: usize,
        offset: usize,
        storage: Storage<'a>,
    ) -> Box<Array<'a>> {
        // The storage's start and length are read before the box is
        // allocated (a caller that has just made them, inlined, keeps them
        // in registers), and the storage is written field by field (as a
        // whole, it is kept on the stack across the allocation and copied
        // with wide loads).
        let Storage { base, len, owner } = storage;
        let mut boxed = Box::<Array<'a>>::new_uninit();
        let p = boxed.as_mut_ptr();
        // SAFETY: `p` is the box's memory, valid for writes and aligned;
        // each field is written exactly once before `assume_init`, the
        // dims after their empty vectors (which `extend` then appends to
        // in place).
        unsafe {
            std::ptr::addr_of_mut!((*p).dtype).write(dtype);
            std::ptr::addr_of_mut!((*p).offset).write(offset);
            std::ptr::addr_of_mut!((*p).storage.base).write(base);
            std::ptr::addr_of_mut!((*p).storage.len).write(len);
            std::ptr::addr_of_mut!((*p).storage.owner).write(owner);
            let to_shape = std::ptr::addr_of_mut!((*p).shape);
            to_shape.write(DimVec::new());
            let to_steps = std::ptr::addr_of_mut!((*p).strides);
            to_steps.write(DimVec::new());
            let (to_shape, to_steps) = (&mut *to_shape, &mut *to_steps);
            if rank <= to_shape.inline_size() {
                // Into the inline storage of the empty vectors, which holds
                // `inline_size` elements.
                let (at_shape, at_steps) = (to_shape.as_mut_ptr(), to_steps.as_mut_ptr());
                for (k, (n, s)) in shape.zip(strides).take(rank).enumerate() {
                    at_shape.add(k).write(n);
                    at_steps.add(k).write(s);
                }
                to_shape.set_len(rank);
                to_steps.set_len(rank);
            } else {
                to_shape.extend(shape.take(rank));
                to_steps.extend(strides.take(rank));
            }
            let array = boxed.assume_init();
            debug_assert_eq!((array.shape.len(), array.strides.len()), (rank, rank));
            debug_assert!(
                check_layout(dtype, &array.shape, &array.strides, offset, array.storage.base(), array.storage.len())
                    .is_ok()
            );
            array
        }
    }

    /// An array of 8-bit floats from their bytes (C order), e.g. what
    /// [`Float8::from_f64`](fnabi_abi::Float8::from_f64) encodes.
    ///
    /// ```
    /// use fnabi_core::{Array, DType, Float8};
    /// let f = Float8::E5M2;
    /// let bits = [1.0, -2.5, 0.0].map(|x| f.from_f64(x).unwrap());
    /// let a = Array::from_float8_bits(f, &[3], bits.to_vec()).unwrap();
    /// assert_eq!(a.dtype(), DType::F8E5M2);
    /// assert_eq!(a.float8_to_f32().unwrap(), [1.0, -2.5, 0.0]);
    /// assert_eq!(a.to_string(), "3xf8E5M2=1 -2.5 0");
    /// ```
    pub fn from_float8_bits(
        format: fnabi_abi::Float8,
        shape: &[usize],
        bits: Vec<u8>,
    ) -> Result<Array<'static>, Error> {
        Array::from_buffer(DType::Float8(format), shape, None, Arc::new(HostBuffer::from_vec(bits)), 0)
    }

    /// The elements of an 8-bit float array as `f32` (exact), in C order;
    /// an error for other dtypes.
    pub fn float8_to_f32(&self) -> Result<Vec<f32>, Error> {
        let DType::Float8(f) = self.dtype else {
            return Err(Error::mismatch("float8_to_f32", "an 8-bit float array", self.dtype.to_string()));
        };
        let bytes = self.storage_bytes();
        let mut out = Vec::with_capacity(self.len());
        self.for_each_offset(|o| out.push(f.to_f32(bytes[o])));
        Ok(out)
    }

    /// Element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Extents, outermost first.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Strides in elements (may be negative or zero).
    #[inline]
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Number of dims.
    #[inline]
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        // Checked at construction.
        self.shape.iter().product()
    }

    /// True when the array has no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of a dense copy (`len * element size`).
    #[inline]
    pub fn nbytes(&self) -> usize {
        self.len() * self.dtype.size()
    }

    /// Byte offset of element `[0, …, 0]` in the storage.
    #[inline]
    pub fn byte_offset(&self) -> usize {
        self.offset
    }

    /// The shared buffer behind this array, if it has one (not borrowed).
    #[inline]
    pub fn buffer(&self) -> Option<&Arc<HostBuffer>> {
        match &self.storage.owner {
            Owner::Shared(b) => Some(b),
            _ => None,
        }
    }

    /// Start of the storage (element `[0, …, 0]` is at `base + byte_offset`).
    #[inline]
    pub fn storage_ptr(&self) -> *const u8 {
        self.storage.base()
    }

    /// Length of the storage in bytes.
    #[inline]
    pub fn storage_len(&self) -> usize {
        self.storage.len()
    }

    /// Pointer to element `[0, …, 0]`.
    #[inline]
    pub fn as_ptr(&self) -> *const u8 {
        self.storage.base().wrapping_add(self.offset)
    }

    /// True when the memory may be written through this array right now:
    /// a mutable borrow, or a writable buffer held by nobody else.
    #[inline]
    pub fn is_writable(&self) -> bool {
        match &self.storage.owner {
            Owner::Shared(b) => b.is_writable() && Arc::strong_count(b) == 1 && Arc::weak_count(b) == 0,
            Owner::Borrowed(_) => false,
            Owner::BorrowedMut(_) => true,
        }
    }

    /// Pointer to element `[0, …, 0]` for writing; an error when the array
    /// is not [writable](Array::is_writable).
    pub fn as_mut_ptr(&mut self) -> Result<*mut u8, Error> {
        if !self.is_writable() {
            return Err(Error::invalid_argument(
                "array is not writable (read-only storage, or shared with another array)",
            ));
        }
        Ok(self.storage.base().wrapping_add(self.offset).cast_mut())
    }

    /// True when the elements are dense in row-major (C) order.
    #[inline]
    pub fn is_c_contiguous(&self) -> bool {
        dense_along(self.shape.iter().zip(&self.strides).rev())
    }

    /// True when the elements are dense in column-major (Fortran) order.
    pub fn is_f_contiguous(&self) -> bool {
        dense_along(self.shape.iter().zip(&self.strides))
    }

    /// The dense bytes in C order, when the array is C-contiguous.
    #[inline]
    pub fn as_bytes(&self) -> Option<&[u8]> {
        if !self.is_c_contiguous() {
            return None;
        }
        // SAFETY: a C-contiguous array covers offset..offset+nbytes, which
        // construction checked to lie inside the storage.
        Some(unsafe { std::slice::from_raw_parts(self.as_ptr(), self.nbytes()) })
    }

    /// The elements as a slice, when C-contiguous and of element type `T`.
    #[inline]
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        if T::DTYPE != self.dtype {
            return None;
        }
        let bytes = self.as_bytes()?;
        // SAFETY: dtype matches T, the start is aligned for T (checked at
        // construction) and bool arrays hold only 0/1 (checked at construction
        // for foreign bytes; Rust-written bools are valid).
        Some(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), self.len()) })
    }

    /// The bytes of a dense array in memory order, when it is C- or
    /// Fortran-contiguous (see [`as_bytes`](Array::as_bytes) for C order only).
    #[inline]
    pub fn as_dense_bytes(&self) -> Option<&[u8]> {
        if !self.is_c_contiguous() && !self.is_f_contiguous() {
            return None;
        }
        // SAFETY: a dense array (in either order) covers offset..offset+nbytes,
        // which construction checked to lie inside the storage.
        Some(unsafe { std::slice::from_raw_parts(self.as_ptr(), self.nbytes()) })
    }

    /// The whole storage the array addresses into, as bytes (element
    /// offsets from [`element_offset`](Array::element_offset) and
    /// [`for_each_offset`](Array::for_each_offset) index it).
    #[inline]
    pub fn storage_bytes(&self) -> &[u8] {
        // SAFETY: the storage (a shared buffer, a borrowed slice) is valid for
        // reads for the array's lifetime, and `&self` keeps writers out.
        unsafe { std::slice::from_raw_parts(self.storage.base(), self.storage.len()) }
    }

    /// The whole storage as writable bytes (the array must be writable).
    /// Crate-private: it could write a bool array's bytes with values other
    /// than 0 and 1; the public writers are typed.
    pub(crate) fn storage_bytes_mut(&mut self) -> Result<&mut [u8], Error> {
        let base = self.as_mut_ptr()?.wrapping_sub(self.offset);
        // SAFETY: as_mut_ptr checked that the storage is writable and
        // uniquely held; `&mut self` keeps every other access out.
        Ok(unsafe { std::slice::from_raw_parts_mut(base, self.storage.len()) })
    }

    /// The elements as a mutable slice, when writable, C-contiguous and of
    /// element type `T`.
    ///
    /// ```
    /// let mut a = fnabi_core::Array::zeros(fnabi_core::DType::I32, &[2, 2]).unwrap();
    /// a.as_mut_slice::<i32>().unwrap().copy_from_slice(&[1, 2, 3, 4]);
    /// assert_eq!(a.to_vec::<i32>().unwrap(), [1, 2, 3, 4]);
    /// assert!(a.as_mut_slice::<f32>().is_err());
    /// ```
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T], Error> {
        self.check_dtype::<T>()?;
        if !self.is_c_contiguous() {
            return Err(Error::invalid_argument("only a C-contiguous array has a mutable slice"));
        }
        let (offset, n) = (self.offset, self.len());
        let bytes = &mut self.storage_bytes_mut()?[offset..];
        // SAFETY: dtype matches T; a C-contiguous array's n elements start at
        // `offset`, aligned for T (checked at construction), inside the
        // storage; writes through a `&mut [T]` keep bools valid.
        Ok(unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<T>(), n) })
    }

    /// The dense bytes in C order to write, when the array is writable,
    /// C-contiguous and not of type bool (bools are written through
    /// [`as_mut_slice::<bool>`](Array::as_mut_slice), which keeps them 0 or 1).
    pub fn as_mut_bytes(&mut self) -> Result<&mut [u8], Error> {
        if self.dtype == DType::Bool {
            return Err(Error::invalid_argument("a bool array's bytes are written as bools (as_mut_slice::<bool>)"));
        }
        if !self.is_c_contiguous() {
            return Err(Error::invalid_argument("only a C-contiguous array has mutable bytes"));
        }
        let (offset, n) = (self.offset, self.nbytes());
        Ok(&mut self.storage_bytes_mut()?[offset..offset + n])
    }

    fn check_dtype<T: Element>(&self) -> Result<(), Error> {
        if T::DTYPE == self.dtype {
            Ok(())
        } else {
            Err(Error::mismatch("array element type", T::DTYPE.to_string(), self.dtype.to_string()))
        }
    }

    /// Byte offset (from the storage start) of the element at `index`,
    /// bounds-checked: `offset + Σ index·stride·size`.
    pub fn element_offset(&self, index: &[usize]) -> Result<usize, Error> {
        if index.len() != self.rank() {
            return Err(Error::mismatch("index rank", self.rank().to_string(), format!("{} ({index:?})", index.len())));
        }
        let mut off = self.offset as isize;
        for (d, ((&i, &n), &s)) in index.iter().zip(&self.shape).zip(&self.strides).enumerate() {
            if i >= n {
                return Err(Error::invalid_argument(format!(
                    "index {index:?} is out of bounds in dim {d} of shape {:?}",
                    self.shape
                )));
            }
            // In bounds, so within the extent checked at construction.
            off += i as isize * s * self.dtype.size() as isize;
        }
        Ok(off as usize)
    }

    /// Loads the element at `index` (bounds- and type-checked).
    pub fn get<T: Element>(&self, index: &[usize]) -> Result<T, Error> {
        self.check_dtype::<T>()?;
        let off = self.element_offset(index)?;
        // SAFETY: the offset is in bounds and aligned (construction checks),
        // and T matches the dtype.
        Ok(unsafe { self.storage.base().add(off).cast::<T>().read() })
    }

    /// Copies the elements into a vector in C order.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, Error> {
        self.check_dtype::<T>()?;
        if let Some(s) = self.as_slice::<T>() {
            return Ok(s.to_vec());
        }
        let mut out = Vec::with_capacity(self.len());
        self.for_each_offset(|off| {
            // SAFETY: offsets produced by for_each_offset are in bounds and aligned.
            out.push(unsafe { self.storage.base().add(off).cast::<T>().read() });
        });
        Ok(out)
    }

    /// Calls `f` with the byte offset (from the storage start) of every
    /// element, in C order.
    pub fn for_each_offset(&self, mut f: impl FnMut(usize)) {
        if self.is_empty() {
            return;
        }
        let es = self.dtype.size() as isize;
        let rank = self.rank();
        let mut idx: DimVec<usize> = smallvec::smallvec![0; rank];
        let mut off = self.offset as isize;
        loop {
            f(off as usize);
            let mut d = rank;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                idx[d] += 1;
                off += self.strides[d] * es;
                if idx[d] < self.shape[d] {
                    break;
                }
                off -= self.strides[d] * es * self.shape[d] as isize;
                idx[d] = 0;
            }
        }
    }

    /// A view that borrows this array's memory (no copy).
    pub fn view(&self) -> Array<'_> {
        // A mutable borrow is reborrowed immutably for the lifetime of &self.
        let owner = match &self.storage.owner {
            Owner::Shared(b) => Owner::Shared(b.clone()),
            Owner::Borrowed(_) | Owner::BorrowedMut(_) => Owner::Borrowed(std::marker::PhantomData),
        };
        let storage = Storage { base: self.storage.base, len: self.storage.len, owner };
        Array {
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            offset: self.offset,
            storage,
        }
    }

    /// The same array as an owned handle when its storage is a shared
    /// buffer: a reference-count increment, no copy and no re-validation;
    /// `None` when it borrows memory.
    pub fn shared(&self) -> Option<Array<'static>> {
        match &self.storage.owner {
            Owner::Shared(b) => Some(Array {
                dtype: self.dtype,
                shape: DimVec::from_slice(&self.shape),
                strides: DimVec::from_slice(&self.strides),
                offset: self.offset,
                storage: Storage { base: self.storage.base, len: self.storage.len, owner: Owner::Shared(b.clone()) },
            }),
            _ => None,
        }
    }

    /// An array that owns its data: shares the buffer when there is one,
    /// copies (densely) when the memory is borrowed.
    pub fn into_owned(self) -> Result<Array<'static>, Error> {
        let Storage { base, len, .. } = self.storage;
        match self.storage.owner {
            Owner::Shared(b) => Ok(Array {
                dtype: self.dtype,
                shape: self.shape,
                strides: self.strides,
                offset: self.offset,
                storage: Storage { base, len, owner: Owner::Shared(b) },
            }),
            _ => self.to_contiguous(),
        }
    }

    /// The same memory with permuted axes (`axes[i]` = old axis of new axis `i`).
    pub fn permuted(&self, axes: &[usize]) -> Result<Array<'_>, Error> {
        let mut seen = vec![false; self.rank()];
        if axes.len() != self.rank() || axes.iter().any(|&a| a >= self.rank() || std::mem::replace(&mut seen[a], true))
        {
            return Err(Error::invalid_argument(format!("{axes:?} is not a permutation of {} axes", self.rank())));
        }
        let mut v = self.view();
        v.shape = axes.iter().map(|&a| self.shape[a]).collect();
        v.strides = axes.iter().map(|&a| self.strides[a]).collect();
        Ok(v)
    }

    /// The same memory with new shape, strides and offset, re-checked
    /// against the storage (used by slicing and broadcasting views).
    pub fn restrided(&self, shape: &[usize], strides: &[isize], byte_offset: usize) -> Result<Array<'_>, Error> {
        let v = self.view();
        Array::build(self.dtype, shape, strides.into(), byte_offset, v.storage)
    }
}

fn check_count(shape: &[usize], got: usize) -> Result<(), Error> {
    let n = element_count(shape)?;
    if n != got {
        return Err(Error::mismatch(format!("element count of shape {shape:?}"), n.to_string(), got.to_string()));
    }
    Ok(())
}

/// Whether `(extent, stride)` pairs, innermost first, step through dense
/// elements: each stride is the product of the extents inside it. Dims of
/// extent 1 may have any stride; an empty array is dense. One pass, with
/// no list of dense strides built to compare against.
#[inline]
fn dense_along<'s>(dims: impl Iterator<Item = (&'s usize, &'s isize)>) -> bool {
    let (mut dense, mut expect) = (true, 1isize);
    for (&n, &s) in dims {
        if n == 0 {
            return true;
        }
        dense &= n == 1 || s == expect;
        expect = expect.saturating_mul(n as isize);
    }
    dense
}

impl Clone for Array<'_> {
    /// Shares a buffer or a read-only borrow; copies a mutably borrowed array
    /// (two arrays never share memory that one of them may write).
    fn clone(&self) -> Self {
        match &self.storage.owner {
            Owner::BorrowedMut(_) => match self.to_contiguous() {
                Ok(a) => a,
                // The source was validated, so its dense copy fits in memory
                // unless allocation fails, which aborts like any Vec clone.
                Err(e) => panic!("cloning a {}-byte array failed: {e}", self.nbytes()),
            },
            _ => Array {
                dtype: self.dtype,
                // `from_slice` copies the (Copy) dims in one go; `clone`
                // would push them one by one (about 3x the instructions).
                shape: DimVec::from_slice(&self.shape),
                strides: DimVec::from_slice(&self.strides),
                offset: self.offset,
                storage: self.storage.clone(),
            },
        }
    }
}

impl PartialEq for Array<'_> {
    /// Equal dtype, shape and elements (bitwise per element, so NaNs with
    /// the same bits compare equal and `-0.0 != 0.0`).
    fn eq(&self, other: &Self) -> bool {
        if self.dtype != other.dtype || self.shape != other.shape {
            return false;
        }
        let es = self.dtype.size();
        let (mut a, mut b) = (Vec::with_capacity(self.len()), Vec::with_capacity(self.len()));
        self.for_each_offset(|o| a.push(o));
        other.for_each_offset(|o| b.push(o));
        a.iter().zip(&b).all(|(&x, &y)| {
            // SAFETY: offsets are in bounds of their storages.
            unsafe {
                std::slice::from_raw_parts(self.storage.base().add(x), es)
                    == std::slice::from_raw_parts(other.storage.base().add(y), es)
            }
        })
    }
}

#[cfg(test)]
mod tests;
