//! Projection case tables, re-expressed from Java's `TestBucketingProjection`,
//! `TestTruncatesProjection`, `TestDatesProjection` and `TestTimestampsProjection`
//! (values computed independently), plus multi-byte and pre-1970 cases.

use super::*;
use crate::spec::PrimitiveType;

fn source(ty: PrimitiveType) -> BoundReference {
    BoundReference {
        field_id: 1,
        name: "value".into(),
        field_type: ty,
        required: false,
    }
}

fn partition(transform: &Transform, ty: PrimitiveType) -> BoundReference {
    let result = match transform {
        Transform::Bucket(_) | Transform::Year | Transform::Month | Transform::Hour => {
            PrimitiveType::Int
        }
        Transform::Day => PrimitiveType::Date,
        _ => ty,
    };
    BoundReference {
        field_id: 1000,
        name: "p".into(),
        field_type: result,
        required: false,
    }
}

fn lit_str(l: &Literal) -> String {
    match l {
        Literal::Int(v) | Literal::Date(v) => v.to_string(),
        Literal::String(s) => s.clone(),
        Literal::Decimal {
            unscaled, scale, ..
        } => {
            let p = 10i128.pow(*scale);
            format!(
                "{}.{:0w$}",
                unscaled.div_euclid(p),
                unscaled.rem_euclid(p),
                w = *scale as usize
            )
        }
        other => other.to_string(),
    }
}

/// Renders a projection as `"<op> <value>"`, `"in [a, b]"` (sorted), or true/false.
fn render(p: Option<BoundPredicate>, strict: bool) -> String {
    match p {
        None => (!strict).to_string(),
        Some(Predicate::Unary { op, .. }) => op.to_string(),
        Some(Predicate::Binary { op, literal, .. }) => format!("{op} {}", lit_str(&literal)),
        Some(Predicate::Set { op, literals, .. }) => {
            let mut v: Vec<String> = literals.iter().map(lit_str).collect();
            v.sort();
            let op = if op == SetOp::In { "in" } else { "not in" };
            format!("{op} [{}]", v.join(", "))
        }
        Some(Predicate::Or(l, r)) => format!(
            "{} or {}",
            render(Some(*l), strict),
            render(Some(*r), strict)
        ),
        Some(Predicate::And(l, r)) => format!(
            "{} and {}",
            render(Some(*l), strict),
            render(Some(*r), strict)
        ),
        Some(other) => other.to_string(),
    }
}

struct Case {
    transform: Transform,
    ty: PrimitiveType,
    pred: BoundPredicate,
    inclusive: &'static str,
    strict: &'static str,
}

fn bin(op: BinaryOp, ty: PrimitiveType, v: Literal) -> BoundPredicate {
    Predicate::binary(op, source(ty), v)
}

fn set(op: SetOp, ty: PrimitiveType, v: Vec<Literal>) -> BoundPredicate {
    Predicate::set(op, source(ty), v)
}

fn date(s: &str) -> Literal {
    let d = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    Literal::Date((d - crate::spec::values::epoch_date()).num_days() as i32)
}

fn ts(s: &str) -> Literal {
    let t = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").unwrap();
    Literal::Timestamp(t.and_utc().timestamp_micros())
}

fn run(cases: Vec<Case>) {
    for c in cases {
        let part = partition(&c.transform, c.ty);
        let inc = project_inclusive(&c.transform, &part, &c.pred).unwrap();
        let strict = project_strict(&c.transform, &part, &c.pred).unwrap();
        assert_eq!(
            render(inc, false),
            c.inclusive,
            "inclusive {} of {}",
            c.transform,
            c.pred
        );
        assert_eq!(
            render(strict, true),
            c.strict,
            "strict {} of {}",
            c.transform,
            c.pred
        );
    }
}

macro_rules! case {
    ($t:expr, $ty:expr, $pred:expr, $inc:expr, $strict:expr) => {
        Case {
            transform: $t.clone(),
            ty: $ty,
            pred: $pred,
            inclusive: $inc,
            strict: $strict,
        }
    };
}

