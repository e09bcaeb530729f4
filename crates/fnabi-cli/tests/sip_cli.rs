//! `fnabi demangle` on SIP signatures and `fnabi flatten`, end to end.

mod common;

const SIG: &str = "I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R12!S9!k0_0k1_1";

fn run(args: &[&str], stdin: &str) -> (bool, String, String) {
    common::fnabi(args, stdin)
}

#[test]
fn demangle_sip() {
    assert_eq!(
        run(&["demangle", SIG], ""),
        (true, "([{\"bar\": $1, \"foo\": $0}, $2]) -> [$0, $1]\n".into(), String::new())
    );
    let (ok, out, _) = run(&["demangle", "--reference", SIG], "");
    assert!(ok);
    assert_eq!(
        out,
        "inputs:\n:[\n  0:{\n    bar=raw(1),\n    foo=raw(0),\n  },\n  1=raw(2),\n],\nresults:\n:[\n  0=raw(0),\n  1=raw(1),\n],\n"
    );
    let (ok, out, _) = run(&["demangle", "--json", "I12!S9!k0_0k1_1R3!_0"], "");
    assert!(ok);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["kind"], "sip");
    assert_eq!(j["inputs_reference"], ":[\n  0=raw(0),\n  1=raw(1),\n],\n");
    assert_eq!(j["results_reference"], "=raw(0),\n");
    assert_eq!(j["inputs"], serde_json::json!([{"raw": 0, "path": [0]}, {"raw": 1, "path": [1]}]));
    assert_eq!(j["results"], serde_json::json!([{"raw": 0, "path": []}]));
}

#[test]
fn demangle_detects_kinds() {
    let (ok, out, _) = run(&["demangle", "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64"], "");
    assert!(ok);
    assert_eq!(out, "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)\n");
    let (ok, _, err) = run(&["demangle", "I1!R1!"], "");
    assert!(!ok);
    assert_eq!(
        err,
        "fnabi: error: ambiguous signature \"I1!R1!\": it reads as raw \"() -> ()\" and as SIP \"() -> None\"; pass --raw or --sip\n"
    );
    assert_eq!(run(&["demangle", "--sip", "I1!R1!"], "").1, "() -> None\n");
    assert_eq!(run(&["demangle", "--raw", "I1!R1!"], "").1, "() -> ()\n");
    let (ok, _, err) = run(&["demangle", "--sip", "I3!k0R1!"], "");
    assert!(!ok);
    assert_eq!(err, "fnabi: error: invalid SIP signature \"I3!k0R1!\" at byte 3: key `k` outside a sequence or dict\n");
    let (ok, _, err) = run(&["demangle", "I3!k0R1!"], "");
    assert!(!ok && err.contains("not raw (at byte 3") && err.contains("not SIP (at byte 3: key `k`"), "{err}");
    // A long one is quoted by its start and length; the offsets say where.
    let long = format!("I100000!{}", "B3!d4".repeat(20_000));
    for args in [vec!["demangle", long.as_str()], vec!["demangle", "--sip", long.as_str()]] {
        let (ok, _, err) = run(&args, "");
        let start = format!("\"{}…\" [100008 bytes]", &long[..80]);
        assert!(!ok && err.contains(&start) && err.contains("at byte 100007") && err.len() < 400, "{err:.400}");
    }
    // Batch mode mixes kinds, one line each.
    let (ok, out, _) = run(&["demangle", "-"], "I3!_0R1!\nI4!B1!R1!\nI1!R1!\n");
    assert!(!ok);
    assert_eq!(out.lines().collect::<Vec<_>>()[..2], ["($0) -> None", "(Buffer<float32[]>) -> ()"]);
    assert!(out.lines().nth(2).unwrap().starts_with("error: ambiguous"));
}

#[test]
fn flatten_prints_leaves_in_raw_order() {
    let input = r#"[{"foo": {"dtype": "f32", "shape": [2], "data": [1, 2]}, "bar": 3}, null]"#;
    let (ok, out, _) = run(&["flatten", "--sip", SIG, "--input", "-"], input);
    assert!(ok);
    assert_eq!(
        out,
        "$0 [0][\"foo\"] = {\"dtype\":\"f32\",\"shape\":[2],\"data\":[1.0,2.0]}\n$1 [0][\"bar\"] = 3\n$2 [1] = null\n"
    );
    let (ok, out, _) = run(&["flatten", "--json", "--sip", SIG, "--input", "-"], input);
    assert!(ok);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j[1], serde_json::json!({"raw": 1, "path": [0, "bar"], "value": 3}));
    let (ok, out, _) = run(&["flatten", "--results", "--sip", "I1!R3!_0", "--input", "-"], "{\"x\": [1]}");
    assert!(ok);
    assert_eq!(out, "$0 = {\"x\":[1]}\n");
}

#[test]
fn flatten_errors_are_one_line() {
    let (ok, _, err) = run(&["flatten", "--sip", SIG, "--input", "-"], r#"[{"foo": 1}, 2]"#);
    assert!(!ok);
    assert_eq!(err, "fnabi: error: missing key \"bar\" at [0]\n");
    let (_, _, err) = run(&["flatten", "--sip", SIG, "--input", "-"], "[1,");
    assert!(err.starts_with("fnabi: error: -: JSON: EOF while parsing"), "{err}");
    let (_, _, err) = run(&["flatten", "--sip", "I3!", "--input", "-"], "1");
    assert_eq!(
        err,
        "fnabi: error: invalid SIP signature \"I3!\" at byte 0: span declares 3 byte(s) but only 1 remain\n"
    );
    let (_, _, err) = run(&["flatten", "--sip", SIG, "--input", "/nonexistent.json"], "");
    assert!(err.starts_with("fnabi: error: cannot read /nonexistent.json:"), "{err}");
}
