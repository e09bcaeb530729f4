//! The 8-bit float dtypes end to end: every byte of every format through
//! IREE's text form, JSON and `.npy` and back; hand-derived text; and an
//! `f8E4M3FN` memref through a real MLIR-compiled function
//! (`tests/mlir/float8.mlir`). The conversions themselves are checked
//! against ml_dtypes in `fnabi-abi`'s `tests/float8.rs`.

use fnabi::mlir::MlirModule;
use fnabi::{Array, DType, Float8, Value};

/// An array holding every byte of format `f`.
fn all_bytes(f: Float8) -> Array<'static> {
    Array::from_float8_bits(f, &[16, 16], (0..=255u8).collect()).unwrap()
}

/// The bytes of an 8-bit float array, with every NaN as 0xff (the formats
/// have several NaN bytes, and the text and JSON forms have one NaN each).
fn bytes(a: &Array<'_>) -> Vec<u8> {
    let DType::Float8(f) = a.dtype() else { panic!("{:?}", a.dtype()) };
    let b = a.storage_bytes().to_vec();
    b.into_iter().map(|x| if f.is_nan(x) { 0xff } else { x }).collect()
}

fn array(v: Value<'static>) -> Array<'static> {
    Array::try_from(v).unwrap()
}

#[test]
fn text_json_and_npy_round_trip_every_byte() {
    for f in Float8::ALL {
        let a = all_bytes(f);
        let text = a.to_string();
        assert!(text.starts_with(&format!("16x16x{}=[", f.name())), "{text}");
        let back = array(fnabi::text::parse_value(&text).unwrap());
        assert_eq!(back.dtype(), DType::Float8(f));
        assert_eq!(bytes(&back), bytes(&a), "{f}: {text}");

        let json = fnabi::json::to_string(&Value::from(a.clone()));
        let back = array(fnabi::json::from_str(&json).unwrap());
        assert_eq!(bytes(&back), bytes(&a), "{f}: {json}");

        let npy = fnabi::npy::to_bytes(&a).unwrap();
        let header = fnabi::npy::read_header(&npy).unwrap();
        assert_eq!(header.dtype, DType::Float8(f));
        let descr = format!("'descr': '{}'", f.npy_name());
        assert!(String::from_utf8_lossy(&npy[..header.data_offset]).contains(&descr), "{f}");
        // Every byte, NaN bytes included, as they were.
        assert_eq!(fnabi::npy::read(&npy).unwrap().storage_bytes(), a.storage_bytes());
    }
}

#[test]
fn text_by_hand() {
    // f8E4M3FN: 0.1 rounds to 0x1d = 0.1015625, which prints as the shortest
    // decimal that reads back (0.1); 448 is the largest; -2 is 0xc0.
    let a = array(fnabi::text::parse_value("4xf8E4M3FN=0.1 448 -2 nan").unwrap());
    assert_eq!(a.storage_bytes(), [0x1d, 0x7e, 0xc0, 0x7f]);
    assert_eq!(a.to_string(), "4xf8E4M3FN=0.1 448 -2 NAN");
    assert_eq!(a.float8_to_f32().unwrap()[..3], [0.1015625, 448.0, -2.0]);
    // f8E5M2 has infinities; f8E4M3FN has none, and 464 (halfway to 480)
    // rounds to even, 448, while 480 is out of range.
    let b = array(fnabi::text::parse_value("3xf8E5M2=-inf 57344 1.5E-05").unwrap());
    assert_eq!(b.storage_bytes(), [0xfc, 0x7b, 0x01]);
    // 0x01 is 2^-16 = 1.52587890625E-05, and 2E-05 is nearer to it than to 0x02.
    assert_eq!(b.to_string(), "3xf8E5M2=-INF 57344 2E-05");
    assert_eq!(
        fnabi::text::parse_value("f8E4M3FN=464").unwrap(),
        Value::from(array(fnabi::text::parse_value("f8E4M3FN=448").unwrap()))
    );
    let e = fnabi::text::parse_value("2xf8E4M3FN=1 480").unwrap_err();
    assert_eq!(e.to_string(), "at byte 13: `480` is out of range for f8E4M3FN");
    let e = fnabi::text::parse_value("f8E4M3FNUZ=inf").unwrap_err();
    assert!(e.to_string().contains("out of range for f8E4M3FNUZ"), "{e}");
    // The FNUZ formats have no -0: it reads as 0.
    assert_eq!(array(fnabi::text::parse_value("f8E5M2FNUZ=-0").unwrap()).storage_bytes(), [0]);
    // JSON: the explicit form with the dtype's MLIR name.
    let j = fnabi::json::from_str(r#"{"dtype": "f8E4M3FN", "shape": [2], "data": [0.1, "nan"]}"#).unwrap();
    assert_eq!(array(j).storage_bytes(), [0x1d, 0x7f]);
    let e = fnabi::json::from_str(r#"{"dtype": "f8E4M3FN", "shape": [1], "data": [1000]}"#).unwrap_err();
    assert!(e.to_string().contains("not a valid f8E4M3FN element"), "{e}");
}

#[test]
fn an_mlir_function_takes_and_returns_float8_memrefs() {
    let path = format!("{}/tests/mlir/float8.mlir", env!("CARGO_MANIFEST_DIR"));
    // SAFETY: a fixture of this repository, compiled by fnabi's pipeline.
    let module = unsafe { MlirModule::load(path) }.unwrap();
    let reverse = module.function("reverse").unwrap();
    let x = array(fnabi::text::parse_value("4xf8E4M3FN=0.1 448 -2 -0.001953125").unwrap());
    let y = array(reverse.call([Value::from(x)]).unwrap());
    assert_eq!(y.dtype(), DType::F8E4M3FN);
    assert_eq!(y.storage_bytes(), [0x81, 0xc0, 0x7e, 0x1d]);
    // Plain numbers are typed by the MLIR signature (what `fnabi run --inputs` does).
    let params = reverse.input_params().unwrap();
    let list = Value::List([0.1, 448.0, -2.0, 1e-9].map(Value::Float).to_vec());
    let (args, _) = fnabi::coerce::coerce_arguments(vec![list], fnabi::Dict::new(), &params).unwrap();
    let y = array(reverse.call(args).unwrap());
    assert_eq!(y.storage_bytes(), [0x00, 0xc0, 0x7e, 0x1d]);
    // The signature's element type is checked before the call.
    let wrong = Array::from_float8_bits(Float8::E5M2, &[4], vec![0; 4]).unwrap();
    let e = reverse.call([Value::from(wrong)]).unwrap_err();
    assert!(e.to_string().contains("f8E4M3FN") && e.to_string().contains("f8E5M2"), "{e}");
}
