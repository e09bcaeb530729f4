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
use crate::args::{Arg, ArgLabel, RegKind, Scalar, arg_error, scalar_bits};
use crate::externals::Externals;
use crate::host::Binding;
use crate::memref::{
    DynMemRef, InputMemory, MAX_RANK, adopt_fresh_result, adopt_fresh_results, adopt_results_into, convert_for,
    copy_into, fill_descriptor,
};
use crate::program::{Program, StepKind, bind_dense};
use crate::trampoline::{self, Frame, Loc, ReturnReg};
use fnabi_abi::mlir::signature::FuncDecl;
use fnabi_abi::mlir::types::{ElementType, FunctionType, MemRefLayout, MemRefType, MlirType};
use fnabi_abi::raw::{BufferType, Dim, RawType};
use fnabi_core::array::Array;
use fnabi_core::buffer::{BufferDescription, Cast, Decision, LayoutPreference, oracle};
use fnabi_core::error::Error;
use fnabi_core::memory::{Arena, ArenaScope};
use fnabi_core::value::Value;
use smallvec::SmallVec;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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
}

/// A loaded shared library of MLIR-compiled code.
///
/// It stays loaded while the library value, any [`MlirFunction`] from it,
/// or any array returned by one of them is alive.
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
        MlirLibrary {
            inner: Arc::new(LibInner {
                lib,
                path,
                decls,
                skipped: Vec::new(),
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
        self.make_at(name, &format!("_mlir_ciface_{name}"), ty, decl)
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
                arg_names: None,
            }),
        })
    }
}

#[derive(Clone, Copy, Debug)]
enum Ret {
    Void,
    Reg(ElementType),
    Packed,
}

#[derive(Clone)]
struct ArgPlan {
    ty: MlirType,
    loc: Loc,
    /// Word index of the descriptor (ranked), or of the `{rank, ptr}` header (unranked).
    at: usize,
    /// For a ranked memref the raw ABI can describe: its buffer type and the
    /// layout it takes, for the buffer oracle (computed once, so converting
    /// an argument allocates nothing but arena memory).
    oracle: Option<(BufferType, LayoutPreference)>,
}

/// Everything about a call that does not depend on the arguments.
#[derive(Clone)]
struct Plan {
    args: Vec<ArgPlan>,
    /// The same arguments as flat records for the fast binding path.
    program: Program,
    ret: Ret,
    /// Byte offset of each result in the packed result struct.
    result_offsets: Vec<usize>,
    /// Words of the result struct plus the ranked descriptors and unranked headers.
    fixed_words: usize,
    stack_slots: usize,
    full: bool,
    has_unranked_args: bool,
    /// No unranked argument, no packed result: `bind_simple` may apply.
    simple: bool,
    /// Where the result comes back.
    ret_reg: ReturnReg,
    /// The type of a register result.
    direct_ty: Option<RegKind>,
    /// `simple || simple_packed`: the fast binding path may apply.
    fast: bool,
    /// The element type and rank of the one result when it is a ranked
    /// memref (returned packed, its descriptor at the start of the words).
    one_memref: Option<(ElementType, usize)>,
}

impl Plan {
    /// The register result of a non-packed call.
    #[inline]
    fn direct(&self, bits: u64) -> Option<(RegKind, u64)> {
        self.direct_ty.map(|e| (e, bits))
    }

    fn new(ty: &FunctionType) -> Result<Plan, Error> {
        if !cfg!(target_arch = "x86_64") {
            return Err(MlirError::Unsupported(format!(
                "calling MLIR-compiled functions is implemented for x86-64 only (this is {})",
                std::env::consts::ARCH
            ))
            .into());
        }
        let packed = ty.results_packed();
        let (result_offsets, result_size) = ty.result_layout();
        let mut at = if packed { result_size.div_ceil(8) } else { 0 };
        let (mut n_int, mut n_float, mut n_stack) = (usize::from(packed), 0, 0);
        let mut args = Vec::with_capacity(ty.inputs.len());
        let mut program = Program::default();
        let mut has_unranked_args = false;
        for t in &ty.inputs {
            let float = matches!(t, MlirType::Scalar(e) if e.is_float());
            let loc = if float && n_float < trampoline::FLOAT_REGS {
                n_float += 1;
                Loc::Float(n_float - 1)
            } else if !float && n_int < trampoline::INT_REGS {
                n_int += 1;
                Loc::Int(n_int - 1)
            } else {
                n_stack += 1;
                Loc::Stack(n_stack - 1)
            };
            let oracle = match (t, t.to_raw()) {
                (MlirType::MemRef(m), RawType::Buffer(b)) if !has_static_offset(m) => Some((b, layout_preference(m))),
                _ => None,
            };
            program.push(t, loc, at);
            args.push(ArgPlan { ty: t.clone(), loc, at, oracle });
            match t {
                MlirType::MemRef(m) => at += 3 + 2 * m.rank(),
                MlirType::UnrankedMemRef(_) => {
                    at += 2;
                    has_unranked_args = true;
                }
                MlirType::Scalar(_) => {}
            }
        }
        if n_stack > trampoline::MAX_STACK_SLOTS {
            return Err(MlirError::Unsupported(format!(
                "a call with {n_stack} stack arguments (fnabi passes at most {})",
                trampoline::MAX_STACK_SLOTS
            ))
            .into());
        }
        let ret = match (packed, ty.results.first()) {
            (true, _) => Ret::Packed,
            (false, None) => Ret::Void,
            (false, Some(MlirType::Scalar(e))) => Ret::Reg(*e),
            (false, Some(_)) => unreachable!("a memref result is packed"),
        };
        let simple = !has_unranked_args && !matches!(ret, Ret::Packed);
        let simple_packed = !has_unranked_args
            && matches!(ret, Ret::Packed)
            && !ty.results.iter().any(|t| matches!(t, MlirType::UnrankedMemRef(_)));
        let one_memref = match ty.results.as_slice() {
            [MlirType::MemRef(m)] if result_offsets.first() == Some(&0) => Some((m.element, m.rank())),
            _ => None,
        };
        Ok(Plan {
            args,
            program,
            ret,
            result_offsets,
            fixed_words: at,
            stack_slots: n_stack,
            full: n_float > 0 || n_stack > 0,
            has_unranked_args,
            simple,
            // No unranked argument, packed results that are all scalars or
            // ranked memrefs: `bind_simple` applies, then `take_packed`.
            fast: simple || simple_packed,
            one_memref,
            ret_reg: match ret {
                Ret::Reg(e) if e.is_float() => ReturnReg::Float,
                _ => ReturnReg::Int,
            },
            direct_ty: match ret {
                Ret::Reg(e) => Some(RegKind::of(e)),
                _ => None,
            },
        })
    }
}

