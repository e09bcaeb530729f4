//! The real IREE 3.13 modules of `tests/fixtures/iree/`: every export,
//! calling convention and reflection string exactly as the fixture README
//! lists them (and as IREE's own runtime reports them), the packing facts
//! of real calls, and robustness of the reader against truncated and
//! corrupted files.

use fnabi::conventions::{AbiMode, FunctionAbi};
use fnabi::reflection::{FunctionReflection, InvocationModel};
use fnabi::vm::{BufferView, CallingConvention, Variant, VmList};
use fnabi::vmfb::{Container, Module, VmfbErrorKind};
use fnabi::{Array, Value};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/fixtures/iree/{name}.vmfb", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

const DECL: &str = "iree.abi.declaration";

/// (export, cconv, attrs) of each module, in file order.
type Expect = &'static [(&'static str, &'static str, &'static [(&'static str, &'static str)])];

/// (export, cconv, attrs) as read.
type ExportFacts<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>);

const ADD: Expect = &[
    (
        "add",
        "0rr_r",
        &[(DECL, "sync func @add(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>)")],
    ),
    ("add_one", "0r_r", &[(DECL, "sync func @add_one(%input0: tensor<4xf32>) -> (%output0: tensor<4xf32>)")]),
    (
        "scale",
        "0rf_r",
        &[(DECL, "sync func @scale(%input0: tensor<4xf32>, %input1: f32) -> (%output0: tensor<4xf32>)")],
    ),
    ("add_i32", "0ii_i", &[(DECL, "sync func @add_i32(%input0: i32, %input1: i32) -> (%output0: i32)")]),
    ("__init", "0v_v", &[]),
];

const MULTI_RESULT: Expect = &[
    (
        "sum_and_product",
        "0rr_rrI",
        &[(
            DECL,
            "sync func @sum_and_product(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>, %output1: tensor<4xf32>, %output2: i64)",
        )],
    ),
    (
        "mixed",
        "0rr_rr",
        &[(
            DECL,
            "sync func @mixed(%input0: tensor<2x3xi32>, %input1: tensor<3xf64>) -> (%output0: tensor<3x2xi32>, %output1: tensor<3xf64>)",
        )],
    ),
    ("__init", "0v_v", &[]),
];

const DYNAMIC: Expect = &[
    (
        "dyn_add",
        "0rr_r",
        &[(
            DECL,
            "sync func @dyn_add(%input0: tensor<?x4xf32>, %input1: tensor<?x4xf32>) -> (%output0: tensor<?x4xf32>)",
        )],
    ),
    ("dyn_dim", "0r_I", &[(DECL, "sync func @dyn_dim(%input0: tensor<?x4xf32>) -> (%output0: index)")]),
    ("__init", "0v_v", &[]),
];

const ASYNC: Expect = &[
    (
        "add_async",
        "0rrrr_r",
        &[
            (
                DECL,
                "async func @add_async(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>)",
            ),
            ("iree.abi.model", "coarse-fences"),
        ],
    ),
    ("__init", "0v_v", &[]),
];

