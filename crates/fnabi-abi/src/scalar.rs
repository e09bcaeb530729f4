//! Element types: [`ScalarType`], the 12 codes of the function ABI documents
//! (`AbiConstants::ScalarType`), [`DType`], the element type of a host array
//! (those 12, `bool`, the 8-bit floats of [`Float8`] and the complex types
//! of [`ComplexType`]), and [`Element`], the Rust types behind them (`half`
//! for float16/bfloat16, [`Complex`] (`num_complex`'s) for complex64 and
//! complex128; the 8-bit floats have none: their bytes convert exactly to
//! and from `f32`/`f64`).

use crate::error::{ParseError, ParseErrorKind};
use std::fmt;
use std::str::FromStr;

/// A scalar type code of the raw function ABI (`t` field, codes 0–11).
///
/// ```
/// use fnabi_abi::ScalarType;
/// assert_eq!(ScalarType::from_code(3), Some(ScalarType::BF16));
/// assert_eq!(ScalarType::I16.code(), 5);
/// assert_eq!(ScalarType::from_code(12), None);
/// assert_eq!((ScalarType::U32.to_string(), format!("{:#}", ScalarType::U32)), ("uint32".into(), "u32".into()));
/// assert_eq!("sint64".parse::<ScalarType>().unwrap().size(), 8);
/// assert!(ScalarType::BF16.is_float() && ScalarType::U8.is_unsigned_int());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(u8)]
pub enum ScalarType {
    /// IEEE float32 (code 0, the default).
    #[default]
    F32 = 0,
    /// IEEE float16 (code 1).
    F16 = 1,
    /// IEEE float64 (code 2).
    F64 = 2,
    /// Google bfloat16 (code 3).
    BF16 = 3,
    /// Signed int8 (code 4).
    I8 = 4,
    /// Signed int16 (code 5).
    I16 = 5,
    /// Signed int32 (code 6).
    I32 = 6,
    /// Signed int64 (code 7).
    I64 = 7,
    /// Unsigned int8 (code 8).
    U8 = 8,
    /// Unsigned int16 (code 9).
    U16 = 9,
    /// Unsigned int32 (code 10).
    U32 = 10,
    /// Unsigned int64 (code 11).
    U64 = 11,
}

impl ScalarType {
    /// All 12 types in code order.
    pub const ALL: [ScalarType; 12] = [
        ScalarType::F32,
        ScalarType::F16,
        ScalarType::F64,
        ScalarType::BF16,
        ScalarType::I8,
        ScalarType::I16,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::U8,
        ScalarType::U16,
        ScalarType::U32,
        ScalarType::U64,
    ];

    const NAMES: [&'static str; 12] = [
        "float32", "float16", "float64", "bfloat16", "sint8", "sint16", "sint32", "sint64", "uint8", "uint16",
        "uint32", "uint64",
    ];
    const SHORT: [&'static str; 12] =
        ["f32", "f16", "f64", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"];
    const SIZES: [usize; 12] = [4, 2, 8, 2, 1, 2, 4, 8, 1, 2, 4, 8];

    /// The ABI code (0–11).
    #[inline]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The type of an ABI code; `None` outside 0–11.
    ///
    /// ```
    /// use fnabi_abi::ScalarType;
    /// assert_eq!(ScalarType::from_code(11), Some(ScalarType::U64));
    /// assert_eq!(ScalarType::from_code(12), None);
    /// ```
    #[inline]
    pub const fn from_code(code: i64) -> Option<ScalarType> {
        if code < 0 || code > 11 {
            return None;
        }
        Some(Self::ALL[code as usize])
    }

    /// Size of one element in bytes.
    #[inline]
    pub const fn size(self) -> usize {
        Self::SIZES[self as usize]
    }

    /// The reference name used in human-readable signatures (`float32`, `sint8`, …).
    #[inline]
    pub const fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The short name (`f32`, `i8`, `bf16`, `u64`, …), as in MLIR/IREE text.
    #[inline]
    pub const fn short_name(self) -> &'static str {
        Self::SHORT[self as usize]
    }

    /// True for the floating point types.
    #[inline]
    pub const fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F16 | ScalarType::F64 | ScalarType::BF16)
    }

    /// True for the signed integer types.
    pub const fn is_signed_int(self) -> bool {
        matches!(self, ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64)
    }

    /// True for the unsigned integer types.
    pub const fn is_unsigned_int(self) -> bool {
        matches!(self, ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64)
    }

    /// Looks up a reference name or a short name.
    pub fn from_name(name: &str) -> Option<ScalarType> {
        let i = Self::NAMES.iter().position(|n| *n == name).or_else(|| Self::SHORT.iter().position(|n| *n == name))?;
        Some(Self::ALL[i])
    }
}

