//! icefloe's session options: DataFusion's `ConfigExtension` under the prefix `icefloe`,
//! once registered ([`register_iceberg_options`]; the CLI does).
//!
//! | statement | does |
//! |---|---|
//! | `SET icefloe.<name> = value` | sets the option; a value it does not take is refused naming the option and what it takes |
//! | `SHOW icefloe.<name>`, `SHOW ALL`, `information_schema.df_settings` | the option's value (and description) under its full name |
//! | `RESET icefloe.<name>` (through [`sql::execute`](super::sql::execute), so the CLI) | the session's default back (see [`IcefloeOptions::keep_as_session_defaults`]) |
//!
//! The extension is written out rather than made with DataFusion's `extensions_options!`:
//! DataFusion 55 lists an extension's entries under the keys the extension gives
//! (`ConfigOptions::entries`), and the macro gives them without the prefix, so `SHOW`
//! and `df_settings` did not find `icefloe.<name>`; its parse errors named the Rust type
//! (`usize`), not the option. `ConfigOptions::reset` knows no extension, so `RESET` is
//! answered by `sql::execute` ([`IcefloeOptions::reset_option`]).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::common::DataFusionError;
use datafusion::prelude::SessionConfig;

use crate::error::{Error, Result};

/// icefloe's options (prefix `icefloe`); each field is one `icefloe.<field>` option.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IcefloeOptions {
    /// What `INSERT OVERWRITE` replaces: `static` (default; the whole table) or
    /// `dynamic` (only the partitions the new rows fall in, as Spark's
    /// `spark.sql.sources.partitionOverwriteMode=dynamic`).
    pub partition_overwrite_mode: OptionChoice,
    /// The deepest expression nesting `sql::execute` plans (a bound from the
    /// statement's tokens; deeper statements fail with "expression too deep"
    /// instead of overflowing the stack). The default suits 2 MiB thread stacks;
    /// raise it only where planning and execution run on larger ones (the CLI:
    /// 256 MiB and 5000).
    pub max_expression_depth: usize,
    /// How scans apply position deletes and deletion vectors: `auto` (default;
    /// fragmented ones per batch after decoding, the others as a Parquet row
    /// selection), `selection` (always a row selection) or `filter` (always per
    /// batch). Scans for `DELETE`/`UPDATE`/`MERGE` and of metadata columns always
    /// use row selections.
    pub position_deletes: OptionChoice,
    /// How query scans apply equality deletes: `auto` (default; each data file's
    /// deleted positions are resolved once, in a pass over its equality columns,
    /// and kept in the session's position delete cache, so later scans apply them
    /// as position deletes without reading those columns; under a `LIMIT`, files
    /// not resolved yet are probed per batch), `probe` (always a hashed probe of
    /// each row, nothing kept) or `resolve` (resolved under a `LIMIT` too). Scans
    /// for `DELETE`/`UPDATE`/`MERGE` always probe.
    pub equality_deletes: OptionChoice,
    /// Query scans of a snapshot with at least this many live data files (counted
    /// from the manifest list, in the manifests the filter keeps) and no delete
    /// files plan each manifest's files when the scan reaches that manifest, not
    /// all files before the query starts: memory no longer grows with the table's
    /// file count. Such a scan gives DataFusion no per-file statistics (the
    /// manifest list's row count only, inexact), treats every float column it reads
    /// as possibly holding NaN, and cannot be sent to distributed workers. 0 turns
    /// it off. Default 100000.
    pub deferred_planning_min_files: usize,
    /// The write-audit-publish id (Spark's `spark.wap.id`): while set (not empty), every
    /// write to `main` of a table whose `write.wap.enabled` is true (`INSERT INTO`,
    /// `INSERT OVERWRITE`, `DELETE`, `UPDATE`, `MERGE`, `TRUNCATE`) commits a staged
    /// snapshot (summary `wap.id`) that no branch points at; `CALL
    /// system.publish_changes(table, wap_id)` makes it current. Writes to another branch
    /// and table replacements are refused while it is set. Default: empty (none).
    pub wap_id: String,
    /// The values `RESET` restores; `None`: the built-in defaults.
    session_defaults: Option<Arc<IcefloeOptions>>,
}

