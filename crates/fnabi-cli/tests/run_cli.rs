//! `fnabi run` and `fnabi inspect` on MLIR code, end to end through the
//! binary: the MLP example, text/JSON/.npy outputs, `@file.npy` inputs, a
//! library without its source, and one-line errors.

mod common;

use std::path::{Path, PathBuf};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

fn fnabi(args: &[&str]) -> (bool, String, String) {
    common::fnabi(args, "")
}

fn tmpdir(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("run-cli-{name}"))
}

const MLP: &str = "examples/mlp.mlir";
const STRUCTURED: &str = "crates/fnabi/tests/mlir/structured.mlir";

#[test]
fn runs_the_mlp_example() {
    let (m, i) = (repo(MLP), repo("examples/mlp_inputs.json"));
    let (ok, out, err) = fnabi(&["run", m.to_str().unwrap(), "--function", "mlp", "--inputs", i.to_str().unwrap()]);
    assert!(ok, "{err}");
    // Shortest decimals that read back to the f32 results (the README's line).
    assert_eq!(out, "2x3xf32=[-0.35000002 -0.88125 0][-0.42812502 -1.021875 -0.203125]\n");
    // The same values as computed by hand (x @ w1 + b1, relu, @ w2 + b2), to
    // the rounding of f32 arithmetic.
    let want = [-0.35f32, -0.88125, 0.0, -0.428125, -1.021875, -0.203125];
    let Ok(fnabi::Value::Array(got)) = fnabi::text::parse_value(out.trim()) else { panic!("{out}") };
    for (g, w) in got.to_vec::<f32>().unwrap().iter().zip(want) {
        assert!((g - w).abs() <= 1e-6, "{g} vs {w}");
    }
    // The one function is found without --function; JSON output.
    let (ok, out, _) = fnabi(&["run", m.to_str().unwrap(), "--inputs", i.to_str().unwrap(), "--output", "json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["shape"], serde_json::json!([2, 3]));
    assert_eq!(v["dtype"], "f32");
}

#[test]
fn structured_results_print_their_paths() {
    let s = repo(STRUCTURED);
    let (ok, out, err) = fnabi(&["run", s.to_str().unwrap(), "-f", "stats", "-i", "4xf32=1 5 -2 3"]);
    assert!(ok, "{err}");
    assert_eq!(out, "[\"max\"]: 5\n[\"sum\"]: 7\n");
    // Positional arguments of a dict root bind in key order: scale, x.
    let (ok, out, _) = fnabi(&["run", s.to_str().unwrap(), "-f", "scale_kw", "-i", "2.5", "-i", "3xf32=[1 2 3]"]);
    assert!(ok);
    assert_eq!(out, "3xf32=2.5 5 7.5\n");
}

#[test]
fn npy_inputs_and_outputs() {
    let dir = tmpdir("npy");
    let x = fnabi::Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let xin = dir.join("x.npy");
    fnabi::npy::save(&xin, &x).unwrap();
    let s = repo(STRUCTURED);
    let at = format!("@{}", xin.display());
    let out_dir = dir.join("out");
    let (ok, out, err) =
        fnabi(&["run", s.to_str().unwrap(), "-f", "split_into", "-i", &at, "--npy-dir", out_dir.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(out, "[0]: 4xf32=2 4 6 8\n[1]: 2xf32=3 4\n");
    let r0 = fnabi::npy::read_file(out_dir.join("0.npy")).unwrap();
    let r1 = fnabi::npy::read_file(out_dir.join("1.npy")).unwrap();
    assert_eq!(r0.to_vec::<f32>().unwrap(), [2.0, 4.0, 6.0, 8.0]);
    assert_eq!(r1.to_vec::<f32>().unwrap(), [3.0, 4.0]);
    assert!(err.contains("wrote") && err.contains("0.npy"), "{err}");
    // A file where the folder should be: refused before the call runs.
    let (ok, out, err) =
        fnabi(&["run", s.to_str().unwrap(), "-f", "split_into", "-i", &at, "--npy-dir", xin.to_str().unwrap()]);
    assert!(!ok && out.is_empty(), "{out}");
    assert_eq!(err, format!("fnabi: error: --npy-dir {}: not a folder\n", xin.display()));
    // Memory-mapped: the same results, from `-i` and from `--inputs`
    // (an array in the file's own byte order, a big-endian one copied).
    let (ok, out, err) = fnabi(&["run", s.to_str().unwrap(), "-f", "split_into", "-i", &at, "--mmap-inputs"]);
    assert!(ok, "{err}");
    assert_eq!(out, "[0]: 4xf32=2 4 6 8\n[1]: 2xf32=3 4\n");
    let mut big_endian = std::fs::read(&xin).unwrap();
    let header_end = big_endian.len() - 16;
    let descr = big_endian.windows(3).position(|w| w == b"<f4").unwrap();
    big_endian[descr] = b'>';
    for v in big_endian[header_end..].chunks_mut(4) {
        v.reverse();
    }
    let be = dir.join("be.npy");
    std::fs::write(&be, big_endian).unwrap();
    let json = dir.join("in.json");
    std::fs::write(&json, format!("[\"@{}\"]", be.display())).unwrap();
    let (ok, out, err) =
        fnabi(&["run", s.to_str().unwrap(), "-f", "split_into", "--inputs", json.to_str().unwrap(), "--mmap-inputs"]);
    assert!(ok, "{err}");
    assert_eq!(out, "[0]: 4xf32=2 4 6 8\n[1]: 2xf32=3 4\n");
    // A function that writes its argument in place, given a mapped file:
    // it writes its own copy of the page (the mapping was read-only and the
    // call crashed), and the file keeps its bytes. [2, 5, 9] gives 2.
    let y = dir.join("y.npy");
    fnabi::npy::save(&y, &fnabi::Array::from_vec(&[3], vec![2.0f32, 5.0, 9.0]).unwrap()).unwrap();
    let before = std::fs::read(&y).unwrap();
    let in_place = repo("crates/fnabi/tests/mlir/in_place.mlir");
    let at = format!("@{}", y.display());
    let (ok, out, err) = fnabi(&["run", in_place.to_str().unwrap(), "-f", "bump_first", "-i", &at, "--mmap-inputs"]);
    assert!(ok && out == "2\n", "{out} {err}");
    assert_eq!(std::fs::read(&y).unwrap(), before);
}

#[test]
fn a_library_needs_its_signature() {
    let src = std::fs::read_to_string(repo(STRUCTURED)).unwrap();
    // SAFETY: compiled only to get its path; nothing is called here.
    let lib = unsafe { fnabi::mlir::MlirLibrary::compile(&src) }.unwrap();
    let so = lib.path().to_str().unwrap().to_owned();
    let (ok, _, err) = fnabi(&["run", &so, "-f", "scale_kw", "-i", "1.0", "-i", "1xf32=1"]);
    assert!(!ok);
    assert!(err.ends_with("has no MLIR source: give @scale_kw's type with --signature\n"), "{err}");
    let (ok, out, err) = fnabi(&[
        "run",
        &so,
        "-f",
        "scale_kw",
        "--signature",
        "(memref<?xf32>, f32) -> memref<?xf32>",
        "-i",
        "2xf32=1 2",
        "-i",
        "3",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, "2xf32=3 6\n");
    let (ok, out, _) = fnabi(&["inspect", &so]);
    assert!(ok);
    assert!(out.contains("shared library, 7 MLIR function(s)") && out.contains("  @scale_kw\n"), "{out}");
}

#[test]
fn errors_are_one_line() {
    let m = repo(MLP);
    let cases: [(&[&str], &str); 4] = [
        (
            &["-i", "2x4xf32=1 2 3"],
            "fnabi: error: --input 0 \"2x4xf32=1 2 3\" at byte 8: expected 8 values (or 1 to fill the array), found 3\n",
        ),
        (&["-i", "2x4xf32=1"], "fnabi: error: missing positional argument 1\n"),
        (&["-i", "2x4xi32=1", "-i", "{}"], "fnabi: error: --input 1 \"{}\" at byte 0: `{}` is not a number\n"),
        (&["-f", "nope"], "fnabi: error: no function @nope in the MLIR source (it has: mlp)\n"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["run", m.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (ok, out, err) = fnabi(&args);
        assert!(!ok && out.is_empty(), "{args:?}");
        assert_eq!(err, want, "{args:?}");
    }
    let (ok, _, err) = fnabi(&["run", "/nonexistent/x.mlir"]);
    assert!(!ok);
    assert_eq!(err.lines().count(), 1);
    assert!(err.starts_with("fnabi: error: cannot read /nonexistent/x.mlir"), "{err}");
}

#[test]
fn inspects_mlir_sources() {
    let s = repo(STRUCTURED);
    let (ok, out, _) = fnabi(&["inspect", s.to_str().unwrap()]);
    assert!(ok);
    assert!(out.contains("MLIR source, 7 function(s) defined, 0 external declaration(s)"), "{out}");
    assert!(out.contains("    sip: ([$0]) -> {\"max\": $1, \"sum\": $0}\n"), "{out}");
    assert!(out.contains("    result allocator (fbr): @alloc_like\n"), "{out}");
    let (ok, out, _) = fnabi(&["inspect", "--json", s.to_str().unwrap()]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let f = &v["functions"][4];
    assert_eq!(f["name"], "scale_into");
    assert_eq!(f["raw"]["mangled"], "I10!B4!d-1S1!R7!B4!d-1");
    assert_eq!(f["raw"]["from"], "f");
    assert_eq!(
        v["functions"][0]["sip"]["inputs_reference"],
        ":[\n  0=raw(0),\n  1:{\n    b=raw(2),\n    w=raw(1),\n  },\n],\n"
    );
}

#[test]
fn lists_external_functions_and_refuses_missing_ones() {
    let p = repo("crates/fnabi/tests/mlir/print_utils.mlir");
    let (ok, out, err) = fnabi(&["run", p.to_str().unwrap(), "-f", "print2d", "-i", "2x3xf32=1 2.5 3 4 5 6"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("Unranked Memref base@ = 0x"), "{out}");
    assert!(lines[0].ends_with("rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data = "), "{out}");
    assert_eq!(&lines[1..], ["[[1,   2.5,   3], ", " [4,   5,   6]]"]);
    assert!(err.contains("externals: provided: @printMemrefF32 (libmlir_runner_utils.so."), "{err}");
    let p = repo("crates/fnabi/tests/mlir/host_op.mlir");
    let (ok, out, err) = fnabi(&["run", p.to_str().unwrap(), "-f", "call_op", "-i", "3"]);
    assert!(!ok && out.is_empty());
    assert_eq!(
        err,
        "fnabi: error: the module needs @host_op: (i64) -> (i64), which no host function or runtime library provides\n"
    );
}
