//! Answers from metadata (issue 18, item 5): an unfiltered `COUNT(*)` from the manifest
//! list alone, `MIN`/`MAX` from exact manifest bounds, and both under a filter on
//! identity partition columns, without opening a data file; each checked against a
//! full scan (DataFusion without its `AggregateStatistics` rule) over every corpus
//! table, including those with deletes, where no shortcut may be taken.

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::common::ScalarValue;
use datafusion::execution::SessionStateBuilder;
use datafusion::physical_plan::displayable;
use datafusion::prelude::{SessionConfig, SessionContext};
use icefloe::spec::ManifestContent;
use icefloe::IcebergTableProvider;

use crate::catalog::{corpus_tables, metadata_file};
use crate::fixtures::{copy_table, files_with_suffix};

/// A context like DataFusion's default one, without the rule that answers aggregates
/// from statistics (`aggregate_statistics`): every query reads the data files.
fn full_scan_context() -> SessionContext {
    let defaults = SessionStateBuilder::new().with_default_features().build();
    let rules = defaults
        .physical_optimizers()
        .iter()
        .filter(|r| r.name() != "aggregate_statistics")
        .cloned()
        .collect();
    let state = SessionStateBuilder::new()
        .with_config(SessionConfig::new().with_target_partitions(2))
        .with_default_features()
        .with_physical_optimizer_rules(rules)
        .build();
    SessionContext::new_with_state(state)
}

fn context() -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2))
}

/// The physical plan of `sql`, as `EXPLAIN` prints it.
async fn plan_text(ctx: &SessionContext, sql: &str) -> String {
    let plan = ctx
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .create_physical_plan()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let text = displayable(plan.as_ref()).indent(true).to_string();
    text
}

/// Whether a plan reads Parquet data files.
fn reads_data_files(plan: &str) -> bool {
    plan.contains("file_type=parquet")
}

/// The single row of `sql` as scalars, or the error text.
async fn row(ctx: &SessionContext, sql: &str) -> Result<Vec<ScalarValue>, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let batches: Vec<RecordBatch> = df.collect().await.map_err(|e| e.to_string())?;
    let batch = batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .ok_or_else(|| format!("{sql}: no row"))?;
    (0..batch.num_columns())
        .map(|c| ScalarValue::try_from_array(batch.column(c), 0).map_err(|e| e.to_string()))
        .collect()
}

async fn provider(location: &str) -> IcebergTableProvider {
    IcebergTableProvider::open(location)
        .await
        .unwrap_or_else(|e| panic!("{location}: {e}"))
}

/// Whether the current snapshot of the table has a delete manifest with live files.
async fn has_live_delete_manifests(p: &IcebergTableProvider) -> bool {
    p.table_scan()
        .manifest_list()
        .await
        .expect("manifest list")
        .iter()
        .any(|m| m.content == ManifestContent::Deletes && m.has_live_files())
}

#[tokio::test]
async fn count_star_is_read_from_the_manifest_list_alone() {
    let dir = copy_table("corpus/spark_v1_types_identity");
    let location = dir.path().to_str().expect("utf-8").to_string();
    // the manifests and data files are gone: only the metadata and manifest list remain
    let mut removed = files_with_suffix(&dir.path().join("data"), ".parquet");
    removed.extend(files_with_suffix(&dir.path().join("metadata"), "-m0.avro"));
    assert!(removed.len() > 8, "{removed:?}");
    for f in &removed {
        std::fs::remove_file(f).expect("remove");
    }
    let p = provider(&location).await;
    let ctx = context();
    ctx.register_table("t", Arc::new(p.clone()))
        .expect("register");
    let sql = "SELECT count(*) FROM t";
    assert_eq!(row(&ctx, sql).await, Ok(vec![ScalarValue::Int64(Some(30))]));
    let plan = plan_text(&ctx, sql).await;
    assert!(
        !reads_data_files(&plan) && plan.contains("PlaceholderRowExec"),
        "{plan}"
    );
    let m = p.last_scan_metrics().expect("scanned");
    assert_eq!((m.manifests_total, m.manifests_scanned), (3, 0), "{m:?}");
    assert_eq!(m.data_files_planned, 0);
    // run rather than answered by the optimizer: 30 rows without columns
    assert_eq!(
        row(&ctx, "SELECT sum(1) FROM t").await,
        Ok(vec![ScalarValue::Int64(Some(30))])
    );
    let n: usize = ctx
        .sql("SELECT 1 FROM t LIMIT 7")
        .await
        .expect("sql")
        .collect()
        .await
        .expect("run")
        .iter()
        .map(|b| b.num_rows())
        .sum();
    assert_eq!(n, 7);
}

