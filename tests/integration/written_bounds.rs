//! Column bounds icefloe writes and what they answer: `string` and `binary` bounds cut as
//! Iceberg Java cuts them (spec "Metrics"; `UnicodeUtil.truncateStringMin/Max`,
//! `BinaryUtil.truncateBinaryMin/Max`) under each metrics mode, and pruned by alike in
//! icefloe, PyIceberg and DuckDB; bounds cut under an earlier metrics mode never taken
//! for the values.

use crate::catalog::strings;
use crate::dml::{lake, ok, run};
use crate::interop::{duckdb_filtered, pyiceberg_filtered, python};
use datafusion::arrow::util::pretty::pretty_format_batches;
use icefloe::catalog::TableIdent;

/// Whether a comparison's outcome satisfies an operator.
type Holds = fn(std::cmp::Ordering) -> bool;

/// Lowercase hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A file written under the default metrics mode `truncate(16)` keeps its cut bounds
/// after the table's mode becomes `full`: `min`/`max` of a `string` or `binary` column
/// are the values, not the cut bounds (they were answered from the bounds: `max(s)` was
/// `abcdefghijklmnoq`, a value no row holds, and `min(b)` 16 of its 18 bytes). A file
/// whose bounds are equal still answers from metadata alone: a cut upper bound is above
/// every value, so equal bounds were not cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bounds_cut_under_an_earlier_metrics_mode_are_not_the_values() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.t (id INT, s STRING, b BINARY)").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.t VALUES \
         (1, 'abcdefghijklmnopqrstuvwxyz', X'0102030405060708090a0b0c0d0e0f101112')",
    )
    .await;
    ok(
        ctx,
        "ALTER TABLE ice.ns.t SET TBLPROPERTIES ('write.metadata.metrics.default' = 'full')",
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (2, 'abc', X'ff')").await;
    // the first file's bounds are cut, as Java cuts them
    assert_eq!(
        strings(
            ctx,
            "SELECT concat_ws(' ', encode(lower_bounds[2], 'hex'), \
             encode(upper_bounds[2], 'hex'), encode(lower_bounds[3], 'hex'), \
             encode(upper_bounds[3], 'hex')) FROM ice.ns.\"t$files\" \
             ORDER BY readable_metrics['id']['lower_bound']"
        )
        .await,
        [
            format!(
                "{} {} {} {}",
                hex(b"abcdefghijklmnop"),
                hex(b"abcdefghijklmnoq"),
                "0102030405060708090a0b0c0d0e0f10",
                "0102030405060708090a0b0c0d0e0f11"
            ),
            format!("{} {} ff ff", hex(b"abc"), hex(b"abc")),
        ]
    );
    assert_eq!(
        strings(
            ctx,
            "SELECT concat_ws(' ', max(s), encode(min(b), 'hex'), \
             (SELECT count(*) FROM ice.ns.t WHERE s = (SELECT max(s) FROM ice.ns.t))) \
             FROM ice.ns.t"
        )
        .await,
        ["abcdefghijklmnopqrstuvwxyz 0102030405060708090a0b0c0d0e0f101112 1"]
    );
    // equal bounds are the values: answered without reading a data file
    ok(ctx, "CREATE TABLE ice.ns.c (id INT, s STRING)").await;
    for (id, s) in [(1, "abcdefghijklmnopqrstuvwxyz"), (2, "b")] {
        ok(ctx, &format!("INSERT INTO ice.ns.c VALUES ({id}, '{s}')")).await;
    }
    ok(
        ctx,
        "ALTER TABLE ice.ns.c SET TBLPROPERTIES ('write.metadata.metrics.default' = 'full')",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.c VALUES (3, 'abcdefghijklmnopqrstuvwxyz0')",
    )
    .await;
    let sql = "SELECT concat_ws(' ', min(s), max(s)) FROM ice.ns.c";
    assert!(explain(ctx, sql).await.contains("file_type=parquet"));
    assert_eq!(strings(ctx, sql).await, ["abcdefghijklmnopqrstuvwxyz b"]);
    // copy-on-write: the file of id 1 (cut bounds) goes; the others' bounds are equal
    ok(ctx, "DELETE FROM ice.ns.c WHERE id = 1").await;
    let plan = explain(ctx, sql).await;
    assert!(!plan.contains("file_type=parquet"), "{plan}");
    assert_eq!(strings(ctx, sql).await, ["abcdefghijklmnopqrstuvwxyz0 b"]);
}

