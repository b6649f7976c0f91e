//! Metadata columns of the table a `DELETE` or `UPDATE` changes, in its `WHERE` and `SET`
//! values (`_file`, `t._pos`, `_partition.k`, `_spec_id`, `_deleted`, v3 `_row_id`), as
//! Spark runs them on Iceberg tables: each statement changes the rows a `SELECT … _file,
//! _pos, …` of the same snapshot names, in both write modes, on v2 and v3; the result
//! reads the same in PyIceberg and DuckDB.

use std::collections::BTreeMap;

use datafusion::arrow::util::display::array_value_to_string;
use datafusion::prelude::SessionContext;

use crate::dml::{count, create, lake, ok, other_engines_agree, Lake};

/// Rows of `sql` as strings.
async fn rows(ctx: &SessionContext, sql: &str) -> Vec<Vec<String>> {
    let batches = crate::dml::run(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
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

/// One row of the table with where it lives, as a `SELECT` reads it.
#[derive(Debug, Clone, PartialEq)]
struct Placed {
    /// `id, k, s, d` as strings.
    row: Vec<String>,
    file: String,
    pos: i64,
    spec_id: String,
    partition_k: String,
    /// v3: `_row_id`.
    row_id: Option<String>,
}

/// Every row of `t` with its metadata columns, by `id`.
async fn placed(ctx: &SessionContext, t: &str, v3: bool) -> Vec<Placed> {
    let lineage = if v3 { ", _row_id" } else { "" };
    rows(
        ctx,
        &format!(
            "SELECT id, k, s, d, _file, _pos, _spec_id, _partition.k{lineage} FROM {t} \
             ORDER BY id"
        ),
    )
    .await
    .into_iter()
    .map(|r| Placed {
        row: r[..4].to_vec(),
        file: r[4].clone(),
        pos: r[5].parse().expect("pos"),
        spec_id: r[6].clone(),
        partition_k: r[7].clone(),
        row_id: r.get(8).cloned(),
    })
    .collect()
}

/// The table's rows (`id, k, s, d`) by `id`.
async fn table_rows(ctx: &SessionContext, t: &str) -> Vec<Vec<String>> {
    rows(ctx, &format!("SELECT id, k, s, d FROM {t} ORDER BY id")).await
}

/// `ice.ns.<name>` partitioned by `k`, in `mode` for `DELETE`, `UPDATE` and `MERGE`, format
/// `version`, holding three data files in partition `k = 1` (rows at positions 0–2).
async fn table(lake: &Lake, name: &str, mode: &str, version: u8) -> String {
    create(
        lake,
        name,
        "PARTITIONED BY (k)",
        &format!(
            ", 'format-version'='{version}', 'write.delete.mode'='{mode}', \
             'write.update.mode'='{mode}', 'write.merge.mode'='{mode}'"
        ),
    )
    .await;
    let t = format!("ice.ns.{name}");
    for values in [
        "(1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0), (4, 1, 'd', 4.0)",
        "(5, 1, 'e', 5.0), (6, 2, 'f', 6.0), (7, 1, 'g', 7.0), (8, 3, 'h', 8.0)",
        "(9, 1, 'i', 9.0), (10, 1, 'j', 10.0), (11, 1, 'k', 11.0), (12, 2, 'l', 12.0)",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO {t} VALUES {values}")).await;
    }
    t
}

/// `DELETE` and `UPDATE` conditions and `SET` values reading `_file`, `_pos`,
/// `_partition.k`, `_spec_id`, `_deleted` (and on v3 `_row_id`), qualified, aliased or
/// not, change exactly the rows a `SELECT` of the same snapshot gives those values, in
/// both write modes on v2 and v3 (each statement failed: "metadata columns in DELETE are
/// not supported yet"). Updated rows keep their `_row_id` on v3. The merge-on-read and
/// copy-on-write v2 results read the same in PyIceberg and DuckDB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_and_update_by_metadata_columns() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for version in [2u8, 3] {
        for mode in ["copy-on-write", "merge-on-read"] {
            let name = format!("m_{}_v{version}", mode.replace('-', "_"));
            let t = table(&lake, &name, mode, version).await;
            let v3 = version == 3;
            let what = name.clone();

            // DELETE by position: every file's row at position 1
            let before = placed(ctx, &t, v3).await;
            assert!(before.iter().any(|p| p.pos == 2), "{what}: {before:?}");
            let n = count(ctx, &format!("DELETE FROM {t} WHERE _pos = 1")).await;
            let want: Vec<Vec<String>> = before
                .iter()
                .filter(|p| p.pos != 1)
                .map(|p| p.row.clone())
                .collect();
            assert_eq!(n as usize, before.len() - want.len(), "{what}");
            assert_eq!(table_rows(ctx, &t).await, want, "{what}: _pos = 1");

            // DELETE by file, through an alias: the rows of one file of partition k = 1
            let before = placed(ctx, &t, v3).await;
            let file = before
                .iter()
                .find(|p| p.row[0] == "5")
                .expect("id 5")
                .file
                .clone();
            count(
                ctx,
                &format!("DELETE FROM {t} AS x WHERE x._file = '{file}' AND x.id <> 9"),
            )
            .await;
            let want: Vec<Vec<String>> = before
                .iter()
                .filter(|p| p.file != file || p.row[0] == "9")
                .map(|p| p.row.clone())
                .collect();
            assert_eq!(table_rows(ctx, &t).await, want, "{what}: _file");

            // UPDATE with metadata columns in SET and WHERE (partition field, position)
            let before = placed(ctx, &t, v3).await;
            let n = count(
                ctx,
                &format!(
                    "UPDATE {t} SET s = _file, d = CAST(_pos AS DOUBLE) + 0.5 \
                     WHERE _partition.k = 1 AND _pos >= 1"
                ),
            )
            .await;
            let mut changed = 0;
            let want: Vec<Vec<String>> = before
                .iter()
                .map(|p| {
                    let mut row = p.row.clone();
                    if p.partition_k == "1" && p.pos >= 1 {
                        changed += 1;
                        row[2] = p.file.clone();
                        row[3] = format!("{}.5", p.pos);
                    }
                    row
                })
                .collect();
            assert!(changed > 0, "{what}");
            assert_eq!(n, changed, "{what}");
            assert_eq!(table_rows(ctx, &t).await, want, "{what}: _partition.k");
            if v3 {
                // an updated row keeps its _row_id (spec: "Row Lineage")
                let after = placed(ctx, &t, v3).await;
                let ids = |ps: &[Placed]| -> BTreeMap<String, Option<String>> {
                    ps.iter()
                        .map(|p| (p.row[0].clone(), p.row_id.clone()))
                        .collect()
                };
                assert_eq!(ids(&after), ids(&before), "{what}: _row_id kept");
            }

            // UPDATE qualified by the table's name; _spec_id, _deleted
            let before = placed(ctx, &t, v3).await;
            count(
                ctx,
                &format!(
                    "UPDATE {t} SET id = id + 100 WHERE {name}._spec_id = 0 AND \
                     {name}._pos = 0 AND NOT _deleted AND k = 2"
                ),
            )
            .await;
            let mut want: Vec<Vec<String>> = before
                .iter()
                .map(|p| {
                    let mut row = p.row.clone();
                    if p.spec_id == "0" && p.pos == 0 && p.row[1] == "2" {
                        row[0] = (row[0].parse::<i64>().unwrap() + 100).to_string();
                    }
                    row
                })
                .collect();
            want.sort_by_key(|r| r[0].parse::<i64>().unwrap());
            assert_eq!(table_rows(ctx, &t).await, want, "{what}: _spec_id");
            assert_eq!(
                count(ctx, &format!("DELETE FROM {t} WHERE _deleted")).await,
                0,
                "{what}"
            );

            if v3 {
                // _row_id: stored in rewritten files or inherited from first_row_id
                let before = placed(ctx, &t, v3).await;
                let target = before[before.len() / 2].clone();
                let row_id = target.row_id.clone().expect("row id");
                assert_ne!(row_id, "", "{what}");
                count(ctx, &format!("DELETE FROM {t} WHERE _row_id = {row_id}")).await;
                let want: Vec<Vec<String>> = before
                    .iter()
                    .filter(|p| p.row_id.as_deref() != Some(row_id.as_str()))
                    .map(|p| p.row.clone())
                    .collect();
                assert_eq!(want.len() + 1, before.len(), "{what}");
                assert_eq!(table_rows(ctx, &t).await, want, "{what}: _row_id");
            }
            if !v3 {
                other_engines_agree(&lake, &name).await;
            }
        }
    }
}

