//! `iree.abi` reflection: the JSON type records that describe a VM
//! function's arguments and results ([`TypeRecord`], [`FunctionReflection`]),
//! the `iree.abi.declaration` text ([`Declaration`]), and the reduction of a
//! record list to the crate's one [`Structure`](crate::Structure) model
//! ([`records_to_structure`], [`structure_to_records`]).
//!
//! ```
//! use fnabi_abi::reflection::FunctionReflection;
//! let json = r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, 4]], ["y", ["ndarray", "f32", 2, 1, 4]]]], "r": [["ndarray", "f32", 1, null]], "v": 1}"#;
//! let f = FunctionReflection::parse(json).unwrap();
//! assert_eq!(f.to_string(), "({x: f32[1x4], y: f32[1x4]}) -> (f32[?])");
//! assert_eq!(f.to_json(), json, "canonical JSON is what Python's json.dumps writes");
//!
//! let e = FunctionReflection::parse(r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, "4"]]]], "r": []}"#).unwrap_err();
//! assert_eq!(e.path(), "a[0][1][1][4]");
//! assert_eq!(e.to_string(), "iree.abi at byte 48 (a[0][1][1][4]): expected a dim (an integer >= 0, or null), got a string \"4\"");
//! ```
//!
//! # Grammar, and where fnabi is stricter than the document
//! A record is a primitive string (`i[0-9]+`, `f[0-9]+`, `bf16`), `null`,
//! `"unknown"`, or an array whose first element names a compound type:
//! `["named", key, t]`, `["ndarray", elem, rank|null, dim|null…]`,
//! `["slist", t…]`, `["stuple", t…]`, `["sdict", [key, t]…]`,
//! `["py_homogeneous_list", t]` and the legacy `["sdict_kwargs", [key, t]…]`
//! (a dict of the keyword arguments, last in the argument list). The
//! function object is `{"a": [t…], "r": [t…], "v": 1}`.
//!
//! The documents do not say what to do with records that are malformed in
//! the details; fnabi rejects them, naming the JSON path and what was
//! expected: a bit width of 0 or with a leading zero (`i08`); an `ndarray`
//! whose dim count differs from its rank, or that lists dims after a `null`
//! rank; a repeated `sdict` key or argument name; `named` anywhere but the
//! root of `a`/`r`; `sdict_kwargs` anywhere but last in `a`; unknown or
//! repeated keys of the function object, a missing `a` or `r`, and a `v`
//! other than 1; nesting deeper than [`MAX_DEPTH`]; trailing text. JSON
//! itself is read strictly (RFC 8259), and a lone surrogate escape, which a
//! Rust string cannot hold, is an error.

mod declaration;
mod json;
mod parse;
mod sip;
mod tree;

use crate::limits::MAX_DEPTH;
pub use declaration::{DeclParam, DeclType, Declaration, InvocationModel, Signedness};
pub use sip::{raw_type_record, record_raw_type};
pub use tree::{RecordStructure, records_to_structure, structure_to_records};

use crate::scalar::DType;
use crate::structure::{Key, StructureError};
use parse::{Ctx, Parser};
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// The largest integer bit width (MLIR's limit, 2^24 - 1).
pub const MAX_BIT_WIDTH: u32 = (1 << 24) - 1;

/// A primitive type name.
///
/// ```
/// use fnabi_abi::reflection::Primitive;
/// use fnabi_abi::DType;
/// assert_eq!(Primitive::parse("i32"), Some(Primitive::Int(32)));
/// assert_eq!(Primitive::parse("i032"), None); // canonical digits only
/// assert_eq!(Primitive::Float(16).dtype(), Some(DType::F16));
/// assert_eq!(Primitive::Int(1).dtype(), Some(DType::BOOL));
/// assert_eq!(Primitive::Int(7).dtype(), None); // no host element type
/// assert_eq!(Primitive::from_dtype(DType::BF16), Primitive::BF16);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Primitive {
    /// `iN`: a (signless) integer of N bits.
    Int(u32),
    /// `fN`: an IEEE float of N bits.
    Float(u32),
    /// `bf16`.
    BF16,
    /// An 8-bit float: `f8E4M3FN`, `f8E5M2`, `f8E4M3FNUZ`, `f8E5M2FNUZ`.
    Float8(crate::scalar::Float8),
    /// A complex type, in MLIR's spelling: `complex<f32>`, `complex<f64>`.
    Complex(crate::scalar::ComplexType),
}