impl fmt::Display for ScalarType {
    /// The reference name (`float32`); `{:#}` gives the short name (`f32`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if f.alternate() { self.short_name() } else { self.name() })
    }
}

impl FromStr for ScalarType {
    type Err = ParseError;

    /// Accepts reference names and short names.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ScalarType::from_name(s).ok_or_else(|| ParseError::new(0, ParseErrorKind::UnknownName(s.to_owned())))
    }
}

/// The element type of a host array: one of the 12 ABI scalar types, or `bool`
/// (one byte, 0 or 1; MLIR's `i1`), which the raw ABI cannot name.
///
/// The associated constants make matching read naturally:
/// ```
/// use fnabi_abi::{DType, ScalarType};
/// let t: DType = ScalarType::F16.into();
/// assert!(matches!(t, DType::F16));
/// assert_eq!(DType::BOOL.size(), 1);
/// assert_eq!("bf16".parse::<DType>().unwrap(), DType::BF16);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// One of the ABI's scalar types.
    Scalar(ScalarType),
    /// Boolean, stored as one byte.
    Bool,
    /// An 8-bit float (MLIR's `f8E4M3FN`, …), which the raw ABI cannot name.
    Float8(Float8),
    /// A complex number of two floats, real part first (MLIR's
    /// `complex<f32>`/`complex<f64>`), which the raw ABI cannot name.
    Complex(ComplexType),
}

#[allow(missing_docs)]
impl DType {
    pub const F32: DType = DType::Scalar(ScalarType::F32);
    pub const F16: DType = DType::Scalar(ScalarType::F16);
    pub const F64: DType = DType::Scalar(ScalarType::F64);
    pub const BF16: DType = DType::Scalar(ScalarType::BF16);
    pub const I8: DType = DType::Scalar(ScalarType::I8);
    pub const I16: DType = DType::Scalar(ScalarType::I16);
    pub const I32: DType = DType::Scalar(ScalarType::I32);
    pub const I64: DType = DType::Scalar(ScalarType::I64);
    pub const U8: DType = DType::Scalar(ScalarType::U8);
    pub const U16: DType = DType::Scalar(ScalarType::U16);
    pub const U32: DType = DType::Scalar(ScalarType::U32);
    pub const U64: DType = DType::Scalar(ScalarType::U64);
    pub const BOOL: DType = DType::Bool;
    pub const F8E4M3FN: DType = DType::Float8(Float8::E4M3FN);
    pub const F8E5M2: DType = DType::Float8(Float8::E5M2);
    pub const F8E4M3FNUZ: DType = DType::Float8(Float8::E4M3FNUZ);
    pub const F8E5M2FNUZ: DType = DType::Float8(Float8::E5M2FNUZ);
    pub const C64: DType = DType::Complex(ComplexType::C64);
    pub const C128: DType = DType::Complex(ComplexType::C128);
}

impl DType {
    /// The 13 element types with a Rust [`Element`] type: the ABI codes in
    /// order, then `bool` (the 8-bit floats are [`DType::FLOAT8`]).
    pub const ALL: [DType; 13] = [
        DType::F32,
        DType::F16,
        DType::F64,
        DType::BF16,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::Bool,
    ];

