//! icefloe's SQL statements: the DDL DataFusion cannot run against an Iceberg catalog,
//! in the syntax Spark's Iceberg integration takes.
//!
//! [`execute`] runs one statement. When it is one of these and its name resolves to an
//! Iceberg catalog registered in the session (an [`IcebergCatalogProvider`]), icefloe
//! runs it against the [`Catalog`]:
//!
//! | statement | does |
//! |---|---|
//! | `CREATE SCHEMA\|DATABASE\|NAMESPACE [IF NOT EXISTS] [cat.]ns [COMMENT '…'] [LOCATION '…'] [WITH DBPROPERTIES ('k'='v', …)]` | `create_namespace` |
//! | `CREATE TABLE [IF NOT EXISTS] [[cat.]ns.]t (col type [NOT NULL] [DEFAULT value] [COMMENT '…'], …) [USING iceberg] [PARTITIONED BY (…)] [LOCATION '…'] [COMMENT '…'] [TBLPROPERTIES ('k'='v', …)] [AS query]` | `create_table` (see [below](#create-table)) |
//! | `CREATE OR REPLACE TABLE …`, `REPLACE TABLE …` (the clauses of `CREATE TABLE`) | [`ReplaceTable`](crate::transaction::ReplaceTable), with the `AS` query's rows appended in the same commit (module `replace_table`); `CREATE OR REPLACE` creates a table that does not exist, `REPLACE` refuses it |
//! | `DROP SCHEMA\|DATABASE\|NAMESPACE [IF EXISTS] [cat.]ns [RESTRICT\|CASCADE]` | `drop_namespace` (an empty namespace only; `CASCADE` on one holding tables is refused) |
//! | `DROP TABLE [IF EXISTS] [[cat.]ns.]t [PURGE]` | `drop_table` (with `PURGE`, the table's files are deleted too; a table whose `gc.enabled` is false is refused, as in Spark) |
//! | `ALTER TABLE [[cat.]ns.]t RENAME TO [[cat.]ns.]u` | `rename_table` (a one-part new name stays in the namespace) |
//! | `ALTER TABLE t SET TBLPROPERTIES ('k'='v', …)`, `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', …)` | [`UpdateProperties`](crate::transaction::UpdateProperties) (`'format-version'` upgrades the table) |
//! | `ALTER TABLE t SET LOCATION '…'` | [`UpdateLocation`](crate::transaction::UpdateLocation) (files written later go there; refused by the filesystem catalog) |
//! | `ALTER NAMESPACE\|SCHEMA\|DATABASE ns SET DBPROPERTIES ('k'='v', …) \| UNSET DBPROPERTIES [IF EXISTS] ('k', …) \| SET LOCATION '…'` | `Catalog::update_namespace_properties` (SQL and REST catalogs) |
//! | `COMMENT ON NAMESPACE\|SCHEMA\|DATABASE ns IS '…' \| NULL` | `Catalog::update_namespace_properties` of the `comment` property (`NULL` removes it; SQL and REST catalogs) |
//! | `COMMENT ON TABLE t IS '…' \| NULL` | [`UpdateProperties`](crate::transaction::UpdateProperties) of the `comment` property (`NULL` removes it) |
//! | `COMMENT ON COLUMN t.c IS '…' \| NULL` | [`UpdateSchema`](crate::transaction::UpdateSchema) `update_column_doc` of top-level column `c` (`NULL` removes the doc) |
//! | `ALTER TABLE t ADD COLUMN\|COLUMNS [(]path type [NOT NULL] [DEFAULT value] [COMMENT '…'] [FIRST\|AFTER c], …[)]` | [`UpdateSchema`](crate::transaction::UpdateSchema) `add_column` (`path`: `c` or `s.c` into a struct; optional unless it has a `DEFAULT`), `add_column_with_default` (v3: `initial-default` = `write-default` = the value) |
//! | `ALTER TABLE t DROP COLUMN\|COLUMNS [IF EXISTS] [(]path, …[)]` | `delete_column` |
//! | `ALTER TABLE t RENAME COLUMN path TO name` | `rename_column` |
//! | `ALTER TABLE t ALTER [COLUMN] path TYPE type` (also `SET DATA TYPE`) | `update_column` (the spec's promotions only) |
//! | `ALTER TABLE t ALTER [COLUMN] path DROP NOT NULL \| COMMENT '…' \| FIRST \| AFTER c` | `make_column_optional`, `update_column_doc`, `move_column`; `SET NOT NULL`: `require_column` (a no-op on a required column, refused on an optional one) |
//! | `ALTER TABLE t ALTER [COLUMN] path SET DEFAULT value \| DROP DEFAULT` | `update_column_default` (v3: the `write-default` only; the `initial-default` never changes) |
//! | `ALTER TABLE t SET IDENTIFIER FIELDS path, …`, `ALTER TABLE t DROP IDENTIFIER FIELDS path, …` | `set_identifier_fields`, `drop_identifier_fields` (required primitive fields, not `float`/`double`) |
//! | `ALTER TABLE t CREATE [OR REPLACE] TAG [IF NOT EXISTS] name [AS OF VERSION id] [RETAIN n DAYS\|HOURS\|MINUTES]`; `REPLACE TAG …` (the tag must exist) | [`ManageSnapshots`](crate::transaction::ManageSnapshots) `create_tag` (default: the current snapshot; a replaced ref keeps the retention not given anew) |
//! | `ALTER TABLE t CREATE [OR REPLACE] BRANCH [IF NOT EXISTS] name [AS OF VERSION id] [RETAIN n unit] [WITH SNAPSHOT RETENTION [n SNAPSHOTS] [n unit]]`; `REPLACE BRANCH …` (the branch must exist) | `create_branch` |
//! | `ALTER TABLE t DROP TAG\|BRANCH [IF EXISTS] name` | `remove_tag`, `remove_branch` (never `main`) |
//! | `CALL [cat.]system.rollback_to_snapshot(table, snapshot_id)` | `rollback_to` (an ancestor of the current snapshot) |
//! | `CALL [cat.]system.set_current_snapshot(table, snapshot_id \| ref => 'name')` | `set_current_snapshot` (any snapshot) |
//! | `CALL [cat.]system.rollback_to_timestamp(table, TIMESTAMP '…' \| seconds since the epoch)` | `rollback_to_time` (the latest ancestor older than the time) |
//! | `CALL [cat.]system.fast_forward(table, branch, to)` | `fast_forward_branch` (`branch`'s snapshot must be an ancestor of `to`'s; a missing branch is created) |
//! | `CALL [cat.]system.expire_snapshots(table, older_than, retain_last, max_concurrent_deletes, stream_results, snapshot_ids, dry_run)` | [`maintenance::expire_snapshots`](crate::maintenance::expire_snapshots) |
//! | `CALL [cat.]system.remove_orphan_files(table, older_than, location, dry_run, max_concurrent_deletes)` | [`maintenance::remove_orphan_files`](crate::maintenance::remove_orphan_files) |
//! | `CALL [cat.]system.rewrite_data_files(table, strategy, sort_order, options, where)` | [`rewrite_data_files`](crate::datafusion::maintenance::rewrite_data_files) (`binpack`, `sort`) |
//! | `CALL [cat.]system.rewrite_manifests(table)` | [`maintenance::rewrite_manifests`](crate::maintenance::rewrite_manifests) |
//! | `CALL [cat.]system.rewrite_table_path(table, source_prefix, target_prefix, start_version, end_version, staging_location, create_file_list)` | [`maintenance::rewrite_table_path`](crate::maintenance::rewrite_table_path): metadata copies with a prefix moved, and the list of files to copy (nothing committed) |
//! | `CALL [cat.]system.create_changelog_view(table, changelog_view, options, compute_updates, identifier_columns, net_changes)` | a session view of the table's changes (modules `changelog_view` and `datafusion::changelog`) |
//! | `SHOW CREATE TABLE t` | one row, `createtab_stmt`: the `CREATE TABLE` (and the `ALTER TABLE` for a sort order and identifier fields) that makes an equal table in another catalog (module `show_create_table`) |
//! | `SHOW TABLES [FROM\|IN [cat.]ns] [[LIKE] 'pattern']` | the tables and session views of the current namespace (after `USE ns`) or of `ns`, read from the catalog anew; with no current namespace (the CLI's `public`) every table, as DataFusion lists them (module `show_tables`) |
//! | `SHOW NAMESPACES\|SCHEMAS\|DATABASES [FROM\|IN [cat.]ns] [[LIKE] 'pattern']` | one column `namespace`: the current catalog's top-level namespaces, or `ns`'s children, read from the catalog anew, filtered by Spark's pattern (module `show_namespaces`) |
//! | `SHOW TBLPROPERTIES t [('key')]` | the table's properties as Spark shows an Iceberg table's, rows `key`, `value` (module `show_properties`; any table DataFusion resolves to an Iceberg table) |
//!
//! `USE [NAMESPACE|SCHEMA|DATABASE] [cat.]ns` makes `ns` the schema unqualified names
//! resolve in (module `use_namespace`; DataFusion 55 has no `USE`).
//!
//! `SET spark.<key> = value` sets icefloe's equivalent of the Spark session keys it has
//! one for, and refuses any other `spark.*` key naming it (module `spark_settings`).
//!
//! `RESET icefloe.<name>` sets one of icefloe's options back to the session's default
//! (module `reset`; DataFusion 55 resets its own options only).
//!
//! Every other statement, and these when they target a catalog or schema that is not
//! Iceberg (e.g. the CLI's in-memory `public`), goes to DataFusion (`ctx.sql`), as does
//! a statement whose table name icefloe cannot read (DataFusion reports it). Number
//! literals written with an exponent (`1e300`, `2.5E-3`) are doubles in every statement,
//! as in Spark, also where exact decimal literals are on
//! (`datafusion.sql_parser.parse_float_as_decimal`), and Spark's suffixed literals (`1.5D`,
//! `1.5F`, `4S`, `3Y`, `2.5BD`) have Spark's types: see module `literals`. `TABLESAMPLE`,
//! which DataFusion 55 drops, is refused in every statement (module `table_sample`).
//! `CREATE [OR REPLACE] TEMP|TEMPORARY VIEW` makes a session view, as `CREATE VIEW` does
//! (module `create_view`).
//!
//! Names: `cat.ns.t` when `cat` is a catalog registered in the session, else `ns.t` in
//! the session's default catalog, or `t` in its default catalog and schema; a namespace
//! of several levels is the quoted schema name (`"a.b".t`), and Spark's `a.b.t` /
//! `cat.a.b.t` are read as that (module `namespace_names`). Unquoted names are
//! lowercased as DataFusion does (`datafusion.sql_parser.enable_ident_normalization`).
//! After each statement the catalog provider's schema and table lists are updated, so
//! `SHOW TABLES` and `information_schema` see the change at once.
//!
//! `UPDATE` and `MERGE` resolve names as Spark does before DataFusion plans them (module
//! `dml_rewrite`): `SET` targets by qualifier, column and struct field (`SET st.a = 5`
//! sets field `a` of struct column `st`), and each `MERGE` clause's names against the
//! side it may read; Spark's `MERGE … UPDATE SET *` / `INSERT *` and `DEFAULT` values are
//! read too. A `WITH` before `MERGE`, `UPDATE` or `DELETE` has its CTEs moved to where the
//! statement reads them (module `dml_with`).
//!
//! # ALTER TABLE and CALL
//!
//! Each `ALTER TABLE` clause above and each procedure is one
//! [`Transaction`](crate::transaction::Transaction) commit through
//! [`Catalog::commit_table`], with the requirements its updates need (e.g.
//! `assert-current-schema-id` and `assert-last-assigned-field-id` for a schema change,
//! `assert-ref-snapshot-id` for a ref); on a conflict the change is re-applied to the
//! refreshed table and retried. A statement that fails commits nothing. The rules are
//! the actions' ([`UpdateProperties`](crate::transaction::UpdateProperties),
//! [`UpdateSchema`](crate::transaction::UpdateSchema),
//! [`ManageSnapshots`](crate::transaction::ManageSnapshots)); a type in `ADD COLUMN` or
//! `TYPE` is planned as in `CREATE TABLE` (the table below). Reads see the change at
//! once (table providers load the table per query); `SELECT *` after `ADD COLUMN`
//! shows the column, null in rows written before it (its `initial-default` with a
//! `DEFAULT`).
//!
//! `CALL` takes Spark's arguments, positional or named (`table => 'ns.t', snapshot_id
//! => 5`); the table string is resolved in the procedure's catalog (`cat.system.…`, or
//! the session's default catalog). The result is Spark's one row:
//! `previous_snapshot_id`, `current_snapshot_id` (`fast_forward`: `branch_updated`,
//! `previous_ref`, `updated_ref`; the maintenance procedures: Spark's columns, see
//! module `procedures`). A `TIMESTAMP '…'` without a zone is
//! UTC. An `ALTER TABLE` clause or procedure icefloe does not run (e.g.
//! `migrate`) on an Iceberg table is an
//! [`ErrorKind::Unsupported`](crate::ErrorKind) error naming it.
//!
//! # Time travel and branches in Spark's syntax
//!
//! `t VERSION AS OF …`, `t TIMESTAMP AS OF …` (and `FOR SYSTEM_VERSION`/`SYSTEM_TIME`) and
//! Iceberg's Spark identifiers `[cat.]ns.t.branch_<name>`, `tag_<name>`,
//! `snapshot_id_<id>`, `at_timestamp_<ms>` are rewritten to icefloe's `"t@<version>"`
//! names in every statement but `SET`, `SHOW`, `RESET` and `CALL` ([`time_travel`]; an
//! identifier only when `[cat.]ns.t` is an Iceberg table: the last part cannot otherwise
//! be told from a four-part name). The table of a branch (`"t@dev"`) appends to the
//! branch (see `IcebergTableProvider::insert_into`).
//!
//! # CREATE TABLE
//!
//! The Spark-only clauses are cut out and DataFusion plans the rest as its own
//! `CREATE TABLE`, which gives the columns' Arrow types and nullability (for CTAS, the
//! query's). Columns get field ids 1..n in order, nested fields after them as Iceberg
//! Java assigns them; `NOT NULL` makes a field required (CTAS columns are all optional,
//! as in Spark); a column `COMMENT` becomes the field's doc and a table `COMMENT` the
//! `comment` property. A column `DEFAULT value` (v3 tables only) becomes the field's
//! `initial-default` and `write-default`, as `ADD COLUMN … DEFAULT` sets them. Types (SQL → DataFusion → Iceberg):
//!
//! | SQL | Iceberg |
//! |---|---|
//! | `BOOLEAN` | `boolean` |
//! | `TINYINT`, `SMALLINT`, `INT` | `int` |
//! | `BIGINT`, `LONG` | `long` |
//! | `FLOAT`, `REAL` | `float` |
//! | `DOUBLE` | `double` |
//! | `DECIMAL(p, s)` | `decimal(p, s)` |
//! | `DATE` | `date` |
//! | `TIME` | `time` |
//! | `TIMESTAMP`, `TIMESTAMP_NTZ` (no time zone, a precision other than 9) | `timestamp` (µs) |
//! | `TIMESTAMPTZ`, `TIMESTAMP WITH TIME ZONE`, `TIMESTAMP_LTZ` | `timestamptz` (µs) |
//! | `TIMESTAMP(9)`, `TIMESTAMP(9) WITH TIME ZONE` (v3 tables) | `timestamp_ns`, `timestamptz_ns` |
//! | `STRING`, `VARCHAR`, `TEXT`, `CHAR` | `string` |
//! | `BINARY`, `VARBINARY`, `BYTEA` | `binary` |
//! | `UUID` | `uuid` |
//! | `INT[]`, `ARRAY<…>`, `STRUCT<…>` | `list`, `struct` |
//! | a CTAS column of `NULL`s (v3 tables; also a struct field) | `unknown` (not stored in data files) |
//!
//! Timestamp types are read from the column list at any depth (DataFusion plans
//! `TIMESTAMP(9)` as it plans `TIMESTAMP`, and a zone only when the session has one); a
//! CTAS column's type is its query's (Arrow nanoseconds become `timestamp`).
//!
//! `PARTITIONED BY` takes a column (identity) or a transform: `bucket(N, col)`,
//! `truncate(W, col)`, `years|year(col)`, `months|month(col)`, `days|day|date(col)`,
//! `hours|hour(col)`, `identity(col)`, `void(col)`. Partition field ids start at 1000;
//! fields are named as Iceberg Java names them (`col`, `col_bucket`, `col_trunc`,
//! `col_year`, `col_month`, `col_day`, `col_hour`, `col_null`). `USING` must be
//! `iceberg`; `TBLPROPERTIES` become table properties (`format-version` picks 1, 2 or 3).
//! An unknown column, a transform that does not apply to its column's type or a bad
//! property is an error naming it, raised before anything is created.
//!
//! CTAS (`AS query`) is a staged create (module `staged_create`): the query's rows are
//! written against the table staged by its catalog, and one commit creates the table
//! with them; a failure leaves no table and removes what was written. On a catalog that
//! cannot stage (a REST server refusing `stage-create`) it creates the table, then runs
//! `INSERT INTO <table> <query>`, dropping the table again when the insert fails.
//!
//! Errors are the crate's [`Error`], naming the statement and the table:
//! [`ErrorKind::AlreadyExists`](crate::ErrorKind) (table, namespace, column, branch or
//! tag exists), [`ErrorKind::NotFound`](crate::ErrorKind) (namespace, table, column,
//! branch, tag, snapshot or property missing),
//! [`ErrorKind::InvalidArgument`](crate::ErrorKind) (bad syntax, column, transform or
//! property; a schema or ref change that breaks a rule, naming the rule). A statement DataFusion runs fails with
//! [`ErrorKind::DataFusion`](crate::ErrorKind) wrapping DataFusion's error (which
//! converts back into exactly that `DataFusionError`).