impl Primitive {
    /// Parses `i32`, `f16`, `bf16`, `f8E4M3FN`, `complex<f32>`, …
    /// (canonical digits only).
    pub fn parse(s: &str) -> Option<Primitive> {
        if let Some(c) = crate::scalar::ComplexType::ALL.into_iter().find(|c| c.mlir_name() == s) {
            return Some(Primitive::Complex(c));
        }
        if s == "bf16" {
            return Some(Primitive::BF16);
        }
        if let Some(f) = crate::scalar::Float8::ALL.into_iter().find(|f| f.name() == s) {
            return Some(Primitive::Float8(f));
        }
        let (kind, digits) = s.split_at_checked(1)?;
        if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let bits: u32 = digits.parse().ok().filter(|&b| b <= MAX_BIT_WIDTH)?;
        match kind {
            "i" => Some(Primitive::Int(bits)),
            "f" => Some(Primitive::Float(bits)),
            _ => None,
        }
    }

    /// The host element type, if there is one: `i1` is `bool`, `i8`…`i64`
    /// the signed integers, `f16`/`f32`/`f64`/`bf16` the floats.
    pub fn dtype(self) -> Option<DType> {
        Some(match self {
            Primitive::Int(1) => DType::Bool,
            Primitive::Int(8) => DType::I8,
            Primitive::Int(16) => DType::I16,
            Primitive::Int(32) => DType::I32,
            Primitive::Int(64) => DType::I64,
            Primitive::Float(16) => DType::F16,
            Primitive::Float(32) => DType::F32,
            Primitive::Float(64) => DType::F64,
            Primitive::BF16 => DType::BF16,
            Primitive::Float8(f) => DType::Float8(f),
            Primitive::Complex(c) => DType::Complex(c),
            _ => return None,
        })
    }

    /// The primitive that names a host element type (unsigned types map to
    /// the signless integer of their width).
    pub fn from_dtype(d: DType) -> Primitive {
        use crate::scalar::ScalarType as S;
        match d {
            DType::Bool => Primitive::Int(1),
            DType::Float8(f) => Primitive::Float8(f),
            DType::Complex(c) => Primitive::Complex(c),
            DType::Scalar(s) => match s {
                S::F32 => Primitive::Float(32),
                S::F16 => Primitive::Float(16),
                S::F64 => Primitive::Float(64),
                S::BF16 => Primitive::BF16,
                S::I8 | S::U8 => Primitive::Int(8),
                S::I16 | S::U16 => Primitive::Int(16),
                S::I32 | S::U32 => Primitive::Int(32),
                S::I64 | S::U64 => Primitive::Int(64),
            },
        }
    }
}

impl fmt::Display for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Primitive::Int(b) => write!(f, "i{b}"),
            Primitive::Float(b) => write!(f, "f{b}"),
            Primitive::BF16 => f.write_str("bf16"),
            Primitive::Float8(t) => f.write_str(t.name()),
            Primitive::Complex(c) => f.write_str(c.mlir_name()),
        }
    }
}

/// The array type of an `ndarray` record.
///
/// ```
/// use fnabi_abi::reflection::{NdArrayType, Primitive, TypeRecord};
/// let a = NdArrayType::new(TypeRecord::Primitive(Primitive::Float(32)), Some(vec![None, Some(3)]));
/// assert_eq!((a.rank(), a.is_numeric()), (Some(2), true));
/// assert_eq!(TypeRecord::NdArray(a).to_string(), "f32[?x3]");
/// // an array of lists (references), of unknown rank
/// let refs = NdArrayType::new(TypeRecord::SList(vec![]), None);
/// assert_eq!((refs.rank(), refs.is_numeric()), (None, false));
/// assert_eq!(TypeRecord::NdArray(refs).to_string(), "ndarray<[]>[*]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NdArrayType {
    /// The element type: a primitive (an array of numbers, a buffer view),
    /// `unknown` (numbers of any type), or any other record (an array of
    /// references).
    pub element: Box<TypeRecord>,
    /// The dims (`None` each when unknown); `None` when the rank is unknown.
    pub dims: Option<Vec<Option<u64>>>,
}

