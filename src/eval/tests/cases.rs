use super::Stats;
use crate::eval::{BoundPartitionSpec, InclusiveMetricsEvaluator, ManifestEvaluator};
use crate::expr::{BinaryOp, Binder, Predicate, SetOp, UnaryOp};
use crate::spec::{
    FieldSummary, Literal, ManifestContent, ManifestFile, NestedField, PartitionField,
    PartitionSpec, PrimitiveType, Schema, Transform, Type,
};

fn schema() -> Schema {
    let opt = |id, n: &str, t| NestedField::optional(id, n, Type::Primitive(t));
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Int)),
            opt(2, "no_stats", PrimitiveType::Int),
            NestedField::required(3, "required", Type::Primitive(PrimitiveType::String)),
            opt(4, "all_nulls", PrimitiveType::String),
            opt(5, "some_nulls", PrimitiveType::String),
            opt(6, "no_nulls", PrimitiveType::String),
            opt(7, "all_nans", PrimitiveType::Double),
            opt(8, "some_nans", PrimitiveType::Float),
            opt(9, "no_nans", PrimitiveType::Float),
            opt(10, "all_nulls_double", PrimitiveType::Double),
            opt(11, "nan_bounds", PrimitiveType::Float),
            opt(12, "nan_and_null_only", PrimitiveType::Double),
            opt(13, "no_nan_stats", PrimitiveType::Double),
            opt(14, "some_empty", PrimitiveType::String),
        ],
    )
}

fn s(v: &str) -> Literal {
    Literal::String(v.into())
}

/// 50 rows; id in [30, 79]; per-column null / NaN shapes (Java's `FILE`).
fn file() -> Stats {
    let mut f = Stats {
        rows: 50,
        ..Default::default()
    };
    for id in 4..=14 {
        f.values.insert(id, 50);
    }
    f.nulls.extend([
        (4, 50),
        (5, 10),
        (6, 0),
        (10, 50),
        (11, 0),
        (12, 1),
        (14, 0),
    ]);
    f.nans.extend([(7, 50), (8, 10), (9, 0)]);
    f.lower.extend([
        (1, Literal::Int(30)),
        (11, Literal::Float(f32::NAN)),
        (12, Literal::Double(f64::NAN)),
        (14, s("")),
    ]);
    f.upper.extend([
        (1, Literal::Int(79)),
        (11, Literal::Float(f32::NAN)),
        (12, Literal::Double(f64::NAN)),
        (14, s("房东整租霍营小区二层两居室")),
    ]);
    f
}

fn strings(lower: &str, upper: &str) -> Stats {
    let mut f = Stats {
        rows: 50,
        ..Default::default()
    };
    f.values.insert(3, 50);
    f.nulls.insert(3, 0);
    f.lower.insert(3, s(lower));
    f.upper.insert(3, s(upper));
    f
}

fn eval(p: Predicate, f: &Stats) -> bool {
    let schema = schema();
    let bound = Binder::new(&schema).bind(&p).unwrap();
    InclusiveMetricsEvaluator::new(&bound).eval(f).unwrap()
}

fn b(op: BinaryOp, col: &str, l: Literal) -> Predicate {
    Predicate::col_binary(op, col, l)
}

fn u(op: UnaryOp, col: &str) -> Predicate {
    Predicate::col_unary(op, col)
}