impl Default for IcefloeOptions {
    fn default() -> Self {
        Self {
            partition_overwrite_mode: OptionChoice::new(
                "partition_overwrite_mode",
                &["static", "dynamic"],
            ),
            max_expression_depth: crate::datafusion::sql::DEFAULT_MAX_EXPRESSION_DEPTH,
            position_deletes: OptionChoice::new(
                "position_deletes",
                &["auto", "selection", "filter"],
            ),
            equality_deletes: OptionChoice::new("equality_deletes", &["auto", "probe", "resolve"]),
            deferred_planning_min_files: DEFAULT_DEFERRED_PLANNING_MIN_FILES,
            wap_id: String::new(),
            session_defaults: None,
        }
    }
}

/// One of icefloe's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OptionName {
    DeferredPlanningMinFiles,
    EqualityDeletes,
    MaxExpressionDepth,
    PartitionOverwriteMode,
    PositionDeletes,
    WapId,
}

impl OptionName {
    /// Every option, in the order `df_settings` lists them.
    const ALL: [Self; 6] = [
        Self::DeferredPlanningMinFiles,
        Self::EqualityDeletes,
        Self::MaxExpressionDepth,
        Self::PartitionOverwriteMode,
        Self::PositionDeletes,
        Self::WapId,
    ];

    /// The name after `icefloe.`.
    fn as_str(self) -> &'static str {
        match self {
            Self::DeferredPlanningMinFiles => "deferred_planning_min_files",
            Self::EqualityDeletes => "equality_deletes",
            Self::MaxExpressionDepth => "max_expression_depth",
            Self::PartitionOverwriteMode => "partition_overwrite_mode",
            Self::PositionDeletes => "position_deletes",
            Self::WapId => "wap_id",
        }
    }

    /// The description `SHOW ALL VERBOSE` and `information_schema.df_settings` give.
    fn description(self) -> &'static str {
        match self {
            Self::DeferredPlanningMinFiles => {
                "Query scans of a snapshot with at least this many live data files and no \
                 delete files plan each manifest's files as the scan reaches it (no per-file \
                 statistics); 0 turns it off. Default 100000."
            }
            Self::EqualityDeletes => {
                "How query scans apply equality deletes: auto (resolved once to deleted \
                 positions, probed under a LIMIT), probe (a hashed probe of each row) or \
                 resolve (resolved under a LIMIT too)."
            }
            Self::MaxExpressionDepth => {
                "The deepest expression nesting a statement may have; deeper statements fail \
                 with 'expression too deep' instead of overflowing the stack."
            }
            Self::PartitionOverwriteMode => {
                "What INSERT OVERWRITE replaces: static (the whole table) or dynamic (the \
                 partitions the new rows fall in)."
            }
            Self::PositionDeletes => {
                "How scans apply position deletes and deletion vectors: auto, selection (a \
                 Parquet row selection) or filter (per batch after decoding)."
            }
            Self::WapId => {
                "The write-audit-publish id (Spark's spark.wap.id): every write to a table \
                 with write.wap.enabled=true commits a staged snapshot, published by CALL \
                 system.publish_changes. Empty: none."
            }
        }
    }

    /// The option `key` names (`<name>` or `icefloe.<name>`).
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] for an unknown option, naming the
    /// known ones.
    fn parse(key: &str) -> Result<Self> {
        let prefix = format!("{}.", IcefloeOptions::PREFIX);
        let name = key.strip_prefix(&prefix).unwrap_or(key);
        Self::ALL
            .into_iter()
            .find(|o| o.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<String> = Self::ALL
                    .iter()
                    .map(|o| format!("{prefix}{}", o.as_str()))
                    .collect();
                Error::invalid_argument(format!(
                    "unknown option {prefix}{name} (icefloe's options: {})",
                    known.join(", ")
                ))
            })
    }
}