/// The physical plan `EXPLAIN` prints for `sql`.
async fn explain(ctx: &datafusion::prelude::SessionContext, sql: &str) -> String {
    let batches = run(ctx, &format!("EXPLAIN {sql}"))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    pretty_format_batches(&batches).expect("format").to_string()
}

/// `string` and `binary` values at and beyond the cut of each metrics mode — 16 and 17
/// characters, multi-byte and 4-byte code points, runs of U+FFFF (incremented to
/// U+10000), of U+D7FF (the next code point after the surrogates is U+E000) and of
/// U+10FFFF (no upper bound), 0xFF runs, empty values — get the bounds Iceberg Java
/// writes under `truncate(16)` (the default), `truncate(1)`, `counts` and `full`, and a
/// filter `=`, `<`, `<=`, `>`, `>=` on every value and `LIKE 'prefix%'` (PyIceberg
/// `StartsWith`, DuckDB `starts_with`) on its prefixes returns the rows the values hold
/// in icefloe, PyIceberg and DuckDB, each pruning by these bounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engines_prune_by_the_string_and_binary_bounds_of_every_metrics_mode() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let top = '\u{10FFFF}';
    let rep = |c: &str, n: usize| c.repeat(n);
    let strs: Vec<(i64, String)> = vec![
        (1, String::new()),
        (2, "abcdefghijklmnop".into()),
        (3, "abcdefghijklmnopq".into()),
        (4, rep("\u{FFFF}", 17)),
        (5, rep(&top.to_string(), 17)),
        (6, format!("a{}b", rep(&top.to_string(), 16))),
        (7, rep("\u{D7FF}", 17)),
        (8, rep("😀", 20)),
        (9, rep("é", 17)),
        (10, "ab".into()),
    ];
    let bins: Vec<(i64, Vec<u8>)> = vec![
        (1, vec![]),
        (2, vec![0xFF; 17]),
        (3, vec![0xFF; 16]),
        (4, vec![0; 17]),
        (5, [vec![1], vec![0xFF; 16], vec![2]].concat()),
        (6, [vec![0xFE], vec![0xFF; 20]].concat()),
        (10, vec![0xFF]),
    ];
    ok(
        ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, s STRING, t1 STRING, c STRING, b BINARY, bf BINARY) \
         TBLPROPERTIES ('write.metadata.metrics.column.t1' = 'truncate(1)', \
         'write.metadata.metrics.column.c' = 'counts', \
         'write.metadata.metrics.column.bf' = 'full')",
    )
    .await;
    let s_of = |id: i64| strs.iter().find(|(i, _)| *i == id).map(|(_, s)| s.clone());
    let b_of = |id: i64| bins.iter().find(|(i, _)| *i == id).map(|(_, b)| b.clone());
    // one file per row (11: all NULL), so every row's bounds are its own
    for id in 1..=11 {
        let s = s_of(id).map_or("NULL".to_string(), |s| format!("'{s}'"));
        let b = b_of(id).map_or("NULL".to_string(), |b| format!("X'{}'", hex(&b)));
        ok(
            ctx,
            &format!("INSERT INTO ice.ns.t VALUES ({id}, {s}, {s}, {s}, {b}, {b})"),
        )
        .await;
    }
    // the bounds, as Java's truncate(16) / truncate(1) / counts / full write them
    let got = strings(
        ctx,
        "SELECT concat_ws(' ', CAST(readable_metrics['id']['lower_bound'] AS STRING), \
         coalesce(encode(lower_bounds[2], 'hex'), '-'), \
         coalesce(encode(upper_bounds[2], 'hex'), '-'), \
         coalesce(encode(lower_bounds[3], 'hex'), '-'), \
         coalesce(encode(upper_bounds[3], 'hex'), '-'), \
         CAST(value_counts[4] AS STRING), coalesce(encode(lower_bounds[4], 'hex'), '-'), \
         coalesce(encode(lower_bounds[5], 'hex'), '-'), \
         coalesce(encode(upper_bounds[5], 'hex'), '-'), \
         coalesce(encode(upper_bounds[6], 'hex'), '-')) \
         FROM ice.ns.\"t$files\" ORDER BY readable_metrics['id']['lower_bound']",
    )
    .await;
    let h = |s: &str| hex(s.as_bytes());
    let bf = |id: i64| b_of(id).map_or("-".to_string(), |b| hex(&b));
    let expected: Vec<String> = [
        // id, s lower, s upper, t1 lower, t1 upper, b lower, b upper
        (1, h(""), h(""), h(""), h(""), "".into(), "".into()),
        (
            2,
            h("abcdefghijklmnop"),
            h("abcdefghijklmnop"),
            h("a"),
            h("b"),
            "ff".repeat(16),
            "-".into(),
        ),
        (
            3,
            h("abcdefghijklmnop"),
            h("abcdefghijklmnoq"),
            h("a"),
            h("b"),
            "ff".repeat(16),
            "ff".repeat(16),
        ),
        (
            4,
            h(&rep("\u{FFFF}", 16)),
            h(&format!("{}\u{10000}", rep("\u{FFFF}", 15))),
            h("\u{FFFF}"),
            h("\u{10000}"),
            "00".repeat(16),
            format!("{}01", "00".repeat(15)),
        ),
        (
            5,
            h(&rep(&top.to_string(), 16)),
            "-".into(),
            h(&top.to_string()),
            "-".into(),
            format!("01{}", "ff".repeat(15)),
            "02".into(),
        ),
        (
            6,
            h(&format!("a{}", rep(&top.to_string(), 15))),
            h("b"),
            h("a"),
            h("b"),
            format!("fe{}", "ff".repeat(15)),
            "ff".into(),
        ),
        (
            7,
            h(&rep("\u{D7FF}", 16)),
            h(&format!("{}\u{E000}", rep("\u{D7FF}", 15))),
            h("\u{D7FF}"),
            h("\u{E000}"),
            "-".into(),
            "-".into(),
        ),
        (
            8,
            h(&rep("😀", 16)),
            h(&format!("{}😁", rep("😀", 15))),
            h("😀"),
            h("😁"),
            "-".into(),
            "-".into(),
        ),
        (
            9,
            h(&rep("é", 16)),
            h(&format!("{}ê", rep("é", 15))),
            h("é"),
            h("ê"),
            "-".into(),
            "-".into(),
        ),
        (
            10,
            h("ab"),
            h("ab"),
            h("a"),
            h("b"),
            "ff".into(),
            "ff".into(),
        ),
        (
            11,
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
        ),
    ]
    .into_iter()
    .map(|(id, slo, shi, tlo, thi, blo, bhi)| {
        format!("{id} {slo} {shi} {tlo} {thi} 1 - {blo} {bhi} {}", bf(id))
    })
    .collect();
    assert_eq!(got, expected);

    // every filter and the ids it must return: (icefloe, PyIceberg, DuckDB, ids)
    let mut filters: Vec<(String, Option<String>, String, Vec<i64>)> = vec![];
    let ids = |keep: &dyn Fn(i64) -> bool| (1..=11).filter(|&id| keep(id)).collect::<Vec<_>>();
    let ops: [(&str, Holds); 5] = [
        ("=", |o| o.is_eq()),
        ("<", |o| o.is_lt()),
        ("<=", |o| o.is_le()),
        (">", |o| o.is_gt()),
        (">=", |o| o.is_ge()),
    ];
    for col in ["s", "t1", "c"] {
        for (_, v) in &strs {
            for (op, holds) in ops {
                let want = ids(&|id| s_of(id).is_some_and(|x| holds(x.cmp(v))));
                let f = format!("{col} {op} '{v}'");
                filters.push((f.clone(), Some(f.clone()), f, want));
            }
            for k in [1, 2, 16, 17] {
                if v.chars().count() < k {
                    continue;
                }
                let p: String = v.chars().take(k).collect();
                let want = ids(&|id| s_of(id).is_some_and(|x| x.starts_with(&p)));
                let like = format!("{col} LIKE '{p}%'");
                filters.push((
                    like.clone(),
                    Some(like),
                    format!("starts_with({col}, '{p}')"),
                    want,
                ));
            }
        }
    }
    for col in ["b", "bf"] {
        for (_, v) in &bins {
            for (op, holds) in ops {
                let want = ids(&|id| b_of(id).is_some_and(|x| holds(x.cmp(v))));
                let duck: String = v.iter().map(|b| format!("\\x{b:02X}")).collect();
                filters.push((
                    format!("{col} {op} X'{}'", hex(v)),
                    None,
                    format!("{col} {op} '{duck}'::BLOB"),
                    want,
                ));
            }
        }
    }
    filters_agree_in_three_engines(&lake, &filters).await;
}

