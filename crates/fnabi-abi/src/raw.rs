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

use crate::error::{ParseError, ParseErrorKind};
use crate::mangle::{Component, SignatureBuilder, SignatureParser, decimal};
use crate::scalar::ScalarType;
use std::fmt;
use std::str::FromStr;

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

/// Where a human-readable form goes: a `String` directly, or any
/// [`fmt::Write`] through a [`Batch`].
trait Sink {
    fn put(&mut self, s: &str) -> fmt::Result;
    fn put_ascii(&mut self, b: u8) -> fmt::Result;
    fn put_dim(&mut self, d: Dim) -> fmt::Result {
        let Dim::Static(v) = d else { return self.put_ascii(b'?') };
        self.put(decimal(u64::from(v), &mut [0; 20]))
    }
}

impl Sink for String {
    #[inline]
    fn put(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
    #[inline]
    fn put_ascii(&mut self, b: u8) -> fmt::Result {
        self.push(char::from(b));
        Ok(())
    }
}

/// Gathers small writes in a stack buffer and hands them to the writer a
/// buffer at a time: a human-readable form is made of many short pieces,
/// and each write into a `Formatter` is a dynamic call.
struct Batch<'w, W: fmt::Write + ?Sized> {
    out: &'w mut W,
    buf: [u8; 128],
    len: usize,
}

impl<'w, W: fmt::Write + ?Sized> Batch<'w, W> {
    fn new(out: &'w mut W) -> Self {
        Batch { out, buf: [0; 128], len: 0 }
    }

    fn flush(&mut self) -> fmt::Result {
        // Only whole `str`s and ASCII bytes were put in, so this is UTF-8.
        let text = std::str::from_utf8(&self.buf[..self.len]).map_err(|_| fmt::Error)?;
        self.len = 0;
        self.out.write_str(text)
    }

    fn finish(mut self) -> fmt::Result {
        self.flush()
    }
}

impl<W: fmt::Write + ?Sized> Sink for Batch<'_, W> {
    #[inline]
    fn put(&mut self, s: &str) -> fmt::Result {
        if self.len + s.len() > self.buf.len() {
            self.flush()?;
            if s.len() > self.buf.len() {
                return self.out.write_str(s);
            }
        }
        self.buf[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
        self.len += s.len();
        Ok(())
    }
    #[inline]
    fn put_ascii(&mut self, b: u8) -> fmt::Result {
        if self.len == self.buf.len() {
            self.flush()?;
        }
        self.buf[self.len] = b & 0x7f;
        self.len += 1;
        Ok(())
    }
}

/// How many dims a buffer type holds in place, without a heap allocation
/// (rank 4 and below: almost every real tensor).
const INLINE_DIMS: usize = 4;

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

    /// The first `len` dims of `inline` when they are all, else the `len`
    /// dims of `all` in one allocation of exactly `len`.
    #[inline]
    fn new<I: Iterator<Item = Dim>>(inline: [Dim; INLINE_DIMS], len: usize, all: impl FnOnce() -> I) -> Dims {
        if len <= INLINE_DIMS {
            Dims::Inline { len: len as u8, dims: inline }
        } else {
            let mut v = Vec::with_capacity(len);
            v.extend(all().take(len));
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

impl fmt::Display for BufferType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut b = Batch::new(f);
        write_buffer(&mut b, self.dtype, self.dims(), self.layout)?;
        b.finish()
    }
}

/// Writes a buffer type's human-readable form (`Buffer<float32[?x4]>`).
fn write_buffer(f: &mut impl Sink, dtype: ScalarType, dims: &[Dim], layout: DimOrder) -> fmt::Result {
    f.put("Buffer<")?;
    f.put(dtype.name())?;
    f.put_ascii(b'[')?;
    for (i, &d) in dims.iter().enumerate() {
        if i > 0 {
            f.put_ascii(b'x')?;
        }
        f.put_dim(d)?;
    }
    f.put_ascii(b']')?;
    if layout != DimOrder::RowMajor {
        f.put(", ")?;
        f.put(layout.name())?;
    }
    f.put_ascii(b'>')
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

impl RawType {
    fn write_human(&self, f: &mut impl Sink) -> fmt::Result {
        match self {
            RawType::Buffer(b) => write_buffer(f, b.dtype, b.dims(), b.layout),
            RawType::Scalar(s) => f.put(s.name()),
            RawType::RefObject => f.put("RefObject<?>"),
            RawType::Unrecognized => f.put("Unrecognized<?>"),
        }
    }
}

impl fmt::Display for RawType {
    /// The reference's human-readable form: `Buffer<float32[?x4]>`,
    /// `RefObject<?>`, a scalar's bare name (`sint32`); unrecognized items
    /// print `Unrecognized<?>` (the reference prints `!UNKNOWN!` for every
    /// kind it does not know, which is ambiguous).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut b = Batch::new(f);
        self.write_human(&mut b)?;
        b.finish()
    }
}

