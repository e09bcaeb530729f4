//! `fnabi inspect` for MLIR-compiled code: `.mlir` sources (the
//! `func.func` headers, their types, raw and SIP signatures, and the other
//! attributes) and shared libraries (the `_mlir_ciface_` functions they
//! export and the functions they need from elsewhere).

use crate::CliError;
use fnabi::mlir::symbol::symbol_ref;
use fnabi::mlir::{AttrValue, FuncDecl, InputLevel, LlvmFunctions, Visibility, scan_functions};
use fnabi::sip::reference_text;
use serde_json::{Value as Json, json};
use std::fmt::Write as _;
use std::path::Path;

const ABI_KEYS: [&str; 7] = ["abi", "abiv", "fv", "f", "fbr", "sipv", "sip"];

fn attr_text(v: &AttrValue) -> String {
    match v {
        AttrValue::Unit => String::new(),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Dict(d) => {
            let items: Vec<String> = d.iter().map(|(k, v)| attr_pair(k, v)).collect();
            format!("{{{}}}", items.join(", "))
        }
        AttrValue::Other(s) => s.clone(),
    }
}

fn attr_pair(k: &str, v: &AttrValue) -> String {
    match v {
        AttrValue::Unit => k.to_owned(),
        v => format!("{k} = {}", attr_text(v)),
    }
}

/// What one function header says about its ABI, each piece checked.
struct FuncAbi {
    raw: Result<fnabi::RawSignature, String>,
    raw_from_attr: bool,
    sip: Result<Option<fnabi::SipSignature>, String>,
    fbr: Option<String>,
}

fn func_abi(d: &FuncDecl) -> FuncAbi {
    match d.abi_attributes() {
        Err(e) => FuncAbi { raw: Err(e.to_string()), raw_from_attr: false, sip: Ok(None), fbr: None },
        Ok(a) => {
            let (raw, raw_from_attr) = match a.raw_signature() {
                Ok(Some(r)) => (Ok(r), true),
                Ok(None) => (Ok(d.ty.to_raw()), false),
                Err(e) => (Err(e.to_string()), true),
            };
            FuncAbi {
                raw,
                raw_from_attr,
                sip: a.sip_signature().map_err(|e| e.to_string()),
                fbr: a.result_allocator().map(str::to_owned),
            }
        }
    }
}

fn other_attrs(d: &FuncDecl) -> Vec<String> {
    d.attributes.iter().filter(|(k, _)| !ABI_KEYS.contains(&k.as_str())).map(|(k, v)| attr_pair(k, v)).collect()
}

fn kind_word(d: &FuncDecl) -> &'static str {
    match (d.has_body, d.visibility) {
        (false, _) => "external",
        (true, Visibility::Public) => "public",
        (true, Visibility::Private) => "private",
        (true, Visibility::Nested) => "nested",
    }
}

/// The text report of an `.mlir` file.
pub fn mlir_text(path: &Path, decls: &[FuncDecl]) -> String {
    let mut s = String::new();
    let defined = decls.iter().filter(|d| d.has_body).count();
    let _ = writeln!(
        s,
        "{}: MLIR source, {defined} function(s) defined, {} external declaration(s)",
        path.display(),
        decls.len() - defined
    );
    for d in decls {
        let _ = writeln!(s, "  {} {}{}  (line {})", kind_word(d), symbol_ref(&d.name), d.ty, d.line);
        if let Some(e) = &d.vector_entry {
            let _ = writeln!(
                s,
                "    vectors as arrays (fnabi's wrapper): ({}) -> ({})",
                e.input_types.join(", "),
                e.result_types.join(", ")
            );
        }
        let abi = func_abi(d);
        match &abi.raw {
            Ok(r) if abi.raw_from_attr => {
                let _ = writeln!(s, "    raw (f): {r}");
            }
            Ok(r) => {
                let _ = writeln!(s, "    raw (from the MLIR types): {r}");
            }
            Err(e) => {
                let _ = writeln!(s, "    ABI attributes: error: {e}");
            }
        }
        match &abi.sip {
            Ok(Some(sip)) => {
                let _ = writeln!(s, "    sip: {sip}");
            }
            Ok(None) => {}
            Err(e) => {
                let _ = writeln!(s, "    sip: error: {e}");
            }
        }
        if let Some(f) = &abi.fbr {
            let _ = writeln!(s, "    result allocator (fbr): @{f}");
        }
        let others = other_attrs(d);
        if !others.is_empty() {
            let _ = writeln!(s, "    attributes: {}", others.join(", "));
        }
    }
    s
}

/// The JSON report of an `.mlir` file.
pub fn mlir_json(path: &Path, decls: &[FuncDecl]) -> Json {
    let functions: Vec<Json> = decls
        .iter()
        .map(|d| {
            let abi = func_abi(d);
            let sip = match &abi.sip {
                Ok(Some(sip)) => json!({
                    "display": sip.to_string(),
                    "mangled": sip.to_mangled(),
                    "inputs_reference": reference_text(sip.inputs()),
                    "results_reference": reference_text(sip.results()),
                }),
                Ok(None) => Json::Null,
                Err(e) => json!({"error": e}),
            };
            json!({
                "name": d.name,
                "kind": kind_word(d),
                "line": d.line,
                "type": d.ty.to_string(),
                "raw": match &abi.raw {
                    Ok(r) => json!({"display": r.to_string(), "mangled": r.to_mangled(), "from": if abi.raw_from_attr { "f" } else { "types" }}),
                    Err(e) => json!({"error": e}),
                },
                "sip": sip,
                "vector_types": d.vector_entry.as_ref().map(|e| json!({"inputs": e.input_types, "results": e.result_types})),
                "fbr": abi.fbr,
                "attributes": other_attrs(d),
            })
        })
        .collect();
    json!({"file": path.display().to_string(), "kind": "mlir", "functions": functions})
}