struct FnInner {
    lib: Arc<LibInner>,
    name: String,
    ty: FunctionType,
    decl: Option<FuncDecl>,
    fp: usize,
    plan: Plan,
    /// What error messages call each argument (`None`: "argument i").
    arg_names: Option<Arc<[String]>>,
}

impl FnInner {
    fn label(&self, index: usize) -> ArgLabel<'_> {
        ArgLabel { index, name: self.arg_names.as_ref().and_then(|n| n.get(index)).map(String::as_str) }
    }
}

/// A `_mlir_ciface_` function of a loaded library, with its type. Cheap to
/// clone; `Send + Sync`.
#[derive(Clone)]
pub struct MlirFunction {
    inner: Arc<FnInner>,
}

impl std::fmt::Debug for MlirFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MlirFunction(@{}: {})", self.inner.name, self.inner.ty)
    }
}

enum Out {
    Scalar(Scalar),
    Array(Array<'static>),
    Taken,
}

/// Per-call memory: descriptors, registers, result struct, converted
/// arguments, results.
struct Scratch {
    words: Vec<i64>,
    frame: Frame,
    /// Per-call memory for converted arguments (reset after every call).
    arena: Arena,
    outs: Vec<Out>,
    /// The storage byte range of each memref argument (`(0, 0)` for the
    /// others), written by `bind_leaves` on every call.
    ranges: Vec<(usize, usize)>,
}

impl MlirFunction {
    /// The symbol name without `_mlir_ciface_`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The function type.
    pub fn ty(&self) -> &FunctionType {
        &self.inner.ty
    }

    /// The `func.func` header it came from, if any.
    pub fn decl(&self) -> Option<&FuncDecl> {
        self.inner.decl.as_ref()
    }

    /// The library it belongs to.
    pub fn library(&self) -> MlirLibrary {
        MlirLibrary { inner: self.inner.lib.clone() }
    }

    /// The same function with names for its arguments in error messages
    /// (for example the index paths of a structured function's leaves):
    /// `input ["w"] (argument 2) (memref<4xf32>): …` instead of `argument 2 …`.
    pub fn with_argument_names(&self, names: Vec<String>) -> Result<MlirFunction, Error> {
        let f = &self.inner;
        if names.len() != f.plan.args.len() {
            return Err(Error::mismatch(
                format!("number of argument names of @{}", f.name),
                f.plan.args.len().to_string(),
                names.len().to_string(),
            ));
        }
        Ok(MlirFunction {
            inner: Arc::new(FnInner {
                lib: f.lib.clone(),
                name: f.name.clone(),
                ty: f.ty.clone(),
                decl: f.decl.clone(),
                fp: f.fp,
                plan: f.plan.clone(),
                arg_names: Some(names.into()),
            }),
        })
    }

    /// The address of `_mlir_ciface_<name>`.
    pub fn symbol_address(&self) -> *const c_void {
        self.inner.fp as *const c_void
    }

    fn scratch(&self) -> Scratch {
        let p = &self.inner.plan;
        Scratch {
            words: vec![0; p.fixed_words],
            frame: Frame::new(p.stack_slots, p.full),
            arena: Arena::new(),
            outs: Vec::with_capacity(self.inner.ty.results.len()),
            ranges: vec![(0, 0); p.args.len()],
        }
    }

    /// Calls the function with arguments in raw order; returns the results
    /// in raw order (arrays as [`Value::Array`], scalars as `Bool`/`Int`/`Float`).
    pub fn call(&self, args: &mut [Arg<'_, '_>]) -> Result<Vec<Value<'static>>, Error> {
        let mut s = self.scratch();
        run(&self.inner, &mut s, args)?.into_values()
    }

    /// A call that keeps its scratch memory for repeated use.
    pub fn prepare(&self) -> PreparedMlirCall {
        PreparedMlirCall { func: self.clone(), scratch: self.scratch() }
    }
}

/// A reusable call of one function: its descriptor storage, argument
/// registers and result struct are allocated once.
///
/// ```no_run
/// # fn demo(f: &fnabi_mlir::MlirFunction, x: &fnabi_core::Array<'_>) -> fnabi_core::Result<()> {
/// use fnabi_mlir::Arg;
/// let mut call = f.prepare();
/// for _ in 0..1000 {
///     let first = call.call(&mut [Arg::Array(x)])?.scalar(0);
/// }
/// # Ok(()) }
/// ```
pub struct PreparedMlirCall {
    func: MlirFunction,
    scratch: Scratch,
}

impl PreparedMlirCall {
    /// Calls the function; the results borrow this call until dropped.
    #[inline]
    pub fn call(&mut self, args: &mut [Arg<'_, '_>]) -> Result<Results<'_>, Error> {
        let f = &self.func.inner;
        // Libraries with host bindings take the general path: it reports a
        // host function's failure after the call.
        if f.plan.fast && f.lib.host.is_none() && bind_simple(f, &mut self.scratch, args).is_some() {
            let s = &mut self.scratch;
            if f.plan.simple {
                let bits = invoke_simple(f, s);
                return Ok(Results { outs: &mut s.outs, direct: f.plan.direct(bits) });
            }
            // Packed results: the result struct is at the start of the words.
            s.frame.regs[0] = s.words.as_ptr() as u64;
            invoke(f.fp, &s.frame, ReturnReg::Int);
            s.outs.clear();
            // Bound on the fast path: every memref argument is an `Arg::Array`.
            let inputs: SmallVec<[&Array<'_>; 16]> = f
                .plan
                .program
                .steps
                .iter()
                .zip(args.iter())
                .filter_map(|(step, a)| match (step.kind, a) {
                    (StepKind::Dense(_) | StepKind::Strided, Arg::Array(a)) => Some(*a),
                    _ => None,
                })
                .collect();
            take_packed(f, &s.words, &mut s.outs, &inputs, f.plan.fixed_words)?;
            return Ok(Results { outs: &mut s.outs, direct: None });
        }
        run(f, &mut self.scratch, args)
    }

