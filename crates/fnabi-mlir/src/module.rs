//! MLIR modules as [`Function`]s: [`MlirModule`] loads (or compiles) a
//! module, and each of its functions becomes a [`Function`] whose
//! [`MlirBackend`] binds host values through the function's ABI:
//!
//! - **Inputs**: a `sip` attribute's input structure when there is one
//!   (a dict root binds keyword arguments, a sequence root positional ones),
//!   otherwise the positional arguments in order. Each leaf of the bound
//!   value becomes one argument; a memref leaf goes as-is when its layout
//!   fits (zero copy) and is converted into the call's arena otherwise (the
//!   buffer oracle decides, see [`fnabi_core::buffer`]).
//! - **Raw signature**: the `fv`/`f` attributes when present (checked
//!   against the MLIR types), otherwise derived from the MLIR types.
//! - **Destination passing**: when `f` has results and the MLIR function
//!   takes `k` more memref arguments than `f` has inputs, those trailing
//!   arguments are the destinations of the first `k` raw results, in order,
//!   and the function's own results are the remaining raw results. fnabi
//!   allocates the destinations before the call (deferred result
//!   allocation, [`fnabi_core::deferred`]): static shapes from the signature;
//!   results with dynamic dims from the *result allocator* that `fbr` names
//!   — a function of the module that takes every dynamic input dim (`index`
//!   arguments, in input order) and returns one memref per dynamic
//!   destination, in order. Results that depend on the data are simply the
//!   function's own results (the documents' null slot: allocated by the
//!   callee, known on completion).
//! - **Results**: a `sip` result structure when there is one, otherwise
//!   none → `None`, one → the value, several → a tuple.

use super::{MlirError, signature::Visibility};
use crate::args::Arg;
use crate::call::{MlirFunction, MlirLibrary, PreparedMlirCall, Returned};
use crate::compile::CompileOptions;
use crate::llvm_level::{InputLevel, LlvmFunctions};
use crate::symbol::symbol_ref;
use fnabi_abi::attrs::AbiAttributes;
use fnabi_abi::mlir::types::{FunctionType, MlirType};
use fnabi_abi::raw::{BufferType, Dim, RawSignature, RawType};
use fnabi_abi::scalar::DType;
use fnabi_abi::sip::SipSignature;
use fnabi_core::array::Array;
use fnabi_core::bind::{Parameters, bind_arguments};
use fnabi_core::coerce::{InputParam, InputType};
use fnabi_core::deferred::{ResultSlot, plan_results};
use fnabi_core::error::{CallError, CallSide, Error};
use fnabi_core::function::{Backend, Function, PreparedBackend, pack_results};
use fnabi_core::structure::StructureExt;
use fnabi_core::structure::{IndexPath, PathKey, Plan, Structure};
use fnabi_core::value::{Dict, Value};
use smallvec::SmallVec;
use std::path::Path;
use std::sync::Arc;

/// A loaded module of MLIR-compiled code whose functions are [`Function`]s.
///
/// ```
/// use fnabi_mlir::MlirModule;
/// use fnabi_core::{Array, Value};
/// let src = r#"
///   func.func @axpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) -> f32 attributes {llvm.emit_c_interface} {
///     %c0 = arith.constant 0 : index
///     %x0 = memref.load %x[%c0] : memref<?xf32>
///     %y0 = memref.load %y[%c0] : memref<?xf32>
///     %m = arith.mulf %a, %x0 : f32
///     %s = arith.addf %m, %y0 : f32
///     return %s : f32
///   }"#;
/// // SAFETY: the function reads only its arguments.
/// let m = unsafe { MlirModule::compile(src)? };
/// assert_eq!(m.function_names()?, ["axpy"]);
/// let axpy = m.function("axpy")?;
/// let x = Array::from_vec(&[2], vec![3.0f32, 9.0])?;
/// let y = Array::from_vec(&[2], vec![0.5f32, 9.0])?;
/// // 2 * 3 + 0.5
/// let r = axpy.call([Value::from(2.0), Value::from(x), Value::from(y)])?;
/// assert_eq!(f32::try_from(r)?, 6.5);
/// # Ok::<(), fnabi_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct MlirModule {
    lib: MlirLibrary,
    /// The function headers of an LLVM-level input (see [`crate::llvm_level`]).
    llvm: Option<Arc<LlvmFunctions>>,
}