    /// The 8-bit float types.
    pub const FLOAT8: [DType; 4] = [DType::F8E4M3FN, DType::F8E5M2, DType::F8E4M3FNUZ, DType::F8E5M2FNUZ];

    /// The complex types (each also has a Rust [`Element`]: [`Complex<f32>`]
    /// and [`Complex<f64>`]).
    pub const COMPLEX: [DType; 2] = [DType::C64, DType::C128];

    /// Size of one element in bytes.
    #[inline]
    pub const fn size(self) -> usize {
        match self {
            DType::Scalar(s) => s.size(),
            DType::Bool | DType::Float8(_) => 1,
            DType::Complex(c) => c.size(),
        }
    }

    /// Whether `addr` is a multiple of [`size`](DType::size) (every element
    /// size is a power of two, so this is a mask, not a division: a 64-bit
    /// divide costs tens of cycles on every array made).
    ///
    /// ```
    /// use fnabi_abi::DType;
    /// assert!(DType::F64.is_aligned(24) && !DType::F64.is_aligned(20));
    /// assert!(DType::C128.is_aligned(32) && !DType::C128.is_aligned(8) && DType::Bool.is_aligned(7));
    /// ```
    #[inline]
    pub const fn is_aligned(self, addr: usize) -> bool {
        addr & (self.size() - 1) == 0
    }

    /// The ABI scalar type, `None` for `bool`.
    #[inline]
    pub const fn scalar_type(self) -> Option<ScalarType> {
        match self {
            DType::Scalar(s) => Some(s),
            DType::Bool | DType::Float8(_) | DType::Complex(_) => None,
        }
    }

    /// The short name (`f32`, …, `bool`, `c64`, `c128`).
    #[inline]
    pub const fn short_name(self) -> &'static str {
        match self {
            DType::Scalar(s) => s.short_name(),
            DType::Bool => "bool",
            DType::Float8(f) => f.name(),
            DType::Complex(c) => c.short_name(),
        }
    }

    /// The reference name (`float32`, …, `bool`).
    #[inline]
    pub const fn name(self) -> &'static str {
        match self {
            DType::Scalar(s) => s.name(),
            DType::Bool => "bool",
            DType::Float8(f) => f.name(),
            DType::Complex(c) => c.name(),
        }
    }

    /// True for (real) floating point types; the complex types are not.
    #[inline]
    pub const fn is_float(self) -> bool {
        match self {
            DType::Scalar(s) => s.is_float(),
            DType::Bool | DType::Complex(_) => false,
            DType::Float8(_) => true,
        }
    }

    /// Looks up a name: reference, short, `bool`, MLIR's `i1`, an 8-bit
    /// float's MLIR name (`f8E4M3FN`) or ml_dtypes name (`float8_e4m3fn`),
    /// or a complex type's names ([`ComplexType::from_name`]).
    pub fn from_name(name: &str) -> Option<DType> {
        match name {
            "bool" | "i1" => Some(DType::Bool),
            _ => ScalarType::from_name(name)
                .map(DType::Scalar)
                .or_else(|| Float8::from_name(name).map(DType::Float8))
                .or_else(|| ComplexType::from_name(name).map(DType::Complex)),
        }
    }

    /// True for the complex types.
    #[inline]
    pub const fn is_complex(self) -> bool {
        matches!(self, DType::Complex(_))
    }
}

impl From<ScalarType> for DType {
    fn from(s: ScalarType) -> Self {
        DType::Scalar(s)
    }
}

impl fmt::Display for DType {
    /// The short name (`f32`, `bool`), the form used in array text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

impl FromStr for DType {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DType::from_name(s).ok_or_else(|| ParseError::new(0, ParseErrorKind::UnknownName(s.to_owned())))
    }
}

