//! [`RecordPlan`]: `iree.abi` records compiled once into a structure
//! [`Plan`] (the `slist`/`stuple`/`sdict` records are its containers, in
//! the records' key order) and a leaf record per slot; packing host values
//! is one [`Plan::visit`] whose containers become `list<?>`s and whose
//! leaves go through the leaf converters of `to_vm`, and unpacking VM
//! values one [`Plan::build_with`] whose containers come from VM lists and
//! whose leaves go through those of `from_vm`.

use super::*;
use crate::structure::{Plan, PlanSource, PlanVisitor, VisitError};
use fnabi_abi::structure::{Structure, StructureError, StructureErrorKind};
use std::sync::Arc;

/// `iree.abi` records compiled for packing host values: a structure
/// [`Plan`] whose containers are the `slist`/`stuple`/`sdict` records (in
/// the records' key order) and a leaf record per slot. Made for the
/// parameters of a function ([`FunctionAbi::record_plan`]: its root is the
/// sequence of the arguments), or for one record (the elements of a
/// `py_homogeneous_list` or of an `ndarray` of references).
///
/// ```
/// use fnabi_abi::reflection::FunctionReflection;
/// use fnabi_core::conventions::FunctionAbi;
/// let f = FunctionReflection::parse(r#"{"a": [["sdict", ["y", "f32"], ["x", ["slist", "i8", "i8"]]], "i64"], "r": [], "v": 1}"#).unwrap();
/// let abi = FunctionAbi::from_reflection(&f);
/// let plan = abi.record_plan().unwrap();
/// // Leaves in the records' order: y, x[0], x[1], then the second argument.
/// let leaves: Vec<String> = (0..4).map(|s| plan.leaf_record(s).unwrap().to_string()).collect();
/// assert_eq!(leaves, ["f32", "i8", "i8", "i64"]);
/// assert_eq!(plan.plan().leaf_count(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct RecordPlan {
    plan: Plan,
    /// The rule of each slot.
    leaves: Vec<Leaf>,
    /// The index path of each slot (for errors).
    paths: Vec<IndexPath>,
    /// Each container, in the order a walk opens them (depth-first, in
    /// the records' order).
    containers: Vec<Container>,
    /// The records of the root: the parameters (`params`), or one record.
    root: RootRecords,
}

#[derive(Clone, Debug)]
enum RootRecords {
    Params(Vec<ParamType>),
    One(TypeRecord),
}

/// One container of a plan: its path and its record (`None`: the
/// arguments as a whole).
#[derive(Clone, Debug)]
struct Container {
    path: IndexPath,
    record: Option<TypeRecord>,
}

/// How one leaf packs: by its record, with the compiled plan of its
/// elements for the records that hold values of another record.
#[derive(Clone, Debug)]
pub(super) enum Leaf {
    Record { t: TypeRecord, elements: Option<Arc<RecordPlan>> },
    Opaque(String),
}

impl RecordPlan {
    /// The plan of a function's parameters: its root is the sequence of
    /// the arguments.
    pub(super) fn of_params(params: &[Param]) -> Result<RecordPlan, Error> {
        let mut b = Shaper::default();
        b.containers.push(Container { path: IndexPath::root(), record: None });
        let items = params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                b.path.push(PathKey::Index(i));
                let s = match &p.ty {
                    ParamType::Record(t) => b.shape(t)?,
                    ParamType::Opaque(name) => {
                        b.leaves.push(Leaf::Opaque(name.clone()));
                        Structure::Leaf(b.leaves.len() - 1)
                    }
                };
                b.path.pop();
                Ok((i, s))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let root = RootRecords::Params(params.iter().map(|p| p.ty.clone()).collect());
        RecordPlan::new(&Structure::Sequence(items), b, root)
    }

    /// The plan of one record.
    pub(super) fn of_record(t: &TypeRecord) -> Result<RecordPlan, Error> {
        let mut b = Shaper::default();
        let s = b.shape(t)?;
        RecordPlan::new(&s, b, RootRecords::One(t.clone()))
    }

    fn new(s: &Structure, b: Shaper, root: RootRecords) -> Result<RecordPlan, Error> {
        let plan = Plan::with_dict_order(s)?;
        let paths = plan.leaf_paths();
        Ok(RecordPlan { plan, leaves: b.leaves, paths, containers: b.containers, root })
    }

