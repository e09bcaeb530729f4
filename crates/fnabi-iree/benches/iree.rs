//! Per-call cost of IREE modules on `local-sync`, same run, same modules:
//! - `raw/*`: the runtime with a prebuilt argument list and a reused
//!   result list ([`IreeModule::vm_call`]): `iree_vm_invoke` and nothing
//!   else, what the C runtime costs;
//! - `fnabi/*`: from host values through a prepared call
//!   (`PreparedCall::call_bound` with the tuple of arguments): check every
//!   value against the reflection, pack, copy the arrays into (reused)
//!   device buffers, invoke, and unpack the results into host values;
//! - `fnabi-call/*`: the same through [`fnabi::Function::call`], which also
//!   takes owned arguments (the loop clones them: for `dict8` a dict of 8
//!   boxed arrays) and binds them by position and keyword.
//!
//! - `clone/*`: the caller's part of the `fnabi-call` loop alone: its
//!   owned argument cloned and dropped (no call).
//!
//! - `*/add_i32`: scalars only (no device work); `*/dyn_add_1MiB`: two
//!   1 MiB arguments, where fnabi's cost is copying them into the device
//!   buffers (results are not copied).
//!
//! After criterion's report, `paired` times what fnabi adds to the raw
//! invoke (issue 19, P7) in alternated rounds: each round runs a batch of
//! raw invokes, prepared calls, `Function::call`s and the `fnabi-call`
//! loop's argument clones back to back, so the four share the machine's
//! drift, and the bench prints per function the median over 31 rounds of
//! each difference from the same round's raw invoke (with its range), then
//! one line of JSON with the CPU model. Criterion's separate rows drift by
//! ±0.2 µs between runs on a busy VM; the rounds' differences do not. It
//! runs with `--bench` when no filter is given or the filter is `paired`.
//!
//! `cargo bench -p fnabi-iree --bench iree -- --warm-up-time 1 --measurement-time 3`

use criterion::Criterion;
use fnabi::vm::{BufferView, Variant, VmList};
use fnabi::{Array, Value};
use fnabi_iree::{Device, IreeModule};
use std::hint::black_box;

fn load(name: &str) -> IreeModule {
    let path = format!("{}/../fnabi/tests/fixtures/iree/{name}.vmfb", env!("CARGO_MANIFEST_DIR"));
    // SAFETY: the repository's fixture modules.
    unsafe { IreeModule::load(path, Device::LocalSync) }.unwrap()
}