/// A value as an icefloe, a DuckDB and (if it can filter on it) a PyIceberg literal.
type Literals = (String, String, Option<String>);

/// One column of [`engines_prune_by_the_bounds_of_decimals_dates_uuids_and_doubles`]:
/// its name and, in ascending order, (id, icefloe literal, DuckDB literal, PyIceberg
/// literal if PyIceberg can filter on it, the stored bound in hex).
type Ordered<'a> = (&'a str, Vec<(i64, String, String, Option<String>, &'a str)>);

/// Bounds at the edges of their types — `decimal(38, 10)` at ±(10^38 - 1) (16 bytes)
/// and ±10^-10, `decimal(9, 2)`, 127 and -128 scaled (the minimal two's-complement
/// bytes), dates in years 1 and 9999 and before 1970, UUIDs at both ends and across the
/// sign bit (compared unsigned), booleans, doubles at ±inf, the largest double and
/// `-0.0` — are the bytes of spec Appendix D as Iceberg Java writes them, and a filter
/// `=`, `<`, `<=`, `>`, `>=`, `NOT (… = …)`, `NOT (… < …)` on every value (and `IS NULL`)
/// returns the rows the values
/// hold in icefloe, DuckDB and PyIceberg (but for UUIDs, which its Arrow kernels do not
/// compare, and infinities and exponents, which its filter syntax does not read), each
/// pruning by these bounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engines_prune_by_the_bounds_of_decimals_dates_uuids_and_doubles() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let dec = |v: &str, p: &str| -> Literals {
        let c = format!("CAST('{v}' AS DECIMAL({p}))");
        (c.clone(), c, Some(v.to_string()))
    };
    let date = |v: &str| {
        (
            format!("DATE '{v}'"),
            format!("DATE '{v}'"),
            Some(format!("'{v}'")),
        )
    };
    let uuid = |v: &str| (format!("'{v}'"), format!("'{v}'::UUID"), None);
    let double = |v: &str, py: bool| {
        let c = format!("CAST('{v}' AS DOUBLE)");
        (c.clone(), c, py.then(|| v.to_string()))
    };
    let col = |name, values: Vec<(i64, Literals, &'static str)>| {
        let values = values
            .into_iter()
            .map(|(id, (i, d, p), hex)| (id, i, d, p, hex))
            .collect();
        (name, values)
    };
    let columns: Vec<Ordered> = vec![
        col(
            "dec",
            vec![
                (
                    1,
                    dec("-9999999999999999999999999999.9999999999", "38,10"),
                    "b4c4b357a5793b85f675ddc000000001",
                ),
                (5, dec("-128.0000000000", "38,10"), "fed5fa0e0000"),
                (3, dec("-0.0000000001", "38,10"), "ff"),
                (4, dec("127.0000000000", "38,10"), "0127b1e61c00"),
                (
                    2,
                    dec("9999999999999999999999999999.9999999999", "38,10"),
                    "4b3b4ca85a86c47a098a223fffffffff",
                ),
            ],
        ),
        col(
            "dn",
            vec![
                (1, dec("-9999999.99", "9,2"), "c4653601"),
                (5, dec("-1.29", "9,2"), "ff7f"),
                (3, dec("-0.01", "9,2"), "ff"),
                (4, dec("1.28", "9,2"), "0080"),
                (2, dec("9999999.99", "9,2"), "3b9ac9ff"),
            ],
        ),
        col(
            "dt",
            vec![
                (1, date("0001-01-01"), "c606f5ff"),
                (5, date("1600-02-29"), "57f0fdff"),
                (3, date("1969-12-31"), "ffffffff"),
                (4, date("1970-01-01"), "00000000"),
                (2, date("9999-12-31"), "a0c02c00"),
            ],
        ),
        col(
            "u",
            vec![
                (
                    1,
                    uuid("00000000-0000-0000-0000-000000000000"),
                    "00000000000000000000000000000000",
                ),
                (
                    5,
                    uuid("00000000-0000-0000-0000-000000000001"),
                    "00000000000000000000000000000001",
                ),
                (
                    4,
                    uuid("7fffffff-ffff-ffff-ffff-ffffffffffff"),
                    "7fffffffffffffffffffffffffffffff",
                ),
                (
                    3,
                    uuid("80000000-0000-0000-0000-000000000000"),
                    "80000000000000000000000000000000",
                ),
                (
                    2,
                    uuid("ffffffff-ffff-ffff-ffff-ffffffffffff"),
                    "ffffffffffffffffffffffffffffffff",
                ),
            ],
        ),
        col(
            "d",
            vec![
                (3, double("-inf", false), "000000000000f0ff"),
                (1, double("-0.0", true), "0000000000000080"),
                (4, double("1.5", true), "000000000000f83f"),
                (
                    5,
                    double("1.7976931348623157e308", false),
                    "ffffffffffffef7f",
                ),
                (2, double("inf", false), "000000000000f07f"),
            ],
        ),
    ];
    ok(
        ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, dec DECIMAL(38, 10), dn DECIMAL(9, 2), dt DATE, \
         u UUID, d DOUBLE, bo BOOLEAN)",
    )
    .await;
    // one file per row (6: all NULL); `bo` is false in odd rows, true in even ones
    for id in 1..=6_i64 {
        let values: Vec<String> = columns
            .iter()
            .map(|(_, values)| {
                values
                    .iter()
                    .find(|(i, ..)| *i == id)
                    .map_or("NULL".to_string(), |(_, lit, ..)| lit.clone())
            })
            .collect();
        let bo = if id == 6 {
            "NULL"
        } else if id % 2 == 0 {
            "true"
        } else {
            "false"
        };
        ok(
            ctx,
            &format!(
                "INSERT INTO ice.ns.t VALUES ({id}, {}, {bo})",
                values.join(", ")
            ),
        )
        .await;
    }
    // the stored bounds (each file's lower and upper bounds are its one value)
    let got = strings(
        ctx,
        "SELECT concat_ws(' ', CAST(readable_metrics['id']['lower_bound'] AS STRING), \
         coalesce(encode(lower_bounds[2], 'hex'), '-'), coalesce(encode(lower_bounds[3], 'hex'), '-'), \
         coalesce(encode(lower_bounds[4], 'hex'), '-'), coalesce(encode(lower_bounds[5], 'hex'), '-'), \
         coalesce(encode(lower_bounds[6], 'hex'), '-'), coalesce(encode(lower_bounds[7], 'hex'), '-'), \
         CAST(lower_bounds[2] = upper_bounds[2] AND lower_bounds[3] = upper_bounds[3] \
         AND lower_bounds[4] = upper_bounds[4] AND lower_bounds[5] = upper_bounds[5] \
         AND lower_bounds[6] = upper_bounds[6] AND lower_bounds[7] = upper_bounds[7] AS STRING)) \
         FROM ice.ns.\"t$files\" ORDER BY readable_metrics['id']['lower_bound']",
    )
    .await;
    let expected: Vec<String> = (1..=6_i64)
        .map(|id| {
            let mut parts = vec![id.to_string()];
            for (_, values) in &columns {
                let hex = values.iter().find(|(i, ..)| *i == id).map(|(.., h)| *h);
                parts.push(hex.unwrap_or("-").to_string());
            }
            parts.push(match id {
                6 => "-".into(),
                _ if id % 2 == 0 => "01".into(),
                _ => "00".into(),
            });
            if id != 6 {
                parts.push("true".into());
            }
            parts.join(" ")
        })
        .collect();
    assert_eq!(got, expected);

    // (icefloe, DuckDB, PyIceberg, ids)
    let mut filters: Vec<(String, String, Option<String>, Vec<i64>)> = vec![];
    let sorted = |ids: &[&(i64, String, String, Option<String>, &str)]| {
        let mut ids: Vec<i64> = ids.iter().map(|v| v.0).collect();
        ids.sort();
        ids
    };
    for (name, values) in &columns {
        let all: Vec<_> = values.iter().collect();
        for (k, (_, ice, duck, py, _)) in values.iter().enumerate() {
            for (op, want) in [
                ("=", sorted(&all[k..=k])),
                ("<", sorted(&all[..k])),
                ("<=", sorted(&all[..=k])),
                (">", sorted(&all[k + 1..])),
                (">=", sorted(&all[k..])),
            ] {
                filters.push((
                    format!("{name} {op} {ice}"),
                    format!("{name} {op} {duck}"),
                    py.as_ref().map(|p| format!("{name} {op} {p}")),
                    want,
                ));
            }
            // NOT of a comparison (DataFusion's planner types it before the analyzer)
            let others: Vec<_> = all.iter().filter(|v| v.0 != all[k].0).copied().collect();
            for (op, want) in [("=", sorted(&others)), ("<", sorted(&all[k..]))] {
                filters.push((
                    format!("NOT ({name} {op} {ice})"),
                    format!("NOT ({name} {op} {duck})"),
                    py.as_ref().map(|p| format!("not ({name} {op} {p})")),
                    want,
                ));
            }
        }
        filters.push((
            format!("{name} IS NULL"),
            format!("{name} IS NULL"),
            Some(format!("{name} is null")),
            vec![6],
        ));
    }
    for (op, want) in [("=", vec![2, 4]), ("<", vec![1, 3, 5])] {
        filters.push((
            format!("bo {op} true"),
            format!("bo {op} true"),
            Some(format!("bo {op} true")),
            want,
        ));
    }
    // -0.0 is 0.0 (Spark, DuckDB, and IEEE 754 for PyIceberg)
    for (op, want) in [("=", vec![1]), (">", vec![2, 4, 5]), ("<", vec![3])] {
        filters.push((
            format!("d {op} 0.0"),
            format!("d {op} 0.0"),
            Some(format!("d {op} 0.0")),
            want,
        ));
    }
    let filters: Vec<_> = filters
        .into_iter()
        .map(|(sql, duck, py, want)| (sql, py, duck, want))
        .collect();
    filters_agree_in_three_engines(&lake, &filters).await;
}

