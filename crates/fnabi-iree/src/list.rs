//! VM lists and references: owned handles over `iree_vm_list_t` and
//! `iree_vm_ref_t`, and the translation between fnabi's runtime-free VM
//! values ([`fnabi_core::vm::Variant`], [`VmList`]) and the runtime's, both
//! ways. Values keep their exact type (`i8` … `f64`), lists their element
//! type (`list<?>`, `list<i8>`, `list<!hal.buffer_view>`), arrays become
//! buffer views through [`Staging`], and references of other types travel
//! as [`RuntimeRef`]s inside [`OpaqueRef`]s.

use crate::buffer::{array_of_view, view_bytes};
use crate::error::{IreeError, StatusCode};
use crate::fastpack::Sink;
use crate::ffi::{self, check, sys};
use crate::runtime::{DeviceHandle, instance};
use crate::staging::Staging;
use fnabi_abi::limits::MAX_DEPTH;
use fnabi_core::Array;
use fnabi_core::error::CallError;
use fnabi_core::vm::{BufferView, ListElementType, OpaqueRef, RefType, ValueType, Variant, VmList, VmRef};
use std::ptr::NonNull;
use std::sync::Arc;

/// An owned reference (`iree_vm_ref_t`), released on drop.
pub(crate) struct OwnedRef(sys::iree_vm_ref_t);

impl OwnedRef {
    /// Takes over a reference the caller owns.
    ///
    /// # Safety
    /// `r` must be a null ref or a counted reference owned by the caller.
    pub(crate) unsafe fn from_raw(r: sys::iree_vm_ref_t) -> OwnedRef {
        OwnedRef(r)
    }

    /// A new reference to a live buffer view.
    pub(crate) fn retain_view(v: NonNull<sys::iree_hal_buffer_view_t>) -> OwnedRef {
        // SAFETY: +1 on a live view (callers hold one), owned by the ref.
        OwnedRef(unsafe { sys::iree_hal_buffer_view_retain_ref(v.as_ptr()) })
    }

    /// A new reference to the same object.
    pub(crate) fn retain(&self) -> OwnedRef {
        let mut out = ffi::null_ref();
        // SAFETY: `self.0` is a live (or null) ref; out-pointer to a local.
        unsafe { sys::iree_vm_ref_retain(&self.0 as *const _ as *mut _, &mut out) };
        OwnedRef(out)
    }

    /// The raw ref (still owned by `self`).
    pub(crate) fn raw(&self) -> &sys::iree_vm_ref_t {
        &self.0
    }

    /// Gives up ownership.
    fn into_raw(self) -> sys::iree_vm_ref_t {
        let r = self.0;
        std::mem::forget(self);
        r
    }
}

impl Drop for OwnedRef {
    fn drop(&mut self) {
        // SAFETY: releases the reference this value owns (a no-op for null).
        unsafe { sys::iree_vm_ref_release(&mut self.0) };
    }
}

// SAFETY: VM references are atomically counted and every ref type fnabi
// meets (lists, buffer views, fences, buffers) may be released from any
// thread.
unsafe impl Send for OwnedRef {}
// SAFETY: shared access only reads the pointer and type.
unsafe impl Sync for OwnedRef {}

