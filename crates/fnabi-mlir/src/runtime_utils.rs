//! MLIR's runtime utilities — `printMemrefF32`, `printF32`, `printNewline`,
//! `memrefCopy`, `rtclock` and the rest of `libmlir_c_runner_utils` and
//! `libmlir_runner_utils` — located for the toolchain's MLIR version, with
//! the functions each library exports.
//!
//! Debian ships them in `libmlir-N` (a dependency of `mlir-N-tools` for 22,
//! a separate package for 19) under `llvm-config-N --libdir`; without
//! `libmlir-N-dev` only the versioned names (`libmlir_runner_utils.so.22.1`)
//! exist, so both spellings are looked for. Linking one of them drags in
//! `libLLVM` (and `libMLIR` for the C utilities), so a module links them
//! only when it uses them (see [`crate::externals`]).
//!
//! A module reaches these functions through MLIR's C interface: fnabi's
//! pipeline gives every declaration a `_mlir_ciface_` wrapper, so a call of
//! `@printMemrefF32` calls `_mlir_ciface_printMemrefF32`, which the library
//! exports. The scalar utilities (`printF32`, `printNewline`, …) exist only
//! under their plain names; [`RuntimeUtils::lookup`] reports that, and the
//! module then gets a small C shim from its `_mlir_ciface_` name to the
//! plain one.

use crate::compile::Toolchain;
use crate::elf::{Binding, ElfFile, SymbolKind};
use fnabi_core::error::Error;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The runtime libraries, by link name (`lib<name>.so`), in lookup order.
pub const LIBRARIES: [&str; 2] = ["mlir_c_runner_utils", "mlir_runner_utils"];

/// One runtime library and the functions it defines.
///
/// ```
/// use fnabi_mlir::RuntimeUtils;
/// use fnabi_mlir::runtime_utils::RuntimeLibrary;
/// let tools = fnabi_mlir::Toolchain::find()?;
/// let rt = RuntimeUtils::for_toolchain(&tools)?;
/// let c = rt.libraries().iter().find(|l| l.file_name().starts_with("libmlir_c_runner_utils")).unwrap();
/// // reading the same file again finds the same functions
/// let again = RuntimeLibrary::read(c.path())?;
/// assert!(again.defines("printF32") && again.defines("printNewline"));
/// assert!(!again.defines("no_such_function"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct RuntimeLibrary {
    path: PathBuf,
    functions: HashSet<String>,
}

impl RuntimeLibrary {
    /// Reads the functions that the shared library at `path` exports.
    pub fn read(path: impl Into<PathBuf>) -> Result<RuntimeLibrary, Error> {
        let path = path.into();
        let bytes = std::fs::read(&path).map_err(|e| Error::io(path.display().to_string(), e))?;
        let elf = ElfFile::parse(&bytes)?;
        let mut functions = HashSet::new();
        for s in elf.dynamic_symbols() {
            let s = s?;
            if s.defined
                && s.kind == SymbolKind::Func
                && s.binding != Binding::Local
                && let Some(n) = s.name_str()
            {
                functions.insert(n.to_owned());
            }
        }
        Ok(RuntimeLibrary { path, functions })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its file name (`libmlir_runner_utils.so.22.1`).
    pub fn file_name(&self) -> String {
        self.path.file_name().map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into_owned())
    }

    /// True when it exports the function `symbol`.
    pub fn defines(&self, symbol: &str) -> bool {
        self.functions.contains(symbol)
    }
}

/// How a runtime library provides an external function `@name`.
///
/// ```
/// use fnabi_mlir::RuntimeUtils;
/// let tools = fnabi_mlir::Toolchain::find()?;
/// let rt = RuntimeUtils::for_toolchain(&tools)?;
/// // printMemrefF32 is exported in C-interface form; printF32 only plainly
/// assert!(rt.lookup("printMemrefF32").unwrap().ciface);
/// let f32 = rt.lookup("printF32").unwrap();
/// assert!(!f32.ciface);
/// assert!(f32.library.defines("printF32"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RuntimeSymbol<'a> {
    /// The library.
    pub library: &'a RuntimeLibrary,
    /// True when it exports `_mlir_ciface_<name>` (what the module calls);
    /// false when only the plain `<name>` (then a shim forwards to it).
    pub ciface: bool,
}

/// The runtime libraries found for one MLIR version (maybe none).
///
/// ```
/// use fnabi_mlir::RuntimeUtils;
/// assert!(RuntimeUtils::none().is_empty());
/// assert!(RuntimeUtils::none().lookup("printF32").is_none());
/// let tools = fnabi_mlir::Toolchain::find()?;
/// let rt = RuntimeUtils::for_toolchain(&tools)?;
/// // both runtime libraries ship with the MLIR tools
/// assert_eq!(rt.libraries().len(), 2);
/// assert!(rt.lookup("printMemrefF32").is_some());
/// assert!(rt.lookup("my_own_function").is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct RuntimeUtils {
    libraries: Vec<RuntimeLibrary>,
    /// Where they were looked for and the package that has them (for messages).
    searched: Option<(PathBuf, String)>,
}

