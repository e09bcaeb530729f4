//! MLIR's runtime utilities: `tests/mlir/print_utils.mlir` calls
//! `printMemrefF32`, `printMemrefI32` (exported in C-interface form by
//! `libmlir_runner_utils`) and `printF32`, `printI64`, `printNewline` (plain
//! functions of `libmlir_c_runner_utils`, reached through fnabi's shims).
//!
//! C's stdout cannot be captured reliably inside the process, so the test
//! runs this binary again as a child (with `FNABI_PRINT_CHILD` set, `main`
//! runs `print_child` instead of the tests) and checks the child's stdout:
//! the lines of the runtime utilities, in order with the lines fnabi's
//! caller prints. Hence this file has its own `main` (`harness = false`):
//! the child is no test.

#[path = "support/harness.rs"]
mod harness;

use fnabi::mlir::{Arg, Externals, HostFunctions, MlirLibrary, RuntimeUtils, parse_functions};
use fnabi::{Array, Value};
use std::process::Command;

fn source() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mlir/print_utils.mlir")).unwrap()
}

type Test = (&'static str, fn());

const TESTS: [Test; 2] = [
    ("runtime_utilities_print_in_order_with_the_caller", runtime_utilities_print_in_order_with_the_caller),
    (
        "runtime_utilities_are_resolved_from_the_installed_libraries",
        runtime_utilities_are_resolved_from_the_installed_libraries,
    ),
];

/// The child prints (see the module docs); otherwise runs each test (an
/// argument, as libtest's filter, selects tests by substring), catching
/// panics, and prints libtest's summary line.
fn main() {
    if std::env::var_os("FNABI_PRINT_CHILD").is_some() {
        print_child();
        return;
    }
    harness::run_tests(&TESTS);
}

/// The child: prints through Rust and through the module, interleaved.
fn print_child() {
    // SAFETY: the module only prints its arguments.
    let lib = unsafe { MlirLibrary::compile(&source()) }.unwrap();
    println!("externals: {}", lib.externals());
    // Not newline-terminated: still in Rust's buffer unless fnabi flushes it.
    print!("before|");
    let m = Array::from_vec(&[2, 3], vec![1.0f32, 2.5, 3.0, 4.0, 5.0, 6.0]).unwrap();
    lib.function("print2d").unwrap().call(&mut [Arg::Array(&m)]).unwrap();
    print!("between|");
    let v = Array::from_vec(&[3], vec![7i32, -8, 9]).unwrap();
    lib.function("print1d_i32").unwrap().call(&mut [Arg::Array(&v)]).unwrap();
    lib.function("print_scalars").unwrap().call(&mut [Arg::Float(1.5), Arg::Int(-42)]).unwrap();
    println!("after");
    assert_eq!(
        lib.function("print_scalars").unwrap().call(&mut [Arg::Float(0.0), Arg::Int(0)]).unwrap(),
        [] as [Value; 0]
    );
}

fn runtime_utilities_print_in_order_with_the_caller() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe).env("FNABI_PRINT_CHILD", "1").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // From the externals line on, with the addresses masked.
    let from = stdout.find("externals: ").unwrap_or_else(|| panic!("no externals line:\n{stdout}"));
    let lines: Vec<String> = stdout[from..].lines().take(11).map(mask_address).collect();
    let ext = &lines[0];
    assert!(ext.starts_with("externals: provided: @printMemrefF32 (libmlir_runner_utils.so"), "{ext}");
    assert!(
        ext.contains(", @printF32 (libmlir_c_runner_utils.so") && ext.contains("@printNewline (libmlir_c_"),
        "{ext}"
    );
    assert_eq!(
        lines[1..],
        [
            "before|Unranked Memref base@ = 0x? rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data = ",
            "[[1,   2.5,   3], ",
            " [4,   5,   6]]",
            "between|Unranked Memref base@ = 0x? rank = 1 offset = 0 sizes = [3] strides = [1] data = ",
            "[7,  -8,  9]",
            "1.5",
            "-42",
            "after",
            "0",
            "0",
        ],
        "{stdout}"
    );
}

/// `base@ = 0x7f…` → `base@ = 0x?`.
fn mask_address(line: &str) -> String {
    match line.split_once("base@ = 0x") {
        Some((head, tail)) => {
            let rest = tail.trim_start_matches(|c: char| c.is_ascii_hexdigit());
            format!("{head}base@ = 0x?{rest}")
        }
        None => line.to_owned(),
    }
}

fn runtime_utilities_are_resolved_from_the_installed_libraries() {
    let compiler = fnabi::mlir::Compiler::new().unwrap();
    let rt = RuntimeUtils::for_toolchain(compiler.toolchain()).unwrap();
    let names: Vec<String> = rt.libraries().iter().map(|l| l.file_name()).collect();
    assert_eq!(names.len(), 2, "{names:?} (install libmlir-{})", compiler.toolchain().version);
    assert!(names[0].starts_with("libmlir_c_runner_utils.so") && names[1].starts_with("libmlir_runner_utils.so"));
    let p = rt.lookup("printMemrefF32").unwrap();
    assert!(p.ciface && p.library.file_name().starts_with("libmlir_runner_utils"));
    let p = rt.lookup("printF32").unwrap();
    assert!(!p.ciface && p.library.file_name().starts_with("libmlir_c_runner_utils"));
    assert!(rt.lookup("no_such_function").is_none());

    let decls = parse_functions(&source()).unwrap();
    let ext = Externals::resolve(&decls, &HostFunctions::new(), &rt).unwrap();
    assert!(ext.uses_runtime_utils() && ext.check().is_ok());
    assert_eq!(ext.provided().count(), 5);
    let glue = ext.c_glue().unwrap();
    assert!(glue.contains("extern void printF32(float);"), "{glue}");
    assert!(glue.contains("void fnabi_shim_3(uint64_t a0) {\n  printI64((int64_t)a0);\n}"), "{glue}");
    assert!(!glue.contains("fnabi_host_"), "no host trampolines");
    // A host function overrides a runtime utility of the same name.
    let mut host = HostFunctions::new();
    host.register("printNewline", |_| Ok(vec![]));
    let ext = Externals::resolve(&decls, &host, &rt).unwrap();
    assert_eq!(ext.host_bound().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["printNewline"]);
    // A runtime function whose only export cannot take its C interface.
    let odd = parse_functions("func.func private @printF32(memref<?xf32>)").unwrap();
    let e = Externals::resolve(&odd, &HostFunctions::new(), &rt).unwrap().check().unwrap_err().to_string();
    assert!(e.contains("exports only the plain function, and its C interface differs"), "{e}");
}
