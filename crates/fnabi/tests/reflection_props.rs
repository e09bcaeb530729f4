//! Property tests of `iree.abi` records and conventions: random records
//! print to canonical JSON that parses back to the same record (and is
//! JSON to serde_json too); records reduce to structures that rebuild the
//! same structure; a host value shaped by a record survives host → VM →
//! host unchanged; calling-convention strings and declarations round-trip.

use fnabi::conventions::{value_from_vm, value_to_vm};
use fnabi::reflection::{
    DeclType, FunctionReflection, NdArrayType, Primitive, TypeRecord, records_to_structure, structure_to_records,
};
use fnabi::value::Key;
use fnabi::vm::{CallingConvention, CconvItem, CconvType};
use fnabi::{Array, Value};
use proptest::prelude::*;

fn key() -> impl Strategy<Value = Key> {
    prop_oneof![
        4 => "[a-z_][a-z0-9_]{0,6}",
        1 => "\\PC{0,4}",
        1 => "[\"\\\\\n\t\u{1}é😀 ]{1,3}",
    ]
    .prop_map(|s: String| Key::from(s))
}

fn unique_keys<T: std::fmt::Debug>(v: Vec<(Key, T)>) -> Vec<(Key, T)> {
    let mut seen = std::collections::HashSet::new();
    v.into_iter().filter(|(k, _)| seen.insert(k.clone())).collect()
}

fn primitive() -> impl Strategy<Value = Primitive> {
    prop_oneof![
        (1u32..=128).prop_map(Primitive::Int),
        prop::sample::select(vec![16u32, 32, 64, 80, 128]).prop_map(Primitive::Float),
        Just(Primitive::BF16),
    ]
}

fn dims() -> impl Strategy<Value = Option<Vec<Option<u64>>>> {
    prop::option::weighted(
        0.85,
        prop::collection::vec(prop::option::weighted(0.8, prop_oneof![0u64..8, Just(u64::MAX)]), 0..4),
    )
}

/// Any record that may stand inside another (no `named`, no `sdict_kwargs`).
fn inner_record() -> impl Strategy<Value = TypeRecord> {
    let leaf = prop_oneof![
        4 => primitive().prop_map(TypeRecord::Primitive),
        1 => Just(TypeRecord::Null),
        1 => Just(TypeRecord::Unknown),
        3 => (primitive(), dims()).prop_map(|(p, d)| TypeRecord::NdArray(NdArrayType::new(TypeRecord::Primitive(p), d))),
    ];
    leaf.prop_recursive(5, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(TypeRecord::SList),
            prop::collection::vec(inner.clone(), 0..4).prop_map(TypeRecord::STuple),
            prop::collection::vec((key(), inner.clone()), 0..4).prop_map(|v| TypeRecord::SDict(unique_keys(v))),
            inner.clone().prop_map(|t| TypeRecord::PyHomogeneousList(Box::new(t))),
            (inner, dims()).prop_map(|(t, d)| TypeRecord::NdArray(NdArrayType::new(t, d))),
        ]
    })
}

/// A record of an argument list: also `named` and (last) `sdict_kwargs`.
fn arg_list() -> impl Strategy<Value = Vec<TypeRecord>> {
    (
        prop::collection::vec((prop::option::weighted(0.3, key()), inner_record()), 0..4),
        prop::option::weighted(0.2, prop::collection::vec((key(), inner_record()), 0..3)),
    )
        .prop_map(|(args, kwargs)| {
            let mut names = std::collections::HashSet::new();
            let mut out: Vec<TypeRecord> = args
                .into_iter()
                .map(|(name, t)| match name {
                    Some(n) if names.insert(n.clone()) => TypeRecord::Named(n, Box::new(t)),
                    _ => t,
                })
                .collect();
            if let Some(kw) = kwargs {
                out.push(TypeRecord::SDictKwargs(unique_keys(kw)));
            }
            out
        })
}

