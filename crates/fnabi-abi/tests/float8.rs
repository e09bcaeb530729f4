//! The 8-bit float conversions against ml_dtypes: every byte's value and
//! thousands of roundings (ties, subnormals, the range's ends and beyond),
//! from `fixtures/float8_ml_dtypes.txt`, which `fixtures/float8_ml_dtypes.py`
//! wrote with ml_dtypes (independently of fnabi).

use fnabi_abi::Float8;

fn format(name: &str) -> Float8 {
    Float8::ALL.into_iter().find(|f| f.name() == format!("f8{name}")).unwrap()
}

#[test]
fn conversions_match_ml_dtypes() {
    let table = include_str!("fixtures/float8_ml_dtypes.txt");
    let (mut decoded, mut encoded) = (0, 0);
    for line in table.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = line.split(' ').collect();
        let f = format(w[1]);
        match w[0] {
            "decode" => {
                let byte = u8::from_str_radix(w[2], 16).unwrap();
                let want = f32::from_bits(u32::from_str_radix(w[3], 16).unwrap());
                let got = f.to_f32(byte);
                if want.is_nan() {
                    assert!(got.is_nan() && f.is_nan(byte), "{line}: got {got}");
                    assert_eq!(got.is_sign_negative(), want.is_sign_negative(), "{line}");
                } else {
                    assert_eq!(got.to_bits(), want.to_bits(), "{line}: got {got}, want {want}");
                    assert!(!f.is_nan(byte), "{line}");
                }
                decoded += 1;
            }
            "encode" => {
                let x = f64::from_bits(u64::from_str_radix(w[2], 16).unwrap());
                let want = u8::from_str_radix(w[3], 16).unwrap();
                // Beyond the range fnabi refuses (None) where ml_dtypes casts to NaN.
                match f.from_f64(x) {
                    Some(got) if f.is_nan(want) => assert!(f.is_nan(got), "{line}: x = {x}, got {got:02x}"),
                    Some(got) => assert_eq!(got, want, "{line}: x = {x}"),
                    None => {
                        assert!(f.is_nan(want) && !x.is_nan(), "{line}: x = {x} refused, ml_dtypes gives {want:02x}")
                    }
                }
                encoded += 1;
            }
            other => panic!("unknown line kind {other}"),
        }
    }
    assert_eq!(decoded, 4 * 256);
    assert!(encoded > 5000, "{encoded}");
}

#[test]
fn every_byte_reads_back() {
    for f in Float8::ALL {
        for b in 0..=255u8 {
            let v = f.to_f32(b);
            if f.is_nan(b) {
                assert!(f.from_f64(v.into()).is_some_and(|c| f.is_nan(c)), "{f} {b:02x}");
                continue;
            }
            // -0 is no FNUZ value (0x80 is its NaN), so every other byte is exact.
            assert_eq!(f.from_f64(v.into()), Some(b), "{f} {b:02x} = {v}");
            assert_eq!(f.from_f64(f.shortest_decimal(b)), Some(b), "{f} {b:02x} = {v}");
        }
    }
}

#[test]
fn hand_derived_bit_patterns() {
    // E4M3FN: s.eeee.mmm, bias 7: 0x38 = 0.0111.000 = 2^0; 0x01 = 2^-6 * 1/8.
    assert_eq!(Float8::E4M3FN.to_f32(0x38), 1.0);
    assert_eq!(Float8::E4M3FN.to_f32(0x01), 2f32.powi(-9));
    assert_eq!(Float8::E4M3FN.to_f32(0xfe), -448.0);
    // E5M2: s.eeeee.mm, bias 15: 0x3c = 1.0, 0x7b = 1.75 * 2^15 = 57344.
    assert_eq!(Float8::E5M2.to_f32(0x3c), 1.0);
    assert_eq!(Float8::E5M2.to_f32(0x7b), 57344.0);
    assert_eq!(Float8::E5M2.to_f32(0xfc), f32::NEG_INFINITY);
    // FNUZ: bias 8 / 16, so 1.0 is 0x40 in both.
    assert_eq!(Float8::E4M3FNUZ.to_f32(0x40), 1.0);
    assert_eq!(Float8::E5M2FNUZ.to_f32(0x40), 1.0);
    assert_eq!(Float8::E4M3FNUZ.to_f32(0x7f), 240.0);
    // Ties to even: 1 + 1/16 lies between 0x38 (1.0) and 0x39 (1.125) in E4M3FN.
    assert_eq!(Float8::E4M3FN.from_f64(1.0625), Some(0x38));
    assert_eq!(Float8::E4M3FN.from_f64(1.1875), Some(0x3a));
}

#[test]
fn names_in_records_declarations_and_mlir_types() {
    use fnabi_abi::DType;
    use fnabi_abi::mlir::{ElementType, FunctionType};
    use fnabi_abi::reflection::{DeclType, Primitive, TypeRecord};
    for f in Float8::ALL {
        // An iree.abi primitive record.
        let p = Primitive::parse(f.name()).unwrap();
        assert_eq!((p.dtype(), p.to_string()), (Some(DType::Float8(f)), f.name().to_owned()));
        assert_eq!(Primitive::from_dtype(DType::Float8(f)), p);
        // A declaration's tensor element.
        let d = DeclType::parse(&format!("tensor<?x4x{}>", f.name())).unwrap();
        let Some(TypeRecord::NdArray(nd)) = d.to_record() else { panic!("{d}") };
        assert_eq!(*nd.element, TypeRecord::Primitive(p), "{d}");
        // MLIR memref and tensor elements; a bare scalar is refused.
        assert_eq!(ElementType::from_mlir_name(f.name()), Some(ElementType::Float8(f)));
        let t: FunctionType = format!("(tensor<?x{0}>) -> memref<2x{0}>", f.name()).parse().unwrap();
        assert_eq!(t.to_string(), format!("(memref<?x{0}>) -> (memref<2x{0}>)", f.name()));
        let e = format!("({}) -> ()", f.name()).parse::<FunctionType>().unwrap_err();
        assert!(e.to_string().contains("8-bit float scalar"), "{e}");
        // The DType's names.
        assert_eq!(DType::from_name(f.name()), Some(DType::Float8(f)));
        assert_eq!(DType::from_name(f.npy_name()), Some(DType::Float8(f)));
        assert_eq!(DType::Float8(f).size(), 1);
    }
    assert_eq!(Primitive::parse("f8E3M4"), None);
}
