//! `fnabi run`: call one function of a compiled module with inputs from the
//! command line, and print (or save) its results.
//!
//! The flags follow `iree-run-module` where it has one: `--module=FILE`
//! (`-` for stdin), `--function=NAME`, `--input=VALUE` repeated (IREE's
//! text form `2x3xf32=1 2 3 4 5 6`, `42`, `@FILE.npy`, raw binary
//! `4xf32=@FILE` and `4xf32=+FILE` for the bytes after the previous input's
//! from that file), `--output=SPEC` per result leaf (`-` prints, empty
//! ignores, `@FILE` writes, `+FILE` appends; `.npy` files in numpy's
//! format, others the raw bytes) and `--output-max-element-count=N` (long
//! arrays print elided as IREE elides them). Structured arguments come in
//! one JSON file (`--inputs`): see [`fnabi::inputs::arguments_from_json`]
//! (the forms of both are read by [`fnabi::inputs`]). Results print one line
//! per leaf in IREE's text form (prefixed with their index path when the
//! result is structured), or as JSON (`--output json`), and `--npy-dir DIR`
//! also saves every array.

use crate::CliError;
use clap::Args;
use fnabi::coerce::InputType;
use fnabi::inputs::{self, HostFiles};
use fnabi::mlir::{CompileOptions, MlirModule};
use fnabi::structure::{IndexPath, PathKey};
use fnabi::{Array, Dict, Function, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct RunArgs {
    /// The module: `.mlir` source at any level, tensor to LLVM dialect
    /// (compiled and cached), LLVM IR (`.ll`, `.bc`), a shared library of
    /// MLIR-compiled code (`.so`), or an IREE module (`.vmfb`; known by its
    /// bytes under any name).
    #[arg(value_name = "MODULE")]
    module: Option<PathBuf>,
    /// The module, as `iree-run-module` takes it (`-` reads it from stdin).
    #[arg(long = "module", value_name = "FILE", conflicts_with = "module", allow_hyphen_values = true)]
    module_flag: Option<PathBuf>,
    /// The function to call (optional when the module has exactly one; of
    /// a pair `F` and `F$async`, `F`): its name, or its symbol as `fnabi
    /// inspect` lists it (`@F`, `@"add-one"`).
    #[arg(long, short = 'f')]
    function: Option<String>,
    /// A positional argument: IREE text form (`2x3xf32=1 2 3 4 5 6`,
    /// `2x2xi32=[1 2][3 4]`, `42`, `1.5`, `i8=-3`), `@FILE.npy` (its
    /// first array; `+FILE.npy` its next, `*FILE.npy` all the following
    /// ones), raw bytes `4xf32=@FILE` (`4xf32=+FILE`: the bytes after the
    /// previous input's from FILE), or `(null)`. Repeat for each argument.
    #[arg(long, short = 'i', conflicts_with = "inputs", allow_hyphen_values = true)]
    input: Vec<String>,
    /// All arguments as one JSON file (`-` for stdin): a list is the
    /// positional arguments, an object the keyword arguments, and
    /// `{"$args": [...], "$kwargs": {...}}` both. Arrays are nested lists
    /// typed by the signature, `{"dtype": "f32", "shape": [2, 2], "data":
    /// [1, 2, 3, 4]}`, or `"@FILE.npy"` anywhere.
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// Memory-map input files (`@FILE.npy`, raw `@FILE`, `--inputs`)
    /// instead of reading them: a `.npy` array in native byte order is
    /// then passed without a copy, its pages loaded as the function
    /// touches them. The files must not change while fnabi runs (a file
    /// truncated meanwhile ends the process with SIGBUS, as with numpy's
    /// `mmap_mode`).
    #[arg(long)]
    mmap_inputs: bool,
    /// The function's signature, where the module does not record its type
    /// (a `.so` without its `.mlir` source; an LLVM-level function that takes
    /// pointers): an MLIR function type (`(memref<?xf32>, f32) ->
    /// memref<?xf32>`) or a mangled raw signature (`I10!B4!d-1S1!R7!B4!d-1`).
    /// A known type is checked against it.
    #[arg(long)]
    signature: Option<String>,
    /// How to print the results: `text` (IREE's text form, the default) or
    /// `json`; or, repeated once per result leaf as `iree-run-module` takes
    /// it: `-` prints it, an empty SPEC ignores it, `@FILE` writes it and
    /// `+FILE` appends it (`.npy`: numpy's format; else the raw bytes).
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    output: Vec<String>,
    /// Print at most N elements of each array, eliding the rest (`...`);
    /// files written by `--output=@FILE` and `--npy-dir` always get all.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1024,
        visible_alias = "print-max-element-count",
        alias = "output_max_element_count",
        alias = "print_max_element_count"
    )]
    output_max_element_count: usize,
    /// Also save every result array as `DIR/<path>.npy`.
    #[arg(long, value_name = "DIR")]
    npy_dir: Option<PathBuf>,
    /// Compile a `.mlir` module without MLIR's runtime op verification
    /// (which otherwise stops a call that would access out of bounds or
    /// with mismatched shapes, with an error naming the line).
    #[arg(long)]
    no_runtime_verification: bool,
    /// Your own pass pipeline (`builtin.module(…)`, as `mlir-opt
    /// --pass-pipeline` takes it) in place of fnabi's high-level passes;
    /// fnabi's conversions to the LLVM dialect still follow it.
    #[arg(long, value_name = "PIPELINE")]
    pipeline: Option<String>,
    /// An option on a pass of fnabi's pipeline, `PASS:OPTION=VALUE` (e.g.
    /// `one-shot-bufferize:unknown-type-conversion=identity-layout-map`;
    /// repeat for more); `--print-pipeline`
    /// shows the result.
    #[arg(long = "pass-option", value_name = "PASS:OPTION=VALUE", value_parser = crate::pass_option)]
    pass_option: Vec<(String, String)>,
    /// Print the commands that compile the module (on stderr), then run it.
    #[arg(long)]
    print_pipeline: bool,
    /// The backend that runs `.mlir` source: `mlir` (fnabi's pipeline
    /// through MLIR's tools, the default) or `iree` (IREE's compiler
    /// `iree-compile`, `pip install iree-base-compiler==3.13.0`, and
    /// runtime), to cross-check the two on the same inputs. A `.so` runs
    /// on `mlir`, a `.vmfb` on `iree`.
    #[arg(long, value_enum, value_name = "BACKEND")]
    backend: Option<Backend>,
    /// One more flag for `iree-compile` (with `--backend iree`), after
    /// fnabi's (`--iree-llvmcpu-target-cpu=generic`, …). Repeat for each.
    #[arg(long, value_name = "FLAG", allow_hyphen_values = true)]
    iree_compile_flag: Vec<String>,
    /// The IREE device that runs a `.vmfb` module (or `.mlir` with
    /// `--backend iree`): `local-sync` (the default) or `local-task`.
    #[arg(long)]
    device: Option<String>,
    /// Runtime errors in full (IREE's VM stack trace) rather than one line.
    #[arg(long, short = 'v')]
    verbose: bool,
}

