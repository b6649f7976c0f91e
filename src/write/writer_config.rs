//! Data-file writer settings from table properties (Java `TableProperties` names and
//! defaults).

use std::collections::HashMap;

use datafusion::parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use datafusion::parquet::file::metadata::KeyValue;
use datafusion::parquet::file::properties::{EnabledStatistics, WriterProperties};
use datafusion::parquet::schema::types::ColumnPath;

use super::metrics_config::MetricsConfig;
use crate::error::{Error, Result};

use crate::table_properties as tp;

/// `write.target-file-size-bytes` (default 512 MiB).
pub const TARGET_FILE_SIZE_PROPERTY: &str = tp::WRITE_TARGET_FILE_SIZE_BYTES.name;
/// `write.parquet.compression-codec` (default `zstd`).
pub const COMPRESSION_CODEC_PROPERTY: &str = tp::PARQUET_COMPRESSION.name;
/// `write.parquet.compression-level` (default: the codec's; zstd 3 as parquet-mr).
pub const COMPRESSION_LEVEL_PROPERTY: &str = tp::PARQUET_COMPRESSION_LEVEL.name;
/// `write.parquet.row-group-size-bytes` (default 128 MiB).
pub const ROW_GROUP_SIZE_PROPERTY: &str = tp::PARQUET_ROW_GROUP_SIZE_BYTES.name;
/// `write.parquet.page-size-bytes` (default 1 MiB).
pub const PAGE_SIZE_PROPERTY: &str = tp::PARQUET_PAGE_SIZE_BYTES.name;
/// `write.parquet.page-row-limit` (default 20 000).
pub const PAGE_ROW_LIMIT_PROPERTY: &str = tp::PARQUET_PAGE_ROW_LIMIT.name;
/// `write.parquet.dict-size-bytes` (default 2 MiB).
pub const DICT_SIZE_PROPERTY: &str = tp::PARQUET_DICT_SIZE_BYTES.name;
/// `write.distribution-mode` (`none`, `hash`, `range`; default: see [`DistributionMode`]).
pub const DISTRIBUTION_MODE_PROPERTY: &str = tp::WRITE_DISTRIBUTION_MODE.name;

/// How the rows of one write are spread over its writers before they are written
/// (`write.distribution-mode`, Java `DistributionMode`).
///
/// Unset, a write takes Spark's default for the table: `range` when it has a sort
/// order, else `hash` when it is partitioned, else `none`. icefloe writes `hash` and
/// `range` alike: rows are hash-distributed by their partition values, so each
/// partition's rows reach one writer (DataFusion has no range repartitioning; each
/// writer still sorts its files by the sort order). An unpartitioned table is not
/// redistributed under any mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistributionMode {
    /// Rows are written by the writer that produced them.
    None,
    /// Rows are distributed by a hash of their partition values.
    Hash,
    /// Rows are distributed by ranges of the sort order (Spark); icefloe: as `Hash`.
    Range,
}

