//! The CLI's catalogs fail loudly, every Iceberg table answers to one naming scheme,
//! `CREATE EXTERNAL TABLE … STORED AS ICEBERG` checks its options and columns, and
//! `--explain-pruning` and `\d` tell what they see.

use std::path::Path;
use std::process::Output;

use crate::cli::{
    assert_failure, assert_success, icefloe, run, run_with_stdin, sample_table, stderr, stdout,
};

/// The first snapshot of `testdata/sample_table` (of three; the current is the third).
const FIRST_SNAPSHOT: &str = "3378843091875528318";

/// Run in `cwd` (relative catalog paths resolve there).
fn run_in(cwd: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    icefloe(home.path())
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_sqlite_catalog_must_exist_unless_created() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    // a missing file is an error naming the absolute path
    let out = run_in(&cwd, &["--catalog", "sqlite:missing.db", "-c", "SELECT 1"]);
    assert_failure(&out);
    let expected = format!(
        "no catalog database at {}",
        cwd.join("missing.db").display()
    );
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
    assert!(!cwd.join("missing.db").exists());
    // an empty file is a new catalog
    std::fs::write(cwd.join("empty.db"), b"").unwrap();
    let out = run_in(
        &cwd,
        &["--catalog", "sqlite:empty.db", "-c", "CREATE SCHEMA ns"],
    );
    assert_success(&out);
    assert!(std::fs::metadata(cwd.join("empty.db")).unwrap().len() > 0);
    // --create-catalog creates it; SQLAlchemy's three slashes are a relative path
    let out = run_in(
        &cwd,
        &[
            "--catalog",
            "sqlite:///rel.db",
            "--create-catalog",
            "-c",
            "CREATE SCHEMA ns",
        ],
    );
    assert_success(&out);
    assert!(cwd.join("rel.db").is_file());
    let out = run_in(
        &cwd,
        &[
            "--catalog",
            "sqlite:///rel.db",
            "--format",
            "csv",
            "-c",
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'ns'",
        ],
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "schema_name\nns\n");
    // four slashes, and Java's jdbc:sqlite:/, are absolute
    let abs = cwd.join("abs.db");
    let four = format!("sqlite:///{}", abs.display());
    let out = run_in(
        Path::new("/"),
        &[
            "--catalog",
            &four,
            "--create-catalog",
            "-c",
            "CREATE SCHEMA a",
        ],
    );
    assert_success(&out);
    assert!(abs.is_file());
    let jdbc = format!("jdbc:sqlite:{}", abs.display());
    let out = run_in(
        Path::new("/"),
        &[
            "--catalog",
            &jdbc,
            "--format",
            "csv",
            "-c",
            "CREATE SCHEMA b; SELECT 1 AS one",
        ],
    );
    assert_success(&out);
    // a file that is no SQLite database: the error names its absolute path
    std::fs::write(cwd.join("junk.db"), b"this is not a database, it is text").unwrap();
    let out = run_in(&cwd, &["--catalog", "sqlite:junk.db", "-c", "SELECT 1"]);
    assert_failure(&out);
    assert!(
        stderr(&out).contains(&cwd.join("junk.db").display().to_string()),
        "{}",
        stderr(&out)
    );
    // a `--create-catalog` open that fails after creating the database (here: a
    // warehouse on another host) leaves neither it nor the directories made for it; a
    // database that was there stays
    for (uri, made, kept) in [("sub/dir/new.db", "sub", false), ("rel.db", "rel.db", true)] {
        std::fs::write(
            cwd.join("bad.properties"),
            format!("type=sql\nuri={uri}\nwarehouse=file://otherhost/wh\n"),
        )
        .unwrap();
        let args = [
            "--catalog",
            "bad.properties",
            "--create-catalog",
            "-c",
            "SELECT 1",
        ];
        let out = run_in(&cwd, &args);
        assert_failure(&out);
        assert!(stderr(&out).contains("otherhost"), "{}", stderr(&out));
        assert_eq!(cwd.join(made).exists(), kept, "{uri}: {}", stderr(&out));
    }
    // a missing warehouse directory too
    let out = run_in(&cwd, &["--catalog", "no_such_warehouse", "-c", "SELECT 1"]);
    assert_failure(&out);
    let expected = format!(
        "no warehouse directory at {}",
        cwd.join("no_such_warehouse").display()
    );
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
}

