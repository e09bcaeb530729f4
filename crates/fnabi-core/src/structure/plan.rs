//! [`Plan`]: a [`Structure`] compiled once into flat node tables (like a
//! prepared statement), then used to flatten many values into leaves and to
//! unflatten many leaf lists into values.
//!
//! Compiling checks every invariant (so the walks need not), gives each leaf
//! its output slot (its rank among the raw indices), and records the facts
//! that let the walks take fast paths: sequences without gaps, leaves that
//! come out in slot order.

use super::{IndexPath, PathKey, Structure, StructureError, StructureErrorKind};
use crate::value::{Dict, Key, Value};

/// A compiled [`Structure`] (or an empty side): flattens values and
/// unflattens leaves.
///
/// **Leaves and raw order.** `flatten` returns one leaf per structure leaf,
/// ordered by raw index: position `i` holds the leaf with the `i`-th smallest
/// raw index. When the raw indices are `0..n` (as every producer of real
/// signatures makes them), position = raw index.
///
/// **Gaps.** A sequence's length is its largest key + 1; slots without a key
/// are gaps. `unflatten` fills a gap with `None`; `flatten` requires `None`
/// there (anything else would be silently dropped data).
///
/// **Kinds.** A sequence node takes a list or a tuple and builds a list; a
/// dict node takes and builds a dict with exactly its keys (in any order;
/// built in key order); a leaf takes any value. An empty side flattens
/// `None` or an empty list, tuple or dict, and unflattens to `None`.
///
/// ```
/// use fnabi_core::structure::{Plan, Structure, StructureExt};
/// use fnabi_core::Value;
/// // {"a": [$0, $1], "b": $2}
/// let s = Structure::Dict(vec![
///     ("a".into(), Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))])),
///     ("b".into(), Structure::Leaf(2)),
/// ]);
/// let plan = s.plan().unwrap();
/// let v = Value::dict([("b", Value::Int(3)), ("a", Value::List(vec![Value::Int(1), Value::Int(2)]))]);
/// let leaves = plan.flatten(&v).unwrap();
/// assert_eq!(leaves, [&Value::Int(1), &Value::Int(2), &Value::Int(3)]);
/// let back = plan.unflatten(leaves.into_iter().cloned().collect()).unwrap();
/// assert_eq!(back, v);
/// let e = plan.flatten(&Value::dict([("a", Value::List(vec![Value::Int(1)]))])).unwrap_err();
/// assert_eq!(e.to_string(), "missing key \"b\" at the root");
/// ```
#[derive(Clone, Debug)]
pub struct Plan {
    structure: Option<Structure>,
    nodes: Vec<Node>,
    /// `(key, child node)` of sequence nodes, contiguous per node.
    seq_edges: Vec<(u32, u32)>,
    /// `(key, child node)` of dict nodes, contiguous per node.
    dict_edges: Vec<(Key, u32)>,
    /// For each dict edge whose child is a leaf, its slot (`u32::MAX`
    /// otherwise): a dict of leaves flattens without visiting its children.
    dict_slots: Vec<u32>,
    /// Raw index of each slot.
    raw_of_slot: Vec<usize>,
    /// True when a depth-first walk meets the leaves in slot order.
    in_order: bool,
}

#[derive(Clone, Copy, Debug)]
enum Node {
    Leaf {
        slot: u32,
    },
    Seq {
        start: u32,
        count: u32,
        len: u32,
    },
    /// A sequence without gaps whose items are all leaves with consecutive
    /// slots `first..first + len` (lists of arrays): walked without recursion.
    Run {
        start: u32,
        len: u32,
        first: u32,
    },
    Dict {
        start: u32,
        count: u32,
        /// Every child is a leaf (slots in `dict_slots`).
        leaves: bool,
    },
}

static NONE: Value<'static> = Value::None;

/// What a [`Plan::visit`] tells as it walks a value: the containers it
/// opens and closes and the leaves between them, in the structure's order.
/// Every method but `leaf` does nothing by default; an error stops the walk.
pub trait PlanVisitor<'v, 'a: 'v> {
    /// Why the visitor stops a walk.
    type Error;
    /// True for a visitor that wants only the leaves: it ignores the
    /// container and gap events, and a leaf reported again replaces the
    /// earlier report (so a walk may report leaves while it still checks
    /// the keys around them, as `flatten` does).
    const LEAVES_ONLY: bool = false;
    /// A sequence of `len` items (gaps included) begins.
    #[inline(always)]
    fn open_seq(&mut self, len: usize) -> Result<(), Self::Error> {
        let _ = len;
        Ok(())
    }
    /// A dict of `len` items begins.
    #[inline(always)]
    fn open_dict(&mut self, len: usize) -> Result<(), Self::Error> {
        let _ = len;
        Ok(())
    }
    /// The innermost open container ends.
    #[inline(always)]
    fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
    /// A gap slot of a sequence (its value, checked, is `None`).
    #[inline(always)]
    fn gap(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
    /// The leaf of output slot `slot` (see [`Plan::flatten`]) is `value`.
    fn leaf(&mut self, slot: u32, value: &'v Value<'a>) -> Result<(), Self::Error>;
}

