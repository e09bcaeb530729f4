//! `fnabi run`: call one function of a compiled module with inputs from the
//! command line, and print (or save) its results.
//!
//! Inputs are positional `--input` values in IREE's text form
//! (`2x3xf32=1 2 3 4 5 6`, `42`, `1.5`) or `@file.npy`, or one structured
//! `--inputs FILE.json` (a JSON list is the positional arguments, an
//! object the keyword arguments). Results print one line per leaf in IREE's
//! text form (prefixed with their index path when the result is structured),
//! or as JSON (`--output json`), and `--npy-dir DIR` also saves every array.

use crate::CliError;
use clap::{Args, ValueEnum};
use fnabi::mlir::{CompileOptions, MlirModule};
use fnabi::structure::{IndexPath, PathKey};
use fnabi::{Array, Function, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct RunArgs {
    /// The module: `.mlir` source (compiled and cached), a shared library
    /// of MLIR-compiled code (`.so`), or an IREE module (`.vmfb`).
    module: PathBuf,
    /// The function to call (optional when the module has exactly one).
    #[arg(long, short = 'f')]
    function: Option<String>,
    /// A positional argument: IREE text form (`2x3xf32=1 2 3 4 5 6`,
    /// `2x2xi32=[1 2][3 4]`, `42`, `1.5`, `i8=-3`) or `@FILE.npy`. Repeat
    /// for each argument.
    #[arg(long, short = 'i', conflicts_with = "inputs", allow_hyphen_values = true)]
    input: Vec<String>,
    /// All arguments as one JSON file (`-` for stdin): a list is the
    /// positional arguments, an object the keyword arguments. Arrays are
    /// `{"dtype": "f32", "shape": [2, 2], "data": [1, 2, 3, 4]}`.
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// The function's signature, for a `.so` without its `.mlir` source: an
    /// MLIR function type (`(memref<?xf32>, f32) -> memref<?xf32>`) or a
    /// mangled raw signature (`I10!B4!d-1S1!R7!B4!d-1`).
    #[arg(long)]
    signature: Option<String>,
    /// How to print the results.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// Also save every result array as `DIR/<path>.npy`.
    #[arg(long, value_name = "DIR")]
    npy_dir: Option<PathBuf>,
    /// Compile a `.mlir` module without MLIR's runtime op verification
    /// (which otherwise reports out-of-bounds accesses and mismatched
    /// shapes, and aborts, instead of corrupting memory).
    #[arg(long)]
    no_runtime_verification: bool,
    /// The IREE device that runs a `.vmfb` module.
    #[arg(long, default_value = "local-sync")]
    device: String,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    /// One line per result leaf in IREE's text form.
    Text,
    /// The results as one JSON value.
    Json,
}

/// What kind of module a path holds: by extension, then by magic bytes.
#[derive(Debug, PartialEq, Eq)]
enum ModuleKind {
    Mlir,
    SharedLibrary,
    Vmfb,
}

fn module_kind(path: &Path) -> Result<ModuleKind, CliError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("mlir") => return Ok(ModuleKind::Mlir),
        Some("vmfb") => return Ok(ModuleKind::Vmfb),
        Some("so") => return Ok(ModuleKind::SharedLibrary),
        _ => {}
    }
    let mut head = [0u8; 8];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
    match &head[..n] {
        [0x7f, b'E', b'L', b'F', ..] => Ok(ModuleKind::SharedLibrary),
        [b'P', b'K', 3, 4, ..] => Ok(ModuleKind::Vmfb),
        [_, _, _, _, b'I', b'R', b'E', b'E'] => Ok(ModuleKind::Vmfb),
        _ => Ok(ModuleKind::Mlir),
    }
}

/// Loads the function to call.
fn load_function(args: &RunArgs) -> Result<Function, CliError> {
    match module_kind(&args.module)? {
        ModuleKind::Vmfb => load_vmfb(args),
        kind => {
            // SAFETY: running a module's code is what `fnabi run` is for;
            // the user vouches for the module and its signature. (A module
            // that needs an external function nobody provides is refused
            // here, naming it, before anything runs.)
            let options = CompileOptions::default().with_runtime_verification(!args.no_runtime_verification);
            let module = unsafe { MlirModule::load_with(&args.module, &options) }?;
            let externals = module.library().externals();
            if !externals.is_empty() {
                eprintln!("fnabi: {} externals: {externals}", args.module.display());
            }
            let name = match &args.function {
                Some(f) => f.clone(),
                None => {
                    let names = module.function_names()?;
                    match names.as_slice() {
                        [one] => one.clone(),
                        _ => {
                            return Err(CliError(format!(
                                "{} has {} functions ({}): choose one with --function",
                                args.module.display(),
                                names.len(),
                                names.join(", ")
                            )));
                        }
                    }
                }
            };
            match (&args.signature, kind) {
                (Some(sig), _) => Ok(module.function_with_signature(&name, sig)?),
                (None, ModuleKind::SharedLibrary) => Err(CliError(format!(
                    "{} has no MLIR source: give @{name}'s type with --signature",
                    args.module.display()
                ))),
                (None, _) => Ok(module.function(&name)?),
            }
        }
    }
}

