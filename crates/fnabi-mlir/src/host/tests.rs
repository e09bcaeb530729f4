//! Tests of host functions' argument views and result staging.

use super::args::*;
use super::results::*;
use super::*;

fn desc(aligned: usize, offset: i64, sizes: &[i64], strides: &[i64]) -> DynMemRef {
    let mut d = DynMemRef::new(sizes.len());
    let w = d.words_mut();
    w[0] = aligned as i64;
    w[1] = aligned as i64;
    w[2] = offset;
    w[3..3 + sizes.len()].copy_from_slice(sizes);
    w[3 + sizes.len()..].copy_from_slice(strides);
    d
}

fn ty(s: &str) -> MemRefType {
    match s.parse::<MlirType>().unwrap() {
        MlirType::MemRef(m) => m,
        _ => panic!(),
    }
}

#[test]
fn descriptors_are_checked_against_their_types() {
    let f32e = ElementType::Scalar(fnabi_abi::ScalarType::F32);
    let base = 0x1000usize;
    let v = view_of(&desc(base, 0, &[2, 3], &[3, 1]), f32e, Some(&ty("memref<?x3xf32>"))).unwrap();
    assert_eq!((v.start, v.len, v.offset, &v.strides[..]), (base, 24, 0, &[3isize, 1][..]));
    // Identity layouts: strides and offset must be what MLIR code assumes.
    let e = view_of(&desc(base, 0, &[2, 3], &[1, 2]), f32e, Some(&ty("memref<?x?xf32>"))).err().unwrap();
    assert_eq!(e, "its descriptor has stride 1 in dim 0, its type 3");
    let e = view_of(&desc(base, 4, &[2, 3], &[3, 1]), f32e, Some(&ty("memref<?x?xf32>"))).err().unwrap();
    assert_eq!(e, "its descriptor has offset 4, its type 0");
    let e = view_of(&desc(base, 0, &[2, 4], &[4, 1]), f32e, Some(&ty("memref<?x3xf32>"))).err().unwrap();
    assert_eq!(e, "its descriptor has size 4 in static dim 1");
    // Extent-1 dims and empty arrays: strides do not matter.
    assert!(view_of(&desc(base, 0, &[1, 3], &[99, 1]), f32e, Some(&ty("memref<?x?xf32>"))).is_ok());
    let v = view_of(&desc(0, 7, &[0, 3], &[5, 5]), f32e, Some(&ty("memref<?x?xf32>"))).unwrap();
    assert_eq!((v.start, v.len), (EMPTY, 0));
    // Strided: dynamic parts from the descriptor, static ones checked.
    let s = ty("memref<?x?xf32, strided<[?, 2], offset: ?>>");
    let v = view_of(&desc(base, 5, &[2, 3], &[-8, 2]), f32e, Some(&s)).unwrap();
    // Element 0 at base + 20; the view reaches back 8 elements (32 bytes).
    assert_eq!((v.start, v.len, v.offset), (base + 20 - 32, 32 + 4 * 4 + 4, 32));
    let e = view_of(&desc(base, 5, &[2, 3], &[8, 1]), f32e, Some(&s)).err().unwrap();
    assert_eq!(e, "its descriptor has stride 1 in dim 1, its type 2");
    let s = ty("memref<3xf32, strided<[1], offset: 2>>");
    assert!(view_of(&desc(base, 1, &[3], &[1]), f32e, Some(&s)).err().unwrap().contains("offset 1, its type 2"));
    // Broken descriptors.
    let e = view_of(&desc(base, 0, &[-1], &[1]), f32e, None).err().unwrap();
    assert_eq!(e, "negative size -1 in its descriptor");
    let e = view_of(&desc(0, 0, &[2], &[1]), f32e, None).err().unwrap();
    assert!(e.contains("aligned pointer is null"));
    let e = view_of(&desc(base, i64::MAX, &[2], &[1]), f32e, None).err().unwrap();
    assert!(e.contains("overflows"), "{e}");
    let e = view_of(&desc(base, 0, &[2], &[i64::MAX]), f32e, None).err().unwrap();
    assert!(e.contains("too large"), "{e}");
    let e = view_of(&desc(8, -4, &[2], &[1]), f32e, None).err().unwrap();
    assert!(e.contains("wraps"), "{e}");
}

#[test]
fn default_results_cover_what_the_type_fixes() {
    let Staged::Ranked(d, b) = default_ranked(&ty("memref<2x?xf32>")) else { panic!() };
    assert_eq!(d.words(), &[0, 0, 0, 2, 0, 1, 1]);
    drop(b);
    let Staged::Ranked(d, b) = default_ranked(&ty("memref<3x2xi16, strided<[-2, 1], offset: 4>>")) else { panic!() };
    // Element 0 at byte 8; rows go back 2 elements each: bytes [0, 12) used.
    assert_eq!(d.words(), &[0, 0, 4, 3, 2, -2, 1]);
    drop(b);
}

