//! The Rust API of the IREE backend for MLIR source: `iree-compile` 3.13
//! (PyPI `iree-base-compiler`, installed by `scripts/lib/deps.sh`) found,
//! run and cached ([`IreeCompiler`]), its module loaded and called; a
//! compile error names the user's file and line. Expected values are
//! computed by hand.

mod common;

use fnabi::{Array, DType, Value};
use fnabi_core::cache::{self, ArtifactKind, CacheEntry};
use fnabi_iree::{Device, IreeCompileError, IreeCompileOptions, IreeCompiler, IreeModule};
use std::path::{Path, PathBuf};

fn source_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fnabi/tests/mlir/cross_backend.mlir")
}

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("iree-compile-{name}"))
}

fn compiler() -> IreeCompiler {
    IreeCompiler::find().unwrap_or_else(|e| panic!("{e} (scripts/test.sh installs it)"))
}

/// One test, so that the process-wide publish count is this test's alone.
#[test]
fn compiles_caches_loads_and_calls() {
    let dir = scratch("cache");
    let c = compiler().with_cache_dir(&*dir);
    assert!(c.version().starts_with("3.13."), "{}", c.version());
    let source = std::fs::read(source_path()).unwrap();
    let options = IreeCompileOptions::default().with_source_path(source_path());
    let before = cache::published_count();
    let (bytes, path) = c.compile(&source, &options).unwrap();
    assert_eq!(cache::published_count() - before, 1);
    assert!(bytes.starts_with(b"PK\x03\x04"), "a ZIP-wrapped .vmfb");
    let key = c.cache_key(&source, &options);
    assert_eq!(path, CacheEntry::new(&dir.join("iree"), &key, ArtifactKind::VMFB).artifact);
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // A hit: nothing compiled.
    assert_eq!(c.compile(&source, &options).unwrap().0, bytes);
    assert_eq!(cache::published_count() - before, 1);
    // The key covers the flags and the source bytes.
    let host = options.clone().with_target_cpu("host");
    assert_ne!(c.cache_key(&source, &host), key);
    let mut edited = source.clone();
    edited.extend_from_slice(b"\n// a comment\n");
    assert_ne!(c.cache_key(&edited, &options), key);
    // Truncated: rebuilt, never loaded.
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(c.compile(&source, &options).unwrap().0, bytes);
    assert_eq!(cache::published_count() - before, 2);
    assert_eq!(cache::list(&dir.join("iree"), ArtifactKind::VMFB).unwrap().len(), 1);

    // SAFETY: our own source, compiled by IREE's compiler.
    let module = unsafe { IreeModule::from_bytes(&bytes, Device::LocalSync) }.unwrap();
    let f = module.function("dense_relu").unwrap();
    let x = Array::from_vec(&[2, 4], vec![1.0f32, 2.0, 3.0, 4.0, -1.0, 0.0, 1.0, 0.0]).unwrap();
    let w = Array::from_vec(&[4, 3], vec![1.0f32, 0.0, -1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, -1.0, 0.0, 0.0]).unwrap();
    let b = Array::from_vec(&[3], vec![0.5f32, -10.0, 0.0]).unwrap();
    let y = f.call([Value::from(x), Value::from(w), Value::from(b)]).unwrap();
    // x @ w = [[0 5 2] [0 1 2]]; + b = [[0.5 -5 2] [0.5 -9 2]]; relu.
    let y = y.as_array().unwrap();
    assert_eq!(y.shape(), [2, 3]);
    assert_eq!(y.to_vec::<f32>().unwrap(), [0.5, 0.0, 2.0, 0.5, 0.0, 2.0]);

    // compile_file: the same module through the default discovery and cache.
    // SAFETY: as above.
    let m =
        unsafe { IreeModule::compile_file(source_path(), Device::LocalTask, &IreeCompileOptions::default()) }.unwrap();
    let g = m.function("scale_exp_f64").unwrap();
    let out =
        g.call([Value::from(Array::from_vec(&[3], vec![0.0f64, 1.0, -0.5]).unwrap()), Value::Float(2.0)]).unwrap();
    let out = out.as_array().unwrap().to_vec::<f64>().unwrap();
    // exp(0), exp(2), exp(-1), within 1e-14 relative.
    for (got, want) in out.iter().zip([1.0, std::f64::consts::E * std::f64::consts::E, 1.0 / std::f64::consts::E]) {
        assert!((got - want).abs() <= 1e-14 * want, "{out:?}");
    }
}

