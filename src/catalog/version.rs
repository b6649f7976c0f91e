//! Time travel: which snapshot of a table to read.
//!
//! Source: Iceberg spec, "Snapshots" (`timestamp-ms`), "Snapshot References" (branches
//! and tags) and Appendix C (`snapshot-log`: when each snapshot became current). As in
//! Iceberg Java's `SnapshotUtil.snapshotIdAsOfTime`, the snapshot as of a time is the last
//! `snapshot-log` entry at or before it — the snapshot that was *current* then, which is
//! not always the newest snapshot committed before it (rollbacks, staged commits).

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

use crate::error::{Error, Result};
use crate::spec::{Snapshot, TableMetadata, MAIN_BRANCH};

/// Which snapshot of a table to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableVersion {
    /// The current snapshot (of the `main` branch).
    Current,
    /// A snapshot by `snapshot-id`.
    SnapshotId(i64),
    /// The snapshot a branch or tag points at.
    Ref(String),
    /// The snapshot that was current at this time, in ms since the Unix epoch (UTC).
    AsOfTimestampMs(i64),
}

/// Format ms since epoch as `YYYY-MM-DDTHH:MM:SS.sssZ` for messages.
pub(crate) fn format_ms(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => format!("{ms} ms"),
    }
}

/// Parse a timestamp into ms since the epoch: RFC 3339 (`2026-01-01T10:00:00Z`,
/// `…+02:00`), or without a zone (`2026-01-01 10:00:00[.fff]`, `2026-01-01T10:00:00`,
/// `2026-01-01`) read as UTC. Sub-millisecond digits are dropped (floor).
pub fn parse_timestamp_ms(text: &str) -> Option<i64> {
    parse_zoned_timestamp_ms(text)
        .or_else(|| parse_local_timestamp(text).map(|t| t.and_utc().timestamp_millis()))
}

/// A timestamp that names its zone (RFC 3339's offset, a `Z` or ` UTC` suffix) as ms
/// since the epoch; `None` for one without a zone or no timestamp.
pub fn parse_zoned_timestamp_ms(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.timestamp_millis());
    }
    let rest = text
        .strip_suffix('Z')
        .or_else(|| text.strip_suffix(" UTC"))?;
    parse_zoned_timestamp_ms(rest)
        .or_else(|| parse_local_timestamp(rest).map(|t| t.and_utc().timestamp_millis()))
}

/// A timestamp without a zone (`2026-01-01 10:00:00[.fff]`, `2026-01-01T10:00[:00]`, a
/// date as its midnight) as a wall-clock time; `None` for another form.
pub fn parse_local_timestamp(text: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    for fmt in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, fmt) {
            return Some(t);
        }
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
}

impl TableVersion {
    /// Interpret the text after `@` in a table name (`orders@v1-tag`): the snapshot of
    /// that id if it is an integer the table has a snapshot of (Spark's `VERSION AS OF`
    /// reads an integer as a snapshot id before it looks for a ref, so a tag named like
    /// another snapshot's id does not hide that snapshot); else a branch or tag of that
    /// name if the table has one (`main` always: of a table without snapshots it is the
    /// current, empty state, as in Iceberg Java); else a snapshot id if it is an integer;
    /// else a timestamp (see [`parse_timestamp_ms`]). Errors:
    /// [`crate::ErrorKind::NotFound`] naming the text when it is none of these.
    pub fn from_suffix(text: &str, metadata: &TableMetadata, table: &str) -> Result<TableVersion> {
        if let Some(id) = text
            .parse::<i64>()
            .ok()
            .filter(|id| metadata.snapshot_by_id(*id).is_some())
        {
            return Ok(TableVersion::SnapshotId(id));
        }
        if metadata.refs.contains_key(text) || text == MAIN_BRANCH {
            return Ok(TableVersion::Ref(text.to_string()));
        }
        if let Ok(id) = text.parse::<i64>() {
            return Ok(TableVersion::SnapshotId(id));
        }
        if let Some(ms) = parse_timestamp_ms(text) {
            return Ok(TableVersion::AsOfTimestampMs(ms));
        }
        Err(Error::not_found(format!(
            "branch or tag '{text}' in table '{table}' (and '{text}' is neither a snapshot id \
             nor a timestamp); refs: {}",
            ref_names(metadata)
        )))
    }

