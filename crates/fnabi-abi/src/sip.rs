//! The Structured Index Path (SIP) ABI, version 1 (attributes `sipv` = 1,
//! `sip`): a signature that maps a function's flat inputs and results onto
//! nested sequences (integer keys) and dicts (string keys).
//!
//! ```text
//! signature        ::= 'I' length-prefixed(structured-value?) 'R' length-prefixed(structured-value?)
//! structured-value ::= '_' integer | sequence | dict
//! sequence         ::= 'S' length-prefixed(('k' integer structured-value)*)
//! dict             ::= 'D' length-prefixed(('K' length-prefixed(bytes) structured-value)*)
//! ```
//!
//! This module owns the mangler ([`SipMangler`], from `(raw index, index
//! path)` pairs), the zero-copy parser ([`SipReader`], which drives a
//! [`SipVisitor`]), the reference text form ([`ReferenceText`], byte for byte
//! IREE's `SipSignatureParser::ToStringVisitor`), and [`SipSignature`], the
//! parsed signature as two optional [`Structure`]s (a side may be empty:
//! `I1!`).
//!
//! Stricter than the reference, which accepts them silently: a key outside a
//! struct, a value where a key is due, `k` in a dict or `K` in a sequence, a
//! key without a value, keys that repeat or are not ascending (integer keys
//! numerically, string keys by bytes: the order the mangler writes), more
//! than one top-level value, a raw index twice on one side, negative raw
//! indices and keys, string keys that are not UTF-8, and structs nested
//! deeper than [`MAX_DEPTH`]. So everything that parses re-mangles to a
//! signature that parses to the same structures.
//!
//! ```
//! use fnabi_abi::sip::{SipMangler, SipSignature};
//! use fnabi_abi::structure::PathKey;
//! let mut m = SipMangler::new();
//! m.input(0, &[PathKey::Index(0), "foo".into()]).unwrap();
//! m.input(1, &[PathKey::Index(0), "bar".into()]).unwrap();
//! m.input(2, &[PathKey::Index(1)]).unwrap();
//! m.result(0, &[PathKey::Index(0)]).unwrap();
//! m.result(1, &[PathKey::Index(1)]).unwrap();
//! let sig = m.finish();
//! assert_eq!(sig.to_mangled(), "I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R12!S9!k0_0k1_1");
//! assert_eq!(sig.to_string(), r#"([{"bar": $1, "foo": $0}, $2]) -> [$0, $1]"#);
//!
//! let parsed = SipSignature::parse("I12!S9!k0_0k1_1R3!_0").unwrap();
//! assert_eq!(parsed.inputs_reference(), ":[\n  0=raw(0),\n  1=raw(1),\n],\n");
//! assert_eq!(parsed.results_reference(), "=raw(0),\n");
//! ```
use crate::limits::MAX_DEPTH;

use crate::error::{ParseError, ParseErrorKind};
use crate::mangle::{Component, SignatureBuilder, SignatureParser, decimal_digits};
use crate::structure::{IndexPath, Key, PathKey, Structure, StructureBuilder, StructureError, StructureErrorKind};
use std::fmt::{self, Write as _};
use std::str::FromStr;

/// The kind of a struct: a sequence (`S`, integer keys) or a dict (`D`, string keys).
///
/// ```
/// use fnabi_abi::sip::{SipReader, SipVisitor, StructKind};
/// struct Kinds(Vec<StructKind>);
/// impl SipVisitor<'_> for Kinds {
///     fn open(&mut self, kind: StructKind) {
///         self.0.push(kind);
///     }
/// }
/// // A dict (`D`) whose key `a` holds a sequence (`S`) of one leaf.
/// let r = SipReader::new(b"I16!D12!K2!aS5!k0_0R1!").unwrap();
/// let mut k = Kinds(Vec::new());
/// r.visit_inputs(&mut k).unwrap();
/// assert_eq!(k.0, [StructKind::Dict, StructKind::Sequence]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StructKind {
    /// Integer keys.
    Sequence,
    /// String keys.
    Dict,
}

impl StructKind {
    fn name(self) -> &'static str {
        match self {
            StructKind::Sequence => "sequence",
            StructKind::Dict => "dict",
        }
    }
}