const NESTED: Expect = &[
    (
        "dict_in_list_out",
        "0r_r",
        &[
            (
                "iree.abi",
                r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, 4]], ["y", ["ndarray", "f32", 2, 1, 4]]]], "r": [["slist", ["ndarray", "f32", 2, 1, 4], ["ndarray", "f32", 2, 1, 4]]], "v": 1}"#,
            ),
            (DECL, "sync func @dict_in_list_out(%input0: !util.list<?>) -> (%output0: !util.list<?>)"),
        ],
    ),
    (
        "dict_in_tuple_out",
        "0r_rr",
        &[
            (
                "iree.abi",
                r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, 4]], ["y", ["ndarray", "f32", 2, 1, 4]]]], "r": [["stuple", ["ndarray", "f32", 2, 1, 4], ["ndarray", "f32", 2, 1, 4]]], "v": 1}"#,
            ),
            (
                DECL,
                "sync func @dict_in_tuple_out(%input0: !util.list<?>) -> (%output0: tensor<1x4xf32>, %output1: tensor<1x4xf32>)",
            ),
        ],
    ),
    (
        "brief_example",
        "0r_rr",
        &[
            (
                "iree.abi",
                r#"{"a": [["sdict", ["x", ["ndarray", "f32", 1, 4]], ["y", ["ndarray", "f32", 1, 4]]]], "r": [["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], "v": 1}"#,
            ),
            (
                DECL,
                "sync func @brief_example(%input0: !util.list<?>) -> (%output0: tensor<4xf32>, %output1: tensor<4xf32>)",
            ),
        ],
    ),
    (
        "nested_deep",
        "0rf_rr",
        &[
            ("custom.key", "custom value"),
            (
                "iree.abi",
                r#"{"a": [["sdict", ["a", ["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], ["b", ["sdict", ["c", ["ndarray", "f32", 1, 4]]]]], ["named", "alpha", "f32"]], "r": [["ndarray", "f32", 1, 4], ["sdict", ["s", ["ndarray", "f32", 1, 4]], ["t", ["stuple", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]]]], "v": 1}"#,
            ),
            (
                DECL,
                "sync func @nested_deep(%input0: !util.list<?>, %input1: f32) -> (%output0: tensor<4xf32>, %output1: !util.list<?>)",
            ),
        ],
    ),
    (
        "dict8",
        "0r_r",
        &[
            (
                "iree.abi",
                r#"{"a": [["sdict", ["k0", ["ndarray", "f32", 1, 4]], ["k1", ["ndarray", "f32", 1, 4]], ["k2", ["ndarray", "f32", 1, 4]], ["k3", ["ndarray", "f32", 1, 4]], ["k4", ["ndarray", "f32", 1, 4]], ["k5", ["ndarray", "f32", 1, 4]], ["k6", ["ndarray", "f32", 1, 4]], ["k7", ["ndarray", "f32", 1, 4]]]], "r": [["ndarray", "f32", 1, 4]], "v": 1}"#,
            ),
            (DECL, "sync func @dict8(%input0: !util.list<?>) -> (%output0: tensor<4xf32>)"),
        ],
    ),
    (
        "bytes_sum",
        "0r_iI",
        &[
            ("iree.abi", r#"{"a": [["slist", "i8", "i8", "i8", "i8", "i8"]], "r": ["i32", "i64"], "v": 1}"#),
            (DECL, "sync func @bytes_sum(%input0: !util.list<?>) -> (%output0: i32, %output1: i64)"),
        ],
    ),
    ("str_len", "0r_Ii", &[(DECL, "sync func @str_len(%input0: !util.list<i8>) -> (%output0: index, %output1: i32)")]),
    ("__init", "0v_v", &[]),
];

const MODULES: &[(&str, Expect, usize)] = &[
    ("add", ADD, 19),
    ("multi_result", MULTI_RESULT, 18),
    ("dynamic", DYNAMIC, 19),
    ("async", ASYNC, 17),
    ("nested", NESTED, 19),
];

#[test]
fn every_export_cconv_and_attribute_exactly() {
    for (name, expect, n_imports) in MODULES {
        let bytes = fixture(name);
        let m = Module::parse(&bytes).unwrap();
        assert_eq!(m.name, "module", "{name}");
        assert_eq!(m.version, 0);
        assert_eq!(m.container, Container::Zip { entry: "module.fb" });
        assert_eq!(m.flatbuffer_offset, 68);
        assert_eq!(m.imports.len(), *n_imports, "{name}");
        assert_eq!(m.dependencies.len(), 1);
        assert_eq!((m.dependencies[0].name, m.dependencies[0].minimum_version), ("hal", 7));
        assert!(!m.dependencies[0].is_optional());
        assert!(m.types.contains(&"!hal.buffer_view"));
        let got: Vec<ExportFacts<'_>> = m
            .exports
            .iter()
            .map(|e| (e.name, e.signature.calling_convention.unwrap(), e.signature.attrs.clone()))
            .collect();
        let want: Vec<ExportFacts<'_>> = expect.iter().map(|(n, c, a)| (*n, *c, a.to_vec())).collect();
        assert_eq!(got, want, "{name}");
        for e in &m.exports {
            // Every cconv, reflection record and declaration parses and prints back exactly.
            let cc = e.signature.cconv().unwrap().unwrap();
            assert_eq!(cc.to_string(), e.signature.calling_convention.unwrap());
            if let Some(r) = e.signature.reflection() {
                assert_eq!(r.unwrap().to_json(), e.signature.attr("iree.abi").unwrap());
            }
            if let Some(d) = e.signature.declaration() {
                assert_eq!(d.unwrap().to_string(), e.signature.attr(DECL).unwrap());
            }
            // And the argument count of the convention agrees with the cconv.
            let abi = FunctionAbi::from_signature(&e.signature).unwrap();
            if let Some(ps) = abi.params() {
                assert_eq!(ps.len() + abi.model().fence_args(), cc.args().len(), "{name}.{}", e.name);
            }
        }
        for i in &m.imports {
            assert!(!i.is_optional());
            let s = i.signature.as_ref().unwrap();
            assert_eq!(s.cconv().unwrap().unwrap().to_string(), s.calling_convention.unwrap(), "{}", i.full_name);
        }
    }
}

