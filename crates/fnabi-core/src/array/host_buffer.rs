//! [`HostBuffer`]: a block of host memory with its owner, and how it is released.

use super::{ALIGNMENT, DanglingAligned};
use crate::error::Error;
use fnabi_abi::scalar::Element;
use std::alloc::Layout as AllocLayout;
use std::any::Any;
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

enum Release {
    /// Allocated by [`HostBuffer::zeroed`] with this layout.
    Aligned(AllocLayout),
    /// An anonymous mapping of this many bytes made by [`HostBuffer::zeroed`]
    /// (large sizes, with the transparent huge page hint).
    #[cfg(unix)]
    Mapped(usize),
    /// Memory owned by a Rust value (a `Vec<T>`, a mapping, …) that is dropped.
    Keep(#[allow(dead_code)] Box<dyn Any + Send + Sync>),
    /// Foreign memory released by a deleter.
    Custom(Option<Box<dyn FnOnce() + Send + Sync>>),
    /// Memory from C's `malloc`, released with `free` of this pointer (the
    /// start of the allocation, which may precede the buffer); the owner
    /// (e.g. the library that allocated it) is kept alive until then.
    #[cfg(unix)]
    Malloc(*mut libc::c_void, #[allow(dead_code)] Option<Arc<dyn Any + Send + Sync>>),
    /// Nothing to release (empty or static memory).
    Nothing,
}

/// A block of host memory with its owner: what an [`Array`](super::Array) shares.
///
/// ```
/// use fnabi_core::{Array, DType, HostBuffer};
/// use std::sync::Arc;
/// let buf = Arc::new(HostBuffer::from_vec(vec![1u16, 2, 3, 4]));
/// assert_eq!(buf.len(), 8);
/// assert_eq!(&buf.as_bytes()[..2], &1u16.to_ne_bytes());
/// // Two arrays over one buffer: rows 0 and 1 of a 2x2 view.
/// let a = Array::from_buffer(DType::U16, &[2, 2], None, buf.clone(), 0).unwrap();
/// assert_eq!(a.buffer().map(Arc::as_ptr), Some(Arc::as_ptr(&buf)));
/// assert_eq!(a.to_vec::<u16>().unwrap(), [1, 2, 3, 4]);
/// ```
pub struct HostBuffer {
    ptr: NonNull<u8>,
    len: usize,
    writable: bool,
    release: Release,
}

// SAFETY: a HostBuffer owns its memory (or keeps its owner alive) and exposes
// it only through `&self` (read) or through `Array::as_mut_ptr`, which requires
// unique ownership of the `Arc<HostBuffer>`; the owners kept in `Release` are
// themselves `Send + Sync`, and memory from C's malloc may be freed on any thread.
unsafe impl Send for HostBuffer {}
// SAFETY: see `Send`: shared access is read-only.
unsafe impl Sync for HostBuffer {}

/// Allocations of at least this many bytes are anonymous memory mappings
/// aligned to 2 MiB with the transparent huge page hint (`MADV_HUGEPAGE`):
/// filling fresh memory then costs one page fault per 2 MiB instead of one
/// per 4 KiB (measured on the development machine: a fresh 64 MiB buffer
/// fills at ~2 GB/s from the heap, ~7.8 GB/s from a hinted mapping).
pub const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// Size (and alignment) of a transparent huge page on x86-64 and aarch64 Linux.
#[cfg(unix)]
const HUGE_PAGE: usize = 2 << 20;

impl HostBuffer {
    /// `len` zeroed bytes aligned to [`ALIGNMENT`].
    ///
    /// Sizes from [`HUGE_PAGE_THRESHOLD`] up come from an anonymous mapping
    /// (zero pages from the kernel, no clearing pass) aligned to 2 MiB and
    /// advised to use huge pages; smaller ones from the global allocator.
    pub fn zeroed(len: usize) -> Result<HostBuffer, Error> {
        #[cfg(unix)]
        if len >= HUGE_PAGE_THRESHOLD
            && let Some(buf) = HostBuffer::mapped_zeroed(len)
        {
            return Ok(buf);
        }
        if len == 0 {
            return Ok(HostBuffer {
                ptr: NonNull::dangling_aligned(),
                len: 0,
                writable: true,
                release: Release::Nothing,
            });
        }
        let layout = AllocLayout::from_size_align(len, ALIGNMENT)
            .map_err(|_| Error::invalid_argument(format!("cannot allocate {len} bytes")))?;
        // SAFETY: layout has non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw)
            .ok_or_else(|| Error::invalid_argument(format!("out of memory allocating {len} bytes")))?;
        Ok(HostBuffer { ptr, len, writable: true, release: Release::Aligned(layout) })
    }

    /// An anonymous, private mapping of `len` bytes (rounded up to whole
    /// huge pages) starting on a 2 MiB boundary, with `MADV_HUGEPAGE`.
    /// `None` when the kernel refuses (the caller falls back to the heap).
    #[cfg(unix)]
    fn mapped_zeroed(len: usize) -> Option<HostBuffer> {
        let map_len = len.checked_add(HUGE_PAGE - 1)? & !(HUGE_PAGE - 1);
        // Over-map by one huge page so that an aligned start exists, then
        // unmap the unaligned head and the tail.
        let over = map_len.checked_add(HUGE_PAGE)?;
        // SAFETY: a fresh anonymous private mapping; no existing memory is touched.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                over,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let start = raw as usize;
        let aligned = (start + HUGE_PAGE - 1) & !(HUGE_PAGE - 1);
        let head = aligned - start;
        let tail = over - head - map_len;
        // SAFETY: both ranges lie inside the mapping just made and are not
        // used; unmapping page-aligned parts of it is always valid.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((aligned + map_len) as *mut libc::c_void, tail);
            }
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        // SAFETY: advice on our own mapping; failure only means no huge pages.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, map_len, libc::MADV_HUGEPAGE);
        }
        let ptr = NonNull::new(aligned as *mut u8)?;
        Some(HostBuffer { ptr, len, writable: true, release: Release::Mapped(map_len) })
    }

