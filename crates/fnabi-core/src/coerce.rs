//! Loose inputs typed by a function's signature: plain nested lists and bare
//! numbers become the arrays its parameters expect.
//!
//! A caller (the CLI's JSON files, a Python-like host) often writes an
//! array as nested lists (`[[1, 2], [3, 4]]`) or a 0-d array as a bare
//! number (`2.5`). Where the signature says a parameter is an array of a
//! given element type and rank, [`coerce_arguments`] builds that array,
//! numpy-like but strict: the nesting depth must be the rank, every list at
//! one depth must have the same length (a ragged list is an error naming
//! its index path), integers must fit the element type (no fractions for an
//! integer type), booleans are `true`/`false` (or `0`/`1`), and a finite
//! number that overflows a float type is an error rather than infinity. Values that are already arrays, and
//! everything the signature does not type, pass unchanged: the function's
//! own checks then report what does not fit.
//!
//! ```
//! use fnabi_core::coerce::{coerce_arguments, InputParam, InputType};
//! use fnabi_core::{DType, Dict, Value};
//! let params = [InputParam {
//!     name: None,
//!     ty: InputType::Array { dtype: DType::F32, dims: Some(vec![None, Some(2)]) },
//! }];
//! let rows = Value::List(vec![
//!     Value::List(vec![Value::Int(1), Value::Float(2.5)]),
//!     Value::List(vec![Value::Int(3), Value::Int(4)]),
//! ]);
//! let (args, _) = coerce_arguments(vec![rows], Dict::new(), &params).unwrap();
//! let a = args[0].as_array().unwrap();
//! assert_eq!((a.shape(), a.to_vec::<f32>().unwrap()), (&[2, 2][..], vec![1.0, 2.5, 3.0, 4.0]));
//!
//! let ragged = Value::List(vec![Value::List(vec![Value::Int(1)]), Value::List(vec![])]);
//! let e = coerce_arguments(vec![ragged], Dict::new(), &params).unwrap_err();
//! assert_eq!(e.to_string(), "argument [0][1]: ragged list: 0 items where [0][0] has 1");
//! ```

use crate::array::Array;
use crate::error::{CallError, CallErrorKind, CallSide, Error};
use crate::structure::{IndexPath, PathKey};
use crate::value::{Dict, Key, Value};
use fnabi_abi::scalar::DType;
use half::{bf16, f16};

/// What a function expects at one place of its inputs.
///
/// ```
/// use fnabi_core::coerce::{coerce_arguments, InputParam, InputType};
/// use fnabi_core::{DType, Dict, Value};
/// // f(pair: (i32[3], anything)) called with a tuple of a plain list and a string.
/// let ty = InputType::Sequence(vec![
///     InputType::Array { dtype: DType::I32, dims: Some(vec![Some(3)]) },
///     InputType::Any,
/// ]);
/// let ints = Value::List(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
/// let pair = Value::Tuple(vec![ints, Value::Str("as is".into())]);
/// let (args, _) = coerce_arguments(vec![pair], Dict::new(), &[InputParam { name: None, ty }]).unwrap();
/// let items = args[0].as_sequence().unwrap();
/// assert_eq!(items[0].as_array().unwrap().to_string(), "3xi32=1 2 3");
/// assert_eq!(items[1], Value::Str("as is".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputType {
    /// An array of `dtype`; `dims` is its extents (`None` for a dynamic
    /// one), or `None` when the rank is not fixed.
    Array {
        /// The element type.
        dtype: DType,
        /// The extents, when the rank is known.
        dims: Option<Vec<Option<usize>>>,
    },
    /// A list or tuple of these items.
    Sequence(Vec<InputType>),
    /// A dict with these keys.
    Dict(Vec<(Key, InputType)>),
    /// Anything: passed unchanged.
    Any,
}

impl InputType {
    /// The type of the value at `path` inside a value of this type (the
    /// type itself at the root; `None` past a leaf, or where this type has
    /// no such key).
    ///
    /// ```
    /// use fnabi_core::coerce::InputType;
    /// use fnabi_core::DType;
    /// use fnabi_core::structure::PathKey;
    /// let f32 = InputType::Array { dtype: DType::F32, dims: Some(vec![]) };
    /// let t = InputType::Dict(vec![("loss".into(), f32.clone()), ("xs".into(), InputType::Sequence(vec![InputType::Any]))]);
    /// assert_eq!(t.at(&[PathKey::Name("loss".into())]), Some(&f32));
    /// assert_eq!(t.at(&[PathKey::Name("xs".into()), PathKey::Index(0)]), Some(&InputType::Any));
    /// assert_eq!(t.at(&[PathKey::Index(0)]), None);
    /// ```
    pub fn at(&self, path: &[PathKey]) -> Option<&InputType> {
        let Some((first, rest)) = path.split_first() else { return Some(self) };
        match (self, first) {
            (InputType::Sequence(items), PathKey::Index(i)) => items.get(*i)?.at(rest),
            (InputType::Dict(entries), PathKey::Name(k)) => entries.iter().find(|(n, _)| n == k)?.1.at(rest),
            _ => None,
        }
    }
}

