//! A function of a loaded library: its type, the plan of its arguments (registers, stack slots, descriptor words) and its per-call scratch.

#[allow(unused_imports)]
use super::*;

#[derive(Clone, Copy, Debug)]
pub(super) enum Ret {
    Void,
    Reg(ElementType),
    Packed,
}

#[derive(Clone)]
pub(super) struct ArgPlan {
    pub(super) ty: MlirType,
    pub(super) loc: Loc,
    /// Word index of the descriptor (ranked), or of the `{rank, ptr}` header (unranked).
    pub(super) at: usize,
    /// For a ranked memref the raw ABI can describe: its buffer type and the
    /// layout it takes, for the buffer oracle (computed once, so converting
    /// an argument allocates nothing but arena memory).
    pub(super) oracle: Option<(BufferType, LayoutPreference)>,
}

/// Everything about a call that does not depend on the arguments.
#[derive(Clone)]
pub(super) struct Plan {
    pub(super) args: Vec<ArgPlan>,
    /// The same arguments as flat records for the fast binding path.
    pub(super) program: Program,
    pub(super) ret: Ret,
    /// Byte offset of each result in the packed result struct.
    pub(super) result_offsets: Vec<usize>,
    /// Words of the result struct plus the ranked descriptors and unranked headers.
    pub(super) fixed_words: usize,
    pub(super) stack_slots: usize,
    pub(super) full: bool,
    pub(super) has_unranked_args: bool,
    /// No unranked argument, no packed result: `bind_simple` may apply.
    pub(super) simple: bool,
    /// Where the result comes back.
    pub(super) ret_reg: ReturnReg,
    /// The type of a register result.
    pub(super) direct_ty: Option<RegKind>,
    /// `simple || simple_packed`: the fast binding path may apply.
    pub(super) fast: bool,
    /// The element type and rank of the one result when it is a ranked
    /// memref (returned packed, its descriptor at the start of the words).
    pub(super) one_memref: Option<(ElementType, usize)>,
}

impl Plan {
    /// The register result of a non-packed call.
    #[inline]
    pub(super) fn direct(&self, bits: u64) -> Option<(RegKind, u64)> {
        self.direct_ty.map(|e| (e, bits))
    }

    pub(super) fn new(ty: &FunctionType) -> Result<Plan, Error> {
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

pub(super) struct FnInner {
    pub(super) lib: Arc<LibInner>,
    pub(super) name: String,
    pub(super) ty: FunctionType,
    pub(super) decl: Option<FuncDecl>,
    pub(super) fp: usize,
    pub(super) plan: Plan,
    /// Where each raw argument is in the caller's values, for errors
    /// (`None`: raw argument `i` is argument `[i]`).
    pub(super) arg_places: Option<Arc<[(CallSide, IndexPath)]>>,
}

impl FnInner {
    pub(super) fn label(&self, index: usize) -> ArgLabel<'_> {
        match self.arg_places.as_ref().and_then(|p| p.get(index)) {
            Some((side, path)) => ArgLabel { index, side: *side, path: Some(path) },
            None => ArgLabel::raw(index),
        }
    }
}

/// A `_mlir_ciface_` function of a loaded library, with its type. Cheap to
/// clone; `Send + Sync`.
///
/// ```
/// use fnabi_core::Array;
/// use fnabi_mlir::{Arg, MlirLibrary};
/// let src = r#"
///   func.func @double(%x: memref<?xf32>, %y: memref<?xf32>) attributes {llvm.emit_c_interface} {
///     %c0 = arith.constant 0 : index
///     %c1 = arith.constant 1 : index
///     %n = memref.dim %x, %c0 : memref<?xf32>
///     scf.for %i = %c0 to %n step %c1 {
///       %v = memref.load %x[%i] : memref<?xf32>
///       %d = arith.addf %v, %v : f32
///       memref.store %d, %y[%i] : memref<?xf32>
///     }
///     return
///   }"#;
/// // SAFETY: the function writes only into `%y`, passed as `Arg::Mut`.
/// let lib = unsafe { MlirLibrary::compile(src)? };
/// let double = lib.function("double")?;
/// assert_eq!(double.name(), "double");
/// assert_eq!(double.ty().inputs.len(), 2);
/// let x = Array::from_vec(&[3], vec![1.0f32, 2.5, -4.0])?;
/// let mut y = Array::from_vec(&[3], vec![0.0f32; 3])?;
/// let results = double.call(&mut [Arg::Array(&x), Arg::Mut(&mut y)])?;
/// assert!(results.is_empty());
/// assert_eq!(y.to_vec::<f32>()?, [2.0, 5.0, -8.0]);
/// # Ok::<(), fnabi_core::Error>(())
/// ```
#[derive(Clone)]
pub struct MlirFunction {
    pub(super) inner: Arc<FnInner>,
}

impl std::fmt::Debug for MlirFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MlirFunction(@{}: {})", self.inner.name, self.inner.ty)
    }
}

pub(super) enum Out {
    Scalar(Scalar),
    Array(Array<'static>),
    Taken,
}

/// Per-call memory: descriptors, registers, result struct, converted
/// arguments, results.
pub(super) struct Scratch {
    pub(super) words: Vec<i64>,
    pub(super) frame: Frame,
    /// Per-call memory for converted arguments (reset after every call).
    pub(super) arena: Arena,
    pub(super) outs: Vec<Out>,
    /// The storage byte range of each memref argument (`(0, 0)` for the
    /// others), written by `bind_leaves` on every call.
    pub(super) ranges: Vec<(usize, usize)>,
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

    /// The same function with the places of its raw arguments in the
    /// caller's values, for errors: a structured function's leaf is at an
    /// index path of its arguments (`argument [1]["w"] (memref<4xf32>, raw
    /// argument 2): …` instead of `argument [2] (memref<4xf32>): …`), a
    /// destination at its result's.
    pub fn with_argument_paths(&self, places: Vec<(CallSide, IndexPath)>) -> Result<MlirFunction, Error> {
        let f = &self.inner;
        if places.len() != f.plan.args.len() {
            return Err(Error::mismatch(
                format!("number of argument paths of @{}", f.name),
                f.plan.args.len().to_string(),
                places.len().to_string(),
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
                arg_places: Some(places.into()),
            }),
        })
    }

    /// The address of `_mlir_ciface_<name>`.
    pub fn symbol_address(&self) -> *const c_void {
        self.inner.fp as *const c_void
    }

    pub(super) fn scratch(&self) -> Scratch {
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
