//! Row-level changes and `INSERT OVERWRITE` on a branch (Spark's `ns.t.branch_dev`,
//! icefloe's `ns."t@dev"`): the statement reads the branch's snapshot and commits to the
//! branch alone; `main` keeps its snapshot and rows. The expected rows come from the same
//! statements run on `main` of a second table holding the same rows (the model).

use datafusion::prelude::SessionContext;
use icefloe::ErrorKind;

use crate::dml::{
    create, execute_planned as execute, lake, ok, other_engines_agree, planned, run, Lake,
};

/// The snapshot `name`'s ref `reference` points at.
async fn ref_snapshot(lake: &Lake, table: &str, reference: &str) -> String {
    ok(
        &lake.ctx,
        &format!("SELECT snapshot_id FROM ice.ns.\"{table}$refs\" WHERE name = '{reference}'"),
    )
    .await
}

async fn rows(ctx: &SessionContext, table: &str) -> String {
    ok(ctx, &format!("SELECT * FROM {table} ORDER BY id")).await
}

/// Each statement (`{t}` for the table) on branch `dev` of `ns.<name>` and on `main`
/// of `ns.<name>_model`: after each, the branch holds the model's rows and the
/// statement's count is the model's, while `main` of `ns.<name>` keeps its snapshot and
/// rows. Then `main` is fast-forwarded to the branch, and PyIceberg and DuckDB read it.
async fn check_on_branch(lake: &Lake, name: &str, partitioning: &str, properties: &str) {
    let model = format!("{name}_model");
    for t in [name, model.as_str()] {
        create(lake, t, partitioning, properties).await;
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO ice.ns.{t} VALUES (1, 1, 'a', 1.5), (2, 1, 'b', -2.0), \
                 (3, 2, 'c', 0.0), (4, 2, NULL, 4.0), (5, 3, 'e', NULL)"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{t} VALUES (6, 3, 'f', 6.0), (7, 1, 'g', 7.0)"),
        )
        .await;
    }
    ok(
        &lake.ctx,
        &format!("ALTER TABLE ice.ns.{name} CREATE BRANCH dev"),
    )
    .await;
    let main_snapshot = ref_snapshot(lake, name, "main").await;
    let main_rows = rows(&lake.ctx, &format!("ice.ns.{name}")).await;
    let statements = [
        "DELETE FROM {t} WHERE id = 2 OR s IS NULL",
        "UPDATE {t} SET d = d * 10, s = concat(s, '!') WHERE k = 3 OR id = 1",
        "DELETE FROM {t} WHERE k = 2",
        "MERGE INTO {t} t USING (SELECT * FROM (VALUES (1, 'x'), (8, 'new'), (9, 'n2')) v(id, s)) \
         src ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s \
         WHEN NOT MATCHED THEN INSERT VALUES (src.id, 4, src.s, 0.5)",
        "UPDATE {t} SET k = 5 WHERE id >= 8",
        "INSERT INTO {t} VALUES (10, 5, 'j', 1.0)",
        "INSERT OVERWRITE {t} (id, k, s, d) SELECT id, k, s, d FROM {t} WHERE id <> 6",
        "TRUNCATE TABLE {t}",
        // a column list after Spark's branch name
        "INSERT INTO {t} (s, id, k, d) VALUES ('k', 11, 1, 2.0), ('l', 12, 5, 3.0)",
    ];
    for (i, statement) in statements.iter().enumerate() {
        // both of the branch's names: Spark's and icefloe's
        let branch = match i % 2 {
            0 => format!("ice.ns.{name}.branch_dev"),
            _ => format!("ice.ns.\"{name}@dev\""),
        };
        let on_branch = statement.replace("{t}", &branch);
        let on_model = statement.replace("{t}", &format!("ice.ns.{model}"));
        let before = ref_snapshot(lake, name, "dev").await;
        let got = ok(&lake.ctx, &on_branch).await;
        let want = ok(&lake.ctx, &on_model).await;
        assert_eq!(got, want, "{name}: count of {on_branch}");
        assert_eq!(
            rows(&lake.ctx, &format!("ice.ns.\"{name}@dev\"")).await,
            rows(&lake.ctx, &format!("ice.ns.{model}")).await,
            "{name}: rows of the branch after {on_branch}"
        );
        assert_ne!(
            ref_snapshot(lake, name, "dev").await,
            before,
            "{name}: {on_branch} committed no snapshot to the branch"
        );
        // the branch's new snapshot descends from its previous one
        let parent = ok(
            &lake.ctx,
            &format!(
                "SELECT s.parent_id FROM ice.ns.\"{name}$snapshots\" s JOIN \
                 ice.ns.\"{name}$refs\" r ON s.snapshot_id = r.snapshot_id \
                 WHERE r.name = 'dev'"
            ),
        )
        .await;
        let before_id = before
            .lines()
            .nth(3)
            .unwrap_or_default()
            .trim_matches(['|', ' ']);
        assert!(
            parent.contains(before_id),
            "{name}: parent {parent}, previous {before}"
        );
        assert_eq!(
            ref_snapshot(lake, name, "main").await,
            main_snapshot,
            "{name}"
        );
        assert_eq!(
            rows(&lake.ctx, &format!("ice.ns.{name}")).await,
            main_rows,
            "{name}"
        );
    }
    ok(
        &lake.ctx,
        &format!("CALL ice.system.fast_forward('ns.{name}', 'main', 'dev')"),
    )
    .await;
    assert_eq!(
        rows(&lake.ctx, &format!("ice.ns.{name}")).await,
        rows(&lake.ctx, &format!("ice.ns.{model}")).await,
        "{name}: main fast-forwarded to the branch"
    );
    other_engines_agree(lake, name).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_on_a_branch_changes_the_branch_alone() {
    let lake = lake().await;
    for (version, mode) in [
        ("2", "copy-on-write"),
        ("2", "merge-on-read"),
        ("3", "merge-on-read"),
    ] {
        let name = format!("v{version}_{}", mode.replace('-', "_"));
        let properties = format!(
            ", 'format-version'='{version}', 'write.delete.mode'='{mode}', \
             'write.update.mode'='{mode}', 'write.merge.mode'='{mode}'"
        );
        check_on_branch(&lake, &name, "", &properties).await;
        check_on_branch(
            &lake,
            &format!("{name}_by_k"),
            "PARTITIONED BY (k)",
            &properties,
        )
        .await;
    }
}

