//! `fnabi run model.mlir --backend iree`: the same tensor-level source and
//! inputs through fnabi's MLIR backend and through IREE (`iree-compile`
//! 3.13 from PyPI, which `scripts/lib/deps.sh` installs, and the runtime),
//! each checked against numpy or hand-computed values; structures from
//! IREE's own `iree.abi` reflection; the compile cache; errors that name the
//! user's file and line; a missing compiler. Real tools, nothing mocked.
#![cfg(feature = "iree")]

#[allow(dead_code)] // only `common::python` and `common::fnabi_bytes` are used here
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("iree-backend-{name}"))
}

/// Runs `fnabi` with `args` and the environment changes `env` (a `None`
/// value removes the variable); returns success, stdout, stderr.
fn fnabi_env(args: &[&str], env: &[(&str, Option<&str>)]) -> (bool, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fnabi"));
    c.args(args).stdin(std::process::Stdio::null());
    for (k, v) in env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let out = c.output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// The one `.vmfb` in the IREE folder of the compile cache at `cache`.
fn the_cached_module(cache: &Path) -> PathBuf {
    let vmfb: Vec<PathBuf> = std::fs::read_dir(cache.join("iree"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "vmfb"))
        .collect();
    assert_eq!(vmfb.len(), 1, "{vmfb:?}");
    vmfb.into_iter().next().unwrap()
}

fn numpy(script: &str) -> Vec<f64> {
    common::python(&format!("import numpy as np\n{script}")).split_whitespace().map(|x| x.parse().unwrap()).collect()
}

fn close(what: &str, got: &[f64], want: &[f64], rtol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= rtol * w.abs().max(1.0), "{what}: {got:?} vs {want:?}");
    }
}

/// The dtype and shape of each printed leaf (`[1]: 4xi32=…` → `[1]: 4xi32`).
fn headers(text: &str) -> Vec<String> {
    text.lines().map(|l| l.split_once('=').map_or(l, |(h, _)| h).to_owned()).collect()
}

/// One function of a source on both backends with the same inputs, in a
/// cache folder of its own: (text output, JSON data) per backend, checked
/// to print the same dtypes and shapes.
fn both(cache: &Path, src: &Path, f: &str, inputs: &[&str]) -> [(String, Vec<f64>); 2] {
    let cache = cache.to_str().unwrap();
    ["mlir", "iree"].map(|backend| {
        let mut args = vec!["run", src.to_str().unwrap(), "--backend", backend];
        if !f.is_empty() {
            args.extend(["-f", f]);
        }
        args.extend_from_slice(inputs);
        let (ok, text, err) = fnabi_env(&args, &[("FNABI_CACHE_DIR", Some(cache))]);
        assert!(ok, "{f} on {backend}: {err}");
        args.extend(["--output", "json"]);
        let (ok, json, err) = fnabi_env(&args, &[("FNABI_CACHE_DIR", Some(cache))]);
        assert!(ok, "{f} on {backend}: {err}");
        (text, common::json_data(&json))
    })
}