#[test]
fn compile_errors_are_typed_and_name_the_file_and_line() {
    let dir = scratch("errors");
    let file = dir.join("bad.mlir");
    std::fs::write(&file, "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xi32>\n}\n")
        .unwrap();
    // SAFETY: nothing runs: the compile fails.
    let e = unsafe { IreeModule::compile_file(&file, Device::LocalSync, &IreeCompileOptions::default()) }.unwrap_err();
    let Some(IreeCompileError::Failed { input, stderr, .. }) = e.backend_error::<IreeCompileError>() else {
        panic!("{e}")
    };
    assert_eq!(*input, file.display().to_string());
    assert!(stderr.starts_with(&format!("{}:2:10: error: use of value", file.display())), "{stderr}");
    assert!(stderr.contains(&format!("\n{}:1:14: note: prior use here", file.display())), "{stderr}");
    assert!(!stderr.contains("input.mlir") && !stderr.contains("tmp-"), "{stderr}");
    // Nothing was cached for it.
    let c = compiler().with_cache_dir(dir.join("cache"));
    assert!(c.compile(&std::fs::read(&file).unwrap(), &IreeCompileOptions::default()).is_err());
    assert!(cache::list(&dir.join("cache/iree"), ArtifactKind::VMFB).unwrap().is_empty());
    // A compiler that is not there.
    let e = IreeCompiler::at(Path::new("/nonexistent")).unwrap_err();
    assert!(matches!(e, IreeCompileError::NotInstalled(_)));
    assert_eq!(e.to_string(), "/nonexistent: no such file: pip install iree-base-compiler==3.13.0");
}

/// 8-bit float tensors in and out of a real IREE call doing arithmetic
/// (tests/mlir/float8_arith.mlir), inputs and expected outputs encoded by
/// hand (sign | exponent | mantissa; E4M3FN bias 7, E5M2 bias 15; results
/// rounded to nearest even, derivations in fnabi-cli's iree_backend_cli.rs).
#[test]
fn float8_tensors_through_iree_arithmetic() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fnabi/tests/mlir/float8_arith.mlir");
    // SAFETY: a fixture of this repository, compiled by IREE's compiler.
    let m = unsafe { IreeModule::compile_file(&path, Device::LocalSync, &IreeCompileOptions::default()) }.unwrap();
    let call = |f: &str, args: &[(DType, [u8; 4])]| {
        let args = args.iter().map(|(t, b)| Value::from(Array::from_bytes(*t, &[4], None, b, 0).unwrap().to_owned()));
        let out = m.function(f).unwrap().call(args.collect::<Vec<_>>()).unwrap();
        let a = out.as_array().unwrap();
        assert_eq!(a.shape(), [4]);
        (a.dtype(), a.storage_bytes().to_vec())
    };
    // 2x + 0.25 of 0.1015625, 1, -3, 208 -> 0.4375, 2.25, -6, 416.
    assert_eq!(
        call("scale_e4m3fn", &[(DType::F8E4M3FN, [0x1d, 0x38, 0xc4, 0x75])]),
        (DType::F8E4M3FN, vec![0x2e, 0x41, 0xcc, 0x7d])
    );
    // [1, 1, 3, 48] + [0.25, 0.125, 0.5, 10] -> 1.25, 1, 3.5, 56.
    let (x, y) = ([0x3c, 0x3c, 0x42, 0x52], [0x34, 0x30, 0x38, 0x49]);
    assert_eq!(
        call("add_e5m2", &[(DType::F8E5M2, x), (DType::F8E5M2, y)]),
        (DType::F8E5M2, vec![0x3d, 0x3c, 0x43, 0x53])
    );
}