/// A `MERGE` reads its target's metadata columns qualified (`t._spec_id` in `ON`,
/// `t._pos` in a clause condition, `t._file` in `SET` values, `x._partition.k` through an
/// alias): each target row is matched, deleted or updated as a `SELECT` of the same
/// snapshot gives its values, in both write modes on v2 and v3 (it failed: "metadata
/// columns of a MERGE's target table are not supported yet"). The v2 results read the
/// same in PyIceberg and DuckDB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_by_target_metadata_columns() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for version in [2u8, 3] {
        for mode in ["copy-on-write", "merge-on-read"] {
            let name = format!("g_{}_v{version}", mode.replace('-', "_"));
            let t = table(&lake, &name, mode, version).await;
            let v3 = version == 3;
            let src = format!("ice.ns.src_{name}");
            ok(ctx, &format!("CREATE TABLE {src} (id BIGINT, s STRING)")).await;
            ok(
                ctx,
                &format!(
                    "INSERT INTO {src} VALUES (1, 'x1'), (2, 'x2'), (3, 'x3'), (4, 'x4'), \
                     (5, 'x5'), (7, 'x7'), (10, 'x10'), (40, 'x40')"
                ),
            )
            .await;
            let sources = ["1", "2", "3", "4", "5", "7", "10", "40"];
            let before = placed(ctx, &t, v3).await;
            let n = count(
                ctx,
                &format!(
                    "MERGE INTO {t} USING {src} s ON {name}.id = s.id AND {name}._spec_id = 0 \
                     WHEN MATCHED AND {name}._pos = 0 THEN DELETE \
                     WHEN MATCHED THEN UPDATE SET s = {name}._file, \
                     d = CAST({name}._pos AS DOUBLE) \
                     WHEN NOT MATCHED THEN INSERT (id, k, s, d) VALUES (s.id, 9, s.s, 0.0)"
                ),
            )
            .await;
            let mut want: Vec<Vec<String>> = before
                .iter()
                .filter(|p| !(sources.contains(&p.row[0].as_str()) && p.pos == 0))
                .map(|p| {
                    let mut row = p.row.clone();
                    if sources.contains(&p.row[0].as_str()) {
                        row[2] = p.file.clone();
                        row[3] = format!("{}.0", p.pos);
                    }
                    row
                })
                .collect();
            want.push(vec!["40".into(), "9".into(), "x40".into(), "0.0".into()]);
            want.sort_by_key(|r| r[0].parse::<i64>().expect("id"));
            assert_eq!(n, 8, "{name}");
            assert_eq!(table_rows(ctx, &t).await, want, "{name}: ON/clauses");

            // through an alias: a partition field and the position in the clause
            let before = placed(ctx, &t, v3).await;
            count(
                ctx,
                &format!(
                    "MERGE INTO {t} AS x USING {src} s ON x.id = s.id \
                     WHEN MATCHED AND x._partition.k = 1 AND x._pos > 0 THEN UPDATE SET \
                     s = concat(s.s, '@', CAST(x._pos AS STRING))"
                ),
            )
            .await;
            let want: Vec<Vec<String>> = before
                .iter()
                .map(|p| {
                    let mut row = p.row.clone();
                    if sources.contains(&p.row[0].as_str()) && p.partition_k == "1" && p.pos > 0 {
                        row[2] = format!("x{}@{}", p.row[0], p.pos);
                    }
                    row
                })
                .collect();
            assert_eq!(table_rows(ctx, &t).await, want, "{name}: alias");

            // Spark's UPDATE SET * / INSERT * beside a target metadata column: the
            // target's own columns from the source's
            let before = placed(ctx, &t, v3).await;
            count(
                ctx,
                &format!(
                    "MERGE INTO {t} AS x USING (SELECT id, 5 AS k, s, 1.5 AS d FROM {src}) s \
                     ON x.id = s.id WHEN MATCHED AND x._pos = 1 THEN UPDATE SET * \
                     WHEN NOT MATCHED THEN INSERT *"
                ),
            )
            .await;
            let mut want: Vec<Vec<String>> = before
                .iter()
                .map(
                    |p| match sources.contains(&p.row[0].as_str()) && p.pos == 1 {
                        true => vec![
                            p.row[0].clone(),
                            "5".into(),
                            format!("x{}", p.row[0]),
                            "1.5".into(),
                        ],
                        false => p.row.clone(),
                    },
                )
                .collect();
            for id in sources {
                if !before.iter().any(|p| p.row[0] == id) {
                    want.push(vec![id.into(), "5".into(), format!("x{id}"), "1.5".into()]);
                }
            }
            want.sort_by_key(|r| r[0].parse::<i64>().expect("id"));
            assert_eq!(table_rows(ctx, &t).await, want, "{name}: SET * / INSERT *");
            if !v3 {
                other_engines_agree(&lake, &name).await;
            }
        }
    }
}