#[test]
fn both_backends_agree_with_numpy_on_the_same_inputs() {
    let cache = scratch("agree");
    let src = repo("crates/fnabi/tests/mlir/cross_backend.mlir");
    // Tolerances: IREE's exp is its own polynomial, not libm's: within a few
    // ulp (f32: 2e-6 relative; f64: 1e-14); sums of exactly representable
    // products are exact on both.
    let [m, i] = both(&cache, &src, "scaled_exp", &["-i", "2x3xf32=0 1 -1 2 0.5 -2", "-i", "2"]);
    let want =
        numpy("x = np.array([[0, 1, -1], [2, 0.5, -2]], np.float32)\nprint(*(np.exp(x) * np.float32(2)).ravel())");
    close("scaled_exp mlir", &m.1, &want, 2e-6);
    close("scaled_exp iree", &i.1, &want, 2e-6);
    assert_eq!(headers(&m.0), ["2x3xf32"]);
    assert_eq!(headers(&i.0), headers(&m.0));

    let [m, i] = both(&cache, &src, "scale_exp_f64", &["-i", "3xf64=0 1 -0.5", "-i", "2"]);
    let want = numpy("print(*np.exp(np.array([0, 1, -0.5]) * 2).tolist())");
    close("scale_exp_f64 mlir", &m.1, &want, 1e-14);
    close("scale_exp_f64 iree", &i.1, &want, 1e-14);
    assert_eq!(headers(&i.0), ["3xf64"], "f64 is not demoted to f32");
    assert_eq!(headers(&i.0), headers(&m.0));

    // relu(x @ w + b) by hand: rows [0 5 2] and [0 1 2], plus b, relu.
    let x = "2x4xf32=1 2 3 4 -1 0 1 0";
    let [m, i] = both(
        &cache,
        &src,
        "dense_relu",
        &["-i", x, "-i", "4x3xf32=1 0 -1 0 1 0 1 1 1 -1 0 0", "-i", "3xf32=0.5 -10 0"],
    );
    for (name, got) in [("mlir", &m), ("iree", &i)] {
        assert_eq!(got.1, [0.5, 0.0, 2.0, 0.5, 0.0, 2.0], "dense_relu {name}");
        assert_eq!(got.0, "2x3xf32=[0.5 0 2][0.5 0 2]\n", "dense_relu {name}");
    }

    // Integers, two results (a 0-d tensor and a dynamic one): identical text.
    let [m, i] = both(&cache, &src, "sum_and_double", &["-i", "4xi32=1 -2 3 10"]);
    assert_eq!(m.1, [12.0, 2.0, -4.0, 6.0, 20.0]);
    assert_eq!(m.0, "[0]: i32=12\n[1]: 4xi32=2 -4 6 20\n");
    assert_eq!(i, m);

    // The tensor-level MLP of examples/, against numpy.
    let mlp = repo("examples/mlp_tensor.mlir");
    let inputs = repo("examples/mlp_tensor_inputs.json");
    let [m, i] = both(&cache, &mlp, "", &["--inputs", inputs.to_str().unwrap()]);
    let want = numpy(&format!(
        "import json\nv = [np.array(a['data'], np.float32).reshape(a['shape']) for a in json.load(open('{}'))]\n\
         x, w1, b1, w2, b2 = v\nprint(*(np.maximum(x @ w1 + b1, 0) @ w2 + b2).ravel())",
        inputs.display()
    ));
    close("mlp mlir", &m.1, &want, 1e-6);
    close("mlp iree", &i.1, &want, 1e-6);
    assert_eq!(headers(&i.0), ["2x3xf32"]);
}

#[test]
fn structures_come_from_iree_abi_reflection_of_the_source() {
    // nested.mlir carries hand-written iree.abi records (IREE-only source:
    // !util.list arguments); its results as IREE's Python runtime gave them
    // (the fixtures' README): the same as the prebuilt nested.vmfb.
    let cache = scratch("nested");
    let src = repo("crates/fnabi/tests/fixtures/iree/nested.mlir");
    let inputs = scratch("nested-inputs");
    let json = inputs.join("in.json");
    std::fs::write(&json, r#"[{"a": [[1, 2, 3, 4], [10, 20, 30, 40]], "b": {"c": [2, 2, 2, 2]}}, 3.0]"#).unwrap();
    let args =
        ["run", src.to_str().unwrap(), "--backend", "iree", "-f", "nested_deep", "--inputs", json.to_str().unwrap()];
    let (ok, out, err) = fnabi_env(&args, &[("FNABI_CACHE_DIR", Some(cache.to_str().unwrap()))]);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "[0]: 4xf32=15 28 41 54\n[1][\"s\"]: 4xf32=11 22 33 44\n[1][\"t\"][0]: 4xf32=2 4 6 8\n[1][\"t\"][1]: 4xf32=20 40 60 80\n"
    );
}

