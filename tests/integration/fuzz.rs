//! Structure-aware mutation fuzzing on stable Rust (issue 16 item 12), with proptest.
//!
//! Valid tables from the reader corpus (v1, v2 with position and equality deletes, v3
//! with deletion vectors in Puffin files, nested types) are copied once; each case
//! mutates one of their files, runs open → plan → read through DataFusion, and puts the
//! file back. Mutations: byte flips anywhere, byte flips near the end (Parquet and Puffin
//! footers, Avro sync markers), truncations, inserted bytes, and field mutations:
//! a value in the table metadata JSON replaced or removed, a field of an Avro record of a
//! manifest list or manifest replaced (re-encoded with the file's own schema and
//! metadata, so the file is valid Avro holding values a broken writer could produce).
//!
//! The property: no panic reaches the caller, and none happens in icefloe's own code (a
//! panic hook records the panics of the threads working for the case: the test's thread
//! and its runtime's; other tests' panics in the same binary are reported as usual and
//! never counted here); a dependency's panic that icefloe catches
//! must come back as an error naming the file. Only dependency panics listed in
//! `KNOWN_UPSTREAM_PANICS` (none today) may escape (counted and printed). And every
//! failure is an error whose message names a file of the table (its path or its name),
//! errors from decoding a Parquet data file's pages inside DataFusion's scan included,
//! with no doubled "Parquet error: Parquet error:".
//!
//! Bounded for CI: `ICEFLOE_FUZZ_CASES` cases in all (default 1,500: about a minute on 2
//! shared cores in a debug build), the same cases every run (`ICEFLOE_FUZZ_SEED`, default
//! 16, picks others). A longer run, e.g.:
//! `ICEFLOE_FUZZ_CASES=50000 ICEFLOE_FUZZ_SEED=$RANDOM cargo test --release --features distributed --test integration fuzz:: -- --nocapture`.
//! `tests/integration/fuzz_parsers.rs` runs the same mutations straight into each parser,
//! many more cases in the same time.
//! `ICEFLOE_CORPUS` picks the corpus as for the conformance run (default
//! `../shared/corpus`, else the tables committed in `testdata/corpus`).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use apache_avro::types::Value as AvroValue;
use datafusion::catalog::TableProvider;
use datafusion::prelude::SessionContext;
use icefloe::IcebergTableProvider;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use serde_json::Value as JsonValue;

use crate::fixtures::copy_dir;

pub(super) const TABLES: [&str; 5] = [
    "spark_v1_types_identity",
    "spark_v2_mor_position_deletes",
    "spark_v2_equality_deletes_partitioned",
    "spark_v2_nested",
    "spark_v3_deletion_vectors",
];

/// The corpus holding all of `tables`.
pub(super) fn corpus(tables: &[&str]) -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = match std::env::var("ICEFLOE_CORPUS") {
        Ok(p) if !p.is_empty() => PathBuf::from(p),
        _ => crate_dir.join("../shared/corpus"),
    };
    if tables.iter().all(|t| shared.join(t).is_dir()) {
        shared
    } else {
        crate_dir.join("testdata/corpus")
    }
}

/// Panics inside dependencies that may escape to the caller: none. The decoders' panics
/// on corrupt input found so far (`parquet` 59.3.2: a DATA_PAGE header without its
/// `data_page_header`, a footer length beyond the file, a store's short read taken for
/// a whole range; `arrow-buffer`: a validity bitmap shorter than its values) are caught
/// by icefloe's Parquet reader and the scan's wrapper and come back as errors naming the
/// data file. An entry here (a path in the panic's location) lets a newly found one pass
/// while it is reported upstream.
const KNOWN_UPSTREAM_PANICS: [&str; 0] = [];

/// Panics recorded for one fuzz test: their locations and messages.
pub(super) type PanicLog = Arc<Mutex<Vec<(String, String)>>>;

thread_local! {
    /// Where a panic on this thread is recorded: set on the threads working for a fuzz
    /// test (its runtime's workers and blocking threads, and the test's own thread
    /// while a case runs), unset everywhere else.
    static PANIC_LOG: RefCell<Option<PanicLog>> = const { RefCell::new(None) };
}

/// Record this thread's panics in `log` (`None`: report them as usual again).
pub(super) fn record_panics_here(log: Option<PanicLog>) {
    PANIC_LOG.with(|l| *l.borrow_mut() = log);
}

