//! Tables whose older partition spec partitions by a column the current schema dropped
//! (`DROP PARTITION FIELD p`, then `DROP COLUMN p`; spec: "Partition Evolution"): the old
//! spec's files keep their partition values, and every row-level change (DELETE, UPDATE,
//! MERGE; copy-on-write and merge-on-read; v2 position deletes and v3 deletion vectors)
//! that rewrites their manifests or adds delete files under the old spec writes those
//! values back with their real type. The rows are the model's after every statement;
//! PyIceberg reads the same rows and partition values. When no schema of the table has
//! the column any more (another engine removed the old schema), such a change fails
//! naming the table and the partition field, and leaves the table as it was.
//!
//! DuckDB is not compared: its `iceberg_scan` aborts the process on such tables
//! ("Can't change source type (STRUCT(p INTEGER)) to target type ("NULL")"), already
//! before any row-level change, because it types the old spec's field against the
//! current schema.

use std::collections::{BTreeMap, HashMap};

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;
use icefloe::catalog::TableIdent;
use serde_json::Value;

use crate::dml::{lake, ok, run, session_over, Lake};
use crate::interop::{assert_same_rows, icefloe_rows, pyiceberg_read, python};
use crate::maintenance::call;

/// The first column of `sql`'s answer (through icefloe's statement layer, which knows
/// the metadata columns), as strings.
async fn strings(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = run(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = vec![];
    for b in &batches {
        let col = cast(b.column(0), &DataType::Utf8).expect("cast");
        let col = col.as_string::<i32>();
        out.extend((0..col.len()).map(|i| col.is_valid(i).then(|| col.value(i).to_string())));
    }
    out.into_iter()
        .map(|v| v.unwrap_or_else(|| panic!("{sql}: a NULL")))
        .collect()
}

/// The table's rows, `id -> v`.
type Rows = BTreeMap<i64, String>;

async fn rows(ctx: &SessionContext, t: &str) -> Rows {
    strings(
        ctx,
        &format!("SELECT concat(CAST(id AS VARCHAR), '=', v) FROM {t}"),
    )
    .await
    .into_iter()
    .map(|r| {
        let (id, v) = r.split_once('=').expect("id=v");
        (id.parse().expect("id"), v.to_string())
    })
    .collect()
}

/// One manifest entry of spec 0 (the spec partitioned by `p`) in the current snapshot of
/// `ice.ns.<name>`: its status, content, file path, referenced data file, `p` and the
/// Arrow type of `p`.
#[derive(Debug)]
struct OldSpecEntry {
    status: i32,
    content: i32,
    path: String,
    referenced: Option<String>,
    p: Option<i32>,
    p_type: String,
}

async fn old_spec_entries(ctx: &SessionContext, name: &str) -> Vec<OldSpecEntry> {
    let sql = format!(
        "SELECT concat_ws('|', CAST(status AS VARCHAR), \
         CAST(data_file['content'] AS VARCHAR), data_file['file_path'], \
         coalesce(data_file['referenced_data_file'], '-'), \
         coalesce(CAST(data_file['partition']['p'] AS VARCHAR), '-'), \
         arrow_typeof(data_file['partition']['p'])) \
         FROM ice.ns.\"{name}$entries\" WHERE data_file['spec_id'] = 0"
    );
    strings(ctx, &sql)
        .await
        .into_iter()
        .map(|r| {
            let f: Vec<&str> = r.split('|').collect();
            assert_eq!(f.len(), 6, "{r}");
            let opt = |s: &str| (s != "-").then(|| s.to_string());
            OldSpecEntry {
                status: f[0].parse().expect("status"),
                content: f[1].parse().expect("content"),
                path: f[2].to_string(),
                referenced: opt(f[3]),
                p: opt(f[4]).map(|p| p.parse().expect("p")),
                p_type: f[5].to_string(),
            }
        })
        .collect()
}

/// Every spec-0 entry of the current snapshot's manifests of `ice.ns.<name>` carries
/// `p` as an Iceberg int (Arrow Int32) with the value its data file was written with
/// (`written`, by path): data files their own, delete files their data file's. Returns
/// the entries.
async fn check_old_spec_entries(
    ctx: &SessionContext,
    name: &str,
    written: &HashMap<String, Option<i32>>,
    what: &str,
) -> Vec<OldSpecEntry> {
    let entries = old_spec_entries(ctx, name).await;
    for e in &entries {
        assert_eq!(e.p_type, "Int32", "{what}: {e:?}");
        match (e.content, &e.referenced) {
            (0, _) => assert_eq!(Some(&e.p), written.get(&e.path), "{what}: {e:?}"),
            (_, Some(data)) => assert_eq!(Some(&e.p), written.get(data), "{what}: {e:?}"),
            (_, None) => assert!(
                written.values().any(|p| *p == e.p),
                "{what}: {e:?} is of no partition written"
            ),
        }
    }
    entries
}

/// What a statement does to the model's rows.
type Change = Box<dyn Fn(&mut Rows)>;

/// The statements and what each does to the rows.
fn statements(t: &str) -> Vec<(String, Change)> {
    vec![
        (
            format!("DELETE FROM {t} WHERE id IN (2, 6)"),
            Box::new(|r: &mut Rows| {
                r.retain(|id, _| ![2, 6].contains(id));
            }),
        ),
        (
            format!("UPDATE {t} SET v = concat(v, '!') WHERE id IN (1, 4, 7)"),
            Box::new(|r: &mut Rows| {
                for (id, v) in r.iter_mut() {
                    if [1, 4, 7].contains(id) {
                        v.push('!');
                    }
                }
            }),
        ),
        (
            format!(
                "MERGE INTO {t} USING (SELECT * FROM (VALUES (3, 'm'), (5, 'x'), (9, 'n')) \
                 AS s(id, v)) s ON {t}.id = s.id \
                 WHEN MATCHED AND s.v = 'x' THEN DELETE \
                 WHEN MATCHED THEN UPDATE SET v = s.v \
                 WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)"
            ),
            Box::new(|r: &mut Rows| {
                for (id, v) in [(3, "m"), (5, "x"), (9, "n")] {
                    match r.contains_key(&id) {
                        true if v == "x" => {
                            r.remove(&id);
                        }
                        _ => {
                            r.insert(id, v.to_string());
                        }
                    }
                }
            }),
        ),
    ]
}

/// `ice.ns.<name>` (format `version`, row-level `mode`) partitioned by `p`, with rows in
/// three partitions (one null) under spec 0, then `p` dropped from the spec and the
/// schema and two rows appended under spec 1. Returns the model's rows and the
/// partition value of each spec-0 data file.
async fn table_with_dropped_source(
    lake: &Lake,
    name: &str,
    version: u8,
    mode: &str,
) -> (Rows, HashMap<String, Option<i32>>) {
    let ctx = &lake.ctx;
    let t = format!("ice.ns.{name}");
    ok(
        ctx,
        &format!(
            "CREATE TABLE {t} (id BIGINT, p INT, v STRING) PARTITIONED BY (p) \
             TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='{mode}', \
             'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
        ),
    )
    .await;
    let mut model = Rows::new();
    let mut p_of_id = HashMap::new();
    for (id, p, v) in [
        (1, Some(1), "a"),
        (2, Some(1), "b"),
        (3, Some(2), "c"),
        (4, None, "d"),
        (5, Some(2), "e"),
    ] {
        model.insert(id, v.to_string());
        p_of_id.insert(id, p);
    }
    let values: Vec<String> = model
        .iter()
        .map(|(id, v)| {
            let p = p_of_id[id].map_or("NULL".to_string(), |p: i32| p.to_string());
            format!("({id}, {p}, '{v}')")
        })
        .collect();
    ok(
        ctx,
        &format!("INSERT INTO {t} VALUES {}", values.join(", ")),
    )
    .await;
    // each spec-0 file's partition value, from the data it holds
    let mut written = HashMap::new();
    for r in strings(
        ctx,
        &format!("SELECT concat(CAST(id AS VARCHAR), '|', _file) FROM {t}"),
    )
    .await
    {
        let (id, path) = r.split_once('|').expect("id|file");
        let p = p_of_id[&id.parse::<i64>().expect("id")];
        assert_eq!(*written.entry(path.to_string()).or_insert(p), p, "{path}");
    }
    assert_eq!(written.len(), 3, "{written:?}");
    ok(ctx, &format!("ALTER TABLE {t} DROP PARTITION FIELD p")).await;
    ok(ctx, &format!("ALTER TABLE {t} DROP COLUMN p")).await;
    ok(ctx, &format!("INSERT INTO {t} VALUES (6, 'f'), (7, 'g')")).await;
    model.insert(6, "f".into());
    model.insert(7, "g".into());
    assert_eq!(rows(ctx, &t).await, model, "{name}: before the changes");
    (model, written)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_level_changes_after_the_old_specs_source_column_was_dropped() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for version in [2u8, 3] {
        for mode in ["copy-on-write", "merge-on-read"] {
            let name = format!("v{version}_{}", mode.replace('-', "_"));
            let t = format!("ice.ns.{name}");
            let (mut model, written) = table_with_dropped_source(&lake, &name, version, mode).await;
            check_old_spec_entries(ctx, &name, &written, &name).await;
            for (i, (sql, change)) in statements(&t).into_iter().enumerate() {
                ok(ctx, &sql).await;
                change(&mut model);
                let what = format!("{name}: {sql}");
                assert_eq!(rows(ctx, &t).await, model, "{what}");
                let entries = check_old_spec_entries(ctx, &name, &written, &what).await;
                if i == 0 {
                    // the DELETE wrote spec-0 manifest entries: copy-on-write removes
                    // the file of ids 1 and 2 (a DELETED entry in the rewritten
                    // manifest), merge-on-read adds a delete file under spec 0
                    let wrote = entries.iter().any(|e| match mode {
                        "copy-on-write" => e.status == 2 && e.content == 0,
                        _ => e.status == 1 && e.content == 1,
                    });
                    assert!(wrote, "{what}: {entries:?}");
                    maintenance_rewrites(&lake, &name, version, mode, &model, &written).await;
                }
            }
            pyiceberg_agrees(&lake, &name, &written).await;
        }
    }
}

/// Maintenance writes manifests of the old spec: `rewrite_manifests` on a copy-on-write
/// table (a merge-on-read one has a single data manifest per spec, which it leaves
/// alone, as Java does) and `rewrite_position_delete_files` (all of them) on a v2
/// merge-on-read table. The rows stay the model's, the spec-0 entries keep their values.
async fn maintenance_rewrites(
    lake: &Lake,
    name: &str,
    version: u8,
    mode: &str,
    model: &Rows,
    written: &HashMap<String, Option<i32>>,
) {
    let calls = match (version, mode) {
        // spec 0's manifests: without spec_id only the current spec's are rewritten
        (_, "copy-on-write") => vec![(
            format!("CALL ice.system.rewrite_manifests(table => 'ns.{name}', spec_id => 0)"),
            "rewritten_manifests_count",
        )],
        (2, _) => vec![(
            format!(
                "CALL ice.system.rewrite_position_delete_files('ns.{name}', \
                 options => map('rewrite-all', 'true'))"
            ),
            "rewritten_delete_files_count",
        )],
        // v3 deletion vectors are not rewritten while their data file lives
        _ => vec![],
    };
    for (sql, rewritten) in calls {
        let answer = call(lake, &sql).await;
        let what = format!("{name}: {sql}");
        assert!(answer[rewritten] > 0, "{what}: {answer:?}");
        assert_eq!(
            rows(&lake.ctx, &format!("ice.ns.{name}")).await,
            *model,
            "{what}"
        );
        let entries = check_old_spec_entries(&lake.ctx, name, written, &what).await;
        assert!(!entries.is_empty(), "{what}");
        // the rewrite's snapshot added a manifest of spec 0
        let snapshot = lake
            .catalog
            .load_table(&TableIdent::parse(&format!("ns.{name}")))
            .await
            .expect("load")
            .metadata()
            .current_snapshot_id
            .expect("a snapshot");
        let added = strings(
            &lake.ctx,
            &format!(
                "SELECT count(*) FROM ice.ns.\"{name}$manifests\" \
                 WHERE partition_spec_id = 0 AND added_snapshot_id = {snapshot}"
            ),
        )
        .await;
        assert_ne!(added, ["0"], "{what}: {entries:?}");
    }
}

/// PyIceberg reads `ns.<name>` with icefloe's rows, and the spec-0 files it plans with
/// the partition values they were written with.
async fn pyiceberg_agrees(lake: &Lake, name: &str, written: &HashMap<String, Option<i32>>) {
    if python().is_none() {
        return;
    }
    let ident = format!("ns.{name}");
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&ident))
        .await
        .expect("load");
    let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema");
    let ours = icefloe_rows(&lake.ctx, &format!("ice.{ident}"), &schema).await;
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, &ident);
    assert_same_rows(
        &format!("{ident}: icefloe vs PyIceberg"),
        pyi["rows"].as_array().expect("rows"),
        &ours,
    );
    for f in pyi["files"].as_array().expect("files") {
        let path = f["file_path"].as_str().expect("path");
        if let Some(p) = written.get(path) {
            assert_eq!(
                f["partition"]["p"],
                p.map_or(Value::Null, Value::from),
                "{ident}: {f}"
            );
        }
    }
}

