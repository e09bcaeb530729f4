//! A checked fast path from bound host values to VM arguments: the same
//! walk as [`FunctionAbi::pack_args`] (one [`Plan::visit`] of the
//! function's [`RecordPlan`]), with a visitor that hands the containers
//! and leaves straight to a [`Sink`] (the runtime's argument list) instead
//! of building fnabi's own VM values first (a boxed buffer view per array,
//! a vector per list: about 90 ns per array before the runtime sees
//! anything).
//!
//! Its leaf step is a check per leaf record: numeric `ndarray`s of an
//! exact dtype, `i1`…`i64` and `f32`/`f64` scalars pass unchanged; every
//! other value is "not mine" (`Ok(false)`): other records, dtype casts,
//! strided arrays, bools, scalars given as arrays, every error, which then
//! go through `pack_args` and get its precise message. So it accepts
//! exactly the values that `pack_args` would pack unchanged, in the same
//! shape and order; a property test checks the equivalence on random values.

use fnabi_abi::reflection::{Primitive, TypeRecord};
use fnabi_core::conventions::{FunctionAbi, ParamType, RecordPlan, value_type_of};
use fnabi_core::structure::{PlanVisitor, VisitError};
use fnabi_core::vm::{CallingConvention, CconvItem, CconvType, ValueType, Variant};
use fnabi_core::{Array, DType, Error, Value};

/// What the fast path takes for one leaf record.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FastLeaf {
    /// A buffer view of an array of this dtype (any when `None`) whose
    /// shape fits `dims` (any rank when `None`).
    Array { dtype: Option<DType>, dims: Option<Vec<Option<u64>>> },
    /// An integer in `lo..=hi`, as a value of type `vt`.
    Int { vt: ValueType, lo: i64, hi: i64 },
    /// A number, as an `f32` (range-checked) or `f64` value.
    Float { f32: bool },
}

