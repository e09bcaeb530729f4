//! Compiling `.mlir` text to a shared library with Debian's MLIR/LLVM
//! command-line tools (version 22, else 19), cached by content hash.
//!
//! The pipeline (verified with MLIR 22.1.8 and 19.1.7):
//!
//! ```text
//! mlir-opt-N input.mlir  [PIPELINE passes]      -> lowered.mlir   (LLVM dialect)
//! mlir-translate-N --mlir-to-llvmir             -> module.ll
//! opt-N -O2 -mtriple=HOST                       -> module.bc      (the triple is required:
//!                                                                   without it i64 fields of
//!                                                                   result structs misalign)
//! llc-N -O2 -mtriple=HOST --relocation-model=pic -filetype=obj -> module.o
//! cc -shared                                    -> lib.so
//! ```
//!
//! `--llvm-request-c-wrappers` gives every function a `_mlir_ciface_`
//! wrapper, with or without `llvm.emit_c_interface` (external declarations
//! included: the module calls them as `_mlir_ciface_<name>`). The result
//! depends only on libc, unless [`LinkInputs`] add fnabi's C glue for the
//! module's external functions (`cc -O2 -fPIC -c`) and MLIR's runtime
//! libraries (linked `--as-needed`, with an rpath), see
//! [`crate::externals`].
//!
//! Results are cached in `$FNABI_CACHE_DIR`, else `$XDG_CACHE_HOME/fnabi`,
//! else `~/.cache/fnabi`, under a 128-bit hash of the source, the pipeline,
//! the tool version and the target; the exact key text is stored beside the
//! library and compared on every hit, so a hash collision recompiles rather
//! than loads the wrong code. Each compile works in its own temporary
//! directory and publishes with an atomic rename, so concurrent processes
//! (parallel test binaries) are safe.

use crate::MlirError;
use crate::llvm_level::InputLevel;
use crate::tiling::{TILING_SCHEDULE, TILING_SCHEDULE_FILE};
use crate::tool::run_capture;
use fnabi_core::error::Error;
use fnabi_core::progress::Progress;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The MLIR/LLVM versions fnabi uses, preferred first.
pub const VERSIONS: [u32; 2] = [22, 19];

/// The `mlir-opt` passes of the default pipeline, in order: elementwise
/// arith/math ops on tensors become linalg, tensor-level code is bufferized (function boundaries included, with identity layouts
/// there so that arguments and results are plain memrefs; no deallocation
/// pipeline: results are returned to the caller, who frees them), matrix
/// products are tiled (see [`crate::tiling`]), linalg
/// becomes loops, affine, vector, math, complex, ub and async are lowered,
/// then memref/arith/index/cf/func are finalized to the LLVM dialect.
/// [`front_passes`] adds what a module asks for in front of it (a
/// transform-dialect schedule, runtime verification).
pub const PIPELINE: [&str; 30] = [
    "--llvm-request-c-wrappers",
    "--convert-elementwise-to-linalg",
    "--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map",
    "--convert-bufferization-to-memref",
    "--transform-preload-library=transform-library-paths=tile-contractions.mlir",
    "--transform-interpreter=entry-point=__transform_main",
    "--convert-linalg-to-loops",
    "--async-to-async-runtime",
    "--async-runtime-ref-counting",
    "--async-runtime-ref-counting-opt",
    "--convert-vector-to-scf",
    "--lower-affine",
    "--arith-expand=include-bf16 include-f8e8m0 include-f4e2m1",
    "--convert-complex-to-standard",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-scf-to-cf",
    "--expand-strided-metadata",
    "--lower-affine",
    "--convert-async-to-llvm",
    "--convert-vector-to-llvm",
    "--convert-ub-to-llvm",
    "--convert-complex-to-llvm",
    "--finalize-memref-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-index-to-llvm",
    "--convert-cf-to-llvm",
    "--convert-func-to-llvm",
    "--convert-to-llvm",
    "--reconcile-unrealized-casts",
];

/// True for the passes of [`PIPELINE`] that apply fnabi's tiling schedule
/// (the preload of [`TILING_SCHEDULE_FILE`] and the interpreter after it).
fn is_tiling_pass(p: &str) -> bool {
    p.ends_with(TILING_SCHEDULE_FILE) || p == "--transform-interpreter=entry-point=__transform_main"
}

/// The passes whose options `--pass-option` may set: those of
/// [`PIPELINE`] and [`front_passes`], without their `--` and options.
///
/// ```
/// use fnabi_mlir::compile::pass_names;
/// let names = pass_names();
/// assert!(names.contains(&"one-shot-bufferize") && names.contains(&"generate-runtime-verification"));
/// assert!(names.windows(2).all(|w| w[0] < w[1])); // sorted, each once
/// ```
pub fn pass_names() -> Vec<&'static str> {
    let front =
        ["--transform-interpreter", "--test-transform-dialect-erase-schedule", "--generate-runtime-verification"];
    let mut names: Vec<&str> = PIPELINE
        .iter()
        .chain(front.iter())
        .map(|p| p.trim_start_matches("--").split('=').next().unwrap_or(p))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// `Ok` when every pass option names a pass of fnabi's pipeline and is one
