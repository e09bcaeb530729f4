//! Memory scopes, after the runtime design notes ("Memory/Buffers"):
//!
//! - [`Arena`]: transient memory of one call — bump allocation, 64-byte
//!   alignment, released as a whole when the call's [`ArenaScope`] ends. A
//!   call converts its inputs into the arena; after the first calls have
//!   sized it, a call allocates nothing.
//! - [`RingBuffer`]: transient memory across calls — allocations are tagged
//!   with a generation and retire, in order, once their handle is dropped
//!   *and* their generation's [`Fence`] is signalled; when full it waits
//!   (with a timeout) or fails, and never hands out live memory. Safe to
//!   share between threads.
//! - Persistent memory: [`ByteBuffer`] (read-only: heap, file contents, or a
//!   read-only file mapping — the notes' `byte_buffer`), [`MutableByteBuffer`]
//!   (read-write heap or mapped memory — `mutable_byte_buffer`), and typed
//!   pointers into them ([`Ptr`], [`PtrMut`] — the notes' `ptr`). Arrays can
//!   be laid over all of them.
//!
//! ```
//! use fnabi_core::memory::Arena;
//! use fnabi_core::{Array, DimOrder, buffer::BufferDescription};
//! let a = Array::from_vec(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]).unwrap();
//! let t = a.permuted(&[1, 0]).unwrap();
//! let mut arena = Arena::with_capacity(1 << 16).unwrap();
//! {
//!     let scope = arena.scope();
//!     let target = BufferDescription::dense(t.dtype(), t.shape(), DimOrder::RowMajor).unwrap();
//!     let dense = scope.convert(&t, &target).unwrap();
//!     assert_eq!(dense.as_slice::<i32>().unwrap(), &[1, 4, 2, 5, 3, 6]);
//!     assert_eq!(dense.as_ptr() as usize % 64, 0);
//! } // the scope ends: all of its memory is free again
//! assert_eq!(arena.capacity(), 1 << 16);
//! ```

use crate::array::{ALIGNMENT, Array, HostBuffer};
use crate::buffer::BufferDescription;
use crate::error::Error;
use fnabi_abi::raw::DimOrder;
use fnabi_abi::scalar::{DType, Element};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn round_up(len: usize) -> Result<usize, Error> {
    len.checked_add(ALIGNMENT - 1)
        .map(|n| n & !(ALIGNMENT - 1))
        .ok_or_else(|| Error::exhausted(format!("cannot allocate {len} bytes")))
}

// ---------------------------------------------------------------------------
// Arena
// ---------------------------------------------------------------------------

/// Per-call scratch memory: one chunk that [`ArenaScope`]s bump-allocate
/// from (see the module docs). When a scope needs more than the chunk, the
/// excess comes from extra chunks for that scope, and the next scope starts
/// with one chunk big enough for everything the largest scope used.
///
/// ```
/// use fnabi_core::memory::Arena;
/// let mut arena = Arena::new();
/// assert_eq!(arena.capacity(), 0);
/// {
///     let scope = arena.scope();
///     let a = scope.alloc_bytes(100).unwrap(); // rounded up to 128
///     a.fill(1);
///     assert_eq!(scope.used(), 128);
/// }
/// // the first scope spilled; the next one finds a chunk big enough
/// assert!(arena.capacity() >= 128);
/// ```
pub struct Arena {
    chunk: HostBuffer,
    base: *mut u8,
    high_water: usize,
}

// SAFETY: the arena owns its chunk exclusively; handing it to another thread
// moves that ownership (scopes borrow it mutably, so none is alive then).
unsafe impl Send for Arena {}

impl Arena {
    /// An empty arena (it sizes itself on first use).
    pub fn new() -> Arena {
        Arena::with_capacity(0).unwrap_or_else(|_| unreachable!("an empty chunk needs no memory"))
    }

    /// An arena with `bytes` of memory ready (rounded up to 64).
    pub fn with_capacity(bytes: usize) -> Result<Arena, Error> {
        let mut chunk = HostBuffer::zeroed(round_up(bytes)?)?;
        let base = chunk.as_mut_ptr();
        Ok(Arena { chunk, base, high_water: 0 })
    }