mod alter_columns;
mod alter_partition;
mod alter_table;
mod assignments;
mod call;
mod call_args;
mod cast_names;
mod changelog_view;
mod column_default;
mod column_types;
mod committed_result;
mod constant;
mod create_schema;
mod create_table;
mod create_view;
mod ctas_literal_types;
mod declared_parameters;
mod prepare;
mod prepare_rebind;
mod property_lists;
use create_table::CreateMode;
mod alter_namespace;
mod delete_alias;
mod describe_namespace;
mod describe_table;
mod execute_parameters;
mod insert_forms;
mod insert_names;
mod insert_partition;
mod listed_names;
pub use execute_parameters::PreparedParameterTypes;
pub(crate) use prepare_rebind::PreparedStatements;
mod depth;
mod dialect_text;
mod distinct_from;
mod dml_defaults;
mod dml_functions;
mod dml_rewrite;
mod dml_with;
mod drop_schema;
mod drop_table;
mod literals;
mod merge_scopes;
mod merge_star;
mod metadata_columns;
mod metadata_names;
mod metadata_targets;
mod namespace_names;
mod nested_values;
mod not_a_table;
mod procedure_where;
pub(crate) use show_properties::column_name;
mod partition_stats;
mod procedures;
mod rename_table;
mod replace_table;
mod reset;
mod resolve;
mod rewrite_sort_order;
mod rewrite_table_path;
pub(crate) mod session_zone;
mod set_time_zone;
mod show;
mod show_create_table;
mod show_namespaces;
mod show_patterns;
mod show_properties;
mod show_tables;
mod spark_settings;
mod spark_timestamp_types;
mod staged_create;
mod staged_write;
mod struct_field_options;
mod subquery_values;
mod table_sample;
mod table_stats;
mod time_travel;
mod tokens;
mod update_values;
mod use_namespace;
mod uuid_values;
mod values_metadata;
mod values_struct_fields;
mod write_target;

