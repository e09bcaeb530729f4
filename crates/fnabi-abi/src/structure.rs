//! [`Structure`]: the one tree model that maps a function's flat, raw
//! argument (or result) list onto nested sequences and dicts. SIP
//! signatures, `iree.abi` reflection records and plain positional calls all
//! reduce to it. Each leaf holds a raw index; the keys on the way to a leaf
//! form its [`IndexPath`].
//!
//! This module also owns [`StructureBuilder`] (from `(raw index, path)`
//! pairs, strict about conflicts), [`StructureError`] (every error names an
//! index path), `fnabi_core`'s `Structure::bind` (a call's positional and keyword
//! arguments), and its `Plan`, the compiled form that flattens values into
//! leaves in raw order and unflattens leaves into values. Gaps in sequence
//! keys are slots that read and write `None`. Depth is bounded by
//! [`MAX_DEPTH`].
//!
//! ```
//! use fnabi_abi::structure::{IndexPath, PathKey, Structure};
//! // {"a": [$0, $1], "b": $2}
//! let s = Structure::Dict(vec![
//!     ("a".into(), Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))])),
//!     ("b".into(), Structure::Leaf(2)),
//! ]);
//! let leaves: Vec<(String, usize)> = s.leaves().map(|(p, i)| (p.to_string(), i)).collect();
//! assert_eq!(leaves, [("[\"a\"][0]".to_string(), 0), ("[\"a\"][1]".to_string(), 1), ("[\"b\"]".to_string(), 2)]);
//! assert_eq!(IndexPath::from(vec![PathKey::Index(1), PathKey::Name("x".into())]).to_string(), "[1][\"x\"]");
//! ```
use crate::limits::{MAX_DEPTH, MAX_GAP_SLOTS};

use std::fmt;

/// A dict key, as structures, index paths and host dicts hold it: up to 23
/// bytes in place, a longer one shared behind a reference count. Making
/// or cloning a short key never allocates and touches no counter (keys
/// are names: `bias`, `layer_12`); cloning a long one is a count increment.
pub type Key = smol_str::SmolStr;

/// A node of a structure tree.
///
/// Invariants (kept by every producer in this crate): sequence keys are
/// strictly ascending (gaps allowed), dict keys strictly ascending by bytes,
/// and each raw index appears in at most one leaf.
///
/// ```
/// use fnabi_abi::structure::Structure;
/// // [$0, _, {"k": $1}]: slot 1 is a gap
/// let s = Structure::Sequence(vec![
///     (0, Structure::Leaf(0)),
///     (2, Structure::Dict(vec![("k".into(), Structure::Leaf(1))])),
/// ]);
/// assert_eq!(s.leaf_count(), 2);
/// assert!(s.validate().is_ok());
/// let paths: Vec<String> = s.leaves().map(|(p, _)| p.to_string()).collect();
/// assert_eq!(paths, ["[0]", "[2][\"k\"]"]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Structure {
    /// A raw argument/result index.
    Leaf(usize),
    /// Integer-keyed children.
    Sequence(Vec<(usize, Structure)>),
    /// String-keyed children.
    Dict(Vec<(Key, Structure)>),
}

/// One step of an index path.
///
/// ```
/// use fnabi_abi::structure::PathKey;
/// assert_eq!(PathKey::Index(3).to_string(), "[3]");
/// assert_eq!(PathKey::Name("w".into()).to_string(), "[\"w\"]");
/// assert!(PathKey::Index(9) < PathKey::Name("a".into())); // indices sort first
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathKey {
    /// A sequence index.
    Index(usize),
    /// A dict key.
    Name(Key),
}

impl fmt::Display for PathKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathKey::Index(i) => write!(f, "[{i}]"),
            PathKey::Name(k) => write!(f, "[{k:?}]"),
        }
    }
}

