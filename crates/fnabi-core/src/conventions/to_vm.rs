//! Host values to VM values, leaf by leaf: the converters of the records
//! that are not structures (checked: kinds, dtypes, ranks, static dims,
//! ranges), which a [`RecordPlan`] walk calls, and dynamic mode.

use super::*;

/// A `py_homogeneous_list` (record `t`, elements of record `elem`
/// compiled as `elements`): a typed list of the converted items (`list<i8>`
/// of the bytes of a str or bytes value for `i8`).
pub(super) fn py_list_to_vm<'v>(
    v: &'v Value<'_>,
    elem: &TypeRecord,
    t: &TypeRecord,
    elements: &RecordPlan,
    at: &At<'_>,
    cx: Conv,
) -> Result<Variant<'v>, Error> {
    let et = element_type_of(elem);
    let bytes_ok = matches!(*elem, TypeRecord::Primitive(Primitive::Int(8)));
    match v {
        Value::Str(s) if bytes_ok => Ok(Variant::list(VmList::from_bytes(s.as_bytes()))),
        Value::Bytes(b) if bytes_ok => Ok(Variant::list(VmList::from_bytes(b))),
        Value::List(items) | Value::Tuple(items) => {
            let mut l = VmList::with_capacity(et, items.len());
            for (i, item) in items.iter().enumerate() {
                let at = at.index(i)?;
                let x = elements.convert(item, &at, cx)?;
                if !l.accepts(&x) {
                    return Err(at.kind_err(l.element_type(), x.type_description()));
                }
                l.push(x)?;
            }
            Ok(Variant::list(l))
        }
        _ => Err(at.kind_err(t, describe(v))),
    }
}

pub(super) fn dynamic_to_vm<'v>(v: &'v Value<'_>, at: &At<'_>) -> Result<Variant<'v>, Error> {
    Ok(match v {
        Value::None => Variant::None,
        Value::Bool(b) => Variant::I64(i64::from(*b)),
        Value::Int(i) => Variant::I64(*i),
        Value::Float(x) => Variant::F64(*x),
        Value::Str(s) => Variant::list(VmList::from_bytes(s.as_bytes())),
        Value::Bytes(b) => Variant::list(VmList::from_bytes(b)),
        Value::List(items) | Value::Tuple(items) => {
            let mut l = VmList::variants(items.len());
            for (i, item) in items.iter().enumerate() {
                l.push(dynamic_to_vm(item, &at.index(i)?)?)?;
            }
            Variant::list(l)
        }
        Value::Dict(d) => {
            let mut entries: Vec<(&Key, &Value<'_>)> = d.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut l = VmList::variants(entries.len());
            for (k, item) in entries {
                l.push(dynamic_to_vm(item, &at.name(k)?)?)?;
            }
            Variant::list(l)
        }
        Value::Array(a) => Variant::buffer_view(BufferView::from_array(a.view())?),
    })
}

pub(super) fn num_of(v: &Value<'_>) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::I((*i).into())),
        Value::Bool(b) => Some(Num::I((*b).into())),
        Value::Float(x) => Some(Num::F(*x)),
        Value::Array(a) if a.rank() == 0 => {
            let bytes = a.as_bytes()?;
            Some(read_num(a.dtype(), bytes))
        }
        _ => None,
    }
}

pub(super) fn int_range(bits: u32) -> (i128, i128) {
    if bits == 1 {
        return (0, 1);
    }
    let half = 1i128 << (bits.min(64) - 1);
    (-half, half - 1)
}

pub(super) fn scalar_to_vm<'v>(v: &Value<'_>, p: Primitive, at: &At<'_>) -> Result<Variant<'v>, Error> {
    let Some(vt) = value_type_of(p) else {
        return Err(at.kind_err("a record of a VM value type (i1, i8, i16, i32, i64, f32, f64)", p));
    };
    let n = match num_of(v) {
        Some(n) => n,
        None => return Err(at.kind_err(p, describe(v))),
    };
    if let Primitive::Int(bits) = p {
        let Num::I(i) = n else {
            return Err(at.kind_err(p, describe(v)));
        };
        let (lo, hi) = int_range(bits);
        if i < lo || i > hi {
            return Err(out_of_range(at, p, lo, hi, i));
        }
        // In range for the width, so the narrowing casts are exact.
        return Ok(match vt {
            ValueType::I8 => Variant::I8(i as i8),
            ValueType::I16 => Variant::I16(i as i16),
            ValueType::I32 => Variant::I32(i as i32),
            _ => Variant::I64(i as i64),
        });
    }
    // A VM scalar is real: a complex number is no f32/f64 value.
    let Some(x) = real(n).filter(|_| !matches!(n, Num::C(..))) else {
        return Err(at.kind_err(p, describe(v)));
    };
    Ok(match vt {
        ValueType::F32 => {
            if x.is_finite() && !(x as f32).is_finite() {
                return Err(at.err(CallErrorKind::OutOfRange { expected: "f32".into(), got: format!("{x:?}").into() }));
            }
            Variant::F32(x as f32)
        }
        _ => Variant::F64(x),
    })
}

/// True when a host array of dtype `got` passes for record dtype `want`
/// unchanged: the same type, or the other signedness of a signless width.
pub(super) fn dtype_passes(want: DType, got: DType) -> bool {
    use ScalarType as S;
    want == got
        || matches!(
            (want, got),
            (DType::Scalar(S::I8), DType::Scalar(S::U8))
                | (DType::Scalar(S::I16), DType::Scalar(S::U16))
                | (DType::Scalar(S::I32), DType::Scalar(S::U32))
                | (DType::Scalar(S::I64), DType::Scalar(S::U64))
        )
}