    /// The structure plan: containers are the structure records.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The record of leaf `slot` (`named` records unwrapped; `None` for an
    /// opaque parameter or a slot out of range).
    pub fn leaf_record(&self, slot: u32) -> Option<&TypeRecord> {
        match self.leaves.get(slot as usize)? {
            Leaf::Record { t, .. } => Some(t),
            Leaf::Opaque(_) => None,
        }
    }

    /// Packs the arguments (`args.len()` = the parameter count, checked by
    /// the caller) into `out`.
    pub(super) fn pack_args<'v>(&self, args: &'v [Value<'_>], out: &mut VmList<'v>, cx: Conv) -> Result<(), Error> {
        let mut p = Packer { rp: self, base: Base::Args, stack: Vec::new(), out, cx };
        match self.plan.visit_items(args, &mut p) {
            Ok(()) => Ok(()),
            Err(VisitError::Visitor(e)) => Err(e),
            Err(VisitError::Structure(e)) => Err(self.structure_error(e, Base::Args, Located::Items(args))),
        }
    }

    /// Converts one value of the record at `at`.
    pub(super) fn convert<'v>(&self, v: &'v Value<'_>, at: &At<'_>, cx: Conv) -> Result<Variant<'v>, Error> {
        if let ([leaf], Some(Structure::Leaf(_))) = (self.leaves.as_slice(), self.plan.structure()) {
            // A leaf record: no walk.
            return leaf_to_vm(v, leaf, at, cx);
        }
        let mut holder = VmList::variants(1);
        let mut p = Packer { rp: self, base: Base::At(at), stack: Vec::new(), out: &mut holder, cx };
        match self.plan.visit(v, &mut p) {
            Ok(()) => Ok(holder.into_items().pop().unwrap_or(Variant::None)),
            Err(VisitError::Visitor(e)) => Err(e),
            Err(VisitError::Structure(e)) => Err(self.structure_error(e, Base::At(at), Located::One(v))),
        }
    }

    /// Converts one VM value of the record at `at`.
    pub(super) fn unpack<'a>(&self, x: Variant<'a>, at: &At<'_>, cx: Conv) -> Result<Value<'a>, Error> {
        if let ([leaf], Some(Structure::Leaf(_))) = (self.leaves.as_slice(), self.plan.structure()) {
            // A leaf record: no walk.
            return leaf_from_vm(x, leaf, at, cx);
        }
        Unpacker::new(self, at, Some(x), None, cx).build()
    }

    /// Converts the VM values `l` that are the items of the record's root
    /// container (IREE's flat reading of a structure result) at `at`.
    pub(super) fn unpack_items<'a>(&self, l: VmList<'a>, at: &At<'_>, cx: Conv) -> Result<Value<'a>, Error> {
        if self.containers.is_empty() {
            return Err(at.kind_err("a structure record", self.root_display()));
        }
        Unpacker::new(self, at, None, Some(l), cx).build()
    }

    /// The root record, for messages.
    fn root_display(&self) -> String {
        match &self.root {
            RootRecords::One(t) => t.to_string(),
            RootRecords::Params(_) => "the parameters".into(),
        }
    }

    /// The call error of a value that misses a structure record: the
    /// record and the value at the error's path, as `to_vm` describes them.
    #[cold]
    fn structure_error(&self, e: StructureError, base: Base<'_>, value: Located<'_, '_>) -> Error {
        let keys = &e.path().0;
        let (record, v, rest) = match (&self.root, value) {
            (RootRecords::Params(ps), Located::Items(args)) => match keys.split_first() {
                Some((PathKey::Index(i), rest)) => {
                    let t = match ps.get(*i) {
                        Some(ParamType::Record(t)) => Some(t),
                        _ => None,
                    };
                    (t, args.get(*i), rest)
                }
                _ => (None, None, &keys[..]),
            },
            (RootRecords::One(t), Located::One(v)) => (Some(t), Some(v), &keys[..]),
            _ => (None, None, &keys[..]),
        };
        let record = record.and_then(|t| record_at(t, rest));
        let v = v.and_then(|v| value_at(v, rest));
        base.with_at(keys, |at| {
            let note: &dyn fmt::Display = match record {
                Some(t) => t,
                None => &"the parameters",
            };
            match e.kind() {
                StructureErrorKind::Expected { got, .. } => match v {
                    Some(v) => at.kind_err(note, describe(v)),
                    None => at.kind_err(note, got),
                },
                StructureErrorKind::Length { has, needs } if keys.is_empty() && matches!(base, Base::Args) => {
                    CallError::argument(CallErrorKind::Arity { expected: *needs, at_least: false, got: *has }).into()
                }
                StructureErrorKind::Length { has, needs } => {
                    at.err_in(note, CallErrorKind::Length { expected: *needs, got: *has })
                }
                StructureErrorKind::MissingKey(k) => at.err_in(note, CallErrorKind::MissingKey(k.clone())),
                StructureErrorKind::UnexpectedKey(k) => at.err_in(note, CallErrorKind::UnexpectedKey(k.clone())),
                _ => at.err(CallErrorKind::Invalid(e.to_string())),
            }
        })
    }
}