impl DistributionMode {
    /// The mode set in `props`, if any.
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`] naming the property): a value other
    /// than `none`, `hash` or `range` (any case).
    pub fn from_properties(props: &HashMap<String, String>) -> Result<Option<Self>> {
        Ok(match tp::WRITE_DISTRIBUTION_MODE.choice(props)? {
            None => None,
            Some("hash") => Some(Self::Hash),
            Some("range") => Some(Self::Range),
            Some(_) => Some(Self::None),
        })
    }

    /// The mode a write uses: the one set in `props`, else Spark's default for a table
    /// that is `sorted` (has a sort order) and `partitioned` (has a non-void partition
    /// field). Errors as [`Self::from_properties`].
    pub fn resolve(
        props: &HashMap<String, String>,
        partitioned: bool,
        sorted: bool,
    ) -> Result<Self> {
        Ok(Self::from_properties(props)?.unwrap_or(if sorted {
            Self::Range
        } else if partitioned {
            Self::Hash
        } else {
            Self::None
        }))
    }

    /// Whether rows are distributed by their partition values before writing.
    pub fn distributes_by_partition(self) -> bool {
        matches!(self, Self::Hash | Self::Range)
    }
}

/// How data files are written: sizes in bytes, the Parquet codec, and the metrics kept.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFileWriterConfig {
    /// `write.target-file-size-bytes`: a file is closed and the next one started once
    /// its written plus buffered bytes reach this (default 536 870 912).
    pub target_file_size_bytes: u64,
    /// `write.parquet.compression-codec` with `write.parquet.compression-level`:
    /// `zstd` (default, level 3), `gzip`, `snappy`, `lz4`, `lz4_raw`, `brotli`,
    /// `uncompressed`.
    pub compression: Compression,
    /// `write.parquet.row-group-size-bytes`: a row group is closed once its estimated
    /// encoded size reaches this (default 134 217 728).
    pub row_group_size_bytes: u64,
    /// `write.parquet.page-size-bytes` (default 1 048 576).
    pub page_size_bytes: u64,
    /// `write.parquet.page-row-limit` (default 20 000).
    pub page_row_limit: u64,
    /// `write.parquet.dict-size-bytes` (default 2 097 152).
    pub dict_size_bytes: u64,
    /// `write.metadata.metrics.*`: which column metrics data files record.
    pub metrics: MetricsConfig,
    /// `write.distribution-mode`, when set (checked here so a bad value fails the write
    /// before any file is written; the plan applies it, see [`DistributionMode`]).
    pub distribution_mode: Option<DistributionMode>,
    /// The columns with a Parquet bloom filter
    /// (`write.parquet.bloom-filter-enabled.column.<name>`), by name.
    pub bloom_filters: Vec<BloomFilterColumn>,
}

/// One column's Parquet bloom filter, as Java's `Parquet.WriteBuilder` configures it.
#[derive(Debug, Clone, PartialEq)]
pub struct BloomFilterColumn {
    /// The column's Parquet path, dotted (`s`, `st.x`), as Java passes it to parquet-mr
    /// (`ColumnPath.fromDotString`).
    pub column: String,
    /// `write.parquet.bloom-filter-fpp.column.<name>`: the false-positive probability,
    /// 0 < fpp < 1 (default 0.01).
    pub fpp: f64,
    /// The most distinct values the filter is sized for: Java's
    /// `write.parquet.bloom-filter-ndv.column.<name>` when set, capped so that the filter
    /// takes at most `write.parquet.bloom-filter-max-bytes` (default 1 MiB, the size
    /// parquet-mr gives a filter without an NDV). The `parquet` crate then folds the
    /// filter down to the fewest bytes that keep `fpp` for the values written.
    pub max_ndv: u64,
}

/// Java `TableProperties.PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX`.
pub const BLOOM_FILTER_ENABLED_PREFIX: &str = "write.parquet.bloom-filter-enabled.column.";
/// Java `TableProperties.PARQUET_BLOOM_FILTER_COLUMN_FPP_PREFIX`.
pub const BLOOM_FILTER_FPP_PREFIX: &str = "write.parquet.bloom-filter-fpp.column.";
/// Java `TableProperties.PARQUET_BLOOM_FILTER_COLUMN_NDV_PREFIX`.
pub const BLOOM_FILTER_NDV_PREFIX: &str = "write.parquet.bloom-filter-ndv.column.";
/// Java `TableProperties.PARQUET_BLOOM_FILTER_MAX_BYTES` (default 1 048 576).
pub const BLOOM_FILTER_MAX_BYTES: &str = "write.parquet.bloom-filter-max-bytes";

/// Check the bloom-filter properties of `props` (as they will be after a change), so a
/// bad value is refused where it is set rather than by every later write.
///
/// Errors: those of [`bloom_filters`].
pub(crate) fn check_bloom_filters(props: &HashMap<String, String>) -> Result<()> {
    bloom_filters(props).map(|_| ())
}

/// Whether `key` is one of the bloom-filter properties [`bloom_filters`] reads.
pub(crate) fn is_bloom_filter_key(key: &str) -> bool {
    key == BLOOM_FILTER_MAX_BYTES
        || [
            BLOOM_FILTER_ENABLED_PREFIX,
            BLOOM_FILTER_FPP_PREFIX,
            BLOOM_FILTER_NDV_PREFIX,
        ]
        .iter()
        .any(|p| key.starts_with(p))
}

/// The bloom filters `props` ask for (see [`BloomFilterColumn`]), sorted by column.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`] naming the property): an fpp that is
/// no number in (0, 1), an NDV or max-bytes that is no positive integer.
fn bloom_filters(props: &HashMap<String, String>) -> Result<Vec<BloomFilterColumn>> {
    let bad = |key: &str, value: &str, what: &str| {
        Error::invalid_argument(format!("table property '{key}': '{value}' is not {what}"))
    };
    let max_bytes = match props.get(BLOOM_FILTER_MAX_BYTES) {
        None => 1024 * 1024,
        Some(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0 && *n <= i32::MAX as u64)
            .ok_or_else(|| bad(BLOOM_FILTER_MAX_BYTES, v, "an integer from 1 to 2147483647"))?,
    };
    let mut out = vec![];
    for (key, value) in props {
        let Some(column) = key.strip_prefix(BLOOM_FILTER_ENABLED_PREFIX) else {
            continue;
        };
        // Java `Boolean.parseBoolean`: "true" in any case, anything else false
        if !value.eq_ignore_ascii_case("true") {
            continue;
        }
        let fpp_key = format!("{BLOOM_FILTER_FPP_PREFIX}{column}");
        let fpp = match props.get(&fpp_key) {
            None => 0.01,
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| *f > 0.0 && *f < 1.0)
                .ok_or_else(|| bad(&fpp_key, v, "a number greater than 0 and less than 1"))?,
        };
        // the filter's bytes for n values at `fpp` are n * -8 / ln(1 - fpp^(1/8)) / 8
        // (Parquet's split-block filter), rounded up to a power of two: the most values
        // within the largest power of two not above `max_bytes`
        let cap_bytes = 1u64 << (63 - max_bytes.leading_zeros());
        let per_byte = -(1.0 - fpp.powf(1.0 / 8.0)).ln();
        let cap = ((cap_bytes as f64 * per_byte) as u64).max(1);
        let ndv_key = format!("{BLOOM_FILTER_NDV_PREFIX}{column}");
        let max_ndv = match props.get(&ndv_key) {
            None => cap,
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad(&ndv_key, v, "a positive integer"))?
                .min(cap),
        };
        out.push(BloomFilterColumn {
            column: column.to_string(),
            fpp,
            max_ndv,
        });
    }
    out.sort_by(|a, b| a.column.cmp(&b.column));
    Ok(out)
}

