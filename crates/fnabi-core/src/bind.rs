//! Binding a call's positional and keyword arguments to its parameters: the
//! one binder of every backend. A structure root (`sip`: a leaf, a sequence,
//! a dict) and an `iree.abi` parameter list both describe their parameters
//! through [`Parameters`]; [`bind_arguments`] does the rest, with the same
//! rules and the same [`CallError`]s for both.
//!
//! ```
//! use fnabi_core::bind::{Parameters, bind_arguments};
//! use fnabi_core::error::{CallError, CallErrorKind};
//! use fnabi_core::Value;
//!
//! /// `f(x, y=None)`: `x` required, `y` optional.
//! struct F;
//! impl Parameters for F {
//!     fn len(&self) -> usize { 2 }
//!     fn name(&self, i: usize) -> Option<&str> { ["x", "y"].get(i).copied() }
//!     fn optional(&self, i: usize) -> bool { i == 1 }
//! }
//! let bound = bind_arguments(&F, vec![Value::Int(1)], [("y", Value::Int(2))]).unwrap();
//! assert_eq!(bound, [Value::Int(1), Value::Int(2)]);
//! assert_eq!(bind_arguments(&F, vec![], [("y", Value::Int(2))]).unwrap_err().to_string(), "missing argument \"x\" (argument 0)");
//! assert_eq!(bind_arguments(&F, vec![Value::Int(1)], [("z", Value::None)]).unwrap_err(), CallError::argument(CallErrorKind::UnknownKeyword("z".into())));
//! ```

use crate::error::{CallError, CallErrorKind};
use crate::value::{Dict, Key, Value};
use fnabi_abi::structure::{IndexPath, PathKey};

/// The parameters of a call, as the binder sees them.
///
/// A parameter list whose last parameter collects the other keywords (a
/// Python `**kwargs`, the `sdict_kwargs` record):
///
/// ```
/// use fnabi_core::bind::{bind_arguments, Parameters};
/// use fnabi_core::{Dict, Value};
/// /// `g(a, **rest)`
/// struct G;
/// impl Parameters for G {
///     fn len(&self) -> usize { 2 }
///     fn name(&self, i: usize) -> Option<&str> { (i == 0).then_some("a") }
///     fn optional(&self, _: usize) -> bool { false }
///     fn rest(&self) -> bool { true }
/// }
/// assert_eq!(G.find("a"), Some(0));
/// let bound = bind_arguments(&G, vec![], [("b", Value::Int(2)), ("a", Value::Int(1))]).unwrap();
/// let rest: Dict = [("b", Value::Int(2))].into_iter().collect();
/// assert_eq!(bound, [Value::Int(1), Value::Dict(rest)]);
/// // the collector takes no position
/// assert!(bind_arguments(&G, vec![Value::Int(1), Value::Int(2)], [("c", Value::None)]).is_err());
/// ```
pub trait Parameters {
    /// How many there are (with the keyword collector of [`rest`](Parameters::rest)).
    fn len(&self) -> usize;

    /// True when there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keyword that names parameter `i` (`None`: positional only).
    fn name(&self, i: usize) -> Option<&str>;

    /// Whether parameter `i` may be left out (it is then `None`).
    fn optional(&self, i: usize) -> bool;

    /// The parameter a keyword names. The default scans the names; a list
    /// sorted by name may binary-search.
    fn find(&self, keyword: &str) -> Option<usize> {
        (0..self.len()).find(|&i| self.name(i) == Some(keyword))
    }

    /// True when the last parameter collects, as a dict, every keyword that
    /// names no parameter (`sdict_kwargs`); it takes no position.
    fn rest(&self) -> bool {
        false
    }
}

/// Binds `positional` (in order) and `keywords` to `params`: one value per
/// parameter, in parameter order.
///
/// A named parameter takes a keyword or a position; a parameter gets one
/// value only; an optional parameter that gets nothing is `None`. Errors:
/// [`CallErrorKind::TooManyPositional`], [`CallErrorKind::UnknownKeyword`],
/// [`CallErrorKind::DuplicateKeyword`], [`CallErrorKind::MissingArgument`]
/// (at the path the missing argument would have had: its keyword, else its position).
pub fn bind_arguments<'a, P: Parameters + ?Sized, K: Into<Key>>(
    params: &P,
    positional: Vec<Value<'a>>,
    keywords: impl IntoIterator<Item = (K, Value<'a>)>,
) -> Result<Vec<Value<'a>>, CallError> {
    let n = params.len();
    let rest = params.rest() && n > 0;
    let n_pos_max = if rest { n - 1 } else { n };
    if positional.len() > n_pos_max {
        return Err(CallError::argument(CallErrorKind::TooManyPositional { max: n_pos_max, got: positional.len() }));
    }
    let mut keywords = keywords.into_iter().peekable();
    if positional.len() == n && !rest && keywords.peek().is_none() {
        // Every parameter given by position, no keywords: bound as given.
        return Ok(positional);
    }
    let mut slots: Vec<Option<Value<'a>>> = positional.into_iter().map(Some).collect();
    slots.resize_with(n, || None);
    let mut extra: Option<Dict<'a>> = rest.then(Dict::new);
    for (k, v) in keywords {
        let k: Key = k.into();
        match params.find(&k).filter(|&i| !(rest && i == n - 1)) {
            Some(i) => {
                if slots[i].is_some() {
                    return Err(CallError::argument(CallErrorKind::DuplicateKeyword(k)));
                }
                slots[i] = Some(v);
            }
            None => match &mut extra {
                Some(d) => {
                    if d.get(&k).is_some() {
                        return Err(CallError::argument(CallErrorKind::DuplicateKeyword(k)));
                    }
                    d.push_unique(k, v);
                }
                None => {
                    let e = CallError::argument(CallErrorKind::UnknownKeyword(k));
                    return Err(if (0..n).all(|i| params.name(i).is_none()) {
                        e.with_note("the parameters have no names: pass the arguments by position")
                    } else {
                        e
                    });
                }
            },
        }
    }
    if let Some(d) = extra {
        slots[n - 1] = Some(Value::Dict(d));
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Some(v) => Ok(v),
            None if params.optional(i) => Ok(Value::None),
            None => Err(missing(i, params.name(i))),
        })
        .collect()
}

#[cold]
fn missing(index: usize, name: Option<&str>) -> CallError {
    let key = match name {
        Some(n) => PathKey::Name(n.into()),
        None => PathKey::Index(index),
    };
    CallError::argument(CallErrorKind::MissingArgument { index, name: name.map(Key::from) }).at(IndexPath(vec![key]))
}
