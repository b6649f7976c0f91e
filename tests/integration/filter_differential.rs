//! A differential test of filters and pruning: tables of every primitive type (NaN, ±0,
//! ±∞, extreme integers and decimals, pre-1970 times, empty, unicode and long strings
//! that differ after the 16 bytes of a truncated bound, NULLs everywhere), written by
//! icefloe in several files and row groups under identity, bucket, truncate and time
//! partitions (v1, v2, v3), with merge-on-read deletes (position deletes, deletion vectors)
//! and files of two partition specs. A seeded random predicate generator (literals of the
//! column's type and of others, `IN` / `NOT IN` with NULLs, `IS [NOT] NULL`, `isnan`,
//! `LIKE`, `starts_with`, `BETWEEN`, casts and arithmetic on a column, two columns,
//! metadata columns, `AND` / `OR` / `NOT`) must select through icefloe (manifest, file,
//! row-group pruning and the residual filter) exactly the rows that the same `WHERE`
//! selects in DataFusion over the table's unfiltered rows held in memory (and, for the
//! table without deletes, over its Parquet data files read by plain DataFusion).

use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Int32Type};
use datafusion::datasource::MemTable;
use datafusion::prelude::ParquetReadOptions;

use crate::dml::{lake, ok, run, Lake};

/// xorshift64*, so a failing seed reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const LONG_A: &str = "'aaaaaaaaaaaaaaaaX'";
const LONG_B: &str = "'aaaaaaaaaaaaaaaaY'";

/// A column: name, SQL type, the values rows take (SQL literals), and the literals a
/// predicate compares it with (of its own type and of others).
struct Column {
    name: &'static str,
    ty: &'static str,
    values: &'static [&'static str],
    literals: &'static [&'static str],
    v3_only: bool,
}

