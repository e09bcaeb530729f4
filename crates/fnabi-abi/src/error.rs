//! The parse error that carries a byte offset, shared by every grammar of
//! the ABI layer (mangled and human-readable signatures, SIP, declarations,
//! calling conventions) and by the host formats above it.

use std::fmt;

/// Why a signature (mangled or human-readable) failed to parse.
///
/// Every variant is reported together with a byte offset by [`ParseError`].
///
/// ```
/// use fnabi_abi::cconv::CallingConvention;
/// use fnabi_abi::ParseErrorKind;
/// let e = CallingConvention::parse("1r_r").unwrap_err();
/// assert_eq!((e.offset(), e.kind()), (0, &ParseErrorKind::Expected("calling convention version `0`")));
/// let e = CallingConvention::parse("0rq_r").unwrap_err();
/// assert_eq!((e.offset(), e.kind()), (2, &ParseErrorKind::UnknownName("q".into())));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    // ---- lexical layer ----------------------------------------------------
    /// A byte that is neither an integer tag (`_`, `a`–`z`) nor a span tag (`A`–`Z`).
    BadTag(u8),
    /// An integer tag not followed by `-?[0-9]+` (a `+`, a lone `-`, nothing).
    MissingDigits,
    /// An integer outside the 32-bit signed range.
    IntegerOutOfRange,
    /// A span tag not followed by a decimal length.
    MissingLength,
    /// A span length of 0 (the length counts the `!`, so it is at least 1).
    ZeroLength,
    /// A span length that does not fit in memory (more digits than any input has).
    LengthOutOfRange,
    /// A span that declares more bytes than remain in the input.
    Truncated {
        /// The declared length (including the `!`).
        declared: usize,
        /// The bytes that actually remain after the length.
        available: usize,
    },
    /// The first byte of a span is not `!` (`None`: the input ended there).
    MissingBang(Option<u8>),

    // ---- raw function signatures -----------------------------------------
    /// A component that is not allowed at this level of a signature
    /// (an item tag other than `B`, `S`, `O`, `U`; a top-level tag other than `I`, `R`).
    UnexpectedComponent {
        /// Where the component was found (`"signature"`, `"type sequence"`, …).
        context: &'static str,
        /// Its tag byte.
        tag: u8,
    },
    /// A field tag that the enclosing item does not define (`x` inside a buffer).
    UnknownField {
        /// The item kind (`"buffer"`, `"scalar"`, `"ref object"`, `"unrecognized"`).
        item: &'static str,
        /// The field's tag byte.
        tag: u8,
    },
    /// A scalar type code outside 0–11.
    IllegalScalarCode(i32),
    /// A negative dimension other than `-1` (the dynamic marker).
    IllegalDim(i32),
    /// A layout (contiguity hint) code that is not defined.
    IllegalLayoutCode(i32),
    /// A required span is absent (`I` or `R`).
    MissingSpan(u8),
    /// A span that may appear once appears again.
    DuplicateSpan(u8),

    // ---- human-readable forms ---------------------------------------------
    /// The text does not continue as the grammar requires.
    Expected(&'static str),
    /// A name that is not a known type name.
    UnknownName(String),
    /// Extra text after a complete form.
    TrailingInput,

    // ---- structured index path (SIP) signatures ----------------------------
    // ---- .npy files ---------------------------------------------------------
    /// A `.npy` file that is not well formed, or holds what fnabi cannot
    /// represent (the message says which).
    Npy(String),
    // ---- other formats (array text, ELF) -------------------------------------
    /// Free-form violation of a text or binary format: what was wrong.
    Invalid(String),
    /// A key (`k` or `K`) at the top level of a side, outside any struct.
    KeyOutsideStruct(u8),
    /// A value (`_`, `S`, `D`) inside a struct where a key is due.
    ExpectedKey(u8),
    /// A key inside a struct where the value of the previous key is due.
    ExpectedValue(u8),
    /// An integer key (`k`) inside a dict, or a string key (`K`) inside a sequence.
    WrongKeyKind {
        /// The key's tag.
        tag: u8,
        /// The struct it is in (`"sequence"` or `"dict"`).
        within: &'static str,
    },
    /// A struct that ends after a key, before its value.
    MissingValue,
    /// A key that repeats the previous key of its struct.
    DuplicateKey,
    /// A key smaller than the previous key of its struct (the mangler writes
    /// integer keys ascending and string keys ascending by bytes).
    UnorderedKey,
    /// A side with more than one top-level value.
    MultipleValues,
    /// A raw index that appears twice on one side.
    DuplicateRawIndex(u32),
    /// A negative raw index or sequence key.
    NegativeIndex(i32),
    /// A string key that is not UTF-8.
    NonUtf8Key,
    /// Structs nested deeper than the limit.
    TooDeep(usize),
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ParseErrorKind::*;
        match self {
            BadTag(b) => {
                write!(f, "{} is not a component tag (expected `_`, `a`-`z` or `A`-`Z`)", ByteDisplay(Some(*b)))
            }
            MissingDigits => f.write_str("integer component has no digits (expected -?[0-9]+)"),
            IntegerOutOfRange => f.write_str("integer does not fit in 32 signed bits"),
            MissingLength => f.write_str("span has no decimal length after its tag"),
            ZeroLength => f.write_str("span length is 0 (the length counts the `!`, so it is at least 1)"),
            LengthOutOfRange => f.write_str("span length is too large"),
            Truncated { declared, available } => {
                write!(f, "span declares {declared} byte(s) but only {available} remain")
            }
            MissingBang(b) => write!(f, "span content must start with `!`, found {}", ByteDisplay(*b)),
            UnexpectedComponent { context, tag } => {
                write!(f, "unexpected component {} in {context}", ByteDisplay(Some(*tag)))
            }
            UnknownField { item, tag } => write!(f, "unknown field tag {} in {item}", ByteDisplay(Some(*tag))),
            IllegalScalarCode(c) => write!(f, "illegal scalar type code {c} (expected 0-11)"),
            IllegalDim(d) => write!(f, "illegal dimension {d} (expected >= 0, or -1 for dynamic)"),
            IllegalLayoutCode(c) => write!(f, "illegal layout code {c} (expected 0 row-major or 1 column-major)"),
            MissingSpan(t) => write!(f, "missing `{}` span", *t as char),
            DuplicateSpan(t) => write!(f, "duplicate `{}` span", *t as char),
            Expected(what) => write!(f, "expected {what}"),
            UnknownName(n) => write!(f, "unknown type name {n:?}"),
            TrailingInput => f.write_str("unexpected text after the end"),
            Npy(msg) => write!(f, "npy: {msg}"),
            Invalid(msg) => f.write_str(msg),
            KeyOutsideStruct(t) => write!(f, "key {} outside a sequence or dict", ByteDisplay(Some(*t))),
            ExpectedKey(t) => write!(f, "expected a key, found the value {}", ByteDisplay(Some(*t))),
            ExpectedValue(t) => {
                write!(f, "expected the value of the previous key, found the key {}", ByteDisplay(Some(*t)))
            }
            WrongKeyKind { tag, within } => write!(f, "key {} is not allowed in a {within}", ByteDisplay(Some(*tag))),
            MissingValue => f.write_str("the last key has no value"),
            DuplicateKey => f.write_str("duplicate key"),
            UnorderedKey => f.write_str("key is smaller than the previous key (keys must be ascending)"),
            MultipleValues => f.write_str("more than one top-level value"),
            DuplicateRawIndex(i) => write!(f, "raw index {i} appears twice"),
            NegativeIndex(i) => write!(f, "negative index {i}"),
            NonUtf8Key => f.write_str("string key is not valid UTF-8"),
            TooDeep(limit) => write!(f, "structs nested deeper than {limit} levels"),
        }
    }
}

