//! Compiling MLIR source to IREE modules with IREE's own compiler,
//! `iree-compile` (PyPI `iree-base-compiler`, the version of the runtime
//! linked here, 3.13): finding it, running it, its errors (naming the
//! user's file and line, never a temporary file), and a compile cache keyed
//! by the source bytes, the flags and the compiler's version
//! (`fnabi_core::cache`, the MLIR backend's cache, in the folder `iree`).
//!
//! The compiler is looked for in this order: the file `FNABI_IREE_COMPILE`
//! names; `iree-compile` on `PATH`; the tool venv that
//! `scripts/lib/deps.sh` makes, `$FNABI_TOOLS_DIR/iree-venv/bin`
//! (`FNABI_TOOLS_DIR` defaults to `$XDG_CACHE_HOME/fnabi`, else
//! `~/.cache/fnabi`). What `iree-compile --version` says is remembered per
//! binary (path, size and modification time) under the cache's
//! `toolchain` folder: the compiler is a Python script that takes about
//! 0.3 s to start.

use crate::IreeModule;
use crate::runtime::Device;
use fnabi_core::Error;
use fnabi_core::cache::{ArtifactKind, CacheEntry, StagingDir, default_cache_dir, fnv1a_128, writable_dir};
use fnabi_core::progress::Progress;
use fnabi_core::tool::{ToolError, run_tool};
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The PyPI package of the compiler that matches the runtime.
pub const IREE_COMPILER_PACKAGE: &str = "iree-base-compiler==3.13.0";

/// The IREE version of the runtime (`eerie-sys` 0.5.0): modules must come
/// from a compiler of this `major.minor`.
pub const IREE_RUNTIME_VERSION: &str = "3.13";

/// The line that says how to install the compiler.
const INSTALL: &str = "pip install iree-base-compiler==3.13.0";

