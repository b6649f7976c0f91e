//! Test servers (SeaweedFS, Azurite) run under a small `sh` guard that outlives nothing.
//!
//! The guard starts the server in the background, then reads its stdin: a pipe whose other
//! end only this test process holds. When the process exits (normally, by panic or by
//! signal), or when [`Guarded::stop`] drops the pipe, the guard stops the server (SIGTERM,
//! SIGKILL after 5 s) and removes the server's directory.
//!
//! The guard also writes `<dir>/server.exit` with the server's exit status when the server
//! ends by itself, so a start that failed (a port taken between picking it free and the
//! server binding it, a bad flag) is seen at once ([`Guarded::exited`]) instead of after the
//! readiness deadline, and the caller can retry on fresh ports.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A server process under its guard.
#[derive(Debug)]
pub struct Guarded {
    dir: PathBuf,
    log: PathBuf,
    child: Mutex<Child>,
}

// The watcher subshell starts the server and waits for it (reaping it, so the exit is seen:
// a dead child nobody waits for would still answer `kill -0`), then writes `server.exit`.
// The guard reads stdin until it closes, then stops the server by the pid the watcher wrote.
const SCRIPT: &str = r#"
bin="$1"; dir="$2"; log="$3"; shift 3
( "$bin" "$@" >"$log" 2>&1 </dev/null &
  echo $! > "$dir/server.pid.tmp" && mv "$dir/server.pid.tmp" "$dir/server.pid"
  wait $!
  echo "$?" > "$dir/server.exit" ) 2>/dev/null &
watcher=$!
while read -r _line; do :; done
n=0
while [ ! -s "$dir/server.pid" ] && [ "$n" -lt 50 ]; do sleep 0.1; n=$((n+1)); done
pid="$(cat "$dir/server.pid" 2>/dev/null)"
if [ -n "$pid" ]; then
  kill -TERM "$pid" 2>/dev/null
  n=0
  while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 50 ]; do sleep 0.1; n=$((n+1)); done
  kill -KILL "$pid" 2>/dev/null
fi
wait "$watcher" 2>/dev/null
rm -rf "$dir"
"#;

impl Guarded {
    /// Start `program args…` under a guard, its output going to `<dir>/<log_name>`; `dir`
    /// (a fresh temporary directory the caller made) is removed when the guard stops.
    pub fn spawn(
        name: &str,
        program: &Path,
        dir: &Path,
        log_name: &str,
        args: &[String],
        envs: &[(&str, &str)],
    ) -> Result<Guarded, String> {
        let log = dir.join(log_name);
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(SCRIPT)
            .arg(format!("{name}-guard"))
            .arg(program)
            .arg(dir)
            .arg(&log)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        Ok(Guarded {
            dir: dir.to_path_buf(),
            log,
            child: Mutex::new(child),
        })
    }

    /// The server's output so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last `n` lines of the server's output.
    pub fn log_tail(&self, n: usize) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Whether the server ended by itself (it never does while it serves).
    pub fn exited(&self) -> bool {
        self.dir.join("server.exit").exists()
    }

    /// Stop the server now and wait (at most 10 s) for the guard to remove its directory.
    pub fn stop(self) {
        let mut child = match self.child.into_inner() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        drop(child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Start a server up to `attempts` times: `attempt(n)` spawns one (on fresh ports) and
/// `ready` polls it every 50 ms until it serves (`Ok(Some(_))`), fails for good (`Err`), or
/// `deadline` passes. A server that exits or misses the deadline is stopped and the next
/// attempt starts; the error after the last names every attempt's failure with its log.
pub fn start_with_retries<S>(
    what: &str,
    attempts: usize,
    deadline: Duration,
    mut attempt: impl FnMut(usize) -> Result<(Guarded, S), String>,
    mut ready: impl FnMut(&Guarded, &S) -> bool,
) -> Result<(Guarded, S), String> {
    let mut failures = Vec::new();
    for n in 1..=attempts {
        let (guard, server) = attempt(n)?;
        let started = Instant::now();
        let failure = loop {
            if ready(&guard, &server) {
                eprintln!(
                    "{what}: ready in {:.1}s (attempt {n})",
                    started.elapsed().as_secs_f64()
                );
                return Ok((guard, server));
            }
            if guard.exited() {
                break format!(
                    "attempt {n}: the server exited after {:.1}s; its log ends:\n{}",
                    started.elapsed().as_secs_f64(),
                    guard.log_tail(30)
                );
            }
            if started.elapsed() > deadline {
                break format!(
                    "attempt {n}: not ready after {} s; its log ends:\n{}",
                    deadline.as_secs(),
                    guard.log_tail(30)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        eprintln!("{what}: {failure}");
        failures.push(failure);
        guard.stop();
    }
    Err(failures.join("\n"))
}

/// A server that exits at once is seen as exited (well before the deadline) and the next
/// attempt starts; the directory of each stopped attempt is removed by its guard.
#[test]
fn an_exited_start_is_retried_at_once() {
    let mut dirs = Vec::new();
    let started = Instant::now();
    let (guard, n) = start_with_retries(
        "test server",
        3,
        Duration::from_secs(60),
        |n| {
            let dir = tempfile::Builder::new()
                .prefix("icefloe-guarded-")
                .tempdir()
                .map_err(|e| e.to_string())?
                .keep();
            dirs.push(dir.clone());
            // the first attempt exits with an error, the second keeps running
            let (program, args) = if n == 1 {
                ("false", vec![])
            } else {
                ("sleep", vec!["60".to_string()])
            };
            let guard = Guarded::spawn("test", Path::new(program), &dir, "out.log", &args, &[])?;
            Ok((guard, n))
        },
        |guard, n| *n == 2 && !guard.exited(),
    )
    .expect("the second attempt serves");
    assert_eq!(n, 2);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the exit was not seen early: {:?}",
        started.elapsed()
    );
    assert!(!dirs[0].exists(), "the failed attempt's directory is left");
    guard.stop();
    assert!(!dirs[1].exists(), "the stopped server's directory is left");

    // every attempt failing names each failure
    let err = start_with_retries(
        "test server",
        2,
        Duration::from_secs(60),
        |_| {
            let dir = tempfile::Builder::new()
                .prefix("icefloe-guarded-")
                .tempdir()
                .map_err(|e| e.to_string())?
                .keep();
            let guard = Guarded::spawn(
                "test",
                Path::new("sh"),
                &dir,
                "out.log",
                &["-c".to_string(), "echo port taken; exit 3".to_string()],
                &[],
            )?;
            Ok((guard, ()))
        },
        |_, _| false,
    )
    .expect_err("no attempt serves");
    assert!(err.contains("attempt 1: the server exited"), "{err}");
    assert!(err.contains("attempt 2: the server exited"), "{err}");
    assert!(err.contains("port taken"), "{err}");
}
