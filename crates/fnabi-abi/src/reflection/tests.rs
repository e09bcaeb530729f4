use super::*;

/// The `iree.abi` values stored in the fixture `nested.vmfb`, verbatim.
pub(crate) const FIXTURE_RECORDS: &[&str] = &[
    r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, 4]], ["y", ["ndarray", "f32", 2, 1, 4]]]], "r": [["slist", ["ndarray", "f32", 2, 1, 4], ["ndarray", "f32", 2, 1, 4]]], "v": 1}"#,
    r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, 4]], ["y", ["ndarray", "f32", 2, 1, 4]]]], "r": [["stuple", ["ndarray", "f32", 2, 1, 4], ["ndarray", "f32", 2, 1, 4]]], "v": 1}"#,
    r#"{"a": [["sdict", ["x", ["ndarray", "f32", 1, 4]], ["y", ["ndarray", "f32", 1, 4]]]], "r": [["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], "v": 1}"#,
    r#"{"a": [["sdict", ["a", ["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], ["b", ["sdict", ["c", ["ndarray", "f32", 1, 4]]]]], ["named", "alpha", "f32"]], "r": [["ndarray", "f32", 1, 4], ["sdict", ["s", ["ndarray", "f32", 1, 4]], ["t", ["stuple", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]]]], "v": 1}"#,
    r#"{"a": [["slist", "i8", "i8", "i8", "i8", "i8"]], "r": ["i32", "i64"], "v": 1}"#,
];

#[test]
fn fixture_records_print_back_byte_for_byte() {
    let readable = [
        "({x: f32[1x4], y: f32[1x4]}) -> ([f32[1x4], f32[1x4]])",
        "({x: f32[1x4], y: f32[1x4]}) -> ((f32[1x4], f32[1x4]))",
        "({x: f32[4], y: f32[4]}) -> ([f32[4], f32[4]])",
        "({a: [f32[4], f32[4]], b: {c: f32[4]}}, alpha: f32) -> (f32[4], {s: f32[4], t: (f32[4], f32[4])})",
        "([i8, i8, i8, i8, i8]) -> (i32, i64)",
    ];
    for (json, text) in FIXTURE_RECORDS.iter().zip(readable) {
        let f = FunctionReflection::parse(json).unwrap();
        assert_eq!(f.to_json(), *json);
        assert_eq!(f.to_string(), text);
        assert_eq!(json.parse::<FunctionReflection>().unwrap(), f);
    }
    let f = FunctionReflection::parse(FIXTURE_RECORDS[3]).unwrap();
    assert_eq!(f.arg_names().map(|n| n.map(|k| &**k)).collect::<Vec<_>>(), [None, Some("alpha")]);
    assert_eq!(f.v, Some(1));
}

