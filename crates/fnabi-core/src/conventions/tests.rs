use super::*;
use crate::vm::OpaqueRef;

fn f32s(shape: &[usize], data: &[f32]) -> Array<'static> {
    Array::from_vec(shape, data.to_vec()).unwrap()
}

fn rec(json: &str) -> TypeRecord {
    TypeRecord::parse(json).unwrap()
}

fn abi(json: &str) -> FunctionAbi {
    FunctionAbi::from_reflection(&FunctionReflection::parse(json).unwrap())
}

fn bv(a: Array<'static>) -> Variant<'static> {
    Variant::buffer_view(BufferView::new(a).unwrap())
}

fn msg(e: Error) -> String {
    e.to_string()
}

const DICT_IN_TUPLE_OUT: &str = r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, 4]], ["y", ["ndarray", "f32", 2, 1, 4]]]], "r": [["stuple", ["ndarray", "f32", 2, 1, 4], ["ndarray", "f32", 2, 1, 4]]], "v": 1}"#;
const DICT_IN_LIST_OUT: &str = r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, 4]], ["y", ["ndarray", "f32", 2, 1, 4]]]], "r": [["slist", ["ndarray", "f32", 2, 1, 4], ["ndarray", "f32", 2, 1, 4]]], "v": 1}"#;
const NESTED_DEEP: &str = r#"{"a": [["sdict", ["a", ["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], ["b", ["sdict", ["c", ["ndarray", "f32", 1, 4]]]]], ["named", "alpha", "f32"]], "r": [["ndarray", "f32", 1, 4], ["sdict", ["s", ["ndarray", "f32", 1, 4]], ["t", ["stuple", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]]]], "v": 1}"#;
const BYTES_SUM: &str = r#"{"a": [["slist", "i8", "i8", "i8", "i8", "i8"]], "r": ["i32", "i64"], "v": 1}"#;

#[test]
fn dict_in_tuple_out_packs_in_record_key_order_and_unpacks_flat() {
    let f = abi(DICT_IN_TUPLE_OUT);
    let x = f32s(&[1, 4], &[1.0, 2.0, 3.0, 4.0]);
    let y = f32s(&[1, 4], &[10.0, 20.0, 30.0, 40.0]);
    let args =
        f.bind(vec![Value::dict([("y", Value::from(y.clone())), ("x", Value::from(x.clone()))])], NO_KW).unwrap();
    let packed = f.pack_args(&args).unwrap();
    // [[x, y]]: one argument, a list of the dict's values in key order.
    let outer = packed.items();
    assert_eq!(outer.len(), 1);
    let inner = outer[0].as_list().unwrap();
    assert_eq!(inner.element_type(), &ListElementType::Variant);
    assert_eq!(inner.items()[0].as_buffer_view().unwrap().array(), &x);
    assert_eq!(inner.items()[1].as_buffer_view().unwrap().array(), &y);
    // Zero copy: the buffer view shares the host array's memory.
    assert_eq!(inner.items()[0].as_buffer_view().unwrap().array().as_ptr(), x.as_ptr());

    // The VM returns two flat results (cconv 0r_rr): IREE's rule applies.
    let s = f32s(&[1, 4], &[11.0, 22.0, 33.0, 44.0]);
    let p = f32s(&[1, 4], &[10.0, 40.0, 90.0, 160.0]);
    let out = f.unpack_results(vec![bv(s.clone()), bv(p.clone())]).unwrap();
    assert_eq!(out, Value::Tuple(vec![Value::from(s.clone()), Value::from(p.clone())]));
    // Forcing the literal reading reports the arity mismatch.
    let e = f.clone().with_result_packing(ResultPacking::Nested).unpack_results(vec![bv(s.clone()), bv(p.clone())]);
    assert_eq!(msg(e.unwrap_err()), "wrong number of results: expected 1, got 2");
    // A real list result reads literally under Auto and Nested, not Flat.
    let list = Variant::list(VmList::from_variants(vec![bv(s.clone()), bv(p.clone())]));
    assert_eq!(f.unpack_results(vec![list.clone()]).unwrap(), Value::Tuple(vec![Value::from(s), Value::from(p)]));
    let e = f.clone().with_result_packing(ResultPacking::Flat).unpack_results(vec![list]).unwrap_err();
    assert_eq!(msg(e), "results ((f32[1x4], f32[1x4])): expected 2 items, got 1");
}

