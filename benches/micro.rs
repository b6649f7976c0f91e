//! Criterion micro-benchmarks of the hot loops (issue 7 item 5).
//!
//! ```text
//! cargo bench --bench micro                 # all
//! cargo bench --bench micro -- manifest     # one group (criterion's filter)
//! ```
//!
//! * `metrics_eval`: `InclusiveMetricsEvaluator` over 100,000 data files
//!   (`id < X` and `p = 17 AND v = 'k'`), per file.
//! * `manifest_decode`: a 100-entry manifest with metrics (as the planning bench writes
//!   them): Avro container decode only (`apache_avro::Reader` to `Value`s) vs arrow-rs's
//!   columnar Avro reader alone (`arrow_avro::reader::Reader` to one Arrow `RecordBatch`)
//!   vs icefloe's full `parse_manifest` (that reader, then `ManifestEntry`s; issue 18),
//!   per entry; also arrow-avro skipping the metric maps (a reader schema without them)
//!   and `parse_manifest_keeping` with no column's metrics.
//! * `transforms`: bucket[16] on longs and strings, truncate[10] on strings, day on
//!   timestamps, per value.
//! * `position_deletes`: 100,000 deleted positions of a 1,000,000-row file to a Parquet
//!   `RowSelection` (`delete::row_selection`).
//! * `deletion_vector`: decoding a `deletion-vector-v1` blob of 100,000 positions.
//! * `equality_probe`: 1,000,000 data keys probed against 100,000 delete keys with
//!   `delete::EqualityDeleteKeys` (what `EqualityDeleteExec` runs), for a `long` key
//!   (hashed as i64) and a string key (Arrow row format).

mod common;

use std::sync::Arc;

use common::{schema, spec};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use datafusion::arrow::array::{Array, ArrayRef, Int32Array, Int64Array, StringArray};
use datafusion::arrow::datatypes::{Field, Schema as ArrowSchema};
use icefloe::delete::deletion_vector::{deserialize_deletion_vector, serialize_deletion_vector};
use icefloe::delete::{row_selection, EqualityDeleteKeys, GLOBAL_SCOPE};
use icefloe::eval::InclusiveMetricsEvaluator;
use icefloe::expr::{BinaryOp, Binder, Predicate};
use icefloe::spec::{DataContentType, DataFile, Literal, ManifestContent, Transform};
use icefloe::write::bounds::literal_to_bytes;
use icefloe::write::{empty_data_file, ManifestWriter, NewEntry};
use roaring::RoaringTreemap;

fn data_file(n: i64) -> DataFile {
    let p = (n / 1000) as i32;
    let mut f = empty_data_file(
        &format!("file:///data/p={p}/{n:08}.parquet"),
        DataContentType::Data,
    );
    f.partition = vec![Some(Literal::Int(p))];
    f.record_count = 1000;
    f.file_size_in_bytes = 4_000_000;
    for id in 1..=3 {
        f.column_sizes.insert(id, 1_000_000);
        f.value_counts.insert(id, 1000);
        f.null_value_counts.insert(id, 0);
    }
    f.lower_bounds
        .insert(1, literal_to_bytes(&Literal::Long(n * 1000)));
    f.upper_bounds
        .insert(1, literal_to_bytes(&Literal::Long(n * 1000 + 999)));
    f.lower_bounds.insert(2, literal_to_bytes(&Literal::Int(p)));
    f.upper_bounds.insert(2, literal_to_bytes(&Literal::Int(p)));
    f.lower_bounds.insert(3, format!("a{n}").into_bytes());
    f.upper_bounds.insert(3, format!("z{n}").into_bytes());
    f
}

fn metrics_eval(c: &mut Criterion) {
    let schema = schema();
    let files: Vec<DataFile> = (0..100_000).map(data_file).collect();
    let mut g = c.benchmark_group("metrics_eval");
    g.throughput(Throughput::Elements(files.len() as u64));
    let cases =
        [
            (
                "id_lt",
                Predicate::col_binary(BinaryOp::Lt, "id", Literal::Long(50_000_000)),
            ),
            (
                "p_eq_and_v_eq",
                Predicate::col_binary(BinaryOp::Eq, "p", Literal::Int(17)).and(
                    Predicate::col_binary(BinaryOp::Eq, "v", Literal::String("k".into())),
                ),
            ),
        ];
    for (name, pred) in cases {
        let Ok(bound) = Binder::new(&schema).bind(&pred) else {
            continue;
        };
        let eval = InclusiveMetricsEvaluator::new(&bound);
        g.bench_function(format!("{name}/100k_files"), |b| {
            b.iter(|| {
                files
                    .iter()
                    .filter(|f| eval.eval(*f).unwrap_or(true))
                    .count()
            })
        });
    }
    g.finish();
}

