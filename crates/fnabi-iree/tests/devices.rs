//! Modules loaded, called and dropped on both devices from several threads
//! at once: every load and call succeeds. (IREE 3.13's runtime failed HAL
//! imports with `ref is null` / `ref type mismatch` when a device was
//! destroyed while the other kind's device ran; fnabi keeps each device for
//! the process since. Before that, about one run in four of this test's
//! loop failed; it runs the loop three times.)

use fnabi::Value;
use fnabi_iree::{Device, IreeModule};
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn modules_come_and_go_on_both_devices_from_many_threads() {
    let dir = format!("{}/../fnabi/tests/fixtures/iree", env!("CARGO_MANIFEST_DIR"));
    let (add, nested) = (format!("{dir}/add.vmfb"), format!("{dir}/nested.vmfb"));
    let failures = AtomicUsize::new(0);
    let first = std::sync::Mutex::new(None::<String>);
    for _round in 0..3 {
        std::thread::scope(|s| {
            for t in 0..6 {
                let (add, nested, failures, first) = (&add, &nested, &failures, &first);
                s.spawn(move || {
                    let fail = |e: String| {
                        failures.fetch_add(1, Ordering::Relaxed);
                        first.lock().unwrap().get_or_insert(e);
                    };
                    for i in 0..150 {
                        let device = if (t + i) % 2 == 0 { Device::LocalSync } else { Device::LocalTask };
                        let path = if i % 3 == 0 { nested } else { add };
                        // SAFETY: the repository's fixture modules, compiled by iree-compile 3.13.
                        let m = match unsafe { IreeModule::load(path, device) } {
                            Ok(m) => m,
                            Err(e) => {
                                fail(format!("load {path} on {device:?}: {e}"));
                                continue;
                            }
                        };
                        if path == add {
                            let x = fnabi::Array::from_vec(&[4], vec![1f32, 2., 3., 4.]).unwrap();
                            match m.function("add_one").and_then(|f| f.call([Value::from(x)])) {
                                Ok(y) => assert_eq!(y.as_array().unwrap().to_vec::<f32>().unwrap(), [2., 3., 4., 5.]),
                                Err(e) => fail(format!("call on {device:?}: {e}")),
                            }
                        }
                    }
                });
            }
        });
    }
    assert_eq!(failures.load(Ordering::Relaxed), 0, "first: {:?}", first.lock().unwrap());
}
