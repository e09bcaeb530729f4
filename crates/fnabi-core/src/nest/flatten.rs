//! The serde serializer that flattens a `T: Serialize` into leaves by walking a [`Plan`](crate::structure::Plan).

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------------
// NodeSer: T -> leaves, walking the plan
// ---------------------------------------------------------------------------

pub(super) struct Flat<'p> {
    pub(super) plan: &'p Plan,
    pub(super) out: Vec<Value<'static>>,
}

pub(super) struct NodeSer<'f, 'p> {
    pub(super) f: &'f mut Flat<'p>,
    pub(super) node: u32,
}

impl NodeSer<'_, '_> {
    /// Puts a whole value at this node: a leaf stores it, a struct node
    /// flattens it (or reports why it does not fit).
    pub(super) fn deliver(self, v: Value<'static>) -> R<()> {
        let plan = self.f.plan;
        match plan.node(self.node) {
            NodeRef::Leaf(slot) => {
                self.f.out[slot as usize] = v;
                Ok(())
            }
            _ => {
                let out = &mut self.f.out;
                plan.flatten_node_with(self.node, &v, |slot, leaf: &Value<'static>| out[slot as usize] = leaf.clone())
            }
        }
    }
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
pub(super) enum SeqSer<'f, 'p> {
    Walk { f: &'f mut Flat<'p>, edges: &'p [(u32, u32)], len: usize, i: usize, e: usize },
    Capture(NodeSer<'f, 'p>, SeqCollect),
}

impl SeqSer<'_, '_> {
    pub(super) fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> R<()> {
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

    pub(super) fn finish(self) -> R<()> {
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
pub(super) struct MapWalk<'f, 'p> {
    pub(super) f: &'f mut Flat<'p>,
    pub(super) edges: &'p [(Key, u32)],
    pub(super) seen: SmallVec<[u64; 2]>,
    pub(super) count: usize,
    /// Where the next key probably is (maps of sorted keys hit it every time).
    pub(super) hint: usize,
    pub(super) pending: Option<usize>,
}

impl<'f, 'p> MapWalk<'f, 'p> {
    pub(super) fn new(f: &'f mut Flat<'p>, edges: &'p [(Key, u32)]) -> Self {
        MapWalk { f, edges, seen: smallvec::smallvec![0; edges.len().div_ceil(64)], count: 0, hint: 0, pending: None }
    }

    pub(super) fn find(&mut self, key: &str) -> R<usize> {
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

    pub(super) fn value<T: ?Sized + Serialize>(&mut self, i: usize, value: &T) -> R<()> {
        let (k, child) = &self.edges[i];
        value.serialize(NodeSer { f: self.f, node: *child }).map_err(|e| e.within(PathKey::Name(k.clone())))
    }

    pub(super) fn finish(self) -> R<()> {
        if self.count == self.edges.len() {
            return Ok(());
        }
        let missing = (0..self.edges.len()).find(|i| self.seen[i / 64] & (1 << (i % 64)) == 0).unwrap_or_default();
        Err(StructureError::at_root(StructureErrorKind::MissingKey(self.edges[missing].0.clone())))
    }
}

/// Finds a map key among a dict node's keys without allocating.
pub(super) struct KeyFinder<'m, 'f, 'p>(&'m mut MapWalk<'f, 'p>);

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
pub(super) enum MapSer<'f, 'p> {
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
pub(super) struct Deliver<'f, 'p, C>(NodeSer<'f, 'p>, C);

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
