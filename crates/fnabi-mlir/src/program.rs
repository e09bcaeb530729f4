//! The call program of an MLIR function: one small, flat record per
//! argument ([`Step`]), computed once from the function type when the
//! function is looked up, that the fast binding path follows with no
//! further look at MLIR types: what kind of argument it is, the element
//! type, rank and static dims it must have, where its descriptor goes in
//! the scratch words and which register or stack slot carries it.
//!
//! The program decides nothing that depends on the arguments: every
//! argument is still checked against its type on every call
//! ([`bind_dense`] for the common identity-layout memref; the general
//! `fill_descriptor` and scalar checks for the rest), so a prepared call
//! may be given different arrays each time.

use crate::trampoline::Loc;
use fnabi_abi::mlir::types::{ElementType, MemRefLayout, MlirType};
use fnabi_abi::raw::Dim;
use fnabi_abi::scalar::DType;
use fnabi_core::array::Array;

/// What binding an argument takes on the fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StepKind {
    /// A ranked memref with an identity layout and element type `DType`:
    /// a dense row-major array binds in place ([`bind_dense`]).
    Dense(DType),
    /// A ranked memref with a `strided<…>` layout (or static dims that the
    /// program cannot hold): the general descriptor filling decides.
    Strided,
    /// A scalar of this type.
    Scalar(ElementType),
    /// An unranked memref: never on the fast path.
    Unranked,
}

/// One argument's record in a call program.
#[derive(Clone, Copy, Debug)]
pub(super) struct Step {
    /// The binding it takes.
    pub kind: StepKind,
    /// Its register or stack slot ([`Loc::slot`]).
    pub slot: u32,
    /// First word of its descriptor in the scratch words (memrefs).
    pub at: u32,
    /// Its rank (memrefs).
    pub rank: u32,
    /// Start of its static dims in [`Program::dims`] (`Dense` only).
    pub dims: u32,
}

/// The steps of every argument, in argument order, and the static dims
/// of the dense ones.
#[derive(Clone, Debug, Default)]
pub(super) struct Program {
    /// One per argument.
    pub steps: Vec<Step>,
    /// For each `Dense` step, `rank` entries from `dims`: the static
    /// extent, or `-1` for a dynamic dim.
    pub dims: Vec<i64>,
}

impl Program {
    /// Appends the step of an argument of type `t`, passed at `loc`, whose
    /// descriptor (if any) starts at word `at`.
    pub(super) fn push(&mut self, t: &MlirType, loc: Loc, at: usize) {
        let at = u32::try_from(at).unwrap_or(u32::MAX);
        let dims = u32::try_from(self.dims.len()).unwrap_or(u32::MAX);
        let (kind, rank) = match t {
            MlirType::Scalar(e) => (StepKind::Scalar(*e), 0),
            MlirType::UnrankedMemRef(_) => (StepKind::Unranked, 0),
            MlirType::MemRef(m) => {
                let rank = u32::try_from(m.rank()).unwrap_or(u32::MAX);
                // Any word offset or rank that does not fit u32 is beyond
                // every real function; such a step just takes the general path.
                let fits = at != u32::MAX && rank != u32::MAX && dims != u32::MAX;
                if matches!(m.layout, MemRefLayout::Identity) && fits {
                    self.dims.extend(m.dims.iter().map(|d| match d {
                        Dim::Static(s) => i64::from(*s),
                        Dim::Dynamic => -1,
                    }));
                    (StepKind::Dense(m.element.dtype()), rank)
                } else {
                    (StepKind::Strided, rank)
                }
            }
        };
        let slot = u32::try_from(loc.slot()).unwrap_or(u32::MAX);
        self.steps.push(Step { kind, slot, at, rank, dims });
    }

    /// The static dims of a `Dense` step.
    #[inline(always)]
    pub(super) fn dims_of(&self, step: &Step) -> Option<&[i64]> {
        let start = step.dims as usize;
        self.dims.get(start..start + step.rank as usize)
    }
}

