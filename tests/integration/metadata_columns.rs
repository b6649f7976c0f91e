//! Metadata columns (`_file`, `_pos`, `_spec_id`, `_partition`, `_deleted`, and on v3
//! tables `_row_id`, `_last_updated_sequence_number`): values on tables other engines
//! wrote, checked against the spec's rules with facts read independently (the `$files`
//! and `$entries` metadata tables, Parquet row counts), and hidden from `SELECT *`.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::array_value_to_string;
use datafusion::prelude::SessionContext;
use icefloe::IcebergTableProvider;

use crate::fixtures::testdata;

/// Rows of `sql` as strings.
async fn rows(ctx: &SessionContext, sql: &str) -> Vec<Vec<String>> {
    let df = icefloe::datafusion::sql::execute(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let batches: Vec<RecordBatch> = df.collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = vec![];
    for b in &batches {
        for r in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .map(|c| array_value_to_string(c, r).unwrap())
                    .collect(),
            );
        }
    }
    out
}

async fn column_names(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let df = icefloe::datafusion::sql::execute(ctx, sql).await.unwrap();
    df.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

async fn corpus(ctx: &SessionContext, name: &str, table: &str) {
    let provider = IcebergTableProvider::open(testdata(table).to_str().unwrap())
        .await
        .unwrap();
    ctx.register_table(name, Arc::new(provider)).unwrap();
}

/// What a data file says about one row: the table's `id` column at that position, and
/// `_row_id` / `_last_updated_sequence_number` as stored (null when not stored).
pub(crate) fn stored_row(location: &str, pos: usize) -> (i64, Option<i64>, Option<i64>) {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::{DataType, Int64Type};
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let path = location
        .strip_prefix("file://")
        .or_else(|| location.strip_prefix("file:"))
        .unwrap_or(location);
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    let batch = datafusion::arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    let long = |name: &str| -> Option<i64> {
        let c = batch.column_by_name(name)?;
        let c = cast(c, &DataType::Int64).unwrap();
        let c = c.as_primitive::<Int64Type>();
        c.is_valid(pos).then(|| c.value(pos))
    };
    (
        long("id").expect("id"),
        long("_row_id"),
        long("_last_updated_sequence_number"),
    )
}

/// Every live row of `table` (registered as `t` in `ctx`, opened from `location`):
/// `_pos` points at the row in its `_file`, and on v3 `_row_id` and
/// `_last_updated_sequence_number` are the stored values or, where null, the file's
/// `first_row_id` + `_pos` and its data sequence number (spec: "Row Lineage").
/// Returns the rows checked.
async fn check_rows_against_files(ctx: &SessionContext, provider: &IcebergTableProvider) -> usize {
    let v3 = provider.table().metadata().format_version as i32 >= 3;
    let plan = provider.table_scan().plan_files().await.unwrap();
    let files: std::collections::HashMap<String, _> = plan
        .tasks
        .iter()
        .map(|t| (t.data_file().file_path.clone(), t.clone()))
        .collect();
    let sql = if v3 {
        "SELECT id, _file, _pos, _row_id, _last_updated_sequence_number FROM t"
    } else {
        "SELECT id, _file, _pos FROM t"
    };
    let got = rows(ctx, sql).await;
    let mut ids = std::collections::HashSet::new();
    for r in &got {
        let task = files
            .get(&r[1])
            .unwrap_or_else(|| panic!("_file {} not planned", r[1]));
        let pos: usize = r[2].parse().unwrap();
        let (id, stored_row_id, stored_seq) = stored_row(&task.location, pos);
        assert_eq!(r[0], id.to_string(), "id at _pos {pos} of {}", r[1]);
        if v3 {
            let first = task.data_file().first_row_id.expect("v3 file first_row_id");
            let row_id = stored_row_id.unwrap_or(first + pos as i64);
            let seq = stored_seq.unwrap_or(task.entry.data_sequence_number);
            assert_eq!(r[3], row_id.to_string(), "_row_id of {r:?}");
            assert_eq!(
                r[4],
                seq.to_string(),
                "_last_updated_sequence_number of {r:?}"
            );
            assert!(ids.insert(row_id), "row id {row_id} twice");
        }
    }
    got.len()
}

/// Spark's v3 table: rows appended (row ids inherited from `first_row_id`), updated
/// and merged in merge-on-read mode (the update's file stores `_row_id`, the merge's
/// stores nulls), with deletion vectors; and Spark's v2 table with position deletes.
#[tokio::test]
async fn row_lineage_and_positions_follow_the_spec_on_spark_tables() {
    for (table, live, stored_ids) in [
        ("corpus/spark_v3_deletion_vectors", 50, 8),
        ("corpus/spark_v2_mor_position_deletes", 43, 0),
    ] {
        let ctx = SessionContext::new();
        let provider = IcebergTableProvider::open(testdata(table).to_str().unwrap())
            .await
            .unwrap();
        ctx.register_table("t", Arc::new(provider.clone())).unwrap();
        assert_eq!(
            check_rows_against_files(&ctx, &provider).await,
            live,
            "{table}"
        );
        if stored_ids > 0 {
            // the update's rows keep the ids Spark stored: their original ones
            let kept = rows(
                &ctx,
                "SELECT count(*) FROM t WHERE _row_id = id AND _last_updated_sequence_number = 5 \
                 AND _file LIKE '%00000-1005-%'",
            )
            .await;
            assert_eq!(kept, vec![vec![stored_ids.to_string()]], "{table}");
        }
    }
}

/// `SELECT *` shows the table's columns only; naming a metadata column adds it; a
/// wildcard over a derived table shows what the derived table selected.
#[tokio::test]
async fn metadata_columns_are_hidden_from_select_star() {
    let ctx = SessionContext::new();
    corpus(&ctx, "t", "corpus/spark_v3_deletion_vectors").await;
    let table = ["id", "grp", "v", "ts", "extra"];
    assert_eq!(column_names(&ctx, "SELECT * FROM t").await, table);
    assert_eq!(
        column_names(&ctx, "SELECT * FROM t WHERE _pos = 0").await,
        table
    );
    assert_eq!(
        column_names(&ctx, "SELECT *, _file FROM t").await,
        [&table[..], &["_file"]].concat()
    );
    assert_eq!(
        column_names(&ctx, "SELECT x.*, x._row_id FROM t AS x").await,
        [&table[..], &["_row_id"]].concat()
    );
    assert_eq!(
        column_names(
            &ctx,
            "SELECT * FROM (SELECT id, _spec_id, _deleted FROM t) s"
        )
        .await,
        ["id", "_spec_id", "_deleted"]
    );
    // the filter on a metadata column applies: one first row per data file
    assert_eq!(
        rows(&ctx, "SELECT count(*) FROM t WHERE _pos = 0").await,
        rows(&ctx, "SELECT count(DISTINCT _file) FROM t WHERE _pos = 0").await
    );
    assert_eq!(
        rows(&ctx, "SELECT DISTINCT _deleted FROM t").await,
        vec![vec!["false".to_string()]]
    );
    // a query that names no metadata column plans as before
    assert_eq!(
        rows(&ctx, "SELECT count(*) FROM t").await,
        vec![vec!["50".to_string()]]
    );
    // unqualified * over a join that reads metadata columns is refused, t.* is not
    corpus(&ctx, "u", "corpus/spark_v2_day_partitioned").await;
    let err =
        icefloe::datafusion::sql::execute(&ctx, "SELECT *, t._file FROM t JOIN u ON t.id = u.id")
            .await
            .expect_err("refused");
    assert!(err.to_string().contains("t.*, u.*"), "{err}");
    assert_eq!(
        column_names(&ctx, "SELECT t.*, t._pos FROM t JOIN u ON t.id = u.id").await,
        [&table[..], &["_pos"]].concat()
    );
    // writes through the view are refused
    let view = IcebergTableProvider::open(
        testdata("corpus/spark_v3_deletion_vectors")
            .to_str()
            .unwrap(),
    )
    .await
    .unwrap()
    .with_metadata_columns();
    use datafusion::datasource::TableProvider;
    let input = Arc::new(datafusion::physical_plan::empty::EmptyExec::new(
        view.schema(),
    ));
    let err = view
        .insert_into(
            &ctx.state(),
            input,
            datafusion::logical_expr::dml::InsertOp::Append,
        )
        .await
        .expect_err("insert refused");
    assert!(err.to_string().contains("read-only"), "{err}");
}

/// `_spec_id` and `_partition` are the file's, as the `files` metadata table lists them
/// (`_partition` in the unified partition type), with and without equality deletes.
#[tokio::test]
async fn spec_id_and_partition_are_the_files() {
    use icefloe::datafusion::IcebergNamesSchemaProvider;
    let ctx = SessionContext::new();
    let catalog = ctx.catalog("datafusion").unwrap();
    let public = catalog.schema("public").unwrap();
    catalog
        .register_schema("public", Arc::new(IcebergNamesSchemaProvider::new(public)))
        .unwrap();
    for table in [
        "corpus/spark_v2_day_partitioned",
        "corpus/spark_v2_equality_deletes_partitioned",
    ] {
        corpus(&ctx, "t", table).await;
        let mut got = rows(&ctx, "SELECT DISTINCT _file, _spec_id, _partition FROM t").await;
        let mut want = rows(
            &ctx,
            "SELECT file_path, spec_id, partition FROM \"t$data_files\" \
             WHERE file_path IN (SELECT _file FROM t)",
        )
        .await;
        got.sort();
        want.sort();
        assert!(!got.is_empty(), "{table}");
        assert_eq!(got, want, "{table}");
        ctx.deregister_table("t").unwrap();
    }
}

/// A v3 table icefloe writes (appends, then a merge-on-read `DELETE` writing a deletion
/// vector): the same rules hold, read by catalog name (`ice.ns.v3`, aliased by the
/// rewrite) and by a registered name alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_lineage_on_a_v3_table_icefloe_writes() {
    use icefloe::catalog::TableIdent;
    let lake = crate::dml::lake().await;
    crate::dml::create(
        &lake,
        "v3",
        "PARTITIONED BY (k)",
        ", 'format-version'='3', 'write.delete.mode'='merge-on-read'",
    )
    .await;
    for values in [
        "(1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0)",
        "(4, 1, 'd', 4.0), (5, 3, 'e', 5.0)",
    ] {
        crate::dml::ok(&lake.ctx, &format!("INSERT INTO ice.ns.v3 VALUES {values}")).await;
    }
    crate::dml::ok(&lake.ctx, "DELETE FROM ice.ns.v3 WHERE id = 2").await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.v3"))
        .await
        .expect("load");
    let provider = IcebergTableProvider::try_new(table).unwrap();
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(provider.clone())).unwrap();
    assert_eq!(check_rows_against_files(&ctx, &provider).await, 4);
    let sql = "SELECT id, _row_id, _last_updated_sequence_number, _spec_id FROM {} ORDER BY id";
    let by_catalog = rows(&lake.ctx, &sql.replace("{}", "ice.ns.v3")).await;
    assert_eq!(by_catalog, rows(&ctx, &sql.replace("{}", "t")).await);
    // the second append's rows carry the second snapshot's sequence number
    let seqs: Vec<&str> = by_catalog.iter().map(|r| r[2].as_str()).collect();
    assert_eq!(seqs, ["1", "1", "2", "2"]);
    assert_eq!(
        column_names(&lake.ctx, "SELECT * FROM ice.ns.v3 WHERE _row_id >= 0").await,
        ["id", "k", "s", "d"]
    );
}

