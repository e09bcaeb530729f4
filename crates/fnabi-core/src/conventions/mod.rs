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
//!
//! Arguments bind through the same [`Plan`](crate::structure::Plan) as
//! MLIR's: a function's parameter records compile once into a
//! [`RecordPlan`], whose containers are the structure records and whose
//! leaves are the other records; [`FunctionAbi::pack_args`] is one walk of
//! it (containers become `list<?>`s, leaves go through the converter of
//! their record), and a backend's fast path walks the same plan. Results
//! unpack along the plans of their records, built from the VM lists.
use fnabi_abi::limits::MAX_DEPTH;

use crate::array::Array;
use crate::bind::bind_arguments;
pub use crate::error::CallError;
use crate::error::{CallErrorKind, CallSide, Error};
use crate::value::{Key, Value};
use crate::vm::{
    BufferView, CallingConvention, ListElementType, RefType, ShapeDisplay, ValueType, Variant, VmList, VmRef,
};
use fnabi_abi::reflection::{Declaration, FunctionReflection, InvocationModel, NdArrayType, Primitive, TypeRecord};
use fnabi_abi::scalar::{DType, ScalarType};
use fnabi_abi::structure::{IndexPath, PathKey};
use std::fmt;

mod casts;
mod from_vm;
mod path;
mod record_plan;
mod to_vm;

