//! `fnabi.Module` and `fnabi.Function`: a loaded module (MLIR source,
//! a shared library of MLIR-compiled code, an IREE `.vmfb`) and its
//! functions, called with Python values; both pickle by what they were
//! loaded from.

use crate::convert::{self, Keep};
use crate::errors::{self, Kind};
use fnabi::function::PreparedCall;
use fnabi::mlir::MlirModule;
use fnabi::structure::PathKey;
use fnabi::{Dict, Value};
use pyo3::prelude::*;
#[cfg(feature = "iree")]
use pyo3::types::PyBytes;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What a module was loaded from: enough to load it again in another
/// process (pickling).
#[derive(Clone, Debug)]
enum Source {
    /// MLIR source text (compiled through the cache), the file it came
    /// from, and whether it is compiled with runtime checks.
    Mlir { path: Option<PathBuf>, text: String, runtime_checks: bool },
    /// A shared library of MLIR-compiled code.
    Library { path: PathBuf },
    /// An IREE module file's bytes, and the file they came from.
    #[cfg(feature = "iree")]
    Vmfb { path: Option<PathBuf>, bytes: Vec<u8>, device: fnabi_iree::Device },
}

impl Source {
    fn kind(&self) -> &'static str {
        match self {
            Source::Mlir { runtime_checks: false, .. } => "mlir",
            Source::Mlir { runtime_checks: true, .. } => "mlir-checked",
            Source::Library { .. } => "library",
            #[cfg(feature = "iree")]
            Source::Vmfb { .. } => "vmfb",
        }
    }

    fn path(&self) -> Option<&Path> {
        match self {
            Source::Mlir { path, .. } => path.as_deref(),
            Source::Library { path } => Some(path),
            #[cfg(feature = "iree")]
            Source::Vmfb { path, .. } => path.as_deref(),
        }
    }
}

/// The loaded code.
enum Loaded {
    Mlir(MlirModule),
    #[cfg(feature = "iree")]
    Iree(fnabi_iree::IreeModule),
}

impl Loaded {
    fn mlir(&self) -> Option<&MlirModule> {
        match self {
            Loaded::Mlir(m) => Some(m),
            #[cfg(feature = "iree")]
            Loaded::Iree(_) => None,
        }
    }
}

/// Signatures given at load time for a library without its source.
#[derive(Clone, Debug, Default)]
enum Signatures {
    #[default]
    None,
    /// One signature, for whichever function is asked for.
    All(String),
    /// A signature per function name.
    Each(HashMap<String, String>),
}

impl Signatures {
    fn of(&self, name: &str) -> Option<&str> {
        match self {
            Signatures::None => None,
            Signatures::All(s) => Some(s),
            Signatures::Each(m) => m.get(name).map(String::as_str),
        }
    }

    fn from_py(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Signatures> {
        let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(Signatures::None) };
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(Signatures::All(s.to_cow()?.into_owned()));
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            return Ok(Signatures::Each(d.extract()?));
        }
        Err(errors::error(
            obj.py(),
            Kind::Call,
            "signature must be a str (an MLIR function type or a mangled raw signature) or a dict of them by function name",
        ))
    }

    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Signatures::None => Ok(py.None().into_bound(py)),
            Signatures::All(s) => Ok(PyString::new(py, s).into_any()),
            Signatures::Each(m) => Ok(m.clone().into_pyobject(py)?.into_any()),
        }
    }
}

/// A loaded module of compiled functions (see `fnabi.load`).
///
/// `m.functions` lists the names; `m["f"]`, `m.f` and `m.function("f")`
/// give a `fnabi.Function`. Pickles by what it was loaded from (MLIR source
/// text, a library's path, an IREE module's bytes and device).
#[pyclass(frozen, weakref, module = "fnabi")]
pub struct Module {
    loaded: Loaded,
    source: Source,
    signatures: Signatures,
    /// The functions looked up so far, by name.
    /// The functions looked up so far, by name, with their idle call
    /// states (shared by every `fnabi.Function` object of that name, so
    /// that `m.f(x)` in a loop reuses them too).
    functions: Mutex<HashMap<String, Arc<CallStates>>>,
}