#[test]
fn bucketing() {
    use BinaryOp::*;
    let b = Transform::Bucket(10);
    let int = PrimitiveType::Int;
    let long = PrimitiveType::Long;
    let dec = PrimitiveType::Decimal {
        precision: 9,
        scale: 2,
    };
    let s = PrimitiveType::String;
    let d = |u| Literal::Decimal {
        unscaled: u,
        precision: 9,
        scale: 2,
    };
    let uuid = {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&123i64.to_be_bytes());
        bytes[8..].copy_from_slice(&456i64.to_be_bytes());
        Literal::Uuid(bytes)
    };
    run(vec![
        case!(b, int, bin(Eq, int, Literal::Int(100)), "= 6", "false"),
        case!(b, int, bin(NotEq, int, Literal::Int(100)), "true", "!= 6"),
        case!(b, int, bin(Lt, int, Literal::Int(100)), "true", "false"),
        case!(b, int, bin(GtEq, int, Literal::Int(100)), "true", "false"),
        case!(
            b,
            int,
            set(
                SetOp::In,
                int,
                vec![Literal::Int(99), Literal::Int(100), Literal::Int(101)]
            ),
            "in [6, 7, 8]",
            "false"
        ),
        case!(
            b,
            int,
            set(
                SetOp::NotIn,
                int,
                vec![Literal::Int(99), Literal::Int(100), Literal::Int(101)]
            ),
            "true",
            "not in [6, 7, 8]"
        ),
        case!(b, long, bin(Eq, long, Literal::Long(100)), "= 6", "false"),
        case!(
            b,
            long,
            bin(NotEq, long, Literal::Long(100)),
            "true",
            "!= 6"
        ),
        case!(b, dec, bin(Eq, dec, d(10000)), "= 2", "false"),
        case!(b, dec, bin(NotEq, dec, d(10000)), "true", "!= 2"),
        case!(
            b,
            s,
            bin(Eq, s, Literal::String("abcdefg".into())),
            "= 4",
            "false"
        ),
        case!(
            b,
            s,
            set(
                SetOp::In,
                s,
                vec![
                    Literal::String("abcdefg".into()),
                    Literal::String("abcdefgabc".into())
                ]
            ),
            "in [4, 9]",
            "false"
        ),
        case!(
            b,
            s,
            bin(StartsWith, s, Literal::String("abc".into())),
            "true",
            "false"
        ),
        case!(
            b,
            PrimitiveType::Binary,
            bin(
                Eq,
                PrimitiveType::Binary,
                Literal::Binary(b"abcdefg".to_vec())
            ),
            "= 4",
            "false"
        ),
        case!(
            b,
            PrimitiveType::Uuid,
            bin(Eq, PrimitiveType::Uuid, uuid.clone()),
            "= 4",
            "false"
        ),
        case!(
            b,
            PrimitiveType::Uuid,
            bin(NotEq, PrimitiveType::Uuid, uuid),
            "true",
            "!= 4"
        ),
        case!(
            b,
            int,
            Predicate::unary(UnaryOp::IsNull, source(int)),
            "is_null",
            "is_null"
        ),
        case!(
            b,
            int,
            Predicate::unary(UnaryOp::NotNull, source(int)),
            "not_null",
            "not_null"
        ),
    ]);
}