/// A runtime reference of a type fnabi does not look into (`!hal.fence`,
/// `!hal.buffer`, …), held in an [`OpaqueRef`] payload. Passing the opaque
/// ref back into a call passes this reference. It keeps the device it came
/// from alive (HAL objects must not outlive their device).
///
/// ```
/// use fnabi_core::Array;
/// use fnabi_core::vm::{BufferView, Variant, VmList, VmRef};
/// use fnabi_iree::{Device, IreeCompileOptions, IreeCompiler, IreeModule, RuntimeRef};
/// let dir = std::env::temp_dir().join(format!("fnabi-doc-runtime-ref-{}", std::process::id()));
/// let src = br#"
///   func.func @storage(%v: !hal.buffer_view) -> !hal.buffer {
///     %b = hal.buffer_view.buffer<%v : !hal.buffer_view> : !hal.buffer
///     return %b : !hal.buffer
///   }
///   func.func @byte_length(%b: !hal.buffer) -> index {
///     %n = hal.buffer.length<%b : !hal.buffer> : index
///     return %n : index
///   }"#;
/// let (vmfb, _) = IreeCompiler::find()?.with_cache_dir(&dir).compile(src, &IreeCompileOptions::default())?;
/// // SAFETY: a module we just compiled.
/// let module = unsafe { IreeModule::from_bytes(&vmfb, Device::LocalSync)? };
/// let x = Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0])?;
/// let args = VmList::from_variants(vec![Variant::buffer_view(BufferView::new(x)?)]);
/// let mut call = module.vm_call("storage", &args)?;
/// call.invoke()?;
/// let out = call.results()?;
/// let Variant::Ref(VmRef::Opaque(buffer)) = &out[0] else { panic!("not an opaque ref: {:?}", out[0]) };
/// assert_eq!(&**buffer.type_name(), "!hal.buffer");
/// assert!(buffer.payload().downcast_ref::<RuntimeRef>().is_some());
///
/// // Passed back into a call, it is the same buffer: 4 f32 of 4 bytes.
/// let mut call = module.vm_call("byte_length", &VmList::from_variants(vec![out[0].clone()]))?;
/// call.invoke()?;
/// assert_eq!(call.results()?[0].as_i64(), Some(16));
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RuntimeRef {
    pub(crate) r: OwnedRef,
    /// Released after the reference (fields drop in order).
    _device: Arc<DeviceHandle>,
}

impl std::fmt::Debug for RuntimeRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: the type of a live ref is a registered type.
        let name = unsafe { ffi::sv_string(sys::iree_vm_ref_type_name(self.r.raw().type_)) };
        write!(f, "RuntimeRef({name})")
    }
}

/// An owned VM list (and its element type, which never changes).
pub(crate) struct RtList(NonNull<sys::iree_vm_list_t>, sys::iree_vm_type_def_t);

// SAFETY: a list is a ref-counted IREE object owned by this value and only
// mutated through `&mut`; its elements are thread-safe refs and values.
unsafe impl Send for RtList {}

impl Drop for RtList {
    fn drop(&mut self) {
        // SAFETY: releases this value's reference.
        unsafe { sys::iree_vm_list_release(self.0.as_ptr()) };
    }
}

impl RtList {
    /// An empty list of `element_type` with room for `capacity` elements.
    pub(crate) fn new(element_type: sys::iree_vm_type_def_t, capacity: usize) -> Result<RtList, IreeError> {
        let mut l = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(unsafe { sys::iree_vm_list_create(element_type, capacity, ffi::host_allocator(), &mut l) }, || {
            "creating a list".into()
        })?;
        NonNull::new(l)
            .map(|l| RtList(l, element_type))
            .ok_or_else(|| ffi::local_error(StatusCode::Internal, "creating a list", "got a null list".into()))
    }