#[test]
fn metrics_null_and_nan_rules() {
    use BinaryOp::*;
    use UnaryOp::*;
    let f = file();
    let cases: Vec<(Predicate, bool)> = vec![
        (u(NotNull, "all_nulls"), false),
        (u(NotNull, "some_nulls"), true),
        (u(NotNull, "no_nulls"), true),
        (u(IsNull, "all_nulls"), true),
        (u(IsNull, "some_nulls"), true),
        (u(IsNull, "no_nulls"), false),
        (u(IsNull, "no_stats"), true),
        (u(IsNan, "all_nans"), true),
        (u(IsNan, "some_nans"), true),
        (u(IsNan, "no_nans"), false),
        (u(IsNan, "all_nulls_double"), false),
        (u(IsNan, "no_nan_stats"), true),
        (u(NotNan, "all_nans"), false),
        (u(NotNan, "some_nans"), true),
        (u(NotNan, "no_nans"), true),
        (u(NotNan, "all_nulls_double"), true),
        (b(Lt, "all_nans", Literal::Double(1.0)), false),
        (b(Eq, "all_nans", Literal::Double(1.0)), false),
        (b(Gt, "all_nulls_double", Literal::Double(1.0)), false),
        (b(StartsWith, "all_nulls", s("a")), false),
        (b(NotStartsWith, "all_nulls", s("a")), true),
        (b(Lt, "all_nulls", s("a")), false),
        // NaN bounds are unreliable: nothing is pruned by them
        (b(Lt, "nan_bounds", Literal::Float(1.0)), true),
        (b(Gt, "nan_bounds", Literal::Float(1.0)), true),
        (b(Eq, "nan_bounds", Literal::Float(1.0)), true),
        (b(Lt, "nan_and_null_only", Literal::Double(1.0)), true),
        (
            Predicate::col_set(
                SetOp::In,
                "all_nans",
                vec![Literal::Double(1.0), Literal::Double(2.0)],
            ),
            false,
        ),
        (
            Predicate::col_set(SetOp::In, "all_nulls", vec![s("a"), s("b")]),
            false,
        ),
        (b(Eq, "no_stats", Literal::Int(5)), true),
        // `some_empty` lower bound is the empty string
        (b(StartsWith, "some_empty", s("房东")), true),
        (b(StartsWith, "some_empty", s("")), true),
        (b(NotStartsWith, "some_empty", s("")), false),
    ];
    for (p, expected) in cases {
        assert_eq!(eval(p.clone(), &f), expected, "{p}");
    }
}

#[test]
fn metrics_ranges() {
    use BinaryOp::*;
    let f = file();
    let id = |op, v| b(op, "id", Literal::Int(v));
    let cases: Vec<(Predicate, bool)> = vec![
        (id(Lt, 5), false),
        (id(Lt, 30), false),
        (id(Lt, 31), true),
        (id(Lt, 79), true),
        (id(LtEq, 29), false),
        (id(LtEq, 30), true),
        (id(Gt, 79), false),
        (id(Gt, 78), true),
        (id(GtEq, 80), false),
        (id(GtEq, 79), true),
        (id(Eq, 5), false),
        (id(Eq, 29), false),
        (id(Eq, 30), true),
        (id(Eq, 75), true),
        (id(Eq, 79), true),
        (id(Eq, 80), false),
        (id(NotEq, 5), true),
        (id(NotEq, 30), true),
        (Predicate::Not(Box::new(id(Lt, 5))), true),
        (Predicate::Not(Box::new(id(GtEq, 5))), false),
        (id(Lt, 5).and(id(GtEq, 0)), false),
        (id(Lt, 5).or(id(GtEq, 79)), true),
        (
            Predicate::col_set(SetOp::In, "id", vec![Literal::Int(5), Literal::Int(6)]),
            false,
        ),
        (
            Predicate::col_set(SetOp::In, "id", vec![Literal::Int(29), Literal::Int(30)]),
            true,
        ),
        (
            Predicate::col_set(SetOp::In, "id", vec![Literal::Int(79), Literal::Int(80)]),
            true,
        ),
        (
            Predicate::col_set(SetOp::In, "id", vec![Literal::Int(80), Literal::Int(81)]),
            false,
        ),
        // more than IN_PREDICATE_LIMIT values are not checked
        (
            Predicate::col_set(SetOp::In, "id", (100..400).map(Literal::Int).collect()),
            true,
        ),
        (
            Predicate::col_set(SetOp::NotIn, "id", vec![Literal::Int(5), Literal::Int(6)]),
            true,
        ),
        // a long literal beyond the int range binds to a bound of the column's type
        (b(Gt, "id", Literal::Long(1 << 40)), false),
        (b(Lt, "id", Literal::Long(1 << 40)), true),
    ];
    for (p, expected) in cases {
        assert_eq!(eval(p.clone(), &f), expected, "{p}");
    }
    assert!(
        !eval(id(Eq, 30), &Stats::default()),
        "a file with no rows holds no match"
    );
    let no_metrics = Stats {
        rows: 50,
        ..Default::default()
    };
    assert!(eval(id(Eq, 30), &no_metrics));
}