#[test]
fn truncating_numbers() {
    use BinaryOp::*;
    let t = Transform::Truncate(10);
    let int = PrimitiveType::Int;
    let dec = PrimitiveType::Decimal {
        precision: 9,
        scale: 2,
    };
    let d = |u| Literal::Decimal {
        unscaled: u,
        precision: 9,
        scale: 2,
    };
    let i = Literal::Int;
    run(vec![
        // lower boundary of a bucket: 100
        case!(
            t,
            int,
            bin(Lt, int, i(100)),
            "<= 90 or = 2147483646",
            "< 100"
        ),
        case!(
            t,
            int,
            bin(LtEq, int, i(100)),
            "<= 100 or = 2147483646",
            "< 100"
        ),
        case!(
            t,
            int,
            bin(Gt, int, i(100)),
            ">= 100",
            "> 100 and != 2147483646"
        ),
        case!(
            t,
            int,
            bin(GtEq, int, i(100)),
            ">= 100",
            "> 90 and != 2147483646"
        ),
        case!(t, int, bin(Eq, int, i(100)), "= 100", "false"),
        case!(t, int, bin(NotEq, int, i(100)), "true", "!= 100"),
        case!(
            t,
            int,
            set(SetOp::In, int, vec![i(99), i(100), i(101)]),
            "in [100, 90]",
            "false"
        ),
        case!(
            t,
            int,
            set(SetOp::NotIn, int, vec![i(99), i(100), i(101)]),
            "true",
            "not in [100, 90]"
        ),
        // upper boundary: 99
        case!(t, int, bin(Lt, int, i(99)), "<= 90 or = 2147483646", "< 90"),
        case!(
            t,
            int,
            bin(LtEq, int, i(99)),
            "<= 90 or = 2147483646",
            "< 100"
        ),
        case!(
            t,
            int,
            bin(Gt, int, i(99)),
            ">= 100",
            "> 90 and != 2147483646"
        ),
        case!(
            t,
            int,
            bin(GtEq, int, i(99)),
            ">= 90",
            "> 90 and != 2147483646"
        ),
        // negative values floor
        case!(t, int, bin(Eq, int, i(-1)), "= -10", "false"),
        case!(
            t,
            int,
            bin(Lt, int, i(-10)),
            "<= -20 or = 2147483646",
            "< -10"
        ),
        // overflow at the edge of the type: no projection
        case!(t, int, bin(Lt, int, i(i32::MIN)), "true", "false"),
        // a width dividing 2^31 never wraps
        case!(
            Transform::Truncate(16),
            int,
            bin(Lt, int, i(100)),
            "<= 96",
            "< 96"
        ),
        // Java wraps values within W of the minimum to a partition near the maximum
        case!(t, int, bin(Eq, int, i(i32::MIN)), "= 2147483646", "false"),
        case!(
            t,
            int,
            bin(Lt, int, i(-5)),
            "<= -10 or = 2147483646",
            "< -10"
        ),
        case!(
            t,
            PrimitiveType::Long,
            bin(Gt, PrimitiveType::Long, Literal::Long(100)),
            ">= 100",
            "> 100 and != 9223372036854775806"
        ),
        // decimal(9,2) 100.00 under truncate[10] of the unscaled value
        case!(t, dec, bin(Lt, dec, d(10000)), "<= 99.90", "< 100.00"),
        case!(t, dec, bin(LtEq, dec, d(10000)), "<= 100.00", "< 100.00"),
        case!(t, dec, bin(Gt, dec, d(10000)), ">= 100.00", "> 100.00"),
        case!(t, dec, bin(GtEq, dec, d(10000)), ">= 100.00", "> 99.90"),
        case!(t, dec, bin(Eq, dec, d(10000)), "= 100.00", "false"),
        case!(t, dec, bin(NotEq, dec, d(10000)), "true", "!= 100.00"),
    ]);
}

#[test]
fn truncating_strings() {
    use BinaryOp::*;
    let t = Transform::Truncate(5);
    let s = PrimitiveType::String;
    let st = |v: &str| Literal::String(v.into());
    run(vec![
        case!(t, s, bin(Lt, s, st("abcdefg")), "<= abcde", "< abcde"),
        case!(t, s, bin(LtEq, s, st("abcdefg")), "<= abcde", "< abcde"),
        case!(t, s, bin(Gt, s, st("abcdefg")), ">= abcde", "> abcde"),
        case!(t, s, bin(GtEq, s, st("abcdefg")), ">= abcde", "> abcde"),
        case!(t, s, bin(Eq, s, st("abcdefg")), "= abcde", "false"),
        case!(t, s, bin(NotEq, s, st("abcdefg")), "true", "!= abcde"),
        case!(t, s, bin(StartsWith, s, st("abcdefg")), "= abcde", "false"),
        case!(
            t,
            s,
            bin(NotStartsWith, s, st("abcdefg")),
            "true",
            "not_starts_with abcde"
        ),
        case!(
            t,
            s,
            bin(StartsWith, s, st("abc")),
            "starts_with abc",
            "starts_with abc"
        ),
        case!(
            t,
            s,
            bin(NotStartsWith, s, st("abc")),
            "not_starts_with abc",
            "not_starts_with abc"
        ),
        case!(t, s, bin(StartsWith, s, st("abcde")), "= abcde", "= abcde"),
        case!(
            t,
            s,
            bin(NotStartsWith, s, st("abcde")),
            "!= abcde",
            "!= abcde"
        ),
        case!(
            t,
            s,
            set(SetOp::In, s, vec![st("abcdefg"), st("abcdefgabc")]),
            "= abcde",
            "false"
        ),
        case!(
            t,
            s,
            set(SetOp::NotIn, s, vec![st("abcdefg"), st("abcdefgabc")]),
            "true",
            "!= abcde"
        ),
        // lengths count code points: 2 code points of 2 and 4 bytes are shorter than 5
        case!(
            t,
            s,
            bin(StartsWith, s, st("é😀")),
            "starts_with é😀",
            "starts_with é😀"
        ),
        case!(
            t,
            s,
            bin(NotStartsWith, s, st("é😀")),
            "not_starts_with é😀",
            "not_starts_with é😀"
        ),
        case!(
            Transform::Truncate(2),
            s,
            bin(StartsWith, s, st("é😀")),
            "= é😀",
            "= é😀"
        ),
        case!(
            Transform::Truncate(1),
            s,
            bin(StartsWith, s, st("é😀")),
            "= é",
            "false"
        ),
        case!(
            Transform::Truncate(1),
            s,
            bin(NotStartsWith, s, st("é😀")),
            "true",
            "not_starts_with é"
        ),
    ]);
    let b = PrimitiveType::Binary;
    let bytes = |v: &[u8]| Literal::Binary(v.to_vec());
    let Some(Predicate::Binary { op, literal, .. }) = project_inclusive(
        &Transform::Truncate(3),
        &partition(&Transform::Truncate(3), b),
        &bin(Lt, b, bytes(b"abcdefg")),
    )
    .unwrap() else {
        panic!("binary truncate must project");
    };
    assert_eq!((op, literal), (LtEq, bytes(b"abc")));
}