impl MlirModule {
    /// Loads `path`: a `.mlir` file is compiled (cached) and loaded; anything
    /// else is opened as a shared library (functions then need a signature,
    /// see [`function_with_signature`](MlirModule::function_with_signature)).
    ///
    /// # Safety
    /// Loading runs the library's initialisers and calls run its code: see
    /// [`MlirLibrary::open`].
    pub unsafe fn load(path: impl AsRef<Path>) -> Result<MlirModule, Error> {
        // SAFETY: forwarded to the caller.
        unsafe { MlirModule::load_with(path, &CompileOptions::default()) }
    }

    /// Loads `path` as [`load`](MlirModule::load) does, compiling a `.mlir`
    /// file with `options` (runtime verification; errors and runtime
    /// messages name the file).
    ///
    /// # Safety
    /// As for [`load`](MlirModule::load).
    ///
    /// Every level of input is taken: `.mlir` source (tensor or memref
    /// level), LLVM-dialect `.mlir` (functions are `llvm.func`), LLVM IR
    /// (`.ll`) and bitcode (`.bc`, or known by its magic bytes under any
    /// name) skip the stages already done (see [`crate::llvm_level`]); a
    /// shared library is opened, typed by the ABI
    /// that `fnabi compile` embeds (see [`crate::abi_embed`]) when it has one.
    pub unsafe fn load_with(path: impl AsRef<Path>, options: &CompileOptions) -> Result<MlirModule, Error> {
        let path = path.as_ref();
        let ext = path.extension().and_then(|e| e.to_str());
        let bytes = std::fs::read(path).map_err(|e| MlirError::io(format!("cannot read {}", path.display()), e))?;
        // Source by its name (unless it is an ELF file), or bitcode by its
        // magic bytes under any name; anything else is a library.
        let source = match ext {
            Some("mlir" | "ll" | "bc") => !crate::elf::looks_like_elf(&bytes),
            _ => InputLevel::looks_like_bitcode(&bytes),
        };
        if !source {
            // A library fnabi compiled carries its ABI; read from the file
            // (no code runs) and checked before loading.
            let lib = match crate::abi_embed::read_abi_text(&bytes).ok().flatten() {
                // SAFETY: forwarded to the caller.
                Some(text) => unsafe { MlirLibrary::open_with_source(path, &text) }?,
                // SAFETY: forwarded to the caller.
                None => unsafe { MlirLibrary::open(path) }?,
            };
            return Ok(MlirModule { lib, llvm: None });
        }
        // SAFETY: forwarded to the caller.
        unsafe { MlirModule::compile_named(path, &bytes, options) }
    }

