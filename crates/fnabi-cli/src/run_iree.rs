//! The IREE side of `fnabi run module.vmfb`: loading a module's function on
//! a device, and listing its exports. Inputs and outputs (IREE text form,
//! `.npy`, JSON) are shared with MLIR functions and handled by `run`.

use fnabi::Function;
use fnabi_iree::{Device, IreeModule};
use std::path::Path;

/// Loads `path` on `device` (`local-sync` or `local-task`) and returns its
/// function `function`, called through the conventions of its reflection.
pub fn load_function(path: &Path, function: &str, device: &str) -> Result<Function, String> {
    let device: Device = device.parse().map_err(|e: fnabi::Error| e.to_string())?;
    let module = load(path, device)?;
    module.function(function).map_err(|e| format!("{}: {e}", path.display()))
}

/// The names of the functions `path` exports, in file order.
pub fn export_names(path: &Path) -> Result<Vec<String>, String> {
    let module = load(path, Device::LocalSync)?;
    Ok(module.exports().iter().map(|e| e.name().to_string()).collect())
}

fn load(path: &Path, device: Device) -> Result<IreeModule, String> {
    // SAFETY: the user asked to run this module, as when running an
    // executable: its code is trusted. It is read into memory rather than
    // mapped, so a file changed meanwhile cannot fault the process.
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: see above.
    unsafe { IreeModule::from_bytes(&bytes, device) }.map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fnabi/tests/fixtures/iree").join(name)
    }

    #[test]
    fn loads_functions_and_lists_exports() {
        let f = load_function(&fixture("add.vmfb"), "add_i32", "local-task").unwrap();
        assert_eq!(f.call([fnabi::Value::Int(2), fnabi::Value::Int(40)]).unwrap(), fnabi::Value::Int(42));
        assert_eq!(export_names(&fixture("add.vmfb")).unwrap(), ["add", "add_one", "scale", "add_i32", "__init"]);
    }

    #[test]
    fn errors_are_one_line() {
        let e = load_function(&fixture("add.vmfb"), "add_i32", "gpu").unwrap_err();
        assert_eq!(e, "invalid argument: unknown device \"gpu\" (expected local-sync or local-task)");
        let e = load_function(&fixture("add.vmfb"), "nope", "local-sync").unwrap_err();
        assert!(e.ends_with(r#"module "module" has no function "nope" (it exports ["add", "add_one", "scale", "add_i32", "__init"])"#), "{e}");
        let e = export_names(&fixture("missing.vmfb")).unwrap_err();
        assert!(e.contains("missing.vmfb: "), "{e}");
        let e = export_names(&fixture("add.mlir")).unwrap_err();
        assert!(e.contains("not an IREE module"), "{e}");
        assert!(!e.contains('\n'));
    }
}
