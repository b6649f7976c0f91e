//! Property test: random rows are grouped into files by a random partition spec, each
//! file gets the metrics an Iceberg writer would write (counts, NaN counts sometimes
//! omitted, bounds over non-null non-NaN values, strings and binary truncated with the
//! upper bound incremented) and a manifest summary of its partition values; a random
//! predicate (NaN, NULL, ±0.0, negatives, multi-byte strings, pre-1970 times, literals
//! of other types) must keep every file holding a matching row, residuals must agree
//! with the predicate on every row, and a true strict projection (or a true
//! `StrictMetricsEvaluator`) must mean every row matches. A failing seed is kept in `REGRESSIONS`.

use std::cmp::Ordering;

use proptest::prelude::*;

use super::Stats;
use crate::eval::{
    evaluate, evaluate_partition, BoundPartitionSpec, InclusiveMetricsEvaluator,
    InclusiveProjection, ManifestEvaluator, ResidualEvaluator, StrictMetricsEvaluator,
    StrictProjection,
};
use crate::expr::{
    compare, rewrite_not, BinaryOp, Binder, BoundPredicate, Predicate, SetOp, UnaryOp,
};
use crate::spec::{
    FieldSummary, Literal, ManifestContent, ManifestFile, NestedField, PartitionField,
    PartitionSpec, PrimitiveType, Schema, Transform, Type,
};
use crate::transform::apply_opt;
use crate::write::bounds::literal_to_bytes;

/// Seeds that once failed (none so far); they run before the random cases.
const REGRESSIONS: &[u64] = &[];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const DAY: i64 = 86_400_000_000;

fn columns() -> Vec<(i32, &'static str, PrimitiveType)> {
    vec![
        (1, "i", PrimitiveType::Int),
        (2, "l", PrimitiveType::Long),
        (3, "d", PrimitiveType::Double),
        (4, "f", PrimitiveType::Float),
        (5, "s", PrimitiveType::String),
        (6, "dt", PrimitiveType::Date),
        (7, "ts", PrimitiveType::Timestamptz),
        (
            8,
            "dec",
            PrimitiveType::Decimal {
                precision: 9,
                scale: 2,
            },
        ),
        (9, "bin", PrimitiveType::Binary),
        (10, "tsn", PrimitiveType::TimestampNs),
    ]
}

fn schema() -> Schema {
    Schema::new(
        0,
        columns()
            .into_iter()
            .map(|(id, n, t)| NestedField::optional(id, n, Type::Primitive(t)))
            .collect(),
    )
}

const DOUBLES: &[f64] = &[
    -2.5,
    -1.0,
    -0.0,
    0.0,
    0.5,
    1.0,
    3.0,
    1e10,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];
const CHARS: &[&str] = &["a", "b", "z", "é", "😀", "\u{10FFFF}", "A", "ab"];
const BYTES: &[u8] = &[0x00, 0x01, 0x7f, 0x80, 0xff];

fn value(rng: &mut Rng, ty: &PrimitiveType) -> Literal {
    match ty {
        PrimitiveType::Int => Literal::Int(if rng.chance(5) {
            *rng.pick(&[i32::MIN, i32::MAX])
        } else {
            rng.range(-25, 25) as i32
        }),
        PrimitiveType::Long => Literal::Long(rng.range(-25, 25) * 1_000_000_007),
        PrimitiveType::Double => Literal::Double(*rng.pick(DOUBLES)),
        PrimitiveType::Float => Literal::Float(*rng.pick(DOUBLES) as f32),
        PrimitiveType::String => {
            let n = rng.below(5);
            Literal::String((0..n).map(|_| *rng.pick(CHARS)).collect())
        }
        PrimitiveType::Date => Literal::Date(rng.range(-800, 800) as i32),
        PrimitiveType::Timestamptz => Literal::Timestamptz(
            rng.range(-800, 800) * DAY + rng.range(-3, 3) * 3_600_000_000 + rng.range(-1, 1),
        ),
        PrimitiveType::TimestampNs => Literal::TimestampNs(
            (rng.range(-800, 800) * DAY + rng.range(-3, 3) * 3_600_000_000) * 1000
                + rng.range(-1500, 1500),
        ),
        PrimitiveType::Decimal { precision, scale } => Literal::Decimal {
            unscaled: i128::from(rng.range(-2500, 2500)),
            precision: *precision,
            scale: *scale,
        },
        _ => {
            let n = rng.below(4);
            Literal::Binary((0..n).map(|_| *rng.pick(BYTES)).collect())
        }
    }
}

