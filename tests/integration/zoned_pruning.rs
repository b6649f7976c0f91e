//! Pruning by the session zone's calendar functions never drops a row: the same rows
//! (around New York's and Paris's DST changes, year and month ends in several zones,
//! pre-1970 and pre-1911 local mean time, Kathmandu's 1986 offset change, NULL) in an
//! unpartitioned table and in tables partitioned by `hour`, `day`, `month`, `year`,
//! `bucket` and identity of a `timestamptz` (v2) or `timestamptz_ns` (v3) column, written
//! in several files and row groups (and one of files of four partition specs), must
//! answer filters on `extract`/`date_part`, `date_trunc`, `to_char`, `date_format` and
//! `date_bin` of it (=, <, >=, BETWEEN, IN, NOT, OR, IS NULL) in sessions in New York,
//! Paris, Kathmandu, Lord Howe, +05:30, Etc/GMT+5 and UTC (every partitioning in four of
//! them, the finest-grained ones in all: [`FINE_GRAINED`]) with exactly the rows plain
//! DataFusion selects over the same instants held in memory as timestamps of the
//! session's zone (computed there, as Spark computes them in its session zone), and skip
//! files doing so. Statements (`UPDATE`, `MERGE`, `DELETE`, copy-on-write, merge-on-read
//! and v3 deletion vectors, a prepared statement, a view, time travel) with such
//! conditions touch exactly those rows, and zone-less strings written into `timestamptz`
//! values are the instants java.time gives.

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, Int32Array, RecordBatch, TimestampMicrosecondArray};
use datafusion::arrow::datatypes::{DataType, Field, Int32Type, Int64Type, Schema, TimeUnit};
use datafusion::datasource::MemTable;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::SessionContext;

use crate::dml::{lake, ok, run, Lake};

/// The rows' instants (UTC), `None` for NULL.
const INSTANTS: &[Option<&str>] = &[
    // New York: spring gap (02:00 EST -> 03:00 EDT), autumn overlap (01:00-02:00 twice)
    Some("2026-03-08T06:30:00Z"),
    Some("2026-03-08T06:59:59.999999Z"),
    Some("2026-03-08T07:00:00Z"),
    Some("2026-11-01T04:59:59Z"),
    Some("2026-11-01T05:30:00Z"),
    Some("2026-11-01T06:30:00Z"),
    Some("2026-11-01T07:00:00Z"),
    // Paris: 2026-03-29 02:00 -> 03:00, 2026-10-25 03:00 -> 02:00
    Some("2026-03-29T00:59:59Z"),
    Some("2026-03-29T01:00:00Z"),
    Some("2026-10-25T00:30:00Z"),
    Some("2026-10-25T01:30:00Z"),
    // year ends: UTC, New York, Paris, Kathmandu (+05:45), +05:30
    Some("2025-12-31T23:59:59.999999Z"),
    Some("2026-01-01T00:00:00Z"),
    Some("2025-12-31T22:59:59Z"),
    Some("2025-12-31T23:00:00Z"),
    Some("2026-01-01T04:59:59Z"),
    Some("2026-01-01T05:00:00Z"),
    Some("2025-12-31T18:14:59Z"),
    Some("2025-12-31T18:15:00Z"),
    Some("2025-12-31T18:29:59Z"),
    Some("2025-12-31T18:30:00Z"),
    // month ends
    Some("2026-02-28T23:30:00Z"),
    Some("2026-03-01T04:30:00Z"),
    Some("2026-04-30T22:30:00Z"),
    // pre-1970
    Some("1969-12-31T23:59:59Z"),
    Some("1969-12-31T04:59:59.999999Z"),
    Some("1970-01-01T04:59:59Z"),
    Some("1960-01-01T03:00:00Z"),
    Some("1968-12-31T22:59:59Z"),
    // Kathmandu: +05:30 until 1986-01-01, then +05:45
    Some("1985-12-31T18:29:59Z"),
    Some("1985-12-31T18:30:00Z"),
    Some("1985-12-31T18:40:00Z"),
    // pre-1911 (local mean time: Paris +00:09:21, New York -04:56:02 before 1883-11-18)
    Some("1899-12-31T23:55:00Z"),
    Some("1900-01-01T00:00:00Z"),
    Some("1899-12-31T23:50:39Z"),
    Some("1883-11-18T16:59:00Z"),
    Some("1883-11-18T17:00:00Z"),
    Some("1850-01-01T04:56:01Z"),
    Some("1850-01-01T04:56:02Z"),
    Some("1850-06-15T12:00:00Z"),
    None,
    None,
];