/// An 8-bit floating-point format, as MLIR and IREE name them (and
/// `ml_dtypes` implements them for numpy): a sign bit, `E` exponent bits and
/// `M` mantissa bits. `FN`: finite only, NaN where exponent and mantissa are
/// all ones; `FNUZ`: finite only, no negative zero, NaN is `0x80`, and the
/// exponent bias is one more than IEEE's.
///
/// Conversions are exact: [`Float8::to_f32`] decodes every byte;
/// [`Float8::from_f64`] rounds to nearest, ties to even, and refuses a value
/// beyond the largest finite one (∞ only where the format has it).
///
/// ```
/// use fnabi_abi::Float8;
/// let f = Float8::E4M3FN;
/// assert_eq!(f.to_f32(0x38), 1.0);
/// assert_eq!(f.to_f32(0x7e), 448.0); // the largest
/// assert!(f.to_f32(0x7f).is_nan());
/// assert_eq!(f.from_f64(0.1), Some(0x1d)); // 0.1015625, the nearest
/// assert_eq!(f.from_f64(1e6), None); // out of range: no infinity
/// assert_eq!(Float8::E5M2.from_f64(f64::INFINITY), Some(0x7c));
/// assert_eq!(Float8::E4M3FNUZ.from_f64(-0.0), Some(0x00)); // no negative zero
/// assert_eq!(f.name(), "f8E4M3FN");
/// assert_eq!(f.npy_name(), "float8_e4m3fn");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Float8 {
    /// `f8E4M3FN`: bias 7, largest 448, NaN `0x7f`/`0xff`, no infinity.
    E4M3FN,
    /// `f8E5M2`: IEEE-like with bias 15, largest 57344, ±∞ `0x7c`/`0xfc`.
    E5M2,
    /// `f8E4M3FNUZ`: bias 8, largest 240, NaN `0x80`.
    E4M3FNUZ,
    /// `f8E5M2FNUZ`: bias 16, largest 57344, NaN `0x80`.
    E5M2FNUZ,
}

impl Float8 {
    /// All four.
    pub const ALL: [Float8; 4] = [Float8::E4M3FN, Float8::E5M2, Float8::E4M3FNUZ, Float8::E5M2FNUZ];

