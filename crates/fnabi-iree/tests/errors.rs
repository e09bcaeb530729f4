//! Bad calls: wrong dtype, rank, static dim, arity, keyword, function or
//! module are fnabi errors raised before the runtime is entered (the
//! runtime itself would say only FAILED_PRECONDITION); failures inside the
//! runtime carry IREE's own message and status code.

use fnabi::conventions::FunctionAbi;
use fnabi::vm::{BufferView, OpaqueRef, Variant, VmList, VmRef};
use fnabi::{Array, CallError, CallErrorKind, CallSide, DType, Dict, Error, ErrorKind, PathKey, Value};
use fnabi_iree::{Device, IreeError, IreeModule, StatusCode};

fn path(name: &str) -> String {
    format!("{}/../fnabi/tests/fixtures/iree/{name}.vmfb", env!("CARGO_MANIFEST_DIR"))
}

fn module(name: &str) -> IreeModule {
    // SAFETY: the repository's fixture modules.
    unsafe { IreeModule::load(path(name), Device::LocalSync) }.unwrap()
}

fn f32s(shape: &[usize], v: &[f32]) -> Value<'static> {
    Value::from(Array::from_vec(shape, v.to_vec()).unwrap())
}

fn four() -> Value<'static> {
    f32s(&[4], &[1.0, 2.0, 3.0, 4.0])
}

/// The message of a fnabi (not runtime) error.
fn checked(r: Result<Value<'static>, Error>) -> String {
    match r {
        Ok(v) => panic!("expected an error, got {}", fnabi::json::to_string(&v)),
        Err(e) if e.backend_error::<IreeError>().is_some() => panic!("the runtime was entered: {e}"),
        Err(e) => e.to_string(),
    }
}

/// The IREE error of a runtime failure.
fn runtime(r: Result<Value<'static>, Error>) -> IreeError {
    match r {
        Err(e) => {
            e.backend_error::<IreeError>().unwrap_or_else(|| panic!("expected a runtime error, got: {e}")).clone()
        }
        Ok(v) => panic!("expected an error, got {}", fnabi::json::to_string(&v)),
    }
}