/// Aggregates and groupings over `_pos` (and the columns computed from it) answer with the
/// values the rows show, with or without a filter, on tables with position deletes (v2)
/// and deletion vectors (v3). `_pos` used to carry Parquet's row-number extension type
/// in the plan but not in the view's schema, and DataFusion's aggregate refused the
/// difference ("Physical input schema should be the same …").
#[tokio::test]
async fn aggregates_over_positions_answer_as_the_rows_do() {
    for table in [
        "corpus/spark_v3_deletion_vectors",
        "corpus/spark_v2_mor_position_deletes",
    ] {
        let ctx = SessionContext::new();
        corpus(&ctx, "t", table).await;
        let listed = rows(&ctx, "SELECT _file, _pos FROM t").await;
        let max = listed
            .iter()
            .map(|r| r[1].parse::<i64>().unwrap())
            .max()
            .unwrap();
        let sum: i64 = listed.iter().map(|r| r[1].parse::<i64>().unwrap()).sum();
        let files = listed
            .iter()
            .map(|r| r[0].clone())
            .collect::<std::collections::BTreeSet<_>>();
        for filter in ["", "WHERE id IS NOT NULL"] {
            let got = rows(
                &ctx,
                &format!("SELECT max(_pos), sum(_pos), count(DISTINCT _file) FROM t {filter}"),
            )
            .await;
            assert_eq!(
                got,
                vec![vec![
                    max.to_string(),
                    sum.to_string(),
                    files.len().to_string()
                ]],
                "{table} {filter}"
            );
            let grouped = rows(
                &ctx,
                &format!("SELECT _pos, count(*) FROM t {filter} GROUP BY _pos ORDER BY _pos"),
            )
            .await;
            let total: i64 = grouped.iter().map(|r| r[1].parse::<i64>().unwrap()).sum();
            assert_eq!(total, listed.len() as i64, "{table} {filter}");
        }
        if table.contains("v3") {
            let got = rows(&ctx, "SELECT count(*) FROM t WHERE _row_id >= 0").await;
            let ids = rows(&ctx, "SELECT max(_row_id) >= max(_pos) FROM t").await;
            assert_eq!(got, vec![vec![listed.len().to_string()]]);
            assert_eq!(ids, vec![vec!["true".to_string()]]);
        }
    }
}

