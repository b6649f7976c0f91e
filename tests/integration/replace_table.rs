//! `CREATE OR REPLACE TABLE` and `REPLACE TABLE` (Spark's, on Iceberg): the table keeps
//! its history and the ids of the columns it keeps, the `AS` query's rows land in the
//! same commit, and a statement that fails leaves the table as it was.

use std::sync::Arc;

use icefloe::catalog::TableIdent;
use icefloe::spec::{PartitionSpec, Schema};
use icefloe::transaction::{ReplaceTable, Transaction, UpdateSchema};
use icefloe::ErrorKind;

use crate::dml::{lake, ok, other_engines_agree, run, Lake};

async fn metadata(lake: &Lake, name: &str) -> icefloe::Table {
    lake.catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load")
}

/// (name, id) of each top-level column of the current schema.
fn column_ids(table: &icefloe::Table) -> Vec<(String, i32)> {
    table
        .metadata()
        .current_schema()
        .columns()
        .iter()
        .map(|f| (f.name.clone(), f.id))
        .collect()
}

/// Every file under the table's directory (data and metadata).
fn files(lake: &Lake, name: &str) -> Vec<String> {
    let mut out = vec![];
    let mut stack = vec![lake.warehouse.join("ns").join(name)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path().to_string_lossy().to_string());
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_or_replace_as_select_keeps_history_and_the_ids_of_kept_columns() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, old STRING, k INT) PARTITIONED BY (bucket(4, id)) \
         TBLPROPERTIES ('format-version'='2', 'a'='1')",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.t VALUES (1, 'x', 1), (2, 'y', 2), (3, 'z', 2)",
    )
    .await;
    let before = metadata(&lake, "t").await;
    let old_snapshot = before.metadata().current_snapshot_id.expect("snapshot");
    // the query reads the table it replaces
    ok(
        &lake.ctx,
        "CREATE OR REPLACE TABLE ice.ns.t PARTITIONED BY (k) TBLPROPERTIES ('b'='2') AS \
         SELECT id * 10 AS id, k, concat(old, '!') AS s, CAST(id AS DOUBLE) / 2 AS d \
         FROM ice.ns.t WHERE id > 1",
    )
    .await;
    let after = metadata(&lake, "t").await;
    let m = after.metadata();
    // `id` and `k` keep ids 1 and 3; `s` and `d` follow the last column id (3)
    assert_eq!(
        column_ids(&after),
        [
            ("id".to_string(), 1),
            ("k".to_string(), 3),
            ("s".to_string(), 4),
            ("d".to_string(), 5)
        ]
    );
    assert_eq!(m.schemas.len(), 2);
    let spec = m.default_partition_spec().expect("spec");
    assert_eq!(
        (spec.fields[0].source_id, spec.field_id(0)),
        (3, 1001),
        "identity(k) is a new partition field after bucket(4, id)'s 1000"
    );
    assert_eq!(m.properties.get("a").map(String::as_str), Some("1"));
    assert_eq!(m.properties.get("b").map(String::as_str), Some("2"));
    assert_eq!(m.table_uuid, before.metadata().table_uuid);
    // one commit: the replaced table's snapshots stay, the new one starts a new line
    assert_eq!(m.snapshots.len(), 2);
    let current = m.current_snapshot().expect("current");
    assert_eq!(current.parent_snapshot_id, None);
    assert_eq!(
        ok(&lake.ctx, "SELECT id, k, s, d FROM ice.ns.t ORDER BY id").await,
        "+----+---+----+-----+\n\
         | id | k | s  | d   |\n\
         +----+---+----+-----+\n\
         | 20 | 2 | y! | 1.0 |\n\
         | 30 | 2 | z! | 1.5 |\n\
         +----+---+----+-----+"
    );
    // time travel reads the replaced table in its own schema
    assert_eq!(
        ok(
            &lake.ctx,
            &format!("SELECT * FROM ice.ns.\"t@{old_snapshot}\" ORDER BY id"),
        )
        .await,
        "+----+-----+---+\n\
         | id | old | k |\n\
         +----+-----+---+\n\
         | 1  | x   | 1 |\n\
         | 2  | y   | 2 |\n\
         | 3  | z   | 2 |\n\
         +----+-----+---+"
    );
    other_engines_agree(&lake, "t").await;
    // a query naming metadata columns, as CTAS takes it
    ok(
        &lake.ctx,
        "CREATE OR REPLACE TABLE ice.ns.t AS SELECT id, _spec_id AS k, s, d FROM ice.ns.t",
    )
    .await;
    assert_eq!(
        ok(&lake.ctx, "SELECT id, k FROM ice.ns.t ORDER BY id").await,
        "+----+---+\n| id | k |\n+----+---+\n| 20 | 1 |\n| 30 | 1 |\n+----+---+",
        "the rows read the spec id (1) of the files they were read from"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_without_a_query_empties_the_table_and_replace_needs_a_table() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, s STRING) TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    ok(&lake.ctx, "INSERT INTO ice.ns.t VALUES (1, 'a')").await;
    ok(
        &lake.ctx,
        "REPLACE TABLE ice.ns.t (id BIGINT, k INT, s STRING, d DOUBLE) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    let t = metadata(&lake, "t").await;
    assert_eq!(t.metadata().current_snapshot_id, None);
    assert_eq!(
        t.metadata().format_version,
        icefloe::spec::FormatVersion::V3
    );
    assert_eq!(t.metadata().snapshots.len(), 1, "history kept");
    assert_eq!(
        ok(&lake.ctx, "SELECT count(*) AS n FROM ice.ns.t").await,
        "+---+\n| n |\n+---+\n| 0 |\n+---+"
    );
    // the table takes writes as a v3 table, and the other engines read it
    ok(&lake.ctx, "INSERT INTO ice.ns.t VALUES (5, 1, 'e', 0.5)").await;
    other_engines_agree(&lake, "t").await;
    // a downgrade is refused; REPLACE TABLE needs the table; CREATE OR REPLACE makes it
    let e = run(
        &lake.ctx,
        "CREATE OR REPLACE TABLE ice.ns.t (id BIGINT) TBLPROPERTIES ('format-version'='2')",
    )
    .await
    .expect_err("downgrade");
    assert!(
        e.contains("CREATE OR REPLACE TABLE ice.ns.t") && e.contains("below the table's 3"),
        "{e}"
    );
    let e = run(&lake.ctx, "REPLACE TABLE ice.ns.nope (id BIGINT)")
        .await
        .expect_err("missing");
    assert!(
        e.contains("REPLACE TABLE ice.ns.nope: table does not exist"),
        "{e}"
    );
    ok(
        &lake.ctx,
        "CREATE OR REPLACE TABLE ice.ns.made AS SELECT 1 AS id, 'a' AS s",
    )
    .await;
    assert_eq!(
        ok(&lake.ctx, "SELECT * FROM ice.ns.made").await,
        "+----+---+\n| id | s |\n+----+---+\n| 1  | a |\n+----+---+"
    );
}