/// `OPTION[=VALUE]` word; else what is wrong, with the passes there are.
///
/// ```
/// use fnabi_mlir::compile::check_pass_options;
/// use fnabi_mlir::CompileOptions;
/// let ok = CompileOptions::default().with_pass_option("one-shot-bufferize", "unknown-type-conversion=identity-layout-map");
/// assert!(check_pass_options(&ok).is_ok());
/// let unknown = CompileOptions::default().with_pass_option("no-such-pass", "x=1");
/// assert!(check_pass_options(&unknown).is_err());
/// let spaced = CompileOptions::default().with_pass_option("one-shot-bufferize", "a=1 b=2");
/// assert!(check_pass_options(&spaced).is_err()); // one word per option
/// ```
pub fn check_pass_options(options: &CompileOptions) -> Result<(), Error> {
    let names = pass_names();
    for (pass, option) in &options.pass_options {
        if !names.contains(&pass.as_str()) {
            return Err(Error::invalid_argument(format!(
                "--pass-option {pass}:{option}: {pass:?} is not a pass of fnabi's pipeline (its passes: {})",
                names.join(", ")
            )));
        }
        let flag = format!("--{pass}");
        let in_lowering = lowering().iter().any(|p| *p == flag || p.starts_with(&format!("{flag}=")));
        if options.pipeline.is_some() && !in_lowering {
            return Err(Error::invalid_argument(format!(
                "--pass-option {pass}:{option}: with your own --pipeline, only the passes of fnabi's lowering \
                 (from --convert-scf-to-cf on) run; set {pass}'s options in your pipeline"
            )));
        }
        let key = option.split('=').next().unwrap_or_default();
        if key.is_empty() || option.chars().any(char::is_whitespace) {
            return Err(Error::invalid_argument(format!(
                "--pass-option {pass}:{option}: expected one OPTION or OPTION=VALUE without spaces"
            )));
        }
    }
    Ok(())
}

/// Sets `options`' pass options on the `--pass[=opts]` words of `args`.
fn apply_pass_options(args: &mut [String], options: &CompileOptions) {
    for (pass, option) in &options.pass_options {
        let flag = format!("--{pass}");
        let key = option.split('=').next().unwrap_or_default();
        for a in args.iter_mut() {
            let current = if *a == flag {
                ""
            } else if let Some(o) = a.strip_prefix(&flag).and_then(|r| r.strip_prefix('=')) {
                o
            } else {
                continue;
            };
            let mut words: Vec<&str> =
                current.split(' ').filter(|w| !w.is_empty() && w.split('=').next() != Some(key)).collect();
            words.push(option);
            *a = format!("{flag}={}", words.join(" "));
        }
    }
}

/// The passes that run before [`PIPELINE`] for `source` with `options`: a
/// module that carries a transform-dialect schedule
/// (`transform.named_sequence @__transform_main`) has it applied by the
/// transform interpreter and then erased; runtime verification
/// instruments the user's ops while they are still the user's.
///
/// ```
/// use fnabi_mlir::compile::front_passes;
/// use fnabi_mlir::CompileOptions;
/// let plain = "func.func @f() { return }";
/// assert!(front_passes(plain, &CompileOptions::default()).is_empty());
/// let checked = CompileOptions::default().with_runtime_verification(true);
/// assert_eq!(front_passes(plain, &checked), ["--generate-runtime-verification"]);
/// ```
pub fn front_passes(source: &str, options: &CompileOptions) -> Vec<&'static str> {
    let mut passes = Vec::new();
    if source.contains("@__transform_main") && source.contains("transform.named_sequence") {
        passes.extend(["--transform-interpreter", "--test-transform-dialect-erase-schedule"]);
    }
    if options.runtime_verification {
        passes.push("--generate-runtime-verification");
    }
    passes
}

/// How a module is compiled, besides the default pipeline.
///
/// ```
/// use fnabi_mlir::CompileOptions;
/// use std::time::Duration;
/// let o = CompileOptions::default()
///     .with_runtime_verification(true)
///     .with_timeout(Some(Duration::from_secs(60)))
///     .with_pass_option("one-shot-bufferize", "unknown-type-conversion=identity-layout-map");
/// assert!(o.runtime_verification && !o.embed_abi);
/// assert_eq!(o.timeout, Some(Duration::from_secs(60)));
/// assert_eq!(o.pass_options[0].0, "one-shot-bufferize");
/// assert_eq!(o.pipeline, None); // fnabi's own pipeline
/// assert_ne!(o, CompileOptions::default());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// Instrument the module with MLIR's runtime op verification
    /// (`--generate-runtime-verification`): an out-of-bounds access or a
    /// mismatched shape prints `ERROR: Runtime op verification failed …`
    /// (with the op and its source line) on stderr and aborts the process,
    /// instead of corrupting memory. Off by default (it costs checks in
    /// inner loops); `fnabi run` turns it on.
    pub runtime_verification: bool,
    /// The file the source was read from: tool errors and runtime
    /// messages name it (its file name) rather than a temporary file.
    pub source_path: Option<PathBuf>,
    /// A pass pipeline of the user's (`builtin.module(one-shot-bufferize,
    /// …)`, `mlir-opt --pass-pipeline` syntax) that replaces fnabi's
    /// high-level passes ([`front_passes`] and [`PIPELINE`] up to
    /// `--convert-scf-to-cf`); fnabi's lowering to the LLVM dialect
    /// ([`lowering`], with `--llvm-request-c-wrappers`) still runs after
    /// it, converting whatever the user's pipeline left. Only for MLIR
    /// source (an LLVM-level input has no high-level part).
    pub pipeline: Option<String>,
    /// Embed the functions' ABI in the library (`fnabi compile`, see
    /// [`crate::abi_embed`]); set by the loader, which knows the headers.
    pub embed_abi: bool,
    /// The longest the whole compile may take (every tool together); a
    /// tool still running then is killed and the compile fails with
    /// [`MlirError::Timeout`]. `None`: `FNABI_COMPILE_TIMEOUT` (seconds,
    /// `0` for none), else [`crate::tool::DEFAULT_COMPILE_TIMEOUT`];
    /// `Some(Duration::MAX)`: none.
    pub timeout: Option<std::time::Duration>,
    /// Options set on passes of fnabi's own pipeline (`--pass-option
    /// PASS:OPTION=VALUE`): `(pass, option)`, e.g. `("one-shot-bufferize",
    /// "unknown-type-conversion=identity-layout-map")`; an option of the
    /// same name that the pipeline sets is replaced. The pass must be one of
    /// [`PIPELINE`] or [`front_passes`] (checked when compiling).
    pub pass_options: Vec<(String, String)>,
}

