//! Parquet files other writers made (DataFusion's `COPY`, pyarrow, DuckDB), registered
//! with `CALL system.add_files` and read through the name mapping the call sets: their
//! rows, filtered rows (the files' own metrics prune) and what PyIceberg and DuckDB read
//! of the resulting table.

use datafusion::parquet::file::statistics::Statistics;
use datafusion::prelude::SessionContext;

use crate::dml::{lake, ok, Lake};
use crate::interop::{python, run_script};
use crate::maintenance::call;

/// Runs a DataFusion `COPY` (no Iceberg field ids in what it writes).
async fn copy(sql: &str) {
    let plain = SessionContext::new();
    plain
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// `CALL system.add_files` of `dir` into `ns.<table>`: the number of files added.
async fn add(lake: &Lake, table: &str, dir: &std::path::Path) -> i64 {
    let r = call(
        lake,
        &format!(
            "CALL ice.system.add_files('ns.{table}', '`parquet`.`{}`')",
            dir.display()
        ),
    )
    .await;
    r["added_files_count"]
}

/// `TIMESTAMP(NANOS)` values before 1970 with a part finer than a microsecond, in
/// microsecond `timestamp` / `timestamptz` columns, struct fields, list elements and map
/// values: they read floored (-1500 ns is -2 µs, as Java's `DateTimeUtil.nanosToMicros`
/// and icefloe's own writes give), not rounded toward zero (-1 µs), and filters select
/// the floored values (the rows a filter keeps are those whose read value matches it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nanosecond_times_before_1970_read_floored_at_every_depth() {
    let lake = lake().await;
    let src = lake.dir.path().join("nanos");
    let ns = "'Timestamp(Nanosecond, None)'";
    let nsz = "'Timestamp(Nanosecond, Some(\"UTC\"))'";
    copy(&format!(
        "COPY (SELECT CAST(column1 AS INT) AS id, arrow_cast(column2, {ns}) AS ts, \
         arrow_cast(column2, {nsz}) AS tz, named_struct('t', arrow_cast(column2, {ns})) AS s, \
         make_array(arrow_cast(column2, {ns})) AS l, \
         map(make_array(CAST(column1 AS INT)), make_array(arrow_cast(column2, {ns}))) AS m \
         FROM (VALUES (1, -1500), (2, 1500), (3, -1000), (4, -2000000001), (5, -999))) \
         TO '{}/a.parquet' STORED AS PARQUET",
        src.display()
    ))
    .await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.n (id INT, ts TIMESTAMP, tz TIMESTAMPTZ, s STRUCT<t: TIMESTAMP>, \
         l ARRAY<TIMESTAMP>, m MAP<INT, TIMESTAMP>)",
    )
    .await;
    assert_eq!(add(&lake, "n", &src).await, 1);
    let micros = "SELECT id, CAST(ts AS BIGINT) AS ts, CAST(tz AS BIGINT) AS tz, \
                  CAST(s['t'] AS BIGINT) AS st, CAST(l[1] AS BIGINT) AS l1, \
                  CAST(map_values(m)[1] AS BIGINT) AS mv FROM ice.ns.n";
    let expected = "\
+----+----------+----------+----------+----------+----------+
| id | ts       | tz       | st       | l1       | mv       |
+----+----------+----------+----------+----------+----------+
| 1  | -2       | -2       | -2       | -2       | -2       |
| 2  | 1        | 1        | 1        | 1        | 1        |
| 3  | -1       | -1       | -1       | -1       | -1       |
| 4  | -2000001 | -2000001 | -2000001 | -2000001 | -2000001 |
| 5  | -1       | -1       | -1       | -1       | -1       |
+----+----------+----------+----------+----------+----------+";
    assert_eq!(
        ok(&lake.ctx, &format!("{micros} ORDER BY id")).await,
        expected
    );
    // filters on the floored values, at the top and nested
    for (filter, ids) in [
        ("ts = TIMESTAMP_NTZ '1969-12-31 23:59:59.999998'", "1"),
        ("ts < TIMESTAMP_NTZ '1969-12-31 23:59:59.999999'", "1, 4"),
        (
            "ts >= TIMESTAMP_NTZ '1969-12-31 23:59:59.999999'",
            "2, 3, 5",
        ),
        ("tz = TIMESTAMPTZ '1969-12-31 23:59:59.999998+00:00'", "1"),
        ("tz <= TIMESTAMPTZ '1969-12-31 23:59:57.999999+00:00'", "4"),
        ("s['t'] = TIMESTAMP_NTZ '1969-12-31 23:59:59.999998'", "1"),
        ("l[1] < TIMESTAMP_NTZ '1969-12-31 23:59:59.999999'", "1, 4"),
        (
            "map_values(m)[1] = TIMESTAMP_NTZ '1969-12-31 23:59:59.999999'",
            "3, 5",
        ),
    ] {
        let got = ok(
            &lake.ctx,
            &format!(
                "SELECT array_to_string(array_agg(id ORDER BY id), ', ') AS ids FROM ice.ns.n \
                 WHERE {filter}"
            ),
        )
        .await;
        assert!(got.contains(&format!("| {ids} ")), "{filter}: {got}");
    }

    // INT96 (Spark's, Impala's legacy timestamps) whose file says `Timestamp(ns, UTC)`:
    // read as nanoseconds, floored the same
    if python().is_none() {
        return;
    }
    let int96 = lake.dir.path().join("int96");
    run_script(
        "foreign_parquet.py",
        &[int96.as_os_str(), std::ffi::OsStr::new("int96_utc")],
    );
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.i (id INT, ts TIMESTAMP, tz TIMESTAMPTZ)",
    )
    .await;
    assert_eq!(add(&lake, "i", &int96).await, 1);
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT id, CAST(ts AS BIGINT) AS ts, CAST(tz AS BIGINT) AS tz FROM ice.ns.i \
             WHERE id < 5 ORDER BY id"
        )
        .await,
        "\
+----+----------+----------+
| id | ts       | tz       |
+----+----------+----------+
| 1  | -2       | -2       |
| 2  | 1        | 1        |
| 3  | -1       | -1       |
| 4  | -2000001 | -2000001 |
+----+----------+----------+"
    );
}