    /// Compiles the source `bytes` of a file called `name` (its extension,
    /// if any, tells `.ll` and `.bc` apart) as
    /// [`load_with`](MlirModule::load_with) compiles a file it has read: an
    /// empty source, one that is not UTF-8 and one without a function are
    /// errors naming `name` ([`MlirError::Load`]), and so are the compile
    /// errors (`name:line:col`).
    /// For sources that are not files: `fnabi run --module=-` names its
    /// `<stdin>`.
    ///
    /// # Safety
    /// As for [`MlirLibrary::compile`].
    pub unsafe fn compile_named(
        name: impl AsRef<Path>,
        bytes: &[u8],
        options: &CompileOptions,
    ) -> Result<MlirModule, Error> {
        let name = name.as_ref();
        let ext = name.extension().and_then(|e| e.to_str());
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(MlirError::Load(format!("{} is empty: there is nothing to compile", name.display())).into());
        }
        let options = options.clone().with_source_path(name);
        let level = InputLevel::detect(ext, bytes);
        if level.is_llvm() {
            // SAFETY: forwarded to the caller.
            let (lib, functions) = unsafe { MlirLibrary::compile_llvm_level(bytes, level, &options) }?;
            return Ok(MlirModule { lib, llvm: Some(Arc::new(functions)) });
        }
        let src = std::str::from_utf8(bytes)
            .map_err(|e| Error::from(MlirError::Load(format!("{} is not UTF-8 text: {e}", name.display()))))?;
        if !src.contains("func.func") {
            return Err(MlirError::Load(format!(
                "{} has no function to call: no `func.func` (MLIR source) or `llvm.func` (LLVM dialect) in it",
                name.display()
            ))
            .into());
        }
        // SAFETY: forwarded to the caller.
        unsafe { MlirModule::compile_with_options(src, &options) }
    }

    /// Compiles MLIR source text (cached) and loads it.
    ///
    /// # Safety
    /// As for [`MlirLibrary::compile`].
    pub unsafe fn compile(source: &str) -> Result<MlirModule, Error> {
        // SAFETY: forwarded to the caller.
        Ok(MlirModule { lib: unsafe { MlirLibrary::compile(source) }?, llvm: None })
    }

    /// Compiles MLIR source text with `options` (cached) and loads it;
    /// LLVM-dialect text (or LLVM IR text) is compiled from its level (see
    /// [`load_with`](MlirModule::load_with)).
    ///
    /// # Safety
    /// As for [`MlirLibrary::compile`].
    pub unsafe fn compile_with_options(source: &str, options: &CompileOptions) -> Result<MlirModule, Error> {
        let level = InputLevel::detect_text(source);
        if level.is_llvm() {
            // SAFETY: forwarded to the caller.
            let (lib, functions) = unsafe { MlirLibrary::compile_llvm_level(source.as_bytes(), level, options) }?;
            return Ok(MlirModule { lib, llvm: Some(Arc::new(functions)) });
        }
        let host = super::HostFunctions::new();
        // SAFETY: forwarded to the caller.
        Ok(MlirModule { lib: unsafe { MlirLibrary::compile_with_options(source, &host, options) }?, llvm: None })
    }

    /// A module over an already loaded library.
    pub fn from_library(lib: MlirLibrary) -> MlirModule {
        MlirModule { lib, llvm: None }
    }

    /// The function headers of an LLVM-level input (`None` for MLIR source
    /// and libraries).
    pub fn llvm_functions(&self) -> Option<&LlvmFunctions> {
        self.llvm.as_deref()
    }

    /// The library.
    pub fn library(&self) -> &MlirLibrary {
        &self.lib
    }

    /// The functions a caller can call: the public functions with a body in
    /// the source, or, for a library without its source, the functions it
    /// exports through `_mlir_ciface_` wrappers.
    pub fn function_names(&self) -> Result<Vec<String>, Error> {
        if let Some(llvm) = &self.llvm {
            return Ok(llvm.callable());
        }
        let decls = self.lib.declarations();
        if !decls.is_empty() {
            return Ok(decls
                .iter()
                .filter(|d| d.has_body && d.visibility == Visibility::Public)
                .map(|d| d.name.clone())
                .collect());
        }
        let bytes = std::fs::read(self.lib.path())
            .map_err(|e| MlirError::io(format!("cannot read {}", self.lib.path().display()), e))?;
        let elf = crate::elf::ElfFile::parse(&bytes)?;
        Ok(elf.mlir_functions()?.into_iter().map(str::to_owned).collect())
    }

    /// The function `name`, typed and structured by its `func.func` header
    /// and ABI attributes.
    pub fn function(&self, name: &str) -> Result<Function, Error> {
        if let Some(llvm) = &self.llvm {
            let entry = llvm.entry(name)?;
            let f = self.lib.function_at(name, &entry.symbol, entry.ty)?;
            return Ok(Function::new(MlirBackend::new(f, &self.lib)?));
        }
        let f = self.lib.function(name)?;
        Ok(Function::new(MlirBackend::new(f, &self.lib)?))
    }

    /// The function `name` of a library without its source, with its
    /// signature given as an MLIR function type
    /// (`(memref<?xf32>, f32) -> memref<?xf32>`) or a mangled raw signature
    /// (`I8!B4!d-1R…`, buffers become identity-layout memrefs).
    ///
    /// A signature that contradicts what the module says of `name` is an
    /// error: its `func.func` header (source, or the ABI a library
    /// embeds; a mangled signature is compared with the function's raw
    /// signature) or an LLVM-level module's header of it.
    pub fn function_with_signature(&self, name: &str, signature: &str) -> Result<Function, Error> {
        let ty = parse_signature(signature)?;
        if let Some(llvm) = &self.llvm {
            let entry = llvm.entry_with_type(name, ty).map_err(Error::invalid_argument)?;
            let f = self.lib.function_at(name, &entry.symbol, entry.ty)?;
            return Ok(Function::new(MlirBackend::new(f, &self.lib)?));
        }
        if let Some(d) = self.lib.declarations().iter().find(|d| d.name == name && d.has_body) {
            let known = MlirBackend::new(self.lib.function(name)?, &self.lib)?;
            let (given, has) = if signature.trim().starts_with('(') {
                (ty.to_string(), d.ty.to_string())
            } else {
                (RawSignature::parse(signature.trim())?.to_string(), known.raw_signature().to_string())
            };
            if given != has {
                let whose = if self.lib.path().extension().is_some_and(|e| e == "so") {
                    format!("the ABI embedded in {}", self.lib.path().display())
                } else {
                    "its source".to_owned()
                };
                return Err(Error::mismatch(format!("the --signature of @{name}, by {whose}"), has, given));
            }
            return Ok(Function::new(known));
        }
        let f = self.lib.function_with_type(name, ty)?;
        Ok(Function::new(MlirBackend::new(f, &self.lib)?))
    }
}

