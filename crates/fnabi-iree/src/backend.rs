//! The IREE backend of [`fnabi_core::Function`]: binds and checks host values
//! through [`fnabi_core::conventions`] (every dtype, rank, static dim, range and
//! arity check happens before the runtime is entered), marshals them into
//! the runtime's argument list, invokes, waits for async functions, and
//! unpacks the results.
//!
//! A [`CallState`] holds what a call reuses: the argument and result lists,
//! the staged argument buffers and, for async functions, the semaphore that
//! signals completion. Prepared calls own one; plain calls borrow one from
//! a small pool in the function.

use crate::error::IreeError;
use crate::fastpack::{self, FastLeaf};
use crate::ffi::{self, check, sys};
use crate::list::{Marshal, OutputItems, OwnedRef, RtList, RtSink, read_outputs};
use crate::module::ModuleInner;
use crate::runtime::DeviceHandle;
use crate::staging::Staging;
use fnabi_abi::reflection::{InvocationModel, TypeRecord};
use fnabi_core::coerce::{InputParam, InputType};
use fnabi_core::conventions::{FunctionAbi, ParamType};
use fnabi_core::function::{Backend, PreparedBackend};
use fnabi_core::{Dict, Error, Value};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};

/// What one call reuses (see the [module docs](self)).
pub(crate) struct CallState {
    pub(crate) inputs: RtList,
    pub(crate) outputs: RtList,
    pub(crate) staging: Staging,
    /// Async functions: the semaphore the signal fences wait on, and the
    /// value the last call signalled.
    semaphore: Option<(NonNull<sys::iree_hal_semaphore_t>, u64)>,
    /// Async functions: the (always reached) fence they wait on.
    wait_fence: Option<OwnedRef>,
    /// The fast path's open lists (kept to reuse the allocation).
    stack: Vec<(usize, RtList)>,
}

// SAFETY: every member is an owned, ref-counted IREE object (lists, buffers,
// a semaphore, a fence) that may be used and released from any thread; a
// state is only used through `&mut`.
unsafe impl Send for CallState {}

impl Drop for CallState {
    fn drop(&mut self) {
        if let Some((s, _)) = self.semaphore.take() {
            // SAFETY: the state owns one reference to the semaphore.
            unsafe { sys::iree_hal_semaphore_release(s.as_ptr()) };
        }
    }
}

/// The fence an async call signals when it is done (owned).
pub(crate) struct SignalFence(NonNull<sys::iree_hal_fence_t>);

impl Drop for SignalFence {
    fn drop(&mut self) {
        // SAFETY: releases this value's reference.
        unsafe { sys::iree_hal_fence_release(self.0.as_ptr()) };
    }
}

impl SignalFence {
    /// Blocks until the call completes; its failure, if it failed.
    pub(crate) fn wait(self, module: &str, function: &str) -> Result<(), IreeError> {
        // SAFETY: the fence is live; an infinite wait returns when it is
        // reached or failed.
        check(
            unsafe {
                sys::iree_hal_fence_wait(
                    self.0.as_ptr(),
                    ffi::infinite_timeout(),
                    sys::iree_async_wait_flag_bits_e_IREE_ASYNC_WAIT_FLAG_NONE as _,
                )
            },
            || format!("waiting for {module}.{function}"),
        )
    }
}

impl CallState {
    /// Lists with room for `args` arguments.
    pub(crate) fn new(args: usize) -> Result<CallState, IreeError> {
        Ok(CallState {
            inputs: RtList::variants(args)?,
            outputs: RtList::variants(4)?,
            staging: Staging::default(),
            semaphore: None,
            wait_fence: None,
            stack: Vec::new(),
        })
    }