/// A replacement whose query fails, or whose table changed its columns meanwhile,
/// commits nothing and leaves no file behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_replace_leaves_the_table_as_it_was() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, s STRING) TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    ok(&lake.ctx, "INSERT INTO ice.ns.t VALUES (1, 'a'), (2, 'b')").await;
    let before = metadata(&lake, "t").await;
    let files_before = files(&lake, "t");
    // fails while the rows are written (after some were)
    let e = run(
        &lake.ctx,
        "CREATE OR REPLACE TABLE ice.ns.t AS SELECT id, CAST(s AS INT) AS n FROM ice.ns.t",
    )
    .await
    .expect_err("the cast fails");
    assert!(e.contains("CREATE OR REPLACE TABLE ice.ns.t"), "{e}");
    let after = metadata(&lake, "t").await;
    assert_eq!(after.metadata_location(), before.metadata_location());
    assert_eq!(files(&lake, "t"), files_before);

    // staged, then another writer adds a column: the commit fails, not retried
    let mut replacement = ReplaceTable::new(
        Schema::new(
            0,
            vec![icefloe::spec::NestedField::optional(
                1,
                "id",
                icefloe::spec::Type::Primitive(icefloe::spec::PrimitiveType::Long),
            )],
        ),
        PartitionSpec::unpartitioned(),
        Default::default(),
    );
    let staged = replacement.staged(&before).expect("staged");
    assert_eq!(staged.metadata().current_snapshot_id, None);
    Transaction::new(
        Arc::clone(&lake.catalog),
        TableIdent::parse("ns.t"),
        before.clone(),
    )
    .add_action(UpdateSchema::new().add_column(
        &[],
        "extra",
        icefloe::spec::Type::Primitive(icefloe::spec::PrimitiveType::Int),
        None,
        None,
    ))
    .commit()
    .await
    .expect("schema change");
    let changed = metadata(&lake, "t").await;
    let e = Transaction::new(Arc::clone(&lake.catalog), TableIdent::parse("ns.t"), before)
        .add_action(replacement)
        .commit()
        .await
        .expect_err("the schema moved");
    assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{e}");
    assert_eq!(
        metadata(&lake, "t").await.metadata_location(),
        changed.metadata_location()
    );
}

