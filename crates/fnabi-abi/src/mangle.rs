//! The lexical layer of IREE's generic signature mangling: a signature is a
//! sequence of *components*, each a tagged integer (`_` or `a`–`z`, then
//! `-?[0-9]+`) or a tagged, length-prefixed span (`A`–`Z`, a decimal length
//! `L`, then `L` bytes whose first is `!`).
//!
//! [`SignatureBuilder`] writes components; [`SignatureParser`] reads them
//! zero-copy over `&[u8]`, never allocating. Every malformed component is a
//! [`ParseError`] with the absolute byte offset, and a parser stops after its
//! first error, so every loop over it terminates (the C++ reference's
//! `SeekTag` can spin forever on a malformed component).
//!
//! ```
//! use fnabi_abi::mangle::{Component, SignatureBuilder, SignatureParser};
//!
//! let mut b = SignatureBuilder::new();
//! b.integer(b'k', -12).span(b'X', "").nested(b'S', |s| {
//!     s.integer(b'_', 3);
//! });
//! assert_eq!(b.as_str(), "k-12X1!S3!_3");
//!
//! let comps: Vec<_> = SignatureParser::new(b.as_str()).collect::<Result<_, _>>().unwrap();
//! assert!(matches!(comps[0], Component::Integer { tag: b'k', value: -12, offset: 0 }));
//! assert!(matches!(comps[1], Component::Span { tag: b'X', content: b"", .. }));
//! ```

use crate::error::{ParseError, ParseErrorKind};

/// True for the tags of integer components: `_` and `a`–`z`.
pub const fn is_integer_tag(b: u8) -> bool {
    b == b'_' || b.is_ascii_lowercase()
}

/// True for the tags of span components: `A`–`Z`.
pub const fn is_span_tag(b: u8) -> bool {
    b.is_ascii_uppercase()
}

/// One lexical component of a mangled signature, borrowed from the input.
///
/// ```
/// use fnabi_abi::mangle::{Component, SignatureParser};
///
/// // `S` span of length 3 at offset 0: `!` at 2, content `_3` from offset 3.
/// let span = SignatureParser::new("S3!_3").next().unwrap().unwrap();
/// assert_eq!(span, Component::Span { tag: b'S', content: b"_3", offset: 0, content_offset: 3 });
/// assert_eq!((span.tag(), span.offset()), (b'S', 0));
///
/// // The span's content, read with offsets into the whole signature.
/// let inner = span.nested().unwrap().next().unwrap().unwrap();
/// assert_eq!(inner, Component::Integer { tag: b'_', value: 3, offset: 3 });
/// assert!(inner.nested().is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component<'a> {
    /// A tagged 32-bit integer.
    Integer {
        /// `_` or `a`–`z`.
        tag: u8,
        /// The value.
        value: i32,
        /// Absolute offset of the tag byte.
        offset: usize,
    },
    /// A tagged span of opaque bytes.
    Span {
        /// `A`–`Z`.
        tag: u8,
        /// The span's content: the bytes after the `!`.
        content: &'a [u8],
        /// Absolute offset of the tag byte.
        offset: usize,
        /// Absolute offset of `content[0]` (one past the `!`).
        content_offset: usize,
    },
}

impl<'a> Component<'a> {
    /// The tag byte.
    pub fn tag(&self) -> u8 {
        match *self {
            Component::Integer { tag, .. } | Component::Span { tag, .. } => tag,
        }
    }

    /// Absolute offset of the tag byte.
    pub fn offset(&self) -> usize {
        match *self {
            Component::Integer { offset, .. } | Component::Span { offset, .. } => offset,
        }
    }

    /// A parser over the content of a span, reporting absolute offsets;
    /// `None` for an integer component.
    pub fn nested(&self) -> Option<SignatureParser<'a>> {
        match *self {
            Component::Span { content, content_offset, .. } => {
                Some(SignatureParser::with_offset(content, content_offset))
            }
            Component::Integer { .. } => None,
        }
    }
}