    /// Appends the wait and signal fences of a `coarse-fences` call: the
    /// call waits on a fence with no timepoints (reached at once) and
    /// signals the state's semaphore at its next value.
    pub(crate) fn push_fences(&mut self, device: &DeviceHandle) -> Result<SignalFence, IreeError> {
        let a = ffi::host_allocator();
        if self.wait_fence.is_none() {
            let mut f = std::ptr::null_mut();
            // SAFETY: out-pointer to a local.
            check(unsafe { sys::iree_hal_fence_create(1, a, &mut f) }, || "creating a wait fence".into())?;
            // SAFETY: the new fence's reference moves into the ref.
            self.wait_fence = Some(unsafe { OwnedRef::from_raw(sys::iree_hal_fence_move_ref(f)) });
        }
        let (sem, value) = match self.semaphore {
            Some(s) => s,
            None => {
                let mut s = std::ptr::null_mut();
                // SAFETY: the device is live; out-pointer to a local.
                check(
                    unsafe {
                        sys::iree_hal_semaphore_create(
                            device.device,
                            u64::MAX, // IREE_HAL_QUEUE_AFFINITY_ANY
                            0,
                            sys::iree_hal_semaphore_flag_bits_t_IREE_HAL_SEMAPHORE_FLAG_DEFAULT as _,
                            &mut s,
                        )
                    },
                    || "creating a semaphore".into(),
                )?;
                let s = NonNull::new(s).ok_or_else(|| {
                    ffi::local_error(crate::StatusCode::Internal, "creating a semaphore", "got null".into())
                })?;
                self.semaphore = Some((s, 0));
                (s, 0)
            }
        };
        let next = value + 1;
        let mut fence = std::ptr::null_mut();
        // SAFETY: the semaphore is live; out-pointer to a local.
        check(unsafe { sys::iree_hal_fence_create_at(sem.as_ptr(), next, a, &mut fence) }, || {
            "creating a signal fence".into()
        })?;
        let fence = NonNull::new(fence).map(SignalFence).ok_or_else(|| {
            ffi::local_error(crate::StatusCode::Internal, "creating a signal fence", "got null".into())
        })?;
        self.semaphore = Some((sem, next));
        let wait = self.wait_fence.as_ref().map(OwnedRef::retain).unwrap_or_else(|| {
            // SAFETY: a null ref owns nothing.
            unsafe { OwnedRef::from_raw(ffi::null_ref()) }
        });
        self.inputs.push_ref(wait)?;
        // SAFETY: +1 on the live fence, moved into the list.
        let signal = unsafe { OwnedRef::from_raw(sys::iree_hal_fence_retain_ref(fence.0.as_ptr())) };
        self.inputs.push_ref(signal)?;
        Ok(fence)
    }

    /// Forgets the semaphore (after a failed call: it may be failed, or
    /// behind the value the next call would wait for).
    pub(crate) fn reset_semaphore(&mut self) {
        if let Some((s, _)) = self.semaphore.take() {
            // SAFETY: the state owns one reference to the semaphore.
            unsafe { sys::iree_hal_semaphore_release(s.as_ptr()) };
        }
    }
}

/// States kept by a function for its plain (unprepared) calls.
const POOLED_STATES: usize = 4;

/// One exported function as a [`Backend`].
pub(crate) struct IreeFunction {
    /// One idle state for plain calls, taken and given back with one atomic
    /// swap each (a mutex costs two atomic operations per lock); null when
    /// none is idle. Owns the `Box` it points to; freed in `drop`, before
    /// the module.
    spare: AtomicPtr<CallState>,
    /// Declared before the module: fields drop in order, and the pooled
    /// states' buffers must go before the module (and its device) may (the
    /// spare goes first of all, in `drop`). Holds the states
    /// of concurrent calls beyond `spare`. (Boxed so that a state moves
    /// between here, `spare` and a call as one pointer.)
    #[allow(clippy::vec_box)]
    pool: Mutex<Vec<Box<CallState>>>,
    module: Arc<ModuleInner>,
    index: usize,
    function: sys::iree_vm_function_t,
    abi: FunctionAbi,
    /// Names its parameters (then a dict given to `call_bound` is keyword
    /// arguments, not the one argument).
    named_params: bool,
    /// The fast path's rule of each leaf of the parameters' record plan,
    /// when it takes them all.
    fast: Option<Vec<FastLeaf>>,
}

// SAFETY: the function handle only names an export of the module that
// `module` keeps alive; the pool is behind a mutex and, like `spare`, holds
// `Send` states.
unsafe impl Send for IreeFunction {}
// SAFETY: see `Send`: shared access reads immutable fields, locks, or
// swaps `spare` atomically.
unsafe impl Sync for IreeFunction {}

impl Drop for IreeFunction {
    fn drop(&mut self) {
        let spare = *self.spare.get_mut();
        if !spare.is_null() {
            // SAFETY: a non-null `spare` came from `Box::into_raw` in
            // `give_back` and is owned by this function alone.
            drop(unsafe { Box::from_raw(spare) });
        }
    }
}

