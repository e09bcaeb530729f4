//! The raw signature parser: whatever parses re-mangles and re-prints to the
//! same signature, and the zero-copy reader reads the same items (dims
//! included) and writes the same human-readable form, or stops at the same
//! error.
#![no_main]
use fnabi::RawSignature;
use fnabi::raw::{RawSignatureReader, RawTypeRef};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = RawSignature::parse(data);
    match &parsed {
        Ok(sig) => {
            assert_eq!(&RawSignature::parse(sig.to_mangled()).unwrap(), sig);
            assert_eq!(&RawSignature::parse_human(&sig.to_string()).unwrap(), sig);
        }
        Err(e) => assert!(e.offset() <= data.len()),
    }
    // The reader, item by item: inputs, then results, to the first error.
    let read = RawSignatureReader::new(data).and_then(|r| {
        let mut sides = [Vec::new(), Vec::new()];
        for (side, items) in sides.iter_mut().zip([r.inputs(), r.results()]) {
            for item in items {
                let item = item?;
                if let RawTypeRef::Buffer(b) = item {
                    assert_eq!(b.dims().count(), b.rank());
                }
                side.push(item.to_owned());
            }
        }
        let [inputs, results] = sides;
        Ok(RawSignature::new(inputs, results))
    });
    assert_eq!(read, parsed);
    let mut human = String::new();
    let written = RawSignatureReader::new(data).and_then(|r| r.write_human(&mut human));
    match &parsed {
        Ok(sig) => assert_eq!((written, human), (Ok(()), sig.to_string())),
        Err(e) => assert_eq!(written.as_ref(), Err(e)),
    }
});