const NO_KW: [(&str, Value<'static>); 0] = [];

#[test]
fn dict_in_list_out_returns_a_list_that_iree_cannot_decode() {
    let f = abi(DICT_IN_LIST_OUT);
    let s = f32s(&[1, 4], &[11.0, 22.0, 33.0, 44.0]);
    let p = f32s(&[1, 4], &[10.0, 40.0, 90.0, 160.0]);
    let list = Variant::list(VmList::from_variants(vec![bv(s.clone()), bv(p.clone())]));
    let out = f.unpack_results(vec![list]).unwrap();
    assert_eq!(out, Value::List(vec![Value::from(s), Value::from(p)]));
}

#[test]
fn missing_and_extra_dict_keys_are_errors() {
    let f = abi(DICT_IN_TUPLE_OUT);
    let x = f32s(&[1, 4], &[1.0; 4]);
    let only_x = [Value::dict([("x", Value::from(x.clone()))])];
    assert_eq!(msg(f.pack_args(&only_x).unwrap_err()), r#"argument [0] ({x: f32[1x4], y: f32[1x4]}): missing key "y""#);
    let extra = [Value::dict([("x", Value::from(x.clone())), ("y", Value::from(x.clone())), ("z", Value::from(x))])];
    assert_eq!(
        msg(f.pack_args(&extra).unwrap_err()),
        r#"argument [0] ({x: f32[1x4], y: f32[1x4]}): unexpected key "z""#
    );
    assert_eq!(
        msg(f.pack_args(&[Value::List(vec![])]).unwrap_err()),
        "argument [0]: expected {x: f32[1x4], y: f32[1x4]}, got list of 0 items"
    );
}

#[test]
fn array_checks_name_dtype_rank_and_dims() {
    let f = abi(DICT_IN_TUPLE_OUT);
    let good = f32s(&[1, 4], &[1.0; 4]);
    let check = |bad: Array<'static>| {
        msg(f.pack_args(&[Value::dict([("x", Value::from(bad)), ("y", Value::from(good.clone()))])]).unwrap_err())
    };
    assert_eq!(check(f32s(&[2, 4], &[0.0; 8])), r#"argument [0]["x"] (f32[1x4]): dim 0: expected 1, got 2"#);
    assert_eq!(check(f32s(&[4], &[0.0; 4])), r#"argument [0]["x"] (f32[1x4]): rank: expected 2, got 1"#);
    assert_eq!(
        check(Array::from_vec(&[1, 4], vec![0i32; 4]).unwrap()),
        r#"argument [0]["x"] (f32[1x4]): element type: expected f32, got i32"#
    );
    // A dtype cast happens only when asked for, and is value-checked.
    let ints = Array::from_vec(&[1, 4], vec![1i32, 2, 3, 4]).unwrap();
    let cast = f.clone().with_casts(true);
    let args = [Value::dict([("x", Value::from(ints)), ("y", Value::from(good.clone()))])];
    let packed = cast.pack_args(&args).unwrap();
    let x = packed.items()[0].as_list().unwrap().items()[0].as_buffer_view().unwrap();
    assert_eq!(x.array().to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
    // Strided arrays are copied to row-major.
    let wide = f32s(&[4, 1], &[1.0, 2.0, 3.0, 4.0]);
    let t = wide.permuted(&[1, 0]).unwrap();
    let args = [Value::dict([("x", Value::array(t)), ("y", Value::from(good))])];
    let packed = f.pack_args(&args).unwrap();
    let x = packed.items()[0].as_list().unwrap().items()[0].as_buffer_view().unwrap();
    assert_eq!(x.bytes().len(), 16);
    assert_eq!(x.array().to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn ndarray_records_both_ways() {
    let t = rec(r#"["ndarray", "i8", 2, null, 2]"#);
    let a = Array::from_vec(&[3, 2], vec![1i8, 2, 3, 4, 5, 6]).unwrap();
    let v = Value::from(a.clone());
    let x = value_to_vm(&v, &t).unwrap();
    assert_eq!(x.type_description(), "buffer_view i8[3x2]");
    // Signless: an unsigned array of the width passes unchanged.
    let u = Value::from(Array::from_vec(&[1, 2], vec![200u8, 1]).unwrap());
    assert_eq!(value_to_vm(&u, &t).unwrap().type_description(), "buffer_view u8[1x2]");
    assert_eq!(
        msg(value_to_vm(&Value::from(f32s(&[3, 3], &[0.0; 9])), &t).unwrap_err()),
        "value (i8[?x2]): dim 1: expected 2, got 3"
    );
    // Back: checked against the record too.
    assert_eq!(value_from_vm(x, &t).unwrap(), Value::from(a));
    let e = value_from_vm(bv(f32s(&[2], &[1.0, 2.0])), &t).unwrap_err();
    assert_eq!(msg(e), "value (i8[?x2]): rank: expected 2, got 1");
    assert_eq!(msg(value_from_vm(Variant::I32(1), &t).unwrap_err()), "value: expected i8[?x2], got i32");
    // Unknown rank and element type accept any array.
    let any = rec(r#"["ndarray", "unknown", null]"#);
    assert!(value_to_vm(&Value::from(f32s(&[1, 1, 1], &[1.0])), &any).is_ok());
    assert!(value_to_vm(&Value::Int(1), &any).is_err());
    // Rank 0 takes a scalar (range-checked for the element type).
    let r0 = rec(r#"["ndarray", "i16", 0]"#);
    let x = value_to_vm(&Value::Int(-300), &r0).unwrap();
    assert_eq!(x.as_buffer_view().unwrap().array().get::<i16>(&[]).unwrap(), -300);
    assert_eq!(
        msg(value_to_vm(&Value::Int(40000), &r0).unwrap_err()),
        "value: expected values representable as i16, got 40000 at flat index 0"
    );
    let b0 = rec(r#"["ndarray", "i1", 0]"#);
    assert!(value_to_vm(&Value::Bool(true), &b0).unwrap().as_buffer_view().unwrap().array().get::<bool>(&[]).unwrap());
    // Element types without a host dtype are reported, not guessed.
    let odd = rec(r#"["ndarray", "i3", 1, 2]"#);
    assert_eq!(
        msg(value_to_vm(&Value::Int(1), &odd).unwrap_err()),
        "value: expected an ndarray record of a host element type, got i3[2]"
    );
}

#[test]
fn casts_are_value_checked() {
    let f = abi(r#"{"a": [["ndarray", "i8", 1, 3]], "r": [["ndarray", "f32", 1, 3]]}"#).with_casts(true);
    let ok = [Value::from(Array::from_vec(&[3], vec![1.0f64, -2.0, 127.0]).unwrap())];
    let p = f.pack_args(&ok).unwrap();
    assert_eq!(p.items()[0].as_buffer_view().unwrap().array().to_vec::<i8>().unwrap(), [1, -2, 127]);
    let frac = [Value::from(Array::from_vec(&[3], vec![1.0f64, 2.5, 3.0]).unwrap())];
    assert_eq!(
        msg(f.pack_args(&frac).unwrap_err()),
        "argument [0]: expected values representable as i8, got 2.5 at flat index 1"
    );
    let big = [Value::from(Array::from_vec(&[3], vec![1u16, 2, 300]).unwrap())];
    assert_eq!(
        msg(f.pack_args(&big).unwrap_err()),
        "argument [0]: expected values representable as i8, got 300 at flat index 2"
    );
    // Results cast too, when asked.
    let r = f.unpack_results(vec![bv(Array::from_vec(&[3], vec![1.5f64, 1e300, 2.0]).unwrap())]).unwrap_err();
    assert_eq!(msg(r), "result [0]: expected values representable as f32, got 1e300 at flat index 1");
    let r = f.unpack_results(vec![bv(Array::from_vec(&[3], vec![1i64, 2, 3]).unwrap())]).unwrap();
    assert_eq!(r.as_array().unwrap().to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0]);
    // Every dtype pair goes through the same checked path.
    for from in DType::ALL {
        for to in DType::ALL {
            let src = array_of_nums(from, &[2], &[Num::I(0), Num::I(1)], &At::root(&Root::Value)).unwrap();
            let dst = cast_array(&src, to, &At::root(&Root::Value)).unwrap();
            assert_eq!(dst.dtype(), to);
            assert_eq!(
                read_num(to, &dst.as_bytes().unwrap()[to.size()..]),
                if to.is_float() { Num::F(1.0) } else { Num::I(1) }
            );
        }
    }
    let nan = Array::from_vec(&[1], vec![f32::NAN]).unwrap();
    assert!(cast_array(&nan, DType::I32, &At::root(&Root::Value)).is_err());
    assert!(cast_array(&nan, DType::BF16, &At::root(&Root::Value)).is_ok());
    let two = Array::from_vec(&[1], vec![2u8]).unwrap();
    assert!(cast_array(&two, DType::Bool, &At::root(&Root::Value)).is_err());
    let huge = Array::from_vec(&[1], vec![1e6f64]).unwrap();
    assert!(cast_array(&huge, DType::F16, &At::root(&Root::Value)).is_err());
}

#[test]
fn scalars_are_sized_and_range_checked() {
    let cases: &[(&str, Value<'static>, Variant<'static>)] = &[
        (r#""i8""#, Value::Int(-128), Variant::I8(-128)),
        (r#""i16""#, Value::Int(300), Variant::I16(300)),
        (r#""i32""#, Value::Int(-5), Variant::I32(-5)),
        (r#""i64""#, Value::Int(i64::MIN), Variant::I64(i64::MIN)),
        (r#""i1""#, Value::Bool(true), Variant::I32(1)),
        (r#""i32""#, Value::Bool(true), Variant::I32(1)),
        (r#""f32""#, Value::Float(2.5), Variant::F32(2.5)),
        (r#""f32""#, Value::Int(3), Variant::F32(3.0)),
        (r#""f64""#, Value::Float(-0.5), Variant::F64(-0.5)),
        (r#""f32""#, Value::Float(f64::INFINITY), Variant::F32(f32::INFINITY)),
    ];
    for (t, v, x) in cases {
        assert_eq!(&value_to_vm(v, &rec(t)).unwrap(), x, "{t} {v:?}");
    }
    // Rank-0 arrays are scalars too.
    assert_eq!(value_to_vm(&Value::from(Array::scalar(7u64)), &rec(r#""i8""#)).unwrap(), Variant::I8(7));
    let errs: &[(&str, Value<'static>, &str)] = &[
        (r#""i8""#, Value::Int(250), "value: 250 is out of range for i8 in -128..=127"),
        (r#""i1""#, Value::Int(2), "value: 2 is out of range for i1 in 0..=1"),
        (r#""i32""#, Value::Int(1 << 40), "value: 1099511627776 is out of range for i32 in -2147483648..=2147483647"),
        (r#""i32""#, Value::Float(1.0), "value: expected i32, got float 1.0"),
        (r#""i32""#, Value::from("1"), "value: expected i32, got str of 1 byte"),
        (r#""f32""#, Value::Float(1e300), "value: 1e300 is out of range for f32"),
        (
            r#""f16""#,
            Value::Float(1.0),
            "value: expected a record of a VM value type (i1, i8, i16, i32, i64, f32, f64), got f16",
        ),
        (r#""f64""#, Value::None, "value: expected f64, got None"),
        ("null", Value::Int(1), "value: expected None (a null slot), got int 1"),
    ];
    for (t, v, m) in errs {
        assert_eq!(msg(value_to_vm(v, &rec(t)).unwrap_err()), *m);
    }
    // Back from the VM: any integer width; an `iN` is the register's low N
    // bits, signed (the VM does not keep the upper bits of a narrow
    // integer: `127 + 1` as an i8 comes back as 128), an `i1` its low bit.
    assert_eq!(value_from_vm(Variant::I64(7), &rec(r#""i8""#)).unwrap(), Value::Int(7));
    assert_eq!(value_from_vm(Variant::I32(1), &rec(r#""i1""#)).unwrap(), Value::Bool(true));
    assert_eq!(value_from_vm(Variant::I32(2), &rec(r#""i1""#)).unwrap(), Value::Bool(false));
    assert_eq!(value_from_vm(Variant::F32(0.5), &rec(r#""f64""#)).unwrap(), Value::Float(0.5));
    assert_eq!(value_from_vm(Variant::I32(128), &rec(r#""i8""#)).unwrap(), Value::Int(-128));
    assert_eq!(value_from_vm(Variant::I32(255), &rec(r#""i8""#)).unwrap(), Value::Int(-1));
    assert_eq!(value_from_vm(Variant::I64(300), &rec(r#""i8""#)).unwrap(), Value::Int(44));
    assert_eq!(value_from_vm(Variant::I32(40000), &rec(r#""i16""#)).unwrap(), Value::Int(40000 - 65536));
    assert_eq!(value_from_vm(Variant::I64(1 << 40), &rec(r#""i32""#)).unwrap(), Value::Int(0));
    assert_eq!(value_from_vm(Variant::I64(-5), &rec(r#""i64""#)).unwrap(), Value::Int(-5));
    assert_eq!(msg(value_from_vm(Variant::F32(1.0), &rec(r#""i8""#)).unwrap_err()), "value: expected i8, got f32");
    assert_eq!(msg(value_from_vm(Variant::I32(1), &rec(r#""f32""#)).unwrap_err()), "value: expected f32, got i32");
    assert_eq!(
        msg(value_from_vm(Variant::I32(1), &rec("null")).unwrap_err()),
        "value: expected none (a null slot), got i32"
    );
    assert_eq!(value_from_vm(Variant::None, &rec("null")).unwrap(), Value::None);
}

#[test]
fn bytes_sum_packs_i8_values_and_rejects_250() {
    let f = abi(BYTES_SUM);
    let good = [Value::List([1, 2, 3, 4, -6].map(Value::Int).to_vec())];
    let p = f.pack_args(&good).unwrap();
    assert_eq!(p.to_string(), "list<?>[list<?>[i8 1, i8 2, i8 3, i8 4, i8 -6]]");
    let bad = [Value::List([1, 2, 3, 4, 250].map(Value::Int).to_vec())];
    assert_eq!(msg(f.pack_args(&bad).unwrap_err()), "argument [0][4]: 250 is out of range for i8 in -128..=127");
    let short = [Value::Tuple([1, 2].map(Value::Int).to_vec())];
    assert_eq!(msg(f.pack_args(&short).unwrap_err()), "argument [0] ([i8, i8, i8, i8, i8]): expected 5 items, got 2");
    assert_eq!(
        f.unpack_results(vec![Variant::I32(4), Variant::I64(5)]).unwrap(),
        Value::Tuple(vec![Value::Int(4), Value::Int(5)])
    );
    assert_eq!(msg(f.unpack_results(vec![Variant::I32(4)]).unwrap_err()), "wrong number of results: expected 2, got 1");
}

#[test]
fn nested_deep_binds_alpha_by_keyword_or_position() {
    let f = abi(NESTED_DEEP);
    let a = f32s(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let b = f32s(&[4], &[10.0, 20.0, 30.0, 40.0]);
    let c = f32s(&[4], &[2.0; 4]);
    let arg0 = || {
        Value::dict([
            ("a", Value::List(vec![Value::from(a.clone()), Value::from(b.clone())])),
            ("b", Value::dict([("c", Value::from(c.clone()))])),
        ])
    };
    let by_kw = f.bind(vec![arg0()], [("alpha", Value::Float(3.0))]).unwrap();
    let by_pos = f.bind(vec![arg0(), Value::Float(3.0)], NO_KW).unwrap();
    assert_eq!(by_kw, by_pos);
    let p = f.pack_args(&by_kw).unwrap();
    assert_eq!(p.to_string(), "list<?>[list<?>[list<?>[bv f32[4], bv f32[4]], list<?>[bv f32[4]]], f32 3.0]");
    // The IREE-like arity errors.
    assert_eq!(msg(f.bind(vec![arg0()], NO_KW).unwrap_err()), "missing argument \"alpha\" (argument 1)");
    assert_eq!(msg(f.bind(vec![], [("alpha", Value::Float(3.0))]).unwrap_err()), "missing positional argument 0");
    assert_eq!(
        msg(f.bind(vec![arg0()], [("beta", Value::Float(3.0))]).unwrap_err()),
        "unexpected keyword argument \"beta\""
    );
    assert_eq!(
        msg(f.bind(vec![arg0(), Value::Float(1.0)], [("alpha", Value::Float(3.0))]).unwrap_err()),
        "got multiple values for argument \"alpha\""
    );
    assert_eq!(
        msg(f.bind(vec![arg0()], [("alpha", Value::Float(3.0)), ("alpha", Value::Float(3.0))]).unwrap_err()),
        "got multiple values for argument \"alpha\""
    );
    assert_eq!(
        msg(f.bind(vec![arg0(), Value::Float(1.0), Value::None], NO_KW).unwrap_err()),
        "takes 2 positional arguments but 3 were given"
    );
    assert_eq!(msg(f.pack_args(&[arg0()]).unwrap_err()), "wrong number of arguments: expected 2, got 1");
    let e = f.pack_args(&[arg0(), Value::from("x")]).unwrap_err();
    assert_eq!(msg(e), "argument [1]: expected f32, got str of 1 byte");
    // Results: an array and a dict holding a tuple.
    let s = f32s(&[4], &[11.0, 22.0, 33.0, 44.0]);
    let t0 = f32s(&[4], &[2.0, 4.0, 6.0, 8.0]);
    let t1 = f32s(&[4], &[20.0, 40.0, 60.0, 80.0]);
    let r0 = f32s(&[4], &[15.0, 28.0, 41.0, 54.0]);
    let tl = Variant::list(VmList::from_variants(vec![bv(t0.clone()), bv(t1.clone())]));
    let dl = Variant::list(VmList::from_variants(vec![bv(s.clone()), tl]));
    let out = f.unpack_results(vec![bv(r0.clone()), dl]).unwrap();
    let expect = Value::Tuple(vec![
        Value::from(r0),
        Value::dict([("s", Value::from(s)), ("t", Value::Tuple(vec![Value::from(t0), Value::from(t1)]))]),
    ]);
    assert_eq!(out, expect);
    let bad = Variant::list(VmList::from_variants(vec![Variant::I32(1)]));
    let e = f.unpack_results(vec![bv(f32s(&[4], &[0.0; 4])), bad]).unwrap_err();
    assert_eq!(msg(e), "result [1] ({s: f32[4], t: (f32[4], f32[4])}): expected 2 items, got 1");
}

#[test]
fn sdict_kwargs_collects_unnamed_keywords() {
    let f = abi(r#"{"a": ["i32", ["sdict_kwargs", ["a", "i32"], ["b", "f64"]]], "r": []}"#);
    let bound = f.bind(vec![Value::Int(1)], [("b", Value::Float(0.5)), ("a", Value::Int(2))]).unwrap();
    let p = f.pack_args(&bound).unwrap();
    assert_eq!(p.to_string(), "list<?>[i32 1, list<?>[i32 2, f64 0.5]]");
    assert_eq!(
        msg(f.bind(vec![Value::Int(1)], [("a", Value::Int(2)), ("a", Value::Int(2))]).unwrap_err()),
        "got multiple values for argument \"a\""
    );
    assert_eq!(
        msg(f.bind(vec![Value::Int(1), Value::None], NO_KW).unwrap_err()),
        "takes 1 positional argument but 2 were given"
    );
    let missing = f.bind(vec![Value::Int(1)], [("a", Value::Int(2))]).unwrap();
    assert_eq!(msg(f.pack_args(&missing).unwrap_err()), "argument [1] (**{a: i32, b: f64}): missing key \"b\"");
    assert_eq!(f.unpack_results(vec![]).unwrap(), Value::None);
    // Built by hand anywhere but last, it is an ordinary dict parameter.
    let g = FunctionAbi::from_reflection(&FunctionReflection {
        a: vec![TypeRecord::SDictKwargs(vec![("a".into(), rec(r#""i32""#))]), rec(r#""i8""#)],
        r: vec![],
        v: None,
    });
    let d = Value::dict([("a", Value::Int(1))]);
    assert_eq!(g.bind(vec![d.clone(), Value::Int(2)], NO_KW).unwrap(), [d, Value::Int(2)]);
    assert_eq!(
        msg(g.bind(vec![], [("a", Value::Int(1))]).unwrap_err()),
        "unexpected keyword argument \"a\" (the parameters have no names: pass the arguments by position)"
    );
}

#[test]
fn null_slots_and_unknown_records() {
    let f = abi(r#"{"a": ["unknown", null, ["slist", null, "i8"]], "r": [null, "unknown"]}"#);
    let bound = f.bind(vec![Value::Float(1.5)], NO_KW);
    assert_eq!(msg(bound.unwrap_err()), "missing positional argument 2");
    let bound =
        f.bind(vec![Value::Float(1.5), Value::None, Value::List(vec![Value::None, Value::Int(1)])], NO_KW).unwrap();
    let p = f.pack_args(&bound).unwrap();
    assert_eq!(p.to_string(), "list<?>[f64 1.5, none, list<?>[none, i8 1]]");
    let e = f.pack_args(&[Value::None, Value::None, Value::List(vec![Value::Int(0), Value::Int(1)])]).unwrap_err();
    assert_eq!(msg(e), "argument [2][0]: expected None (a null slot), got int 0");
    let out = f.unpack_results(vec![Variant::None, Variant::list(VmList::from_bytes(b"hi"))]).unwrap();
    assert_eq!(out, Value::Tuple(vec![Value::None, Value::from("hi")]));
    // A trailing null parameter may be left out.
    let g = abi(r#"{"a": ["i32", null], "r": []}"#);
    assert_eq!(g.bind(vec![Value::Int(1)], NO_KW).unwrap(), [Value::Int(1), Value::None]);
}

#[test]
fn typed_lists_and_strings() {
    let t = rec(r#"["py_homogeneous_list", "i8"]"#);
    for v in [Value::from("hé"), Value::Bytes("hé".as_bytes().to_vec())] {
        let x = value_to_vm(&v, &t).unwrap();
        assert_eq!(x.as_list().unwrap().element_type(), &ListElementType::Value(ValueType::I8));
        assert_eq!(x.as_list().unwrap().to_bytes().unwrap(), "hé".as_bytes());
    }
    let v = Value::List(vec![Value::Int(104), Value::Int(-1)]);
    let x = value_to_vm(&v, &t).unwrap();
    assert_eq!(x.to_string(), "list<i8>[i8 104, i8 -1]");
    assert_eq!(value_from_vm(x, &t).unwrap(), Value::List(vec![Value::Int(104), Value::Int(-1)]));
    let e = value_to_vm(&Value::List(vec![Value::Int(1000)]), &t).unwrap_err();
    assert_eq!(msg(e), "value [0]: 1000 is out of range for i8 in -128..=127");
    // A list of arrays is a list of buffer views.
    let ta = rec(r#"["py_homogeneous_list", ["ndarray", "f32", 1, null]]"#);
    let v = Value::Tuple(vec![Value::from(f32s(&[2], &[1.0, 2.0])), Value::from(f32s(&[1], &[3.0]))]);
    let x = value_to_vm(&v, &ta).unwrap();
    assert_eq!(x.as_list().unwrap().element_type(), &ListElementType::Ref(RefType::BufferView));
    assert_eq!(value_from_vm(x, &ta).unwrap().as_sequence().unwrap().len(), 2);
    // A list of lists.
    let tl = rec(r#"["py_homogeneous_list", ["slist", "f64"]]"#);
    let v = Value::List(vec![Value::List(vec![Value::Float(1.0)])]);
    let x = value_to_vm(&v, &tl).unwrap();
    assert_eq!(x.to_string(), "list<!vm.list>[list<?>[f64 1.0]]");
    // `unknown` elements are variants.
    let tu = rec(r#"["py_homogeneous_list", "unknown"]"#);
    assert_eq!(
        value_to_vm(&Value::List(vec![Value::Int(1), Value::from("a")]), &tu).unwrap().to_string(),
        "list<?>[i64 1, list<i8>[i8 97]]"
    );
    assert_eq!(
        msg(value_to_vm(&Value::from("x"), &rec(r#"["py_homogeneous_list", "i32"]"#)).unwrap_err()),
        "value: expected list[i32], got str of 1 byte"
    );
    assert_eq!(msg(value_from_vm(Variant::I32(1), &t).unwrap_err()), "value: expected a list (list[i8]), got i32");
    // f16 elements have no VM value type: a variant list, whose elements then fail.
    assert_eq!(element_type_of(&rec(r#""f16""#)), ListElementType::Variant);
    assert_eq!(element_type_of(&rec(r#"["ndarray", ["slist"], 1, 1]"#)), ListElementType::Ref(RefType::List));
}

#[test]
fn arrays_of_references_are_values_plus_dims() {
    let t = rec(r#"["ndarray", ["slist", "i32"], 2, 2, null]"#);
    let cell = |i: i64| Value::List(vec![Value::Int(i)]);
    let v =
        Value::List(vec![Value::List(vec![cell(1), cell(2), cell(3)]), Value::List(vec![cell(4), cell(5), cell(6)])]);
    let x = value_to_vm(&v, &t).unwrap();
    assert_eq!(
        x.to_string(),
        "list<?>[list<!vm.list>[list<?>[i32 1], list<?>[i32 2], list<?>[i32 3], list<?>[i32 4], list<?>[i32 5], list<?>[i32 6]], list<i64>[i64 2, i64 3]]"
    );
    assert_eq!(value_from_vm(x, &t).unwrap(), v);
    // Ragged, wrong depth, wrong dims.
    let ragged = Value::List(vec![Value::List(vec![cell(1)]), Value::List(vec![cell(2), cell(3)])]);
    assert_eq!(msg(value_to_vm(&ragged, &t).unwrap_err()), "value [1] (a rectangular array): expected 1 item, got 2");
    let shallow = Value::List(vec![Value::Int(1)]);
    assert_eq!(
        msg(value_to_vm(&shallow, &t).unwrap_err()),
        "value [0]: expected nested lists 2 deep (ndarray<[i32]>[2x?]), got int 1"
    );
    let deep = Value::List(vec![Value::List(vec![Value::Int(1)])]);
    assert_eq!(msg(value_to_vm(&deep, &t).unwrap_err()), "value [0][0]: expected [i32], got int 1");
    let three = Value::List(vec![Value::List(vec![cell(1)]), Value::List(vec![cell(1)]), Value::List(vec![cell(1)])]);
    assert_eq!(msg(value_to_vm(&three, &t).unwrap_err()), "value (ndarray<[i32]>[2x?]): dim 0: expected 2, got 3");
    assert!(value_to_vm(&v, &rec(r#"["ndarray", ["slist", "i32"], null]"#)).is_err());
    // Rank 0: the single element itself.
    let t0 = rec(r#"["ndarray", "unknown", 0]"#);
    assert!(value_to_vm(&Value::from(Array::scalar(1.0f32)), &t0).is_ok());
    let r0 = rec(r#"["ndarray", ["py_homogeneous_list", "i64"], 0]"#);
    let v9 = Value::List(vec![Value::Int(9)]);
    let x = value_to_vm(&v9, &r0).unwrap();
    assert_eq!(x.to_string(), "list<?>[list<!vm.list>[list<i64>[i64 9]], list<i64>[]]");
    assert_eq!(value_from_vm(x, &r0).unwrap(), Value::List(vec![Value::Int(9)]));
    // Zero-sized arrays keep their shape.
    let empty = Value::List(vec![Value::List(vec![]), Value::List(vec![])]);
    let x = value_to_vm(&empty, &t).unwrap();
    assert_eq!(value_from_vm(x, &t).unwrap(), empty);
    // Below an empty level, the record's static dims still hold.
    let t01 = rec(r#"["ndarray", ["slist", "f64"], 2, null, 1]"#);
    let none = Value::List(vec![]);
    let x = value_to_vm(&none, &t01).unwrap();
    assert_eq!(x.as_list().unwrap().items()[1].to_string(), "list<i64>[i64 0, i64 1]");
    assert_eq!(value_from_vm(x, &t01).unwrap(), none);
    // Malformed VM values.
    let pair = |vals: Vec<Variant<'static>>, dims: Vec<Variant<'static>>| {
        Variant::list(VmList::from_variants(vec![
            Variant::list(VmList::from_variants(vals)),
            Variant::list(VmList::from_variants(dims)),
        ]))
    };
    let one = || Variant::list(VmList::from_variants(vec![Variant::I32(1)]));
    assert_eq!(
        msg(value_from_vm(pair(vec![one()], vec![Variant::I64(2), Variant::I64(1)]), &t).unwrap_err()),
        "value: expected 2 values for dims [2, 1], got 1 values"
    );
    assert_eq!(
        msg(value_from_vm(pair(vec![], vec![Variant::I64(-1), Variant::I64(1)]), &t).unwrap_err()),
        "value [1][0]: expected a dim (an integer >= 0), got i64 -1"
    );
    assert_eq!(
        msg(value_from_vm(pair(vec![], vec![Variant::I64(0)]), &t).unwrap_err()),
        "value (ndarray<[i32]>[2x?]): rank: expected 2, got 1"
    );
    assert_eq!(
        msg(value_from_vm(Variant::list(VmList::from_variants(vec![one()])), &t).unwrap_err()),
        "value: expected a pair [values, dims] (ndarray<[i32]>[2x?]), got a list of 1 item"
    );
}

#[test]
fn dynamic_mode_is_irees() {
    let f = FunctionAbi::dynamic();
    assert_eq!(f.mode(), AbiMode::Dynamic);
    let args = f
        .bind(
            vec![
                Value::Int(2),
                Value::Float(2.5),
                Value::Bool(true),
                Value::from("hi"),
                Value::dict([("b", Value::Int(1)), ("a", Value::Float(0.0))]),
                Value::Tuple(vec![Value::None, Value::Bytes(vec![255])]),
                Value::from(f32s(&[2], &[1.0, 2.0])),
            ],
            NO_KW,
        )
        .unwrap();
    let p = f.pack_args(&args).unwrap();
    assert_eq!(
        p.to_string(),
        "list<?>[i64 2, f64 2.5, i64 1, list<i8>[i8 104, i8 105], list<?>[f64 0.0, i64 1], list<?>[none, list<i8>[i8 -1]], bv f32[2]]"
    );
    assert_eq!(msg(f.bind(vec![], [("x", Value::None)]).unwrap_err()), "unexpected keyword argument \"x\"");
    // Results: 0 -> None, 1 -> the value, more -> a tuple; list<i8> -> str or bytes.
    assert_eq!(f.unpack_results(vec![]).unwrap(), Value::None);
    assert_eq!(f.unpack_results(vec![Variant::I32(42)]).unwrap(), Value::Int(42));
    let out = f
        .unpack_results(vec![
            Variant::F32(0.5),
            Variant::list(VmList::from_bytes(b"ok")),
            Variant::list(VmList::from_bytes(&[0xff])),
            Variant::list(VmList::from_variants(vec![Variant::I8(1), Variant::I16(2), Variant::None])),
        ])
        .unwrap();
    assert_eq!(
        out,
        Value::Tuple(vec![
            Value::Float(0.5),
            Value::from("ok"),
            Value::Bytes(vec![0xff]),
            Value::List(vec![Value::Int(1), Value::Int(2), Value::None])
        ])
    );
    let fence = Variant::Ref(VmRef::Opaque(OpaqueRef::new("!hal.fence", Box::new(()))));
    assert_eq!(
        msg(f.unpack_results(vec![Variant::I32(1), fence]).unwrap_err()),
        "result [1]: expected a value the host can hold, got !hal.fence"
    );
}

#[test]
fn depth_of_host_values_is_bounded() {
    let mut v = Value::Int(1);
    for _ in 0..MAX_DEPTH + 5 {
        v = Value::List(vec![v]);
    }
    let e = FunctionAbi::dynamic().pack_args(std::slice::from_ref(&v)).unwrap_err();
    assert!(msg(e).ends_with("values nest deeper than 128 levels"));
    let mut x = Variant::I32(1);
    for _ in 0..MAX_DEPTH + 5 {
        x = Variant::list(VmList::from_variants(vec![x]));
    }
    assert!(FunctionAbi::dynamic().unpack_results(vec![x]).is_err());
}

#[test]
fn typed_mode_from_the_declaration() {
    let attrs = [(
        "iree.abi.declaration",
        "sync func @scale(%input0: tensor<4xf32>, %input1: f32) -> (%output0: tensor<4xf32>)",
    )];
    let f = FunctionAbi::from_attrs(attrs).unwrap().with_calling_convention("0rf_r".parse().unwrap());
    assert_eq!(f.mode(), AbiMode::Declaration);
    let a = f32s(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let args = [Value::from(a.clone()), Value::Float(2.5)];
    let p = f.pack_args(&args).unwrap();
    assert_eq!(p.to_string(), "list<?>[bv f32[4], f32 2.5]");
    assert_eq!(
        msg(f.pack_args(&[Value::from(f32s(&[3], &[0.0; 3])), Value::Float(2.5)]).unwrap_err()),
        "argument [0] (f32[4]): dim 0: expected 4, got 3"
    );
    let out = f.unpack_results(vec![bv(a.clone())]).unwrap();
    assert_eq!(out, Value::from(a.clone()));

    let add_i32 = FunctionAbi::from_attrs([(
        "iree.abi.declaration",
        "sync func @add_i32(%input0: i32, %input1: i32) -> (%output0: i32)",
    )])
    .unwrap();
    assert_eq!(add_i32.pack_args(&[Value::Int(2), Value::Int(40)]).unwrap().to_string(), "list<?>[i32 2, i32 40]");
    assert_eq!(
        msg(add_i32.pack_args(&[Value::Int(2), Value::Int(1 << 40)]).unwrap_err()),
        "argument [1]: 1099511627776 is out of range for i32 in -2147483648..=2147483647"
    );
    assert_eq!(add_i32.unpack_results(vec![Variant::I32(42)]).unwrap(), Value::Int(42));

    let dyn_dim = FunctionAbi::from_attrs([(
        "iree.abi.declaration",
        "sync func @dyn_dim(%input0: tensor<?x4xf32>) -> (%output0: index)",
    )])
    .unwrap();
    assert!(dyn_dim.pack_args(&[Value::from(Array::zeros(DType::F32, &[5, 4]).unwrap())]).is_ok());
    assert_eq!(dyn_dim.unpack_results(vec![Variant::I64(5)]).unwrap(), Value::Int(5));

    let str_len = FunctionAbi::from_attrs([(
        "iree.abi.declaration",
        "sync func @str_len(%input0: !util.list<i8>) -> (%output0: index, %output1: i32)",
    )])
    .unwrap();
    assert_eq!(str_len.pack_args(&[Value::from("hi")]).unwrap().to_string(), "list<?>[list<i8>[i8 104, i8 105]]");
    assert_eq!(
        str_len.pack_args(&[Value::List(vec![Value::Int(104), Value::Int(105)])]).unwrap().to_string(),
        "list<?>[list<i8>[i8 104, i8 105]]"
    );

    // async: the VM call takes two fences after the user's arguments.
    let attrs = [
        (
            "iree.abi.declaration",
            "async func @add_async(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>)",
        ),
        ("iree.abi.model", "coarse-fences"),
    ];
    let f = FunctionAbi::from_attrs(attrs).unwrap().with_calling_convention("0rrrr_r".parse().unwrap());
    assert_eq!(f.model(), InvocationModel::CoarseFences);
    assert!(f.pack_args(&[Value::from(a.clone()), Value::from(a.clone())]).is_ok());
    assert_eq!(
        msg(f.pack_args(&[Value::from(a.clone())]).unwrap_err()),
        "wrong number of arguments: expected 2, got 1"
    );
    // A parameter the host cannot supply.
    let g = FunctionAbi::from_attrs([(
        "iree.abi.declaration",
        "sync func @g(%input0: !hal.fence) -> (%output0: !hal.buffer)",
    )])
    .unwrap();
    assert_eq!(g.params().unwrap()[0].ty, ParamType::Opaque("!hal.fence".into()));
    assert_eq!(
        msg(g.pack_args(&[Value::None]).unwrap_err()),
        "argument [0]: expected a !hal.fence (not made from host values), got None"
    );
    assert_eq!(
        msg(g.unpack_results(vec![Variant::None]).unwrap_err()),
        "result [0]: expected a value the host can hold, got !hal.buffer"
    );
    assert_eq!(g.results().unwrap()[0].to_string(), "!hal.buffer");
}

#[test]
fn attrs_pick_records_then_declaration_and_report_bad_ones() {
    let both = [
        ("iree.abi", BYTES_SUM),
        ("iree.abi.declaration", "sync func @bytes_sum(%input0: !util.list<?>) -> (%output0: i32, %output1: i64)"),
    ];
    assert_eq!(FunctionAbi::from_attrs(both).unwrap().mode(), AbiMode::Reflection);
    assert_eq!(FunctionAbi::from_attrs([("custom.key", "x")]).unwrap().mode(), AbiMode::Dynamic);
    let e = FunctionAbi::from_attrs([("iree.abi", "{}")]).unwrap_err();
    assert_eq!(msg(e), "iree.abi at byte 0: expected a key \"a\", got none");
    let e = FunctionAbi::from_attrs([("iree.abi.declaration", "func @f() -> ()")]).unwrap_err();
    assert_eq!(msg(e), "at byte 0: expected `sync` or `async`");
    let e = FunctionAbi::from_attrs([("iree.abi.model", "fine-fences")]).unwrap_err();
    assert_eq!(msg(e), "ABI attributes: unknown iree.abi.model \"fine-fences\" (fnabi knows coarse-fences)");
}

#[test]
fn calling_convention_checks_the_packed_registers() {
    let f = abi(r#"{"a": ["i64", "unknown"], "r": []}"#).with_calling_convention("0ir_v".parse().unwrap());
    assert!(f.pack_args(&[Value::Int(1), Value::from(f32s(&[1], &[1.0]))]).is_ok());
    let e = f.pack_args(&[Value::Int(1 << 40), Value::None]).unwrap_err();
    assert_eq!(msg(e), "argument [0] (VM register): expected an i32 value (cconv `i`), got i64 1099511627776");
    let e = f.pack_args(&[Value::Int(1), Value::Int(2)]).unwrap_err();
    assert_eq!(msg(e), "argument [1] (VM register): expected a ref or none (cconv `r`), got i64 2");
    let g = abi(r#"{"a": ["i64"], "r": []}"#).with_calling_convention("0ii_v".parse().unwrap());
    assert_eq!(msg(g.pack_args(&[Value::Int(1)]).unwrap_err()), "wrong number of arguments: expected 2, got 1");
}

#[test]
fn structure_results_keep_their_kind_under_the_flat_rule() {
    let f = abi(r#"{"a": [], "r": [["sdict", ["b", "i32"], ["a", "f32"]]]}"#);
    let out = f.unpack_results(vec![Variant::I32(1), Variant::F32(0.5)]).unwrap();
    assert_eq!(out, Value::dict([("b", Value::Int(1)), ("a", Value::Float(0.5))]));
    assert_eq!(out.as_sequence(), None);
    let g = abi(r#"{"a": [], "r": [["slist", "i32"]]}"#);
    // One non-list result: flat.
    assert_eq!(g.unpack_results(vec![Variant::I32(3)]).unwrap(), Value::List(vec![Value::Int(3)]));
    // One list result: literal.
    let l = Variant::list(VmList::from_variants(vec![Variant::I32(3)]));
    assert_eq!(g.unpack_results(vec![l.clone()]).unwrap(), Value::List(vec![Value::Int(3)]));
    // Flat forced: the list is the slot, which must be an i32.
    assert_eq!(
        msg(g.with_result_packing(ResultPacking::Flat).unpack_results(vec![l]).unwrap_err()),
        "result [0]: expected i32, got list<?>"
    );
}

#[test]
fn complex_casts_are_value_checked() {
    use fnabi_abi::Complex;
    let at = At::root(&Root::Value);
    // Reals become x+0j; complex64 widens to complex128 exactly.
    let r = cast_array(&Array::from_vec(&[2], vec![1.5f32, -2.0]).unwrap(), DType::C64, &at).unwrap();
    assert_eq!(r.to_vec::<Complex<f32>>().unwrap(), [Complex::new(1.5, 0.0), Complex::new(-2.0, 0.0)]);
    let z = Array::from_vec(&[2], vec![Complex::new(0.1f32, 3.0), Complex::new(1.0, 0.0)]).unwrap();
    let w = cast_array(&z, DType::C128, &at).unwrap();
    assert_eq!(w.to_vec::<Complex<f64>>().unwrap()[0], Complex::new(f64::from(0.1f32), 3.0));
    // To a real type only without an imaginary part.
    let e = cast_array(&z, DType::F32, &at).unwrap_err().to_string();
    assert_eq!(e, "value: expected values representable as f32, got 0.10000000149011612+3.0j at flat index 0");
    let ok = Array::from_vec(&[1], vec![Complex::new(7.0f64, 0.0)]).unwrap();
    assert_eq!(cast_array(&ok, DType::I8, &at).unwrap().to_vec::<i8>().unwrap(), [7]);
    // complex128 to complex64: a finite part that overflows f32 is refused.
    let big = Array::from_vec(&[1], vec![Complex::new(1.0f64, 1e300)]).unwrap();
    assert!(cast_array(&big, DType::C64, &at).is_err());
}

#[test]
fn records_pack_through_one_plan_in_record_order() {
    // Keys out of alphabetical order pack in the record's order, whatever
    // the host dict's order; structures inside typed lists go through the
    // elements' plan, with their paths.
    let f = abi(
        r#"{"a": [["sdict", ["y", "i32"], ["x", ["slist", "i8", "f64"]]], ["py_homogeneous_list", ["sdict", ["b", "i64"], ["a", "i8"]]]], "r": [], "v": 1}"#,
    );
    let plan = f.record_plan().unwrap();
    assert_eq!(plan.plan().leaf_count(), 4);
    assert_eq!(plan.leaf_record(3).unwrap().to_string(), "list[{b: i64, a: i8}]");
    assert!(plan.leaf_record(4).is_none());
    let x = Value::List(vec![Value::Int(-1), Value::Float(0.5)]);
    let elems = Value::List(vec![
        Value::dict([("a", Value::Int(1)), ("b", Value::Int(2))]),
        Value::dict([("b", Value::Int(3)), ("a", Value::Int(4))]),
    ]);
    let want =
        "list<?>[list<?>[i32 7, list<?>[i8 -1, f64 0.5]], list<!vm.list>[list<?>[i64 2, i8 1], list<?>[i64 3, i8 4]]]";
    for d in
        [Value::dict([("x", x.clone()), ("y", Value::Int(7))]), Value::dict([("y", Value::Int(7)), ("x", x.clone())])]
    {
        assert_eq!(f.pack_args(&[d, elems.clone()]).unwrap().to_string(), want);
    }
    let good = Value::dict([("y", Value::Int(7)), ("x", x.clone())]);
    let pack = |d: Value<'static>, e: Value<'static>| msg(f.pack_args(&[d, e]).unwrap_err());
    assert_eq!(
        pack(Value::dict([("y", Value::Int(7)), ("x", Value::Int(3))]), elems.clone()),
        r#"argument [0]["x"]: expected [i8, f64], got int 3"#
    );
    assert_eq!(
        pack(Value::dict([("y", Value::Int(7)), ("x", Value::List(vec![Value::Int(1)]))]), elems.clone()),
        r#"argument [0]["x"] ([i8, f64]): expected 2 items, got 1"#
    );
    assert_eq!(
        pack(
            Value::dict([("y", Value::Int(7)), ("x", Value::List(vec![Value::Int(300), Value::Float(0.5)]))]),
            elems.clone()
        ),
        r#"argument [0]["x"][0]: 300 is out of range for i8 in -128..=127"#
    );
    let bad_elems = Value::List(vec![elems.as_sequence().unwrap()[0].clone(), Value::dict([("b", Value::Int(3))])]);
    assert_eq!(pack(good.clone(), bad_elems), r#"argument [1][1] ({b: i64, a: i8}): missing key "a""#);
    let bad_elems = Value::List(vec![Value::dict([("a", Value::Int(1)), ("b", Value::Float(2.5))])]);
    assert_eq!(pack(good.clone(), bad_elems), r#"argument [1][0]["b"]: expected i64, got float 2.5"#);
    // One record on its own: `value` paths.
    let t = rec(r#"["sdict", ["q", ["slist", "i32"]]]"#);
    assert_eq!(
        msg(value_to_vm(&Value::dict([("q", Value::List(vec![Value::None]))]), &t).unwrap_err()),
        r#"value ["q"][0]: expected i32, got None"#
    );
    assert_eq!(
        msg(value_to_vm(&Value::dict([("r", Value::None)]), &t).unwrap_err()),
        r#"value ({q: [i32]}): missing key "q""#
    );
}

#[test]
fn results_unpack_along_the_plans_of_their_records() {
    // Dicts come back in the record's key order, stuples as tuples, also
    // inside typed lists; errors name the path of the part at fault.
    let f = abi(
        r#"{"a": [], "r": [["sdict", ["y", "i32"], ["x", ["stuple", "i8", ["slist", "f64"]]]], ["py_homogeneous_list", ["stuple", "i64", "i1"]]], "v": 1}"#,
    );
    let l = |items: Vec<Variant<'static>>| Variant::list(VmList::from_variants(items));
    let first = || l(vec![Variant::I32(7), l(vec![Variant::I8(-1), l(vec![Variant::F64(0.5)])])]);
    let second = || l(vec![l(vec![Variant::I64(3), Variant::I32(1)]), l(vec![Variant::I64(4), Variant::I32(0)])]);
    let got = f.unpack_results(vec![first(), second()]).unwrap();
    let want = Value::Tuple(vec![
        Value::dict([
            ("y", Value::Int(7)),
            ("x", Value::Tuple(vec![Value::Int(-1), Value::List(vec![Value::Float(0.5)])])),
        ]),
        Value::List(vec![
            Value::Tuple(vec![Value::Int(3), Value::Bool(true)]),
            Value::Tuple(vec![Value::Int(4), Value::Bool(false)]),
        ]),
    ]);
    assert_eq!(got, want);
    let Value::Tuple(parts) = &got else { unreachable!() };
    let Value::Dict(d) = &parts[0] else { unreachable!() };
    assert_eq!(d.keys().map(|k| &**k).collect::<Vec<_>>(), ["y", "x"]);

    let short = l(vec![Variant::I32(7), l(vec![Variant::I8(-1)])]);
    assert_eq!(
        msg(f.unpack_results(vec![short, second()]).unwrap_err()),
        r#"result [0]["x"] ((i8, [f64])): expected 2 items, got 1"#
    );
    let not_list = l(vec![Variant::I32(7), l(vec![Variant::I8(-1), Variant::F64(0.5)])]);
    assert_eq!(
        msg(f.unpack_results(vec![not_list, second()]).unwrap_err()),
        r#"result [0]["x"][1]: expected a list ([f64]), got f64"#
    );
    let bad_elem = l(vec![l(vec![Variant::I64(3), Variant::F32(1.0)])]);
    assert_eq!(msg(f.unpack_results(vec![first(), bad_elem]).unwrap_err()), "result [1][0][1]: expected i1, got f32");
    let short_elem = l(vec![l(vec![Variant::I64(3)])]);
    assert_eq!(
        msg(f.unpack_results(vec![first(), short_elem]).unwrap_err()),
        "result [1][0] ((i64, i1)): expected 2 items, got 1"
    );
    // One record on its own.
    let t = rec(r#"["sdict", ["b", "i8"], ["a", ["stuple"]]]"#);
    let v = value_from_vm(l(vec![Variant::I8(1), l(vec![])]), &t).unwrap();
    assert_eq!(v, Value::dict([("b", Value::Int(1)), ("a", Value::Tuple(vec![]))]));
    assert_eq!(
        msg(value_from_vm(l(vec![Variant::I8(1)]), &t).unwrap_err()),
        "value ({b: i8, a: ()}): expected 2 items, got 1"
    );
}
