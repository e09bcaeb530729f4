//! The `iree.abi` record parser: any text parses or fails at an offset
//! inside it; what parses prints to canonical JSON that parses back to the
//! same records, is JSON to serde_json too, and reduces to a structure.
#![no_main]
use fnabi::reflection::{FunctionReflection, TypeRecord, records_to_structure};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    match FunctionReflection::parse(s) {
        Ok(f) => {
            let json = f.to_json();
            assert_eq!(FunctionReflection::parse(&json).unwrap(), f);
            if let Err(e) = serde_json::from_str::<serde_json::Value>(s) {
                assert!(e.to_string().contains("recursion limit"), "serde_json rejects what fnabi accepts: {e}");
            }
            let _ = f.to_string();
            let _ = records_to_structure(&f.a);
            let _ = records_to_structure(&f.r);
        }
        Err(e) => assert!(e.offset() <= s.len()),
    }
    match TypeRecord::parse(s) {
        Ok(t) => {
            assert_eq!(TypeRecord::parse(&t.to_json()).unwrap(), t);
            let _ = t.to_string();
        }
        Err(e) => assert!(e.offset() <= s.len()),
    }
});