const COLUMNS: &[Column] = &[
    Column {
        name: "b",
        ty: "BOOLEAN",
        values: &["true", "false"],
        literals: &["true", "false", "NULL"],
        v3_only: false,
    },
    Column {
        name: "i",
        ty: "INT",
        values: &["-2147483648", "-1", "0", "1", "2", "7", "100", "2147483647"],
        literals: &[
            "0",
            "1",
            "2",
            "7",
            "-1",
            "2147483647",
            "-2147483648",
            "2.5",
            "7.0",
            "-0.5",
            "3000000000",
            "-3000000000",
            "CAST(2.5 AS DOUBLE)",
            "CAST(7 AS DECIMAL(5,1))",
            "CAST(6.99 AS DECIMAL(5,2))",
            "'7'",
            "1e10",
            "CAST('NaN' AS DOUBLE)",
        ],
        v3_only: false,
    },
    Column {
        name: "l",
        ty: "BIGINT",
        values: &[
            "-9223372036854775808",
            "-1",
            "0",
            "1",
            "5",
            "3000000000",
            "9223372036854775807",
        ],
        literals: &[
            "0",
            "1",
            "5",
            "3000000000",
            "-1",
            "9223372036854775807",
            "2.5",
            "5.0",
            "CAST(4.5 AS DOUBLE)",
            "CAST(3000000000 AS DECIMAL(20,0))",
            "1e19",
            "-1e19",
            "CAST(1 AS INT)",
        ],
        v3_only: false,
    },
    Column {
        name: "f",
        ty: "FLOAT",
        values: &[
            "CAST('NaN' AS FLOAT)",
            "CAST('-0.0' AS FLOAT)",
            "CAST(0.0 AS FLOAT)",
            "CAST(-1.5 AS FLOAT)",
            "CAST(1.5 AS FLOAT)",
            "CAST(1.1 AS FLOAT)",
            "CAST('Infinity' AS FLOAT)",
            "CAST('-Infinity' AS FLOAT)",
        ],
        literals: &[
            "CAST('NaN' AS FLOAT)",
            "CAST('NaN' AS DOUBLE)",
            "0.0",
            "-0.0",
            "CAST(0 AS FLOAT)",
            "1.5",
            "-1.5",
            "1.1",
            "CAST(1.1 AS FLOAT)",
            "CAST('Infinity' AS DOUBLE)",
            "CAST('-Infinity' AS FLOAT)",
            "1",
            "0",
            "CAST(1.5 AS DECIMAL(3,1))",
            "1e39",
        ],
        v3_only: false,
    },
    Column {
        name: "d",
        ty: "DOUBLE",
        values: &[
            "CAST('NaN' AS DOUBLE)",
            "CAST('-0.0' AS DOUBLE)",
            "CAST(0.0 AS DOUBLE)",
            "CAST(-1.5 AS DOUBLE)",
            "CAST(1.5 AS DOUBLE)",
            "CAST(1.1 AS DOUBLE)",
            "CAST('Infinity' AS DOUBLE)",
            "CAST('-Infinity' AS DOUBLE)",
            "CAST(1e300 AS DOUBLE)",
        ],
        literals: &[
            "CAST('NaN' AS DOUBLE)",
            "0.0",
            "-0.0",
            "1.5",
            "-1.5",
            "1.1",
            "1e300",
            "CAST('Infinity' AS DOUBLE)",
            "CAST('-Infinity' AS DOUBLE)",
            "1",
            "0",
            "CAST(1.1 AS FLOAT)",
            "CAST(1.5 AS DECIMAL(3,1))",
            "9223372036854775807",
        ],
        v3_only: false,
    },
    Column {
        name: "dec",
        ty: "DECIMAL(9,2)",
        values: &[
            "-9999999.90",
            "-1.50",
            "0.00",
            "1.50",
            "2.00",
            "12.34",
            "9999999.99",
        ],
        literals: &[
            "1.5",
            "1.50",
            "1.505",
            "2",
            "0",
            "-1.5",
            "12.34",
            "12.345",
            "9999999.99",
            "10000000",
            "CAST(1.5 AS DOUBLE)",
            "CAST(2 AS BIGINT)",
            "CAST('NaN' AS DOUBLE)",
            "CAST(1.5 AS DECIMAL(38,10))",
        ],
        v3_only: false,
    },
    Column {
        name: "dt",
        ty: "DATE",
        values: &[
            "'1900-01-01'",
            "'1969-12-31'",
            "'1970-01-01'",
            "'2024-02-29'",
            "'2024-03-01'",
            "'9999-12-31'",
        ],
        literals: &[
            "DATE '1969-12-31'",
            "DATE '1970-01-01'",
            "DATE '2024-02-29'",
            "DATE '2024-03-01'",
            "DATE '1900-01-01'",
            "TIMESTAMP '2024-02-29 12:00:00'",
            "TIMESTAMP '2024-02-29 00:00:00'",
            "TIMESTAMP '1969-12-31 23:59:59.999999'",
            "'2024-02-29'",
        ],
        v3_only: false,
    },
    Column {
        name: "tm",
        ty: "TIME",
        values: &[
            "'00:00:00'",
            "'12:34:56.789'",
            "'23:59:59.999999'",
            "'12:00:00'",
        ],
        literals: &[
            "TIME '00:00:00'",
            "TIME '12:00:00'",
            "TIME '12:34:56.789'",
            "TIME '23:59:59.999999'",
            "TIME '12:00:00.0000005'",
        ],
        v3_only: false,
    },
    Column {
        name: "ts",
        ty: "TIMESTAMP",
        values: &[
            "'1969-12-31 23:59:59.999999'",
            "'1970-01-01 00:00:00'",
            "'2024-02-29 12:00:00'",
            "'2024-03-01 00:00:00.000001'",
            "'1900-01-01 00:00:00'",
        ],
        literals: &[
            "TIMESTAMP '1970-01-01 00:00:00'",
            "TIMESTAMP '2024-02-29 12:00:00'",
            "TIMESTAMP '1969-12-31 23:59:59.999999'",
            "TIMESTAMP '1969-12-31 23:59:59.9999995'",
            "TIMESTAMP '2024-03-01 00:00:00.0000005'",
            "DATE '2024-03-01'",
            "DATE '1970-01-01'",
            "'2024-02-29 12:00:00'",
        ],
        v3_only: false,
    },
    Column {
        name: "tz",
        ty: "TIMESTAMPTZ",
        values: &[
            "'1969-12-31T23:59:59.999999Z'",
            "'1970-01-01T00:00:00Z'",
            "'2024-02-29T12:00:00Z'",
            "'2024-02-29T23:30:00-05:00'",
        ],
        literals: &[
            "CAST('1970-01-01T00:00:00Z' AS TIMESTAMPTZ)",
            "CAST('2024-02-29T12:00:00Z' AS TIMESTAMPTZ)",
            "CAST('2024-03-01T04:30:00Z' AS TIMESTAMPTZ)",
            "CAST('1969-12-31T23:59:59.999999Z' AS TIMESTAMPTZ)",
            "TIMESTAMP '2024-02-29 12:00:00'",
            "DATE '2024-03-01'",
            "CAST('2024-03-01T04:30:00+05:00' AS TIMESTAMPTZ)",
            "TIMESTAMP '2024-02-29 23:30:00-05:00'",
            "'2024-02-29T12:00:00Z'",
        ],
        v3_only: false,
    },
    Column {
        name: "tn",
        ty: "TIMESTAMP(9)",
        values: &[
            "'1969-12-31 23:59:59.999999999'",
            "'1970-01-01 00:00:00.000000001'",
            "'2024-02-29 12:00:00.000000500'",
            "'2024-02-29 12:00:00'",
        ],
        literals: &[
            "TIMESTAMP '1970-01-01 00:00:00'",
            "TIMESTAMP '1970-01-01 00:00:00.000000001'",
            "TIMESTAMP '2024-02-29 12:00:00.0000005'",
            "TIMESTAMP '2024-02-29 12:00:00.000001'",
            "TIMESTAMP '1969-12-31 23:59:59.999999999'",
            "DATE '2024-02-29'",
        ],
        v3_only: true,
    },
    Column {
        name: "s",
        ty: "STRING",
        values: &[
            "''",
            "'a'",
            "'ab'",
            "'abc'",
            "'b'",
            "'é'",
            "'日本語'",
            LONG_A,
            LONG_B,
            "'aaaaaaaaaaaaaaaa'",
            "'a%b'",
            "'a_b'",
            "'\u{10FFFF}\u{10FFFF}'",
            "'7'",
        ],
        literals: &[
            "''",
            "'a'",
            "'ab'",
            "'abc'",
            "'b'",
            "'é'",
            "'日本語'",
            LONG_A,
            LONG_B,
            "'aaaaaaaaaaaaaaaa'",
            "'aaaaaaaaaaaaaaaaZ'",
            "'aaaaaaaaaaaaaaab'",
            "'a%b'",
            "'\u{10FFFF}'",
            "'7'",
            "7",
        ],
        v3_only: false,
    },
    Column {
        name: "bn",
        ty: "BYTEA",
        values: &[
            "X''",
            "X'00'",
            "X'0102'",
            "X'FF'",
            "X'6161616161616161616161616161616101'",
            "X'6161616161616161616161616161616102'",
            "X'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF'",
        ],
        literals: &[
            "X''",
            "X'00'",
            "X'0102'",
            "X'01'",
            "X'FF'",
            "X'6161616161616161616161616161616101'",
            "X'6161616161616161616161616161616103'",
            "X'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF'",
        ],
        v3_only: false,
    },
    Column {
        name: "u",
        ty: "UUID",
        values: &[
            "'00000000-0000-0000-0000-000000000000'",
            "'550e8400-e29b-41d4-a716-446655440000'",
            "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
        ],
        literals: &[
            "'00000000-0000-0000-0000-000000000000'",
            "'550e8400-e29b-41d4-a716-446655440000'",
            "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
            "'12345678-1234-1234-1234-123456789abc'",
        ],
        v3_only: false,
    },
];

