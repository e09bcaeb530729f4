//! Flatten/unflatten of host values and of serde types by a compiled plan.
//!
//! Cases: `small` = `{"a": [x1, x2], "b": {"c": x3, "d": (x4, x5)}}`;
//! `wide1000` = a dict of 100 keys, each a list of 10 leaves (1000 leaves);
//! `deep50` = 50 nested lists `[x, [x, [x, ...]]]` (51 leaves). Leaves are
//! small f32 arrays over shared buffers. Plans are compiled once, outside
//! the measurement (as a prepared call does).

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use fnabi::StructureExt;
use fnabi::structure::{PathKey, StructureBuilder};
use fnabi::{Array, Plan, Value, nest};
use std::collections::BTreeMap;
use std::hint::black_box;

fn x(i: usize) -> Array<'static> {
    Array::from_vec(&[4], vec![i as f32; 4]).unwrap()
}

fn plan_of(pairs: &[(usize, Vec<PathKey>)]) -> Plan {
    let mut b = StructureBuilder::new();
    for (raw, path) in pairs {
        b.insert(*raw, path).unwrap();
    }
    b.finish().unwrap().plan().unwrap()
}

fn key(s: &str) -> PathKey {
    PathKey::Name(s.into())
}

fn small() -> (Plan, Value<'static>) {
    use PathKey::Index as I;
    let plan = plan_of(&[
        (0, vec![key("a"), I(0)]),
        (1, vec![key("a"), I(1)]),
        (2, vec![key("b"), key("c")]),
        (3, vec![key("b"), key("d"), I(0)]),
        (4, vec![key("b"), key("d"), I(1)]),
    ]);
    let v = Value::dict([
        ("a", Value::List(vec![Value::array(x(1)), Value::array(x(2))])),
        (
            "b",
            Value::dict([("c", Value::array(x(3))), ("d", Value::Tuple(vec![Value::array(x(4)), Value::array(x(5))]))]),
        ),
    ]);
    (plan, v)
}

fn wide_keys() -> Vec<String> {
    (0..100).map(|i| format!("k{i:03}")).collect()
}

fn wide() -> (Plan, Value<'static>) {
    let keys = wide_keys();
    let mut pairs = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        for j in 0..10 {
            pairs.push((i * 10 + j, vec![key(k), PathKey::Index(j)]));
        }
    }
    let v = Value::dict(
        keys.iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), Value::List((0..10).map(|j| Value::array(x(i * 10 + j))).collect()))),
    );
    (plan_of(&pairs), v)
}

fn deep() -> (Plan, Value<'static>) {
    let mut pairs = Vec::new();
    let mut path = Vec::new();
    for d in 0..50 {
        let mut p = path.clone();
        p.push(PathKey::Index(0));
        pairs.push((d, p));
        path.push(PathKey::Index(1));
    }
    pairs.push((50, path));
    let mut v = Value::array(x(50));
    for d in (0..50).rev() {
        v = Value::List(vec![Value::array(x(d)), v]);
    }
    (plan_of(&pairs), v)
}

fn bench(c: &mut Criterion) {
    for (name, (plan, value)) in [("small", small()), ("wide1000", wide()), ("deep50", deep())] {
        let n = plan.leaf_count() as u64;
        let leaves: Vec<Value<'static>> = plan.flatten(&value).unwrap().into_iter().cloned().collect();
        let rebuilt = plan.unflatten(leaves.clone()).unwrap();
        assert_eq!(plan.flatten(&rebuilt).unwrap(), leaves.iter().collect::<Vec<_>>());
        let mut g = c.benchmark_group("flatten");
        g.throughput(Throughput::Elements(n));
        g.bench_function(name, |b| b.iter(|| plan.flatten(black_box(&value)).unwrap()));
        g.finish();
        let mut g = c.benchmark_group("unflatten");
        g.throughput(Throughput::Elements(n));
        g.bench_function(name, |b| {
            b.iter_batched(|| leaves.clone(), |l| plan.unflatten(black_box(l)).unwrap(), BatchSize::PerIteration)
        });
        g.finish();
    }

    // serde: the same wide case as a Rust type.
    let (plan, _) = wide();
    let typed: BTreeMap<String, Vec<Array<'static>>> =
        wide_keys().into_iter().enumerate().map(|(i, k)| (k, (0..10).map(|j| x(i * 10 + j)).collect())).collect();
    let leaves = nest::flatten(&plan, &typed).unwrap();
    let back: BTreeMap<String, Vec<Array<'static>>> = nest::unflatten(&plan, leaves.clone()).unwrap();
    assert_eq!(back, typed);
    let mut g = c.benchmark_group("serde_flatten");
    g.throughput(Throughput::Elements(1000));
    g.bench_function("wide1000", |b| b.iter(|| nest::flatten(&plan, black_box(&typed)).unwrap()));
    g.finish();
    let mut g = c.benchmark_group("serde_unflatten");
    g.throughput(Throughput::Elements(1000));
    g.bench_function("wide1000", |b| {
        b.iter_batched(
            || leaves.clone(),
            |l| nest::unflatten::<BTreeMap<String, Vec<Array<'static>>>>(&plan, black_box(l)).unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
