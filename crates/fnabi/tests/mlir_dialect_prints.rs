//! The dialects front ends emit besides linalg on tensors — affine, vector,
//! math, async, scf — lowered by fnabi's default pipeline:
//! `tests/mlir/dialects.mlir` prints through MLIR's runtime utilities and
//! carries `// CHECK:` lines derived by hand; each function's stdout is
//! matched against them, as MLIR's own integration tests are. Also run under
//! valgrind by `scripts/test.sh`.
//!
//! The output is taken from file descriptor 1 while the functions run, so
//! nothing else may write there meanwhile: under libtest, another test's
//! `test … ok` line landed in the capture (CI, stop 28). Hence this file has
//! its own `main` (`harness = false`) and runs its one check alone.

mod common;
mod filecheck;
#[path = "support/harness.rs"]
mod harness;

use fnabi::Value;
use fnabi::mlir::MlirModule;

fn main() {
    harness::run_tests(&[("dialects_print_what_their_check_lines_say", dialects_print_what_their_check_lines_say)]);
}

/// What `f` writes to file descriptor 1 (C's stdout included).
fn capture_stdout(f: impl FnOnce()) -> String {
    use std::io::Write;
    let dir = common::Scratch::new("stdout");
    let path = dir.join("stdout.txt");
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
    std::fs::read_to_string(&path).unwrap()
}

fn dialects_print_what_their_check_lines_say() {
    let path = format!("{}/tests/mlir/dialects.mlir", env!("CARGO_MANIFEST_DIR"));
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
