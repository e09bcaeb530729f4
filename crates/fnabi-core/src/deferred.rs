//! Deferred result allocation (the raw ABI's `fbr`), independent of any
//! backend: before a call, pre-allocate every result buffer whose shape the
//! signature fixes; for results with dynamic dims ask the function's
//! *result allocator* (the function `fbr` names) with the tuple of all
//! dynamic input dims; a slot it leaves empty (`None`, the documents' null
//! buffer) is allocated by the callee and known on completion.
//!
//! ```
//! use fnabi_core::deferred::{plan_results, ResultSlot};
//! use fnabi_core::{Array, DType, RawSignature};
//! // (Buffer<float32[?x4]>) -> (Buffer<float32[2x2]>, Buffer<float32[?]>, sint32)
//! let sig = RawSignature::parse_human("(Buffer<float32[?x4]>) -> (Buffer<float32[2x2]>, Buffer<float32[?]>, sint32)").unwrap();
//! // The result allocator that `fbr` names: one slot per dynamic result.
//! let mut fbr = |dims: &[usize]| -> fnabi_core::Result<Vec<Option<Array<'static>>>> {
//!     Ok(vec![Some(Array::zeros(DType::F32, &[dims[0] * 4])?)])
//! };
//! let slots = plan_results(&sig, &[&[3, 4]], Some(&mut fbr)).unwrap();
//! assert!(matches!(&slots[0], ResultSlot::Ready(a) if a.shape() == [2, 2]));
//! assert!(matches!(&slots[1], ResultSlot::Ready(a) if a.shape() == [12]));
//! assert!(matches!(slots[2], ResultSlot::NotABuffer));
//! // Without an allocator the dynamic result is the callee's to allocate.
//! let slots = plan_results(&sig, &[&[3, 4]], None).unwrap();
//! assert!(matches!(slots[1], ResultSlot::Deferred));
//! ```

use crate::array::Array;
use crate::buffer::{allocate, check_shape};
use crate::error::{CallError, CallErrorKind, CallSide, Error};
use fnabi_abi::raw::{BufferType, Dim, RawSignature, RawType};
use fnabi_abi::scalar::DType;
use fnabi_abi::structure::{IndexPath, PathKey};

/// The function an `fbr` attribute names: given all dynamic input dims (in
/// input order, dims in order within each input), it returns one slot per
/// result buffer that has a dynamic dim (in result order); `None` when that
/// result cannot be allocated up front (its shape depends on the data).
///
/// Closures `FnMut(&[usize]) -> Result<Vec<Option<Array<'static>>>>`
/// implement it; a backend implements it by calling the compiled function.
///
/// A struct allocator for `(Buffer<sint32[?]>, Buffer<sint32[?]>) ->
/// (Buffer<sint32[?]>, Buffer<sint32[?]>)` — a concatenation (length
/// `n + m`) and a result whose length only the data knows:
///
/// ```
/// use fnabi_core::deferred::{plan_results, ResultAllocator, ResultSlot};
/// use fnabi_core::{Array, DType, RawSignature};
/// struct Concat { calls: usize }
/// impl ResultAllocator for Concat {
///     fn allocate_results(&mut self, dims: &[usize]) -> fnabi_core::Result<Vec<Option<Array<'static>>>> {
///         self.calls += 1;
///         Ok(vec![Some(Array::zeros(DType::I32, &[dims[0] + dims[1]])?), None])
///     }
/// }
/// let sig = RawSignature::parse_human(
///     "(Buffer<sint32[?]>, Buffer<sint32[?]>) -> (Buffer<sint32[?]>, Buffer<sint32[?]>)",
/// )
/// .unwrap();
/// let mut alloc = Concat { calls: 0 };
/// let slots = plan_results(&sig, &[&[3], &[5]], Some(&mut alloc)).unwrap();
/// assert!(matches!(&slots[0], ResultSlot::Ready(a) if a.shape() == [8]));
/// assert!(matches!(slots[1], ResultSlot::Deferred));
/// assert_eq!(alloc.calls, 1);
/// ```
pub trait ResultAllocator {
    /// Allocates the dynamic results.
    fn allocate_results(&mut self, dynamic_input_dims: &[usize]) -> Result<Vec<Option<Array<'static>>>, Error>;
}

impl<F> ResultAllocator for F
where
    F: FnMut(&[usize]) -> Result<Vec<Option<Array<'static>>>, Error>,
{
    fn allocate_results(&mut self, dynamic_input_dims: &[usize]) -> Result<Vec<Option<Array<'static>>>, Error> {
        self(dynamic_input_dims)
    }
}