impl NdArrayType {
    /// An array of `element` with these dims.
    pub fn new(element: TypeRecord, dims: Option<Vec<Option<u64>>>) -> Self {
        NdArrayType { element: Box::new(element), dims }
    }

    /// The rank, if known.
    pub fn rank(&self) -> Option<usize> {
        self.dims.as_ref().map(Vec::len)
    }

    /// True when the elements are numbers (a primitive or `unknown`
    /// element), false for an array of references.
    pub fn is_numeric(&self) -> bool {
        matches!(*self.element, TypeRecord::Primitive(_) | TypeRecord::Unknown)
    }
}

/// One `iree.abi` type record.
///
/// ```
/// use fnabi_abi::reflection::{FunctionReflection, TypeRecord};
/// let f = FunctionReflection::parse(
///     r#"{"a": [["stuple", "i64", ["py_homogeneous_list", "i8"]], ["named", "alpha", "f32"]], "r": [null], "v": 1}"#,
/// )
/// .unwrap();
/// assert_eq!(f.a[0].kind(), "stuple");
/// assert_eq!(f.a[0].to_string(), "(i64, list[i8])");
/// assert_eq!(f.a[1].to_string(), "alpha: f32");
/// assert_eq!(f.r[0], TypeRecord::Null);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeRecord {
    /// A primitive type name (`"f32"`).
    Primitive(Primitive),
    /// `null`: a null reference (an empty slot).
    Null,
    /// `"unknown"`: an unmapped type; values pass as in dynamic mode.
    Unknown,
    /// `["named", key, t]`: an argument that may be passed by keyword.
    Named(Key, Box<TypeRecord>),
    /// `["ndarray", elem, rank, dims…]`.
    NdArray(NdArrayType),
    /// `["slist", t…]`: a fixed-arity list.
    SList(Vec<TypeRecord>),
    /// `["stuple", t…]`: a fixed-arity tuple.
    STuple(Vec<TypeRecord>),
    /// `["sdict", [key, t]…]`: a structure with named slots, passed as the
    /// values in this order.
    SDict(Vec<(Key, TypeRecord)>),
    /// `["py_homogeneous_list", t]`: a list of any length.
    PyHomogeneousList(Box<TypeRecord>),
    /// `["sdict_kwargs", [key, t]…]` (legacy): the keyword arguments, as a
    /// dict in the last argument.
    SDictKwargs(Vec<(Key, TypeRecord)>),
}

impl TypeRecord {
    /// A primitive record from its name (`"f32"`).
    pub fn primitive(name: &str) -> Option<TypeRecord> {
        Primitive::parse(name).map(TypeRecord::Primitive)
    }

    /// An `ndarray` record of a primitive element with static dims.
    pub fn ndarray(element: Primitive, dims: &[u64]) -> TypeRecord {
        TypeRecord::NdArray(NdArrayType::new(
            TypeRecord::Primitive(element),
            Some(dims.iter().map(|&d| Some(d)).collect()),
        ))
    }

    /// Parses one record from JSON. `named` and `sdict_kwargs` are allowed
    /// at this record's root (as in an argument list), nowhere inside.
    pub fn parse(json: &str) -> Result<TypeRecord, ReflectionError> {
        let mut p = Parser::new(json);
        let r = p.record_at(Ctx::ArgRoot, 0)?;
        p.end()?;
        Ok(r)
    }