#[cfg(feature = "iree")]
fn load_vmfb(args: &RunArgs) -> Result<Function, CliError> {
    let name = match &args.function {
        Some(f) => f.clone(),
        None => {
            let names = crate::run_iree::export_names(&args.module).map_err(CliError)?;
            let user: Vec<_> = names.into_iter().filter(|n| !n.starts_with("__")).collect();
            match user.as_slice() {
                [one] => one.clone(),
                _ => {
                    return Err(CliError(format!(
                        "{} exports {} functions ({}): choose one with --function",
                        args.module.display(),
                        user.len(),
                        user.join(", ")
                    )));
                }
            }
        }
    };
    crate::run_iree::load_function(&args.module, &name, &args.device).map_err(CliError)
}

#[cfg(not(feature = "iree"))]
fn load_vmfb(args: &RunArgs) -> Result<Function, CliError> {
    Err(CliError(format!(
        "{} is an IREE module, but this fnabi was built without the `iree` feature",
        args.module.display()
    )))
}

/// Reads one `--input`: `@FILE.npy` or IREE's text form.
fn parse_input(i: usize, text: &str) -> Result<Value<'static>, CliError> {
    if let Some(path) = text.strip_prefix('@') {
        let a = fnabi::npy::read_file(path).map_err(|e| CliError(format!("--input {i} ({path}): {e}")))?;
        return Ok(Value::from(a));
    }
    fnabi::text::parse_value(text).map_err(|e| CliError(format!("--input {i} {text:?} {e}")))
}

fn read_inputs(path: &Path) -> Result<Value<'static>, CliError> {
    let bytes = if path == Path::new("-") {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)?;
        v
    } else {
        std::fs::read(path).map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?
    };
    fnabi::json::from_slice(&bytes).map_err(|e| CliError(format!("{}: {e}", path.display())))
}

/// The leaves of a result value with their index paths (containers are
/// walked; arrays, scalars, strings and `None` are leaves).
fn leaves<'v>(v: &'v Value<'v>, path: &mut Vec<PathKey>, out: &mut Vec<(IndexPath, &'v Value<'v>)>) {
    match v {
        Value::List(items) | Value::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathKey::Index(i));
                leaves(item, path, out);
                path.pop();
            }
        }
        Value::Dict(d) => {
            for (k, item) in d.iter() {
                path.push(PathKey::Name(k.clone()));
                leaves(item, path, out);
                path.pop();
            }
        }
        leaf => out.push((IndexPath(path.clone()), leaf)),
    }
}

/// One leaf in IREE's text form.
fn leaf_text(v: &Value<'_>) -> String {
    match v {
        Value::Array(a) => fnabi::text::format_array(a),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => fnabi::text::format_g(*f),
        Value::Bool(b) => b.to_string(),
        Value::None => "None".into(),
        other => fnabi::json::to_string(other),
    }
}

/// A file name for a result leaf: `result` for the whole result, else the
/// index path's keys joined by `.` (`0`, `sum`, `1.x`).
fn npy_name(path: &IndexPath) -> String {
    if path.keys().is_empty() {
        return "result".into();
    }
    let parts: Vec<String> = path
        .keys()
        .iter()
        .map(|k| match k {
            PathKey::Index(i) => i.to_string(),
            PathKey::Name(n) => {
                n.chars().map(|c| if c.is_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
            }
        })
        .collect();
    parts.join(".")
}

fn save_npy(dir: &Path, results: &[(IndexPath, &Value<'_>)]) -> Result<Vec<PathBuf>, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError(format!("cannot create {}: {e}", dir.display())))?;
    let mut written = Vec::new();
    for (path, v) in results {
        let scalar;
        let a: &Array<'_> = match v {
            Value::Array(a) => a,
            Value::Int(i) => {
                scalar = Array::scalar(*i);
                &scalar
            }
            Value::Float(f) => {
                scalar = Array::scalar(*f);
                &scalar
            }
            Value::Bool(b) => {
                scalar = Array::scalar(*b);
                &scalar
            }
            _ => continue,
        };
        let file = dir.join(format!("{}.npy", npy_name(path)));
        fnabi::npy::save(&file, a).map_err(|e| CliError(format!("cannot write {}: {e}", file.display())))?;
        written.push(file);
    }
    Ok(written)
}

pub fn run(args: RunArgs) -> Result<ExitCode, CliError> {
    let function = load_function(&args)?;
    let result = match &args.inputs {
        Some(path) => function.call_value(read_inputs(path)?)?,
        None => {
            let values =
                args.input.iter().enumerate().map(|(i, t)| parse_input(i, t)).collect::<Result<Vec<_>, _>>()?;
            function.call(values)?
        }
    };
    let mut all = Vec::new();
    leaves(&result, &mut Vec::new(), &mut all);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.output {
        Output::Json => writeln!(out, "{}", fnabi::json::to_string(&result))?,
        // A function without results prints nothing.
        Output::Text if matches!(result, Value::None) => {}
        Output::Text => {
            let structured = !matches!(&all[..], [(p, _)] if p.keys().is_empty());
            for (path, v) in &all {
                if structured {
                    writeln!(out, "{path}: {}", leaf_text(v))?;
                } else {
                    writeln!(out, "{}", leaf_text(v))?;
                }
            }
        }
    }
    if let Some(dir) = &args.npy_dir {
        for file in save_npy(dir, &all)? {
            eprintln!("fnabi: wrote {}", file.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_names() {
        assert_eq!(npy_name(&IndexPath::root()), "result");
        let p = IndexPath(vec![PathKey::Index(1), PathKey::Name("x/y".into())]);
        assert_eq!(npy_name(&p), "1.x_y");
    }
}
