//! The `iree.abi.declaration` text: the source-level signature that IREE's
//! compiler records on every export, such as
//! `sync func @f(%input0: tensor<?x4xf32>, %input1: f32) -> (%output0: tensor<4xf32>)`.
//! It types a function that has no `iree.abi` records ("typed mode").
use crate::limits::MAX_DEPTH;

use super::{MAX_BIT_WIDTH, NdArrayType, Primitive, TypeRecord};
use crate::error::{ParseError, ParseErrorKind};
use std::fmt;
use std::str::FromStr;

/// How a function is invoked (`sync`/`async` in the declaration,
/// `iree.abi.model` in the reflection).
///
/// ```
/// use fnabi_abi::reflection::{Declaration, InvocationModel};
/// assert_eq!(InvocationModel::from_attr("coarse-fences"), Some(InvocationModel::CoarseFences));
/// assert_eq!(InvocationModel::from_attr("eager"), None);
/// let d = Declaration::parse("async func @f(%input0: tensor<4xf32>) -> (%output0: tensor<4xf32>)").unwrap();
/// assert_eq!(d.model.fence_args(), 2); // a wait and a signal fence
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InvocationModel {
    /// A plain call.
    #[default]
    Sync,
    /// `coarse-fences`: the VM function takes two more `!hal.fence`
    /// arguments after the user's (wait, then signal).
    CoarseFences,
}

impl InvocationModel {
    /// Reads an `iree.abi.model` value (`coarse-fences`); `None` when
    /// unknown.
    pub fn from_attr(value: &str) -> Option<InvocationModel> {
        match value {
            "coarse-fences" => Some(InvocationModel::CoarseFences),
            "sync" | "" => Some(InvocationModel::Sync),
            _ => None,
        }
    }

    /// Number of fence arguments the VM function takes after the user's.
    pub const fn fence_args(self) -> usize {
        match self {
            InvocationModel::Sync => 0,
            InvocationModel::CoarseFences => 2,
        }
    }
}

/// Signedness of an integer type (`i8`, `si8`, `ui8`).
///
/// ```
/// use fnabi_abi::reflection::{DeclType, Signedness};
/// assert_eq!(DeclType::parse("ui16").unwrap(), DeclType::Int { bits: 16, signedness: Signedness::Unsigned });
/// assert_eq!(DeclType::parse("si8").unwrap(), DeclType::Int { bits: 8, signedness: Signedness::Signed });
/// assert_eq!(DeclType::parse("i1").unwrap(), DeclType::Int { bits: 1, signedness: Signedness::Signless });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signedness {
    /// `iN`.
    Signless,
    /// `siN`.
    Signed,
    /// `uiN`.
    Unsigned,
}

/// One type of a declaration.
///
/// ```
/// use fnabi_abi::reflection::DeclType;
/// let t = DeclType::parse("tensor<2x?xbf16>").unwrap();
/// assert_eq!(t.to_string(), "tensor<2x?xbf16>");
/// assert_eq!(t.to_record().unwrap().to_string(), "bf16[2x?]");
/// assert_eq!(DeclType::parse("index").unwrap().to_record().unwrap().to_string(), "i64");
/// assert_eq!(DeclType::parse("!hal.fence").unwrap(), DeclType::Other("!hal.fence".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DeclType {
    /// `tensor<4x?xf32>`; `dims` is `None` for `tensor<*xf32>`, and a dim
    /// is `None` when dynamic.
    Tensor {
        /// The element type.
        element: Box<DeclType>,
        /// The dims, `None` when unranked.
        dims: Option<Vec<Option<u64>>>,
    },
    /// `i32`, `si8`, `ui16`, …
    Int {
        /// Bit width.
        bits: u32,
        /// Signedness.
        signedness: Signedness,
    },
    /// `f16`, `f32`, `f64`, `f80`, `f128`.
    Float(u32),
    /// `bf16`.
    BF16,
    /// `index`.
    Index,
    /// `!util.list<?>` (`None`) or `!util.list<T>`.
    List(Option<Box<DeclType>>),
    /// `!hal.buffer_view`.
    BufferView,
    /// Any other type, verbatim (`!hal.fence`, `complex<f32>`, `f8E4M3FN`,
    /// a tensor with an encoding, …).
    Other(String),
}

