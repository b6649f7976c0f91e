//! Spark SQL forms of row-level statements beyond DataFusion 55's: `MERGE … UPDATE SET *`
//! / `INSERT *` and the `DEFAULT` keyword. Each refused statement commits nothing.

use crate::dml::{lake, ok, run, Lake};

const MODES: [&str; 2] = ["copy-on-write", "merge-on-read"];

/// `ns.<name>` with `columns` and `rows`, format version `version`, in `mode` for every
/// row-level statement.
async fn table(lake: &Lake, name: &str, columns: &str, rows: &str, mode: &str, version: u8) {
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.{name} ({columns}) TBLPROPERTIES ('format-version'='{version}', \
             'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', \
             'write.merge.mode'='{mode}')"
        ),
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO ice.ns.{name} VALUES {rows}"),
    )
    .await;
}

async fn snapshots(lake: &Lake, name: &str) -> String {
    ok(
        &lake.ctx,
        &format!("SELECT count(*) FROM ice.ns.\"{name}$snapshots\""),
    )
    .await
}

/// `statement` fails with a message holding each of `expected`; the table is unchanged.
async fn refused(lake: &Lake, name: &str, statement: &str, expected: &[&str]) {
    let before = snapshots(lake, name).await;
    let e = run(&lake.ctx, statement).await.expect_err(statement);
    for part in expected {
        assert!(e.contains(part), "{statement}: {e}");
    }
    assert!(e.len() < 600, "{statement}: a long message: {e}");
    assert_eq!(snapshots(lake, name).await, before, "{statement}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_update_set_star_and_insert_star_take_the_source_columns_by_name() {
    let lake = lake().await;
    for mode in MODES {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        table(
            &lake,
            &name,
            "id INT, v INT, w STRING",
            "(1, 1, 'a'), (2, 2, 'b')",
            mode,
            2,
        )
        .await;
        // the source's columns in another order, and one more
        let source = "(SELECT * FROM (VALUES ('x', 10, 1, 0), ('z', 30, 3, 0)) \
                      v(w, v, id, extra)) s";
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING {source} ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+----+---+\n| id | v  | w |\n+----+----+---+\n| 1  | 10 | x |\n\
             | 2  | 2  | b |\n| 3  | 30 | z |\n+----+----+---+",
            "{mode}"
        );
        refused(
            &lake,
            &name,
            &format!(
                "MERGE INTO {t} t USING (SELECT 1 AS id, 5 AS v) s ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET *"
            ),
            &[&format!(
                "MERGE into '{t}': UPDATE SET * / INSERT * assign every target column from \
                 the source column of its name, and the source (s) has no column 'w'"
            )],
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_default_keyword_writes_the_columns_default() {
    let lake = lake().await;
    for mode in MODES {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        table(
            &lake,
            &name,
            "id INT, v INT DEFAULT 7, w STRING, st STRUCT<a: INT>",
            "(1, 1, 'a', named_struct('a', 1)), (2, 2, 'b', NULL)",
            mode,
            3,
        )
        .await;
        // a column with a write-default takes it, one without NULL
        ok(
            &lake.ctx,
            &format!("UPDATE {t} SET v = DEFAULT, w = default WHERE id = 1"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (3, DEFAULT, 'c', NULL), (4, 4, DEFAULT, NULL)"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING (SELECT 2 AS id UNION ALL SELECT 5) s ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET v = DEFAULT \
                 WHEN NOT MATCHED THEN INSERT (w, id, v) VALUES ('e', s.id, DEFAULT)"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT id, v, w FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+---+---+\n| id | v | w |\n+----+---+---+\n| 1  | 7 |   |\n| 2  | 7 | b |\n\
             | 3  | 7 | c |\n| 4  | 4 |   |\n| 5  | 7 | e |\n+----+---+---+",
            "{mode}"
        );
        let nulls = ok(
            &lake.ctx,
            &format!("SELECT id FROM {t} WHERE w IS NULL ORDER BY id"),
        )
        .await;
        assert_eq!(
            nulls, "+----+\n| id |\n+----+\n| 1  |\n| 4  |\n+----+",
            "{mode}"
        );
        refused(
            &lake,
            &name,
            &format!("UPDATE {t} SET st.a = DEFAULT"),
            &[
                "'st.a' = DEFAULT",
                "only a top-level column has a default value",
            ],
        )
        .await;
    }
}
