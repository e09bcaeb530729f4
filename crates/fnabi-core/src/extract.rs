//! Taking Rust values out of host [`Value`]s: `TryFrom<Value>` (and
//! `TryFrom<&Value>`) for [`Array<'static>`] and Rust scalars, with a typed
//! [`ErrorKind::Mismatch`](crate::ErrorKind::Mismatch) error when the value
//! is of another kind.
//!
//! A scalar comes from the host value of its kind (`Value::Int` for
//! integers, `Value::Float` for floats, `Value::Bool`) or from a 0-d array
//! (what a compiled function returns for a scalar result) whose elements
//! convert to it without loss: any integer dtype to an integer type whose
//! range holds the value, `f16`/`bf16`/`f32` and the 8-bit floats to `f32`
//! and `f64`, `f64` to
//! `f64`, `bool` to `bool`. Nothing is rounded: `Value::Float(0.1)` is no
//! `f32`, `Value::Int(300)` no `u8`.
//!
//! ```
//! use fnabi_core::{Array, ErrorKind, Value};
//! let v = Value::from(Array::scalar(2.5f32));
//! assert_eq!(f32::try_from(&v).unwrap(), 2.5);
//! assert_eq!(f64::try_from(&v).unwrap(), 2.5);
//! assert_eq!(i64::try_from(Value::Int(7)).unwrap(), 7);
//! assert_eq!(i32::try_from(Value::from(Array::scalar(7u8))).unwrap(), 7);
//! let a = Array::try_from(Value::from(Array::from_vec(&[2], vec![1i32, 2]).unwrap())).unwrap();
//! assert_eq!(a.to_vec::<i32>().unwrap(), [1, 2]);
//!
//! let e = Array::try_from(Value::Int(1)).unwrap_err();
//! assert!(matches!(e.kind(), ErrorKind::Mismatch { .. }));
//! assert_eq!(e.to_string(), "converting a value to an array: expected an array, got int");
//! let e = u8::try_from(Value::Int(300)).unwrap_err();
//! assert_eq!(e.to_string(), "converting a value to u8: expected an integer in [0, 255], got 300");
//! assert!(f32::try_from(Value::Float(0.1)).is_err()); // 0.1 is no f32
//! ```

use crate::array::Array;
use crate::error::Error;
use crate::value::Value;
use fnabi_abi::{DType, ScalarType};

/// What a value is, for messages: its kind, or an array's dtype and shape.
fn describe(v: &Value<'_>) -> String {
    match v {
        Value::Array(a) => format!("a {}{:?} array", a.dtype(), a.shape()),
        Value::Int(i) => format!("int {i}"),
        Value::Float(f) => format!("float {f}"),
        v => v.kind().to_owned(),
    }
}

impl TryFrom<Value<'_>> for Array<'static> {
    type Error = Error;
    /// The array of a `Value::Array` (its buffer shared, borrowed memory
    /// copied); any other value is an error.
    fn try_from(v: Value<'_>) -> Result<Array<'static>, Error> {
        match v {
            Value::Array(a) => (*a).into_owned(),
            v => Err(Error::mismatch("converting a value to an array", "an array", v.kind())),
        }
    }
}

impl TryFrom<&Value<'_>> for Array<'static> {
    type Error = Error;
    /// The array of a `Value::Array`, sharing its buffer (borrowed memory is
    /// copied); any other value is an error.
    fn try_from(v: &Value<'_>) -> Result<Array<'static>, Error> {
        match v {
            Value::Array(a) => match a.shared() {
                Some(a) => Ok(a),
                None => a.view().into_owned(),
            },
            v => Err(Error::mismatch("converting a value to an array", "an array", v.kind())),
        }
    }
}

/// The 0-d array a value holds, if it is one.
fn zero_d<'v, 'a>(v: &'v Value<'a>) -> Option<&'v Array<'a>> {
    match v {
        Value::Array(a) if a.rank() == 0 => Some(a),
        _ => None,
    }
}

/// An integer value: `Value::Int` or a 0-d array of an integer dtype
/// (`u64` above `i64::MAX` as an `i128`).
fn integer(v: &Value<'_>) -> Option<i128> {
    if let Value::Int(i) = v {
        return Some((*i).into());
    }
    let a = zero_d(v)?;
    let i = match a.dtype() {
        DType::I8 => a.get::<i8>(&[]).ok()?.into(),
        DType::I16 => a.get::<i16>(&[]).ok()?.into(),
        DType::I32 => a.get::<i32>(&[]).ok()?.into(),
        DType::I64 => a.get::<i64>(&[]).ok()?.into(),
        DType::U8 => a.get::<u8>(&[]).ok()?.into(),
        DType::U16 => a.get::<u16>(&[]).ok()?.into(),
        DType::U32 => a.get::<u32>(&[]).ok()?.into(),
        DType::U64 => a.get::<u64>(&[]).ok()?.into(),
        _ => return None,
    };
    Some(i)
}

/// A floating-point value: `Value::Float` or a 0-d array of a float dtype,
/// with whether it is exact in `f32` (a float dtype of at most 32 bits, or
/// a value that survives the round trip).
fn float(v: &Value<'_>) -> Option<(f64, bool)> {
    if let Value::Float(f) = v {
        return Some((*f, f.is_nan() || f64::from(*f as f32) == *f));
    }
    let a = zero_d(v)?;
    if let DType::Float8(_) = a.dtype() {
        return Some((a.float8_to_f32().ok()?[0].into(), true));
    }
    match a.dtype().scalar_type()? {
        ScalarType::F16 => Some((a.get::<half::f16>(&[]).ok()?.into(), true)),
        ScalarType::BF16 => Some((a.get::<half::bf16>(&[]).ok()?.into(), true)),
        ScalarType::F32 => Some((a.get::<f32>(&[]).ok()?.into(), true)),
        ScalarType::F64 => {
            let f = a.get::<f64>(&[]).ok()?;
            Some((f, f.is_nan() || f64::from(f as f32) == f))
        }
        _ => None,
    }
}

macro_rules! integer_from_value {
    ($($t:ty),*) => {$(
        impl TryFrom<&Value<'_>> for $t {
            type Error = Error;
            /// An integer (`Value::Int` or a 0-d integer array) in this type's range.
            fn try_from(v: &Value<'_>) -> Result<$t, Error> {
                let ctx = concat!("converting a value to ", stringify!($t));
                let range = format!("an integer in [{}, {}]", <$t>::MIN, <$t>::MAX);
                match integer(v) {
                    Some(i) => <$t>::try_from(i).map_err(|_| Error::mismatch(ctx, range, i.to_string())),
                    None => Err(Error::mismatch(ctx, range, describe(v))),
                }
            }
        }
        impl TryFrom<Value<'_>> for $t {
            type Error = Error;
            /// As `TryFrom<&Value>`.
            fn try_from(v: Value<'_>) -> Result<$t, Error> {
                <$t>::try_from(&v)
            }
        }
    )*};
}