/// A zero-copy reader of components.
///
/// An iterator of `Result<Component, ParseError>` that yields `None` after the
/// last component or after the first error (it is fused).
///
/// ```
/// use fnabi_abi::mangle::{Component, SignatureParser};
///
/// let mut p = SignatureParser::new("a1b-2");
/// // `b` starts at byte 2 (after `a1`).
/// assert_eq!(p.seek_tag(b'b'), Ok(Some(Component::Integer { tag: b'b', value: -2, offset: 2 })));
/// assert!(p.is_at_end());
/// assert_eq!(p.offset(), 5);
/// assert!(p.next().is_none());
///
/// // A span whose length runs past the input is an error, then the parser stops.
/// let mut bad = SignatureParser::new("S9!x");
/// assert!(bad.next().unwrap().is_err());
/// assert!(bad.next().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct SignatureParser<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: usize,
    done: bool,
}

impl<'a> SignatureParser<'a> {
    /// A parser over a whole signature (offsets start at 0).
    pub fn new(bytes: &'a (impl AsRef<[u8]> + ?Sized)) -> Self {
        Self::with_offset(bytes.as_ref(), 0)
    }

    /// A parser over `bytes` that reports offsets as `base + position`
    /// (for the content of a span inside a larger signature).
    pub fn with_offset(bytes: &'a [u8], base: usize) -> Self {
        SignatureParser { bytes, pos: 0, base, done: false }
    }

    /// Absolute offset of the next unread byte.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// True when every byte has been consumed without error.
    pub fn is_at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    /// Reads components until one with `tag` is found and returns it.
    ///
    /// `Ok(None)` when the input ends first; a malformed component on the way
    /// is an error (the reference loops forever there).
    pub fn seek_tag(&mut self, tag: u8) -> Result<Option<Component<'a>>, ParseError> {
        for c in self.by_ref() {
            let c = c?;
            if c.tag() == tag {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }

    /// Counts the components left whose tag `want`s, without reporting
    /// errors: a quick scan that skips spans by their length and stops at
    /// the first malformed component (the count is then a lower bound, and
    /// the caller's own pass reports the error). Does not move this parser.
    pub(crate) fn count_tags(&self, want: impl Fn(u8) -> bool) -> usize {
        let bytes = self.bytes;
        let mut pos = if self.done { bytes.len() } else { self.pos };
        let mut n = 0;
        while let Some(&tag) = bytes.get(pos) {
            let class = CLASS[usize::from(tag)];
            pos += 1;
            if class == INT_TAG {
                pos += usize::from(bytes.get(pos) == Some(&b'-'));
            } else if class != SPAN_TAG {
                break;
            }
            let d0 = pos;
            let mut v: usize = 0;
            while let Some(&b) = bytes.get(pos) {
                let d = b.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                v = v.wrapping_mul(10).wrapping_add(usize::from(d));
                pos += 1;
            }
            if pos == d0 {
                break;
            }
            if class == SPAN_TAG {
                if pos - d0 > 18 || v == 0 || v > bytes.len() - pos {
                    break;
                }
                pos += v;
            }
            n += usize::from(want(tag));
        }
        n
    }

    /// Stops the parser with the error `kind` at `at` (relative). Inlined,
    /// with the error built out of line (one word): a call that took the
    /// parser would keep its state in memory, and its position would go
    /// through a store and a load on every component.
    #[inline(always)]
    fn fail(&mut self, at: usize, kind: ParseErrorKind) -> Option<Result<Component<'a>, ParseError>> {
        self.done = true;
        Some(Err(ParseError::new(self.base + at, kind)))
    }
}

/// The value of an integer's digits `digits` (more than nine, so it may
/// leave the `i32` range): `None` when it does.
#[cold]
#[inline(never)]
fn long_integer(digits: &[u8], negative: bool) -> Option<i32> {
    // Accumulate in i64 and stop as soon as the magnitude leaves the i32
    // range; leading zeros never overflow.
    let limit: i64 = if negative { 1 << 31 } else { (1 << 31) - 1 };
    let mut magnitude: i64 = 0;
    for &b in digits {
        magnitude = magnitude * 10 + i64::from(b - b'0');
        if magnitude > limit {
            return None;
        }
    }
    Some(if negative { -magnitude } else { magnitude } as i32)
}

