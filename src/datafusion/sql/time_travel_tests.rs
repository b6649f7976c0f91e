//! Spark's time-travel syntax and version identifiers (`time_travel`) on a SQLite catalog.

use super::tests::{ident, ok, run, session};
use crate::ErrorKind;

#[tokio::test]
async fn spark_time_travel_reads_each_version() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    ok(&ctx, "ALTER TABLE ns.t CREATE TAG v1").await;
    ok(&ctx, "ALTER TABLE ns.t CREATE BRANCH dev").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (2), (3)").await;
    // Spark's branch identifier takes the rows
    ok(&ctx, "INSERT INTO ns.t.branch_dev VALUES (100)").await;
    let m = catalog
        .load_table(&ident("ns.t"))
        .await
        .unwrap()
        .metadata()
        .clone();
    let first = m.snapshot_log[0].clone();
    let first_time = crate::catalog::format_ms(first.timestamp_ms);
    let seconds = first.timestamp_ms.div_euclid(1000) + 1;
    let cases = [
        format!(
            "SELECT count(*) FROM ns.t VERSION AS OF {}",
            first.snapshot_id
        ),
        format!(
            "SELECT count(*) FROM ns.t FOR SYSTEM_VERSION AS OF {}",
            first.snapshot_id
        ),
        "SELECT count(*) FROM ns.t FOR VERSION AS OF 'v1'".to_string(),
        format!("SELECT count(*) FROM ns.t TIMESTAMP AS OF '{first_time}'"),
        format!("SELECT count(*) FROM ns.t FOR SYSTEM_TIME AS OF TIMESTAMP '{first_time}' AS x"),
        "SELECT count(*) FROM ns.t.tag_v1".to_string(),
        format!(
            "SELECT count(*) FROM ns.t.snapshot_id_{}",
            first.snapshot_id
        ),
        format!(
            "SELECT count(*) FROM ns.t.at_timestamp_{}",
            first.timestamp_ms
        ),
        format!(
            "SELECT count(*) FROM ns.\"t$files\" VERSION AS OF {}",
            first.snapshot_id
        ),
    ];
    for sql in &cases {
        assert_eq!(ok(&ctx, sql).await, [["1"]], "{sql}");
    }
    // seconds since the epoch, as Spark casts a number: the second after the first
    // commit is at or after it (the second snapshot is at least as late)
    let rows = ok(
        &ctx,
        &format!("SELECT count(*) >= 1 FROM ns.t TIMESTAMP AS OF {seconds}"),
    )
    .await;
    assert_eq!(rows, [["true"]]);
    assert_eq!(
        ok(&ctx, "SELECT id FROM ns.t.branch_dev ORDER BY id").await,
        [["1"], ["100"]]
    );
    assert_eq!(
        ok(&ctx, "SELECT count(*) FROM ns.t VERSION AS OF 'dev'").await,
        [["2"]]
    );
    // in joins, each side at its own version; the current table unchanged
    let rows = ok(
        &ctx,
        "SELECT count(*) FROM ns.t.tag_v1 a JOIN ns.t VERSION AS OF 'dev' b ON a.id = b.id",
    )
    .await;
    assert_eq!(rows, [["1"]]);
    assert_eq!(ok(&ctx, "SELECT count(*) FROM ns.t").await, [["3"]]);
    // a column named like a version identifier, and words around `AS OF`, stay as written
    ok(&ctx, "CREATE TABLE ns.c (branch_x INT, version INT)").await;
    ok(&ctx, "INSERT INTO ns.c VALUES (7, 8)").await;
    assert_eq!(
        ok(&ctx, "SELECT c.branch_x, version AS of FROM ns.c AS c").await,
        [["7", "8"]]
    );
}

