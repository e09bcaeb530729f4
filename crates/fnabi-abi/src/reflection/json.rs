//! A zero-copy JSON token reader over `&str`: just what the `iree.abi`
//! grammar needs (strings, numbers, `null`, `true`/`false`, arrays and one
//! object), each token with its byte offset. The record parser drives it and
//! owns the grammar; this module owns JSON's lexical rules (RFC 8259: no
//! leading zeros, no control characters in strings, `\u` escapes with
//! surrogate pairs; lone surrogates are rejected because a Rust string
//! cannot hold them).

use std::borrow::Cow;

/// A lexical error: where, and what was expected.
#[derive(Debug)]
pub(crate) struct LexError {
    pub offset: usize,
    pub message: Cow<'static, str>,
}

fn err<T>(offset: usize, message: impl Into<Cow<'static, str>>) -> Result<T, LexError> {
    Err(LexError { offset, message: message.into() })
}

/// The kind of the next token, for grammar decisions and messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    String,
    Number,
    Null,
    True,
    False,
    Array,
    Object,
    End,
    Other(u8),
}

pub(crate) struct Reader<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(s: &'a str) -> Self {
        Reader { s, pos: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    /// The current byte offset.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// Skips JSON whitespace.
    pub fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes().get(self.pos) {
            self.pos += 1;
        }
    }

    /// Skips whitespace and classifies the next token.
    pub fn peek(&mut self) -> Next {
        self.ws();
        match self.bytes().get(self.pos) {
            None => Next::End,
            Some(b'"') => Next::String,
            Some(b'-' | b'0'..=b'9') => Next::Number,
            Some(b'n') => Next::Null,
            Some(b't') => Next::True,
            Some(b'f') => Next::False,
            Some(b'[') => Next::Array,
            Some(b'{') => Next::Object,
            Some(&c) => Next::Other(c),
        }
    }

    /// Skips whitespace and consumes `c` if it is next.
    pub fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.bytes().get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Consumes a literal (`null`, `true`, `false`) at the current position.
    pub fn literal(&mut self, word: &'static str) -> Result<(), LexError> {
        self.ws();
        if self.s[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            err(self.pos, format!("invalid literal (expected `{word}`)"))
        }
    }

    /// Reads a string token (after whitespace), unescaping when needed.
    pub fn string(&mut self) -> Result<Cow<'a, str>, LexError> {
        self.ws();
        let b = self.bytes();
        let start = self.pos;
        if b.get(start) != Some(&b'"') {
            return err(start, "expected a string");
        }
        let mut i = start + 1;
        // Fast path: no escapes.
        loop {
            match b.get(i) {
                None => return err(start, "unterminated string"),
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(Cow::Borrowed(&self.s[start + 1..i]));
                }
                Some(b'\\') => break,
                Some(&c) if c < 0x20 => return err(i, "control character in string (must be escaped)"),
                Some(_) => i += 1,
            }
        }
        let mut out = String::with_capacity(i - start + 8);
        out.push_str(&self.s[start + 1..i]);
        loop {
            match b.get(i) {
                None => return err(start, "unterminated string"),
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    let esc = i;
                    let c = match b.get(i + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        None => return err(start, "unterminated string"),
                        Some(b'u') => {
                            let hi = self.hex4(i + 2)?;
                            i += 6;
                            let cp = if (0xd800..0xdc00).contains(&hi) {
                                if b.get(i) != Some(&b'\\') || b.get(i + 1) != Some(&b'u') {
                                    return err(esc, "lone surrogate in \\u escape");
                                }
                                let lo = self.hex4(i + 2)?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return err(esc, "lone surrogate in \\u escape");
                                }
                                i += 6;
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            match char::from_u32(cp) {
                                Some(c) => out.push(c),
                                None => return err(esc, "lone surrogate in \\u escape"),
                            }
                            continue;
                        }
                        _ => return err(esc, "invalid escape in string"),
                    };
                    out.push(c);
                    i += 2;
                }
                Some(&c) if c < 0x20 => return err(i, "control character in string (must be escaped)"),
                Some(_) => {
                    // Copy the run up to the next quote, backslash or control byte.
                    let run_end =
                        b[i..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).map_or(b.len(), |p| i + p);
                    out.push_str(&self.s[i..run_end]);
                    i = run_end;
                }
            }
        }
    }

    fn hex4(&self, at: usize) -> Result<u32, LexError> {
        let digits = self.bytes().get(at..at + 4).filter(|d| d.iter().all(u8::is_ascii_hexdigit));
        match digits {
            // Four ASCII hex digits are valid UTF-8 and a valid u32.
            Some(d) => Ok(d.iter().fold(0, |acc, &c| acc * 16 + (c as char).to_digit(16).unwrap_or(0))),
            None => err(at.saturating_sub(2), "\\u escape needs four hex digits"),
        }
    }

    /// Reads a number token (after whitespace) and returns its text.
    pub fn number(&mut self) -> Result<&'a str, LexError> {
        self.ws();
        let b = self.bytes();
        let start = self.pos;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return err(start, "invalid number"),
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            if !b.get(i).is_some_and(u8::is_ascii_digit) {
                return err(start, "invalid number (digits must follow `.`)");
            }
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if let Some(b'e' | b'E') = b.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = b.get(i) {
                i += 1;
            }
            if !b.get(i).is_some_and(u8::is_ascii_digit) {
                return err(start, "invalid number (digits must follow the exponent)");
            }
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if b.get(i).is_some_and(|c| c.is_ascii_digit()) {
            return err(start, "invalid number (leading zero)");
        }
        self.pos = i;
        Ok(&self.s[start..i])
    }

    /// A short description of the token at the current position for "got"
    /// in messages: `a string "x"`, `number 2.5`, `an object`, `end of input`.
    /// Does not consume anything.
    pub fn describe_next(&mut self) -> String {
        let save = self.pos;
        let d = match self.peek() {
            Next::String => match self.string() {
                Ok(s) => format!("a string {:?}", truncate(&s)),
                Err(_) => "a malformed string".into(),
            },
            Next::Number => match self.number() {
                Ok(n) => format!("number {}", truncate(n)),
                Err(_) => "a malformed number".into(),
            },
            Next::Null | Next::True | Next::False => {
                let rest = &self.s[self.pos..];
                match ["null", "true", "false"].into_iter().find(|w| rest.starts_with(w)) {
                    Some(w) => w.into(),
                    None => format!("`{}`", &rest[..1]),
                }
            }
            Next::Array => "an array".into(),
            Next::Object => "an object".into(),
            Next::End => "end of input".into(),
            Next::Other(c) if c.is_ascii_graphic() => format!("`{}`", c as char),
            Next::Other(_) => {
                let ch = self.s[self.pos..].chars().next().unwrap_or('?');
                format!("{ch:?}")
            }
        };
        self.pos = save;
        d
    }
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(40) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Appends `s` as a JSON string the way Python's `json.dumps` writes it
/// (`ensure_ascii`: non-ASCII as lowercase `\uXXXX`, surrogate pairs above
/// the BMP), which is how `iree.abi` producers write their records.
pub(crate) fn write_string(out: &mut String, s: &str) {
    use std::fmt::Write;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(input: &str) -> Result<String, (usize, String)> {
        Reader::new(input).string().map(|c| c.into_owned()).map_err(|e| (e.offset, e.message.into_owned()))
    }

    #[test]
    fn strings() {
        assert_eq!(s(r#""abc""#).unwrap(), "abc");
        assert_eq!(s(r#"  "a\"b\\c\/\n\u00e9\ud83d\ude00x""#).unwrap(), "a\"b\\c/\né😀x");
        assert_eq!(s("\"é😀\"").unwrap(), "é😀");
        assert_eq!(s(r#""abc"#).unwrap_err(), (0, "unterminated string".into()));
        assert_eq!(s(r#""a\"#).unwrap_err(), (0, "unterminated string".into()));
        assert_eq!(s(r#""a\x""#).unwrap_err(), (2, "invalid escape in string".into()));
        assert_eq!(s(r#""\ud800""#).unwrap_err(), (1, "lone surrogate in \\u escape".into()));
        assert_eq!(s(r#""\ud800\u0041""#).unwrap_err(), (1, "lone surrogate in \\u escape".into()));
        assert_eq!(s(r#""\udc00""#).unwrap_err(), (1, "lone surrogate in \\u escape".into()));
        assert_eq!(s(r#""\u12g4""#).unwrap_err(), (1, "\\u escape needs four hex digits".into()));
        assert_eq!(s("\"a\u{1}\"").unwrap_err(), (2, "control character in string (must be escaped)".into()));
        assert_eq!(s("\"\\n\u{1}\"").unwrap_err(), (3, "control character in string (must be escaped)".into()));
        assert_eq!(s("x").unwrap_err(), (0, "expected a string".into()));
    }

    #[test]
    fn numbers() {
        for ok in ["0", "-0", "12", "1.5", "1e5", "1E-5", "-2.5e+3"] {
            assert_eq!(Reader::new(ok).number().unwrap(), ok);
        }
        for bad in ["-", "01", "1.", "1e", ".5", "+1", "1.e3"] {
            assert!(Reader::new(bad).number().is_err(), "{bad}");
        }
    }

    #[test]
    fn writes_like_python_json_dumps() {
        let mut out = String::new();
        write_string(&mut out, "a\"\\\n\u{1}é😀\u{7f}");
        assert_eq!(out, r#""a\"\\\n\u0001\u00e9\ud83d\ude00\u007f""#);
        assert_eq!(s(&out).unwrap(), "a\"\\\n\u{1}é😀\u{7f}");
    }

    #[test]
    fn describes_tokens() {
        assert_eq!(Reader::new(" \"x\"").describe_next(), "a string \"x\"");
        assert_eq!(Reader::new("2.5").describe_next(), "number 2.5");
        assert_eq!(Reader::new("{").describe_next(), "an object");
        assert_eq!(Reader::new("").describe_next(), "end of input");
        assert_eq!(Reader::new("é").describe_next(), "'é'");
        assert_eq!(Reader::new("?").describe_next(), "`?`");
        assert_eq!(Reader::new("tru").describe_next(), "`t`");
        assert_eq!(Reader::new("false").describe_next(), "false");
    }
}
