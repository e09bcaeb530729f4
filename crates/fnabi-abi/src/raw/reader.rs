//! The zero-copy reader of mangled raw signatures ([`RawSignatureReader`]) and its items.

use super::{BufferType, Dim, DimOrder, Dims, INLINE_DIMS, RawType};
use crate::error::{ParseError, ParseErrorKind};
use crate::mangle::{
    Component, SignatureParser, component_at, input_and_result_spans, is_integer_tag, is_span_tag, short_integer,
    short_span,
};
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
    pub(super) inputs: (&'a [u8], usize),
    pub(super) results: (&'a [u8], usize),
}

impl<'a> RawSignatureReader<'a> {
    /// Checks the top level: exactly one `I` and one `R` span, in either
    /// order, and nothing else. The items inside are checked as they are
    /// read (each once), so a reader can stop early without paying for the
    /// rest; [`RawSignature::parse`](super::RawSignature::parse) reads them all.
    #[inline]
    pub fn new(mangled: &'a [u8]) -> Result<Self, ParseError> {
        let [inputs, results] = input_and_result_spans(mangled)?;
        Ok(RawSignatureReader { inputs, results })
    }

    /// The input items.
    #[inline]
    pub fn inputs(&self) -> RawTypeReader<'a> {
        RawTypeReader::new(self.inputs)
    }

    /// The result items.
    #[inline]
    pub fn results(&self) -> RawTypeReader<'a> {
        RawTypeReader::new(self.results)
    }
}

/// Reads the items of one type sequence; after an error it yields `None`
/// (it is fused).
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
/// let bad = RawSignatureReader::new(b"I7!X1!O1!R1!").unwrap();
/// let mut items = bad.inputs();
/// assert!(items.next().unwrap().is_err());
/// assert!(items.next().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct RawTypeReader<'a> {
    /// The type sequence, its absolute offset, and the position of the
    /// next item in it (its end after an error: the reader is fused).
    bytes: &'a [u8],
    base: usize,
    pos: usize,
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
            RawTypeRef::Buffer(b) => {
                RawType::Buffer(BufferType { dtype: b.dtype, dims: Dims::new(b.rank, b.dims()), layout: b.layout })
            }
            RawTypeRef::Scalar(s) => RawType::Scalar(s),
            RawTypeRef::RefObject => RawType::RefObject,
            RawTypeRef::Unrecognized => RawType::Unrecognized,
        }
    }
}

/// A validated buffer item: its element type and layout, and its dims
/// (up to six kept as read, a higher rank's read from the span again when
/// asked for).
///
/// ```
/// use fnabi_abi::raw::{RawSignatureReader, RawTypeRef};
/// use fnabi_abi::{Dim, DimOrder, ScalarType};
/// // `t2`: float64, `c1`: column-major, dims 2 and 3.
/// let r = RawSignatureReader::new(b"I12!B9!t2c1d2d3R1!").unwrap();
/// let Some(Ok(RawTypeRef::Buffer(b))) = r.inputs().next() else { panic!("not a buffer") };
/// assert_eq!((b.dtype, b.layout, b.rank()), (ScalarType::F64, DimOrder::ColumnMajor, 2));
/// assert_eq!(b.dims().collect::<Vec<_>>(), [Dim::Static(2), Dim::Static(3)]);
/// assert_eq!(format!("{b:?}"), "BufferRef { dtype: F64, layout: ColumnMajor, dims: [Static(2), Static(3)] }");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BufferRef<'a> {
    /// Element type (the last `t`, float32 if none).
    pub dtype: ScalarType,
    /// Preferred layout (the last `c`, row-major if none).
    pub layout: DimOrder,
    content: &'a [u8],
    rank: usize,
    /// The mangled dims (-1: dynamic), two to a word (the first in the low
    /// half), when `rank <= INLINE_DIMS`: kept as the item was checked,
    /// so asking for them reads no text again.
    head: [u64; INLINE_DIMS / 2],
}

/// The dims of a [`BufferRef`]: the ones kept in it, or (a rank above
/// [`INLINE_DIMS`]) its `d` fields read again.
enum BufferDims<'a> {
    Kept { head: [u64; INLINE_DIMS / 2], next: usize, rank: usize },
    Text(DimIter<'a>),
}

