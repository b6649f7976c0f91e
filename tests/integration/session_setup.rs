//! How icefloe's sessions take deep expressions (1,000 `AND`/`OR` terms, long arithmetic
//! chains): the CLI runs them (large stacks), the library's `sql::execute` fails with
//! "expression too deep" on small stacks; neither aborts the process. And number
//! literals: plain decimals are exact, exponent forms doubles, in the CLI and in sessions
//! set up by `register_iceberg_factory`.

use datafusion::prelude::SessionContext;

use crate::cli::{assert_failure, assert_success, run, stderr, stdout};

fn chain(n: usize, term: impl Fn(usize) -> String, op: &str) -> String {
    (0..n).map(term).collect::<Vec<_>>().join(op)
}

#[test]
fn cli_runs_deep_expressions_and_refuses_deeper_ones_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 1,000 levels: far past the ~300 that overflow a 2 MiB stack in a debug build. Deeper
    // chains cost more than they check: DataFusion's planning of `1 + 1 + …` grows faster
    // than the square of its length (a profile shows expression type and display-name
    // computations); in a debug build this test took 52 s at 2,000 terms, 14 s at 1,000.
    let sql = format!(
        "SELECT count(*) AS n FROM (VALUES (1), (2), (3000)) AS v(x) WHERE {};\n\
         SELECT count(*) AS n FROM (VALUES (1), (2), (3000)) AS v(x) WHERE {};\n\
         SELECT {} AS s;\n",
        chain(1000, |i| format!("x = {i}"), " OR "),
        chain(1000, |i| format!("x <> {}", i + 5000), " AND "),
        chain(1000, |_| "1".to_string(), " + "),
    );
    let file = dir.path().join("deep.sql");
    std::fs::write(&file, sql).expect("write");
    let out = run(&["--format", "csv", "-f", &file.to_string_lossy()]);
    assert_success(&out);
    assert_eq!(stdout(&out), "n\n2\nn\n3\ns\n1000\n");
    // far deeper: a clear error, exit status 1, no abort
    std::fs::write(
        &file,
        format!("SELECT {} AS s", chain(20_000, |_| "1".to_string(), " + ")),
    )
    .expect("write");
    let out = run(&["-f", &file.to_string_lossy()]);
    assert_failure(&out);
    assert!(
        stderr(&out).contains("expression too deep"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn library_refuses_too_deep_expressions_on_small_stacks() {
    // the test thread and Tokio's workers have 2 MiB stacks
    let ctx = SessionContext::new();
    icefloe::register_iceberg_factory(&ctx);
    let deep = format!(
        "SELECT count(*) FROM (VALUES (1), (2)) AS v(x) WHERE {}",
        chain(2000, |i| format!("x = {i}"), " OR ")
    );
    let err = icefloe::datafusion::sql::execute(&ctx, &deep)
        .await
        .expect_err("too deep");
    assert_eq!(err.kind(), icefloe::ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("expression too deep"), "{err}");
    let err = icefloe::datafusion::sql::execute(
        &ctx,
        &format!("SELECT {}", chain(2000, |_| "1".to_string(), " + ")),
    )
    .await
    .expect_err("too deep");
    assert!(err.to_string().contains("expression too deep"), "{err}");
    // within the default limit: planned and run on these stacks
    let within = format!(
        "SELECT {} AS s FROM (VALUES (1), (2)) AS v(x) WHERE {}",
        chain(100, |_| "x".to_string(), " + "),
        chain(100, |i| format!("x = {i}"), " OR ")
    );
    let batches = icefloe::datafusion::sql::execute(&ctx, &within)
        .await
        .expect("plan")
        .collect()
        .await
        .expect("run");
    let mut sums = vec![];
    for b in &batches {
        let col = datafusion::arrow::compute::cast(
            b.column(0),
            &datafusion::arrow::datatypes::DataType::Int64,
        )
        .expect("cast");
        let col = datafusion::arrow::array::AsArray::as_primitive::<
            datafusion::arrow::datatypes::Int64Type,
        >(&col);
        sums.extend(col.iter().flatten());
    }
    sums.sort();
    assert_eq!(sums, [100, 200]);
}

/// The corpus table with `int`, `bigint`, `float`, `double`, `decimal(9,2)` and
/// `decimal(38,10)` columns (NaN, infinities and -0.0 among the floating-point values).
const TYPES_TABLE: &str = "testdata/corpus/spark_v1_types_identity";

#[test]
fn cli_reads_decimal_literals_exactly_and_exponent_literals_as_doubles() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("literals.sql");
    std::fs::write(
        &file,
        "SELECT id FROM t WHERE dec_big = 3703703670369.0370370367;\n\
         SELECT id FROM t WHERE d = 3.75e0 OR l = 1.2000000084e10 OR dec_small = 4.121e1 \
         OR f = 1.4e1 OR i = 1.9E2 ORDER BY id;\n\
         SELECT id FROM t WHERE d > 1e300 OR f < -1e300 OR dec_big > 3.5e13 ORDER BY id;\n\
         SELECT 1e300 AS x, 2.5E-3 AS y, 1.5 AS z, 1e-400 AS u;\n",
    )
    .expect("write");
    let table = format!("t={TYPES_TABLE}");
    let out = run(&[
        "--format",
        "csv",
        "--table",
        &table,
        "-f",
        &file.to_string_lossy(),
    ]);
    assert_success(&out);
    assert_eq!(
        stdout(&out),
        "id\n3\nid\n3\n12\n13\n28\n29\nid\n21\n22\n23\n27\n29\nx,y,z,u\n1e300,0.0025,1.5,0.0\n"
    );
}

#[tokio::test]
async fn factory_sessions_read_decimal_literals_exactly() {
    let ctx = SessionContext::new();
    icefloe::register_iceberg_factory(&ctx);
    let location = crate::fixtures::testdata("corpus/spark_v1_types_identity");
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{}'",
        location.display()
    ))
    .await
    .expect("create");
    let ids = |batches: Vec<datafusion::arrow::record_batch::RecordBatch>| -> Vec<i32> {
        batches
            .iter()
            .flat_map(|b| {
                datafusion::arrow::array::AsArray::as_primitive::<
                    datafusion::arrow::datatypes::Int32Type,
                >(b.column(0))
                .values()
                .to_vec()
            })
            .collect()
    };
    // plain ctx.sql: exact decimals; double columns still compared in double
    for (filter, want) in [
        ("dec_big = 3703703670369.0370370367", vec![3]),
        ("dec_big = 3703703670369.037037037", vec![]),
        ("dec_small = 41.21", vec![13]),
        ("d = 3.75 OR d = -0.0", vec![3, 25]),
        ("f = 14.0", vec![28]),
    ] {
        let sql = format!("SELECT id FROM t WHERE {filter} ORDER BY id");
        let batches = ctx
            .sql(&sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(ids(batches), want, "{sql}");
    }
    // exponent literals: doubles through sql::execute
    let sql = "SELECT id FROM t WHERE d > 1e300 OR dec_big > 3.5e13 ORDER BY id";
    let batches = icefloe::datafusion::sql::execute(&ctx, sql)
        .await
        .expect("plan")
        .collect()
        .await
        .expect("run");
    // NaN sorts above every double (rows 21, 22), as in Spark
    assert_eq!(ids(batches), [21, 22, 23, 29]);
    // plain ctx.sql reads them as decimals and refuses those beyond the decimal range
    // (as documented)
    let err = ctx.sql("SELECT 1e300").await.expect_err("decimal range");
    assert!(err.to_string().contains("Decimal scale -300"), "{err}");
}

