//! `CALL system.add_files`: existing Parquet files (written by DataFusion's `COPY`, with no
//! Iceberg field ids, Hive-style partition directories) registered in an Iceberg table
//! without rewriting them; their rows read back through the name mapping the call sets,
//! their metrics prune, and PyIceberg and DuckDB read the same rows.

use datafusion::prelude::SessionContext;
use icefloe::catalog::TableIdent;
use icefloe::expr::{BinaryOp, Predicate, Reference};
use icefloe::scan::TableScan;
use icefloe::spec::Literal;

use crate::dml::{create, lake, ok, other_engines_agree, run, Lake};
use crate::maintenance::call;

/// Plain Parquet files of (id, k, s, d) under `dir/k=<k>/`, as Spark's or DataFusion's
/// partitioned writes leave them (the partition column only in the directory names).
pub(crate) async fn source_files(dir: &std::path::Path) {
    let plain = SessionContext::new();
    let copy = format!(
        "COPY (SELECT CAST(column1 AS BIGINT) AS id, CAST(column2 AS INT) AS k, column3 AS s, \
         column4 AS d FROM (VALUES (1, 0, 'a', 1.5), (2, 0, NULL, 2.5), (3, 1, 'c', NULL), \
         (4, 1, 'd', 4.5), (5, 2, 'e', 5.5))) TO '{}/' STORED AS PARQUET PARTITIONED BY (k)",
        dir.display()
    );
    plain
        .sql(&copy)
        .await
        .expect("copy")
        .collect()
        .await
        .expect("copy");
    // marker files Spark leaves are not data
    std::fs::write(dir.join("_SUCCESS"), b"").expect("marker");
}

