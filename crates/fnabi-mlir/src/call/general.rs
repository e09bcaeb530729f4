//! The general call path: every argument checked, described or converted through the buffer oracle, with precise errors.

#[allow(unused_imports)]
use super::*;

/// Converts a memref argument that does not fit its type as-is: the buffer
/// oracle decides the target layout (dense row-major for an identity
/// layout, the static or any strides of a `strided<>` layout) and the copy
/// goes into the per-call arena. Types the raw ABI cannot describe (`i1`
/// elements, static offsets) fall back to a heap copy.
pub(super) fn convert_leaf<'s>(
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
            Decision::Unsupported(reason) => Err(reason.into()),
        };
    }
    convert_for(a, m)
}

pub(super) fn has_static_offset(m: &MemRefType) -> bool {
    matches!(&m.layout, MemRefLayout::Strided { offset: Some(o), .. } if *o != 0)
}

/// The buffer oracle's layout preference for a memref type: an identity
/// layout needs dense row-major data; `strided<[?, …]>` takes any strides;
/// static strides must match.
///
/// ```
/// use fnabi_core::buffer::LayoutPreference;
/// use fnabi_mlir::call::layout_preference;
/// use fnabi_mlir::MlirType;
/// let pref = |t: &str| match t.parse::<MlirType>() {
///     Ok(MlirType::MemRef(m)) => layout_preference(&m),
///     other => panic!("not a memref: {other:?}"),
/// };
/// assert!(matches!(pref("memref<2x3xf32>"), LayoutPreference::Dense(_)));
/// assert!(matches!(pref("memref<2x3xf32, strided<[?, ?], offset: ?>>"), LayoutPreference::AnyStrided));
/// let LayoutPreference::Strides(s) = pref("memref<2x3xf32, strided<[1, 2]>>") else { panic!("not fixed strides") };
/// assert_eq!(s.as_slice(), [Some(1), Some(2)]);
/// ```
pub fn layout_preference(m: &MemRefType) -> LayoutPreference {
    match &m.layout {
        MemRefLayout::Identity => LayoutPreference::Dense(fnabi_abi::raw::DimOrder::RowMajor),
        MemRefLayout::Strided { strides, .. } if strides.iter().all(Option::is_none) => LayoutPreference::AnyStrided,
        MemRefLayout::Strided { strides, .. } => {
            LayoutPreference::Strides(strides.iter().map(|s| s.map(|v| v as isize)).collect())
        }
    }
}

pub(super) fn unranked_type(e: ElementType, rank: usize) -> MemRefType {
    MemRefType { element: e, dims: vec![Dim::Dynamic; rank], layout: MemRefLayout::Identity }
}

/// One call: binds `args` into `s`, invokes, takes the results.
pub(super) fn run<'s>(f: &FnInner, s: &'s mut Scratch, args: &mut [Arg<'_, '_>]) -> Result<Results<'s>, Error> {
    let plan = &f.plan;
    let ty = &f.ty;
    if args.len() != plan.args.len() {
        return Err(arity(plan.args.len(), args.len()));
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
                        a.as_mut_ptr().map_err(|e| locate_arg(li, t, e))?;
                        a
                    }
                    other => return Err(arg_error(li, t, CallError::value_kind("an array", other.kind()))),
                };
                let w = &mut s.words[ap.at..ap.at + 3 + 2 * m.rank()];
                if !fill_descriptor(a, m, w).map_err(|e| locate_arg(li, t, e))? {
                    let c = convert_leaf(a, m, ap.oracle.as_ref(), &scope).map_err(|e| locate_arg(li, t, e))?;
                    if !fill_descriptor(&c, m, w)? {
                        return Err(arg_error(
                            li,
                            t,
                            CallErrorKind::Invalid("the converted array does not fit its type".into()),
                        ));
                    }
                    temps.push((i, c));
                }
                ptr_of(ap.at)
            }
            MlirType::UnrankedMemRef(e) => {
                let a: &Array<'_> = match arg {
                    Arg::Array(a) => a,
                    Arg::Mut(a) => {
                        a.as_mut_ptr().map_err(|e| locate_arg(li, t, e))?;
                        a
                    }
                    other => return Err(arg_error(li, t, CallError::value_kind("an array", other.kind()))),
                };
                let m = unranked_type(*e, a.rank());
                let n = 3 + 2 * a.rank();
                let w = &mut s.words[dyn_at..dyn_at + n];
                if !fill_descriptor(a, &m, w).map_err(|e| locate_arg(li, t, e))? {
                    let c = convert_leaf(a, &m, None, &scope).map_err(|e| locate_arg(li, t, e))?;
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
    let bits = match &f.lib.guard {
        Some(g) => g.invoke(f.fp, &s.frame, ret_reg),
        None => Ok(invoke(f.fp, &s.frame, ret_reg)),
    };
    let host_failure = scope.and_then(crate::host::CallScope::finish);
    // A failed runtime check: the call stopped midway, nothing to take.
    let bits = bits.map_err(|report| {
        // An allocation the glue refused (`ALLOC_GLUE`): its size and limit.
        if let Some((requested, limit)) = guard::allocation_failure(&report) {
            return MlirError::AllocationFailed { function: f.name.clone(), requested, limit };
        }
        // Its location is in the text fnabi compiled: read as the user's.
        let report = match &f.lib.source {
            Some(source) => source.user_report(&report),
            None => report,
        };
        MlirError::RuntimeCheck { function: f.name.clone(), report }
    })?;
    if let Some(e) = host_failure {
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
pub(super) fn passed<'x>(
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

/// A raw argument list of the wrong length.
#[cold]
pub(super) fn arity(expected: usize, got: usize) -> Error {
    CallError::argument(CallErrorKind::Arity { expected, at_least: false, got }).into()
}
