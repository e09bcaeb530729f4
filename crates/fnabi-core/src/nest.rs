//! The serde bridge: flatten any `T: Serialize` by a [`Plan`] into leaves,
//! and rebuild any `T: Deserialize` from leaves — structs ↔ dicts by field
//! name, tuples/`Vec`s ↔ sequences, [`Array`] (and [`Value`]) fields ↔
//! leaves — without building an intermediate [`Value`] tree and without
//! copying array data. Also [`to_value`]/[`from_value`], like `serde_json`'s.
//!
//! ```
//! use fnabi_abi::sip::SipSignature;
//! use fnabi_core::{nest, Array, Plan};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Params { bar: Array<'static>, foo: Array<'static> }
//! #[derive(Serialize, Deserialize)]
//! struct Inputs(Params, Array<'static>);
//!
//! let sig = SipSignature::parse("I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R1!").unwrap();
//! let plan = Plan::new(sig.inputs()).unwrap();
//! let x = |v: f32| Array::from_vec(&[1], vec![v]).unwrap();
//! let inputs = Inputs(Params { bar: x(1.0), foo: x(0.0) }, x(2.0));
//! let leaves = nest::flatten(&plan, &inputs).unwrap();
//! let firsts: Vec<f32> = leaves.iter().map(|l| l.as_array().unwrap().get(&[0]).unwrap()).collect();
//! assert_eq!(firsts, [0.0, 1.0, 2.0]); // raw order: foo, bar, then [1]
//! // The leaves share the arrays' memory.
//! assert_eq!(leaves[2].as_array().unwrap().as_ptr(), inputs.1.as_ptr());
//! let back: Inputs = nest::unflatten(&plan, leaves).unwrap();
//! assert_eq!(back.0.foo, x(0.0));
//! ```
//!
//! **How arrays pass without copying.** `Array` and `Value` serialize to
//! their JSON form ([`crate::json`]) in ordinary serde contexts. While the
//! bridge runs on a thread, their `serialize` instead lends the bridge a
//! pointer to themselves in a thread-local slot, for exactly the duration
//! of their own `serialize` call (the slot is restored on return and on
//! unwinding), and announces it with a private newtype-struct name; the
//! bridge takes the pointer only while that call is on the stack, so the
//! pointee is alive and borrowed. It then keeps an owned handle: an array
//! over a shared buffer is shared (a reference-count increment); an array
//! over borrowed memory is **copied**, since a `Serialize` impl may lend a
//! temporary and the bridge's leaves outlive the call. On the way back, the
//! bridge hands an owned leaf to `Array`/`Value`'s `deserialize` through a
//! second thread-local slot (safe code: owned values only).
//!
//! **Rules.** A sequence node takes anything serde serializes as a
//! sequence (`Vec`, slices, tuples, tuple structs) with exactly the
//! structure's length; a gap slot must serialize as `None`/`()`. A dict node
//! takes a struct or a map with exactly the structure's keys (string keys;
//! integer keys are turned into decimal strings, as `serde_json` does). A
//! leaf takes anything: arrays and values as themselves, other types as
//! [`to_value`] converts them (`f32` → `Float`, structs → dicts, `Vec` →
//! list, tuples → tuple, unit variants → strings, other variants →
//! `{"Variant": ...}`). `Option::Some` is transparent. Deserializing, serde's
//! own rules apply (unknown struct fields are ignored unless the type says
//! `#[serde(deny_unknown_fields)]`); an array leaf also deserializes into
//! numbers (rank 0) and `Vec`s (its first axis). Errors name the index path.
//!
//! Limits: leaves for `unflatten` must own their data (`Value<'static>`);
//! formats that buffer content (untagged enums, `#[serde(flatten)]`) see
//! arrays as nested lists.

use crate::array::Array;
use crate::json::{ArrayForm, J, JSeed, JVisitor, JsonForm, from_j};
use crate::structure::plan::NodeRef;
use crate::structure::{PathKey, Plan, StructureError, StructureErrorKind, kind_with_article};
use crate::value::{Dict, Key, Value};
use fnabi_abi::scalar::DType;
use serde::de::{
    self, Deserialize, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde::ser::{self, Serialize, Serializer};
use smallvec::SmallVec;
use std::cell::Cell;
use std::fmt::{self, Display};

/// The newtype-struct name under which a `Value` announces itself to the bridge.
pub(crate) const VALUE_TOKEN: &str = "$fnabi_core::private::Value";
/// The newtype-struct name under which an `Array` announces itself to the bridge.
pub(crate) const ARRAY_TOKEN: &str = "$fnabi_core::private::Array";

/// A value or array lent to the bridge for the duration of its `serialize`.
#[derive(Clone, Copy)]
enum Lent {
    Value(*const ()),
    Array(*const ()),
}

thread_local! {
    /// Bridges running on this thread (flatten and to_value nest).
    static ACTIVE: Cell<usize> = const { Cell::new(0) };
    /// What is lent right now (see the module docs).
    static LENT: Cell<Option<Lent>> = const { Cell::new(None) };
    /// A leaf handed to `Value`/`Array::deserialize`.
    static HANDED: Cell<Option<Value<'static>>> = const { Cell::new(None) };
}

struct ActiveGuard;

impl ActiveGuard {
    fn enter() -> ActiveGuard {
        ACTIVE.with(|a| a.set(a.get() + 1));
        ActiveGuard
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(a.get().saturating_sub(1)));
    }
}

/// True while a bridge serializer runs on this thread.
pub(crate) fn bridge_active() -> bool {
    ACTIVE.with(|a| a.get() > 0)
}

/// Restores the previous lent item when a `serialize` call ends (or unwinds).
struct RestoreLent(Option<Lent>);

impl Drop for RestoreLent {
    fn drop(&mut self) {
        LENT.with(|l| l.set(self.0));
    }
}

