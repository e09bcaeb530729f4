//! The `iree.abi` calling conventions: host [`Value`]s ⇄ VM [`Variant`]s,
//! both ways, typed by `iree.abi` records, by the `iree.abi.declaration`
//! text, or by nothing (dynamic mode, as IREE's runtime does it).
//! [`FunctionAbi`] is one function's convention: it binds positional and
//! keyword arguments, packs them into the VM argument list, and unpacks the
//! VM results into one host value.
//!
//! ```
//! use fnabi_core::conventions::FunctionAbi;
//! use fnabi_abi::reflection::FunctionReflection;
//! use fnabi_core::vm::Variant;
//! use fnabi_core::{Array, Value};
//!
//! let f = FunctionReflection::parse(r#"{"a": [["sdict", ["x", ["ndarray", "f32", 2, 1, 4]], ["y", ["ndarray", "f32", 2, 1, 4]]]], "r": [["stuple", ["ndarray", "f32", 2, 1, 4], ["ndarray", "f32", 2, 1, 4]]], "v": 1}"#).unwrap();
//! let abi = FunctionAbi::from_reflection(&f);
//! let x = Array::from_vec(&[1, 4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
//! let y = Array::from_vec(&[1, 4], vec![10.0f32, 20.0, 30.0, 40.0]).unwrap();
//! // A dict packs as the values in the record's key order: [[x, y]].
//! let args = [Value::dict([("y", Value::from(y.clone())), ("x", Value::from(x.clone()))])];
//! let vm_args = abi.pack_args(&args).unwrap();
//! assert_eq!(vm_args.to_string(), "list<?>[list<?>[bv f32[1x4], bv f32[1x4]]]");
//! assert_eq!(vm_args.items()[0].as_list().unwrap().items()[0].as_buffer_view().unwrap().array(), &x);
//!
//! // A wrong shape names the index path (argument 0, key "x"), the record and the dim.
//! let bad = Array::from_vec(&[2, 4], vec![0.0f32; 8]).unwrap();
//! let err = abi.pack_args(&[Value::dict([("x", Value::from(bad)), ("y", Value::from(y))])]).unwrap_err();
//! assert_eq!(err.to_string(), r#"argument [0]["x"] (f32[1x4]): dim 0: expected 1, got 2"#);
//! ```
//!
//! # The conventions
//! | record | host value | VM value |
//! | --- | --- | --- |
//! | `ndarray` of a primitive | [`Array`] (dtype, rank and static dims checked; a scalar for rank 0) | buffer view |
//! | `ndarray` of any other record | nested lists, `rank` deep | `[list<T> of the values in C order, list<i64> of the dims]` |
//! | `i1` `i8` `i16` `i32` `i64` | int (or bool), range-checked | `i32` `i8` `i16` `i32` `i64` |
//! | `f32` `f64` | float (or int) | `f32` `f64` |
//! | `slist` / `stuple` | list or tuple of that length | `list<?>` in order |
//! | `sdict` (`sdict_kwargs`) | dict with exactly those keys | `list<?>` of the values in the record's key order |
//! | `py_homogeneous_list` | list or tuple (str/bytes for `i8`) | typed list (`list<i8>`, `list<!hal.buffer_view>`, …) |
//! | `null` | None | empty |
//! | `unknown` | anything | dynamic |
//!
//! Dynamic mode (no record) is IREE's: ints go as `i64`, floats as `f64`,
//! bools as `i64` 0/1, strings and bytes as `list<i8>` (UTF-8), lists and
//! tuples as `list<?>`, dicts as `list<?>` of their values in sorted-key
//! order, arrays as buffer views (copied to row-major when strided). Back
//! from the VM, a `list<i8>` is a string when it holds UTF-8, bytes
//! otherwise.
//!
//! Stricter than IREE's runtime, which checks none of these: element type,
//! rank and static dims of arrays (a dtype cast happens only with
//! [`FunctionAbi::with_casts`], and then value-checked), integer ranges
//! (250 for an `i8` is an error, not a wrap), dict keys (missing and extra
//! keys are errors), sequence lengths, and results against their records.
//! A signless record integer (`i8`) accepts host arrays of either
//! signedness of its width, since MLIR's integers are signless.
use fnabi_abi::limits::MAX_DEPTH;

use crate::array::Array;
use crate::bind::bind_arguments;
pub use crate::error::CallError;
use crate::error::{CallErrorKind, CallSide, Error};
use crate::value::{Dict, Key, Value};
use crate::vm::{
    BufferView, CallingConvention, ListElementType, RefType, ShapeDisplay, ValueType, Variant, VmList, VmRef,
};
use fnabi_abi::reflection::{Declaration, FunctionReflection, InvocationModel, NdArrayType, Primitive, TypeRecord};
use fnabi_abi::scalar::{DType, ScalarType};
use fnabi_abi::structure::{IndexPath, PathKey};
use std::fmt;

/// The parameters of an `iree.abi` function, for the binder: `named`
/// records take keywords, `null` records may be left out, and a last
/// `sdict_kwargs` record collects the other keywords.
struct RecordParameters<'p> {
    params: &'p [Param],
    rest: bool,
}

impl crate::bind::Parameters for RecordParameters<'_> {
    fn len(&self) -> usize {
        self.params.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        self.params.get(i).and_then(|p| p.name.as_deref())
    }

    fn optional(&self, i: usize) -> bool {
        self.params.get(i).is_some_and(|p| matches!(p.ty, ParamType::Record(TypeRecord::Null)))
    }

    fn rest(&self) -> bool {
        self.rest
    }
}

/// The type of one parameter or result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParamType {
    /// Typed by a record (from `iree.abi`, or derived from the declaration).
    Record(TypeRecord),
    /// A VM type a host value cannot stand for (`!hal.fence`, a tensor of
    /// `complex<f32>`, …), by its declaration text.
    Opaque(String),
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamType::Record(t) => t.fmt(f),
            ParamType::Opaque(s) => f.write_str(s),
        }
    }
}

/// One parameter: an optional keyword name and a type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    /// The keyword name (`named` records).
    pub name: Option<Key>,
    /// The type.
    pub ty: ParamType,
}