impl RunArgs {
    /// The IREE device: `--device`, else `local-sync`.
    fn device(&self) -> &str {
        self.device.as_deref().unwrap_or("local-sync")
    }
}

/// `--backend`: which of fnabi's backends runs a `.mlir` source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Backend {
    /// fnabi's pipeline through MLIR's tools, then native code.
    Mlir,
    /// IREE's compiler and runtime.
    Iree,
}

/// What kind of module some bytes hold: by extension, then by magic bytes.
#[derive(Debug, PartialEq, Eq)]
enum ModuleKind {
    Mlir,
    SharedLibrary,
    Vmfb,
}

fn module_kind(path: Option<&Path>, head: &[u8]) -> ModuleKind {
    match path.and_then(|p| p.extension()).and_then(|e| e.to_str()) {
        Some("mlir") => return ModuleKind::Mlir,
        Some("vmfb") => return ModuleKind::Vmfb,
        Some("so") => return ModuleKind::SharedLibrary,
        _ => {}
    }
    match head {
        _ if fnabi::elf::looks_like_elf(head) => ModuleKind::SharedLibrary,
        _ if fnabi::vmfb::looks_like_vmfb(head) => ModuleKind::Vmfb,
        _ => ModuleKind::Mlir,
    }
}

/// Where the module comes from.
enum ModuleSource {
    File(PathBuf),
    /// `--module=-`: its bytes, read from stdin.
    Stdin(Vec<u8>),
}

impl ModuleSource {
    fn label(&self) -> String {
        match self {
            ModuleSource::File(p) => p.display().to_string(),
            ModuleSource::Stdin(_) => "<stdin>".into(),
        }
    }
}

