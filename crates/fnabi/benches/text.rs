//! Text and file I/O of values (`cargo bench -p fnabi --bench text`), in
//! MB/s of text (or of file bytes), each beside a `memcpy` of the same
//! bytes in the same run (issue 19, goal P5: ≥ 200 MB/s of text for f32):
//!
//! - `format/f32_1M`: IREE's text form of 2^20 f32 (shortest round-trip
//!   decimals) — what `fnabi run` prints;
//! - `parse/f32_1M`: the same text parsed back (`fnabi run -i`);
//! - `format/i32_1M`, `parse/i32_1M`: the same for i32;
//! - `json/f32_1M`: a JSON list of 2^20 numbers read into an f32 array, as
//!   `fnabi run --inputs` reads an argument (JSON parse, then the
//!   signature's coercion);
//! - `json/f32_1M_typed`: the same list as a call's argument on the typed
//!   path of `fnabi run --inputs` (`typed_arguments_from_json`: read
//!   straight into the array, no value per element);
//! - `npy/f32_4M`: a 16 MiB `.npy` file read from the page cache;
//!   `npy/f32_4M_mapped` the same file memory-mapped (no copy) and every
//!   element read once, beside `npy/f32_4M_read_and_sum`, read and summed;
//! - `memcpy/*`: the references;
//! - `parts/*`: `push_float` on 2^20 f32 beside `zmij` alone and core's
//!   `Display` (the printer fnabi used before).
//!
//! After criterion's own report it prints each figure in MB/s and as a
//! percentage of its memcpy.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput};
use fnabi::{Array, DType, Value};
use std::hint::black_box;
mod support;
use support::{criterion_dir, mean_ns};

const N: usize = 1 << 20;

/// Values of every magnitude, as results are (not only round numbers).
fn floats(n: usize) -> Vec<f32> {
    let mut x = 0x2545_f491_u32;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ((x >> 8) as f32 / (1 << 24) as f32 - 0.5) * 10f32.powi((x % 7) as i32 - 3)
        })
        .collect()
}

