//! Soak and leak checks (issue 18): many calls of real MLIR-compiled code
//! leave the resident set size flat — prepared calls that bind an array each
//! time, and whole `Function` calls whose results the callee allocates and
//! fnabi frees — and eight threads calling one `Function` get correct
//! results. The bounds are on RSS growth after a warm-up, read from
//! `/proc/self/status`.

use fnabi::mlir::{Arg, MlirLibrary, MlirModule, Scalar};
use fnabi::{Array, Function, Value};
use std::sync::OnceLock;

/// Resident set size in KiB.
fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Growth allowed after the warm-up: far below what a leak of one small
/// allocation per call (≥ 16 bytes × the calls) would add.
const GROWTH_KIB: u64 = 2048;

/// The tests run one at a time: RSS is the whole process's.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn dict8() -> Function {
    static M: OnceLock<MlirModule> = OnceLock::new();
    let m = M.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mlir/sip_dict8.mlir");
        // SAFETY: dict8 only reads its arguments and returns fresh memory.
        unsafe { MlirModule::load(path) }.unwrap()
    });
    m.function("dict8").unwrap()
}

fn dict8_args(scale: f32) -> Value<'static> {
    Value::Tuple(vec![Value::dict(
        (0..8).map(|k| (format!("k{k}"), Value::from(Array::from_vec(&[4], vec![k as f32 * scale; 4]).unwrap()))),
    )])
}

#[test]
fn prepared_calls_do_not_grow_memory() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mlir/memref_abi.mlir")).unwrap();
    // SAFETY: first_f32 only reads its argument.
    let lib = unsafe { MlirLibrary::compile(&src) }.unwrap();
    let f = lib.function("first_f32").unwrap();
    let x = Array::from_vec(&[16], (0..16).map(|v| v as f32 + 7.0).collect()).unwrap();
    let mut p = f.prepare();
    let mut run = |n: usize| {
        for _ in 0..n {
            assert_eq!(p.call(&mut [Arg::Array(&x)]).unwrap().scalar(0), Some(Scalar::F32(7.0)));
        }
    };
    run(20_000);
    let before = rss_kib();
    run(1_000_000);
    let grown = rss_kib().saturating_sub(before);
    assert!(grown < GROWTH_KIB, "1M prepared calls grew RSS by {grown} KiB");
}

#[test]
fn function_calls_free_their_results() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let f = dict8();
    let Value::Tuple(args) = dict8_args(1.0) else { unreachable!() };
    let call = || {
        let r = f.call(args.clone()).unwrap();
        assert_eq!(r.as_array().unwrap().as_slice::<f32>().unwrap(), [28.0; 4]);
    };
    for _ in 0..5_000 {
        call();
    }
    let before = rss_kib();
    for _ in 0..100_000 {
        call();
    }
    let grown = rss_kib().saturating_sub(before);
    assert!(grown < GROWTH_KIB, "100k Function::call of dict8 grew RSS by {grown} KiB");
}

#[test]
fn eight_threads_share_one_function() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let f = dict8();
    std::thread::scope(|s| {
        for t in 0..8 {
            let f = &f;
            s.spawn(move || {
                let scale = t as f32 + 1.0;
                let args = dict8_args(scale);
                let mut p = f.prepare();
                for _ in 0..20_000 {
                    let r = p.call_bound(&args).unwrap();
                    // sum over k of k * scale = 28 * scale, exact in f32.
                    assert_eq!(r.as_array().unwrap().as_slice::<f32>().unwrap(), [28.0 * scale; 4]);
                }
            });
        }
    });
}