/// Describes `a`, whose storage starts at `start`, as the memref descriptor
/// of an identity-layout memref of element type `dtype` and dims `fixed`
/// (`-1` dynamic) in `w`
/// (`3 + 2·rank` words), when it fits as-is: the same element type and
/// rank, each static dim equal, non-empty, dense row-major (dims of extent
/// 1 may have any stride). Returns `false` otherwise, having maybe written
/// some words: the caller then asks the general descriptor filling, which
/// decides and explains every other case (empty arrays, conversions,
/// errors).
///
/// The words are exactly what `fill_descriptor` writes for such an array.
#[inline(always)]
pub(super) fn bind_dense(a: &Array<'_>, start: usize, dtype: DType, fixed: &[i64], w: &mut [i64]) -> bool {
    let shape = a.shape();
    let strides = a.strides();
    let rank = fixed.len();
    if !same_dtype(a.dtype(), dtype) || shape.len() != rank || strides.len() != rank || w.len() != 3 + 2 * rank {
        return false;
    }
    let (head, dims) = w.split_at_mut(3);
    // Validated arrays have at most isize::MAX elements: sizes fit in i64.
    if let ([n], [stride], [d], [size_out, stride_out]) = (shape, strides, fixed, &mut *dims) {
        // Rank 1 (vectors, the most common argument), without a loop.
        let n = *n as i64;
        if n == 0 || (*d >= 0 && *d != n) || (n != 1 && *stride != 1) {
            return false;
        }
        *size_out = n;
        *stride_out = 1;
    } else {
        let (sizes_out, strides_out) = dims.split_at_mut(rank);
        let mut acc: i64 = 1;
        // Innermost dim first (the lengths are all `rank`: no bounds checks).
        let mut i = rank;
        while i > 0 {
            i -= 1;
            let n = shape[i] as i64;
            let d = fixed[i];
            if n == 0 || (d >= 0 && d != n) || (n != 1 && strides[i] as i64 != acc) {
                return false;
            }
            sizes_out[i] = n;
            strides_out[i] = acc;
            // Non-empty and validated: the element count fits in isize.
            acc = acc.wrapping_mul(n);
        }
    }
    let base = start as i64;
    head[0] = base;
    head[1] = base.wrapping_add(a.byte_offset() as i64);
    head[2] = 0;
    true
}

/// `a == b`, spelled so that it compiles to one byte comparison.
#[inline(always)]
fn same_dtype(a: DType, b: DType) -> bool {
    match (a, b) {
        (DType::Scalar(x), DType::Scalar(y)) => x as u8 == y as u8,
        (DType::Bool, DType::Bool) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memref::fill_descriptor;

    fn program(t: &str) -> (Program, MlirType) {
        let t: MlirType = t.parse().unwrap();
        let mut p = Program::default();
        p.push(&t, Loc::Int(0), 0);
        (p, t)
    }

    /// What `bind_dense` writes, or `None`.
    fn dense(p: &Program, a: &Array<'_>) -> Option<Vec<i64>> {
        let step = p.steps[0];
        let StepKind::Dense(dt) = step.kind else { panic!("{step:?}") };
        let mut w = vec![0; 3 + 2 * step.rank as usize];
        bind_dense(a, a.storage_ptr() as usize, dt, p.dims_of(&step).unwrap(), &mut w).then_some(w)
    }

    #[test]
    fn steps_record_kind_rank_and_static_dims() {
        let (p, _) = program("memref<?x4xf32>");
        assert_eq!(p.steps[0].kind, StepKind::Dense(DType::F32));
        assert_eq!(p.dims_of(&p.steps[0]).unwrap(), &[-1, 4]);
        let (p, _) = program("memref<?xi1>");
        assert_eq!(p.steps[0].kind, StepKind::Dense(DType::Bool));
        assert_eq!(program("memref<4xf32, strided<[?]>>").0.steps[0].kind, StepKind::Strided);
        assert_eq!(program("memref<*xf32>").0.steps[0].kind, StepKind::Unranked);
        assert_eq!(program("index").0.steps[0].kind, StepKind::Scalar(ElementType::Index));
    }

    #[test]
    fn dense_binding_agrees_with_fill_descriptor() {
        let a = Array::from_vec(&[2, 3], (0..6).map(|x| x as f32).collect()).unwrap();
        let arrays = [
            a.view(),
            a.permuted(&[1, 0]).unwrap(),
            a.restrided(&[3], &[1], 12).unwrap(),
            a.restrided(&[2, 1], &[1, 7], 0).unwrap(),
            a.restrided(&[0, 3], &[3, 1], 0).unwrap(),
            a.restrided(&[1, 3], &[5, 1], 4).unwrap(),
        ];
        let types = ["memref<?x?xf32>", "memref<2x3xf32>", "memref<?x2xf32>", "memref<?xf32>", "memref<?x?xi32>"];
        for t in types {
            let (p, ty) = program(t);
            let MlirType::MemRef(m) = &ty else { panic!() };
            for x in &arrays {
                let mut w = vec![0; 3 + 2 * m.rank()];
                let general = matches!(fill_descriptor(x, m, &mut w), Ok(true)).then_some(w);
                match dense(&p, x) {
                    // Whatever binds densely binds the same way in general.
                    Some(w) => assert_eq!(Some(w), general, "{t} {:?} {:?}", x.shape(), x.strides()),
                    // Declined: general handles it (empty) or it does not fit.
                    None => assert!(general.is_none() || x.is_empty(), "{t} {:?} {:?}", x.shape(), x.strides()),
                }
            }
        }
        // A row of the array: `aligned` points at its first element.
        let (p, _) = program("memref<3xf32>");
        let base = a.storage_ptr() as i64;
        assert_eq!(dense(&p, &arrays[2]).unwrap(), vec![base, base + 12, 0, 3, 1]);
        assert_eq!(dense(&p, &arrays[0]), None);
    }
}
