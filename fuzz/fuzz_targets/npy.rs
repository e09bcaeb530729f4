//! The .npy reader: never panics; whatever it reads writes back (in
//! NumPy's canonical form) and reads again to the same array.
#![no_main]
use fnabi::npy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match npy::read(data) {
        Ok(a) => {
            let h = npy::read_header(data).unwrap();
            assert_eq!((h.dtype, h.shape.as_slice()), (a.dtype(), a.shape()));
            let bytes = npy::to_bytes(&a).unwrap();
            let back = npy::read(&bytes).unwrap();
            assert_eq!(back, a);
            assert_eq!(npy::to_bytes(&back).unwrap(), bytes);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
