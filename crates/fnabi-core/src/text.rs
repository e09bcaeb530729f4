//! IREE's text form of values, as `iree-run-module` takes and prints them:
//! arrays `2x3xf32=1 2 3 4 5 6` (or IREE's nested output form
//! `2x3xf32=[1 2 3][4 5 6]`), typed rank-0 values `i32=42`, and bare
//! scalars `42`, `1.5`.
//!
//! Parsing is stricter than IREE, which skips any brackets and commas
//! anywhere and reads hex digits as floats: here the values are separated by
//! whitespace and/or single commas; brackets, when present, must be exactly
//! IREE's output form (each sub-array of rank ≥ 1 below the outermost dim
//! bracketed) or that form inside one more outer pair; integers must fit the
//! element type (decimal, or `0x` hex); floats are decimal (or `inf`/`nan`,
//! any case, signed) and a literal beyond the type's range (`1e39` or
//! `1e999` for `f32`) is an error rather than infinity. As in IREE, one
//! value fills the whole array (splat). `f16`/`bf16` text is rounded through
//! `f64`. Booleans (`i1`) read `0`/`1`, `true`/`false`, and IREE's own
//! two-hex-digit form `00`/`01`.
//!
//! **Complex elements** (`cf64` = `complex<f32>`, `cf128` =
//! `complex<f64>`, IREE's names) are written `RE+IMj` or `RE-IMj`, numpy's
//! form without its parentheses: `1+2j`, `-0.5-1E-07j`, `NAN+INFj`, each
//! part as a float of the part type above (the sign of a zero part is kept:
//! `0-0j`). IREE's runtime has no text form for complex values (it reads and
//! prints them as hex bytes, `0000803F00000040` for `1+2j`): fnabi reads
//! that too (exactly 2 hex digits per byte, memory order), but prints the
//! readable form, which IREE cannot read back (and which, like every float
//! text here, does not keep a NaN's payload). A real number alone (`3`) is
//! not a complex element; write `3+0j`.
//!
//! Printing reads back to the same value, and IREE reads what it prints:
//! integers in decimal; floats as the shortest decimal that reads back to
//! the same value of their type (`0.1`, `3.4028235E+38`, `INF`, `-NAN`),
//! positional unless the decimal exponent is below -4 or above 15, where
//! they take an exponent written as C's `%G` writes it (`1E+20`, `1.5E-07`);
//! booleans as `00`/`01`, which is how IREE's runtime reads (and prints) an
//! `i1` element. Long arrays can be elided as IREE elides them
//! ([`format_array_elided`]).
//!
//! ```
//! use fnabi_core::text::{format_array, parse_value};
//! use fnabi_core::Value;
//! let Value::Array(a) = parse_value("2x3xf32=1 2 3 4 5 6.1").unwrap() else { panic!() };
//! assert_eq!(format_array(&a), "2x3xf32=[1 2 3][4 5 6.1]");
//! let Value::Array(b) = parse_value("3xi1=1 0 01").unwrap() else { panic!() };
//! assert_eq!(format_array(&b), "3xi1=01 00 01");
//! assert_eq!(parse_value("42").unwrap(), Value::Int(42));
//! assert_eq!(parse_value("-1.5").unwrap(), Value::Float(-1.5));
//! let err = parse_value("2xf32=1 2 3").unwrap_err();
//! assert_eq!(err.to_string(), "at byte 6: expected 2 values (or 1 to fill the array), found 3");
//! ```

use crate::array::{Array, element_count};
use crate::error::{ParseError, ParseErrorKind};
use crate::value::Value;
use fnabi_abi::scalar::{DType, ScalarType};
use half::{bf16, f16};
use std::fmt::Write;

/// The IREE name of an element type: `i8`…`i64`, `ui8`…`ui64`, `f16`,
/// `bf16`, `f32`, `f64`, `i1` for `bool`.
///
/// ```
/// use fnabi_core::{DType, text::dtype_name};
/// assert_eq!((dtype_name(DType::F32), dtype_name(DType::U8), dtype_name(DType::BOOL)), ("f32", "ui8", "i1"));
/// ```
pub fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "i1",
        DType::Scalar(s) => match s {
            ScalarType::U8 => "ui8",
            ScalarType::U16 => "ui16",
            ScalarType::U32 => "ui32",
            ScalarType::U64 => "ui64",
            s => s.short_name(),
        },
        DType::Float8(f) => f.name(),
        DType::Complex(c) => c.iree_name(),
    }
}

/// Reads an IREE element type name (`si8` and `i8` are the same type;
/// `cf64`/`cf128` are the complex types).
///
/// ```
/// use fnabi_core::{DType, text::dtype_from_name};
/// assert_eq!(dtype_from_name("si8"), Some(DType::I8));
/// assert_eq!(dtype_from_name("i8"), Some(DType::I8));
/// assert_eq!(dtype_from_name("f7"), None);
/// assert_eq!(dtype_from_name("cf64"), Some(DType::C64));
/// ```
pub fn dtype_from_name(name: &str) -> Option<DType> {
    Some(match name {
        "i1" => DType::Bool,
        "i8" | "si8" => DType::I8,
        "i16" | "si16" => DType::I16,
        "i32" | "si32" => DType::I32,
        "i64" | "si64" => DType::I64,
        "ui8" => DType::U8,
        "ui16" => DType::U16,
        "ui32" => DType::U32,
        "ui64" => DType::U64,
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "f32" => DType::F32,
        "f64" => DType::F64,
        "cf64" => DType::C64,
        "cf128" => DType::C128,
        _ => return fnabi_abi::Float8::from_name(name).filter(|f| f.name() == name).map(DType::Float8),
    })
}

fn invalid(offset: usize, msg: String) -> ParseError {
    ParseError::new(offset, ParseErrorKind::Invalid(msg))
}