/// Builds the structure of records, collecting leaves and containers.
#[derive(Default)]
struct Shaper {
    leaves: Vec<Leaf>,
    containers: Vec<Container>,
    /// Where `shape` is.
    path: Vec<PathKey>,
}

impl Shaper {
    /// The structure of record `t`: its structure records become
    /// containers (dicts in the record's key order), every other record a
    /// leaf (its raw index = its position in the VM's order).
    fn shape(&mut self, t: &TypeRecord) -> Result<Structure, Error> {
        let t = t.unnamed();
        if t.is_structure() {
            self.containers.push(Container { path: IndexPath(self.path.clone()), record: Some(t.clone()) });
        }
        Ok(match t {
            TypeRecord::SList(ts) | TypeRecord::STuple(ts) => Structure::Sequence(
                ts.iter()
                    .enumerate()
                    .map(|(i, t)| Ok((i, self.within(PathKey::Index(i), t)?)))
                    .collect::<Result<_, Error>>()?,
            ),
            TypeRecord::SDict(es) | TypeRecord::SDictKwargs(es) => Structure::Dict(
                es.iter()
                    .map(|(k, t)| Ok((k.clone(), self.within(PathKey::Name(k.clone()), t)?)))
                    .collect::<Result<_, Error>>()?,
            ),
            t => {
                let elements = match t {
                    TypeRecord::PyHomogeneousList(elem) => Some(Arc::new(RecordPlan::of_record(elem)?)),
                    TypeRecord::NdArray(a) if !a.is_numeric() => Some(Arc::new(RecordPlan::of_record(&a.element)?)),
                    _ => None,
                };
                self.leaves.push(Leaf::Record { t: t.clone(), elements });
                Structure::Leaf(self.leaves.len() - 1)
            }
        })
    }

    fn within(&mut self, key: PathKey, t: &TypeRecord) -> Result<Structure, Error> {
        self.path.push(key);
        let s = self.shape(t);
        self.path.pop();
        s
    }
}

/// The record at `keys` below `t` (`named` records unwrapped).
fn record_at<'t>(mut t: &'t TypeRecord, keys: &[PathKey]) -> Option<&'t TypeRecord> {
    for k in keys {
        t = match (t.unnamed(), k) {
            (TypeRecord::SList(ts) | TypeRecord::STuple(ts), PathKey::Index(i)) => ts.get(*i)?,
            (TypeRecord::SDict(es) | TypeRecord::SDictKwargs(es), PathKey::Name(n)) => {
                &es.iter().find(|(e, _)| e == n)?.1
            }
            _ => return None,
        };
    }
    Some(t.unnamed())
}

/// The value at `keys` below `v`.
fn value_at<'v, 'a>(mut v: &'v Value<'a>, keys: &[PathKey]) -> Option<&'v Value<'a>> {
    for k in keys {
        v = match (v, k) {
            (Value::List(items) | Value::Tuple(items), PathKey::Index(i)) => items.get(*i)?,
            (Value::Dict(d), PathKey::Name(n)) => d.get(n)?,
            _ => return None,
        };
    }
    Some(v)
}

/// Where a walk's paths start: argument `path[0]`, or a position.
#[derive(Clone, Copy)]
enum Base<'p> {
    Args,
    At(&'p At<'p>),
}

/// The value a walk started from.
#[derive(Clone, Copy)]
enum Located<'v, 'a> {
    Items(&'v [Value<'a>]),
    One(&'v Value<'a>),
}