/// The filters tried, on column `tz`.
const FILTERS: &[&str] = &[
    "extract(year FROM tz) = 2026",
    "extract(year FROM tz) = 2025",
    "extract(year FROM tz) < 2026",
    "extract(year FROM tz) >= 2026",
    "extract(year FROM tz) > 1969",
    "extract(year FROM tz) <= 1969",
    "extract(year FROM tz) BETWEEN 1900 AND 1969",
    "extract(year FROM tz) IN (1899, 1985, 2025)",
    "extract(year FROM tz) NOT IN (1899, 1985, 2025)",
    "NOT (extract(year FROM tz) = 2026)",
    "extract(year FROM tz) = 1969 OR extract(month FROM tz) = 3",
    "extract(year FROM tz) IS NULL",
    "extract(year FROM tz) IS NOT NULL",
    "extract(year FROM tz) <> 1900",
    "date_part('year', tz) = 1883",
    "date_part('year', tz) = 1850",
    "date_part('year', tz) = 1899",
    "date_part('year', tz) = 1986",
    "date_part('month', tz) = 12",
    "date_part('month', tz) = 1",
    "date_part('month', tz) >= 11",
    "date_part('month', tz) = 2",
    "date_part('day', tz) = 1",
    "date_part('day', tz) = 31",
    "date_part('day', tz) < 2",
    "date_part('hour', tz) = 1",
    "date_part('hour', tz) IN (1, 2, 3)",
    "date_part('hour', tz) >= 23",
    "date_part('hour', tz) = 0",
    "date_part('minute', tz) = 30",
    "date_part('minute', tz) = 0",
    "date_part('second', tz) = 59",
    "date_part('dow', tz) = 0",
    "date_part('doy', tz) = 1",
    "date_part('quarter', tz) = 4",
    "date_part('week', tz) = 1",
    "date_part('epoch', tz) < 0",
    "extract(year FROM tz) = 2026 AND extract(month FROM tz) = 1 AND extract(day FROM tz) = 1",
    "date_trunc('year', tz) = arrow_cast('2026-01-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('year', tz) >= arrow_cast('2026-01-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('year', tz) < arrow_cast('1970-01-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('month', tz) = arrow_cast('2026-03-01T05:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('month', tz) <= arrow_cast('1900-01-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('day', tz) = arrow_cast('2026-11-01T04:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('day', tz) > arrow_cast('2026-10-31T23:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('day', tz) BETWEEN arrow_cast('2025-12-31T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))') AND arrow_cast('2026-01-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('hour', tz) = arrow_cast('2026-11-01T05:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('hour', tz) < arrow_cast('1883-11-18T17:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('minute', tz) = arrow_cast('1899-12-31T23:55:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_trunc('day', tz) IS NULL",
    "to_char(tz, '%Y') = '2026'",
    "to_char(tz, '%Y') < '1970'",
    "to_char(tz, '%Y-%m-%d') = '2026-11-01'",
    "to_char(tz, '%Y-%m-%d') IN ('2025-12-31', '1969-12-31')",
    "to_char(tz, '%H') = '01'",
    "date_format(tz, '%Y-%m') = '2026-03'",
    "to_char(tz, '%Y') IS NULL",
    "date_bin(INTERVAL '1 day', tz, arrow_cast('2026-01-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')) = arrow_cast('2026-11-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_bin(INTERVAL '1 hour', tz) >= arrow_cast('2026-01-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    "date_bin(INTERVAL '1 day', tz, arrow_cast('2026-01-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')) < arrow_cast('1970-01-01T00:00:00Z', 'Timestamp(Microsecond, Some(\"UTC\"))')",
    // zone-less constants: wall-clock times of the session's zone
    "date_trunc('day', tz) = TIMESTAMP '2026-11-01 00:00:00'",
    "date_trunc('year', tz) = TIMESTAMP '2026-01-01 00:00:00'",
    "date_trunc('year', tz) < TIMESTAMP '1970-01-01 00:00:00'",
    "date_trunc('hour', tz) = TIMESTAMP '2026-11-01 03:00:00'",
    "date_trunc('month', tz) >= TIMESTAMP '2026-03-01 00:00:00'",
    "date_trunc('minute', tz) = TIMESTAMP '1899-12-31 23:59:00'",
    "tz >= TIMESTAMP '2026-01-01 00:00:00'",
    "tz < TIMESTAMP '1900-01-01 00:00:00'",
    "date_bin(INTERVAL '1 day', tz, TIMESTAMP '2026-01-01 00:00:00') = TIMESTAMP '2026-11-01 00:00:00'",
    // other spellings and forms
    "extract(year FROM tz) + 0 = 2026",
    "CAST(extract(year FROM tz) AS INT) = 2026",
    "extract(year FROM tz) = 2026.0",
    "extract(year FROM tz) > 2025.5",
    "extract(year FROM tz) < 1969.5",
    "extract(year FROM tz) = '2026'",
    "date_part('YEAR', tz) = 2025",
    "datepart('year', tz) = 1969",
    "extract(year FROM tz) IN (2026, NULL)",
    "NOT (extract(year FROM tz) IN (2025, NULL))",
    "extract(year FROM tz) = NULL",
    "extract(year FROM tz) BETWEEN 2026 AND 2025",
    "extract(year FROM tz) NOT BETWEEN 1900 AND 2025",
    "2026 = extract(year FROM tz)",
    "1970 > extract(year FROM tz)",
    "extract(year FROM date_trunc('month', tz)) = 2026",
    "extract(year FROM tz) = 2026 OR tz IS NULL",
    "date_trunc('quarter', tz) = TIMESTAMP '2026-10-01 00:00:00'",
    "date_trunc('week', tz) = TIMESTAMP '2026-10-26 00:00:00'",
    "CAST(tz AS DATE) = DATE '2026-11-01'",
    "CAST(tz AS DATE) < DATE '1970-01-01'",
    "CAST(tz AS DATE) BETWEEN DATE '2025-12-31' AND DATE '2026-01-01'",
    "CAST(tz AS TIMESTAMP) >= TIMESTAMP '2026-01-01 00:00:00'",
    "CAST(tz AS TIMESTAMP) < TIMESTAMP '1900-01-01 00:00:00'",
    "extract(year FROM tz) * 100 + extract(month FROM tz) = 202512",
    "date_part('year', tz) = 2026 AND date_part('hour', tz) < 3",
    "coalesce(extract(year FROM tz), 0) = 0",
    "CASE WHEN extract(year FROM tz) = 2026 THEN true ELSE false END",
    "id IN (SELECT id FROM (SELECT 0 AS id UNION ALL SELECT 12) s) AND extract(year FROM tz) = 2026",
    "EXISTS (SELECT 1) AND date_part('month', tz) = 12",
    // the session zone's text of an instant, which nothing inverts (prunes no file)
    "CAST(tz AS VARCHAR) LIKE '2026-11-01T01%'",
    "CAST(tz AS VARCHAR) >= '2026-01-01'",
    "tz::STRING LIKE '%+01:00'",
    "'at ' || tz LIKE 'at 2025-12-31%'",
    "concat('x', tz) < 'x1970'",
    // month and year bins of the session zone's calendar
    "date_bin(INTERVAL '1 month', tz, TIMESTAMP '2026-01-01 00:00:00') = TIMESTAMP '2026-03-01 00:00:00'",
    "date_bin(INTERVAL '1 year', tz) < TIMESTAMP '1970-01-01 00:00:00'",
    "date_bin(INTERVAL '3 months', tz) >= TIMESTAMP '2026-10-01 00:00:00'",
];

