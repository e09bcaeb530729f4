use super::*;

/// Three arrays in one file, written by numpy (`np.save` three times):
/// `arange(6).reshape(2, 3) / 4` as f32, `[-1, 7]` as i64, `[[True, False]]`.
const STREAM: &[u8] = include_bytes!("../../../../fuzz/seeds/npy/stream3.npy");
/// `np.arange(6).reshape(2, 3)`-like f32 data written by numpy 2.
const F32_C: &[u8] = include_bytes!("../../../../fuzz/seeds/npy/f32_c.npy");

fn files() -> MemoryFiles {
    let mut f = MemoryFiles::new();
    f.insert("s.npy", STREAM);
    f.insert("c.npy", F32_C);
    // 0.5, 1.0, …, 3.0 as f32 bytes, then 1, 2 as i32.
    let mut raw: Vec<u8> = (1..=6).flat_map(|i| (i as f32 * 0.5).to_ne_bytes()).collect();
    raw.extend([1i32, 2].iter().flat_map(|i| i.to_ne_bytes()));
    f.insert("r.bin", raw);
    f
}

fn read(specs: &[&str]) -> Result<Vec<String>, String> {
    let fs = files();
    let values = read_inputs(specs, &fs).map_err(|e| e.to_string())?;
    Ok(values
        .iter()
        .map(|v| match v {
            Value::Array(a) => a.to_string(),
            other => format!("{other:?}"),
        })
        .collect())
}

#[test]
fn npy_streams_read_one_array_after_the_other() {
    let first = "2x3xf32=[0 0.25 0.5][0.75 1 1.25]";
    assert_eq!(read(&["@s.npy"]).unwrap(), [first]);
    // `+` continues where the previous input from the file ended; `@` starts over.
    assert_eq!(
        read(&["@s.npy", "+s.npy", "+s.npy", "@s.npy"]).unwrap(),
        [first, "2xi64=-1 7", "1x2xi1=[01 00]", first]
    );
    // `*` reads all the following arrays, one argument each.
    assert_eq!(read(&["*s.npy"]).unwrap(), [first, "2xi64=-1 7", "1x2xi1=[01 00]"]);
    assert_eq!(read(&["@s.npy", "*s.npy"]).unwrap(), [first, "2xi64=-1 7", "1x2xi1=[01 00]"]);
    // `+` on a file not read before is its first array; `*` of an exhausted file nothing.
    assert_eq!(read(&["+s.npy", "*s.npy", "*s.npy"]).unwrap().len(), 3);
    assert_eq!(
        read(&["*s.npy", "+s.npy"]).unwrap_err(),
        "--input 1 (+s.npy): no array is left in the file (it has 426 bytes)"
    );
    assert_eq!(read(&["@c.npy"]).unwrap(), ["2x3xf32=[0 1 2][3 4 5]"]);
}

#[test]
fn raw_inputs_continue_by_byte_offset() {
    assert_eq!(
        read(&["2xf32=@r.bin", "2x2xf32=+r.bin", "2xi32=+r.bin"]).unwrap(),
        ["2xf32=0.5 1", "2x2xf32=[1.5 2][2.5 3]", "2xi32=1 2"]
    );
    assert_eq!(
        read(&["2xf32=@r.bin", "8xf32=+r.bin"]).unwrap_err(),
        "--input 1 (8xf32=+r.bin): needs 32 bytes from byte 8, but the file has 32 bytes"
    );
    assert_eq!(read(&["2xq7=@r.bin"]).unwrap_err(), "--input 0 (2xq7=@r.bin): unknown element type \"q7\"");
    assert_eq!(read(&["?xf32=@r.bin"]).unwrap_err(), "--input 0 (?xf32=@r.bin): \"?\" is not a dimension");
    assert_eq!(
        read(&["99999999999x99999999999xf32=@r.bin"]).unwrap_err(),
        "--input 0 (99999999999x99999999999xf32=@r.bin): the shape is too large"
    );
    // A missing file: the I/O error without the path (the input names it).
    assert_eq!(read(&["2xf32=@nope.bin"]).unwrap_err(), "--input 0 (2xf32=@nope.bin): no such file");
    assert_eq!(read(&["@nope.npy"]).unwrap_err(), "--input 0 (@nope.npy): nope.npy: no such file");
}