#[tokio::test]
async fn spark_time_travel_errors_name_the_clause() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    for (sql, wanted) in [
        (
            "SELECT * FROM ns.t TIMESTAMP AS OF id",
            "TIMESTAMP AS OF id: not a constant expression",
        ),
        (
            "SELECT * FROM ns.t TIMESTAMP AS OF 'yesterday'",
            "TIMESTAMP AS OF 'yesterday' is not a timestamp",
        ),
        (
            "SELECT * FROM ns.t.at_timestamp_soon",
            "at_timestamp_ takes milliseconds",
        ),
    ] {
        let err = run(&ctx, sql).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{sql}: {err}");
        assert!(err.to_string().contains(wanted), "{sql}: {err}");
    }
    let err = run(&ctx, "SELECT * FROM ns.t VERSION AS OF 42")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    // a branch that does not exist
    let err = run(&ctx, "SELECT * FROM ns.t.branch_nope")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("'nope'"), "{err}");
    // a name that names a version, and a clause: refused as Spark refuses it (taking
    // either version read the branch's rows for `VERSION AS OF 'v1'`)
    ok(&ctx, "ALTER TABLE ns.t CREATE TAG v1").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (2)").await;
    ok(&ctx, "ALTER TABLE ns.t CREATE BRANCH dev").await;
    for (sql, name) in [
        (
            "SELECT * FROM ns.t.branch_dev VERSION AS OF 'v1'",
            "ns.t.branch_dev",
        ),
        (
            "SELECT * FROM ns.t.tag_v1 TIMESTAMP AS OF '2100-01-01 00:00:00'",
            "ns.t.tag_v1",
        ),
        (
            "SELECT * FROM ns.\"t@dev\" FOR SYSTEM_VERSION AS OF 'v1'",
            "t@dev",
        ),
        (
            "SELECT count(*) FROM ns.\"t@dev$files\" VERSION AS OF 'v1'",
            "t@dev",
        ),
        (
            "SELECT * FROM ns.t JOIN ns.t.branch_dev FOR SYSTEM_TIME AS OF 0 ON true",
            "ns.t.branch_dev",
        ),
    ] {
        let err = run(&ctx, sql).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{sql}: {err}");
        let text = err.to_string();
        assert!(
            text.contains(&format!("'{name}")) && text.contains("cannot also take"),
            "{sql}: {err}"
        );
    }
    // each form alone still reads its version
    for (sql, n) in [
        ("SELECT count(*) FROM ns.t.branch_dev", "2"),
        ("SELECT count(*) FROM ns.t VERSION AS OF 'v1'", "1"),
        ("SELECT count(*) FROM ns.\"t@v1\"", "1"),
    ] {
        assert_eq!(ok(&ctx, sql).await, vec![vec![n.to_string()]], "{sql}");
    }
}

/// `VERSION AS OF <id>` reads the snapshot of that id even when a tag is named like it
/// (Spark's `SparkCatalog.loadTable` reads an integer as a snapshot id before it looks
/// for a ref); it read the tag's snapshot.
#[tokio::test]
async fn version_as_of_an_id_reads_that_snapshot_before_a_ref_of_that_name() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.u (id INT)").await;
    ok(&ctx, "INSERT INTO ns.u VALUES (1)").await;
    ok(&ctx, "INSERT INTO ns.u VALUES (2)").await;
    let first = ok(
        &ctx,
        "SELECT snapshot_id FROM ns.u.snapshots ORDER BY committed_at LIMIT 1",
    )
    .await[0][0]
        .clone();
    // a tag of the current snapshot named like the first one's id
    ok(&ctx, &format!("ALTER TABLE ns.u CREATE TAG `{first}`")).await;
    for sql in [
        format!("SELECT count(*) FROM ns.u VERSION AS OF {first}"),
        format!("SELECT count(*) FROM ns.u VERSION AS OF '{first}'"),
        format!("SELECT count(*) FROM ns.\"u@{first}\""),
        format!("SELECT count(*) FROM ns.u.snapshot_id_{first}"),
    ] {
        assert_eq!(ok(&ctx, &sql).await, vec![vec!["1".to_string()]], "{sql}");
    }
}

