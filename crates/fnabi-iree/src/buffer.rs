//! HAL buffer views in and out.
//!
//! In: a [`Staging`] area copies each argument array into a device buffer.
//! The buffers of a call state are kept and refilled on the next call when
//! the size matches and nothing else holds them (the buffer's reference
//! count is 1: no result, module global or user array took a reference), so
//! a hot loop allocates nothing. Host memory is copied rather than imported:
//! IREE may write into an argument buffer (results tied to arguments), and
//! a borrowed [`Array`] cannot be kept alive for as long as the runtime
//! might hold it.
//!
//! Out: [`array_of_view`] gives a read-only [`Array`] over the buffer's own
//! memory, without a copy: the array holds a reference to the buffer view
//! and a mapping of it, both released when the last clone of the array is
//! dropped. Buffers that cannot be mapped are copied out.

use crate::error::{IreeError, StatusCode};
use crate::ffi::{self, check, sys};
use crate::runtime::DeviceHandle;
use fnabi::array::{HostBuffer, element_count};
use fnabi::{Array, DType, ScalarType};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

/// IREE's element type of a dtype (signed and unsigned integers as
/// `SINT`/`UINT`, which the compiled code's checks accept for its signless
/// `INT` types).
pub(crate) fn element_type_of(d: DType) -> sys::iree_hal_element_type_t {
    use ScalarType as S;
    match d {
        DType::Bool => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_BOOL_8,
        DType::Scalar(s) => match s {
            S::F32 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_32,
            S::F16 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_16,
            S::F64 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_64,
            S::BF16 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_BFLOAT_16,
            S::I8 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_8,
            S::I16 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_16,
            S::I32 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_32,
            S::I64 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_64,
            S::U8 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_8,
            S::U16 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_16,
            S::U32 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_32,
            S::U64 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_64,
        },
    }
}

/// The dtype of an IREE element type; signless integers read as signed.
/// `None` for types a host array cannot hold (4-bit, fp8, complex, opaque).
pub(crate) fn dtype_of(t: sys::iree_hal_element_type_t) -> Option<DType> {
    use ScalarType as S;
    use sys::{
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_BFLOAT_16 as BF16,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_BOOL_8 as BOOL8,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_16 as F16,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_32 as F32,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_64 as F64,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_8 as INT8,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_16 as INT16,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_32 as INT32,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_64 as INT64,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_8 as SINT8,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_16 as SINT16,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_32 as SINT32,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_64 as SINT64,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_8 as UINT8,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_16 as UINT16,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_32 as UINT32,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_64 as UINT64,
    };
    Some(match t {
        BOOL8 => DType::Bool,
        F32 => DType::Scalar(S::F32),
        F16 => DType::Scalar(S::F16),
        F64 => DType::Scalar(S::F64),
        BF16 => DType::Scalar(S::BF16),
        INT8 | SINT8 => DType::Scalar(S::I8),
        INT16 | SINT16 => DType::Scalar(S::I16),
        INT32 | SINT32 => DType::Scalar(S::I32),
        INT64 | SINT64 => DType::Scalar(S::I64),
        UINT8 => DType::Scalar(S::U8),
        UINT16 => DType::Scalar(S::U16),
        UINT32 => DType::Scalar(S::U32),
        UINT64 => DType::Scalar(S::U64),
        _ => return None,
    })
}

/// Device buffers for the argument arrays of one call state, reused from
/// call to call (see the [module docs](self)).
#[derive(Default)]
pub(crate) struct Staging {
    buffers: Vec<NonNull<sys::iree_hal_buffer_t>>,
    next: usize,
}

// SAFETY: the staged buffers are ref-counted IREE objects owned by this
// value; HAL buffers may be used and released from any thread, and a
// `Staging` is only used through `&mut`.
unsafe impl Send for Staging {}

impl Drop for Staging {
    fn drop(&mut self) {
        for b in self.buffers.drain(..) {
            // SAFETY: each staged buffer holds one reference owned here.
            unsafe { sys::iree_hal_buffer_release(b.as_ptr()) };
        }
    }
}