pub(super) fn shape_fits(a: &NdArrayType, shape: &[usize]) -> bool {
    match &a.dims {
        None => true,
        Some(dims) => {
            dims.len() == shape.len() && dims.iter().zip(shape).all(|(d, &n)| d.is_none_or(|d| d == n as u64))
        }
    }
}

/// Checks `arr` against the array record `a` (element type `want`) in both
/// directions: its shape must fit, and an element type that does not pass
/// is cast when `cx` allows casts, else it is a misfit. `Some` is the cast
/// copy; `None`: `arr` passes as it is.
pub(super) fn fit_array(
    arr: &Array<'_>,
    a: &NdArrayType,
    t: &TypeRecord,
    at: &At<'_>,
    want: Option<DType>,
    cx: Conv,
) -> Result<Option<Array<'static>>, Error> {
    if !shape_fits(a, arr.shape()) {
        return Err(misfit(at, t, a, want, arr.dtype(), arr.shape()));
    }
    match want {
        Some(w) if !dtype_passes(w, arr.dtype()) => {
            if !cx.casts {
                return Err(misfit(at, t, a, want, arr.dtype(), arr.shape()));
            }
            Ok(Some(cast_array(arr, w, at)?))
        }
        _ => Ok(None),
    }
}

pub(super) fn record_dtype(a: &NdArrayType, t: &TypeRecord, at: &At<'_>) -> Result<Option<DType>, Error> {
    match &*a.element {
        TypeRecord::Primitive(p) => match p.dtype() {
            Some(d) => Ok(Some(d)),
            None => Err(at.kind_err("an ndarray record of a host element type", t)),
        },
        _ => Ok(None),
    }
}

pub(super) fn ndarray_to_vm<'v>(
    v: &'v Value<'_>,
    a: &NdArrayType,
    t: &TypeRecord,
    at: &At<'_>,
    cx: Conv,
) -> Result<Variant<'v>, Error> {
    let want = record_dtype(a, t, at)?;
    match v {
        Value::Array(arr) => match fit_array(arr, a, t, at, want, cx)? {
            Some(cast) => Ok(Variant::buffer_view(BufferView::new(cast)?)),
            None => Ok(Variant::buffer_view(BufferView::from_array(arr.view())?)),
        },
        _ if a.rank() == Some(0) && want.is_some() => match num_of(v) {
            Some(n) => {
                let d = want.unwrap_or(DType::F32);
                let arr = array_of_nums(d, &[], &[n], at)?;
                Ok(Variant::buffer_view(BufferView::new(arr)?))
            }
            None => Err(at.kind_err(t, describe(v))),
        },
        _ => Err(at.kind_err(t, describe(v))),
    }
}

pub(super) fn ref_array_to_vm<'v>(
    v: &'v Value<'_>,
    a: &NdArrayType,
    t: &TypeRecord,
    elements: &RecordPlan,
    at: &At<'_>,
    cx: Conv,
) -> Result<Variant<'v>, Error> {
    let Some(rank) = a.rank() else {
        return Err(at.kind_err("an ndarray record of references with a known rank", t));
    };
    let mut shape: Vec<Option<usize>> = vec![None; rank];
    let mut values = VmList::with_capacity(element_type_of(&a.element), 0);
    gather_refs(v, 0, &mut shape, &mut values, elements, t, at, cx)?;
    // A level below an empty one is never seen: its extent is the record's
    // static dim if there is one, else 0.
    let declared = a.dims.as_deref().unwrap_or_default();
    let shape: Vec<usize> = shape
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            d.or_else(|| declared.get(i).copied().flatten().and_then(|n| usize::try_from(n).ok())).unwrap_or(0)
        })
        .collect();
    if let Some(kind) = array_misfit(a, None, DType::Bool, &shape) {
        return Err(at.err_in(t, kind));
    }
    let mut dims = VmList::with_capacity(ListElementType::Value(ValueType::I64), rank);
    for &d in &shape {
        let d = i64::try_from(d).map_err(|_| at.kind_err("dims that fit in i64", d))?;
        dims.push(Variant::I64(d))?;
    }
    let mut pair = VmList::variants(2);
    pair.push(Variant::list(values))?;
    pair.push(Variant::list(dims))?;
    Ok(Variant::list(pair))
}

/// Walks `rank` levels of nested lists, checking that they are
/// rectangular, and converts the leaves in C order.
#[allow(clippy::too_many_arguments)]
pub(super) fn gather_refs<'v>(
    v: &'v Value<'_>,
    level: usize,
    shape: &mut [Option<usize>],
    values: &mut VmList<'v>,
    elements: &RecordPlan,
    t: &TypeRecord,
    at: &At<'_>,
    cx: Conv,
) -> Result<(), Error> {
    if level == shape.len() {
        let x = elements.convert(v, at, cx)?;
        if !values.accepts(&x) {
            return Err(at.kind_err(values.element_type(), x.type_description()));
        }
        return values.push(x);
    }
    let Some(items) = v.as_sequence() else {
        return Err(at.kind_err(format!("nested lists {} deep ({t})", shape.len()), describe(v)));
    };
    match shape[level] {
        None => shape[level] = Some(items.len()),
        Some(n) if n != items.len() => {
            return Err(at.err_in(&"a rectangular array", CallErrorKind::Length { expected: n, got: items.len() }));
        }
        Some(_) => {}
    }
    for (i, item) in items.iter().enumerate() {
        gather_refs(item, level + 1, shape, values, elements, t, &at.index(i)?, cx)?;
    }
    Ok(())
}