/// One row group of the Parquet schema `message` (no field ids) with each leaf column's
/// values, definition and repetition levels, as a writer of that schema would store them.
fn write_levels(path: &std::path::Path, message: &str, columns: Vec<Leaf>) {
    use datafusion::parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};
    use datafusion::parquet::file::properties::WriterProperties;
    use datafusion::parquet::file::writer::SerializedFileWriter;
    use datafusion::parquet::schema::parser::parse_message_type;
    use std::sync::Arc;
    let schema = Arc::new(parse_message_type(message).expect("schema"));
    std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
    let file = std::fs::File::create(path).expect("file");
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer = SerializedFileWriter::new(file, schema, props).expect("writer");
    let mut rg = writer.next_row_group().expect("row group");
    for leaf in columns {
        let mut col = rg.next_column().expect("column").expect("a column left");
        let (def, rep) = (Some(leaf.def.as_slice()), leaf.rep.as_deref());
        match leaf.values {
            Values::I32(v) => col.typed::<Int32Type>().write_batch(&v, def, rep),
            Values::I64(v) => col.typed::<Int64Type>().write_batch(&v, def, rep),
            Values::Bytes(v) => {
                let v: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_bytes())).collect();
                col.typed::<ByteArrayType>().write_batch(&v, def, rep)
            }
        }
        .expect("write");
        col.close().expect("close");
    }
    rg.close().expect("close");
    writer.close().expect("close");
}

enum Values {
    I32(Vec<i32>),
    I64(Vec<i64>),
    Bytes(Vec<&'static str>),
}

/// A leaf column's values (the non-null ones), definition and repetition levels.
struct Leaf {
    values: Values,
    def: Vec<i16>,
    rep: Option<Vec<i16>>,
}

fn leaf(values: Values, def: &[i16], rep: Option<&[i16]>) -> Leaf {
    Leaf {
        values,
        def: def.to_vec(),
        rep: rep.map(<[i16]>::to_vec),
    }
}

/// Lists and maps in the legacy shapes of Parquet's backward-compatibility rules
/// (parquet-format `LogicalTypes.md`, "Lists" and "Maps"), as parquet-mr before 1.8,
/// Hive and parquet-avro wrote them: a 2-level list (`repeated int32 array`), a repeated
/// field with no `LIST` annotation, a 2-level list of structs (the repeated group is the
/// element), Hive's 3-level names (`bag` / `array_element`) and a map whose entries are
/// `repeated group map (MAP_KEY_VALUE)`, and a repeated group with no `LIST` annotation (a
/// protobuf writer's repeated message): each reads as the table's list or map, by the
/// name mapping, and filters on them select the same rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_lists_and_maps_read_through_the_name_mapping() {
    let lake = lake().await;
    let src = lake.dir.path().join("legacy");
    let message = "message hive_schema {
        required int64 id;
        optional group two (LIST) { repeated int32 array; }
        repeated int32 bare;
        optional group structs (LIST) { repeated group array { optional int32 x; } }
        optional group hive (LIST) { repeated group bag { optional int32 array_element; } }
        optional group m (MAP) {
          repeated group map (MAP_KEY_VALUE) { required binary k (UTF8); optional int32 v; }
        }
        repeated group points { required int32 x; optional binary tag (UTF8); }
    }";
    // rows: (1, [1, 2], [5], [{x: 7}], [9, null], {a: 1}, [{1, a}]),
    // (2, [], [], null, null, {}, []), (3, null, [6, 7], [{x: null}], [], null,
    // [{2, null}, {3, c}]); `points` as protobuf writers leave a repeated message
    write_levels(
        &src.join("f.parquet"),
        message,
        vec![
            leaf(Values::I64(vec![1, 2, 3]), &[0, 0, 0], None),
            leaf(Values::I32(vec![1, 2]), &[2, 2, 1, 0], Some(&[0, 1, 0, 0])),
            leaf(
                Values::I32(vec![5, 6, 7]),
                &[1, 0, 1, 1],
                Some(&[0, 0, 0, 1]),
            ),
            leaf(Values::I32(vec![7]), &[3, 0, 2], Some(&[0, 0, 0])),
            leaf(Values::I32(vec![9]), &[3, 2, 0, 1], Some(&[0, 1, 0, 0])),
            leaf(Values::Bytes(vec!["a"]), &[2, 1, 0], Some(&[0, 0, 0])),
            leaf(Values::I32(vec![1]), &[3, 1, 0], Some(&[0, 0, 0])),
            leaf(
                Values::I32(vec![1, 2, 3]),
                &[1, 0, 1, 1],
                Some(&[0, 0, 0, 1]),
            ),
            leaf(
                Values::Bytes(vec!["a", "c"]),
                &[2, 0, 1, 2],
                Some(&[0, 0, 0, 1]),
            ),
        ],
    );
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.legacy (id BIGINT, two ARRAY<INT>, bare ARRAY<INT>, \
         structs ARRAY<STRUCT<x: INT>>, hive ARRAY<INT>, m MAP<STRING, INT>, \
         points ARRAY<STRUCT<x: INT, tag: STRING>>)",
    )
    .await;
    assert_eq!(add(&lake, "legacy", &src).await, 1);
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT id, two, bare, structs, hive, m FROM ice.ns.legacy ORDER BY id"
        )
        .await,
        "\
+----+--------+--------+----------+-------+--------+
| id | two    | bare   | structs  | hive  | m      |
+----+--------+--------+----------+-------+--------+
| 1  | [1, 2] | [5]    | [{x: 7}] | [9, ] | {a: 1} |
| 2  | []     | []     |          |       | {}     |
| 3  |        | [6, 7] | [{x: }]  | []    |        |
+----+--------+--------+----------+-------+--------+"
    );
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT id, points FROM ice.ns.legacy ORDER BY id"
        )
        .await,
        "\
+----+---------------------------------+
| id | points                          |
+----+---------------------------------+
| 1  | [{x: 1, tag: a}]                |
| 2  | []                              |
| 3  | [{x: 2, tag: }, {x: 3, tag: c}] |
+----+---------------------------------+"
    );
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT id FROM ice.ns.legacy WHERE points[2]['tag'] = 'c' OR two[2] = 2 \
             ORDER BY id"
        )
        .await,
        "+----+\n| id |\n+----+\n| 1  |\n| 3  |\n+----+"
    );
}

