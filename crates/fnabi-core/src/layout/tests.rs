use super::*;

fn iota(shape: &[usize]) -> Array<'static> {
    let n: usize = shape.iter().product();
    Array::from_vec(shape, (0..n as u32).collect()).unwrap()
}

#[test]
fn transposes_of_every_element_size() {
    // (7, 300) and (300, 7) keep the 8-byte transpose on its SSE2 tiles
    // (the AVX-512 one needs 8 rows and columns), (130, 9) the 4-byte one;
    // (200, 70) reaches the 64×64 blocks of the 1-byte kernels.
    for &(p, q) in &[(1usize, 1usize), (3, 5), (4, 4), (37, 70), (64, 33), (130, 9), (7, 300), (300, 7), (200, 70)] {
        let n = p * q;
        let a8 = Array::from_vec(&[p, q], (0..n).map(|x| x as u8).collect()).unwrap();
        let a16 = Array::from_vec(&[p, q], (0..n).map(|x| x as u16).collect()).unwrap();
        let a32 = Array::from_vec(&[p, q], (0..n).map(|x| x as f32).collect()).unwrap();
        let a64 = Array::from_vec(&[p, q], (0..n).map(|x| x as i64).collect()).unwrap();
        for a in [a8, a16, a32, a64] {
            let t = a.permuted(&[1, 0]).unwrap();
            let d = to_dense(&t, DimOrder::RowMajor).unwrap();
            assert!(d.is_c_contiguous());
            assert_eq!(d, t, "{p}x{q} {}", a.dtype());
            let f = to_dense(&t, DimOrder::ColumnMajor).unwrap();
            assert!(f.is_f_contiguous());
            assert_eq!(f, t);
        }
    }
}

#[test]
fn kernels_are_chosen_by_layout() {
    let a = iota(&[8, 16]);
    // Strided rows (a[:, ::2]) and reversed rows/columns.
    let s = a.restrided(&[8, 8], &[16, 2], 0).unwrap();
    assert_eq!(to_dense(&s, DimOrder::RowMajor).unwrap().to_vec::<u32>().unwrap(), s.to_vec::<u32>().unwrap());
    let r = a.restrided(&[8, 16], &[-16, -1], 4 * 127).unwrap();
    let v = to_dense(&r, DimOrder::RowMajor).unwrap().to_vec::<u32>().unwrap();
    assert_eq!(v, (0..128).rev().collect::<Vec<u32>>());
    // Broadcast inner and outer.
    let b = a.restrided(&[3, 4, 5], &[0, 16, 0], 4).unwrap();
    let v = to_dense(&b, DimOrder::RowMajor).unwrap().to_vec::<u32>().unwrap();
    let expect: Vec<u32> = (0..3).flat_map(|_| (0..4).flat_map(|i| std::iter::repeat_n(1 + 16 * i, 5))).collect();
    assert_eq!(v, expect);
    // Rows of a sub-block.
    let blk = a.restrided(&[4, 5], &[16, 1], 4 * 17).unwrap();
    assert_eq!(
        to_dense(&blk, DimOrder::RowMajor).unwrap().to_vec::<u32>().unwrap(),
        [17, 18, 19, 20, 21, 33, 34, 35, 36, 37, 49, 50, 51, 52, 53, 65, 66, 67, 68, 69]
    );
}

#[test]
fn large_outputs_use_streaming_stores_correctly() {
    // 4 MiB+ of f32 output through the transpose and the stride-2 gather.
    let (p, q) = (1030usize, 1100usize);
    let a = iota(&[p, q * 2]);
    let g = a.restrided(&[p, q], &[2 * q as isize, 2], 0).unwrap();
    let d = to_dense(&g, DimOrder::RowMajor).unwrap();
    assert_eq!(d.nbytes(), p * q * 4);
    assert_eq!(d, g);
    let big = iota(&[1500, 1500]);
    let t = big.permuted(&[1, 0]).unwrap();
    let d = to_dense(&t, DimOrder::RowMajor).unwrap();
    assert!(d.nbytes() >= NON_TEMPORAL_CEILING);
    assert_eq!(d.get::<u32>(&[7, 1499]).unwrap(), 1499 * 1500 + 7);
    assert_eq!(d, t);
    let g2 = big.restrided(&[1500, 750], &[1500, 2], 0).unwrap();
    let big2 = iota(&[3000, 1500]);
    let g3 = big2.restrided(&[3000, 750], &[1500, 2], 4).unwrap();
    assert_eq!(to_dense(&g2, DimOrder::RowMajor).unwrap(), g2);
    assert_eq!(to_dense(&g3, DimOrder::RowMajor).unwrap(), g3);
}