/// How the VM results map to the host result when a single `slist`,
/// `stuple` or `sdict` record describes them.
///
/// IREE's runtime reads such a record as describing the function's *flat*
/// results (the compiler's bindings return the structure's slots as
/// separate values), so a function that really returns one list fails to
/// decode there. [`Auto`](ResultPacking::Auto), the default, reads both
/// shapes: it is what the record says literally when the VM returned
/// exactly one list, and IREE's flat reading otherwise. Only a
/// one-slot structure whose VM result is itself a list is ambiguous; Auto
/// takes the literal reading, and [`Flat`](ResultPacking::Flat) forces
/// IREE's.
///
/// Either way the host result has the record's shape: a list for `slist`,
/// a tuple for `stuple`, a dict for `sdict` (IREE's runtime returns a
/// tuple in all three cases).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ResultPacking {
    /// Flat when the VM results are not exactly one list, nested otherwise.
    #[default]
    Auto,
    /// IREE's rule: the structure's slots are the VM results.
    Flat,
    /// The literal rule: the structure is the one VM result.
    Nested,
}

/// Where a function's types come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AbiMode {
    /// `iree.abi` records.
    Reflection,
    /// The `iree.abi.declaration` text.
    Declaration,
    /// Nothing: values convert by their host kind, any arity.
    Dynamic,
}

/// One function's calling convention (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionAbi {
    mode: AbiMode,
    params: Option<Vec<Param>>,
    results: Option<Vec<ParamType>>,
    kwargs_param: Option<usize>,
    model: InvocationModel,
    packing: ResultPacking,
    casts: bool,
    cconv: Option<CallingConvention>,
}

impl FunctionAbi {
    /// Dynamic mode: no types, any arity, no keywords.
    pub fn dynamic() -> Self {
        FunctionAbi {
            mode: AbiMode::Dynamic,
            params: None,
            results: None,
            kwargs_param: None,
            model: InvocationModel::Sync,
            packing: ResultPacking::Auto,
            casts: false,
            cconv: None,
        }
    }

    /// Typed by `iree.abi` records; `named` records give keyword names, a
    /// last `sdict_kwargs` record collects the keywords no parameter names.
    pub fn from_reflection(f: &FunctionReflection) -> Self {
        let params =
            f.a.iter()
                .map(|t| match t {
                    TypeRecord::Named(k, inner) => {
                        Param { name: Some(k.clone()), ty: ParamType::Record((**inner).clone()) }
                    }
                    t => Param { name: None, ty: ParamType::Record(t.clone()) },
                })
                .collect();
        // Only a last `sdict_kwargs` collects keywords (the parser allows no
        // other); one built by hand elsewhere is an ordinary dict.
        let kwargs_param = f.a.len().checked_sub(1).filter(|&i| matches!(f.a[i], TypeRecord::SDictKwargs(_)));
        let results = f.r.iter().map(|t| ParamType::Record(t.unnamed().clone())).collect();
        FunctionAbi {
            mode: AbiMode::Reflection,
            params: Some(params),
            results: Some(results),
            kwargs_param,
            ..FunctionAbi::dynamic()
        }
    }

    /// Typed by the declaration (see [`DeclType::to_record`](fnabi_abi::reflection::DeclType::to_record));
    /// `async` adds the two fence arguments to the VM call (not to the
    /// host's).
    pub fn from_declaration(d: &Declaration) -> Self {
        let ty = |p: &fnabi_abi::reflection::DeclParam| match p.ty.to_record() {
            Some(t) => ParamType::Record(t),
            None => ParamType::Opaque(p.ty.to_string()),
        };
        FunctionAbi {
            mode: AbiMode::Declaration,
            params: Some(d.args.iter().map(|p| Param { name: None, ty: ty(p) }).collect()),
            results: Some(d.results.iter().map(ty).collect()),
            model: d.model,
            ..FunctionAbi::dynamic()
        }
    }

    /// The calling convention fnabi uses for a `.vmfb` export (records,
    /// else the declaration, else dynamic; checked against its cconv).
    pub fn from_signature(sig: &fnabi_abi::vmfb::Signature<'_>) -> Result<Self, Error> {
        let abi = FunctionAbi::from_attrs(sig.attrs.iter().copied())?;
        Ok(match sig.cconv() {
            Some(cc) => abi.with_calling_convention(cc?),
            None => abi,
        })
    }