/// Reads a function signature given on the command line: an MLIR function
/// type, or a mangled raw signature.
pub fn parse_signature(signature: &str) -> Result<FunctionType, Error> {
    let s = signature.trim();
    if s.starts_with('(') {
        return Ok(s.parse::<FunctionType>()?);
    }
    let raw = RawSignature::parse(s)?;
    let conv = |t: &RawType, side: &str, i: usize| -> Result<MlirType, Error> {
        match t {
            RawType::Buffer(b) => {
                let dims = b.dims().iter().map(|d| d.to_string()).collect::<Vec<_>>();
                let mut text = String::from("memref<");
                for d in &dims {
                    text.push_str(d);
                    text.push('x');
                }
                text.push_str(b.dtype().short_name());
                text.push('>');
                text.parse::<MlirType>().map_err(Error::from)
            }
            RawType::Scalar(s) => s.short_name().parse::<MlirType>().map_err(Error::from),
            other => Err(Error::invalid_argument(format!(
                "{side} {i} of the signature is {other}, which has no MLIR type to call with"
            ))),
        }
    };
    let inputs = raw.inputs().iter().enumerate().map(|(i, t)| conv(t, "input", i)).collect::<Result<_, _>>()?;
    let results = raw.results().iter().enumerate().map(|(i, t)| conv(t, "result", i)).collect::<Result<_, _>>()?;
    Ok(FunctionType { inputs, results })
}

/// The [`Backend`] of an MLIR function (see the module docs).
///
/// ```
/// use fnabi_mlir::{MlirBackend, MlirModule};
/// let src = r#"
///   func.func @scale(%x: memref<4xf64>, %s: f64) -> i64 {
///     %c = arith.constant 4 : i64
///     return %c : i64
///   }"#;
/// // SAFETY: the function touches no memory.
/// let m = unsafe { MlirModule::compile(src)? };
/// let b = MlirBackend::new(m.library().function("scale")?, m.library())?;
/// // no `f` attribute: the raw signature comes from the MLIR types
/// assert_eq!(b.raw_signature().to_string(), "(Buffer<float64[4]>, float64) -> (sint64)");
/// assert_eq!(b.function().name(), "scale");
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub struct MlirBackend {
    func: MlirFunction,
    allocator: Option<MlirFunction>,
    raw: RawSignature,
    /// `raw` with only the destination results: what `plan_results` plans.
    destinations: RawSignature,
    input_structure: Option<Structure>,
    inputs: Plan,
    results: Option<Plan>,
    sip: Option<SipSignature>,
}

fn abi_err(name: &str, msg: impl std::fmt::Display) -> Error {
    Error::from(fnabi_abi::AttributeError::new(format!("@{name}: {msg}")))
}

/// True when an MLIR type can stand for a raw type: the same kind and
/// element type, and each dim equal or dynamic on the MLIR side.
fn fits_raw(mlir: &MlirType, raw: &RawType) -> bool {
    match (mlir.to_raw(), raw) {
        (RawType::Buffer(m), RawType::Buffer(r)) => {
            m.dtype() == r.dtype()
                && m.rank() == r.rank()
                && m.dims().iter().zip(r.dims()).all(|(a, b)| *a == Dim::Dynamic || a == b)
        }
        (m, r) => m == *r,
    }
}

/// Checks that `s` has exactly the leaves `0..n` (each raw index once).
fn check_leaves(name: &str, side: &str, s: Option<&Structure>, n: usize) -> Result<(), Error> {
    let mut seen = vec![false; n];
    let mut count = 0;
    for (path, i) in s.map(|s| s.leaves().collect::<Vec<_>>()).unwrap_or_default() {
        if i >= n {
            return Err(abi_err(name, format!("sip {side} leaf {path} is raw {side} {i}, but there are {n}")));
        }
        seen[i] = true;
        count += 1;
    }
    if count != n || seen.iter().any(|s| !s) {
        let missing: Vec<usize> = seen.iter().enumerate().filter(|(_, s)| !**s).map(|(i, _)| i).collect();
        return Err(abi_err(name, format!("sip {side} structure does not cover raw {side}s {missing:?}")));
    }
    Ok(())
}