/// One parameter of a function: an optional keyword name and its type.
///
/// ```
/// use fnabi_core::coerce::{coerce_arguments, InputParam, InputType};
/// use fnabi_core::{DType, Dict, Value};
/// // f(x: f8E4M3FN[2]) called with a plain list of numbers.
/// let x = InputParam { name: Some("x".into()), ty: InputType::Array { dtype: DType::F8E4M3FN, dims: Some(vec![Some(2)]) } };
/// let (args, _) = coerce_arguments(vec![Value::List(vec![Value::Float(0.1), Value::Int(448)])], Dict::new(), &[x]).unwrap();
/// assert_eq!(args[0].as_array().unwrap().to_string(), "2xf8E4M3FN=0.1 448");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputParam {
    /// The keyword name, when the parameter can be passed by keyword.
    pub name: Option<Key>,
    /// The type.
    pub ty: InputType,
}

/// Types the positional arguments `args` (by position) and the keyword
/// arguments `kwargs` (by parameter name) by `params` (see the
/// [module docs](self)). Arguments beyond `params`, and keywords no
/// parameter has, pass unchanged.
///
/// ```
/// use fnabi_core::coerce::{coerce_arguments, InputParam, InputType};
/// use fnabi_core::{DType, Dict, Value};
/// // f(n: i64 (0-d), *, scale: f32 (0-d)) called as f(3, scale=0.5, extra=1).
/// let scalar = |dtype| InputType::Array { dtype, dims: Some(vec![]) };
/// let params = [
///     InputParam { name: Some("n".into()), ty: scalar(DType::I64) },
///     InputParam { name: Some("scale".into()), ty: scalar(DType::F32) },
/// ];
/// let mut kwargs = Dict::new();
/// kwargs.insert("scale", Value::Float(0.5));
/// kwargs.insert("extra", Value::Int(1));
/// let (args, kwargs) = coerce_arguments(vec![Value::Int(3)], kwargs, &params).unwrap();
/// assert_eq!(args[0].as_array().unwrap().to_string(), "i64=3");
/// assert_eq!(kwargs.get("scale").unwrap().as_array().unwrap().to_string(), "f32=0.5");
/// assert_eq!(kwargs.get("extra"), Some(&Value::Int(1))); // no parameter: unchanged
/// ```
pub fn coerce_arguments<'a>(
    args: Vec<Value<'a>>,
    kwargs: Dict<'a>,
    params: &[InputParam],
) -> Result<(Vec<Value<'a>>, Dict<'a>), Error> {
    map_arguments(args, kwargs, params, |v, p, key| coerce_argument(v, &p.ty, key))
}

/// Passes each argument that has a parameter (by position, or by keyword
/// name) through `f(value, its parameter, its key)`; arguments beyond
/// `params`, and keywords no parameter has, pass unchanged. The walk that
/// [`coerce_arguments`] makes, for callers that type only some values.
pub fn map_arguments<'a>(
    args: Vec<Value<'a>>,
    kwargs: Dict<'a>,
    params: &[InputParam],
    mut f: impl FnMut(Value<'a>, &InputParam, PathKey) -> Result<Value<'a>, Error>,
) -> Result<(Vec<Value<'a>>, Dict<'a>), Error> {
    let args = args
        .into_iter()
        .enumerate()
        .map(|(i, v)| match params.get(i) {
            Some(p) => f(v, p, PathKey::Index(i)),
            None => Ok(v),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Dict::with_capacity(kwargs.len());
    for (k, v) in kwargs.into_iter() {
        let v = match params.iter().find(|p| p.name.as_ref() == Some(&k)) {
            Some(p) => f(v, p, PathKey::Name(k.clone()))?,
            None => v,
        };
        out.push_unique(k, v);
    }
    Ok((args, out))
}

/// One argument, passed at `key` (its position or keyword), typed by `ty`
/// as [`coerce_arguments`] types each: errors name `key` and the path
/// inside the value.
///
/// ```
/// use fnabi_core::coerce::{coerce_argument, InputType};
/// use fnabi_core::structure::PathKey;
/// use fnabi_core::{DType, Value};
/// let f32 = InputType::Array { dtype: DType::F32, dims: Some(vec![]) };
/// let v = coerce_argument(Value::Float(0.5), &f32, PathKey::Index(1)).unwrap();
/// assert_eq!(v.as_array().unwrap().to_string(), "f32=0.5");
/// let e = coerce_argument(Value::Float(1e39), &f32, PathKey::Index(1)).unwrap_err();
/// assert_eq!(e.to_string(), "argument [1]: 1e39 is out of range for f32");
/// ```
pub fn coerce_argument<'a>(v: Value<'a>, ty: &InputType, key: PathKey) -> Result<Value<'a>, Error> {
    coerce(v, ty, &mut vec![key])
        .map_err(|(path, msg)| CallError::new(CallSide::Argument, path, CallErrorKind::Invalid(msg)).into())
}