#[cfg(test)]
mod alter_tests;
#[cfg(test)]
mod column_case_tests;
#[cfg(test)]
mod default_tests;
#[cfg(test)]
mod describe_tests;
#[cfg(test)]
mod literal_tests;
#[cfg(test)]
mod namespace_tests;
#[cfg(test)]
mod property_tests;
#[cfg(test)]
mod show_tests;
#[cfg(test)]
mod sort_order_tests;
#[cfg(test)]
mod spark_form_tests;
#[cfg(test)]
mod spark_refusal_tests;
#[cfg(test)]
mod struct_value_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod time_travel_tests;

use datafusion::dataframe::DataFrame;
use datafusion::logical_expr::LogicalPlanBuilder;
use datafusion::prelude::SessionContext;

use crate::error::{Error, Result};
use create_schema::create_schema;
use dialect_text::{
    check_expression_depth, cursor, parse_statement, quote_of, session_dialect, tokenize,
};
use drop_table::drop_table;
use rename_table::alter_table;
use resolve::{
    defaults, iceberg_table_exists, resolve_namespace, resolve_table, IcebergTarget, ResolvedTable,
};
use tokens::Cursor;

/// Run one SQL statement in `ctx`: icefloe's DDL (see the [module docs](self)) against
/// an Iceberg catalog registered in `ctx`, anything else through `ctx.sql`.
///
/// Returns the statement's result as a [`DataFrame`]: for icefloe's DDL an empty one
/// (no columns, no rows; the work is done when this returns), for other statements what
/// `ctx.sql` returns (not yet run).
///
/// An uncorrelated `IN (SELECT …)` or `EXISTS (…)` in a `DELETE`/`UPDATE` is run once
/// here and replaced by its values (`crate::datafusion::dml`'s module `subquery`), as
/// DataFusion 55 would plan it as a join the table is never handed; a `DELETE`/`UPDATE`
/// of an Iceberg table with a correlated subquery is planned as a query over the
/// table's row-level scan (module `correlated` there).
///
/// Errors: the crate's [`Error`] naming the statement and table (see the module docs);
/// DataFusion's errors wrapped in [`ErrorKind::DataFusion`].
pub async fn execute(ctx: &SessionContext, statement: &str) -> Result<DataFrame> {
    // namespaces another process created since the session last listed them (module
    // `listed_names`)
    listed_names::recheck_namespaces(ctx, statement).await;
    if tokens::first_word_is(statement, &["EXECUTE"]) {
        // prepared again first when its tables' columns changed since PREPARE (here,
        // not deeper in `execute_statement`: it runs a whole `PREPARE` itself)
        Box::pin(prepare_rebind::rebind(ctx, statement)).await?;
    }
    // a VALUES of several rows with a subquery value over an Iceberg column, which
    // DataFusion refuses (module `values_metadata`): run again without the metadata once
    // refused; a MERGE's source is planned where the refusal is reported as another
    // error, so a MERGE (prepared too) is written without it first
    let without_metadata = || {
        let lower = statement.to_ascii_lowercase();
        if !(lower.contains("values") && lower.contains("select")) {
            return None;
        }
        tokenize(ctx, statement).and_then(|toks| values_metadata::rewritten_text(statement, &toks))
    };
    // boxed: a statement's future is large (every rewrite's state), and a caller's
    // future that holds it inline (a test's, pinned on its thread's stack) overflowed
    let merge = tokens::first_word_is(statement, &["MERGE"])
        || (tokens::first_word_is(statement, &["PREPARE"])
            && statement.to_ascii_lowercase().contains("merge"));
    let df = if merge {
        let text = without_metadata();
        Box::pin(execute_statement(ctx, text.as_deref().unwrap_or(statement))).await
    } else {
        match Box::pin(execute_statement(ctx, statement)).await {
            Err(e) if values_metadata::is_inconsistent_metadata(&e) => match without_metadata() {
                Some(text) => Box::pin(execute_statement(ctx, &text)).await,
                None => Err(e),
            },
            other => other,
        }
    };
    // a cast beside what it casts, which DataFusion names alike (module `cast_names`):
    // run again with the casts named as Spark prints them; still refused, the first
    // refusal is reported (it quotes the statement as written)
    let df = match df {
        Err(e) if insert_names::is_duplicate_names(&e) => match cast_names::named(ctx, statement) {
            Some(text) => match Box::pin(execute_statement(ctx, &text)).await {
                Err(again) if insert_names::is_duplicate_names(&again) => return Err(e),
                other => other?,
            },
            None => return Err(e),
        },
        other => other?,
    };
    let df = crate::datafusion::dml::plan_row_level_subqueries(df).await?;
    subquery_values::check(ctx, df.logical_plan())?;
    Ok(df)
}

