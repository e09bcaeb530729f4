//! The raw edge of the IREE C runtime (`eerie-sys` bindings): the host
//! allocator, string views, statuses turned into [`IreeError`]s (and
//! freed), type definitions, and the `static inline` helpers that have no
//! bindings, written out by hand.

use crate::error::{IreeError, StatusCode};
pub(crate) use eerie_sys::runtime as sys;
use std::ffi::{c_char, c_void};
use std::ptr::null_mut;

unsafe extern "C" {
    // IREE's libc allocator (iree/base/allocator_libc.c). It is in
    // libeerie_runtime.a but has no binding: `iree_allocator_system()` is a
    // static inline behind IREE_ALLOCATOR_SYSTEM_CTL, which bindgen does not
    // see.
    fn iree_allocator_libc_ctl(
        self_: *mut c_void,
        command: sys::iree_allocator_command_t,
        params: *const c_void,
        inout_ptr: *mut *mut c_void,
    ) -> sys::iree_status_t;
}

/// IREE's system (libc) allocator, what `iree_allocator_system()` returns.
pub(crate) fn host_allocator() -> sys::iree_allocator_t {
    sys::iree_allocator_t { self_: null_mut(), ctl: Some(iree_allocator_libc_ctl) }
}

/// The null allocator: IREE never frees memory given with it.
pub(crate) fn null_allocator() -> sys::iree_allocator_t {
    sys::iree_allocator_t { self_: null_mut(), ctl: None }
}

/// A string view of `s` (valid as long as `s`).
pub(crate) fn sv(s: &str) -> sys::iree_string_view_t {
    sys::iree_string_view_t { data: s.as_ptr().cast::<c_char>(), size: s.len() }
}

