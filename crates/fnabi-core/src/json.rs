//! The JSON form of [`Value`] (files, the CLI, and every ordinary serde
//! format): [`Serialize`]/[`Deserialize`](serde::Deserialize) for [`Value`] and [`Array`], and
//! [`from_str`]/[`to_string`] shortcuts.
//!
//! | value | JSON |
//! | --- | --- |
//! | `None`, bool, int, str, list | `null`, `true`, `3`, `"s"`, `[...]` |
//! | float | a number with a fraction or exponent (`1.0`, `-0.0`); NaN and ±∞ are `{"$float": "nan"}`, `{"$float": "inf"}`, `{"$float": "-inf"}` |
//! | tuple | `{"$tuple": [...]}` |
//! | bytes | `{"$bytes": "00ff"}` (lowercase hex) |
//! | dict | an object, keys in insertion order |
//! | array | `{"dtype": "f32", "shape": [2, 2], "data": [1.0, 2.0, 3.0, 4.0]}` |
//!
//! **Arrays.** `dtype` is a short name (`f32`, `f16`, `bf16`, `f64`,
//! `i8`…`i64`, `u8`…`u64`, `bool`; reading also takes the reference names
//! `float32`…); `shape` a list of extents; `data` the elements flat in C
//! order (their count must match the shape). Float elements are numbers or
//! the strings `"nan"`, `"inf"`, `"-inf"`; f16 and bf16 are written as the
//! shortest decimal that reads back to the same value (`0.1`, not
//! `0.0999755859375`); integer elements must be integers in range (no `1.0`,
//! no 300 for `u8`); bool elements are `true`/`false`; a finite number that
//! overflows the element type is an error, not an infinity. NaN payloads are
//! not kept (a NaN reads back as the canonical quiet NaN). Complex elements
//! (`c64`, `c128`) are `[re, im]` pairs of such floats, each part written
//! as the shortest decimal of its part type (`f32`, `f64`):
//! `{"dtype": "c64", "shape": [2], "data": [[1.0, 2.0], [0.5, "-inf"]]}`.
//!
//! **Tags and user dicts.** An object is a tagged form exactly when its keys
//! are exactly `dtype`, `shape`, `data` (any order), or it has a single key
//! that is one of `$tuple`, `$bytes`, `$float`, `$dict`. A malformed tagged
//! form is an error, never silently a dict. A user dict that happens to have
//! such keys is written wrapped as `{"$dict": {...}}`, whose inner object is
//! read as a plain dict (its own keys are not tags; its values are read
//! normally). So every value round-trips.
//!
//! Integers must fit `Value::Int` (i64); u64 array elements may use the
//! whole u64 range. Duplicate object keys are an error. Nesting is limited
//! to [`MAX_DEPTH`] levels.
//!
//! ```
//! use fnabi_core::{json, Array, Value};
//! let v = json::from_str(r#"{"x": {"dtype": "f32", "shape": [2], "data": [1, 2.5]}, "t": {"$tuple": [1, null]}}"#).unwrap();
//! assert_eq!(v.get("x").unwrap().as_array().unwrap().to_vec::<f32>().unwrap(), [1.0, 2.5]);
//! assert_eq!(v.get("t"), Some(&Value::Tuple(vec![Value::Int(1), Value::None])));
//! assert_eq!(json::to_string(&v), r#"{"x":{"dtype":"f32","shape":[2],"data":[1.0,2.5]},"t":{"$tuple":[1,null]}}"#);
//! // A user dict that looks like an array is wrapped.
//! let d = Value::dict([("dtype", Value::from("a")), ("shape", Value::None), ("data", Value::None)]);
//! assert_eq!(json::to_string(&d), r#"{"$dict":{"dtype":"a","shape":null,"data":null}}"#);
//! assert_eq!(json::from_str(&json::to_string(&d)).unwrap(), d);
//! ```
use fnabi_abi::limits::MAX_DEPTH;

use crate::array::{Array, element_count};
use crate::error::Error;
use crate::structure::{PathKey, StructureError, StructureErrorKind};
use crate::value::{Dict, Key, Value};
use fnabi_abi::scalar::DType;
use half::{bf16, f16};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserializer, Serialize, Serializer};
use std::fmt;

const TAGS: [&str; 4] = ["$tuple", "$bytes", "$float", "$dict"];
const ARRAY_KEYS: [&str; 3] = ["dtype", "shape", "data"];

