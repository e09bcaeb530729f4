//! A checked fast path from bound host values to VM arguments, for the
//! records that hot loops use: numeric `ndarray`s of an exact dtype,
//! `i1`…`i64` and `f32`/`f64` scalars, and `slist`/`stuple`/`sdict`
//! structures of them.
//!
//! [`FunctionAbi::pack_args`] builds fnabi's own VM values first (a boxed
//! buffer view per array, a vector per list), which costs about 90 ns per
//! array before the runtime sees anything. This walk checks the values
//! against the same records and hands them straight to a [`Sink`] (the
//! runtime's argument list). It is *only a shortcut*: it accepts exactly
//! the values that `pack_args` would pack unchanged, in the same shape and
//! order, and answers "not mine" (`Ok(false)`) for everything else (other
//! records, dtype casts, strided arrays, bools, scalars given as arrays,
//! every error), which then goes through `pack_args` and gets its precise
//! message. A property test checks the equivalence on random values.

use fnabi_abi::reflection::{Primitive, TypeRecord};
use fnabi_core::conventions::{FunctionAbi, ParamType, value_type_of};
use fnabi_core::value::Key;
use fnabi_core::vm::{CallingConvention, CconvItem, CconvType, ValueType, Variant};
use fnabi_core::{Array, DType, Error, Value};

/// What a value of one record becomes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Plan {
    /// A buffer view of an array of this dtype (any when `None`) whose
    /// shape fits `dims` (any rank when `None`).
    Array { dtype: Option<DType>, dims: Option<Vec<Option<u64>>> },
    /// An integer in `lo..=hi`, as a value of type `vt`.
    Int { vt: ValueType, lo: i64, hi: i64 },
    /// A number, as an `f32` (range-checked) or `f64` value.
    Float { f32: bool },
    /// A list or tuple of exactly these items, as a `list<?>`.
    Seq(Vec<Plan>),
    /// A dict with exactly these keys, as a `list<?>` in this order.
    Dict(Vec<(Key, Plan)>),
}

impl Plan {
    /// The plan of a record; `None` when the fast path does not take it.
    fn of(t: &TypeRecord) -> Option<Plan> {
        Some(match t {
            TypeRecord::Named(_, inner) => Plan::of(inner)?,
            TypeRecord::Primitive(p @ Primitive::Int(bits)) => {
                let vt = value_type_of(*p)?;
                let (lo, hi) = match *bits {
                    1 => (0, 1),
                    8 => (i8::MIN.into(), i8::MAX.into()),
                    16 => (i16::MIN.into(), i16::MAX.into()),
                    32 => (i32::MIN.into(), i32::MAX.into()),
                    64 => (i64::MIN, i64::MAX),
                    _ => return None,
                };
                Plan::Int { vt, lo, hi }
            }
            TypeRecord::Primitive(Primitive::Float(32)) => Plan::Float { f32: true },
            TypeRecord::Primitive(Primitive::Float(64)) => Plan::Float { f32: false },
            TypeRecord::NdArray(a) => {
                let dtype = match &*a.element {
                    TypeRecord::Primitive(p) => Some(p.dtype()?),
                    TypeRecord::Unknown => None,
                    _ => return None,
                };
                Plan::Array { dtype, dims: a.dims.clone() }
            }
            TypeRecord::SList(ts) | TypeRecord::STuple(ts) => {
                Plan::Seq(ts.iter().map(Plan::of).collect::<Option<_>>()?)
            }
            TypeRecord::SDict(es) => {
                Plan::Dict(es.iter().map(|(k, t)| Some((k.clone(), Plan::of(t)?))).collect::<Option<_>>()?)
            }
            _ => return None,
        })
    }

    /// Whether every value of this plan passes the register check of `t`.
    fn fits_register(&self, t: CconvType) -> bool {
        match (self, t) {
            (Plan::Array { .. } | Plan::Seq(_) | Plan::Dict(_), CconvType::Ref) => true,
            (Plan::Int { vt, .. }, CconvType::I32) => matches!(vt, ValueType::I8 | ValueType::I16 | ValueType::I32),
            (Plan::Int { .. }, CconvType::I64) => true,
            (Plan::Float { f32: true }, CconvType::F32) => true,
            (Plan::Float { .. }, CconvType::F64) => true,
            _ => false,
        }
    }