#[test]
fn broadcast_of_a_streamed_transpose() {
    // 4 copies of a 600x1000 transpose: 9.6 MB out, so the block is
    // written with streaming stores and then duplicated.
    let base = iota(&[1000, 600]);
    let b = base.restrided(&[4, 600, 1000], &[0, 1, 600], 0).unwrap();
    let d = to_dense(&b, DimOrder::RowMajor).unwrap();
    assert!(d.nbytes() >= NON_TEMPORAL_CEILING);
    assert_eq!(d.get::<u32>(&[3, 599, 999]).unwrap(), 999 * 600 + 599);
    assert_eq!(d, b);
}

#[test]
fn copy_errors() {
    let a = iota(&[2, 3]);
    let mut wrong_shape = Array::zeros(DType::U32, &[3, 2]).unwrap();
    let e = copy(&a, &mut wrong_shape).unwrap_err().to_string();
    assert_eq!(e, "shape of a layout copy: expected [3, 2], got [2, 3]");
    let mut wrong_type = Array::zeros(DType::F32, &[2, 3]).unwrap();
    let e = copy(&a, &mut wrong_type).unwrap_err().to_string();
    assert!(e.starts_with("element type of a layout copy"), "{e}");
    let mut shared = Array::zeros(DType::U32, &[2, 3]).unwrap();
    let keep = shared.clone();
    assert!(copy(&a, &mut shared).unwrap_err().to_string().contains("not writable"));
    drop(keep);
    #[repr(align(8))]
    struct Aligned([u8; 16]);
    let mut bytes = Aligned([0; 16]);
    let mut overlapping = Array::from_mut_bytes(DType::U32, &[2, 3], Some(&[1, 1]), &mut bytes.0, 0).unwrap();
    let e = copy(&a, &mut overlapping).unwrap_err().to_string();
    assert_eq!(e, "invalid argument: destination strides [1, 1] for shape [2, 3] make elements overlap");
    assert!(non_overlapping(&[2, 3], &[3, 1]));
    assert!(non_overlapping(&[2, 3], &[1, 2]));
    assert!(non_overlapping(&[2, 3], &[-3, -1]));
    assert!(!non_overlapping(&[2, 3], &[1, 1]));
    assert!(!non_overlapping(&[2, 3], &[0, 1]));
    assert!(non_overlapping(&[1, 3], &[0, 1]));
    assert!(non_overlapping(&[0, 3], &[0, 0]));
    let e = copy_to_slice(&a, DimOrder::RowMajor, &mut [0u8; 23]).unwrap_err().to_string();
    assert_eq!(e, "destination bytes for a dense copy of u32[2, 3]: expected 24, got 23");
}

#[test]
fn casts_follow_as_semantics() {
    let src = Array::from_vec(&[5], vec![-1i64, 0, 1, 256, i64::MAX]).unwrap();
    let mut u8s = Array::zeros(DType::U8, &[5]).unwrap();
    cast_copy(&src, &mut u8s).unwrap();
    assert_eq!(u8s.to_vec::<u8>().unwrap(), [255, 0, 1, 0, 255]);
    let mut bools = Array::zeros(DType::Bool, &[5]).unwrap();
    cast_copy(&src, &mut bools).unwrap();
    assert_eq!(bools.to_vec::<bool>().unwrap(), [true, false, true, true, true]);
    let mut halfs = Array::zeros(DType::F16, &[5]).unwrap();
    cast_copy(&src, &mut halfs).unwrap();
    assert_eq!(halfs.get::<half::f16>(&[3]).unwrap(), half::f16::from_f32(256.0));
    let mut back = Array::zeros(DType::U64, &[5]).unwrap();
    cast_copy(&halfs, &mut back).unwrap();
    // -1.0 saturates to 0; i64::MAX becomes f16 infinity, which saturates.
    assert_eq!(back.to_vec::<u64>().unwrap(), [0, 0, 1, 256, u64::MAX]);
    let mut bf = Array::zeros(DType::BF16, &[5]).unwrap();
    cast_copy(&bools, &mut bf).unwrap();
    assert_eq!(bf.get::<half::bf16>(&[0]).unwrap(), half::bf16::ONE);
    let mut f64s = Array::zeros(DType::F64, &[5]).unwrap();
    cast_copy(&Array::from_vec(&[5], vec![u64::MAX, 1, 2, 3, 4]).unwrap(), &mut f64s).unwrap();
    assert_eq!(f64s.get::<f64>(&[0]).unwrap(), u64::MAX as f64);
    let mut wrong = Array::zeros(DType::F64, &[4]).unwrap();
    assert!(cast_copy(&src, &mut wrong).is_err());
}

