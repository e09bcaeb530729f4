//! Inputs below `func.func`: the level of a module ([`InputLevel`]: MLIR
//! source, LLVM-dialect MLIR, LLVM IR text or bitcode), the function
//! headers an LLVM-level module declares ([`LlvmFunctions`], from
//! `llvm.func` or LLVM IR `define`/`declare` lines), and the function types
//! fnabi calls them by.
//!
//! An LLVM-level module no longer says what its memrefs were: its
//! `_mlir_ciface_f` takes `ptr`s. Such a function is typed by the caller's
//! signature, which is checked against the declaration (one `ptr` per
//! memref, a leading `ptr` for packed results, each scalar its own type).
//! A function whose header has only scalars (`llvm.func @main() -> i32`,
//! what `mlir-runner -e main -entry-point-result=i32` runs) is typed by the
//! header itself and called by its own symbol when it has no
//! `_mlir_ciface_` wrapper (for scalars the two conventions are the same).

use crate::MlirError;
use crate::symbol::quoted_name;
use fnabi_abi::mlir::types::{ElementType, FunctionType, MlirType};
use std::fmt;

/// How far down the pipeline an input already is.
///
/// ```
/// use fnabi_mlir::InputLevel;
/// assert_eq!(InputLevel::detect(Some("bc"), b""), InputLevel::Bitcode);
/// assert_eq!(InputLevel::detect(None, b"BC\xC0\xDE..."), InputLevel::Bitcode); // the magic
/// assert_eq!(InputLevel::detect_text("llvm.func @f() {\n  llvm.return\n}"), InputLevel::LlvmDialect);
/// assert_eq!(InputLevel::detect_text("func.func @f() {\n  return\n}"), InputLevel::Mlir);
/// assert!(InputLevel::LlvmIr.is_llvm() && !InputLevel::Mlir.is_llvm());
/// assert_eq!(InputLevel::LlvmDialect.to_string(), "LLVM-dialect MLIR");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum InputLevel {
    /// MLIR with `func.func` functions (tensor, memref or mixed level): the
    /// whole pipeline runs.
    #[default]
    Mlir,
    /// MLIR whose functions are `llvm.func`: translated to LLVM IR directly.
    LlvmDialect,
    /// LLVM IR text (`.ll`): optimized and compiled.
    LlvmIr,
    /// LLVM bitcode (`.bc`): optimized and compiled.
    Bitcode,
}

impl fmt::Display for InputLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputLevel::Mlir => "MLIR source",
            InputLevel::LlvmDialect => "LLVM-dialect MLIR",
            InputLevel::LlvmIr => "LLVM IR",
            InputLevel::Bitcode => "LLVM bitcode",
        })
    }
}

/// The magic bytes of LLVM bitcode (`BC\xC0\xDE`).
const BITCODE_MAGIC: [u8; 4] = [b'B', b'C', 0xC0, 0xDE];

impl InputLevel {
    /// Whether `bytes` start as LLVM bitcode does (`BC\xC0\xDE`).
    ///
    /// ```
    /// use fnabi_mlir::InputLevel;
    /// assert!(InputLevel::looks_like_bitcode(b"BC\xC0\xDE\x35\x14"));
    /// assert!(!InputLevel::looks_like_bitcode(b"\x7fELF"));
    /// ```
    pub fn looks_like_bitcode(bytes: &[u8]) -> bool {
        bytes.starts_with(&BITCODE_MAGIC)
    }

    /// The level of `bytes` read from a file with extension `ext`: bitcode
    /// by its magic (or `.bc`), LLVM IR by `.ll` (or a `define`/`target
    /// triple` line outside MLIR), LLVM-dialect MLIR when the text has
    /// `llvm.func` and no `func.func`; else MLIR source.
    pub fn detect(ext: Option<&str>, bytes: &[u8]) -> InputLevel {
        if InputLevel::looks_like_bitcode(bytes) || ext == Some("bc") {
            return InputLevel::Bitcode;
        }
        if ext == Some("ll") {
            return InputLevel::LlvmIr;
        }
        let text = String::from_utf8_lossy(bytes);
        InputLevel::detect_text(&text)
    }

