//! The zero-copy reader of mangled raw signatures ([`RawSignatureReader`]) and its items.

use super::{BufferType, Dim, DimOrder, Dims, INLINE_DIMS, RawType};
use crate::error::{ParseError, ParseErrorKind};
use crate::mangle::{Component, SignatureParser};
use crate::scalar::ScalarType;

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
    /// rest; [`RawSignature::parse`](super::RawSignature::parse) reads them all.
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
/// (kept from the check up to rank 6, read again from the span above).
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