/// Parses the JSON form of a value.
///
/// ```
/// use fnabi_core::{json, Value};
/// assert_eq!(json::from_str(r#"{"$tuple": [1, null]}"#)?, Value::Tuple(vec![Value::Int(1), Value::None]));
/// let a = json::from_str(r#"{"dtype": "i32", "shape": [2], "data": [1, 2]}"#)?;
/// assert_eq!(a.as_array().unwrap().to_string(), "2xi32=1 2");
/// assert!(json::from_str(r#"{"dtype": "u8", "shape": [1], "data": [300]}"#).is_err()); // out of range
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub fn from_str(s: &str) -> Result<Value<'static>, Error> {
    from_slice(s.as_bytes())
}

/// Parses the JSON form of a value from bytes.
///
/// ```
/// use fnabi_core::{json, Value};
/// assert_eq!(json::from_slice(b"[true, 2.5]")?, Value::List(vec![Value::Bool(true), Value::Float(2.5)]));
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub fn from_slice(bytes: &[u8]) -> Result<Value<'static>, Error> {
    let mut d = serde_json::Deserializer::from_slice(bytes);
    let j = JSeed { depth: 0 }.deserialize(&mut d).map_err(|e| Error::json(e.to_string()))?;
    d.end().map_err(|e| Error::json(e.to_string()))?;
    from_j(j).map_err(|e| Error::json(e.to_string()))
}

/// Parses the JSON form of a value from a reader.
///
/// ```
/// use fnabi_core::{json, Value};
/// let file: &[u8] = br#"{"n": 3}"#;
/// let Value::Dict(d) = json::from_reader(file)? else { panic!("not a dict") };
/// assert_eq!(d.len(), 1);
/// # Ok::<(), fnabi_core::Error>(())
/// ```
pub fn from_reader(r: impl std::io::Read) -> Result<Value<'static>, Error> {
    let mut d = serde_json::Deserializer::from_reader(r);
    let j = JSeed { depth: 0 }.deserialize(&mut d).map_err(|e| Error::json(e.to_string()))?;
    d.end().map_err(|e| Error::json(e.to_string()))?;
    from_j(j).map_err(|e| Error::json(e.to_string()))
}

/// The compact JSON form of a value.
///
/// ```
/// use fnabi_core::{json, Value};
/// let v = Value::Tuple(vec![Value::Int(1), Value::Float(2.0), Value::Str("s".into())]);
/// assert_eq!(json::to_string(&v), r#"{"$tuple":[1,2.0,"s"]}"#);
/// assert_eq!(json::from_str(&json::to_string(&v)).unwrap(), v);
/// ```
pub fn to_string(v: &Value<'_>) -> String {
    // Writing to a String cannot fail, and the JSON form has only string keys.
    serde_json::to_string(v).unwrap_or_else(|e| unreachable!("JSON form of a value: {e}"))
}

/// The indented JSON form of a value.
///
/// ```
/// use fnabi_core::{json, Value};
/// assert_eq!(json::to_string_pretty(&Value::List(vec![Value::Int(1), Value::None])), "[\n  1,\n  null\n]");
/// ```
pub fn to_string_pretty(v: &Value<'_>) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| unreachable!("JSON form of a value: {e}"))
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

fn nonfinite_name(x: f64) -> &'static str {
    if x.is_nan() {
        "nan"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    fn digit(c: u8) -> Option<u8> {
        (c as char).to_digit(16).map(|d| d as u8)
    }
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks_exact(2).map(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect()
}

/// True when a user dict must be wrapped in `$dict` to read back as a dict.
pub(crate) fn looks_tagged<'k>(mut keys: impl ExactSizeIterator<Item = &'k str>) -> bool {
    match keys.len() {
        1 => keys.next().is_some_and(|k| TAGS.contains(&k)),
        3 => {
            let mut seen = [false; 3];
            keys.all(|k| {
                ARRAY_KEYS.iter().position(|a| *a == k).is_some_and(|i| !std::mem::replace(&mut seen[i], true))
            })
        }
        _ => false,
    }
}

/// The JSON form of a value (never the bridge's form).
pub(crate) struct JsonForm<'v, 'a>(pub &'v Value<'a>);

impl Serialize for JsonForm<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::None => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(*i),
            Value::Float(x) if x.is_finite() => s.serialize_f64(*x),
            Value::Float(x) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("$float", nonfinite_name(*x))?;
                m.end()
            }
            Value::Str(x) => s.serialize_str(x),
            Value::Bytes(b) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("$bytes", &hex(b))?;
                m.end()
            }
            Value::List(items) => s.collect_seq(items.iter().map(JsonForm)),
            Value::Tuple(items) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("$tuple", &Items(items))?;
                m.end()
            }
            Value::Dict(d) => {
                if looks_tagged(d.keys().map(|k| &**k)) {
                    let mut m = s.serialize_map(Some(1))?;
                    m.serialize_entry("$dict", &Entries(d))?;
                    m.end()
                } else {
                    Entries(d).serialize(s)
                }
            }
            Value::Array(a) => ArrayForm(a).serialize(s),
        }
    }
}