/// A statement on a branch checks conflicts along the branch: a commit to `main`
/// meanwhile is none of its business, one to the branch is (serializable isolation:
/// an `INSERT` into the rows a `DELETE` reads fails the `DELETE`, which leaves nothing).
/// The conflict errors name the branch; those of the same race on `main` name none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_on_a_branch_checks_conflicts_on_the_branch() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        let dev = format!("ice.ns.\"{name}@dev\"");
        create(
            &lake,
            &name,
            "PARTITIONED BY (k)",
            &format!(", 'write.delete.mode'='{mode}'"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', -1.0), (3, 2, 'c', 1.0)"
            ),
        )
        .await;
        ok(&lake.ctx, &format!("ALTER TABLE {t} CREATE BRANCH dev")).await;
        // main moves on meanwhile: the branch's DELETE still commits
        let delete = planned(
            &lake.ctx,
            &format!("DELETE FROM {dev} WHERE k = 1 AND d > 0"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (4, 1, 'd', 5.0)"),
        )
        .await;
        execute(&lake.ctx, delete)
            .await
            .unwrap_or_else(|e| panic!("{name}: a commit to main is no conflict: {e}"));
        assert_eq!(
            ok(&lake.ctx, &format!("SELECT id FROM {dev} ORDER BY id")).await,
            "+----+\n| id |\n+----+\n| 2  |\n| 3  |\n+----+",
            "{name}"
        );
        assert_eq!(
            ok(&lake.ctx, &format!("SELECT id FROM {t} ORDER BY id")).await,
            "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 3  |\n| 4  |\n+----+",
            "{name}"
        );
        // the branch moves on meanwhile, into the rows the DELETE reads: a conflict
        let delete = planned(&lake.ctx, &format!("DELETE FROM {dev} WHERE k = 1")).await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {dev} VALUES (5, 1, 'e', 5.0)"),
        )
        .await;
        let snapshot = ok(
            &lake.ctx,
            &format!("SELECT snapshot_id FROM ice.ns.\"{name}$refs\" WHERE name = 'dev'"),
        )
        .await;
        let e = execute(&lake.ctx, delete)
            .await
            .expect_err("an INSERT into the branch conflicts with its serializable DELETE");
        assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{name}: {e}");
        // the conflict names the branch (on `main` it names none: see `dml.rs`)
        let operation = match mode {
            "copy-on-write" => "overwrite",
            _ => "row delta",
        };
        let message = e.to_string();
        assert!(
            message.contains(&format!(
                "DELETE on 'ns.{name}': found a conflicting data file"
            )) && message.contains(&format!(
                "after this {operation} on branch 'dev' began (serializable isolation)"
            )),
            "{name}: {e}"
        );
        assert_eq!(
            ok(
                &lake.ctx,
                &format!("SELECT snapshot_id FROM ice.ns.\"{name}$refs\" WHERE name = 'dev'"),
            )
            .await,
            snapshot,
            "{name}: the failed DELETE moved the branch"
        );
        // two DELETEs on the branch race: the later one names the branch, the same
        // race on `main` names none
        for (target, on_branch) in [(dev.clone(), true), (t.clone(), false)] {
            let first = planned(&lake.ctx, &format!("DELETE FROM {target} WHERE id = 2")).await;
            let second = planned(&lake.ctx, &format!("DELETE FROM {target} WHERE k = 2")).await;
            ok(
                &lake.ctx,
                &format!("DELETE FROM {target} WHERE k = 2 OR id = 2"),
            )
            .await;
            for delete in [first, second] {
                let e = execute(&lake.ctx, delete)
                    .await
                    .expect_err("the rows were deleted meanwhile");
                assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{name}: {e}");
                let message = e.to_string();
                let expected = match (mode, on_branch) {
                    ("copy-on-write", true) => {
                        "to be removed is not live on branch 'dev' any more (a concurrent \
                         commit removed it)"
                    }
                    ("copy-on-write", false) => {
                        "to be removed is not live in the table any more (a concurrent \
                         commit removed it)"
                    }
                    (_, true) => "after this row delta on branch 'dev' began: it may delete rows",
                    (_, false) => "after this row delta began: it may delete rows",
                };
                assert!(
                    message.contains(&format!("DELETE on 'ns.{name}': "))
                        && message.contains(expected),
                    "{name}, branch {on_branch}: {e}"
                );
                assert_eq!(message.contains("branch"), on_branch, "{name}: {e}");
            }
        }
    }
}