/// Where (the argument's key, then the path inside it) and what failed.
type Failure = (IndexPath, String);

fn at(path: &[PathKey], msg: String) -> Failure {
    (IndexPath(path.to_vec()), msg)
}

/// Types one value by `ty` (`path` is where it is, for errors).
pub(crate) fn coerce<'a>(v: Value<'a>, ty: &InputType, path: &mut Vec<PathKey>) -> Result<Value<'a>, Failure> {
    match (ty, v) {
        (InputType::Array { dtype, dims }, v @ (Value::List(_) | Value::Tuple(_))) => {
            let rank = match dims {
                Some(d) => d.len(),
                None => nesting_depth(&v),
            };
            Ok(Value::from(nested_to_array(&v, *dtype, rank, path)?))
        }
        (InputType::Array { dtype, dims }, v @ (Value::Int(_) | Value::Float(_) | Value::Bool(_)))
            if dims.as_ref().is_none_or(Vec::is_empty) =>
        {
            Ok(Value::from(nested_to_array(&v, *dtype, 0, path)?))
        }
        (InputType::Sequence(items), Value::List(vs)) => Ok(Value::List(coerce_items(vs, items, path)?)),
        (InputType::Sequence(items), Value::Tuple(vs)) => Ok(Value::Tuple(coerce_items(vs, items, path)?)),
        (InputType::Dict(entries), Value::Dict(d)) => {
            let mut out = Dict::with_capacity(d.len());
            for (k, v) in d.into_iter() {
                let v = match entries.iter().find(|(key, _)| *key == k) {
                    Some((_, t)) => {
                        path.push(PathKey::Name(k.clone()));
                        let r = coerce(v, t, path);
                        path.pop();
                        r?
                    }
                    None => v,
                };
                out.push_unique(k, v);
            }
            Ok(Value::Dict(out))
        }
        (_, v) => Ok(v),
    }
}

fn coerce_items<'a>(
    vs: Vec<Value<'a>>,
    items: &[InputType],
    path: &mut Vec<PathKey>,
) -> Result<Vec<Value<'a>>, Failure> {
    vs.into_iter()
        .enumerate()
        .map(|(i, v)| match items.get(i) {
            Some(t) => {
                path.push(PathKey::Index(i));
                let r = coerce(v, t, path);
                path.pop();
                r
            }
            None => Ok(v),
        })
        .collect()
}

/// How deep lists nest along their first items.
fn nesting_depth(v: &Value<'_>) -> usize {
    match v {
        Value::List(items) | Value::Tuple(items) => 1 + items.first().map_or(0, nesting_depth),
        _ => 0,
    }
}

/// The array that nested lists (or one number, for rank 0) stand for.
fn nested_to_array(
    v: &Value<'_>,
    dtype: DType,
    rank: usize,
    path: &mut Vec<PathKey>,
) -> Result<Array<'static>, Failure> {
    // The shape from the first item at each depth.
    let mut shape = Vec::with_capacity(rank);
    let mut cur = v;
    for _ in 0..rank {
        match cur {
            Value::List(items) | Value::Tuple(items) => {
                shape.push(items.len());
                match items.first() {
                    Some(first) => cur = first,
                    None => break,
                }
            }
            _ => break,
        }
    }
    if shape.len() < rank && shape.last() != Some(&0) {
        return Err(at(path, format!("nested lists of depth {} for an array of rank {rank}", shape.len())));
    }
    shape.resize(rank, 0);
    let mut leaves: Vec<&Value<'_>> = Vec::with_capacity(shape.iter().product());
    collect_leaves(v, &shape, path, &mut leaves)?;
    build(dtype, &shape, &leaves).map_err(|(k, msg)| {
        // Point at the element: its index from its position in C order.
        let mut idx = vec![0; shape.len()];
        let mut rest = k;
        for d in (0..shape.len()).rev() {
            idx[d] = rest % shape[d].max(1);
            rest /= shape[d].max(1);
        }
        let mut p = path.clone();
        p.extend(idx.into_iter().map(PathKey::Index));
        at(&p, msg)
    })
}

