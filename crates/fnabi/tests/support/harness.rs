//! The `main` of a test binary built without libtest (`harness = false`),
//! for tests that must own the process (its stdout, or a child run of it).

/// Runs each test whose name contains the first non-flag argument (as
/// libtest's filter), catching panics, and prints libtest's lines; exits
/// with 101 when one failed.
pub fn run_tests(tests: &[(&str, fn())]) {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let (mut passed, mut failed) = (0, 0);
    for (name, test) in tests.iter().filter(|(n, _)| filter.as_deref().is_none_or(|f| n.contains(f))) {
        let ok = std::panic::catch_unwind(test).is_ok();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    println!("\ntest result: {}. {passed} passed; {failed} failed", if failed == 0 { "ok" } else { "FAILED" });
    if failed > 0 {
        std::process::exit(101);
    }
}