    /// Bytes available to a scope without extra chunks.
    pub fn capacity(&self) -> usize {
        self.chunk.len()
    }

    /// Starts a scope: allocations borrow the scope and all are released
    /// together when it is dropped. A scope that needed more than the chunk
    /// grows it when it ends, so the next one allocates nothing.
    pub fn scope(&mut self) -> ArenaScope<'_> {
        ArenaScope {
            base: self.base,
            cap: self.chunk.len(),
            used: Cell::new(0),
            spilled: RefCell::new(Vec::new()),
            spilled_bytes: Cell::new(0),
            arena: self,
        }
    }
}

impl Default for Arena {
    fn default() -> Self {
        Arena::new()
    }
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena").field("capacity", &self.chunk.len()).field("high_water", &self.high_water).finish()
    }
}

/// One call's use of an [`Arena`]: hands out disjoint, 64-byte aligned
/// slices that live as long as the scope; dropping the scope releases them
/// all. Memory handed out holds whatever an earlier scope left there
/// (initialized bytes, unspecified values) — except bool arrays, which are
/// zeroed so they hold valid values.
///
/// ```
/// use fnabi_core::memory::Arena;
/// use fnabi_core::{DType, DimOrder};
/// let mut arena = Arena::with_capacity(1024).unwrap();
/// let scope = arena.scope();
/// let a = scope.alloc_bytes(10).unwrap();
/// let b = scope.alloc_bytes(10).unwrap();
/// assert_eq!(b.as_ptr() as usize - a.as_ptr() as usize, 64); // 10 rounds up to 64
/// let mut m = scope.alloc_dense(DType::F32, &[2, 3], DimOrder::RowMajor).unwrap();
/// m.as_mut_slice::<f32>().unwrap().copy_from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// assert_eq!(m.get::<f32>(&[1, 2]).unwrap(), 6.0);
/// assert_eq!(scope.used(), 64 + 64 + 64); // 24 bytes of f32 also round up to 64
/// ```
pub struct ArenaScope<'a> {
    base: *mut u8,
    cap: usize,
    used: Cell<usize>,
    spilled: RefCell<Vec<HostBuffer>>,
    spilled_bytes: Cell<usize>,
    arena: &'a mut Arena,
}

impl<'a> ArenaScope<'a> {
    /// `len` bytes, 64-byte aligned, disjoint from every other allocation
    /// of this scope.
    // Handing out `&mut` from `&self` is the point of a bump arena: every
    // call returns a fresh, disjoint range (see the SAFETY notes below).
    #[allow(clippy::mut_from_ref)]
    pub fn alloc_bytes(&self, len: usize) -> Result<&mut [u8], Error> {
        let rounded = round_up(len)?;
        let used = self.used.get();
        if used <= self.cap && rounded <= self.cap - used {
            self.used.set(used + rounded);
            // SAFETY: used..used+len lies inside the chunk (checked above),
            // which the arena keeps alive and does not touch while this scope
            // (which borrows it mutably) lives; the bump pointer only moves
            // forward within a scope, so no other slice of this scope covers
            // these bytes; the chunk was zeroed when made, so all bytes are
            // initialized.
            return Ok(unsafe { std::slice::from_raw_parts_mut(self.base.add(used), len) });
        }
        // Spill: an extra chunk for this scope only (counted toward the size
        // of the next scope's chunk).
        self.spilled_bytes.set(self.spilled_bytes.get().saturating_add(rounded));
        let mut extra = HostBuffer::zeroed(rounded)?;
        let ptr = extra.as_mut_ptr();
        self.spilled.borrow_mut().push(extra);
        // SAFETY: fresh zeroed memory of `rounded >= len` bytes owned by
        // `spilled`, which lives (without moving the memory) as long as the
        // scope, and is handed out once.
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
    }