fn rust_err(py: Python<'_>) -> impl Fn(fnabi::Error) -> PyErr + '_ {
    move |e| errors::to_py(py, e)
}

impl Module {
    fn open(py: Python<'_>, source: Source, signatures: Signatures) -> PyResult<Module> {
        // A malformed limit in the environment is an error, as the CLI's
        // (it would otherwise be ignored, and the default limit applied).
        if let Some(e) = fnabi::limits::env_error() {
            return Err(errors::error(py, Kind::Base, e));
        }
        let loaded = py
            .detach(|| -> Result<Loaded, fnabi::Error> {
                Ok(match &source {
                    // SAFETY: loading a module runs the code it was compiled
                    // from, which is what the caller of `fnabi.load` asks for.
                    Source::Mlir { text, path, runtime_checks } => {
                        let options = fnabi::mlir::CompileOptions::default().with_runtime_verification(*runtime_checks);
                        match path {
                            // A file is checked as `fnabi run` checks it
                            // (empty, no function) and names its errors.
                            // SAFETY: as below (the code compiled from `text` runs).
                            Some(p) => {
                                Loaded::Mlir(unsafe { MlirModule::compile_named(p, text.as_bytes(), &options) }?)
                            }
                            // Text has no file: its errors name `<string>`,
                            // as Python's own `compile` does.
                            // SAFETY: as below (the code compiled from `text` runs).
                            None => Loaded::Mlir(unsafe {
                                MlirModule::compile_with_options(text, &options.with_source_path("<string>"))
                            }?),
                        }
                    }
                    // SAFETY: as above (the library's initialisers run).
                    Source::Library { path } => Loaded::Mlir(unsafe { MlirModule::load(path) }?),
                    #[cfg(feature = "iree")]
                    // SAFETY: as above (the module runs in-process in IREE's runtime).
                    Source::Vmfb { bytes, device, .. } => {
                        Loaded::Iree(unsafe { fnabi_iree::IreeModule::from_bytes(bytes, *device) }?)
                    }
                })
            })
            .map_err(rust_err(py))?;
        Ok(Module { loaded, source, signatures, functions: Mutex::new(HashMap::new()) })
    }

    /// Loads `path` (see `fnabi.load`).
    pub fn load(
        py: Python<'_>,
        path: PathBuf,
        device: Option<&str>,
        signature: Option<&Bound<'_, PyAny>>,
        backend: Option<&str>,
        runtime_checks: bool,
    ) -> PyResult<Module> {
        let signatures = Signatures::from_py(signature)?;
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        // An IREE module by another name (`iree-compile -o model.bin`) is
        // known by its bytes, as `fnabi run` knows it.
        let ext = if ext != "mlir" && ext != "vmfb" && looks_like_vmfb_file(&path) { "vmfb" } else { ext };
        let read_err = |e: std::io::Error| errors::to_py(py, fnabi::Error::io(path.display().to_string(), e));
        let iree = match backend {
            None | Some("mlir") => false,
            Some("iree") if ext == "mlir" => true,
            Some("iree") => {
                return Err(errors::error(py, Kind::Call, "backend= applies to MLIR source (.mlir) only"));
            }
            Some(other) => {
                return Err(errors::error(
                    py,
                    Kind::Call,
                    format!("backend must be \"mlir\" or \"iree\", not {other:?}"),
                ));
            }
        };
        if ext != "vmfb" && !iree && device.is_some() {
            return Err(errors::error(
                py,
                Kind::Call,
                "device= applies to IREE modules (.vmfb, or backend=\"iree\") only",
            ));
        }
        if runtime_checks && (ext != "mlir" || iree) {
            return Err(errors::error(
                py,
                Kind::Call,
                "runtime_checks= applies to MLIR source (.mlir) compiled by the MLIR backend only",
            ));
        }
        let source = match ext {
            "mlir" => {
                if iree {
                    if !matches!(signatures, Signatures::None) {
                        return Err(errors::error(
                            py,
                            Kind::Call,
                            "signature= applies to the MLIR backend (IREE modules declare their functions)",
                        ));
                    }
                    let bytes = compile_for_iree(py, &path)?;
                    return Module::open(py, vmfb_source(py, Some(path), Some(bytes), device)?, signatures);
                }
                Source::Mlir {
                    text: std::fs::read_to_string(&path).map_err(read_err)?,
                    path: Some(path),
                    runtime_checks,
                }
            }
            "vmfb" => vmfb_source(py, Some(path.clone()), None, device)?,
            _ => Source::Library { path },
        };
        Module::open(py, source, signatures)
    }

    /// The function `name`, from the cache or looked up now.
    fn lookup(&self, py: Python<'_>, name: &str) -> PyResult<Arc<CallStates>> {
        if let Some(f) = self.functions.lock().unwrap_or_else(|e| e.into_inner()).get(name) {
            return Ok(f.clone());
        }
        let f = match &self.loaded {
            Loaded::Mlir(m) => match self.signatures.of(name) {
                Some(sig) => m.function_with_signature(name, sig),
                None => m.function(name),
            },
            #[cfg(feature = "iree")]
            Loaded::Iree(m) => {
                if !m.exports().iter().any(|e| e.name() == name) {
                    return Err(self.not_found(py, name));
                }
                m.function(name)
            }
        };
        let f = f.map_err(|e| match e.backend_error::<fnabi::mlir::MlirError>() {
            Some(fnabi::mlir::MlirError::NotFound(m)) => errors::error(py, Kind::NotFound, m.clone()),
            _ => errors::to_py(py, e),
        })?;
        let states = Arc::new(CallStates::new(f, |_| Mutex::new(Vec::new())));
        let mut cache = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        Ok(cache.entry(name.to_owned()).or_insert(states).clone())
    }

    fn names(&self) -> Result<Vec<String>, fnabi::Error> {
        match &self.loaded {
            Loaded::Mlir(m) => m.function_names(),
            #[cfg(feature = "iree")]
            // `__init` and the like are the runtime's, not the caller's.
            Loaded::Iree(m) => {
                Ok(m.exports().iter().map(|e| e.name()).filter(|n| !n.starts_with("__")).map(str::to_owned).collect())
            }
        }
    }

    fn not_found(&self, py: Python<'_>, name: &str) -> PyErr {
        let names = self.names().unwrap_or_default().join(", ");
        errors::error(py, Kind::NotFound, format!("the module has no function {name:?} (it has: {names})"))
    }
}

/// Whether the file at `path` starts as a `.vmfb` does (a ZIP, or a
/// size-prefixed FlatBuffer with IREE's identifier); `false` when it cannot
/// be read (loading it then says why).
fn looks_like_vmfb_file(path: &Path) -> bool {
    let n = fnabi::vmfb::MAGIC_BYTES;
    let mut head = Vec::with_capacity(n);
    std::fs::File::open(path).and_then(|f| f.take(n as u64).read_to_end(&mut head)).is_ok()
        && fnabi::vmfb::looks_like_vmfb(&head)
}

#[cfg(feature = "iree")]
fn vmfb_source(
    py: Python<'_>,
    path: Option<PathBuf>,
    bytes: Option<Vec<u8>>,
    device: Option<&str>,
) -> PyResult<Source> {
    let device: fnabi_iree::Device = device.unwrap_or("local-sync").parse().map_err(rust_err(py))?;
    let bytes = match (bytes, &path) {
        (Some(b), _) => b,
        (None, Some(p)) => {
            std::fs::read(p).map_err(|e| errors::to_py(py, fnabi::Error::io(p.display().to_string(), e)))?
        }
        (None, None) => return Err(errors::error(py, Kind::Load, "an IREE module needs a path or its bytes")),
    };
    Ok(Source::Vmfb { path, bytes, device })
}

/// The `.vmfb` that IREE's compiler (`iree-compile`, found as `fnabi run
/// --backend iree` finds it) makes of the MLIR file at `path` (cached).
#[cfg(feature = "iree")]
fn compile_for_iree(py: Python<'_>, path: &Path) -> PyResult<Vec<u8>> {
    let source = std::fs::read(path).map_err(|e| errors::to_py(py, fnabi::Error::io(path.display().to_string(), e)))?;
    let options = fnabi_iree::IreeCompileOptions::default().with_source_path(path);
    py.detach(|| -> Result<Vec<u8>, fnabi::Error> {
        let compiler = fnabi_iree::IreeCompiler::find()?;
        Ok(compiler.compile(&source, &options)?.0)
    })
    .map_err(rust_err(py))
}

#[cfg(not(feature = "iree"))]
fn compile_for_iree(py: Python<'_>, _: &Path) -> PyResult<Vec<u8>> {
    vmfb_source(py, None, None, None).map(|_| Vec::new())
}

#[cfg(not(feature = "iree"))]
fn vmfb_source(py: Python<'_>, _: Option<PathBuf>, _: Option<Vec<u8>>, _: Option<&str>) -> PyResult<Source> {
    Err(errors::error(
        py,
        Kind::Load,
        "this build of fnabi has no IREE runtime: rebuild the package with the cargo feature `iree` \
         (maturin build --features iree)",
    ))
}

#[pymethods]
impl Module {
    /// The names of the functions a caller can call.
    #[getter]
    fn functions(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.names().map_err(rust_err(py))
    }

    /// The file the module was loaded from (`None` for source text).
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.source.path().map(Path::to_path_buf)
    }

    /// The shared library that holds an MLIR module's code (for MLIR
    /// source, the compiled library in fnabi's compile cache); `None` for
    /// IREE modules.
    #[getter]
    fn library_path(&self) -> Option<PathBuf> {
        self.loaded.mlir().map(|m| m.library().path().to_path_buf())
    }

    /// What the module is: `"mlir"` (compiled from MLIR source;
    /// `"mlir-checked"` with runtime checks), `"library"` (a shared library,
    /// or LLVM IR compiled from its file) or `"vmfb"` (an IREE module).
    #[getter]
    fn kind(&self) -> &'static str {
        self.source.kind()
    }

    /// The function `name`; a library without its source takes its
    /// signature here (an MLIR function type or a mangled raw signature)
    /// unless one was given to `fnabi.load`.
    #[pyo3(signature = (name, signature = None))]
    fn function(slf: &Bound<'_, Self>, name: &str, signature: Option<&str>) -> PyResult<Function> {
        let py = slf.py();
        let m = slf.get();
        let states = match (signature, m.loaded.mlir()) {
            (Some(sig), Some(mm)) => {
                let f = mm.function_with_signature(name, sig).map_err(rust_err(py))?;
                Arc::new(CallStates::new(f, |_| Mutex::new(Vec::new())))
            }
            (Some(_), _) => {
                return Err(errors::error(py, Kind::Call, "signature= applies to libraries of MLIR-compiled code"));
            }
            (None, _) => m.lookup(py, name)?,
        };
        let may_write = states.borrow_owner().may_write_arguments();
        Ok(Function {
            states,
            module: slf.clone().unbind(),
            signature: signature.map(str::to_owned),
            may_write,
            zero_d: std::sync::OnceLock::new(),
        })
    }

    fn __getitem__(slf: &Bound<'_, Self>, name: &str) -> PyResult<Function> {
        Module::function(slf, name, None)
    }

    fn __getattr__(slf: &Bound<'_, Self>, name: &str) -> PyResult<Function> {
        let py = slf.py();
        if name.starts_with("__") {
            return Err(pyo3::exceptions::PyAttributeError::new_err(name.to_owned()));
        }
        let m = slf.get();
        let known = m.functions.lock().unwrap_or_else(|e| e.into_inner()).contains_key(name)
            || m.names().map_err(rust_err(py))?.iter().any(|n| n == name);
        if !known && m.signatures.of(name).is_none() {
            return Err(m.not_found(py, name));
        }
        Module::function(slf, name, None)
    }

    fn __contains__(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        Ok(self.names().map_err(rust_err(py))?.iter().any(|n| n == name))
    }

    fn __dir__(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        let mut names: Vec<String> =
            ["functions", "function", "path", "kind", "library_path"].map(String::from).to_vec();
        names.extend(slf.get().names().unwrap_or_default());
        Ok(names)
    }

    fn __repr__(&self) -> String {
        match self.source.path() {
            Some(p) => format!("<fnabi.Module {} {:?}>", self.source.kind(), p.display().to_string()),
            None => format!("<fnabi.Module {} from source>", self.source.kind()),
        }
    }

    /// Pickles by what the module was loaded from: MLIR source text (the
    /// other side compiles it, or finds it in its compile cache), a
    /// library's path, an IREE module's bytes and device.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let m = slf.get();
        let ctor = py.import("fnabi._fnabi")?.getattr("_module_from_state")?;
        let path = m.source.path().map(Path::to_path_buf);
        let (payload, device): (Bound<'py, PyAny>, Option<&str>) = match &m.source {
            Source::Mlir { text, .. } => (PyString::new(py, text).into_any(), None),
            Source::Library { .. } => (py.None().into_bound(py), None),
            #[cfg(feature = "iree")]
            Source::Vmfb { bytes, device, .. } => (PyBytes::new(py, bytes).into_any(), Some(device.name())),
        };
        let args = (m.source.kind(), path, payload, device, m.signatures.to_py(py)?).into_pyobject(py)?;
        Ok((ctor, args))
    }
}

