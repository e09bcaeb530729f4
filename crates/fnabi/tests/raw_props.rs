//! Property tests of the lexical layer and the raw function ABI: random
//! signatures round-trip through mangle → parse and through the human form;
//! random bytes never panic the parsers.

use fnabi::mangle::{Component, SignatureBuilder, SignatureParser};
use fnabi::{BufferType, Dim, DimOrder, RawSignature, RawType, ScalarType};
use proptest::prelude::*;

fn scalar_type() -> impl Strategy<Value = ScalarType> {
    (0i64..12).prop_map(|c| ScalarType::from_code(c).unwrap())
}

fn dim() -> impl Strategy<Value = Dim> {
    prop_oneof![
        1 => Just(Dim::Dynamic),
        3 => (0u32..=4096).prop_map(Dim::Static),
        1 => (0u32..=i32::MAX as u32).prop_map(Dim::Static),
    ]
}

fn raw_type() -> impl Strategy<Value = RawType> {
    prop_oneof![
        4 => (scalar_type(), prop::collection::vec(dim(), 0..9), prop::bool::weighted(0.1)).prop_map(|(t, d, col)| {
            let b = BufferType::new(t, d).unwrap();
            RawType::Buffer(if col { b.with_layout(DimOrder::ColumnMajor) } else { b })
        }),
        2 => scalar_type().prop_map(RawType::Scalar),
        1 => Just(RawType::RefObject),
        1 => Just(RawType::Unrecognized),
    ]
}

fn raw_signature() -> impl Strategy<Value = RawSignature> {
    (prop::collection::vec(raw_type(), 0..8), prop::collection::vec(raw_type(), 0..8))
        .prop_map(|(i, r)| RawSignature::new(i, r))
}

#[derive(Debug, Clone)]
enum Comp {
    Int(u8, i32),
    Span(u8, String),
}

fn component() -> impl Strategy<Value = Comp> {
    prop_oneof![
        (prop::sample::select(b"_abcdkmtxz".to_vec()), any::<i32>()).prop_map(|(t, v)| Comp::Int(t, v)),
        (prop::sample::select(b"ABIKRSXZ".to_vec()), ".{0,12}").prop_map(|(t, s)| Comp::Span(t, s)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn mangle_parse_round_trip(sig in raw_signature()) {
        let m = sig.to_mangled();
        prop_assert_eq!(RawSignature::parse(&m).unwrap(), sig.clone());
        prop_assert_eq!(RawSignature::parse_human(&sig.to_string()).unwrap(), sig);
    }

    #[test]
    fn zero_copy_reader_round_trip(sig in raw_signature()) {
        // Each item read in place, its dims (kept in the item up to rank 6,
        // read from the text above) included, is the item mangled.
        let m = sig.to_mangled();
        let r = fnabi::raw::RawSignatureReader::new(m.as_bytes()).unwrap();
        let side = |items: fnabi::raw::RawTypeReader<'_>| -> Vec<RawType> {
            items.map(|t| t.unwrap().to_owned()).collect()
        };
        prop_assert_eq!(side(r.inputs()), sig.inputs().to_vec());
        prop_assert_eq!(side(r.results()), sig.results().to_vec());
        for t in r.inputs().chain(r.results()) {
            if let fnabi::raw::RawTypeRef::Buffer(b) = t.unwrap() {
                prop_assert_eq!(b.dims().count(), b.rank());
            }
        }
    }

    #[test]
    fn components_round_trip(comps in prop::collection::vec(component(), 0..10)) {
        let mut b = SignatureBuilder::new();
        for c in &comps {
            match c {
                Comp::Int(t, v) => { b.integer(*t, *v); }
                Comp::Span(t, s) => { b.span(*t, s); }
            }
        }
        let parsed: Vec<Component<'_>> = SignatureParser::new(b.as_str()).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(parsed.len(), comps.len());
        for (p, c) in parsed.iter().zip(&comps) {
            match (p, c) {
                (Component::Integer { tag, value, .. }, Comp::Int(t, v)) => { prop_assert_eq!((tag, value), (t, v)); }
                (Component::Span { tag, content, .. }, Comp::Span(t, s)) => {
                    prop_assert_eq!(tag, t);
                    prop_assert_eq!(*content, s.as_bytes());
                }
                _ => prop_assert!(false, "kind mismatch"),
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = SignatureParser::new(&bytes).count();
        if let Ok(sig) = RawSignature::parse(&bytes) {
            // Whatever parses re-mangles to something that parses to the same.
            prop_assert_eq!(RawSignature::parse(sig.to_mangled()).unwrap(), sig);
        }
        let _ = RawSignature::parse_human(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn grammar_shaped_noise_never_panics(s in "[IRBSOUtdc_!0-9-]{0,40}") {
        if let Ok(sig) = RawSignature::parse(&s) {
            prop_assert_eq!(RawSignature::parse(sig.to_mangled()).unwrap(), sig);
        }
    }

    #[test]
    fn zero_copy_human_form_is_the_parsed_one(sig in raw_signature()) {
        let m = sig.to_mangled();
        let mut out = String::from("x");
        fnabi::raw::RawSignatureReader::new(m.as_bytes()).unwrap().write_human(&mut out).unwrap();
        prop_assert_eq!(out, format!("x{sig}"));
    }

    #[test]
    fn zero_copy_human_form_errs_where_parsing_does(s in "[IRBSOUtdc_!0-9-]{0,40}") {
        let mut out = String::new();
        let written = fnabi::raw::RawSignatureReader::new(s.as_bytes()).and_then(|r| r.write_human(&mut out));
        match RawSignature::parse(&s) {
            Ok(sig) => { prop_assert_eq!(written, Ok(())); prop_assert_eq!(out, sig.to_string()); }
            Err(e) => { prop_assert_eq!(written, Err(e)); prop_assert_eq!(out, ""); }
        }
    }

    #[test]
    fn errors_point_inside_the_input(s in "[IRBSOUtdc_!0-9-]{0,40}") {
        if let Err(e) = RawSignature::parse(&s) {
            prop_assert!(e.offset() <= s.len());
        }
    }
}