    /// Storage laid out as `desc` (its `storage_len` bytes), contents
    /// unspecified (bool: zeroed).
    pub fn alloc(&self, desc: &BufferDescription) -> Result<Array<'_>, Error> {
        let bytes = self.alloc_bytes(desc.storage_len())?;
        if desc.dtype() == DType::Bool {
            bytes.fill(0);
        }
        Array::from_mut_bytes(desc.dtype(), desc.shape(), Some(desc.strides()), bytes, desc.byte_offset())
    }

    /// A dense array of `shape` in `order`, contents unspecified (bool: zeroed).
    pub fn alloc_dense(&self, dtype: DType, shape: &[usize], order: DimOrder) -> Result<Array<'_>, Error> {
        self.alloc(&BufferDescription::dense(dtype, shape, order)?)
    }

    /// A copy of `src` laid out as `target` (as the oracle's
    /// [`Decision::Convert`](crate::buffer::Decision::Convert) asks; the
    /// element type converts when the target's differs).
    pub fn convert(&self, src: &Array<'_>, target: &BufferDescription) -> Result<Array<'_>, Error> {
        let mut out = self.alloc(target)?;
        crate::layout::cast_copy(src, &mut out)?;
        Ok(out)
    }

    /// Bytes handed out so far (rounded to 64 each).
    pub fn used(&self) -> usize {
        self.used.get().saturating_add(self.spilled_bytes.get())
    }
}

