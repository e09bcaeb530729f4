//! Prepared and bound calls: scratch kept across calls, leaves bound in one loop against the call plan, checked every call.

#[allow(unused_imports)]
use super::*;

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
    pub(super) func: MlirFunction,
    pub(super) scratch: Scratch,
}

impl PreparedMlirCall {
    /// Calls the function; the results borrow this call until dropped.
    #[inline]
    pub fn call(&mut self, args: &mut [Arg<'_, '_>]) -> Result<Results<'_>, Error> {
        let f = &self.func.inner;
        // Libraries with host bindings or runtime checks take the general
        // path: it reports a host function's or a check's failure.
        if f.plan.fast && !f.lib.general_only() && bind_simple(f, &mut self.scratch, args).is_some() {
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
        if !plan.fast || f.lib.general_only() || leaves.len() != steps.len() {
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
            let desc = s.words.get(..3 + 2 * rank).unwrap_or(&[]);
            // SAFETY: the descriptor was just returned by the callee, which
            // follows MLIR's conventions (the library's contract): callee
            // memory comes from libc malloc and is ours now; the ranges are
            // the arguments' storage, written by `bind_leaves` this call.
            if let Some(a) = unsafe { adopt_fresh_result(elem, desc, &s.ranges, image) } {
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
        if f.lib.general_only() {
            return Err(Error::invalid_argument(format!(
                "@{} cannot be bound: its module calls external functions or has runtime checks, whose failures only `call` reports",
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
pub(super) fn bind_leaves(plan: &Plan, s: &mut Scratch, leaves: &[&Value<'_>]) -> bool {
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
pub(super) fn bind_value(plan: &Plan, words: &mut [i64], frame: &mut Frame, i: usize, leaf: &Value<'_>) -> bool {
    let arg = match leaf {
        Value::Array(a) => Arg::Array(a),
        Value::Int(v) => Arg::Int(*v),
        Value::Float(v) => Arg::Float(*v),
        Value::Bool(v) => Arg::Bool(*v),
        _ => return false,
    };
    bind_fast(plan, words, frame, i, &arg).is_some()
}

pub(super) fn reborrow<'x>(a: &'x Arg<'_, '_>) -> Arg<'x, 'x> {
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
pub(super) fn bind_checks(f: &FnInner, s: &mut Scratch, args: &mut [Arg<'_, '_>]) -> Result<(), Error> {
    if args.len() != f.plan.args.len() {
        return Err(arity(f.plan.args.len(), args.len()));
    }
    for (i, (ap, arg)) in f.plan.args.iter().zip(args.iter()).enumerate() {
        let i = f.label(i);
        match (&ap.ty, arg) {
            (MlirType::MemRef(m), Arg::Array(a)) => {
                let w = &mut s.words[ap.at..ap.at + 3 + 2 * m.rank()];
                fill_descriptor(a, m, w).map_err(|e| locate_arg(i, &ap.ty, e))?;
            }
            (MlirType::Scalar(e), a) => {
                scalar_bits(i, &ap.ty, *e, a)?;
            }
            (t, a) => return Err(arg_error(i, t, CallError::value_kind("an array", a.kind()))),
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
    pub(super) call: &'p mut PreparedMlirCall,
    // What every invoke reads, copied out of the function and the frame
    // when bound (neither can change while `call` is borrowed): the call
    // loop then keeps them in registers, as a direct call keeps its
    // function pointer.
    pub(super) fp: usize,
    /// The frame's integer registers.
    pub(super) ints: [u64; trampoline::INT_REGS],
    /// The frame uses float registers or stack slots: call through it.
    pub(super) full: bool,
    pub(super) ret: ReturnReg,
    /// The type of the register result, if any.
    pub(super) direct: Option<RegKind>,
    pub(super) _args: std::marker::PhantomData<&'a ()>,
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
    pub(super) fn invoke_full(&self) -> u64 {
        invoke(self.fp, &self.call.scratch.frame, self.ret)
    }
}