    /// An empty variant list (`list<?>`).
    pub(crate) fn variants(capacity: usize) -> Result<RtList, IreeError> {
        RtList::new(ffi::variant_type_def(), capacity)
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::iree_vm_list_t {
        self.0.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        // SAFETY: the list is live.
        unsafe { sys::iree_vm_list_size(self.0.as_ptr()) }
    }

    /// The element type.
    pub(crate) fn element_type(&self) -> sys::iree_vm_type_def_t {
        self.1
    }

    /// Whether this value holds the only reference to the list.
    pub(crate) fn is_unshared(&self) -> bool {
        // SAFETY: the list is live and of the registered list type.
        unsafe { ffi::ref_count(self.0.as_ptr().cast(), ffi::list_type()) == 1 }
    }

    /// A new reference to the list.
    pub(crate) fn retain_ref(&self) -> OwnedRef {
        // SAFETY: +1 on the live list, owned by the ref.
        OwnedRef(unsafe { sys::iree_vm_list_retain_ref(self.0.as_ptr()) })
    }

    /// Removes (and releases) every element.
    pub(crate) fn clear(&mut self) {
        // SAFETY: the list is live and uniquely borrowed.
        unsafe { sys::iree_vm_list_clear(self.0.as_ptr()) }
    }

    /// Shrinks to `n` elements (releasing the rest).
    pub(crate) fn truncate(&mut self, n: usize) -> Result<(), IreeError> {
        // SAFETY: the list is live and uniquely borrowed.
        check(unsafe { sys::iree_vm_list_resize(self.0.as_ptr(), n) }, || "resizing a list".into())
    }

    /// Appends a value.
    pub(crate) fn push_value(&mut self, v: &sys::iree_vm_value_t) -> Result<(), IreeError> {
        // SAFETY: the list is live; `v` is a valid value.
        check(unsafe { sys::iree_vm_list_push_value(self.0.as_ptr(), v) }, || "appending a value to a list".into())
    }

    /// Appends a reference (moved in).
    pub(crate) fn push_ref(&mut self, r: OwnedRef) -> Result<(), IreeError> {
        let mut raw = r.into_raw();
        // SAFETY: the list is live; the ref moves into it on success. On
        // failure it is still ours and released here.
        let st = unsafe { sys::iree_vm_list_push_ref_move(self.0.as_ptr(), &mut raw) };
        if !st.is_null() {
            // SAFETY: push_ref_move left the reference with us.
            drop(unsafe { OwnedRef::from_raw(raw) });
        }
        check(st, || "appending a reference to a list".into())
    }
}

/// A VM value of `t` with its payload written by `fill`.
fn value(
    t: sys::iree_vm_value_type_t,
    fill: impl FnOnce(&mut sys::iree_vm_value_t__bindgen_ty_1),
) -> sys::iree_vm_value_t {
    // The iree_vm_value_make_* helpers are static inline: filled by hand.
    let mut v = sys::iree_vm_value_t { type_: t, __bindgen_anon_1: sys::iree_vm_value_t__bindgen_ty_1 { i64_: 0 } };
    fill(&mut v.__bindgen_anon_1);
    v
}

fn value_type_code(t: ValueType) -> sys::iree_vm_value_type_t {
    match t {
        ValueType::I8 => sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I8,
        ValueType::I16 => sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I16,
        ValueType::I32 => sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I32,
        ValueType::I64 => sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I64,
        ValueType::F32 => sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F32,
        ValueType::F64 => sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F64,
    }
}

fn value_type_of_code(t: sys::iree_vm_value_type_t) -> Option<ValueType> {
    Some(match t {
        sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I8 => ValueType::I8,
        sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I16 => ValueType::I16,
        sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I32 => ValueType::I32,
        sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I64 => ValueType::I64,
        sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F32 => ValueType::F32,
        sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F64 => ValueType::F64,
        _ => return None,
    })
}

/// The runtime's ref type of `r`.
fn ref_type_code(r: &RefType) -> Result<sys::iree_vm_ref_type_t, fnabi_core::Error> {
    Ok(match r {
        RefType::List => ffi::list_type(),
        RefType::BufferView => ffi::buffer_view_type(),
        RefType::Opaque(name) => {
            let inst = instance()?;
            // IREE registers `hal.fence`; fnabi writes the VM's `!hal.fence`.
            let bare = name.strip_prefix('!').unwrap_or(name);
            // SAFETY: the instance is live; the name is a valid string view.
            let t = unsafe { sys::iree_vm_instance_lookup_type(inst.ptr, ffi::sv(bare)) };
            if t == 0 {
                return Err(fnabi_core::Error::invalid_argument(format!(
                    "the IREE runtime has no ref type named {name:?}"
                )));
            }
            t
        }
    })
}

/// The runtime's type def of a list element type.
fn type_def_of(e: &ListElementType) -> Result<sys::iree_vm_type_def_t, fnabi_core::Error> {
    Ok(match e {
        ListElementType::Variant => ffi::variant_type_def(),
        ListElementType::Value(t) => ffi::value_type_def(value_type_code(*t)),
        ListElementType::Ref(r) => ffi::ref_type_def(ref_type_code(r)?),
    })
}

/// Translates fnabi VM values into the runtime's.
pub(crate) struct Marshal<'a> {
    pub(crate) device: &'a DeviceHandle,
    pub(crate) staging: &'a mut Staging,
}

