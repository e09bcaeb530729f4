use super::*;
use crate::structure::StructureBuilder;
use crate::structure::StructureExt;
use PathKey::Index as I;
use fnabi_abi::limits::{MAX_DEPTH, MAX_GAP_SLOTS};

fn n(s: &str) -> PathKey {
    PathKey::Name(s.into())
}

fn build(pairs: &[(usize, &[PathKey])]) -> Structure {
    let mut b = StructureBuilder::new();
    for (raw, path) in pairs {
        b.insert(*raw, path).unwrap();
    }
    b.finish().unwrap()
}

fn int(i: i64) -> Value<'static> {
    Value::Int(i)
}

fn list(v: Vec<Value<'static>>) -> Value<'static> {
    Value::List(v)
}

fn example() -> Plan {
    // [{"bar": $1, "foo": $0}, $2]
    build(&[(0, &[I(0), n("foo")]), (1, &[I(0), n("bar")]), (2, &[I(1)])]).plan().unwrap()
}

#[test]
fn flatten_in_raw_order_and_back() {
    let p = example();
    let v = list(vec![Value::dict([("foo", int(10)), ("bar", int(11))]), int(12)]);
    let leaves = p.flatten(&v).unwrap();
    assert_eq!(leaves, [&int(10), &int(11), &int(12)]);
    assert_eq!(p.raw_indices(), &[0, 1, 2]);
    let paths: Vec<String> = p.leaf_paths().iter().map(|p| p.to_string()).collect();
    assert_eq!(paths, ["[0][\"foo\"]", "[0][\"bar\"]", "[1]"]);
    let back = p.unflatten(leaves.into_iter().cloned().collect()).unwrap();
    assert_eq!(back, v);
    // Tuples flatten like lists; unflatten builds lists.
    let t = Value::Tuple(vec![Value::dict([("bar", int(1)), ("foo", int(0))]), int(2)]);
    assert_eq!(p.flatten(&t).unwrap(), [&int(0), &int(1), &int(2)]);
}

#[test]
fn sparse_raw_indices_use_ranks() {
    let s = Structure::Sequence(vec![(0, Structure::Leaf(7)), (1, Structure::Leaf(3))]);
    let p = s.plan().unwrap();
    assert_eq!(p.raw_indices(), &[3, 7]);
    let v = list(vec![int(70), int(30)]);
    assert_eq!(p.flatten(&v).unwrap(), [&int(30), &int(70)]);
    assert_eq!(p.unflatten(vec![int(30), int(70)]).unwrap(), v);
}

#[test]
fn error_messages_name_paths() {
    let p = example();
    let e = |v: Value<'static>| p.flatten(&v).map(|_| ()).unwrap_err().to_string();
    assert_eq!(e(list(vec![list(vec![]), int(1)])), "at [0]: expected a dict, got a list");
    assert_eq!(e(list(vec![Value::dict([("bar", int(1))]), int(1)])), "missing key \"foo\" at [0]");
    assert_eq!(
        e(list(vec![Value::dict([("bar", int(1)), ("foo", int(1)), ("baz", int(1))]), int(1)])),
        "unexpected key \"baz\" at [0]"
    );
    assert_eq!(e(list(vec![Value::dict([("bar", int(1)), ("baz", int(1))]), int(1)])), "missing key \"foo\" at [0]");
    assert_eq!(e(list(vec![int(0)])), "sequence at the root has 1 item, needs 2");
    assert_eq!(e(int(0)), "at the root: expected a list or tuple, got an int");
    let deep = build(&[(0, &[n("a"), I(1), n("foo")]), (1, &[n("a"), I(0)])]).plan().unwrap();
    let v = Value::dict([("a", list(vec![int(0), list(vec![])]))]);
    assert_eq!(deep.flatten(&v).unwrap_err().to_string(), "at [\"a\"][1]: expected a dict, got a list");
    let v = Value::dict([("a", list(vec![int(0)]))]);
    assert_eq!(deep.flatten(&v).unwrap_err().to_string(), "sequence at [\"a\"] has 1 item, needs 2");
    let e = p.unflatten(vec![int(1)]).unwrap_err();
    assert_eq!(e.to_string(), "expected 3 leaves, got 1");
    let mut out = vec![&NONE; 2];
    assert!(p.flatten_into(&int(0), &mut out).is_err());
}

#[test]
fn gaps_are_none() {
    // [None, $0, None, $1]
    let p = build(&[(0, &[I(1)]), (1, &[I(3)])]).plan().unwrap();
    let v = list(vec![Value::None, int(5), Value::None, int(6)]);
    assert_eq!(p.flatten(&v).unwrap(), [&int(5), &int(6)]);
    assert_eq!(p.unflatten(vec![int(5), int(6)]).unwrap(), v);
    let bad = list(vec![Value::None, int(5), Value::from("x"), int(6)]);
    assert_eq!(p.flatten(&bad).unwrap_err().to_string(), "at [2]: expected None (a gap of the structure), got a str");
    assert_eq!(
        p.flatten(&list(vec![Value::None, int(5)])).unwrap_err().to_string(),
        "sequence at the root has 2 items, needs 4"
    );
}

#[test]
fn empty_sides_and_leaf_roots() {
    let p = Plan::new(None).unwrap();
    assert_eq!(p.leaf_count(), 0);
    assert!(p.flatten(&Value::None).unwrap().is_empty());
    assert!(p.flatten(&list(vec![])).unwrap().is_empty());
    assert!(p.flatten(&Value::Dict(Dict::new())).unwrap().is_empty());
    assert_eq!(
        p.flatten(&int(1)).unwrap_err().to_string(),
        "at the root: expected None (the side is empty), got an int"
    );
    assert_eq!(p.unflatten(vec![]).unwrap(), Value::None);
    let leaf = Structure::Leaf(0).plan().unwrap();
    assert_eq!(leaf.flatten(&list(vec![int(1)])).unwrap(), [&list(vec![int(1)])]);
    assert_eq!(leaf.unflatten(vec![int(4)]).unwrap(), int(4));
    let empty_seq = Structure::Sequence(vec![]).plan().unwrap();
    assert_eq!(empty_seq.unflatten(vec![]).unwrap(), list(vec![]));
}

#[test]
fn invalid_structures_are_rejected() {
    let unordered = Structure::Dict(vec![("b".into(), Structure::Leaf(0)), ("a".into(), Structure::Leaf(1))]);
    assert_eq!(unordered.validate().unwrap_err().to_string(), "at the root: keys are not strictly ascending");
    let nested =
        Structure::Sequence(vec![(3, Structure::Sequence(vec![(1, Structure::Leaf(0)), (1, Structure::Leaf(1))]))]);
    assert_eq!(nested.validate().unwrap_err().to_string(), "at [3]: keys are not strictly ascending");
    let dup = Structure::Sequence(vec![(0, Structure::Leaf(4)), (1, Structure::Leaf(4))]);
    assert_eq!(dup.validate().unwrap_err().to_string(), "raw index 4 is used by both [0] and [1]");
    let mut deep = Structure::Leaf(0);
    for _ in 0..=MAX_DEPTH {
        deep = Structure::Sequence(vec![(0, deep)]);
    }
    assert!(matches!(deep.validate().unwrap_err().kind(), StructureErrorKind::TooDeep(_)));
    let gaps = Structure::Sequence(vec![(MAX_GAP_SLOTS + 1, Structure::Leaf(0))]);
    assert_eq!(
        gaps.validate().unwrap_err().to_string(),
        format!("at the root: more than {MAX_GAP_SLOTS} gap slots in sequences")
    );
}

/// Records a visit's events as text.
#[derive(Default)]
struct Events(String);

impl<'v, 'a: 'v> PlanVisitor<'v, 'a> for Events {
    type Error = String;
    fn open_seq(&mut self, len: usize) -> Result<(), String> {
        self.0 += &format!("[{len} ");
        Ok(())
    }
    fn open_dict(&mut self, len: usize) -> Result<(), String> {
        self.0 += &format!("{{{len} ");
        Ok(())
    }
    fn close(&mut self) -> Result<(), String> {
        self.0 += "] ";
        Ok(())
    }
    fn gap(&mut self) -> Result<(), String> {
        self.0 += "_ ";
        Ok(())
    }
    fn leaf(&mut self, slot: u32, v: &'v Value<'a>) -> Result<(), String> {
        match v {
            Value::Int(i) if *i < 0 => Err(format!("negative at slot {slot}")),
            Value::Int(i) => {
                self.0 += &format!("${slot}={i} ");
                Ok(())
            }
            _ => Err("not an int".into()),
        }
    }
}

