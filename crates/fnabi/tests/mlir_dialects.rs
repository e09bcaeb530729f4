//! The dialects front ends emit besides linalg on tensors — affine, vector,
//! math, async, scf — lowered by fnabi's default pipeline:
//! `tests/mlir/dialects.mlir` prints through MLIR's runtime utilities and
//! carries `// CHECK:` lines derived by hand; each function's stdout is
//! matched against them, as MLIR's own integration tests are. Also MLIR's
//! runtime op verification (`tests/mlir/verify.mlir`): an out-of-bounds
//! access is reported (and aborts, in a child process) instead of
//! corrupting memory. Also run under valgrind by `scripts/test.sh`.

mod filecheck;

use fnabi::Value;
use fnabi::mlir::{CompileOptions, MlirModule};
use std::process::Command;

fn fixture(name: &str) -> String {
    format!("{}/tests/mlir/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// What `f` writes to file descriptor 1 (C's stdout included).
fn capture_stdout(f: impl FnOnce()) -> String {
    use std::io::Write;
    let path = std::env::temp_dir().join(format!("fnabi-stdout-{}.txt", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let _ = std::io::stdout().flush();
    // SAFETY: plain descriptor juggling; descriptor 1 is restored below.
    let saved = unsafe {
        libc::fflush(std::ptr::null_mut());
        let saved = libc::dup(1);
        libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&file), 1);
        saved
    };
    f();
    let _ = std::io::stdout().flush();
    // SAFETY: as above.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::dup2(saved, 1);
        libc::close(saved);
    }
    drop(file);
    let out = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    out
}

#[test]
fn dialects_print_what_their_check_lines_say() {
    let path = fixture("dialects.mlir");
    // SAFETY: the fixture writes only into memory it allocates.
    let m = unsafe { MlirModule::load(&path) }.unwrap_or_else(|e| panic!("compiling {path}: {e}"));
    let entries = ["affine_squares", "vector_ops", "math_ops", "async_tasks", "scf_loops", "vector_helper"];
    let out = capture_stdout(|| {
        for e in entries {
            let r = m.function(e).unwrap().call(Vec::<Value<'_>>::new()).unwrap();
            assert!(matches!(r, Value::None), "@{e} returned {r:?}");
        }
    });
    let source = std::fs::read_to_string(&path).unwrap();
    let directives = filecheck::directives(&source);
    assert!(directives.len() >= 15, "{directives:?}");
    filecheck::check(&out, &directives).unwrap_or_else(|e| panic!("{path}: {e}\noutput:\n{out}"));
}

fn verify_module(on: bool) -> MlirModule {
    let options = CompileOptions::default().with_runtime_verification(on);
    // SAFETY: the fixture's functions only read their arguments (with
    // verification, an out-of-bounds read aborts before it happens).
    unsafe { MlirModule::load_with(fixture("verify.mlir"), &options) }.unwrap()
}

fn tensor4() -> Value<'static> {
    Value::from(fnabi::Array::from_vec(&[4], vec![1f32, 2., 3., 4.]).unwrap())
}

#[test]
fn verified_code_runs_in_bounds() {
    for on in [false, true] {
        let m = verify_module(on);
        let v = m.function("element").unwrap().call([tensor4(), Value::from(2i64)]).unwrap();
        assert!(matches!(v, Value::Float(x) if x == 3.0), "{v:?}");
        let a = fnabi::Array::from_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
        let v = m.function("load").unwrap().call([Value::from(a), Value::from(1i64), Value::from(2i64)]).unwrap();
        assert!(matches!(v, Value::Int(6)), "{v:?}");
    }
}

/// In a child process (this test binary, re-run on one test): an
/// out-of-bounds access with verification on.
#[test]
fn out_of_bounds_is_reported_with_the_users_line() {
    if let Ok(which) = std::env::var("FNABI_VERIFY_CHILD") {
        let m = verify_module(true);
        if which == "element" {
            let _ = m.function("element").unwrap().call([tensor4(), Value::from(4i64)]);
        } else {
            let a = fnabi::Array::from_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
            let _ = m.function("load").unwrap().call([Value::from(a), Value::from(0i64), Value::from(3i64)]);
        }
        unreachable!("the verified access did not abort");
    }
    for (which, line) in [("element", "\"verify.mlir\":5:8"), ("load", "\"verify.mlir\":10:8")] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "out_of_bounds_is_reported_with_the_users_line", "--nocapture", "--test-threads=1"])
            .env("FNABI_VERIFY_CHILD", which)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{which}: {stderr}");
        assert!(stderr.contains("ERROR: Runtime op verification failed"), "{which}: {stderr}");
        assert!(stderr.contains("out-of-bounds"), "{which}: {stderr}");
        assert!(stderr.contains(line), "{which}: {stderr}");
    }
}
