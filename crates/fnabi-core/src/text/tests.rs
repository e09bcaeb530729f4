use super::*;

/// The text `format_float` printed before it used zmij: shortest digits
/// from core::fmt's `{:e}` (Grisu with a Dragon fallback), laid out by
/// string surgery. An independent oracle for the fast path.
fn format_float_by_core_fmt(v: f64, st: ScalarType) -> String {
    let sign = if v.is_sign_negative() { "-" } else { "" };
    if v.is_nan() {
        return format!("{sign}NAN");
    }
    if v.is_infinite() {
        return format!("{sign}INF");
    }
    if v == 0.0 {
        return format!("{sign}0");
    }
    let e_form = match st {
        ScalarType::F32 => format!("{:e}", (v as f32).abs()),
        _ => format!("{:e}", v.abs()),
    };
    let (mant, exp) = e_form.split_once('e').unwrap();
    let x: i32 = exp.parse().unwrap();
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if !(-4..16).contains(&x) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        return format!("{sign}{first}{dot}{rest}E{}{:02}", if x < 0 { '-' } else { '+' }, x.abs());
    }
    let n = digits.len() as i32;
    if x < 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-x - 1) as usize))
    } else if x + 1 >= n {
        format!("{sign}{digits}{}", "0".repeat((x + 1 - n) as usize))
    } else {
        let (int, frac) = digits.split_at((x + 1) as usize);
        format!("{sign}{int}.{frac}")
    }
}

/// Equal, or equal but for one digit that differs by one (the last
/// significant digit of an exact tie).
fn same_but_a_tie(a: &str, b: &str) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff: Vec<(u8, u8)> = a.bytes().zip(b.bytes()).filter(|(x, y)| x != y).collect();
    match diff[..] {
        [] => true,
        [(x, y)] => x.is_ascii_digit() && y.is_ascii_digit() && x.abs_diff(y) == 1,
        _ => false,
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
    #[test]
    fn fast_floats_print_as_core_fmt_does(bits in proptest::prelude::any::<u64>(), bits32 in proptest::prelude::any::<u32>()) {
        // Reads back to the same bits, and is core::fmt's text but for
        // the last digit of an exact tie (6058.15625f32: core prints
        // 6058.1563, zmij 6058.1562; both are shortest and read back).
        let d = f64::from_bits(bits);
        let (fast, core) = (format_float(d, ScalarType::F64), format_float_by_core_fmt(d, ScalarType::F64));
        if !d.is_nan() {
            proptest::prop_assert_eq!(fast.parse::<f64>().unwrap().to_bits(), d.to_bits(), "{}", fast);
        }
        proptest::prop_assert!(same_but_a_tie(&fast, &core), "{} vs {}", fast, core);
        let f32v = f32::from_bits(bits32);
        let f = f64::from(f32v);
        let (fast, core) = (format_float(f, ScalarType::F32), format_float_by_core_fmt(f, ScalarType::F32));
        if !f.is_nan() {
            proptest::prop_assert_eq!(fast.parse::<f32>().unwrap().to_bits(), f32v.to_bits(), "{}", fast);
        }
        proptest::prop_assert!(same_but_a_tie(&fast, &core), "{} vs {}", fast, core);
    }
}

/// A float of any bits, or a short decimal `m × 10^e` (integers, values
/// near the edges of the positional form and of zmij's, powers of ten).
fn row_value() -> impl proptest::strategy::Strategy<Value = f64> {
    use proptest::prelude::*;
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        (0u64..2_000_000, -10i32..17, any::<bool>()).prop_map(|(m, e, neg)| {
            let v = m as f64 * 10f64.powi(e);
            if neg { -v } else { v }
        }),
        (-3i32..3, -6i32..17).prop_map(|(d, e)| 10f64.powi(e) * (1.0 + f64::from(d) * 1e-4)),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3_000))]
    /// A row of f32s or f64s prints each value as `push_float` writes it
    /// alone (the row writer decides the common form from the value, not
    /// the text), and as core::fmt's oracle does but for a tie's digit.
    #[test]
    fn float_rows_print_each_value_alone(values in proptest::collection::vec(row_value(), 0..70)) {
        for st in [ScalarType::F32, ScalarType::F64] {
            let a = match st {
                ScalarType::F32 => Array::from_vec(&[values.len()], values.iter().map(|&v| v as f32).collect()).unwrap(),
                _ => Array::from_vec(&[values.len()], values.clone()).unwrap(),
            };
            let text = format_array(&a);
            let body = text.split_once('=').unwrap().1;
            let got: Vec<&str> = if body.is_empty() { vec![] } else { body.split(' ').collect() };
            proptest::prop_assert_eq!(got.len(), values.len());
            for (g, &v) in got.iter().zip(&values) {
                let v = if st == ScalarType::F32 { f64::from(v as f32) } else { v };
                let mut alone = String::new();
                push_float(v, st, &mut alone);
                proptest::prop_assert_eq!(*g, alone.as_str(), "{:e} as {:?}", v, st);
                let oracle = format_float_by_core_fmt(v, st);
                proptest::prop_assert!(same_but_a_tie(g, &oracle), "{} vs {}", g, oracle);
            }
        }
    }
}

