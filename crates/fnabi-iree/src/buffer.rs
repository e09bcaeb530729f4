//! HAL buffer views in and out.
//!
//! In: [`new_view`] copies an argument array into a new device buffer; a
//! call state keeps it (see `staging.rs`) and rewrites it on later calls
//! through a persistent [`WriteMapping`], which [`is_unshared`] allows only
//! while nothing else holds it. Host memory is copied rather than imported:
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
use fnabi_core::array::{HostBuffer, element_count};
use fnabi_core::error::CallError;
use fnabi_core::{Array, DType, ScalarType};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

/// IREE's element type of a dtype (signed and unsigned integers as
/// `SINT`/`UINT`, which the compiled code's checks accept for its signless
/// `INT` types).
pub(crate) fn element_type_of(d: DType) -> sys::iree_hal_element_type_t {
    use ScalarType as S;
    use fnabi_core::Float8 as F8;
    match d {
        DType::Bool => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_BOOL_8,
        DType::Complex(c) => match c {
            fnabi_core::ComplexType::C64 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_COMPLEX_FLOAT_64,
            fnabi_core::ComplexType::C128 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_COMPLEX_FLOAT_128,
        },
        DType::Float8(f) => match f {
            F8::E4M3FN => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_8_E4M3_FN,
            F8::E5M2 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_8_E5M2,
            F8::E4M3FNUZ => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_8_E4M3_FNUZ,
            F8::E5M2FNUZ => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_8_E5M2_FNUZ,
        },
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
/// `None` for types a host array cannot hold (4-bit, `f8E8M0FNU`,
/// opaque).
pub(crate) fn dtype_of(t: sys::iree_hal_element_type_t) -> Option<DType> {
    use ScalarType as S;
    use sys::{
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_BFLOAT_16 as BF16,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_BOOL_8 as BOOL8,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_COMPLEX_FLOAT_64 as C64,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_COMPLEX_FLOAT_128 as C128,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_8_E4M3_FN as F8E4M3FN,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_8_E4M3_FNUZ as F8E4M3FNUZ,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_8_E5M2 as F8E5M2,
        iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_8_E5M2_FNUZ as F8E5M2FNUZ,
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
        F8E4M3FN => DType::F8E4M3FN,
        F8E5M2 => DType::F8E5M2,
        F8E4M3FNUZ => DType::F8E4M3FNUZ,
        F8E5M2FNUZ => DType::F8E5M2FNUZ,
        C64 => DType::C64,
        C128 => DType::C128,
        _ => return None,
    })
}

/// A new buffer view (owned reference) of `array`'s shape and element type
/// holding `bytes`, `array`'s dense row-major elements, in a new device
/// buffer of `device`.
pub(crate) fn new_view(
    device: &DeviceHandle,
    array: &Array<'_>,
    bytes: &[u8],
) -> Result<NonNull<sys::iree_hal_buffer_view_t>, IreeError> {
    let buffer = allocate(device, bytes.len())?;
    let written = write(device, buffer, bytes);
    let mut view = std::ptr::null_mut();
    let created = written.and_then(|()| {
        // SAFETY: `buffer` is live and holds `bytes.len()` bytes, the element
        // count of the shape times the element size (the array is dense);
        // the view retains the buffer; out-pointer to a local.
        check(
            unsafe {
                sys::iree_hal_buffer_view_create(
                    buffer.as_ptr(),
                    array.rank(),
                    array.shape().as_ptr(),
                    element_type_of(array.dtype()),
                    sys::iree_hal_encoding_types_t_IREE_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR,
                    ffi::host_allocator(),
                    &mut view,
                )
            },
            || "creating an argument buffer view".into(),
        )
    });
    // SAFETY: drops this function's reference: the view holds its own.
    unsafe { sys::iree_hal_buffer_release(buffer.as_ptr()) };
    created?;
    NonNull::new(view).ok_or_else(|| {
        ffi::local_error(StatusCode::Internal, "creating an argument buffer view", "got a null view".into())
    })
}

/// Whether nobody but the caller's one reference holds `view` or its
/// buffer: no result, module global or host array could see a rewrite.
///
/// # Safety
/// `view` must be a live buffer view and `buffer` its buffer.
pub(crate) unsafe fn is_unshared(
    view: NonNull<sys::iree_hal_buffer_view_t>,
    buffer: NonNull<sys::iree_hal_buffer_t>,
) -> bool {
    // SAFETY: `view` and its buffer are live (caller).
    unsafe {
        ffi::ref_count(view.as_ptr().cast(), ffi::buffer_view_type()) == 1
            && ffi::ref_count(buffer.as_ptr().cast(), ffi::buffer_type()) == 1
    }
}

/// The buffer of a buffer view (borrowed: valid while the view lives).
///
/// # Safety
/// `view` must be a live buffer view.
pub(crate) unsafe fn buffer_of(view: NonNull<sys::iree_hal_buffer_view_t>) -> Option<NonNull<sys::iree_hal_buffer_t>> {
    // SAFETY: `view` is live (caller).
    NonNull::new(unsafe { sys::iree_hal_buffer_view_buffer(view.as_ptr()) })
}

/// Writes `bytes` to the start of the buffer of `view` (through a scoped
/// mapping or a transfer).
///
/// # Safety
/// `view` must be a live buffer view at least `bytes.len()` long.
pub(crate) unsafe fn refill(
    device: &DeviceHandle,
    view: NonNull<sys::iree_hal_buffer_view_t>,
    bytes: &[u8],
) -> Result<(), IreeError> {
    // SAFETY: the view is live (caller); its buffer lives as long.
    let buffer = unsafe { sys::iree_hal_buffer_view_buffer(view.as_ptr()) };
    let buffer = NonNull::new(buffer)
        .ok_or_else(|| ffi::local_error(StatusCode::Internal, "refilling an argument", "no buffer".into()))?;
    write(device, buffer, bytes)
}

/// A persistent write mapping of a staged argument buffer: refilling it is
/// a `memcpy` (plus a flush where the memory is not host-coherent).
pub(crate) struct WriteMapping {
    mapping: sys::iree_hal_buffer_mapping_t,
    coherent: bool,
}

impl WriteMapping {
    /// Maps the whole buffer of `view` for writing, when its memory allows
    /// a persistent mapping.
    ///
    /// # Safety
    /// `view` must be a live buffer view, and stay alive (and unshared
    /// whenever the mapping is written) as long as the mapping.
    pub(crate) unsafe fn of(view: NonNull<sys::iree_hal_buffer_view_t>) -> Option<WriteMapping> {
        // SAFETY: the view is live (caller), and so is its buffer.
        let (buffer, len) = unsafe {
            let b = sys::iree_hal_buffer_view_buffer(view.as_ptr());
            (b, sys::iree_hal_buffer_view_byte_length(view.as_ptr()))
        };
        if buffer.is_null() || len == 0 {
            return None;
        }
        // SAFETY: the buffer is live.
        let memory_type = unsafe { sys::iree_hal_buffer_memory_type(buffer) };
        // SAFETY: a zeroed mapping struct is the documented initial state.
        let mut mapping: sys::iree_hal_buffer_mapping_t = unsafe { std::mem::zeroed() };
        // SAFETY: the buffer is live and `len` long; out-pointer to a local.
        let st = unsafe {
            sys::iree_hal_buffer_map_range(
                buffer,
                sys::iree_hal_mapping_mode_bits_t_IREE_HAL_MAPPING_MODE_PERSISTENT,
                sys::iree_hal_memory_access_bits_t_IREE_HAL_MEMORY_ACCESS_WRITE as _,
                0,
                len,
                &mut mapping,
            )
        };
        if check(st, String::new).is_err() || mapping.contents.data.is_null() || mapping.contents.data_length < len {
            return None;
        }
        let coherent = memory_type & sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_HOST_COHERENT != 0;
        Some(WriteMapping { mapping, coherent })
    }

    /// Whether writes need no flush (the memory is host-coherent).
    #[cfg(test)]
    pub(crate) fn is_coherent(&self) -> bool {
        self.coherent
    }

    /// Copies `bytes` to the start of the mapped buffer.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<(), IreeError> {
        if bytes.len() > self.mapping.contents.data_length {
            return Err(ffi::local_error(
                StatusCode::OutOfRange,
                "refilling an argument",
                format!("{} bytes into a {}-byte buffer", bytes.len(), self.mapping.contents.data_length),
            ));
        }
        // SAFETY: the mapping covers data_length >= bytes.len() writable
        // bytes that nobody else reads or writes (the staging area writes
        // only unshared buffers); the source is a separate host array.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.mapping.contents.data, bytes.len()) };
        if self.coherent {
            return Ok(());
        }
        // SAFETY: flushes the range just written of the live mapping.
        check(unsafe { sys::iree_hal_buffer_mapping_flush_range(&mut self.mapping, 0, bytes.len()) }, || {
            "flushing an argument buffer".into()
        })
    }
}

