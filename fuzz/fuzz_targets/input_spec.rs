//! The `--input` forms (IREE text, `@`/`+`/`*FILE.npy` streams, raw
//! `SHAPExTYPE=@FILE`/`=+FILE`, `(null)`, `&`) read against files held in
//! memory: never a panic; an error is one line naming its input; what reads
//! is one argument per spec (`*` any number), arrays whose bytes match their
//! shape, raw inputs exactly their header's type.
//!
//! The input: `--input` specs one per line, then a NUL, then the files `0`,
//! `1`, … separated by `\n--file--\n`.
#![no_main]
use fnabi::Value;
use fnabi::inputs::InputReader;
use libfuzzer_sys::fuzz_target;

mod files;

fuzz_target!(|data: &[u8]| {
    // A short text or raw header can ask for gigabytes: the limits refuse
    // it, set low by `text_and_files` so that every input stays fast.
    let (specs, files) = files::text_and_files(data);
    let Ok(specs) = std::str::from_utf8(specs) else { return };
    let mut reader = InputReader::new(&files);
    for (i, spec) in specs.split('\n').enumerate() {
        let before = reader.values().len();
        if let Err(e) = reader.push(spec) {
            let msg = e.to_string();
            assert!(msg.starts_with(&format!("--input {i} ")), "{msg}");
            assert!(!msg.contains('\n'), "not one line: {msg:?}");
            return;
        }
        let new = &reader.values()[before..];
        if !spec.starts_with('*') {
            assert_eq!(new.len(), 1, "{spec:?}");
        }
        for v in new {
            if let Value::Array(a) = v {
                let n: usize = a.shape().iter().product();
                assert_eq!(a.nbytes(), n * a.dtype().size(), "{spec:?}");
                assert!(a.to_contiguous().is_ok(), "{spec:?}");
            }
        }
        // A raw input is its header's type, whatever the file holds.
        if let Some((header, body)) = spec.split_once('=')
            && !spec.starts_with(['@', '+', '*'])
            && body.trim().starts_with(['@', '+'])
        {
            let [Value::Array(a)] = new else { panic!("{spec:?} read as {new:?}") };
            let mut parts: Vec<&str> = header.trim().split('x').collect();
            let ty = parts.pop().unwrap_or_default();
            assert_eq!(Some(a.dtype()), fnabi::text::dtype_from_name(ty), "{spec:?}");
            let dims: Vec<usize> = parts.iter().map(|d| d.parse().unwrap()).collect();
            assert_eq!(a.shape(), &dims[..], "{spec:?}");
        }
    }
});
