//! The serde serializer that builds a [`Value`] from anything (`to_value`).

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------------
// ValueSerializer: anything -> Value
// ---------------------------------------------------------------------------

/// Serializes anything into a [`Value`].
pub(crate) struct ValueSerializer;

pub(super) fn int_u64(v: u64) -> R<Value<'static>> {
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
    pub(super) fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
        let i = self.items.len();
        self.items.push(value.serialize(ValueSerializer).map_err(|e| e.within(PathKey::Index(i)))?);
        Ok(())
    }
    pub(super) fn finish(self) -> Value<'static> {
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
    pub(super) dict: Dict<'static>,
    key: Option<Key>,
}

impl MapCollect {
    pub(super) fn put<T: ?Sized + Serialize>(&mut self, key: Key, value: &T) -> R<()> {
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
pub(super) struct KeyText;

pub(super) fn key_error<T>() -> R<T> {
    Err(custom("dict keys must be strings (or integers)"))
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