/// Parses one value: an array (`SHAPExTYPE=VALUES`), a rank-0 array
/// (`TYPE=VALUE`), or a bare scalar (an integer is [`Value::Int`], any
/// other number [`Value::Float`], `true`/`false` [`Value::Bool`]).
///
/// ```
/// use fnabi_core::{text::parse_value, Value};
/// assert_eq!(parse_value("42")?, Value::Int(42));
/// assert_eq!(parse_value("1.5")?, Value::Float(1.5));
/// assert_eq!(parse_value("true")?, Value::Bool(true));
/// assert_eq!(parse_value("i32=42")?.as_array().unwrap().shape(), [0usize; 0]);
/// assert!(parse_value("2xi8=1 300").is_err()); // 300 does not fit i8
/// # Ok::<(), fnabi_abi::ParseError>(())
/// ```
pub fn parse_value(text: &str) -> Result<Value<'static>, ParseError> {
    if text.contains('=') {
        return parse_array(text).map(Value::from);
    }
    let t = text.trim();
    let start = text.len() - text.trim_start().len();
    if t.is_empty() {
        return Err(ParseError::new(start, ParseErrorKind::Expected("a value")));
    }
    match t {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        _ => {}
    }
    if let Some(v) = parse_int(t) {
        return v.map(Value::Int).map_err(|_| {
            let hint =
                if t.starts_with('-') { "" } else { " (an unsigned one up to 2^64 - 1 fits typed: `ui64=VALUE`)" };
            invalid(start, format!("integer `{t}` does not fit a signed 64-bit integer{hint}"))
        });
    }
    parse_float(t).map(Value::Float).ok_or_else(|| {
        // `2x3xf32` or `f32`: an array's header without its values.
        let ty = t.rsplit('x').next().unwrap_or(t);
        match dtype_from_name(ty) {
            Some(_) => invalid(start, format!("`{t}` is not a number (an array is `{t}=VALUES`; one value fills it)")),
            None => invalid(start, format!("`{t}` is not a number")),
        }
    })
}

/// Parses an array in IREE's text form (see the module docs).
///
/// ```
/// use fnabi_core::text::parse_array;
/// let a = parse_array("2x2xi32=[1 2][3 4]")?;
/// assert_eq!((a.shape(), a.to_vec::<i32>().unwrap()), (&[2, 2][..], vec![1, 2, 3, 4]));
/// // One value fills the whole array.
/// assert_eq!(parse_array("3xf32=7")?.to_vec::<f32>().unwrap(), [7.0; 3]);
/// # Ok::<(), fnabi_abi::ParseError>(())
/// ```
pub fn parse_array(text: &str) -> Result<Array<'static>, ParseError> {
    let eq = text.find('=').ok_or(ParseError::new(0, ParseErrorKind::Expected("`SHAPExTYPE=VALUES`")))?;
    let header = &text[..eq];
    let lead = header.len() - header.trim_start().len();
    let header = header.trim();
    let mut parts: Vec<&str> = header.split('x').collect();
    let ty = parts.pop().unwrap_or_default();
    let mut shape = Vec::with_capacity(parts.len());
    let mut at = lead;
    for p in &parts {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid(at, format!("`{p}` is not a dimension (digits)")));
        }
        shape.push(p.parse::<usize>().map_err(|_| invalid(at, format!("dimension `{p}` is too large")))?);
        at += p.len() + 1;
    }
    let dtype = dtype_from_name(ty).ok_or_else(|| {
        if ty.is_empty() {
            ParseError::new(at, ParseErrorKind::Expected("an element type before `=`"))
        } else {
            ParseError::new(at, ParseErrorKind::UnknownName(ty.to_owned()))
        }
    })?;
    let n = element_count(&shape).map_err(|_| invalid(lead, format!("shape {shape:?} is too large")))?;
    let body_at = eq + 1;
    let body = &text[body_at..];
    // One pass: each value encoded in place as it is read (a single value
    // for many elements is a splat, copied after); then the count and the
    // brackets are checked.
    let es = dtype.size();
    let mut out = Array::zeros(dtype, &shape).map_err(|e| invalid(lead, e.to_string()))?;
    // A fresh, dense array: element t is at bytes t*es.. (bools are encoded 0 or 1).
    let dst = out.storage_bytes_mut().map_err(|e| invalid(lead, e.to_string()))?;
    // f32 and f64 read their short literals in the same pass as the
    // tokens (`decimal`), the rest through `encode`.
    let (values, brackets) = match dtype {
        DType::Scalar(ScalarType::F32) => fill(Tokens::with_reader(body, body_at, decimal::short_f32), dtype, dst)?,
        DType::Scalar(ScalarType::F64) => fill(Tokens::with_reader(body, body_at, decimal::short_f64), dtype, dst)?,
        _ => fill(Tokens::new(body, body_at), dtype, dst)?,
    };
    let count_ok = values == n || (values == 1 && n > 0);
    if !count_ok {
        return Err(invalid(
            body_at,
            if n == 1 {
                format!("expected 1 value, found {values}")
            } else {
                format!("expected {n} values (or 1 to fill the array), found {values}")
            },
        ));
    }
    if brackets {
        if values != n {
            return Err(invalid(body_at, "a single value that fills the array takes no brackets".into()));
        }
        let toks = Tokens::new(body, body_at).collect::<Result<Vec<_>, _>>()?;
        check_brackets(&toks, &shape, text.len())?;
    }
    if values < n {
        let (one, rest) = dst.split_at_mut(es);
        for slot in rest.chunks_exact_mut(es) {
            slot.copy_from_slice(one);
        }
    }
    Ok(out)
}