fn manifest_decode(c: &mut Criterion) {
    let schema = schema();
    let spec = spec();
    let Ok(mut w) = ManifestWriter::new(&[&schema], &spec, ManifestContent::Data, 1, 1) else {
        return;
    };
    for n in 0..100 {
        if w.add(&NewEntry::added(data_file(n))).is_err() {
            return;
        }
    }
    let Ok((bytes, manifest)) = w.finish("m.avro") else {
        return;
    };
    let mut g = c.benchmark_group("manifest_decode");
    g.throughput(Throughput::Elements(100));
    g.bench_function("avro_reader_values/100_entries", |b| {
        b.iter(|| {
            apache_avro::Reader::new(&bytes[..])
                .map(|r| r.filter_map(Result::ok).count())
                .unwrap_or(0)
        })
    });
    // The same file decoded column-wise into Arrow arrays (no per-entry Value tree).
    let columnar = || -> usize {
        arrow_avro::reader::ReaderBuilder::new()
            .with_batch_size(8192)
            .build(std::io::Cursor::new(&bytes[..]))
            .map(|r| r.filter_map(Result::ok).map(|b| b.num_rows()).sum())
            .unwrap_or(0)
    };
    if columnar() != 100 {
        eprintln!("arrow-avro did not decode the 100 entries; skipping its case");
    } else {
        g.bench_function("arrow_avro_record_batch/100_entries", |b| b.iter(columnar));
    }
    // The same reader given a reader schema without the data files' six metric maps
    // (what a plan keeping no column's metrics could ask of it): they are skipped, not
    // decoded into arrays, at the cost of resolving a second schema per file.
    if let Some(reader_schema) = without_metric_maps(&bytes) {
        let skipping = || -> usize {
            arrow_avro::reader::ReaderBuilder::new()
                .with_batch_size(8192)
                .with_reader_schema(arrow_avro::schema::AvroSchema::new(reader_schema.clone()))
                .build(std::io::Cursor::new(&bytes[..]))
                .map(|r| r.filter_map(Result::ok).map(|b| b.num_rows()).sum())
                .unwrap_or(0)
        };
        if skipping() != 100 {
            eprintln!(
                "arrow-avro did not decode the 100 entries skipping metrics; skipping its case"
            );
        } else {
            g.bench_function("arrow_avro_skipping_metrics/100_entries", |b| {
                b.iter(skipping)
            });
        }
    }
    g.bench_function("parse_manifest/100_entries", |b| {
        b.iter(|| {
            icefloe::spec::manifest::parse_manifest(&bytes, "m.avro", &manifest, &spec, &[&schema])
                .map(|e| e.len())
                .unwrap_or(0)
        })
    });
    // Keeping no column's metrics on the data files (`TableScan::with_column_stats`).
    let none = icefloe::spec::ColumnStats::none();
    g.bench_function("parse_manifest_no_metrics/100_entries", |b| {
        b.iter(|| {
            icefloe::spec::manifest::parse_manifest_keeping(
                &bytes,
                "m.avro",
                &manifest,
                &spec,
                &[&schema],
                &none,
            )
            .map(|e| e.len())
            .unwrap_or(0)
        })
    });
    g.finish();
}

/// The writer schema of the Avro file `bytes` without the `data_file` record's metric
/// maps (fields 108-110, 125, 128, 137), as JSON; `None` if it cannot be read.
fn without_metric_maps(bytes: &[u8]) -> Option<String> {
    const METRICS: [&str; 6] = [
        "column_sizes",
        "value_counts",
        "null_value_counts",
        "nan_value_counts",
        "lower_bounds",
        "upper_bounds",
    ];
    let header = arrow_avro::reader::read_header_info(bytes).ok()?;
    let json = header.writer_schema().ok()?.json_string;
    let mut schema: serde_json::Value = serde_json::from_str(&json).ok()?;
    let data_file = schema
        .get_mut("fields")?
        .as_array_mut()?
        .iter_mut()
        .find(|f| f.get("name").and_then(|n| n.as_str()) == Some("data_file"))?;
    let fields = data_file
        .get_mut("type")?
        .get_mut("fields")?
        .as_array_mut()?;
    fields.retain(|f| {
        !f.get("name")
            .and_then(|n| n.as_str())
            .is_some_and(|n| METRICS.contains(&n))
    });
    Some(schema.to_string())
}