fn result_list() -> impl Strategy<Value = Vec<TypeRecord>> {
    prop::collection::vec(inner_record(), 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn records_print_and_parse_back(t in inner_record()) {
        let json = t.to_json();
        prop_assert_eq!(&TypeRecord::parse(&json).unwrap(), &t);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        // serde_json reads the same text, and printing it compactly gives the same record.
        prop_assert_eq!(&TypeRecord::parse(&v.to_string()).unwrap(), &t);
        let _readable = t.to_string();
    }

    #[test]
    fn functions_print_and_parse_back(a in arg_list(), r in result_list(), v in prop::option::of(Just(1u64))) {
        let f = FunctionReflection { a, r, v };
        let json = f.to_json();
        prop_assert_eq!(&FunctionReflection::parse(&json).unwrap(), &f);
        // Reformatted JSON (other whitespace) reads the same.
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&FunctionReflection::parse(&serde_json::to_string_pretty(&v).unwrap()).unwrap(), &f);
    }

    #[test]
    fn structures_round_trip(a in arg_list()) {
        // Producers sort sdict keys; with unsorted keys the leaf numbers
        // (record order) differ from the structure's sorted key order.
        let a: Vec<TypeRecord> = a.iter().map(sorted).collect();
        let s = records_to_structure(&a).unwrap();
        let back = structure_to_records(&s.structure, |i| s.leaves.get(i).map(|t| (*t).clone())).unwrap();
        let s2 = records_to_structure(&back).unwrap();
        prop_assert_eq!(&s2.structure, &s.structure);
        prop_assert_eq!(s2.leaves, s.leaves);
        prop_assert_eq!(s.structure.leaf_count(), back.iter().map(count_leaves).sum::<usize>());
    }

    #[test]
    fn json_mutations_never_panic(t in inner_record(), cut in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let json = t.to_json();
        let mut bytes = json.clone().into_bytes();
        let i = cut.index(bytes.len().max(1)).min(bytes.len().saturating_sub(1));
        if !bytes.is_empty() {
            bytes[i] = byte;
        }
        if let Ok(s) = std::str::from_utf8(&bytes)
            && let Err(e) = TypeRecord::parse(s) {
                prop_assert!(e.offset() <= s.len());
            }
        if let Err(e) = TypeRecord::parse(&json[..i]) {
            prop_assert!(e.offset() <= i);
        }
    }
}

/// The record with every sdict's keys sorted.
fn sorted(t: &TypeRecord) -> TypeRecord {
    match t {
        TypeRecord::Named(k, t) => TypeRecord::Named(k.clone(), Box::new(sorted(t))),
        TypeRecord::SList(ts) => TypeRecord::SList(ts.iter().map(sorted).collect()),
        TypeRecord::STuple(ts) => TypeRecord::STuple(ts.iter().map(sorted).collect()),
        TypeRecord::SDict(es) | TypeRecord::SDictKwargs(es) => {
            let mut es: Vec<(Key, TypeRecord)> = es.iter().map(|(k, t)| (k.clone(), sorted(t))).collect();
            es.sort_by(|a, b| a.0.cmp(&b.0));
            if matches!(t, TypeRecord::SDict(_)) { TypeRecord::SDict(es) } else { TypeRecord::SDictKwargs(es) }
        }
        t => t.clone(),
    }
}

fn count_leaves(t: &TypeRecord) -> usize {
    match t {
        TypeRecord::Null => 0,
        TypeRecord::Named(_, t) => count_leaves(t),
        TypeRecord::SList(ts) | TypeRecord::STuple(ts) => ts.iter().map(count_leaves).sum(),
        TypeRecord::SDict(es) | TypeRecord::SDictKwargs(es) => es.iter().map(|(_, t)| count_leaves(t)).sum(),
        _ => 1,
    }
}

// ---- conventions round trip ------------------------------------------------------

/// Records whose values the VM can carry (VM value types, host dtypes).
fn vm_record() -> impl Strategy<Value = TypeRecord> {
    let prim = prop::sample::select(vec![
        Primitive::Int(1),
        Primitive::Int(8),
        Primitive::Int(16),
        Primitive::Int(32),
        Primitive::Int(64),
        Primitive::Float(32),
        Primitive::Float(64),
    ]);
    let elem = prop::sample::select(vec![
        Primitive::Int(1),
        Primitive::Int(8),
        Primitive::Int(32),
        Primitive::Int(64),
        Primitive::Float(16),
        Primitive::Float(32),
        Primitive::Float(64),
        Primitive::BF16,
    ]);
    let small_dims = prop::option::weighted(0.9, prop::collection::vec(prop::option::weighted(0.7, 0u64..4), 0..3));
    let leaf = prop_oneof![
        3 => prim.prop_map(TypeRecord::Primitive),
        1 => Just(TypeRecord::Null),
        3 => (elem, small_dims).prop_map(|(p, d)| TypeRecord::NdArray(NdArrayType::new(TypeRecord::Primitive(p), d))),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(TypeRecord::SList),
            prop::collection::vec(inner.clone(), 0..4).prop_map(TypeRecord::STuple),
            prop::collection::vec((key(), inner.clone()), 0..4).prop_map(|v| TypeRecord::SDict(unique_keys(v))),
            inner.clone().prop_map(|t| TypeRecord::PyHomogeneousList(Box::new(t))),
            (inner, prop::collection::vec(prop::option::of(0u64..3), 1..3))
                .prop_map(|(t, d)| TypeRecord::NdArray(NdArrayType::new(TypeRecord::SList(vec![t]), Some(d)))),
        ]
    })
}