    /// Start of the memory for writing, for the owner of a buffer that no
    /// `Array` shares yet (arena chunks, mutable byte buffers).
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Takes ownership of a vector's memory without copying.
    pub fn from_vec<T: Element>(v: Vec<T>) -> HostBuffer {
        let mut v = std::mem::ManuallyDrop::new(v);
        let len = v.len() * std::mem::size_of::<T>();
        let ptr = NonNull::new(v.as_mut_ptr().cast::<u8>()).unwrap_or(NonNull::dangling_aligned());
        // SAFETY: rebuilds the vector from the parts just taken apart; it is
        // dropped (freeing the memory) when the buffer is.
        let owner = unsafe { Vec::from_raw_parts(v.as_mut_ptr(), v.len(), v.capacity()) };
        HostBuffer { ptr, len, writable: true, release: Release::Keep(Box::new(owner)) }
    }

    /// Wraps memory owned by `owner` (a mapping, a boxed slice, …): the
    /// buffer is `ptr..ptr+len` and `owner` is dropped with the buffer.
    ///
    /// # Safety
    /// `ptr..ptr+len` must stay valid (and, if `writable`, exclusively
    /// writable through this buffer) as long as `owner` lives, and must not be
    /// written by anyone else while the buffer is shared.
    pub unsafe fn from_owner(
        ptr: NonNull<u8>,
        len: usize,
        writable: bool,
        owner: Box<dyn Any + Send + Sync>,
    ) -> HostBuffer {
        HostBuffer { ptr, len, writable, release: Release::Keep(owner) }
    }

    /// Wraps foreign memory released by `deleter` (for example libc `free`
    /// of a callee-allocated MLIR result).
    ///
    /// # Safety
    /// `ptr..ptr+len` must be valid for reads (and writes, if `writable`)
    /// until `deleter` runs, and nothing else may free or write it meanwhile.
    pub unsafe fn from_foreign(
        ptr: NonNull<u8>,
        len: usize,
        writable: bool,
        deleter: Box<dyn FnOnce() + Send + Sync>,
    ) -> HostBuffer {
        HostBuffer { ptr, len, writable, release: Release::Custom(Some(deleter)) }
    }

