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
use crate::mangle::{Component, SignatureParser, component_at, input_and_result_spans, short_digits, short_span};
use crate::structure::Structure;

mod signature;
mod text;

pub use signature::{SipMangler, SipSignature};
pub use text::{PYTHON_FORM_GAP_RUN, PythonForm, ReferenceText, reference_text, write_reference_text};

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
        let [inputs, results] = input_and_result_spans(mangled)?;
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
///
/// Each value is written where it stays (`out`: the slot of its entry in
/// its parent's list, or the side's), never returned and moved: a
/// structure written a word at a time and read back whole right after
/// stalls the CPU's store forwarding.
trait Build<'a> {
    type Value;
    /// What a builder keeps of an open struct.
    type Seq;
    type Dict;
    /// Whether `open_seq`/`open_dict` use the number of entries (it costs
    /// a count of the struct's components first).
    const COUNTS: bool;
    /// A value to be overwritten (the side's, before it is parsed).
    fn placeholder(&mut self) -> Self::Value;
    fn leaf(&mut self, raw_index: usize, out: &mut Self::Value);
    fn open_seq(&mut self, entries: usize) -> Self::Seq;
    fn open_dict(&mut self, entries: usize) -> Self::Dict;
    /// An entry of key `key`: the slot its value is written into.
    fn seq_entry<'s>(&mut self, seq: &'s mut Self::Seq, key: usize) -> &'s mut Self::Value;
    fn dict_entry<'s>(&mut self, dict: &'s mut Self::Dict, key: &'a str) -> &'s mut Self::Value;
    fn close_seq(&mut self, seq: Self::Seq, out: &mut Self::Value);
    fn close_dict(&mut self, dict: Self::Dict, out: &mut Self::Value);
}

/// A visitor's events.
struct Events<'v, V>(&'v mut V);

impl<'a, V: SipVisitor<'a>> Build<'a> for Events<'_, V> {
    type Value = ();
    type Seq = ();
    type Dict = ();
    const COUNTS: bool = false;
    #[inline(always)]
    fn placeholder(&mut self) {}
    #[inline(always)]
    fn leaf(&mut self, raw_index: usize, _: &mut ()) {
        self.0.leaf(raw_index);
    }
    #[inline(always)]
    fn open_seq(&mut self, _: usize) {
        self.0.open(StructKind::Sequence);
    }
    #[inline(always)]
    fn open_dict(&mut self, _: usize) {
        self.0.open(StructKind::Dict);
    }
    #[inline(always)]
    fn seq_entry<'s>(&mut self, seq: &'s mut (), key: usize) -> &'s mut () {
        self.0.integer_key(key);
        seq
    }
    #[inline(always)]
    fn dict_entry<'s>(&mut self, dict: &'s mut (), key: &'a str) -> &'s mut () {
        self.0.string_key(key);
        dict
    }
    #[inline(always)]
    fn close_seq(&mut self, _: (), _: &mut ()) {
        self.0.close();
    }
    #[inline(always)]
    fn close_dict(&mut self, _: (), _: &mut ()) {
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

    #[inline(always)]
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
///
/// The parser reads the side's bytes itself instead of through a
/// [`SignatureParser`] per struct: at each position it knows which
/// component is due (a `k` key, a `K` key, a `_` leaf, an `S`/`D` struct)
/// and reads that one's usual form in place (at most nine digits, no sign).
/// Anything else — another tag, a sign, a long digit run, a malformed
/// span — goes to the generic lexer ([`Side::component`]), which either
/// reads a component the slow way (`k0000000001` is still key 1) or
/// reports its error, so the errors are the lexer's, offsets included.
struct Side<'a> {
    seen: Seen,
    /// The side's content and its absolute offset; positions below are
    /// indices into `content`.
    content: &'a [u8],
    offset: usize,
    /// The content as text when it is UTF-8: checked once, at the first
    /// dict key, so that each key is a slice of it.
    text: Option<Option<&'a str>>,
}

/// Orders two keys by bytes, eight at a time (keys are short: a call to
/// `memcmp` costs more than the compare).
#[inline(always)]
fn compare_keys(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_be_bytes(a[i..i + 8].try_into().unwrap_or_default());
        let y = u64::from_be_bytes(b[i..i + 8].try_into().unwrap_or_default());
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    while i < n {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
        i += 1;
    }
    a.len().cmp(&b.len())
}

