//! Buffer descriptions and the buffer description oracle of the raw function
//! ABI documents ("Memory layout"): a [`BufferDescription`] says how a
//! host buffer lies in memory; [`oracle`] combines it with a signature's
//! [`BufferType`] and the callee's [`LayoutPreference`] into a [`Decision`]:
//! pass as-is, convert (into a described target), or unsupported (with the
//! reason). [`allocate`] is the factory for compatible fresh buffers.
//!
//! Compared with the documents' sketch (`optional<BufferDescription>` plus an
//! exception), the decision is one value, the dynamic dims of the input are
//! collected for the caller (they feed `fbr`, see [`crate::deferred`]), and a
//! cast of the element type happens only when the caller passes
//! [`Cast::Allowed`].
//!
//! ```
//! use fnabi_core::buffer::{oracle, BufferDescription, Cast, Decision, LayoutPreference};
//! use fnabi_core::{Array, BufferType, Dim, DimOrder, ScalarType};
//! let ty = BufferType::new(ScalarType::F32, [Dim::Dynamic, Dim::Static(3)]).unwrap();
//! let a = Array::from_vec(&[2, 3], vec![0f32; 6]).unwrap();
//! let dense = LayoutPreference::from(DimOrder::RowMajor);
//! let d = oracle(&ty, &BufferDescription::from_array(&a), &dense, Cast::Forbidden);
//! assert!(matches!(d, Decision::AsIs { .. }));
//! assert_eq!(d.dynamic_dims(), &[2]);
//! // A transposed view must be made dense for an identity-layout parameter…
//! let t = Array::from_vec(&[3, 2], vec![0f32; 6]).unwrap();
//! let t = t.permuted(&[1, 0]).unwrap();
//! let d = oracle(&ty, &BufferDescription::from_array(&t), &dense, Cast::Forbidden);
//! assert!(matches!(d, Decision::Convert { .. }));
//! // …but passes as-is to a `strided<[?, ?], offset: ?>` one.
//! let d = oracle(&ty, &BufferDescription::from_array(&t), &LayoutPreference::AnyStrided, Cast::Forbidden);
//! assert!(matches!(d, Decision::AsIs { .. }));
//! ```

use crate::array::{Array, DimVec, HostBuffer, byte_extent, element_count};
use crate::error::Error;
use crate::layout::{dense_strides, non_overlapping};
use fnabi_abi::raw::{BufferType, Dim, DimOrder};
use fnabi_abi::scalar::{DType, ScalarType};
use std::fmt;
use std::sync::Arc;

/// How a buffer lies in memory (the documents' `BufferDescription`, after
/// Python's `Py_buffer`): element type, shape, strides in elements
/// (negative and zero allowed), the byte offset of element `[0, …, 0]`, and
/// the length of the backing storage, which the description is checked to
/// stay inside.
///
/// ```
/// use fnabi_core::buffer::BufferDescription;
/// use fnabi_core::{Array, DType, DimOrder};
/// let a = Array::from_vec(&[2, 3], vec![0i16; 6]).unwrap();
/// let t = a.permuted(&[1, 0]).unwrap();
/// let d = BufferDescription::from_array(&t);
/// assert_eq!((d.dtype(), d.shape(), d.strides()), (DType::I16, &[3, 2][..], &[1, 3][..]));
/// assert!(d.is_dense(DimOrder::ColumnMajor) && !d.is_dense(DimOrder::RowMajor));
/// // A fresh zeroed array laid out as described.
/// let f = BufferDescription::dense(DType::F32, &[2, 2], DimOrder::ColumnMajor).unwrap();
/// let b = f.allocate().unwrap();
/// assert_eq!((b.shape(), b.strides()), (&[2, 2][..], &[1, 2][..]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferDescription {
    dtype: DType,
    shape: DimVec<usize>,
    strides: DimVec<isize>,
    byte_offset: usize,
    storage_len: usize,
}

impl BufferDescription {
    /// The description of an array (checked when the array was built).
    pub fn from_array(a: &Array<'_>) -> BufferDescription {
        BufferDescription {
            dtype: a.dtype(),
            shape: a.shape().into(),
            strides: a.strides().into(),
            byte_offset: a.byte_offset(),
            storage_len: a.storage_len(),
        }
    }

