//! Host values against structures: [`Plan`], the compiled form of a
//! [`Structure`] that flattens values into leaves in raw order and
//! unflattens leaves into values, and [`StructureExt`], the one-off
//! conveniences over it (flatten, unflatten, bind a call's positional and
//! keyword arguments). The tree itself, its index paths and errors are the
//! ABI layer's (`fnabi_abi::structure`), re-exported here.
//!
//! ```
//! use fnabi_core::structure::{PathKey, Structure, StructureExt};
//! use fnabi_core::Value;
//! let s = Structure::Sequence(vec![(0, Structure::Dict(vec![("foo".into(), Structure::Leaf(0))]))]);
//! let v = Value::List(vec![Value::List(vec![])]);
//! let e = s.flatten(&v).unwrap_err();
//! assert_eq!(e.to_string(), "at [0]: expected a dict, got a list");
//! assert_eq!(e.path().keys(), &[PathKey::Index(0)]);
//! ```

pub(crate) mod plan;

pub use fnabi_abi::structure::*;
pub use plan::{Plan, PlanSource, PlanVisitor, VisitError};

use crate::bind::{Parameters, bind_arguments};
use crate::error::CallError;
use crate::value::{Dict, Value};

/// A "wrong kind of value" error at the root: `expected a dict, got a list`.
#[cold]
pub(crate) fn expected_error(expected: &'static str, got: &Value<'_>) -> StructureError {
    StructureError::at_root(StructureErrorKind::Expected { expected, got: kind_with_article(got) })
}

/// A value's kind with an article, for messages: `a list`, `an array`, `None`.
pub fn kind_with_article(v: &Value<'_>) -> &'static str {
    match v {
        Value::None => "None",
        Value::Bool(_) => "a bool",
        Value::Int(_) => "an int",
        Value::Float(_) => "a float",
        Value::Str(_) => "a str",
        Value::Bytes(_) => "bytes",
        Value::List(_) => "a list",
        Value::Tuple(_) => "a tuple",
        Value::Dict(_) => "a dict",
        Value::Array(_) => "an array",
    }
}

/// One-off operations of a [`Structure`] on host values (each compiles a
/// [`Plan`]: compile one yourself to flatten or unflatten many values).
///
/// ```
/// use fnabi_core::structure::{Structure, StructureExt};
/// use fnabi_core::Value;
/// // ($1, {"w": $0}): leaves come out in raw order, $0 first
/// let s = Structure::Sequence(vec![
///     (0, Structure::Leaf(1)),
///     (1, Structure::Dict(vec![("w".into(), Structure::Leaf(0))])),
/// ]);
/// let v = Value::Tuple(vec![Value::Int(10), Value::dict([("w", Value::Int(20))])]);
/// let leaves: Vec<Value> = s.flatten(&v).unwrap().into_iter().cloned().collect();
/// assert_eq!(leaves, [Value::Int(20), Value::Int(10)]);
/// let back = s.unflatten(leaves).unwrap();
/// assert_eq!(back.get("w"), None); // the root is a sequence
/// assert_eq!(back.as_sequence().unwrap()[1].get("w"), Some(&Value::Int(20)));
/// assert!(s.flatten(&Value::Int(1)).is_err()); // not a sequence
/// ```
pub trait StructureExt {
    /// Compiles this structure into a [`Plan`] for repeated flatten/unflatten.
    fn plan(&self) -> Result<Plan, StructureError>;
    /// The leaves of `value` in raw order (see [`Plan::flatten`]).
    fn flatten<'v, 'a>(&self, value: &'v Value<'a>) -> Result<Vec<&'v Value<'a>>, StructureError>;
    /// The value built from `leaves` in raw order (see [`Plan::unflatten`]).
    fn unflatten<'a>(&self, leaves: Vec<Value<'a>>) -> Result<Value<'a>, StructureError>;
    /// Binds a call's arguments into the value this structure flattens.
    ///
    /// - a leaf root takes exactly one positional argument;
    /// - a sequence root takes positional arguments only: argument `i` is
    ///   slot `i` (a trailing gap slot may be left out and reads `None`); the
    ///   result is a tuple;
    /// - a dict root takes keyword arguments by key, and positional arguments
    ///   in key order (ascending by bytes: the natural order of a dict in
    ///   the `iree.abi` convention); a key given both ways is an error. The
    ///   result is a dict in key order.
    ///
    /// ```
    /// use fnabi_core::structure::{Structure, StructureExt};
    /// use fnabi_core::{Dict, Value};
    /// let s = Structure::Dict(vec![("x".into(), Structure::Leaf(0)), ("y".into(), Structure::Leaf(1))]);
    /// let kwargs: Dict = [("y", Value::Int(2))].into_iter().collect();
    /// let v = s.bind(vec![Value::Int(1)], kwargs).unwrap();
    /// assert_eq!(v, Value::dict([("x", Value::Int(1)), ("y", Value::Int(2))]));
    /// let e = s.bind(vec![], Dict::new()).unwrap_err();
    /// assert_eq!(e.to_string(), "missing argument \"x\" (argument 0)");
    /// ```
    fn bind<'a>(&self, args: Vec<Value<'a>>, kwargs: Dict<'a>) -> Result<Value<'a>, CallError>;
}

impl StructureExt for Structure {
    fn plan(&self) -> Result<Plan, StructureError> {
        Plan::new(Some(self))
    }

    fn flatten<'v, 'a>(&self, value: &'v Value<'a>) -> Result<Vec<&'v Value<'a>>, StructureError> {
        self.plan()?.flatten(value)
    }

    fn unflatten<'a>(&self, leaves: Vec<Value<'a>>) -> Result<Value<'a>, StructureError> {
        self.plan()?.unflatten(leaves)
    }

    fn bind<'a>(&self, args: Vec<Value<'a>>, kwargs: Dict<'a>) -> Result<Value<'a>, CallError> {
        let mut bound = bind_arguments(&RootParameters(self), args, kwargs)?;
        Ok(match self {
            Structure::Leaf(_) => bound.pop().unwrap_or_default(),
            Structure::Sequence(_) => Value::Tuple(bound),
            Structure::Dict(children) => {
                let mut d = Dict::with_capacity(children.len());
                for ((k, _), v) in children.iter().zip(bound) {
                    d.push_unique(k.clone(), v);
                }
                Value::Dict(d)
            }
        })
    }
}

/// The parameters of a structure root: a leaf takes one positional
/// argument; a sequence takes its slots by position (a gap slot may be left
/// out); a dict takes its keys by keyword or, in key order, by position.
struct RootParameters<'s>(&'s Structure);

impl Parameters for RootParameters<'_> {
    fn len(&self) -> usize {
        match self.0 {
            Structure::Leaf(_) => 1,
            Structure::Sequence(c) => c.last().map_or(0, |(k, _)| k + 1),
            Structure::Dict(c) => c.len(),
        }
    }

    fn name(&self, i: usize) -> Option<&str> {
        match self.0 {
            Structure::Dict(c) => c.get(i).map(|(k, _)| &**k),
            _ => None,
        }
    }

    fn optional(&self, i: usize) -> bool {
        // A gap of a sequence (no child at that key) reads None.
        matches!(self.0, Structure::Sequence(c) if c.binary_search_by_key(&i, |(k, _)| *k).is_err())
    }

    fn find(&self, keyword: &str) -> Option<usize> {
        match self.0 {
            Structure::Dict(c) => c.binary_search_by(|(k, _)| (**k).cmp(keyword)).ok(),
            _ => None,
        }
    }
}