/// `batch` written as Parquet (one row group, chunk statistics only, no page index), then
/// copied column chunk by column chunk into `path` with each chunk's statistics replaced
/// by `stats(column index, its statistics)`: a footer as another writer made it.
fn write_with_statistics(
    path: &std::path::Path,
    batch: &datafusion::arrow::array::RecordBatch,
    stats: impl Fn(usize, &Statistics) -> Statistics,
) {
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::column::writer::ColumnCloseResult;
    use datafusion::parquet::file::properties::{EnabledStatistics, WriterProperties};
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    use datafusion::parquet::file::writer::SerializedFileWriter;
    use std::sync::Arc;
    let props = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .build();
    let mut plain = ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props)).expect("writer");
    plain.write(batch).expect("write");
    let bytes = bytes::Bytes::from(plain.into_inner().expect("close"));
    let reader = SerializedFileReader::new(bytes.clone()).expect("read");
    let meta = reader.metadata();
    std::fs::create_dir_all(path.parent().expect("dir")).expect("dir");
    let file = std::fs::File::create(path).expect("file");
    let schema = meta.file_metadata().schema_descr().root_schema_ptr();
    let mut writer =
        SerializedFileWriter::new(file, schema, Arc::new(WriterProperties::new())).expect("writer");
    for group in meta.row_groups() {
        let mut rg = writer.next_row_group().expect("row group");
        for (i, column) in group.columns().iter().enumerate() {
            let mut chunk = column.clone().into_builder();
            if let Some(s) = column.statistics() {
                chunk = chunk.set_statistics(stats(i, s));
            }
            let close = ColumnCloseResult {
                bytes_written: column.compressed_size() as u64,
                rows_written: group.num_rows() as u64,
                metadata: chunk.build().expect("chunk"),
                bloom_filter: None,
                column_index: None,
                offset_index: None,
            };
            rg.append_column(&bytes, close).expect("append");
        }
        rg.close().expect("close");
    }
    writer.close().expect("close");
}

/// Files of old writers (parquet-mr before 1.10: Hive, Spark 2, Impala) whose statistics
/// have only the deprecated `min` / `max`, computed in signed order: for strings byte by
/// byte as signed bytes, so `é` (`0xC3 0xA9`) is the minimum of `a`, `é`, `z`. They are no
/// bounds (parquet-mr's reader and Iceberg Java ignore them): `add_files` records none for
/// such a column, and DataFusion's row-group pruning is not given them, so
/// `s = 'a'` finds its row. A signed column's deprecated bounds (`id`) are kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deprecated_statistics_of_strings_are_no_bounds() {
    use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
    use datafusion::parquet::data_type::ByteArray;
    use std::sync::Arc;
    let lake = lake().await;
    let src = lake.dir.path().join("old");
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from(vec![1, 2, 3])) as Arc<dyn datafusion::arrow::array::Array>,
        ),
        ("s", Arc::new(StringArray::from(vec!["a", "é", "z"]))),
    ])
    .expect("batch");
    write_with_statistics(&src.join("f.parquet"), &batch, |i, s| match i {
        0 => Statistics::int64(Some(1), Some(3), None, s.null_count_opt(), true),
        _ => Statistics::byte_array(
            Some(ByteArray::from("é")),
            Some(ByteArray::from("z")),
            None,
            s.null_count_opt(),
            true,
        ),
    });
    ok(&lake.ctx, "CREATE TABLE ice.ns.old (id BIGINT, s STRING)").await;
    assert_eq!(add(&lake, "old", &src).await, 1);
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT readable_metrics['id']['lower_bound'] AS id_lower, \
             readable_metrics['id']['upper_bound'] AS id_upper, \
             readable_metrics['s']['lower_bound'] AS s_lower, \
             readable_metrics['s']['null_value_count'] AS s_nulls FROM ice.ns.\"old$files\""
        )
        .await,
        "\
+----------+----------+---------+---------+
| id_lower | id_upper | s_lower | s_nulls |
+----------+----------+---------+---------+
| 1        | 3        |         | 0       |
+----------+----------+---------+---------+"
    );
    for (filter, expected) in [("s = 'a'", "1"), ("s < 'b'", "1"), ("s > 'y'", "2, 3")] {
        let got = ok(
            &lake.ctx,
            &format!(
                "SELECT array_to_string(array_agg(id ORDER BY id), ', ') AS ids FROM ice.ns.old \
                 WHERE {filter}"
            ),
        )
        .await;
        assert!(got.contains(&format!("| {expected} ")), "{filter}: {got}");
    }
}