    /// The level of MLIR or LLVM IR text.
    pub fn detect_text(text: &str) -> InputLevel {
        let code = code_lines(text);
        let has = |needle: &str| code.clone().any(|l| l.contains(needle));
        if has("func.func") {
            InputLevel::Mlir
        } else if has("llvm.func") {
            InputLevel::LlvmDialect
        } else if code.clone().any(|l| l.starts_with("define ") || l.starts_with("target triple")) {
            InputLevel::LlvmIr
        } else {
            InputLevel::Mlir
        }
    }

    /// True for the levels that skip `mlir-opt`.
    pub fn is_llvm(self) -> bool {
        self != InputLevel::Mlir
    }
}

/// The trimmed lines of `text` that are not comments (`//` and `;`).
fn code_lines(text: &str) -> impl Iterator<Item = &str> + Clone {
    text.lines().map(str::trim_start).filter(|l| !l.starts_with("//") && !l.starts_with(';'))
}

/// One type of an LLVM-level header, as fnabi sees it.
///
/// ```
/// use fnabi_mlir::llvm_level::{LlvmFunctions, LlvmType};
/// use fnabi_mlir::ElementType;
/// let fs = LlvmFunctions::scan("declare double @g(ptr, half, { i64, i64 })");
/// let g = &fs.functions[0];
/// assert_eq!(g.params[0], LlvmType::Ptr);
/// assert_eq!(g.params[1], LlvmType::Scalar(ElementType::from_mlir_name("f16").unwrap())); // `half` is f16
/// assert!(matches!(&g.params[2], LlvmType::Other(_)));
/// assert_eq!(g.result.as_ref().unwrap().to_string(), "f64");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LlvmType {
    /// A scalar that crosses the C interface as the MLIR element type.
    Scalar(ElementType),
    /// A pointer (`!llvm.ptr`, `ptr`): a memref descriptor or result struct.
    Ptr,
    /// Anything else (structs, vectors, arrays): not callable from the host.
    Other(String),
}

impl fmt::Display for LlvmType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlvmType::Scalar(e) => write!(f, "{}", llvm_name(*e)),
            LlvmType::Ptr => f.write_str("ptr"),
            LlvmType::Other(t) => f.write_str(t),
        }
    }
}

/// The LLVM-dialect spelling of a scalar's type.
fn llvm_name(e: ElementType) -> String {
    match e {
        ElementType::Index => "i64".into(),
        other => {
            let s = other.to_string();
            // si32/ui32 are i32 at the LLVM level.
            match s.strip_prefix('s').or_else(|| s.strip_prefix('u')) {
                Some(rest) if rest.starts_with('i') => rest.to_owned(),
                _ => s,
            }
        }
    }
}

impl LlvmType {
    fn read(text: &str) -> LlvmType {
        let t = text.trim();
        let mlir = match t {
            "!llvm.ptr" | "ptr" => return LlvmType::Ptr,
            "half" => "f16",
            "bfloat" => "bf16",
            "float" => "f32",
            "double" => "f64",
            "i1" | "i8" | "i16" | "i32" | "i64" | "f16" | "bf16" | "f32" | "f64" => t,
            _ => return LlvmType::Other(t.to_owned()),
        };
        match mlir.parse::<MlirType>() {
            Ok(MlirType::Scalar(e)) => LlvmType::Scalar(e),
            _ => LlvmType::Other(t.to_owned()),
        }
    }

    /// The LLVM-level type of an MLIR type passed through the C interface.
    fn of_mlir(t: &MlirType) -> LlvmType {
        match t {
            MlirType::Scalar(e) => LlvmType::Scalar(match e {
                ElementType::Index => ElementType::Scalar(fnabi_abi::scalar::ScalarType::I64),
                e => *e,
            }),
            _ => LlvmType::Ptr,
        }
    }

