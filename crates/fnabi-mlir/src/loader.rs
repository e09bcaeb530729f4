//! Loading shared libraries of MLIR code: `dlopen` with every symbol
//! resolved now, the table of external functions that fnabi's glue exports
//! (checked before use), binding its host slots to Rust functions (a
//! private copy of the library when another load holds its slots), and the
//! [`MlirLibrary`] constructors that compile or open a library.

use crate::MlirError;
use crate::call::MlirLibrary;
use crate::compile::{CompileOptions, Compiler};
use crate::externals::{External, Externals, FLAG_RUNTIME_UTILS, Provider, TABLE_SYMBOL, TABLE_VERSION};
use crate::host::{Binding, HostFunctions, Slot, host_entry};
use crate::runtime_utils::RuntimeUtils;
use fnabi_abi::mlir::signature::{FuncDecl, parse_functions, scan_functions};
use fnabi_abi::mlir::types::{FunctionType, MlirType};
use fnabi_core::error::Error;
use std::ffi::{CStr, c_char, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

impl MlirLibrary {
    /// Loads a shared library (its initialisers run), resolving every
    /// symbol it needs now (`RTLD_NOW`): a function nobody provides fails
    /// the load, naming it. A library fnabi compiled with host functions
    /// must be loaded with [`open_with_host`](MlirLibrary::open_with_host).
    ///
    /// # Safety
    /// Loading runs the library's code, and calls run its functions. The
    /// library must be MLIR-lowered code (or C code following the same
    /// interface) whose functions have the types they are looked up with,
    /// and which writes only into memrefs passed as [`Arg::Mut`](crate::args::Arg::Mut) or that it
    /// allocated itself.
    pub unsafe fn open(path: impl AsRef<Path>) -> Result<MlirLibrary, Error> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::open_with_decls(path.as_ref(), Vec::new()) }
    }

    /// Loads a shared library compiled from `mlir_source`, whose `func.func`
    /// headers give the functions' types.
    ///
    /// # Safety
    /// As for [`open`](MlirLibrary::open); the library must have been
    /// compiled from this source.
    pub unsafe fn open_with_source(path: impl AsRef<Path>, mlir_source: &str) -> Result<MlirLibrary, Error> {
        // Read as the compile reads it: functions with vectors are called
        // through fnabi's wrapper (absent from a library fnabi did not
        // compile: then the call says no such symbol), and a function fnabi
        // cannot type is kept out with why.
        let scanned = scan_functions(mlir_source)?;
        let skipped = scanned.skipped.into_iter().map(|(name, e)| (name, e.to_string())).collect();
        // SAFETY: forwarded to the caller.
        let lib = unsafe { Self::open_with_decls(path.as_ref(), scanned.decls) }?;
        Ok(lib.with_skipped(skipped))
    }

    /// Compiles `mlir_source` with fnabi's pipeline (cached, see
    /// [`Compiler`]) and loads the result. External
    /// functions it declares must be MLIR runtime utilities (see
    /// [`compile_with_host`](MlirLibrary::compile_with_host)).
    ///
    /// # Safety
    /// Calls run the source's code, which must write only into memrefs
    /// passed as [`Arg::Mut`](crate::args::Arg::Mut) or that it allocated itself.
    pub unsafe fn compile(mlir_source: &str) -> Result<MlirLibrary, Error> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::compile_with_host(mlir_source, &HostFunctions::new()) }
    }

    /// Compiles `mlir_source` with its external functions bound to `host`
    /// functions or MLIR's runtime utilities (see [`crate::externals`]), and
    /// loads the result. An external function that the code calls and
    /// neither provides is an error before the library is loaded (a
    /// declaration that nothing calls needs no provider).
    ///
    /// # Safety
    /// As for [`compile`](MlirLibrary::compile).
    pub unsafe fn compile_with_host(mlir_source: &str, host: &HostFunctions) -> Result<MlirLibrary, Error> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::compile_with_options(mlir_source, host, &CompileOptions::default()) }
    }

    /// Compiles `mlir_source` with `options` (runtime verification, the
    /// source file's name), its external functions bound to `host`
    /// functions or MLIR's runtime utilities, and loads the result.
    ///
    /// Tensor-level functions are typed by the memrefs bufferization gives
    /// them (see [`scan_functions`]); their tensor arguments are read-only
    /// (the bufferized code copies before writing), and a result that is an
    /// argument (or a view of one) comes back sharing it. A function whose
    /// header has a type that does not cross the C interface (a scalable
    /// vector, a sparse tensor) is compiled but cannot be called:
    /// [`function`](MlirLibrary::function) says why. A public function with
    /// `vector<…>` arguments or results is called through a wrapper that
    /// takes and returns its vectors as static memrefs
    /// ([`crate::vector_entry`]).
    ///
    /// # Safety
    /// As for [`compile`](MlirLibrary::compile).
    pub unsafe fn compile_with_options(
        mlir_source: &str,
        host: &HostFunctions,
        options: &CompileOptions,
    ) -> Result<MlirLibrary, Error> {
        let compiler = Compiler::new()?;
        let runtime = RuntimeUtils::for_toolchain(compiler.toolchain())?;
        let scanned = scan_functions(mlir_source)?;
        // Public functions with vectors get their wrapper after their body.
        let wrappers: Vec<(usize, String)> = scanned
            .decls
            .iter()
            .filter_map(|d| Some((d.vector_entry.as_ref()?.body_end, crate::vector_entry::wrapper(d)?)))
            .collect();
        let (source, edits) = scanned.edit(mlir_source, &wrappers);
        let mut externals = Externals::resolve(&scanned.decls, host, &runtime)?;
        let mut link = externals.link_inputs(&runtime);
        if options.embed_abi {
            let glue = crate::abi_embed::abi_glue(&crate::abi_embed::abi_text(&scanned.decls));
            link.c_glue = Some(link.c_glue.unwrap_or_default() + &glue);
        }
        let so = compiler.compile_with_options(&source, &link, options).map_err(|e| {
            // The tools saw fnabi's insertions: their columns and echoed
            // lines are turned back into the user's.
            match e.backend_error::<MlirError>() {
                Some(MlirError::ToolFailed { tool, status, stderr }) if !edits.is_empty() => {
                    let stderr = edits.user_diagnostics(stderr, &options.shown_name(), &source);
                    MlirError::ToolFailed { tool: tool.clone(), status: status.clone(), stderr }.into()
                }
                _ => e,
            }
        })?;
        externals.mark_references(&so)?;
        externals.check()?;
        let skipped = scanned.skipped.into_iter().map(|(name, e)| (name, e.to_string())).collect();
        // SAFETY: compiled from this source just now; the rest is the caller's.
        let lib = unsafe { load(&so, scanned.decls, host) }?;
        Ok(lib.with_skipped(skipped).with_source(options.input_name(), options.shown_name(), edits))
    }

    /// Compiles an LLVM-level module (`level`: LLVM-dialect MLIR, LLVM IR
    /// text or bitcode; the pipeline's stages already done are skipped)
    /// and loads it, with MLIR's runtime utility libraries linked where it
    /// calls them (`vector.print` lowers to `printF32`, …). Returns the
    /// library and the module's function headers (from its text; bitcode
    /// is disassembled with `opt -S`).
    ///
    /// # Safety
    /// As for [`compile`](MlirLibrary::compile).
    pub unsafe fn compile_llvm_level(
        input: &[u8],
        level: crate::llvm_level::InputLevel,
        options: &CompileOptions,
    ) -> Result<(MlirLibrary, crate::llvm_level::LlvmFunctions), Error> {
        let compiler = Compiler::new()?;
        let runtime = RuntimeUtils::for_toolchain(compiler.toolchain())?;
        let link = crate::compile::LinkInputs {
            c_glue: None,
            libraries: runtime.libraries().iter().map(|l| l.path().to_path_buf()).collect(),
        };
        let so = compiler.compile_input(input, level, &link, options)?;
        let text = match level {
            crate::llvm_level::InputLevel::Bitcode => compiler.disassemble_bitcode(input)?,
            _ => String::from_utf8_lossy(input).into_owned(),
        };
        let functions = crate::llvm_level::LlvmFunctions::scan(&text);
        // SAFETY: compiled from this input just now; the rest is the caller's.
        let lib = unsafe { load(&so, Vec::new(), &HostFunctions::new()) }?;
        Ok((lib, functions))
    }

    /// Loads a shared library whose external functions (host slots, from
    /// fnabi's glue) are bound to `host` functions; its functions are typed
    /// by `mlir_source` when given.
    ///
    /// # Safety
    /// As for [`open_with_source`](MlirLibrary::open_with_source).
    pub unsafe fn open_with_host(
        path: impl AsRef<Path>,
        mlir_source: Option<&str>,
        host: &HostFunctions,
    ) -> Result<MlirLibrary, Error> {
        let decls = mlir_source.map(parse_functions).transpose()?.unwrap_or_default();
        // SAFETY: forwarded to the caller.
        unsafe { load(path.as_ref(), decls, host) }
    }

    unsafe fn open_with_decls(path: &Path, decls: Vec<FuncDecl>) -> Result<MlirLibrary, Error> {
        // SAFETY: forwarded to the caller.
        unsafe { load(path, decls, &HostFunctions::new()) }
    }
}