impl Drop for ArenaScope<'_> {
    fn drop(&mut self) {
        let used = self.used();
        let arena = &mut *self.arena;
        arena.high_water = arena.high_water.max(used);
        if arena.high_water > arena.chunk.len() {
            // No slice of this scope outlives it, so the chunk may be
            // replaced. Grow to the next power of two so that slowly growing
            // demand settles after a few calls; on failure keep the old chunk
            // (the next scope then spills again).
            let want = arena.high_water.checked_next_power_of_two().unwrap_or(arena.high_water);
            if let Ok(mut c) = HostBuffer::zeroed(want) {
                arena.base = c.as_mut_ptr();
                arena.chunk = c;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Ring buffer
// ---------------------------------------------------------------------------

/// A fenced ring buffer of transient memory shared across calls and
/// threads (see the module docs).
///
/// ```
/// use fnabi_core::memory::RingBuffer;
/// use std::time::Duration;
/// let ring = RingBuffer::new(256).unwrap();
/// let mut a = ring.try_alloc(128).unwrap();
/// a.as_mut_slice().fill(7);
/// let b = ring.try_alloc(128).unwrap();
/// assert!(ring.try_alloc(64).is_err()); // full: a and b are live
/// let fence = ring.submit();           // a and b belong to this generation
/// drop(a);
/// drop(b);                              // handed back, but still in flight…
/// assert!(ring.try_alloc(64).is_err());
/// fence.signal();                       // …until their generation completes
/// let c = ring.alloc(64, Duration::from_secs(1)).unwrap();
/// assert_eq!(c.len(), 64);
/// ```
#[derive(Clone)]
pub struct RingBuffer {
    inner: Arc<RingInner>,
}

struct RingInner {
    base: *mut u8,
    cap: u64,
    _memory: HostBuffer,
    state: Mutex<RingState>,
    retired: Condvar,
}

// SAFETY: the memory is only reached through RingBlocks, which hand out
// disjoint live ranges (state guarded by the mutex); everything else is
// Send + Sync.
unsafe impl Send for RingInner {}
// SAFETY: as above.
unsafe impl Sync for RingInner {}

struct Record {
    /// Virtual end position of the allocation (including wrap padding).
    end: u64,
    generation: u64,
    released: bool,
}

struct RingState {
    /// Virtual positions: live bytes are `tail..head`, `head - tail <= cap`.
    head: u64,
    tail: u64,
    /// Live (not yet retired) allocations in order; `records[i]` has id `first_id + i`.
    records: VecDeque<Record>,
    first_id: u64,
    /// The generation new allocations join.
    generation: u64,
    /// Generations below this are complete.
    completed: u64,
}

impl RingState {
    fn retire(&mut self) -> bool {
        let mut any = false;
        while let Some(r) = self.records.front() {
            if !(r.released && r.generation < self.completed) {
                break;
            }
            self.tail = r.end;
            self.records.pop_front();
            self.first_id += 1;
            any = true;
        }
        any
    }
}

impl RingInner {
    fn lock(&self) -> MutexGuard<'_, RingState> {
        // The state is consistent at every unlock (no panics while locked).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A completion marker for one generation of a [`RingBuffer`]: signalling it
/// completes that generation and every earlier one (a timeline).
///
/// ```
/// use fnabi_core::memory::RingBuffer;
/// let ring = RingBuffer::new(128).unwrap();
/// let first = ring.submit();
/// let second = ring.submit();
/// assert_eq!(second.generation(), first.generation() + 1);
/// second.signal(); // completes the first generation too
/// assert!(first.is_signalled() && second.is_signalled());
/// ```
#[derive(Clone)]
pub struct Fence {
    ring: Arc<RingInner>,
    generation: u64,
}

impl Fence {
    /// The generation this fence completes.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Marks this generation (and all earlier ones) complete, retiring
    /// their released allocations and waking waiting allocators.
    pub fn signal(&self) {
        let mut st = self.ring.lock();
        st.completed = st.completed.max(self.generation + 1);
        if st.retire() {
            self.ring.retired.notify_all();
        }
    }

    /// True once this generation is complete.
    pub fn is_signalled(&self) -> bool {
        self.ring.lock().completed > self.generation
    }
}

impl std::fmt::Debug for Fence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fence").field("generation", &self.generation).finish()
    }
}

impl RingBuffer {
    /// A ring of `capacity` bytes (rounded up to 64).
    pub fn new(capacity: usize) -> Result<RingBuffer, Error> {
        let cap = round_up(capacity)?;
        let mut memory = HostBuffer::zeroed(cap)?;
        let base = memory.as_mut_ptr();
        let state = RingState { head: 0, tail: 0, records: VecDeque::new(), first_id: 0, generation: 0, completed: 0 };
        Ok(RingBuffer {
            inner: Arc::new(RingInner {
                base,
                cap: cap as u64,
                _memory: memory,
                state: Mutex::new(state),
                retired: Condvar::new(),
            }),
        })
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.inner.cap as usize
    }

    /// Closes the current generation: allocations made so far belong to the
    /// returned fence; later ones to the next generation.
    pub fn submit(&self) -> Fence {
        let mut st = self.inner.lock();
        let generation = st.generation;
        st.generation += 1;
        Fence { ring: self.inner.clone(), generation }
    }

    /// `len` bytes (64-byte aligned, at least 64) now, or
    /// [`ErrorKind::Exhausted`](crate::ErrorKind::Exhausted) when the ring has no room.
    pub fn try_alloc(&self, len: usize) -> Result<RingBlock, Error> {
        let rounded = self.check_len(len)?;
        let mut st = self.inner.lock();
        self.place(&mut st, len, rounded).ok_or_else(|| self.full(len, &st))
    }

    /// `len` bytes, waiting up to `timeout` for earlier allocations to
    /// retire. A request larger than the ring fails at once.
    pub fn alloc(&self, len: usize, timeout: Duration) -> Result<RingBlock, Error> {
        let rounded = self.check_len(len)?;
        let deadline = Instant::now() + timeout;
        let mut st = self.inner.lock();
        loop {
            if let Some(b) = self.place(&mut st, len, rounded) {
                return Ok(b);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(self.full(len, &st));
            }
            st = self.inner.retired.wait_timeout(st, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    fn check_len(&self, len: usize) -> Result<u64, Error> {
        let rounded = round_up(len.max(1))? as u64;
        if rounded > self.inner.cap {
            return Err(Error::exhausted(format!("{len} bytes requested from a {}-byte ring buffer", self.inner.cap)));
        }
        Ok(rounded)
    }

    fn full(&self, len: usize, st: &RingState) -> Error {
        Error::exhausted(format!(
            "ring buffer full: {len} bytes requested, {} of {} bytes in flight in {} allocation(s)",
            st.head - st.tail,
            self.inner.cap,
            st.records.len()
        ))
    }

    fn place(&self, st: &mut RingState, len: usize, rounded: u64) -> Option<RingBlock> {
        let cap = self.inner.cap;
        if st.records.is_empty() {
            // Nothing in flight: start over at the beginning (no wrap padding).
            st.head = 0;
            st.tail = 0;
        }
        let pos = st.head % cap;
        // An allocation never wraps: skip to the start when the rest is too short.
        let start = if pos + rounded > cap { st.head + (cap - pos) } else { st.head };
        let end = start + rounded;
        if end - st.tail > cap {
            return None;
        }
        let id = st.first_id + st.records.len() as u64;
        st.records.push_back(Record { end, generation: st.generation, released: false });
        st.head = end;
        // SAFETY: start % cap + rounded <= cap, so the range is inside the
        // ring's memory.
        let ptr = unsafe { self.inner.base.add((start % cap) as usize) };
        Some(RingBlock { ring: self.inner.clone(), id, ptr, len, generation: st.generation })
    }
}

impl std::fmt::Debug for RingBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.inner.lock();
        f.debug_struct("RingBuffer")
            .field("capacity", &self.inner.cap)
            .field("in_flight", &(st.head - st.tail))
            .field("generation", &st.generation)
            .finish()
    }
}

/// Memory from a [`RingBuffer`]: usable through this handle until it is
/// dropped; the range is reused only after that *and* after its
/// generation's fence is signalled (a callee may still be using it).
///
/// ```
/// use fnabi_core::memory::RingBuffer;
/// use fnabi_core::DType;
/// let ring = RingBuffer::new(256).unwrap();
/// let mut block = ring.try_alloc(16).unwrap();
/// assert_eq!((block.len(), block.generation()), (16, 0));
/// let mut a = block.array(DType::I32, &[2, 2], None, 0).unwrap();
/// a.as_mut_slice::<i32>().unwrap().copy_from_slice(&[1, 2, 3, 4]);
/// assert_eq!(a.get::<i32>(&[1, 0]).unwrap(), 3);
/// // little-endian bytes of 1i32 are 1, 0, 0, 0
/// assert_eq!(&block.as_slice()[..4], &[1, 0, 0, 0]);
/// ```
pub struct RingBlock {
    ring: Arc<RingInner>,
    id: u64,
    ptr: *mut u8,
    len: usize,
    generation: u64,
}

// SAFETY: a RingBlock is the only handle to its range (disjoint from all
// other live ranges), like a Box<[u8]>.
unsafe impl Send for RingBlock {}
// SAFETY: shared access only reads.
unsafe impl Sync for RingBlock {}

impl RingBlock {
    /// Length in bytes (as requested).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-length request.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The generation (fence) this allocation belongs to.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the range is inside the ring, initialized (zeroed at
        // creation), and live — no other block covers it — until drop.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as `as_slice`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// A writable array over this block (strides in elements, `None` for
    /// row-major; bool data must hold only 0 and 1).
    pub fn array(
        &mut self,
        dtype: DType,
        shape: &[usize],
        strides: Option<&[isize]>,
        offset: usize,
    ) -> Result<Array<'_>, Error> {
        Array::from_mut_bytes(dtype, shape, strides, self.as_mut_slice(), offset)
    }
}

impl Drop for RingBlock {
    fn drop(&mut self) {
        let mut st = self.ring.lock();
        let i = (self.id - st.first_id) as usize;
        // A block's record cannot retire before the block is released.
        if let Some(r) = st.records.get_mut(i) {
            r.released = true;
        }
        if st.retire() {
            self.ring.retired.notify_all();
        }
    }
}

impl std::fmt::Debug for RingBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingBlock").field("len", &self.len).field("generation", &self.generation).finish()
    }
}