/// A failure to find or run `iree-compile`, or a compile that failed.
///
/// ```
/// use fnabi_iree::{IreeCompileError, IreeCompileOptions, IreeCompiler};
/// use std::path::Path;
/// let e = IreeCompiler::at(Path::new("/nonexistent/iree-compile")).unwrap_err();
/// assert!(matches!(&e, IreeCompileError::NotInstalled(m) if m.contains("pip install iree-base-compiler==3.13.0")));
///
/// let dir = std::env::temp_dir().join(format!("fnabi-doc-iree-error-{}", std::process::id()));
/// let c = IreeCompiler::find()?.with_cache_dir(&dir);
/// // `return` without the declared i32 result.
/// let bad = b"func.func @f() -> i32 {\n  return\n}\n";
/// let e = c.compile(bad, &IreeCompileOptions::default().with_source_path("bad.mlir")).unwrap_err();
/// let Some(IreeCompileError::Failed { input, stderr, .. }) = e.backend_error::<IreeCompileError>() else {
///     panic!("not a failed compile: {e}")
/// };
/// assert_eq!(input, "bad.mlir");
/// assert!(stderr.contains("bad.mlir:2:"), "{stderr}");
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum IreeCompileError {
    /// No usable `iree-compile`: not found, not runnable, or of another
    /// version than the runtime. The message says what to install.
    NotInstalled(String),
    /// `iree-compile` rejected the input: its diagnostics, which name the
    /// user's file (`model.mlir:3:5: error: …`).
    Failed {
        /// The input as the user knows it (its path, or `<stdin>`).
        input: String,
        /// The compiler's exit status.
        status: String,
        /// Everything it wrote to stderr, temporary names replaced.
        stderr: String,
    },
    /// `iree-compile` ran past the compile timeout and was killed
    /// ([`ToolError::Timeout`], the same timeout as the MLIR backend's:
    /// [`IreeCompileOptions::timeout`], `--compile-timeout`,
    /// `FNABI_COMPILE_TIMEOUT`), or `FNABI_COMPILE_TIMEOUT` is malformed
    /// ([`ToolError::BadTimeout`]).
    Tool(ToolError),
    /// A file-system operation of the compile or its cache failed.
    Io {
        /// What was being done, with the path.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
}

impl fmt::Display for IreeCompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IreeCompileError::NotInstalled(m) => f.write_str(m),
            IreeCompileError::Failed { input, status, stderr } => {
                write!(f, "iree-compile failed ({status}) compiling {input}:\n{}", stderr.trim_end())
            }
            IreeCompileError::Tool(e) => e.fmt(f),
            IreeCompileError::Io { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for IreeCompileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IreeCompileError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<IreeCompileError> for Error {
    fn from(e: IreeCompileError) -> Error {
        Error::backend(e)
    }
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> IreeCompileError {
    let context = context.into();
    move |source| IreeCompileError::Io { context, source }
}

/// How to compile: the flags given to `iree-compile` (see
/// [`IreeCompileOptions::flags`]) and the file the source came from.
///
/// ```
/// use fnabi_iree::IreeCompileOptions;
/// let o = IreeCompileOptions::default().with_target_cpu("host").with_flag("--iree-opt-level=O2");
/// assert_eq!(
///     o.flags(),
///     [
///         "--iree-hal-target-device=local",
///         "--iree-hal-local-target-device-backends=llvm-cpu",
///         "--iree-llvmcpu-target-cpu=host",
///         "--iree-input-demote-f64-to-f32=false",
///         "--mlir-print-op-on-diagnostic=false",
///         "--iree-opt-level=O2",
///     ]
/// );
/// assert_eq!(IreeCompileOptions::default().target_cpu, "generic");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IreeCompileOptions {
    /// `--iree-llvmcpu-target-cpu`: `generic` (the default: code for any
    /// x86-64, as fnabi's MLIR backend makes, and as IREE's fixtures were
    /// compiled) or `host` (this machine's CPU; the cache key then holds
    /// the word `host`, so a cache folder shared by machines of different
    /// CPUs must not be used with it).
    pub target_cpu: String,
    /// `--iree-input-demote-f64-to-f32`: IREE's default demotes `f64` to
    /// `f32` at the function boundary; fnabi turns that off (`false`), so
    /// that a function runs with the types its source declares, as on the
    /// MLIR backend.
    pub demote_f64_to_f32: bool,
    /// More flags, after fnabi's (a later flag wins).
    pub extra_flags: Vec<String>,
    /// The file the source was read from: the compiler's errors and the
    /// module's debug locations name it rather than a temporary file.
    pub source_path: Option<PathBuf>,
    /// The longest `iree-compile` may run; then it is killed with what it
    /// started and the compile fails with [`IreeCompileError::Tool`].
    /// `None`: the process-wide setting (`fnabi --compile-timeout`), else
    /// `FNABI_COMPILE_TIMEOUT` (seconds, `0` for none), else
    /// [`fnabi_core::tool::DEFAULT_COMPILE_TIMEOUT`]; `Some(Duration::MAX)`:
    /// none. Not part of the cache key.
    pub timeout: Option<Duration>,
}

impl Default for IreeCompileOptions {
    fn default() -> Self {
        IreeCompileOptions {
            target_cpu: "generic".into(),
            demote_f64_to_f32: false,
            extra_flags: Vec::new(),
            source_path: None,
            timeout: None,
        }
    }
}

impl IreeCompileOptions {
    /// Options naming the source file.
    pub fn with_source_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.source_path = Some(path.into());
        self
    }

    /// Options with another target CPU (`host`, `znver3`, …).
    pub fn with_target_cpu(mut self, cpu: impl Into<String>) -> Self {
        self.target_cpu = cpu.into();
        self
    }

    /// Options with a compile timeout (see [`IreeCompileOptions::timeout`]).
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Options with one more flag for `iree-compile`.
    pub fn with_flag(mut self, flag: impl Into<String>) -> Self {
        self.extra_flags.push(flag.into());
        self
    }

    /// The flags `iree-compile` gets (before the input and `-o`): a local
    /// `llvm-cpu` device, the target CPU, the f64 demotion, then
    /// [`extra_flags`](IreeCompileOptions::extra_flags).
    pub fn flags(&self) -> Vec<String> {
        let mut f = vec![
            "--iree-hal-target-device=local".to_owned(),
            "--iree-hal-local-target-device-backends=llvm-cpu".to_owned(),
            format!("--iree-llvmcpu-target-cpu={}", self.target_cpu),
            format!("--iree-input-demote-f64-to-f32={}", self.demote_f64_to_f32),
            // A diagnostic without the whole module printed after it
            // ("see current operation:", hundreds of lines).
            "--mlir-print-op-on-diagnostic=false".to_owned(),
        ];
        f.extend(self.extra_flags.iter().cloned());
        f
    }

    /// The name the source has in the compile folder (and so in the
    /// module's locations): the source file's name when it is a plain
    /// `.mlir`/`.mlirbc` name, else `input.mlir`.
    fn input_name(&self) -> String {
        fnabi_core::cache::staged_source_name(self.source_path.as_deref(), &[".mlir", ".mlirbc"], &["module.vmfb"])
    }

    /// The input as the user knows it.
    fn label(&self) -> String {
        self.source_path.as_deref().map_or_else(|| "<source>".to_owned(), |p| p.display().to_string())
    }
}

/// The folder of the tools `scripts/lib/deps.sh` installs:
/// `$FNABI_TOOLS_DIR`, else `$XDG_CACHE_HOME/fnabi`, else `~/.cache/fnabi`.
pub fn tools_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(d) = var("FNABI_TOOLS_DIR") {
        return d;
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return d.join("fnabi");
    }
    var("HOME").unwrap_or_else(std::env::temp_dir).join(".cache").join("fnabi")
}