impl Drop for WriteMapping {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping made in `of`, once; its buffer is still
        // alive (the owner drops the mapping before the view).
        let _ = check(unsafe { sys::iree_hal_buffer_unmap_range(&mut self.mapping) }, String::new);
    }
}

// SAFETY: the mapping is host memory of an IREE buffer that its owner keeps
// alive; it is only written through `&mut`.
unsafe impl Send for WriteMapping {}

/// The elements of a buffer view's array: dense, row-major bytes.
pub(crate) fn view_bytes<'a>(b: &'a fnabi_core::vm::BufferView<'_>) -> &'a [u8] {
    let a = b.array();
    debug_assert!(a.is_c_contiguous());
    // SAFETY: a BufferView's array is C-contiguous (every constructor of
    // BufferView checks it), so its nbytes() bytes from as_ptr() lie inside
    // its storage (checked when the array was built), which `b` keeps alive
    // and unmodified while borrowed. Skips the second contiguity check that
    // `BufferView::bytes` would make.
    unsafe { std::slice::from_raw_parts(a.as_ptr(), a.nbytes()) }
}

/// A new device-local, host-visible, host-coherent buffer of `len` bytes.
/// (fnabi's devices are local: their heap allocator gives host memory,
/// which is coherent; asking for it marks the buffer so, and refilling a
/// staged argument then skips a flush call per buffer: ~9 ns each here.)
fn allocate(device: &DeviceHandle, len: usize) -> Result<NonNull<sys::iree_hal_buffer_t>, IreeError> {
    let params = sys::iree_hal_buffer_params_t {
        usage: sys::iree_hal_buffer_usage_bits_t_IREE_HAL_BUFFER_USAGE_DEFAULT
            | sys::iree_hal_buffer_usage_bits_t_IREE_HAL_BUFFER_USAGE_MAPPING
            | sys::iree_hal_buffer_usage_bits_t_IREE_HAL_BUFFER_USAGE_MAPPING_PERSISTENT,
        access: sys::iree_hal_memory_access_bits_t_IREE_HAL_MEMORY_ACCESS_ALL as _,
        type_: (sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL
            | sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_HOST_VISIBLE
            | sys::iree_hal_memory_type_bits_t_IREE_HAL_MEMORY_TYPE_HOST_COHERENT) as _,
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
/// (and its buffer) alive, and the device that keeps the buffer's allocator
/// alive: the owner of a result array's memory. (The scoped mapping's own
/// reference to the buffer is not enough: with only that, another
/// thread's call wrote its result into the memory of one whose view had
/// been released, in `threads_share_a_function`.)
struct MappedView {
    /// Zeroed until mapped; unmapping a zeroed mapping does nothing.
    mapping: sys::iree_hal_buffer_mapping_t,
    /// Retained by whoever makes the owner; released once, after the unmap.
    view: NonNull<sys::iree_hal_buffer_view_t>,
    /// Released after the view (fields drop after `drop`'s body).
    _device: Arc<DeviceHandle>,
}

// SAFETY: the mapping is read-only host memory of a buffer kept alive by
// the retained view; unmapping and releasing are thread-safe IREE calls,
// and nothing mutates the mapping struct once it is made.
unsafe impl Send for MappedView {}
// SAFETY: see `Send`: shared access never touches the struct.
unsafe impl Sync for MappedView {}

impl Drop for MappedView {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by iree_hal_buffer_map_range (or is
        // still zeroed) and is unmapped once; the view reference is owned
        // by this value.
        unsafe {
            let _ = check(sys::iree_hal_buffer_unmap_range(&mut self.mapping), String::new);
            sys::iree_hal_buffer_view_release(self.view.as_ptr());
        }
    }
}

/// The contents of a result buffer view as a read-only [`Array`], in its box: the
/// buffer's own memory when it can be mapped (no copy; the array keeps the
/// view alive), else a copy.
///
/// # Safety
/// `view` must be a live buffer view of `device`.
pub(crate) unsafe fn array_of_view(
    device: &Arc<DeviceHandle>,
    view: NonNull<sys::iree_hal_buffer_view_t>,
) -> Result<Box<Array<'static>>, fnabi_core::Error> {
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
    // In place up to rank 6, as an array keeps it (no allocation per result).
    let shape: fnabi_core::array::DimVec<usize> = if rank == 0 || dims.is_null() {
        fnabi_core::array::DimVec::new()
    } else {
        // SAFETY: a live view has `rank` dims at `dims`.
        fnabi_core::array::DimVec::from_slice(unsafe { std::slice::from_raw_parts(dims, rank) })
    };
    let mismatch = |expected: &str, got: String| -> fnabi_core::Error {
        CallError::result(CallError::value_kind(expected.to_owned(), got)).with_note("a buffer view").into()
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
        return Array::zeros(dtype, &shape).map(Box::new);
    }
    // SAFETY: `view` is live; its buffer lives as long as the view.
    let buffer = unsafe { sys::iree_hal_buffer_view_buffer(v) };
    // The owner is boxed first and the mapping written straight into it:
    // made on the stack and moved into its box, the mapping (written by the
    // runtime a word at a time) was read back wider than it was written.
    // SAFETY: +1 on the live view, owned by the MappedView from here on.
    unsafe { sys::iree_hal_buffer_view_retain(v) };
    // SAFETY: a zeroed mapping struct is the documented initial state.
    let mut owner = Box::new(MappedView { mapping: unsafe { std::mem::zeroed() }, view, _device: device.clone() });
    // SAFETY: `buffer` is live and at least `len` bytes long (the view's
    // byte length); the out-pointer is the boxed owner's mapping, which a
    // failed map leaves zeroed.
    let mapped = unsafe {
        sys::iree_hal_buffer_map_range(
            buffer,
            sys::iree_hal_mapping_mode_bits_t_IREE_HAL_MAPPING_MODE_SCOPED as _,
            sys::iree_hal_memory_access_bits_t_IREE_HAL_MEMORY_ACCESS_READ as _,
            0,
            len,
            &mut owner.mapping,
        )
    };
    if mapped.is_null() {
        let contents = owner.mapping.contents;
        if let Some(p) = NonNull::new(contents.data)
            && contents.data_length >= len
            && dtype.is_aligned(p.as_ptr() as usize)
        {
            // SAFETY: p..p+len is mapped, readable host memory that stays
            // valid while `owner` holds the mapping and the view; nobody
            // writes a result buffer after the call returned it.
            let host = unsafe { HostBuffer::from_owner(p, len, false, owner) };
            return Array::boxed_from_buffer(dtype, &shape, Arc::new(host));
        }
        // Unmapped and the view released when `owner` drops.
        drop(owner);
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
    Ok(Box::new(out))
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
        // The 8-bit floats: IREE_HAL_ELEMENT_TYPE_VALUE(numerical type, 8) with
        // the numerical types FLOAT | 0x04 (E5M2), 0x05 (E4M3FN), 0x06
        // (E5M2_FNUZ), 0x07 (E4M3_FNUZ) of IREE's hal/buffer_view.h, by hand.
        for (d, code) in [
            (DType::F8E5M2, 0x2400_0008),
            (DType::F8E4M3FN, 0x2500_0008),
            (DType::F8E5M2FNUZ, 0x2600_0008),
            (DType::F8E4M3FNUZ, 0x2700_0008),
        ] {
            assert_eq!(element_type_of(d), code, "{d}");
            assert_eq!(dtype_of(code), Some(d), "{d}");
        }
        assert_eq!(dtype_of(sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_8_E8M0_FNU), None);
        // The complex types: IREE_HAL_ELEMENT_TYPE_VALUE(FLOAT_COMPLEX =
        // FLOAT | 0x03, bits) of hal/buffer_view.h, by hand.
        for (d, code) in [(DType::C64, 0x2300_0040), (DType::C128, 0x2300_0080)] {
            assert_eq!(element_type_of(d), code, "{d}");
            assert_eq!(dtype_of(code), Some(d), "{d}");
        }
    }
}
