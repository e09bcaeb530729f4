//! `fnabi externals` on the MLIR fixtures: who provides each external
//! function, and the one-line error for the missing ones.

mod common;

use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fnabi/tests/mlir").join(name)
}

fn run(path: &std::path::Path) -> (bool, String, String) {
    common::fnabi([std::ffi::OsStr::new("externals"), path.as_os_str()], "")
}

#[test]
fn runtime_utilities_are_provided() {
    let path = fixture("print_utils.mlir");
    let (ok, out, err) = run(&path);
    assert!(ok, "{err}");
    let lines: Vec<String> = out.lines().map(|l| l.replace(".so.19.1", ".so.22.1")).collect();
    assert_eq!(lines[0], format!("{}: 5 external functions", path.display()));
    assert_eq!(
        lines[1..],
        [
            "  @printMemrefF32: (memref<*xf32>) -> ()  libmlir_runner_utils.so.22.1",
            "  @printMemrefI32: (memref<*xi32>) -> ()  libmlir_runner_utils.so.22.1",
            "  @printF32: (f32) -> ()  libmlir_c_runner_utils.so.22.1 (plain function, through a shim)",
            "  @printI64: (i64) -> ()  libmlir_c_runner_utils.so.22.1 (plain function, through a shim)",
            "  @printNewline: () -> ()  libmlir_c_runner_utils.so.22.1 (plain function, through a shim)",
        ]
    );
}

#[test]
fn missing_functions_are_an_error_and_modules_without_any_say_so() {
    let (ok, out, err) = run(&fixture("host_op.mlir"));
    assert!(!ok);
    assert!(out.ends_with("  @host_op: (i64) -> (i64)  missing\n"), "{out}");
    assert_eq!(
        err,
        "fnabi: error: the module needs @host_op: (i64) -> (i64), which no host function or runtime library provides\n"
    );
    let path = fixture("memref_abi.mlir");
    let (ok, out, _) = run(&path);
    assert!(ok);
    assert_eq!(out, format!("{}: no external functions\n", path.display()));
    let (ok, _, err) = run(&fixture("no_such_file.mlir"));
    assert!(!ok && err.starts_with("fnabi: error: cannot read "), "{err}");
    let dir = common::Scratch::new("externals");
    let bad = dir.join("bad.mlir");
    std::fs::write(&bad, "func.func private @f(vector<4xf32>)\n").unwrap();
    let (ok, _, err) = run(&bad);
    assert!(!ok && err.contains(": line 1:"), "{err}");
}