#[test]
fn metrics_strings() {
    use BinaryOp::*;
    let sw = |p: &str| b(StartsWith, "required", s(p));
    let nsw = |p: &str| b(NotStartsWith, "required", s(p));
    let f2 = strings("aa", "dC");
    let f3 = strings("1str1", "3str3");
    let f4 = strings("abc", "イロハニホヘト");
    let f5 = strings("abc", "abcdefghi");
    let single = strings("abc", "abc");
    let cases: Vec<(Predicate, &Stats, bool)> = vec![
        (sw("a"), &f2, true),
        (sw("aa"), &f2, true),
        (sw("aaa"), &f2, true),
        (sw("1s"), &f3, true),
        (sw("1str1x"), &f3, true),
        (sw("ff"), &f4, true),
        (sw("aB"), &f2, false),
        (sw("dWX"), &f2, false),
        (sw("5"), &f3, false),
        (sw("3str3x"), &f3, false),
        (sw("イロ"), &f4, true),
        (sw("イロハニホヘトチ"), &f4, false),
        (nsw("a"), &f2, true),
        (nsw("abc"), &f5, false),
        (nsw("abcd"), &f5, true),
        (nsw("ab"), &f5, false),
        (b(Eq, "required", s("abc")), &f5, true),
        (b(Eq, "required", s("abcdefghj")), &f5, false),
        (b(NotEq, "required", s("abc")), &single, false),
        (b(NotEq, "required", s("abd")), &single, true),
        (
            Predicate::col_set(SetOp::NotIn, "required", vec![s("abc"), s("x")]),
            &single,
            false,
        ),
        (
            Predicate::col_set(SetOp::NotIn, "required", vec![s("abd"), s("x")]),
            &single,
            true,
        ),
    ];
    for (p, f, expected) in cases {
        assert_eq!(eval(p.clone(), f), expected, "{p}");
    }
    // a truncated upper bound ("abd" for values up to "abcz…") still bounds them
    let truncated = strings("abc", "abd");
    assert!(eval(sw("abcz"), &truncated));
    assert!(
        eval(nsw("abc"), &truncated),
        "upper bound 'abd' does not start with 'abc'"
    );
}

/// Java `TestMetricsEvaluatorsNaNHandling`: bounds never include NaN; files whose bounds
/// are NaN (written before that rule) are not pruned by them.
#[test]
fn metrics_nan_handling() {
    use BinaryOp::*;
    let mut f = Stats {
        rows: 10,
        ..Default::default()
    };
    // column 8 (float): values [1, 2] and 3 NaN
    f.values.insert(8, 10);
    f.nulls.insert(8, 0);
    f.nans.insert(8, 3);
    f.lower.insert(8, Literal::Float(1.0));
    f.upper.insert(8, Literal::Float(2.0));
    let x = |op, v: f32| b(op, "some_nans", Literal::Float(v));
    let cases: Vec<(Predicate, bool)> = vec![
        (x(Gt, 3.0), false),
        (x(GtEq, 2.0), true),
        (x(Lt, 1.0), false),
        (x(Eq, 1.5), true),
        (x(Eq, 3.0), false),
        (x(NotEq, 1.0), true),
        (u(UnaryOp::IsNan, "some_nans"), true),
        (u(UnaryOp::NotNan, "some_nans"), true),
    ];
    for (p, expected) in cases {
        assert_eq!(eval(p.clone(), &f), expected, "{p}");
    }
    // without a NaN count, a single value with a bound cannot be NaN; two different
    // bounds account for two values
    let mut g = Stats {
        rows: 2,
        ..Default::default()
    };
    g.values.insert(9, 2);
    g.nulls.insert(9, 0);
    g.lower.insert(9, Literal::Float(1.0));
    g.upper.insert(9, Literal::Float(2.0));
    assert!(!eval(u(UnaryOp::IsNan, "no_nans"), &g));
    g.upper.insert(9, Literal::Float(1.0));
    assert!(eval(u(UnaryOp::IsNan, "no_nans"), &g));
}