#[repr(C)]
struct CSlot {
    entry: Option<unsafe extern "C" fn(*const c_void, *const u64, *mut c_void)>,
    ctx: *const c_void,
}

#[repr(C)]
struct CModule {
    version: u32,
    flags: u32,
    count: u32,
    reserved: u32,
    slots: *mut CSlot,
    names: *const *const c_char,
    types: *const *const c_char,
    providers: *const *const c_char,
}

/// The most entries a table may have (a sanity bound on foreign data).
const MAX_TABLE: u32 = 1 << 16;

/// Serializes loads, so that "are this library's slots taken?" and filling
/// them cannot interleave between threads.
static LOAD: Mutex<()> = Mutex::new(());

fn load_error(path: &Path, msg: impl fmt::Display) -> Error {
    MlirError::Load(format!("cannot load {}: {msg}", path.display())).into()
}

fn open_native(path: &Path, undefined: &[String]) -> Result<libloading::Library, Error> {
    // A file that is no ELF object at all gets fnabi's word, not dlopen's
    // (`invalid ELF header`, `file too short`); one that cannot be read is
    // left to dlopen, which names why.
    #[cfg(unix)]
    if let Ok(mut f) = std::fs::File::open(path) {
        use std::io::Read;
        let mut magic = [0u8; 4];
        if f.read_exact(&mut magic).is_err() || !crate::elf::looks_like_elf(&magic) {
            return Err(load_error(
                path,
                "it is not a shared library (no ELF header); fnabi loads MLIR source (.mlir), LLVM IR (.ll), bitcode \
                 (.bc), shared libraries (.so) and IREE modules (.vmfb)",
            ));
        }
    }
    // A bare file name would make dlopen search the system paths.
    let abs = if path.components().count() == 1 { Path::new(".").join(path) } else { path.to_path_buf() };
    // RTLD_NOW: a function nobody provides fails the load, naming it, rather
    // than the first call that reaches it.
    // A module that runs async tasks is never unloaded: MLIR's async
    // runtime's worker threads may still be finishing a task's coroutine
    // (its code is in the module) after the awaited value is ready.
    #[cfg(unix)]
    let keep = if uses_async_runtime(undefined) { libc::RTLD_NODELETE } else { 0 };
    #[cfg(unix)]
    // SAFETY: the caller of `load` accepts running the library's initialisers.
    let lib = unsafe { libloading::os::unix::Library::open(Some(&abs), libc::RTLD_NOW | libc::RTLD_LOCAL | keep) }
        .map(libloading::Library::from);
    #[cfg(not(unix))]
    // SAFETY: as above.
    let lib = unsafe { libloading::Library::new(&abs) };
    lib.map_err(|e| {
        // libloading keeps dlerror's text in the error's source.
        let mut msg = e.to_string();
        let mut src = std::error::Error::source(&e);
        while let Some(s) = src {
            msg.push_str(&format!(": {s}"));
            src = s.source();
        }
        let hint = if msg.contains("undefined symbol: _mlir_ciface_") {
            " (an external function of the module: fnabi binds host functions when it compiles the source, \
             see MlirLibrary::compile_with_host)"
        } else {
            ""
        };
        load_error(path, format!("{msg}{hint}"))
    })
}

