//! Top-level column names of another case (a table Spark made with `` `Msg` ``): an
//! unquoted name is lowercased and matched exactly, and every "no column" error icefloe
//! raises for it names the name looked up and the column that exists, to be quoted (the
//! `UPDATE` error named the name as written, `Msg`, the very column the table has). On a
//! SQLite catalog in a temporary directory.

use super::tests::{fails, ok, session};
use crate::ErrorKind;

const NOTE: &str =
    "the table has a column \"Msg\": unquoted names are lowercased, so write it quoted, \"Msg\"";

#[tokio::test]
async fn no_column_errors_name_the_column_of_another_case() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA db").await;
    ok(
        &ctx,
        "CREATE TABLE db.bt (\"ID\" BIGINT NOT NULL, \"Msg\" STRING, \"Ts\" TIMESTAMP)",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO db.bt VALUES (1, 'a', TIMESTAMP '2026-01-01 00:00:00')",
    )
    .await;
    let id_note = NOTE.replace("Msg", "ID");
    let ts_note = NOTE.replace("Msg", "Ts");
    let cases: Vec<(&str, ErrorKind, String)> = vec![
        (
            "UPDATE db.bt SET Msg = 'b'",
            ErrorKind::InvalidArgument,
            format!("no column 'msg' in UPDATE SET of 'db.bt'; {NOTE}"),
        ),
        (
            "MERGE INTO db.bt t USING (SELECT 1 AS id) s ON t.\"ID\" = s.id \
             WHEN MATCHED THEN UPDATE SET Msg = 'b'",
            ErrorKind::InvalidArgument,
            NOTE.to_string(),
        ),
        (
            "MERGE INTO db.bt t USING (SELECT 2 AS id) s ON t.\"ID\" = s.id \
             WHEN NOT MATCHED THEN INSERT (\"ID\", Msg) VALUES (s.id, 'x')",
            ErrorKind::InvalidArgument,
            NOTE.to_string(),
        ),
        (
            "ALTER TABLE db.bt RENAME COLUMN Msg TO m",
            ErrorKind::NotFound,
            format!("column 'msg' does not exist; {NOTE}"),
        ),
        (
            "ALTER TABLE db.bt ALTER COLUMN Msg COMMENT 'c'",
            ErrorKind::NotFound,
            format!("column 'msg' does not exist; {NOTE}"),
        ),
        (
            "ALTER TABLE db.bt DROP COLUMN Msg",
            ErrorKind::NotFound,
            format!("column 'msg' does not exist; {NOTE}"),
        ),
        (
            "ALTER TABLE db.bt ALTER COLUMN \"Msg\" AFTER Ts",
            ErrorKind::NotFound,
            ts_note.clone(),
        ),
        (
            "ALTER TABLE db.bt SET IDENTIFIER FIELDS ID",
            ErrorKind::NotFound,
            format!("column 'id' does not exist; {id_note}"),
        ),
        (
            "ALTER TABLE db.bt ADD PARTITION FIELD bucket(2, ID)",
            ErrorKind::NotFound,
            format!("column 'id' does not exist; {id_note}"),
        ),
        (
            "ALTER TABLE db.bt WRITE ORDERED BY Msg",
            ErrorKind::NotFound,
            format!("column 'msg' does not exist; {NOTE}"),
        ),
        (
            "CREATE TABLE db.p (\"Ts\" TIMESTAMP) PARTITIONED BY (days(Ts))",
            ErrorKind::InvalidArgument,
            format!("column 'ts' does not exist; {ts_note}"),
        ),
        (
            "CALL system.rewrite_data_files(table => 'db.bt', strategy => 'sort', \
             sort_order => 'Msg')",
            ErrorKind::NotFound,
            NOTE.to_string(),
        ),
    ];
    for (sql, kind, needle) in &cases {
        fails(&ctx, sql, *kind, needle).await;
    }
    // the MERGE errors name the name looked up, not the name as written
    for (sql, _, _) in &cases[1..3] {
        fails(
            &ctx,
            sql,
            ErrorKind::InvalidArgument,
            "no column 'msg' in MERGE ",
        )
        .await;
    }
    // quoted, each runs
    ok(&ctx, "UPDATE db.bt SET \"Msg\" = 'b'").await;
    ok(
        &ctx,
        "ALTER TABLE db.bt ADD PARTITION FIELD bucket(2, \"ID\")",
    )
    .await;
    ok(&ctx, "ALTER TABLE db.bt RENAME COLUMN \"Msg\" TO m").await;
    assert_eq!(
        ok(&ctx, "SELECT \"ID\", m FROM db.bt").await,
        vec![vec!["1".to_string(), "b".to_string()]]
    );
    // a name no column has in any case gets no note
    fails(
        &ctx,
        "ALTER TABLE db.bt RENAME COLUMN nope TO x",
        ErrorKind::NotFound,
        "column 'nope' does not exist",
    )
    .await;
}