/// A tag cannot be changed: every statement on one is refused, naming the tag and the
/// table (not its metadata file); so is a write to a snapshot by id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_on_a_tag_is_refused() {
    let lake = lake().await;
    create(&lake, "t", "", ", 'write.delete.mode'='merge-on-read'").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.t VALUES (1, 1, 'a', 1.0)").await;
    ok(&lake.ctx, "ALTER TABLE ice.ns.t CREATE TAG v1").await;
    for (statement, verb) in [
        ("DELETE FROM ice.ns.t.tag_v1 WHERE id = 1", "DELETE"),
        ("UPDATE ice.ns.\"t@v1\" SET k = 2", "UPDATE"),
        ("TRUNCATE TABLE ice.ns.t.tag_v1", "TRUNCATE"),
        (
            "MERGE INTO ice.ns.t.tag_v1 t USING (SELECT 1 AS id) s ON t.id = s.id \
             WHEN MATCHED THEN DELETE",
            "MERGE",
        ),
        (
            "INSERT INTO ice.ns.\"t@v1\" VALUES (2, 1, 'b', 2.0)",
            "INSERT INTO",
        ),
        (
            "INSERT OVERWRITE ice.ns.\"t@v1\" VALUES (2, 1, 'b', 2.0)",
            "INSERT OVERWRITE",
        ),
    ] {
        let e = run(&lake.ctx, statement).await.expect_err(statement);
        assert!(
            e.contains(&format!(
                "cannot write to tag 'v1' of table 'ns.t': a tag names one snapshot and \
                 cannot be changed ({verb}); write to the table or to a branch"
            )),
            "{statement}: {e}"
        );
        assert!(!e.contains("metadata.json"), "{statement}: {e}");
    }
    // a snapshot by id is no branch either: refused naming the table, not its file
    let snapshot =
        crate::catalog::strings(&lake.ctx, "SELECT snapshot_id FROM ice.ns.\"t$snapshots\"").await;
    for (statement, verb) in [
        (
            format!(
                "INSERT INTO ice.ns.\"t@{}\" VALUES (2, 1, 'b', 2.0)",
                snapshot[0]
            ),
            "INSERT INTO",
        ),
        (
            format!(
                "DELETE FROM ice.ns.t.snapshot_id_{} WHERE id = 1",
                snapshot[0]
            ),
            "DELETE",
        ),
    ] {
        let e = run(&lake.ctx, &statement).await.expect_err(&statement);
        assert!(
            e.contains(&format!(
                "{verb} on table 'ns.t': it was opened by location or at a snapshot"
            )),
            "{statement}: {e}"
        );
        assert!(!e.contains("metadata.json"), "{statement}: {e}");
    }
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT count(*) AS n FROM ice.ns.\"t$snapshots\""
        )
        .await,
        "+---+\n| n |\n+---+\n| 1 |\n+---+"
    );
}

