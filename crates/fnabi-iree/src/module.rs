//! [`IreeModule`]: a `.vmfb` module loaded into a VM context on a device,
//! its [`IreeExport`]s with their calling conventions and reflection (read by
//! [`fnabi_abi::vmfb`] from the same bytes), its functions as
//! [`fnabi_core::Function`]s, and [`VmCall`], a call with a prebuilt argument
//! list.

use crate::backend::{CallState, IreeFunction};
use crate::error::StatusCode;
use crate::ffi::{self, check, sv, sys};
use crate::list::{Marshal, RtList, read_items};
use crate::runtime::{self, Device, DeviceHandle};
use fnabi_abi::reflection::InvocationModel;
use fnabi_core::conventions::FunctionAbi;
use fnabi_core::memory::ByteBuffer;
use fnabi_core::vm::{CallingConvention, CconvItem, Variant, VmList};
use fnabi_core::{Error, Function};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// An exported function of a module: its name, calling convention and
/// reflection attributes, as the module file records them.
///
/// ```
/// use fnabi_iree::{Device, IreeModule};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb");
/// // SAFETY: a module compiled by iree-compile that we trust to run.
/// let module = unsafe { IreeModule::load(path, Device::LocalSync)? };
/// let e = module.export("add_i32")?;
/// assert_eq!(e.name(), "add_i32");
/// assert_eq!(e.calling_convention().to_string(), "0ii_i");
/// let decl = "sync func @add_i32(%input0: i32, %input1: i32) -> (%output0: i32)";
/// assert_eq!(e.attr("iree.abi.declaration"), Some(decl));
/// assert_eq!(e.describe(), decl);
/// assert!(e.abi().is_ok());
/// // The compiler's `__init` has no reflection: described by its convention.
/// assert_eq!(module.export("__init")?.describe(), "func @__init (cconv 0v_v)");
/// assert!(module.export("sub").is_err()); // no such export
/// # Ok::<(), fnabi_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IreeExport {
    name: String,
    calling_convention: CallingConvention,
    cconv_text: String,
    attrs: Vec<(String, String)>,
    ordinal: u16,
}

impl IreeExport {
    /// The name (without the module prefix).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The VM calling convention (`0rr_r`).
    pub fn calling_convention(&self) -> &CallingConvention {
        &self.calling_convention
    }

    /// The reflection attributes (`iree.abi`, `iree.abi.declaration`,
    /// `iree.abi.model`, …) in file order.
    pub fn attrs(&self) -> &[(String, String)] {
        &self.attrs
    }

    /// The value of attribute `key`.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The convention fnabi calls it with: typed by `iree.abi` when the
    /// module has it, by `iree.abi.declaration` otherwise (dynamic when it
    /// has neither), checked against the calling convention.
    pub fn abi(&self) -> Result<FunctionAbi, Error> {
        Ok(FunctionAbi::from_attrs(self.attrs.iter().map(|(k, v)| (k.as_str(), v.as_str())))?
            .with_calling_convention(self.calling_convention.clone()))
    }

    /// A one-line signature: the declaration when there is one, else the
    /// name and calling convention.
    pub fn describe(&self) -> String {
        match self.attr("iree.abi.declaration") {
            Some(d) => d.to_string(),
            None => format!("func @{} (cconv {})", self.name, self.cconv_text),
        }
    }
}

/// The loaded state shared by a module and its functions.
pub(crate) struct ModuleInner {
    pub(crate) name: String,
    pub(crate) device: Arc<DeviceHandle>,
    module: *mut sys::iree_vm_module_t,
    context: *mut sys::iree_vm_context_t,
    /// IREE contexts are "thread-compatible and must be externally
    /// synchronized": invocations take this lock.
    invoke_lock: Mutex<()>,
    pub(crate) exports: Vec<IreeExport>,
    /// The module bytes: IREE borrows them (no copy) for the module's life.
    _bytes: ByteBuffer,
}

// SAFETY: the module and context are ref-counted IREE objects owned by this
// value; the context is only used under `invoke_lock`, the module (immutable
// after creation) only for lookups, which IREE allows from any thread.
unsafe impl Send for ModuleInner {}
// SAFETY: see `Send`.
unsafe impl Sync for ModuleInner {}

impl Drop for ModuleInner {
    fn drop(&mut self) {
        // SAFETY: releases this value's references, the context (which holds
        // the modules) first; the bytes and the device outlive both (they
        // are dropped after this body).
        unsafe {
            sys::iree_vm_context_release(self.context);
            sys::iree_vm_module_release(self.module);
        }
    }
}

