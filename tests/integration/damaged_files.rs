//! Tables damaged on purpose, as tester W67 damaged them (report W67): a delete file
//! replaced by another (F3), an expiry whose snapshots reach another table's files (F9),
//! `DROP TABLE … PURGE` of a table whose manifest list is damaged (F11), a URL's user
//! info echoed in an error (F12), and compression bombs in a manifest list and a
//! manifest (F10).

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use apache_avro::types::Value;
use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::parquet::arrow::ArrowWriter;

use crate::cli::{assert_success, icefloe, stderr, stdout};
use crate::fixtures::{
    copy_table, files_with_suffix, patch_manifest_file_sizes, rewrite_avro, rewrite_parquet,
    run_sql,
};

/// The CLI on the SQLite catalog `cat.db` in `cwd` (created), printing CSV.
fn sql_in(cwd: &Path, sql: &str) -> Output {
    let home = tempfile::tempdir().expect("home");
    icefloe(home.path())
        .current_dir(cwd)
        .args([
            "--quiet",
            "--catalog",
            "sqlite:cat.db",
            "--create-catalog",
            "--format",
            "csv",
        ])
        .args(["-c", sql])
        .output()
        .expect("icefloe")
}

/// The CSV rows (header dropped) of a successful `sql`.
fn rows(cwd: &Path, sql: &str) -> Vec<String> {
    let out = sql_in(cwd, sql);
    assert_success(&out);
    stdout(&out).lines().skip(1).map(str::to_string).collect()
}

fn local(location: &str) -> String {
    location.trim_start_matches("file://").to_string()
}

/// A position delete file (Iceberg spec: `file_path` 2147483546, `pos` 2147483545)
/// deleting `positions` of `data_file`.
fn position_delete_file(data_file: &str, positions: &[i64]) -> Vec<u8> {
    let field = |name: &str, t: DataType, id: &str| {
        Field::new(name, t, false).with_metadata(
            [("PARQUET:field_id".to_string(), id.to_string())]
                .into_iter()
                .collect(),
        )
    };
    let schema = Arc::new(Schema::new(vec![
        field("file_path", DataType::Utf8, "2147483546"),
        field("pos", DataType::Int64, "2147483545"),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(StringArray::from(vec![data_file; positions.len()])),
            Arc::new(Int64Array::from(positions.to_vec())),
        ],
    )
    .expect("batch");
    let mut out = vec![];
    let mut writer = ArrowWriter::try_new(&mut out, schema, None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    out
}

/// F3: the merge-on-read delete of row 2 replaced by a delete file of row 0 (position 0):
/// reads used to apply it (rows 2 and 3 back, row 1 gone); now the scan and a compaction
/// fail naming the delete file, the manifest's size and the file's.
#[test]
fn a_replaced_position_delete_file_fails_the_scan_naming_both_sizes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT, s VARCHAR) TBLPROPERTIES \
         ('format-version'='2','write.delete.mode'='merge-on-read'); \
         INSERT INTO ns.t VALUES (1,'a'),(2,'b'),(3,'c'); DELETE FROM ns.t WHERE id = 2",
    ));
    let delete = rows(
        &cwd,
        "SELECT file_path, file_size_in_bytes FROM ns.\"t$files\" WHERE content = 1",
    );
    assert_eq!(delete.len(), 1, "{delete:?}");
    let (path, size) = delete[0].split_once(',').expect("two columns");
    let data = rows(
        &cwd,
        "SELECT file_path FROM ns.\"t$files\" WHERE content = 0",
    );
    let replacement = position_delete_file(&data[0], &[0]);
    assert_ne!(replacement.len().to_string(), size);
    std::fs::write(local(path), &replacement).expect("replace the delete file");
    let expected = format!(
        "position delete file '{path}' is {} bytes, the manifest says {size} \
         (file_size_in_bytes): the file was replaced or truncated",
        replacement.len()
    );
    for sql in [
        "SELECT * FROM ns.t ORDER BY id",
        "CALL system.rewrite_data_files(table => 'ns.t', options => map('rewrite-all', 'true'))",
        "CALL system.rewrite_position_delete_files(table => 'ns.t', \
         options => map('rewrite-all', 'true'))",
    ] {
        let out = sql_in(&cwd, sql);
        assert!(!out.status.success(), "{sql}: {}", stdout(&out));
        assert!(stderr(&out).contains(&expected), "{sql}: {}", stderr(&out));
    }
}