/// A literal to compare with a column of `ty`, sometimes of another compatible type.
fn literal(rng: &mut Rng, ty: &PrimitiveType) -> Literal {
    let v = value(rng, ty);
    if !rng.chance(25) {
        return v;
    }
    match v {
        Literal::Int(x) => Literal::Long(i64::from(x) + if rng.chance(30) { 1 << 33 } else { 0 }),
        Literal::Float(x) => Literal::Double(f64::from(x) + if rng.chance(50) { 0.1 } else { 0.0 }),
        Literal::Timestamptz(x) => Literal::TimestampNs(x * 1000 + rng.range(-999, 999)),
        Literal::TimestampNs(x) => Literal::Timestamptz(x.div_euclid(1000)),
        Literal::Decimal { unscaled, .. } => Literal::Decimal {
            unscaled: unscaled * 10 + i128::from(rng.range(-9, 9)),
            precision: 10,
            scale: 3,
        },
        Literal::Date(x) => Literal::Timestamptz(i64::from(x) * DAY + rng.range(-1, 1)),
        other => other,
    }
}

fn is_float(ty: &PrimitiveType) -> bool {
    matches!(ty, PrimitiveType::Float | PrimitiveType::Double)
}

fn leaf(rng: &mut Rng) -> Predicate {
    let cols = columns();
    let (_, name, ty) = *rng.pick(&cols);
    let non_nan = |rng: &mut Rng| loop {
        let l = literal(rng, &ty);
        if !crate::expr::literal::is_nan(&l) {
            return l;
        }
    };
    match rng.below(10) {
        0 => Predicate::col_unary(*rng.pick(&[UnaryOp::IsNull, UnaryOp::NotNull]), name),
        1 if is_float(&ty) => {
            Predicate::col_unary(*rng.pick(&[UnaryOp::IsNan, UnaryOp::NotNan]), name)
        }
        2 | 3 => {
            let op = *rng.pick(&[SetOp::In, SetOp::NotIn]);
            let n = 1 + rng.below(4);
            Predicate::col_set(op, name, (0..n).map(|_| non_nan(rng)).collect())
        }
        4 if ty == PrimitiveType::String => {
            let op = *rng.pick(&[BinaryOp::StartsWith, BinaryOp::NotStartsWith]);
            let n = rng.below(4);
            Predicate::col_binary(
                op,
                name,
                Literal::String((0..n).map(|_| *rng.pick(CHARS)).collect()),
            )
        }
        _ => {
            use BinaryOp::*;
            let op = *rng.pick(&[Lt, LtEq, Gt, GtEq, Eq, NotEq]);
            Predicate::col_binary(op, name, non_nan(rng))
        }
    }
}

fn predicate(rng: &mut Rng, depth: u32) -> Predicate {
    if depth == 0 || rng.chance(40) {
        return leaf(rng);
    }
    match rng.below(3) {
        0 => predicate(rng, depth - 1).and(predicate(rng, depth - 1)),
        1 => predicate(rng, depth - 1).or(predicate(rng, depth - 1)),
        _ => Predicate::Not(Box::new(predicate(rng, depth - 1))),
    }
}