    /// Calls with host values as the arguments, in raw order (a structured
    /// call's flattened leaves: arrays and scalars), on the fast path only:
    /// `Ok(None)` when the function or an argument needs the general path —
    /// then nothing was called, and the caller binds the same leaves as
    /// [`Arg`]s for [`call`](PreparedMlirCall::call), which converts or
    /// explains.
    ///
    /// Every argument is checked as [`call`](PreparedMlirCall::call) checks it;
    /// results are adopted the same way (one callee-allocated memref result
    /// without the `Vec` of results).
    #[inline]
    pub(crate) fn call_values(&mut self, leaves: &[&Value<'_>]) -> Result<Option<Returned>, Error> {
        let f = &*self.func.inner;
        let plan = &f.plan;
        let steps = &plan.program.steps;
        if !plan.fast || f.lib.host.is_some() || leaves.len() != steps.len() {
            return Ok(None);
        }
        let s = &mut self.scratch;
        if !bind_leaves(plan, s, leaves) {
            return Ok(None);
        }
        let base = s.words.as_ptr() as u64;
        if plan.simple {
            let bits = invoke(f.fp, &s.frame, plan.ret_reg);
            return Ok(Some(match plan.direct_ty {
                Some(k) => Returned::One(k.scalar(bits).to_value()?),
                None => Returned::Many(Vec::new()),
            }));
        }
        // Packed results: the result struct is at the start of the words.
        s.frame.regs[0] = base;
        invoke(f.fp, &s.frame, ReturnReg::Int);
        if let Some((elem, rank)) = plan.one_memref {
            let image = f.lib.image.get().map_or(&[][..], Vec::as_slice);
            let keep: Arc<dyn std::any::Any + Send + Sync> = f.lib.clone();
            let desc = s.words.get(..3 + 2 * rank).unwrap_or(&[]);
            // SAFETY: the descriptor was just returned by the callee, which
            // follows MLIR's conventions (the library's contract): callee
            // memory comes from libc malloc and is ours now; the ranges are
            // the arguments' storage, written by `bind_leaves` this call.
            if let Some(a) = unsafe { adopt_fresh_result(elem, desc, &s.ranges, image, Some(keep)) } {
                return Ok(Some(Returned::Array(a)));
            }
        }
        // The arrays the callee was given (the memref arguments).
        let inputs = leaves.iter().zip(steps).filter_map(|(v, step)| match (step.kind, v) {
            (StepKind::Dense(_) | StepKind::Strided, Value::Array(a)) => Some(&**a),
            _ => None,
        });
        let inputs: SmallVec<[&Array<'_>; 16]> = inputs.collect();
        s.outs.clear();
        take_packed(f, &s.words, &mut s.outs, &inputs, plan.fixed_words)?;
        let mut values = Results { outs: &mut s.outs, direct: None }.into_values()?;
        Ok(Some(match (plan.one_memref, values.pop()) {
            (Some(_), Some(v)) => Returned::One(v),
            (_, last) => {
                values.extend(last);
                Returned::Many(values)
            }
        }))
    }

    /// The function.
    pub fn function(&self) -> &MlirFunction {
        &self.func
    }

    /// Binds `args` once for repeated [`BoundCall::invoke`]s, the fastest
    /// way to call the same function on the same arrays (whose contents may
    /// change between calls through other handles... not while bound: the
    /// arrays stay borrowed). Available when every memref argument is a
    /// ranked memref that fits as-is and no result is packed (memref or
    /// multiple results); otherwise an error says why.
    pub fn bind<'p, 'a>(&'p mut self, args: &'a [Arg<'a, 'a>]) -> Result<BoundCall<'p, 'a>, Error> {
        let f = &self.func.inner;
        if !f.plan.simple {
            return Err(Error::invalid_argument(format!(
                "@{} cannot be bound: it has unranked memref arguments or packed results",
                f.name
            )));
        }
        if f.lib.host.is_some() {
            return Err(Error::invalid_argument(format!(
                "@{} cannot be bound: its module calls external functions, whose failures only `call` reports",
                f.name
            )));
        }
        if bind_simple(f, &mut self.scratch, args).is_none() {
            // Report the precise problem through the general path's checks.
            let mut s = self.func.scratch();
            let mut probe: Vec<Arg<'_, '_>> = args.iter().map(reborrow).collect();
            bind_checks(f, &mut s, &mut probe)?;
            return Err(Error::invalid_argument(format!(
                "@{}: an argument needs a layout conversion or is mutable, which bound calls do not do",
                f.name
            )));
        }
        let f = &self.func.inner;
        let frame = &self.scratch.frame;
        Ok(BoundCall {
            fp: f.fp,
            ints: *frame.ints(),
            full: frame.full,
            ret: f.plan.ret_reg,
            direct: f.plan.direct_ty,
            call: self,
            _args: std::marker::PhantomData,
        })
    }
}

/// What a call through [`PreparedMlirCall::call_leaves`] returned.
pub(crate) enum Returned {
    /// Exactly one result, an array (as a `Value::Array` holds it).
    Array(Box<Array<'static>>),
    /// Exactly one result.
    One(Value<'static>),
    /// Any other number of results, in raw order.
    Many(Vec<Value<'static>>),
}

/// Binds `leaves` as the arguments on the fast path (see
/// [`PreparedMlirCall::call_values`]); false when some argument needs the
/// general path. Writes every argument's descriptor, register or stack
/// slot, and storage range (`s.ranges`, empty for scalars) afresh.
#[inline(never)]
fn bind_leaves(plan: &Plan, s: &mut Scratch, leaves: &[&Value<'_>]) -> bool {
    let steps = &plan.program.steps;
    if leaves.len() != steps.len() || s.ranges.len() != steps.len() {
        return false;
    }
    let base = s.words.as_ptr() as u64;
    for (i, ((step, leaf), range)) in steps.iter().zip(leaves).zip(s.ranges.iter_mut()).enumerate() {
        // The common case inline: an array for an identity-layout memref.
        if let (StepKind::Dense(dtype), Value::Array(a)) = (step.kind, leaf) {
            let at = step.at as usize;
            let start = a.storage_ptr() as usize;
            let fits = match (s.words.get_mut(at..at + 3 + 2 * step.rank as usize), plan.program.dims_of(step)) {
                (Some(w), Some(fixed)) => bind_dense(a, start, dtype, fixed, w) || fill_general(plan, i, a, w),
                _ => false,
            };
            if !fits {
                return false;
            }
            *range = (start, start + a.storage_len());
            s.frame.set_slot(step.slot as usize, base + 8 * at as u64);
        } else if bind_value(plan, &mut s.words, &mut s.frame, i, leaf) {
            *range = match (step.kind, leaf) {
                (StepKind::Strided, Value::Array(a)) => {
                    let start = a.storage_ptr() as usize;
                    (start, start + a.storage_len())
                }
                _ => (0, 0),
            };
        } else {
            return false;
        }
    }
    true
}

/// Binds host value `leaf` as argument `i` on the fast path (any argument
/// but the inline case of [`PreparedMlirCall::call_values`]); false when the
/// general path must decide.
#[inline(never)]
fn bind_value(plan: &Plan, words: &mut [i64], frame: &mut Frame, i: usize, leaf: &Value<'_>) -> bool {
    let arg = match leaf {
        Value::Array(a) => Arg::Array(a),
        Value::Int(v) => Arg::Int(*v),
        Value::Float(v) => Arg::Float(*v),
        Value::Bool(v) => Arg::Bool(*v),
        _ => return false,
    };
    bind_fast(plan, words, frame, i, &arg).is_some()
}

fn reborrow<'x>(a: &'x Arg<'_, '_>) -> Arg<'x, 'x> {
    match a {
        Arg::Array(a) => Arg::Array(a),
        Arg::Mut(a) => Arg::Array(a),
        Arg::Int(v) => Arg::Int(*v),
        Arg::Float(v) => Arg::Float(*v),
        Arg::Bool(v) => Arg::Bool(*v),
        Arg::Scalar(v) => Arg::Scalar(*v),
    }
}

/// Runs the general binding checks (without calling) to report an error.
fn bind_checks(f: &FnInner, s: &mut Scratch, args: &mut [Arg<'_, '_>]) -> Result<(), Error> {
    if args.len() != f.plan.args.len() {
        return Err(Error::mismatch(
            format!("number of arguments of @{}", f.name),
            f.plan.args.len().to_string(),
            args.len().to_string(),
        ));
    }
    for (i, (ap, arg)) in f.plan.args.iter().zip(args.iter()).enumerate() {
        let i = f.label(i);
        match (&ap.ty, arg) {
            (MlirType::MemRef(m), Arg::Array(a)) => {
                let w = &mut s.words[ap.at..ap.at + 3 + 2 * m.rank()];
                fill_descriptor(a, m, w).map_err(|e| arg_error(i, &ap.ty, e))?;
            }
            (MlirType::Scalar(e), a) => {
                scalar_bits(i, &ap.ty, *e, a)?;
            }
            (t, a) => return Err(arg_error(i, t, format!("expected an array, got {}", a.kind()))),
        }
    }
    Ok(())
}

/// A [`PreparedMlirCall`] with its arguments bound: each [`invoke`](BoundCall::invoke)
/// only calls.
///
/// ```no_run
/// # fn demo(f: &fnabi_mlir::MlirFunction, x: &fnabi_core::Array<'_>) -> fnabi_core::Result<()> {
/// use fnabi_mlir::Arg;
/// let mut call = f.prepare();
/// let args = [Arg::Array(x)];
/// let mut bound = call.bind(&args)?;
/// for _ in 0..1000 {
///     let first = bound.invoke().scalar(0);
/// }
/// # Ok(()) }
/// ```
pub struct BoundCall<'p, 'a> {
    call: &'p mut PreparedMlirCall,
    // What every invoke reads, copied out of the function and the frame
    // when bound (neither can change while `call` is borrowed): the call
    // loop then keeps them in registers, as a direct call keeps its
    // function pointer.
    fp: usize,
    /// The frame's integer registers.
    ints: [u64; trampoline::INT_REGS],
    /// The frame uses float registers or stack slots: call through it.
    full: bool,
    ret: ReturnReg,
    /// The type of the register result, if any.
    direct: Option<RegKind>,
    _args: std::marker::PhantomData<&'a ()>,
}

impl BoundCall<'_, '_> {
    /// Calls the function with the bound arguments (checked when bound,
    /// so this cannot fail).
    #[inline]
    pub fn invoke(&mut self) -> Results<'_> {
        let bits = if !self.full { invoke_regs(self.fp, &self.ints, self.ret) } else { self.invoke_full() };
        Results { outs: &mut self.call.scratch.outs, direct: self.direct.map(|e| (e, bits)) }
    }

    /// A call with float or stack arguments, through the frame (out of the
    /// call loop, which then falls through to the register-only call).
    #[cold]
    #[inline(never)]
    fn invoke_full(&self) -> u64 {
        invoke(self.fp, &self.call.scratch.frame, self.ret)
    }
}

/// The results of one call, in raw order. Arrays not taken are dropped
/// (their memory released) with it.
pub struct Results<'s> {
    outs: &'s mut Vec<Out>,
    /// The type and bits of the one scalar result returned in a register
    /// (then `outs` is empty). Kept as bits: a `Scalar` is built on request.
    direct: Option<(RegKind, u64)>,
}

impl Results<'_> {
    /// Number of results.
    pub fn len(&self) -> usize {
        usize::from(self.direct.is_some()) + self.outs.len()
    }

    /// True for a function without results.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Result `i`, if it is a scalar.
    #[inline]
    pub fn scalar(&self, i: usize) -> Option<Scalar> {
        if let Some((k, bits)) = self.direct {
            return (i == 0).then(|| k.scalar(bits));
        }
        match self.outs.get(i) {
            Some(Out::Scalar(s)) => Some(*s),
            _ => None,
        }
    }

    /// Takes result `i`, if it is an array not taken yet.
    pub fn take_array(&mut self, i: usize) -> Option<Array<'static>> {
        let slot = self.outs.get_mut(i)?;
        match std::mem::replace(slot, Out::Taken) {
            Out::Array(a) => Some(a),
            other => {
                *slot = other;
                None
            }
        }
    }

    /// Takes result `i` as a value (`None` past the end or when already taken).
    pub fn take_value(&mut self, i: usize) -> Option<Result<Value<'static>, Error>> {
        if let Some((k, bits)) = self.direct {
            return (i == 0).then(|| {
                self.direct = None;
                k.scalar(bits).to_value()
            });
        }
        match std::mem::replace(self.outs.get_mut(i)?, Out::Taken) {
            Out::Scalar(s) => Some(s.to_value()),
            Out::Array(a) => Some(Ok(Value::from(a))),
            Out::Taken => None,
        }
    }