    /// The convention of a function with these reflection attributes
    /// (`iree.abi`, `iree.abi.declaration`, `iree.abi.model`; others are
    /// ignored): records when there are, else the declaration, else
    /// dynamic mode. The model is coarse-fences when `iree.abi.model` says
    /// so or the declaration is `async`.
    pub fn from_attrs<'s>(attrs: impl IntoIterator<Item = (&'s str, &'s str)>) -> Result<Self, Error> {
        let (mut abi, mut decl, mut model) = (None, None, None);
        for (k, v) in attrs {
            match k {
                "iree.abi" => abi = Some(FunctionReflection::parse(v)?),
                "iree.abi.declaration" => decl = Some(Declaration::parse(v)?),
                "iree.abi.model" => {
                    model = Some(InvocationModel::from_attr(v).ok_or_else(|| {
                        Error::from(fnabi_abi::AttributeError::new(format!(
                            "unknown iree.abi.model {v:?} (fnabi knows coarse-fences)"
                        )))
                    })?)
                }
                _ => {}
            }
        }
        let mut f = match (&abi, &decl) {
            (Some(a), _) => FunctionAbi::from_reflection(a),
            (None, Some(d)) => FunctionAbi::from_declaration(d),
            (None, None) => FunctionAbi::dynamic(),
        };
        if let Some(d) = &decl {
            f.model = d.model;
        }
        if let Some(m) = model {
            f.model = m;
        }
        Ok(f)
    }

    /// Also checks packed arguments against the VM calling convention
    /// (count and register kinds, fences included).
    pub fn with_calling_convention(mut self, cc: CallingConvention) -> Self {
        self.cconv = Some(cc);
        self
    }

    /// Sets how a single structure result record is read.
    pub fn with_result_packing(mut self, p: ResultPacking) -> Self {
        self.packing = p;
        self
    }

    /// Allows value-checked dtype casts of arrays whose element type
    /// differs from the record's (off by default).
    pub fn with_casts(mut self, on: bool) -> Self {
        self.casts = on;
        self
    }

    /// Where the types come from.
    pub fn mode(&self) -> AbiMode {
        self.mode
    }

    /// The parameters (`None` in dynamic mode).
    pub fn params(&self) -> Option<&[Param]> {
        self.params.as_deref()
    }

    /// The result types (`None` in dynamic mode).
    pub fn results(&self) -> Option<&[ParamType]> {
        self.results.as_deref()
    }

    /// The invocation model.
    pub fn model(&self) -> InvocationModel {
        self.model
    }

    /// Binds positional and keyword arguments to the parameters.
    ///
    /// A parameter with a name binds by keyword **or** by position (as the
    /// `iree.abi` document says; IREE's runtime takes keywords only); a
    /// `null` parameter that gets nothing is None; keywords that name no
    /// parameter go into a last `sdict_kwargs` parameter when there is one.
    /// Errors: [`CallErrorKind::TooManyPositional`], [`CallErrorKind::UnknownKeyword`],
    /// [`CallErrorKind::DuplicateKeyword`], [`CallErrorKind::MissingArgument`].
    /// In dynamic mode the positional arguments are the arguments and any
    /// keyword is unknown.
    pub fn bind<'a, K: Into<Key>>(
        &self,
        positional: Vec<Value<'a>>,
        keywords: impl IntoIterator<Item = (K, Value<'a>)>,
    ) -> Result<Vec<Value<'a>>, Error> {
        let Some(params) = &self.params else {
            if let Some((k, _)) = keywords.into_iter().next() {
                return Err(CallError::argument(CallErrorKind::UnknownKeyword(k.into())).into());
            }
            return Ok(positional);
        };
        let params = RecordParameters { params, rest: self.kwargs_param.is_some() };
        Ok(bind_arguments(&params, positional, keywords)?)
    }

    /// Converts bound arguments into the VM argument list (without the
    /// fences of an async function, which the runtime adds). Arrays are
    /// shared, not copied, when they are dense and row-major.
    pub fn pack_args<'v>(&self, args: &'v [Value<'_>]) -> Result<VmList<'v>, Error> {
        let cx = Conv { casts: self.casts };
        let mut out = VmList::variants(args.len() + self.model.fence_args());
        match &self.params {
            None => {
                for (i, v) in args.iter().enumerate() {
                    let root = Root::Arg(i);
                    out.push(dynamic_to_vm(v, &At::root(&root))?)?;
                }
            }
            Some(ps) => {
                if args.len() != ps.len() {
                    return Err(CallError::argument(CallErrorKind::Arity {
                        expected: ps.len(),
                        at_least: false,
                        got: args.len(),
                    })
                    .into());
                }
                for (i, (v, p)) in args.iter().zip(ps).enumerate() {
                    let root = Root::Arg(i);
                    let at = At::root(&root);
                    let x = match &p.ty {
                        ParamType::Record(t) => to_vm(v, t, &at, cx)?,
                        ParamType::Opaque(name) => {
                            return Err(at.kind_err(format!("a {name} (not made from host values)"), describe(v)));
                        }
                    };
                    out.push(x)?;
                }
            }
        }
        if let Some(cc) = &self.cconv {
            crate::vm::check_registers(CallSide::Argument, cc.args(), out.items(), self.model.fence_args())?;
        }
        Ok(out)
    }

    /// Converts the VM results into the host result: none for no results,
    /// the value for one, a tuple for more (see [`ResultPacking`] for a
    /// single structure record).
    pub fn unpack_results<'a>(&self, results: Vec<Variant<'a>>) -> Result<Value<'a>, Error> {
        let cx = Conv { casts: self.casts };
        let Some(rs) = &self.results else {
            let vals = results
                .into_iter()
                .enumerate()
                .map(|(i, x)| dynamic_from_vm(x, &At::root(&Root::Result(i))))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(arity_pack(vals));
        };
        if let [ParamType::Record(t)] = rs.as_slice()
            && t.is_structure()
        {
            let one_list = results.len() == 1 && results[0].as_list().is_some();
            let flat = match self.packing {
                ResultPacking::Flat => true,
                ResultPacking::Nested => false,
                ResultPacking::Auto => !one_list,
            };
            if flat {
                let list = VmList::from_variants(results);
                return structure_from_vm(list, t, &At::root(&Root::Results), cx);
            }
        }
        if results.len() != rs.len() {
            return Err(CallError::result(CallErrorKind::Arity {
                expected: rs.len(),
                at_least: false,
                got: results.len(),
            })
            .into());
        }
        let vals = results
            .into_iter()
            .zip(rs)
            .enumerate()
            .map(|(i, (x, t))| {
                let root = Root::Result(i);
                let at = At::root(&root);
                match t {
                    ParamType::Record(t) => from_vm(x, t, &at, cx),
                    ParamType::Opaque(name) => Err(at.kind_err("a value the host can hold", name)),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(arity_pack(vals))
    }
}

fn arity_pack(mut vals: Vec<Value<'_>>) -> Value<'_> {
    match vals.len() {
        0 => Value::None,
        1 => vals.pop().unwrap_or_default(),
        _ => Value::Tuple(vals),
    }
}

// ---- paths in messages -------------------------------------------------------

#[derive(Clone, Copy)]
enum Root {
    Arg(usize),
    Result(usize),
    Results,
    Value,
}

#[derive(Clone, Copy)]
enum Seg<'p> {
    Root(&'p Root),
    Index(usize),
    Name(&'p str),
}

/// A position inside a value, as a chain of borrowed segments on the stack
/// (formatted only when an error is reported).
#[derive(Clone, Copy)]
struct At<'p> {
    parent: Option<&'p At<'p>>,
    seg: Seg<'p>,
    depth: usize,
}

impl<'p> At<'p> {
    fn root(r: &'p Root) -> At<'p> {
        At { parent: None, seg: Seg::Root(r), depth: 0 }
    }

    fn index<'q>(&'q self, i: usize) -> Result<At<'q>, Error> {
        self.child(Seg::Index(i))
    }

    fn name<'q>(&'q self, k: &'q str) -> Result<At<'q>, Error> {
        self.child(Seg::Name(k))
    }

    fn child<'q>(&'q self, seg: Seg<'q>) -> Result<At<'q>, Error> {
        if self.depth + 1 >= MAX_DEPTH {
            return Err(self.err(CallErrorKind::Invalid(format!("values nest deeper than {MAX_DEPTH} levels"))));
        }
        Ok(At { parent: Some(self), seg, depth: self.depth + 1 })
    }

    /// Which values, and the index path: argument 0 `["x"][1]` is
    /// `(Argument, [0]["x"][1])`, result 1 is `(Result, [1])`.
    fn place(&self) -> (CallSide, IndexPath) {
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
                Seg::Root(Root::Value) => side = CallSide::Value,
                Seg::Index(i) => keys.push(PathKey::Index(i)),
                Seg::Name(k) => keys.push(PathKey::Name(k.into())),
            }
            cur = a.parent;
        }
        keys.reverse();
        (side, IndexPath(keys))
    }

    /// A call error of `kind` here.
    #[cold]
    fn err(&self, kind: CallErrorKind) -> Error {
        let (side, path) = self.place();
        CallError::new(side, path, kind).into()
    }

    /// A call error of `kind` here, where the function declares `note`.
    #[cold]
    fn err_in(&self, note: &dyn fmt::Display, kind: CallErrorKind) -> Error {
        let (side, path) = self.place();
        CallError::new(side, path, kind).with_note(note).into()
    }

    /// A value of the wrong kind here.
    #[cold]
    fn kind_err(&self, expected: impl fmt::Display, got: impl fmt::Display) -> Error {
        self.err(CallError::value_kind(expected.to_string(), got.to_string()))
    }
}

