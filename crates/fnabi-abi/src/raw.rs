//! The raw function ABI (attributes `fv`, `f`, `fbr`): the flat, typed list of
//! a function's inputs and results.
//!
//! ```text
//! signature     ::= 'I' length-prefixed(type-sequence) 'R' length-prefixed(type-sequence)
//! type-sequence ::= (buffer-type | scalar-type | ref-object-type | unrecognized-type)*
//! buffer-type   ::= 'B' length-prefixed(('t' code)? ('c' layout)? ('d' integer)*)
//! scalar-type   ::= 'S' length-prefixed(('t' code)?)
//! ref-object    ::= 'O' length-prefixed()        unrecognized ::= 'U' length-prefixed()
//! ```
//!
//! [`RawSignature`] is the owned form; [`RawSignatureReader`] reads the same
//! signature zero-copy, without allocating. Both are strict where the C++
//! reference is silent: any lexical error, an unknown item or field tag, a
//! scalar code outside 0–11, a negative dim other than `-1`, a missing,
//! repeated or unknown top-level span is a [`ParseError`] with its byte
//! offset — never a silently shortened list. Like the reference they accept
//! `I` and `R` in either order, `t` after `d`, and a repeated `t` (the last
//! wins).
//!
//! The `c` field is fnabi's versioned extension for the documents'
//! *contiguity hint*: `c1` marks a buffer whose preferred layout is
//! column-major. It is written only when not the default (row-major) and a
//! signature that uses it has ABI version `fv = 2`
//! ([`RawSignature::abi_version`]); version-1 signatures mangle, parse and
//! print exactly as the reference does.
//!
//! ```
//! use fnabi_abi::RawSignature;
//! let sig = RawSignature::parse("I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64").unwrap();
//! assert_eq!(
//!     sig.to_string(),
//!     "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)"
//! );
//! assert_eq!(RawSignature::parse_human(&sig.to_string()).unwrap(), sig);
//! assert_eq!(sig.to_mangled(), "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64");
//! ```

use crate::error::ParseError;
use crate::limits::cautious_capacity;
use crate::mangle::{SignatureBuilder, decimal};
use crate::scalar::ScalarType;
use std::fmt;
use std::str::FromStr;

mod human;
mod reader;

pub use reader::{BufferRef, RawSignatureReader, RawTypeReader, RawTypeRef};

/// One dimension of a buffer type.
///
/// ```
/// use fnabi_abi::Dim;
/// assert_eq!(Dim::from_i32(-1), Some(Dim::Dynamic));
/// assert_eq!(Dim::from_i32(-2), None);
/// assert_eq!(Dim::from_i32(4), Some(Dim::Static(4)));
/// assert_eq!((Dim::Static(4).to_i32(), Dim::Dynamic.to_i32()), (4, -1));
/// assert_eq!(Dim::Static(4).as_static(), Some(4));
/// assert_eq!(format!("{}x{}", Dim::Dynamic, Dim::Static(4)), "?x4");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// Known only when called (`d-1`, printed `?`).
    Dynamic,
    /// A fixed extent (at most `i32::MAX`, the range of a mangled integer).
    Static(u32),
}

impl Dim {
    /// The extent if static.
    pub fn as_static(self) -> Option<u32> {
        match self {
            Dim::Static(n) => Some(n),
            Dim::Dynamic => None,
        }
    }

    /// The mangled integer: the extent, or -1.
    pub fn to_i32(self) -> i32 {
        match self {
            // Extents are validated to be <= i32::MAX when a BufferType is built.
            Dim::Static(n) => i32::try_from(n).unwrap_or(i32::MAX),
            Dim::Dynamic => -1,
        }
    }

    /// The dim of a mangled integer: -1 is dynamic, other negatives are `None`.
    pub fn from_i32(v: i32) -> Option<Dim> {
        match v {
            -1 => Some(Dim::Dynamic),
            v if v >= 0 => Some(Dim::Static(v as u32)),
            _ => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_dim(f, *self)
    }
}

/// Writes a dim as `Display` does (`?` or the extent) into any writer.
fn write_dim(f: &mut (impl fmt::Write + ?Sized), d: Dim) -> fmt::Result {
    match d {
        Dim::Dynamic => f.write_char('?'),
        Dim::Static(n) => f.write_str(decimal(u64::from(n), &mut [0; 20])),
    }
}

/// How many dims a buffer type holds in place, without a heap allocation
/// (rank 6 and below: almost every real tensor; as many as an array keeps
/// in place).
const INLINE_DIMS: usize = 6;

/// The dims of a buffer type: up to [`INLINE_DIMS`] in place, more in one
/// exact-size heap slice. Compared, hashed and printed as the slice.
#[derive(Clone)]
enum Dims {
    Inline { len: u8, dims: [Dim; INLINE_DIMS] },
    Heap(Box<[Dim]>),
}

impl Dims {
    fn as_slice(&self) -> &[Dim] {
        match self {
            Dims::Inline { len, dims } => &dims[..usize::from(*len)],
            Dims::Heap(d) => d,
        }
    }