#[test]
fn dates() {
    use BinaryOp::*;
    let d = PrimitiveType::Date;
    run(vec![
        // month: 2017-12-01 is month 575, 1969-01-01 month -12, 1969-12-31 month -1
        case!(
            Transform::Month,
            d,
            bin(Lt, d, date("2017-12-01")),
            "<= 574",
            "< 575"
        ),
        case!(
            Transform::Month,
            d,
            bin(LtEq, d, date("2017-12-01")),
            "<= 575",
            "< 575"
        ),
        case!(
            Transform::Month,
            d,
            bin(Gt, d, date("2017-12-01")),
            ">= 575",
            "> 575"
        ),
        case!(
            Transform::Month,
            d,
            bin(GtEq, d, date("2017-12-01")),
            ">= 575",
            "> 574"
        ),
        case!(
            Transform::Month,
            d,
            bin(Eq, d, date("2017-12-01")),
            "= 575",
            "false"
        ),
        case!(
            Transform::Month,
            d,
            bin(NotEq, d, date("2017-12-01")),
            "true",
            "!= 575"
        ),
        case!(
            Transform::Month,
            d,
            bin(Lt, d, date("2017-12-31")),
            "<= 575",
            "< 575"
        ),
        case!(
            Transform::Month,
            d,
            bin(LtEq, d, date("2017-12-31")),
            "<= 575",
            "< 576"
        ),
        case!(
            Transform::Month,
            d,
            bin(Gt, d, date("2017-12-31")),
            ">= 576",
            "> 575"
        ),
        case!(
            Transform::Month,
            d,
            bin(Lt, d, date("1969-01-01")),
            "<= -12",
            "< -12"
        ),
        case!(
            Transform::Month,
            d,
            bin(LtEq, d, date("1969-01-01")),
            "<= -11",
            "< -12"
        ),
        case!(
            Transform::Month,
            d,
            bin(Gt, d, date("1969-01-01")),
            ">= -12",
            "> -11"
        ),
        case!(
            Transform::Month,
            d,
            bin(GtEq, d, date("1969-01-01")),
            ">= -12",
            "> -12"
        ),
        case!(
            Transform::Month,
            d,
            bin(Eq, d, date("1969-01-01")),
            "in [-11, -12]",
            "false"
        ),
        case!(
            Transform::Month,
            d,
            bin(NotEq, d, date("1969-01-01")),
            "true",
            "not in [-11, -12]"
        ),
        case!(
            Transform::Month,
            d,
            bin(Lt, d, date("1969-12-31")),
            "<= 0",
            "< -1"
        ),
        case!(
            Transform::Month,
            d,
            bin(LtEq, d, date("1969-12-31")),
            "<= 0",
            "< 0"
        ),
        case!(
            Transform::Month,
            d,
            bin(Gt, d, date("1969-12-31")),
            ">= 0",
            "> 0"
        ),
        case!(
            Transform::Month,
            d,
            bin(GtEq, d, date("1969-12-31")),
            ">= -1",
            "> 0"
        ),
        case!(
            Transform::Month,
            d,
            bin(Eq, d, date("1969-12-31")),
            "in [-1, 0]",
            "false"
        ),
        case!(
            Transform::Month,
            d,
            bin(Gt, d, date("1970-01-01")),
            ">= 0",
            "> 1"
        ),
        case!(
            Transform::Month,
            d,
            set(SetOp::In, d, vec![date("1969-01-01"), date("1969-12-31")]),
            "in [-1, -11, -12, 0]",
            "false"
        ),
        // year: 2017 is 47, 1969 is -1
        case!(
            Transform::Year,
            d,
            bin(Lt, d, date("2017-01-01")),
            "<= 46",
            "< 47"
        ),
        case!(
            Transform::Year,
            d,
            bin(GtEq, d, date("2017-01-01")),
            ">= 47",
            "> 46"
        ),
        case!(
            Transform::Year,
            d,
            bin(Eq, d, date("1969-06-01")),
            "in [-1, 0]",
            "false"
        ),
        // day on a date is the date itself
        case!(
            Transform::Day,
            d,
            bin(Lt, d, date("2017-01-01")),
            "<= 17166",
            "< 17167"
        ),
        case!(
            Transform::Day,
            d,
            bin(Eq, d, date("1969-12-31")),
            "in [-1, 0]",
            "false"
        ),
    ]);
}