/// A raw function signature: the flat inputs and results.
///
/// ```
/// use fnabi_abi::{BufferType, Dim, DimOrder, RawSignature, RawType, ScalarType};
/// let sig = RawSignature::parse("I6!S3!t6R4!U1!").unwrap();
/// assert_eq!(sig.inputs, [RawType::Scalar(ScalarType::I32)]);
/// assert_eq!(sig.results, [RawType::Unrecognized]);
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RawSignature {
    /// Inputs in order.
    pub inputs: Vec<RawType>,
    /// Results in order.
    pub results: Vec<RawType>,
}

impl RawSignature {
    /// A signature of these inputs and results.
    pub fn new(inputs: Vec<RawType>, results: Vec<RawType>) -> Self {
        RawSignature { inputs, results }
    }

    /// Parses the mangled form (see the module docs for what is accepted).
    pub fn parse(mangled: impl AsRef<[u8]>) -> Result<RawSignature, ParseError> {
        let reader = RawSignatureReader::new(mangled.as_ref())?;
        Ok(RawSignature { inputs: reader.inputs().collect_owned()?, results: reader.results().collect_owned()? })
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
        b.nested(b'I', |b| self.inputs.iter().for_each(|t| t.mangle_into(b)));
        b.nested(b'R', |b| self.results.iter().for_each(|t| t.mangle_into(b)));
        b.into_string()
    }

    /// The raw ABI version this signature needs: 2 when any buffer carries a
    /// non-default layout hint, else 1.
    pub fn abi_version(&self) -> u32 {
        let hinted = self
            .inputs
            .iter()
            .chain(&self.results)
            .any(|t| matches!(t, RawType::Buffer(b) if b.layout != DimOrder::RowMajor));
        if hinted { 2 } else { 1 }
    }

    /// Appends the human-readable form (what `Display` prints) to `out`,
    /// with no allocation of its own (`out` grows as a `String` does).
    ///
    /// ```
    /// use fnabi_abi::RawSignature;
    /// let mut out = String::from("f: ");
    /// RawSignature::parse("I7!B4!d-1R6!S3!t6").unwrap().write_human(&mut out);
    /// assert_eq!(out, "f: (Buffer<float32[?]>) -> (sint32)");
    /// ```
    pub fn write_human(&self, out: &mut String) {
        // Writing into a String cannot fail.
        let _ = self.write_human_into(out);
    }

    fn write_human_into(&self, f: &mut impl Sink) -> fmt::Result {
        fn list(f: &mut impl Sink, items: &[RawType]) -> fmt::Result {
            f.put_ascii(b'(')?;
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    f.put(", ")?;
                }
                t.write_human(f)?;
            }
            f.put_ascii(b')')
        }
        list(f, &self.inputs)?;
        f.put(" -> ")?;
        list(f, &self.results)
    }

    /// Parses the human-readable form printed by `Display`.
    ///
    /// Accepts exactly what `Display` prints, plus: optional whitespace
    /// around punctuation, short scalar names (`f32`), `, row-major`, and the
    /// reference's `!UNKNOWN!` for an unrecognized item.
    pub fn parse_human(text: &str) -> Result<RawSignature, ParseError> {
        let mut p = HumanParser { s: text.as_bytes(), pos: 0 };
        let inputs = p.type_list()?;
        p.ws();
        p.expect("->", "`->`")?;
        let results = p.type_list()?;
        p.ws();
        if p.pos != p.s.len() {
            return Err(ParseError::new(p.pos, ParseErrorKind::TrailingInput));
        }
        Ok(RawSignature { inputs, results })
    }
}

