//! Object store locations and messages through the CLI (tester R65's F7 and F9 on S3 and
//! Azure): against the SeaweedFS server of [`crate::seaweed`], Azurite
//! ([`crate::azurite`]), and a store that is not there.

use std::path::Path;
use std::process::Output;

use crate::cli::{assert_failure, assert_success, icefloe, stderr};
use crate::seaweed::{self, Seaweed};

/// The CLI on the catalog config file `config`, printing CSV.
fn sql_with(config: &Path, sql: &str) -> Output {
    let home = tempfile::tempdir().expect("home");
    icefloe(home.path())
        .arg("--catalog")
        .arg(config)
        .args(["--format", "csv", "-c", sql])
        .output()
        .expect("icefloe")
}

/// A config file in `dir`: `lines`, then the server's `s3.*` properties.
fn config_file(dir: &Path, server: &Seaweed, lines: &str) -> std::path::PathBuf {
    let mut text = lines.to_string();
    for (k, v) in server.catalog_properties() {
        if k.starts_with("s3.") {
            text.push_str(&format!("{k}={v}\n"));
        }
    }
    let file = dir.join("cat.properties");
    std::fs::write(&file, text).expect("config file");
    file
}

/// F7: a table location holding `#` or `?` on S3 is refused before anything is written,
/// whether given (REST `LOCATION`) or made from the warehouse and the table's name (SQL
/// catalog with an S3 warehouse): PyIceberg and DuckDB read such a location as a URL and
/// could not read the table. F9: a missing object read by URL says it is missing (it said
/// "table not found").
#[test]
fn s3_locations_other_engines_cannot_read_are_refused() {
    let Some(server) = seaweed::server() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let ns = seaweed::unique_namespace("loc");
    let rest = config_file(
        dir.path(),
        server,
        &format!(
            "type=rest\nuri={}\ncredential={}\nwarehouse={}\n",
            server.rest_uri,
            server.credential(),
            seaweed::WAREHOUSE
        ),
    );
    assert_success(&sql_with(&rest, &format!("CREATE SCHEMA {ns}")));
    let out = sql_with(
        &rest,
        &format!("CREATE TABLE {ns}.x (id BIGINT) LOCATION 's3://warehouse/{ns}/a#b'"),
    );
    assert_failure(&out);
    assert!(
        stderr(&out).contains(&format!(
            "table location 's3://warehouse/{ns}/a#b' holds '#': other engines"
        )),
        "{}",
        stderr(&out)
    );
    let missing = format!("s3://{}/{ns}/nothing/x.parquet", seaweed::FILES_BUCKET);
    let out = sql_with(&rest, &format!("SELECT * FROM '{missing}'"));
    assert_failure(&out);
    assert!(
        stderr(&out).contains(&format!(
            "error: no file or directory at {missing} (the object store holds no object at \
             that key nor below it)"
        )),
        "{}",
        stderr(&out)
    );

    let sql_dir = tempfile::tempdir().expect("tempdir");
    std::fs::remove_file(&rest).expect("rm");
    let sql = config_file(
        sql_dir.path(),
        server,
        &format!(
            "type=sql\nuri=sqlite:{}/catalog.db\nwarehouse=s3://{}/{ns}\n",
            sql_dir.path().display(),
            seaweed::FILES_BUCKET
        ),
    );
    let home = tempfile::tempdir().expect("home");
    let out = icefloe(home.path())
        .arg("--catalog")
        .arg(&sql)
        .args([
            "--create-catalog",
            "-c",
            "CREATE SCHEMA ns; CREATE TABLE ns.\"T#1?x\" (id BIGINT)",
        ])
        .output()
        .expect("icefloe");
    assert_failure(&out);
    assert!(
        stderr(&out).contains(&format!(
            "table location 's3://{}/{ns}/ns/T#1?x' holds '#'",
            seaweed::FILES_BUCKET
        )),
        "{}",
        stderr(&out)
    );
    let out = sql_with(&sql, "SHOW TABLES");
    assert_success(&out);
    assert!(!crate::cli::stdout(&out).contains("T#1"));
}

/// F9: a data file write to an S3 endpoint that is not there says why, as a read does
/// (`Connection refused`); it said only "error sending request".
#[test]
fn s3_write_to_an_unreachable_endpoint_keeps_the_cause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let config = dir.path().join("cat.properties");
    std::fs::write(
        &config,
        format!(
            "type=sql\nuri=sqlite:{}/catalog.db\nwarehouse={}\n\
             s3.endpoint=http://127.0.0.1:{port}\ns3.access-key-id=a\n\
             s3.secret-access-key=b\ns3.region=us-east-1\ns3.path-style-access=true\n",
            dir.path().display(),
            dir.path().display()
        ),
    )
    .expect("config");
    let home = tempfile::tempdir().expect("home");
    let out = icefloe(home.path())
        .arg("--catalog")
        .arg(&config)
        .args([
            "--create-catalog",
            "-c",
            "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT) \
             TBLPROPERTIES ('write.data.path' = 's3://nowhere/data'); \
             INSERT INTO ns.t VALUES (1)",
        ])
        .output()
        .expect("icefloe");
    assert_failure(&out);
    let err = stderr(&out);
    assert!(
        err.contains("cannot write data file 's3://nowhere/data/"),
        "{err}"
    );
    assert!(err.contains("Connection refused"), "{err}");
}

/// F9: a missing Azure object read by `abfss://container@account…` URL says it is
/// missing; its `@` was taken for a table's `@version`, and the message named table
/// `abfss://cont`. An object that is there reads.
#[test]
fn abfss_url_of_a_missing_object_is_named_whole() {
    let Some(azurite) = crate::azurite::server() else {
        return;
    };
    azurite.create_container("urlmsg");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut text = format!(
        "type=sql\nuri=sqlite:{}/catalog.db\nwarehouse={}\n",
        dir.path().display(),
        dir.path().display()
    );
    for (k, v) in azurite.adls_properties() {
        text.push_str(&format!("{k}={v}\n"));
    }
    let config = dir.path().join("cat.properties");
    std::fs::write(&config, text).expect("config");
    let base = "abfss://urlmsg@devstoreaccount1.dfs.core.windows.net";
    let home = tempfile::tempdir().expect("home");
    let out = icefloe(home.path())
        .arg("--catalog")
        .arg(&config)
        .args([
            "--create-catalog",
            "--format",
            "csv",
            "-c",
            &format!("COPY (SELECT 1 AS x) TO '{base}/here/x.parquet'; SELECT x FROM '{base}/here/x.parquet'"),
        ])
        .output()
        .expect("icefloe");
    assert_success(&out);
    assert!(
        crate::cli::stdout(&out).ends_with("x\n1\n"),
        "{}",
        crate::cli::stdout(&out)
    );
    let missing = format!("{base}/nothing-here/x.parquet");
    let out = sql_with(&config, &format!("SELECT * FROM '{missing}'"));
    assert_failure(&out);
    assert!(
        stderr(&out).starts_with(&format!("error: no file or directory at {missing} (")),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("version"), "{}", stderr(&out));
}