/// Spark's partition directories of a `double` column hold Java's `Double.toString`:
/// `f=NaN`, `f=Infinity`, `f=-Infinity` (and `__HIVE_DEFAULT_PARTITION__` for null).
/// They were refused ("'NaN' is not a double"); they are those values, as Java's
/// `add_files` reads them (`Double.valueOf`), and `partition_filter => map('f', 'NaN')`
/// takes the `f=NaN` directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_directories_of_non_finite_doubles_are_those_values() {
    let lake = lake().await;
    let src = lake.dir.path().join("by_f");
    for (i, dir) in [
        "NaN",
        "Infinity",
        "-Infinity",
        "1.5",
        "__HIVE_DEFAULT_PARTITION__",
    ]
    .iter()
    .enumerate()
    {
        copy(&format!(
            "COPY (SELECT CAST({i} AS BIGINT) AS id) TO '{}/f={dir}/p.parquet' STORED AS PARQUET",
            src.display()
        ))
        .await;
    }
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.p (id BIGINT, f DOUBLE) PARTITIONED BY (f)",
    )
    .await;
    // a partition filter naming NaN takes the NaN directory (NaN equals no value)
    let nan = call(
        &lake,
        &format!(
            "CALL ice.system.add_files('ns.p', '`parquet`.`{}`', map('f', 'NaN'))",
            src.display()
        ),
    )
    .await;
    assert_eq!(nan["added_files_count"], 1);
    ok(&lake.ctx, "DELETE FROM ice.ns.p").await;
    assert_eq!(add(&lake, "p", &src).await, 5);
    assert_eq!(
        ok(&lake.ctx, "SELECT id, f FROM ice.ns.p ORDER BY id").await,
        "\
+----+------+
| id | f    |
+----+------+
| 0  | NaN  |
| 1  | inf  |
| 2  | -inf |
| 3  | 1.5  |
| 4  |      |
+----+------+"
    );
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT id FROM ice.ns.p WHERE isnan(f) OR f > 1e308 ORDER BY id"
        )
        .await,
        "+----+\n| id |\n+----+\n| 0  |\n| 1  |\n+----+"
    );
}

/// A file that may give a null in a required (`NOT NULL`) column is refused, naming the
/// file and the column, and nothing is committed. Such a file was added: reading it
/// failed ("declared as non-nullable but contains null values", or a required column
/// absent from a data file), and answers taken from the promise were wrong without
/// reading it (`count(*) … WHERE id IS NULL` was 0 over a file holding a null `id`).
/// A file whose footer says the column holds no null, one without null counts that
/// holds none (read to tell), and a partition directory that gives a required partition
/// column its value, are added.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_that_may_hold_nulls_in_required_columns_are_refused() {
    use crate::dml::run;
    let lake = lake().await;
    let dir = lake.dir.path();
    // nullable columns (a `VALUES` column without a null is not)
    let rows = "FROM (VALUES (1, 'a'), (2, 'b'), (NULL, 'c')) WHERE column1 IS NOT NULL";
    for (name, select, options) in [
        (
            "nulls",
            "SELECT CAST(column1 AS BIGINT) AS id, column2 AS s FROM (VALUES (1, 'a'), (NULL, 'b'))",
            "",
        ),
        (
            "no_stats",
            &format!("SELECT CAST(column1 AS BIGINT) AS id, column2 AS s {rows}") as &str,
            " OPTIONS ('format.statistics_enabled' 'none')",
        ),
        (
            "no_stats_nulls",
            "SELECT CAST(column1 AS BIGINT) AS id, column2 AS s FROM (VALUES (1, 'a'), (NULL, 'b'))",
            " OPTIONS ('format.statistics_enabled' 'none')",
        ),
        ("no_id", &format!("SELECT column2 AS s {rows}"), ""),
        (
            "fine",
            &format!("SELECT CAST(column1 AS BIGINT) AS id, column2 AS s {rows}"),
            "",
        ),
        (
            "by_k/k=__HIVE_DEFAULT_PARTITION__",
            &format!("SELECT CAST(column1 AS BIGINT) AS id {rows}"),
            "",
        ),
        (
            "by_k_fine/k=7",
            &format!("SELECT CAST(column1 AS BIGINT) AS id {rows}"),
            "",
        ),
    ] {
        copy(&format!(
            "COPY ({select}) TO '{}/{name}/f.parquet' STORED AS PARQUET{options}",
            dir.display()
        ))
        .await;
    }
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.r (id BIGINT NOT NULL, s STRING)",
    )
    .await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.rk (id BIGINT, k INT NOT NULL) PARTITIONED BY (k)",
    )
    .await;
    for (table, source, expected) in [
        (
            "r",
            "nulls",
            "column 'id' (field id 1) is required (NOT NULL) in the table, but the file holds \
             1 null(s) in it",
        ),
        (
            "r",
            "no_stats_nulls",
            "field 'id' (field id 1) is required (NOT NULL) in the table, but the file holds 1 \
             null(s) in it where a row has it",
        ),
        (
            "r",
            "no_id",
            "but the file lacks it and it has no initial-default or partition value",
        ),
        (
            "rk",
            "by_k",
            "column 'k' (field id 2) is required (NOT NULL) in the table, but the file lacks it",
        ),
    ] {
        let q = format!(
            "CALL ice.system.add_files('ns.{table}', '`parquet`.`{}/{source}`')",
            dir.display()
        );
        let err = run(&lake.ctx, &q).await.expect_err(&q);
        assert!(
            err.contains(expected)
                && err.contains(&format!("/{source}/"))
                && err.contains("/f.parquet'"),
            "{q}: {err}"
        );
    }
    for t in ["r", "rk"] {
        let n = ok(
            &lake.ctx,
            &format!("SELECT count(*) AS n FROM ice.ns.\"{t}$snapshots\""),
        )
        .await;
        assert!(n.contains("| 0 |"), "{t}: {n}");
    }
    assert_eq!(add(&lake, "r", &dir.join("fine")).await, 1);
    // no null counts, no nulls: read and added (it was refused as "may hold nulls")
    assert_eq!(add(&lake, "r", &dir.join("no_stats")).await, 1);
    assert_eq!(add(&lake, "rk", &dir.join("by_k_fine")).await, 1);
    assert_eq!(
        ok(&lake.ctx, "SELECT * FROM ice.ns.r ORDER BY id, s").await,
        "+----+---+\n| id | s |\n+----+---+\n| 1  | a |\n| 1  | a |\n| 2  | b |\n| 2  | b |\n+----+---+"
    );
    assert_eq!(
        ok(&lake.ctx, "SELECT * FROM ice.ns.rk ORDER BY id").await,
        "+----+---+\n| id | k |\n+----+---+\n| 1  | 7 |\n| 2  | 7 |\n+----+---+"
    );
}