    /// The same LLVM type (signedness and `index` do not exist there).
    fn same(&self, other: &LlvmType) -> bool {
        match (self, other) {
            (LlvmType::Scalar(a), LlvmType::Scalar(b)) => llvm_name(*a) == llvm_name(*b),
            (a, b) => a == b,
        }
    }
}

/// One function header of an LLVM-level module.
///
/// ```
/// use fnabi_mlir::llvm_level::LlvmFunctions;
/// let fs = LlvmFunctions::scan("llvm.func @add(%a: i32, %b: i32) -> i32 {\n  llvm.return %a : i32\n}");
/// let f = &fs.functions[0];
/// assert_eq!((f.name.as_str(), f.defined, f.local, f.line), ("add", true, false, 1));
/// assert_eq!(f.scalar_type().unwrap().to_string(), "(i32, i32) -> (i32)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlvmFunction {
    /// The symbol, without `@`.
    pub name: String,
    /// Its parameter types.
    pub params: Vec<LlvmType>,
    /// Its result type (`None`: `void`).
    pub result: Option<LlvmType>,
    /// False for a declaration (no body).
    pub defined: bool,
    /// True when its linkage keeps it inside the module (`private`, `internal`).
    pub local: bool,
    /// 1-based line of the header.
    pub line: usize,
}

impl LlvmFunction {
    /// The MLIR function type of a scalar-only header; `None` when a
    /// parameter or the result is a pointer or an aggregate.
    pub fn scalar_type(&self) -> Option<FunctionType> {
        let scalar = |t: &LlvmType| match t {
            LlvmType::Scalar(e) => Some(MlirType::Scalar(*e)),
            _ => None,
        };
        let inputs = self.params.iter().map(scalar).collect::<Option<Vec<_>>>()?;
        let results = match &self.result {
            None => Vec::new(),
            Some(r) => vec![scalar(r)?],
        };
        Some(FunctionType { inputs, results })
    }

    fn header(&self) -> String {
        let params: Vec<String> = self.params.iter().map(ToString::to_string).collect();
        let result = self.result.as_ref().map_or_else(|| "void".to_owned(), ToString::to_string);
        format!("@{}({}) -> {result}", self.name, params.join(", "))
    }
}

/// The function headers of an LLVM-level module.
///
/// ```
/// use fnabi_mlir::LlvmFunctions;
/// let ir = "define i32 @main() {\n  ret i32 0\n}\n\
///           define void @_mlir_ciface_f(ptr %0, ptr %1) {\n  ret void\n}\n\
///           define internal float @helper(float %x) {\n  ret float %x\n}\n\
///           declare double @exp(double)";
/// let fs = LlvmFunctions::scan(ir);
/// assert_eq!(fs.functions.len(), 4);
/// // main: scalar-only, exported; f: through its wrapper; helper is internal; exp is declared only
/// assert_eq!(fs.callable(), ["main", "f"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LlvmFunctions {
    /// Every `llvm.func` / `define` / `declare`, in order.
    pub functions: Vec<LlvmFunction>,
}

/// The prefix of MLIR's C-interface wrappers.
const CIFACE: &str = "_mlir_ciface_";