#[test]
fn timestamps() {
    use BinaryOp::*;
    let t = PrimitiveType::Timestamp;
    let v = ts("2017-12-01T10:12:55.038194");
    let neg = ts("1969-12-31T23:59:59.999999");
    run(vec![
        case!(
            Transform::Day,
            t,
            bin(Lt, t, v.clone()),
            "<= 17501",
            "< 17501"
        ),
        case!(
            Transform::Day,
            t,
            bin(Gt, t, v.clone()),
            ">= 17501",
            "> 17501"
        ),
        case!(Transform::Day, t, bin(Eq, t, v.clone()), "= 17501", "false"),
        case!(
            Transform::Hour,
            t,
            bin(Eq, t, v.clone()),
            "= 420034",
            "false"
        ),
        case!(
            Transform::Month,
            t,
            bin(LtEq, t, v.clone()),
            "<= 575",
            "< 575"
        ),
        case!(Transform::Year, t, bin(GtEq, t, v), ">= 47", "> 47"),
        case!(Transform::Day, t, bin(Lt, t, neg.clone()), "<= 0", "< -1"),
        case!(Transform::Day, t, bin(LtEq, t, neg.clone()), "<= 0", "< 0"),
        case!(Transform::Day, t, bin(Gt, t, neg.clone()), ">= 0", "> 0"),
        case!(Transform::Day, t, bin(GtEq, t, neg.clone()), ">= -1", "> 0"),
        case!(
            Transform::Day,
            t,
            bin(Eq, t, neg.clone()),
            "in [-1, 0]",
            "false"
        ),
        case!(
            Transform::Hour,
            t,
            bin(Lt, t, ts("1970-01-01T00:00:00")),
            "<= 0",
            "< 0"
        ),
        case!(Transform::Hour, t, bin(Eq, t, neg), "in [-1, 0]", "false"),
        case!(
            Transform::Day,
            PrimitiveType::TimestampNs,
            bin(Eq, PrimitiveType::TimestampNs, Literal::TimestampNs(-1)),
            "in [-1, 0]",
            "false"
        ),
    ]);
}

#[test]
fn identity_and_void() {
    use BinaryOp::*;
    let f = PrimitiveType::Double;
    run(vec![
        case!(
            Transform::Identity,
            f,
            Predicate::unary(UnaryOp::IsNan, source(f)),
            "is_nan",
            "is_nan"
        ),
        case!(
            Transform::Identity,
            f,
            bin(NotEq, f, Literal::Double(1.0)),
            "!= 1",
            "!= 1"
        ),
        case!(
            Transform::Void,
            f,
            bin(Eq, f, Literal::Double(1.0)),
            "true",
            "false"
        ),
        case!(
            Transform::Bucket(4),
            PrimitiveType::Int,
            Predicate::unary(UnaryOp::NotNan, source(f)),
            "true",
            "false"
        ),
    ]);
}