/// The keys from the root to a node, printed like Python subscripts:
/// `[0]["foo"]` (the root is `[]`... printed as the empty string).
///
/// ```
/// use fnabi_abi::structure::{IndexPath, PathKey};
/// assert_eq!(IndexPath::root().to_string(), "");
/// let p = IndexPath(vec![PathKey::Name("layers".into()), PathKey::Index(0)]);
/// assert_eq!(p.to_string(), "[\"layers\"][0]");
/// assert_eq!(p.keys().len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IndexPath(pub Vec<PathKey>);

impl IndexPath {
    /// The root path.
    pub fn root() -> Self {
        IndexPath(Vec::new())
    }

    /// The keys.
    pub fn keys(&self) -> &[PathKey] {
        &self.0
    }
}

impl From<Vec<PathKey>> for IndexPath {
    fn from(v: Vec<PathKey>) -> Self {
        IndexPath(v)
    }
}

impl fmt::Display for IndexPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|k| k.fmt(f))
    }
}

impl Structure {
    /// Every leaf with its index path, depth-first in key order.
    pub fn leaves(&self) -> impl Iterator<Item = (IndexPath, usize)> + '_ {
        let mut out = Vec::new();
        let mut path = Vec::new();
        collect_leaves(self, &mut path, &mut out);
        out.into_iter()
    }

    /// Number of leaves.
    pub fn leaf_count(&self) -> usize {
        match self {
            Structure::Leaf(_) => 1,
            Structure::Sequence(c) => c.iter().map(|(_, s)| s.leaf_count()).sum(),
            Structure::Dict(c) => c.iter().map(|(_, s)| s.leaf_count()).sum(),
        }
    }
}