impl<'a> Side<'a> {
    #[cold]
    fn error(&self, pos: usize, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.offset + pos, kind)
    }

    /// The component at `body[pos]` (there is one) read by the generic
    /// lexer, and the position after it: the slow path.
    #[cold]
    #[inline(never)]
    fn component(&self, body: &'a [u8], pos: usize) -> Result<(Component<'a>, usize), ParseError> {
        component_at(body, pos, self.offset).unwrap_or_else(|| Err(self.error(pos, ParseErrorKind::MissingValue)))
    }

    /// The dict key `content` (at `start`; the span's tag is at `tag_pos`) as text.
    #[inline(always)]
    fn key(&mut self, start: usize, end: usize, tag_pos: usize) -> Result<&'a str, ParseError> {
        let side = self.content;
        let text = *self.text.get_or_insert_with(|| std::str::from_utf8(side).ok());
        match text.and_then(|t| t.get(start..end)) {
            Some(key) => Ok(key),
            None => std::str::from_utf8(&side[start..end]).map_err(|_| self.error(tag_pos, ParseErrorKind::NonUtf8Key)),
        }
    }
}

/// Parses one side into `b`: its value, `None` for an empty side.
fn side<'a, B: Build<'a>>(content: &'a [u8], offset: usize, b: &mut B) -> Result<Option<B::Value>, ParseError> {
    let mut value = None;
    side_into(content, offset, b, &mut value)?;
    Ok(value)
}

/// [`side`] with the value written into `out` (which stays `None` for an
/// empty side), where the caller keeps it: a value returned through memory
/// is written a word at a time, and moving it right after reads it 16
/// bytes at a time, which the CPU cannot forward from its stores.
#[inline(always)]
fn side_into<'a, B: Build<'a>>(
    content: &'a [u8],
    offset: usize,
    b: &mut B,
    out: &mut Option<B::Value>,
) -> Result<(), ParseError> {
    if content.is_empty() {
        return Ok(());
    }
    let mut side = Side { seen: Seen::new(), content, offset, text: None };
    let value = out.insert(b.placeholder());
    let end = parse_value(content, 0, false, 0, b, &mut side, value)?;
    if end < content.len() {
        let (c, _) = side.component(content, end)?;
        return Err(ParseError::new(c.offset(), ParseErrorKind::MultipleValues));
    }
    side.seen.check()
}

/// The value at `body[pos]` (there is one), written into `out`, and the
/// position after it, inside `depth` open structs (`in_struct`: after a
/// key, else at the top of a side). `body` ends where the innermost open
/// struct ends.
#[inline(always)]
fn parse_value<'a, B: Build<'a>>(
    body: &'a [u8],
    pos: usize,
    in_struct: bool,
    depth: usize,
    b: &mut B,
    side: &mut Side<'a>,
    out: &mut B::Value,
) -> Result<usize, ParseError> {
    let tag = body[pos];
    if tag == b'_' {
        if let Some((raw, next)) = short_digits(body, pos + 1) {
            side.seen.add(raw, side.offset + pos);
            b.leaf(raw as usize, out);
            return Ok(next);
        }
    } else if (tag == b'S' || tag == b'D')
        && let Some((start, end)) = short_span(body, pos)
    {
        parse_struct(tag, &body[..end], start, pos, depth, b, side, out)?;
        return Ok(end);
    }
    value_slow(body, pos, in_struct, depth, b, side, out)
}