/// How the host calls a function of an LLVM-level module.
///
/// ```
/// use fnabi_mlir::LlvmFunctions;
/// let ir = "define i32 @main() {\n  ret i32 0\n}\n\
///           define void @_mlir_ciface_f(ptr %0, ptr %1) {\n  ret void\n}\n\
///           define internal float @helper(float %x) {\n  ret float %x\n}\n\
///           declare double @exp(double)";
/// let fs = LlvmFunctions::scan(ir);
/// let main = fs.entry("main").unwrap();
/// assert_eq!((main.symbol.as_str(), main.ty.to_string()), ("main", "() -> (i32)".to_string()));
/// // f takes pointers: only a caller's MLIR type says what they are
/// assert!(fs.entry("f").is_err());
/// let f = fs.entry_with_type("f", "(memref<?xf32>) -> memref<?xf32>".parse().unwrap()).unwrap();
/// assert_eq!(f.symbol, "_mlir_ciface_f"); // (ptr results, ptr argument) -> void
/// assert!(fs.entry_with_type("f", "(f32) -> f32".parse().unwrap()).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlvmEntry {
    /// The symbol called (`_mlir_ciface_f`, or `f` itself for a scalar-only
    /// function without a wrapper).
    pub symbol: String,
    /// The function type the call uses.
    pub ty: FunctionType,
}

impl LlvmFunctions {
    /// The headers of LLVM-dialect MLIR text (`llvm.func …`) or LLVM IR
    /// text (`define …`, `declare …`).
    pub fn scan(text: &str) -> LlvmFunctions {
        let mut functions = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l = line.trim_start();
            let parsed = if let Some(rest) = l.strip_prefix("llvm.func ") {
                scan_header(rest, i + 1, Dialect::Mlir)
            } else if let Some(rest) = l.strip_prefix("define ") {
                scan_header(rest, i + 1, Dialect::IrDefine)
            } else if let Some(rest) = l.strip_prefix("declare ") {
                scan_header(rest, i + 1, Dialect::IrDeclare)
            } else {
                None
            };
            functions.extend(parsed);
        }
        LlvmFunctions { functions }
    }

    fn get(&self, name: &str) -> Option<&LlvmFunction> {
        self.functions.iter().find(|f| f.name == name && f.defined)
    }

    /// The functions a host can call: each `f` with a defined
    /// `_mlir_ciface_f`, and each defined, exported scalar-only function
    /// without one; in module order.
    pub fn callable(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for f in self.functions.iter().filter(|f| f.defined && !f.local) {
            let name = match f.name.strip_prefix(CIFACE) {
                Some(n) => n.to_owned(),
                None if f.scalar_type().is_some() && self.get(&format!("{CIFACE}{}", f.name)).is_none() => {
                    f.name.clone()
                }
                None => continue,
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    /// How to call `name` when no signature is given: its scalar-only
    /// header (the `_mlir_ciface_` wrapper's when there is one).
    /// Errors: [`MlirError::NeedsSignature`] for a function defined here
    /// that its header cannot type, [`MlirError::NotFound`] for a name
    /// defined nowhere.
    pub fn entry(&self, name: &str) -> Result<LlvmEntry, MlirError> {
        let wrapper = format!("{CIFACE}{name}");
        if let Some(w) = self.get(&wrapper) {
            return match w.scalar_type() {
                Some(ty) => Ok(LlvmEntry { symbol: wrapper, ty }),
                None => Err(MlirError::NeedsSignature(format!(
                    "{} takes pointers (memref descriptors), whose element types the LLVM-level module no \
                     longer records: give @{name}'s MLIR function type as its signature (`fnabi run \
                     --signature`, Python's `fnabi.load(..., signature=)`; each `ptr` a memref \
                     argument, or with a void result a leading one for the results: `(memref<?xf32>, f32) -> \
                     memref<?xf32>` is `(ptr, ptr, f32) -> void`)",
                    w.header()
                ))),
            };
        }
        match self.get(name) {
            Some(f) => match f.scalar_type() {
                Some(ty) => Ok(LlvmEntry { symbol: name.to_owned(), ty }),
                None => Err(MlirError::NeedsSignature(format!(
                    "{} has no {CIFACE}{name} wrapper and is not scalar-only: lower it with \
                     `llvm.emit_c_interface` (or --llvm-request-c-wrappers) to call it with memrefs",
                    f.header()
                ))),
            },
            None => Err(MlirError::NotFound(format!(
                "no function @{name} is defined (callable: {})",
                self.callable().join(", ")
            ))),
        }
    }

    /// How to call `name` with the given MLIR type: through its
    /// `_mlir_ciface_` wrapper (or its own symbol for a scalar-only type),
    /// after checking the type against the header.
    pub fn entry_with_type(&self, name: &str, ty: FunctionType) -> Result<LlvmEntry, String> {
        let wrapper = format!("{CIFACE}{name}");
        let (symbol, f) = match (self.get(&wrapper), self.get(name)) {
            (Some(w), _) => (wrapper, w),
            (None, Some(f)) => (name.to_owned(), f),
            (None, None) => {
                return Err(format!("no function @{name} is defined (callable: {})", self.callable().join(", ")));
            }
        };
        let packed = ty.results.len() > 1 || ty.results.iter().any(MlirType::is_memref);
        if f.name == name && (packed || ty.inputs.iter().any(MlirType::is_memref)) {
            return Err(format!(
                "{} has no {CIFACE}{name} wrapper: only scalar-only signatures can be called by it",
                f.header()
            ));
        }
        let mut want: Vec<LlvmType> = Vec::new();
        if packed {
            want.push(LlvmType::Ptr);
        }
        want.extend(ty.inputs.iter().map(LlvmType::of_mlir));
        let want_result = match (packed, ty.results.first()) {
            (false, Some(r)) => Some(LlvmType::of_mlir(r)),
            _ => None,
        };
        let params_ok = want.len() == f.params.len() && want.iter().zip(&f.params).all(|(a, b)| a.same(b));
        let result_ok = match (&want_result, &f.result) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same(b),
            _ => false,
        };
        if !params_ok || !result_ok {
            let params: Vec<String> = want.iter().map(ToString::to_string).collect();
            let result = want_result.as_ref().map_or_else(|| "void".to_owned(), ToString::to_string);
            return Err(format!(
                "the signature {ty} contradicts the module's {} (line {}): through MLIR's C interface it \
                 would be @{}({}) -> {result}",
                f.header(),
                f.line,
                f.name,
                params.join(", ")
            ));
        }
        Ok(LlvmEntry { symbol, ty })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Mlir,
    IrDefine,
    IrDeclare,
}

/// Splits `s` at top-level commas (outside `()`, `<>`, `{}`, `[]`).
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '<' | '{' | '[' => depth += 1,
            ')' | '>' | '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(&s[start..]);
    }
    out
}