/// Re-creates a pickled module (see `Module.__reduce__`).
#[pyfunction]
#[pyo3(signature = (kind, path, payload, device, signature))]
pub fn _module_from_state(
    py: Python<'_>,
    kind: &str,
    path: Option<PathBuf>,
    payload: &Bound<'_, PyAny>,
    device: Option<&str>,
    signature: &Bound<'_, PyAny>,
) -> PyResult<Module> {
    let signatures = Signatures::from_py(Some(signature))?;
    let source = match kind {
        "mlir" | "mlir-checked" => {
            Source::Mlir { path, text: payload.extract()?, runtime_checks: kind == "mlir-checked" }
        }
        "library" => Source::Library {
            path: path.ok_or_else(|| errors::error(py, Kind::Load, "a pickled library module without its path"))?,
        },
        "vmfb" => vmfb_source(py, path, Some(payload.extract()?), device)?,
        other => return Err(errors::error(py, Kind::Load, format!("unknown pickled module kind {other:?}"))),
    };
    Module::open(py, source, signatures)
}

/// Re-creates a pickled function (see `Function.__reduce__`).
#[pyfunction]
#[pyo3(signature = (module, name, signature = None))]
pub fn _function_from_state(module: &Bound<'_, Module>, name: &str, signature: Option<&str>) -> PyResult<Function> {
    Module::function(module, name, signature)
}

