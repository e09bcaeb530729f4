//! Every level of input a user's own pipeline leaves, run in-process: a
//! `.mlir` fixture (`tests/mlir/llvm_entry.mlir`) is lowered during the
//! test by `mlir-opt` with the user's pass list (not fnabi's) to the LLVM
//! dialect, translated to LLVM IR by `mlir-translate` and assembled to
//! bitcode by `llvm-as`; each of the three is loaded by fnabi and its
//! functions called. Scalar-only functions are typed by their LLVM
//! headers (`@main() -> i32` as `mlir-runner -e main
//! -entry-point-result=i32` runs it); memref functions by a `--signature`
//! that is checked against their `_mlir_ciface_` header. Also a library
//! written with its ABI embedded (`fnabi compile`'s path) and read back.
//! Expected values are computed here by hand (plain Rust arithmetic).
//! Also run under valgrind by `scripts/test.sh`.

mod common;

use fnabi::Value;
use fnabi::mlir::{CompileOptions, Compiler, HostFunctions, MlirLibrary, MlirModule};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mlir").join(name)
}

fn run(tool: &str, args: &[&str]) {
    let out = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e} (scripts/test.sh installs mlir-22-tools llvm-22)"));
    assert!(out.status.success(), "{tool} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The fixture lowered by a user's pipeline: (LLVM-dialect .mlir, .ll, .bc).
/// They lie in `dir`.
fn lowered(dir: &Path) -> [PathBuf; 3] {
    let v = Compiler::new().expect("the MLIR tools").toolchain().version;
    let (m, ll, bc) = (dir.join("user_llvm.mlir"), dir.join("user.ll"), dir.join("user.bc"));
    let src = fixture("llvm_entry.mlir");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let pipeline = [
        "--convert-scf-to-cf",
        "--expand-strided-metadata",
        "--finalize-memref-to-llvm",
        "--convert-arith-to-llvm",
        "--convert-index-to-llvm",
        "--convert-cf-to-llvm",
        "--convert-func-to-llvm",
        "--reconcile-unrealized-casts",
    ];
    let mut args = vec![s(&src)];
    args.extend(pipeline.iter().map(|p| (*p).to_owned()));
    args.extend(["-o".to_owned(), s(&m)]);
    run(&format!("mlir-opt-{v}"), &args.iter().map(String::as_str).collect::<Vec<_>>());
    run(&format!("mlir-translate-{v}"), &["--mlir-to-llvmir", &s(&m), "-o", &s(&ll)]);
    run(&format!("llvm-as-{v}"), &[&s(&ll), "-o", &s(&bc)]);
    [m, ll, bc]
}

fn f32s(v: &Value<'_>) -> Vec<f32> {
    match v {
        Value::Array(a) => a.to_vec::<f32>().unwrap(),
        other => panic!("not an array: {other:?}"),
    }
}

fn floats(xs: &[f32]) -> Value<'static> {
    Value::from(fnabi::Array::from_vec(&[xs.len()], xs.to_vec()).unwrap())
}

