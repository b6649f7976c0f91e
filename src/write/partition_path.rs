//! Partition paths of data files as Iceberg Java builds them (`PartitionSpec.partitionToPath`):
//! `name=value` segments joined by `/`, names and values URL-encoded as Java's
//! `URLEncoder.encode(s, UTF-8)` does, values in the transform's human form
//! ([`crate::transform::human_string`], Java's `Transform.toHumanString`), a null value
//! as `null`. Paths are opaque to readers, so only the layout matters.

use crate::spec::{Literal, PartitionSpec};
use crate::transform::human_string;

/// The partition path of `values` (one per field of `spec`, in order), e.g.
/// `ts_day=2024-06-01/id_bucket=3`; empty for an unpartitioned spec.
pub fn partition_path(spec: &PartitionSpec, values: &[Option<Literal>]) -> String {
    spec.fields
        .iter()
        .zip(values)
        .map(|(f, v)| {
            let human = match v {
                None => "null".to_string(),
                Some(v) => human_string(&f.transform, v),
            };
            format!("{}={}", url_encode(&f.name), url_encode(&human))
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Java's `URLEncoder.encode(s, UTF-8)`: ASCII letters, digits and `.-*_` kept, space
/// as `+`, every other byte of the UTF-8 form as `%XX` (upper-case hex).
pub fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The location of a file named `name` in partition directory `partition_dir` (a
/// [`partition_path`], empty for an unpartitioned spec) under `data_location`.
pub fn file_location(data_location: &str, partition_dir: &str, name: &str) -> String {
    let root = data_location.trim_end_matches('/');
    if partition_dir.is_empty() {
        format!("{root}/{name}")
    } else {
        format!("{root}/{partition_dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{PartitionField, Transform};

    fn field(name: &str, transform: Transform) -> PartitionField {
        PartitionField {
            source_id: 1,
            field_id: None,
            name: name.into(),
            transform,
        }
    }

    #[test]
    fn java_partition_paths() {
        let spec = PartitionSpec {
            spec_id: 1,
            fields: vec![
                field("ts_day", Transform::Day),
                field("id_bucket", Transform::Bucket(4)),
                field("name", Transform::Identity),
                field("n_trunc", Transform::Truncate(3)),
            ],
        };
        let path = partition_path(
            &spec,
            &[
                Some(Literal::Date(19875)),
                Some(Literal::Int(3)),
                Some(Literal::String("a b/c=é".into())),
                None,
            ],
        );
        assert_eq!(
            path,
            "ts_day=2024-06-01/id_bucket=3/name=a+b%2Fc%3D%C3%A9/n_trunc=null"
        );
    }
}