    /// A description from raw parts, checked with overflow-checked
    /// arithmetic to address only bytes `0..storage_len`.
    ///
    /// ```
    /// use fnabi_core::buffer::BufferDescription;
    /// use fnabi_core::DType;
    /// // A reversed row of 4 f32 whose element 0 is the last of 16 bytes.
    /// let d = BufferDescription::from_parts(DType::F32, &[4], &[-1], 12, 16).unwrap();
    /// assert_eq!(d.len(), 16);
    /// assert!(BufferDescription::from_parts(DType::F32, &[4], &[-1], 8, 16).is_err());
    /// ```
    pub fn from_parts(
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        byte_offset: usize,
        storage_len: usize,
    ) -> Result<BufferDescription, Error> {
        let n = element_count(shape)?;
        n.checked_mul(dtype.size()).ok_or_else(|| too_large(shape))?;
        match byte_extent(shape, strides, dtype.size())? {
            Some((lo, hi)) => {
                let off = isize::try_from(byte_offset).map_err(|_| too_large(shape))?;
                let inside = matches!((off.checked_add(lo), off.checked_add(hi)),
                    (Some(s), Some(e)) if s >= 0 && e as usize <= storage_len);
                if !inside {
                    return Err(Error::invalid_argument(format!(
                        "buffer {dtype}{shape:?} with strides {strides:?} at byte offset {byte_offset} \
                         addresses bytes outside its {storage_len}-byte storage"
                    )));
                }
            }
            None if byte_offset > storage_len => {
                return Err(Error::invalid_argument(format!(
                    "byte offset {byte_offset} is past the {storage_len}-byte storage"
                )));
            }
            None => {}
        }
        Ok(BufferDescription { dtype, shape: shape.into(), strides: strides.into(), byte_offset, storage_len })
    }

    /// A dense buffer of `shape` in `order`, starting at byte 0 of storage of
    /// exactly its size.
    pub fn dense(dtype: DType, shape: &[usize], order: DimOrder) -> Result<BufferDescription, Error> {
        let len = element_count(shape)?.checked_mul(dtype.size()).ok_or_else(|| too_large(shape))?;
        Ok(BufferDescription {
            dtype,
            shape: shape.into(),
            strides: dense_strides(shape, order),
            byte_offset: 0,
            storage_len: len,
        })
    }

    /// Element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Bytes of a contiguous copy (the documents' `len`): element count ×
    /// element size, whatever the strides.
    pub fn len(&self) -> usize {
        // Checked when the description was made.
        self.shape.iter().product::<usize>() * self.dtype.size()
    }

    /// True when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// Number of dims (the documents' `ndim`).
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Extents, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Strides in elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Byte offset of element `[0, …, 0]` in the storage.
    pub fn byte_offset(&self) -> usize {
        self.byte_offset
    }

    /// Length of the backing storage in bytes.
    pub fn storage_len(&self) -> usize {
        self.storage_len
    }

    /// True when the elements are dense in `order` (dims of extent 1 may
    /// have any stride; an empty buffer is dense).
    pub fn is_dense(&self, order: DimOrder) -> bool {
        if self.is_empty() {
            return true;
        }
        let mut expect: isize = 1;
        let rank = self.rank();
        for k in 0..rank {
            let i = match order {
                DimOrder::RowMajor => rank - 1 - k,
                DimOrder::ColumnMajor => k,
            };
            let n = self.shape[i];
            if n != 1 && self.strides[i] != expect {
                return false;
            }
            // Cannot overflow: the element count fits (checked at construction).
            expect *= n as isize;
        }
        true
    }

    /// Fresh, zeroed storage laid out as described (an owned, writable
    /// array over `storage_len` bytes).
    pub fn allocate(&self) -> Result<Array<'static>, Error> {
        let buf = Arc::new(HostBuffer::zeroed(self.storage_len)?);
        Array::from_buffer(self.dtype, &self.shape, Some(&self.strides), buf, self.byte_offset)
    }
}

fn too_large(shape: &[usize]) -> Error {
    Error::invalid_argument(format!("buffer of shape {shape:?} is too large (size overflows)"))
}

impl fmt::Display for BufferDescription {
    /// `f32[2, 3] strides [3, 1] offset 0 in 24 bytes`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{:?} strides {:?} offset {} in {} bytes",
            self.dtype,
            self.shape.as_slice(),
            self.strides.as_slice(),
            self.byte_offset,
            self.storage_len
        )
    }
}