#[test]
fn cli_unsupported_catalog_uris_name_the_catalog_type() {
    for (uri, kind) in [
        ("postgresql://localhost/iceberg", "PostgreSQL"),
        ("thrift://metastore:9083", "Hive Metastore"),
        ("http://localhost:8181", "REST catalog"),
        ("https://catalog.example.com/api", "REST catalog"),
    ] {
        let out = run(&["--catalog", uri, "-c", "SELECT 1"]);
        assert_failure(&out);
        assert!(stderr(&out).contains(kind), "{uri}: {}", stderr(&out));
        assert!(!stderr(&out).contains("feature"), "{uri}: {}", stderr(&out));
        if uri.starts_with("http") {
            let hint = format!("'rest:{uri}'");
            assert!(stderr(&out).contains(&hint), "{uri}: {}", stderr(&out));
        }
    }
}

/// A `--catalog` value the CLI refuses is echoed without its secrets: a REST URI holding a
/// `credential`, a JDBC URL with a password (the CLI's own "cannot open catalog …" context
/// showed the whole value, secret included).
#[test]
fn cli_refused_catalog_uris_show_no_secret() {
    for (uri, shown) in [
        (
            "rest:http://127.0.0.1:9/api?warehouse=wh&credential=id:TOPSECRET",
            "cannot open catalog rest:http://127.0.0.1:9/api?warehouse=wh&credential=***",
        ),
        (
            "jdbc:postgresql://db:5432/ice?user=u&password=TOPSECRET",
            "cannot open catalog jdbc:postgresql://db:5432/ice?user=u&password=***",
        ),
        (
            "postgresql://u:TOPSECRET@db/ice",
            "cannot open catalog postgresql://***@db/ice",
        ),
        // an Azure connection string holds the account key (it was neither refused
        // in a URI nor redacted)
        (
            "rest:http://127.0.0.1:9/api?warehouse=wh&adls.connection-string.acct=\
             AccountName%3Dacct%3BAccountKey%3DTOPSECRET",
            "cannot open catalog rest:http://127.0.0.1:9/api?warehouse=wh&\
             adls.connection-string.acct=***",
        ),
    ] {
        let out = run(&["--catalog", uri, "-c", "SELECT 1"]);
        assert_failure(&out);
        let err = stderr(&out);
        assert!(!err.contains("TOPSECRET"), "{uri}: {err}");
        assert!(err.contains(shown), "{uri}: {err}");
    }
}

/// A catalog config file is read in the Java properties format, as its README example
/// says and as Spark, Trino and `java.util.Properties.store` write it: `key: value` and
/// `key value` lines, `!` comments, `\:` escapes, continuation lines. They were read as
/// `key=value` lines only: `uri=sqlite\:cat.db` named the file `sqlite\:cat.db`, and
/// `type sql` or `! comment` failed with "expected key=value". A malformed `\u` escape
/// names the file and line, never the value.
#[test]
fn cli_catalog_config_files_are_java_properties() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let out = run_in(
        &cwd,
        &[
            "--catalog",
            "sqlite:cat.db",
            "--create-catalog",
            "-c",
            "CREATE SCHEMA ns; CREATE TABLE ns.t (id INT); INSERT INTO ns.t VALUES (7)",
        ],
    );
    assert_success(&out);
    std::fs::write(
        cwd.join("cat.properties"),
        "#written by java.util.Properties\n! an old-style comment\ntype s\\u0071l\n\
         uri: sqlite\\:c\\\n    at.db\n",
    )
    .unwrap();
    let out = run_in(
        &cwd,
        &[
            "--catalog",
            "cat.properties",
            "--format",
            "csv",
            "-c",
            "SELECT id FROM ns.t",
        ],
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "id\n7\n");
    std::fs::write(
        cwd.join("bad.properties"),
        "type=rest\nuri=http://127.0.0.1:9\ncredential=id:TOPSECRET\\u00\n",
    )
    .unwrap();
    let out = run_in(&cwd, &["--catalog", "bad.properties", "-c", "SELECT 1"]);
    assert_failure(&out);
    let err = stderr(&out);
    assert!(
        err.contains("catalog config file 'bad.properties', line 3: malformed \\uXXXX escape"),
        "{err}"
    );
    assert!(!err.contains("TOPSECRET"), "{err}");
}