impl DeclType {
    /// Parses one type.
    pub fn parse(s: &str) -> Result<DeclType, ParseError> {
        let end = scan_type(s.as_bytes(), 0, s.len())?;
        if end != s.len() {
            return Err(ParseError::new(end, ParseErrorKind::TrailingInput));
        }
        parse_type(s, 0, s.len(), 0)
    }

    /// The `iree.abi` record that types the same value in fnabi's
    /// conventions; `None` for types a host value cannot stand for
    /// (`!hal.fence`, other refs, element types without a host dtype).
    ///
    /// `index` is an `i64` (64-bit targets), `!util.list<?>` is `unknown`
    /// (dynamic), `!util.list<T>` a `py_homogeneous_list` of T,
    /// `!hal.buffer_view` an `ndarray` of unknown element type and rank.
    /// Signed and unsigned integers map to the signless record of their
    /// width (records cannot say more).
    pub fn to_record(&self) -> Option<TypeRecord> {
        Some(match self {
            DeclType::Tensor { element, dims } => {
                let e = element.to_record()?;
                match &e {
                    TypeRecord::Primitive(p) if p.dtype().is_some() => {}
                    _ => return None,
                }
                TypeRecord::NdArray(NdArrayType::new(e, dims.clone()))
            }
            DeclType::Int { bits, .. } => TypeRecord::Primitive(Primitive::Int(*bits)),
            DeclType::Float(bits) => TypeRecord::Primitive(Primitive::Float(*bits)),
            DeclType::BF16 => TypeRecord::Primitive(Primitive::BF16),
            DeclType::Index => TypeRecord::Primitive(Primitive::Int(64)),
            DeclType::List(None) => TypeRecord::Unknown,
            DeclType::List(Some(t)) => TypeRecord::PyHomogeneousList(Box::new(t.to_record()?)),
            DeclType::BufferView => TypeRecord::NdArray(NdArrayType::new(TypeRecord::Unknown, None)),
            // The 8-bit floats and complex types stay verbatim here but have a record.
            DeclType::Other(s) => match Primitive::parse(s) {
                Some(p @ (Primitive::Float8(_) | Primitive::Complex(_))) => TypeRecord::Primitive(p),
                _ => return None,
            },
        })
    }
}

impl fmt::Display for DeclType {
    /// MLIR's spelling (lists print as `!util.list<…>`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclType::Tensor { element, dims } => {
                f.write_str("tensor<")?;
                match dims {
                    None => f.write_str("*x")?,
                    Some(dims) => {
                        for d in dims {
                            match d {
                                Some(n) => write!(f, "{n}x")?,
                                None => f.write_str("?x")?,
                            }
                        }
                    }
                }
                write!(f, "{element}>")
            }
            DeclType::Int { bits, signedness } => {
                let p = match signedness {
                    Signedness::Signless => "i",
                    Signedness::Signed => "si",
                    Signedness::Unsigned => "ui",
                };
                write!(f, "{p}{bits}")
            }
            DeclType::Float(bits) => write!(f, "f{bits}"),
            DeclType::BF16 => f.write_str("bf16"),
            DeclType::Index => f.write_str("index"),
            DeclType::List(None) => f.write_str("!util.list<?>"),
            DeclType::List(Some(t)) => write!(f, "!util.list<{t}>"),
            DeclType::BufferView => f.write_str("!hal.buffer_view"),
            DeclType::Other(s) => f.write_str(s),
        }
    }
}

impl FromStr for DeclType {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DeclType::parse(s)
    }
}