/// The tail of [`PIPELINE`] that runs after a custom pipeline: from
/// `--convert-scf-to-cf` on, the conversions to the LLVM dialect (each a
/// no-op where the user's pipeline already converted).
///
/// ```
/// use fnabi_mlir::compile::{lowering, PIPELINE};
/// assert_eq!(lowering()[0], "--convert-scf-to-cf");
/// assert!(PIPELINE.ends_with(lowering()));
/// ```
pub fn lowering() -> &'static [&'static str] {
    let at = PIPELINE.iter().position(|p| *p == "--convert-scf-to-cf").unwrap_or(0);
    &PIPELINE[at..]
}

impl CompileOptions {
    /// Options with runtime verification on or off.
    pub fn with_runtime_verification(mut self, on: bool) -> Self {
        self.runtime_verification = on;
        self
    }

    /// Options with the user's high-level pass pipeline (see [`CompileOptions::pipeline`]).
    pub fn with_pipeline(mut self, pipeline: impl Into<String>) -> Self {
        self.pipeline = Some(pipeline.into());
        self
    }

    /// Options that embed (or not) the functions' ABI in the library.
    pub fn with_embedded_abi(mut self, on: bool) -> Self {
        self.embed_abi = on;
        self
    }

    /// Options with an option set on a pass of fnabi's pipeline (see
    /// [`CompileOptions::pass_options`]).
    pub fn with_pass_option(mut self, pass: impl Into<String>, option: impl Into<String>) -> Self {
        self.pass_options.push((pass.into(), option.into()));
        self
    }

    /// Options with a compile timeout (see [`CompileOptions::timeout`]).
    pub fn with_timeout(mut self, timeout: Option<std::time::Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Options naming the source file.
    pub fn with_source_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.source_path = Some(path.into());
        self
    }

    /// The name the source has in the compile directory (and so in
    /// locations): the source file's name when it is a plain `.mlir` name,
    /// else `input.mlir`.
    fn input_name(&self) -> String {
        crate::cache::staged_source_name(self.source_path.as_deref(), &[".mlir"], &["lowered.mlir"])
    }
}

/// The Debian packages that provide the tools.
pub const PACKAGES_HINT: &str =
    "apt-get install --no-install-recommends mlir-22-tools llvm-22 (or mlir-19-tools llvm-19)";

/// The located tools of one MLIR/LLVM version.
///
/// ```
/// use fnabi_mlir::Toolchain;
/// let t = Toolchain::find()?;
/// assert!(t.full_version.starts_with(&format!("{}.", t.version)));
/// assert!(t.libdir.is_dir());
/// assert!(!t.triple.is_empty());
/// # Ok::<(), fnabi_mlir::MlirError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// The major version (22 or 19).
    pub version: u32,
    /// The full version (`22.1.8`).
    pub full_version: String,
    /// The host target triple (`x86_64-pc-linux-gnu`).
    pub triple: String,
    /// The version's library directory (`llvm-config --libdir`), where
    /// MLIR's runtime utilities live (see [`crate::runtime_utils`]).
    pub libdir: PathBuf,
    mlir_opt: PathBuf,
    mlir_translate: PathBuf,
    opt: PathBuf,
    llc: PathBuf,
    cc: PathBuf,
}

fn which(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default()
}

impl Toolchain {
    /// Finds the tools (version 22, else 19, with Debian's suffixed names
    /// `mlir-opt-22`; else unsuffixed `mlir-opt` of any version;
    /// `FNABI_MLIR_VERSION` picks one) in the folder `FNABI_MLIR_TOOLS`
    /// names, else on `PATH`, and the C compiler (`$CC`, else `cc`, on `PATH`).
    pub fn find() -> Result<Toolchain, MlirError> {
        let versions: Vec<u32> =
            match std::env::var("FNABI_MLIR_VERSION") {
                Ok(v) => vec![v.trim().parse().map_err(|_| {
                    MlirError::ToolsMissing(format!("FNABI_MLIR_VERSION = {v:?} is not a version number"))
                })?],
                Err(_) => VERSIONS.to_vec(),
            };
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        match std::env::var_os("FNABI_MLIR_TOOLS").filter(|d| !d.is_empty()) {
            Some(dir) => {
                let dir = PathBuf::from(dir);
                // The C compiler is looked up on PATH as well.
                let cc = if cc.contains('/') {
                    cc
                } else {
                    which(&cc, &path_dirs()).map_or(cc, |p| p.display().to_string())
                };
                Toolchain::find_in(std::slice::from_ref(&dir), &versions, &cc).map_err(|e| match e {
                    MlirError::ToolsMissing(m) => {
                        MlirError::ToolsMissing(format!("in FNABI_MLIR_TOOLS = {}: {m}", dir.display()))
                    }
                    other => other,
                })
            }
            None => Toolchain::find_in(&path_dirs(), &versions, &cc),
        }
    }