impl IreeFunction {
    pub(crate) fn new(module: Arc<ModuleInner>, index: usize, abi: FunctionAbi) -> IreeFunction {
        let function = module.function(&module.exports[index]);
        let named_params = abi.params().is_some_and(|ps| ps.iter().any(|p| p.name.is_some()));
        let export = &module.exports[index];
        let fast = FastLeaf::for_function(&abi, export.calling_convention(), abi.model().fence_args());
        IreeFunction {
            spare: AtomicPtr::new(std::ptr::null_mut()),
            pool: Mutex::new(Vec::new()),
            module,
            index,
            function,
            abi,
            named_params,
            fast,
        }
    }

    fn name_str(&self) -> &str {
        self.module.exports[self.index].name()
    }

    fn new_state(&self) -> Result<Box<CallState>, Error> {
        let n = self.abi.params().map_or(4, <[_]>::len) + self.abi.model().fence_args();
        Ok(Box::new(CallState::new(n)?))
    }

    fn take_state(&self) -> Result<Box<CallState>, Error> {
        let spare = self.spare.swap(std::ptr::null_mut(), Ordering::Acquire);
        if !spare.is_null() {
            // SAFETY: a non-null `spare` came from `Box::into_raw` in
            // `give_back`, and the swap made this call its only owner.
            return Ok(unsafe { Box::from_raw(spare) });
        }
        let pooled = self.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match pooled {
            Some(s) => Ok(s),
            None => self.new_state(),
        }
    }

    fn give_back(&self, state: Box<CallState>) {
        let raw = Box::into_raw(state);
        if self.spare.compare_exchange(std::ptr::null_mut(), raw, Ordering::Release, Ordering::Relaxed).is_ok() {
            return;
        }
        // SAFETY: `raw` came from `Box::into_raw` just above and was not
        // stored (the exchange failed).
        let state = unsafe { Box::from_raw(raw) };
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < POOLED_STATES {
            pool.push(state);
        }
    }

