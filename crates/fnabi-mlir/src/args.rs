//! The flat arguments of a native call: [`Arg`] (an array, a mutable
//! destination, or a scalar of any host kind) and [`Scalar`] (a value of an
//! exact MLIR type), and their conversion to the register bits of a scalar
//! parameter, checked for range and exactness.

use fnabi_abi::mlir::types::{ElementType, MlirType};
use fnabi_abi::scalar::ScalarType;
use fnabi_core::array::Array;
use fnabi_core::error::{CallError, CallErrorKind, CallSide, Error};
use fnabi_core::structure::{IndexPath, PathKey};
use fnabi_core::value::Value;
use half::{bf16, f16};

/// A scalar of an exact MLIR type (an argument or a result).
///
/// ```
/// use fnabi_mlir::{ElementType, Scalar};
/// use fnabi_core::Value;
/// assert_eq!(Scalar::Index(7).element_type(), ElementType::Index);
/// assert_eq!(Scalar::U8(200).to_value().unwrap(), Value::Int(200));
/// assert_eq!(Scalar::BF16(half::bf16::from_f32(0.5)).to_value().unwrap(), Value::Float(0.5));
/// assert!(Scalar::U64(u64::MAX).to_value().is_err()); // above i64::MAX
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// `i1`.
    Bool(bool),
    /// `i8`.
    I8(i8),
    /// `i16`.
    I16(i16),
    /// `i32`.
    I32(i32),
    /// `i64`.
    I64(i64),
    /// `index`.
    Index(i64),
    /// `ui8`.
    U8(u8),
    /// `ui16`.
    U16(u16),
    /// `ui32`.
    U32(u32),
    /// `ui64`.
    U64(u64),
    /// `f16`.
    F16(f16),
    /// `bf16`.
    BF16(bf16),
    /// `f32`.
    F32(f32),
    /// `f64`.
    F64(f64),
}

impl Scalar {
    /// Its MLIR type.
    pub fn element_type(&self) -> ElementType {
        use ScalarType as S;
        match self {
            Scalar::Bool(_) => ElementType::I1,
            Scalar::Index(_) => ElementType::Index,
            Scalar::I8(_) => ElementType::Scalar(S::I8),
            Scalar::I16(_) => ElementType::Scalar(S::I16),
            Scalar::I32(_) => ElementType::Scalar(S::I32),
            Scalar::I64(_) => ElementType::Scalar(S::I64),
            Scalar::U8(_) => ElementType::Scalar(S::U8),
            Scalar::U16(_) => ElementType::Scalar(S::U16),
            Scalar::U32(_) => ElementType::Scalar(S::U32),
            Scalar::U64(_) => ElementType::Scalar(S::U64),
            Scalar::F16(_) => ElementType::Scalar(S::F16),
            Scalar::BF16(_) => ElementType::Scalar(S::BF16),
            Scalar::F32(_) => ElementType::Scalar(S::F32),
            Scalar::F64(_) => ElementType::Scalar(S::F64),
        }
    }

