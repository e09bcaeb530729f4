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

use fnabi_abi::RawSignature;
use fnabi_abi::sip::SipSignature;
use std::hint::black_box;
use std::time::Instant;

#[path = "../tests/support/ten_signatures.rs"]
mod ten_signatures;

#[path = "../tests/support/p6_operations.rs"]
mod p6_operations;
use p6_operations::{ListSizes, raw_human, raw_human_zero_copy, raw_read, sip_parse, sip_text, sip_visit, walk};

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
        time("raw_parse", s.name, filter, || RawSignature::parse(black_box(m)).unwrap().inputs().len());
        time("raw_human", s.name, filter, || raw_human(black_box(m), &mut out));
        time("raw_human_zero_copy", s.name, filter, || raw_human_zero_copy(black_box(m), &mut out));
        // The allocations of the owned parse: its one list at its size, then freed.
        let (lists, mut held) = (ListSizes::of_raw(&RawSignature::parse(m).unwrap()), Vec::with_capacity(64));
        time("raw_alloc", s.name, filter, || black_box(&lists).allocate(&mut held));
    }
    let (mut a, mut b) = (String::new(), String::new());
    for s in sigs.iter().filter(|s| s.sip) {
        let m = s.mangled.as_str();
        time("sip_visit", s.name, filter, || sip_visit(black_box(m)));
        time("sip_text", s.name, filter, || sip_text(black_box(m), &mut a, &mut b));
        time("sip_parse", s.name, filter, || sip_parse(black_box(m)));
        // The floor of any owned parse into `Structure`s: cloning the parsed
        // signature (its lists and shared keys) and dropping the clone.
        let parsed = SipSignature::parse(m).unwrap();
        time("sip_clone", s.name, filter, || black_box(&parsed).clone().inputs().is_some() as usize);
        // The allocations of any owned parse that allocates once per list:
        // each of the parsed signature's lists at its size, then freed.
        let (lists, mut held) = (ListSizes::of(&parsed), Vec::with_capacity(64));
        time("sip_alloc", s.name, filter, || black_box(&lists).allocate(&mut held));
    }
}
