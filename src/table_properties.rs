//! The table properties icefloe reads (Iceberg Java `TableProperties` names and
//! defaults), each with the values it takes.
//!
//! [`KNOWN`] is the one list: every reader of a property parses it through its
//! [`TableProperty`] here (retry policy, writer settings, row-level modes, expiry, …),
//! and `SET TBLPROPERTIES`, `CREATE TABLE … TBLPROPERTIES` and
//! [`UpdateProperties`](crate::transaction::UpdateProperties) refuse a value of one of
//! them that icefloe cannot use ([`validate`]), so a property that passes the check
//! cannot fail a later write. Properties not in the list are free-form, as in Java.
//!
//! A value written by another engine (PyIceberg sets any string) can still be invalid;
//! the commit path never depends on such a value, so the table stays repairable (see
//! [`RetryPolicy`](crate::transaction::RetryPolicy)).

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::spec::FormatVersion;

/// The values a table property takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropertyType {
    /// An integer from `min` to `max` (inclusive).
    Int {
        /// The smallest value allowed.
        min: i64,
        /// The largest value allowed.
        max: i64,
    },
    /// `true` or `false` (any case; no blanks: Java's `Boolean.parseBoolean` reads
    /// ` true` as false).
    Bool,
    /// One of these words (any case; no blanks, as Java's `fromName`/`valueOf` of the
    /// property's enum refuses them).
    OneOf(&'static [&'static str]),
    /// A metrics mode: `none`, `counts`, `truncate(N)` with N from 1 to 2147483647 (Java reads N
    /// as an `int`), or `full`.
    MetricsMode,
    /// A name mapping in the spec's JSON form ("Column Projection").
    NameMapping,
    /// An absolute location files are written under
    /// ([`check_location_property`](crate::io::check_location_property)).
    Location,
}

/// A table property icefloe reads, with the values it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableProperty {
    /// The property's name (for a prefix, everything up to the variable part).
    pub name: &'static str,
    /// The values it takes.
    pub ty: PropertyType,
}

const INT: i64 = i32::MAX as i64;
const LONG: i64 = i64::MAX;

const fn int(name: &'static str, min: i64, max: i64) -> TableProperty {
    TableProperty {
        name,
        ty: PropertyType::Int { min, max },
    }
}