impl Default for DataFileWriterConfig {
    fn default() -> Self {
        Self {
            target_file_size_bytes: 512 * 1024 * 1024,
            compression: zstd_default(),
            row_group_size_bytes: 128 * 1024 * 1024,
            page_size_bytes: 1024 * 1024,
            page_row_limit: 20_000,
            dict_size_bytes: 2 * 1024 * 1024,
            metrics: MetricsConfig::default(),
            distribution_mode: None,
            bloom_filters: vec![],
        }
    }
}

fn zstd_default() -> Compression {
    // parquet-mr's default zstd level is 3
    Compression::ZSTD(ZstdLevel::try_new(3).unwrap_or_default())
}

fn positive(props: &HashMap<String, String>, p: tp::TableProperty, default: u64) -> Result<u64> {
    Ok(p.int(props)?
        .map_or(default, |n| u64::try_from(n).unwrap_or(default)))
}

/// The Parquet codec with its level set by `write.parquet.compression-codec` and
/// `write.parquet.compression-level` (default zstd at level 3, as parquet-mr).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`] naming the property): an unknown or
/// unsupported codec (`lzo`), a level that is no integer or out of the codec's range.
pub fn parquet_compression(props: &HashMap<String, String>) -> Result<Compression> {
    let level = tp::PARQUET_COMPRESSION_LEVEL
        .int(props)?
        .map(|l| i32::try_from(l).unwrap_or(i32::MAX));
    let codec = tp::PARQUET_COMPRESSION.choice(props)?.unwrap_or("zstd");
    // the levels arrow-rs takes (its `CompressionLevel` ranges, not exported)
    let range = match codec {
        "zstd" => Some((1, 22)),
        "gzip" => Some((0, 9)),
        "brotli" => Some((0, 11)),
        _ => None,
    };
    let level = match (level, range) {
        (Some(l), Some((min, max))) if !(min..=max).contains(&l) => {
            return Err(Error::invalid_argument(format!(
                "table property '{COMPRESSION_LEVEL_PROPERTY}' is '{l}' (expected a level \
                 from {min} to {max} for codec {codec})"
            )))
        }
        (l, _) => l,
    };
    let bad = |e: datafusion::parquet::errors::ParquetError| {
        Error::invalid_argument(format!(
            "table property '{COMPRESSION_LEVEL_PROPERTY}': level not valid for {codec}"
        ))
        .with_source(e)
    };
    Ok(match codec {
        "zstd" => match level {
            None => zstd_default(),
            Some(l) => Compression::ZSTD(ZstdLevel::try_new(l).map_err(bad)?),
        },
        "gzip" => match level {
            None => Compression::GZIP(GzipLevel::default()),
            Some(l) => Compression::GZIP(GzipLevel::try_new(l.unsigned_abs()).map_err(bad)?),
        },
        "brotli" => match level {
            None => Compression::BROTLI(BrotliLevel::default()),
            Some(l) => Compression::BROTLI(BrotliLevel::try_new(l.unsigned_abs()).map_err(bad)?),
        },
        "snappy" => Compression::SNAPPY,
        "lz4" => Compression::LZ4,
        "lz4_raw" => Compression::LZ4_RAW,
        _ => Compression::UNCOMPRESSED,
    })
}

