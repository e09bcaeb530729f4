//! Finding the MLIR/LLVM tools ([`Toolchain`]): which version, where its
//! binaries and runtime libraries are, remembered per `llvm-config` binary.

use super::*;
use fnabi_core::cache::fnv1a_128;

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
    pub(super) mlir_opt: PathBuf,
    pub(super) mlir_translate: PathBuf,
    pub(super) opt: PathBuf,
    pub(super) llc: PathBuf,
    pub(super) cc: PathBuf,
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