/// A copy of the rows: its table name and its `PARTITIONED BY` clause.
type Copy = (&'static str, &'static str);

/// Partitionings of the Iceberg copies (the first, unpartitioned, is the reference copy).
const PARTITIONINGS: &[Copy] = &[
    ("flat", ""),
    ("p_hour", "PARTITIONED BY (hour(tz))"),
    ("p_day", "PARTITIONED BY (day(tz))"),
    ("p_month", "PARTITIONED BY (month(tz))"),
    ("p_year", "PARTITIONED BY (year(tz))"),
    ("p_bucket", "PARTITIONED BY (bucket(4, tz))"),
    ("p_ident", "PARTITIONED BY (tz)"),
    // files of four specs: day, hour, year, none
    ("p_evolved", "PARTITIONED BY (day(tz))"),
];

/// The partition changes of `p_evolved` before its second, third and fourth INSERT.
const EVOLUTION: &[&str] = &[
    "REPLACE PARTITION FIELD tz_day WITH hours(tz)",
    "REPLACE PARTITION FIELD tz_hour WITH years(tz)",
    "DROP PARTITION FIELD tz_year",
];

/// The instants as microseconds since the epoch.
fn micros() -> Vec<Option<i64>> {
    INSTANTS
        .iter()
        .map(|s| {
            s.map(|s| {
                chrono::DateTime::parse_from_rfc3339(s)
                    .expect("instant")
                    .timestamp_micros()
            })
        })
        .collect()
}

/// A plain DataFusion session holding the rows as timestamps of `zone`, in `zone`.
async fn reference(zone: &str) -> SessionContext {
    let ctx = SessionContext::new();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new(
            "tz",
            DataType::Timestamp(TimeUnit::Microsecond, Some(zone.into())),
            true,
        ),
    ]));
    let ids = Int32Array::from_iter_values(0..INSTANTS.len() as i32);
    let tz = TimestampMicrosecondArray::from(micros()).with_timezone(zone);
    let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(ids), Arc::new(tz)])
        .expect("batch");
    let table = MemTable::try_new(schema, vec![vec![batch]]).expect("memtable");
    ctx.register_table("t", Arc::new(table)).expect("register");
    ctx.sql(&format!("SET datafusion.execution.time_zone = '{zone}'"))
        .await
        .expect("set")
        .collect()
        .await
        .expect("set");
    ctx
}

/// The sorted ids of `batches`' first column.
pub(crate) fn ids(batches: &[RecordBatch]) -> Vec<i32> {
    let mut out: Vec<i32> = batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<Int32Type>()
                .iter()
                .map(|v| v.expect("id"))
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort_unstable();
    out
}

/// The data files the Iceberg scans under `plan` skipped (by partition or metrics).
fn skipped_files(plan: &Arc<dyn ExecutionPlan>) -> usize {
    let own = plan.metrics().map_or(0, |m| {
        [
            "iceberg_data_files_skipped_by_partition",
            "iceberg_data_files_skipped_by_metrics",
        ]
        .iter()
        .filter_map(|n| m.sum_by_name(n))
        .map(|v| v.as_usize())
        .sum()
    });
    own + plan
        .children()
        .into_iter()
        .map(skipped_files)
        .sum::<usize>()
}

/// The physical plan of `sql` and its rows (the plan keeps its scans' metrics).
async fn run_plan(
    lake: &Lake,
    sql: &str,
) -> Result<(Arc<dyn ExecutionPlan>, Vec<RecordBatch>), String> {
    let df = icefloe::datafusion::sql::execute(&lake.ctx, sql)
        .await
        .map_err(|e| e.to_string())?;
    let plan = df.create_physical_plan().await.map_err(|e| e.to_string())?;
    let batches = collect(Arc::clone(&plan), lake.ctx.task_ctx())
        .await
        .map_err(|e| e.to_string())?;
    Ok((plan, batches))
}

/// The rows of `sql` and the data files its Iceberg scan skipped (by partition or metrics).
pub(crate) async fn run_skipping(
    lake: &Lake,
    sql: &str,
) -> Result<(Vec<RecordBatch>, usize), String> {
    let (plan, batches) = run_plan(lake, sql).await?;
    Ok((batches, skipped_files(&plan)))
}

/// Create the copies of the rows (`ty` the column's type, `version` the format version),
/// each in several files (four INSERTs) of one-row row groups.
async fn create_copies(lake: &Lake, suffix: &str, ty: &str, version: u8, copies: &[Copy]) {
    let rows: Vec<String> = INSTANTS
        .iter()
        .enumerate()
        .map(|(i, s)| match s {
            Some(s) => format!("({i}, TIMESTAMP '{s}')"),
            None => format!("({i}, NULL)"),
        })
        .collect();
    for (name, partitioning) in copies {
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE ice.ns.{name}{suffix} (id INT, tz {ty}) {partitioning} \
                 TBLPROPERTIES ('format-version'='{version}', \
                 'write.parquet.row-group-size-bytes'='1', 'write.parquet.page-row-limit'='2')"
            ),
        )
        .await;
        for (k, chunk) in rows.chunks(rows.len().div_ceil(4)).enumerate() {
            if *name == "p_evolved" && k > 0 {
                ok(
                    &lake.ctx,
                    &format!("ALTER TABLE ice.ns.{name}{suffix} {}", EVOLUTION[k - 1]),
                )
                .await;
            }
            ok(
                &lake.ctx,
                &format!(
                    "INSERT INTO ice.ns.{name}{suffix} VALUES {}",
                    chunk.join(", ")
                ),
            )
            .await;
        }
    }
}

