//! Round trips of IREE's text form: every element of every dtype prints in
//! a form that parses back to the same value (floats bit for bit, NaN as a
//! NaN of the same sign), elided printing keeps IREE's shape, and the
//! values read from text match an independent reading (Rust's own parsers).

use fnabi::text::{format_array, format_array_elided, parse_array};
use fnabi::{Array, DType};
use half::{bf16, f16};
use proptest::prelude::*;

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..4, 0..4)
}

/// An array of `dtype` and `shape` whose elements are arbitrary bit
/// patterns drawn from `bits` (any float: subnormals, infinities, NaNs).
fn array_of(dtype: DType, shape: &[usize], bits: &[u64]) -> Array<'static> {
    let n: usize = shape.iter().product();
    let b = |k: usize| bits[k % bits.len()].rotate_left(k as u32);
    macro_rules! make {
        ($f:expr) => {
            Array::from_vec(shape, (0..n).map(|k| $f(b(k))).collect()).unwrap()
        };
    }
    match dtype {
        DType::Bool => make!(|x: u64| x & 1 == 1),
        DType::I8 => make!(|x: u64| x as i8),
        DType::I16 => make!(|x: u64| x as i16),
        DType::I32 => make!(|x: u64| x as i32),
        DType::I64 => make!(|x: u64| x as i64),
        DType::U8 => make!(|x: u64| x as u8),
        DType::U16 => make!(|x: u64| x as u16),
        DType::U32 => make!(|x: u64| x as u32),
        DType::U64 => make!(|x: u64| x),
        DType::F16 => make!(|x: u64| f16::from_bits(x as u16)),
        DType::BF16 => make!(|x: u64| bf16::from_bits(x as u16)),
        DType::F32 => make!(|x: u64| f32::from_bits(x as u32)),
        _ => make!(f64::from_bits),
    }
}

/// The elements as f64 bit patterns (ints and bools as themselves), NaNs
/// reduced to their sign.
fn elements(a: &Array<'_>) -> Vec<(bool, u64)> {
    let nan = |x: f64| if x.is_nan() { (true, u64::from(x.is_sign_negative())) } else { (false, x.to_bits()) };
    match a.dtype() {
        DType::F16 => a.to_vec::<f16>().unwrap().into_iter().map(|x| nan(x.to_f64())).collect(),
        DType::BF16 => a.to_vec::<bf16>().unwrap().into_iter().map(|x| nan(x.to_f64())).collect(),
        DType::F32 => a.to_vec::<f32>().unwrap().into_iter().map(|x| nan(f64::from(x))).collect(),
        DType::F64 => a.to_vec::<f64>().unwrap().into_iter().map(nan).collect(),
        DType::Bool => a.to_vec::<bool>().unwrap().into_iter().map(|x| (false, u64::from(x))).collect(),
        DType::U64 => a.to_vec::<u64>().unwrap().into_iter().map(|x| (false, x)).collect(),
        _ => int_elements(a).into_iter().map(|x| (false, x as u64)).collect(),
    }
}

fn int_elements(a: &Array<'_>) -> Vec<i64> {
    match a.dtype() {
        DType::I8 => a.to_vec::<i8>().unwrap().into_iter().map(i64::from).collect(),
        DType::I16 => a.to_vec::<i16>().unwrap().into_iter().map(i64::from).collect(),
        DType::I32 => a.to_vec::<i32>().unwrap().into_iter().map(i64::from).collect(),
        DType::U8 => a.to_vec::<u8>().unwrap().into_iter().map(i64::from).collect(),
        DType::U16 => a.to_vec::<u16>().unwrap().into_iter().map(i64::from).collect(),
        DType::U32 => a.to_vec::<u32>().unwrap().into_iter().map(i64::from).collect(),
        _ => a.to_vec::<i64>().unwrap(),
    }
}

proptest! {
    #[test]
    fn every_dtype_prints_and_parses_back(shape in shape(), bits in prop::collection::vec(any::<u64>(), 1..8)) {
        for dtype in DType::ALL {
            let a = array_of(dtype, &shape, &bits);
            let text = format_array(&a);
            let b = parse_array(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            prop_assert_eq!((b.dtype(), b.shape()), (a.dtype(), a.shape()), "{}", text);
            prop_assert_eq!(elements(&b), elements(&a), "{}", text);
        }
    }

    #[test]
    fn f32_reads_as_rust_reads_it(v in prop::collection::vec(any::<f32>().prop_filter("finite", |x| x.is_finite()), 1..8)) {
        // What fnabi prints, Rust's own parser reads back to the same f32.
        let a = Array::from_vec(&[v.len()], v.clone()).unwrap();
        let text = format_array(&a);
        let body = text.split_once('=').unwrap().1;
        let back: Vec<f32> = body.split(' ').map(|t| t.parse::<f32>().unwrap()).collect();
        prop_assert_eq!(back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }

    #[test]
    fn elided_printing_keeps_a_prefix(shape in shape(), bits in prop::collection::vec(any::<u64>(), 1..8), max in 0usize..30) {
        let a = array_of(DType::I32, &shape, &bits);
        let full = format_array(&a);
        let short = format_array_elided(&a, max);
        let n: usize = shape.iter().product();
        if n <= max {
            prop_assert_eq!(short, full);
        } else {
            // The printed elements are the first `max` in C order.
            let nums = |s: &str| -> Vec<String> {
                s.split_once('=').unwrap().1.split(['[', ']', ' ']).filter(|t| !t.is_empty()).map(|t| t.trim_end_matches("...").to_owned()).filter(|t| !t.is_empty()).collect()
            };
            prop_assert_eq!(nums(&short), nums(&full)[..max].to_vec(), "{}", short);
            prop_assert!(short.contains("..."));
        }
    }
}

#[test]
fn shortest_forms_match_numpy() {
    // numpy's repr of the same values (np.float32(x), np.float16(x)), written
    // in the text form's exponent style.
    let f32s = Array::from_vec(&[5], vec![f32::MAX, 0.1, 1.0 / 3.0, 1e-7, -16777216.0]).unwrap();
    assert_eq!(format_array(&f32s), "5xf32=3.4028235E+38 0.1 0.33333334 1E-07 -16777216");
    let f16s = Array::from_vec(&[3], vec![f16::from_f32(0.1), f16::from_f32(1.0 / 3.0), f16::MAX]).unwrap();
    assert_eq!(format_array(&f16s), "3xf16=0.1 0.3333 65500");
    let bf16s = Array::from_vec(&[2], vec![bf16::from_f32(0.1), bf16::from_f32(3.0)]).unwrap();
    assert_eq!(format_array(&bf16s), "2xbf16=0.1 3");
}