fn collect_leaves(s: &Structure, path: &mut Vec<PathKey>, out: &mut Vec<(IndexPath, usize)>) {
    match s {
        Structure::Leaf(i) => out.push((IndexPath(path.clone()), *i)),
        Structure::Sequence(c) => {
            for (k, child) in c {
                path.push(PathKey::Index(*k));
                collect_leaves(child, path, out);
                path.pop();
            }
        }
        Structure::Dict(c) => {
            for (k, child) in c {
                path.push(PathKey::Name(k.clone()));
                collect_leaves(child, path, out);
                path.pop();
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// A value that does not fit a structure, or a structure that is malformed,
/// at an index path.
///
/// ```
/// use fnabi_abi::structure::{PathKey, Structure};
/// let s = Structure::Sequence(vec![(0, Structure::Dict(vec![("b".into(), Structure::Leaf(0)), ("a".into(), Structure::Leaf(1))]))]);
/// let e = s.validate().unwrap_err();
/// assert_eq!(e.to_string(), "at [0]: keys are not strictly ascending");
/// assert_eq!(e.path().keys(), &[PathKey::Index(0)]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructureError {
    path: IndexPath,
    kind: StructureErrorKind,
}

/// What went wrong at the path of a [`StructureError`].
///
/// ```
/// use fnabi_abi::structure::{Structure, StructureErrorKind};
/// // the same raw index in two leaves
/// let s = Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(0))]);
/// let e = s.validate().unwrap_err();
/// assert!(!matches!(e.kind(), StructureErrorKind::UnorderedKeys));
/// // keys out of order
/// let s = Structure::Sequence(vec![(1, Structure::Leaf(0)), (0, Structure::Leaf(1))]);
/// assert_eq!(s.validate().unwrap_err().kind(), &StructureErrorKind::UnorderedKeys);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StructureErrorKind {
    /// A value of the wrong kind: `expected a dict, got a list`.
    Expected {
        /// What the structure needs (`"a dict"`, `"a list or tuple"`).
        expected: &'static str,
        /// What was found (`"a list"`, `"an array"`, `"None"`).
        got: &'static str,
    },
    /// A dict lacks a key of the structure.
    MissingKey(Key),
    /// A dict has a key the structure does not.
    UnexpectedKey(Key),
    /// A sequence of the wrong length (the structure's length is its largest key + 1).
    Length {
        /// Items in the value.
        has: usize,
        /// Items the structure needs.
        needs: usize,
    },
    /// A gap slot of the structure (a sequence index with no key) holds
    /// something other than `None`.
    GapNotNone {
        /// What it holds.
        got: &'static str,
    },
    /// `unflatten` got the wrong number of leaves.
    LeafCount {
        /// The structure's leaf count.
        expected: usize,
        /// The number given.
        got: usize,
    },
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep(usize),
    /// More gap slots than [`MAX_GAP_SLOTS`].
    TooManyGaps(usize),
    /// The keys of a sequence or dict are not strictly ascending.
    UnorderedKeys,
    /// A raw index used by two leaves of one side.
    DuplicateRawIndex {
        /// The raw index.
        raw: usize,
        /// The path of the other leaf.
        other: IndexPath,
    },
    /// A negative raw index.
    NegativeRawIndex(i64),
    /// A raw index or sequence key that a signature's 32-bit integer cannot hold.
    IndexTooLarge {
        /// `"raw index"` or `"sequence key"`.
        what: &'static str,
        /// The value.
        value: u64,
    },
    /// A path that passes through a leaf.
    PassesThroughLeaf {
        /// The leaf's path.
        leaf: IndexPath,
    },
    /// A path that ends on a struct (a node with leaves under it).
    EndsOnStruct {
        /// A leaf under that struct.
        leaf: IndexPath,
    },
    /// A path that is already a leaf.
    SamePath {
        /// The raw index of the existing leaf.
        raw: usize,
    },
    /// A path whose key kind (integer or string) differs from another
    /// path's at the same level.
    MixedKeys {
        /// A leaf whose path has the other kind of key there.
        other: IndexPath,
    },
    /// A message from serde (a `Serialize`/`Deserialize` implementation).
    Custom(String),
}

impl StructureError {
    /// An error of `kind` at `path`.
    pub fn new(path: IndexPath, kind: StructureErrorKind) -> Self {
        StructureError { path, kind }
    }

    /// An error of `kind` at the root.
    pub fn at_root(kind: StructureErrorKind) -> Self {
        StructureError { path: IndexPath::root(), kind }
    }

    /// Where: the index path of the value (or path) at fault.
    pub fn path(&self) -> &IndexPath {
        &self.path
    }

    /// What went wrong.
    pub fn kind(&self) -> &StructureErrorKind {
        &self.kind
    }

    /// The same error one level down: `key` is put in front of the path
    /// (errors are built as the walk unwinds, so the happy path keeps no path).
    pub fn within(mut self, key: PathKey) -> Self {
        self.path.0.insert(0, key);
        self
    }
}

/// `the root` for the empty path, else the path.
struct At<'a>(&'a IndexPath);

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.0.is_empty() { f.write_str("the root") } else { self.0.fmt(f) }
    }
}

/// `[]` for the empty path, else the path.
struct PathText<'a>(&'a IndexPath);