/// The value of a span length of more than eighteen digits (leading zeros
/// allowed), `None` when it overflows `usize`.
#[cold]
#[inline(never)]
fn long_length(digits: &[u8]) -> Option<usize> {
    let mut declared: usize = 0;
    for &b in digits {
        declared = declared.checked_mul(10)?.checked_add(usize::from(b - b'0'))?;
    }
    Some(declared)
}

/// Byte classes of the lexer, one table lookup per byte.
const OTHER: u8 = 0;
const DIGIT: u8 = 1;
const INT_TAG: u8 = 2;
const SPAN_TAG: u8 = 3;

static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_digit() {
            DIGIT
        } else if is_integer_tag(c) {
            INT_TAG
        } else if is_span_tag(c) {
            SPAN_TAG
        } else {
            OTHER
        };
        b += 1;
    }
    t
};

impl<'a> Iterator for SignatureParser<'a> {
    type Item = Result<Component<'a>, ParseError>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.bytes;
        let start = self.pos;
        if self.done || start >= bytes.len() {
            return None;
        }
        let tag = bytes[start];
        let class = CLASS[usize::from(tag)];
        let mut pos = start + 1;
        if class == INT_TAG {
            let negative = pos < bytes.len() && bytes[pos] == b'-';
            pos += usize::from(negative);
            let d0 = pos;
            // Up to nine digits cannot leave the i32 range; a longer run
            // (wrapped here) is read again by `long_integer`.
            let mut magnitude: u32 = 0;
            while let Some(&b) = bytes.get(pos) {
                let d = b.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                magnitude = magnitude.wrapping_mul(10).wrapping_add(u32::from(d));
                pos += 1;
            }
            self.pos = pos;
            if pos == d0 {
                return self.fail(d0, ParseErrorKind::MissingDigits);
            }
            if pos - d0 > 9 {
                let Some(value) = long_integer(&bytes[d0..pos], negative) else {
                    return self.fail(start + 1, ParseErrorKind::IntegerOutOfRange);
                };
                return Some(Ok(Component::Integer { tag, value, offset: self.base + start }));
            }
            // magnitude < 10^9 < 2^31: both signs fit.
            let value = if negative { -(magnitude as i32) } else { magnitude as i32 };
            Some(Ok(Component::Integer { tag, value, offset: self.base + start }))
        } else if class == SPAN_TAG {
            let d0 = pos;
            // Up to eighteen digits cannot overflow a u64; a longer run
            // (wrapped here) is read again by `long_length`.
            let mut short: u64 = 0;
            while let Some(&b) = bytes.get(pos) {
                let d = b.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                short = short.wrapping_mul(10).wrapping_add(u64::from(d));
                pos += 1;
            }
            self.pos = pos;
            if pos == d0 {
                return self.fail(d0, ParseErrorKind::MissingLength);
            }
            let declared = if pos - d0 > 18 { long_length(&bytes[d0..pos]) } else { usize::try_from(short).ok() };
            let Some(declared) = declared else {
                return self.fail(d0, ParseErrorKind::LengthOutOfRange);
            };
            if declared == 0 {
                return self.fail(d0, ParseErrorKind::ZeroLength);
            }
            let available = bytes.len() - pos;
            if declared > available {
                return self.fail(start, ParseErrorKind::Truncated { declared, available });
            }
            if bytes[pos] != b'!' {
                let found = bytes[pos];
                return self.fail(pos, ParseErrorKind::MissingBang(Some(found)));
            }
            let content_start = pos + 1;
            let end = pos + declared;
            self.pos = end;
            Some(Ok(Component::Span {
                tag,
                content: &bytes[content_start..end],
                offset: self.base + start,
                content_offset: self.base + content_start,
            }))
        } else {
            self.fail(start, ParseErrorKind::BadTag(tag))
        }
    }
}

impl std::iter::FusedIterator for SignatureParser<'_> {}