    /// The `len` dims of `dims`: in place up to [`INLINE_DIMS`], else in
    /// one allocation of exactly `len`.
    #[inline]
    fn new(len: usize, dims: impl Iterator<Item = Dim>) -> Dims {
        if len <= INLINE_DIMS {
            let mut inline = [Dim::Dynamic; INLINE_DIMS];
            for (slot, d) in inline.iter_mut().zip(dims) {
                *slot = d;
            }
            Dims::Inline { len: len as u8, dims: inline }
        } else {
            let mut v = Vec::with_capacity(len);
            v.extend(dims.take(len));
            Dims::Heap(v.into_boxed_slice())
        }
    }

    fn from_vec(v: Vec<Dim>) -> Dims {
        if v.len() <= INLINE_DIMS {
            let mut dims = [Dim::Dynamic; INLINE_DIMS];
            dims[..v.len()].copy_from_slice(&v);
            Dims::Inline { len: v.len() as u8, dims }
        } else {
            Dims::Heap(v.into_boxed_slice())
        }
    }
}

impl PartialEq for Dims {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Dims {}

impl std::hash::Hash for Dims {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl fmt::Debug for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// The order of a buffer's dimensions in memory: the preferred layout of the
/// documents' contiguity hint (raw ABI version 2, `c` field).
///
/// ```
/// use fnabi_abi::{BufferType, Dim, DimOrder, ScalarType};
/// assert_eq!(DimOrder::default(), DimOrder::RowMajor);
/// assert_eq!(DimOrder::ColumnMajor.code(), 1);
/// assert_eq!(DimOrder::from_code(1), Some(DimOrder::ColumnMajor));
/// assert_eq!(DimOrder::from_code(2), None);
/// let b = BufferType::new(ScalarType::F64, [Dim::Static(2), Dim::Static(3)])
///     .unwrap()
///     .with_layout(DimOrder::ColumnMajor);
/// assert_eq!(b.to_string(), "Buffer<float64[2x3], column-major>");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DimOrder {
    /// C order: the last index varies fastest. The default.
    #[default]
    RowMajor,
    /// Fortran order: the first index varies fastest.
    ColumnMajor,
}

impl DimOrder {
    /// The code of the `c` field (0 row-major, 1 column-major).
    pub fn code(self) -> i32 {
        match self {
            DimOrder::RowMajor => 0,
            DimOrder::ColumnMajor => 1,
        }
    }

    /// The layout of a `c` field code.
    pub fn from_code(c: i32) -> Option<DimOrder> {
        match c {
            0 => Some(DimOrder::RowMajor),
            1 => Some(DimOrder::ColumnMajor),
            _ => None,
        }
    }

    /// The human-readable name (`row-major`, `column-major`).
    pub fn name(self) -> &'static str {
        match self {
            DimOrder::RowMajor => "row-major",
            DimOrder::ColumnMajor => "column-major",
        }
    }
}

/// A static dimension larger than the ABI's 32-bit signed integers hold.
///
/// ```
/// use fnabi_abi::raw::DimOutOfRange;
/// use fnabi_abi::{BufferType, Dim, ScalarType};
/// let err = BufferType::new(ScalarType::F32, [Dim::Static(1 << 31)]).unwrap_err();
/// assert_eq!(err, DimOutOfRange(2_147_483_648));
/// assert_eq!(err.to_string(), "dimension 2147483648 exceeds the ABI's 32-bit signed range");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimOutOfRange(pub u32);

impl fmt::Display for DimOutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dimension {} exceeds the ABI's 32-bit signed range", self.0)
    }
}

impl std::error::Error for DimOutOfRange {}

/// A shaped n-d buffer type: element type, dims, preferred layout.
///
/// ```
/// use fnabi_abi::{BufferType, Dim, DimOrder, RawSignature, RawType, ScalarType};
/// let b = BufferType::new(ScalarType::F32, [Dim::Dynamic, Dim::Static(4)]).unwrap();
/// assert_eq!((b.dtype(), b.rank(), b.layout()), (ScalarType::F32, 2, DimOrder::RowMajor));
/// assert_eq!(b.dims(), [Dim::Dynamic, Dim::Static(4)]);
/// assert!(!b.is_static());
/// assert_eq!(b.to_string(), "Buffer<float32[?x4]>");
/// // float32 is the default element type, so the span holds only the dims.
/// let sig = RawSignature::new(vec![RawType::Buffer(b)], vec![]);
/// assert_eq!(sig.to_mangled(), "I9!B6!d-1d4R1!");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BufferType {
    dtype: ScalarType,
    dims: Dims,
    layout: DimOrder,
}