impl fmt::Display for PathText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.0.is_empty() { f.write_str("[]") } else { self.0.fmt(f) }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl fmt::Display for StructureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use StructureErrorKind::*;
        let at = At(&self.path);
        let path = PathText(&self.path);
        match &self.kind {
            Expected { expected, got } => write!(f, "at {at}: expected {expected}, got {got}"),
            MissingKey(k) => write!(f, "missing key {k:?} at {at}"),
            UnexpectedKey(k) => write!(f, "unexpected key {k:?} at {at}"),
            Length { has, needs } => write!(f, "sequence at {at} has {}, needs {needs}", plural(*has, "item", "items")),
            GapNotNone { got } => write!(f, "at {at}: expected None (a gap of the structure), got {got}"),
            LeafCount { expected, got } => {
                write!(f, "expected {}, got {got}", plural(*expected, "leaf", "leaves"))
            }
            TooDeep(limit) => write!(f, "at {at}: nested deeper than {limit} levels"),
            TooManyGaps(limit) => write!(f, "at {at}: more than {limit} gap slots in sequences"),
            UnorderedKeys => write!(f, "at {at}: keys are not strictly ascending"),
            DuplicateRawIndex { raw, other } => {
                write!(f, "raw index {raw} is used by both {} and {path}", PathText(other))
            }
            NegativeRawIndex(i) => write!(f, "at {at}: raw index {i} is negative"),
            IndexTooLarge { what, value } => {
                write!(f, "at {at}: {what} {value} does not fit in a signature's 32-bit integer")
            }
            PassesThroughLeaf { leaf } => write!(f, "path {path} passes through the leaf at {}", PathText(leaf)),
            EndsOnStruct { leaf } => {
                write!(f, "path {path} ends on a struct that holds the leaf at {}", PathText(leaf))
            }
            SamePath { raw } => write!(f, "path {path} is already the leaf of raw index {raw}"),
            MixedKeys { other } => {
                write!(f, "path {path} mixes integer and string keys at one level with the leaf at {}", PathText(other))
            }
            Custom(msg) if self.path.0.is_empty() => f.write_str(msg),
            Custom(msg) => write!(f, "at {at}: {msg}"),
        }
    }
}

impl std::error::Error for StructureError {}

/// Serde implementations report their own messages as [`StructureErrorKind::Custom`]
/// (fnabi's serde bridge flattens and rebuilds values by a structure).
impl serde::ser::Error for StructureError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        StructureError::at_root(StructureErrorKind::Custom(msg.to_string()))
    }
}

impl serde::de::Error for StructureError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        StructureError::at_root(StructureErrorKind::Custom(msg.to_string()))
    }
}

// ---------------------------------------------------------------------------
// Building from (raw index, path) pairs
// ---------------------------------------------------------------------------

/// Builds a [`Structure`] from `(raw index, index path)` pairs, rejecting
/// every conflict with an error that names both paths.
///
/// The reference mangler silently keeps one leaf when two paths collide;
/// this builder refuses: a path may not end on or pass through another leaf,
/// nor end on a struct; one level never mixes integer and string keys; a raw
/// index appears once. A failed [`insert`](StructureBuilder::insert) leaves the
/// builder unchanged.
///
/// ```
/// use fnabi_abi::structure::{PathKey, StructureBuilder};
/// let mut b = StructureBuilder::new();
/// b.insert(0, &[PathKey::Index(0), "foo".into()]).unwrap();
/// b.insert(1, &[PathKey::Index(0), "bar".into()]).unwrap();
/// b.insert(2, &[PathKey::Index(1)]).unwrap();
/// let e = b.insert(3, &[PathKey::Index(1), PathKey::Index(0)]).unwrap_err();
/// assert_eq!(e.to_string(), "path [1][0] passes through the leaf at [1]");
/// let s = b.finish().unwrap();
/// assert_eq!(s.leaf_count(), 3);
/// ```
#[derive(Clone, Debug, Default)]
pub struct StructureBuilder {
    root: BNode,
    raws: std::collections::BTreeSet<usize>,
}

#[derive(Clone, Debug, Default)]
enum BNode {
    #[default]
    Empty,
    Leaf(usize),
    Seq(std::collections::BTreeMap<usize, BNode>),
    Dict(std::collections::BTreeMap<Key, BNode>),
}

impl BNode {
    /// The path (below this node) of its first leaf.
    fn first_leaf(&self, prefix: &[PathKey]) -> IndexPath {
        let mut path = prefix.to_vec();
        let mut n = self;
        loop {
            match n {
                BNode::Seq(m) => match m.iter().next() {
                    Some((k, c)) => {
                        path.push(PathKey::Index(*k));
                        n = c;
                    }
                    None => break,
                },
                BNode::Dict(m) => match m.iter().next() {
                    Some((k, c)) => {
                        path.push(PathKey::Name(k.clone()));
                        n = c;
                    }
                    None => break,
                },
                _ => break,
            }
        }
        IndexPath(path)
    }