/// What memory layout a callee accepts for one buffer parameter.
///
/// - [`Dense`](LayoutPreference::Dense): only dense data in this order —
///   the raw signature's contiguity hint ([`DimOrder`], `c` field), and what an
///   MLIR parameter with identity layout (`memref<?x?xf32>`) needs, since it
///   ignores the descriptor's offset and strides;
/// - [`AnyStrided`](LayoutPreference::AnyStrided): any strides as they are
///   (`memref<?x?xf32, strided<[?, ?], offset: ?>>`); a cast converts to
///   dense row-major;
/// - [`Strides`](LayoutPreference::Strides): exactly these strides in
///   elements, `None` for a dynamic one (`strided<[?, 1]>`); dims of extent
///   1 match any stride.
///
/// The byte offset never matters: a backend passes the address of element
/// `[0, …, 0]` as the descriptor's aligned pointer (offset 0).
///
/// ```
/// use fnabi_core::buffer::{oracle, BufferDescription, Cast, Decision, LayoutPreference};
/// use fnabi_core::{Array, BufferType, Dim, DimOrder, ScalarType};
/// let ty = BufferType::new(ScalarType::I32, [Dim::Dynamic, Dim::Dynamic]).unwrap();
/// let a = Array::from_vec(&[2, 3], vec![0i32; 6]).unwrap();
/// let t = BufferDescription::from_array(&a.permuted(&[1, 0]).unwrap()); // 3x2, strides [1, 3]
/// // a strided callee takes the transpose as it is...
/// let d = oracle(&ty, &t, &LayoutPreference::AnyStrided, Cast::Forbidden);
/// assert!(matches!(d, Decision::AsIs { .. }));
/// // ...one that needs the inner stride 1 (`strided<[?, 1]>`) needs a copy
/// let inner_unit = LayoutPreference::Strides([None, Some(1)].into_iter().collect());
/// let target = oracle(&ty, &t, &inner_unit, Cast::Forbidden).into_result().unwrap().unwrap();
/// assert_eq!(target.strides(), &[2, 1]);
/// assert_eq!(LayoutPreference::default(), LayoutPreference::Dense(DimOrder::RowMajor));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LayoutPreference {
    /// Dense in this order.
    Dense(DimOrder),
    /// Any strides.
    AnyStrided,
    /// Exactly these strides (in elements; `None` = dynamic, any).
    Strides(DimVec<Option<isize>>),
}

impl From<DimOrder> for LayoutPreference {
    /// The raw signature's contiguity hint.
    fn from(l: DimOrder) -> Self {
        LayoutPreference::Dense(l)
    }
}

impl Default for LayoutPreference {
    /// Dense row-major, the raw ABI's default.
    fn default() -> Self {
        LayoutPreference::Dense(DimOrder::RowMajor)
    }
}

/// Whether the oracle may convert the element type (never silently).
///
/// ```
/// use fnabi_core::buffer::{oracle, BufferDescription, Cast, Decision, LayoutPreference};
/// use fnabi_core::{Array, BufferType, DType, Dim, ScalarType};
/// let ty = BufferType::new(ScalarType::F64, [Dim::Static(2)]).unwrap();
/// let a = Array::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
/// let desc = BufferDescription::from_array(&a);
/// let pref = LayoutPreference::default();
/// assert!(matches!(oracle(&ty, &desc, &pref, Cast::default()), Decision::Unsupported(_)));
/// let target = oracle(&ty, &desc, &pref, Cast::Allowed).into_result().unwrap().unwrap();
/// assert_eq!(target.dtype(), DType::F64);
/// assert_eq!(target.storage_len(), 2 * 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Cast {
    /// A different element type is [`Unsupported`].
    #[default]
    Forbidden,
    /// A different element type converts (see [`crate::layout::cast_copy`]).
    Allowed,
}