/// [`parse_value`] of a component that is not a leaf or struct in its
/// usual form: read by the generic lexer, then checked.
#[cold]
#[inline(never)]
fn value_slow<'a, B: Build<'a>>(
    body: &'a [u8],
    pos: usize,
    in_struct: bool,
    depth: usize,
    b: &mut B,
    side: &mut Side<'a>,
    out: &mut B::Value,
) -> Result<usize, ParseError> {
    let (c, next) = side.component(body, pos)?;
    match c {
        Component::Integer { tag: b'_', value, offset } => {
            if value < 0 {
                return Err(ParseError::new(offset, ParseErrorKind::NegativeIndex(value)));
            }
            side.seen.add(value as u32, offset);
            b.leaf(value as usize, out);
            Ok(next)
        }
        Component::Span { tag: tag @ (b'S' | b'D'), content, content_offset, .. } => {
            let start = content_offset - side.offset;
            parse_struct(tag, &body[..start + content.len()], start, pos, depth, b, side, out)?;
            Ok(next)
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

/// The struct (`S` or `D`, tag at `pos`) whose content is `body[start..]`,
/// inside `depth` open structs, written into `out`: the depth check, then
/// its entries.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn parse_struct<'a, B: Build<'a>>(
    tag: u8,
    body: &'a [u8],
    start: usize,
    pos: usize,
    depth: usize,
    b: &mut B,
    side: &mut Side<'a>,
    out: &mut B::Value,
) -> Result<(), ParseError> {
    if depth >= MAX_DEPTH {
        return Err(side.error(pos, ParseErrorKind::TooDeep(MAX_DEPTH)));
    }
    if tag == b'S' {
        parse_sequence(body, start, depth + 1, b, side, out)
    } else {
        parse_dict(body, start, depth + 1, b, side, out)
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

/// A sequence key that is not in its usual form (`k` and up to nine
/// digits): read by the generic lexer, then checked.
#[cold]
#[inline(never)]
fn sequence_key_slow(body: &[u8], pos: usize, side: &Side<'_>) -> Result<(u32, usize), ParseError> {
    let (c, next) = side.component(body, pos)?;
    let Component::Integer { tag: b'k', value, offset } = c else {
        return Err(not_a_key(&c, StructKind::Sequence));
    };
    if value < 0 {
        return Err(ParseError::new(offset, ParseErrorKind::NegativeIndex(value)));
    }
    Ok((value as u32, next))
}

/// A dict key that is not in its usual form (`K`, a length of up to nine
/// digits, `!`): read by the generic lexer, then checked. Its content's
/// start and end.
#[cold]
#[inline(never)]
fn dict_key_slow(body: &[u8], pos: usize, side: &Side<'_>) -> Result<(usize, usize), ParseError> {
    let (c, _) = side.component(body, pos)?;
    let Component::Span { tag: b'K', content, content_offset, .. } = c else {
        return Err(not_a_key(&c, StructKind::Dict));
    };
    let start = content_offset - side.offset;
    Ok((start, start + content.len()))
}

/// The entries of a sequence whose content is `body[pos..]` (`depth`:
/// open structs, this one included), written into `out`.
#[inline(always)]
fn parse_sequence<'a, B: Build<'a>>(
    body: &'a [u8],
    mut pos: usize,
    depth: usize,
    b: &mut B,
    side: &mut Side<'a>,
    out: &mut B::Value,
) -> Result<(), ParseError> {
    let entries = if B::COUNTS { SignatureParser::new(&body[pos..]).count_tags(|t| t == b'k') } else { 0 };
    let mut seq = b.open_seq(entries);
    // One below the smallest key allowed next.
    let mut last: i64 = -1;
    while pos < body.len() {
        let key_pos = pos;
        let fast = if body[pos] == b'k' { short_digits(body, pos + 1) } else { None };
        let (key, next) = match fast {
            Some(k) => k,
            None => sequence_key_slow(body, pos, side)?,
        };
        if i64::from(key) <= last {
            let kind = if i64::from(key) == last { ParseErrorKind::DuplicateKey } else { ParseErrorKind::UnorderedKey };
            return Err(side.error(key_pos, kind));
        }
        last = i64::from(key);
        let slot = b.seq_entry(&mut seq, key as usize);
        if next == body.len() {
            return Err(side.error(next, ParseErrorKind::MissingValue));
        }
        pos = parse_value(body, next, true, depth, b, side, slot)?;
    }
    b.close_seq(seq, out);
    Ok(())
}

/// The entries of a dict whose content is `body[pos..]` (`depth`: open
/// structs, this one included), written into `out`.
#[inline(always)]
fn parse_dict<'a, B: Build<'a>>(
    body: &'a [u8],
    mut pos: usize,
    depth: usize,
    b: &mut B,
    side: &mut Side<'a>,
    out: &mut B::Value,
) -> Result<(), ParseError> {
    let entries = if B::COUNTS { SignatureParser::new(&body[pos..]).count_tags(|t| t == b'K') } else { 0 };
    let mut dict = b.open_dict(entries);
    let mut last: Option<&[u8]> = None;
    while pos < body.len() {
        let key_pos = pos;
        let fast = if body[pos] == b'K' { short_span(body, pos) } else { None };
        let (start, end) = match fast {
            Some(k) => k,
            None => dict_key_slow(body, pos, side)?,
        };
        let key = side.key(start, end, key_pos)?;
        let content = &body[start..end];
        if let Some(prev) = last {
            match compare_keys(prev, content) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Err(side.error(key_pos, ParseErrorKind::DuplicateKey)),
                std::cmp::Ordering::Greater => return Err(side.error(key_pos, ParseErrorKind::UnorderedKey)),
            }
        }
        last = Some(content);
        let slot = b.dict_entry(&mut dict, key);
        if end == body.len() {
            return Err(side.error(end, ParseErrorKind::MissingValue));
        }
        pos = parse_value(body, end, true, depth, b, side, slot)?;
    }
    b.close_dict(dict, out);
    Ok(())
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

#[cfg(test)]
mod tests;
