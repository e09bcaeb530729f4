use super::*;

#[test]
fn construction_checks_bounds_and_alignment() {
    let v = vec![0u8; 16];
    assert!(Array::from_bytes(DType::F32, &[4], None, &v, 0).is_ok());
    let e = Array::from_bytes(DType::F32, &[5], None, &v, 0).unwrap_err().to_string();
    assert!(e.contains("addresses bytes [0, 20) outside its 16-byte storage"), "{e}");
    // Negative stride: element 0 at the end.
    assert!(Array::from_bytes(DType::F32, &[4], Some(&[-1]), &v, 12).is_ok());
    assert!(Array::from_bytes(DType::F32, &[4], Some(&[-1]), &v, 8).is_err());
    // Zero stride broadcast and empty arrays.
    assert!(Array::from_bytes(DType::F32, &[1000, 4], Some(&[0, 1]), &v, 0).is_ok());
    assert!(Array::from_bytes(DType::F32, &[0, 4], None, &v, 16).is_ok());
    assert!(Array::from_bytes(DType::F32, &[0, 4], None, &v, 17).is_err());
    // Overflow in the extent computation is an error, not a wrap.
    assert!(Array::from_bytes(DType::F64, &[usize::MAX / 2, 3], Some(&[isize::MAX, 1]), &v, 0).is_err());
    assert!(Array::zeros(DType::F64, &[usize::MAX, 2]).is_err());
    // Misaligned start.
    let w = vec![0u32; 4];
    let bytes = bytes_of(&w);
    let e = Array::from_bytes(DType::F32, &[1], None, bytes, 2).unwrap_err().to_string();
    assert!(e.contains("not aligned"), "{e}");
    // Bools are checked.
    assert!(Array::from_bytes(DType::Bool, &[2], None, &[1, 2], 0).is_err());
    assert!(Array::from_bytes(DType::Bool, &[2], None, &[1, 0], 0).is_ok());
    // Count mismatch.
    assert!(Array::from_vec(&[2, 2], vec![1.0f32; 3]).is_err());
}

#[test]
fn views_and_gathers() {
    let a = Array::from_vec(&[2, 3], (0..6).collect::<Vec<i32>>()).unwrap();
    assert!(a.is_c_contiguous() && !a.is_f_contiguous());
    let t = a.permuted(&[1, 0]).unwrap();
    assert!(t.is_f_contiguous());
    assert_eq!(t.to_vec::<i32>().unwrap(), [0, 3, 1, 4, 2, 5]);
    assert_eq!(t.to_contiguous().unwrap().as_slice::<i32>().unwrap(), &[0, 3, 1, 4, 2, 5]);
    assert_eq!(a, a.to_contiguous().unwrap());
    assert_ne!(a, t.to_contiguous().unwrap());
    // Reversed rows through a negative stride.
    let r = a.restrided(&[2, 3], &[-3, 1], 12).unwrap();
    assert_eq!(r.to_vec::<i32>().unwrap(), [3, 4, 5, 0, 1, 2]);
    assert!(a.get::<f32>(&[0, 0]).is_err());
    assert!(a.get::<i32>(&[2, 0]).is_err());
    assert!(a.get::<i32>(&[0]).is_err());
    assert_eq!(Array::scalar(7u8).get::<u8>(&[]).unwrap(), 7);
}

#[test]
fn mutation_requires_unique_access() {
    let mut a = Array::zeros(DType::F32, &[4]).unwrap();
    assert!(a.as_mut_ptr().is_ok());
    let b = a.clone();
    assert!(a.as_mut_ptr().is_err());
    drop(b);
    assert!(a.as_mut_ptr().is_ok());
    let mut data = [1.0f32, 2.0];
    {
        let mut m = Array::from_mut_slice(&[2], &mut data).unwrap();
        let p = m.as_mut_ptr().unwrap().cast::<f32>();
        // SAFETY: two f32s of a mutable borrow.
        unsafe { *p.add(1) = 5.0 };
        let mut c = m.clone();
        assert!(c.as_mut_ptr().is_ok(), "the clone of a mutable borrow is an owned copy");
        assert_eq!(c.to_vec::<f32>().unwrap(), [1.0, 5.0]);
    }
    assert_eq!(data, [1.0, 5.0]);
    let ro = [1u8, 2];
    let mut r = Array::from_slice(&[2], &ro).unwrap();
    assert!(r.as_mut_ptr().is_err());
}