/// Fast paths of the lexer, for parsers that know which component is due
/// at a position (the SIP and raw readers): each reads one component's
/// usual form in place — at most nine digits, so no range check — and
/// returns `None` for anything else, which the caller hands to the generic
/// lexer ([`component_at`]) so that errors and offsets stay the lexer's.
///
/// Up to nine decimal digits at `body[pos..]`: their value and the
/// position after them; `None` without digits or with more than nine.
#[inline(always)]
pub(crate) fn short_digits(body: &[u8], mut pos: usize) -> Option<(u32, usize)> {
    let d0 = pos;
    let mut value: u32 = 0;
    while let Some(&b) = body.get(pos) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        value = value.wrapping_mul(10).wrapping_add(u32::from(d));
        pos += 1;
    }
    if pos == d0 || pos - d0 > 9 { None } else { Some((value, pos)) }
}

/// The integer component whose tag is at `body[pos]` (a fast path, see
/// [`short_digits`]): its value and the position after it.
#[inline(always)]
pub(crate) fn short_integer(body: &[u8], pos: usize) -> Option<(i32, usize)> {
    let negative = body.get(pos + 1) == Some(&b'-');
    let (magnitude, next) = short_digits(body, pos + 1 + usize::from(negative))?;
    // magnitude < 10^9 < 2^31: both signs fit.
    Some((if negative { -(magnitude as i32) } else { magnitude as i32 }, next))
}

/// The span whose tag is at `body[pos]` (a fast path, see
/// [`short_digits`]): its content's start and its end.
#[inline(always)]
pub(crate) fn short_span(body: &[u8], pos: usize) -> Option<(usize, usize)> {
    let (declared, bang) = short_digits(body, pos + 1)?;
    let declared = declared as usize;
    if declared == 0 || declared > body.len() - bang || body[bang] != b'!' {
        return None;
    }
    Some((bang + 1, bang + declared))
}

/// The component at `body[pos]` read by the generic lexer (`body[0]` is at
/// absolute offset `base`), and the position after it; `None` at the end.
#[cold]
#[inline(never)]
pub(crate) fn component_at(body: &[u8], pos: usize, base: usize) -> Option<Result<(Component<'_>, usize), ParseError>> {
    let mut p = SignatureParser::with_offset(body.get(pos..)?, base + pos);
    let c = p.next()?;
    Some(c.map(|c| (c, p.offset() - base)))
}

/// The contents of the top level's `I` and `R` spans, each with its
/// absolute offset: exactly one of each, in either order, and nothing
/// else.
#[inline]
pub(crate) fn input_and_result_spans(mangled: &[u8]) -> Result<[(&[u8], usize); 2], ParseError> {
    // The usual form first: `I` then `R`, nothing after.
    if mangled.first() == Some(&b'I')
        && let Some((i0, i1)) = short_span(mangled, 0)
        && mangled.get(i1) == Some(&b'R')
        && let Some((r0, r1)) = short_span(mangled, i1)
        && r1 == mangled.len()
    {
        return Ok([(&mangled[i0..i1], i0), (&mangled[r0..r1], r0)]);
    }
    input_and_result_spans_slow(mangled)
}

#[cold]
#[inline(never)]
fn input_and_result_spans_slow(mangled: &[u8]) -> Result<[(&[u8], usize); 2], ParseError> {
    let mut inputs = None;
    let mut results = None;
    for c in SignatureParser::new(mangled) {
        let c = c?;
        let (slot, content, content_offset) = match c {
            Component::Span { tag: b'I', content, content_offset, .. } => (&mut inputs, content, content_offset),
            Component::Span { tag: b'R', content, content_offset, .. } => (&mut results, content, content_offset),
            _ => {
                return Err(ParseError::new(
                    c.offset(),
                    ParseErrorKind::UnexpectedComponent { context: "signature (expected `I` or `R`)", tag: c.tag() },
                ));
            }
        };
        if slot.is_some() {
            return Err(ParseError::new(c.offset(), ParseErrorKind::DuplicateSpan(c.tag())));
        }
        *slot = Some((content, content_offset));
    }
    let end = mangled.len();
    let inputs = inputs.ok_or_else(|| ParseError::new(end, ParseErrorKind::MissingSpan(b'I')))?;
    let results = results.ok_or_else(|| ParseError::new(end, ParseErrorKind::MissingSpan(b'R')))?;
    Ok([inputs, results])
}