/// Whether this value holds the only reference to `buffer`.
///
/// # Safety
/// `buffer` must be a live HAL buffer.
unsafe fn is_unshared(buffer: NonNull<sys::iree_hal_buffer_t>) -> bool {
    // SAFETY: `iree_hal_buffer_t` is public in iree/hal/buffer.h and starts
    // with its `iree_hal_resource_t`, whose first member is the atomic
    // 32-bit reference count that retain/release update; reading it
    // atomically is what `iree_atomic_ref_count_load` does. The buffer is
    // live (caller), and the count is aligned as an i32 field.
    let count = unsafe { AtomicI32::from_ptr(&raw mut (*buffer.as_ptr()).resource.ref_count) };
    count.load(Ordering::Acquire) == 1
}

impl Staging {
    /// Starts a call: buffers are handed out from the first again.
    pub(crate) fn begin(&mut self) {
        self.next = 0;
    }

    /// A new buffer view (owned reference) of `array`'s elements, which
    /// must be dense and row-major, in a device buffer of `device`.
    pub(crate) fn buffer_view(
        &mut self,
        device: &DeviceHandle,
        array: &Array<'_>,
    ) -> Result<NonNull<sys::iree_hal_buffer_view_t>, IreeError> {
        let bytes = array.as_bytes().ok_or_else(|| {
            ffi::local_error(StatusCode::InvalidArgument, "staging an argument", "a strided array".into())
        })?;
        let slot = self.next;
        self.next += 1;
        let reusable = self.buffers.get(slot).copied().filter(|&b| {
            // SAFETY: staged buffers are live (held by this value).
            unsafe { sys::iree_hal_buffer_byte_length(b.as_ptr()) == bytes.len() && is_unshared(b) }
        });
        let buffer = match reusable {
            Some(b) => b,
            None => {
                let b = allocate(device, bytes.len())?;
                if slot < self.buffers.len() {
                    let old = std::mem::replace(&mut self.buffers[slot], b);
                    // SAFETY: drops this value's reference to the old buffer
                    // (whoever else holds it keeps it alive).
                    unsafe { sys::iree_hal_buffer_release(old.as_ptr()) };
                } else {
                    self.buffers.push(b);
                }
                b
            }
        };
        write(device, buffer, bytes)?;
        let mut view = std::ptr::null_mut();
        // SAFETY: `buffer` is live and holds `bytes.len()` bytes, which is
        // the element count of the shape times the element size (the array
        // is dense); the view retains the buffer; out-pointer to a local.
        check(
            unsafe {
                sys::iree_hal_buffer_view_create(
                    buffer.as_ptr(),
                    array.rank(),
                    array.shape().as_ptr(),
                    element_type_of(array.dtype()),
                    sys::iree_hal_encoding_types_t_IREE_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR as _,
                    ffi::host_allocator(),
                    &mut view,
                )
            },
            || "creating an argument buffer view".into(),
        )?;
        NonNull::new(view).ok_or_else(|| {
            ffi::local_error(StatusCode::Internal, "creating an argument buffer view", "got a null view".into())
        })
    }
}

/// A new device-local, host-visible buffer of `len` bytes.
fn allocate(device: &DeviceHandle, len: usize) -> Result<NonNull<sys::iree_hal_buffer_t>, IreeError> {
    let params = sys::iree_hal_buffer_params_t {
        usage: (sys::iree_hal_buffer_usage_bits_t_IREE_HAL_BUFFER_USAGE_DEFAULT
            | sys::iree_hal_buffer_usage_bits_t_IREE_HAL_BUFFER_USAGE_MAPPING) as _,
        access: sys::iree_hal_memory_access_bits_t_IREE_HAL_MEMORY_ACCESS_ALL as _,
        type_: (sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL
            | sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_HOST_VISIBLE) as _,
        queue_affinity: 0,
        min_alignment: 0,
    };
    let mut buffer = std::ptr::null_mut();
    // SAFETY: the device (and so its allocator) is live; out-pointer to a local.
    check(
        unsafe {
            sys::iree_hal_allocator_allocate_buffer(
                sys::iree_hal_device_allocator(device.device),
                params,
                len,
                &mut buffer,
            )
        },
        || format!("allocating a {len}-byte argument buffer"),
    )?;
    NonNull::new(buffer)
        .ok_or_else(|| ffi::local_error(StatusCode::Internal, "allocating an argument buffer", "got null".into()))
}

