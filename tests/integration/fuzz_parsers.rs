//! Parser-level fuzzing (issue 16 item 12): the mutations of [`super::fuzz`] fed straight
//! into each of icefloe's parsers, without a DataFusion session per case, so that a CI
//! run holds tens of thousands of cases.
//!
//! Inputs are the files of seven corpus tables (v1, v2 with position and equality
//! deletes, nested, uuid/time types, v3 with deletion vectors): each case picks a kind
//! of input, one input of that kind, and one mutation (byte flips anywhere, flips near
//! the end, truncations, insertions, and the structure-aware JSON/Avro field mutations;
//! for Puffin files the footer JSON mutated and framed again; for deletion-vector blobs
//! byte mutations of the portable bitmap framed again with a right length and CRC, so
//! they reach the bitmap decoder). Each kind goes through icefloe's own entry point:
//!
//! - table metadata JSON: written over the table's metadata file, then
//!   `Table::open` (parse and validation), `IcebergTableProvider::try_new` (the Arrow
//!   schema) and `TableScan::plan_files` (manifest list and manifests of the current
//!   snapshot);
//! - manifest lists: `parse_manifest_list`, then each manifest it lists parsed with the
//!   (mutated) list entry, which it inherits sequence numbers and `first_row_id` from;
//! - manifests (v1, v2, v3): `parse_manifest` with their list entry, spec and schemas;
//! - Puffin files: `puffin::parse_footer`, and every deletion vector of the file read
//!   by `PositionDeleteLoader::load_deletion_vector` (offsets, sizes, magic, CRC,
//!   cardinality) from the mutated file on disk;
//! - deletion-vector blobs: `deserialize_deletion_vector`;
//! - position and equality delete files: `PositionDeleteLoader` /
//!   `EqualityDeleteLoader` reading the mutated file on disk;
//! - Parquet data files: the footer read by icefloe's reader factory (the scan's
//!   `file_reader`, with DataFusion's footer cache), from an in-memory object store
//!   under the size the manifest records, then every row group decoded.
//!
//! The property, as in [`super::fuzz`]: no panic in icefloe's code, no panic escaping
//! except the known upstream ones, a dependency's panic that icefloe catches comes back
//! as an error, and every error names the file (its name; for metadata and manifest
//! lists, whose mutations can redirect to other files, a file of the table), with no
//! doubled "Parquet error: Parquet error:". Errors from decoding a data file's pages
//! are named by the scan's wrapper around DataFusion's Parquet opener, which this layer
//! does not run (a decoder panic is caught here as that wrapper catches it): they are
//! held to naming the file in [`super::fuzz`].
//!
//! Bounded for CI: `ICEFLOE_FUZZ_PARSER_CASES` cases (default 20,000: 62–69 s in a
//! debug build on 2 cores shared with other builds; 134 s when the end-to-end fuzz runs
//! beside it as well), the same every run unless `ICEFLOE_FUZZ_SEED`
//! (default 16) picks others. A longer run, e.g.:
//! `ICEFLOE_FUZZ_PARSER_CASES=1000000 ICEFLOE_FUZZ_SEED=$RANDOM cargo test --release --features distributed --test integration fuzz_parsers -- --nocapture`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use datafusion::error::DataFusionError;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::parquet::arrow::arrow_reader::ArrowReaderOptions;
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::parquet::arrow::ParquetRecordBatchStreamBuilder;
use datafusion::parquet::errors::Result as ParquetResult;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::future::BoxFuture;
use futures::{FutureExt, TryStreamExt};
use icefloe::datafusion::{FieldIdExprAdapterFactory, IcebergParquetReaderFactory};
use icefloe::delete::{
    deletion_vector, equality_delete_schema, is_deletion_vector, puffin, EqualityDeleteLoader,
    PositionDeleteLoader,
};
use icefloe::scan::TableScan;
use icefloe::spec::manifest::{parse_manifest, DataContentType, ManifestEntry};
use icefloe::spec::manifest_list::{parse_manifest_list, ManifestFile};
use icefloe::spec::schema::Schema;
use icefloe::{IcebergTableProvider, Table};
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