/// `Array::serialize` while the bridge is active.
pub(crate) fn serialize_array<S: Serializer>(a: &Array<'_>, s: S) -> Result<S::Ok, S::Error> {
    let prev = LENT.with(|l| l.replace(Some(Lent::Array((a as *const Array<'_>).cast()))));
    let _restore = RestoreLent(prev);
    s.serialize_newtype_struct(ARRAY_TOKEN, &ArrayForm(a))
}

/// `Value::serialize` while the bridge is active.
pub(crate) fn serialize_value<S: Serializer>(v: &Value<'_>, s: S) -> Result<S::Ok, S::Error> {
    let prev = LENT.with(|l| l.replace(Some(Lent::Value((v as *const Value<'_>).cast()))));
    let _restore = RestoreLent(prev);
    s.serialize_newtype_struct(VALUE_TOKEN, &JsonForm(v))
}

/// `name == token`, by pointer first (the bridge passes the constants themselves).
#[inline]
fn is_token(name: &str, token: &'static str) -> bool {
    std::ptr::eq(name.as_ptr(), token.as_ptr()) || name == token
}

fn custom(msg: impl Display) -> StructureError {
    StructureError::at_root(StructureErrorKind::Custom(msg.to_string()))
}

/// Takes the lent array, as an owned handle (shared buffer: no copy).
fn take_lent_array() -> Result<Option<Array<'static>>, StructureError> {
    match LENT.with(|l| l.get()) {
        Some(Lent::Array(p)) => {
            LENT.with(|l| l.set(None));
            // SAFETY: `p` was set by `serialize_array` from a `&Array` whose
            // `serialize` call is still on this thread's stack (the slot is
            // reset when that call returns or unwinds, and only this thread
            // sees it), so the array is alive and shared-borrowed. The
            // reference is used only here; `into_owned` keeps no borrow
            // (it shares a buffer or copies borrowed memory).
            let a: &Array<'_> = unsafe { &*p.cast::<Array<'_>>() };
            match a.shared() {
                Some(owned) => Ok(Some(owned)),
                None => a.view().into_owned().map(Some).map_err(custom),
            }
        }
        _ => Ok(None),
    }
}

/// Takes the lent value, as an owned copy (arrays shared when they can be).
fn take_lent_value() -> Result<Option<Value<'static>>, StructureError> {
    match LENT.with(|l| l.get()) {
        Some(Lent::Value(p)) => {
            LENT.with(|l| l.set(None));
            // SAFETY: as in `take_lent_array`: the value's `serialize` call is
            // on the stack; the clone is made owned before the reference ends.
            let v: &Value<'_> = unsafe { &*p.cast::<Value<'_>>() };
            v.clone().into_owned().map(Some).map_err(custom)
        }
        _ => Ok(None),
    }
}

/// The leaf handed to `Value`/`Array::deserialize`, if any.
pub(crate) fn take_handed_value() -> Option<Value<'static>> {
    HANDED.with(|h| h.take())
}

/// Hands `v` to a visitor through the slot (it takes it in `visit_unit`).
fn hand<'de, V: Visitor<'de>>(v: Value<'static>, visitor: V) -> Result<V::Value, StructureError> {
    HANDED.with(|h| h.set(Some(v)));
    let r = visitor.visit_unit();
    drop(HANDED.with(|h| h.take()));
    r
}

type R<T> = Result<T, StructureError>;

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

/// Converts any `T: Serialize` into a [`Value`] (arrays by handle, see the module docs).
///
/// ```
/// #[derive(serde::Serialize)]
/// struct P { a: f32, b: (i32, Option<String>) }
/// let v = fnabi_core::nest::to_value(&P { a: 1.5, b: (2, None) }).unwrap();
/// assert_eq!(fnabi_core::json::to_string(&v), r#"{"a":1.5,"b":{"$tuple":[2,null]}}"#);
/// ```
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value<'static>, StructureError> {
    let _active = ActiveGuard::enter();
    value.serialize(ValueSerializer)
}

/// Builds any `T: Deserialize` from a [`Value`] (arrays moved, not copied).
pub fn from_value<T: DeserializeOwned>(value: Value<'static>) -> Result<T, StructureError> {
    T::deserialize(ValueDeserializer(value))
}

/// Flattens `value` by `plan` into leaves in raw order (see [`Plan::flatten`]).
pub fn flatten<T: Serialize + ?Sized>(plan: &Plan, value: &T) -> Result<Vec<Value<'static>>, StructureError> {
    let _active = ActiveGuard::enter();
    let Some(root) = plan.root() else {
        let v = value.serialize(ValueSerializer)?;
        plan.flatten_into(&v, &mut [])?;
        return Ok(Vec::new());
    };
    let mut f = Flat { plan, out: Vec::new() };
    f.out.resize_with(plan.leaf_count(), Value::default);
    value.serialize(NodeSer { f: &mut f, node: root })?;
    Ok(f.out)
}

/// Builds a `T: Deserialize` from `leaves` in raw order (see [`Plan::unflatten`]).
pub fn unflatten<T: DeserializeOwned>(plan: &Plan, leaves: Vec<Value<'static>>) -> Result<T, StructureError> {
    if leaves.len() != plan.leaf_count() {
        return Err(StructureError::at_root(StructureErrorKind::LeafCount {
            expected: plan.leaf_count(),
            got: leaves.len(),
        }));
    }
    let Some(root) = plan.root() else {
        return T::deserialize(ValueDeserializer(Value::None));
    };
    let mut u = Unflat { plan, leaves };
    T::deserialize(NodeDe { u: &mut u, node: root })
}

// ---------------------------------------------------------------------------
// ValueSerializer: anything -> Value
// ---------------------------------------------------------------------------

/// Serializes anything into a [`Value`].
pub(crate) struct ValueSerializer;

fn int_u64(v: u64) -> R<Value<'static>> {
    i64::try_from(v)
        .map(Value::Int)
        .map_err(|_| custom(format_args!("integer {v} does not fit in a 64-bit signed int")))
}

impl Serializer for ValueSerializer {
    type Ok = Value<'static>;
    type Error = StructureError;
    type SerializeSeq = SeqCollect;
    type SerializeTuple = SeqCollect;
    type SerializeTupleStruct = SeqCollect;
    type SerializeTupleVariant = VariantCollect<SeqCollect>;
    type SerializeMap = MapCollect;
    type SerializeStruct = MapCollect;
    type SerializeStructVariant = VariantCollect<MapCollect>;

    fn serialize_bool(self, v: bool) -> R<Value<'static>> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> R<Value<'static>> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> R<Value<'static>> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> R<Value<'static>> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> R<Value<'static>> {
        Ok(Value::Int(v))
    }
    fn serialize_i128(self, v: i128) -> R<Value<'static>> {
        i64::try_from(v)
            .map(Value::Int)
            .map_err(|_| custom(format_args!("integer {v} does not fit in a 64-bit signed int")))
    }
    fn serialize_u8(self, v: u8) -> R<Value<'static>> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> R<Value<'static>> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> R<Value<'static>> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> R<Value<'static>> {
        int_u64(v)
    }
    fn serialize_u128(self, v: u128) -> R<Value<'static>> {
        i64::try_from(v)
            .map(Value::Int)
            .map_err(|_| custom(format_args!("integer {v} does not fit in a 64-bit signed int")))
    }
    fn serialize_f32(self, v: f32) -> R<Value<'static>> {
        Ok(Value::Float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> R<Value<'static>> {
        Ok(Value::Float(v))
    }
    fn serialize_char(self, v: char) -> R<Value<'static>> {
        Ok(Value::Str(v.into()))
    }
    fn serialize_str(self, v: &str) -> R<Value<'static>> {
        Ok(Value::Str(v.into()))
    }
    fn serialize_bytes(self, v: &[u8]) -> R<Value<'static>> {
        Ok(Value::Bytes(v.into()))
    }
    fn serialize_none(self) -> R<Value<'static>> {
        Ok(Value::None)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> R<Value<'static>> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> R<Value<'static>> {
        Ok(Value::None)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> R<Value<'static>> {
        Ok(Value::None)
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> R<Value<'static>> {
        Ok(Value::Str(variant.into()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, name: &'static str, value: &T) -> R<Value<'static>> {
        if is_token(name, ARRAY_TOKEN) {
            if let Some(a) = take_lent_array()? {
                return Ok(Value::from(a));
            }
        } else if is_token(name, VALUE_TOKEN)
            && let Some(v) = take_lent_value()?
        {
            return Ok(v);
        }
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> R<Value<'static>> {
        let v = value.serialize(ValueSerializer).map_err(|e| e.within(PathKey::Name(variant.into())))?;
        Ok(Value::dict([(variant, v)]))
    }
    fn serialize_seq(self, len: Option<usize>) -> R<SeqCollect> {
        Ok(SeqCollect { items: Vec::with_capacity(len.unwrap_or(0).min(4096)), tuple: false })
    }
    fn serialize_tuple(self, len: usize) -> R<SeqCollect> {
        Ok(SeqCollect { items: Vec::with_capacity(len.min(4096)), tuple: true })
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> R<SeqCollect> {
        self.serialize_tuple(len)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> R<VariantCollect<SeqCollect>> {
        Ok(VariantCollect { variant, inner: self.serialize_tuple(len)? })
    }
    fn serialize_map(self, len: Option<usize>) -> R<MapCollect> {
        Ok(MapCollect { dict: Dict::with_capacity(len.unwrap_or(0).min(4096)), key: None })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> R<MapCollect> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> R<VariantCollect<MapCollect>> {
        Ok(VariantCollect { variant, inner: self.serialize_map(Some(len))? })
    }
}

/// Collects a sequence into a list (or a tuple).
pub(crate) struct SeqCollect {
    items: Vec<Value<'static>>,
    tuple: bool,
}

impl SeqCollect {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        let i = self.items.len();
        self.items.push(value.serialize(ValueSerializer).map_err(|e| e.within(PathKey::Index(i)))?);
        Ok(())
    }
    fn finish(self) -> Value<'static> {
        if self.tuple { Value::Tuple(self.items) } else { Value::List(self.items) }
    }
}

impl ser::SerializeSeq for SeqCollect {
    type Ok = Value<'static>;
    type Error = StructureError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        self.push(value)
    }
    fn end(self) -> R<Value<'static>> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for SeqCollect {
    type Ok = Value<'static>;
    type Error = StructureError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        self.push(value)
    }
    fn end(self) -> R<Value<'static>> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for SeqCollect {
    type Ok = Value<'static>;
    type Error = StructureError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        self.push(value)
    }
    fn end(self) -> R<Value<'static>> {
        Ok(self.finish())
    }
}

