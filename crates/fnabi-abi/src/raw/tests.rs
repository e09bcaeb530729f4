use super::*;
use crate::error::ParseErrorKind;

fn buf(dtype: ScalarType, dims: &[i32]) -> RawType {
    RawType::Buffer(BufferType::new(dtype, dims.iter().map(|&d| Dim::from_i32(d).unwrap())).unwrap())
}

fn mangle_one(t: &RawType) -> String {
    let mut b = SignatureBuilder::new();
    t.mangle_into(&mut b);
    b.into_string()
}

fn err(s: &str) -> (usize, ParseErrorKind) {
    let e = RawSignature::parse(s).unwrap_err();
    (e.offset(), e.kind().clone())
}

#[test]
fn reference_encodings() {
    assert_eq!(mangle_one(&buf(ScalarType::F32, &[])), "B1!");
    assert_eq!(mangle_one(&buf(ScalarType::F64, &[-1, 128, 64])), "B13!t2d-1d128d64");
    assert_eq!(mangle_one(&RawType::RefObject), "O1!");
    assert_eq!(RawSignature::default().to_mangled(), "I1!R1!");
    let sig = RawSignature::new(
        vec![RawType::RefObject, buf(ScalarType::F32, &[-1, 128, 64])],
        vec![buf(ScalarType::U64, &[32, -1, 64])],
    );
    assert_eq!(sig.to_mangled(), "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64");
    assert_eq!(sig.abi_version(), 1);
}

#[test]
fn reference_display() {
    assert_eq!(RawSignature::parse("I1!R1!").unwrap().to_string(), "() -> ()");
    assert_eq!(
        RawSignature::parse("I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64").unwrap().to_string(),
        "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)"
    );
    assert_eq!(RawSignature::parse("I4!B1!R6!S3!t6").unwrap().to_string(), "(Buffer<float32[]>) -> (sint32)");
    assert_eq!(RawSignature::parse("I4!U1!R4!S1!").unwrap().to_string(), "(Unrecognized<?>) -> (float32)");
}

#[test]
fn reference_leniencies() {
    // R before I; t after d; a repeated t (last wins).
    let s = RawSignature::parse("R1!I14!B10!d4t2t7d-1").unwrap();
    assert_eq!(s.inputs(), vec![buf(ScalarType::I64, &[4, -1])]);
    assert!(s.results().is_empty());
    // Explicit t0 is float32, and mangles back without it.
    let s = RawSignature::parse("I6!B3!t0R1!").unwrap();
    assert_eq!(s.to_mangled(), "I4!B1!R1!");
}