fn columns(v3: bool) -> impl Iterator<Item = &'static Column> {
    COLUMNS.iter().filter(move |c| v3 || !c.v3_only)
}

/// `CREATE TABLE ice.ns.<name>` with every column of [`COLUMNS`] (the v3 ones on v3).
async fn create(lake: &Lake, name: &str, version: u8, partitioning: &str) {
    let cols: Vec<String> = columns(version == 3)
        .map(|c| format!("{} {}", c.name, c.ty))
        .collect();
    // merge-on-read deletes from v2 on
    let deletes = if version > 1 {
        ", 'write.delete.mode'='merge-on-read'"
    } else {
        ""
    };
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.{name} (id INT, {}) {partitioning} \
             TBLPROPERTIES ('format-version'='{version}', \
             'write.parquet.row-group-size-bytes'='1', 'write.parquet.page-row-limit'='2'\
             {deletes})",
            cols.join(", ")
        ),
    )
    .await;
}

/// Insert `n` rows with ids from `*next_id` on (NULL in a fifth of the cells).
async fn insert(lake: &Lake, name: &str, v3: bool, rng: &mut Rng, next_id: &mut i32, n: usize) {
    let mut rows = vec![];
    for _ in 0..n {
        *next_id += 1;
        let mut cells = vec![next_id.to_string()];
        for c in columns(v3) {
            cells.push(if rng.chance(20) {
                "NULL".to_string()
            } else {
                rng.pick(c.values).to_string()
            });
        }
        rows.push(format!("({})", cells.join(", ")));
    }
    ok(
        &lake.ctx,
        &format!("INSERT INTO ice.ns.{name} VALUES {}", rows.join(", ")),
    )
    .await;
}

/// What a generated predicate may name besides the table columns.
struct Extras {
    v3: bool,
    /// `_partition` fields (name, is an int).
    partition: Vec<(String, bool)>,
    metadata: bool,
}

fn column<'a>(rng: &mut Rng, extras: &Extras) -> &'a Column {
    let cols: Vec<&Column> = columns(extras.v3).collect();
    cols[rng.below(cols.len())]
}

fn lit(rng: &mut Rng, c: &Column) -> String {
    rng.pick(c.literals).to_string()
}

