//! [`Function`]: one compiled function, whatever runs it, called with host
//! values. A [`Backend`] (MLIR native code in the `fnabi-mlir` crate, the
//! IREE runtime in the `fnabi-iree` crate) binds positional and keyword
//! arguments to the function's input structure, marshals them to its flat
//! calling convention, calls it, and rebuilds the results as a host
//! [`Value`].
//!
//! Results: a function whose results are described by a structure (a `sip`
//! signature, `iree.abi` records) returns that structure; otherwise zero
//! results are `None`, one result is the value itself and several are a
//! tuple.
//!
//! The MLIR backend (`fnabi_mlir::MlirModule::function`) and the IREE
//! backend (`fnabi_iree::IreeModule::function`) hand out `Function`s; the
//! README and those crates show calls.

use crate::error::Error;
use crate::value::{Dict, Value};
use std::fmt;
use std::sync::Arc;

/// What runs a [`Function`]: implemented by each backend (the [`Function`]
/// example implements one).
///
/// `call` receives the caller's arguments unbound: the backend binds them
/// (by position and keyword, with arity errors), checks every value against
/// what the function's signature states before native code runs (see
/// [`Function`] for what that is and is not), calls, and returns owned
/// results.
///
/// A backend that negates one `i64`, taken by position or as keyword `x`:
///
/// ```
/// use fnabi_core::function::{Backend, PreparedBackend};
/// use fnabi_core::{Dict, Error, Function, Value};
///
/// struct Neg;
/// impl PreparedBackend for Neg {
///     fn call(&mut self, args: Vec<Value<'_>>, kw: Dict<'_>) -> Result<Value<'static>, Error> {
///         let mut xs = Vec::new();
///         for a in args {
///             xs.push(i64::try_from(a)?);
///         }
///         for (key, value) in kw {
///             if &*key != "x" {
///                 return Err(Error::invalid_argument(format!("unexpected keyword {key}")));
///             }
///             xs.push(i64::try_from(value)?);
///         }
///         let [x] = <[i64; 1]>::try_from(xs).map_err(|_| Error::invalid_argument("neg takes one argument, x"))?;
///         Ok(Value::from(-x))
///     }
///     fn call_bound(&mut self, inputs: &Value<'_>) -> Result<Value<'static>, Error> {
///         self.call(inputs.as_sequence().unwrap_or_default().to_vec(), Dict::new())
///     }
/// }
/// impl Backend for Neg {
///     fn name(&self) -> &str { "neg" }
///     fn describe(&self) -> String { "neg(x: i64) -> i64".into() }
///     fn call(&self, args: Vec<Value<'_>>, kw: Dict<'_>) -> Result<Value<'static>, Error> {
///         PreparedBackend::call(&mut Neg, args, kw)
///     }
///     fn prepare(&self) -> Box<dyn PreparedBackend + '_> { Box::new(Neg) }
/// }
///
/// let neg = Function::new(Neg);
/// assert_eq!(neg.name(), "neg");
/// assert_eq!(neg.call([Value::from(5i64)]).unwrap(), Value::from(-5i64));
/// let mut kw = Dict::new();
/// kw.insert("x", Value::from(7i64));
/// assert_eq!(neg.call_kw(vec![], kw).unwrap(), Value::from(-7i64));
/// assert!(neg.call([]).is_err()); // arity is the backend's to check
/// ```
pub trait Backend: Send + Sync {
    /// The function's name.
    fn name(&self) -> &str;

    /// A one-line, human-readable signature (for messages and the CLI).
    fn describe(&self) -> String;

    /// Calls the function once.
    fn call(&self, args: Vec<Value<'_>>, kwargs: Dict<'_>) -> Result<Value<'static>, Error>;

    /// A call state that keeps its scratch memory (argument lists,
    /// descriptors, arenas) between calls, for hot loops. Calls through
    /// different prepared states may run on different threads at once.
    fn prepare(&self) -> Box<dyn PreparedBackend + '_>;

    /// The parameters as far as the signature types them, for reading
    /// loose inputs ([`crate::coerce`]); `None` when it says nothing.
    fn input_params(&self) -> Option<Vec<crate::coerce::InputParam>> {
        None
    }

    /// The type of what a call returns, as far as the signature says (a
    /// scalar is a 0-d array of its dtype; `None` when it says nothing):
    /// what a caller that prints or saves results needs to keep a scalar's
    /// element type (a [`Value::Float`] of an `f32` result is printed as
    /// the shortest decimal of that `f32`, and saved as one).
    fn result_type(&self) -> Option<crate::coerce::InputType> {
        None
    }

