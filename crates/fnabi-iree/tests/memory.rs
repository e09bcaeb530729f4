//! 100 000 calls do not grow memory: every list, buffer view, buffer,
//! mapping, fence and status the calls create is released. Resident memory
//! is read from /proc/self/statm before and after, after a warm-up that
//! fills the allocator's caches and the staged buffers. One test per binary
//! run keeps other tests' allocations out of the measurement.

use fnabi::{Array, Value};
use fnabi_iree::{Device, IreeModule};

fn path(name: &str) -> String {
    format!("{}/../fnabi/tests/fixtures/iree/{name}.vmfb", env!("CARGO_MANIFEST_DIR"))
}

/// Resident set size in bytes.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm.split_whitespace().nth(1).and_then(|s| s.parse().ok()).expect("resident pages");
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc_page_size() };
    pages * page
}

unsafe extern "C" {
    fn getpagesize() -> i32;
}

/// # Safety
/// None: `getpagesize` only reads a constant.
unsafe fn libc_page_size() -> usize {
    // SAFETY: no preconditions.
    unsafe { getpagesize() as usize }
}

/// Allowed growth: far less than one leaked 16-byte buffer per call
/// (100 000 calls x ~200 bytes of IREE objects = 20 MB).
const TOLERANCE: usize = 2 << 20;

#[test]
fn a_hundred_thousand_calls_do_not_grow_memory() {
    // SAFETY: the repository's fixture modules.
    let add = unsafe { IreeModule::load(path("add"), Device::LocalSync) }.unwrap();
    // SAFETY: as above.
    let nested = unsafe { IreeModule::load(path("nested"), Device::LocalSync) }.unwrap();
    // SAFETY: as above.
    let asy = unsafe { IreeModule::load(path("async"), Device::LocalSync) }.unwrap();
    let add_one = add.function("add_one").unwrap();
    let deep = nested.function("nested_deep").unwrap();
    let add_async = asy.function("add_async").unwrap();
    let x = Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let arg = Value::dict([
        ("a", Value::List(vec![Value::from(x.clone()), Value::from(x.clone())])),
        ("b", Value::dict([("c", Value::from(x.clone()))])),
    ]);
    let round = |n: usize| {
        let mut p = deep.prepare();
        for i in 0..n {
            // Plain calls (pooled states), prepared calls, async calls, and
            // a failing call now and then.
            let out = add_one.call([Value::from(x.clone())]).unwrap();
            assert_eq!(out.as_array().unwrap().get::<f32>(&[3]).unwrap(), 5.0);
            if i % 4 == 0 {
                let out = p.call_bound(&Value::Tuple(vec![arg.clone(), Value::Float(2.0)])).unwrap();
                assert!(matches!(out, Value::Tuple(_)));
            }
            if i % 16 == 0 {
                add_async.call([Value::from(x.clone()), Value::from(x.clone())]).unwrap();
                assert!(add_one.call([Value::Int(1)]).is_err());
            }
        }
    };
    round(10_000);
    let before = rss();
    round(100_000);
    let after = rss();
    let grown = after.saturating_sub(before);
    assert!(grown < TOLERANCE, "resident memory grew by {grown} bytes over 100 000 calls ({before} -> {after})");
}