/// The CLI's session shows, lists and resets icefloe's options (SHOW said "not a
/// variable which can be viewed", df_settings listed none, RESET said "Could not find
/// config namespace"), `RESET` gives back the CLI's own `max_expression_depth` (5000),
/// and a value an option does not take is refused naming the option and what it takes
/// (it said "Error parsing '-1' as usize").
#[test]
fn cli_shows_lists_and_resets_icefloe_options() {
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "SHOW icefloe.max_expression_depth; SET icefloe.max_expression_depth = 7; \
         SHOW icefloe.max_expression_depth; RESET icefloe.max_expression_depth; \
         SHOW icefloe.max_expression_depth; SET icefloe.deferred_planning_min_files = 5; \
         SELECT name, value FROM information_schema.df_settings WHERE name LIKE 'icefloe.%' \
         ORDER BY name; RESET icefloe.deferred_planning_min_files; \
         SHOW icefloe.deferred_planning_min_files",
    ]);
    assert_success(&out);
    assert_eq!(
        stdout(&out),
        "name,value\nicefloe.max_expression_depth,5000\n\
         name,value\nicefloe.max_expression_depth,7\n\
         name,value\nicefloe.max_expression_depth,5000\n\
         name,value\nicefloe.deferred_planning_min_files,5\nicefloe.equality_deletes,auto\n\
         icefloe.max_expression_depth,5000\nicefloe.partition_overwrite_mode,static\n\
         icefloe.position_deletes,auto\nicefloe.wap_id,\"\"\n\
         name,value\nicefloe.deferred_planning_min_files,100000\n"
    );
    let out = run(&["-c", "SET icefloe.deferred_planning_min_files = -1"]);
    assert_failure(&out);
    assert!(
        stderr(&out).contains(
            "icefloe.deferred_planning_min_files cannot be '-1' (expected a whole number, 0 \
             or more; 0 turns deferred planning off)"
        ),
        "{}",
        stderr(&out)
    );
}
