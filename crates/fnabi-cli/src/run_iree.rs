//! The IREE side of `fnabi run module.vmfb` (and of `fnabi run model.mlir
//! --backend iree`): compiling MLIR source with `iree-compile`, loading a
//! module's function on a device, and listing its exports. Inputs and
//! outputs (IREE text form, `.npy`, JSON) are shared with MLIR functions and
//! handled by `run`.

use fnabi::Function;
use fnabi_iree::{Device, IreeCompileOptions, IreeCompiler, IreeModule};
use std::path::Path;

/// What `--backend iree` compiles, and how.
pub struct CompileRequest<'a> {
    /// The MLIR source.
    pub source: &'a [u8],
    /// Where it came from (`<stdin>`): errors name it.
    pub path: &'a Path,
    /// `--iree-compile-flag`s.
    pub flags: &'a [String],
    /// `--device`.
    pub device: &'a str,
    /// `--print-pipeline`: show the compiler's command on stderr.
    pub print_command: bool,
}

/// Compiles MLIR source with `iree-compile` (from the cache when there)
/// and loads the module on the device.
pub fn compile(r: &CompileRequest<'_>) -> Result<IreeModule, String> {
    let label = r.path.display();
    if r.source.iter().all(u8::is_ascii_whitespace) {
        return Err(format!("{label} is empty: there is nothing to compile"));
    }
    let device: Device = r.device.parse().map_err(|e: fnabi::Error| e.to_string())?;
    let mut options = IreeCompileOptions::default().with_source_path(r.path);
    options.extra_flags = r.flags.to_vec();
    let compiler = IreeCompiler::find().map_err(|e| e.to_string())?;
    if r.print_command {
        eprintln!(
            "fnabi: pipeline: {} {} {label} -o {}/iree/{}.vmfb",
            compiler.path().display(),
            options.flags().join(" "),
            compiler.cache_dir().display(),
            compiler.cache_key(r.source, &options)
        );
    }
    let (bytes, _) = compiler.compile(r.source, &options).map_err(|e| e.to_string())?;
    // SAFETY: the user asked to run this source's code, as when running an
    // executable; the module was just made by IREE's compiler.
    unsafe { IreeModule::from_bytes(&bytes, device) }.map_err(|e| format!("{label}: {e}"))
}

/// Loads a module from its bytes on `device` (`local-sync` or
/// `local-task`); `label` names it in errors.
pub fn load(bytes: &[u8], label: &str, device: &str) -> Result<IreeModule, String> {
    let device: Device = device.parse().map_err(|e: fnabi::Error| e.to_string())?;
    // SAFETY: the user asked to run this module, as when running an
    // executable: its code is trusted. Its bytes are in memory (not
    // mapped), so a file changed meanwhile cannot fault the process.
    unsafe { IreeModule::from_bytes(bytes, device) }.map_err(|e| format!("{label}: {e}"))
}

/// The names of the functions a module exports, in file order.
pub fn export_names(module: &IreeModule) -> Vec<String> {
    module.exports().iter().map(|e| e.name().to_string()).collect()
}

/// The module's function `name`, called through the conventions of its
/// reflection.
pub fn function(module: &IreeModule, label: &str, name: &str) -> Result<Function, String> {
    let names = export_names(module);
    if !names.iter().any(|n| n == name) {
        // As for MLIR source: the functions a user can call (not the
        // runtime's `__init`).
        let user: Vec<&str> = names.iter().map(String::as_str).filter(|n| !n.starts_with("__")).collect();
        return Err(format!("{label} has no function @{name} (it exports: {})", user.join(", ")));
    }
    module.function(name).map_err(|e| format!("{label}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fnabi/tests/fixtures/iree").join(name)).unwrap()
    }

    #[test]
    fn loads_functions_and_lists_exports() {
        let m = load(&fixture("add.vmfb"), "add.vmfb", "local-task").unwrap();
        let f = function(&m, "add.vmfb", "add_i32").unwrap();
        assert_eq!(f.call([fnabi::Value::Int(2), fnabi::Value::Int(40)]).unwrap(), fnabi::Value::Int(42));
        assert_eq!(export_names(&m), ["add", "add_one", "scale", "add_i32", "__init"]);
    }

    #[test]
    fn errors_are_one_line() {
        let e = load(&fixture("add.vmfb"), "add.vmfb", "gpu").unwrap_err();
        assert_eq!(e, "invalid argument: unknown device \"gpu\" (expected local-sync or local-task)");
        let m = load(&fixture("add.vmfb"), "add.vmfb", "local-sync").unwrap();
        let e = function(&m, "add.vmfb", "nope").unwrap_err();
        assert_eq!(e, "add.vmfb has no function @nope (it exports: add, add_one, scale, add_i32)");
        let e = load(&fixture("add.mlir"), "add.mlir", "local-sync").unwrap_err();
        assert!(e.starts_with("add.mlir: ") && e.contains("not an IREE module"), "{e}");
        assert!(!e.contains('\n'));
    }
}
