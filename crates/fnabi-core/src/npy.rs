//! NumPy `.npy` files for [`Array`]: all 12 ABI scalar types, `bool` and
//! `complex64`/`complex128` (descr `<c8`/`<c16`), C and Fortran order,
//! format versions 1.0, 2.0 and 3.0.
//!
//! Reading is zero-copy where it can be: [`read`] views the data inside the
//! given bytes and [`read_buffer`] shares a [`ByteBuffer`] (a mapped file stays
//! mapped) when the data is little-endian and aligned; big-endian data is
//! byte-swapped into fresh memory. Writing produces exactly NumPy's bytes
//! (`numpy.save`): version 1.0 unless the header needs 2.0, keys in
//! sorted order, the growth padding after the dict, the header padded with
//! spaces to a multiple of 64 bytes.
//!
//! Strict where NumPy is lenient: the header is parsed as the literal dict
//! NumPy writes (no general Python evaluation), must have exactly the keys
//! `descr`, `fortran_order` and `shape` (each once), at most 1 MiB and 64
//! dims; the data must be exactly as long as the shape says (trailing bytes
//! are an error); structured and object dtypes are rejected; `bool` data
//! must be 0 or 1.
//!
//! `bfloat16` has no NumPy type code: fnabi writes the descr `'bfloat16'`,
//! the name under which `ml_dtypes` registers the type, so that NumPy with
//! `ml_dtypes` imported loads the file as bfloat16 and NumPy without it
//! fails loudly instead of misreading the bits. (NumPy itself saves an
//! `ml_dtypes.bfloat16` array as the anonymous `'<V2'`, which fnabi does
//! not read because it does not say what the two bytes are.) The 8-bit
//! floats likewise: descr `'float8_e4m3fn'`, `'float8_e5m2'`,
//! `'float8_e4m3fnuz'`, `'float8_e5m2fnuz'`.
//!
//! ```
//! use fnabi_core::{Array, npy};
//! let a = Array::from_vec(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
//! let bytes = npy::to_bytes(&a).unwrap();
//! assert_eq!(&bytes[..10], b"\x93NUMPY\x01\x00v\x00");
//! assert!(bytes[10..128].starts_with(b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
//! let back = npy::read(&bytes).unwrap();
//! assert_eq!(back, a);
//! ```

use crate::array::{Array, DimVec, HostBuffer, element_count};
use crate::error::{Error, ParseError, ParseErrorKind};
use crate::memory::ByteBuffer;
use fnabi_abi::scalar::DType;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// The largest header fnabi reads.
pub const MAX_HEADER_LEN: usize = 1 << 20;
pub(crate) use fnabi_abi::limits::MAX_RANK;
const ARRAY_ALIGN: usize = 64;
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// The parsed header of a `.npy` file.
///
/// ```
/// use fnabi_core::{npy, Array, DType};
/// let a = Array::from_vec(&[2, 3], vec![0.5f64; 6]).unwrap();
/// let bytes = npy::to_bytes(&a).unwrap();
/// let h = npy::read_header(&bytes).unwrap();
/// assert_eq!((h.dtype, &h.shape[..], h.fortran_order, h.big_endian), (DType::F64, &[2, 3][..], false, false));
/// assert_eq!(h.data_offset % 64, 0);
/// assert_eq!(h.data_len(), 48);
/// assert_eq!(npy::read(&bytes).unwrap(), a);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// Format version (major, minor).
    pub version: (u8, u8),
    /// Element type.
    pub dtype: DType,
    /// True when the data is big-endian (descr `>…`).
    pub big_endian: bool,
    /// True when the data is in column-major (Fortran) order.
    pub fortran_order: bool,
    /// Extents.
    pub shape: DimVec<usize>,
    /// Byte offset of the data in the file.
    pub data_offset: usize,
}

impl NpyHeader {
    /// Bytes of data the header announces.
    pub fn data_len(&self) -> usize {
        // Checked when parsed.
        self.shape.iter().product::<usize>() * self.dtype.size()
    }
}

fn err(offset: usize, msg: impl Into<String>) -> ParseError {
    ParseError::new(offset, ParseErrorKind::Npy(msg.into()))
}

/// Parses the header of `.npy` bytes (without touching the data, except
/// to check that it is exactly as long as announced).
///
/// ```
/// use fnabi_core::{DType, npy};
/// let mut file = b"\x93NUMPY\x01\x00\x46\x00{'descr': '|b1', 'fortran_order': True, 'shape': (2, 1), }".to_vec();
/// file.resize(10 + 0x46 - 1, b' ');
/// file.extend_from_slice(b"\n\x01\x00");
/// let h = npy::read_header(&file).unwrap();
/// assert_eq!((h.dtype, h.fortran_order, h.shape.as_slice(), h.data_offset), (DType::BOOL, true, &[2usize, 1][..], 80));
/// let e = npy::read_header(&file[..81]).unwrap_err();
/// assert_eq!(e.to_string(), "at byte 80: npy: the data is 1 byte(s) but the header announces 2");
/// ```
pub fn read_header(bytes: &[u8]) -> Result<NpyHeader, ParseError> {
    read_header_at_least(bytes, true)
}

