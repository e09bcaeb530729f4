//! Running one external compiler tool (`mlir-opt`, `llc`, `cc`,
//! `iree-compile`, …): its output captured, its failure kept with its
//! stderr, and a deadline after which it and every process it started are
//! killed; the compile timeout both backends share.

use std::ffi::OsStr;
use std::fmt;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The process-wide compile timeout set by [`set_compile_timeout`], in
/// milliseconds: 0 when unset, `u64::MAX` for none.
static PROCESS_TIMEOUT_MS: AtomicU64 = AtomicU64::new(0);

/// What went wrong running a tool.
///
/// ```
/// use fnabi_core::tool::{run_tool, ToolError};
/// use std::ffi::OsStr;
/// use std::path::Path;
/// let e = run_tool(Path::new("/bin/sh"), &["-c", "echo no >&2; exit 3"].map(OsStr::new), None, None).unwrap_err();
/// let ToolError::Failed { tool, status, stderr } = &e else { panic!("{e}") };
/// assert_eq!((tool.as_str(), status.as_str(), stderr.as_str()), ("sh", "exit status: 3", "no\n"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool could not be started or waited for.
    Io {
        /// What was being done, with the tool's path.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The tool exited unsuccessfully.
    Failed {
        /// Its file name (`mlir-opt-22`, …).
        tool: String,
        /// Its exit status.
        status: String,
        /// Everything it wrote to stderr.
        stderr: String,
    },
    /// The tool ran past its deadline and was killed, with what it started.
    Timeout {
        /// Its file name.
        tool: String,
        /// The compile timeout it ran under.
        limit: Duration,
    },
    /// `FNABI_COMPILE_TIMEOUT` is not a number of seconds.
    BadTimeout(String),
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Io { context, source } => write!(f, "{context}: {source}"),
            ToolError::Failed { tool, status, stderr } => write!(f, "{tool} failed ({status}):\n{stderr}"),
            ToolError::Timeout { tool, limit } => f.write_str(&timeout_message(tool, *limit)),
            ToolError::BadTimeout(v) => {
                write!(f, "FNABI_COMPILE_TIMEOUT={v:?} is not a number of seconds (0 for none)")
            }
        }
    }
}

impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ToolError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The one-line message of a tool killed at the compile timeout, which
/// says how to raise it.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(
///     fnabi_core::tool::timeout_message("llc-22", Duration::from_millis(1500)),
///     "llc-22 did not finish within the compile timeout of 1.5 s (raise it with \
///      FNABI_COMPILE_TIMEOUT=SECONDS or --compile-timeout; 0 for none)"
/// );
/// ```
pub fn timeout_message(tool: &str, limit: Duration) -> String {
    format!(
        "{tool} did not finish within the compile timeout of {} s (raise it with FNABI_COMPILE_TIMEOUT=SECONDS or \
         --compile-timeout; 0 for none)",
        limit.as_secs_f64()
    )
}

/// Sets the compile timeout of every compile of this process that is not
/// given its own (`fnabi --compile-timeout`; both backends):
/// `Some(Some(t))` a timeout, `Some(None)` none, `None` back to the
/// environment and the default.
pub fn set_compile_timeout(timeout: Option<Option<Duration>>) {
    let ms = match timeout {
        None => 0,
        Some(None) => u64::MAX,
        Some(Some(t)) => u64::try_from(t.as_millis()).unwrap_or(u64::MAX - 1).clamp(1, u64::MAX - 1),
    };
    PROCESS_TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

/// The compile timeout in force for a compile not given its own: the one
/// set by [`set_compile_timeout`], else `FNABI_COMPILE_TIMEOUT` (seconds,
/// decimals allowed; `0` for none), else [`DEFAULT_COMPILE_TIMEOUT`]. A
/// variable that is not a number of seconds is an error.
pub fn compile_timeout_from_env() -> Result<Option<Duration>, ToolError> {
    match PROCESS_TIMEOUT_MS.load(Ordering::Relaxed) {
        0 => {}
        u64::MAX => return Ok(None),
        ms => return Ok(Some(Duration::from_millis(ms))),
    }
    match std::env::var("FNABI_COMPILE_TIMEOUT") {
        Err(_) => Ok(Some(DEFAULT_COMPILE_TIMEOUT)),
        Ok(v) => parse_timeout(&v).ok_or(ToolError::BadTimeout(v)),
    }
}

/// The deadline of a compile that starts now, with the limit it comes from:
/// `timeout` (`Duration::MAX`: none), else [`compile_timeout_from_env`]'s.
///
/// ```
/// use std::time::Duration;
/// let (at, limit) = fnabi_core::tool::deadline(Some(Duration::from_secs(5))).unwrap().unwrap();
/// assert!(limit == Duration::from_secs(5) && at > std::time::Instant::now());
/// assert!(fnabi_core::tool::deadline(Some(Duration::MAX)).unwrap().is_none()); // none
/// ```
pub fn deadline(timeout: Option<Duration>) -> Result<Option<(Instant, Duration)>, ToolError> {
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
/// use fnabi_core::tool::parse_timeout;
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
/// [`ToolError::Timeout`].
///
/// ```
/// use fnabi_core::tool::run_tool;
/// use std::ffi::OsStr;
/// use std::path::Path;
/// assert_eq!(run_tool(Path::new("/bin/echo"), &[OsStr::new("hi")], None, None).unwrap(), "hi");
/// ```
pub fn run_tool(
    tool: &Path,
    args: &[&OsStr],
    dir: Option<&Path>,
    deadline: Option<(Instant, Duration)>,
) -> Result<String, ToolError> {
    let name = || tool.file_name().unwrap_or(tool.as_os_str()).to_string_lossy().into_owned();
    let mut cmd = Command::new(tool);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut child =
        cmd.spawn().map_err(|e| ToolError::Io { context: format!("running {}", tool.display()), source: e })?;
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
            Err(e) => return Err(ToolError::Io { context: format!("waiting for {}", tool.display()), source: e }),
        }
        if let Some((at, limit)) = deadline {
            let now = Instant::now();
            if now >= at {
                kill_group(child.id());
                let _ = child.wait();
                let _ = (out.join(), err.join());
                return Err(ToolError::Timeout { tool: name(), limit });
            }
            nap = nap.min(at - now);
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    if !status.success() {
        return Err(ToolError::Failed {
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
        let e = run_tool(
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
        assert_eq!(run_tool(Path::new("/bin/echo"), &[OsStr::new("hi")], None, None).unwrap(), "hi");
    }
}