#[test]
fn float_rows_at_the_edges_of_the_positional_form() {
    // Either side of the row writer's bounds (1.001e-4 and 9.99e11 / 9.99e14),
    // of zmij's (10^12 / 10^15, first digit) and of the printer's (10^-4), integers
    // either side of 2^24 and 2^53, and the special values.
    let mut values = vec![0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1.0, -1.0, 0.5];
    for edge in [1e-4f64, 1.001e-4, 9.99e11, 1e12, 1e13, 9.99e14, 1e15, 1e16, 16777216.0, 9007199254740992.0] {
        for ulps in -3i64..=3 {
            let v = f64::from_bits(edge.to_bits().wrapping_add_signed(ulps));
            values.extend([
                v,
                -v,
                f64::from(v as f32),
                f64::from_bits(f64::from(v as f32).to_bits().wrapping_add_signed(ulps)),
            ]);
        }
    }
    for st in [ScalarType::F32, ScalarType::F64] {
        let a = match st {
            ScalarType::F32 => Array::from_vec(&[values.len()], values.iter().map(|&v| v as f32).collect()).unwrap(),
            _ => Array::from_vec(&[values.len()], values.clone()).unwrap(),
        };
        let alone: Vec<String> = values
            .iter()
            .map(|&v| {
                let mut s = String::new();
                push_float(if st == ScalarType::F32 { f64::from(v as f32) } else { v }, st, &mut s);
                s
            })
            .collect();
        assert_eq!(format_array(&a).split_once('=').unwrap().1, alone.join(" "), "{st:?}");
    }
    // Spot checks against hand-written text.
    let a = Array::from_vec(&[6], vec![16777216f32, -0.0001, 1e12, 3.0, 0.25, -7e-5]).unwrap();
    assert_eq!(format_array(&a), "6xf32=16777216 -0.0001 1000000000000 3 0.25 -7E-05");
}

#[test]
fn float_text_edges() {
    for (v, st) in [
        (f64::from(f32::MAX), ScalarType::F32),
        (f64::from(f32::MIN_POSITIVE), ScalarType::F32),
        (f64::from(f32::from_bits(1)), ScalarType::F32),
        (f64::MAX, ScalarType::F64),
        (f64::MIN_POSITIVE, ScalarType::F64),
        (5e-324, ScalarType::F64),
        (1e15, ScalarType::F64),
        (1e16, ScalarType::F64),
        (123456789012345680.0, ScalarType::F64),
        (0.0001, ScalarType::F64),
        (0.00001, ScalarType::F64),
        (100.0, ScalarType::F32),
        (-2.5, ScalarType::F32),
        // The edges of zmij's positional range for f32 (first digit at
        // 10^-6..=10^12) and of this printer's (10^-4..=10^15).
        (f64::from(1e12f32), ScalarType::F32),
        (f64::from(1e13f32), ScalarType::F32),
        (f64::from(9.999999e14f32), ScalarType::F32),
        (f64::from(1e16f32), ScalarType::F32),
        (f64::from(1e-4f32), ScalarType::F32),
        (f64::from(1.2e-4f32), ScalarType::F32),
        (f64::from(9.9e-5f32), ScalarType::F32),
        (f64::from(1e-5f32), ScalarType::F32),
        (f64::from(1.5e-6f32), ScalarType::F32),
        (f64::from(1e-7f32), ScalarType::F32),
        (9.9e-5, ScalarType::F64),
        (1.5e-6, ScalarType::F64),
        (999999999999999.9, ScalarType::F64),
    ] {
        assert_eq!(format_float(v, st), format_float_by_core_fmt(v, st), "{v:e}");
    }
    assert_eq!(format_float(f64::from(f32::MAX), ScalarType::F32), "3.4028235E+38");
    assert_eq!(format_float(1e16, ScalarType::F64), "1E+16");
    assert_eq!(format_float(1e15, ScalarType::F64), "1000000000000000");
    assert_eq!(format_float(f64::from(1e13f32), ScalarType::F32), "10000000000000");
    assert_eq!(format_float(f64::from(1e-5f32), ScalarType::F32), "1E-05");
    assert_eq!(format_float(f64::from(1.2e-4f32), ScalarType::F32), "0.00012");
    // What the float reader refuses (one sign, no hex) and accepts.
    for bad in ["0x10", "--1", "+-1", "-+1", "1.5.2", "", "e5", "1e", "0x1p3"] {
        assert_eq!(parse_float(bad), None, "{bad}");
        assert_eq!(parse_float_as::<f32>(bad), None, "{bad}");
    }
    for (good, v) in [("+1.5", 1.5), ("-.5", -0.5), ("5.", 5.0), ("1E3", 1e3), ("-inf", f64::NEG_INFINITY)] {
        assert_eq!(parse_float(good), Some(v), "{good}");
    }
}