impl BufferType {
    /// A row-major buffer type. Static dims must be at most `i32::MAX`.
    ///
    /// ```
    /// use fnabi_abi::{BufferType, Dim, ScalarType};
    /// let b = BufferType::new(ScalarType::F64, [Dim::Dynamic, Dim::Static(128)]).unwrap();
    /// assert_eq!(b.to_string(), "Buffer<float64[?x128]>");
    /// assert!(BufferType::new(ScalarType::F32, [Dim::Static(1 << 31)]).is_err());
    /// ```
    pub fn new(dtype: ScalarType, dims: impl IntoIterator<Item = Dim>) -> Result<Self, DimOutOfRange> {
        let dims: Vec<Dim> = dims.into_iter().collect();
        if let Some(Dim::Static(bad)) = dims.iter().find(|d| matches!(d, Dim::Static(n) if *n > i32::MAX as u32)) {
            return Err(DimOutOfRange(*bad));
        }
        Ok(BufferType { dtype, dims: Dims::from_vec(dims), layout: DimOrder::RowMajor })
    }

    /// The same type with a preferred layout.
    pub fn with_layout(mut self, layout: DimOrder) -> Self {
        self.layout = layout;
        self
    }

    /// Element type.
    pub fn dtype(&self) -> ScalarType {
        self.dtype
    }

    /// Dimensions, outermost first.
    pub fn dims(&self) -> &[Dim] {
        self.dims.as_slice()
    }

    /// Rank (number of dims).
    pub fn rank(&self) -> usize {
        self.dims().len()
    }

    /// Preferred layout.
    pub fn layout(&self) -> DimOrder {
        self.layout
    }

    /// True when no dim is dynamic.
    pub fn is_static(&self) -> bool {
        self.dims().iter().all(|d| matches!(d, Dim::Static(_)))
    }

    fn mangle_into(&self, b: &mut SignatureBuilder) {
        b.nested(b'B', |b| {
            if self.dtype != ScalarType::F32 {
                b.integer(b't', i32::from(self.dtype.code()));
            }
            if self.layout != DimOrder::RowMajor {
                b.integer(b'c', self.layout.code());
            }
            for d in self.dims() {
                b.integer(b'd', d.to_i32());
            }
        });
    }
}

/// One input or result of a raw signature.
///
/// ```
/// use fnabi_abi::mangle::SignatureBuilder;
/// use fnabi_abi::{RawType, ScalarType};
/// assert_eq!(RawType::Scalar(ScalarType::I32).to_string(), "sint32");
/// assert_eq!(RawType::RefObject.to_string(), "RefObject<?>");
/// assert!(RawType::RefObject.as_buffer().is_none());
///
/// let mut b = SignatureBuilder::new();
/// RawType::Scalar(ScalarType::F64).mangle_into(&mut b); // float64 has code 2
/// RawType::RefObject.mangle_into(&mut b);
/// assert_eq!(b.as_str(), "S3!t2O1!");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RawType {
    /// `B`: a shaped n-d buffer.
    Buffer(BufferType),
    /// `S`: a scalar value.
    Scalar(ScalarType),
    /// `O`: an opaque reference object.
    RefObject,
    /// `U`: a type the producer could not express.
    Unrecognized,
}

impl RawType {
    /// Appends the mangled item to `b`.
    pub fn mangle_into(&self, b: &mut SignatureBuilder) {
        match self {
            RawType::Buffer(t) => t.mangle_into(b),
            RawType::Scalar(s) => {
                b.nested(b'S', |b| {
                    if *s != ScalarType::F32 {
                        b.integer(b't', i32::from(s.code()));
                    }
                });
            }
            RawType::RefObject => {
                b.span(b'O', "");
            }
            RawType::Unrecognized => {
                b.span(b'U', "");
            }
        }
    }

    /// The buffer type, if this is a buffer.
    pub fn as_buffer(&self) -> Option<&BufferType> {
        match self {
            RawType::Buffer(b) => Some(b),
            _ => None,
        }
    }
}

