//! The serde deserializer that reads anything from a [`Value`] (`from_value`).

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------------
// ValueDeserializer: Value -> anything
// ---------------------------------------------------------------------------

/// Deserializes anything from an owned [`Value`].
pub(crate) struct ValueDeserializer(pub(crate) Value<'static>);

pub(super) fn array_any<'de, V: Visitor<'de>>(a: Array<'static>, visitor: V) -> R<V::Value> {
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
            // A complex number: the pair (re, im).
            DType::C64 => {
                let c: fnabi_abi::Complex<f32> = a.get(&[]).map_err(e)?;
                visit_items(vec![Value::Float(c.re.into()), Value::Float(c.im.into())], visitor)
            }
            DType::C128 => {
                let c: fnabi_abi::Complex<f64> = a.get(&[]).map_err(e)?;
                visit_items(vec![Value::Float(c.re), Value::Float(c.im)], visitor)
            }
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

pub(super) fn visit_items<'de, V: Visitor<'de>>(items: Vec<Value<'static>>, visitor: V) -> R<V::Value> {
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

pub(super) struct ValueSeq {
    pub(super) iter: std::vec::IntoIter<Value<'static>>,
    pub(super) i: usize,
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

pub(super) struct ValueMap {
    pub(super) iter: std::vec::IntoIter<(Key, Value<'static>)>,
    pub(super) pending: Option<(Key, Value<'static>)>,
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

pub(super) struct EnumDe {
    pub(super) variant: Key,
    pub(super) value: Value<'static>,
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