/// Why a buffer cannot be used for a parameter.
///
/// ```
/// use fnabi_core::buffer::{oracle, BufferDescription, Cast, Decision, LayoutPreference, Unsupported};
/// use fnabi_core::{Array, BufferType, Dim, DimOrder, ScalarType};
/// let ty = BufferType::new(ScalarType::F32, [Dim::Static(4)]).unwrap();
/// let a = Array::from_vec(&[3], vec![0f32; 3]).unwrap();
/// let pref = LayoutPreference::from(DimOrder::RowMajor);
/// let d = oracle(&ty, &BufferDescription::from_array(&a), &pref, Cast::Forbidden);
/// assert!(matches!(d, Decision::Unsupported(Unsupported::Dim { dim: 0, expected: 4, got: 3 })));
/// assert_eq!(d.into_result().unwrap_err().to_string(), "dim 0: expected 4, got 3");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unsupported {
    /// The element type differs (and no cast was allowed).
    ElementType {
        /// The signature's type.
        expected: ScalarType,
        /// The buffer's type.
        got: DType,
    },
    /// The number of dims differs.
    Rank {
        /// The signature's rank.
        expected: usize,
        /// The buffer's rank.
        got: usize,
    },
    /// A static dim differs.
    Dim {
        /// Which dim (0 = outermost).
        dim: usize,
        /// The signature's extent.
        expected: u32,
        /// The buffer's extent.
        got: usize,
    },
    /// The exact strides asked for cannot describe this shape without
    /// overlapping elements (or have the wrong rank), so no conversion can
    /// produce them.
    Strides {
        /// The strides asked for (`None` = dynamic).
        expected: Vec<Option<isize>>,
        /// The buffer's shape.
        shape: Vec<usize>,
    },
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unsupported::ElementType { expected, got } => {
                write!(f, "element type: expected {expected:#}, got {got} (casting is opt-in)")
            }
            Unsupported::Rank { expected, got } => write!(f, "rank: expected {expected}, got {got}"),
            Unsupported::Dim { dim, expected, got } => write!(f, "dim {dim}: expected {expected}, got {got}"),
            Unsupported::Strides { expected, shape } => {
                write!(f, "strides: cannot lay out shape {:?} with strides [", shape.as_slice())?;
                for (i, s) in expected.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match s {
                        Some(s) => write!(f, "{s}")?,
                        None => f.write_str("?")?,
                    }
                }
                f.write_str("]")
            }
        }
    }
}

impl std::error::Error for Unsupported {}

impl From<Unsupported> for Error {
    /// A [`CallError`](crate::error::CallError) at the root of the
    /// arguments, for the caller to place with
    /// [`CallError::locate`](crate::error::CallError::locate).
    #[cold]
    fn from(u: Unsupported) -> Error {
        use crate::error::{CallError, CallErrorKind};
        let kind = match u {
            Unsupported::ElementType { expected, got } => {
                CallErrorKind::Dtype { expected: DType::Scalar(expected), got }
            }
            Unsupported::Rank { expected, got } => CallErrorKind::Rank { expected, got },
            Unsupported::Dim { dim, expected, got } => {
                CallErrorKind::Dim { axis: dim, expected: expected as usize, got }
            }
            Unsupported::Strides { .. } => CallErrorKind::Invalid(u.to_string()),
        };
        CallError::argument(kind).into()
    }
}

/// The oracle's answer for one buffer.
///
/// ```
/// use fnabi_core::buffer::{oracle, BufferDescription, Cast, Decision, LayoutPreference};
/// use fnabi_core::{Array, BufferType, Dim, DimOrder, ScalarType};
/// // Buffer<uint8[?x4x?]> and a dense 5x4x7 array: as it is, dynamic dims 5 and 7
/// let ty = BufferType::new(ScalarType::U8, [Dim::Dynamic, Dim::Static(4), Dim::Dynamic]).unwrap();
/// let a = Array::zeros(fnabi_core::DType::U8, &[5, 4, 7]).unwrap();
/// let d = oracle(&ty, &BufferDescription::from_array(&a), &DimOrder::RowMajor.into(), Cast::Forbidden);
/// assert!(matches!(d, Decision::AsIs { .. }));
/// assert_eq!(d.dynamic_dims(), &[5, 7]);
/// // column-major wanted: convert into a dense column-major buffer
/// let d = oracle(&ty, &BufferDescription::from_array(&a), &DimOrder::ColumnMajor.into(), Cast::Forbidden);
/// match d {
///     Decision::Convert { target, dynamic_dims } => {
///         assert_eq!(target.strides(), &[1, 5, 20]);
///         assert_eq!(dynamic_dims.as_slice(), &[5, 7]);
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Pass the buffer as it is (zero copy).
    AsIs {
        /// The extents of the signature's dynamic dims, in order.
        dynamic_dims: DimVec<usize>,
    },
    /// Copy (and cast, if allowed and needed) into a buffer laid out as `target`.
    Convert {
        /// The layout to convert into (fresh storage of `storage_len` bytes).
        target: BufferDescription,
        /// The extents of the signature's dynamic dims, in order.
        dynamic_dims: DimVec<usize>,
    },
    /// The buffer cannot be used.
    Unsupported(Unsupported),
}

