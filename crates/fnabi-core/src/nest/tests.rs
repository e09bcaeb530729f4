use super::*;
use crate::structure::{Structure, StructureBuilder, StructureExt};
use fnabi_abi::sip::SipSignature;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn x(v: f32) -> Array<'static> {
    Array::from_vec(&[1], vec![v]).unwrap()
}

fn first(v: &Value<'_>) -> f32 {
    v.as_array().unwrap().get(&[0]).unwrap()
}

fn plan(pairs: &[(usize, &[PathKey])]) -> Plan {
    let mut b = StructureBuilder::new();
    for (raw, path) in pairs {
        b.insert(*raw, path).unwrap();
    }
    b.finish().unwrap().plan().unwrap()
}

fn n(s: &str) -> PathKey {
    PathKey::Name(s.into())
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct D {
    c: Array<'static>,
    d: (Array<'static>, Array<'static>),
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Small {
    a: Vec<Array<'static>>,
    b: D,
}

fn small_plan() -> Plan {
    use PathKey::Index as I;
    plan(&[
        (0, &[n("a"), I(0)]),
        (1, &[n("a"), I(1)]),
        (2, &[n("b"), n("c")]),
        (3, &[n("b"), n("d"), I(0)]),
        (4, &[n("b"), n("d"), I(1)]),
    ])
}

fn small() -> Small {
    Small { a: vec![x(1.0), x(2.0)], b: D { c: x(3.0), d: (x(4.0), x(5.0)) } }
}

#[test]
fn structs_round_trip_without_copies() {
    let p = small_plan();
    let s = small();
    let leaves = flatten(&p, &s).unwrap();
    assert_eq!(leaves.iter().map(first).collect::<Vec<_>>(), [1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(leaves[4].as_array().unwrap().as_ptr(), s.b.d.1.as_ptr());
    let ptr = leaves[0].as_array().unwrap().as_ptr();
    let back: Small = unflatten(&p, leaves).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.a[0].as_ptr(), ptr, "unflatten moves arrays");
    // The same leaves as Value::flatten gives for the JSON-like value.
    let v = to_value(&s).unwrap();
    let by_value: Vec<f32> = p.flatten(&v).unwrap().into_iter().map(first).collect();
    assert_eq!(by_value, [1.0, 2.0, 3.0, 4.0, 5.0]);
    let s2: Small = from_value(v).unwrap();
    assert_eq!(s2, s);
}

#[test]
fn borrowed_arrays_are_copied() {
    #[derive(Serialize)]
    struct B<'a> {
        #[serde(borrow)]
        x: Array<'a>,
    }
    let data = [1.0f32, 2.0];
    let b = B { x: Array::from_slice(&[2], &data).unwrap() };
    let leaves = flatten(&plan(&[(0, &[n("x")])]), &b).unwrap();
    let a = leaves[0].as_array().unwrap();
    assert_ne!(a.as_ptr(), data.as_ptr().cast());
    assert_eq!(a.to_vec::<f32>().unwrap(), data);
}

#[test]
fn maps_options_gaps_and_scalars() {
    use PathKey::Index as I;
    let p = plan(&[(0, &[n("k1"), I(1)]), (1, &[n("k0"), I(0)]), (2, &[n("k1"), I(0)])]);
    let mut m: BTreeMap<String, Vec<Option<f32>>> = BTreeMap::new();
    m.insert("k0".into(), vec![Some(1.0)]);
    m.insert("k1".into(), vec![Some(2.0), None]);
    let leaves = flatten(&p, &m).unwrap();
    assert_eq!(leaves, [Value::None, Value::Float(1.0), Value::Float(2.0)]);
    let back: BTreeMap<String, Vec<Option<f32>>> = unflatten(&p, leaves).unwrap();
    assert_eq!(back, m);
    // Gaps must serialize as None.
    let gap = plan(&[(0, &[I(1)])]);
    assert_eq!(flatten(&gap, &(None::<i32>, 5)).unwrap(), [Value::Int(5)]);
    let e = flatten(&gap, &(3, 5)).unwrap_err();
    assert_eq!(e.to_string(), "at [0]: expected None (a gap of the structure), got an int");
    let t: (Option<i32>, i64) = unflatten(&gap, vec![Value::Int(7)]).unwrap();
    assert_eq!(t, (None, 7));
    // Integer map keys match string keys.
    let ik = plan(&[(0, &[n("1")])]);
    let mut m = BTreeMap::new();
    m.insert(1u8, "one");
    assert_eq!(flatten(&ik, &m).unwrap(), [Value::from("one")]);
}

#[test]
fn flatten_errors_name_paths() {
    let p = small_plan();
    #[derive(Serialize)]
    struct NoB {
        a: Vec<Array<'static>>,
    }
    let e = flatten(&p, &NoB { a: vec![x(1.0), x(2.0)] }).unwrap_err();
    assert_eq!(e.to_string(), "missing key \"b\" at the root");
    #[derive(Serialize)]
    struct Extra {
        a: Vec<Array<'static>>,
        b: D,
        z: i32,
    }
    let s = small();
    let e = flatten(&p, &Extra { a: s.a, b: s.b, z: 1 }).unwrap_err();
    assert_eq!(e.to_string(), "unexpected key \"z\" at the root");
    let s = small();
    let e = flatten(&p, &Small { a: vec![x(1.0)], b: s.b }).unwrap_err();
    assert_eq!(e.to_string(), "sequence at [\"a\"] has 1 item, needs 2");
    #[derive(Serialize)]
    struct WrongB {
        a: Vec<Array<'static>>,
        b: Vec<i32>,
    }
    let e = flatten(&p, &WrongB { a: vec![x(1.0), x(2.0)], b: vec![] }).unwrap_err();
    assert_eq!(e.to_string(), "at [\"b\"]: expected a dict, got a list");
    #[derive(Serialize)]
    struct ArrB {
        a: Vec<Array<'static>>,
        b: Array<'static>,
    }
    let e = flatten(&p, &ArrB { a: vec![x(1.0), x(2.0)], b: x(0.0) }).unwrap_err();
    assert_eq!(e.to_string(), "at [\"b\"]: expected a dict, got an array");
    let e = flatten(&p, &5u64).unwrap_err();
    assert_eq!(e.to_string(), "at the root: expected a dict, got an int");
    let e = to_value(&u64::MAX).unwrap_err();
    assert_eq!(e.to_string(), "integer 18446744073709551615 does not fit in a 64-bit signed int");
    let mut m = BTreeMap::new();
    m.insert(vec![1], 2);
    assert_eq!(to_value(&m).unwrap_err().to_string(), "dict keys must be strings (or integers)");
    // Empty sides.
    let empty = Plan::new(None).unwrap();
    assert!(flatten(&empty, &()).unwrap().is_empty());
    assert!(flatten(&empty, &Vec::<i32>::new()).unwrap().is_empty());
    assert!(flatten(&empty, &1).is_err());
    let u: Option<i32> = unflatten(&empty, vec![]).unwrap();
    assert_eq!(u, None);
}

#[test]
fn unflatten_errors_name_paths() {
    let p = small_plan();
    let leaves = || (0..5).map(|i| Value::array(x(i as f32))).collect::<Vec<_>>();
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct WantsMore {
        a: Vec<Array<'static>>,
        b: D,
        c: i32,
    }
    let e = unflatten::<WantsMore>(&p, leaves()).unwrap_err();
    assert_eq!(e.to_string(), "missing field `c`");
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct TupleA {
        a: (Array<'static>,),
        b: D,
    }
    let e = unflatten::<TupleA>(&p, leaves()).unwrap_err();
    assert_eq!(e.to_string(), "sequence at [\"a\"] has 2 items, needs 1");
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct IntC {
        a: Vec<Array<'static>>,
        b: BTreeMap<String, Vec<i8>>,
    }
    let e = unflatten::<IntC>(&p, leaves()).unwrap_err();
    assert_eq!(e.to_string(), "at [\"b\"][\"c\"][0]: invalid type: floating point `2.0`, expected i8");
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct NotArr {
        a: Vec<Array<'static>>,
        b: D,
    }
    let mut l = leaves();
    l[2] = Value::Int(1);
    assert_eq!(unflatten::<NotArr>(&p, l).unwrap_err().to_string(), "at [\"b\"][\"c\"]: expected an array, got an int");
    assert_eq!(unflatten::<NotArr>(&p, vec![]).unwrap_err().to_string(), "expected 5 leaves, got 0");
    // Unknown fields are skipped (serde's rule): a partial view of the results.
    #[derive(Deserialize)]
    struct OnlyA {
        a: Vec<Array<'static>>,
    }
    assert_eq!(unflatten::<OnlyA>(&p, leaves()).unwrap().a.len(), 2);
}

#[test]
fn arrays_deserialize_into_numbers_and_vecs() {
    let p = Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))]).plan().unwrap();
    let m = Array::from_vec(&[2, 2], vec![1i32, 2, 3, 4]).unwrap();
    let t = m.permuted(&[1, 0]).unwrap().into_owned().unwrap();
    let leaves = vec![Value::array(Array::scalar(2.5f32)), Value::array(t)];
    let (s, v): (f64, Vec<Vec<i64>>) = unflatten(&p, leaves).unwrap();
    assert_eq!(s, 2.5);
    assert_eq!(v, [[1, 3], [2, 4]]);
}