    /// Finds the tools of the first of `versions` that is complete in
    /// `dirs`, and the C compiler `cc` (a name looked up in `dirs`, or a path).
    pub fn find_in(dirs: &[PathBuf], versions: &[u32], cc: &str) -> Result<Toolchain, MlirError> {
        // Debian's suffixed names of each wanted version, then unsuffixed
        // names (an upstream build's `bin`, or a folder of links) of
        // whatever version their llvm-config reports.
        let suffixes = versions.iter().map(|v| (format!("-{v}"), Some(*v))).chain([(String::new(), None)]);
        for (suffix, v) in suffixes {
            let tool = |n: &str| which(&format!("{n}{suffix}"), dirs);
            let (Some(mlir_opt), Some(mlir_translate), Some(opt), Some(llc), Some(config)) =
                (tool("mlir-opt"), tool("mlir-translate"), tool("opt"), tool("llc"), tool("llvm-config"))
            else {
                continue;
            };
            let cc_path = if cc.contains('/') { Some(PathBuf::from(cc)) } else { which(cc, dirs) };
            let cc = cc_path.ok_or_else(|| {
                MlirError::ToolsMissing(format!(
                    "no C compiler `{cc}` to link MLIR code into a shared library: apt-get install build-essential"
                ))
            })?;
            // One process answers all three (one line each, in order); its
            // answer is remembered per binary (path, size, mtime), so a warm
            // `fnabi run` spawns nothing.
            let probe = ["--version", "--host-target", "--libdir"].map(OsStr::new);
            let answer = match probe_cache(&config) {
                Some((_, Some(known))) => known,
                cached => {
                    let answer = run_capture(&config, &probe, None, None)?;
                    if let Some((file, _)) = cached {
                        let tmp = file.with_extension(format!("tmp{}", std::process::id()));
                        if std::fs::write(&tmp, &answer).is_ok() {
                            let _ = std::fs::rename(&tmp, &file);
                        }
                    }
                    answer
                }
            };
            let mut lines = answer.lines().map(str::trim);
            let (Some(full_version), Some(triple), Some(libdir)) = (lines.next(), lines.next(), lines.next()) else {
                return Err(MlirError::ToolsMissing(format!(
                    "{} {} printed {answer:?}, expected three lines",
                    config.display(),
                    probe.map(|p| p.to_string_lossy().into_owned()).join(" ")
                )));
            };
            let (full_version, triple, libdir) = (full_version.to_owned(), triple.to_owned(), PathBuf::from(libdir));
            let major = full_version.split('.').next().and_then(|m| m.parse::<u32>().ok());
            let v = match (v, major) {
                (Some(v), _) => v,
                (None, Some(m)) if versions.contains(&m) || versions == VERSIONS => m,
                (None, _) => continue,
            };
            return Ok(Toolchain { version: v, full_version, triple, libdir, mlir_opt, mlir_translate, opt, llc, cc });
        }
        let wanted: Vec<String> = versions.iter().map(|v| format!("mlir-opt-{v}")).collect();
        Err(MlirError::ToolsMissing(format!(
            "the MLIR/LLVM tools are not installed (looked for {} with mlir-translate, opt, llc, llvm-config of the \
             same version, or unsuffixed mlir-opt …, on PATH or in the folder FNABI_MLIR_TOOLS names); install the \
             Debian packages: {PACKAGES_HINT}",
            wanted.join(" or ")
        )))
    }
}

/// Where the probe answer of `llvm-config` at `config` is remembered (a
/// file named by the binary's path, size and modification time), and the
/// answer if it is there. `None` when the binary cannot be looked at.
fn probe_cache(config: &Path) -> Option<(PathBuf, Option<String>)> {
    let meta = std::fs::metadata(config).ok()?;
    let mtime = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
    let key = format!("{}\n{}\n{mtime}", config.display(), meta.len());
    let dir = default_cache_dir().join("toolchain");
    std::fs::create_dir_all(&dir).ok()?;
    let file = dir.join(format!("{:032x}.txt", fnv1a_128(key.as_bytes())));
    let known = std::fs::read_to_string(&file).ok().filter(|t| t.lines().count() == 3);
    Some((file, known))
}

pub use fnabi_core::cache::default_cache_dir;
use fnabi_core::cache::fnv1a_128;

/// Compiles `.mlir` text to shared libraries, with a cache.
///
/// ```
/// use fnabi_mlir::{Compiler, Toolchain};
/// let dir = std::env::temp_dir().join(format!("fnabi-doc-compiler-{}", std::process::id()));
/// let c = Compiler::with(Toolchain::find()?, &dir);
/// assert_eq!(c.cache_dir(), dir);
/// let src = r#"
///   func.func @one() -> i32 attributes {llvm.emit_c_interface} {
///     %c = arith.constant 1 : i32
///     return %c : i32
///   }"#;
/// let key = c.cache_key(src);
/// assert_eq!(key.len(), 32);
/// assert_ne!(key, c.cache_key(&src.replace("1 : i32", "2 : i32")));
/// let lib = c.compile(src)?;
/// assert!(lib.starts_with(&dir) && lib.is_file());
/// assert_eq!(c.compile(src)?, lib); // from the cache
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Compiler {
    tools: Toolchain,
    cache_dir: PathBuf,
}

static FOUND: OnceLock<Result<Toolchain, String>> = OnceLock::new();

impl Compiler {
    /// The tools from `PATH` (looked up once per process) and the default cache.
    pub fn new() -> Result<Compiler, Error> {
        let found = FOUND.get_or_init(|| Toolchain::find().map_err(|e| e.to_string()));
        match found {
            Ok(tools) => Ok(Compiler { tools: tools.clone(), cache_dir: default_cache_dir() }),
            Err(msg) => Err(MlirError::ToolsMissing(msg.clone()).into()),
        }
    }

    /// Given tools and cache directory.
    pub fn with(tools: Toolchain, cache_dir: impl Into<PathBuf>) -> Compiler {
        Compiler { tools, cache_dir: cache_dir.into() }
    }

    /// The tools.
    pub fn toolchain(&self) -> &Toolchain {
        &self.tools
    }

    /// The cache directory.
    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// Everything the compiled code depends on, as one text. Link inputs
    /// (when there are any) come before the source, the glue with its
    /// length, so no two inputs give the same text.
    fn key_text(&self, source: &str, link: &LinkInputs, options: &CompileOptions) -> String {
        self.key_text_at(source, InputLevel::Mlir, link, options)
    }

    fn key_text_at(&self, source: &str, level: InputLevel, link: &LinkInputs, options: &CompileOptions) -> String {
        let mut extra = String::new();
        for lib in &link.libraries {
            extra.push_str(&format!("link {}\n", lib.display()));
        }
        if let Some(glue) = &link.c_glue {
            extra.push_str(&format!("glue {}\n{glue}\n", glue.len()));
        }
        if level != InputLevel::Mlir {
            extra.push_str(&format!("level {level}\n"));
        }
        if let Some(p) = &options.pipeline {
            extra.push_str(&format!("user pipeline {}\n{p}\n", p.len()));
        }
        for (pass, option) in &options.pass_options {
            extra.push_str(&format!("pass option {pass}:{option}\n"));
        }
        format!(
            "fnabi-mlir-cache v5\nversion {}\ntriple {}\ninput {}\npipeline {} {}\ntiling {}\n{extra}\n{source}",
            self.tools.full_version,
            self.tools.triple,
            options.input_name(),
            front_passes(source, options).join(" "),
            PIPELINE.join(" "),
            crate::tiling::TILING_SCHEDULE
        )
    }