impl IcefloeOptions {
    /// Set option `key` (`<name>` or `icefloe.<name>`) to `value`, as `SET` does.
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] naming the option and what it takes
    /// (`icefloe.deferred_planning_min_files cannot be '-1' (expected a whole number, 0
    /// or more; 0 turns deferred planning off)`), or an unknown option naming the known
    /// ones.
    pub fn set_option(&mut self, key: &str, value: &str) -> Result<()> {
        let name = OptionName::parse(key)?;
        match name {
            OptionName::PartitionOverwriteMode => self.partition_overwrite_mode.set_word(value),
            OptionName::PositionDeletes => self.position_deletes.set_word(value),
            OptionName::EqualityDeletes => self.equality_deletes.set_word(value),
            OptionName::MaxExpressionDepth => {
                self.max_expression_depth = whole_number(name, value, "a whole number, 0 or more")?;
                Ok(())
            }
            OptionName::DeferredPlanningMinFiles => {
                self.deferred_planning_min_files = whole_number(
                    name,
                    value,
                    "a whole number, 0 or more; 0 turns deferred planning off",
                )?;
                Ok(())
            }
            OptionName::WapId => {
                self.wap_id = value.trim().to_string();
                Ok(())
            }
        }
    }

    /// Set option `key` (`<name>` or `icefloe.<name>`) back to the session's default:
    /// its value when [`keep_as_session_defaults`](Self::keep_as_session_defaults) was
    /// last called, else the built-in default (as `RESET` of a DataFusion option
    /// restores DataFusion's).
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] for an unknown option.
    pub fn reset_option(&mut self, key: &str) -> Result<()> {
        let defaults = self.session_defaults.clone().unwrap_or_default();
        match OptionName::parse(key)? {
            OptionName::PartitionOverwriteMode => {
                self.partition_overwrite_mode = defaults.partition_overwrite_mode.clone();
            }
            OptionName::PositionDeletes => {
                self.position_deletes = defaults.position_deletes.clone()
            }
            OptionName::EqualityDeletes => {
                self.equality_deletes = defaults.equality_deletes.clone()
            }
            OptionName::MaxExpressionDepth => {
                self.max_expression_depth = defaults.max_expression_depth;
            }
            OptionName::DeferredPlanningMinFiles => {
                self.deferred_planning_min_files = defaults.deferred_planning_min_files;
            }
            OptionName::WapId => self.wap_id = defaults.wap_id.clone(),
        }
        Ok(())
    }

    /// Make the current values the session's defaults, the ones `RESET` restores (a
    /// session set up with other values than the built-in ones, as the CLI's
    /// `max_expression_depth` of 5000, keeps them after a `RESET`).
    pub fn keep_as_session_defaults(&mut self) {
        let mut defaults = self.clone();
        defaults.session_defaults = None;
        self.session_defaults = Some(Arc::new(defaults));
    }

    /// The value of option `name` as `SHOW` prints it.
    fn value(&self, name: OptionName) -> String {
        match name {
            OptionName::PartitionOverwriteMode => self.partition_overwrite_mode.to_string(),
            OptionName::PositionDeletes => self.position_deletes.to_string(),
            OptionName::EqualityDeletes => self.equality_deletes.to_string(),
            OptionName::MaxExpressionDepth => self.max_expression_depth.to_string(),
            OptionName::DeferredPlanningMinFiles => self.deferred_planning_min_files.to_string(),
            OptionName::WapId => self.wap_id.clone(),
        }
    }
}

/// `value` as the whole-number option `name` takes.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the option and `takes`.
fn whole_number(name: OptionName, value: &str, takes: &str) -> Result<usize> {
    value.trim().parse().map_err(|_| {
        Error::invalid_argument(format!(
            "icefloe.{} cannot be '{value}' (expected {takes})",
            name.as_str()
        ))
    })
}

impl ExtensionOptions for IcefloeOptions {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    /// `key` is the option's name, with or without the prefix (DataFusion passes it
    /// without; a key read back from [`entries`](Self::entries) has it).
    fn set(&mut self, key: &str, value: &str) -> datafusion::common::Result<()> {
        self.set_option(key, value).map_err(DataFusionError::from)
    }