    /// The canonical JSON (as Python's `json.dumps` writes it).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    /// Appends the canonical JSON to `out`.
    pub fn write_json(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            TypeRecord::Primitive(p) => {
                let _ = write!(out, "\"{p}\"");
            }
            TypeRecord::Null => out.push_str("null"),
            TypeRecord::Unknown => out.push_str("\"unknown\""),
            TypeRecord::Named(k, t) => {
                out.push_str("[\"named\", ");
                json::write_string(out, k);
                out.push_str(", ");
                t.write_json(out);
                out.push(']');
            }
            TypeRecord::NdArray(a) => {
                out.push_str("[\"ndarray\", ");
                a.element.write_json(out);
                match &a.dims {
                    None => out.push_str(", null"),
                    Some(dims) => {
                        let _ = write!(out, ", {}", dims.len());
                        for d in dims {
                            match d {
                                Some(n) => {
                                    let _ = write!(out, ", {n}");
                                }
                                None => out.push_str(", null"),
                            }
                        }
                    }
                }
                out.push(']');
            }
            TypeRecord::SList(ts) => write_seq(out, "slist", ts),
            TypeRecord::STuple(ts) => write_seq(out, "stuple", ts),
            TypeRecord::SDict(es) => write_dict(out, "sdict", es),
            TypeRecord::SDictKwargs(es) => write_dict(out, "sdict_kwargs", es),
            TypeRecord::PyHomogeneousList(t) => {
                out.push_str("[\"py_homogeneous_list\", ");
                t.write_json(out);
                out.push(']');
            }
        }
    }

    /// The name of the record's kind (`"ndarray"`, `"i32"`, …) for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            TypeRecord::Primitive(_) => "primitive",
            TypeRecord::Null => "null",
            TypeRecord::Unknown => "unknown",
            TypeRecord::Named(..) => "named",
            TypeRecord::NdArray(_) => "ndarray",
            TypeRecord::SList(_) => "slist",
            TypeRecord::STuple(_) => "stuple",
            TypeRecord::SDict(_) => "sdict",
            TypeRecord::PyHomogeneousList(_) => "py_homogeneous_list",
            TypeRecord::SDictKwargs(_) => "sdict_kwargs",
        }
    }

    /// True for the structure records (`slist`, `stuple`, `sdict`,
    /// `sdict_kwargs`): those that IREE's runtime expands into flat
    /// results when one alone describes a function's results.
    pub fn is_structure(&self) -> bool {
        matches!(self, TypeRecord::SList(_) | TypeRecord::STuple(_) | TypeRecord::SDict(_) | TypeRecord::SDictKwargs(_))
    }

    /// The record without a `named` wrapper.
    pub fn unnamed(&self) -> &TypeRecord {
        match self {
            TypeRecord::Named(_, t) => t,
            t => t,
        }
    }
}

fn write_seq(out: &mut String, tag: &str, ts: &[TypeRecord]) {
    out.push_str("[\"");
    out.push_str(tag);
    out.push('"');
    for t in ts {
        out.push_str(", ");
        t.write_json(out);
    }
    out.push(']');
}

fn write_dict(out: &mut String, tag: &str, es: &[(Key, TypeRecord)]) {
    out.push_str("[\"");
    out.push_str(tag);
    out.push('"');
    for (k, t) in es {
        out.push_str(", [");
        json::write_string(out, k);
        out.push_str(", ");
        t.write_json(out);
        out.push(']');
    }
    out.push(']');
}

/// A dict key or name in the readable form: bare when it is an identifier,
/// JSON-quoted otherwise.
pub(crate) fn write_key(f: &mut fmt::Formatter<'_>, k: &str) -> fmt::Result {
    let ident = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident {
        f.write_str(k)
    } else {
        let mut s = String::new();
        json::write_string(&mut s, k);
        f.write_str(&s)
    }
}