/// A panic hook (installed once per test binary) recording panics on threads marked by
/// [`record_panics_here`] and handing every other panic to the hook before it: a test
/// running beside a fuzz test (same binary, other thread) panics as usual, and its
/// panics are never taken for the fuzz case's.
pub(super) fn install_panic_recorder() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let log = PANIC_LOG
                .try_with(|l| l.try_borrow().ok().and_then(|l| l.clone()))
                .ok()
                .flatten();
            let Some(log) = log else {
                return previous(info);
            };
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            if let Ok(mut panics) = log.lock() {
                panics.push((location, info.to_string()));
            };
        }));
    });
}

/// A runtime whose threads (workers and blocking pool) record their panics in `log`.
pub(super) fn fuzz_runtime(log: &PanicLog) -> tokio::runtime::Runtime {
    let log = Arc::clone(log);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .on_thread_start(move || record_panics_here(Some(Arc::clone(&log))))
        .enable_all()
        .build()
        .expect("runtime")
}

/// Run `case` on this thread with its panics (and those of `rt`'s threads, which record
/// in the same log) recorded in `log`, cleared first: what `case` returned (or `None`
/// when a panic escaped it) and the panics seen.
pub(super) fn run_recorded<T>(
    log: &PanicLog,
    case: impl FnOnce() -> T,
) -> (Option<T>, Vec<(String, String)>) {
    log.lock().expect("panics").clear();
    record_panics_here(Some(Arc::clone(log)));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(case)).ok();
    record_panics_here(None);
    let panics = std::mem::take(&mut *log.lock().expect("panics"));
    (outcome, panics)
}

/// Whether a panic at `location` is one of [`KNOWN_UPSTREAM_PANICS`].
fn is_known_upstream(location: &str) -> bool {
    KNOWN_UPSTREAM_PANICS.iter().any(|k| location.contains(k))
}

/// The rules both fuzz layers hold a case to, given what [`run_recorded`] returned
/// (`what` names the mutated input in failures): no panic in icefloe's own code; a panic
/// that escaped only if it is a known upstream one (counted in `upstream_panics`); a
/// dependency's panic that icefloe caught must have become an error; no doubled
/// "Parquet error:" prefix. Returns the case's error message, if it ended in one, for
/// the caller's check that it names the file.
pub(super) fn judge_case(
    what: &str,
    outcome: Option<Result<(), String>>,
    panics: &[(String, String)],
    upstream_panics: &AtomicUsize,
) -> Result<Option<String>, TestCaseError> {
    let fail = |location: &str, message: &str| {
        Err(TestCaseError::fail(format!(
            "{} panic(s) reading mutated {what}, at {location}: {message}",
            panics.len()
        )))
    };
    if let Some((location, message)) = panics.iter().find(|(l, _)| l.starts_with("src/")) {
        return fail(location, message);
    }
    let Some(outcome) = outcome else {
        return match panics.iter().find(|(l, _)| !is_known_upstream(l)) {
            Some((location, message)) => fail(location, message),
            None if panics.is_empty() => fail("?", "a panic without a location"),
            None => {
                upstream_panics.fetch_add(1, Ordering::SeqCst);
                Ok(None)
            }
        };
    };
    if let (Some((location, message)), Ok(())) = (panics.first(), &outcome) {
        return fail(location, message);
    }
    match outcome {
        Err(message) if message.contains("Parquet error: Parquet error:") => Err(
            TestCaseError::fail(format!("doubled prefix reading mutated {what}: {message}")),
        ),
        Err(message) => Ok(Some(message)),
        Ok(()) => Ok(None),
    }
}

/// A replacement for a JSON or Avro value.
#[derive(Debug, Clone)]
pub(super) enum Replacement {
    Remove,
    Null,
    Int(i64),
    Text(String),
    EmptyList,
    /// The value's own kind, changed a little (a number ± 1, a string with a flipped
    /// character, a list or map missing an element).
    Nudge(i64),
}