use casts::*;
use from_vm::*;
use path::*;
use record_plan::Leaf;
pub use record_plan::RecordPlan;
use to_vm::*;

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
///
/// ```
/// use fnabi_abi::reflection::FunctionReflection;
/// use fnabi_core::conventions::{FunctionAbi, ParamType};
/// let f = FunctionReflection::parse(r#"{"a": [["ndarray", "f32", 2, null, 3]], "r": ["i64"], "v": 1}"#).unwrap();
/// let abi = FunctionAbi::from_reflection(&f);
/// let ty = &abi.params().unwrap()[0].ty;
/// assert!(matches!(ty, ParamType::Record(_)));
/// assert_eq!(ty.to_string(), "f32[?x3]");
/// assert_eq!(abi.results().unwrap()[0].to_string(), "i64");
/// ```
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
///
/// ```
/// use fnabi_abi::reflection::FunctionReflection;
/// use fnabi_core::conventions::FunctionAbi;
/// let f = FunctionReflection::parse(r#"{"a": ["i32", ["named", "alpha", "f32"]], "r": [], "v": 1}"#).unwrap();
/// let abi = FunctionAbi::from_reflection(&f);
/// let params = abi.params().unwrap();
/// assert_eq!(params[0].name, None);
/// assert_eq!(params[1].name.as_deref(), Some("alpha"));
/// assert_eq!(params[1].ty.to_string(), "f32");
/// ```
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
///
/// ```
/// use fnabi_abi::reflection::FunctionReflection;
/// use fnabi_core::conventions::{FunctionAbi, ResultPacking};
/// use fnabi_core::vm::{Variant, VmList};
/// use fnabi_core::Value;
/// let f = FunctionReflection::parse(r#"{"a": [], "r": [["stuple", "i32", "i32"]], "v": 1}"#).unwrap();
/// let abi = FunctionAbi::from_reflection(&f);
/// let pair = Value::Tuple(vec![Value::Int(1), Value::Int(2)]);
/// // IREE's flat reading: the tuple's two slots are the two VM results...
/// assert_eq!(abi.unpack_results(vec![Variant::I32(1), Variant::I32(2)]).unwrap(), pair);
/// // ...the literal one: the tuple is one VM list. Auto reads both.
/// let list = VmList::from_variants(vec![Variant::I32(1), Variant::I32(2)]);
/// assert_eq!(abi.unpack_results(vec![Variant::list(list.clone())]).unwrap(), pair);
/// let flat = abi.with_result_packing(ResultPacking::Flat);
/// assert!(flat.unpack_results(vec![Variant::list(list)]).is_err());
/// ```
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
///
/// ```
/// use fnabi_core::conventions::{AbiMode, FunctionAbi};
/// let abi = FunctionAbi::from_attrs([("iree.abi", r#"{"a": ["f32"], "r": [], "v": 1}"#)]).unwrap();
/// assert_eq!(abi.mode(), AbiMode::Reflection);
/// let none: [(&str, &str); 0] = [];
/// assert_eq!(FunctionAbi::from_attrs(none).unwrap().mode(), AbiMode::Dynamic);
/// ```
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
///
/// In dynamic mode values convert by their host kind, as IREE's runtime
/// does it; with records, keywords bind and values are checked:
///
/// ```
/// use fnabi_abi::reflection::FunctionReflection;
/// use fnabi_core::conventions::FunctionAbi;
/// use fnabi_core::vm::Variant;
/// use fnabi_core::Value;
/// let dynamic = FunctionAbi::dynamic();
/// let args = [Value::from(1), Value::from(2.5), Value::from("hi")];
/// let vm = dynamic.pack_args(&args).unwrap();
/// assert_eq!(vm.to_string(), "list<?>[i64 1, f64 2.5, list<i8>[i8 104, i8 105]]");
///
/// let f = FunctionReflection::parse(r#"{"a": ["i8", ["named", "scale", "f32"]], "r": ["i8"], "v": 1}"#).unwrap();
/// let abi = FunctionAbi::from_reflection(&f);
/// let args = abi.bind(vec![Value::from(3)], [("scale", Value::from(0.5))]).unwrap();
/// assert_eq!(abi.pack_args(&args).unwrap().to_string(), "list<?>[i8 3, f32 0.5]");
/// assert!(abi.pack_args(&[Value::from(250), Value::from(0.5)]).is_err()); // 250 > i8::MAX
/// assert_eq!(abi.unpack_results(vec![Variant::I8(-4)]).unwrap(), Value::Int(-4));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionAbi {
    mode: AbiMode,
    params: Option<Vec<Param>>,
    /// The parameters compiled (`None` in dynamic mode, or when they do
    /// not compile: `pack_args` then reports why).
    args_plan: Option<ArgsPlan>,
    results: Option<Vec<ParamType>>,
    /// The result records compiled (`None` in dynamic mode, or when one
    /// does not compile: `unpack_results` then reports why).
    results_plan: Option<ResultsPlan>,
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
            args_plan: None,
            results: None,
            results_plan: None,
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
        let params: Vec<Param> =
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
        let results: Vec<ParamType> = f.r.iter().map(|t| ParamType::Record(t.unnamed().clone())).collect();
        FunctionAbi {
            results_plan: ResultsPlan::of(&results),
            mode: AbiMode::Reflection,
            args_plan: ArgsPlan::of(&params),
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
        let params: Vec<Param> = d.args.iter().map(|p| Param { name: None, ty: ty(p) }).collect();
        let results: Vec<ParamType> = d.results.iter().map(ty).collect();
        FunctionAbi {
            mode: AbiMode::Declaration,
            args_plan: ArgsPlan::of(&params),
            params: Some(params),
            results_plan: ResultsPlan::of(&results),
            results: Some(results),
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

    /// The parameters compiled for packing (`None` in dynamic mode): the
    /// plan that [`pack_args`](FunctionAbi::pack_args) walks, for a
    /// backend's own fast path.
    pub fn record_plan(&self) -> Option<&RecordPlan> {
        self.args_plan.as_ref().map(|p| &*p.0)
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
                match &self.args_plan {
                    Some(plan) => plan.0.pack_args(args, &mut out, cx)?,
                    // Did not compile: why.
                    None => RecordPlan::of_params(ps)?.pack_args(args, &mut out, cx)?,
                }
            }
        }
        if let Some(cc) = &self.cconv {
            crate::vm::check_registers(CallSide::Argument, cc.args(), out.items(), self.model.fence_args())?;
        }
        Ok(out)
    }

    /// [`unpack_results`](Self::unpack_results) of a call that returned one
    /// VM value (most functions): the same host result, with no list made
    /// around the value unless the function's one result is a structure
    /// record (whose packing looks at the list).
    pub fn unpack_one_result<'a>(&self, x: Variant<'a>) -> Result<Value<'a>, Error> {
        match self.results.as_deref() {
            None => dynamic_from_vm(x, &At::root(&Root::Result(0))),
            Some([t]) if !matches!(t, ParamType::Record(r) if r.is_structure()) => {
                self.unpack_result(0, x, t, Conv { casts: self.casts })
            }
            Some(_) => self.unpack_results(vec![x]),
        }
    }

    /// Converts the VM results into the host result: none for no results,
    /// the value for one, a tuple for more (see [`ResultPacking`] for a
    /// single structure record).
    pub fn unpack_results<'a>(&self, mut results: Vec<Variant<'a>>) -> Result<Value<'a>, Error> {
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
                let at = At::root(&Root::Results);
                return match self.results_plan.as_ref().and_then(|p| p.0.first()).and_then(Option::as_ref) {
                    Some(plan) => plan.unpack_items(list, &at, cx),
                    None => RecordPlan::of_record(t)?.unpack_items(list, &at, cx),
                };
            }
        }
        // One result (most functions): unpacked as it is, with no list of
        // values collected around it.
        if let [t] = rs.as_slice()
            && results.len() == 1
            && let Some(x) = results.pop()
        {
            return self.unpack_result(0, x, t, cx);
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
            .map(|(i, (x, t))| self.unpack_result(i, x, t, cx))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(arity_pack(vals))
    }

    /// Result `i`, of type `t`, as a host value.
    fn unpack_result<'a>(&self, i: usize, x: Variant<'a>, t: &ParamType, cx: Conv) -> Result<Value<'a>, Error> {
        let root = Root::Result(i);
        let at = At::root(&root);
        match (t, self.results_plan.as_ref().and_then(|p| p.0.get(i)).and_then(Option::as_ref)) {
            (ParamType::Record(_), Some(plan)) => plan.unpack(x, &at, cx),
            (ParamType::Record(t), None) => RecordPlan::of_record(t)?.unpack(x, &at, cx),
            (ParamType::Opaque(name), _) => Err(at.kind_err("a value the host can hold", name)),
        }
    }
}