/// Writes components into a signature string.
///
/// # Panics
/// The methods panic when given a tag of the wrong class (an integer tag
/// that is not `_`/`a`–`z`, a span tag that is not `A`–`Z`): tags are chosen
/// by code, never by input.
///
/// ```
/// use fnabi_abi::mangle::SignatureBuilder;
///
/// let mut inner = SignatureBuilder::new();
/// inner.integer(b'i', 7);
/// assert_eq!(inner.as_str(), "i7");
///
/// // Appended as a span: tag `F`, length 3 (`!i7`).
/// let mut outer = SignatureBuilder::new();
/// inner.append_to(&mut outer, b'F');
/// outer.integer(b'_', 0);
/// assert_eq!(outer.into_string(), "F3!i7_0");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SignatureBuilder {
    buf: String,
}

impl SignatureBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an integer component.
    pub fn integer(&mut self, tag: u8, value: i32) -> &mut Self {
        assert!(is_integer_tag(tag), "integer tag must be `_` or `a`-`z`, got {:?}", tag as char);
        self.buf.push(tag as char);
        if value < 0 {
            self.buf.push('-');
        }
        push_decimal(&mut self.buf, u64::from(value.unsigned_abs()));
        self
    }

    /// Appends a span component with `content` (opaque: any text).
    pub fn span(&mut self, tag: u8, content: &str) -> &mut Self {
        assert!(is_span_tag(tag), "span tag must be `A`-`Z`, got {:?}", tag as char);
        self.buf.push(tag as char);
        push_decimal(&mut self.buf, content.len() as u64 + 1);
        self.buf.push('!');
        self.buf.push_str(content);
        self
    }

    /// Appends a span whose content is written by `f` into this same builder
    /// (the length prefix is inserted afterwards; no temporary string).
    pub fn nested(&mut self, tag: u8, f: impl FnOnce(&mut SignatureBuilder)) -> &mut Self {
        assert!(is_span_tag(tag), "span tag must be `A`-`Z`, got {:?}", tag as char);
        let start = self.buf.len();
        f(self);
        let content_len = self.buf.len() - start;
        let mut prefix = String::with_capacity(24);
        prefix.push(tag as char);
        push_decimal(&mut prefix, content_len as u64 + 1);
        prefix.push('!');
        self.buf.insert_str(start, &prefix);
        self
    }

    /// Appends this builder's signature to `other` as a span tagged `tag`
    /// (the reference's `SignatureBuilder::AppendTo`).
    pub fn append_to(&self, other: &mut SignatureBuilder, tag: u8) {
        other.span(tag, &self.buf);
    }

    /// The signature written so far.
    pub fn as_str(&self) -> &str {
        &self.buf
    }

    /// Takes the signature.
    pub fn into_string(self) -> String {
        self.buf
    }
}

