//! What the benches that print a summary share: where criterion writes its
//! estimates, and the mean of one benchmark of this run.

use std::path::{Path, PathBuf};

/// Where criterion writes its estimates: `CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else the nearest `target/criterion`.
pub fn criterion_dir() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("CRITERION_HOME") {
        return Some(PathBuf::from(h));
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        return Some(PathBuf::from(t).join("criterion"));
    }
    let mut d = std::env::current_dir().ok()?;
    loop {
        let c = d.join("target").join("criterion");
        if c.is_dir() {
            return Some(c);
        }
        if !d.pop() {
            return None;
        }
    }
}

/// Mean time in ns of a finished benchmark, from criterion's estimates.
pub fn mean_ns(dir: &Path, id: &str) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join(id).join("new").join("estimates.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["mean"]["point_estimate"].as_f64()
}
