use super::*;
use fnabi_abi::scalar::ScalarType;
use half::bf16;

#[test]
fn plan_assigns_registers_and_stack() {
    let ty: FunctionType =
        "(memref<?xf32>, f32, i32, f64, i64, f16, i8, f32, i64, f64, i16, bf16, f32, i64, f64, f32, i32, f64, memref<?xf64>, f32) -> f64"
            .parse()
            .unwrap();
    let p = Plan::new(&ty).unwrap();
    let locs: Vec<String> = p.args.iter().map(|a| format!("{:?}", a.loc)).collect();
    assert_eq!(
        locs.join(" "),
        "Int(0) Float(0) Int(1) Float(1) Int(2) Float(2) Int(3) Float(3) Int(4) Float(4) Int(5) Float(5) \
         Float(6) Stack(0) Float(7) Stack(1) Stack(2) Stack(3) Stack(4) Stack(5)"
    );
    assert!(p.full);
    let ty: FunctionType = "(memref<?x?xf32>, index) -> (memref<?xf32>, index)".parse().unwrap();
    let p = Plan::new(&ty).unwrap();
    assert!(matches!(p.args[0].loc, Loc::Int(1)));
    assert_eq!(p.args[0].at, 6);
    assert_eq!(p.fixed_words, 6 + 7);
    assert!(!p.full);
    let many = format!("({}) -> ()", vec!["i64"; 6 + 129].join(", "));
    let e = Plan::new(&many.parse().unwrap()).err().unwrap().to_string();
    assert!(e.contains("129 stack arguments"), "{e}");
}

#[test]
fn scalar_coercions() {
    let t = |s: &str| s.parse::<MlirType>().unwrap();
    let b = |s: &str, a: Arg<'_, '_>| {
        let ty = t(s);
        let MlirType::Scalar(e) = ty else { panic!() };
        scalar_bits(ArgLabel::raw(0), &ty, e, &a).map_err(|e| e.to_string())
    };
    assert_eq!(b("i8", Arg::Int(-1)).unwrap(), u64::MAX);
    assert_eq!(b("ui8", Arg::Int(255)).unwrap(), 255);
    assert_eq!(b("i8", Arg::Int(128)).unwrap_err(), "argument [0] (i8): 128 is out of range for i8");
    assert_eq!(b("i1", Arg::Int(1)).unwrap(), 1);
    assert_eq!(b("i1", Arg::Int(2)).unwrap_err(), "argument [0] (i1): 2 is out of range for i1 (0 or 1)");
    assert_eq!(b("i1", Arg::Bool(true)).unwrap(), 1);
    assert!(b("i32", Arg::Bool(true)).unwrap_err().contains("expected an integer, got bool"));
    assert!(b("f32", Arg::Bool(true)).unwrap_err().contains("expected a float, got bool"));
    assert_eq!(b("f32", Arg::Float(1.5)).unwrap(), u64::from(1.5f32.to_bits()));
    assert_eq!(b("f32", Arg::Int(3)).unwrap(), u64::from(3.0f32.to_bits()));
    assert!(b("f32", Arg::Float(1e39)).unwrap_err().contains("out of range"));
    assert_eq!(b("f32", Arg::Float(f64::INFINITY)).unwrap(), u64::from(f32::INFINITY.to_bits()));
    assert!(b("f16", Arg::Float(1e6)).unwrap_err().contains("out of range"));
    assert_eq!(b("bf16", Arg::Float(-2.0)).unwrap(), u64::from(bf16::from_f32(-2.0).to_bits()));
    assert!(b("f64", Arg::Int((1 << 53) + 1)).unwrap_err().contains("no exact f64 value"));
    assert!(b("i32", Arg::Float(1.0)).unwrap_err().contains("expected an integer"));
    assert_eq!(b("index", Arg::Scalar(Scalar::I64(-5))).unwrap(), (-5i64) as u64);
    assert_eq!(b("i16", Arg::Scalar(Scalar::I32(1))).unwrap_err(), "argument [0] (i16): expected i16, got i32");
    let r0 = Array::scalar(7u16);
    assert_eq!(b("ui16", Arg::Array(&r0)).unwrap(), 7);
    assert!(b("i16", Arg::Array(&r0)).unwrap_err().contains("expected i16, got u16"));
    let r1 = Array::from_vec(&[1], vec![7u16]).unwrap();
    assert!(b("ui16", Arg::Array(&r1)).unwrap_err().contains("expected a scalar, got array"));
    assert!(Scalar::U64(u64::MAX).to_value().unwrap_err().to_string().contains("does not fit"));
    assert_eq!(Scalar::from_bits(ElementType::Scalar(ScalarType::I8), 0xff), Scalar::I8(-1));
    assert!(Arg::from_value(&Value::Str("x".into())).is_err());
    assert!(matches!(Arg::from_value(&Value::Int(3)).unwrap(), Arg::Int(3)));
}
