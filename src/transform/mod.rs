//! Partition transforms: applying them to values and projecting predicates through them.
//!
//! Source: Iceberg spec, "Partition Transforms", "Bucket Transform Details", "Truncate
//! Transform Details" and Appendix B (hashes). Results are value-exact with Iceberg
//! Java: `bucket[N]` is `(murmur3_x86_32(bytes, seed 0) & i32::MAX) % N`; `truncate[W]`
//! floors negative numbers (`-1` → `-10` for W = 10) and cuts strings by code points and
//! binary by bytes; `year`/`month`/`day`/`hour` count whole periods since
//! 1970-01-01T00:00 UTC, flooring values before 1970 (1969-12-31 is day -1, year -1).
//! `day` yields a `date`, the others an `int`; `void` is always null.

mod bucket;
mod human_string;
mod project;
mod temporal;
mod truncate;

pub use bucket::{bucket_hash, hash_literal};
pub use human_string::human_string;
pub use project::{project_inclusive, project_strict};
pub use temporal::{day, hour, month, year};
pub use truncate::{truncate_binary, truncate_str};

use crate::error::{Error, Result};
use crate::spec::{Literal, Transform};

/// Apply `transform` to a non-null `value`; `Ok(None)` for `void` (always null).
///
/// Errors: the transform does not apply to the value's type (e.g. `year` of a string,
/// `bucket` of a double), or an `unknown` transform.
pub fn apply(transform: &Transform, value: &Literal) -> Result<Option<Literal>> {
    let bad = || Error::invalid_argument(format!("transform {transform} cannot apply to {value}"));
    Ok(Some(match transform {
        Transform::Identity => value.clone(),
        Transform::Void => return Ok(None),
        Transform::Bucket(n) => {
            if *n == 0 {
                return Err(Error::invalid_data("bucket[0] transform"));
            }
            Literal::Int(bucket_hash(hash_literal(value).ok_or_else(bad)?, *n))
        }
        Transform::Truncate(w) => {
            let truncated = truncate::truncate(value, *w).ok_or_else(bad)?;
            match (value, &truncated) {
                (
                    Literal::Decimal { unscaled: v, .. },
                    Literal::Decimal {
                        unscaled: t,
                        precision,
                        scale,
                    },
                ) if !truncate::fits_precision(&truncated) => {
                    return Err(Error::invalid_argument(format!(
                        "{transform} of {} is {}, which does not fit the partition type \
                         decimal({precision}, {scale}) (Iceberg Java and PyIceberg refuse \
                         to write it too)",
                        crate::spec::values::decimal_text(*v, *scale),
                        crate::spec::values::decimal_text(*t, *scale),
                    )));
                }
                _ => truncated,
            }
        }
        Transform::Year => Literal::Int(year(value).ok_or_else(bad)?),
        Transform::Month => Literal::Int(month(value).ok_or_else(bad)?),
        Transform::Day => Literal::Date(day(value).ok_or_else(bad)?),
        Transform::Hour => Literal::Int(hour(value).ok_or_else(bad)?),
        Transform::Unknown(name) => {
            return Err(Error::unsupported(format!(
                "applying the transform '{name}', which icefloe does not know"
            )))
        }
    }))
}

/// Apply `transform` to an optional value (null stays null).
pub fn apply_opt(transform: &Transform, value: Option<&Literal>) -> Result<Option<Literal>> {
    match value {
        None => Ok(None),
        Some(v) => apply(transform, v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_each_transform() {
        let ts = Literal::Timestamptz(-1); // 1969-12-31T23:59:59.999999Z
        let cases: Vec<(Transform, Literal, Option<Literal>)> = vec![
            (Transform::Identity, Literal::Int(5), Some(Literal::Int(5))),
            (Transform::Void, Literal::Int(5), None),
            (
                Transform::Bucket(16),
                Literal::Int(34),
                Some(Literal::Int(2017239379 % 16)),
            ),
            (
                Transform::Truncate(10),
                Literal::Int(-1),
                Some(Literal::Int(-10)),
            ),
            (Transform::Year, ts.clone(), Some(Literal::Int(-1))),
            (Transform::Month, ts.clone(), Some(Literal::Int(-1))),
            (Transform::Day, ts.clone(), Some(Literal::Date(-1))),
            (Transform::Hour, ts, Some(Literal::Int(-1))),
        ];
        for (t, v, expected) in cases {
            assert_eq!(apply(&t, &v).unwrap(), expected, "{t}({v})");
        }
        assert!(apply(&Transform::Year, &Literal::String("x".into())).is_err());
        // a truncated decimal outside its type's precision is no partition value
        let dec = |unscaled| Literal::Decimal {
            unscaled,
            precision: 9,
            scale: 2,
        };
        assert_eq!(
            apply(&Transform::Truncate(10), &dec(-999_999_990)).unwrap(),
            Some(dec(-999_999_990))
        );
        let err = apply(&Transform::Truncate(10), &dec(-999_999_999)).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        assert!(
            err.message()
                .contains("does not fit the partition type decimal(9, 2)"),
            "{err}"
        );
        assert!(apply(&Transform::Bucket(4), &Literal::Double(1.0)).is_err());
    }
}