#[test]
fn transposes_across_ragged_super_blocks() {
    // The AVX-512 kernel walks 16×16 tiles in diagonals of 16×16-tile
    // super-blocks: shapes with partial super-blocks in both dims (and a
    // ragged tile edge), ordinary and streaming stores.
    for &(p, q) in &[(16 * 17 + 5, 16 * 33 + 3), (16 * 40, 16 * 3), (16 * 3 + 1, 16 * 37), (64 * 18 + 1, 64 * 2 + 63)] {
        let a = iota(&[p, q]);
        let t = a.permuted(&[1, 0]).unwrap();
        let d = to_dense(&t, DimOrder::RowMajor).unwrap();
        assert_eq!(d, t, "{p}x{q}");
        let v = d.to_vec::<u32>().unwrap();
        assert!(v.iter().enumerate().all(|(i, &x)| x as usize == (i % p) * q + i / p), "{p}x{q}");
        // The same in 8-byte elements (8×8 tiles).
        let a = Array::from_vec(&[p, q], (0..p * q).map(|x| x as f64).collect()).unwrap();
        let t = a.permuted(&[1, 0]).unwrap();
        let v = to_dense(&t, DimOrder::RowMajor).unwrap().to_vec::<f64>().unwrap();
        assert!(v.iter().enumerate().all(|(i, &x)| x as usize == (i % p) * q + i / p), "{p}x{q} f64");
        // And in 2-byte elements (32×32 blocks; values wrap at 65536).
        let a = Array::from_vec(&[p, q], (0..p * q).map(|x| x as u16).collect()).unwrap();
        let t = a.permuted(&[1, 0]).unwrap();
        let v = to_dense(&t, DimOrder::RowMajor).unwrap().to_vec::<u16>().unwrap();
        assert!(v.iter().enumerate().all(|(i, &x)| x == ((i % p) * q + i / p) as u16), "{p}x{q} u16");
        // And in bytes (64×64 blocks; values wrap at 256, so mix in the row).
        let a = Array::from_vec(&[p, q], (0..p * q).map(|x| (x + x / q * 7) as u8).collect()).unwrap();
        let t = a.permuted(&[1, 0]).unwrap();
        let v = to_dense(&t, DimOrder::RowMajor).unwrap().to_vec::<u8>().unwrap();
        let want = |i: usize| {
            let x = (i % p) * q + i / p;
            (x + x / q * 7) as u8
        };
        assert!(v.iter().enumerate().all(|(i, &x)| x == want(i)), "{p}x{q} u8");
    }
    let (p, q) = (16 * 70 + 9, 16 * 120 + 2);
    let a = iota(&[p, q]);
    let t = a.permuted(&[1, 0]).unwrap();
    let d = to_dense(&t, DimOrder::RowMajor).unwrap();
    assert!(d.nbytes() >= NON_TEMPORAL_CEILING);
    let v = d.to_vec::<u32>().unwrap();
    assert!(v.iter().enumerate().all(|(i, &x)| x as usize == (i % p) * q + i / p));
    // 2- and 1-byte elements with streaming stores (ragged edges too).
    let (p, q) = (32 * 65 + 7, 32 * 66 + 9);
    let a = Array::from_vec(&[p, q], (0..p * q).map(|x| x as u16).collect()).unwrap();
    let t = a.permuted(&[1, 0]).unwrap();
    let d = to_dense(&t, DimOrder::RowMajor).unwrap();
    assert!(d.nbytes() >= NON_TEMPORAL_CEILING);
    let v = d.to_vec::<u16>().unwrap();
    assert!(v.iter().enumerate().all(|(i, &x)| x == ((i % p) * q + i / p) as u16));
    let (p, q) = (64 * 46 + 5, 64 * 46 + 33);
    let a = Array::from_vec(&[p, q], (0..p * q).map(|x| (x % 253) as u8).collect()).unwrap();
    let t = a.permuted(&[1, 0]).unwrap();
    let d = to_dense(&t, DimOrder::RowMajor).unwrap();
    assert!(d.nbytes() >= NON_TEMPORAL_CEILING);
    let v = d.to_vec::<u8>().unwrap();
    assert!(v.iter().enumerate().all(|(i, &x)| x == (((i % p) * q + i / p) % 253) as u8));
    // 8-byte elements with streaming stores.
    let (p, q) = (8 * 130 + 3, 8 * 130 + 5);
    let a = Array::from_vec(&[p, q], (0..p * q).map(|x| x as i64).collect()).unwrap();
    let t = a.permuted(&[1, 0]).unwrap();
    let d = to_dense(&t, DimOrder::RowMajor).unwrap();
    assert!(d.nbytes() >= NON_TEMPORAL_CEILING);
    let v = d.to_vec::<i64>().unwrap();
    assert!(v.iter().enumerate().all(|(i, &x)| x as usize == (i % p) * q + i / p));
}