/// `TIMESTAMP AS OF` a number of seconds with a fraction, as Spark casts one to a
/// timestamp (exactly for a decimal literal, cut below the millisecond as Iceberg cuts
/// Spark's microseconds): a literal, a decimal and a double expression each pick the
/// snapshot current at that millisecond (they were refused: "not a number of seconds").
#[tokio::test]
async fn timestamp_as_of_takes_fractional_seconds() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.f (id INT)").await;
    for i in 0..3 {
        ok(&ctx, &format!("INSERT INTO ns.f VALUES ({i})")).await;
    }
    // each snapshot adds a row: the rows as of `ms` are the snapshots committed by then
    let times: Vec<i64> = ok(
        &ctx,
        "SELECT CAST(CAST(committed_at AS BIGINT) / 1000 AS BIGINT) AS ms \
         FROM ns.f.snapshots ORDER BY committed_at",
    )
    .await
    .iter()
    .map(|r| r[0].parse().unwrap())
    .collect();
    let rows_at = |ms: i64| times.iter().filter(|t| **t <= ms).count().to_string();
    let seconds = |ms: i64| format!("{}.{:03}", ms / 1000, ms % 1000);
    for ms in [times[1], times[1] - 1, times[2], times[2] + 1] {
        for sql in [
            // the digits below the millisecond are cut, never rounded up
            format!(
                "SELECT count(*) FROM ns.f FOR SYSTEM_TIME AS OF {}999",
                seconds(ms)
            ),
            format!("SELECT count(*) FROM ns.f TIMESTAMP AS OF {}", seconds(ms)),
            format!(
                "SELECT count(*) FROM ns.f TIMESTAMP AS OF CAST('{}' AS DECIMAL(18, 6))",
                seconds(ms)
            ),
        ] {
            assert_eq!(ok(&ctx, &sql).await, vec![vec![rows_at(ms)]], "{sql}");
        }
    }
    // a double: half a second (exact) after the second following the last snapshot
    let half = (times[2] / 1000 + 1) * 1000 + 500;
    let sql = format!(
        "SELECT count(*) FROM ns.f TIMESTAMP AS OF CAST({} AS DOUBLE) + 0.5",
        times[2] / 1000 + 1
    );
    assert_eq!(ok(&ctx, &sql).await, vec![vec![rows_at(half)]], "{sql}");
    // a double literal, as Spark reads `1.5e9`: a time before the first snapshot
    let err = run(&ctx, "SELECT * FROM ns.f TIMESTAMP AS OF 1.5e9")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(
        err.to_string().contains("as of 2017-07-14T02:40:00.000Z"),
        "{err}"
    );
}

/// A timestamp without a zone is a wall-clock time in the session's time zone
/// (`datafusion.execution.time_zone`), as Spark reads it in `spark.sql.session.timeZone`;
/// one with a zone is that instant.
#[tokio::test]
async fn timestamp_as_of_reads_a_zoneless_time_in_the_session_zone() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.z (id INT)").await;
    ok(&ctx, "INSERT INTO ns.z VALUES (1)").await;
    let ms: i64 = ok(
        &ctx,
        "SELECT CAST(CAST(committed_at AS BIGINT) / 1000 AS BIGINT) FROM ns.z.snapshots",
    )
    .await[0][0]
        .parse()
        .unwrap();
    let wall = |offset_h: i64| {
        chrono::DateTime::from_timestamp_millis(ms + offset_h * 3_600_000)
            .unwrap()
            .naive_utc()
            .format("%Y-%m-%d %H:%M:%S%.3f")
            .to_string()
    };
    let count = |sql: String| {
        let ctx = ctx.clone();
        async move { run(&ctx, &sql).await.map(|r| r[0][0].clone()) }
    };
    let utc = wall(0);
    // no session zone: UTC
    assert_eq!(
        count(format!("SELECT count(*) FROM ns.z TIMESTAMP AS OF '{utc}'"))
            .await
            .unwrap(),
        "1"
    );
    ok(&ctx, "SET datafusion.execution.time_zone = '+02:00'").await;
    // the snapshot's time as a +02:00 wall clock finds it: string, TIMESTAMP literal,
    // a zone-less expression
    let local = wall(2);
    for sql in [
        format!("SELECT count(*) FROM ns.z TIMESTAMP AS OF '{local}'"),
        format!("SELECT count(*) FROM ns.z TIMESTAMP AS OF TIMESTAMP '{local}'"),
        format!(
            "SELECT count(*) FROM ns.z TIMESTAMP AS OF TIMESTAMP '{local}' + INTERVAL '0' SECOND"
        ),
        // a zone in the text is that instant
        format!(
            "SELECT count(*) FROM ns.z TIMESTAMP AS OF '{}Z'",
            utc.replace(' ', "T")
        ),
    ] {
        assert_eq!(count(sql.clone()).await.unwrap(), "1", "{sql}");
    }
    // the UTC wall clock is now two hours before the snapshot
    let err = count(format!("SELECT count(*) FROM ns.z TIMESTAMP AS OF '{utc}'"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    // procedure timestamps too: rollback_to_timestamp's time (string, TIMESTAMP literal or
    // a zone-less expression) is read in the session's zone; at the UTC wall clock (two
    // hours before the snapshot in +02:00) no ancestor is older, at the local one it is
    ok(&ctx, "INSERT INTO ns.z VALUES (2)").await;
    // the second snapshot's time as a UTC wall clock: in UTC the first snapshot is the
    // latest older one (a rollback), in +02:00 no snapshot is older
    let ms2: i64 = ok(
        &ctx,
        "SELECT max(CAST(CAST(committed_at AS BIGINT) / 1000 AS BIGINT)) FROM ns.z.snapshots",
    )
    .await[0][0]
        .parse()
        .unwrap();
    let utc2 = chrono::DateTime::from_timestamp_millis(ms2)
        .unwrap()
        .naive_utc()
        .format("%Y-%m-%d %H:%M:%S%.3f")
        .to_string();
    for arg in [
        format!("'{utc2}'"),
        format!("TIMESTAMP '{utc2}'"),
        format!("TIMESTAMP '{utc2}' + INTERVAL '0' SECOND"),
    ] {
        let sql = format!("CALL system.rollback_to_timestamp('ns.z', {arg})");
        let err = run(&ctx, &sql).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{sql}: {err}");
    }
    ok(&ctx, "RESET datafusion.execution.time_zone").await;
    let sql = format!("CALL system.rollback_to_timestamp('ns.z', '{utc2}')");
    assert_eq!(ok(&ctx, &sql).await.len(), 1, "{sql}");
    assert_eq!(
        count("SELECT count(*) FROM ns.z".to_string())
            .await
            .unwrap(),
        "1"
    );
    ok(&ctx, "SET datafusion.execution.time_zone = 'Mars/Olympus'").await;
    let err = count(format!("SELECT count(*) FROM ns.z TIMESTAMP AS OF '{utc}'"))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("'Mars/Olympus' is not a time zone"),
        "{err}"
    );
}

