//! `fnabi inspect FILE`: what a compiled module declares. Dispatches on
//! the file's kind (by content, then by extension): IREE `.vmfb` modules
//! here; MLIR sources and shared libraries in [`crate::inspect_native`].

use crate::CliError;
use clap::Args;
use fnabi::reflection::FunctionReflection;
use fnabi::vmfb::{Container, Module, Signature};
use serde_json::{Map, Value as Json, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct InspectArgs {
    /// The module file: an IREE `.vmfb`, an MLIR source `.mlir`, or a shared
    /// library of MLIR-compiled code `.so`; `-` reads it from stdin (MLIR
    /// text unless its bytes say otherwise).
    #[arg(allow_hyphen_values = true)]
    file: PathBuf,
    /// Print a JSON description instead of text.
    #[arg(long)]
    json: bool,
}

/// The kinds of files `inspect` tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// An IREE bytecode module.
    Vmfb,
    /// MLIR source text.
    Mlir,
    /// An ELF shared library (MLIR compiled to native code).
    SharedLibrary,
}

/// The kind of `bytes` read from `path`: content first (ZIP/IREE magic,
/// ELF magic, LLVM bitcode magic), then the extension.
pub fn detect(path: &Path, bytes: &[u8]) -> Option<FileKind> {
    if fnabi::vmfb::looks_like_vmfb(bytes) {
        return Some(FileKind::Vmfb);
    }
    if fnabi::elf::looks_like_elf(bytes) {
        return Some(FileKind::SharedLibrary);
    }
    if fnabi::mlir::InputLevel::looks_like_bitcode(bytes) {
        return Some(FileKind::Mlir);
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("vmfb") => Some(FileKind::Vmfb),
        Some("mlir" | "ll" | "bc") => Some(FileKind::Mlir),
        Some("so") => Some(FileKind::SharedLibrary),
        _ => None,
    }
}

pub fn inspect(mut args: InspectArgs) -> Result<ExitCode, CliError> {
    let stdin = args.file.as_os_str() == "-";
    let bytes = if stdin {
        let mut bytes = Vec::new();
        crate::read_stdin(&mut bytes).map_err(|e| CliError(format!("cannot read the module from stdin: {e}")))?;
        args.file = PathBuf::from("<stdin>");
        bytes
    } else {
        crate::read_file(&args.file).map_err(|e| CliError(format!("cannot read {}: {e}", args.file.display())))?
    };
    let shown = args.file.display();
    let kind = detect(&args.file, &bytes).or(stdin.then_some(FileKind::Mlir));
    match kind {
        Some(FileKind::Vmfb) => {
            let m = Module::parse(&bytes).map_err(|e| CliError(format!("{shown}: {e}")))?;
            if args.json {
                crate::outln!("{}", serde_json::to_string_pretty(&vmfb_json(&args.file, &m)).map_err(CliError::from)?);
            } else {
                crate::out!("{}", vmfb_text(&args.file, &m));
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(FileKind::Mlir) => {
            crate::out!("{}", crate::inspect_native::inspect_mlir(&args.file, &bytes, args.json)?);
            Ok(ExitCode::SUCCESS)
        }
        Some(FileKind::SharedLibrary) => {
            crate::out!("{}", crate::inspect_native::inspect_library(&args.file, &bytes, args.json)?);
            Ok(ExitCode::SUCCESS)
        }
        None => Err(CliError(format!(
            "{shown}: cannot tell what kind of file this is (expected an IREE .vmfb, MLIR .mlir, LLVM IR .ll or .bc, or a shared library .so)"
        ))),
    }
}

/// `17.0` for the bytecode version word (major in the high 16 bits).
fn bytecode_version(v: u32) -> String {
    format!("{}.{}", v >> 16, v & 0xffff)
}

fn container_text(m: &Module<'_>) -> String {
    match m.container {
        Container::Zip { entry } => format!("ZIP entry {entry:?}"),
        Container::Bare => "bare".into(),
    }
}

/// The readable form of an `iree.abi` value, or why it does not parse.
fn abi_readable(raw: &str) -> Result<String, String> {
    FunctionReflection::parse(raw).map(|f| f.to_string()).map_err(|e| e.to_string())
}

fn is_shown_apart(key: &str) -> bool {
    key == "iree.abi" || key == "iree.abi.declaration"
}

/// The text report.
pub fn vmfb_text(path: &Path, m: &Module<'_>) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: IREE module {:?} version {} (bytecode {}, {} bytes of FlatBuffer at byte {}, {})",
        path.display(),
        m.name,
        m.version,
        bytecode_version(m.bytecode_version),
        m.flatbuffer_len,
        m.flatbuffer_offset,
        container_text(m)
    );
    for (k, v) in &m.attrs {
        let _ = writeln!(s, "  {k} = {v}");
    }
    let _ = writeln!(s, "exports ({}):", m.exports.len());
    for e in &m.exports {
        let _ = writeln!(s, "  {}  {}", e.name, e.signature.calling_convention.unwrap_or("(no calling convention)"));
        signature_text(&mut s, &e.signature);
    }
    let _ = writeln!(s, "imports ({}):", m.imports.len());
    for i in &m.imports {
        let cc = i.signature.as_ref().and_then(|s| s.calling_convention).unwrap_or("?");
        let opt = if i.is_optional() { "  (optional)" } else { "" };
        let _ = writeln!(s, "  {}  {cc}{opt}", i.full_name);
    }
    if !m.dependencies.is_empty() {
        let _ = writeln!(s, "dependencies ({}):", m.dependencies.len());
        for d in &m.dependencies {
            let opt = if d.is_optional() { "  (optional)" } else { "" };
            let _ = writeln!(s, "  {} >= {}{opt}", d.name, d.minimum_version);
        }
    }
    s
}

fn signature_text(s: &mut String, sig: &Signature<'_>) {
    if let Some(raw) = sig.attr("iree.abi") {
        match abi_readable(raw) {
            Ok(r) => {
                let _ = writeln!(s, "    iree.abi: {r}");
            }
            Err(e) => {
                let _ = writeln!(s, "    iree.abi: invalid ({e}): {raw}");
            }
        }
    }
    if let Some(d) = sig.attr("iree.abi.declaration") {
        let _ = writeln!(s, "    declaration: {d}");
    }
    for (k, v) in sig.attrs.iter().filter(|(k, _)| !is_shown_apart(k)) {
        let _ = writeln!(s, "    {k} = {v}");
    }
}

fn attrs_json<'a>(attrs: impl Iterator<Item = &'a (&'a str, &'a str)>) -> Json {
    let mut m = Map::new();
    for (k, v) in attrs {
        m.insert((*k).to_owned(), Json::String((*v).to_owned()));
    }
    Json::Object(m)
}

