//! Layout conversion throughput (`cargo bench -p fnabi --bench layout`),
//! in bytes of output per second, each beside a `memcpy` of the same output
//! size measured in the same run:
//!
//! - `memcpy/4096`: dense copy of a 4096×4096 f32 (64 MiB), the reference;
//! - `transpose/4096`, `transpose/1024`: `ascontiguousarray(a.T)` of a
//!   4096² and a 1024² f32;
//! - `transpose/4096_vec`: the same from a source in a `Vec` (4 KiB pages;
//!   the other sources are huge-page-advised mappings, as numpy's large
//!   arrays and fnabi's own are);
//! - `transpose/3001x5008`: a 3001×5008 f32 out (60 MB), pitches that are
//!   no power of two (beside `memcpy/4096`, in GB/s);
//! - `strided_rows/4096`: `ascontiguousarray(a[:, ::2])` of a 4096² f32
//!   (32 MiB out);
//! - `memcpy/1024`, `memcpy/4096x2048`: the memcpy references for the two
//!   other output sizes;
//! - `transpose_fresh/4096`: the 4096² transpose into a new allocation each
//!   time (page faults included), i.e. `Array::to_contiguous`;
//! - `transpose/1024x512_f64`, `transpose/1024x2048_u16`,
//!   `transpose/2048_u8`: `ascontiguousarray(a.T)` of a 1024×512 f64, a
//!   1024×2048 u16 and a 2048² u8 (4 MiB each, beside `memcpy/1024`);
//! - `transpose/batch_16x16`, `transpose/batch_64x64_u8`: 4096 f32 16×16
//!   and 1024 u8 64×64 matrices transposed each (one kernel call per
//!   matrix: the per-call cost);
//! - `transpose/2048_f64`, `transpose/4096_u16`, `transpose/4096x8192_u8`:
//!   the same for 32 MiB outputs (streaming stores; beside
//!   `memcpy/4096x2048`);
//! - `transpose/1024_pitch1040`: the same 1024² transpose between buffers
//!   whose rows are 1040 floats apart (4160 bytes, not a power of two): what
//!   the kernel reaches when a tile's 16 rows do not share one L1 set, the
//!   measurement behind the 1024² figure (DESIGN.md, "Transpose");
//! - `transpose_then_sum/1024`: the 1024² transpose and then one read of
//!   its output (a sum), what decides whether an output that may stay in
//!   the cache is written with ordinary or streaming stores
//!   ([`layout::non_temporal_threshold`], printed with the summary).
//!
//! All copies go into a caller-provided, already faulted-in destination
//! (what the per-call arena provides). After criterion's own report the
//! bench prints each figure as a percentage of its memcpy, then measures
//! the two transposes of issue 19's goal (`transpose/1024`,
//! `transpose/4096`) again in alternated rounds against their memcpy (see
//! `paired`).

use criterion::{BenchmarkId, Criterion, Throughput};
use fnabi::{Array, DType, layout};
use std::hint::black_box;
mod support;
use support::{criterion_dir, mean_ns};

fn filled(shape: &[usize]) -> Array<'static> {
    let n: usize = shape.iter().product();
    Array::from_vec(shape, (0..n).map(|i| i as f32).collect()).unwrap().to_contiguous().unwrap()
}

fn target(shape: &[usize]) -> Array<'static> {
    target_of(DType::F32, shape)
}

fn target_of(dtype: DType, shape: &[usize]) -> Array<'static> {
    // Fault the pages in (zeroed memory maps lazily).
    let mut a = Array::zeros(dtype, shape).unwrap();
    let p = a.as_mut_ptr().unwrap();
    // SAFETY: `a` owns nbytes of fresh memory.
    unsafe { std::ptr::write_bytes(p, 1, a.nbytes()) };
    a
}

/// An array of `dtype` whose bytes count up (mod 251): real, faulted-in data.
fn bytes_filled(dtype: DType, shape: &[usize]) -> Array<'static> {
    let mut a = target_of(dtype, shape);
    // SAFETY: `a` owns nbytes of writable memory, shared with nobody.
    let bytes = unsafe { std::slice::from_raw_parts_mut(a.as_mut_ptr().unwrap(), a.nbytes()) };
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    a
}

fn memcpy(c: &mut Criterion, id: &str, shape: &[usize]) {
    let src = filled(shape);
    let mut dst = target(shape);
    let bytes = src.nbytes();
    let mut g = c.benchmark_group("memcpy");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function(BenchmarkId::from_parameter(id), |b| {
        let d = dst.as_mut_ptr().unwrap();
        b.iter(|| {
            // SAFETY: two distinct buffers of `bytes` bytes.
            unsafe { std::ptr::copy_nonoverlapping(black_box(src.as_ptr()), d, bytes) };
        })
    });
    g.finish();
}

