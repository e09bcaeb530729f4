//! `iree.abi.declaration` text: parse or fail at an offset inside the
//! input; what parses prints canonically and parses back to the same
//! declaration, and its types map to records without panicking.
#![no_main]
use fnabi::reflection::Declaration;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    match Declaration::parse(s) {
        Ok(d) => {
            let text = d.to_string();
            assert_eq!(Declaration::parse(&text).unwrap(), d, "{text}");
            for p in d.args.iter().chain(&d.results) {
                let _ = p.ty.to_record();
            }
        }
        Err(e) => assert!(e.offset() <= s.len()),
    }
});