/// Encodes each value of `tokens` into the next element of `dst` (the
/// ones beyond `dst`'s elements are counted, not written): how many
/// values there were and whether there were brackets.
#[inline(always)]
fn fill<R: Fn(&[u8]) -> Option<(f64, usize)>>(
    tokens: Tokens<'_, R>,
    dtype: DType,
    dst: &mut [u8],
) -> Result<(usize, bool), ParseError> {
    let (mut values, mut brackets) = (0usize, false);
    let mut slots = dst.chunks_exact_mut(dtype.size());
    for t in tokens {
        match t? {
            Tok::Num(off, s) => {
                if let Some(slot) = slots.next() {
                    encode(dtype, s, off, slot)?;
                }
                values += 1;
            }
            Tok::Exact(_, v) => {
                if let Some(slot) = slots.next() {
                    match dtype {
                        DType::Scalar(ScalarType::F32) => slot.copy_from_slice(&(v as f32).to_ne_bytes()),
                        _ => slot.copy_from_slice(&v.to_ne_bytes()),
                    }
                }
                values += 1;
            }
            _ => brackets = true,
        }
    }
    Ok((values, brackets))
}

#[derive(Debug)]
enum Tok<'s> {
    Open(usize),
    Close(usize),
    Num(usize, &'s str),
    /// A value its tokens' reader read (exact in the element type).
    Exact(usize, f64),
}

/// The bytes that end a value: ASCII whitespace (as `is_ascii_whitespace`),
/// `,`, `[` and `]`.
static ENDS_VALUE: [bool; 256] = {
    let mut t = [false; 256];
    let ends = b" \t\n\x0c\r,[]";
    let mut i = 0;
    while i < ends.len() {
        t[ends[i] as usize] = true;
        i += 1;
    }
    t
};

/// The values, brackets and separators of an array's body, one token at a
/// time (no allocation); commas only between values. A value that `read`
/// reads whole (its value and length) is a [`Tok::Exact`], any other a
/// [`Tok::Num`].
struct Tokens<'s, R> {
    s: &'s str,
    base: usize,
    i: usize,
    comma_ok: bool,
    read: R,
}

impl<'s> Tokens<'s, fn(&[u8]) -> Option<(f64, usize)>> {
    /// Tokens whose values are all [`Tok::Num`].
    fn new(s: &'s str, base: usize) -> Tokens<'s, impl Fn(&[u8]) -> Option<(f64, usize)>> {
        Tokens::with_reader(s, base, |_: &[u8]| None)
    }
}

impl<'s, R: Fn(&[u8]) -> Option<(f64, usize)>> Tokens<'s, R> {
    fn with_reader(s: &'s str, base: usize, read: R) -> Self {
        Tokens { s, base, i: 0, comma_ok: false, read }
    }
}

impl<'s, R: Fn(&[u8]) -> Option<(f64, usize)>> Iterator for Tokens<'s, R> {
    type Item = Result<Tok<'s>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.s.as_bytes();
        while self.i < b.len() {
            let i = self.i;
            match b[i] {
                c if c.is_ascii_whitespace() => self.i += 1,
                b',' => {
                    if !self.comma_ok {
                        return Some(Err(invalid(self.base + i, "a comma must separate two values".into())));
                    }
                    self.comma_ok = false;
                    self.i += 1;
                }
                b'[' => {
                    self.comma_ok = false;
                    self.i += 1;
                    return Some(Ok(Tok::Open(self.base + i)));
                }
                b']' => {
                    self.comma_ok = true;
                    self.i += 1;
                    return Some(Ok(Tok::Close(self.base + i)));
                }
                _ => {
                    self.comma_ok = true;
                    if let Some((v, len)) = (self.read)(&b[i..]) {
                        self.i = i + len;
                        return Some(Ok(Tok::Exact(self.base + i, v)));
                    }
                    let j = b[i + 1..].iter().position(|&c| ENDS_VALUE[usize::from(c)]).map_or(b.len(), |p| i + 1 + p);
                    self.i = j;
                    return Some(Ok(Tok::Num(self.base + i, &self.s[i..j])));
                }
            }
        }
        None
    }
}