const fn one_of(name: &'static str, values: &'static [&'static str]) -> TableProperty {
    TableProperty {
        name,
        ty: PropertyType::OneOf(values),
    }
}

const fn boolean(name: &'static str) -> TableProperty {
    TableProperty {
        name,
        ty: PropertyType::Bool,
    }
}

const ROW_LEVEL_MODES: &[&str] = &["copy-on-write", "merge-on-read"];
const ISOLATION_LEVELS: &[&str] = &["serializable", "snapshot"];
/// File formats icefloe writes: Parquet only. Java also takes `avro` and `orc`; icefloe
/// refuses them, so that a table never names a format its writes would not produce.
const FILE_FORMATS: &[&str] = &["parquet"];

/// `format-version`: 1, 2 or 3 (setting a higher one upgrades the table); read as an
/// integer, as Java's `TableMetadata` and Spark's `SparkCatalog` read it
/// (`Integer.parseInt`: `+3` and `03` are 3, ` 3` is refused). See [`format_version`].
pub const FORMAT_VERSION: TableProperty = int("format-version", 1, 3);

/// `commit.retry.num-retries` (default 4).
pub const COMMIT_NUM_RETRIES: TableProperty = int("commit.retry.num-retries", 0, INT);
/// `commit.retry.min-wait-ms` (default 100).
pub const COMMIT_MIN_RETRY_WAIT_MS: TableProperty = int("commit.retry.min-wait-ms", 0, LONG);
/// `commit.retry.max-wait-ms` (default 60000).
pub const COMMIT_MAX_RETRY_WAIT_MS: TableProperty = int("commit.retry.max-wait-ms", 0, LONG);
/// `commit.retry.total-timeout-ms` (default 1800000).
pub const COMMIT_TOTAL_RETRY_TIME_MS: TableProperty = int("commit.retry.total-timeout-ms", 0, LONG);
/// `commit.manifest-merge.enabled` (default true).
pub const MANIFEST_MERGE_ENABLED: TableProperty = boolean("commit.manifest-merge.enabled");
/// `commit.manifest.min-count-to-merge` (default 100).
pub const MANIFEST_MIN_MERGE_COUNT: TableProperty =
    int("commit.manifest.min-count-to-merge", 0, INT);
/// `commit.manifest.target-size-bytes` (default 8 MiB).
pub const MANIFEST_TARGET_SIZE_BYTES: TableProperty =
    int("commit.manifest.target-size-bytes", 1, LONG);

/// `write.target-file-size-bytes` (default 512 MiB).
pub const WRITE_TARGET_FILE_SIZE_BYTES: TableProperty =
    int("write.target-file-size-bytes", 1, LONG);
/// `write.delete.target-file-size-bytes` (default 64 MiB).
pub const DELETE_TARGET_FILE_SIZE_BYTES: TableProperty =
    int("write.delete.target-file-size-bytes", 1, LONG);
/// `write.parquet.compression-codec` (default `zstd`).
pub const PARQUET_COMPRESSION: TableProperty = one_of(
    "write.parquet.compression-codec",
    &[
        "zstd",
        "gzip",
        "snappy",
        "lz4",
        "lz4_raw",
        "brotli",
        "uncompressed",
        "none",
    ],
);
/// `write.parquet.compression-level` (default: the codec's); the range the codec takes
/// is checked with the codec ([`validate_together`]).
pub const PARQUET_COMPRESSION_LEVEL: TableProperty = int(
    "write.parquet.compression-level",
    i32::MIN as i64,
    i32::MAX as i64,
);
/// `write.parquet.row-group-size-bytes` (default 128 MiB).
pub const PARQUET_ROW_GROUP_SIZE_BYTES: TableProperty =
    int("write.parquet.row-group-size-bytes", 1, LONG);
/// `write.parquet.page-size-bytes` (default 1 MiB).
pub const PARQUET_PAGE_SIZE_BYTES: TableProperty = int("write.parquet.page-size-bytes", 1, LONG);
/// `write.parquet.page-row-limit` (default 20 000).
pub const PARQUET_PAGE_ROW_LIMIT: TableProperty = int("write.parquet.page-row-limit", 1, LONG);
/// `write.parquet.dict-size-bytes` (default 2 MiB).
pub const PARQUET_DICT_SIZE_BYTES: TableProperty = int("write.parquet.dict-size-bytes", 1, LONG);
/// `write.distribution-mode`.
pub const WRITE_DISTRIBUTION_MODE: TableProperty =
    one_of("write.distribution-mode", &["none", "hash", "range"]);
/// `write.format.default` (icefloe writes Parquet).
pub const DEFAULT_FILE_FORMAT: TableProperty = one_of("write.format.default", FILE_FORMATS);
/// `write.delete.format.default` (icefloe writes Parquet).
pub const DELETE_DEFAULT_FILE_FORMAT: TableProperty =
    one_of("write.delete.format.default", FILE_FORMATS);
/// `write.delete.mode` (default copy-on-write).
pub const DELETE_MODE: TableProperty = one_of("write.delete.mode", ROW_LEVEL_MODES);
/// `write.update.mode` (default copy-on-write).
pub const UPDATE_MODE: TableProperty = one_of("write.update.mode", ROW_LEVEL_MODES);
/// `write.merge.mode` (default copy-on-write).
pub const MERGE_MODE: TableProperty = one_of("write.merge.mode", ROW_LEVEL_MODES);
/// `write.delete.isolation-level` (default serializable).
pub const DELETE_ISOLATION_LEVEL: TableProperty =
    one_of("write.delete.isolation-level", ISOLATION_LEVELS);
/// `write.update.isolation-level` (default serializable).
pub const UPDATE_ISOLATION_LEVEL: TableProperty =
    one_of("write.update.isolation-level", ISOLATION_LEVELS);
/// `write.merge.isolation-level` (default serializable).
pub const MERGE_ISOLATION_LEVEL: TableProperty =
    one_of("write.merge.isolation-level", ISOLATION_LEVELS);
/// `write.delete.granularity` (default `file`).
pub const DELETE_GRANULARITY: TableProperty =
    one_of("write.delete.granularity", &["file", "partition"]);
/// `write.metadata.metrics.default` (default `truncate(16)`).
pub const METRICS_DEFAULT: TableProperty = TableProperty {
    name: "write.metadata.metrics.default",
    ty: PropertyType::MetricsMode,
};
/// `write.metadata.metrics.column.<column>`: the metrics mode of one column (a prefix).
pub const METRICS_COLUMN: TableProperty = TableProperty {
    name: "write.metadata.metrics.column.",
    ty: PropertyType::MetricsMode,
};
/// `write.metadata.metrics.max-inferred-column-defaults` (default 100).
pub const METRICS_MAX_INFERRED_COLUMN_DEFAULTS: TableProperty = int(
    "write.metadata.metrics.max-inferred-column-defaults",
    0,
    INT,
);
/// `write.metadata.previous-versions-max` (default 100).
pub const METADATA_PREVIOUS_VERSIONS_MAX: TableProperty =
    int("write.metadata.previous-versions-max", 0, INT);
/// `write.metadata.delete-after-commit.enabled` (default false).
pub const METADATA_DELETE_AFTER_COMMIT_ENABLED: TableProperty =
    boolean("write.metadata.delete-after-commit.enabled");
/// `history.expire.max-snapshot-age-ms` (default 5 days).
pub const MAX_SNAPSHOT_AGE_MS: TableProperty = int("history.expire.max-snapshot-age-ms", 0, LONG);
/// `history.expire.min-snapshots-to-keep` (default 1).
pub const MIN_SNAPSHOTS_TO_KEEP: TableProperty =
    int("history.expire.min-snapshots-to-keep", 1, INT);
/// `history.expire.max-ref-age-ms` (default: never).
pub const MAX_REF_AGE_MS: TableProperty = int("history.expire.max-ref-age-ms", 0, LONG);
/// `gc.enabled` (default true): whether operations may delete the table's files. Java's
/// snapshot and migrate procedures set it to false on a table whose data files belong to
/// another table; see [`check_gc_enabled`].
pub const GC_ENABLED: TableProperty = boolean("gc.enabled");
/// `write.wap.enabled` (default false): writes made while a write-audit-publish id is set
/// are staged (`icefloe.wap_id`).
pub const WAP_ENABLED: TableProperty = boolean("write.wap.enabled");
/// `schema.name-mapping.default`: the name mapping of files without field ids.
pub const DEFAULT_NAME_MAPPING: TableProperty = TableProperty {
    name: "schema.name-mapping.default",
    ty: PropertyType::NameMapping,
};

const fn location(name: &'static str) -> TableProperty {
    TableProperty {
        name,
        ty: PropertyType::Location,
    }
}

/// `write.data.path` (default `<location>/data`): where data and delete files go.
pub const WRITE_DATA_PATH: TableProperty = location("write.data.path");
/// `write.metadata.path` (default `<location>/metadata`): where metadata files go.
pub const WRITE_METADATA_PATH: TableProperty = location("write.metadata.path");
/// `write.object-storage.path`: Java's data root with `write.object-storage.enabled`
/// (icefloe moves it in `rewrite_table_path`; checked so that Java's writes land where
/// readers look).
pub const OBJECT_STORAGE_PATH: TableProperty = location("write.object-storage.path");
/// `write.folder-storage.path`: Java's deprecated name of `write.data.path`.
pub const FOLDER_STORAGE_PATH: TableProperty = location("write.folder-storage.path");

/// Every property icefloe reads, with the values it takes. [`METRICS_COLUMN`] is a
/// prefix; the others are whole names.
pub const KNOWN: &[TableProperty] = &[
    FORMAT_VERSION,
    COMMIT_NUM_RETRIES,
    COMMIT_MIN_RETRY_WAIT_MS,
    COMMIT_MAX_RETRY_WAIT_MS,
    COMMIT_TOTAL_RETRY_TIME_MS,
    MANIFEST_MERGE_ENABLED,
    MANIFEST_MIN_MERGE_COUNT,
    MANIFEST_TARGET_SIZE_BYTES,
    WRITE_TARGET_FILE_SIZE_BYTES,
    DELETE_TARGET_FILE_SIZE_BYTES,
    PARQUET_COMPRESSION,
    PARQUET_COMPRESSION_LEVEL,
    PARQUET_ROW_GROUP_SIZE_BYTES,
    PARQUET_PAGE_SIZE_BYTES,
    PARQUET_PAGE_ROW_LIMIT,
    PARQUET_DICT_SIZE_BYTES,
    WRITE_DISTRIBUTION_MODE,
    DEFAULT_FILE_FORMAT,
    DELETE_DEFAULT_FILE_FORMAT,
    DELETE_MODE,
    UPDATE_MODE,
    MERGE_MODE,
    DELETE_ISOLATION_LEVEL,
    UPDATE_ISOLATION_LEVEL,
    MERGE_ISOLATION_LEVEL,
    DELETE_GRANULARITY,
    METRICS_DEFAULT,
    METRICS_COLUMN,
    METRICS_MAX_INFERRED_COLUMN_DEFAULTS,
    METADATA_PREVIOUS_VERSIONS_MAX,
    METADATA_DELETE_AFTER_COMMIT_ENABLED,
    MAX_SNAPSHOT_AGE_MS,
    MIN_SNAPSHOTS_TO_KEEP,
    MAX_REF_AGE_MS,
    GC_ENABLED,
    WAP_ENABLED,
    DEFAULT_NAME_MAPPING,
    WRITE_DATA_PATH,
    WRITE_METADATA_PATH,
    OBJECT_STORAGE_PATH,
    FOLDER_STORAGE_PATH,
];

/// The known property `key` is (a [`METRICS_COLUMN`] key included), if any.
pub fn lookup(key: &str) -> Option<&'static TableProperty> {
    KNOWN.iter().find(|p| {
        if **p == METRICS_COLUMN {
            key.strip_prefix(p.name).is_some_and(|c| !c.is_empty())
        } else {
            p.name == key
        }
    })
}