/// Where a [`Plan::build_with`] takes a value's parts from: told about
/// each container as the build opens and closes it (depth-first, in the
/// structure's order, as a [`visit`](Plan::visit) reports them), and asked
/// for each leaf. Infallible as the build sees it (so building stays as
/// cheap as moving the leaves): a source that fails keeps its error and
/// answers `None` until the build ends.
pub trait PlanSource<'a> {
    /// A sequence of `len` items (gaps included) begins.
    #[inline(always)]
    fn open_seq(&mut self, len: usize) {
        let _ = len;
    }
    /// A dict of `len` items begins.
    #[inline(always)]
    fn open_dict(&mut self, len: usize) {
        let _ = len;
    }
    /// The innermost open container ends.
    #[inline(always)]
    fn close(&mut self) {}
    /// A gap slot of a sequence (built as `None`).
    #[inline(always)]
    fn gap(&mut self) {}
    /// The leaf of slot `slot`.
    fn leaf(&mut self, slot: u32) -> Value<'a>;
    /// The leaves of slots `first..first + len`, the items of a sequence
    /// of leaves (one [`leaf`](PlanSource::leaf) each by default).
    #[inline]
    fn leaves(&mut self, first: u32, len: u32) -> Vec<Value<'a>> {
        (first..first + len).map(|slot| self.leaf(slot)).collect()
    }
    /// The value of the sequence just closed, from its items (a list by default).
    #[inline(always)]
    fn sequence(&mut self, items: Vec<Value<'a>>) -> Value<'a> {
        Value::List(items)
    }
}

/// Why a [`Plan::visit`] stopped: the value does not fit the structure
/// (the error's path says where), or the visitor stopped it.
#[derive(Clone, Debug, PartialEq)]
pub enum VisitError<E> {
    /// The value does not fit the structure.
    Structure(StructureError),
    /// The visitor's error.
    Visitor(E),
}

impl<E> From<StructureError> for VisitError<E> {
    #[cold]
    fn from(e: StructureError) -> Self {
        VisitError::Structure(e)
    }
}

impl<E> VisitError<E> {
    /// The same error one level down (structure errors only: a visitor
    /// knows its own positions).
    #[cold]
    fn within(self, key: PathKey) -> Self {
        match self {
            VisitError::Structure(e) => VisitError::Structure(e.within(key)),
            other => other,
        }
    }
}

impl VisitError<std::convert::Infallible> {
    /// The structure error (a visitor that cannot fail stopped nothing).
    pub fn into_structure(self) -> StructureError {
        match self {
            VisitError::Structure(e) => e,
            VisitError::Visitor(never) => match never {},
        }
    }
}

/// The visitor of `flatten_with`: leaves to a closure, containers ignored.
struct Put<F>(F);

impl<'v, 'a: 'v, F: FnMut(u32, &'v Value<'a>)> PlanVisitor<'v, 'a> for Put<F> {
    type Error = std::convert::Infallible;
    const LEAVES_ONLY: bool = true;
    #[inline(always)]
    fn leaf(&mut self, slot: u32, value: &'v Value<'a>) -> Result<(), Self::Error> {
        (self.0)(slot, value);
        Ok(())
    }
}

/// `s` with the children of each dict in key order (depth-checked: the
/// tree is not validated yet).
fn sorted_dicts(s: &Structure, depth: usize) -> Result<Structure, StructureError> {
    if depth > fnabi_abi::limits::MAX_DEPTH {
        return Err(StructureError::at_root(StructureErrorKind::TooDeep(fnabi_abi::limits::MAX_DEPTH)));
    }
    Ok(match s {
        Structure::Leaf(raw) => Structure::Leaf(*raw),
        Structure::Sequence(c) => {
            Structure::Sequence(c.iter().map(|(k, c)| Ok((*k, sorted_dicts(c, depth + 1)?))).collect::<Result<_, _>>()?)
        }
        Structure::Dict(c) => {
            let mut c: Vec<(Key, Structure)> =
                c.iter().map(|(k, c)| Ok((k.clone(), sorted_dicts(c, depth + 1)?))).collect::<Result<_, _>>()?;
            c.sort_by(|a, b| a.0.cmp(&b.0));
            Structure::Dict(c)
        }
    })
}

struct Compiler {
    nodes: Vec<Node>,
    seq_edges: Vec<(u32, u32)>,
    dict_edges: Vec<(Key, u32)>,
    raws: Vec<usize>,
}