fn bv(a: &Array<'static>) -> Variant<'static> {
    Variant::buffer_view(BufferView::new(a.clone()).unwrap())
}

fn bench(c: &mut Criterion) {
    let add = load("add");
    let nested = load("nested");
    let x = Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let ks: Vec<Array<'static>> = (0..8).map(|k| Array::from_vec(&[4], vec![k as f32; 4]).unwrap()).collect();

    // ---- add_one -------------------------------------------------------------
    let mut raw = add.vm_call("add_one", &VmList::from_variants(vec![bv(&x)])).unwrap();
    c.bench_function("raw/add_one", |b| b.iter(|| raw.invoke().unwrap()));
    raw.invoke().unwrap();
    let out = raw.results().unwrap();
    assert_eq!(out[0].as_buffer_view().unwrap().array().to_vec::<f32>().unwrap(), [2.0, 3.0, 4.0, 5.0]);

    let f = add.function("add_one").unwrap();
    c.bench_function("fnabi-call/add_one", |b| b.iter(|| f.call([Value::from(black_box(&x).clone())]).unwrap()));
    let out = f.call([Value::from(x.clone())]).unwrap();
    assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [2.0, 3.0, 4.0, 5.0]);

    c.bench_function("clone/add_one", |b| b.iter(|| drop(black_box(Value::from(black_box(&x).clone())))));

    let mut p = f.prepare();
    let inputs = Value::Tuple(vec![Value::from(x.clone())]);
    c.bench_function("fnabi/add_one", |b| b.iter(|| p.call_bound(black_box(&inputs)).unwrap()));

    // ---- dict8: one dict of 8 arrays, packed as a list of 8 buffer views ---
    let inner = VmList::from_variants(ks.iter().map(bv).collect());
    let mut raw = nested.vm_call("dict8", &VmList::from_variants(vec![Variant::list(inner)])).unwrap();
    c.bench_function("raw/dict8", |b| b.iter(|| raw.invoke().unwrap()));
    raw.invoke().unwrap();
    let out = raw.results().unwrap();
    assert_eq!(out[0].as_buffer_view().unwrap().array().to_vec::<f32>().unwrap(), [28.0; 4]);

    let f = nested.function("dict8").unwrap();
    let dict = Value::dict(ks.iter().enumerate().map(|(k, a)| (format!("k{k}"), Value::from(a.clone()))));
    c.bench_function("fnabi-call/dict8", |b| b.iter(|| f.call([black_box(&dict).clone()]).unwrap()));
    let out = f.call([dict.clone()]).unwrap();
    assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [28.0; 4]);
    c.bench_function("clone/dict8", |b| b.iter(|| drop(black_box(black_box(&dict).clone()))));

    let mut p = f.prepare();
    let inputs = Value::Tuple(vec![dict]);
    c.bench_function("fnabi/dict8", |b| b.iter(|| p.call_bound(black_box(&inputs)).unwrap()));

    // ---- add_i32: scalars only (no device work) -------------------------------
    let mut raw = add.vm_call("add_i32", &VmList::from_variants(vec![Variant::I32(2), Variant::I32(40)])).unwrap();
    c.bench_function("raw/add_i32", |b| b.iter(|| raw.invoke().unwrap()));
    let f = add.function("add_i32").unwrap();
    let mut p = f.prepare();
    let inputs = Value::Tuple(vec![Value::Int(2), Value::Int(40)]);
    c.bench_function("fnabi/add_i32", |b| b.iter(|| p.call_bound(black_box(&inputs)).unwrap()));
    c.bench_function("fnabi-call/add_i32", |b| b.iter(|| f.call([Value::Int(2), Value::Int(black_box(40))]).unwrap()));
    assert_eq!(f.call([Value::Int(2), Value::Int(40)]).unwrap(), Value::Int(42));

    // ---- dyn_add of two 1 MiB arrays: the copy into device buffers -----------
    let dynamic = load("dynamic");
    let big = Array::from_vec(&[65536, 4], vec![1.5f32; 65536 * 4]).unwrap();
    let mut raw = dynamic.vm_call("dyn_add", &VmList::from_variants(vec![bv(&big), bv(&big)])).unwrap();
    c.bench_function("raw/dyn_add_1MiB", |b| b.iter(|| raw.invoke().unwrap()));
    let f = dynamic.function("dyn_add").unwrap();
    let mut p = f.prepare();
    let inputs = Value::Tuple(vec![Value::from(big.clone()), Value::from(big.clone())]);
    c.bench_function("fnabi/dyn_add_1MiB", |b| b.iter(|| p.call_bound(black_box(&inputs)).unwrap()));
    let out = p.call_bound(&inputs).unwrap();
    assert_eq!(out.as_array().unwrap().get::<f32>(&[65535, 3]).unwrap(), 3.0);
}

/// The calls one function's paired rounds time, each run `k` times a batch.
struct Contenders<'r> {
    name: &'static str,
    k: usize,
    raw: Box<dyn FnMut() + 'r>,
    prepared: Box<dyn FnMut() + 'r>,
    call: Box<dyn FnMut() + 'r>,
    clone: Box<dyn FnMut() + 'r>,
}

/// Seconds per call of `k` calls of `f`.
fn per_call(k: usize, f: &mut dyn FnMut()) -> f64 {
    let t = std::time::Instant::now();
    for _ in 0..k {
        f();
    }
    t.elapsed().as_secs_f64() / k as f64
}