#[test]
fn text_null_and_refused_forms() {
    assert_eq!(
        read(&["(null)", " (null) ", "4xi8=1 2 3 4", "2.5"]).unwrap(),
        ["None", "None", "4xi8=1 2 3 4", "Float(2.5)"]
    );
    let e = read(&["1", "&4xf32"]).unwrap_err();
    assert!(e.starts_with("--input 1 (&4xf32): output storage buffers"), "{e}");
    let fs = files();
    let e = read_inputs(&["2xf32=1 2 3"], &fs).unwrap_err();
    assert!(matches!(e, InputError::Text { index: 0, .. }), "{e:?}");
    assert!(e.to_string().starts_with("--input 0 \"2xf32=1 2 3\" at byte "), "{e}");
    // A long input is quoted by its start and length; the offset says where.
    let long = format!("2xf32={}1 2{}", "[".repeat(30_000), "]".repeat(30_000));
    let e = read_inputs(&[long.as_str()], &fs).unwrap_err().to_string();
    let quoted = format!("--input 0 \"2xf32={}…\" [60009 bytes] at byte 6: brackets", "[".repeat(74));
    assert!(e.starts_with(&quoted), "{e}");
    assert!(e.len() < 300, "{e}");
    let tab = format!("2xf32=\t{}", "[".repeat(100));
    let e = read_inputs(&[tab.as_str()], &fs).unwrap_err().to_string();
    assert!(e.starts_with(&format!("--input 0 \"2xf32=\\t{}…\" [107 bytes]", "[".repeat(73))), "{e}");
    let raw = format!("4xf32=@{}.bin", "w".repeat(200));
    let e = read_inputs(&[raw.as_str()], &fs).unwrap_err().to_string();
    assert_eq!(e, format!("--input 0 (4xf32=@{}… [211 bytes]): no such file", "w".repeat(73)));
    // A file form without its file name.
    for (spec, want) in [
        ("@", "--input 0 (@): the file name is missing (@FILE.npy)"),
        ("*", "--input 0 (*): the file name is missing (*FILE.npy)"),
        ("2xf32=@", "--input 0 (2xf32=@): the file name is missing (2xf32=@FILE)"),
        ("2xf32=+ ", "--input 0 (2xf32=+ ): the file name is missing (2xf32=+FILE)"),
    ] {
        assert_eq!(read_inputs(&[spec], &fs).unwrap_err().to_string(), want);
    }
}