/// Data files of `ns.<name>` planned for `column = value`.
async fn planned(lake: &Lake, name: &str, column: &str, value: i64) -> usize {
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let literal = match column {
        "k" => Literal::Int(value as i32),
        _ => Literal::Long(value),
    };
    let filter = Predicate::binary(BinaryOp::Eq, Reference::new(column), literal);
    let snapshot = table.metadata().current_snapshot().cloned();
    let plan = TableScan::new(table, snapshot)
        .with_filter(filter)
        .plan_files()
        .await
        .expect("plan");
    plan.metrics.data_files_planned
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_files_registers_parquet_files_without_field_ids() {
    let lake = lake().await;
    let src = lake.dir.path().join("source");
    source_files(&src).await;
    create(&lake, "t", "PARTITIONED BY (k)", "").await;
    let add = format!(
        "CALL ice.system.add_files(table => 'ns.t', source_table => '`parquet`.`{}`')",
        src.display()
    );
    let r = call(&lake, &add).await;
    assert_eq!(r["added_files_count"], 3);
    assert_eq!(r["changed_partition_count"], 3);
    let expected = "\
+----+---+---+-----+
| id | k | s | d   |
+----+---+---+-----+
| 1  | 0 | a | 1.5 |
| 2  | 0 |   | 2.5 |
| 3  | 1 | c |     |
| 4  | 1 | d | 4.5 |
| 5  | 2 | e | 5.5 |
+----+---+---+-----+";
    let all = "SELECT * FROM ice.ns.t ORDER BY id";
    assert_eq!(ok(&lake.ctx, all).await, expected);
    // the files' own metrics (through the name mapping) and partitions prune
    assert_eq!(planned(&lake, "t", "id", 4).await, 1);
    assert_eq!(planned(&lake, "t", "k", 2).await, 1);
    assert_eq!(
        ok(&lake.ctx, "SELECT id FROM ice.ns.t WHERE d > 4 ORDER BY id").await,
        "+----+\n| id |\n+----+\n| 4  |\n| 5  |\n+----+"
    );
    other_engines_agree(&lake, "t").await;

    // the same files again: refused, naming one, and the table unchanged
    let err = run(&lake.ctx, &add).await.expect_err("duplicates");
    assert!(
        err.contains("3 of the files to add are already in the table")
            && err.contains("k=0/")
            && err.contains("check_duplicate_files"),
        "{err}"
    );
    assert_eq!(ok(&lake.ctx, all).await, expected);
    // unless asked, and only the partition the filter names; `file://localhost/abs` is
    // the absolute path `/abs` (RFC 8089)
    let again = format!(
        "CALL ice.system.add_files('ns.t', '`parquet`.`file://localhost{}`', map('k', '2'), \
         false)",
        src.display()
    );
    let r = call(&lake, &again).await;
    assert_eq!(
        (r["added_files_count"], r["changed_partition_count"]),
        (1, 1)
    );
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT k, count(*) AS n FROM ice.ns.t GROUP BY k ORDER BY k"
        )
        .await,
        "+---+---+\n| k | n |\n+---+---+\n| 0 | 2 |\n| 1 | 2 |\n| 2 | 2 |\n+---+---+"
    );
    // the mapping was set once, from the schema
    assert!(ok(&lake.ctx, "SHOW TBLPROPERTIES ice.ns.t")
        .await
        .contains("schema.name-mapping.default"));

    // one file into an unpartitioned table: `k` is not in the file and reads null
    create(&lake, "u", "", "").await;
    let one = std::fs::read_dir(src.join("k=1"))
        .expect("dir")
        .next()
        .expect("file")
        .expect("entry")
        .path();
    let r = call(
        &lake,
        &format!(
            "CALL ice.system.add_files(table => 'ns.u', source_table => 'parquet.`{}`')",
            one.display()
        ),
    )
    .await;
    assert_eq!(r["added_files_count"], 1);
    assert_eq!(
        ok(&lake.ctx, "SELECT * FROM ice.ns.u ORDER BY id").await,
        "+----+---+---+-----+\n| id | k | s | d   |\n+----+---+---+-----+\n| 3  |   | c |     |\n\
         | 4  |   | d | 4.5 |\n+----+---+---+-----+"
    );
    other_engines_agree(&lake, "u").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_files_refuses_what_it_cannot_register_and_changes_nothing() {
    let lake = lake().await;
    let src = lake.dir.path().join("source");
    source_files(&src).await;
    create(&lake, "t", "PARTITIONED BY (k)", "").await;
    create(&lake, "b", "PARTITIONED BY (bucket(4, id))", "").await;
    create(&lake, "u", "", "").await;
    // a file whose `id` does not read as the table's bigint, and one with no table column
    let plain = SessionContext::new();
    let odd = lake.dir.path().join("odd");
    for (name, select) in [
        ("string_id", "SELECT 'x' AS id, 1.5 AS d"),
        ("other_columns", "SELECT 1 AS a, 'b' AS b"),
    ] {
        let copy = format!(
            "COPY ({select}) TO '{}/{name}/f.parquet' STORED AS PARQUET",
            odd.display()
        );
        plain
            .sql(&copy)
            .await
            .expect("copy")
            .collect()
            .await
            .expect("copy");
    }
    let not_parquet = lake.dir.path().join("notes.txt");
    std::fs::write(&not_parquet, b"hello").expect("file");
    let s = src.display();
    let cases = [
        (
            "CALL ice.system.add_files('ns.t', 'db.src')".to_string(),
            "only files named as '`parquet`.`/path`' can be added",
        ),
        (
            format!("CALL ice.system.add_files('ns.t', '`orc`.`{s}`')"),
            "add_files of orc files (only Parquet)",
        ),
        (
            format!("CALL ice.system.add_files('ns.b', '`parquet`.`{s}`')"),
            "only identity partitions",
        ),
        (
            format!("CALL ice.system.add_files('ns.t', '`parquet`.`{s}`', map('s', 'x'))"),
            "partition_filter column 's' is not a partition column",
        ),
        (
            format!("CALL ice.system.add_files('ns.u', '`parquet`.`{s}`', map('k', '1'))"),
            "partition_filter given for an unpartitioned table",
        ),
        // a value that is not one of the int column's matched nothing, silently
        (
            format!("CALL ice.system.add_files('ns.t', '`parquet`.`{s}`', map('K', 'abc'))"),
            "partition_filter value 'abc' for column 'k' of type int: 'abc' is not a int",
        ),
        (
            format!("CALL ice.system.add_files('ns.t', '`parquet`.`file://elsewhere{s}`')"),
            "names the host 'elsewhere'",
        ),
        (
            format!("CALL ice.system.add_files('ns.t', '`parquet`.`{s}/k=1`')"),
            "is not under a 'k=<value>' directory",
        ),
        (
            format!(
                "CALL ice.system.add_files('ns.u', '`parquet`.`{}/string_id`')",
                odd.display()
            ),
            "column 'id' (field id 1) is stored as Utf8",
        ),
        (
            format!(
                "CALL ice.system.add_files('ns.u', '`parquet`.`{}/other_columns`')",
                odd.display()
            ),
            "has none of the table's columns (its columns: a, b;",
        ),
        (
            format!(
                "CALL ice.system.add_files('ns.u', '`parquet`.`{}`')",
                not_parquet.display()
            ),
            "notes.txt' is not a readable Parquet file",
        ),
        (
            format!(
                "CALL ice.system.add_files('ns.u', '`parquet`.`{}/missing`')",
                lake.dir.path().display()
            ),
            "does not exist",
        ),
    ];
    for (q, expected) in cases {
        let err = run(&lake.ctx, &q).await.expect_err(&q);
        assert!(err.contains(expected), "{q}: {err}");
    }
    for t in ["t", "b", "u"] {
        let n = ok(
            &lake.ctx,
            &format!("SELECT count(*) AS n FROM ice.ns.\"{t}$snapshots\""),
        )
        .await;
        assert!(n.contains("| 0 |"), "{t}: {n}");
    }
}