#[test]
fn compiles_once_then_from_the_cache() {
    let cache = scratch("cache");
    let c = cache.to_str().unwrap();
    let env = [("FNABI_CACHE_DIR", Some(c))];
    let src = repo("crates/fnabi/tests/mlir/cross_backend.mlir");
    let args = ["run", src.to_str().unwrap(), "--backend", "iree", "-f", "sum_and_double", "-i", "4xi32=1 -2 3 10"];
    let want = "[0]: i32=12\n[1]: 4xi32=2 -4 6 20\n";
    assert_eq!(fnabi_env(&args, &env).1, want);
    let vmfb = [the_cached_module(&cache)];
    let built = std::fs::metadata(&vmfb[0]).unwrap().modified().unwrap();
    // A hit: the same file, not rewritten.
    assert_eq!(fnabi_env(&args, &env).1, want);
    assert_eq!(std::fs::metadata(&vmfb[0]).unwrap().modified().unwrap(), built);
    let (ok, list, err) = fnabi_env(&["cache", "list"], &env);
    assert!(ok, "{err}");
    assert!(list.contains(&format!("{}  ", vmfb[0].display())), "{list}");
    assert!(
        list.ends_with(&format!("1 IREE module in {c}/iree, {} bytes\n", std::fs::metadata(&vmfb[0]).unwrap().len())),
        "{list}"
    );
    // Corrupted (same size): rebuilt, never loaded.
    let mut bytes = std::fs::read(&vmfb[0]).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&vmfb[0], &bytes).unwrap();
    assert!(fnabi_env(&["cache", "list"], &env).1.contains("bytes  corrupt"));
    assert_eq!(fnabi_env(&args, &env).1, want);
    assert!(!fnabi_env(&["cache", "list"], &env).1.contains("corrupt"));
    // Other flags: another entry. --print-pipeline shows the command.
    let mut more = args.to_vec();
    more.extend(["--iree-compile-flag=--iree-llvmcpu-target-cpu=host", "--print-pipeline"]);
    let (ok, out, err) = fnabi_env(&more, &env);
    assert!(ok, "{err}");
    assert_eq!(out, want);
    assert!(
        err.starts_with("fnabi: pipeline: ")
            && err.contains("iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --iree-input-demote-f64-to-f32=false --mlir-print-op-on-diagnostic=false --iree-llvmcpu-target-cpu=host ")
            && err.contains(&format!(" -o {c}/iree/")),
        "{err}"
    );
    let (_, cleared, _) = fnabi_env(&["cache", "clear"], &env);
    assert!(cleared.ends_with(&format!("removed 2 IREE modules from {c}/iree\n")), "{cleared}");
}

#[test]
fn iree_compile_runs_under_the_compile_timeout() {
    let cache = scratch("timeout");
    let c = cache.to_str().unwrap();
    let src = repo("crates/fnabi/tests/mlir/cross_backend.mlir");
    let run = ["run", src.to_str().unwrap(), "--backend", "iree", "-f", "sum_and_double", "-i", "4xi32=1 -2 3 10"];
    // 50 ms: iree-compile (a Python launcher) cannot even start in that time.
    for (flag, env) in [(Some("0.05"), None), (None, Some("0.05"))] {
        let mut args = run.to_vec();
        args.extend(flag.map(|f| ["--compile-timeout", f]).into_iter().flatten());
        let t = std::time::Instant::now();
        let (ok, out, err) = fnabi_env(&args, &[("FNABI_CACHE_DIR", Some(c)), ("FNABI_COMPILE_TIMEOUT", env)]);
        assert!(!ok && out.is_empty(), "{out}");
        assert_eq!(
            err,
            "fnabi: error: iree-compile did not finish within the compile timeout of 0.05 s (raise it with \
             FNABI_COMPILE_TIMEOUT=SECONDS or --compile-timeout; 0 for none)\n"
        );
        assert!(t.elapsed() < std::time::Duration::from_secs(20), "{:?}", t.elapsed());
    }
    // Nothing half-built is left, and the flag's 0 (none) wins over the environment.
    let left: Vec<_> =
        std::fs::read_dir(cache.join("iree")).map(|d| d.map(|e| e.unwrap().file_name()).collect()).unwrap_or_default();
    assert!(left.iter().all(|n| n.to_string_lossy().ends_with(".lock")), "{left:?}");
    let mut args = run.to_vec();
    args.extend(["--compile-timeout", "0"]);
    let (ok, out, err) = fnabi_env(&args, &[("FNABI_CACHE_DIR", Some(c)), ("FNABI_COMPILE_TIMEOUT", Some("0.05"))]);
    assert!(ok, "{err}");
    assert_eq!(out, "[0]: i32=12\n[1]: 4xi32=2 -4 6 20\n");
}

