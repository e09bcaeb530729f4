//! `iree.abi` hot paths (`cargo bench -p fnabi --bench reflection`):
//! parsing reflection records (against serde_json reading the same text
//! into its dynamic `Value`, for scale), parsing a declaration and a
//! `.vmfb`, and packing/unpacking the nested values of `nested_deep` and
//! `dict8` from the fixture module.

use criterion::{Criterion, criterion_group, criterion_main};
use fnabi::conventions::FunctionAbi;
use fnabi::reflection::{Declaration, FunctionReflection};
use fnabi::vm::{BufferView, Variant, VmList};
use fnabi::vmfb::Module;
use fnabi::{Array, Value};
use std::hint::black_box;

const NESTED_DEEP: &str = r#"{"a": [["sdict", ["a", ["slist", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]], ["b", ["sdict", ["c", ["ndarray", "f32", 1, 4]]]]], ["named", "alpha", "f32"]], "r": [["ndarray", "f32", 1, 4], ["sdict", ["s", ["ndarray", "f32", 1, 4]], ["t", ["stuple", ["ndarray", "f32", 1, 4], ["ndarray", "f32", 1, 4]]]]], "v": 1}"#;
const DICT8: &str = r#"{"a": [["sdict", ["k0", ["ndarray", "f32", 1, 4]], ["k1", ["ndarray", "f32", 1, 4]], ["k2", ["ndarray", "f32", 1, 4]], ["k3", ["ndarray", "f32", 1, 4]], ["k4", ["ndarray", "f32", 1, 4]], ["k5", ["ndarray", "f32", 1, 4]], ["k6", ["ndarray", "f32", 1, 4]], ["k7", ["ndarray", "f32", 1, 4]]]], "r": [["ndarray", "f32", 1, 4]], "v": 1}"#;
const DECL: &str = "sync func @nested_deep(%input0: !util.list<?>, %input1: f32) -> (%output0: tensor<4xf32>, %output1: !util.list<?>)";

fn f32s(data: [f32; 4]) -> Value<'static> {
    Value::from(Array::from_vec(&[4], data.to_vec()).unwrap())
}

fn bv(data: [f32; 4]) -> Variant<'static> {
    Variant::buffer_view(BufferView::new(Array::from_vec(&[4], data.to_vec()).unwrap()).unwrap())
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse");
    g.bench_function("iree_abi_nested_deep", |b| b.iter(|| FunctionReflection::parse(black_box(NESTED_DEEP)).unwrap()));
    g.bench_function("iree_abi_dict8", |b| b.iter(|| FunctionReflection::parse(black_box(DICT8)).unwrap()));
    g.bench_function("serde_json_value_nested_deep", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(NESTED_DEEP)).unwrap())
    });
    let f = FunctionReflection::parse(NESTED_DEEP).unwrap();
    g.bench_function("to_json_nested_deep", |b| b.iter(|| black_box(&f).to_json()));
    g.bench_function("declaration_nested_deep", |b| b.iter(|| Declaration::parse(black_box(DECL)).unwrap()));
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/iree/nested.vmfb")).unwrap();
    g.bench_function("vmfb_nested_module", |b| b.iter(|| Module::parse(black_box(&bytes)).unwrap()));
    // The same without the ZIP check (sizes and CRC-32 of every entry).
    g.bench_function("vmfb_nested_module_unverified", |b| {
        b.iter(|| Module::parse_unverified(black_box(&bytes)).unwrap())
    });
    g.bench_function("vmfb_nested_zip_verify", |b| b.iter(|| fnabi::vmfb::zip::verify(black_box(&bytes)).unwrap()));
    g.finish();

    let mut g = c.benchmark_group("convention");
    let deep = FunctionAbi::from_reflection(&f);
    let args = deep
        .bind(
            vec![Value::dict([
                ("a", Value::List(vec![f32s([1.0, 2.0, 3.0, 4.0]), f32s([10.0, 20.0, 30.0, 40.0])])),
                ("b", Value::dict([("c", f32s([2.0; 4]))])),
            ])],
            [("alpha", Value::Float(3.0))],
        )
        .unwrap();
    g.bench_function("pack_nested_deep", |b| b.iter(|| deep.pack_args(black_box(&args)).unwrap()));
    let results = || {
        vec![
            bv([15.0, 28.0, 41.0, 54.0]),
            Variant::list(VmList::from_variants(vec![
                bv([11.0, 22.0, 33.0, 44.0]),
                Variant::list(VmList::from_variants(vec![bv([2.0, 4.0, 6.0, 8.0]), bv([20.0, 40.0, 60.0, 80.0])])),
            ])),
        ]
    };
    g.bench_function("unpack_nested_deep", |b| {
        b.iter_batched(results, |r| deep.unpack_results(r).unwrap(), criterion::BatchSize::SmallInput)
    });
    let d8 = FunctionAbi::from_reflection(&FunctionReflection::parse(DICT8).unwrap());
    let d8_args = [Value::dict((0..8).rev().map(|i| (format!("k{i}"), f32s([i as f32; 4]))))];
    g.bench_function("pack_dict8", |b| b.iter(|| d8.pack_args(black_box(&d8_args)).unwrap()));
    let dynamic = FunctionAbi::dynamic();
    g.bench_function("pack_dict8_dynamic", |b| b.iter(|| dynamic.pack_args(black_box(&d8_args)).unwrap()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
