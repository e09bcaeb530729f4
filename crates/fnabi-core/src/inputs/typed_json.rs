//! The fast path of JSON call arguments read for known parameters: an
//! argument that a parameter types as an array is read from its nested
//! lists straight into the array's elements, with no value per element.

use super::{InputFileSystem, resolve_files};
use crate::array::Array;
use crate::coerce::{Elements, InputParam, InputType, coerce};
use crate::json::{J, JSeed, JVisitor, from_j, looks_tagged};
use crate::structure::PathKey;
use crate::value::{Dict, Value};
use fnabi_abi::limits::MAX_DEPTH;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Gives up the fast path: the general path reads the text again, and
/// reports the error if there is one.
fn bail<E: de::Error>() -> E {
    E::custom("not on the typed path")
}

/// One argument as read: an array built from the text, or any value
/// (typed afterwards as the general path types it).
enum Arg {
    Array(Array<'static>),
    Other(J),
}

/// See [`super::typed_arguments_from_json`].
pub(super) fn typed_arguments(
    bytes: &[u8],
    fs: &dyn InputFileSystem,
    params: &[InputParam],
) -> Option<(Vec<Value<'static>>, Dict<'static>)> {
    let mut d = serde_json::Deserializer::from_slice(bytes);
    let (args, kwargs) = Top { params }.deserialize(&mut d).ok()?;
    d.end().ok()?;
    let mut positional = Vec::with_capacity(args.len());
    for (i, a) in args.into_iter().enumerate() {
        positional.push(finish(a, params.get(i).map(|p| &p.ty), PathKey::Index(i), fs)?);
    }
    let mut out = Dict::with_capacity(kwargs.len());
    for (k, a) in kwargs {
        let v = finish(a, by_name(params, &k), PathKey::Name(k.as_str().into()), fs)?;
        out.push_unique(k.into(), v);
    }
    Some((positional, out))
}

/// An argument as the general path makes it: JSON forms resolved, `@FILE`
/// strings read, typed by its parameter.
fn finish(a: Arg, ty: Option<&InputType>, key: PathKey, fs: &dyn InputFileSystem) -> Option<Value<'static>> {
    match a {
        Arg::Array(a) => Some(Value::from(a)),
        Arg::Other(j) => {
            let mut path = vec![key];
            let v = resolve_files(from_j(j).ok()?, &mut path, fs).ok()?;
            match ty {
                Some(ty) => coerce(v, ty, &mut path).ok(),
                None => Some(v),
            }
        }
    }
}

/// The whole text: a list (the positional arguments), or an object (the
/// keyword arguments, or `{"$args": [...], "$kwargs": {...}}`). Anything
/// else, and objects that the general path could read otherwise (a
/// tagged form, `$`-keys beside others, a key twice), is not typed here.
struct Top<'p> {
    params: &'p [InputParam],
}

type Read = (Vec<Arg>, Vec<(String, Arg)>);

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = Read;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Read, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = Read;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list or an object of arguments")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Read, A::Error> {
        Ok((positional(seq, self.params, 1)?, Vec::new()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read, A::Error> {
        let (mut args, mut kwargs, mut call_keys) = (None, None, 0);
        let mut plain: Vec<(String, Arg)> = Vec::new();
        while let Some(k) = map.next_key::<String>()? {
            match k.as_str() {
                "$args" if args.is_none() => {
                    args = Some(map.next_value_seed(Positional { params: self.params })?);
                    call_keys += 1;
                }
                "$kwargs" if kwargs.is_none() => {
                    kwargs = Some(map.next_value_seed(Keywords { params: self.params })?);
                    call_keys += 1;
                }
                k if k.starts_with('$') => return Err(bail()),
                _ => {
                    let ty = by_name(self.params, &k);
                    let a = map.next_value_seed(ArgSeed { ty, depth: 1 })?;
                    plain.push((k, a));
                }
            }
        }
        if call_keys > 0 && !plain.is_empty() {
            return Err(bail());
        }
        if call_keys > 0 {
            return Ok((args.unwrap_or_default(), kwargs.unwrap_or_default()));
        }
        checked_keywords(plain)
    }
}

/// Keyword arguments the general path reads as such: no key twice, not
/// the keys of a tagged form.
fn checked_keywords<E: de::Error>(kwargs: Vec<(String, Arg)>) -> Result<Read, E> {
    let mut seen = std::collections::HashSet::with_capacity(kwargs.len());
    if !kwargs.iter().all(|(k, _)| seen.insert(k.as_str())) || looks_tagged(kwargs.iter().map(|(k, _)| k.as_str())) {
        return Err(bail());
    }
    Ok((Vec::new(), kwargs))
}

fn by_name<'p>(params: &'p [InputParam], name: &str) -> Option<&'p InputType> {
    params.iter().find(|p| p.name.as_deref() == Some(name)).map(|p| &p.ty)
}

fn positional<'de, A: SeqAccess<'de>>(mut seq: A, params: &[InputParam], depth: usize) -> Result<Vec<Arg>, A::Error> {
    let mut out = Vec::new();
    while let Some(a) = seq.next_element_seed(ArgSeed { ty: params.get(out.len()).map(|p| &p.ty), depth })? {
        out.push(a);
    }
    Ok(out)
}