/// F12: a position delete file relabelled in its manifest as an equality delete on `id`
/// (content 2, `equality_ids [1]`): the file exists and is not what the manifest says, so
/// a read fails as invalid data naming it (it was "not found"), and so does a compaction
/// that reads the file, leaving the table as it was. A compaction whose planning selects
/// no file (the default options: one small file is no group worth rewriting, as in Java's
/// planner) reads nothing and rewrites nothing, as Java's does.
#[test]
fn a_position_delete_relabelled_as_an_equality_delete_is_invalid_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT, s VARCHAR) TBLPROPERTIES \
         ('format-version'='2','write.delete.mode'='merge-on-read'); \
         INSERT INTO ns.t VALUES (1,'a'),(2,'b'),(3,'c'); DELETE FROM ns.t WHERE id = 2",
    ));
    let delete = rows(
        &cwd,
        "SELECT file_path FROM ns.\"t$files\" WHERE content = 1",
    );
    assert_eq!(delete.len(), 1, "{delete:?}");
    let path = local(&delete[0]);
    let table_dir = Path::new(&path[..path.find("/data/").expect("under data/")]).to_path_buf();
    let mut relabelled = 0;
    for manifest in files_with_suffix(&table_dir.join("metadata"), ".avro") {
        if manifest
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("snap-")
        {
            continue;
        }
        let count = std::cell::Cell::new(0);
        rewrite_avro(&manifest, |entry| {
            let Value::Record(fields) = entry else { return };
            let Some((_, Value::Record(file))) = fields.iter_mut().find(|(n, _)| n == "data_file")
            else {
                return;
            };
            if !file
                .iter()
                .any(|(n, v)| n == "content" && *v == Value::Int(1))
            {
                return;
            }
            for (name, value) in file.iter_mut() {
                match name.as_str() {
                    "content" => *value = Value::Int(2),
                    "equality_ids" => {
                        *value = Value::Union(1, Box::new(Value::Array(vec![Value::Int(1)])))
                    }
                    _ => {}
                }
            }
            count.set(count.get() + 1);
        });
        relabelled += count.get();
    }
    assert_eq!(relabelled, 1);
    patch_manifest_file_sizes(&table_dir);
    let snapshots = "SELECT count(*) FROM ns.\"t$snapshots\"";
    assert_eq!(rows(&cwd, snapshots), ["2"]);
    for sql in [
        "SELECT * FROM ns.t ORDER BY id",
        "SELECT count(*) FROM ns.t WHERE s <> 'x'",
        "CALL system.rewrite_data_files(table => 'ns.t', options => map('rewrite-all', 'true'))",
    ] {
        let out = sql_in(&cwd, sql);
        assert!(!out.status.success(), "{sql}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains("invalid data: ")
                && err.contains("equality delete file '")
                && err.contains("has no column 'id' (field id 1)")
                && !err.contains("not found"),
            "{sql}: {err}"
        );
    }
    assert_eq!(rows(&cwd, snapshots), ["2"]);
    // nothing selected, nothing read: Java's result too
    assert_eq!(
        rows(&cwd, "CALL system.rewrite_data_files(table => 'ns.t')"),
        ["0,0,0,0,0"]
    );
    assert_eq!(rows(&cwd, snapshots), ["2"]);
}

/// F3: an equality delete file of the corpus's Spark table replaced by a larger one: the
/// scan fails naming it and both sizes, where its keys used to be applied.
#[test]
fn a_replaced_equality_delete_file_fails_the_scan_naming_both_sizes() {
    let table = copy_table("corpus/spark_v2_equality_deletes_partitioned");
    let eqdel = files_with_suffix(&table.path().join("data/region=eu"), ".parquet")
        .into_iter()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("eqdel-"))
        })
        .expect("the eu equality delete file");
    let size = std::fs::metadata(&eqdel).expect("stat").len();
    rewrite_parquet(&eqdel, |schema, batch| {
        let schema = Arc::new(schema.clone());
        let more = concat_batches(&schema, [batch, batch, batch]).expect("concat");
        (schema, more)
    });
    let now = std::fs::metadata(&eqdel).expect("stat").len();
    assert_ne!(now, size);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let err = rt
        .block_on(run_sql(
            table.path().to_str().expect("utf-8"),
            "SELECT count(*) FROM t",
        ))
        .expect_err("a replaced equality delete file");
    let name = eqdel
        .file_name()
        .expect("name")
        .to_string_lossy()
        .to_string();
    assert!(err.contains("equality delete file '"), "{err}");
    assert!(err.contains(&name), "{err}");
    assert!(
        err.contains(&format!(
            "is {now} bytes, the manifest says {size} (file_size_in_bytes): the file was \
             replaced or truncated"
        )),
        "{err}"
    );
}

