//! The CLI in a terminal: Ctrl-C, the progress line, row counts and history, driven
//! through a pseudo-terminal by Python's `pty` module (the standard library; the
//! interop venv's Python, or `python3`).
//!
//! The slow query is a cross join of two `generate_series` of 100,000 rows (10^10 rows
//! to count): it runs for far longer than any timeout here, so cancelling it is the only
//! way it ends. Timeouts are generous for a loaded machine.

use std::path::PathBuf;
use std::process::Command;

/// Runs the binary in a pseudo-terminal and plays a scenario: `send TEXT` writes to the
/// terminal, `expect TEXT` waits (up to 120 s) until TEXT appears in the output after the
/// previous match, `absent SECONDS TEXT` checks TEXT does not appear within SECONDS,
/// `idle SECONDS CPU` checks the child used at most CPU seconds of processor time (user
/// and system, all threads, from `/proc/PID/stat`; skipped without `/proc`) in SECONDS.
/// Prints the child's exit code last; exits 1 with the output so far on a failed step.
const DRIVER: &str = r#"
import json, os, pty, select, sys, time
steps = json.loads(sys.argv[1])
argv = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
buf = b""
pos = 0
def read(timeout):
    global buf
    r, _, _ = select.select([fd], [], [], timeout)
    if not r:
        return True
    try:
        data = os.read(fd, 65536)
    except OSError:
        return False
    if not data:
        return False
    buf += data
    return True
def fail(msg):
    sys.stderr.write(msg + "\n--- output ---\n" + buf.decode("utf-8", "replace") + "\n")
    sys.exit(1)
for kind, arg, *more in steps:
    if kind == "send":
        os.write(fd, arg.encode())
    elif kind == "expect":
        end = time.time() + 120
        while True:
            i = buf.find(arg.encode(), pos)
            if i >= 0:
                pos = i + len(arg)
                break
            if time.time() > end:
                fail("timeout waiting for " + repr(arg))
            if not read(0.2):
                i = buf.find(arg.encode(), pos)
                if i < 0:
                    fail("output ended waiting for " + repr(arg))
    elif kind == "absent":
        end = time.time() + float(arg)
        while time.time() < end:
            if not read(0.2):
                break
        if more[0].encode() in buf[pos:]:
            fail("unexpected " + repr(more[0]))
    elif kind == "idle":
        stat = "/proc/%d/stat" % pid
        if os.path.exists(stat):
            def cpu():
                with open(stat) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            before = cpu()
            end = time.time() + float(arg)
            while time.time() < end:
                read(0.2)
            used = cpu() - before
            if used > float(more[0]):
                fail("%.2f s of processor time in %s s while idle" % (used, arg))
while read(0.5):
    if len(buf) > 10_000_000:
        break
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"#;

const SLOW: &str = "SELECT count(*) FROM generate_series(1, 1000000) AS a(x) \
                    CROSS JOIN generate_series(1, 1000000) AS b(y);";

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ICEFLOE_PYTHON").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let ok = Command::new("python3")
        .arg("-c")
        .arg("import pty")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some(PathBuf::from("python3"))
    } else if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("the terminal tests need python3 (or ICEFLOE_PYTHON)");
    } else {
        eprintln!("\n*** SKIPPED: terminal tests (no python3) ***\n");
        None
    }
}

/// Play `steps` against `icefloe ARGS` in a terminal with HOME at `home`; returns the
/// exit code.
fn play(home: &std::path::Path, args: &[&str], steps: serde_json::Value) -> Option<i32> {
    let python = python()?;
    let out = Command::new(python)
        .arg("-c")
        .arg(DRIVER)
        .arg(steps.to_string())
        .arg(env!("CARGO_BIN_EXE_icefloe"))
        .args(args)
        .env("HOME", home)
        // a terminal rustyline drives in raw mode (it reads a "dumb" one as plain lines)
        .env("TERM", "xterm")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run the pty driver");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    Some(stdout.trim().parse().expect("exit code"))
}

#[test]
fn cli_repl_ctrl_c_cancels_the_query_and_a_second_leaves() {
    let home = tempfile::tempdir().unwrap();
    let steps = serde_json::json!([
        ["expect", "icefloe> "],
        ["send", format!("{SLOW}\r")],
        // the progress line, after about a second
        ["expect", "running: "],
        ["expect", "rows read"],
        ["send", "\u{3}"],
        ["expect", "query cancelled"],
        ["expect", "icefloe> "],
        // the cancelled query stopped computing: a join that emits batches without end
        // kept both runtime threads busy, and the next statement waited (~40 s here)
        ["idle", "3", "0.5"],
        // the shell still works, and prints the row count and time
        ["send", "SELECT 41 + 1 AS answer;\r"],
        ["expect", "42"],
        ["expect", "1 row in "],
        ["expect", "icefloe> "],
        // cancel again; the next Ctrl-C leaves
        ["send", format!("{SLOW}\r")],
        ["expect", "running: "],
        ["send", "\u{3}"],
        ["expect", "query cancelled"],
        ["expect", "icefloe> "],
        ["send", "\u{3}"],
    ]);
    let Some(code) = play(home.path(), &[], steps) else {
        return;
    };
    assert_eq!(code, 0);
    // history was saved after each statement
    let history = std::fs::read_to_string(home.path().join(".icefloe_history")).unwrap();
    assert!(history.contains("SELECT 41 + 1 AS answer;"), "{history}");
}

#[test]
fn cli_ctrl_c_stops_a_command_with_status_130() {
    let home = tempfile::tempdir().unwrap();
    let steps = serde_json::json!([["expect", "running: "], ["send", "\u{3}"]]);
    let Some(code) = play(home.path(), &["-c", SLOW], steps) else {
        return;
    };
    assert_eq!(code, 130);
}

#[test]
fn cli_quiet_has_no_progress_line() {
    let home = tempfile::tempdir().unwrap();
    let steps = serde_json::json!([["absent", "4", "running: "], ["send", "\u{3}"]]);
    let Some(code) = play(home.path(), &["--quiet", "-c", SLOW], steps) else {
        return;
    };
    assert_eq!(code, 130);
}

/// Lines that arrive together (typed ahead while a query runs, or written in one chunk)
/// all run: the line editor keeps what it read past the first line for the next prompt.
#[test]
fn cli_repl_runs_lines_typed_ahead() {
    let home = tempfile::tempdir().unwrap();
    let steps = serde_json::json!([
        ["expect", "icefloe> "],
        [
            "send",
            "SELECT 1 AS first_typed;\rSELECT 2 AS second_typed;\rSELECT\r3 AS continued;\r"
        ],
        // the result tables' headers (the echoed lines have no '|')
        ["expect", "| first_typed |"],
        ["expect", "| second_typed |"],
        ["expect", "| continued |"],
        ["expect", "icefloe> "],
        ["send", "\\q\r"],
    ]);
    let Some(code) = play(home.path(), &[], steps) else {
        return;
    };
    assert_eq!(code, 0);
}