#[test]
fn staged_results_have_the_layout_of_their_type() {
    let a = Array::from_vec(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    // Identity: dense row-major, pointers relative to the block.
    let Staged::Ranked(d, b) = stage_ranked(&a.permuted(&[1, 0]).unwrap(), &ty("memref<3x?xf32>")).unwrap() else {
        panic!()
    };
    assert_eq!(d.words(), &[0, 0, 0, 3, 2, 2, 1]);
    // SAFETY: the block holds the 6 floats just copied.
    let got = unsafe { std::slice::from_raw_parts(b.0.cast::<f32>(), 6) };
    assert_eq!(got, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    // Static column-major strides and a static offset: converted.
    let m = ty("memref<2x3xf32, strided<[1, 2], offset: 1>>");
    let Staged::Ranked(d, b) = stage_ranked(&a, &m).unwrap() else { panic!() };
    assert_eq!(d.words()[2..], [1, 2, 3, 1, 2]);
    let at = (d.words()[1] - d.words()[0]) as usize / 4 + 1;
    // SAFETY: the block holds the converted storage (offset 1 + 6 elements).
    let got = unsafe { std::slice::from_raw_parts(b.0.cast::<f32>().add(at), 6) };
    assert_eq!(got, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    // Type errors.
    let e = stage_ranked(&a, &ty("memref<2x4xf32>")).err().unwrap().to_string();
    assert_eq!(e, "dim 1: expected 4, got 3");
    let e = stage_ranked(&a, &ty("memref<?x?xi32>")).err().unwrap().to_string();
    assert_eq!(e, "element type: expected i32, got f32");
    let e = stage_unranked(&a, ElementType::Index).err().unwrap().to_string();
    assert_eq!(e, "element type: expected i64, got f32");
    let Staged::Unranked { desc, data, rank } = stage_unranked(&a, f32_elem()).unwrap() else { panic!() };
    // SAFETY: a rank-2 descriptor block.
    let w = unsafe { std::slice::from_raw_parts(desc.0.cast::<i64>(), 7) };
    assert_eq!((rank, w[0], w[1], &w[2..]), (2, data.0 as i64, data.0 as i64, &[0, 2, 3, 3, 1][..]));
}

fn f32_elem() -> ElementType {
    ElementType::Scalar(fnabi_abi::ScalarType::F32)
}

/// An array of `shape` (i32, values 0..), maybe transposed, maybe every
/// other row: the views a descriptor can describe.
fn arrays() -> impl proptest::strategy::Strategy<Value = Array<'static>> {
    use proptest::prelude::*;
    (proptest::collection::vec(0usize..5, 0..4), any::<bool>(), any::<bool>()).prop_map(|(shape, flip, step)| {
        let n: usize = shape.iter().product();
        let a = Array::from_vec(&shape, (0..n as i32).collect()).unwrap();
        let mut v = a.view().into_owned().unwrap();
        if flip && shape.len() > 1 {
            let axes: Vec<usize> = (0..shape.len()).rev().collect();
            v = v.permuted(&axes).unwrap().shared().unwrap();
        }
        if step && v.rank() > 0 && v.shape()[0] > 1 {
            let mut sh = v.shape().to_vec();
            sh[0] = sh[0].div_ceil(2);
            let mut st = v.strides().to_vec();
            st[0] *= 2;
            v = v.restrided(&sh, &st, v.byte_offset()).unwrap().shared().unwrap();
        }
        v
    })
}

proptest::proptest! {
    /// Array -> descriptor (as fnabi passes it to MLIR) -> host view: the
    /// same elements, for a fully dynamic strided type and, for dense
    /// arrays, the identity layout.
    #[test]
    fn descriptor_views_round_trip(a in arrays()) {
        let i32e = ElementType::Scalar(fnabi_abi::ScalarType::I32);
        let dims = vec![Dim::Dynamic; a.rank()];
        let strided = MemRefType {
            element: i32e,
            dims: dims.clone(),
            layout: MemRefLayout::Strided { strides: vec![None; a.rank()], offset: None },
        };
        let mut types = vec![strided];
        if a.is_c_contiguous() {
            types.push(MemRefType::new(i32e, dims));
        }
        for m in &types {
            let mut d = DynMemRef::new(a.rank());
            proptest::prop_assert!(fill_descriptor(&a, m, d.words_mut()).unwrap());
            let v = view_of(&d, i32e, Some(m)).unwrap();
            // SAFETY: the view lies inside `a`'s storage (what is checked here).
            let bytes = unsafe { std::slice::from_raw_parts(v.start as *const u8, v.len) };
            if v.len > 0 {
                let (lo, hi) = (a.storage_ptr() as usize, a.storage_ptr() as usize + a.storage_len());
                proptest::prop_assert!(v.start >= lo && v.start + v.len <= hi);
            }
            let back = Array::from_bytes(v.dtype, &v.shape, Some(&v.strides), bytes, v.offset).unwrap();
            proptest::prop_assert_eq!(back.shape(), a.shape());
            proptest::prop_assert_eq!(back.to_vec::<i32>().unwrap(), a.to_vec::<i32>().unwrap());
        }
    }

    /// Any descriptor words: a view or an error, never a panic; a view's
    /// bytes contain its element [0, …].
    #[test]
    fn arbitrary_descriptors_never_panic(
        sizes in proptest::collection::vec(-2i64..6, 0..4),
        strides in proptest::collection::vec(proptest::prelude::any::<i64>(), 4),
        small in proptest::collection::vec(-9i64..9, 4),
        offset in -40i64..40,
        use_small in proptest::prelude::any::<bool>(),
    ) {
        let rank = sizes.len();
        let st: Vec<i64> = if use_small { small[..rank].to_vec() } else { strides[..rank].to_vec() };
        let d = desc(0x10_0000, offset, &sizes, &st);
        let f64e = ElementType::Scalar(fnabi_abi::ScalarType::F64);
        if let Ok(v) = view_of(&d, f64e, None)
            && v.len > 0
        {
            proptest::prop_assert!(v.offset + 8 <= v.len);
            proptest::prop_assert_eq!(v.start + v.offset, (0x10_0000 + offset * 8) as usize);
        }
    }
}
