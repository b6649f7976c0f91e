//! How `UPDATE` and `MERGE` resolve names, as Spark does: assignment targets (qualifiers,
//! struct fields, normalization, quoted names with dots), the side each `MERGE` clause
//! reads, and the order of unconditional clauses. Each refused statement commits
//! nothing; each accepted one is checked by the rows it leaves, in both write modes.

use crate::dml::{lake, mode_table, ok, run, snapshot_count as snapshots, Lake};

const MODES: [&str; 2] = ["copy-on-write", "merge-on-read"];

/// `statement` fails with a message holding `expected`, and the table is unchanged.
async fn refused(lake: &Lake, name: &str, statement: &str, expected: &str) {
    let before = snapshots(lake, name).await;
    let e = run(&lake.ctx, statement).await.expect_err(statement);
    assert!(e.contains(expected), "{statement}: {e}");
    assert_eq!(snapshots(lake, name).await, before, "{statement}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_update_set_resolves_qualifiers_struct_fields_and_case() {
    let lake = lake().await;
    for mode in MODES {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        table(
            &lake,
            &name,
            "id INT, a INT, st STRUCT<a: INT, b: INT, c: STRUCT<x: INT, y: STRING>>, v INT, \
             \"V\" INT",
            "(1, 1, named_struct('a', 100, 'b', 200, 'c', named_struct('x', 1, 'y', 'p')), \
             10, 100), (2, 2, NULL, 20, 200)",
            mode,
        )
        .await;
        // a field of a struct column, not the top-level column of the same name
        ok(&lake.ctx, &format!("UPDATE {t} SET st.a = 5 WHERE id = 1")).await;
        // unquoted names are lowercase in SET as in WHERE; the table's name and alias
        // qualify columns; several fields of one struct at any depth, one NULL struct
        ok(&lake.ctx, &format!("UPDATE {t} SET V = 7 WHERE V = 20")).await;
        ok(
            &lake.ctx,
            &format!("UPDATE {t} SET {name}.a = a + 10, ns.{name}.v = v + 1 WHERE id = 1"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("UPDATE {t} AS q SET q.st.c.y = 'z', ST.B = q.v, St.c.X = NULL"),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+----+-------------------------------+----+-----+\n\
             | id | a  | st                            | v  | V   |\n\
             +----+----+-------------------------------+----+-----+\n\
             | 1  | 11 | {a: 5, b: 11, c: {x: , y: z}} | 11 | 100 |\n\
             | 2  | 2  | {a: , b: 7, c: {x: , y: z}}   | 7  | 200 |\n\
             +----+----+-------------------------------+----+-----+",
            "{mode}"
        );
        for (statement, expected) in [
            (
                format!("UPDATE {t} SET no_such_table.a = 6"),
                format!(
                    "cannot resolve 'no_such_table.a' in UPDATE SET of '{t}': 'no_such_table' \
                     is neither a column of the table nor one of its names ({name}, \
                     ns.{name}, ice.ns.{name})"
                ),
            ),
            // with an alias, the alias alone names the table
            (
                format!("UPDATE {t} q SET {name}.a = 6"),
                format!("cannot resolve '{name}.a' in UPDATE SET of '{t}'"),
            ),
            (
                format!("UPDATE {t} SET other.{name}.a = 6"),
                format!("cannot resolve 'other.{name}.a'"),
            ),
            (
                format!("UPDATE {t} SET nope = 1"),
                format!("no column 'nope' in UPDATE SET of '{t}'"),
            ),
            (
                format!("UPDATE {t} SET st.nope = 1"),
                "cannot assign 'st.nope' in UPDATE SET".to_string(),
            ),
            (
                format!("UPDATE {t} SET v.x = 1"),
                "'v' is of type Int32, and only fields of structs can be assigned".to_string(),
            ),
            (
                format!("UPDATE {t} SET st = NULL, st.a = 1"),
                format!("Conflicting assignments for 'st' in UPDATE SET of '{t}'"),
            ),
            (
                format!("UPDATE {t} SET st.c.x = 1, ST.C = NULL"),
                "Conflicting assignments for 'st.c'".to_string(),
            ),
            (
                format!("UPDATE {t} SET st.a = 1, {name}.st.a = 2"),
                format!("Duplicate column 'st.a' in UPDATE SET of '{t}'"),
            ),
        ] {
            refused(&lake, &name, &statement, &expected).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_update_set_resolves_struct_fields_and_dotted_names() {
    let lake = lake().await;
    for mode in MODES {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        table(
            &lake,
            &name,
            "id INT, st STRUCT<a: INT, b: INT>, \"a.b\" INT, a INT",
            "(1, named_struct('a', 1, 'b', 2), 1, 1), (2, NULL, 2, 2)",
            mode,
        )
        .await;
        let source = "(SELECT * FROM (VALUES (1, 50), (2, 60), (3, 70)) v(id, w)) s";
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING {source} ON t.id = s.id \
                 WHEN MATCHED AND t.id = 1 THEN UPDATE SET st.a = s.w, \"a.b\" = 5 \
                 WHEN MATCHED THEN UPDATE SET t.st.b = s.w + t.a, t.\"a.b\" = 6 \
                 WHEN NOT MATCHED THEN INSERT (id, \"a.b\", st) VALUES (s.id, 9, NULL)"
            ),
        )
        .await;
        // without an alias the table's names qualify
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} USING {source} ON {name}.id = s.id AND s.id = 3 \
                 WHEN MATCHED THEN UPDATE SET ns.{name}.st.a = s.w, {name}.a = 0"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+---------------+-----+---+\n\
             | id | st            | a.b | a |\n\
             +----+---------------+-----+---+\n\
             | 1  | {a: 50, b: 2} | 5   | 1 |\n\
             | 2  | {a: , b: 62}  | 6   | 2 |\n\
             | 3  | {a: 70, b: }  | 9   | 0 |\n\
             +----+---------------+-----+---+",
            "{mode}"
        );
        for (statement, expected) in [
            (
                format!(
                    "MERGE INTO {t} t USING {source} ON t.id = s.id \
                     WHEN MATCHED THEN UPDATE SET s.w = 1"
                ),
                format!("cannot resolve 's.w' in MERGE UPDATE SET of '{t}'"),
            ),
            (
                format!(
                    "MERGE INTO {t} t USING {source} ON t.id = s.id \
                     WHEN MATCHED THEN UPDATE SET st.z = 1"
                ),
                "cannot assign 'st.z' in MERGE UPDATE SET".to_string(),
            ),
            (
                format!(
                    "MERGE INTO {t} t USING {source} ON t.id = s.id \
                     WHEN NOT MATCHED THEN INSERT (id, st.a) VALUES (s.id, 1)"
                ),
                format!("cannot insert into nested field 'st.a' in MERGE INSERT of '{t}'"),
            ),
            (
                format!(
                    "MERGE INTO {t} t USING {source} ON t.id = s.id \
                     WHEN MATCHED THEN UPDATE SET a = 1, T.A = 2"
                ),
                format!("Duplicate column 'a' in MERGE UPDATE SET of '{t}'"),
            ),
        ] {
            refused(&lake, &name, &statement, &expected).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_clauses_read_their_own_side() {
    let lake = lake().await;
    for mode in MODES {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        table(
            &lake,
            &name,
            "id INT, v INT",
            "(1, 10), (2, 20), (4, 40)",
            mode,
        )
        .await;
        let src = format!("{name}_src");
        table(
            &lake,
            &src,
            "id INT, v INT",
            "(1, 99), (3, 30), (5, -5)",
            mode,
        )
        .await;
        // unqualified names both sides have: the source's in NOT MATCHED, the target's in
        // NOT MATCHED BY SOURCE
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING ice.ns.{src} s ON t.id = s.id \
                 WHEN NOT MATCHED AND v > 0 THEN INSERT (id, v) VALUES (id, v + 1) \
                 WHEN NOT MATCHED BY SOURCE AND v > 30 THEN UPDATE SET v = v + id \
                 WHEN NOT MATCHED BY SOURCE THEN DELETE"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+----+\n| id | v  |\n+----+----+\n| 1  | 10 |\n| 3  | 31 |\n| 4  | 44 |\n\
             +----+----+",
            "{mode}"
        );
        // an unaliased source table qualifies by its name; an unaliased target's name too
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} USING ice.ns.{src} ON {name}.id = {src}.id \
                 WHEN NOT MATCHED BY TARGET AND {src}.v < 0 THEN INSERT VALUES (id, v)"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+----+\n| id | v  |\n+----+----+\n| 1  | 10 |\n| 3  | 31 |\n| 4  | 44 |\n\
             | 5  | -5 |\n+----+----+",
            "{mode}"
        );
        for source in [
            format!("ice.ns.{src} s"),
            "(SELECT 1 AS id, 99 AS v) s".to_string(),
        ] {
            for (clauses, expected) in [
                (
                    "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = s.v",
                    "WHEN NOT MATCHED BY SOURCE clause cannot resolve 's.v': such a clause \
                     reads only the target's columns",
                ),
                (
                    "WHEN NOT MATCHED BY SOURCE AND s.v IS NULL THEN DELETE",
                    "WHEN NOT MATCHED BY SOURCE clause cannot resolve 's.v'",
                ),
                (
                    "WHEN NOT MATCHED AND t.v IS NULL THEN INSERT (id, v) VALUES (s.id, 1)",
                    "WHEN NOT MATCHED clause cannot resolve 't.v': such a clause reads only \
                     the source's columns",
                ),
                (
                    "WHEN NOT MATCHED BY TARGET THEN INSERT (id, v) VALUES (s.id, t.v)",
                    "WHEN NOT MATCHED BY TARGET clause cannot resolve 't.v'",
                ),
            ] {
                let statement = format!("MERGE INTO {t} t USING {source} ON t.id = s.id {clauses}");
                refused(
                    &lake,
                    &name,
                    &statement,
                    &format!("MERGE into '{t}': {expected}"),
                )
                .await;
            }
        }
        // a name only the other side has
        refused(
            &lake,
            &name,
            &format!(
                "MERGE INTO {t} t USING (SELECT 1 AS id, 2 AS w) s ON t.id = s.id \
                 WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = w"
            ),
            "WHEN NOT MATCHED BY SOURCE clause cannot resolve 'w'",
        )
        .await;
        refused(
            &lake,
            &name,
            &format!(
                "MERGE INTO {t} t USING (SELECT 7 AS id) s ON t.id = s.id \
                 WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, v)"
            ),
            "WHEN NOT MATCHED clause cannot resolve 'v'",
        )
        .await;
        // a plan made without `sql::execute` (no rewrite) is checked by the table
        for (statement, expected) in [
            (
                format!(
                    "MERGE INTO {t} t USING ice.ns.{src} s ON t.id = s.id \
                     WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = s.v"
                ),
                "WHEN NOT MATCHED BY SOURCE clause cannot resolve source column",
            ),
            (
                format!(
                    "MERGE INTO {t} t USING ice.ns.{src} s ON t.id = s.id \
                     WHEN NOT MATCHED AND t.v IS NULL THEN INSERT VALUES (s.id, s.v)"
                ),
                "WHEN NOT MATCHED clause cannot resolve target column",
            ),
        ] {
            let before = snapshots(&lake, &name).await;
            let e = match lake.ctx.sql(&statement).await {
                Ok(df) => df.collect().await.expect_err(&statement).to_string(),
                Err(e) => e.to_string(),
            };
            assert!(e.contains(expected), "{statement}: {e}");
            assert_eq!(snapshots(&lake, &name).await, before, "{statement}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_refuses_a_clause_after_an_unconditional_one() {
    let lake = lake().await;
    table(&lake, "t", "id INT, v INT", "(1, 10)", "copy-on-write").await;
    let t = "ice.ns.t";
    let source = "(SELECT 1 AS id) s";
    for (clauses, kind, class) in [
        (
            "WHEN MATCHED THEN UPDATE SET v = 1 WHEN MATCHED AND t.v = 10 THEN DELETE",
            "MATCHED",
            "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION",
        ),
        (
            "WHEN NOT MATCHED THEN INSERT VALUES (s.id, 1) \
             WHEN NOT MATCHED BY TARGET AND s.id > 0 THEN INSERT VALUES (s.id, 2)",
            "NOT MATCHED",
            "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION",
        ),
        (
            "WHEN NOT MATCHED BY SOURCE THEN DELETE \
             WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 0",
            "NOT MATCHED BY SOURCE",
            "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION",
        ),
    ] {
        let statement = format!("MERGE INTO {t} t USING {source} ON t.id = s.id {clauses}");
        let expected = format!(
            "MERGE into 'ice.ns.t': only the last WHEN {kind} clause may omit its condition"
        );
        refused(&lake, "t", &statement, &expected).await;
        let e = match lake.ctx.sql(&statement).await {
            Ok(df) => df.collect().await.expect_err(&statement).to_string(),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(class), "{statement}: {e}");
    }
    // the last clause of each kind may omit it, conditional ones may come first
    ok(
        &lake.ctx,
        &format!(
            "MERGE INTO {t} t USING {source} ON t.id = s.id \
             WHEN MATCHED AND t.v = 0 THEN DELETE WHEN MATCHED THEN UPDATE SET v = 11"
        ),
    )
    .await;
    let rows = ok(&lake.ctx, &format!("SELECT * FROM {t}")).await;
    assert_eq!(
        rows,
        "+----+----+\n| id | v  |\n+----+----+\n| 1  | 11 |\n+----+----+"
    );
}

/// `ns.<name>` with the given columns and rows (v2), in `mode` for every row-level
/// statement.
async fn table(lake: &Lake, name: &str, columns: &str, rows: &str, mode: &str) {
    mode_table(lake, name, columns, rows, mode, 2).await
}