/// A `DELETE`/`UPDATE` with a correlated subquery (planned as a query over the target's
/// row-level scan) reads the target's metadata columns as one without does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_columns_beside_a_correlated_subquery() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for version in [2u8, 3] {
        let name = format!("c_v{version}");
        let t = table(&lake, &name, "merge-on-read", version).await;
        ok(ctx, &format!("CREATE TABLE ice.ns.s_{name} (id BIGINT)")).await;
        ok(
            ctx,
            &format!("INSERT INTO ice.ns.s_{name} VALUES (1), (2), (5), (6), (9)"),
        )
        .await;
        let before = placed(ctx, &t, version == 3).await;
        count(
            ctx,
            &format!(
                "DELETE FROM {t} WHERE _pos = 0 AND EXISTS (SELECT 1 FROM ice.ns.s_{name} s \
                 WHERE s.id = {name}.id)"
            ),
        )
        .await;
        count(
            ctx,
            &format!(
                "UPDATE {t} SET s = _file WHERE _pos = 1 AND id IN (SELECT id FROM \
                 ice.ns.s_{name} s WHERE s.id = {name}.id)"
            ),
        )
        .await;
        let matched = ["1", "2", "5", "6", "9"];
        let want: Vec<Vec<String>> = before
            .iter()
            .filter(|p| !(p.pos == 0 && matched.contains(&p.row[0].as_str())))
            .map(|p| {
                let mut row = p.row.clone();
                if p.pos == 1 && matched.contains(&p.row[0].as_str()) {
                    row[2] = p.file.clone();
                }
                row
            })
            .collect();
        assert_eq!(table_rows(ctx, &t).await, want, "{name}");
    }
}