#[test]
fn strict_errors_with_offsets() {
    assert_eq!(err(""), (0, ParseErrorKind::MissingSpan(b'I')));
    assert_eq!(err("I1!"), (3, ParseErrorKind::MissingSpan(b'R')));
    assert_eq!(err("R1!"), (3, ParseErrorKind::MissingSpan(b'I')));
    assert_eq!(err("I1!R1!I1!"), (6, ParseErrorKind::DuplicateSpan(b'I')));
    assert!(matches!(err("I1!R1!X1!"), (6, ParseErrorKind::UnexpectedComponent { tag: b'X', .. })));
    assert!(matches!(err("_1I1!R1!"), (0, ParseErrorKind::UnexpectedComponent { tag: b'_', .. })));
    assert!(matches!(err("I4!X1!R1!"), (3, ParseErrorKind::UnexpectedComponent { tag: b'X', .. })));
    assert!(matches!(err("I3!_1R1!"), (3, ParseErrorKind::UnexpectedComponent { tag: b'_', .. })));
    assert_eq!(err("I6!B3!x1R1!"), (6, ParseErrorKind::UnknownField { item: "buffer", tag: b'x' }));
    assert_eq!(err("I7!B4!D1!R1!"), (6, ParseErrorKind::UnknownField { item: "buffer", tag: b'D' }));
    assert_eq!(err("I7!B4!t12R1!"), (6, ParseErrorKind::IllegalScalarCode(12)));
    assert_eq!(err("I7!B4!t-1R1!"), (6, ParseErrorKind::IllegalScalarCode(-1)));
    assert_eq!(err("I7!B4!d-2R1!"), (6, ParseErrorKind::IllegalDim(-2)));
    assert_eq!(err("I6!B3!c7R1!"), (6, ParseErrorKind::IllegalLayoutCode(7)));
    assert_eq!(err("I6!S3!d1R1!"), (6, ParseErrorKind::UnknownField { item: "scalar", tag: b'd' }));
    assert_eq!(err("I6!O3!t1R1!"), (6, ParseErrorKind::UnknownField { item: "ref object", tag: b't' }));
    assert_eq!(err("I6!U3!t1R1!"), (6, ParseErrorKind::UnknownField { item: "unrecognized", tag: b't' }));
    // A lexical error deep inside: absolute offset, and never a shortened list.
    assert_eq!(err("I11!B1!B5!d1d?R1!"), (13, ParseErrorKind::MissingDigits));
    assert_eq!(err("I5!B1!"), (0, ParseErrorKind::Truncated { declared: 5, available: 4 }));
    assert_eq!(err("I5!B1!R1!"), (7, ParseErrorKind::BadTag(b'1')));
    assert_eq!(err("I1"), (0, ParseErrorKind::Truncated { declared: 1, available: 0 }));
}

#[test]
fn layout_extension() {
    let b =
        BufferType::new(ScalarType::F32, [Dim::Static(2), Dim::Static(3)]).unwrap().with_layout(DimOrder::ColumnMajor);
    let sig = RawSignature::new(vec![RawType::Buffer(b)], vec![]);
    assert_eq!(sig.to_mangled(), "I10!B7!c1d2d3R1!");
    assert_eq!(sig.abi_version(), 2);
    assert_eq!(sig.to_string(), "(Buffer<float32[2x3], column-major>) -> ()");
    assert_eq!(RawSignature::parse(sig.to_mangled()).unwrap(), sig);
    assert_eq!(RawSignature::parse_human(&sig.to_string()).unwrap(), sig);
    // c0 is accepted and is the default.
    assert_eq!(RawSignature::parse("I6!B3!c0R1!").unwrap().abi_version(), 1);
}

#[test]
fn human_form_parses_back() {
    for s in [
        "() -> ()",
        "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)",
        "(Buffer<float32[]>, sint32, Unrecognized<?>) -> (bfloat16, float16)",
    ] {
        let sig = RawSignature::parse_human(s).unwrap();
        assert_eq!(sig.to_string(), s);
    }
    let loose = RawSignature::parse_human(" ( Buffer< f32 [ 4 x ? ] > ,!UNKNOWN!)->( i8 ) ").unwrap();
    assert_eq!(loose.to_string(), "(Buffer<float32[4x?]>, Unrecognized<?>) -> (sint8)");
}

#[test]
fn human_form_errors() {
    let e = |s: &str| {
        let e = RawSignature::parse_human(s).unwrap_err();
        (e.offset(), e.kind().clone())
    };
    assert_eq!(e(""), (0, ParseErrorKind::Expected("`(`")));
    assert_eq!(e("() ()"), (3, ParseErrorKind::Expected("`->`")));
    assert_eq!(e("(float33) -> ()"), (1, ParseErrorKind::UnknownName("float33".into())));
    assert_eq!(e("(Buffer<float32[4x]>) -> ()"), (18, ParseErrorKind::Expected("a dimension (digits or `?`)")));
    assert_eq!(e("(Buffer<float32[2147483648]>) -> ()"), (16, ParseErrorKind::IntegerOutOfRange));
    assert_eq!(e("() -> () x"), (9, ParseErrorKind::TrailingInput));
    assert_eq!(e("(RefObject) -> ()"), (10, ParseErrorKind::Expected("`<?>`")));
    assert_eq!(e("(sint8 sint8) -> ()"), (7, ParseErrorKind::Expected("`,` or `)`")));
}

