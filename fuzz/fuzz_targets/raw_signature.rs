//! The raw signature parser: whatever parses re-mangles and re-prints to the
//! same signature.
#![no_main]
use fnabi::RawSignature;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match RawSignature::parse(data) {
        Ok(sig) => {
            assert_eq!(RawSignature::parse(sig.to_mangled()).unwrap(), sig);
            assert_eq!(RawSignature::parse_human(&sig.to_string()).unwrap(), sig);
        }
        Err(e) => assert!(e.offset() <= data.len()),
    }
});