    /// The plans of a function's parameters, when the fast path takes all
    /// of them and they fit its calling convention (`fences` trailing
    /// arguments are the runtime's).
    pub(crate) fn for_function(abi: &FunctionAbi, cc: &CallingConvention, fences: usize) -> Option<Vec<Plan>> {
        let plans: Vec<Plan> = abi
            .params()?
            .iter()
            .map(|p| match &p.ty {
                ParamType::Record(t) => Plan::of(t),
                ParamType::Opaque(_) => None,
            })
            .collect::<Option<_>>()?;
        if cc.args().len() != plans.len() + fences {
            return None;
        }
        let fits = plans.iter().zip(cc.args()).all(|(p, item)| match item {
            CconvItem::Single(t) => p.fits_register(*t),
            CconvItem::Variadic(_) => false,
        });
        fits.then_some(plans)
    }
}

/// Where the walk puts the VM values: nested lists are opened and closed
/// around their items; values go into the innermost open list (or the
/// argument list).
pub(crate) trait Sink {
    /// Starts a `list<?>` of `len` items.
    fn open(&mut self, len: usize) -> Result<(), Error>;
    /// Ends the innermost list and appends it to the enclosing one.
    fn close(&mut self) -> Result<(), Error>;
    /// Appends a buffer view of `a`, whose dense row-major bytes are `bytes`.
    fn array(&mut self, a: &Array<'_>, bytes: &[u8]) -> Result<(), Error>;
    /// Appends a value.
    fn scalar(&mut self, v: Variant<'static>) -> Result<(), Error>;
}

/// Packs `args` by `plans` into `sink`: `Ok(true)` when done, `Ok(false)`
/// when some value is not for the fast path (the sink then holds a partial
/// argument list to discard), `Err` when the sink failed.
pub(crate) fn pack(plans: &[Plan], args: &[Value<'_>], sink: &mut impl Sink) -> Result<bool, Error> {
    if plans.len() != args.len() {
        return Ok(false);
    }
    for (p, v) in plans.iter().zip(args) {
        if !walk(p, v, sink)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn walk(p: &Plan, v: &Value<'_>, sink: &mut impl Sink) -> Result<bool, Error> {
    match (p, v) {
        (Plan::Array { dtype, dims }, Value::Array(a)) => {
            if dtype.is_some_and(|d| d != a.dtype()) || !fits(dims.as_deref(), a.shape()) {
                return Ok(false);
            }
            match dense_bytes(a) {
                Some(bytes) => sink.array(a, bytes)?,
                None => return Ok(false),
            }
        }
        (Plan::Int { vt, lo, hi }, Value::Int(i)) => {
            if i < lo || i > hi {
                return Ok(false);
            }
            // In range for the type, so the narrowing casts are exact.
            sink.scalar(match vt {
                ValueType::I8 => Variant::I8(*i as i8),
                ValueType::I16 => Variant::I16(*i as i16),
                ValueType::I32 => Variant::I32(*i as i32),
                _ => Variant::I64(*i),
            })?;
        }
        (Plan::Float { f32 }, Value::Float(_) | Value::Int(_)) => {
            let x = match v {
                Value::Float(x) => *x,
                Value::Int(i) => *i as f64,
                _ => return Ok(false),
            };
            if !*f32 {
                sink.scalar(Variant::F64(x))?;
            } else if x.is_finite() && !(x as f32).is_finite() {
                return Ok(false);
            } else {
                sink.scalar(Variant::F32(x as f32))?;
            }
        }
        (Plan::Seq(ps), Value::List(items) | Value::Tuple(items)) => {
            if items.len() != ps.len() {
                return Ok(false);
            }
            sink.open(ps.len())?;
            for (p, item) in ps.iter().zip(items) {
                if !walk(p, item, sink)? {
                    return Ok(false);
                }
            }
            sink.close()?;
        }
        (Plan::Dict(es), Value::Dict(d)) => {
            // Keys are unique in a dict: the same count and every record key
            // present means exactly the record's keys.
            if d.len() != es.len() {
                return Ok(false);
            }
            sink.open(es.len())?;
            for (i, (k, p)) in es.iter().enumerate() {
                // Callers usually write the keys in the record's order.
                let item = match d.entries().get(i) {
                    Some((dk, v)) if dk == k => Some(v),
                    _ => d.get(k),
                };
                match item {
                    Some(item) if walk(p, item, sink)? => {}
                    _ => return Ok(false),
                }
            }
            sink.close()?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The elements of a dense row-major array (`None` for any other layout),
/// without the general contiguity check of [`Array::as_bytes`].
fn dense_bytes<'a>(a: &'a Array<'_>) -> Option<&'a [u8]> {
    let mut expect = 1isize;
    for (&n, &s) in a.shape().iter().zip(a.strides()).rev() {
        if n > 1 && s != expect {
            return None;
        }
        expect = expect.checked_mul(isize::try_from(n).ok()?)?;
    }
    // SAFETY: the strides are row-major for the shape (extents of 1 may
    // have any stride; they never step), so the elements are exactly
    // nbytes() bytes from as_ptr(), which every Array constructor checked to
    // lie inside its storage; `a` keeps the storage alive and unwritten
    // while borrowed.
    Some(unsafe { std::slice::from_raw_parts(a.as_ptr(), a.nbytes()) })
}

/// Whether `shape` fits a record's dims.
fn fits(dims: Option<&[Option<u64>]>, shape: &[usize]) -> bool {
    match dims {
        None => true,
        Some(dims) => {
            dims.len() == shape.len() && dims.iter().zip(shape).all(|(d, &n)| d.is_none_or(|d| d == n as u64))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fnabi_abi::reflection::FunctionReflection;
    use fnabi_core::vm::{BufferView, VmList};
    use proptest::prelude::*;

    /// Builds fnabi VM values, to compare with `pack_args`.
    struct VmSink {
        stack: Vec<VmList<'static>>,
    }

    impl Sink for VmSink {
        fn open(&mut self, len: usize) -> Result<(), Error> {
            self.stack.push(VmList::variants(len));
            Ok(())
        }
        fn close(&mut self) -> Result<(), Error> {
            let l = self.stack.pop().ok_or_else(|| Error::invalid_argument("close without open"))?;
            self.top().push(Variant::list(l))
        }
        fn array(&mut self, a: &Array<'_>, _bytes: &[u8]) -> Result<(), Error> {
            let owned = a.to_contiguous()?;
            self.top().push(Variant::buffer_view(BufferView::new(owned)?))
        }
        fn scalar(&mut self, v: Variant<'static>) -> Result<(), Error> {
            self.top().push(v)
        }
    }

    impl VmSink {
        fn top(&mut self) -> &mut VmList<'static> {
            self.stack.last_mut().expect("the root list")
        }
    }

    fn fast(abi: &FunctionAbi, cc: &str, args: &[Value<'_>]) -> Option<VmList<'static>> {
        let cc = CallingConvention::parse(cc).unwrap();
        let plans = Plan::for_function(abi, &cc, 0)?;
        let mut sink = VmSink { stack: vec![VmList::variants(args.len())] };
        pack(&plans, args, &mut sink).unwrap().then(|| sink.stack.pop().unwrap())
    }

    /// Owned copies of a packed list, to compare with the fast path's.
    fn owned(l: &VmList<'_>) -> VmList<'static> {
        let mut out = VmList::with_capacity(l.element_type().clone(), l.len());
        for v in l.items() {
            let v = match v {
                Variant::Ref(fnabi_core::vm::VmRef::List(inner)) => Variant::list(owned(inner)),
                Variant::Ref(fnabi_core::vm::VmRef::BufferView(b)) => {
                    Variant::buffer_view(BufferView::new(b.array().to_contiguous().unwrap()).unwrap())
                }
                Variant::I8(x) => Variant::I8(*x),
                Variant::I16(x) => Variant::I16(*x),
                Variant::I32(x) => Variant::I32(*x),
                Variant::I64(x) => Variant::I64(*x),
                Variant::F32(x) => Variant::F32(*x),
                Variant::F64(x) => Variant::F64(*x),
                other => panic!("unexpected {other}"),
            };
            out.push(v).unwrap();
        }
        out
    }

    /// Equal lists, floats compared by their bits (NaN is NaN).
    fn same(a: &VmList<'_>, b: &VmList<'_>) -> bool {
        use fnabi_core::vm::VmRef;
        a.element_type() == b.element_type()
            && a.len() == b.len()
            && a.items().iter().zip(b.items()).all(|(x, y)| match (x, y) {
                (Variant::F32(x), Variant::F32(y)) => x.to_bits() == y.to_bits(),
                (Variant::F64(x), Variant::F64(y)) => x.to_bits() == y.to_bits(),
                (Variant::Ref(VmRef::List(x)), Variant::Ref(VmRef::List(y))) => same(x, y),
                (x, y) => x == y,
            })
    }

    const NESTED: &str = r#"{"a": [["sdict", ["a", ["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], ["b", ["sdict", ["c", ["ndarray", "f32", 1, 4]]]]], ["named", "alpha", "f32"], "i8", "i1", "i64", "f64", ["stuple", ["ndarray", "i32", 2, null, 2], ["ndarray", "unknown", null]]], "r": [], "v": 1}"#;
    const NESTED_CC: &str = "0rfiiIFr_v";

    fn abi() -> FunctionAbi {
        FunctionAbi::from_reflection(&FunctionReflection::parse(NESTED).unwrap())
    }

    #[test]
    fn plans_need_supported_records_and_matching_registers() {
        let abi = abi();
        let cc = CallingConvention::parse(NESTED_CC).unwrap();
        let plans = Plan::for_function(&abi, &cc, 0).unwrap();
        assert_eq!(plans[1], Plan::Float { f32: true });
        assert_eq!(plans[3], Plan::Int { vt: ValueType::I32, lo: 0, hi: 1 });
        // Fences: two more registers.
        assert!(Plan::for_function(&abi, &cc, 2).is_none());
        // A register of the wrong kind.
        assert!(Plan::for_function(&abi, &CallingConvention::parse("0rfiiiFr_v").unwrap(), 0).is_none());
        assert!(Plan::for_function(&abi, &CallingConvention::parse("0rFiiIfr_v").unwrap(), 0).is_none());
        // Unsupported records: a string list, kwargs, dynamic mode.
        let s = FunctionReflection::parse(r#"{"a": [["py_homogeneous_list", "i8"]], "r": [], "v": 1}"#).unwrap();
        assert!(
            Plan::for_function(&FunctionAbi::from_reflection(&s), &CallingConvention::parse("0r_v").unwrap(), 0)
                .is_none()
        );
        assert!(Plan::for_function(&FunctionAbi::dynamic(), &CallingConvention::parse("0r_v").unwrap(), 0).is_none());
    }

    fn f32s(shape: &[usize], v: Vec<f32>) -> Value<'static> {
        Value::from(Array::from_vec(shape, v).unwrap())
    }

    fn good_args() -> Vec<Value<'static>> {
        let four = || f32s(&[4], vec![1.0, 2.0, 3.0, 4.0]);
        vec![
            Value::dict([("b", Value::dict([("c", four())])), ("a", Value::List(vec![four(), four()]))]),
            Value::Float(2.5),
            Value::Int(-7),
            Value::Int(1),
            Value::Int(1 << 40),
            Value::Int(3),
            Value::Tuple(vec![
                Value::from(Array::from_vec(&[9, 2], vec![1i32; 18]).unwrap()),
                Value::from(Array::from_vec(&[2, 2], vec![1u8; 4]).unwrap()),
            ]),
        ]
    }

    #[test]
    fn the_fast_path_packs_what_pack_args_packs() {
        let abi = abi();
        let args = good_args();
        let slow = owned(&abi.pack_args(&args).unwrap());
        let fast = fast(&abi, NESTED_CC, &args).unwrap();
        assert!(same(&fast, &slow), "{fast} vs {slow}");
        assert_eq!(fast, slow);
    }

    #[test]
    fn the_fast_path_declines_what_it_does_not_take() {
        let abi = abi();
        let cases: Vec<(usize, Value<'static>)> = vec![
            (1, Value::Float(1e300)),                              // f32 overflow: an error
            (2, Value::Int(300)),                                  // i8 range: an error
            (3, Value::Bool(true)),                                // a bool: packed by pack_args
            (1, Value::from(Array::scalar(2.5f32))),               // a rank-0 array for a scalar
            (0, Value::dict([("a", Value::None)])),                // missing key
            (6, Value::List(vec![Value::None])),                   // wrong length
            (6, Value::Tuple(vec![Value::Int(1), Value::Int(2)])), // not arrays
        ];
        for (i, v) in cases {
            let mut args = good_args();
            args[i] = v;
            assert_eq!(fast(&abi, NESTED_CC, &args), None, "argument {i}");
        }
        // A strided array and a signless-integer array pass pack_args but
        // not the fast path.
        let mut args = good_args();
        let m = Array::from_vec(&[2, 9], vec![1i32; 18]).unwrap();
        args[6] = Value::Tuple(vec![Value::from(m.permuted(&[1, 0]).unwrap().into_owned().unwrap()), Value::None]);
        assert_eq!(fast(&abi, NESTED_CC, &args), None);
        assert_eq!(fast(&abi, NESTED_CC, &args[..2]), None, "arity");
    }

    #[test]
    fn dense_bytes_agrees_with_as_bytes() {
        let a = Array::from_vec(&[3, 4, 2], (0..24).map(|v| v as i16).collect::<Vec<_>>()).unwrap();
        let views = [
            a.clone(),
            a.permuted(&[1, 0, 2]).unwrap(),
            a.restrided(&[3, 2], &[8, 1], 0).unwrap(),
            a.restrided(&[1, 4], &[99, 2], 2).unwrap(),
            a.restrided(&[4, 1], &[2, 5], 4).unwrap(),
            a.restrided(&[0, 3], &[1, 1], 0).unwrap(),
            Array::scalar(3.5f64),
        ];
        for v in &views {
            assert_eq!(dense_bytes(v), v.as_bytes(), "{v:?}");
        }
    }

    fn value() -> impl Strategy<Value = Value<'static>> {
        let leaf = prop_oneof![
            Just(Value::None),
            any::<bool>().prop_map(Value::Bool),
            prop_oneof![Just(0i64), Just(1), Just(-129), Just(127), Just(1 << 40), any::<i64>()].prop_map(Value::Int),
            prop_oneof![Just(2.5f64), Just(1e300), Just(f64::NAN), Just(f64::INFINITY)].prop_map(Value::Float),
            (0usize..3, 1usize..6).prop_map(|(d, n)| match d {
                0 => f32s(&[n], vec![1.5; n]),
                1 => Value::from(Array::from_vec(&[n, 2], vec![3i32; 2 * n]).unwrap()),
                _ => Value::from(Array::from_vec(&[1, n], vec![7u32; n]).unwrap()),
            }),
        ];
        // Mostly leaves: the interesting values are near-valid ones.
        leaf.prop_recursive(2, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Tuple),
                prop::collection::vec((prop_oneof![Just("a"), Just("b"), Just("c"), Just("x")], inner), 0..4)
                    .prop_map(Value::dict),
            ]
        })
    }

    /// Replaces the value at a random path of the good arguments.
    fn mutate(mut args: Vec<Value<'static>>, path: &[usize], v: Value<'static>) -> Vec<Value<'static>> {
        fn go(at: &mut Value<'static>, path: &[usize], v: Value<'static>) {
            match path.split_first() {
                None => *at = v,
                Some((&i, rest)) => match at {
                    Value::List(items) | Value::Tuple(items) if !items.is_empty() => {
                        let n = items.len();
                        go(&mut items[i % n], rest, v)
                    }
                    Value::Dict(d) if !d.is_empty() => {
                        let k = d.keys().nth(i % d.len()).cloned().unwrap();
                        let mut slot = d.get(&k).cloned().unwrap();
                        go(&mut slot, rest, v);
                        d.insert(k, slot);
                    }
                    _ => *at = v,
                },
            }
        }
        let n = args.len();
        let (first, rest) = path.split_first().map_or((0, &[][..]), |(f, r)| (*f, r));
        go(&mut args[first % n], rest, v);
        args
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        #[test]
        fn fast_path_agrees_with_pack_args(path in prop::collection::vec(0usize..7, 1..4), v in value()) {
            let abi = abi();
            let args = mutate(good_args(), &path, v);
            let slow = abi.pack_args(&args).map(|l| owned(&l));
            // Whatever the fast path packs, pack_args packs the same way (so
            // it declines at least every error).
            if let Some(f) = fast(&abi, NESTED_CC, &args) {
                let slow = slow.map_err(|e| e.to_string());
                prop_assert!(slow.as_ref().is_ok_and(|s| same(&f, s)), "fast {f}, slow {slow:?}");
            }
        }
    }
}
