//! IREE's array text form: parsing never panics, errors point inside the
//! input, and what parses prints in a form that parses back to the same
//! dtype and shape (and the same elements, for integer and boolean arrays),
//! and that prints again to the same text (floats: the same values).
#![no_main]
use fnabi::Value;
use fnabi::text::{format_array, parse_value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // A single value fills an array of any shape, so a short text can ask
    // for gigabytes: the byte limit per array refuses it (issue 18, defect
    // 8), here set low so that every input stays fast.
    fnabi::limits::set_max_bytes(fnabi::limits::ByteLimit::Array, Some(1 << 16));
    let Ok(text) = std::str::from_utf8(data) else { return };
    if text.len() > 4096 {
        return;
    }
    match parse_value(text) {
        Ok(Value::Array(a)) => {
            let printed = format_array(&a);
            let Ok(Value::Array(b)) = parse_value(&printed) else { panic!("{printed:?} does not parse back") };
            assert_eq!((a.dtype(), a.shape()), (b.dtype(), b.shape()));
            // Printing what was read back gives the same text: floats print
            // in their shortest round-trip form, distinct values differently,
            // so every value (a NaN's payload aside) came back exactly.
            assert_eq!(format_array(&b), printed);
            // Floats (complex ones too) keep their values but not NaN payloads.
            if !a.dtype().is_float() && !a.dtype().is_complex() {
                assert_eq!(a, b, "{printed:?}");
            }
        }
        Ok(_) => {}
        Err(e) => assert!(e.offset() <= text.len()),
    }
});