impl fmt::Display for RawSignature {
    /// `(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut b = Batch::new(f);
        self.write_human_into(&mut b)?;
        b.finish()
    }
}

impl FromStr for RawSignature {
    type Err = ParseError;

    /// Parses the mangled form.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RawSignature::parse(s)
    }
}

// ---------------------------------------------------------------------------
// Zero-copy reader
// ---------------------------------------------------------------------------

/// A view of a mangled raw signature that reads items without allocating.
///
/// ```
/// use fnabi_abi::raw::{RawSignatureReader, RawTypeRef};
/// let r = RawSignatureReader::new(b"I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64").unwrap();
/// let mut dims = 0;
/// for item in r.inputs() {
///     if let RawTypeRef::Buffer(b) = item.unwrap() {
///         dims += b.dims().count();
///     }
/// }
/// assert_eq!(dims, 3);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RawSignatureReader<'a> {
    inputs: (&'a [u8], usize),
    results: (&'a [u8], usize),
}

impl<'a> RawSignatureReader<'a> {
    /// Checks the top level: exactly one `I` and one `R` span, in either
    /// order, and nothing else. The items inside are checked as they are
    /// read (each once), so a reader can stop early without paying for the
    /// rest; [`RawSignature::parse`] reads them all.
    #[inline]
    pub fn new(mangled: &'a [u8]) -> Result<Self, ParseError> {
        let mut inputs = None;
        let mut results = None;
        for c in SignatureParser::new(mangled) {
            let c = c?;
            let slot = match (c.tag(), c) {
                (b'I', Component::Span { .. }) => &mut inputs,
                (b'R', Component::Span { .. }) => &mut results,
                (tag, _) => {
                    return Err(ParseError::new(
                        c.offset(),
                        ParseErrorKind::UnexpectedComponent { context: "signature (expected `I` or `R`)", tag },
                    ));
                }
            };
            if slot.is_some() {
                return Err(ParseError::new(c.offset(), ParseErrorKind::DuplicateSpan(c.tag())));
            }
            if let Component::Span { content, content_offset, .. } = c {
                *slot = Some((content, content_offset));
            }
        }
        let end = mangled.len();
        let inputs = inputs.ok_or_else(|| ParseError::new(end, ParseErrorKind::MissingSpan(b'I')))?;
        let results = results.ok_or_else(|| ParseError::new(end, ParseErrorKind::MissingSpan(b'R')))?;
        Ok(RawSignatureReader { inputs, results })
    }

    /// The input items.
    #[inline]
    pub fn inputs(&self) -> RawTypeReader<'a> {
        RawTypeReader { p: SignatureParser::with_offset(self.inputs.0, self.inputs.1) }
    }

    /// The result items.
    #[inline]
    pub fn results(&self) -> RawTypeReader<'a> {
        RawTypeReader { p: SignatureParser::with_offset(self.results.0, self.results.1) }
    }
}

/// Reads the items of one type sequence.
///
/// ```
/// use fnabi_abi::ScalarType;
/// use fnabi_abi::raw::{RawSignatureReader, RawTypeRef};
/// let r = RawSignatureReader::new(b"I9!S3!t6O1!R1!").unwrap();
/// let inputs: Vec<_> = r.inputs().collect::<Result<_, _>>().unwrap();
/// assert_eq!(inputs, [RawTypeRef::Scalar(ScalarType::I32), RawTypeRef::RefObject]);
/// assert!(r.results().next().is_none());
///
/// // An unknown item tag is an error when that item is read.
/// let bad = RawSignatureReader::new(b"I4!X1!R1!").unwrap();
/// assert!(bad.inputs().next().unwrap().is_err());
/// ```
#[derive(Clone, Debug)]
pub struct RawTypeReader<'a> {
    p: SignatureParser<'a>,
}

/// One item of a type sequence, borrowed from the signature.
///
/// ```
/// use fnabi_abi::raw::{RawSignatureReader, RawTypeRef};
/// use fnabi_abi::{BufferType, Dim, RawType, ScalarType};
/// let r = RawSignatureReader::new(b"I9!B6!d-1d4R1!").unwrap();
/// let item = r.inputs().next().unwrap().unwrap();
/// assert!(matches!(item, RawTypeRef::Buffer(_)));
/// let owned = BufferType::new(ScalarType::F32, [Dim::Dynamic, Dim::Static(4)]).unwrap();
/// assert_eq!(item.to_owned(), RawType::Buffer(owned));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawTypeRef<'a> {
    /// A buffer type.
    Buffer(BufferRef<'a>),
    /// A scalar type.
    Scalar(ScalarType),
    /// A reference object.
    RefObject,
    /// An unrecognized type.
    Unrecognized,
}

