//! Struct values written into struct columns whose field names they give in another
//! case, or by position (`struct(…)`): renamed to the table's fields where that is
//! unambiguous, as Spark resolves them; refused otherwise.

use super::tests::{fails, ident, ok, session};
use crate::ErrorKind;

#[tokio::test]
async fn struct_fields_match_ignoring_case_and_unnamed_structs_by_position() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.cs (id INT, st STRUCT<MyField INT, b STRING>, \
         l ARRAY<STRUCT<Xy INT>>)",
    )
    .await;
    // stored as DataFusion's planner normalizes unquoted identifiers: lowercase
    let table = catalog.load_table(&ident("ns.cs")).await.expect("table");
    assert_eq!(
        table.metadata().current_schema().columns()[1]
            .field_type
            .to_string(),
        "struct<myfield: int, b: string>"
    );
    ok(
        &ctx,
        "INSERT INTO ns.cs VALUES (1, named_struct('MyField', 1, 'B', 'x'), \
         [named_struct('XY', 5)])",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.cs SELECT 2, struct(4, 'four'), NULL").await;
    ok(
        &ctx,
        "INSERT INTO ns.cs (id, st) VALUES (3, struct(5, 'five'))",
    )
    .await;
    ok(&ctx, "UPDATE ns.cs SET st.\"MyField\" = 6 WHERE id = 1").await;
    ok(
        &ctx,
        "UPDATE ns.cs SET st = named_struct('MYFIELD', 7, 'b', 'y') WHERE id = 2",
    )
    .await;
    ok(
        &ctx,
        "MERGE INTO ns.cs t USING (SELECT 3 AS id) s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET st = named_struct('Myfield', 9, 'B', 'z')",
    )
    .await;
    assert_eq!(
        ok(
            &ctx,
            "SELECT id, st['myfield'], st['b'], l[1]['xy'] FROM ns.cs ORDER BY id"
        )
        .await,
        [
            ["1", "6", "x", "5"],
            ["2", "7", "y", ""],
            ["3", "9", "z", ""]
        ]
    );
    // ambiguous names, and a struct(…) of another field count: refused, naming them
    fails(
        &ctx,
        "INSERT INTO ns.cs (id, st) VALUES (4, named_struct('MyField', 1, 'MYFIELD', 2, 'b', 'x'))",
        ErrorKind::InvalidArgument,
        "cannot write extra fields to struct 'st': 'MyField', 'MYFIELD'",
    )
    .await;
    fails(
        &ctx,
        "INSERT INTO ns.cs (id, st) VALUES (5, struct(1))",
        ErrorKind::InvalidArgument,
        "cannot write extra fields to struct 'st': 'c0'",
    )
    .await;
}