#[test]
fn transposes_of_reversed_rows() {
    // Negative source strides through the tile kernels of every element
    // size: rows reversed, then transposed (130×200 is enough for the
    // largest tile, 64×64 bytes).
    let (p, q) = (130usize, 200usize);
    let n = p * q;
    let arrays = [
        Array::from_vec(&[p, q], (0..n).map(|x| (x % 251) as u8).collect()).unwrap(),
        Array::from_vec(&[p, q], (0..n).map(|x| x as u16).collect()).unwrap(),
        Array::from_vec(&[p, q], (0..n).map(|x| x as f32).collect()).unwrap(),
        Array::from_vec(&[p, q], (0..n).map(|x| x as f64).collect()).unwrap(),
    ];
    for a in arrays {
        let es = a.dtype().size();
        let reversed = a.restrided(&[p, q], &[-(q as isize), 1], (p - 1) * q * es).unwrap();
        let t = reversed.permuted(&[1, 0]).unwrap();
        let d = to_dense(&t, DimOrder::RowMajor).unwrap();
        assert_eq!(d, t, "{}", a.dtype());
        // Spot check against the source: d[j][i] = a[p - 1 - i][j].
        let (dv, av) = (d.to_contiguous().unwrap(), a.to_contiguous().unwrap());
        let at = |x: &Array<'_>, r: usize, c: usize, cols: usize| {
            let b = x.as_bytes().unwrap();
            b[(r * cols + c) * es..(r * cols + c + 1) * es].to_vec()
        };
        assert_eq!(at(&dv, 3, 0, p), at(&av, p - 1, 3, q), "{}", a.dtype());
        assert_eq!(at(&dv, q - 1, p - 1, p), at(&av, 0, q - 1, q), "{}", a.dtype());
    }
}

#[test]
fn batches_of_small_transposes() {
    // Each matrix of a batch is one kernel call of a few tiles (the plain
    // walk of `diagonal_tiles`): 2×2 tiles plus a ragged column, per size.
    for (es, edge) in [(1usize, 64usize), (2, 32), (4, 16), (8, 8)] {
        let shape = [3, 2 * edge, 2 * edge + 1];
        let n: usize = shape.iter().product();
        let a = match es {
            1 => Array::from_vec(&shape, (0..n).map(|x| (x % 251) as u8).collect()).unwrap(),
            2 => Array::from_vec(&shape, (0..n).map(|x| x as u16).collect()).unwrap(),
            4 => Array::from_vec(&shape, (0..n).map(|x| x as f32).collect()).unwrap(),
            _ => Array::from_vec(&shape, (0..n).map(|x| x as f64).collect()).unwrap(),
        };
        let t = a.permuted(&[0, 2, 1]).unwrap();
        let d = to_dense(&t, DimOrder::RowMajor).unwrap();
        assert_eq!(d, t, "{}", a.dtype());
    }
}