fn array_value(p: Primitive, shape: Vec<usize>) -> BoxedStrategy<Value<'static>> {
    let n: usize = shape.iter().product();
    macro_rules! arr {
        ($s:expr) => {
            prop::collection::vec($s, n).prop_map(move |v| Value::from(Array::from_vec(&shape, v).unwrap())).boxed()
        };
    }
    match p {
        Primitive::Int(1) => arr!(any::<bool>()),
        Primitive::Int(8) => arr!(any::<i8>()),
        Primitive::Int(32) => arr!(any::<i32>()),
        Primitive::Int(64) => arr!(any::<i64>()),
        Primitive::Float(16) => arr!(any::<u16>().prop_map(half::f16::from_bits)),
        Primitive::Float(64) => arr!(any::<f64>()),
        Primitive::BF16 => arr!(any::<u16>().prop_map(half::bf16::from_bits)),
        _ => arr!(any::<f32>()),
    }
}

fn shape_of(dims: &Option<Vec<Option<u64>>>) -> BoxedStrategy<Vec<usize>> {
    match dims {
        None => prop::collection::vec(0usize..3, 0..3).boxed(),
        Some(d) => d
            .iter()
            .map(|d| match d {
                Some(n) => Just(*n as usize).boxed(),
                None => (0usize..3).boxed(),
            })
            .collect::<Vec<_>>()
            .boxed(),
    }
}

