//! The header parser: a byte cursor over `.mlir` text that reads `func.func` headers and types.

use super::{
    AttrValue, FuncDecl, HeaderError, MAX_NESTING, ScannedFunctions, StringLiteralError, VectorEntry, Visibility,
    read_string_literal,
};
use crate::mlir::types::{ElementType, FunctionType, MemRefLayout, MemRefType, MlirType};
use crate::raw::Dim;
use std::str::FromStr;

pub(super) fn scan(text: &str, lenient: bool) -> Result<ScannedFunctions, HeaderError> {
    let mut c = Cursor::new(text.as_bytes(), 0, lenient);
    let mut out = ScannedFunctions::default();
    // Lines are counted from the previous function on (not from the start
    // for each one: a module of thousands of functions stays linear).
    let (mut counted_to, mut line) = (0usize, 1usize);
    loop {
        c.skip_trivia();
        let Some(b) = c.peek() else { break };
        if b == b'"' {
            c.string()?;
        } else if c.at_keyword("func.func") {
            let start = c.pos;
            c.pos += "func.func".len();
            let after_keyword = c.pos;
            c.tensor_args.clear();
            match c.func_header() {
                Ok(mut f) => {
                    line += c.s[counted_to..start].iter().filter(|&&b| b == b'\n').count();
                    counted_to = start;
                    let column = c.s[..start].iter().rev().take_while(|&&b| b != b'\n').count() + 1;
                    (f.line, f.column) = (line, column);
                    if f.has_body && f.visibility == Visibility::Public {
                        out.read_only_edits.append(&mut c.tensor_args);
                    } else {
                        // Only public functions with a body are compiled
                        // with their tensors marked read-only.
                        f.read_only_inputs.iter_mut().for_each(|r| *r = false);
                    }
                    out.decls.push(f);
                }
                Err(e) if lenient => {
                    c.pos = after_keyword;
                    match c.skip_func_header() {
                        Ok(name) => out.skipped.push((name, e)),
                        Err(_) => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        } else if b.is_ascii_alphanumeric() || b == b'_' {
            c.bare_word();
        } else {
            c.pos += 1;
        }
    }
    Ok(out)
}

impl FromStr for FunctionType {
    type Err = HeaderError;

    /// Parses an MLIR function type, `(memref<?xf32>, index) -> f32`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut c = Cursor::new(s.as_bytes(), 0, false);
        c.skip_trivia();
        let inputs = c.type_list()?;
        c.skip_trivia();
        c.expect("->")?;
        let results = c.result_types()?;
        c.skip_trivia();
        if c.pos != c.s.len() {
            return Err(c.error("unexpected text after the function type"));
        }
        Ok(FunctionType { inputs, results })
    }
}

impl FromStr for MlirType {
    type Err = HeaderError;

    /// Parses one type (`memref<4x?xf32>`, `memref<*xi8>`, `bf16`, …).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut c = Cursor::new(s.as_bytes(), 0, false);
        c.skip_trivia();
        let t = c.mlir_type()?;
        c.skip_trivia();
        if c.pos != c.s.len() {
            return Err(c.error("unexpected text after the type"));
        }
        Ok(t)
    }
}

/// 1-based line and byte column of `offset`.
fn line_col(s: &[u8], offset: usize) -> (usize, usize) {
    let before = &s[..offset.min(s.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.' | b'-')
}

struct Cursor<'s> {
    s: &'s [u8],
    pos: usize,
    /// Read-only marks for the tensor arguments of the header being read.
    tensor_args: Vec<(usize, &'static str)>,
    /// Whether `vector<…>` types are read (as static memrefs, for fnabi's
    /// vector entry wrapper: `scan_functions` only).
    vectors: bool,
    /// The header being read: each argument's and result's type as
    /// `(start, end, is a vector)` byte offsets, in order.
    spans: Vec<(usize, usize, bool)>,
    /// Per argument of the header being read: whether the compiled
    /// function cannot write it (see [`FuncDecl::read_only_inputs`]).
    read_only: Vec<bool>,
}

/// The argument attribute that keeps the bufferizer from writing into an argument.
const READ_ONLY: &str = "bufferization.writable = false";

impl<'s> Cursor<'s> {
    /// A cursor at `pos` of `s`; `vectors`: read `vector<…>` types (see the field).
    fn new(s: &'s [u8], pos: usize, vectors: bool) -> Self {
        Cursor { s, pos, tensor_args: Vec::new(), vectors, spans: Vec::new(), read_only: Vec::new() }
    }

    fn error(&self, msg: impl Into<String>) -> HeaderError {
        self.error_at(self.pos, msg)
    }

    fn error_at(&self, offset: usize, msg: impl Into<String>) -> HeaderError {
        let (line, column) = line_col(self.s, offset);
        HeaderError::Syntax { line, column, offset, message: msg.into() }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn rest(&self) -> &'s [u8] {
        &self.s[self.pos.min(self.s.len())..]
    }

    /// Skips whitespace and `//` comments.
    fn skip_trivia(&mut self) {
        loop {
            while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
                self.pos += 1;
            }
            if self.rest().starts_with(b"//") {
                while self.peek().is_some_and(|b| b != b'\n') {
                    self.pos += 1;
                }
            } else {
                return;
            }
        }
    }

    fn at_keyword(&self, kw: &str) -> bool {
        self.rest().starts_with(kw.as_bytes())
            && (self.pos == 0 || !is_ident_char(self.s[self.pos - 1]))
            && !self.s.get(self.pos + kw.len()).is_some_and(|&b| is_ident_char(b))
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.rest().starts_with(lit.as_bytes()) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, lit: &str) -> Result<(), HeaderError> {
        if self.eat(lit) { Ok(()) } else { Err(self.error(format!("expected `{lit}`{}", self.found()))) }
    }

    /// ", found `…`" describing the text at the cursor.
    fn found(&self) -> String {
        match self.peek() {
            None => ", found the end of the text".into(),
            Some(_) => {
                let snippet: String =
                    String::from_utf8_lossy(self.rest()).chars().take_while(|c| !c.is_whitespace()).take(24).collect();
                format!(", found `{snippet}`")
            }
        }
    }

    /// A word of identifier characters (may be empty).
    /// A name: a quoted string or a bare word; an error naming `what` otherwise.
    fn name(&mut self, what: &str) -> Result<String, HeaderError> {
        if self.peek() == Some(b'"') {
            return self.string();
        }
        let n = self.bare_word();
        if n.is_empty() {
            return Err(self.error(format!("expected {what}{}", self.found())));
        }
        Ok(n.to_owned())
    }

    fn bare_word(&mut self) -> &'s str {
        let start = self.pos;
        while self.peek().is_some_and(|b| is_ident_char(b) && b != b'-') {
            self.pos += 1;
        }
        // Only ASCII was consumed.
        std::str::from_utf8(&self.s[start..self.pos]).unwrap_or_default()
    }

    /// A string literal with MLIR escapes; the cursor is on the `"`.
    fn string(&mut self) -> Result<String, HeaderError> {
        let start = self.pos;
        let (text, len) = read_string_literal(&self.s[start + 1..], true).map_err(|e| match e {
            StringLiteralError::Unterminated => self.error_at(start, "string literal is not terminated"),
            StringLiteralError::LineBreak => self.error_at(start, "string literal is not terminated on its line"),
            StringLiteralError::UnknownEscape(at) => self.error_at(start + 1 + at, "unknown escape in string literal"),
            StringLiteralError::NotUtf8 => self.error_at(start, "string literal is not valid UTF-8"),
        })?;
        self.pos = start + 1 + len;
        Ok(text)
    }

    /// Skips a balanced group starting at an opening bracket, respecting
    /// strings, comments and `->`.
    fn skip_balanced(&mut self) -> Result<(), HeaderError> {
        let start = self.pos;
        let mut stack: Vec<u8> = Vec::new();
        loop {
            self.skip_trivia();
            let Some(b) = self.peek() else {
                return Err(self.error_at(start, "unbalanced bracket: the text ends before it closes"));
            };
            match b {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'-' if self.rest().starts_with(b"->") => self.pos += 1,
                b'{' | b'(' | b'[' | b'<' => {
                    if stack.len() >= MAX_NESTING {
                        return Err(self.error(format!("brackets nest deeper than {MAX_NESTING}")));
                    }
                    stack.push(match b {
                        b'{' => b'}',
                        b'(' => b')',
                        b'[' => b']',
                        _ => b'>',
                    });
                }
                b'}' | b')' | b']' | b'>' if stack.pop() != Some(b) => {
                    return Err(self.error(format!("unbalanced `{}`", b as char)));
                }
                _ => {}
            }
            self.pos += 1;
            if stack.is_empty() {
                return Ok(());
            }
        }
    }

    /// After `func.func`: the header, and the body if there is one.
    fn func_header(&mut self) -> Result<FuncDecl, HeaderError> {
        self.skip_trivia();
        let mut visibility = Visibility::Public;
        for (kw, v) in
            [("private", Visibility::Private), ("public", Visibility::Public), ("nested", Visibility::Nested)]
        {
            if self.at_keyword(kw) {
                self.pos += kw.len();
                visibility = v;
                self.skip_trivia();
                break;
            }
        }
        self.expect("@")?;
        let name = self.name("a function name after `@`")?;
        self.skip_trivia();
        self.spans.clear();
        self.read_only.clear();
        let header_start = self.pos;
        let inputs = self.arg_list()?;
        self.skip_trivia();
        let results = if self.eat("->") { self.result_types()? } else { Vec::new() };
        self.skip_trivia();
        let mut attributes = Vec::new();
        if self.at_keyword("attributes") {
            self.pos += "attributes".len();
            self.skip_trivia();
            attributes = self.dict(0)?;
            self.skip_trivia();
        }
        let has_body = self.peek() == Some(b'{');
        if has_body {
            self.skip_balanced()?;
        }
        let vector_entry = if self.spans.iter().any(|&(_, _, v)| v) {
            if visibility != Visibility::Public || !has_body {
                let at = self.spans.iter().find(|&&(_, _, v)| v).map_or(header_start, |&(start, _, _)| start);
                return Err(self.error_at(
                    at,
                    "vector<…> arguments and results are passed for public functions with a body only (fnabi \
                     calls them through a wrapper it adds to the module)",
                ));
            }
            let text =
                |&(start, end, _): &(usize, usize, bool)| one_line(&String::from_utf8_lossy(&self.s[start..end]));
            let (ins, outs) = self.spans.split_at(inputs.len().min(self.spans.len()));
            Some(VectorEntry {
                input_types: ins.iter().map(text).collect(),
                result_types: outs.iter().map(text).collect(),
                input_vectors: ins.iter().map(|s| s.2).collect(),
                result_vectors: outs.iter().map(|s| s.2).collect(),
                body_end: self.pos,
            })
        } else {
            None
        };
        let read_only_inputs = std::mem::take(&mut self.read_only);
        Ok(FuncDecl {
            name,
            visibility,
            has_body,
            read_only_inputs,
            ty: FunctionType { inputs, results },
            attributes,
            line: 0,
            column: 0,
            vector_entry,
        })
    }

    /// After `func.func`: skips a header fnabi cannot type (and the body),
    /// returning the function's name.
    fn skip_func_header(&mut self) -> Result<String, HeaderError> {
        self.skip_trivia();
        for kw in ["private", "public", "nested"] {
            if self.at_keyword(kw) {
                self.pos += kw.len();
                self.skip_trivia();
                break;
            }
        }
        self.expect("@")?;
        let name = self.name("a function name after `@`")?;
        self.skip_trivia();
        if self.peek() != Some(b'(') {
            return Err(self.error("expected `(`"));
        }
        self.skip_balanced()?;
        self.skip_trivia();
        if self.eat("->") {
            self.skip_trivia();
            if self.peek() == Some(b'(') {
                self.skip_balanced()?;
            } else {
                self.bare_word();
                if self.peek() == Some(b'<') {
                    self.skip_balanced()?;
                }
            }
            self.skip_trivia();
        }
        if self.at_keyword("attributes") {
            self.pos += "attributes".len();
            self.skip_trivia();
            self.skip_balanced()?;
            self.skip_trivia();
        }
        if self.peek() == Some(b'{') {
            self.skip_balanced()?;
        }
        Ok(name)
    }

    /// `(%a: T {attrs}, …)` or, for declarations, `(T {attrs}, …)`.
    fn arg_list(&mut self) -> Result<Vec<MlirType>, HeaderError> {
        self.types_in_parens(true)
    }

    /// A parenthesised list of types (function-type inputs).
    fn type_list(&mut self) -> Result<Vec<MlirType>, HeaderError> {
        self.types_in_parens(false)
    }

    /// `(T {attrs}, …)`, each type after an optional `%name:` when `named`
    /// (an argument list; else a type list).
    fn types_in_parens(&mut self, named: bool) -> Result<Vec<MlirType>, HeaderError> {
        self.expect("(")?;
        let mut out = Vec::new();
        self.skip_trivia();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            self.skip_trivia();
            if named && self.eat("%") {
                let n = self.bare_word();
                if n.is_empty() {
                    return Err(self.error("expected an argument name after `%`"));
                }
                self.skip_trivia();
                self.expect(":")?;
                self.skip_trivia();
            }
            let is_tensor = self.at_keyword("tensor");
            out.push(self.mlir_type()?);
            let type_end = self.pos;
            let vector = self.spans.last().is_some_and(|&(_, _, v)| v);
            self.skip_trivia();
            let attrs_at = self.pos;
            let attrs = self.trailing_attrs()?;
            if named {
                let declared = attrs
                    .as_deref()
                    .and_then(|a| a.iter().find(|(k, _)| k == "bufferization.writable"))
                    .map(|(_, v)| *v != AttrValue::Int(0));
                if is_tensor && declared.is_none() {
                    self.mark_read_only(type_end, attrs_at, attrs.as_deref());
                }
                // A vector is read by fnabi's wrapper; a tensor is read-only
                // unless its attributes say `bufferization.writable = true`.
                self.read_only.push(vector || (is_tensor && declared != Some(true)));
            }
            if self.eat(")") {
                return Ok(out);
            }
            let what = if named { "argument" } else { "type" };
            self.expect(",")
                .map_err(|_| self.error(format!("expected `,` or `)` in the {what} list{}", self.found())))?;
        }
    }

    /// Records the insertion that marks the tensor argument whose type
    /// ends at `type_end` read-only: into its attribute dictionary `attrs`
    /// (which opens at `attrs_at`) or as a new one. (The caller leaves alone
    /// a dictionary that already says whether it is writable.)
    fn mark_read_only(&mut self, type_end: usize, attrs_at: usize, attrs: Option<&[(String, AttrValue)]>) {
        self.tensor_args.push(match attrs {
            None => (type_end, " {bufferization.writable = false}"),
            Some([]) => (attrs_at + 1, READ_ONLY),
            Some(_) => (attrs_at + 1, "bufferization.writable = false, "),
        });
    }

    /// Optional `{arg attrs}` and `loc(…)` after an argument or result
    /// type: the attributes, if there is a dictionary.
    fn trailing_attrs(&mut self) -> Result<Option<Vec<(String, AttrValue)>>, HeaderError> {
        let mut attrs = None;
        if self.peek() == Some(b'{') {
            attrs = Some(self.dict(0)?);
            self.skip_trivia();
        }
        if self.at_keyword("loc") {
            self.pos += 3;
            self.skip_trivia();
            if self.peek() != Some(b'(') {
                return Err(self.error("expected `(` after `loc`"));
            }
            self.skip_balanced()?;
            self.skip_trivia();
        }
        Ok(attrs)
    }

    /// After `->`: one bare type or a parenthesised list.
    fn result_types(&mut self) -> Result<Vec<MlirType>, HeaderError> {
        self.skip_trivia();
        if self.peek() == Some(b'(') { self.type_list() } else { Ok(vec![self.mlir_type()?]) }
    }

    /// One type of a header, its span recorded in `spans`.
    fn mlir_type(&mut self) -> Result<MlirType, HeaderError> {
        let start = self.pos;
        let vector = self.vectors && self.at_keyword("vector");
        let t = if vector { self.vector_type()? } else { self.plain_type()? };
        self.spans.push((start, self.pos, vector));
        Ok(t)
    }

    /// A shape's static extent (the cursor on its first digit): at most
    /// `i32::MAX`, the range of a mangled dim.
    fn extent(&mut self) -> Result<u32, HeaderError> {
        let start = self.pos;
        let mut v: u64 = 0;
        while let Some(d) = self.peek().filter(u8::is_ascii_digit) {
            v = v * 10 + u64::from(d - b'0');
            if v > i32::MAX as u64 {
                return Err(self.error_at(start, "dimension exceeds 2147483647"));
            }
            self.pos += 1;
        }
        Ok(v as u32)
    }

    /// After `vector` (at it): `<4x8xf32>` or `<f32>` (0-d), read as the
    /// static identity-layout memref fnabi passes in its place (see
    /// `VectorEntry`). Scalable dims (`[4]`) are an error.
    fn vector_type(&mut self) -> Result<MlirType, HeaderError> {
        let start = self.pos;
        self.pos += "vector".len();
        self.expect("<")?;
        let mut dims = Vec::new();
        loop {
            self.skip_trivia();
            let dstart = self.pos;
            if self.peek() == Some(b'[') {
                return Err(self.error_at(dstart, "scalable vectors (`[4]` dims) are not supported"));
            }
            if !self.peek().is_some_and(|b| b.is_ascii_digit()) {
                break;
            }
            let v = self.extent()?;
            if v == 0 {
                return Err(self.error_at(dstart, "a vector dimension must be positive"));
            }
            dims.push(Dim::Static(v));
            // MLIR takes space around the `x` (`vector<4 x f32>`).
            self.skip_trivia();
            if !self.eat("x") {
                return Err(self.error(format!("expected `x` after a vector dimension{}", self.found())));
            }
        }
        let element = self.element()?;
        self.skip_trivia();
        self.expect(">").map_err(|_| self.error(format!("expected `>` closing the vector type{}", self.found())))?;
        if self.pos - start > 4096 {
            return Err(self.error_at(start, "vector type too long"));
        }
        Ok(MlirType::MemRef(MemRefType { element, dims, layout: MemRefLayout::Identity }))
    }

    fn plain_type(&mut self) -> Result<MlirType, HeaderError> {
        let start = self.pos;
        let word = self.bare_word();
        if word == "memref" {
            return self.memref_body(start);
        }
        if word == "tensor" {
            return self.tensor_body(start);
        }
        if word == "complex" {
            let e = self.complex_rest(start)?;
            return Err(self.error_at(
                start,
                format!("a complex scalar (`{e}`) is not supported: pass it as a 0-d tensor<{e}> or memref<{e}>"),
            ));
        }
        match ElementType::from_mlir_name(word) {
            Some(ElementType::Float8(_)) => Err(self.error_at(
                start,
                format!("an 8-bit float scalar (`{word}`) is not supported: pass it as a 0-d tensor<{word}> or memref<{word}>"),
            )),
            Some(e) => Ok(MlirType::Scalar(e)),
            None if word.is_empty() => Err(self.error(format!("expected a type{}", self.found()))),
            None => Err(self.error_at(
                start,
                format!(
                    "unsupported type `{word}` (fnabi passes tensor<…>, memref<…>, memref<*x…>, i1, i8, i16, i32, i64, \
                     index, f16, bf16, f32, f64 and si/ui integers)"
                ),
            )),
        }
    }

    /// After `tensor`: `<dims x elem>` or `<*x elem>`, read as the memref
    /// that bufferization with identity-layout function boundaries gives it
    /// (same dims and element type, identity layout). An encoding (sparse
    /// tensors) is an error.
    fn tensor_body(&mut self, start: usize) -> Result<MlirType, HeaderError> {
        let memref = self.memref_body(start).map_err(|e| match e {
            HeaderError::Syntax { line, column, offset, message } => HeaderError::Syntax {
                line,
                column,
                offset,
                message: message.replace("memref", "tensor").replace(
                    "tensor memory spaces other than 0 are not supported (host memory only)",
                    "tensor encodings (sparse tensors, …) are not supported",
                ),
            },
            e => e,
        })?;
        match memref {
            MlirType::MemRef(m) if m.layout != MemRefLayout::Identity => {
                Err(self.error_at(start, "tensor encodings (sparse tensors, …) are not supported"))
            }
            t => Ok(t),
        }
    }

    /// After `memref`: `<dims x elem [, layout] [, memory space]>`.
    fn memref_body(&mut self, start: usize) -> Result<MlirType, HeaderError> {
        self.expect("<")?;
        self.skip_trivia();
        if self.eat("*") {
            self.skip_trivia();
            self.expect("x")?;
            self.skip_trivia();
            let e = self.element()?;
            self.memory_space()?;
            self.expect(">")?;
            return Ok(MlirType::UnrankedMemRef(e));
        }
        let mut dims = Vec::new();
        loop {
            // MLIR takes space around the `x` (`tensor<4 x ? x f32>`).
            self.skip_trivia();
            if self.eat("?") {
                dims.push(Dim::Dynamic);
            } else if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                dims.push(Dim::Static(self.extent()?));
            } else {
                break;
            }
            self.skip_trivia();
            if !self.eat("x") {
                return Err(self.error(format!("expected `x` after a memref dimension{}", self.found())));
            }
        }
        let element = self.element()?;
        self.skip_trivia();
        let mut layout = MemRefLayout::Identity;
        if self.eat(",") {
            self.skip_trivia();
            if self.at_keyword("strided") {
                self.pos += "strided".len();
                layout = self.strided(dims.len())?;
                self.skip_trivia();
                if self.eat(",") {
                    self.skip_trivia();
                    self.memory_space_value()?;
                }
            } else if self.at_keyword("affine_map") {
                return Err(self.error("affine_map memref layouts are not supported (use strided<[…], offset: …>)"));
            } else {
                self.memory_space_value()?;
            }
        }
        self.skip_trivia();
        self.expect(">").map_err(|e| match e {
            HeaderError::Syntax { .. } if self.pos > start => {
                self.error(format!("expected `>` closing the memref type{}", self.found()))
            }
            e => e,
        })?;
        Ok(MlirType::MemRef(MemRefType { element, dims, layout }))
    }

    fn element(&mut self) -> Result<ElementType, HeaderError> {
        let start = self.pos;
        let w = self.bare_word();
        if w == "complex" {
            return self.complex_rest(start);
        }
        ElementType::from_mlir_name(w).ok_or_else(|| {
            if w.is_empty() {
                self.error(format!("expected a memref element type{}", self.found()))
            } else {
                self.error_at(start, format!("unsupported memref element type `{w}`"))
            }
        })
    }

    /// After `complex`: `<f32>` or `<f64>`.
    fn complex_rest(&mut self, start: usize) -> Result<ElementType, HeaderError> {
        self.skip_trivia();
        self.expect("<")?;
        self.skip_trivia();
        let part_at = self.pos;
        let part = self.bare_word();
        let c = match part {
            "f32" => crate::scalar::ComplexType::C64,
            "f64" => crate::scalar::ComplexType::C128,
            _ => {
                return Err(self.error_at(
                    part_at,
                    format!(
                        "unsupported complex element `complex<{part}>` (fnabi passes complex<f32> and complex<f64>)"
                    ),
                ));
            }
        };
        self.skip_trivia();
        self.expect(">").map_err(|_| self.error_at(start, "expected `>` closing `complex<…>`"))?;
        Ok(ElementType::Complex(c))
    }

    /// `, memory-space` of an unranked memref (optional).
    fn memory_space(&mut self) -> Result<(), HeaderError> {
        self.skip_trivia();
        if self.eat(",") {
            self.skip_trivia();
            self.memory_space_value()?;
        }
        self.skip_trivia();
        Ok(())
    }

    fn memory_space_value(&mut self) -> Result<(), HeaderError> {
        let start = self.pos;
        if self.eat("0") && !self.peek().is_some_and(|b| b.is_ascii_alphanumeric()) {
            self.skip_trivia();
            if self.eat(":") {
                self.skip_trivia();
                self.bare_word();
            }
            return Ok(());
        }
        Err(self.error_at(start, "memref memory spaces other than 0 are not supported (host memory only)"))
    }

    /// After `strided`: `<[s, ?, …] [, offset: o|?]>`.
    fn strided(&mut self, rank: usize) -> Result<MemRefLayout, HeaderError> {
        self.expect("<")?;
        self.skip_trivia();
        self.expect("[")?;
        let mut strides = Vec::new();
        self.skip_trivia();
        if !self.eat("]") {
            loop {
                self.skip_trivia();
                strides.push(self.static_or_dynamic()?);
                self.skip_trivia();
                if self.eat("]") {
                    break;
                }
                self.expect(",")?;
            }
        }
        if strides.len() != rank {
            return Err(self.error(format!("strided layout has {} strides for a rank-{rank} memref", strides.len())));
        }
        self.skip_trivia();
        let mut offset = Some(0);
        if self.eat(",") {
            self.skip_trivia();
            self.expect("offset")?;
            self.skip_trivia();
            self.expect(":")?;
            self.skip_trivia();
            offset = self.static_or_dynamic()?;
            self.skip_trivia();
        }
        self.expect(">")?;
        Ok(MemRefLayout::Strided { strides, offset })
    }

    fn static_or_dynamic(&mut self) -> Result<Option<i64>, HeaderError> {
        if self.eat("?") {
            return Ok(None);
        }
        let start = self.pos;
        let neg = self.eat("-");
        let mut v: i64 = 0;
        let digits = self.pos;
        while let Some(d) = self.peek().filter(u8::is_ascii_digit) {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(d - b'0')))
                .ok_or_else(|| self.error_at(start, "integer does not fit in 64 bits"))?;
            self.pos += 1;
        }
        if self.pos == digits {
            return Err(self.error(format!("expected an integer or `?`{}", self.found())));
        }
        Ok(Some(if neg { -v } else { v }))
    }

    /// `{key [= value], …}`; the cursor is on `{`.
    fn dict(&mut self, depth: usize) -> Result<Vec<(String, AttrValue)>, HeaderError> {
        if depth >= MAX_NESTING {
            return Err(self.error(format!("attribute dictionaries nest deeper than {MAX_NESTING}")));
        }
        self.expect("{")?;
        let mut out = Vec::new();
        self.skip_trivia();
        if self.eat("}") {
            return Ok(out);
        }
        loop {
            self.skip_trivia();
            let key = self.name("an attribute name")?;
            self.skip_trivia();
            let value = if self.eat("=") {
                self.skip_trivia();
                self.attr_value(depth)?
            } else {
                AttrValue::Unit
            };
            out.push((key, value));
            self.skip_trivia();
            if self.eat("}") {
                return Ok(out);
            }
            self.expect(",")
                .map_err(|_| self.error(format!("expected `,` or `}}` in an attribute dictionary{}", self.found())))?;
        }
    }

    fn attr_value(&mut self, depth: usize) -> Result<AttrValue, HeaderError> {
        match self.peek() {
            Some(b'"') => {
                let s = self.string()?;
                self.skip_trivia();
                if self.eat(":") {
                    self.skip_trivia();
                    self.bare_word();
                }
                Ok(AttrValue::Str(s))
            }
            Some(b'{') => Ok(AttrValue::Dict(self.dict(depth + 1)?)),
            Some(b) if b.is_ascii_digit() || b == b'-' => {
                let start = self.pos;
                let neg = self.eat("-");
                let mut v: i64 = 0;
                let mut ok = true;
                while let Some(d) = self.peek().filter(u8::is_ascii_digit) {
                    match v.checked_mul(10).and_then(|v| v.checked_add(i64::from(d - b'0'))) {
                        Some(n) => v = n,
                        None => ok = false,
                    }
                    self.pos += 1;
                }
                if ok
                    && self.pos > start + usize::from(neg)
                    && !self.peek().is_some_and(|b| b == b'.' || b.is_ascii_alphanumeric())
                {
                    self.skip_trivia();
                    if self.eat(":") {
                        self.skip_trivia();
                        self.bare_word();
                    }
                    return Ok(AttrValue::Int(if neg { -v } else { v }));
                }
                self.pos = start;
                self.other_value()
            }
            _ if self.at_keyword("true") => {
                self.pos += 4;
                Ok(AttrValue::Int(1))
            }
            _ if self.at_keyword("false") => {
                self.pos += 5;
                Ok(AttrValue::Int(0))
            }
            _ if self.at_keyword("unit") => {
                self.pos += 4;
                Ok(AttrValue::Unit)
            }
            None => Err(self.error("expected an attribute value, found the end of the text")),
            _ => self.other_value(),
        }
    }

    /// Any other value: its text up to the `,` or `}` that ends it.
    fn other_value(&mut self) -> Result<AttrValue, HeaderError> {
        let start = self.pos;
        loop {
            self.skip_trivia();
            match self.peek() {
                None => return Err(self.error_at(start, "attribute value runs to the end of the text")),
                Some(b',' | b'}') => break,
                Some(b'{' | b'(' | b'[' | b'<') => self.skip_balanced()?,
                Some(b'"') => {
                    self.string()?;
                }
                Some(b')' | b']' | b'>') => return Err(self.error("unbalanced bracket in an attribute value")),
                Some(_) => self.pos += 1,
            }
        }
        let text = String::from_utf8_lossy(&self.s[start..self.pos]).trim().to_owned();
        if text.is_empty() {
            return Err(self.error_at(start, "expected an attribute value"));
        }
        Ok(AttrValue::Other(text))
    }
}

/// A type's source text on one line, for the wrapper that fnabi inserts on
/// the line where a body ends (a line break would move every later line
/// of the user's file): comments dropped, each run of whitespace one
/// space; string literals (`"…"`, with `\` escapes) kept as written.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut space = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                if space && !out.is_empty() {
                    out.push(' ');
                }
                space = false;
                out.push('"');
                while let Some(c) = chars.next() {
                    out.push(c);
                    match c {
                        '\\' => out.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                space = true;
            }
            c if c.is_whitespace() => space = true,
            c => {
                if space && !out.is_empty() {
                    out.push(' ');
                }
                space = false;
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod one_line_tests {
    use super::one_line;

    #[test]
    fn types_written_over_lines_come_out_on_one() {
        assert_eq!(one_line("vector<4xf32\n>"), "vector<4xf32 >");
        assert_eq!(one_line("vector<4x // four\r\n  f32>"), "vector<4x f32>");
        assert_eq!(one_line("!llvm.struct<\"a // b\\\" c\">"), "!llvm.struct<\"a // b\\\" c\">");
        assert_eq!(one_line("  tensor<?xf32>\t"), "tensor<?xf32>");
    }
}
