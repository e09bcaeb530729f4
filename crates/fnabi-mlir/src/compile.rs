//! Compiling `.mlir` text to a shared library with Debian's MLIR/LLVM
//! command-line tools (version 22, else 19), cached by content hash.
//!
//! The pipeline (verified with MLIR 22.1.8 and 19.1.7):
//!
//! ```text
//! mlir-opt-N input.mlir  [PIPELINE passes]      -> lowered.mlir   (LLVM dialect)
//! mlir-translate-N --mlir-to-llvmir             -> module.ll
//! opt-N -O2 -enable-matrix -mtriple=HOST        -> module.bc      (the triple is required:
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

mod pipeline;
mod toolchain;

pub use pipeline::{CompileOptions, PIPELINE, check_pass_options, front_passes, lowering, pass_names};
use pipeline::{apply_pass_options, is_tiling_pass};
pub use toolchain::{PACKAGES_HINT, Toolchain};

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
            "fnabi-mlir-cache v6\nversion {}\ntriple {}\ninput {}\npipeline {} {}\ntiling {}\nglue {:032x}\n{extra}\n{source}",
            self.tools.full_version,
            self.tools.triple,
            options.input_name(),
            front_passes(source, options).join(" "),
            PIPELINE.join(" "),
            crate::tiling::TILING_SCHEDULE,
            // fnabi's own glue, linked in as a module needs it.
            fnv1a_128(format!("{ASSERT_GLUE}{ALLOC_GLUE}").as_bytes())
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
        lines.push(format!("{} -O2 -enable-matrix -mtriple={} {ir} -o module.bc", name(&t.opt), t.triple));
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
        // `-enable-matrix`: LLVM's matrix intrinsics (`llvm.intr.matrix.*`,
        // which MLIR's vector lowering may emit) become plain vector code,
        // as `mlir-runner` does; `llc` cannot lower them itself.
        run_capture(
            &t.opt,
            &["-O2", "-enable-matrix", &triple, ir_input, "-o", "module.bc"].map(OsStr::new),
            Some(tmp.path()),
            deadline,
        )
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
        )
        .map_err(backend_error)?;
        let mut link_args: Vec<std::ffi::OsString> = ["-shared", "-o", "lib.so", "module.o"].map(Into::into).to_vec();
        let mut glue = link.c_glue.clone().unwrap_or_default();
        let own = |f: &str| defines_function(&lowered, f);
        if declares(&lowered, "abort") && declares(&lowered, "puts") && !own("abort") && !own("puts") {
            // A failed `cf.assert` (runtime verification) prints with `puts`
            // and aborts. Inside a call through `fnabi_guarded_call` the
            // report is kept and the abort jumps back to that call, which
            // fnabi turns into `MlirError::RuntimeCheck` (see
            // `call::guard`); elsewhere the report goes to stderr, after
            // what the module printed so far, and the process aborts.
            glue.push_str(ASSERT_GLUE);
        }
        // MLIR's lowering never checks what an allocation returns (code
        // compiled from C may, and keeps the C allocator's contract).
        let mlir_code = matches!(level, InputLevel::Mlir | InputLevel::LlvmDialect);
        if mlir_code && ALLOCATORS.iter().any(|f| declares(&lowered, f)) {
            // The module's heap allocations go through fnabi's checks: the
            // per-array byte limit, and a null from the allocator (which
            // MLIR's code would write through) ends the call instead (see
            // `ALLOC_GLUE`). The linker sends the module's own calls there
            // (`--wrap`); a module that defines an allocator keeps its own.
            glue.push_str(ALLOC_GLUE);
            let wrap: Vec<String> = ALLOCATORS.iter().map(|f| format!("--wrap={f}")).collect();
            link_args.push(format!("-Wl,{}", wrap.join(",")).into());
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
#define FNABI_GUARD 1
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
    size_t used = fnabi_report_len, n = strlen(s);
    size_t room = used + 2 <= sizeof fnabi_report ? sizeof fnabi_report - 2 - used : 0;
    if (room == 0) return 0;
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

/// The C allocation functions that `ALLOC_GLUE` wraps.
const ALLOCATORS: [&str; 4] = ["malloc", "aligned_alloc", "calloc", "realloc"];

/// Wraps the heap allocations of MLIR code (the linker's `--wrap` sends
/// the module's calls of `malloc`, `aligned_alloc`, `calloc` and `realloc`
/// to hidden `__wrap_` functions, which call the process's own through
/// `__real_`: the allocator that the `free` of fnabi's adopted results
/// reaches too), after checking the request against fnabi's per-array byte
/// limit (`fnabi_max_alloc_bytes`, set by fnabi when it loads the module;
/// none until then; MLIR's alignment pad of up to 4 KiB is allowed over
/// it). MLIR's code does not check what an allocation
/// returns: a request over the limit, or one the allocator fails, would be
/// written through a null pointer. Instead, inside a guarded call
/// (`ASSERT_GLUE`, runtime checks) it ends the call with a report fnabi
/// reads (`call::guard::allocation_failure`); elsewhere it says what was
/// asked on stderr and aborts the process.
const ALLOC_GLUE: &str = r#"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* The per-array limit, written by fnabi (atomically) when it loads the
   module, through the exported name; read here through a hidden alias (no
   GOT load). */
uint64_t fnabi_max_alloc_bytes = UINT64_MAX;
extern uint64_t fnabi_alloc_limit __attribute__((alias("fnabi_max_alloc_bytes"), visibility("hidden")));
/* The process's allocator: with `--wrap=malloc` (and the others), the
   module's calls reach the `__wrap_` functions below, and `__real_malloc`
   is the `malloc` the dynamic linker binds (an interposed one included). */
void *__real_malloc(size_t);
void *__real_aligned_alloc(size_t, size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
__attribute__((noreturn, cold, noinline)) static void fnabi_alloc_failed(unsigned long long n, unsigned long long limit) {
  char msg[200];
#ifdef FNABI_GUARD
  if (fnabi_jump) {
    /* The report of this call is the failure alone (not what the module
       printed before it). */
    fnabi_report_len = 0;
    snprintf(msg, sizeof msg, "fnabi-alloc-failed %llu %llu", n, limit);
    puts(msg);
    abort();
  }
#endif
  if (limit)
    snprintf(msg, sizeof msg, "fnabi: memory exhausted: the compiled code asked for %llu bytes, over the limit of %llu bytes per array (raise it with FNABI_MAX_ARRAY_BYTES)", n, limit);
  else
    snprintf(msg, sizeof msg, "fnabi: memory exhausted: the compiled code asked for %llu bytes, which the allocator could not give", n);
  /* write(2), not stdio: a module whose undefined symbols name stdio is
     taken for one that prints, and its calls flush C's stdio. */
  fflush(NULL);
  size_t len = strlen(msg);
  msg[len++] = '\n';
  if (write(2, msg, len) < 0) {}
  abort();
}
/* Over the limit by more than MLIR's alignment pad (an array of exactly
   the limit asks for a little more). */
#define FNABI_CHECK(n) \
  do { \
    unsigned long long max_ = __atomic_load_n(&fnabi_alloc_limit, __ATOMIC_RELAXED); \
    if (__builtin_expect((unsigned long long)(n) > max_ && (unsigned long long)(n) - max_ > 4096, 0)) \
      fnabi_alloc_failed((n), max_); \
  } while (0)
__attribute__((visibility("hidden"))) void *__wrap_malloc(size_t n) {
  FNABI_CHECK(n);
  void *p = __real_malloc(n);
  if (__builtin_expect(!p, 0) && n) fnabi_alloc_failed(n, 0);
  return p;
}
__attribute__((visibility("hidden"))) void *__wrap_aligned_alloc(size_t a, size_t n) {
  FNABI_CHECK(n);
  void *p = __real_aligned_alloc(a, n);
  if (__builtin_expect(!p, 0) && n) fnabi_alloc_failed(n, 0);
  return p;
}
__attribute__((visibility("hidden"))) void *__wrap_calloc(size_t k, size_t n) {
  unsigned __int128 total = (unsigned __int128)k * n;
  if (total > UINT64_MAX) fnabi_alloc_failed(UINT64_MAX, 0);
  FNABI_CHECK((unsigned long long)total);
  void *p = __real_calloc(k, n);
  if (__builtin_expect(!p, 0) && total) fnabi_alloc_failed((unsigned long long)total, 0);
  return p;
}
__attribute__((visibility("hidden"))) void *__wrap_realloc(void *old, size_t n) {
  FNABI_CHECK(n);
  void *p = __real_realloc(old, n);
  if (__builtin_expect(!p, 0) && n) fnabi_alloc_failed(n, 0);
  return p;
}
"#;

/// True when LLVM-level text (LLVM dialect or LLVM IR) defines the
/// function `@name` (a body, not a declaration): `define … @name(` in
/// LLVM IR, `llvm.func @name(…` whose line opens a region in the dialect.
fn defines_function(lowered: &str, name: &str) -> bool {
    let call = format!(" @{name}(");
    lowered.lines().any(|l| {
        let l = l.trim();
        l.contains(&call)
            && ((l.starts_with("define ") || l.starts_with("define\t"))
                || (l.contains("llvm.func ") && l.ends_with('{')))
    })
}

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

/// The dialects of IREE's input and internal IR, which MLIR's own tools do
/// not register.
const IREE_DIALECTS: [&str; 13] = [
    "util",
    "flow",
    "hal",
    "hal_inline",
    "hal_loader",
    "stream",
    "vm",
    "check",
    "io_parameters",
    "iree_codegen",
    "iree_encoding",
    "iree_linalg_ext",
    "iree_tensor_ext",
];

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

/// `text` (a tool's diagnostics, a runtime check's report) with the
/// source's staged name `input` in its locations (`input:L:C`,
/// `"input":L:C`) replaced by the name the user knows it by, `shown`.
pub(crate) fn rename_source(text: &str, input: &str, shown: &str) -> String {
    if input == shown || input.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (found, _) in text.match_indices(input) {
        let before = found.checked_sub(1).map(|i| text.as_bytes()[i]);
        let after = &text[found + input.len()..];
        // The whole name (`hinput.mlir` is another file), followed by its
        // line (`:`) or closing quote.
        let whole = found >= at && matches!(before, None | Some(b' ' | b'\t' | b'\n' | b'"' | b'(' | b'\''));
        let quoted = before == Some(b'"') && after.starts_with('"');
        if whole && (quoted || after.starts_with(':')) {
            out.push_str(&text[at..found]);
            out.push_str(shown);
            at = found + input.len();
        }
    }
    out.push_str(&text[at..]);
    out
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
    text = rename_source(&text, &options.input_name(), &options.shown_name());
    let mut notes = Vec::new();
    if let Some(p) = &pass {
        notes.push(format!("the pass that failed: --{p}"));
    }
    for line in text.lines() {
        // A dialect only IREE reads (`!util.list`, `flow.dispatch`): a
        // module for `--backend iree`.
        let unregistered =
            line.split_once("not found for custom op '").and_then(|(_, op)| op.split('.').next()).or_else(|| {
                line.contains("created with unregistered dialect")
                    .then(|| line.split_once("!\"").and_then(|(_, t)| t.split_once('"')).map(|(d, _)| d))
                    .flatten()
            });
        if let Some(d) = unregistered.filter(|d| IREE_DIALECTS.contains(d)) {
            let note = format!(
                "`{d}` is one of IREE's dialects, which only iree-compile reads: run the module with `--backend iree` \
                 (Python: `fnabi.load(path, backend=\"iree\")`)"
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
            continue;
        }
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

/// An `llc` failure made readable: LLVM's fatal error keeps its message and
/// drops the crash report after it (the bug-report request, the stack
/// dump), and scalable vectors, which no x86-64 code generator lowers, are
/// explained.
fn backend_error(e: MlirError) -> MlirError {
    let MlirError::ToolFailed { tool, status, stderr } = e else { return e };
    let mut text = String::new();
    for line in stderr.lines() {
        if line.starts_with("PLEASE submit a bug report") {
            text.push_str("(LLVM's crash report left out)\n");
            break;
        }
        text.push_str(line);
        text.push('\n');
    }
    if text.contains("scalable vector") {
        text.push_str(
            "note: the module has a function on scalable vectors (`vector<[4]xf32>`), which LLVM compiles for \
             SVE or RVV targets only, not for this CPU: remove it (or give it fixed-size vectors) to run the \
             module's other functions here\n",
        );
    }
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

    /// A module's own allocator is a definition, not a call to the C one.
    #[test]
    fn definitions_are_told_from_declarations() {
        assert!(defines_function("define ptr @malloc(i64 %0) {\n", "malloc"));
        assert!(!defines_function("declare ptr @malloc(i64)\n", "malloc"));
        assert!(defines_function("  llvm.func @malloc(%arg0: i64) -> !llvm.ptr {\n", "malloc"));
        assert!(!defines_function("  llvm.func @malloc(i64) -> !llvm.ptr\n", "malloc"));
        assert!(!defines_function("define void @f() {\n  %p = call ptr @malloc(i64 4)\n", "malloc"));
    }

    /// Only whole names followed by a line or a closing quote are renamed.
    #[test]
    fn locations_take_the_users_name() {
        let text = "input.mlir:3:4: error: x\n  at loc(\"input.mlir\":3:4) in xinput.mlir:1:1, input.mlir alone\n";
        assert_eq!(
            rename_source(text, "input.mlir", "<string>"),
            "<string>:3:4: error: x\n  at loc(\"<string>\":3:4) in xinput.mlir:1:1, input.mlir alone\n"
        );
        assert_eq!(rename_source(text, "input.mlir", "input.mlir"), text);
        assert_eq!(rename_source(text, "", "y"), text);
    }

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