pub(super) fn replacement() -> impl Strategy<Value = Replacement> {
    prop_oneof![
        Just(Replacement::Remove),
        Just(Replacement::Null),
        prop_oneof![
            Just(0i64),
            Just(-1),
            Just(i64::MAX),
            Just(i64::MIN),
            Just(i64::from(i32::MAX)),
            Just(i64::from(i32::MIN)),
            any::<i64>(),
            -3i64..3000,
        ]
        .prop_map(Replacement::Int),
        prop_oneof![Just(String::new()), "[a-z/%.:]{0,12}"].prop_map(Replacement::Text),
        Just(Replacement::EmptyList),
        (-2i64..=2).prop_map(Replacement::Nudge),
    ]
}

#[derive(Debug, Clone)]
pub(super) enum Mutation {
    /// XOR `count` bytes from `at` with `mask`.
    Flip { at: Index, mask: u8, count: usize },
    /// XOR one byte `back` bytes before the end (footers, trailing sync markers).
    FlipTail { back: usize, mask: u8 },
    /// Keep only the first part of the file.
    Truncate { at: Index },
    /// Insert bytes.
    Insert { at: Index, bytes: Vec<u8> },
    /// Replace a value reached by `path` (indexes into objects/arrays or records/arrays)
    /// in the JSON document or in one record of the Avro file.
    Field {
        record: Index,
        path: Vec<Index>,
        with: Replacement,
    },
}

pub(super) fn mutation() -> impl Strategy<Value = Mutation> {
    let mask = 1u8..=255;
    prop_oneof![
        2 => (any::<Index>(), mask.clone(), 1usize..4)
            .prop_map(|(at, mask, count)| Mutation::Flip { at, mask, count }),
        2 => (0usize..64, mask).prop_map(|(back, mask)| Mutation::FlipTail { back, mask }),
        1 => any::<Index>().prop_map(|at| Mutation::Truncate { at }),
        1 => (any::<Index>(), proptest::collection::vec(any::<u8>(), 1..9))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        5 => (any::<Index>(), proptest::collection::vec(any::<Index>(), 1..6), replacement())
            .prop_map(|(record, path, with)| Mutation::Field { record, path, with }),
    ]
}

/// The bytes of `original` mutated, or `None` when the mutation does not apply (a field
/// mutation of a file that is neither JSON nor Avro, or one that yields no valid Avro).
pub(super) fn mutate(name: &str, original: &[u8], m: &Mutation) -> Option<Vec<u8>> {
    let mut b = original.to_vec();
    match m {
        Mutation::Flip { at, mask, count } => {
            if b.is_empty() {
                return None;
            }
            let start = at.index(b.len());
            for byte in b.iter_mut().skip(start).take(*count) {
                *byte ^= mask;
            }
        }
        Mutation::FlipTail { back, mask } => {
            let i = b.len().checked_sub(1 + back)?;
            b[i] ^= mask;
        }
        Mutation::Truncate { at } => b.truncate(at.index(b.len().max(1))),
        Mutation::Insert { at, bytes } => {
            let i = at.index(b.len() + 1);
            b.splice(i..i, bytes.iter().copied());
        }
        Mutation::Field { record, path, with } => {
            if name.ends_with(".json") {
                let mut doc: JsonValue = serde_json::from_slice(original).ok()?;
                mutate_json(&mut doc, path, with);
                b = serde_json::to_vec(&doc).ok()?;
            } else if name.ends_with(".avro") {
                b = mutate_avro(original, *record, path, with)?;
            } else {
                return None;
            }
        }
    }
    Some(b)
}

fn mutate_json(v: &mut JsonValue, path: &[Index], with: &Replacement) {
    let Some((first, rest)) = path.split_first() else {
        *v = match (with, &*v) {
            (Replacement::Remove | Replacement::Null, _) => JsonValue::Null,
            (Replacement::Int(i), _) => (*i).into(),
            (Replacement::Text(s), _) => s.clone().into(),
            (Replacement::EmptyList, _) => JsonValue::Array(vec![]),
            (Replacement::Nudge(d), JsonValue::Number(n)) => n
                .as_i64()
                .map(|i| i.wrapping_add(*d).into())
                .unwrap_or(JsonValue::Null),
            (Replacement::Nudge(_), JsonValue::String(s)) => format!("{s}x").into(),
            (Replacement::Nudge(_), other) => other.clone(),
        };
        return;
    };
    match v {
        JsonValue::Object(o) if !o.is_empty() => {
            let key = o
                .keys()
                .nth(first.index(o.len()))
                .cloned()
                .unwrap_or_default();
            if rest.is_empty() && matches!(with, Replacement::Remove) {
                o.remove(&key);
            } else if let Some(child) = o.get_mut(&key) {
                mutate_json(child, rest, with);
            }
        }
        JsonValue::Array(a) if !a.is_empty() => {
            let i = first.index(a.len());
            if rest.is_empty() && matches!(with, Replacement::Remove) {
                a.remove(i);
            } else {
                mutate_json(&mut a[i], rest, with);
            }
        }
        leaf => mutate_json(leaf, &[], with),
    }
}