impl RawTypeRef<'_> {
    /// The owned item.
    pub fn to_owned(self) -> RawType {
        match self {
            RawTypeRef::Buffer(b) => RawType::Buffer(BufferType {
                dtype: b.dtype,
                dims: Dims::new(b.first, b.rank, || b.dims()),
                layout: b.layout,
            }),
            RawTypeRef::Scalar(s) => RawType::Scalar(s),
            RawTypeRef::RefObject => RawType::RefObject,
            RawTypeRef::Unrecognized => RawType::Unrecognized,
        }
    }
}

/// A validated buffer item: its element type and layout, and its dims
/// (kept from the check up to rank 4, read again from the span above).
///
/// ```
/// use fnabi_abi::raw::{RawSignatureReader, RawTypeRef};
/// use fnabi_abi::{Dim, DimOrder, ScalarType};
/// // `t2`: float64, `c1`: column-major, dims 2 and 3.
/// let r = RawSignatureReader::new(b"I12!B9!t2c1d2d3R1!").unwrap();
/// let Some(Ok(RawTypeRef::Buffer(b))) = r.inputs().next() else { panic!("not a buffer") };
/// assert_eq!((b.dtype, b.layout, b.rank()), (ScalarType::F64, DimOrder::ColumnMajor, 2));
/// assert_eq!(b.dims().collect::<Vec<_>>(), [Dim::Static(2), Dim::Static(3)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferRef<'a> {
    /// Element type (the last `t`, float32 if none).
    pub dtype: ScalarType,
    /// Preferred layout (the last `c`, row-major if none).
    pub layout: DimOrder,
    content: &'a [u8],
    content_offset: usize,
    rank: usize,
    /// The first dims (the rest `Dynamic`).
    first: [Dim; INLINE_DIMS],
}

/// The dims of a [`BufferRef`].
enum DimIter<'a> {
    /// The kept dims `dims[next..len]`.
    Kept {
        dims: [Dim; INLINE_DIMS],
        next: usize,
        len: usize,
    },
    Span(SignatureParser<'a>),
}

impl Iterator for DimIter<'_> {
    type Item = Dim;

    #[inline(always)]
    fn next(&mut self) -> Option<Dim> {
        match self {
            DimIter::Kept { dims, next, len } => {
                if *next < *len {
                    *next += 1;
                    dims.get(*next - 1).copied()
                } else {
                    None
                }
            }
            DimIter::Span(p) => next_dim(p),
        }
    }
}

/// The next dim of a buffer span of rank above [`INLINE_DIMS`].
#[inline(never)]
fn next_dim(p: &mut SignatureParser<'_>) -> Option<Dim> {
    p.find_map(|c| match c {
        // Already checked by `buffer_item` when this item was read.
        Ok(Component::Integer { tag: b'd', value, .. }) => Dim::from_i32(value),
        _ => None,
    })
}

impl<'a> BufferRef<'a> {
    /// The dims in order.
    #[inline]
    pub fn dims(&self) -> impl Iterator<Item = Dim> + 'a {
        if self.rank <= INLINE_DIMS {
            DimIter::Kept { dims: self.first, next: 0, len: self.rank }
        } else {
            DimIter::Span(SignatureParser::with_offset(self.content, self.content_offset))
        }
    }

    /// Number of dims.
    pub fn rank(&self) -> usize {
        self.rank
    }
}

fn scalar_code(c: &Component<'_>, value: i32) -> Result<ScalarType, ParseError> {
    ScalarType::from_code(i64::from(value))
        .ok_or_else(|| ParseError::new(c.offset(), ParseErrorKind::IllegalScalarCode(value)))
}