fn leaf(rng: &mut Rng, extras: &Extras) -> String {
    let c = column(rng, extras);
    let n = c.name;
    const OPS: &[&str] = &[
        "=",
        "<>",
        "<",
        "<=",
        ">",
        ">=",
        "IS DISTINCT FROM",
        "IS NOT DISTINCT FROM",
    ];
    match rng.below(16) {
        0..=4 => format!("{n} {} {}", rng.pick(OPS), lit(rng, c)),
        5 => format!("{} {} {n}", lit(rng, c), rng.pick(OPS)),
        6 => {
            let k = 1 + rng.below(4);
            let mut items: Vec<String> = (0..k).map(|_| lit(rng, c)).collect();
            if rng.chance(25) {
                items.push("NULL".into());
            }
            let not = if rng.chance(40) { "NOT " } else { "" };
            format!("{n} {not}IN ({})", items.join(", "))
        }
        7 => format!("{n} IS {}NULL", if rng.chance(50) { "NOT " } else { "" }),
        8 => {
            let not = if rng.chance(30) { "NOT " } else { "" };
            format!("{n} {not}BETWEEN {} AND {}", lit(rng, c), lit(rng, c))
        }
        9 => {
            let f = [&COLUMNS[3], &COLUMNS[4]][rng.below(2)];
            match rng.below(3) {
                0 => format!("isnan({})", f.name),
                1 => format!("NOT isnan({})", f.name),
                _ => format!("isnan({}) = false", f.name),
            }
        }
        10 => {
            let p = rng.pick(&[
                "'a%'",
                "'ab%'",
                "'aaaaaaaaaaaaaaaa%'",
                "'aaaaaaaaaaaaaaaaX%'",
                "'%b'",
                "'a_b'",
                "'a\\%b'",
                "'日%'",
                "'\u{10FFFF}%'",
                "''",
                "'%'",
                "'a%b%'",
                "'é'",
                "'A%'",
            ]);
            let op = rng.pick(&["LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"]);
            format!("s {op} {p}")
        }
        11 => {
            let p = rng.pick(&[
                "''",
                "'a'",
                "'aaaaaaaaaaaaaaaa'",
                "'aaaaaaaaaaaaaaaaY'",
                "'日'",
            ]);
            format!("starts_with(s, {p})")
        }
        12 => cast_leaf(rng),
        13 => two_columns(rng, extras),
        14 => match rng.below(5) {
            0 => "b".into(),
            1 => "NOT b".into(),
            2 => "b IS NOT TRUE".into(),
            3 => "b IS UNKNOWN".into(),
            _ => "b = (i > 0)".into(),
        },
        _ => metadata_leaf(rng, extras).unwrap_or_else(|| format!("{n} IS NULL")),
    }
}

/// A cast of a column or arithmetic on it, compared with a literal.
fn cast_leaf(rng: &mut Rng) -> String {
    rng.pick(&[
        "CAST(i AS BIGINT) > 1",
        "CAST(i AS DOUBLE) < 2.5",
        "CAST(i AS DECIMAL(20,2)) >= 1.50",
        "CAST(l AS DOUBLE) = 3000000000",
        "CAST(f AS DOUBLE) > 1.1",
        "CAST(f AS DOUBLE) = CAST(1.1 AS FLOAT)",
        "CAST(d AS FLOAT) = 1.1",
        "CAST(d AS FLOAT) >= CAST('Infinity' AS FLOAT)",
        "CAST(dec AS DOUBLE) <= 1.5",
        "CAST(dec AS DECIMAL(12,4)) = 1.5",
        "CAST(dec AS INT) = 1",
        "CAST(dt AS TIMESTAMP) < TIMESTAMP '2024-02-29 12:00:00'",
        "CAST(ts AS DATE) = DATE '2024-02-29'",
        "CAST(ts AS DATE) < DATE '1970-01-01'",
        "CAST(tz AS DATE) = DATE '2024-03-01'",
        "CAST(s AS BYTEA) = X'61'",
        "CAST(i AS VARCHAR) = '7'",
        "CAST(b AS INT) = 1",
        "i + 1 > 2",
        "i % 3 = 1",
        "l - 1 < 0",
        "-i < 0",
        "-i >= 1",
        "-l > 5",
        "-d < 0",
        "-f >= 0",
        "-dec <= 0",
        "CAST(i AS BOOLEAN) = false",
        "NOT CAST(d AS BOOLEAN)",
        "CAST(dec AS BOOLEAN) IS NOT TRUE",
        "d * 2 > 3",
        "f + 0 >= 0",
        "abs(d) >= 1.5",
        "length(s) > 16",
        "upper(s) = 'AB'",
        "substr(s, 1, 2) = 'aa'",
        "date_trunc('day', ts) = TIMESTAMP '2024-02-29 00:00:00'",
        "extract(year FROM dt) = 2024",
        "coalesce(i, 0) = 0",
        "CASE WHEN i > 0 THEN true ELSE false END",
    ])
    .to_string()
}

fn two_columns(rng: &mut Rng, extras: &Extras) -> String {
    let mut pairs = vec![
        "i < l",
        "i = l",
        "f = d",
        "f < d",
        "d >= f",
        "CAST(dt AS TIMESTAMP) < ts",
        "dt = ts",
        "i > dec",
        "s = CAST(i AS VARCHAR)",
        "i = i",
        "d <> d",
        "s < s",
    ];
    if extras.v3 {
        pairs.extend(["ts = tn", "tn > ts"]);
    }
    rng.pick(&pairs).to_string()
}

fn metadata_leaf(rng: &mut Rng, extras: &Extras) -> Option<String> {
    if !extras.metadata {
        return None;
    }
    Some(match rng.below(4) {
        0 => format!("_spec_id = {}", rng.below(2)),
        1 => format!("_pos {} {}", rng.pick(&["<", ">=", "="]), rng.below(4)),
        2 => "_file LIKE '%.parquet'".to_string(),
        _ if extras.partition.is_empty() => "_pos = 0".to_string(),
        _ => {
            let (name, int) = &extras.partition[rng.below(extras.partition.len())];
            if *int && rng.chance(70) {
                let op = rng.pick(&["=", "<>", "<", ">="]);
                format!("_partition.{name} {op} {}", rng.below(5))
            } else {
                let not = if rng.chance(50) { "NOT " } else { "" };
                format!("_partition.{name} IS {not}NULL")
            }
        }
    })
}