/// One record of the Avro file with a value replaced, written back with the file's
/// schema and metadata; `None` when the replaced value does not fit the schema.
fn mutate_avro(bytes: &[u8], record: Index, path: &[Index], with: &Replacement) -> Option<Vec<u8>> {
    let reader = apache_avro::Reader::new(bytes).ok()?;
    let schema = reader.writer_schema().clone();
    let metadata = reader.user_metadata().clone();
    let mut records: Vec<AvroValue> = reader.collect::<Result<_, _>>().ok()?;
    if records.is_empty() {
        return None;
    }
    let i = record.index(records.len());
    mutate_avro_value(&mut records[i], path, with);
    let mut writer = apache_avro::Writer::new(&schema, Vec::new());
    for (k, v) in metadata {
        writer.add_user_metadata(k, v).ok()?;
    }
    for r in records {
        writer.append(r).ok()?;
    }
    writer.into_inner().ok()
}

fn mutate_avro_value(v: &mut AvroValue, path: &[Index], with: &Replacement) {
    if let Some((first, rest)) = path.split_first() {
        match v {
            AvroValue::Record(fields) if !fields.is_empty() => {
                let i = first.index(fields.len());
                return mutate_avro_value(&mut fields[i].1, rest, with);
            }
            AvroValue::Array(items) if !items.is_empty() => {
                let i = first.index(items.len());
                if rest.is_empty() && matches!(with, Replacement::Remove) {
                    items.remove(i);
                    return;
                }
                return mutate_avro_value(&mut items[i], rest, with);
            }
            AvroValue::Union(_, inner) => return mutate_avro_value(inner, path, with),
            _ => {}
        }
    }
    let int = |d: i64| match with {
        Replacement::Int(i) => Some(*i),
        Replacement::Nudge(n) => Some(d.wrapping_add(*n)),
        _ => None,
    };
    match v {
        AvroValue::Int(i) => {
            if let Some(n) = int(i64::from(*i)) {
                *i = n as i32;
            }
        }
        AvroValue::Long(i) => {
            if let Some(n) = int(*i) {
                *i = n;
            }
        }
        AvroValue::String(s) => match with {
            Replacement::Text(t) => *s = t.clone(),
            Replacement::Nudge(_) => s.push('x'),
            Replacement::Null | Replacement::Remove => s.clear(),
            _ => {}
        },
        AvroValue::Bytes(b) | AvroValue::Fixed(_, b) => match with {
            Replacement::Int(i) => b.iter_mut().for_each(|x| *x ^= *i as u8),
            Replacement::Nudge(_) => {
                b.pop();
            }
            Replacement::EmptyList | Replacement::Remove => b.clear(),
            _ => b.push(0xff),
        },
        AvroValue::Array(items) if matches!(with, Replacement::EmptyList) => items.clear(),
        AvroValue::Map(m) if matches!(with, Replacement::EmptyList | Replacement::Remove) => {
            m.clear()
        }
        // the first branch, null in optional fields (else the record no longer fits the
        // schema and the mutation is skipped)
        AvroValue::Union(i, inner) if matches!(with, Replacement::Null) && *i != 0 => {
            *i = 0;
            **inner = AvroValue::Null;
        }
        _ => {}
    }
}

/// One table copied once; its files and their original bytes.
struct Subject {
    _dir: tempfile::TempDir,
    root: PathBuf,
    name: String,
    files: Vec<(PathBuf, Vec<u8>)>,
}