/// Each of `filters` — (icefloe's SQL, PyIceberg's row filter if it has one, DuckDB's
/// condition, the sorted ids it must return) — returns its ids from table `ns.t` of
/// `lake` in icefloe, PyIceberg (`scan(row_filter=…)`) and DuckDB (`iceberg_scan … WHERE`);
/// the last two only when the Python engines are set up (`ICEFLOE_PYTHON`).
async fn filters_agree_in_three_engines(
    lake: &crate::dml::Lake,
    filters: &[(String, Option<String>, String, Vec<i64>)],
) {
    let ctx = &lake.ctx;
    for (sql, _, _, want) in filters {
        let mut got: Vec<i64> = strings(
            ctx,
            &format!("SELECT CAST(id AS STRING) FROM ice.ns.t WHERE {sql}"),
        )
        .await
        .iter()
        .map(|s| s.parse().expect("id"))
        .collect();
        got.sort();
        assert_eq!(&got, want, "icefloe: {sql}");
    }
    if python().is_none() {
        return;
    }
    let py: Vec<(String, &Vec<i64>)> = filters
        .iter()
        .filter_map(|(_, p, _, want)| Some((p.clone()?, want)))
        .collect();
    let texts: Vec<String> = py.iter().map(|(p, _)| p.clone()).collect();
    let got = pyiceberg_filtered(&lake.db, &lake.warehouse, "ns.t", &texts);
    let wrong: Vec<String> = got
        .as_array()
        .expect("filtered")
        .iter()
        .zip(&py)
        .filter(|(got, (_, want))| *got != &serde_json::json!(want))
        .map(|(got, (p, want))| format!("{p}: {got} (want {want:?})"))
        .collect();
    assert!(wrong.is_empty(), "PyIceberg:\n{}", wrong.join("\n"));
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.t"))
        .await
        .expect("load");
    let duck: Vec<String> = filters.iter().map(|(_, _, d, _)| d.clone()).collect();
    let got = duckdb_filtered(table.metadata_location(), &duck);
    let wrong: Vec<String> = got
        .as_array()
        .expect("filtered")
        .iter()
        .zip(filters)
        .filter(|(got, (_, _, _, want))| *got != &serde_json::json!(want))
        .map(|(got, (_, _, d, want))| format!("{d}: {got} (want {want:?})"))
        .collect();
    assert!(wrong.is_empty(), "DuckDB:\n{}", wrong.join("\n"));
}

