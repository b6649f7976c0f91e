//! Sort orders over nested struct fields (`WRITE ORDERED BY st.a`): `INSERT` and CTAS
//! sort every file by them and record the order, as Iceberg Java and Spark do; a field
//! inside a list or map is refused when the order is set.

use super::tests::{fails, ok, session};
use crate::ErrorKind;

/// The ids of `table` in the order its one data file holds them (`_pos`), and the
/// distinct `sort_order_id`s of its files.
async fn written_order(
    ctx: &datafusion::prelude::SessionContext,
    table: &str,
) -> (Vec<String>, Vec<Vec<String>>) {
    let ids = ok(ctx, &format!("SELECT id FROM {table} ORDER BY _pos"))
        .await
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let orders = ok(
        ctx,
        &format!(
            "SELECT DISTINCT sort_order_id FROM ns.\"{}$files\"",
            &table[3..]
        ),
    )
    .await;
    (ids, orders)
}

#[tokio::test]
async fn insert_sorts_by_nested_struct_fields() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    // a top-level key then a nested one: both kept (the whole order was dropped)
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, st STRUCT<a INT, b STRING>)",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t WRITE ORDERED BY id, st.a").await;
    ok(
        &ctx,
        "INSERT INTO ns.t VALUES (3, named_struct('a', 1, 'b', 'x')), \
         (1, named_struct('a', 2, 'b', 'y')), (2, NULL)",
    )
    .await;
    assert_eq!(
        written_order(&ctx, "ns.t").await,
        (
            vec!["1".into(), "2".into(), "3".into()],
            vec![vec!["1".into()]]
        )
    );

    // the nested field decides, descending with nulls last (the NULL struct's field is
    // null), then the id; two levels deep
    ok(
        &ctx,
        "CREATE TABLE ns.d (id INT, st STRUCT<a INT, inner STRUCT<x STRING>>)",
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.d WRITE ORDERED BY st.inner.x DESC NULLS LAST, st.a, id",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.d VALUES \
         (1, named_struct('a', 1, 'inner', named_struct('x', 'b'))), \
         (2, NULL), \
         (3, named_struct('a', 2, 'inner', named_struct('x', 'c'))), \
         (4, named_struct('a', 0, 'inner', named_struct('x', 'b'))), \
         (5, named_struct('a', 9, 'inner', NULL))",
    )
    .await;
    assert_eq!(
        written_order(&ctx, "ns.d").await,
        (
            ["3", "4", "1", "2", "5"].map(String::from).to_vec(),
            vec![vec!["1".into()]]
        )
    );

    // a transform of a nested field: every value of st.a in one bucket, so id decides
    // within it; the buckets in order
    ok(&ctx, "CREATE TABLE ns.b (id INT, st STRUCT<a INT>)").await;
    ok(
        &ctx,
        "ALTER TABLE ns.b WRITE LOCALLY ORDERED BY bucket(4, st.a), id DESC",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.b VALUES (1, named_struct('a', 7)), (2, named_struct('a', 7)), \
         (3, named_struct('a', 8)), (4, named_struct('a', 7))",
    )
    .await;
    let bucket = |a: i32| {
        crate::transform::apply(
            &crate::spec::Transform::Bucket(4),
            &crate::spec::Literal::Int(a),
        )
        .expect("bucket")
        .map(|v| format!("{v:?}"))
    };
    let mut expected = [(7, 1), (7, 2), (8, 3), (7, 4)];
    expected.sort_by(|x, y| bucket(x.0).cmp(&bucket(y.0)).then(y.1.cmp(&x.1)));
    assert_eq!(
        written_order(&ctx, "ns.b").await,
        (
            expected.iter().map(|(_, id)| id.to_string()).collect(),
            vec![vec!["1".into()]]
        )
    );

    // CTAS into a table whose order is then set, and INSERT … SELECT: sorted the same way
    ok(
        &ctx,
        "CREATE TABLE ns.c AS SELECT id, st FROM ns.t WHERE id > 100",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.c WRITE ORDERED BY st.a DESC").await;
    ok(&ctx, "INSERT INTO ns.c SELECT id, st FROM ns.t").await;
    assert_eq!(
        written_order(&ctx, "ns.c").await,
        (
            vec!["1".into(), "3".into(), "2".into()],
            vec![vec!["1".into()]]
        )
    );
}