/// A clause's value may be a constant expression, as Spark folds one: it picks the
/// snapshot current at the instant it evaluates to (the last `snapshot-log` entry at or
/// before it, so a time exactly a snapshot's `timestamp-ms` picks that snapshot), or the
/// snapshot, branch or tag its value names.
#[tokio::test]
async fn time_travel_takes_constant_expressions() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    ok(&ctx, "ALTER TABLE ns.t CREATE TAG v1").await;
    // the second commit in a later millisecond than the first
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    ok(&ctx, "INSERT INTO ns.t VALUES (2), (3)").await;
    let m = catalog
        .load_table(&ident("ns.t"))
        .await
        .unwrap()
        .metadata()
        .clone();
    let (first, second) = (m.snapshot_log[0].clone(), m.snapshot_log[1].clone());
    assert!(first.timestamp_ms < second.timestamp_ms);
    let (first_ms, second_ms) = (first.timestamp_ms, second.timestamp_ms);
    // the first commit's time without a zone (read as UTC) and at +02:00
    let utc = chrono::DateTime::from_timestamp_millis(first_ms).unwrap();
    let naive = utc.format("%Y-%m-%d %H:%M:%S%.3f").to_string();
    let plus_two = utc
        .with_timezone(&chrono::FixedOffset::east_opt(2 * 3600).unwrap())
        .format("%Y-%m-%dT%H:%M:%S%.3f%:z")
        .to_string();
    let cases = [
        // exactly the first snapshot's timestamp-ms: that snapshot
        (
            format!("TIMESTAMP AS OF to_timestamp_millis({first_ms})"),
            "1",
        ),
        (
            format!("FOR SYSTEM_TIME AS OF CAST('{naive}' AS TIMESTAMP)"),
            "1",
        ),
        (
            format!("TIMESTAMP AS OF CAST('{plus_two}' AS TIMESTAMP)"),
            "1",
        ),
        (
            format!("TIMESTAMP AS OF TIMESTAMP '{naive}' + INTERVAL '0' SECOND"),
            "1",
        ),
        // the millisecond before the second snapshot: still the first
        (
            format!("TIMESTAMP AS OF to_timestamp_millis({second_ms}) - INTERVAL '1' MILLISECOND"),
            "1",
        ),
        (
            format!("TIMESTAMP AS OF to_timestamp_millis({second_ms})"),
            "3",
        ),
        ("FOR SYSTEM_TIME AS OF now()".to_string(), "3"),
        (
            "TIMESTAMP AS OF current_timestamp() + INTERVAL '1' DAY".to_string(),
            "3",
        ),
        // a whole number is seconds since the epoch, as Spark casts one
        (
            format!("TIMESTAMP AS OF {} * 1", second_ms.div_euclid(1000) + 1),
            "3",
        ),
        // a string is read as a timestamp literal is
        (format!("TIMESTAMP AS OF concat('{naive}', '')"), "1"),
        // snapshot ids and refs
        (format!("VERSION AS OF {} + 1", first.snapshot_id - 1), "1"),
        (
            format!("VERSION AS OF CAST({} AS STRING)", first.snapshot_id),
            "1",
        ),
        ("FOR SYSTEM_VERSION AS OF 'v' || '1'".to_string(), "1"),
    ];
    for (clause, rows) in &cases {
        let sql = format!("SELECT count(*) FROM ns.t {clause}");
        assert_eq!(ok(&ctx, &sql).await, [[*rows]], "{sql}");
        // an alias and a join after the expression
        let sql = format!("SELECT count(*) FROM ns.t {clause} AS a JOIN ns.t b ON a.id = b.id");
        assert_eq!(ok(&ctx, &sql).await, [[*rows]], "{sql}");
    }
    // Spark's qualifier and two clauses of one statement
    let sql = format!(
        "SELECT t.id FROM ns.t TIMESTAMP AS OF to_timestamp_millis({first_ms}) \
         WHERE t.id IN (SELECT id FROM ns.t FOR SYSTEM_TIME AS OF now() x) ORDER BY t.id"
    );
    assert_eq!(ok(&ctx, &sql).await, [["1"]], "{sql}");
    // before the first snapshot: none was current then
    let sql = format!(
        "SELECT count(*) FROM ns.t TIMESTAMP AS OF to_timestamp_millis({first_ms}) - \
         INTERVAL '1' MILLISECOND"
    );
    let err = run(&ctx, &sql).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{sql}: {err}");
    // refused, naming the clause: no constant, NULL, another type, kept plans
    for (sql, wanted) in [
        (
            "SELECT * FROM ns.t TIMESTAMP AS OF (SELECT max(id) FROM ns.t)",
            "TIMESTAMP AS OF (SELECT max(id) FROM ns.t): not a constant (it reads a table)",
        ),
        (
            // a table that does not plan: still a table read (it named DataFusion's
            // 'table not found' of Spark's metadata name)
            "SELECT * FROM ns.t VERSION AS OF (SELECT max(snapshot_id) FROM ns.t.snapshots)",
            "VERSION AS OF (SELECT max(snapshot_id) FROM ns.t.snapshots): not a constant (it \
             reads a table)",
        ),
        (
            "SELECT * FROM ns.t VERSION AS OF (SELECT max(id) FROM ns.nope)",
            "VERSION AS OF (SELECT max(id) FROM ns.nope): not a constant (it reads a table)",
        ),
        (
            "SELECT * FROM ns.t TIMESTAMP AS OF to_timestamp_seconds(random())",
            "TIMESTAMP AS OF to_timestamp_seconds(random()): not a constant: it is volatile",
        ),
        (
            "SELECT * FROM ns.t VERSION AS OF id + 1",
            "VERSION AS OF id + 1: not a constant expression",
        ),
        (
            "SELECT * FROM ns.t TIMESTAMP AS OF CAST(NULL AS TIMESTAMP)",
            "its value is NULL",
        ),
        (
            "SELECT * FROM ns.t TIMESTAMP AS OF 1 = 1",
            "names no version",
        ),
        (
            "SELECT * FROM ns.t TIMESTAMP AS OF",
            "TIMESTAMP AS OF takes a value",
        ),
        (
            "PREPARE q AS SELECT * FROM ns.t TIMESTAMP AS OF now()",
            "PREPARE keeps its plan",
        ),
        (
            "CREATE VIEW ns.v AS SELECT * FROM ns.t TIMESTAMP AS OF now() - INTERVAL '1' HOUR",
            "CREATE VIEW keeps its plan",
        ),
    ] {
        let err = run(&ctx, sql).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{sql}: {err}");
        assert!(err.to_string().contains(wanted), "{sql}: {err}");
    }
    // a literal in a prepared statement still is one
    ok(
        &ctx,
        &format!(
            "PREPARE q AS SELECT count(*) FROM ns.t VERSION AS OF {}",
            first.snapshot_id
        ),
    )
    .await;
    assert_eq!(ok(&ctx, "EXECUTE q").await, [["1"]]);
}