fn too_large() -> StructureError {
    StructureError::at_root(StructureErrorKind::Custom("structure is too large (more than 2^32 nodes)".into()))
}

fn u32_of(n: usize) -> Result<u32, StructureError> {
    u32::try_from(n).map_err(|_| too_large())
}

impl Compiler {
    /// Adds `s` (validated: its depth is bounded) and its subtree; returns its node id.
    fn add(&mut self, s: &Structure) -> Result<u32, StructureError> {
        let id = u32_of(self.nodes.len())?;
        match s {
            Structure::Leaf(raw) => {
                // The walk position for now; turned into a slot at the end.
                self.nodes.push(Node::Leaf { slot: u32_of(self.raws.len())? });
                self.raws.push(*raw);
            }
            Structure::Sequence(children) => {
                let start = self.seq_edges.len();
                for (k, _) in children {
                    self.seq_edges.push((u32_of(*k)?, 0));
                }
                let len32 = u32_of(children.last().map_or(0, |(k, _)| k + 1))?;
                self.nodes.push(Node::Seq { start: u32_of(start)?, count: u32_of(children.len())?, len: len32 });
                for (i, (k, child)) in children.iter().enumerate() {
                    let c = self.add(child).map_err(|e| e.within(PathKey::Index(*k)))?;
                    self.seq_edges[start + i].1 = c;
                }
            }
            Structure::Dict(children) => {
                let start = self.dict_edges.len();
                for (k, _) in children {
                    self.dict_edges.push((k.clone(), 0));
                }
                self.nodes.push(Node::Dict { start: u32_of(start)?, count: u32_of(children.len())?, leaves: false });
                for (i, (k, child)) in children.iter().enumerate() {
                    let c = self.add(child).map_err(|e| e.within(PathKey::Name(k.clone())))?;
                    self.dict_edges[start + i].1 = c;
                }
            }
        }
        Ok(id)
    }
}

/// Leaves that a build meets in slot order: moved out one after another.
struct InOrder<'a>(std::vec::IntoIter<Value<'a>>);

impl<'a> PlanSource<'a> for InOrder<'a> {
    #[inline]
    fn leaf(&mut self, _slot: u32) -> Value<'a> {
        self.0.next().unwrap_or_default()
    }
    #[inline]
    fn leaves(&mut self, _first: u32, len: u32) -> Vec<Value<'a>> {
        self.0.by_ref().take(len as usize).collect()
    }
}

/// Leaves in any order: each is taken out of its slot.
struct BySlot<'s, 'a>(&'s mut [Value<'a>]);

impl<'a> PlanSource<'a> for BySlot<'_, 'a> {
    #[inline]
    fn leaf(&mut self, slot: u32) -> Value<'a> {
        self.0.get_mut(slot as usize).map(std::mem::take).unwrap_or_default()
    }
    #[inline]
    fn leaves(&mut self, first: u32, len: u32) -> Vec<Value<'a>> {
        let (first, len) = (first as usize, len as usize);
        match self.0.get_mut(first..first + len) {
            Some(run) => run.iter_mut().map(std::mem::take).collect(),
            None => Vec::new(),
        }
    }
}

impl Plan {
    /// Compiles `structure` (`None`: an empty side, which has no leaves).
    ///
    /// Errors: keys not strictly ascending, a raw index used twice, nesting
    /// deeper than [`MAX_DEPTH`](fnabi_abi::limits::MAX_DEPTH), more than [`MAX_GAP_SLOTS`](fnabi_abi::limits::MAX_GAP_SLOTS) gap slots.
    pub fn new(structure: Option<&Structure>) -> Result<Plan, StructureError> {
        Plan::compile(structure, structure)
    }

    /// Like [`new`](Plan::new) for a structure whose dicts list their keys
    /// in the order a [`visit`](Plan::visit) (and [`unflatten`](Plan::unflatten))
    /// should meet them, which need not be ascending (the keys of a dict
    /// must still be unique). For a convention that passes a dict's values
    /// in a declared order, such as `iree.abi`'s `sdict` records. The plan's
    /// [`structure`](Plan::structure) has its dicts in key order.
    ///
    /// ```
    /// use fnabi_core::structure::{Plan, Structure};
    /// use fnabi_core::Value;
    /// let s = Structure::Dict(vec![("y".into(), Structure::Leaf(0)), ("x".into(), Structure::Leaf(1))]);
    /// assert!(Plan::new(Some(&s)).is_err()); // keys not ascending
    /// let plan = Plan::with_dict_order(&s).unwrap();
    /// let v = Value::dict([("x", Value::Int(1)), ("y", Value::Int(2))]);
    /// assert_eq!(plan.flatten(&v).unwrap(), [&Value::Int(2), &Value::Int(1)]);
    /// let back = plan.unflatten(vec![Value::Int(2), Value::Int(1)]).unwrap();
    /// let Value::Dict(d) = back else { panic!() };
    /// assert_eq!(d.keys().map(|k| &**k).collect::<Vec<_>>(), ["y", "x"]);
    /// ```
    pub fn with_dict_order(structure: &Structure) -> Result<Plan, StructureError> {
        let sorted = sorted_dicts(structure, 0)?;
        Plan::compile(Some(&sorted), Some(structure))
    }