// ---------------------------------------------------------------------------
// Persistent buffers and typed pointers
// ---------------------------------------------------------------------------

fn io_err(path: &Path, source: std::io::Error) -> Error {
    Error::io(path.display().to_string(), source)
}

fn element_at<T: Element>(bytes: &[u8], offset: usize) -> Result<NonNull<T>, Error> {
    let size = std::mem::size_of::<T>();
    let end = offset.checked_add(size).filter(|&e| e <= bytes.len());
    if end.is_none() {
        return Err(Error::invalid_argument(format!(
            "a {} at byte offset {offset} does not fit in {} bytes",
            T::DTYPE,
            bytes.len()
        )));
    }
    // SAFETY: offset + size <= len.
    let p = unsafe { bytes.as_ptr().add(offset) };
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::invalid_argument(format!("byte offset {offset} is not aligned for {}", T::DTYPE)));
    }
    if T::DTYPE == DType::Bool && bytes[offset] > 1 {
        return Err(Error::invalid_argument(format!("byte {offset} holds {} (a bool is 0 or 1)", bytes[offset])));
    }
    Ok(NonNull::new(p.cast_mut().cast::<T>()).unwrap_or(NonNull::dangling()))
}

/// A read-only, typed pointer into a buffer (the notes' `ptr`): checked
/// for bounds and alignment when made.
///
/// ```
/// use fnabi_core::memory::ByteBuffer;
/// let b = ByteBuffer::copy_from_slice(&[1, 0, 0, 0, 2, 0, 0, 0]).unwrap();
/// assert_eq!(b.ptr::<u32>(4).unwrap().get(), 2);
/// assert!(b.ptr::<u32>(6).is_err()); // past the end
/// assert!(b.ptr::<u32>(2).is_err()); // misaligned
/// ```
#[derive(Clone, Copy)]
pub struct Ptr<'a, T: Element> {
    p: NonNull<T>,
    _m: PhantomData<&'a T>,
}