/// The module table of a loaded library, if it has one.
fn table(lib: &libloading::Library) -> Option<*mut CModule> {
    // SAFETY: only the address is taken; it is checked before use.
    let sym = unsafe { lib.get::<*mut CModule>(TABLE_SYMBOL.as_bytes()) }.ok()?;
    let p = *sym;
    (!p.is_null()).then_some(p)
}

/// A C string of the table, checked to be UTF-8.
///
/// # Safety
/// `p` must be null or a NUL-terminated string.
unsafe fn table_str(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: as the caller guarantees.
    unsafe { CStr::from_ptr(p) }.to_str().ok().map(str::to_owned)
}

/// Reads the table's entries.
///
/// # Safety
/// `t` must point to a table generated by fnabi's glue (checked version).
unsafe fn read_table(path: &Path, t: *const CModule) -> Result<(u32, Vec<External>), Error> {
    // SAFETY: the caller guarantees a table.
    let t = unsafe { &*t };
    if t.version != TABLE_VERSION || t.count > MAX_TABLE || (t.count > 0 && t.slots.is_null()) {
        return Err(load_error(path, format!("its {TABLE_SYMBOL} table is not one this fnabi understands")));
    }
    let mut items = Vec::with_capacity(t.count as usize);
    for k in 0..t.count as usize {
        // SAFETY: the glue defines `count` entries in each array.
        let (name, ty, provider) =
            unsafe { (table_str(*t.names.add(k)), table_str(*t.types.add(k)), *t.providers.add(k)) };
        let (Some(name), Some(ty)) = (name, ty) else {
            return Err(load_error(path, format!("entry {k} of its {TABLE_SYMBOL} table is damaged")));
        };
        let ty: FunctionType = ty.parse().map_err(|e| load_error(path, format!("the type of @{name}: {e}")))?;
        // SAFETY: a provider string or null.
        let provider = match unsafe { table_str(provider) } {
            None => Provider::Missing { note: None },
            Some(p) if p.is_empty() => Provider::Host,
            Some(p) => match p.strip_prefix('+') {
                Some(lib) => Provider::Runtime { library: lib.into(), path: None, shim: true },
                None => Provider::Runtime { library: p, path: None, shim: false },
            },
        };
        // A missing entry of a library that loaded: nothing calls it.
        let referenced = matches!(provider, Provider::Missing { .. }).then_some(false);
        items.push(External { name, ty, provider, referenced });
    }
    Ok((t.flags, items))
}