/// A write to a tag or a snapshot taken before a column was added is refused as a write
/// to the tag or snapshot, not planned against the older schema first ("got 5 values in
/// row 0 but expected 4", "no column 'n'"): the statements name the table's current
/// columns, as a user writing to the table would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_on_an_older_tag_is_refused_as_a_tag_write() {
    let lake = lake().await;
    create(&lake, "t", "", ", 'write.delete.mode'='merge-on-read'").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.t VALUES (1, 1, 'a', 1.0)").await;
    ok(&lake.ctx, "ALTER TABLE ice.ns.t CREATE TAG v1").await;
    let snapshot =
        crate::catalog::strings(&lake.ctx, "SELECT snapshot_id FROM ice.ns.\"t$snapshots\"").await;
    ok(&lake.ctx, "ALTER TABLE ice.ns.t ADD COLUMN n BIGINT").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.t VALUES (2, 1, 'b', 2.0, 20)",
    )
    .await;
    let tag = "cannot write to tag 'v1' of table 'ns.t': a tag names one snapshot and cannot \
               be changed";
    let at_snapshot = "on table 'ns.t': it was opened by location or at a snapshot";
    let by_id = format!("ice.ns.t.snapshot_id_{}", snapshot[0]);
    let quoted_id = format!("ice.ns.\"t@{}\"", snapshot[0]);
    for (target, refusal) in [
        ("ice.ns.t.tag_v1", tag),
        ("ice.ns.\"t@v1\"", tag),
        (by_id.as_str(), at_snapshot),
        (quoted_id.as_str(), at_snapshot),
    ] {
        for (statement, verb) in [
            ("INSERT INTO {t} VALUES (3, 1, 'c', 3.0, 30)", "INSERT INTO"),
            ("INSERT INTO {t} (id, n) VALUES (3, 30)", "INSERT INTO"),
            (
                "INSERT OVERWRITE {t} SELECT * FROM ice.ns.t",
                "INSERT OVERWRITE",
            ),
            ("UPDATE {t} SET n = 1", "UPDATE"),
            ("DELETE FROM {t} WHERE n = 20", "DELETE"),
            (
                "MERGE INTO {t} x USING (SELECT 1 AS id) s ON x.id = s.id \
                 WHEN MATCHED THEN UPDATE SET n = 5",
                "MERGE",
            ),
        ] {
            let statement = statement.replace("{t}", target);
            let e = run(&lake.ctx, &statement).await.expect_err(&statement);
            assert!(e.contains(refusal), "{statement}: {e}");
            assert!(
                e.contains(&format!("{verb} ")) || e.contains(&format!("({verb})")),
                "{statement}: {e}"
            );
        }
    }
    // the table is as it was: two snapshots, both rows
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT count(*) AS n FROM ice.ns.\"t$snapshots\""
        )
        .await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    assert_eq!(
        ok(&lake.ctx, "SELECT id, n FROM ice.ns.t ORDER BY id").await,
        "+----+----+\n| id | n  |\n+----+----+\n| 1  |    |\n| 2  | 20 |\n+----+----+"
    );
}

/// On tables Spark wrote (v2 with position deletes, v3 with deletion vectors, both
/// merge-on-read): a `DELETE` and an `UPDATE` on a branch change the branch's rows as
/// the same statements on `main` of a second copy do, and leave `main` as it was; then
/// `CREATE OR REPLACE TABLE … AS SELECT *` of the table keeps its rows and field ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spark_written_tables_take_branch_dml_and_replacement() {
    for t in ["spark_v2_mor_position_deletes", "spark_v3_deletion_vectors"] {
        if !crate::catalog::corpus_dir().join(t).is_dir() {
            continue;
        }
        let tmp = tempfile::tempdir().expect("tempdir");
        let (catalog, _) = crate::v1_writes::corpus_copy(tmp.path(), t).await;
        let model_dir = tempfile::tempdir().expect("tempdir");
        let (model_catalog, _) = crate::v1_writes::corpus_copy(model_dir.path(), t).await;
        let ctx = crate::dml::lake().await.ctx;
        crate::catalog::attach(&ctx, "c", std::sync::Arc::clone(&catalog)).await;
        crate::catalog::attach(&ctx, "m", model_catalog).await;
        let table = format!("c.ns.{t}");
        let model = format!("m.ns.{t}");
        let all = |name: &str| format!("SELECT * FROM {name} ORDER BY id");
        let main_rows = ok(&ctx, &all(&table)).await;
        ok(&ctx, &format!("ALTER TABLE {table} CREATE BRANCH dev")).await;
        let (column, value) = match t {
            "spark_v2_mor_position_deletes" => ("val", "'changed'"),
            _ => ("v", "-1"),
        };
        for statement in [
            "DELETE FROM {t} WHERE id % 3 = 0".to_string(),
            format!("UPDATE {{t}} SET {column} = {value} WHERE id % 4 = 1"),
        ] {
            let got = ok(
                &ctx,
                &statement.replace("{t}", &format!("{table}.branch_dev")),
            )
            .await;
            let want = ok(&ctx, &statement.replace("{t}", &model)).await;
            assert_eq!(got, want, "{t}: {statement}");
            assert_eq!(
                ok(&ctx, &all(&format!("c.ns.\"{t}@dev\""))).await,
                ok(&ctx, &all(&model)).await,
                "{t}: the branch after {statement}"
            );
            assert_eq!(ok(&ctx, &all(&table)).await, main_rows, "{t}: main");
            assert_ne!(
                ok(&ctx, &all(&format!("c.ns.\"{t}@dev\""))).await,
                main_rows,
                "{t}: {statement} changed no row"
            );
        }
        let ids = |table: icefloe::Table| {
            table
                .metadata()
                .current_schema()
                .columns()
                .iter()
                .map(|f| (f.name.clone(), f.id))
                .collect::<Vec<_>>()
        };
        let ident = icefloe::catalog::TableIdent::parse(&format!("ns.{t}"));
        let before = ids(catalog.load_table(&ident).await.expect("load"));
        ok(
            &ctx,
            &format!("CREATE OR REPLACE TABLE {table} AS SELECT * FROM {table}"),
        )
        .await;
        assert_eq!(
            ids(catalog.load_table(&ident).await.expect("load")),
            before,
            "{t}"
        );
        assert_eq!(ok(&ctx, &all(&table)).await, main_rows, "{t}: replaced");
    }
}

