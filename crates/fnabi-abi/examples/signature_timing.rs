//! Times fnabi's signature parsers on issue 19's ten signatures, one line
//! per operation and signature (`op/name ns`), the same operations as the
//! C++ driver in `bench/iree-signature/driver.cc`; with `--list`, prints
//! the signatures for that driver (`name raw sip mangled`).
//! `scripts/bench-signature-vs-iree.sh` alternates the two and prints the
//! ratios; the criterion bench (`cargo bench -p fnabi --bench signature`,
//! group `p6`) times the same operations without the reference.
//!
//! ```text
//! cargo run --release -p fnabi-abi --example signature_timing -- [--list | FILTER]
//! ```
//!
//! Each figure is the median of five rounds of about 20 ms, calibrated as
//! the C++ driver calibrates, so the two are comparable line by line.

use fnabi_abi::mangle::{Component, SignatureParser};
use fnabi_abi::raw::{RawSignatureReader, RawTypeRef};
use fnabi_abi::sip::{ReferenceText, SipReader, SipSignature, SipVisitor, StructKind};
use fnabi_abi::{Dim, RawSignature};
use std::hint::black_box;
use std::time::Instant;

#[path = "../tests/support/ten_signatures.rs"]
mod ten_signatures;

/// Every component, spans descended except dict keys (the C++ driver's `walk`).
#[inline(never)]
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

/// Every item of both sides and every dim (the C++ driver's `raw_visit`).
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

/// Counts the events (the C++ driver's `CountVisitor`).
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

/// Prints `op/name ns` for `f` when the id contains `filter`.
fn time(op: &str, name: &str, filter: &str, mut f: impl FnMut() -> usize) {
    let id = format!("{op}/{name}");
    if !id.contains(filter) {
        return;
    }
    let mut iters = 1usize;
    loop {
        let t = Instant::now();
        for _ in 0..iters {
            black_box(f());
        }
        if t.elapsed().as_secs_f64() > 0.02 {
            break;
        }
        iters *= 2;
    }
    let mut rounds: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(f());
            }
            t.elapsed().as_secs_f64() * 1e9 / iters as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    println!("{id} {:.1}", rounds[2]);
}

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    let sigs = ten_signatures::ten();
    if arg == "--list" {
        for s in &sigs {
            println!("{} {} {} {}", s.name, u8::from(s.raw), u8::from(s.sip), s.mangled);
        }
        return;
    }
    let filter = arg.as_str();
    for s in &sigs {
        let m = s.mangled.as_str();
        time("walk", s.name, filter, || walk(black_box(m).as_bytes(), 0));
    }
    let mut out = String::new();
    for s in sigs.iter().filter(|s| s.raw) {
        let m = s.mangled.as_str();
        time("raw_read", s.name, filter, || raw_read(black_box(m)) as usize);
        time("raw_parse", s.name, filter, || RawSignature::parse(black_box(m)).unwrap().inputs.len());
        time("raw_human", s.name, filter, || {
            out.clear();
            RawSignature::parse(black_box(m)).unwrap().write_human(&mut out);
            out.len()
        });
        time("raw_human_zero_copy", s.name, filter, || {
            out.clear();
            RawSignatureReader::new(black_box(m).as_bytes()).unwrap().write_human(&mut out).unwrap();
            out.len()
        });
    }
    let (mut a, mut b) = (String::new(), String::new());
    for s in sigs.iter().filter(|s| s.sip) {
        let m = s.mangled.as_str();
        time("sip_visit", s.name, filter, || {
            let r = SipReader::new(black_box(m.as_bytes())).unwrap();
            let mut v = Count::default();
            r.visit_inputs(&mut v).unwrap();
            r.visit_results(&mut v).unwrap();
            v.0
        });
        time("sip_text", s.name, filter, || {
            let r = SipReader::new(black_box(m.as_bytes())).unwrap();
            a.clear();
            r.visit_inputs(&mut ReferenceText::with_writer(&mut a)).unwrap();
            b.clear();
            r.visit_results(&mut ReferenceText::with_writer(&mut b)).unwrap();
            a.len() + b.len()
        });
        time("sip_parse", s.name, filter, || SipSignature::parse(black_box(m)).unwrap().inputs().is_some() as usize);
        // The floor of any owned parse into `Structure`s: cloning the parsed
        // signature (its lists and shared keys) and dropping the clone.
        let parsed = SipSignature::parse(m).unwrap();
        time("sip_clone", s.name, filter, || black_box(&parsed).clone().inputs().is_some() as usize);
    }
}
