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
pub(crate) fn check(status: sys::iree_status_t, operation: impl FnOnce() -> String) -> Result<(), IreeError> {
    if status.is_null() {
        return Ok(());
    }
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
    Err(IreeError::new(StatusCode::from_raw(code), operation(), message))
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

/// `iree_vm_make_undefined_type_def()`: any variant.
pub(crate) fn variant_type_def() -> sys::iree_vm_type_def_t {
    sys::iree_vm_type_def_t::default()
}

/// `iree_vm_make_value_type_def(t)`.
pub(crate) fn value_type_def(value_type: sys::iree_vm_value_type_t) -> sys::iree_vm_type_def_t {
    let mut t = sys::iree_vm_type_def_t::default();
    t.set_value_type_bits(value_type as usize);
    t
}

/// `iree_vm_make_ref_type_def(t)`.
pub(crate) fn ref_type_def(ref_type: sys::iree_vm_ref_type_t) -> sys::iree_vm_type_def_t {
    let mut t = sys::iree_vm_type_def_t::default();
    t.set_ref_type_bits(ref_type >> REF_TYPE_TAG_BITS);
    t
}

/// The value type of a type def (`IREE_VM_VALUE_TYPE_NONE` for refs and variants).
pub(crate) fn type_def_value(t: &sys::iree_vm_type_def_t) -> sys::iree_vm_value_type_t {
    t.value_type_bits() as sys::iree_vm_value_type_t
}

/// The ref type of a type def (`0` for values and variants).
pub(crate) fn type_def_ref(t: &sys::iree_vm_type_def_t) -> sys::iree_vm_ref_type_t {
    t.ref_type_bits() << REF_TYPE_TAG_BITS
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

/// An empty (null) ref.
pub(crate) fn null_ref() -> sys::iree_vm_ref_t {
    sys::iree_vm_ref_t { ptr: null_mut(), type_: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

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