/// Check that `property` (`write.format.default`, `write.delete.format.default`) asks for
/// Parquet, the one format icefloe writes, or is unset. Another engine may have set `orc`
/// or `avro` (Java's `TableProperties` take both).
///
/// Errors ([`crate::ErrorKind::Unsupported`]): any other value, naming the property and
/// the value.
pub fn check_file_format(
    props: &HashMap<String, String>,
    property: tp::TableProperty,
) -> Result<()> {
    match property.raw(props) {
        Some(v) if !v.eq_ignore_ascii_case("parquet") => Err(Error::unsupported(format!(
            "table property '{}' is '{v}': icefloe writes only Parquet files (set it to \
             'parquet' or unset it to write this table)",
            property.name
        ))),
        _ => Ok(()),
    }
}

impl DataFileWriterConfig {
    /// The settings of table `m`: its properties ([`Self::from_properties`]) and, for the
    /// metrics modes, its default sort order ([`MetricsConfig::for_table`]).
    ///
    /// Errors: as [`Self::from_properties`].
    pub fn for_table(m: &crate::spec::TableMetadata) -> Result<Self> {
        let mut config = Self::from_properties(&m.properties)?;
        config.metrics = config
            .metrics
            .with_sort_order(super::metrics_config::default_sort_order(m));
        Ok(config)
    }

    /// The settings in table properties; unset properties take Java's defaults.
    ///
    /// Errors: a size that is not a positive integer, an unknown or unsupported codec
    /// (`lzo`), a level out of the codec's range, a metrics mode that does not parse
    /// ([`crate::ErrorKind::InvalidArgument`] naming the property); a
    /// `write.format.default` other than Parquet ([`check_file_format`]).
    pub fn from_properties(props: &HashMap<String, String>) -> Result<Self> {
        check_file_format(props, tp::DEFAULT_FILE_FORMAT)?;
        let d = DataFileWriterConfig::default();
        let compression = parquet_compression(props)?;
        Ok(Self {
            target_file_size_bytes: positive(
                props,
                tp::WRITE_TARGET_FILE_SIZE_BYTES,
                d.target_file_size_bytes,
            )?,
            compression,
            row_group_size_bytes: positive(
                props,
                tp::PARQUET_ROW_GROUP_SIZE_BYTES,
                d.row_group_size_bytes,
            )?,
            page_size_bytes: positive(props, tp::PARQUET_PAGE_SIZE_BYTES, d.page_size_bytes)?,
            page_row_limit: positive(props, tp::PARQUET_PAGE_ROW_LIMIT, d.page_row_limit)?,
            dict_size_bytes: positive(props, tp::PARQUET_DICT_SIZE_BYTES, d.dict_size_bytes)?,
            metrics: MetricsConfig::from_properties(props)?,
            distribution_mode: DistributionMode::from_properties(props)?,
            bloom_filters: bloom_filters(props)?,
        })
    }

    /// [`Self::writer_properties`] of a file of Iceberg schema `schema`, which the file's
    /// `iceberg.schema` key-value metadata holds as JSON (as Iceberg Java writes it).
    ///
    /// Errors: a schema that does not serialize.
    pub(crate) fn writer_properties_for(
        &self,
        schema: &crate::spec::Schema,
    ) -> Result<WriterProperties> {
        let schema_json = serde_json::to_string(&schema.to_json())
            .map_err(|e| Error::invalid_data("schema to JSON").with_source(e))?;
        Ok(self
            .writer_properties()
            .into_builder()
            .set_key_value_metadata(Some(vec![KeyValue::new(
                super::data_file_writer::ICEBERG_SCHEMA_KEY.to_string(),
                schema_json,
            )]))
            .build())
    }