impl Iterator for BufferDims<'_> {
    type Item = Dim;

    #[inline(always)]
    fn next(&mut self) -> Option<Dim> {
        match self {
            // Checked when read: -1 or an extent.
            BufferDims::Kept { head, next, rank } => {
                if *next == *rank {
                    return None;
                }
                let word = head[*next / 2] >> (32 * (*next % 2));
                *next += 1;
                Dim::from_i32(word as u32 as i32)
            }
            BufferDims::Text(text) => text.next(),
        }
    }
}

/// The `d` fields of a buffer item, read again (they were checked when the
/// item was read).
struct DimIter<'a> {
    content: &'a [u8],
    pos: usize,
}

impl Iterator for DimIter<'_> {
    type Item = Dim;

    #[inline(always)]
    fn next(&mut self) -> Option<Dim> {
        loop {
            let &tag = self.content.get(self.pos)?;
            // Checked fields: the slow path (more than nine digits) reads
            // them without error.
            let (value, next) = match short_integer(self.content, self.pos) {
                Some(field) => field,
                None => field_slow(self.content, self.pos, 0).ok()?,
            };
            self.pos = next;
            if tag == b'd' {
                return Dim::from_i32(value);
            }
        }
    }
}

impl std::fmt::Debug for BufferRef<'_> {
    /// The item as it reads: element type, layout and dims.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dims: Vec<Dim> = self.dims().collect();
        f.debug_struct("BufferRef")
            .field("dtype", &self.dtype)
            .field("layout", &self.layout)
            .field("dims", &dims)
            .finish()
    }
}

impl<'a> BufferRef<'a> {
    /// The dims in order.
    #[inline]
    pub fn dims(&self) -> impl Iterator<Item = Dim> + 'a {
        if self.rank <= INLINE_DIMS {
            BufferDims::Kept { head: self.head, next: 0, rank: self.rank }
        } else {
            BufferDims::Text(DimIter { content: self.content, pos: 0 })
        }
    }

    /// Number of dims.
    pub fn rank(&self) -> usize {
        self.rank
    }
}

fn scalar_code(offset: usize, value: i32) -> Result<ScalarType, ParseError> {
    ScalarType::from_code(i64::from(value))
        .ok_or_else(|| ParseError::new(offset, ParseErrorKind::IllegalScalarCode(value)))
}

/// The integer field whose tag is at `content[pos]` (`content[0]` at
/// absolute `base`): its value and the position after it. The usual form
/// is read in place, anything else by the generic lexer ([`field_slow`]).
/// The tag is `content[pos]` either way, and the callers keep what they
/// read in locals: nothing of theirs is handed to a call, which would keep
/// it in memory (a store and a load on every field).
#[inline(always)]
fn next_field(content: &[u8], pos: usize, base: usize) -> Result<(i32, usize), ParseError> {
    if is_integer_tag(content[pos])
        && let Some(field) = short_integer(content, pos)
    {
        return Ok(field);
    }
    field_slow(content, pos, base)
}

/// [`next_field`] by the generic lexer, which reports a malformed
/// component; a span is no field (value 0: its tag is reported as unknown).
#[cold]
#[inline(never)]
fn field_slow(content: &[u8], pos: usize, base: usize) -> Result<(i32, usize), ParseError> {
    match component_at(content, pos, base) {
        Some(Ok((Component::Integer { value, .. }, next))) => Ok((value, next)),
        Some(Ok((_, next))) => Ok((0, next)),
        Some(Err(e)) => Err(e),
        None => Ok((0, content.len())),
    }
}

/// Checks a buffer's fields in one pass, handing each dim to `dim(index,
/// dim, its mangled value)`: its element type, layout and rank.
#[inline(always)]
fn buffer_fields(
    content: &[u8],
    content_offset: usize,
    mut dim: impl FnMut(usize, Dim, i32),
) -> Result<(ScalarType, DimOrder, usize), ParseError> {
    let mut dtype = ScalarType::F32;
    let mut layout = DimOrder::RowMajor;
    let mut rank = 0;
    let mut pos = 0;
    while let Some(&tag) = content.get(pos) {
        let (value, next) = next_field(content, pos, content_offset)?;
        let offset = content_offset + pos;
        match tag {
            b'd' => {
                let Some(d) = Dim::from_i32(value) else {
                    return Err(ParseError::new(offset, ParseErrorKind::IllegalDim(value)));
                };
                dim(rank, d, value);
                rank += 1;
            }
            b't' => dtype = scalar_code(offset, value)?,
            b'c' => {
                layout = DimOrder::from_code(value)
                    .ok_or_else(|| ParseError::new(offset, ParseErrorKind::IllegalLayoutCode(value)))?;
            }
            _ => return Err(ParseError::new(offset, ParseErrorKind::UnknownField { item: "buffer", tag })),
        }
        pos = next;
    }
    Ok((dtype, layout, rank))
}