    /// As a host value: `Bool`, `Int` or `Float`. A `ui64` above `i64::MAX`
    /// does not fit a [`Value::Int`] and is an error.
    pub fn to_value(&self) -> Result<Value<'static>, Error> {
        Ok(match *self {
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::I8(v) => Value::Int(v.into()),
            Scalar::I16(v) => Value::Int(v.into()),
            Scalar::I32(v) => Value::Int(v.into()),
            Scalar::I64(v) | Scalar::Index(v) => Value::Int(v),
            Scalar::U8(v) => Value::Int(v.into()),
            Scalar::U16(v) => Value::Int(v.into()),
            Scalar::U32(v) => Value::Int(v.into()),
            Scalar::U64(v) => Value::Int(i64::try_from(v).map_err(|_| {
                Error::invalid_argument(format!("ui64 result {v} does not fit a signed 64-bit integer value"))
            })?),
            Scalar::F16(v) => Value::Float(v.to_f64()),
            Scalar::BF16(v) => Value::Float(v.to_f64()),
            Scalar::F32(v) => Value::Float(v.into()),
            Scalar::F64(v) => Value::Float(v),
        })
    }

    /// The register (or stack slot) bits: integers sign- or zero-extended,
    /// floats in the low bits.
    pub(crate) fn to_bits(self) -> u64 {
        match self {
            Scalar::Bool(b) => u64::from(b),
            Scalar::I8(v) => v as i64 as u64,
            Scalar::I16(v) => v as i64 as u64,
            Scalar::I32(v) => v as i64 as u64,
            Scalar::I64(v) | Scalar::Index(v) => v as u64,
            Scalar::U8(v) => v.into(),
            Scalar::U16(v) => v.into(),
            Scalar::U32(v) => v.into(),
            Scalar::U64(v) => v,
            Scalar::F16(v) => v.to_bits().into(),
            Scalar::BF16(v) => v.to_bits().into(),
            Scalar::F32(v) => v.to_bits().into(),
            Scalar::F64(v) => v.to_bits(),
        }
    }

    /// The scalar of type `e` in the low bits of `bits`.
    #[inline]
    pub(crate) fn from_bits(e: ElementType, bits: u64) -> Scalar {
        RegKind::of(e).scalar(bits)
    }

    /// Reads a scalar of type `e` from memory.
    ///
    /// # Safety
    /// `p` must point to `e.size()` readable bytes.
    pub(crate) unsafe fn read(e: ElementType, p: *const u8) -> Scalar {
        // SAFETY: the caller guarantees e.size() readable bytes at p.
        let bits = unsafe {
            match e.size() {
                1 => u64::from(p.read()),
                2 => u64::from(p.cast::<u16>().read_unaligned()),
                4 => u64::from(p.cast::<u32>().read_unaligned()),
                _ => p.cast::<u64>().read_unaligned(),
            }
        };
        Scalar::from_bits(e, bits)
    }
}

/// The type of a scalar result returned in a register, as one flat code
/// (an [`ElementType`] is two-level): turning the register's bits into a
/// [`Scalar`] is then a single jump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegKind {
    Bool,
    Index,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
}

impl RegKind {
    pub(crate) fn of(e: ElementType) -> RegKind {
        use ScalarType as S;
        match e {
            ElementType::I1 => RegKind::Bool,
            ElementType::Index => RegKind::Index,
            // Never a scalar: the MLIR header parser refuses 8-bit float
            // and complex scalars.
            ElementType::Float8(_) => RegKind::U8,
            ElementType::Complex(_) => RegKind::U64,
            ElementType::Scalar(s) => match s {
                S::I8 => RegKind::I8,
                S::I16 => RegKind::I16,
                S::I32 => RegKind::I32,
                S::I64 => RegKind::I64,
                S::U8 => RegKind::U8,
                S::U16 => RegKind::U16,
                S::U32 => RegKind::U32,
                S::U64 => RegKind::U64,
                S::F16 => RegKind::F16,
                S::BF16 => RegKind::BF16,
                S::F32 => RegKind::F32,
                S::F64 => RegKind::F64,
            },
        }
    }

    /// The scalar in the low bits of `bits` (as [`Scalar::from_bits`]).
    #[inline]
    pub(crate) fn scalar(self, bits: u64) -> Scalar {
        match self {
            RegKind::Bool => Scalar::Bool(bits & 1 == 1),
            RegKind::Index => Scalar::Index(bits as i64),
            RegKind::I8 => Scalar::I8(bits as i8),
            RegKind::I16 => Scalar::I16(bits as i16),
            RegKind::I32 => Scalar::I32(bits as i32),
            RegKind::I64 => Scalar::I64(bits as i64),
            RegKind::U8 => Scalar::U8(bits as u8),
            RegKind::U16 => Scalar::U16(bits as u16),
            RegKind::U32 => Scalar::U32(bits as u32),
            RegKind::U64 => Scalar::U64(bits),
            RegKind::F16 => Scalar::F16(f16::from_bits(bits as u16)),
            RegKind::BF16 => Scalar::BF16(bf16::from_bits(bits as u16)),
            RegKind::F32 => Scalar::F32(f32::from_bits(bits as u32)),
            RegKind::F64 => Scalar::F64(f64::from_bits(bits)),
        }
    }
}

