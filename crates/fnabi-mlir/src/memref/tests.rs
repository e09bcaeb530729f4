//! Tests of descriptors, argument fitting and conversion, and result adoption.

use super::*;
use fnabi_abi::scalar::ScalarType;

fn ty(s: &str) -> MemRefType {
    match s.parse::<crate::MlirType>().unwrap() {
        crate::MlirType::MemRef(m) => m,
        _ => panic!(),
    }
}

fn fill(a: &Array<'_>, t: &str) -> Result<Option<Vec<i64>>, Error> {
    let t = ty(t);
    let mut w = vec![0; 3 + 2 * t.rank()];
    Ok(fill_descriptor(a, &t, &mut w)?.then_some(w))
}

#[test]
fn identity_needs_dense_row_major() {
    let a = Array::from_vec(&[2, 3], (0..6).map(|x| x as f32).collect()).unwrap();
    let base = a.storage_ptr() as i64;
    assert_eq!(fill(&a, "memref<?x3xf32>").unwrap().unwrap(), vec![base, base, 0, 2, 3, 3, 1]);
    let t = a.permuted(&[1, 0]).unwrap();
    assert_eq!(fill(&t, "memref<?x?xf32>").unwrap(), None);
    assert_eq!(
        fill(&t, "memref<?x?xf32, strided<[?, ?], offset: ?>>").unwrap().unwrap(),
        vec![base, base, 0, 3, 2, 1, 3]
    );
    // A row of a bigger array: offset carried by the dynamic offset, or by `aligned`.
    let row = a.restrided(&[3], &[1], 12).unwrap();
    assert_eq!(fill(&row, "memref<3xf32>").unwrap().unwrap(), vec![base, base + 12, 0, 3, 1]);
    assert_eq!(fill(&row, "memref<3xf32, strided<[1], offset: ?>>").unwrap().unwrap(), vec![base, base, 3, 3, 1]);
    assert_eq!(fill(&row, "memref<3xf32, strided<[1], offset: 2>>").unwrap().unwrap(), vec![base, base + 4, 2, 3, 1]);
    assert_eq!(fill(&row, "memref<3xf32, strided<[1], offset: 4>>").unwrap(), None);
    assert_eq!(fill(&row, "memref<3xf32, strided<[2], offset: ?>>").unwrap(), None);
    // Extent-1 dims may have any stride.
    let col = a.restrided(&[2, 1], &[1, 7], 0).unwrap();
    assert!(fill(&col, "memref<2x1xf32>").unwrap().is_some());
    // Hard errors.
    let kind = |t: &str| match fill(&a, t).unwrap_err().into_kind() {
        fnabi_core::ErrorKind::Call(c) => c.kind,
        other => panic!("{other}"),
    };
    assert_eq!(kind("memref<?x4xf32>"), CallErrorKind::Dim { axis: 1, expected: 4, got: 3 });
    assert_eq!(kind("memref<?xf32>"), CallErrorKind::Rank { expected: 1, got: 2 });
    assert_eq!(kind("memref<?x?xi32>"), CallErrorKind::Dtype { expected: DType::I32, got: DType::F32 });
    let mut short = [0i64; 3];
    assert!(fill_descriptor(&a, &ty("memref<?x?xf32>"), &mut short).is_err());
}

#[test]
fn conversions_fit_the_type() {
    let a = Array::from_vec(&[2, 3], (0..6).map(|x| x as i16).collect()).unwrap();
    let t = a.permuted(&[1, 0]).unwrap();
    for s in [
        "memref<3x2xi16>",
        "memref<3x2xi16, strided<[1, 3]>>",
        "memref<3x2xi16, strided<[?, 1], offset: 5>>",
        "memref<3x2xi16, strided<[1, ?]>>",
        "memref<3x2xi16, strided<[-2, 1], offset: 4>>",
    ] {
        let c = convert_for(&t, &ty(s)).unwrap();
        assert!(fill(&c, s).unwrap().is_some(), "{s}");
        assert_eq!(c.to_vec::<i16>().unwrap(), t.to_vec::<i16>().unwrap(), "{s}");
    }
    assert!(convert_for(&a, &ty("memref<2x3xi16, strided<[-3, 1], offset: 1>>")).is_err());
    assert!(
        convert_for(&a.restrided(&[2, 3, 1], &[3, 1, 1], 0).unwrap(), &ty("memref<2x3x1xi16, strided<[1, ?, 5]>>"))
            .is_ok()
    );
    let cube = Array::zeros(DType::I16, &[2, 3, 4]).unwrap();
    let e = convert_for(&cube, &ty("memref<2x3x4xi16, strided<[1, ?, 7]>>")).unwrap_err().to_string();
    assert!(e.contains("neither row- nor column-major"), "{e}");
}