    /// Each option under its full name (`icefloe.<name>`): DataFusion 55's
    /// `ConfigOptions::entries` (`SHOW`, `SHOW ALL`, `df_settings`) lists these keys as
    /// they are.
    fn entries(&self) -> Vec<ConfigEntry> {
        OptionName::ALL
            .into_iter()
            .map(|o| ConfigEntry {
                key: format!("{}.{}", Self::PREFIX, o.as_str()),
                value: Some(self.value(o)),
                description: o.description(),
            })
            .collect()
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

impl ConfigExtension for IcefloeOptions {
    const PREFIX: &'static str = "icefloe";
}

/// Register [`IcefloeOptions`] in a session config, so `SET icefloe.… = …` works, and
/// turn on exact decimal literals (`datafusion.sql_parser.parse_float_as_decimal = true`:
/// `1.25` is a `decimal(3,2)`, as in Spark). A config without a session time zone gets
/// `datafusion.execution.time_zone = 'UTC'`, as Spark always has a session zone
/// (`spark.sql.session.timeZone`): DataFusion 55 gives `TIMESTAMPTZ '…'`,
/// `CAST(… AS TIMESTAMP WITH TIME ZONE)` and `now()` no zone without one, so a CTAS of
/// them made an Iceberg `timestamp` (without zone) column, not a `timestamptz` one. A session built from this config also needs
/// [`install_float_literal_rule`](super::install_float_literal_rule) (which
/// [`register_iceberg_factory`](super::register_iceberg_factory) and
/// [`sql::execute`](super::sql::execute) install) so `float`/`double` values stay
/// compared in double, and should run its SQL through `sql::execute`, which reads
/// exponent literals (`1e300`) as doubles; plain `ctx.sql` reads them as decimals and
/// refuses those beyond the decimal range.
pub fn register_iceberg_options(config: SessionConfig) -> SessionConfig {
    let mut config = config
        .with_option_extension(IcefloeOptions::default())
        .with_extension(std::sync::Arc::new(
            crate::datafusion::sql::PreparedParameterTypes::default(),
        ))
        .with_extension(std::sync::Arc::new(
            crate::datafusion::sql::PreparedStatements::default(),
        ));
    config.options_mut().sql_parser.parse_float_as_decimal = true;
    // a zoned SQL type (`TIMESTAMPTZ`, `CAST(… AS TIMESTAMP WITH TIME ZONE)`, `now()`) is
    // zone-less in DataFusion 55 without a session zone, so a CTAS made a `timestamp`
    // column of it: UTC, the zone DataFusion reads zone-less times in anyway
    let execution = &mut config.options_mut().execution;
    if execution.time_zone.is_none() {
        execution.time_zone = Some("UTC".to_string());
    }
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
        // and a `RESET` keeps it off
        let mut defaults = options
            .session_defaults
            .as_deref()
            .cloned()
            .unwrap_or_default();
        defaults.deferred_planning_min_files = 0;
        options.session_defaults = Some(Arc::new(defaults));
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

    /// A session as the CLI sets one up: icefloe's options (with a session default of
    /// its own for `max_expression_depth`) and `information_schema`.
    fn cli_like_session() -> SessionContext {
        let mut config =
            register_iceberg_options(SessionConfig::new().with_information_schema(true));
        if let Some(o) = config.options_mut().extensions.get_mut::<IcefloeOptions>() {
            o.max_expression_depth = 5000;
            o.keep_as_session_defaults();
        }
        SessionContext::new_with_config(config)
    }

    async fn strings(ctx: &SessionContext, sql: &str) -> Vec<Vec<String>> {
        use datafusion::arrow::util::display::array_value_to_string;
        let df = crate::datafusion::sql::execute(ctx, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        let mut out = vec![];
        for batch in df.collect().await.unwrap_or_else(|e| panic!("{sql}: {e}")) {
            for row in 0..batch.num_rows() {
                out.push(
                    batch
                        .columns()
                        .iter()
                        .map(|c| array_value_to_string(c, row).unwrap_or_default())
                        .collect(),
                );
            }
        }
        out
    }

    fn options_of(ctx: &SessionContext) -> IcefloeOptions {
        ctx.state()
            .config_options()
            .extensions
            .get::<IcefloeOptions>()
            .cloned()
            .expect("options")
    }

    /// A value a whole-number option does not take is refused naming the option and
    /// what it takes (it said "Error parsing '-1' as usize"); the values it takes are
    /// kept.
    #[tokio::test]
    async fn set_refuses_values_naming_the_option() {
        let ctx = cli_like_session();
        for (option, takes) in [
            (
                "deferred_planning_min_files",
                "a whole number, 0 or more; 0 turns deferred planning off",
            ),
            ("max_expression_depth", "a whole number, 0 or more"),
        ] {
            for (value, shown) in [
                ("-1", "-1"),
                ("'abc'", "abc"),
                ("99999999999999999999", "99999999999999999999"),
                ("1.5", "1.5"),
                ("''", ""),
            ] {
                let sql = format!("SET icefloe.{option} = {value}");
                let err = crate::datafusion::sql::execute(&ctx, &sql)
                    .await
                    .expect_err(&sql);
                assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{sql}: {err}");
                assert_eq!(
                    err.to_string(),
                    format!(
                        "invalid argument: icefloe.{option} cannot be '{shown}' (expected {takes})"
                    ),
                    "{sql}"
                );
            }
            for (value, kept) in [("+3", 3), ("'5'", 5), ("18446744073709551615", usize::MAX)] {
                strings(&ctx, &format!("SET icefloe.{option} = {value}")).await;
                let options = options_of(&ctx);
                let got = match option {
                    "max_expression_depth" => options.max_expression_depth,
                    _ => options.deferred_planning_min_files,
                };
                assert_eq!(got, kept, "{option} = {value}");
            }
        }
        let err = crate::datafusion::sql::execute(&ctx, "SET icefloe.no_such_option = 1")
            .await
            .expect_err("unknown option");
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
        assert!(
            err.to_string().contains(
                "unknown option icefloe.no_such_option (icefloe's options: \
                 icefloe.deferred_planning_min_files, icefloe.equality_deletes, \
                 icefloe.max_expression_depth, icefloe.partition_overwrite_mode, \
                 icefloe.position_deletes, icefloe.wap_id)"
            ),
            "{err}"
        );
    }

    /// Every option is listed under its full name, with its current value, in
    /// `information_schema.df_settings` and `SHOW ALL`, and `SHOW icefloe.<name>` shows
    /// it (DataFusion listed the extension's entries without the prefix: none was found).
    #[tokio::test]
    async fn show_and_df_settings_list_every_option() {
        let ctx = cli_like_session();
        for sql in [
            "SET icefloe.deferred_planning_min_files = 5",
            "SET icefloe.equality_deletes = 'probe'",
            "SET icefloe.partition_overwrite_mode = 'dynamic'",
            "SET icefloe.wap_id = 'audit-1'",
        ] {
            strings(&ctx, sql).await;
        }
        let want = vec![
            vec![
                "icefloe.deferred_planning_min_files".to_string(),
                "5".to_string(),
            ],
            vec!["icefloe.equality_deletes".to_string(), "probe".to_string()],
            vec![
                "icefloe.max_expression_depth".to_string(),
                "5000".to_string(),
            ],
            vec![
                "icefloe.partition_overwrite_mode".to_string(),
                "dynamic".to_string(),
            ],
            vec!["icefloe.position_deletes".to_string(), "auto".to_string()],
            vec!["icefloe.wap_id".to_string(), "audit-1".to_string()],
        ];
        let settings = strings(
            &ctx,
            "SELECT name, value FROM information_schema.df_settings \
             WHERE name LIKE 'icefloe.%' ORDER BY name",
        )
        .await;
        assert_eq!(settings, want);
        let all = strings(&ctx, "SHOW ALL").await;
        let listed: Vec<Vec<String>> = all
            .into_iter()
            .filter(|r| r[0].starts_with("icefloe."))
            .collect();
        assert_eq!(listed, want);
        for row in &want {
            let shown = strings(&ctx, &format!("SHOW {}", row[0])).await;
            assert_eq!(shown, vec![row.clone()], "SHOW {}", row[0]);
        }
        // with its description
        let verbose = strings(&ctx, "SHOW icefloe.position_deletes VERBOSE").await;
        assert_eq!(verbose[0][2], OptionName::PositionDeletes.description());
    }

    /// `RESET icefloe.<name>` (through `sql::execute`) sets each option back to the
    /// session's default: the CLI's own `max_expression_depth`, the built-in default of
    /// the others (DataFusion refused it: "Could not find config namespace").
    #[tokio::test]
    async fn reset_restores_the_session_default() {
        let ctx = cli_like_session();
        for sql in [
            "SET icefloe.deferred_planning_min_files = 5",
            "SET icefloe.equality_deletes = 'probe'",
            "SET icefloe.position_deletes = 'filter'",
            "SET icefloe.partition_overwrite_mode = 'dynamic'",
            "SET icefloe.max_expression_depth = 7",
        ] {
            strings(&ctx, sql).await;
        }
        let set = options_of(&ctx);
        assert_eq!(
            (set.deferred_planning_min_files, set.max_expression_depth),
            (5, 7)
        );
        for name in OptionName::ALL {
            let reset = strings(&ctx, &format!("RESET icefloe.{}", name.as_str())).await;
            assert!(reset.is_empty(), "{reset:?}");
        }
        let options = options_of(&ctx);
        let defaults = IcefloeOptions::default();
        for name in OptionName::ALL {
            let want = match name {
                OptionName::MaxExpressionDepth => "5000".to_string(),
                other => defaults.value(other),
            };
            assert_eq!(options.value(name), want, "{}", name.as_str());
        }
        // a name written in capitals, as DataFusion's own RESET takes it
        strings(&ctx, "SET icefloe.deferred_planning_min_files = 5").await;
        strings(&ctx, "RESET ICEFLOE.Deferred_Planning_Min_Files").await;
        assert_eq!(
            options_of(&ctx).deferred_planning_min_files,
            DEFAULT_DEFERRED_PLANNING_MIN_FILES
        );
        let err = crate::datafusion::sql::execute(&ctx, "RESET icefloe.no_such_option")
            .await
            .expect_err("unknown option");
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
        // DataFusion's own options still reset as DataFusion resets them
        strings(&ctx, "SET datafusion.execution.batch_size = 7").await;
        strings(&ctx, "RESET datafusion.execution.batch_size").await;
        let default_batch = SessionConfig::new()
            .options()
            .execution
            .batch_size
            .to_string();
        assert_eq!(
            ctx.state()
                .config_options()
                .execution
                .batch_size
                .to_string(),
            default_batch
        );
    }

    /// The keys `entries` gives are taken back by `set`, with or without the prefix (as
    /// datafusion-distributed sends an extension's entries to its workers: its own
    /// prefix, then each key).
    #[test]
    fn entries_round_trip_through_set() {
        let mut options = IcefloeOptions::default();
        options
            .set_option("deferred_planning_min_files", "7")
            .expect("set");
        options
            .set_option("icefloe.position_deletes", "FILTER")
            .expect("set");
        let entries = options.entries();
        let mut copy = IcefloeOptions::default();
        let mut bare = IcefloeOptions::default();
        for entry in &entries {
            let value = entry.value.clone().expect("value");
            ExtensionOptions::set(&mut copy, &entry.key, &value).expect("prefixed key");
            let name = entry.key.strip_prefix("icefloe.").expect("prefix");
            ExtensionOptions::set(&mut bare, name, &value).expect("bare key");
        }
        assert_eq!(copy.entries().len(), OptionName::ALL.len());
        for (a, b) in [(&copy, &options), (&bare, &options)] {
            let values = |o: &IcefloeOptions| {
                o.entries()
                    .into_iter()
                    .map(|e| (e.key, e.value))
                    .collect::<Vec<_>>()
            };
            assert_eq!(values(a), values(b));
        }
    }
}