    /// Fills the argument list from bound arguments: through the fast path
    /// when it takes them, else through `pack_args` (which also gives the
    /// precise error for anything wrong).
    fn marshal(&self, state: &mut CallState, args: &[Value<'_>]) -> Result<(), Error> {
        let device = &self.module.device;
        state.inputs.clear();
        state.staging.begin();
        if let (Some(leaves), Some(plan)) = (&self.fast, self.abi.record_plan()) {
            let mut sink =
                RtSink { device, staging: &mut state.staging, root: &mut state.inputs, stack: &mut state.stack };
            let done = fastpack::pack(plan, leaves, args, &mut sink);
            if !matches!(done, Ok(true)) {
                sink.discard();
                state.inputs.clear();
                state.staging.begin();
            }
            match done {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return Err(e),
            }
        }
        let packed = self.abi.pack_args(args)?;
        let mut marshal = Marshal { device, staging: &mut state.staging };
        for v in packed.items() {
            marshal.push(&mut state.inputs, v)?;
        }
        Ok(())
    }

    /// One call with bound arguments.
    fn run(&self, state: &mut CallState, args: &[Value<'_>]) -> Result<Value<'static>, Error> {
        let m = &*self.module;
        let prepared = self.marshal(state, args).and_then(|()| match self.abi.model() {
            InvocationModel::CoarseFences => Ok(Some(state.push_fences(&m.device)?)),
            InvocationModel::Sync => Ok(None),
        });
        let fence = match prepared {
            Ok(f) => f,
            Err(e) => {
                state.inputs.clear();
                state.staging.end();
                return Err(e);
            }
        };
        let invoked = m.invoke(self.function, self.name_str(), &state.inputs, &mut state.outputs);
        state.inputs.clear();
        state.staging.end();
        if let Err(e) = invoked {
            state.reset_semaphore();
            state.outputs.clear();
            return Err(e);
        }
        if let Some(f) = fence
            && let Err(e) = f.wait(&m.name, self.name_str())
        {
            state.reset_semaphore();
            state.outputs.clear();
            return Err(e.into());
        }
        // SAFETY: the output list is live and its views belong to the
        // module's device.
        let result = unsafe { read_outputs(&m.device, state.outputs.as_ptr()) };
        state.outputs.clear();
        match result? {
            OutputItems::One(x) => self.abi.unpack_one_result(x),
            OutputItems::Many(xs) => self.abi.unpack_results(xs),
        }
    }

    /// Arguments of `call_bound`: a tuple is the positional arguments, a
    /// dict the keyword arguments when the function names parameters (else
    /// its one argument), anything else the one argument.
    fn run_bound(&self, state: &mut CallState, inputs: &Value<'_>) -> Result<Value<'static>, Error> {
        match inputs {
            Value::Tuple(args) => self.run(state, args),
            Value::Dict(d) if self.named_params || self.abi.params().is_some_and(|p| p.len() != 1) => {
                let bound = self.abi.bind(Vec::new(), d.iter().map(|(k, v)| (k.clone(), v.clone())))?;
                self.run(state, &bound)
            }
            v => self.run(state, std::slice::from_ref(v)),
        }
    }
}

impl Backend for IreeFunction {
    fn name(&self) -> &str {
        self.name_str()
    }

    /// False: an argument array's bytes are written into the runtime's own
    /// buffers (see `staging`), never handed to the module.
    fn may_write_arguments(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        self.module.exports[self.index].describe()
    }

    fn call(&self, args: Vec<Value<'_>>, kwargs: Dict<'_>) -> Result<Value<'static>, Error> {
        let bound = self.abi.bind(args, kwargs)?;
        let mut state = self.take_state()?;
        let out = self.run(&mut state, &bound);
        self.give_back(state);
        out
    }

    fn prepare(&self) -> Box<dyn PreparedBackend + '_> {
        Box::new(Prepared { f: self, state: None })
    }

    fn input_params(&self) -> Option<Vec<InputParam>> {
        // A scalar input stays a scalar (IREE passes it by value).
        let ty = |r: &TypeRecord| record_type(r, false);
        let params = self.abi.params()?;
        Some(
            params
                .iter()
                .map(|p| InputParam {
                    name: p.name.clone(),
                    ty: match &p.ty {
                        ParamType::Record(r) => ty(r),
                        ParamType::Opaque(_) => InputType::Any,
                    },
                })
                .collect(),
        )
    }

    /// From the reflection's result records (a scalar is a 0-d array of
    /// its dtype): one result itself, several as a tuple.
    fn result_type(&self) -> Option<InputType> {
        let mut types: Vec<InputType> = self
            .abi
            .results()?
            .iter()
            .map(|r| match r {
                ParamType::Record(r) => record_type(r, true),
                ParamType::Opaque(_) => InputType::Any,
            })
            .collect();
        Some(if types.len() == 1 { types.remove(0) } else { InputType::Sequence(types) })
    }
}

/// The type of a value of record `r`; a primitive is a 0-d array of its
/// dtype when `scalars`, else `Any`.
fn record_type(r: &TypeRecord, scalars: bool) -> InputType {
    match r {
        TypeRecord::NdArray(nd) => match &*nd.element {
            TypeRecord::Primitive(p) => match p.dtype() {
                Some(dtype) => InputType::Array {
                    dtype,
                    dims: nd.dims.as_ref().map(|ds| ds.iter().map(|d| d.map(|n| n as usize)).collect()),
                },
                None => InputType::Any,
            },
            _ => InputType::Any,
        },
        TypeRecord::Primitive(p) if scalars => match p.dtype() {
            Some(dtype) => InputType::Array { dtype, dims: Some(Vec::new()) },
            None => InputType::Any,
        },
        TypeRecord::SList(items) | TypeRecord::STuple(items) => {
            InputType::Sequence(items.iter().map(|t| record_type(t, scalars)).collect())
        }
        TypeRecord::SDict(entries) => {
            InputType::Dict(entries.iter().map(|(k, t)| (k.clone(), record_type(t, scalars))).collect())
        }
        TypeRecord::Named(_, t) => record_type(t, scalars),
        _ => InputType::Any,
    }
}

/// A prepared call: a function and its own call state, taken from the
/// function's pool on first use and given back when the prepared call is
/// dropped (so `Function::call_serde`, which prepares a call each time,
/// reuses the buffers too).
struct Prepared<'f> {
    f: &'f IreeFunction,
    state: Option<Box<CallState>>,
}

impl Prepared<'_> {
    fn state(&mut self) -> Result<&mut CallState, Error> {
        if self.state.is_none() {
            self.state = Some(self.f.take_state()?);
        }
        // Just filled.
        self.state.as_deref_mut().ok_or_else(|| Error::invalid_argument("no call state"))
    }
}

impl Drop for Prepared<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.state.take() {
            self.f.give_back(s);
        }
    }
}

impl PreparedBackend for Prepared<'_> {
    fn call(&mut self, args: Vec<Value<'_>>, kwargs: Dict<'_>) -> Result<Value<'static>, Error> {
        let bound = self.f.abi.bind(args, kwargs)?;
        let f = self.f;
        f.run(self.state()?, &bound)
    }

    fn call_bound(&mut self, inputs: &Value<'_>) -> Result<Value<'static>, Error> {
        let f = self.f;
        f.run_bound(self.state()?, inputs)
    }
}
