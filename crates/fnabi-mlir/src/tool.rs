//! Running one external tool of the compile pipeline: its output captured,
//! its failure kept with its stderr, and a deadline after which it and every
//! process it started are killed.

use crate::MlirError;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The process-wide compile timeout set by [`set_compile_timeout`], in
/// milliseconds: 0 when unset, `u64::MAX` for none.
static PROCESS_TIMEOUT_MS: AtomicU64 = AtomicU64::new(0);

/// Sets the compile timeout of every compile of this process whose
/// [`CompileOptions::timeout`] is `None` (`fnabi --compile-timeout`):
/// `Some(Some(t))` a timeout, `Some(None)` none, `None` back to the
/// environment and the default.
///
/// [`CompileOptions::timeout`]: crate::compile::CompileOptions::timeout
pub fn set_compile_timeout(timeout: Option<Option<Duration>>) {
    let ms = match timeout {
        None => 0,
        Some(None) => u64::MAX,
        Some(Some(t)) => u64::try_from(t.as_millis()).unwrap_or(u64::MAX - 1).clamp(1, u64::MAX - 1),
    };
    PROCESS_TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

/// The compile timeout in force when [`CompileOptions::timeout`] is `None`:
/// the one set by [`set_compile_timeout`], else `FNABI_COMPILE_TIMEOUT`
/// (seconds, decimals allowed; `0` for none), else
/// [`DEFAULT_COMPILE_TIMEOUT`]. A variable that is not a number of seconds
/// is an error.
///
/// [`CompileOptions::timeout`]: crate::compile::CompileOptions::timeout
pub fn compile_timeout_from_env() -> Result<Option<Duration>, MlirError> {
    match PROCESS_TIMEOUT_MS.load(Ordering::Relaxed) {
        0 => {}
        u64::MAX => return Ok(None),
        ms => return Ok(Some(Duration::from_millis(ms))),
    }
    match std::env::var("FNABI_COMPILE_TIMEOUT") {
        Err(_) => Ok(Some(DEFAULT_COMPILE_TIMEOUT)),
        Ok(v) => parse_timeout(&v).ok_or_else(|| {
            MlirError::Unsupported(format!("FNABI_COMPILE_TIMEOUT={v:?} is not a number of seconds (0 for none)"))
        }),
    }
}

/// The deadline of a compile that starts now, with the limit it comes from:
/// `timeout` (`Duration::MAX`: none), else [`compile_timeout_from_env`]'s.
pub(crate) fn deadline(timeout: Option<Duration>) -> Result<Option<(Instant, Duration)>, MlirError> {
    let limit = match timeout {
        Some(t) => Some(t),
        None => compile_timeout_from_env()?,
    }
    .filter(|t| *t != Duration::MAX);
    Ok(limit.and_then(|l| Some((Instant::now().checked_add(l)?, l))))
}

/// The longest a compile may take unless told otherwise: 10 minutes (a
/// 1,500-function module compiles in about 22 s on 2 cores).
pub const DEFAULT_COMPILE_TIMEOUT: Duration = Duration::from_secs(600);

/// Reads a timeout in seconds (`30`, `0.5`); `0` is none.
///
/// ```
/// use fnabi_mlir::tool::parse_timeout;
/// use std::time::Duration;
/// assert_eq!(parse_timeout("30"), Some(Some(Duration::from_secs(30))));
/// assert_eq!(parse_timeout(" 0.5 "), Some(Some(Duration::from_millis(500))));
/// assert_eq!(parse_timeout("0"), Some(None)); // no timeout
/// assert_eq!(parse_timeout("-1"), None);
/// assert_eq!(parse_timeout("10m"), None);
/// ```
pub fn parse_timeout(text: &str) -> Option<Option<Duration>> {
    let secs: f64 = text.trim().parse().ok()?;
    if !(secs.is_finite() && secs >= 0.0) {
        return None;
    }
    if secs == 0.0 {
        return Some(None);
    }
    Some(Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)))
}

/// Runs `tool` with `args` in `dir` and returns its trimmed stdout; a
/// failure keeps its stderr, and a run past `deadline` is killed (with the
/// processes it started: it leads its own process group) and reported as
/// [`MlirError::Timeout`].
pub(crate) fn run_capture(
    tool: &Path,
    args: &[&OsStr],
    dir: Option<&Path>,
    deadline: Option<(Instant, Duration)>,
) -> Result<String, MlirError> {
    let name = || tool.file_name().unwrap_or(tool.as_os_str()).to_string_lossy().into_owned();
    let mut cmd = Command::new(tool);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut child = cmd.spawn().map_err(|e| MlirError::io(format!("running {}", tool.display()), e))?;
    // Both pipes drained at once, so that neither fills up and stalls the tool.
    let pipe = |p: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut p) = p {
                let _ = p.read_to_end(&mut v);
            }
            v
        })
    };
    let out = pipe(child.stdout.take().map(|p| Box::new(p) as _));
    let err = pipe(child.stderr.take().map(|p| Box::new(p) as _));
    let mut nap = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(MlirError::io(format!("waiting for {}", tool.display()), e)),
        }
        if let Some((at, limit)) = deadline {
            let now = Instant::now();
            if now >= at {
                kill_group(child.id());
                let _ = child.wait();
                let _ = (out.join(), err.join());
                return Err(MlirError::Timeout { tool: name(), limit });
            }
            nap = nap.min(at - now);
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    if !status.success() {
        return Err(MlirError::ToolFailed {
            tool: name(),
            status: status.to_string(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&stdout).trim().to_owned())
}

/// Kills the process group `pid` leads (the tool and what it started:
/// `cc` runs `cc1`, `as` and `ld`, which would keep the pipes open).
fn kill_group(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return };
    // SAFETY: kill(2) takes plain integers and touches no memory of ours;
    // `-pid` names the process group our child leads (process_group(0)),
    // which holds only the tool and its descendants.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse_as_seconds() {
        assert_eq!(parse_timeout("30"), Some(Some(Duration::from_secs(30))));
        assert_eq!(parse_timeout("0.25"), Some(Some(Duration::from_millis(250))));
        assert_eq!(parse_timeout("0"), Some(None));
        assert_eq!(parse_timeout("1e30"), Some(Some(Duration::MAX)));
        for bad in ["", "-1", "soon", "NaN", "inf"] {
            assert_eq!(parse_timeout(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_tool_past_its_deadline_is_killed_with_its_children() {
        let limit = Duration::from_millis(100);
        let t = Instant::now();
        // The shell starts a child that would hold the pipes for 30 s.
        let e = run_capture(
            Path::new("/bin/sh"),
            &["-c", "sleep 30 & sleep 30"].map(OsStr::new),
            None,
            Some((Instant::now() + limit, limit)),
        )
        .unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert_eq!(
            e.to_string(),
            "sh did not finish within the compile timeout of 0.1 s (raise it with FNABI_COMPILE_TIMEOUT=SECONDS or --compile-timeout; 0 for none)"
        );
        assert_eq!(run_capture(Path::new("/bin/echo"), &[OsStr::new("hi")], None, None).unwrap(), "hi");
    }
}
