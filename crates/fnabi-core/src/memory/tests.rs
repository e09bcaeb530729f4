use super::*;

#[test]
fn arena_allocations_are_aligned_disjoint_and_reused() {
    let mut arena = Arena::new();
    assert_eq!(arena.capacity(), 0);
    let first;
    {
        let s = arena.scope();
        let a = s.alloc_bytes(10).unwrap();
        let b = s.alloc_bytes(100).unwrap();
        a.fill(1);
        b.fill(2);
        assert!(a.iter().all(|&x| x == 1) && b.iter().all(|&x| x == 2));
        assert_eq!(a.as_ptr() as usize % 64, 0);
        assert_eq!(b.as_ptr() as usize % 64, 0);
        assert_eq!(s.used(), 64 + 128);
        first = s.used();
    }
    // The next scope gets one chunk covering the first scope's use.
    let s = arena.scope();
    assert!(s.arena_capacity() >= first);
    let x = s.alloc_bytes(150).unwrap().as_ptr();
    drop(s);
    let s = arena.scope();
    assert_eq!(s.alloc_bytes(150).unwrap().as_ptr(), x, "reset reuses the same memory");
    let e = s.alloc_bytes(usize::MAX).unwrap_err().to_string();
    assert!(e.starts_with("memory exhausted"), "{e}");
    drop(s);
    // Arrays in the arena; bools come zeroed.
    let s = arena.scope();
    let b = s.alloc_dense(DType::Bool, &[3, 3], DimOrder::ColumnMajor).unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), [false; 9]);
    assert!(b.is_f_contiguous() && b.is_writable());
    let empty = s.alloc_dense(DType::F64, &[0, 3], DimOrder::RowMajor).unwrap();
    assert!(empty.is_empty());
}

impl ArenaScope<'_> {
    fn arena_capacity(&self) -> usize {
        self.cap
    }
}

#[test]
fn ring_never_overwrites_live_data_and_reports_why() {
    let ring = RingBuffer::new(200).unwrap();
    assert_eq!(ring.capacity(), 256);
    let e = ring.try_alloc(257).unwrap_err().to_string();
    assert_eq!(e, "memory exhausted: 257 bytes requested from a 256-byte ring buffer");
    let mut a = ring.try_alloc(100).unwrap(); // 128 bytes at 0
    a.as_mut_slice().fill(0xaa);
    let b = ring.try_alloc(64).unwrap(); // 64 at 128
    let e = ring.try_alloc(100).unwrap_err().to_string();
    assert_eq!(
        e,
        "memory exhausted: ring buffer full: 100 bytes requested, 192 of 256 bytes in flight in 2 allocation(s)"
    );
    assert!(ring.alloc(100, Duration::from_millis(10)).is_err());
    let f0 = ring.submit();
    drop(b);
    f0.signal();
    // `a` is still held, so nothing behind it retires: the ring frees in order.
    assert!(ring.try_alloc(100).is_err());
    assert!(f0.is_signalled());
    drop(a);
    let c = ring.try_alloc(100).unwrap();
    assert_eq!(c.generation(), 1);
    // A released allocation of an unsignalled generation stays in flight.
    drop(c);
    assert!(ring.try_alloc(256).is_err());
    let f1 = ring.submit();
    assert_eq!(f1.generation(), 1);
    // Another thread signals while this one waits.
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        f1.signal();
    });
    let mut whole = ring.alloc(256, Duration::from_secs(10)).unwrap();
    assert_eq!(whole.array(DType::U32, &[64], None, 0).unwrap().len(), 64);
    t.join().unwrap();
    assert!(format!("{ring:?}").contains("in_flight: 256"));
}

#[test]
fn persistent_buffers_and_pointers() {
    let dir = crate::scratch::Scratch::new("mem");
    let path = dir.join("data.bin");
    let words: Vec<u8> = (0u32..8).flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, &words).unwrap();
    // SAFETY: the test owns the file and does not change it while mapped.
    let mapped = unsafe { ByteBuffer::map_file(&path) }.unwrap();
    let read = ByteBuffer::read_file(&path).unwrap();
    assert_eq!(mapped.as_bytes(), read.as_bytes());
    let a = mapped.array(DType::U32, &[2, 4], None, 0).unwrap();
    assert_eq!(a.get::<u32>(&[1, 2]).unwrap(), 6);
    assert!(!a.is_writable(), "a mapped input is never writable through fnabi");
    drop(mapped);
    assert!(!a.is_writable());
    assert_eq!(read.ptr::<u32>(28).unwrap().get(), 7);
    assert!(read.ptr::<u32>(29).is_err());
    assert!(read.ptr::<bool>(4).is_ok());
    assert!(ByteBuffer::copy_from_slice(&[2]).unwrap().ptr::<bool>(0).is_err());
    let e = ByteBuffer::read_file(dir.join("missing")).unwrap_err().to_string();
    assert!(e.contains("missing"), "{e}");

    // SAFETY: as above.
    let mut m = unsafe { MutableByteBuffer::map_file(&path) }.unwrap();
    m.ptr_mut::<u32>(0).unwrap().set(42);
    {
        let mut arr = m.array_mut(DType::U32, &[8], None, 0).unwrap();
        assert!(arr.is_writable());
        let p = arr.as_mut_ptr().unwrap().cast::<u32>();
        // SAFETY: element 1 of the 8-element writable array.
        unsafe { p.add(1).write(43) };
    }
    drop(m);
    let back = std::fs::read(&path).unwrap();
    assert_eq!(&back[..8], &[42, 0, 0, 0, 43, 0, 0, 0]);

    let mut heap = MutableByteBuffer::zeroed(32).unwrap();
    heap.as_mut_bytes()[0] = 1;
    assert_eq!((heap.len(), heap.is_empty()), (32, false));
    let frozen = heap.freeze();
    assert_eq!(frozen.ptr::<u8>(0).unwrap().get(), 1);
    let owned = MutableByteBuffer::zeroed(16).unwrap().into_array(DType::F32, &[4], None, 0).unwrap();
    assert!(owned.is_writable());
}
