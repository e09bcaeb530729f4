//! The `.vmfb` reader: any bytes read as a module or fail at an offset
//! inside them (never a panic, never an out-of-bounds read); what reads
//! hands out signatures whose parsers hold too.
#![no_main]
use fnabi::vmfb::Module;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match Module::parse(data) {
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
