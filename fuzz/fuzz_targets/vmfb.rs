//! The `.vmfb` reader: any bytes read as a module or fail at an offset
//! inside them (never a panic, never an out-of-bounds read), the ZIP check
//! included; what reads hands out signatures whose parsers hold too.
#![no_main]
use fnabi::vmfb::Module;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The ZIP check alone (sizes, CRC-32), then the FlatBuffer reader
    // without it, so that mutations the CRC would catch still reach it.
    match fnabi::vmfb::zip::verify(data) {
        Ok(entries) => {
            for e in &entries {
                assert!(e.data_offset + e.size <= data.len());
            }
        }
        Err(e) => assert!(e.offset() <= data.len(), "{e}"),
    }
    if let Err(e) = Module::parse(data) {
        assert!(e.offset() <= data.len(), "{e}");
    }
    match Module::parse_unverified(data) {
        Ok(m) => {
            assert!(m.flatbuffer_offset + m.flatbuffer_len <= data.len());
            for e in &m.exports {
                let _ = e.signature.cconv();
                let _ = e.signature.reflection();
                let _ = e.signature.declaration();
                let _ = fnabi::conventions::FunctionAbi::from_signature(&e.signature);
            }
            for i in &m.imports {
                if let Some(s) = &i.signature {
                    let _ = s.cconv();
                }
            }
        }
        Err(e) => assert!(e.offset() <= data.len(), "{e}"),
    }
});