/// Compiles MLIR source text (cached like files) into a `Module`;
/// ``runtime_checks`` as for `fnabi.load`.
#[pyfunction]
#[pyo3(signature = (source, *, runtime_checks = false))]
pub fn compile_mlir(py: Python<'_>, source: String, runtime_checks: bool) -> PyResult<Module> {
    Module::open(py, Source::Mlir { path: None, text: source, runtime_checks }, Signatures::None)
}

/// One compiled function, called with Python values: `f(*args, **kwargs)`.
///
/// Arguments bind by position and keyword to the function's input
/// structure (its `sip` attribute or `iree.abi` record; its parameters in
/// order otherwise); nested dicts, lists and tuples bind through it. Leaves
/// are numpy arrays (any layout; passed without a copy when the parameter's
/// layout accepts them, converted otherwise), anything numpy views without
/// copying (`__dlpack__`, `__array__`, the buffer protocol) and
/// int/float/bool scalars (also for a 0-d array parameter, as a 0-d array
/// of its dtype). Arrays are never cast: a mismatch raises
/// `fnabi.CallError` with `path`, `expected` and `got`.
///
/// One result is the value itself, several a tuple, a structured result
/// keeps its structure. Arrays are numpy arrays over the callee's memory
/// (no copy), released with their last reference. Calls release the GIL;
/// one function may be called from several threads at once. Pickles as its
/// module and name.
#[pyclass(frozen, weakref, module = "fnabi")]
pub struct Function {
    /// The function, and call states kept between calls (their argument
    /// lists, descriptors and arenas) so that a call allocates none.
    states: Arc<CallStates>,
    module: Py<Module>,
    /// The signature it was looked up with, if any (for pickling).
    signature: Option<String>,
    /// Whether its code may write into an array argument (a memref-level
    /// MLIR function): a read-only numpy array (`mmap_mode="r"`, a view of
    /// `bytes`, `writeable=False`) is then passed as a copy.
    may_write: bool,
    /// Its parameters that are 0-d arrays (`tensor<f32>`), the others
    /// `Any`: a Python number passed for one becomes a 0-d array of its
    /// dtype, as `fnabi run` reads a bare number (made at the first call
    /// with a number among its arguments).
    zero_d: std::sync::OnceLock<Vec<fnabi::coerce::InputParam>>,
}