/// A located `iree-compile` of the runtime's version, and the cache its
/// modules go to.
///
/// ```
/// use fnabi_core::{Array, Value};
/// use fnabi_iree::{Device, IreeCompileOptions, IreeCompiler, IreeModule};
/// let dir = std::env::temp_dir().join(format!("fnabi-doc-iree-compiler-{}", std::process::id()));
/// let c = IreeCompiler::find()?.with_cache_dir(&dir);
/// assert!(c.version().starts_with("3.13"));
/// let src = br#"
///   func.func @twice(%x: tensor<3xf32>) -> tensor<3xf32> {
///     %y = arith.addf %x, %x : tensor<3xf32>
///     return %y : tensor<3xf32>
///   }"#;
/// let options = IreeCompileOptions::default();
/// assert_eq!(c.cache_key(src, &options).len(), 32);
/// let (vmfb, cached) = c.compile(src, &options)?;
/// assert!(cached.starts_with(&dir));
/// assert_eq!(c.compile(src, &options)?.1, cached); // from the cache
/// // SAFETY: a module we just compiled.
/// let module = unsafe { IreeModule::from_bytes(&vmfb, Device::LocalSync)? };
/// let x = Array::from_vec(&[3], vec![1.0f32, 2.5, -4.0])?;
/// let y = module.function("twice")?.call([Value::from(x)])?;
/// assert_eq!(y.as_array().unwrap().to_vec::<f32>()?, [2.0, 5.0, -8.0]);
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct IreeCompiler {
    exe: PathBuf,
    version: String,
    cache_dir: PathBuf,
}

