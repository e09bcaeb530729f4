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
use fnabi::{Array, Function, Value};
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

/// The modules and arguments of the rows.
struct Fixtures {
    add: IreeModule,
    nested: IreeModule,
    x: Array<'static>,
    ks: Vec<Array<'static>>,
    /// `dict8`'s argument: `ks` under keys `k0`…`k7`.
    dict: Value<'static>,
}

impl Fixtures {
    fn new() -> Self {
        let ks: Vec<Array<'static>> = (0..8).map(|k| Array::from_vec(&[4], vec![k as f32; 4]).unwrap()).collect();
        let dict = Value::dict(ks.iter().enumerate().map(|(k, a)| (format!("k{k}"), Value::from(a.clone()))));
        Fixtures {
            add: load("add"),
            nested: load("nested"),
            x: Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap(),
            ks,
            dict,
        }
    }
}

/// The functions the rows call, apart from the fixtures: their prepared
/// calls borrow them.
struct Functions {
    add_one: Function,
    dict8: Function,
    add_i32: Function,
}

/// One function's timed calls: the criterion rows `raw/NAME`,
/// `fnabi/NAME`, `fnabi-call/NAME` and `clone/NAME` time these, and so do
/// the paired rounds, `k` calls a batch.
struct Contenders<'r> {
    name: &'static str,
    k: usize,
    raw: Box<dyn FnMut() + 'r>,
    prepared: Box<dyn FnMut() + 'r>,
    call: Box<dyn FnMut() + 'r>,
    /// The `fnabi-call` loop's own argument clone (none for scalars).
    clone: Option<Box<dyn FnMut() + 'r>>,
}

fn contenders<'r>(fx: &'r Fixtures, fs: &'r Functions) -> [Contenders<'r>; 3] {
    let (x, dict) = (&fx.x, &fx.dict);
    let mut raw1 = fx.add.vm_call("add_one", &VmList::from_variants(vec![bv(x)])).unwrap();
    let mut p1 = fs.add_one.prepare();
    let in1 = Value::Tuple(vec![Value::from(x.clone())]);
    let inner = VmList::from_variants(fx.ks.iter().map(bv).collect());
    let mut raw8 = fx.nested.vm_call("dict8", &VmList::from_variants(vec![Variant::list(inner)])).unwrap();
    let mut p8 = fs.dict8.prepare();
    let in8 = Value::Tuple(vec![dict.clone()]);
    let mut rawi = fx.add.vm_call("add_i32", &VmList::from_variants(vec![Variant::I32(2), Variant::I32(40)])).unwrap();
    let mut pi = fs.add_i32.prepare();
    let ini = Value::Tuple(vec![Value::Int(2), Value::Int(40)]);
    [
        Contenders {
            name: "add_one",
            k: 2000,
            raw: Box::new(move || raw1.invoke().unwrap()),
            prepared: Box::new(move || drop(black_box(p1.call_bound(black_box(&in1)).unwrap()))),
            call: Box::new(move || drop(black_box(fs.add_one.call([Value::from(black_box(x).clone())]).unwrap()))),
            clone: Some(Box::new(move || drop(black_box(Value::from(black_box(x).clone()))))),
        },
        Contenders {
            name: "dict8",
            k: 1000,
            raw: Box::new(move || raw8.invoke().unwrap()),
            prepared: Box::new(move || drop(black_box(p8.call_bound(black_box(&in8)).unwrap()))),
            call: Box::new(move || drop(black_box(fs.dict8.call([black_box(dict).clone()]).unwrap()))),
            clone: Some(Box::new(move || drop(black_box(black_box(dict).clone())))),
        },
        Contenders {
            name: "add_i32",
            k: 20000,
            raw: Box::new(move || rawi.invoke().unwrap()),
            prepared: Box::new(move || drop(black_box(pi.call_bound(black_box(&ini)).unwrap()))),
            call: Box::new(move || {
                drop(black_box(fs.add_i32.call([Value::Int(2), Value::Int(black_box(40))]).unwrap()))
            }),
            clone: None,
        },
    ]
}

fn bench(c: &mut Criterion, fx: &Fixtures, fs: &Functions) {
    // What the timed calls compute.
    let mut raw = fx.add.vm_call("add_one", &VmList::from_variants(vec![bv(&fx.x)])).unwrap();
    raw.invoke().unwrap();
    let out = raw.results().unwrap();
    assert_eq!(out[0].as_buffer_view().unwrap().array().to_vec::<f32>().unwrap(), [2.0, 3.0, 4.0, 5.0]);
    let out = fs.add_one.call([Value::from(fx.x.clone())]).unwrap();
    assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [2.0, 3.0, 4.0, 5.0]);
    let inner = VmList::from_variants(fx.ks.iter().map(bv).collect());
    let mut raw = fx.nested.vm_call("dict8", &VmList::from_variants(vec![Variant::list(inner)])).unwrap();
    raw.invoke().unwrap();
    let out = raw.results().unwrap();
    assert_eq!(out[0].as_buffer_view().unwrap().array().to_vec::<f32>().unwrap(), [28.0; 4]);
    let out = fs.dict8.call([fx.dict.clone()]).unwrap();
    assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [28.0; 4]);
    assert_eq!(fs.add_i32.call([Value::Int(2), Value::Int(40)]).unwrap(), Value::Int(42));

    for mut t in contenders(fx, fs) {
        c.bench_function(&format!("raw/{}", t.name), |b| b.iter(&mut t.raw));
        c.bench_function(&format!("fnabi-call/{}", t.name), |b| b.iter(&mut t.call));
        if let Some(clone) = &mut t.clone {
            c.bench_function(&format!("clone/{}", t.name), |b| b.iter(&mut *clone));
        }
        c.bench_function(&format!("fnabi/{}", t.name), |b| b.iter(&mut t.prepared));
    }

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
fn paired(fx: &Fixtures, fs: &Functions) {
    println!("\nwhat fnabi adds to the raw invoke, µs per call (median of 31 alternated rounds [min, max]):");
    let mut rows = Vec::new();
    for mut c in contenders(fx, fs) {
        let (mut raw, mut prepared, mut call, mut own) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for round in 0..32 {
            let r = per_call(c.k, &mut c.raw);
            let p = per_call(c.k, &mut c.prepared);
            let f = per_call(c.k, &mut c.call);
            let cl = c.clone.as_mut().map_or(0.0, |clone| per_call(c.k, clone));
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
    let fx = Fixtures::new();
    let fs = Functions {
        add_one: fx.add.function("add_one").unwrap(),
        dict8: fx.nested.function("dict8").unwrap(),
        add_i32: fx.add.function("add_i32").unwrap(),
    };
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &fx, &fs);
    c.final_summary();
    // `cargo test --all-targets` runs benches once as tests: no rounds then.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with('-') && (*i == 0 || !args[i - 1].starts_with("--") || args[i - 1] == "--bench"));
    if args.iter().any(|a| a == "--bench") && filter.is_none_or(|(_, f)| f.contains("paired")) {
        paired(&fx, &fs);
    }
}