#[test]
fn a_compile_shows_progress_on_a_terminal_only() {
    let src = repo("crates/fnabi/tests/mlir/cross_backend.mlir");
    let cmd = format!(
        "{} run {} --backend iree -f sum_and_double -i 4xi32=1",
        env!("CARGO_BIN_EXE_fnabi"),
        src.to_str().unwrap()
    );
    // `script` (util-linux) gives the command a terminal; a fresh cache
    // makes it compile; the threshold 0 makes the line show at once.
    let run = |terminal: bool| {
        let cache = scratch(if terminal { "progress-tty" } else { "progress-pipe" });
        common::run_for_progress(&cmd, terminal, &cache)
    };
    let tty = run(true);
    assert!(tty.contains("fnabi: compiling cross_backend.mlir: iree-compile ("), "{tty:?}");
    assert!(tty.contains("[1]: 4xi32=2 2 2 2"), "{tty:?}");
    assert_eq!(run(false), "[0]: i32=4\n[1]: 4xi32=2 2 2 2\n");
}

#[test]
fn compile_errors_name_the_users_file_and_line() {
    let dir = scratch("errors");
    let cache = dir.join("cache");
    let env = [("FNABI_CACHE_DIR", Some(cache.to_str().unwrap()))];
    let broken = dir.join("my model.mlir");
    std::fs::write(
        &broken,
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %y = arith.addf %x, %x : tensor<4xf32>\n  return %z : tensor<4xf32>\n}\n",
    )
    .unwrap();
    let b = broken.to_str().unwrap();
    let (ok, out, err) = fnabi_env(&["run", b, "--backend", "iree", "-i", "4xf32=1 2 3 4"], &env);
    assert!(!ok && out.is_empty());
    assert!(err.starts_with(&format!("fnabi: error: iree-compile failed (exit status: 1) compiling {b}:\n{b}:3:10: error: use of undeclared SSA value name\n")), "{err}");
    assert!(!err.contains("input.mlir") && !err.contains("tmp-"), "{err}");
    // From stdin: named <stdin>.
    let mut child = Command::new(env!("CARGO_BIN_EXE_fnabi"))
        .args(["run", "--module=-", "--backend", "iree"])
        .env("FNABI_CACHE_DIR", &cache)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &std::fs::read(&broken).unwrap()).unwrap();
    let err = String::from_utf8(child.wait_with_output().unwrap().stderr).unwrap();
    assert!(err.contains("\n<stdin>:3:10: error: use of undeclared SSA value name\n"), "{err}");
    // memref code (examples/mlp.mlir) is refused by iree-compile, with a note.
    let mlp = repo("examples/mlp.mlir");
    let (ok, _, err) = fnabi_env(&["run", mlp.to_str().unwrap(), "--backend", "iree"], &env);
    assert!(!ok);
    assert!(err.contains(&format!("\n{}:20:27: error: ", mlp.display())), "{err}");
    assert!(err.trim_end().ends_with("note: iree-compile takes tensor-level MLIR (functions of tensors and scalars); memref code runs on fnabi's MLIR backend"), "{err}");
    // The error, not the whole module after it (`see current operation:`,
    // 216 lines for this source): IREE cannot lower its i32-to-f64 cast.
    let scalars = repo("crates/fnabi/tests/mlir/scalars.mlir");
    let (ok, _, err) =
        fnabi_env(&["run", scalars.to_str().unwrap(), "-f", "half_f32", "-i", "1", "--backend", "iree"], &env);
    assert!(!ok);
    assert!(err.contains(":128:11: error: failed to legalize operation 'arith.sitofp'"), "{err}");
    assert!(!err.contains("see current operation") && err.lines().count() < 20, "{err}");
    // An empty file: one line, no compiler run.
    let empty = dir.join("empty.mlir");
    std::fs::write(&empty, "\n").unwrap();
    let (ok, _, err) = fnabi_env(&["run", empty.to_str().unwrap(), "--backend", "iree"], &env);
    assert!(!ok);
    assert_eq!(err, format!("fnabi: error: {} is empty: there is nothing to compile\n", empty.display()));
}