/// Receives the events of one side of a SIP signature, in order: a struct
/// opens, then each entry is a key followed by its value (a leaf, or a
/// nested struct that opens and closes), then the struct closes. A side
/// whose value is a leaf is just `leaf`; an empty side has no events.
///
/// The parser validates as it goes and stops at the first error, so a
/// visitor may have seen some events of a side that then fails.
///
/// ```
/// use fnabi_abi::sip::{SipReader, SipVisitor, StructKind};
/// #[derive(Default)]
/// struct Events(Vec<String>);
/// impl<'a> SipVisitor<'a> for Events {
///     fn integer_key(&mut self, key: usize) {
///         self.0.push(format!("k{key}"));
///     }
///     fn string_key(&mut self, key: &'a str) {
///         self.0.push(format!("K{key}"));
///     }
///     fn open(&mut self, kind: StructKind) {
///         self.0.push(format!("{kind:?}"));
///     }
///     fn close(&mut self) {
///         self.0.push("close".into());
///     }
///     fn leaf(&mut self, raw_index: usize) {
///         self.0.push(format!("${raw_index}"));
///     }
/// }
/// let r = SipReader::new(b"I12!S9!k0_0k1_1R10!D7!K2!a_0").unwrap();
/// let (mut ins, mut outs) = (Events::default(), Events::default());
/// r.visit_inputs(&mut ins).unwrap();
/// r.visit_results(&mut outs).unwrap();
/// assert_eq!(ins.0, ["Sequence", "k0", "$0", "k1", "$1", "close"]);
/// assert_eq!(outs.0, ["Dict", "Ka", "$0", "close"]);
/// ```
#[allow(unused_variables)]
pub trait SipVisitor<'a> {
    /// An integer (sequence) key.
    fn integer_key(&mut self, key: usize) {}
    /// A string (dict) key, borrowed from the signature.
    fn string_key(&mut self, key: &'a str) {}
    /// A struct opens (its entries follow).
    fn open(&mut self, kind: StructKind) {}
    /// The innermost open struct closes.
    fn close(&mut self) {}
    /// A leaf: the raw index of a function input or result.
    fn leaf(&mut self, raw_index: usize) {}
}

/// A zero-copy reader of a SIP signature: checks the top level (exactly one
/// `I` and one `R` span, in either order, nothing else) and parses a side
/// when asked, driving a [`SipVisitor`].
///
/// ```
/// use fnabi_abi::sip::{SipReader, SipVisitor};
/// struct Leaves(usize);
/// impl SipVisitor<'_> for Leaves {
///     fn leaf(&mut self, _raw_index: usize) {
///         self.0 += 1;
///     }
/// }
/// let r = SipReader::new(b"I12!S9!k0_0k1_1R3!_0").unwrap();
/// let mut n = Leaves(0);
/// r.visit_inputs(&mut n).unwrap();
/// assert_eq!(n.0, 2);
///
/// // Without an `R` span the top level is rejected.
/// assert!(SipReader::new(b"I3!_0").is_err());
/// // Raw index 0 twice on one side is rejected when that side is read.
/// let twice = SipReader::new(b"I12!S9!k0_0k1_0R1!").unwrap();
/// assert!(twice.visit_inputs(&mut Leaves(0)).is_err());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SipReader<'a> {
    inputs: (&'a [u8], usize),
    results: (&'a [u8], usize),
}

impl<'a> SipReader<'a> {
    /// Checks the top level of `mangled`.
    #[inline]
    pub fn new(mangled: &'a [u8]) -> Result<Self, ParseError> {
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
                        ParseErrorKind::UnexpectedComponent {
                            context: "signature (expected `I` or `R`)",
                            tag: c.tag(),
                        },
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
        Ok(SipReader { inputs, results })
    }

    /// Parses the inputs side into `visitor`.
    pub fn visit_inputs<V: SipVisitor<'a>>(&self, visitor: &mut V) -> Result<(), ParseError> {
        visit_side(self.inputs.0, self.inputs.1, visitor)
    }

    /// Parses the results side into `visitor`.
    pub fn visit_results<V: SipVisitor<'a>>(&self, visitor: &mut V) -> Result<(), ParseError> {
        visit_side(self.results.0, self.results.1, visitor)
    }
}