/// `CALL system.register_table`: a second name for an existing table's metadata file, with
/// Spark's result row; a taken name or a file that is not table metadata registers nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_table_names_an_existing_metadata_file() {
    let lake = lake().await;
    create(&lake, "t", "", "").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.t VALUES (1, 1, 'a', 1.5), (2, 2, 'b', 2.5), (3, 3, 'c', 3.5)",
    )
    .await;
    let t = lake
        .catalog
        .load_table(&TableIdent::parse("ns.t"))
        .await
        .expect("load");
    let location = t.metadata_location().to_string();
    let snapshot = t.metadata().current_snapshot_id.expect("snapshot");
    let r = call(
        &lake,
        &format!(
            "CALL ice.system.register_table(table => 'ns.copy', metadata_file => '{location}')"
        ),
    )
    .await;
    assert_eq!(r["current_snapshot_id"], snapshot);
    assert_eq!(
        (r["total_records_count"], r["total_data_files_count"]),
        (3, 1)
    );
    assert_eq!(
        ok(&lake.ctx, "SELECT * FROM ice.ns.copy ORDER BY id").await,
        ok(&lake.ctx, "SELECT * FROM ice.ns.t ORDER BY id").await
    );
    other_engines_agree(&lake, "copy").await;
    // a table directory: the catalog row holds the metadata file it opens to (it held the
    // directory, which PyIceberg could not open; a tester's)
    call(
        &lake,
        &format!(
            "CALL ice.system.register_table('ns.dir_copy', '{}')",
            t.metadata().location
        ),
    )
    .await;
    let registered = lake
        .catalog
        .load_table(&TableIdent::parse("ns.dir_copy"))
        .await
        .expect("load");
    assert_eq!(registered.metadata_location(), location);
    let row: String = rusqlite::Connection::open(&lake.db)
        .expect("sqlite")
        .query_row(
            "SELECT metadata_location FROM iceberg_tables WHERE table_name = 'dir_copy'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    assert_eq!(row, location);
    other_engines_agree(&lake, "dir_copy").await;

    let not_metadata = lake.dir.path().join("x.metadata.json");
    std::fs::write(&not_metadata, b"{}").expect("file");
    for (q, expected) in [
        (
            format!("CALL ice.system.register_table('ns.t', '{location}')"),
            "already exists",
        ),
        (
            format!(
                "CALL ice.system.register_table('ns.bad', '{}')",
                not_metadata.display()
            ),
            "x.metadata.json",
        ),
        (
            "CALL ice.system.register_table('ns.bad')".to_string(),
            "'metadata_file' argument",
        ),
    ] {
        let err = run(&lake.ctx, &q).await.expect_err(&q);
        assert!(err.contains(expected), "{q}: {err}");
    }
    let tables = ok(&lake.ctx, "SHOW TABLES").await;
    assert!(!tables.contains("bad"), "{tables}");
}