/// Brackets must be IREE's output form, optionally inside one outer pair.
fn check_brackets(toks: &[Tok<'_>], shape: &[usize], end: usize) -> Result<(), ParseError> {
    // The expected sequence of b'[' b']' b'n' for the output form, cut
    // after `cap` bytes: a longer one matches no tokens anyway, and an
    // array with a 0 dim has no elements however large its other dims,
    // whose form would otherwise take their product to write.
    fn expected_form(dims: &[usize], cap: usize, out: &mut Vec<u8>) {
        match dims {
            [] => out.push(b'n'),
            [n] => out.extend(std::iter::repeat_n(b'n', (*n).min(cap.saturating_sub(out.len()) + 1))),
            [n, rest @ ..] => {
                for _ in 0..*n {
                    if out.len() > cap {
                        return;
                    }
                    out.push(b'[');
                    expected_form(rest, cap, out);
                    out.push(b']');
                }
            }
        }
    }
    let mut form = Vec::new();
    expected_form(shape, toks.len() + 2, &mut form);
    let got: Vec<u8> = toks
        .iter()
        .map(|t| match t {
            Tok::Open(_) => b'[',
            Tok::Close(_) => b']',
            Tok::Num(..) | Tok::Exact(..) => b'n',
        })
        .collect();
    let outer = got.len() == form.len() + 2 && got.first() == Some(&b'[') && got.last() == Some(&b']');
    if got == form || (outer && got[1..got.len() - 1] == form[..]) {
        return Ok(());
    }
    // Point at the first token that departs from the output form.
    let k = got.iter().zip(&form).position(|(a, b)| a != b).unwrap_or(form.len().min(got.len()));
    let off = toks.get(k).map_or(end, |t| match t {
        Tok::Open(o) | Tok::Close(o) | Tok::Num(o, _) | Tok::Exact(o, _) => *o,
    });
    Err(invalid(
        off,
        format!("brackets do not follow the shape {shape:?} (write the values flat, or as IREE prints them)"),
    ))
}

/// `Some(Ok)` for an integer literal (decimal or `0x` hex, signed), `Some(Err)`
/// when it does not fit in i64, `None` when it is not an integer literal.
fn parse_int(s: &str) -> Option<Result<i64, ()>> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(h) => (16, h),
        None => (10, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let mag = u128::from_str_radix(digits, radix).unwrap_or(u128::MAX);
    let v = if neg { -(mag.min(1 << 64) as i128) } else { mag.min(1 << 64) as i128 };
    Some(i64::try_from(v).map_err(|_| ()))
}

/// Parses an unsigned integer literal into u64 (for `ui64`).
fn parse_u64(s: &str) -> Option<Result<u64, ()>> {
    let digits = s.strip_prefix('+').unwrap_or(s);
    let (radix, digits) = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(h) => (16, h),
        None => (10, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    Some(u64::from_str_radix(digits, radix).map_err(|_| ()))
}

/// A decimal float (no hex), or `inf`/`infinity`/`nan` in any case, signed.
fn parse_float(s: &str) -> Option<f64> {
    parse_float_as::<f64>(s)
}

/// [`parse_float`] into `T`, rounded once (core's `FromStr` for floats:
/// one optional sign, decimal digits, no hex).
fn parse_float_as<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.parse::<T>().ok()
}

/// Writes the element `s` of `dtype` into `out` (native byte order).
fn encode(dtype: DType, s: &str, off: usize, out: &mut [u8]) -> Result<(), ParseError> {
    let range = || invalid(off, format!("`{s}` is out of range for {}", dtype_name(dtype)));
    let not = |what: &str| invalid(off, format!("`{s}` is not {what}"));
    match dtype {
        DType::Complex(c) => encode_complex(c, s, off, out)?,
        DType::Float8(f) => {
            let v = parse_float(s).ok_or_else(|| not("a number"))?;
            let named_inf =
                !v.is_infinite() || s.trim_start_matches(['+', '-']).to_ascii_lowercase().starts_with("inf");
            out[0] = f.from_f64(v).filter(|_| named_inf).ok_or_else(range)?;
        }
        DType::Bool => {
            out[0] = match s {
                "0" | "00" | "false" => 0,
                "1" | "01" | "true" => 1,
                _ => return Err(not("a boolean (0, 1, 00, 01, true, false)")),
            }
        }
        DType::Scalar(st) if st.is_float() => {
            // An infinity must be asked for by name: a finite literal (or
            // `1e999`) that rounds to one is out of range.
            let named_inf =
                |v: f64| !v.is_infinite() || s.trim_start_matches(['+', '-']).to_ascii_lowercase().starts_with("inf");
            let v = if st == ScalarType::F32 {
                // Parse f32 directly: correctly rounded, no double rounding.
                let v = parse_float_as::<f32>(s).ok_or_else(|| not("a number"))?;
                if !named_inf(f64::from(v)) {
                    return Err(range());
                }
                out.copy_from_slice(&v.to_ne_bytes());
                return Ok(());
            } else {
                parse_float(s).ok_or_else(|| not("a number"))?
            };
            if !named_inf(v) {
                return Err(range());
            }
            match st {
                ScalarType::F64 => out.copy_from_slice(&v.to_ne_bytes()),
                ScalarType::F16 => {
                    let h = f16::from_f64(v);
                    if h.is_infinite() && v.is_finite() {
                        return Err(range());
                    }
                    out.copy_from_slice(&h.to_bits().to_ne_bytes());
                }
                _ => {
                    let h = bf16::from_f64(v);
                    if h.is_infinite() && v.is_finite() {
                        return Err(range());
                    }
                    out.copy_from_slice(&h.to_bits().to_ne_bytes());
                }
            }
        }
        DType::Scalar(ScalarType::U64) => {
            let v = parse_u64(s).ok_or_else(|| not("an unsigned integer"))?.map_err(|_| range())?;
            out.copy_from_slice(&v.to_ne_bytes());
        }
        DType::Scalar(st) => {
            let v = parse_int(s).ok_or_else(|| not("an integer"))?.map_err(|_| range())?;
            macro_rules! put {
                ($t:ty) => {{
                    let x = <$t>::try_from(v).map_err(|_| range())?;
                    out.copy_from_slice(&x.to_ne_bytes());
                }};
            }
            match st {
                ScalarType::I8 => put!(i8),
                ScalarType::I16 => put!(i16),
                ScalarType::I32 => put!(i32),
                ScalarType::I64 => put!(i64),
                ScalarType::U8 => put!(u8),
                ScalarType::U16 => put!(u16),
                _ => put!(u32),
            }
        }
    }
    Ok(())
}

/// Writes the complex element `s` (`RE±IMj`, or IREE's hex bytes) into `out`.
fn encode_complex(c: fnabi_abi::ComplexType, s: &str, off: usize, out: &mut [u8]) -> Result<(), ParseError> {
    let part = c.part();
    if !s.contains(['j', 'J']) && s.len() == 2 * out.len() && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        // IREE's form: the element's bytes in memory order.
        for (k, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&s[2 * k..2 * k + 2], 16).map_err(|_| invalid(off, format!("`{s}` is not hex")))?;
        }
        return Ok(());
    }
    let not = || invalid(off, format!("`{s}` is not a complex number (write RE+IMj or RE-IMj, e.g. `1.5-2j`)"));
    let body = s.strip_suffix('j').ok_or_else(not)?;
    // The imaginary part starts at the last sign that is neither the first
    // byte nor an exponent's.
    let b = body.as_bytes();
    let split = (1..b.len())
        .rev()
        .find(|&i| matches!(b[i], b'+' | b'-') && !matches!(b[i - 1], b'e' | b'E'))
        .ok_or_else(not)?;
    let (re, im) = (&body[..split], &body[split..]);
    let (n, o) = (part.size(), off + split);
    encode(DType::Scalar(part), re, off, &mut out[..n])?;
    encode(DType::Scalar(part), im, o, &mut out[n..])
}