/// Filters where plain DataFusion is not Spark's answer, so only the copies are compared
/// with the unpartitioned one: DataFusion truncates the UTC minute, not the local clock's
/// (local mean time, Paris +00:09:21 before 1911); and it bins months and years on the UTC
/// calendar (the values are held in `session_zone_casts`).
const COPIES_ONLY: &[&str] = &[
    "date_trunc('minute'",
    "date_bin(INTERVAL '1 month'",
    "date_bin(INTERVAL '1 year'",
    "date_bin(INTERVAL '3 months'",
];

/// The sorted ids `filter` selects in each of `copies` (names with `suffix`), in their
/// order, with the data files each copy's scan skipped. One statement, the copies' queries
/// under `UNION ALL` (each branch its own scan, filter and pruning; one statement per
/// filter instead of one per copy); when it fails or the plan's union does not keep an
/// input per copy, each copy on its own (so that an error is the copy's).
async fn every_copy(
    lake: &Lake,
    suffix: &str,
    filter: &str,
    copies: &[Copy],
) -> Vec<Result<(Vec<i32>, usize), String>> {
    let query = |name: &str| format!("SELECT id FROM ice.ns.{name}{suffix} WHERE {filter}");
    let union = copies
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            format!("SELECT id, {i} AS copy FROM ice.ns.{name}{suffix} WHERE {filter}")
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    match run_branches(lake, &union).await {
        Ok((batches, skipped)) if skipped.len() == copies.len() => {
            let mut ids = vec![vec![]; copies.len()];
            for b in &batches {
                let id = b.column(0).as_primitive::<Int32Type>();
                let copy = b.column(1).as_primitive::<Int64Type>();
                for (id, copy) in id.iter().zip(copy.iter()) {
                    let copy = usize::try_from(copy.expect("copy")).expect("copy");
                    ids[copy].push(id.expect("id"));
                }
            }
            ids.into_iter()
                .zip(skipped)
                .map(|(mut ids, n)| {
                    ids.sort_unstable();
                    Ok((ids, n))
                })
                .collect()
        }
        // a failed statement, or a union the optimizer changed (inputs it proved empty are
        // dropped): each copy on its own
        _ => {
            let mut out = vec![];
            for (name, _) in copies {
                out.push(
                    run_skipping(lake, &query(name))
                        .await
                        .map(|(b, n)| (ids(&b), n)),
                );
            }
            out
        }
    }
}

/// The rows of `sql`, a `UNION ALL` of Iceberg scans, and the data files each input of the
/// plan's (first) union skipped, in the order of its inputs.
async fn run_branches(lake: &Lake, sql: &str) -> Result<(Vec<RecordBatch>, Vec<usize>), String> {
    let (plan, batches) = run_plan(lake, sql).await?;
    fn union(plan: &Arc<dyn ExecutionPlan>) -> Option<&Arc<dyn ExecutionPlan>> {
        if plan.name() == "UnionExec" {
            return Some(plan);
        }
        plan.children().into_iter().find_map(union)
    }
    let branches = union(&plan).map_or_else(Vec::new, |u| {
        u.children().into_iter().map(skipped_files).collect()
    });
    Ok((batches, branches))
}