use super::fuzz::{
    corpus, install_panic_recorder, judge_case, mutate, mutation, record_panics_here, run_recorded,
    Mutation, PanicLog, TABLES as END_TO_END_TABLES,
};
use crate::fixtures::copy_dir;

/// The end-to-end fuzz's tables and two more (types, day partitions), all also in
/// `testdata/corpus`.
fn tables() -> Vec<&'static str> {
    let mut t = END_TO_END_TABLES.to_vec();
    t.extend(["pyiceberg_v2_types_uuid_time", "spark_v2_day_partitioned"]);
    t
}

/// What an input is and how it is read.
enum Target {
    /// The table's current metadata file (at `path`): open, provider, plan.
    Metadata { path: PathBuf },
    /// A manifest list.
    ManifestList,
    /// A manifest and its entry in a manifest list.
    Manifest { listed: Box<ManifestFile> },
    /// A Puffin file (at `path`) and the deletion-vector entries stored in it.
    Puffin {
        path: PathBuf,
        entries: Vec<ManifestEntry>,
    },
    /// One deletion-vector blob of a Puffin file.
    DvBlob,
    /// A Parquet position delete file (at `path`).
    PositionDeletes {
        path: PathBuf,
        entry: Box<ManifestEntry>,
    },
    /// A Parquet equality delete file (at `path`).
    EqualityDeletes {
        path: PathBuf,
        entry: Box<ManifestEntry>,
    },
    /// A Parquet data file.
    DataFile { entry: Box<ManifestEntry> },
}

/// Kinds of input, picked with equal weight.
const KINDS: [&str; 8] = [
    "metadata",
    "manifest list",
    "manifest",
    "puffin",
    "dv blob",
    "position deletes",
    "equality deletes",
    "data file",
];

fn kind(t: &Target) -> usize {
    match t {
        Target::Metadata { .. } => 0,
        Target::ManifestList => 1,
        Target::Manifest { .. } => 2,
        Target::Puffin { .. } => 3,
        Target::DvBlob => 4,
        Target::PositionDeletes { .. } => 5,
        Target::EqualityDeletes { .. } => 6,
        Target::DataFile { .. } => 7,
    }
}

/// One input: a file (or blob) of a table, its location as the table records it, and
/// its original bytes.
struct Input {
    table: usize,
    /// The file's name (what an error must show).
    name: String,
    location: String,
    bytes: Vec<u8>,
    target: Target,
}

/// One table copied once, opened unmutated.
struct Subject {
    _dir: tempfile::TempDir,
    name: String,
    table: Table,
    /// The original manifests (list entry, bytes) by their recorded location.
    manifests: HashMap<String, (ManifestFile, Vec<u8>)>,
    /// The table's Arrow schema with field ids, as a scan reads it.
    arrow: datafusion::arrow::datatypes::SchemaRef,
}

impl Subject {
    fn schemas(&self) -> Vec<&Schema> {
        let m = self.table.metadata();
        let mut schemas = vec![m.current_schema()];
        schemas.extend(m.schemas.iter().rev());
        schemas
    }
}

fn file_name(location: &str) -> String {
    location.rsplit('/').next().unwrap_or(location).to_string()
}

/// The local path of a recorded location of `table` (remapped to the copy).
fn local_path(table: &Table, location: &str) -> PathBuf {
    let remapped = table.file_io().remap(location).expect("remap");
    let local = remapped
        .strip_prefix("file://")
        .or_else(|| remapped.strip_prefix("file:"))
        .unwrap_or(&remapped);
    PathBuf::from(local)
}