    /// Compiles `walk` (whose dicts are in visit order), `structure` being
    /// the same tree with its dicts in key order.
    fn compile(structure: Option<&Structure>, walk: Option<&Structure>) -> Result<Plan, StructureError> {
        let mut c = Compiler { nodes: Vec::new(), seq_edges: Vec::new(), dict_edges: Vec::new(), raws: Vec::new() };
        if let (Some(s), Some(w)) = (structure, walk) {
            // Depth, key order, gap count and raw-index uniqueness: checked
            // once, by the ABI layer; the compiler relies on them.
            s.validate()?;
            c.add(w)?;
        }
        // Slots: the rank of each raw index (= the raw index when they are 0..n).
        let mut sorted = c.raws.clone();
        sorted.sort_unstable();
        let dense = sorted.iter().enumerate().all(|(i, &r)| i == r);
        let slot_of_walk: Vec<u32> = if dense {
            c.raws.iter().map(|&r| r as u32).collect()
        } else {
            c.raws.iter().map(|r| sorted.binary_search(r).unwrap_or_default() as u32).collect()
        };
        let in_order = slot_of_walk.iter().enumerate().all(|(i, &s)| i == s as usize);
        for n in &mut c.nodes {
            if let Node::Leaf { slot } = n {
                *slot = slot_of_walk[*slot as usize];
            }
        }
        for i in 0..c.nodes.len() {
            if let Node::Seq { start, count, len } = c.nodes[i] {
                let edges = &c.seq_edges[start as usize..(start + count) as usize];
                let slots: Option<Vec<u32>> = edges
                    .iter()
                    .map(|&(_, child)| match c.nodes[child as usize] {
                        Node::Leaf { slot } => Some(slot),
                        _ => None,
                    })
                    .collect();
                if let Some(slots) = slots.filter(|s| count == len && !s.is_empty())
                    && slots.windows(2).all(|w| w[1] == w[0] + 1)
                {
                    c.nodes[i] = Node::Run { start, len, first: slots[0] };
                }
            }
        }
        let leaf_slot = |child: u32| match c.nodes[child as usize] {
            Node::Leaf { slot } => slot,
            _ => u32::MAX,
        };
        let dict_slots: Vec<u32> = c.dict_edges.iter().map(|&(_, child)| leaf_slot(child)).collect();
        for n in &mut c.nodes {
            if let Node::Dict { start, count, leaves } = n {
                *leaves = dict_slots[*start as usize..(*start + *count) as usize].iter().all(|&s| s != u32::MAX);
            }
        }
        Ok(Plan {
            structure: structure.cloned(),
            nodes: c.nodes,
            seq_edges: c.seq_edges,
            dict_edges: c.dict_edges,
            dict_slots,
            raw_of_slot: sorted,
            in_order,
        })
    }

    /// The structure this plan was compiled from (`None` for an empty side).
    pub fn structure(&self) -> Option<&Structure> {
        self.structure.as_ref()
    }

    /// Number of leaves.
    pub fn leaf_count(&self) -> usize {
        self.raw_of_slot.len()
    }

    /// The raw index of each output position of [`flatten`](Plan::flatten).
    pub fn raw_indices(&self) -> &[usize] {
        &self.raw_of_slot
    }

    /// The index path of each output position of [`flatten`](Plan::flatten).
    pub fn leaf_paths(&self) -> Vec<IndexPath> {
        let mut out = vec![IndexPath::root(); self.leaf_count()];
        if let Some(s) = &self.structure {
            for (path, raw) in s.leaves() {
                if let Ok(slot) = self.raw_of_slot.binary_search(&raw) {
                    out[slot] = path;
                }
            }
        }
        out
    }

    /// The leaves of `value`, by reference, in raw order (see the type docs).
    pub fn flatten<'v, 'a>(&self, value: &'v Value<'a>) -> Result<Vec<&'v Value<'a>>, StructureError> {
        let mut out: Vec<&'v Value<'a>> = vec![&NONE; self.leaf_count()];
        self.flatten_into(value, &mut out)?;
        Ok(out)
    }