/// Every filter over every copy in a session in `zone`: the ids each copy selects, against
/// the unpartitioned copy's and plain DataFusion's; the disagreements, described.
async fn differences(lake: &Lake, suffix: &str, zone: &str, copies: &[Copy]) -> Vec<String> {
    let mut wrong = vec![];
    let mut skipped = vec![0; copies.len()];
    ok(
        &lake.ctx,
        &format!("SET datafusion.execution.time_zone = '{zone}'"),
    )
    .await;
    let plain = reference(zone).await;
    for filter in FILTERS {
        // plain DataFusion casts no instant to another zone, reads a zone-less `date_bin`
        // origin in UTC and casts a zoned time to a zone-less one as its UTC wall clock: its
        // constants are the same instants of the session's zone, its wall clock
        // `to_local_time`'s
        let same_zone = filter
            .replace("CAST(tz AS TIMESTAMP)", "to_local_time(tz)")
            .replace("Some(\"UTC\")", &format!("Some(\"{zone}\")"))
            .replace(
                "tz, TIMESTAMP '2026-01-01 00:00:00'",
                &format!(
                    "tz, arrow_cast('2026-01-01 00:00:00', 'Timestamp(Microsecond, Some(\"{zone}\"))')"
                ),
            );
        let mut expected = match plain
            .sql(&format!("SELECT id FROM t WHERE {same_zone}"))
            .await
        {
            Ok(df) => ids(&df
                .collect()
                .await
                .unwrap_or_else(|e| panic!("reference {zone} {same_zone}: {e}"))),
            Err(e) => panic!("reference {filter}: {e}"),
        };
        let copies_only = COPIES_ONLY.iter().any(|f| filter.contains(f));
        for (i, answer) in every_copy(lake, suffix, filter, copies)
            .await
            .into_iter()
            .enumerate()
        {
            let name = copies[i].0;
            match answer {
                Ok((got, n)) => {
                    skipped[i] += n;
                    if i == 0 && copies_only {
                        expected = got;
                    } else if got != expected {
                        wrong.push(format!(
                            "{zone} {name}{suffix} {filter}: {got:?}, expected {expected:?}"
                        ));
                    }
                }
                Err(e) => wrong.push(format!("{zone} {name}{suffix} {filter}: error {e}")),
            }
        }
    }
    ok(&lake.ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    // the filters did prune: every copy but the bucketed one skipped files
    for (i, (name, _)) in copies.iter().enumerate() {
        if *name != "p_bucket" && skipped[i] == 0 {
            wrong.push(format!("{zone} {name}{suffix}: no file skipped"));
        }
    }
    wrong
}

/// The differential for copies of format `version` (`timestamptz_ns` in v3) in a session
/// in `zone`: every copy of [`PARTITIONINGS`] (`all`), or the fine-grained ones only.
async fn prunes_no_row(version: u8, zone: &str, all: bool) {
    let lake = lake().await;
    let (suffix, ty) = match version {
        3 => ("_ns", "TIMESTAMP(9) WITH TIME ZONE"),
        _ => ("", "TIMESTAMPTZ"),
    };
    let copies: Vec<Copy> = PARTITIONINGS
        .iter()
        .filter(|(name, _)| all || FINE_GRAINED.contains(name))
        .copied()
        .collect();
    create_copies(&lake, suffix, ty, version, &copies).await;
    let wrong = differences(&lake, suffix, zone, &copies).await;
    assert!(wrong.is_empty(), "{}\n{}", wrong.len(), wrong.join("\n"));
}

/// The copies every zone's differential checks. Which zone is checked against which
/// partitioning: the session zone's rewrite turns a filter into ranges of instants
/// without regard to the table's partitioning, and a partition transform projects such
/// ranges without regard to the zone (UTC). So each zone is checked on the copies whose
/// skipping is finest, where a range a second too narrow drops a row (`flat`: one-row row
/// groups, per-row bounds; `p_hour`; `p_ident`), and the transforms get the full product
/// in the zones whose ranges are the most unevenly aligned: New York (DST, behind UTC, local
/// mean time -04:56:02 before 1883), Kathmandu (+05:45, +05:30 before 1986) and Lord Howe
/// (30-minute DST) on v2, Paris (DST, local mean time +00:09:21 before 1911) on v3's
/// nanoseconds. The others (UTC, whose session is not rewritten; +05:30; Etc/GMT+5's POSIX
/// sign; Paris on v2; New York and Kathmandu on v3) check their ranges on the fine-grained
/// copies: the whole product in every zone repeated those checks at 2.3 times the cost.
const FINE_GRAINED: [&str; 3] = ["flat", "p_hour", "p_ident"];

#[tokio::test]
async fn v2_new_york() {
    prunes_no_row(2, "America/New_York", true).await;
}

#[tokio::test]
async fn v2_paris() {
    prunes_no_row(2, "Europe/Paris", false).await;
}

#[tokio::test]
async fn v2_kathmandu() {
    prunes_no_row(2, "Asia/Kathmandu", true).await;
}

#[tokio::test]
async fn v2_plus_05_30() {
    prunes_no_row(2, "+05:30", false).await;
}

#[tokio::test]
async fn v2_utc() {
    prunes_no_row(2, "UTC", false).await;
}

#[tokio::test]
async fn v3_ns_new_york() {
    prunes_no_row(3, "America/New_York", false).await;
}

#[tokio::test]
async fn v3_ns_paris() {
    prunes_no_row(3, "Europe/Paris", true).await;
}

#[tokio::test]
async fn v3_ns_kathmandu() {
    prunes_no_row(3, "Asia/Kathmandu", false).await;
}

/// Conditions of the statements of [`statements_touch_exactly_the_rows`].
const STATEMENT_FILTERS: &[&str] = &[
    "extract(year FROM tz) = 2026",
    "date_part('hour', tz) IN (1, 2, 3)",
    "date_trunc('day', tz) = TIMESTAMP '2026-11-01 00:00:00'",
    "to_char(tz, '%Y-%m') = '2025-12'",
    "date_part('day', tz) = 1 OR extract(year FROM tz) < 1900",
    "NOT (date_part('month', tz) = 12)",
    "date_bin(INTERVAL '1 day', tz, TIMESTAMP '2026-01-01 00:00:00') = TIMESTAMP '2026-11-01 00:00:00'",
];

/// The ids of `sql` run in `lake`'s session.
async fn ids_of(lake: &Lake, sql: &str) -> Vec<i32> {
    ids(&run(&lake.ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}")))
}

/// `UPDATE`, `MERGE` and `DELETE` conditioned on the session zone's calendar functions touch
/// exactly the rows plain DataFusion selects (copy-on-write and merge-on-read, v2 or v3
/// with deletion vectors for `timestamptz_ns`, tables partitioned by the column's day,
/// hour, month and identity), a prepared statement and a view answer them, and time travel
/// to the last INSERT sees every row the condition selects.
async fn statements_touch_exactly_the_rows(zone: &str, version: u8) {
    let ty = if version == 3 {
        "TIMESTAMP(9) WITH TIME ZONE"
    } else {
        "TIMESTAMPTZ"
    };
    let lake = lake().await;
    let rows: Vec<String> = INSTANTS
        .iter()
        .enumerate()
        .map(|(i, s)| match s {
            Some(s) => format!("({i}, TIMESTAMP '{s}', 'a')"),
            None => format!("({i}, NULL, 'a')"),
        })
        .collect();
    let tables = [
        ("s_flat", "", "copy-on-write"),
        ("s_day", "PARTITIONED BY (day(tz))", "merge-on-read"),
        ("s_hour", "PARTITIONED BY (hour(tz))", "copy-on-write"),
        ("s_month", "PARTITIONED BY (month(tz))", "merge-on-read"),
        ("s_ident", "PARTITIONED BY (tz)", "merge-on-read"),
    ];
    for (name, partitioning, mode) in tables {
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE ice.ns.{name} (id INT, tz {ty}, tag STRING) {partitioning} \
                 TBLPROPERTIES ('format-version'='{version}', \
                 'write.parquet.row-group-size-bytes'='1', 'write.delete.mode'='{mode}', \
                 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
            ),
        )
        .await;
        for chunk in rows.chunks(rows.len().div_ceil(3)) {
            ok(
                &lake.ctx,
                &format!("INSERT INTO ice.ns.{name} VALUES {}", chunk.join(", ")),
            )
            .await;
        }
    }
    ok(
        &lake.ctx,
        &format!("SET datafusion.execution.time_zone = '{zone}'"),
    )
    .await;
    let plain = reference(zone).await;
    let mut expected = vec![];
    for filter in STATEMENT_FILTERS {
        let same_zone = filter.replace(
            "tz, TIMESTAMP '2026-01-01 00:00:00'",
            &format!(
                "tz, arrow_cast('2026-01-01 00:00:00', 'Timestamp(Microsecond, Some(\"{zone}\"))')"
            ),
        );
        let df = plain
            .sql(&format!("SELECT id FROM t WHERE {same_zone}"))
            .await
            .unwrap_or_else(|e| panic!("reference {filter}: {e}"));
        expected.push(ids(&df.collect().await.expect("reference rows")));
    }
    ok(
        &lake.ctx,
        "CREATE VIEW ice.ns.v AS SELECT id FROM ice.ns.s_month WHERE date_part('hour', tz) IN (1, 2, 3)",
    )
    .await;
    assert_eq!(
        ids_of(&lake, "SELECT id FROM ice.ns.v").await,
        expected[1],
        "view"
    );
    ok(
        &lake.ctx,
        "PREPARE p(INT) AS SELECT id FROM ice.ns.s_day WHERE extract(year FROM tz) = $1",
    )
    .await;
    assert_eq!(
        ids_of(&lake, "EXECUTE p(2026)").await,
        expected[0],
        "prepared"
    );
    for (name, _, _) in tables {
        let t = format!("ice.ns.{name}");
        let mut remaining: Vec<i32> = (0..INSTANTS.len() as i32).collect();
        for (k, filter) in STATEMENT_FILTERS.iter().enumerate() {
            let want: Vec<i32> = expected[k]
                .iter()
                .copied()
                .filter(|id| remaining.contains(id))
                .collect();
            // UPDATE, then MERGE with the condition in ON, then (every other one) DELETE
            ok(
                &lake.ctx,
                &format!("UPDATE {t} SET tag = 'u{k}' WHERE {filter}"),
            )
            .await;
            assert_eq!(
                ids_of(&lake, &format!("SELECT id FROM {t} WHERE tag = 'u{k}'")).await,
                want,
                "{zone} UPDATE {t} WHERE {filter}"
            );
            ok(
                &lake.ctx,
                &format!(
                    "MERGE INTO {t} USING (SELECT 1 AS one) s ON {filter} \
                     WHEN MATCHED THEN UPDATE SET tag = 'm{k}'"
                ),
            )
            .await;
            assert_eq!(
                ids_of(&lake, &format!("SELECT id FROM {t} WHERE tag = 'm{k}'")).await,
                want,
                "{zone} MERGE {t} ON {filter}"
            );
            if k % 2 == 0 {
                ok(&lake.ctx, &format!("DELETE FROM {t} WHERE {filter}")).await;
                remaining.retain(|id| !want.contains(id));
                assert_eq!(
                    ids_of(&lake, &format!("SELECT id FROM {t}")).await,
                    remaining,
                    "{zone} DELETE {t} WHERE {filter}"
                );
            }
        }
        // the third snapshot (every row inserted) answers every condition as before
        let snapshots = run(
            &lake.ctx,
            &format!("SELECT snapshot_id FROM ice.ns.\"{name}$snapshots\" ORDER BY committed_at"),
        )
        .await
        .expect("snapshots");
        let third = snapshots[0]
            .column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(2);
        for (k, filter) in STATEMENT_FILTERS.iter().enumerate() {
            assert_eq!(
                ids_of(
                    &lake,
                    &format!("SELECT id FROM {t} VERSION AS OF {third} WHERE {filter}")
                )
                .await,
                expected[k],
                "{zone} {t} VERSION AS OF the third INSERT WHERE {filter}"
            );
        }
    }
}

#[tokio::test]
async fn statements_in_new_york() {
    statements_touch_exactly_the_rows("America/New_York", 2).await;
}

#[tokio::test]
async fn statements_in_paris() {
    statements_touch_exactly_the_rows("Europe/Paris", 2).await;
}

#[tokio::test]
async fn statements_on_timestamptz_ns_in_kathmandu() {
    // v3: deletion vectors, row lineage
    statements_touch_exactly_the_rows("Asia/Kathmandu", 3).await;
}

/// Wall-clock times (zone, string) and the instants java.time's `ZonedDateTime.of` resolves
/// them to (a time the clock skips moves later by the gap; of two, the earlier offset; local
/// mean time before a zone's first standard offset), as Spark writes a zone-less string
/// into a `timestamptz`.
const WALL_CLOCKS: &[(&str, &str, &str)] = &[
    (
        "America/New_York",
        "2026-03-08 02:30:00",
        "2026-03-08T07:30:00Z",
    ),
    (
        "America/New_York",
        "2026-03-08 02:00:00",
        "2026-03-08T07:00:00Z",
    ),
    (
        "America/New_York",
        "2026-03-08 03:00:00",
        "2026-03-08T07:00:00Z",
    ),
    (
        "America/New_York",
        "2026-11-01 01:30:00",
        "2026-11-01T05:30:00Z",
    ),
    (
        "America/New_York",
        "2026-11-01 01:00:00",
        "2026-11-01T05:00:00Z",
    ),
    (
        "America/New_York",
        "2026-11-01 02:00:00",
        "2026-11-01T07:00:00Z",
    ),
    (
        "America/New_York",
        "1883-11-18 12:00:00",
        "1883-11-18T16:56:02Z",
    ),
    (
        "America/New_York",
        "1883-11-18 11:59:59",
        "1883-11-18T16:56:01Z",
    ),
    (
        "America/New_York",
        "1850-01-01 00:00:00",
        "1850-01-01T04:56:02Z",
    ),
    (
        "America/New_York",
        "1969-12-31 23:59:59.999999",
        "1970-01-01T04:59:59.999999Z",
    ),
    (
        "Europe/Paris",
        "2026-03-29 02:30:00",
        "2026-03-29T01:30:00Z",
    ),
    (
        "Europe/Paris",
        "2026-10-25 02:30:00",
        "2026-10-25T00:30:00Z",
    ),
    (
        "Europe/Paris",
        "1911-03-11 00:00:00",
        "1911-03-11T00:00:00Z",
    ),
    (
        "Europe/Paris",
        "1911-03-10 23:59:59",
        "1911-03-10T23:50:38Z",
    ),
    (
        "Europe/Paris",
        "1900-01-01 00:00:00",
        "1899-12-31T23:50:39Z",
    ),
    (
        "Europe/Paris",
        "1940-06-14 23:30:00",
        "1940-06-14T22:30:00Z",
    ),
    (
        "Europe/Paris",
        "1945-09-16 02:30:00",
        "1945-09-16T00:30:00Z",
    ),
    (
        "Asia/Kathmandu",
        "1986-01-01 00:10:00",
        "1985-12-31T18:40:00Z",
    ),
    (
        "Asia/Kathmandu",
        "1986-01-01 00:15:00",
        "1985-12-31T18:30:00Z",
    ),
    (
        "Asia/Kathmandu",
        "1985-12-31 23:59:59",
        "1985-12-31T18:29:59Z",
    ),
    (
        "Asia/Kathmandu",
        "1900-01-01 00:00:00",
        "1899-12-31T18:18:44Z",
    ),
];

/// Zone-less strings written into a `timestamptz` column, a struct's and a list's, by
/// `INSERT … SELECT` from a string column, are the instants java.time resolves them to in
/// the session's zone (per row, gaps, overlaps and local mean time), and a filter comparing
/// the column with the same zone-less constant finds the row in a `day`-partitioned table.
#[tokio::test]
async fn zone_less_strings_resolve_as_java_time_per_row() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.src (id INT, z STRING, s STRING)").await;
    ok(
        ctx,
        "CREATE TABLE ice.ns.w (id INT, tz TIMESTAMPTZ, st STRUCT<ts: TIMESTAMPTZ>, \
         l ARRAY<TIMESTAMPTZ>) PARTITIONED BY (day(tz))",
    )
    .await;
    let values: Vec<String> = WALL_CLOCKS
        .iter()
        .enumerate()
        .map(|(i, (z, s, _))| format!("({i}, '{z}', '{s}')"))
        .collect();
    ok(
        ctx,
        &format!("INSERT INTO ice.ns.src VALUES {}", values.join(", ")),
    )
    .await;
    for zone in ["America/New_York", "Europe/Paris", "Asia/Kathmandu"] {
        ok(
            ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        ok(
            ctx,
            &format!(
                "INSERT INTO ice.ns.w SELECT id, s, named_struct('ts', s), make_array(s) \
                 FROM ice.ns.src WHERE z = '{zone}'"
            ),
        )
        .await;
        for (i, (z, s, _)) in WALL_CLOCKS.iter().enumerate() {
            if *z == zone {
                let found = ids_of(
                    &lake,
                    &format!("SELECT id FROM ice.ns.w WHERE tz = TIMESTAMP '{s}'"),
                )
                .await;
                assert!(found.contains(&(i as i32)), "{zone} {s}: {found:?}");
            }
        }
    }
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    let batches = run(
        ctx,
        "SELECT CAST(tz AS STRING), CAST(st.ts AS STRING), CAST(l[1] AS STRING) \
         FROM ice.ns.w ORDER BY id",
    )
    .await
    .expect("rows");
    let mut got = vec![];
    for b in &batches {
        for r in 0..b.num_rows() {
            let cell = |c: usize| {
                let a =
                    datafusion::arrow::compute::cast(b.column(c), &DataType::Utf8).expect("cast");
                a.as_string::<i32>().value(r).to_string()
            };
            got.push([cell(0), cell(1), cell(2)]);
        }
    }
    let want: Vec<[String; 3]> = WALL_CLOCKS
        .iter()
        .map(|(_, _, at)| [at.to_string(), at.to_string(), at.to_string()])
        .collect();
    assert_eq!(got, want);
}

/// A statement prepared, and a view created, in one zone answer in the zone of the session
/// that runs them, as Spark computes its views and statements at run time: New York's
/// 2025-12-31 21:00 and 17:30 are Paris's 2026-01-01 03:00 and 2025-12-31 23:30.
#[tokio::test]
async fn prepared_statements_and_views_run_in_the_current_zone() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for sql in [
        "CREATE TABLE ice.ns.p (id INT, tz TIMESTAMPTZ) PARTITIONED BY (day(tz))",
        "INSERT INTO ice.ns.p VALUES (1, TIMESTAMP '2026-01-01T02:00:00Z'), \
         (2, TIMESTAMP '2025-12-31T22:30:00Z')",
        "SET datafusion.execution.time_zone = 'America/New_York'",
        "PREPARE q(INT) AS SELECT id FROM ice.ns.p WHERE extract(year FROM tz) = $1",
        "PREPARE r(TIMESTAMP) AS SELECT id FROM ice.ns.p WHERE date_trunc('day', tz) = $1",
        "CREATE VIEW ice.ns.v AS SELECT id, extract(year FROM tz) AS y FROM ice.ns.p",
        "CREATE VIEW ice.ns.w AS SELECT id FROM ice.ns.p WHERE extract(year FROM tz) = 2026",
    ] {
        ok(ctx, sql).await;
    }
    let none: Vec<i32> = vec![];
    assert_eq!(ids_of(&lake, "EXECUTE q(2026)").await, none);
    assert_eq!(
        ids_of(&lake, "EXECUTE r(TIMESTAMP '2025-12-31 00:00:00')").await,
        [1, 2]
    );
    assert_eq!(ids_of(&lake, "SELECT id FROM ice.ns.w").await, none);
    ok(ctx, "SET datafusion.execution.time_zone = 'Europe/Paris'").await;
    assert_eq!(ids_of(&lake, "EXECUTE q(2026)").await, [1]);
    assert_eq!(
        ids_of(&lake, "EXECUTE r(TIMESTAMP '2026-01-01 00:00:00')").await,
        [1]
    );
    assert_eq!(ids_of(&lake, "SELECT id FROM ice.ns.w").await, [1]);
    assert_eq!(
        ids_of(&lake, "SELECT id FROM ice.ns.v WHERE y = 2025").await,
        [2]
    );
    ok(
        ctx,
        "DELETE FROM ice.ns.p WHERE extract(year FROM tz) = 2025",
    )
    .await;
    assert_eq!(ids_of(&lake, "SELECT id FROM ice.ns.p").await, [1]);
}

