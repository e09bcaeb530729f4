//! The human-readable form of raw types and signatures: printing it and parsing it back.

use super::{BufferType, Dim, DimOrder, Dims, RawSignature, RawSignatureReader, RawType, RawTypeReader, RawTypeRef};
use crate::error::{ParseError, ParseErrorKind};
use crate::mangle::{decimal, decimal_digits};
use crate::scalar::ScalarType;
use std::fmt;

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
    /// A dim's digits a byte at a time: a dim has a few digits, and a
    /// `push` each costs less than checking them as text and copying them.
    #[inline]
    fn put_dim(&mut self, d: Dim) -> fmt::Result {
        let Dim::Static(v) = d else { return self.put_ascii(b'?') };
        for &digit in decimal_digits(u64::from(v), &mut [0; 20]) {
            self.push(char::from(digit));
        }
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

impl fmt::Display for BufferType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut b = Batch::new(f);
        write_buffer(&mut b, self.dtype, self.dims().iter().copied(), self.layout)?;
        b.finish()
    }
}

/// Writes a buffer type's human-readable form (`Buffer<float32[?x4]>`).
fn write_buffer(
    f: &mut impl Sink,
    dtype: ScalarType,
    dims: impl IntoIterator<Item = Dim>,
    layout: DimOrder,
) -> fmt::Result {
    f.put("Buffer<")?;
    f.put(dtype.name())?;
    f.put_ascii(b'[')?;
    for (i, d) in dims.into_iter().enumerate() {
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

impl RawType {
    fn write_human(&self, f: &mut impl Sink) -> fmt::Result {
        match self {
            RawType::Buffer(b) => write_buffer(f, b.dtype, b.dims().iter().copied(), b.layout),
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

impl RawSignature {
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
        list(f, self.inputs())?;
        f.put(" -> ")?;
        list(f, self.results())
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
        Ok(RawSignature::new(inputs, results))
    }
}

impl RawSignatureReader<'_> {
    /// Appends the signature's human-readable form (what
    /// [`RawSignature`]'s `Display` prints) to `out` straight from the
    /// mangled text: no owned signature is built and nothing is allocated
    /// but `out`'s growth. Every item is checked as
    /// [`RawSignature::parse`] checks it; on an error `out` is left as it
    /// was.
    ///
    /// ```
    /// use fnabi_abi::raw::RawSignatureReader;
    /// let mut out = String::from("f: ");
    /// RawSignatureReader::new(b"I7!B4!d-1R6!S3!t6").unwrap().write_human(&mut out).unwrap();
    /// assert_eq!(out, "f: (Buffer<float32[?]>) -> (sint32)");
    /// let bad = RawSignatureReader::new(b"I6!B3!x1R1!").unwrap();
    /// assert!(bad.write_human(&mut out).is_err());
    /// assert_eq!(out, "f: (Buffer<float32[?]>) -> (sint32)");
    /// ```
    pub fn write_human(&self, out: &mut String) -> Result<(), ParseError> {
        // A side goes down as its parts and the reader is made here: a
        // reader handed to a call is copied whole right after it was
        // written a word at a time, which stalls store forwarding.
        fn list(f: &mut String, side: (&[u8], usize)) -> Result<(), ParseError> {
            f.push('(');
            for (i, t) in RawTypeReader::new(side).enumerate() {
                if i > 0 {
                    f.push_str(", ");
                }
                // Writing into a String cannot fail.
                let _ = match t? {
                    RawTypeRef::Buffer(b) => write_buffer(f, b.dtype, b.dims(), b.layout),
                    RawTypeRef::Scalar(s) => f.put(s.name()),
                    RawTypeRef::RefObject => f.put("RefObject<?>"),
                    RawTypeRef::Unrecognized => f.put("Unrecognized<?>"),
                };
            }
            f.push(')');
            Ok(())
        }
        let start = out.len();
        let written = list(out, self.inputs).and_then(|()| {
            out.push_str(" -> ");
            list(out, self.results)
        });
        if written.is_err() {
            out.truncate(start);
        }
        written
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