    /// The MLIR (and IREE) type name: `f8E4M3FN`, `f8E5M2`, `f8E4M3FNUZ`, `f8E5M2FNUZ`.
    pub const fn name(self) -> &'static str {
        match self {
            Float8::E4M3FN => "f8E4M3FN",
            Float8::E5M2 => "f8E5M2",
            Float8::E4M3FNUZ => "f8E4M3FNUZ",
            Float8::E5M2FNUZ => "f8E5M2FNUZ",
        }
    }

    /// The `ml_dtypes` name (numpy's dtype name, the `.npy` descr): `float8_e4m3fn`, ….
    pub const fn npy_name(self) -> &'static str {
        match self {
            Float8::E4M3FN => "float8_e4m3fn",
            Float8::E5M2 => "float8_e5m2",
            Float8::E4M3FNUZ => "float8_e4m3fnuz",
            Float8::E5M2FNUZ => "float8_e5m2fnuz",
        }
    }

    /// Looks up an MLIR name or an `ml_dtypes` name.
    pub fn from_name(name: &str) -> Option<Float8> {
        Float8::ALL.into_iter().find(|f| f.name() == name || f.npy_name() == name)
    }

    /// (mantissa bits, exponent bias).
    const fn layout(self) -> (u32, i32) {
        match self {
            Float8::E4M3FN => (3, 7),
            Float8::E5M2 => (2, 15),
            Float8::E4M3FNUZ => (3, 8),
            Float8::E5M2FNUZ => (2, 16),
        }
    }

    /// Whether `bits` is a NaN of this format.
    pub const fn is_nan(self, bits: u8) -> bool {
        match self {
            Float8::E4M3FN => bits & 0x7f == 0x7f,
            Float8::E5M2 => bits & 0x7c == 0x7c && bits & 0x03 != 0,
            Float8::E4M3FNUZ | Float8::E5M2FNUZ => bits == 0x80,
        }
    }

    /// The value of `bits` (exact: every 8-bit float is an `f32`).
    pub fn to_f32(self, bits: u8) -> f32 {
        if self.is_nan(bits) {
            // Signed by the byte's sign bit, as ml_dtypes reads them (the
            // FNUZ NaN 0x80 is negative).
            return if bits & 0x80 != 0 { -f32::NAN } else { f32::NAN };
        }
        let (mbits, bias) = self.layout();
        let sign = if bits & 0x80 != 0 { -1.0f32 } else { 1.0 };
        let e = i32::from((bits & 0x7f) >> mbits);
        let m = f32::from(bits & ((1 << mbits) - 1));
        if self == Float8::E5M2 && e == 31 {
            return sign * f32::INFINITY;
        }
        let scale = |p: i32| 2f32.powi(p);
        if e == 0 {
            sign * m * scale(1 - bias - mbits as i32)
        } else {
            sign * (1.0 + m / scale(mbits as i32)) * scale(e - bias)
        }
    }

    /// The largest finite code (positive).
    const fn max_code(self) -> u8 {
        match self {
            Float8::E4M3FN => 0x7e,
            Float8::E5M2 => 0x7b,
            Float8::E4M3FNUZ | Float8::E5M2FNUZ => 0x7f,
        }
    }

    /// `x` rounded to this format (to nearest, ties to even); `None` when
    /// `x` is beyond the largest finite value (or infinite) and the format
    /// has no infinity. NaN gives the format's NaN (with `x`'s sign where the
    /// format has signed NaNs); -0 is 0 in the FNUZ formats.
    pub fn from_f64(self, x: f64) -> Option<u8> {
        let fnuz = matches!(self, Float8::E4M3FNUZ | Float8::E5M2FNUZ);
        let sign: u8 = if x.is_sign_negative() { 0x80 } else { 0 };
        if x.is_nan() {
            return Some(if fnuz { 0x80 } else { sign | 0x7f });
        }
        if x.is_infinite() && self != Float8::E5M2 {
            return None;
        }
        let a = x.abs();
        let max = self.max_code();
        let top = f64::from(self.to_f32(max));
        let ulp = top - f64::from(self.to_f32(max - 1));
        if a > top + ulp / 2.0 || (a == top + ulp / 2.0 && max & 1 == 1) {
            // Beyond the largest finite value once rounded.
            return if self == Float8::E5M2 { Some(sign | 0x7c) } else { None };
        }
        // The codes 0..=max are increasing in value: binary search for the
        // first code at or above `a`, then take the nearer neighbor.
        let (mut lo, mut hi) = (0u8, max);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if f64::from(self.to_f32(mid)) < a {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut code = lo;
        if code > 0 {
            let (below, above) = (f64::from(self.to_f32(code - 1)), f64::from(self.to_f32(code)));
            if a - below < above - a || (a - below == above - a && (code - 1) & 1 == 0) {
                code -= 1;
            }
        }
        let code = if code == 0 && fnuz { 0 } else { sign | code };
        Some(code)
    }
}

impl Float8 {
    /// The value of `bits` as the decimal with the fewest significant digits
    /// that [`Float8::from_f64`] reads back to `bits` (as an `f64`: print it
    /// with Rust's shortest `f64` formatting); integers (at most 57344) and
    /// non-finite values as they are, so that 448 is not written 450.
    ///
    /// ```
    /// use fnabi_abi::Float8;
    /// let f = Float8::E4M3FN;
    /// assert_eq!(f.to_f32(0x1d), 0.1015625);
    /// assert_eq!(f.shortest_decimal(0x1d), 0.1);
    /// assert_eq!(f.shortest_decimal(0x7e), 448.0);
    /// ```
    pub fn shortest_decimal(self, bits: u8) -> f64 {
        let x = f64::from(self.to_f32(bits));
        if !x.is_finite() || x.fract() == 0.0 {
            return x;
        }
        for p in 0..9 {
            if let Ok(c) = format!("{x:.p$e}").parse::<f64>()
                && self.from_f64(c) == Some(bits)
            {
                return c;
            }
        }
        x
    }
}

