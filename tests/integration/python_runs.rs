//! Runs of the interop scripts (`tests/interop/*.py`) through one fork server per test
//! process (`tests/interop/forkserver.py`): a Python that imported PyIceberg once and
//! forks a child per run, so that the ~600 runs of a test process do not each import it
//! (about 1.1 s of processor time per run on this project's 2-core machine).
//!
//! The server is started on first use, with its socket in a directory of its own under
//! the system temporary directory; it removes the socket and the directory when its
//! stdin, a pipe this process holds until it exits, ends. A child behaves as
//! `python SCRIPT ARGS...`: stdout, stderr and exit status are the script's, stdin is
//! empty.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Value};

/// What a run of a script gave.
pub(crate) struct Run {
    /// The exit status: 0 for success.
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// The running server: its socket, and the process, whose stdin (the pipe whose end
/// stops it) it holds; not waited for: it ends when this process does.
struct Server {
    socket: PathBuf,
    _process: Mutex<Child>,
}

static SERVER: OnceLock<Server> = OnceLock::new();

/// The fork server of this process, started with `python` on first use.
fn server(python: &Path) -> &'static Server {
    SERVER.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("icefloe-py-")
            .tempdir()
            .expect("a directory for the Python fork server's socket")
            .keep();
        let socket = dir.join("s");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/forkserver.py");
        let mut child = Command::new(python)
            .arg(&script)
            .arg(&socket)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONHASHSEED", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the fork server's first line");
        assert_eq!(
            line.trim(),
            "ready",
            "the Python fork server did not start (its error is above)"
        );
        Server {
            socket,
            _process: Mutex::new(child),
        }
    })
}

/// Runs `script` with `args` and the extra environment `env` as `python SCRIPT ARGS...`
/// would, in a child of this process's fork server started with `python`.
///
/// Panics for a `PYICEBERG_*` variable in `env`: PyIceberg read its environment when the
/// server imported it, so the run would not see it.
pub(crate) fn run(python: &Path, script: &Path, args: &[&OsStr], env: &[(&str, &str)]) -> Run {
    if let Some((name, _)) = env.iter().find(|(k, _)| k.starts_with("PYICEBERG_")) {
        panic!("{name}: PyIceberg's settings cannot be given per run of the fork server");
    }
    let server = server(python);
    let out = tempfile::tempdir().expect("a directory for a script's output");
    let (stdout, stderr) = (out.path().join("stdout"), out.path().join("stderr"));
    let text = |p: &OsStr| {
        p.to_str()
            .unwrap_or_else(|| panic!("{p:?}: arguments to the Python scripts are UTF-8"))
            .to_string()
    };
    let env: serde_json::Map<String, Value> = env
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from(*v)))
        .collect();
    let request = json!({
        "script": text(script.as_os_str()),
        "args": args.iter().map(|a| text(a)).collect::<Vec<_>>(),
        "env": env,
        "stdout": text(stdout.as_os_str()),
        "stderr": text(stderr.as_os_str()),
    });
    let mut conn = UnixStream::connect(&server.socket).unwrap_or_else(|e| {
        panic!(
            "cannot reach the Python fork server at {}: {e}",
            server.socket.display()
        )
    });
    conn.write_all(format!("{request}\n").as_bytes())
        .expect("send a run to the Python fork server");
    let mut status = String::new();
    conn.read_to_string(&mut status)
        .expect("the exit status of a run of the Python fork server");
    let read = |p: &Path| std::fs::read(p).unwrap_or_default();
    let (stdout, stderr) = (read(&stdout), read(&stderr));
    let code = status.trim().parse().unwrap_or_else(|_| {
        panic!(
            "{}: the child of the Python fork server ended without a status ({status:?}):\n{}",
            script.display(),
            String::from_utf8_lossy(&stderr)
        )
    });
    Run {
        code,
        stdout,
        stderr,
    }
}

/// A run ends as `python SCRIPT` ends: Python's exit statuses, the script's atexit
/// handlers and thread pools, its output; `PYICEBERG_*` variables per run are refused.
#[test]
fn a_run_ends_as_python_ends() {
    let Some(python) = crate::interop::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("probe.py");
    std::fs::write(
        &script,
        "import atexit, sys\n\
         from concurrent.futures import ThreadPoolExecutor\n\
         mode = sys.argv[1]\n\
         atexit.register(lambda: print('atexit ran'))\n\
         print(sum(ThreadPoolExecutor(2).map(lambda x: x * 2, range(4))))\n\
         if mode == 'kbd':\n    raise KeyboardInterrupt\n\
         if mode != 'plain':\n    sys.exit({'true': True, '256': 256, 'neg': -1, 'str': 'no'}[mode])\n",
    )
    .unwrap();
    for (mode, code) in [
        ("plain", 0),
        ("true", 1),
        ("256", 0),
        ("neg", 255),
        ("kbd", 130),
        ("str", 1),
    ] {
        let out = run(&python, &script, &[OsStr::new(mode)], &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.code,
            code,
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(stdout, "12\natexit ran\n", "{mode}");
    }
    let refused = std::panic::catch_unwind(|| {
        run(
            &python,
            &script,
            &[OsStr::new("plain")],
            &[("PYICEBERG_CATALOG__X__URI", "y")],
        )
    });
    assert!(refused.is_err());
}