#[test]
fn reader_is_zero_copy_and_matches_owned() {
    let m = "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64";
    let r = RawSignatureReader::new(m.as_bytes()).unwrap();
    let items: Vec<_> = r.inputs().map(|x| x.unwrap()).collect();
    assert_eq!(items[0], RawTypeRef::RefObject);
    let RawTypeRef::Buffer(b) = items[1] else { panic!() };
    assert_eq!(b.rank(), 3);
    assert_eq!(b.dims().collect::<Vec<_>>(), [Dim::Dynamic, Dim::Static(128), Dim::Static(64)]);
    // Every rank up to past the dims kept in an item (6) and in a buffer
    // type (6): each dim read back, the extremes (0, i32::MAX, dynamic) in
    // both halves of a kept word.
    for rank in 0..=8 {
        let extent = |i: u32| match i % 4 {
            0 => Dim::Static(i + 2),
            1 => Dim::Dynamic,
            2 => Dim::Static(i32::MAX as u32),
            _ => Dim::Static(0),
        };
        let dims: Vec<Dim> = (0..rank).map(extent).collect();
        let sig =
            RawSignature::new(vec![RawType::Buffer(BufferType::new(ScalarType::I8, dims.clone()).unwrap())], vec![]);
        let m = sig.to_mangled();
        let r = RawSignatureReader::new(m.as_bytes()).unwrap();
        let Some(Ok(RawTypeRef::Buffer(b))) = r.inputs().next() else { panic!("{m}") };
        assert_eq!((b.rank(), b.dims().collect::<Vec<_>>()), (rank as usize, dims.clone()));
        assert_eq!(RawSignature::parse(&m).unwrap(), sig);
    }
}

#[test]
fn span_lengths_past_the_quick_count_are_read() {
    // 20-digit span lengths (leading zeros): the owned parse's count of
    // items stops there, and the items must still be read, not dropped.
    let valid = "I49!B00000000000000000003!d4S00000000000000000003!t6R1!";
    let sig = RawSignature::parse(valid).unwrap();
    assert_eq!(sig.to_mangled(), "I11!B3!d4S3!t6R1!"); // two items
    // And an error after such an item is reported (found by fuzzing: the
    // parse returned no inputs and no error).
    let bad = "I31!B00000000000000000007!t000000!R1!";
    let e = RawSignature::parse(bad).unwrap_err();
    let read = RawSignatureReader::new(bad.as_bytes()).unwrap().inputs().find_map(Result::err).unwrap();
    assert_eq!(e, read);
}

#[test]
fn dim_bounds() {
    assert!(BufferType::new(ScalarType::F32, [Dim::Static(i32::MAX as u32)]).is_ok());
    assert!(BufferType::new(ScalarType::F32, [Dim::Static(i32::MAX as u32 + 1)]).is_err());
    assert_eq!(Dim::from_i32(-2), None);
}