/// What the parser builds from a side: the events of a [`SipVisitor`] (no
/// values), or owned [`Structure`]s. One validating parser serves both, so
/// the checks cannot drift apart.
trait Build<'a> {
    type Value;
    type Seq;
    type Dict;
    /// Whether `open_seq`/`open_dict` use the number of entries (it costs
    /// a count of the struct's components first).
    const COUNTS: bool;
    fn leaf(&mut self, raw_index: usize) -> Self::Value;
    fn open_seq(&mut self, entries: usize) -> Self::Seq;
    fn open_dict(&mut self, entries: usize) -> Self::Dict;
    fn integer_key(&mut self, key: usize);
    fn string_key(&mut self, key: &'a str);
    fn seq_entry(&mut self, seq: &mut Self::Seq, key: usize, value: Self::Value);
    fn dict_entry(&mut self, dict: &mut Self::Dict, key: &'a str, value: Self::Value);
    fn close_seq(&mut self, seq: Self::Seq) -> Self::Value;
    fn close_dict(&mut self, dict: Self::Dict) -> Self::Value;
}

/// A visitor's events.
struct Events<'v, V>(&'v mut V);

impl<'a, V: SipVisitor<'a>> Build<'a> for Events<'_, V> {
    type Value = ();
    type Seq = ();
    type Dict = ();
    const COUNTS: bool = false;
    fn leaf(&mut self, raw_index: usize) {
        self.0.leaf(raw_index);
    }
    fn open_seq(&mut self, _: usize) {
        self.0.open(StructKind::Sequence);
    }
    fn open_dict(&mut self, _: usize) {
        self.0.open(StructKind::Dict);
    }
    fn integer_key(&mut self, key: usize) {
        self.0.integer_key(key);
    }
    fn string_key(&mut self, key: &'a str) {
        self.0.string_key(key);
    }
    fn seq_entry(&mut self, _: &mut (), _: usize, _: ()) {}
    fn dict_entry(&mut self, _: &mut (), _: &'a str, _: ()) {}
    fn close_seq(&mut self, _: ()) {
        self.0.close();
    }
    fn close_dict(&mut self, _: ()) {
        self.0.close();
    }
}

/// The raw indices of one side seen so far, for the duplicate check: a
/// bitmap for indices below 1024 (no allocation), a list for larger ones
/// (sorted once at the end).
struct Seen {
    small: [u64; 16],
    large: Vec<(u32, usize)>,
    /// The first leaf, in input order, whose index a leaf before it has.
    first_repeat: Option<(u32, usize)>,
}

impl Seen {
    fn new() -> Self {
        Seen { small: [0; 16], large: Vec::new(), first_repeat: None }
    }

    fn add(&mut self, raw: u32, offset: usize) {
        if let Some(word) = self.small.get_mut((raw / 64) as usize) {
            let bit = 1u64 << (raw % 64);
            if *word & bit != 0 && self.first_repeat.is_none() {
                self.first_repeat = Some((raw, offset));
            }
            *word |= bit;
        } else {
            self.large.push((raw, offset));
        }
    }

    /// The earliest repeated raw index (at the offset of its second leaf).
    fn check(&mut self) -> Result<(), ParseError> {
        let mut repeat = self.first_repeat;
        if self.large.len() > 1 {
            self.large.sort_unstable();
            let large = self.large.windows(2).filter(|w| w[0].0 == w[1].0).map(|w| w[1]).min_by_key(|&(_, off)| off);
            if let Some(l) = large
                && repeat.is_none_or(|(_, off)| l.1 < off)
            {
                repeat = Some(l);
            }
        }
        match repeat {
            Some((raw, off)) => Err(ParseError::new(off, ParseErrorKind::DuplicateRawIndex(raw))),
            None => Ok(()),
        }
    }
}

/// Parses the content of one side (`content` starts at absolute offset
/// `offset`) into `visitor`. Recursion is bounded by [`MAX_DEPTH`] (checked
/// before a struct is entered), and nothing is allocated unless a raw index
/// is 1024 or more.
///
/// ```
/// use fnabi_abi::sip::{visit_side, SipVisitor};
/// struct Leaves(Vec<usize>);
/// impl SipVisitor<'_> for Leaves {
///     fn leaf(&mut self, raw_index: usize) {
///         self.0.push(raw_index);
///     }
/// }
/// // The content of `I8!S5!k0_2`, which starts at byte 3.
/// let mut v = Leaves(Vec::new());
/// visit_side(b"S5!k0_2", 3, &mut v).unwrap();
/// assert_eq!(v.0, [2]);
/// // A key outside a struct: the error names its absolute offset.
/// assert_eq!(visit_side(b"k0", 3, &mut v).unwrap_err().offset(), 3);
/// ```
pub fn visit_side<'a, V: SipVisitor<'a>>(content: &'a [u8], offset: usize, visitor: &mut V) -> Result<(), ParseError> {
    side(content, offset, &mut Events(visitor)).map(|_| ())
}

/// The state of one side's parse besides the builder.
struct Side<'a> {
    seen: Seen,
    /// The side's content and its absolute offset.
    content: &'a [u8],
    offset: usize,
    /// The content as text when it is UTF-8: checked once, at the first
    /// dict key, so that each key is a slice of it.
    text: Option<Option<&'a str>>,
}