impl ModuleInner {
    /// The runtime function of export `e`.
    pub(crate) fn function(&self, e: &IreeExport) -> sys::iree_vm_function_t {
        sys::iree_vm_function_t {
            module: self.module,
            linkage: sys::iree_vm_function_linkage_e_IREE_VM_FUNCTION_LINKAGE_EXPORT as u16,
            ordinal: e.ordinal,
        }
    }

    /// Invokes `f` with `inputs`, writing its results to `outputs`
    /// (resized by the runtime, previous results released).
    pub(crate) fn invoke(
        &self,
        f: sys::iree_vm_function_t,
        name: &str,
        inputs: &RtList,
        outputs: &mut RtList,
    ) -> Result<(), Error> {
        let status = {
            let _guard: MutexGuard<'_, ()> = self.invoke_lock.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: the context is live and used by this thread alone
            // (lock held); `f` belongs to this context's module; both lists
            // are live.
            unsafe {
                sys::iree_vm_invoke(
                    self.context,
                    f,
                    sys::iree_vm_invocation_flag_bits_t_IREE_VM_INVOCATION_FLAG_NONE as _,
                    std::ptr::null(),
                    inputs.as_ptr(),
                    outputs.as_ptr(),
                    ffi::host_allocator(),
                )
            }
        };
        Ok(check(status, || format!("calling {}.{name}", self.name))?)
    }

    /// The index of the export named `name`.
    pub(crate) fn index_of(&self, name: &str) -> Result<usize, Error> {
        self.exports.iter().position(|e| e.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.exports.iter().map(|e| e.name.as_str()).collect();
            Error::invalid_argument(format!("module {:?} has no function {name:?} (it exports {names:?})", self.name))
        })
    }

    pub(crate) fn export(&self, name: &str) -> Result<&IreeExport, Error> {
        Ok(&self.exports[self.index_of(name)?])
    }
}

/// An IREE module (`.vmfb`) loaded in-process on a [`Device`], whose
/// exported functions are called with host values.
///
/// Cheap to clone (shared) and `Send + Sync`; calls of the module's
/// functions from several threads are serialized (IREE contexts require
/// external synchronization), each with its own argument buffers.
///
/// ```
/// # fn main() -> Result<(), fnabi_core::Error> {
/// use fnabi_core::{Array, Value};
/// use fnabi_iree::{Device, IreeModule};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb");
/// // SAFETY: a module compiled by iree-compile that we trust to run.
/// let module = unsafe { IreeModule::load(path, Device::LocalSync)? };
/// let add = module.function("add")?;
/// let a = Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0])?;
/// let b = Array::from_vec(&[4], vec![10.0f32, 20.0, 30.0, 40.0])?;
/// let sum = add.call([Value::from(a), Value::from(b)])?;
/// assert_eq!(sum.as_array().unwrap().to_vec::<f32>()?, [11.0, 22.0, 33.0, 44.0]);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct IreeModule {
    inner: Arc<ModuleInner>,
}

impl std::fmt::Debug for IreeModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "IreeModule({:?} on {}, {} exports)",
            self.inner.name,
            self.inner.device.kind,
            self.inner.exports.len()
        )
    }
}

impl IreeModule {
    /// Maps a `.vmfb` file and loads it on `device`.
    ///
    /// # Safety
    /// A module's executables are native code that runs in this process
    /// (IREE's embedded-ELF loader does not sandbox it), so the file must be
    /// a module from a trusted compiler, as with loading a shared library.
    /// The file is mapped: it must not be modified or truncated while the
    /// module lives.
    pub unsafe fn load(path: impl AsRef<Path>, device: Device) -> Result<IreeModule, Error> {
        // SAFETY: the caller keeps the file unchanged (contract above).
        let bytes = unsafe { ByteBuffer::map_file(path.as_ref())? };
        // SAFETY: forwarded to the caller.
        unsafe { IreeModule::from_buffer(bytes, device) }
    }

    /// Loads a module from bytes (copied once into aligned memory that
    /// lives as long as the module).
    ///
    /// # Safety
    /// As for [`load`](IreeModule::load): the module runs native code.
    pub unsafe fn from_bytes(bytes: &[u8], device: Device) -> Result<IreeModule, Error> {
        // SAFETY: forwarded to the caller.
        unsafe { IreeModule::from_buffer(ByteBuffer::copy_from_slice(bytes)?, device) }
    }