/// F9: table `t` registered a data file of table `victim` (`add_files`), and then
/// overwrote it: expiring `t`'s old snapshots keeps `victim`'s file (Java deletes it)
/// and names it in a warning, while `t`'s own expired data file is deleted.
#[test]
fn expiry_keeps_files_under_another_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.victim (id BIGINT); \
         INSERT INTO ns.victim VALUES (1), (2); CREATE TABLE ns.t (id BIGINT); \
         INSERT INTO ns.t VALUES (10)",
    ));
    let victim_file = rows(&cwd, "SELECT file_path FROM ns.\"victim$files\"");
    let own_file = rows(&cwd, "SELECT file_path FROM ns.\"t$files\"");
    assert_success(&sql_in(
        &cwd,
        &format!(
            "CALL system.add_files(table => 'ns.t', source_table => '`parquet`.`{}`'); \
             INSERT OVERWRITE ns.t VALUES (30)",
            local(&victim_file[0])
        ),
    ));
    let out = sql_in(
        &cwd,
        "CALL system.expire_snapshots(table => 'ns.t', older_than => now(), retain_last => 1)",
    );
    assert_success(&out);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "warning: expire_snapshots of table 'ns.t' kept 1 file(s) its expired snapshots \
             reference but that may belong to another table: {} (under table 'ns.victim')",
            victim_file[0]
        )),
        "{err}"
    );
    // deleted_data_files_count: t's own file only
    assert!(
        stdout(&out)
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("1,")),
        "{}",
        stdout(&out)
    );
    assert!(Path::new(&local(&victim_file[0])).exists());
    assert!(!Path::new(&local(&own_file[0])).exists());
    assert_eq!(
        rows(&cwd, "SELECT id FROM ns.victim ORDER BY id"),
        ["1", "2"]
    );
}

/// F9 as the report made it: `t`'s oldest snapshot edited to name `victim`'s manifest
/// list. The expiry leaves every file of `victim` (which reads as before) and warns.
#[test]
fn expiry_of_a_snapshot_naming_another_tables_manifest_list_leaves_that_table_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.victim (id BIGINT); \
         INSERT INTO ns.victim VALUES (1), (2); CREATE TABLE ns.t (id BIGINT); \
         INSERT INTO ns.t VALUES (10); INSERT INTO ns.t VALUES (20)",
    ));
    let victim_list = rows(&cwd, "SELECT manifest_list FROM ns.\"victim$snapshots\"");
    let metadata = rows(
        &cwd,
        "SELECT file FROM ns.\"t$metadata_log_entries\" ORDER BY timestamp DESC LIMIT 1",
    );
    let path = local(&metadata[0]);
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("metadata")).expect("json");
    m["snapshots"][0]["manifest-list"] = serde_json::Value::String(victim_list[0].clone());
    std::fs::write(&path, serde_json::to_vec(&m).expect("json")).expect("edit the metadata");
    let out = sql_in(
        &cwd,
        "CALL system.expire_snapshots(table => 'ns.t', older_than => now(), retain_last => 1)",
    );
    assert_success(&out);
    assert!(
        stderr(&out).contains("warning: expire_snapshots of table 'ns.t'"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        rows(&cwd, "SELECT id FROM ns.victim ORDER BY id"),
        ["1", "2"]
    );
}

