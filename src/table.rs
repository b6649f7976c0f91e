//! Opening a table: finding its current metadata file and reading it.
//!
//! A table opens from a metadata JSON file (path or URL) or from a table directory. In
//! a directory, `metadata/version-hint.text` names the current version when present
//! (Hadoop catalog layout, as Spark writes it); otherwise the highest-versioned metadata
//! file in `metadata/` is used (`vN.metadata.json` or `NNNNN-<uuid>.metadata.json`).
//!
//! **Moved tables.** When the recorded `location` differs from where the table now lives,
//! every path under the recorded location is resolved against the actual table directory
//! (like DuckDB's `allow_moved_paths`). This is on by default for local tables
//! ([`OpenOptions::allow_moved_paths`]); [`OpenOptions::remap`] adds explicit prefix rules.
//! A metadata file in the directory its table's `write.metadata.path` names is where a
//! writer puts it, not a moved table: its paths are read as recorded.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::io::{normalize_location, FileIO};
use crate::spec::TableMetadata;

/// How to open a table.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Explicit remap rules, old location prefix → new prefix (applied before the
    /// moved-table rule).
    pub remap: Vec<(String, String)>,
    /// Resolve paths under the recorded table location against the directory the table
    /// was opened from, when the two differ. Default: true.
    pub allow_moved_paths: bool,
    /// Object store properties (e.g. `aws_region`, `aws_endpoint`), merged over the
    /// table's `properties`.
    pub storage_properties: HashMap<String, String>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            remap: vec![],
            allow_moved_paths: true,
            storage_properties: HashMap::new(),
        }
    }
}

/// A loaded table: its metadata, the file it came from and the FileIO to read it.
#[derive(Debug, Clone)]
pub struct Table {
    metadata: Arc<TableMetadata>,
    metadata_location: String,
    file_io: FileIO,
}

/// Split a metadata file location into (table root, metadata file). A table root is the
/// parent of the `metadata/` directory holding the file.
fn table_root_of_metadata_file(location: &str) -> Option<String> {
    let dir = location.rsplit_once('/')?.0;
    Some(dir.strip_suffix("/metadata").unwrap_or(dir).to_string())
}

/// Whether `metadata_location` (normalized) is a file directly in the directory the
/// table's `write.metadata.path` names: where a writer puts it when the property is set,
/// so not a moved table, whatever its location.
fn in_metadata_path(metadata: &TableMetadata, metadata_location: &str) -> bool {
    let Some(dir) = metadata
        .properties
        .get(crate::catalog::METADATA_PATH)
        .and_then(|p| normalize_location(p).ok())
    else {
        return false;
    };
    metadata_location
        .rsplit_once('/')
        .is_some_and(|(parent, _)| parent == dir.trim_end_matches('/'))
}

/// The table directory of metadata file `metadata_location` when the table's
/// `write.metadata.path` is a directory inside its `recorded` location other than
/// `metadata` (`<location>/md`): the file's directory without that relative part, so a
/// copy of the table directory (`…/copy/md/00003-….metadata.json`) is read as rooted at
/// `…/copy` (it was taken as rooted at `…/copy/md`, and every path doubled `md`).
fn root_by_metadata_path(
    metadata: &TableMetadata,
    recorded: &str,
    metadata_location: &str,
) -> Option<String> {
    let dir = normalize_location(metadata.properties.get(crate::catalog::METADATA_PATH)?).ok()?;
    let relative = dir
        .trim_end_matches('/')
        .strip_prefix(recorded.trim_end_matches('/'))?
        .strip_prefix('/')?;
    let (parent, _) = metadata_location.rsplit_once('/')?;
    parent
        .strip_suffix(relative)?
        .strip_suffix('/')
        .map(str::to_string)
}

/// The version number in a metadata file name or location: `…/v12.metadata.json` → 12,
/// `00012-<uuid>.metadata.json` → 12.
pub(crate) fn metadata_file_version(location: &str) -> Option<u64> {
    let name = location.rsplit('/').next()?;
    let stem = name
        .strip_suffix(".metadata.json")
        .or_else(|| name.strip_suffix(".metadata.json.gz"))?;
    let stem = stem.strip_suffix(".gz").unwrap_or(stem);
    let digits = stem.strip_prefix('v').unwrap_or(stem);
    let digits = digits.split('-').next()?;
    digits.parse().ok()
}