/// Copy table `name`, open it and collect its inputs.
async fn load(corpus: &Path, index: usize, name: &str, inputs: &mut Vec<Input>) -> Subject {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join(name);
    copy_dir(&corpus.join(name), &root);
    let table = Table::open(root.to_str().unwrap())
        .await
        .expect("the unmutated table opens");
    let io = table.file_io().clone();
    let metadata_path = local_path(&table, table.metadata_location());
    inputs.push(Input {
        table: index,
        name: file_name(table.metadata_location()),
        location: table.metadata_location().to_string(),
        bytes: std::fs::read(&metadata_path).expect("metadata"),
        target: Target::Metadata {
            path: metadata_path,
        },
    });
    let metadata = table.metadata_ref();
    let mut schemas = vec![metadata.current_schema()];
    schemas.extend(metadata.schemas.iter().rev());
    let mut manifests: BTreeMap<String, (ManifestFile, Vec<u8>)> = BTreeMap::new();
    for list in metadata
        .snapshots
        .iter()
        .filter_map(|s| s.manifest_list.as_ref())
    {
        let bytes = io.read(list).await.expect("list").to_vec();
        let listed = parse_manifest_list(&bytes, list).expect("list parses");
        inputs.push(Input {
            table: index,
            name: file_name(list),
            location: list.clone(),
            bytes,
            target: Target::ManifestList,
        });
        for m in listed {
            if !manifests.contains_key(&m.manifest_path) {
                let bytes = io.read(&m.manifest_path).await.expect("manifest").to_vec();
                manifests.insert(m.manifest_path.clone(), (m, bytes));
            }
        }
    }
    let mut files: BTreeMap<String, ManifestEntry> = BTreeMap::new();
    for (location, (listed, bytes)) in &manifests {
        let spec = metadata
            .partition_spec_by_id(listed.partition_spec_id)
            .expect("spec");
        let entries =
            parse_manifest(bytes, location, listed, spec, &schemas).expect("manifest parses");
        for e in entries {
            files.entry(e.data_file.file_path.clone()).or_insert(e);
        }
        inputs.push(Input {
            table: index,
            name: file_name(location),
            location: location.clone(),
            bytes: bytes.clone(),
            target: Target::Manifest {
                listed: Box::new(listed.clone()),
            },
        });
    }
    let mut puffins: BTreeMap<String, Vec<ManifestEntry>> = BTreeMap::new();
    for (location, entry) in files {
        let path = local_path(&table, &location);
        let bytes = std::fs::read(&path).expect("file");
        let name = file_name(&location);
        let target = match entry.data_file.content {
            _ if is_deletion_vector(&entry.data_file) => {
                let offset = entry.data_file.content_offset.expect("offset") as usize;
                let size = entry.data_file.content_size_in_bytes.expect("size") as usize;
                let (puffin, blob) = (location.clone(), bytes[offset..offset + size].to_vec());
                puffins.entry(puffin).or_default().push(entry);
                inputs.push(Input {
                    table: index,
                    name,
                    location,
                    bytes: blob,
                    target: Target::DvBlob,
                });
                continue;
            }
            DataContentType::Data => Target::DataFile {
                entry: Box::new(entry),
            },
            DataContentType::PositionDeletes => Target::PositionDeletes {
                path,
                entry: Box::new(entry),
            },
            DataContentType::EqualityDeletes => Target::EqualityDeletes {
                path,
                entry: Box::new(entry),
            },
        };
        inputs.push(Input {
            table: index,
            name,
            location,
            bytes,
            target,
        });
    }
    for (location, entries) in puffins {
        let path = local_path(&table, &location);
        inputs.push(Input {
            table: index,
            name: file_name(&location),
            bytes: std::fs::read(&path).expect("puffin"),
            location,
            target: Target::Puffin { path, entries },
        });
    }
    let arrow = Arc::new(icefloe::spec::arrow::nullable_nested_fields(
        &icefloe::spec::arrow::schema_to_arrow(metadata.current_schema()).expect("arrow"),
    ));
    Subject {
        _dir: dir,
        name: name.to_string(),
        table,
        manifests: manifests.into_iter().collect(),
        arrow,
    }
}

/// A Puffin file with its footer JSON mutated by `m` (a field mutation) and framed
/// again (payload size fixed), or `None` when the footer cannot be found.
fn mutate_puffin_footer(file: &[u8], m: &Mutation) -> Option<Vec<u8>> {
    let n = file.len();
    let size = i32::from_le_bytes(file.get(n.checked_sub(12)?..n - 8)?.try_into().ok()?);
    let start = (n - 12).checked_sub(usize::try_from(size).ok()?)?;
    let payload = mutate("footer.json", &file[start..n - 12], m)?;
    let mut out = file[..start].to_vec();
    out.extend_from_slice(&payload);
    out.extend_from_slice(&i32::try_from(payload.len()).ok()?.to_le_bytes());
    out.extend_from_slice(&file[n - 8..]);
    Some(out)
}