fn predicate(rng: &mut Rng, extras: &Extras, depth: u32) -> String {
    if depth == 0 || rng.chance(40) {
        return leaf(rng, extras);
    }
    match rng.below(4) {
        0 => format!("NOT ({})", predicate(rng, extras, depth - 1)),
        1 => format!(
            "({}) OR ({})",
            predicate(rng, extras, depth - 1),
            predicate(rng, extras, depth - 1)
        ),
        _ => format!(
            "({}) AND ({})",
            predicate(rng, extras, depth - 1),
            predicate(rng, extras, depth - 1)
        ),
    }
}

/// The sorted ids a query answers, or its error.
async fn ids(lake: &Lake, sql: &str) -> Result<Vec<i32>, String> {
    let batches: Vec<RecordBatch> = run(&lake.ctx, sql).await?;
    let mut out = vec![];
    for b in &batches {
        let col = b.column(0).as_primitive::<Int32Type>();
        out.extend((0..col.len()).map(|i| col.value(i)));
    }
    out.sort_unstable();
    Ok(out)
}

/// What plain DataFusion over the Parquet files answers otherwise: metadata columns it
/// has not, and floats, whose NaN and -0.0 rows its page and row-group pruning skips
/// (icefloe does not prune by float bounds where a NaN may be, nor by a zero bound).
const RAW_UNLIKE: [&str; 6] = ["_file", "_pos", "_spec_id", "_partition", "f", "d"];

/// Whether SQL text `p` names any of `names` (as a whole word).
fn names_any(p: &str, names: &[&str]) -> bool {
    p.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| names.contains(&word))
}

/// Whether an error is raised by some values only (so which batches a scan reads decides).
fn data_dependent(error: &str) -> bool {
    [
        "Cast error",
        "Overflow",
        "overflow",
        "Divide by zero",
        "exceeds the representable",
    ]
    .iter()
    .any(|e| error.contains(e))
}

/// The one number a query answers.
async fn number(lake: &Lake, sql: &str) -> Result<i64, String> {
    let batches = run(&lake.ctx, sql).await?;
    let b = batches.iter().find(|b| b.num_rows() > 0).ok_or("no row")?;
    Ok(b.column(0)
        .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
        .value(0))
}