/// F11: `DROP TABLE … PURGE` of a table whose manifest list is damaged fails before the
/// table is dropped (it used to drop the table, keep its files and report failure), on
/// the SQLite catalog as on the filesystem catalog; repaired, the drop goes through.
#[test]
fn purge_that_cannot_read_the_metadata_fails_before_dropping() {
    for catalog in ["sqlite:cat.db", "wh"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
        let run = |sql: &str| {
            let home = tempfile::tempdir().expect("home");
            icefloe(home.path())
                .current_dir(&cwd)
                .args(["--quiet", "--catalog", catalog, "--create-catalog"])
                .args(["--format", "csv", "-c", sql])
                .output()
                .expect("icefloe")
        };
        assert_success(&run(
            "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1)",
        ));
        let out = run("SELECT manifest_list FROM ns.\"t$snapshots\"");
        assert_success(&out);
        let list = local(stdout(&out).lines().nth(1).expect("a snapshot"));
        let intact = std::fs::read(&list).expect("manifest list");
        std::fs::write(&list, &intact[..100]).expect("truncate the manifest list");
        let out = run("DROP TABLE ns.t PURGE");
        assert!(!out.status.success(), "{catalog}: {}", stdout(&out));
        assert!(stderr(&out).contains(&list), "{catalog}: {}", stderr(&out));
        let out = run("SHOW TABLES IN ns");
        assert_success(&out);
        assert!(
            stdout(&out).contains('t'),
            "{catalog}: the table stays: {}",
            stdout(&out)
        );
        // a missing manifest list, one that is a directory, and a missing manifest: the
        // files only they reach could not be listed, so the purge fails naming them and
        // the table stays (skipping them dropped the table and left its files, silently:
        // report T69 F7)
        std::fs::write(&list, &intact).expect("repair");
        let out = run("SELECT path FROM ns.\"t$manifests\"");
        assert_success(&out);
        let manifest = local(stdout(&out).lines().nth(1).expect("a manifest"));
        let intact_manifest = std::fs::read(&manifest).expect("manifest");
        for (damage, missing) in [
            ("a missing manifest list", list.clone()),
            ("a manifest list that is a directory", list.clone()),
            ("a missing manifest", manifest.clone()),
        ] {
            std::fs::remove_file(&missing).expect("remove");
            if damage.contains("directory") {
                std::fs::create_dir(&missing).expect("a directory in its place");
            }
            let out = run("DROP TABLE ns.t PURGE");
            assert!(
                !out.status.success(),
                "{catalog}, {damage}: {}",
                stdout(&out)
            );
            assert!(
                stderr(&out).contains(&missing),
                "{catalog}, {damage}: {}",
                stderr(&out)
            );
            let out = run("SHOW TABLES IN ns");
            assert!(
                stdout(&out).contains('t'),
                "{catalog}, {damage}: the table stays: {}",
                stdout(&out)
            );
            if damage.contains("directory") {
                std::fs::remove_dir(&missing).expect("remove the directory");
            }
            let bytes = if missing == list {
                &intact
            } else {
                &intact_manifest
            };
            std::fs::write(&missing, bytes).expect("repair");
        }
        let out = run("DROP TABLE ns.t PURGE");
        assert_success(&out);
        assert!(!Path::new(&list).exists(), "{catalog}: purged");
        assert!(!Path::new(&manifest).exists(), "{catalog}: purged");
    }
}

/// F12: a URL's user info (`key:secret@`) is never echoed in an error.
#[test]
fn a_urls_user_info_is_not_echoed_in_errors() {
    let home = tempfile::tempdir().expect("home");
    let out = icefloe(home.path())
        .args([
            "-c",
            "SELECT * FROM 's3://AKIA:SUPERSECRET6@bucket/x.parquet'",
        ])
        .output()
        .expect("icefloe");
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        !err.contains("SUPERSECRET6") && !err.contains("AKIA"),
        "{err}"
    );
    assert!(err.contains("s3://***@bucket/x.parquet"), "{err}");
}

/// F8: the current snapshot's manifest list replaced by the older snapshot's (as the
/// report did): reads used to answer the older snapshot's rows; now they fail naming the
/// list and both snapshot ids (the `snapshot-id` of its Avro header).
#[test]
fn a_manifest_list_replaced_by_another_snapshots_fails_the_scan() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1); \
         INSERT INTO ns.t VALUES (2)",
    ));
    let snapshots = rows(
        &cwd,
        "SELECT snapshot_id, manifest_list FROM ns.\"t$snapshots\" ORDER BY committed_at",
    );
    let (old_id, old_list) = snapshots[0].split_once(',').expect("two columns");
    let (new_id, new_list) = snapshots[1].split_once(',').expect("two columns");
    std::fs::copy(local(old_list), local(new_list)).expect("replace the manifest list");
    let out = sql_in(&cwd, "SELECT * FROM ns.t");
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&format!(
            "manifest list '{new_list}' was written for snapshot '{old_id}' (snapshot-id in \
             its header), but snapshot {new_id} names it: the file was replaced"
        )),
        "{}",
        stderr(&out)
    );
}