#[test]
fn foreign_deleter_runs_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    let mut backing = vec![0u64; 2].into_boxed_slice();
    let ptr = NonNull::new(backing.as_mut_ptr().cast::<u8>()).unwrap();
    // SAFETY: `backing` outlives the buffer (it is dropped at the end of the test).
    let buf = unsafe {
        HostBuffer::from_foreign(
            ptr,
            16,
            true,
            Box::new(|| {
                DROPS.fetch_add(1, Ordering::SeqCst);
            }),
        )
    };
    let a = Array::from_buffer(DType::U64, &[2], None, Arc::new(buf), 0).unwrap();
    let b = a.clone();
    drop(a);
    assert_eq!(DROPS.load(Ordering::SeqCst), 0);
    drop(b);
    assert_eq!(DROPS.load(Ordering::SeqCst), 1);
    drop(backing);
}

#[test]
fn zeroed_is_aligned() {
    let a = Array::zeros(DType::U8, &[3]).unwrap();
    assert_eq!(a.as_ptr() as usize % ALIGNMENT, 0);
    let e = Array::zeros(DType::F64, &[0]).unwrap();
    assert_eq!(e.as_ptr() as usize % ALIGNMENT, 0);
    assert!(e.is_empty());
}

/// Arrays made in place from a descriptor's words (the hot path of adopting
/// a callee's result) equal the checked constructor's, up to rank 6 (the
/// inline dims) and past it (the spilled ones), over a buffer made in its
/// `Arc` from C `malloc` memory (freed once, when the last array goes).
#[cfg(unix)]
#[test]
fn arrays_made_in_place_match_the_checked_constructor() {
    for shape in [&[][..], &[3][..], &[2, 3][..], &[1, 2, 1, 2, 1, 2][..], &[1, 2, 1, 2, 1, 1, 2, 1][..]] {
        let n: usize = shape.iter().product();
        let bytes = 4 * n + 8;
        // SAFETY: a fresh allocation of `bytes` bytes (checked not null),
        // filled before use and handed to the buffer, which frees it.
        let buffer = unsafe {
            let p = libc::malloc(bytes).cast::<u8>();
            let p = std::ptr::NonNull::new(p).expect("malloc");
            for i in 0..bytes {
                p.as_ptr().add(i).write(i as u8);
            }
            HostBuffer::shared_from_malloc(p, p.add(8), bytes - 8, true, None)
        };
        assert_eq!(buffer.len(), bytes - 8);
        let strides = c_strides(shape);
        let sizes: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let steps: Vec<i64> = strides.iter().map(|&s| s as i64).collect();
        let checked = Array::from_buffer(DType::F32, shape, None, buffer.clone(), 0).unwrap();
        // SAFETY: the dims are C-order strides of `shape`, which fits the
        // buffer from byte 0; f32 data at an 8-byte offset of malloc memory
        // is aligned.
        let made = unsafe { Array::boxed_from_dims(DType::F32, &sizes, &steps, 0, buffer) };
        assert_eq!((made.dtype(), made.shape(), made.strides()), (DType::F32, shape, &strides[..]));
        assert_eq!((made.storage_ptr(), made.storage_len()), (checked.storage_ptr(), checked.storage_len()));
        assert_eq!(made.to_vec::<f32>().unwrap(), checked.to_vec::<f32>().unwrap());
        assert_eq!(*made, checked);
        // Another handle on the buffer: not writable in place.
        assert!(!made.is_writable());
        drop(checked);
        assert!(made.is_writable());
    }
}

