//! Loading a shared library of MLIR-compiled code ([`MlirLibrary`]) and
//! calling its `_mlir_ciface_` functions ([`MlirFunction`]) with host
//! arrays and scalars, in raw argument order — the layer under structured
//! calls.
//!
//! A call follows MLIR's C interface: every memref argument (ranked or
//! unranked) is passed as a pointer to its descriptor, scalars by value; a
//! single scalar result comes back directly, while a memref result or any
//! multiple results are written into a C struct (fields laid out by C
//! rules, descriptors nested by value) through a pointer passed *first*.
//! The machine-level call goes through the fixed-signature trampolines of
//! the x86-64 System V ABI (see the `trampoline` module docs): no libffi, no
//! per-signature code. Other targets get [`MlirError::Unsupported`].
//!
//! Arguments: arrays (`Arg::Array`, read-only) are described without
//! copying when their layout fits the memref type, else converted into
//! per-call memory; `Arg::Mut` arrays may be written by the callee
//! (destination-passing style) and a converted one is copied back after
//! the call. An unranked (`memref<*xT>`) argument is passed dense row-major
//! (the callee may cast it to an identity layout). Scalars are checked
//! against the declared type (range, exactness) — a rank-0 array of exactly
//! that type is accepted too.
//!
//! Results: owned [`Array`]s (see [`adopt_results`](crate::memref::adopt_results):
//! callee memory freed with libc `free`, aliases of inputs shared, globals
//! copied) and [`Scalar`]s.
//!
//! [`MlirFunction`] is `Send + Sync`: each call has its own scratch memory,
//! so one function can be called from several threads at once. A
//! [`PreparedMlirCall`] keeps its scratch (descriptor storage, registers,
//! result struct) across calls for hot loops.

use crate::MlirError;
use crate::args::{Arg, ArgLabel, RegKind, Scalar, arg_error, locate_arg, scalar_bits};
use crate::externals::Externals;
use crate::host::Binding;
use crate::memref::{
    DynMemRef, InputMemory, MAX_RANK, adopt_fresh_result, adopt_fresh_results, adopt_results_into, convert_for,
    copy_into, fill_descriptor,
};
use crate::program::{Program, StepKind, bind_dense};
use crate::trampoline::{self, Frame, Loc, ReturnReg};
use fnabi_abi::mlir::signature::{FuncDecl, SourceEdits};
use fnabi_abi::mlir::types::{ElementType, FunctionType, MemRefLayout, MemRefType, MlirType};
use fnabi_abi::raw::{BufferType, Dim, RawType};
use fnabi_core::array::Array;
use fnabi_core::buffer::{BufferDescription, Cast, Decision, LayoutPreference, oracle};
use fnabi_core::error::{CallError, CallErrorKind, CallSide, Error};
use fnabi_core::memory::{Arena, ArenaScope};
use fnabi_core::structure::IndexPath;
use fnabi_core::value::Value;
use smallvec::SmallVec;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

mod fast;
mod function;
mod general;
mod guard;
mod prepared;
mod results;
#[allow(unused_imports)]
use fast::*;
pub use function::MlirFunction;
#[allow(unused_imports)]
use function::*;
pub use general::layout_preference;
#[allow(unused_imports)]
use general::*;
pub(crate) use prepared::Returned;
#[allow(unused_imports)]
use prepared::*;
pub use prepared::{BoundCall, PreparedMlirCall};
pub use results::Results;
#[allow(unused_imports)]
use results::*;

struct LibInner {
    lib: libloading::Library,
    path: PathBuf,
    decls: Vec<FuncDecl>,
    /// Functions of the source whose headers fnabi cannot type, with why.
    skipped: Vec<(String, String)>,
    /// The library's loaded segments (memory that must never be freed).
    image: OnceLock<Vec<(usize, usize)>>,
    /// What its external functions are bound to (host functions, runtime
    /// utilities); dropped after `lib` is unloaded.
    host: Option<Arc<Binding>>,
    /// Its external functions and their providers (empty without fnabi's glue).
    externals: Externals,
    /// The glue that turns a failed runtime check into an error (modules
    /// compiled with runtime checks).
    guard: Option<guard::Guard>,
    /// The source it was compiled from, when a runtime check's report
    /// needs its locations read as the user's (see [`SourceNames`]).
    source: Option<SourceNames>,
}

/// The source a library was compiled from, for its runtime checks'
/// reports: the name its locations carry (the staged `input`), the name
/// the user knows it by (`shown`, as compile errors give it), and fnabi's
/// insertions into it.
struct SourceNames {
    input: String,
    shown: String,
    edits: SourceEdits,
}

