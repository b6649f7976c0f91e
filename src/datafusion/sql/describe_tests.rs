//! Spark's `DESCRIBE TABLE [EXTENDED]` and `DESC t col` on a SQLite catalog in a
//! temporary directory.

use datafusion::arrow::array::{Array, AsArray};
use datafusion::prelude::SessionContext;

use super::execute;
use super::tests::{fails, ok, session, set_table_properties};
use crate::ErrorKind;

/// The rows of a table-form `DESCRIBE`: name, type, comment (`None`: NULL).
async fn described(ctx: &SessionContext, sql: &str) -> Vec<(String, String, Option<String>)> {
    let df = execute(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let names: Vec<String> = df
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["col_name", "data_type", "comment"], "{sql}");
    let mut rows = Vec::new();
    for batch in df.collect().await.expect("rows") {
        let (n, t, c) = (
            batch.column(0).as_string::<i32>(),
            batch.column(1).as_string::<i32>(),
            batch.column(2).as_string::<i32>(),
        );
        for i in 0..batch.num_rows() {
            let comment = (!c.is_null(i)).then(|| c.value(i).to_string());
            rows.push((n.value(i).to_string(), t.value(i).to_string(), comment));
        }
    }
    rows
}

fn row(name: &str, ty: &str, comment: Option<&str>) -> (String, String, Option<String>) {
    (
        name.to_string(),
        ty.to_string(),
        comment.map(str::to_string),
    )
}

/// A section or detail row: its comment is the empty string.
fn info(name: &str, value: &str) -> (String, String, Option<String>) {
    row(name, value, Some(""))
}

#[tokio::test]
async fn describe_table_extended_answers_in_sparks_shape() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    let wide: Vec<String> = (0..30).map(|i| format!("f{i} INT")).collect();
    ok(
        &ctx,
        &format!(
            "CREATE TABLE ns.t (id BIGINT NOT NULL COMMENT 'the id', s STRING, \
             ts TIMESTAMP, tz TIMESTAMP WITH TIME ZONE, u UUID, d DECIMAL(10, 2), \
             tags ARRAY<INT>, m MAP<STRING, DOUBLE>, `a b` INT, w STRUCT<{}>) \
             USING iceberg PARTITIONED BY (bucket(4, id), days(ts), truncate(3, s), `a b`) \
             COMMENT 'a table' \
             TBLPROPERTIES ('format-version'='3', 's3.secret-access-key'='hunter2', \
             'write.delete.mode'='merge-on-read')",
            wide.join(", ")
        ),
    )
    .await;
    // as Spark sets it (a property list refuses the reserved key)
    set_table_properties(&catalog, "ns.t", &[("owner", "me")]).await;
    ok(&ctx, "INSERT INTO ns.t (id, s) VALUES (1, 'a')").await;
    let table = catalog
        .load_table(&super::tests::ident("ns.t"))
        .await
        .expect("table");
    let metadata = table.metadata();
    let snapshot = metadata.current_snapshot_id.expect("snapshot");

    let shortened = format!(
        "struct<{},... 6 more fields>",
        (0..24)
            .map(|i| format!("f{i}:int"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let columns = vec![
        row("id", "bigint", Some("the id")),
        row("s", "string", None),
        row("ts", "timestamp_ntz", None),
        row("tz", "timestamp", None),
        row("u", "string", None),
        row("d", "decimal(10,2)", None),
        row("tags", "array<int>", None),
        row("m", "map<string,double>", None),
        row("a b", "int", None),
        row("w", &shortened, None),
        info("", ""),
        info("# Partitioning", ""),
        info("Part 0", "bucket(4, id)"),
        info("Part 1", "days(ts)"),
        info("Part 2", "truncate(3, s)"),
        info("Part 3", "`a b`"),
    ];
    for sql in ["DESCRIBE TABLE ns.t", "desc table NS.T"] {
        assert_eq!(described(&ctx, sql).await, columns, "{sql}");
    }

    let mut extended = columns.clone();
    extended.extend([
        info("", ""),
        info("# Metadata Columns", ""),
        info("_spec_id", "int"),
        info(
            "_partition",
            "struct<id_bucket:int,ts_day:date,s_trunc:string,a b:int>",
        ),
        info("_file", "string"),
        info("_pos", "bigint"),
        info("_deleted", "boolean"),
        info("_row_id", "bigint"),
        info("_last_updated_sequence_number", "bigint"),
        info("", ""),
        info("# Detailed Table Information", ""),
        info("Name", "cat.ns.t"),
        info("Comment", "a table"),
        info("Location", &metadata.location),
        info("Provider", "iceberg"),
        info("Owner", "me"),
        info(
            "Table Properties",
            &format!(
                "[current-snapshot-id={snapshot},format=iceberg/parquet,format-version=3,\
                 s3.secret-access-key=***,write.delete.mode=merge-on-read]"
            ),
        ),
    ]);
    for sql in [
        "DESCRIBE TABLE EXTENDED ns.t",
        "DESCRIBE EXTENDED ns.t",
        "DESC FORMATTED ns.t",
        "DESC TABLE FORMATTED cat.ns.t",
    ] {
        assert_eq!(described(&ctx, sql).await, extended, "{sql}");
    }
}

#[tokio::test]
async fn describe_table_lists_identity_partitions_as_columns_and_reads_refs() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.p (a INT, b STRING COMMENT 'the b', v INT) PARTITIONED BY (b, v)",
    )
    .await;
    let expected = vec![
        row("a", "int", None),
        row("b", "string", Some("the b")),
        row("v", "int", None),
        info("# Partition Information", ""),
        row("# col_name", "data_type", Some("comment")),
        row("b", "string", Some("the b")),
        row("v", "int", None),
    ];
    assert_eq!(described(&ctx, "DESC TABLE ns.p").await, expected);

    // an unpartitioned v2 table: no partition section, no `_partition`, no row lineage
    ok(&ctx, "CREATE TABLE ns.u (x INT)").await;
    ok(&ctx, "INSERT INTO ns.u VALUES (1)").await;
    ok(&ctx, "ALTER TABLE ns.u CREATE TAG old").await;
    ok(&ctx, "ALTER TABLE ns.u ADD COLUMN y STRING").await;
    let rows = described(&ctx, "DESC EXTENDED ns.u").await;
    assert_eq!(
        rows[..9].to_vec(),
        vec![
            row("x", "int", None),
            row("y", "string", None),
            info("", ""),
            info("# Metadata Columns", ""),
            info("_spec_id", "int"),
            info("_file", "string"),
            info("_pos", "bigint"),
            info("_deleted", "boolean"),
            info("", ""),
        ]
    );
    // the tag reads the schema it was taken with
    assert_eq!(
        described(&ctx, "DESC TABLE ns.\"u@old\"").await,
        vec![row("x", "int", None)]
    );
}

