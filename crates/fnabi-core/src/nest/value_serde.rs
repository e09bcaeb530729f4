//! The serde face of [`Value`] and [`Array`]: the JSON form in ordinary formats, the values themselves inside the bridge.

#[allow(unused_imports)]
use super::*;

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
pub(super) struct ValueVisitor;

impl ValueVisitor {
    pub(super) fn finish(&self, j: J) -> Result<Value<'static>, StructureError> {
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

pub(super) struct ArrayVisitor;

impl ArrayVisitor {
    pub(super) fn from_value<E: de::Error>(v: Value<'static>) -> Result<Array<'static>, E> {
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