impl Decision {
    /// The extents of the dynamic dims (empty when unsupported).
    pub fn dynamic_dims(&self) -> &[usize] {
        match self {
            Decision::AsIs { dynamic_dims } | Decision::Convert { dynamic_dims, .. } => dynamic_dims,
            Decision::Unsupported(_) => &[],
        }
    }

    /// `Ok(None)` for as-is, `Ok(Some(target))` for a conversion, the
    /// reason as an [`Error`] otherwise.
    pub fn into_result(self) -> Result<Option<BufferDescription>, Error> {
        match self {
            Decision::AsIs { .. } => Ok(None),
            Decision::Convert { target, .. } => Ok(Some(target)),
            Decision::Unsupported(u) => Err(u.into()),
        }
    }
}

/// The buffer description oracle: can `desc` be passed for a parameter of
/// type `ty` whose callee accepts `pref`?
///
/// In order: a different element type is unsupported unless `cast` allows
/// it (then it converts); a different rank or static dim is unsupported,
/// naming the dim; otherwise the dynamic dims are collected and the layout
/// decides: as-is when `desc` satisfies `pref`, else a conversion into the
/// layout `pref` describes (dense row-major for `AnyStrided`).
/// Allocation-free for ranks up to 6.
pub fn oracle(ty: &BufferType, desc: &BufferDescription, pref: &LayoutPreference, cast: Cast) -> Decision {
    let expected = DType::Scalar(ty.dtype());
    let recast = desc.dtype != expected;
    if recast && cast == Cast::Forbidden {
        return Decision::Unsupported(Unsupported::ElementType { expected: ty.dtype(), got: desc.dtype });
    }
    if ty.rank() != desc.rank() {
        return Decision::Unsupported(Unsupported::Rank { expected: ty.rank(), got: desc.rank() });
    }
    let mut dynamic_dims = DimVec::new();
    for (dim, (d, &got)) in ty.dims().iter().zip(&desc.shape).enumerate() {
        match *d {
            Dim::Static(n) if n as usize != got => {
                return Decision::Unsupported(Unsupported::Dim { dim, expected: n, got });
            }
            Dim::Static(_) => {}
            Dim::Dynamic => dynamic_dims.push(got),
        }
    }
    let satisfied = match pref {
        LayoutPreference::Dense(order) => desc.is_dense(*order),
        LayoutPreference::AnyStrided => true,
        LayoutPreference::Strides(want) => {
            want.len() == desc.rank()
                && (desc.is_empty()
                    || want
                        .iter()
                        .zip(&desc.shape)
                        .zip(&desc.strides)
                        .all(|((w, &n), &s)| n == 1 || w.is_none_or(|w| w == s)))
        }
    };
    if satisfied && !recast {
        return Decision::AsIs { dynamic_dims };
    }
    match target_for(expected, &desc.shape, pref) {
        Ok(target) => Decision::Convert { target, dynamic_dims },
        Err(u) => Decision::Unsupported(u),
    }
}