/// The first way a host array of `dtype` and `shape` misses an ndarray
/// record: its rank, a static dim, its element type (`None`: it fits).
fn array_misfit(a: &NdArrayType, want: Option<DType>, dtype: DType, shape: &[usize]) -> Option<CallErrorKind> {
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
fn misfit(at: &At<'_>, t: &TypeRecord, a: &NdArrayType, want: Option<DType>, dtype: DType, shape: &[usize]) -> Error {
    let kind = array_misfit(a, want, dtype, shape)
        .unwrap_or_else(|| CallError::value_kind(t.to_string(), ShapeDisplay(dtype, shape).to_string()));
    at.err_in(t, kind)
}

/// An integer outside the range of primitive `p`.
#[cold]
fn out_of_range(at: &At<'_>, p: Primitive, lo: i128, hi: i128, got: i128) -> Error {
    at.err(CallErrorKind::OutOfRange { expected: format!("{p} in {lo}..={hi}").into(), got: got.to_string().into() })
}

/// `1 item`, `2 items`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A host value's type for messages: `f32[2x4]`, `int 250`, `list of 3 items`.
fn describe(v: &Value<'_>) -> String {
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

#[derive(Clone, Copy)]
struct Conv {
    casts: bool,
}

// ---- host -> VM ----------------------------------------------------------------

/// Converts one host value as typed by `record`.
///
/// Errors name the position as `value [path]`; [`FunctionAbi::pack_args`]
/// names the argument instead.
pub fn value_to_vm<'v>(v: &'v Value<'_>, record: &TypeRecord) -> Result<Variant<'v>, Error> {
    to_vm(v, record, &At::root(&Root::Value), Conv { casts: false })
}

/// Converts one VM value as typed by `record`.
pub fn value_from_vm<'a>(x: Variant<'a>, record: &TypeRecord) -> Result<Value<'a>, Error> {
    from_vm(x, record, &At::root(&Root::Value), Conv { casts: false })
}

/// The VM element type of a typed list of `record` values.
pub fn element_type_of(record: &TypeRecord) -> ListElementType {
    match record {
        TypeRecord::Primitive(p) => value_type_of(*p).map_or(ListElementType::Variant, ListElementType::Value),
        TypeRecord::NdArray(a) if a.is_numeric() => ListElementType::Ref(RefType::BufferView),
        TypeRecord::NdArray(_)
        | TypeRecord::SList(_)
        | TypeRecord::STuple(_)
        | TypeRecord::SDict(_)
        | TypeRecord::SDictKwargs(_)
        | TypeRecord::PyHomogeneousList(_) => ListElementType::Ref(RefType::List),
        TypeRecord::Null | TypeRecord::Unknown | TypeRecord::Named(..) => ListElementType::Variant,
    }
}

/// The VM value type of a primitive (`i1` travels as `i32`, like MLIR's
/// booleans in VM registers); `None` for widths the VM has no value type for.
pub fn value_type_of(p: Primitive) -> Option<ValueType> {
    Some(match p {
        Primitive::Int(1 | 32) => ValueType::I32,
        Primitive::Int(8) => ValueType::I8,
        Primitive::Int(16) => ValueType::I16,
        Primitive::Int(64) => ValueType::I64,
        Primitive::Float(32) => ValueType::F32,
        Primitive::Float(64) => ValueType::F64,
        _ => return None,
    })
}