    /// Loads a module from a shared byte buffer, without copying it (the
    /// module keeps the buffer).
    ///
    /// # Safety
    /// As for [`load`](IreeModule::load): the module runs native code.
    pub unsafe fn from_buffer(bytes: ByteBuffer, device: Device) -> Result<IreeModule, Error> {
        // fnabi's reader first: a malformed file is an error with a byte
        // offset before the runtime sees it (the ZIP's sizes and CRC-32 too,
        // unless FNABI_VMFB_NO_VERIFY=1 asks to skip them for speed).
        let parsed = if std::env::var_os("FNABI_VMFB_NO_VERIFY").is_some_and(|v| v == "1") {
            fnabi_abi::vmfb::Module::parse_unverified(bytes.as_bytes())?
        } else {
            fnabi_abi::vmfb::Module::parse(bytes.as_bytes())?
        };
        let name = parsed.name.to_string();
        let device = runtime::device(device)?;
        let instance = runtime::instance()?;
        let a = ffi::host_allocator();
        let span = sys::iree_const_byte_span_t { data: bytes.as_bytes().as_ptr(), data_length: bytes.len() };
        let mut module = std::ptr::null_mut();
        // SAFETY: the span stays valid as long as the module (the bytes are
        // kept in ModuleInner, released after the module); the null archive
        // allocator tells IREE not to free them; out-pointer to a local.
        check(
            unsafe {
                sys::iree_vm_bytecode_module_create(
                    instance.ptr,
                    sys::iree_vm_bytecode_module_flags_e_IREE_VM_BYTECODE_MODULE_FLAG_NONE as _,
                    span,
                    ffi::null_allocator(),
                    a,
                    &mut module,
                )
            },
            || format!("loading module {name:?}"),
        )?;
        // The HAL module comes first: the bytecode module imports from it.
        let mut modules = [device.hal_module, module];
        let mut context = std::ptr::null_mut();
        // SAFETY: both modules are live; the context retains them.
        let created = check(
            unsafe {
                sys::iree_vm_context_create_with_modules(
                    instance.ptr,
                    sys::iree_vm_context_flag_bits_t_IREE_VM_CONTEXT_FLAG_NONE as _,
                    modules.len(),
                    modules.as_mut_ptr(),
                    a,
                    &mut context,
                )
            },
            || format!("creating a context for module {name:?}"),
        );
        if let Err(e) = created {
            // SAFETY: releases the module created above, once.
            unsafe { sys::iree_vm_module_release(module) };
            return Err(e.into());
        }
        let mut inner = ModuleInner {
            name,
            device,
            module,
            context,
            invoke_lock: Mutex::new(()),
            exports: Vec::with_capacity(parsed.exports.len()),
            _bytes: bytes.clone(),
        };
        for e in &parsed.exports {
            inner.exports.push(resolve_export(&inner, e)?);
        }
        Ok(IreeModule { inner: Arc::new(inner) })
    }

    /// The module name (`module` for modules compiled from a bare file).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The device it runs on.
    pub fn device(&self) -> Device {
        self.inner.device.kind
    }

    /// The exported functions, in file order.
    pub fn exports(&self) -> &[IreeExport] {
        &self.inner.exports
    }

    /// The export named `name`.
    pub fn export(&self, name: &str) -> Result<&IreeExport, Error> {
        self.inner.export(name)
    }

    /// The function `name`, called through the conventions of its
    /// reflection (see [`IreeExport::abi`]).
    pub fn function(&self, name: &str) -> Result<Function, Error> {
        let abi = self.inner.export(name)?.abi()?;
        self.function_with_abi(name, abi)
    }

    /// The function `name`, called through `abi` instead of the one its
    /// reflection gives (to allow casts, change the result packing, or call
    /// it dynamically).
    pub fn function_with_abi(&self, name: &str, abi: FunctionAbi) -> Result<Function, Error> {
        let index = self.inner.index_of(name)?;
        Ok(Function::new(IreeFunction::new(self.inner.clone(), index, abi)))
    }

    /// A call of `name` with an argument list built once from `args` (the
    /// VM's own values: no host conversion, no checks beyond the calling
    /// convention): the fastest way to call the same function on the same
    /// arguments, and the runtime's own cost.
    pub fn vm_call(&self, name: &str, args: &VmList<'_>) -> Result<VmCall, Error> {
        let export = self.inner.export(name)?;
        let model = export.abi()?.model();
        let user = user_convention(&export.calling_convention, model.fence_args());
        fnabi_core::vm::check_args(&user, args.items())?;
        let function = self.inner.function(export);
        let mut state = CallState::new(args.len() + model.fence_args())?;
        let mut m = Marshal { device: &self.inner.device, staging: &mut state.staging };
        for v in args.items() {
            m.push(&mut state.inputs, v)?;
        }
        Ok(VmCall {
            state,
            module: self.inner.clone(),
            name: export.name.clone(),
            function,
            user_args: args.len(),
            model,
        })
    }
}