fn module_source(args: &RunArgs) -> Result<ModuleSource, CliError> {
    let path = match (&args.module, &args.module_flag) {
        (Some(p), _) | (None, Some(p)) => p,
        (None, None) => return Err(CliError("no module: give its path, or --module=FILE (- for stdin)".into())),
    };
    if path != Path::new("-") {
        return Ok(ModuleSource::File(path.clone()));
    }
    if args.inputs.as_deref() == Some(Path::new("-")) {
        return Err(CliError("the module and --inputs cannot both come from stdin".into()));
    }
    let mut bytes = Vec::new();
    crate::read_stdin(&mut bytes).map_err(|e| CliError(format!("cannot read the module from stdin: {e}")))?;
    Ok(ModuleSource::Stdin(bytes))
}

/// How many leading bytes tell a module's kind: the most any of the magic
/// tests reads (a bare `.vmfb`'s identifier ends at byte 12).
const MODULE_HEAD: usize = fnabi::vmfb::MAGIC_BYTES;

/// Loads the function to call.
fn load_function(args: &RunArgs, source: &ModuleSource) -> Result<Function, CliError> {
    let head: Vec<u8> = match source {
        ModuleSource::File(path) => {
            let mut head = Vec::with_capacity(MODULE_HEAD);
            std::fs::File::open(path)
                .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, MODULE_HEAD as u64), &mut head))
                .map_err(|e| CliError(format!("cannot read {}: {e}", path.display())))?;
            head
        }
        ModuleSource::Stdin(bytes) => bytes.iter().take(MODULE_HEAD).copied().collect(),
    };
    let path = match source {
        ModuleSource::File(p) => Some(p.as_path()),
        ModuleSource::Stdin(_) => None,
    };
    let label = source.label();
    let kind = module_kind(path, &head);
    let on_iree_from_source = args.backend == Some(Backend::Iree) && kind == ModuleKind::Mlir;
    if !args.iree_compile_flag.is_empty() && !on_iree_from_source {
        return Err(CliError("--iree-compile-flag applies to MLIR source run with --backend iree".into()));
    }
    // Options of the other backend are refused, not ignored.
    let on_iree = on_iree_from_source || kind == ModuleKind::Vmfb;
    if args.device.is_some() && !on_iree {
        return Err(CliError(format!(
            "--device applies to IREE modules (.vmfb, or MLIR source with --backend iree); {label} runs on the MLIR backend, on this CPU"
        )));
    }
    if kind == ModuleKind::Vmfb && (args.pipeline.is_some() || !args.pass_option.is_empty() || args.signature.is_some())
    {
        return Err(CliError(format!(
            "--pipeline, --pass-option and --signature apply to MLIR source and libraries; {label} is an IREE module (compiled, typed by its reflection)"
        )));
    }
    match (args.backend, &kind) {
        (Some(Backend::Mlir), ModuleKind::Vmfb) => {
            return Err(CliError(format!(
                "{label} is an IREE module: it runs on the IREE runtime, not --backend mlir"
            )));
        }
        (Some(Backend::Iree), ModuleKind::SharedLibrary) => {
            return Err(CliError(format!(
                "{label} is a shared library: it runs on the MLIR backend (--backend iree compiles MLIR source)"
            )));
        }
        (Some(Backend::Iree), ModuleKind::Mlir) => return load_mlir_on_iree(args, source),
        (_, ModuleKind::Vmfb) => return load_vmfb(args, source),
        _ => {}
    }
    let mut options = CompileOptions::default().with_runtime_verification(!args.no_runtime_verification);
    if let Some(p) = &args.pipeline {
        options = options.with_pipeline(p.clone());
    }
    for (pass, option) in &args.pass_option {
        options = options.with_pass_option(pass, option);
    }
    if args.print_pipeline {
        print_pipeline(source, path, kind == ModuleKind::SharedLibrary, &options)?;
    }
    let module = match source {
        // SAFETY: running a module's code is what `fnabi run` is for;
        // the user vouches for the module and its signature. (A module
        // that needs an external function nobody provides is refused
        // here, naming it, before anything runs.)
        ModuleSource::File(p) => unsafe { MlirModule::load_with(p, &options) }?,
        ModuleSource::Stdin(_) if kind == ModuleKind::SharedLibrary => {
            return Err(CliError("a shared library cannot be read from stdin: give its path".into()));
        }
        // SAFETY: as above.
        ModuleSource::Stdin(bytes) => unsafe { MlirModule::compile_named("<stdin>", bytes, &options) }?,
    };
    let externals = module.library().externals();
    if !externals.is_empty() {
        eprintln!("fnabi: {label} externals: {externals}");
    }
    let name = match &args.function {
        Some(f) => named_function(f)?,
        None => {
            let names = module.function_names()?;
            match names.as_slice() {
                [one] => one.clone(),
                [] => return Err(CliError(format!("{label} defines no public function to call"))),
                _ => {
                    return Err(CliError(format!(
                        "{label} has {} functions ({}): choose one with --function",
                        names.len(),
                        names.join(", ")
                    )));
                }
            }
        }
    };
    match (&args.signature, kind) {
        (Some(sig), _) => Ok(module.function_with_signature(&name, sig)?),
        (None, ModuleKind::SharedLibrary) if module.library().declarations().is_empty() => {
            Err(CliError(format!("{label} has no MLIR source: give @{name}'s type with --signature")))
        }
        (None, _) => Ok(module.function(&name)?),
    }
}