impl fmt::Display for TypeRecord {
    /// The readable form: `f32[1x4]` (`?` for an unknown dim, `f32[*]` for
    /// an unknown rank), `[a, b]` for `slist`, `(a, b)` for `stuple`,
    /// `{x: a, y: b}` for `sdict`, `list[t]` for `py_homogeneous_list`,
    /// `**{x: a}` for `sdict_kwargs`, `alpha: f32` for `named`,
    /// `ndarray<t>[2x3]` for an array of references, `null`, `unknown`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, ts: &[TypeRecord]) -> fmt::Result {
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                t.fmt(f)?;
            }
            Ok(())
        }
        fn dict(f: &mut fmt::Formatter<'_>, es: &[(Key, TypeRecord)]) -> fmt::Result {
            f.write_str("{")?;
            for (i, (k, t)) in es.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_key(f, k)?;
                write!(f, ": {t}")?;
            }
            f.write_str("}")
        }
        match self {
            TypeRecord::Primitive(p) => p.fmt(f),
            TypeRecord::Null => f.write_str("null"),
            TypeRecord::Unknown => f.write_str("unknown"),
            TypeRecord::Named(k, t) => {
                write_key(f, k)?;
                write!(f, ": {t}")
            }
            TypeRecord::NdArray(a) => {
                if a.is_numeric() {
                    a.element.fmt(f)?;
                } else {
                    write!(f, "ndarray<{}>", a.element)?;
                }
                f.write_str("[")?;
                match &a.dims {
                    None => f.write_str("*")?,
                    Some(dims) => {
                        for (i, d) in dims.iter().enumerate() {
                            if i > 0 {
                                f.write_str("x")?;
                            }
                            match d {
                                Some(n) => write!(f, "{n}")?,
                                None => f.write_str("?")?,
                            }
                        }
                    }
                }
                f.write_str("]")
            }
            TypeRecord::SList(ts) => {
                f.write_str("[")?;
                list(f, ts)?;
                f.write_str("]")
            }
            TypeRecord::STuple(ts) => {
                f.write_str("(")?;
                list(f, ts)?;
                f.write_str(if ts.len() == 1 { ",)" } else { ")" })
            }
            TypeRecord::SDict(es) => dict(f, es),
            TypeRecord::SDictKwargs(es) => {
                f.write_str("**")?;
                dict(f, es)
            }
            TypeRecord::PyHomogeneousList(t) => write!(f, "list[{t}]"),
        }
    }
}

impl FromStr for TypeRecord {
    type Err = ReflectionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TypeRecord::parse(s)
    }
}

/// The `iree.abi` reflection of one function: argument records `a`, result
/// records `r`, and the version `v` (1, or absent).
///
/// ```
/// use fnabi_abi::reflection::FunctionReflection;
/// let f = FunctionReflection::parse(r#"{"a": ["i32", ["named", "scale", "f32"]], "r": ["i32"], "v": 1}"#).unwrap();
/// assert_eq!((f.a.len(), f.r.len(), f.v), (2, 1, Some(1)));
/// let names: Vec<Option<&str>> = f.arg_names().map(|n| n.map(|k| &**k)).collect();
/// assert_eq!(names, [None, Some("scale")]);
/// assert_eq!(f.to_string(), "(i32, scale: f32) -> (i32)");
/// assert_eq!(f.arg_structure().unwrap().leaves.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FunctionReflection {
    /// Argument records.
    pub a: Vec<TypeRecord>,
    /// Result records.
    pub r: Vec<TypeRecord>,
    /// The version, when given (only 1 is defined).
    pub v: Option<u64>,
}

impl FunctionReflection {
    /// Parses the JSON object (see the [module docs](self) for the grammar
    /// and what is rejected).
    pub fn parse(json: &str) -> Result<FunctionReflection, ReflectionError> {
        let mut p = Parser::new(json);
        let f = p.function()?;
        p.end()?;
        Ok(f)
    }