/// [`execute`] but for the subqueries of a `DELETE`/`UPDATE`.
async fn execute_statement(ctx: &SessionContext, statement: &str) -> Result<DataFrame> {
    crate::datafusion::dml::install_dml_guard(ctx);
    crate::datafusion::install_values_rule(ctx);
    crate::datafusion::install_float_literal_rule(ctx);
    crate::datafusion::install_uuid_literal_rule(ctx);
    crate::datafusion::install_time_literal_rule(ctx);
    crate::datafusion::install_session_zone_rule(ctx);
    crate::datafusion::install_timestamp_literal_rule(ctx);
    crate::datafusion::install_map_key_rule(ctx);
    crate::datafusion::register_min_max(ctx);
    crate::datafusion::install_float_key_rule(ctx);
    let original = statement;
    let toks = tokenize(ctx, statement);
    if let Some(toks) = &toks {
        check_expression_depth(ctx, toks)?;
        merge_star::refuse_schema_evolution(toks)?;
    }
    let rewritten = match &toks {
        Some(toks) => literals::spark_number_literals(statement, toks)?,
        // DataFusion reports what cannot be tokenized
        None => std::borrow::Cow::Borrowed(statement),
    };
    let statement: &str = &rewritten;
    // Spark's `TIMESTAMP_NTZ '…'`, `CAST(x AS TIMESTAMP_LTZ)` in DataFusion's type names
    let renamed = match spark_timestamp_types::candidate(statement) {
        true => match tokenize(ctx, statement) {
            Some(toks_now) => spark_timestamp_types::datafusion_names(statement, &toks_now),
            None => std::borrow::Cow::Borrowed(statement),
        },
        false => std::borrow::Cow::Borrowed(statement),
    };
    let statement: &str = &renamed;
    // `a IS DISTINCT FROM b AND c` as `(a IS DISTINCT FROM b) AND c`, as Spark reads it
    let regrouped = distinct_from::parenthesized(ctx, statement)?;
    let statement: &str = &regrouped;
    // `WITH … MERGE|UPDATE|DELETE`: the CTEs moved to where they are read, then run
    if let Some(inlined) = dml_with::inline_ctes(ctx, statement)? {
        return Box::pin(execute(ctx, &inlined)).await;
    }
    // parsed once for the checks and rewrites of INSERT, UPDATE and MERGE below; one that
    // does not parse here goes to DataFusion, which reports it
    // (an INSERT only when it holds a string literal: nothing else here concerns it)
    let parse = tokens::first_word_is(statement, &["UPDATE", "MERGE"])
        || (tokens::first_word_is(statement, &["INSERT"]) && statement.contains('\''));
    let parsed = match parse {
        true => parse_statement(ctx, statement),
        false => None,
    };
    let with_uuids;
    let statement = match &parsed {
        Some(parsed) => match uuid_values::uuid_text_values(ctx, statement, parsed).await? {
            Some(text) => {
                with_uuids = text;
                &with_uuids
            }
            None => statement,
        },
        None => statement,
    };
    // Spark's `ns.t.snapshots` as `ns."t$snapshots"` (before time travel, which may
    // read it at a version)
    let with_metadata_names;
    let statement = match metadata_names::candidate(statement) {
        true => match tokenize(ctx, statement) {
            Some(toks_now) => {
                let quote = quote_of(session_dialect(ctx).as_ref());
                match Box::pin(metadata_names::rewrite(ctx, statement, &toks_now, quote)).await? {
                    Some(text) => {
                        with_metadata_names = text;
                        &with_metadata_names
                    }
                    None => statement,
                }
            }
            None => statement,
        },
        false => statement,
    };
    let with_versions;
    let statement = match time_travel_candidate(statement) {
        true => {
            // the tokens of the statement as given serve while no rewrite changed it
            let retokenized;
            let toks_now = if statement == original {
                toks.as_deref()
            } else {
                retokenized = tokenize(ctx, statement);
                retokenized.as_deref()
            };
            match toks_now {
                Some(toks_now) => {
                    let quote = quote_of(session_dialect(ctx).as_ref());
                    match Box::pin(time_travel::spark_time_travel(
                        ctx, statement, toks_now, quote,
                    ))
                    .await?
                    {
                        Some(text) => {
                            with_versions = text;
                            &with_versions
                        }
                        None => statement,
                    }
                }
                None => statement,
            }
        }
        false => statement,
    };
    // Spark's `a.b.t` / `cat.a.b.t` of a namespace of several levels as `"a.b".t` (after
    // the two rewrites above, whose names it completes)
    let with_namespaces;
    let statement = match namespace_names::candidate(statement) {
        true => match tokenize(ctx, statement) {
            Some(toks_now) => {
                let quote = quote_of(session_dialect(ctx).as_ref());
                match namespace_names::rewrite(ctx, statement, &toks_now, quote) {
                    Some(text) => {
                        with_namespaces = text;
                        &with_namespaces
                    }
                    None => statement,
                }
            }
            None => statement,
        },
        false => statement,
    };
    // `TABLESAMPLE`, which DataFusion would drop (module `table_sample`)
    if statement.to_ascii_lowercase().contains("sample") {
        if let Some(toks_now) = tokenize(ctx, statement) {
            table_sample::refuse(ctx, statement, &toks_now)?;
        }
    }
    // a write to a tag or snapshot is refused before its older schema is planned
    write_target::check(ctx, statement).await?;
    // Spark's `INSERT … PARTITION (p = v)` clause, which DataFusion refuses
    if tokens::first_word_is(statement, &["INSERT"]) {
        if let Some(cursor) = cursor(ctx, statement) {
            insert_forms::check(cursor)?;
        }
        // boxed, as each rewrite here: their states would all sit in this future (and
        // on the caller's stack)
        if let Some(df) = Box::pin(insert_partition::plan(ctx, statement)).await? {
            return Ok(df);
        }
    }
    // a DELETE/UPDATE/MERGE reading its target's metadata columns is planned in a copy
    // of the session where the target has them (module `metadata_targets`)
    let with_metadata_target;
    let ctx = match tokens::first_word_is(statement, &["DELETE", "UPDATE", "MERGE", "EXPLAIN"]) {
        true => match Box::pin(metadata_targets::session(ctx, statement)).await? {
            Some(with_target) => {
                with_metadata_target = with_target;
                &with_metadata_target
            }
            None => ctx,
        },
        false => ctx,
    };
    // assignment targets and MERGE clause scopes resolved as Spark does (a DELETE is only
    // checked there)
    match dml_rewrite::plan(ctx, statement).await {
        Ok(Some(plan)) => return Ok(ctx.execute_logical_plan(plan).await?),
        Ok(None) => {}
        Err(e) => return Err(naming_metadata_columns(ctx, statement, e).await),
    }
    if tokens::first_word_is(statement, &["DELETE"]) {
        match delete_alias::plan(ctx, statement).await {
            Ok(Some(plan)) => return Ok(ctx.execute_logical_plan(plan).await?),
            Ok(None) => {}
            Err(e) => return Err(naming_metadata_columns(ctx, statement, e).await),
        }
    }
    if tokens::first_word_is(statement, &["SET"]) {
        if let Some(cursor) = cursor(ctx, statement) {
            if let Some(df) = spark_settings::set_spark_key(ctx, cursor.clone()).await? {
                return Ok(df);
            }
            if let Some(df) = set_time_zone::set_time_zone(ctx, cursor).await? {
                return Ok(df);
            }
        }
    }
    if tokens::first_word_is(statement, &["RESET"]) {
        if let Some(df) = reset::reset(ctx, statement).await? {
            return Ok(df);
        }
    }
    if tokens::first_word_is(statement, &["SHOW"]) {
        if let Some(cursor) = cursor(ctx, statement) {
            if let Some(df) = show::show(ctx, cursor).await? {
                return Ok(df);
            }
        }
    }
    if tokens::first_word_is(statement, &["DESCRIBE", "DESC"]) {
        if let Some(cursor) = cursor(ctx, statement) {
            if let Some(df) = describe_table::describe(ctx, cursor).await? {
                return Ok(df);
            }
        }
    }
    if tokens::first_word_is(statement, &["USE"]) {
        if let Some(cursor) = cursor(ctx, statement) {
            if let Some(df) = use_namespace::use_namespace(ctx, cursor).await? {
                return Ok(df);
            }
        }
    }
    if tokens::first_word_is(statement, &["PREPARE"]) {
        // Spark's `INSERT … PARTITION (…)`: not in a prepared statement (named, not
        // DataFusion's "Partitioned inserts not yet supported")
        insert_partition::check_prepared(ctx, statement).await?;
        let df = match prepare::prepare(ctx, statement).await? {
            Some(prepared) => {
                prepare_rebind::remember(ctx, &prepared.name, original, prepared.tables);
                prepared.df
            }
            None => run_in_datafusion(ctx, statement).await?,
        };
        execute_parameters::remember(ctx, statement).await;
        return Ok(df);
    }
    if tokens::first_word_is(statement, &["EXECUTE"]) {
        execute_parameters::check(ctx, statement).await?;
    }
    if tokens::first_word_is(statement, &["DEALLOCATE"]) {
        let df = run_in_datafusion(ctx, statement).await?;
        if let Some(name) = prepare::deallocated(ctx, statement).await {
            prepare_rebind::forget(ctx, &name);
            execute_parameters::forget(ctx, &name);
        }
        return Ok(df);
    }
    // Spark's `CREATE TEMPORARY VIEW`: a session view, as every view (module `create_view`)
    let session_view;
    let statement = match tokens::first_word_is(statement, &["CREATE"]) {
        true => match cursor(ctx, statement).map(create_view::without_temporary) {
            Some(Ok(Some(text))) => {
                session_view = text;
                &session_view
            }
            Some(Err(e)) => return Err(e),
            Some(Ok(None)) | None => statement,
        },
        false => statement,
    };
    if !tokens::first_word_is(
        statement,
        &["CREATE", "DROP", "ALTER", "CALL", "REPLACE", "COMMENT"],
    ) {
        return run_in_datafusion(ctx, statement).await;
    }
    if let Some(cursor) = cursor(ctx, statement) {
        if let Some(df) = execute_ddl(ctx, cursor).await? {
            return Ok(df);
        }
    }
    if tokens::first_word_is(statement, &["CREATE"]) {
        if let Some(df) = create_view::create_view(ctx, statement).await? {
            return Ok(df);
        }
    }
    run_in_datafusion(ctx, statement).await
}