impl SourceNames {
    /// A runtime check's `report` about the compiled text, as the user's:
    /// columns and name.
    fn user_report(&self, report: &str) -> String {
        let report = self.edits.user_diagnostics(report, &self.input, "");
        crate::compile::rename_source(&report, &self.input, &self.shown)
    }
}

impl LibInner {
    /// Whether every call must take the general path: host functions
    /// report failures there, and runtime checks are guarded there.
    fn general_only(&self) -> bool {
        self.host.is_some() || self.guard.is_some()
    }
}

/// A loaded shared library of MLIR-compiled code.
///
/// It stays loaded while the library value, any [`MlirFunction`] from it,
/// or any array returned by one of them is alive.
///
/// ```
/// use fnabi_mlir::{Arg, MlirLibrary};
/// let src = r#"
///   func.func @add_i32(%a: i32, %b: i32) -> i32 attributes {llvm.emit_c_interface} {
///     %s = arith.addi %a, %b : i32
///     return %s : i32
///   }"#;
/// // SAFETY: the function reads only its scalar arguments.
/// let lib = unsafe { MlirLibrary::compile(src)? };
/// assert_eq!(lib.declarations().len(), 1);
/// assert!(lib.path().is_file());
/// let add = lib.function("add_i32")?;
/// let out = add.call(&mut [Arg::Int(2), Arg::Int(40)])?;
/// assert_eq!(i32::try_from(out[0].clone())?, 42);
/// assert!(lib.function("sub_i32").is_err());
/// # Ok::<(), fnabi_core::Error>(())
/// ```
#[derive(Clone)]
pub struct MlirLibrary {
    inner: Arc<LibInner>,
}

impl std::fmt::Debug for MlirLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MlirLibrary").field("path", &self.inner.path).finish()
    }
}

impl MlirLibrary {
    /// A library loaded by the loader (see `loader::load`).
    pub(crate) fn from_parts(
        lib: libloading::Library,
        path: PathBuf,
        decls: Vec<FuncDecl>,
        host: Option<Arc<Binding>>,
        externals: Externals,
    ) -> MlirLibrary {
        guard::set_allocation_limit(&lib);
        MlirLibrary {
            inner: Arc::new(LibInner {
                guard: guard::Guard::find(&lib),
                lib,
                path,
                decls,
                skipped: Vec::new(),
                source: None,
                image: OnceLock::new(),
                host,
                externals,
            }),
        }
    }