/// Copies `bytes` to the start of `buffer`: through a mapping when the
/// buffer is host-visible, else by a host-to-device transfer.
fn write(device: &DeviceHandle, buffer: NonNull<sys::iree_hal_buffer_t>, bytes: &[u8]) -> Result<(), IreeError> {
    if bytes.is_empty() {
        return Ok(());
    }
    // SAFETY: `buffer` is live and at least bytes.len() long (allocated or
    // checked by the caller); the source is valid for bytes.len() bytes.
    let mapped =
        unsafe { sys::iree_hal_buffer_map_write(buffer.as_ptr(), 0, bytes.as_ptr().cast::<c_void>(), bytes.len()) };
    if mapped.is_null() {
        return Ok(());
    }
    // Not mappable: free the status and transfer instead.
    let _ = check(mapped, String::new);
    // SAFETY: as above; the transfer completes before returning (infinite
    // timeout), so `bytes` outlives its use.
    check(
        unsafe {
            sys::iree_hal_device_transfer_h2d(
                device.device,
                bytes.as_ptr().cast::<c_void>(),
                buffer.as_ptr(),
                0,
                bytes.len(),
                sys::iree_hal_transfer_buffer_flag_bits_t_IREE_HAL_TRANSFER_BUFFER_FLAG_DEFAULT as _,
                ffi::infinite_timeout(),
            )
        },
        || format!("copying {} bytes to an argument buffer", bytes.len()),
    )
}

/// A read mapping of a buffer view, with a reference that keeps the view
/// (and its buffer) alive: the owner of a result array's memory.
struct MappedView {
    mapping: sys::iree_hal_buffer_mapping_t,
    view: NonNull<sys::iree_hal_buffer_view_t>,
}

// SAFETY: the mapping is read-only host memory of a buffer kept alive by
// the retained view; unmapping and releasing are thread-safe IREE calls,
// and nothing mutates the mapping struct after creation.
unsafe impl Send for MappedView {}
// SAFETY: see `Send`: shared access never touches the struct.
unsafe impl Sync for MappedView {}

impl Drop for MappedView {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by iree_hal_buffer_map_range and is
        // unmapped once; the view reference is owned by this value.
        unsafe {
            let _ = check(sys::iree_hal_buffer_unmap_range(&mut self.mapping), String::new);
            sys::iree_hal_buffer_view_release(self.view.as_ptr());
        }
    }
}

