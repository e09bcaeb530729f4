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

    fn fail(&mut self, at: usize, kind: ParseErrorKind) -> Option<Result<Component<'a>, ParseError>> {
        self.done = true;
        Some(Err(ParseError::new(self.base + at, kind)))
    }

    /// Scans `[0-9]+` from `self.pos`; returns the digit range.
    fn digits(&mut self) -> (usize, usize) {
        let start = self.pos;
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        (start, self.pos)
    }
}

impl<'a> Iterator for SignatureParser<'a> {
    type Item = Result<Component<'a>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.bytes.len() {
            return None;
        }
        let start = self.pos;
        let tag = self.bytes[start];
        self.pos += 1;
        if is_integer_tag(tag) {
            let negative = self.bytes.get(self.pos) == Some(&b'-');
            if negative {
                self.pos += 1;
            }
            let (d0, d1) = self.digits();
            if d0 == d1 {
                return self.fail(d0, ParseErrorKind::MissingDigits);
            }
            // Accumulate in i64 and stop as soon as the magnitude leaves the
            // i32 range; leading zeros never overflow.
            let limit: i64 = if negative { 1 << 31 } else { (1 << 31) - 1 };
            let mut magnitude: i64 = 0;
            for &b in &self.bytes[d0..d1] {
                magnitude = magnitude * 10 + i64::from(b - b'0');
                if magnitude > limit {
                    return self.fail(start + 1, ParseErrorKind::IntegerOutOfRange);
                }
            }
            let value = if negative { -magnitude } else { magnitude } as i32;
            Some(Ok(Component::Integer { tag, value, offset: self.base + start }))
        } else if is_span_tag(tag) {
            let (d0, d1) = self.digits();
            if d0 == d1 {
                return self.fail(d0, ParseErrorKind::MissingLength);
            }
            let mut declared: usize = 0;
            for &b in &self.bytes[d0..d1] {
                declared = match declared.checked_mul(10).and_then(|v| v.checked_add(usize::from(b - b'0'))) {
                    Some(v) => v,
                    None => return self.fail(d0, ParseErrorKind::LengthOutOfRange),
                };
            }
            if declared == 0 {
                return self.fail(d0, ParseErrorKind::ZeroLength);
            }
            let available = self.bytes.len() - self.pos;
            if declared > available {
                return self.fail(start, ParseErrorKind::Truncated { declared, available });
            }
            if self.bytes[self.pos] != b'!' {
                let found = self.bytes[self.pos];
                return self.fail(self.pos, ParseErrorKind::MissingBang(Some(found)));
            }
            let content_start = self.pos + 1;
            let end = self.pos + declared;
            self.pos = end;
            Some(Ok(Component::Span {
                tag,
                content: &self.bytes[content_start..end],
                offset: self.base + start,
                content_offset: self.base + content_start,
            }))
        } else {
            self.fail(start, ParseErrorKind::BadTag(tag))
        }
    }
}

impl std::iter::FusedIterator for SignatureParser<'_> {}

/// Writes components into a signature string.
///
/// # Panics
/// The methods panic when given a tag of the wrong class (an integer tag
/// that is not `_`/`a`–`z`, a span tag that is not `A`–`Z`): tags are chosen
/// by code, never by input.
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

/// Appends the decimal digits of `v` (no formatting machinery: this is the
/// hot path of mangling).
fn push_decimal(buf: &mut String, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        buf.push(d as char);
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
    #[should_panic(expected = "integer tag")]
    fn builder_rejects_bad_integer_tag() {
        SignatureBuilder::new().integer(b'A', 1);
    }
}
