//! What fnabi's MLIR pipeline runs: the passes of the default pipeline,
//! what a module adds in front of them, and the options a caller sets
//! ([`CompileOptions`], pass options, a pipeline of their own).

use super::*;

/// The `mlir-opt` passes of the default pipeline, in order: elementwise
/// arith/math ops on tensors become linalg, tensor-level code is bufferized (function boundaries included, with identity layouts
/// there so that arguments and results are plain memrefs; no deallocation
/// pipeline: results are returned to the caller, who frees them), matrix
/// products are tiled (see [`crate::tiling`]), linalg
/// becomes loops, affine, vector (masks included), math (`ipowi`/`fpowi`
/// as outlined functions, the rest to LLVM intrinsics or libm), complex,
/// ub and async are lowered,
/// then memref/arith/index/cf/func are finalized to the LLVM dialect.
/// [`front_passes`] adds what a module asks for in front of it (a
/// transform-dialect schedule, runtime verification).
pub const PIPELINE: [&str; 32] = [
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
    "--lower-vector-mask",
    "--convert-vector-to-scf",
    "--lower-affine",
    "--arith-expand=include-bf16 include-f8e8m0 include-f4e2m1",
    "--convert-complex-to-standard",
    "--convert-math-to-funcs",
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
pub(super) fn is_tiling_pass(p: &str) -> bool {
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
pub(super) fn apply_pass_options(args: &mut [String], options: &CompileOptions) {
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
/// instruments the user's ops while they are still the user's, after
/// elementwise ops on tensors have become linalg (whose checks compare
/// the operands' dims).
///
/// ```
/// use fnabi_mlir::compile::front_passes;
/// use fnabi_mlir::CompileOptions;
/// let plain = "func.func @f() { return }";
/// assert!(front_passes(plain, &CompileOptions::default()).is_empty());
/// let checked = CompileOptions::default().with_runtime_verification(true);
/// assert_eq!(front_passes(plain, &checked), ["--convert-elementwise-to-linalg", "--generate-runtime-verification"]);
/// ```
pub fn front_passes(source: &str, options: &CompileOptions) -> Vec<&'static str> {
    let mut passes = Vec::new();
    if source.contains("@__transform_main") && source.contains("transform.named_sequence") {
        passes.extend(["--transform-interpreter", "--test-transform-dialect-erase-schedule"]);
    }
    if options.runtime_verification {
        // Elementwise ops on tensors (`arith.addf` of two `tensor<?x4xf32>`)
        // become linalg first, whose verification checks that their
        // dynamic dims agree: arith's own has no check for that.
        passes.extend(["--convert-elementwise-to-linalg", "--generate-runtime-verification"]);
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
    pub(crate) fn input_name(&self) -> String {
        crate::cache::staged_source_name(self.source_path.as_deref(), &[".mlir"], &["lowered.mlir"])
    }

    /// The name the source has in the compile errors fnabi reports: the
    /// user's path, else [`input_name`](CompileOptions::input_name).
    pub(crate) fn shown_name(&self) -> String {
        self.source_path.as_ref().map_or_else(|| self.input_name(), |p| p.display().to_string())
    }
}