struct Items<'v, 'a>(&'v [Value<'a>]);

impl Serialize for Items<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(JsonForm))
    }
}

struct Entries<'v, 'a>(&'v Dict<'a>);

impl Serialize for Entries<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0.iter() {
            m.serialize_entry(&**k, &JsonForm(v))?;
        }
        m.end()
    }
}

/// The JSON form of an array.
pub(crate) struct ArrayForm<'v, 'a>(pub &'v Array<'a>);

impl Serialize for ArrayForm<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.0;
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("dtype", a.dtype().short_name())?;
        m.serialize_entry("shape", a.shape())?;
        m.serialize_entry("data", &Data(a))?;
        m.end()
    }
}

struct Data<'v, 'a>(&'v Array<'a>);

/// A float element: a number, or the name of a non-finite value.
struct FloatElem(f64, bool);

impl Serialize for FloatElem {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (self.0.is_finite(), self.1) {
            (false, _) => s.serialize_str(nonfinite_name(self.0)),
            // f32: the shortest decimal of the f32 itself.
            (true, true) => s.serialize_f32(self.0 as f32),
            (true, false) => s.serialize_f64(self.0),
        }
    }
}

/// The shortest decimal (as an f64) that reads back to `x` through `back`.
fn shortest(x: f64, back: impl Fn(f64) -> f64) -> f64 {
    for p in 0..17 {
        if let Ok(c) = format!("{x:.p$e}").parse::<f64>()
            && back(c).to_bits() == x.to_bits()
        {
            return c;
        }
    }
    x
}

impl Serialize for Data<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let a = self.0;
        let mut seq = s.serialize_seq(Some(a.len()))?;
        macro_rules! each {
            ($t:ty, |$x:ident| $e:expr) => {
                for $x in a.to_vec::<$t>().map_err(S::Error::custom)? {
                    seq.serialize_element(&$e)?;
                }
            };
        }
        match a.dtype() {
            DType::C64 => {
                each!(fnabi_abi::Complex<f32>, |x| [FloatElem(f64::from(x.re), true), FloatElem(f64::from(x.im), true)])
            }
            DType::C128 => each!(fnabi_abi::Complex<f64>, |x| [FloatElem(x.re, false), FloatElem(x.im, false)]),
            DType::Float8(f) => {
                let bytes = a.storage_bytes();
                let mut offsets = Vec::with_capacity(a.len());
                a.for_each_offset(|o| offsets.push(o));
                for o in offsets {
                    seq.serialize_element(&FloatElem(f.shortest_decimal(bytes[o]), false))?;
                }
            }
            DType::F32 => each!(f32, |x| FloatElem(f64::from(x), true)),
            DType::F64 => each!(f64, |x| FloatElem(x, false)),
            DType::F16 => each!(f16, |x| {
                let v = x.to_f64();
                FloatElem(if v.is_finite() { shortest(v, |c| f16::from_f64(c).to_f64()) } else { v }, false)
            }),
            DType::BF16 => each!(bf16, |x| {
                let v = x.to_f64();
                FloatElem(if v.is_finite() { shortest(v, |c| bf16::from_f64(c).to_f64()) } else { v }, false)
            }),
            DType::I8 => each!(i8, |x| x),
            DType::I16 => each!(i16, |x| x),
            DType::I32 => each!(i32, |x| x),
            DType::I64 => each!(i64, |x| x),
            DType::U8 => each!(u8, |x| x),
            DType::U16 => each!(u16, |x| x),
            DType::U32 => each!(u32, |x| x),
            DType::U64 => each!(u64, |x| x),
            DType::Bool => each!(bool, |x| x),
        }
        seq.end()
    }
}

