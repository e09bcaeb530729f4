//! Reading `func.func` headers from `.mlir` text: name, visibility, argument
//! and result types, and attributes — what calling a compiled function
//! needs, and nothing more.
//!
//! This is not an MLIR parser. It scans the text for `func.func` operations
//! in MLIR's custom syntax (skipping strings and `//` comments), reads each
//! header, and skips the body by matching braces (strings and comments
//! inside are respected). Types are the ones that cross a `_mlir_ciface_`
//! boundary (see [`MlirType`](super::MlirType)); a `tensor<…>` reads as the identity-layout
//! memref that fnabi's pipeline bufferizes it to. Anything else — a
//! `vector`, an `affine_map` layout, a memory space other than 0, a sparse
//! tensor encoding — is an [`HeaderError::Syntax`] with its line and column,
//! never a guess ([`scan_functions`] leaves such functions out instead).
//!
//! ```
//! use fnabi_abi::mlir::{parse_functions, Visibility};
//! let src = r#"
//! module {
//!   func.func @f(%m: memref<?xf32>, %s: f32) -> f32 attributes { llvm.emit_c_interface, fv = "1", f = "I10!B4!d-1S1!R4!S1!" } {
//!     %c0 = arith.constant 0 : index
//!     %v = memref.load %m[%c0] : memref<?xf32>   // "}" in a comment
//!     return %v : f32
//!   }
//!   func.func private @host(memref<*xf32>) -> ()
//! }"#;
//! let fns = parse_functions(src).unwrap();
//! assert_eq!(fns[0].name, "f");
//! assert_eq!(fns[0].ty.to_string(), "(memref<?xf32>, f32) -> (f32)");
//! assert!(fns[0].emits_c_interface());
//! assert_eq!(fns[0].abi_attributes().unwrap().raw_signature().unwrap().unwrap().to_string(),
//!            "(Buffer<float32[?]>, float32) -> (float32)");
//! assert_eq!((fns[1].visibility, fns[1].has_body), (Visibility::Private, false));
//! ```

use super::types::FunctionType;
use crate::attrs::AbiAttributes;
use crate::attrs::AttributeError;
use std::fmt;

mod edits;
mod parse;

pub use edits::SourceEdits;

use parse::scan;

/// `.mlir` text (or a function type) that fnabi cannot read, or a function
/// that is not there.
///
/// ```
/// use fnabi_abi::mlir::{find_function, parse_functions, HeaderError};
/// let src = "func.func @f(%v: vector<4xf32>) {\n  return\n}";
/// match parse_functions(src).unwrap_err() {
///     // `vector<4xf32>` starts at byte 17: line 1, column 18
///     HeaderError::Syntax { line, column, offset, .. } => assert_eq!((line, column, offset), (1, 18, 17)),
///     other => panic!("{other}"),
/// }
/// let e = find_function("func.func private @g() -> ()", "h").unwrap_err();
/// assert!(matches!(e, HeaderError::NotFound(_)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderError {
    /// Text fnabi cannot read, at a line and column.
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column, in bytes.
        column: usize,
        /// Byte offset in the text.
        offset: usize,
        /// What was wrong.
        message: String,
    },
    /// A function that is not there (the message names it and what is).
    NotFound(String),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Syntax { line, column, message, .. } => write!(f, "line {line}:{column}: {message}"),
            HeaderError::NotFound(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for HeaderError {}

/// Deepest nesting of brackets inside an attribute value or body that the
/// reader follows (deeper text is an error, not a stack overflow).
pub const MAX_NESTING: usize = 256;

/// A function's symbol visibility.
///
/// ```
/// use fnabi_abi::mlir::{parse_functions, Visibility};
/// let src = "func.func nested @a() -> ()\nfunc.func public @b() -> () {\n  return\n}";
/// let fns = parse_functions(src).unwrap();
/// assert_eq!((fns[0].visibility, fns[0].has_body), (Visibility::Nested, false));
/// assert_eq!((fns[1].visibility, fns[1].line), (Visibility::Public, 2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Visibility {
    /// No keyword, or `public`.
    #[default]
    Public,
    /// `private` (declarations of external functions are private).
    Private,
    /// `nested`.
    Nested,
}