#[test]
fn visits_report_containers_gaps_and_leaves_in_structure_order() {
    // [None, {"a": [$1, $2], "b": $0}, None]
    let s = Structure::Sequence(vec![(
        1,
        Structure::Dict(vec![
            ("a".into(), Structure::Sequence(vec![(0, Structure::Leaf(1)), (1, Structure::Leaf(2))])),
            ("b".into(), Structure::Leaf(0)),
        ]),
    )]);
    let s = match s {
        Structure::Sequence(mut c) => {
            c.push((2, Structure::Sequence(vec![])));
            Structure::Sequence(c)
        }
        _ => unreachable!(),
    };
    let p = s.plan().unwrap();
    let inner = |a: Value<'static>, b: Value<'static>, order_ab: bool| {
        let a = ("a", list(vec![a, int(2)]));
        let b = ("b", b);
        if order_ab { Value::dict([a, b]) } else { Value::dict([b, a]) }
    };
    for order_ab in [true, false] {
        let v = list(vec![Value::None, inner(int(1), int(0), order_ab), list(vec![])]);
        let mut ev = Events::default();
        p.visit(&v, &mut ev).unwrap();
        assert_eq!(ev.0, "[3 _ {2 [2 $1=1 $2=2 ] $0=0 ] [0 ] ] ");
        // The same leaves as flatten, each slot once.
        assert_eq!(p.flatten(&v).unwrap(), [&int(0), &int(1), &int(2)]);
        // Root items without the root's events.
        let Value::List(items) = &v else { unreachable!() };
        let mut ev = Events::default();
        p.visit_items(items, &mut ev).unwrap();
        assert_eq!(ev.0, "_ {2 [2 $1=1 $2=2 ] $0=0 ] [0 ] ");
        // A visitor's error stops the walk as it is; a structure
        // error has its path.
        let v = list(vec![Value::None, inner(int(-1), int(0), order_ab), list(vec![])]);
        assert_eq!(p.visit(&v, &mut Events::default()), Err(VisitError::Visitor("negative at slot 1".into())));
        let v = list(vec![Value::None, inner(int(1), Value::None, order_ab), list(vec![])]);
        assert_eq!(p.visit(&v, &mut Events::default()), Err(VisitError::Visitor("not an int".into())));
        let v = list(vec![Value::None, inner(int(1), int(0), order_ab), int(1)]);
        let e = p.visit(&v, &mut Events::default()).unwrap_err();
        assert!(
            matches!(&e, VisitError::Structure(e) if e.to_string() == "at [2]: expected a list or tuple, got an int"),
            "{e:?}"
        );
    }
    let e = p.visit_items(&[int(1)], &mut Events::default()).unwrap_err();
    assert!(matches!(&e, VisitError::Structure(e) if e.to_string() == "sequence at the root has 1 item, needs 3"));
    assert!(Structure::Leaf(0).plan().unwrap().visit_items(&[], &mut Events::default()).is_err());
    assert!(Plan::new(None).unwrap().visit_items(&[], &mut Events::default()).is_ok());
}