/// A table of a namespace of several levels is named as Spark names it (`a.b.c.t`,
/// `cat.a.b.c.t`) or with the namespace as one quoted schema (`"a.b.c".t`). The unquoted
/// forms failed in every statement DataFusion plans ("Unsupported compound identifier
/// 'a.b.c.t'", "catalog 'a' not found").
#[test]
fn cli_names_of_several_level_namespaces_read_as_in_spark() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let out = run_in(
        &cwd,
        &[
            "--catalog",
            "sqlite:cat.db",
            "--create-catalog",
            "--format",
            "csv",
            "-c",
            "CREATE SCHEMA a; CREATE SCHEMA a.b; CREATE SCHEMA a.b.c; \
             CREATE TABLE \"a.b.c\".t (x INT); INSERT INTO \"a.b.c\".t VALUES (5); \
             SELECT x FROM default.\"a.b.c\".t",
        ],
    );
    assert_success(&out);
    assert!(stdout(&out).ends_with("x\n5\n"), "{}", stdout(&out));
    for (sql, rows) in [
        ("INSERT INTO a.b.c.t VALUES (1)", "count\n1\n"),
        ("SELECT sum(x) AS s FROM a.b.c.t", "s\n6\n"),
        ("SELECT sum(x) AS s FROM default.a.b.c.t", "s\n6\n"),
        ("CREATE TABLE a.b.c.u (x INT)", ""),
        ("INSERT INTO a.b.c.u SELECT x FROM a.b.c.t", "count\n2\n"),
        ("SELECT count(*) AS n FROM default.\"a.b.c\".u", "n\n2\n"),
    ] {
        let out = run_in(
            &cwd,
            &["--catalog", "sqlite:cat.db", "--format", "csv", "-c", sql],
        );
        assert_success(&out);
        assert!(stdout(&out).starts_with(rows), "{sql}: {}", stdout(&out));
    }
    // three parts, the first no catalog and `a.x` no namespace: DataFusion's reading
    let out = run_in(
        &cwd,
        &["--catalog", "sqlite:cat.db", "-c", "SELECT * FROM a.x.t"],
    );
    assert_failure(&out);
    assert!(
        stderr(&out).contains("catalog 'a' not found"),
        "{}",
        stderr(&out)
    );
}

/// A catalog with `ns.good` and `ns.broken`, whose metadata files are gone.
fn catalog_with_a_broken_table(dir: &Path) -> String {
    let catalog = format!("sqlite:{}", dir.join("c.db").display());
    let out = run(&[
        "--catalog",
        &catalog,
        "--create-catalog",
        "-c",
        "CREATE SCHEMA ns; CREATE TABLE ns.good (id BIGINT); CREATE TABLE ns.broken (id BIGINT)",
    ]);
    assert_success(&out);
    std::fs::remove_dir_all(dir.join("ns/broken/metadata")).unwrap();
    catalog
}

#[test]
fn cli_one_broken_table_does_not_break_listing() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog_with_a_broken_table(dir.path());
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-c",
        "SHOW TABLES",
    ]);
    assert_success(&out);
    assert!(
        stdout(&out).contains(",ns,broken,BASE TABLE"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains(",ns,good,BASE TABLE"),
        "{}",
        stdout(&out)
    );
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-c",
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'ns'",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "table_name,column_name\ngood,id\n");
    let out = run(&["--catalog", &catalog, "-c", "SELECT * FROM ns.broken"]);
    assert_failure(&out);
    assert!(stderr(&out).contains("metadata"), "{}", stderr(&out));
}