/// One parameter or result of a declaration.
///
/// ```
/// use fnabi_abi::reflection::{DeclType, Declaration};
/// let d = Declaration::parse("sync func @g(%input0: f64 {foo = 1}) -> (%output0: i32)").unwrap();
/// assert_eq!(d.args[0].name, "input0");
/// assert_eq!(d.args[0].ty, DeclType::Float(64));
/// assert_eq!(d.args[0].attrs.as_deref(), Some("{foo = 1}"));
/// assert_eq!(d.results[0].attrs, None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeclParam {
    /// The SSA name without `%` (`input0`).
    pub name: String,
    /// The type.
    pub ty: DeclType,
    /// An attribute dictionary after the type, verbatim (`{foo = 1}`).
    pub attrs: Option<String>,
}

/// A parsed `iree.abi.declaration`.
///
/// ```
/// use fnabi_abi::reflection::{DeclType, Declaration, InvocationModel};
/// let text = "sync func @f(%input0: tensor<?x4xf32>, %input1: f32) -> (%output0: tensor<4xf32>)";
/// let d: Declaration = text.parse().unwrap();
/// assert_eq!(d.name, "f");
/// assert_eq!(d.model, InvocationModel::Sync);
/// assert_eq!(d.args[0].ty, DeclType::Tensor { element: Box::new(DeclType::Float(32)), dims: Some(vec![None, Some(4)]) });
/// assert_eq!(d.to_string(), text);
/// let e = Declaration::parse("sync func @f(%input0 tensor<4xf32>) -> ()").unwrap_err();
/// assert_eq!(e.to_string(), "at byte 21: expected `:` and the type");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Declaration {
    /// `sync` or `async` (coarse fences).
    pub model: InvocationModel,
    /// The function's name (without `@`).
    pub name: String,
    /// The parameters.
    pub args: Vec<DeclParam>,
    /// The results.
    pub results: Vec<DeclParam>,
}

impl Declaration {
    /// Parses the declaration text. Whitespace between tokens is free; a
    /// type is any balanced MLIR type text (unknown ones are kept as
    /// [`DeclType::Other`]); errors carry the byte offset.
    pub fn parse(s: &str) -> Result<Declaration, ParseError> {
        let mut c = Cursor { s, pos: 0 };
        c.ws();
        let model = if c.word("sync") {
            InvocationModel::Sync
        } else if c.word("async") {
            InvocationModel::CoarseFences
        } else {
            return Err(c.err("`sync` or `async`"));
        };
        c.ws();
        if !c.word("func") {
            return Err(c.err("`func`"));
        }
        c.ws();
        if !c.eat(b'@') {
            return Err(c.err("`@` and the function name"));
        }
        let name = c.symbol()?;
        let args = c.params()?;
        c.ws();
        if !c.eat_str("->") {
            return Err(c.err("`->` and the results"));
        }
        let results = c.params()?;
        c.ws();
        if c.pos != s.len() {
            return Err(ParseError::new(c.pos, ParseErrorKind::TrailingInput));
        }
        Ok(Declaration { model, name, args, results })
    }
}

impl fmt::Display for Declaration {
    /// The canonical text, as IREE writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn params(f: &mut fmt::Formatter<'_>, ps: &[DeclParam]) -> fmt::Result {
            f.write_str("(")?;
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "%{}: {}", p.name, p.ty)?;
                if let Some(a) = &p.attrs {
                    write!(f, " {a}")?;
                }
            }
            f.write_str(")")
        }
        let model = match self.model {
            InvocationModel::Sync => "sync",
            InvocationModel::CoarseFences => "async",
        };
        let bare = !self.name.is_empty()
            && self.name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_$.-".contains(&b))
            && (self.name.as_bytes()[0].is_ascii_alphabetic() || self.name.as_bytes()[0] == b'_');
        if bare {
            write!(f, "{model} func @{}", self.name)?;
        } else {
            write!(f, "{model} func @\"")?;
            for c in self.name.chars() {
                match c {
                    '"' => f.write_str("\\\"")?,
                    '\\' => f.write_str("\\\\")?,
                    c if c.is_control() => {
                        let mut buf = [0u8; 4];
                        for byte in c.encode_utf8(&mut buf).bytes() {
                            write!(f, "\\{byte:02X}")?;
                        }
                    }
                    c => write!(f, "{c}")?,
                }
            }
            f.write_str("\"")?;
        }
        params(f, &self.args)?;
        f.write_str(" -> ")?;
        params(f, &self.results)
    }
}