/// Checks a buffer's fields in one pass.
#[inline(always)]
fn buffer_item(content: &[u8], content_offset: usize) -> Result<BufferRef<'_>, ParseError> {
    // Two dims to a word, each word in a register: stores into an array at
    // the dim's index, copied whole into the item, would be read back wider
    // than they were written (a store-forwarding stall per item).
    const _: () = assert!(INLINE_DIMS == 6, "one word per two kept dims below");
    let (mut w0, mut w1, mut w2) = (0u64, 0u64, 0u64);
    let (dtype, layout, rank) = buffer_fields(content, content_offset, |i, _, value| {
        let v = u64::from(value as u32) << (32 * (i % 2));
        match i / 2 {
            0 => w0 |= v,
            1 => w1 |= v,
            2 => w2 |= v,
            _ => {}
        }
    })?;
    Ok(BufferRef { dtype, layout, content, rank, head: [w0, w1, w2] })
}

/// Checks a buffer's fields into `b` (a fresh buffer type in its final
/// place: the dims are written where they stay, in the same pass).
#[inline(always)]
fn owned_buffer(content: &[u8], content_offset: usize, b: &mut BufferType) -> Result<(), ParseError> {
    let (dtype, layout, rank) = match &mut b.dims {
        Dims::Inline { dims, .. } => buffer_fields(content, content_offset, |i, d, _| {
            if let Some(slot) = dims.get_mut(i) {
                *slot = d;
            }
        })?,
        Dims::Heap(_) => buffer_fields(content, content_offset, |_, _, _| {})?,
    };
    b.dtype = dtype;
    b.layout = layout;
    match &mut b.dims {
        Dims::Inline { len, .. } if rank <= INLINE_DIMS => *len = rank as u8,
        dims => *dims = Dims::new(rank, DimIter { content, pos: 0 }),
    }
    Ok(())
}

#[inline(always)]
fn scalar_item(content: &[u8], content_offset: usize) -> Result<ScalarType, ParseError> {
    let mut dtype = ScalarType::F32;
    let mut pos = 0;
    while let Some(&tag) = content.get(pos) {
        let (value, next) = next_field(content, pos, content_offset)?;
        let offset = content_offset + pos;
        if tag != b't' {
            return Err(ParseError::new(offset, ParseErrorKind::UnknownField { item: "scalar", tag }));
        }
        dtype = scalar_code(offset, value)?;
        pos = next;
    }
    Ok(dtype)
}

#[inline]
fn empty_item(item: &'static str, content: &[u8], content_offset: usize) -> Result<(), ParseError> {
    match content.first() {
        None => Ok(()),
        Some(&tag) => {
            next_field(content, 0, content_offset)?;
            Err(ParseError::new(content_offset, ParseErrorKind::UnknownField { item, tag }))
        }
    }
}

/// The span of the item at `bytes[pos]` (`bytes[0]` at absolute `base`)
/// when it is not in its usual form, read by the generic lexer: its
/// content's start and its end. (Of the reader's parts, not the reader:
/// see [`next_field`].)
#[cold]
#[inline(never)]
fn span_slow(bytes: &[u8], pos: usize, base: usize) -> Result<(usize, usize), ParseError> {
    match component_at(bytes, pos, base) {
        Some(Ok((Component::Span { content, content_offset, .. }, end))) => {
            let start = content_offset - base;
            debug_assert_eq!(start + content.len(), end);
            Ok((start, end))
        }
        Some(Ok((c, _))) => Err(not_an_item(c.offset(), c.tag())),
        Some(Err(e)) => Err(e),
        None => unreachable!("an item is read only before the end"),
    }
}

/// The span of the item whose tag `tag` is at `bytes[pos]` (`bytes[0]` at
/// absolute `base`): its content's start and its end, read in place in
/// its usual form, else by [`span_slow`].
#[inline(always)]
fn item_span(bytes: &[u8], pos: usize, base: usize, tag: u8) -> Result<(usize, usize), ParseError> {
    match if is_span_tag(tag) { short_span(bytes, pos) } else { None } {
        Some(span) => Ok(span),
        None => span_slow(bytes, pos, base),
    }
}