    /// Like [`flatten`](Plan::flatten), into `out` (which must hold
    /// [`leaf_count`](Plan::leaf_count) entries; they are overwritten), so a
    /// caller can reuse one buffer.
    pub fn flatten_into<'v, 'a>(&self, value: &'v Value<'a>, out: &mut [&'v Value<'a>]) -> Result<(), StructureError> {
        if out.len() != self.leaf_count() {
            return Err(StructureError::at_root(StructureErrorKind::LeafCount {
                expected: self.leaf_count(),
                got: out.len(),
            }));
        }
        self.flatten_with(value, |slot, v| out[slot as usize] = v)
    }

    /// Walks `value` and hands each leaf to `put(slot, leaf)`, each slot
    /// `0..leaf_count` exactly once when the walk succeeds (slots are the
    /// output positions of [`flatten`](Plan::flatten)). `put` may be called
    /// for some leaves before an error is found. For a caller that consumes
    /// the leaves at once (binding them as call arguments, say) instead of
    /// collecting them first. A [`visit`](Plan::visit) that ignores the
    /// container events.
    #[inline]
    pub(crate) fn flatten_with<'v, 'a, F: FnMut(u32, &'v Value<'a>)>(
        &self,
        value: &'v Value<'a>,
        put: F,
    ) -> Result<(), StructureError> {
        self.visit(value, &mut Put(put)).map_err(VisitError::into_structure)
    }

    /// Like [`flatten_with`](Plan::flatten_with) from node `id` (a subtree).
    pub(crate) fn flatten_node_with<'v, 'a, F: FnMut(u32, &'v Value<'a>)>(
        &self,
        id: u32,
        value: &'v Value<'a>,
        put: F,
    ) -> Result<(), StructureError> {
        self.walk(id, value, &mut Put(put)).map_err(VisitError::into_structure)
    }

    /// Walks `value` depth-first along the structure, checking it as
    /// [`flatten`](Plan::flatten) does, and tells `visitor` what it meets:
    /// each sequence and dict as `open_seq(len)`/`open_dict(len)`, its items,
    /// then `close()`; each leaf as `leaf(slot, value)`; each gap slot (a
    /// checked `None`) as `gap()`. Sequence items come in key order, dict
    /// items in the structure's key order (the order the plan was compiled
    /// with, see [`with_dict_order`](Plan::with_dict_order)) whatever order
    /// the host dict has. A container is checked (kind, length, keys) before
    /// its `open_*`; a failing check or visitor stops the walk. An empty
    /// side takes `None` or an empty container and reports nothing.
    ///
    /// ```
    /// use fnabi_core::structure::{Plan, PlanVisitor, Structure};
    /// use fnabi_core::Value;
    /// // {"a": [$0, $1], "b": $2}, rebuilt as text
    /// struct Text(String);
    /// impl<'v, 'a: 'v> PlanVisitor<'v, 'a> for Text {
    ///     type Error = std::convert::Infallible;
    ///     fn open_seq(&mut self, _: usize) -> Result<(), Self::Error> { self.0 += "["; Ok(()) }
    ///     fn open_dict(&mut self, _: usize) -> Result<(), Self::Error> { self.0 += "{"; Ok(()) }
    ///     fn close(&mut self) -> Result<(), Self::Error> { self.0 += ")"; Ok(()) }
    ///     fn leaf(&mut self, slot: u32, v: &'v Value<'a>) -> Result<(), Self::Error> {
    ///         self.0 += &format!("${slot}={v:?} ");
    ///         Ok(())
    ///     }
    /// }
    /// let s = Structure::Dict(vec![
    ///     ("a".into(), Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))])),
    ///     ("b".into(), Structure::Leaf(2)),
    /// ]);
    /// let plan = Plan::new(Some(&s)).unwrap();
    /// let v = Value::dict([("b", Value::Int(3)), ("a", Value::List(vec![Value::Int(1), Value::Int(2)]))]);
    /// let mut text = Text(String::new());
    /// plan.visit(&v, &mut text).unwrap();
    /// assert_eq!(text.0, "{[$0=Int(1) $1=Int(2) )$2=Int(3) )");
    /// let e = plan.visit(&Value::dict([("a", Value::Int(1)), ("b", Value::Int(2))]), &mut text).unwrap_err();
    /// assert_eq!(e.into_structure().to_string(), "at [\"a\"]: expected a list or tuple, got an int");
    /// ```
    #[inline]
    pub fn visit<'v, 'a, V: PlanVisitor<'v, 'a>>(
        &self,
        value: &'v Value<'a>,
        visitor: &mut V,
    ) -> Result<(), VisitError<V::Error>> {
        if self.nodes.is_empty() {
            return match value {
                Value::None => Ok(()),
                Value::List(v) | Value::Tuple(v) if v.is_empty() => Ok(()),
                Value::Dict(d) if d.is_empty() => Ok(()),
                _ => Err(super::expected_error("None (the side is empty)", value).into()),
            };
        }
        self.walk(0, value, visitor)
    }