/// The byte index of the `)` that closes the `(` at `open`.
fn closing(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Reads one header after `llvm.func ` / `define ` / `declare `.
fn scan_header(rest: &str, line: usize, dialect: Dialect) -> Option<LlvmFunction> {
    let at = rest.find('@')?;
    let before = &rest[..at];
    let after = &rest[at + 1..];
    let (name, name_end) = match after.strip_prefix('"') {
        Some(quoted) => {
            let (name, len) = quoted_name(quoted)?;
            let paren = 1 + len + after[1 + len..].find('(')?;
            after[1 + len..paren].trim().is_empty().then_some((name, paren))?
        }
        None => {
            let end = after.find('(')?;
            (after[..end].to_owned(), end)
        }
    };
    let open = at + 1 + name_end;
    let close = closing(rest, open)?;
    let params_text = &rest[open + 1..close];
    let tail = rest[close + 1..].trim();
    let words: Vec<&str> = before.split_whitespace().collect();
    let local = words.iter().any(|w| matches!(*w, "private" | "internal"));
    let param = |p: &str| -> Option<LlvmType> {
        let p = p.trim();
        if p == "..." {
            return None;
        }
        match dialect {
            // `%arg0: i64 {llvm.noalias}` or `i64`
            Dialect::Mlir => {
                let ty = p.split_once(':').map_or(p, |(_, t)| t).trim();
                let ty = ty.split_once(" {").map_or(ty, |(t, _)| t);
                let ty = ty.split_once(" loc(").map_or(ty, |(t, _)| t);
                Some(LlvmType::read(ty))
            }
            // `ptr noundef %0`, `i64 %1`, `float`
            Dialect::IrDefine | Dialect::IrDeclare => {
                let ty = if p.starts_with('{') || p.starts_with('<') || p.starts_with('[') {
                    p
                } else {
                    p.split_whitespace().next().unwrap_or(p)
                };
                Some(LlvmType::read(ty))
            }
        }
    };
    let mut params = Vec::new();
    for p in split_top(params_text) {
        params.push(param(p).unwrap_or_else(|| LlvmType::Other("...".into())));
    }
    let (result, defined) = match dialect {
        Dialect::Mlir => {
            let (result, after_result) = match tail.strip_prefix("->") {
                Some(r) => {
                    let r = r.trim_start();
                    // The result type ends at ` attributes`, ` {`, ` loc(` or the end.
                    let end = [" attributes", " {", " loc("].iter().filter_map(|m| r.find(m)).min().unwrap_or(r.len());
                    (Some(LlvmType::read(&r[..end])), &r[end..])
                }
                None => (None, tail),
            };
            let result = result.filter(|r| *r != LlvmType::Other("!llvm.void".into()));
            let mut t = after_result.trim();
            if let Some(a) = t.strip_prefix("attributes") {
                let a = a.trim_start();
                t = match a.find('{').and_then(|o| closing_brace(a, o)) {
                    Some(e) => a[e + 1..].trim(),
                    None => "",
                };
            }
            if let Some(l) = t.strip_prefix("loc(") {
                t = l.rsplit_once(')').map_or("", |(_, r)| r).trim();
            }
            (result, t.starts_with('{'))
        }
        Dialect::IrDefine | Dialect::IrDeclare => {
            let ret = words.last().copied().unwrap_or("void");
            let result = if ret == "void" {
                None
            } else if before.trim_end().ends_with('}') {
                Some(LlvmType::Other("{…}".into()))
            } else {
                Some(LlvmType::read(ret))
            };
            (result, dialect == Dialect::IrDefine)
        }
    };
    Some(LlvmFunction { name, params, result, defined, local, line })
}

/// The byte index of the `}` that closes the `{` at `open`.
fn closing_brace(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIALECT: &str = r#"module attributes {llvm.data_layout = ""} {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @sum(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, %arg3: i64, %arg4: i64) -> f32 attributes {llvm.emit_c_interface} {
    llvm.return %0 : f32
  }
  llvm.func @_mlir_ciface_sum(%arg0: !llvm.ptr) -> f32 attributes {llvm.emit_c_interface} {
  }
  llvm.func @main() -> i32 {
  }
  llvm.func private @helper(%arg0: i64) -> i64 {
  }
  llvm.func @axpy(%arg0: f64, %arg1: i64 {llvm.noundef}) -> f64 {
  }
}
"#;

    #[test]
    fn levels() {
        assert_eq!(InputLevel::detect_text(DIALECT), InputLevel::LlvmDialect);
        assert_eq!(InputLevel::detect_text("func.func @f() {\n return\n}\n"), InputLevel::Mlir);
        assert_eq!(InputLevel::detect_text("// llvm.func\nfunc.func @f()"), InputLevel::Mlir);
        assert_eq!(InputLevel::detect_text("; x\ndefine i32 @main() {\n}\n"), InputLevel::LlvmIr);
        assert_eq!(InputLevel::detect(Some("bc"), b""), InputLevel::Bitcode);
        assert_eq!(InputLevel::detect(None, &[b'B', b'C', 0xC0, 0xDE, 1]), InputLevel::Bitcode);
        assert_eq!(InputLevel::detect(Some("ll"), b""), InputLevel::LlvmIr);
    }

    #[test]
    fn llvm_dialect_headers() {
        let f = LlvmFunctions::scan(DIALECT);
        let names: Vec<&str> = f.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["malloc", "sum", "_mlir_ciface_sum", "main", "helper", "axpy"]);
        assert!(!f.functions[0].defined);
        assert!(f.functions[1].defined && f.functions[4].local);
        assert_eq!(f.callable(), ["sum", "main", "axpy"]);
        assert_eq!(f.entry("main").unwrap(), LlvmEntry { symbol: "main".into(), ty: "() -> i32".parse().unwrap() });
        assert_eq!(f.entry("axpy").unwrap().ty, "(f64, i64) -> f64".parse().unwrap());
        let e = f.entry("sum").unwrap_err();
        assert!(matches!(e, MlirError::NeedsSignature(_)), "{e:?}");
        assert!(e.to_string().contains("--signature") && e.to_string().contains("signature="), "{e}");
        let ok = f.entry_with_type("sum", "(memref<?xf32>) -> f32".parse().unwrap()).unwrap();
        assert_eq!(ok.symbol, "_mlir_ciface_sum");
        let e = f.entry_with_type("sum", "(memref<?xf32>, f32) -> f32".parse().unwrap()).unwrap_err();
        assert!(e.contains("contradicts") && e.contains("@_mlir_ciface_sum(ptr, f32) -> f32"), "{e}");
        let e = f.entry_with_type("sum", "(memref<?xf32>) -> memref<?xf32>".parse().unwrap()).unwrap_err();
        assert!(e.contains("(ptr, ptr) -> void"), "{e}");
        let e = f.entry("nope").unwrap_err();
        assert!(matches!(&e, MlirError::NotFound(m) if m.contains("callable: sum, main, axpy")), "{e:?}");
    }

    #[test]
    fn llvm_ir_headers() {
        let ir = "define { ptr, ptr, i64 } @f(ptr %0, i64 %1) {\n}\n\
                  define void @_mlir_ciface_f(ptr %0, ptr %1) {\n}\n\
                  define dso_local noundef i32 @main() local_unnamed_addr #0 {\n}\n\
                  define internal double @g(double %x) {\n}\n\
                  define float @scale(float noundef %0, i32 %1) {\n}\n\
                  declare ptr @malloc(i64)\n";
        let f = LlvmFunctions::scan(ir);
        assert_eq!(f.functions.len(), 6);
        assert_eq!(f.functions[0].result, Some(LlvmType::Other("{…}".into())));
        assert_eq!(f.callable(), ["f", "main", "scale"]);
        assert_eq!(f.entry("scale").unwrap().ty, "(f32, i32) -> f32".parse().unwrap());
        assert_eq!(f.entry("main").unwrap().ty, "() -> i32".parse().unwrap());
        assert!(f.entry_with_type("f", "(memref<?xf32>) -> memref<?xf32>".parse().unwrap()).is_ok());
    }

    #[test]
    fn quoted_names_are_read_with_their_escapes() {
        // LLVM IR writes a non-identifier byte as `\XX` (`"` too); the LLVM
        // dialect as MLIR strings do. Parentheses inside the quotes are the
        // name's.
        let ir = "define float @\"add-one\"(float %a) {\n}\n\
                  define float @\"h\\C3\\A9 (x)\\22\\\\\"(float %a) {\n}\n";
        let f = LlvmFunctions::scan(ir);
        assert_eq!(f.callable(), ["add-one", "hé (x)\"\\"]);
        assert_eq!(f.entry("hé (x)\"\\").unwrap().ty, "(f32) -> f32".parse().unwrap());
        let dialect = "llvm.func @\"a\\\"b\\n\"(%arg0: f64) -> f64 {\n}\n";
        assert_eq!(LlvmFunctions::scan(dialect).callable(), ["a\"b\n"]);
        // Not closed, or an unknown escape: no function.
        assert!(LlvmFunctions::scan("define float @\"open(float %a) {\n}\n").functions.is_empty());
        assert!(LlvmFunctions::scan("define float @\"a\\q\"(float %a) {\n}\n").functions.is_empty());
    }
}