fn transform_for(rng: &mut Rng, ty: &PrimitiveType) -> Transform {
    let bucket = Transform::Bucket(1 + rng.below(8) as u32);
    let options: Vec<Transform> = match ty {
        PrimitiveType::Int | PrimitiveType::Long => {
            vec![
                Transform::Identity,
                bucket,
                Transform::Truncate(1 + rng.below(10) as u32),
                Transform::Void,
            ]
        }
        PrimitiveType::Float | PrimitiveType::Double => vec![Transform::Identity, Transform::Void],
        PrimitiveType::String | PrimitiveType::Binary => {
            vec![
                Transform::Identity,
                bucket,
                Transform::Truncate(1 + rng.below(4) as u32),
            ]
        }
        PrimitiveType::Date => vec![
            Transform::Identity,
            bucket,
            Transform::Year,
            Transform::Month,
            Transform::Day,
        ],
        PrimitiveType::Decimal { .. } => vec![
            Transform::Identity,
            bucket,
            Transform::Truncate(1 + rng.below(100) as u32),
        ],
        _ => vec![
            Transform::Identity,
            bucket,
            Transform::Year,
            Transform::Month,
            Transform::Day,
            Transform::Hour,
        ],
    };
    rng.pick(&options).clone()
}

/// The upper bound of `s` truncated to `width` code points: the prefix with its last
/// code point incremented (Iceberg's `truncateStringMax`); `None` when impossible.
fn truncate_string_max(s: &str, width: usize) -> Option<String> {
    if s.chars().count() <= width {
        return Some(s.to_string());
    }
    let mut chars: Vec<char> = s.chars().take(width).collect();
    while let Some(last) = chars.pop() {
        let mut next = last as u32 + 1;
        if (0xD800..=0xDFFF).contains(&next) {
            next = 0xE000;
        }
        if let Some(c) = char::from_u32(next) {
            chars.push(c);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

fn truncate_binary_max(b: &[u8], width: usize) -> Option<Vec<u8>> {
    if b.len() <= width {
        return Some(b.to_vec());
    }
    let mut out = b[..width].to_vec();
    while let Some(last) = out.pop() {
        if last < 0xff {
            out.push(last + 1);
            return Some(out);
        }
    }
    None
}

type Row = Vec<Option<Literal>>;

fn metrics_of(rng: &mut Rng, rows: &[&Row]) -> Stats {
    let mut m = Stats {
        rows: rows.len() as i64,
        through_bytes: true,
        ..Default::default()
    };
    for (k, (id, _, ty)) in columns().into_iter().enumerate() {
        let mode = rng.below(10); // 0: none, 1: counts only, else full
        if mode == 0 {
            continue;
        }
        let values: Vec<&Literal> = rows.iter().filter_map(|r| r[k].as_ref()).collect();
        m.values.insert(id, rows.len() as i64);
        m.nulls.insert(id, (rows.len() - values.len()) as i64);
        let nans = values
            .iter()
            .filter(|v| crate::expr::literal::is_nan(v))
            .count();
        if is_float(&ty) && rng.chance(70) {
            m.nans.insert(id, nans as i64);
        }
        if mode == 1 {
            continue;
        }
        let mut ordered: Vec<&Literal> = values
            .into_iter()
            .filter(|v| !crate::expr::literal::is_nan(v))
            .collect();
        ordered.sort_by(|a, b| compare(a, b).unwrap_or(Ordering::Equal));
        let (Some(min), Some(max)) = (ordered.first(), ordered.last()) else {
            continue;
        };
        let width = 1 + rng.below(4) as usize;
        let (lower, upper) = match (min, max) {
            (Literal::String(lo), Literal::String(hi)) if rng.chance(60) => (
                Some(Literal::String(
                    crate::transform::truncate_str(lo, width).to_string(),
                )),
                truncate_string_max(hi, width).map(Literal::String),
            ),
            (Literal::Binary(lo), Literal::Binary(hi)) if rng.chance(60) => (
                Some(Literal::Binary(
                    crate::transform::truncate_binary(lo, width).to_vec(),
                )),
                truncate_binary_max(hi, width).map(Literal::Binary),
            ),
            // zeros: a writer may record either sign
            (lo, hi) => {
                let mut flip = |l: &Literal| match l {
                    Literal::Double(z) if *z == 0.0 && rng.chance(50) => Literal::Double(-z),
                    other => other.clone(),
                };
                let lo = flip(lo);
                (Some(lo), Some((*hi).clone()))
            }
        };
        if let Some(l) = lower {
            m.lower.insert(id, l);
        }
        if let Some(u) = upper {
            m.upper.insert(id, u);
        }
    }
    m
}

fn summaries(spec: &BoundPartitionSpec, tuples: &[&Vec<Option<Literal>>]) -> Vec<FieldSummary> {
    spec.fields
        .iter()
        .map(|f| {
            let values: Vec<&Literal> = tuples
                .iter()
                .filter_map(|t| t[f.position].as_ref())
                .collect();
            let mut ordered: Vec<&&Literal> = values
                .iter()
                .filter(|v| !crate::expr::literal::is_nan(v))
                .collect();
            ordered.sort_by(|a, b| compare(a, b).unwrap_or(Ordering::Equal));
            FieldSummary {
                contains_null: values.len() < tuples.len(),
                contains_nan: Some(values.iter().any(|v| crate::expr::literal::is_nan(v))),
                lower_bound: ordered.first().map(|l| literal_to_bytes(l)),
                upper_bound: ordered.last().map(|l| literal_to_bytes(l)),
            }
        })
        .collect()
}

fn manifest(partitions: Vec<FieldSummary>) -> ManifestFile {
    ManifestFile {
        manifest_path: "m.avro".into(),
        manifest_length: 1,
        partition_spec_id: 0,
        content: ManifestContent::Data,
        sequence_number: 1,
        min_sequence_number: 1,
        added_snapshot_id: 1,
        added_files_count: Some(1),
        existing_files_count: Some(0),
        deleted_files_count: Some(0),
        added_rows_count: None,
        existing_rows_count: None,
        deleted_rows_count: None,
        partitions: Some(partitions),
        key_metadata: None,
        first_row_id: None,
    }
}

fn check(seed: u64) -> Result<(), String> {
    let mut rng = Rng(seed | 1);
    let schema = schema();
    let cols = columns();
    let mut fields = vec![];
    for i in 0..rng.below(3) {
        let (id, name, ty) = *rng.pick(&cols);
        fields.push(PartitionField {
            source_id: id,
            field_id: Some(1000 + i as i32),
            name: format!("{name}_{i}"),
            transform: transform_for(&mut rng, &ty),
        });
    }
    let spec = PartitionSpec { spec_id: 0, fields };
    let bound_spec = BoundPartitionSpec::new(&spec, &[&schema]).map_err(|e| e.to_string())?;
    let rows: Vec<Row> = (0..1 + rng.below(40))
        .map(|_| {
            cols.iter()
                .map(|(_, _, ty)| (!rng.chance(15)).then(|| value(&mut rng, ty)))
                .collect()
        })
        .collect();
    let tuple_of = |row: &Row| -> Result<Vec<Option<Literal>>, String> {
        spec.fields
            .iter()
            .map(|f| {
                let k = cols.iter().position(|c| c.0 == f.source_id).unwrap_or(0);
                apply_opt(&f.transform, row[k].as_ref()).map_err(|e| e.to_string())
            })
            .collect()
    };
    // files: rows of one partition, in chunks
    let mut files: Vec<(Vec<Option<Literal>>, Vec<&Row>)> = vec![];
    for row in &rows {
        let t = tuple_of(row)?;
        let open = files.iter_mut().find(|(ft, rs)| {
            ft.len() == t.len()
                && ft.iter().zip(&t).all(|(a, b)| match (a, b) {
                    (None, None) => true,
                    (Some(a), Some(b)) => literal_to_bytes(a) == literal_to_bytes(b),
                    _ => false,
                })
                && rs.len() < 6
        });
        match open {
            Some((_, rs)) => rs.push(row),
            None => files.push((t, vec![row])),
        }
    }
    let p = predicate(&mut rng, 3);
    let Ok(bound) = Binder::new(&schema).bind(&p) else {
        return Ok(());
    };
    let truth: BoundPredicate = rewrite_not(bound.clone());
    let inclusive = InclusiveProjection::new(&bound_spec)
        .project(&bound)
        .map_err(|e| e.to_string())?;
    let strict = StrictProjection::new(&bound_spec)
        .project(&bound)
        .map_err(|e| e.to_string())?;
    let metrics = InclusiveMetricsEvaluator::new(&bound);
    let strict_metrics = StrictMetricsEvaluator::new(&bound);
    let manifests =
        ManifestEvaluator::new(bound_spec.clone(), &bound).map_err(|e| e.to_string())?;
    let residuals = ResidualEvaluator::new(bound_spec.clone(), &bound);
    let all_tuples: Vec<&Vec<Option<Literal>>> = files.iter().map(|(t, _)| t).collect();
    let whole = manifest(summaries(&bound_spec, &all_tuples));
    let e = |e: crate::Error| e.to_string();
    for (tuple, file_rows) in &files {
        let matches: Vec<bool> = file_rows
            .iter()
            .map(|r| {
                let value_of = |id: i32| -> Option<&Literal> {
                    r.get((id - 1) as usize).and_then(Option::as_ref)
                };
                evaluate(&truth, &value_of).map_err(e)
            })
            .collect::<Result<_, _>>()?;
        let ctx = || {
            format!(
                "predicate {truth}\nspec {:?}\npartition {tuple:?}\nrows {file_rows:?}",
                spec.fields
            )
        };
        let stats = metrics_of(&mut rng, file_rows);
        if strict_metrics.eval(&stats).map_err(e)? && matches.iter().any(|m| !m) {
            return Err(format!(
                "strict metrics said every row matches, one does not\n{}",
                ctx()
            ));
        }
        if matches.iter().any(|m| *m) {
            if !evaluate_partition(&bound_spec, &inclusive, tuple).map_err(e)? {
                return Err(format!("partition pruned a match: {inclusive}\n{}", ctx()));
            }
            if !metrics.eval(&stats).map_err(e)? {
                return Err(format!("metrics pruned a match\n{}", ctx()));
            }
            let own = manifest(summaries(&bound_spec, &[tuple]));
            if !manifests.eval(&own).map_err(e)? || !manifests.eval(&whole).map_err(e)? {
                return Err(format!(
                    "manifest summary pruned a match: {inclusive}\n{}",
                    ctx()
                ));
            }
        }
        if evaluate_partition(&bound_spec, &strict, tuple).map_err(e)? && matches.iter().any(|m| !m)
        {
            return Err(format!(
                "strict projection {strict} true but a row does not match\n{}",
                ctx()
            ));
        }
        let residual = residuals.residual_for(tuple).map_err(e)?;
        for (r, m) in file_rows.iter().zip(&matches) {
            let value_of =
                |id: i32| -> Option<&Literal> { r.get((id - 1) as usize).and_then(Option::as_ref) };
            if evaluate(&residual, &value_of).map_err(e)? != *m {
                return Err(format!("residual {residual} disagrees on {r:?}\n{}", ctx()));
            }
        }
    }
    Ok(())
}

#[test]
fn regressions() {
    for seed in REGRESSIONS {
        if let Err(e) = check(*seed) {
            panic!("seed {seed}: {e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn pruning_never_drops_a_matching_file(seed in any::<u64>()) {
        if let Err(e) = check(seed) {
            prop_assert!(false, "seed {}: {}", seed, e);
        }
    }
}
