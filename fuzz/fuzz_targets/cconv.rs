//! Calling-convention strings: parse or fail at an offset inside the input;
//! what parses prints canonically and parses back to the same convention.
#![no_main]
use fnabi::vm::CallingConvention;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    match CallingConvention::parse(s) {
        Ok(cc) => {
            let text = cc.to_string();
            assert_eq!(CallingConvention::parse(&text).unwrap(), cc);
            assert!(text.len() <= s.len() + 2);
        }
        Err(e) => assert!(e.offset() <= s.len()),
    }
});