impl IreeCompiler {
    /// Finds `iree-compile` (see the module docs for where) and checks its
    /// version; modules are cached under `fnabi_core::cache::default_cache_dir`.
    pub fn find() -> Result<IreeCompiler, IreeCompileError> {
        if let Some(p) = std::env::var_os("FNABI_IREE_COMPILE").filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            return IreeCompiler::checked(&p).map_err(|why| {
                IreeCompileError::NotInstalled(format!(
                    "FNABI_IREE_COMPILE = {}: {why} ({INSTALL}, then point FNABI_IREE_COMPILE at its iree-compile, \
                     or unset it)",
                    p.display()
                ))
            });
        }
        let venv = tools_dir().join("iree-venv").join("bin");
        let path: Vec<PathBuf> =
            std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
        let found = path.iter().chain([&venv]).map(|d| d.join("iree-compile")).find(|p| p.is_file());
        match found {
            Some(p) => IreeCompiler::at(&p),
            None => Err(IreeCompileError::NotInstalled(format!(
                "iree-compile is not installed (not on PATH, not in {}, FNABI_IREE_COMPILE unset): {INSTALL}",
                venv.display()
            ))),
        }
    }

    /// The `iree-compile` at `exe`, after checking that it runs and is of
    /// the runtime's version ([`IREE_RUNTIME_VERSION`]).
    pub fn at(exe: &Path) -> Result<IreeCompiler, IreeCompileError> {
        IreeCompiler::checked(exe)
            .map_err(|why| IreeCompileError::NotInstalled(format!("{}: {why}: {INSTALL}", exe.display())))
    }

    /// [`at`](IreeCompiler::at), failing with why `exe` cannot be used.
    fn checked(exe: &Path) -> Result<IreeCompiler, String> {
        let meta = std::fs::metadata(exe).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound { "no such file".to_owned() } else { e.to_string() }
        })?;
        let version = probe_version(exe, &meta)?;
        if !version.starts_with(&format!("{IREE_RUNTIME_VERSION}.")) {
            return Err(format!(
                "iree-compile {version}, but fnabi's IREE runtime is {IREE_RUNTIME_VERSION} (modules of other \
                 versions may not load)"
            ));
        }
        Ok(IreeCompiler { exe: exe.to_path_buf(), version, cache_dir: default_cache_dir() })
    }

    /// The same compiler, caching in `dir` (its `iree` folder) instead.
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> IreeCompiler {
        self.cache_dir = dir.into();
        self
    }

    /// The binary.
    pub fn path(&self) -> &Path {
        &self.exe
    }

    /// Its version (`3.13.0rc20261016`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The cache folder (modules go to its `iree` folder).
    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// Everything the module depends on, as one text (the source last).
    fn key_text(&self, source: &[u8], options: &IreeCompileOptions) -> String {
        let flags = options.flags();
        let flags: Vec<String> = flags.iter().map(|f| format!("{} {f}", f.len())).collect();
        format!(
            "fnabi-iree-cache v1\ncompiler {}\ninput {}\nflags {}\n{}\nsource {}\n{}",
            self.version,
            options.input_name(),
            flags.len(),
            flags.join("\n"),
            source.len(),
            // Bytes that are not UTF-8 (MLIR bytecode) are keyed in hex.
            std::str::from_utf8(source)
                .map_or_else(|_| source.iter().map(|b| format!("{b:02x}")).collect(), str::to_owned)
        )
    }

    /// The cache key of `source` with `options`: 32 hex digits.
    pub fn cache_key(&self, source: &[u8], options: &IreeCompileOptions) -> String {
        format!("{:032x}", fnv1a_128(self.key_text(source, options).as_bytes()))
    }

    /// The `.vmfb` bytes compiled from `source` (MLIR text or bytecode)
    /// with `options`, from the cache when there; and the cache entry's path.
    pub fn compile(&self, source: &[u8], options: &IreeCompileOptions) -> Result<(Vec<u8>, PathBuf), Error> {
        let key_text = self.key_text(source, options);
        let key = format!("{:032x}", fnv1a_128(key_text.as_bytes()));
        let dir = writable_dir(&self.cache_dir.join("iree"));
        let entry = CacheEntry::new(&dir, &key, ArtifactKind::VMFB);
        if let Some(bytes) = entry.read_valid(&key_text) {
            return Ok((bytes, entry.artifact));
        }
        // One compile per key: others wait here, then find it built.
        let _lock = entry.lock().map_err(io(format!("locking the cache entry {key}")))?;
        if let Some(bytes) = entry.read_valid(&key_text) {
            return Ok((bytes, entry.artifact));
        }
        let deadline = fnabi_core::tool::deadline(options.timeout).map_err(IreeCompileError::Tool)?;
        let tmp = StagingDir::new(&dir, &key).map_err(io(format!("creating a folder in {}", dir.display())))?;
        let input = options.input_name();
        std::fs::write(tmp.path().join(&input), source).map_err(io(format!("writing {input}")))?;
        // The file name in the progress line (`fnabi: compiling m.mlir: iree-compile (1.2 s)`).
        let shown = options.source_path.as_deref().and_then(Path::file_name);
        let progress = Progress::start(&shown.map_or_else(|| "the module".into(), |n| n.to_string_lossy()));
        progress.stage("iree-compile");
        let mut args = options.flags();
        args.extend([input.clone(), "-o".into(), "module.vmfb".into()]);
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let run = run_tool(&self.exe, &args, Some(tmp.path()), deadline);
        drop(progress);
        if let Err(e) = run {
            let ToolError::Failed { status, mut stderr, .. } = e else {
                return Err(match e {
                    ToolError::Io { context, source } => IreeCompileError::Io { context, source },
                    other => IreeCompileError::Tool(other),
                }
                .into());
            };
            let label = options.label();
            // Relative to the compile folder, the input is only its name.
            stderr = stderr.replace(&format!("{input}:"), &format!("{label}:"));
            stderr = stderr.replace(&format!("\"{input}\""), &format!("\"{label}\""));
            stderr = stderr.replace(&tmp.path().display().to_string(), "<compile folder>");
            if String::from_utf8_lossy(source).contains("memref<") {
                stderr.push_str(
                    "note: iree-compile takes tensor-level MLIR (functions of tensors and scalars); memref code \
                     runs on fnabi's MLIR backend\n",
                );
            }
            return Err(IreeCompileError::Failed { input: label, status, stderr }.into());
        }
        let built = tmp.path().join("module.vmfb");
        let bytes = std::fs::read(&built).map_err(io("reading iree-compile's module.vmfb"))?;
        entry.publish(&built, &key_text).map_err(io(format!("storing {}", entry.artifact.display())))?;
        Ok((bytes, entry.artifact))
    }
}