/// One result of a planned call.
///
/// ```
/// use fnabi_core::deferred::{plan_results, ResultSlot};
/// use fnabi_core::RawSignature;
/// // every result's shape is static here: all are ready before the call
/// let sig = RawSignature::parse_human("() -> (Buffer<float64[2x3]>, sint64)").unwrap();
/// let slots = plan_results(&sig, &[], None).unwrap();
/// match &slots[0] {
///     ResultSlot::Ready(a) => assert_eq!((a.shape(), a.nbytes()), (&[2, 3][..], 2 * 3 * 8)),
///     other => panic!("{other:?}"),
/// }
/// assert!(matches!(slots[1], ResultSlot::NotABuffer));
/// ```
#[derive(Debug)]
pub enum ResultSlot {
    /// Pre-allocated: the callee writes into it.
    Ready(Array<'static>),
    /// Allocated by the callee; known on completion.
    Deferred,
    /// Not a buffer (a scalar, ref object or unrecognized result).
    NotABuffer,
}

/// The dynamic dims of the inputs, in order: the argument of the result
/// allocator. `input_shapes` has one shape per raw input; non-buffer inputs
/// give an empty shape. Each buffer shape is checked against its type.
///
/// ```
/// use fnabi_core::deferred::dynamic_input_dims;
/// use fnabi_core::RawSignature;
/// let sig = RawSignature::parse_human("(Buffer<float32[?x4x?]>, sint32, Buffer<uint8[?]>) -> ()").unwrap();
/// assert_eq!(dynamic_input_dims(&sig, &[&[2, 4, 6], &[], &[9]]).unwrap(), [2, 6, 9]);
/// let e = dynamic_input_dims(&sig, &[&[2, 5, 6], &[], &[9]]).unwrap_err();
/// assert_eq!(e.to_string(), "argument [0] (Buffer<float32[?x4x?]>): dim 1: expected 4, got 5");
/// ```
pub fn dynamic_input_dims(sig: &RawSignature, input_shapes: &[&[usize]]) -> Result<Vec<usize>, Error> {
    if input_shapes.len() != sig.inputs().len() {
        let kind = CallErrorKind::Arity { expected: sig.inputs().len(), at_least: false, got: input_shapes.len() };
        return Err(CallError::argument(kind).into());
    }
    let mut dims = Vec::new();
    for (i, (t, shape)) in sig.inputs().iter().zip(input_shapes).enumerate() {
        match t {
            RawType::Buffer(b) => {
                check_shape(b, shape).map_err(|e| CallError::locate(e, CallSide::Argument, &input_path(i), b))?;
                dims.extend(b.dims().iter().zip(shape.iter()).filter(|(d, _)| **d == Dim::Dynamic).map(|(_, &n)| n));
            }
            _ if shape.is_empty() => {}
            _ => {
                let kind = CallError::value_kind("no shape (not a buffer)", format!("shape {shape:?}"));
                return Err(CallError::new(CallSide::Argument, input_path(i), kind).with_note(t).into());
            }
        }
    }
    Ok(dims)
}

fn input_path(i: usize) -> IndexPath {
    IndexPath(vec![PathKey::Index(i)])
}

/// Plans the results of a call: static result buffers are allocated
/// (dense, in their layout hint); results with dynamic dims come from
/// `allocator` (called once, only when there are such results) or, without
/// one, are [`ResultSlot::Deferred`]. Every buffer the allocator returns is
/// checked against its result type (element type, rank, static dims) and
/// must be writable.
pub fn plan_results(
    sig: &RawSignature,
    input_shapes: &[&[usize]],
    allocator: Option<&mut dyn ResultAllocator>,
) -> Result<Vec<ResultSlot>, Error> {
    let dynamic_inputs = dynamic_input_dims(sig, input_shapes)?;
    let dynamic_results: Vec<(usize, &BufferType)> = sig
        .results()
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.as_buffer().filter(|b| !b.is_static()).map(|b| (i, b)))
        .collect();
    let mut from_allocator: Vec<Option<Array<'static>>> = match allocator {
        Some(a) if !dynamic_results.is_empty() => {
            let slots = a.allocate_results(&dynamic_inputs)?;
            if slots.len() != dynamic_results.len() {
                return Err(Error::mismatch(
                    "slots returned by the result allocator (one per dynamic result)",
                    dynamic_results.len().to_string(),
                    slots.len().to_string(),
                ));
            }
            for (slot, (i, ty)) in slots.iter().zip(&dynamic_results) {
                if let Some(a) = slot {
                    check_allocated(*i, ty, a)?;
                }
            }
            slots
        }
        _ => Vec::new(),
    };
    from_allocator.reverse();
    let mut out = Vec::with_capacity(sig.results().len());
    for t in sig.results() {
        out.push(match t {
            RawType::Buffer(b) if b.is_static() => {
                let shape: Vec<usize> = b.dims().iter().filter_map(|d| d.as_static()).map(|n| n as usize).collect();
                ResultSlot::Ready(allocate(b, &shape)?)
            }
            RawType::Buffer(_) => match from_allocator.pop().flatten() {
                Some(a) => ResultSlot::Ready(a),
                None => ResultSlot::Deferred,
            },
            _ => ResultSlot::NotABuffer,
        });
    }
    Ok(out)
}

