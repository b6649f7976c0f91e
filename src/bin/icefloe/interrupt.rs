//! Ctrl-C, received independently of the runtime.
//!
//! A query's CPU-bound work can keep every worker of the runtime busy, and Tokio only
//! notices signals when a worker is idle; so SIGINT is counted by a plain signal handler
//! (an atomic increment, async-signal-safe) and a watcher thread passes each one on
//! through a watch channel, which wakes the waiting statement at once. With
//! [`Mode::Exit`] (statements from `-c` or `-f`) the watcher ends the process with
//! status 130 itself, after removing the pending `-o` file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::watch;

static SIGNALS: AtomicU64 = AtomicU64::new(0);
static WATCH: OnceLock<watch::Receiver<u64>> = OnceLock::new();
/// Temporary output files to remove when Ctrl-C ends the process.
static PENDING_FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// What Ctrl-C does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// End the process with status 130.
    Exit,
    /// Wake [`ctrl_c`] futures (the shell cancels the running statement).
    Notify,
}

/// Start handling Ctrl-C (once; later calls do nothing). From now on SIGINT no longer
/// ends the process by itself.
pub fn install(mode: Mode) {
    WATCH.get_or_init(|| {
        let (tx, rx) = watch::channel(0u64);
        if arm() {
            std::thread::spawn(move || {
                let mut seen = 0;
                loop {
                    std::thread::sleep(Duration::from_millis(50));
                    let now = SIGNALS.load(Ordering::SeqCst);
                    if now == seen {
                        continue;
                    }
                    seen = now;
                    if mode == Mode::Exit {
                        if let Ok(files) = PENDING_FILES.lock() {
                            for f in files.iter() {
                                let _ = std::fs::remove_file(f);
                            }
                        }
                        eprintln!("interrupted");
                        std::process::exit(130);
                    }
                    tx.send_replace(now);
                }
            });
        }
        rx
    });
}

extern "C" fn on_sigint(_: libc::c_int) {
    SIGNALS.fetch_add(1, Ordering::SeqCst);
}

/// (Re)install the SIGINT handler. The line editor installs its own while it reads a
/// line and leaves it in place, so the shell calls this before running each statement.
/// Returns whether the handler is installed.
pub fn arm() -> bool {
    // SAFETY: a zeroed `sigaction` is a valid value to fill in; the handler only
    // increments an atomic, which is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()) == 0
    }
}

/// Remove `path` (a temporary output file) if Ctrl-C ends the process.
pub fn remove_on_exit(path: PathBuf) {
    if let Ok(mut files) = PENDING_FILES.lock() {
        files.push(path);
    }
}

/// Completes at the next Ctrl-C after this call (never, without [`Mode::Notify`]).
pub async fn ctrl_c() {
    let Some(rx) = WATCH.get() else {
        return std::future::pending().await;
    };
    let mut rx = rx.clone();
    rx.borrow_and_update();
    if rx.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}