    /// Whether a call may write into the memory of an array argument (a
    /// memref-level function that updates an argument in place): a caller
    /// whose array memory must not be written (a read-only mapping, an
    /// immutable buffer) then passes a copy. `true` unless the backend
    /// knows that its code only reads its arguments.
    fn may_write_arguments(&self) -> bool {
        true
    }
}

/// A prepared call of a [`Backend`] (see [`Backend::prepare`]).
///
/// A prepared state keeps whatever it reuses between calls; this one
/// keeps a scratch vector (and counts its calls, to show it is the same
/// state each time):
///
/// ```
/// use fnabi_core::function::{Backend, PreparedBackend};
/// use fnabi_core::{Dict, Error, Function, Value};
///
/// #[derive(Default)]
/// struct SumState { scratch: Vec<f64>, calls: usize }
/// impl PreparedBackend for SumState {
///     fn call(&mut self, args: Vec<Value<'_>>, _: Dict<'_>) -> Result<Value<'static>, Error> {
///         self.calls += 1;
///         self.scratch.clear();
///         for a in &args {
///             self.scratch.push(f64::try_from(a)?);
///         }
///         Ok(Value::Tuple(vec![Value::from(self.scratch.iter().sum::<f64>()), Value::from(self.calls as i64)]))
///     }
///     fn call_bound(&mut self, inputs: &Value<'_>) -> Result<Value<'static>, Error> {
///         self.call(inputs.as_sequence().unwrap_or_default().to_vec(), Dict::new())
///     }
/// }
/// struct Sum;
/// impl Backend for Sum {
///     fn name(&self) -> &str { "sum" }
///     fn describe(&self) -> String { "sum(*f64) -> (f64, i64)".into() }
///     fn call(&self, args: Vec<Value<'_>>, kw: Dict<'_>) -> Result<Value<'static>, Error> {
///         SumState::default().call(args, kw)
///     }
///     fn prepare(&self) -> Box<dyn PreparedBackend + '_> { Box::new(SumState::default()) }
/// }
///
/// let sum = Function::new(Sum);
/// let mut p = sum.prepare();
/// p.call([Value::from(1.0), Value::from(2.0)]).unwrap();
/// let out = p.call([Value::from(0.25), Value::from(0.5), Value::from(1.0)]).unwrap();
/// assert_eq!(out, Value::Tuple(vec![Value::Float(1.75), Value::from(2i64)])); // second call
/// ```
pub trait PreparedBackend: Send {
    /// Calls the function, reusing this state's scratch memory.
    fn call(&mut self, args: Vec<Value<'_>>, kwargs: Dict<'_>) -> Result<Value<'static>, Error>;

