//! `fnabi run` on real IREE modules (the fixtures compiled by IREE 3.13),
//! in-process through the IREE runtime: text, JSON and structured inputs,
//! both devices, one-line errors raised before the runtime is entered.
#![cfg(feature = "iree")]

mod common;

use common::fnabi;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fnabi/tests/fixtures/iree").join(name)
}

fn run(module: &str, args: &[&str], stdin: &str) -> (bool, String, String) {
    let m = fixture(module);
    let mut all = vec!["run", m.to_str().unwrap()];
    all.extend_from_slice(args);
    fnabi(&all, stdin)
}

#[test]
fn text_inputs_on_both_devices() {
    for device in ["local-sync", "local-task"] {
        let (ok, out, err) =
            run("add.vmfb", &["-f", "add", "-i", "4xf32=1 2 3 4", "-i", "4xf32=10 20 30 40", "--device", device], "");
        assert!(ok, "{device}: {err}");
        assert_eq!(out, "4xf32=11 22 33 44\n");
    }
    assert_eq!(run("add.vmfb", &["-f", "add_i32", "-i", "2", "-i", "40"], "").1, "42\n");
    assert_eq!(run("add.vmfb", &["-f", "scale", "-i", "4xf32=1 2 3 4", "-i", "2.5"], "").1, "4xf32=2.5 5 7.5 10\n");
    assert_eq!(run("dynamic.vmfb", &["-f", "dyn_dim", "-i", "5x4xf32=0"], "").1, "5\n");
    assert_eq!(
        run("async.vmfb", &["-f", "add_async", "-i", "4xf32=1 2 3 4", "-i", "4xf32=1"], "").1,
        "4xf32=2 3 4 5\n"
    );
    let (_, out, _) =
        run("multi_result.vmfb", &["-f", "sum_and_product", "-i", "4xf32=1 2 3 4", "-i", "4xf32=10 20 30 40"], "");
    assert_eq!(out, "[0]: 4xf32=11 22 33 44\n[1]: 4xf32=10 40 90 160\n[2]: 42\n");
}

#[test]
fn structured_json_inputs() {
    let nested = r#"[{"a": [{"dtype":"f32","shape":[4],"data":[1,2,3,4]}, {"dtype":"f32","shape":[4],"data":[10,20,30,40]}],
                     "b": {"c": {"dtype":"f32","shape":[4],"data":[2,2,2,2]}}}, 3.0]"#;
    let (ok, out, err) = run("nested.vmfb", &["-f", "nested_deep", "--inputs", "-"], nested);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "[0]: 4xf32=15 28 41 54\n[1][\"s\"]: 4xf32=11 22 33 44\n[1][\"t\"][0]: 4xf32=2 4 6 8\n[1][\"t\"][1]: 4xf32=20 40 60 80\n"
    );
    // Dict values travel in the record's key order whatever the JSON order.
    let d8: Vec<String> =
        (0..8).rev().map(|k| format!(r#""k{k}": {{"dtype":"f32","shape":[4],"data":[{k},{k},{k},{k}]}}"#)).collect();
    let (ok, out, _) = run("nested.vmfb", &["-f", "dict8", "--inputs", "-"], &format!("[{{{}}}]", d8.join(", ")));
    assert!(ok);
    assert_eq!(out, "4xf32=28 28 28 28\n");
    assert_eq!(run("nested.vmfb", &["-f", "bytes_sum", "--inputs", "-"], "[[1, 2, 3, 4, -6]]").1, "[0]: 4\n[1]: 5\n");
    assert_eq!(run("nested.vmfb", &["-f", "str_len", "--inputs", "-"], r#"["hello"]"#).1, "[0]: 5\n[1]: 104\n");
    let (ok, out, _) = run("add.vmfb", &["-f", "scale", "-i", "4xf32=1 2 3 4", "-i", "2.5", "--output", "json"], "");
    assert!(ok);
    assert_eq!(out, "{\"dtype\":\"f32\",\"shape\":[4],\"data\":[2.5,5.0,7.5,10.0]}\n");
}

#[test]
fn errors_before_the_runtime_are_one_line() {
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "add.vmfb",
            &["-f", "add", "-i", "4xi32=1", "-i", "4xf32=1"],
            "fnabi: error: argument [0] (f32[4]): element type: expected f32, got i32\n",
        ),
        ("add.vmfb", &["-i", "1"], ""),
        ("add.vmfb", &["-f", "nope"], ""),
        ("nested.vmfb", &["-f", "bytes_sum", "--inputs", "-"], ""),
    ];
    for (module, args, want) in cases {
        let stdin = if module == "nested.vmfb" { "[[1, 2, 3, 4, 250]]" } else { "" };
        let (ok, out, err) = run(module, args, stdin);
        assert!(!ok && out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("fnabi: error: "), "{err}");
        if !want.is_empty() {
            assert_eq!(err, want);
        }
    }
    let (_, _, err) = run("add.vmfb", &["-i", "1"], "");
    assert!(err.contains("exports 4 functions (add, add_one, scale, add_i32): choose one with --function"), "{err}");
    let (_, _, err) = run("nested.vmfb", &["-f", "bytes_sum", "--inputs", "-"], "[[1, 2, 3, 4, 250]]");
    assert!(err.contains("argument [0][4]: 250 is out of range for i8 in -128..=127"), "{err}");
}

#[test]
fn iree_run_module_habits() {
    // The module from stdin, flags with `=`.
    let bytes = std::fs::read(fixture("add.vmfb")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fnabi"))
        .args(["run", "--module=-", "--function=add", "--input=4xf32=1 2 3 4", "--input=4xf32=10"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &bytes).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "4xf32=11 12 13 14\n");
    // Plain nested lists typed by the records (nested_deep's dict of a list
    // and a dict), alpha by keyword.
    let json =
        r#"{"$args": [{"a": [[1, 2, 3, 4], [10, 20, 30, 40]], "b": {"c": [2, 2, 2, 2]}}], "$kwargs": {"alpha": 3.0}}"#;
    let (ok, out, err) = run("nested.vmfb", &["-f", "nested_deep", "--inputs", "-"], json);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "[0]: 4xf32=15 28 41 54\n[1][\"s\"]: 4xf32=11 22 33 44\n[1][\"t\"][0]: 4xf32=2 4 6 8\n[1][\"t\"][1]: 4xf32=20 40 60 80\n"
    );
}

#[test]
fn sync_twins_are_preferred_and_runtime_failures_are_one_line() {
    // checked_sqrt and checked_sqrt$async: without --function, the sync one
    // (sqrt(6.25) = 2.5; a bare number for its 0-d tensor argument).
    let (ok, out, err) = run("sync_async.vmfb", &["--input=6.25"], "");
    assert!(ok, "{err}");
    assert_eq!(out, "f32=2.5\n");
    // Asked for, the async twin (which takes the fences as arguments too).
    let (ok, _, err) = run("sync_async.vmfb", &["--function=checked_sqrt$async", "--input=f32=6.25"], "");
    assert!(!ok);
    assert_eq!(err, "fnabi: error: missing positional argument 1\n");
    // A failure inside the runtime (cf.assert): one line, exit status 1, as
    // IREE's own runtime reports it (see the fixtures' README).
    for verbose in [false, true] {
        let mut args = vec!["--input=-1"];
        if verbose {
            args.push("--verbose");
        }
        let (ok, out, err) = run("sync_async.vmfb", &args, "");
        assert!(!ok && out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            err,
            "fnabi: error: IREE runtime (calling module.checked_sqrt): <vm>:0: FAILED_PRECONDITION; checked_sqrt: the input must not be negative;\n"
        );
    }
}