#[test]
fn cli_one_naming_scheme_for_every_table() {
    let location = sample_table();
    let location = location.to_str().unwrap();
    // --table and CREATE EXTERNAL TABLE
    let sql = format!(
        "CREATE EXTERNAL TABLE u STORED AS ICEBERG LOCATION '{location}'; \
         SELECT count(*) AS n FROM \"t$snapshots\"; SELECT count(*) AS n FROM \"u$snapshots\"; \
         SELECT count(*) AS n FROM \"t@{FIRST_SNAPSHOT}\"; SELECT count(*) AS n FROM \"u@{FIRST_SNAPSHOT}\"; \
         SELECT count(*) AS n FROM \"t@{FIRST_SNAPSHOT}$files\"; SELECT count(*) AS n FROM \"u@{FIRST_SNAPSHOT}$files\"; \
         SELECT summary['total-data-files'] AS n FROM \"t$snapshots\" WHERE snapshot_id = {FIRST_SNAPSHOT}"
    );
    let table = format!("t={location}");
    let out = run(&["--table", &table, "--format", "csv", "-c", &sql]);
    assert_success(&out);
    let text = stdout(&out);
    let counts: Vec<&str> = text.lines().filter(|l| *l != "n").map(str::trim).collect();
    assert_eq!(counts.len(), 7, "{}", stdout(&out));
    assert_eq!((counts[0], counts[1]), ("3", "3"));
    assert_eq!(counts[2], counts[3]);
    assert_eq!(counts[4], counts[5]);
    // the files the writer (Spark) recorded in the first snapshot's summary
    assert_eq!(counts[4], counts[6]);

    // a catalog table, with a tag
    let dir = tempfile::tempdir().unwrap();
    let catalog = format!("sqlite:{}", dir.path().join("c.db").display());
    let out = run(&[
        "--catalog",
        &catalog,
        "--create-catalog",
        "--format",
        "csv",
        "-c",
        "CREATE SCHEMA ns; CREATE TABLE ns.c (id BIGINT); INSERT INTO ns.c VALUES (1); \
         ALTER TABLE ns.c CREATE TAG v1; INSERT INTO ns.c VALUES (2); \
         SELECT count(*) AS n FROM ns.\"c@v1\"; SELECT count(*) AS n FROM ns.\"c$snapshots\"; \
         SELECT count(*) AS n FROM ns.\"c@v1$files\"",
    ]);
    assert_success(&out);
    assert!(
        stdout(&out).ends_with("n\n1\nn\n2\nn\n1\n"),
        "{}",
        stdout(&out)
    );

    // an unknown suffix lists the metadata tables, for every kind of table
    for (args, name) in [
        (vec!["--table", table.as_str()], "\"t$bogus\""),
        (vec!["--catalog", catalog.as_str()], "ns.\"c$bogus\""),
    ] {
        let mut all = args.clone();
        let sql = format!("SELECT * FROM {name}");
        all.extend(["-c", sql.as_str()]);
        let out = run(&all);
        assert_failure(&out);
        let err = stderr(&out);
        assert!(
            err.contains("'bogus'") && err.contains("snapshots, history"),
            "{err}"
        );
    }
    // an unknown namespace or table says which
    let out = run(&["--catalog", &catalog, "-c", "SELECT * FROM nope.c"]);
    assert_failure(&out);
    assert!(stderr(&out).contains("nope"), "{}", stderr(&out));
    let out = run(&["--catalog", &catalog, "-c", "SELECT * FROM ns.nope"]);
    assert_failure(&out);
    assert!(stderr(&out).contains("nope"), "{}", stderr(&out));
}

#[test]
fn cli_iceberg_scan_takes_a_relative_directory() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let out = run_in(
        &testdata,
        &[
            "--format",
            "csv",
            "-c",
            "SELECT count(*) AS n FROM iceberg_scan('sample_table')",
        ],
    );
    assert_success(&out);
    let table = format!("t={}", sample_table().display());
    let whole = run(&[
        "--table",
        &table,
        "--format",
        "csv",
        "-c",
        "SELECT count(*) AS n FROM t",
    ]);
    assert_eq!(stdout(&out), stdout(&whole));
}

#[test]
fn cli_external_table_checks_options_and_columns() {
    let location = sample_table();
    let location = location.to_str().unwrap();
    let create = |rest: &str| {
        run(&[
            "-c",
            &format!("CREATE EXTERNAL TABLE u {rest}; SELECT count(*) FROM u")
                .replace("@LOC@", location),
        ])
    };
    let out = create("STORED AS ICEBERG LOCATION '@LOC@' OPTIONS ('snapshot' '1')");
    assert_failure(&out);
    let err = stderr(&out);
    assert!(err.contains("unknown option 'snapshot'"), "{err}");
    assert!(
        err.contains("snapshot_id, ref, branch, tag, as_of, allow_moved_paths, remap"),
        "{err}"
    );
    assert!(err.contains("aws_") && err.contains("s3."), "{err}");
    // one time-travel option at most, as iceberg_scan takes one key
    let out = create(
        "STORED AS ICEBERG LOCATION '@LOC@' \
         OPTIONS ('snapshot_id' '3378843091875528318', 'ref' 'main')",
    );
    assert_failure(&out);
    let err = stderr(&out);
    assert!(
        err.contains("'snapshot_id'") && err.contains("'ref'") && err.contains("give one"),
        "{err}"
    );
    // the first snapshot, by id and by the time it was committed (as_of)
    let first =
        create("STORED AS ICEBERG LOCATION '@LOC@' OPTIONS ('snapshot_id' '3378843091875528318')");
    assert_success(&first);
    let as_of = create("STORED AS ICEBERG LOCATION '@LOC@' OPTIONS ('as_of' '1795978082825')");
    assert_success(&as_of);
    assert_eq!(stdout(&first), stdout(&as_of));
    let current = create("STORED AS ICEBERG LOCATION '@LOC@' OPTIONS ('ref' 'main')");
    assert_success(&current);
    assert_ne!(stdout(&first), stdout(&current));
    let out = create("STORED AS ICEBERG LOCATION '@LOC@' OPTIONS ('as_of' 'yesterday')");
    assert_failure(&out);
    assert!(stderr(&out).contains("option 'as_of'"), "{}", stderr(&out));
    // object store options by their prefixes are accepted
    let out = create("STORED AS ICEBERG LOCATION '@LOC@' OPTIONS ('aws_region' 'eu-west-1', 's3.region' 'eu-west-1')");
    assert_success(&out);
    // a column list must match the table's
    let out = create(
        "(id BIGINT, ts TIMESTAMP WITH TIME ZONE, v VARCHAR) STORED AS ICEBERG LOCATION '@LOC@'",
    );
    assert_success(&out);
    let out = create("(id INT, v VARCHAR) STORED AS ICEBERG LOCATION '@LOC@'");
    assert_failure(&out);
    assert!(stderr(&out).contains("do not match"), "{}", stderr(&out));
}

