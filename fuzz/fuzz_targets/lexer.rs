//! The lexical layer: any bytes either lex completely or stop at an error
//! inside the input; seeking a tag always terminates.
#![no_main]
use fnabi::mangle::{Component, SignatureParser};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut end = 0;
    for c in SignatureParser::new(data) {
        match c {
            Ok(c) => {
                assert!(c.offset() >= end);
                if let Component::Span { content, content_offset, .. } = c {
                    end = content_offset + content.len();
                    assert_eq!(&data[content_offset..end], content);
                    let _ = c.nested().map(|p| p.count());
                }
            }
            Err(e) => assert!(e.offset() <= data.len()),
        }
    }
    let _ = SignatureParser::new(data).seek_tag(b'I');
});