impl Marshal<'_> {
    /// Appends `v` to `list`.
    pub(crate) fn push(&mut self, list: &mut RtList, v: &Variant<'_>) -> Result<(), fnabi_core::Error> {
        self.push_at(list, v, 0)
    }

    fn push_at(&mut self, list: &mut RtList, v: &Variant<'_>, depth: usize) -> Result<(), fnabi_core::Error> {
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F32 as F32;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F64 as F64;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I8 as I8;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I16 as I16;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I32 as I32;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I64 as I64;
        match v {
            Variant::None => list.push_ref(OwnedRef(ffi::null_ref()))?,
            Variant::I8(x) => list.push_value(&value(I8, |u| u.i8_ = *x))?,
            Variant::I16(x) => list.push_value(&value(I16, |u| u.i16_ = *x))?,
            Variant::I32(x) => list.push_value(&value(I32, |u| u.i32_ = *x))?,
            Variant::I64(x) => list.push_value(&value(I64, |u| u.i64_ = *x))?,
            Variant::F32(x) => list.push_value(&value(F32, |u| u.f32_ = *x))?,
            Variant::F64(x) => list.push_value(&value(F64, |u| u.f64_ = *x))?,
            Variant::Ref(VmRef::BufferView(b)) => {
                let view = self.staging.buffer_view(self.device, b.array(), view_bytes(b))?;
                list.push_ref(view)?;
            }
            Variant::Ref(VmRef::List(l)) => {
                if depth + 1 >= MAX_DEPTH {
                    return Err(fnabi_core::Error::invalid_argument(format!(
                        "VM lists nest deeper than {MAX_DEPTH} levels"
                    )));
                }
                let (slot, mut inner) = self.staging.take_list(type_def_of(l.element_type())?, l.len())?;
                let mut filled = Ok(());
                for item in l.items() {
                    filled = self.push_at(&mut inner, item, depth + 1);
                    if filled.is_err() {
                        break;
                    }
                }
                let r = inner.retain_ref();
                self.staging.put_list(slot, inner);
                filled?;
                list.push_ref(r)?;
            }
            Variant::Ref(VmRef::Opaque(o)) => match o.payload().downcast_ref::<RuntimeRef>() {
                Some(r) => list.push_ref(r.r.retain())?,
                None => {
                    let got = format!("an opaque {} made elsewhere", o.type_name());
                    let kind = CallError::value_kind("a reference the IREE runtime made", got);
                    return Err(CallError::argument(kind).with_note("a VM reference").into());
                }
            },
        }
        Ok(())
    }
}

/// The fast path's [`Sink`]: the runtime's argument list, with nested
/// lists and buffer views from the staging area.
pub(crate) struct RtSink<'a> {
    pub(crate) device: &'a DeviceHandle,
    pub(crate) staging: &'a mut Staging,
    pub(crate) root: &'a mut RtList,
    /// The open nested lists with their staging slots (kept by the call
    /// state so that a call allocates no stack).
    pub(crate) stack: &'a mut Vec<(usize, RtList)>,
}

impl RtSink<'_> {
    fn top(&mut self) -> &mut RtList {
        match self.stack.last_mut() {
            Some((_, l)) => l,
            None => self.root,
        }
    }

    /// Gives the open lists of an abandoned walk back to the staging area.
    pub(crate) fn discard(&mut self) {
        for (slot, l) in self.stack.drain(..) {
            self.staging.put_list(slot, l);
        }
    }
}