fn signature_json(sig: &Signature<'_>) -> Json {
    let abi = sig.attr("iree.abi").map(|raw| match abi_readable(raw) {
        Ok(r) => json!({"raw": raw, "readable": r}),
        Err(e) => json!({"raw": raw, "error": e}),
    });
    let declaration = sig.attr("iree.abi.declaration").map(|raw| match sig.declaration() {
        Some(Err(e)) => json!({"raw": raw, "error": e.to_string()}),
        _ => json!({"raw": raw}),
    });
    json!({
        "cconv": sig.calling_convention,
        "iree_abi": abi,
        "declaration": declaration,
        "attrs": attrs_json(sig.attrs.iter().filter(|(k, _)| !is_shown_apart(k))),
    })
}

/// The JSON report.
pub fn vmfb_json(path: &Path, m: &Module<'_>) -> Json {
    let (container, entry) = match m.container {
        Container::Zip { entry } => ("zip", Some(entry)),
        Container::Bare => ("bare", None),
    };
    let exports: Vec<Json> = m
        .exports
        .iter()
        .map(|e| {
            let mut j = signature_json(&e.signature);
            if let Json::Object(o) = &mut j {
                o.insert("name".into(), json!(e.name));
                o.insert("internal_ordinal".into(), json!(e.internal_ordinal));
            }
            j
        })
        .collect();
    let imports: Vec<Json> = m
        .imports
        .iter()
        .map(|i| {
            json!({
                "name": i.full_name,
                "cconv": i.signature.as_ref().and_then(|s| s.calling_convention),
                "optional": i.is_optional(),
            })
        })
        .collect();
    let deps: Vec<Json> = m
        .dependencies
        .iter()
        .map(|d| json!({"name": d.name, "minimum_version": d.minimum_version, "optional": d.is_optional()}))
        .collect();
    json!({
        "file": path.display().to_string(),
        "kind": "vmfb",
        "module": {
            "name": m.name,
            "version": m.version,
            "bytecode_version": bytecode_version(m.bytecode_version),
            "container": container,
            "zip_entry": entry,
            "flatbuffer_offset": m.flatbuffer_offset,
            "flatbuffer_len": m.flatbuffer_len,
            "attrs": attrs_json(m.attrs.iter()),
        },
        "exports": exports,
        "imports": imports,
        "dependencies": deps,
    })
}
