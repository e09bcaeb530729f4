//! JSON form of values: never panics; whatever parses is written in a form
//! that reads back to a value written identically (a fixpoint; NaN-safe).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = fnabi::json::from_slice(data) else { return };
    let s = fnabi::json::to_string(&v);
    let back = fnabi::json::from_str(&s).expect("written JSON reads back");
    assert_eq!(fnabi::json::to_string(&back), s);
});