    /// All results as values (an array already taken is an error).
    pub fn into_values(self) -> Result<Vec<Value<'static>>, Error> {
        if let Some((k, bits)) = self.direct {
            return Ok(vec![k.scalar(bits).to_value()?]);
        }
        self.outs
            .drain(..)
            .enumerate()
            .map(|(i, o)| match o {
                Out::Scalar(s) => s.to_value(),
                Out::Array(a) => Ok(Value::from(a)),
                Out::Taken => Err(Error::invalid_argument(format!("result {i} was already taken"))),
            })
            .collect()
    }
}

impl Drop for Results<'_> {
    #[inline]
    fn drop(&mut self) {
        if !self.outs.is_empty() {
            clear_outs(self.outs);
        }
    }
}

/// Drops results not taken (out of line: a register result has none).
#[cold]
#[inline(never)]
fn clear_outs(outs: &mut Vec<Out>) {
    outs.clear();
}

/// Converts a memref argument that does not fit its type as-is: the buffer
/// oracle decides the target layout (dense row-major for an identity
/// layout, the static or any strides of a `strided<>` layout) and the copy
/// goes into the per-call arena. Types the raw ABI cannot describe (`i1`
/// elements, static offsets) fall back to a heap copy.
fn convert_leaf<'s>(
    a: &Array<'_>,
    m: &MemRefType,
    plan: Option<&(BufferType, LayoutPreference)>,
    scope: &'s ArenaScope<'_>,
) -> Result<Array<'s>, Error> {
    if let Some((ty, pref)) = plan {
        let desc = BufferDescription::from_array(a);
        return match oracle(ty, &desc, pref, Cast::Forbidden) {
            Decision::Convert { target, .. } => scope.convert(a, &target),
            // The descriptor check is stricter than the oracle only for
            // static offsets, handled below.
            Decision::AsIs { .. } => convert_for(a, m),
            Decision::Unsupported(reason) => Err(Error::invalid_argument(reason.to_string())),
        };
    }
    convert_for(a, m)
}