/// The error of a component where an item is due.
#[cold]
fn not_an_item(offset: usize, tag: u8) -> ParseError {
    ParseError::new(
        offset,
        ParseErrorKind::UnexpectedComponent { context: "type sequence (expected `B`, `S`, `O` or `U`)", tag },
    )
}

impl<'a> RawTypeReader<'a> {
    pub(super) fn new((bytes, base): (&'a [u8], usize)) -> Self {
        RawTypeReader { bytes, base, pos: 0 }
    }

    /// Reads and checks the next item.
    #[inline(always)]
    fn next_item(&mut self) -> Option<Result<RawTypeRef<'a>, ParseError>> {
        let bytes = self.bytes;
        let pos = self.pos;
        let &tag = bytes.get(pos)?;
        let (start, end) = match item_span(bytes, pos, self.base, tag) {
            Ok(span) => span,
            Err(e) => {
                self.pos = bytes.len();
                return Some(Err(e));
            }
        };
        let (content, content_offset) = (&bytes[start..end], self.base + start);
        let item = match tag {
            b'B' => buffer_item(content, content_offset).map(RawTypeRef::Buffer),
            b'S' => scalar_item(content, content_offset).map(RawTypeRef::Scalar),
            b'O' => empty_item("ref object", content, content_offset).map(|()| RawTypeRef::RefObject),
            b'U' => empty_item("unrecognized", content, content_offset).map(|()| RawTypeRef::Unrecognized),
            _ => Err(not_an_item(self.base + pos, tag)),
        };
        // An error ends the reader.
        self.pos = if item.is_ok() { end } else { bytes.len() };
        Some(item)
    }

    /// How many items remain, counted without checking them, to size the
    /// owned list before [`collect_into`](Self::collect_into) reads them.
    /// The count stops at an item it cannot skip quickly, e.g. a span
    /// length of more than 18 digits: it is then too low, and the list
    /// grows as items are read; every item is read either way.
    #[inline(always)]
    pub(super) fn count_quickly(&self) -> usize {
        if self.pos == self.bytes.len() {
            return 0;
        }
        SignatureParser::new(&self.bytes[self.pos..]).count_tags(|_| true)
    }

    /// Reads every remaining item into owned types at the end of `out`: no
    /// allocation for a buffer of rank up to 6, one exact-size slice for a
    /// higher rank.
    ///
    /// Always inlined: out of line, the list came back through memory and
    /// `RawSignature::parse` moved it with wide loads over the word stores
    /// just made (a store-forwarding stall, 42 % of an empty parse).
    #[inline(always)]
    pub(super) fn collect_into(mut self, out: &mut Vec<RawType>) -> Result<(), ParseError> {
        let bytes = self.bytes;
        while let Some(&tag) = bytes.get(self.pos) {
            // Each item straight into the list, not through a `RawTypeRef`
            // (whose buffer variant makes it large); the same checks and
            // errors as `next_item`, in the same order.
            let (start, end) = match item_span(bytes, self.pos, self.base, tag) {
                Ok(span) => span,
                Err(e) => {
                    self.pos = bytes.len();
                    return Err(e);
                }
            };
            let (content, content_offset) = (&bytes[start..end], self.base + start);
            let checked = match tag {
                b'B' => {
                    // A buffer is checked into its final place, its dims
                    // written in the same pass: a dim is two 4-byte stores,
                    // and moving the item right after would read them back
                    // 8 or 16 bytes at a time, which the CPU cannot forward
                    // from its store buffer (a stall per load).
                    let dims = Dims::Inline { len: 0, dims: [Dim::Dynamic; INLINE_DIMS] };
                    out.push(RawType::Buffer(BufferType { dtype: ScalarType::F32, dims, layout: DimOrder::RowMajor }));
                    match out.last_mut() {
                        Some(RawType::Buffer(b)) => owned_buffer(content, content_offset, b),
                        _ => Ok(()),
                    }
                }
                b'S' => scalar_item(content, content_offset).map(|s| out.push(RawType::Scalar(s))),
                b'O' => empty_item("ref object", content, content_offset).map(|()| out.push(RawType::RefObject)),
                b'U' => empty_item("unrecognized", content, content_offset).map(|()| out.push(RawType::Unrecognized)),
                _ => Err(not_an_item(self.base + self.pos, tag)),
            };
            if let Err(e) = checked {
                self.pos = bytes.len();
                return Err(e);
            }
            self.pos = end;
        }
        Ok(())
    }
}

impl<'a> Iterator for RawTypeReader<'a> {
    type Item = Result<RawTypeRef<'a>, ParseError>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        self.next_item()
    }
}