/// Columns of a table named with Spark's version forms take Spark's qualifiers: the
/// trailing parts of the name as written (`branch_dev.id`, `t.branch_dev.id`,
/// `ns.t.branch_dev.id`; `t.id` for `ns.t VERSION AS OF …`), in `SELECT`, `UPDATE`,
/// `DELETE` and `MERGE` with an unaliased target, and `"t@dev".id` for icefloe's own
/// form. The rows each statement changes are the branch's, and `main` keeps its own.
#[tokio::test]
async fn version_forms_keep_spark_qualifiers() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT, s STRING)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1, 'a'), (2, 'b'), (3, 'c')").await;
    ok(&ctx, "ALTER TABLE ns.t CREATE BRANCH dev").await;
    ok(&ctx, "ALTER TABLE ns.t CREATE TAG t1").await;
    let branch = |ctx| async move { ok(ctx, "SELECT id, s FROM ns.\"t@dev\" ORDER BY id").await };
    ok(
        &ctx,
        "UPDATE ns.t.branch_dev SET s = 'x' WHERE branch_dev.id = 1",
    )
    .await;
    ok(
        &ctx,
        "UPDATE ns.t.branch_dev SET s = 'y' WHERE t.branch_dev.id = 2 OR ns.t.branch_dev.id = 3",
    )
    .await;
    assert_eq!(branch(&ctx).await, [["1", "x"], ["2", "y"], ["3", "y"]]);
    ok(&ctx, "DELETE FROM ns.t.branch_dev WHERE branch_dev.id = 3").await;
    ok(
        &ctx,
        "MERGE INTO ns.t.branch_dev USING (SELECT 2 AS id, 'm' AS s UNION ALL \
         SELECT 4, 'n') src ON branch_dev.id = src.id \
         WHEN MATCHED THEN UPDATE SET s = src.s WHEN NOT MATCHED THEN INSERT *",
    )
    .await;
    assert_eq!(branch(&ctx).await, [["1", "x"], ["2", "m"], ["4", "n"]]);
    // icefloe's form: the table's own name qualifies
    ok(
        &ctx,
        "UPDATE ns.\"t@dev\" SET s = 'z' WHERE \"t@dev\".id = 1 OR ns.\"t@dev\".id = 4",
    )
    .await;
    ok(
        &ctx,
        "MERGE INTO ns.\"t@dev\" USING (SELECT 2 AS id) src ON \"t@dev\".id = src.id \
         WHEN MATCHED THEN DELETE",
    )
    .await;
    assert_eq!(branch(&ctx).await, [["1", "z"], ["4", "z"]]);
    // main is as it was
    assert_eq!(
        ok(&ctx, "SELECT id, s FROM ns.t ORDER BY id").await,
        [["1", "a"], ["2", "b"], ["3", "c"]]
    );
    // reads: the tag and the branch by Spark's qualifiers, also beside the current table
    for sql in [
        "SELECT branch_dev.id FROM ns.t.branch_dev ORDER BY branch_dev.id",
        "SELECT t.branch_dev.id FROM ns.t.branch_dev ORDER BY 1",
    ] {
        assert_eq!(ok(&ctx, sql).await, [["1"], ["4"]], "{sql}");
    }
    for sql in [
        "SELECT tag_t1.id FROM ns.t.tag_t1 WHERE tag_t1.s = 'b'",
        "SELECT t.id FROM ns.t VERSION AS OF 't1' WHERE t.s = 'b'",
        "SELECT ns.t.id FROM ns.t FOR VERSION AS OF 't1' WHERE ns.t.s = 'b'",
    ] {
        assert_eq!(ok(&ctx, sql).await, [["2"]], "{sql}");
    }
    // beside the current table, each by its own qualifier
    assert_eq!(
        ok(
            &ctx,
            "SELECT t.s, branch_dev.s FROM ns.t JOIN ns.t.branch_dev ON t.id = branch_dev.id",
        )
        .await,
        [["a", "z"]]
    );
    // an alias the statement gives stays the one qualifier
    assert_eq!(
        ok(&ctx, "SELECT d.id FROM ns.t.branch_dev d WHERE d.id = 4").await,
        [["4"]]
    );
    // the same table twice without aliases: no alias is made up for the version, so `t`
    // stays the current table's qualifier (Spark finds `t.id` ambiguous here)
    assert_eq!(
        ok(
            &ctx,
            "SELECT t.s FROM ns.t JOIN ns.t VERSION AS OF 't1' ON ns.t.id = 1",
        )
        .await,
        [["a"], ["a"], ["a"]]
    );
    // a write target keeps its name (no alias)
    ok(&ctx, "INSERT INTO ns.t.branch_dev VALUES (5, 'e')").await;
    assert_eq!(
        ok(&ctx, "SELECT count(*) FROM ns.t.branch_dev").await,
        [["3"]]
    );
}