/// The contents of a result buffer view as a read-only [`Array`]: the
/// buffer's own memory when it can be mapped (no copy; the array keeps the
/// view alive), else a copy.
///
/// # Safety
/// `view` must be a live buffer view of `device`.
pub(crate) unsafe fn array_of_view(
    device: &DeviceHandle,
    view: NonNull<sys::iree_hal_buffer_view_t>,
) -> Result<Array<'static>, fnabi::Error> {
    let v = view.as_ptr();
    // SAFETY: `view` is live (caller).
    let (encoding, element_type, rank, dims, byte_length) = unsafe {
        (
            sys::iree_hal_buffer_view_encoding_type(v),
            sys::iree_hal_buffer_view_element_type(v),
            sys::iree_hal_buffer_view_shape_rank(v),
            sys::iree_hal_buffer_view_shape_dims(v),
            sys::iree_hal_buffer_view_byte_length(v),
        )
    };
    let shape: Vec<usize> = if rank == 0 || dims.is_null() {
        Vec::new()
    } else {
        // SAFETY: a live view has `rank` dims at `dims`.
        unsafe { std::slice::from_raw_parts(dims, rank) }.to_vec()
    };
    let mismatch = |expected: &str, got: String| fnabi::Error::Mismatch {
        context: "result buffer view".into(),
        expected: expected.into(),
        got,
    };
    if encoding != sys::iree_hal_encoding_types_t_IREE_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR {
        return Err(mismatch("dense row-major encoding", format!("encoding 0x{encoding:08X}")));
    }
    let dtype = dtype_of(element_type).ok_or_else(|| {
        mismatch("an element type a host array can hold", format!("IREE element type 0x{element_type:08X}"))
    })?;
    let len = element_count(&shape)?
        .checked_mul(dtype.size())
        .ok_or_else(|| mismatch("a size that fits in memory", format!("shape {shape:?}")))?;
    if byte_length != len {
        return Err(mismatch(&format!("{len} bytes for shape {shape:?}"), format!("{byte_length} bytes")));
    }
    if len == 0 {
        return Array::zeros(dtype, &shape);
    }
    // SAFETY: `view` is live; its buffer lives as long as the view.
    let buffer = unsafe { sys::iree_hal_buffer_view_buffer(v) };
    // SAFETY: a zeroed mapping struct is the documented initial state.
    let mut mapping: sys::iree_hal_buffer_mapping_t = unsafe { std::mem::zeroed() };
    // SAFETY: `buffer` is live and at least `len` bytes long (the view's
    // byte length); out-pointer to a local.
    let mapped = unsafe {
        sys::iree_hal_buffer_map_range(
            buffer,
            sys::iree_hal_mapping_mode_bits_t_IREE_HAL_MAPPING_MODE_SCOPED as _,
            sys::iree_hal_memory_access_bits_t_IREE_HAL_MEMORY_ACCESS_READ as _,
            0,
            len,
            &mut mapping,
        )
    };
    if mapped.is_null() {
        let ptr = mapping.contents.data;
        if let Some(p) = NonNull::new(ptr)
            && mapping.contents.data_length >= len
            && (p.as_ptr() as usize).is_multiple_of(dtype.size().max(1))
        {
            // SAFETY: +1 on the live view, owned by the MappedView.
            unsafe { sys::iree_hal_buffer_view_retain(v) };
            let owner = MappedView { mapping, view };
            // SAFETY: p..p+len is mapped, readable host memory that stays
            // valid while `owner` holds the mapping and the view; nobody
            // writes a result buffer after the call returned it.
            let host = unsafe { HostBuffer::from_owner(p, len, false, Box::new(owner)) };
            return Array::from_buffer(dtype, &shape, None, Arc::new(host), 0);
        }
        // SAFETY: unmaps the mapping just made.
        let _ = check(unsafe { sys::iree_hal_buffer_unmap_range(&mut mapping) }, String::new);
    } else {
        let _ = check(mapped, String::new);
    }
    // Copy out.
    let mut out = Array::zeros(dtype, &shape)?;
    let dst = out.as_mut_ptr()?;
    // SAFETY: `out` is a fresh, uniquely held buffer of `len` bytes that
    // nothing reads until the transfer (which blocks) completes; `buffer` is
    // live and `len` long.
    check(
        unsafe {
            sys::iree_hal_device_transfer_d2h(
                device.device,
                buffer,
                0,
                dst.cast::<c_void>(),
                len,
                sys::iree_hal_transfer_buffer_flag_bits_t_IREE_HAL_TRANSFER_BUFFER_FLAG_DEFAULT as _,
                ffi::infinite_timeout(),
            )
        },
        || format!("reading a {len}-byte result"),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_types_round_trip() {
        let all = std::iter::once(DType::Bool).chain(ScalarType::ALL.iter().map(|&s| DType::Scalar(s)));
        for d in all {
            assert_eq!(dtype_of(element_type_of(d)), Some(d), "{d}");
        }
        // Signless integers read as signed.
        assert_eq!(
            dtype_of(sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_32),
            Some(DType::Scalar(ScalarType::I32))
        );
        assert_eq!(dtype_of(sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_4), None);
        assert_eq!(dtype_of(sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_COMPLEX_FLOAT_64), None);
    }
}