/// Check `value` for property `key`: a known property must take it, any value of an
/// unknown one passes.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): the property, the value and what it
/// takes.
pub fn validate(key: &str, value: &str) -> Result<()> {
    match lookup(key) {
        Some(p) => p.check_as(key, value),
        None => Ok(()),
    }
}

/// Check properties whose values are valid only together (the Parquet compression level
/// within its codec's range; a column's bloom-filter fpp and NDV, read only when its
/// filter is enabled, and `write.parquet.bloom-filter-max-bytes`), in `properties` as
/// they would be after a change, when `changed` says one of them is changed.
///
/// Errors: as [`validate`], naming the properties.
pub fn validate_together(
    properties: &HashMap<String, String>,
    changed: impl Fn(&str) -> bool,
) -> Result<()> {
    if changed(PARQUET_COMPRESSION.name) || changed(PARQUET_COMPRESSION_LEVEL.name) {
        crate::write::parquet_compression(properties)?;
    }
    if properties
        .keys()
        .any(|k| changed(k) && crate::write::is_bloom_filter_key(k))
    {
        crate::write::check_bloom_filters(properties)?;
    }
    Ok(())
}

/// [`validate`] every entry of `properties`, then [`validate_together`].
pub fn validate_all(properties: &HashMap<String, String>) -> Result<()> {
    let mut keys: Vec<&String> = properties.keys().collect();
    keys.sort();
    for k in keys {
        validate(k, &properties[k])?;
    }
    validate_together(properties, |_| true)
}

