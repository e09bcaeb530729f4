//! The ELF dynamic-symbol reader: any bytes give symbols or an error with an
//! offset inside the input, never a panic.
#![no_main]
use fnabi::elf::ElfFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match ElfFile::parse(data) {
        Ok(elf) => {
            for s in elf.dynamic_symbols() {
                if let Err(e) = s {
                    assert!(e.offset() <= data.len());
                }
            }
            let _ = elf.mlir_functions();
            let _ = elf.undefined_functions();
        }
        Err(e) => assert!(e.offset() <= data.len()),
    }
});