/// Prepared calls of one function, each borrowing it.
type Prepared<'f> = Mutex<Vec<PreparedCall<'f>>>;

self_cell::self_cell!(
    /// A function with the prepared calls of it that are not in use.
    struct CallStates {
        owner: fnabi::Function,
        #[not_covariant]
        dependent: Prepared,
    }
);

/// The most idle call states a function keeps (one per thread that calls
/// it at once, up to this many).
const MAX_IDLE_STATES: usize = 8;

impl Function {
    fn func(&self) -> &fnabi::Function {
        self.states.borrow_owner()
    }

    /// Calls through an idle prepared state (or a new one), with the GIL
    /// released.
    fn call_released(
        &self,
        py: Python<'_>,
        args: Vec<Value<'_>>,
        kwargs: Dict<'_>,
    ) -> Result<Value<'static>, fnabi::Error> {
        self.states.with_dependent(|f, idle| {
            let state = idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let mut state = state.unwrap_or_else(|| f.prepare());
            let (out, state) = py.detach(move || (state.call_kw(args, kwargs), state));
            let mut idle = idle.lock().unwrap_or_else(|e| e.into_inner());
            if idle.len() < MAX_IDLE_STATES {
                idle.push(state);
            }
            out
        })
    }

    /// The arguments with each number passed for a 0-d array parameter as
    /// a 0-d array of its dtype (range-checked); the rest unchanged.
    fn numbers_to_zero_d<'a>(
        &self,
        positional: Vec<Value<'a>>,
        keywords: Dict<'a>,
    ) -> Result<(Vec<Value<'a>>, Dict<'a>), fnabi::Error> {
        use fnabi::coerce::{InputParam, InputType};
        let params = self.zero_d.get_or_init(|| {
            let params = self.func().input_params().unwrap_or_default();
            params
                .into_iter()
                .map(|p| match p.ty {
                    InputType::Array { dims: Some(ref d), .. } if d.is_empty() => p,
                    _ => InputParam { name: p.name, ty: InputType::Any },
                })
                .collect()
        });
        // Numbers only: anything else goes to the call as it is (a list
        // for a 0-d parameter gets the call's own error).
        fnabi::coerce::map_arguments(positional, keywords, params, |v, p, key| match v {
            Value::Int(_) | Value::Float(_) | Value::Bool(_) if p.ty != InputType::Any => {
                fnabi::coerce::coerce_argument(v, &p.ty, key)
            }
            v => Ok(v),
        })
    }

    /// The `func.func` header's ABI attributes and the raw signature of an
    /// MLIR function (`None` for IREE functions).
    fn mlir_backend(&self, py: Python<'_>) -> PyResult<Option<fnabi::mlir::MlirBackend>> {
        let module = self.module.get();
        let Some(m) = module.loaded.mlir() else { return Ok(None) };
        let lib = m.library();
        let name = self.func().name();
        let sig = self.signature.as_deref().or_else(|| module.signatures.of(name));
        let f = match sig {
            Some(s) => fnabi::mlir::module::parse_signature(s).and_then(|ty| lib.function_with_type(name, ty)),
            None => lib.function(name),
        };
        f.and_then(|f| fnabi::mlir::MlirBackend::new(f, lib)).map(Some).map_err(rust_err(py))
    }
}

