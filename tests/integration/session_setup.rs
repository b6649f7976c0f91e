//! How icefloe's sessions take deep expressions (2,000 `AND`/`OR` terms, long arithmetic
//! chains): the CLI runs them (large stacks), the library's `sql::execute` fails with
//! "expression too deep" on small stacks; neither aborts the process.

use datafusion::prelude::SessionContext;

use crate::cli::{assert_failure, assert_success, run, stderr, stdout};

fn chain(n: usize, term: impl Fn(usize) -> String, op: &str) -> String {
    (0..n).map(term).collect::<Vec<_>>().join(op)
}

#[test]
fn cli_runs_deep_expressions_and_refuses_deeper_ones_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sql = format!(
        "SELECT count(*) AS n FROM (VALUES (1), (2), (3000)) AS v(x) WHERE {};\n\
         SELECT count(*) AS n FROM (VALUES (1), (2), (3000)) AS v(x) WHERE {};\n\
         SELECT {} AS s;\n",
        chain(2000, |i| format!("x = {i}"), " OR "),
        chain(2000, |i| format!("x <> {}", i + 5000), " AND "),
        chain(2000, |_| "1".to_string(), " + "),
    );
    let file = dir.path().join("deep.sql");
    std::fs::write(&file, sql).expect("write");
    let out = run(&["--format", "csv", "-f", &file.to_string_lossy()]);
    assert_success(&out);
    assert_eq!(stdout(&out), "n\n2\nn\n3\ns\n2000\n");
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