/// The shortest decimal that reads back (through [`parse_array`]) to the
/// same value of the float type `st`: `0.1`, `-0`, `3.4028235E+38` (f32
/// max), `INF`, `-NAN`. Positional unless the decimal exponent is below -4
/// or above 15; the exponent is written as C's `%G` writes it.
///
/// ```
/// use fnabi_core::ScalarType;
/// use fnabi_core::text::format_float;
/// assert_eq!(format_float(f64::from(f32::MAX), ScalarType::F32), "3.4028235E+38");
/// assert_eq!(format_float(f64::from(0.1f32), ScalarType::F32), "0.1");
/// assert_eq!(format_float(0.1, ScalarType::F64), "0.1");
/// assert_eq!(format_float(123456789.0, ScalarType::F64), "123456789");
/// assert_eq!(format_float(1e-5, ScalarType::F64), "1E-05");
/// assert_eq!(format_float(half::f16::from_f64(0.1).to_f64(), ScalarType::F16), "0.1");
/// ```
pub fn format_float(v: f64, st: ScalarType) -> String {
    let mut out = String::new();
    push_float(v, st, &mut out);
    out
}

/// Appends [`format_float`]'s text of `v` to `out`, allocating nothing of
/// its own: f32 and f64 take their shortest digits from `zmij`, f16 and
/// bf16 from the shortest `{:e}` precision that reads back.
///
/// ```
/// use fnabi_core::text::push_float;
/// use fnabi_core::ScalarType;
/// let mut out = String::from("x=");
/// push_float(0.1, ScalarType::F64, &mut out);
/// out.push(' ');
/// push_float(1e20, ScalarType::F64, &mut out);
/// assert_eq!(out, "x=0.1 1E+20");
/// ```
pub fn push_float(v: f64, st: ScalarType, out: &mut String) {
    if v.is_sign_negative() {
        out.push('-');
    }
    if v.is_nan() {
        out.push_str("NAN");
        return;
    }
    if v.is_infinite() {
        out.push_str("INF");
        return;
    }
    if v == 0.0 {
        out.push('0');
        return;
    }
    let mut buf = zmij::Buffer::new();
    let owned;
    let text: &str = match st {
        ScalarType::F32 => buf.format_finite((v as f32).abs()),
        ScalarType::F16 => {
            owned = shortest_e(v.abs(), |c| f16::from_f64(c).to_f64());
            &owned
        }
        ScalarType::BF16 => {
            owned = shortest_e(v.abs(), |c| bf16::from_f64(c).to_f64());
            &owned
        }
        _ => buf.format_finite(v.abs()),
    };
    // Most values: zmij's own fixed-point text is already the form, less
    // its `.0` (`100.0` → `100`, `0.001`, `123.25`); exponent forms and
    // fixed forms below 1e-4 are laid out again below. zmij writes an
    // exponent (among the last 5 bytes: `1e-7`, `5e-324`, `3.4028235e+38`)
    // unless the first digit's decimal exponent is in -6..=12 (f32) or
    // -5..=15 (f64); the `{:e}` texts of f16 and bf16 always have one. So a
    // text without one is positional here too unless it starts `0.0000`
    // (exponent -5 or -6), and neither test needs a loop with a
    // data-dependent exit (a mispredicted branch per value, where the
    // lengths vary). (`float_text_edges` pins zmij's ranges: 1e15 prints
    // positional, 1e16 with an exponent.)
    if is_positional(text.as_bytes()) {
        out.push_str(text.strip_suffix(".0").unwrap_or(text));
        return;
    }
    let (digits, n, x) = decimal_digits(text);
    // The text is laid out in a stack buffer and appended once: at most 17
    // digits, a point, `E-308` or 19 zeros of padding.
    let mut b = [0u8; 48];
    let mut k = 0;
    let mut put = |bytes: &[u8]| {
        b[k..k + bytes.len()].copy_from_slice(bytes);
        k += bytes.len();
    };
    const ZEROS: &[u8; 20] = b"00000000000000000000";
    let digits = &digits[..n];
    if !(-4..16).contains(&x) {
        put(&digits[..1]);
        if n > 1 {
            put(b".");
            put(&digits[1..]);
        }
        put(if x < 0 { b"E-" } else { b"E+" });
        let e = x.unsigned_abs();
        if e < 10 {
            put(b"0");
        }
        put(itoa::Buffer::new().format(e).as_bytes());
    } else {
        let n = n as i32;
        if x < 0 {
            put(b"0.");
            put(&ZEROS[..(-x - 1) as usize]);
            put(digits);
        } else if x + 1 >= n {
            put(digits);
            put(&ZEROS[..(x + 1 - n) as usize]);
        } else {
            let (int, frac) = digits.split_at((x + 1) as usize);
            put(int);
            put(b".");
            put(frac);
        }
    }
    // Only ASCII digits, `.`, `E`, `+` and `-` were written.
    out.push_str(std::str::from_utf8(&b[..k]).unwrap_or_default());
}

/// True when zmij's text `t` of a positive finite float is already the
/// positional form (see [`push_float`]): no exponent among its last 5
/// bytes, and not `0.0000…`.
#[inline(always)]
fn is_positional(t: &[u8]) -> bool {
    let exponent = t[t.len().saturating_sub(5)..].iter().fold(false, |e, &c| e | (c == b'e'));
    !exponent && !t.starts_with(b"0.0000")
}