/// An attribute value, as far as fnabi needs to understand it.
///
/// ```
/// use fnabi_abi::mlir::{find_function, AttrValue};
/// let src = r#"func.func @f() attributes {n = 7 : i64, s = "a\"b", u, d = {k = 1}, o = [1, 2]} {
///   return
/// }"#;
/// let f = find_function(src, "f").unwrap();
/// assert_eq!(f.attribute("n"), Some(&AttrValue::Int(7)));
/// assert_eq!(f.attribute("s").and_then(AttrValue::as_str), Some("a\"b"));
/// assert_eq!(f.attribute("u"), Some(&AttrValue::Unit));
/// assert_eq!(f.attribute("d"), Some(&AttrValue::Dict(vec![("k".into(), AttrValue::Int(1))])));
/// assert_eq!(f.attribute("o"), Some(&AttrValue::Other("[1, 2]".into())));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttrValue {
    /// A unit attribute (a key without `= value`, or `unit`).
    Unit,
    /// A string, with MLIR's escapes (`\"`, `\\`, `\n`, `\t`, `\XX`) decoded.
    Str(String),
    /// An integer (a trailing `: type` is dropped); `true`/`false` are 1/0.
    Int(i64),
    /// A dictionary.
    Dict(Vec<(String, AttrValue)>),
    /// Anything else, as its source text.
    Other(String),
}

impl AttrValue {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The text an ABI attribute value stands for: a string's content, an
    /// integer's decimal form.
    fn abi_text(&self) -> Option<String> {
        match self {
            AttrValue::Str(s) => Some(s.clone()),
            AttrValue::Int(i) => Some(i.to_string()),
            _ => None,
        }
    }
}

/// One `func.func` header.
///
/// ```
/// use fnabi_abi::mlir::find_function;
/// let src = r#"func.func @sum(%x: tensor<?xf32>) -> f32 attributes {llvm.emit_c_interface} {
///   %c = arith.constant 0.0 : f32
///   return %c : f32
/// }"#;
/// let f = find_function(src, "sum").unwrap();
/// assert_eq!((f.name.as_str(), f.has_body, f.line, f.column), ("sum", true, 1, 1));
/// // a tensor reads as the memref it bufferizes to
/// assert_eq!(f.ty.to_string(), "(memref<?xf32>) -> (f32)");
/// assert!(f.emits_c_interface());
/// assert_eq!(f.abi_attributes().unwrap().raw_signature().unwrap(), None);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FuncDecl {
    /// The symbol name, without `@`.
    pub name: String,
    /// Visibility.
    pub visibility: Visibility,
    /// False for an external declaration (no body).
    pub has_body: bool,
    /// Per input, whether the function compiled from this header cannot
    /// write it: a `tensor<…>` argument (fnabi's pipeline bufferizes it
    /// `bufferization.writable = false`, unless its attributes say `true`)
    /// or a `vector<…>` one (fnabi's wrapper reads it). A `memref` argument
    /// may be written in place. One per input when read from a header (a
    /// `FuncDecl` made otherwise may leave it empty: nothing is known).
    pub read_only_inputs: Vec<bool>,
    /// Argument and result types.
    pub ty: FunctionType,
    /// The function's attributes (`attributes {…}`), in source order.
    pub attributes: Vec<(String, AttrValue)>,
    /// 1-based line of `func.func`.
    pub line: usize,
    /// 1-based column (in bytes) of `func.func`.
    pub column: usize,
    /// For a public function with `vector<…>` arguments or results (read by
    /// [`scan_functions`] only): how fnabi's wrapper calls it. Its
    /// [`ty`](FuncDecl::ty) then has each vector as the static memref the
    /// wrapper takes or returns in its place.
    pub vector_entry: Option<VectorEntry>,
}

/// A public function with `vector<…>` arguments or results, as the source
/// declares it: MLIR passes vectors by value in registers, which no C
/// signature describes, so fnabi adds a wrapper function to the module
/// (`fnabi_mlir::vector_entry`) that takes and returns each vector as a
/// static memref of the same shape (`vector<2x3xf32>` ↔ `memref<2x3xf32>`,
/// row-major) and calls the function with the vectors.
///
/// ```
/// use fnabi_abi::mlir::signature::scan_functions;
/// let src = "func.func @scale(%v: vector<2x3xf32>, %k: f32) -> vector<2x3xf32> {\n  return %v : vector<2x3xf32>\n}";
/// let f = &scan_functions(src).unwrap().decls[0];
/// assert_eq!(f.ty.to_string(), "(memref<2x3xf32>, f32) -> (memref<2x3xf32>)");
/// let e = f.vector_entry.as_ref().unwrap();
/// assert_eq!((e.input_types.as_slice(), e.input_vectors.as_slice()), (&["vector<2x3xf32>".to_string(), "f32".into()][..], &[true, false][..]));
/// assert_eq!((e.result_types.as_slice(), e.result_vectors.as_slice()), (&["vector<2x3xf32>".to_string()][..], &[true][..]));
/// assert_eq!(&src[e.body_end - 1..], "}"); // the wrapper goes right after the body
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorEntry {
    /// Each argument's type as the source writes it.
    pub input_types: Vec<String>,
    /// Each result's type as the source writes it.
    pub result_types: Vec<String>,
    /// Which arguments are vectors.
    pub input_vectors: Vec<bool>,
    /// Which results are vectors.
    pub result_vectors: Vec<bool>,
    /// The byte offset just past the function's body (its closing `}`).
    pub body_end: usize,
}