/// Checks a buffer's fields in one pass, keeping the first dims.
#[inline(always)]
fn buffer_item<'a>(content: &'a [u8], content_offset: usize) -> Result<BufferRef<'a>, ParseError> {
    let mut dtype = ScalarType::F32;
    let mut layout = DimOrder::RowMajor;
    let mut rank = 0;
    let mut first = [Dim::Dynamic; INLINE_DIMS];
    for c in SignatureParser::with_offset(content, content_offset) {
        let c = c?;
        match c {
            Component::Integer { tag: b't', value, .. } => dtype = scalar_code(&c, value)?,
            Component::Integer { tag: b'c', value, .. } => {
                layout = DimOrder::from_code(value)
                    .ok_or_else(|| ParseError::new(c.offset(), ParseErrorKind::IllegalLayoutCode(value)))?;
            }
            Component::Integer { tag: b'd', value, .. } => {
                let d = Dim::from_i32(value)
                    .ok_or_else(|| ParseError::new(c.offset(), ParseErrorKind::IllegalDim(value)))?;
                if let Some(slot) = first.get_mut(rank) {
                    *slot = d;
                }
                rank += 1;
            }
            _ => {
                return Err(ParseError::new(c.offset(), ParseErrorKind::UnknownField { item: "buffer", tag: c.tag() }));
            }
        }
    }
    Ok(BufferRef { dtype, layout, content, content_offset, rank, first })
}

#[inline]
fn scalar_item(content: &[u8], content_offset: usize) -> Result<ScalarType, ParseError> {
    let mut dtype = ScalarType::F32;
    for c in SignatureParser::with_offset(content, content_offset) {
        let c = c?;
        match c {
            Component::Integer { tag: b't', value, .. } => dtype = scalar_code(&c, value)?,
            _ => {
                return Err(ParseError::new(c.offset(), ParseErrorKind::UnknownField { item: "scalar", tag: c.tag() }));
            }
        }
    }
    Ok(dtype)
}

#[inline]
fn empty_item(item: &'static str, content: &[u8], content_offset: usize) -> Result<(), ParseError> {
    match SignatureParser::with_offset(content, content_offset).next() {
        None => Ok(()),
        Some(Err(e)) => Err(e),
        Some(Ok(c)) => Err(ParseError::new(c.offset(), ParseErrorKind::UnknownField { item, tag: c.tag() })),
    }
}

impl<'a> RawTypeReader<'a> {
    /// Reads and checks the next item.
    #[inline(always)]
    fn next_item(&mut self) -> Option<Result<RawTypeRef<'a>, ParseError>> {
        let c = match self.p.next()? {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        let Component::Span { tag, content, content_offset, offset } = c else {
            return Some(Err(ParseError::new(
                c.offset(),
                ParseErrorKind::UnexpectedComponent {
                    context: "type sequence (expected `B`, `S`, `O` or `U`)",
                    tag: c.tag(),
                },
            )));
        };
        let item = match tag {
            b'B' => buffer_item(content, content_offset).map(RawTypeRef::Buffer),
            b'S' => scalar_item(content, content_offset).map(RawTypeRef::Scalar),
            b'O' => empty_item("ref object", content, content_offset).map(|()| RawTypeRef::RefObject),
            b'U' => empty_item("unrecognized", content, content_offset).map(|()| RawTypeRef::Unrecognized),
            _ => Err(ParseError::new(
                offset,
                ParseErrorKind::UnexpectedComponent { context: "type sequence (expected `B`, `S`, `O` or `U`)", tag },
            )),
        };
        Some(item)
    }

    /// Reads every remaining item into owned types: one allocation for the
    /// list (sized by a count of the items first), none for a buffer of
    /// rank up to 4, one exact-size slice for a higher rank.
    #[inline]
    pub fn collect_owned(mut self) -> Result<Vec<RawType>, ParseError> {
        if self.p.is_at_end() {
            return Ok(Vec::new());
        }
        let items = self.p.count_tags(|_| true);
        if items == 0 {
            // Nothing, or a malformed first item: the loop reports it.
            if let Some(e) = self.next() {
                e?;
            }
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(items);
        while let Some(item) = self.next_item() {
            out.push(match item? {
                RawTypeRef::Buffer(b) => {
                    let dims = Dims::new(b.first, b.rank, || b.dims());
                    RawType::Buffer(BufferType { dtype: b.dtype, dims, layout: b.layout })
                }
                RawTypeRef::Scalar(s) => RawType::Scalar(s),
                RawTypeRef::RefObject => RawType::RefObject,
                RawTypeRef::Unrecognized => RawType::Unrecognized,
            });
        }
        Ok(out)
    }
}

impl<'a> Iterator for RawTypeReader<'a> {
    type Item = Result<RawTypeRef<'a>, ParseError>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        self.next_item()
    }
}