#[test]
fn values_inside_structs() {
    // [{"p": {"a": $0, "b": $1}}]: a Value field at a struct node.
    use PathKey::Index as I;
    let p = plan(&[(0, &[I(0), n("p"), n("a")]), (1, &[I(0), n("p"), n("b")])]);
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct W {
        p: Value<'static>,
    }
    let w = (W { p: Value::dict([("b", Value::Int(2)), ("a", Value::array(x(1.0)))]) },);
    let leaves = flatten(&p, &w).unwrap();
    assert_eq!(leaves, [Value::array(x(1.0)), Value::Int(2)]);
    let back: (W,) = unflatten(&p, leaves).unwrap();
    assert_eq!(back, w);
    // A dict whose keys look like an array is still a dict here.
    let q = plan(&[(0, &[n("data")]), (1, &[n("dtype")]), (2, &[n("shape")])]);
    let v: Value<'static> = unflatten(&q, vec![Value::Int(0), Value::Int(1), Value::Int(2)]).unwrap();
    assert_eq!(v, Value::dict([("data", Value::Int(0)), ("dtype", Value::Int(1)), ("shape", Value::Int(2))]));
}

#[test]
fn enums_and_json_inside_the_bridge() {
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    enum E {
        U,
        N(i32),
        T(i32, i32),
        S { a: i32 },
    }
    for e in [E::U, E::N(1), E::T(1, 2), E::S { a: 3 }] {
        let v = to_value(&e).unwrap();
        assert_eq!(from_value::<E>(v).unwrap(), e);
    }
    assert_eq!(crate::json::to_string(&to_value(&E::T(1, 2)).unwrap()), r#"{"T":{"$tuple":[1,2]}}"#);
    // A Serialize impl that writes JSON while the bridge runs gets the JSON form.
    struct Inner(Array<'static>);
    impl Serialize for Inner {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(&serde_json::to_string(&self.0).map_err(ser::Error::custom)?)
        }
    }
    let v = to_value(&(Inner(x(1.0)), x(2.0))).unwrap();
    assert_eq!(v, Value::Tuple(vec![Value::from(r#"{"dtype":"f32","shape":[1],"data":[1.0]}"#), Value::array(x(2.0))]));
    assert!(LENT.with(|l| l.get()).is_none());
    assert!(!bridge_active());
}

#[test]
fn sip_signature_end_to_end() {
    let sig = SipSignature::parse("I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R3!_0").unwrap();
    let inputs = Plan::new(sig.inputs()).unwrap();
    let v = crate::json::from_str(
        r#"[{"foo": {"dtype":"f32","shape":[1],"data":[0]}, "bar": {"dtype":"f32","shape":[1],"data":[1]}}, 2]"#,
    )
    .unwrap();
    let leaves = inputs.flatten(&v).unwrap();
    assert_eq!(first(leaves[0]), 0.0);
    assert_eq!(leaves[2], &Value::Int(2));
    let r: f32 = unflatten(&Plan::new(sig.results()).unwrap(), vec![Value::array(Array::scalar(4.0f32))]).unwrap();
    assert_eq!(r, 4.0);
}