#[test]
fn wrong_dtype_rank_and_static_dim() {
    let add = module("add").function("add").unwrap();
    let i = Value::from(Array::from_vec(&[4], vec![1i32, 2, 3, 4]).unwrap());
    assert_eq!(checked(add.call([i, four()])), "argument [0] (f32[4]): element type: expected f32, got i32");
    assert_eq!(checked(add.call([four(), f32s(&[2, 2], &[0.0; 4])])), "argument [1] (f32[4]): rank: expected 1, got 2");
    assert_eq!(checked(add.call([four(), f32s(&[5], &[0.0; 5])])), "argument [1] (f32[4]): dim 0: expected 4, got 5");
    assert_eq!(checked(add.call([four(), Value::Int(3)])), "argument [1]: expected f32[4], got int 3");
    let dynamic = module("dynamic").function("dyn_add").unwrap();
    assert_eq!(
        checked(dynamic.call([f32s(&[2, 3], &[0.0; 6]), f32s(&[2, 4], &[0.0; 8])])),
        "argument [0] (f32[?x4]): dim 1: expected 4, got 3"
    );
    // Nested: the path inside the argument is named.
    let f = module("nested").function("dict_in_tuple_out").unwrap();
    let bad = Value::dict([("x", f32s(&[1, 4], &[0.0; 4])), ("y", f32s(&[4], &[0.0; 4]))]);
    assert_eq!(checked(f.call([bad])), r#"argument [0]["y"] (f32[1x4]): rank: expected 2, got 1"#);
}

/// The call error of a fnabi (not runtime) error: its side, index path and kind.
fn call_error(r: Result<Value<'static>, Error>) -> (CallSide, Vec<PathKey>, CallErrorKind) {
    match r.map_err(Error::into_kind) {
        Err(ErrorKind::Call(CallError { side, path, kind, .. })) => (side, path.0, kind),
        Err(other) => panic!("not a call error: {other}"),
        Ok(v) => panic!("expected an error, got {}", fnabi::json::to_string(&v)),
    }
}

#[test]
fn errors_are_typed_at_their_index_path() {
    use CallErrorKind as K;
    let arg = |i: usize| vec![PathKey::Index(i)];
    let add = module("add").function("add").unwrap();
    let i = Value::from(Array::from_vec(&[4], vec![1i32, 2, 3, 4]).unwrap());
    assert_eq!(
        call_error(add.call([i, four()])),
        (CallSide::Argument, arg(0), K::Dtype { expected: DType::F32, got: DType::I32 })
    );
    assert_eq!(
        call_error(add.call([four(), f32s(&[2, 2], &[0.0; 4])])),
        (CallSide::Argument, arg(1), K::Rank { expected: 1, got: 2 })
    );
    assert_eq!(
        call_error(add.call([four(), f32s(&[5], &[0.0; 5])])),
        (CallSide::Argument, arg(1), K::Dim { axis: 0, expected: 4, got: 5 })
    );
    // Arity: binding, and the calling convention of a function without reflection.
    assert_eq!(
        call_error(add.call([four()])),
        (CallSide::Argument, arg(1), K::MissingArgument { index: 1, name: None })
    );
    assert_eq!(call_error(add.call([four(), four(), four()])).2, K::TooManyPositional { max: 2, got: 3 });
    let init = module("add").function("__init").unwrap();
    assert_eq!(
        call_error(init.call([Value::Int(1)])),
        (CallSide::Argument, vec![], K::Arity { expected: 0, at_least: false, got: 1 })
    );
    // Nested: a dim inside a dict, and a missing key of the dict.
    let n = module("nested");
    let f = n.function("dict_in_tuple_out").unwrap();
    let bad = Value::dict([("x", f32s(&[1, 4], &[0.0; 4])), ("y", f32s(&[4], &[0.0; 4]))]);
    assert_eq!(
        call_error(f.call([bad])),
        (CallSide::Argument, vec![PathKey::Index(0), PathKey::Name("y".into())], K::Rank { expected: 2, got: 1 })
    );
    let dict8 = n.function("dict8").unwrap();
    let seven = Value::dict((0..7).map(|k| (format!("k{k}"), four())));
    assert_eq!(call_error(dict8.call([seven])), (CallSide::Argument, arg(0), K::MissingKey("k7".into())));
    // A missing keyword argument is at its keyword.
    let deep = n.function("nested_deep").unwrap();
    let a = Value::dict([("a", Value::List(vec![four(), four()])), ("b", Value::dict([("c", four())]))]);
    assert_eq!(
        call_error(deep.call([a])),
        (
            CallSide::Argument,
            vec![PathKey::Name("alpha".into())],
            K::MissingArgument { index: 1, name: Some("alpha".into()) }
        )
    );
}

#[test]
fn wrong_scalars_strings_and_dicts() {
    let m = module("add");
    let add_i32 = m.function("add_i32").unwrap();
    assert_eq!(
        checked(add_i32.call([Value::Int(1 << 40), Value::Int(1)])),
        "argument [0]: 1099511627776 is out of range for i32 in -2147483648..=2147483647"
    );
    assert_eq!(checked(add_i32.call([Value::Float(1.5), Value::Int(1)])), "argument [0]: expected i32, got float 1.5");
    let n = module("nested");
    let str_len = n.function("str_len").unwrap();
    let e = checked(str_len.call([Value::Int(3)]));
    assert!(e.starts_with("argument [0]: expected ") && e.ends_with(", got int 3"), "int for a string: {e}");
    let dict8 = n.function("dict8").unwrap();
    let seven = Value::dict((0..7).map(|k| (format!("k{k}"), four())));
    assert!(checked(dict8.call([seven])).ends_with(r#"): missing key "k7""#), "a missing key");
    let bytes_sum = n.function("bytes_sum").unwrap();
    assert_eq!(
        checked(bytes_sum.call([Value::List(vec![Value::Int(300); 5])])),
        "argument [0][0]: 300 is out of range for i8 in -128..=127"
    );
}

#[test]
fn wrong_arity_and_keywords() {
    let m = module("add");
    let add = m.function("add").unwrap();
    assert_eq!(checked(add.call([four()])), "missing positional argument 1");
    assert_eq!(checked(add.call([four(), four(), four()])), "takes 2 positional arguments but 3 were given");
    assert_eq!(
        checked(add.call_kw(vec![four()], Dict::from_iter([("b", four())]))),
        "unexpected keyword argument \"b\" (the parameters have no names: pass the arguments by position)"
    );
    let deep = module("nested").function("nested_deep").unwrap();
    let arg = Value::dict([("a", Value::List(vec![four(), four()])), ("b", Value::dict([("c", four())]))]);
    assert_eq!(
        checked(deep.call_kw(vec![arg.clone()], Dict::from_iter([("beta", Value::Float(1.0))]))),
        "unexpected keyword argument \"beta\""
    );
    assert_eq!(
        checked(deep.call_kw(vec![arg.clone(), Value::Float(1.0)], Dict::from_iter([("alpha", Value::Float(1.0))]))),
        "got multiple values for argument \"alpha\""
    );
    assert_eq!(checked(deep.call([arg])), "missing argument \"alpha\" (argument 1)");
    let init = m.function("__init").unwrap();
    // No reflection at all: the calling convention still counts.
    assert_eq!(checked(init.call([Value::Int(1)])), "wrong number of arguments: expected 0, got 1");
}

#[test]
fn unknown_function_module_and_device() {
    let m = module("add");
    let e = m.function("nope").unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"invalid argument: module "module" has no function "nope" (it exports ["add", "add_one", "scale", "add_i32", "__init"])"#
    );
    assert!(m.vm_call("nope", &VmList::variants(0)).is_err());
    assert!(m.export("nope").is_err());
    // SAFETY: the file does not exist; nothing is loaded.
    let e = unsafe { IreeModule::load(path("missing"), Device::LocalSync) }.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io { .. }), "{e}");
    assert!(e.to_string().contains("missing.vmfb"), "{e}");
    // A cut-short module is rejected with a byte offset before the runtime sees it.
    let bytes = std::fs::read(path("add")).unwrap();
    // SAFETY: fnabi's reader rejects these bytes before IREE would load them.
    let e = unsafe { IreeModule::from_bytes(&bytes[..100], Device::LocalSync) }.unwrap_err();
    assert_eq!(e.to_string(), "vmfb at byte 64: the module FlatBuffer is cut short (7296 bytes needed, 36 available)");
    // SAFETY: as above.
    let e = unsafe { IreeModule::from_bytes(b"not a module", Device::LocalSync) }.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Vmfb(_)), "{e}");
    assert!("gpu".parse::<Device>().is_err());
}