/// A pyarrow file of 10 000 rows in three row groups of small pages with a page index,
/// no field ids, its `id` column named `record_id` (an alias in the table's name mapping)
/// and `ts` in `TIMESTAMP(NANOS)` 500 ns before each whole microsecond: filters on `id`
/// (row-group and page pruning through the alias) and on the floored `ts` select the
/// rows they match, and `min`/`max` are the floored values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paged_file_with_aliased_columns_prunes_to_the_matching_rows() {
    if python().is_none() {
        return;
    }
    let lake = lake().await;
    let src = lake.dir.path().join("paged");
    run_script(
        "foreign_parquet.py",
        &[src.as_os_str(), std::ffi::OsStr::new("paged")],
    );
    ok(
        &lake.ctx,
        r#"CREATE TABLE ice.ns.pi (id BIGINT, ts TIMESTAMP, s STRING) TBLPROPERTIES
           ('schema.name-mapping.default'='[{"field-id":1,"names":["id","record_id"]},
           {"field-id":2,"names":["ts"]},{"field-id":3,"names":["s"]}]')"#,
    )
    .await;
    assert_eq!(add(&lake, "pi", &src).await, 1);
    for (q, expected) in [
        ("SELECT count(*) AS n FROM ice.ns.pi", "10000"),
        (
            "SELECT CAST(ts AS BIGINT) AS n FROM ice.ns.pi WHERE id = 5000",
            "-1",
        ),
        (
            "SELECT count(*) AS n FROM ice.ns.pi WHERE id BETWEEN 4000 AND 4099",
            "100",
        ),
        (
            "SELECT id AS n FROM ice.ns.pi WHERE ts = to_timestamp_micros(-1)",
            "5000",
        ),
        (
            "SELECT id AS n FROM ice.ns.pi WHERE ts = to_timestamp_micros(0)",
            "5001",
        ),
        (
            "SELECT count(*) AS n FROM ice.ns.pi WHERE ts < to_timestamp_micros(0)",
            "5001",
        ),
        (
            "SELECT count(*) AS n FROM ice.ns.pi WHERE ts >= to_timestamp_micros(4998)",
            "1",
        ),
        (
            "SELECT count(*) AS n FROM ice.ns.pi WHERE s > 'v09990'",
            "9",
        ),
        (
            "SELECT CAST(min(ts) AS BIGINT) AS n FROM ice.ns.pi",
            "-5001",
        ),
        ("SELECT CAST(max(ts) AS BIGINT) AS n FROM ice.ns.pi", "4998"),
    ] {
        let got = ok(&lake.ctx, q).await;
        assert!(got.contains(&format!("| {expected} ")), "{q}: {got}");
    }
}

