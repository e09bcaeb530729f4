//! The reader of a self-describing library's embedded ABI (`fnabi compile`):
//! any bytes give the ABI, none, or an error — never a panic.
#![no_main]
use fnabi::mlir::abi_embed::read_abi;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = read_abi(data);
});