#[tokio::test]
async fn a_sort_order_cannot_name_a_field_inside_a_list_or_map() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, l ARRAY<STRUCT<x INT>>, m MAP<STRING, STRUCT<y INT>>)",
    )
    .await;
    for (sql, field) in [
        ("ALTER TABLE ns.t WRITE ORDERED BY l.x", "l.x"),
        (
            "ALTER TABLE ns.t WRITE ORDERED BY l.element.x",
            "l.element.x",
        ),
        ("ALTER TABLE ns.t WRITE ORDERED BY m.value.y", "m.value.y"),
    ] {
        fails(
            &ctx,
            sql,
            ErrorKind::InvalidArgument,
            &format!("cannot sort by '{field}': it is inside a list or map"),
        )
        .await;
    }
}

/// The data files of `table` (`ns.x`): path and `sort_order_id`.
async fn data_files(ctx: &datafusion::prelude::SessionContext, table: &str) -> Vec<Vec<String>> {
    ok(
        ctx,
        &format!(
            "SELECT file_path, sort_order_id FROM ns.\"{}$files\" WHERE content = 0",
            &table[3..]
        ),
    )
    .await
}

/// `UPDATE`, `MERGE` and copy-on-write `DELETE` write their data files in the table's
/// sort order and record its id, as `INSERT` does (Spark orders copy-on-write rewrites
/// and the new rows of row-level operations by it): in both modes, each data file a
/// statement adds holds its rows in the order (read by `_pos`), over rows that were
/// written before the table had the order.
#[tokio::test]
async fn row_level_writes_sort_by_the_table_order() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let t = format!("ns.{}", mode.replace('-', "_"));
        ok(
            &ctx,
            &format!(
                "CREATE TABLE {t} (id INT, v INT) TBLPROPERTIES ('format-version'='2', \
                 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', \
                 'write.merge.mode'='{mode}')"
            ),
        )
        .await;
        // written before the table has an order: out of it
        ok(
            &ctx,
            &format!("INSERT INTO {t} VALUES (1, 30), (2, 10), (3, 20), (4, 40), (5, 0)"),
        )
        .await;
        ok(&ctx, &format!("ALTER TABLE {t} WRITE ORDERED BY v DESC")).await;
        for (statement, writes) in [
            (
                format!("UPDATE {t} SET v = 100 - v WHERE id IN (1, 2, 3)"),
                true,
            ),
            (
                format!(
                    "MERGE INTO {t} t USING (SELECT 4 AS id, 1 AS v UNION ALL SELECT 6, 55 \
                     UNION ALL SELECT 7, 45 UNION ALL SELECT 8, 60) s ON t.id = s.id \
                     WHEN MATCHED THEN UPDATE SET v = s.v \
                     WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)"
                ),
                true,
            ),
            (
                format!("DELETE FROM {t} WHERE id = 6"),
                mode == "copy-on-write",
            ),
        ] {
            let before = data_files(&ctx, &t).await;
            ok(&ctx, &statement).await;
            let added: Vec<Vec<String>> = data_files(&ctx, &t)
                .await
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            assert_eq!(!added.is_empty(), writes, "{mode}: {statement}");
            for file in added {
                assert_eq!(file[1], "1", "{mode}: {statement}: the order's id");
                let values: Vec<i64> = ok(
                    &ctx,
                    &format!(
                        "SELECT v FROM {t} WHERE _file = '{}' ORDER BY _pos",
                        file[0]
                    ),
                )
                .await
                .into_iter()
                .map(|r| r[0].parse().expect("an int"))
                .collect();
                let mut sorted = values.clone();
                sorted.sort_by(|a, b| b.cmp(a));
                assert_eq!(values, sorted, "{mode}: {statement}: rows in file order");
            }
        }
        assert_eq!(
            ok(&ctx, &format!("SELECT id, v FROM {t} ORDER BY id")).await,
            [[1, 70], [2, 90], [3, 80], [4, 1], [5, 0], [7, 45], [8, 60]]
                .map(|r| r.map(|v| v.to_string()).to_vec())
                .to_vec(),
            "{mode}"
        );
    }
}