#[tokio::test]
async fn describe_column_and_the_forms_left_to_datafusion() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    let wide: Vec<String> = (0..30).map(|i| format!("f{i} INT")).collect();
    ok(
        &ctx,
        &format!(
            "CREATE TABLE ns.t (id BIGINT COMMENT 'the id', st STRUCT<{}>)",
            wide.join(", ")
        ),
    )
    .await;
    let column = |name: &str, ty: &str, comment: &str| {
        vec![
            vec!["col_name".to_string(), name.to_string()],
            vec!["data_type".to_string(), ty.to_string()],
            vec!["comment".to_string(), comment.to_string()],
        ]
    };
    for sql in ["DESC ns.t ID", "DESCRIBE TABLE EXTENDED ns.t id"] {
        assert_eq!(
            ok(&ctx, sql).await,
            column("id", "bigint", "the id"),
            "{sql}"
        );
    }
    // catalogString: the struct is not shortened
    let full = format!(
        "struct<{}>",
        (0..30)
            .map(|i| format!("f{i}:int"))
            .collect::<Vec<_>>()
            .join(",")
    );
    assert_eq!(ok(&ctx, "DESC ns.t st").await, column("st", &full, "NULL"));
    fails(
        &ctx,
        "DESC ns.t st.f1",
        ErrorKind::Unsupported,
        "DESC TABLE COLUMN does not support nested column: st.f1",
    )
    .await;
    fails(&ctx, "DESC ns.t nope", ErrorKind::NotFound, "column 'nope'").await;
    fails(&ctx, "DESC TABLE ns.nope", ErrorKind::NotFound, "ns.nope").await;
    fails(
        &ctx,
        "DESC ns.t PARTITION (id = 1)",
        ErrorKind::Unsupported,
        "PARTITION",
    )
    .await;

    // a bare DESCRIBE, and DESCRIBE of a query, stay DataFusion's
    let header = |sql: &'static str| {
        let ctx = ctx.clone();
        async move {
            let df = execute(&ctx, sql).await.expect(sql);
            df.schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect::<Vec<_>>()
        }
    };
    for sql in [
        "DESCRIBE ns.t",
        "DESCRIBE SELECT 1 AS x",
        "DESC (SELECT 1 AS x)",
    ] {
        assert_eq!(
            header(sql).await,
            ["column_name", "data_type", "is_nullable"],
            "{sql}"
        );
    }

    // a metadata table by Spark's name, and a table that is not an Iceberg table
    let rows = described(&ctx, "DESCRIBE TABLE EXTENDED ns.t.history").await;
    assert_eq!(rows[0], row("made_current_at", "timestamp", None));
    assert_eq!(rows.last(), Some(&info("Name", "cat.ns.t.history")));
    ok(
        &ctx,
        "CREATE TABLE public.mem AS VALUES (CAST(1 AS SMALLINT), 'x')",
    )
    .await;
    assert_eq!(
        described(&ctx, "DESC TABLE public.mem").await,
        vec![
            row("column1", "smallint", None),
            row("column2", "string", None)
        ]
    );
}

