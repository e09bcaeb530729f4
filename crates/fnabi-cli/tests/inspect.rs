//! `fnabi inspect` on the fixture modules: exact text, JSON, and the
//! one-line errors for broken and not-yet-supported files.

mod common;

use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fnabi/tests/fixtures/iree").join(name)
}

fn run(args: &[&std::ffi::OsStr]) -> (bool, String, String) {
    common::fnabi(args, "")
}

/// Writes `bytes` to the file `name` in `dir`; returns its path.
fn tmp(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn text_report_of_async() {
    let path = fixture("async.vmfb");
    let (ok, out, err) = run(&["inspect".as_ref(), path.as_os_str()]);
    assert!(ok, "{err}");
    let body: Vec<&str> = out.lines().skip(1).take(6).collect();
    assert_eq!(
        body,
        [
            "exports (2):",
            "  add_async  0rrrr_r",
            "    declaration: async func @add_async(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>)",
            "    iree.abi.model = coarse-fences",
            "  __init  0v_v",
            "imports (17):",
        ]
    );
    assert!(out.lines().next().unwrap().ends_with(
        "async.vmfb: IREE module \"module\" version 0 (bytecode 17.0, 4860 bytes of FlatBuffer at byte 68, ZIP entry \"module.fb\")"
    ));
    assert!(out.ends_with("dependencies (1):\n  hal >= 7\n"));
}

#[test]
fn text_report_decodes_iree_abi() {
    let path = fixture("nested.vmfb");
    let (ok, out, _) = run(&["inspect".as_ref(), path.as_os_str()]);
    assert!(ok);
    let deep: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("  nested_deep")).take(4).collect();
    assert_eq!(
        deep,
        [
            "  nested_deep  0rf_rr",
            "    iree.abi: ({a: [f32[4], f32[4]], b: {c: f32[4]}}, alpha: f32) -> (f32[4], {s: f32[4], t: (f32[4], f32[4])})",
            "    declaration: sync func @nested_deep(%input0: !util.list<?>, %input1: f32) -> (%output0: tensor<4xf32>, %output1: !util.list<?>)",
            "    custom.key = custom value",
        ]
    );
}

#[test]
fn json_report() {
    let path = fixture("nested.vmfb");
    let (ok, out, _) = run(&["inspect".as_ref(), "--json".as_ref(), path.as_os_str()]);
    assert!(ok);
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["kind"], "vmfb");
    assert_eq!(j["module"]["name"], "module");
    assert_eq!(j["module"]["container"], "zip");
    assert_eq!(j["module"]["flatbuffer_len"], 14460);
    let exports = j["exports"].as_array().unwrap();
    assert_eq!(exports.len(), 8);
    let bytes_sum = &exports[5];
    assert_eq!(bytes_sum["name"], "bytes_sum");
    assert_eq!(bytes_sum["cconv"], "0r_iI");
    assert_eq!(bytes_sum["iree_abi"]["readable"], "([i8, i8, i8, i8, i8]) -> (i32, i64)");
    assert_eq!(
        bytes_sum["iree_abi"]["raw"],
        r#"{"a": [["slist", "i8", "i8", "i8", "i8", "i8"]], "r": ["i32", "i64"], "v": 1}"#
    );
    assert_eq!(exports[3]["attrs"]["custom.key"], "custom value");
    assert_eq!(exports[6]["iree_abi"], serde_json::Value::Null);
    assert_eq!(
        exports[6]["declaration"]["raw"],
        "sync func @str_len(%input0: !util.list<i8>) -> (%output0: index, %output1: i32)"
    );
    assert_eq!(j["imports"][1]["cconv"], "0rIIiiCID_r");
    assert_eq!(j["dependencies"][0]["minimum_version"], 7);
}

#[test]
fn errors_are_one_line() {
    let bytes = std::fs::read(fixture("add.vmfb")).unwrap();
    let dir = common::Scratch::new("inspect-test");
    let cut = tmp(&dir, "cut.vmfb", &bytes[..100]);
    let (ok, out, err) = run(&["inspect".as_ref(), cut.as_os_str()]);
    assert!(!ok && out.is_empty());
    assert!(
        err.ends_with(
            "cut.vmfb: vmfb at byte 64: the module FlatBuffer is cut short (7296 bytes needed, 36 available)\n"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    let mlir = tmp(&dir, "vec.mlir", b"func.func @f(%a: vector<4xf32>)\n");
    let (ok, out, err) = run(&["inspect".as_ref(), mlir.as_os_str()]);
    assert!(ok, "{err}");
    // A declaration with vectors cannot be called (no body for fnabi's wrapper): listed with why.
    assert!(
        out.ends_with(
            "vec.mlir: MLIR source, 0 function(s) defined, 0 external declaration(s)\n  not callable @f: line 1:18: \
             vector<…> arguments and results are passed for public functions with a body only (fnabi calls them \
             through a wrapper it adds to the module)\n"
        ),
        "{out}"
    );
    let so = tmp(&dir, "lib.bin", b"\x7fELF\x02\x01\x01");
    let (ok, _, err) = run(&["inspect".as_ref(), so.as_os_str()]);
    assert!(!ok);
    assert!(
        err.ends_with("lib.bin: at byte 7: expected more bytes (the file ends inside a header or table)\n"),
        "{err}"
    );
    let txt = tmp(&dir, "notes.txt", b"hello");
    let (ok, _, err) = run(&["inspect".as_ref(), txt.as_os_str()]);
    assert!(!ok);
    assert!(err.contains("cannot tell what kind of file this is"), "{err}");
    let missing = fixture("missing.vmfb");
    let (ok, _, err) = run(&["inspect".as_ref(), missing.as_os_str()]);
    assert!(!ok);
    assert!(err.starts_with("fnabi: error: cannot read ") && err.contains("missing.vmfb"), "{err}");
    // A broken iree.abi value is reported in place; the rest of the report stands.
    let mut patched = std::fs::read(fixture("nested.vmfb")).unwrap();
    let needle = br#"["slist", "i8""#;
    let at = patched.windows(needle.len()).position(|w| w == needle).unwrap();
    patched[at + 2..at + 7].copy_from_slice(b"sxxxx");
    // Re-sign the entry (its CRC-32 in the local header and the central
    // directory), as a tool that writes such a module would.
    let orig = std::fs::read(fixture("nested.vmfb")).unwrap();
    let e = &fnabi::vmfb::zip::verify(&orig).unwrap()[0];
    let crc = fnabi::vmfb::zip::crc32(&patched[e.data_offset..e.data_offset + e.size]);
    let old = e.crc32.to_le_bytes();
    let hits: Vec<usize> = patched.windows(4).enumerate().filter(|(_, w)| *w == old).map(|(i, _)| i).collect();
    assert_eq!(hits.len(), 2, "the CRC-32 in the local header and the central directory");
    for i in hits {
        patched[i..i + 4].copy_from_slice(&crc.to_le_bytes());
    }
    let p = tmp(&dir, "patched.vmfb", &patched);
    let (ok, out, _) = run(&["inspect".as_ref(), p.as_os_str()]);
    assert!(ok);
    assert!(
        out.contains(r#"    iree.abi: invalid (iree.abi at byte 7 (a[0]): expected a type identifier (named, ndarray, slist, stuple, sdict, py_homogeneous_list, sdict_kwargs), got "sxxxx"): {"a": [["sxxxx", "i8""#),
        "{out}"
    );
}