/// The format version a `format-version` value names ([`FORMAT_VERSION`]).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the property and the value when
/// it is no integer as Java's `Integer.parseInt` reads one (surrounding blanks
/// included), or not 1, 2 or 3.
pub fn parse_format_version(value: &str) -> Result<FormatVersion> {
    match FORMAT_VERSION.parse_int(FORMAT_VERSION.name, value)? {
        1 => Ok(FormatVersion::V1),
        2 => Ok(FormatVersion::V2),
        3 => Ok(FormatVersion::V3),
        _ => Err(FORMAT_VERSION.error(FORMAT_VERSION.name, value)),
    }
}

/// The format version `properties` set with `format-version`, `None` when they do not
/// set it. Errors: as [`parse_format_version`].
pub fn format_version(properties: &HashMap<String, String>) -> Result<Option<FormatVersion>> {
    FORMAT_VERSION
        .raw(properties)
        .map(parse_format_version)
        .transpose()
}

/// Whether `gc.enabled` in `properties` lets operations delete the table's files: unset
/// is true; a value other than `true` (any case, no blanks) is false, as Java's
/// `Boolean.parseBoolean` reads it, so a value another engine wrote that is no boolean
/// (` true` included) keeps the files.
pub fn gc_enabled(properties: &HashMap<String, String>) -> bool {
    GC_ENABLED
        .raw(properties)
        .is_none_or(|v| v.eq_ignore_ascii_case("true"))
}

