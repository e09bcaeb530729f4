//! Parse and mangle throughput of raw signatures (`cargo bench --bench signature`).
//!
//! The set is what real modules carry: a few buffers of rank 1–4 with
//! static and dynamic dims, scalars and refs.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fnabi::RawSignature;
use fnabi::raw::{RawSignatureReader, RawTypeRef};
use std::hint::black_box;

const SIGNATURES: &[&str] = &[
    "I1!R1!",
    "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64",
    "I15!B7!d1d784B3!d4R9!B6!d1d10",
    "I33!B10!d-1d224d3B9!t6d-1d-1S3!t7O1!R18!B9!d-1d1000S1!U1!",
    "I42!B10!d64d3d7d7B4!d64B14!d1d64d112d112S3!t2R11!B8!d1d1000",
];

fn bench(c: &mut Criterion) {
    let parsed: Vec<RawSignature> = SIGNATURES.iter().map(|s| RawSignature::parse(s).unwrap()).collect();
    let mut g = c.benchmark_group("raw");
    g.throughput(Throughput::Elements(SIGNATURES.len() as u64));
    g.bench_function("parse_owned", |b| {
        b.iter(|| {
            for s in SIGNATURES {
                black_box(RawSignature::parse(black_box(s)).unwrap());
            }
        })
    });
    g.bench_function("parse_zero_copy", |b| {
        b.iter(|| {
            let mut dims = 0;
            for s in SIGNATURES {
                let r = RawSignatureReader::new(black_box(s.as_bytes())).unwrap();
                for t in r.inputs().chain(r.results()) {
                    if let Ok(RawTypeRef::Buffer(b)) = t {
                        dims += b.rank();
                    }
                }
            }
            black_box(dims)
        })
    });
    g.bench_function("mangle", |b| {
        b.iter(|| {
            for s in &parsed {
                black_box(black_box(s).to_mangled());
            }
        })
    });
    g.bench_function("display", |b| {
        b.iter(|| {
            for s in &parsed {
                black_box(black_box(s).to_string());
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