fn has_static_offset(m: &MemRefType) -> bool {
    matches!(&m.layout, MemRefLayout::Strided { offset: Some(o), .. } if *o != 0)
}

/// The buffer oracle's layout preference for a memref type: an identity
/// layout needs dense row-major data; `strided<[?, …]>` takes any strides;
/// static strides must match.
pub fn layout_preference(m: &MemRefType) -> LayoutPreference {
    match &m.layout {
        MemRefLayout::Identity => LayoutPreference::Dense(fnabi_abi::raw::DimOrder::RowMajor),
        MemRefLayout::Strided { strides, .. } if strides.iter().all(Option::is_none) => LayoutPreference::AnyStrided,
        MemRefLayout::Strided { strides, .. } => {
            LayoutPreference::Strides(strides.iter().map(|s| s.map(|v| v as isize)).collect())
        }
    }
}

fn unranked_type(e: ElementType, rank: usize) -> MemRefType {
    MemRefType { element: e, dims: vec![Dim::Dynamic; rank], layout: MemRefLayout::Identity }
}

/// One call: binds `args` into `s`, invokes, takes the results.
fn run<'s>(f: &FnInner, s: &'s mut Scratch, args: &mut [Arg<'_, '_>]) -> Result<Results<'s>, Error> {
    let plan = &f.plan;
    let ty = &f.ty;
    if args.len() != plan.args.len() {
        return Err(Error::mismatch(
            format!("number of arguments of @{}", f.name),
            plan.args.len().to_string(),
            args.len().to_string(),
        ));
    }
    s.outs.clear();
    // Converted arguments live in the per-call arena: nothing is allocated
    // once the arena has grown to a call's needs.
    let scope = s.arena.scope();
    let mut temps: SmallVec<[(usize, Array<'_>); 4]> = SmallVec::new();
    // Unranked arguments: their ranked descriptors follow the fixed words.
    let mut total = plan.fixed_words;
    if plan.has_unranked_args {
        for (t, a) in ty.inputs.iter().zip(args.iter()) {
            if let (MlirType::UnrankedMemRef(_), Arg::Array(a)) = (t, a) {
                total += 3 + 2 * a.rank();
            } else if let (MlirType::UnrankedMemRef(_), Arg::Mut(a)) = (t, a) {
                total += 3 + 2 * a.rank();
            }
        }
    }
    if s.words.len() < total {
        s.words.resize(total, 0);
    }
    let mut dyn_at = plan.fixed_words;
    let words_ptr = s.words.as_mut_ptr();
    let ptr_of = |at: usize| words_ptr.wrapping_add(at) as u64;
    for (i, ((t, ap), arg)) in ty.inputs.iter().zip(&plan.args).zip(args.iter_mut()).enumerate() {
        let li = f.label(i);
        let bits = match t {
            MlirType::Scalar(e) => scalar_bits(li, t, *e, arg)?,
            MlirType::MemRef(m) => {
                let a: &Array<'_> = match arg {
                    Arg::Array(a) => a,
                    Arg::Mut(a) => {
                        a.as_mut_ptr().map_err(|e| arg_error(li, t, e))?;
                        a
                    }
                    other => return Err(arg_error(li, t, format!("expected an array, got {}", other.kind()))),
                };
                let w = &mut s.words[ap.at..ap.at + 3 + 2 * m.rank()];
                if !fill_descriptor(a, m, w).map_err(|e| arg_error(li, t, e))? {
                    let c = convert_leaf(a, m, ap.oracle.as_ref(), &scope).map_err(|e| arg_error(li, t, e))?;
                    if !fill_descriptor(&c, m, w)? {
                        return Err(arg_error(li, t, "the converted array does not fit its type"));
                    }
                    temps.push((i, c));
                }
                ptr_of(ap.at)
            }
            MlirType::UnrankedMemRef(e) => {
                let a: &Array<'_> = match arg {
                    Arg::Array(a) => a,
                    Arg::Mut(a) => {
                        a.as_mut_ptr().map_err(|e| arg_error(li, t, e))?;
                        a
                    }
                    other => return Err(arg_error(li, t, format!("expected an array, got {}", other.kind()))),
                };
                let m = unranked_type(*e, a.rank());
                let n = 3 + 2 * a.rank();
                let w = &mut s.words[dyn_at..dyn_at + n];
                if !fill_descriptor(a, &m, w).map_err(|e| arg_error(li, t, e))? {
                    let c = convert_leaf(a, &m, None, &scope).map_err(|e| arg_error(li, t, e))?;
                    fill_descriptor(&c, &m, w)?;
                    temps.push((i, c));
                }
                s.words[ap.at] = a.rank() as i64;
                s.words[ap.at + 1] = ptr_of(dyn_at) as i64;
                dyn_at += n;
                ptr_of(ap.at)
            }
        };
        s.frame.set(ap.loc, bits);
    }
    let ret_reg = match plan.ret {
        Ret::Packed => {
            s.frame.regs[0] = ptr_of(0);
            ReturnReg::Int
        }
        Ret::Reg(e) if e.is_float() => ReturnReg::Float,
        _ => ReturnReg::Int,
    };

    let scope = f.lib.host.as_deref().map(crate::host::CallScope::enter);
    let bits = invoke(f.fp, &s.frame, ret_reg);
    if let Some(e) = scope.and_then(crate::host::CallScope::finish) {
        // A host function failed: free what the call returned, report it.
        if matches!(plan.ret, Ret::Packed) {
            let _ = take_packed(f, &s.words, &mut s.outs, &passed(ty, args, &temps), total);
            s.outs.clear();
        }
        return Err(e);
    }

    // Destination arguments that went through a converted copy: write back.
    for (i, c) in &temps {
        if let Arg::Mut(dst) = &mut args[*i] {
            copy_into(c, dst)?;
        }
    }
    let direct = match plan.ret {
        Ret::Void => None,
        Ret::Reg(e) => Some((RegKind::of(e), bits)),
        Ret::Packed => {
            take_packed(f, &s.words, &mut s.outs, &passed(ty, args, &temps), total)?;
            None
        }
    };
    Ok(Results { outs: &mut s.outs, direct })
}