/// True when a slot of the table is already bound (another load shares
/// this mapping of the library).
///
/// # Safety
/// `t` must be a checked table (see `read_table`).
unsafe fn slots_taken(t: *const CModule) -> bool {
    // SAFETY: as the caller guarantees.
    let t = unsafe { &*t };
    // SAFETY: `count` slots.
    (0..t.count as usize).any(|k| unsafe { (*t.slots.add(k)).entry.is_some() })
}

/// Copies `path` to a new file beside it (or in the temporary directory).
/// The copy is a file this call creates (`O_EXCL`, mode 0700: an existing
/// file or a link planted at its name in a shared folder makes it try the
/// next name, never writes through), so no one else can change the code
/// between the copy and its loading.
fn private_copy(path: &Path) -> Result<PathBuf, Error> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "{}.fnabi-load-{}-{}.so",
        path.file_name().map_or_else(|| "lib".into(), |n| n.to_string_lossy()),
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let beside = path.parent().map(|d| d.join(&name));
    for dest in beside.into_iter().chain([std::env::temp_dir().join(&name)]) {
        if crate::cache::copy_to_new_file(path, &dest, 0o700).is_ok() {
            return Ok(dest);
        }
    }
    Err(load_error(path, "cannot copy it to load a second, separately bound instance"))
}

/// The names of the functions the library at `path` needs from elsewhere
/// (empty when it cannot be read).
fn undefined_functions(path: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(path) else { return Vec::new() };
    let Ok(elf) = crate::elf::ElfFile::parse(&bytes) else { return Vec::new() };
    elf.undefined_functions().map(|u| u.into_iter().map(str::to_owned).collect()).unwrap_or_default()
}

/// True when a library needing `undefined` calls MLIR's async runtime.
fn uses_async_runtime(undefined: &[String]) -> bool {
    undefined.iter().any(|n| n.starts_with("mlirAsyncRuntime"))
}

/// True when a library needing `undefined` calls C stdio or MLIR's printing
/// utilities (an undefined `print…`, `puts`, `putchar`, `printf`, `fputs`,
/// `fwrite`).
fn prints_through_c_stdio(undefined: &[String]) -> bool {
    undefined.iter().any(|n| {
        let n = n.strip_prefix(crate::elf::CIFACE_PREFIX).unwrap_or(n);
        n.starts_with("print") || matches!(n, "puts" | "putchar" | "fputs" | "fwrite")
    })
}