/// The items of a type sequence as the generic lexer reads them, one
/// component at a time: the specification the reader's fast paths must
/// match (items, errors and offsets), stopping at the first error.
fn spec_items(content: &[u8], offset: usize) -> Vec<Result<RawType, ParseError>> {
    use crate::mangle::{Component, SignatureParser};
    let unexpected = |c: &Component<'_>| {
        let context = "type sequence (expected `B`, `S`, `O` or `U`)";
        ParseError::new(c.offset(), ParseErrorKind::UnexpectedComponent { context, tag: c.tag() })
    };
    let mut out = Vec::new();
    for c in SignatureParser::with_offset(content, offset) {
        let item = c.and_then(|c| {
            let Component::Span { tag: tag @ (b'B' | b'S' | b'O' | b'U'), .. } = c else { return Err(unexpected(&c)) };
            let item = match tag {
                b'B' => "buffer",
                b'S' => "scalar",
                b'O' => "ref object",
                _ => "unrecognized",
            };
            let (mut dtype, mut layout, mut dims) = (ScalarType::F32, DimOrder::RowMajor, Vec::new());
            for f in c.nested().unwrap() {
                let f = f?;
                let unknown = ParseError::new(f.offset(), ParseErrorKind::UnknownField { item, tag: f.tag() });
                let Component::Integer { tag: ftag, value, offset } = f else { return Err(unknown) };
                match (tag, ftag) {
                    (b'B' | b'S', b't') => {
                        dtype = ScalarType::from_code(i64::from(value))
                            .ok_or(ParseError::new(offset, ParseErrorKind::IllegalScalarCode(value)))?;
                    }
                    (b'B', b'c') => {
                        layout = DimOrder::from_code(value)
                            .ok_or(ParseError::new(offset, ParseErrorKind::IllegalLayoutCode(value)))?;
                    }
                    (b'B', b'd') => {
                        dims.push(
                            Dim::from_i32(value).ok_or(ParseError::new(offset, ParseErrorKind::IllegalDim(value)))?,
                        );
                    }
                    _ => return Err(unknown),
                }
            }
            Ok(match tag {
                b'B' => RawType::Buffer(BufferType::new(dtype, dims).unwrap().with_layout(layout)),
                b'S' => RawType::Scalar(dtype),
                b'O' => RawType::RefObject,
                _ => RawType::Unrecognized,
            })
        });
        let stop = item.is_err();
        out.push(item);
        if stop {
            break;
        }
    }
    out
}

/// Random raw-like type sequences: valid items with fields dropped,
/// repeated or malformed, in the usual forms and in the ones the reader
/// leaves to the generic lexer (more than nine digits, signs, bad spans,
/// span lengths of up to 21 digits).
fn raw_text() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let field = proptest::sample::select(vec![
        "t0",
        "t6",
        "t11",
        "t12",
        "t-1",
        "c0",
        "c1",
        "c2",
        "d0",
        "d4",
        "d128",
        "d-1",
        "d-2",
        "d-0",
        "d",
        "d-",
        "d0000000005",
        "t00000000006",
        "d99999999999",
        "k1",
        "X1!",
        "?",
    ]);
    let item = (proptest::sample::select(vec!['B', 'S', 'O', 'U', 'X']), proptest::collection::vec(field, 0..5))
        .prop_flat_map(|(tag, fields)| {
            let body: String = fields.concat();
            let len = body.len() + 1;
            proptest::sample::select(vec![
                format!("{tag}{len}!{body}"),
                format!("{tag}0000000000{len}!{body}"),
                // Past the 18 digits that the owned parse's count of items reads.
                format!("{tag}0000000000000000000{len}!{body}"),
                format!("{tag}{}!{body}", len + 1),
                format!("{tag}{len}?{body}"),
                format!("{tag}0!"),
            ])
        });
    proptest::collection::vec(item, 0..5).prop_map(|items| items.concat().into_bytes())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
    #[test]
    fn reader_matches_its_specification(content in raw_text()) {
        let mangled = [format!("I{}!", content.len() + 1).into_bytes(), content.clone(), b"R1!".to_vec()].concat();
        let offset = mangled.iter().position(|&b| b == b'!').unwrap() + 1;
        let want = spec_items(&content, offset);
        let r = RawSignatureReader::new(&mangled).unwrap();
        let got: Vec<_> = r.inputs().map(|i| i.map(RawTypeRef::to_owned)).collect();
        proptest::prop_assert_eq!(&got, &want);
        // The owned parse: the items, or the first error.
        let owned = RawSignature::parse(&mangled).map(|s| s.into_parts().0);
        let want_owned: Result<Vec<RawType>, ParseError> = want.into_iter().collect();
        proptest::prop_assert_eq!(owned, want_owned);
    }
}