fn collect_leaves<'v>(
    v: &'v Value<'_>,
    shape: &[usize],
    path: &mut Vec<PathKey>,
    out: &mut Vec<&'v Value<'v>>,
) -> Result<(), Failure> {
    match (shape.split_first(), v) {
        (None, Value::List(_) | Value::Tuple(_)) => {
            Err(at(path, "nested deeper than the array's rank (a ragged list?)".to_owned()))
        }
        (None, leaf) => {
            out.push(leaf);
            Ok(())
        }
        (Some((&n, rest)), Value::List(items) | Value::Tuple(items)) => {
            if items.len() != n {
                return Err(at(
                    path,
                    format!("ragged list: {} items where {} has {n}", items.len(), sibling_name(path)),
                ));
            }
            for (i, item) in items.iter().enumerate() {
                path.push(PathKey::Index(i));
                let r = collect_leaves(item, rest, path, out);
                path.pop();
                r?;
            }
            Ok(())
        }
        (Some(_), other) => Err(at(path, format!("expected a list (ragged?), got {}", other.kind()))),
    }
}

/// The first list at the same depth as `path` (in the same argument, its
/// first key), which fixed that depth's length.
fn sibling_name(path: &[PathKey]) -> String {
    let first: Vec<PathKey> =
        path.iter().enumerate().map(|(j, k)| if j == 0 { k.clone() } else { PathKey::Index(0) }).collect();
    if first.len() < 2 { "the first list".to_owned() } else { IndexPath(first).to_string() }
}

/// Converts the leaf numbers to `dtype`; on failure, the element's
/// position (C order) and why.
fn build(dtype: DType, shape: &[usize], leaves: &[&Value<'_>]) -> Result<Array<'static>, (usize, String)> {
    let mut out = Elements::with_capacity(dtype, leaves.len());
    for (k, v) in leaves.iter().enumerate() {
        out.push(v).map_err(|m| (k, m))?;
    }
    out.into_array(shape).map_err(|m| (0, m))
}

/// How a leaf value reads in an element error.
fn shown(v: &Value<'_>) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::Bool(b) => b.to_string(),
        other => other.kind().to_owned(),
    }
}

fn int<T: TryFrom<i64>>(dtype: DType, v: &Value<'_>) -> Result<T, String> {
    match v {
        Value::Int(i) => T::try_from(*i).map_err(|_| format!("{i} is out of range for {dtype}")),
        other => Err(format!("{} is not a valid {dtype} element", shown(other))),
    }
}

/// A number as a float element: `narrow`ed from f64; a finite number that
/// narrows to an infinity is out of range.
fn float<T>(dtype: DType, v: &Value<'_>, narrow: impl Fn(f64) -> T, is_inf: impl Fn(&T) -> bool) -> Result<T, String> {
    let x = match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        other => return Err(format!("{} is not a valid {dtype} element", shown(other))),
    };
    let t = narrow(x);
    if is_inf(&t) && x.is_finite() { Err(format!("{} is out of range for {dtype}", shown(v))) } else { Ok(t) }
}