impl MlirBackend {
    /// The backend of `func`, reading its ABI attributes (`sip`, `f`,
    /// `fbr`) from its `func.func` header when it has one.
    pub fn new(func: MlirFunction, lib: &MlirLibrary) -> Result<MlirBackend, Error> {
        let name = func.name().to_owned();
        let ty = func.ty().clone();
        let attrs = match func.decl() {
            Some(d) => d.abi_attributes()?,
            None => AbiAttributes::default(),
        };
        let derived = ty.to_raw();
        let (raw, k) = match attrs.raw_signature()? {
            None => (derived, 0),
            Some(raw) => {
                let n_in = raw.inputs().len();
                let n_res = raw.results().len();
                let k = ty.inputs.len().checked_sub(n_in).filter(|k| *k <= n_res).ok_or_else(|| {
                    abi_err(
                        &name,
                        format!(
                            "f = {raw} has {n_in} inputs and {n_res} results, but the function takes {} arguments",
                            ty.inputs.len()
                        ),
                    )
                })?;
                if ty.results.len() != n_res - k {
                    return Err(abi_err(
                        &name,
                        format!(
                            "f = {raw}: with {k} destination argument(s) the function should return {} result(s), not {}",
                            n_res - k,
                            ty.results.len()
                        ),
                    ));
                }
                for (i, (m, r)) in ty.inputs.iter().zip(raw.inputs()).enumerate() {
                    if !fits_raw(m, r) {
                        return Err(abi_err(&name, format!("argument {i} is {m}, but f says {r}")));
                    }
                }
                for (j, (m, r)) in ty.inputs[n_in..].iter().zip(raw.results()).enumerate() {
                    if !matches!(m, MlirType::MemRef(_)) || !fits_raw(m, r) {
                        return Err(abi_err(
                            &name,
                            format!("destination argument {} is {m}, but f says result {j} is {r}", n_in + j),
                        ));
                    }
                }
                for (j, (m, r)) in ty.results.iter().zip(&raw.results()[k..]).enumerate() {
                    if !fits_raw(m, r) {
                        return Err(abi_err(&name, format!("result {j} is {m}, but f says result {} is {r}", k + j)));
                    }
                }
                (raw, k)
            }
        };
        let n_in = raw.inputs().len();
        let sip = attrs.sip_signature()?;
        let input_structure = match &sip {
            Some(sip) => sip.inputs().cloned(),
            None if n_in == 0 => None,
            None => Some(Structure::Sequence((0..n_in).map(|i| (i, Structure::Leaf(i))).collect())),
        };
        check_leaves(&name, "input", input_structure.as_ref(), n_in)?;
        let inputs = Plan::new(input_structure.as_ref())?;
        let results = match &sip {
            // A lone leaf is the same as no structure: the one result itself.
            Some(sip) if matches!(sip.results(), Some(Structure::Leaf(0))) && raw.results().len() == 1 => None,
            Some(sip) => {
                check_leaves(&name, "result", sip.results(), raw.results().len())?;
                Some(Plan::new(sip.results())?)
            }
            None => None,
        };
        // Errors name a structured function's arguments by their index
        // paths, a destination by its result's position.
        let mut places: Vec<Option<(CallSide, IndexPath)>> = vec![None; ty.inputs.len()];
        if sip.is_some() {
            for (path, i) in input_structure.iter().flat_map(|s| s.leaves()) {
                places[i] = Some((CallSide::Argument, path));
            }
        }
        let places = places
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                p.unwrap_or_else(|| match i.checked_sub(n_in) {
                    None => (CallSide::Argument, IndexPath(vec![PathKey::Index(i)])),
                    Some(r) => (CallSide::Result, IndexPath(vec![PathKey::Index(r)])),
                })
            })
            .collect();
        let func = func.with_argument_paths(places)?;
        let destinations = RawSignature::new(raw.inputs().to_vec(), raw.results()[..k].to_vec());
        let dynamic_destinations =
            destinations.results().iter().filter(|r| matches!(r, RawType::Buffer(b) if !b.is_static())).count();
        let allocator = match attrs.result_allocator() {
            Some(fbr) if k > 0 => {
                let a = lib.function(fbr)?;
                let n_dims: usize = raw
                    .inputs()
                    .iter()
                    .filter_map(RawType::as_buffer)
                    .map(|b| b.dims().iter().filter(|d| **d == Dim::Dynamic).count())
                    .sum();
                let index_args =
                    a.ty().inputs.iter().all(|t| matches!(t, MlirType::Scalar(e) if e.to_string() == "index"));
                if a.ty().inputs.len() != n_dims || !index_args || a.ty().results.len() != dynamic_destinations {
                    return Err(abi_err(
                        &name,
                        format!(
                            "result allocator @{fbr} is {}, but needs {n_dims} index argument(s) (the dynamic input dims) \
                             and {dynamic_destinations} memref result(s) (the dynamic destinations)",
                            a.ty()
                        ),
                    ));
                }
                Some(a)
            }
            _ => None,
        };
        if allocator.is_none() && dynamic_destinations > 0 {
            return Err(abi_err(
                &name,
                format!(
                    "{dynamic_destinations} destination(s) have dynamic dims: the function needs a result allocator (fbr)"
                ),
            ));
        }
        Ok(MlirBackend { func, allocator, raw, destinations, input_structure, inputs, results, sip })
    }

    /// The MLIR function.
    pub fn function(&self) -> &MlirFunction {
        &self.func
    }

    /// The raw signature the function is called by.
    pub fn raw_signature(&self) -> &RawSignature {
        &self.raw
    }

    /// Binds positional and keyword arguments to the input structure.
    fn bind<'a>(&self, args: Vec<Value<'a>>, kwargs: Dict<'a>) -> Result<Value<'a>, Error> {
        match &self.input_structure {
            Some(s) => Ok(s.bind(args, kwargs)?),
            None => {
                // No inputs: the binder over no parameters gives the errors.
                bind_arguments(&NoParameters, args, kwargs)?;
                Ok(Value::None)
            }
        }
    }

    fn prepared(&self) -> MlirPrepared<'_> {
        MlirPrepared { b: self, call: self.func.prepare() }
    }
}