/// The convention without the trailing fence arguments of an async call.
fn user_convention(cc: &CallingConvention, fences: usize) -> CallingConvention {
    let args = cc.args();
    let keep = if args.iter().all(|i| matches!(i, CconvItem::Single(_))) {
        args.len().saturating_sub(fences)
    } else {
        args.len()
    };
    CallingConvention::new(args[..keep].to_vec(), cc.results().to_vec())
}

/// Looks up a vmfb export in the runtime module and checks that both agree
/// on its calling convention.
fn resolve_export(inner: &ModuleInner, e: &fnabi_abi::vmfb::Export<'_>) -> Result<IreeExport, Error> {
    let mut f = sys::iree_vm_function_t { module: std::ptr::null_mut(), linkage: 0, ordinal: 0 };
    // SAFETY: the module is live; out-pointer to a local.
    check(
        unsafe {
            sys::iree_vm_module_lookup_function_by_name(
                inner.module,
                sys::iree_vm_function_linkage_e_IREE_VM_FUNCTION_LINKAGE_EXPORT as _,
                sv(e.name),
                &mut f,
            )
        },
        || format!("looking up {}.{}", inner.name, e.name),
    )?;
    // SAFETY: `f` was just resolved in the live module; the view points
    // into the module's (kept) bytes.
    let runtime_cconv = unsafe { ffi::sv_string(sys::iree_vm_function_signature(&f).calling_convention) };
    let text = e.signature.calling_convention.unwrap_or("");
    if runtime_cconv != text {
        return Err(crate::ffi::local_error(
            StatusCode::DataLoss,
            "reading exports",
            format!("{}: the file records cconv {text:?} but the runtime reads {runtime_cconv:?}", e.name),
        )
        .into());
    }
    let calling_convention = CallingConvention::parse(text)?;
    Ok(IreeExport {
        name: e.name.to_string(),
        calling_convention,
        cconv_text: text.to_string(),
        attrs: e.signature.attrs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ordinal: f.ordinal,
    })
}

/// A call with a prebuilt argument list (see [`IreeModule::vm_call`]).
///
/// ```
/// # fn main() -> Result<(), fnabi_core::Error> {
/// use fnabi_core::vm::{BufferView, Variant, VmList};
/// use fnabi_iree::{Device, IreeModule};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb");
/// // SAFETY: a trusted module.
/// let module = unsafe { IreeModule::load(path, Device::LocalSync)? };
/// let x = fnabi_core::Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0])?;
/// let args = VmList::from_variants(vec![Variant::buffer_view(BufferView::new(x)?)]);
/// let mut call = module.vm_call("add_one", &args)?;
/// for _ in 0..1000 {
///     call.invoke()?;
/// }
/// let out = call.results()?;
/// assert_eq!(out[0].as_buffer_view().unwrap().array().to_vec::<f32>()?, [2.0, 3.0, 4.0, 5.0]);
/// # Ok(()) }
/// ```
pub struct VmCall {
    /// Declared first: fields drop in order, and the state's lists and
    /// buffers must go before the module (and its device) may.
    state: CallState,
    module: Arc<ModuleInner>,
    name: String,
    function: sys::iree_vm_function_t,
    user_args: usize,
    model: InvocationModel,
}

// SAFETY: the function handle only names an export of the module kept
// alive by `module`; the state is `Send`.
unsafe impl Send for VmCall {}

impl VmCall {
    /// Calls the function; its results stay in the call until the next
    /// invocation (read them with [`results`](VmCall::results)).
    pub fn invoke(&mut self) -> Result<(), Error> {
        let fences = match self.model {
            InvocationModel::Sync => None,
            InvocationModel::CoarseFences => {
                self.state.inputs.truncate(self.user_args)?;
                Some(self.state.push_fences(&self.module.device)?)
            }
        };
        self.module.invoke(self.function, &self.name, &self.state.inputs, &mut self.state.outputs)?;
        if let Some(f) = fences {
            f.wait(&self.module.name, &self.name)?;
        }
        Ok(())
    }

    /// The results of the last invocation, as VM values (arrays share the
    /// runtime's buffers).
    pub fn results(&self) -> Result<Vec<Variant<'static>>, Error> {
        // SAFETY: the output list is live and its views belong to the
        // module's device.
        unsafe { read_items(&self.module.device, self.state.outputs.as_ptr()) }
    }

    /// The number of results of the last invocation.
    pub fn result_count(&self) -> usize {
        self.state.outputs.len()
    }
}