/// `boxed_from_bytes` makes in place what `from_bytes` makes and checks
/// what it checks: the same arrays (inline and spilled dims, negative and
/// zero strides, offsets, empty, row-major by default) and the same errors.
#[test]
fn boxed_views_of_bytes_match_the_checked_constructor() {
    /// An array's dtype, shape, strides (`None`: row-major) and byte offset.
    type Layout<'a> = (DType, &'a [usize], Option<&'a [isize]>, usize);
    let data: Vec<u64> = (0..64).collect();
    let bytes = bytes_of(&data);
    let cases: &[Layout] = &[
        (DType::U64, &[], None, 8),
        (DType::U64, &[5], None, 0),
        (DType::U64, &[5], Some(&[-2]), 8 * 9),
        (DType::U64, &[2, 3], Some(&[1, 2]), 8),
        (DType::U64, &[1000, 2], Some(&[0, 1]), 0),
        (DType::U64, &[0, 4], None, 8 * 64),
        (DType::U64, &[1, 2, 1, 2, 1, 2], None, 0),
        (DType::U64, &[1, 2, 1, 2, 1, 1, 2, 1], Some(&[64, 1, 64, 2, 64, 64, 4, 1]), 16),
    ];
    for &(dtype, shape, strides, offset) in cases {
        let checked = Array::from_bytes(dtype, shape, strides, bytes, offset).unwrap();
        let made = Array::boxed_from_bytes(dtype, shape, strides, bytes, offset).unwrap();
        assert_eq!((made.shape(), made.strides()), (checked.shape(), checked.strides()), "{shape:?}");
        assert_eq!((made.storage_ptr(), made.storage_len(), made.as_ptr()), (bytes.as_ptr(), 512, checked.as_ptr()));
        assert_eq!(made.to_vec::<u64>().unwrap(), checked.to_vec::<u64>().unwrap());
        assert_eq!(*made, checked);
        assert!(!made.is_writable());
    }
    let bad: &[Layout] = &[
        (DType::U64, &[65], None, 0),
        (DType::U64, &[5], Some(&[-2]), 8 * 7),
        (DType::U64, &[2, 2], Some(&[1]), 0),
        (DType::U64, &[2], None, 4),
        (DType::U64, &[0], None, 513),
        (DType::U64, &[usize::MAX / 2, 3], Some(&[isize::MAX, 1]), 0),
        (DType::Bool, &[16], None, 0),
    ];
    for &(dtype, shape, strides, offset) in bad {
        let want = Array::from_bytes(dtype, shape, strides, bytes, offset).unwrap_err().to_string();
        let got = Array::boxed_from_bytes(dtype, shape, strides, bytes, offset).unwrap_err().to_string();
        assert_eq!(got, want);
    }
    let flags = [0u8, 1, 1, 0];
    assert_eq!(
        Array::boxed_from_bytes(DType::Bool, &[2, 2], None, &flags, 0).unwrap().to_vec::<bool>().unwrap(),
        [false, true, true, false]
    );
}