/// The error for a location that is a file but not table metadata (Iceberg Java's
/// `StaticTableOperations` / `HadoopTables` take a metadata file or a table directory).
/// A `version-hint.text` is named as such, with the table directory it belongs to.
fn not_table_metadata(location: &str) -> Error {
    let mut parts = location.rsplitn(3, '/');
    let name = parts.next().unwrap_or(location);
    let hint = match (name, parts.next(), parts.next()) {
        ("version-hint.text", Some("metadata"), Some(table)) => format!(
            " (it is the version hint of the table at '{table}': open that directory or one \
             of its metadata files)"
        ),
        _ => String::new(),
    };
    Error::invalid_data(format!(
        "'{location}' is a file but not table metadata: give a table metadata file \
         (….metadata.json) or a table directory{hint}"
    ))
}

/// The most bytes a gzip table metadata file may inflate to (512 MiB). Metadata files
/// of real tables are MBs (a snapshot's entry is under 1 KB, so 10,000 snapshots are
/// about 10 MB), and a JSON text of this size would parse into several GiB of table
/// metadata; past it, the file is a compression bomb (report W67 F10: 11 MB inflating to
/// 2.5 GiB), refused before it exhausts memory. Java's `TableMetadataParser` has no
/// bound (a JVM fails inside its heap limit; a Rust process is killed).
const METADATA_INFLATED_MAX_BYTES: u64 = 512 << 20;