    /// Records the functions of the source that cannot be called, with why.
    pub(crate) fn with_skipped(mut self, skipped: Vec<(String, String)>) -> MlirLibrary {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.skipped = skipped;
        }
        self
    }

    /// Records the source it was compiled from: named `input` in the
    /// code's locations, `shown` to the user, with fnabi's insertions (see
    /// [`SourceNames`]).
    pub(crate) fn with_source(mut self, input: String, shown: String, edits: SourceEdits) -> MlirLibrary {
        if let Some(inner) = Arc::get_mut(&mut self.inner)
            && (!edits.is_empty() || input != shown)
        {
            inner.source = Some(SourceNames { input, shown, edits });
        }
        self
    }

    /// Its external functions and who provides each (empty for a library
    /// without fnabi's glue).
    pub fn externals(&self) -> &Externals {
        &self.inner.externals
    }

    /// The path it was loaded from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The `func.func` headers of its source (empty without one).
    pub fn declarations(&self) -> &[FuncDecl] {
        &self.inner.decls
    }

    /// The function `name`, typed by the source's `func.func @name` header.
    pub fn function(&self, name: &str) -> Result<MlirFunction, Error> {
        if let Some((_, why)) = self.inner.skipped.iter().find(|(n, _)| n == name) {
            return Err(MlirError::NotFound(format!("@{name} cannot be called from the host: {why}")).into());
        }
        let decl = self.inner.decls.iter().find(|d| d.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.inner.decls.iter().map(|d| d.name.as_str()).collect();
            MlirError::NotFound(if self.inner.decls.is_empty() {
                format!("no MLIR source is known for {}: give @{name}'s type", self.inner.path.display())
            } else {
                format!("no function @{name} in the MLIR source (it has: {})", names.join(", "))
            })
        })?;
        if !decl.has_body {
            return Err(MlirError::NotFound(format!(
                "@{name} is an external declaration: the library does not define it"
            ))
            .into());
        }
        self.make(name, decl.ty.clone(), Some(decl.clone()))
    }

    /// The function `name` with an explicitly given type.
    pub fn function_with_type(&self, name: &str, ty: FunctionType) -> Result<MlirFunction, Error> {
        self.make(name, ty, None)
    }

    fn make(&self, name: &str, ty: FunctionType, decl: Option<FuncDecl>) -> Result<MlirFunction, Error> {
        // A function with vectors: its wrapper, typed with memrefs in their place.
        let callee = match decl.as_ref().and_then(|d| d.vector_entry.as_ref()) {
            Some(_) => crate::vector_entry::wrapper_name(name),
            None => name.to_owned(),
        };
        self.make_at(name, &format!("_mlir_ciface_{callee}"), ty, decl)
    }

    /// The function `name` of type `ty` called at `symbol` (an LLVM-level
    /// module's scalar-only function without a `_mlir_ciface_` wrapper is
    /// called by its own symbol, see [`crate::llvm_level`]).
    pub(crate) fn function_at(&self, name: &str, symbol: &str, ty: FunctionType) -> Result<MlirFunction, Error> {
        self.make_at(name, symbol, ty, None)
    }

    fn make_at(
        &self,
        name: &str,
        symbol: &str,
        ty: FunctionType,
        decl: Option<FuncDecl>,
    ) -> Result<MlirFunction, Error> {
        // SAFETY: the symbol is only used as a code address; its type is
        // the library's contract (see `open`).
        let fp = unsafe { self.inner.lib.get::<unsafe extern "C" fn()>(symbol) }
            .map_err(|e| MlirError::NotFound(format!("{}: no symbol {symbol}: {e}", self.inner.path.display())))?;
        let fp = *fp as usize;
        self.inner.image.get_or_init(|| image_segments(fp));
        let plan = Plan::new(&ty)?;
        Ok(MlirFunction {
            inner: Arc::new(FnInner {
                lib: self.inner.clone(),
                name: name.to_owned(),
                ty,
                decl,
                fp,
                plan,
                arg_places: None,
            }),
        })
    }
}

/// The loaded segments of the object containing `addr` (Linux).
#[cfg(target_os = "linux")]
fn image_segments(addr: usize) -> Vec<(usize, usize)> {
    #[repr(C)]
    struct PhdrInfo {
        addr: usize,
        name: *const std::ffi::c_char,
        phdr: *const Phdr,
        phnum: u16,
    }
    #[repr(C)]
    struct Phdr {
        p_type: u32,
        p_flags: u32,
        p_offset: u64,
        p_vaddr: u64,
        p_paddr: u64,
        p_filesz: u64,
        p_memsz: u64,
        p_align: u64,
    }
    unsafe extern "C" {
        fn dl_iterate_phdr(
            cb: unsafe extern "C" fn(*mut PhdrInfo, usize, *mut c_void) -> std::ffi::c_int,
            data: *mut c_void,
        ) -> std::ffi::c_int;
    }
    struct Search {
        addr: usize,
        found: Vec<(usize, usize)>,
    }
    unsafe extern "C" fn visit(info: *mut PhdrInfo, _size: usize, data: *mut c_void) -> std::ffi::c_int {
        // SAFETY: dl_iterate_phdr passes a valid info for each loaded
        // object and our `data` (a &mut Search) unchanged.
        let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
        let phdrs: &[Phdr] = if info.phdr.is_null() {
            &[]
        } else {
            // SAFETY: phdr points to phnum program headers of the object.
            unsafe { std::slice::from_raw_parts(info.phdr, usize::from(info.phnum)) }
        };
        let segs: Vec<(usize, usize)> = phdrs
            .iter()
            .filter(|p| p.p_type == 1)
            .map(|p| {
                let lo = info.addr.wrapping_add(p.p_vaddr as usize);
                (lo, lo.wrapping_add(p.p_memsz as usize))
            })
            .collect();
        if segs.iter().any(|&(lo, hi)| search.addr >= lo && search.addr < hi) {
            search.found = segs;
            return 1;
        }
        0
    }
    let mut search = Search { addr, found: Vec::new() };
    // SAFETY: `visit` matches the callback type and only reads the info it
    // is given; `search` outlives the call.
    unsafe { dl_iterate_phdr(visit, (&mut search as *mut Search).cast()) };
    search.found
}

#[cfg(not(target_os = "linux"))]
fn image_segments(_addr: usize) -> Vec<(usize, usize)> {
    Vec::new()
}

#[cfg(test)]
mod tests;
