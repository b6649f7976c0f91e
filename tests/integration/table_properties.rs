//! Table properties icefloe reads: `SET TBLPROPERTIES` and `CREATE TABLE … TBLPROPERTIES`
//! refuse a value icefloe cannot use (naming the property, the value and what it takes)
//! and commit nothing; a table that holds such a value anyway (written by another engine)
//! still takes commits, so `UNSET` repairs it.

use std::collections::HashMap;

use icefloe::catalog::TableIdent;
use icefloe::spec::{TableCommit, TableUpdate};

use crate::dml::{lake, run, Lake};

async fn metadata_location(lake: &Lake, table: &str) -> String {
    lake.catalog
        .load_table(&TableIdent::parse(table))
        .await
        .expect("table")
        .metadata_location()
        .to_string()
}

async fn properties(lake: &Lake, table: &str) -> HashMap<String, String> {
    lake.catalog
        .load_table(&TableIdent::parse(table))
        .await
        .expect("table")
        .metadata()
        .properties
        .clone()
}

/// The values the user's report named and more of the kind, each with the error it gives.
const BAD: &[(&str, &str, &str)] = &[
    (
        "commit.retry.num-retries",
        "-1",
        "an integer from 0 to 2147483647",
    ),
    ("commit.retry.min-wait-ms", "-1", "a non-negative integer"),
    ("write.target-file-size-bytes", "abc", "a positive integer"),
    (
        "write.parquet.compression-codec",
        "nope",
        "zstd, gzip, snappy, lz4, lz4_raw, brotli, uncompressed or none",
    ),
    ("write.delete.granularity", "row", "file or partition"),
    ("write.delete.mode", "mor", "copy-on-write or merge-on-read"),
    (
        "write.update.isolation-level",
        "none",
        "serializable or snapshot",
    ),
    ("write.distribution-mode", "random", "none, hash or range"),
    (
        "history.expire.min-snapshots-to-keep",
        "0",
        "an integer from 1 to 2147483647",
    ),
    (
        "write.metadata.metrics.column.id",
        "truncate(0)",
        "none, counts, truncate(N) with N from 1 to 2147483647, or full",
    ),
    ("commit.manifest-merge.enabled", "yes", "true or false"),
    ("format-version", "4", "1, 2 or 3"),
    // integers as Java's Integer.parseInt / Long.parseLong read them: blanks refused
    ("format-version", " 3", "1, 2 or 3"),
    ("format-version", "2 ", "1, 2 or 3"),
    (
        "commit.retry.num-retries",
        " 4",
        "an integer from 0 to 2147483647",
    ),
    (
        "write.target-file-size-bytes",
        "1024 ",
        "a positive integer",
    ),
    // words as Java's enums and Boolean.parseBoolean read them: blanks refused
    (
        "write.delete.mode",
        " merge-on-read",
        "copy-on-write or merge-on-read",
    ),
    ("gc.enabled", "true ", "true or false"),
    // icefloe writes Parquet only: a table must not name a format its writes ignore
    ("write.format.default", "orc", "parquet"),
    ("write.delete.format.default", "avro", "parquet"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_icefloe_cannot_use_is_refused_and_nothing_commits() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    run(ctx, "CREATE TABLE ice.ns.b (id INT)").await.unwrap();
    let before = metadata_location(&lake, "ns.b").await;
    for (key, value, expected) in BAD {
        let err = run(
            ctx,
            &format!("ALTER TABLE ice.ns.b SET TBLPROPERTIES ('{key}'='{value}')"),
        )
        .await
        .unwrap_err();
        assert!(
            err.contains(&format!(
                "table property '{key}' is '{value}' (expected {expected})"
            )),
            "{key}={value}: {err}"
        );
        assert_eq!(metadata_location(&lake, "ns.b").await, before, "{key}");
        // CREATE TABLE … TBLPROPERTIES: refused, no table
        let err = run(
            ctx,
            &format!("CREATE TABLE ice.ns.c (id INT) TBLPROPERTIES ('{key}'='{value}')"),
        )
        .await
        .unwrap_err();
        assert!(err.contains(&format!("'{key}' is '{value}'")), "{err}");
        assert!(
            lake.catalog
                .load_table(&TableIdent::parse("ns.c"))
                .await
                .is_err(),
            "{key}: no table created"
        );
    }
    // a compression level outside its codec's range, as the pair will be after the SET
    let err = run(
        ctx,
        "ALTER TABLE ice.ns.b SET TBLPROPERTIES ('write.parquet.compression-level'='30')",
    )
    .await
    .unwrap_err();
    assert!(
        err.contains(
            "table property 'write.parquet.compression-level' is '30' (expected a level from \
             1 to 22 for codec zstd)"
        ),
        "{err}"
    );
    assert_eq!(metadata_location(&lake, "ns.b").await, before);
    // valid values, and unknown properties (free-form as in Java), commit
    run(
        ctx,
        "ALTER TABLE ice.ns.b SET TBLPROPERTIES ('commit.retry.num-retries'='0', \
         'write.parquet.compression-codec'='GZIP', 'write.parquet.compression-level'='9', \
         'write.delete.granularity'='partition', 'made.by'='-1')",
    )
    .await
    .unwrap();
    let props = properties(&lake, "ns.b").await;
    assert_eq!(props["write.parquet.compression-codec"], "GZIP");
    assert_eq!(props["made.by"], "-1");
    run(ctx, "INSERT INTO ice.ns.b VALUES (1)").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_holding_unusable_values_takes_commits_and_is_repaired_with_unset() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    run(ctx, "CREATE TABLE ice.ns.b (id INT)").await.unwrap();
    // another engine (PyIceberg sets any string) writes values icefloe cannot use: the
    // catalog's own commit path takes any property, as the REST protocol does
    let planted: HashMap<String, String> = [
        ("commit.retry.num-retries", "-1"),
        ("commit.retry.min-wait-ms", "-1"),
        ("commit.retry.total-timeout-ms", "soon"),
        ("write.metadata.previous-versions-max", "many"),
        ("write.metadata.delete-after-commit.enabled", "maybe"),
        ("write.target-file-size-bytes", "abc"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let ident = TableIdent::parse("ns.b");
    lake.catalog
        .commit_table(
            &ident,
            &TableCommit {
                requirements: vec![],
                updates: vec![TableUpdate::SetProperties { updates: planted }],
            },
        )
        .await
        .expect("planted");

    // the write that reads the bad value fails, naming it, and commits nothing
    let before = metadata_location(&lake, "ns.b").await;
    let err = run(ctx, "INSERT INTO ice.ns.b VALUES (1)")
        .await
        .unwrap_err();
    assert!(
        err.contains("table property 'write.target-file-size-bytes' is 'abc'"),
        "{err}"
    );
    assert_eq!(metadata_location(&lake, "ns.b").await, before);

    // commits that do not read it go through: other properties, the schema
    for sql in [
        "ALTER TABLE ice.ns.b SET TBLPROPERTIES ('made.by'='me')",
        "ALTER TABLE ice.ns.b ADD COLUMN s VARCHAR",
        "ALTER TABLE ice.ns.b DROP COLUMN s",
    ] {
        run(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // the repair
    run(
        ctx,
        "ALTER TABLE ice.ns.b UNSET TBLPROPERTIES ('commit.retry.num-retries', \
         'commit.retry.min-wait-ms', 'commit.retry.total-timeout-ms', \
         'write.metadata.previous-versions-max', \
         'write.metadata.delete-after-commit.enabled', 'write.target-file-size-bytes')",
    )
    .await
    .unwrap();
    let props = properties(&lake, "ns.b").await;
    assert_eq!(props.get("made.by").map(String::as_str), Some("me"));
    for k in ["commit.retry.num-retries", "write.target-file-size-bytes"] {
        assert!(!props.contains_key(k), "{k} removed");
    }
    run(ctx, "INSERT INTO ice.ns.b VALUES (1), (2)")
        .await
        .unwrap();
    let out = run(ctx, "SELECT sum(id) AS s FROM ice.ns.b").await.unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&out)
        .unwrap()
        .to_string();
    assert!(text.contains("| 3 |"), "{text}");
}

/// A table another engine set to write ORC or Avro files: icefloe's writes refuse it,
/// naming the property, and commit nothing (before, they wrote Parquet files into a table
/// that asked for another format); reads and `UNSET` still work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_refuse_a_file_format_icefloe_does_not_write() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    run(
        ctx,
        "CREATE TABLE ice.ns.f (id INT) TBLPROPERTIES ('format-version'='2', \
         'write.delete.mode'='merge-on-read')",
    )
    .await
    .unwrap();
    run(ctx, "INSERT INTO ice.ns.f VALUES (1), (2), (3)")
        .await
        .unwrap();
    let plant = |k: &str, v: &str| TableCommit {
        requirements: vec![],
        updates: vec![TableUpdate::SetProperties {
            updates: [(k.to_string(), v.to_string())].into_iter().collect(),
        }],
    };
    let ident = TableIdent::parse("ns.f");
    lake.catalog
        .commit_table(&ident, &plant("write.format.default", "ORC"))
        .await
        .expect("planted");
    let before = metadata_location(&lake, "ns.f").await;
    for sql in [
        "INSERT INTO ice.ns.f VALUES (4)",
        "UPDATE ice.ns.f SET id = 5 WHERE id = 1",
        "DELETE FROM ice.ns.f WHERE id = 2",
    ] {
        let err = run(ctx, sql).await.unwrap_err();
        assert!(
            err.contains("table property 'write.format.default' is 'ORC'")
                && err.contains("writes only Parquet"),
            "{sql}: {err}"
        );
        assert_eq!(metadata_location(&lake, "ns.f").await, before, "{sql}");
    }
    let out = run(ctx, "SELECT count(*) AS n FROM ice.ns.f")
        .await
        .unwrap();
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&out)
        .unwrap()
        .to_string();
    assert!(text.contains("| 3 |"), "{text}");

    // data files in Parquet, delete files asked for in Avro: merge-on-read DELETE refuses
    run(
        ctx,
        "ALTER TABLE ice.ns.f UNSET TBLPROPERTIES ('write.format.default')",
    )
    .await
    .unwrap();
    lake.catalog
        .commit_table(&ident, &plant("write.delete.format.default", "avro"))
        .await
        .expect("planted");
    let before = metadata_location(&lake, "ns.f").await;
    let err = run(ctx, "DELETE FROM ice.ns.f WHERE id = 2")
        .await
        .unwrap_err();
    assert!(
        err.contains("table property 'write.delete.format.default' is 'avro'"),
        "{err}"
    );
    assert_eq!(metadata_location(&lake, "ns.f").await, before);
    // an INSERT writes no delete file and goes through
    run(ctx, "INSERT INTO ice.ns.f VALUES (4)").await.unwrap();
}

/// A table with `write.metadata.path` alone (its metadata outside its location): data
/// files are written under `<location>/data`, where its manifests say they are, and other
/// engines read it. The metadata file's directory differed from the recorded location,
/// so opening it took the table for a moved one and every data path was resolved under
/// the metadata directory: files were written to `<write.metadata.path>/data/…` while the
/// manifests named `<location>/data/…`; icefloe read them back through the same rule,
/// PyIceberg and DuckDB failed with "file not found" (found by a tester).
#[tokio::test]
async fn metadata_written_to_write_metadata_path_leaves_data_where_manifests_say() {
    let lake = lake().await;
    let meta = lake.dir.path().join("elsewhere").join("meta");
    crate::dml::create(
        &lake,
        "mp",
        "",
        &format!(", 'write.metadata.path'='{}'", meta.display()),
    )
    .await;
    run(
        &lake.ctx,
        "INSERT INTO ice.ns.mp VALUES (1, 1, 'a', 1.5), (2, 2, 'b', NULL)",
    )
    .await
    .expect("insert");
    run(&lake.ctx, "INSERT INTO ice.ns.mp VALUES (3, 1, 'c', 2.5)")
        .await
        .expect("insert");
    assert!(
        metadata_location(&lake, "ns.mp")
            .await
            .starts_with(&format!("file://{}/", meta.display())),
        "the metadata is written to write.metadata.path"
    );
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.mp"))
        .await
        .expect("table");
    let data_dir = format!("{}/data/", table.metadata().location);
    let files = run(&lake.ctx, "SELECT file_path FROM ice.ns.\"mp$files\"")
        .await
        .expect("files");
    let mut paths = vec![];
    for b in &files {
        let c = datafusion::arrow::array::AsArray::as_string::<i32>(b.column(0));
        paths.extend(c.iter().map(|p| p.expect("path").to_string()));
    }
    assert_eq!(paths.len(), 2);
    for p in &paths {
        assert!(p.starts_with(&data_dir), "{p} not under {data_dir}");
        let local = p.strip_prefix("file://").expect("a local path");
        assert!(std::path::Path::new(local).is_file(), "{p} is not on disk");
    }
    assert!(
        !meta.join("data").exists(),
        "no data under the metadata path"
    );
    crate::dml::other_engines_agree(&lake, "mp").await;
}

/// A copy of a table directory whose `write.metadata.path` is a folder inside it other
/// than `metadata` (`<location>/md`) reads from the copy: its metadata file's directory
/// was taken for the table's, so every path doubled `md` ("`…/copy/md/md/snap-….avro`
/// not found"; found by a tester).
#[tokio::test]
async fn a_copied_table_whose_metadata_path_is_inside_it_reads_from_the_copy() {
    let lake = lake().await;
    crate::dml::create(&lake, "y", "", "").await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.y"))
        .await
        .expect("table");
    let location = table.metadata().location.clone();
    let md = format!("{}/md", location.trim_end_matches('/'));
    for sql in [
        format!("ALTER TABLE ice.ns.y SET TBLPROPERTIES ('write.metadata.path'='{md}')"),
        "INSERT INTO ice.ns.y VALUES (1, 1, 'a', 1.5), (2, 2, 'b', NULL)".to_string(),
        "INSERT INTO ice.ns.y VALUES (3, 1, 'c', 2.5)".to_string(),
    ] {
        run(&lake.ctx, &sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let current = metadata_location(&lake, "ns.y").await;
    assert!(current.contains("/md/"), "{current}");
    let source = std::path::PathBuf::from(location.strip_prefix("file://").expect("local"));
    let copy = lake.dir.path().join("copy");
    copy_dir(&source, &copy);
    let file_name = current.rsplit('/').next().expect("name");
    let copied = copy.join("md").join(file_name);
    let t = icefloe::table::Table::open(&copied.display().to_string())
        .await
        .expect("open the copy");
    let ctx = datafusion::prelude::SessionContext::new();
    ctx.register_table(
        "c",
        std::sync::Arc::new(icefloe::IcebergTableProvider::try_new(t).expect("provider")),
    )
    .expect("register");
    let rows = ctx
        .sql("SELECT count(*) FROM c")
        .await
        .expect("plan")
        .collect()
        .await
        .expect("read the copy");
    let n = datafusion::arrow::array::AsArray::as_primitive::<
        datafusion::arrow::datatypes::Int64Type,
    >(rows[0].column(0))
    .value(0);
    assert_eq!(n, 3);
    // read from the copy: the source's files gone, the copy still reads
    std::fs::remove_dir_all(&source).expect("rm source");
    let rows = ctx
        .sql("SELECT sum(id) FROM c")
        .await
        .expect("plan")
        .collect()
        .await
        .expect("read the copy alone");
    let sum = datafusion::arrow::array::AsArray::as_primitive::<
        datafusion::arrow::datatypes::Int64Type,
    >(rows[0].column(0))
    .value(0);
    assert_eq!(sum, 6);
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

/// `write.metadata.metrics.column.<name>` must name a column of the schema, exactly (case
/// and nesting as Java's `schema.findField`): a misspelt key is refused at `CREATE TABLE`
/// and `SET TBLPROPERTIES`, naming the key, where it was accepted and silently left the
/// column at the default mode (report S65, fault 3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metrics_key_naming_no_column_is_refused() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for column in ["up", "nmae", "st.Y", "st"] {
        let key = format!("write.metadata.metrics.column.{column}");
        let err = run(
            ctx,
            &format!(
                "CREATE TABLE ice.ns.c (id INT, \"Up\" STRING, st STRUCT<y: INT>) \
                 TBLPROPERTIES ('{key}'='full')"
            ),
        )
        .await
        .err();
        if column == "st" {
            // a struct is a field too (Java finds it)
            assert!(err.is_none(), "{key}: {err:?}");
            run(ctx, "DROP TABLE ice.ns.c").await.unwrap();
            continue;
        }
        let err = err.unwrap_or_else(|| panic!("{key} accepted"));
        assert!(
            err.contains(&format!("table property '{key}'"))
                && err.contains(&format!("no column '{column}'")),
            "{key}: {err}"
        );
        assert!(lake
            .catalog
            .load_table(&TableIdent::parse("ns.c"))
            .await
            .is_err());
    }
    run(
        ctx,
        "CREATE TABLE ice.ns.c (id INT, \"Up\" STRING, st STRUCT<y: INT>) TBLPROPERTIES \
         ('write.metadata.metrics.default'='none', 'write.metadata.metrics.column.Up'='full', \
         'write.metadata.metrics.column.st.y'='counts')",
    )
    .await
    .unwrap();
    let before = metadata_location(&lake, "ns.c").await;
    let err = run(
        ctx,
        "ALTER TABLE ice.ns.c SET TBLPROPERTIES ('write.metadata.metrics.column.nmae'='full')",
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("table property 'write.metadata.metrics.column.nmae'"),
        "{err}"
    );
    assert_eq!(metadata_location(&lake, "ns.c").await, before);
    run(
        ctx,
        "ALTER TABLE ice.ns.c SET TBLPROPERTIES ('write.metadata.metrics.column.id'='full')",
    )
    .await
    .unwrap();
    // the key follows a renamed column, and a later SET of another key still commits
    run(ctx, "ALTER TABLE ice.ns.c RENAME COLUMN \"Up\" TO up2")
        .await
        .unwrap();
    run(
        ctx,
        "ALTER TABLE ice.ns.c SET TBLPROPERTIES ('write.metadata.metrics.column.up2'='counts')",
    )
    .await
    .unwrap();
    let props = properties(&lake, "ns.c").await;
    assert_eq!(props["write.metadata.metrics.column.up2"], "counts");
    assert!(!props.contains_key("write.metadata.metrics.column.Up"));
}