fn transforms(c: &mut Criterion) {
    let longs: Vec<Literal> = (0..10_000i64).map(|i| Literal::Long(i * 7919)).collect();
    let strings: Vec<Literal> = (0..10_000)
        .map(|i| Literal::String(format!("customer#{i:09}")))
        .collect();
    let ts: Vec<Literal> = (0..10_000i64)
        .map(|i| Literal::Timestamp(i * 3_600_000_000))
        .collect();
    let mut g = c.benchmark_group("transforms");
    g.throughput(Throughput::Elements(10_000));
    let cases: [(&str, Transform, &Vec<Literal>); 4] = [
        ("bucket16_long", Transform::Bucket(16), &longs),
        ("bucket16_string", Transform::Bucket(16), &strings),
        ("truncate10_string", Transform::Truncate(10), &strings),
        ("day_timestamp", Transform::Day, &ts),
    ];
    for (name, t, values) in cases {
        g.bench_function(format!("{name}/10k_values"), |b| {
            b.iter(|| {
                values
                    .iter()
                    .filter(|v| icefloe::transform::apply(&t, v).ok().flatten().is_some())
                    .count()
            })
        });
    }
    g.finish();
}

fn deleted_positions() -> RoaringTreemap {
    // 100,000 positions of a 1,000,000-row file: runs and scattered singles.
    let mut r = RoaringTreemap::new();
    for i in 0..50_000u64 {
        r.insert(i * 17 % 1_000_000);
    }
    r.insert_range(400_000..450_000);
    r
}

fn position_deletes(c: &mut Criterion) {
    let deleted = deleted_positions();
    let mut g = c.benchmark_group("position_deletes");
    g.throughput(Throughput::Elements(deleted.len()));
    g.bench_function("row_selection/1M_rows", |b| {
        b.iter(|| row_selection(&deleted, 1_000_000, "f.parquet").map(|s| s.selects_any()))
    });
    g.finish();
}

fn deletion_vector(c: &mut Criterion) {
    let deleted = deleted_positions();
    let Ok(blob) = serialize_deletion_vector(&deleted) else {
        return;
    };
    let mut g = c.benchmark_group("deletion_vector");
    g.throughput(Throughput::Bytes(blob.len() as u64));
    g.bench_function("decode/100k_positions", |b| {
        b.iter(|| deserialize_deletion_vector(&blob, "dv.puffin").map(|r| r.len()))
    });
    g.finish();
}

fn equality_probe(c: &mut Criterion) {
    let mut g = c.benchmark_group("equality_probe");
    g.throughput(Throughput::Elements(1_000_000));
    // One long key (the integer path) and one string key (the row-format path), each
    // 100k delete keys probed by 1M data rows in 8192-row batches, as EqualityDeleteExec.
    let long_keys: ArrayRef = Arc::new(Int64Array::from_iter_values(
        (0..100_000i64).map(|i| i * 10),
    ));
    let long_data: Vec<ArrayRef> = (0..1_000_000i64)
        .collect::<Vec<_>>()
        .chunks(8192)
        .map(|c| Arc::new(Int64Array::from(c.to_vec())) as ArrayRef)
        .collect();
    let string_keys: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..100_000i64).map(|i| format!("key-{}", i * 10)),
    ));
    let string_data: Vec<ArrayRef> = (0..1_000_000i64)
        .collect::<Vec<_>>()
        .chunks(8192)
        .map(|c| {
            Arc::new(StringArray::from_iter_values(
                c.iter().map(|i| format!("key-{i}")),
            )) as ArrayRef
        })
        .collect();
    for (name, keys, data) in [
        ("int64_key", long_keys, long_data),
        ("string_key", string_keys, string_data),
    ] {
        let schema = Arc::new(ArrowSchema::new(vec![Field::new(
            "k",
            keys.data_type().clone(),
            true,
        )]));
        let Ok(mut index) = EqualityDeleteKeys::new(&schema) else {
            return;
        };
        if index.insert(&[keys], GLOBAL_SCOPE, 2).is_err() {
            return;
        }
        let scopes = Int32Array::from(vec![0; 8192]);
        let seqs = Int64Array::from(vec![1; 8192]);
        g.bench_function(format!("{name}/1M_rows_vs_100k_keys"), |b| {
            b.iter(|| {
                let mut removed = 0;
                for batch in &data {
                    let n = batch.len();
                    removed += index
                        .probe(
                            std::slice::from_ref(batch),
                            &scopes.slice(0, n),
                            &seqs.slice(0, n),
                            0..n,
                        )
                        .map_or(0, |d| d.len());
                }
                removed
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = metrics_eval, manifest_decode, transforms, position_deletes, deletion_vector, equality_probe
}
criterion_main!(benches);
