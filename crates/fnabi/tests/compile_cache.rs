//! The compile cache under concurrency and corruption (issue 18): threads
//! compiling one module at once share one compile; a truncated or corrupted
//! library is rebuilt, never loaded; an unwritable cache folder falls back
//! to a temporary one. Real compiles with Debian's MLIR tools.

mod common;

use fnabi::mlir::cache::{self, ArtifactKind, CacheEntry};
use fnabi::mlir::compile::{Compiler, Toolchain};
use std::path::PathBuf;
use std::sync::{Arc, Barrier};

const SOURCE: &str = "func.func @twice(%x: f64) -> f64 attributes { llvm.emit_c_interface } {\n  \
    %y = arith.addf %x, %x : f64\n  return %y : f64\n}\n";

fn scratch(name: &str) -> common::Scratch {
    common::Scratch::new(&format!("compile-cache-{name}"))
}

fn tools() -> Toolchain {
    Compiler::new().expect("MLIR 22 tools (scripts/test.sh installs mlir-22-tools llvm-22)").toolchain().clone()
}

/// One test, so that the process-wide publish count is this test's alone.
#[test]
fn one_compile_for_many_threads_and_corrupt_entries_are_rebuilt() {
    let dir = scratch("threads");
    let compiler = Compiler::with(tools(), &*dir);
    let before = cache::published_count();
    let barrier = Arc::new(Barrier::new(6));
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let (c, b) = (compiler.clone(), barrier.clone());
            std::thread::spawn(move || {
                b.wait();
                c.compile(SOURCE).unwrap()
            })
        })
        .collect();
    let paths: Vec<PathBuf> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(paths.iter().all(|p| *p == paths[0]));
    assert_eq!(cache::published_count() - before, 1, "six threads, one compile");
    let entry = CacheEntry::new(&dir.join("mlir"), &compiler.cache_key(SOURCE), ArtifactKind::SHARED_LIBRARY);
    assert_eq!(entry.artifact, paths[0]);
    let good = std::fs::read(&paths[0]).unwrap();
    assert!(good.starts_with(b"\x7fELF"));
    // Truncated: rebuilt, not loaded.
    std::fs::write(&paths[0], &good[..good.len() / 2]).unwrap();
    assert_eq!(compiler.compile(SOURCE).unwrap(), paths[0]);
    assert_eq!(cache::published_count() - before, 2);
    assert_eq!(std::fs::read(&paths[0]).unwrap().len(), good.len());
    // One byte changed, size kept: rebuilt too.
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0xff;
    std::fs::write(&paths[0], &bad).unwrap();
    assert_eq!(compiler.compile(SOURCE).unwrap(), paths[0]);
    assert_eq!(cache::published_count() - before, 3);
    // Intact: a hit.
    compiler.compile(SOURCE).unwrap();
    assert_eq!(cache::published_count() - before, 3);
    assert_eq!(cache::list(&dir.join("mlir"), ArtifactKind::SHARED_LIBRARY).unwrap().len(), 1);
    // An unwritable cache folder (under a regular file): a temporary one.
    let blocked = scratch("blocked");
    std::fs::write(blocked.join("file"), b"").unwrap();
    let so = Compiler::with(tools(), blocked.join("file")).compile(SOURCE).unwrap();
    assert!(so.starts_with(std::env::temp_dir()) && so.is_file(), "{}", so.display());
}