#[pymethods]
impl Function {
    /// Calls the function. Positional and keyword arguments bind to its
    /// input structure (its `sip` or `iree.abi` record; its parameters in
    /// order otherwise); nested dicts, lists and tuples bind through it.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut keep = Keep::new(self.may_write);
        let mut positional: Vec<Value<'_>> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            // SAFETY: `keep` outlives the call below, the only use of the
            // values (they are moved into it).
            let v = unsafe { convert::to_value(&a, &mut keep) };
            positional.push(v.map_err(|f| f.within(PathKey::Index(i)).into_py(py))?);
        }
        let mut keywords = Dict::with_capacity(kwargs.map_or(0, |k| k.len()));
        if let Some(kw) = kwargs {
            for (k, a) in kw.iter() {
                let k = keep.key(k.cast::<PyString>()?)?;
                // SAFETY: as above.
                let v = unsafe { convert::to_value(&a, &mut keep) };
                keywords.push_unique(k.clone(), v.map_err(|f| f.within(PathKey::Name(k)).into_py(py))?);
            }
        }
        keep.release_keys();
        let is_number = |v: &Value<'_>| matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_));
        let (positional, keywords) = if positional.iter().chain(keywords.iter().map(|(_, v)| v)).any(is_number) {
            self.numbers_to_zero_d(positional, keywords).map_err(rust_err(py))?
        } else {
            (positional, keywords)
        };
        let out = self.call_released(py, positional, keywords);
        drop(keep);
        convert::to_py(py, out.map_err(rust_err(py))?)
    }

    /// The function's name.
    #[getter]
    fn name(&self) -> &str {
        self.func().name()
    }

    /// A one-line, human-readable signature: for an MLIR function its
    /// structure (when it has a `sip` attribute) and MLIR type; for an IREE
    /// function its `iree.abi` record (else its declaration).
    #[getter]
    fn signature(&self) -> String {
        #[cfg(feature = "iree")]
        if let Loaded::Iree(m) = &self.module.get().loaded {
            let abi = m.export(self.func().name()).ok().and_then(|e| e.attr("iree.abi"));
            if let Some(r) = abi.and_then(|a| fnabi::reflection::FunctionReflection::parse(a).ok()) {
                return format!("@{}{r}", self.func().name());
            }
        }
        self.func().describe()
    }

    /// The structure of its arguments and results in a Python-like form
    /// (`$N` is raw argument or result `N`), when it has a `sip` attribute.
    #[getter]
    fn sip(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let module = self.module.get();
        let Some(m) = module.loaded.mlir() else { return Ok(None) };
        let Some(decl) = m.library().declarations().iter().find(|d| d.name == self.func().name()) else {
            return Ok(None);
        };
        let attrs = decl.abi_attributes().map_err(|e| rust_err(py)(e.into()))?;
        Ok(attrs.sip_signature().map_err(|e| rust_err(py)(e.into()))?.map(|s| s.to_string()))
    }

    /// Its raw signature in the human-readable form (MLIR functions: from
    /// the `f` attribute, else derived from the MLIR types).
    #[getter]
    fn raw(&self, py: Python<'_>) -> PyResult<Option<String>> {
        Ok(self.mlir_backend(py)?.map(|b| b.raw_signature().to_string()))
    }

    /// The module the function belongs to.
    #[getter]
    fn module(&self, py: Python<'_>) -> Py<Module> {
        self.module.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!("<fnabi.Function {}>", self.signature())
    }

    /// Pickles as its module (by source) and name.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let ctor = py.import("fnabi._fnabi")?.getattr("_function_from_state")?;
        let args = (self.module.clone_ref(py), self.func().name(), self.signature.as_deref()).into_pyobject(py)?;
        Ok((ctor, args))
    }
}
