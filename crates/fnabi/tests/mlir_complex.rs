//! `complex<f32>`/`complex<f64>` elements through compiled MLIR (issue 14):
//! the functions of `tests/mlir/complex.mlir` called with the inputs of
//! `tests/mlir/complex_expected.json`, whose expected results numpy computed
//! (`complex_expected.py`); a memref written in place; typed errors for
//! arrays of the wrong element type; the text, JSON and `.npy` forms read
//! back exactly. Needs Debian's MLIR tools (never skips).

use fnabi::mlir::{Arg, MlirLibrary, MlirModule};
use fnabi::{Array, CallError, CallErrorKind, Complex, DType, ErrorKind, Value};
use serde_json::Value as J;
use std::sync::OnceLock;

fn fixture(name: &str) -> String {
    format!("{}/tests/mlir/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn module() -> &'static MlirModule {
    static M: OnceLock<MlirModule> = OnceLock::new();
    M.get_or_init(|| {
        let path = fixture("complex.mlir");
        // SAFETY: the fixture writes only into memory it allocates and into
        // arguments passed as Arg::Mut.
        unsafe { MlirModule::load(&path) }.unwrap_or_else(|e| panic!("compiling {path}: {e}"))
    })
}

/// A part of a complex element (or a real element) as JSON writes it: a
/// number or `"nan"`, `"inf"`, `"-inf"`.
fn number(j: &J) -> f64 {
    match j {
        J::Number(n) => n.as_f64().unwrap(),
        J::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            _ => panic!("not a number: {s}"),
        },
        _ => panic!("not a number: {j}"),
    }
}

/// `got` within `tol` of `want` relative to max(1, |want|); with `tol` 0,
/// bit for bit (as f64: signed zeros and infinities kept, any NaN a NaN).
fn close(got: f64, want: f64, tol: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if tol == 0.0 || !want.is_finite() {
        return got.to_bits() == want.to_bits();
    }
    (got - want).abs() <= tol * want.abs().max(1.0)
}

/// Compares an array's JSON form with its expected form: dtype, shape,
/// each element (complex: each part).
fn same(got: &J, want: &J, tol: f64) -> Result<(), String> {
    for key in ["dtype", "shape"] {
        if got.get(key) != want.get(key) {
            return Err(format!("{key}: got {:?}, expected {:?}", got.get(key), want.get(key)));
        }
    }
    let (Some(J::Array(g)), Some(J::Array(w))) = (got.get("data"), want.get("data")) else {
        return Err(format!("no data: {got} vs {want}"));
    };
    if g.len() != w.len() {
        return Err(format!("{} elements, expected {}", g.len(), w.len()));
    }
    for (i, (a, b)) in g.iter().zip(w).enumerate() {
        let pairs: Vec<(f64, f64)> = match (a, b) {
            (J::Array(a), J::Array(b)) if a.len() == 2 && b.len() == 2 => {
                vec![(number(&a[0]), number(&b[0])), (number(&a[1]), number(&b[1]))]
            }
            (a, b) => vec![(number(a), number(b))],
        };
        for (x, y) in pairs {
            if !close(x, y, tol) {
                return Err(format!("element {i}: got {a}, expected {b}"));
            }
        }
    }
    Ok(())
}

#[test]
fn numpy_expected_values() {
    let text = std::fs::read_to_string(fixture("complex_expected.json")).unwrap();
    let cases: Vec<J> = serde_json::from_str(&text).unwrap();
    assert_eq!(cases.len(), 4);
    for c in &cases {
        let f = c["function"].as_str().unwrap();
        let inputs: Vec<Value<'static>> =
            c["inputs"].as_array().unwrap().iter().map(|j| fnabi::json::from_str(&j.to_string()).unwrap()).collect();
        let got = module().function(f).unwrap().call(inputs).unwrap_or_else(|e| panic!("@{f}: {e}"));
        let got: Vec<Value<'_>> = match got {
            Value::Tuple(items) => items,
            one => vec![one],
        };
        let want = c["expected"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "@{f}");
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            let g: J = serde_json::from_str(&fnabi::json::to_string(g)).unwrap();
            same(&g, w, c["tol"].as_f64().unwrap()).unwrap_or_else(|e| panic!("@{f} result {k}: {e}"));
        }
    }
}

#[test]
fn rust_elements_and_a_memref_written_in_place() {
    // Complex<f32> is the Rust element of complex<f32>: Array::from_vec,
    // to_vec, and MlirLibrary calls with Arg::Mut.
    let path = fixture("complex_memref.mlir");
    // SAFETY: the fixture writes only into its Arg::Mut argument.
    let lib = unsafe { MlirLibrary::compile(&std::fs::read_to_string(&path).unwrap()) }.unwrap();
    let mut m =
        Array::from_vec(&[3], vec![Complex::new(1.0f32, 2.0), Complex::new(-3.0, 0.5), Complex::new(0.0, -1.0)])
            .unwrap();
    assert!(lib.function("rotate").unwrap().call(&mut [Arg::Mut(&mut m)]).unwrap().is_empty());
    // (a + bi) * i = -b + ai
    assert_eq!(
        m.to_vec::<Complex<f32>>().unwrap(),
        [Complex::new(-2.0, 1.0), Complex::new(-0.5, -3.0), Complex::new(1.0, 0.0)]
    );
    // Through the facade, a strided (reversed) view goes in as it is.
    let a = Array::from_vec(
        &[4],
        vec![Complex::new(1.0f32, 1.0), Complex::new(2.0, 0.0), Complex::new(0.0, 3.0), Complex::new(-1.0, -1.0)],
    )
    .unwrap();
    let rev = a.restrided(&[4], &[-1], 3 * 8).unwrap();
    let b = Array::from_vec(&[4], vec![Complex::new(0.0f32, 1.0); 4]).unwrap();
    let r = module().function("cmul").unwrap().call([Value::from(rev), Value::from(b)]).unwrap();
    let r = r.as_array().unwrap();
    assert_eq!(r.dtype(), DType::C64);
    assert_eq!(
        r.to_vec::<Complex<f32>>().unwrap(),
        [Complex::new(1.0, -1.0), Complex::new(-3.0, 0.0), Complex::new(0.0, 2.0), Complex::new(-1.0, 1.0)]
    );
}