/// A file whose writer cut its string and binary statistics to 3 bytes (`parquet`'s
/// `statistics_truncate_length`; DuckDB cuts at 256): the cut bounds (`abc`..`abd`) are
/// recorded as bounds, never as the values, so `min`/`max` read the rows and equality
/// and range filters find them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_statistics_bound_but_are_not_the_values() {
    use datafusion::arrow::array::{Array, BinaryArray, Int64Array, RecordBatch, StringArray};
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::file::properties::WriterProperties;
    use std::sync::Arc;
    let lake = lake().await;
    let src = lake.dir.path().join("cut");
    std::fs::create_dir_all(&src).expect("dir");
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from(vec![1, 2])) as Arc<dyn Array>,
        ),
        ("s", Arc::new(StringArray::from(vec!["abcdef", "abcxyz"]))),
        (
            "b",
            Arc::new(BinaryArray::from(vec![
                &b"abc\xff\xff"[..],
                &b"abc\xff\xfe"[..],
            ])),
        ),
    ])
    .expect("batch");
    let props = WriterProperties::builder()
        .set_statistics_truncate_length(Some(3))
        .build();
    let file = std::fs::File::create(src.join("f.parquet")).expect("file");
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).expect("writer");
    w.write(&batch).expect("write");
    w.close().expect("close");
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.cut (id BIGINT, s STRING, b BINARY)",
    )
    .await;
    assert_eq!(add(&lake, "cut", &src).await, 1);
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT readable_metrics['s']['lower_bound'] AS sl, \
             readable_metrics['s']['upper_bound'] AS su, \
             readable_metrics['b']['upper_bound'] AS bu FROM ice.ns.\"cut$files\""
        )
        .await,
        "+-----+-----+--------+\n| sl  | su  | bu     |\n+-----+-----+--------+\n\
         | abc | abd | 616264 |\n+-----+-----+--------+"
    );
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT max(s) AS s1, min(s) AS s0, max(b) AS b1, min(b) AS b0 FROM ice.ns.cut"
        )
        .await,
        "+--------+--------+------------+------------+\n\
         | s1     | s0     | b1         | b0         |\n\
         +--------+--------+------------+------------+\n\
         | abcxyz | abcdef | 616263ffff | 616263fffe |\n\
         +--------+--------+------------+------------+"
    );
    for (filter, ids) in [
        ("s = 'abcxyz'", "2"),
        ("s > 'abcd'", "1, 2"),
        ("b = X'616263FFFF'", "1"),
        ("b > X'616263FF'", "1, 2"),
    ] {
        let got = ok(
            &lake.ctx,
            &format!(
                "SELECT array_to_string(array_agg(id ORDER BY id), ', ') AS ids FROM ice.ns.cut \
                 WHERE {filter}"
            ),
        )
        .await;
        assert!(got.contains(&format!("| {ids} ")), "{filter}: {got}");
    }
}

/// INT96 timestamps (Spark's, Hive's, Impala's legacy files) added to a v3 table's
/// `timestamp_ns` / `timestamptz_ns` columns, at the top level, in a struct, a list and a
/// map value: they read with their nanoseconds (they were decoded in microseconds for
/// every column, 1500 ns read as 1000), and filters on them select the rows whose read
/// value matches. An INT96 column read as a microsecond `timestamp` of the same file
/// still reads a year (3000) outside the nanosecond range. An INT96 value outside the
/// `i64` nanosecond range (2300, 1600) in a nanosecond column fails the read naming the
/// file and the column, where decoding it in nanoseconds would wrap it to another time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn int96_timestamps_read_at_nanoseconds_in_nanosecond_columns() {
    use crate::dml::run;
    if python().is_none() {
        return;
    }
    let lake = lake().await;
    let src = lake.dir.path().join("int96");
    run_script(
        "foreign_parquet.py",
        &[src.as_os_str(), std::ffi::OsStr::new("int96_nanos")],
    );
    let v3 = "TBLPROPERTIES ('format-version'='3')";
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.i (id INT, ts TIMESTAMP(9), tz TIMESTAMP(9) WITH TIME ZONE, \
             s STRUCT<t: TIMESTAMP(9)>, l ARRAY<TIMESTAMP(9)>, m MAP<INT, TIMESTAMP(9)>, \
             far TIMESTAMP) {v3}"
        ),
    )
    .await;
    assert_eq!(add(&lake, "i", &src).await, 1);
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT id, CAST(ts AS BIGINT) AS ts, CAST(tz AS BIGINT) AS tz, \
             CAST(s['t'] AS BIGINT) AS st, CAST(l[1] AS BIGINT) AS l1, \
             CAST(map_values(m)[1] AS BIGINT) AS mv, CAST(far AS BIGINT) AS far \
             FROM ice.ns.i ORDER BY id"
        )
        .await,
        "\
+----+---------------------+---------------------+---------------------+---------------------+---------------------+-------------------+
| id | ts                  | tz                  | st                  | l1                  | mv                  | far               |
+----+---------------------+---------------------+---------------------+---------------------+---------------------+-------------------+
| 1  | -1500               | -1500               | -1500               | -1500               | -1500               | 32503680000000001 |
| 2  | 1500                | 1500                | 1500                | 1500                | 1500                | 32503680000000002 |
| 3  | 1700000000123456789 | 1700000000123456789 | 1700000000123456789 | 1700000000123456789 | 1700000000123456789 | 32503680000000003 |
| 4  | -2000000001         | -2000000001         | -2000000001         | -2000000001         | -2000000001         | 32503680000000004 |
| 5  |                     |                     |                     |                     |                     |                   |
+----+---------------------+---------------------+---------------------+---------------------+---------------------+-------------------+"
    );
    for (filter, ids) in [
        ("ts = TIMESTAMP '2023-11-14 22:13:20.123456789'", "3"),
        ("ts > TIMESTAMP '2023-11-14 22:13:20.123456788'", "3"),
        ("ts = TIMESTAMP '1969-12-31 23:59:59.999998500'", "1"),
        ("ts < TIMESTAMP '1970-01-01 00:00:00.000001501'", "1, 2, 4"),
        (
            "tz = TIMESTAMPTZ '1970-01-01 00:00:00.000001500+00:00'",
            "2",
        ),
        ("s['t'] = TIMESTAMP '2023-11-14 22:13:20.123456789'", "3"),
        ("l[1] = TIMESTAMP '1969-12-31 23:59:57.999999999'", "4"),
        (
            "map_values(m)[1] > TIMESTAMP '1970-01-01 00:00:00.000001'",
            "2, 3",
        ),
        ("far > TIMESTAMP '3000-01-01 00:00:00.000002'", "3, 4"),
    ] {
        let got = ok(
            &lake.ctx,
            &format!(
                "SELECT array_to_string(array_agg(id ORDER BY id), ', ') AS ids FROM ice.ns.i \
                 WHERE {filter}"
            ),
        )
        .await;
        assert!(got.contains(&format!("| {ids} ")), "{filter}: {got}");
    }

    // outside the nanosecond range: at the top level and in a struct
    let out = lake.dir.path().join("out");
    run_script(
        "foreign_parquet.py",
        &[out.as_os_str(), std::ffi::OsStr::new("int96_out_of_range")],
    );
    ok(
        &lake.ctx,
        &format!("CREATE TABLE ice.ns.late (id INT, ts TIMESTAMP(9)) {v3}"),
    )
    .await;
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.early (id INT, s STRUCT<t: TIMESTAMP(9) WITH TIME ZONE>) {v3}"
        ),
    )
    .await;
    for (table, column, shown) in [
        ("late", "'ts' (field id 2)", "2300-01-01 00:00:00"),
        ("early", "'s.t' (field id 3)", "1600-01-01 00:00:00"),
    ] {
        assert_eq!(add(&lake, table, &out.join(table)).await, 1);
        let q = format!("SELECT * FROM ice.ns.{table}");
        let err = run(&lake.ctx, &q).await.expect_err(&q);
        assert!(
            err.contains(&format!("/{table}/f.parquet'"))
                && err.contains(&format!(
                    "column {column} holds the INT96 timestamp {shown}"
                ))
                && err.contains("outside the range of the table's nanosecond timestamp type"),
            "{q}: {err}"
        );
        // the other column reads
        assert!(ok(
            &lake.ctx,
            &format!("SELECT id FROM ice.ns.{table} ORDER BY id")
        )
        .await
        .contains("| 2  |"));
    }
}