/// v1 partition tuples are positional: a replaced v1 spec keeps every field of the old
/// one in place with its id (`void` when dropped) and adds new fields after them, so old
/// files' partition values keep their meaning (found by a new-user tester: the new
/// fields took the old ids, and `_partition.k` of an old file read another field).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacing_a_v1_spec_keeps_old_fields_in_place() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, s STRING, k INT) PARTITIONED BY (k) \
         TBLPROPERTIES ('format-version'='1')",
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (1, 'a', 7)").await;
    ok(ctx, "ALTER TABLE ice.ns.t CREATE BRANCH dev").await;
    ok(
        ctx,
        "REPLACE TABLE ice.ns.t (id BIGINT, s STRING, k INT) PARTITIONED BY (s) \
         AS SELECT * FROM ice.ns.t",
    )
    .await;
    let t = metadata(&lake, "t").await;
    let spec = t.metadata().default_partition_spec().expect("spec");
    let fields: Vec<(String, i32, String)> = spec
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.clone(), spec.field_id(i), f.transform.to_string()))
        .collect();
    assert_eq!(
        fields,
        [
            ("k".to_string(), 1000, "void".to_string()),
            ("s".to_string(), 1001, "identity".to_string())
        ]
    );
    assert_eq!(
        ok(
            ctx,
            "SELECT count(*) AS n FROM ice.ns.\"t@dev\" WHERE _partition.k = 7"
        )
        .await,
        "+---+\n| n |\n+---+\n| 1 |\n+---+"
    );
    assert_eq!(
        ok(ctx, "SELECT id, s, k FROM ice.ns.t").await,
        "+----+---+---+\n| id | s | k |\n+----+---+---+\n| 1  | a | 7 |\n+----+---+---+"
    );
}

/// Reserved properties (values that live in metadata fields) are refused by CREATE and
/// REPLACE as by `SET TBLPROPERTIES`; a kept column keeps its `initial-default`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_refuses_reserved_properties_and_keeps_initial_defaults() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for statement in [
        "CREATE TABLE ice.ns.r (id BIGINT) TBLPROPERTIES ('uuid'='x')",
        "CREATE OR REPLACE TABLE ice.ns.r (id BIGINT) TBLPROPERTIES ('snapshot-count'='3')",
    ] {
        let e = run(ctx, statement).await.expect_err(statement);
        assert!(e.contains("is reserved"), "{statement}: {e}");
    }
    ok(
        ctx,
        "CREATE TABLE ice.ns.d (id BIGINT, n INT DEFAULT 5) TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.d (id) VALUES (1)").await;
    let e = run(
        ctx,
        "REPLACE TABLE ice.ns.d (id BIGINT) TBLPROPERTIES ('current-snapshot-id'='1')",
    )
    .await
    .expect_err("reserved");
    assert!(e.contains("'current-snapshot-id' is reserved"), "{e}");
    ok(
        ctx,
        "REPLACE TABLE ice.ns.d (id BIGINT, n INT DEFAULT 6) TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    let t = metadata(&lake, "d").await;
    let n = &t.metadata().current_schema().columns()[1];
    assert_eq!(n.initial_default, Some(serde_json::json!(5)));
    assert_eq!(n.write_default, Some(serde_json::json!(6)));
    ok(ctx, "INSERT INTO ice.ns.d (id) VALUES (2)").await;
    assert_eq!(
        ok(ctx, "SELECT id, n FROM ice.ns.d").await,
        "+----+---+\n| id | n |\n+----+---+\n| 2  | 6 |\n+----+---+"
    );
}