    /// Like [`visit`](Plan::visit) for a plan whose root is a sequence,
    /// with `items` as the root's items and without the root's
    /// `open_seq`/`close` (for a caller whose root is an argument list it
    /// holds as a slice). An empty side takes no items.
    pub fn visit_items<'v, 'a, V: PlanVisitor<'v, 'a>>(
        &self,
        items: &'v [Value<'a>],
        visitor: &mut V,
    ) -> Result<(), VisitError<V::Error>> {
        match self.nodes.first() {
            None if items.is_empty() => Ok(()),
            None => Err(StructureError::at_root(StructureErrorKind::Length { has: items.len(), needs: 0 }).into()),
            Some(&Node::Run { len, first, .. }) => {
                check_len(items, len)?;
                for (i, item) in items.iter().enumerate() {
                    visitor.leaf(first + i as u32, item).map_err(VisitError::Visitor)?;
                }
                Ok(())
            }
            Some(&Node::Seq { start, count, len }) => {
                check_len(items, len)?;
                self.walk_seq(start, count, len, items, visitor)
            }
            Some(_) => Err(StructureError::at_root(StructureErrorKind::Expected {
                expected: "a plan whose root is a sequence",
                got: "items",
            })
            .into()),
        }
    }

    /// Walks `v` along node `id`, telling `visitor` what it meets.
    fn walk<'v, 'a, V: PlanVisitor<'v, 'a>>(
        &self,
        id: u32,
        v: &'v Value<'a>,
        visitor: &mut V,
    ) -> Result<(), VisitError<V::Error>> {
        match self.nodes[id as usize] {
            Node::Leaf { slot } => visitor.leaf(slot, v).map_err(VisitError::Visitor),
            Node::Run { len, first, .. } => {
                let items = seq_items(v, len)?;
                visitor.open_seq(len as usize).map_err(VisitError::Visitor)?;
                for (i, item) in items.iter().enumerate() {
                    visitor.leaf(first + i as u32, item).map_err(VisitError::Visitor)?;
                }
                visitor.close().map_err(VisitError::Visitor)
            }
            Node::Seq { start, count, len } => {
                let items = seq_items(v, len)?;
                if count != len {
                    self.check_gaps(&self.seq_edges[start as usize..(start + count) as usize], items)?;
                }
                visitor.open_seq(len as usize).map_err(VisitError::Visitor)?;
                self.walk_seq(start, count, len, items, visitor)?;
                visitor.close().map_err(VisitError::Visitor)
            }
            Node::Dict { start, count, leaves } => {
                let d = match v {
                    Value::Dict(d) => d,
                    _ => return Err(super::expected_error("a dict", v).into()),
                };
                let range = start as usize..(start + count) as usize;
                let edges = &self.dict_edges[range.clone()];
                let entries = d.entries();
                // Fast path: the value's keys in the structure's order (a
                // dict built by `unflatten`, or by a caller in key order).
                if V::LEAVES_ONLY && leaves && entries.len() == edges.len() {
                    // A dict of leaves for a visitor that takes a leaf
                    // twice: each value goes to its slot as its key is
                    // checked (one pass; a mismatch goes the slow way).
                    let slots = &self.dict_slots[range.clone()];
                    let mut in_order = true;
                    for (((k, _), &slot), (vk, vv)) in edges.iter().zip(slots).zip(entries) {
                        // (Two short keys compare as their in-place bytes: no pointer to follow.)
                        if k != vk {
                            in_order = false;
                            break;
                        }
                        visitor.leaf(slot, vv).map_err(VisitError::Visitor)?;
                    }
                    if in_order {
                        return Ok(());
                    }
                }
                let in_order =
                    entries.len() == edges.len() && edges.iter().zip(entries).all(|((k, _), (vk, _))| k == vk);
                if !in_order {
                    return self.walk_dict_any_order(edges, d, visitor);
                }
                visitor.open_dict(count as usize).map_err(VisitError::Visitor)?;
                if leaves {
                    // A dict of leaves (of arrays, typically): each value
                    // goes to its slot, without recursion.
                    for (&slot, (_, vv)) in self.dict_slots[range].iter().zip(entries) {
                        visitor.leaf(slot, vv).map_err(VisitError::Visitor)?;
                    }
                } else {
                    for ((k, child), (_, vv)) in edges.iter().zip(entries) {
                        self.walk(*child, vv, visitor).map_err(|e| e.within(PathKey::Name(k.clone())))?;
                    }
                }
                visitor.close().map_err(VisitError::Visitor)
            }
        }
    }

    /// The items of a sequence node (checked: kind, length, gaps), in key order.
    #[inline]
    fn walk_seq<'v, 'a, V: PlanVisitor<'v, 'a>>(
        &self,
        start: u32,
        count: u32,
        len: u32,
        items: &'v [Value<'a>],
        visitor: &mut V,
    ) -> Result<(), VisitError<V::Error>> {
        let edges = &self.seq_edges[start as usize..(start + count) as usize];
        if count == len {
            // No gaps.
            for &(k, child) in edges {
                self.walk(child, &items[k as usize], visitor).map_err(|e| e.within(PathKey::Index(k as usize)))?;
            }
            return Ok(());
        }
        let mut next = 0;
        for &(k, child) in edges {
            while next < k {
                visitor.gap().map_err(VisitError::Visitor)?;
                next += 1;
            }
            next = k + 1;
            self.walk(child, &items[k as usize], visitor).map_err(|e| e.within(PathKey::Index(k as usize)))?;
        }
        while next < len {
            visitor.gap().map_err(VisitError::Visitor)?;
            next += 1;
        }
        Ok(())
    }

    #[cold]
    fn check_gaps(&self, edges: &[(u32, u32)], items: &[Value<'_>]) -> Result<(), StructureError> {
        let mut keys = edges.iter().map(|e| e.0 as usize).peekable();
        for (i, item) in items.iter().enumerate() {
            if keys.peek() == Some(&i) {
                keys.next();
            } else if !matches!(item, Value::None) {
                return Err(StructureError::at_root(StructureErrorKind::GapNotNone {
                    got: super::kind_with_article(item),
                })
                .within(PathKey::Index(i)));
            }
        }
        Ok(())
    }

    /// A dict whose keys are not in the structure's order (or do not match):
    /// sort an index of its entries and merge. Reports the first missing key
    /// (in key order) before any unexpected one.
    #[cold]
    fn walk_dict_any_order<'v, 'a, V: PlanVisitor<'v, 'a>>(
        &self,
        edges: &[(Key, u32)],
        d: &'v Dict<'a>,
        visitor: &mut V,
    ) -> Result<(), VisitError<V::Error>> {
        let entries = d.entries();
        let mut order: Vec<usize> = (0..entries.len()).collect();
        order.sort_unstable_by(|&a, &b| entries[a].0.cmp(&entries[b].0));
        // The edges in key order (the plan's order may be another, see
        // `with_dict_order`).
        let mut by_key: Vec<usize> = (0..edges.len()).collect();
        by_key.sort_unstable_by(|&a, &b| edges[a].0.cmp(&edges[b].0));
        let mut found: Vec<&'v Value<'a>> = vec![&NONE; edges.len()];
        let mut j = 0;
        for &e in &by_key {
            let k = &edges[e].0;
            while j < order.len() && entries[order[j]].0 < *k {
                j += 1;
            }
            match order.get(j) {
                Some(&x) if entries[x].0 == *k => found[e] = &entries[x].1,
                _ => return Err(StructureError::at_root(StructureErrorKind::MissingKey(k.clone())).into()),
            }
        }
        if entries.len() != edges.len() {
            let extra = entries.iter().find(|(k, _)| by_key.binary_search_by(|&e| edges[e].0.cmp(k)).is_err());
            if let Some((k, _)) = extra {
                return Err(StructureError::at_root(StructureErrorKind::UnexpectedKey(k.clone())).into());
            }
        }
        visitor.open_dict(edges.len()).map_err(VisitError::Visitor)?;
        for ((k, child), v) in edges.iter().zip(found) {
            self.walk(*child, v, visitor).map_err(|e| e.within(PathKey::Name(k.clone())))?;
        }
        visitor.close().map_err(VisitError::Visitor)
    }

    /// Builds the value of the structure from `leaves` in raw order (moved,
    /// never copied). Sequences become lists; gaps `None`.
    pub fn unflatten<'a>(&self, leaves: Vec<Value<'a>>) -> Result<Value<'a>, StructureError> {
        if leaves.len() != self.leaf_count() {
            return Err(StructureError::at_root(StructureErrorKind::LeafCount {
                expected: self.leaf_count(),
                got: leaves.len(),
            }));
        }
        if self.nodes.is_empty() {
            return Ok(Value::None);
        }
        Ok(if self.in_order {
            self.build_from(0, &mut InOrder(leaves.into_iter()))
        } else {
            let mut leaves = leaves;
            self.build_from(0, &mut BySlot(&mut leaves))
        })
    }

    /// Builds a value of the structure with the parts `source` gives:
    /// sequences (as [`PlanSource::sequence`] makes them, lists by
    /// default; gaps `None`) and dicts (in the plan's key order) around
    /// the leaves it returns. An empty side builds `None`. (A source that
    /// can fail keeps its error; see [`PlanSource`].)
    ///
    /// ```
    /// use fnabi_core::structure::{Plan, PlanSource, Structure};
    /// use fnabi_core::Value;
    /// // {"b": [$0, $1], "a": $2}, leaves from a counter, sequences as tuples
    /// struct Count(i64);
    /// impl<'a> PlanSource<'a> for Count {
    ///     fn leaf(&mut self, slot: u32) -> Value<'a> { self.0 += 1; Value::Int(10 * self.0 + slot as i64) }
    ///     fn sequence(&mut self, items: Vec<Value<'a>>) -> Value<'a> { Value::Tuple(items) }
    /// }
    /// let s = Structure::Dict(vec![
    ///     ("b".into(), Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))])),
    ///     ("a".into(), Structure::Leaf(2)),
    /// ]);
    /// let plan = Plan::with_dict_order(&s).unwrap();
    /// let v = plan.build_with(&mut Count(0));
    /// let want = Value::dict([("b", Value::Tuple(vec![Value::Int(10), Value::Int(21)])), ("a", Value::Int(32))]);
    /// assert_eq!(v, want);
    /// ```
    pub fn build_with<'a, S: PlanSource<'a>>(&self, source: &mut S) -> Value<'a> {
        if self.nodes.is_empty() {
            return Value::None;
        }
        self.build_from(0, source)
    }

    fn build_from<'a, S: PlanSource<'a>>(&self, id: u32, source: &mut S) -> Value<'a> {
        match self.nodes[id as usize] {
            Node::Leaf { slot } => source.leaf(slot),
            Node::Run { len, first, .. } => {
                source.open_seq(len as usize);
                let items = source.leaves(first, len);
                source.close();
                source.sequence(items)
            }
            Node::Seq { start, count, len } => {
                source.open_seq(len as usize);
                let edges = &self.seq_edges[start as usize..(start + count) as usize];
                let mut items = Vec::with_capacity(len as usize);
                for &(k, child) in edges {
                    while items.len() < k as usize {
                        source.gap();
                        items.push(Value::None);
                    }
                    items.push(self.build_from(child, source));
                }
                while items.len() < len as usize {
                    source.gap();
                    items.push(Value::None);
                }
                source.close();
                source.sequence(items)
            }
            Node::Dict { start, count, .. } => {
                source.open_dict(count as usize);
                let edges = &self.dict_edges[start as usize..(start + count) as usize];
                let mut d = Dict::with_capacity(count as usize);
                for (k, child) in edges {
                    d.push_unique(k.clone(), self.build_from(*child, source));
                }
                source.close();
                Value::Dict(d)
            }
        }
    }
}