fn to_vm<'v>(v: &'v Value<'_>, t: &TypeRecord, at: &At<'_>, cx: Conv) -> Result<Variant<'v>, Error> {
    match t {
        TypeRecord::Unknown => dynamic_to_vm(v, at),
        TypeRecord::Null => match v {
            Value::None => Ok(Variant::None),
            _ => Err(at.kind_err("None (a null slot)", describe(v))),
        },
        TypeRecord::Named(_, inner) => to_vm(v, inner, at, cx),
        TypeRecord::Primitive(p) => scalar_to_vm(v, *p, at),
        TypeRecord::NdArray(a) if a.is_numeric() => ndarray_to_vm(v, a, t, at, cx),
        TypeRecord::NdArray(a) => ref_array_to_vm(v, a, t, at, cx),
        TypeRecord::SList(ts) | TypeRecord::STuple(ts) => {
            let Some(items) = v.as_sequence() else {
                return Err(at.kind_err(t, describe(v)));
            };
            if items.len() != ts.len() {
                return Err(at.err_in(t, CallErrorKind::Length { expected: ts.len(), got: items.len() }));
            }
            let mut l = VmList::variants(ts.len());
            for (i, (item, ty)) in items.iter().zip(ts).enumerate() {
                l.push(to_vm(item, ty, &at.index(i)?, cx)?)?;
            }
            Ok(Variant::list(l))
        }
        TypeRecord::SDict(es) | TypeRecord::SDictKwargs(es) => {
            let Value::Dict(d) = v else {
                return Err(at.kind_err(t, describe(v)));
            };
            let mut l = VmList::variants(es.len());
            for (k, ty) in es {
                let Some(item) = d.get(k) else {
                    return Err(at.err_in(t, CallErrorKind::MissingKey(k.clone())));
                };
                l.push(to_vm(item, ty, &at.name(k)?, cx)?)?;
            }
            if d.len() != es.len()
                && let Some(k) = d.keys().find(|k| !es.iter().any(|(e, _)| e == *k))
            {
                return Err(at.err_in(t, CallErrorKind::UnexpectedKey(k.clone())));
            }
            Ok(Variant::list(l))
        }
        TypeRecord::PyHomogeneousList(elem) => {
            let et = element_type_of(elem);
            let bytes_ok = matches!(**elem, TypeRecord::Primitive(Primitive::Int(8)));
            match v {
                Value::Str(s) if bytes_ok => Ok(Variant::list(VmList::from_bytes(s.as_bytes()))),
                Value::Bytes(b) if bytes_ok => Ok(Variant::list(VmList::from_bytes(b))),
                Value::List(items) | Value::Tuple(items) => {
                    let mut l = VmList::with_capacity(et, items.len());
                    for (i, item) in items.iter().enumerate() {
                        let at = at.index(i)?;
                        let x = to_vm(item, elem, &at, cx)?;
                        if !l.accepts(&x) {
                            return Err(at.kind_err(l.element_type(), x.type_description()));
                        }
                        l.push(x)?;
                    }
                    Ok(Variant::list(l))
                }
                _ => Err(at.kind_err(t, describe(v))),
            }
        }
    }
}

fn dynamic_to_vm<'v>(v: &'v Value<'_>, at: &At<'_>) -> Result<Variant<'v>, Error> {
    Ok(match v {
        Value::None => Variant::None,
        Value::Bool(b) => Variant::I64(i64::from(*b)),
        Value::Int(i) => Variant::I64(*i),
        Value::Float(x) => Variant::F64(*x),
        Value::Str(s) => Variant::list(VmList::from_bytes(s.as_bytes())),
        Value::Bytes(b) => Variant::list(VmList::from_bytes(b)),
        Value::List(items) | Value::Tuple(items) => {
            let mut l = VmList::variants(items.len());
            for (i, item) in items.iter().enumerate() {
                l.push(dynamic_to_vm(item, &at.index(i)?)?)?;
            }
            Variant::list(l)
        }
        Value::Dict(d) => {
            let mut entries: Vec<(&Key, &Value<'_>)> = d.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut l = VmList::variants(entries.len());
            for (k, item) in entries {
                l.push(dynamic_to_vm(item, &at.name(k)?)?)?;
            }
            Variant::list(l)
        }
        Value::Array(a) => Variant::buffer_view(BufferView::from_array(a.view())?),
    })
}

/// A host number: an integer (wide enough for every integer dtype) or a float.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    I(i128),
    F(f64),
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::I(i) => write!(f, "{i}"),
            Num::F(x) => write!(f, "{x:?}"),
        }
    }
}

/// The number of a scalar host value (int, float, bool, or a rank-0 array).
fn num_of(v: &Value<'_>) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::I((*i).into())),
        Value::Bool(b) => Some(Num::I((*b).into())),
        Value::Float(x) => Some(Num::F(*x)),
        Value::Array(a) if a.rank() == 0 => {
            let bytes = a.as_bytes()?;
            Some(read_num(a.dtype(), bytes))
        }
        _ => None,
    }
}

fn int_range(bits: u32) -> (i128, i128) {
    if bits == 1 {
        return (0, 1);
    }
    let half = 1i128 << (bits.min(64) - 1);
    (-half, half - 1)
}

fn scalar_to_vm<'v>(v: &Value<'_>, p: Primitive, at: &At<'_>) -> Result<Variant<'v>, Error> {
    let Some(vt) = value_type_of(p) else {
        return Err(at.kind_err("a record of a VM value type (i1, i8, i16, i32, i64, f32, f64)", p));
    };
    let n = match num_of(v) {
        Some(n) => n,
        None => return Err(at.kind_err(p, describe(v))),
    };
    if let Primitive::Int(bits) = p {
        let Num::I(i) = n else {
            return Err(at.kind_err(p, describe(v)));
        };
        let (lo, hi) = int_range(bits);
        if i < lo || i > hi {
            return Err(out_of_range(at, p, lo, hi, i));
        }
        // In range for the width, so the narrowing casts are exact.
        return Ok(match vt {
            ValueType::I8 => Variant::I8(i as i8),
            ValueType::I16 => Variant::I16(i as i16),
            ValueType::I32 => Variant::I32(i as i32),
            _ => Variant::I64(i as i64),
        });
    }
    let x = match n {
        Num::F(x) => x,
        Num::I(i) => i as f64,
    };
    Ok(match vt {
        ValueType::F32 => {
            if x.is_finite() && !(x as f32).is_finite() {
                return Err(at.err(CallErrorKind::OutOfRange { expected: "f32".into(), got: format!("{x:?}").into() }));
            }
            Variant::F32(x as f32)
        }
        _ => Variant::F64(x),
    })
}

/// True when a host array of dtype `got` passes for record dtype `want`
/// unchanged: the same type, or the other signedness of a signless width.
fn dtype_passes(want: DType, got: DType) -> bool {
    use ScalarType as S;
    want == got
        || matches!(
            (want, got),
            (DType::Scalar(S::I8), DType::Scalar(S::U8))
                | (DType::Scalar(S::I16), DType::Scalar(S::U16))
                | (DType::Scalar(S::I32), DType::Scalar(S::U32))
                | (DType::Scalar(S::I64), DType::Scalar(S::U64))
        )
}