#[tokio::test]
async fn v2_lord_howe() {
    // a 30-minute daylight saving time shift
    prunes_no_row(2, "Australia/Lord_Howe", true).await;
}

#[tokio::test]
async fn v2_etc_gmt_plus_5() {
    // POSIX sign: five hours behind UTC
    prunes_no_row(2, "Etc/GMT+5", false).await;
}

/// Spark's tables partitioned by `days(ts)` and (after evolution) `years(ts)`/`hours(ts)` of
/// a `timestamptz` answer every filter of the differential in New York, Paris and
/// Kathmandu sessions with the rows plain DataFusion selects over their unfiltered rows.
#[tokio::test]
async fn spark_written_tables_prune_no_row() {
    // those the corpus holds (without ../shared/corpus, testdata/corpus has the first)
    let tables: Vec<&str> = ["spark_v2_day_partitioned", "spark_v2_time_transforms"]
        .into_iter()
        .filter(|t| crate::catalog::corpus_dir().join(t).is_dir())
        .collect();
    assert!(!tables.is_empty(), "no corpus table");
    let (_copies, lake, _catalog) = crate::maintenance::corpus_lake(&tables).await;
    let mut wrong = vec![];
    let mut selecting = 0;
    for t in &tables {
        let all = run(
            &lake.ctx,
            &format!("SELECT CAST(id AS INT) AS id, ts FROM corpus.ns.{t}"),
        )
        .await
        .expect("rows");
        assert!(all.iter().map(RecordBatch::num_rows).sum::<usize>() > 0);
        for zone in ["America/New_York", "Europe/Paris", "Asia/Kathmandu"] {
            let plain = SessionContext::new();
            let to = DataType::Timestamp(TimeUnit::Microsecond, Some(zone.into()));
            let schema = Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int32, true),
                Field::new("tz", to.clone(), true),
            ]));
            let batches: Vec<RecordBatch> = all
                .iter()
                .map(|b| {
                    let tz = datafusion::arrow::compute::cast(b.column(1), &to).expect("cast");
                    RecordBatch::try_new(Arc::clone(&schema), vec![Arc::clone(b.column(0)), tz])
                        .expect("batch")
                })
                .collect();
            let table = MemTable::try_new(schema, vec![batches]).expect("memtable");
            plain
                .register_table("t", Arc::new(table))
                .expect("register");
            let set = format!("SET datafusion.execution.time_zone = '{zone}'");
            plain
                .sql(&set)
                .await
                .expect("set")
                .collect()
                .await
                .expect("set");
            ok(&lake.ctx, &set).await;
            for filter in FILTERS {
                if COPIES_ONLY.iter().any(|f| filter.contains(f)) {
                    continue;
                }
                let same_zone = filter
                    .replace("CAST(tz AS TIMESTAMP)", "to_local_time(tz)")
                    .replace("Some(\"UTC\")", &format!("Some(\"{zone}\")"))
                    .replace(
                        "tz, TIMESTAMP '2026-01-01 00:00:00'",
                        &format!(
                            "tz, arrow_cast('2026-01-01 00:00:00', 'Timestamp(Microsecond, Some(\"{zone}\"))')"
                        ),
                    );
                let df = plain
                    .sql(&format!("SELECT id FROM t WHERE {same_zone}"))
                    .await
                    .unwrap_or_else(|e| panic!("reference {same_zone}: {e}"));
                let expected = ids(&df
                    .collect()
                    .await
                    .unwrap_or_else(|e| panic!("reference {same_zone}: {e}")));
                selecting += usize::from(!expected.is_empty());
                let on_ts = filter.replace("tz", "ts");
                let sql = format!("SELECT CAST(id AS INT) FROM corpus.ns.{t} WHERE {on_ts}");
                match run(&lake.ctx, &sql).await {
                    Ok(b) if ids(&b) == expected => {}
                    Ok(b) => wrong.push(format!(
                        "{zone} {sql}: {:?}, expected {expected:?}",
                        ids(&b)
                    )),
                    Err(e) => wrong.push(format!("{zone} {sql}: error {e}")),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}\n{}", wrong.len(), wrong.join("\n"));
    // the filters select rows of these tables, not only none
    assert!(selecting > 100, "{selecting}");
}