/// A deletion-vector blob (length, magic, portable bitmap, CRC) whose bitmap is mutated
/// by `m` and framed again with the right length and CRC.
fn mutate_dv_bitmap(blob: &[u8], m: &Mutation) -> Option<Vec<u8>> {
    let bitmap = blob.get(8..blob.len().checked_sub(4)?)?;
    let bitmap = mutate("bitmap", bitmap, m)?;
    let mut body = blob[4..8].to_vec();
    body.extend_from_slice(&bitmap);
    let mut out = u32::try_from(body.len()).ok()?.to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    Some(out)
}

/// The mutated bytes of `input`, or `None` when the mutation does not apply.
fn mutated(input: &Input, m: &Mutation, reframe: bool) -> Option<Vec<u8>> {
    match (&input.target, m) {
        (Target::Puffin { .. }, Mutation::Field { .. }) => mutate_puffin_footer(&input.bytes, m),
        (Target::DvBlob, _) if reframe => mutate_dv_bitmap(&input.bytes, m),
        _ => mutate(&input.name, &input.bytes, m),
    }
}

/// Shared by the data-file cases: DataFusion's footer cache (each case reads its own
/// object path, so no case sees another's footer).
struct DataFileReading {
    store: Arc<InMemory>,
    cache: Arc<datafusion::execution::cache::cache_manager::FileMetadataCache>,
    case: AtomicUsize,
}

fn message(e: icefloe::Error) -> String {
    e.to_string()
}

/// Read `bytes` as `input` says; the first error's message.
async fn read(
    s: &Subject,
    input: &Input,
    bytes: Vec<u8>,
    parquet: &DataFileReading,
) -> Result<(), String> {
    let location = input.location.as_str();
    match &input.target {
        Target::Metadata { path } => {
            std::fs::write(path, &bytes).expect("write mutated metadata");
            let result = async {
                let table = Table::open(path.to_str().unwrap()).await?;
                IcebergTableProvider::try_new(table.clone())?;
                let snapshot = table.metadata().current_snapshot().cloned();
                TableScan::new(table, snapshot).plan_files().await?;
                Ok::<_, icefloe::Error>(())
            }
            .await;
            std::fs::write(path, &input.bytes).expect("restore metadata");
            result.map_err(message)
        }
        Target::ManifestList => {
            let listed = parse_manifest_list(&bytes, location).map_err(message)?;
            let metadata = s.table.metadata();
            // the manifests whose entry changed, read with it (the others are as in
            // the manifest cases)
            for m in listed {
                let (Some((entry, original)), Some(spec)) = (
                    s.manifests.get(&m.manifest_path),
                    metadata.partition_spec_by_id(m.partition_spec_id),
                ) else {
                    continue;
                };
                if *entry == m {
                    continue;
                }
                parse_manifest(original, &m.manifest_path, &m, spec, &s.schemas())
                    .map_err(message)?;
            }
            Ok(())
        }
        Target::Manifest { listed } => {
            let spec = s
                .table
                .metadata()
                .partition_spec_by_id(listed.partition_spec_id)
                .expect("spec");
            parse_manifest(&bytes, location, listed, spec, &s.schemas())
                .map(|_| ())
                .map_err(message)
        }
        Target::Puffin { path, entries } => {
            let parsed = puffin::parse_footer(&bytes, location).map(|_| ());
            std::fs::write(path, &bytes).expect("write mutated puffin");
            let loader = PositionDeleteLoader::new(s.table.file_io().clone());
            let mut result = parsed;
            for e in entries {
                if let Err(e) = loader.load_deletion_vector(e).await {
                    result = result.and(Err(e));
                }
            }
            std::fs::write(path, &input.bytes).expect("restore puffin");
            result.map_err(message)
        }
        Target::DvBlob => deletion_vector::deserialize_deletion_vector(&bytes, location)
            .map(|_| ())
            .map_err(message),
        Target::PositionDeletes { path, entry } => {
            std::fs::write(path, &bytes).expect("write mutated delete file");
            let loader = PositionDeleteLoader::new(s.table.file_io().clone());
            let result = loader.load_position_delete_file(entry).await.map(|_| ());
            std::fs::write(path, &input.bytes).expect("restore delete file");
            result.map_err(message)
        }
        Target::EqualityDeletes { path, entry } => {
            let target = equality_delete_schema(&s.schemas(), &entry.data_file.equality_ids)
                .expect("equality delete schema");
            std::fs::write(path, &bytes).expect("write mutated delete file");
            let loader = EqualityDeleteLoader::new(s.table.file_io().clone());
            let result = loader.load(entry, &target).await.map(|_| ());
            std::fs::write(path, &input.bytes).expect("restore delete file");
            result.map_err(message)
        }
        Target::DataFile { entry } => {
            let n = parquet.case.fetch_add(1, Ordering::SeqCst);
            let path = object_store::path::Path::from(format!("case-{n}/{}", input.name));
            parquet
                .store
                .put(&path, Bytes::from(bytes).into())
                .await
                .expect("put");
            let result = read_data_file(s, entry, &path, parquet).await;
            parquet.store.delete(&path).await.expect("delete");
            result
        }
    }
}