/// `EXPLAIN` and `EXPLAIN ANALYZE` of a query naming metadata columns plan the rewritten
/// query ("No field named _file" before): the plan reads the hidden columns, and the
/// analyzed run counts the rows the query returns.
#[tokio::test]
async fn explain_of_a_query_naming_metadata_columns() {
    let ctx = SessionContext::new();
    corpus(&ctx, "t", "corpus/spark_v2_day_partitioned").await;
    let count = rows(&ctx, "SELECT count(*) FROM t WHERE _pos >= 0").await;
    let text = |r: Vec<Vec<String>>| {
        r.into_iter()
            .map(|row| row.join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let plan = text(
        rows(
            &ctx,
            "EXPLAIN SELECT _file, _pos, id FROM t WHERE _pos >= 0",
        )
        .await,
    );
    assert!(plan.contains("physical_plan"), "{plan}");
    assert!(plan.contains("_pos"), "{plan}");
    let analyzed = text(
        rows(
            &ctx,
            "EXPLAIN ANALYZE SELECT count(*) FROM t WHERE _pos >= 0",
        )
        .await,
    );
    let rows_out = format!("output_rows={}", count[0][0]);
    assert!(analyzed.contains(&rows_out), "{rows_out}: {analyzed}");
}

/// `ice.ns.t` (partitioned by `k`) written in two appends, so its rows span files and
/// positions; and `ice.ns.u (p BIGINT, f STRING)`, empty.
async fn two_file_lake() -> crate::dml::Lake {
    let lake = crate::dml::lake().await;
    crate::dml::create(&lake, "t", "PARTITIONED BY (k)", "").await;
    for values in [
        "(1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0)",
        "(4, 1, 'd', 4.0), (5, 3, 'e', 5.0), (6, 3, 'f', 6.0)",
    ] {
        crate::dml::ok(&lake.ctx, &format!("INSERT INTO ice.ns.t VALUES {values}")).await;
    }
    crate::dml::ok(&lake.ctx, "CREATE TABLE ice.ns.u (p BIGINT, f STRING)").await;
    lake
}

/// Statements wrapping a query read metadata columns as the query does (each failed with
/// "No field named _file"): `DESCRIBE <query>` gives the query's schema; CTAS (into an
/// Iceberg table, typed as the columns are, and into a memory table), `INSERT … SELECT`
/// (also into the table it reads), `COPY (<query>)` and a `MERGE` whose source (a query
/// or a table) reads them write the rows the query gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_columns_in_statements_wrapping_a_query() {
    use icefloe::catalog::TableIdent;
    let lake = two_file_lake().await;
    let ctx = &lake.ctx;
    let query = "SELECT id, _pos, _file, _spec_id FROM ice.ns.t";
    let want = rows(ctx, &format!("{query} ORDER BY id")).await;
    assert_eq!(want.len(), 6);
    assert!(want.iter().any(|r| r[1] != "0"), "{want:?}");
    let files: std::collections::BTreeSet<&str> = want.iter().map(|r| r[2].as_str()).collect();
    assert!(files.len() > 1, "{want:?}");

    // DESCRIBE: the query's columns, as the query itself has them
    let schema = icefloe::datafusion::sql::execute(ctx, query)
        .await
        .expect("query")
        .schema()
        .as_arrow()
        .clone();
    let expected: Vec<Vec<String>> = schema
        .fields()
        .iter()
        .map(|f| {
            let nullable = if f.is_nullable() { "YES" } else { "NO" };
            vec![
                f.name().clone(),
                f.data_type().to_string(),
                nullable.to_string(),
            ]
        })
        .collect();
    let described = rows(ctx, &format!("DESCRIBE {query}")).await;
    assert_eq!(described, expected);
    let names: Vec<&str> = described.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["id", "_pos", "_file", "_spec_id"]);

    // CTAS into an Iceberg table: the rows, and the columns' Iceberg types
    crate::dml::ok(ctx, &format!("CREATE TABLE ice.ns.c AS {query}")).await;
    assert_eq!(rows(ctx, "SELECT * FROM ice.ns.c ORDER BY id").await, want);
    let created = lake
        .catalog
        .load_table(&TableIdent::parse("ns.c"))
        .await
        .expect("load");
    let types: Vec<String> = created
        .metadata()
        .current_schema()
        .columns()
        .iter()
        .map(|f| format!("{} {}", f.name, f.field_type))
        .collect();
    assert_eq!(
        types,
        ["id long", "_pos long", "_file string", "_spec_id int"]
    );
    // CTAS into DataFusion's memory catalog
    crate::dml::ok(ctx, &format!("CREATE TABLE m AS {query}")).await;
    assert_eq!(rows(ctx, "SELECT * FROM m ORDER BY id").await, want);

    // INSERT … SELECT
    crate::dml::ok(
        ctx,
        "INSERT INTO ice.ns.u SELECT _pos, _file FROM ice.ns.t WHERE id > 2",
    )
    .await;
    let inserted: Vec<Vec<String>> = want
        .iter()
        .filter(|r| r[0].parse::<i64>().unwrap() > 2)
        .map(|r| vec![r[1].clone(), r[2].clone()])
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        rows(ctx, "SELECT p, f FROM ice.ns.u ORDER BY p, f").await,
        inserted
    );

    // COPY (<query>) TO a Parquet file
    let out = lake.dir.path().join("copied.parquet");
    crate::dml::ok(
        ctx,
        &format!("COPY ({query}) TO '{}' STORED AS PARQUET", out.display()),
    )
    .await;
    ctx.register_parquet("copied", out.to_str().unwrap(), Default::default())
        .await
        .expect("register");
    assert_eq!(rows(ctx, "SELECT * FROM copied ORDER BY id").await, want);

    // MERGE reading metadata columns of its source: a query, then a table
    crate::dml::ok(ctx, "DELETE FROM ice.ns.u").await;
    crate::dml::ok(
        ctx,
        "MERGE INTO ice.ns.u USING (SELECT id, _pos, _file FROM ice.ns.t) s ON s.id = u.p \
         WHEN NOT MATCHED THEN INSERT VALUES (s.id, concat(s._file, '#', CAST(s._pos AS STRING)))",
    )
    .await;
    let merged: Vec<Vec<String>> = want
        .iter()
        .map(|r| vec![r[0].clone(), format!("{}#{}", r[2], r[1])])
        .collect();
    assert_eq!(
        rows(ctx, "SELECT p, f FROM ice.ns.u ORDER BY p").await,
        merged
    );
    crate::dml::ok(
        ctx,
        "MERGE INTO ice.ns.u USING ice.ns.t ON t.id = u.p WHEN MATCHED AND t._pos = 0 THEN DELETE",
    )
    .await;
    let kept: Vec<String> = want
        .iter()
        .filter(|r| r[1] != "0")
        .map(|r| r[0].clone())
        .collect();
    let left: Vec<String> = rows(ctx, "SELECT p FROM ice.ns.u ORDER BY p")
        .await
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(left, kept);

    // INSERT into the table it reads: the rows at position 0 of each file, as they were
    let firsts: Vec<Vec<String>> = want
        .iter()
        .filter(|r| r[1] == "0")
        .map(|r| {
            vec![
                (r[0].parse::<i64>().unwrap() + 10).to_string(),
                r[2].clone(),
            ]
        })
        .collect();
    crate::dml::ok(
        ctx,
        "INSERT INTO ice.ns.t SELECT id + 10, k, _file, d FROM ice.ns.t WHERE _pos = 0",
    )
    .await;
    assert_eq!(
        rows(ctx, "SELECT id, s FROM ice.ns.t WHERE id > 10 ORDER BY id").await,
        firsts
    );
}