fn call_error(e: fnabi::Error) -> CallErrorKind {
    match e.into_kind() {
        ErrorKind::Call(CallError { kind, .. }) => kind,
        other => panic!("not a call error: {other}"),
    }
}

#[test]
fn wrong_element_types_are_typed_errors() {
    let f = module().function("cmul").unwrap();
    let c = Value::from(Array::from_vec(&[2], vec![Complex::new(1.0f32, 0.0); 2]).unwrap());
    // An f32 array for tensor<?xcomplex<f32>>.
    let real = Value::from(Array::from_vec(&[2], vec![1.0f32, 2.0]).unwrap());
    assert_eq!(
        call_error(f.call([real, c.clone()]).unwrap_err()),
        CallErrorKind::Dtype { expected: DType::C64, got: DType::F32 }
    );
    // complex128 for complex<f32>: never narrowed.
    let wide = Value::from(Array::from_vec(&[2], vec![Complex::new(1.0f64, 0.0); 2]).unwrap());
    assert_eq!(
        call_error(f.call([c.clone(), wide]).unwrap_err()),
        CallErrorKind::Dtype { expected: DType::C64, got: DType::C128 }
    );
    // A complex array where f32 is declared.
    let g = module().function("abs_conj").unwrap();
    let e = call_error(module().function("pass128").unwrap().call([c.clone()]).unwrap_err());
    assert_eq!(e, CallErrorKind::Dtype { expected: DType::C128, got: DType::C64 });
    let one = Value::from(Array::from_vec(&[1], vec![Complex::new(1.0f32, 0.0)]).unwrap());
    assert!(g.call([one]).is_ok());
}

#[test]
fn complex_scalars_are_refused_with_a_pointer_to_tensors() {
    let src = "func.func @f(%x: complex<f32>) -> f32 {\n  %r = complex.re %x : complex<f32>\n  return %r : f32\n}\n";
    // SAFETY: nothing is called.
    let lib = unsafe { MlirLibrary::compile(src) }.unwrap();
    let e = lib.function("f").unwrap_err().to_string();
    assert!(
        e.contains("a complex scalar (`complex<f32>`) is not supported: pass it as a 0-d tensor<complex<f32>>"),
        "{e}"
    );
}

#[test]
fn text_json_and_npy_read_back_exactly() {
    use fnabi::text::{format_array, parse_array};
    let specials = [0.0f64, -0.0, 0.1, -1.5e-7, 1e300, 5e-324, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MAX];
    let mut zs = Vec::new();
    for &re in &specials {
        for &im in &specials {
            zs.push(Complex::new(re, im));
        }
    }
    let a = Array::from_vec(&[zs.len()], zs.clone()).unwrap();
    let z32: Vec<Complex<f32>> = zs.iter().map(|z| Complex::new(z.re as f32, z.im as f32)).collect();
    let b = Array::from_vec(&[z32.len()], z32).unwrap();
    for x in [&a, &b] {
        let bits = |x: &Array<'_>| x.as_bytes().unwrap().to_vec();
        let t = format_array(x);
        assert_eq!(bits(&parse_array(&t).unwrap()), bits(x), "{t}");
        // NaN payloads are not kept by JSON; every value here is the canonical NaN.
        let j = fnabi::json::to_string(&Value::from(x.clone()));
        let back = fnabi::json::from_str(&j).unwrap();
        assert_eq!(bits(back.as_array().unwrap()), bits(x), "{j}");
        let n = fnabi::npy::to_bytes(x).unwrap();
        assert_eq!(bits(&fnabi::npy::read(&n).unwrap()), bits(x));
    }
    let t = parse_array("3xcf64=1+2j -0.5-1E-07j NAN+INFj").unwrap();
    assert_eq!(format_array(&t), "3xcf64=1+2j -0.5-1E-07j NAN+INFj");
    assert_eq!(format_array(&parse_array("cf128=0-0j").unwrap()), "cf128=0-0j");
    // IREE's own form of a complex element: its bytes in hex.
    assert_eq!(format_array(&parse_array("2xcf64=0000803F00000040 1-1j").unwrap()), "2xcf64=1+2j 1-1j");
    for bad in ["1xcf64=3", "1xcf64=1+2", "1xcf64=1e39+0j", "1xcf64=j", "1xcf64=+1j", "1xcf64=0000803F"] {
        assert!(parse_array(bad).is_err(), "{bad}");
    }
}
