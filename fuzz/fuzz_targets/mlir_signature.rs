//! The `func.func` header reader: never panics or hangs; errors carry a
//! line and column inside the text; function types print and parse back.
#![no_main]
use fnabi::mlir::{FunctionType, HeaderError, parse_functions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match parse_functions(text) {
        Ok(fns) => {
            for f in fns {
                let printed = f.ty.to_string();
                let back: FunctionType = printed.parse().unwrap_or_else(|e| panic!("{printed}: {e}"));
                assert_eq!(back, f.ty);
                let _ = f.abi_attributes();
            }
        }
        Err(HeaderError::Syntax { offset, line, .. }) => {
            assert!(offset <= text.len());
            assert!(line >= 1 && line <= text.lines().count().max(1) + 1);
        }
        Err(e) => panic!("unexpected error kind: {e}"),
    }
});