impl Sink for RtSink<'_> {
    fn open(&mut self, len: usize) -> Result<(), fnabi_core::Error> {
        let l = self.staging.take_list(ffi::variant_type_def(), len)?;
        self.stack.push(l);
        Ok(())
    }

    fn close(&mut self) -> Result<(), fnabi_core::Error> {
        let Some((slot, l)) = self.stack.pop() else {
            return Err(ffi::local_error(StatusCode::Internal, "packing arguments", "no open list".into()).into());
        };
        let r = l.retain_ref();
        self.staging.put_list(slot, l);
        Ok(self.top().push_ref(r)?)
    }

    fn array(&mut self, a: &Array<'_>, bytes: &[u8]) -> Result<(), fnabi_core::Error> {
        let r = self.staging.buffer_view(self.device, a, bytes)?;
        Ok(self.top().push_ref(r)?)
    }

    fn scalar(&mut self, v: Variant<'static>) -> Result<(), fnabi_core::Error> {
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F32 as F32;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F64 as F64;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I8 as I8;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I16 as I16;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I32 as I32;
        use sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I64 as I64;
        let value = match v {
            Variant::I8(x) => value(I8, |u| u.i8_ = x),
            Variant::I16(x) => value(I16, |u| u.i16_ = x),
            Variant::I32(x) => value(I32, |u| u.i32_ = x),
            Variant::I64(x) => value(I64, |u| u.i64_ = x),
            Variant::F32(x) => value(F32, |u| u.f32_ = x),
            Variant::F64(x) => value(F64, |u| u.f64_ = x),
            other => {
                return Err(fnabi_core::Error::invalid_argument(format!("{other} is not a scalar")));
            }
        };
        Ok(self.top().push_value(&value)?)
    }
}

/// Reads the elements of a runtime list as fnabi VM values (buffer views
/// as zero-copy arrays, see [`array_of_view`]).
///
/// # Safety
/// `list` must be a live list whose buffer views belong to `device`.
pub(crate) unsafe fn read_items(
    device: &Arc<DeviceHandle>,
    list: *mut sys::iree_vm_list_t,
) -> Result<Vec<Variant<'static>>, fnabi_core::Error> {
    // SAFETY: forwarded.
    unsafe { read_items_at(device, list, 0) }
}

/// The elements of a call's output list: its one value (most functions),
/// kept out of a `Vec`, or all of them.
pub(crate) enum OutputItems {
    One(Variant<'static>),
    Many(Vec<Variant<'static>>),
}

/// [`read_items`] of a call's output list, with no list allocated when it
/// holds one value.
///
/// # Safety
/// As for [`read_items`].
pub(crate) unsafe fn read_outputs(
    device: &Arc<DeviceHandle>,
    list: *mut sys::iree_vm_list_t,
) -> Result<OutputItems, fnabi_core::Error> {
    // SAFETY: the list is live (caller).
    if unsafe { sys::iree_vm_list_size(list) } == 1 {
        // SAFETY: element 0 of a live list of one (caller).
        return unsafe { read_item(device, list, 0, 0) }.map(OutputItems::One);
    }
    // SAFETY: forwarded.
    unsafe { read_items(device, list) }.map(OutputItems::Many)
}

/// # Safety
/// As for [`read_items`].
unsafe fn read_items_at(
    device: &Arc<DeviceHandle>,
    list: *mut sys::iree_vm_list_t,
    depth: usize,
) -> Result<Vec<Variant<'static>>, fnabi_core::Error> {
    if depth >= MAX_DEPTH {
        return Err(fnabi_core::Error::invalid_argument(format!("VM results nest deeper than {MAX_DEPTH} levels")));
    }
    // SAFETY: the list is live (caller).
    let n = unsafe { sys::iree_vm_list_size(list) };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: i < size of the live list (caller).
        out.push(unsafe { read_item(device, list, i, depth) }?);
    }
    Ok(out)
}

/// Element `i` of a runtime list as an fnabi VM value.
///
/// # Safety
/// As for [`read_items`], and `i` is below the list's size.
unsafe fn read_item(
    device: &Arc<DeviceHandle>,
    list: *mut sys::iree_vm_list_t,
    i: usize,
    depth: usize,
) -> Result<Variant<'static>, fnabi_core::Error> {
    // SAFETY: a zeroed variant is the empty variant.
    let mut var: sys::iree_vm_variant_t = unsafe { std::mem::zeroed() };
    // SAFETY: i < size (caller); `assign` borrows any ref without retaining
    // it, and the list keeps it alive while it is read here.
    check(unsafe { sys::iree_vm_list_get_variant_assign(list, i, &mut var) }, || {
        format!("reading element {i} of a result list")
    })?;
    // SAFETY: `var` was just filled from the live list.
    unsafe { read_variant(device, &var, depth) }
}