fn round(s: &str) -> String {
    format_array(&parse_array(s).unwrap())
}

fn err(s: &str) -> String {
    parse_value(s).unwrap_err().to_string()
}

#[test]
fn brackets_of_empty_arrays_with_huge_dims_are_checked_at_once() {
    // Found by the `input_spec` fuzz target: no elements (a 0 dim), so no
    // byte limit applies, but the bracket form of the dims before the 0
    // took their product (~10^20 steps) to write.
    let t = "2x32x022222222x92x0x3202222222x92x0002x92x32xi32=[";
    let start = std::time::Instant::now();
    assert_eq!(
        err(t),
        "at byte 50: brackets do not follow the shape [2, 32, 22222222, 92, 0, 3202222222, 92, 2, 92, 32] (write the values flat, or as IREE prints them)"
    );
    assert!(err("1000000000x1000000000x0xf32=[][]").contains("brackets do not follow"));
    assert!(start.elapsed() < std::time::Duration::from_secs(1), "{:?}", start.elapsed());
    assert_eq!(round("2x0xf32=[][]"), "2x0xf32=[][]");
    assert_eq!(round("2x2x0xf32=[[][]][[][]]"), "2x2x0xf32=[[][]][[][]]");
}

#[test]
fn iree_forms() {
    assert_eq!(round("2x3xf32=1 2 3 4 5 6"), "2x3xf32=[1 2 3][4 5 6]");
    assert_eq!(round("2x3xf32=[1 2 3][4 5 6]"), "2x3xf32=[1 2 3][4 5 6]");
    assert_eq!(round("2x3xf32=[[1 2 3][4 5 6]]"), "2x3xf32=[1 2 3][4 5 6]");
    assert_eq!(round("2x2x2xi8=[[1 2][3 4]][[5 6][7 -8]]"), "2x2x2xi8=[[1 2][3 4]][[5 6][7 -8]]");
    assert_eq!(round("2x1x3xi8=1 2 3 4 5 6"), "2x1x3xi8=[[1 2 3]][[4 5 6]]");
    assert_eq!(round("4xi32=1, 2,3 ,4"), "4xi32=1 2 3 4");
    assert_eq!(round("4xi32=[1 2 3 4]"), "4xi32=1 2 3 4");
    assert_eq!(round("3x4xf32=0"), "3x4xf32=[0 0 0 0][0 0 0 0][0 0 0 0]");
    assert_eq!(round("f32=2.5"), "f32=2.5");
    assert_eq!(round("0x3xf32="), "0x3xf32=");
    assert_eq!(round("3xi1=1 0 true"), "3xi1=01 00 01");
    assert_eq!(round("4xi1=00 01 false 1"), "4xi1=00 01 00 01");
    assert_eq!(round("2xui64=18446744073709551615 0x10"), "2xui64=18446744073709551615 16");
    assert_eq!(round("3xf64=-0.5 nan -inf"), "3xf64=-0.5 NAN -INF");
    assert_eq!(round("4xf32=0.1 123456789 1e20 -0"), "4xf32=0.1 123456790 1E+20 -0");
    assert_eq!(round("3xf32=3.4028235e38 1e-5 0.0001"), "3xf32=3.4028235E+38 1E-05 0.0001");
    assert_eq!(round("2xf64=0.1 1e16"), "2xf64=0.1 1E+16");
    assert_eq!(round("2xf64=123456789012345.6 -1.5e-300"), "2xf64=123456789012345.6 -1.5E-300");
    assert_eq!(round("2xbf16=1.5 -3"), "2xbf16=1.5 -3");
    assert_eq!(round("2xf16=65504 0.000061035"), "2xf16=65500 6.104E-05");
    assert_eq!(round("2x0xf32="), "2x0xf32=[][]");
    // Fuzzing found this one printing 259 billion bracket pairs.
    assert_eq!(round("5522442564x47x0x6xf64="), "5522442564x47x0x6xf64=");
    assert_eq!(round("3x2xsi32=[1 4][2 -5][3 6]"), "3x2xi32=[1 4][2 -5][3 6]");
    let Value::Array(a) = parse_value("2x3xf32=1 2 3 4 5 6").unwrap() else { panic!() };
    assert_eq!(a.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let t = a.permuted(&[1, 0]).unwrap();
    assert_eq!(format_array(&t), "3x2xf32=[1 4][2 5][3 6]");
}

#[test]
fn scalars() {
    assert_eq!(parse_value(" 42 ").unwrap(), Value::Int(42));
    assert_eq!(parse_value("-0x10").unwrap(), Value::Int(-16));
    assert_eq!(parse_value("1e3").unwrap(), Value::Float(1000.0));
    assert_eq!(parse_value("true").unwrap(), Value::Bool(true));
    let Value::Array(a) = parse_value("i32=42").unwrap() else { panic!() };
    assert_eq!((a.rank(), a.get::<i32>(&[]).unwrap()), (0, 42));
    assert_eq!(format_scalar(DType::I64, &Value::Int(3)).unwrap(), "i64=3");
    assert_eq!(format_scalar(DType::F32, &Value::Float(0.1)).unwrap(), "f32=0.1");
    assert_eq!(format_scalar(DType::Bool, &Value::Bool(true)).unwrap(), "i1=01");
    assert_eq!(format_scalar(DType::I64, &Value::Float(0.1)), None);
}

#[test]
fn errors_have_offsets() {
    assert_eq!(err(""), "at byte 0: expected a value");
    assert_eq!(err("  4x"), "at byte 2: `4x` is not a number");
    assert_eq!(
        err("99999999999999999999"),
        "at byte 0: integer `99999999999999999999` does not fit a signed 64-bit integer (an unsigned one up to 2^64 - 1 fits typed: `ui64=VALUE`)"
    );
    assert_eq!(
        err("-99999999999999999999"),
        "at byte 0: integer `-99999999999999999999` does not fit a signed 64-bit integer"
    );
    assert_eq!(err("2x3xf33=1"), "at byte 4: unknown type name \"f33\"");
    assert_eq!(err("2x?xf32=1"), "at byte 2: `?` is not a dimension (digits)");
    assert_eq!(err("2x=1"), "at byte 2: expected an element type before `=`");
    assert_eq!(err("2xf32=1 2 3"), "at byte 6: expected 2 values (or 1 to fill the array), found 3");
    assert_eq!(err("f32=1 2"), "at byte 4: expected 1 value, found 2");
    assert_eq!(err("0xf32=1"), "at byte 6: expected 0 values (or 1 to fill the array), found 1");
    assert_eq!(err("3xi8=1 200 3"), "at byte 7: `200` is out of range for i8");
    assert_eq!(err("2xui8=1 -1"), "at byte 8: `-1` is out of range for ui8");
    assert_eq!(err("2xui64=1 -1"), "at byte 9: `-1` is not an unsigned integer");
    assert_eq!(err("2xi32=1 1.5"), "at byte 8: `1.5` is not an integer");
    assert_eq!(err("2xf32=1 0x10"), "at byte 8: `0x10` is not a number");
    assert_eq!(err("2xf32=1 1e39"), "at byte 8: `1e39` is out of range for f32");
    assert_eq!(err("2xf16=1 1e6"), "at byte 8: `1e6` is out of range for f16");
    assert_eq!(err("2xi1=1 2"), "at byte 7: `2` is not a boolean (0, 1, 00, 01, true, false)");
    assert_eq!(err("2xf32=1 1e999"), "at byte 8: `1e999` is out of range for f32");
    assert_eq!(err("f64=-1e999"), "at byte 4: `-1e999` is out of range for f64");
    assert_eq!(err("2xbf16=1 1e39"), "at byte 9: `1e39` is out of range for bf16");
    assert_eq!(err("2xi32=1,,2"), "at byte 8: a comma must separate two values");
    assert_eq!(err("2xi32=,1 2"), "at byte 6: a comma must separate two values");
    assert_eq!(
        err("2x2xi32=[1 2 3 4]"),
        "at byte 13: brackets do not follow the shape [2, 2] (write the values flat, or as IREE prints them)"
    );
    assert_eq!(
        err("2x2xi32=[1 2][3 4"),
        "at byte 17: brackets do not follow the shape [2, 2] (write the values flat, or as IREE prints them)"
    );
    assert!(err("99999999999x99999999999x99999999999xf32=1").contains("too large"));
    assert_eq!(err("2x2xi8=[1]"), "at byte 7: a single value that fills the array takes no brackets");
    assert!(parse_array("2xf32").unwrap_err().to_string().contains("expected `SHAPExTYPE=VALUES`"));
    assert_eq!(err("2xf32"), "at byte 0: `2xf32` is not a number (an array is `2xf32=VALUES`; one value fills it)");
    assert_eq!(err(" f16"), "at byte 1: `f16` is not a number (an array is `f16=VALUES`; one value fills it)");
    assert_eq!(err("2xfoo"), "at byte 0: `2xfoo` is not a number");
}
