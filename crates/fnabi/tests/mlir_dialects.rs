//! Lowerings of the dialects front ends emit besides linalg on tensors
//! (`tests/mlir/dialects.mlir`; what it prints is checked by
//! `mlir_dialect_prints`, alone in its process), and MLIR's runtime op
//! verification (`tests/mlir/verify.mlir`): an out-of-bounds access is
//! reported (and aborts, in a child process) instead of corrupting memory.
//! Also run under valgrind by `scripts/test.sh`.

// The FileCheck matcher's own test runs here (a `harness = false` binary
// compiles no `#[test]`).
mod filecheck;

use fnabi::Value;
use fnabi::mlir::{CompileOptions, MlirModule};
use std::process::Command;

fn fixture(name: &str) -> String {
    format!("{}/tests/mlir/{name}", env!("CARGO_MANIFEST_DIR"))
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

/// An out-of-bounds access with verification on is a typed error naming
/// the user's line, in this process (the check jumps back to the call), and
/// the module keeps working afterwards.
#[test]
fn out_of_bounds_is_reported_with_the_users_line() {
    let m = verify_module(true);
    let a = || fnabi::Array::from_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
    for _round in 0..2 {
        // The path the module was loaded from, as compile errors name it
        // (the compiled code's locations carry the staged name).
        let path = fixture("verify.mlir");
        for (which, line) in [("element", format!("{path}:5:8")), ("load", format!("{path}:10:8"))] {
            let e = match which {
                "element" => m.function("element").unwrap().call([tensor4(), Value::from(4i64)]),
                _ => m.function("load").unwrap().call([Value::from(a()), Value::from(0i64), Value::from(3i64)]),
            }
            .unwrap_err();
            match e.backend_error::<fnabi::mlir::MlirError>() {
                Some(fnabi::mlir::MlirError::RuntimeCheck { function, report }) => {
                    assert_eq!(function, which);
                    assert!(report.starts_with("ERROR: Runtime op verification failed\n"), "{report}");
                    assert!(report.contains("^ out-of-bounds access"), "{report}");
                }
                _ => panic!("{which}: not a runtime check failure: {e:?}"),
            }
            let first = e.to_string().lines().next().unwrap().to_owned();
            assert_eq!(first, format!("@{which}: runtime op verification failed at {line}: out-of-bounds access"));
        }
        // An op on a header line fnabi edited: the user's column, which
        // is where `tensor.extract` stands in the file.
        let text = std::fs::read_to_string(fixture("verify.mlir")).unwrap();
        let (n, line) = text.lines().enumerate().find(|(_, l)| l.contains("@element_on_one_line")).unwrap();
        let column = line.find("tensor.extract").unwrap() + 1;
        let e = m.function("element_on_one_line").unwrap().call([tensor4(), Value::from(9i64)]).unwrap_err();
        let first = e.to_string().lines().next().unwrap().to_owned();
        let at = format!("{path}:{}:{column}", n + 1);
        assert_eq!(
            first,
            format!("@element_on_one_line: runtime op verification failed at {at}: out-of-bounds access")
        );
        assert!(e.to_string().contains(&format!("\"{path}\":{}:{column}", n + 1)), "{e}");
        // In bounds, the same functions answer.
        let v = m.function("element").unwrap().call([tensor4(), Value::from(3i64)]).unwrap();
        assert!(matches!(v, Value::Float(x) if x == 4.0), "{v:?}");
    }
    // With checks, calls take the general path, which a bound call cannot.
    let f = m.library().function("load").unwrap();
    let a = a();
    let args = [fnabi::mlir::Arg::Array(&a), fnabi::mlir::Arg::Int(1), fnabi::mlir::Arg::Int(2)];
    let mut prepared = f.prepare();
    let e = prepared.bind(&args).err().unwrap();
    assert!(e.to_string().contains("runtime checks"), "{e}");
    // Without verification the module has no guard: bound calls work.
    let plain = verify_module(false);
    let f = plain.library().function("load").unwrap();
    let mut prepared = f.prepare();
    assert_eq!(prepared.bind(&args).unwrap().invoke().scalar(0), Some(fnabi::mlir::Scalar::I32(6)));
}

/// Dynamic dims that an elementwise op on tensors needs equal are checked
/// too (`arith.addf` of 3 and 2 rows read out of bounds: arith's own
/// verification does not compare operand shapes; fnabi turns such ops
/// into linalg before instrumenting), at the user's line of the op.
#[test]
fn elementwise_ops_on_tensors_are_checked() {
    let m = verify_module(true);
    let f = m.function("dyn_add_arith").unwrap();
    let rows = |n: usize| Value::from(fnabi::Array::from_vec(&[n, 4], vec![1f32; n * 4]).unwrap());
    let v = f.call([rows(2), rows(2)]).unwrap();
    assert_eq!(v.as_array().unwrap().to_vec::<f32>().unwrap(), [2f32; 8]);
    let e = f.call([rows(3), rows(2)]).unwrap_err();
    assert!(
        matches!(e.backend_error::<fnabi::mlir::MlirError>(), Some(fnabi::mlir::MlirError::RuntimeCheck { .. })),
        "{e}"
    );
    let text = std::fs::read_to_string(fixture("verify.mlir")).unwrap();
    let (n, line) = text.lines().enumerate().find(|(_, l)| l.contains("arith.addf")).unwrap();
    let at = format!("{}:{}:{}", fixture("verify.mlir"), n + 1, line.find("arith.addf").unwrap() + 1);
    let first = e.to_string().lines().next().unwrap().to_owned();
    assert!(
        first.starts_with(&format!("@dyn_add_arith: runtime op verification failed at {at}: dimension #0")),
        "{first}"
    );
}

/// A failed check in a child process that does not go through fnabi's call
/// (the C glue's abort path) still prints the report and aborts: the same
/// module, its function called straight through its C symbol.
#[test]
fn a_check_outside_a_guarded_call_aborts_with_the_report() {
    if std::env::var_os("FNABI_VERIFY_CHILD").is_some() {
        let m = verify_module(true);
        let fp = m.library().function("load").unwrap().symbol_address();
        // SAFETY: the test calls `_mlir_ciface_load` with a descriptor of a
        // live 2x3 i32 array and an out-of-range column: the runtime check
        // fires before any access (and aborts this child).
        unsafe {
            let f =
                std::mem::transmute::<*const std::ffi::c_void, unsafe extern "C" fn(*const i64, i64, i64) -> i32>(fp);
            let data = [1i32, 2, 3, 4, 5, 6];
            let desc = [data.as_ptr() as i64, data.as_ptr() as i64, 0, 2, 3, 3, 1];
            f(desc.as_ptr(), 0, 3);
        }
        unreachable!("the verified access did not abort");
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_check_outside_a_guarded_call_aborts_with_the_report", "--nocapture", "--test-threads=1"])
        .env("FNABI_VERIFY_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{stderr}");
    assert!(stderr.contains("ERROR: Runtime op verification failed"), "{stderr}");
    assert!(stderr.contains("\"verify.mlir\":10:8"), "{stderr}");
}

/// Lowerings beyond the LLVM conversions, each found missing by running
/// MLIR's own integration tests through fnabi: `math.ipowi` on run-time
/// values (convert-math-to-funcs), a `vector.mask` region
/// (lower-vector-mask), LLVM's matrix intrinsics (`opt -enable-matrix`).
/// Expected values derived by hand (see the fixture's comments).
#[test]
fn ipowi_masks_and_matrix_intrinsics_lower() {
    let path = fixture("dialects.mlir");
    // SAFETY: the fixture writes only into memory it allocates.
    let m = unsafe { MlirModule::load(&path) }.unwrap_or_else(|e| panic!("compiling {path}: {e}"));
    let ipow = m.function("ipow").unwrap();
    for (b, e, want) in [(2i64, 10i64, 1024i64), (-3, 3, -27), (7, -1, 0), (-1, -3, -1)] {
        let r = ipow.call([Value::Int(b), Value::Int(e)]).unwrap();
        assert_eq!(r, Value::Int(want), "{b}^{e}");
    }
    let three = fnabi::Array::from_vec(&[3], vec![1f32, 2., 3.]).unwrap();
    let r = m.function("masked_sum").unwrap().call([Value::from(three), Value::Int(3)]).unwrap();
    assert_eq!(r, Value::Float(6.0));
    let a = fnabi::Array::from_vec(&[6], (0..6).map(|i| i as f32).collect()).unwrap();
    let r = m.function("flat_transpose").unwrap().call([Value::from(a)]).unwrap();
    assert_eq!(r.as_array().unwrap().to_vec::<f32>().unwrap(), vec![0., 2., 4., 1., 3., 5.]);
}