fn shape_fits(a: &NdArrayType, shape: &[usize]) -> bool {
    match &a.dims {
        None => true,
        Some(dims) => {
            dims.len() == shape.len() && dims.iter().zip(shape).all(|(d, &n)| d.is_none_or(|d| d == n as u64))
        }
    }
}

fn record_dtype(a: &NdArrayType, t: &TypeRecord, at: &At<'_>) -> Result<Option<DType>, Error> {
    match &*a.element {
        TypeRecord::Primitive(p) => match p.dtype() {
            Some(d) => Ok(Some(d)),
            None => Err(at.kind_err("an ndarray record of a host element type", t)),
        },
        _ => Ok(None),
    }
}

fn ndarray_to_vm<'v>(
    v: &'v Value<'_>,
    a: &NdArrayType,
    t: &TypeRecord,
    at: &At<'_>,
    cx: Conv,
) -> Result<Variant<'v>, Error> {
    let want = record_dtype(a, t, at)?;
    match v {
        Value::Array(arr) => {
            if !shape_fits(a, arr.shape()) {
                return Err(misfit(at, t, a, want, arr.dtype(), arr.shape()));
            }
            match want {
                Some(w) if !dtype_passes(w, arr.dtype()) => {
                    if !cx.casts {
                        return Err(misfit(at, t, a, want, arr.dtype(), arr.shape()));
                    }
                    Ok(Variant::buffer_view(BufferView::new(cast_array(arr, w, at)?)?))
                }
                _ => Ok(Variant::buffer_view(BufferView::from_array(arr.view())?)),
            }
        }
        _ if a.rank() == Some(0) && want.is_some() => match num_of(v) {
            Some(n) => {
                let d = want.unwrap_or(DType::F32);
                let arr = array_of_nums(d, &[], &[n], at)?;
                Ok(Variant::buffer_view(BufferView::new(arr)?))
            }
            None => Err(at.kind_err(t, describe(v))),
        },
        _ => Err(at.kind_err(t, describe(v))),
    }
}

fn ref_array_to_vm<'v>(
    v: &'v Value<'_>,
    a: &NdArrayType,
    t: &TypeRecord,
    at: &At<'_>,
    cx: Conv,
) -> Result<Variant<'v>, Error> {
    let Some(rank) = a.rank() else {
        return Err(at.kind_err("an ndarray record of references with a known rank", t));
    };
    let mut shape: Vec<Option<usize>> = vec![None; rank];
    let mut values = VmList::with_capacity(element_type_of(&a.element), 0);
    gather_refs(v, 0, &mut shape, &mut values, &a.element, t, at, cx)?;
    // A level below an empty one is never seen: its extent is the record's
    // static dim if there is one, else 0.
    let declared = a.dims.as_deref().unwrap_or_default();
    let shape: Vec<usize> = shape
        .into_iter()
        .enumerate()
        .map(|(i, d)| {
            d.or_else(|| declared.get(i).copied().flatten().and_then(|n| usize::try_from(n).ok())).unwrap_or(0)
        })
        .collect();
    if let Some(kind) = array_misfit(a, None, DType::Bool, &shape) {
        return Err(at.err_in(t, kind));
    }
    let mut dims = VmList::with_capacity(ListElementType::Value(ValueType::I64), rank);
    for &d in &shape {
        let d = i64::try_from(d).map_err(|_| at.kind_err("dims that fit in i64", d))?;
        dims.push(Variant::I64(d))?;
    }
    let mut pair = VmList::variants(2);
    pair.push(Variant::list(values))?;
    pair.push(Variant::list(dims))?;
    Ok(Variant::list(pair))
}

/// Walks `rank` levels of nested lists, checking that they are
/// rectangular, and converts the leaves in C order.
#[allow(clippy::too_many_arguments)]
fn gather_refs<'v>(
    v: &'v Value<'_>,
    level: usize,
    shape: &mut [Option<usize>],
    values: &mut VmList<'v>,
    elem: &TypeRecord,
    t: &TypeRecord,
    at: &At<'_>,
    cx: Conv,
) -> Result<(), Error> {
    if level == shape.len() {
        let x = to_vm(v, elem, at, cx)?;
        if !values.accepts(&x) {
            return Err(at.kind_err(values.element_type(), x.type_description()));
        }
        return values.push(x);
    }
    let Some(items) = v.as_sequence() else {
        return Err(at.kind_err(format!("nested lists {} deep ({t})", shape.len()), describe(v)));
    };
    match shape[level] {
        None => shape[level] = Some(items.len()),
        Some(n) if n != items.len() => {
            return Err(at.err_in(&"a rectangular array", CallErrorKind::Length { expected: n, got: items.len() }));
        }
        Some(_) => {}
    }
    for (i, item) in items.iter().enumerate() {
        gather_refs(item, level + 1, shape, values, elem, t, &at.index(i)?, cx)?;
    }
    Ok(())
}

// ---- element casts ---------------------------------------------------------------

fn read_num(d: DType, b: &[u8]) -> Num {
    use ScalarType as S;
    fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&b[..N]);
        a
    }
    match d {
        DType::Bool => Num::I(i128::from(b[0] != 0)),
        DType::Float8(f) => Num::F(f.to_f32(b[0]).into()),
        DType::Scalar(s) => match s {
            S::F32 => Num::F(f32::from_ne_bytes(arr(b)).into()),
            S::F64 => Num::F(f64::from_ne_bytes(arr(b))),
            S::F16 => Num::F(half::f16::from_ne_bytes(arr(b)).to_f64()),
            S::BF16 => Num::F(half::bf16::from_ne_bytes(arr(b)).to_f64()),
            S::I8 => Num::I(i8::from_ne_bytes(arr(b)).into()),
            S::I16 => Num::I(i16::from_ne_bytes(arr(b)).into()),
            S::I32 => Num::I(i32::from_ne_bytes(arr(b)).into()),
            S::I64 => Num::I(i64::from_ne_bytes(arr(b)).into()),
            S::U8 => Num::I(u8::from_ne_bytes(arr(b)).into()),
            S::U16 => Num::I(u16::from_ne_bytes(arr(b)).into()),
            S::U32 => Num::I(u32::from_ne_bytes(arr(b)).into()),
            S::U64 => Num::I(u64::from_ne_bytes(arr(b)).into()),
        },
    }
}

