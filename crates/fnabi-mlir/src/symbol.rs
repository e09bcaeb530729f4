//! MLIR symbol names as text: written as MLIR prints them (`@f`, `@"add-one"`) and read back, escapes included.

use fnabi_abi::mlir::signature::read_string_literal;

/// Writes `s` as an MLIR string literal: `"` and `\` escaped, control
/// characters as `\XX` bytes, the rest (UTF-8 included) as it is.
pub(crate) fn mlir_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if !c.is_control() => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\{b:02X}"));
                }
            }
        }
    }
    out.push('"');
    out
}

/// `@name` as MLIR text: bare when `name` is an MLIR bare identifier
/// (`(letter|_)(letter|digit|[_$.])*`), else quoted and escaped
/// (`@"add-one"`), as MLIR prints symbols.
///
/// ```
/// use fnabi_mlir::symbol::symbol_ref;
/// assert_eq!(symbol_ref("main"), "@main");
/// assert_eq!(symbol_ref("add-one"), "@\"add-one\"");
/// assert_eq!(symbol_ref("3d"), "@\"3d\"");
/// assert_eq!(symbol_ref("a\"b\nc ü"), r#"@"a\"b\0Ac ü""#);
/// ```
pub fn symbol_ref(name: &str) -> String {
    if is_bare_identifier(name) { format!("@{name}") } else { format!("@{}", mlir_string(name)) }
}

/// Whether `name` is an MLIR bare identifier,
/// `(letter|_)(letter|digit|[_$.])*`: written without quotes, and usable as
/// an assembler symbol as it is.
pub(crate) fn is_bare_identifier(name: &str) -> bool {
    name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.'))
}

/// The name a function is given by on a command line: `NAME` as it is,
/// or as [`symbol_ref`] writes it (`@NAME`, `@"NAME"` with escapes), so a
/// name copied from `fnabi inspect` or MLIR text works. `None` for an
/// unterminated or badly escaped quoted form.
///
/// ```
/// use fnabi_mlir::symbol::{function_name, symbol_ref};
/// assert_eq!(function_name("main").as_deref(), Some("main"));
/// assert_eq!(function_name("@main").as_deref(), Some("main"));
/// assert_eq!(function_name(r#"@"add-one""#).as_deref(), Some("add-one"));
/// let odd = "a\"b\nc ü";
/// assert_eq!(function_name(&symbol_ref(odd)).as_deref(), Some(odd));
/// assert_eq!(function_name(r#"@"open"#), None);
/// ```
pub fn function_name(arg: &str) -> Option<String> {
    let Some(symbol) = arg.strip_prefix('@') else { return Some(arg.to_owned()) };
    match symbol.strip_prefix('"') {
        Some(quoted) => match quoted_name(quoted) {
            Some((name, len)) if len == quoted.len() => Some(name),
            _ => None,
        },
        None => Some(symbol.to_owned()),
    }
}

/// A quoted symbol name after its opening `"`, and the length of the text
/// it took up to and including the closing `"` (MLIR's and LLVM IR's
/// escapes, see [`read_string_literal`]). `None` when the quote is not
/// closed, an escape is unknown or the bytes are no UTF-8.
pub(crate) fn quoted_name(s: &str) -> Option<(String, usize)> {
    read_string_literal(s.as_bytes(), false).ok()
}