impl Backend for MlirBackend {
    fn name(&self) -> &str {
        self.func.name()
    }

    fn describe(&self) -> String {
        match &self.sip {
            Some(sip) => format!("{}{sip}  [{}]", symbol_ref(self.func.name()), self.func.ty()),
            None => format!("{}{}", symbol_ref(self.func.name()), self.func.ty()),
        }
    }

    fn call(&self, args: Vec<Value<'_>>, kwargs: Dict<'_>) -> Result<Value<'static>, Error> {
        let bound = self.bind(args, kwargs)?;
        self.prepared().call_bound(&bound)
    }

    fn prepare(&self) -> Box<dyn PreparedBackend + '_> {
        Box::new(self.prepared())
    }

    /// False only when the function's header shows that it reads every
    /// array input: each a tensor fnabi's pipeline bufferized read-only, or
    /// a vector its wrapper reads (see [`FuncDecl::read_only_inputs`]). A
    /// memref argument may be updated in place; a library without its
    /// source (or with the memref types `fnabi compile` embeds) says nothing.
    ///
    /// [`FuncDecl::read_only_inputs`]: fnabi_abi::mlir::signature::FuncDecl::read_only_inputs
    fn may_write_arguments(&self) -> bool {
        let inputs = &self.func.ty().inputs;
        match self.func.decl() {
            Some(d) if d.read_only_inputs.len() == inputs.len() => inputs
                .iter()
                .zip(&d.read_only_inputs)
                .any(|(t, &read_only)| !read_only && !matches!(t, MlirType::Scalar(_))),
            _ => true,
        }
    }

    fn input_params(&self) -> Option<Vec<InputParam>> {
        let leaf = |i: usize| match self.raw.inputs().get(i) {
            Some(RawType::Buffer(b)) => InputType::Array {
                dtype: DType::Scalar(b.dtype()),
                dims: Some(
                    b.dims().iter().map(|d| if let Dim::Static(n) = d { Some(*n as usize) } else { None }).collect(),
                ),
            },
            // Memrefs of `i1` and the 8-bit floats have no raw type: the MLIR
            // type (the same input) says what they take.
            Some(RawType::Unrecognized) => match self.func.ty().inputs.get(i) {
                Some(MlirType::MemRef(m)) => InputType::Array {
                    dtype: m.element.dtype(),
                    dims: Some(
                        m.dims.iter().map(|d| if let Dim::Static(n) = d { Some(*n as usize) } else { None }).collect(),
                    ),
                },
                _ => InputType::Any,
            },
            _ => InputType::Any,
        };
        // Positional arguments are a sequence root's items, or a dict
        // root's values in key order (also passed by keyword).
        Some(match structure_type(self.input_structure.as_ref()?, &leaf) {
            InputType::Sequence(items) => items.into_iter().map(|ty| InputParam { name: None, ty }).collect(),
            InputType::Dict(entries) => entries.into_iter().map(|(k, ty)| InputParam { name: Some(k), ty }).collect(),
            ty => vec![InputParam { name: None, ty }],
        })
    }

    /// Scalars are 0-d arrays of their dtype, buffers arrays of their
    /// dims; a result with no raw type (`i1`, an unranked memref) is `Any`.
    fn result_type(&self) -> Option<InputType> {
        let leaf = |i: usize| match self.raw.results().get(i) {
            Some(RawType::Scalar(s)) => InputType::Array { dtype: DType::Scalar(*s), dims: Some(Vec::new()) },
            Some(RawType::Buffer(b)) => InputType::Array {
                dtype: DType::Scalar(b.dtype()),
                dims: Some(
                    b.dims().iter().map(|d| if let Dim::Static(n) = d { Some(*n as usize) } else { None }).collect(),
                ),
            },
            _ => InputType::Any,
        };
        // As `call_bound` returns them: unflattened by the results'
        // structure, else one result itself, several as a tuple.
        Some(match self.results.as_ref().and_then(Plan::structure) {
            Some(s) => structure_type(s, &leaf),
            None if self.raw.results().len() == 1 => leaf(0),
            None => InputType::Sequence((0..self.raw.results().len()).map(leaf).collect()),
        })
    }
}