fn convert(c: &mut Criterion, group: &str, id: &str, view: &Array<'_>) {
    let mut dst = target_of(view.dtype(), view.shape());
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Bytes(dst.nbytes() as u64));
    g.bench_function(BenchmarkId::from_parameter(id), |b| {
        b.iter(|| layout::copy(black_box(view), &mut dst).unwrap());
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    memcpy(c, "4096", &[4096, 4096]);
    let a = filled(&[4096, 4096]);
    convert(c, "transpose", "4096", &a.permuted(&[1, 0]).unwrap());
    // The same source read from a vector's memory (4 KiB pages, no
    // huge-page hint), and a shape with no power-of-two pitch.
    let v = Array::from_vec(&[4096, 4096], (0..4096 * 4096).map(|i| i as f32).collect()).unwrap();
    convert(c, "transpose", "4096_vec", &v.permuted(&[1, 0]).unwrap());
    drop(v);
    convert(c, "transpose", "3001x5008", &filled(&[5008, 3001]).permuted(&[1, 0]).unwrap());
    memcpy(c, "1024", &[1024, 1024]);
    let a1 = filled(&[1024, 1024]);
    convert(c, "transpose", "1024", &a1.permuted(&[1, 0]).unwrap());
    memcpy(c, "4096x2048", &[4096, 2048]);
    convert(c, "strided_rows", "4096", &a.restrided(&[4096, 2048], &[4096, 2], 0).unwrap());
    // Other element sizes, 4 MiB each (the size of the 1024² f32), and 2-
    // and 1-byte ones of 32 MiB (streaming stores).
    for (id, dtype, shape) in [
        ("1024x512_f64", DType::F64, [1024usize, 512]),
        ("1024x2048_u16", DType::U16, [1024, 2048]),
        ("2048_u8", DType::U8, [2048, 2048]),
        ("2048_f64", DType::F64, [2048, 2048]),
        ("4096_u16", DType::U16, [4096, 4096]),
        ("4096x8192_u8", DType::U8, [4096, 8192]),
    ] {
        let a = bytes_filled(dtype, &shape);
        convert(c, "transpose", id, &a.permuted(&[1, 0]).unwrap());
    }
    // Many small transposes: 4096 f32 16×16 and 1024 u8 64×64 matrices
    // (4 MiB each), one kernel call each.
    let batch = filled(&[4096, 16, 16]);
    convert(c, "transpose", "batch_16x16", &batch.permuted(&[0, 2, 1]).unwrap());
    let batch8 = bytes_filled(DType::U8, &[1024, 64, 64]);
    convert(c, "transpose", "batch_64x64_u8", &batch8.permuted(&[0, 2, 1]).unwrap());
    // 1024² between 1040-float row pitches (both sides).
    let pad = filled(&[1024, 1040]);
    let src = pad.restrided(&[1024, 1024], &[1, 1040], 0).unwrap();
    let mut padded = target(&[1024, 1040]);
    // SAFETY: `padded` owns this many bytes of writable memory and outlives the view.
    let bytes = unsafe { std::slice::from_raw_parts_mut(padded.as_mut_ptr().unwrap(), padded.nbytes()) };
    let mut dst = Array::from_mut_bytes(DType::F32, &[1024, 1024], Some(&[1040, 1]), bytes, 0).unwrap();
    let mut g = c.benchmark_group("transpose");
    g.throughput(Throughput::Bytes(1024 * 1024 * 4));
    g.bench_function(BenchmarkId::from_parameter("1024_pitch1040"), |b| {
        b.iter(|| layout::copy(black_box(&src), &mut dst).unwrap());
    });
    g.finish();
    // The 1024² transpose and one read of what it wrote.
    let t1 = a1.permuted(&[1, 0]).unwrap();
    let mut out = target(&[1024, 1024]);
    let mut g = c.benchmark_group("transpose_then_sum");
    g.throughput(Throughput::Bytes(t1.nbytes() as u64));
    g.bench_function(BenchmarkId::from_parameter("1024"), |b| {
        b.iter(|| {
            layout::copy(black_box(&t1), &mut out).unwrap();
            // Eight running sums: the read, not one add's latency, sets the pace.
            let rows = out.as_slice::<f32>().unwrap().chunks_exact(8);
            black_box(rows.fold([0f32; 8], |mut acc, x| {
                acc.iter_mut().zip(x).for_each(|(a, x)| *a += x);
                acc
            }))
        });
    });
    g.finish();
    // The same transpose into fresh memory each time (a 2 MiB-aligned,
    // huge-page-advised mapping): what `Array::to_contiguous` costs.
    let t = a.permuted(&[1, 0]).unwrap();
    let mut g = c.benchmark_group("transpose_fresh");
    g.throughput(Throughput::Bytes(t.nbytes() as u64));
    g.bench_function(BenchmarkId::from_parameter("4096"), |b| {
        b.iter(|| layout::to_dense(black_box(&t), fnabi::DimOrder::RowMajor).unwrap());
    });
    g.finish();
}

fn summary() {
    let Some(dir) = criterion_dir() else { return };
    // The memcpy references, each with its own output size.
    const M4096: (&str, usize) = ("memcpy/4096", 4096 * 4096 * 4);
    const M1024: (&str, usize) = ("memcpy/1024", 1024 * 1024 * 4);
    const M4096X2048: (&str, usize) = ("memcpy/4096x2048", 4096 * 2048 * 4);
    let rows = [
        ("memcpy/4096", M4096.1, M4096),
        ("transpose/4096", M4096.1, M4096),
        ("transpose/4096_vec", M4096.1, M4096),
        ("transpose/3001x5008", 3001 * 5008 * 4, M4096),
        ("transpose/1024", M1024.1, M1024),
        ("transpose/1024_pitch1040", M1024.1, M1024),
        ("transpose/1024x512_f64", M1024.1, M1024),
        ("transpose/1024x2048_u16", M1024.1, M1024),
        ("transpose/2048_u8", M1024.1, M1024),
        ("transpose/batch_16x16", M1024.1, M1024),
        ("transpose/batch_64x64_u8", M1024.1, M1024),
        ("transpose/2048_f64", M4096X2048.1, M4096X2048),
        ("transpose/4096_u16", M4096X2048.1, M4096X2048),
        ("transpose/4096x8192_u8", M4096X2048.1, M4096X2048),
        ("strided_rows/4096", M4096X2048.1, M4096X2048),
        ("transpose_fresh/4096", M4096.1, M4096),
        ("transpose_then_sum/1024", M1024.1, M1024),
    ];
    println!(
        "\nlayout conversion, GB/s of output (its memcpy reference in this run; all but 3001x5008 the same size;\n\
         streaming stores from {:.1} MiB of output on this CPU):",
        layout::non_temporal_threshold() as f64 / (1 << 20) as f64
    );
    for (id, bytes, (reference, ref_bytes)) in rows {
        let (Some(t), Some(r)) = (mean_ns(&dir, id), mean_ns(&dir, reference)) else { continue };
        let (gbs, rgbs) = (bytes as f64 / t, ref_bytes as f64 / r);
        let big = M4096.1 as f64 / mean_ns(&dir, M4096.0).unwrap_or(r);
        println!(
            "  {id:<21} {gbs:6.2} GB/s | its memcpy {rgbs:6.2} GB/s: {:5.1}% | memcpy/4096: {:5.1}%",
            100.0 * gbs / rgbs,
            100.0 * gbs / big
        );
    }
}

/// Transpose over memcpy of the same output, measured in alternated rounds:
/// each round times a few memcpys and then as many transposes, back to back.
/// This VM's memory speed drifts by a fifth between minutes (`memcpy/4096`
/// 2.8–4.9 ms within one session), and criterion measures one benchmark
/// seconds after the other, so a ratio of its two means moves with the
/// drift; a round's two timings share it. Prints the median of 31 rounds'
/// ratios (memcpy time / transpose time) and their range.
fn paired() {
    println!("\ntranspose / memcpy in alternated rounds (median of 31 [min, max]):");
    for (n, k) in [(1024usize, 64), (4096, 4)] {
        let src = filled(&[n, n]);
        let transposed = src.permuted(&[1, 0]).unwrap();
        let mut dst = target(&[n, n]);
        let bytes = src.nbytes();
        let timed = |f: &mut dyn FnMut()| {
            let t = std::time::Instant::now();
            for _ in 0..k {
                f();
            }
            t.elapsed().as_secs_f64()
        };
        let mut ratios = Vec::with_capacity(31);
        for _ in 0..32 {
            let d = dst.as_mut_ptr().unwrap();
            // SAFETY: two distinct buffers of `bytes` bytes.
            let m = timed(&mut || unsafe { std::ptr::copy_nonoverlapping(black_box(src.as_ptr()), d, bytes) });
            let t = timed(&mut || layout::copy(black_box(&transposed), &mut dst).unwrap());
            ratios.push(m / t);
        }
        ratios.remove(0); // the first round warms both up
        ratios.sort_by(f64::total_cmp);
        let pct = |x: f64| 100.0 * x;
        println!(
            "  transpose/{n:<5} {:5.1}% of memcpy/{n} [{:.1}, {:.1}]",
            pct(ratios[15]),
            pct(ratios[0]),
            pct(ratios[30])
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c);
    c.final_summary();
    // `cargo test --all-targets` runs benches once as tests: no summary then.
    if std::env::args().any(|a| a == "--bench") {
        summary();
        paired();
    }
}