/// The arrays whose memory a call gave the callee: each memref argument,
/// or its converted copy.
fn passed<'x>(
    ty: &FunctionType,
    args: &'x [Arg<'_, '_>],
    temps: &'x [(usize, Array<'_>)],
) -> SmallVec<[&'x Array<'x>; 16]> {
    let mut out: SmallVec<[&Array<'_>; 16]> = SmallVec::new();
    for (i, (t, a)) in ty.inputs.iter().zip(args).enumerate() {
        if !t.is_memref() {
            continue;
        }
        if let Some((_, c)) = temps.iter().find(|(k, _)| *k == i) {
            out.push(c);
            continue;
        }
        match a {
            Arg::Array(a) => out.push(a),
            Arg::Mut(a) => out.push(a),
            _ => {}
        }
    }
    out
}

/// Binds the common case without allocation or conversion: ranked memrefs
/// whose layout fits as-is, scalars, a result in a register or packed
/// results without unranked memrefs. `None` when the call needs the
/// general path (which redoes everything).
#[inline]
fn bind_simple(f: &FnInner, s: &mut Scratch, args: &[Arg<'_, '_>]) -> Option<()> {
    let plan = &f.plan;
    if !plan.fast || args.len() != plan.program.steps.len() {
        return None;
    }
    for (i, arg) in args.iter().enumerate() {
        bind_fast(plan, &mut s.words, &mut s.frame, i, arg)?;
    }
    Some(())
}

/// Binds argument `i` on the fast path: writes its descriptor (a memref
/// that fits its type as-is) and its register or stack slot; returns the
/// array when the argument is a memref. `None` when the general path must
/// decide (a conversion, a mutable array, an unranked memref, any error:
/// that path reports it).
#[inline(always)]
fn bind_fast<'x, 'b>(
    plan: &Plan,
    words: &mut [i64],
    frame: &mut Frame,
    i: usize,
    arg: &Arg<'x, 'b>,
) -> Option<Option<&'x Array<'b>>> {
    let step = plan.program.steps.get(i)?;
    let (bits, array) = match (step.kind, arg) {
        (StepKind::Dense(dtype), Arg::Array(a)) => {
            let at = step.at as usize;
            let base = words.as_ptr() as u64;
            let w = words.get_mut(at..at + 3 + 2 * step.rank as usize)?;
            if !bind_dense(a, a.storage_ptr() as usize, dtype, plan.program.dims_of(step)?, w)
                && !fill_general(plan, i, a, w)
            {
                return None;
            }
            (base + 8 * at as u64, Some(*a))
        }
        (StepKind::Strided, Arg::Array(a)) => {
            let at = step.at as usize;
            let base = words.as_ptr() as u64;
            let w = words.get_mut(at..at + 3 + 2 * step.rank as usize)?;
            if !fill_general(plan, i, a, w) {
                return None;
            }
            (base + 8 * at as u64, Some(*a))
        }
        (StepKind::Scalar(e), a) => {
            let label = ArgLabel { index: i, name: None };
            (scalar_bits(label, &plan.args.get(i)?.ty, e, a).ok()?, None)
        }
        _ => return None,
    };
    frame.set_slot(step.slot as usize, bits);
    Some(array)
}

/// `fill_descriptor` for argument `i` (kept out of line: the rarer cases).
#[cold]
#[inline(never)]
fn fill_general(plan: &Plan, i: usize, a: &Array<'_>, w: &mut [i64]) -> bool {
    match plan.args.get(i).map(|p| &p.ty) {
        Some(MlirType::MemRef(m)) => matches!(fill_descriptor(a, m, w), Ok(true)),
        _ => false,
    }
}

/// Invokes a call bound by `bind_simple`: the register result's bits.
#[inline]
fn invoke_simple(f: &FnInner, s: &Scratch) -> u64 {
    invoke(f.fp, &s.frame, f.plan.ret_reg)
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn invoke(fp: usize, frame: &Frame, ret: ReturnReg) -> u64 {
    // SAFETY: `fp` is `_mlir_ciface_<name>` of a library whose functions
    // have the declared type (`MlirLibrary::open`'s contract), and `frame`
    // was filled by the plan of that type: the result-struct pointer first
    // when results are packed, each memref as a pointer to a descriptor in
    // the scratch words (built from a validated array by fill_descriptor,
    // so every address the callee computes from type + descriptor lies in
    // that array's storage, which the borrowed `args` keep alive), each
    // scalar's bits in its class's register or stack slot in order. The
    // result struct has the size and alignment the plan computed.
    unsafe { trampoline::invoke(fp as *const c_void, frame, ret) }
}

/// Plans are refused on other targets ([`Plan::new`]), so this is never reached.
#[cfg(not(target_arch = "x86_64"))]
fn invoke(_fp: usize, _frame: &Frame, _ret: ReturnReg) -> u64 {
    unreachable!("no plan exists on this target")
}

/// [`invoke`] with the integer registers of a frame that is not `full`
/// (copied into a [`BoundCall`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn invoke_regs(fp: usize, ints: &[u64; trampoline::INT_REGS], ret: ReturnReg) -> u64 {
    // SAFETY: as for `invoke`: `ints` are the integer registers of a frame
    // bound for `fp` by its plan, which has no float or stack arguments
    // (`full` is false); the arrays they point into stay borrowed by the
    // `BoundCall` that holds them.
    unsafe { trampoline::invoke_ints(fp as *const c_void, ints, ret) }
}

/// Plans are refused on other targets ([`Plan::new`]), so this is never reached.
#[cfg(not(target_arch = "x86_64"))]
fn invoke_regs(_fp: usize, _ints: &[u64; trampoline::INT_REGS], _ret: ReturnReg) -> u64 {
    unreachable!("no plan exists on this target")
}

/// Reads the packed result struct: scalars, ranked descriptors, unranked
/// descriptors (whose malloc'ed ranked part is copied and freed).
/// `inputs` are the arrays whose memory the callee was given (converted
/// copies in place of the arguments they stand for), for results that
/// alias them.
fn take_packed(
    f: &FnInner,
    words: &[i64],
    outs: &mut Vec<Out>,
    inputs: &[&Array<'_>],
    total: usize,
) -> Result<(), Error> {
    let base = words.as_ptr().cast::<u8>();
    let scratch_range = (base as usize, base as usize + total * 8);
    let mut returned: SmallVec<[(ElementType, DynMemRef); 2]> = SmallVec::new();
    let mut slots: SmallVec<[Option<usize>; 4]> = SmallVec::with_capacity(f.ty.results.len());
    let mut first_error = None;
    for (k, (t, &off)) in f.ty.results.iter().zip(&f.plan.result_offsets).enumerate() {
        // SAFETY: `off` + the field size lies inside the result struct at the
        // start of the scratch words, which the callee has filled.
        let field = unsafe { base.add(off) };
        match t {
            MlirType::Scalar(e) => {
                // SAFETY: as above; e.size() bytes at the field.
                outs.push(Out::Scalar(unsafe { Scalar::read(*e, field) }));
                slots.push(None);
            }
            MlirType::MemRef(m) => {
                // SAFETY: a rank-m descriptor of 3 + 2·rank 8-aligned words at the field.
                returned.push((m.element, unsafe { DynMemRef::read(field.cast(), m.rank()) }));
                outs.push(Out::Taken);
                slots.push(Some(returned.len() - 1));
            }
            MlirType::UnrankedMemRef(e) => {
                // SAFETY: `{i64 rank, ptr}` at the 8-aligned field.
                let (rank, p) = unsafe { (field.cast::<i64>().read(), field.cast::<usize>().add(1).read()) };
                outs.push(Out::Taken);
                slots.push(None);
                if !(0..=MAX_RANK as i64).contains(&rank) || p == 0 {
                    first_error.get_or_insert(Error::invalid_argument(format!(
                        "result {k}: the callee returned an invalid unranked memref (rank {rank}, descriptor {p:#x})"
                    )));
                    continue;
                }
                // SAFETY: the callee's unranked result points at a ranked
                // descriptor of `rank` (MLIR's convention).
                let d = unsafe { DynMemRef::read(p as *const c_void, rank as usize) };
                if p < scratch_range.0 || p >= scratch_range.1 {
                    // SAFETY: MLIR malloc's the ranked part of a returned
                    // unranked memref; the caller owns and frees it. (One
                    // pointing into our own scratch — an argument passed
                    // through — is not freed.)
                    unsafe { crate::memref::libc_free(p) };
                }
                returned.push((*e, d));
                *slots.last_mut().unwrap_or(&mut None) = Some(returned.len() - 1);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    if returned.is_empty() {
        return Ok(());
    }
    let image = f.lib.image.get().map_or(&[][..], Vec::as_slice);
    let keep: Arc<dyn std::any::Any + Send + Sync> = f.lib.clone();
    // Returned descriptor k is result slot_of[k].
    let mut slot_of: SmallVec<[usize; 4]> = SmallVec::new();
    for (r, k) in slots.iter().enumerate() {
        if k.is_some() {
            slot_of.push(r);
        }
    }
    let storage = |a: &&Array<'_>| (a.storage_ptr() as usize, a.storage_ptr() as usize + a.storage_len());
    let ranges: SmallVec<[(usize, usize); 16]> = inputs.iter().map(storage).collect();
    // SAFETY: the descriptors were just returned by the callee, which follows
    // MLIR's conventions (the library's contract): callee memory comes from
    // libc malloc and is ours now; `ranges` are the arguments' storage.
    let done = unsafe {
        adopt_fresh_results(&returned, &ranges, image, Some(keep.clone()), &mut |k, a| outs[slot_of[k]] = Out::Array(a))
    }?;
    if done {
        return Ok(());
    }
    let inputs: SmallVec<[InputMemory<'_>; 16]> =
        inputs.iter().map(|a| InputMemory { array: a, allocated: a.storage_ptr() as usize }).collect();
    // SAFETY: the descriptors were just returned by the callee, which follows
    // MLIR's conventions (the library's contract): callee memory comes from
    // libc malloc and is ours now; `inputs` are the arrays we passed.
    unsafe { adopt_results_into(&returned, &inputs, image, Some(keep), &mut |k, a| outs[slot_of[k]] = Out::Array(a)) }?;
    Ok(())
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
mod tests {
    use super::*;
    use fnabi_abi::scalar::ScalarType;
    use half::bf16;

    #[test]
    fn plan_assigns_registers_and_stack() {
        let ty: FunctionType =
            "(memref<?xf32>, f32, i32, f64, i64, f16, i8, f32, i64, f64, i16, bf16, f32, i64, f64, f32, i32, f64, memref<?xf64>, f32) -> f64"
                .parse()
                .unwrap();
        let p = Plan::new(&ty).unwrap();
        let locs: Vec<String> = p.args.iter().map(|a| format!("{:?}", a.loc)).collect();
        assert_eq!(
            locs.join(" "),
            "Int(0) Float(0) Int(1) Float(1) Int(2) Float(2) Int(3) Float(3) Int(4) Float(4) Int(5) Float(5) \
             Float(6) Stack(0) Float(7) Stack(1) Stack(2) Stack(3) Stack(4) Stack(5)"
        );
        assert!(p.full);
        let ty: FunctionType = "(memref<?x?xf32>, index) -> (memref<?xf32>, index)".parse().unwrap();
        let p = Plan::new(&ty).unwrap();
        assert!(matches!(p.args[0].loc, Loc::Int(1)));
        assert_eq!(p.args[0].at, 6);
        assert_eq!(p.fixed_words, 6 + 7);
        assert!(!p.full);
        let many = format!("({}) -> ()", vec!["i64"; 6 + 129].join(", "));
        let e = Plan::new(&many.parse().unwrap()).err().unwrap().to_string();
        assert!(e.contains("129 stack arguments"), "{e}");
    }

    #[test]
    fn scalar_coercions() {
        let t = |s: &str| s.parse::<MlirType>().unwrap();
        let b = |s: &str, a: Arg<'_, '_>| {
            let ty = t(s);
            let MlirType::Scalar(e) = ty else { panic!() };
            scalar_bits(ArgLabel { index: 0, name: None }, &ty, e, &a).map_err(|e| e.to_string())
        };
        assert_eq!(b("i8", Arg::Int(-1)).unwrap(), u64::MAX);
        assert_eq!(b("ui8", Arg::Int(255)).unwrap(), 255);
        assert_eq!(b("i8", Arg::Int(128)).unwrap_err(), "invalid argument: argument 0 (i8): 128 is out of range");
        assert_eq!(b("i1", Arg::Int(1)).unwrap(), 1);
        assert!(b("i1", Arg::Int(2)).unwrap_err().contains("not a boolean"));
        assert_eq!(b("i1", Arg::Bool(true)).unwrap(), 1);
        assert!(b("i32", Arg::Bool(true)).unwrap_err().contains("expected a scalar, got bool"));
        assert_eq!(b("f32", Arg::Float(1.5)).unwrap(), u64::from(1.5f32.to_bits()));
        assert_eq!(b("f32", Arg::Int(3)).unwrap(), u64::from(3.0f32.to_bits()));
        assert!(b("f32", Arg::Float(1e39)).unwrap_err().contains("out of range"));
        assert_eq!(b("f32", Arg::Float(f64::INFINITY)).unwrap(), u64::from(f32::INFINITY.to_bits()));
        assert!(b("f16", Arg::Float(1e6)).unwrap_err().contains("out of range"));
        assert_eq!(b("bf16", Arg::Float(-2.0)).unwrap(), u64::from(bf16::from_f32(-2.0).to_bits()));
        assert!(b("f64", Arg::Int((1 << 53) + 1)).unwrap_err().contains("no exact f64 value"));
        assert!(b("i32", Arg::Float(1.0)).unwrap_err().contains("expected an integer"));
        assert_eq!(b("index", Arg::Scalar(Scalar::I64(-5))).unwrap(), (-5i64) as u64);
        assert_eq!(b("i16", Arg::Scalar(Scalar::I32(1))).unwrap_err(), "type of argument 0: expected i16, got i32");
        let r0 = Array::scalar(7u16);
        assert_eq!(b("ui16", Arg::Array(&r0)).unwrap(), 7);
        assert!(b("i16", Arg::Array(&r0)).unwrap_err().contains("expected i16, got u16"));
        let r1 = Array::from_vec(&[1], vec![7u16]).unwrap();
        assert!(b("ui16", Arg::Array(&r1)).unwrap_err().contains("expected a scalar, got array"));
        assert!(Scalar::U64(u64::MAX).to_value().unwrap_err().to_string().contains("does not fit"));
        assert_eq!(Scalar::from_bits(ElementType::Scalar(ScalarType::I8), 0xff), Scalar::I8(-1));
        assert!(Arg::from_value(&Value::Str("x".into())).is_err());
        assert!(matches!(Arg::from_value(&Value::Int(3)).unwrap(), Arg::Int(3)));
    }
}