impl FastLeaf {
    /// The rule of a leaf record; `None` when the fast path does not take it.
    fn of(t: &TypeRecord) -> Option<FastLeaf> {
        Some(match t.unnamed() {
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
                FastLeaf::Int { vt, lo, hi }
            }
            TypeRecord::Primitive(Primitive::Float(32)) => FastLeaf::Float { f32: true },
            TypeRecord::Primitive(Primitive::Float(64)) => FastLeaf::Float { f32: false },
            TypeRecord::NdArray(a) => {
                let dtype = match &*a.element {
                    TypeRecord::Primitive(p) => Some(p.dtype()?),
                    TypeRecord::Unknown => None,
                    _ => return None,
                };
                FastLeaf::Array { dtype, dims: a.dims.clone() }
            }
            _ => return None,
        })
    }

    /// Whether every value of this rule passes the register check of `t`.
    fn fits_register(&self, t: CconvType) -> bool {
        match (self, t) {
            (FastLeaf::Array { .. }, CconvType::Ref) => true,
            (FastLeaf::Int { vt, .. }, CconvType::I32) => matches!(vt, ValueType::I8 | ValueType::I16 | ValueType::I32),
            (FastLeaf::Int { .. }, CconvType::I64) => true,
            (FastLeaf::Float { f32: true }, CconvType::F32) => true,
            (FastLeaf::Float { .. }, CconvType::F64) => true,
            _ => false,
        }
    }

    /// The rules of a function's leaves (by slot of its [`RecordPlan`]),
    /// when the fast path takes all of them and the parameters fit its
    /// calling convention (`fences` trailing arguments are the runtime's).
    pub(crate) fn for_function(abi: &FunctionAbi, cc: &CallingConvention, fences: usize) -> Option<Vec<FastLeaf>> {
        let plan = abi.record_plan()?;
        let params = abi.params()?;
        let leaves: Vec<FastLeaf> =
            (0..plan.plan().leaf_count()).map(|s| FastLeaf::of(plan.leaf_record(s as u32)?)).collect::<Option<_>>()?;
        if cc.args().len() != params.len() + fences {
            return None;
        }
        let fits = params.iter().zip(cc.args()).all(|(p, item)| match (&p.ty, item) {
            (ParamType::Record(t), CconvItem::Single(r)) if t.is_structure() => *r == CconvType::Ref,
            (ParamType::Record(t), CconvItem::Single(r)) => FastLeaf::of(t).is_some_and(|l| l.fits_register(*r)),
            _ => false,
        });
        fits.then_some(leaves)
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

/// Why the fast walk stops.
enum Stop {
    /// A value the fast path does not take.
    NotMine,
    /// The sink failed.
    Sink(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Sink(e)
    }
}

/// The fast path's visitor: containers and checked leaves to the sink.
struct ToSink<'l, 's, S> {
    leaves: &'l [FastLeaf],
    sink: &'s mut S,
}

impl<'v, 'a: 'v, S: Sink> PlanVisitor<'v, 'a> for ToSink<'_, '_, S> {
    type Error = Stop;

    #[inline]
    fn open_seq(&mut self, len: usize) -> Result<(), Stop> {
        Ok(self.sink.open(len)?)
    }

    #[inline]
    fn open_dict(&mut self, len: usize) -> Result<(), Stop> {
        Ok(self.sink.open(len)?)
    }

    #[inline]
    fn close(&mut self) -> Result<(), Stop> {
        Ok(self.sink.close()?)
    }

    fn gap(&mut self) -> Result<(), Stop> {
        Err(Stop::NotMine)
    }

    #[inline]
    fn leaf(&mut self, slot: u32, v: &'v Value<'a>) -> Result<(), Stop> {
        let Some(rule) = self.leaves.get(slot as usize) else {
            return Err(Stop::NotMine);
        };
        match (rule, v) {
            (FastLeaf::Array { dtype, dims }, Value::Array(a)) => {
                if dtype.is_some_and(|d| d != a.dtype()) || !fits(dims.as_deref(), a.shape()) {
                    return Err(Stop::NotMine);
                }
                match a.as_bytes() {
                    Some(bytes) => self.sink.array(a, bytes)?,
                    None => return Err(Stop::NotMine),
                }
            }
            (FastLeaf::Int { vt, lo, hi }, Value::Int(i)) => {
                if i < lo || i > hi {
                    return Err(Stop::NotMine);
                }
                // In range for the type, so the narrowing casts are exact.
                self.sink.scalar(match vt {
                    ValueType::I8 => Variant::I8(*i as i8),
                    ValueType::I16 => Variant::I16(*i as i16),
                    ValueType::I32 => Variant::I32(*i as i32),
                    _ => Variant::I64(*i),
                })?;
            }
            (FastLeaf::Float { f32 }, Value::Float(_) | Value::Int(_)) => {
                let x = match v {
                    Value::Float(x) => *x,
                    Value::Int(i) => *i as f64,
                    _ => return Err(Stop::NotMine),
                };
                if !*f32 {
                    self.sink.scalar(Variant::F64(x))?;
                } else if x.is_finite() && !(x as f32).is_finite() {
                    return Err(Stop::NotMine);
                } else {
                    self.sink.scalar(Variant::F32(x as f32))?;
                }
            }
            _ => return Err(Stop::NotMine),
        }
        Ok(())
    }
}