/// Every kind of storage reports the start and length of its memory, and
/// views, shared handles and owned copies keep them right.
#[test]
fn storage_start_and_length_follow_every_owner() {
    let mut data = vec![1.0f32, 2.0, 3.0, 4.0];
    let ptr = data.as_ptr().cast::<u8>();
    {
        let a = Array::from_slice(&[4], &data).unwrap();
        assert_eq!((a.storage_ptr(), a.storage_len(), a.as_ptr()), (ptr, 16, ptr));
        let v = a.view();
        assert_eq!((v.storage_ptr(), v.storage_len()), (ptr, 16));
        assert!(a.shared().is_none() && a.buffer().is_none());
        let owned = a.into_owned().unwrap();
        assert_ne!(owned.storage_ptr(), ptr);
        assert_eq!((owned.storage_len(), owned.to_vec::<f32>().unwrap()), (16, vec![1.0, 2.0, 3.0, 4.0]));
    }
    {
        let mut m = Array::from_mut_slice(&[2, 2], &mut data).unwrap();
        assert!(m.is_writable());
        assert_eq!((m.storage_ptr(), m.storage_len()), (ptr, 16));
        let v = m.view();
        assert_eq!((v.storage_ptr(), v.storage_len(), v.is_writable()), (ptr, 16, false));
        drop(v);
        // A clone of a mutable borrow is a copy.
        let c = m.clone();
        assert_ne!(c.storage_ptr(), ptr);
        assert_eq!(c.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
        // SAFETY: element 0 of a writable f32 array.
        unsafe { m.as_mut_ptr().unwrap().cast::<f32>().write(9.0) };
    }
    assert_eq!(data[0], 9.0);
    let b = Array::from_vec(&[3], vec![7u16, 8, 9]).unwrap();
    let buf = b.buffer().unwrap().clone();
    for a in [b.view(), b.shared().unwrap(), b.clone(), b.clone().into_owned().unwrap()] {
        assert_eq!((a.storage_ptr(), a.storage_len()), (buf.as_ptr(), 6));
    }
}

/// Whether the elements of `shape`, visited with the first (`c`) or the
/// last dim varying slowest, sit at offsets 0, 1, 2, … in that order: the
/// definition of a dense layout, checked by enumerating every element.
fn dense_by_enumeration(shape: &[usize], strides: &[isize], c: bool) -> bool {
    let n: usize = shape.iter().product();
    let mut index = vec![0usize; shape.len()];
    for k in 0..n {
        let offset: isize = index.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum();
        if offset != k as isize {
            return false;
        }
        // The next index, the fastest dim first.
        let order: Vec<usize> = if c { (0..shape.len()).rev().collect() } else { (0..shape.len()).collect() };
        for d in order {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    true
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]
    /// `is_c_contiguous` and `is_f_contiguous` say what enumerating the
    /// elements says (ranks 0–6, extents 0–3, strides near the dense ones).
    #[test]
    fn contiguity_matches_enumeration(
        dims in proptest::collection::vec((0usize..4, -2isize..3, 0usize..4), 0..7),
        pick in 0usize..3,
    ) {
        let shape: Vec<usize> = dims.iter().map(|d| d.0).collect();
        // Dense C or F strides, perturbed in some dims (a dim's own stride,
        // or its dense stride plus a small step).
        let dense = if pick == 1 { f_strides(&shape) } else { c_strides(&shape) };
        let strides: Vec<isize> = dims
            .iter()
            .zip(&dense)
            .map(|(d, &s)| match (pick, d.2) {
                (2, 0) => d.1,
                (_, 1) => s + d.1,
                _ => s,
            })
            .collect();
        // Room for every such layout around its first element.
        let a = Array::zeros(DType::U8, &[4096]).unwrap();
        let v = a.restrided(&shape, &strides, 2048).unwrap();
        proptest::prop_assert_eq!(v.is_c_contiguous(), dense_by_enumeration(&shape, &strides, true), "{:?} {:?}", shape, strides);
        proptest::prop_assert_eq!(v.is_f_contiguous(), dense_by_enumeration(&shape, &strides, false), "{:?} {:?}", shape, strides);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]
    /// `boxed_from_bytes` and `from_bytes` agree on any layout: both accept
    /// it and make equal arrays over the same memory, or both reject it
    /// with the same message (ranks 0–8, any strides, offsets and lengths,
    /// misaligned starts, bool bytes other than 0/1).
    #[test]
    fn boxed_and_plain_views_of_bytes_agree(
        dims in proptest::collection::vec((0usize..4, -9isize..9), 0..9),
        row_major in proptest::prelude::any::<bool>(),
        pick in 0usize..5,
        offset in 0usize..80,
        len in 0usize..300,
        zeros_and_ones in proptest::prelude::any::<bool>(),
    ) {
        let dtype = [DType::U8, DType::I16, DType::I32, DType::U64, DType::Bool][pick];
        // 8-aligned memory: alignment then depends on the offset alone.
        let words: Vec<u64> = (0..40u64)
            .map(|i| if zeros_and_ones { 0x0001_0001_0001_0001 } else { i.wrapping_mul(0x0203_0405_0607_0809) })
            .collect();
        let bytes = &bytes_of(&words)[..len];
        let shape: Vec<usize> = dims.iter().map(|d| d.0).collect();
        let steps: Vec<isize> = dims.iter().map(|d| d.1).collect();
        let strides = if row_major { None } else { Some(&steps[..]) };
        match (Array::from_bytes(dtype, &shape, strides, bytes, offset), Array::boxed_from_bytes(dtype, &shape, strides, bytes, offset)) {
            (Ok(a), Ok(b)) => {
                proptest::prop_assert_eq!((b.shape(), b.strides(), b.as_ptr()), (a.shape(), a.strides(), a.as_ptr()));
                proptest::prop_assert_eq!((b.storage_ptr(), b.storage_len()), (a.storage_ptr(), a.storage_len()));
                proptest::prop_assert!(*b == a);
            }
            (Err(x), Err(y)) => proptest::prop_assert_eq!(y.to_string(), x.to_string()),
            (x, y) => proptest::prop_assert!(false, "from_bytes: {:?}, boxed_from_bytes: {:?}", x.err(), y.err()),
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]
    /// `check_row_major` decides what `check_layout` of the row-major
    /// strides at offset 0 decides, with the same message: shapes of ranks
    /// 0–6 (extents up to 2^62, so products overflow), storage lengths
    /// around the array's bytes, aligned and misaligned bases.
    #[test]
    fn the_row_major_check_is_the_layout_check(
        dims in proptest::collection::vec(proptest::prop_oneof![0usize..5, 0usize..(1 << 62)], 0..7),
        pick in 0usize..5,
        slack in -9isize..9,
        misaligned in proptest::prelude::any::<bool>(),
    ) {
        let dtype = [DType::U8, DType::I16, DType::I32, DType::U64, DType::Bool][pick];
        let bytes = dims.iter().try_fold(dtype.size(), |a, &n| a.checked_mul(n)).unwrap_or(usize::MAX);
        let len = bytes.saturating_add_signed(slack);
        let base = (4096 + usize::from(misaligned)) as *const u8;
        let strides = c_strides(&dims);
        let layout = check_layout(dtype, &dims, &strides, 0, base, len).map_err(|e| e.to_string());
        let row_major = check_row_major(dtype, &dims, base, len).map_err(|e| e.to_string());
        proptest::prop_assert_eq!(row_major, layout, "{:?} {} {}", dims, dtype, len);
    }
}
