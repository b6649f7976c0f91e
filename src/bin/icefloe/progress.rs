//! The progress line: for a query running longer than a second, one line on standard
//! error, redrawn four times a second, with the rows read by the plan's leaves (scans),
//! the bytes and data files the Iceberg scans read, and the elapsed time. It is erased
//! when the query ends. Only shown when standard error is a terminal and `--quiet` is
//! not given (the caller decides).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::physical_plan::ExecutionPlan;

/// Shown after this long.
const DELAY: Duration = Duration::from_secs(1);
/// Redrawn this often.
const INTERVAL: Duration = Duration::from_millis(250);

/// A running progress line; dropping it stops and erases it.
///
/// It runs on its own thread: the query's CPU-bound work may keep every runtime worker
/// busy, and the line must still be drawn.
pub struct Progress {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    shown: Arc<AtomicBool>,
}

impl Progress {
    /// Start watching `plan` (already executing).
    pub fn start(plan: Arc<dyn ExecutionPlan>) -> Self {
        let shown = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&shown);
        let started = Instant::now();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let mut wait = DELAY;
            // a message or a closed channel both mean stop
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                let line = line(plan.as_ref(), started.elapsed());
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[K{line}");
                let _ = err.flush();
                flag.store(true, Ordering::SeqCst);
                wait = INTERVAL;
            }
        });
        Self {
            stop: Some(stop),
            thread: Some(thread),
            shown,
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if self.shown.load(Ordering::SeqCst) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

#[derive(Default)]
struct Counts {
    rows: usize,
    bytes: usize,
    files: usize,
}

fn collect(plan: &dyn ExecutionPlan, counts: &mut Counts) {
    if let Some(m) = plan.metrics() {
        if plan.children().is_empty() {
            counts.rows += m.output_rows().unwrap_or(0);
        }
        counts.bytes += m.sum_by_name("bytes_scanned").map_or(0, |v| v.as_usize());
        counts.files += m
            .sum_by_name("iceberg_data_files_planned")
            .map_or(0, |v| v.as_usize());
    }
    for child in plan.children() {
        collect(child.as_ref(), counts);
    }
}

fn line(plan: &dyn ExecutionPlan, elapsed: Duration) -> String {
    let mut c = Counts::default();
    collect(plan, &mut c);
    format!(
        "running: {} rows read, {} bytes from {} data files, {:.1} s (Ctrl-C cancels)",
        crate::pruning::thousands(c.rows),
        crate::pruning::thousands(c.bytes),
        crate::pruning::thousands(c.files),
        elapsed.as_secs_f64()
    )
}
