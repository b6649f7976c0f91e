//! icefloe's session options, set with `SET icefloe.<name> = …` once registered
//! ([`register_iceberg_options`]; the CLI does): DataFusion's `ConfigExtension`.

use datafusion::common::config::ConfigExtension;
use datafusion::common::extensions_options;
use datafusion::prelude::SessionConfig;

use crate::error::{Error, Result};

extensions_options! {
    /// icefloe's options (prefix `icefloe`).
    pub struct IcefloeOptions {
        /// What `INSERT OVERWRITE` replaces: `static` (default; the whole table) or
        /// `dynamic` (only the partitions the new rows fall in, as Spark's
        /// `spark.sql.sources.partitionOverwriteMode=dynamic`).
        pub partition_overwrite_mode: String, default = "static".to_string()
        /// The deepest expression nesting `sql::execute` plans (a bound from the
        /// statement's tokens; deeper statements fail with "expression too deep"
        /// instead of overflowing the stack). The default suits 2 MiB thread stacks;
        /// raise it only where planning and execution run on larger ones (the CLI:
        /// 256 MiB and 5000).
        pub max_expression_depth: usize, default = crate::datafusion::sql::DEFAULT_MAX_EXPRESSION_DEPTH
        /// How scans apply position deletes and deletion vectors: `auto` (default;
        /// fragmented ones per batch after decoding, the others as a Parquet row
        /// selection), `selection` (always a row selection) or `filter` (always per
        /// batch). Scans for `DELETE`/`UPDATE`/`MERGE` and of metadata columns always
        /// use row selections.
        pub position_deletes: String, default = "auto".to_string()
        /// How query scans apply equality deletes: `auto` (default; each data file's
        /// deleted positions are resolved once, in a pass over its equality columns,
        /// and kept in the session's position delete cache, so later scans apply them
        /// as position deletes without reading those columns; under a `LIMIT`, files
        /// not resolved yet are probed per batch), `probe` (always a hashed probe of
        /// each row, nothing kept) or `resolve` (resolved under a `LIMIT` too). Scans
        /// for `DELETE`/`UPDATE`/`MERGE` always probe.
        pub equality_deletes: String, default = "auto".to_string()
    }
}

impl ConfigExtension for IcefloeOptions {
    const PREFIX: &'static str = "icefloe";
}

/// Register [`IcefloeOptions`] in a session config, so `SET icefloe.… = …` works, and
/// turn on exact decimal literals (`datafusion.sql_parser.parse_float_as_decimal = true`:
/// `1.25` is a `decimal(3,2)`, as in Spark). A session built from this config also needs
/// [`install_float_literal_rule`](super::install_float_literal_rule) (which
/// [`register_iceberg_factory`](super::register_iceberg_factory) and
/// [`sql::execute`](super::sql::execute) install) so `float`/`double` values stay
/// compared in double, and should run its SQL through `sql::execute`, which reads
/// exponent literals (`1e300`) as doubles; plain `ctx.sql` reads them as decimals and
/// refuses those beyond the decimal range.
pub fn register_iceberg_options(config: SessionConfig) -> SessionConfig {
    let mut config = config.with_option_extension(IcefloeOptions::default());
    config.options_mut().sql_parser.parse_float_as_decimal = true;
    config
}

/// `icefloe.partition_overwrite_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartitionOverwriteMode {
    Static,
    Dynamic,
}

impl PartitionOverwriteMode {
    pub(crate) fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "static" => Ok(Self::Static),
            "dynamic" => Ok(Self::Dynamic),
            other => Err(Error::invalid_argument(format!(
                "icefloe.partition_overwrite_mode is '{other}' (expected static or dynamic)"
            ))),
        }
    }
}