/// `--print-pipeline`: the commands that compile the module, on stderr.
fn print_pipeline(
    source: &ModuleSource,
    path: Option<&Path>,
    library: bool,
    options: &CompileOptions,
) -> Result<(), CliError> {
    if library {
        eprintln!("fnabi: pipeline: none (a shared library is loaded as it is)");
        return Ok(());
    }
    let bytes = match source {
        ModuleSource::File(p) => std::fs::read(p).map_err(|e| CliError(format!("cannot read {}: {e}", p.display())))?,
        ModuleSource::Stdin(b) => b.clone(),
    };
    let ext = path.and_then(|p| p.extension()).and_then(|e| e.to_str());
    let level = fnabi::mlir::InputLevel::detect(ext, &bytes);
    let compiler = fnabi::mlir::Compiler::new()?;
    let options = match path {
        Some(p) => options.clone().with_source_path(p),
        None => options.clone(),
    };
    eprintln!("fnabi: pipeline for {level}:");
    for line in compiler.describe_pipeline(&String::from_utf8_lossy(&bytes), level, &options) {
        eprintln!("  {line}");
    }
    Ok(())
}

/// The function to run when none is named: the one export that is not
/// internal (`__init`, …); of a pair `F` and `F$async` (IREE's async
/// variant of a sync function), `F`.
#[cfg_attr(not(feature = "iree"), allow(dead_code))]
pub fn default_export(names: &[String]) -> Option<&str> {
    let user: Vec<&str> = names.iter().map(String::as_str).filter(|n| !n.starts_with("__")).collect();
    let plain: Vec<&str> =
        user.iter().copied().filter(|n| !n.strip_suffix("$async").is_some_and(|f| user.contains(&f))).collect();
    match plain.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

#[cfg(feature = "iree")]
fn load_vmfb(args: &RunArgs, source: &ModuleSource) -> Result<Function, CliError> {
    let label = source.label();
    let bytes = match source {
        ModuleSource::File(p) => crate::read_file(p).map_err(|e| CliError(format!("cannot read {label}: {e}")))?,
        ModuleSource::Stdin(b) => b.clone(),
    };
    let module =
        crate::run_iree::load(&bytes, &label, args.device()).map_err(|e| crate::runtime_report(e, args.verbose))?;
    iree_function(args, &module, &label)
}

/// `--backend iree`: MLIR source compiled by `iree-compile` (cached), run
/// in the IREE runtime.
#[cfg(feature = "iree")]
fn load_mlir_on_iree(args: &RunArgs, source: &ModuleSource) -> Result<Function, CliError> {
    if args.pipeline.is_some() || args.signature.is_some() || !args.pass_option.is_empty() {
        return Err(CliError(
            "--pipeline, --pass-option and --signature apply to the MLIR backend; --backend iree compiles with iree-compile \
             (its flags: --iree-compile-flag)"
                .into(),
        ));
    }
    let label = source.label();
    let (bytes, path) = match source {
        ModuleSource::File(p) => {
            (crate::read_file(p).map_err(|e| CliError(format!("cannot read {label}: {e}")))?, p.as_path())
        }
        ModuleSource::Stdin(b) => (b.clone(), Path::new("<stdin>")),
    };
    let request = crate::run_iree::CompileRequest {
        source: &bytes,
        path,
        flags: &args.iree_compile_flag,
        device: args.device(),
        print_command: args.print_pipeline,
    };
    let module = crate::run_iree::compile(&request).map_err(CliError)?;
    iree_function(args, &module, &label)
}

#[cfg(not(feature = "iree"))]
fn load_mlir_on_iree(_args: &RunArgs, _source: &ModuleSource) -> Result<Function, CliError> {
    Err(CliError("--backend iree: this fnabi was built without the `iree` feature".into()))
}

/// The name `--function` gives: as written, or as MLIR writes the symbol
/// (`@f`, `@"add-one"`: what `fnabi inspect` lists).
fn named_function(arg: &str) -> Result<String, CliError> {
    fnabi::mlir::symbol::function_name(arg).ok_or_else(|| {
        CliError(format!(
            "--function {arg}: a quoted name is `@\"NAME\"`, with MLIR's escapes (`\\\"`, `\\\\`, `\\XX`)"
        ))
    })
}

/// The function `--function` names of an IREE module, else its one export.
#[cfg(feature = "iree")]
fn iree_function(args: &RunArgs, module: &fnabi_iree::IreeModule, label: &str) -> Result<Function, CliError> {
    let name = match &args.function {
        Some(f) => named_function(f)?,
        None => {
            let names = crate::run_iree::export_names(module);
            match default_export(&names) {
                Some(one) => one.to_owned(),
                None => {
                    let user: Vec<_> = names.iter().filter(|n| !n.starts_with("__")).cloned().collect();
                    if user.is_empty() {
                        return Err(CliError(format!("{label} exports no function to call")));
                    }
                    return Err(CliError(format!(
                        "{label} exports {} functions ({}): choose one with --function",
                        user.len(),
                        user.join(", ")
                    )));
                }
            }
        }
    };
    crate::run_iree::function(module, label, &name).map_err(CliError)
}

#[cfg(not(feature = "iree"))]
fn load_vmfb(_args: &RunArgs, source: &ModuleSource) -> Result<Function, CliError> {
    Err(CliError(format!("{} is an IREE module, but this fnabi was built without the `iree` feature", source.label())))
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

/// The element type of a scalar result leaf at `path`, when the
/// function's signature says (see [`Function::result_type`]).
fn scalar_dtype(result_type: Option<&InputType>, path: &IndexPath) -> Option<fnabi::DType> {
    match result_type?.at(path.keys())? {
        InputType::Array { dtype, dims: Some(dims) } if dims.is_empty() => Some(*dtype),
        _ => None,
    }
}

/// One leaf in IREE's text form, arrays elided after `max` elements; a
/// float scalar as the shortest decimal of its element type (`dtype`, when
/// known: an `f32` result's `0.1`, not the `f64` it is held in).
fn leaf_text(v: &Value<'_>, max: usize, dtype: Option<fnabi::DType>) -> String {
    match v {
        Value::Array(a) => fnabi::text::format_array_elided(a, max),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => match dtype {
            Some(fnabi::DType::Scalar(s)) if s.is_float() => fnabi::text::format_float(*f, s),
            _ => fnabi::text::format_float(*f, fnabi::ScalarType::F64),
        },
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

/// A result leaf as an array: arrays as they are, scalars as 0-d arrays
/// of their element type (`dtype`, when known; else `i64`, `f64`, `bool`);
/// `None` for leaves that are no numbers (strings, `None`, bytes).
fn leaf_array<'v>(v: &'v Value<'v>, dtype: Option<fnabi::DType>) -> Option<std::borrow::Cow<'v, Array<'v>>> {
    use std::borrow::Cow;
    if let (Some(dtype), Value::Int(_) | Value::Float(_) | Value::Bool(_)) = (dtype, v) {
        let ty = InputType::Array { dtype, dims: Some(Vec::new()) };
        if let Ok(Value::Array(a)) = fnabi::coerce::coerce_argument(v.clone(), &ty, PathKey::Index(0)) {
            return Some(Cow::Owned(*a));
        }
    }
    Some(match v {
        Value::Array(a) => Cow::Borrowed(&**a),
        Value::Int(i) => Cow::Owned(Array::scalar(*i)),
        Value::Float(f) => Cow::Owned(Array::scalar(*f)),
        Value::Bool(b) => Cow::Owned(Array::scalar(*b)),
        _ => return None,
    })
}

fn save_npy(
    dir: &Path,
    results: &[(IndexPath, &Value<'_>)],
    result_type: Option<&InputType>,
) -> Result<Vec<PathBuf>, CliError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError(format!("--npy-dir {}: cannot create it: {e}", dir.display())))?;
    let mut written = Vec::new();
    for (path, v) in results {
        let Some(a) = leaf_array(v, scalar_dtype(result_type, path)) else { continue };
        let file = dir.join(format!("{}.npy", npy_name(path)));
        fnabi::npy::save(&file, &a).map_err(|e| CliError(format!("cannot write {}: {e}", file.display())))?;
        written.push(file);
    }
    Ok(written)
}

/// Writes one result leaf to `file` (`append`: at its end): `.npy` files
/// in numpy's format, others as the raw bytes in C order.
fn write_leaf(
    path: &IndexPath,
    v: &Value<'_>,
    dtype: Option<fnabi::DType>,
    file: &Path,
    append: bool,
) -> Result<(), CliError> {
    let which = if path.0.is_empty() { "the result".to_owned() } else { format!("result {path}") };
    let cannot = |e: String| CliError(format!("cannot write {which} to {}: {e}", file.display()));
    let a = leaf_array(v, dtype).ok_or_else(|| cannot(format!("it is a {}, not an array or a number", v.kind())))?;
    let bytes = if file.extension().is_some_and(|e| e == "npy") {
        fnabi::npy::to_bytes(&a).map_err(|e| cannot(e.to_string()))?
    } else {
        let dense = a.to_contiguous().map_err(|e| cannot(e.to_string()))?;
        dense.as_bytes().map(<[u8]>::to_vec).unwrap_or_default()
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(file)
        .map_err(|e| cannot(e.to_string()))?;
    f.write_all(&bytes).map_err(|e| cannot(e.to_string()))
}

/// What `--output` asks for.
enum OutputPlan {
    /// Every leaf to stdout, as text or JSON.
    Print { json: bool },
    /// One spec per result leaf, as `iree-run-module` takes them.
    PerLeaf(Vec<String>),
}

fn output_plan(specs: &[String]) -> Result<OutputPlan, CliError> {
    match specs {
        [] => Ok(OutputPlan::Print { json: false }),
        [one] if one == "text" => Ok(OutputPlan::Print { json: false }),
        [one] if one == "json" => Ok(OutputPlan::Print { json: true }),
        specs => {
            for s in specs {
                if !(s.is_empty() || s == "-" || s.starts_with('@') || s.starts_with('+')) {
                    return Err(CliError(format!(
                        "--output {s:?}: expected text or json (once), or per result: - (print), empty (ignore), @FILE (write), +FILE (append)"
                    )));
                }
                if matches!(s.as_str(), "@" | "+" | "+@") {
                    return Err(CliError(format!("--output {s:?}: the file name is missing ({s}FILE)")));
                }
            }
            Ok(OutputPlan::PerLeaf(specs.to_vec()))
        }
    }
}

/// The bytes of the arrays in an input value (for the limit per call).
fn input_bytes(v: &Value<'_>) -> u128 {
    match v {
        Value::Array(a) => a.nbytes() as u128,
        Value::Bytes(b) => b.len() as u128,
        Value::Str(t) => t.len() as u128,
        Value::List(items) | Value::Tuple(items) => items.iter().map(input_bytes).sum(),
        Value::Dict(d) => d.iter().map(|(_, v)| input_bytes(v)).sum(),
        _ => 0,
    }
}

/// Plain lists and bare numbers become the arrays the signature expects.
fn coerced(
    pos: Vec<Value<'static>>,
    kw: Dict<'static>,
    params: Option<&[fnabi::coerce::InputParam]>,
) -> Result<(Vec<Value<'static>>, Dict<'static>), CliError> {
    Ok(match params {
        Some(params) => fnabi::coerce::coerce_arguments(pos, kw, params)?,
        None => (pos, kw),
    })
}

pub fn run(args: RunArgs) -> Result<ExitCode, CliError> {
    let plan = output_plan(&args.output)?;
    // Before anything runs: a file where the results' folder should be.
    if let Some(dir) = &args.npy_dir
        && dir.exists()
        && !dir.is_dir()
    {
        return Err(CliError(format!("--npy-dir {}: not a folder", dir.display())));
    }
    let source = module_source(&args)?;
    let function = load_function(&args, &source)?;
    // SAFETY: `--mmap-inputs` is the user's promise that the input files
    // stay unchanged while fnabi runs (its documented contract).
    let mapped = args.mmap_inputs.then(|| unsafe { inputs::MappedHostFiles::new() });
    let files: &dyn inputs::InputFileSystem = match &mapped {
        Some(m) => m,
        None => &HostFiles,
    };
    let params = function.input_params();
    // A JSON file's arrays for array parameters are read straight into
    // arrays when they can be (no value per element); else the general
    // path reads the file and types the arguments.
    let from_json = |bytes: &[u8], label: &str| -> Result<(Vec<Value<'static>>, Dict<'static>), CliError> {
        if let Some(typed) = params.as_deref().and_then(|p| inputs::typed_arguments_from_json(bytes, files, p)) {
            return Ok(typed);
        }
        let (pos, kw) = inputs::arguments_from_json(bytes, label, files)?;
        coerced(pos, kw, params.as_deref())
    };
    let (pos, kw) = match &args.inputs {
        Some(path) if path == Path::new("-") => {
            let mut bytes = Vec::new();
            crate::read_stdin(&mut bytes).map_err(|e| CliError(format!("cannot read stdin: {e}")))?;
            from_json(&bytes, "-")?
        }
        Some(path) => from_json(inputs::read_file(path, files)?.as_bytes(), &path.display().to_string())?,
        None => coerced(inputs::read_inputs(&args.input, files)?, Dict::new(), params.as_deref())?,
    };
    let total: u128 = pos.iter().chain(kw.iter().map(|(_, v)| v)).map(input_bytes).sum();
    fnabi::limits::check_bytes(fnabi::limits::ByteLimit::Call, total, || "the call (its inputs)".into())?;
    let result = function.call_kw(pos, kw).map_err(|e| crate::run_error(e, args.verbose))?;
    let mut all = Vec::new();
    leaves(&result, &mut Vec::new(), &mut all);
    let structured = !matches!(&all[..], [(p, _)] if p.keys().is_empty());
    let max = args.output_max_element_count;
    let result_type = function.result_type();
    let result_type = result_type.as_ref();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut print = |path: &IndexPath, v: &Value<'_>| -> Result<(), CliError> {
        let text = leaf_text(v, max, scalar_dtype(result_type, path));
        if structured {
            writeln!(out, "{path}: {text}").map_err(CliError::output)
        } else {
            writeln!(out, "{text}").map_err(CliError::output)
        }
    };
    match plan {
        OutputPlan::Print { json: true } => {
            writeln!(std::io::stdout().lock(), "{}", fnabi::json::to_string(&result)).map_err(CliError::output)?
        }
        // A function without results prints nothing.
        OutputPlan::Print { json: false } if matches!(result, Value::None) => {}
        OutputPlan::Print { json: false } => {
            for (path, v) in &all {
                print(path, v)?;
            }
        }
        OutputPlan::PerLeaf(specs) => {
            if specs.len() != all.len() {
                let leaves = match all.len() {
                    1 => "1 leaf".to_owned(),
                    n => format!("{n} leaves"),
                };
                return Err(CliError(format!("{} --output(s) given, but the result has {leaves}", specs.len())));
            }
            for (spec, (path, v)) in specs.iter().zip(&all) {
                match spec.as_str() {
                    "" => {}
                    "-" => print(path, v)?,
                    s => {
                        let (append, file) = match s.strip_prefix('+') {
                            // `+@FILE` appends too (IREE writes `+FILE`).
                            Some(f) => (true, f.strip_prefix('@').unwrap_or(f)),
                            None => (false, &s[1..]),
                        };
                        write_leaf(path, v, scalar_dtype(result_type, path), Path::new(file), append)?;
                    }
                }
            }
        }
    }
    if let Some(dir) = &args.npy_dir {
        for file in save_npy(dir, &all, result_type)? {
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

    #[test]
    fn sync_exports_are_preferred_to_their_async_twins() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(default_export(&names(&["main", "main$async", "__init"])), Some("main"));
        assert_eq!(default_export(&names(&["main$async", "__init"])), Some("main$async"));
        assert_eq!(default_export(&names(&["a", "b"])), None);
        assert_eq!(default_export(&names(&["a", "a$async", "b", "b$async"])), None);
    }
}