/// A raw function signature: the flat inputs and results.
///
/// Both lists are kept in one allocation (inputs, then results; none when
/// both are empty), so an owned parse allocates once.
///
/// ```
/// use fnabi_abi::{BufferType, Dim, DimOrder, RawSignature, RawType, ScalarType};
/// let sig = RawSignature::parse("I6!S3!t6R4!U1!").unwrap();
/// assert_eq!(sig.inputs(), [RawType::Scalar(ScalarType::I32)]);
/// assert_eq!(sig.results(), [RawType::Unrecognized]);
/// assert_eq!(sig.to_string(), "(sint32) -> (Unrecognized<?>)");
/// assert_eq!(sig.abi_version(), 1);
///
/// // The human-readable form also takes short scalar names.
/// let f = RawSignature::parse_human("(f32) -> ()").unwrap();
/// assert_eq!(f.to_mangled(), "I4!S1!R1!");
///
/// // A column-major buffer needs ABI version 2.
/// let col = BufferType::new(ScalarType::F32, [Dim::Static(2)]).unwrap().with_layout(DimOrder::ColumnMajor);
/// assert_eq!(RawSignature::new(vec![RawType::Buffer(col)], vec![]).abi_version(), 2);
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct RawSignature {
    /// The inputs, then the results.
    types: Vec<RawType>,
    /// How many of `types` are inputs.
    input_count: usize,
}

impl RawSignature {
    /// A signature of these inputs and results.
    ///
    /// ```
    /// use fnabi_abi::{RawSignature, RawType, ScalarType};
    /// let s = RawSignature::new(vec![RawType::RefObject], vec![RawType::Scalar(ScalarType::I8)]);
    /// assert_eq!((s.inputs(), s.results()), (&[RawType::RefObject][..], &[RawType::Scalar(ScalarType::I8)][..]));
    /// assert_eq!(s.into_parts(), (vec![RawType::RefObject], vec![RawType::Scalar(ScalarType::I8)]));
    /// ```
    pub fn new(inputs: Vec<RawType>, results: Vec<RawType>) -> Self {
        let input_count = inputs.len();
        let mut types = inputs;
        types.extend(results);
        RawSignature { types, input_count }
    }

    /// Inputs in order.
    #[inline]
    pub fn inputs(&self) -> &[RawType] {
        &self.types[..self.input_count]
    }

    /// Results in order.
    #[inline]
    pub fn results(&self) -> &[RawType] {
        &self.types[self.input_count..]
    }

    /// The inputs and the results as two lists.
    pub fn into_parts(mut self) -> (Vec<RawType>, Vec<RawType>) {
        let results = self.types.split_off(self.input_count);
        (self.types, results)
    }

    /// Parses the mangled form (see the module docs for what is accepted):
    /// one allocation for both lists, sized by a count of their items.
    pub fn parse(mangled: impl AsRef<[u8]>) -> Result<RawSignature, ParseError> {
        let reader = RawSignatureReader::new(mangled.as_ref())?;
        let (inputs, results) = (reader.inputs(), reader.results());
        let items = inputs.count_quickly() + results.count_quickly();
        let mut types = Vec::with_capacity(cautious_capacity::<RawType>(items));
        inputs.collect_into(&mut types)?;
        let input_count = types.len();
        results.collect_into(&mut types)?;
        Ok(RawSignature { types, input_count })
    }

    /// The mangled form.
    ///
    /// ```
    /// use fnabi_abi::{RawSignature, RawType, ScalarType};
    /// assert_eq!(RawSignature::default().to_mangled(), "I1!R1!");
    /// let s = RawSignature::new(vec![RawType::Scalar(ScalarType::I32)], vec![RawType::Unrecognized]);
    /// assert_eq!(s.to_mangled(), "I6!S3!t6R4!U1!");
    /// ```
    pub fn to_mangled(&self) -> String {
        let mut b = SignatureBuilder::new();
        b.nested(b'I', |b| self.inputs().iter().for_each(|t| t.mangle_into(b)));
        b.nested(b'R', |b| self.results().iter().for_each(|t| t.mangle_into(b)));
        b.into_string()
    }

    /// The raw ABI version this signature needs: 2 when any buffer carries a
    /// non-default layout hint, else 1.
    pub fn abi_version(&self) -> u32 {
        let hinted = self.types.iter().any(|t| matches!(t, RawType::Buffer(b) if b.layout != DimOrder::RowMajor));
        if hinted { 2 } else { 1 }
    }
}

impl fmt::Debug for RawSignature {
    /// The inputs and the results (as if they were two fields).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawSignature").field("inputs", &self.inputs()).field("results", &self.results()).finish()
    }
}

impl FromStr for RawSignature {
    type Err = ParseError;

    /// Parses the mangled form.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RawSignature::parse(s)
    }
}

#[cfg(test)]
mod tests;