#[test]
fn llvm_dialect_llvm_ir_and_bitcode_run() {
    let x = [1.5f32, -2.0, 3.25, 4.0, 0.5];
    let y = [2.0f32, 0.25, -1.0, 8.0, 3.0];
    let dot_want = x.iter().zip(&y).fold(0.0f32, |acc, (a, b)| acc + a * b);
    let scale_want: Vec<f32> = x.iter().map(|v| v * 3.0 + 1.0).collect();
    let dir = common::Scratch::new("entry");
    for path in lowered(&dir) {
        let shown = path.display().to_string();
        // SAFETY: the fixture's functions write only memory they allocate.
        let m = unsafe { MlirModule::load_with(&path, &CompileOptions::default()) }
            .unwrap_or_else(|e| panic!("{shown}: {e}"));
        assert_eq!(m.function_names().unwrap(), ["dot", "scale", "axpy", "main"], "{shown}");
        // Scalar-only functions, typed by their LLVM headers.
        let main = m.function("main").unwrap().call(Vec::<Value<'_>>::new()).unwrap();
        assert_eq!(main, Value::Int((1..=10).map(|k| k * k).sum()), "{shown}");
        let axpy = m.function("axpy").unwrap().call(vec![Value::Float(2.5), Value::Float(4.0), Value::Int(3)]);
        assert_eq!(axpy.unwrap(), Value::Float(2.5 * 4.0 + 3.0), "{shown}");
        // Memref functions: the header has only pointers.
        let e = m.function("dot").unwrap_err().to_string();
        assert!(e.contains("--signature") && e.contains("@_mlir_ciface_dot(ptr, ptr) -> f32"), "{shown}: {e}");
        let dot = m.function_with_signature("dot", "(memref<?xf32>, memref<?xf32>) -> f32").unwrap();
        assert_eq!(dot.call(vec![floats(&x), floats(&y)]).unwrap(), Value::Float(f64::from(dot_want)), "{shown}");
        let scale = m.function_with_signature("scale", "(memref<?xf32>, f32) -> memref<?xf32>").unwrap();
        assert_eq!(f32s(&scale.call(vec![floats(&x), Value::Float(3.0)]).unwrap()), scale_want, "{shown}");
        // A signature the header contradicts is an error, not garbage.
        for wrong in
            ["(memref<?xf32>) -> memref<?xf32>", "(memref<?xf32>, f64) -> memref<?xf32>", "(memref<?xf32>, f32) -> f32"]
        {
            let e = m.function_with_signature("scale", wrong).unwrap_err().to_string();
            assert!(e.contains("contradicts") && e.contains("@_mlir_ciface_scale(ptr, ptr, f32) -> void"), "{e}");
        }
        let e = m.function_with_signature("axpy", "(memref<?xf64>, f64, i32) -> f64").unwrap_err().to_string();
        assert!(e.contains("no _mlir_ciface_axpy wrapper"), "{e}");
    }
}

#[test]
fn a_library_with_its_abi_embedded_needs_no_signature() {
    let src_path = fixture("structured.mlir");
    let source = std::fs::read_to_string(&src_path).unwrap();
    let options = CompileOptions::default().with_embedded_abi(true);
    // SAFETY: the fixture's functions write only memory they allocate.
    let lib = unsafe { MlirLibrary::compile_with_options(&source, &HostFunctions::new(), &options) }.unwrap();
    let bytes = std::fs::read(lib.path()).unwrap();
    let text = fnabi::mlir::abi_embed::read_abi_text(&bytes).unwrap().expect("an embedded ABI");
    assert!(text.contains("func.func @scale_kw(%a0: memref<?xf32>, %a1: f32) -> (memref<?xf32>)"), "{text}");
    let dir = common::Scratch::new("entry-lib");
    let copy = dir.join("lib.so");
    std::fs::copy(lib.path(), &copy).unwrap();
    // SAFETY: as above.
    let m = unsafe { MlirModule::load(&copy) }.unwrap();
    // scale_kw(x, scale) = x * scale, bound by keyword through its sip.
    let f = m.function("scale_kw").unwrap();
    let mut kw = fnabi::Dict::new();
    kw.insert("x", floats(&[1.0, -2.0, 0.5]));
    kw.insert("scale", Value::Float(4.0));
    assert_eq!(f32s(&f.call_kw(Vec::new(), kw).unwrap()), [4.0, -8.0, 2.0]);
    // The same type again is fine; another one is an error.
    assert!(m.function_with_signature("scale_kw", "(memref<?xf32>, f32) -> memref<?xf32>").is_ok());
    let e = m.function_with_signature("scale_kw", "(memref<?xf64>, f64) -> memref<?xf64>").unwrap_err();
    assert!(e.to_string().contains("the ABI embedded in"), "{e}");
}

/// Names that are no MLIR bare identifier (`@"add-one"`, a space, an
/// escaped quote, non-ASCII letters) are written quoted into the embedded ABI and read back
/// as they were: before, the ABI text had `@add-one(` and a library
/// `fnabi compile` wrote could not be loaded or inspected (found by the
/// `mlir_signature` fuzz target's ABI round trip). The vector function is
/// called through the wrapper its quoted name gets. Values by hand.
#[test]
fn names_that_need_quotes_keep_them_in_the_embedded_abi() {
    let source = r#"
func.func @"add-one"(%a: f32) -> f32 {
  %c = arith.constant 1.0 : f32
  %r = arith.addf %a, %c : f32
  return %r : f32
}
func.func @"sum vec"(%v: vector<3xi32>) -> i32 {
  %r = vector.reduction <add>, %v : vector<3xi32> into i32
  return %r : i32
}
func.func @"dé jà"(%a: i32) -> i32 {
  %r = arith.muli %a, %a : i32
  return %r : i32
}
func.func @"first\"x"(%m: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %r = memref.load %m[%c0] : memref<?xf32>
  return %r : f32
}
"#;
    let options = CompileOptions::default().with_embedded_abi(true);
    // SAFETY: the functions only read their arguments.
    let lib = unsafe { MlirLibrary::compile_with_options(source, &HostFunctions::new(), &options) }.unwrap();
    let text = fnabi::mlir::abi_embed::read_abi_text(&std::fs::read(lib.path()).unwrap()).unwrap().unwrap();
    for header in [
        r#"func.func @"add-one"(%a0: f32)"#,
        r#"func.func @"sum vec"(%a0: vector<3xi32>)"#,
        r#"func.func @"dé jà"(%a0: i32)"#,
    ] {
        assert!(text.contains(header), "{text}");
    }
    assert!(text.contains(r#"func.func @"first\"x"(%a0: memref<?xf32>)"#), "{text}");
    let dir = common::Scratch::new("entry-quoted");
    let copy = dir.join("lib.so");
    std::fs::copy(lib.path(), &copy).unwrap();
    // SAFETY: as above.
    let m = unsafe { MlirModule::load(&copy) }.unwrap();
    assert_eq!(m.function("add-one").unwrap().call([Value::Float(2.5)]).unwrap(), Value::Float(3.5));
    let v = Value::from(fnabi::Array::from_vec(&[3], vec![1i32, 2, 39]).unwrap());
    assert_eq!(m.function("sum vec").unwrap().call([v]).unwrap(), Value::Int(42));
    assert_eq!(m.function("dé jà").unwrap().call([Value::Int(-7)]).unwrap(), Value::Int(49));
    assert_eq!(m.function("first\"x").unwrap().call([floats(&[-1.5, 2.0])]).unwrap(), Value::Float(-1.5));
}