/// The significant digits (no leading or trailing zeros; at most 24), their
/// count, and the decimal exponent of the first one, of a positive finite
/// float's text: `1.5e-7`, `3.4028235e38`, `123.25`, `0.001`, `1.0`, `7E5`.
fn decimal_digits(text: &str) -> ([u8; 24], usize, i32) {
    // zmij prints at most 17 significant digits (f64); 24 leaves room.
    let t = text.as_bytes();
    let mut digits = [b'0'; 24];
    let (mut n, mut int_len, mut leading_zeros, mut point) = (0usize, 0i32, 0i32, false);
    let mut i = 0;
    while i < t.len() {
        match t[i] {
            c @ b'0'..=b'9' => {
                int_len += i32::from(!point);
                if n == 0 && c == b'0' {
                    leading_zeros += 1;
                } else if n < digits.len() {
                    digits[n] = c;
                    n += 1;
                }
            }
            b'.' => point = true,
            b'e' | b'E' => break,
            _ => {}
        }
        i += 1;
    }
    // The exponent after `e`: an optional sign and at most three digits.
    let (mut exp, mut neg) = (0i32, false);
    for &c in t.get(i + 1..).unwrap_or_default() {
        match c {
            b'-' => neg = true,
            b'0'..=b'9' => exp = exp.saturating_mul(10).saturating_add(i32::from(c - b'0')),
            _ => {}
        }
    }
    let exp = if neg { -exp } else { exp };
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    (digits, n.max(1), exp + int_len - 1 - leading_zeros)
}

/// The shortest `{:e}` text of `x` that reads back to `x` through `back`
/// (a narrower float type's rounding of an `f64`).
fn shortest_e(x: f64, back: impl Fn(f64) -> f64) -> String {
    for p in 0..17 {
        let t = format!("{x:.p$e}");
        if t.parse::<f64>().is_ok_and(|c| back(c).to_bits() == x.to_bits()) {
            return t;
        }
    }
    format!("{x:e}")
}

fn format_element(a: &Array<'_>, off: usize, out: &mut String) {
    // `off` is an in-bounds element of the array's dtype (from the array's
    // own shape and strides); an out-of-range one would print nothing.
    let Some(b) = a.storage_bytes().get(off..off + a.dtype().size()) else { return };
    macro_rules! ne {
        ($t:ty) => {
            <$t>::from_ne_bytes(b.try_into().unwrap_or_default())
        };
    }
    let mut int = itoa::Buffer::new();
    match a.dtype() {
        DType::Bool => out.push_str(if b[0] != 0 { "01" } else { "00" }),
        // The shortest decimal that reads back to the same byte.
        DType::Float8(f) => push_float(f.shortest_decimal(b[0]), ScalarType::F64, out),
        DType::Complex(c) => {
            let (re, im) = match c {
                fnabi_abi::ComplexType::C64 => (f64::from(f32_at(b, 0)), f64::from(f32_at(b, 4))),
                fnabi_abi::ComplexType::C128 => (f64_at(b, 0), f64_at(b, 8)),
            };
            push_complex(re, im, c.part(), out);
        }
        DType::Scalar(st) => match st {
            ScalarType::F32 => push_float(f64::from(ne!(f32)), st, out),
            ScalarType::F64 => push_float(ne!(f64), st, out),
            ScalarType::F16 => push_float(f16::from_bits(ne!(u16)).to_f64(), st, out),
            ScalarType::BF16 => push_float(bf16::from_bits(ne!(u16)).to_f64(), st, out),
            ScalarType::I8 => out.push_str(int.format(ne!(i8))),
            ScalarType::I16 => out.push_str(int.format(ne!(i16))),
            ScalarType::I32 => out.push_str(int.format(ne!(i32))),
            ScalarType::I64 => out.push_str(int.format(ne!(i64))),
            ScalarType::U8 => out.push_str(int.format(b[0])),
            ScalarType::U16 => out.push_str(int.format(ne!(u16))),
            ScalarType::U32 => out.push_str(int.format(ne!(u32))),
            ScalarType::U64 => out.push_str(int.format(ne!(u64))),
        },
    }
}

fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_ne_bytes(b.get(at..at + 4).and_then(|s| s.try_into().ok()).unwrap_or_default())
}

fn f64_at(b: &[u8], at: usize) -> f64 {
    f64::from_ne_bytes(b.get(at..at + 8).and_then(|s| s.try_into().ok()).unwrap_or_default())
}

/// Appends a complex element's text, `RE+IMj` or `RE-IMj` (see the module
/// docs), each part as [`push_float`] writes a float of type `part`.
///
/// ```
/// use fnabi_core::text::push_complex;
/// use fnabi_core::ScalarType;
/// let mut out = String::new();
/// push_complex(1.0, -0.1, ScalarType::F64, &mut out);
/// out.push(' ');
/// push_complex(f64::NAN, 1e20, ScalarType::F32, &mut out);
/// assert_eq!(out, "1-0.1j NAN+1E+20j");
/// ```
pub fn push_complex(re: f64, im: f64, part: ScalarType, out: &mut String) {
    push_float(re, part, out);
    if !im.is_sign_negative() {
        out.push('+');
    }
    push_float(im, part, out);
    out.push('j');
}

/// Prints an array in IREE's output form: `2x3xf32=[1 2 3][4 5 6]`,
/// `4xi32=1 2 3 4`, `f32=1.5` for rank 0. Every element is printed.
///
/// ```
/// use fnabi_core::{Array, text::format_array};
/// let a = Array::from_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
/// assert_eq!(format_array(&a), "2x3xi32=[1 2 3][4 5 6]");
/// assert_eq!(format_array(&Array::scalar(1.5f32)), "f32=1.5");
/// ```
pub fn format_array(a: &Array<'_>) -> String {
    format_array_elided(a, usize::MAX)
}

