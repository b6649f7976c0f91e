//! Parquet files read by path and as external tables keep their NaN rows (report S65,
//! fault 1): Parquet min/max leave NaN out, and DataFusion's file statistics and
//! row-group/page pruning trusted them (a NaN read as the column's other value, filters
//! and `max` dropping NaN rows). See `src/datafusion/nan_safe_parquet.rs`.

use crate::cli::{assert_success, icefloe, stdout};

/// `sql` run by the CLI in `dir` with CSV output (must succeed): its output.
fn csv(dir: &std::path::Path, home: &std::path::Path, sql: &str) -> String {
    let out = icefloe(home)
        .current_dir(dir)
        .args(["--format", "csv", "-c", sql])
        .output()
        .unwrap();
    assert_success(&out);
    stdout(&out)
}

#[test]
fn path_and_external_table_reads_keep_nan_rows() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (d, h) = (dir.path(), home.path());
    // one.parquet: NaN and one other value (chunk min = max = 1.5);
    // groups.parquet: row groups of 2 rows, [1.0, 1.5], [NaN, 2.0], [NaN, 0.5]
    csv(
        d,
        h,
        "COPY (SELECT * FROM (VALUES (1, 1.5), (2, CAST('NaN' AS DOUBLE))) AS v(id, f)) \
         TO 'one.parquet' STORED AS PARQUET; \
         COPY (SELECT * FROM (VALUES (1, 1.0), (2, 1.5), (3, CAST('NaN' AS DOUBLE)), (4, 2.0), \
         (5, CAST('NaN' AS DOUBLE)), (6, 0.5)) AS v(id, f) ORDER BY id) \
         TO 'groups.parquet' STORED AS PARQUET OPTIONS ('format.max_row_group_size' '2')",
    );
    let cases: [(&str, &[(&str, &str)]); 2] = [
        (
            "one.parquet",
            &[
                ("SELECT id, f FROM T ORDER BY id", "id,f\n1,1.5\n2,NaN\n"),
                ("SELECT count(*) AS n FROM T WHERE isnan(f)", "n\n1\n"),
                ("SELECT id FROM T WHERE f > 1.5", "id\n2\n"),
                ("SELECT count(*) AS n FROM T WHERE f < 1.5", "n\n0\n"),
                ("SELECT id FROM T WHERE f = 1.5", "id\n1\n"),
                ("SELECT max(f) AS m, min(f) AS l FROM T", "m,l\nNaN,1.5\n"),
                ("SELECT count(*) AS n, count(f) AS c FROM T", "n,c\n2,2\n"),
            ],
        ),
        (
            "groups.parquet",
            &[
                ("SELECT count(*) AS n FROM T WHERE isnan(f)", "n\n2\n"),
                (
                    "SELECT id FROM T WHERE f > 1.5 ORDER BY id",
                    "id\n3\n4\n5\n",
                ),
                ("SELECT id FROM T WHERE f < 1.0 ORDER BY id", "id\n6\n"),
                ("SELECT id FROM T WHERE f = 1.5", "id\n2\n"),
                ("SELECT max(f) AS m FROM T", "m\nNaN\n"),
                ("SELECT count(*) AS n FROM T WHERE f >= 2.0", "n\n3\n"),
                ("SELECT count(*) AS n, count(f) AS c FROM T", "n,c\n6,6\n"),
            ],
        ),
    ];
    for (file, queries) in cases {
        for (sql, expected) in queries {
            let by_path = sql.replace(" T", &format!(" '{file}'"));
            assert_eq!(csv(d, h, &by_path), *expected, "{by_path}");
            let external = format!(
                "CREATE EXTERNAL TABLE e STORED AS PARQUET LOCATION '{file}'; {}",
                sql.replace(" T", " e")
            );
            assert_eq!(csv(d, h, &external), *expected, "{external}");
        }
    }
}