impl<'a> Side<'a> {
    /// The dict key `content` (at absolute `content_offset`; the span's tag
    /// is at `offset`) as text.
    #[inline]
    fn key(&mut self, content: &'a [u8], content_offset: usize, offset: usize) -> Result<&'a str, ParseError> {
        let start = content_offset - self.offset;
        let side = self.content;
        let text = *self.text.get_or_insert_with(|| std::str::from_utf8(side).ok());
        match text.and_then(|t| t.get(start..start + content.len())) {
            Some(key) => Ok(key),
            None => std::str::from_utf8(content).map_err(|_| ParseError::new(offset, ParseErrorKind::NonUtf8Key)),
        }
    }
}

/// Parses one side into `b`: its value, `None` for an empty side.
fn side<'a, B: Build<'a>>(content: &'a [u8], offset: usize, b: &mut B) -> Result<Option<B::Value>, ParseError> {
    if content.is_empty() {
        return Ok(None);
    }
    let mut side = Side { seen: Seen::new(), content, offset, text: None };
    let mut p = SignatureParser::with_offset(content, offset);
    let value = parse_value(&mut p, false, 0, b, &mut side)?;
    if value.is_some()
        && let Some(c) = p.next()
    {
        return Err(ParseError::new(c?.offset(), ParseErrorKind::MultipleValues));
    }
    side.seen.check()?;
    Ok(value)
}

/// The value due next in `p` (`None` at its end), inside `depth` open
/// structs (`in_struct`: after a key, else at the top of a side).
///
/// The component is read here, not handed in: a component or parser copied
/// into a call is written a field at a time and read back whole, which
/// stalls the CPU (spans go down as their parts).
fn parse_value<'a, B: Build<'a>>(
    p: &mut SignatureParser<'a>,
    in_struct: bool,
    depth: usize,
    b: &mut B,
    side: &mut Side<'a>,
) -> Result<Option<B::Value>, ParseError> {
    let Some(c) = p.next() else { return Ok(None) };
    match c? {
        Component::Integer { tag: b'_', value, offset } => {
            if value < 0 {
                return Err(ParseError::new(offset, ParseErrorKind::NegativeIndex(value)));
            }
            side.seen.add(value as u32, offset);
            Ok(Some(b.leaf(value as usize)))
        }
        Component::Span { tag: tag @ (b'S' | b'D'), content, content_offset, offset } => {
            if depth >= MAX_DEPTH {
                return Err(ParseError::new(offset, ParseErrorKind::TooDeep(MAX_DEPTH)));
            }
            if tag == b'S' {
                parse_sequence(content, content_offset, depth + 1, b, side).map(Some)
            } else {
                parse_dict(content, content_offset, depth + 1, b, side).map(Some)
            }
        }
        c => {
            let tag = c.tag();
            let kind = match tag {
                b'k' | b'K' if in_struct => ParseErrorKind::ExpectedValue(tag),
                b'k' | b'K' => ParseErrorKind::KeyOutsideStruct(tag),
                _ => ParseErrorKind::UnexpectedComponent { context: "structured value", tag },
            };
            Err(ParseError::new(c.offset(), kind))
        }
    }
}

/// The error of a component where a key of a `kind` struct is due.
#[cold]
fn not_a_key(c: &Component<'_>, kind: StructKind) -> ParseError {
    let tag = c.tag();
    let kind = match tag {
        b'k' | b'K' => ParseErrorKind::WrongKeyKind { tag, within: kind.name() },
        b'_' | b'S' | b'D' => ParseErrorKind::ExpectedKey(tag),
        _ => ParseErrorKind::UnexpectedComponent { context: kind.name(), tag },
    };
    ParseError::new(c.offset(), kind)
}

/// The entries of a sequence (`depth`: open structs, this one included).
#[inline(always)]
fn parse_sequence<'a, B: Build<'a>>(
    content: &'a [u8],
    content_offset: usize,
    depth: usize,
    b: &mut B,
    side: &mut Side<'a>,
) -> Result<B::Value, ParseError> {
    let mut p = SignatureParser::with_offset(content, content_offset);
    let entries = if B::COUNTS { p.count_tags(|t| t == b'k') } else { 0 };
    let mut seq = b.open_seq(entries);
    let mut last: Option<i32> = None;
    while let Some(c) = p.next() {
        let c = c?;
        let Component::Integer { tag: b'k', value, offset } = c else {
            return Err(not_a_key(&c, StructKind::Sequence));
        };
        if value < 0 {
            return Err(ParseError::new(offset, ParseErrorKind::NegativeIndex(value)));
        }
        match last {
            Some(prev) if prev == value => return Err(ParseError::new(offset, ParseErrorKind::DuplicateKey)),
            Some(prev) if prev > value => return Err(ParseError::new(offset, ParseErrorKind::UnorderedKey)),
            _ => {}
        }
        last = Some(value);
        let key = value as usize;
        b.integer_key(key);
        let Some(v) = parse_value(&mut p, true, depth, b, side)? else {
            return Err(ParseError::new(p.offset(), ParseErrorKind::MissingValue));
        };
        b.seq_entry(&mut seq, key, v);
    }
    Ok(b.close_seq(seq))
}

/// The entries of a dict (`depth`: open structs, this one included).
#[inline(always)]
fn parse_dict<'a, B: Build<'a>>(
    content: &'a [u8],
    content_offset: usize,
    depth: usize,
    b: &mut B,
    side: &mut Side<'a>,
) -> Result<B::Value, ParseError> {
    let mut p = SignatureParser::with_offset(content, content_offset);
    let entries = if B::COUNTS { p.count_tags(|t| t == b'K') } else { 0 };
    let mut dict = b.open_dict(entries);
    let mut last: Option<&[u8]> = None;
    while let Some(c) = p.next() {
        let c = c?;
        let Component::Span { tag: b'K', content, offset, content_offset } = c else {
            return Err(not_a_key(&c, StructKind::Dict));
        };
        let key = side.key(content, content_offset, offset)?;
        if let Some(prev) = last {
            match prev.cmp(content) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Err(ParseError::new(offset, ParseErrorKind::DuplicateKey)),
                std::cmp::Ordering::Greater => return Err(ParseError::new(offset, ParseErrorKind::UnorderedKey)),
            }
        }
        last = Some(content);
        b.string_key(key);
        let Some(v) = parse_value(&mut p, true, depth, b, side)? else {
            return Err(ParseError::new(p.offset(), ParseErrorKind::MissingValue));
        };
        b.dict_entry(&mut dict, key, v);
    }
    Ok(b.close_dict(dict))
}

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

