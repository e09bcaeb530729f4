//! [`Structure`]: the one tree model that maps a function's flat, raw
//! argument (or result) list onto nested sequences and dicts. SIP
//! signatures, `iree.abi` reflection records and plain positional calls all
//! reduce to it. Each leaf holds a raw index; the keys on the way to a leaf
//! form its [`IndexPath`].
//!
//! ```
//! use fnabi::structure::{IndexPath, PathKey, Structure};
//! // {"a": [$0, $1], "b": $2}
//! let s = Structure::Dict(vec![
//!     ("a".into(), Structure::Sequence(vec![(0, Structure::Leaf(0)), (1, Structure::Leaf(1))])),
//!     ("b".into(), Structure::Leaf(2)),
//! ]);
//! let leaves: Vec<(String, usize)> = s.leaves().map(|(p, i)| (p.to_string(), i)).collect();
//! assert_eq!(leaves, [("[\"a\"][0]".to_string(), 0), ("[\"a\"][1]".to_string(), 1), ("[\"b\"]".to_string(), 2)]);
//! assert_eq!(IndexPath::from(vec![PathKey::Index(1), PathKey::Name("x".into())]).to_string(), "[1][\"x\"]");
//! ```

use crate::value::Key;
use std::fmt;

/// A node of a structure tree.
///
/// Invariants (kept by every producer in this crate): sequence keys are
/// strictly ascending (gaps allowed), dict keys strictly ascending by bytes,
/// and each raw index appears in at most one leaf.
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