/// F8: a manifest replaced by another table's (as the report did with a v1 table's):
/// reads used to return the other table's rows; now they fail naming the manifest, its
/// list and both lengths (the list's `manifest_length`).
#[test]
fn a_manifest_replaced_by_another_tables_fails_the_scan_naming_both_lengths() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1); \
         CREATE TABLE ns.u (id BIGINT, s VARCHAR) TBLPROPERTIES ('format-version'='1'); \
         INSERT INTO ns.u VALUES (7, 'x'), (8, 'y')",
    ));
    let mine = rows(&cwd, "SELECT path, length FROM ns.\"t$manifests\"");
    let (path, length) = mine[0].split_once(',').expect("two columns");
    let list = rows(&cwd, "SELECT manifest_list FROM ns.\"t$snapshots\"");
    let other = rows(&cwd, "SELECT path FROM ns.\"u$manifests\"");
    std::fs::copy(local(&other[0]), local(path)).expect("replace the manifest");
    let now = std::fs::metadata(local(path)).expect("stat").len();
    assert_ne!(now.to_string(), length);
    let out = sql_in(&cwd, "SELECT * FROM ns.t");
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&format!(
            "manifest '{path}' is {now} bytes, the manifest list '{}' says {length} \
             (manifest_length): the file was replaced or truncated",
            list[0]
        )),
        "{}",
        stderr(&out)
    );
}

/// The local path of `ns.t`'s current metadata file (SQLite catalog in `cwd`).
fn current_metadata(cwd: &Path) -> String {
    let m = rows(
        cwd,
        "SELECT file FROM ns.\"t$metadata_log_entries\" ORDER BY timestamp DESC LIMIT 1",
    );
    local(&m[0])
}

/// F12: a manifest list location no store serves (`hdfs://`) names the metadata file
/// and the field it is recorded in, as a missing one does.
#[test]
fn a_manifest_list_of_an_unserved_scheme_names_the_metadata_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1)",
    ));
    let id = rows(&cwd, "SELECT snapshot_id FROM ns.\"t$snapshots\"");
    let path = current_metadata(&cwd);
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("metadata")).expect("json");
    m["snapshots"][0]["manifest-list"] = "hdfs://nn/x/snap-1.avro".into();
    std::fs::write(&path, serde_json::to_vec(&m).expect("json")).expect("edit the metadata");
    // a scan, and the purge, which lists the files before it drops the table
    for statement in ["SELECT * FROM ns.t", "DROP TABLE ns.t PURGE"] {
        let out = sql_in(&cwd, statement);
        assert!(!out.status.success(), "{statement}: {}", stdout(&out));
        assert!(
            stderr(&out).contains(&format!(
                "manifest list recorded in table metadata 'file://{path}' (field \
                 'manifest-list' of snapshot {})",
                id[0]
            )),
            "{statement}: {}",
            stderr(&out)
        );
    }
}

/// F12: a metadata file replaced by a directory is named a directory ("file '…' does not
/// exist: … not found: is directory" before).
#[test]
fn a_metadata_file_replaced_by_a_directory_is_named_a_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1)",
    ));
    let path = current_metadata(&cwd);
    std::fs::remove_file(&path).expect("remove the metadata");
    std::fs::create_dir(&path).expect("a directory in its place");
    let out = sql_in(&cwd, "SELECT * FROM ns.t");
    assert!(!out.status.success(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("'file://{path}' is a directory, not a file")),
        "{err}"
    );
    assert!(!err.contains("does not exist"), "{err}");
}

/// F12: the purge of a copied (moved) filesystem-catalog table whose copy of a manifest
/// list is damaged names the copy read, not only the recorded (intact) original.
#[test]
fn purge_of_a_moved_table_names_the_copy_it_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    let run = |catalog: &str, sql: &str| {
        let home = tempfile::tempdir().expect("home");
        icefloe(home.path())
            .current_dir(&cwd)
            .args(["--quiet", "--catalog", catalog, "--create-catalog"])
            .args(["--format", "csv", "-c", sql])
            .output()
            .expect("icefloe")
    };
    assert_success(&run(
        "fs",
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1)",
    ));
    crate::fixtures::copy_dir(&cwd.join("fs"), &cwd.join("fsd"));
    let lists = files_with_suffix(&cwd.join("fsd/ns/t/metadata"), ".avro");
    let list = lists
        .iter()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("snap-"))
        })
        .expect("the manifest list");
    std::fs::write(list, b"not avro").expect("damage the copy");
    let out = run("fsd", "DROP TABLE ns.t PURGE");
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&format!("(read at 'file://{}')", list.display())),
        "{}",
        stderr(&out)
    );
}