/// Formats a byte for messages: printable ASCII quoted, anything else in hex,
/// `None` as "end of input".
struct ByteDisplay(Option<u8>);

impl fmt::Display for ByteDisplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => f.write_str("end of input"),
            Some(b) if b.is_ascii_graphic() => write!(f, "`{}`", b as char),
            Some(b) => write!(f, "byte 0x{b:02x}"),
        }
    }
}

/// A parse error at a byte offset of the input.
///
/// Offsets are absolute: an error inside a nested span reports its position
/// in the whole signature, not in the span.
///
/// ```
/// let err = fnabi_abi::RawSignature::parse("I5!B1!").unwrap_err();
/// assert_eq!(err.offset(), 0);
/// assert_eq!(err.to_string(), "at byte 0: span declares 5 byte(s) but only 4 remain");
/// ```
///
/// One word (the offset and kind are boxed), so a `Result` of a parser's
/// value stays as small as the value: errors are rare, results are moved
/// on every call.
#[derive(Clone, PartialEq, Eq)]
pub struct ParseError(Box<ParseErrorInner>);

#[derive(Clone, PartialEq, Eq)]
struct ParseErrorInner {
    offset: usize,
    kind: ParseErrorKind,
}

impl ParseError {
    /// An error of `kind` at byte `offset`.
    #[cold]
    #[inline(never)]
    pub fn new(offset: usize, kind: ParseErrorKind) -> Self {
        ParseError(Box::new(ParseErrorInner { offset, kind }))
    }

    /// The byte offset in the input where the problem was found.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// What went wrong.
    pub fn kind(&self) -> &ParseErrorKind {
        &self.0.kind
    }
}

impl fmt::Debug for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParseError").field("offset", &self.0.offset).field("kind", &self.0.kind).finish()
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.0.offset, self.0.kind)
    }
}

impl std::error::Error for ParseError {}