/// Inspects an LLVM-level module (LLVM-dialect MLIR, LLVM IR, bitcode):
/// the functions a host can call and the type each is called by.
fn inspect_llvm(path: &Path, bytes: &[u8], level: InputLevel, as_json: bool) -> Result<String, CliError> {
    let shown = path.display();
    let text = match level {
        InputLevel::Bitcode => fnabi::mlir::Compiler::new()?.disassemble_bitcode(bytes)?,
        _ => String::from_utf8_lossy(bytes).into_owned(),
    };
    let functions = LlvmFunctions::scan(&text);
    let callable = functions.callable();
    let entries: Vec<(String, Result<fnabi::mlir::llvm_level::LlvmEntry, String>)> =
        callable.iter().map(|n| (n.clone(), functions.entry(n).map_err(|e| e.to_string()))).collect();
    if as_json {
        let items: Vec<Json> = entries
            .iter()
            .map(|(n, e)| match e {
                Ok(e) => json!({"name": n, "symbol": e.symbol, "type": e.ty.to_string()}),
                Err(why) => json!({"name": n, "type": Json::Null, "needs_signature": why}),
            })
            .collect();
        return Ok(format!(
            "{:#}\n",
            json!({"file": shown.to_string(), "kind": level.to_string(), "functions": items})
        ));
    }
    let mut s = String::new();
    let _ = writeln!(s, "{shown}: {level}, {} callable function(s)", callable.len());
    for (n, e) in &entries {
        match e {
            Ok(e) => {
                let _ = writeln!(s, "  @{n}{}  (called as @{})", e.ty, e.symbol);
            }
            Err(why) => {
                let _ = writeln!(s, "  @{n}: {why}");
            }
        }
    }
    Ok(s)
}

/// Inspects an `.mlir` file (or an LLVM-level module).
pub fn inspect_mlir(path: &Path, bytes: &[u8], as_json: bool) -> Result<String, CliError> {
    let level = InputLevel::detect(path.extension().and_then(|e| e.to_str()), bytes);
    if level != InputLevel::Mlir {
        return inspect_llvm(path, bytes, level, as_json);
    }
    let shown = path.display();
    let text = std::str::from_utf8(bytes).map_err(|e| CliError(format!("{shown}: not UTF-8 text: {e}")))?;
    // As `run` reads it: a function fnabi cannot call is listed with why.
    let scanned = scan_functions(text).map_err(|e| CliError(format!("{shown}: {e}")))?;
    if as_json {
        let mut j = mlir_json(path, &scanned.decls);
        j["skipped"] = scanned.skipped.iter().map(|(name, e)| json!({"name": name, "reason": e.to_string()})).collect();
        return Ok(format!("{j:#}\n"));
    }
    let mut s = mlir_text(path, &scanned.decls);
    for (name, e) in &scanned.skipped {
        let _ = writeln!(s, "  not callable @{name}: {e}");
    }
    Ok(s)
}

/// Inspects a shared library: the MLIR functions it exports and the
/// functions it needs.
pub fn inspect_library(path: &Path, bytes: &[u8], as_json: bool) -> Result<String, CliError> {
    let shown = path.display();
    let elf = fnabi::elf::ElfFile::parse(bytes).map_err(|e| CliError(format!("{shown}: {e}")))?;
    let exported = elf.mlir_functions().map_err(|e| CliError(format!("{shown}: {e}")))?;
    let needed = elf.undefined_functions().map_err(|e| CliError(format!("{shown}: {e}")))?;
    let mlir_needed: Vec<&str> = needed.iter().filter_map(|n| n.strip_prefix("_mlir_ciface_")).collect();
    // A library `fnabi compile` wrote describes its functions itself.
    let embedded = fnabi::mlir::abi_embed::read_abi_text(bytes).map_err(|e| CliError(format!("{shown}: {e}")))?;
    if let Some(text) = embedded {
        let decls = scan_functions(&text).map_err(|e| CliError(format!("{shown}: its embedded ABI: {e}")))?.decls;
        if as_json {
            let mut j = mlir_json(path, &decls);
            j["kind"] = json!("shared_library");
            j["abi"] = json!("embedded");
            j["undefined_symbols"] = json!(needed);
            return Ok(format!("{j:#}\n"));
        }
        let mut s =
            format!("{shown}: shared library with an embedded ABI (fnabi compile), {} function(s)\n", decls.len());
        for line in mlir_text(path, &decls).lines().skip(1) {
            // The embedded headers have no source lines worth showing.
            let line = line.rsplit_once("  (line ").map_or(line, |(l, _)| l);
            s.push_str(line);
            s.push('\n');
        }
        return Ok(s);
    }
    if as_json {
        return Ok(format!(
            "{:#}\n",
            json!({
                "file": shown.to_string(),
                "kind": "shared_library",
                "mlir_functions": exported,
                "external_mlir_functions": mlir_needed,
                "undefined_symbols": needed,
            })
        ));
    }
    let mut s = String::new();
    let _ = writeln!(s, "{shown}: shared library, {} MLIR function(s) (_mlir_ciface_ wrappers)", exported.len());
    for f in &exported {
        let _ = writeln!(s, "  @{f}");
    }
    if !mlir_needed.is_empty() {
        let _ = writeln!(s, "external MLIR functions it calls ({}):", mlir_needed.len());
        for f in &mlir_needed {
            let _ = writeln!(s, "  @{f}");
        }
    }
    let _ = writeln!(s, "other undefined symbols: {}", needed.len() - mlir_needed.len());
    Ok(s)
}
