//! Parse and mangle throughput of raw and SIP signatures (`cargo bench -p
//! fnabi --bench signature`).
//!
//! Group `raw`: five raw signatures together (parse, zero-copy read,
//! mangle, display). Group `p6`: issue 19's ten signatures, one id per
//! (operation, signature): `walk` (every component, spans descended except
//! dict keys), `raw_read` (zero-copy read of inputs and results, every dim),
//! `raw_parse` (`RawSignature::parse`), `raw_human` (parse + the `Display`
//! form written into a reused `String`, `write_human`), `raw_human_zero_copy`
//! (the same text written straight from the mangled form by
//! `RawSignatureReader::write_human`, no owned signature), `raw_alloc` (only
//! the allocations of the owned parse: its one list of both sides at its
//! size, then freed), `sip_visit` (both
//! sides into a counting visitor),
//! `sip_text` (the reference text of both sides into reused `String`s),
//! `sip_parse` (`SipSignature::parse`) and `sip_alloc` (only the
//! allocations of an owned parse that allocates once per list: each list
//! of the parsed signature at its size, then freed). Raw operations run on the raw
//! signatures, SIP ones on the SIP signatures (`I1!R1!` is both).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fnabi::RawSignature;
use fnabi::raw::{RawSignatureReader, RawTypeRef};
use std::hint::black_box;
use std::time::Duration;

#[path = "../../fnabi-abi/tests/support/ten_signatures.rs"]
mod ten_signatures;

#[path = "../../fnabi-abi/tests/support/p6_operations.rs"]
mod p6_operations;
use p6_operations::{ListSizes, raw_human, raw_human_zero_copy, raw_read, sip_parse, sip_text, sip_visit, walk};

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

fn p6(c: &mut Criterion) {
    let sigs = ten_signatures::ten();
    let mut g = c.benchmark_group("p6");
    g.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1)).sample_size(30);
    for s in &sigs {
        let m = s.mangled.as_str();
        g.bench_function(format!("walk/{}", s.name), |b| b.iter(|| walk(black_box(m).as_bytes(), 0)));
    }
    for s in sigs.iter().filter(|s| s.raw) {
        let m = s.mangled.as_str();
        g.bench_function(format!("raw_read/{}", s.name), |b| b.iter(|| raw_read(black_box(m))));
        g.bench_function(format!("raw_parse/{}", s.name), |b| b.iter(|| RawSignature::parse(black_box(m)).unwrap()));
        let mut out = String::new();
        g.bench_function(format!("raw_human/{}", s.name), |b| b.iter(|| raw_human(black_box(m), &mut out)));
        g.bench_function(format!("raw_human_zero_copy/{}", s.name), |b| {
            b.iter(|| raw_human_zero_copy(black_box(m), &mut out))
        });
        let (lists, mut held) = (ListSizes::of_raw(&RawSignature::parse(m).unwrap()), Vec::with_capacity(64));
        g.bench_function(format!("raw_alloc/{}", s.name), |b| b.iter(|| black_box(&lists).allocate(&mut held)));
    }
    for s in sigs.iter().filter(|s| s.sip) {
        let m = s.mangled.as_str();
        g.bench_function(format!("sip_visit/{}", s.name), |b| b.iter(|| sip_visit(black_box(m))));
        let (mut ins, mut outs) = (String::new(), String::new());
        g.bench_function(format!("sip_text/{}", s.name), |b| b.iter(|| sip_text(black_box(m), &mut ins, &mut outs)));
        g.bench_function(format!("sip_parse/{}", s.name), |b| b.iter(|| sip_parse(black_box(m))));
        let (lists, mut held) = (ListSizes::of(&fnabi::SipSignature::parse(m).unwrap()), Vec::with_capacity(64));
        g.bench_function(format!("sip_alloc/{}", s.name), |b| b.iter(|| black_box(&lists).allocate(&mut held)));
    }
    g.finish();
}

criterion_group!(benches, bench, p6);
criterion_main!(benches);