fn arity_pack(mut vals: Vec<Value<'_>>) -> Value<'_> {
    match vals.len() {
        0 => Value::None,
        1 => vals.pop().unwrap_or_default(),
        _ => Value::Tuple(vals),
    }
}

#[derive(Clone, Copy)]
struct Conv {
    casts: bool,
}

/// A function's compiled parameters (equal when the parameters are, which
/// [`FunctionAbi`] compares).
#[derive(Clone, Debug)]
struct ArgsPlan(std::sync::Arc<RecordPlan>);

impl ArgsPlan {
    fn of(params: &[Param]) -> Option<ArgsPlan> {
        RecordPlan::of_params(params).ok().map(|p| ArgsPlan(std::sync::Arc::new(p)))
    }
}

/// A function's compiled result records (`None` for an opaque one).
#[derive(Clone, Debug)]
struct ResultsPlan(std::sync::Arc<Vec<Option<RecordPlan>>>);

impl ResultsPlan {
    fn of(results: &[ParamType]) -> Option<ResultsPlan> {
        let plans = results
            .iter()
            .map(|r| match r {
                ParamType::Record(t) => RecordPlan::of_record(t).map(Some),
                ParamType::Opaque(_) => Ok(None),
            })
            .collect::<Result<Vec<_>, Error>>()
            .ok()?;
        Some(ResultsPlan(std::sync::Arc::new(plans)))
    }
}

impl PartialEq for ResultsPlan {
    fn eq(&self, _: &ResultsPlan) -> bool {
        true
    }
}

impl PartialEq for ArgsPlan {
    fn eq(&self, _: &ArgsPlan) -> bool {
        true
    }
}

/// Converts one host value as typed by `record`.
///
/// Errors name the position as `value [path]`; [`FunctionAbi::pack_args`]
/// names the argument instead.
pub fn value_to_vm<'v>(v: &'v Value<'_>, record: &TypeRecord) -> Result<Variant<'v>, Error> {
    RecordPlan::of_record(record)?.convert(v, &At::root(&Root::Value), Conv { casts: false })
}

/// Converts one VM value as typed by `record`.
pub fn value_from_vm<'a>(x: Variant<'a>, record: &TypeRecord) -> Result<Value<'a>, Error> {
    RecordPlan::of_record(record)?.unpack(x, &At::root(&Root::Value), Conv { casts: false })
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

#[cfg(test)]
mod tests;