/// Packs `args` along `plan` (whose leaf rules are `leaves`) into `sink`:
/// `Ok(true)` when done, `Ok(false)` when some value is not for the fast
/// path (the sink then holds a partial argument list to discard), `Err`
/// when the sink failed.
pub(crate) fn pack(
    plan: &RecordPlan,
    leaves: &[FastLeaf],
    args: &[Value<'_>],
    sink: &mut impl Sink,
) -> Result<bool, Error> {
    match plan.plan().visit_items(args, &mut ToSink { leaves, sink }) {
        Ok(()) => Ok(true),
        Err(VisitError::Structure(_) | VisitError::Visitor(Stop::NotMine)) => Ok(false),
        Err(VisitError::Visitor(Stop::Sink(e))) => Err(e),
    }
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
        let leaves = FastLeaf::for_function(abi, &cc, 0)?;
        let mut sink = VmSink { stack: vec![VmList::variants(args.len())] };
        pack(abi.record_plan()?, &leaves, args, &mut sink).unwrap().then(|| sink.stack.pop().unwrap())
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
        let leaves = FastLeaf::for_function(&abi, &cc, 0).unwrap();
        // Slots: a[0], a[1], c, then alpha, the i8, the i1.
        assert_eq!(leaves[3], FastLeaf::Float { f32: true });
        assert_eq!(leaves[5], FastLeaf::Int { vt: ValueType::I32, lo: 0, hi: 1 });
        // Fences: two more registers.
        assert!(FastLeaf::for_function(&abi, &cc, 2).is_none());
        // A register of the wrong kind.
        assert!(FastLeaf::for_function(&abi, &CallingConvention::parse("0rfiiiFr_v").unwrap(), 0).is_none());
        assert!(FastLeaf::for_function(&abi, &CallingConvention::parse("0rFiiIfr_v").unwrap(), 0).is_none());
        // Unsupported records: a string list (also inside a structure), dynamic mode.
        let s =
            FunctionReflection::parse(r#"{"a": [["slist", "i32", ["py_homogeneous_list", "i8"]]], "r": [], "v": 1}"#)
                .unwrap();
        assert!(
            FastLeaf::for_function(&FunctionAbi::from_reflection(&s), &CallingConvention::parse("0r_v").unwrap(), 0)
                .is_none()
        );
        let s = FunctionReflection::parse(r#"{"a": [["py_homogeneous_list", "i8"]], "r": [], "v": 1}"#).unwrap();
        assert!(
            FastLeaf::for_function(&FunctionAbi::from_reflection(&s), &CallingConvention::parse("0r_v").unwrap(), 0)
                .is_none()
        );
        assert!(
            FastLeaf::for_function(&FunctionAbi::dynamic(), &CallingConvention::parse("0r_v").unwrap(), 0).is_none()
        );
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
    fn dicts_pack_in_the_record_key_order() {
        // Keys not in alphabetical order, the host dict in either order,
        // and a keyword-arguments dict: the fast path packs as pack_args.
        let f = FunctionReflection::parse(
            r#"{"a": [["sdict", ["y", "i32"], ["x", ["sdict", ["q", "f64"], ["p", ["ndarray", "f32", 1, 2]]]]], ["sdict_kwargs", ["b", "i64"], ["a", "i8"]]], "r": [], "v": 1}"#,
        )
        .unwrap();
        let abi = FunctionAbi::from_reflection(&f);
        let p = f32s(&[2], vec![1.0, 2.0]);
        let x1 = Value::dict([("q", Value::Float(0.5)), ("p", p.clone())]);
        let x2 = Value::dict([("p", p), ("q", Value::Float(0.5))]);
        let kw = Value::dict([("a", Value::Int(-3)), ("b", Value::Int(9))]);
        for d in [
            Value::dict([("y", Value::Int(7)), ("x", x1.clone())]),
            Value::dict([("x", x1), ("y", Value::Int(7))]),
            Value::dict([("x", x2), ("y", Value::Int(7))]),
        ] {
            let args = [d, kw.clone()];
            let slow = owned(&abi.pack_args(&args).unwrap());
            let fast = fast(&abi, "0rr_v", &args).unwrap();
            assert_eq!(fast, slow);
            assert_eq!(fast.to_string(), "list<?>[list<?>[i32 7, list<?>[f64 0.5, bv f32[2]]], list<?>[i64 9, i8 -3]]");
        }
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
