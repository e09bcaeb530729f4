//! `fnabi compile`, `fnabi run --pipeline/--print-pipeline`, tool
//! discovery and one-line messages, end to end through the binary: a
//! self-describing library runs and inspects without `--signature` and
//! refuses one that contradicts it; unsuffixed tools found through
//! `FNABI_MLIR_TOOLS` and on `PATH` (a temporary folder of links to
//! Debian's suffixed tools, with a fresh cache so that they really run).
//! Expected values are computed by hand.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

fn fnabi(args: &[&str]) -> (bool, String, String) {
    common::fnabi(args, "")
}

fn tmpdir(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("entry-cli-{name}"))
}

const STRUCTURED: &str = "crates/fnabi/tests/mlir/structured.mlir";

#[test]
fn compiled_libraries_describe_themselves() {
    let d = tmpdir("compile");
    let lib = d.join("structured.so");
    let (src, lib_s) = (repo(STRUCTURED), lib.to_str().unwrap().to_owned());
    let (ok, _, err) = fnabi(&["compile", src.to_str().unwrap(), "-o", &lib_s]);
    assert!(ok, "{err}");
    assert!(err.contains("wrote") && err.contains("scale_kw"), "{err}");
    // No --signature: the library says what its functions take.
    let (ok, out, err) = fnabi(&["run", &lib_s, "-f", "scale_kw", "-i", "3", "-i", "3xf32=1 -2 0.5"]);
    assert!(ok, "{err}");
    assert_eq!(out, "3xf32=3 -6 1.5\n");
    let (ok, out, err) = fnabi(&["inspect", &lib_s]);
    assert!(ok, "{err}");
    assert!(out.contains("embedded ABI"), "{out}");
    assert!(out.contains("public @scale_kw(memref<?xf32>, f32) -> (memref<?xf32>)"), "{out}");
    assert!(out.contains("sip: ({\"scale\": $1, \"x\": $0}) -> $0"), "{out}");
    // The same signature is accepted; a contradicting one is an error.
    let sig = "(memref<?xf32>, f32) -> memref<?xf32>";
    let (ok, out, err) = fnabi(&["run", &lib_s, "-f", "scale_kw", "--signature", sig, "-i", "2", "-i", "2xf32=1 2"]);
    assert!(ok && out == "2xf32=2 4\n", "{out} {err}");
    let bad = "(memref<?xf64>, f64) -> memref<?xf64>";
    let (ok, out, err) = fnabi(&["run", &lib_s, "-f", "scale_kw", "--signature", bad, "-i", "2", "-i", "2xf64=1 2"]);
    assert!(!ok && out.is_empty(), "{out}");
    assert!(err.contains("contradicts") || err.contains("the ABI embedded in"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // (Buffer<float32[?]>, float64) -> (Buffer<float32[?]>): the scale as f64.
    let raw_bad = "I12!B4!d-1S3!t2R7!B4!d-1";
    let (ok, _, err) = fnabi(&["run", &lib_s, "-f", "scale_kw", "--signature", raw_bad, "-i", "2", "-i", "2xf32=1 2"]);
    assert!(!ok && err.contains("the ABI embedded in"), "{err}");
}

/// fnabi marks tensor arguments read-only by inserting attributes into the
/// user's header, and adds wrappers after vector functions: a compile error
/// on such a line still reads as MLIR's own tool reports it on the user's
/// file (the same line:column, the user's line echoed, the caret under it).
#[test]
fn compile_errors_on_edited_lines_read_as_the_users_file() {
    let d = tmpdir("edited-lines");
    let src = d.file(
        "one_line.mlir",
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n\
         func.func @g(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> { %0 = arith.addf %x, %q : tensor<4xf32>\n return %0 : tensor<4xf32> }\n",
    );
    let out = Command::new(format!("/usr/bin/mlir-opt-{}", version())).arg(&src).output().unwrap();
    let upstream = String::from_utf8(out.stderr).unwrap();
    let want: Vec<&str> = upstream.lines().take(3).collect();
    assert!(want[0].ends_with(":4:91: error: use of undeclared SSA value name"), "{upstream}");
    let (ok, _, err) = fnabi(&["run", src.to_str().unwrap(), "-f", "g", "-i", "4xf32=1", "-i", "4xf32=2"]);
    assert!(!ok);
    let got: Vec<&str> = err.lines().skip(1).take(3).collect();
    assert_eq!(got, want, "{err}");
}

/// A function on scalable vectors makes LLVM's x86-64 code generator abort
/// (no such registers): the error keeps LLVM's message, leaves out its crash
/// report, and says why and what to do.
#[test]
fn scalable_vectors_are_explained() {
    let d = tmpdir("scalable");
    let src = d.file(
        "sve.mlir",
        "func.func @s(%a: vector<[4]xf32>) -> vector<[4]xf32> {\n  return %a : vector<[4]xf32>\n}\n\
         func.func @ok(%x: f32) -> f32 { return %x : f32 }\n",
    );
    let (ok, _, err) = fnabi(&["run", src.to_str().unwrap(), "-f", "ok", "-i", "2.5"]);
    assert!(!ok);
    assert!(err.contains("LLVM ERROR: ") && err.contains("scalable vector"), "{err}");
    assert!(err.contains("note: the module has a function on scalable vectors"), "{err}");
    assert!(!err.contains("Stack dump") && !err.contains("PLEASE submit"), "{err}");
    assert!(err.lines().count() < 8, "{err}");
}

/// `fnabi compile` never writes over its own source (by its name, a
/// symbolic or a hard link), and an output it cannot write is named, with
/// no scratch file left beside it.
#[test]
fn compile_keeps_the_source_and_names_the_output() {
    let d = tmpdir("compile-output");
    let src = d.join("model.mlir");
    std::fs::copy(repo(STRUCTURED), &src).unwrap();
    let text = std::fs::read(&src).unwrap();
    std::os::unix::fs::symlink(&src, d.join("soft.so")).unwrap();
    std::fs::hard_link(&src, d.join("hard.so")).unwrap();
    let s = src.to_str().unwrap();
    for out in [
        s.to_owned(),
        format!("{}/./model.mlir", d.display()),
        format!("{}/soft.so", d.display()),
        format!("{}/hard.so", d.display()),
    ] {
        let (ok, _, err) = fnabi(&["compile", s, "-o", &out]);
        let want = format!(
            "fnabi: error: -o {out} is the source itself: write the library to another file (e.g. -o {}/model.so)\n",
            d.display()
        );
        assert!(!ok && err == want, "{err}");
        assert_eq!(std::fs::read(&src).unwrap(), text);
    }
    let missing = d.join("no/such/folder/lib.so");
    let (ok, _, err) = fnabi(&["compile", s, "-o", missing.to_str().unwrap()]);
    assert!(!ok && err.starts_with(&format!("fnabi: error: cannot write {}: ", missing.display())), "{err}");
    // Into a folder: the rename fails, and its scratch file is removed.
    let (ok, _, err) = fnabi(&["compile", s, "-o", d.to_str().unwrap()]);
    assert!(!ok && err.starts_with(&format!("fnabi: error: cannot write {}: ", d.display())), "{err}");
    let parent = d.parent().unwrap();
    let name = d.file_name().unwrap().to_str().unwrap();
    let left: Vec<_> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(name) && n != name)
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn compiled_libraries_keep_their_vector_functions() {
    // A library `fnabi compile` writes from vectors.mlir: its embedded ABI
    // keeps the vector types, so run and inspect call the wrapper compiled in.
    let d = tmpdir("compile-vectors");
    let lib = d.join("vectors.so");
    let (src, lib_s) = (repo("crates/fnabi/tests/mlir/vectors.mlir"), lib.to_str().unwrap().to_owned());
    let (ok, _, err) = fnabi(&["compile", src.to_str().unwrap(), "-o", &lib_s]);
    assert!(ok, "{err}");
    // (1, 2, 3, 4) + (10, 20, 30, 40); 1 + 2 + 39.
    let (ok, out, err) = fnabi(&["run", &lib_s, "-f", "vadd", "-i", "4xf32=1 2 3 4", "-i", "4xf32=10 20 30 40"]);
    assert!(ok && out == "4xf32=11 22 33 44\n", "{out} {err}");
    let (ok, out, err) = fnabi(&["run", &lib_s, "-f", "sum.index", "-i", "3xi64=1 2 39"]);
    assert!(ok && out == "42\n", "{out} {err}");
    let (ok, out, err) = fnabi(&["inspect", &lib_s]);
    assert!(ok, "{err}");
    assert!(
        out.contains("vectors as arrays (fnabi's wrapper): (vector<4xf32>, vector<4xf32>) -> (vector<4xf32>)"),
        "{out}"
    );
}

#[test]
fn compiled_libraries_keep_names_that_need_quotes() {
    // Before, the embedded ABI had `@add-one(` and the library `fnabi
    // compile` wrote could be neither run nor inspected.
    let d = tmpdir("compile-quoted");
    let src = d.join("quoted.mlir");
    let text = "func.func @\"add-one\"(%a: f32) -> f32 {\n  %c = arith.constant 1.0 : f32\n  %r = arith.addf %a, %c : f32\n  \
                return %r : f32\n}\n";
    std::fs::write(&src, text).unwrap();
    let lib = d.join("quoted.so");
    let (src_s, lib_s) = (src.to_str().unwrap().to_owned(), lib.to_str().unwrap().to_owned());
    for module in [&src_s, &lib_s] {
        if module == &lib_s {
            let (ok, _, err) = fnabi(&["compile", &src_s, "-o", &lib_s]);
            assert!(ok, "{err}");
        }
        // 2.5 + 1; the function by its name or its symbol as inspect lists it.
        for f in ["add-one", "@\"add-one\"", "@add-one"] {
            let (ok, out, err) = fnabi(&["run", module, "-f", f, "-i", "2.5"]);
            assert!(ok && out == "3.5\n", "{module} {f}: {out} {err}");
        }
        let (ok, _, err) = fnabi(&["run", module, "-f", "@\"add-one", "-i", "2.5"]);
        assert!(!ok && err.contains("a quoted name is"), "{err}");
        let (ok, out, err) = fnabi(&["inspect", module]);
        assert!(ok && out.contains("  public @\"add-one\"(f32) -> (f32)"), "{module}: {out} {err}");
    }
}

#[test]
fn custom_pipelines_run_and_print() {
    let src = repo(STRUCTURED);
    let pipeline = "builtin.module(func.func(convert-linalg-to-loops))";
    let (ok, out, err) = fnabi(&[
        "run",
        src.to_str().unwrap(),
        "-f",
        "scale_kw",
        "--pipeline",
        pipeline,
        "--print-pipeline",
        "-i",
        "0.5",
        "-i",
        "4xf32=2 4 -6 8",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, "4xf32=1 2 -3 4\n");
    assert!(err.contains(&format!("--pass-pipeline={pipeline}")), "{err}");
    assert!(err.contains("--llvm-request-c-wrappers --convert-scf-to-cf"), "{err}");
    // A pipeline mlir-opt refuses is its error, naming the pass.
    let (ok, _, err) =
        fnabi(&["run", src.to_str().unwrap(), "-f", "scale_kw", "--pipeline", "builtin.module(no-such-pass)"]);
    assert!(!ok && err.contains("no-such-pass"), "{err}");
}

/// `--pass-option` sets an option on a pass of fnabi's own pipeline (shown
/// by `--print-pipeline`, passed to the real mlir-opt, which checks it);
/// a pass that is not there, or a malformed option, is one line.
#[test]
fn pass_options_reach_fnabis_own_passes() {
    let src = repo(STRUCTURED);
    let src = src.to_str().unwrap();
    let run = ["run", src, "-f", "scale_kw", "-i", "0.5", "-i", "4xf32=2 4 -6 8"];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = run.to_vec();
        a.extend_from_slice(extra);
        fnabi(&a)
    };
    let (ok, out, err) = with(&["--pass-option", "arith-expand:include-bf16=false", "--print-pipeline"]);
    assert!(ok, "{err}");
    assert_eq!(out, "4xf32=1 2 -3 4\n");
    // The pipeline's own option of that name is replaced, the others kept.
    let expected = if version() >= 22 {
        "'--arith-expand=include-f8e8m0 include-f4e2m1 include-bf16=false'"
    } else {
        "--arith-expand=include-bf16=false"
    };
    assert!(err.contains(expected), "{err}");
    // mlir-opt itself refuses an option its pass does not have.
    let (ok, _, err) = with(&["--pass-option", "convert-linalg-to-loops:no-such-option=1"]);
    assert!(!ok && err.contains("no such option no-such-option"), "{err}");
    let (ok, _, err) = with(&["--pass-option", "no-such-pass:x=1"]);
    assert!(!ok, "{err}");
    assert!(err.starts_with("fnabi: error: invalid argument: --pass-option no-such-pass:x=1: \"no-such-pass\" is not a pass of fnabi's pipeline (its passes: arith-expand, "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let (ok, _, err) = with(&["--pass-option", "bad"]);
    assert!(!ok && err.contains("expected PASS:OPTION=VALUE"), "{err}");
    // With the user's pipeline, only fnabi's lowering takes options.
    let (ok, _, err) = with(&[
        "--pipeline",
        "builtin.module(func.func(convert-linalg-to-loops))",
        "--pass-option",
        "one-shot-bufferize:x=1",
    ]);
    assert!(!ok && err.contains("only the passes of fnabi's lowering"), "{err}");
    // An LLVM-level input is past the pipeline: no pass takes options.
    let d = tmpdir("pass-option-llvm");
    let ll = d.join("one.mlir");
    std::fs::write(
        &ll,
        "module {\n  llvm.func @main() -> i32 {\n    %0 = llvm.mlir.constant(1 : i32) : i32\n    llvm.return %0 : i32\n  }\n}\n",
    )
    .unwrap();
    let (ok, _, err) =
        fnabi(&["run", ll.to_str().unwrap(), "-f", "main", "--pass-option", "arith-expand:include-bf16=false"]);
    assert!(!ok && err.contains("--pass-option applies to MLIR source with func.func functions"), "{err}");
}

#[test]
fn empty_and_headerless_files_say_so() {
    let d = tmpdir("empty");
    let empty = d.join("empty.mlir");
    std::fs::write(&empty, "  \n").unwrap();
    let (ok, _, err) = fnabi(&["run", empty.to_str().unwrap()]);
    assert!(!ok && err.contains("is empty") && err.lines().count() == 1, "{err}");
    let bare = d.join("bare.mlir");
    std::fs::write(&bare, "// only a comment\nmodule {\n}\n").unwrap();
    let (ok, _, err) = fnabi(&["run", bare.to_str().unwrap()]);
    assert!(!ok && err.contains("no function to call") && err.lines().count() == 1, "{err}");
    // Errors in LLVM-level inputs name the user's file and line.
    let ll = d.join("broken.ll");
    std::fs::write(&ll, "define i32 @main() {\n  ret i32 %x\n}\n").unwrap();
    let (ok, _, err) = fnabi(&["run", ll.to_str().unwrap()]);
    assert!(!ok && err.contains("broken.ll:2:11: error: use of undefined value '%x'"), "{err}");
    let dialect = d.join("broken_llvm.mlir");
    std::fs::write(
        &dialect,
        "module {\n  llvm.func @main() -> i32 {\n    %0 = llvm.mlir.constant(1 : i32) : i32\n    llvm.return %0 : i64\n  }\n}\n",
    )
    .unwrap();
    let (ok, _, err) = fnabi(&["run", dialect.to_str().unwrap()]);
    assert!(!ok && err.contains("broken_llvm.mlir:4:17: error:"), "{err}");
    assert!(!err.contains("input.mlir") && !err.contains("lowered.mlir"), "{err}");
}

/// A folder of unsuffixed links to the suffixed tools of `v`.
fn unsuffixed_tools(name: &str, v: u32) -> common::Scratch {
    let d = tmpdir(name);
    for t in ["mlir-opt", "mlir-translate", "opt", "llc", "llvm-config"] {
        let target = Path::new("/usr/bin").join(format!("{t}-{v}"));
        assert!(target.is_file(), "{} is missing: apt-get install mlir-{v}-tools llvm-{v}", target.display());
        std::os::unix::fs::symlink(&target, d.join(t)).unwrap();
    }
    d
}

fn version() -> u32 {
    [22, 19]
        .into_iter()
        .find(|v| Path::new(&format!("/usr/bin/mlir-opt-{v}")).is_file())
        .expect("the MLIR tools: apt-get install mlir-22-tools llvm-22 (scripts/test.sh installs them)")
}

fn run_with_env(envs: &[(&str, &Path)], path: &str) -> (bool, String, String) {
    let src = repo(STRUCTURED);
    let out = Command::new(env!("CARGO_BIN_EXE_fnabi"))
        .args(["run", src.to_str().unwrap(), "-f", "scale_kw", "-i", "2", "-i", "2xf32=1 2", "--print-pipeline"])
        .envs(envs.iter().map(|(k, v)| (*k, v.as_os_str())))
        .env("PATH", path)
        .env("CC", "/usr/bin/cc")
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn tools_are_found_in_fnabi_mlir_tools_and_unsuffixed_on_path() {
    let v = version();
    let tools = unsuffixed_tools("tools", v);
    // FNABI_MLIR_TOOLS names the folder (PATH has no MLIR tools at all).
    let cache = tmpdir("cache1");
    // (PATH has Debian's suffixed tools, which FNABI_MLIR_TOOLS overrides.)
    let (ok, out, err) = run_with_env(&[("FNABI_MLIR_TOOLS", &tools), ("FNABI_CACHE_DIR", &cache)], "/usr/bin:/bin");
    assert!(ok, "{err}");
    assert_eq!(out, "2xf32=2 4\n");
    assert!(err.contains("\n  mlir-opt input.mlir") || err.contains("\n  mlir-opt structured.mlir"), "{err}");
    // Unsuffixed tools on PATH (beside a folder with only the C toolchain).
    let cc = tmpdir("cc");
    for t in ["cc", "as", "ld"] {
        std::os::unix::fs::symlink(Path::new("/usr/bin").join(t), cc.join(t)).unwrap();
    }
    let cache = tmpdir("cache2");
    let path = format!("{}:{}", tools.display(), cc.display());
    let (ok, out, err) = run_with_env(&[("FNABI_CACHE_DIR", &cache)], &path);
    assert!(ok, "{err}");
    assert_eq!(out, "2xf32=2 4\n");
    assert!(err.contains("\n  mlir-opt "), "{err}");
    // A folder without the tools is named in the error.
    let empty = tmpdir("no-tools");
    let (ok, _, err) = run_with_env(&[("FNABI_MLIR_TOOLS", &empty), ("FNABI_CACHE_DIR", &cache)], "/usr/bin");
    assert!(!ok && err.contains("FNABI_MLIR_TOOLS") && err.contains("no-tools"), "{err}");
}

#[test]
fn compiles_show_progress_on_a_terminal_only() {
    let src = repo(STRUCTURED);
    let cmd = format!("{} run {} -f scale_kw -i 2 -i '2xf32=1 2'", env!("CARGO_BIN_EXE_fnabi"), src.to_str().unwrap());
    // `script` (util-linux) gives the command a terminal; a fresh cache
    // makes it compile; the threshold 0 makes the line show at once.
    let run = |terminal: bool| {
        let cache = tmpdir(if terminal { "progress-tty" } else { "progress-pipe" });
        common::run_for_progress(&cmd, terminal, &cache)
    };
    let tty = run(true);
    assert!(tty.contains("fnabi: compiling structured.mlir: "), "{tty:?}");
    assert!(tty.contains("2xf32=2 4"), "{tty:?}");
    let piped = run(false);
    assert_eq!(piped, "2xf32=2 4\n");
}

#[test]
fn an_integration_test_style_main_prints_what_mlir_runner_prints() {
    let v = version();
    let d = tmpdir("runner");
    let src = repo("crates/fnabi/tests/mlir/llvm_entry_print.mlir");
    let lowered = d.join("print_llvm.mlir");
    let out = Command::new(format!("/usr/bin/mlir-opt-{v}"))
        .arg(&src)
        .args([
            "--convert-vector-to-scf",
            "--convert-scf-to-cf",
            "--convert-vector-to-llvm",
            "--convert-arith-to-llvm",
            "--convert-cf-to-llvm",
            "--convert-func-to-llvm",
            "--reconcile-unrealized-casts",
            "-o",
        ])
        .arg(&lowered)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let checks: String = std::fs::read_to_string(&src)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("// CHECK: "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(checks.lines().count(), 3);
    let (ok, out, err) = fnabi(&["run", lowered.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(out, checks);
    // Upstream's runner agrees.
    let utils = format!("/usr/lib/llvm-{v}/lib/libmlir_c_runner_utils.so.{v}.1");
    let runner = Command::new(format!("/usr/bin/mlir-runner-{v}"))
        .args(["-e", "main", "-entry-point-result=void", &format!("--shared-libs={utils}")])
        .arg(&lowered)
        // Its JIT (LLVM's perf listener) writes .debug/jit/*.dump under
        // JITDUMPDIR, else the temporary folder: into the scratch folder.
        .env("JITDUMPDIR", &*d)
        .output()
        .unwrap();
    assert!(runner.status.success(), "{}", String::from_utf8_lossy(&runner.stderr));
    assert_eq!(String::from_utf8_lossy(&runner.stdout), checks);
}

#[test]
fn tensor_level_linalg_and_libm_match_numpy() {
    let src = repo("crates/fnabi/tests/mlir/cross_backend.mlir");
    let src = src.to_str().unwrap();
    let run = |f: &str, inputs: &[&str]| {
        let mut args = vec!["run", src, "-f", f, "--output", "json"];
        for i in inputs {
            args.extend(["-i", i]);
        }
        let (ok, out, err) = fnabi(&args);
        assert!(ok, "{f}: {err}");
        common::json_data(&out)
    };
    let want = |script: &str| -> Vec<f64> {
        common::python(&format!("import numpy as np, json\n{script}"))
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect()
    };
    let close = |got: &[f64], want: &[f64], rtol: f64| {
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= rtol * w.abs().max(1.0), "{got:?} vs {want:?}");
        }
    };
    // math.exp lowers to libm's expf, linked --as-needed.
    let got = run("scaled_exp", &["2x3xf32=0 1 -1 2 0.5 -2", "2"]);
    let np = want("x = np.array([[0, 1, -1], [2, 0.5, -2]], np.float32)\nprint(*(np.exp(x) * np.float32(2)).ravel())");
    close(&got, &np, 1e-6);
    let got = run("dense_relu", &["2x4xf32=1 2 3 4 -1 0 1 0", "4x3xf32=1 0 -1 0 1 0 1 1 1 -1 0 0", "3xf32=0.5 -10 0"]);
    let np = want(
        "x = np.array([[1, 2, 3, 4], [-1, 0, 1, 0]], np.float32)\n\
         w = np.array([[1, 0, -1], [0, 1, 0], [1, 1, 1], [-1, 0, 0]], np.float32)\n\
         b = np.array([0.5, -10, 0], np.float32)\nprint(*np.maximum(x @ w + b, 0).ravel())",
    );
    close(&got, &np, 1e-6);
    let got = run("sum_and_double", &["4xi32=1 -2 3 10"]);
    let np = want("x = np.array([1, -2, 3, 10], np.int32)\nprint(x.sum(), *(2 * x))");
    close(&got, &np, 0.0);
}

#[test]
fn llvm_level_modules_inspect_and_run_through_the_binary() {
    let v = version();
    let d = tmpdir("llvm-level");
    let (m, ll, bc) = (d.join("user.mlir"), d.join("user.ll"), d.join("user.bc"));
    let tool = |t: &str, args: &[&Path], flags: &[&str]| {
        let out = Command::new(format!("/usr/bin/{t}-{v}")).args(flags).args(args).output().unwrap();
        assert!(out.status.success(), "{t}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let src = repo("crates/fnabi/tests/mlir/llvm_entry.mlir");
    tool(
        "mlir-opt",
        &[&src, Path::new("-o"), &m],
        &[
            "--convert-scf-to-cf",
            "--expand-strided-metadata",
            "--finalize-memref-to-llvm",
            "--convert-arith-to-llvm",
            "--convert-index-to-llvm",
            "--convert-cf-to-llvm",
            "--convert-func-to-llvm",
            "--reconcile-unrealized-casts",
        ],
    );
    tool("mlir-translate", &[&m, Path::new("-o"), &ll], &["--mlir-to-llvmir"]);
    tool("llvm-as", &[&ll, Path::new("-o"), &bc], &[]);
    for f in [&m, &ll, &bc] {
        let f = f.to_str().unwrap();
        let (ok, out, err) = fnabi(&["inspect", f]);
        assert!(ok, "{err}");
        assert!(out.contains("4 callable function(s)"), "{out}");
        assert!(out.contains("@main() -> (i32)  (called as @main)"), "{out}");
        assert!(out.contains("@dot: @_mlir_ciface_dot(ptr, ptr) -> f32 takes pointers"), "{out}");
        // 1² + … + 10² = 385; 1·4 + 2·5 + 3·6 = 32.
        let (ok, out, err) = fnabi(&["run", f, "-f", "main"]);
        assert!(ok && out == "385\n", "{out} {err}");
        let sig = "(memref<?xf32>, memref<?xf32>) -> f32";
        let (ok, out, err) =
            fnabi(&["run", f, "-f", "dot", "--signature", sig, "-i", "3xf32=1 2 3", "-i", "3xf32=4 5 6"]);
        assert!(ok && out == "32\n", "{out} {err}");
        let (ok, _, err) = fnabi(&["run", f, "-f", "dot", "-i", "3xf32=1 2 3", "-i", "3xf32=4 5 6"]);
        assert!(!ok && err.contains("--signature") && err.lines().count() == 1, "{err}");
    }
    // Every level from stdin too (bitcode known by its magic bytes), run
    // and inspected; and bitcode under a name without `.bc`.
    for f in [&m, &ll, &bc] {
        let bytes = std::fs::read(f).unwrap();
        let (ok, out, err) = common::fnabi_bytes(["run", "--module=-", "-f", "main"], &bytes);
        assert!(ok && out == "385\n", "{f:?}: {out} {err}");
        let (ok, out, err) = common::fnabi_bytes(["inspect", "-"], &bytes);
        assert!(ok && out.starts_with("<stdin>: ") && out.contains("@main() -> (i32)"), "{f:?}: {out} {err}");
    }
    let unnamed = d.join("user-bitcode");
    std::fs::copy(&bc, &unnamed).unwrap();
    let (ok, out, err) = fnabi(&["run", unnamed.to_str().unwrap(), "-f", "main"]);
    assert!(ok && out == "385\n", "{out} {err}");
    let (ok, out, err) = fnabi(&["inspect", unnamed.to_str().unwrap()]);
    assert!(ok && out.contains("LLVM bitcode, 4 callable function(s)"), "{out} {err}");
}

/// MLIR source from stdin is checked as a file is, and its errors name
/// `<stdin>`: an empty source, one without a function, one that only
/// declares, text that is not UTF-8, a compile error at its line.
#[test]
fn source_from_stdin_is_checked_as_a_file_is() {
    let d = tmpdir("stdin-source");
    let cases: [(&[u8], &str); 5] = [
        (b" \n", "fnabi: error: <stdin> is empty: there is nothing to compile\n"),
        (
            b"module {}\n",
            "fnabi: error: <stdin> has no function to call: no `func.func` (MLIR source) or `llvm.func` (LLVM dialect) in it\n",
        ),
        (b"func.func private @f(i32) -> i32\n", "fnabi: error: <stdin> defines no public function to call\n"),
        (b"\xff\xfe", "fnabi: error: <stdin> is not UTF-8 text: invalid utf-8 sequence of 1 bytes from index 0\n"),
        (
            b"func.func @f(%x: i32) -> i32 {\n  %y = arith.addi %x, %z : i32\n  return %y : i32\n}\n",
            "<stdin>:2:23: error: use of undeclared SSA value name",
        ),
    ];
    for (source, want) in cases {
        let (ok, _, err) = common::fnabi_bytes(["run", "--module=-", "-i", "1"], source);
        assert!(!ok && err.contains(want), "{:?}: {err}", String::from_utf8_lossy(source));
        // A file says the same of itself.
        let file = d.join("m.mlir");
        std::fs::write(&file, source).unwrap();
        let (ok, _, err) = common::fnabi(["run", file.to_str().unwrap(), "-i", "1"], "");
        let mine = want.replace("<stdin>", file.to_str().unwrap());
        assert!(!ok && err.contains(&mine), "{:?}: {err}", String::from_utf8_lossy(source));
    }
}