static FOUND: Mutex<Vec<(PathBuf, Arc<RuntimeUtils>)>> = Mutex::new(Vec::new());

impl RuntimeUtils {
    /// No runtime libraries.
    pub fn none() -> RuntimeUtils {
        RuntimeUtils::default()
    }

    /// The libraries of MLIR `version` in `libdir`: `lib<name>.so`, else
    /// `lib<name>.so.<version>…` (a library that is not there is left out;
    /// one that is there but unreadable is an error).
    pub fn find_in(libdir: &Path, version: u32) -> Result<RuntimeUtils, Error> {
        let mut libraries = Vec::new();
        for name in LIBRARIES {
            if let Some(path) = locate(libdir, name, version) {
                libraries.push(RuntimeLibrary::read(path)?);
            }
        }
        Ok(RuntimeUtils { libraries, searched: Some((libdir.to_path_buf(), format!("libmlir-{version}"))) })
    }

    /// The libraries of a toolchain's version, looked up once per process.
    pub fn for_toolchain(tools: &Toolchain) -> Result<Arc<RuntimeUtils>, Error> {
        let mut found = FOUND.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, r)) = found.iter().find(|(d, _)| *d == tools.libdir) {
            return Ok(r.clone());
        }
        let r = Arc::new(RuntimeUtils::find_in(&tools.libdir, tools.version)?);
        found.push((tools.libdir.clone(), r.clone()));
        Ok(r)
    }

    /// The libraries found.
    pub fn libraries(&self) -> &[RuntimeLibrary] {
        &self.libraries
    }

    /// True when none was found.
    pub fn is_empty(&self) -> bool {
        self.libraries.is_empty()
    }

    /// The library that provides the external function `@name`: the first
    /// exporting `_mlir_ciface_<name>`, else the first exporting `<name>`.
    pub fn lookup(&self, name: &str) -> Option<RuntimeSymbol<'_>> {
        let ciface = format!("{}{name}", crate::elf::CIFACE_PREFIX);
        if let Some(library) = self.libraries.iter().find(|l| l.defines(&ciface)) {
            return Some(RuntimeSymbol { library, ciface: true });
        }
        self.libraries.iter().find(|l| l.defines(name)).map(|library| RuntimeSymbol { library, ciface: false })
    }

    /// A hint for messages about a function nobody provides: where the
    /// runtime utilities were looked for when none was found.
    pub(crate) fn missing_hint(&self) -> Option<String> {
        match (&self.searched, self.libraries.len()) {
            (Some((dir, package)), 0) => Some(format!(
                "MLIR's runtime utilities are not installed (no libmlir_c_runner_utils or libmlir_runner_utils in {}; \
                 apt-get install {package})",
                dir.display()
            )),
            _ => None,
        }
    }
}

/// `lib<name>.so` in `dir`, else the lexically first `lib<name>.so.<version>…`.
fn locate(dir: &Path, name: &str, version: u32) -> Option<PathBuf> {
    let plain = dir.join(format!("lib{name}.so"));
    if plain.is_file() {
        return Some(plain);
    }
    let exact = format!("lib{name}.so.{version}");
    let dotted = format!("{exact}.");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n == exact || n.starts_with(&dotted)
        })
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_plain_then_versioned_names() {
        /// Removes the folder on drop, also when an assert below fails.
        struct RemovedOnDrop(PathBuf);
        impl Drop for RemovedOnDrop {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
        let dir = std::env::temp_dir().join(format!("fnabi-rt-locate-{}", std::process::id()));
        let _guard = RemovedOnDrop(dir.clone());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("libmlir_runner_utils.so.22.1"), b"x").unwrap();
        std::fs::write(dir.join("libmlir_runner_utils.so.19.1"), b"x").unwrap();
        std::fs::write(dir.join("libmlir_runner_utils.so.220"), b"x").unwrap();
        assert_eq!(locate(&dir, "mlir_runner_utils", 22), Some(dir.join("libmlir_runner_utils.so.22.1")));
        assert_eq!(locate(&dir, "mlir_runner_utils", 19), Some(dir.join("libmlir_runner_utils.so.19.1")));
        assert_eq!(locate(&dir, "mlir_runner_utils", 18), None);
        assert_eq!(locate(&dir, "mlir_c_runner_utils", 22), None);
        std::fs::write(dir.join("libmlir_runner_utils.so"), b"x").unwrap();
        assert_eq!(locate(&dir, "mlir_runner_utils", 22), Some(dir.join("libmlir_runner_utils.so")));
        // A file that is there but not an ELF library is an error, not "absent".
        let e = RuntimeUtils::find_in(&dir, 22).unwrap_err().to_string();
        assert!(e.contains("at byte 0"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(locate(&dir, "mlir_runner_utils", 22), None, "a missing directory");
        let none = RuntimeUtils::find_in(&dir, 22).unwrap();
        assert!(none.is_empty() && none.lookup("printF32").is_none());
        assert!(none.missing_hint().unwrap().contains("apt-get install libmlir-22"));
        assert!(RuntimeUtils::none().missing_hint().is_none());
    }
}