/// Collects a map or struct into a dict.
pub(crate) struct MapCollect {
    dict: Dict<'static>,
    key: Option<Key>,
}

impl MapCollect {
    fn put<T: ?Sized + Serialize>(&mut self, key: Key, value: &T) -> R<()> {
        let v = value.serialize(ValueSerializer).map_err(|e| e.within(PathKey::Name(key.clone())))?;
        if self.dict.insert(key.clone(), v).is_some() {
            return Err(custom(format_args!("duplicate key {key:?}")));
        }
        Ok(())
    }
}

impl ser::SerializeMap for MapCollect {
    type Ok = Value<'static>;
    type Error = StructureError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> R<()> {
        self.key = Some(key.serialize(KeyText)?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        let key = self.key.take().ok_or_else(|| custom("map value without a key"))?;
        self.put(key, value)
    }
    fn end(self) -> R<Value<'static>> {
        Ok(Value::Dict(self.dict))
    }
}

impl ser::SerializeStruct for MapCollect {
    type Ok = Value<'static>;
    type Error = StructureError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> R<()> {
        self.put(key.into(), value)
    }
    fn end(self) -> R<Value<'static>> {
        Ok(Value::Dict(self.dict))
    }
}

/// `{"Variant": inner}`.
pub(crate) struct VariantCollect<C> {
    variant: &'static str,
    inner: C,
}

impl ser::SerializeTupleVariant for VariantCollect<SeqCollect> {
    type Ok = Value<'static>;
    type Error = StructureError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        self.inner.push(value)
    }
    fn end(self) -> R<Value<'static>> {
        Ok(Value::dict([(self.variant, self.inner.finish())]))
    }
}

impl ser::SerializeStructVariant for VariantCollect<MapCollect> {
    type Ok = Value<'static>;
    type Error = StructureError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> R<()> {
        self.inner.put(key.into(), value)
    }
    fn end(self) -> R<Value<'static>> {
        Ok(Value::dict([(self.variant, Value::Dict(self.inner.dict))]))
    }
}

/// Serializes a map key into a dict key: strings, chars, and integers (as
/// decimal strings, like `serde_json`).
struct KeyText;

fn key_error<T>() -> R<T> {
    Err(custom("dict keys must be strings (or integers)"))
}

macro_rules! key_ints {
    ($($m:ident($t:ty)),*) => {
        $(fn $m(self, v: $t) -> R<Key> { Ok(v.to_string().into()) })*
    };
}

macro_rules! key_refuse {
    ($($m:ident($($t:ty),*)),*) => {
        $(fn $m(self, $(_: $t),*) -> R<Key> { key_error() })*
    };
}