/// A node as the serde bridge sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum NodeRef<'p> {
    Leaf(u32),
    Seq { edges: &'p [(u32, u32)], len: u32 },
    Dict { edges: &'p [(Key, u32)] },
}

impl Plan {
    /// The root node's id (`None` for an empty side).
    pub(crate) fn root(&self) -> Option<u32> {
        if self.nodes.is_empty() { None } else { Some(0) }
    }

    /// Node `id`.
    pub(crate) fn node(&self, id: u32) -> NodeRef<'_> {
        match self.nodes[id as usize] {
            Node::Leaf { slot } => NodeRef::Leaf(slot),
            Node::Seq { start, count, len } => {
                NodeRef::Seq { edges: &self.seq_edges[start as usize..(start + count) as usize], len }
            }
            Node::Run { start, len, .. } => {
                NodeRef::Seq { edges: &self.seq_edges[start as usize..(start + len) as usize], len }
            }
            Node::Dict { start, count, .. } => {
                NodeRef::Dict { edges: &self.dict_edges[start as usize..(start + count) as usize] }
            }
        }
    }

    /// Builds the value of node `id`'s subtree, taking its leaves out of `leaves` (by slot).
    pub(crate) fn build_subtree<'a>(&self, id: u32, leaves: &mut [Value<'a>]) -> Value<'a> {
        self.build_from(id, &mut BySlot(leaves))
    }
}

/// `items` has the `len` items of a sequence.
fn check_len(items: &[Value<'_>], len: u32) -> Result<(), StructureError> {
    if items.len() != len as usize {
        return Err(StructureError::at_root(StructureErrorKind::Length { has: items.len(), needs: len as usize }));
    }
    Ok(())
}

/// The items of `v`, a list or tuple of `len` items.
fn seq_items<'v, 'a>(v: &'v Value<'a>, len: u32) -> Result<&'v [Value<'a>], StructureError> {
    let items = match v {
        Value::List(x) | Value::Tuple(x) => x,
        _ => return Err(super::expected_error("a list or tuple", v)),
    };
    check_len(items, len)?;
    Ok(items)
}

#[cfg(test)]
mod tests;