#[test]
fn json_arguments_resolve_files_and_split_args() {
    let fs = files();
    let json = br#"{"$args": ["@c.npy", [1, "@@x"]], "$kwargs": {"y": {"z": "@c.npy"}}}"#;
    let (args, kwargs) = arguments_from_json(json, "a.json", &fs).unwrap();
    assert_eq!(args[0].as_array().unwrap().to_string(), "2x3xf32=[0 1 2][3 4 5]");
    assert_eq!(args[1], Value::List(vec![Value::Int(1), Value::Str("@x".into())]));
    let Some(Value::Dict(y)) = kwargs.get("y") else { panic!("{kwargs:?}") };
    assert_eq!(y.get("z").unwrap().as_array().unwrap().to_string(), "2x3xf32=[0 1 2][3 4 5]");
    // A list is the positional arguments, an object the keywords, else one argument.
    assert_eq!(arguments_from_json(b"[1, 2]", "a", &fs).unwrap().0.len(), 2);
    assert_eq!(arguments_from_json(br#"{"x": 1}"#, "a", &fs).unwrap().1.len(), 1);
    assert_eq!(arguments_from_json(b"3", "a", &fs).unwrap().0, [Value::Int(3)]);
    // `$args` alone.
    assert_eq!(arguments_from_json(br#"{"$args": [1]}"#, "a", &fs).unwrap().0, [Value::Int(1)]);
    let err = |json: &[u8]| arguments_from_json(json, "a.json", &fs).unwrap_err().to_string();
    assert_eq!(err(br#"{"$kwargs": []}"#), "a.json: $kwargs takes an object, got list");
    assert_eq!(err(br#"[{"k": ["@nope.npy"]}]"#), "a.json: at [0][\"k\"][0]: nope.npy: no such file");
    assert_eq!(err(br#""@r.bin""#), "a.json: at byte 0: npy: not a .npy file (no \\x93NUMPY magic)");
    // A file of several arrays is no `"@FILE"` (that is `--input`'s `*FILE`).
    assert_eq!(
        err(br#"{"$kwargs": {"y": "@s.npy"}}"#),
        "a.json: at [\"$kwargs\"][\"y\"]: at byte 128: npy: the data is 298 byte(s) but the header announces 24"
    );
    assert!(err(b"[1,").starts_with("a.json: JSON: "), "{}", err(b"[1,"));
    let e = read_arguments(Path::new("none.json"), &fs).unwrap_err();
    assert_eq!(e.to_string(), "cannot read none.json: no such file");
}

#[test]
fn host_files_and_closures_are_file_systems() {
    let dir = crate::scratch::Scratch::new("inputs");
    let p = dir.join("s.npy");
    std::fs::write(&p, STREAM).unwrap();
    let spec = format!("+{}", p.display());
    let v = read_inputs(&[spec.as_str(), spec.as_str()], &HostFiles).unwrap();
    assert_eq!(v[1].as_array().unwrap().to_string(), "2xi64=-1 7");
    let missing = format!("4xf32=@{}", dir.join("none").display());
    let e = read_inputs(&[missing.as_str()], &HostFiles).unwrap_err().to_string();
    assert!(e.ends_with("): No such file or directory (os error 2)"), "{e}");
    drop(dir);
    // A closure: every path is the same stream.
    let fs = |_: &Path| ByteBuffer::copy_from_slice(STREAM);
    assert_eq!(read_inputs(&["*a", "@b"], &fs).unwrap().len(), 4);
}

/// A JSON text of call arguments, shaped to reach both paths: nested
/// lists of numbers (sometimes ragged, empty, or with a bool, a string,
/// a float where an int is due, a number out of range), `@FILE` strings,
/// dicts, the call form, tagged forms.
fn call_json() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let number = prop_oneof![
        8 => (-300i64..300).prop_map(|i| i.to_string()),
        4 => (-1000.0f64..1000.0).prop_map(|x| format!("{x:?}")),
        1 => Just("true".to_string()),
        1 => Just("1e39".to_string()),
        1 => Just("9223372036854775808".to_string()),
        1 => Just("\"@c.npy\"".to_string()),
        1 => Just("null".to_string()),
    ];
    let nested = number.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            // Regular: n copies of one shape.
            (1usize..4, inner.clone()).prop_map(|(n, x)| format!("[{}]", vec![x; n].join(", "))),
            // Anything.
            proptest::collection::vec(inner, 0..4).prop_map(|xs| format!("[{}]", xs.join(", "))),
        ]
    });
    let arg = prop_oneof![
        6 => nested,
        1 => Just(r#"{"dtype": "i32", "shape": [2], "data": [1, 2]}"#.to_string()),
        1 => Just(r#"{"$tuple": [[1, 2], [3, 4]]}"#.to_string()),
        1 => Just(r#"{"k": [1.5]}"#.to_string()),
    ];
    (proptest::collection::vec(arg, 0..4), 0u8..4).prop_map(|(args, form)| match form {
        0 | 1 => format!("[{}]", args.join(", ")),
        2 => {
            let kw: Vec<String> = args.iter().enumerate().map(|(i, a)| format!("\"p{i}\": {a}")).collect();
            format!("{{{}}}", kw.join(", "))
        }
        _ => {
            let kw: Vec<String> = args.iter().enumerate().skip(1).map(|(i, a)| format!("\"p{i}\": {a}")).collect();
            let first: Vec<String> = args.first().cloned().into_iter().collect();
            format!("{{\"$args\": [{}], \"$kwargs\": {{{}}}}}", first.join(", "), kw.join(", "))
        }
    })
}

fn params_strategy() -> impl proptest::strategy::Strategy<Value = Vec<crate::coerce::InputParam>> {
    use crate::coerce::{InputParam, InputType};
    use fnabi_abi::scalar::DType;
    use proptest::prelude::*;
    let dtype = proptest::sample::select(vec![
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I8,
        DType::U8,
        DType::I32,
        DType::I64,
        DType::U64,
        DType::Bool,
        DType::C64,
        DType::F8E4M3FN,
    ]);
    let ty = prop_oneof![
        4 => (dtype, proptest::option::of(0usize..4))
            .prop_map(|(dtype, rank)| InputType::Array { dtype, dims: rank.map(|r| vec![None; r]) }),
        1 => Just(InputType::Any),
    ];
    proptest::collection::vec(ty, 0..4).prop_map(|tys| {
        tys.into_iter().enumerate().map(|(i, ty)| InputParam { name: Some(format!("p{i}").into()), ty }).collect()
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]
    /// The typed fast path gives exactly what the general path gives, or
    /// gives up (and then the general path decides).
    #[test]
    fn typed_json_arguments_equal_the_general_path(text in call_json(), params in params_strategy()) {
        let fs = files();
        let general = arguments_from_json(text.as_bytes(), "call.json", &fs)
            .map_err(|e| e.to_string())
            .and_then(|(a, k)| crate::coerce::coerce_arguments(a, k, &params).map_err(|e| e.to_string()));
        if let Some((args, kwargs)) = typed_arguments_from_json(text.as_bytes(), &fs, &params) {
            let (ga, gk) = general.expect("the general path reads what the typed path reads");
            proptest::prop_assert_eq!(args, ga);
            proptest::prop_assert_eq!(kwargs, gk);
        }
    }
}

/// The fast path takes the common cases (so the property above is not
/// vacuous): positional, keyword and call forms, every rank, and leaves
/// everything else to the general path.
#[test]
fn typed_json_arguments_take_nested_numbers() {
    use crate::coerce::{InputParam, InputType};
    use fnabi_abi::scalar::DType;
    let p = |name: &str, dtype, rank: Option<usize>| InputParam {
        name: Some(name.into()),
        ty: InputType::Array { dtype, dims: rank.map(|r| vec![None; r]) },
    };
    let params = [p("a", DType::F32, Some(2)), p("b", DType::I8, None), p("c", DType::Bool, Some(1))];
    let fs = files();
    let show = |v: &Value<'_>| v.as_array().map_or_else(|| format!("{v:?}"), |a| a.to_string());
    let typed = |t: &str| {
        typed_arguments_from_json(t.as_bytes(), &fs, &params).map(|(a, k)| {
            (
                a.iter().map(show).collect::<Vec<_>>(),
                k.iter().map(|(k, v)| format!("{k}={}", show(v))).collect::<Vec<_>>(),
            )
        })
    };
    assert_eq!(
        typed("[[[1, 2.5]], [[[-3]]], [true, 0]]").unwrap().0,
        ["1x2xf32=[1 2.5]", "1x1x1xi8=[[-3]]", "2xi1=01 00"]
    );
    assert_eq!(typed(r#"{"b": [1, 2], "a": [[0]]}"#).unwrap().1, ["b=2xi8=1 2", "a=1x1xf32=[0]"]);
    let (args, kwargs) = typed(r#"{"$args": [[[1]]], "$kwargs": {"c": [1]}}"#).unwrap();
    assert_eq!((args, kwargs), (vec!["1x1xf32=[1]".to_string()], vec!["c=1xi1=01".to_string()]));
    // Beside arrays, any value and `@FILE` strings as the general path reads them.
    assert_eq!(typed(r#"[[[1]], "@c.npy", [1], "s"]"#).unwrap().0[1], "2x3xf32=[0 1 2][3 4 5]");
    for general in
        ["[[[1], [2, 3]]]", "[[]]", "[[[1]], [300]]", "[[[1]], [1.5]]", "3", r#"{"$tuple": [[[1]]]}"#, "[[[1]]"]
    {
        assert_eq!(typed(general), None, "{general}");
    }
}
