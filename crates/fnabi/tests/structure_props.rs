//! Property tests: index paths → SIP signature → parse → the same paths;
//! value → flatten → unflatten → the same value; JSON round trips; the serde
//! bridge agrees with the value walk.

use fnabi::StructureExt;
use fnabi::sip::{SipMangler, SipSignature};
use fnabi::structure::{PathKey, Structure};
use fnabi::{Array, Value, json, nest};
use half::f16;
use proptest::prelude::*;

/// A structure with leaves numbered 0.. in walk order.
fn structure() -> impl Strategy<Value = Structure> {
    let leaf = Just(Structure::Leaf(0));
    let key = prop_oneof![Just(String::new()), "[a-c]{1,2}", Just("$tuple".to_string()), Just("dtype".to_string())];
    leaf.prop_recursive(5, 40, 4, move |inner| {
        prop_oneof![
            prop::collection::btree_map(0usize..6, inner.clone(), 0..4)
                .prop_map(|m| Structure::Sequence(m.into_iter().collect())),
            prop::collection::btree_map(key.clone(), inner, 0..4)
                .prop_map(|m| Structure::Dict(m.into_iter().map(|(k, v)| (k.into(), v)).collect())),
        ]
    })
}

fn renumber(s: &mut Structure, next: &mut dyn FnMut() -> usize) {
    match s {
        Structure::Leaf(i) => *i = next(),
        Structure::Sequence(c) => c.iter_mut().for_each(|(_, s)| renumber(s, next)),
        Structure::Dict(c) => c.iter_mut().for_each(|(_, s)| renumber(s, next)),
    }
}

/// A structure whose raw indices are a permutation of 0..n (by `seed`),
/// possibly with gaps when `sparse`.
fn numbered() -> impl Strategy<Value = Structure> {
    (structure(), any::<u64>(), any::<bool>()).prop_map(|(mut s, seed, sparse)| {
        let n = s.leaf_count();
        let mut perm: Vec<usize> = (0..n).map(|i| if sparse { i * 3 + 1 } else { i }).collect();
        let mut x = seed | 1;
        for i in (1..n).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            perm.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let mut it = perm.into_iter();
        renumber(&mut s, &mut || it.next().unwrap_or_default());
        s
    })
}

fn leaf_value() -> impl Strategy<Value = Value<'static>> {
    prop_oneof![
        Just(Value::None),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        prop_oneof![-1e300f64..1e300, Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(-0.0)].prop_map(Value::Float),
        "\\PC{0,6}".prop_map(Value::Str),
        prop::collection::vec(any::<u8>(), 0..6).prop_map(Value::Bytes),
        array().prop_map(Value::array),
    ]
}

fn array() -> impl Strategy<Value = Array<'static>> {
    let shape = prop::collection::vec(0usize..3, 0..3);
    (shape, 0..6u8, any::<u64>()).prop_map(|(shape, kind, seed)| {
        let n: usize = shape.iter().product();
        let vals: Vec<u64> = (0..n as u64).map(|i| seed.wrapping_mul(i * 2 + 1).rotate_left(i as u32)).collect();
        match kind {
            0 => Array::from_vec(&shape, vals.iter().map(|&v| (v as i32) as f32 / 7.0).collect()),
            1 => Array::from_vec(&shape, vals.iter().map(|&v| f16::from_f32((v as i16) as f32 / 3.0)).collect()),
            2 => Array::from_vec(&shape, vals.iter().map(|&v| v as i64).collect()),
            3 => Array::from_vec(&shape, vals.clone()),
            4 => Array::from_vec(&shape, vals.iter().map(|&v| v as u8).collect()),
            _ => Array::from_vec(&shape, vals.iter().map(|&v| v % 2 == 0).collect()),
        }
        .unwrap()
    })
}