/// The ABI attribute keys fnabi reads from a function (directly, or inside
/// its `iree.reflection` dictionary).
const ABI_KEYS: [&str; 7] = ["abi", "abiv", "fv", "f", "fbr", "sipv", "sip"];

impl FuncDecl {
    /// The value of attribute `key`.
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.attributes.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// True when the function carries `llvm.emit_c_interface` (fnabi's
    /// pipeline emits the wrapper for every function anyway).
    pub fn emits_c_interface(&self) -> bool {
        self.attribute("llvm.emit_c_interface").is_some()
    }

    /// The ABI attributes (`fv`/`f`/`fbr`, `sipv`/`sip`, `abi`/`abiv`), read
    /// from the function's attributes and from its `iree.reflection`
    /// dictionary. A key given in both places must have the same value.
    pub fn abi_attributes(&self) -> Result<AbiAttributes, AttributeError> {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        let reflection = match self.attribute("iree.reflection") {
            Some(AttrValue::Dict(d)) => d.as_slice(),
            Some(_) => return Err(AttributeError::new("iree.reflection is not a dictionary")),
            None => &[],
        };
        for (k, v) in self.attributes.iter().chain(reflection) {
            let Some(key) = ABI_KEYS.iter().find(|a| **a == k.as_str()) else { continue };
            let text = v
                .abi_text()
                .ok_or_else(|| AttributeError::new(format!("attribute {key} is not a string or an integer")))?;
            match pairs.iter().find(|(pk, _)| pk == key) {
                Some((_, prev)) if *prev == text => {}
                Some((_, prev)) => {
                    return Err(AttributeError::new(format!(
                        "attribute {key} is given twice with different values ({prev:?} and {text:?})"
                    )));
                }
                None => pairs.push((key, text)),
            }
        }
        AbiAttributes::from_pairs(pairs)
    }
}

/// Reads every `func.func` header of an `.mlir` text, in source order.
pub fn parse_functions(text: &str) -> Result<Vec<FuncDecl>, HeaderError> {
    Ok(scan(text, false)?.decls)
}

/// What a lenient reading of an `.mlir` text found (see [`scan_functions`]).
///
/// ```
/// use fnabi_abi::mlir::signature::scan_functions;
/// let src = "func.func private @v(%a: vector<4xf32>) -> () {\n  return\n}\nfunc.func @ok(%a: tensor<4xf32>) -> () {\n  return\n}";
/// let s = scan_functions(src).unwrap();
/// assert_eq!(s.decls.len(), 1);
/// assert_eq!(s.decls[0].name, "ok");
/// assert_eq!(s.skipped[0].0, "v"); // a private function's vectors: no wrapper
/// // the public function's tensor argument is marked read-only for the bufferizer
/// assert!(s.read_only_source(src).contains("bufferization.writable = false"));
/// ```
#[derive(Debug, Default)]
pub struct ScannedFunctions {
    /// The headers fnabi can call or bind, in source order.
    pub decls: Vec<FuncDecl>,
    /// The functions left out, each with why: a header with a type that
    /// does not cross the C interface (a sparse tensor, a scalable vector,
    /// a vector of a function that is not public with a body, …).
    pub skipped: Vec<(String, HeaderError)>,
    /// Where the bufferizer must be told that a public function's tensor
    /// argument is read-only (byte offset, text to insert there), in
    /// ascending order (see [`scan_functions`]).
    pub(crate) read_only_edits: Vec<(usize, &'static str)>,
}

impl ScannedFunctions {
    /// `text` with every tensor argument of a public function that has a
    /// body marked `bufferization.writable = false` (unless the source says
    /// otherwise): the caller's arrays are inputs, never scratch space, so
    /// the bufferized function copies before it writes. Lines keep their
    /// numbers (insertions never add a line break).
    pub fn read_only_source(&self, text: &str) -> String {
        self.edited_source(text, &[])
    }

    /// [`read_only_source`](ScannedFunctions::read_only_source) with more
    /// text inserted at byte offsets of `text` (`(offset, text)`, ascending;
    /// e.g. fnabi's vector entry wrappers after their functions' bodies).
    pub fn edited_source(&self, text: &str, insertions: &[(usize, String)]) -> String {
        self.edit(text, insertions).0
    }