/// Keys already made, so that a key that repeats across structs (`bias`
/// in every block) shares one allocation. Eight slots, replaced by the
/// clock (second chance) rule, so keys that keep repeating stay.
struct KeyCache<'a> {
    slots: [Option<(&'a str, Key)>; 8],
    used: [bool; 8],
    hand: usize,
}

impl<'a> KeyCache<'a> {
    fn new() -> Self {
        KeyCache { slots: Default::default(), used: [false; 8], hand: 0 }
    }

    fn get(&mut self, key: &'a str) -> Key {
        for (i, slot) in self.slots.iter().enumerate() {
            if let Some((k, shared)) = slot
                && *k == key
            {
                self.used[i] = true;
                return shared.clone();
            }
        }
        let made: Key = key.into();
        while std::mem::take(&mut self.used[self.hand]) {
            self.hand = (self.hand + 1) % self.slots.len();
        }
        self.slots[self.hand] = Some((key, made.clone()));
        self.hand = (self.hand + 1) % self.slots.len();
        made
    }
}

/// Builds [`Structure`]s: each struct's entries in one allocation of the
/// exact size (counted first), each distinct key in one.
struct Collector<'a> {
    /// Made at the first key.
    keys: Option<KeyCache<'a>>,
}

impl<'a> Build<'a> for Collector<'a> {
    type Value = Structure;
    type Seq = Vec<(usize, Structure)>;
    type Dict = Vec<(Key, Structure)>;
    const COUNTS: bool = true;
    fn leaf(&mut self, raw_index: usize) -> Structure {
        Structure::Leaf(raw_index)
    }
    fn open_seq(&mut self, entries: usize) -> Self::Seq {
        Vec::with_capacity(entries)
    }
    fn open_dict(&mut self, entries: usize) -> Self::Dict {
        Vec::with_capacity(entries)
    }
    fn integer_key(&mut self, _: usize) {}
    fn string_key(&mut self, _: &'a str) {}
    fn seq_entry(&mut self, seq: &mut Self::Seq, key: usize, value: Structure) {
        seq.push((key, value));
    }
    fn dict_entry(&mut self, dict: &mut Self::Dict, key: &'a str, value: Structure) {
        dict.push((self.keys.get_or_insert_with(KeyCache::new).get(key), value));
    }
    fn close_seq(&mut self, seq: Self::Seq) -> Structure {
        Structure::Sequence(seq)
    }
    fn close_dict(&mut self, dict: Self::Dict) -> Structure {
        Structure::Dict(dict)
    }
}