fn check_allocated(i: usize, ty: &BufferType, a: &Array<'static>) -> Result<(), Error> {
    let at = |kind| {
        CallError::new(CallSide::Result, input_path(i), kind).with_note(format_args!("{ty} from the result allocator"))
    };
    if a.dtype() != DType::Scalar(ty.dtype()) {
        return Err(at(CallErrorKind::Dtype { expected: DType::Scalar(ty.dtype()), got: a.dtype() }).into());
    }
    check_shape(ty, a.shape()).map_err(|e| {
        CallError::locate(e, CallSide::Result, &input_path(i), format_args!("{ty} from the result allocator"))
    })?;
    if !a.is_writable() {
        return Err(at(CallErrorKind::Invalid("not writable".into())).into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(s: &str) -> RawSignature {
        RawSignature::parse_human(s).unwrap()
    }

    type Slots = Result<Vec<Option<Array<'static>>>, Error>;

    #[test]
    fn static_results_are_preallocated_in_their_layout() {
        let s = sig("() -> (Buffer<float64[2x3], column-major>, Buffer<uint8[]>)");
        let slots = plan_results(&s, &[], None).unwrap();
        let ResultSlot::Ready(a) = &slots[0] else { panic!() };
        assert!(a.is_f_contiguous() && a.is_writable() && a.dtype() == DType::F64);
        let ResultSlot::Ready(b) = &slots[1] else { panic!() };
        assert_eq!((b.rank(), b.len()), (0, 1));
        // The allocator is not called when every result is static.
        let mut called = false;
        let mut f = |_: &[usize]| -> Slots {
            called = true;
            Ok(vec![])
        };
        plan_results(&s, &[], Some(&mut f)).unwrap();
        assert!(!called);
    }

    #[test]
    fn allocator_gets_all_dynamic_input_dims_and_may_defer() {
        let s = sig(
            "(Buffer<float32[?x2]>, Buffer<sint8[?x?]>) -> (Buffer<float32[?]>, Buffer<sint8[?x?]>, Buffer<float32[4]>)",
        );
        let mut seen = Vec::new();
        let mut f = |d: &[usize]| -> Slots {
            seen.extend_from_slice(d);
            Ok(vec![None, Some(Array::zeros(DType::I8, &[d[1], d[2]])?)])
        };
        let slots = plan_results(&s, &[&[5, 2], &[3, 7]], Some(&mut f)).unwrap();
        assert_eq!(seen, [5, 3, 7]);
        assert!(matches!(slots[0], ResultSlot::Deferred));
        assert!(matches!(&slots[1], ResultSlot::Ready(a) if a.shape() == [3, 7]));
        assert!(matches!(&slots[2], ResultSlot::Ready(a) if a.shape() == [4]));
    }

    #[test]
    fn allocator_results_are_checked() {
        let s = sig("(Buffer<float32[?]>) -> (Buffer<float32[?x3]>)");
        let run = |slots: Vec<Option<Array<'static>>>| {
            let mut slots = Some(slots);
            let mut f = move |_: &[usize]| -> Slots { Ok(slots.take().unwrap()) };
            plan_results(&s, &[&[2]], Some(&mut f)).map(|_| ()).unwrap_err().to_string()
        };
        assert_eq!(run(vec![]), "slots returned by the result allocator (one per dynamic result): expected 1, got 0");
        assert_eq!(
            run(vec![Some(Array::zeros(DType::F64, &[2, 3]).unwrap())]),
            "result [0] (Buffer<float32[?x3]> from the result allocator): element type: expected f32, got f64"
        );
        assert_eq!(
            run(vec![Some(Array::zeros(DType::F32, &[2, 4]).unwrap())]),
            "result [0] (Buffer<float32[?x3]> from the result allocator): dim 1: expected 3, got 4"
        );
        let shared = Array::zeros(DType::F32, &[2, 3]).unwrap();
        let keep = shared.clone();
        assert_eq!(
            run(vec![Some(shared)]),
            "result [0] (Buffer<float32[?x3]> from the result allocator): not writable"
        );
        drop(keep);
        let mut failing = |_: &[usize]| -> Slots { Err(Error::invalid_argument("fbr failed")) };
        assert!(plan_results(&s, &[&[2]], Some(&mut failing)).is_err());
    }

    #[test]
    fn input_shapes_are_checked() {
        let s = sig("(Buffer<float32[?x2]>, sint32) -> ()");
        assert_eq!(
            dynamic_input_dims(&s, &[&[1, 2]]).unwrap_err().to_string(),
            "wrong number of arguments: expected 2, got 1"
        );
        assert_eq!(
            dynamic_input_dims(&s, &[&[1, 2], &[1]]).unwrap_err().to_string(),
            "argument [1] (sint32): expected no shape (not a buffer), got shape [1]"
        );
        assert_eq!(
            dynamic_input_dims(&s, &[&[1], &[]]).unwrap_err().to_string(),
            "argument [0] (Buffer<float32[?x2]>): rank: expected 2, got 1"
        );
    }
}