/// On a branch (Spark's `ns.t.branch_dev`, icefloe's `ns."t@dev"`), a `DELETE`/`UPDATE`
/// reading metadata columns reads and changes the branch's rows alone; `main` keeps its own.
/// `EXPLAIN` of one plans it (it failed: "No field named _file") and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_columns_in_row_level_statements_on_a_branch() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let t = table(&lake, "b", "merge-on-read", 2).await;
    ok(ctx, &format!("ALTER TABLE {t} CREATE BRANCH dev")).await;
    let main = table_rows(ctx, &t).await;
    let dev = "ice.ns.\"b@dev\"";
    let before = rows(
        ctx,
        &format!("SELECT id, k, s, d, _pos, _file FROM {dev} ORDER BY id"),
    )
    .await;
    // EXPLAIN of such a statement plans it (naming the table as the statement does)
    let explained = ok(
        ctx,
        &format!("EXPLAIN UPDATE {dev} SET s = _file WHERE _pos = 1"),
    )
    .await;
    assert!(explained.contains("Dml: op=[Update]"), "{explained}");
    assert!(
        !explained.contains("__icefloe_metadata_columns"),
        "{explained}"
    );
    assert_eq!(
        rows(
            ctx,
            &format!("SELECT id, k, s, d, _pos, _file FROM {dev} ORDER BY id")
        )
        .await,
        before
    );
    count(ctx, "DELETE FROM ice.ns.b.branch_dev WHERE _pos = 0").await;
    count(ctx, &format!("UPDATE {dev} SET s = _file WHERE _pos = 1")).await;
    let want: Vec<Vec<String>> = before
        .iter()
        .filter(|r| r[4] != "0")
        .map(|r| {
            let mut row = r[..4].to_vec();
            if r[4] == "1" {
                row[2] = r[5].clone();
            }
            row
        })
        .collect();
    assert_eq!(
        rows(ctx, &format!("SELECT id, k, s, d FROM {dev} ORDER BY id")).await,
        want
    );
    assert_eq!(table_rows(ctx, &t).await, main);
}