#[test]
fn every_record_kind() {
    let cases: &[(&str, &str)] = &[
        (r#""i1""#, "i1"),
        (r#""f16""#, "f16"),
        (r#""bf16""#, "bf16"),
        (r#""i128""#, "i128"),
        ("null", "null"),
        (r#""unknown""#, "unknown"),
        (r#"["named", "k", "f64"]"#, "k: f64"),
        (r#"["named", "my key", "f64"]"#, r#""my key": f64"#),
        (r#"["ndarray", "f32", null]"#, "f32[*]"),
        (r#"["ndarray", "f32", 0]"#, "f32[]"),
        (r#"["ndarray", "i32", 3, null, 4, 0]"#, "i32[?x4x0]"),
        (r#"["ndarray", "unknown", 1, 2]"#, "unknown[2]"),
        (r#"["ndarray", ["slist", "i8"], 2, 2, 3]"#, "ndarray<[i8]>[2x3]"),
        (r#"["slist"]"#, "[]"),
        (r#"["stuple"]"#, "()"),
        (r#"["stuple", "i8"]"#, "(i8,)"),
        (r#"["slist", null, "i8"]"#, "[null, i8]"),
        (r#"["sdict"]"#, "{}"),
        (r#"["sdict", ["b", "i8"], ["a", "f32"]]"#, "{b: i8, a: f32}"),
        (r#"["sdict", ["\u00e9\n", "i8"]]"#, r#"{"\u00e9\n": i8}"#),
        (r#"["py_homogeneous_list", ["ndarray", "f32", 1, null]]"#, "list[f32[?]]"),
        (r#"["sdict_kwargs", ["a", "i32"]]"#, "**{a: i32}"),
    ];
    for (json, text) in cases {
        let t = TypeRecord::parse(json).unwrap_or_else(|e| panic!("{json}: {e}"));
        assert_eq!(t.to_string(), *text, "{json}");
        assert_eq!(t.to_json(), *json, "canonical JSON of {json}");
    }
    // Whitespace and escapes are accepted and printed canonically.
    let t = TypeRecord::parse(" [ \"ndarray\" ,\n\"f32\",2,1 , 4 ] ").unwrap();
    assert_eq!(t.to_json(), r#"["ndarray", "f32", 2, 1, 4]"#);
    let t = TypeRecord::parse(r#"["sdict", ["\u0078", "\u0069\u0038"]]"#).unwrap();
    assert_eq!(t.to_json(), r#"["sdict", ["x", "i8"]]"#);
    assert_eq!(TypeRecord::ndarray(Primitive::Float(32), &[1, 4]).to_string(), "f32[1x4]");
    assert_eq!(TypeRecord::primitive("u8"), None);
    // `v` is optional and keys may come in any order.
    let f = FunctionReflection::parse(r#"{"r": ["i32"], "a": []}"#).unwrap();
    assert_eq!(f.v, None);
    assert_eq!(f.to_json(), r#"{"a": [], "r": ["i32"]}"#);
    assert_eq!(f.to_string(), "() -> (i32)");
}

#[test]
fn primitives_and_dtypes() {
    assert_eq!(Primitive::parse("i8"), Some(Primitive::Int(8)));
    for bad in ["i", "i0", "i08", "x8", "f", "i-1", "i16777216", "i99999999999", "bf8", "", "é8"] {
        assert_eq!(Primitive::parse(bad), None, "{bad}");
    }
    assert_eq!(Primitive::parse("i16777215"), Some(Primitive::Int(MAX_BIT_WIDTH)));
    for d in DType::ALL {
        let p = Primitive::from_dtype(d);
        let back = p.dtype().unwrap();
        assert_eq!(back.size(), d.size(), "{d}");
    }
    assert_eq!(Primitive::Int(1).dtype(), Some(DType::Bool));
    assert_eq!(Primitive::Float(80).dtype(), None);
}

fn err(json: &str) -> (usize, String, String) {
    let e = FunctionReflection::parse(json).unwrap_err();
    (e.offset(), e.path().to_owned(), e.kind_message())
}

impl ReflectionError {
    fn kind_message(&self) -> String {
        let full = self.to_string();
        full.split_once(": ").map(|(_, m)| m.to_owned()).unwrap_or(full)
    }
}

#[test]
fn errors_name_the_path_and_what_was_expected() {
    let cases: &[(&str, usize, &str, &str)] = &[
        ("", 0, "", "expected a JSON object {\"a\": [...], \"r\": [...]}, got end of input"),
        ("[]", 0, "", "expected a JSON object {\"a\": [...], \"r\": [...]}, got an array"),
        (r#"{"a": []}"#, 0, "", "expected a key \"r\", got none"),
        (r#"{"r": []}"#, 0, "", "expected a key \"a\", got none"),
        (r#"{"a": [], "r": [], "x": 1}"#, 19, "", "expected a key \"a\", \"r\" or \"v\", got key \"x\""),
        (r#"{"a": [], "a": [], "r": []}"#, 10, "", "\"a\" is given twice"),
        (r#"{"a": [], "r": [], "v": 2}"#, 24, "v", "expected version 1, got 2"),
        (r#"{"a": [], "r": [], "v": 1, "v": 1}"#, 27, "", "\"v\" is given twice"),
        (r#"{"a": [], "r": [], "v": "1"}"#, 24, "v", "expected version 1, got a string \"1\""),
        (r#"{"a": {}, "r": []}"#, 6, "a", "expected an array of type records, got an object"),
        (
            r#"{"a": [1], "r": []}"#,
            7,
            "a[0]",
            "expected a type record (a primitive such as \"f32\", \"unknown\", null, or an array), got number 1",
        ),
        (
            r#"{"a": ["u8"], "r": []}"#,
            7,
            "a[0]",
            "expected a primitive type (i[0-9]+, f[0-9]+, bf16) or \"unknown\", got \"u8\"",
        ),
        (r#"{"a": [[]], "r": []}"#, 8, "a[0][0]", "expected a type identifier (\"ndarray\", \"slist\", …), got `]`"),
        (
            r#"{"a": [["tensor"]], "r": []}"#,
            7,
            "a[0]",
            "expected a type identifier (named, ndarray, slist, stuple, sdict, py_homogeneous_list, sdict_kwargs), got \"tensor\"",
        ),
        (
            r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, "4"]]]], "r": []}"#,
            48,
            "a[0][1][1][4]",
            "expected a dim (an integer >= 0, or null), got a string \"4\"",
        ),
        (
            r#"{"a": [["ndarray", "f32", 2, 1]], "r": []}"#,
            30,
            "a[0]",
            "expected 2 dim(s) for rank 2 (found 1), got `]`",
        ),
        (r#"{"a": [["ndarray", "f32", 1, 1, 4]], "r": []}"#, 32, "a[0][4]", "expected `]` after 1 dim(s), got dim 4"),
        (
            r#"{"a": [["ndarray", "f32", null, 4]], "r": []}"#,
            32,
            "a[0][3]",
            "expected no dims after a null (unknown) rank, got dim 4",
        ),
        (
            r#"{"a": [["ndarray", "f32", -1]], "r": []}"#,
            26,
            "a[0][2]",
            "expected a rank (an integer >= 0, or null), got number -1",
        ),
        (
            r#"{"a": [["ndarray", "f32", 1.5]], "r": []}"#,
            26,
            "a[0][2]",
            "expected a rank (an integer >= 0, or null), got number 1.5",
        ),
        (
            r#"{"a": [["ndarray", "f32", 1, 99999999999999999999]], "r": []}"#,
            29,
            "a[0][3]",
            "expected a dim (an integer >= 0, or null), got number 99999999999999999999",
        ),
        (r#"{"a": [["ndarray", "f32"]], "r": []}"#, 24, "a[0]", "invalid JSON: expected `,` and the rank, got `]`"),
        (r#"{"a": [["ndarray"]], "r": []}"#, 17, "a[0]", "invalid JSON: expected `,` and the element type, got `]`"),
        (r#"{"a": [["sdict", ["x", "i8"], ["x", "f32"]]], "r": []}"#, 31, "a[0][2][0]", "\"x\" is given twice"),
        (r#"{"a": [["sdict", "x"]], "r": []}"#, 17, "a[0][1]", "expected a slot [\"key\", type], got a string \"x\""),
        (r#"{"a": [["sdict", [1, "i8"]]], "r": []}"#, 18, "a[0][1][0]", "expected a slot key (a string), got number 1"),
        (
            r#"{"a": [["sdict", ["x", "i8", 1]]], "r": []}"#,
            27,
            "a[0][1]",
            "invalid JSON: expected `]` closing the slot, got `,`",
        ),
        (
            r#"{"a": [["slist", ["named", "x", "i8"]]], "r": []}"#,
            17,
            "a[0][1]",
            "expected a record (`named` only in the root argument or result list), got a named record",
        ),
        (
            r#"{"a": [["named", "x", ["named", "y", "i8"]]], "r": []}"#,
            22,
            "a[0][2]",
            "expected a record (`named` only in the root argument or result list), got a named record",
        ),
        (r#"{"a": [["named", "x", "i8"], ["named", "x", "i8"]], "r": []}"#, 29, "a[1]", "\"x\" is given twice"),
        (r#"{"a": [["named", 1, "i8"]], "r": []}"#, 17, "a[0][1]", "expected a name (a string), got number 1"),
        (
            r#"{"a": [["named", "x", "i8", 1]], "r": []}"#,
            26,
            "a[0]",
            "invalid JSON: expected `]` after the slot type of `named`, got `,`",
        ),
        (
            r#"{"a": [["sdict_kwargs"], "i8"], "r": []}"#,
            7,
            "a[0]",
            "expected sdict_kwargs only as the last argument, got another argument after it",
        ),
        (
            r#"{"a": [], "r": [["sdict_kwargs"]]}"#,
            16,
            "r[0]",
            "expected a record (`sdict_kwargs` only as the last argument), got an sdict_kwargs record",
        ),
        (
            r#"{"a": [["slist", ["sdict_kwargs"]]], "r": []}"#,
            17,
            "a[0][1]",
            "expected a record (`sdict_kwargs` only as the last argument), got an sdict_kwargs record",
        ),
        (
            r#"{"a": [["py_homogeneous_list"]], "r": []}"#,
            29,
            "a[0]",
            "invalid JSON: expected `,` and the element type, got `]`",
        ),
        (
            r#"{"a": [["py_homogeneous_list", "i8", "i8"]], "r": []}"#,
            35,
            "a[0]",
            "invalid JSON: expected `]` after the element type of `py_homogeneous_list`, got `,`",
        ),
        (
            r#"{"a": [["slist", ]], "r": []}"#,
            17,
            "a[0][1]",
            "expected a type record (a primitive such as \"f32\", \"unknown\", null, or an array), got `]`",
        ),
        (r#"{"a": [["slist" "i8"]], "r": []}"#, 16, "a[0]", "invalid JSON: expected `,` or `]`, got a string \"i8\""),
        (r#"{"a": [], "r": []} x"#, 19, "", "invalid JSON: unexpected `x` after the end"),
        (r#"{"a": [], "r": [] "#, 18, "", "invalid JSON: expected `,` or `}`, got end of input"),
        (r#"{"a" [], "r": []}"#, 5, "", "invalid JSON: expected `:`, got an array"),
        (r#"{"a": [nul], "r": []}"#, 7, "a[0]", "invalid JSON: invalid literal (expected `null`)"),
        (r#"{"a": ["i8\x"], "r": []}"#, 10, "a[0]", "invalid JSON: invalid escape in string"),
        (
            r#"{"a": [["slist", tru]], "r": []}"#,
            17,
            "a[0][1]",
            "expected a type record (a primitive such as \"f32\", \"unknown\", null, or an array), got `t`",
        ),
        (
            r#"{"a": [["slist", true]], "r": []}"#,
            17,
            "a[0][1]",
            "expected a type record (a primitive such as \"f32\", \"unknown\", null, or an array), got true",
        ),
        ("{\"a\": [\"\u{1}\"], \"r\": []}", 8, "a[0]", "invalid JSON: control character in string (must be escaped)"),
        (
            "{\"a\": [é], \"r\": []}",
            7,
            "a[0]",
            "expected a type record (a primitive such as \"f32\", \"unknown\", null, or an array), got 'é'",
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(json, off, path, msg)| err(json) != (*off, path.to_string(), msg.to_string()))
        .map(|(json, ..)| format!("{json}\n    got {:?}", err(json)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let e = FunctionReflection::parse(r#"{"a": [1], "r": []}"#).unwrap_err();
    assert!(matches!(e.kind(), ReflectionErrorKind::Expected { .. }));
    assert_eq!(
        e.to_string(),
        "iree.abi at byte 7 (a[0]): expected a type record (a primitive such as \"f32\", \"unknown\", null, or an array), got number 1"
    );
    let e = FunctionReflection::parse("x").unwrap_err();
    assert_eq!(e.to_string(), "iree.abi at byte 0: expected a JSON object {\"a\": [...], \"r\": [...]}, got `x`");
}

#[test]
fn depth_is_bounded() {
    let ok = format!("{}\"i8\"{}", "[\"slist\", ".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
    assert!(TypeRecord::parse(&ok).is_ok());
    let deep = format!("{}\"i8\"{}", "[\"slist\", ".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    let e = TypeRecord::parse(&deep).unwrap_err();
    assert_eq!(e.kind(), &ReflectionErrorKind::TooDeep);
    assert_eq!(e.offset(), 10 * MAX_DEPTH);
    assert!(e.to_string().ends_with("records nest deeper than 128 levels"), "{e}");
    // A huge nesting does not overflow the stack either.
    let huge = "[\"slist\", ".repeat(100_000);
    assert!(TypeRecord::parse(&huge).is_err());
}

#[test]
fn lone_record_errors() {
    let e = TypeRecord::parse("\"i8\" \"i8\"").unwrap_err();
    assert_eq!(e.to_string(), "iree.abi at byte 5: invalid JSON: unexpected a string \"i8\" after the end");
    assert!("[\"named\", \"x\", \"i8\"]".parse::<TypeRecord>().is_ok());
    assert_eq!(TypeRecord::parse("[\"slist\", \"i8\"]").unwrap().kind(), "slist");
    assert!(TypeRecord::SDict(vec![]).is_structure());
    assert!(!TypeRecord::PyHomogeneousList(Box::new(TypeRecord::Unknown)).is_structure());
}