    /// [`edited_source`](ScannedFunctions::edited_source) and where its
    /// insertions went, to read a tool's line:column in the edited text as
    /// the user's ([`SourceEdits`]). An insertion holding a line break is
    /// left out (none of fnabi's does: lines keep their numbers).
    pub fn edit(&self, text: &str, insertions: &[(usize, String)]) -> (String, SourceEdits) {
        let extra: usize = insertions.iter().map(|(_, t)| t.len()).sum();
        let mut out = String::with_capacity(text.len() + 40 * self.read_only_edits.len() + extra);
        let mut edits: Vec<(usize, &str)> = self.read_only_edits.iter().map(|&(p, t)| (p, t)).collect();
        edits.extend(insertions.iter().map(|(p, t)| (*p, t.as_str())).filter(|(_, t)| !t.contains('\n')));
        edits.sort_by_key(|&(p, _)| p);
        let mut made = Vec::with_capacity(edits.len());
        let mut at = 0;
        for (pos, ins) in edits {
            let Some(before) = text.get(at..pos) else { continue };
            out.push_str(before);
            out.push_str(ins);
            made.push((pos, ins.len()));
            at = pos;
        }
        out.push_str(&text[at..]);
        (out, SourceEdits::new(text, &made))
    }
}

/// Reads every `func.func` header it can: a function whose header fnabi
/// cannot type (a `vector<…>` or sparse-tensor argument, say) is listed in
/// [`skipped`](ScannedFunctions::skipped) instead of failing the whole text,
/// so a module whose helpers take vectors still runs its other functions.
/// Text that is not well-formed (an unterminated string, unbalanced
/// brackets) is still an error.
pub fn scan_functions(text: &str) -> Result<ScannedFunctions, HeaderError> {
    scan(text, true)
}

/// Finds the function `name` in an `.mlir` text.
pub fn find_function(text: &str, name: &str) -> Result<FuncDecl, HeaderError> {
    let fns = parse_functions(text)?;
    let names: Vec<&str> = fns.iter().map(|f| f.name.as_str()).collect();
    let msg = format!("no function @{name} in the MLIR text (it has: {})", names.join(", "));
    fns.iter().find(|f| f.name == name).cloned().ok_or(HeaderError::NotFound(msg))
}

/// Why [`read_string_literal`] stops: offsets are into the text it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StringLiteralError {
    /// The text ends before the closing `"`.
    Unterminated,
    /// A raw line break where line breaks end a literal.
    LineBreak,
    /// A `\` that starts no escape, at this offset.
    UnknownEscape(usize),
    /// The decoded bytes are no UTF-8.
    NotUtf8,
}

/// Reads an MLIR string literal whose opening `"` comes just before `s`:
/// its text, escapes decoded (`\"`, `\\`, `\n`, `\t`, and `\XX` for any
/// byte — LLVM IR's quoted names use the last two), and the bytes it took,
/// the closing `"` included. `line_breaks_end`: a raw line break is an error
/// (as in MLIR source) rather than part of the text.
///
/// ```
/// use fnabi_abi::mlir::signature::{StringLiteralError, read_string_literal};
/// assert_eq!(read_string_literal(br#"h\C3\A9 \"x\"" rest"#, true), Ok(("hé \"x\"".to_owned(), 14)));
/// assert_eq!(read_string_literal(b"a\\qb\"", true), Err(StringLiteralError::UnknownEscape(1)));
/// assert_eq!(read_string_literal(b"a\nb\"", true), Err(StringLiteralError::LineBreak));
/// assert_eq!(read_string_literal(b"a\nb\"", false), Ok(("a\nb".to_owned(), 4)));
/// assert_eq!(read_string_literal(b"open", true), Err(StringLiteralError::Unterminated));
/// ```
pub fn read_string_literal(s: &[u8], line_breaks_end: bool) -> Result<(String, usize), StringLiteralError> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let &b = s.get(i).ok_or(StringLiteralError::Unterminated)?;
        i += 1;
        match b {
            b'"' => break,
            b'\n' if line_breaks_end => return Err(StringLiteralError::LineBreak),
            b'\\' => {
                let &esc = s.get(i).ok_or(StringLiteralError::Unterminated)?;
                i += 1;
                match esc {
                    b'"' | b'\\' => out.push(esc),
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    _ => match (hex(esc), s.get(i).and_then(|&l| hex(l))) {
                        (Some(h), Some(l)) => {
                            i += 1;
                            out.push((h * 16 + l) as u8);
                        }
                        _ => return Err(StringLiteralError::UnknownEscape(i - 2)),
                    },
                }
            }
            _ => out.push(b),
        }
    }
    let text = String::from_utf8(out).map_err(|_| StringLiteralError::NotUtf8)?;
    Ok((text, i))
}

#[cfg(test)]
mod tests;