/// On tables Spark 3.5 wrote (the committed corpus copies): the columns, partitioning and
/// details Spark shows for them, `owner` as Spark set it.
#[tokio::test]
async fn describe_table_extended_of_spark_written_tables() {
    let (ctx, _catalog, _dir) = session().await;
    crate::register_iceberg_factory(&ctx);
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/corpus");
    for t in ["spark_v2_day_partitioned", "spark_v3_deletion_vectors"] {
        ok(
            &ctx,
            &format!("CREATE EXTERNAL TABLE public.{t} STORED AS ICEBERG LOCATION '{corpus}/{t}'"),
        )
        .await;
    }
    assert_eq!(
        described(
            &ctx,
            "DESCRIBE TABLE EXTENDED public.spark_v2_day_partitioned"
        )
        .await,
        vec![
            row("id", "bigint", None),
            row("ts", "timestamp", None),
            row("v", "string", None),
            info("", ""),
            info("# Partitioning", ""),
            info("Part 0", "days(ts)"),
            info("", ""),
            info("# Metadata Columns", ""),
            info("_spec_id", "int"),
            info("_partition", "struct<ts_day:date>"),
            info("_file", "string"),
            info("_pos", "bigint"),
            info("_deleted", "boolean"),
            info("", ""),
            info("# Detailed Table Information", ""),
            info("Name", "cat.public.spark_v2_day_partitioned"),
            info(
                "Location",
                "file:///tmp/iceberg-corpus/spark_v2_day_partitioned"
            ),
            info("Provider", "iceberg"),
            info("Owner", "root"),
            info(
                "Table Properties",
                "[current-snapshot-id=2049152867955782130,format=iceberg/parquet,\
                 format-version=2,write.parquet.compression-codec=zstd]"
            ),
        ]
    );
    // v3: identity partitions as columns, a column's doc, the row-lineage columns
    let rows = described(&ctx, "DESC TABLE EXTENDED public.spark_v3_deletion_vectors").await;
    assert_eq!(
        rows[..8].to_vec(),
        vec![
            row("id", "bigint", None),
            row("grp", "string", None),
            row("v", "int", None),
            row("ts", "timestamp", None),
            row("extra", "int", Some("v3 default")),
            info("# Partition Information", ""),
            row("# col_name", "data_type", Some("comment")),
            row("grp", "string", None),
        ]
    );
    assert!(rows.contains(&info("_row_id", "bigint")), "{rows:?}");
    assert!(
        rows.contains(&info("_last_updated_sequence_number", "bigint")),
        "{rows:?}"
    );
}

