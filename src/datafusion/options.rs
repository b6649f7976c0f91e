//! icefloe's session options, set with `SET icefloe.<name> = …` once registered
//! ([`register_iceberg_options`]; the CLI does): DataFusion's `ConfigExtension`.

use std::fmt;

use datafusion::common::config::{ConfigExtension, ConfigField, Visit};
use datafusion::common::{extensions_options, DataFusionError};
use datafusion::prelude::SessionConfig;

use crate::error::{Error, Result};

extensions_options! {
    /// icefloe's options (prefix `icefloe`).
    pub struct IcefloeOptions {
        /// What `INSERT OVERWRITE` replaces: `static` (default; the whole table) or
        /// `dynamic` (only the partitions the new rows fall in, as Spark's
        /// `spark.sql.sources.partitionOverwriteMode=dynamic`).
        pub partition_overwrite_mode: OptionChoice, default = OptionChoice::new("partition_overwrite_mode", &["static", "dynamic"])
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
        pub position_deletes: OptionChoice, default = OptionChoice::new("position_deletes", &["auto", "selection", "filter"])
        /// How query scans apply equality deletes: `auto` (default; each data file's
        /// deleted positions are resolved once, in a pass over its equality columns,
        /// and kept in the session's position delete cache, so later scans apply them
        /// as position deletes without reading those columns; under a `LIMIT`, files
        /// not resolved yet are probed per batch), `probe` (always a hashed probe of
        /// each row, nothing kept) or `resolve` (resolved under a `LIMIT` too). Scans
        /// for `DELETE`/`UPDATE`/`MERGE` always probe.
        pub equality_deletes: OptionChoice, default = OptionChoice::new("equality_deletes", &["auto", "probe", "resolve"])
        /// Query scans of a snapshot with at least this many live data files (counted
        /// from the manifest list, in the manifests the filter keeps) and no delete
        /// files plan each manifest's files when the scan reaches that manifest, not
        /// all files before the query starts: memory no longer grows with the table's
        /// file count. Such a scan gives DataFusion no per-file statistics (the
        /// manifest list's row count only, inexact), treats every float column it reads
        /// as possibly holding NaN, and cannot be sent to distributed workers. 0 turns
        /// it off. Default 100000.
        pub deferred_planning_min_files: usize, default = DEFAULT_DEFERRED_PLANNING_MIN_FILES
    }
}

/// The default of `icefloe.deferred_planning_min_files`: a table of 100,000 files held
/// about 0.4 GiB once planned (benches/README.md, "Planning at scale").
pub const DEFAULT_DEFERRED_PLANNING_MIN_FILES: usize = 100_000;

/// The value of an icefloe option that is one of a fixed set of words (the first is the
/// default): `SET icefloe.<name> = 'other'` is refused when it is run, naming the option
/// and the words it takes, rather than at the first statement that reads it. Words are
/// kept trimmed and lower-case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionChoice {
    name: &'static str,
    allowed: &'static [&'static str],
    value: String,
}

impl OptionChoice {
    /// Option `icefloe.<name>`, taking the words `allowed`, set to the first of them.
    pub fn new(name: &'static str, allowed: &'static [&'static str]) -> Self {
        Self {
            name,
            allowed,
            value: allowed.first().copied().unwrap_or_default().to_string(),
        }
    }

    /// The word the option is set to.
    pub fn as_str(&self) -> &str {
        &self.value
    }

    /// Set the option to `word` (trimmed, lower-cased).
    ///
    /// Errors: a word the option does not take ([`crate::ErrorKind::InvalidArgument`],
    /// naming the option and its words).
    pub fn set_word(&mut self, word: &str) -> Result<()> {
        let normalized = word.trim().to_ascii_lowercase();
        if !self.allowed.contains(&normalized.as_str()) {
            return Err(Error::invalid_argument(format!(
                "icefloe.{} cannot be '{word}' (expected {})",
                self.name,
                self.expected()
            )));
        }
        self.value = normalized;
        Ok(())
    }

    fn expected(&self) -> String {
        match self.allowed.split_last() {
            Some((last, [])) => (*last).to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

impl fmt::Display for OptionChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.value)
    }
}

impl ConfigField for OptionChoice {
    fn visit<V: Visit>(&self, v: &mut V, key: &str, description: &'static str) {
        v.some(key, self, description)
    }

    fn set(&mut self, _key: &str, value: &str) -> datafusion::common::Result<()> {
        self.set_word(value)
            .map_err(|e| DataFusionError::External(Box::new(e)))
    }

    fn reset(&mut self, _key: &str) -> datafusion::common::Result<()> {
        *self = Self::new(self.name, self.allowed);
        Ok(())
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

/// `config` with `icefloe.deferred_planning_min_files` = 0 (icefloe's options registered
/// with their defaults if they were not): sessions planning for distributed workers,
/// whose codecs send planned files only.
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub(crate) fn without_deferred_planning(mut config: SessionConfig) -> SessionConfig {
    if config
        .options()
        .extensions
        .get::<IcefloeOptions>()
        .is_none()
    {
        config = config.with_option_extension(IcefloeOptions::default());
    }
    if let Some(options) = config.options_mut().extensions.get_mut::<IcefloeOptions>() {
        options.deferred_planning_min_files = 0;
    }
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

#[cfg(test)]
mod tests {
    use datafusion::prelude::{SessionConfig, SessionContext};

    use super::*;
    use crate::ErrorKind;

    /// `SET` of a word an option does not take is refused at the `SET`, naming the
    /// option and its words (it was accepted and failed the next statement reading it);
    /// a word it takes is kept lower-case.
    #[tokio::test]
    async fn set_refuses_unknown_words() {
        let ctx = SessionContext::new_with_config(register_iceberg_options(SessionConfig::new()));
        for (option, expected) in [
            ("partition_overwrite_mode", "static or dynamic"),
            ("position_deletes", "auto, selection or filter"),
            ("equality_deletes", "auto, probe or resolve"),
        ] {
            let err = match ctx.sql(&format!("SET icefloe.{option} = 'foo'")).await {
                Ok(_) => panic!("{option}: SET succeeded"),
                Err(e) => Error::from(e),
            };
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
            assert_eq!(
                err.to_string(),
                format!("invalid argument: icefloe.{option} cannot be 'foo' (expected {expected})")
            );
        }
        ctx.sql("SET icefloe.partition_overwrite_mode = ' Dynamic '")
            .await
            .expect("SET");
        let state = ctx.state();
        let options = state
            .config_options()
            .extensions
            .get::<IcefloeOptions>()
            .expect("options");
        assert_eq!(options.partition_overwrite_mode.as_str(), "dynamic");
        assert_eq!(options.position_deletes.as_str(), "auto");
    }
}