impl Base<'_> {
    /// Calls `f` with the position of index path `keys` (from the walk's root).
    fn with_at<R>(self, keys: &[PathKey], f: impl FnOnce(&At<'_>) -> R) -> R {
        match self {
            Base::Args => match keys.split_first() {
                Some((PathKey::Index(i), rest)) => {
                    let root = Root::Arg(*i);
                    let at = At::root(&root);
                    f(&at.keys(rest))
                }
                _ => {
                    let root = Root::Args;
                    f(&At::root(&root))
                }
            },
            Base::At(at) => f(&at.keys(keys)),
        }
    }
}

/// The visitor of packing: containers become `list<?>`s, leaves VM values.
struct Packer<'r, 'o, 'v> {
    rp: &'r RecordPlan,
    base: Base<'r>,
    /// The open lists, innermost last.
    stack: Vec<VmList<'v>>,
    /// Where the walk's root items go.
    out: &'o mut VmList<'v>,
    cx: Conv,
}

impl<'v> Packer<'_, '_, 'v> {
    fn top(&mut self) -> &mut VmList<'v> {
        match self.stack.last_mut() {
            Some(l) => l,
            None => self.out,
        }
    }
}

impl<'v, 'a: 'v> PlanVisitor<'v, 'a> for Packer<'_, '_, 'v> {
    type Error = Error;

    fn open_seq(&mut self, len: usize) -> Result<(), Error> {
        self.stack.push(VmList::variants(len));
        Ok(())
    }

    fn open_dict(&mut self, len: usize) -> Result<(), Error> {
        self.stack.push(VmList::variants(len));
        Ok(())
    }

    fn close(&mut self) -> Result<(), Error> {
        let l = self.stack.pop().ok_or_else(|| Error::invalid_argument("a list closed that was not opened"))?;
        self.top().push(Variant::list(l))
    }

    fn gap(&mut self) -> Result<(), Error> {
        self.top().push(Variant::None)
    }

    fn leaf(&mut self, slot: u32, v: &'v Value<'a>) -> Result<(), Error> {
        let (rp, cx) = (self.rp, self.cx);
        let (Some(leaf), Some(path)) = (rp.leaves.get(slot as usize), rp.paths.get(slot as usize)) else {
            return Err(Error::invalid_argument(format!("no leaf {slot} in the record plan")));
        };
        let x = self.base.with_at(&path.0, |at| leaf_to_vm(v, leaf, at, cx))?;
        self.top().push(x)
    }
}

/// Converts a leaf value by its rule.
fn leaf_to_vm<'v>(v: &'v Value<'_>, leaf: &Leaf, at: &At<'_>, cx: Conv) -> Result<Variant<'v>, Error> {
    let (t, elements) = match leaf {
        Leaf::Record { t, elements } => (t, elements.as_deref()),
        Leaf::Opaque(name) => return Err(at.kind_err(format!("a {name} (not made from host values)"), describe(v))),
    };
    match (t, elements) {
        (TypeRecord::Unknown, _) => dynamic_to_vm(v, at),
        (TypeRecord::Null, _) => match v {
            Value::None => Ok(Variant::None),
            _ => Err(at.kind_err("None (a null slot)", describe(v))),
        },
        (TypeRecord::Primitive(p), _) => scalar_to_vm(v, *p, at),
        (TypeRecord::NdArray(a), _) if a.is_numeric() => ndarray_to_vm(v, a, t, at, cx),
        (TypeRecord::NdArray(a), Some(elements)) => ref_array_to_vm(v, a, t, elements, at, cx),
        (TypeRecord::PyHomogeneousList(elem), Some(elements)) => py_list_to_vm(v, elem, t, elements, at, cx),
        // Structure and `named` records are never leaves; every record
        // that holds others has its elements' plan.
        _ => Err(at.err(CallErrorKind::Invalid(format!("{t} is not a leaf record")))),
    }
}