impl<T: Element> Ptr<'_, T> {
    /// The value.
    pub fn get(&self) -> T {
        // SAFETY: in bounds, aligned and valid for T (checked when made);
        // the buffer is borrowed immutably for 'a.
        unsafe { self.p.as_ptr().read() }
    }
}

impl<T: Element> std::fmt::Debug for Ptr<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ptr<{}>({:?})", T::DTYPE, self.get())
    }
}

/// A writable, typed pointer into a [`MutableByteBuffer`].
///
/// ```
/// use fnabi_core::memory::MutableByteBuffer;
/// let mut b = MutableByteBuffer::zeroed(8).unwrap();
/// let mut p = b.ptr_mut::<u16>(2).unwrap();
/// assert_eq!(p.get(), 0);
/// p.set(0x0102);
/// assert_eq!(&b.as_bytes()[2..4], &[0x02, 0x01]); // little-endian
/// ```
pub struct PtrMut<'a, T: Element> {
    p: NonNull<T>,
    _m: PhantomData<&'a mut T>,
}

impl<T: Element> PtrMut<'_, T> {
    /// The value.
    pub fn get(&self) -> T {
        // SAFETY: in bounds, aligned and valid (checked when made; `set`
        // writes only valid values); the buffer is borrowed mutably for 'a.
        unsafe { self.p.as_ptr().read() }
    }

    /// Replaces the value.
    pub fn set(&mut self, v: T) {
        // SAFETY: as `get`, with unique access.
        unsafe { self.p.as_ptr().write(v) }
    }
}

/// Read-only host memory (the notes' `byte_buffer`): heap bytes, a file's
/// contents, or a (copy-on-write) mapping of a file. Cloning shares it; arrays
/// made from it share it too (and are never writable through it while the
/// buffer is held).
///
/// ```
/// use fnabi_core::memory::ByteBuffer;
/// use fnabi_core::DType;
/// let bytes: Vec<u8> = [1i16, 2, 3, 4, 5, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let b = ByteBuffer::copy_from_slice(&bytes).unwrap();
/// assert_eq!(b.len(), 12);
/// // a 2x3 array over it, read column-major by strides (1, 2)
/// let a = b.array(DType::I16, &[2, 3], Some(&[1, 2]), 0).unwrap();
/// assert_eq!(a.get::<i16>(&[1, 2]).unwrap(), 6);
/// assert_eq!(a.get::<i16>(&[0, 1]).unwrap(), 3);
/// assert!(!a.is_writable()); // read-only memory
/// ```
#[derive(Clone, Debug)]
pub struct ByteBuffer {
    buf: Arc<HostBuffer>,
}

impl ByteBuffer {
    /// A 64-byte aligned copy of `bytes`.
    pub fn copy_from_slice(bytes: &[u8]) -> Result<ByteBuffer, Error> {
        let mut buf = HostBuffer::zeroed(bytes.len())?;
        // SAFETY: `buf` has exactly bytes.len() fresh bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.as_mut_ptr(), bytes.len()) };
        Ok(ByteBuffer { buf: Arc::new(buf) })
    }