fn nested(leaves: Vec<Value<'static>>, shape: &[usize]) -> Value<'static> {
    match shape.split_first() {
        None => leaves.into_iter().next().unwrap_or_default(),
        Some((&n, rest)) => {
            let inner: usize = rest.iter().product();
            let mut it = leaves.into_iter();
            Value::List((0..n).map(|_| nested(it.by_ref().take(inner).collect(), rest)).collect())
        }
    }
}

/// A host value that `t` describes.
fn value_for(t: &TypeRecord) -> BoxedStrategy<Value<'static>> {
    match t {
        TypeRecord::Primitive(Primitive::Int(1)) => any::<bool>().prop_map(Value::Bool).boxed(),
        TypeRecord::Primitive(Primitive::Int(8)) => any::<i8>().prop_map(Value::from).boxed(),
        TypeRecord::Primitive(Primitive::Int(16)) => any::<i16>().prop_map(Value::from).boxed(),
        TypeRecord::Primitive(Primitive::Int(32)) => any::<i32>().prop_map(Value::from).boxed(),
        TypeRecord::Primitive(Primitive::Int(64)) => any::<i64>().prop_map(Value::from).boxed(),
        TypeRecord::Primitive(Primitive::Float(32)) => (-1e30f32..1e30).prop_map(|x| Value::Float(x.into())).boxed(),
        TypeRecord::Primitive(_) => (-1e300f64..1e300).prop_map(Value::Float).boxed(),
        TypeRecord::Null | TypeRecord::Unknown | TypeRecord::Named(..) => Just(Value::None).boxed(),
        TypeRecord::NdArray(a) if a.is_numeric() => {
            let TypeRecord::Primitive(p) = *a.element else { unreachable!() };
            shape_of(&a.dims).prop_flat_map(move |s| array_value(p, s)).boxed()
        }
        TypeRecord::NdArray(a) => {
            let elem = (*a.element).clone();
            shape_of(&a.dims)
                .prop_flat_map(move |shape| {
                    let n: usize = shape.iter().product();
                    prop::collection::vec(value_for(&elem), n).prop_map(move |leaves| nested(leaves, &shape))
                })
                .boxed()
        }
        TypeRecord::SList(ts) => ts.iter().map(value_for).collect::<Vec<_>>().prop_map(Value::List).boxed(),
        TypeRecord::STuple(ts) => ts.iter().map(value_for).collect::<Vec<_>>().prop_map(Value::Tuple).boxed(),
        TypeRecord::SDict(es) | TypeRecord::SDictKwargs(es) => {
            let keys: Vec<Key> = es.iter().map(|(k, _)| k.clone()).collect();
            es.iter()
                .map(|(_, t)| value_for(t))
                .collect::<Vec<_>>()
                .prop_map(move |vals| Value::dict(keys.iter().cloned().zip(vals)))
                .boxed()
        }
        TypeRecord::PyHomogeneousList(e) => prop::collection::vec(value_for(e), 0..3).prop_map(Value::List).boxed(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn values_survive_host_vm_host((t, v) in vm_record().prop_flat_map(|t| { let s = value_for(&t); (Just(t), s) })) {
        let x = value_to_vm(&v, &t).unwrap();
        let back = value_from_vm(x, &t).unwrap();
        prop_assert_eq!(&back, &v);
    }

    #[test]
    fn cconv_strings_round_trip(args in prop::collection::vec(cconv_item(), 0..6), results in prop::collection::vec(cconv_item(), 0..4)) {
        let cc = CallingConvention::new(args, results);
        let text = cc.to_string();
        prop_assert_eq!(CallingConvention::parse(&text).unwrap(), cc);
    }

    #[test]
    fn declaration_types_round_trip(t in decl_type()) {
        let text = t.to_string();
        prop_assert_eq!(DeclType::parse(&text).unwrap(), t);
    }
}

fn cconv_type() -> impl Strategy<Value = CconvType> {
    prop::sample::select(vec![CconvType::I32, CconvType::I64, CconvType::F32, CconvType::F64, CconvType::Ref])
}

fn cconv_item() -> impl Strategy<Value = CconvItem> {
    prop_oneof![
        4 => cconv_type().prop_map(CconvItem::Single),
        1 => prop::collection::vec(cconv_type(), 1..4).prop_map(CconvItem::Variadic),
    ]
}

fn decl_type() -> impl Strategy<Value = DeclType> {
    use fnabi::reflection::Signedness;
    let scalar = prop_oneof![
        (1u32..=64, prop::sample::select(vec![Signedness::Signless, Signedness::Signed, Signedness::Unsigned]))
            .prop_map(|(bits, signedness)| DeclType::Int { bits, signedness }),
        prop::sample::select(vec![16u32, 32, 64]).prop_map(DeclType::Float),
        Just(DeclType::BF16),
        Just(DeclType::Index),
    ];
    let leaf = prop_oneof![
        scalar.clone(),
        Just(DeclType::BufferView),
        Just(DeclType::Other("!hal.fence".into())),
        (scalar, prop::option::of(prop::collection::vec(prop::option::of(0u64..100), 0..4)))
            .prop_map(|(e, dims)| DeclType::Tensor { element: Box::new(e), dims }),
    ];
    leaf.prop_recursive(3, 8, 1, |inner| prop::option::of(inner.prop_map(Box::new)).prop_map(DeclType::List))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Records → SIP (+ raw leaf types) → records → SIP keeps the tree and
    /// the type at every index path, even where SIP cannot keep a record's
    /// kind (tuple vs list, names); a second round trip is exact.
    #[test]
    fn records_and_sip_describe_the_same_structure(a in arg_list(), r in result_list()) {
        let f = FunctionReflection { a, r, v: Some(1) };
        // Records SIP cannot express fail cleanly (gaps only inside
        // sequences, no sdict_kwargs); the rest must round-trip.
        let (Ok(sip), Ok(raw)) = (f.to_sip(), f.to_raw()) else { return Ok(()) };
        let back = FunctionReflection::from_sip(&sip, &raw).unwrap();
        // The same tree with the same type at every index path (leaf
        // numbering follows IREE's depth-first order on the way back).
        let typed = |sip: &fnabi::SipSignature, raw: &fnabi::RawSignature| {
            let side = |s: Option<&fnabi::Structure>, types: &[fnabi::RawType]| {
                let mut v: Vec<(String, fnabi::RawType)> =
                    s.map(|s| s.leaves().map(|(p, i)| (p.to_string(), types[i].clone())).collect()).unwrap_or_default();
                v.sort_by(|a, b| a.0.cmp(&b.0));
                v
            };
            (side(sip.inputs(), raw.inputs()), side(sip.results(), raw.results()))
        };
        let (sip2, raw2) = (back.to_sip().unwrap(), back.to_raw().unwrap());
        prop_assert_eq!(typed(&sip2, &raw2), typed(&sip, &raw));
        // A second round trip is exact.
        let again = FunctionReflection::from_sip(&sip2, &raw2).unwrap();
        prop_assert_eq!(again.to_sip().unwrap(), sip2);
        // And the SIP signature survives its own mangling.
        prop_assert_eq!(fnabi::SipSignature::parse(sip.to_mangled()).unwrap(), sip);
    }
}