/// `$args`: a list.
struct Positional<'p> {
    params: &'p [InputParam],
}

impl<'de> DeserializeSeed<'de> for Positional<'_> {
    type Value = Vec<Arg>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Arg>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Positional<'_> {
    type Value = Vec<Arg>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Vec<Arg>, A::Error> {
        positional(seq, self.params, 2)
    }
}

/// `$kwargs`: an object of keyword arguments.
struct Keywords<'p> {
    params: &'p [InputParam],
}

impl<'de> DeserializeSeed<'de> for Keywords<'_> {
    type Value = Vec<(String, Arg)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Keywords<'_> {
    type Value = Vec<(String, Arg)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(k) = map.next_key::<String>()? {
            if k.starts_with('$') {
                return Err(bail());
            }
            let a = map.next_value_seed(ArgSeed { ty: by_name(self.params, &k), depth: 2 })?;
            out.push((k, a));
        }
        checked_keywords(out).map(|(_, kw)| kw)
    }
}

/// One argument at JSON depth `depth`, typed by `ty`: a list for an
/// array parameter is read into the array; anything else is read as any
/// value.
struct ArgSeed<'t> {
    ty: Option<&'t InputType>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ArgSeed<'_> {
    type Value = Arg;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Arg, D::Error> {
        match self.ty {
            Some(InputType::Array { dtype, dims }) => {
                let st = ArrayState {
                    elements: Elements::with_capacity(*dtype, 0),
                    rank: dims.as_ref().map(Vec::len),
                    shape: Vec::new(),
                };
                d.deserialize_any(ArrayArg { st, depth: self.depth })
            }
            _ => JSeed { depth: self.depth }.deserialize(d).map(Arg::Other),
        }
    }
}

/// What an array argument's nested lists have given so far.
struct ArrayState {
    elements: Elements,
    /// The rank: the parameter's, or the depth of the first number.
    rank: Option<usize>,
    /// Each depth's list length, from the first list of that depth to end.
    shape: Vec<Option<usize>>,
}

/// An array parameter's argument: nested lists of numbers are read into
/// its elements; any other value is read as any value.
struct ArrayArg {
    st: ArrayState,
    depth: usize,
}

macro_rules! any_value {
    ($($name:ident($($arg:ident: $t:ty),*);)*) => {
        $(fn $name<E: de::Error>(self, $($arg: $t),*) -> Result<Arg, E> {
            JVisitor { depth: self.depth }.$name($($arg),*).map(Arg::Other)
        })*
    };
}

impl<'de> Visitor<'de> for ArrayArg {
    type Value = Arg;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, seq: A) -> Result<Arg, A::Error> {
        Level { st: &mut self.st, depth: 0, json_depth: self.depth }.visit_seq(seq)?;
        let ArrayState { elements, rank, shape } = self.st;
        let shape: Option<Vec<usize>> = shape.into_iter().collect();
        match (rank, shape) {
            (Some(r), Some(shape)) if shape.len() == r => {
                elements.into_array(&shape).map(Arg::Array).map_err(|_| bail())
            }
            _ => Err(bail()),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Arg, A::Error> {
        JVisitor { depth: self.depth }.visit_map(map).map(Arg::Other)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Arg, D::Error> {
        JSeed { depth: self.depth }.deserialize(d).map(Arg::Other)
    }

    any_value! {
        visit_bool(v: bool);
        visit_i64(v: i64);
        visit_u64(v: u64);
        visit_i128(v: i128);
        visit_u128(v: u128);
        visit_f64(v: f64);
        visit_str(v: &str);
        visit_string(v: String);
        visit_unit();
        visit_none();
    }
}

/// A list at list depth `depth` inside an array argument (at JSON depth
/// `json_depth + depth`), or a number at depth `depth`.
struct Level<'s> {
    st: &'s mut ArrayState,
    depth: usize,
    json_depth: usize,
}

impl<'de> DeserializeSeed<'de> for Level<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Level<'_> {
    /// A number at this depth: the array's rank is this depth.
    fn leaf<E: de::Error>(self, v: Value<'static>) -> Result<(), E> {
        match self.st.rank {
            None => self.st.rank = Some(self.depth),
            Some(r) if r != self.depth => return Err(bail()),
            Some(_) => {}
        }
        self.st.elements.push(&v).map_err(|_| bail())
    }
}

impl<'de> Visitor<'de> for Level<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("nested lists of numbers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let depth = self.depth;
        if self.json_depth + depth >= MAX_DEPTH || self.st.rank.is_some_and(|r| depth >= r) {
            return Err(bail());
        }
        let mut n = 0;
        while seq
            .next_element_seed(Level { st: &mut *self.st, depth: depth + 1, json_depth: self.json_depth })?
            .is_some()
        {
            n += 1;
        }
        // Empty lists (whose shape the general path infers) go that way.
        if n == 0 {
            return Err(bail());
        }
        if self.st.shape.len() <= depth {
            self.st.shape.resize(depth + 1, None);
        }
        match self.st.shape[depth] {
            None => self.st.shape[depth] = Some(n),
            Some(m) if m != n => return Err(bail()),
            Some(_) => {}
        }
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.leaf(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.leaf(Value::Int(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.leaf(Value::Int(i64::try_from(v).map_err(|_| bail::<E>())?))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.leaf(Value::Float(v))
    }
}