impl FromStr for Declaration {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Declaration::parse(s)
    }
}

struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

impl Cursor<'_> {
    fn b(&self) -> &[u8] {
        self.s.as_bytes()
    }

    fn err(&self, what: &'static str) -> ParseError {
        ParseError::new(self.pos, ParseErrorKind::Expected(what))
    }

    fn ws(&mut self) {
        while self.b().get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.b().get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, w: &str) -> bool {
        if self.s[self.pos..].starts_with(w) {
            self.pos += w.len();
            true
        } else {
            false
        }
    }

    /// A keyword followed by a non-identifier byte.
    fn word(&mut self, w: &str) -> bool {
        let after = self.b().get(self.pos + w.len()).copied();
        if self.s[self.pos..].starts_with(w) && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            self.pos += w.len();
            true
        } else {
            false
        }
    }

    /// A bare identifier (`[A-Za-z_][A-Za-z0-9_$.-]*`) or a quoted string.
    fn symbol(&mut self) -> Result<String, ParseError> {
        let b = self.b();
        let start = self.pos;
        if b.get(start) == Some(&b'"') {
            // MLIR string escapes: `\"`, `\\`, `\n`, `\t` and `\XX` (hex byte).
            let mut i = start + 1;
            let mut out: Vec<u8> = Vec::new();
            loop {
                match b.get(i) {
                    None => return Err(ParseError::new(start, ParseErrorKind::Expected("a closing `\"`"))),
                    Some(b'"') => break,
                    Some(b'\\') => {
                        let hex = |c: Option<&u8>| c.and_then(|c| (*c as char).to_digit(16));
                        match (b.get(i + 1), hex(b.get(i + 1)), hex(b.get(i + 2))) {
                            (_, Some(h), Some(l)) => {
                                out.push((h * 16 + l) as u8);
                                i += 3;
                                continue;
                            }
                            (Some(&c @ (b'"' | b'\\')), ..) => out.push(c),
                            (Some(b'n'), ..) => out.push(b'\n'),
                            (Some(b't'), ..) => out.push(b'\t'),
                            _ => return Err(ParseError::new(i, ParseErrorKind::Expected("a valid escape"))),
                        }
                        i += 2;
                    }
                    Some(&c) => {
                        out.push(c);
                        i += 1;
                    }
                }
            }
            let name = String::from_utf8(out)
                .map_err(|_| ParseError::new(start, ParseErrorKind::Expected("a function name that is UTF-8")))?;
            self.pos = i + 1;
            return Ok(name);
        }
        let is_start = |c: u8| c.is_ascii_alphabetic() || c == b'_';
        if !b.get(start).copied().is_some_and(is_start) {
            return Err(self.err("a function name"));
        }
        let mut i = start + 1;
        while b.get(i).is_some_and(|&c| c.is_ascii_alphanumeric() || b"_$.-".contains(&c)) {
            i += 1;
        }
        self.pos = i;
        Ok(self.s[start..i].to_owned())
    }

    /// `(` (`%name: type attrs?`),* `)`.
    fn params(&mut self) -> Result<Vec<DeclParam>, ParseError> {
        self.ws();
        if !self.eat(b'(') {
            return Err(self.err("`(`"));
        }
        let mut out = Vec::new();
        self.ws();
        if self.eat(b')') {
            return Ok(out);
        }
        loop {
            self.ws();
            if !self.eat(b'%') {
                return Err(self.err("`%` and a parameter name"));
            }
            let start = self.pos;
            while self.b().get(self.pos).is_some_and(|&c| c.is_ascii_alphanumeric() || b"_$.-".contains(&c)) {
                self.pos += 1;
            }
            if self.pos == start {
                return Err(self.err("a parameter name"));
            }
            let name = self.s[start..self.pos].to_owned();
            self.ws();
            if !self.eat(b':') {
                return Err(self.err("`:` and the type"));
            }
            self.ws();
            let t_start = self.pos;
            let t_end = scan_type(self.b(), t_start, self.s.len())?;
            let t_text_end = trim_span(self.s, t_start, t_end).1;
            if t_text_end <= t_start {
                return Err(self.err("a type"));
            }
            let ty = parse_type(self.s, t_start, t_text_end, 0)?;
            self.pos = t_end;
            self.ws();
            let attrs = if self.b().get(self.pos) == Some(&b'{') {
                let a_start = self.pos;
                let a_end = scan_balanced(self.b(), a_start)?;
                self.pos = a_end;
                Some(self.s[a_start..a_end].to_owned())
            } else {
                None
            };
            out.push(DeclParam { name, ty, attrs });
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b')') {
                return Ok(out);
            }
            return Err(self.err("`,` or `)`"));
        }
    }
}