#[test]
fn dicts_in_a_given_order() {
    // {"y": $0, "x": {"q": $1, "p": $2}}, visited in that order.
    let s = Structure::Dict(vec![
        ("y".into(), Structure::Leaf(0)),
        ("x".into(), Structure::Dict(vec![("q".into(), Structure::Leaf(1)), ("p".into(), Structure::Leaf(2))])),
    ]);
    assert!(s.plan().is_err());
    let p = Plan::with_dict_order(&s).unwrap();
    let sorted_s = Structure::Dict(vec![
        ("x".into(), Structure::Dict(vec![("p".into(), Structure::Leaf(2)), ("q".into(), Structure::Leaf(1))])),
        ("y".into(), Structure::Leaf(0)),
    ]);
    assert_eq!(p.structure(), Some(&sorted_s));
    let given = Value::dict([("y", int(0)), ("x", Value::dict([("q", int(1)), ("p", int(2))]))]);
    let sorted = Value::dict([("x", Value::dict([("p", int(2)), ("q", int(1))])), ("y", int(0))]);
    for v in [&given, &sorted] {
        let mut ev = Events::default();
        p.visit(v, &mut ev).unwrap();
        assert_eq!(ev.0, "{2 $0=0 {2 $1=1 $2=2 ] ] ");
        assert_eq!(p.flatten(v).unwrap(), [&int(0), &int(1), &int(2)]);
    }
    assert_eq!(p.unflatten(vec![int(0), int(1), int(2)]).unwrap(), given);
    // Missing keys are reported in key order, before unexpected ones.
    let v = Value::dict([("z", int(0)), ("y", int(0))]);
    assert_eq!(p.flatten(&v).unwrap_err().to_string(), "missing key \"x\" at the root");
    let v = Value::dict([("y", int(0)), ("x", Value::dict([("q", int(1)), ("p", int(2)), ("o", int(3))]))]);
    assert_eq!(p.flatten(&v).unwrap_err().to_string(), "unexpected key \"o\" at [\"x\"]");
    // Keys must still be unique.
    let dup = Structure::Dict(vec![("y".into(), Structure::Leaf(0)), ("y".into(), Structure::Leaf(1))]);
    assert!(Plan::with_dict_order(&dup).is_err());
}