/// `statement` planned by DataFusion: with the metadata columns it names (module
/// `metadata_columns`), else through `ctx.sql`.
///
/// Errors: DataFusion's, wrapped; for `VALUES` whose structs lack or add fields, and
/// metadata columns where they are not supported, icefloe's naming them; an
/// `IN (subquery)` or `EXISTS` used as a value (module `subquery_values`).
async fn run_in_datafusion(ctx: &SessionContext, statement: &str) -> Result<DataFrame> {
    // a cast beside what it casts (module `cast_names`; also the query of a CTAS, which
    // is inserted from here)
    let plan = |text: String| async move { Box::pin(plan_in_datafusion(ctx, &text)).await };
    let df = cast_names::planned(ctx, statement, plan).await?;
    subquery_values::check(ctx, df.logical_plan())?;
    Ok(df)
}

async fn plan_in_datafusion(ctx: &SessionContext, statement: &str) -> Result<DataFrame> {
    if tokens::first_word_is(statement, &["EXECUTE"]) {
        if let Some(plan) = execute_parameters::coerced(ctx, statement).await? {
            return Ok(ctx.execute_logical_plan(plan).await?);
        }
    }
    if let Some(plan) = metadata_columns::plan(ctx, statement).await? {
        return Ok(ctx.execute_logical_plan(plan).await?);
    }
    // a VALUES inside an INSERT's query, typed by its own rows (DataFusion types it by
    // the table's columns)
    if let Some(plan) = nested_values::plan(ctx, statement).await? {
        return Ok(ctx.execute_logical_plan(plan).await?);
    }
    match ctx.sql(statement).await {
        Ok(df) => Ok(df),
        Err(e) => {
            // DataFusion refuses VALUES whose structs lack or add fields while it plans
            if tokens::first_word_is(statement, &["INSERT"]) {
                // an INSERT's query whose columns share a name (`SELECT 1, 1`)
                if insert_names::is_duplicate_names(&e) {
                    if let Some(named) = insert_names::aliased(ctx, statement) {
                        return Ok(ctx.sql(&named).await?);
                    }
                }
                if let Some(error) =
                    values_struct_fields::values_struct_fields_error(ctx, statement).await
                {
                    return Err(error);
                }
            }
            Err(naming_metadata_columns(ctx, statement, Error::from(e)).await)
        }
    }
}