/// The source of unpacking: containers from VM lists (checked against
/// their records), leaves through the leaf converters. The first error
/// stops the work (the build then runs to its end on `None`s).
struct Unpacker<'r, 'p, 'a> {
    rp: &'r RecordPlan,
    base: &'p At<'p>,
    /// The root value (taken by the first request).
    pending: Option<Variant<'a>>,
    /// The root container's items, when the caller has them as a list.
    root_items: Option<VmList<'a>>,
    /// The open containers: their index and their remaining items.
    stack: Vec<(usize, std::vec::IntoIter<Variant<'a>>)>,
    /// Containers opened so far.
    opened: usize,
    /// The container closed last.
    closed: usize,
    cx: Conv,
    error: Option<Error>,
}

impl<'r, 'p, 'a> Unpacker<'r, 'p, 'a> {
    fn new(
        rp: &'r RecordPlan,
        base: &'p At<'p>,
        pending: Option<Variant<'a>>,
        root_items: Option<VmList<'a>>,
        cx: Conv,
    ) -> Self {
        Unpacker { rp, base, pending, root_items, stack: Vec::new(), opened: 0, closed: 0, cx, error: None }
    }

    /// Builds the value along the plan.
    fn build(mut self) -> Result<Value<'a>, Error> {
        let rp = self.rp;
        let v = rp.plan.build_with(&mut self);
        match self.error {
            Some(e) => Err(e),
            None => Ok(v),
        }
    }

    /// The next VM value of the innermost open container (or the root).
    fn next(&mut self) -> Variant<'a> {
        let next = match self.stack.last_mut() {
            Some((_, items)) => items.next(),
            None => self.pending.take(),
        };
        // Lengths are checked when a container opens.
        next.unwrap_or(Variant::None)
    }

    fn open(&mut self, len: usize) -> Result<(), Error> {
        let (rp, base) = (self.rp, self.base);
        let idx = self.opened;
        self.opened += 1;
        let Some(c) = rp.containers.get(idx) else {
            return Err(Error::invalid_argument(format!("no container {idx} in the record plan")));
        };
        let note: &dyn fmt::Display = match &c.record {
            Some(t) => t,
            None => &"the parameters",
        };
        let l = match (self.stack.is_empty(), self.root_items.take()) {
            (true, Some(l)) => l,
            (_, items) => {
                self.root_items = items;
                let x = self.next();
                Base::At(base).with_at(&c.path.0, |at| take_list(x, note, at))?
            }
        };
        if l.len() != len {
            return Err(Base::At(base)
                .with_at(&c.path.0, |at| at.err_in(note, CallErrorKind::Length { expected: len, got: l.len() })));
        }
        self.stack.push((idx, l.into_items().into_iter()));
        Ok(())
    }

    fn leaf_value(&mut self, slot: u32) -> Result<Value<'a>, Error> {
        let (rp, base, cx) = (self.rp, self.base, self.cx);
        let (Some(leaf), Some(path)) = (rp.leaves.get(slot as usize), rp.paths.get(slot as usize)) else {
            return Err(Error::invalid_argument(format!("no leaf {slot} in the record plan")));
        };
        let x = self.next();
        Base::At(base).with_at(&path.0, |at| leaf_from_vm(x, leaf, at, cx))
    }

    /// Keeps the first error.
    fn keep<T: Default>(&mut self, r: Result<T, Error>) -> T {
        r.unwrap_or_else(|e| {
            self.error.get_or_insert(e);
            T::default()
        })
    }
}

impl<'a> PlanSource<'a> for Unpacker<'_, '_, 'a> {
    fn open_seq(&mut self, len: usize) {
        if self.error.is_none() {
            let r = self.open(len);
            self.keep(r);
        }
    }

    fn open_dict(&mut self, len: usize) {
        self.open_seq(len)
    }

    fn close(&mut self) {
        if self.error.is_none()
            && let Some((idx, _)) = self.stack.pop()
        {
            self.closed = idx;
        }
    }

    fn gap(&mut self) {
        if self.error.is_none() {
            self.next();
        }
    }

    fn leaf(&mut self, slot: u32) -> Value<'a> {
        if self.error.is_some() {
            return Value::None;
        }
        let r = self.leaf_value(slot);
        self.keep(r)
    }

    /// `stuple` records are tuples; `slist`, lists.
    fn sequence(&mut self, items: Vec<Value<'a>>) -> Value<'a> {
        match self.rp.containers.get(self.closed).and_then(|c| c.record.as_ref()) {
            Some(TypeRecord::STuple(_)) => Value::Tuple(items),
            _ => Value::List(items),
        }
    }
}