/// The values of the first row `q` returns, as text.
async fn first_row(lake: &Lake, q: &str) -> Vec<String> {
    let batches = run(&lake.ctx, q)
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    let batch = batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .unwrap_or_else(|| panic!("{q}: no row"));
    batch
        .columns()
        .iter()
        .map(|c| datafusion::arrow::util::display::array_value_to_string(c, 0).expect("value"))
        .collect()
}

/// The first value `q` returns, as text.
async fn value(lake: &Lake, q: &str) -> String {
    first_row(lake, q).await.remove(0)
}

/// Write-audit-publish as Spark runs it: with `icefloe.wap_id` set (Spark's
/// `spark.wap.id`) an `INSERT INTO` a table whose `write.wap.enabled` is true commits a
/// staged snapshot (summary `wap.id`) that `main` does not point at: reads do not see its
/// rows, time travel to it does; writes to another branch and table replacements are
/// refused while the id is set;
/// `publish_changes` fast-forwards `main` to it (its parent is still current) or
/// cherry-picks it (summary `published-wap-id`), once; PyIceberg and DuckDB read the
/// published rows. v2 and v3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_audit_publish_stages_inserts_until_published() {
    let lake = lake().await;
    for version in [2, 3] {
        let name = format!("wap_v{version}");
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "PARTITIONED BY (s)",
            &format!(", 'format-version'='{version}', 'write.wap.enabled'='true'"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0)"),
        )
        .await;
        let main = format!("SELECT snapshot_id FROM ice.ns.\"{name}$refs\" WHERE name = 'main'");
        let main_before = value(&lake, &main).await;
        ok(&lake.ctx, &format!("ALTER TABLE {t} CREATE BRANCH dev")).await;
        ok(&lake.ctx, "SET icefloe.wap_id = 'audit-1'").await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (2, 2, 'b', 2.0), (3, 3, 'a', 3.0)"),
        )
        .await;
        // staged: main and the rows read are unchanged, the snapshot is there by id
        assert_eq!(value(&lake, &main).await, main_before);
        assert_eq!(
            value(&lake, &format!("SELECT count(*) FROM {t}")).await,
            "1"
        );
        let staged = value(
            &lake,
            &format!(
                "SELECT snapshot_id FROM ice.ns.\"{name}$snapshots\" \
                 WHERE summary['wap.id'] = 'audit-1'"
            ),
        )
        .await;
        assert_eq!(
            value(
                &lake,
                &format!("SELECT count(*) FROM {t} FOR SYSTEM_VERSION AS OF {staged}")
            )
            .await,
            "3"
        );
        // writes to another branch and table replacements are not staged: refused,
        // nothing committed
        let snapshots = format!("SELECT count(*) FROM ice.ns.\"{name}$snapshots\"");
        let before = value(&lake, &snapshots).await;
        for (statement, verb) in [
            (
                format!("DELETE FROM {t}.branch_dev WHERE id = 1"),
                "DELETE of a branch",
            ),
            (
                format!("INSERT INTO {t}.branch_dev VALUES (9, 9, 'z', 9.0)"),
                "INSERT INTO a branch",
            ),
            (
                format!("CREATE OR REPLACE TABLE {t} AS SELECT * FROM {t}"),
                "CREATE OR REPLACE TABLE … AS",
            ),
        ] {
            let e = run(&lake.ctx, &statement).await.expect_err(&statement);
            assert!(
                e.contains(&format!(
                    "{verb} on 'ns.{name}' while icefloe.wap_id is set"
                )),
                "{statement}: {e}"
            );
        }
        assert_eq!(value(&lake, &snapshots).await, before);
        // published: main fast-forwards to the staged snapshot
        ok(&lake.ctx, "RESET icefloe.wap_id").await;
        let published = first_row(
            &lake,
            &format!("CALL ice.system.publish_changes('ns.{name}', 'audit-1')"),
        )
        .await;
        assert_eq!(published, [staged.clone(), staged.clone()]);
        assert_eq!(value(&lake, &main).await, staged);
        assert_eq!(
            value(&lake, &format!("SELECT count(*) FROM {t}")).await,
            "3"
        );
        let e = run(
            &lake.ctx,
            &format!("CALL ice.system.publish_changes('ns.{name}', 'audit-1')"),
        )
        .await
        .expect_err("published twice");
        assert!(e.contains("cannot cherry-pick"), "{e}");
        // staged, then main moves on: publishing cherry-picks it onto main
        ok(&lake.ctx, "SET icefloe.wap_id = 'audit-2'").await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (4, 4, 'c', 4.0)"),
        )
        .await;
        ok(&lake.ctx, "RESET icefloe.wap_id").await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (5, 5, 'a', 5.0)"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("CALL ice.system.publish_changes(table => 'ns.{name}', wap_id => 'audit-2')"),
        )
        .await;
        assert_eq!(
            value(
                &lake,
                &format!(
                    "SELECT summary['published-wap-id'] FROM ice.ns.\"{name}$snapshots\" \
                     WHERE snapshot_id = (SELECT snapshot_id FROM ice.ns.\"{name}$refs\" \
                     WHERE name = 'main')"
                )
            )
            .await,
            "audit-2"
        );
        let e = run(
            &lake.ctx,
            &format!("CALL ice.system.publish_changes('ns.{name}', 'audit-3')"),
        )
        .await
        .expect_err("unknown id");
        assert!(
            e.contains("no snapshot was staged with write-audit-publish id 'audit-3'"),
            "{e}"
        );
        let rows = ok(&lake.ctx, &format!("SELECT id FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows, "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 3  |\n| 4  |\n| 5  |\n+----+",
            "{name}"
        );
        other_engines_agree(&lake, &name).await;
    }
}