#[test]
fn cli_explain_pruning_counts_exactly_and_says_where_answers_came_from() {
    let table = format!("t={}", sample_table().display());
    // answered from the manifests' row counts: no scan, but a line saying so
    let out = run(&[
        "--table",
        &table,
        "--explain-pruning",
        "-c",
        "SELECT count(*) FROM t",
    ]);
    assert_success(&out);
    assert!(
        stderr(&out).contains("pruning: t: no data file read; the answer came from table metadata"),
        "{}",
        stderr(&out)
    );
    // a LIMIT opens only the manifests it needs, and says so
    let out = run(&[
        "--table",
        &table,
        "--explain-pruning",
        "-c",
        "SELECT * FROM t LIMIT 1",
    ]);
    assert_success(&out);
    assert!(
        stderr(&out).contains("pruning: t: manifests 3 (0 skipped by partition summaries, 2 not opened: LIMIT already covered)"),
        "{}",
        stderr(&out)
    );
}

/// In a query over several tables each funnel is named by its table, and the table
/// answered from metadata is the one said to be (a tester's: the lines were matched to
/// the tables by position, so a `UNION` whose first table was answered from its row
/// counts printed the second one's funnel, then named the second "no data file read").
#[test]
fn cli_explain_pruning_names_each_table_of_a_query() {
    let (_dir, catalog) = crate::cli::catalog_with(
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id INT, s VARCHAR); \
         INSERT INTO ns.t VALUES (4, 'x'), (5, 'y'); \
         CREATE TABLE ns.mix (i INT, j INT) PARTITIONED BY (i); \
         INSERT INTO ns.mix VALUES (1, 1), (2, 2), (3, 3)",
    );
    let report = |sql: &str| {
        let out = run(&["--catalog", &catalog, "--explain-pruning", "-c", sql]);
        assert_success(&out);
        let lines: Vec<String> = stderr(&out)
            .lines()
            .filter(|l| l.starts_with("pruning: "))
            .map(|l| l.split(';').next().unwrap_or(l).to_string())
            .collect();
        lines
    };
    let from_metadata = "no data file read";
    assert_eq!(
        report("SELECT count(*) FROM ns.t UNION ALL SELECT count(*) FROM ns.mix WHERE j = 3"),
        [
            "pruning: ns.mix: manifests 1 (0 skipped by partition summaries, 0 not opened: \
             LIMIT already covered)"
                .to_string(),
            format!("pruning: ns.t: {from_metadata}")
        ]
    );
    assert_eq!(
        report("SELECT (SELECT count(*) FROM ns.mix) AS c, s FROM ns.t WHERE id = 4"),
        [
            "pruning: ns.t: manifests 1 (0 skipped by partition summaries, 0 not opened: \
             LIMIT already covered)"
                .to_string(),
            format!("pruning: ns.mix: {from_metadata}")
        ]
    );
    // a self-join: two funnels of one table
    let lines = report("SELECT count(*) FROM ns.t a JOIN ns.t b ON a.id = b.id");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("pruning: ns.t: manifests 1")),
        "{lines:?}"
    );
    // a MERGE's target by its name, not its location (a tester's)
    let mut lines = report(
        "MERGE INTO ns.t t USING ns.mix s ON t.id = s.i WHEN MATCHED THEN UPDATE SET s = 'z'",
    );
    lines.sort();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("pruning: ns.mix: manifests 1"),
        "{lines:?}"
    );
    assert!(
        lines[1].starts_with("pruning: ns.t: manifests 1"),
        "{lines:?}"
    );
}

