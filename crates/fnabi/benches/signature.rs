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
//! `RawSignatureReader::write_human`, no owned signature), `sip_visit` (both
//! sides into a counting visitor),
//! `sip_text` (the reference text of both sides into reused `String`s) and
//! `sip_parse` (`SipSignature::parse`). Raw operations run on the raw
//! signatures, SIP ones on the SIP signatures (`I1!R1!` is both).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fnabi::mangle::{Component, SignatureParser};
use fnabi::raw::{RawSignatureReader, RawTypeRef};
use fnabi::sip::{ReferenceText, SipReader, SipSignature, SipVisitor, StructKind};
use fnabi::{Dim, RawSignature};
use std::hint::black_box;
use std::time::Duration;

#[path = "../../fnabi-abi/tests/support/ten_signatures.rs"]
mod ten_signatures;

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

/// Every component of `bytes` (at absolute offset `base`), descending into
/// spans except dict keys (`K`, whose content is a name, not components);
/// stops at the first error. (A span's parts, not a parser, go down the
/// recursion: a copied parser is written a field at a time and read back
/// whole, which stalls the CPU.)
fn walk(bytes: &[u8], base: usize) -> usize {
    let mut n = 0;
    for c in SignatureParser::with_offset(bytes, base) {
        let Ok(c) = c else { break };
        n += 1;
        if let Component::Span { tag, content, content_offset, .. } = c
            && tag != b'K'
        {
            n += walk(content, content_offset);
        }
    }
    n
}

/// Reads every item and dim of both sides without allocating.
fn raw_read(mangled: &str) -> i64 {
    let r = RawSignatureReader::new(mangled.as_bytes()).unwrap();
    let mut acc = 0i64;
    for t in r.inputs().chain(r.results()) {
        match t.unwrap() {
            RawTypeRef::Buffer(b) => {
                acc += i64::from(b.dtype.code());
                for d in b.dims() {
                    acc += match d {
                        Dim::Static(n) => i64::from(n),
                        Dim::Dynamic => -1,
                    };
                }
            }
            RawTypeRef::Scalar(s) => acc += i64::from(s.code()),
            RawTypeRef::RefObject | RawTypeRef::Unrecognized => acc += 1,
        }
    }
    acc
}

/// Sums what it is told, so no event is optimized away.
#[derive(Default)]
struct Count(usize);

impl SipVisitor<'_> for Count {
    fn integer_key(&mut self, key: usize) {
        self.0 += key;
    }
    fn string_key(&mut self, key: &str) {
        self.0 += key.len();
    }
    fn open(&mut self, kind: StructKind) {
        self.0 += 1 + kind as usize;
    }
    fn close(&mut self) {
        self.0 += 1;
    }
    fn leaf(&mut self, raw_index: usize) {
        self.0 += raw_index;
    }
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
        g.bench_function(format!("raw_human/{}", s.name), |b| {
            b.iter(|| {
                out.clear();
                RawSignature::parse(black_box(m)).unwrap().write_human(&mut out);
                out.len()
            })
        });
        g.bench_function(format!("raw_human_zero_copy/{}", s.name), |b| {
            b.iter(|| {
                out.clear();
                RawSignatureReader::new(black_box(m).as_bytes()).unwrap().write_human(&mut out).unwrap();
                out.len()
            })
        });
    }
    for s in sigs.iter().filter(|s| s.sip) {
        let m = s.mangled.as_str();
        g.bench_function(format!("sip_visit/{}", s.name), |b| {
            b.iter(|| {
                let r = SipReader::new(black_box(m.as_bytes())).unwrap();
                let mut v = Count::default();
                r.visit_inputs(&mut v).unwrap();
                r.visit_results(&mut v).unwrap();
                v.0
            })
        });
        let (mut ins, mut outs) = (String::new(), String::new());
        g.bench_function(format!("sip_text/{}", s.name), |b| {
            b.iter(|| {
                let r = SipReader::new(black_box(m.as_bytes())).unwrap();
                ins.clear();
                r.visit_inputs(&mut ReferenceText::with_writer(&mut ins)).unwrap();
                outs.clear();
                r.visit_results(&mut ReferenceText::with_writer(&mut outs)).unwrap();
                ins.len() + outs.len()
            })
        });
        g.bench_function(format!("sip_parse/{}", s.name), |b| b.iter(|| SipSignature::parse(black_box(m)).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, bench, p6);
criterion_main!(benches);