/// Replays a structure as visitor events (the events its signature would give).
///
/// ```
/// use fnabi_abi::sip::{visit_structure, ReferenceText};
/// use fnabi_abi::structure::Structure;
/// let mut t = ReferenceText::new();
/// visit_structure(&Structure::Sequence(vec![(0, Structure::Leaf(0))]), &mut t);
/// assert_eq!(t.into_string(), ":[\n  0=raw(0),\n],\n");
/// ```
pub fn visit_structure<'s, V: SipVisitor<'s>>(structure: &'s Structure, visitor: &mut V) {
    match structure {
        Structure::Leaf(i) => visitor.leaf(*i),
        Structure::Sequence(c) => {
            visitor.open(StructKind::Sequence);
            for (k, s) in c {
                visitor.integer_key(*k);
                visit_structure(s, visitor);
            }
            visitor.close();
        }
        Structure::Dict(c) => {
            visitor.open(StructKind::Dict);
            for (k, s) in c {
                visitor.string_key(k);
                visit_structure(s, visitor);
            }
            visitor.close();
        }
    }
}

/// A SIP signature: the structure of the inputs and of the results (`None`
/// for an empty side).
///
/// Every `SipSignature` is valid: keys ascending, raw indices unique per
/// side, depth at most [`MAX_DEPTH`], every integer within the 32-bit range
/// of the mangling. So [`to_mangled`](SipSignature::to_mangled) cannot fail.
///
/// ```
/// use fnabi_abi::SipSignature;
/// use fnabi_abi::structure::Structure;
/// let inputs = Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))]);
/// let sig = SipSignature::new(Some(inputs.clone()), Some(Structure::Leaf(0))).unwrap();
/// assert_eq!(sig.to_mangled(), "I12!S9!k0_0k1_1R3!_0");
/// assert_eq!(sig.to_string(), "([$0, $1]) -> $0");
/// assert_eq!(SipSignature::parse(sig.to_mangled()).unwrap(), sig);
/// assert_eq!(sig.inputs(), Some(&inputs));
///
/// // Raw index 0 twice on one side is not a valid signature.
/// let twice = Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(0))]);
/// assert!(SipSignature::new(Some(twice), None).is_err());
/// assert_eq!(SipSignature::default().to_string(), "() -> None");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SipSignature {
    inputs: Option<Structure>,
    results: Option<Structure>,
}