/// The decimal digits of `v` as ASCII bytes, written into the end of `buf`
/// (no formatting machinery: the hot path of printing signatures; a writer
/// that takes characters one at a time needs no UTF-8 check of them).
pub(crate) fn decimal_digits(v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut v = v;
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

/// [`decimal_digits`] as a `&str`.
pub(crate) fn decimal(v: u64, buf: &mut [u8; 20]) -> &str {
    // Only ASCII digits were written.
    std::str::from_utf8(decimal_digits(v, buf)).unwrap_or_default()
}

/// Appends the decimal digits of `v` (no formatting machinery: this is the
/// hot path of mangling).
fn push_decimal(buf: &mut String, v: u64) {
    for &d in decimal_digits(v, &mut [0; 20]) {
        buf.push(char::from(d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &str) -> Result<Vec<Component<'_>>, ParseError> {
        SignatureParser::new(s).collect()
    }

    fn err(s: &str) -> (usize, ParseErrorKind) {
        let e = all(s).unwrap_err();
        (e.offset(), e.kind().clone())
    }

    #[test]
    fn integers() {
        let c = all("_0a1z-5k2147483647m-2147483648n007o-0").unwrap();
        let vals: Vec<_> = c
            .iter()
            .map(|c| match c {
                Component::Integer { tag, value, .. } => (*tag as char, *value),
                _ => panic!("span"),
            })
            .collect();
        assert_eq!(vals, vec![('_', 0), ('a', 1), ('z', -5), ('k', i32::MAX), ('m', i32::MIN), ('n', 7), ('o', 0)]);
        assert_eq!(c[3].offset(), 7);
    }

    #[test]
    fn integer_errors() {
        assert_eq!(err("_"), (1, ParseErrorKind::MissingDigits));
        assert_eq!(err("_-"), (2, ParseErrorKind::MissingDigits));
        assert_eq!(err("a+1"), (1, ParseErrorKind::MissingDigits));
        assert_eq!(err("_1k2147483648"), (3, ParseErrorKind::IntegerOutOfRange));
        assert_eq!(err("k-2147483649"), (1, ParseErrorKind::IntegerOutOfRange));
        assert_eq!(err("k99999999999999999999999999"), (1, ParseErrorKind::IntegerOutOfRange));
        assert_eq!(err("_1!"), (2, ParseErrorKind::BadTag(b'!')));
        assert_eq!(err("_1 "), (2, ParseErrorKind::BadTag(b' ')));
        assert_eq!(err("\u{e9}"), (0, ParseErrorKind::BadTag(0xc3)));
    }

    #[test]
    fn spans() {
        let c = all("X1!B4!!9!Y3!ab").unwrap();
        assert_eq!(c[0], Component::Span { tag: b'X', content: b"", offset: 0, content_offset: 3 });
        // Content is opaque: `!`, digits, anything.
        assert_eq!(c[1], Component::Span { tag: b'B', content: b"!9!", offset: 3, content_offset: 6 });
        assert_eq!(c[2], Component::Span { tag: b'Y', content: b"ab", offset: 9, content_offset: 12 });
        // Leading zeros in a length are accepted.
        assert!(matches!(all("X002!a").unwrap()[0], Component::Span { content: b"a", .. }));
    }

    #[test]
    fn span_errors() {
        assert_eq!(err("X"), (1, ParseErrorKind::MissingLength));
        assert_eq!(err("X!"), (1, ParseErrorKind::MissingLength));
        assert_eq!(err("X-1!"), (1, ParseErrorKind::MissingLength));
        assert_eq!(err("X0!"), (1, ParseErrorKind::ZeroLength));
        assert_eq!(err("_1X5!ab"), (2, ParseErrorKind::Truncated { declared: 5, available: 3 }));
        assert_eq!(err("X1"), (0, ParseErrorKind::Truncated { declared: 1, available: 0 }));
        assert_eq!(err("X2?a"), (2, ParseErrorKind::MissingBang(Some(b'?'))));
        assert_eq!(err("X99999999999999999999999999999!"), (1, ParseErrorKind::LengthOutOfRange));
    }

    #[test]
    fn nested_offsets_are_absolute() {
        let c = all("_1S10!k0_0k1_!").unwrap_err();
        assert_eq!(c, ParseError::new(2, ParseErrorKind::Truncated { declared: 10, available: 9 }));
        let c = all("_1S8!k0_0k1_").unwrap();
        let inner: Result<Vec<_>, _> = c[1].nested().unwrap().collect();
        let e = inner.unwrap_err();
        assert_eq!(e, ParseError::new(12, ParseErrorKind::MissingDigits));
    }

    #[test]
    fn fused_after_error_and_seek_terminates() {
        let mut p = SignatureParser::new("_1?_2I1!");
        assert!(p.next().unwrap().is_ok());
        assert!(p.next().unwrap().is_err());
        assert!(p.next().is_none());
        let mut p = SignatureParser::new("?I1!");
        assert_eq!(p.seek_tag(b'I').unwrap_err().offset(), 0);
        let mut p = SignatureParser::new("_1R1!I3!_0");
        let i = p.seek_tag(b'I').unwrap().unwrap();
        assert_eq!(i.offset(), 5);
        assert_eq!(p.seek_tag(b'I').unwrap(), None);
    }

    #[test]
    fn builder() {
        let mut inner = SignatureBuilder::new();
        inner.integer(b't', 2).integer(b'd', -1).integer(b'd', 128).integer(b'd', 64);
        let mut b = SignatureBuilder::new();
        inner.append_to(&mut b, b'B');
        assert_eq!(b.as_str(), "B13!t2d-1d128d64");
        let mut n = SignatureBuilder::new();
        n.nested(b'I', |b| {
            b.nested(b'B', |b| {
                b.integer(b't', 2).integer(b'd', -1).integer(b'd', 128).integer(b'd', 64);
            });
        });
        assert_eq!(n.as_str(), "I17!B13!t2d-1d128d64");
        let mut e = SignatureBuilder::new();
        e.nested(b'X', |_| {}).span(b'Y', "");
        assert_eq!(e.into_string(), "X1!Y1!");
    }

    #[test]
    fn long_digit_runs() {
        // Leading zeros never overflow: more than nine digits of an integer,
        // more than eighteen of a length.
        assert!(matches!(
            all("k0000000000001d-00000000002147483648").unwrap()[..],
            [Component::Integer { value: 1, .. }, Component::Integer { value: i32::MIN, .. }]
        ));
        assert!(matches!(all("X0000000000000000000000002!a").unwrap()[0], Component::Span { content: b"a", .. }));
        assert_eq!(
            err("X1000000000000000000!"),
            (0, ParseErrorKind::Truncated { declared: 1_000_000_000_000_000_000, available: 1 })
        );
    }

    /// The grammar of the module docs, spelled out plainly (slow, obviously
    /// right): what every input must lex to, offsets and error kinds included.
    fn spec(bytes: &[u8]) -> Vec<Result<Component<'_>, ParseError>> {
        let mut out = Vec::new();
        let mut pos = 0;
        let fail = |at, kind| Err(ParseError::new(at, kind));
        while pos < bytes.len() {
            let start = pos;
            let tag = bytes[pos];
            pos += 1;
            let digits = |from: usize| from + bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
            if is_integer_tag(tag) {
                let negative = bytes.get(pos) == Some(&b'-');
                let d0 = pos + usize::from(negative);
                let d1 = digits(d0);
                if d0 == d1 {
                    out.push(fail(d0, ParseErrorKind::MissingDigits));
                    break;
                }
                let text = std::str::from_utf8(&bytes[start + 1..d1]).unwrap();
                match text.parse::<i128>().ok().and_then(|v| i32::try_from(v).ok()) {
                    Some(value) => out.push(Ok(Component::Integer { tag, value, offset: start })),
                    None => {
                        out.push(fail(start + 1, ParseErrorKind::IntegerOutOfRange));
                        break;
                    }
                }
                pos = d1;
            } else if is_span_tag(tag) {
                let d1 = digits(pos);
                if d1 == pos {
                    out.push(fail(pos, ParseErrorKind::MissingLength));
                    break;
                }
                let text = std::str::from_utf8(&bytes[pos..d1]).unwrap();
                let Ok(declared) = text.parse::<usize>() else {
                    out.push(fail(pos, ParseErrorKind::LengthOutOfRange));
                    break;
                };
                if declared == 0 {
                    out.push(fail(pos, ParseErrorKind::ZeroLength));
                    break;
                }
                let available = bytes.len() - d1;
                if declared > available {
                    out.push(fail(start, ParseErrorKind::Truncated { declared, available }));
                    break;
                }
                if bytes[d1] != b'!' {
                    out.push(fail(d1, ParseErrorKind::MissingBang(Some(bytes[d1]))));
                    break;
                }
                let content = &bytes[d1 + 1..d1 + declared];
                out.push(Ok(Component::Span { tag, content, offset: start, content_offset: d1 + 1 }));
                pos = d1 + declared;
            } else {
                out.push(fail(start, ParseErrorKind::BadTag(tag)));
                break;
            }
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
        #[test]
        fn lexer_matches_the_grammar(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec!["_", "k", "d", "t", "I", "R", "B", "S", "K", "!", "-", "0", "1", "9", "?", " "]),
                    proptest::sample::select(vec!["2147483647", "2147483648", "0000000000000", "99999999999999999999", "18446744073709551616", "000000000000000000007"]),
                ],
                0..24,
            )
        ) {
            let text = parts.concat();
            let got: Vec<_> = SignatureParser::new(&text).collect();
            proptest::prop_assert_eq!(got, spec(text.as_bytes()));
        }
    }

    #[test]
    #[should_panic(expected = "integer tag")]
    fn builder_rejects_bad_integer_tag() {
        SignatureBuilder::new().integer(b'A', 1);
    }
}
