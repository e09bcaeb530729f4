//! Mutated `.vmfb` modules loaded and called through the IREE backend
//! (`fnabi-iree`, IREE's runtime built by CMake): fnabi checks the ZIP
//! (sizes, CRC-32 of every entry) and the FlatBuffer before the runtime sees
//! the bytes, so any bytes load or fail with an error, never a crash; the
//! intact fixture's `add` computes 1 + 2 = 3.
#![no_main]
use fnabi::{Array, Value};
use fnabi_iree::{Device, IreeModule};
use libfuzzer_sys::fuzz_target;

const ADD: &[u8] = include_bytes!("../../crates/fnabi/tests/fixtures/iree/add.vmfb");

fuzz_target!(|data: &[u8]| {
    // SAFETY: the module's code runs in-process, which is what this target
    // tries: IREE's runtime only sees bytes that passed fnabi's checks.
    let Ok(module) = (unsafe { IreeModule::from_bytes(data, Device::LocalSync) }) else { return };
    let Ok(f) = module.function("add") else { return };
    let arg = |x: f32| Value::from(Array::from_vec(&[4], vec![x; 4]).unwrap());
    let r = f.call([arg(1.0), arg(2.0)]);
    if data == ADD {
        let r = r.unwrap();
        assert_eq!(r.as_array().unwrap().to_vec::<f32>().unwrap(), [3.0; 4]);
    }
});
