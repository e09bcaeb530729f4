//! IREE VM calling-convention strings (`0rr_r`): the register types of a
//! function's arguments and results, parsed strictly with byte offsets.

use crate::error::{ParseError, ParseErrorKind};
use std::fmt;
use std::str::FromStr;

/// One register type of a calling convention.
///
/// ```
/// use fnabi_abi::cconv::CconvType;
/// assert_eq!(CconvType::from_code(b'F'), Some(CconvType::F64));
/// assert_eq!(CconvType::I64.code(), 'I');
/// assert_eq!(CconvType::from_code(b'x'), None);
/// assert_eq!(CconvType::Ref.description(), "a ref or none (cconv `r`)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CconvType {
    /// `i`: a 32-bit integer.
    I32,
    /// `I`: a 64-bit integer.
    I64,
    /// `f`: a float32.
    F32,
    /// `F`: a float64.
    F64,
    /// `r`: a reference (or null).
    Ref,
}

impl CconvType {
    /// The cconv character.
    pub const fn code(self) -> char {
        match self {
            CconvType::I32 => 'i',
            CconvType::I64 => 'I',
            CconvType::F32 => 'f',
            CconvType::F64 => 'F',
            CconvType::Ref => 'r',
        }
    }

    /// The type of a cconv character.
    pub fn from_code(b: u8) -> Option<CconvType> {
        Some(match b {
            b'i' => CconvType::I32,
            b'I' => CconvType::I64,
            b'f' => CconvType::F32,
            b'F' => CconvType::F64,
            b'r' => CconvType::Ref,
            _ => return None,
        })
    }

    /// A description for messages (`an i32 value (cconv i)`).
    pub fn description(self) -> &'static str {
        match self {
            CconvType::I32 => "an i32 value (cconv `i`)",
            CconvType::I64 => "an i64 value (cconv `I`)",
            CconvType::F32 => "an f32 value (cconv `f`)",
            CconvType::F64 => "an f64 value (cconv `F`)",
            CconvType::Ref => "a ref or none (cconv `r`)",
        }
    }
}

/// One item of a calling convention's argument or result list.
///
/// ```
/// use fnabi_abi::cconv::{CallingConvention, CconvItem, CconvType};
/// // one ref, then a variadic run of (i32, ref) pairs; no results
/// let cc = CallingConvention::parse("0rCirD_v").unwrap();
/// assert_eq!(cc.args(), &[
///     CconvItem::Single(CconvType::Ref),
///     CconvItem::Variadic(vec![CconvType::I32, CconvType::Ref]),
/// ]);
/// assert!(cc.results().is_empty());
/// let built = CallingConvention::new(cc.args().to_vec(), vec![]);
/// assert_eq!(built.to_string(), "0rCirD_v");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CconvItem {
    /// One register.
    Single(CconvType),
    /// `C…D`: a variadic segment, repeated at call time (preceded by its
    /// count).
    Variadic(Vec<CconvType>),
}

/// A VM function's calling convention: `0` (the version), the argument
/// types, `_`, the result types; `v` stands for an empty list.
///
/// IREE also accepts an empty fragment for "no values"; fnabi reads both
/// and prints `v`. Strict where the runtime does not look: a `v` among
/// other types, an empty or nested `C…D`, an unterminated `C` and a second
/// `_` are errors.
///
/// ```
/// use fnabi_abi::cconv::{CallingConvention, CconvItem, CconvType};
/// let cc = CallingConvention::parse("0rr_rrI").unwrap();
/// assert_eq!(cc.results(), &[
///     CconvItem::Single(CconvType::Ref),
///     CconvItem::Single(CconvType::Ref),
///     CconvItem::Single(CconvType::I64),
/// ]);
/// assert_eq!(CallingConvention::parse("0v_v").unwrap().to_string(), "0v_v");
/// let e = CallingConvention::parse("0rx_r").unwrap_err();
/// assert_eq!(e.to_string(), "at byte 2: unknown type name \"x\"");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CallingConvention {
    args: Vec<CconvItem>,
    results: Vec<CconvItem>,
}

impl CallingConvention {
    /// A convention from its argument and result items.
    pub fn new(args: Vec<CconvItem>, results: Vec<CconvItem>) -> Self {
        CallingConvention { args, results }
    }

    /// Parses a calling-convention string.
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        let b = s.as_bytes();
        match b.first() {
            Some(b'0') => {}
            Some(_) => return Err(ParseError::new(0, ParseErrorKind::Expected("calling convention version `0`"))),
            None => return Err(ParseError::new(0, ParseErrorKind::Expected("a calling convention (`0…_…`)"))),
        }
        let Some(us) = b.iter().position(|&c| c == b'_') else {
            return Err(ParseError::new(b.len(), ParseErrorKind::Expected("`_` between arguments and results")));
        };
        let args = parse_fragment(b, 1, us)?;
        let results = parse_fragment(b, us + 1, b.len())?;
        Ok(CallingConvention { args, results })
    }

    /// The argument items.
    pub fn args(&self) -> &[CconvItem] {
        &self.args
    }

    /// The result items.
    pub fn results(&self) -> &[CconvItem] {
        &self.results
    }

    /// True when an argument list is variadic.
    pub fn has_variadic_args(&self) -> bool {
        self.args.iter().any(|i| matches!(i, CconvItem::Variadic(_)))
    }
}

