//! The text forms of SIP structures: IREE's reference text and the Python-like form.

use super::{SipVisitor, StructKind, visit_structure};
use crate::mangle::decimal_digits;
use crate::structure::Structure;
use std::fmt::{self, Write as _};

/// The spaces of an indent, written a slice at a time.
const SPACES: &str = "                                                                ";

/// IREE's `SipSignatureParser::ToStringVisitor`, byte for byte: the indent
/// grows by two spaces when a struct opens; a key is written as indent +
/// key; opening writes `:[` or `:{` and a newline; closing shrinks the
/// indent and writes indent + `]` or `}` + `,` + newline; a leaf writes
/// `=raw(N),` + newline. String keys are written as they are (no quoting).
///
/// It writes into any [`fmt::Write`] (a `String` by default, or a caller's
/// `&mut String`, reused: no allocation of its own below 128 levels).
///
/// ```
/// use fnabi_abi::sip::{ReferenceText, SipReader};
/// let r = SipReader::new(b"I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R1!").unwrap();
/// let mut t = ReferenceText::new();
/// r.visit_inputs(&mut t).unwrap();
/// assert_eq!(t.as_str(), ":[\n  0:{\n    bar=raw(1),\n    foo=raw(0),\n  },\n  1=raw(2),\n],\n");
///
/// let mut mine = String::from("inputs");
/// r.visit_inputs(&mut ReferenceText::with_writer(&mut mine)).unwrap();
/// assert_eq!(mine, format!("inputs{}", t.as_str()));
/// ```
#[derive(Clone, Debug, Default)]
pub struct ReferenceText<W = String> {
    out: W,
    indent: usize,
    /// Open structs.
    depth: usize,
    /// Bit `i`: the struct open at level `i` (below 128) is a dict.
    dicts: u128,
    /// Levels 128 and deeper (only a hand-built structure goes there).
    deeper: Vec<bool>,
    /// A write failed (never, for a `String`).
    failed: bool,
}

impl ReferenceText {
    /// An empty text.
    pub fn new() -> Self {
        Self::default()
    }

    /// The text so far.
    pub fn as_str(&self) -> &str {
        &self.out
    }

    /// Takes the text.
    pub fn into_string(self) -> String {
        self.out
    }
}

impl<W: fmt::Write> ReferenceText<W> {
    /// A text written into `out` (for example a caller's `&mut String`).
    pub fn with_writer(out: W) -> Self {
        ReferenceText { out, indent: 0, depth: 0, dicts: 0, deeper: Vec::new(), failed: false }
    }

    /// The writer; `Err` when one of its writes failed.
    pub fn into_inner(self) -> Result<W, fmt::Error> {
        if self.failed { Err(fmt::Error) } else { Ok(self.out) }
    }

    fn put(&mut self, s: &str) {
        self.failed |= self.out.write_str(s).is_err();
    }

    fn put_indent(&mut self) {
        let mut n = self.indent;
        while n > 0 {
            let k = n.min(SPACES.len());
            self.put(&SPACES[..k]);
            n -= k;
        }
    }

    fn put_number(&mut self, v: usize) {
        for &d in decimal_digits(v as u64, &mut [0; 20]) {
            self.failed |= self.out.write_char(char::from(d)).is_err();
        }
    }
}

impl<W: fmt::Write> SipVisitor<'_> for ReferenceText<W> {
    fn integer_key(&mut self, key: usize) {
        self.put_indent();
        self.put_number(key);
    }

    fn string_key(&mut self, key: &str) {
        self.put_indent();
        self.put(key);
    }

    fn open(&mut self, kind: StructKind) {
        self.indent += 2;
        let dict = kind == StructKind::Dict;
        if self.depth < 128 {
            self.dicts = (self.dicts & !(1 << self.depth)) | (u128::from(dict) << self.depth);
        } else {
            self.deeper.push(dict);
        }
        self.depth += 1;
        self.put(if dict { ":{\n" } else { ":[\n" });
    }

    fn close(&mut self) {
        self.indent = self.indent.saturating_sub(2);
        self.put_indent();
        let close = match self.depth.checked_sub(1) {
            None => "?,\n",
            Some(level) => {
                self.depth = level;
                let dict = if level < 128 { self.dicts >> level & 1 == 1 } else { self.deeper.pop().unwrap_or(false) };
                if dict { "},\n" } else { "],\n" }
            }
        };
        self.put(close);
    }

    fn leaf(&mut self, raw_index: usize) {
        self.put("=raw(");
        self.put_number(raw_index);
        self.put("),\n");
    }
}