/// After partition evolution (files of an unpartitioned spec 0, then of spec 1 by `k`), a
/// condition on `_partition.k` or `_spec_id` changes the rows whose files hold those
/// values, never others: `_partition.k = 1` leaves the spec-0 rows with `k = 1` (their
/// `_partition.k` is NULL), as a `SELECT` with it does, in both write modes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_and_spec_conditions_after_partition_evolution() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = format!("e_{}", mode.replace('-', "_"));
        create(
            &lake,
            &name,
            "",
            &format!(
                ", 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', \
                 'write.merge.mode'='{mode}'"
            ),
        )
        .await;
        let t = format!("ice.ns.{name}");
        ok(
            ctx,
            &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 2, 'b', 2.0), (3, 1, 'c', 3.0)"),
        )
        .await;
        ok(ctx, &format!("ALTER TABLE {t} ADD PARTITION FIELD k")).await;
        ok(
            ctx,
            &format!("INSERT INTO {t} VALUES (4, 1, 'd', 4.0), (5, 2, 'e', 5.0), (6, 1, 'f', 6.0)"),
        )
        .await;
        let before = placed(ctx, &t, false).await;
        assert!(before.iter().any(|p| p.spec_id == "0"), "{before:?}");
        assert!(before.iter().any(|p| p.spec_id == "1"), "{before:?}");
        let selected = rows(
            ctx,
            &format!("SELECT id FROM {t} WHERE _partition.k = 1 ORDER BY id"),
        )
        .await;
        let n = count(
            ctx,
            &format!("UPDATE {t} SET s = 'p' WHERE _partition.k = 1"),
        )
        .await;
        let want: Vec<Vec<String>> = before
            .iter()
            .map(|p| {
                let mut row = p.row.clone();
                if p.partition_k == "1" {
                    row[2] = "p".into();
                }
                row
            })
            .collect();
        assert_eq!(n as usize, selected.len(), "{name}");
        assert_eq!(table_rows(ctx, &t).await, want, "{name}: _partition.k = 1");
        let before = placed(ctx, &t, false).await;
        count(
            ctx,
            &format!("DELETE FROM {t} WHERE _spec_id = 0 AND k = 1"),
        )
        .await;
        let want: Vec<Vec<String>> = before
            .iter()
            .filter(|p| !(p.spec_id == "0" && p.row[1] == "1"))
            .map(|p| p.row.clone())
            .collect();
        assert_eq!(table_rows(ctx, &t).await, want, "{name}: _spec_id = 0");
        let before = placed(ctx, &t, false).await;
        count(ctx, &format!("DELETE FROM {t} WHERE _partition.k IS NULL")).await;
        let want: Vec<Vec<String>> = before
            .iter()
            .filter(|p| !p.partition_k.is_empty())
            .map(|p| p.row.clone())
            .collect();
        assert_eq!(
            table_rows(ctx, &t).await,
            want,
            "{name}: _partition.k IS NULL"
        );
    }
}

/// A condition on a metadata column never removes whole files by partition values: `k =
/// 1 AND _pos = 0` in a table partitioned by `k` deletes one row of each file of the
/// partition, not the files (the files' other rows stay). And it cannot be checked
/// against files committed since the statement's snapshot, so under `serializable` any
/// data file added meanwhile conflicts (the statement fails, nothing changes), while
/// under `snapshot` the statement commits and the new file's rows stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_conditions_drop_no_whole_files_and_conflict_conservatively() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let t = table(&lake, "w", "copy-on-write", 2).await;
    let before = placed(ctx, &t, false).await;
    count(ctx, &format!("DELETE FROM {t} WHERE k = 1 AND _pos = 0")).await;
    let want: Vec<Vec<String>> = before
        .iter()
        .filter(|p| !(p.row[1] == "1" && p.pos == 0))
        .map(|p| p.row.clone())
        .collect();
    assert_eq!(table_rows(ctx, &t).await, want);

    // (condition, the partition a concurrent INSERT writes, isolation level, conflicts)
    for (i, condition, k, level, conflicts) in [
        ("k = 2 AND _pos = 0", 3, "serializable", false),
        ("k = 2 AND _pos = 0", 2, "serializable", true),
        ("_pos = 0", 3, "serializable", true),
        ("_partition.k = 2", 3, "serializable", true),
        ("_pos = 0", 3, "snapshot", false),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (c, k, l, x))| (i + 100, c, k, l, x))
    {
        let what = format!("{condition}, INSERT into k = {k}, {level}");
        // rows each statement may delete (those of k = 2 at position 0 are gone after
        // the first case)
        ok(
            ctx,
            &format!(
                "INSERT INTO {t} VALUES ({i}, 2, 'n', 1.0), ({}, 3, 'n', 2.0)",
                i + 100
            ),
        )
        .await;
        ok(
            ctx,
            &format!(
                "ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.isolation-level'='{level}')"
            ),
        )
        .await;
        let before = placed(ctx, &t, false).await;
        let plan =
            icefloe::datafusion::sql::execute(ctx, &format!("DELETE FROM {t} WHERE {condition}"))
                .await
                .expect("plan")
                .create_physical_plan()
                .await
                .expect("physical plan");
        ok(ctx, &format!("INSERT INTO {t} VALUES (50, {k}, 'z', 50.0)")).await;
        let result = crate::dml::execute_planned(ctx, plan).await;
        let deleted = |p: &Placed| match condition {
            "k = 2 AND _pos = 0" => p.row[1] == "2" && p.pos == 0,
            "_pos = 0" => p.pos == 0,
            _ => p.partition_k == "2",
        };
        let mut want: Vec<Vec<String>> = before
            .iter()
            .filter(|p| conflicts || !deleted(p))
            .map(|p| p.row.clone())
            .collect();
        want.push(vec!["50".into(), k.to_string(), "z".into(), "50.0".into()]);
        want.sort_by_key(|r| r[0].parse::<i64>().expect("id"));
        match result {
            Err(e) => {
                assert!(conflicts, "{what}: {e}");
                assert_eq!(
                    e.kind(),
                    icefloe::ErrorKind::ValidationFailed,
                    "{what}: {e}"
                );
            }
            Ok(_) => assert!(!conflicts, "{what}: committed"),
        }
        assert_eq!(table_rows(ctx, &t).await, want, "{what}");
        ok(ctx, &format!("DELETE FROM {t} WHERE id = 50")).await;
    }
}