integer_from_value!(i8, i16, i32, i64, u8, u16, u32, u64);

impl TryFrom<&Value<'_>> for f64 {
    type Error = Error;
    /// A float: `Value::Float` or a 0-d array of a float dtype.
    fn try_from(v: &Value<'_>) -> Result<f64, Error> {
        float(v).map(|(f, _)| f).ok_or_else(|| Error::mismatch("converting a value to f64", "a float", describe(v)))
    }
}

impl TryFrom<&Value<'_>> for f32 {
    type Error = Error;
    /// A float that `f32` holds exactly: a 0-d `f16`/`bf16`/`f32` array, or
    /// a `Value::Float` or 0-d `f64` array whose value is an `f32`.
    fn try_from(v: &Value<'_>) -> Result<f32, Error> {
        match float(v) {
            Some((f, true)) => Ok(f as f32),
            Some((f, false)) => {
                Err(Error::mismatch("converting a value to f32", "a float exact in f32", f.to_string()))
            }
            None => Err(Error::mismatch("converting a value to f32", "a float", describe(v))),
        }
    }
}

impl TryFrom<&Value<'_>> for bool {
    type Error = Error;
    /// A boolean: `Value::Bool` or a 0-d `bool` array.
    fn try_from(v: &Value<'_>) -> Result<bool, Error> {
        match (v, zero_d(v)) {
            (Value::Bool(b), _) => Ok(*b),
            (_, Some(a)) if a.dtype() == DType::Bool => a.get::<bool>(&[]),
            _ => Err(Error::mismatch("converting a value to bool", "a boolean", describe(v))),
        }
    }
}

macro_rules! owned_from_value {
    ($($t:ty),*) => {$(
        impl TryFrom<Value<'_>> for $t {
            type Error = Error;
            /// As `TryFrom<&Value>`.
            fn try_from(v: Value<'_>) -> Result<$t, Error> {
                <$t>::try_from(&v)
            }
        }
    )*};
}

owned_from_value!(f64, f32, bool);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_from_values_and_0d_arrays() {
        assert_eq!(i64::try_from(Value::from(Array::scalar(u64::MAX >> 1))).unwrap(), i64::MAX);
        let e = i64::try_from(Value::from(Array::scalar(u64::MAX))).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("converting a value to i64: expected an integer in [{}, {}], got {}", i64::MIN, i64::MAX, u64::MAX)
        );
        let e = i32::try_from(Value::from(Array::from_vec(&[1], vec![1i32]).unwrap())).unwrap_err();
        assert!(e.to_string().ends_with("got a i32[1] array"), "{e}");
        assert_eq!(f32::try_from(Value::Float(0.5)).unwrap(), 0.5);
        assert_eq!(f64::try_from(Value::from(Array::scalar(half::bf16::from_f32(1.5)))).unwrap(), 1.5);
        assert!(f32::try_from(Value::Float(f64::NAN)).unwrap().is_nan());
        assert!(f64::try_from(Value::Int(1)).is_err());
        assert!(bool::try_from(Value::from(Array::scalar(true))).unwrap());
        assert!(bool::try_from(Value::Int(1)).is_err());
        let e = bool::try_from(Value::Str("x".into())).unwrap_err();
        assert_eq!(e.to_string(), "converting a value to bool: expected a boolean, got str");
    }

    #[test]
    fn arrays_share_their_buffer() {
        let a = Array::from_vec(&[3], vec![1.0f32, 2.0, 3.0]).unwrap();
        let v = Value::from(a.clone());
        let b = Array::try_from(&v).unwrap();
        assert_eq!(b.as_ptr(), a.as_ptr());
        let data = [4u8, 5];
        let borrowed = Value::from(Array::from_slice(&[2], &data).unwrap());
        let c = Array::try_from(&borrowed).unwrap();
        assert_ne!(c.as_ptr(), data.as_ptr());
        assert_eq!(c.to_vec::<u8>().unwrap(), [4, 5]);
    }
}