/// A tester's D1: unsigned integers (`UINT_32`) have statistics in unsigned order; read as
/// signed they gave negative bounds, and `WHERE id > 2000000000` found no row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_files_of_unsigned_integers_keeps_every_row() {
    let lake = lake().await;
    let src = lake.dir.path().join("unsigned");
    let plain = SessionContext::new();
    let copy = format!(
        "COPY (SELECT arrow_cast(column1, 'UInt32') AS id FROM (VALUES (3000000000), \
         (4000000000))) TO '{}/u.parquet' STORED AS PARQUET",
        src.display()
    );
    plain
        .sql(&copy)
        .await
        .expect("copy")
        .collect()
        .await
        .expect("copy");
    create(&lake, "w", "", "").await;
    let r = call(
        &lake,
        &format!(
            "CALL ice.system.add_files('ns.w', '`parquet`.`{}`')",
            src.display()
        ),
    )
    .await;
    assert_eq!(r["added_files_count"], 1);
    assert_eq!(
        ok(&lake.ctx, "SELECT id FROM ice.ns.w WHERE id > 2000000000 ORDER BY id").await,
        "+------------+\n| id         |\n+------------+\n| 3000000000 |\n| 4000000000 |\n+------------+"
    );
}

/// Nanosecond Parquet times (DataFusion's `COPY` writes `TIMESTAMP(NANOS)` and
/// `TIME(NANOS)`) registered into microsecond `timestamp` and `time` columns: a bound with
/// a part finer than a microsecond is not written, since the rows read rounded and the
/// bound would not be one of them. The upper bound was rounded up: for 1.5 µs and 2.5 µs
/// (read as 1 µs and 2 µs) `max(ts)` and `max(tm)`, answered from it, read 3 µs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_files_of_nanosecond_times_records_only_bounds_that_are_values() {
    let lake = lake().await;
    let src = lake.dir.path().join("nanos");
    let plain = SessionContext::new();
    for (name, values) in [("a", "(1, 1500), (2, 2500)"), ("b", "(3, 4000), (4, 7000)")] {
        let copy = format!(
            "COPY (SELECT CAST(column1 AS INT) AS id, \
             arrow_cast(column2, 'Timestamp(Nanosecond, None)') AS ts, \
             arrow_cast(column2, 'Time64(Nanosecond)') AS tm FROM (VALUES {values})) \
             TO '{}/{name}.parquet' STORED AS PARQUET",
            src.display()
        );
        plain
            .sql(&copy)
            .await
            .expect("copy")
            .collect()
            .await
            .expect("copy");
    }
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.n (id INT, ts TIMESTAMP_NTZ, tm TIME)",
    )
    .await;
    let r = call(
        &lake,
        &format!(
            "CALL ice.system.add_files('ns.n', '`parquet`.`{}`')",
            src.display()
        ),
    )
    .await;
    assert_eq!(r["added_files_count"], 2);
    // a.parquet: no bounds for ts and tm; b.parquet: whole microseconds, bounds kept
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT readable_metrics['id']['lower_bound'] AS id, \
             readable_metrics['ts']['lower_bound'] AS ts_lower, \
             readable_metrics['ts']['upper_bound'] AS ts_upper, \
             readable_metrics['tm']['lower_bound'] AS tm_lower, \
             readable_metrics['tm']['upper_bound'] AS tm_upper \
             FROM ice.ns.\"n$files\" ORDER BY 1"
        )
        .await,
        "+----+----------------------------+----------------------------+-----------------+-----------------+\n\
         | id | ts_lower                   | ts_upper                   | tm_lower        | tm_upper        |\n\
         +----+----------------------------+----------------------------+-----------------+-----------------+\n\
         | 1  |                            |                            |                 |                 |\n\
         | 3  | 1970-01-01T00:00:00.000004 | 1970-01-01T00:00:00.000007 | 00:00:00.000004 | 00:00:00.000007 |\n\
         +----+----------------------------+----------------------------+-----------------+-----------------+"
    );
    ok(&lake.ctx, "DELETE FROM ice.ns.n WHERE id > 2").await;
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT min(ts) AS min_ts, max(ts) AS max_ts, min(tm) AS min_tm, max(tm) AS max_tm \
             FROM ice.ns.n"
        )
        .await,
        "+----------------------------+----------------------------+-----------------+-----------------+\n\
         | min_ts                     | max_ts                     | min_tm          | max_tm          |\n\
         +----------------------------+----------------------------+-----------------+-----------------+\n\
         | 1970-01-01T00:00:00.000001 | 1970-01-01T00:00:00.000002 | 00:00:00.000001 | 00:00:00.000002 |\n\
         +----------------------------+----------------------------+-----------------+-----------------+"
    );
}