/// The layout a conversion produces for `pref`.
fn target_for(dtype: DType, shape: &[usize], pref: &LayoutPreference) -> Result<BufferDescription, Unsupported> {
    let unsupported =
        |want: &DimVec<Option<isize>>| Unsupported::Strides { expected: want.to_vec(), shape: shape.into() };
    let strides = match pref {
        LayoutPreference::Dense(order) => dense_strides(shape, *order),
        LayoutPreference::AnyStrided => dense_strides(shape, DimOrder::RowMajor),
        LayoutPreference::Strides(want) => {
            if want.len() != shape.len() {
                return Err(unsupported(want));
            }
            // Static strides as given; each dynamic one, innermost first,
            // just outside everything placed so far (dense when all are dynamic).
            let mut strides: DimVec<isize> = want.iter().map(|w| w.unwrap_or(0)).collect();
            let mut extent: usize = 1;
            for (i, w) in want.iter().enumerate() {
                if w.is_some() && shape[i] > 1 {
                    let e = strides[i].unsigned_abs().checked_mul(shape[i]).ok_or_else(|| unsupported(want))?;
                    extent = extent.max(e);
                }
            }
            for i in (0..shape.len()).rev() {
                if want[i].is_none() {
                    strides[i] = isize::try_from(extent).map_err(|_| unsupported(want))?;
                    extent = extent.checked_mul(shape[i].max(1)).ok_or_else(|| unsupported(want))?;
                }
            }
            if !non_overlapping(shape, &strides) {
                return Err(unsupported(want));
            }
            strides
        }
    };
    let fail = |_| Unsupported::Strides { expected: strides.iter().map(|&s| Some(s)).collect(), shape: shape.into() };
    let (offset, storage_len) = match byte_extent(shape, &strides, dtype.size()).map_err(fail)? {
        Some((lo, hi)) => ((-lo) as usize, (hi - lo) as usize),
        None => (0, 0),
    };
    BufferDescription::from_parts(dtype, shape, &strides, offset, storage_len).map_err(fail)
}

/// The concrete shape of `ty` with its dynamic dims taken, in order, from
/// `dynamic_dims` (which must hold exactly one extent per dynamic dim).
///
/// ```
/// use fnabi_core::buffer::resolve_shape;
/// use fnabi_core::{BufferType, Dim, ScalarType};
/// let ty = BufferType::new(ScalarType::I8, [Dim::Dynamic, Dim::Static(4), Dim::Dynamic]).unwrap();
/// assert_eq!(resolve_shape(&ty, &[2, 7]).unwrap().as_slice(), &[2, 4, 7]);
/// assert!(resolve_shape(&ty, &[2]).is_err());
/// ```
pub fn resolve_shape(ty: &BufferType, dynamic_dims: &[usize]) -> Result<DimVec<usize>, Error> {
    let want = ty.dims().iter().filter(|d| **d == Dim::Dynamic).count();
    if want != dynamic_dims.len() {
        return Err(Error::mismatch(
            format!("number of dynamic dims of {ty}"),
            want.to_string(),
            dynamic_dims.len().to_string(),
        ));
    }
    let mut dynamic = dynamic_dims.iter();
    Ok(ty
        .dims()
        .iter()
        .map(|d| match d {
            Dim::Static(n) => *n as usize,
            Dim::Dynamic => *dynamic.next().unwrap_or(&0),
        })
        .collect())
}

/// Checks a concrete shape against a buffer type (rank and static dims).
pub fn check_shape(ty: &BufferType, shape: &[usize]) -> Result<(), Error> {
    if ty.rank() != shape.len() {
        return Err(Unsupported::Rank { expected: ty.rank(), got: shape.len() }.into());
    }
    for (dim, (d, &got)) in ty.dims().iter().zip(shape).enumerate() {
        if let Dim::Static(n) = *d
            && n as usize != got
        {
            return Err(Unsupported::Dim { dim, expected: n, got }.into());
        }
    }
    Ok(())
}

/// The factory: a fresh, zeroed buffer compatible with `ty` for the
/// concrete `shape` (dense in the type's preferred layout).
///
/// ```
/// use fnabi_core::buffer::allocate;
/// use fnabi_core::{BufferType, Dim, DimOrder, ScalarType};
/// let ty = BufferType::new(ScalarType::F64, [Dim::Static(2), Dim::Dynamic]).unwrap().with_layout(DimOrder::ColumnMajor);
/// let a = allocate(&ty, &[2, 5]).unwrap();
/// assert!(a.is_f_contiguous() && a.is_writable());
/// assert_eq!(allocate(&ty, &[3, 5]).unwrap_err().to_string(), "dim 0: expected 2, got 3");
/// ```
pub fn allocate(ty: &BufferType, shape: &[usize]) -> Result<Array<'static>, Error> {
    check_shape(ty, shape)?;
    BufferDescription::dense(DType::Scalar(ty.dtype()), shape, ty.layout())?.allocate()
}