/// `e`, or, when it is DataFusion's "No field named" for a metadata column `statement`
/// reads where it is not supported yet, the error naming that (module
/// `metadata_columns`).
async fn naming_metadata_columns(ctx: &SessionContext, statement: &str, e: Error) -> Error {
    metadata_columns::unsupported(ctx, statement, &e)
        .await
        .unwrap_or(e)
}

pub use depth::DEFAULT_MAX_EXPRESSION_DEPTH;
pub use show_create_table::sql_identifier;

/// Whether `statement` may hold Spark's time-travel syntax (`… AS OF …`, `ns.t.branch_x`
/// and its kin): a cheap check before tokenizing it again. `SET`, `SHOW`, `RESET` and `CALL`
/// statements keep their text (option values and procedure arguments).
fn time_travel_candidate(statement: &str) -> bool {
    if tokens::first_word_is(statement, &["SET", "SHOW", "RESET", "CALL"]) {
        return false;
    }
    let lower = statement.to_ascii_lowercase();
    lower.contains(" of")
        || ["branch_", "tag_", "snapshot_id_", "at_timestamp_"]
            .iter()
            .any(|p| lower.contains(p))
}

/// Run `c`'s statement if it is icefloe DDL against an Iceberg catalog; `None` otherwise.
async fn execute_ddl(ctx: &SessionContext, mut c: Cursor<'_>) -> Result<Option<DataFrame>> {
    if c.eat_keyword("CREATE") {
        if let Some(word) = namespace_word(&mut c, &[]) {
            return create_schema(ctx, word, c).await;
        }
        if c.eat_keyword("TABLE") {
            return create_table::create_table(ctx, c, CreateMode::Create).await;
        }
        if c.eat_keywords(&["OR", "REPLACE", "TABLE"]) {
            return create_table::create_table(ctx, c, CreateMode::CreateOrReplace).await;
        }
    } else if c.peek_keyword("REPLACE") {
        let at = c.offset();
        if c.eat_keywords(&["REPLACE", "TABLE"]) {
            return create_table::create_table(ctx, c, CreateMode::Replace { at }).await;
        }
    } else if let Some(word) = namespace_word(&mut c, &["DROP"]) {
        return drop_schema::drop_schema(ctx, word, c).await;
    } else if c.eat_keywords(&["DROP", "TABLE"]) {
        return drop_table(ctx, c).await;
    } else if c.eat_keywords(&["ALTER", "TABLE"]) {
        return alter_table(ctx, c).await;
    } else if let Some(word) = namespace_word(&mut c, &["ALTER"]) {
        return alter_namespace::alter_namespace(ctx, word, c).await;
    } else if let Some(word) = namespace_word(&mut c, &["COMMENT", "ON"]) {
        return alter_namespace::comment_on_namespace(ctx, word, c).await;
    } else if c.eat_keywords(&["COMMENT", "ON", "TABLE"]) {
        return alter_table::comment_on_table(ctx, c).await;
    } else if c.eat_keywords(&["COMMENT", "ON", "COLUMN"]) {
        return alter_table::comment_on_column(ctx, c).await;
    } else if c.eat_keyword("CALL") {
        return call::call(ctx, c).await;
    }
    Ok(None)
}

/// Eat `before` (`ALTER`, `COMMENT ON`) and one of Spark's words for a namespace,
/// `NAMESPACE`, `SCHEMA` or `DATABASE`; that word (upper case), for the statement's
/// messages to echo it. Nothing is eaten when they do not follow.
fn namespace_word(c: &mut Cursor<'_>, before: &[&str]) -> Option<&'static str> {
    ["NAMESPACE", "SCHEMA", "DATABASE"]
        .into_iter()
        .find(|word| {
            let keywords: Vec<&str> = before.iter().copied().chain([*word]).collect();
            c.eat_keywords(&keywords)
        })
}

/// An empty result: no columns, no rows.
fn empty(ctx: &SessionContext) -> Result<DataFrame> {
    Ok(DataFrame::new(
        ctx.state(),
        LogicalPlanBuilder::empty(false).build()?,
    ))
}