#[test]
fn write_back_copies_into_strided_destination() {
    let src = Array::from_vec(&[2, 2], vec![1u8, 2, 3, 4]).unwrap();
    let mut data = [0u8; 4];
    {
        let mut dst = Array::from_mut_slice(&[2, 2], &mut data).unwrap();
        let view = dst.restrided(&[2, 2], &[1, 2], 0).unwrap().to_contiguous().unwrap();
        assert_eq!(view.shape(), &[2, 2]);
        copy_into(&src, &mut dst).unwrap();
        assert!(copy_into(&src, &mut Array::zeros(DType::U8, &[4]).unwrap()).is_err());
    }
    assert_eq!(data, [1, 2, 3, 4]);
}

#[test]
fn static_rank_and_dyn_agree() {
    let a = Array::from_vec(&[4], vec![true, false, true, true]).unwrap();
    let d = MemRefDescriptor::<bool, 1>::from_array(&a).unwrap();
    let dy = d.to_dyn();
    assert_eq!(dy.rank(), 1);
    assert_eq!(dy.sizes(), &[4]);
    assert_eq!(dy.linear_index(&[3]).unwrap(), 3);
    // SAFETY: `dy` holds 5 words.
    let back = unsafe { DynMemRef::read(dy.as_ptr(), 1) };
    assert_eq!(back, dy);
    assert_eq!(std::mem::size_of::<UnrankedMemRef>(), 16);
    assert!(linear_index(0, &[2], &[1], &[0, 0]).is_err());
    let _ = ScalarType::F32;
}

fn desc(allocated: usize, aligned: usize, offset: i64, sizes: &[i64], strides: &[i64]) -> DynMemRef {
    let mut d = DynMemRef::new(sizes.len());
    let w = d.words_mut();
    w[0] = allocated as i64;
    w[1] = aligned as i64;
    w[2] = offset;
    w[3..3 + sizes.len()].copy_from_slice(sizes);
    w[3 + sizes.len()..].copy_from_slice(strides);
    d
}

unsafe extern "C" {
    fn malloc(n: usize) -> *mut c_void;
}

#[test]
fn adoption_shares_frees_once_and_copies_statics() {
    let f32e = ElementType::Scalar(ScalarType::F32);
    // Input alias: shares the input's buffer.
    let input = Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let base = input.storage_ptr() as usize;
    let inputs = [InputMemory { array: &input, allocated: base }];
    // SAFETY: the descriptors below describe memory of `input`, a static, or a malloc'ed block.
    let out = unsafe { adopt_results(&[(f32e, desc(base, base, 1, &[2], &[2]))], &inputs, &[], None) }.unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [2.0, 4.0]);
    assert!(Arc::ptr_eq(out[0].buffer().unwrap(), input.buffer().unwrap()));
    // Borrowed input: copied.
    let data = [5i32, 6];
    let b = Array::from_slice(&[2], &data).unwrap();
    let bp = data.as_ptr() as usize;
    let inputs = [InputMemory { array: &b, allocated: bp }];
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let out = unsafe {
        adopt_results(&[(ElementType::Scalar(ScalarType::I32), desc(bp, bp, 0, &[2], &[1]))], &inputs, &[], None)
    }
    .unwrap();
    assert_eq!(out[0].to_vec::<i32>().unwrap(), [5, 6]);
    assert_ne!(out[0].as_ptr(), b.as_ptr());
    // Static memory: the sentinel, or inside a static range.
    static TABLE: [f32; 2] = [7.0, 8.0];
    let t = TABLE.as_ptr() as usize;
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let out = unsafe {
        adopt_results(
            &[(f32e, desc(GLOBAL_SENTINEL, t, 0, &[2], &[1])), (f32e, desc(t, t, 1, &[1], &[1]))],
            &[],
            &[(t, t + 8)],
            None,
        )
    }
    .unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [7.0, 8.0]);
    assert_eq!(out[1].to_vec::<f32>().unwrap(), [8.0]);
    // Callee allocation returned twice: one buffer, freed once (valgrind checks).
    // SAFETY: a fresh 16-byte block, written before use.
    let p = unsafe { malloc(16) } as usize;
    unsafe { std::slice::from_raw_parts_mut(p as *mut f32, 4).copy_from_slice(&[1.0, 2.0, 3.0, 4.0]) };
    let keep: Arc<dyn std::any::Any + Send + Sync> = Arc::new(5u8);
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let out = unsafe {
        adopt_results(
            &[(f32e, desc(p, p, 0, &[4], &[1])), (f32e, desc(p, p, 2, &[2], &[1]))],
            &[],
            &[],
            Some(keep.clone()),
        )
    }
    .unwrap();
    assert!(Arc::ptr_eq(out[0].buffer().unwrap(), out[1].buffer().unwrap()));
    assert_eq!(out[1].to_vec::<f32>().unwrap(), [3.0, 4.0]);
    assert_eq!(Arc::strong_count(&keep), 2);
    drop(out);
    assert_eq!(Arc::strong_count(&keep), 1);
    // Empty callee result: freed at once.
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let p = unsafe { malloc(1) } as usize;
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let out = unsafe { adopt_results(&[(f32e, desc(p, p, 0, &[0], &[1]))], &[], &[], None) }.unwrap();
    assert_eq!(out[0].shape(), &[0]);
    // Invalid descriptors are errors.
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let e = unsafe { adopt_results(&[(f32e, desc(8, 8, 0, &[-1], &[1]))], &[], &[], None) }.unwrap_err();
    assert!(e.to_string().contains("negative size -1"), "{e}");
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let e = unsafe { adopt_results(&[(f32e, desc(8, 6, 0, &[1], &[1]))], &[], &[], None) }.unwrap_err();
    assert!(e.to_string().contains("not aligned"), "{e}");
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let e = unsafe { adopt_results(&[(f32e, desc(8, 8, i64::MAX, &[1], &[1]))], &[], &[], None) }.unwrap_err();
    assert!(e.to_string().contains("overflows"), "{e}");
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let e = unsafe { adopt_results(&[(f32e, desc(8, 8, 0, &[2], &[i64::MAX]))], &[], &[], None) }.unwrap_err();
    assert!(e.to_string().contains("invalid memref descriptor"), "{e}");
    let inputs = [InputMemory { array: &input, allocated: base }];
    // SAFETY: the descriptors describe live test memory (an input, a static, or a fresh malloc block).
    let e = unsafe { adopt_results(&[(f32e, desc(base, base, 0, &[8], &[1]))], &inputs, &[], None) }.unwrap_err();
    assert!(e.to_string().contains("outside it"), "{e}");
}