/// 8-bit float arithmetic (tests/mlir/float8_arith.mlir: extf to f32,
/// compute, truncf back) through IREE, bytes checked against hand-derived
/// encodings; fnabi's MLIR backend refuses the same source with a note
/// (MLIR 22 lowers f8E4M3FN/f8E5M2 extf/truncf on CPUs only through
/// `--convert-arith-to-apfloat`, which rewrites every float op of a module).
#[test]
fn float8_arithmetic_runs_on_iree_and_is_refused_with_a_note_on_mlir() {
    let dir = scratch("float8");
    let cache = dir.join("cache");
    let env = [("FNABI_CACHE_DIR", Some(cache.to_str().unwrap()))];
    let src = repo("crates/fnabi/tests/mlir/float8_arith.mlir");
    let s = src.to_str().unwrap();
    // Each case: function, inputs, expected text, expected bytes. By hand:
    // scale_e4m3fn computes truncf(2x + 0.25) in f8E4M3FN (bias 7, 3
    // mantissa bits, round to nearest even). "0.1" reads as 0x1d = 0.1015625:
    //   2*0.1015625+0.25 = 0.453125, halfway between 0.4375 and 0.46875
    //     (step 1/32 in [0.25,0.5)) -> even mantissa 0.4375 = 1.75*2^-2 = 0 0101 110 = 0x2e
    //   2*1+0.25 = 2.25 = 1.125*2^1 = 0 1000 001 = 0x41
    //   2*-3+0.25 = -5.75, halfway between -5.5 and -6 -> even -6 = -1.5*2^2 = 1 1001 100 = 0xcc
    //   2*208+0.25 = 416.25 (step 32 in [256,512)) -> 416 = 1.625*2^8 = 0 1111 101 = 0x7d
    // add_e5m2 computes truncf(x + y) in f8E5M2 (bias 15, 2 mantissa bits):
    //   1+0.25 = 1.25 = 0 01111 01 = 0x3d; 1+0.125 = 1.125, halfway -> even 1.0 = 0x3c;
    //   3+0.5 = 3.5 = 1.75*2^1 = 0 10000 11 = 0x43; 48+10 = 58 (step 8) -> 56 = 1.75*2^5 = 0x53.
    // Text prints the shortest decimal that reads back as the same f8 value.
    let cases: [(&str, &[&str], &str, [u8; 4]); 2] = [
        ("scale_e4m3fn", &["-i", "4xf8E4M3FN=0.1 1 -3 208"], "4xf8E4M3FN=0.44 2.2 -6 416\n", [0x2e, 0x41, 0xcc, 0x7d]),
        (
            "add_e5m2",
            &["-i", "4xf8E5M2=1 1 3 48", "-i", "4xf8E5M2=0.25 0.125 0.5 10"],
            "4xf8E5M2=1.2 1 3.5 56\n",
            [0x3d, 0x3c, 0x43, 0x53],
        ),
    ];
    for (f, inputs, text, bytes) in cases {
        let mut args = vec!["run", s, "--backend", "iree", "-f", f];
        args.extend_from_slice(inputs);
        let (ok, out, err) = fnabi_env(&args, &env);
        assert!(ok, "{f}: {err}");
        assert_eq!(out, text, "{f}");
        let raw = dir.join(format!("{f}.bin"));
        let spec = format!("--output=@{}", raw.display());
        args.push(&spec);
        let (ok, _, err) = fnabi_env(&args, &env);
        assert!(ok, "{f}: {err}");
        assert_eq!(std::fs::read(&raw).unwrap(), bytes, "{f}");
        // The MLIR backend: no CPU lowering of f8 extf/truncf, said so.
        args.truncate(args.len() - 1);
        args[3] = "mlir";
        let (ok, out, err) = fnabi_env(&args, &env);
        assert!(!ok && out.is_empty(), "{f}: {out}");
        assert!(err.contains("error: Dialect `arith' not found for custom op 'arith.extf'"), "{f}: {err}");
        assert!(
            err.trim_end().ends_with(
                "note: `arith.extf` of an 8-bit float has no lowering in MLIR's CPU pipeline (arith-expand covers only \
                 bf16, f8E8M0 and f4E2M1): compile it with IREE (`fnabi run FILE --backend iree`), or move f8 values \
                 only as bytes"
            ),
            "{f}: {err}"
        );
    }
}

