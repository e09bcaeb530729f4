//! VM values back to host values, leaf by leaf: the converters of the
//! records that are not structures (checked against them), which a
//! [`RecordPlan`] build calls, and dynamic mode (IREE's rules).

use super::*;

pub(super) fn take_list<'a>(x: Variant<'a>, t: &dyn fmt::Display, at: &At<'_>) -> Result<VmList<'a>, Error> {
    match x {
        Variant::Ref(VmRef::List(l)) => Ok(*l),
        x => Err(at.kind_err(format!("a list ({t})"), x.type_description())),
    }
}

/// Converts a leaf VM value by its rule (a record that is not a
/// structure; the elements of typed lists and reference arrays through
/// their own plan).
pub(super) fn leaf_from_vm<'a>(x: Variant<'a>, leaf: &Leaf, at: &At<'_>, cx: Conv) -> Result<Value<'a>, Error> {
    let (t, elements) = match leaf {
        Leaf::Record { t, elements } => (t, elements.as_deref()),
        Leaf::Opaque(name) => return Err(at.kind_err("a value the host can hold", name)),
    };
    match (t, elements) {
        (TypeRecord::Unknown, _) => dynamic_from_vm(x, at),
        (TypeRecord::Null, _) => match x {
            Variant::None => Ok(Value::None),
            x => Err(at.kind_err("none (a null slot)", x.type_description())),
        },
        (TypeRecord::Primitive(p @ Primitive::Int(bits)), _) => {
            let Some(i) = x.as_i64() else {
                return Err(at.kind_err(p, x.type_description()));
            };
            // The VM keeps an `iN` narrower than its register in an i32
            // (or i64) whose upper bits the compiled code does not keep
            // (`127 + 1` as an `i8` comes back as 128): its value is the low
            // N bits, read as signed — what the same code returns on fnabi's
            // MLIR backend (-128). An `i1` is its low bit.
            let i = match *bits {
                1 => i & 1,
                b @ 2..=63 => (i << (64 - b)) >> (64 - b),
                _ => i,
            };
            Ok(if *bits == 1 { Value::Bool(i == 1) } else { Value::Int(i) })
        }
        (TypeRecord::Primitive(p), _) => match x.as_f64() {
            Some(f) if matches!(p, Primitive::Float(32 | 64)) => Ok(Value::Float(f)),
            _ => Err(at.kind_err(p, x.type_description())),
        },
        (TypeRecord::NdArray(a), _) if a.is_numeric() => {
            let want = record_dtype(a, t, at)?;
            let bv = match x {
                Variant::Ref(VmRef::BufferView(b)) => b,
                x => return Err(at.kind_err(t, x.type_description())),
            };
            let arr = bv.into_boxed_array();
            match fit_array(&arr, a, t, at, want, cx)? {
                Some(cast) => Ok(Value::from(cast)),
                None => Ok(Value::from(arr)),
            }
        }
        (TypeRecord::NdArray(a), Some(elements)) => ref_array_from_vm(x, a, t, elements, at, cx),
        (TypeRecord::PyHomogeneousList(_), Some(elements)) => {
            let l = take_list(x, t, at)?;
            let mut out = Vec::with_capacity(l.len());
            for (i, item) in l.into_items().into_iter().enumerate() {
                out.push(elements.unpack(item, &at.index(i)?, cx)?);
            }
            Ok(Value::List(out))
        }
        // Structure and `named` records are never leaves; every record
        // that holds others has its elements' plan.
        _ => Err(at.err(CallErrorKind::Invalid(format!("{t} is not a leaf record")))),
    }
}

pub(super) fn ref_array_from_vm<'a>(
    x: Variant<'a>,
    a: &NdArrayType,
    t: &TypeRecord,
    elements: &RecordPlan,
    at: &At<'_>,
    cx: Conv,
) -> Result<Value<'a>, Error> {
    let pair = take_list(x, t, at)?;
    if pair.len() != 2 {
        return Err(
            at.kind_err(format!("a pair [values, dims] ({t})"), format!("a list of {}", count(pair.len(), "item")))
        );
    }
    let mut it = pair.into_items().into_iter();
    let (values, dims) = match (it.next(), it.next()) {
        (Some(v), Some(d)) => (v, d),
        _ => return Err(at.kind_err("a pair [values, dims]", "fewer items")),
    };
    let values = take_list(values, &"values", &at.index(0)?)?;
    let dims_at = at.index(1)?;
    let dims = take_list(dims, &"dims", &dims_at)?;
    let mut shape = Vec::with_capacity(dims.len());
    for (i, d) in dims.items().iter().enumerate() {
        match d.as_i64().map(usize::try_from) {
            Some(Ok(n)) => shape.push(n),
            _ => return Err(dims_at.index(i)?.kind_err("a dim (an integer >= 0)", d)),
        }
    }
    if let Some(kind) = array_misfit(a, None, DType::Bool, &shape) {
        return Err(at.err_in(t, kind));
    }
    let count = crate::array::element_count(&shape)?;
    if count != values.len() {
        return Err(at.kind_err(format!("{count} values for dims {shape:?}"), format!("{} values", values.len())));
    }
    let mut leaves = Vec::with_capacity(count);
    for (k, item) in values.into_items().into_iter().enumerate() {
        leaves.push(elements.unpack(item, &at.index(k)?, cx)?);
    }
    Ok(nest(leaves, &shape))
}

/// Nested lists of `shape` from leaves in C order (lengths checked by the caller).
pub(super) fn nest<'a>(leaves: Vec<Value<'a>>, shape: &[usize]) -> Value<'a> {
    match shape.split_first() {
        None => leaves.into_iter().next().unwrap_or_default(),
        Some((&n, rest)) => {
            let inner: usize = rest.iter().product();
            if inner == 0 || n == 0 {
                return Value::List((0..n).map(|_| nest(Vec::new(), rest)).collect());
            }
            let mut it = leaves.into_iter();
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                let chunk: Vec<Value<'a>> = it.by_ref().take(inner).collect();
                out.push(nest(chunk, rest));
            }
            Value::List(out)
        }
    }
}

pub(super) fn dynamic_from_vm<'a>(x: Variant<'a>, at: &At<'_>) -> Result<Value<'a>, Error> {
    Ok(match x {
        Variant::None => Value::None,
        Variant::I8(v) => Value::Int(v.into()),
        Variant::I16(v) => Value::Int(v.into()),
        Variant::I32(v) => Value::Int(v.into()),
        Variant::I64(v) => Value::Int(v),
        Variant::F32(v) => Value::Float(v.into()),
        Variant::F64(v) => Value::Float(v),
        Variant::Ref(VmRef::BufferView(b)) => Value::from(b.into_boxed_array()),
        Variant::Ref(VmRef::List(l)) => {
            if let Some(bytes) = l.to_bytes() {
                return Ok(match String::from_utf8(bytes) {
                    Ok(s) => Value::Str(s),
                    Err(e) => Value::Bytes(e.into_bytes()),
                });
            }
            let mut out = Vec::with_capacity(l.len());
            for (i, item) in l.into_items().into_iter().enumerate() {
                out.push(dynamic_from_vm(item, &at.index(i)?)?);
            }
            Value::List(out)
        }
        Variant::Ref(VmRef::Opaque(o)) => return Err(at.kind_err("a value the host can hold", o.type_name())),
    })
}