/// One argument of a raw call.
///
/// ```
/// use fnabi_mlir::Arg;
/// use fnabi_core::{Array, Value};
/// assert!(matches!(Arg::from_value(&Value::Int(3)).unwrap(), Arg::Int(3)));
/// assert!(matches!(Arg::from_value(&Value::Bool(true)).unwrap(), Arg::Bool(true)));
/// let v = Value::from(Array::from_vec(&[2], vec![1.0f32, 2.0]).unwrap());
/// assert!(matches!(Arg::from_value(&v).unwrap(), Arg::Array(a) if a.shape() == [2]));
/// assert!(Arg::from_value(&Value::from("text")).is_err()); // no MLIR type takes a string
/// ```
#[derive(Debug)]
pub enum Arg<'a, 'b> {
    /// An array the callee only reads (a memref argument, or a rank-0 array
    /// for a scalar argument of exactly its type).
    Array(&'a Array<'b>),
    /// An array the callee may write (destination-passing style); it must be
    /// writable ([`Array::is_writable`]).
    Mut(&'a mut Array<'b>),
    /// An integer, range-checked against the declared type (`i1` takes 0 and 1).
    Int(i64),
    /// A float, for a float type (out of that type's range is an error).
    Float(f64),
    /// A boolean, for `i1`.
    Bool(bool),
    /// A scalar of an exact type (`index` also takes `i64`).
    Scalar(Scalar),
}

impl<'a, 'b> Arg<'a, 'b> {
    /// The argument for a host value: an array, an integer, a float, a bool.
    pub fn from_value(v: &'a Value<'b>) -> Result<Self, Error> {
        Ok(match v {
            Value::Array(a) => Arg::Array(a),
            Value::Int(i) => Arg::Int(*i),
            Value::Float(f) => Arg::Float(*f),
            Value::Bool(b) => Arg::Bool(*b),
            other => {
                let kind =
                    CallError::value_kind("an array or a scalar (of an MLIR function)", format!("a {}", other.kind()));
                return Err(CallError::argument(kind).into());
            }
        })
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Arg::Array(_) | Arg::Mut(_) => "array",
            Arg::Int(_) => "int",
            Arg::Float(_) => "float",
            Arg::Bool(_) => "bool",
            Arg::Scalar(_) => "typed scalar",
        }
    }
}

impl<'a, 'b> From<&'a Array<'b>> for Arg<'a, 'b> {
    fn from(a: &'a Array<'b>) -> Self {
        Arg::Array(a)
    }
}

impl<'a, 'b> From<&'a mut Array<'b>> for Arg<'a, 'b> {
    fn from(a: &'a mut Array<'b>) -> Self {
        Arg::Mut(a)
    }
}

impl From<Scalar> for Arg<'_, '_> {
    fn from(s: Scalar) -> Self {
        Arg::Scalar(s)
    }
}

/// Where a flat (raw) argument of a native call is in the caller's values,
/// for errors: `side` and `path` (the index path of a structured
/// function's leaf; `None`: `[index]`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ArgLabel<'a> {
    pub(crate) index: usize,
    pub(crate) side: CallSide,
    pub(crate) path: Option<&'a IndexPath>,
}

impl ArgLabel<'_> {
    /// Raw argument `index`, at the path `[index]` of the arguments.
    pub(crate) fn raw(index: usize) -> ArgLabel<'static> {
        ArgLabel { index, side: CallSide::Argument, path: None }
    }

    fn path(&self) -> IndexPath {
        match self.path {
            Some(p) => p.clone(),
            None => IndexPath(vec![PathKey::Index(self.index)]),
        }
    }

    /// The declared type, and the raw argument when the path does not say it.
    fn note(&self, t: &MlirType) -> String {
        match self.path {
            Some(p) if p.keys() != [PathKey::Index(self.index)] => format!("{t}, raw argument {}", self.index),
            _ => t.to_string(),
        }
    }
}

/// A call error of `kind` at argument `i` of type `t`.
#[cold]
pub(crate) fn arg_error(i: ArgLabel<'_>, t: &MlirType, kind: CallErrorKind) -> Error {
    CallError::new(i.side, i.path(), kind).with_note(i.note(t)).into()
}

/// An error of a check that knows no path (a descriptor, a conversion),
/// placed at argument `i` of type `t` (see [`CallError::locate`]).
#[cold]
pub(crate) fn locate_arg(i: ArgLabel<'_>, t: &MlirType, e: Error) -> Error {
    CallError::locate(e, i.side, &i.path(), i.note(t))
}