/// Read a data file at `path` of the in-memory store through icefloe's reader factory
/// (footer, column type checks), then decode its row groups.
async fn read_data_file(
    s: &Subject,
    entry: &ManifestEntry,
    path: &object_store::path::Path,
    parquet: &DataFileReading,
) -> Result<(), String> {
    let recorded = HashMap::from([(path.clone(), entry.data_file.file_path.clone())]);
    let factory = IcebergParquetReaderFactory::new(
        Arc::clone(&parquet.store) as Arc<dyn ObjectStore>,
        "memory://",
        Arc::new(recorded),
        Arc::clone(&s.arrow),
        Arc::new(FieldIdExprAdapterFactory::new(
            HashMap::new(),
            HashSet::new(),
            None,
        )),
        Arc::clone(&parquet.cache),
    );
    let file = PartitionedFile::new(path.to_string(), entry.data_file.file_size_in_bytes as u64);
    let named = |e: DataFusionError| icefloe::Error::from(e).to_string();
    let reader = factory
        .create_reader(0, file, None, &ExecutionPlanMetricsSet::new())
        .map_err(named)?;
    let builder = ParquetRecordBatchStreamBuilder::new(Reader(reader))
        .await
        .map_err(|e| named(e.into()))?;
    // Page decoding errors are named by the scan's wrapper (see the module docs), which
    // also catches the decoders' panics on corrupt pages: here a decoding error passes,
    // and a caught panic becomes an error naming the file as the wrapper's does.
    if let Ok(stream) = builder.build() {
        let decoded = std::panic::AssertUnwindSafe(stream.try_collect::<Vec<_>>())
            .catch_unwind()
            .await;
        if decoded.is_err() {
            return Err(format!(
                "cannot read data file '{}': the Parquet decoder failed on it",
                entry.data_file.file_path
            ));
        }
    }
    Ok(())
}

/// The factory's reader as the `parquet` stream builder takes it (a sized type).
struct Reader(Box<dyn AsyncFileReader + Send>);