/// The type of a value of structure `s`, each leaf's from `leaf(raw index)`
/// (a gap in a sequence is `Any`).
fn structure_type(s: &Structure, leaf: &dyn Fn(usize) -> InputType) -> InputType {
    match s {
        Structure::Leaf(i) => leaf(*i),
        Structure::Sequence(items) => {
            let mut out = vec![InputType::Any; items.iter().map(|(i, _)| i + 1).max().unwrap_or(0)];
            for (i, c) in items {
                out[*i] = structure_type(c, leaf);
            }
            InputType::Sequence(out)
        }
        Structure::Dict(entries) => {
            InputType::Dict(entries.iter().map(|(k, c)| (k.clone(), structure_type(c, leaf))).collect())
        }
    }
}

struct MlirPrepared<'b> {
    b: &'b MlirBackend,
    call: PreparedMlirCall,
}

/// An owned array seen at a shorter lifetime (arrays are covariant).
fn shorten<'x>(a: Array<'static>) -> Array<'x> {
    a
}

/// A placeholder for leaf slots before flattening fills them.
static NO_VALUE: Value<'static> = Value::None;

impl MlirPrepared<'_> {
    /// The destination arrays, allocated before the call.
    fn destinations(&self, leaves: &[&Value<'_>]) -> Result<SmallVec<[Array<'static>; 2]>, Error> {
        let b = self.b;
        let shapes: SmallVec<[&[usize]; 16]> =
            leaves.iter().map(|v| v.as_array().map_or(&[][..], |a| a.shape())).collect();
        let mut allocate = |dims: &[usize]| -> Result<Vec<Option<Array<'static>>>, Error> {
            let Some(a) = &b.allocator else { return Ok(Vec::new()) };
            let mut args: Vec<Arg<'_, '_>> = dims.iter().map(|&d| Arg::Int(d as i64)).collect();
            let out = a.call(&mut args)?;
            out.into_iter()
                .map(|v| match v {
                    Value::Array(a) => Ok(Some(*a)),
                    other => Err(Error::invalid_argument(format!(
                        "result allocator @{} returned a {}, not an array",
                        a.name(),
                        other.kind()
                    ))),
                })
                .collect()
        };
        let slots = plan_results(&b.destinations, &shapes, Some(&mut allocate))?;
        slots
            .into_iter()
            .enumerate()
            .map(|(j, s)| match s {
                ResultSlot::Ready(a) => {
                    let t: &BufferType = b.destinations.results()[j]
                        .as_buffer()
                        .ok_or_else(|| Error::invalid_argument(format!("destination of result {j} is not a buffer")))?;
                    fnabi_core::buffer::check_shape(t, a.shape())
                        .map_err(|e| CallError::locate(e, CallSide::Result, &IndexPath(vec![PathKey::Index(j)]), t))?;
                    Ok(a)
                }
                _ => Err(Error::invalid_argument(format!(
                    "@{}: the result allocator did not allocate the destination of result {j}",
                    b.func.name()
                ))),
            })
            .collect()
    }
}