/// Loads a shared library of MLIR code and binds its host slots to `host`.
///
/// # Safety
/// As for [`MlirLibrary::open`].
pub(crate) unsafe fn load(path: &Path, decls: Vec<FuncDecl>, host: &HostFunctions) -> Result<MlirLibrary, Error> {
    let _guard = LOAD.lock().unwrap_or_else(|p| p.into_inner());
    // Read once: the load flags and the stdio flush both depend on it (a
    // private copy below has the same bytes).
    let undefined = undefined_functions(path);
    let mut lib = open_native(path, &undefined)?;
    let Some(mut t) = table(&lib) else {
        // No glue, but the lowering itself may print (`vector.print` calls
        // the runtime utilities' `printF32`, …): C's stdio is then flushed
        // around calls, as for glue that binds runtime utilities.
        let binding =
            prints_through_c_stdio(&undefined).then(|| Arc::new(Binding { slots: Vec::new(), flush_stdio: true }));
        return Ok(MlirLibrary::from_parts(lib, path.to_path_buf(), decls, binding, Externals::default()));
    };
    // SAFETY: a table exported under fnabi's symbol by fnabi's glue.
    let (flags, items) = unsafe { read_table(path, t) }?;
    let host_bound: Vec<(usize, &External)> =
        items.iter().enumerate().filter(|(_, e)| e.provider == Provider::Host).collect();
    let mut missing = Vec::new();
    let mut slots = Vec::with_capacity(host_bound.len());
    let mut indices = Vec::with_capacity(host_bound.len());
    for &(k, e) in &host_bound {
        let Some(f) = host.get(&e.name) else {
            missing.push(format!("@{}: {}", e.name, e.ty));
            continue;
        };
        if let Some(given) = &f.ty
            && *given != e.ty
        {
            return Err(Error::mismatch(
                format!("type of host function @{}", e.name),
                e.ty.to_string(),
                given.to_string(),
            ));
        }
        if let Some(d) = decls.iter().find(|d| d.name == e.name)
            && d.ty != e.ty
        {
            return Err(load_error(path, format!("it declares @{}: {}, its source {}", e.name, e.ty, d.ty)));
        }
        let offsets = e.ty.result_layout().0;
        let scalar_results = !e.ty.results.iter().any(MlirType::is_memref);
        slots.push(Slot { name: e.name.clone(), ty: e.ty.clone(), f: f.clone(), offsets, scalar_results });
        indices.push(k);
    }
    if !missing.is_empty() {
        return Err(MlirError::NotFound(format!(
            "{} needs the host function{} {}: register {} (HostFunctions::register)",
            path.display(),
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            if missing.len() > 1 { "them" } else { "it" }
        ))
        .into());
    }
    // SAFETY: `t` was checked by read_table.
    if !slots.is_empty() && unsafe { slots_taken(t) } {
        // This mapping's slots belong to another load: load a separate copy.
        let copy = private_copy(path)?;
        let opened = open_native(&copy, &undefined);
        let _ = std::fs::remove_file(&copy);
        lib = opened?;
        t = table(&lib).ok_or_else(|| load_error(path, "its copy has no table"))?;
        // SAFETY: the same library, freshly mapped.
        if unsafe { read_table(path, t) }?.1 != items || unsafe { slots_taken(t) } {
            return Err(load_error(path, "its private copy does not match"));
        }
    }
    let externals = Externals::from_items(items);
    let binding = Arc::new(Binding { slots, flush_stdio: flags & FLAG_RUNTIME_UTILS != 0 });
    for (k, slot) in indices.iter().zip(&binding.slots) {
        // SAFETY: k < count (an index of the checked table); the slot lives
        // in the binding (never moved or resized), which the library keeps
        // until it is unloaded.
        unsafe {
            let s = (*t).slots.add(*k);
            (*s).ctx = (slot as *const Slot).cast();
            (*s).entry = Some(host_entry);
        }
    }
    Ok(MlirLibrary::from_parts(lib, path.to_path_buf(), decls, Some(binding), externals))
}

#[cfg(test)]
mod tests {
    use super::private_copy;

    /// A link planted at a copy's name (a shared folder's attack) is never
    /// written through: the copy goes to a file it creates.
    #[test]
    fn private_copies_never_write_through_a_planted_link() {
        let dir = std::env::temp_dir().join(format!("fnabi-private-copy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("lib.so");
        std::fs::write(&lib, b"library bytes").unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        for n in 0..64 {
            let name = format!("lib.so.fnabi-load-{}-{n}.so", std::process::id());
            std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
        }
        let copy = private_copy(&lib).unwrap();
        let result = (std::fs::read(&victim).unwrap(), std::fs::read(&copy).unwrap());
        let meta = std::fs::symlink_metadata(&copy).unwrap();
        let _ = std::fs::remove_file(&copy);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(result.0, b"precious");
        assert_eq!(result.1, b"library bytes");
        assert!(meta.is_file());
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777, 0o700);
    }
}