/// Checks what a signature needs of a structure (beyond a plan: 32-bit
/// integers); recursion is bounded by the depth check.
fn check_for_signature(s: &Structure, depth: usize) -> Result<(), StructureError> {
    let too_large = |what, value: usize| {
        Err(StructureError::at_root(StructureErrorKind::IndexTooLarge { what, value: value as u64 }))
    };
    if depth > MAX_DEPTH {
        return Err(StructureError::at_root(StructureErrorKind::TooDeep(MAX_DEPTH)));
    }
    match s {
        Structure::Leaf(i) if *i > i32::MAX as usize => too_large("raw index", *i),
        Structure::Leaf(_) => Ok(()),
        Structure::Sequence(c) => {
            for (k, s) in c {
                if *k > i32::MAX as usize {
                    return too_large("sequence key", *k);
                }
                check_for_signature(s, depth + 1).map_err(|e| e.within(PathKey::Index(*k)))?;
            }
            Ok(())
        }
        Structure::Dict(c) => {
            for (k, s) in c {
                check_for_signature(s, depth + 1).map_err(|e| e.within(PathKey::Name(k.clone())))?;
            }
            Ok(())
        }
    }
}

fn check_side(s: Option<&Structure>) -> Result<(), StructureError> {
    if let Some(s) = s {
        check_for_signature(s, 0)?;
        // Ordering and uniqueness; gap limits are the plan's business, not the signature's.
        match s.validate() {
            Err(e) if matches!(e.kind(), StructureErrorKind::TooManyGaps(_)) => {}
            r => {
                r?;
            }
        }
    }
    Ok(())
}

fn mangle_value(b: &mut SignatureBuilder, s: &Structure) {
    match s {
        Structure::Leaf(i) => {
            b.integer(b'_', *i as i32);
        }
        Structure::Sequence(c) => {
            b.nested(b'S', |b| {
                for (k, s) in c {
                    b.integer(b'k', *k as i32);
                    mangle_value(b, s);
                }
            });
        }
        Structure::Dict(c) => {
            b.nested(b'D', |b| {
                for (k, s) in c {
                    b.span(b'K', k);
                    mangle_value(b, s);
                }
            });
        }
    }
}

impl SipSignature {
    /// A signature of these sides, checked (see the type docs).
    pub fn new(inputs: Option<Structure>, results: Option<Structure>) -> Result<Self, StructureError> {
        check_side(inputs.as_ref())?;
        check_side(results.as_ref())?;
        Ok(SipSignature { inputs, results })
    }

    /// Parses a mangled SIP signature (see the module docs for what is rejected).
    pub fn parse(mangled: impl AsRef<[u8]>) -> Result<Self, ParseError> {
        let r = SipReader::new(mangled.as_ref())?;
        let mut c = Collector { keys: None };
        let inputs = side(r.inputs.0, r.inputs.1, &mut c)?;
        let results = side(r.results.0, r.results.1, &mut c)?;
        Ok(SipSignature { inputs, results })
    }

    /// The inputs structure (`None`: no inputs).
    pub fn inputs(&self) -> Option<&Structure> {
        self.inputs.as_ref()
    }

    /// The results structure (`None`: no results).
    pub fn results(&self) -> Option<&Structure> {
        self.results.as_ref()
    }

    /// The two sides.
    pub fn into_parts(self) -> (Option<Structure>, Option<Structure>) {
        (self.inputs, self.results)
    }

    /// The mangled form: keys in ascending order, as the reference mangler writes.
    pub fn to_mangled(&self) -> String {
        let mut b = SignatureBuilder::new();
        b.nested(b'I', |b| self.inputs.iter().for_each(|s| mangle_value(b, s)));
        b.nested(b'R', |b| self.results.iter().for_each(|s| mangle_value(b, s)));
        b.into_string()
    }

    /// The reference text form of the inputs (see [`ReferenceText`]).
    pub fn inputs_reference(&self) -> String {
        reference_text(self.inputs.as_ref())
    }

    /// The reference text form of the results (see [`ReferenceText`]).
    pub fn results_reference(&self) -> String {
        reference_text(self.results.as_ref())
    }

    /// Writes the reference text form of the inputs into `out` (no
    /// allocation of its own).
    pub fn write_inputs_reference(&self, out: &mut (impl fmt::Write + ?Sized)) -> fmt::Result {
        write_reference_text(self.inputs.as_ref(), out)
    }