    /// The cache key of `source`: 32 hex digits.
    pub fn cache_key(&self, source: &str) -> String {
        let key = self.key_text(source, &LinkInputs::default(), &CompileOptions::default());
        format!("{:032x}", fnv1a_128(key.as_bytes()))
    }

    /// The shared library compiled from `source` (from the cache when there).
    pub fn compile(&self, source: &str) -> Result<PathBuf, Error> {
        self.compile_with(source, &LinkInputs::default())
    }

    /// The shared library compiled from `source` and linked with `link`
    /// (from the cache when there), with the default options.
    pub fn compile_with(&self, source: &str, link: &LinkInputs) -> Result<PathBuf, Error> {
        self.compile_with_options(source, link, &CompileOptions::default())
    }

    /// The shared library compiled from `source` with `options` and linked
    /// with `link` (from the cache when there): the C glue is compiled with
    /// `cc -O2 -fPIC -c`, the libraries are linked `--as-needed` (a
    /// dependency only when the module uses one of their functions) with an
    /// rpath to their directories; MLIR's async runtime is linked the same
    /// way when the lowered module calls it.
    ///
    /// A failure names what the user can act on: the op, the source file
    /// and line, and the pass that refused it (or the dialect that no pass
    /// of the pipeline lowered).
    pub fn compile_with_options(
        &self,
        source: &str,
        link: &LinkInputs,
        options: &CompileOptions,
    ) -> Result<PathBuf, Error> {
        self.compile_input(source.as_bytes(), InputLevel::detect_text(source), link, options)
    }

    /// The commands the pipeline runs for an input of `level` with
    /// `options` (`fnabi run --print-pipeline`), one line each; `source`
    /// is the MLIR text (its transform schedule adds passes).
    pub fn describe_pipeline(&self, source: &str, level: InputLevel, options: &CompileOptions) -> Vec<String> {
        let t = &self.tools;
        let name = |p: &Path| p.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let mut lines = Vec::new();
        let input = match level {
            InputLevel::Mlir => options.input_name(),
            InputLevel::LlvmDialect => options.input_name(),
            InputLevel::LlvmIr => "input.ll".into(),
            InputLevel::Bitcode => "input.bc".into(),
        };
        if level == InputLevel::Mlir {
            for stage in self.opt_stages(source, options) {
                // An argument with spaces (a pass and its options) quoted, as a shell takes it.
                let words: Vec<String> =
                    stage.iter().map(|a| if a.contains(' ') { format!("'{a}'") } else { a.clone() }).collect();
                lines.push(format!("{} {}", name(&t.mlir_opt), words.join(" ")));
            }
        }
        if matches!(level, InputLevel::Mlir | InputLevel::LlvmDialect) {
            let from = if level == InputLevel::LlvmDialect { options.input_name() } else { "lowered.mlir".into() };
            lines.push(format!("{} --mlir-to-llvmir {from} -o module.ll", name(&t.mlir_translate)));
        }
        let ir = if level.is_llvm() && level != InputLevel::LlvmDialect { input } else { "module.ll".into() };
        lines.push(format!("{} -O2 -mtriple={} {ir} -o module.bc", name(&t.opt), t.triple));
        lines.push(format!(
            "{} -O2 -mtriple={} --relocation-model=pic -filetype=obj module.bc -o module.o",
            name(&t.llc),
            t.triple
        ));
        lines.push(format!("{} -shared -o lib.so module.o …", name(&t.cc)));
        lines
    }

    /// The `mlir-opt` invocations (arguments) for MLIR source: fnabi's
    /// pipeline in one, or the user's pipeline then fnabi's lowering.
    fn opt_stages(&self, source: &str, options: &CompileOptions) -> Vec<Vec<String>> {
        let t = &self.tools;
        let input = options.input_name();
        // Locations travel to the LLVM dialect so that a translation error
        // still names the user's line; a failing pass names itself.
        let tail = ["--mlir-print-debuginfo", "--mlir-print-ir-after-failure", "-o"];
        let own = |list: &[&str]| -> Vec<String> {
            // MLIR 19's arith-expand has no small-float options; fnabi's
            // tiling schedule is written for MLIR 22's transform dialect.
            list.iter()
                .filter(|p| t.version >= 22 || !is_tiling_pass(p))
                .map(|p| if t.version < 22 && p.starts_with("--arith-expand=") { "--arith-expand" } else { p })
                .map(str::to_owned)
                .collect()
        };
        match &options.pipeline {
            None => {
                let mut a = vec![input];
                a.extend(own(&front_passes(source, options)));
                a.extend(own(&PIPELINE));
                apply_pass_options(&mut a, options);
                a.extend(tail.iter().map(|s| (*s).to_owned()));
                a.push("lowered.mlir".into());
                vec![a]
            }
            Some(p) => {
                let mut first = vec![input, format!("--pass-pipeline={p}")];
                first.extend(tail.iter().map(|s| (*s).to_owned()));
                first.push("high.mlir".into());
                let mut second = vec!["high.mlir".to_owned(), "--llvm-request-c-wrappers".to_owned()];
                second.extend(own(lowering()));
                apply_pass_options(&mut second, options);
                second.extend(tail.iter().map(|s| (*s).to_owned()));
                second.push("lowered.mlir".into());
                vec![first, second]
            }
        }
    }

