//! Metrics that contradict themselves (issue 16 item 5) are unknown for that column of
//! that file: never pruned by, and reported, while the file's other columns still prune.

use crate::eval::{metrics_inconsistency, InclusiveMetricsEvaluator, MetricsVerdict};
use crate::expr::{BinaryOp, Binder, Predicate, UnaryOp};
use crate::spec::{DataContentType, DataFile, Literal, NestedField, PrimitiveType, Schema, Type};
use crate::write::empty_data_file;

fn schema() -> Schema {
    let opt = |id, n: &str, t| NestedField::optional(id, n, Type::Primitive(t));
    Schema::new(
        0,
        vec![
            opt(1, "x", PrimitiveType::Int),
            opt(2, "y", PrimitiveType::Long),
            opt(3, "s", PrimitiveType::String),
            opt(4, "b", PrimitiveType::Boolean),
            opt(5, "f", PrimitiveType::Fixed(4)),
            opt(6, "ts", PrimitiveType::Timestamp),
        ],
    )
}

/// 10 rows, no nulls: x in [10, 20], y in [0, 10] (stored as int bounds, promoted),
/// s in ["b", "d"].
fn file() -> DataFile {
    let mut f = empty_data_file("s3://b/t/data/f.parquet", DataContentType::Data);
    f.record_count = 10;
    f.value_counts = [(1, 10), (2, 10), (3, 10)].into();
    f.null_value_counts = [(1, 0), (2, 0), (3, 0)].into();
    f.lower_bounds = [
        (1, 10_i32.to_le_bytes().to_vec()),
        (2, 0_i32.to_le_bytes().to_vec()),
        (3, b"b".to_vec()),
    ]
    .into();
    f.upper_bounds = [
        (1, 20_i32.to_le_bytes().to_vec()),
        (2, 10_i32.to_le_bytes().to_vec()),
        (3, b"d".to_vec()),
    ]
    .into();
    f
}

fn verdict(p: Predicate, f: &DataFile) -> MetricsVerdict {
    let schema = schema();
    let bound = Binder::new(&schema).bind(&p).unwrap();
    InclusiveMetricsEvaluator::new(&bound).verdict(f).unwrap()
}

fn x_eq(v: i32) -> Predicate {
    Predicate::col_binary(BinaryOp::Eq, "x", Literal::Int(v))
}

const PRUNED: MetricsVerdict = MetricsVerdict {
    might_match: false,
    inconsistent: false,
};
const KEPT: MetricsVerdict = MetricsVerdict {
    might_match: true,
    inconsistent: false,
};
const KEPT_INCONSISTENT: MetricsVerdict = MetricsVerdict {
    might_match: true,
    inconsistent: true,
};

#[test]
fn consistent_metrics_prune_as_before() {
    let f = file();
    assert_eq!(verdict(x_eq(5), &f), PRUNED);
    assert_eq!(verdict(x_eq(15), &f), KEPT);
    assert_eq!(
        verdict(
            Predicate::col_binary(BinaryOp::Lt, "s", Literal::String("b".into())),
            &f
        ),
        PRUNED
    );
    assert_eq!(
        verdict(Predicate::col_unary(UnaryOp::IsNull, "x"), &f),
        PRUNED
    );
}

#[test]
fn inverted_bounds_are_unknown() {
    // lower 20 > upper 10: Java's evaluator drops the file for x = 15 (15 < lower)
    let mut f = file();
    f.lower_bounds.insert(1, 20_i32.to_le_bytes().to_vec());
    f.upper_bounds.insert(1, 10_i32.to_le_bytes().to_vec());
    for p in [
        x_eq(15),
        x_eq(5),
        Predicate::col_binary(BinaryOp::Gt, "x", Literal::Int(12)),
        Predicate::col_unary(UnaryOp::IsNull, "x"),
    ] {
        assert_eq!(verdict(p, &f), KEPT_INCONSISTENT);
    }
    // inverted string bounds too
    let mut f = file();
    f.lower_bounds.insert(3, b"z".to_vec());
    assert_eq!(
        verdict(
            Predicate::col_binary(BinaryOp::Eq, "s", Literal::String("c".into())),
            &f
        ),
        KEPT_INCONSISTENT
    );
}

