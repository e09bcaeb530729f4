//! The progress line of a long compile (shared by the backends that
//! compile: MLIR's pipeline, `iree-compile`): after a second
//! (`FNABI_PROGRESS_AFTER_MS` changes that), the stage that runs and the
//! elapsed time, redrawn on stderr at each stage and every 200 ms — only
//! when stderr is a terminal (never in pipes or logs; `FNABI_NO_PROGRESS`
//! turns it off), and erased when the compile ends.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a compile runs before its progress shows.
fn quiet_for() -> Duration {
    let ms = std::env::var("FNABI_PROGRESS_AFTER_MS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1000);
    Duration::from_millis(ms)
}

struct State {
    stage: String,
    done: bool,
}

/// A running compile's progress line (a no-op off a terminal).
///
/// ```
/// use fnabi_core::progress::Progress;
/// // what a compiling backend does; nothing shows unless stderr is a
/// // terminal and the compile takes longer than a second
/// let progress = Progress::start("model.mlir");
/// progress.stage("mlir-opt");
/// progress.stage("llc");
/// drop(progress); // the compile ended: the line (if any) is erased
/// ```
pub struct Progress {
    shared: Option<Arc<(Mutex<State>, Condvar)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts timing the compile of `label`.
    pub fn start(label: &str) -> Progress {
        if !std::io::stderr().is_terminal() || std::env::var_os("FNABI_NO_PROGRESS").is_some() {
            return Progress { shared: None, thread: None };
        }
        let shared = Arc::new((Mutex::new(State { stage: "starting".into(), done: false }), Condvar::new()));
        let theirs = shared.clone();
        let label = label.to_owned();
        let quiet = quiet_for();
        let thread = std::thread::Builder::new()
            .name("fnabi-progress".into())
            .spawn(move || {
                let start = Instant::now();
                let (lock, cv) = &*theirs;
                let mut shown = false;
                let mut state = lock.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    let elapsed = start.elapsed();
                    let wait = quiet.saturating_sub(elapsed).max(Duration::from_millis(200));
                    state = cv.wait_timeout(state, wait).unwrap_or_else(|p| p.into_inner()).0;
                    if state.done {
                        break;
                    }
                    let elapsed = start.elapsed();
                    if elapsed >= quiet {
                        let mut err = std::io::stderr().lock();
                        let _ = write!(
                            err,
                            "\r\x1b[Kfnabi: compiling {label}: {} ({:.1} s)",
                            state.stage,
                            elapsed.as_secs_f64()
                        );
                        let _ = err.flush();
                        shown = true;
                    }
                }
                if shown {
                    let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
                }
            })
            .ok();
        Progress { shared: Some(shared), thread }
    }

    /// The stage now running (`mlir-opt`, `llc`, …).
    pub fn stage(&self, stage: &str) {
        if let Some(s) = &self.shared {
            s.0.lock().unwrap_or_else(|p| p.into_inner()).stage = stage.to_owned();
            // Redrawn now (once the compile has been quiet long enough).
            s.1.notify_all();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(s) = &self.shared {
            s.0.lock().unwrap_or_else(|p| p.into_inner()).done = true;
            s.1.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
