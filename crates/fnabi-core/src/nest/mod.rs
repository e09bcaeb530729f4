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

macro_rules! deliver_scalars {
    ($($m:ident($($a:ident: $t:ty),*)),* $(,)?) => {
        $(fn $m(self, $($a: $t),*) -> R<()> {
            let v = ValueSerializer.$m($($a),*)?;
            self.deliver(v)
        })*
    };
}

macro_rules! take_and_forward {
    ($($m:ident($($a:ident: $t:ty),*)),* $(,)?) => {
        $(fn $m<V: Visitor<'de>>(self, $($a: $t,)* visitor: V) -> R<V::Value> {
            self.take().$m($($a,)* visitor)
        })*
    };
}

macro_rules! forward_to_j {
    ($($method:ident($($arg:ident: $t:ty),*) -> $err:ident;)*) => {
        $(fn $method<$err: de::Error>(self, $($arg: $t),*) -> Result<Self::Value, $err> {
            let j = JVisitor { depth: 0 }.$method($($arg),*)?;
            self.finish(j).map_err($err::custom)
        })*
    };
}

mod flatten;
mod from_value;
mod to_value;
mod unflatten;
mod value_serde;
#[allow(unused_imports)]
use flatten::*;
#[allow(unused_imports)]
use from_value::*;
#[allow(unused_imports)]
use to_value::*;
#[allow(unused_imports)]
use unflatten::*;
#[allow(unused_imports)]
use value_serde::*;

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

#[cfg(test)]
mod tests;