impl AsyncFileReader for Reader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, ParquetResult<Bytes>> {
        self.0.get_bytes(range)
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, ParquetResult<Vec<Bytes>>> {
        self.0.get_byte_ranges(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, ParquetResult<Arc<ParquetMetaData>>> {
        self.0.get_metadata(options)
    }
}

#[test]
fn mutated_inputs_to_each_parser_never_panic_and_errors_name_the_file() {
    install_panic_recorder();
    let log = PanicLog::default();
    let cases: u32 = std::env::var("ICEFLOE_FUZZ_PARSER_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let seed: u64 = std::env::var("ICEFLOE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    // one thread (and tokio's blocking pool): no hop to a worker per case
    let rt = {
        let log = Arc::clone(&log);
        tokio::runtime::Builder::new_current_thread()
            .on_thread_start(move || record_panics_here(Some(Arc::clone(&log))))
            .enable_all()
            .build()
            .expect("runtime")
    };
    let tables = tables();
    let corpus = corpus(&tables);
    let mut inputs = vec![];
    let subjects: Vec<Subject> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| rt.block_on(load(&corpus, i, t, &mut inputs)))
        .collect();
    let mut by_kind: Vec<Vec<&Input>> = vec![vec![]; KINDS.len()];
    for input in &inputs {
        by_kind[kind(&input.target)].push(input);
    }
    for (k, inputs) in by_kind.iter().enumerate() {
        assert!(!inputs.is_empty(), "no input of kind {}", KINDS[k]);
    }
    let parquet = DataFileReading {
        store: Arc::new(InMemory::new()),
        cache: RuntimeEnv::default()
            .cache_manager
            .get_file_metadata_cache(),
        case: AtomicUsize::new(0),
    };
    // every input reads unmutated
    for input in &inputs {
        let s = &subjects[input.table];
        rt.block_on(read(s, input, input.bytes.clone(), &parquet))
            .unwrap_or_else(|e| panic!("{}/{} unmutated: {e}", s.name, input.name));
    }
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
    let counts: Vec<AtomicUsize> = KINDS.iter().map(|_| AtomicUsize::new(0)).collect();
    let (errors, upstream_panics) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let started = std::time::Instant::now();
    let strategy = (any::<Index>(), any::<Index>(), mutation(), any::<bool>());
    let result = runner.run(&strategy, |(k, i, m, reframe)| {
        let k = k.index(KINDS.len());
        let input = by_kind[k][i.index(by_kind[k].len())];
        let s = &subjects[input.table];
        let Some(bytes) = mutated(input, &m, reframe) else {
            return Ok(());
        };
        counts[k].fetch_add(1, Ordering::SeqCst);
        let (outcome, panics) = run_recorded(&log, || rt.block_on(read(s, input, bytes, &parquet)));

        let what = format!("{} {}/{}", KINDS[k], s.name, input.name);
        if let Some(message) = judge_case(&what, outcome, &panics, &upstream_panics)? {
            errors.fetch_add(1, Ordering::SeqCst);
            // metadata and manifest lists lead to other files of the table
            let elsewhere = matches!(input.target, Target::Metadata { .. } | Target::ManifestList)
                && message.contains(&s.name);
            if !message.contains(&input.name) && !elsewhere {
                return Err(TestCaseError::fail(format!(
                    "error reading mutated {what} names no file: {message}"
                )));
            }
        }
        Ok(())
    });
    let per_kind: Vec<String> = KINDS
        .iter()
        .zip(&counts)
        .map(|(k, c)| format!("{k} {}", c.load(Ordering::SeqCst)))
        .collect();
    println!(
        "fuzz_parsers: {cases} cases (seed {seed}) in {:.1} s; run per kind: {}; {} errors; \
         {} stopped by a known upstream panic",
        started.elapsed().as_secs_f64(),
        per_kind.join(", "),
        errors.load(Ordering::SeqCst),
        upstream_panics.load(Ordering::SeqCst)
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// A data file 3 bytes shorter than its manifest says, read from a store that returns
/// what it has for a range past the end (found by this fuzz, seed 2): an error naming
/// the file and both sizes, where the `parquet` crate's footer decoder asserted on the
/// short read (the reader catches it and says why the footer cannot be read).
#[test]
fn a_short_read_of_a_truncated_data_file_is_an_error_naming_it() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let table = "spark_v1_types_identity";
    let mut inputs = vec![];
    let s = rt.block_on(load(&corpus(&[table]), 0, table, &mut inputs));
    let input = inputs
        .iter()
        .find(|i| i.name == "00001-2-70a908dd-fbdb-4da2-8d08-73eec9276481-0-00001.parquet")
        .expect("the data file");
    let size = input.bytes.len();
    let parquet = DataFileReading {
        store: Arc::new(InMemory::new()),
        cache: RuntimeEnv::default()
            .cache_manager
            .get_file_metadata_cache(),
        case: AtomicUsize::new(0),
    };
    let err = rt
        .block_on(read(&s, input, input.bytes[..size - 3].to_vec(), &parquet))
        .unwrap_err();
    assert!(err.contains(&input.name), "{err}");
    assert!(
        err.contains(&format!(
            "is {} bytes, the manifest says {size} (file_size_in_bytes): the file was \
             replaced or truncated",
            size - 3
        )),
        "{err}"
    );
}