/// A parsed JSON (or other self-describing) tree, before tags are resolved.
#[derive(Debug)]
pub(crate) enum J {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(String),
    Bytes(Vec<u8>),
    Seq(Vec<J>),
    Map(Vec<(String, J)>),
}

impl J {
    fn kind(&self) -> &'static str {
        match self {
            J::Null => "null",
            J::Bool(_) => "a bool",
            J::I64(_) | J::U64(_) => "an integer",
            J::F64(_) => "a float",
            J::Str(_) => "a string",
            J::Bytes(_) => "bytes",
            J::Seq(_) => "a list",
            J::Map(_) => "an object",
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct JSeed {
    pub(crate) depth: usize,
}

impl<'de> DeserializeSeed<'de> for JSeed {
    type Value = J;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<J, D::Error> {
        if self.depth > MAX_DEPTH {
            return Err(de::Error::custom(format_args!("nested deeper than {MAX_DEPTH} levels")));
        }
        d.deserialize_any(JVisitor { depth: self.depth })
    }
}

#[derive(Clone, Copy)]
pub(crate) struct JVisitor {
    pub(crate) depth: usize,
}

impl<'de> Visitor<'de> for JVisitor {
    type Value = J;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<J, E> {
        Ok(J::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<J, E> {
        Ok(J::I64(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<J, E> {
        Ok(J::U64(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<J, E> {
        i64::try_from(v).map(J::I64).map_err(|_| E::custom(format_args!("integer {v} does not fit in 64 bits")))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<J, E> {
        u64::try_from(v).map(J::U64).map_err(|_| E::custom(format_args!("integer {v} does not fit in 64 bits")))
    }
    fn visit_f64<E>(self, v: f64) -> Result<J, E> {
        Ok(J::F64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<J, E> {
        Ok(J::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<J, E> {
        Ok(J::Str(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<J, E> {
        Ok(J::Bytes(v.to_vec()))
    }
    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<J, E> {
        Ok(J::Bytes(v))
    }
    fn visit_none<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_unit<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<J, D::Error> {
        JSeed { depth: self.depth }.deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<J, D::Error> {
        JSeed { depth: self.depth }.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<J, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(j) = seq.next_element_seed(JSeed { depth: self.depth + 1 })? {
            items.push(j);
        }
        Ok(J::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<J, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value_seed(JSeed { depth: self.depth + 1 })?;
            entries.push((k, v));
        }
        Ok(J::Map(entries))
    }
}

fn jerr(msg: impl fmt::Display) -> StructureError {
    StructureError::at_root(StructureErrorKind::Custom(msg.to_string()))
}

/// Resolves the tagged forms of a parsed tree (see the module docs).
pub(crate) fn from_j(j: J) -> Result<Value<'static>, StructureError> {
    Ok(match j {
        J::Null => Value::None,
        J::Bool(b) => Value::Bool(b),
        J::I64(i) => Value::Int(i),
        J::U64(u) => Value::Int(
            i64::try_from(u).map_err(|_| jerr(format_args!("integer {u} does not fit in a 64-bit signed int")))?,
        ),
        J::F64(x) => Value::Float(x),
        J::Str(s) => Value::Str(s),
        J::Bytes(b) => Value::Bytes(b),
        J::Seq(items) => Value::List(seq_from_j(items)?),
        J::Map(entries) => map_from_j(entries)?,
    })
}

fn seq_from_j(items: Vec<J>) -> Result<Vec<Value<'static>>, StructureError> {
    items.into_iter().enumerate().map(|(i, j)| from_j(j).map_err(|e| e.within(PathKey::Index(i)))).collect()
}

fn map_from_j(mut entries: Vec<(String, J)>) -> Result<Value<'static>, StructureError> {
    let keys = || entries.iter().map(|(k, _)| k.as_str());
    if !looks_tagged(keys()) {
        return plain_dict(entries);
    }
    if entries.len() == 3 {
        return array_from_j(entries).map(Value::from);
    }
    let (tag, j) = entries.pop().unwrap_or_else(|| unreachable!("one entry"));
    let within = |e: StructureError| e.within(PathKey::Name(tag.as_str().into()));
    match (tag.as_str(), j) {
        ("$tuple", J::Seq(items)) => Ok(Value::Tuple(seq_from_j(items).map_err(within)?)),
        ("$bytes", J::Str(s)) => unhex(&s)
            .map(Value::Bytes)
            .ok_or_else(|| jerr(format_args!("$bytes takes an even number of hex digits, got {s:?}"))),
        ("$float", J::Str(s)) => match s.as_str() {
            "nan" => Ok(Value::Float(f64::NAN)),
            "inf" => Ok(Value::Float(f64::INFINITY)),
            "-inf" => Ok(Value::Float(f64::NEG_INFINITY)),
            _ => Err(jerr(format_args!("$float takes \"nan\", \"inf\" or \"-inf\", got {s:?}"))),
        },
        ("$dict", J::Map(inner)) => plain_dict(inner).map_err(within),
        (tag, j) => {
            let wants = match tag {
                "$tuple" => "a list",
                "$dict" => "an object",
                _ => "a string",
            };
            Err(jerr(format_args!("{tag} takes {wants}, got {}", j.kind())))
        }
    }
}

fn plain_dict(entries: Vec<(String, J)>) -> Result<Value<'static>, StructureError> {
    // Small objects look up linearly; large ones use a set (no quadratic time).
    let large = entries.len() > 16;
    let mut seen = std::collections::HashSet::new();
    let mut d = Dict::with_capacity(entries.len());
    for (k, j) in entries {
        let key: Key = k.into();
        let dup = if large { !seen.insert(key.clone()) } else { d.get(&key).is_some() };
        if dup {
            return Err(jerr(format_args!("duplicate key {key:?}")));
        }
        let v = from_j(j).map_err(|e| e.within(PathKey::Name(key.clone())))?;
        d.push_unique(key, v);
    }
    Ok(Value::Dict(d))
}

fn array_from_j(entries: Vec<(String, J)>) -> Result<Array<'static>, StructureError> {
    let (mut dtype, mut shape, mut data) = (None, None, None);
    for (k, j) in entries {
        match k.as_str() {
            "dtype" => dtype = Some(j),
            "shape" => shape = Some(j),
            _ => data = Some(j),
        }
    }
    let (Some(dtype), Some(shape), Some(data)) = (dtype, shape, data) else {
        unreachable!("looks_tagged checked the three keys")
    };
    let dtype = match dtype {
        J::Str(s) => DType::from_name(&s).ok_or_else(|| jerr(format_args!("unknown dtype {s:?}")))?,
        j => return Err(jerr(format_args!("dtype must be a string, got {}", j.kind()))),
    };
    let shape: Vec<usize> = match shape {
        J::Seq(items) => items
            .into_iter()
            .map(|j| match j {
                J::I64(n) if n >= 0 => usize::try_from(n).ok(),
                J::U64(n) => usize::try_from(n).ok(),
                _ => None,
            })
            .collect::<Option<_>>()
            .ok_or_else(|| jerr("shape must be a list of non-negative integers"))?,
        j => return Err(jerr(format_args!("shape must be a list, got {}", j.kind()))),
    };
    let data = match data {
        J::Seq(items) => items,
        j => return Err(jerr(format_args!("data must be a list, got {}", j.kind()))),
    };
    let n = element_count(&shape).map_err(jerr)?;
    if n != data.len() {
        return Err(jerr(format_args!("data has {} elements but shape {shape:?} needs {n}", data.len())));
    }
    let within = |e: StructureError| e.within(PathKey::Name("data".into()));
    build_array(dtype, &shape, data).map_err(within)
}

fn elem_err(i: usize, j: &J, dtype: DType) -> StructureError {
    let shown = match j {
        J::I64(v) => v.to_string(),
        J::U64(v) => v.to_string(),
        J::F64(v) => format!("{v:?}"),
        J::Str(s) => format!("{s:?}"),
        j => j.kind().to_string(),
    };
    jerr(format_args!("{shown} is not a valid {dtype} element")).within(PathKey::Index(i))
}

fn float_of(j: &J) -> Option<f64> {
    match j {
        J::I64(v) => Some(*v as f64),
        J::U64(v) => Some(*v as f64),
        J::F64(v) => Some(*v),
        J::Str(s) => match s.as_str() {
            "nan" => Some(f64::NAN),
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

fn build_array(dtype: DType, shape: &[usize], data: Vec<J>) -> Result<Array<'static>, StructureError> {
    fn collect<T: crate::Element>(
        shape: &[usize],
        data: &[J],
        dtype: DType,
        conv: impl Fn(&J) -> Option<T>,
    ) -> Result<Array<'static>, StructureError> {
        let v = data
            .iter()
            .enumerate()
            .map(|(i, j)| conv(j).ok_or_else(|| elem_err(i, j, dtype)))
            .collect::<Result<Vec<T>, _>>()?;
        Array::from_vec(shape, v).map_err(jerr)
    }
    fn int<T: TryFrom<i64> + TryFrom<u64>>(j: &J) -> Option<T> {
        match j {
            J::I64(v) => T::try_from(*v).ok(),
            J::U64(v) => T::try_from(*v).ok(),
            _ => None,
        }
    }
    /// A float that does not overflow to infinity when narrowed.
    fn narrow<T>(j: &J, f: impl Fn(f64) -> T, is_inf: impl Fn(&T) -> bool) -> Option<T> {
        let x = float_of(j)?;
        let t = f(x);
        if is_inf(&t) && x.is_finite() { None } else { Some(t) }
    }
    /// A `[re, im]` pair of floats, each narrowed by `part`.
    fn pair<T>(j: &J, part: impl Fn(&J) -> Option<T>) -> Option<fnabi_abi::Complex<T>> {
        match j {
            J::Seq(p) if p.len() == 2 => Some(fnabi_abi::Complex::new(part(&p[0])?, part(&p[1])?)),
            _ => None,
        }
    }
    let d = &data;
    match dtype {
        DType::C64 => collect(shape, d, dtype, |j| pair(j, |p| narrow(p, |x| x as f32, |t| t.is_infinite()))),
        DType::C128 => collect(shape, d, dtype, |j| pair(j, float_of)),
        DType::Float8(f) => {
            let bits = d
                .iter()
                .enumerate()
                .map(|(i, j)| float_of(j).and_then(|x| f.from_f64(x)).ok_or_else(|| elem_err(i, j, dtype)))
                .collect::<Result<Vec<u8>, _>>()?;
            Array::from_float8_bits(f, shape, bits).map_err(jerr)
        }
        DType::F32 => collect(shape, d, dtype, |j| narrow(j, |x| x as f32, |t| t.is_infinite())),
        DType::F64 => collect(shape, d, dtype, float_of),
        DType::F16 => collect(shape, d, dtype, |j| narrow(j, f16::from_f64, |t| t.is_infinite())),
        DType::BF16 => collect(shape, d, dtype, |j| narrow(j, bf16::from_f64, |t| t.is_infinite())),
        DType::I8 => collect(shape, d, dtype, int::<i8>),
        DType::I16 => collect(shape, d, dtype, int::<i16>),
        DType::I32 => collect(shape, d, dtype, int::<i32>),
        DType::I64 => collect(shape, d, dtype, int::<i64>),
        DType::U8 => collect(shape, d, dtype, int::<u8>),
        DType::U16 => collect(shape, d, dtype, int::<u16>),
        DType::U32 => collect(shape, d, dtype, int::<u32>),
        DType::U64 => collect(shape, d, dtype, int::<u64>),
        DType::Bool => collect(shape, d, dtype, |j| match j {
            J::Bool(b) => Some(*b),
            _ => None,
        }),
    }
}

// ---------------------------------------------------------------------------
// Deserialize
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(v: &Value<'_>) -> Value<'static> {
        from_str(&to_string(v)).unwrap()
    }

    fn err(s: &str) -> String {
        from_str(s).unwrap_err().to_string()
    }

    #[test]
    fn scalars_and_containers() {
        let v = Value::List(vec![
            Value::None,
            Value::Bool(true),
            Value::Int(-3),
            Value::Float(1.0),
            Value::Float(-0.0),
            Value::Float(f64::INFINITY),
            Value::Float(f64::NEG_INFINITY),
            Value::Str("é\"".into()),
            Value::Bytes(vec![0, 255, 16]),
            Value::Tuple(vec![Value::Int(1)]),
            Value::dict([("b", Value::Int(1)), ("a", Value::Int(2))]),
        ]);
        let s = to_string(&v);
        assert_eq!(
            s,
            r#"[null,true,-3,1.0,-0.0,{"$float":"inf"},{"$float":"-inf"},"é\"",{"$bytes":"00ff10"},{"$tuple":[1]},{"b":1,"a":2}]"#
        );
        let back = rt(&v);
        assert_eq!(back, v);
        assert_eq!(to_string(&back), s, "insertion order is kept");
        let nan = rt(&Value::Float(f64::NAN));
        assert!(matches!(nan, Value::Float(x) if x.is_nan()));
        assert_eq!(from_str("1e3").unwrap(), Value::Float(1000.0));
        assert_eq!(from_str("9223372036854775807").unwrap(), Value::Int(i64::MAX));
    }

    #[test]
    fn tagged_look_alikes_are_wrapped() {
        for keys in [&["$tuple"][..], &["$bytes"], &["$float"], &["$dict"], &["data", "dtype", "shape"]] {
            let d = Value::Dict(keys.iter().map(|k| (*k, Value::Int(1))).collect());
            let s = to_string(&d);
            assert!(s.starts_with(r#"{"$dict":"#), "{s}");
            assert_eq!(rt(&d), d);
        }
        // Near misses are plain dicts.
        for s in [r#"{"$tuple":[1],"x":1}"#, r#"{"$other":1}"#, r#"{"dtype":"f32","shape":[1]}"#] {
            assert!(matches!(from_str(s).unwrap(), Value::Dict(_)), "{s}");
            assert_eq!(to_string(&from_str(s).unwrap()), s);
        }
        // Values inside $dict are read normally.
        let v = from_str(r#"{"$dict":{"$tuple":{"$tuple":[]}}}"#).unwrap();
        assert_eq!(v, Value::dict([("$tuple", Value::Tuple(vec![]))]));
    }

    #[test]
    fn arrays_of_every_dtype() {
        let cases = [
            (r#"{"dtype":"f32","shape":[3],"data":[0.1,"nan","-inf"]}"#, DType::F32),
            (r#"{"dtype":"f64","shape":[1],"data":[0.1]}"#, DType::F64),
            (r#"{"dtype":"f16","shape":[2],"data":[0.1,65504.0]}"#, DType::F16),
            (r#"{"dtype":"bf16","shape":[2],"data":[0.1,"inf"]}"#, DType::BF16),
            (r#"{"dtype":"i8","shape":[2],"data":[-128,127]}"#, DType::I8),
            (r#"{"dtype":"i16","shape":[1],"data":[-300]}"#, DType::I16),
            (r#"{"dtype":"i32","shape":[1],"data":[-70000]}"#, DType::I32),
            (r#"{"dtype":"i64","shape":[1],"data":[-9223372036854775808]}"#, DType::I64),
            (r#"{"dtype":"u8","shape":[1],"data":[255]}"#, DType::U8),
            (r#"{"dtype":"u16","shape":[1],"data":[65535]}"#, DType::U16),
            (r#"{"dtype":"u32","shape":[1],"data":[4294967295]}"#, DType::U32),
            (r#"{"dtype":"u64","shape":[1],"data":[18446744073709551615]}"#, DType::U64),
            (r#"{"dtype":"bool","shape":[2,1],"data":[true,false]}"#, DType::Bool),
            (r#"{"dtype":"i32","shape":[],"data":[7]}"#, DType::I32),
            (r#"{"dtype":"f32","shape":[0,3],"data":[]}"#, DType::F32),
        ];
        for (s, dtype) in cases {
            let v = from_str(s).unwrap();
            assert_eq!(v.as_array().unwrap().dtype(), dtype);
            let out = to_string(&v);
            assert_eq!(out, s.replace("65504.0", "65500.0"), "{s}");
            assert_eq!(from_str(&out).unwrap().as_array().unwrap().dtype(), dtype);
        }
        // Long names, any key order, integers for floats.
        let v = from_str(r#"{"shape":[2],"data":[1,2],"dtype":"float32"}"#).unwrap();
        assert_eq!(to_string(&v), r#"{"dtype":"f32","shape":[2],"data":[1.0,2.0]}"#);
        // Strided arrays are written in C order.
        let a = Array::from_vec(&[2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let t = Value::array(a.permuted(&[1, 0]).unwrap().into_owned().unwrap());
        assert_eq!(to_string(&t), r#"{"dtype":"i32","shape":[2,2],"data":[1,3,2,4]}"#);
    }

    #[test]
    fn errors() {
        assert_eq!(err(r#"{"dtype":"f33","shape":[1],"data":[1]}"#), "JSON: unknown dtype \"f33\"");
        assert_eq!(
            err(r#"[{"dtype":"u8","shape":[1],"data":[300]}]"#),
            "JSON: at [0][\"data\"][0]: 300 is not a valid u8 element"
        );
        assert_eq!(
            err(r#"{"dtype":"i32","shape":[1],"data":[1.0]}"#),
            "JSON: at [\"data\"][0]: 1.0 is not a valid i32 element"
        );
        assert_eq!(
            err(r#"{"dtype":"f32","shape":[1],"data":[1e39]}"#),
            "JSON: at [\"data\"][0]: 1e39 is not a valid f32 element"
        );
        assert_eq!(
            err(r#"{"dtype":"f16","shape":[1],"data":[70000]}"#),
            "JSON: at [\"data\"][0]: 70000 is not a valid f16 element"
        );
        assert_eq!(
            err(r#"{"dtype":"bool","shape":[1],"data":[1]}"#),
            "JSON: at [\"data\"][0]: 1 is not a valid bool element"
        );
        assert_eq!(err(r#"{"dtype":"f32","shape":[2],"data":[1]}"#), "JSON: data has 1 elements but shape [2] needs 2");
        assert_eq!(
            err(r#"{"dtype":"f32","shape":[-1],"data":[]}"#),
            "JSON: shape must be a list of non-negative integers"
        );
        assert_eq!(err(r#"{"dtype":1,"shape":[],"data":[1]}"#), "JSON: dtype must be a string, got an integer");
        assert_eq!(err(r#"{"dtype":"f32","shape":1,"data":[1]}"#), "JSON: shape must be a list, got an integer");
        assert_eq!(err(r#"{"dtype":"f32","shape":[],"data":1}"#), "JSON: data must be a list, got an integer");
        assert!(err(r#"{"dtype":"f32","shape":[4294967296,4294967296,4294967296],"data":[]}"#).contains("too large"));
        assert_eq!(err(r#"{"$tuple":1}"#), "JSON: $tuple takes a list, got an integer");
        assert_eq!(err(r#"{"$dict":1}"#), "JSON: $dict takes an object, got an integer");
        assert_eq!(err(r#"{"$bytes":"abc"}"#), "JSON: $bytes takes an even number of hex digits, got \"abc\"");
        assert_eq!(err(r#"{"$bytes":"zz"}"#), "JSON: $bytes takes an even number of hex digits, got \"zz\"");
        assert_eq!(err(r#"{"$bytes":1}"#), "JSON: $bytes takes a string, got an integer");
        assert_eq!(err(r#"{"$float":"NaN"}"#), "JSON: $float takes \"nan\", \"inf\" or \"-inf\", got \"NaN\"");
        assert_eq!(err(r#"{"a":1,"a":2}"#), "JSON: duplicate key \"a\"");
        let many: String = (0..40).map(|i| format!("\"k{i}\":1,")).collect();
        assert_eq!(err(&format!("{{{many}\"k39\":2}}")), "JSON: duplicate key \"k39\"");
        assert_eq!(
            err("18446744073709551615"),
            "JSON: integer 18446744073709551615 does not fit in a 64-bit signed int"
        );
        assert!(err("[1,").starts_with("JSON: EOF"));
        assert!(err("[1] x").starts_with("JSON: trailing characters"));
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(err(&deep).contains("recursion limit"), "{}", err(&deep));
    }

    #[test]
    fn short_f16_decimals() {
        let a = Array::from_vec(&[3], vec![f16::from_f32(0.1), f16::from_f32(1.0 / 3.0), f16::from_f32(-2.5)]).unwrap();
        let s = to_string(&Value::array(a.clone()));
        assert_eq!(s, r#"{"dtype":"f16","shape":[3],"data":[0.1,0.3333,-2.5]}"#);
        assert_eq!(from_str(&s).unwrap(), Value::array(a));
    }

    #[test]
    fn serde_json_value_interop() {
        let v: Value<'static> = serde_json::from_str(r#"{"x":{"$tuple":[1,2]}}"#).unwrap();
        assert_eq!(v, Value::dict([("x", Value::Tuple(vec![Value::Int(1), Value::Int(2)]))]));
        let a: Array<'static> = serde_json::from_str(r#"{"dtype":"u8","shape":[2],"data":[1,2]}"#).unwrap();
        assert_eq!(a.to_vec::<u8>().unwrap(), [1, 2]);
        assert!(serde_json::from_str::<Array<'static>>("[1]").is_err());
        assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::json!({"dtype":"u8","shape":[2],"data":[1,2]}));
    }
}