/// The elements of an array being built from numbers, one at a time, in
/// C order: what typing a list by an array parameter converts each leaf
/// with (here and in the typed JSON reader of [`crate::inputs`], which
/// reads numbers straight from the text into these buffers).
pub(crate) enum Elements {
    F32(Vec<f32>),
    F64(Vec<f64>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
    /// Numbers are real: x + 0j.
    C64(Vec<fnabi_abi::Complex<f32>>),
    C128(Vec<fnabi_abi::Complex<f64>>),
    /// The format and the elements' bits.
    Float8(fnabi_abi::scalar::Float8, Vec<u8>),
}

impl Elements {
    /// Room for `n` elements of `dtype`.
    pub(crate) fn with_capacity(dtype: DType, n: usize) -> Elements {
        match dtype {
            DType::F32 => Elements::F32(Vec::with_capacity(n)),
            DType::F64 => Elements::F64(Vec::with_capacity(n)),
            DType::F16 => Elements::F16(Vec::with_capacity(n)),
            DType::BF16 => Elements::BF16(Vec::with_capacity(n)),
            DType::I8 => Elements::I8(Vec::with_capacity(n)),
            DType::I16 => Elements::I16(Vec::with_capacity(n)),
            DType::I32 => Elements::I32(Vec::with_capacity(n)),
            DType::I64 => Elements::I64(Vec::with_capacity(n)),
            DType::U8 => Elements::U8(Vec::with_capacity(n)),
            DType::U16 => Elements::U16(Vec::with_capacity(n)),
            DType::U32 => Elements::U32(Vec::with_capacity(n)),
            DType::U64 => Elements::U64(Vec::with_capacity(n)),
            DType::Bool => Elements::Bool(Vec::with_capacity(n)),
            DType::C64 => Elements::C64(Vec::with_capacity(n)),
            DType::C128 => Elements::C128(Vec::with_capacity(n)),
            DType::Float8(f) => Elements::Float8(f, Vec::with_capacity(n)),
        }
    }

    /// Appends leaf `v` converted to the element type; why not, when it
    /// is not a valid element (`1.5` for an int, `300` for `u8`, a finite
    /// number beyond a float type's range).
    #[inline]
    pub(crate) fn push(&mut self, v: &Value<'_>) -> Result<(), String> {
        match self {
            Elements::F32(e) => e.push(float(DType::F32, v, |x| x as f32, |t| t.is_infinite())?),
            Elements::F64(e) => e.push(float(DType::F64, v, |x| x, |_| false)?),
            Elements::F16(e) => e.push(float(DType::F16, v, f16::from_f64, |t| t.is_infinite())?),
            Elements::BF16(e) => e.push(float(DType::BF16, v, bf16::from_f64, |t| t.is_infinite())?),
            Elements::I8(e) => e.push(int(DType::I8, v)?),
            Elements::I16(e) => e.push(int(DType::I16, v)?),
            Elements::I32(e) => e.push(int(DType::I32, v)?),
            Elements::I64(e) => e.push(int(DType::I64, v)?),
            Elements::U8(e) => e.push(int(DType::U8, v)?),
            Elements::U16(e) => e.push(int(DType::U16, v)?),
            Elements::U32(e) => e.push(int(DType::U32, v)?),
            Elements::U64(e) => e.push(int(DType::U64, v)?),
            Elements::Bool(e) => e.push(match v {
                Value::Bool(b) => *b,
                Value::Int(0) => false,
                Value::Int(1) => true,
                other => return Err(format!("{} is not a valid bool element", shown(other))),
            }),
            Elements::C64(e) => {
                e.push(fnabi_abi::Complex::new(float(DType::C64, v, |x| x as f32, |t| t.is_infinite())?, 0.0))
            }
            Elements::C128(e) => e.push(fnabi_abi::Complex::new(float(DType::C128, v, |x| x, |_| false)?, 0.0)),
            Elements::Float8(f, e) => {
                let dtype = DType::Float8(*f);
                let x = float(dtype, v, |x| x, |_| false)?;
                e.push(f.from_f64(x).ok_or_else(|| format!("{} is out of range for {dtype}", shown(v)))?)
            }
        }
        Ok(())
    }

    /// The array of `shape` (C order) these elements fill.
    pub(crate) fn into_array(self, shape: &[usize]) -> Result<Array<'static>, String> {
        let made = match self {
            Elements::F32(e) => Array::from_vec(shape, e),
            Elements::F64(e) => Array::from_vec(shape, e),
            Elements::F16(e) => Array::from_vec(shape, e),
            Elements::BF16(e) => Array::from_vec(shape, e),
            Elements::I8(e) => Array::from_vec(shape, e),
            Elements::I16(e) => Array::from_vec(shape, e),
            Elements::I32(e) => Array::from_vec(shape, e),
            Elements::I64(e) => Array::from_vec(shape, e),
            Elements::U8(e) => Array::from_vec(shape, e),
            Elements::U16(e) => Array::from_vec(shape, e),
            Elements::U32(e) => Array::from_vec(shape, e),
            Elements::U64(e) => Array::from_vec(shape, e),
            Elements::Bool(e) => Array::from_vec(shape, e),
            Elements::C64(e) => Array::from_vec(shape, e),
            Elements::C128(e) => Array::from_vec(shape, e),
            Elements::Float8(f, e) => Array::from_float8_bits(f, shape, e),
        };
        made.map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: Vec<Value<'static>>) -> Value<'static> {
        Value::List(items)
    }