/// The one-result hot path adopts a fresh callee allocation (strided and
/// offset views of it included) and declines, taking nothing, whatever the
/// general adoption must decide: invalid descriptors, an input's memory,
/// static memory, bools other than 0 or 1.
#[test]
fn one_fresh_result_is_adopted_in_place_or_declined() {
    let f32e = ElementType::Scalar(ScalarType::F32);
    let boole = ElementType::I1;
    // SAFETY: fresh blocks, written before use; each adopted one is freed by its array.
    let fresh = |bytes: &[u8]| unsafe {
        let p = malloc(bytes.len()).cast::<u8>();
        std::slice::from_raw_parts_mut(p, bytes.len()).copy_from_slice(bytes);
        p as usize
    };
    let floats: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
    // Rows 0..2 of a 2x3, and its column 1 (offset 1, stride 3).
    let p = fresh(&floats);
    // SAFETY: the words describe the fresh block `p`, ours to hand over.
    let a = unsafe { adopt_fresh_result(f32e, desc(p, p, 0, &[2, 3], &[3, 1]).words(), &[], &[]) }.unwrap();
    assert_eq!((a.shape(), a.strides()), (&[2, 3][..], &[3, 1][..]));
    assert_eq!(a.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let p = fresh(&floats);
    // SAFETY: as above.
    let a = unsafe { adopt_fresh_result(f32e, desc(p, p, 1, &[2], &[3]).words(), &[], &[]) }.unwrap();
    assert_eq!(a.to_vec::<f32>().unwrap(), [2.0, 5.0]);
    // Bools: 0 and 1 are adopted; a 2 declines (the general path reports it).
    let p = fresh(&[0, 1, 1, 0]);
    // SAFETY: as above.
    let a = unsafe { adopt_fresh_result(boole, desc(p, p, 0, &[4], &[1]).words(), &[], &[]) }.unwrap();
    assert_eq!(a.to_vec::<bool>().unwrap(), [false, true, true, false]);
    let p = fresh(&[0, 1, 2, 0]);
    // SAFETY: the words describe the fresh block `p`; declined, it stays ours.
    assert!(unsafe { adopt_fresh_result(boole, desc(p, p, 0, &[4], &[1]).words(), &[], &[]) }.is_none());
    // An input's memory, static memory, an empty or invalid descriptor: declined.
    let inputs = [(p, p + 4)];
    // SAFETY: the words describe `p`, which is not taken.
    assert!(unsafe { adopt_fresh_result(boole, desc(p, p, 1, &[2], &[1]).words(), &inputs, &[]) }.is_none());
    // SAFETY: as above.
    assert!(unsafe { adopt_fresh_result(boole, desc(p, p, 0, &[4], &[1]).words(), &[], &[(p, p + 4)]) }.is_none());
    // SAFETY: as above.
    assert!(unsafe { adopt_fresh_result(boole, desc(p, p, 0, &[0], &[1]).words(), &[], &[]) }.is_none());
    // SAFETY: as above.
    assert!(unsafe { adopt_fresh_result(boole, desc(p, p, 0, &[-1], &[1]).words(), &[], &[]) }.is_none());
    // SAFETY: as above.
    assert!(unsafe { adopt_fresh_result(boole, &desc(p, p, 0, &[4], &[1]).words()[..4], &[], &[]) }.is_none());
    // SAFETY: `p` came from malloc and was never taken.
    unsafe { libc_free(p) };
}