/// Converts `src` into fresh storage laid out as `target` (same shape; the
/// element type converts when it differs — the oracle only asks for that
/// when the caller allowed a cast).
pub fn convert(src: &Array<'_>, target: &BufferDescription) -> Result<Array<'static>, Error> {
    let mut out = target.allocate()?;
    crate::layout::cast_copy(src, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(dtype: ScalarType, dims: &[i32]) -> BufferType {
        BufferType::new(dtype, dims.iter().map(|&d| Dim::from_i32(d).unwrap())).unwrap()
    }

    fn desc(a: &Array<'_>) -> BufferDescription {
        BufferDescription::from_array(a)
    }

    #[test]
    fn unsupported_reasons_name_what_differs() {
        let a = Array::from_vec(&[2, 3], vec![0i32; 6]).unwrap();
        let d = desc(&a);
        let dense = LayoutPreference::default();
        let u = |t: BufferType| match oracle(&t, &d, &dense, Cast::Forbidden) {
            Decision::Unsupported(u) => u.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(u(ty(ScalarType::F32, &[2, 3])), "element type: expected f32, got i32 (casting is opt-in)");
        assert_eq!(u(ty(ScalarType::I32, &[2, 3, 1])), "rank: expected 3, got 2");
        assert_eq!(u(ty(ScalarType::I32, &[-1, 4])), "dim 1: expected 4, got 3");
        let e = oracle(&ty(ScalarType::I32, &[-1, 4]), &d, &dense, Cast::Forbidden).into_result().unwrap_err();
        assert_eq!(e.to_string(), "dim 1: expected 4, got 3");
        let e = oracle(&ty(ScalarType::I64, &[2, 3]), &d, &dense, Cast::Forbidden).into_result().unwrap_err();
        assert_eq!(e.to_string(), "element type: expected i64, got i32");
        let e = oracle(&ty(ScalarType::I32, &[2]), &d, &dense, Cast::Forbidden).into_result().unwrap_err();
        assert_eq!(e.to_string(), "rank: expected 1, got 2");
        // Bool arrays have no ABI type; they convert only by cast.
        let b = Array::from_vec(&[2], vec![true, false]).unwrap();
        assert!(matches!(
            oracle(&ty(ScalarType::U8, &[2]), &desc(&b), &dense, Cast::Forbidden),
            Decision::Unsupported(Unsupported::ElementType { .. })
        ));
    }

    #[test]
    fn casts_are_explicit_and_convert() {
        let a = Array::from_vec(&[3], vec![1i32, -2, 3]).unwrap();
        let t = ty(ScalarType::F64, &[-1]);
        let d = oracle(&t, &desc(&a), &LayoutPreference::AnyStrided, Cast::Allowed);
        let Decision::Convert { target, dynamic_dims } = d else { panic!("{d:?}") };
        assert_eq!(dynamic_dims.as_slice(), &[3]);
        assert_eq!(target, BufferDescription::dense(DType::F64, &[3], DimOrder::RowMajor).unwrap());
        let out = convert(&a, &target).unwrap();
        assert_eq!(out.to_vec::<f64>().unwrap(), [1.0, -2.0, 3.0]);
    }

    #[test]
    fn layout_preferences() {
        let a = Array::from_vec(&[4, 5], (0..20).collect::<Vec<u16>>()).unwrap();
        let t = a.permuted(&[1, 0]).unwrap(); // 5x4, column-major
        let ty2 = ty(ScalarType::U16, &[-1, -1]);
        let dec = |x: &Array<'_>, p: LayoutPreference| oracle(&ty2, &desc(x), &p, Cast::Forbidden);
        assert!(matches!(dec(&t, DimOrder::ColumnMajor.into()), Decision::AsIs { .. }));
        let Decision::Convert { target, .. } = dec(&t, DimOrder::RowMajor.into()) else { panic!() };
        assert_eq!(target.strides(), &[4, 1]);
        assert_eq!(convert(&t, &target).unwrap(), t);
        assert!(matches!(dec(&t, LayoutPreference::AnyStrided), Decision::AsIs { .. }));
        // Exact strides: `strided<[1, ?]>` accepts the column-major view.
        let s = |v: &[Option<isize>]| LayoutPreference::Strides(v.into());
        assert!(matches!(dec(&t, s(&[Some(1), None])), Decision::AsIs { .. }));
        // `strided<[?, 1]>` asks for row-major rows with any pitch.
        let Decision::Convert { target, .. } = dec(&t, s(&[None, Some(1)])) else { panic!() };
        assert_eq!(target.strides(), &[4, 1]);
        // Padded rows: `strided<[8, 1]>` for 5x4 needs 4*8 + 4 elements.
        let Decision::Convert { target, .. } = dec(&t, s(&[Some(8), Some(1)])) else { panic!() };
        assert_eq!((target.strides(), target.storage_len(), target.len()), (&[8isize, 1][..], 36 * 2, 40));
        let padded = convert(&t, &target).unwrap();
        assert_eq!(padded, t);
        assert!(matches!(dec(&padded, s(&[Some(8), Some(1)])), Decision::AsIs { .. }));
        // Negative static strides: element 0 at the end of the storage.
        let Decision::Convert { target, .. } = dec(&t, s(&[Some(-4), Some(1)])) else { panic!() };
        assert_eq!(target.byte_offset(), 16 * 2);
        assert_eq!(convert(&t, &target).unwrap(), t);
        // Impossible strides.
        let d = dec(&t, s(&[Some(1), Some(1)]));
        assert_eq!(
            d,
            Decision::Unsupported(Unsupported::Strides { expected: vec![Some(1), Some(1)], shape: vec![5, 4] })
        );
        assert_eq!(
            Error::from(Unsupported::Strides {
                expected: [None, Some(0)].into_iter().collect(),
                shape: [2, 2].into_iter().collect()
            })
            .to_string(),
            "strides: cannot lay out shape [2, 2] with strides [?, 0]"
        );
        assert!(matches!(dec(&t, s(&[Some(1)])), Decision::Unsupported(Unsupported::Strides { .. })));
        // Dims of extent 1 and empty buffers match any strides.
        let row = a.restrided(&[1, 5], &[99, 1], 0).unwrap();
        assert!(matches!(dec(&row, s(&[Some(7), Some(1)])), Decision::AsIs { .. }));
        let empty = a.restrided(&[0, 5], &[3, 3], 0).unwrap();
        assert!(matches!(dec(&empty, DimOrder::RowMajor.into()), Decision::AsIs { .. }));
    }

    #[test]
    fn descriptions_are_checked() {
        assert!(BufferDescription::from_parts(DType::F32, &[2, 3], &[3, 1], 0, 24).is_ok());
        let e = BufferDescription::from_parts(DType::F32, &[2, 3], &[3, 1], 4, 24).unwrap_err();
        assert!(e.to_string().contains("outside its 24-byte storage"), "{e}");
        assert!(BufferDescription::from_parts(DType::F32, &[2, 3], &[3], 0, 24).is_err());
        assert!(BufferDescription::from_parts(DType::F64, &[usize::MAX, 2], &[1, 1], 0, 24).is_err());
        assert!(BufferDescription::from_parts(DType::F64, &[3, 2], &[isize::MAX, 1], 0, usize::MAX).is_err());
        assert!(BufferDescription::from_parts(DType::F64, &[0, 2], &[1, 1], 25, 24).is_err());
        let d = BufferDescription::from_parts(DType::U8, &[1000, 2], &[0, 1], 0, 2).unwrap();
        assert_eq!((d.len(), d.rank(), d.is_empty()), (2000, 2, false));
        assert_eq!(d.to_string(), "u8[1000, 2] strides [0, 1] offset 0 in 2 bytes");
        assert!(!d.is_dense(DimOrder::RowMajor));
        let f = BufferDescription::dense(DType::I8, &[2, 3], DimOrder::ColumnMajor).unwrap();
        assert!(f.is_dense(DimOrder::ColumnMajor) && !f.is_dense(DimOrder::RowMajor));
        let a = f.allocate().unwrap();
        assert!(a.is_f_contiguous());
        assert_eq!(BufferDescription::from_array(&a), f);
    }

    #[test]
    fn factory_and_shapes() {
        let t = ty(ScalarType::U32, &[-1, 3]);
        assert_eq!(resolve_shape(&t, &[5]).unwrap().as_slice(), &[5, 3]);
        assert_eq!(
            resolve_shape(&t, &[]).unwrap_err().to_string(),
            "number of dynamic dims of Buffer<uint32[?x3]>: expected 1, got 0"
        );
        let a = allocate(&t, &[5, 3]).unwrap();
        assert_eq!((a.dtype(), a.shape()), (DType::U32, &[5usize, 3][..]));
        assert!(a.is_c_contiguous());
        assert_eq!(allocate(&t, &[5]).unwrap_err().to_string(), "rank: expected 2, got 1");
    }
}