/// Prints an array as [`format_array`] does, but at most `max_elements`
/// elements, eliding the rest as `iree-run-module` does: each innermost
/// row prints what is left of the budget and ends with `...` when it is cut
/// short (`4xf32=1 2...`, `3x2xi32=[1 2][3...][...]`).
///
/// ```
/// use fnabi_core::{Array, text::format_array_elided};
/// let a = Array::from_vec(&[3, 2], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
/// assert_eq!(format_array_elided(&a, 3), "3x2xi32=[1 2][3...][...]");
/// assert_eq!(format_array_elided(&a, 6), "3x2xi32=[1 2][3 4][5 6]");
/// // Empty: strides are never followed, however large the dims.
/// let e = Array::from_vec(&[0, usize::MAX >> 1], Vec::<f32>::new()).unwrap();
/// assert_eq!(format_array_elided(&e, 6), "0x9223372036854775807xf32=");
/// ```
pub fn format_array_elided(a: &Array<'_>, max_elements: usize) -> String {
    let mut out = String::new();
    for d in a.shape() {
        let _ = write!(out, "{d}x");
    }
    out.push_str(dtype_name(a.dtype()));
    out.push('=');
    let es = a.dtype().size() as isize;
    // An array's byte strides fit its memory; an empty one has none, and
    // its element strides times the element size may not fit (a dim of
    // 2^63 - 1 after a 0): they are never followed.
    let steps: Vec<isize> = a.strides().iter().map(|s| if a.is_empty() { 0 } else { s.wrapping_mul(es) }).collect();
    let mut budget = max_elements;
    // An empty array prints IREE's empty brackets (`2x0xf32=[][]`) unless
    // its leading dims would make billions of them (`5522442564x47x0xf64`):
    // then no brackets, which reads back the same (found by fuzzing).
    let pairs = a.shape().iter().take_while(|&&d| d != 0).try_fold(1usize, |acc, &d| acc.checked_mul(d));
    if a.is_empty() && pairs.is_none_or(|p| p > EMPTY_BRACKETS_MAX) {
        return out;
    }
    if a.rank() == 0 {
        format_rows(a, &[1], &[0], a.byte_offset() as isize, &mut budget, &mut out);
    } else {
        format_rows(a, a.shape(), &steps, a.byte_offset() as isize, &mut budget, &mut out);
    }
    out
}

/// How many elements an array's `Debug` form prints before eliding the rest.
pub const DEBUG_MAX_ELEMENTS: usize = 32;

impl std::fmt::Display for Array<'_> {
    /// IREE's text form ([`format_array`]), which [`parse_value`] and
    /// `iree-run-module` read back; a precision elides after that many
    /// elements as `iree-run-module` does ([`format_array_elided`]).
    ///
    /// ```
    /// use fnabi_core::Array;
    /// let a = Array::from_vec(&[2, 3], vec![1.5f32, 2.0, 3.0, 4.0, 5.0, 0.1]).unwrap();
    /// assert_eq!(a.to_string(), "2x3xf32=[1.5 2 3][4 5 0.1]");
    /// assert_eq!(format!("{a:.4}"), "2x3xf32=[1.5 2 3][4...]");
    /// assert_eq!(Array::scalar(true).to_string(), "i1=01");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_array_elided(self, f.precision().unwrap_or(usize::MAX)))
    }
}

impl std::fmt::Debug for Array<'_> {
    /// The dtype, shape, strides (in elements) and byte offset, and the
    /// elements in IREE's text form, elided after [`DEBUG_MAX_ELEMENTS`].
    ///
    /// ```
    /// use fnabi_core::Array;
    /// let a = Array::from_vec(&[2, 2], vec![1i32, 2, 3, 4]).unwrap();
    /// assert_eq!(
    ///     format!("{a:?}"),
    ///     "Array { dtype: i32, shape: [2, 2], strides: [2, 1], offset: 0, data: [1 2][3 4] }"
    /// );
    /// let long = Array::from_vec(&[100], vec![0u8; 100]).unwrap();
    /// assert!(format!("{long:?}").ends_with(" 0 0...] }"));
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = format_array_elided(self, DEBUG_MAX_ELEMENTS);
        let data = text.split_once('=').map_or(text.as_str(), |(_, d)| d);
        let data = if self.rank() == 1 { format!("[{data}]") } else { data.to_owned() };
        f.debug_struct("Array")
            .field("dtype", &format_args!("{}", self.dtype()))
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("offset", &self.byte_offset())
            .field("data", &format_args!("{data}"))
            .finish()
    }
}

/// The most bracket pairs an empty array prints (see [`format_array_elided`]).
const EMPTY_BRACKETS_MAX: usize = 4096;

/// IREE's recursive printing: brackets around every sub-array of rank ≥ 1
/// below the outermost dim, elements of the innermost dim separated by
/// spaces while the budget lasts, then `...`.
fn format_rows(a: &Array<'_>, shape: &[usize], steps: &[isize], off: isize, budget: &mut usize, out: &mut String) {
    if shape.len() > 1 {
        for i in 0..shape[0] {
            out.push('[');
            format_rows(a, &shape[1..], &steps[1..], off + i as isize * steps[0], budget, out);
            out.push(']');
        }
        return;
    }
    let n = (*budget).min(shape[0]);
    *budget -= n;
    match a.dtype() {
        DType::Scalar(ScalarType::F32) => {
            format_float_row(n, ScalarType::F32, out, |i| {
                let x = f32_at(a.storage_bytes(), (off + i as isize * steps[0]) as usize);
                (f64::from(x), x.abs())
            });
        }
        DType::Scalar(ScalarType::F64) => {
            format_float_row(n, ScalarType::F64, out, |i| {
                let x = f64_at(a.storage_bytes(), (off + i as isize * steps[0]) as usize);
                (x, x.abs())
            });
        }
        _ => {
            for i in 0..n {
                if i > 0 {
                    out.push(' ');
                }
                format_element(a, (off + i as isize * steps[0]) as usize, out);
            }
        }
    }
    if n < shape[0] {
        out.push_str("...");
    }
}