    /// Wraps memory allocated with C's `malloc` (for example a result that
    /// MLIR code allocated): `ptr..ptr+len` lies in the allocation that starts
    /// at `allocation`, which is released with `free(allocation)` when the
    /// buffer is dropped; `keep_alive` (the library whose code allocated it,
    /// say) is dropped after that. Unlike [`from_foreign`](Self::from_foreign)
    /// this allocates nothing besides the buffer itself.
    ///
    /// # Safety
    /// `allocation` must come from C's `malloc` (or `calloc`/`realloc`) and be
    /// owned by this buffer alone from now on; `ptr..ptr+len` must lie inside
    /// it, be valid for reads (and writes if `writable`), and not be written
    /// by anyone else while the buffer lives.
    #[cfg(unix)]
    #[inline]
    pub unsafe fn from_malloc(
        allocation: NonNull<u8>,
        ptr: NonNull<u8>,
        len: usize,
        writable: bool,
        keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    ) -> HostBuffer {
        HostBuffer { ptr, len, writable, release: Release::Malloc(allocation.as_ptr().cast(), keep_alive) }
    }

    /// [`from_malloc`](Self::from_malloc) written straight into a fresh
    /// `Arc` (what an [`Array`](super::Array) shares), instead of built and
    /// then moved there: the hot path of adopting a callee's result. (The
    /// move copies the buffer with 8-byte loads over its 1-byte `writable`
    /// store, which the CPU cannot forward; measured on `fnabi/dict8`.)
    ///
    /// # Safety
    /// As for [`from_malloc`](Self::from_malloc).
    #[cfg(unix)]
    #[inline(always)]
    pub unsafe fn shared_from_malloc(
        allocation: NonNull<u8>,
        ptr: NonNull<u8>,
        len: usize,
        writable: bool,
        keep_alive: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Arc<HostBuffer> {
        let slot = Arc::into_raw(Arc::<HostBuffer>::new_uninit()).cast_mut();
        // SAFETY: `slot` is the value of a fresh `Arc` that nothing else
        // holds (its pointer comes from the allocation, not from a shared
        // reference), so writing it is the only access; it is initialised
        // before `assume_init`, and `from_raw` takes back what `into_raw`
        // gave. The buffer's own contract is the caller's (as `from_malloc`).
        unsafe {
            (*slot).write(HostBuffer::from_malloc(allocation, ptr, len, writable, keep_alive));
            Arc::from_raw(slot).assume_init()
        }
    }

    /// Start of the memory.
    #[inline]
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    /// Start of the memory, never null.
    #[inline]
    pub(crate) fn as_non_null(&self) -> NonNull<u8> {
        self.ptr
    }

    /// Length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-length buffer.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the memory may be written.
    #[inline]
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// The bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is valid for reads for the buffer's lifetime
        // (constructor contracts), and shared access is read-only.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, to write (`None` for read-only memory). `&mut self` is
    /// the proof that nothing else reads them meanwhile: a buffer shared by
    /// arrays is behind an `Arc`, and an array checks bool data when it is
    /// built over a buffer.
    ///
    /// ```
    /// let mut b = fnabi_core::HostBuffer::zeroed(4).unwrap();
    /// b.as_mut_bytes().unwrap().copy_from_slice(&[1, 2, 3, 4]);
    /// assert_eq!(b.as_bytes(), &[1, 2, 3, 4]);
    /// ```
    #[inline]
    pub fn as_mut_bytes(&mut self) -> Option<&mut [u8]> {
        // SAFETY: ptr..ptr+len is valid for writes when the buffer is
        // writable (constructor contracts); `&mut self` makes the access
        // exclusive.
        self.writable.then(|| unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) })
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        match &mut self.release {
            Release::Aligned(layout) => {
                // SAFETY: allocated in `zeroed` with exactly this layout.
                unsafe { std::alloc::dealloc(self.ptr.as_ptr(), *layout) }
            }
            #[cfg(unix)]
            Release::Mapped(map_len) => {
                // SAFETY: the mapping made in `mapped_zeroed`, of exactly this length.
                unsafe { libc::munmap(self.ptr.as_ptr().cast(), *map_len) };
            }
            Release::Custom(deleter) => {
                if let Some(d) = deleter.take() {
                    d();
                }
            }
            #[cfg(unix)]
            Release::Malloc(p, _) => {
                // SAFETY: `from_malloc`'s contract: `p` came from C's malloc
                // and this buffer is its only owner.
                unsafe { libc::free(*p) }
            }
            Release::Keep(_) | Release::Nothing => {}
        }
    }
}

impl fmt::Debug for HostBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("writable", &self.writable)
            .finish()
    }
}