#[tokio::test]
async fn spark_metadata_table_names_read_the_metadata_tables() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    ok(&ctx, "ALTER TABLE ns.t CREATE TAG v1").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (2), (3)").await;
    let first = catalog
        .load_table(&ident("ns.t"))
        .await
        .unwrap()
        .metadata()
        .snapshot_log[0]
        .snapshot_id;
    // `ns.t.<kind>` and `cat.ns.t.<kind>` are `ns."t$<kind>"`, at a version too
    for (sql, expected) in [
        ("SELECT count(*) FROM ns.t.snapshots", "2"),
        ("SELECT count(*) FROM cat.ns.t.history", "2"),
        ("SELECT count(*) FROM ns.t.files", "2"),
        ("SELECT sum(record_count) FROM ns.t.data_files", "3"),
        ("SELECT count(*) FROM ns.t.refs", "2"),
        (
            "SELECT count(*) FROM ns.t.files FOR VERSION AS OF 'v1'",
            "1",
        ),
        (
            &format!("SELECT count(*) FROM ns.t.files VERSION AS OF {first}"),
            "1",
        ),
        // the last part is the alias, as Spark qualifies the columns
        ("SELECT max(files.record_count) FROM ns.t.files", "2"),
        (
            "SELECT count(*) FROM ns.t.snapshots s JOIN ns.t.history h \
             ON s.snapshot_id = h.snapshot_id WHERE h.is_current_ancestor",
            "2",
        ),
    ] {
        assert_eq!(ok(&ctx, sql).await, [[expected]], "{sql}");
    }
    // names as Spark resolves them: unquoted ones in any case, quoted parts; `DESCRIBE`
    // and `SHOW COLUMNS` list the metadata table's columns
    for (sql, expected) in [
        ("SELECT count(*) FROM NS.T.FILES", "2"),
        ("SELECT count(*) FROM Cat.Ns.T.Snapshots", "2"),
        ("SELECT count(*) FROM ns.\"t\".\"files\"", "2"),
        ("SELECT count(*) FROM \"ns\".\"t\".\"history\" AS h", "2"),
        ("SELECT count(*) FROM NS.T.FILES VERSION AS OF 'v1'", "1"),
    ] {
        assert_eq!(ok(&ctx, sql).await, [[expected]], "{sql}");
    }
    assert_eq!(
        ok(&ctx, "SHOW COLUMNS FROM ns.t.snapshots").await,
        ok(&ctx, "SHOW COLUMNS FROM ns.\"t$snapshots\"").await
    );
    for sql in ["DESCRIBE ns.t.snapshots", "DESCRIBE NS.T.SNAPSHOTS"] {
        let rows = ok(&ctx, sql).await;
        let names: Vec<&str> = rows
            .iter()
            .map(|r| r.iter().find(|v| *v == "snapshot_id" || *v == "parent_id"))
            .filter_map(|v| v.map(String::as_str))
            .collect();
        assert_eq!(names, ["snapshot_id", "parent_id"], "{sql}: {rows:?}");
    }
    // a table of that name keeps its meaning
    ok(&ctx, "CREATE TABLE ns.files (x INT)").await;
    ok(&ctx, "INSERT INTO ns.files VALUES (7), (8), (9)").await;
    assert_eq!(ok(&ctx, "SELECT count(*) FROM cat.ns.files").await, [["3"]]);
    // a column of that name keeps its meaning
    ok(&ctx, "CREATE TABLE ns.c (history INT)").await;
    ok(&ctx, "INSERT INTO ns.c VALUES (5)").await;
    assert_eq!(ok(&ctx, "SELECT ns.c.history FROM ns.c").await, [["5"]]);
    // no table `ns.nope`: not rewritten, DataFusion's error
    assert!(run(&ctx, "SELECT count(*) FROM ns.nope.files")
        .await
        .is_err());
    // a last part that is no metadata table of an existing table: that metadata table
    // is unknown, listing them (tester Q65 F4: "catalog 'ns' not found")
    for sql in [
        "SELECT count(*) FROM ns.t.nope",
        "SELECT count(*) FROM NS.T.SNAPSHOT",
        "SELECT count(*) FROM cat.ns.t.nope",
    ] {
        let err = run(&ctx, sql).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{sql}: {err}");
        let text = err.to_string();
        assert!(
            text.contains("of table 'ns.t'") || text.contains("of table 'cat.ns.t'"),
            "{sql}: {text}"
        );
        assert!(
            text.contains("metadata tables: snapshots, history") && !text.contains("catalog '"),
            "{sql}: {text}"
        );
    }
    // a version's metadata table in dotted parts names the form that reads it
    ok(&ctx, "ALTER TABLE ns.t CREATE BRANCH dev").await;
    let err = run(&ctx, "SELECT count(*) FROM ns.t.branch_dev.files")
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("which is written ns.\"t@dev$files\""),
        "{err}"
    );
    assert_eq!(
        ok(&ctx, "SELECT count(*) FROM ns.\"t@dev$files\"").await,
        [["2"]]
    );
}