#[test]
fn a_missing_compiler_says_what_to_install() {
    let src = repo("crates/fnabi/tests/mlir/cross_backend.mlir");
    let s = src.to_str().unwrap();
    let args = ["run", s, "--backend", "iree", "-f", "sum_and_double", "-i", "4xi32=1"];
    let (ok, out, err) = fnabi_env(&args, &[("FNABI_IREE_COMPILE", Some("/nonexistent"))]);
    assert!(!ok && out.is_empty());
    assert_eq!(
        err,
        "fnabi: error: FNABI_IREE_COMPILE = /nonexistent: no such file (pip install iree-base-compiler==3.13.0, then \
         point FNABI_IREE_COMPILE at its iree-compile, or unset it)\n"
    );
    // Not on PATH and not in the tool venv.
    let empty = scratch("no-tools");
    let (ok, _, err) = fnabi_env(
        &args,
        &[("FNABI_IREE_COMPILE", None), ("PATH", Some("/usr/bin:/bin")), ("FNABI_TOOLS_DIR", empty.to_str())],
    );
    assert!(!ok);
    assert_eq!(
        err,
        format!(
            "fnabi: error: iree-compile is not installed (not on PATH, not in {}/iree-venv/bin, FNABI_IREE_COMPILE \
             unset): pip install iree-base-compiler==3.13.0\n",
            empty.display()
        )
    );
    // A program that is not iree-compile.
    let (ok, _, err) = fnabi_env(&args, &[("FNABI_IREE_COMPILE", Some("/bin/true"))]);
    assert!(!ok);
    assert!(
        err.starts_with("fnabi: error: FNABI_IREE_COMPILE = /bin/true: `--version` printed no IREE compiler version"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn backends_and_module_kinds_must_fit() {
    let dir = scratch("kinds");
    let vmfb = repo("crates/fnabi/tests/fixtures/iree/add.vmfb");
    let (ok, _, err) = fnabi_env(&["run", vmfb.to_str().unwrap(), "--backend", "mlir", "-f", "add_i32"], &[]);
    assert!(!ok);
    assert_eq!(
        err,
        format!(
            "fnabi: error: {} is an IREE module: it runs on the IREE runtime, not --backend mlir\n",
            vmfb.display()
        )
    );
    // --backend iree is the default for a .vmfb anyway.
    let (ok, out, err) =
        fnabi_env(&["run", vmfb.to_str().unwrap(), "--backend", "iree", "-f", "add_i32", "-i", "2", "-i", "40"], &[]);
    assert!(ok, "{err}");
    assert_eq!(out, "42\n");
    // The function as its symbol, as MLIR and `fnabi inspect` write it.
    for f in ["@add_i32", "@\"add_i32\""] {
        let (ok, out, err) = fnabi_env(&["run", vmfb.to_str().unwrap(), "-f", f, "-i", "2", "-i", "40"], &[]);
        assert!(ok && out == "42\n", "{f}: {out} {err}");
    }
    let so = dir.join("lib.so");
    std::fs::write(&so, b"\x7fELF").unwrap();
    let (ok, _, err) = fnabi_env(&["run", so.to_str().unwrap(), "--backend", "iree"], &[]);
    assert!(!ok);
    assert!(err.contains("is a shared library: it runs on the MLIR backend"), "{err}");
    let src = repo("crates/fnabi/tests/mlir/cross_backend.mlir");
    let s = src.to_str().unwrap();
    let (ok, _, err) = fnabi_env(&["run", s, "--iree-compile-flag=--x"], &[]);
    assert!(!ok);
    assert_eq!(err, "fnabi: error: --iree-compile-flag applies to MLIR source run with --backend iree\n");
    let (ok, _, err) = fnabi_env(&["run", s, "--backend", "iree", "--pipeline", "builtin.module()"], &[]);
    assert!(!ok);
    assert!(
        err.starts_with("fnabi: error: --pipeline, --pass-option and --signature apply to the MLIR backend"),
        "{err}"
    );
    // --pass-option too (it was ignored).
    let opt = ["run", s, "--backend", "iree", "--pass-option", "convert-linalg-to-loops:bogus=1"];
    let (ok, _, err) = fnabi_env(&opt, &[]);
    assert!(!ok);
    assert!(
        err.starts_with("fnabi: error: --pipeline, --pass-option and --signature apply to the MLIR backend"),
        "{err}"
    );
    let (ok, _, err) = fnabi_env(&["run", s, "--backend", "gpu"], &[]);
    assert!(!ok);
    assert!(err.contains("gpu") && err.lines().count() == 1, "{err}");
}

/// A module as `iree-compile --iree-vm-emit-polyglot-zip=false` writes it: a
/// bare, size-prefixed FlatBuffer (no ZIP), its identifier at bytes 8..12.
/// `fnabi run` knows it by its bytes, as `fnabi inspect` does, whatever the
/// file is called and from stdin; it was taken for MLIR source (`run` looked
/// for the identifier at bytes 4..8).
#[test]
fn a_bare_flatbuffer_module_runs_by_its_bytes() {
    let cache = scratch("bare");
    let c = cache.to_str().unwrap();
    let env = [("FNABI_CACHE_DIR", Some(c))];
    let src = repo("crates/fnabi/tests/mlir/cross_backend.mlir");
    let inputs = ["-f", "sum_and_double", "-i", "4xi32=1 -2 3 10"];
    let want = "[0]: i32=12\n[1]: 4xi32=2 -4 6 20\n";
    let mut args = vec![
        "run",
        src.to_str().unwrap(),
        "--backend",
        "iree",
        "--iree-compile-flag=--iree-vm-emit-polyglot-zip=false",
    ];
    args.extend(inputs);
    let (ok, out, err) = fnabi_env(&args, &env);
    assert!(ok && out == want, "{out} {err}");
    let bytes = std::fs::read(the_cached_module(&cache)).unwrap();
    assert!(!bytes.starts_with(b"PK") && &bytes[8..12] == b"IREE", "{:?}", &bytes[..12]);
    let module = cache.join("module.bin");
    std::fs::write(&module, &bytes).unwrap();
    let mut args = vec!["run", module.to_str().unwrap()];
    args.extend(inputs);
    let (ok, out, err) = fnabi_env(&args, &env);
    assert!(ok && out == want, "{out} {err}");
    let (ok, out, err) = fnabi_env(&["inspect", module.to_str().unwrap()], &env);
    assert!(ok && out.contains("bare)") && out.contains("sum_and_double"), "{out} {err}");
    // From stdin.
    let mut args = vec!["run", "--module=-"];
    args.extend(inputs);
    let (ok, out, err) = common::fnabi_bytes(&args, &bytes);
    assert!(ok && out == want, "{out} {err}");
}

/// A scalar result keeps its element type on both backends, as
/// `iree-run-module` keeps it: an `f32` prints as the shortest decimal of
/// that `f32` (numpy's `repr`), not of the `f64` it is held in
/// (`0.10000000149011612`), and is written to `.npy` as `<f4` and to a raw
/// file as its own bytes (an `i8` is one byte, not eight); an `i8` that
/// wraps is the same on both (IREE's result was an error: "128 is out of
/// range for i8").
#[test]
fn scalar_results_keep_their_element_type() {
    let dir = scratch("scalar-results");
    let src = dir.file(
        "sc.mlir",
        "func.func @half(%x: f32) -> f32 {\n  %c = arith.constant 0.5 : f32\n  %r = arith.mulf %x, %c : f32\n  return %r : f32\n}\n\
         func.func @inc8(%x: i8) -> i8 {\n  %c = arith.constant 1 : i8\n  %r = arith.addi %x, %c : i8\n  return %r : i8\n}\n\
         func.func @pair(%x: f32, %y: f64) -> (f32, f64) {\n  return %x, %y : f32, f64\n}\n",
    );
    let src = src.to_str().unwrap();
    // What numpy prints for the same values.
    let want = common::python(
        "import numpy as np\nprint(repr(float(np.float32(0.2) * np.float32(0.5))).replace('0.1', 'x'), np.float32(0.2) * np.float32(0.5), np.float32(0.3), np.float64(0.3))",
    );
    let want: Vec<&str> = want.split_whitespace().collect();
    assert_eq!(want[0], "x0000000149011612", "the f64 of the f32 result is long");
    for backend in ["mlir", "iree"] {
        let (ok, out, err) = fnabi_env(&["run", src, "-f", "half", "-i", "0.2", "--backend", backend], &[]);
        assert!(ok, "{backend}: {err}");
        assert_eq!(out, format!("{}\n", want[1]), "{backend}");
        let (ok, out, err) =
            fnabi_env(&["run", src, "-f", "pair", "-i", "0.3", "-i", "0.3", "--backend", backend], &[]);
        assert!(ok, "{backend}: {err}");
        assert_eq!(out, format!("[0]: {}\n[1]: {}\n", want[2], want[3]), "{backend}");
        // An i8 that wraps (MLIR's semantics: 127 + 1 is -128); IREE's VM
        // returns it in an i32 register as 128.
        let (ok, out, err) = fnabi_env(&["run", src, "-f", "inc8", "-i", "127", "--backend", backend], &[]);
        assert!(ok, "{backend}: {err}");
        assert_eq!(out, "-128\n", "{backend}");
        let bin = dir.join(format!("{backend}.bin"));
        let npy = dir.join(format!("{backend}.npy"));
        let arg = |p: &Path| format!("--output=@{}", p.display());
        let (ok, _, err) = fnabi_env(&["run", src, "-f", "inc8", "-i", "5", &arg(&bin), "--backend", backend], &[]);
        assert!(ok, "{backend}: {err}");
        assert_eq!(std::fs::read(&bin).unwrap(), [6u8], "{backend}");
        let (ok, _, err) = fnabi_env(&["run", src, "-f", "half", "-i", "0.2", &arg(&npy), "--backend", backend], &[]);
        assert!(ok, "{backend}: {err}");
        let loaded = common::python(&format!(
            "import numpy as np\na = np.load({:?})\nprint(a.dtype, a.shape, a == np.float32(0.2) * np.float32(0.5))",
            npy.display().to_string()
        ));
        assert_eq!(loaded.trim(), "float32 () True", "{backend}");
    }
}

/// MLIR that only IREE reads (its `util` dialect) fails in `mlir-opt`
/// with a note that says to run it with `--backend iree`, which does.
#[test]
fn iree_dialects_point_to_the_iree_backend() {
    let dir = scratch("iree-dialects");
    let src = dir.file(
        "list.mlir",
        "func.func @wrap(%x: i32) -> !util.list<?> {\n  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n\
         \x20 %l = util.list.create %c1 : !util.list<?>\n  util.list.resize %l, %c1 : !util.list<?>\n\
         \x20 util.list.set %l[%c0], %x : i32 -> !util.list<?>\n  return %l : !util.list<?>\n}\n",
    );
    let src = src.to_str().unwrap();
    let (ok, _, err) = fnabi_env(&["run", src, "-i", "3"], &[]);
    assert!(!ok);
    assert!(
        err.contains("note: `util` is one of IREE's dialects, which only iree-compile reads: run the module with `--backend iree`"),
        "{err}"
    );
    let (ok, out, err) = fnabi_env(&["run", src, "-i", "3", "--backend", "iree"], &[]);
    assert!(ok, "{err}");
    assert_eq!(out, "[0]: 3\n");
}
