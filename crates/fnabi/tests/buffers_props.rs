//! Property tests of the buffer layer: layout conversion equals a naive
//! element-by-element gather; the oracle matches a simple model; the arena
//! and the ring buffer never hand out overlapping live memory (also with
//! two threads).

use fnabi::buffer::{BufferDescription, Cast, Decision, LayoutPreference, oracle};
use fnabi::memory::{Arena, RingBlock, RingBuffer};
use fnabi::{Array, BufferType, DType, Dim, DimOrder, ScalarType, layout};
use proptest::prelude::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const DTYPES: [DType; 4] = [DType::U8, DType::I16, DType::F32, DType::F64];

/// Backing bytes (8-byte aligned) filled with a pattern that differs per byte.
fn backing(len: usize) -> Vec<u64> {
    (0..len.div_ceil(8) as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 3)).collect()
}

fn as_bytes(v: &[u64]) -> &[u8] {
    // SAFETY: u64s are readable as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), v.len() * 8) }
}

/// A view: dtype, shape, strides (elements), offset and storage that holds it.
#[derive(Debug, Clone)]
struct View {
    dtype: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset_elems: usize,
    storage_elems: usize,
}

fn place(dtype: DType, shape: Vec<usize>, strides: Vec<isize>) -> View {
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&n, &s) in shape.iter().zip(&strides) {
        if n == 0 {
            return View { dtype, shape, strides, offset_elems: 0, storage_elems: 0 };
        }
        let e = (n as isize - 1) * s;
        if e < 0 { lo += e } else { hi += e }
    }
    View { dtype, shape, strides, offset_elems: (-lo) as usize, storage_elems: (hi - lo + 1) as usize }
}

/// Random strides in -3..=3 elements (zero and negative included).
fn random_view() -> impl Strategy<Value = View> {
    (0usize..4, proptest::collection::vec((0usize..6, -3isize..=3), 0..5)).prop_map(|(t, dims)| {
        let (shape, strides) = dims.into_iter().unzip();
        place(DTYPES[t], shape, strides)
    })
}

/// Slices of a dense array: per-dim step and direction, then an axis
/// permutation — transposes with large strides, `a[:, ::2]`, reversals.
fn sliced_view() -> impl Strategy<Value = View> {
    (0usize..4, proptest::collection::vec((1usize..40, 1usize..4, any::<bool>()), 1..4), any::<u64>()).prop_map(
        |(t, dims, seed)| {
            let base: Vec<usize> = dims.iter().map(|&(n, step, _)| n * step).collect();
            let mut c = vec![1isize; base.len()];
            for i in (0..base.len().saturating_sub(1)).rev() {
                c[i] = c[i + 1] * base[i + 1] as isize;
            }
            let mut axes: Vec<(usize, isize)> = dims
                .iter()
                .zip(&c)
                .map(|(&(n, step, rev), &cs)| (n, cs * step as isize * if rev { -1 } else { 1 }))
                .collect();
            // Fisher-Yates with the seed.
            let mut s = seed;
            for i in (1..axes.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                axes.swap(i, (s >> 33) as usize % (i + 1));
            }
            let (shape, strides) = axes.into_iter().unzip();
            place(DTYPES[t], shape, strides)
        },
    )
}

