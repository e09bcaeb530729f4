//! Where a value is in a call, for errors: [`At`], a chain of borrowed
//! path segments on the stack, turned into a [`CallError`]'s side and
//! index path only when an error is reported; and how messages describe
//! host values.

use super::*;

#[derive(Clone, Copy)]
pub(super) enum Root {
    Arg(usize),
    Result(usize),
    Results,
    /// The arguments as a whole.
    Args,
    Value,
}

#[derive(Clone, Copy)]
pub(super) enum Seg<'p> {
    Root(&'p Root),
    Index(usize),
    Name(&'p str),
    /// Several steps at once (a leaf's path in a record plan).
    Keys(&'p [PathKey]),
}

/// A position inside a value, as a chain of borrowed segments on the stack
/// (formatted only when an error is reported).
#[derive(Clone, Copy)]
pub(super) struct At<'p> {
    parent: Option<&'p At<'p>>,
    seg: Seg<'p>,
    depth: usize,
}

impl<'p> At<'p> {
    pub(super) fn root(r: &'p Root) -> At<'p> {
        At { parent: None, seg: Seg::Root(r), depth: 0 }
    }

    pub(super) fn index<'q>(&'q self, i: usize) -> Result<At<'q>, Error> {
        self.child(Seg::Index(i))
    }

    pub(super) fn name<'q>(&'q self, k: &'q str) -> Result<At<'q>, Error> {
        self.child(Seg::Name(k))
    }

    /// The position `keys` below this one (deeper than the nesting limit
    /// allows only for paths no record has).
    pub(super) fn keys<'q>(&'q self, keys: &'q [PathKey]) -> At<'q> {
        At { parent: Some(self), seg: Seg::Keys(keys), depth: self.depth + keys.len() }
    }

    pub(super) fn child<'q>(&'q self, seg: Seg<'q>) -> Result<At<'q>, Error> {
        if self.depth + 1 >= MAX_DEPTH {
            return Err(self.err(CallErrorKind::Invalid(format!("values nest deeper than {MAX_DEPTH} levels"))));
        }
        Ok(At { parent: Some(self), seg, depth: self.depth + 1 })
    }

    /// Which values, and the index path: argument 0 `["x"][1]` is
    /// `(Argument, [0]["x"][1])`, result 1 is `(Result, [1])`.
    pub(super) fn place(&self) -> (CallSide, IndexPath) {
        let mut keys = Vec::with_capacity(self.depth + 1);
        let mut side = CallSide::Value;
        let mut cur = Some(self);
        while let Some(a) = cur {
            match a.seg {
                Seg::Root(Root::Arg(i)) => {
                    side = CallSide::Argument;
                    keys.push(PathKey::Index(*i));
                }
                Seg::Root(Root::Result(i)) => {
                    side = CallSide::Result;
                    keys.push(PathKey::Index(*i));
                }
                Seg::Root(Root::Results) => side = CallSide::Result,
                Seg::Root(Root::Args) => side = CallSide::Argument,
                Seg::Root(Root::Value) => side = CallSide::Value,
                Seg::Index(i) => keys.push(PathKey::Index(i)),
                Seg::Name(k) => keys.push(PathKey::Name(k.into())),
                Seg::Keys(ks) => keys.extend(ks.iter().rev().cloned()),
            }
            cur = a.parent;
        }
        keys.reverse();
        (side, IndexPath(keys))
    }

    /// A call error of `kind` here.
    #[cold]
    pub(super) fn err(&self, kind: CallErrorKind) -> Error {
        let (side, path) = self.place();
        CallError::new(side, path, kind).into()
    }

    /// A call error of `kind` here, where the function declares `note`.
    #[cold]
    pub(super) fn err_in(&self, note: &dyn fmt::Display, kind: CallErrorKind) -> Error {
        let (side, path) = self.place();
        CallError::new(side, path, kind).with_note(note).into()
    }

    /// A value of the wrong kind here.
    #[cold]
    pub(super) fn kind_err(&self, expected: impl fmt::Display, got: impl fmt::Display) -> Error {
        self.err(CallError::value_kind(expected.to_string(), got.to_string()))
    }
}

/// The first way a host array of `dtype` and `shape` misses an ndarray
/// record: its rank, a static dim, its element type (`None`: it fits).
pub(super) fn array_misfit(
    a: &NdArrayType,
    want: Option<DType>,
    dtype: DType,
    shape: &[usize],
) -> Option<CallErrorKind> {
    if let Some(dims) = &a.dims {
        if dims.len() != shape.len() {
            return Some(CallErrorKind::Rank { expected: dims.len(), got: shape.len() });
        }
        for (axis, (d, &n)) in dims.iter().zip(shape).enumerate() {
            if let Some(d) = *d
                && d != n as u64
            {
                return Some(CallErrorKind::Dim { axis, expected: d as usize, got: n });
            }
        }
    }
    match want {
        Some(w) if !dtype_passes(w, dtype) => Some(CallErrorKind::Dtype { expected: w, got: dtype }),
        _ => None,
    }
}

/// An array that misses its record `t` (rank, dims, then element type).
#[cold]
pub(super) fn misfit(
    at: &At<'_>,
    t: &TypeRecord,
    a: &NdArrayType,
    want: Option<DType>,
    dtype: DType,
    shape: &[usize],
) -> Error {
    let kind = array_misfit(a, want, dtype, shape)
        .unwrap_or_else(|| CallError::value_kind(t.to_string(), ShapeDisplay(dtype, shape).to_string()));
    at.err_in(t, kind)
}

/// An integer outside the range of primitive `p`.
#[cold]
pub(super) fn out_of_range(at: &At<'_>, p: Primitive, lo: i128, hi: i128, got: i128) -> Error {
    at.err(CallErrorKind::OutOfRange { expected: format!("{p} in {lo}..={hi}").into(), got: got.to_string().into() })
}

/// `1 item`, `2 items`.
pub(super) fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A host value's type for messages: `f32[2x4]`, `int 250`, `list of 3 items`.
pub(super) fn describe(v: &Value<'_>) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(b) => format!("bool {b}"),
        Value::Int(i) => format!("int {i}"),
        Value::Float(x) => format!("float {x:?}"),
        Value::Str(s) => format!("str of {}", count(s.len(), "byte")),
        Value::Bytes(b) => format!("bytes of length {}", b.len()),
        Value::List(l) => format!("list of {}", count(l.len(), "item")),
        Value::Tuple(l) => format!("tuple of {}", count(l.len(), "item")),
        Value::Dict(d) => format!("dict with keys {:?}", d.keys().map(|k| &**k).collect::<Vec<_>>()),
        Value::Array(a) => ShapeDisplay(a.dtype(), a.shape()).to_string(),
    }
}