    /// Build from a key and value, as the table functions take them: `snapshot_id`,
    /// `ref` (also `branch`, `tag`) or `as_of` (also `timestamp`; a timestamp text or ms
    /// since the epoch).
    pub fn from_key_value(key: &str, value: &str) -> Result<TableVersion> {
        match key.to_ascii_lowercase().as_str() {
            "snapshot_id" | "snapshot" | "version" => value
                .trim()
                .parse::<i64>()
                .map(TableVersion::SnapshotId)
                .map_err(|_| {
                    Error::invalid_argument(format!("snapshot_id '{value}' is not an integer"))
                }),
            "ref" | "branch" | "tag" => Ok(TableVersion::Ref(value.to_string())),
            "as_of" | "timestamp" | "as_of_timestamp" => value
                .trim()
                .parse::<i64>()
                .ok()
                .or_else(|| parse_timestamp_ms(value))
                .map(TableVersion::AsOfTimestampMs)
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "as_of '{value}' is not a timestamp (e.g. '2026-01-01T10:00:00Z') \
                         or ms since the epoch"
                    ))
                }),
            other => Err(Error::invalid_argument(format!(
                "unknown time-travel key '{other}' (expected snapshot_id, ref or as_of)"
            ))),
        }
    }

    /// The snapshot this version names in `metadata` (`None` only for
    /// [`TableVersion::Current`] of a table without snapshots). `table` names the table
    /// in messages.
    ///
    /// Errors ([`crate::ErrorKind::NotFound`]): an unknown snapshot id, branch or tag, a
    /// timestamp before the table's first snapshot, or one whose snapshot (per the
    /// snapshot log) was expired, naming the oldest snapshot kept — each named.
    pub fn resolve<'a>(
        &self,
        metadata: &'a TableMetadata,
        table: &str,
    ) -> Result<Option<&'a Snapshot>> {
        let by_id = |id: i64, what: &str| {
            metadata.snapshot_by_id(id).map(Some).ok_or_else(|| {
                Error::not_found(format!("snapshot id {id}{what} in table '{table}'"))
            })
        };
        match self {
            TableVersion::Current => Ok(metadata.current_snapshot()),
            TableVersion::SnapshotId(id) => by_id(*id, ""),
            TableVersion::Ref(name) => match metadata.refs.get(name) {
                Some(r) => by_id(r.snapshot_id, &format!(" (of {} '{name}')", r.ref_type)),
                // a table without snapshots has no `main` ref yet: its current state
                None if name == MAIN_BRANCH => Ok(metadata.current_snapshot()),
                None => Err(Error::not_found(format!(
                    "branch or tag '{name}' in table '{table}'; refs: {}",
                    ref_names(metadata)
                ))),
            },
            TableVersion::AsOfTimestampMs(ms) => {
                let id = snapshot_id_as_of(metadata, *ms).ok_or_else(|| {
                    // the log may have been cut at the expired snapshots (as Java's is):
                    // a kept snapshot whose parent is gone shows history was expired
                    let oldest = metadata.snapshots.iter().min_by_key(|s| s.timestamp_ms);
                    // (when the time asked for is before that snapshot: after it, what
                    // was cut is the log after it, said below)
                    let cut = oldest.filter(|s| *ms < s.timestamp_ms).and_then(|s| {
                        s.parent_snapshot_id
                            .filter(|p| metadata.snapshot_by_id(*p).is_none())
                            .map(|p| (s, p))
                    });
                    if let Some((s, parent)) = cut {
                        return Error::not_found(format!(
                            "snapshot as of {} in table '{table}': no snapshot kept was current \
                             then; the table's history before {} was expired (the oldest \
                             snapshot kept, {}, has parent {parent}, which is no longer kept)",
                            format_ms(*ms),
                            format_ms(s.timestamp_ms),
                            s.snapshot_id
                        ));
                    }
                    // snapshots were expired and one from before the log's first entry
                    // is kept (by a tag or branch, or as an ancestor of a rolled-back-to
                    // snapshot): the log was cut at the expired snapshots after it
                    let log_start = metadata.snapshot_log.iter().map(|e| e.timestamp_ms).min();
                    let expired = snapshots_were_expired(metadata);
                    let kept = metadata
                        .snapshots
                        .iter()
                        .filter(|s| s.timestamp_ms <= *ms)
                        .min_by_key(|s| s.timestamp_ms);
                    if let (Some(start), Some(s), true) = (log_start, kept, expired) {
                        return Error::not_found(format!(
                            "snapshot as of {} in table '{table}': the table's history before \
                             {} was expired, so which snapshot was current then is no longer \
                             known (snapshot {} from {} is kept, but the log entries of that \
                             time are not)",
                            format_ms(*ms),
                            format_ms(start),
                            s.snapshot_id,
                            format_ms(s.timestamp_ms)
                        ));
                    }
                    let first = first_snapshot_ms(metadata)
                        .map(|f| format!("; its first snapshot is from {}", format_ms(f)))
                        .unwrap_or_else(|| "; it has no snapshots".into());
                    Error::not_found(format!(
                        "snapshot as of {} in table '{table}': no snapshot was current then{first}",
                        format_ms(*ms)
                    ))
                })?;
                if metadata.snapshot_by_id(id).is_none() {
                    // the log names the snapshot current then, but it was expired (Java
                    // drops such log entries, and then finds no snapshot that old)
                    let oldest = metadata
                        .snapshots
                        .iter()
                        .min_by_key(|s| s.timestamp_ms)
                        .map(|s| {
                            format!(
                                "; the oldest snapshot kept is {} from {}",
                                s.snapshot_id,
                                format_ms(s.timestamp_ms)
                            )
                        })
                        .unwrap_or_default();
                    return Err(Error::not_found(format!(
                        "snapshot as of {} in table '{table}': the table's history at that \
                         time was expired (snapshot {id}, current then, is no longer kept){oldest}",
                        format_ms(*ms)
                    )));
                }
                by_id(id, &format!(" (current as of {})", format_ms(*ms)))
            }
        }
    }
}