#[test]
fn bind_positional_and_keyword() {
    use crate::error::{CallError, CallErrorKind};
    let seq = build(&[(0, &[I(0)]), (1, &[I(1)]), (2, &[I(3)])]);
    let v = seq.bind(vec![int(1), int(2), Value::None, int(3)], Dict::new()).unwrap();
    assert_eq!(v, Value::Tuple(vec![int(1), int(2), Value::None, int(3)]));
    assert_eq!(seq.plan().unwrap().flatten(&v).unwrap().len(), 3);
    let kw: Dict = [("x", int(1))].into_iter().collect();
    assert_eq!(
        seq.bind(vec![], kw.clone()).unwrap_err(),
        CallError::argument(CallErrorKind::UnknownKeyword("x".into()))
            .with_note("the parameters have no names: pass the arguments by position")
    );
    assert_eq!(seq.bind(vec![int(1)], Dict::new()).unwrap_err().to_string(), "missing positional argument 1");
    assert_eq!(
        seq.bind(vec![int(0); 5], Dict::new()).unwrap_err().to_string(),
        "takes 4 positional arguments but 5 were given"
    );
    // A trailing gap may be left out.
    let gap = build(&[(0, &[I(0)])]);
    let gap = Structure::Sequence(vec![(0, gap), (1, Structure::Leaf(9))]);
    assert!(gap.bind(vec![list(vec![int(0)]), int(1)], Dict::new()).is_ok());

    let dict = build(&[(0, &[n("b")]), (1, &[n("a")])]);
    let v = dict.bind(vec![int(1)], [("b", int(2))].into_iter().collect()).unwrap();
    assert_eq!(v, Value::dict([("a", int(1)), ("b", int(2))]));
    assert_eq!(
        dict.bind(vec![int(1)], [("a", int(2))].into_iter().collect()).unwrap_err().to_string(),
        "got multiple values for argument \"a\""
    );
    assert_eq!(dict.bind(vec![], kw).unwrap_err().to_string(), "unexpected keyword argument \"x\"");
    assert_eq!(
        dict.bind(vec![int(0); 3], Dict::new()).unwrap_err(),
        CallError::argument(CallErrorKind::TooManyPositional { max: 2, got: 3 })
    );

    let leaf = Structure::Leaf(0);
    assert_eq!(leaf.bind(vec![int(1)], Dict::new()).unwrap(), int(1));
    assert_eq!(leaf.bind(vec![], Dict::new()).unwrap_err().to_string(), "missing positional argument 0");
    assert_eq!(
        leaf.bind(vec![int(1), int(2)], Dict::new()).unwrap_err().to_string(),
        "takes 1 positional argument but 2 were given"
    );
    assert!(leaf.bind(vec![int(1)], [("a", int(2))].into_iter().collect()).is_err());
}
