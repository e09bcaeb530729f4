//! What the fuzz targets with in-memory files share: splitting one fuzz
//! input into a text part and the files it may name.

use fnabi::inputs::MemoryFiles;

/// Splits `data` at its first NUL into the text before it and up to four
/// files after it, named `0`, `1`, … and separated by `\n--file--\n`;
/// sets the array and file byte limits low so that every input stays fast.
pub fn text_and_files(data: &[u8]) -> (&[u8], MemoryFiles) {
    fnabi::limits::set_max_bytes(fnabi::limits::ByteLimit::Array, Some(1 << 16));
    fnabi::limits::set_max_bytes(fnabi::limits::ByteLimit::File, Some(1 << 16));
    let (text, mut rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let mut files = MemoryFiles::new();
    let sep = b"\n--file--\n";
    for n in 0..4 {
        let end = rest.windows(sep.len()).position(|w| w == sep);
        files.insert(n.to_string(), &rest[..end.unwrap_or(rest.len())]);
        match end {
            Some(e) => rest = &rest[e + sep.len()..],
            None => break,
        }
    }
    (text, files)
}