    /// The canonical JSON: `{"a": [...], "r": [...], "v": 1}` with the
    /// separators of Python's `json.dumps` (`v` only when present).
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(64);
        out.push_str("{\"a\": [");
        for (i, t) in self.a.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            t.write_json(&mut out);
        }
        out.push_str("], \"r\": [");
        for (i, t) in self.r.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            t.write_json(&mut out);
        }
        out.push(']');
        if let Some(v) = self.v {
            use std::fmt::Write;
            let _ = write!(out, ", \"v\": {v}");
        }
        out.push('}');
        out
    }

    /// The keyword name of each argument (`named` records).
    pub fn arg_names(&self) -> impl Iterator<Item = Option<&Key>> {
        self.a.iter().map(|t| if let TypeRecord::Named(k, _) = t { Some(k) } else { None })
    }

    /// The arguments' structure (see [`records_to_structure`]).
    pub fn arg_structure(&self) -> Result<RecordStructure<'_>, StructureError> {
        records_to_structure(&self.a)
    }

    /// The results' structure (see [`records_to_structure`]).
    pub fn result_structure(&self) -> Result<RecordStructure<'_>, StructureError> {
        records_to_structure(&self.r)
    }
}

impl fmt::Display for FunctionReflection {
    /// `(args) -> (results)` in the readable record form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, ts: &[TypeRecord]) -> fmt::Result {
            f.write_str("(")?;
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                t.fmt(f)?;
            }
            f.write_str(")")
        }
        list(f, &self.a)?;
        f.write_str(" -> ")?;
        list(f, &self.r)
    }
}

impl FromStr for FunctionReflection {
    type Err = ReflectionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FunctionReflection::parse(s)
    }
}

// ---- errors ----------------------------------------------------------------

/// Why an `iree.abi` record failed to parse: where (byte offset and JSON
/// path, such as `a[0][2][1]`) and what was expected.
///
/// ```
/// use fnabi_abi::reflection::{FunctionReflection, ReflectionErrorKind};
/// let e = FunctionReflection::parse(r#"{"a": [["sdict", ["x", "f32"], ["x", "i32"]]], "r": []}"#).unwrap_err();
/// assert_eq!(e.path(), "a[0][2][0]");
/// assert!(matches!(e.kind(), ReflectionErrorKind::Duplicate(k) if k.contains('x')));
/// // the second "x" starts at byte 32 of the text
/// assert_eq!(e.offset(), 32);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReflectionError {
    offset: usize,
    path: String,
    kind: ReflectionErrorKind,
}

/// What went wrong in an `iree.abi` record.
///
/// ```
/// use fnabi_abi::reflection::{FunctionReflection, ReflectionErrorKind};
/// let kind = |json: &str| FunctionReflection::parse(json).unwrap_err().kind().clone();
/// assert!(matches!(kind(r#"{"a": [] "r": []}"#), ReflectionErrorKind::Syntax(_))); // no comma
/// assert!(matches!(kind(r#"{"a": ["i08"], "r": []}"#), ReflectionErrorKind::Expected { .. }));
/// let deep = format!(r#"{{"a": [{}"i8"{}], "r": []}}"#, r#"["slist", "#.repeat(200), "]".repeat(200));
/// assert_eq!(kind(&deep), ReflectionErrorKind::TooDeep);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReflectionErrorKind {
    /// Not JSON (a lexical or punctuation error).
    Syntax(Cow<'static, str>),
    /// Valid JSON that does not follow the record grammar.
    Expected {
        /// What the grammar allows here.
        expected: Cow<'static, str>,
        /// What was found.
        got: String,
    },
    /// A key or name given twice.
    Duplicate(String),
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl ReflectionError {
    /// Byte offset in the JSON text.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The JSON path of the offending value (`a[0][2][1]`; empty at the root).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What went wrong.
    pub fn kind(&self) -> &ReflectionErrorKind {
        &self.kind
    }
}

impl fmt::Display for ReflectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "iree.abi at byte {}", self.offset)?;
        if !self.path.is_empty() {
            write!(f, " ({})", self.path)?;
        }
        f.write_str(": ")?;
        match &self.kind {
            ReflectionErrorKind::Syntax(m) => write!(f, "invalid JSON: {m}"),
            ReflectionErrorKind::Expected { expected, got } => write!(f, "expected {expected}, got {got}"),
            ReflectionErrorKind::Duplicate(k) => write!(f, "{k:?} is given twice"),
            ReflectionErrorKind::TooDeep => write!(f, "records nest deeper than {MAX_DEPTH} levels"),
        }
    }
}

impl std::error::Error for ReflectionError {}

#[cfg(test)]
mod tests;