/// Refuse `operation` on a table (e.g. `"expire snapshots of table 'ns.t'"`, naming the
/// table or where it is) when `gc.enabled` is false in its `properties`
/// ([`gc_enabled`]). As in Iceberg Java
/// (`RemoveSnapshots`, the Spark actions deleting orphan and reachable files, Spark's
/// `DROP TABLE … PURGE`), the whole operation is refused — a dry run too, and the
/// metadata change of an expiry with it — not only its deletes: the table's files may
/// be shared with other tables.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the operation, the table and
/// the property.
pub fn check_gc_enabled(properties: &HashMap<String, String>, operation: &str) -> Result<()> {
    if gc_enabled(properties) {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "cannot {operation}: GC is disabled (table property '{}' is not \
         true): the table's files may be shared with other tables, and deleting them could \
         corrupt those; set '{}' = 'true' only if no other table uses them",
        GC_ENABLED.name, GC_ENABLED.name
    )))
}

impl TableProperty {
    /// What the property takes, in words.
    pub fn expected(&self) -> String {
        match self.ty {
            PropertyType::Int { min: 0, max } if max == LONG => {
                "a non-negative integer".to_string()
            }
            PropertyType::Int { min: 1, max } if max == LONG => "a positive integer".to_string(),
            // a short range is listed (`format-version`: 1, 2 or 3)
            PropertyType::Int { min, max } if max - min <= 2 => {
                let values: Vec<String> = (min..=max).map(|v| v.to_string()).collect();
                match values.split_last() {
                    Some((last, init)) if !init.is_empty() => {
                        format!("{} or {last}", init.join(", "))
                    }
                    _ => values.join(""),
                }
            }
            PropertyType::Int { min, max } => format!("an integer from {min} to {max}"),
            PropertyType::Bool => "true or false".to_string(),
            PropertyType::OneOf(values) => match values {
                [] => "nothing".to_string(),
                [one] => (*one).to_string(),
                [init @ .., last] => format!("{} or {last}", init.join(", ")),
            },
            PropertyType::MetricsMode => {
                "none, counts, truncate(N) with N from 1 to 2147483647, or full".into()
            }
            PropertyType::NameMapping => "a JSON name mapping".to_string(),
            PropertyType::Location => "an absolute location".to_string(),
        }
    }

