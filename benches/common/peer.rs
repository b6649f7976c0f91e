//! A peer engine of the query benches: one long-lived `benches/tpch_peers.py` process
//! (DuckDB's `iceberg_scan`, or PyIceberg scans + DuckDB SQL) spoken to in JSON lines over
//! its stdin/stdout, so Python's start-up and imports are never timed. The time of a query
//! is measured inside Python (`time.perf_counter()` around the query only); its result
//! comes back as an Arrow IPC file in a temp dir this side owns.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use datafusion::arrow::ipc::reader::FileReader;
use datafusion::arrow::record_batch::RecordBatch;
use serde_json::{json, Value};

use crate::common::{Args, BoxError};

/// The peer engines, in the order of the table's columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerKind {
    DuckDb,
    PyIceberg,
}

impl PeerKind {
    /// The `--engine` of `tpch_peers.py` and the name in `--peers`.
    pub fn name(self) -> &'static str {
        match self {
            PeerKind::DuckDb => "duckdb",
            PeerKind::PyIceberg => "pyiceberg",
        }
    }

    /// The column title.
    pub fn label(self) -> &'static str {
        match self {
            PeerKind::DuckDb => "DuckDB",
            PeerKind::PyIceberg => "PyIceberg",
        }
    }
}

/// The Python interpreter (`--python PATH`, else `$ICEFLOE_PYTHON`; none with
/// `--no-python`) and the peers to run (`--peers duckdb,pyiceberg`, default both), or no
/// peers without a Python.
pub fn peers_from_args(args: &Args) -> Result<(Option<String>, Vec<PeerKind>), BoxError> {
    if args.has("no-python") {
        return Ok((None, vec![]));
    }
    let python = args
        .get("python")
        .or_else(|| std::env::var("ICEFLOE_PYTHON").ok())
        .filter(|p| !p.is_empty());
    let Some(python) = python else {
        return Ok((None, vec![]));
    };
    let kinds = match args.get("peers") {
        None => vec![PeerKind::DuckDb, PeerKind::PyIceberg],
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| match s {
                "duckdb" => Ok(PeerKind::DuckDb),
                "pyiceberg" => Ok(PeerKind::PyIceberg),
                other => Err(format!(
                    "--peers: unknown peer '{other}' (duckdb, pyiceberg)"
                )),
            })
            .collect::<Result<_, _>>()?,
    };
    Ok((Some(python), kinds))
}

/// One running `tpch_peers.py --engine <kind>`; it is killed on drop.
pub struct Peer {
    pub kind: PeerKind,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Set once the process failed to answer: every later query reports it.
    dead: Option<String>,
    /// The engine's versions, as the process reports them.
    pub versions: String,
}

/// The answer to one query: the time measured in Python, the row count, and the rows
/// when an output file was asked for.
pub struct PeerRun {
    pub time: Duration,
    pub rows: u64,
    pub batches: Option<Vec<RecordBatch>>,
}

impl Peer {
    /// Start the process and wait for it to be ready (its imports done).
    pub fn start(python: &str, kind: PeerKind) -> Result<Self, BoxError> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/tpch_peers.py");
        let mut child = Command::new(python)
            .arg(&script)
            .args(["--engine", kind.name()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot run '{python} {}': {e}", script.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut peer = Peer {
            kind,
            child,
            stdin,
            stdout,
            dead: None,
            versions: String::new(),
        };
        let ready = peer
            .receive()
            .map_err(|e| format!("{} peer did not start: {e}", kind.label()))?;
        peer.versions = ready["versions"].as_str().unwrap_or("?").to_string();
        Ok(peer)
    }

    fn receive(&mut self) -> Result<Value, String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) => Err("the peer process exited".into()),
            Ok(_) => serde_json::from_str(&line).map_err(|e| format!("bad answer '{line}': {e}")),
            Err(e) => Err(format!("cannot read the peer's answer: {e}")),
        }
    }

    /// Send one command and read its answer; `Err` when the engine failed (its message)
    /// or the process is gone (then every later call fails too).
    fn call(&mut self, cmd: Value) -> Result<Value, String> {
        if let Some(e) = &self.dead {
            return Err(e.clone());
        }
        let sent = writeln!(self.stdin, "{cmd}").and_then(|_| self.stdin.flush());
        let answer = match sent {
            Ok(()) => self.receive(),
            Err(e) => Err(format!("cannot write to the peer process: {e}")),
        };
        match answer {
            Ok(v) if v["ok"].as_bool() == Some(true) => Ok(v),
            Ok(v) => Err(v["error"].as_str().unwrap_or("failed").to_string()),
            Err(e) => {
                self.dead = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Name the tables: `(name, current metadata file)`.
    pub fn tables(&mut self, tables: &[(String, String)]) -> Result<(), String> {
        let map: serde_json::Map<String, Value> = tables
            .iter()
            .map(|(n, m)| (n.clone(), Value::String(m.clone())))
            .collect();
        self.call(json!({"cmd": "tables", "tables": map}))
            .map(|_| ())
    }

    /// Run `sql` once; with `out`, the result is written there as Arrow IPC and read back.
    pub fn query(&mut self, sql: &str, out: Option<&Path>) -> Result<PeerRun, String> {
        let v = self.call(json!({
            "cmd": "query",
            "sql": sql,
            "out": out.map(|p| p.to_string_lossy().into_owned()),
        }))?;
        let time = Duration::from_secs_f64(v["seconds"].as_f64().ok_or("no seconds")?);
        let rows = v["rows"].as_u64().ok_or("no rows")?;
        let batches = match out {
            Some(p) => Some(read_ipc(p).map_err(|e| format!("{}: {e}", p.display()))?),
            None => None,
        };
        Ok(PeerRun {
            time,
            rows,
            batches,
        })
    }

    /// PyIceberg only: the time of `scan(row_filter, limit).plan_files()` of `table` and the
    /// number of files planned, or with `count` the time of `scan().count()` and the count.
    pub fn plan(
        &mut self,
        table: &str,
        row_filter: Option<&str>,
        limit: Option<usize>,
        count: bool,
    ) -> Result<(Duration, u64), String> {
        let v = self.call(json!({
            "cmd": "plan",
            "table": table,
            "row_filter": row_filter,
            "limit": limit,
            "count": count,
        }))?;
        let time = Duration::from_secs_f64(v["seconds"].as_f64().ok_or("no seconds")?);
        Ok((time, v["result"].as_u64().ok_or("no result")?))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A table cell for an error message (one line, no `|`, at most 60 characters).
pub fn error_cell(e: &str) -> String {
    let line = e.lines().next().unwrap_or("").replace('|', "/");
    let short: String = line.chars().take(60).collect();
    format!(
        "error: {short}{}",
        if short.len() < line.len() { "…" } else { "" }
    )
}

/// The record batches of an Arrow IPC file.
pub fn read_ipc(path: &Path) -> Result<Vec<RecordBatch>, BoxError> {
    let reader = FileReader::try_new(std::fs::File::open(path)?, None)?;
    Ok(reader.collect::<Result<Vec<_>, _>>()?)
}

/// The file for a query's result in `dir`.
pub fn result_file(dir: &Path, kind: PeerKind, query: usize) -> PathBuf {
    dir.join(format!("{}-q{query:02}.arrow", kind.name()))
}