    /// Writes the reference text form of the results into `out` (no
    /// allocation of its own).
    pub fn write_results_reference(&self, out: &mut (impl fmt::Write + ?Sized)) -> fmt::Result {
        write_reference_text(self.results.as_ref(), out)
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
pub(crate) fn write_quoted(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
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

/// The one-line Python-like form of a structure: `$N` for the leaf of raw
/// index `N`, `[...]` for a sequence (a gap is `None`), `{"key": ...}` for a dict.
///
/// ```
/// use fnabi_abi::sip::PythonForm;
/// use fnabi_abi::structure::Structure;
/// let dict = Structure::Dict(vec![("w".into(), Structure::Leaf(0))]);
/// assert_eq!(PythonForm(&dict).to_string(), r#"{"w": $0}"#);
/// // Key 0 is missing: a gap prints as `None`.
/// let gap = Structure::Sequence(vec![(1, Structure::Leaf(3))]);
/// assert_eq!(PythonForm(&gap).to_string(), "[None, $3]");
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

impl fmt::Display for SipSignature {
    /// The one-line Python-like form: the inputs structure in parentheses,
    /// `->`, the results structure ([`PythonForm`]); an empty inputs side is
    /// `()` and an empty results side `None` (what unflattening it gives):
    /// `([{"bar": $1, "foo": $0}, $2]) -> [$0, $1]`, `() -> None`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('(')?;
        if let Some(s) = &self.inputs {
            PythonForm(s).fmt(f)?;
        }
        f.write_str(") -> ")?;
        match &self.results {
            Some(s) => PythonForm(s).fmt(f),
            None => f.write_str("None"),
        }
    }
}

impl FromStr for SipSignature {
    type Err = ParseError;

    /// Parses the mangled form.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SipSignature::parse(s)
    }
}

/// Builds a SIP signature from `(raw index, index path)` pairs for each
/// side (the reference's `SipSignatureMangler`, strict: every conflict is an
/// error that names both paths, see [`StructureBuilder`]).
///
/// ```
/// use fnabi_abi::sip::SipMangler;
/// use fnabi_abi::structure::PathKey;
/// let mut m = SipMangler::new();
/// m.input(0, &[PathKey::Index(0)]).unwrap().input(1, &[PathKey::Index(1)]).unwrap();
/// m.result(0, &[]).unwrap();
/// assert_eq!(m.finish().to_mangled(), "I12!S9!k0_0k1_1R3!_0");
/// assert_eq!(SipMangler::new().finish().to_mangled(), "I1!R1!");
/// let e = SipMangler::new().input(-1, &[]).unwrap_err();
/// assert_eq!(e.to_string(), "at the root: raw index -1 is negative");
/// ```
#[derive(Clone, Debug, Default)]
pub struct SipMangler {
    inputs: StructureBuilder,
    results: StructureBuilder,
}

fn checked_leaf(raw_index: i64, path: &[PathKey]) -> Result<usize, StructureError> {
    let fail = |kind| Err(StructureError::new(IndexPath(path.to_vec()), kind));
    if raw_index < 0 {
        return fail(StructureErrorKind::NegativeRawIndex(raw_index));
    }
    if raw_index > i64::from(i32::MAX) {
        return fail(StructureErrorKind::IndexTooLarge { what: "raw index", value: raw_index as u64 });
    }
    for key in path {
        if let PathKey::Index(k) = key
            && *k > i32::MAX as usize
        {
            return fail(StructureErrorKind::IndexTooLarge { what: "sequence key", value: *k as u64 });
        }
    }
    Ok(raw_index as usize)
}

impl SipMangler {
    /// A mangler with both sides empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// Maps input `raw_index` to `path`.
    pub fn input(&mut self, raw_index: i64, path: &[PathKey]) -> Result<&mut Self, StructureError> {
        let raw = checked_leaf(raw_index, path)?;
        self.inputs.insert(raw, path)?;
        Ok(self)
    }

    /// Maps result `raw_index` to `path`.
    pub fn result(&mut self, raw_index: i64, path: &[PathKey]) -> Result<&mut Self, StructureError> {
        let raw = checked_leaf(raw_index, path)?;
        self.results.insert(raw, path)?;
        Ok(self)
    }

    /// The signature.
    pub fn finish(self) -> SipSignature {
        SipSignature { inputs: self.inputs.finish(), results: self.results.finish() }
    }
}

#[cfg(test)]
mod tests;