    /// Calls the function with inputs already shaped as its input
    /// structure: the tuple of positional arguments, or the dict a dict
    /// root binds (what [`StructureExt::bind`](crate::structure::StructureExt::bind) returns). Skips binding,
    /// so this is the fastest path for repeated calls.
    fn call_bound(&mut self, inputs: &Value<'_>) -> Result<Value<'static>, Error>;
}

/// A compiled function with its ABI, callable with host values.
///
/// Cheap to clone (shared); `Send + Sync`: calls from several threads run
/// at once, each with its own scratch memory.
///
/// # What a call checks
///
/// Before native code runs, every argument is checked against what the
/// function's signature states (its MLIR types, `f`/`sip` attributes or
/// `iree.abi` records): the structure (arity, keys, sequence lengths), each
/// leaf's kind, dtype and rank, every static dim, and that its memory holds
/// the shape and strides it claims. A wrong value is an [`Error`] naming the
/// argument's index path, expected and got.
///
/// **Not checked: relations between dynamic dims**, which no signature
/// states. `dyn_add(tensor<?x4xf32>, tensor<?x4xf32>)` needs its two `?`
/// equal; called with 3 and 2 rows, compiled code that does not check reads
/// past the second array (garbage or a crash). MLIR sources compiled with
/// runtime verification (`fnabi_mlir::CompileOptions::runtime_verification`,
/// the default of `fnabi run`) stop there with MLIR's message where an op
/// states the relation (linalg ops do); IREE modules must check it
/// themselves. Otherwise the caller keeps such relations.
///
/// # Example
///
/// A backend is what runs a `Function`; the MLIR and IREE crates provide
/// theirs. Here, a host-side one that adds its two `f32` arguments:
///
/// ```
/// use fnabi_core::function::{Backend, PreparedBackend};
/// use fnabi_core::{Array, Dict, Error, Function, Value};
///
/// struct Add;
/// impl PreparedBackend for Add {
///     fn call(&mut self, args: Vec<Value<'_>>, _: Dict<'_>) -> Result<Value<'static>, Error> {
///         let [a, b] = <[Value; 2]>::try_from(args).map_err(|_| Error::invalid_argument("two arguments"))?;
///         Ok(Value::from(Array::scalar(f32::try_from(a)? + f32::try_from(b)?)))
///     }
///     fn call_bound(&mut self, inputs: &Value<'_>) -> Result<Value<'static>, Error> {
///         self.call(inputs.as_sequence().unwrap_or_default().to_vec(), Dict::new())
///     }
/// }
/// impl Backend for Add {
///     fn name(&self) -> &str { "add" }
///     fn describe(&self) -> String { "add(f32, f32) -> f32".into() }
///     fn call(&self, args: Vec<Value<'_>>, kw: Dict<'_>) -> Result<Value<'static>, Error> {
///         PreparedBackend::call(&mut Add, args, kw)
///     }
///     fn prepare(&self) -> Box<dyn PreparedBackend + '_> { Box::new(Add) }
/// }
///
/// let add = Function::new(Add);
/// let y = add.call([Value::from(1.5f32), Value::from(Array::scalar(2.0f32))]).unwrap();
/// assert_eq!(f32::try_from(y).unwrap(), 3.5);
/// // call_serde takes and returns serde types: (f32, f32) in, f32 out.
/// let y: f32 = add.call_serde(&(1.0f32, 2.0f32)).unwrap();
/// assert_eq!(y, 3.0);
/// assert_eq!(format!("{add:?}"), "Function(add(f32, f32) -> f32)");
/// ```
#[derive(Clone)]
pub struct Function {
    backend: Arc<dyn Backend>,
}

impl Function {
    /// A function run by `backend`.
    pub fn new(backend: impl Backend + 'static) -> Function {
        Function { backend: Arc::new(backend) }
    }

    /// The function's name.
    pub fn name(&self) -> &str {
        self.backend.name()
    }

    /// A one-line, human-readable signature.
    pub fn describe(&self) -> String {
        self.backend.describe()
    }

    /// Calls with positional arguments.
    pub fn call<'a>(&self, args: impl IntoIterator<Item = Value<'a>>) -> Result<Value<'static>, Error> {
        self.backend.call(args.into_iter().collect(), Dict::new())
    }

    /// Calls with positional and keyword arguments.
    pub fn call_kw<'a>(&self, args: Vec<Value<'a>>, kwargs: Dict<'a>) -> Result<Value<'static>, Error> {
        self.backend.call(args, kwargs)
    }

    /// Calls with the arguments that a single host value stands for: a
    /// list or tuple is the positional arguments, a dict the keyword
    /// arguments, anything else the one positional argument. This is how
    /// `fnabi run --inputs FILE.json` reads a JSON file.
    pub fn call_value<'a>(&self, inputs: Value<'a>) -> Result<Value<'static>, Error> {
        let (args, kwargs) = split_arguments(inputs);
        self.backend.call(args, kwargs)
    }

    /// Calls with inputs of any serde type that serializes to the bound
    /// input structure (a tuple struct or tuple for positional arguments, a
    /// struct or map for a dict root), and deserializes the results into
    /// `O`, any serde type of the result structure: serde types in, serde
    /// types out (`O` may be [`Value`] to get the dynamic form, as
    /// [`Function::call`] returns it). [`crate::Array`] fields travel
    /// without copying their data; a 0-d array result deserializes into a
    /// Rust number too ([`crate::nest`] has the rules).
    pub fn call_serde<I: serde::Serialize, O: serde::de::DeserializeOwned>(&self, inputs: &I) -> Result<O, Error> {
        let bound = crate::nest::to_value(inputs)?;
        let out = self.backend.prepare().call_bound(&bound)?;
        Ok(crate::nest::from_value(out)?)
    }

    /// The parameters as far as the signature types them (see
    /// [`crate::coerce`]): what turns plain nested lists and bare numbers
    /// into the arrays the function expects.
    pub fn input_params(&self) -> Option<Vec<crate::coerce::InputParam>> {
        self.backend.input_params()
    }

    /// The type of what a call returns, as far as the signature says (see
    /// [`Backend::result_type`]).
    pub fn result_type(&self) -> Option<crate::coerce::InputType> {
        self.backend.result_type()
    }

    /// Whether a call may write into an array argument's memory (see
    /// [`Backend::may_write_arguments`]).
    pub fn may_write_arguments(&self) -> bool {
        self.backend.may_write_arguments()
    }

    /// A prepared call that reuses its scratch memory across calls.
    pub fn prepare(&self) -> PreparedCall<'_> {
        PreparedCall { inner: self.backend.prepare() }
    }

    /// The backend.
    pub fn backend(&self) -> &dyn Backend {
        &*self.backend
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Function({})", self.describe())
    }
}