fn memcpy(c: &mut Criterion, id: &str, bytes: usize) {
    let src = vec![1u8; bytes];
    let mut dst = vec![2u8; bytes];
    let mut g = c.benchmark_group("memcpy");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function(id, |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let f = Array::from_vec(&[N], floats(N)).unwrap();
    let i =
        Array::from_vec(&[N], (0..N as i32).map(|v| v.wrapping_mul(7919).wrapping_sub(4_000_000)).collect()).unwrap();
    let (ft, it) = (fnabi::text::format_array(&f), fnabi::text::format_array(&i));
    {
        // The float printer beside its parts: zmij's digits alone, and
        // core::fmt's `Display` (what fnabi used before).
        let v = floats(N);
        let mut g = c.benchmark_group("parts");
        g.bench_function("push_float_f32_1M", |b| {
            b.iter(|| {
                let mut out = String::with_capacity(ft.len());
                for &x in &v {
                    fnabi::text::push_float(f64::from(x), fnabi::ScalarType::F32, &mut out);
                    out.push(' ');
                }
                black_box(out)
            })
        });
        g.bench_function("zmij_only_f32_1M", |b| {
            b.iter(|| {
                let mut n = 0;
                let mut buf = zmij::Buffer::new();
                for &x in &v {
                    n += buf.format_finite(black_box(x)).len();
                }
                black_box(n)
            })
        });
        g.bench_function("core_display_f32_1M", |b| {
            b.iter(|| {
                use std::fmt::Write;
                let mut out = String::with_capacity(ft.len());
                for &x in &v {
                    let _ = write!(out, "{x} ");
                }
                black_box(out)
            })
        });
        g.finish();
    }
    for (name, a, t) in [("f32_1M", &f, &ft), ("i32_1M", &i, &it)] {
        let mut g = c.benchmark_group("format");
        g.throughput(Throughput::Bytes(t.len() as u64));
        g.bench_function(name, |b| b.iter(|| black_box(fnabi::text::format_array(black_box(a)))));
        g.finish();
        let mut g = c.benchmark_group("parse");
        g.throughput(Throughput::Bytes(t.len() as u64));
        g.bench_function(name, |b| b.iter(|| black_box(fnabi::text::parse_array(black_box(t)).unwrap())));
        g.finish();
        memcpy(c, &format!("text_{name}"), t.len());
    }
    // JSON: a list of numbers typed by a parameter `tensor<?xf32>`.
    let json =
        fnabi::json::to_string(&Value::List(floats(N).into_iter().map(|x| Value::Float(f64::from(x))).collect()));
    use fnabi::coerce::{InputParam, InputType};
    let params = [InputParam { name: None, ty: InputType::Array { dtype: DType::F32, dims: Some(vec![None]) } }];
    let mut g = c.benchmark_group("json");
    g.throughput(Throughput::Bytes(json.len() as u64));
    g.bench_function("f32_1M", |b| {
        b.iter(|| {
            let v = fnabi::json::from_str(black_box(&json)).unwrap();
            black_box(fnabi::coerce::coerce_arguments(vec![v], Default::default(), &params).unwrap())
        })
    });
    // The same list as the one positional argument, on the typed path.
    let call = format!("[{json}]");
    let files = fnabi::inputs::MemoryFiles::new();
    let typed = fnabi::inputs::typed_arguments_from_json(call.as_bytes(), &files, &params).unwrap();
    assert_eq!(typed.0[0].as_array().unwrap().shape(), [N]);
    g.bench_function("f32_1M_typed", |b| {
        b.iter(|| black_box(fnabi::inputs::typed_arguments_from_json(black_box(call.as_bytes()), &files, &params)))
    });
    g.finish();
    memcpy(c, "json_f32_1M", json.len());
    // .npy: 16 MiB, read from the page cache.
    let big = Array::from_vec(&[4 * N], (0..4 * N).map(|v| v as f32).collect()).unwrap();
    let dir = common::Scratch::new("bench-text");
    let path = dir.join("f32_4M.npy");
    fnabi::npy::save(&path, &big).unwrap();
    let bytes = std::fs::metadata(&path).unwrap().len();
    let mut g = c.benchmark_group("npy");
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("f32_4M", |b| b.iter(|| black_box(fnabi::npy::read_file(&path).unwrap())));
    // Memory-mapped (`fnabi run --mmap-inputs`): the array is the mapping;
    // each run also reads every element once, as a call would.
    // SAFETY: the bench's own file, unchanged while it runs.
    let mapped = unsafe { fnabi::inputs::MappedHostFiles::new() };
    g.bench_function("f32_4M_mapped", |b| {
        b.iter(|| {
            use fnabi::inputs::InputFileSystem;
            let a = fnabi::npy::read_buffer(&mapped.read(&path).unwrap()).unwrap();
            black_box(a.as_slice::<f32>().unwrap().iter().sum::<f32>())
        })
    });
    g.bench_function("f32_4M_read_and_sum", |b| {
        b.iter(|| {
            let a = fnabi::npy::read_file(&path).unwrap();
            black_box(a.as_slice::<f32>().unwrap().iter().sum::<f32>())
        })
    });
    g.finish();
    memcpy(c, "npy_f32_4M", bytes as usize);
    let sizes = [
        ("format/f32_1M", ft.len(), "memcpy/text_f32_1M"),
        ("parse/f32_1M", ft.len(), "memcpy/text_f32_1M"),
        ("format/i32_1M", it.len(), "memcpy/text_i32_1M"),
        ("parse/i32_1M", it.len(), "memcpy/text_i32_1M"),
        ("json/f32_1M", json.len(), "memcpy/json_f32_1M"),
        ("json/f32_1M_typed", json.len(), "memcpy/json_f32_1M"),
        ("npy/f32_4M", bytes as usize, "memcpy/npy_f32_4M"),
    ];
    SIZES.set(sizes.iter().map(|(a, b, c)| (a.to_string(), *b, c.to_string())).collect()).ok();
}

static SIZES: std::sync::OnceLock<Vec<(String, usize, String)>> = std::sync::OnceLock::new();

fn summary() {
    let (Some(dir), Some(sizes)) = (criterion_dir(), SIZES.get()) else { return };
    println!("\ntext and file I/O, MB/s of text (memcpy of the same bytes in this run):");
    for (id, bytes, reference) in sizes {
        let (Some(t), Some(r)) = (mean_ns(&dir, id), mean_ns(&dir, reference)) else { continue };
        let (mbs, rmbs) = (*bytes as f64 * 1e3 / t, *bytes as f64 * 1e3 / r);
        println!("  {id:<14} {mbs:9.1} MB/s | memcpy {rmbs:9.1} MB/s: {:6.2}%", 100.0 * mbs / rmbs);
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args().sample_size(10);
    bench(&mut c);
    c.final_summary();
    // `cargo bench` passes --bench; under `cargo test` (one run of each
    // benchmark, nothing measured) there is nothing to summarize.
    if std::env::args().any(|a| a == "--bench") {
        summary();
    }
}