/// The data files of `ns.<name>`'s current snapshot whose `_row_id` column (reserved
/// field id 2147483540) has a lower bound, i.e. stores row ids, and those that do not.
async fn files_by_stored_row_ids(lake: &Lake, name: &str) -> (Vec<String>, Vec<String>) {
    use datafusion::arrow::array::{Array, AsArray};
    let batches = run(
        &lake.ctx,
        &format!(
            "SELECT file_path, lower_bounds[2147483540] IS NOT NULL AS stored \
             FROM ice.ns.\"{name}$files\" WHERE content = 0"
        ),
    )
    .await
    .expect("files");
    let (mut stored, mut inherited) = (vec![], vec![]);
    for b in &batches {
        let (path, flag) = (b.column(0).as_string::<i32>(), b.column(1).as_boolean());
        for r in 0..b.num_rows() {
            let p = path.value(r).strip_prefix("file://").expect("file URL");
            if flag.is_valid(r) && flag.value(r) {
                stored.push(p.to_string());
            } else {
                inherited.push(p.to_string());
            }
        }
    }
    (stored, inherited)
}

/// A data file added to a table brings new rows, whose `_row_id` and
/// `_last_updated_sequence_number` are assigned on read (spec "Row Lineage": an added
/// row's are null). A v3 table's updated or compacted data file stores both values, and
/// every engine reads stored values as the rows' own: added to another v3 table, its row
/// read `_row_id` 1, the id of that table's second row too (and the sequence number of
/// the other table's history). Such a file is now refused, naming it and the column,
/// and nothing is committed; a file whose lineage columns hold nulls only (rows a
/// `MERGE` inserted) is added, its rows taking fresh ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_files_refuses_files_storing_row_lineage() {
    let lake = lake().await;
    let mor = ", 'format-version'='3', 'write.update.mode'='merge-on-read', \
               'write.merge.mode'='merge-on-read'";
    create(&lake, "src", "", mor).await;
    create(&lake, "dst", "", ", 'format-version'='3'").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.src VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0)",
    )
    .await;
    ok(&lake.ctx, "UPDATE ice.ns.src SET s = 'B' WHERE id = 2").await;
    ok(
        &lake.ctx,
        "MERGE INTO ice.ns.src t USING (SELECT CAST(7 AS BIGINT) AS id) s ON t.id = s.id \
         WHEN NOT MATCHED THEN INSERT (id, k, s, d) VALUES (s.id, 7, 'g', 7.0)",
    )
    .await;
    let (stored, inherited) = files_by_stored_row_ids(&lake, "src").await;
    assert_eq!(
        stored.len(),
        1,
        "the UPDATE's file stores row id 1: {stored:?}"
    );
    let merged = inherited
        .iter()
        .find(|p| {
            let meta = datafusion::parquet::file::reader::SerializedFileReader::new(
                std::fs::File::open(p).expect("open"),
            )
            .expect("parquet");
            use datafusion::parquet::file::reader::FileReader;
            let fields = meta.metadata().file_metadata().schema_descr().num_columns();
            fields > 4
        })
        .expect("the MERGE's file has the lineage columns, all null")
        .clone();

    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.dst VALUES (10, 1, 'x', 1.0), (11, 1, 'y', 2.0)",
    )
    .await;
    let before = ok(
        &lake.ctx,
        "SELECT count(*) AS n FROM ice.ns.\"dst$snapshots\"",
    )
    .await;
    let source = lake.dir.path().join("with_lineage");
    std::fs::create_dir_all(&source).expect("dir");
    std::fs::copy(&stored[0], source.join("updated.parquet")).expect("copy");
    let call = format!(
        "CALL ice.system.add_files('ns.dst', '`parquet`.`{}`')",
        source.display()
    );
    let err = run(&lake.ctx, &call).await.expect_err("refused");
    assert!(
        err.contains("updated.parquet")
            && err.contains("column '_row_id' (field id 2147483540)")
            && err.contains("must be null"),
        "{err}"
    );
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT count(*) AS n FROM ice.ns.\"dst$snapshots\""
        )
        .await,
        before,
        "nothing committed"
    );

    let nulls = lake.dir.path().join("null_lineage");
    std::fs::create_dir_all(&nulls).expect("dir");
    std::fs::copy(&merged, nulls.join("inserted.parquet")).expect("copy");
    ok(
        &lake.ctx,
        &format!(
            "CALL ice.system.add_files('ns.dst', '`parquet`.`{}`')",
            nulls.display()
        ),
    )
    .await;
    let rows = ok(
        &lake.ctx,
        "SELECT id, _row_id, _last_updated_sequence_number AS seq FROM ice.ns.dst ORDER BY id",
    )
    .await;
    assert_eq!(
        rows,
        "+----+---------+-----+\n| id | _row_id | seq |\n+----+---------+-----+\n\
         | 7  | 2       | 2   |\n| 10 | 0       | 1   |\n| 11 | 1       | 1   |\n\
         +----+---------+-----+"
    );
    other_engines_agree(&lake, "dst").await;
}

