//! What the CLI tests share: running the `fnabi` binary.

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the `fnabi` binary with `args`, writing `stdin` to its standard
/// input; returns whether it succeeded, its stdout and its stderr.
pub fn fnabi<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>, stdin: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fnabi"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The command may fail (and exit) before reading its input: a closed pipe is fine.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}