/// A `MERGE` whose clauses icefloe resolves before DataFusion plans it (`UPDATE SET`,
/// `UPDATE SET *`, `INSERT *`) reads the metadata columns of its source query as one
/// whose clauses it leaves alone does (it failed: "metadata columns of a MERGE's target
/// table are not supported yet … _pos of ice.ns.u", naming the target for the source's
/// column; `UPDATE SET *` / `INSERT *` said the source "does not plan").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_columns_of_a_merge_source_with_resolved_clauses() {
    let lake = two_file_lake().await;
    let ctx = &lake.ctx;
    let source = rows(ctx, "SELECT id, _pos, _file FROM ice.ns.t ORDER BY id").await;
    assert!(source.iter().any(|r| r[1] == "1"), "{source:?}");
    // INSERT *: every target column from the source's column of its name
    crate::dml::ok(
        ctx,
        "MERGE INTO ice.ns.u USING (SELECT id AS p, _file AS f FROM ice.ns.t) s ON s.p = u.p \
         WHEN NOT MATCHED THEN INSERT *",
    )
    .await;
    let mut want: Vec<Vec<String>> = source
        .iter()
        .map(|r| vec![r[0].clone(), r[2].clone()])
        .collect();
    assert_eq!(
        rows(ctx, "SELECT p, f FROM ice.ns.u ORDER BY p").await,
        want
    );
    // UPDATE SET from a source's metadata column; a NOT MATCHED clause reading one
    crate::dml::ok(
        ctx,
        "MERGE INTO ice.ns.u USING (SELECT id, _pos FROM ice.ns.t) s ON s.id = u.p AND s._pos = 0 \
         WHEN MATCHED THEN UPDATE SET f = concat('at ', CAST(s._pos AS STRING)) \
         WHEN NOT MATCHED AND _pos = 1 THEN INSERT (p, f) VALUES (id + 100, 'one')",
    )
    .await;
    for (row, src) in want.iter_mut().zip(&source) {
        if src[1] == "0" {
            row[1] = "at 0".to_string();
        }
    }
    for src in source.iter().filter(|r| r[1] == "1") {
        let id: i64 = src[0].parse().expect("id");
        want.push(vec![(id + 100).to_string(), "one".to_string()]);
    }
    assert_eq!(
        rows(ctx, "SELECT p, f FROM ice.ns.u ORDER BY p").await,
        want
    );
    // UPDATE SET *: the source's columns, metadata ones among them
    crate::dml::ok(
        ctx,
        "MERGE INTO ice.ns.u USING (SELECT id AS p, concat(_file, '#', CAST(_pos AS STRING)) AS f \
         FROM ice.ns.t WHERE _pos = 1) s ON s.p = u.p WHEN MATCHED THEN UPDATE SET *",
    )
    .await;
    for (row, src) in want.iter_mut().zip(&source) {
        if src[1] == "1" {
            row[1] = format!("{}#1", src[2]);
        }
    }
    assert_eq!(
        rows(ctx, "SELECT p, f FROM ice.ns.u ORDER BY p").await,
        want
    );
}