    /// A file's contents read into 64-byte aligned memory (at most the
    /// byte limit per file read of [`fnabi_abi::limits`]).
    pub fn read_file(path: impl AsRef<Path>) -> Result<ByteBuffer, Error> {
        use std::io::Read;
        let path = path.as_ref();
        let mut f = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
        let len = f.metadata().map_err(|e| io_err(path, e))?.len();
        fnabi_abi::limits::check_bytes(fnabi_abi::limits::ByteLimit::File, u128::from(len), || {
            format!("the file {}", path.display())
        })
        .map_err(|e| Error::exhausted(e.to_string()))?;
        let len = usize::try_from(len).map_err(|_| Error::exhausted(format!("{} is too large", path.display())))?;
        let mut buf = HostBuffer::zeroed(len)?;
        // SAFETY: `buf` is `len` fresh, initialized (zeroed) bytes we own.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr(), len) };
        f.read_exact(dst).map_err(|e| io_err(path, e))?;
        Ok(ByteBuffer { buf: Arc::new(buf) })
    }

    /// Maps a file copy-on-write (page-aligned, loaded lazily by the
    /// kernel): the buffer is an input, read-only to fnabi, but compiled
    /// code that updates an argument in place (a memref-level function)
    /// writes private copies of the pages it touches, never the file — a
    /// read-only mapping made such a call crash with `SIGSEGV`. (numpy's
    /// `mmap_mode="c"`; pages are copied only when written.)
    ///
    /// # Safety
    /// The file must not be modified or truncated while the mapping (or an
    /// array over it) lives: the memory would change under shared
    /// references, and reading past a truncated end raises `SIGBUS`.
    pub unsafe fn map_file(path: impl AsRef<Path>) -> Result<ByteBuffer, Error> {
        let path = path.as_ref();
        let f = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
        // SAFETY: the caller keeps the file unchanged (contract above).
        let map = unsafe { memmap2::MmapOptions::new().map_copy(&f) }.map_err(|e| io_err(path, e))?;
        let len = map.len();
        let ptr = NonNull::new(map.as_ptr().cast_mut()).unwrap_or(NonNull::dangling());
        // SAFETY: the mapping stays valid as long as `map`, which the
        // buffer owns (read-only to fnabi); the caller keeps the file
        // unchanged.
        let buf = unsafe { HostBuffer::from_owner(ptr, len, false, Box::new(map)) };
        Ok(ByteBuffer { buf: Arc::new(buf) })
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.as_bytes()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The shared host buffer (for [`Array::from_buffer`]).
    pub fn host_buffer(&self) -> &Arc<HostBuffer> {
        &self.buf
    }

    /// A typed pointer at `offset`.
    pub fn ptr<T: Element>(&self, offset: usize) -> Result<Ptr<'_, T>, Error> {
        Ok(Ptr { p: element_at::<T>(self.as_bytes(), offset)?, _m: PhantomData })
    }

    /// An array over these bytes (strides in elements, `None` for
    /// row-major), sharing the buffer.
    pub fn array(
        &self,
        dtype: DType,
        shape: &[usize],
        strides: Option<&[isize]>,
        offset: usize,
    ) -> Result<Array<'static>, Error> {
        Array::from_buffer(dtype, shape, strides, self.buf.clone(), offset)
    }
}

/// Read-write host memory (the notes' `mutable_byte_buffer`): zeroed heap
/// (or, when large, huge-page-advised anonymous) memory, or a shared
/// writable mapping of a file.
///
/// ```
/// use fnabi_core::memory::MutableByteBuffer;
/// use fnabi_core::DType;
/// let mut b = MutableByteBuffer::zeroed(4 * 4).unwrap();
/// {
///     let mut a = b.array_mut(DType::F32, &[4], None, 0).unwrap();
///     a.as_mut_slice::<f32>().unwrap().copy_from_slice(&[0.5, 1.5, 2.5, 3.5]);
/// }
/// assert_eq!(b.ptr::<f32>(12).unwrap().get(), 3.5);
/// let frozen = b.freeze(); // read-only from here on, same bytes
/// assert_eq!(frozen.ptr::<f32>(4).unwrap().get(), 1.5);
/// ```
#[derive(Debug)]
pub struct MutableByteBuffer {
    buf: HostBuffer,
    ptr: *mut u8,
}