fn summary(
    contains_null: bool,
    contains_nan: Option<bool>,
    bounds: Option<(Literal, Literal)>,
) -> FieldSummary {
    let enc = |l: &Literal| -> Vec<u8> {
        match l {
            Literal::Int(v) => v.to_le_bytes().to_vec(),
            Literal::Float(v) => v.to_le_bytes().to_vec(),
            Literal::String(v) => v.as_bytes().to_vec(),
            other => panic!("no encoding for {other}"),
        }
    };
    FieldSummary {
        contains_null,
        contains_nan,
        lower_bound: bounds.as_ref().map(|(l, _)| enc(l)),
        upper_bound: bounds.as_ref().map(|(_, u)| enc(u)),
    }
}

/// Java `TestInclusiveManifestEvaluator`, over an identity spec on several columns.
#[test]
fn manifest_summaries() {
    use BinaryOp::*;
    use UnaryOp::*;
    let schema = schema();
    let identity = |i: usize, source_id| PartitionField {
        source_id,
        field_id: Some(1000 + i as i32),
        name: format!("p{source_id}"),
        transform: Transform::Identity,
    };
    let spec = PartitionSpec {
        spec_id: 0,
        fields: vec![
            identity(0, 1),
            identity(1, 4),
            identity(2, 5),
            identity(3, 6),
            identity(4, 8),
            identity(5, 9),
            identity(6, 7),
            identity(7, 3),
        ],
    };
    let manifest = ManifestFile {
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
        partitions: Some(vec![
            summary(false, None, Some((Literal::Int(30), Literal::Int(79)))),
            summary(true, None, None),
            summary(true, None, Some((s("a"), s("z")))),
            summary(false, None, Some((s("a"), s("z")))),
            summary(false, Some(true), None),
            summary(
                false,
                Some(false),
                Some((Literal::Float(1.0), Literal::Float(2.0))),
            ),
            summary(true, None, None),
            summary(false, None, Some((s("abc"), s("abc")))),
        ]),
        key_metadata: None,
        first_row_id: None,
    };
    let bound_spec = BoundPartitionSpec::new(&spec, &[&schema]).unwrap();
    let eval = |p: Predicate| {
        let bound = Binder::new(&schema).bind(&p).unwrap();
        ManifestEvaluator::new(bound_spec.clone(), &bound)
            .unwrap()
            .eval(&manifest)
            .unwrap()
    };
    let id = |op, v| b(op, "id", Literal::Int(v));
    let cases: Vec<(Predicate, bool)> = vec![
        (id(Lt, 30), false),
        (id(Lt, 31), true),
        (id(LtEq, 29), false),
        (id(Gt, 79), false),
        (id(GtEq, 79), true),
        (id(Eq, 80), false),
        (id(Eq, 50), true),
        (id(NotEq, 50), true),
        (
            Predicate::col_set(SetOp::In, "id", vec![Literal::Int(1), Literal::Int(2)]),
            false,
        ),
        (
            Predicate::col_set(SetOp::In, "id", vec![Literal::Int(1), Literal::Int(30)]),
            true,
        ),
        (
            Predicate::col_set(SetOp::In, "id", (100..400).map(Literal::Int).collect()),
            true,
        ),
        // `id` is required: binding makes is_null false
        (u(IsNull, "id"), false),
        (u(NotNull, "all_nulls"), false),
        (u(IsNull, "all_nulls"), true),
        (b(Eq, "all_nulls", s("a")), false),
        (b(StartsWith, "all_nulls", s("a")), false),
        (b(NotStartsWith, "all_nulls", s("a")), true),
        (u(IsNull, "no_nulls"), false),
        (u(NotNull, "some_nulls"), true),
        (b(StartsWith, "some_nulls", s("z")), true),
        (b(StartsWith, "some_nulls", s("zz")), false),
        (b(StartsWith, "no_nulls", s("zzz")), false),
        (b(StartsWith, "no_nulls", s("0")), false),
        (u(NotNan, "some_nans"), false),
        (u(IsNan, "some_nans"), true),
        (b(Lt, "some_nans", Literal::Float(5.0)), false),
        (u(IsNan, "no_nans"), false),
        (b(Gt, "no_nans", Literal::Float(1.5)), true),
        (b(Gt, "no_nans", Literal::Float(2.0)), false),
        // a double column that is all null, NaN presence unknown: cannot prove all null
        (u(NotNull, "all_nans"), true),
        (u(IsNan, "all_nans"), true),
        (b(NotEq, "required", s("abc")), false),
        (b(NotStartsWith, "required", s("ab")), false),
        (b(NotStartsWith, "required", s("abd")), true),
        (
            Predicate::col_set(SetOp::NotIn, "required", vec![s("abc")]),
            false,
        ),
    ];
    for (p, expected) in cases {
        assert_eq!(eval(p.clone()), expected, "{p}");
    }
    let mut no_summaries = manifest.clone();
    no_summaries.partitions = None;
    let bound = Binder::new(&schema).bind(&id(Eq, 1000)).unwrap();
    assert!(ManifestEvaluator::new(bound_spec, &bound)
        .unwrap()
        .eval(&no_summaries)
        .unwrap());
}

