//! The serde deserializer that rebuilds a `T: Deserialize` from leaves by walking a [`Plan`](crate::structure::Plan).

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------------
// NodeDe: leaves -> T, walking the plan
// ---------------------------------------------------------------------------

pub(super) struct Unflat<'p> {
    pub(super) plan: &'p Plan,
    pub(super) leaves: Vec<Value<'static>>,
}

pub(super) struct NodeDe<'u, 'p> {
    pub(super) u: &'u mut Unflat<'p>,
    pub(super) node: u32,
}

impl NodeDe<'_, '_> {
    /// The whole value at this node (a leaf, or the subtree built from its leaves).
    pub(super) fn take(self) -> ValueDeserializer {
        let plan = self.u.plan;
        ValueDeserializer(match plan.node(self.node) {
            NodeRef::Leaf(slot) => self.u.leaves.get_mut(slot as usize).map(std::mem::take).unwrap_or_default(),
            _ => plan.build_subtree(self.node, &mut self.u.leaves),
        })
    }
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

pub(super) struct SeqWalkDe<'u, 'p> {
    pub(super) u: &'u mut Unflat<'p>,
    pub(super) edges: &'p [(u32, u32)],
    pub(super) len: usize,
    pub(super) i: usize,
    pub(super) e: usize,
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

pub(super) struct MapWalkDe<'u, 'p> {
    pub(super) u: &'u mut Unflat<'p>,
    pub(super) edges: &'p [(Key, u32)],
    pub(super) i: usize,
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