/// The header of `.npy` bytes followed by at least (`exact`: exactly) the
/// data it announces.
fn read_header_at_least(bytes: &[u8], exact: bool) -> Result<NpyHeader, ParseError> {
    if bytes.len() < 8 || &bytes[..6] != MAGIC {
        return Err(err(0, "not a .npy file (no \\x93NUMPY magic)"));
    }
    let version = (bytes[6], bytes[7]);
    let (len_size, utf8) = match version {
        (1, 0) => (2, false),
        (2, 0) => (4, false),
        (3, 0) => (4, true),
        (a, b) => return Err(err(6, format!("unsupported format version {a}.{b} (fnabi reads 1.0, 2.0, 3.0)"))),
    };
    let start = 8 + len_size;
    if bytes.len() < start {
        return Err(err(8, "truncated header length"));
    }
    let hlen = if len_size == 2 {
        usize::from(u16::from_le_bytes([bytes[8], bytes[9]]))
    } else {
        u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize
    };
    if hlen > MAX_HEADER_LEN {
        return Err(err(8, format!("header of {hlen} bytes exceeds the {MAX_HEADER_LEN}-byte limit")));
    }
    let end = start + hlen;
    if bytes.len() < end {
        return Err(err(8, format!("header declares {hlen} bytes but only {} remain", bytes.len() - start)));
    }
    let header = &bytes[start..end];
    if !utf8 && !header.is_ascii() {
        // Latin-1 beyond ASCII cannot occur in a valid header's keys or values.
        let i = header.iter().position(|b| !b.is_ascii()).unwrap_or(0);
        return Err(err(start + i, "non-ASCII byte in a version 1/2 header"));
    }
    if utf8 && std::str::from_utf8(header).is_err() {
        return Err(err(start, "version 3 header is not UTF-8"));
    }
    let mut p = HeaderParser { s: header, pos: 0, base: start };
    let (dtype, big_endian, fortran_order, shape) = p.dict()?;
    let count = element_count(&shape).map_err(|_| err(start, "shape is too large"))?;
    let data_len = count.checked_mul(dtype.size()).ok_or_else(|| err(start, "shape is too large"))?;
    let have = bytes.len() - end;
    if have < data_len || (exact && have != data_len) {
        return Err(err(end, format!("the data is {have} byte(s) but the header announces {data_len}")));
    }
    Ok(NpyHeader { version, dtype, big_endian, fortran_order, shape, data_offset: end })
}

