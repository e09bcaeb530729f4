//! Self-describing libraries: the ABI of every exported function (its
//! MLIR function type and its raw `fv`/`f`, `fbr` and `sip` attributes)
//! embedded in the library `fnabi compile` writes, and read back from the
//! file without loading it.
//!
//! The ABI is MLIR header text, one `func.func` per exported function with
//! the types the library is called by (tensors already bufferized to
//! memrefs) and an empty body:
//!
//! ```text
//! // fnabi ABI v1
//! func.func @f(%a0: memref<?xf32>, %a1: f32) -> (memref<?xf32>) attributes {sip = "…"} {
//! }
//! ```
//!
//! It is a NUL-terminated C string in its own ELF section
//! ([`ABI_SECTION`]), under the exported data symbol [`ABI_SYMBOL`] (for
//! `dlsym` after a load). fnabi reads it with its ELF reader
//! ([`crate::elf::ElfFile::section`]) and the `func.func` header parser:
//! bytes from the file, never from the loaded image, so reading it runs
//! none of the library's code.

use crate::elf::ElfFile;
use crate::symbol::{mlir_string, symbol_ref};
use fnabi_abi::mlir::signature::{AttrValue, FuncDecl, Visibility};
use fnabi_core::error::Error;

/// The ELF section that holds the ABI text.
pub const ABI_SECTION: &str = ".fnabi_abi";
/// The exported symbol of the ABI text (a `const char[]`).
pub const ABI_SYMBOL: &str = "fnabi_abi_v1";
/// The first line of the ABI text.
const ABI_HEADER: &str = "// fnabi ABI v1";
/// The ABI attribute keys that are embedded.
const KEYS: [&str; 7] = ["abi", "abiv", "fv", "f", "fbr", "sipv", "sip"];

/// The ABI text of the public functions with a body among `decls`.
pub fn abi_text(decls: &[FuncDecl]) -> String {
    let mut out = format!("{ABI_HEADER}\n");
    for d in decls.iter().filter(|d| d.has_body && d.visibility == Visibility::Public) {
        // A function with vectors keeps its vector types, so that a loader
        // of the library knows to call it through the wrapper compiled in
        // (see `crate::vector_entry`).
        let (inputs, results): (Vec<String>, Vec<String>) = match &d.vector_entry {
            Some(e) => (e.input_types.clone(), e.result_types.clone()),
            None => (
                d.ty.inputs.iter().map(ToString::to_string).collect(),
                d.ty.results.iter().map(ToString::to_string).collect(),
            ),
        };
        let args: Vec<String> = inputs.iter().enumerate().map(|(i, t)| format!("%a{i}: {t}")).collect();
        let reflection = match d.attribute("iree.reflection") {
            Some(AttrValue::Dict(r)) => r.as_slice(),
            _ => &[],
        };
        let mut attrs: Vec<String> = Vec::new();
        for key in KEYS {
            let value = d.attributes.iter().chain(reflection).find(|(k, _)| k == key).and_then(|(_, v)| match v {
                AttrValue::Str(s) => Some(s.clone()),
                AttrValue::Int(i) => Some(i.to_string()),
                _ => None,
            });
            if let Some(v) = value {
                attrs.push(format!("{key} = {}", mlir_string(&v)));
            }
        }
        let attrs = if attrs.is_empty() { String::new() } else { format!(" attributes {{{}}}", attrs.join(", ")) };
        out.push_str(&format!(
            "func.func {}({}) -> ({}){attrs} {{\n}}\n",
            symbol_ref(&d.name),
            args.join(", "),
            results.join(", ")
        ));
    }
    out
}

/// C source that defines the ABI text as [`ABI_SYMBOL`] in [`ABI_SECTION`].
pub fn abi_glue(text: &str) -> String {
    let mut lit = String::new();
    for b in text.bytes() {
        match b {
            b'"' => lit.push_str("\\\""),
            b'\\' => lit.push_str("\\\\"),
            b'\n' => lit.push_str("\\n\"\n\""),
            b' '..=b'~' => lit.push(b as char),
            b => lit.push_str(&format!("\\{b:03o}")),
        }
    }
    format!(
        "\n__attribute__((section(\"{ABI_SECTION}\"), used, visibility(\"default\")))\nconst char {ABI_SYMBOL}[] = \"{lit}\";\n"
    )
}

/// The embedded ABI text of the shared library `bytes`, if it has one.
pub fn read_abi_text(bytes: &[u8]) -> Result<Option<String>, Error> {
    let elf = ElfFile::parse(bytes)?;
    let Some(data) = elf.section(ABI_SECTION)? else { return Ok(None) };
    let end = data
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| Error::invalid_argument(format!("the {ABI_SECTION} section is not a NUL-terminated string")))?;
    let text = std::str::from_utf8(&data[..end])
        .map_err(|e| Error::invalid_argument(format!("the {ABI_SECTION} section is not UTF-8: {e}")))?;
    if !text.starts_with(ABI_HEADER) {
        return Err(Error::invalid_argument(format!(
            "the {ABI_SECTION} section is not an ABI this fnabi reads (it does not start with {ABI_HEADER:?})"
        )));
    }
    Ok(Some(text.to_owned()))
}

/// The embedded ABI of the shared library `bytes` as function headers
/// (`None` without one).
pub fn read_abi(bytes: &[u8]) -> Result<Option<Vec<FuncDecl>>, Error> {
    match read_abi_text(bytes)? {
        Some(text) => Ok(Some(fnabi_abi::mlir::signature::scan_functions(&text)?.decls)),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fnabi_abi::mlir::signature::parse_functions;

    #[test]
    fn abi_text_round_trips_through_the_header_parser() {
        let src = r#"func.func @f(%x: memref<?xf32>, %s: f32) -> memref<?xf32> attributes {fv = 1, f = "I1!R1!", sipv = 1, sip = "I8!S5!k0_0R3!_0"} {
  return %x : memref<?xf32>
}
func.func private @hidden() {
  return
}
func.func @g(%x: memref<2x?xi64, strided<[?, 1], offset: ?>>) -> (index, f64) attributes {iree.reflection = {fv = 1, f = "I1!R1!", fbr = "alloc"}} {
  return
}
"#;
        let decls = parse_functions(src).unwrap();
        let text = abi_text(&decls);
        let back = parse_functions(&text).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].name, "f");
        assert_eq!(back[0].ty, decls[0].ty);
        assert!(back[0].has_body);
        assert_eq!(back[0].abi_attributes().unwrap(), decls[0].abi_attributes().unwrap());
        assert_eq!(back[1].ty, decls[2].ty);
        assert_eq!(back[1].abi_attributes().unwrap().result_allocator(), Some("alloc"));
        let glue = abi_glue("a\"b\\c\nd\u{e9}");
        assert!(glue.contains(r#""a\"b\\c\n""#) && glue.contains(r#""d\303\251""#), "{glue}");
    }
}