/// A table with more than a thousand data files prints its counts in full.
#[test]
fn cli_explain_pruning_prints_exact_counts() {
    let (_dir, catalog) = crate::cli::catalog_with(
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT, p BIGINT) PARTITIONED BY (p); \
         INSERT INTO ns.t SELECT v AS id, v AS p FROM generate_series(1, 1234) AS s(v)",
    );
    let out = run(&[
        "--catalog",
        &catalog,
        "--explain-pruning",
        "-c",
        "SELECT count(*) FROM ns.t WHERE id > 0",
    ]);
    assert_success(&out);
    assert!(
        stderr(&out).contains("data files 1,234 (0 skipped"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("-> 1,234 planned"),
        "{}",
        stderr(&out)
    );
}

/// `DELETE`, `UPDATE` and `MERGE` print the funnel of the scan they read (it said "no
/// data file read; the answer came from table metadata" for each, its scan carrying no
/// counts); a `DELETE` that removes whole partitions reads no file, and says so. Counts
/// by hand: four files, one per insert and partition (k = 1, 2 | 1, 3).
#[test]
fn cli_explain_pruning_shows_what_row_level_statements_read() {
    let (_dir, catalog) = crate::cli::catalog_with(
        "CREATE SCHEMA ns; CREATE TABLE ns.t (k INT, v INT) PARTITIONED BY (k) \
         TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', \
         'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'); \
         INSERT INTO ns.t VALUES (1, 5), (2, 6); INSERT INTO ns.t VALUES (1, 7), (3, 5)",
    );
    let explain = |sql: &str| {
        let out = run(&["--catalog", &catalog, "--explain-pruning", "-c", sql]);
        assert_success(&out);
        stderr(&out)
    };
    // v = 5: the files whose bounds hold no 5 (v 6 and v 7) are skipped by metrics
    let err = explain("DELETE FROM ns.t WHERE v = 5");
    assert!(
        err.contains("data files 4 (0 skipped by partition, 2 by metrics;")
            && err.contains("-> 2 planned"),
        "{err}"
    );
    // k = 2: the one file of partition 2 is read
    let err = explain("UPDATE ns.t SET v = 8 WHERE k = 2");
    assert!(
        err.contains("data files 4 (3 skipped by partition, 0 by metrics;")
            && err.contains("-> 1 planned"),
        "{err}"
    );
    // the whole partition k = 3 is removed in metadata, no file read
    let err = explain("DELETE FROM ns.t WHERE k = 3");
    assert!(err.contains("pruning: ns.t: no data file read"), "{err}");
    let err = explain(
        "MERGE INTO ns.t t USING (SELECT 2 AS k) s ON t.k = s.k AND t.k = 2 \
         WHEN MATCHED THEN DELETE",
    );
    // partition 2 now holds the file the UPDATE deleted (2, 6) from, and its new (2, 8)
    assert!(err.contains("-> 2 planned (1 fully deleted)"), "{err}");
    assert!(!err.contains("no data file read"), "{err}");
}

#[test]
fn cli_describe_lists_and_describes_tables() {
    let table = format!("t={}", sample_table().display());
    let out = run_with_stdin(&["--table", &table, "--format", "csv"], "\\d\n\\d t\n");
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("datafusion,public,t,BASE TABLE"), "{text}");
    assert!(text.contains("column,type,field_id,required,doc\nid,long,1,false,\nts,timestamptz,2,false,\nv,string,3,false,\n"), "{text}");
    assert!(
        text.contains("partition spec,spec 0: day(ts) AS ts_day (field id 1000)"),
        "{text}"
    );
    assert!(text.contains("sort order,unsorted"), "{text}");
    assert!(
        text.contains("current snapshot,\"2049152867955782130 at "),
        "{text}"
    );
    assert!(text.contains("(append, 61 rows)"), "{text}");
    // an unknown table is an error, and the shell goes on
    let out = run_with_stdin(
        &["--table", &table, "--format", "csv"],
        "\\d nope\nSELECT 1 AS a;\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: \\d nope: table 'nope' not found in schema 'datafusion.public' (tables: t)\n"
    );
    assert_eq!(stdout(&out), "a\n1\n");
}