/// A prepared call of a [`Function`] (see [`Function::prepare`]): what a
/// hot loop holds. The `Function` example's backend, called in a loop:
///
/// ```
/// # use fnabi_core::function::{Backend, PreparedBackend};
/// # use fnabi_core::{Array, Dict, Error, Function, Value};
/// # struct Add;
/// # impl PreparedBackend for Add {
/// #     fn call(&mut self, args: Vec<Value<'_>>, _: Dict<'_>) -> Result<Value<'static>, Error> {
/// #         Ok(Value::from(f64::try_from(&args[0])? + f64::try_from(&args[1])?))
/// #     }
/// #     fn call_bound(&mut self, inputs: &Value<'_>) -> Result<Value<'static>, Error> {
/// #         self.call(inputs.as_sequence().unwrap_or_default().to_vec(), Dict::new())
/// #     }
/// # }
/// # impl Backend for Add {
/// #     fn name(&self) -> &str { "add" }
/// #     fn describe(&self) -> String { "add(f64, f64) -> f64".into() }
/// #     fn call(&self, args: Vec<Value<'_>>, kw: Dict<'_>) -> Result<Value<'static>, Error> {
/// #         PreparedBackend::call(&mut Add, args, kw)
/// #     }
/// #     fn prepare(&self) -> Box<dyn PreparedBackend + '_> { Box::new(Add) }
/// # }
/// let add = Function::new(Add);
/// let mut prepared = add.prepare();
/// let mut total = Value::from(0.0);
/// for x in [1.0, 2.0, 3.0] {
///     total = prepared.call([total, Value::from(x)]).unwrap();
/// }
/// assert_eq!(total, Value::Float(6.0));
/// // call_bound skips binding: the inputs already are the input structure.
/// let bound = Value::Tuple(vec![Value::from(1.0), Value::from(0.5)]);
/// assert_eq!(prepared.call_bound(&bound).unwrap(), Value::Float(1.5));
/// ```
pub struct PreparedCall<'f> {
    inner: Box<dyn PreparedBackend + 'f>,
}

impl PreparedCall<'_> {
    /// Calls with positional arguments.
    pub fn call<'a>(&mut self, args: impl IntoIterator<Item = Value<'a>>) -> Result<Value<'static>, Error> {
        self.inner.call(args.into_iter().collect(), Dict::new())
    }

    /// Calls with positional and keyword arguments.
    pub fn call_kw<'a>(&mut self, args: Vec<Value<'a>>, kwargs: Dict<'a>) -> Result<Value<'static>, Error> {
        self.inner.call(args, kwargs)
    }

    /// Calls with inputs already shaped as the input structure (see
    /// [`PreparedBackend::call_bound`]).
    pub fn call_bound(&mut self, inputs: &Value<'_>) -> Result<Value<'static>, Error> {
        self.inner.call_bound(inputs)
    }
}

/// Splits one host value into call arguments: a list or tuple is the
/// positional arguments, a dict the keyword arguments, anything else one
/// positional argument.
pub fn split_arguments(inputs: Value<'_>) -> (Vec<Value<'_>>, Dict<'_>) {
    match inputs {
        Value::List(v) | Value::Tuple(v) => (v, Dict::new()),
        Value::Dict(d) => (Vec::new(), d),
        v => (vec![v], Dict::new()),
    }
}

/// Packs a function's flat results without a result structure: none is
/// `None`, one is the value, more are a tuple.
pub fn pack_results(mut results: Vec<Value<'static>>) -> Value<'static> {
    match results.len() {
        0 => Value::None,
        1 => results.pop().unwrap_or_default(),
        _ => Value::Tuple(results),
    }
}