fn ref_names(metadata: &TableMetadata) -> String {
    let mut names: Vec<&str> = metadata.refs.keys().map(String::as_str).collect();
    names.sort_unstable();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Whether snapshots of the table were removed (expired): a kept snapshot's parent is
/// gone, or (v2+) fewer kept snapshots carry a sequence number than the table has given
/// out (`last-sequence-number`: each committed snapshot takes the next one, so a gap is
/// a snapshot removed — a rolled-back one has no child to tell it by).
fn snapshots_were_expired(metadata: &TableMetadata) -> bool {
    let orphaned = metadata.snapshots.iter().any(|s| {
        s.parent_snapshot_id
            .is_some_and(|p| metadata.snapshot_by_id(p).is_none())
    });
    let numbered = metadata
        .snapshots
        .iter()
        .filter(|s| s.sequence_number > 0)
        .map(|s| s.sequence_number)
        .collect::<std::collections::HashSet<_>>()
        .len();
    orphaned || i64::try_from(numbered).is_ok_and(|n| n < metadata.last_sequence_number)
}

fn first_snapshot_ms(metadata: &TableMetadata) -> Option<i64> {
    let log = metadata.snapshot_log.iter().map(|e| e.timestamp_ms);
    let snaps = metadata.snapshots.iter().map(|s| s.timestamp_ms);
    log.chain(snaps).min()
}

/// The id of the snapshot that was current at `ms` (ms since epoch): the last
/// `snapshot-log` entry at or before it (Java `SnapshotUtil.snapshotIdAsOfTime`). That
/// snapshot may have been expired since: callers look it up (an earlier snapshot still
/// kept was not current then). Tables without a snapshot log fall back to the ancestors
/// of the current snapshot by `timestamp-ms`.
pub fn snapshot_id_as_of(metadata: &TableMetadata, ms: i64) -> Option<i64> {
    if !metadata.snapshot_log.is_empty() {
        return metadata
            .snapshot_log
            .iter()
            .filter(|e| e.timestamp_ms <= ms)
            .max_by_key(|e| e.timestamp_ms)
            .map(|e| e.snapshot_id);
    }
    ancestors(metadata, metadata.current_snapshot_id)
        .into_iter()
        .find(|s| s.timestamp_ms <= ms)
        .map(|s| s.snapshot_id)
}

/// The snapshot `start` and its ancestors, newest first (stops at a missing parent).
pub fn ancestors(metadata: &TableMetadata, start: Option<i64>) -> Vec<&Snapshot> {
    let mut out = vec![];
    let mut next = start;
    while let Some(id) = next {
        let Some(s) = metadata.snapshot_by_id(id) else {
            break;
        };
        if out.iter().any(|o: &&Snapshot| o.snapshot_id == id) {
            break; // a cycle would be corrupt metadata; do not loop forever
        }
        out.push(s);
        next = s.parent_snapshot_id;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata() -> TableMetadata {
        let j = serde_json::json!({
            "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": "/t", "last-sequence-number": 2, "last-updated-ms": 3000,
            "last-column-id": 1, "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "x", "required": false, "type": "long"}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
            "last-partition-id": 999, "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "current-snapshot-id": 2,
            "snapshots": [
                {"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1000,
                 "manifest-list": "/t/m1.avro", "summary": {"operation": "append"}},
                {"snapshot-id": 2, "parent-snapshot-id": 1, "sequence-number": 2,
                 "timestamp-ms": 2000, "manifest-list": "/t/m2.avro",
                 "summary": {"operation": "append"}}],
            "snapshot-log": [{"snapshot-id": 1, "timestamp-ms": 1000},
                             {"snapshot-id": 2, "timestamp-ms": 2000}],
            "refs": {"main": {"snapshot-id": 2, "type": "branch"},
                     "v1": {"snapshot-id": 1, "type": "tag"}}
        });
        TableMetadata::from_json(&j.to_string()).unwrap()
    }

    #[test]
    fn resolves_versions() {
        let m = metadata();
        let id = |v: TableVersion| v.resolve(&m, "t").unwrap().map(|s| s.snapshot_id);
        assert_eq!(id(TableVersion::Current), Some(2));
        assert_eq!(id(TableVersion::SnapshotId(1)), Some(1));
        assert_eq!(id(TableVersion::Ref("v1".into())), Some(1));
        assert_eq!(id(TableVersion::AsOfTimestampMs(1000)), Some(1));
        assert_eq!(id(TableVersion::AsOfTimestampMs(1999)), Some(1));
        assert_eq!(id(TableVersion::AsOfTimestampMs(5000)), Some(2));
    }

    /// `main` of a table without snapshots is its current, empty state (Iceberg Java,
    /// Spark's `t.branch_main`), not an unknown ref.
    #[test]
    fn main_of_a_table_without_snapshots_is_empty() {
        let mut m = metadata();
        m.snapshots.clear();
        m.snapshot_log.clear();
        m.refs.clear();
        m.current_snapshot_id = None;
        let main = TableVersion::from_suffix("main", &m, "t").unwrap();
        assert_eq!(main, TableVersion::Ref("main".into()));
        assert_eq!(main.resolve(&m, "t").unwrap(), None);
        assert!(TableVersion::Ref("dev".into()).resolve(&m, "t").is_err());
    }

    #[test]
    fn errors_name_what_is_missing() {
        let m = metadata();
        let err = TableVersion::SnapshotId(42)
            .resolve(&m, "ns.t")
            .unwrap_err();
        assert!(
            err.to_string().contains("snapshot id 42 in table 'ns.t'"),
            "{err}"
        );
        let err = TableVersion::Ref("nope".into())
            .resolve(&m, "t")
            .unwrap_err();
        assert!(
            err.to_string().contains("'nope'") && err.to_string().contains("main, v1"),
            "{err}"
        );
        let err = TableVersion::AsOfTimestampMs(999)
            .resolve(&m, "t")
            .unwrap_err();
        assert!(
            err.to_string().contains("1970-01-01T00:00:00.999Z"),
            "{err}"
        );
        assert_eq!(err.kind(), crate::ErrorKind::NotFound);
    }

    /// A time whose snapshot (per the snapshot log) was expired is refused as expired
    /// history, naming the oldest snapshot kept, and never answered by an earlier snapshot
    /// still kept (it was not current then).
    #[test]
    fn as_of_an_expired_snapshot_says_the_history_was_expired() {
        let mut m = metadata();
        // snapshot 3 was current from 1500 to 2000, then expired; 1 is kept (tag v1)
        m.snapshot_log.insert(
            1,
            crate::spec::snapshot::SnapshotLogEntry {
                snapshot_id: 3,
                timestamp_ms: 1500,
            },
        );
        let err = TableVersion::AsOfTimestampMs(1700)
            .resolve(&m, "ns.t")
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::NotFound);
        let text = err.to_string();
        assert!(
            text.contains(
                "snapshot as of 1970-01-01T00:00:01.700Z in table 'ns.t': the table's history \
                 at that time was expired (snapshot 3, current then, is no longer kept); the \
                 oldest snapshot kept is 1 from 1970-01-01T00:00:01.000Z"
            ),
            "{text}"
        );
        let id = |ms| {
            TableVersion::AsOfTimestampMs(ms)
                .resolve(&m, "t")
                .unwrap()
                .map(|s| s.snapshot_id)
        };
        assert_eq!(id(1499), Some(1));
        assert_eq!(id(2000), Some(2));
        // before every log entry: no snapshot was current
        let err = TableVersion::AsOfTimestampMs(10)
            .resolve(&m, "t")
            .unwrap_err();
        assert!(
            err.to_string().contains("no snapshot was current then"),
            "{err}"
        );
        // the log cut at the expired snapshots (as Java cuts it): snapshot 1 and its log
        // entry gone, 2 kept with parent 1
        m.snapshots.retain(|s| s.snapshot_id == 2);
        m.snapshot_log.retain(|e| e.snapshot_id == 2);
        m.refs.retain(|name, _| name == "main");
        let err = TableVersion::AsOfTimestampMs(1700)
            .resolve(&m, "ns.t")
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::NotFound);
        assert!(
            err.to_string().contains(
                "snapshot as of 1970-01-01T00:00:01.700Z in table 'ns.t': no snapshot kept was \
                 current then; the table's history before 1970-01-01T00:00:02.000Z was expired \
                 (the oldest snapshot kept, 2, has parent 1, which is no longer kept)"
            ),
            "{err}"
        );
    }

    /// Tester Q65 F3: snapshot 2 was rolled back (main back to 1, logged at 3000), 3 was
    /// written on 1, then 2 was expired: no kept snapshot lost its parent, but the log was
    /// cut at 2's entry (as Java's `updateSnapshotLog` cuts it), so a time between 1's
    /// commit and the cut says the history was expired (it said "no snapshot was current
    /// then; its first snapshot is from" a time before the one asked for). A snapshot
    /// log that starts late without an expiry (a snapshot staged, then published) keeps
    /// the plain message.
    #[test]
    fn as_of_a_time_before_a_log_cut_by_an_expired_rolled_back_snapshot() {
        let mut m = metadata();
        let mut third = m.snapshots[1].clone();
        third.snapshot_id = 3;
        third.parent_snapshot_id = Some(1);
        third.sequence_number = 3;
        third.timestamp_ms = 4000;
        m.snapshots.retain(|s| s.snapshot_id == 1);
        m.snapshots.push(third);
        m.last_sequence_number = 3;
        m.refs.retain(|name, _| name == "main");
        if let Some(main) = m.refs.get_mut("main") {
            main.snapshot_id = 3;
        }
        m.current_snapshot_id = Some(3);
        m.snapshot_log = vec![
            crate::spec::snapshot::SnapshotLogEntry {
                snapshot_id: 1,
                timestamp_ms: 3000,
            },
            crate::spec::snapshot::SnapshotLogEntry {
                snapshot_id: 3,
                timestamp_ms: 4000,
            },
        ];
        let err = TableVersion::AsOfTimestampMs(1500)
            .resolve(&m, "ns.t")
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::NotFound);
        assert!(
            err.to_string().contains(
                "snapshot as of 1970-01-01T00:00:01.500Z in table 'ns.t': the table's history \
                 before 1970-01-01T00:00:03.000Z was expired, so which snapshot was current \
                 then is no longer known (snapshot 1 from 1970-01-01T00:00:01.000Z is kept, \
                 but the log entries of that time are not)"
            ),
            "{err}"
        );
        // before every snapshot: none was current
        let err = TableVersion::AsOfTimestampMs(500)
            .resolve(&m, "ns.t")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("no snapshot was current then; its first snapshot is from"),
            "{err}"
        );
        // no snapshot removed (3 took sequence number 2): nothing says history was cut
        if let Some(s) = m.snapshots.iter_mut().find(|s| s.snapshot_id == 3) {
            s.sequence_number = 2;
        }
        m.last_sequence_number = 2;
        let err = TableVersion::AsOfTimestampMs(1500)
            .resolve(&m, "ns.t")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("no snapshot was current then; its first snapshot is from"),
            "{err}"
        );
    }

    /// The log cut at expired snapshots while an older one is kept by a tag (expire with
    /// a tag on the first snapshot, as `expire_snapshots` leaves it): Java finds no
    /// snapshot as of a time before the log's first entry, and the message says the
    /// history was expired (it said "no snapshot was current then; its first snapshot is
    /// from" a time before the one asked for).
    #[test]
    fn as_of_a_time_before_a_cut_log_names_the_cut_not_the_first_snapshot() {
        let mut m = metadata();
        // snapshot 2 expired; 3 (parent 2) current, logged at 3000; 1 kept by tag v1
        let mut third = m.snapshots[1].clone();
        third.snapshot_id = 3;
        third.parent_snapshot_id = Some(2);
        third.timestamp_ms = 3000;
        m.snapshots.retain(|s| s.snapshot_id == 1);
        m.snapshots.push(third);
        m.snapshot_log.retain(|_| false);
        m.snapshot_log
            .push(crate::spec::snapshot::SnapshotLogEntry {
                snapshot_id: 3,
                timestamp_ms: 3000,
            });
        for ms in [1000, 1500, 2999] {
            let err = TableVersion::AsOfTimestampMs(ms)
                .resolve(&m, "ns.t")
                .unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::NotFound);
            let text = err.to_string();
            assert!(
                text.contains(
                    "the table's history before 1970-01-01T00:00:03.000Z was expired, so which \
                     snapshot was current then is no longer known (snapshot 1 from \
                     1970-01-01T00:00:01.000Z is kept, but the log entries of that time are \
                     not)"
                ),
                "{ms}: {text}"
            );
        }
        // before every snapshot: none was current
        let err = TableVersion::AsOfTimestampMs(10)
            .resolve(&m, "ns.t")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("no snapshot was current then; its first snapshot is from"),
            "{err}"
        );
        assert_eq!(
            TableVersion::AsOfTimestampMs(3000)
                .resolve(&m, "t")
                .unwrap()
                .map(|s| s.snapshot_id),
            Some(3)
        );
        // the tagged snapshot's own parent expired too (a tester's table: a tag on a
        // snapshot after the first): a time after it still names the log's cut, not the
        // tagged snapshot's time ("history before 1970-01-01T00:00:01.000Z was expired"
        // for 1.5 s, which is after it)
        m.snapshots[0].parent_snapshot_id = Some(0);
        let err = TableVersion::AsOfTimestampMs(1500)
            .resolve(&m, "ns.t")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("the table's history before 1970-01-01T00:00:03.000Z was expired"),
            "{err}"
        );
        // and a time before it, its parent's expiry
        let err = TableVersion::AsOfTimestampMs(500)
            .resolve(&m, "ns.t")
            .unwrap_err();
        assert!(
            err.to_string().contains(
                "the table's history before 1970-01-01T00:00:01.000Z was expired (the oldest \
                 snapshot kept, 1, has parent 0, which is no longer kept)"
            ),
            "{err}"
        );
    }

    #[test]
    fn suffixes_and_timestamps() {
        let m = metadata();
        assert_eq!(
            TableVersion::from_suffix("v1", &m, "t").unwrap(),
            TableVersion::Ref("v1".into())
        );
        assert_eq!(
            TableVersion::from_suffix("1", &m, "t").unwrap(),
            TableVersion::SnapshotId(1)
        );
        assert_eq!(
            TableVersion::from_suffix("1970-01-01T00:00:01Z", &m, "t").unwrap(),
            TableVersion::AsOfTimestampMs(1000)
        );
        assert!(TableVersion::from_suffix("nope", &m, "t").is_err());
        // a tag named like another snapshot's id does not hide that snapshot (as in
        // Spark's `VERSION AS OF`); a ref named like no snapshot's id is the ref
        let mut tagged = m.clone();
        let tag = tagged.refs["v1"].clone();
        tagged.refs.insert("2".into(), tag.clone());
        tagged.refs.insert("7".into(), tag);
        assert_eq!(
            TableVersion::from_suffix("2", &tagged, "t").unwrap(),
            TableVersion::SnapshotId(2)
        );
        assert_eq!(
            TableVersion::from_suffix("7", &tagged, "t").unwrap(),
            TableVersion::Ref("7".into())
        );
        assert_eq!(parse_timestamp_ms("1970-01-01 00:00:01.5"), Some(1500));
        assert_eq!(parse_timestamp_ms("1970-01-02"), Some(86_400_000));
        assert_eq!(parse_timestamp_ms("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(
            parse_timestamp_ms("1970-01-01T00:00:02.000000Z"),
            Some(2000)
        );
        assert_eq!(
            TableVersion::from_key_value("as_of", "2000").unwrap(),
            TableVersion::AsOfTimestampMs(2000)
        );
        assert!(TableVersion::from_key_value("snapshot_id", "x").is_err());
        assert!(TableVersion::from_key_value("bogus", "1").is_err());
    }
}