/// The columns of the table's sort order get `truncate(16)` where the default mode is
/// `none` or `counts`, as Java's `MetricsConfig.forTable` (report S65, fault 4: no bounds
/// were written for the sort column); a column override still wins, and an unsorted
/// column keeps the default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sort_order_columns_get_bounds_under_none_and_counts() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for (table, default) in [("n", "none"), ("c", "counts")] {
        ok(
            ctx,
            &format!(
                "CREATE TABLE ice.ns.{table} (id INT, s STRING, k INT) TBLPROPERTIES \
                 ('write.metadata.metrics.default'='{default}', \
                 'write.metadata.metrics.column.k'='none')"
            ),
        )
        .await;
        ok(
            ctx,
            &format!("ALTER TABLE ice.ns.{table} WRITE ORDERED BY id, truncate(2, s), k"),
        )
        .await;
        ok(
            ctx,
            &format!("INSERT INTO ice.ns.{table} VALUES (1, 'abcdefghijklmnopqrstuvwxyz', 7), (2, 'b', 8)"),
        )
        .await;
        let got = strings(
            ctx,
            &format!(
                "SELECT concat_ws(' ', CAST(sort_order_id AS STRING), \
                 coalesce(encode(lower_bounds[1], 'hex'), '-'), \
                 coalesce(encode(upper_bounds[1], 'hex'), '-'), \
                 coalesce(encode(lower_bounds[2], 'hex'), '-'), \
                 coalesce(encode(lower_bounds[3], 'hex'), '-'), \
                 coalesce(CAST(value_counts[3] AS STRING), '-')) \
                 FROM ice.ns.\"{table}$files\""
            ),
        )
        .await;
        // id and s (truncate(2, s) preserves order) bounded, s cut to 16 code points;
        // k's own `none` wins
        let s_lower = hex(b"abcdefghijklmnop");
        assert_eq!(
            got,
            vec![format!("1 01000000 02000000 {s_lower} - -")],
            "{default}"
        );
    }
}