fn strict(p: Predicate, f: &Stats) -> bool {
    let schema = schema();
    let bound = Binder::new(&schema).bind(&p).unwrap();
    crate::eval::StrictMetricsEvaluator::new(&bound)
        .eval(f)
        .unwrap()
}

/// `StrictMetricsEvaluator` on Java's `FILE` shapes (own values): true only where the
/// metrics prove every row matches.
#[test]
fn strict_metrics_rules() {
    use BinaryOp::*;
    use UnaryOp::*;
    let f = file();
    // id in [30, 79], required: no nulls
    let mut ids = f.clone();
    ids.nulls.insert(1, 0);
    assert!(strict(b(Lt, "id", Literal::Int(80)), &ids));
    assert!(!strict(b(Lt, "id", Literal::Int(79)), &ids));
    assert!(strict(b(LtEq, "id", Literal::Int(79)), &ids));
    assert!(strict(b(Gt, "id", Literal::Int(29)), &ids));
    assert!(!strict(b(Gt, "id", Literal::Int(30)), &ids));
    assert!(strict(b(GtEq, "id", Literal::Int(30)), &ids));
    assert!(!strict(b(Eq, "id", Literal::Int(30)), &ids));
    assert!(!strict(b(NotEq, "id", Literal::Int(5)), &ids));
    // without a null count, nothing is proven
    assert!(!strict(b(Lt, "id", Literal::Int(80)), &f));
    // nulls: all, some, none
    assert!(strict(u(IsNull, "all_nulls"), &f));
    assert!(!strict(u(IsNull, "some_nulls"), &f));
    assert!(strict(u(NotNull, "no_nulls"), &f));
    assert!(!strict(u(NotNull, "some_nulls"), &f));
    // NaN: all, none; a bound never decides a column that may hold NaN
    assert!(strict(u(IsNan, "all_nans"), &f));
    assert!(!strict(u(NotNan, "no_nans"), &f));
    assert!(!strict(u(NotNan, "some_nans"), &f));
    assert!(!strict(u(NotNan, "all_nulls_double"), &f));
    let mut no_nans = f.clone();
    no_nans.nulls.insert(9, 0);
    assert!(strict(u(NotNan, "no_nans"), &no_nans));
    // a single value: lower = upper, no nulls
    let one = strings("abc", "abc");
    assert!(strict(b(Eq, "required", s("abc")), &one));
    assert!(!strict(b(Eq, "required", s("abd")), &one));
    assert!(strict(
        Predicate::col_set(SetOp::In, "required", vec![s("x"), s("abc")]),
        &one
    ));
    assert!(!strict(b(Eq, "required", s("abc")), &strings("abc", "abd")));
    // and / or
    assert!(strict(
        b(Eq, "required", s("abc")).and(b(GtEq, "required", s("a"))),
        &one
    ));
    assert!(strict(
        b(Eq, "required", s("zzz")).or(b(GtEq, "required", s("a"))),
        &one
    ));
    // a file without rows: every (no) row matches
    let empty = Stats::default();
    assert!(strict(b(Eq, "id", Literal::Int(1)), &empty));
}