/// A tester's case: a table of files without field ids (added by `add_files`, read through
/// the name mapping), a column renamed, then a new column given the old name. Java's
/// `MappingUtil.update` moves the name to the new column, so the files' values read as the
/// new column and the renamed one reads null, while the files' metrics stay keyed by the
/// renamed column's id: `WHERE w IS NULL` pruned the file by them and dropped its rows.
/// The change that would move the name is refused, naming both columns; the renamed
/// column keeps its values, and a new column of another name is added.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_the_mapping_holds_for_a_renamed_column_is_not_given_to_another() {
    let lake = lake().await;
    let src = lake.dir.path().join("source");
    source_files(&src).await;
    create(&lake, "t", "PARTITIONED BY (k)", "").await;
    call(
        &lake,
        &format!(
            "CALL ice.system.add_files('ns.t', '`parquet`.`{}`')",
            src.display()
        ),
    )
    .await;
    ok(&lake.ctx, "ALTER TABLE ice.ns.t RENAME COLUMN s TO w").await;
    for alter in [
        "ALTER TABLE ice.ns.t ADD COLUMN s STRING",
        "ALTER TABLE ice.ns.t RENAME COLUMN d TO s",
    ] {
        let err = run(&lake.ctx, alter).await.expect_err(alter);
        assert!(
            err.contains("cannot take the name 's'")
                && err.contains("column 'w' (field id 3)")
                && err.contains("schema.name-mapping.default"),
            "{alter}: {err}"
        );
    }
    // nothing changed: the files' `s` values are the renamed column's, and filters on it
    // (pruned by the files' metrics) agree with them
    let rows = ok(&lake.ctx, "SELECT id, w FROM ice.ns.t ORDER BY id").await;
    assert_eq!(
        rows.trim(),
        "+----+---+\n| id | w |\n+----+---+\n| 1  | a |\n| 2  |   |\n| 3  | c |\n| 4  | d |\n\
         | 5  | e |\n+----+---+"
    );
    let nulls = ok(
        &lake.ctx,
        "SELECT count(*) AS n FROM ice.ns.t WHERE w IS NULL",
    )
    .await;
    assert!(nulls.contains("| 1 |"), "{nulls}");
    // a new column of another name is added, null in the files
    ok(&lake.ctx, "ALTER TABLE ice.ns.t ADD COLUMN s2 STRING").await;
    let rows = ok(
        &lake.ctx,
        "SELECT count(*) AS n FROM ice.ns.t WHERE s2 IS NULL AND w IS NOT NULL",
    )
    .await;
    assert!(rows.contains("| 4 |"), "{rows}");
}