#[tokio::test]
async fn min_max_and_partition_filtered_counts_open_no_data_file() {
    let table = "corpus/spark_v1_types_identity";
    let original = crate::fixtures::testdata(table);
    let scan = full_scan_context();
    scan.register_table(
        "t",
        Arc::new(provider(original.to_str().expect("utf-8")).await),
    )
    .expect("register");
    // the same table with its data files removed
    let dir = copy_table(table);
    for f in files_with_suffix(&dir.path().join("data"), ".parquet") {
        std::fs::remove_file(f).expect("remove");
    }
    let ctx = context();
    ctx.register_table(
        "t",
        Arc::new(provider(dir.path().to_str().expect("utf-8")).await),
    )
    .expect("register");
    for sql in [
        "SELECT min(id), max(id) FROM t",
        "SELECT count(*) FROM t WHERE cat = 'a'",
        "SELECT count(*), min(id), max(i) FROM t WHERE cat IN ('b', 'c')",
        "SELECT min(l), max(l), min(dt), max(ts), min(dec_big), max(b), min(ts_ntz) \
         FROM t WHERE cat IN ('a', 'b', 'c')",
        "SELECT count(*), min(id) FROM t WHERE cat IS NULL",
        "SELECT min(cat), max(cat), count(*) FROM t WHERE cat IS NOT NULL",
    ] {
        let expected = row(&scan, sql).await.expect("full scan");
        assert_eq!(row(&ctx, sql).await, Ok(expected), "{sql}");
        let plan = plan_text(&ctx, sql).await;
        assert!(!reads_data_files(&plan), "{sql}:\n{plan}");
    }
    // `s` is a string under the default metrics mode truncate(16): its bounds may be
    // cut; `d` holds NaN, which its bounds leave out; in the NULL partition one file
    // has only NULLs in `l`, so no bounds: not every file's bounds are known. MIN/MAX
    // read the files then (which are gone).
    for sql in [
        "SELECT max(s) FROM t",
        "SELECT max(d) FROM t",
        "SELECT max(l) FROM t",
    ] {
        let err = row(&ctx, sql).await.unwrap_err();
        assert!(err.contains(".parquet"), "{sql}: {err}");
    }
}

/// For every corpus table and every top-level column: `count(*)`, `min`, `max` with
/// the statistics shortcuts equal a full scan. Tables with live deletes must not be
/// answered from metadata at all.
#[tokio::test]
async fn metadata_answers_equal_a_full_scan_over_the_corpus() {
    let mut answered = 0;
    let mut with_deletes = 0;
    for dir in corpus_tables() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let location = metadata_file(Path::new(&dir));
        let p = provider(&location).await;
        let deletes = has_live_delete_manifests(&p).await;
        let ctx = context();
        ctx.register_table("t", Arc::new(p.clone()))
            .expect("register");
        let scan = full_scan_context();
        scan.register_table("t", Arc::new(provider(&location).await))
            .expect("register");

        let count = "SELECT count(*) FROM t";
        assert_eq!(
            row(&ctx, count).await,
            row(&scan, count).await,
            "{name}: {count}"
        );
        let plan = plan_text(&ctx, count).await;
        if deletes {
            with_deletes += 1;
            assert!(reads_data_files(&plan), "{name}: deletes\n{plan}");
        } else if p.snapshot().is_some() {
            assert!(!reads_data_files(&plan), "{name}\n{plan}");
            answered += 1;
        }
        for field in p.iceberg_schema().columns() {
            if field.field_type.as_primitive().is_none() {
                continue;
            }
            let sql = format!(
                "SELECT min(\"{0}\"), max(\"{0}\"), count(\"{0}\") FROM t",
                field.name
            );
            let expected = row(&scan, &sql).await;
            let got = row(&ctx, &sql).await;
            // NaN and -0.0 are told apart (ScalarValue compares floats bit for bit)
            assert_eq!(got, expected, "{name}: {sql}");
            if deletes && expected.is_ok() {
                let plan = plan_text(&ctx, &sql).await;
                assert!(reads_data_files(&plan), "{name}: {sql}\n{plan}");
            }
        }
    }
    // the shared corpus has more tables without deletes than the few in testdata/corpus
    let shared = crate::catalog::corpus_dir().ends_with("shared/corpus");
    let least_answered = if shared { 5 } else { 4 };
    assert!(
        answered >= least_answered && with_deletes >= 3,
        "{answered} {with_deletes}"
    );
}