#[test]
fn bounds_of_the_wrong_width_are_unknown_with_the_other_bound() {
    // a 3-byte lower bound: the (fine) upper bound 20 alone would prune x > 25
    let mut f = file();
    f.lower_bounds.insert(1, vec![1, 2, 3]);
    assert_eq!(
        verdict(
            Predicate::col_binary(BinaryOp::Gt, "x", Literal::Int(25)),
            &f
        ),
        KEPT_INCONSISTENT
    );
    // 8 bytes under an int column
    let mut f = file();
    f.upper_bounds.insert(1, 20_i64.to_le_bytes().to_vec());
    assert_eq!(verdict(x_eq(5), &f), KEPT_INCONSISTENT);
    // a string bound that is not UTF-8
    let mut f = file();
    f.upper_bounds.insert(3, vec![0xff, 0xfe]);
    assert_eq!(
        verdict(
            Predicate::col_binary(BinaryOp::Lt, "s", Literal::String("b".into())),
            &f
        ),
        KEPT_INCONSISTENT
    );
}

#[test]
fn counts_that_cannot_be_are_unknown() {
    // more nulls than values: "no value is non-null" would prune x = 15 ...
    let mut f = file();
    f.null_value_counts.insert(1, 11);
    assert_eq!(verdict(x_eq(5), &f), KEPT_INCONSISTENT);
    assert_eq!(
        verdict(Predicate::col_unary(UnaryOp::NotNull, "x"), &f),
        KEPT_INCONSISTENT
    );
    // a negative null count
    let mut f = file();
    f.null_value_counts.insert(1, -1);
    assert_eq!(
        verdict(Predicate::col_unary(UnaryOp::IsNull, "x"), &f),
        KEPT_INCONSISTENT
    );
    // nulls plus NaNs above the values
    let mut f = file();
    f.null_value_counts.insert(1, 6);
    f.nan_value_counts.insert(1, 6);
    assert_eq!(verdict(x_eq(5), &f), KEPT_INCONSISTENT);
}

#[test]
fn only_the_inconsistent_column_is_ignored() {
    let mut f = file();
    f.lower_bounds.insert(1, 20_i32.to_le_bytes().to_vec());
    f.upper_bounds.insert(1, 10_i32.to_le_bytes().to_vec());
    // y in [0, 10] still rules out y = 100
    let p = x_eq(15).and(Predicate::col_binary(BinaryOp::Eq, "y", Literal::Long(100)));
    assert!(!verdict(p, &f).might_match);
    // and a filter on y alone is not affected by x's metrics
    let p = Predicate::col_binary(BinaryOp::Eq, "y", Literal::Long(5));
    assert_eq!(verdict(p, &f), KEPT);
}

#[test]
fn legal_forms_are_not_inconsistent() {
    let f = {
        let mut f = file();
        // a boolean, a truncated fixed bound, a date bound under a promoted timestamp
        f.lower_bounds.insert(4, vec![0]);
        f.upper_bounds.insert(4, vec![1]);
        f.lower_bounds.insert(5, vec![1, 2]);
        f.upper_bounds.insert(5, vec![1, 3, 0, 0]);
        f.lower_bounds.insert(6, 19_000_i32.to_le_bytes().to_vec());
        f.upper_bounds
            .insert(6, (19_001_i64 * 86_400_000_000).to_le_bytes().to_vec());
        // all values null; equal bounds
        f.value_counts.insert(2, 10);
        f.null_value_counts.insert(2, 10);
        f
    };
    let schema = schema();
    for field in schema.columns() {
        let ty = field.field_type.as_primitive().unwrap();
        assert_eq!(
            metrics_inconsistency(&f, field.id, ty),
            None,
            "{}",
            field.name
        );
    }
    // wrong widths for the same types are caught
    let mut bad = f.clone();
    bad.lower_bounds.insert(4, vec![0, 0]);
    bad.upper_bounds.insert(5, vec![1, 2, 3, 4, 5]);
    bad.lower_bounds.insert(6, vec![1, 2, 3, 4, 5, 6]);
    for (id, ty) in [
        (4, PrimitiveType::Boolean),
        (5, PrimitiveType::Fixed(4)),
        (6, PrimitiveType::Timestamp),
    ] {
        assert!(metrics_inconsistency(&bad, id, &ty).is_some(), "{ty}");
    }
    // float bounds -0.0 / 0.0 and NaN bounds are not inverted
    let mut floats = empty_data_file("g.parquet", DataContentType::Data);
    floats.record_count = 2;
    floats
        .lower_bounds
        .insert(7, 0.0_f32.to_le_bytes().to_vec());
    floats
        .upper_bounds
        .insert(7, (-0.0_f32).to_le_bytes().to_vec());
    floats
        .lower_bounds
        .insert(8, f64::NAN.to_le_bytes().to_vec());
    floats
        .upper_bounds
        .insert(8, 1.0_f64.to_le_bytes().to_vec());
    assert_eq!(
        metrics_inconsistency(&floats, 7, &PrimitiveType::Float),
        None
    );
    assert_eq!(
        metrics_inconsistency(&floats, 8, &PrimitiveType::Double),
        None
    );
}