/// An integer value of a number, when it is one exactly.
fn exact_int(n: Num) -> Option<i128> {
    match n {
        Num::I(i) => Some(i),
        Num::F(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e38 => Some(x as i128),
        Num::F(_) => None,
    }
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::I(i) => i as f64,
        Num::F(x) => x,
    }
}

/// Builds an array of dtype `d` from numbers, value-checked: integers must
/// fit (floats must be integral), finite floats must stay finite, bools
/// are 0 or 1. Int-to-float and f64-to-f32 round to nearest.
fn array_of_nums(d: DType, shape: &[usize], nums: &[Num], at: &At<'_>) -> Result<Array<'static>, Error> {
    use ScalarType as S;
    let bad = |k: usize, n: Num| {
        at.kind_err(format_args!("values representable as {d}"), format_args!("{n} at flat index {k}"))
    };
    macro_rules! ints {
        ($t:ty) => {{
            let v = nums
                .iter()
                .enumerate()
                .map(|(k, &n)| exact_int(n).and_then(|i| <$t>::try_from(i).ok()).ok_or_else(|| bad(k, n)))
                .collect::<Result<Vec<$t>, _>>()?;
            Array::from_vec(shape, v)
        }};
    }
    macro_rules! floats {
        ($t:ty, $from:expr) => {{
            let v = nums
                .iter()
                .enumerate()
                .map(|(k, &n)| {
                    let x = as_f64(n);
                    let y: $t = $from(x);
                    if x.is_finite() && !y.is_finite() { Err(bad(k, n)) } else { Ok(y) }
                })
                .collect::<Result<Vec<$t>, _>>()?;
            Array::from_vec(shape, v)
        }};
    }
    match d {
        DType::Float8(f) => {
            let v = nums
                .iter()
                .enumerate()
                .map(|(k, &n)| f.from_f64(as_f64(n)).ok_or_else(|| bad(k, n)))
                .collect::<Result<Vec<u8>, _>>()?;
            Array::from_float8_bits(f, shape, v)
        }
        DType::Bool => {
            let v = nums
                .iter()
                .enumerate()
                .map(|(k, &n)| match exact_int(n) {
                    Some(0) => Ok(false),
                    Some(1) => Ok(true),
                    _ => Err(bad(k, n)),
                })
                .collect::<Result<Vec<bool>, _>>()?;
            Array::from_vec(shape, v)
        }
        DType::Scalar(s) => match s {
            S::F32 => floats!(f32, |x: f64| x as f32),
            S::F64 => floats!(f64, |x: f64| x),
            S::F16 => floats!(half::f16, half::f16::from_f64),
            S::BF16 => floats!(half::bf16, half::bf16::from_f64),
            S::I8 => ints!(i8),
            S::I16 => ints!(i16),
            S::I32 => ints!(i32),
            S::I64 => ints!(i64),
            S::U8 => ints!(u8),
            S::U16 => ints!(u16),
            S::U32 => ints!(u32),
            S::U64 => ints!(u64),
        },
    }
}

fn cast_array(src: &Array<'_>, to: DType, at: &At<'_>) -> Result<Array<'static>, Error> {
    let dense;
    let bytes = match src.as_bytes() {
        Some(b) => b,
        None => {
            dense = src.to_contiguous()?;
            dense.as_bytes().unwrap_or_default()
        }
    };
    let es = src.dtype().size();
    let nums: Vec<Num> = bytes.chunks_exact(es).map(|c| read_num(src.dtype(), c)).collect();
    array_of_nums(to, src.shape(), &nums, at)
}

// ---- VM -> host ------------------------------------------------------------------

fn take_list<'a>(x: Variant<'a>, t: &dyn fmt::Display, at: &At<'_>) -> Result<VmList<'a>, Error> {
    match x {
        Variant::Ref(VmRef::List(l)) => Ok(*l),
        x => Err(at.kind_err(format!("a list ({t})"), x.type_description())),
    }
}

fn from_vm<'a>(x: Variant<'a>, t: &TypeRecord, at: &At<'_>, cx: Conv) -> Result<Value<'a>, Error> {
    match t {
        TypeRecord::Unknown => dynamic_from_vm(x, at),
        TypeRecord::Null => match x {
            Variant::None => Ok(Value::None),
            x => Err(at.kind_err("none (a null slot)", x.type_description())),
        },
        TypeRecord::Named(_, inner) => from_vm(x, inner, at, cx),
        TypeRecord::Primitive(p @ Primitive::Int(bits)) => {
            let Some(i) = x.as_i64() else {
                return Err(at.kind_err(p, x.type_description()));
            };
            let (lo, hi) = int_range(*bits);
            if i128::from(i) < lo || i128::from(i) > hi {
                return Err(out_of_range(at, *p, lo, hi, i.into()));
            }
            Ok(if *bits == 1 { Value::Bool(i == 1) } else { Value::Int(i) })
        }
        TypeRecord::Primitive(p) => match x.as_f64() {
            Some(f) if matches!(p, Primitive::Float(32 | 64)) => Ok(Value::Float(f)),
            _ => Err(at.kind_err(p, x.type_description())),
        },
        TypeRecord::NdArray(a) if a.is_numeric() => {
            let want = record_dtype(a, t, at)?;
            let bv = match x {
                Variant::Ref(VmRef::BufferView(b)) => *b,
                x => return Err(at.kind_err(t, x.type_description())),
            };
            let arr = bv.into_array();
            if !shape_fits(a, arr.shape()) {
                return Err(misfit(at, t, a, want, arr.dtype(), arr.shape()));
            }
            match want {
                Some(w) if !dtype_passes(w, arr.dtype()) => {
                    if !cx.casts {
                        return Err(misfit(at, t, a, want, arr.dtype(), arr.shape()));
                    }
                    Ok(Value::from(cast_array(&arr, w, at)?))
                }
                _ => Ok(Value::from(arr)),
            }
        }
        TypeRecord::NdArray(a) => ref_array_from_vm(x, a, t, at, cx),
        TypeRecord::SList(_) | TypeRecord::STuple(_) | TypeRecord::SDict(_) | TypeRecord::SDictKwargs(_) => {
            let l = take_list(x, t, at)?;
            structure_from_vm(l, t, at, cx)
        }
        TypeRecord::PyHomogeneousList(elem) => {
            let l = take_list(x, t, at)?;
            let mut out = Vec::with_capacity(l.len());
            for (i, item) in l.into_items().into_iter().enumerate() {
                out.push(from_vm(item, elem, &at.index(i)?, cx)?);
            }
            Ok(Value::List(out))
        }
    }
}