/// Where a statement keeps its plan for later (`CREATE VIEW`, `PREPARE`) or names a
/// metadata column of a `MERGE`'s target unqualified, a
/// metadata column is refused naming the feature, the column and the table (it was
/// "Schema error: No field named _file"), and nothing changes; the same statements
/// without metadata columns still run, and a metadata column the table does not have
/// keeps DataFusion's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_columns_where_they_are_not_supported_are_refused() {
    let lake = two_file_lake().await;
    let ctx = &lake.ctx;
    crate::dml::ok(ctx, "INSERT INTO ice.ns.u VALUES (1, 'x')").await;
    let before = rows(ctx, "SELECT * FROM ice.ns.t ORDER BY id").await;
    for (sql, feature) in [
        (
            "CREATE VIEW v AS SELECT _file FROM ice.ns.t",
            "metadata columns in CREATE VIEW are not supported: _file of ice.ns.t (DataFusion \
             keeps a view as the plan made by CREATE VIEW",
        ),
        (
            "PREPARE q AS SELECT id FROM ice.ns.t WHERE _pos = $1",
            "metadata columns in PREPARE are not supported: _pos of ice.ns.t (DataFusion keeps \
             a prepared statement as the plan made by PREPARE",
        ),
        (
            "MERGE INTO ice.ns.t USING (SELECT p FROM ice.ns.u) u ON t.id = u.p WHEN MATCHED \
             AND _pos = 0 THEN DELETE",
            "unqualified metadata columns of a MERGE's target table are not supported (an \
             unqualified one is the source's): _pos of ice.ns.t; qualify it",
        ),
    ] {
        let err = icefloe::datafusion::sql::execute(ctx, sql)
            .await
            .expect_err(sql);
        assert_eq!(err.kind(), icefloe::ErrorKind::Unsupported, "{sql}: {err}");
        assert!(
            err.to_string()
                .starts_with(&format!("not implemented: {feature}")),
            "{sql}: {err}"
        );
    }
    assert_eq!(
        rows(ctx, "SELECT * FROM ice.ns.t ORDER BY id").await,
        before
    );
    // without metadata columns they run
    crate::dml::ok(ctx, "CREATE VIEW v AS SELECT id FROM ice.ns.t").await;
    assert_eq!(rows(ctx, "SELECT count(*) FROM v").await, vec![vec!["6"]]);
    crate::dml::ok(ctx, "PREPARE q AS SELECT s FROM ice.ns.t WHERE id = $1").await;
    assert_eq!(rows(ctx, "EXECUTE q(2)").await, vec![vec!["b"]]);
    // a v2 table has no _row_id: DataFusion's error stands
    for sql in [
        "SELECT _row_id FROM ice.ns.t",
        "DELETE FROM ice.ns.t WHERE _row_id = 0",
    ] {
        let err = icefloe::datafusion::sql::execute(ctx, sql)
            .await
            .expect_err(sql);
        assert_ne!(err.kind(), icefloe::ErrorKind::Unsupported, "{sql}: {err}");
        assert!(
            err.to_string().contains("No field named _row_id"),
            "{sql}: {err}"
        );
    }
}