/// `add_files` of pyarrow files (every field optional in the file) into a table whose
/// struct field, list element, map value and a struct field inside list elements are
/// required: a file with a null in one of them under a present parent is refused naming
/// the field's path (it was added, only top-level columns were checked, and the table then
/// read nulls it promises never to hold); a file whose nulls are all of whole structs,
/// lists and maps (allowed), which its footer's null counts cannot tell from the others,
/// is read to decide, added, and reads as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_with_nulls_in_required_nested_fields_are_refused() {
    use crate::dml::run;
    use icefloe::catalog::{TableCreation, TableIdent};
    if python().is_none() {
        return;
    }
    let lake = lake().await;
    let src = lake.dir.path().join("src");
    run_script(
        "foreign_parquet.py",
        &[src.as_os_str(), std::ffi::OsStr::new("required_nested")],
    );
    let schema = required_nested_schema(false);
    lake.catalog
        .create_table(&TableIdent::parse("ns.r"), TableCreation::new(schema))
        .await
        .expect("create");
    for (dir, field) in [
        ("struct_field", "field 's.a' (field id 6)"),
        ("element", "field 'l.element' (field id 7)"),
        ("value", "field 'm.value' (field id 9)"),
        ("deep", "field 'ls.element.b' (field id 11)"),
    ] {
        let q = format!(
            "CALL ice.system.add_files('ns.r', '`parquet`.`{}`')",
            src.join(dir).display()
        );
        let err = run(&lake.ctx, &q).await.expect_err(&q);
        assert!(
            err.contains(&format!("/{dir}/f.parquet'"))
                && err.contains(&format!(
                    "{field} is required (NOT NULL) in the table, but the file holds 1 null(s) \
                     in it where its parent is present"
                )),
            "{q}: {err}"
        );
    }
    assert_eq!(add(&lake, "r", &src.join("fine")).await, 1);
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT id, s['a'] AS a, l, map_values(m) AS mv, ls FROM ice.ns.r ORDER BY id"
        )
        .await,
        "\
+----+---+--------+-----+------------+
| id | a | l      | mv  | ls         |
+----+---+--------+-----+------------+
| 1  | 1 | [1, 2] | [1] | [{b: 1}, ] |
| 2  |   | []     |     |            |
| 3  | 3 |        | []  | []         |
+----+---+--------+-----+------------+"
    );
}

/// The table of the `required_nested` files: `id` (optional unless `id_required`), `s`
/// (struct of required `a`), `l` (list of required elements), `m` (map of required
/// values), `ls` (list of structs of required `b`).
fn required_nested_schema(id_required: bool) -> icefloe::spec::Schema {
    use icefloe::spec::{ListType, MapType, NestedField, PrimitiveType, Schema, StructType, Type};
    let long = || Type::Primitive(PrimitiveType::Long);
    Schema::new(
        0,
        vec![
            if id_required {
                NestedField::required(1, "id", long())
            } else {
                NestedField::optional(1, "id", long())
            },
            NestedField::optional(
                2,
                "s",
                Type::Struct(StructType::new(vec![NestedField::required(6, "a", long())])),
            ),
            NestedField::optional(
                3,
                "l",
                Type::List(ListType {
                    element_field: NestedField::required(7, "element", long()),
                }),
            ),
            NestedField::optional(
                4,
                "m",
                Type::Map(MapType {
                    key_field: NestedField::required(
                        8,
                        "key",
                        Type::Primitive(PrimitiveType::String),
                    ),
                    value_field: NestedField::required(9, "value", long()),
                }),
            ),
            NestedField::optional(
                5,
                "ls",
                Type::List(ListType {
                    element_field: NestedField::optional(
                        10,
                        "element",
                        Type::Struct(StructType::new(vec![NestedField::required(
                            11,
                            "b",
                            long(),
                        )])),
                    ),
                }),
            ),
        ],
    )
}

