//! The human-readable raw signature parser.
#![no_main]
use fnabi::RawSignature;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match RawSignature::parse_human(text) {
        Ok(sig) => assert_eq!(RawSignature::parse_human(&sig.to_string()).unwrap(), sig),
        Err(e) => assert!(e.offset() <= text.len()),
    }
});