fn value() -> impl Strategy<Value = Value<'static>> {
    let key = prop_oneof![
        prop::sample::select(vec!["$tuple", "$bytes", "$float", "$dict", "dtype", "shape", "data", ""])
            .prop_map(String::from),
        "\\PC{0,4}",
    ];
    leaf_value().prop_recursive(4, 48, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::List),
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Tuple),
            prop::collection::vec((key.clone(), inner), 0..4).prop_map(Value::dict),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn paths_to_signature_and_back(s in numbered(), results in numbered(), seed in any::<u64>()) {
        let mut pairs: Vec<(_, usize)> = s.leaves().collect();
        // Insertion order must not matter.
        pairs.sort_by_key(|(_, raw)| (raw.wrapping_mul(seed as usize | 1)) % 1009);
        let mut m = SipMangler::new();
        for (path, raw) in &pairs {
            m.input(*raw as i64, path.keys()).unwrap();
        }
        for (path, raw) in results.leaves() {
            m.result(raw as i64, path.keys()).unwrap();
        }
        let sig = m.finish();
        let parsed = SipSignature::parse(sig.to_mangled()).unwrap();
        prop_assert_eq!(&parsed, &sig);
        let mut back: Vec<_> = parsed.inputs().map(|s| s.leaves().collect()).unwrap_or_default();
        back.sort();
        pairs.sort();
        prop_assert_eq!(back, pairs);
        // The builder drops empty structs, which have no leaves and so no paths.
        if s.leaf_count() > 0 {
            prop_assert_eq!(parsed.inputs().map(|x| x.leaf_count()), Some(s.leaf_count()));
        }
        prop_assert_eq!(SipSignature::new(parsed.inputs().cloned(), parsed.results().cloned()).unwrap(), parsed.clone());
    }

    #[test]
    fn parsed_structures_mangle_back(s in numbered()) {
        // Empty structs survive too when built directly.
        let sig = SipSignature::new(Some(s.clone()), None).unwrap();
        let parsed = SipSignature::parse(sig.to_mangled()).unwrap();
        prop_assert_eq!(parsed.inputs(), Some(&s));
    }

    #[test]
    fn flatten_unflatten_round_trip(s in numbered(), leaves in prop::collection::vec(leaf_value(), 64)) {
        let plan = s.plan().unwrap();
        let leaves: Vec<Value<'static>> = leaves.into_iter().cycle().take(plan.leaf_count()).collect();
        let v = plan.unflatten(leaves.clone()).unwrap();
        let flat = plan.flatten(&v).unwrap();
        prop_assert_eq!(flat, leaves.iter().collect::<Vec<_>>());
        let again = plan.unflatten(leaves.clone()).unwrap();
        prop_assert_eq!(&again, &v);
        // The serde bridge agrees with the value walk, both ways.
        let by_serde = nest::flatten(&plan, &v).unwrap();
        prop_assert_eq!(&by_serde, &leaves);
        let rebuilt: Value<'static> = nest::unflatten(&plan, leaves).unwrap();
        prop_assert_eq!(rebuilt, v);
    }

    #[test]
    fn json_round_trip(v in value()) {
        let s = json::to_string(&v);
        let back = json::from_str(&s).unwrap();
        prop_assert_eq!(&back, &v);
        prop_assert_eq!(json::to_string(&back), s);
        // serde_json through the impls agrees.
        let via: Value<'static> = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        prop_assert_eq!(via, v);
    }

    #[test]
    fn to_value_from_value_round_trip(v in value()) {
        let w = nest::to_value(&v).unwrap();
        prop_assert_eq!(&w, &v);
        let back: Value<'static> = nest::from_value(w).unwrap();
        prop_assert_eq!(back, v);
    }
}

#[test]
fn leaf_paths_match_structure() {
    let s = Structure::Dict(vec![(
        "a".into(),
        Structure::Sequence(vec![(1, Structure::Leaf(1)), (2, Structure::Leaf(0))]),
    )]);
    let plan = s.plan().unwrap();
    let paths: Vec<_> = plan.leaf_paths().iter().map(ToString::to_string).collect();
    assert_eq!(paths, ["[\"a\"][2]", "[\"a\"][1]"]);
    let _ = PathKey::Index(0);
}