/// The `n` values of an f32 or f64 row separated by spaces, each as
/// [`push_float`] writes it for `st` (f32 or f64); `value(i)` is value `i`
/// and its magnitude in its own type.
///
/// The common value is written without looking at zmij's text again:
/// reading its last bytes and its start right after zmij wrote them byte
/// by byte stalled the CPU (a load wider than the stores it reads, 13 % of
/// the row), and a `String::push_str` per value was a `memcpy` call. Its
/// form follows from the value instead: a magnitude from `1.001e-4` to
/// [`POSITIONAL_F32`] (or [`POSITIONAL_F64`]) has a shortest decimal whose
/// first digit is at 10^-4 ..= 10^11 (f32) or 10^14 (f64), where zmij's
/// text is positional and this printer's too,
/// and that text ends `.0` exactly when the value is an integer (a value
/// that is not one has an ulp below 1, so the integers about it are
/// floats of its type and its shortest decimal is none of them; one that
/// is has a shortest decimal that is an integer too). Other values go through
/// `push_float`. The text is staged in a stack buffer, appended to `out`
/// when nearly full.
#[inline(always)]
fn format_float_row<F: zmij::Float>(n: usize, st: ScalarType, out: &mut String, value: impl Fn(usize) -> (f64, F)) {
    let high = if st == ScalarType::F32 { POSITIONAL_F32 } else { POSITIONAL_F64 };
    const CAP: usize = 1024;
    // A value takes at most 48 bytes (`push_float`'s layout buffer), a
    // separator one more.
    const ROOM: usize = 64;
    let mut stage = [0u8; CAP];
    let mut k = 0;
    let mut digits = zmij::Buffer::new();
    let mut other = String::new();
    for i in 0..n {
        if k > CAP - ROOM {
            flush_ascii(&stage[..k], out);
            k = 0;
        }
        let (v, magnitude) = value(i);
        let a = v.abs();
        if (1.001e-4..=high).contains(&a) {
            let text = digits.format_finite(magnitude).as_bytes();
            // `a` < 2^53: the round trip through i64 (one instruction each
            // way) is exact for an integer.
            let integral = (a as i64) as f64 == a;
            let text = &text[..text.len() - 2 * usize::from(integral)];
            stage[k] = b'-';
            k += usize::from(v.is_sign_negative());
            copy_short(&mut stage[k..], text);
            k += text.len();
        } else {
            other.clear();
            push_float(v, st, &mut other);
            copy_short(&mut stage[k..], other.as_bytes());
            k += other.len();
        }
        stage[k] = b' ';
        k += 1;
    }
    flush_ascii(&stage[..k.saturating_sub(1)], out);
}

/// The magnitude up to which [`format_float_row`] takes an f32 as
/// positional: its shortest decimal's first digit is at 10^11 at most
/// (zmij writes f32s positionally up to 10^12).
const POSITIONAL_F32: f64 = 9.99e11;

/// The same for an f64 (first digit at 10^14 at most; zmij: up to 10^15).
const POSITIONAL_F64: f64 = 9.99e14;

/// Appends `text` (ASCII) to `out`.
fn flush_ascii(text: &[u8], out: &mut String) {
    out.push_str(std::str::from_utf8(text).unwrap_or_default());
}

/// Copies `s` (at most 64 bytes) to the start of `dst` (at least 64 bytes
/// or `s.len()`) in two overlapping moves of a fixed width, not a `memcpy`
/// call of a variable length.
#[inline(always)]
fn copy_short(dst: &mut [u8], s: &[u8]) {
    let n = s.len();
    macro_rules! two_moves {
        ($w:literal) => {{
            dst[..$w].copy_from_slice(&s[..$w]);
            dst[n - $w..n].copy_from_slice(&s[n - $w..]);
        }};
    }
    match n {
        0..4 => dst[..n].copy_from_slice(s),
        4..8 => two_moves!(4),
        8..16 => two_moves!(8),
        16..32 => two_moves!(16),
        _ => dst[..n].copy_from_slice(s),
    }
}

/// Prints a scalar with its type, in the form [`parse_value`] and IREE
/// read: `i64=3`, `f32=1.5`, `i1=01`.
///
/// ```
/// use fnabi_core::{text::format_scalar, DType, Value};
/// assert_eq!(format_scalar(DType::I64, &Value::Int(3)).as_deref(), Some("i64=3"));
/// assert_eq!(format_scalar(DType::BOOL, &Value::Bool(true)).as_deref(), Some("i1=01"));
/// assert_eq!(format_scalar(DType::F32, &Value::Float(1.5)).as_deref(), Some("f32=1.5"));
/// assert_eq!(format_scalar(DType::I32, &Value::Float(1.5)), None); // not an i32
/// assert_eq!(format_scalar(DType::C64, &Value::Int(3)), None); // no scalar value is complex
/// ```
pub fn format_scalar(dtype: DType, v: &Value<'_>) -> Option<String> {
    let body = match (dtype, v) {
        (DType::Bool, Value::Bool(b)) => format!("{:02}", u8::from(*b)),
        (DType::Scalar(st), Value::Float(f)) if st.is_float() => format_float(*f, st),
        (d, Value::Int(i)) if !d.is_float() && !d.is_complex() => i.to_string(),
        _ => return None,
    };
    Some(format!("{}={body}", dtype_name(dtype)))
}

mod decimal;

#[cfg(test)]
mod tests;
