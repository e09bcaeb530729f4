//! Every function of every module in `fnabi/tests/fixtures/iree/`, called
//! in-process on both devices, gives exactly the results that IREE's own
//! runtime gave (the fixture README's table). Inputs and results are
//! compared in fnabi's JSON form, which is exact for these values.

use fnabi::{Dict, Function, Value, json};
use fnabi_iree::{Device, IreeModule};

const DEVICES: [Device; 2] = [Device::LocalSync, Device::LocalTask];

fn path(name: &str) -> String {
    format!("{}/../fnabi/tests/fixtures/iree/{name}.vmfb", env!("CARGO_MANIFEST_DIR"))
}

fn module(name: &str, device: Device) -> IreeModule {
    // SAFETY: the repository's fixture modules, compiled by iree-compile 3.13.
    unsafe { IreeModule::load(path(name), device) }.unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn function(name: &str, device: Device, f: &str) -> Function {
    module(name, device).function(f).unwrap_or_else(|e| panic!("{name}.{f}: {e}"))
}

/// Calls with positional arguments given as a JSON list; the result as JSON.
fn call(f: &Function, args: &str) -> String {
    let Value::List(args) = json::from_str(args).unwrap() else { panic!("arguments must be a JSON list") };
    let out = f.call(args).unwrap_or_else(|e| panic!("{}: {e}", f.name()));
    json::to_string(&out)
}

fn f32s(shape: &str, data: &str) -> String {
    format!(r#"{{"dtype":"f32","shape":{shape},"data":{data}}}"#)
}

const A: &str = "[1.0,2.0,3.0,4.0]";
const B: &str = "[10.0,20.0,30.0,40.0]";

#[test]
fn add_module() {
    for d in DEVICES {
        let (a, b) = (f32s("[4]", A), f32s("[4]", B));
        assert_eq!(
            call(&function("add", d, "add"), &format!("[{a},{b}]")),
            f32s("[4]", "[11.0,22.0,33.0,44.0]"),
            "{d}"
        );
        assert_eq!(call(&function("add", d, "add_one"), &format!("[{a}]")), f32s("[4]", "[2.0,3.0,4.0,5.0]"));
        assert_eq!(call(&function("add", d, "scale"), &format!("[{a},2.5]")), f32s("[4]", "[2.5,5.0,7.5,10.0]"));
        assert_eq!(call(&function("add", d, "add_i32"), "[2,40]"), "42");
        // The compiler's initializer: no arguments, no results.
        assert_eq!(call(&function("add", d, "__init"), "[]"), "null");
    }
}

#[test]
fn multi_result_module() {
    for d in DEVICES {
        let (a, b) = (f32s("[4]", A), f32s("[4]", B));
        assert_eq!(
            call(&function("multi_result", d, "sum_and_product"), &format!("[{a},{b}]")),
            format!(
                r#"{{"$tuple":[{},{},42]}}"#,
                f32s("[4]", "[11.0,22.0,33.0,44.0]"),
                f32s("[4]", "[10.0,40.0,90.0,160.0]")
            )
        );
        let m =
            r#"[{"dtype":"i32","shape":[2,3],"data":[0,1,2,3,4,5]},{"dtype":"f64","shape":[3],"data":[1.5,-2.0,3.0]}]"#;
        assert_eq!(
            call(&function("multi_result", d, "mixed"), m),
            r#"{"$tuple":[{"dtype":"i32","shape":[3,2],"data":[0,3,1,4,2,5]},{"dtype":"f64","shape":[3],"data":[-1.5,2.0,-3.0]}]}"#
        );
    }
}

#[test]
fn dynamic_module() {
    for d in DEVICES {
        let zeros = f32s("[5,4]", &format!("[{}]", ["0.0"; 20].join(",")));
        assert_eq!(call(&function("dynamic", d, "dyn_dim"), &format!("[{zeros}]")), "5");
        let x = f32s("[3,4]", "[0,1,2,3,4,5,6,7,8,9,10,11]");
        assert_eq!(
            call(&function("dynamic", d, "dyn_add"), &format!("[{x},{x}]")),
            f32s("[3,4]", "[0.0,2.0,4.0,6.0,8.0,10.0,12.0,14.0,16.0,18.0,20.0,22.0]")
        );
        // A dynamic dim of 0.
        assert_eq!(call(&function("dynamic", d, "dyn_dim"), &format!("[{}]", f32s("[0,4]", "[]"))), "0");
    }
}

#[test]
fn async_module() {
    for d in DEVICES {
        let f = function("async", d, "add_async");
        let (a, b) = (f32s("[4]", A), f32s("[4]", B));
        // Several calls: each waits on its own signal fence value.
        for _ in 0..3 {
            assert_eq!(call(&f, &format!("[{a},{b}]")), f32s("[4]", "[11.0,22.0,33.0,44.0]"));
        }
        let mut p = f.prepare();
        for k in 0..3 {
            let c = fnabi::Array::from_vec(&[4], vec![k as f32; 4]).unwrap();
            let out = p.call([Value::from(c.clone()), Value::from(c)]).unwrap();
            assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [2.0 * k as f32; 4]);
        }
    }
}

fn xy(shape: &str) -> String {
    format!(r#"{{"y":{},"x":{}}}"#, f32s(shape, B), f32s(shape, A))
}

#[test]
fn nested_structures() {
    for d in DEVICES {
        let sum = f32s("[1,4]", "[[11.0,22.0,33.0,44.0]]").replace("[[", "[").replace("]]", "]");
        let prod = f32s("[1,4]", "[10.0,40.0,90.0,160.0]");
        assert_eq!(sum, f32s("[1,4]", "[11.0,22.0,33.0,44.0]"));
        // A dict packs in the record's key order whatever the caller's order.
        assert_eq!(
            call(&function("nested", d, "dict_in_tuple_out"), &format!("[{}]", xy("[1,4]"))),
            format!(r#"{{"$tuple":[{sum},{prod}]}}"#)
        );
        // One VM list back: the slist record read literally.
        assert_eq!(
            call(&function("nested", d, "dict_in_list_out"), &format!("[{}]", xy("[1,4]"))),
            format!("[{sum},{prod}]")
        );
        // Two VM results for a single slist record: IREE's flat reading.
        assert_eq!(
            call(&function("nested", d, "brief_example"), &format!("[{}]", xy("[4]"))),
            format!("[{},{}]", f32s("[4]", "[11.0,22.0,33.0,44.0]"), f32s("[4]", "[10.0,40.0,90.0,160.0]"))
        );
    }
}

#[test]
fn nested_deep_alpha_by_keyword_and_by_position() {
    let arg = format!(r#"{{"a":[{},{}],"b":{{"c":{}}}}}"#, f32s("[4]", A), f32s("[4]", B), f32s("[4]", "[2,2,2,2]"));
    let expect = format!(
        r#"{{"$tuple":[{},{{"s":{},"t":{{"$tuple":[{},{}]}}}}]}}"#,
        f32s("[4]", "[15.0,28.0,41.0,54.0]"),
        f32s("[4]", "[11.0,22.0,33.0,44.0]"),
        f32s("[4]", "[2.0,4.0,6.0,8.0]"),
        f32s("[4]", "[20.0,40.0,60.0,80.0]")
    );
    for d in DEVICES {
        let f = function("nested", d, "nested_deep");
        assert_eq!(call(&f, &format!("[{arg},3.0]")), expect, "by position");
        let out =
            f.call_kw(vec![json::from_str(&arg).unwrap()], Dict::from_iter([("alpha", Value::Float(3.0))])).unwrap();
        assert_eq!(json::to_string(&out), expect, "by keyword");
        // An int converts to the f32 parameter.
        let out = f.call_kw(vec![json::from_str(&arg).unwrap()], Dict::from_iter([("alpha", Value::Int(3))])).unwrap();
        assert_eq!(json::to_string(&out), expect, "int alpha");
        // Everything by keyword through call_value fails: the first
        // parameter has no name.
        let e = f.call_value(json::from_str(r#"{"alpha":3.0}"#).unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "missing positional argument 0");
    }
}

#[test]
fn dict8_bytes_sum_and_str_len() {
    let dict8 = format!(
        "{{{}}}",
        (0..8)
            .map(|k| format!(r#""k{k}":{}"#, f32s("[4]", &format!("[{k},{k},{k},{k}]"))))
            .collect::<Vec<_>>()
            .join(",")
    );
    for d in DEVICES {
        assert_eq!(call(&function("nested", d, "dict8"), &format!("[{dict8}]")), f32s("[4]", "[28.0,28.0,28.0,28.0]"));
        assert_eq!(call(&function("nested", d, "bytes_sum"), "[[1,2,3,4,-6]]"), r#"{"$tuple":[4,5]}"#);
        // A str travels as list<i8> of its UTF-8 bytes.
        assert_eq!(call(&function("nested", d, "str_len"), r#"["hello"]"#), r#"{"$tuple":[5,104]}"#);
        assert_eq!(call(&function("nested", d, "str_len"), r#"["é"]"#), r#"{"$tuple":[2,195]}"#);
        let bytes = Value::Bytes(vec![7, 200]); // not UTF-8: bytes
        let out = function("nested", d, "str_len").call([bytes]).unwrap();
        assert_eq!(json::to_string(&out), r#"{"$tuple":[2,7]}"#);
    }
}

#[test]
fn exports_and_reflection() {
    let m = module("nested", Device::LocalSync);
    assert_eq!(m.name(), "module");
    assert_eq!(m.device(), Device::LocalSync);
    let names: Vec<&str> = m.exports().iter().map(|e| e.name()).collect();
    assert_eq!(
        names,
        [
            "dict_in_list_out",
            "dict_in_tuple_out",
            "brief_example",
            "nested_deep",
            "dict8",
            "bytes_sum",
            "str_len",
            "__init"
        ]
    );
    let deep = m.export("nested_deep").unwrap();
    assert_eq!(deep.calling_convention().to_string(), "0rf_rr");
    assert_eq!(deep.attr("custom.key"), Some("custom value"));
    assert_eq!(deep.attrs().len(), 3);
    assert_eq!(deep.abi().unwrap().mode(), fnabi::conventions::AbiMode::Reflection);
    assert_eq!(m.export("str_len").unwrap().abi().unwrap().mode(), fnabi::conventions::AbiMode::Declaration);
    let f = m.function("str_len").unwrap();
    assert_eq!(f.name(), "str_len");
    assert_eq!(f.describe(), "sync func @str_len(%input0: !util.list<i8>) -> (%output0: index, %output1: i32)");
    assert_eq!(m.function("__init").unwrap().describe(), "func @__init (cconv 0v_v)");
    let asy = module("async", Device::LocalSync);
    let e = asy.export("add_async").unwrap();
    assert_eq!(e.calling_convention().to_string(), "0rrrr_r");
    assert_eq!(e.attr("iree.abi.model"), Some("coarse-fences"));
    assert_eq!(format!("{m:?}"), r#"IreeModule("module" on local-sync, 8 exports)"#);
}

#[test]
fn modules_load_from_bytes_and_buffers() {
    let bytes = std::fs::read(path("add")).unwrap();
    // SAFETY: the fixture module.
    let m = unsafe { IreeModule::from_bytes(&bytes, Device::LocalSync) }.unwrap();
    drop(bytes); // the module keeps its own copy
    assert_eq!(call(&m.function("add_i32").unwrap(), "[-2,-40]"), "-42");
    let shared = fnabi::memory::ByteBuffer::read_file(path("add")).unwrap();
    // SAFETY: the fixture module.
    let m2 = unsafe { IreeModule::from_buffer(shared, Device::LocalTask) }.unwrap();
    assert_eq!(m2.device(), Device::LocalTask);
    // A module outlives the handle it came from through its functions.
    let f = m2.function("add_one").unwrap();
    drop(m2);
    assert_eq!(call(&f, &format!("[{}]", f32s("[4]", A))), f32s("[4]", "[2.0,3.0,4.0,5.0]"));
}

#[test]
fn prepared_calls_and_call_bound() {
    let f = function("nested", Device::LocalSync, "dict8");
    let mut p = f.prepare();
    for round in 0..3 {
        let d = Value::dict((0..8).map(|k| {
            (format!("k{k}"), Value::from(fnabi::Array::from_vec(&[4], vec![(k + round) as f32; 4]).unwrap()))
        }));
        let expect = (0..8).map(|k| (k + round) as f32).sum::<f32>();
        // The dict is the one (unnamed) parameter.
        let out = p.call_bound(&d).unwrap();
        assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [expect; 4]);
        let out = p.call_bound(&Value::Tuple(vec![d.clone()])).unwrap();
        assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [expect; 4]);
        let out = p.call([d]).unwrap();
        assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [expect; 4]);
    }
    // A dict given to call_bound of a function with a named parameter binds
    // by keyword.
    let deep = function("nested", Device::LocalSync, "nested_deep");
    let arg = json::from_str(&format!(
        r#"{{"a":[{},{}],"b":{{"c":{}}}}}"#,
        f32s("[4]", A),
        f32s("[4]", B),
        f32s("[4]", "[2,2,2,2]")
    ))
    .unwrap();
    let e = deep.prepare().call_bound(&Value::dict([("alpha", Value::Float(1.0))])).unwrap_err();
    assert_eq!(e.to_string(), "missing positional argument 0");
    let out = deep.prepare().call_bound(&Value::Tuple(vec![arg, Value::Float(1.0)])).unwrap();
    let Value::Tuple(t) = out else { panic!() };
    assert_eq!(t[0].as_array().unwrap().to_vec::<f32>().unwrap(), [13.0, 24.0, 35.0, 46.0]);
}

#[test]
fn call_serde() {
    #[derive(serde::Serialize)]
    struct Xy {
        x: fnabi::Array<'static>,
        y: fnabi::Array<'static>,
    }
    let f = function("nested", Device::LocalSync, "dict_in_tuple_out");
    let x = fnabi::Array::from_vec(&[1, 4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let y = fnabi::Array::from_vec(&[1, 4], vec![10.0f32, 20.0, 30.0, 40.0]).unwrap();
    let (s, p): (Vec<Vec<f32>>, Vec<Vec<f32>>) = f.call_serde(&Xy { x, y }).unwrap();
    assert_eq!(s, [[11.0, 22.0, 33.0, 44.0]]);
    assert_eq!(p, [[10.0, 40.0, 90.0, 160.0]]);
}

#[test]
fn results_share_the_runtime_buffer_and_survive_later_calls() {
    let f = function("add", Device::LocalSync, "add_one");
    let mut p = f.prepare();
    let x = fnabi::Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let first = p.call([Value::from(x)]).unwrap();
    let mut kept = first.as_array().unwrap().clone();
    // Results are read-only views of the runtime's memory.
    assert!(kept.as_mut_ptr().is_err());
    for k in 0..5 {
        let y = fnabi::Array::from_vec(&[4], vec![k as f32; 4]).unwrap();
        let out = p.call([Value::from(y)]).unwrap();
        assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [k as f32 + 1.0; 4]);
    }
    assert_eq!(kept.to_vec::<f32>().unwrap(), [2.0, 3.0, 4.0, 5.0]);
    // Strided arguments are made dense first.
    let m = fnabi::Array::from_vec(&[4, 2], (0..8).map(|v| v as f32).collect::<Vec<_>>()).unwrap();
    let column = m.restrided(&[4], &[2], 4).unwrap();
    assert!(!column.is_c_contiguous());
    let out = p.call([Value::from(column)]).unwrap();
    assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [2.0, 4.0, 6.0, 8.0]);
}

#[test]
fn threads_share_a_function() {
    for d in DEVICES {
        let f = function("add", d, "add_i32");
        let g = function("add", d, "add_one");
        std::thread::scope(|s| {
            for t in 0..4 {
                let (f, g) = (f.clone(), g.clone());
                s.spawn(move || {
                    let mut p = f.prepare();
                    let mut q = g.prepare();
                    for i in 0..100 {
                        let out = p.call([Value::Int(t), Value::Int(i)]).unwrap();
                        assert_eq!(out, Value::Int(t + i));
                        assert_eq!(f.call([Value::Int(i), Value::Int(t)]).unwrap(), Value::Int(t + i));
                        let x = fnabi::Array::from_vec(&[4], vec![(t * 1000 + i) as f32; 4]).unwrap();
                        let y = q.call([Value::from(x.clone())]).unwrap();
                        let z = g.call([Value::from(x)]).unwrap();
                        let want = [(t * 1000 + i) as f32 + 1.0; 4];
                        assert_eq!(y.as_array().unwrap().to_vec::<f32>().unwrap(), want);
                        assert_eq!(z.as_array().unwrap().to_vec::<f32>().unwrap(), want);
                    }
                });
            }
        });
    }
}

#[test]
fn results_outlive_their_function_module_and_device() {
    let (out, state) = {
        let m = module("add", Device::LocalSync);
        let f = m.function("add_one").unwrap();
        let x = fnabi::Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let out = f.call([Value::from(x.clone())]).unwrap();
        // A prepared state with staged buffers, dropped with its function.
        let mut p = f.prepare();
        p.call([Value::from(x)]).unwrap();
        drop(p);
        let call = m
            .vm_call(
                "add_one",
                &fnabi::vm::VmList::from_variants(vec![fnabi::vm::Variant::buffer_view(
                    fnabi::vm::BufferView::new(fnabi::Array::from_vec(&[4], vec![0.0f32; 4]).unwrap()).unwrap(),
                )]),
            )
            .unwrap();
        (out, call)
    };
    // The module handle and the function are gone; the result array and the
    // prebuilt call keep what they need (the device included).
    assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [2.0, 3.0, 4.0, 5.0]);
    let mut state = state;
    state.invoke().unwrap();
    let r = state.results().unwrap();
    drop(state);
    assert_eq!(r[0].as_buffer_view().unwrap().array().to_vec::<f32>().unwrap(), [1.0; 4]);
    drop(r);
    drop(out);
}