/// When no schema of the table has the dropped column (the schema holding it removed
/// from the metadata, as another engine may), the old spec's identity values have no
/// type: a change that must write them fails naming the table and the partition field,
/// and the table stays as it was; a change to files of the current spec still commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_level_changes_refuse_an_old_spec_no_schema_types() {
    let lake = lake().await;
    let t = "ice.ns.lost";
    let (mut model, _) = table_with_dropped_source(&lake, "lost", 2, "copy-on-write").await;
    let ident = TableIdent::parse("ns.lost");
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let location = table.metadata_location().to_string();
    let path = location.strip_prefix("file://").unwrap_or(&location);
    let mut metadata: Value =
        serde_json::from_slice(&std::fs::read(path).expect("metadata")).expect("JSON");
    let current = metadata["current-schema-id"].clone();
    metadata["schemas"]
        .as_array_mut()
        .expect("schemas")
        .retain(|s| s["schema-id"] == current);
    let edited = path.replace(".metadata.json", "-edited.metadata.json");
    std::fs::write(&edited, serde_json::to_vec(&metadata).expect("JSON")).expect("write");
    let conn = rusqlite::Connection::open(&lake.db).expect("sqlite");
    conn.execute(
        "UPDATE iceberg_tables SET metadata_location = ?1 WHERE table_name = 'lost'",
        rusqlite::params![location.replace(path, &edited)],
    )
    .expect("point the catalog at the edited metadata");
    let ctx = session_over(&lake).await;
    let before = lake
        .catalog
        .load_table(&ident)
        .await
        .expect("load")
        .metadata()
        .current_snapshot_id;
    assert_eq!(rows(&ctx, t).await, model, "readable without the schema");
    let e = run(&ctx, &format!("DELETE FROM {t} WHERE id = 2"))
        .await
        .expect_err("the rewritten manifest cannot type 'p'");
    assert!(
        e.contains("'ns.lost'") && e.contains("partition field 'p' of spec 0"),
        "{e}"
    );
    let after = lake.catalog.load_table(&ident).await.expect("load");
    assert_eq!(after.metadata().current_snapshot_id, before, "{e}");
    assert_eq!(rows(&ctx, t).await, model, "unchanged after {e}");
    // rows of the current spec's files: spec 0's manifest is carried over untouched
    ok(&ctx, &format!("DELETE FROM {t} WHERE id = 7")).await;
    model.remove(&7);
    assert_eq!(rows(&ctx, t).await, model, "after deleting id 7");
}
