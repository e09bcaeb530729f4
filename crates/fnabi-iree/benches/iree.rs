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
//! `cargo bench -p fnabi-iree --bench iree -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
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

criterion_group!(benches, bench);
criterion_main!(benches);