struct HeaderParser<'a> {
    s: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> HeaderParser<'a> {
    fn at(&self) -> usize {
        self.base + self.pos
    }

    fn fail(&self, msg: impl Into<String>) -> ParseError {
        err(self.at(), msg)
    }

    fn ws(&mut self) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), ParseError> {
        if self.eat(c) { Ok(()) } else { Err(self.fail(format!("expected `{}`", c as char))) }
    }

    fn string(&mut self) -> Result<&'a str, ParseError> {
        self.ws();
        let q = match self.s.get(self.pos) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return Err(self.fail("expected a string")),
        };
        let start = self.pos + 1;
        let len = self.s[start..].iter().position(|&b| b == q).ok_or_else(|| self.fail("unterminated string"))?;
        let s: &'a [u8] = self.s;
        let body = &s[start..start + len];
        if body.contains(&b'\\') {
            return Err(self.fail("escapes in header strings are not supported"));
        }
        self.pos = start + len + 1;
        std::str::from_utf8(body).map_err(|_| self.fail("string is not UTF-8"))
    }

    fn word(&mut self) -> &'a [u8] {
        self.ws();
        let start = self.pos;
        while self.pos < self.s.len() && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_') {
            self.pos += 1;
        }
        let s: &'a [u8] = self.s;
        &s[start..self.pos]
    }

    fn boolean(&mut self) -> Result<bool, ParseError> {
        let at = self.at();
        match self.word() {
            b"True" => Ok(true),
            b"False" => Ok(false),
            _ => Err(err(at, "expected True or False")),
        }
    }

    fn shape(&mut self) -> Result<DimVec<usize>, ParseError> {
        self.expect(b'(')?;
        let mut shape = DimVec::new();
        loop {
            if self.eat(b')') {
                break;
            }
            let at = self.at();
            let w = self.word();
            // Python 2 wrote longs as `3L`.
            let digits = w.strip_suffix(b"L").unwrap_or(w);
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(err(at, "expected a non-negative integer dim"));
            }
            let n = std::str::from_utf8(digits)
                .ok()
                .and_then(|d| d.parse::<usize>().ok())
                .ok_or_else(|| err(at, "dim does not fit in memory"))?;
            if shape.len() == MAX_RANK {
                return Err(err(at, format!("more than {MAX_RANK} dims")));
            }
            shape.push(n);
            if self.eat(b',') {
                continue;
            }
            // `(3)` is an int, not a tuple, in Python.
            if shape.len() == 1 {
                return Err(self.fail("a one-dim shape needs a trailing comma: `(n,)`"));
            }
            self.expect(b')')?;
            break;
        }
        Ok(shape)
    }

    fn descr(&mut self) -> Result<(DType, bool), ParseError> {
        self.ws();
        let at = self.at();
        if self.s.get(self.pos) == Some(&b'[') {
            return Err(err(at, "structured dtypes are not supported"));
        }
        let d = self.string()?;
        if d == "bfloat16" {
            return Ok((DType::BF16, false));
        }
        // ml_dtypes' 8-bit floats, by name as for bfloat16.
        if let Some(f) = fnabi_abi::Float8::from_name(d).filter(|f| f.npy_name() == d) {
            return Ok((DType::Float8(f), false));
        }
        let (order, code) = match d.as_bytes().first() {
            Some(b'<' | b'|') => (false, &d[1..]),
            Some(b'>') => (true, &d[1..]),
            Some(b'=') => (cfg!(target_endian = "big"), &d[1..]),
            _ => (false, d),
        };
        let dtype = match code {
            "f2" => DType::F16,
            "f4" => DType::F32,
            "f8" => DType::F64,
            "i1" => DType::I8,
            "i2" => DType::I16,
            "i4" => DType::I32,
            "i8" => DType::I64,
            "u1" => DType::U8,
            "u2" => DType::U16,
            "u4" => DType::U32,
            "u8" => DType::U64,
            "b1" | "?" => DType::Bool,
            "c8" => DType::C64,
            "c16" => DType::C128,
            // What numpy writes for ml_dtypes' arrays: bytes of no known type.
            "V1" | "V2" => {
                return Err(err(
                    at,
                    format!(
                        "unsupported descr {d:?}: numpy saves ml_dtypes' bfloat16 and 8-bit float arrays as \
                         {}-byte voids, whose type the file does not say; save them with fnabi, or give the raw \
                         bytes typed (`arr.tofile(\"x.bin\")`, then `-i NxTYPE=@x.bin`, e.g. `4xbf16=@x.bin`)",
                        &code[1..]
                    ),
                ));
            }
            _ => return Err(err(at, format!("unsupported descr {d:?}"))),
        };
        Ok((dtype, order && dtype.size() > 1))
    }

    fn dict(&mut self) -> Result<(DType, bool, bool, DimVec<usize>), ParseError> {
        self.expect(b'{')?;
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        loop {
            if self.eat(b'}') {
                break;
            }
            let at = self.at();
            let key = self.string()?;
            self.expect(b':')?;
            let dup = match key {
                "descr" => descr.replace(self.descr()?).is_some(),
                "fortran_order" => fortran.replace(self.boolean()?).is_some(),
                "shape" => shape.replace(self.shape()?).is_some(),
                k => return Err(err(at, format!("unexpected key {k:?} (expected descr, fortran_order, shape)"))),
            };
            if dup {
                return Err(err(at, format!("key {key:?} is given twice")));
            }
            if !self.eat(b',') {
                self.expect(b'}')?;
                break;
            }
        }
        self.ws();
        if self.pos != self.s.len() {
            return Err(self.fail("unexpected text after the header dict"));
        }
        let at = self.at();
        let (dtype, big) = descr.ok_or_else(|| err(at, "header has no descr"))?;
        let fortran = fortran.ok_or_else(|| err(at, "header has no fortran_order"))?;
        let shape = shape.ok_or_else(|| err(at, "header has no shape"))?;
        Ok((dtype, big, fortran, shape))
    }
}

fn strides_for(h: &NpyHeader) -> DimVec<isize> {
    crate::layout::dense_strides(
        &h.shape,
        if h.fortran_order { fnabi_abi::raw::DimOrder::ColumnMajor } else { fnabi_abi::raw::DimOrder::RowMajor },
    )
}

/// An owned array of `h`'s layout from its (possibly byte-swapped) data.
fn copy_out(h: &NpyHeader, data: &[u8]) -> Result<Array<'static>, Error> {
    let mut buf = HostBuffer::zeroed(data.len())?;
    let bytes = buf.as_mut_bytes().ok_or_else(|| Error::invalid_argument("fresh memory is not writable"))?;
    bytes.copy_from_slice(data);
    if h.big_endian {
        // A complex element is two floats, each swapped on its own.
        let unit = match h.dtype {
            DType::Complex(c) => c.part().size(),
            d => d.size(),
        };
        for e in bytes.chunks_exact_mut(unit) {
            e.reverse();
        }
    }
    Array::from_buffer(h.dtype, &h.shape, Some(&strides_for(h)), Arc::new(buf), 0)
}