// ---------------------------------------------------------------------------
// Human-readable form
// ---------------------------------------------------------------------------

struct HumanParser<'s> {
    s: &'s [u8],
    pos: usize,
}

impl HumanParser<'_> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.pos..].starts_with(lit.as_bytes()) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, lit: &str, what: &'static str) -> Result<(), ParseError> {
        if self.eat(lit) { Ok(()) } else { Err(self.err(ParseErrorKind::Expected(what))) }
    }

    fn err(&self, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.pos, kind)
    }

    fn type_list(&mut self) -> Result<Vec<RawType>, ParseError> {
        self.ws();
        self.expect("(", "`(`")?;
        let mut items = Vec::new();
        self.ws();
        if self.eat(")") {
            return Ok(items);
        }
        loop {
            self.ws();
            items.push(self.raw_type()?);
            self.ws();
            if self.eat(")") {
                return Ok(items);
            }
            self.expect(",", "`,` or `)`")?;
        }
    }

    fn word(&mut self) -> &str {
        let start = self.pos;
        while self.pos < self.s.len() && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_') {
            self.pos += 1;
        }
        // Only ASCII alphanumerics were consumed.
        std::str::from_utf8(&self.s[start..self.pos]).unwrap_or_default()
    }

    fn scalar_name(&mut self) -> Result<ScalarType, ParseError> {
        let start = self.pos;
        let w = self.word();
        if w.is_empty() {
            return Err(ParseError::new(start, ParseErrorKind::Expected("a scalar type name")));
        }
        ScalarType::from_name(w).ok_or_else(|| ParseError::new(start, ParseErrorKind::UnknownName(w.to_owned())))
    }

    fn raw_type(&mut self) -> Result<RawType, ParseError> {
        if self.eat("!UNKNOWN!") {
            return Ok(RawType::Unrecognized);
        }
        let start = self.pos;
        match self.word() {
            "Buffer" => {
                self.expect("<", "`<`")?;
                self.ws();
                let dtype = self.scalar_name()?;
                self.ws();
                self.expect("[", "`[`")?;
                let mut dims = Vec::new();
                self.ws();
                if !self.eat("]") {
                    loop {
                        self.ws();
                        dims.push(self.dim()?);
                        self.ws();
                        if self.eat("]") {
                            break;
                        }
                        self.expect("x", "`x` or `]`")?;
                    }
                }
                self.ws();
                let mut layout = DimOrder::RowMajor;
                if self.eat(",") {
                    self.ws();
                    layout = if self.eat("column-major") {
                        DimOrder::ColumnMajor
                    } else if self.eat("row-major") {
                        DimOrder::RowMajor
                    } else {
                        return Err(self.err(ParseErrorKind::Expected("`row-major` or `column-major`")));
                    };
                    self.ws();
                }
                self.expect(">", "`>`")?;
                Ok(RawType::Buffer(BufferType { dtype, dims: Dims::from_vec(dims), layout }))
            }
            "RefObject" => {
                self.expect("<?>", "`<?>`")?;
                Ok(RawType::RefObject)
            }
            "Unrecognized" => {
                self.expect("<?>", "`<?>`")?;
                Ok(RawType::Unrecognized)
            }
            "" => Err(ParseError::new(start, ParseErrorKind::Expected("a type"))),
            w => ScalarType::from_name(w)
                .map(RawType::Scalar)
                .ok_or_else(|| ParseError::new(start, ParseErrorKind::UnknownName(w.to_owned()))),
        }
    }

    fn dim(&mut self) -> Result<Dim, ParseError> {
        if self.eat("?") {
            return Ok(Dim::Dynamic);
        }
        let start = self.pos;
        let mut v: u64 = 0;
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
            v = v * 10 + u64::from(self.s[self.pos] - b'0');
            if v > i32::MAX as u64 {
                return Err(ParseError::new(start, ParseErrorKind::IntegerOutOfRange));
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.err(ParseErrorKind::Expected("a dimension (digits or `?`)")));
        }
        Ok(Dim::Static(v as u32))
    }
}

#[cfg(test)]
mod tests;