/// `\d NAME` reads NAME as a statement does: a single-quoted file path is the file (it
/// looked for a table named `'f.csv'`, quotes and all), also after `USE ns`; an unknown
/// table or namespace says which part is unknown and what there is, as a statement's
/// error does (it said "No table named 'nope'", "failed to resolve schema: nope").
#[test]
fn cli_describe_reads_names_as_statements_do() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.csv");
    std::fs::write(&file, "id,name\n1,a\n").unwrap();
    let catalog = format!("sqlite:{}", dir.path().join("cat.db").display());
    let file = file.display();
    let out = run_with_stdin(
        &["--catalog", &catalog, "--create-catalog", "--format", "csv"],
        &format!(
            "CREATE SCHEMA ns;\nCREATE TABLE ns.u (x INT);\n\\d '{file}'\nUSE ns;\n\\d '{file}'\n\
             \\d nope\n\\d nope.u\n"
        ),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let columns = "column_name,data_type,is_nullable\nid,Int64,YES\nname,Utf8,YES\n";
    assert_eq!(stdout(&out), format!("{columns}{columns}"));
    assert_eq!(
        stderr(&out),
        "error: \\d nope: table 'nope' not found in schema 'default.ns' (tables: u)\n\
         error: \\d nope.u: schema (namespace) 'nope' not found in catalog 'default' \
         (schemas: ns, public)\n"
    );
}

/// `\d` says "1 row" of a snapshot holding one row, "N rows" otherwise (it said "1 rows";
/// tester Y66).
#[test]
fn cli_describe_counts_one_row_in_the_singular() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = format!("sqlite:{}", dir.path().join("cat.db").display());
    let out = run_with_stdin(
        &["--catalog", &catalog, "--create-catalog", "--format", "csv"],
        "CREATE SCHEMA ns;\nCREATE TABLE ns.u (x INT);\nINSERT INTO ns.u VALUES (1);\n\\d ns.u\n\
         INSERT INTO ns.u VALUES (2);\n\\d ns.u\n",
    );
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("(append, 1 row)"), "{text}");
    assert!(text.contains("(append, 2 rows)"), "{text}");
}

/// `main` of a table without snapshots is its current, empty state (as Iceberg Java and
/// Spark's `t.branch_main` read it), not an unknown ref.
#[test]
fn cli_main_of_a_table_without_snapshots_reads_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = format!("sqlite:{}", dir.path().join("cat.db").display());
    let out = run(&[
        "--catalog",
        &catalog,
        "--create-catalog",
        "--format",
        "csv",
        "-c",
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); \
         SELECT count(*) AS n FROM ns.\"t@main\"; SELECT * FROM ns.\"t@main\"",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "n\n0\nid\n");
    let out = run(&["--catalog", &catalog, "-c", "SELECT * FROM ns.\"t@dev\""]);
    assert_failure(&out);
    assert!(stderr(&out).contains("'dev'"), "{}", stderr(&out));
}

/// `DROP SCHEMA|DATABASE|NAMESPACE [IF EXISTS]` drops an empty namespace of a SQLite or
/// filesystem catalog; a missing one is an error naming it (unless `IF EXISTS`), one
/// holding a table is refused naming it, and `CASCADE` does not drop tables.
#[test]
fn cli_drop_schema_drops_an_empty_namespace_only() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = format!("sqlite:{}", dir.path().join("cat.db").display());
    let warehouse = dir.path().join("wh").display().to_string();
    for catalog in [sqlite, warehouse] {
        let with_catalog = |sql: &str| {
            run(&[
                "--catalog",
                &catalog,
                "--create-catalog",
                "--format",
                "csv",
                "-c",
                sql,
            ])
        };
        let out = with_catalog(
            "CREATE SCHEMA emptyns; CREATE SCHEMA full; CREATE TABLE full.t (id BIGINT); \
             DROP SCHEMA emptyns; DROP SCHEMA IF EXISTS nosuch; DROP DATABASE IF EXISTS emptyns; \
             CREATE NAMESPACE other; DROP NAMESPACE other RESTRICT",
        );
        assert_success(&out);
        let out = with_catalog("DROP SCHEMA nosuch");
        assert_failure(&out);
        assert!(
            stderr(&out).contains("namespace 'nosuch'"),
            "{}",
            stderr(&out)
        );
        let out = with_catalog("DROP NAMESPACE full");
        assert_failure(&out);
        let err = stderr(&out);
        assert!(
            err.contains("not empty") && err.contains("tables t"),
            "{err}"
        );
        let out = with_catalog("DROP SCHEMA full CASCADE");
        assert_failure(&out);
        assert!(stderr(&out).contains("CASCADE"), "{}", stderr(&out));
        let out = with_catalog(
            "SELECT schema_name FROM information_schema.schemata \
             WHERE schema_name IN ('emptyns', 'full', 'other') ORDER BY 1; \
             SELECT count(*) AS n FROM full.t",
        );
        assert_success(&out);
        assert_eq!(stdout(&out), "schema_name\nfull\nn\n0\n", "{catalog}");
    }
}

