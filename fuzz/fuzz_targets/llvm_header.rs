//! The LLVM-level header scanner (LLVM dialect `llvm.func` and LLVM IR
//! `define`/`declare` lines): any text gives a list of functions, never a
//! panic or a hang.
#![no_main]
use fnabi::mlir::LlvmFunctions;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let fns = LlvmFunctions::scan(text);
        let _ = fns.callable();
    }
});