    /// The LLVM IR text of bitcode (`opt -S`), to read its function headers.
    pub fn disassemble_bitcode(&self, bitcode: &[u8]) -> Result<String, Error> {
        let dir = self.cache_dir.join("mlir");
        std::fs::create_dir_all(&dir).map_err(|e| MlirError::io(format!("creating {}", dir.display()), e))?;
        let tmp = crate::cache::StagingDir::new(&dir, "dis")
            .map_err(|e| MlirError::io(format!("creating a folder in {}", dir.display()), e))?;
        std::fs::write(tmp.path().join("input.bc"), bitcode).map_err(|e| MlirError::io("writing input.bc", e))?;
        let deadline = crate::tool::deadline(None)?;
        run_capture(
            &self.tools.opt,
            &["-S", "input.bc", "-o", "input.ll"].map(OsStr::new),
            Some(tmp.path()),
            deadline,
        )?;
        Ok(std::fs::read_to_string(tmp.path().join("input.ll")).map_err(|e| MlirError::io("reading input.ll", e))?)
    }

    /// The shared library compiled from `input` at `level` (MLIR source,
    /// LLVM-dialect MLIR, LLVM IR text or bitcode: the stages already done
    /// are skipped) with `options`, linked with `link` (from the cache
    /// when there). A compile of more than a second shows its stage and
    /// elapsed time on stderr when that is a terminal.
    pub fn compile_input(
        &self,
        input_bytes: &[u8],
        level: InputLevel,
        link: &LinkInputs,
        options: &CompileOptions,
    ) -> Result<PathBuf, Error> {
        check_pass_options(options)?;
        if level.is_llvm() && !options.pass_options.is_empty() {
            return Err(Error::invalid_argument(format!(
                "--pass-option applies to MLIR source with func.func functions; this input is {level}, past the pipeline"
            )));
        }
        if level.is_llvm() && options.pipeline.is_some() {
            return Err(Error::invalid_argument(format!(
                "a custom pipeline applies to MLIR source with func.func functions; this input is {level}, \
                 past the pipeline"
            )));
        }
        let source: std::borrow::Cow<'_, str> = match level {
            // Bitcode is keyed by its bytes in hex (no two inputs share a text).
            InputLevel::Bitcode => input_bytes.iter().map(|b| format!("{b:02x}")).collect::<String>().into(),
            _ => std::str::from_utf8(input_bytes)
                .map_err(|e| Error::invalid_argument(format!("the {level} input is not UTF-8 text: {e}")))?
                .into(),
        };
        let source: &str = &source;
        let key_text = self.key_text_at(source, level, link, options);
        let key = format!("{:032x}", fnv1a_128(key_text.as_bytes()));
        let dir = crate::cache::writable_dir(&self.cache_dir.join("mlir"));
        let entry = crate::cache::CacheEntry::new(&dir, &key, crate::cache::ArtifactKind::SHARED_LIBRARY);
        if entry.is_valid(&key_text) {
            return Ok(entry.artifact);
        }
        // One compile per key: others wait here, then find it built.
        let _lock = entry.lock().map_err(|e| MlirError::io(format!("locking the cache entry {key}"), e))?;
        if entry.is_valid(&key_text) {
            return Ok(entry.artifact);
        }
        let deadline = crate::tool::deadline(options.timeout)?;
        let tmp = crate::cache::StagingDir::new(&dir, &key)
            .map_err(|e| MlirError::io(format!("creating a folder in {}", dir.display()), e))?;
        let t = &self.tools;
        let p = |name: &str| tmp.path().join(name);
        let label = options
            .source_path
            .as_deref()
            .and_then(Path::file_name)
            .map_or_else(|| "the module".to_owned(), |n| n.to_string_lossy().into_owned());
        let progress = Progress::start(&label);
        let mut ir_input = "module.ll";
        let mut translate_input = "lowered.mlir".to_owned();
        let mut lowered = String::new();
        match level {
            InputLevel::Mlir => {
                let input = options.input_name();
                std::fs::write(p(&input), input_bytes).map_err(|e| MlirError::io(format!("writing {input}"), e))?;
                std::fs::write(p(TILING_SCHEDULE_FILE), TILING_SCHEDULE)
                    .map_err(|e| MlirError::io(format!("writing {TILING_SCHEDULE_FILE}"), e))?;
                for stage in self.opt_stages(source, options) {
                    progress.stage(if options.pipeline.is_some() && stage[0] != "high.mlir" {
                        "mlir-opt (your pipeline)"
                    } else {
                        "mlir-opt"
                    });
                    let args: Vec<&OsStr> = stage.iter().map(OsStr::new).collect();
                    run_capture(&t.mlir_opt, &args, Some(tmp.path()), deadline)
                        .map_err(|e| pipeline_error(e, options))?;
                }
            }
            InputLevel::LlvmDialect => {
                // Under the user's file name, so that errors name it.
                translate_input = options.input_name();
                std::fs::write(p(&translate_input), input_bytes)
                    .map_err(|e| MlirError::io(format!("writing {translate_input}"), e))?;
            }
            InputLevel::LlvmIr => {
                std::fs::write(p("input.ll"), input_bytes).map_err(|e| MlirError::io("writing input.ll", e))?;
                lowered = source.to_owned();
                ir_input = "input.ll";
            }
            InputLevel::Bitcode => {
                std::fs::write(p("input.bc"), input_bytes).map_err(|e| MlirError::io("writing input.bc", e))?;
                ir_input = "input.bc";
            }
        }
        if matches!(level, InputLevel::Mlir | InputLevel::LlvmDialect) {
            progress.stage("mlir-translate");
            run_capture(
                &t.mlir_translate,
                &["--mlir-to-llvmir", &translate_input, "-o", "module.ll"].map(OsStr::new),
                Some(tmp.path()),
                deadline,
            )
            .map_err(|e| pipeline_error(e, options))?;
            lowered = std::fs::read_to_string(p(&translate_input)).unwrap_or_default();
        }
        let triple = format!("-mtriple={}", t.triple);
        progress.stage("opt -O2");
        run_capture(&t.opt, &["-O2", &triple, ir_input, "-o", "module.bc"].map(OsStr::new), Some(tmp.path()), deadline)
            .map_err(|e| match (e, &options.source_path) {
                // An LLVM IR input's errors name the user's file.
                (MlirError::ToolFailed { tool, status, stderr }, Some(path)) if ir_input != "module.ll" => {
                    let stderr = stderr.replace(ir_input, &path.display().to_string());
                    MlirError::ToolFailed { tool, status, stderr }
                }
                (e, _) => e,
            })?;
        progress.stage("llc");
        run_capture(
            &t.llc,
            &["-O2", &triple, "--relocation-model=pic", "-filetype=obj", "module.bc", "-o", "module.o"].map(OsStr::new),
            Some(tmp.path()),
            deadline,
        )?;
        let mut link_args: Vec<std::ffi::OsString> = ["-shared", "-o", "lib.so", "module.o"].map(Into::into).to_vec();
        let mut glue = link.c_glue.clone().unwrap_or_default();
        if declares(&lowered, "abort") && declares(&lowered, "puts") {
            // A failed `cf.assert` (runtime verification) prints with `puts`
            // and aborts. Inside a call through `fnabi_guarded_call` the
            // report is kept and the abort jumps back to that call, which
            // fnabi turns into `MlirError::RuntimeCheck` (see
            // `call::guard`); elsewhere the report goes to stderr, after
            // what the module printed so far, and the process aborts.
            glue.push_str(ASSERT_GLUE);
        }
        if !glue.is_empty() {
            std::fs::write(p("glue.c"), &glue).map_err(|e| MlirError::io("writing glue.c", e))?;
            run_capture(
                &t.cc,
                &["-O2", "-fPIC", "-c", "glue.c", "-o", "glue.o"].map(OsStr::new),
                Some(tmp.path()),
                deadline,
            )?;
            link_args.push("glue.o".into());
        }
        let mut libraries = link.libraries.clone();
        if lowered.contains("@mlirAsyncRuntime") {
            libraries.push(async_runtime_library(t)?);
        }
        if !libraries.is_empty() {
            link_args.push("-Wl,--as-needed".into());
            link_args.extend(libraries.iter().map(|l| l.as_os_str().to_owned()));
            link_args.push("-Wl,--no-as-needed".into());
            let mut dirs: Vec<&Path> = libraries.iter().filter_map(|l| l.parent()).collect();
            dirs.dedup();
            for d in dirs {
                let mut arg = std::ffi::OsString::from("-Wl,-rpath,");
                arg.push(d);
                link_args.push(arg);
            }
        }
        // `--convert-math-to-libm` calls libm (`expf`, …): a dependency only
        // when the module uses it (the host process may not have libm).
        link_args.extend(["-Wl,--as-needed", "-lm", "-Wl,--no-as-needed"].map(Into::into));
        let link_refs: Vec<&OsStr> = link_args.iter().map(|a| a.as_os_str()).collect();
        progress.stage("cc -shared");
        run_capture(&t.cc, &link_refs, Some(tmp.path()), deadline)?;
        drop(progress);
        entry
            .publish(&p("lib.so"), &key_text)
            .map_err(|e| MlirError::io(format!("storing {}", entry.artifact.display()), e))?;
        Ok(entry.artifact)
    }
}