/// With an Iceberg catalog, `CREATE TABLE t` of an unqualified name (a tester's D6: it
/// made an in-memory table, lost at exit, with nothing said) is refused naming how to
/// qualify it, as is CTAS and a table in `public`; after `USE ns` (Spark's current
/// namespace) it creates the Iceberg table `ns.t`, which the next process reads. Without
/// a catalog, `CREATE TABLE t` is DataFusion's in-memory table, as in `datafusion-cli`.
#[test]
fn cli_create_table_without_a_namespace_is_kept_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let catalog = [
        "--catalog",
        "sqlite:cat.db",
        "--create-catalog",
        "--format",
        "csv",
    ];
    let with_catalog = |sql: &str| run_in(&cwd, &[&catalog[..], &["-c", sql]].concat());
    let refused = |namespaces: &str| {
        format!(
            "CREATE TABLE t: 'public' is the CLI's in-memory schema, not a namespace of \
             Iceberg catalog 'default', so the table would be lost at exit; name a \
             namespace (CREATE TABLE ns.t …) or make one current (USE ns) ({namespaces})\n"
        )
    };
    let out = with_catalog("CREATE TABLE t (id INT)");
    assert_failure(&out);
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}",
            refused("the catalog has no namespaces yet: CREATE SCHEMA ns makes one")
        )
    );
    assert_success(&with_catalog("CREATE SCHEMA ns"));
    for sql in [
        "CREATE TABLE t AS SELECT 1 AS id",
        "CREATE OR REPLACE TABLE t (id INT)",
        "CREATE TABLE public.t (id INT)",
    ] {
        let out = with_catalog(sql);
        assert_failure(&out);
        assert_eq!(
            stderr(&out),
            format!("error: {}", refused("namespaces: ns")),
            "{sql}"
        );
    }
    let out = with_catalog("USE nosuch");
    assert_failure(&out);
    assert!(
        stderr(&out).contains("USE nosuch: namespace 'nosuch' does not exist in catalog 'default'"),
        "{}",
        stderr(&out)
    );
    let out = with_catalog(
        "USE ns; CREATE TABLE t (id INT); INSERT INTO t VALUES (1), (2); SELECT sum(id) AS s FROM t",
    );
    assert_success(&out);
    assert!(stdout(&out).ends_with("s\n3\n"), "{}", stdout(&out));
    let out = with_catalog("SELECT count(*) AS n FROM ns.t");
    assert_success(&out);
    assert_eq!(stdout(&out), "n\n2\n");
    // CREATE EXTERNAL TABLE still registers in the session's `public`
    let sample = sample_table();
    let external = format!(
        "CREATE EXTERNAL TABLE e STORED AS ICEBERG LOCATION '{}'; SELECT count(*) > 0 AS any FROM e",
        sample.display()
    );
    let out = with_catalog(&external);
    assert_success(&out);
    assert_eq!(stdout(&out), "any\ntrue\n");
    // the names suggested are written as they must be to name them (a tester's: `USE
    // MixNs` reads as `mixns`)
    let mixed = [
        "--catalog",
        "sqlite:mix.db",
        "--create-catalog",
        "-c",
        "CREATE SCHEMA \"MixNs\"; CREATE TABLE \"Zz\" (id INT)",
    ];
    let out = run_in(&cwd, &mixed);
    assert_failure(&out);
    assert!(
        stderr(&out).contains(
            "(CREATE TABLE \"MixNs\".\"Zz\" …) or make one current (USE \"MixNs\") \
             (namespaces: MixNs)"
        ),
        "{}",
        stderr(&out)
    );
    // no catalog: DataFusion's in-memory tables
    let out = run_in(
        &cwd,
        &[
            "--format",
            "csv",
            "-c",
            "CREATE TABLE m (id INT); INSERT INTO m VALUES (5); SELECT id FROM m",
        ],
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "count\n1\nid\n5\n");
}