/// Stage `statement` (`{t}` for the table) on `ns.<name>` under write-audit-publish id
/// `wap`, run it directly on `ns.<name>_model`, and return the staged snapshot's id after
/// checking it: summary `wap.id`, parent `main`'s snapshot, `main` and its rows (icefloe's
/// read) unchanged, time travel to it reads the model's rows.
async fn stage(lake: &Lake, name: &str, wap: &str, statement: &str) -> String {
    let (t, model) = (format!("ice.ns.{name}"), format!("ice.ns.{name}_model"));
    let (main_before, rows_before) = (main_head(lake, name).await, rows(&lake.ctx, &t).await);
    ok(&lake.ctx, &format!("SET icefloe.wap_id = '{wap}'")).await;
    let got = ok(&lake.ctx, &statement.replace("{t}", &t)).await;
    ok(&lake.ctx, "RESET icefloe.wap_id").await;
    let want = ok(&lake.ctx, &statement.replace("{t}", &model)).await;
    assert_eq!(got, want, "{name}: count of staged {statement}");
    assert_eq!(
        main_head(lake, name).await,
        main_before,
        "{name}: {statement}"
    );
    assert_eq!(
        rows(&lake.ctx, &t).await,
        rows_before,
        "{name}: {statement}"
    );
    let staged = first_row(
        lake,
        &format!(
            "SELECT snapshot_id, parent_id FROM ice.ns.\"{name}$snapshots\" \
             WHERE summary['wap.id'] = '{wap}'"
        ),
    )
    .await;
    assert_eq!(
        staged[1], main_before,
        "{name}: parent of staged {statement}"
    );
    assert_eq!(
        rows(
            &lake.ctx,
            &format!("{t} FOR SYSTEM_VERSION AS OF {}", staged[0])
        )
        .await,
        rows(&lake.ctx, &model).await,
        "{name}: time travel to staged {statement}"
    );
    staged[0].clone()
}

/// The snapshot `main` of `ns.<name>` points at, as text; empty when there is none.
async fn main_head(lake: &Lake, name: &str) -> String {
    let q = format!("SELECT snapshot_id FROM ice.ns.\"{name}$refs\" WHERE name = 'main'");
    let batches = run(&lake.ctx, &q)
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    match batches.iter().find(|b| b.num_rows() > 0) {
        Some(b) => {
            datafusion::arrow::util::display::array_value_to_string(b.column(0), 0).expect("value")
        }
        None => String::new(),
    }
}