/// The compound-type methods of a serializer that accepts only keys
/// (strings, integers, unit variants): each is a key error.
macro_rules! key_only_compound_methods {
    ($ok:ty) => {
        fn serialize_newtype_variant<T: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> R<$ok> {
            key_error()
        }
        fn serialize_seq(self, _: Option<usize>) -> R<Self::SerializeSeq> {
            key_error()
        }
        fn serialize_tuple(self, _: usize) -> R<Self::SerializeTuple> {
            key_error()
        }
        fn serialize_tuple_struct(self, _: &'static str, _: usize) -> R<Self::SerializeTupleStruct> {
            key_error()
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> R<Self::SerializeTupleVariant> {
            key_error()
        }
        fn serialize_map(self, _: Option<usize>) -> R<Self::SerializeMap> {
            key_error()
        }
        fn serialize_struct(self, _: &'static str, _: usize) -> R<Self::SerializeStruct> {
            key_error()
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> R<Self::SerializeStructVariant> {
            key_error()
        }
    };
}

impl Serializer for KeyText {
    type Ok = Key;
    type Error = StructureError;
    type SerializeSeq = ser::Impossible<Key, StructureError>;
    type SerializeTuple = ser::Impossible<Key, StructureError>;
    type SerializeTupleStruct = ser::Impossible<Key, StructureError>;
    type SerializeTupleVariant = ser::Impossible<Key, StructureError>;
    type SerializeMap = ser::Impossible<Key, StructureError>;
    type SerializeStruct = ser::Impossible<Key, StructureError>;
    type SerializeStructVariant = ser::Impossible<Key, StructureError>;

    key_ints!(serialize_i8(i8), serialize_i16(i16), serialize_i32(i32), serialize_i64(i64), serialize_i128(i128));
    key_ints!(serialize_u8(u8), serialize_u16(u16), serialize_u32(u32), serialize_u64(u64), serialize_u128(u128));
    key_refuse!(serialize_bool(bool), serialize_f32(f32), serialize_f64(f64), serialize_bytes(&[u8]));
    key_refuse!(serialize_none(), serialize_unit(), serialize_unit_struct(&'static str));

    fn serialize_char(self, v: char) -> R<Key> {
        Ok(v.to_string().into())
    }
    fn serialize_str(self, v: &str) -> R<Key> {
        Ok(v.into())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> R<Key> {
        v.serialize(self)
    }
    fn serialize_unit_variant(self, _n: &'static str, _i: u32, variant: &'static str) -> R<Key> {
        Ok(variant.into())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _n: &'static str, v: &T) -> R<Key> {
        v.serialize(self)
    }
    key_only_compound_methods!(Key);
}

// ---------------------------------------------------------------------------
// NodeSer: T -> leaves, walking the plan
// ---------------------------------------------------------------------------

struct Flat<'p> {
    plan: &'p Plan,
    out: Vec<Value<'static>>,
}

struct NodeSer<'f, 'p> {
    f: &'f mut Flat<'p>,
    node: u32,
}

impl NodeSer<'_, '_> {
    /// Puts a whole value at this node: a leaf stores it, a struct node
    /// flattens it (or reports why it does not fit).
    fn deliver(self, v: Value<'static>) -> R<()> {
        let plan = self.f.plan;
        match plan.node(self.node) {
            NodeRef::Leaf(slot) => {
                self.f.out[slot as usize] = v;
                Ok(())
            }
            _ => {
                let out = &mut self.f.out;
                plan.flat(self.node, &v, &mut |slot, leaf: &Value<'static>| out[slot as usize] = leaf.clone())
            }
        }
    }
}

macro_rules! deliver_scalars {
    ($($m:ident($($a:ident: $t:ty),*)),* $(,)?) => {
        $(fn $m(self, $($a: $t),*) -> R<()> {
            let v = ValueSerializer.$m($($a),*)?;
            self.deliver(v)
        })*
    };
}

impl<'f, 'p> Serializer for NodeSer<'f, 'p> {
    type Ok = ();
    type Error = StructureError;
    type SerializeSeq = SeqSer<'f, 'p>;
    type SerializeTuple = SeqSer<'f, 'p>;
    type SerializeTupleStruct = SeqSer<'f, 'p>;
    type SerializeTupleVariant = Deliver<'f, 'p, VariantCollect<SeqCollect>>;
    type SerializeMap = MapSer<'f, 'p>;
    type SerializeStruct = MapSer<'f, 'p>;
    type SerializeStructVariant = Deliver<'f, 'p, VariantCollect<MapCollect>>;

    deliver_scalars! {
        serialize_bool(v: bool), serialize_i8(v: i8), serialize_i16(v: i16), serialize_i32(v: i32),
        serialize_i64(v: i64), serialize_i128(v: i128), serialize_u8(v: u8), serialize_u16(v: u16),
        serialize_u32(v: u32), serialize_u64(v: u64), serialize_u128(v: u128), serialize_f32(v: f32),
        serialize_f64(v: f64), serialize_char(v: char), serialize_str(v: &str), serialize_bytes(v: &[u8]),
        serialize_none(), serialize_unit(), serialize_unit_struct(name: &'static str),
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str),
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> R<()> {
        value.serialize(self)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, name: &'static str, value: &T) -> R<()> {
        let leaf = match self.f.plan.node(self.node) {
            NodeRef::Leaf(slot) => Some(slot as usize),
            _ => None,
        };
        if let (Some(slot), true) = (leaf, is_token(name, ARRAY_TOKEN)) {
            // The hot path of flattening arrays: straight into the slot.
            if let Some(a) = take_lent_array()? {
                self.f.out[slot] = Value::from(a);
                return Ok(());
            }
        }
        if leaf.is_some() || is_token(name, ARRAY_TOKEN) || is_token(name, VALUE_TOKEN) {
            let v = ValueSerializer.serialize_newtype_struct(name, value)?;
            return self.deliver(v);
        }
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> R<()> {
        let v = ValueSerializer.serialize_newtype_variant(name, index, variant, value)?;
        self.deliver(v)
    }
    fn serialize_seq(self, len: Option<usize>) -> R<SeqSer<'f, 'p>> {
        match self.f.plan.node(self.node) {
            NodeRef::Seq { edges, len } => Ok(SeqSer::Walk { f: self.f, edges, len: len as usize, i: 0, e: 0 }),
            _ => Ok(SeqSer::Capture(self, ValueSerializer.serialize_seq(len)?)),
        }
    }
    fn serialize_tuple(self, len: usize) -> R<SeqSer<'f, 'p>> {
        match self.f.plan.node(self.node) {
            NodeRef::Seq { .. } => self.serialize_seq(Some(len)),
            _ => Ok(SeqSer::Capture(self, ValueSerializer.serialize_tuple(len)?)),
        }
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> R<SeqSer<'f, 'p>> {
        self.serialize_tuple(len)
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> R<Self::SerializeTupleVariant> {
        let inner = ValueSerializer.serialize_tuple_variant(name, index, variant, len)?;
        Ok(Deliver(self, inner))
    }
    fn serialize_map(self, len: Option<usize>) -> R<MapSer<'f, 'p>> {
        match self.f.plan.node(self.node) {
            NodeRef::Dict { edges } => Ok(MapSer::Walk(MapWalk::new(self.f, edges))),
            _ => Ok(MapSer::Capture(self, ValueSerializer.serialize_map(len)?)),
        }
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> R<MapSer<'f, 'p>> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> R<Self::SerializeStructVariant> {
        let inner = ValueSerializer.serialize_struct_variant(name, index, variant, len)?;
        Ok(Deliver(self, inner))
    }
}

/// A sequence at a node: walked along a sequence node, else captured whole.
enum SeqSer<'f, 'p> {
    Walk { f: &'f mut Flat<'p>, edges: &'p [(u32, u32)], len: usize, i: usize, e: usize },
    Capture(NodeSer<'f, 'p>, SeqCollect),
}

impl SeqSer<'_, '_> {
    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        match self {
            SeqSer::Walk { f, edges, len, i, e } => {
                let at = *i;
                *i += 1;
                if at >= *len {
                    return Ok(()); // too long: counted, reported by `end`
                }
                if let Some(&(k, child)) = edges.get(*e).filter(|(k, _)| *k as usize == at) {
                    *e += 1;
                    value.serialize(NodeSer { f, node: child }).map_err(|err| err.within(PathKey::Index(k as usize)))
                } else {
                    let v = value.serialize(ValueSerializer)?;
                    if matches!(v, Value::None) {
                        Ok(())
                    } else {
                        Err(StructureError::at_root(StructureErrorKind::GapNotNone { got: kind_with_article(&v) })
                            .within(PathKey::Index(at)))
                    }
                }
            }
            SeqSer::Capture(_, c) => c.push(value),
        }
    }

    fn finish(self) -> R<()> {
        match self {
            SeqSer::Walk { len, i, .. } if i != len => {
                Err(StructureError::at_root(StructureErrorKind::Length { has: i, needs: len }))
            }
            SeqSer::Walk { .. } => Ok(()),
            SeqSer::Capture(node, c) => node.deliver(c.finish()),
        }
    }
}

impl ser::SerializeSeq for SeqSer<'_, '_> {
    type Ok = ();
    type Error = StructureError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        self.element(value)
    }
    fn end(self) -> R<()> {
        self.finish()
    }
}

impl ser::SerializeTuple for SeqSer<'_, '_> {
    type Ok = ();
    type Error = StructureError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        self.element(value)
    }
    fn end(self) -> R<()> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for SeqSer<'_, '_> {
    type Ok = ();
    type Error = StructureError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        self.element(value)
    }
    fn end(self) -> R<()> {
        self.finish()
    }
}

/// Walks a struct or map along a dict node.
struct MapWalk<'f, 'p> {
    f: &'f mut Flat<'p>,
    edges: &'p [(Key, u32)],
    seen: SmallVec<[u64; 2]>,
    count: usize,
    /// Where the next key probably is (maps of sorted keys hit it every time).
    hint: usize,
    pending: Option<usize>,
}

impl<'f, 'p> MapWalk<'f, 'p> {
    fn new(f: &'f mut Flat<'p>, edges: &'p [(Key, u32)]) -> Self {
        MapWalk { f, edges, seen: smallvec::smallvec![0; edges.len().div_ceil(64)], count: 0, hint: 0, pending: None }
    }

    fn find(&mut self, key: &str) -> R<usize> {
        let i = match self.edges.get(self.hint) {
            Some((k, _)) if &**k == key => self.hint,
            _ => self
                .edges
                .binary_search_by(|(k, _)| (**k).cmp(key))
                .map_err(|_| StructureError::at_root(StructureErrorKind::UnexpectedKey(key.into())))?,
        };
        self.hint = i + 1;
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        if self.seen[word] & bit != 0 {
            return Err(custom(format_args!("duplicate key {key:?}")));
        }
        self.seen[word] |= bit;
        self.count += 1;
        Ok(i)
    }

    fn value<T: ?Sized + Serialize>(&mut self, i: usize, value: &T) -> R<()> {
        let (k, child) = &self.edges[i];
        value.serialize(NodeSer { f: self.f, node: *child }).map_err(|e| e.within(PathKey::Name(k.clone())))
    }

    fn finish(self) -> R<()> {
        if self.count == self.edges.len() {
            return Ok(());
        }
        let missing = (0..self.edges.len()).find(|i| self.seen[i / 64] & (1 << (i % 64)) == 0).unwrap_or_default();
        Err(StructureError::at_root(StructureErrorKind::MissingKey(self.edges[missing].0.clone())))
    }
}

/// Finds a map key among a dict node's keys without allocating.
struct KeyFinder<'m, 'f, 'p>(&'m mut MapWalk<'f, 'p>);

impl Serializer for KeyFinder<'_, '_, '_> {
    type Ok = usize;
    type Error = StructureError;
    type SerializeSeq = ser::Impossible<usize, StructureError>;
    type SerializeTuple = ser::Impossible<usize, StructureError>;
    type SerializeTupleStruct = ser::Impossible<usize, StructureError>;
    type SerializeTupleVariant = ser::Impossible<usize, StructureError>;
    type SerializeMap = ser::Impossible<usize, StructureError>;
    type SerializeStruct = ser::Impossible<usize, StructureError>;
    type SerializeStructVariant = ser::Impossible<usize, StructureError>;

    fn serialize_str(self, v: &str) -> R<usize> {
        self.0.find(v)
    }
    fn serialize_bool(self, _: bool) -> R<usize> {
        key_error()
    }
    fn serialize_i8(self, v: i8) -> R<usize> {
        self.0.find(&v.to_string())
    }
    fn serialize_i16(self, v: i16) -> R<usize> {
        self.0.find(&v.to_string())
    }
    fn serialize_i32(self, v: i32) -> R<usize> {
        self.0.find(&v.to_string())
    }
    fn serialize_i64(self, v: i64) -> R<usize> {
        self.0.find(&v.to_string())
    }
    fn serialize_u8(self, v: u8) -> R<usize> {
        self.0.find(&v.to_string())
    }
    fn serialize_u16(self, v: u16) -> R<usize> {
        self.0.find(&v.to_string())
    }
    fn serialize_u32(self, v: u32) -> R<usize> {
        self.0.find(&v.to_string())
    }
    fn serialize_u64(self, v: u64) -> R<usize> {
        self.0.find(&v.to_string())
    }
    fn serialize_f32(self, _: f32) -> R<usize> {
        key_error()
    }
    fn serialize_f64(self, _: f64) -> R<usize> {
        key_error()
    }
    fn serialize_char(self, v: char) -> R<usize> {
        self.0.find(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_bytes(self, _: &[u8]) -> R<usize> {
        key_error()
    }
    fn serialize_none(self) -> R<usize> {
        key_error()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> R<usize> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> R<usize> {
        key_error()
    }
    fn serialize_unit_struct(self, _: &'static str) -> R<usize> {
        key_error()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> R<usize> {
        self.0.find(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> R<usize> {
        v.serialize(self)
    }
    key_only_compound_methods!(usize);
}

/// A map or struct at a node: walked along a dict node, else captured whole.
enum MapSer<'f, 'p> {
    Walk(MapWalk<'f, 'p>),
    Capture(NodeSer<'f, 'p>, MapCollect),
}

impl ser::SerializeMap for MapSer<'_, '_> {
    type Ok = ();
    type Error = StructureError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> R<()> {
        match self {
            MapSer::Walk(w) => {
                let i = key.serialize(KeyFinder(w))?;
                w.pending = Some(i);
                Ok(())
            }
            MapSer::Capture(_, c) => ser::SerializeMap::serialize_key(c, key),
        }
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        match self {
            MapSer::Walk(w) => {
                let i = w.pending.take().ok_or_else(|| custom("map value without a key"))?;
                w.value(i, value)
            }
            MapSer::Capture(_, c) => ser::SerializeMap::serialize_value(c, value),
        }
    }
    fn end(self) -> R<()> {
        match self {
            MapSer::Walk(w) => w.finish(),
            MapSer::Capture(node, c) => node.deliver(Value::Dict(c.dict)),
        }
    }
}

impl ser::SerializeStruct for MapSer<'_, '_> {
    type Ok = ();
    type Error = StructureError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> R<()> {
        match self {
            MapSer::Walk(w) => {
                let i = w.find(key)?;
                w.value(i, value)
            }
            MapSer::Capture(_, c) => c.put(key.into(), value),
        }
    }
    fn end(self) -> R<()> {
        ser::SerializeMap::end(self)
    }
}

/// A variant captured whole, then delivered.
struct Deliver<'f, 'p, C>(NodeSer<'f, 'p>, C);

impl ser::SerializeTupleVariant for Deliver<'_, '_, VariantCollect<SeqCollect>> {
    type Ok = ();
    type Error = StructureError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        ser::SerializeTupleVariant::serialize_field(&mut self.1, value)
    }
    fn end(self) -> R<()> {
        let v = ser::SerializeTupleVariant::end(self.1)?;
        self.0.deliver(v)
    }
}

impl ser::SerializeStructVariant for Deliver<'_, '_, VariantCollect<MapCollect>> {
    type Ok = ();
    type Error = StructureError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> R<()> {
        ser::SerializeStructVariant::serialize_field(&mut self.1, key, value)
    }
    fn end(self) -> R<()> {
        let v = ser::SerializeStructVariant::end(self.1)?;
        self.0.deliver(v)
    }
}

// ---------------------------------------------------------------------------
// ValueDeserializer: Value -> anything
// ---------------------------------------------------------------------------

/// Deserializes anything from an owned [`Value`].
pub(crate) struct ValueDeserializer(pub(crate) Value<'static>);

fn array_any<'de, V: Visitor<'de>>(a: Array<'static>, visitor: V) -> R<V::Value> {
    if a.rank() == 0 {
        let e = |e: crate::Error| custom(e);
        return match a.dtype() {
            DType::F32 => visitor.visit_f32(a.get(&[]).map_err(e)?),
            DType::F64 => visitor.visit_f64(a.get(&[]).map_err(e)?),
            DType::F16 => visitor.visit_f32(a.get::<half::f16>(&[]).map_err(e)?.to_f32()),
            DType::BF16 => visitor.visit_f32(a.get::<half::bf16>(&[]).map_err(e)?.to_f32()),
            DType::I8 => visitor.visit_i8(a.get(&[]).map_err(e)?),
            DType::I16 => visitor.visit_i16(a.get(&[]).map_err(e)?),
            DType::I32 => visitor.visit_i32(a.get(&[]).map_err(e)?),
            DType::I64 => visitor.visit_i64(a.get(&[]).map_err(e)?),
            DType::U8 => visitor.visit_u8(a.get(&[]).map_err(e)?),
            DType::U16 => visitor.visit_u16(a.get(&[]).map_err(e)?),
            DType::U32 => visitor.visit_u32(a.get(&[]).map_err(e)?),
            DType::U64 => visitor.visit_u64(a.get(&[]).map_err(e)?),
            DType::Bool => visitor.visit_bool(a.get(&[]).map_err(e)?),
            DType::Float8(_) => visitor.visit_f32(a.float8_to_f32().map_err(e)?[0]),
        };
    }
    // Rank >= 1: a sequence of the sub-arrays along the first axis.
    let n = a.shape()[0];
    let es = a.dtype().size() as isize;
    let mut subs = Vec::with_capacity(n);
    for i in 0..n {
        let sub_shape = &a.shape()[1..];
        let offset = if sub_shape.contains(&0) {
            a.byte_offset()
        } else {
            (a.byte_offset() as isize + i as isize * a.strides()[0] * es) as usize
        };
        let sub = a.restrided(sub_shape, &a.strides()[1..], offset).and_then(Array::into_owned).map_err(custom)?;
        subs.push(Value::from(sub));
    }
    visit_items(subs, visitor)
}

fn visit_items<'de, V: Visitor<'de>>(items: Vec<Value<'static>>, visitor: V) -> R<V::Value> {
    let total = items.len();
    let mut seq = ValueSeq { iter: items.into_iter(), i: 0 };
    let out = visitor.visit_seq(&mut seq)?;
    if seq.i != total {
        return Err(StructureError::at_root(StructureErrorKind::Length { has: total, needs: seq.i }));
    }
    Ok(out)
}

impl<'de> de::Deserializer<'de> for ValueDeserializer {
    type Error = StructureError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.0 {
            Value::None => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Int(i) => visitor.visit_i64(i),
            Value::Float(x) => visitor.visit_f64(x),
            Value::Str(s) => visitor.visit_string(s),
            Value::Bytes(b) => visitor.visit_byte_buf(b),
            Value::List(items) | Value::Tuple(items) => visit_items(items, visitor),
            Value::Dict(d) => {
                let mut map = ValueMap { iter: d.into_iter(), pending: None };
                visitor.visit_map(&mut map)
            }
            Value::Array(a) => array_any(*a, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.0 {
            Value::None => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> R<V::Value> {
        if name == VALUE_TOKEN {
            return hand(self.0, visitor);
        }
        if name == ARRAY_TOKEN {
            return match self.0 {
                a @ Value::Array(_) => hand(a, visitor),
                v => Err(custom(format_args!("expected an array, got {}", kind_with_article(&v)))),
            };
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> R<V::Value> {
        match self.0 {
            Value::Str(s) => visitor.visit_enum(IntoDeserializer::<StructureError>::into_deserializer(s)),
            Value::Dict(d) if d.len() == 1 => {
                let (variant, value) = d.into_iter().next().unwrap_or_else(|| unreachable!("one entry"));
                visitor.visit_enum(EnumDe { variant, value })
            }
            v => Err(custom(format_args!(
                "expected an enum (a str, or a dict of one entry), got {}",
                kind_with_article(&v)
            ))),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

struct ValueSeq {
    iter: std::vec::IntoIter<Value<'static>>,
    i: usize,
}

impl<'de> de::SeqAccess<'de> for ValueSeq {
    type Error = StructureError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> R<Option<T::Value>> {
        match self.iter.next() {
            None => Ok(None),
            Some(v) => {
                let i = self.i;
                self.i += 1;
                seed.deserialize(ValueDeserializer(v)).map(Some).map_err(|e| e.within(PathKey::Index(i)))
            }
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct ValueMap {
    iter: std::vec::IntoIter<(Key, Value<'static>)>,
    pending: Option<(Key, Value<'static>)>,
}

impl<'de> de::MapAccess<'de> for ValueMap {
    type Error = StructureError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> R<Option<K::Value>> {
        match self.iter.next() {
            None => Ok(None),
            Some((k, v)) => {
                let key = seed.deserialize(IntoDeserializer::<StructureError>::into_deserializer(&*k))?;
                self.pending = Some((k, v));
                Ok(Some(key))
            }
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> R<V::Value> {
        let (k, v) = self.pending.take().ok_or_else(|| custom("map value without a key"))?;
        seed.deserialize(ValueDeserializer(v)).map_err(|e| e.within(PathKey::Name(k)))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct EnumDe {
    variant: Key,
    value: Value<'static>,
}

impl<'de> de::EnumAccess<'de> for EnumDe {
    type Error = StructureError;
    type Variant = ValueDeserializer;
    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> R<(S::Value, ValueDeserializer)> {
        let v = seed.deserialize(IntoDeserializer::<StructureError>::into_deserializer(&*self.variant))?;
        Ok((v, ValueDeserializer(self.value)))
    }
}

impl<'de> de::VariantAccess<'de> for ValueDeserializer {
    type Error = StructureError;
    fn unit_variant(self) -> R<()> {
        match self.0 {
            Value::None => Ok(()),
            v => Err(custom(format_args!("expected no content for a unit variant, got {}", kind_with_article(&v)))),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> R<T::Value> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> R<V::Value> {
        de::Deserializer::deserialize_seq(self, visitor)
    }
    fn struct_variant<V: Visitor<'de>>(self, _fields: &'static [&'static str], visitor: V) -> R<V::Value> {
        de::Deserializer::deserialize_map(self, visitor)
    }
}

// ---------------------------------------------------------------------------
// NodeDe: leaves -> T, walking the plan
// ---------------------------------------------------------------------------

struct Unflat<'p> {
    plan: &'p Plan,
    leaves: Vec<Value<'static>>,
}

struct NodeDe<'u, 'p> {
    u: &'u mut Unflat<'p>,
    node: u32,
}

impl NodeDe<'_, '_> {
    /// The whole value at this node (a leaf, or the subtree built from its leaves).
    fn take(self) -> ValueDeserializer {
        let plan = self.u.plan;
        ValueDeserializer(match plan.node(self.node) {
            NodeRef::Leaf(slot) => self.u.leaves.get_mut(slot as usize).map(std::mem::take).unwrap_or_default(),
            _ => plan.build_subtree(self.node, &mut self.u.leaves),
        })
    }
}

macro_rules! take_and_forward {
    ($($m:ident($($a:ident: $t:ty),*)),* $(,)?) => {
        $(fn $m<V: Visitor<'de>>(self, $($a: $t,)* visitor: V) -> R<V::Value> {
            self.take().$m($($a,)* visitor)
        })*
    };
}

impl<'de> de::Deserializer<'de> for NodeDe<'_, '_> {
    type Error = StructureError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        let plan = self.u.plan;
        match plan.node(self.node) {
            NodeRef::Leaf(_) => self.take().deserialize_any(visitor),
            NodeRef::Seq { edges, len } => {
                let len = len as usize;
                let mut seq = SeqWalkDe { u: self.u, edges, len, i: 0, e: 0 };
                let out = visitor.visit_seq(&mut seq)?;
                if seq.i != len {
                    return Err(StructureError::at_root(StructureErrorKind::Length { has: len, needs: seq.i }));
                }
                Ok(out)
            }
            NodeRef::Dict { edges } => visitor.visit_map(MapWalkDe { u: self.u, edges, i: 0 }),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.u.plan.node(self.node) {
            NodeRef::Seq { .. } => self.deserialize_any(visitor),
            _ => self.take().deserialize_seq(visitor),
        }
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> R<V::Value> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _name: &'static str, _len: usize, visitor: V) -> R<V::Value> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.u.plan.node(self.node) {
            NodeRef::Dict { .. } => self.deserialize_any(visitor),
            _ => self.take().deserialize_map(visitor),
        }
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> R<V::Value> {
        self.deserialize_map(visitor)
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        match self.u.plan.node(self.node) {
            NodeRef::Leaf(_) => self.take().deserialize_option(visitor),
            _ => visitor.visit_some(self),
        }
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> R<V::Value> {
        if matches!(self.u.plan.node(self.node), NodeRef::Leaf(_)) || name == VALUE_TOKEN || name == ARRAY_TOKEN {
            return self.take().deserialize_newtype_struct(name, visitor);
        }
        visitor.visit_newtype_struct(self)
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> R<V::Value> {
        drop(self.take());
        visitor.visit_unit()
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> R<V::Value> {
        self.take().deserialize_enum(name, variants, visitor)
    }

    take_and_forward! {
        deserialize_bool(), deserialize_i8(), deserialize_i16(), deserialize_i32(), deserialize_i64(),
        deserialize_i128(), deserialize_u8(), deserialize_u16(), deserialize_u32(), deserialize_u64(),
        deserialize_u128(), deserialize_f32(), deserialize_f64(), deserialize_char(), deserialize_str(),
        deserialize_string(), deserialize_bytes(), deserialize_byte_buf(), deserialize_unit(),
        deserialize_unit_struct(name: &'static str), deserialize_identifier(),
    }
}

struct SeqWalkDe<'u, 'p> {
    u: &'u mut Unflat<'p>,
    edges: &'p [(u32, u32)],
    len: usize,
    i: usize,
    e: usize,
}

impl<'de> de::SeqAccess<'de> for SeqWalkDe<'_, '_> {
    type Error = StructureError;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> R<Option<T::Value>> {
        if self.i >= self.len {
            return Ok(None);
        }
        let i = self.i;
        self.i += 1;
        let r = match self.edges.get(self.e) {
            Some(&(k, child)) if k as usize == i => {
                self.e += 1;
                seed.deserialize(NodeDe { u: self.u, node: child })
            }
            _ => seed.deserialize(ValueDeserializer(Value::None)),
        };
        r.map(Some).map_err(|e| e.within(PathKey::Index(i)))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.len - self.i)
    }
}

struct MapWalkDe<'u, 'p> {
    u: &'u mut Unflat<'p>,
    edges: &'p [(Key, u32)],
    i: usize,
}

impl<'de> de::MapAccess<'de> for MapWalkDe<'_, '_> {
    type Error = StructureError;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> R<Option<K::Value>> {
        match self.edges.get(self.i) {
            None => Ok(None),
            Some((k, _)) => seed.deserialize(IntoDeserializer::<StructureError>::into_deserializer(&**k)).map(Some),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> R<V::Value> {
        let (k, child) = self.edges.get(self.i).ok_or_else(|| custom("map value without a key"))?;
        self.i += 1;
        seed.deserialize(NodeDe { u: self.u, node: *child }).map_err(|e| e.within(PathKey::Name(k.clone())))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.edges.len() - self.i)
    }
}

// ---------------------------------------------------------------------------
// The serde face of values: the JSON form in ordinary formats, the values
// themselves inside the bridge
// ---------------------------------------------------------------------------

impl Serialize for Value<'_> {
    /// The JSON form (see the module docs); inside the serde bridge
    /// ([`crate::nest`]), the value itself.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if bridge_active() { serialize_value(self, s) } else { JsonForm(self).serialize(s) }
    }
}

impl Serialize for Array<'_> {
    /// The JSON form `{"dtype", "shape", "data"}`; inside the serde bridge
    /// ([`crate::nest`]), the array itself (no copy of its data).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if bridge_active() { serialize_array(self, s) } else { ArrayForm(self).serialize(s) }
    }
}

// ---------------------------------------------------------------------------
// Reading: any self-describing input -> J (order-preserving tree) -> Value
// ---------------------------------------------------------------------------

/// Reads a value: the JSON form from an ordinary format, or the value itself
/// from the serde bridge.
struct ValueVisitor;

macro_rules! forward_to_j {
    ($($method:ident($($arg:ident: $t:ty),*) -> $err:ident;)*) => {
        $(fn $method<$err: de::Error>(self, $($arg: $t),*) -> Result<Self::Value, $err> {
            let j = JVisitor { depth: 0 }.$method($($arg),*)?;
            self.finish(j).map_err($err::custom)
        })*
    };
}

impl ValueVisitor {
    fn finish(&self, j: J) -> Result<Value<'static>, StructureError> {
        from_j(j)
    }
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value<'static>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }

    forward_to_j! {
        visit_bool(v: bool) -> E;
        visit_i64(v: i64) -> E;
        visit_u64(v: u64) -> E;
        visit_i128(v: i128) -> E;
        visit_u128(v: u128) -> E;
        visit_f64(v: f64) -> E;
        visit_str(v: &str) -> E;
        visit_string(v: String) -> E;
        visit_bytes(v: &[u8]) -> E;
        visit_byte_buf(v: Vec<u8>) -> E;
        visit_none() -> E;
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value<'static>, E> {
        // The bridge hands a value over through its slot and calls visit_unit.
        Ok(take_handed_value().unwrap_or(Value::None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value<'static>, D::Error> {
        let j = JSeed { depth: 0 }.deserialize(d)?;
        from_j(j).map_err(de::Error::custom)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value<'static>, D::Error> {
        let j = JSeed { depth: 0 }.deserialize(d)?;
        from_j(j).map_err(de::Error::custom)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value<'static>, A::Error> {
        let j = JVisitor { depth: 0 }.visit_seq(seq)?;
        from_j(j).map_err(de::Error::custom)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value<'static>, A::Error> {
        let j = JVisitor { depth: 0 }.visit_map(map)?;
        from_j(j).map_err(de::Error::custom)
    }
}

impl<'de, 'a> Deserialize<'de> for Value<'a> {
    /// Reads the JSON form (see the module docs); from the serde bridge
    /// ([`crate::nest`]), takes the value itself.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(VALUE_TOKEN, ValueVisitor)
    }
}

struct ArrayVisitor;

impl ArrayVisitor {
    fn from_value<E: de::Error>(v: Value<'static>) -> Result<Array<'static>, E> {
        match v {
            Value::Array(a) => Ok(*a),
            v => Err(E::custom(format_args!("expected an array, got {}", crate::structure::kind_with_article(&v)))),
        }
    }
}

impl<'de> Visitor<'de> for ArrayVisitor {
    type Value = Array<'static>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array {\"dtype\", \"shape\", \"data\"}")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Array<'static>, E> {
        match take_handed_value() {
            Some(v) => Self::from_value(v),
            None => Err(E::invalid_type(de::Unexpected::Unit, &self)),
        }
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Array<'static>, D::Error> {
        let j = JSeed { depth: 0 }.deserialize(d)?;
        Self::from_value(from_j(j).map_err(de::Error::custom)?)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Array<'static>, A::Error> {
        let j = JVisitor { depth: 0 }.visit_map(map)?;
        Self::from_value(from_j(j).map_err(de::Error::custom)?)
    }
}

impl<'de, 'a> Deserialize<'de> for Array<'a> {
    /// Reads the JSON form `{"dtype", "shape", "data"}`; from the serde
    /// bridge ([`crate::nest`]), takes the array itself (no copy).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(ARRAY_TOKEN, ArrayVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structure::{Structure, StructureBuilder, StructureExt};
    use fnabi_abi::sip::SipSignature;
    use serde::{Deserialize, Serialize};
    use std::collections::BTreeMap;

    fn x(v: f32) -> Array<'static> {
        Array::from_vec(&[1], vec![v]).unwrap()
    }

    fn first(v: &Value<'_>) -> f32 {
        v.as_array().unwrap().get(&[0]).unwrap()
    }

    fn plan(pairs: &[(usize, &[PathKey])]) -> Plan {
        let mut b = StructureBuilder::new();
        for (raw, path) in pairs {
            b.insert(*raw, path).unwrap();
        }
        b.finish().unwrap().plan().unwrap()
    }

    fn n(s: &str) -> PathKey {
        PathKey::Name(s.into())
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct D {
        c: Array<'static>,
        d: (Array<'static>, Array<'static>),
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Small {
        a: Vec<Array<'static>>,
        b: D,
    }

    fn small_plan() -> Plan {
        use PathKey::Index as I;
        plan(&[
            (0, &[n("a"), I(0)]),
            (1, &[n("a"), I(1)]),
            (2, &[n("b"), n("c")]),
            (3, &[n("b"), n("d"), I(0)]),
            (4, &[n("b"), n("d"), I(1)]),
        ])
    }

    fn small() -> Small {
        Small { a: vec![x(1.0), x(2.0)], b: D { c: x(3.0), d: (x(4.0), x(5.0)) } }
    }

    #[test]
    fn structs_round_trip_without_copies() {
        let p = small_plan();
        let s = small();
        let leaves = flatten(&p, &s).unwrap();
        assert_eq!(leaves.iter().map(first).collect::<Vec<_>>(), [1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(leaves[4].as_array().unwrap().as_ptr(), s.b.d.1.as_ptr());
        let ptr = leaves[0].as_array().unwrap().as_ptr();
        let back: Small = unflatten(&p, leaves).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.a[0].as_ptr(), ptr, "unflatten moves arrays");
        // The same leaves as Value::flatten gives for the JSON-like value.
        let v = to_value(&s).unwrap();
        let by_value: Vec<f32> = p.flatten(&v).unwrap().into_iter().map(first).collect();
        assert_eq!(by_value, [1.0, 2.0, 3.0, 4.0, 5.0]);
        let s2: Small = from_value(v).unwrap();
        assert_eq!(s2, s);
    }

    #[test]
    fn borrowed_arrays_are_copied() {
        #[derive(Serialize)]
        struct B<'a> {
            #[serde(borrow)]
            x: Array<'a>,
        }
        let data = [1.0f32, 2.0];
        let b = B { x: Array::from_slice(&[2], &data).unwrap() };
        let leaves = flatten(&plan(&[(0, &[n("x")])]), &b).unwrap();
        let a = leaves[0].as_array().unwrap();
        assert_ne!(a.as_ptr(), data.as_ptr().cast());
        assert_eq!(a.to_vec::<f32>().unwrap(), data);
    }

    #[test]
    fn maps_options_gaps_and_scalars() {
        use PathKey::Index as I;
        let p = plan(&[(0, &[n("k1"), I(1)]), (1, &[n("k0"), I(0)]), (2, &[n("k1"), I(0)])]);
        let mut m: BTreeMap<String, Vec<Option<f32>>> = BTreeMap::new();
        m.insert("k0".into(), vec![Some(1.0)]);
        m.insert("k1".into(), vec![Some(2.0), None]);
        let leaves = flatten(&p, &m).unwrap();
        assert_eq!(leaves, [Value::None, Value::Float(1.0), Value::Float(2.0)]);
        let back: BTreeMap<String, Vec<Option<f32>>> = unflatten(&p, leaves).unwrap();
        assert_eq!(back, m);
        // Gaps must serialize as None.
        let gap = plan(&[(0, &[I(1)])]);
        assert_eq!(flatten(&gap, &(None::<i32>, 5)).unwrap(), [Value::Int(5)]);
        let e = flatten(&gap, &(3, 5)).unwrap_err();
        assert_eq!(e.to_string(), "at [0]: expected None (a gap of the structure), got an int");
        let t: (Option<i32>, i64) = unflatten(&gap, vec![Value::Int(7)]).unwrap();
        assert_eq!(t, (None, 7));
        // Integer map keys match string keys.
        let ik = plan(&[(0, &[n("1")])]);
        let mut m = BTreeMap::new();
        m.insert(1u8, "one");
        assert_eq!(flatten(&ik, &m).unwrap(), [Value::from("one")]);
    }

    #[test]
    fn flatten_errors_name_paths() {
        let p = small_plan();
        #[derive(Serialize)]
        struct NoB {
            a: Vec<Array<'static>>,
        }
        let e = flatten(&p, &NoB { a: vec![x(1.0), x(2.0)] }).unwrap_err();
        assert_eq!(e.to_string(), "missing key \"b\" at the root");
        #[derive(Serialize)]
        struct Extra {
            a: Vec<Array<'static>>,
            b: D,
            z: i32,
        }
        let s = small();
        let e = flatten(&p, &Extra { a: s.a, b: s.b, z: 1 }).unwrap_err();
        assert_eq!(e.to_string(), "unexpected key \"z\" at the root");
        let s = small();
        let e = flatten(&p, &Small { a: vec![x(1.0)], b: s.b }).unwrap_err();
        assert_eq!(e.to_string(), "sequence at [\"a\"] has 1 item, needs 2");
        #[derive(Serialize)]
        struct WrongB {
            a: Vec<Array<'static>>,
            b: Vec<i32>,
        }
        let e = flatten(&p, &WrongB { a: vec![x(1.0), x(2.0)], b: vec![] }).unwrap_err();
        assert_eq!(e.to_string(), "at [\"b\"]: expected a dict, got a list");
        #[derive(Serialize)]
        struct ArrB {
            a: Vec<Array<'static>>,
            b: Array<'static>,
        }
        let e = flatten(&p, &ArrB { a: vec![x(1.0), x(2.0)], b: x(0.0) }).unwrap_err();
        assert_eq!(e.to_string(), "at [\"b\"]: expected a dict, got an array");
        let e = flatten(&p, &5u64).unwrap_err();
        assert_eq!(e.to_string(), "at the root: expected a dict, got an int");
        let e = to_value(&u64::MAX).unwrap_err();
        assert_eq!(e.to_string(), "integer 18446744073709551615 does not fit in a 64-bit signed int");
        let mut m = BTreeMap::new();
        m.insert(vec![1], 2);
        assert_eq!(to_value(&m).unwrap_err().to_string(), "dict keys must be strings (or integers)");
        // Empty sides.
        let empty = Plan::new(None).unwrap();
        assert!(flatten(&empty, &()).unwrap().is_empty());
        assert!(flatten(&empty, &Vec::<i32>::new()).unwrap().is_empty());
        assert!(flatten(&empty, &1).is_err());
        let u: Option<i32> = unflatten(&empty, vec![]).unwrap();
        assert_eq!(u, None);
    }

    #[test]
    fn unflatten_errors_name_paths() {
        let p = small_plan();
        let leaves = || (0..5).map(|i| Value::array(x(i as f32))).collect::<Vec<_>>();
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct WantsMore {
            a: Vec<Array<'static>>,
            b: D,
            c: i32,
        }
        let e = unflatten::<WantsMore>(&p, leaves()).unwrap_err();
        assert_eq!(e.to_string(), "missing field `c`");
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct TupleA {
            a: (Array<'static>,),
            b: D,
        }
        let e = unflatten::<TupleA>(&p, leaves()).unwrap_err();
        assert_eq!(e.to_string(), "sequence at [\"a\"] has 2 items, needs 1");
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct IntC {
            a: Vec<Array<'static>>,
            b: BTreeMap<String, Vec<i8>>,
        }
        let e = unflatten::<IntC>(&p, leaves()).unwrap_err();
        assert_eq!(e.to_string(), "at [\"b\"][\"c\"][0]: invalid type: floating point `2.0`, expected i8");
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct NotArr {
            a: Vec<Array<'static>>,
            b: D,
        }
        let mut l = leaves();
        l[2] = Value::Int(1);
        assert_eq!(
            unflatten::<NotArr>(&p, l).unwrap_err().to_string(),
            "at [\"b\"][\"c\"]: expected an array, got an int"
        );
        assert_eq!(unflatten::<NotArr>(&p, vec![]).unwrap_err().to_string(), "expected 5 leaves, got 0");
        // Unknown fields are skipped (serde's rule): a partial view of the results.
        #[derive(Deserialize)]
        struct OnlyA {
            a: Vec<Array<'static>>,
        }
        assert_eq!(unflatten::<OnlyA>(&p, leaves()).unwrap().a.len(), 2);
    }

    #[test]
    fn arrays_deserialize_into_numbers_and_vecs() {
        let p = Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))]).plan().unwrap();
        let m = Array::from_vec(&[2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let t = m.permuted(&[1, 0]).unwrap().into_owned().unwrap();
        let leaves = vec![Value::array(Array::scalar(2.5f32)), Value::array(t)];
        let (s, v): (f64, Vec<Vec<i64>>) = unflatten(&p, leaves).unwrap();
        assert_eq!(s, 2.5);
        assert_eq!(v, [[1, 3], [2, 4]]);
    }

    #[test]
    fn values_inside_structs() {
        // [{"p": {"a": $0, "b": $1}}]: a Value field at a struct node.
        use PathKey::Index as I;
        let p = plan(&[(0, &[I(0), n("p"), n("a")]), (1, &[I(0), n("p"), n("b")])]);
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct W {
            p: Value<'static>,
        }
        let w = (W { p: Value::dict([("b", Value::Int(2)), ("a", Value::array(x(1.0)))]) },);
        let leaves = flatten(&p, &w).unwrap();
        assert_eq!(leaves, [Value::array(x(1.0)), Value::Int(2)]);
        let back: (W,) = unflatten(&p, leaves).unwrap();
        assert_eq!(back, w);
        // A dict whose keys look like an array is still a dict here.
        let q = plan(&[(0, &[n("data")]), (1, &[n("dtype")]), (2, &[n("shape")])]);
        let v: Value<'static> = unflatten(&q, vec![Value::Int(0), Value::Int(1), Value::Int(2)]).unwrap();
        assert_eq!(v, Value::dict([("data", Value::Int(0)), ("dtype", Value::Int(1)), ("shape", Value::Int(2))]));
    }

    #[test]
    fn enums_and_json_inside_the_bridge() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        enum E {
            U,
            N(i32),
            T(i32, i32),
            S { a: i32 },
        }
        for e in [E::U, E::N(1), E::T(1, 2), E::S { a: 3 }] {
            let v = to_value(&e).unwrap();
            assert_eq!(from_value::<E>(v).unwrap(), e);
        }
        assert_eq!(crate::json::to_string(&to_value(&E::T(1, 2)).unwrap()), r#"{"T":{"$tuple":[1,2]}}"#);
        // A Serialize impl that writes JSON while the bridge runs gets the JSON form.
        struct Inner(Array<'static>);
        impl Serialize for Inner {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&serde_json::to_string(&self.0).map_err(ser::Error::custom)?)
            }
        }
        let v = to_value(&(Inner(x(1.0)), x(2.0))).unwrap();
        assert_eq!(
            v,
            Value::Tuple(vec![Value::from(r#"{"dtype":"f32","shape":[1],"data":[1.0]}"#), Value::array(x(2.0))])
        );
        assert!(LENT.with(|l| l.get()).is_none());
        assert!(!bridge_active());
    }

    #[test]
    fn sip_signature_end_to_end() {
        let sig = SipSignature::parse("I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R3!_0").unwrap();
        let inputs = Plan::new(sig.inputs()).unwrap();
        let v = crate::json::from_str(
            r#"[{"foo": {"dtype":"f32","shape":[1],"data":[0]}, "bar": {"dtype":"f32","shape":[1],"data":[1]}}, 2]"#,
        )
        .unwrap();
        let leaves = inputs.flatten(&v).unwrap();
        assert_eq!(first(leaves[0]), 0.0);
        assert_eq!(leaves[2], &Value::Int(2));
        let r: f32 = unflatten(&Plan::new(sig.results()).unwrap(), vec![Value::array(Array::scalar(4.0f32))]).unwrap();
        assert_eq!(r, 4.0);
    }
}