fn parse_fragment(b: &[u8], start: usize, end: usize) -> Result<Vec<CconvItem>, ParseError> {
    let frag = &b[start..end];
    if frag == b"v" || frag.is_empty() {
        return Ok(Vec::new());
    }
    let mut items = Vec::with_capacity(frag.len());
    let mut i = start;
    while i < end {
        match b[i] {
            b'C' => {
                let seg_start = i;
                i += 1;
                let mut seg = Vec::new();
                loop {
                    match b.get(i).copied() {
                        Some(b'D') if i < end => break,
                        Some(c) if i < end => {
                            let t = CconvType::from_code(c).ok_or_else(|| bad_code(b, i))?;
                            seg.push(t);
                            i += 1;
                        }
                        _ => {
                            return Err(ParseError::new(
                                seg_start,
                                ParseErrorKind::Expected("`D` closing the variadic segment"),
                            ));
                        }
                    }
                }
                if seg.is_empty() {
                    return Err(ParseError::new(seg_start, ParseErrorKind::Expected("a type inside `C…D`")));
                }
                items.push(CconvItem::Variadic(seg));
                i += 1;
            }
            c => {
                let t = CconvType::from_code(c).ok_or_else(|| bad_code(b, i))?;
                items.push(CconvItem::Single(t));
                i += 1;
            }
        }
    }
    Ok(items)
}

fn bad_code(b: &[u8], i: usize) -> ParseError {
    match b[i] {
        b'v' => ParseError::new(i, ParseErrorKind::Expected("`v` only as the whole (empty) list")),
        b'C' => ParseError::new(i, ParseErrorKind::Expected("no nested `C` inside `C…D`")),
        b'_' => ParseError::new(i, ParseErrorKind::Expected("a single `_`")),
        c if c.is_ascii_graphic() => ParseError::new(i, ParseErrorKind::UnknownName((c as char).to_string())),
        c => ParseError::new(i, ParseErrorKind::UnknownName(format!("\\x{c:02x}"))),
    }
}

impl fmt::Display for CallingConvention {
    /// The canonical string (`v` for an empty list).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(f: &mut fmt::Formatter<'_>, items: &[CconvItem]) -> fmt::Result {
            if items.is_empty() {
                return f.write_str("v");
            }
            for item in items {
                match item {
                    CconvItem::Single(t) => write!(f, "{}", t.code())?,
                    CconvItem::Variadic(seg) => {
                        f.write_str("C")?;
                        for t in seg {
                            write!(f, "{}", t.code())?;
                        }
                        f.write_str("D")?;
                    }
                }
            }
            Ok(())
        }
        f.write_str("0")?;
        list(f, &self.args)?;
        f.write_str("_")?;
        list(f, &self.results)
    }
}

impl FromStr for CallingConvention {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CallingConvention::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cconv_strings_of_the_fixtures() {
        for s in ["0rr_r", "0r_r", "0rf_r", "0ii_i", "0v_v", "0rr_rrI", "0r_I", "0rrrr_r", "0r_iI", "0r_Ii"] {
            assert_eq!(CallingConvention::parse(s).unwrap().to_string(), s);
        }
        // Imports with variadic segments.
        for s in ["0rIIiiCID_r", "0rriiCID_v", "0rrIiiiICiDCiirIID_v", "0iICrD_i"] {
            assert_eq!(CallingConvention::parse(s).unwrap().to_string(), s);
        }
        let cc = CallingConvention::parse("0rrIiiiICiDCiirIID_v").unwrap();
        assert_eq!(cc.args().len(), 9);
        assert_eq!(
            cc.args()[8],
            CconvItem::Variadic(vec![CconvType::I32, CconvType::I32, CconvType::Ref, CconvType::I64, CconvType::I64])
        );
        assert!(cc.has_variadic_args());
        // Empty fragments read as `v`.
        assert_eq!(CallingConvention::parse("0_").unwrap().to_string(), "0v_v");
        assert_eq!(CallingConvention::parse("0_r").unwrap().to_string(), "0v_r");
    }

    #[test]
    fn cconv_errors_have_offsets() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "expected a calling convention (`0…_…`)"),
            ("1r_r", 0, "expected calling convention version `0`"),
            ("0rr", 3, "expected `_` between arguments and results"),
            ("0rx_r", 2, "unknown type name \"x\""),
            ("0vr_r", 1, "expected `v` only as the whole (empty) list"),
            ("0r_r_r", 4, "expected a single `_`"),
            ("0Cr_r", 1, "expected `D` closing the variadic segment"),
            ("0CD_r", 1, "expected a type inside `C…D`"),
            ("0CCrDD_r", 2, "expected no nested `C` inside `C…D`"),
            ("0r_\u{1}", 3, "unknown type name \"\\\\x01\""),
        ];
        for (s, off, msg) in cases {
            let e = CallingConvention::parse(s).unwrap_err();
            assert_eq!((e.offset(), e.kind().to_string()), (*off, msg.to_string()), "{s:?}");
        }
    }
}