/// A zone-less constant the session zone's clock shows twice is its earlier instant, as
/// java.time resolves it (plain DataFusion fails on it): New York's 2026-11-01 01:00 is
/// 05:00Z, the hour of the first 01:30 (05:30Z), not of the second (06:30Z); a skipped
/// 02:30 moves later by the gap, to 07:30Z, in the hour starting 07:00Z (03:00 EDT).
#[tokio::test]
async fn zone_less_constants_at_doubled_and_skipped_times_in_filters() {
    let lake = lake().await;
    create_copies(&lake, "", "TIMESTAMPTZ", 2, PARTITIONINGS).await;
    ok(
        &lake.ctx,
        "SET datafusion.execution.time_zone = 'America/New_York'",
    )
    .await;
    for (name, _) in PARTITIONINGS {
        for (filter, want) in [
            (
                "date_trunc('hour', tz) = TIMESTAMP '2026-11-01 01:00:00'",
                vec![4],
            ),
            ("tz = TIMESTAMP '2026-11-01 01:30:00'", vec![4]),
            (
                "date_trunc('hour', tz) = TIMESTAMP '2026-03-08 02:30:00'",
                vec![],
            ),
            (
                "date_trunc('hour', tz) = TIMESTAMP '2026-03-08 03:00:00'",
                vec![2],
            ),
        ] {
            assert_eq!(
                ids_of(
                    &lake,
                    &format!("SELECT id FROM ice.ns.{name} WHERE {filter}")
                )
                .await,
                want,
                "{name} {filter}"
            );
        }
    }
}
