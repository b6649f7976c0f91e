//! Field ids, name mapping and identity partition values on engine-written tables
//! (issue 5), with small fixtures derived from them where the corpus has no example.

use datafusion::arrow::util::pretty::pretty_format_batches;
use icefloe::IcebergTableProvider;

use crate::fixtures::{
    copy_table, drop_column, files_with_suffix, patch_manifest_file_sizes, rewrite_parquet,
    run_sql, strip_field_ids,
};

async fn query(location: &str, sql: &str) -> Result<String, String> {
    let batches = run_sql(location, sql).await?;
    Ok(pretty_format_batches(&batches)
        .map_err(|e| e.to_string())?
        .to_string())
}

/// A data file that lacks the identity partition source column (as in migrated tables)
/// reads the value from the manifest's partition tuple, NULL partitions included.
#[tokio::test]
async fn identity_partition_values_fill_missing_columns() {
    let dir = copy_table("corpus/spark_v1_types_identity");
    let root = dir.path();
    let sql = "SELECT cat, count(*) AS n FROM t GROUP BY cat ORDER BY cat NULLS FIRST";
    let before = query(root.to_str().unwrap(), sql).await.unwrap();
    for file in files_with_suffix(&root.join("data"), ".parquet") {
        rewrite_parquet(&file, drop_column("cat"));
    }
    patch_manifest_file_sizes(root);
    let after = query(root.to_str().unwrap(), sql).await.unwrap();
    assert_eq!(after, before);
    // four groups: a, b, c and the NULL partition
    assert_eq!(before.lines().count(), 8, "{before}");
    assert!(
        before.contains("| a ") && before.contains("| c "),
        "{before}"
    );
    // filters on the filled-in column still see the values
    let filtered = query(
        root.to_str().unwrap(),
        "SELECT count(*) AS n FROM t WHERE cat = 'b'",
    )
    .await
    .unwrap();
    let expected = query(
        crate::fixtures::testdata("corpus/spark_v1_types_identity")
            .to_str()
            .unwrap(),
        "SELECT count(*) AS n FROM t WHERE cat = 'b'",
    )
    .await
    .unwrap();
    assert_eq!(filtered, expected);
}

/// The same fill for files that deletes apply to: every row of such a file, deleted or
/// not, has the partition value, so the surviving rows read it too (position deletes and
/// equality deletes, Spark-written, identity(region)).
#[tokio::test]
async fn identity_partition_values_fill_missing_columns_of_files_with_deletes() {
    for (table, metadata_file) in [
        ("corpus/spark_v2_mor_position_deletes", "v7.metadata.json"),
        (
            "corpus/spark_v2_equality_deletes_partitioned",
            "v5.metadata.json",
        ),
    ] {
        // `region` as written (optional), and marked required (as PyIceberg writes a
        // partition column): the partition value, not an error about a missing column
        for required in [false, true] {
            let dir = copy_table(table);
            let root = dir.path();
            let location = root.to_str().unwrap();
            let sql = "SELECT region, count(*) AS n, min(region) AS lo FROM t GROUP BY region ORDER BY region NULLS FIRST";
            let filtered = "SELECT count(*) AS n FROM t WHERE region = 'us'";
            let before = query(location, sql).await.unwrap();
            let before_filtered = query(location, filtered).await.unwrap();
            let data_files: Vec<_> = files_with_suffix(&root.join("data"), ".parquet")
                .into_iter()
                .filter(|f| {
                    let name = f.file_name().unwrap().to_string_lossy().to_string();
                    !name.ends_with("-deletes.parquet") && !name.starts_with("eqdel-")
                })
                .collect();
            assert!(data_files.len() >= 2, "{table}: {data_files:?}");
            for file in &data_files {
                rewrite_parquet(file, drop_column("region"));
            }
            patch_manifest_file_sizes(root);
            if required {
                edit_metadata(root, metadata_file, |json| {
                    evolve_schema(json, |fields| {
                        for f in fields.iter_mut().filter(|f| f["name"] == "region") {
                            f["required"] = true.into();
                        }
                    })
                });
            }
            let context = format!("{table}, required={required}");
            assert_eq!(query(location, sql).await.unwrap(), before, "{context}");
            assert_eq!(
                query(location, filtered).await.unwrap(),
                before_filtered,
                "{context}"
            );
            assert_eq!(
                query(location, "SELECT count(id) AS n FROM t")
                    .await
                    .unwrap(),
                query(location, "SELECT count(*) AS n FROM t")
                    .await
                    .unwrap(),
                "{context}"
            );
            assert!(before.contains("| us "), "{context}: {before}");
        }
    }
}