// SAFETY: the buffer is owned exclusively, like a Box<[u8]>.
unsafe impl Send for MutableByteBuffer {}
// SAFETY: shared access only reads.
unsafe impl Sync for MutableByteBuffer {}

impl MutableByteBuffer {
    /// `len` zeroed bytes, 64-byte aligned.
    pub fn zeroed(len: usize) -> Result<MutableByteBuffer, Error> {
        let mut buf = HostBuffer::zeroed(len)?;
        let ptr = buf.as_mut_ptr();
        Ok(MutableByteBuffer { buf, ptr })
    }

    /// Maps a file read-write and shared: writes reach the file.
    ///
    /// # Safety
    /// Nothing else may modify or truncate the file while the mapping lives.
    pub unsafe fn map_file(path: impl AsRef<Path>) -> Result<MutableByteBuffer, Error> {
        let path = path.as_ref();
        let f = std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(|e| io_err(path, e))?;
        // SAFETY: the caller keeps others from changing the file (contract above).
        let mut map = unsafe { memmap2::MmapMut::map_mut(&f) }.map_err(|e| io_err(path, e))?;
        let len = map.len();
        let ptr = NonNull::new(map.as_mut_ptr()).unwrap_or(NonNull::dangling());
        // SAFETY: the mapping stays valid and writable as long as `map`,
        // which the buffer owns; only this buffer writes it.
        let buf = unsafe { HostBuffer::from_owner(ptr, len, true, Box::new(map)) };
        Ok(MutableByteBuffer { ptr: ptr.as_ptr(), buf })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.as_bytes()
    }

    /// The bytes, writable.
    pub fn as_mut_bytes(&mut self) -> &mut [u8] {
        // SAFETY: the buffer's memory, owned exclusively; `&mut self` makes
        // the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.buf.len()) }
    }

    /// A read-only typed pointer at `offset`.
    pub fn ptr<T: Element>(&self, offset: usize) -> Result<Ptr<'_, T>, Error> {
        Ok(Ptr { p: element_at::<T>(self.as_bytes(), offset)?, _m: PhantomData })
    }

    /// A writable typed pointer at `offset`.
    ///
    /// ```
    /// use fnabi_core::memory::MutableByteBuffer;
    /// let mut b = MutableByteBuffer::zeroed(16).unwrap();
    /// b.ptr_mut::<f64>(8).unwrap().set(2.5);
    /// assert_eq!(b.ptr::<f64>(8).unwrap().get(), 2.5);
    /// ```
    pub fn ptr_mut<T: Element>(&mut self, offset: usize) -> Result<PtrMut<'_, T>, Error> {
        // Checked on the shared view, then derived from the writable pointer
        // (so writes go through a pointer that may write).
        element_at::<T>(self.as_bytes(), offset)?;
        let base = self.as_mut_bytes().as_mut_ptr();
        // SAFETY: offset + size_of::<T>() <= len (checked just above).
        let p = unsafe { base.add(offset) }.cast::<T>();
        Ok(PtrMut { p: NonNull::new(p).unwrap_or(NonNull::dangling()), _m: PhantomData })
    }

    /// A writable array over these bytes (borrowing the buffer).
    pub fn array_mut(
        &mut self,
        dtype: DType,
        shape: &[usize],
        strides: Option<&[isize]>,
        offset: usize,
    ) -> Result<Array<'_>, Error> {
        Array::from_mut_bytes(dtype, shape, strides, self.as_mut_bytes(), offset)
    }

    /// An owned, writable array over these bytes (taking the buffer).
    pub fn into_array(
        self,
        dtype: DType,
        shape: &[usize],
        strides: Option<&[isize]>,
        offset: usize,
    ) -> Result<Array<'static>, Error> {
        Array::from_buffer(dtype, shape, strides, Arc::new(self.buf), offset)
    }

    /// The same memory, read-only from now on.
    pub fn freeze(self) -> ByteBuffer {
        ByteBuffer { buf: Arc::new(self.buf) }
    }
}

#[cfg(test)]
mod tests;