/// `EXPLAIN` of statements reading metadata columns names the table as the statement
/// does (`ice.ns.t`), as the plan of a query without them does; it named the private
/// view `__icefloe_metadata_columns.views.t0`, in its scans and every column.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_names_the_table_as_the_statement_does() {
    let lake = two_file_lake().await;
    let ctx = &lake.ctx;
    let text = |r: Vec<Vec<String>>| {
        r.into_iter()
            .map(|row| row.join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let plain = text(rows(ctx, "EXPLAIN SELECT id FROM ice.ns.t WHERE k = 1").await);
    assert!(plain.contains("TableScan: ice.ns.t"), "{plain}");
    for sql in [
        "EXPLAIN SELECT id, _pos FROM ice.ns.t WHERE _partition.k = 1",
        "EXPLAIN SELECT x.id, x._file FROM ice.ns.t AS x WHERE x.k = 1",
        "EXPLAIN VERBOSE SELECT id, _file FROM ice.ns.t WHERE k = 1",
        "EXPLAIN INSERT INTO ice.ns.u SELECT _pos, _file FROM ice.ns.t",
        "EXPLAIN SELECT a._pos FROM ice.ns.t a JOIN ice.ns.t b ON a.id = b.id",
    ] {
        let plan = text(rows(ctx, sql).await);
        assert!(plan.contains("TableScan: ice.ns.t"), "{sql}: {plan}");
        assert!(
            !plan.contains("__icefloe_metadata_columns"),
            "{sql}: {plan}"
        );
        let logical: String = plan
            .lines()
            .take_while(|l| !l.contains("physical_plan"))
            .collect();
        assert!(!logical.contains("__icefloe"), "{sql}: {logical}");
        if sql.contains("VERBOSE") {
            let initial = plan
                .lines()
                .skip_while(|l| !l.starts_with("initial_logical_plan"))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n");
            assert!(initial.contains("TableScan: ice.ns.t"), "{initial}");
        }
    }
}

/// The CLI's `--explain-pruning` names the table of a scan reading metadata columns as
/// the query does (`ns.t`), as for any other scan.
#[test]
fn cli_pruning_report_names_the_table() {
    use crate::cli::{assert_success, run, stderr};
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = format!("sqlite:{}", dir.path().join("cat.db").display());
    let out = run(&[
        "--catalog",
        &catalog,
        "--create-catalog",
        "-c",
        "CREATE NAMESPACE ns; CREATE TABLE ns.t (id INT, k STRING) PARTITIONED BY (k); \
         INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')",
    ]);
    assert_success(&out);
    for sql in [
        "EXPLAIN SELECT id, _file FROM ns.t WHERE k = 'a'",
        "EXPLAIN SELECT id FROM ns.t WHERE k = 'a'",
    ] {
        let out = run(&["--catalog", &catalog, "--explain-pruning", "-c", sql]);
        assert_success(&out);
        let report: Vec<String> = stderr(&out)
            .lines()
            .filter(|l| l.starts_with("pruning:"))
            .map(str::to_string)
            .collect();
        assert_eq!(report.len(), 1, "{sql}: {report:?}");
        assert!(
            report[0].starts_with("pruning: ns.t: "),
            "{sql}: {report:?}"
        );
    }
}

/// `iceberg_data_files_planned` of the scan in `EXPLAIN ANALYZE sql`, 0 where the plan
/// reads no file (an `EmptyExec` in place of the scan).
pub(crate) async fn files_planned(ctx: &SessionContext, sql: &str) -> u64 {
    let text = rows(ctx, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .concat()
        .concat();
    let name = "iceberg_data_files_planned=";
    let Some(at) = text.find(name) else {
        assert!(
            text.contains("EmptyExec") && !text.contains("DataSourceExec"),
            "no {name} in {text}"
        );
        return 0;
    };
    text[at + name.len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("{name} in {text}"))
}

/// Filters on fields of `_partition` prune data files as Spark's do, by each file's
/// partition tuple in the unified type: a file written under a spec without the field
/// has NULL there (its rows do not match `_partition.k = 1`, and it is not planned). The
/// rows are those of the filter; before, every file was planned. A filter that also
/// names a table column under `OR` prunes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_field_filters_prune_files() {
    let lake = two_file_lake().await;
    let ctx = &lake.ctx;
    // spec 0 by k: k=1 (ids 1, 2), k=2 (3), k=1 (4), k=3 (5, 6); spec 1 without k: 7, 8
    crate::dml::ok(ctx, "ALTER TABLE ice.ns.t DROP PARTITION FIELD k").await;
    crate::dml::ok(
        ctx,
        "INSERT INTO ice.ns.t VALUES (7, 1, 'g', 7.0), (8, 2, 'h', 8.0)",
    )
    .await;
    let ids = |rows: Vec<Vec<String>>| -> Vec<String> {
        rows.into_iter().map(|r| r[0].clone()).collect()
    };
    for (filter, want, planned) in [
        ("_partition.k = 1", vec!["1", "2", "4"], 2),
        ("_partition.k IN (2, 3)", vec!["3", "5", "6"], 2),
        ("_partition.k IS NULL", vec!["7", "8"], 1),
        ("_partition.k > 1 AND id > 0", vec!["3", "5", "6"], 2),
        ("NOT (_partition.k <> 3)", vec!["5", "6"], 1),
        ("_partition.k = 1 OR id = 8", vec!["1", "2", "4", "8"], 5),
        ("_partition.k = 9", vec![], 0),
    ] {
        let sql = format!("SELECT id FROM ice.ns.t WHERE {filter} ORDER BY id");
        assert_eq!(ids(rows(ctx, &sql).await), want, "{sql}");
        assert_eq!(files_planned(ctx, &sql).await, planned, "{sql}");
    }
}

/// On Spark's partitioned corpus tables (day of a timestamp, identity of several types,
/// with equality deletes), a filter on each field of `_partition` equal to each of its
/// values keeps as many rows as `GROUP BY` counts for that value (no file of it pruned),
/// and plans fewer files than the unfiltered scan.
#[tokio::test]
async fn partition_field_filters_keep_the_rows_of_spark_tables() {
    use datafusion::arrow::datatypes::DataType;
    use icefloe::datafusion::IcebergNamesSchemaProvider;
    let ctx = SessionContext::new();
    let catalog = ctx.catalog("datafusion").unwrap();
    let public = catalog.schema("public").unwrap();
    catalog
        .register_schema("public", Arc::new(IcebergNamesSchemaProvider::new(public)))
        .unwrap();
    let (mut checked, mut pruned) = (0, 0);
    for table in [
        "corpus/spark_v2_day_partitioned",
        "corpus/spark_v2_equality_deletes_partitioned",
        "corpus/spark_v1_types_identity",
    ] {
        corpus(&ctx, "t", table).await;
        let all = files_planned(&ctx, "SELECT _file FROM t").await;
        let df = icefloe::datafusion::sql::execute(&ctx, "SELECT _partition FROM t")
            .await
            .unwrap();
        let DataType::Struct(fields) = df.schema().field(0).data_type().clone() else {
            panic!("{table}: _partition is not a struct")
        };
        for field in fields.iter() {
            let ty = field.data_type();
            if !matches!(
                ty,
                DataType::Int32 | DataType::Int64 | DataType::Date32 | DataType::Utf8
            ) {
                continue;
            }
            let f = field.name();
            let groups = rows(
                &ctx,
                &format!(
                    "SELECT CAST(_partition.{f} AS VARCHAR), count(*) FROM t \
                     WHERE _partition.{f} IS NOT NULL GROUP BY 1"
                ),
            )
            .await;
            assert!(!groups.is_empty(), "{table}: {f}");
            for group in groups {
                let (value, count) = (&group[0], &group[1]);
                let sql = format!(
                    "SELECT count(*) FROM t WHERE _partition.{f} = arrow_cast('{value}', '{ty}')"
                );
                assert_eq!(&rows(&ctx, &sql).await[0][0], count, "{table}: {sql}");
                let planned = files_planned(
                    &ctx,
                    &format!(
                        "SELECT _file FROM t WHERE _partition.{f} = arrow_cast('{value}', '{ty}')"
                    ),
                )
                .await;
                assert!(
                    planned >= 1 && planned <= all,
                    "{table}: {sql}: {planned} of {all}"
                );
                pruned += usize::from(planned < all);
                checked += 1;
            }
        }
        ctx.deregister_table("t").unwrap();
    }
    // every table's values are spread over files of other values
    assert!(checked >= 3 && pruned == checked, "{pruned} of {checked}");
}

/// `position_deletes` (the metadata table) of Spark's tables lists exactly the positions
/// no live row has: for each live data file, its positions `0..record_count` minus the
/// live rows' `_pos`, each once; and, as Spark's reads the delete files as they are, the
/// positions a live delete file still holds for a data file no longer live (Spark's v2
/// table: 2). A deletion vector's rows carry its blob's offset and length; a v2 table has
/// no such columns (Java's `PositionDeletesTable` adds them from v3 on).
#[tokio::test]
async fn position_deletes_table_lists_the_positions_no_live_row_has() {
    use icefloe::datafusion::metadata_tables::{metadata_table_provider, MetadataTableKind};
    use std::collections::BTreeSet;
    for (table, deleted, dangling, delete_files, dv) in [
        ("corpus/spark_v3_deletion_vectors", 45, 0, 3, true),
        // the fourth delete file holds the positions of the removed data file only
        ("corpus/spark_v2_mor_position_deletes", 26, 2, 4, false),
    ] {
        let ctx = SessionContext::new();
        let provider = IcebergTableProvider::open(testdata(table).to_str().unwrap())
            .await
            .unwrap();
        ctx.register_table("t", Arc::new(provider.clone())).unwrap();
        let pd =
            metadata_table_provider(provider.table(), MetadataTableKind::PositionDeletes, None)
                .await
                .unwrap();
        ctx.register_table("pd", pd).unwrap();
        let listed: Vec<(String, u64)> = rows(&ctx, "SELECT file_path, pos FROM pd")
            .await
            .into_iter()
            .map(|r| (r[0].clone(), r[1].parse().unwrap()))
            .collect();
        let listed_set: BTreeSet<(String, u64)> = listed.iter().cloned().collect();
        assert_eq!(listed.len(), listed_set.len(), "{table}: a position twice");
        let live: BTreeSet<(String, u64)> = rows(&ctx, "SELECT _file, _pos FROM t")
            .await
            .into_iter()
            .map(|r| (r[0].clone(), r[1].parse().unwrap()))
            .collect();
        let plan = provider.table_scan().plan_files().await.unwrap();
        let mut missing = BTreeSet::new();
        for task in &plan.tasks {
            let file = &task.data_file().file_path;
            for pos in 0..task.data_file().record_count as u64 {
                if !live.contains(&(file.clone(), pos)) {
                    missing.insert((file.clone(), pos));
                }
            }
        }
        let live_files: BTreeSet<&String> = plan
            .tasks
            .iter()
            .map(|t| &t.data_file().file_path)
            .collect();
        let (of_live, of_removed): (BTreeSet<_>, BTreeSet<_>) = listed_set
            .into_iter()
            .partition(|(file, _)| live_files.contains(file));
        assert_eq!(of_live, missing, "{table}");
        assert_eq!(of_live.len(), deleted, "{table}");
        assert_eq!(of_removed.len(), dangling, "{table}: {of_removed:?}");
        // the deletion vector columns are there on v3 tables only (Java's schema)
        let blob_columns = if dv {
            "count(content_offset), count(content_size_in_bytes)"
        } else {
            "0 AS o, 0 AS s"
        };
        let files = rows(
            &ctx,
            &format!(
                "SELECT count(DISTINCT delete_file_path), {blob_columns}, \
                 count(DISTINCT spec_id) FROM pd"
            ),
        )
        .await;
        let with_blob = if dv { deleted + dangling } else { 0 };
        assert_eq!(
            files,
            vec![vec![
                delete_files.to_string(),
                with_blob.to_string(),
                with_blob.to_string(),
                "1".to_string()
            ]],
            "{table}"
        );
        let has_offset = ctx
            .table("pd")
            .await
            .unwrap()
            .schema()
            .has_column_with_unqualified_name("content_offset");
        assert_eq!(has_offset, dv, "{table}: content_offset column");
    }
}