/// An Avro `long` (zig-zag varint) at `*at`, advancing it.
fn avro_long(bytes: &[u8], at: &mut usize) -> i64 {
    let mut n: u64 = 0;
    for shift in (0..64).step_by(7) {
        let b = bytes[*at];
        *at += 1;
        n |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
    }
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

fn push_avro_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Raw deflate data of 80 MiB of zeros in about 80 KB (8 MiB compressed, the next 8 MiB
/// compressed after a sync flush repeated, an empty final block): more than 1,000 times
/// its size, so past the bound of the block it is put in.
fn deflate_bomb() -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress};
    let zeros = vec![0u8; 8 << 20];
    let mut c = Compress::new(Compression::best(), false);
    let mut run = |input: &[u8], flush| {
        let mut out = Vec::with_capacity(1 << 20);
        c.compress_vec(input, &mut out, flush).expect("deflate");
        out
    };
    let mut out = run(&zeros, FlushCompress::Sync);
    let next = run(&zeros, FlushCompress::Sync);
    let last = run(&[], FlushCompress::Finish);
    for _ in 1..10 {
        out.extend_from_slice(&next);
    }
    out.extend_from_slice(&last);
    out
}

/// The Avro file at `path` (one data block, deflate) with its block's data replaced by
/// `data` (its record count kept); the block's byte offset and the file's new length.
fn replace_avro_block(path: &str, data: &[u8]) -> (usize, u64) {
    let bytes = std::fs::read(path).expect("avro");
    let sync = &bytes[bytes.len() - 16..];
    let start = bytes.windows(16).position(|w| w == sync).expect("sync") + 16;
    let mut at = start;
    let count = avro_long(&bytes, &mut at);
    let size = avro_long(&bytes, &mut at);
    assert_eq!(at + size as usize + 16, bytes.len(), "one block");
    let mut out = bytes[..start].to_vec();
    push_avro_long(&mut out, count);
    push_avro_long(&mut out, data.len() as i64);
    out.extend_from_slice(data);
    out.extend_from_slice(sync);
    std::fs::write(path, &out).expect("write avro");
    (start, out.len() as u64)
}

/// F10: a manifest list, or a manifest, whose deflate block inflates past its bound (the
/// larger of 64 MiB and 1,000 times the block's compressed size, at most 1 GiB) fails
/// the scan naming the file and the block's byte offset. The whole block used to be
/// inflated into memory (report W67: an 11 MB manifest list inflating to 2.5 GiB drove
/// the CLI past 2 GiB).
#[test]
fn a_compression_bomb_in_a_manifest_list_or_a_manifest_fails_naming_the_block() {
    let bomb = deflate_bomb();
    let bound = (bomb.len() * 1000).clamp(64 << 20, 1 << 30);
    assert!(
        80 << 20 > bound,
        "{} bytes may inflate to {bound}",
        bomb.len()
    );
    let expect_error = |cwd: &Path, file: &str, start: usize| {
        for sql in ["SELECT * FROM ns.t", "SELECT count(*) FROM ns.\"t$files\""] {
            let out = sql_in(cwd, sql);
            assert!(!out.status.success(), "{sql}: {}", stdout(&out));
            assert!(
                stderr(&out).contains(&format!(
                    "block at byte {start} inflates beyond {bound} bytes: corrupt Avro data \
                     in '{file}'"
                )),
                "{sql}: {}",
                stderr(&out)
            );
        }
    };
    // the manifest list
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1)",
    ));
    let list = rows(&cwd, "SELECT manifest_list FROM ns.\"t$snapshots\"");
    let (start, _) = replace_avro_block(&local(&list[0]), &bomb);
    expect_error(&cwd, &list[0], start);
    // a manifest (its length in the list updated to the bomb's, so the length check
    // passes and the manifest is decoded)
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1)",
    ));
    let manifest = rows(&cwd, "SELECT path FROM ns.\"t$manifests\"");
    let list = rows(&cwd, "SELECT manifest_list FROM ns.\"t$snapshots\"");
    let (start, length) = replace_avro_block(&local(&manifest[0]), &bomb);
    rewrite_avro(Path::new(&local(&list[0])), |v| {
        if let Value::Record(fields) = v {
            for (name, value) in fields.iter_mut() {
                if name == "manifest_length" {
                    *value = Value::Long(length as i64);
                }
            }
        }
    });
    expect_error(&cwd, &manifest[0], start);
}