/// Replaces `cf.assert`'s `puts` inside a module (hidden, so nothing
/// outside the module sees it): stdout is flushed, the message goes to stderr.
const ASSERT_GLUE: &str = r#"
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* The innermost fnabi_guarded_call of this thread, and what the module
   printed while it was active (the failed check's report). */
static __thread jmp_buf *fnabi_jump;
static __thread char fnabi_report[4096];
static __thread size_t fnabi_report_len;
__attribute__((visibility("hidden"))) int puts(const char *s) {
  if (fnabi_jump) {
    size_t n = strlen(s), room = sizeof fnabi_report - 2 - fnabi_report_len;
    if (n > room) n = room;
    memcpy(fnabi_report + fnabi_report_len, s, n);
    fnabi_report_len += n;
    fnabi_report[fnabi_report_len++] = '\n';
    fnabi_report[fnabi_report_len] = 0;
    return 0;
  }
  fflush(stdout);
  fputs(s, stderr);
  fputc('\n', stderr);
  fflush(stderr);
  return 0;
}
/* A failed check: back to the guarded call that made it, else the
   process ends as abort(3) ends it. */
__attribute__((visibility("hidden"), noreturn)) void abort(void) {
  if (fnabi_jump) longjmp(*fnabi_jump, 1);
  fflush(stdout);
  signal(SIGABRT, SIG_DFL);
  raise(SIGABRT);
  _Exit(134);
}
int fnabi_guarded_call(uint64_t (*thunk)(void *), void *ctx, uint64_t *bits) {
  jmp_buf here;
  jmp_buf *outer = fnabi_jump;
  fnabi_jump = &here;
  fnabi_report_len = 0;
  fnabi_report[0] = 0;
  if (setjmp(here)) {
    fnabi_jump = outer;
    return 1;
  }
  *bits = thunk(ctx);
  fnabi_jump = outer;
  return 0;
}
const char *fnabi_failure_report(void) { return fnabi_report; }
"#;

/// True when the LLVM-dialect text declares or defines `@name`.
fn declares(lowered: &str, name: &str) -> bool {
    lowered.contains(&format!("llvm.func @{name}(")) || lowered.contains(&format!(" @{name}("))
}

/// MLIR's async runtime library of the toolchain's version (package `libmlir-N`).
fn async_runtime_library(t: &Toolchain) -> Result<PathBuf, MlirError> {
    let versioned = std::fs::read_dir(&t.libdir)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(OsStr::to_str).is_some_and(|n| n.starts_with("libmlir_async_runtime.so")))
        .min_by_key(|p| p.as_os_str().len());
    versioned.ok_or_else(|| {
        MlirError::ToolsMissing(format!(
            "the module uses the async dialect, which needs MLIR's async runtime library \
             (libmlir_async_runtime.so in {}): apt-get install libmlir-{}",
            t.libdir.display(),
            t.version
        ))
    })
}