/// The text of a string view, lossily decoded.
///
/// # Safety
/// `v` must point to `v.size` readable bytes (or be empty).
pub(crate) unsafe fn sv_string(v: sys::iree_string_view_t) -> String {
    if v.data.is_null() || v.size == 0 {
        return String::new();
    }
    // SAFETY: the caller guarantees v.size readable bytes at v.data.
    let bytes = unsafe { std::slice::from_raw_parts(v.data.cast::<u8>(), v.size) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// `Ok(())` for an OK status; otherwise the status as an [`IreeError`]
/// (code and IREE's message), after freeing it. `operation` names what was
/// being done, for the message; it is only called on failure.
///
/// Inline: every runtime call goes through it, and the OK case is one
/// test (out of line it was a call with a full prologue each time, one
/// copy per closure type; the wall-time gain was within noise).
#[inline(always)]
pub(crate) fn check(status: sys::iree_status_t, operation: impl FnOnce() -> String) -> Result<(), IreeError> {
    if status.is_null() { Ok(()) } else { Err(status_error(status, operation)) }
}

/// The error of a failed status (see [`check`]); frees the status.
#[cold]
#[inline(never)]
fn status_error(status: sys::iree_status_t, operation: impl FnOnce() -> String) -> IreeError {
    // The code lives in the low bits of the status handle (iree_status_code()).
    let code = (status as usize & sys::iree_status_code_e_IREE_STATUS_CODE_MASK as usize) as u32;
    let allocator = host_allocator();
    let mut buf: *mut c_char = null_mut();
    let mut len = 0usize;
    // SAFETY: `status` is a live, non-OK status that this function owns;
    // iree_status_to_string allocates the text with `allocator`, which is
    // freed right after copying it out. The status is freed once, by
    // iree_status_ignore (which also accepts statuses without payload).
    let message = unsafe {
        let message = if sys::iree_status_to_string(status, &allocator, &mut buf, &mut len) && !buf.is_null() {
            let text = String::from_utf8_lossy(std::slice::from_raw_parts(buf.cast::<u8>(), len)).into_owned();
            sys::iree_allocator_free(allocator, buf.cast::<c_void>());
            text
        } else {
            StatusCode::from_raw(code).name().to_string()
        };
        sys::iree_status_ignore(status);
        message
    };
    IreeError::new(StatusCode::from_raw(code), operation(), message)
}

/// An error that fnabi (not IREE) raises about the runtime's data.
pub(crate) fn local_error(code: StatusCode, operation: &str, message: String) -> IreeError {
    IreeError::new(code, operation.to_string(), message)
}

/// `iree_infinite_timeout()`.
pub(crate) fn infinite_timeout() -> sys::iree_timeout_t {
    sys::iree_timeout_t { type_: sys::iree_timeout_type_e_IREE_TIMEOUT_ABSOLUTE, nanos: i64::MAX }
}

/// The number of tag bits in a ref type (IREE_VM_REF_TYPE_TAG_BITS).
const REF_TYPE_TAG_BITS: u32 = 3;

/// The bits of the value-type field of a type def.
const VALUE_TYPE_MASK: usize = (1 << REF_TYPE_TAG_BITS) - 1;

// A type def is one word: the C bitfields `value_type_bits :
// IREE_VM_REF_TYPE_TAG_BITS` then `ref_type_bits : the rest` (the first
// bitfield in the low bits, as GCC and Clang lay them out). fnabi reads and
// writes the word directly: bindgen's generated accessors move bit by bit
// (about 60 ns per call on the hot path).
const _: () = assert!(std::mem::size_of::<sys::iree_vm_type_def_t>() == std::mem::size_of::<usize>());

fn type_def_from_bits(bits: usize) -> sys::iree_vm_type_def_t {
    // SAFETY: a type def is a plain word of bitfields (size asserted above);
    // every bit pattern is a valid value.
    unsafe { std::mem::transmute::<usize, sys::iree_vm_type_def_t>(bits) }
}

fn type_def_bits(t: &sys::iree_vm_type_def_t) -> usize {
    // SAFETY: as for `type_def_from_bits`.
    unsafe { std::mem::transmute::<sys::iree_vm_type_def_t, usize>(*t) }
}

/// `iree_vm_make_undefined_type_def()`: any variant.
pub(crate) fn variant_type_def() -> sys::iree_vm_type_def_t {
    type_def_from_bits(0)
}

/// `iree_vm_make_value_type_def(t)`.
pub(crate) fn value_type_def(value_type: sys::iree_vm_value_type_t) -> sys::iree_vm_type_def_t {
    type_def_from_bits(value_type as usize & VALUE_TYPE_MASK)
}

/// `iree_vm_make_ref_type_def(t)` (the tag bits of the ref type are dropped).
pub(crate) fn ref_type_def(ref_type: sys::iree_vm_ref_type_t) -> sys::iree_vm_type_def_t {
    type_def_from_bits(ref_type & !VALUE_TYPE_MASK)
}

/// The value type of a type def (`IREE_VM_VALUE_TYPE_NONE` for refs and variants).
pub(crate) fn type_def_value(t: &sys::iree_vm_type_def_t) -> sys::iree_vm_value_type_t {
    (type_def_bits(t) & VALUE_TYPE_MASK) as sys::iree_vm_value_type_t
}

/// The ref type of a type def (`0` for values and variants), as
/// `iree_vm_type_def_as_ref` gives it.
pub(crate) fn type_def_ref(t: &sys::iree_vm_type_def_t) -> sys::iree_vm_ref_type_t {
    type_def_bits(t) & !VALUE_TYPE_MASK
}

/// Whether two type defs are the same type (`iree_vm_type_def_equal`).
pub(crate) fn same_type_def(a: &sys::iree_vm_type_def_t, b: &sys::iree_vm_type_def_t) -> bool {
    type_def_bits(a) == type_def_bits(b)
}

/// The registered ref type of HAL buffer views. Valid once the instance
/// has registered the HAL types (see `runtime::instance`).
pub(crate) fn buffer_view_type() -> sys::iree_vm_ref_type_t {
    // SAFETY: a plain read of a word that IREE writes once, when the
    // process-wide instance registers the HAL types (before any caller
    // can reach this function: every path goes through `instance()`).
    unsafe { sys::iree_hal_buffer_view_registration }
}

/// The registered ref type of VM lists.
pub(crate) fn list_type() -> sys::iree_vm_ref_type_t {
    // SAFETY: as for `buffer_view_type`; the VM registers its builtin
    // types when the instance is created.
    unsafe { sys::iree_vm_list_registration }
}

/// The registered ref type of HAL buffers.
pub(crate) fn buffer_type() -> sys::iree_vm_ref_type_t {
    // SAFETY: as for `buffer_view_type`.
    unsafe { sys::iree_hal_buffer_registration }
}

/// The current reference count of a VM-registered object of type `t`.
///
/// # Safety
/// `ptr` must be a live object of the registered ref type `t`.
pub(crate) unsafe fn ref_count(ptr: *mut std::ffi::c_void, t: sys::iree_vm_ref_type_t) -> i32 {
    // The VM keeps every ref-counted object's counter at the offset its
    // type descriptor records (`offsetof_counter`, in units of the 4-byte
    // counter), and a ref type carries that offset in its low tag bits:
    // exactly how `iree_vm_get_raw_counter_ptr` (vm/ref.c) finds it for
    // retain and release.
    let offset = t & ((1 << REF_TYPE_TAG_BITS) - 1);
    // SAFETY: the counter is an aligned i32 inside the live object (caller),
    // updated only atomically by IREE; an atomic load is what
    // iree_atomic_ref_count_load does.
    unsafe { std::sync::atomic::AtomicI32::from_ptr(ptr.cast::<i32>().add(offset)) }
        .load(std::sync::atomic::Ordering::Acquire)
}

/// An empty (null) ref.
pub(crate) fn null_ref() -> sys::iree_vm_ref_t {
    sys::iree_vm_ref_t { ptr: null_mut(), type_: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_def_words_match_the_bitfields() {
        let v = value_type_def(sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F64);
        assert_eq!(v.value_type_bits(), sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_F64 as usize);
        assert_eq!(v.ref_type_bits(), 0);
        let r = ref_type_def(0x7f00_1234_5678 | 3);
        assert_eq!(r.value_type_bits(), 0);
        assert_eq!(r.ref_type_bits() << REF_TYPE_TAG_BITS, 0x7f00_1234_5678);
        let mut b = sys::iree_vm_type_def_t::default();
        b.set_value_type_bits(5);
        b.set_ref_type_bits(0x1234);
        assert_eq!((type_def_value(&b), type_def_ref(&b)), (5, 0x1234 << 3));
        assert!(same_type_def(&b, &type_def_from_bits(5 | (0x1234 << 3))));
        assert!(!same_type_def(&b, &v));
    }

    #[test]
    fn type_defs_pack_like_the_c_helpers() {
        let v = value_type_def(sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I8);
        assert_eq!(type_def_value(&v), sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I8);
        assert_eq!(type_def_ref(&v), 0);
        // Ref types are 8-aligned descriptor addresses (plus a tag that the
        // type def drops).
        let r = ref_type_def(0x7f00_1234_5678 & !7);
        assert_eq!(type_def_value(&r), 0);
        assert_eq!(type_def_ref(&r), 0x7f00_1234_5678 & !7);
        let u = variant_type_def();
        assert_eq!((type_def_value(&u), type_def_ref(&u)), (0, 0));
    }

    #[test]
    fn statuses_become_errors_with_their_message_and_are_freed() {
        assert!(check(std::ptr::null_mut(), || unreachable!()).is_ok());
        let file = c"test.c";
        // SAFETY: a fresh status with a message; `check` consumes it.
        let st = unsafe {
            sys::iree_status_allocate(
                sys::iree_status_code_e_IREE_STATUS_NOT_FOUND as _,
                file.as_ptr(),
                7,
                sv("no such thing"),
            )
        };
        let e = check(st, || "looking".into()).unwrap_err();
        assert_eq!(e.code(), StatusCode::NotFound);
        assert_eq!(e.operation(), "looking");
        assert!(e.message().contains("NOT_FOUND; no such thing"), "{}", e.message());
    }
}