fn native(h: &NpyHeader) -> bool {
    h.big_endian == cfg!(target_endian = "big")
}

/// Reads `.npy` bytes: a view of the data inside `bytes` when it is in
/// native byte order and aligned for its type, else an owned copy.
///
/// ```
/// use fnabi_core::{npy, Array};
/// let a = Array::from_vec(&[2], vec![1.5f64, -2.0]).unwrap();
/// let bytes = npy::to_bytes(&a)?;
/// assert_eq!(npy::read(&bytes)?, a);
/// assert!(npy::read(&bytes[..bytes.len() - 1]).is_err()); // data cut short
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub fn read(bytes: &[u8]) -> Result<Array<'_>, Error> {
    let h = read_header(bytes)?;
    let data = &bytes[h.data_offset..];
    let aligned = (data.as_ptr() as usize).is_multiple_of(h.dtype.size());
    if native(&h) && aligned {
        return Array::from_bytes(h.dtype, &h.shape, Some(&strides_for(&h)), data, 0);
    }
    copy_out(&h, data)
}

/// Reads a `.npy` file held in a [`ByteBuffer`], sharing it (no copy) when
/// the data is in native byte order, aligned, and not `bool` (whose bytes
/// are checked, and copied, so that the header is not mistaken for data).
///
/// ```
/// use fnabi_core::{Array, memory::ByteBuffer, npy};
/// let a = Array::from_vec(&[3], vec![1u64, 2, 3]).unwrap();
/// let file = ByteBuffer::copy_from_slice(&npy::to_bytes(&a).unwrap()).unwrap();
/// let back = npy::read_buffer(&file).unwrap();
/// assert_eq!(back, a);
/// assert_eq!(back.buffer().unwrap().as_ptr(), file.as_bytes().as_ptr(), "shares the file's memory");
/// ```
pub fn read_buffer(file: &ByteBuffer) -> Result<Array<'static>, Error> {
    let h = read_header(file.as_bytes())?;
    array_in(file, &h, h.data_offset)
}

/// The array `h` describes, its data at byte `start` of `file`: sharing
/// the file's memory when the data is in native byte order, aligned, and
/// not `bool` (whose bytes are checked, and copied); else an owned copy.
fn array_in(file: &ByteBuffer, h: &NpyHeader, start: usize) -> Result<Array<'static>, Error> {
    let data = &file.as_bytes()[start..start + h.data_len()];
    let aligned = (data.as_ptr() as usize).is_multiple_of(h.dtype.size());
    if native(h) && aligned && h.dtype != DType::Bool {
        return file.array(h.dtype, &h.shape, Some(&strides_for(h)), start);
    }
    copy_out(h, data)
}

/// Reads the array that starts at byte `offset` of a file of `.npy` arrays
/// written one after another (as `numpy.save` to one open file writes
/// them, and IREE's `+FILE.npy` inputs read them); returns it and the
/// offset just past its data, where the next array starts. Shares the
/// file's memory as [`read_buffer`] does.
///
/// ```
/// use fnabi_core::{Array, memory::ByteBuffer, npy};
/// let (a, b) = (Array::from_vec(&[2], vec![1i32, 2]).unwrap(), Array::from_vec(&[1], vec![3.5f64]).unwrap());
/// let mut bytes = npy::to_bytes(&a).unwrap();
/// bytes.extend(npy::to_bytes(&b).unwrap());
/// let file = ByteBuffer::copy_from_slice(&bytes).unwrap();
/// let (first, next) = npy::read_at(&file, 0).unwrap();
/// let (second, end) = npy::read_at(&file, next).unwrap();
/// assert_eq!((first, second, end), (a, b, bytes.len()));
/// let e = npy::read_at(&file, end).unwrap_err();
/// assert_eq!(e.to_string(), format!("at byte {end}: npy: not a .npy file (no \\x93NUMPY magic)"));
/// ```
pub fn read_at(file: &ByteBuffer, offset: usize) -> Result<(Array<'static>, usize), Error> {
    let bytes = file.as_bytes().get(offset..).unwrap_or_default();
    let h = read_header_at_least(bytes, false).map_err(|e| ParseError::new(e.offset() + offset, e.kind().clone()))?;
    let start = offset + h.data_offset;
    Ok((array_in(file, &h, start)?, start + h.data_len()))
}

/// Reads a `.npy` file into memory.
///
/// ```
/// use fnabi_core::{npy, Array};
/// let path = std::env::temp_dir().join(format!("fnabi-doc-read-file-{}.npy", std::process::id()));
/// let a = Array::from_vec(&[3], vec![1u8, 2, 3]).unwrap();
/// npy::save(&path, &a)?;
/// assert_eq!(npy::read_file(&path)?, a);
/// std::fs::remove_file(&path).unwrap();
/// assert!(npy::read_file(&path).is_err());
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub fn read_file(path: impl AsRef<Path>) -> Result<Array<'static>, Error> {
    read_buffer(&ByteBuffer::read_file(path)?)
}