impl PreparedBackend for MlirPrepared<'_> {
    fn call(&mut self, args: Vec<Value<'_>>, kwargs: Dict<'_>) -> Result<Value<'static>, Error> {
        let bound = self.b.bind(args, kwargs)?;
        self.call_bound(&bound)
    }

    fn call_bound(&mut self, inputs: &Value<'_>) -> Result<Value<'static>, Error> {
        let b = self.b;
        let n = b.inputs.leaf_count();
        let mut leaves: SmallVec<[&Value<'_>; 16]> =
            if n <= 16 { SmallVec::from_buf_and_len([&NO_VALUE; 16], n) } else { SmallVec::from_elem(&NO_VALUE, n) };
        b.inputs.flatten_into(inputs, &mut leaves).map_err(|e| CallError::from_structure(e, CallSide::Argument))?;
        if b.destinations.results().is_empty() {
            // The fast path: the leaves bound in place (no argument list);
            // `None` when some leaf needs the general path below, which
            // converts or explains.
            match (self.call.call_values(&leaves)?, &b.results) {
                (None, _) => {}
                (Some(Returned::Array(a)), None) => return Ok(Value::Array(a)),
                (Some(Returned::Array(a)), Some(p)) => return Ok(p.unflatten(vec![Value::Array(a)])?),
                (Some(Returned::One(v)), None) => return Ok(v),
                (Some(Returned::Many(v)), None) => return Ok(pack_results(v)),
                (Some(Returned::One(v)), Some(p)) => return Ok(p.unflatten(vec![v])?),
                (Some(Returned::Many(v)), Some(p)) => return Ok(p.unflatten(v)?),
            }
        }
        // Destinations are owned arrays; they are held here at the leaves'
        // lifetime (arrays are covariant) so that one argument list holds both.
        let mut dests: SmallVec<[Array<'_>; 2]> = if b.destinations.results().is_empty() {
            SmallVec::new()
        } else {
            self.destinations(&leaves)?.into_iter().map(shorten).collect()
        };
        let mut args: SmallVec<[Arg<'_, '_>; 16]> = SmallVec::with_capacity(leaves.len() + dests.len());
        for (i, v) in leaves.iter().enumerate() {
            args.push(Arg::from_value(v).map_err(|_| {
                let t = &b.func.ty().inputs[i];
                // What this parameter takes, by its type: a list for a
                // memref says "expected an array", not "an array or a scalar".
                let expected = match t {
                    MlirType::MemRef(_) | MlirType::UnrankedMemRef(_) => "an array",
                    MlirType::Scalar(e) if e.dtype() == DType::Bool => "a bool",
                    MlirType::Scalar(_) => "a number",
                };
                let kind = CallError::value_kind(expected, format!("a {}", v.kind()));
                let e = fnabi_core::Error::from(CallError::argument(kind));
                let path = b.input_structure.as_ref().and_then(|s| s.leaves().find(|(_, k)| *k == i).map(|(p, _)| p));
                match path {
                    Some(p) if b.sip.is_some() => {
                        CallError::locate(e, CallSide::Argument, &p, format_args!("{t}, raw argument {i}"))
                    }
                    _ => CallError::locate(e, CallSide::Argument, &IndexPath(vec![PathKey::Index(i)]), t),
                }
            })?);
        }
        let no_destinations = dests.is_empty();
        args.extend(dests.iter_mut().map(Arg::Mut));
        let mut results = self.call.call(&mut args)?;
        if no_destinations && b.results.is_none() && results.len() == 1 {
            // The common case of one result: no vector of values.
            return results.take_value(0).unwrap_or(Ok(Value::None));
        }
        let returned = results.into_values()?;
        drop(args);
        let raw: Vec<Value<'static>> = if dests.is_empty() {
            returned
        } else {
            // `into_owned` only re-wraps the shared buffer fnabi allocated.
            let owned = dests.into_iter().map(|a| a.into_owned().map(Value::from)).collect::<Result<Vec<_>, _>>()?;
            owned.into_iter().chain(returned).collect()
        };
        match &b.results {
            Some(p) => Ok(p.unflatten(raw)?),
            None => Ok(pack_results(raw)),
        }
    }
}

/// A function without inputs, for the binder.
struct NoParameters;

impl Parameters for NoParameters {
    fn len(&self) -> usize {
        0
    }

    fn name(&self, _: usize) -> Option<&str> {
        None
    }

    fn optional(&self, _: usize) -> bool {
        false
    }
}