/// The pass (`--convert-vector-to-llvm`) that should lower ops of `dialect`,
/// when the pipeline has one.
fn lowering_pass(dialect: &str) -> Option<&'static str> {
    Some(match dialect {
        "tensor" | "bufferization" => "one-shot-bufferize",
        "linalg" => "convert-linalg-to-loops",
        "affine" => "lower-affine",
        "vector" => "convert-vector-to-llvm",
        "scf" => "convert-scf-to-cf",
        "cf" => "convert-cf-to-llvm",
        "math" => "convert-math-to-llvm / convert-math-to-libm",
        "arith" => "convert-arith-to-llvm",
        "memref" => "finalize-memref-to-llvm",
        "index" => "convert-index-to-llvm",
        "func" => "convert-func-to-llvm",
        "complex" => "convert-complex-to-llvm",
        "ub" => "convert-ub-to-llvm",
        "async" => "convert-async-to-llvm",
        _ => return None,
    })
}

/// A tool failure of the pipeline made actionable: the temporary input's
/// name becomes the user's path, the failing pass is named (from
/// `--mlir-print-ir-after-failure`'s header, whose IR dump is dropped), and
/// an op that reached the translation to LLVM IR unlowered is explained.
fn pipeline_error(e: MlirError, options: &CompileOptions) -> MlirError {
    let MlirError::ToolFailed { tool, status, stderr } = e else { return e };
    let mut text = String::new();
    let mut pass = None;
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix("// -----// IR Dump After ") {
            // `ConvertVectorToLLVMPass Failed (convert-vector-to-llvm) //----- //`
            pass = rest.split_once(" Failed (").and_then(|(_, r)| r.split_once(')')).map(|(p, _)| p.to_owned());
            break;
        }
        text.push_str(line);
        text.push('\n');
    }
    let input = options.input_name();
    if let Some(path) = &options.source_path {
        let shown = path.display().to_string();
        text = text.replace(&format!("{input}:"), &format!("{shown}:"));
        text = text.replace(&format!("\"{input}\""), &format!("\"{shown}\""));
    }
    let mut notes = Vec::new();
    if let Some(p) = &pass {
        notes.push(format!("the pass that failed: --{p}"));
    }
    for line in text.lines() {
        let op = line
            .split_once("LLVM Translation failed for operation: ")
            .or_else(|| line.split_once("for dialect for op: "))
            .or_else(|| line.split_once("not found for custom op "))
            .map(|(_, op)| op.trim().trim_matches('\'').to_owned());
        if let Some(op) = op {
            let dialect = op.split('.').next().unwrap_or_default();
            let f8 = ["f8E4M3", "f8E5M2", "f8E3M4"];
            let note = match lowering_pass(dialect) {
                // MLIR 22 lowers extf/truncf of these 8-bit floats for GPUs
                // only (and through --convert-arith-to-apfloat, which turns
                // every float op of a module into library calls).
                Some(_) if (op == "arith.extf" || op == "arith.truncf") && f8.iter().any(|t| text.contains(t)) => {
                    format!(
                        "`{op}` of an 8-bit float has no lowering in MLIR's CPU pipeline (arith-expand covers only bf16, f8E8M0 and f4E2M1): \
                     compile it with IREE (`fnabi run FILE --backend iree`), or move f8 values only as bytes"
                    )
                }
                Some(p) => format!(
                    "`{op}` was left unlowered by fnabi's pipeline (its pass for {dialect} is {p}): rewrite it with ops that pass lowers"
                ),
                None => format!("`{op}`: fnabi's pipeline lowers no `{dialect}` ops to LLVM (host CPU code only)"),
            };
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    for n in notes {
        text.push_str("note: ");
        text.push_str(&n);
        text.push('\n');
    }
    let tool = match pass {
        Some(p) => format!("{tool} (pass --{p})"),
        None => tool,
    };
    MlirError::ToolFailed { tool, status, stderr: text }
}

/// What is linked into a module's shared library besides its code.
///
/// ```
/// use fnabi_mlir::{Compiler, LinkInputs, Toolchain};
/// assert!(LinkInputs::default().is_empty());
/// let glue = LinkInputs { c_glue: Some("int fnabi_doc_seven(void) { return 7; }".into()), libraries: vec![] };
/// assert!(!glue.is_empty());
///
/// let dir = std::env::temp_dir().join(format!("fnabi-doc-link-{}", std::process::id()));
/// let c = Compiler::with(Toolchain::find()?, &dir);
/// let src = "func.func @f() attributes {llvm.emit_c_interface} { return }";
/// // What is linked in is part of the cache key: two libraries.
/// assert_ne!(c.compile_with(src, &LinkInputs::default())?, c.compile_with(src, &glue)?);
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkInputs {
    /// C source compiled and linked in (fnabi's trampolines and shims for
    /// the module's external functions, see [`crate::externals`]).
    pub c_glue: Option<String>,
    /// Shared libraries (full paths), linked only where the module uses them.
    pub libraries: Vec<PathBuf>,
}

impl LinkInputs {
    /// True when nothing is linked besides the module's code.
    pub fn is_empty(&self) -> bool {
        self.c_glue.is_none() && self.libraries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tools_name_the_packages() {
        let empty = std::env::temp_dir().join("fnabi-no-tools-here");
        let e = Toolchain::find_in(&[empty], &VERSIONS, "cc").unwrap_err().to_string();
        assert!(e.contains("mlir-opt-22 or mlir-opt-19"), "{e}");
        assert!(e.contains("mlir-22-tools llvm-22"), "{e}");
    }

    #[test]
    fn cache_dir_from_env_order() {
        // Only reads the environment; the variables are not changed here.
        let d = default_cache_dir();
        assert!(d.ends_with("fnabi") || std::env::var_os("FNABI_CACHE_DIR").is_some());
    }
}