/// NumPy's descr of a dtype, in native byte order.
fn descr(d: DType) -> &'static str {
    let le = cfg!(target_endian = "little");
    match (d, le) {
        (DType::Bool, _) => "|b1",
        (DType::I8, _) => "|i1",
        (DType::U8, _) => "|u1",
        (DType::BF16, _) => "bfloat16",
        (DType::Float8(f), _) => f.npy_name(),
        (DType::C64, true) => "<c8",
        (DType::C128, true) => "<c16",
        (DType::C64, false) => ">c8",
        (DType::C128, false) => ">c16",
        (DType::F16, true) => "<f2",
        (DType::F32, true) => "<f4",
        (DType::F64, true) => "<f8",
        (DType::I16, true) => "<i2",
        (DType::I32, true) => "<i4",
        (DType::I64, true) => "<i8",
        (DType::U16, true) => "<u2",
        (DType::U32, true) => "<u4",
        (DType::U64, true) => "<u8",
        (DType::F16, false) => ">f2",
        (DType::F32, false) => ">f4",
        (DType::F64, false) => ">f8",
        (DType::I16, false) => ">i2",
        (DType::I32, false) => ">i4",
        (DType::I64, false) => ">i8",
        (DType::U16, false) => ">u2",
        (DType::U32, false) => ">u4",
        (DType::U64, false) => ">u8",
    }
}