#[test]
fn import_signatures_include_variadic_segments() {
    let bytes = fixture("add");
    let m = Module::parse(&bytes).unwrap();
    let create = m.imports.iter().find(|i| i.full_name == "hal.buffer_view.create").unwrap();
    assert_eq!(create.signature.as_ref().unwrap().calling_convention, Some("0rIIiiCID_r"));
    let cc: CallingConvention = "0rIIiiCID_r".parse().unwrap();
    assert!(cc.has_variadic_args());
}

fn f32s(shape: &[usize], data: &[f32]) -> Array<'static> {
    Array::from_vec(shape, data.to_vec()).unwrap()
}

fn bv(a: Array<'static>) -> Variant<'static> {
    Variant::buffer_view(BufferView::new(a).unwrap())
}

fn abi_of(module: &str, export: &str) -> FunctionAbi {
    let bytes = fixture(module);
    let m = Module::parse(&bytes).unwrap();
    FunctionAbi::from_signature(&m.export(export).unwrap().signature).unwrap()
}

const NO_KW: [(&str, Value<'static>); 0] = [];

#[test]
fn dict_in_tuple_out_packs_x_then_y_and_returns_a_tuple() {
    let f = abi_of("nested", "dict_in_tuple_out");
    assert_eq!(f.mode(), AbiMode::Reflection);
    let x = f32s(&[1, 4], &[1.0, 2.0, 3.0, 4.0]);
    let y = f32s(&[1, 4], &[10.0, 20.0, 30.0, 40.0]);
    let args =
        f.bind(vec![Value::dict([("y", Value::from(y.clone())), ("x", Value::from(x.clone()))])], NO_KW).unwrap();
    let packed = f.pack_args(&args).unwrap();
    let inner = packed.items()[0].as_list().unwrap();
    let got: Vec<&Array<'_>> = inner.items().iter().map(|v| v.as_buffer_view().unwrap().array()).collect();
    assert_eq!(got, [&x, &y], "[[x, y]]");
    // What IREE's runtime returned: (f32[1,4] [[11,22,33,44]], f32[1,4] [[10,40,90,160]]).
    let s = f32s(&[1, 4], &[11.0, 22.0, 33.0, 44.0]);
    let p = f32s(&[1, 4], &[10.0, 40.0, 90.0, 160.0]);
    let out = f.unpack_results(vec![bv(s.clone()), bv(p.clone())]).unwrap();
    assert_eq!(out, Value::Tuple(vec![Value::from(s), Value::from(p)]));
    // The missing-key call of reproduce.py is an error here too, with the path.
    let e = f.pack_args(&[Value::dict([("x", Value::from(x))])]).unwrap_err();
    assert_eq!(e.to_string(), r#"argument [0] ({x: f32[1x4], y: f32[1x4]}): missing key "y""#);
}

#[test]
fn dict_in_list_out_decodes_its_one_list() {
    let f = abi_of("nested", "dict_in_list_out");
    let s = f32s(&[1, 4], &[11.0, 22.0, 33.0, 44.0]);
    let p = f32s(&[1, 4], &[10.0, 40.0, 90.0, 160.0]);
    let list = Variant::list(VmList::from_variants(vec![bv(s.clone()), bv(p.clone())]));
    assert_eq!(f.unpack_results(vec![list]).unwrap(), Value::List(vec![Value::from(s), Value::from(p)]));
}

#[test]
fn nested_deep_and_dict8_pack_like_the_runtime_expects() {
    let f = abi_of("nested", "nested_deep");
    let a = f32s(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let b = f32s(&[4], &[10.0, 20.0, 30.0, 40.0]);
    let c = f32s(&[4], &[2.0; 4]);
    let arg0 = Value::dict([
        ("a", Value::List(vec![Value::from(a.clone()), Value::from(b.clone())])),
        ("b", Value::dict([("c", Value::from(c))])),
    ]);
    for bound in [
        f.bind(vec![arg0.clone()], [("alpha", Value::Float(3.0))]).unwrap(),
        f.bind(vec![arg0.clone(), Value::Float(3.0)], NO_KW).unwrap(),
    ] {
        // The layout of the eerie-sys call in notes/iree-runtime-from-rust.md:
        // [[[a, b], [c]], 3.0f32].
        let p = f.pack_args(&bound).unwrap();
        assert_eq!(p.to_string(), "list<?>[list<?>[list<?>[bv f32[4], bv f32[4]], list<?>[bv f32[4]]], f32 3.0]");
    }
    // -> (f32[4] [15,28,41,54], {'s': [11,22,33,44], 't': ([2,4,6,8], [20,40,60,80])})
    let r0 = f32s(&[4], &[15.0, 28.0, 41.0, 54.0]);
    let s = f32s(&[4], &[11.0, 22.0, 33.0, 44.0]);
    let t0 = f32s(&[4], &[2.0, 4.0, 6.0, 8.0]);
    let t1 = f32s(&[4], &[20.0, 40.0, 60.0, 80.0]);
    let tl = Variant::list(VmList::from_variants(vec![bv(t0.clone()), bv(t1.clone())]));
    let dl = Variant::list(VmList::from_variants(vec![bv(s.clone()), tl]));
    let out = f.unpack_results(vec![bv(r0.clone()), dl]).unwrap();
    assert_eq!(
        out,
        Value::Tuple(vec![
            Value::from(r0),
            Value::dict([("s", Value::from(s)), ("t", Value::Tuple(vec![Value::from(t0), Value::from(t1)]))])
        ])
    );

    let f = abi_of("nested", "dict8");
    let arg = Value::dict((0..8).rev().map(|i| (format!("k{i}"), Value::from(f32s(&[4], &[i as f32; 4])))));
    let args = [arg];
    let p = f.pack_args(&args).unwrap();
    let inner = p.items()[0].as_list().unwrap();
    let firsts: Vec<f32> =
        inner.items().iter().map(|v| v.as_buffer_view().unwrap().array().get::<f32>(&[0]).unwrap()).collect();
    assert_eq!(firsts, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], "k0..k7 in record order");
}

#[test]
fn scalars_and_strings_follow_the_declaration() {
    let f = abi_of("nested", "bytes_sum");
    let ok = [Value::List([1, 2, 3, 4, -6].map(Value::Int).to_vec())];
    assert_eq!(f.pack_args(&ok).unwrap().to_string(), "list<?>[list<?>[i8 1, i8 2, i8 3, i8 4, i8 -6]]");
    let bad = [Value::List([1, 2, 3, 4, 250].map(Value::Int).to_vec())];
    assert_eq!(f.pack_args(&bad).unwrap_err().to_string(), "argument [0][4]: 250 is out of range for i8 in -128..=127");
    assert_eq!(
        f.unpack_results(vec![Variant::I32(4), Variant::I64(5)]).unwrap(),
        Value::Tuple(vec![Value::Int(4), Value::Int(5)])
    );

    let f = abi_of("nested", "str_len");
    assert_eq!(f.mode(), AbiMode::Declaration);
    let hi = [Value::from("hi")];
    let p = f.pack_args(&hi).unwrap();
    assert_eq!(p.to_string(), "list<?>[list<i8>[i8 104, i8 105]]");
    assert_eq!(
        f.unpack_results(vec![Variant::I64(2), Variant::I32(104)]).unwrap(),
        Value::Tuple(vec![Value::Int(2), Value::Int(104)])
    );

    let f = abi_of("add", "add_i32");
    assert_eq!(f.pack_args(&[Value::Int(2), Value::Int(40)]).unwrap().to_string(), "list<?>[i32 2, i32 40]");
    assert_eq!(f.unpack_results(vec![Variant::I32(42)]).unwrap(), Value::Int(42));
    let f = abi_of("add", "scale");
    let a = [Value::from(f32s(&[4], &[1.0, 2.0, 3.0, 4.0])), Value::Float(2.5)];
    assert_eq!(f.pack_args(&a).unwrap().to_string(), "list<?>[bv f32[4], f32 2.5]");
    let f = abi_of("add", "add");
    let mixed = [Value::from(f32s(&[4], &[0.0; 4])), Value::from(Array::from_vec(&[4], vec![1i32; 4]).unwrap())];
    assert_eq!(
        f.pack_args(&mixed).unwrap_err().to_string(),
        "argument [1] (f32[4]): element type: expected f32, got i32"
    );
    let f = abi_of("multi_result", "sum_and_product");
    let out = f.unpack_results(vec![bv(f32s(&[4], &[0.0; 4])), bv(f32s(&[4], &[0.0; 4])), Variant::I64(42)]).unwrap();
    assert_eq!(out.as_sequence().unwrap()[2], Value::Int(42));
    let f = abi_of("dynamic", "dyn_dim");
    assert!(f.pack_args(&[Value::from(Array::zeros(fnabi::DType::F32, &[5, 4]).unwrap())]).is_ok());
    assert_eq!(
        f.pack_args(&[Value::from(Array::zeros(fnabi::DType::F32, &[5, 3]).unwrap())]).unwrap_err().to_string(),
        "argument [0] (f32[?x4]): dim 1: expected 4, got 3"
    );
    assert_eq!(f.unpack_results(vec![Variant::I64(5)]).unwrap(), Value::Int(5));
}

#[test]
fn async_exports_leave_room_for_two_fences() {
    let f = abi_of("async", "add_async");
    assert_eq!(f.model(), InvocationModel::CoarseFences);
    let a = Value::from(f32s(&[4], &[1.0; 4]));
    let two = [a.clone(), a.clone()];
    let p = f.pack_args(&two).unwrap();
    assert_eq!(p.len(), 2, "the runtime appends the wait and signal fences");
    assert_eq!(f.pack_args(&[a]).unwrap_err().to_string(), "wrong number of arguments: expected 2, got 1");
}

#[test]
fn records_reduce_to_structures() {
    let bytes = fixture("nested");
    let m = Module::parse(&bytes).unwrap();
    let r: FunctionReflection = m.export("brief_example").unwrap().signature.reflection().unwrap().unwrap();
    assert_eq!(r.to_string(), "({x: f32[4], y: f32[4]}) -> ([f32[4], f32[4]])");
    let s = r.arg_structure().unwrap();
    let leaves: Vec<String> = s.structure.leaves().map(|(p, i)| format!("{p}={i}")).collect();
    assert_eq!(leaves, [r#"[0]["x"]=0"#, r#"[0]["y"]=1"#]);
}

#[test]
fn truncated_files_are_errors_never_panics() {
    for (name, ..) in MODULES {
        let bytes = fixture(name);
        let fb_end = 68 + Module::parse(&bytes).unwrap().flatbuffer_len;
        // Every cut fails: inside the module FlatBuffer its reader says so,
        // after it (in the executables) the ZIP check does. Unverified, cuts
        // after the FlatBuffer leave the module readable.
        for n in (0..bytes.len()).step_by(if *name == "add" { 1 } else { 7 }) {
            let r = Module::parse(&bytes[..n]);
            assert!(r.is_err(), "{name} cut at {n}");
            let e = r.unwrap_err();
            assert!(e.offset() <= n, "{name} cut at {n}: {e}");
            assert_eq!(Module::parse_unverified(&bytes[..n]).is_ok(), n >= fb_end, "{name} cut at {n}");
        }
    }
    let bytes = fixture("add");
    let e = Module::parse(&bytes[..20]).unwrap_err();
    assert_eq!(e.to_string(), "vmfb at byte 0: the ZIP local file header is cut short (30 bytes needed, 20 available)");
    let e = Module::parse(&bytes[..66]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "vmfb at byte 64: the module FlatBuffer size prefix is cut short (4 bytes needed, 2 available)"
    );
    assert_eq!(Module::parse(b"").unwrap_err().kind(), &VmfbErrorKind::NotAModule);
}

/// Issue 18, defects 5 and 6: a `.vmfb` cut inside its executables, or with
/// one bit flipped where IREE's bytecode verifier does not look (this one
/// crashed IREE's runtime with SIGSEGV), is an error naming the entry.
#[test]
fn truncated_and_bit_flipped_zips_are_caught_by_their_sizes_and_crc32() {
    let bytes = fixture("add");
    let e = Module::parse(&bytes[..9408]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "vmfb at byte 9408: malformed ZIP: expected an end-of-central-directory record at the end of the file (is it truncated?)"
    );
    let mut b = bytes.clone();
    b[6108] ^= 0x80;
    let e = Module::parse(&b).unwrap_err();
    assert_eq!(
        e.kind(),
        &VmfbErrorKind::ChecksumMismatch {
            entry: "module.fb".into(),
            recorded: 0x447855b9,
            computed: e_crc(&b[64..64 + 7292])
        }
    );
    assert!(Module::parse_unverified(&b).is_ok(), "the FlatBuffer reader alone does not see this flip");
    // A flip in the executable (the second entry).
    let mut b = bytes.clone();
    b[9000] ^= 1;
    assert!(e_is_crc(&Module::parse(&b).unwrap_err()), "{}", Module::parse(&b).unwrap_err());
    // Every single-bit flip of every entry's data is caught.
    let entries = fnabi::vmfb::zip::verify(&bytes).unwrap();
    assert_eq!((entries[0].data_offset, entries[0].size, entries[1].size), (64, 7292, 4800));
    let spans = entries.iter().flat_map(|e| e.data_offset..e.data_offset + e.size);
    for i in spans.step_by(7) {
        let mut b = bytes.clone();
        b[i] ^= 1 << (i % 8);
        assert!(Module::parse(&b).is_err(), "flip at {i}");
    }
    // Every fixture verifies.
    for (name, ..) in MODULES {
        let bytes = fixture(name);
        let entries = fnabi::vmfb::zip::verify(&bytes).unwrap();
        assert_eq!(entries[0].name, "module.fb", "{name}");
        assert_eq!(entries.len(), 2, "{name}");
    }
}

/// Found by the `vmfb_run` fuzz target: a bit flipped in a central directory
/// entry's compression method (or its encryption flag) made the CRC-32
/// check skip that entry, so flips of the FlatBuffer reached IREE's runtime
/// (SIGSEGV in its embedded ELF loader). Every entry of a `.vmfb` is stored.
#[test]
fn compressed_or_encrypted_entries_are_refused_so_the_crc32_always_applies() {
    let bytes = fixture("add");
    // The central directory's entries (IREE writes ZIP64, whose end record
    // holds no offset): each entry's flags are at its byte 8, its method at 10.
    let entries: Vec<usize> = (0..bytes.len() - 4).filter(|&i| &bytes[i..i + 4] == b"PK\x01\x02").collect();
    assert_eq!(entries.len(), 2);
    // With a byte of that entry's data flipped too: the FlatBuffer, the executable.
    for (entry, data) in entries.into_iter().zip([3451, 9000]) {
        for (field, bit, why) in
            [(10, 12, "a compressed entry"), (10, 3, "a compressed entry"), (8, 0, "an encrypted entry")]
        {
            let mut b = bytes.clone();
            b[entry + field + bit / 8] ^= 1 << (bit % 8);
            b[data] ^= 0x0b;
            let e = Module::parse(&b).unwrap_err();
            assert_eq!(e.kind(), &VmfbErrorKind::UnsupportedZip(why), "{e}");
            assert_eq!(e.offset(), entry + field);
        }
    }
}

fn e_crc(data: &[u8]) -> u32 {
    // zlib's CRC-32, computed bit by bit (independent of the table-driven one).
    let mut c = !0u32;
    for &x in data {
        c ^= u32::from(x);
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
    }
    !c
}

fn e_is_crc(e: &fnabi::vmfb::VmfbError) -> bool {
    matches!(e.kind(), VmfbErrorKind::ChecksumMismatch { .. })
}

#[test]
fn flipped_bytes_are_errors_or_values_never_panics() {
    let bytes = fixture("add");
    let len = Module::parse(&bytes).unwrap().flatbuffer_len;
    let mut ok = 0;
    let mut err = 0;
    for i in 0..68 + len {
        for x in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= x;
            match Module::parse(&b) {
                Ok(m) => {
                    ok += 1;
                    // Whatever parsed is consistent.
                    for e in &m.exports {
                        let _ = e.signature.cconv();
                        let _ = FunctionAbi::from_signature(&e.signature);
                    }
                }
                Err(e) => {
                    err += 1;
                    assert!(e.offset() <= b.len());
                    assert!(!e.to_string().is_empty());
                }
            }
        }
    }
    assert!(ok > 0 && err > 0, "{ok} {err}");
}

#[test]
fn container_errors() {
    let bytes = fixture("add");
    let mut compressed = bytes.clone();
    compressed[8] = 8;
    assert_eq!(
        Module::parse(&compressed).unwrap_err().to_string(),
        "vmfb at byte 8: unsupported ZIP: the first entry is compressed"
    );
    let mut encrypted = bytes.clone();
    encrypted[6] = 1;
    assert_eq!(
        Module::parse(&encrypted).unwrap_err().to_string(),
        "vmfb at byte 6: unsupported ZIP: the first entry is encrypted"
    );
    let mut ident = bytes.clone();
    ident[72..76].copy_from_slice(b"NOPE");
    assert_eq!(
        Module::parse(&ident).unwrap_err().to_string(),
        "vmfb at byte 72: FlatBuffer identifier is \"NOPE\", expected \"IREE\""
    );
    // The bare form: the size-prefixed FlatBuffer alone.
    let len = Module::parse(&bytes).unwrap().flatbuffer_len;
    let bare = &bytes[64..68 + len];
    let m = Module::parse(bare).unwrap();
    assert_eq!(m.container, Container::Bare);
    assert_eq!(m.flatbuffer_offset, 4);
    assert_eq!(m.exports.len(), 5);
    assert!(fnabi::vmfb::looks_like_vmfb(bare) && fnabi::vmfb::looks_like_vmfb(&bytes));
    assert!(!fnabi::vmfb::looks_like_vmfb(b"\x7fELF...."));
    // An ordinal past the signatures: rewrite export 0's ordinal field.
    let m = Module::parse(&bytes).unwrap();
    assert_eq!(m.exports[0].internal_ordinal, 1);
    let pos =
        bytes.windows(4).enumerate().filter(|(_, w)| *w == 1u32.to_le_bytes()).map(|(i, _)| i).collect::<Vec<_>>();
    let hit = pos.iter().find_map(|&p| {
        let mut b = bytes.clone();
        b[p..p + 4].copy_from_slice(&1000u32.to_le_bytes());
        match Module::parse(&b) {
            Err(e) if matches!(e.kind(), VmfbErrorKind::BadOrdinal { .. }) => Some(e.to_string()),
            _ => None,
        }
    });
    let msg = hit.unwrap();
    assert!(msg.contains("export \"add\" has internal ordinal 1000 but there are "), "{msg}");
}

/// `unpack_one_result` (the runtime's one output, with no list around it)
/// gives what `unpack_results` of a one-element list gives, errors included,
/// in every mode and for every kind of declared result.
#[test]
fn one_result_unpacks_as_a_list_of_one() {
    let a = f32s(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let list = Variant::list(VmList::from_variants(vec![bv(a.clone()), bv(a.clone())]));
    let abis = [
        ("dynamic", FunctionAbi::dynamic()),
        ("add_one", abi_of("add", "add_one")),
        ("add_i32", abi_of("add", "add_i32")),
        ("dict_in_list_out", abi_of("nested", "dict_in_list_out")),
        ("dict_in_tuple_out", abi_of("nested", "dict_in_tuple_out")),
        ("sum_and_product", abi_of("multi_result", "sum_and_product")),
        ("dyn_dim", abi_of("dynamic", "dyn_dim")),
        (
            "i8 result",
            FunctionAbi::from_reflection(&FunctionReflection::parse(r#"{"a": [], "r": ["i8"], "v": 1}"#).unwrap()),
        ),
        (
            "no results",
            FunctionAbi::from_reflection(&FunctionReflection::parse(r#"{"a": [], "r": [], "v": 1}"#).unwrap()),
        ),
    ];
    let values =
        [bv(a.clone()), list, Variant::I32(7), Variant::I64(-3), Variant::F32(0.5), Variant::None, Variant::I8(-128)];
    let mut outcomes = [0usize; 2];
    for (name, abi) in &abis {
        for x in &values {
            let one = abi.unpack_one_result(x.clone());
            let listed = abi.unpack_results(vec![x.clone()]);
            match (&one, &listed) {
                (Ok(o), Ok(l)) => assert_eq!(o, l, "{name}, {x}"),
                (Err(o), Err(l)) => assert_eq!(o.to_string(), l.to_string(), "{name}, {x}"),
                _ => panic!("{name}, {x}: {one:?} against {listed:?}"),
            }
            outcomes[usize::from(one.is_ok())] += 1;
        }
    }
    // Both outcomes are exercised.
    assert!(outcomes[0] > 5 && outcomes[1] > 5, "{outcomes:?}");
}