fn naive_gather(v: &View, bytes: &[u8], order: DimOrder) -> Vec<u8> {
    let es = v.dtype.size();
    let n: usize = v.shape.iter().product();
    let mut out = vec![0u8; n * es];
    let rank = v.shape.len();
    let mut idx = vec![0usize; rank];
    for _ in 0..n {
        let src = v.offset_elems as isize + idx.iter().zip(&v.strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
        let dst = match order {
            DimOrder::RowMajor => idx.iter().zip(&v.shape).fold(0, |acc, (&i, &n)| acc * n + i),
            DimOrder::ColumnMajor => idx.iter().zip(&v.shape).rev().fold(0, |acc, (&i, &n)| acc * n + i),
        };
        let s = src as usize * es;
        out[dst * es..dst * es + es].copy_from_slice(&bytes[s..s + es]);
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < v.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

fn check_conversion(v: &View, order: DimOrder) -> Result<(), TestCaseError> {
    let es = v.dtype.size();
    let store = backing(v.storage_elems * es);
    let bytes = &as_bytes(&store)[..v.storage_elems * es];
    let a = Array::from_bytes(v.dtype, &v.shape, Some(&v.strides), bytes, v.offset_elems * es).unwrap();
    let expect = naive_gather(v, bytes, order);
    let dense = layout::to_dense(&a, order).unwrap();
    // Destinations 8-byte aligned, as copy_to_slice requires for the element type.
    let mut out = vec![0u64; dense.nbytes().div_ceil(8)];
    // SAFETY: u64s are writable as bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), dense.nbytes()) };
    // The dense result read back through copy_to_slice in its own order.
    layout::copy_to_slice(&dense, order, out).unwrap();
    prop_assert_eq!(&*out, &expect[..]);
    out.fill(0);
    layout::copy_to_slice(&a, order, out).unwrap();
    prop_assert_eq!(&*out, &expect[..]);
    prop_assert_eq!(dense, a);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn conversion_equals_naive_gather(v in random_view(), f in any::<bool>()) {
        check_conversion(&v, if f { DimOrder::ColumnMajor } else { DimOrder::RowMajor })?;
    }

    #[test]
    fn conversion_of_slices_equals_naive_gather(v in sliced_view(), f in any::<bool>()) {
        check_conversion(&v, if f { DimOrder::ColumnMajor } else { DimOrder::RowMajor })?;
    }

    #[test]
    fn oracle_matches_model(
        v in random_view(),
        sig_dtype in 0usize..4,
        dims in proptest::collection::vec(0u8..3, 0..5),
        pref in 0u8..3,
        cast in any::<bool>(),
    ) {
        let es = v.dtype.size();
        let store = backing(v.storage_elems * es);
        let bytes = &as_bytes(&store)[..v.storage_elems * es];
        let a = Array::from_bytes(v.dtype, &v.shape, Some(&v.strides), bytes, v.offset_elems * es).unwrap();
        // Signature dims: 0 = the array's extent (static), 1 = dynamic, 2 = a wrong static extent.
        let sig_dims: Vec<Dim> = dims.iter().enumerate().map(|(i, &k)| {
            let n = v.shape.get(i).copied().unwrap_or(1) as u32;
            match k { 0 => Dim::Static(n), 1 => Dim::Dynamic, _ => Dim::Static(n + 1) }
        }).collect();
        let st = [ScalarType::U8, ScalarType::I16, ScalarType::F32, ScalarType::F64][sig_dtype];
        let ty = BufferType::new(st, sig_dims.clone()).unwrap();
        let pref = match pref { 0 => LayoutPreference::Dense(DimOrder::RowMajor), 1 => DimOrder::ColumnMajor.into(), _ => LayoutPreference::AnyStrided };
        let cast = if cast { Cast::Allowed } else { Cast::Forbidden };
        let d = oracle(&ty, &BufferDescription::from_array(&a), &pref, cast);

        // The model.
        let dtype_ok = DType::Scalar(st) == v.dtype;
        if !dtype_ok && cast == Cast::Forbidden {
            prop_assert!(matches!(d, Decision::Unsupported(fnabi::buffer::Unsupported::ElementType { .. })), "{:?}", d);
            return Ok(());
        }
        if sig_dims.len() != v.shape.len() {
            prop_assert!(matches!(d, Decision::Unsupported(fnabi::buffer::Unsupported::Rank { .. })), "{:?}", d);
            return Ok(());
        }
        if let Some(bad) = sig_dims.iter().zip(&v.shape).position(|(d, &n)| matches!(d, Dim::Static(s) if *s as usize != n)) {
            prop_assert!(matches!(d, Decision::Unsupported(fnabi::buffer::Unsupported::Dim { dim, .. }) if dim == bad), "{:?}", d);
            return Ok(());
        }
        let dynamic: Vec<usize> = sig_dims.iter().zip(&v.shape).filter(|(d, _)| **d == Dim::Dynamic).map(|(_, &n)| n).collect();
        prop_assert_eq!(d.dynamic_dims(), dynamic.as_slice());
        let order = match pref { LayoutPreference::Dense(o) => Some(o), _ => None };
        let fits = match order {
            Some(DimOrder::RowMajor) => a.is_c_contiguous(),
            Some(DimOrder::ColumnMajor) => a.is_f_contiguous(),
            None => true,
        };
        if fits && dtype_ok {
            prop_assert!(matches!(d, Decision::AsIs { .. }), "{:?}", d);
        } else {
            let Decision::Convert { target, .. } = &d else { return Err(TestCaseError::fail(format!("{d:?}"))) };
            let want = BufferDescription::dense(DType::Scalar(st), &v.shape, order.unwrap_or(DimOrder::RowMajor)).unwrap();
            prop_assert_eq!(target, &want);
        }
    }

    #[test]
    fn arena_allocations_never_overlap(scopes in proptest::collection::vec(proptest::collection::vec(0usize..3000, 1..20), 1..5)) {
        let mut arena = Arena::with_capacity(4096).unwrap();
        for sizes in scopes {
            let scope = arena.scope();
            let mut live: Vec<&mut [u8]> = Vec::new();
            for (k, &n) in sizes.iter().enumerate() {
                let s = scope.alloc_bytes(n).unwrap();
                prop_assert_eq!(s.as_ptr() as usize % 64, 0);
                prop_assert_eq!(s.len(), n);
                s.fill(k as u8);
                live.push(s);
            }
            for (k, s) in live.iter().enumerate() {
                prop_assert!(s.iter().all(|&b| b == k as u8), "allocation {} was overwritten", k);
            }
            let mut ranges: Vec<(usize, usize)> = live.iter().map(|s| (s.as_ptr() as usize, s.as_ptr() as usize + s.len())).collect();
            ranges.sort();
            for w in ranges.windows(2) {
                prop_assert!(w[0].1 <= w[1].0, "{:?} overlaps {:?}", w[0], w[1]);
            }
        }
    }

    #[test]
    fn ring_never_overwrites_live_blocks(ops in proptest::collection::vec((0u8..4, 1usize..300), 1..80)) {
        let ring = RingBuffer::new(1024).unwrap();
        let mut live: Vec<(RingBlock, u8)> = Vec::new();
        let mut fences = std::collections::VecDeque::new();
        let mut tag = 0u8;
        for (op, n) in ops {
            match op {
                0 | 1 => {
                    if let Ok(mut b) = ring.try_alloc(n) {
                        tag = tag.wrapping_add(1);
                        b.as_mut_slice().fill(tag);
                        live.push((b, tag));
                    }
                }
                2 => {
                    if !live.is_empty() {
                        let (b, t) = live.swap_remove(n % live.len());
                        prop_assert!(b.as_slice().iter().all(|&x| x == t), "block overwritten");
                    }
                }
                _ => {
                    fences.push_back(ring.submit());
                    if n % 2 == 0 && let Some(f) = fences.pop_front() {
                        f.signal();
                    }
                }
            }
            for (b, t) in &live {
                prop_assert!(b.as_slice().iter().all(|x| x == t), "block overwritten");
            }
        }
    }
}

#[test]
fn ring_is_safe_across_two_threads() {
    let ring = RingBuffer::new(8192).unwrap();
    let ranges: Arc<Mutex<Vec<(usize, usize)>>> = Arc::default();
    let worker = |id: u8| {
        let ring = ring.clone();
        let ranges = ranges.clone();
        move || {
            let mut held: Vec<RingBlock> = Vec::new();
            for i in 0..3000usize {
                let n = 1 + (i * 37 + id as usize * 11) % 700;
                // When full (both threads hold blocks) the allocation times
                // out and the blocks are released below.
                if let Ok(mut b) = ring.alloc(n, Duration::from_millis(50)) {
                    {
                        let r = (b.as_slice().as_ptr() as usize, b.as_slice().as_ptr() as usize + b.len());
                        {
                            let mut live = ranges.lock().unwrap();
                            assert!(live.iter().all(|&(s, e)| r.1 <= s || e <= r.0), "{r:?} overlaps a live range");
                            live.push(r);
                        }
                        b.as_mut_slice().fill(id);
                        held.push(b);
                    }
                }
                if held.len() > 4 || i % 7 == 0 {
                    for b in held.drain(..) {
                        assert!(b.as_slice().iter().all(|&x| x == id), "thread {id}: block overwritten");
                        let p = b.as_slice().as_ptr() as usize;
                        ranges.lock().unwrap().retain(|&(s, _)| s != p);
                    }
                    ring.submit().signal();
                }
            }
            for b in held {
                let p = b.as_slice().as_ptr() as usize;
                ranges.lock().unwrap().retain(|&(s, _)| s != p);
            }
        }
    };
    let a = std::thread::spawn(worker(1));
    let b = std::thread::spawn(worker(2));
    a.join().unwrap();
    b.join().unwrap();
}

#[test]
fn arenas_in_two_threads_stay_apart() {
    // An arena is per call (Send, not Sync): each thread has its own, and
    // while both live their scopes never share memory.
    let run = |id: u8| {
        std::thread::spawn(move || {
            let mut arena = Arena::new();
            let mut seen = Vec::new();
            for round in 0..200 {
                let s = arena.scope();
                let x = s.alloc_bytes(100 + round).unwrap();
                x.fill(id);
                let y = s.alloc_bytes(50).unwrap();
                y.fill(id ^ 0xff);
                assert!(x.iter().all(|&b| b == id));
                seen.push((x.as_ptr() as usize, x.len()));
            }
            (arena, seen)
        })
    };
    let (a, b) = (run(1), run(2));
    let ((_arena_a, a), (_arena_b, b)) = (a.join().unwrap(), b.join().unwrap());
    // The last scope's allocation of each thread: both arenas are still alive.
    let ((pa, na), (pb, nb)) = (a[a.len() - 1], b[b.len() - 1]);
    assert!(pa + na <= pb || pb + nb <= pa);
}