/// What stays refused, naming it: assigning a metadata column (Spark refuses it too), in
/// `UPDATE` and `MERGE`; a `MERGE` reading its target's metadata columns with an `INSERT`
/// listing no columns; an unqualified metadata column of a `MERGE`'s target. Nothing
/// changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_columns_that_stay_refused_in_row_level_statements() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let t = table(&lake, "r", "merge-on-read", 2).await;
    let before = table_rows(ctx, &t).await;
    for (sql, kind, message) in [
        (
            format!("UPDATE {t} SET _pos = 1 WHERE id = 1"),
            icefloe::ErrorKind::InvalidArgument,
            "UPDATE of 'ice.ns.r' assigns metadata column '_pos': metadata columns (_file, \
             _pos, …) are read-only",
        ),
        (
            format!("UPDATE {t} AS x SET s = 'x', x._file = 'y' WHERE _pos = 0"),
            icefloe::ErrorKind::InvalidArgument,
            "assigns metadata column '_file'",
        ),
        (
            format!(
                "MERGE INTO {t} USING (SELECT 1 AS i) s ON r.id = s.i WHEN MATCHED THEN \
                 UPDATE SET r._pos = 0"
            ),
            icefloe::ErrorKind::InvalidArgument,
            "MERGE into 'ice.ns.r' assigns metadata column '_pos': metadata columns (_file, \
             _pos, …) are read-only",
        ),
        (
            format!(
                "MERGE INTO {t} USING (SELECT 1 AS i) s ON r.id = s.i AND r._pos = 0 WHEN NOT \
                 MATCHED THEN INSERT VALUES (s.i, 1, 'n', 0.0)"
            ),
            icefloe::ErrorKind::Unsupported,
            "MERGE into 'ice.ns.r' reading metadata columns of its target with an INSERT that \
             lists no columns: list them",
        ),
        (
            // unqualified: a MERGE's source's (this one has none)
            format!(
                "MERGE INTO {t} USING (SELECT 1 AS i) s ON r.id = s.i WHEN MATCHED AND \
                 _pos = 0 THEN DELETE"
            ),
            icefloe::ErrorKind::Unsupported,
            "unqualified metadata columns of a MERGE's target table are not supported (an \
             unqualified one is the source's): _pos of ice.ns.r; qualify it with the target's \
             name or alias, e.g. t._pos",
        ),
    ] {
        let err = match icefloe::datafusion::sql::execute(ctx, &sql).await {
            Err(e) => e,
            Ok(df) => icefloe::Error::from(df.collect().await.expect_err(&sql)),
        };
        assert_eq!(err.kind(), kind, "{sql}: {err}");
        assert!(err.to_string().contains(message), "{sql}: {err}");
    }
    assert_eq!(table_rows(ctx, &t).await, before);
}