/// # Safety
/// `var` must be a variant borrowed from a live list of `device`.
unsafe fn read_variant(
    device: &Arc<DeviceHandle>,
    var: &sys::iree_vm_variant_t,
    depth: usize,
) -> Result<Variant<'static>, fnabi_core::Error> {
    let vt = ffi::type_def_value(&var.type_);
    if vt != sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_NONE {
        let u = &var.__bindgen_anon_1;
        // SAFETY: the type tag says which union member is set.
        return Ok(unsafe {
            match value_type_of_code(vt) {
                Some(ValueType::I8) => Variant::I8(u.i8_),
                Some(ValueType::I16) => Variant::I16(u.i16_),
                Some(ValueType::I32) => Variant::I32(u.i32_),
                Some(ValueType::I64) => Variant::I64(u.i64_),
                Some(ValueType::F32) => Variant::F32(u.f32_),
                Some(ValueType::F64) => Variant::F64(u.f64_),
                None => {
                    let kind = CallError::value_kind(
                        "a value of type i8, i16, i32, i64, f32 or f64",
                        format!("value type {vt}"),
                    );
                    return Err(CallError::result(kind).with_note("a VM value").into());
                }
            }
        });
    }
    // SAFETY: a non-value variant holds a ref (possibly null).
    let r = unsafe { var.__bindgen_anon_1.ref_ };
    if r.ptr.is_null() {
        return Ok(Variant::None);
    }
    if r.type_ == ffi::buffer_view_type() {
        let view = NonNull::new(r.ptr.cast::<sys::iree_hal_buffer_view_t>()).ok_or_else(|| {
            fnabi_core::Error::from(ffi::local_error(StatusCode::Internal, "reading a result", "null view".into()))
        })?;
        // SAFETY: a live buffer view of this device (caller).
        let array = unsafe { array_of_view(device, view) }?;
        return Ok(Variant::buffer_view(BufferView::from_boxed(array)?));
    }
    if r.type_ == ffi::list_type() {
        let list = r.ptr.cast::<sys::iree_vm_list_t>();
        // SAFETY: a live list (borrowed from its parent).
        let et = unsafe { sys::iree_vm_list_element_type(list) };
        let element_type = element_type_of_def(&et);
        // SAFETY: as above.
        let items = unsafe { read_items_at(device, list, depth + 1) }?;
        let mut l = VmList::with_capacity(element_type, items.len());
        for item in items {
            l.push(item)?;
        }
        return Ok(Variant::list(l));
    }
    // Any other ref: keep a reference to it.
    let mut owned = ffi::null_ref();
    // SAFETY: +1 on the live ref into a local that the OwnedRef takes over.
    unsafe { sys::iree_vm_ref_retain(&r as *const _ as *mut _, &mut owned) };
    // SAFETY: the type of a live ref is a registered type.
    let name = unsafe { ffi::sv_string(sys::iree_vm_ref_type_name(r.type_)) };
    let name = if name.starts_with('!') { name } else { format!("!{name}") };
    Ok(Variant::Ref(VmRef::Opaque(OpaqueRef::new(
        name,
        Box::new(RuntimeRef { r: OwnedRef(owned), _device: device.clone() }),
    ))))
}

/// fnabi's element type of a runtime list type.
fn element_type_of_def(t: &sys::iree_vm_type_def_t) -> ListElementType {
    if let Some(v) = value_type_of_code(ffi::type_def_value(t)) {
        return ListElementType::Value(v);
    }
    let r = ffi::type_def_ref(t);
    if r == 0 {
        ListElementType::Variant
    } else if r == ffi::buffer_view_type() {
        ListElementType::Ref(RefType::BufferView)
    } else if r == ffi::list_type() {
        ListElementType::Ref(RefType::List)
    } else {
        // SAFETY: a list's element ref type is a registered type.
        let name = unsafe { ffi::sv_string(sys::iree_vm_ref_type_name(r)) };
        let name = if name.starts_with('!') { name } else { format!("!{name}") };
        ListElementType::Ref(RefType::Opaque(name.into()))
    }
}