    fn find_raw(&self, raw: usize, path: &mut Vec<PathKey>) -> bool {
        match self {
            BNode::Empty => false,
            BNode::Leaf(r) => *r == raw,
            BNode::Seq(m) => m.iter().any(|(k, c)| {
                path.push(PathKey::Index(*k));
                c.find_raw(raw, path) || {
                    path.pop();
                    false
                }
            }),
            BNode::Dict(m) => m.iter().any(|(k, c)| {
                path.push(PathKey::Name(k.clone()));
                c.find_raw(raw, path) || {
                    path.pop();
                    false
                }
            }),
        }
    }

    fn into_structure(self) -> Option<Structure> {
        match self {
            BNode::Empty => None,
            BNode::Leaf(r) => Some(Structure::Leaf(r)),
            BNode::Seq(m) => Some(Structure::Sequence(
                m.into_iter().filter_map(|(k, c)| c.into_structure().map(|s| (k, s))).collect(),
            )),
            BNode::Dict(m) => {
                Some(Structure::Dict(m.into_iter().filter_map(|(k, c)| c.into_structure().map(|s| (k, s))).collect()))
            }
        }
    }
}

impl StructureBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts the leaf `raw_index` at `path`.
    pub fn insert(&mut self, raw_index: usize, path: &[PathKey]) -> Result<&mut Self, StructureError> {
        let fail = |kind| Err(StructureError::new(IndexPath(path.to_vec()), kind));
        if path.len() > MAX_DEPTH {
            return fail(StructureErrorKind::TooDeep(MAX_DEPTH));
        }
        if self.raws.contains(&raw_index) {
            let mut other = Vec::new();
            self.root.find_raw(raw_index, &mut other);
            return fail(StructureErrorKind::DuplicateRawIndex { raw: raw_index, other: IndexPath(other) });
        }
        // Check everything first, so that a failed insert changes nothing.
        let mut node = &self.root;
        for (i, key) in path.iter().enumerate() {
            let next = match (node, key) {
                (BNode::Empty, _) => None,
                (BNode::Leaf(_), _) => {
                    return fail(StructureErrorKind::PassesThroughLeaf { leaf: IndexPath(path[..i].to_vec()) });
                }
                (BNode::Seq(m), PathKey::Index(k)) => m.get(k),
                (BNode::Dict(m), PathKey::Name(k)) => m.get(k),
                (BNode::Seq(_) | BNode::Dict(_), _) => {
                    return fail(StructureErrorKind::MixedKeys { other: node.first_leaf(&path[..i]) });
                }
            };
            match next {
                Some(n) => node = n,
                None => {
                    node = &BNode::Empty;
                    break;
                }
            }
        }
        match node {
            BNode::Empty => {}
            BNode::Leaf(r) => return fail(StructureErrorKind::SamePath { raw: *r }),
            BNode::Seq(_) | BNode::Dict(_) => {
                return fail(StructureErrorKind::EndsOnStruct { leaf: node.first_leaf(path) });
            }
        }
        // Insert.
        let mut node = &mut self.root;
        for key in path {
            if matches!(node, BNode::Empty) {
                *node = match key {
                    PathKey::Index(_) => BNode::Seq(Default::default()),
                    PathKey::Name(_) => BNode::Dict(Default::default()),
                };
            }
            node = match (node, key) {
                (BNode::Seq(m), PathKey::Index(k)) => m.entry(*k).or_default(),
                (BNode::Dict(m), PathKey::Name(k)) => m.entry(k.clone()).or_default(),
                _ => unreachable!("checked above"),
            };
        }
        *node = BNode::Leaf(raw_index);
        self.raws.insert(raw_index);
        Ok(self)
    }

    /// True when no leaf was inserted.
    pub fn is_empty(&self) -> bool {
        self.raws.is_empty()
    }

    /// The structure (`None` when no leaf was inserted: an empty side).
    pub fn finish(self) -> Option<Structure> {
        self.root.into_structure()
    }
}

