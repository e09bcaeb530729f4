//! IREE's array text form: parsing never panics, errors point inside the
//! input, and what parses prints in a form that parses back to the same
//! dtype and shape (and the same elements, for integer and boolean arrays).
#![no_main]
use fnabi::Value;
use fnabi::text::{format_array, parse_value};
use libfuzzer_sys::fuzz_target;

/// A single value fills an array of any shape, so a short text can ask for
/// gigabytes; that is the caller's request, not a bug: skip such inputs.
fn splat_too_big(text: &str) -> bool {
    let Some((header, _)) = text.split_once('=') else { return false };
    let mut n: u128 = 1;
    for d in header.trim().split('x') {
        if let Ok(v) = d.parse::<u128>() {
            n = n.saturating_mul(v);
        }
    }
    n > 1 << 20
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if text.len() > 4096 || splat_too_big(text) {
        return;
    }
    match parse_value(text) {
        Ok(Value::Array(a)) => {
            let printed = format_array(&a);
            let Ok(Value::Array(b)) = parse_value(&printed) else { panic!("{printed:?} does not parse back") };
            assert_eq!((a.dtype(), a.shape()), (b.dtype(), b.shape()));
            if !a.dtype().is_float() {
                assert_eq!(a, b, "{printed:?}");
            }
        }
        Ok(_) => {}
        Err(e) => assert!(e.offset() <= text.len()),
    }
});
