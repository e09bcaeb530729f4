//! The fast call path (arguments that need no conversion) and the native invocation through the trampolines.

#[allow(unused_imports)]
use super::*;

/// Binds the common case without allocation or conversion: ranked memrefs
/// whose layout fits as-is, scalars, a result in a register or packed
/// results without unranked memrefs. `None` when the call needs the
/// general path (which redoes everything).
#[inline]
pub(super) fn bind_simple(f: &FnInner, s: &mut Scratch, args: &[Arg<'_, '_>]) -> Option<()> {
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
pub(super) fn bind_fast<'x, 'b>(
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
            let label = ArgLabel::raw(i);
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
pub(super) fn fill_general(plan: &Plan, i: usize, a: &Array<'_>, w: &mut [i64]) -> bool {
    match plan.args.get(i).map(|p| &p.ty) {
        Some(MlirType::MemRef(m)) => matches!(fill_descriptor(a, m, w), Ok(true)),
        _ => false,
    }
}

/// Invokes a call bound by `bind_simple`: the register result's bits.
#[inline]
pub(super) fn invoke_simple(f: &FnInner, s: &Scratch) -> u64 {
    invoke(f.fp, &s.frame, f.plan.ret_reg)
}

#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) fn invoke(fp: usize, frame: &Frame, ret: ReturnReg) -> u64 {
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
pub(super) fn invoke(_fp: usize, _frame: &Frame, _ret: ReturnReg) -> u64 {
    unreachable!("no plan exists on this target")
}

/// [`invoke`] with the integer registers of a frame that is not `full`
/// (copied into a [`BoundCall`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn invoke_regs(fp: usize, ints: &[u64; trampoline::INT_REGS], ret: ReturnReg) -> u64 {
    // SAFETY: as for `invoke`: `ints` are the integer registers of a frame
    // bound for `fp` by its plan, which has no float or stack arguments
    // (`full` is false); the arrays they point into stay borrowed by the
    // `BoundCall` that holds them.
    unsafe { trampoline::invoke_ints(fp as *const c_void, ints, ret) }
}

/// Plans are refused on other targets ([`Plan::new`]), so this is never reached.
#[cfg(not(target_arch = "x86_64"))]
pub(super) fn invoke_regs(_fp: usize, _ints: &[u64; trampoline::INT_REGS], _ret: ReturnReg) -> u64 {
    unreachable!("no plan exists on this target")
}