/// The median of `v` and its range.
fn spread(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// What fnabi adds to the raw invoke, in alternated rounds (see the module docs).
fn paired() {
    let add = load("add");
    let nested = load("nested");
    let x = Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let ks: Vec<Array<'static>> = (0..8).map(|k| Array::from_vec(&[4], vec![k as f32; 4]).unwrap()).collect();
    let dict = Value::dict(ks.iter().enumerate().map(|(k, a)| (format!("k{k}"), Value::from(a.clone()))));
    let (one, d8, i32s) =
        (add.function("add_one").unwrap(), nested.function("dict8").unwrap(), add.function("add_i32").unwrap());
    let (mut p1, mut p8, mut pi) = (one.prepare(), d8.prepare(), i32s.prepare());
    let in1 = Value::Tuple(vec![Value::from(x.clone())]);
    let in8 = Value::Tuple(vec![dict.clone()]);
    let ini = Value::Tuple(vec![Value::Int(2), Value::Int(40)]);
    let mut r1 = add.vm_call("add_one", &VmList::from_variants(vec![bv(&x)])).unwrap();
    let inner = VmList::from_variants(ks.iter().map(bv).collect());
    let mut r8 = nested.vm_call("dict8", &VmList::from_variants(vec![Variant::list(inner)])).unwrap();
    let mut ri = add.vm_call("add_i32", &VmList::from_variants(vec![Variant::I32(2), Variant::I32(40)])).unwrap();
    let mut all = [
        Contenders {
            name: "add_one",
            k: 2000,
            raw: Box::new(|| r1.invoke().unwrap()),
            prepared: Box::new(|| drop(black_box(p1.call_bound(black_box(&in1)).unwrap()))),
            call: Box::new(|| drop(black_box(one.call([Value::from(black_box(&x).clone())]).unwrap()))),
            clone: Box::new(|| drop(black_box(Value::from(black_box(&x).clone())))),
        },
        Contenders {
            name: "dict8",
            k: 1000,
            raw: Box::new(|| r8.invoke().unwrap()),
            prepared: Box::new(|| drop(black_box(p8.call_bound(black_box(&in8)).unwrap()))),
            call: Box::new(|| drop(black_box(d8.call([black_box(&dict).clone()]).unwrap()))),
            clone: Box::new(|| drop(black_box(black_box(&dict).clone()))),
        },
        Contenders {
            name: "add_i32",
            k: 20000,
            raw: Box::new(|| ri.invoke().unwrap()),
            prepared: Box::new(|| drop(black_box(pi.call_bound(black_box(&ini)).unwrap()))),
            call: Box::new(|| drop(black_box(i32s.call([Value::Int(2), Value::Int(black_box(40))]).unwrap()))),
            clone: Box::new(|| {}),
        },
    ];
    println!("\nwhat fnabi adds to the raw invoke, µs per call (median of 31 alternated rounds [min, max]):");
    let mut rows = Vec::new();
    for c in &mut all {
        let (mut raw, mut prepared, mut call, mut own) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for round in 0..32 {
            let r = per_call(c.k, &mut c.raw);
            let p = per_call(c.k, &mut c.prepared);
            let f = per_call(c.k, &mut c.call);
            let cl = per_call(c.k, &mut c.clone);
            if round > 0 {
                // The first round warms everything up.
                raw.push(r * 1e6);
                prepared.push((p - r) * 1e6);
                call.push((f - r) * 1e6);
                own.push((f - cl - r) * 1e6);
            }
        }
        let raw = spread(&mut raw);
        println!("  {:<8} raw {:.3} µs", c.name, raw.0);
        for (what, v) in [
            ("prepared", &mut prepared),
            ("Function::call", &mut call),
            ("Function::call less the loop's clone", &mut own),
        ] {
            let (m, lo, hi) = spread(v);
            println!("  {:<8} {what:<37} +{m:.3} [{lo:+.3}, {hi:+.3}]", c.name);
            rows.push(format!(r#"{{"function":"{}","what":"{what}","raw_us":{:.4},"added_us":{m:.4},"min_us":{lo:.4},"max_us":{hi:.4}}}"#, c.name, raw.0));
        }
    }
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    println!(r#"{{"cpu":"{cpu}","rounds":31,"rows":[{}]}}"#, rows.join(","));
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
    // `cargo test --all-targets` runs benches once as tests: no rounds then.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with('-') && (*i == 0 || !args[i - 1].starts_with("--") || args[i - 1] == "--bench"));
    if args.iter().any(|a| a == "--bench") && filter.is_none_or(|(_, f)| f.contains("paired")) {
        paired();
    }
}