/// The end of the type text starting at `start`: the first `,`, `)` or
/// `{` outside brackets and strings (a `->` inside a type is skipped).
fn scan_type(b: &[u8], start: usize, end: usize) -> Result<usize, ParseError> {
    let mut i = start;
    while i < end {
        match b[i] {
            b',' | b')' | b'{' => return Ok(i),
            b'<' | b'(' | b'[' => i = scan_balanced(b, i)?,
            b'>' | b']' | b'}' => {
                return Err(ParseError::new(i, ParseErrorKind::Expected("balanced brackets in the type")));
            }
            b'"' => i = scan_string(b, i)?,
            b'-' if b.get(i + 1) == Some(&b'>') => i += 2,
            _ => i += 1,
        }
    }
    Ok(end)
}

/// The position after the bracket group opening at `start` (nesting of
/// `<>`, `()`, `[]`, `{}` and strings tracked with an explicit stack, so
/// depth is bounded by memory, not by the call stack).
fn scan_balanced(b: &[u8], start: usize) -> Result<usize, ParseError> {
    let mut stack: Vec<u8> = Vec::new();
    let mut i = start;
    while i < b.len() {
        match b[i] {
            c @ (b'<' | b'(' | b'[' | b'{') => {
                stack.push(match c {
                    b'<' => b'>',
                    b'(' => b')',
                    b'[' => b']',
                    _ => b'}',
                });
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'>') => i += 2,
            c @ (b'>' | b')' | b']' | b'}') => {
                if stack.pop() != Some(c) {
                    return Err(ParseError::new(i, ParseErrorKind::Expected("balanced brackets")));
                }
                i += 1;
                if stack.is_empty() {
                    return Ok(i);
                }
            }
            b'"' => i = scan_string(b, i)?,
            _ => i += 1,
        }
    }
    Err(ParseError::new(start, ParseErrorKind::Expected("a closing bracket")))
}

fn scan_string(b: &[u8], start: usize) -> Result<usize, ParseError> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'"' => return Ok(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    Err(ParseError::new(start, ParseErrorKind::Expected("a closing `\"`")))
}

fn int_width(digits: &str) -> Option<u32> {
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse::<u32>().ok().filter(|&b| b > 0 && b <= MAX_BIT_WIDTH)
}

/// `start..end` without leading and trailing ASCII whitespace (a blank
/// span becomes the empty span at its end).
fn trim_span(s: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    let b = s.as_bytes();
    while start < end && b[start].is_ascii_whitespace() {
        start += 1;
    }
    while end > start && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    (start, end)
}