/// The metadata file `ns.<name>` is at.
async fn metadata_location(lake: &Lake, name: &str) -> String {
    lake.catalog
        .load_table(&icefloe::catalog::TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load")
        .metadata_location()
        .to_string()
}

/// `publish_changes` of `wap` on `ns.<name>`: its result row is (`staged`, main's new
/// snapshot), and `main` then reads the model's rows. Returns main's new snapshot.
async fn publish(lake: &Lake, name: &str, wap: &str, staged: &str) -> String {
    let out = first_row(
        lake,
        &format!("CALL ice.system.publish_changes('ns.{name}', '{wap}')"),
    )
    .await;
    assert_eq!(out[0], staged, "{name}: published {wap}");
    assert_eq!(
        rows(&lake.ctx, &format!("ice.ns.{name}")).await,
        rows(&lake.ctx, &format!("ice.ns.{name}_model")).await,
        "{name}: rows after publishing {wap}"
    );
    out[1].clone()
}

/// Write-audit-publish of every write, as Spark stages them under `spark.wap.id`: `DELETE`,
/// `UPDATE`, `MERGE`, `INSERT OVERWRITE` (static and dynamic) and `TRUNCATE`, in both
/// write modes (copy-on-write; merge-on-read with v2 position deletes and v3 deletion
/// vectors), each staged (PyIceberg and DuckDB read `main` without it) and published by
/// fast-forward; after `main` moved on, an append and a dynamic overwrite are
/// cherry-picked (`published-wap-id`), a dynamic overwrite whose partition changed and a
/// `DELETE` are refused leaving the table unchanged (as Iceberg Java's
/// `CherryPickOperation`); `expire_snapshots` afterwards keeps every live file. Expected
/// rows come from the same statements run directly on a model table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_audit_publish_stages_every_write() {
    let lake = lake().await;
    for version in [2, 3] {
        for mode in ["copy-on-write", "merge-on-read"] {
            let name = format!("wap_all_v{version}_{}", &mode[..1]);
            let modes = format!(
                ", 'format-version'='{version}', 'write.delete.mode'='{mode}', \
                 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}'"
            );
            let model = format!("{name}_model");
            create(&lake, &model, "PARTITIONED BY (k)", &modes).await;
            create(
                &lake,
                &name,
                "PARTITIONED BY (k)",
                &format!("{modes}, 'write.wap.enabled'='true'"),
            )
            .await;
            let t = format!("ice.ns.{name}");
            let both = |statement: &str| {
                [
                    statement.replace("{t}", &t),
                    statement.replace("{t}", &format!("ice.ns.{model}")),
                ]
            };
            for q in both(
                "INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0), \
                 (4, 3, 'd', 4.0), (5, 3, 'e', 5.0)",
            ) {
                ok(&lake.ctx, &q).await;
            }
            // each write staged, audited, then published by fast-forward
            let statements = [
                "DELETE FROM {t} WHERE id = 2",
                "UPDATE {t} SET d = d * 10 WHERE k = 3",
                "MERGE INTO {t} x USING (SELECT * FROM (VALUES (1, 'x'), (8, 'n')) v(id, s)) src \
                 ON x.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s \
                 WHEN NOT MATCHED THEN INSERT VALUES (src.id, 4, src.s, 0.5)",
                "INSERT OVERWRITE {t} SELECT id, k, s, d FROM {t} WHERE id <> 5",
                "TRUNCATE TABLE {t}",
                "INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0)",
                "DELETE FROM {t} WHERE id = 1",
            ];
            for (i, statement) in statements.iter().enumerate() {
                let wap = format!("ff-{i}");
                let staged = stage(&lake, &name, &wap, statement).await;
                if i == 0 {
                    // PyIceberg and DuckDB read main without the staged change
                    other_engines_agree(&lake, &name).await;
                    if mode == "merge-on-read" {
                        let deletes = value(
                            &lake,
                            &format!(
                                "SELECT summary['added-delete-files'] FROM \
                                 ice.ns.\"{name}$snapshots\" WHERE snapshot_id = {staged}"
                            ),
                        )
                        .await;
                        assert_eq!(deletes, "1", "{name}: staged merge-on-read DELETE");
                    }
                }
                // fast-forward: main moves to the staged snapshot itself
                assert_eq!(publish(&lake, &name, &wap, &staged).await, staged);
            }
            // main moves on after a staged append: it is cherry-picked
            let staged = stage(
                &lake,
                &name,
                "pick-append",
                "INSERT INTO {t} VALUES (10, 5, 'p', 1.0)",
            )
            .await;
            for q in both("INSERT INTO {t} VALUES (11, 6, 'q', 2.0)") {
                ok(&lake.ctx, &q).await;
            }
            let head = publish(&lake, &name, "pick-append", &staged).await;
            assert_ne!(head, staged, "{name}: a cherry-pick is a new snapshot");
            // a dynamic overwrite of partition k = 1 while main appends to k = 7
            ok(
                &lake.ctx,
                "SET icefloe.partition_overwrite_mode = 'dynamic'",
            )
            .await;
            let staged = stage(
                &lake,
                &name,
                "pick-dynamic",
                "INSERT OVERWRITE {t} VALUES (20, 1, 'o', 3.0)",
            )
            .await;
            for q in both("INSERT INTO {t} VALUES (21, 7, 'r', 4.0)") {
                ok(&lake.ctx, &q).await;
            }
            let head = publish(&lake, &name, "pick-dynamic", &staged).await;
            let summary = first_row(
                &lake,
                &format!(
                    "SELECT operation, summary['published-wap-id'], \
                     summary['source-snapshot-id'] FROM ice.ns.\"{name}$snapshots\" \
                     WHERE snapshot_id = {head}"
                ),
            )
            .await;
            assert_eq!(
                summary,
                ["overwrite", "pick-dynamic", staged.as_str()],
                "{name}"
            );
            // refused: dynamic overwrites of k = 7, to which main adds a file, and of
            // k = 2, whose file main removes; a DELETE
            for (wap, statement) in [
                (
                    "refused-dynamic",
                    "INSERT OVERWRITE {t} VALUES (30, 7, 's', 5.0)",
                ),
                (
                    "refused-removed",
                    "INSERT OVERWRITE {t} VALUES (32, 2, 'u', 7.0)",
                ),
            ] {
                ok(&lake.ctx, &format!("SET icefloe.wap_id = '{wap}'")).await;
                ok(&lake.ctx, &statement.replace("{t}", &t)).await;
                ok(&lake.ctx, "RESET icefloe.wap_id").await;
            }
            ok(&lake.ctx, "RESET icefloe.partition_overwrite_mode").await;
            ok(&lake.ctx, "SET icefloe.wap_id = 'refused-delete'").await;
            ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 3")).await;
            ok(&lake.ctx, "RESET icefloe.wap_id").await;
            for q in both("INSERT INTO {t} VALUES (31, 7, 't', 6.0)")
                .into_iter()
                .chain(both("DELETE FROM {t} WHERE k = 2"))
            {
                ok(&lake.ctx, &q).await;
            }
            let before = metadata_location(&lake, &name).await;
            for (wap, needle) in [
                ("refused-dynamic", "found a conflicting data file"),
                ("refused-removed", "to be removed is not live in the table"),
                ("refused-delete", "main has moved on to snapshot"),
            ] {
                let staged = value(
                    &lake,
                    &format!(
                        "SELECT snapshot_id FROM ice.ns.\"{name}$snapshots\" \
                         WHERE summary['wap.id'] = '{wap}'"
                    ),
                )
                .await;
                let e = run(
                    &lake.ctx,
                    &format!("CALL ice.system.publish_changes('ns.{name}', '{wap}')"),
                )
                .await
                .expect_err(wap);
                assert!(
                    e.contains(&format!("cannot cherry-pick snapshot {staged}"))
                        && e.contains(needle),
                    "{name}: {e}"
                );
                assert_eq!(
                    metadata_location(&lake, &name).await,
                    before,
                    "{name}: {wap} committed"
                );
            }
            assert_eq!(
                rows(&lake.ctx, &t).await,
                rows(&lake.ctx, &format!("ice.ns.{model}")).await,
                "{name}"
            );
            // expiring every snapshot but main's (the staged ones too) keeps every live file
            ok(
                &lake.ctx,
                &format!(
                    "CALL ice.system.expire_snapshots(table => 'ns.{name}', \
                     older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
                ),
            )
            .await;
            assert_eq!(
                value(
                    &lake,
                    &format!("SELECT count(*) FROM ice.ns.\"{name}$snapshots\"")
                )
                .await,
                "1",
                "{name}: the staged snapshots expired too"
            );
            let files = run(
                &lake.ctx,
                &format!("SELECT file_path FROM ice.ns.\"{name}$files\""),
            )
            .await
            .expect("files");
            for b in &files {
                for i in 0..b.num_rows() {
                    let p = datafusion::arrow::util::display::array_value_to_string(b.column(0), i)
                        .expect("path");
                    let p = p.strip_prefix("file://").unwrap_or(&p);
                    assert!(std::path::Path::new(p).exists(), "{name}: {p} expired");
                }
            }
            assert_eq!(
                rows(&lake.ctx, &t).await,
                rows(&lake.ctx, &format!("ice.ns.{model}")).await,
                "{name}: after expire_snapshots"
            );
            other_engines_agree(&lake, &name).await;
        }
    }
    // a table's first write staged: main (none) is its parent, so it fast-forwards
    create(&lake, "wap_first", "", ", 'write.wap.enabled'='true'").await;
    create(&lake, "wap_first_model", "", "").await;
    let staged = stage(
        &lake,
        "wap_first",
        "first",
        "INSERT INTO {t} VALUES (1, 1, 'a', 1.0)",
    )
    .await;
    assert_eq!(publish(&lake, "wap_first", "first", &staged).await, staged);
}