    /// The error for `value` of this property (named `key`).
    fn error(&self, key: &str, value: &str) -> Error {
        Error::invalid_argument(format!(
            "table property '{key}' is '{value}' (expected {})",
            self.expected()
        ))
    }

    /// Check `value` for this property.
    ///
    /// Errors: the property, the value and what it takes.
    pub fn check(&self, value: &str) -> Result<()> {
        self.check_as(self.name, value)
    }

    fn check_as(&self, key: &str, value: &str) -> Result<()> {
        match self.ty {
            PropertyType::Int { .. } => self.parse_int(key, value).map(|_| ()),
            PropertyType::Bool => self.parse_bool(key, value).map(|_| ()),
            PropertyType::OneOf(_) => self.parse_choice(key, value).map(|_| ()),
            PropertyType::MetricsMode => crate::write::MetricsMode::parse(value)
                .map(|_| ())
                .map_err(|_| self.error(key, value)),
            PropertyType::NameMapping => crate::spec::name_mapping::NameMapping::from_json(value)
                .map(|_| ())
                .map_err(|e| self.error(key, value).with_source(e)),
            PropertyType::Location => crate::io::check_location_property(key, value),
        }
    }

    /// `value` as Java's `Integer.parseInt` / `Long.parseLong` read it (Java's
    /// `PropertyUtil.propertyAsInt` / `propertyAsLong`): an optional sign and digits, no
    /// blanks, within the property's range.
    fn parse_int(&self, key: &str, value: &str) -> Result<i64> {
        let PropertyType::Int { min, max } = self.ty else {
            return Err(self.error(key, value));
        };
        match value.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(self.error(key, value)),
        }
    }

    fn parse_bool(&self, key: &str, value: &str) -> Result<bool> {
        match value.to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.error(key, value)),
        }
    }

    fn parse_choice(&self, key: &str, value: &str) -> Result<&'static str> {
        let PropertyType::OneOf(values) = self.ty else {
            return Err(self.error(key, value));
        };
        values
            .iter()
            .find(|v| v.eq_ignore_ascii_case(value))
            .copied()
            .ok_or_else(|| self.error(key, value))
    }

    /// The raw value in `properties`, if set.
    pub fn raw<'p>(&self, properties: &'p HashMap<String, String>) -> Option<&'p str> {
        properties.get(self.name).map(String::as_str)
    }

    /// The integer value in `properties`, `None` when unset.
    ///
    /// Errors: a value that is no integer in the property's range, naming it.
    pub fn int(&self, properties: &HashMap<String, String>) -> Result<Option<i64>> {
        self.raw(properties)
            .map(|v| self.parse_int(self.name, v))
            .transpose()
    }

    /// The boolean value in `properties`, `None` when unset.
    ///
    /// Errors: a value other than `true` / `false`, naming the property.
    pub fn bool(&self, properties: &HashMap<String, String>) -> Result<Option<bool>> {
        self.raw(properties)
            .map(|v| self.parse_bool(self.name, v))
            .transpose()
    }

    /// The value in `properties` as one of the property's words (in the spelling of
    /// [`PropertyType::OneOf`]), `None` when unset.
    ///
    /// Errors: another value, naming the property.
    pub fn choice(&self, properties: &HashMap<String, String>) -> Result<Option<&'static str>> {
        self.raw(properties)
            .map(|v| self.parse_choice(self.name, v))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_pass_and_others_name_property_value_and_range() {
        for (k, v) in [
            ("commit.retry.num-retries", "0"),
            ("commit.retry.min-wait-ms", "10"),
            ("commit.retry.min-wait-ms", "+10"),
            ("write.target-file-size-bytes", "1"),
            ("write.parquet.compression-codec", "ZSTD"),
            ("write.delete.granularity", "partition"),
            ("write.delete.mode", "Merge-On-Read"),
            ("write.merge.isolation-level", "snapshot"),
            ("write.metadata.metrics.column.a.b", "truncate(8)"),
            ("write.metadata.delete-after-commit.enabled", "TRUE"),
            ("format-version", "3"),
            ("owner", "anything at all"),
            ("write.metadata.metrics.column.", "not a prefix key: free"),
        ] {
            validate(k, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        for (k, v, expected) in [
            (
                "commit.retry.num-retries",
                "-1",
                "an integer from 0 to 2147483647",
            ),
            ("commit.retry.min-wait-ms", "-1", "a non-negative integer"),
            ("write.target-file-size-bytes", "abc", "a positive integer"),
            ("write.target-file-size-bytes", "0", "a positive integer"),
            (
                "write.parquet.compression-codec",
                "nope",
                "zstd, gzip, snappy, lz4, lz4_raw, brotli, uncompressed or none",
            ),
            ("write.delete.granularity", "row", "file or partition"),
            ("write.update.mode", "mor", "copy-on-write or merge-on-read"),
            (
                "write.delete.isolation-level",
                "none",
                "serializable or snapshot",
            ),
            (
                "history.expire.min-snapshots-to-keep",
                "0",
                "an integer from 1 to 2147483647",
            ),
            (
                "write.metadata.metrics.column.a",
                "truncate(0)",
                "none, counts, truncate(N) with N from 1 to 2147483647, or full",
            ),
            ("commit.manifest-merge.enabled", "yes", "true or false"),
            ("gc.enabled", "no", "true or false"),
            ("schema.name-mapping.default", "{", "a JSON name mapping"),
            ("format-version", "4", "1, 2 or 3"),
            // words as Java's enums read them: any case, no blanks
            ("gc.enabled", " true", "true or false"),
            (
                "write.delete.mode",
                "merge-on-read ",
                "copy-on-write or merge-on-read",
            ),
            (
                "write.parquet.compression-codec",
                " zstd",
                "zstd, gzip, snappy, lz4, lz4_raw, brotli, uncompressed or none",
            ),
            (
                "write.metadata.metrics.default",
                " full",
                "none, counts, truncate(N) with N from 1 to 2147483647, or full",
            ),
            // Java reads N with Integer.parseInt
            (
                "write.metadata.metrics.default",
                "truncate(2147483648)",
                "none, counts, truncate(N) with N from 1 to 2147483647, or full",
            ),
            (
                "write.metadata.metrics.column.a",
                "truncate( 8)",
                "none, counts, truncate(N) with N from 1 to 2147483647, or full",
            ),
            // integers as Java's Integer.parseInt / Long.parseLong read them: no blanks
            ("format-version", " 3", "1, 2 or 3"),
            ("format-version", "3 ", "1, 2 or 3"),
            ("format-version", "3.0", "1, 2 or 3"),
            ("commit.retry.min-wait-ms", " 10 ", "a non-negative integer"),
            (
                "commit.retry.num-retries",
                "\t4",
                "an integer from 0 to 2147483647",
            ),
            ("write.target-file-size-bytes", "1 ", "a positive integer"),
            (
                "write.parquet.compression-level",
                " 3",
                "an integer from -2147483648 to 2147483647",
            ),
        ] {
            let err = validate(k, v).unwrap_err();
            assert_eq!(
                err.message(),
                format!("table property '{k}' is '{v}' (expected {expected})")
            );
        }
    }

    #[test]
    fn format_versions_parse_as_java_reads_them() {
        for (value, version) in [
            ("1", FormatVersion::V1),
            ("2", FormatVersion::V2),
            ("3", FormatVersion::V3),
            ("+3", FormatVersion::V3),
            ("03", FormatVersion::V3),
        ] {
            assert_eq!(parse_format_version(value).unwrap(), version, "{value}");
        }
        for value in [
            " 3",
            "3 ",
            " 3 ",
            "",
            "0",
            "4",
            "-1",
            "v3",
            "3.0",
            "99999999999",
        ] {
            let err = parse_format_version(value).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{value}");
            assert_eq!(
                err.message(),
                format!("table property 'format-version' is '{value}' (expected 1, 2 or 3)")
            );
        }
        let props: HashMap<String, String> = [("format-version".to_string(), " 2".into())]
            .into_iter()
            .collect();
        assert!(format_version(&props).is_err());
        assert_eq!(format_version(&HashMap::new()).unwrap(), None);
    }

    #[test]
    fn compression_level_is_checked_with_its_codec() {
        let props = |kv: &[(&str, &str)]| -> HashMap<String, String> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        validate_all(&props(&[("write.parquet.compression-level", "9")])).unwrap();
        let err = validate_all(&props(&[("write.parquet.compression-level", "99")])).unwrap_err();
        assert!(
            err.to_string().contains("write.parquet.compression-level"),
            "{err}"
        );
        validate_all(&props(&[
            ("write.parquet.compression-codec", "gzip"),
            ("write.parquet.compression-level", "9"),
        ]))
        .unwrap();
        // a change to neither leaves them unchecked (a table already holding such a pair
        // takes other changes)
        validate_together(&props(&[("write.parquet.compression-level", "99")]), |k| {
            k == "owner"
        })
        .unwrap();
    }

    #[test]
    fn gc_is_enabled_unless_the_property_says_otherwise() {
        let props = |v: Option<&str>| -> HashMap<String, String> {
            v.map(|v| ("gc.enabled".to_string(), v.to_string()))
                .into_iter()
                .collect()
        };
        for (value, enabled) in [
            (None, true),
            (Some("true"), true),
            (Some("TRUE"), true),
            // blanks: false, as Java's Boolean.parseBoolean reads " true"
            (Some(" true"), false),
            (Some("true "), false),
            (Some("false"), false),
            (Some("False"), false),
            // another engine's value that is no boolean: false, as Java reads it
            (Some("yes"), false),
            (Some(""), false),
        ] {
            assert_eq!(gc_enabled(&props(value)), enabled, "{value:?}");
            let checked = check_gc_enabled(&props(value), "expire snapshots of table 'ns.t'");
            assert_eq!(checked.is_ok(), enabled, "{value:?}");
        }
        let err = check_gc_enabled(&props(Some("false")), "expire snapshots of table 'ns.t'")
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        let msg = err.to_string();
        for part in [
            "expire snapshots of table 'ns.t'",
            "GC is disabled",
            "gc.enabled",
        ] {
            assert!(msg.contains(part), "{part}: {msg}");
        }
    }

    #[test]
    fn readers_parse_through_the_table() {
        let p: HashMap<String, String> = [("commit.retry.num-retries".to_string(), "7".into())]
            .into_iter()
            .collect();
        assert_eq!(COMMIT_NUM_RETRIES.int(&p).unwrap(), Some(7));
        // a value another engine wrote with blanks: an error naming it, as Java's
        // `Integer.parseInt` fails on it
        let blank: HashMap<String, String> =
            [("commit.retry.num-retries".to_string(), " 7".into())]
                .into_iter()
                .collect();
        let err = COMMIT_NUM_RETRIES.int(&blank).unwrap_err();
        assert!(
            err.to_string()
                .contains("table property 'commit.retry.num-retries' is ' 7'"),
            "{err}"
        );
        assert_eq!(COMMIT_MIN_RETRY_WAIT_MS.int(&p).unwrap(), None);
        let p: HashMap<String, String> =
            [("write.delete.mode".to_string(), "MERGE-on-read".into())]
                .into_iter()
                .collect();
        assert_eq!(DELETE_MODE.choice(&p).unwrap(), Some("merge-on-read"));
        assert_eq!(
            lookup("write.metadata.metrics.column.x"),
            Some(&METRICS_COLUMN)
        );
    }
}
