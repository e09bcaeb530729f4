//! Host values: the dynamic [`Value`] a caller passes to and gets from a
//! compiled function — nested lists, tuples and dicts of scalars, strings,
//! bytes and n-d [`Array`]s — like a Python object or a JAX pytree.
//!
//! ```
//! use fnabi_core::{Array, Value};
//! let x = Array::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
//! let v = Value::dict([("x", Value::from(x)), ("n", Value::from(3))]);
//! assert_eq!(v.get("n"), Some(&Value::Int(3)));
//! assert_eq!(v.kind(), "dict");
//! ```

use crate::array::Array;

pub use fnabi_abi::structure::Key;

/// A host value.
///
/// ```
/// use fnabi_core::{Array, Value};
/// // A pytree: {"x": f32[2], "steps": [1, 2]}; Rust values convert with From.
/// let v = Value::dict([
///     ("x", Value::from(Array::from_vec(&[2], vec![0.5f32, 1.5]).unwrap())),
///     ("steps", Value::from(vec![Value::from(1), Value::from(2)])),
/// ]);
/// assert_eq!(v.get("steps").and_then(Value::as_sequence).map(<[_]>::len), Some(2));
/// // ...and back with TryFrom (see `fnabi_core::extract`).
/// let x = Array::try_from(v.get("x").unwrap()).unwrap();
/// assert_eq!(x.to_vec::<f32>().unwrap(), [0.5, 1.5]);
/// assert_eq!(i64::try_from(&v.get("steps").unwrap().as_sequence().unwrap()[1]).unwrap(), 2);
/// ```
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value<'a> {
    /// Nothing (Python `None`, JSON `null`); also an empty slot of a sequence.
    #[default]
    None,
    /// A boolean.
    Bool(bool),
    /// An integer. Values of unsigned 64-bit types above `i64::MAX` do not fit
    /// and are reported as errors where they would arise.
    Int(i64),
    /// A floating point number.
    Float(f64),
    /// A UTF-8 string.
    Str(String),
    /// A byte string.
    Bytes(Vec<u8>),
    /// A list (mutable sequence).
    List(Vec<Value<'a>>),
    /// A tuple (immutable sequence; the distinction matters to `stuple` vs `slist`).
    Tuple(Vec<Value<'a>>),
    /// A dict with string keys, in insertion order.
    Dict(Dict<'a>),
    /// An n-d array. Boxed so that a `Value` stays 32 bytes: moving values
    /// (building and taking apart nested structures) costs a quarter of the
    /// memory traffic it would with the array inline.
    Array(Box<Array<'a>>),
}

impl<'a> Value<'a> {
    /// A dict value from `(key, value)` pairs; a repeated key keeps the last value
    /// in the position of the first.
    pub fn dict<K: Into<Key>>(entries: impl IntoIterator<Item = (K, Value<'a>)>) -> Value<'a> {
        Value::Dict(entries.into_iter().collect())
    }

    /// The name of this value's kind, for messages (`"dict"`, `"array"`, …).
    #[inline]
    pub fn kind(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Dict(_) => "dict",
            Value::Array(_) => "array",
        }
    }

    /// Looks up a key of a dict value.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            Value::Dict(d) => d.get(key),
            _ => None,
        }
    }

    /// The items of a list or tuple.
    #[inline]
    pub fn as_sequence(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::List(v) | Value::Tuple(v) => Some(v),
            _ => None,
        }
    }

    /// The array, if this is one.
    #[inline]
    pub fn as_array(&self) -> Option<&Array<'a>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// An array value (boxes the array).
    #[inline]
    pub fn array(a: Array<'a>) -> Value<'a> {
        Value::Array(Box::new(a))
    }

    /// A value that owns all its data (borrowed arrays are copied).
    pub fn into_owned(self) -> Result<Value<'static>, crate::Error> {
        Ok(match self {
            Value::None => Value::None,
            Value::Bool(b) => Value::Bool(b),
            Value::Int(i) => Value::Int(i),
            Value::Float(f) => Value::Float(f),
            Value::Str(s) => Value::Str(s),
            Value::Bytes(b) => Value::Bytes(b),
            Value::List(v) => Value::List(v.into_iter().map(Value::into_owned).collect::<Result<_, _>>()?),
            Value::Tuple(v) => Value::Tuple(v.into_iter().map(Value::into_owned).collect::<Result<_, _>>()?),
            Value::Dict(d) => Value::Dict(Dict {
                entries: d
                    .entries
                    .into_iter()
                    .map(|(k, v)| Ok((k, v.into_owned()?)))
                    .collect::<Result<_, crate::Error>>()?,
            }),
            Value::Array(a) => Value::from((*a).into_owned()?),
        })
    }
}

macro_rules! value_from {
    ($($t:ty => |$x:ident| $e:expr),* $(,)?) => {
        $(impl<'a> From<$t> for Value<'a> {
            fn from($x: $t) -> Self { $e }
        })*
    };
}

value_from! {
    bool => |x| Value::Bool(x),
    i8 => |x| Value::Int(x.into()),
    i16 => |x| Value::Int(x.into()),
    i32 => |x| Value::Int(x.into()),
    i64 => |x| Value::Int(x),
    u8 => |x| Value::Int(x.into()),
    u16 => |x| Value::Int(x.into()),
    u32 => |x| Value::Int(x.into()),
    f32 => |x| Value::Float(x.into()),
    f64 => |x| Value::Float(x),
    String => |x| Value::Str(x),
    &str => |x| Value::Str(x.to_owned()),
    Vec<u8> => |x| Value::Bytes(x),
    Array<'a> => |x| Value::Array(Box::new(x)),
    Box<Array<'a>> => |x| Value::Array(x),
    Dict<'a> => |x| Value::Dict(x),
    Vec<Value<'a>> => |x| Value::List(x),
}

/// A dict with string keys in insertion order; keys are unique.
///
/// ```
/// use fnabi_core::{Dict, Value};
/// let mut d = Dict::new();
/// d.insert("b", Value::from(1));
/// d.insert("a", Value::from(2));
/// assert_eq!(d.insert("b", Value::from(3)), Some(Value::Int(1))); // replaced in place
/// let keys: Vec<&str> = d.keys().map(|k| &**k).collect();
/// assert_eq!(keys, ["b", "a"]);
/// assert_eq!(d.get("b"), Some(&Value::Int(3)));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Dict<'a> {
    entries: Vec<(Key, Value<'a>)>,
}

impl<'a> Dict<'a> {
    /// An empty dict.
    pub fn new() -> Self {
        Dict { entries: Vec::new() }
    }

    /// An empty dict with room for `n` entries.
    pub fn with_capacity(n: usize) -> Self {
        Dict { entries: Vec::with_capacity(n) }
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.entries.iter().find(|(k, _)| &**k == key).map(|(_, v)| v)
    }

    /// Inserts or replaces; returns the previous value of `key`.
    pub fn insert(&mut self, key: impl Into<Key>, value: Value<'a>) -> Option<Value<'a>> {
        let key = key.into();
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => Some(std::mem::replace(v, value)),
            None => {
                self.entries.push((key, value));
                None
            }
        }
    }

    /// Appends an entry without looking for an existing key.
    ///
    /// The caller guarantees that `key` is not present yet (as when
    /// rebuilding a dict from a structure whose keys are unique); a repeated
    /// key here makes [`get`](Dict::get) see the first entry only.
    pub fn push_unique(&mut self, key: Key, value: Value<'a>) {
        self.entries.push((key, value));
    }

    /// The entries in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Key, &Value<'a>)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The entries in order, as a slice.
    #[inline]
    pub fn entries(&self) -> &[(Key, Value<'a>)] {
        &self.entries
    }

    /// The keys in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Key> {
        self.entries.iter().map(|(k, _)| k)
    }
}

impl PartialEq for Dict<'_> {
    /// Dicts are equal when they have the same keys with equal values,
    /// whatever the order (as in Python).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.entries.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl<'a, K: Into<Key>> FromIterator<(K, Value<'a>)> for Dict<'a> {
    fn from_iter<I: IntoIterator<Item = (K, Value<'a>)>>(iter: I) -> Self {
        let mut d = Dict::new();
        for (k, v) in iter {
            d.insert(k, v);
        }
        d
    }
}

impl<'a> IntoIterator for Dict<'a> {
    type Item = (Key, Value<'a>);
    type IntoIter = std::vec::IntoIter<(Key, Value<'a>)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_four_words() {
        assert_eq!(std::mem::size_of::<Value<'_>>(), 32);
    }

    #[test]
    fn dict_semantics() {
        let mut d: Dict<'_> = [("b", Value::Int(1)), ("a", Value::Int(2))].into_iter().collect();
        assert_eq!(d.keys().map(|k| &**k).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(d.insert("b", Value::Int(3)), Some(Value::Int(1)));
        assert_eq!(d.len(), 2);
        let e: Dict<'_> = [("a", Value::Int(2)), ("b", Value::Int(3))].into_iter().collect();
        assert_eq!(d, e, "order does not matter for equality");
        assert_ne!(Value::List(vec![]), Value::Tuple(vec![]));
    }

    #[test]
    fn into_owned_copies_borrowed_arrays() {
        let data = [1i16, 2, 3];
        let v = Value::List(vec![Value::from(Array::from_slice(&[3], &data).unwrap()), Value::from("s")]);
        let owned: Value<'static> = v.clone().into_owned().unwrap();
        assert_eq!(owned, v);
    }
}
