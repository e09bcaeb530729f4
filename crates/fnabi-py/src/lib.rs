//! The `fnabi` Python package's native module (`fnabi._fnabi`): loading
//! modules, calling their functions with numpy arrays and nested
//! structures, and the signature tools — a thin layer over fnabi's public
//! Rust API.

mod convert;
mod errors;
mod module;

use errors::Kind;
use fnabi::{RawSignature, SipSignature};
use pyo3::prelude::*;
use std::path::PathBuf;

/// Loads a module of compiled functions.
///
/// - ``path``: an ``.mlir`` file (compiled with Debian's MLIR tools through
///   fnabi's default pipeline and cached by content hash in
///   ``$FNABI_CACHE_DIR``, else ``~/.cache/fnabi``, as ``fnabi run`` does);
///   a shared library of MLIR-compiled code (``.so``); or an IREE module
///   (``.vmfb``, when the package was built with IREE; a file by another
///   name that starts as an IREE module is one).
/// - ``device``: for IREE modules only: ``"local-sync"`` (default) or ``"local-task"``.
/// - ``signature``: for functions whose types the module does not record (a
///   library without its source; an LLVM-level module's functions that take
///   pointers): an MLIR function type (``"(memref<?xf32>, f32) ->
///   memref<?xf32>"``) or a mangled raw signature, used for every function;
///   or a dict of them by function name. A function whose type is known is
///   checked against it.
/// - ``backend``: for ``.mlir`` files: ``"mlir"`` (default: Debian's MLIR
///   tools, native code in this process) or ``"iree"`` (``iree-compile``
///   3.13, then IREE's runtime; needs the package's IREE feature), to
///   cross-check the two on the same inputs.
/// - ``runtime_checks``: for ``.mlir`` files on the MLIR backend: compile
///   with MLIR's runtime op verification; a failed check (an out-of-bounds
///   index, mismatched dynamic dims) raises `ExecutionError` naming the
///   file and line instead of reading out of bounds.
///
/// Loading runs the module's initialisers and calling its functions runs
/// its code in this process: load only code you trust.
#[pyfunction]
#[pyo3(signature = (path, *, device = None, signature = None, backend = None, runtime_checks = false))]
fn load(
    py: Python<'_>,
    path: PathBuf,
    device: Option<&str>,
    signature: Option<&Bound<'_, PyAny>>,
    backend: Option<&str>,
    runtime_checks: bool,
) -> PyResult<module::Module> {
    module::Module::load(py, path, device, signature, backend, runtime_checks)
}

/// The human-readable form of a mangled signature: a raw function signature
/// (the ``f`` attribute) or a SIP signature (``sip``). ``kind`` is ``"raw"``,
/// ``"sip"`` or ``None`` to detect it (a text that reads both ways is an error).
#[pyfunction]
#[pyo3(signature = (signature, *, kind = None))]
fn demangle(py: Python<'_>, signature: &str, kind: Option<&str>) -> PyResult<String> {
    let parse_err = |what: &str, e: fnabi::ParseError| {
        errors::raise(
            py,
            Kind::Signature,
            errors::Raised {
                message: format!("invalid {what} {} {e}", fnabi::inputs::quoted_excerpt(signature)),
                offset: Some(e.offset()),
                ..Default::default()
            },
        )
    };
    match kind {
        Some("raw") => RawSignature::parse(signature).map(|s| s.to_string()).map_err(|e| parse_err("raw signature", e)),
        Some("sip") => SipSignature::parse(signature).map(|s| s.to_string()).map_err(|e| parse_err("SIP signature", e)),
        Some(other) => {
            Err(errors::error(py, Kind::Call, format!("kind must be \"raw\", \"sip\" or None, not {other:?}")))
        }
        None => match (RawSignature::parse(signature), SipSignature::parse(signature)) {
            (Ok(r), Err(_)) => Ok(r.to_string()),
            (Err(_), Ok(s)) => Ok(s.to_string()),
            (Ok(r), Ok(s)) => Err(errors::error(
                py,
                Kind::Signature,
                format!(
                    "ambiguous signature {signature:?}: it reads as raw {:?} and as SIP {:?}; pass kind=\"raw\" or kind=\"sip\"",
                    r.to_string(),
                    s.to_string()
                ),
            )),
            (Err(r), Err(s)) => Err(errors::error(
                py,
                Kind::Signature,
                format!("invalid signature {}: not raw ({r}), not SIP ({s})", fnabi::inputs::quoted_excerpt(signature)),
            )),
        },
    }
}

/// The mangled form (the ``f`` attribute) of a human-readable raw signature,
/// e.g. ``"(Buffer<float32[?x4]>) -> (sint32)"``.
#[pyfunction]
fn mangle(py: Python<'_>, signature: &str) -> PyResult<String> {
    RawSignature::parse_human(signature).map(|s| s.to_mangled()).map_err(|e| {
        errors::raise(
            py,
            Kind::Signature,
            errors::Raised {
                message: format!("invalid human-readable signature {} {e}", fnabi::inputs::quoted_excerpt(signature)),
                offset: Some(e.offset()),
                ..Default::default()
            },
        )
    })
}

/// Whether this build can load IREE modules (``.vmfb``).
#[pyfunction]
fn has_iree() -> bool {
    cfg!(feature = "iree")
}

#[pymodule]
fn _fnabi(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<module::Module>()?;
    m.add_class::<module::Function>()?;
    m.add_class::<convert::ResultMemory>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(module::compile_mlir, m)?)?;
    m.add_function(wrap_pyfunction!(demangle, m)?)?;
    m.add_function(wrap_pyfunction!(mangle, m)?)?;
    m.add_function(wrap_pyfunction!(has_iree, m)?)?;
    m.add_function(wrap_pyfunction!(module::_module_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(module::_function_from_state, m)?)?;
    Ok(())
}