/// The value of a structure record from the list of its slots.
fn structure_from_vm<'a>(l: VmList<'a>, t: &TypeRecord, at: &At<'_>, cx: Conv) -> Result<Value<'a>, Error> {
    let n = match t {
        TypeRecord::SList(ts) | TypeRecord::STuple(ts) => ts.len(),
        TypeRecord::SDict(es) | TypeRecord::SDictKwargs(es) => es.len(),
        _ => return Err(at.kind_err("a structure record", t)),
    };
    if l.len() != n {
        return Err(at.err_in(t, CallErrorKind::Length { expected: n, got: l.len() }));
    }
    let items = l.into_items().into_iter();
    match t {
        TypeRecord::SList(ts) | TypeRecord::STuple(ts) => {
            let mut out = Vec::with_capacity(n);
            for (i, (item, ty)) in items.zip(ts).enumerate() {
                out.push(from_vm(item, ty, &at.index(i)?, cx)?);
            }
            Ok(if matches!(t, TypeRecord::SList(_)) { Value::List(out) } else { Value::Tuple(out) })
        }
        TypeRecord::SDict(es) | TypeRecord::SDictKwargs(es) => {
            let mut d = Dict::with_capacity(n);
            for (item, (k, ty)) in items.zip(es) {
                // Record keys are unique (the parser checks), so appending is right.
                d.push_unique(k.clone(), from_vm(item, ty, &at.name(k)?, cx)?);
            }
            Ok(Value::Dict(d))
        }
        _ => Err(at.kind_err("a structure record", t)),
    }
}

fn ref_array_from_vm<'a>(
    x: Variant<'a>,
    a: &NdArrayType,
    t: &TypeRecord,
    at: &At<'_>,
    cx: Conv,
) -> Result<Value<'a>, Error> {
    let pair = take_list(x, t, at)?;
    if pair.len() != 2 {
        return Err(
            at.kind_err(format!("a pair [values, dims] ({t})"), format!("a list of {}", count(pair.len(), "item")))
        );
    }
    let mut it = pair.into_items().into_iter();
    let (values, dims) = match (it.next(), it.next()) {
        (Some(v), Some(d)) => (v, d),
        _ => return Err(at.kind_err("a pair [values, dims]", "fewer items")),
    };
    let values = take_list(values, &"values", &at.index(0)?)?;
    let dims_at = at.index(1)?;
    let dims = take_list(dims, &"dims", &dims_at)?;
    let mut shape = Vec::with_capacity(dims.len());
    for (i, d) in dims.items().iter().enumerate() {
        match d.as_i64().map(usize::try_from) {
            Some(Ok(n)) => shape.push(n),
            _ => return Err(dims_at.index(i)?.kind_err("a dim (an integer >= 0)", d)),
        }
    }
    if let Some(kind) = array_misfit(a, None, DType::Bool, &shape) {
        return Err(at.err_in(t, kind));
    }
    let count = crate::array::element_count(&shape)?;
    if count != values.len() {
        return Err(at.kind_err(format!("{count} values for dims {shape:?}"), format!("{} values", values.len())));
    }
    let mut leaves = Vec::with_capacity(count);
    for (k, item) in values.into_items().into_iter().enumerate() {
        leaves.push(from_vm(item, &a.element, &at.index(k)?, cx)?);
    }
    Ok(nest(leaves, &shape))
}

/// Nested lists of `shape` from leaves in C order (lengths checked by the caller).
fn nest<'a>(leaves: Vec<Value<'a>>, shape: &[usize]) -> Value<'a> {
    match shape.split_first() {
        None => leaves.into_iter().next().unwrap_or_default(),
        Some((&n, rest)) => {
            let inner: usize = rest.iter().product();
            if inner == 0 || n == 0 {
                return Value::List((0..n).map(|_| nest(Vec::new(), rest)).collect());
            }
            let mut it = leaves.into_iter();
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                let chunk: Vec<Value<'a>> = it.by_ref().take(inner).collect();
                out.push(nest(chunk, rest));
            }
            Value::List(out)
        }
    }
}

fn dynamic_from_vm<'a>(x: Variant<'a>, at: &At<'_>) -> Result<Value<'a>, Error> {
    Ok(match x {
        Variant::None => Value::None,
        Variant::I8(v) => Value::Int(v.into()),
        Variant::I16(v) => Value::Int(v.into()),
        Variant::I32(v) => Value::Int(v.into()),
        Variant::I64(v) => Value::Int(v),
        Variant::F32(v) => Value::Float(v.into()),
        Variant::F64(v) => Value::Float(v),
        Variant::Ref(VmRef::BufferView(b)) => Value::from(b.into_array()),
        Variant::Ref(VmRef::List(l)) => {
            if let Some(bytes) = l.to_bytes() {
                return Ok(match String::from_utf8(bytes) {
                    Ok(s) => Value::Str(s),
                    Err(e) => Value::Bytes(e.into_bytes()),
                });
            }
            let mut out = Vec::with_capacity(l.len());
            for (i, item) in l.into_items().into_iter().enumerate() {
                out.push(dynamic_from_vm(item, &at.index(i)?)?);
            }
            Value::List(out)
        }
        Variant::Ref(VmRef::Opaque(o)) => return Err(at.kind_err("a value the host can hold", o.type_name())),
    })
}

#[cfg(test)]
mod tests;