    /// The arrow-rs Parquet writer properties: codec, row-group/page/dictionary limits,
    /// bloom filters ([`BloomFilterColumn`]),
    /// chunk statistics kept exact (untruncated; Iceberg truncation is applied to the
    /// bounds afterwards), and `iceberg.schema` key-value metadata added by the caller.
    pub(crate) fn writer_properties(&self) -> WriterProperties {
        let to_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX).max(1);
        let mut builder = WriterProperties::builder();
        for b in &self.bloom_filters {
            let path =
                ColumnPath::from(b.column.split('.').map(str::to_string).collect::<Vec<_>>());
            builder = builder
                .set_column_bloom_filter_enabled(path.clone(), true)
                .set_column_bloom_filter_fpp(path.clone(), b.fpp)
                .set_column_bloom_filter_max_ndv(path, b.max_ndv);
        }
        builder
            .set_compression(self.compression)
            .set_max_row_group_row_count(None)
            .set_max_row_group_bytes(Some(to_usize(self.row_group_size_bytes)))
            .set_data_page_size_limit(to_usize(self.page_size_bytes))
            .set_data_page_row_count_limit(to_usize(self.page_row_limit))
            .set_dictionary_page_size_limit(to_usize(self.dict_size_bytes))
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_statistics_truncate_length(None)
            .build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::metrics_config::MetricsMode;

    fn props(kv: &[(&str, &str)]) -> HashMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn java_defaults() {
        let c = DataFileWriterConfig::from_properties(&HashMap::new()).unwrap();
        assert_eq!(c.target_file_size_bytes, 536_870_912);
        assert_eq!(c.row_group_size_bytes, 134_217_728);
        assert!(matches!(c.compression, Compression::ZSTD(_)));
        assert_eq!(c.metrics, MetricsConfig::default());
        assert_eq!(c, DataFileWriterConfig::default());
    }

    #[test]
    fn reads_properties() {
        let c = DataFileWriterConfig::from_properties(&props(&[
            (TARGET_FILE_SIZE_PROPERTY, "1024"),
            (COMPRESSION_CODEC_PROPERTY, "GZIP"),
            (COMPRESSION_LEVEL_PROPERTY, "9"),
            (ROW_GROUP_SIZE_PROPERTY, "4096"),
            ("write.metadata.metrics.default", "full"),
        ]))
        .unwrap();
        assert_eq!(c.target_file_size_bytes, 1024);
        assert_eq!(c.row_group_size_bytes, 4096);
        assert_eq!(
            c.compression,
            Compression::GZIP(GzipLevel::try_new(9).unwrap())
        );
        assert_eq!(c.metrics.default_mode, Some(MetricsMode::Full));
        assert_eq!(c.distribution_mode, None);
    }

    #[test]
    fn distribution_mode_defaults_as_spark() {
        let none = HashMap::new();
        // Spark: sorted -> range, partitioned -> hash, else none
        assert_eq!(
            DistributionMode::resolve(&none, true, true).unwrap(),
            DistributionMode::Range
        );
        assert_eq!(
            DistributionMode::resolve(&none, true, false).unwrap(),
            DistributionMode::Hash
        );
        assert_eq!(
            DistributionMode::resolve(&none, false, false).unwrap(),
            DistributionMode::None
        );
        let set = props(&[(DISTRIBUTION_MODE_PROPERTY, "NONE")]);
        assert_eq!(
            DistributionMode::resolve(&set, true, true).unwrap(),
            DistributionMode::None
        );
        // blanks: refused naming the property, as Java's DistributionMode.fromName
        let blank = props(&[(DISTRIBUTION_MODE_PROPERTY, " none")]);
        let err = DistributionMode::resolve(&blank, true, true).unwrap_err();
        assert!(
            err.to_string()
                .contains("table property 'write.distribution-mode' is ' none'"),
            "{err}"
        );
        assert!(!DistributionMode::None.distributes_by_partition());
        assert!(DistributionMode::Range.distributes_by_partition());
        let c =
            DataFileWriterConfig::from_properties(&props(&[(DISTRIBUTION_MODE_PROPERTY, "hash")]))
                .unwrap();
        assert_eq!(c.distribution_mode, Some(DistributionMode::Hash));
    }

    #[test]
    fn bad_values_name_the_property() {
        for (k, v) in [
            (TARGET_FILE_SIZE_PROPERTY, "-1"),
            (TARGET_FILE_SIZE_PROPERTY, "0"),
            (ROW_GROUP_SIZE_PROPERTY, "big"),
            (COMPRESSION_CODEC_PROPERTY, "lzo"),
            (COMPRESSION_LEVEL_PROPERTY, "99"),
            ("write.metadata.metrics.default", "truncate(0)"),
            (DISTRIBUTION_MODE_PROPERTY, "random"),
        ] {
            let err = DataFileWriterConfig::from_properties(&props(&[(k, v)])).unwrap_err();
            assert!(err.to_string().contains(k), "{k}={v}: {err}");
        }
    }
}