/// Files written without statistics (no null counts), one row a row group: a valid one is
/// added (a required top-level column without null counts was refused as "may hold
/// nulls"), and the nulls of required fields, top-level or nested, are found by reading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_without_statistics_are_checked_by_reading_them() {
    use crate::dml::run;
    use icefloe::catalog::{TableCreation, TableIdent};
    if python().is_none() {
        return;
    }
    let lake = lake().await;
    let src = lake.dir.path().join("src");
    run_script(
        "foreign_parquet.py",
        &[src.as_os_str(), std::ffi::OsStr::new("unstated")],
    );
    lake.catalog
        .create_table(
            &TableIdent::parse("ns.r"),
            TableCreation::new(required_nested_schema(true)),
        )
        .await
        .expect("create");
    for (dir, field, parent) in [
        ("bare_null_id", "field 'id' (field id 1)", "a row has it"),
        (
            "bare_deep",
            "field 'ls.element.b' (field id 11)",
            "its parent is present",
        ),
    ] {
        let q = format!(
            "CALL ice.system.add_files('ns.r', '`parquet`.`{}`')",
            src.join(dir).display()
        );
        let err = run(&lake.ctx, &q).await.expect_err(&q);
        assert!(
            err.contains(&format!("/{dir}/f.parquet'"))
                && err.contains(&format!(
                    "{field} is required (NOT NULL) in the table, but the file holds 1 null(s) \
                     in it where {parent}"
                )),
            "{q}: {err}"
        );
    }
    assert_eq!(add(&lake, "r", &src.join("bare_fine")).await, 1);
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT count(*) AS n, count(id) AS ids FROM ice.ns.r"
        )
        .await,
        "\
+---+-----+
| n | ids |
+---+-----+
| 3 | 3   |
+---+-----+"
    );
}

/// Hive-style directories of a `timestamp` / `timestamp_ns` partition column (as Hive
/// and Spark write them: `2024-01-02 03:04:05[.ffffff]`, colons escaped) give the file
/// that wall-clock time (add_files refused every timestamp partition column as
/// unsupported), and filters on the column select those rows. A `timestamptz` directory
/// with an offset is that instant; one without is refused, naming why (the writer's
/// session zone is unknown).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamp_partition_directories_are_their_wall_clock_times() {
    use crate::dml::run;
    let lake = lake().await;
    let dir = lake.dir.path();
    for (sub, id) in [
        (
            "t/ts=2024-01-02 03%3A04%3A05/n=2024-01-02 03%3A04%3A05.123456789",
            1,
        ),
        (
            "t/ts=2024-01-02 03%3A04%3A05.5/n=1969-12-31 23%3A59%3A59.999999999",
            2,
        ),
        (
            "t/ts=__HIVE_DEFAULT_PARTITION__/n=2024-01-02T00%3A00%3A00",
            3,
        ),
        ("z/tz=2024-01-02 03%3A04%3A05+02%3A00", 4),
        ("zone_less/tz=2024-01-02 03%3A04%3A05", 5),
    ] {
        copy(&format!(
            "COPY (SELECT CAST({id} AS BIGINT) AS id) TO '{}/{sub}/f.parquet' STORED AS PARQUET",
            dir.display()
        ))
        .await;
    }
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, ts TIMESTAMP, n TIMESTAMP(9)) PARTITIONED BY (ts, n) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.z (id BIGINT, tz TIMESTAMPTZ) PARTITIONED BY (tz)",
    )
    .await;
    assert_eq!(add(&lake, "t", &dir.join("t")).await, 3);
    assert_eq!(add(&lake, "z", &dir.join("z")).await, 1);
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT id, CAST(ts AS BIGINT) AS ts, CAST(n AS BIGINT) AS n FROM ice.ns.t ORDER BY id"
        )
        .await,
        "\
+----+------------------+---------------------+
| id | ts               | n                   |
+----+------------------+---------------------+
| 1  | 1704164645000000 | 1704164645123456789 |
| 2  | 1704164645500000 | -1                  |
| 3  |                  | 1704153600000000000 |
+----+------------------+---------------------+"
    );
    for (filter, ids) in [
        ("ts = TIMESTAMP '2024-01-02 03:04:05'", "1"),
        ("ts > TIMESTAMP '2024-01-02 03:04:05'", "2"),
        ("ts IS NULL", "3"),
        ("n = TIMESTAMP '2024-01-02 03:04:05.123456789'", "1"),
        ("n < TIMESTAMP '1970-01-01 00:00:00'", "2"),
    ] {
        let got = ok(
            &lake.ctx,
            &format!(
                "SELECT array_to_string(array_agg(id ORDER BY id), ', ') AS ids FROM ice.ns.t \
                 WHERE {filter}"
            ),
        )
        .await;
        assert!(got.contains(&format!("| {ids} ")), "{filter}: {got}");
    }
    assert!(ok(
        &lake.ctx,
        "SELECT id FROM ice.ns.z WHERE tz = TIMESTAMPTZ '2024-01-02 01:04:05+00:00'"
    )
    .await
    .contains("| 4  |"));
    let q = format!(
        "CALL ice.system.add_files('ns.z', '`parquet`.`{}`')",
        dir.join("zone_less").display()
    );
    let err = run(&lake.ctx, &q).await.expect_err(&q);
    assert!(
        err.contains(
            "'2024-01-02 03:04:05' as a timestamptz: a partition directory of a \
                      timestamp with time zone needs an offset"
        ),
        "{q}: {err}"
    );
}