/// Hold `ice.ns.<name>`'s unfiltered rows (metadata columns included) as the in-memory
/// table `<name>_rows`; the `_partition` fields the table has.
async fn hold_rows(lake: &Lake, name: &str, partitioned: bool) -> Vec<(String, bool)> {
    let partition = if partitioned { ", _partition" } else { "" };
    let sql = format!("SELECT *, _file, _pos, _spec_id{partition} FROM ice.ns.{name}");
    let batches = run(&lake.ctx, &sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let schema = batches
        .first()
        .map(|b| b.schema())
        .expect("a batch of rows");
    let fields = match schema.field_with_name("_partition").map(|f| f.data_type()) {
        Ok(DataType::Struct(fields)) => fields
            .iter()
            .map(|f| (f.name().clone(), matches!(f.data_type(), DataType::Int32)))
            .collect(),
        _ => vec![],
    };
    let mem = MemTable::try_new(schema, vec![batches]).expect("memtable");
    lake.ctx
        .register_table(format!("{name}_rows"), Arc::new(mem))
        .expect("register");
    fields
}

/// Run [`cases`] seeded predicates on `ice.ns.<name>` and on its held rows (and on
/// `raw`, a plain Parquet table of its data files, when given); every answer must be the
/// same rows, or both an error. Returns how many answered rows (not an error).
async fn differential(
    lake: &Lake,
    name: &str,
    extras: &Extras,
    raw: Option<&str>,
    seed: u64,
) -> usize {
    let seed = seed ^ extra_seed();
    let mut rng = Rng(seed);
    let mut answered = 0;
    let mut failures = vec![];
    for case in 0..cases() {
        let p = predicate(&mut rng, extras, 3);
        // every other predicate also filters rows while Parquet decodes them
        let pushdown = case % 2 == 1;
        let set = format!("SET datafusion.execution.parquet.pushdown_filters = {pushdown}");
        ok(&lake.ctx, &set).await;
        let zone = ["+00:00", "+05:00", "America/New_York"][case % 3];
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        let ours = ids(lake, &format!("SELECT id FROM ice.ns.{name} WHERE {p}")).await;
        let want = ids(lake, &format!("SELECT id FROM {name}_rows WHERE {p}")).await;
        let same = match (&ours, &want) {
            (Ok(a), Ok(b)) => a == b,
            (Err(_), Err(_)) => true,
            // an error some rows raise (a string cast to a number, an overflow) depends
            // on the rows a batch holds when DataFusion evaluates the filter
            (Err(e), Ok(_)) | (Ok(_), Err(e)) => data_dependent(e),
        };
        if !same {
            failures.push(format!(
                "{name} case {case} (seed {seed:#x}, pushdown {pushdown}, zone {zone}): WHERE {p}\n  \
                 icefloe: {ours:?}\n  rows:    {want:?}"
            ));
        }
        if let (Some(raw), false) = (raw, names_any(&p, &RAW_UNLIKE)) {
            let plain = ids(lake, &format!("SELECT id FROM {raw} WHERE {p}")).await;
            if let (Ok(a), Ok(b)) = (&ours, &plain) {
                if a != b {
                    failures.push(format!(
                        "{name} case {case}: WHERE {p}\n  icefloe: {a:?}\n  parquet: {b:?}"
                    ));
                }
            }
        }
        // a count may be answered from the planned files' row counts
        if case % 2 == 0 {
            let count = |t: String| {
                let sql = format!("SELECT count(*) FROM {t} WHERE {p}");
                async move { number(lake, &sql).await }
            };
            let ours = count(format!("ice.ns.{name}")).await;
            let want = count(format!("{name}_rows")).await;
            if ours.is_ok() && want.is_ok() && ours != want {
                failures.push(format!(
                    "{name} case {case}: SELECT count(*) … WHERE {p}\n  icefloe: {ours:?}\n  rows:    {want:?}"
                ));
            }
        }
        answered += usize::from(ours.is_ok());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    answered
}

/// A table of every type in [`COLUMNS`], filled by four inserts of 15 rows.
async fn filled(lake: &Lake, name: &str, version: u8, partitioning: &str, seed: u64) {
    create(lake, name, version, partitioning).await;
    let v3 = version == 3;
    let mut rng = Rng(seed);
    let mut next_id = 0;
    for _ in 0..4 {
        insert(lake, name, v3, &mut rng, &mut next_id, 15).await;
    }
}

/// Predicates per table: 40, or `ICEFLOE_FILTER_CASES` (longer runs, with
/// `ICEFLOE_FILTER_SEED` to vary the predicates; a failure names its seed).
fn cases() -> usize {
    std::env::var("ICEFLOE_FILTER_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

/// `ICEFLOE_FILTER_SEED`, mixed into every predicate seed (0 when unset).
fn extra_seed() -> u64 {
    std::env::var("ICEFLOE_FILTER_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_select_the_same_rows_with_and_without_pruning() {
    let lake = lake().await;
    // unpartitioned, v2: file, row-group and page pruning by column metrics; the same
    // data files read as plain Parquet agree
    filled(&lake, "flat", 2, "", 0x5EED_0001).await;
    let data = lake.warehouse.join("ns").join("flat").join("data");
    let data = data.to_string_lossy();
    lake.ctx
        .register_parquet("flat_parquet", &*data, ParquetReadOptions::default())
        .await
        .expect("parquet");
    hold_rows(&lake, "flat", false).await;
    let extras = Extras {
        v3: false,
        partition: vec![],
        metadata: true,
    };
    let answered = differential(&lake, "flat", &extras, Some("flat_parquet"), 0xF1A7).await;
    assert!(answered > cases() / 2, "{answered} of {} answered", cases());

    // partitioned by every transform, v2 and v3
    let parts = [
        (
            "parts_v1",
            1,
            "PARTITIONED BY (bucket(3, l), truncate(2, s), years(ts), i, days(tz))",
        ),
        (
            "parts_v2",
            2,
            "PARTITIONED BY (bucket(4, i), truncate(3, s), days(ts), f, b, months(dt), \
             hours(tz), bucket(3, u), truncate(10, dec), truncate(2, bn), l)",
        ),
        (
            "parts_v3",
            3,
            "PARTITIONED BY (years(tn), d, truncate(4, i), bucket(5, s), dt, tz, tm, dec)",
        ),
    ];
    for (i, (name, version, spec)) in parts.into_iter().enumerate() {
        filled(&lake, name, version, spec, 0x5EED_0100 + i as u64).await;
        let partition = hold_rows(&lake, name, true).await;
        let extras = Extras {
            v3: version == 3,
            partition,
            metadata: true,
        };
        differential(&lake, name, &extras, None, 0x9A27 + i as u64).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_select_the_same_rows_with_deletes_and_two_specs() {
    let lake = lake().await;
    // merge-on-read deletes: position deletes (v2), deletion vectors (v3)
    for (i, (name, v3)) in [("mor_v2", false), ("dv_v3", true)].into_iter().enumerate() {
        filled(
            &lake,
            name,
            if v3 { 3 } else { 2 },
            "PARTITIONED BY (bucket(2, i), truncate(1, s))",
            0x5EED_0200 + i as u64,
        )
        .await;
        ok(
            &lake.ctx,
            &format!("DELETE FROM ice.ns.{name} WHERE id % 3 = 0 OR d > 1.4"),
        )
        .await;
        let mut rng = Rng(0xADD + i as u64);
        let mut next_id = 1000;
        insert(&lake, name, v3, &mut rng, &mut next_id, 20).await;
        ok(
            &lake.ctx,
            &format!("DELETE FROM ice.ns.{name} WHERE s = 'ab' OR i IS NULL"),
        )
        .await;
        let partition = hold_rows(&lake, name, true).await;
        let extras = Extras {
            v3,
            partition,
            metadata: true,
        };
        differential(&lake, name, &extras, None, 0xDE1 + i as u64).await;
    }
    // files of two specs: bucket(4, i) and days(ts), then truncate(2, s) and months(dt)
    filled(
        &lake,
        "evolved",
        2,
        "PARTITIONED BY (bucket(4, i), days(ts))",
        0x5EED_0300,
    )
    .await;
    for change in [
        "DROP PARTITION FIELD bucket(4, i)",
        "DROP PARTITION FIELD days(ts)",
        "ADD PARTITION FIELD truncate(2, s)",
        "ADD PARTITION FIELD months(dt)",
    ] {
        ok(&lake.ctx, &format!("ALTER TABLE ice.ns.evolved {change}")).await;
    }
    let mut rng = Rng(0xE0);
    let mut next_id = 2000;
    for _ in 0..2 {
        insert(&lake, "evolved", false, &mut rng, &mut next_id, 30).await;
    }
    ok(&lake.ctx, "DELETE FROM ice.ns.evolved WHERE id % 4 = 1").await;
    let partition = hold_rows(&lake, "evolved", true).await;
    let extras = Extras {
        v3: false,
        partition,
        metadata: true,
    };
    differential(&lake, "evolved", &extras, None, 0xE7).await;
}

/// DataFusion's row-group pruning takes `-c op v` as `c op' -v` and `CAST(c AS BOOLEAN)`
/// as monotonic: neither is (`-c` of an array wraps, so `-(-2147483648)` is itself and
/// below 0; the cast is false at 0 between two true bounds), so row groups holding
/// matching rows were skipped: `-i < 0` lost the rows of `i = -2147483648` from row
/// groups or pages of that value alone. Each row is a page of its own here; every row that
/// matches is read, without deletes and under position deletes (v2) and deletion vectors
/// (v3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negations_and_casts_to_boolean_keep_their_row_groups() {
    let lake = lake().await;
    let cases: [(&str, &[i32]); 6] = [
        // each with a test DataFusion 55's filter statistics do not analyse: they fail
        // to plan `-i` over the bound -2147483648 ("Overflow happened on: - -2147483648")
        ("-i < 0 AND abs(id) > 0", &[1, 4, 5, 6, 7]),
        ("-l < 0 AND abs(id) > 0", &[1, 4, 5, 6, 7]),
        ("-i >= -1 AND abs(id) > 0 AND i < 5", &[2, 3, 4]),
        ("CAST(i AS BOOLEAN) = false", &[3]),
        ("NOT CAST(l AS BOOLEAN)", &[3]),
        ("TRY_CAST(i AS BOOLEAN) IS NOT TRUE", &[3]),
    ];
    let mut failures = vec![];
    for version in [2, 3] {
        let t = format!("ice.ns.t{version}");
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE {t} (id INT, i INT, l BIGINT) TBLPROPERTIES \
                 ('format-version'='{version}', 'write.delete.mode'='merge-on-read', \
                 'write.parquet.page-row-limit'='1')"
            ),
        )
        .await;
        for rows in [
            "(1, -2147483648, -9223372036854775808), (5, 5, 5)",
            "(2, -1, -1), (3, 0, 0), (4, 1, 1)",
            "(6, 6, 6), (7, 7, 7)",
        ] {
            ok(&lake.ctx, &format!("INSERT INTO {t} VALUES {rows}")).await;
        }
        for deleted in [None, Some(7)] {
            if let Some(id) = deleted {
                ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = {id}")).await;
            }
            for (filter, want) in cases {
                let want: Vec<i32> = want
                    .iter()
                    .copied()
                    .filter(|&id| Some(id) != deleted)
                    .collect();
                let sql = format!("SELECT id FROM {t} WHERE {filter}");
                let got = ids(&lake, &sql).await;
                if got.as_ref() != Ok(&want) {
                    failures.push(format!(
                        "{sql} ({deleted:?} deleted): {got:?}, not {want:?}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A column of a corpus table and some of its values (as SQL string literals, which
/// DataFusion casts to the column's type).
struct Observed {
    name: String,
    string: bool,
    values: Vec<String>,
}

async fn observed(lake: &Lake, table: &str) -> Vec<Observed> {
    let df = lake.ctx.table(table).await.expect("table");
    let schema = df.schema().as_arrow().clone();
    let mut out = vec![];
    for field in schema.fields() {
        let ty = field.data_type();
        let usable = ty.is_primitive()
            || matches!(
                ty,
                DataType::Boolean
                    | DataType::Utf8
                    | DataType::LargeUtf8
                    | DataType::Utf8View
                    | DataType::Date32
            );
        if !usable {
            continue;
        }
        let name = field.name().clone();
        let sql = format!(
            "SELECT DISTINCT CAST(\"{name}\" AS VARCHAR) FROM {table} \
             WHERE \"{name}\" IS NOT NULL ORDER BY 1 LIMIT 12"
        );
        let batches = run(&lake.ctx, &sql).await.expect("values");
        let mut values = vec![];
        for b in &batches {
            let col = datafusion::arrow::compute::cast(b.column(0), &DataType::Utf8).expect("utf8");
            let col = col.as_string::<i32>();
            values.extend(
                col.iter()
                    .flatten()
                    .map(|v| format!("'{}'", v.replace('\'', "''"))),
            );
        }
        if values.is_empty() {
            values.push("NULL".into());
        }
        let string = matches!(
            ty,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        );
        out.push(Observed {
            name: format!("\"{name}\""),
            string,
            values,
        });
    }
    out
}

fn observed_leaf(rng: &mut Rng, cols: &[Observed]) -> String {
    let c = &cols[rng.below(cols.len())];
    let n = &c.name;
    let v = |rng: &mut Rng| c.values[rng.below(c.values.len())].clone();
    match rng.below(8) {
        0..=2 => {
            let op = rng.pick(&["=", "<>", "<", "<=", ">", ">=", "IS DISTINCT FROM"]);
            format!("{n} {op} {}", v(rng))
        }
        3 => {
            let items: Vec<String> = (0..1 + rng.below(3)).map(|_| v(rng)).collect();
            let not = if rng.chance(40) { "NOT " } else { "" };
            format!("{n} {not}IN ({})", items.join(", "))
        }
        4 => format!("{n} IS {}NULL", if rng.chance(50) { "NOT " } else { "" }),
        5 => format!("{n} BETWEEN {} AND {}", v(rng), v(rng)),
        6 if c.string => {
            let value = v(rng);
            let inner = value.trim_matches('\'');
            let prefix: String = inner.chars().take(1 + rng.below(3)).collect();
            let prefix = prefix.replace(['%', '_', '\\'], "");
            format!("{n} LIKE '{prefix}%'")
        }
        _ => format!("{n} = {}", v(rng)),
    }
}

fn observed_predicate(rng: &mut Rng, cols: &[Observed], depth: u32) -> String {
    if depth == 0 || rng.chance(40) {
        return observed_leaf(rng, cols);
    }
    let (a, b) = (
        observed_predicate(rng, cols, depth - 1),
        observed_predicate(rng, cols, depth - 1),
    );
    match rng.below(4) {
        0 => format!("NOT ({a})"),
        1 => format!("({a}) OR ({b})"),
        _ => format!("({a}) AND ({b})"),
    }
}

/// Every row of a query, formatted, sorted.
async fn row_texts(lake: &Lake, sql: &str) -> Result<Vec<String>, String> {
    use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
    let batches = run(&lake.ctx, sql).await?;
    let mut rows = vec![];
    let options = FormatOptions::default().with_null("NULL");
    for b in &batches {
        let formatters: Vec<ArrayFormatter> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).expect("formatter"))
            .collect();
        for r in 0..b.num_rows() {
            let cells: Vec<String> = formatters.iter().map(|f| f.value(r).to_string()).collect();
            rows.push(cells.join("|"));
        }
    }
    rows.sort();
    Ok(rows)
}

/// The committed corpus tables (Spark- and PyIceberg-written: identity and day partitions,
/// position and equality deletes, deletion vectors, nested columns, uuid and time): random
/// predicates over values the tables hold select the same rows through icefloe as over
/// the tables' rows held in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_on_engine_written_tables_select_the_same_rows() {
    let lake = lake().await;
    // the committed copies, or every table of `ICEFLOE_CORPUS` (the shared corpus)
    let corpus = match std::env::var("ICEFLOE_CORPUS") {
        Ok(dir) => std::path::PathBuf::from(dir),
        Err(_) => crate::fixtures::testdata("corpus"),
    };
    let mut tables: Vec<String> = std::fs::read_dir(&corpus)
        .expect("corpus")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("metadata").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    tables.sort();
    assert!(!tables.is_empty(), "no table in {}", corpus.display());
    let mut failures = vec![];
    for (i, table) in tables.iter().enumerate() {
        let path = corpus.join(table);
        let provider = icefloe::IcebergTableProvider::open(path.to_str().expect("path"))
            .await
            .expect("open");
        lake.ctx
            .register_table(table.as_str(), Arc::new(provider))
            .expect("register");
        let batches = run(&lake.ctx, &format!("SELECT * FROM {table}"))
            .await
            .expect("rows");
        let schema = batches.first().map(|b| b.schema()).expect("a batch");
        let mem = MemTable::try_new(schema, vec![batches]).expect("memtable");
        let held = format!("{table}_rows");
        lake.ctx
            .register_table(held.as_str(), Arc::new(mem))
            .expect("register");
        let cols = observed(&lake, &held).await;
        let seed = (0xC0_0000 + i as u64) ^ extra_seed();
        let mut rng = Rng(seed);
        let mut answered = 0;
        for case in 0..cases() {
            let p = observed_predicate(&mut rng, &cols, 3);
            let ours = row_texts(&lake, &format!("SELECT * FROM {table} WHERE {p}")).await;
            let want = row_texts(&lake, &format!("SELECT * FROM {held} WHERE {p}")).await;
            let same = match (&ours, &want) {
                (Ok(a), Ok(b)) => a == b,
                (Err(_), Err(_)) => true,
                (Err(e), Ok(_)) | (Ok(_), Err(e)) => data_dependent(e),
            };
            if !same {
                failures.push(format!(
                    "{table} case {case} (seed {seed:#x}): WHERE {p}\n  icefloe: {ours:?}\n  rows:    {want:?}"
                ));
            }
            answered += usize::from(ours.as_ref().is_ok_and(|rows| !rows.is_empty()));
        }
        assert!(
            answered > cases() / 4,
            "{table}: {answered} of {} found rows",
            cases()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