impl fmt::Display for Float8 {
    /// The MLIR name (`f8E4M3FN`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A complex element type: two floats of the same type, the real part
/// first, as C's `float _Complex`/`double _Complex`, numpy's `complex64`/
/// `complex128`, MLIR's `complex<f32>`/`complex<f64>` (an
/// `!llvm.struct<(f32, f32)>` in memory) and IREE's `COMPLEX_FLOAT_64`/
/// `COMPLEX_FLOAT_128`. The sizes count both parts (numpy's convention):
/// `complex64` is two `f32`.
///
/// ```
/// use fnabi_abi::{ComplexType, DType, ScalarType};
/// let c = ComplexType::C64;
/// assert_eq!((c.size(), c.part()), (8, ScalarType::F32));
/// assert_eq!((c.name(), c.short_name(), c.mlir_name(), c.iree_name()), ("complex64", "c64", "complex<f32>", "cf64"));
/// assert_eq!(ComplexType::from_name("complex<f64>"), Some(ComplexType::C128));
/// assert_eq!("complex128".parse::<DType>().unwrap(), DType::C128);
/// assert_eq!(ComplexType::from_name("complex<f16>"), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ComplexType {
    /// `complex64`: two `f32` (8 bytes).
    C64,
    /// `complex128`: two `f64` (16 bytes).
    C128,
}

impl ComplexType {
    /// Both.
    pub const ALL: [ComplexType; 2] = [ComplexType::C64, ComplexType::C128];

    /// The type of each part: `f32` or `f64`.
    pub const fn part(self) -> ScalarType {
        match self {
            ComplexType::C64 => ScalarType::F32,
            ComplexType::C128 => ScalarType::F64,
        }
    }

    /// Bytes of one element (both parts).
    pub const fn size(self) -> usize {
        2 * self.part().size()
    }

    /// numpy's name: `complex64`, `complex128`.
    pub const fn name(self) -> &'static str {
        match self {
            ComplexType::C64 => "complex64",
            ComplexType::C128 => "complex128",
        }
    }

    /// The short name: `c64`, `c128`.
    pub const fn short_name(self) -> &'static str {
        match self {
            ComplexType::C64 => "c64",
            ComplexType::C128 => "c128",
        }
    }

    /// MLIR's name: `complex<f32>`, `complex<f64>`.
    pub const fn mlir_name(self) -> &'static str {
        match self {
            ComplexType::C64 => "complex<f32>",
            ComplexType::C128 => "complex<f64>",
        }
    }

    /// IREE's element type name (`iree_hal_format_element_type`): `cf64`,
    /// `cf128`.
    pub const fn iree_name(self) -> &'static str {
        match self {
            ComplexType::C64 => "cf64",
            ComplexType::C128 => "cf128",
        }
    }

    /// Looks up any of the names above.
    pub fn from_name(name: &str) -> Option<ComplexType> {
        ComplexType::ALL
            .into_iter()
            .find(|c| c.name() == name || c.short_name() == name || c.mlir_name() == name || c.iree_name() == name)
    }
}