/// The gzip table metadata file at `location` (`compressed`), inflated, holding at most
/// `limit` bytes.
///
/// Errors: [`ErrorKind::InvalidData`] naming the file when it is not valid gzip or
/// inflates to more than `limit` bytes (inflating stops there).
fn inflate_metadata(compressed: &[u8], location: &str, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let corrupt = |e| {
        Error::invalid_data(format!("table metadata '{location}': corrupt gzip")).with_source(e)
    };
    let mut decoder = flate2::read::GzDecoder::new(compressed);
    let mut out = Vec::new();
    // read in chunks, not `read_to_end`: its buffer doubles past the bound before it
    // finds the end (a 512 MiB text would take 1 GiB)
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = decoder.read(&mut chunk).map_err(corrupt)?;
        if n == 0 {
            return Ok(out);
        }
        if (out.len() + n) as u64 > limit {
            return Err(Error::invalid_data(format!(
                "table metadata '{location}': its gzip inflates to more than {limit} bytes, \
                 more than any table's metadata (a compression bomb, or not table metadata)"
            )));
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// The longest `version-hint.text` read (bytes). Java's `HadoopTableOperations` writes
/// the version number alone; some writers put the metadata file's name or path there,
/// which `PATH_MAX` (4096 bytes) bounds. A longer hint is damaged and refused unread: a
/// sparse multi-GB hint would otherwise be read whole into memory (report W67 F10).
const VERSION_HINT_MAX_BYTES: u64 = 4096;

/// What `version-hint.text` gave.
enum Hint {
    /// The current metadata file.
    File(String),
    /// Why the hint cannot be used (the directory is listed instead).
    Unusable(String),
    /// The hint names a version whose file is missing: the error when the directory
    /// holds an older version (see `find_metadata_file_in`).
    Lost(String),
}

impl Table {
    /// Open a table from a metadata file or table directory with default options.
    pub async fn open(location: &str) -> Result<Table> {
        Self::open_with(location, OpenOptions::default()).await
    }

    /// Open a table from a metadata file (`….metadata.json`) or a table directory.
    ///
    /// Errors: [`ErrorKind::NotFound`] when no metadata file is found (naming where it
    /// looked), [`ErrorKind::InvalidData`] for corrupt metadata (naming the file) and for a
    /// location that is a file but not table metadata (a data file, a `version-hint.text`),
    /// [`ErrorKind::Unsupported`] for an unknown format version.
    pub async fn open_with(location: &str, options: OpenOptions) -> Result<Table> {
        let location = normalize_location(location)?;
        let mut io = FileIO::new(options.storage_properties.clone());
        for (from, to) in &options.remap {
            io = io.with_remap(from, to)?;
        }
        let (root, metadata_location) = if location.ends_with(".json")
            || location.ends_with(".json.gz")
        {
            let root = table_root_of_metadata_file(&location).ok_or_else(|| {
                Error::invalid_argument(format!("cannot find the table directory of '{location}'"))
            })?;
            (root, location.clone())
        } else {
            let file = Self::find_metadata_file(&io, &location).await?;
            (location.clone(), file)
        };
        let metadata = Self::read_metadata(&io, &metadata_location).await?;
        let recorded = normalize_location(&metadata.location)?;
        let root = match location.ends_with(".json") || location.ends_with(".json.gz") {
            true => root_by_metadata_path(&metadata, &recorded, &metadata_location).unwrap_or(root),
            false => root,
        };
        if options.allow_moved_paths
            && recorded != root
            && !in_metadata_path(&metadata, &metadata_location)
            && io.remap(&recorded)? == recorded
        {
            io = io.with_remap(&recorded, &root)?;
        }
        let mut properties = metadata.properties.clone();
        properties.extend(options.storage_properties);
        let io = FileIO::new(properties).with_remaps_of(&io)?;
        Ok(Table {
            metadata: Arc::new(metadata),
            metadata_location,
            file_io: io,
        })
    }

    /// Whether `location` names a metadata file (`….json`, `….json.gz`) rather than a
    /// table directory: a table opened from it reads that version, never a later one.
    pub fn is_metadata_file(location: &str) -> bool {
        location.ends_with(".json") || location.ends_with(".json.gz")
    }

    /// The metadata file [`Self::open_with`] would read for the table directory
    /// `table_dir` with `options` now (the one `metadata/version-hint.text` names, or the
    /// newest), without reading it: how a table registered by its directory sees that
    /// another process committed.
    ///
    /// Errors: as [`Self::open_with`]'s for a directory.
    pub async fn current_metadata_file(table_dir: &str, options: &OpenOptions) -> Result<String> {
        let location = normalize_location(table_dir)?;
        let mut io = FileIO::new(options.storage_properties.clone());
        for (from, to) in &options.remap {
            io = io.with_remap(from, to)?;
        }
        Self::find_metadata_file(&io, &location).await
    }

    /// The table's current version in the directory its metadata file is in (the
    /// parent of `metadata/`), read through this table's FileIO: what a later commit
    /// made of a table read at a fixed metadata file.
    ///
    /// Errors: as [`Self::open_with`]'s for a directory.
    pub(crate) async fn current_in_directory(&self) -> Result<Table> {
        let root = table_root_of_metadata_file(&self.metadata_location).ok_or_else(|| {
            Error::invalid_argument(format!(
                "cannot find the table directory of '{}'",
                self.metadata_location
            ))
        })?;
        let location = Self::find_metadata_file(&self.file_io, &root).await?;
        let metadata = Self::read_metadata(&self.file_io, &location).await?;
        Ok(Table {
            metadata: Arc::new(metadata),
            metadata_location: location,
            file_io: self.file_io.clone(),
        })
    }

    /// The current metadata file of the table in `table_dir`: the one
    /// `metadata/version-hint.text` names (or a newer `v<N>` one), else, when the hint is
    /// missing, unreadable, empty or not a version, the highest-versioned metadata file in
    /// `metadata/` (as Iceberg Java's `HadoopTableOperations` falls back to listing the
    /// directory).
    ///
    /// Errors: [`ErrorKind::InvalidData`] when `table_dir` is a file, not a directory
    /// (a data file, a `version-hint.text`, any file not named `….metadata.json`), or when
    /// the hint names a version whose metadata file is missing while older versions are
    /// there (as Java refuses it), or when the file it names (or a newer `v<N>` one) is a
    /// directory (named so), or when the hint is longer than
    /// [`VERSION_HINT_MAX_BYTES`] (refused unread);
    /// [`ErrorKind::NotFound`] when no metadata file is found.
    async fn find_metadata_file(io: &FileIO, table_dir: &str) -> Result<String> {
        match Self::find_metadata_file_in(io, table_dir).await {
            Ok(file) => Ok(file),
            // only probed on failure: a directory is never a file to `head`
            Err(e) => match io.exists(table_dir).await {
                Ok(true) => Err(not_table_metadata(table_dir)),
                _ => Err(e),
            },
        }
    }

    async fn find_metadata_file_in(io: &FileIO, table_dir: &str) -> Result<String> {
        let meta_dir = format!("{table_dir}/metadata");
        let hint = format!("{meta_dir}/version-hint.text");
        let mut lost = None;
        let unusable_hint = match io.read_at_most(&hint, VERSION_HINT_MAX_BYTES).await {
            Ok(bytes) => match Self::hinted_metadata_file(io, &meta_dir, &hint, &bytes).await? {
                Hint::File(file) => return Ok(file),
                Hint::Unusable(why) => Some(why),
                Hint::Lost(why) => {
                    lost = Some(why.clone());
                    Some(why)
                }
            },
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            // a hint longer than any version or file name: damaged, refused unread
            Err(e) if e.kind() == ErrorKind::InvalidData => {
                return Err(e.context(format!(
                    "cannot use the version hint of the table at '{table_dir}' (a version \
                     number, or a metadata file's name)"
                )))
            }
            // unreadable (a directory, no permission): list, as Java's `findVersion` does
            Err(e) => Some(format!("'{hint}' could not be read ({e})")),
        };
        let names = io.list_dir(&meta_dir).await?;
        let newest = names
            .iter()
            .filter_map(|n| metadata_file_version(n).map(|v| (v, n)))
            .max();
        if let (Some(why), Some(_)) = (lost, &newest) {
            return Err(Error::invalid_data(why));
        }
        newest
            .map(|(_, n)| format!("{meta_dir}/{n}"))
            .ok_or_else(|| {
                let why = unusable_hint.map(|w| format!("; {w}")).unwrap_or_default();
                Error::not_found(format!(
                    "no table metadata file (*.metadata.json) in '{meta_dir}'{why}"
                ))
            })
    }

    /// The metadata file `version-hint.text` (at `hint`, holding `bytes`) names, probing
    /// past a stale hint; or why the hint cannot be used.
    async fn hinted_metadata_file(
        io: &FileIO,
        meta_dir: &str,
        hint: &str,
        bytes: &[u8],
    ) -> Result<Hint> {
        let text = String::from_utf8_lossy(bytes).trim().to_string();
        let candidates = if text.ends_with(".metadata.json") || text.ends_with(".json.gz") {
            vec![format!(
                "{meta_dir}/{}",
                text.rsplit('/').next().unwrap_or(&text)
            )]
        } else if text.parse::<u64>().is_ok_and(|v| v > 0) {
            vec![
                format!("{meta_dir}/v{text}.metadata.json"),
                format!("{meta_dir}/v{text}.gz.metadata.json"),
            ]
        } else if text.is_empty() {
            return Ok(Hint::Unusable(format!("'{hint}' is empty")));
        } else if text.parse::<u64>().is_ok() {
            // version 0: no commit yet (Java takes the table as not created)
            return Ok(Hint::Unusable(format!("'{hint}' names version 0")));
        } else {
            let shown: String = text.chars().take(40).collect();
            return Ok(Hint::Unusable(format!(
                "'{hint}' holds '{shown}', not a version number"
            )));
        };
        // a directory in a candidate's place is named, not taken as a missing file
        // (InvalidData, as for a lost version below: the table exists)
        let directory = |e: Error| {
            if e.kind() == ErrorKind::NotFound {
                Error::invalid_data(e.message()).context(format!(
                    "reading the current metadata file of '{meta_dir}' ('{hint}' names \
                     version '{text}')"
                ))
            } else {
                e
            }
        };
        let mut file = None;
        for c in candidates {
            if io.file_exists(&c).await.map_err(directory)? {
                file = Some(c);
                break;
            }
        }
        // A hint that names a version whose file is gone, where older versions exist, is
        // a lost commit, not a stale hint: reading the version before it would answer with
        // old rows, and the next commit would write the lost version's file again over it
        // (Iceberg Java's `HadoopTableOperations.refresh`: "Metadata file for version … is
        // missing"). InvalidData, not NotFound: the table exists, and must not look absent
        // to a `CREATE TABLE`.
        let Some(file) = file else {
            return Ok(Hint::Lost(format!(
                "'{hint}' names version '{text}', but its metadata file is missing from \
                 '{meta_dir}': the table's current version is lost (restore the file, or \
                 write the version to go back to into '{hint}')"
            )));
        };
        // A writer creates v<N+1> before it rewrites the hint: probe past a stale hint
        // (as Iceberg Java's `HadoopTableOperations` does).
        let name = file.rsplit('/').next().unwrap_or(&file);
        let Some(mut version) = metadata_file_version(name).filter(|_| name.starts_with('v'))
        else {
            return Ok(Hint::File(file));
        };
        let mut newest = file;
        loop {
            let next = format!("{meta_dir}/v{}.metadata.json", version + 1);
            if !io.file_exists(&next).await.map_err(directory)? {
                return Ok(Hint::File(newest));
            }
            version += 1;
            newest = next;
        }
    }

    pub(crate) async fn read_metadata(io: &FileIO, location: &str) -> Result<TableMetadata> {
        let mut bytes = io.read(location).await?.to_vec();
        // gzip (`write.metadata.compression-codec=gzip`: `*.gz.metadata.json`, or
        // `*.metadata.json.gz` from older writers), known by its magic bytes
        if bytes.starts_with(&[0x1f, 0x8b]) {
            bytes = inflate_metadata(&bytes, location, METADATA_INFLATED_MAX_BYTES)?;
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            Error::invalid_data(format!("table metadata '{location}' is not UTF-8")).with_source(e)
        })?;
        TableMetadata::from_json(text)
            .map_err(|e| e.context(format!("table metadata '{location}'")))
    }

    /// The table whose metadata file is `metadata_location`, read through `file_io` as
    /// given (its properties, remaps and vended credentials; no moved-table rule is
    /// added): how a process that received a table's identity (metadata location +
    /// FileIO) reloads it, e.g. a Ballista scheduler.
    ///
    /// Errors: as [`Table::open_with`] for a metadata file ([`ErrorKind::NotFound`],
    /// [`ErrorKind::InvalidData`] naming the file).
    pub async fn load(metadata_location: &str, file_io: FileIO) -> Result<Table> {
        let metadata_location = normalize_location(metadata_location)?;
        let metadata = Self::read_metadata(&file_io, &metadata_location).await?;
        Ok(Table {
            metadata: Arc::new(metadata),
            metadata_location,
            file_io,
        })
    }

    /// This table at another version: `metadata` read from `metadata_location`, with
    /// the same FileIO (remaps and storage properties).
    pub fn with_metadata(&self, metadata: TableMetadata, metadata_location: &str) -> Table {
        Table {
            metadata: Arc::new(metadata),
            metadata_location: metadata_location.to_string(),
            file_io: self.file_io.clone(),
        }
    }

    /// A table whose metadata was just written to `metadata_location`: read through a
    /// FileIO made from `options` and the table's properties.
    pub fn from_written(
        metadata: TableMetadata,
        metadata_location: &str,
        options: &OpenOptions,
    ) -> Result<Table> {
        let mut properties = metadata.properties.clone();
        properties.extend(options.storage_properties.clone());
        let mut io = FileIO::new(properties);
        for (from, to) in &options.remap {
            io = io.with_remap(from, to)?;
        }
        Ok(Table {
            metadata: Arc::new(metadata),
            metadata_location: normalize_location(metadata_location)?,
            file_io: io,
        })
    }

    /// The table metadata.
    pub fn metadata(&self) -> &TableMetadata {
        &self.metadata
    }

    /// The table metadata, shared.
    pub fn metadata_ref(&self) -> Arc<TableMetadata> {
        Arc::clone(&self.metadata)
    }

    /// Where the metadata was read from (normalised).
    pub fn metadata_location(&self) -> &str {
        &self.metadata_location
    }

    /// The FileIO that reads this table's files (with its remaps).
    pub fn file_io(&self) -> &FileIO {
        &self.file_io
    }

    /// This table (same metadata) read through `file_io` instead, e.g. the table's
    /// FileIO with a request observer ([`FileIO::with_request_observer`]).
    pub fn with_file_io(&self, file_io: FileIO) -> Table {
        Table {
            metadata: Arc::clone(&self.metadata),
            metadata_location: self.metadata_location.clone(),
            file_io,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_versions() {
        assert_eq!(metadata_file_version("v12.metadata.json"), Some(12));
        assert_eq!(
            metadata_file_version("00003-3d7164b9-8728-4623-9da8-feeba4d48bfe.metadata.json"),
            Some(3)
        );
        assert_eq!(metadata_file_version("snap-1.avro"), None);
        assert_eq!(metadata_file_version("v4.gz.metadata.json"), Some(4));
        assert_eq!(
            metadata_file_version("00005-ab-cd.gz.metadata.json"),
            Some(5)
        );
        assert_eq!(metadata_file_version("v6.metadata.json.gz"), Some(6));
        assert_eq!(
            table_root_of_metadata_file("file:///w/t/metadata/v1.metadata.json").as_deref(),
            Some("file:///w/t")
        );
    }

    /// A location that is a file but not table metadata is `InvalidData` saying so (not
    /// an I/O error about `<file>/metadata`); a version hint names its table directory.
    #[tokio::test]
    async fn a_file_that_is_not_metadata_is_invalid_data() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("t/metadata")).unwrap();
        let hint = dir.path().join("t/metadata/version-hint.text");
        std::fs::write(&hint, "1").unwrap();
        let txt = dir.path().join("x.txt");
        std::fs::write(&txt, "x").unwrap();
        let parquet = dir.path().join("f.parquet");
        std::fs::write(&parquet, "PAR1").unwrap();
        for p in [&txt, &parquet, &hint] {
            let e = Table::open(p.to_str().unwrap()).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidData, "{e}");
            assert!(
                e.to_string().contains("is a file but not table metadata"),
                "{e}"
            );
            assert!(!e.to_string().contains("Not a directory"), "{e}");
        }
        let e = Table::open(hint.to_str().unwrap()).await.unwrap_err();
        let table = format!("{}/t'", dir.path().display());
        assert!(
            e.to_string()
                .contains("version hint of the table at 'file://")
                && e.to_string().contains(&table),
            "{e}"
        );
        // a directory without metadata is still NotFound
        let e = Table::open(dir.path().join("t").to_str().unwrap())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    }

    /// gzip metadata inflating past the bound is refused, and inflating stops there; at
    /// the bound it is read.
    #[test]
    fn gzip_metadata_is_inflated_up_to_a_bound() {
        use std::io::Write;
        let gzip = |text: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(text).unwrap();
            e.finish().unwrap()
        };
        let text = b"{\"format-version\": 2}";
        let limit = text.len() as u64;
        assert_eq!(
            inflate_metadata(&gzip(text), "m.gz.metadata.json", limit).unwrap(),
            text
        );
        let e = inflate_metadata(
            &gzip(b"{\"format-version\": 2} "),
            "m.gz.metadata.json",
            limit,
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidData);
        assert_eq!(
            e.to_string(),
            format!(
                "invalid data: table metadata 'm.gz.metadata.json': its gzip inflates to more \
                 than {limit} bytes, more than any table's metadata (a compression bomb, or \
                 not table metadata)"
            )
        );
        // not gzip after its magic
        let e = inflate_metadata(&[0x1f, 0x8b, 0, 0], "c.gz.metadata.json", limit).unwrap_err();
        assert!(
            e.to_string().contains("'c.gz.metadata.json': corrupt gzip"),
            "{e}"
        );
    }

    /// A version hint longer than [`VERSION_HINT_MAX_BYTES`] is refused by its size,
    /// unread (report W67 F10: a sparse 3 GB hint was read whole, past 2 GiB of memory);
    /// one of that many bytes is read as before.
    #[tokio::test]
    async fn a_huge_version_hint_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let meta = dir.path().join("t/metadata");
        std::fs::create_dir_all(&meta).unwrap();
        let hint = meta.join("version-hint.text");
        let table = dir.path().join("t");
        // blank but for its length: unusable, so the directory (no metadata) is listed
        std::fs::write(&hint, " ".repeat(VERSION_HINT_MAX_BYTES as usize)).unwrap();
        let e = Table::open(table.to_str().unwrap()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        assert!(e.to_string().contains("is empty"), "{e}");
        std::fs::write(&hint, " ".repeat(VERSION_HINT_MAX_BYTES as usize + 1)).unwrap();
        let e = Table::open(table.to_str().unwrap()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidData, "{e}");
        // sparse: 3 GiB long, no disk used
        std::fs::File::options()
            .write(true)
            .open(&hint)
            .unwrap()
            .set_len(3 << 30)
            .unwrap();
        std::fs::write(meta.join("v1.metadata.json"), "{}").unwrap();
        let started = std::time::Instant::now();
        let e = Table::open(table.to_str().unwrap()).await.unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{e}");
        assert_eq!(e.kind(), ErrorKind::InvalidData, "{e}");
        assert_eq!(
            e.to_string(),
            format!(
                "invalid data: cannot use the version hint of the table at 'file://{}' (a \
                 version number, or a metadata file's name): 'file://{}' is 3221225472 bytes, \
                 more than the 4096 bytes it may hold",
                table.display(),
                hint.display()
            )
        );
    }
}