fn subject(corpus: &Path, name: &str, rt: &tokio::runtime::Runtime) -> Subject {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join(name);
    copy_dir(&corpus.join(name), &root);
    // the metadata file the table opens from; older versions are not read
    let current = rt
        .block_on(icefloe::Table::open(root.to_str().unwrap()))
        .expect("the unmutated table opens")
        .metadata_location()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let mut files = vec![];
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            let file_name = e.file_name().to_string_lossy().to_string();
            if p.is_dir() {
                stack.push(p);
            } else if (!file_name.ends_with(".json") || file_name == current)
                && !file_name.starts_with('.')
            {
                let bytes = std::fs::read(&p).expect("read");
                files.push((p, bytes));
            }
        }
    }
    files.sort();
    Subject {
        _dir: dir,
        root,
        name: name.to_string(),
        files,
    }
}

/// Open → plan → read the table at `root`; the first error's message.
async fn read_everything(root: &Path) -> Result<(), String> {
    let provider = IcebergTableProvider::open(root.to_str().unwrap())
        .await
        .map_err(|e| e.to_string())?;
    let first_column = provider.schema().field(0).name().clone();
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(provider))
        .map_err(|e| e.to_string())?;
    for sql in [
        "SELECT * FROM t".to_string(),
        "SELECT count(*) FROM t".to_string(),
        format!("SELECT count(*) FROM t WHERE \"{first_column}\" IS NULL"),
    ] {
        ctx.sql(&sql)
            .await
            .map_err(|e| e.to_string())?
            .collect()
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[test]
fn mutated_files_never_panic_and_errors_name_the_file() {
    install_panic_recorder();
    let log = PanicLog::default();
    let upstream_panics = AtomicUsize::new(0);
    let cases: u32 = std::env::var("ICEFLOE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_500);
    let rt = fuzz_runtime(&log);
    let corpus = corpus(&TABLES);
    let subjects: Vec<Subject> = TABLES.iter().map(|t| subject(&corpus, t, &rt)).collect();
    for s in &subjects {
        rt.block_on(read_everything(&s.root))
            .unwrap_or_else(|e| panic!("{} unmutated: {e}", s.name));
    }
    // the same cases on every run unless ICEFLOE_FUZZ_SEED says otherwise
    let seed: u64 = std::env::var("ICEFLOE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let strategy = (any::<Index>(), any::<Index>(), mutation());
    let result = runner.run(&strategy, |(table, file, m)| {
        let s = &subjects[table.index(subjects.len())];
        let (path, original) = &s.files[file.index(s.files.len())];
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Some(bytes) = mutate(&name, original, &m) else {
            return Ok(());
        };
        std::fs::write(path, &bytes).expect("write mutated file");
        let (outcome, panics) = run_recorded(&log, || rt.block_on(read_everything(&s.root)));
        std::fs::write(path, original).expect("restore file");
        let what = format!("{}/{name}", s.name);
        if let Some(message) = judge_case(&what, outcome, &panics, &upstream_panics)? {
            // the message names a file of the table: the mutated one, or (when the
            // mutation changed a location or a reference) another under the table;
            // errors from decoding a data file's pages inside DataFusion's scan too
            if !message.contains(&name) && !message.contains(&s.name) {
                return Err(TestCaseError::fail(format!(
                    "error reading mutated {what} names no file: {message}"
                )));
            }
        }
        Ok(())
    });
    println!(
        "fuzz: {cases} cases (seed {seed}); {} stopped by a known upstream panic",
        upstream_panics.load(Ordering::SeqCst)
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The panic hook records the panics of the threads working for a fuzz test only: a
/// panic on another thread (another test of the binary) is reported as usual and not
/// taken for a fuzz case's.
#[test]
fn the_panic_recorder_keeps_to_the_fuzz_test_threads() {
    install_panic_recorder();
    let log = PanicLog::default();
    let other = std::thread::spawn(|| std::panic::catch_unwind(|| panic!("another test")));
    let (outcome, panics) = run_recorded(&log, || {
        assert!(other.join().expect("joined").is_err());
        let rt = fuzz_runtime(&log);
        let in_runtime =
            rt.block_on(async { tokio::spawn(async { panic!("in the fuzz runtime") }).await });
        assert!(in_runtime.is_err());
        7
    });
    assert_eq!(outcome, Some(7));
    let messages: Vec<&str> = panics.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].ends_with("in the fuzz runtime"), "{messages:?}");
    assert!(log.lock().unwrap().is_empty());
}