impl fmt::Display for ComplexType {
    /// numpy's name (`complex64`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `num_complex`'s complex number (`#[repr(C)]`, `re` then `im`): the Rust
/// [`Element`] of [`DType::C64`] (`Complex<f32>`) and [`DType::C128`]
/// (`Complex<f64>`).
///
/// ```
/// use fnabi_abi::{Complex, DType, Element};
/// assert_eq!(<Complex<f32> as Element>::DTYPE, DType::C64);
/// assert_eq!(Complex::new(1.0f64, -2.0).im, -2.0);
/// ```
pub use num_complex::Complex;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that is the element of a [`DType`]: `f32`, `half::f16`, `f64`,
/// `half::bf16`, `i8`…`i64`, `u8`…`u64`, `bool`, [`Complex<f32>`],
/// [`Complex<f64>`].
///
/// Every bit pattern of these types' size is a valid value except for `bool`,
/// which code that reads foreign memory as `bool` must check (0 or 1).
///
/// ```
/// use fnabi_abi::{DType, Element};
/// fn dtype_of<T: Element>(_: &[T]) -> DType {
///     T::DTYPE
/// }
/// assert_eq!(dtype_of(&[1u16, 2]), DType::U16);
/// assert_eq!(dtype_of(&[true]), DType::BOOL);
/// assert_eq!(<half::bf16 as Element>::DTYPE.size(), 2);
/// ```
pub trait Element: Copy + Send + Sync + PartialEq + fmt::Debug + 'static + sealed::Sealed {
    /// The element type.
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(
            impl sealed::Sealed for $t {}
            impl Element for $t {
                const DTYPE: DType = DType::$d;
            }
        )*
    };
}

element! {
    f32 => F32, half::f16 => F16, f64 => F64, half::bf16 => BF16,
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    bool => BOOL,
    Complex<f32> => C64, Complex<f64> => C128,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_sizes_names() {
        let names: Vec<_> = ScalarType::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(
            names.join(" "),
            "float32 float16 float64 bfloat16 sint8 sint16 sint32 sint64 uint8 uint16 uint32 uint64"
        );
        let short: Vec<_> = ScalarType::ALL.iter().map(|s| s.short_name()).collect();
        assert_eq!(short.join(" "), "f32 f16 f64 bf16 i8 i16 i32 i64 u8 u16 u32 u64");
        let sizes: Vec<_> = ScalarType::ALL.iter().map(|s| s.size()).collect();
        assert_eq!(sizes, [4, 2, 8, 2, 1, 2, 4, 8, 1, 2, 4, 8]);
        for (i, s) in ScalarType::ALL.iter().enumerate() {
            assert_eq!(s.code() as usize, i);
            assert_eq!(ScalarType::from_code(i as i64), Some(*s));
            assert_eq!(s.name().parse::<ScalarType>().unwrap(), *s);
            assert_eq!(s.short_name().parse::<ScalarType>().unwrap(), *s);
            assert_eq!(format!("{s:#}"), s.short_name());
        }
        assert_eq!(ScalarType::from_code(-1), None);
        assert!("float".parse::<ScalarType>().is_err());
        assert_eq!(ScalarType::default(), ScalarType::F32);
    }

    #[test]
    fn element_sizes_match() {
        fn check<T: Element>() {
            assert_eq!(std::mem::size_of::<T>(), T::DTYPE.size(), "{:?}", T::DTYPE);
        }
        check::<f32>();
        check::<half::f16>();
        check::<f64>();
        check::<half::bf16>();
        check::<i8>();
        check::<i16>();
        check::<i32>();
        check::<i64>();
        check::<u8>();
        check::<u16>();
        check::<u32>();
        check::<u64>();
        check::<bool>();
        check::<Complex<f32>>();
        check::<Complex<f64>>();
        assert_eq!(DType::from_name("i1"), Some(DType::Bool));
        assert_eq!(DType::ALL.len(), 13);
    }

    #[test]
    fn alignment_is_a_multiple_of_the_size() {
        for d in DType::ALL.iter().chain(&DType::FLOAT8).chain(&DType::COMPLEX) {
            assert!(d.size().is_power_of_two(), "{d}");
            for addr in 0..80 {
                assert_eq!(d.is_aligned(addr), addr % d.size() == 0, "{d} at {addr}");
            }
        }
    }
}