/// Parses the (balanced, trimmed) type text `s[start..end]`.
fn parse_type(s: &str, start: usize, end: usize, depth: usize) -> Result<DeclType, ParseError> {
    if depth >= MAX_DEPTH {
        return Err(ParseError::new(start, ParseErrorKind::Expected("types nested at most 100 deep")));
    }
    let t = &s[start..end];
    if t.is_empty() {
        return Err(ParseError::new(start, ParseErrorKind::Expected("a type")));
    }
    // A type ending in `-` would print before its closing `>` as `->`,
    // which reads as an arrow (found by fuzzing): no type ends so.
    if t.ends_with('-') {
        return Err(ParseError::new(end - 1, ParseErrorKind::Expected("a type that does not end with `-`")));
    }
    let scalar = match t {
        "index" => Some(DeclType::Index),
        "bf16" => Some(DeclType::BF16),
        "!hal.buffer_view" => Some(DeclType::BufferView),
        "f16" | "f32" | "f64" | "f80" | "f128" => int_width(&t[1..]).map(DeclType::Float),
        _ => None,
    };
    if let Some(d) = scalar {
        return Ok(d);
    }
    for (prefix, signedness) in [("si", Signedness::Signed), ("ui", Signedness::Unsigned), ("i", Signedness::Signless)]
    {
        if let Some(bits) = t.strip_prefix(prefix).and_then(int_width) {
            return Ok(DeclType::Int { bits, signedness });
        }
    }
    for list in ["!util.list<", "!vm.list<"] {
        if let Some(inner) = t.strip_prefix(list).and_then(|r| r.strip_suffix('>'))
            && closes_at_end(s, start + list.len() - 1, end)
        {
            let (i_start, i_end) = trim_span(s, start + list.len(), start + list.len() + inner.len());
            if &s[i_start..i_end] == "?" {
                return Ok(DeclType::List(None));
            }
            let elem = parse_type(s, i_start, i_end, depth + 1)?;
            return Ok(DeclType::List(Some(Box::new(elem))));
        }
    }
    if let Some(inner) = t.strip_prefix("tensor<").and_then(|r| r.strip_suffix('>'))
        && closes_at_end(s, start + "tensor<".len() - 1, end)
    {
        let inner_start = start + "tensor<".len();
        if let Some(t) = parse_tensor(s, inner_start, inner_start + inner.len(), depth)? {
            return Ok(t);
        }
    }
    Ok(DeclType::Other(t.to_owned()))
}

/// True when the bracket opening at `open` closes exactly at `end`.
fn closes_at_end(s: &str, open: usize, end: usize) -> bool {
    scan_balanced(s.as_bytes(), open).is_ok_and(|e| e == end)
}

