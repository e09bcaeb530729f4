//! Element casts of arrays (opt-in, value-checked): host numbers
//! ([`Num`]) read from any dtype and written to any other.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Num {
    I(i128),
    F(f64),
    /// A complex number (re, im).
    C(f64, f64),
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::I(i) => write!(f, "{i}"),
            Num::F(x) => write!(f, "{x:?}"),
            Num::C(re, im) => write!(f, "{re:?}{}{im:?}j", if im.is_sign_negative() { "" } else { "+" }),
        }
    }
}

pub(super) fn read_num(d: DType, b: &[u8]) -> Num {
    use ScalarType as S;
    fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&b[..N]);
        a
    }
    match d {
        DType::Bool => Num::I(i128::from(b[0] != 0)),
        DType::Float8(f) => Num::F(f.to_f32(b[0]).into()),
        DType::C64 => Num::C(f32::from_ne_bytes(arr(b)).into(), f32::from_ne_bytes(arr(&b[4..])).into()),
        DType::C128 => Num::C(f64::from_ne_bytes(arr(b)), f64::from_ne_bytes(arr(&b[8..]))),
        DType::Scalar(s) => match s {
            S::F32 => Num::F(f32::from_ne_bytes(arr(b)).into()),
            S::F64 => Num::F(f64::from_ne_bytes(arr(b))),
            S::F16 => Num::F(half::f16::from_ne_bytes(arr(b)).to_f64()),
            S::BF16 => Num::F(half::bf16::from_ne_bytes(arr(b)).to_f64()),
            S::I8 => Num::I(i8::from_ne_bytes(arr(b)).into()),
            S::I16 => Num::I(i16::from_ne_bytes(arr(b)).into()),
            S::I32 => Num::I(i32::from_ne_bytes(arr(b)).into()),
            S::I64 => Num::I(i64::from_ne_bytes(arr(b)).into()),
            S::U8 => Num::I(u8::from_ne_bytes(arr(b)).into()),
            S::U16 => Num::I(u16::from_ne_bytes(arr(b)).into()),
            S::U32 => Num::I(u32::from_ne_bytes(arr(b)).into()),
            S::U64 => Num::I(u64::from_ne_bytes(arr(b)).into()),
        },
    }
}

/// An integer value of a number, when it is one exactly.
pub(super) fn exact_int(n: Num) -> Option<i128> {
    match n {
        Num::I(i) => Some(i),
        Num::F(x) | Num::C(x, 0.0) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e38 => Some(x as i128),
        Num::F(_) | Num::C(..) => None,
    }
}

/// The real value of a number; `None` for a complex one with a nonzero
/// imaginary part.
pub(super) fn real(n: Num) -> Option<f64> {
    match n {
        Num::I(i) => Some(i as f64),
        Num::F(x) | Num::C(x, 0.0) => Some(x),
        Num::C(..) => None,
    }
}

/// Builds an array of dtype `d` from numbers, value-checked: integers must
/// fit (floats must be integral), finite floats must stay finite, bools
/// are 0 or 1. Int-to-float and f64-to-f32 round to nearest.
pub(super) fn array_of_nums(d: DType, shape: &[usize], nums: &[Num], at: &At<'_>) -> Result<Array<'static>, Error> {
    use ScalarType as S;
    let bad = |k: usize, n: Num| {
        at.kind_err(format_args!("values representable as {d}"), format_args!("{n} at flat index {k}"))
    };
    macro_rules! ints {
        ($t:ty) => {{
            let v = nums
                .iter()
                .enumerate()
                .map(|(k, &n)| exact_int(n).and_then(|i| <$t>::try_from(i).ok()).ok_or_else(|| bad(k, n)))
                .collect::<Result<Vec<$t>, _>>()?;
            Array::from_vec(shape, v)
        }};
    }
    macro_rules! floats {
        ($t:ty, $from:expr) => {{
            let v = nums
                .iter()
                .enumerate()
                .map(|(k, &n)| {
                    let x = real(n).ok_or_else(|| bad(k, n))?;
                    let y: $t = $from(x);
                    if x.is_finite() && !y.is_finite() { Err(bad(k, n)) } else { Ok(y) }
                })
                .collect::<Result<Vec<$t>, _>>()?;
            Array::from_vec(shape, v)
        }};
    }
    macro_rules! complexes {
        ($t:ty) => {{
            let v = nums
                .iter()
                .enumerate()
                .map(|(k, &n)| {
                    let (re, im) = match n {
                        Num::C(re, im) => (re, im),
                        n => (real(n).unwrap_or_default(), 0.0),
                    };
                    let c = fnabi_abi::Complex::new(re as $t, im as $t);
                    if (re.is_finite() && !c.re.is_finite()) || (im.is_finite() && !c.im.is_finite()) {
                        Err(bad(k, n))
                    } else {
                        Ok(c)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            Array::from_vec(shape, v)
        }};
    }
    match d {
        DType::C64 => complexes!(f32),
        DType::C128 => complexes!(f64),
        DType::Float8(f) => {
            let v = nums
                .iter()
                .enumerate()
                .map(|(k, &n)| real(n).and_then(|x| f.from_f64(x)).ok_or_else(|| bad(k, n)))
                .collect::<Result<Vec<u8>, _>>()?;
            Array::from_float8_bits(f, shape, v)
        }
        DType::Bool => {
            let v = nums
                .iter()
                .enumerate()
                .map(|(k, &n)| match exact_int(n) {
                    Some(0) => Ok(false),
                    Some(1) => Ok(true),
                    _ => Err(bad(k, n)),
                })
                .collect::<Result<Vec<bool>, _>>()?;
            Array::from_vec(shape, v)
        }
        DType::Scalar(s) => match s {
            S::F32 => floats!(f32, |x: f64| x as f32),
            S::F64 => floats!(f64, |x: f64| x),
            S::F16 => floats!(half::f16, half::f16::from_f64),
            S::BF16 => floats!(half::bf16, half::bf16::from_f64),
            S::I8 => ints!(i8),
            S::I16 => ints!(i16),
            S::I32 => ints!(i32),
            S::I64 => ints!(i64),
            S::U8 => ints!(u8),
            S::U16 => ints!(u16),
            S::U32 => ints!(u32),
            S::U64 => ints!(u64),
        },
    }
}

pub(super) fn cast_array(src: &Array<'_>, to: DType, at: &At<'_>) -> Result<Array<'static>, Error> {
    let dense;
    let bytes = match src.as_bytes() {
        Some(b) => b,
        None => {
            dense = src.to_contiguous()?;
            dense.as_bytes().unwrap_or_default()
        }
    };
    let es = src.dtype().size();
    let nums: Vec<Num> = bytes.chunks_exact(es).map(|c| read_num(src.dtype(), c)).collect();
    array_of_nums(to, src.shape(), &nums, at)
}