/// Issue 18, defects 5 and 6: a module cut inside its executables, and one
/// with bit 7 of byte 6108 flipped (which IREE's bytecode verifier misses
/// and which crashed the runtime with SIGSEGV in the module's initializer),
/// are fnabi errors: the ZIP's sizes and CRC-32 are checked first.
#[test]
fn truncated_and_bit_flipped_modules_never_reach_the_runtime() {
    let bytes = std::fs::read(path("add")).unwrap();
    // SAFETY: fnabi's reader rejects these bytes before IREE would load them.
    let e = unsafe { IreeModule::from_bytes(&bytes[..9408], Device::LocalSync) }.unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Vmfb(_)), "{e}");
    assert!(e.to_string().contains("end-of-central-directory"), "{e}");
    let mut b = bytes.clone();
    b[6108] ^= 0x80;
    // SAFETY: as above.
    let e = unsafe { IreeModule::from_bytes(&b, Device::LocalSync) }.unwrap_err();
    assert!(e.to_string().contains(r#"ZIP entry "module.fb" is corrupted"#), "{e}");
    // A flip in the embedded executable too.
    let mut b = bytes.clone();
    b[9000] ^= 1;
    // SAFETY: as above.
    let e = unsafe { IreeModule::from_bytes(&b, Device::LocalSync) }.unwrap_err();
    assert!(e.to_string().contains("is corrupted"), "{e}");
    // The intact bytes still load and run.
    // SAFETY: the repository's fixture module.
    let m = unsafe { IreeModule::from_bytes(&bytes, Device::LocalSync) }.unwrap();
    assert!(m.export("add").is_ok());
}

#[test]
fn runtime_failures_carry_iree_messages() {
    let m = module("add");
    // Called dynamically (no fnabi checks), a wrong call reaches the runtime.
    let add = m.function_with_abi("add", FunctionAbi::dynamic()).unwrap();
    let e = runtime(add.call([four()]));
    assert_eq!(e.code(), StatusCode::InvalidArgument);
    assert_eq!(e.operation(), "calling module.add");
    assert!(
        e.message().contains("INVALID_ARGUMENT; input list and function mismatch; expected 2 arguments but passed 1"),
        "{}",
        e.message()
    );
    assert!(e.to_string().starts_with("IREE runtime (calling module.add): "), "{e}");
    // The module's own checks of its arguments: element type and shape.
    let i = Value::from(Array::from_vec(&[4], vec![1i32, 2, 3, 4]).unwrap());
    let e = runtime(add.call([i, four()]));
    assert_eq!(e.code(), StatusCode::InvalidArgument);
    assert!(e.message().contains("element type mismatch"), "{}", e.message());
    let e = runtime(add.call([f32s(&[5], &[0.0; 5]), four()]));
    assert!(e.message().contains("shape"), "{}", e.message());
    // What the runtime says about a value where a buffer view belongs.
    let e = runtime(add.call([Value::Int(1), four()]));
    assert_eq!(e.code(), StatusCode::FailedPrecondition, "{e}");
    // The function stays usable after failures.
    let add = m.function("add").unwrap();
    let out = add.call([four(), four()]).unwrap();
    assert_eq!(out.as_array().unwrap().to_vec::<f32>().unwrap(), [2.0, 4.0, 6.0, 8.0]);
}

#[test]
fn vm_calls_check_the_calling_convention() {
    let m = module("add");
    let x = Variant::buffer_view(BufferView::new(Array::from_vec(&[4], vec![1.0f32; 4]).unwrap()).unwrap());
    let e = m.vm_call("add", &VmList::from_variants(vec![x.clone()])).err().unwrap();
    assert_eq!(e.to_string(), "wrong number of arguments: expected 2, got 1");
    let e = m.vm_call("add", &VmList::from_variants(vec![x.clone(), Variant::I32(1)])).err().unwrap();
    assert_eq!(e.to_string(), "argument [1] (VM register): expected a ref or none (cconv `r`), got i32 1");
    let fence = Variant::Ref(VmRef::Opaque(OpaqueRef::new("!hal.fence", Box::new(1u8))));
    let e = m.vm_call("add", &VmList::from_variants(vec![x.clone(), fence])).err().unwrap();
    assert_eq!(
        e.to_string(),
        "arguments (a VM reference): expected a reference the IREE runtime made, got an opaque !hal.fence made elsewhere"
    );
    // The runtime's check of a prebuilt list: a mismatched element type.
    let i = Variant::buffer_view(BufferView::new(Array::from_vec(&[4], vec![1i32; 4]).unwrap()).unwrap());
    let mut call = m.vm_call("add", &VmList::from_variants(vec![x.clone(), i])).unwrap();
    let e = call.invoke().unwrap_err();
    assert!(e.to_string().contains("element type mismatch"), "{e}");
    // And a good one.
    let mut call = m.vm_call("add", &VmList::from_variants(vec![x.clone(), x])).unwrap();
    call.invoke().unwrap();
    assert_eq!(call.result_count(), 1);
    let r = call.results().unwrap();
    assert_eq!(r[0].as_buffer_view().unwrap().array().to_vec::<f32>().unwrap(), [2.0; 4]);
}

#[test]
fn async_vm_calls_get_their_fences() {
    let m = module("async");
    let x = Variant::buffer_view(BufferView::new(Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap()).unwrap());
    let mut call = m.vm_call("add_async", &VmList::from_variants(vec![x.clone(), x])).unwrap();
    for _ in 0..3 {
        call.invoke().unwrap();
        let r = call.results().unwrap();
        assert_eq!(r[0].as_buffer_view().unwrap().array().to_vec::<f32>().unwrap(), [2.0, 4.0, 6.0, 8.0]);
    }
}