/// `4x?xf32` (or `*xf32`, or `f32`); `None` when the text is a tensor
/// type fnabi does not model (an encoding, an element with `x` in it).
fn parse_tensor(s: &str, start: usize, end: usize, depth: usize) -> Result<Option<DeclType>, ParseError> {
    let t = &s[start..end];
    if scan_type(s.as_bytes(), start, end)? != end {
        // A `,` at depth 0: `tensor<4xf32, #encoding>`.
        return Ok(None);
    }
    let (dims, rest) = if let Some(rest) = t.strip_prefix("*x") {
        (None, rest)
    } else {
        let mut dims = Vec::new();
        let mut rest = t;
        loop {
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            if rest.starts_with("?x") {
                dims.push(None);
                rest = &rest[2..];
            } else if n > 0 && rest.as_bytes().get(n) == Some(&b'x') {
                let Ok(d) = rest[..n].parse::<u64>() else {
                    return Err(ParseError::new(
                        end - rest.len(),
                        ParseErrorKind::Expected("a dim that fits in 64 bits"),
                    ));
                };
                dims.push(Some(d));
                rest = &rest[n + 1..];
            } else {
                break;
            }
        }
        (Some(dims), rest)
    };
    let e_start = end - rest.len();
    if rest.is_empty() {
        return Err(ParseError::new(e_start, ParseErrorKind::Expected("the tensor's element type")));
    }
    let element = parse_type(s, e_start, end, depth + 1)?;
    Ok(Some(DeclType::Tensor { element: Box::new(element), dims }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_declarations_round_trip() {
        for d in [
            "sync func @add(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>)",
            "sync func @add_i32(%input0: i32, %input1: i32) -> (%output0: i32)",
            "sync func @mixed(%input0: tensor<2x3xi32>, %input1: tensor<3xf64>) -> (%output0: tensor<3x2xi32>, %output1: tensor<3xf64>)",
            "sync func @dyn_dim(%input0: tensor<?x4xf32>) -> (%output0: index)",
            "async func @add_async(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>)",
            "sync func @nested_deep(%input0: !util.list<?>, %input1: f32) -> (%output0: tensor<4xf32>, %output1: !util.list<?>)",
            "sync func @str_len(%input0: !util.list<i8>) -> (%output0: index, %output1: i32)",
            "sync func @g() -> ()",
            "sync func @h(%input0: tensor<*xf32>, %input1: tensor<f32>, %input2: !hal.fence) -> (%output0: !util.list<!util.list<?>>)",
        ] {
            let p = Declaration::parse(d).unwrap();
            assert_eq!(p.to_string(), d);
        }
        let d =
            Declaration::parse("async func @add_async(%input0: tensor<4xf32>) -> (%output0: tensor<4xf32>)").unwrap();
        assert_eq!(d.model.fence_args(), 2);
    }

    #[test]
    fn types() {
        let t = |s: &str| DeclType::parse(s).unwrap();
        assert_eq!(
            t("tensor<?x4xf32>"),
            DeclType::Tensor { element: Box::new(DeclType::Float(32)), dims: Some(vec![None, Some(4)]) }
        );
        assert_eq!(
            t("tensor<*xi8>"),
            DeclType::Tensor {
                element: Box::new(DeclType::Int { bits: 8, signedness: Signedness::Signless }),
                dims: None
            }
        );
        assert_eq!(t("tensor<bf16>"), DeclType::Tensor { element: Box::new(DeclType::BF16), dims: Some(vec![]) });
        assert_eq!(t("ui16"), DeclType::Int { bits: 16, signedness: Signedness::Unsigned });
        assert_eq!(t("si64"), DeclType::Int { bits: 64, signedness: Signedness::Signed });
        assert_eq!(t("!util.list<?>"), DeclType::List(None));
        assert_eq!(t("!vm.list<i8>").to_string(), "!util.list<i8>");
        assert_eq!(t("!hal.fence"), DeclType::Other("!hal.fence".into()));
        assert_eq!(t("tensor<4xf32, #enc<{a = 1}>>"), DeclType::Other("tensor<4xf32, #enc<{a = 1}>>".into()));
        assert_eq!(t("tensor<4xcomplex<f32>>").to_string(), "tensor<4xcomplex<f32>>");
        assert_eq!(t("i08"), DeclType::Other("i08".into()));
        assert_eq!(t("!foo<\"a,)b\">"), DeclType::Other("!foo<\"a,)b\">".into()));
        assert_eq!(t("!util.list<(i32) -> i32>").to_string(), "!util.list<(i32) -> i32>");
        assert_eq!(t("!util.list<a>b<c>"), DeclType::Other("!util.list<a>b<c>".into()));
        assert_eq!(t("!util.list< ? >"), DeclType::List(None));
        assert_eq!(DeclType::parse("!util.list<\u{c} \n>").unwrap_err().to_string(), "at byte 14: expected a type");
        // Records.
        assert_eq!(t("tensor<?x4xf32>").to_record().unwrap().to_string(), "f32[?x4]");
        assert_eq!(t("index").to_record().unwrap().to_string(), "i64");
        assert_eq!(t("!util.list<i8>").to_record().unwrap().to_string(), "list[i8]");
        assert_eq!(t("!util.list<?>").to_record().unwrap().to_string(), "unknown");
        assert_eq!(t("!hal.buffer_view").to_record().unwrap().to_string(), "unknown[*]");
        assert_eq!(t("!hal.fence").to_record(), None);
        assert_eq!(t("tensor<4xcomplex<f32>>").to_record().unwrap().to_string(), "complex<f32>[4]");
        assert_eq!(t("tensor<4xcomplex<f16>>").to_record(), None);
        assert_eq!(t("tensor<4xi3>").to_record(), None);
    }

    #[test]
    fn errors_have_offsets() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "expected `sync` or `async`"),
            ("syncfunc @f() -> ()", 0, "expected `sync` or `async`"),
            ("sync fun @f() -> ()", 5, "expected `func`"),
            ("sync func f() -> ()", 10, "expected `@` and the function name"),
            ("sync func @1() -> ()", 11, "expected a function name"),
            ("sync func @f -> ()", 13, "expected `(`"),
            ("sync func @f(x: i32) -> ()", 13, "expected `%` and a parameter name"),
            ("sync func @f(%: i32) -> ()", 14, "expected a parameter name"),
            ("sync func @f(%a: ) -> ()", 17, "expected a type"),
            ("sync func @f(%a: tensor<4xf32) -> ()", 29, "expected balanced brackets"),
            ("sync func @f(%a: tensor<4xf32", 23, "expected a closing bracket"),
            ("sync func @f(%a: i32>) -> ()", 20, "expected balanced brackets in the type"),
            ("sync func @f(%a: !util.list<i8 - >) -> ()", 31, "expected a type that does not end with `-`"),
            ("sync func @f(%a: i32) ()", 22, "expected `->` and the results"),
            ("sync func @f(%a: i32) -> (%b: i32", 33, "expected `,` or `)`"),
            ("sync func @f(%a: i32) -> () x", 28, "unexpected text after the end"),
            ("sync func @f(%a: tensor<4x>) -> ()", 26, "expected the tensor's element type"),
            ("sync func @f(%a: \"x) -> ()", 17, "expected a closing `\"`"),
            ("sync func @\"x) -> ()", 11, "expected a closing `\"`"),
            ("sync func @f(%a: tensor<99999999999999999999x4xf32>) -> ()", 24, "expected a dim that fits in 64 bits"),
        ];
        for (s, off, msg) in cases {
            let e = Declaration::parse(s).unwrap_err();
            assert_eq!((e.offset(), e.kind().to_string()), (*off, msg.to_string()), "{s:?}");
        }
        let deep = format!("{}i8{}", "!util.list<".repeat(150), ">".repeat(150));
        assert_eq!(DeclType::parse(&deep).unwrap_err().kind().to_string(), "expected types nested at most 100 deep");
    }

    #[test]
    fn attributes_and_quoted_names() {
        let d = Declaration::parse(r#"sync func @"my fn"(%input0: tensor<4xf32> {iree.abi.encoding = "x}"}) -> ()"#)
            .unwrap();
        assert_eq!(d.name, "my fn");
        assert_eq!(d.args[0].attrs.as_deref(), Some(r#"{iree.abi.encoding = "x}"}"#));
        assert_eq!(Declaration::parse(&d.to_string()).unwrap(), d);
        let d = Declaration::parse("sync func @\"a\\\"b\\0D\\00\\n\u{e9}\"() -> ()").unwrap();
        assert_eq!(d.name, "a\"b\r\0\n\u{e9}");
        assert_eq!(d.to_string(), "sync func @\"a\\\"b\\0D\\00\\0A\u{e9}\"() -> ()");
        assert_eq!(Declaration::parse(&d.to_string()).unwrap(), d);
        let d = Declaration::parse("sync func @\"-x\"() -> ()").unwrap();
        assert_eq!(d.to_string(), "sync func @\"-x\"() -> ()");
        let e = Declaration::parse("sync func @\"\\ff\"() -> ()").unwrap_err();
        assert_eq!(e.to_string(), "at byte 11: expected a function name that is UTF-8");
        let e = Declaration::parse("sync func @\"\\q\"() -> ()").unwrap_err();
        assert_eq!(e.to_string(), "at byte 12: expected a valid escape");
    }
}