/// Spark's `DESCRIBE NAMESPACE|SCHEMA|DATABASE [EXTENDED] ns` in Spark 3.5's rows: the
/// names, the reserved properties present (a SQL catalog's default `location` as Java's
/// `JdbcCatalog` gives it), and with `EXTENDED` the others sorted, secrets hidden. It read
/// as a table called `namespace` (a tester's), then was refused; a table named `schema`
/// is still described.
#[tokio::test]
async fn describe_namespace_shows_its_properties() {
    let (ctx, catalog, dir) = session().await;
    let pair = |a: &str, b: &str| vec![a.to_string(), b.to_string()];
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE SCHEMA ns2 COMMENT 'the ns2' LOCATION '/somewhere/ns2' \
         WITH DBPROPERTIES ('zz' = '1', 'aa' = 'x', 's3.secret-access-key' = 'hush')",
    )
    .await;
    // as another engine sets it (a property list refuses the reserved key)
    catalog
        .update_namespace_properties(
            &crate::catalog::Namespace::parse("ns2"),
            &[("owner".to_string(), "ana".to_string())].into(),
            &[],
        )
        .await
        .expect("owner");
    let default_location = format!("file://{}/ns", dir.path().display());
    for sql in [
        "DESCRIBE NAMESPACE ns",
        "DESC SCHEMA cat.ns",
        "DESCRIBE DATABASE ns",
    ] {
        assert_eq!(
            ok(&ctx, sql).await,
            [
                pair("Catalog Name", "cat"),
                pair("Namespace Name", "ns"),
                pair("Location", &default_location)
            ],
            "{sql}"
        );
    }
    assert_eq!(
        ok(&ctx, "DESCRIBE NAMESPACE EXTENDED ns").await.last(),
        Some(&pair("Properties", ""))
    );
    assert_eq!(
        ok(&ctx, "DESCRIBE NAMESPACE EXTENDED ns2").await,
        [
            pair("Catalog Name", "cat"),
            pair("Namespace Name", "ns2"),
            pair("Comment", "the ns2"),
            pair("Location", "file:///somewhere/ns2"),
            pair("Owner", "ana"),
            pair("Properties", "((aa,x), (s3.secret-access-key,***), (zz,1))"),
        ]
    );
    // the last level of a nested namespace; a DataFusion schema has its names only
    ok(&ctx, "CREATE SCHEMA \"a.b\"").await;
    assert_eq!(
        ok(&ctx, "DESCRIBE NAMESPACE \"a.b\"").await[..2],
        [pair("Catalog Name", "cat"), pair("Namespace Name", "b")]
    );
    assert_eq!(
        ok(&ctx, "DESCRIBE NAMESPACE public").await,
        [
            pair("Catalog Name", "cat"),
            pair("Namespace Name", "public")
        ]
    );
    fails(&ctx, "DESCRIBE NAMESPACE nope", ErrorKind::NotFound, "nope").await;
    fails(
        &ctx,
        "DESCRIBE NAMESPACE ns extra",
        ErrorKind::InvalidArgument,
        "extra",
    )
    .await;
    ok(&ctx, "CREATE TABLE ns.schema (id INT)").await;
    assert_eq!(
        described(&ctx, "DESCRIBE TABLE ns.schema").await,
        [row("id", "int", None)]
    );
}

/// Spark's `ALTER NAMESPACE|SCHEMA|DATABASE ns SET DBPROPERTIES|PROPERTIES`, `UNSET …
/// [IF EXISTS]` and `SET LOCATION` change what `DESCRIBE NAMESPACE` shows; a missing key
/// without `IF EXISTS`, the reserved `exists` and a missing namespace change nothing.
#[tokio::test]
async fn alter_namespace_sets_and_unsets_properties() {
    let (ctx, _catalog, _dir) = session().await;
    let pair = |a: &str, b: &str| vec![a.to_string(), b.to_string()];
    ok(
        &ctx,
        "CREATE SCHEMA ns WITH DBPROPERTIES ('a' = '1', 'b' = '2')",
    )
    .await;
    ok(
        &ctx,
        "ALTER NAMESPACE ns SET DBPROPERTIES ('a' = 'one', c = 3, 'd' = true)",
    )
    .await;
    ok(&ctx, "ALTER SCHEMA cat.ns UNSET PROPERTIES ('b')").await;
    ok(&ctx, "ALTER DATABASE ns SET LOCATION '/elsewhere/ns'").await;
    let expected = [
        pair("Catalog Name", "cat"),
        pair("Namespace Name", "ns"),
        pair("Location", "file:///elsewhere/ns"),
        pair("Properties", "((a,one), (c,3), (d,true))"),
    ];
    assert_eq!(ok(&ctx, "DESCRIBE NAMESPACE EXTENDED ns").await, expected);
    for (sql, kind, needle) in [
        (
            "ALTER NAMESPACE ns UNSET DBPROPERTIES ('c', 'nope')",
            ErrorKind::InvalidArgument,
            "the namespace has no property nope",
        ),
        (
            "ALTER NAMESPACE ns SET DBPROPERTIES ('exists' = 'false')",
            ErrorKind::InvalidArgument,
            "'exists' is reserved",
        ),
        (
            "ALTER NAMESPACE missing SET DBPROPERTIES ('a' = '1')",
            ErrorKind::NotFound,
            "missing",
        ),
        (
            "ALTER NAMESPACE ns RENAME TO other",
            ErrorKind::InvalidArgument,
            "expected SET DBPROPERTIES, UNSET DBPROPERTIES or SET LOCATION",
        ),
    ] {
        fails(&ctx, sql, kind, needle).await;
    }
    assert_eq!(ok(&ctx, "DESCRIBE NAMESPACE EXTENDED ns").await, expected);
    ok(
        &ctx,
        "ALTER NAMESPACE ns UNSET DBPROPERTIES IF EXISTS ('c', 'nope')",
    )
    .await;
    assert_eq!(
        ok(&ctx, "DESCRIBE NAMESPACE EXTENDED ns").await.last(),
        Some(&pair("Properties", "((a,one), (d,true))"))
    );
}