/// The header bytes `numpy.save` writes for this array (magic, version,
/// length, dict, padding).
///
/// ```
/// use fnabi_core::{npy, DType};
/// let h = npy::header_bytes(DType::F32, &[3], false);
/// assert!(h.starts_with(b"\x93NUMPY\x01\x00")); // magic, version 1.0
/// assert_eq!(h.len() % 64, 0);
/// let text = String::from_utf8_lossy(&h[10..]);
/// assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"));
/// assert!(text.ends_with('\n'));
/// ```
pub fn header_bytes(dtype: DType, shape: &[usize], fortran_order: bool) -> Vec<u8> {
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': {}, 'shape': (",
        descr(dtype),
        if fortran_order { "True" } else { "False" }
    );
    for (i, n) in shape.iter().enumerate() {
        if i > 0 {
            dict.push_str(", ");
        }
        dict.push_str(&n.to_string());
    }
    if shape.len() == 1 {
        dict.push(',');
    }
    dict.push_str("), }");
    if let Some(growth) = if fortran_order { shape.last() } else { shape.first() } {
        let digits = growth.to_string().len();
        dict.extend(std::iter::repeat_n(' ', GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
    }
    // Version 1.0 unless the header length does not fit 16 bits.
    let hlen = dict.len() + 1;
    let pad_for = |len_size: usize| ARRAY_ALIGN - ((8 + len_size + hlen) % ARRAY_ALIGN);
    let (version, len_size) = if hlen + pad_for(2) <= usize::from(u16::MAX) { (1u8, 2) } else { (2u8, 4) };
    let pad = pad_for(len_size);
    let total = hlen + pad;
    let mut out = Vec::with_capacity(8 + len_size + total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if len_size == 2 {
        out.extend_from_slice(&(total as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(total as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.extend(std::iter::repeat_n(b' ', pad));
    out.push(b'\n');
    out
}

/// Writes `a` as `.npy`: C order when it is row-major dense (or neither
/// row- nor column-major: then a dense C copy is written), Fortran order
/// when it is column-major dense.
///
/// ```
/// use fnabi_core::{npy, Array, DType};
/// let a = Array::from_vec(&[2, 2], vec![1i16, 2, 3, 4]).unwrap();
/// let mut out = Vec::new();
/// npy::write(&a, &mut out)?;
/// let header = npy::header_bytes(DType::I16, &[2, 2], false);
/// // The header, then 4 elements of 2 bytes.
/// assert_eq!(out.len(), header.len() + 8);
/// assert!(out.starts_with(&header));
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub fn write(a: &Array<'_>, w: &mut impl Write) -> Result<(), Error> {
    let io = |e| Error::io("<npy writer>", e);
    let fortran = !a.is_c_contiguous() && a.is_f_contiguous();
    w.write_all(&header_bytes(a.dtype(), a.shape(), fortran)).map_err(io)?;
    if a.is_empty() {
        return Ok(());
    }
    if let Some(bytes) = a.as_dense_bytes() {
        w.write_all(bytes).map_err(io)
    } else {
        let dense = a.to_contiguous()?;
        w.write_all(dense.as_bytes().unwrap_or(&[])).map_err(io)
    }
}

/// The `.npy` bytes of `a`.
///
/// ```
/// use fnabi_core::{npy, Array};
/// let a = Array::scalar(7i32);
/// let bytes = npy::to_bytes(&a)?;
/// assert_eq!(&bytes[bytes.len() - 4..], 7i32.to_le_bytes());
/// assert_eq!(npy::read(&bytes)?, a);
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub fn to_bytes(a: &Array<'_>) -> Result<Vec<u8>, Error> {
    let mut v = Vec::new();
    write(a, &mut v)?;
    Ok(v)
}

/// Writes `a` to a `.npy` file.
///
/// ```
/// use fnabi_core::{npy, Array};
/// let path = std::env::temp_dir().join(format!("fnabi-doc-save-{}.npy", std::process::id()));
/// let a = Array::from_vec(&[2], vec![true, false]).unwrap();
/// npy::save(&path, &a)?;
/// assert_eq!(std::fs::read(&path).unwrap(), npy::to_bytes(&a)?);
/// std::fs::remove_file(&path).unwrap();
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub fn save(path: impl AsRef<Path>, a: &Array<'_>) -> Result<(), Error> {
    let path = path.as_ref();
    let f = std::fs::File::create(path).map_err(|e| Error::io(path.display().to_string(), e))?;
    let mut w = std::io::BufWriter::new(f);
    write(a, &mut w)?;
    w.flush().map_err(|e| Error::io(path.display().to_string(), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fnabi_abi::scalar::Element;

    fn roundtrip<T: Element>(shape: &[usize], v: Vec<T>) {
        let a = Array::from_vec(shape, v).unwrap();
        let bytes = to_bytes(&a).unwrap();
        assert_eq!((bytes.len() - a.nbytes()) % 64, 0, "header is padded to 64 bytes");
        assert_eq!(read(&bytes).unwrap(), a, "{:?}", a.dtype());
        let t = a.permuted(&(0..a.rank()).rev().collect::<Vec<_>>()).unwrap();
        let tb = to_bytes(&t).unwrap();
        let back = read(&tb).unwrap();
        assert_eq!(back, t);
        if t.rank() > 1 && t.shape().iter().filter(|&&n| n > 1).count() > 1 {
            assert!(read_header(&tb).unwrap().fortran_order);
        }
    }

    #[test]
    fn every_dtype_roundtrips_in_both_orders() {
        roundtrip(&[2, 3], vec![1.5f32, -2.0, 3.0, 4.0, 5.0, f32::NAN]);
        roundtrip(&[3, 2], vec![half::f16::ONE; 6]);
        roundtrip(&[2, 2], vec![1.0f64, 2.0, 3.0, 4.0]);
        roundtrip(&[2, 2], vec![half::bf16::from_f32(1.5); 4]);
        roundtrip(&[4], vec![-1i8, 2, 3, 4]);
        roundtrip(&[2, 1, 2], vec![-1i16, 2, 3, 4]);
        roundtrip(&[1, 3], vec![-1i32, 2, 3]);
        roundtrip(&[2], vec![i64::MIN, i64::MAX]);
        roundtrip(&[2, 2], vec![0u8, 255, 1, 2]);
        roundtrip(&[2], vec![u16::MAX, 1]);
        roundtrip(&[2], vec![u32::MAX, 1]);
        roundtrip(&[2, 2], vec![u64::MAX, 1, 2, 3]);
        roundtrip(&[2, 3], vec![true, false, true, true, false, false]);
        roundtrip(&[], vec![7u32]);
        roundtrip(&[0, 3], Vec::<f32>::new());
    }

    #[test]
    fn headers_match_numpy_byte_for_byte() {
        // numpy.save(f, numpy.zeros((2, 3), numpy.float32)) writes this header.
        let h = header_bytes(DType::F32, &[2, 3], false);
        let mut want = b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }".to_vec();
        want.resize(127, b' ');
        want.push(b'\n');
        assert_eq!(h, want);
        // numpy.save(f, numpy.zeros(5, numpy.bool_)), numpy.save(f, numpy.float64(1.0)).
        let h = header_bytes(DType::Bool, &[5], false);
        assert!(h.starts_with(b"\x93NUMPY\x01\x00v\x00{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }"));
        let h = header_bytes(DType::F64, &[], false);
        let dict = b"{'descr': '<f8', 'fortran_order': False, 'shape': (), }";
        assert_eq!(h.len(), 128);
        assert_eq!(&h[10..10 + dict.len()], dict.as_slice());
        assert!(h[10 + dict.len()..127].iter().all(|&b| b == b' ') && h[127] == b'\n');
        // Fortran order: the growth padding follows the last dim.
        let h = header_bytes(DType::I16, &[3, 123456], true);
        let text = std::str::from_utf8(&h[10..]).unwrap();
        assert!(text.starts_with("{'descr': '<i2', 'fortran_order': True, 'shape': (3, 123456), }"));
        assert_eq!(text.len() + 10, 128);
        // A very long shape needs version 2.0.
        let h = header_bytes(DType::U8, &vec![1; 30000], false);
        assert_eq!(&h[6..8], &[2, 0]);
        assert_eq!(h.len() % 64, 0);
    }

    #[test]
    fn numpy_written_files_read_and_rewrite_identically() {
        // Written by numpy 2 `numpy.save` (the fuzz seeds).
        let files: [(&[u8], &str); 5] = [
            (include_bytes!("../../../fuzz/seeds/npy/f32_c.npy"), "f32 [2, 3] C"),
            (include_bytes!("../../../fuzz/seeds/npy/i32_f3.npy"), "i32 [2, 3, 4] F"),
            (include_bytes!("../../../fuzz/seeds/npy/bool.npy"), "bool [2, 2] C"),
            (include_bytes!("../../../fuzz/seeds/npy/f16_0d.npy"), "f16 [] C"),
            (include_bytes!("../../../fuzz/seeds/npy/u32_big.npy"), "u32 [3] C"),
        ];
        for (bytes, what) in files {
            let a = read(bytes).unwrap();
            let h = read_header(bytes).unwrap();
            let order = if h.fortran_order { "F" } else { "C" };
            assert_eq!(format!("{} {:?} {order}", a.dtype(), a.shape()), what);
            if h.big_endian {
                assert_eq!(a.to_vec::<u32>().unwrap(), [0, 1, 2]);
            } else {
                assert_eq!(to_bytes(&a).unwrap(), bytes, "{what}: fnabi writes numpy's bytes");
            }
        }
        let f = read(include_bytes!("../../../fuzz/seeds/npy/i32_f3.npy")).unwrap();
        assert_eq!(f.get::<i32>(&[1, 2, 3]).unwrap(), 12 + 2 * 4 + 3);
        // numpy's complex64 (little-endian) and complex128 (big-endian, each
        // part swapped on its own), written by numpy: see complex_cli.rs.
        let c = read(include_bytes!("../../../fuzz/seeds/npy/c64.npy")).unwrap();
        let z = |re, im| fnabi_abi::Complex::new(re, im);
        assert_eq!(c.to_vec::<fnabi_abi::Complex<f32>>().unwrap(), [z(1.0, 2.0), z(-0.5, 0.25), z(3.0, -1.0)]);
        assert_eq!(to_bytes(&c).unwrap(), include_bytes!("../../../fuzz/seeds/npy/c64.npy"));
        let b = read(include_bytes!("../../../fuzz/seeds/npy/c128_big.npy")).unwrap();
        let v = b.to_vec::<fnabi_abi::Complex<f64>>().unwrap();
        assert_eq!((v[0], v[3]), (fnabi_abi::Complex::new(1.0, 2.0), fnabi_abi::Complex::new(1e-300, -5e300)));
        assert_eq!((v[1].re.to_bits(), v[1].im), ((-0.0f64).to_bits(), f64::NEG_INFINITY));
        assert!(v[2].re.is_nan() && v[2].im == 0.1);
    }

    fn file(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        v.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        v.extend_from_slice(dict.as_bytes());
        v.extend_from_slice(data);
        v
    }

    fn read_err(dict: &str, data: &[u8]) -> String {
        read(&file(dict, data)).map(|a| format!("{a:?}")).unwrap_err().to_string()
    }

    #[test]
    fn readers_accept_other_writers() {
        // Double quotes, no trailing comma, other key order, Python 2 longs, big-endian data.
        let f = file("{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \">i4\"}\n", &[0, 0, 0, 1, 0, 0, 1, 0]);
        let a = read(&f).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), [1, 256]);
        let v3 = {
            let mut v = b"\x93NUMPY\x03\x00".to_vec();
            let d = "{'descr': '<u2', 'fortran_order': False, 'shape': (1,)}\n";
            v.extend_from_slice(&(d.len() as u32).to_le_bytes());
            v.extend_from_slice(d.as_bytes());
            v.extend_from_slice(&[1, 2]);
            v
        };
        assert_eq!(read(&v3).unwrap().to_vec::<u16>().unwrap(), [0x0201]);
        // A misaligned view is copied.
        let mut off = vec![0u8];
        off.extend(file("{'descr': '<u4', 'fortran_order': False, 'shape': (1,)}\n", &[1, 0, 0, 0]));
        assert_eq!(read(&off[1..]).unwrap().to_vec::<u32>().unwrap(), [1]);
        // `=`, `?` and 1-byte types with any order character.
        assert_eq!(
            read(&file("{'descr': '=u1', 'fortran_order': False, 'shape': (1,)}", &[9])).unwrap().dtype(),
            DType::U8
        );
        assert_eq!(
            read(&file("{'descr': '?', 'fortran_order': False, 'shape': ()}", &[1])).unwrap().dtype(),
            DType::BOOL
        );
    }

    #[test]
    fn malformed_files_are_typed_errors_with_offsets() {
        assert_eq!(
            read(b"PK\x03\x04").unwrap_err().to_string(),
            "at byte 0: npy: not a .npy file (no \\x93NUMPY magic)"
        );
        assert_eq!(
            read(b"\x93NUMPY\x04\x00\x00\x00").unwrap_err().to_string(),
            "at byte 6: npy: unsupported format version 4.0 (fnabi reads 1.0, 2.0, 3.0)"
        );
        assert!(read(b"\x93NUMPY\x01\x00\x10").unwrap_err().to_string().contains("truncated header length"));
        assert!(
            read(b"\x93NUMPY\x01\x00\x10\x00{}")
                .unwrap_err()
                .to_string()
                .contains("header declares 16 bytes but only 2 remain")
        );
        assert!(read(b"\x93NUMPY\x02\x00\xff\xff\xff\xff").unwrap_err().to_string().contains("exceeds"));
        let ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}";
        assert_eq!(read_err(ok, &[0; 3]), "at byte 65: npy: the data is 3 byte(s) but the header announces 4");
        assert!(read_err(ok, &[0; 5]).contains("the data is 5 byte(s)"));
        assert_eq!(
            read_err("{'descr': '<c4', 'fortran_order': False, 'shape': (1,)}", &[0; 4]),
            "at byte 20: npy: unsupported descr \"<c4\""
        );
        let v2 = read_err("{'descr': '<V2', 'fortran_order': False, 'shape': (1,)}", &[0; 2]);
        assert!(
            v2.contains("unsupported descr \"<V2\": numpy saves ml_dtypes'") && v2.contains("4xbf16=@x.bin"),
            "{v2}"
        );
        assert!(
            read_err("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", &[0; 4])
                .contains("structured")
        );
        assert!(read_err("{'descr': '<f4', 'shape': (1,)}", &[0; 4]).contains("no fortran_order"));
        assert!(
            read_err("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", &[0; 4])
                .contains("unexpected key")
        );
        assert!(
            read_err("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", &[0; 4])
                .contains("twice")
        );
        assert!(read_err("{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}", &[0; 4]).contains("True or False"));
        assert!(read_err("{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", &[0; 4]).contains("trailing comma"));
        assert!(read_err("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", &[0; 4]).contains("non-negative"));
        assert!(
            read_err("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}", &[])
                .contains("does not fit")
        );
        assert!(
            read_err("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", &[])
                .contains("too large")
        );
        assert!(
            read_err("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", &[0; 4]).contains("after the header")
        );
        assert!(read_err("{'descr': '<f\\4', 'fortran_order': False, 'shape': (1,)}", &[0; 4]).contains("escapes"));
        assert!(read_err("{'descr': '<f4", &[]).contains("unterminated"));
        assert!(read_err("{'descr' '<f4'}", &[]).contains("expected `:`"));
        assert!(read_err("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", &[]).contains("expected `}`"));
        assert!(read_err("{3: 1}", &[]).contains("expected a string"));
        assert!(read_err("{'descr': 'é'}", &[]).contains("non-ASCII"));
        let many = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': ({})}}", vec!["1"; 65].join(", "));
        assert!(read_err(&many, &[0]).contains("more than 64 dims"));
        assert!(read_err("{'descr': '|b1', 'fortran_order': False, 'shape': (1,)}", &[2]).contains("bool"));
        let mut v3 = b"\x93NUMPY\x03\x00\x02\x00\x00\x00\xff\xfe".to_vec();
        v3.push(0);
        assert!(read(&v3).unwrap_err().to_string().contains("not UTF-8"));
    }

    #[test]
    fn files_and_strided_arrays() {
        let dir = crate::scratch::Scratch::new("npy");
        let a = Array::from_vec(&[3, 4], (0..12).collect::<Vec<i64>>()).unwrap();
        let s = a.restrided(&[2, 2], &[8, -2], 3 * 8).unwrap(); // not dense in any order
        let path = dir.join("s.npy");
        save(&path, &s).unwrap();
        let back = read_file(&path).unwrap();
        assert_eq!(back, s);
        assert!(back.is_c_contiguous());
        // A mapped file is shared, not copied.
        // SAFETY: the test owns the file and leaves it unchanged while mapped.
        let m = unsafe { ByteBuffer::map_file(&path) }.unwrap();
        let mapped = read_buffer(&m).unwrap();
        assert_eq!(mapped, s);
        assert!(!mapped.is_writable());
        let bools = Array::from_vec(&[2], vec![true, false]).unwrap();
        save(&path, &bools).unwrap();
        assert_eq!(read_file(&path).unwrap(), bools);
        assert!(read_file(dir.join("missing.npy")).is_err());
        assert!(save(dir.join("no/such/dir.npy"), &bools).is_err());
    }
}