impl From<&str> for PathKey {
    fn from(s: &str) -> Self {
        PathKey::Name(s.into())
    }
}

impl From<usize> for PathKey {
    fn from(i: usize) -> Self {
        PathKey::Index(i)
    }
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

impl Structure {
    /// The depth: the number of keys on the longest path (0 for a leaf).
    /// Iterative, so any structure can be measured.
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut stack = vec![(self, 0usize)];
        while let Some((s, d)) = stack.pop() {
            max = max.max(d);
            match s {
                Structure::Leaf(_) => {}
                Structure::Sequence(c) => stack.extend(c.iter().map(|(_, s)| (s, d + 1))),
                Structure::Dict(c) => stack.extend(c.iter().map(|(_, s)| (s, d + 1))),
            }
        }
        max
    }
}

impl Structure {
    /// Checks the invariants every consumer relies on: nesting at most
    /// [`MAX_DEPTH`] deep, keys strictly ascending (integers; strings by
    /// bytes), at most [`MAX_GAP_SLOTS`] gap slots in all sequences, and each
    /// raw index in one leaf only. Errors name the index path at fault.
    ///
    /// ```
    /// use fnabi_abi::structure::{Structure, StructureErrorKind};
    /// let s = Structure::Sequence(vec![(1, Structure::Leaf(0)), (0, Structure::Leaf(1))]);
    /// assert_eq!(s.validate().unwrap_err().kind(), &StructureErrorKind::UnorderedKeys);
    /// ```
    pub fn validate(&self) -> Result<(), StructureError> {
        let mut raws = Vec::new();
        let mut gaps = 0usize;
        check_node(self, 0, &mut gaps, &mut raws)?;
        raws.sort_unstable();
        if let Some(w) = raws.windows(2).find(|w| w[0] == w[1]) {
            let raw = w[0];
            let mut paths = self.leaves().filter(|(_, r)| *r == raw).map(|(p, _)| p);
            let (first, second) = (paths.next().unwrap_or_default(), paths.next().unwrap_or_default());
            return Err(StructureError::new(second, StructureErrorKind::DuplicateRawIndex { raw, other: first }));
        }
        Ok(())
    }
}

/// Depth, key order and gap count of `s` and its subtree (pre-order, so a
/// node's own keys are checked before its children); collects raw indices.
fn check_node(s: &Structure, depth: usize, gaps: &mut usize, raws: &mut Vec<usize>) -> Result<(), StructureError> {
    if depth > MAX_DEPTH {
        return Err(StructureError::at_root(StructureErrorKind::TooDeep(MAX_DEPTH)));
    }
    match s {
        Structure::Leaf(raw) => raws.push(*raw),
        Structure::Sequence(children) => {
            if children.windows(2).any(|w| w[0].0 >= w[1].0) {
                return Err(StructureError::at_root(StructureErrorKind::UnorderedKeys));
            }
            let len = children.last().map_or(0, |(k, _)| k + 1);
            *gaps += len - children.len();
            if *gaps > MAX_GAP_SLOTS {
                return Err(StructureError::at_root(StructureErrorKind::TooManyGaps(MAX_GAP_SLOTS)));
            }
            for (k, child) in children {
                check_node(child, depth + 1, gaps, raws).map_err(|e| e.within(PathKey::Index(*k)))?;
            }
        }
        Structure::Dict(children) => {
            if children.windows(2).any(|w| *w[0].0 >= *w[1].0) {
                return Err(StructureError::at_root(StructureErrorKind::UnorderedKeys));
            }
            for (k, child) in children {
                check_node(child, depth + 1, gaps, raws).map_err(|e| e.within(PathKey::Name(k.clone())))?;
            }
        }
    }
    Ok(())
}