/// A timestamp string may name its zone after a space, as Spark's string-to-timestamp
/// reads one (`2026-01-01 10:00:00 Asia/Tokyo`, `… +09:00`): that wall-clock time in that
/// zone, whatever the session's zone. Such strings were refused as "not a timestamp".
#[tokio::test]
async fn timestamp_as_of_reads_a_zone_named_after_the_time() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.z (id INT)").await;
    ok(&ctx, "INSERT INTO ns.z VALUES (1)").await;
    let ms: i64 = ok(
        &ctx,
        "SELECT CAST(CAST(committed_at AS BIGINT) / 1000 AS BIGINT) FROM ns.z.snapshots",
    )
    .await[0][0]
        .parse()
        .unwrap();
    let wall = |zone: &str| {
        let tz: datafusion::arrow::array::timezone::Tz = zone.parse().unwrap();
        chrono::DateTime::from_timestamp_millis(ms)
            .unwrap()
            .with_timezone(&tz)
            .format("%Y-%m-%d %H:%M:%S%.3f")
            .to_string()
    };
    let tokyo = wall("Asia/Tokyo");
    let new_york = wall("America/New_York");
    let utc = wall("UTC");
    // whatever the session's zone
    for session_zone in ["+05:30", "Europe/Berlin"] {
        ok(
            &ctx,
            &format!("SET datafusion.execution.time_zone = '{session_zone}'"),
        )
        .await;
        for text in [
            format!("{tokyo} Asia/Tokyo"),
            format!("{new_york} America/New_York"),
            format!("{tokyo} +09:00"),
            format!("{utc} UTC"),
        ] {
            let sql = format!("SELECT count(*) FROM ns.z TIMESTAMP AS OF '{text}'");
            assert_eq!(ok(&ctx, &sql).await, [["1"]], "{sql}");
        }
        // the Tokyo wall clock read in Kiritimati (+14:00) is five hours before it
        let sql = format!("SELECT count(*) FROM ns.z TIMESTAMP AS OF '{tokyo} Pacific/Kiritimati'");
        let err = run(&ctx, &sql).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{sql}: {err}");
    }
    // procedures read them too: the snapshot's own time, as a Tokyo wall clock, is no
    // time before it
    let sql = format!("CALL system.rollback_to_timestamp('ns.z', '{tokyo} Asia/Tokyo')");
    let err = run(&ctx, &sql).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{sql}: {err}");
    // a zone that is none is still refused
    let sql = format!("SELECT count(*) FROM ns.z TIMESTAMP AS OF '{utc} Mars/Olympus'");
    let err = run(&ctx, &sql).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{sql}: {err}");
    assert!(err.to_string().contains("is not a timestamp"), "{err}");
}