/// Files without field ids: an error naming the problem without a name mapping, the
/// right rows with one.
#[tokio::test]
async fn files_without_field_ids_use_the_name_mapping() {
    let dir = copy_table("sample_table");
    let root = dir.path();
    for file in files_with_suffix(&root.join("data"), ".parquet") {
        rewrite_parquet(&file, strip_field_ids);
    }
    patch_manifest_file_sizes(root);
    let sql = "SELECT count(*) AS n, sum(id) AS s, count(v) AS nv FROM t";
    let err = query(root.to_str().unwrap(), sql).await.unwrap_err();
    assert!(
        err.contains("without Iceberg field ids") && err.contains("name mapping"),
        "{err}"
    );

    // add a mapping that also maps a renamed column: the file's `v` is the table's `v`
    let meta = root.join("metadata/v4.metadata.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    json["properties"]["schema.name-mapping.default"] = serde_json::Value::String(
        r#"[{"field-id":1,"names":["id"]},{"field-id":2,"names":["ts"]},{"field-id":3,"names":["v","value"]}]"#.into(),
    );
    std::fs::write(&meta, json.to_string()).unwrap();
    let with_mapping = query(root.to_str().unwrap(), sql).await.unwrap();
    let original = query(
        crate::fixtures::testdata("sample_table").to_str().unwrap(),
        sql,
    )
    .await
    .unwrap();
    assert_eq!(with_mapping, original);
}

/// A column added after the last snapshot shows (as NULL) when reading the table, as in
/// Spark; time travel to that snapshot by id reads the snapshot's own schema.
#[tokio::test]
async fn current_schema_for_the_table_snapshot_schema_for_time_travel() {
    let dir = copy_table("sample_table");
    let meta = dir.path().join("metadata/v4.metadata.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    let mut schema = json["schemas"][0].clone();
    schema["schema-id"] = 1.into();
    schema["fields"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"id": 4, "name": "note", "required": false, "type": "string"}));
    json["schemas"].as_array_mut().unwrap().push(schema);
    json["current-schema-id"] = 1.into();
    json["last-column-id"] = 4.into();
    std::fs::write(&meta, json.to_string()).unwrap();

    let location = dir.path().to_str().unwrap();
    let out = query(
        location,
        "SELECT count(*) AS n, count(note) AS notes FROM t",
    )
    .await
    .unwrap();
    assert!(out.contains("| 61 | 0     |"), "{out}");

    let table = icefloe::Table::open(location).await.unwrap();
    let current = table.metadata().current_snapshot_id.unwrap();
    let by_id = IcebergTableProvider::try_new(table.clone())
        .unwrap()
        .with_snapshot_id(current)
        .unwrap();
    assert_eq!(by_id.iceberg_schema().columns().len(), 3);
    let by_branch = IcebergTableProvider::try_new(table)
        .unwrap()
        .with_ref("main")
        .unwrap();
    assert_eq!(by_branch.iceberg_schema().columns().len(), 4);
}

