//! What the CLI tests share: running the `fnabi` binary.

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the `fnabi` binary with `args`, writing `stdin` to its standard
/// input; returns whether it succeeded, its stdout and its stderr.
#[allow(dead_code)] // Some test binaries run it with their own environment.
pub fn fnabi<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>, stdin: &str) -> (bool, String, String) {
    fnabi_bytes(args, stdin.as_bytes())
}

/// [`fnabi`] with any bytes on stdin (a module: bitcode, a `.vmfb`).
pub fn fnabi_bytes<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>, stdin: &[u8]) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fnabi"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The command may fail (and exit) before reading its input: a closed pipe is fine.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// A Python interpreter with numpy, for checks computed independently of
/// fnabi: `$FNABI_PYTHON`, else Debian's `/usr/bin/python3` (where
/// `scripts/test.sh` installs python3-numpy), else `python3`. Panics, saying
/// what to install, when it has no numpy.
#[allow(dead_code)]
pub fn python_numpy() -> String {
    let candidates = [std::env::var("FNABI_PYTHON").ok(), Some("/usr/bin/python3".into()), Some("python3".into())];
    for py in candidates.into_iter().flatten() {
        let ok = Command::new(&py).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success());
        if ok {
            return py;
        }
    }
    panic!("these tests need Python 3 with numpy: apt-get install python3-numpy (scripts/test.sh installs it)");
}

/// Runs `script` with [`python_numpy`]; returns its stdout (panics on failure).
#[allow(dead_code)]
pub fn python(script: &str) -> String {
    let out = Command::new(python_numpy()).args(["-c", script]).output().unwrap();
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[allow(dead_code)] // Not every test binary reads JSON output.
/// The `data` of every array (and every number) in fnabi's JSON output, flattened.
pub fn json_data(text: &str) -> Vec<f64> {
    fn walk(v: &serde_json::Value, out: &mut Vec<f64>) {
        match v {
            serde_json::Value::Object(o) if o.contains_key("dtype") => {
                out.extend(o["data"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()));
            }
            serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Number(n) => out.push(n.as_f64().unwrap()),
            other => panic!("unexpected {other}"),
        }
    }
    let mut out = Vec::new();
    walk(&serde_json::from_str(text).unwrap(), &mut out);
    out
}

/// Runs the shell command `cmd` with the compile cache `cache` and the
/// progress line's threshold at 0, on a terminal (`script` from util-linux
/// gives it one) or piped; returns stdout followed by stderr (a terminal
/// merges them).
#[allow(dead_code)] // Only the progress tests use it.
pub fn run_for_progress(cmd: &str, terminal: bool, cache: &std::path::Path) -> String {
    let mut c = Command::new(if terminal { "script" } else { "sh" });
    if terminal {
        c.args(["-qec", cmd, "/dev/null"]);
    } else {
        c.args(["-c", cmd]);
    }
    let out = c
        .env("FNABI_CACHE_DIR", cache)
        .env("FNABI_PROGRESS_AFTER_MS", "0")
        .output()
        .expect("script (apt-get install bsdutils)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[path = "../../../fnabi-core/tests/support/scratch.rs"]
mod scratch;
#[allow(unused_imports)] // Not every test binary writes files.
pub use scratch::Scratch;