    fn arr(dtype: DType, dims: &[Option<usize>]) -> InputType {
        InputType::Array { dtype, dims: Some(dims.to_vec()) }
    }

    fn one(v: Value<'static>, ty: InputType) -> Result<Value<'static>, String> {
        let p = [InputParam { name: None, ty }];
        coerce_arguments(vec![v], Dict::new(), &p).map(|(mut a, _)| a.remove(0)).map_err(|e| e.to_string())
    }

    #[test]
    fn nested_lists_and_scalars() {
        let v = one(list(vec![Value::Int(1), Value::Int(-2)]), arr(DType::I8, &[None])).unwrap();
        assert_eq!(v.as_array().unwrap().to_vec::<i8>().unwrap(), [1, -2]);
        let v = one(Value::Float(2.5), arr(DType::F64, &[])).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!((a.rank(), a.get::<f64>(&[]).unwrap()), (0, 2.5));
        // A scalar for a ranked array, or for anything untyped, is unchanged.
        assert_eq!(one(Value::Int(3), arr(DType::F32, &[Some(1)])).unwrap(), Value::Int(3));
        assert_eq!(one(Value::Int(3), InputType::Any).unwrap(), Value::Int(3));
        // Empty lists: a 0x? array.
        let v = one(list(vec![]), arr(DType::F32, &[None, Some(3)])).unwrap();
        assert_eq!(v.as_array().unwrap().shape(), [0, 0]);
        // An unknown rank is the nesting depth.
        let t = InputType::Array { dtype: DType::U8, dims: None };
        let v = one(list(vec![list(vec![Value::Int(255)])]), t).unwrap();
        assert_eq!(v.as_array().unwrap().shape(), [1, 1]);
        // Inside structures and by keyword.
        let ty =
            InputType::Sequence(vec![InputType::Any, InputType::Dict(vec![("w".into(), arr(DType::Bool, &[None]))])]);
        let p = [InputParam { name: Some("p".into()), ty }];
        let v = list(vec![Value::None, Value::dict([("w", list(vec![Value::Bool(true), Value::Int(0)]))])]);
        let (_, kw) = coerce_arguments(vec![], Dict::from_iter([(Key::from("p"), v)]), &p).unwrap();
        let w = kw.get("p").unwrap().as_sequence().unwrap()[1].get("w").unwrap().as_array().unwrap();
        assert_eq!(w.to_vec::<bool>().unwrap(), [true, false]);
    }

    #[test]
    fn errors_name_the_element() {
        let m = arr(DType::U8, &[None, None]);
        let r = |rows: Vec<Vec<i64>>| {
            list(rows.into_iter().map(|r| list(r.into_iter().map(Value::Int).collect())).collect())
        };
        assert_eq!(
            one(r(vec![vec![1, 2], vec![3, 300]]), m.clone()).unwrap_err(),
            "argument [0][1][1]: 300 is out of range for u8"
        );
        assert_eq!(
            one(r(vec![vec![1, 2], vec![3]]), m.clone()).unwrap_err(),
            "argument [0][1]: ragged list: 1 items where [0][0] has 2"
        );
        assert_eq!(
            one(list(vec![list(vec![Value::Int(1)]), Value::Int(2)]), m.clone()).unwrap_err(),
            "argument [0][1]: expected a list (ragged?), got int"
        );
        assert_eq!(
            one(list(vec![Value::Int(1)]), m).unwrap_err(),
            "argument [0]: nested lists of depth 1 for an array of rank 2"
        );
        let f = arr(DType::F32, &[None]);
        assert_eq!(
            one(list(vec![Value::Float(1e39)]), f.clone()).unwrap_err(),
            "argument [0][0]: 1e39 is out of range for f32"
        );
        assert_eq!(
            one(list(vec![Value::from("x")]), f).unwrap_err(),
            "argument [0][0]: str is not a valid f32 element"
        );
        let i = arr(DType::I32, &[None]);
        assert_eq!(
            one(list(vec![Value::Float(1.5)]), i.clone()).unwrap_err(),
            "argument [0][0]: 1.5 is not a valid i32 element"
        );
        assert_eq!(
            one(list(vec![list(vec![Value::Int(1)])]), i).unwrap_err(),
            "argument [0][0]: nested deeper than the array's rank (a ragged list?)"
        );
    }
}