/// Nested fields are matched by field id too: after renaming `st.a` → `st.alpha`,
/// `st.inner.c` → `st.inner.gamma` and the list-of-struct field `arr_st.k` → `key_name`,
/// files written before the rename still read their values.
#[tokio::test]
async fn renamed_nested_fields_read_by_id() {
    let original = crate::fixtures::testdata("corpus/spark_v2_nested");
    let dir = copy_table("corpus/spark_v2_nested");
    let meta = dir.path().join("metadata/v3.metadata.json");
    let text = std::fs::read_to_string(&meta).unwrap();
    let renamed = text
        .replace(r#""id":7,"name":"a""#, r#""id":7,"name":"alpha""#)
        .replace(r#""id":10,"name":"c""#, r#""id":10,"name":"gamma""#)
        .replace(r#""id":15,"name":"k""#, r#""id":15,"name":"key_name""#);
    assert_ne!(renamed, text, "the fixture's schema JSON changed shape");
    std::fs::write(&meta, renamed).unwrap();
    let (old, new) = (original.to_str().unwrap(), dir.path().to_str().unwrap());

    let before = query(
        old,
        "SELECT id, st['a'] AS a, st['inner']['c'] AS c FROM t WHERE st['a'] > 3 ORDER BY id",
    )
    .await
    .unwrap();
    let after = query(new, "SELECT id, st['alpha'] AS a, st['inner']['gamma'] AS c FROM t WHERE st['alpha'] > 3 ORDER BY id").await.unwrap();
    assert_eq!(after, before);
    assert!(before.lines().count() > 4, "{before}");

    // whole nested values come back with the table's (new) names and the old values
    let whole_before = query(old, "SELECT id, st, arr_st FROM t ORDER BY id")
        .await
        .unwrap();
    let whole_after = query(new, "SELECT id, st, arr_st FROM t ORDER BY id")
        .await
        .unwrap();
    let expected = whole_before
        .replace("{a: ", "{alpha: ")
        .replace("{c: ", "{gamma: ")
        .replace("{k: ", "{key_name: ");
    // compare cell contents, ignoring the table's padding
    let cells = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| l.split_whitespace().collect::<String>())
            .collect::<Vec<_>>()
    };
    assert_eq!(cells(&whole_after), cells(&expected));
    assert!(
        whole_after.contains("{alpha: 10, b: z, inner: {gamma: -2.5}}"),
        "{whole_after}"
    );
}

/// Rewrite the current metadata file of a copied table: `change` gets the JSON.
fn edit_metadata(root: &std::path::Path, file: &str, change: impl FnOnce(&mut serde_json::Value)) {
    let meta = root.join("metadata").join(file);
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    change(&mut json);
    std::fs::write(&meta, json.to_string()).unwrap();
}

/// A new current schema made from the current one by `change` on its field list.
fn evolve_schema(json: &mut serde_json::Value, change: impl FnOnce(&mut Vec<serde_json::Value>)) {
    let current = json["current-schema-id"].as_i64().unwrap_or(0);
    let schemas = json["schemas"].as_array_mut().unwrap();
    let mut schema = schemas
        .iter()
        .find(|s| s["schema-id"].as_i64() == Some(current))
        .unwrap()
        .clone();
    let new_id = current + 1;
    schema["schema-id"] = new_id.into();
    change(schema["fields"].as_array_mut().unwrap());
    schemas.push(schema.clone());
    json["current-schema-id"] = new_id.into();
    if json.get("schema").is_some() {
        json["schema"] = schema;
    }
}

/// A partition spec whose source column was dropped later (identity(cat), then `cat`
/// dropped) does not break filtered scans while an older schema still holds the column.
/// With the old schemas gone too, the current spec's `source-id` names nothing: the
/// table is rejected on open, naming the field (issue 16 item 7).
#[tokio::test]
async fn dropped_partition_source_column_does_not_break_filters() {
    let original = crate::fixtures::testdata("corpus/spark_v1_types_identity");
    let sql = "SELECT id, i FROM t WHERE i < -20 AND id > 1 ORDER BY id";
    let expected = query(original.to_str().unwrap(), sql).await.unwrap();
    assert!(expected.lines().count() > 5, "{expected}");
    for forget_old_schemas in [false, true] {
        let dir = copy_table("corpus/spark_v1_types_identity");
        edit_metadata(dir.path(), "v4.metadata.json", |json| {
            evolve_schema(json, |fields| fields.retain(|f| f["name"] != "cat"));
            if forget_old_schemas {
                let current = json["current-schema-id"].clone();
                json["schemas"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|s| s["schema-id"] == current);
            }
        });
        let location = dir.path().to_str().unwrap();
        if forget_old_schemas {
            let err = query(location, sql).await.unwrap_err();
            assert!(
                err.contains("field 'cat' has 'source-id' 2 that names no field"),
                "{err}"
            );
            continue;
        }
        assert_eq!(
            query(location, sql).await.unwrap(),
            expected,
            "forget_old_schemas={forget_old_schemas}"
        );
        let err = query(location, "SELECT cat FROM t").await.unwrap_err();
        assert!(err.contains("cat"), "{err}");
    }
}

/// v3 type promotion date → timestamp, and a v3 `unknown` column (always NULL).
#[tokio::test]
async fn date_promoted_to_timestamp_and_unknown_type() {
    let original = crate::fixtures::testdata("corpus/spark_v1_types_identity");
    let dir = copy_table("corpus/spark_v1_types_identity");
    edit_metadata(dir.path(), "v4.metadata.json", |json| {
        evolve_schema(json, |fields| {
            for f in fields.iter_mut() {
                if f["name"] == "dt" {
                    f["type"] = "timestamp".into();
                }
            }
            fields.push(serde_json::json!({"id": 99, "name": "nothing", "required": false, "type": "unknown"}));
        });
        json["last-column-id"] = 99.into();
    });
    let before = query(
        original.to_str().unwrap(),
        "SELECT id, CAST(dt AS TIMESTAMP) AS dt FROM t ORDER BY id",
    )
    .await
    .unwrap();
    let after = query(
        dir.path().to_str().unwrap(),
        "SELECT id, dt FROM t ORDER BY id",
    )
    .await
    .unwrap();
    assert_eq!(after, before);
    assert!(after.contains("2024-01-02T00:00:00"), "{after}");
    let nulls = query(
        dir.path().to_str().unwrap(),
        "SELECT count(*) AS n, count(nothing) AS c FROM t",
    )
    .await
    .unwrap();
    assert!(nulls.contains("| 30 | 0 |"), "{nulls}");
}

/// Files without field ids whose nested fields were renamed in the table: the name
/// mapping's nested entries give them their ids.
#[tokio::test]
async fn name_mapping_covers_nested_fields() {
    let original = crate::fixtures::testdata("corpus/spark_v2_nested");
    let dir = copy_table("corpus/spark_v2_nested");
    for file in files_with_suffix(&dir.path().join("data"), ".parquet") {
        rewrite_parquet(&file, strip_field_ids);
    }
    patch_manifest_file_sizes(dir.path());
    let mapping = r#"[{"field-id":1,"names":["id"]},
        {"field-id":2,"names":["st"],"fields":[{"field-id":7,"names":["a"]},{"field-id":8,"names":["b"]},
            {"field-id":9,"names":["inner"],"fields":[{"field-id":10,"names":["c"]}]}]},
        {"field-id":3,"names":["arr"],"fields":[{"field-id":11,"names":["element"]}]},
        {"field-id":4,"names":["m"],"fields":[{"field-id":12,"names":["key"]},{"field-id":13,"names":["value"]}]},
        {"field-id":5,"names":["arr_st"],"fields":[{"field-id":14,"names":["element"],"fields":[
            {"field-id":15,"names":["k"]},{"field-id":16,"names":["q"]}]}]},
        {"field-id":6,"names":["m_st"],"fields":[{"field-id":17,"names":["key"]},{"field-id":18,"names":["value"],"fields":[
            {"field-id":19,"names":["p"]}]}]}]"#;
    edit_metadata(dir.path(), "v3.metadata.json", |json| {
        json["properties"]["schema.name-mapping.default"] = mapping.into();
        let text = json
            .to_string()
            .replace(r#""id":7,"name":"a""#, r#""id":7,"name":"alpha""#);
        *json = serde_json::from_str(&text).unwrap();
    });
    let before = query(
        original.to_str().unwrap(),
        "SELECT id, st['a'] AS a, st['inner']['c'] AS c, m['k1'] AS k1 FROM t ORDER BY id",
    )
    .await
    .unwrap();
    let after = query(
        dir.path().to_str().unwrap(),
        "SELECT id, st['alpha'] AS a, st['inner']['c'] AS c, m['k1'] AS k1 FROM t ORDER BY id",
    )
    .await
    .unwrap();
    assert_eq!(after, before);
    assert!(before.contains("| 10 | 10 "), "{before}");
}