/// The reference text form of one side (empty for an empty side).
///
/// ```
/// use fnabi_abi::sip::reference_text;
/// use fnabi_abi::structure::Structure;
/// let side = Structure::Dict(vec![("x".into(), Structure::Leaf(1))]);
/// assert_eq!(reference_text(Some(&side)), ":{\n  x=raw(1),\n},\n");
/// assert_eq!(reference_text(None), "");
/// ```
pub fn reference_text(side: Option<&Structure>) -> String {
    let mut t = String::new();
    // Writing into a String cannot fail.
    let _ = write_reference_text(side, &mut t);
    t
}

/// Writes the reference text form of one side into `out` (nothing for an
/// empty side).
///
/// ```
/// use fnabi_abi::sip::write_reference_text;
/// use fnabi_abi::structure::Structure;
/// let mut out = String::from("results");
/// write_reference_text(Some(&Structure::Leaf(0)), &mut out).unwrap();
/// assert_eq!(out, "results=raw(0),\n");
/// ```
pub fn write_reference_text(side: Option<&Structure>, out: &mut (impl fmt::Write + ?Sized)) -> fmt::Result {
    let mut t = ReferenceText::with_writer(out);
    if let Some(s) = side {
        visit_structure(s, &mut t);
    }
    t.into_inner().map(|_| ())
}

/// Writes `s` as a JSON string literal (also a valid Python literal).
fn write_quoted(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// The most gaps in a row that the Python-like form writes one by one
/// (`None, None`); a longer run is written `*[None] * N`, so the form of a
/// signature stays as short as the signature (a 40-byte signature can
/// declare key 2,147,483,647).
pub const PYTHON_FORM_GAP_RUN: usize = 8;

/// The one-line Python-like form of a structure: `$N` for the leaf of raw
/// index `N`, `[...]` for a sequence (a gap is `None`; a run of more than
/// [`PYTHON_FORM_GAP_RUN`] gaps is `*[None] * N`, as Python would unpack
/// it), `{"key": ...}` for a dict.
///
/// ```
/// use fnabi_abi::sip::PythonForm;
/// use fnabi_abi::structure::Structure;
/// let dict = Structure::Dict(vec![("w".into(), Structure::Leaf(0))]);
/// assert_eq!(PythonForm(&dict).to_string(), r#"{"w": $0}"#);
/// // Key 0 is missing: a gap prints as `None`.
/// let gap = Structure::Sequence(vec![(1, Structure::Leaf(3))]);
/// assert_eq!(PythonForm(&gap).to_string(), "[None, $3]");
/// // A long run of gaps is one item.
/// let far = Structure::Sequence(vec![(0, Structure::Leaf(0)), (2_000_000_000, Structure::Leaf(1))]);
/// assert_eq!(PythonForm(&far).to_string(), "[$0, *[None] * 1999999999, $1]");
/// ```
pub struct PythonForm<'s>(pub &'s Structure);

impl fmt::Display for PythonForm<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Structure::Leaf(i) => write!(f, "${i}"),
            Structure::Sequence(c) => {
                f.write_char('[')?;
                let mut next = 0;
                for (k, s) in c {
                    let gaps = k.saturating_sub(next);
                    if gaps > PYTHON_FORM_GAP_RUN {
                        f.write_str(if next == 0 { "" } else { ", " })?;
                        write!(f, "*[None] * {gaps}")?;
                        next = *k;
                    }
                    while next < *k {
                        f.write_str(if next == 0 { "None" } else { ", None" })?;
                        next += 1;
                    }
                    if next > 0 {
                        f.write_str(", ")?;
                    }
                    PythonForm(s).fmt(f)?;
                    next = k + 1;
                }
                f.write_char(']')
            }
            Structure::Dict(c) => {
                f.write_char('{')?;
                for (i, (k, s)) in c.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_quoted(f, k)?;
                    f.write_str(": ")?;
                    PythonForm(s).fmt(f)?;
                }
                f.write_char('}')
            }
        }
    }
}