/// What `iree-compile --version` says its version is, remembered per
/// binary (path, size, modification time).
fn probe_version(exe: &Path, meta: &std::fs::Metadata) -> Result<String, String> {
    let mtime = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    let memo = mtime.map(|t| {
        let key = format!("iree-compile\n{}\n{}\n{}", exe.display(), meta.len(), t.as_nanos());
        default_cache_dir().join("toolchain").join(format!("iree-{:032x}.txt", fnv1a_128(key.as_bytes())))
    });
    if let Some(v) = memo.as_deref().and_then(|m| std::fs::read_to_string(m).ok()).filter(|v| is_version(v)) {
        return Ok(v);
    }
    let out = Command::new(exe).arg("--version").output().map_err(|e| format!("cannot run it: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    // `IREE compiler version 3.13.0rc20261016 @ 89ece87b…`
    let version = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("IREE compiler version "))
        .and_then(|rest| rest.split_whitespace().next())
        .filter(|v| is_version(v) && out.status.success())
        .ok_or_else(|| format!("`--version` printed no IREE compiler version ({})", out.status))?;
    if let Some(m) = memo {
        // Best effort, atomically (a concurrent reader sees all or nothing).
        let staged = m.with_extension(format!("tmp{}", std::process::id()));
        let stored = m.parent().is_some_and(|d| std::fs::create_dir_all(d).is_ok())
            && std::fs::write(&staged, version).is_ok()
            && std::fs::rename(&staged, &m).is_ok();
        if !stored {
            let _ = std::fs::remove_file(&staged);
        }
    }
    Ok(version.to_owned())
}

fn is_version(v: &str) -> bool {
    v.starts_with(|c: char| c.is_ascii_digit()) && !v.contains(char::is_whitespace)
}

impl IreeModule {
    /// Compiles the MLIR file at `path` (tensor level: what `iree-compile`
    /// takes) with the `iree-compile` [`IreeCompiler::find`] finds, from the
    /// cache when there, and loads the module on `device`. Errors name
    /// `path` (and the line, for the compiler's diagnostics).
    ///
    /// ```
    /// # fn main() -> Result<(), fnabi_core::Error> {
    /// use fnabi_core::{Array, Value};
    /// use fnabi_iree::{Device, IreeCompileOptions, IreeModule};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/mlir/cross_backend.mlir");
    /// // SAFETY: our own source, compiled by IREE's compiler, runs in-process.
    /// let module = unsafe { IreeModule::compile_file(path, Device::LocalSync, &IreeCompileOptions::default())? };
    /// let f = module.function("sum_and_double")?;
    /// let out = f.call([Value::from(Array::from_vec(&[4], vec![1i32, -2, 3, 10])?)])?;
    /// let Value::Tuple(t) = &out else { panic!() };
    /// assert_eq!(t[0].as_array().unwrap().to_vec::<i32>()?, [12]);
    /// assert_eq!(t[1].as_array().unwrap().to_vec::<i32>()?, [2, -4, 6, 20]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Safety
    /// As for [`IreeModule::load`]: the module's code runs in this process.
    pub unsafe fn compile_file(
        path: impl AsRef<Path>,
        device: Device,
        options: &IreeCompileOptions,
    ) -> Result<IreeModule, Error> {
        let path = path.as_ref();
        let source = std::fs::read(path).map_err(|e| Error::io(path.display().to_string(), e))?;
        let options = options.clone().with_source_path(path);
        // SAFETY: forwarded to the caller.
        unsafe { IreeModule::compile_source(&source, device, &options) }
    }

    /// Compiles MLIR `source` (text or bytecode; `options.source_path`
    /// names it in errors) and loads the module on `device`, as
    /// [`compile_file`](IreeModule::compile_file) does.
    ///
    /// # Safety
    /// As for [`IreeModule::load`]: the module's code runs in this process.
    pub unsafe fn compile_source(
        source: &[u8],
        device: Device,
        options: &IreeCompileOptions,
    ) -> Result<IreeModule, Error> {
        if source.iter().all(u8::is_ascii_whitespace) {
            return Err(Error::invalid_argument(format!("{} is empty: there is nothing to compile", options.label())));
        }
        let (bytes, _) = IreeCompiler::find()?.compile(source, options)?;
        // SAFETY: forwarded to the caller.
        unsafe { IreeModule::from_bytes(&bytes, device) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_input_names() {
        let o = IreeCompileOptions::default();
        assert_eq!(
            o.flags(),
            [
                "--iree-hal-target-device=local",
                "--iree-hal-local-target-device-backends=llvm-cpu",
                "--iree-llvmcpu-target-cpu=generic",
                "--iree-input-demote-f64-to-f32=false",
                "--mlir-print-op-on-diagnostic=false"
            ]
        );
        assert_eq!(o.input_name(), "input.mlir");
        assert_eq!(o.label(), "<source>");
        let o = o.with_source_path("/some where/my-model.mlir").with_target_cpu("host").with_flag("--x=1");
        assert_eq!(o.input_name(), "my-model.mlir");
        assert_eq!(o.label(), "/some where/my-model.mlir");
        assert_eq!(o.flags()[2], "--iree-llvmcpu-target-cpu=host");
        assert_eq!(o.flags().last().unwrap(), "--x=1");
        for odd in ["a b.mlir", "-x.mlir", "model.txt", "module.vmfb"] {
            assert_eq!(IreeCompileOptions::default().with_source_path(odd).input_name(), "input.mlir", "{odd}");
        }
    }

    #[test]
    fn versions_are_checked() {
        assert!(is_version("3.13.0rc20261016"));
        assert!(!is_version("") && !is_version("x3") && !is_version("3.13 x"));
        let e = IreeCompiler::at(Path::new("/nonexistent/iree-compile")).unwrap_err().to_string();
        assert_eq!(e, "/nonexistent/iree-compile: no such file: pip install iree-base-compiler==3.13.0");
        // A program that is no iree-compile.
        let e = IreeCompiler::at(Path::new("/bin/true")).unwrap_err().to_string();
        assert!(e.starts_with("/bin/true: `--version` printed no IREE compiler version"), "{e}");
    }
}
