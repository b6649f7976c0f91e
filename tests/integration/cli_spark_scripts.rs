//! A Spark user's script run by the `icefloe` program with `-f` (a tester's report): the
//! `SET spark.*` keys icefloe has equivalents for, a temporary view as a `MERGE` and
//! `INSERT OVERWRITE` source, Spark's literal suffixes and column types run; a
//! `TABLESAMPLE` and a Spark key icefloe does not read stop the script, naming them.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `icefloe --catalog sqlite:<dir>/cat.db --format csv -f <dir>/<name>.sql` with `script`.
fn run_script(dir: &Path, name: &str, script: &str) -> Output {
    let file = dir.join(format!("{name}.sql"));
    std::fs::write(&file, script).expect("script");
    let catalog = format!("sqlite:{}", dir.join("cat.db").display());
    Command::new(env!("CARGO_BIN_EXE_icefloe"))
        .env("HOME", dir)
        .env_remove("ICEFLOE_FAILPOINT")
        .stdin(Stdio::null())
        .args([
            "--catalog",
            &catalog,
            "--create-catalog",
            "--format",
            "csv",
            "-f",
        ])
        .arg(&file)
        .output()
        .expect("run")
}

#[test]
fn a_spark_script_runs_and_unsupported_forms_stop_it_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = run_script(
        dir.path(),
        "spark",
        "SET spark.sql.sources.partitionOverwriteMode=dynamic;
CREATE SCHEMA db;
CREATE TABLE db.t (id INT, p STRING, x DECIMAL, s SHORT) USING iceberg PARTITIONED BY (p);
INSERT INTO db.t VALUES (1, 'a', 1.5, 4S), (2, 'b', 2.5BD, 5S);
CREATE OR REPLACE TEMP VIEW src AS SELECT CAST(3 AS INT) AS id, 'a' AS p, 7.5BD AS x, 6S AS s;
INSERT OVERWRITE db.t SELECT * FROM src;
CREATE OR REPLACE TEMPORARY VIEW upd AS SELECT CAST(2 AS INT) AS id, 'b' AS p, 9BD AS x, 1S AS s;
MERGE INTO db.t t USING upd u ON t.id = u.id WHEN MATCHED THEN UPDATE SET *;
SELECT id, p, x, s, 1.5D AS d FROM db.t ORDER BY id;
",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // dynamic overwrite replaced partition a only; x is decimal(10,0), 7.5 stored as 8
    assert!(
        stdout.ends_with("id,p,x,s,d\n2,b,9,1,1.5\n3,a,8,6,1.5\n"),
        "{stdout}"
    );
    for (script, needle) in [
        (
            "SELECT count(*) FROM db.t TABLESAMPLE (1 PERCENT);\nSELECT 1;",
            "TABLESAMPLE (1 PERCENT) on db.t is not supported",
        ),
        (
            "SET spark.sql.shuffle.partitions=4;\nSELECT 1;",
            "SET spark.sql.shuffle.partitions: icefloe does not read this Spark setting",
        ),
    ] {
        let out = run_script(dir.path(), "stop", script);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{script}");
        assert!(stderr.contains(needle), "{script}: {stderr}");
        // the script stopped there
        assert!(
            out.stdout.is_empty(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