/// The register bits of scalar argument `i` of type `e`.
pub(crate) fn scalar_bits(i: ArgLabel<'_>, t: &MlirType, e: ElementType, arg: &Arg<'_, '_>) -> Result<u64, Error> {
    use ScalarType as S;
    let range = |v: &dyn std::fmt::Display| {
        arg_error(i, t, CallErrorKind::OutOfRange { expected: e.to_string().into(), got: v.to_string().into() })
    };
    let s = match *arg {
        Arg::Scalar(s) => {
            let got = s.element_type();
            let ok = got == e || (e == ElementType::Index && got == ElementType::Scalar(S::I64));
            if !ok {
                return Err(arg_error(i, t, CallError::value_kind(e.to_string(), got.to_string())));
            }
            return Ok(s.to_bits());
        }
        Arg::Array(a) if a.rank() == 0 => return rank0_bits(i, t, e, a),
        Arg::Mut(ref a) if a.rank() == 0 => return rank0_bits(i, t, e, a),
        Arg::Bool(b) if e == ElementType::I1 => Scalar::Bool(b),
        Arg::Int(v) => match e {
            ElementType::Float8(_) => {
                return Err(arg_error(i, t, CallErrorKind::Invalid("8-bit float scalars are not supported".into())));
            }
            ElementType::Complex(_) => {
                return Err(arg_error(i, t, CallErrorKind::Invalid("complex scalars are not supported".into())));
            }
            ElementType::I1 => match v {
                0 | 1 => Scalar::Bool(v == 1),
                _ => {
                    let kind = CallErrorKind::OutOfRange { expected: "i1 (0 or 1)".into(), got: v.to_string().into() };
                    return Err(arg_error(i, t, kind));
                }
            },
            ElementType::Index => Scalar::Index(v),
            ElementType::Scalar(st) => match st {
                S::I8 => Scalar::I8(i8::try_from(v).map_err(|_| range(&v))?),
                S::I16 => Scalar::I16(i16::try_from(v).map_err(|_| range(&v))?),
                S::I32 => Scalar::I32(i32::try_from(v).map_err(|_| range(&v))?),
                S::I64 => Scalar::I64(v),
                S::U8 => Scalar::U8(u8::try_from(v).map_err(|_| range(&v))?),
                S::U16 => Scalar::U16(u16::try_from(v).map_err(|_| range(&v))?),
                S::U32 => Scalar::U32(u32::try_from(v).map_err(|_| range(&v))?),
                S::U64 => Scalar::U64(u64::try_from(v).map_err(|_| range(&v))?),
                _ => {
                    let f = v as f64;
                    if f as i64 != v || f.abs() >= 9.007_199_254_740_992e15 {
                        return Err(arg_error(i, t, CallErrorKind::Invalid(format!("{v} has no exact {e} value"))));
                    }
                    float_scalar(i, t, st, f)?
                }
            },
        },
        Arg::Float(f) => match e {
            ElementType::Scalar(st) if st.is_float() => float_scalar(i, t, st, f)?,
            _ => return Err(arg_error(i, t, CallError::value_kind("an integer", format!("float {f}")))),
        },
        // A bool for a number: named as what the parameter takes.
        Arg::Bool(_) => {
            let expected = if e.is_float() { "a float" } else { "an integer" };
            return Err(arg_error(i, t, CallError::value_kind(expected, arg.kind())));
        }
        _ => return Err(arg_error(i, t, CallError::value_kind("a scalar", arg.kind()))),
    };
    Ok(s.to_bits())
}

fn float_scalar(i: ArgLabel<'_>, t: &MlirType, st: ScalarType, f: f64) -> Result<Scalar, Error> {
    let s = match st {
        ScalarType::F64 => Scalar::F64(f),
        ScalarType::F32 => Scalar::F32(f as f32),
        ScalarType::F16 => Scalar::F16(f16::from_f64(f)),
        _ => Scalar::BF16(bf16::from_f64(f)),
    };
    let back = match s {
        Scalar::F32(v) => v.is_infinite(),
        Scalar::F16(v) => v.is_infinite(),
        Scalar::BF16(v) => v.is_infinite(),
        _ => false,
    };
    if back && f.is_finite() {
        let kind = CallErrorKind::OutOfRange { expected: st.to_string().into(), got: f.to_string().into() };
        return Err(arg_error(i, t, kind));
    }
    Ok(s)
}

fn rank0_bits(i: ArgLabel<'_>, t: &MlirType, e: ElementType, a: &Array<'_>) -> Result<u64, Error> {
    if a.dtype() != e.dtype() {
        return Err(arg_error(i, t, CallErrorKind::Dtype { expected: e.dtype(), got: a.dtype() }));
    }
    // SAFETY: a rank-0 array holds one element of its dtype at as_ptr()
    // (checked when it was built), and e.size() == dtype size.
    Ok(unsafe { Scalar::read(e, a.as_ptr()) }.to_bits())
}
