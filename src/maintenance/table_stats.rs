//! Table statistics of a snapshot's columns: number-of-distinct-values sketches
//! (`apache-datasketches-theta-v1` blobs) in a Puffin statistics file, set on the snapshot
//! (spec: "Table Statistics"; Puffin spec: "Blob types"), as Spark's
//! `compute_table_stats` procedure writes them (Java `ComputeTableStatsSparkAction`,
//! `NDVSketchUtil`, `ThetaSketchAgg`).
//!
//! A column's sketch is a DataSketches theta sketch (nominal entries 4,096, seed 9001: the
//! library defaults, which Java's `UpdateSketch.builder()` uses) updated with each non-null
//! value in its single-value binary form (spec: Appendix D: little-endian numbers, UTF-8
//! strings, …), serialized in DataSketches' compact, ordered form. The blob's `ndv`
//! property is its estimate, rounded down; below 4,096 distinct values it is exact. The
//! file goes next to the table's metadata files as `<snapshot id>-<uuid>.stats`, as Java
//! names it. This module builds the sketches and commits the file; reading the rows is the
//! DataFusion layer's (`compute_table_stats` in SQL).

use std::collections::HashMap;
use std::sync::Arc;

use datasketches::hash::value::raw_bytes;
use datasketches::theta::{ThetaSketch, ThetaSketchBuilder};

use crate::catalog::{metadata_dir, Catalog, TableIdent};
use crate::error::{Error, Result};
use crate::spec::{Literal, Snapshot, StatisticsFile};
use crate::table::Table;
use crate::transaction::{Transaction, UpdateStatistics};
use crate::write::bounds::literal_to_bytes;
use crate::write::statistics_file::{write_statistics_file, StatisticsBlob};

/// The blob type of a theta sketch (Puffin spec).
pub const APACHE_DATASKETCHES_THETA_V1: &str = "apache-datasketches-theta-v1";
/// The blob property holding a theta sketch's estimate of distinct values.
pub const NDV_PROPERTY: &str = "ndv";

/// A theta sketch of one column's distinct non-null values (see the module docs).
#[derive(Debug)]
pub struct NdvSketch {
    field_id: i32,
    sketch: ThetaSketch,
}

impl NdvSketch {
    /// An empty sketch of the column with field id `field_id`.
    ///
    /// Errors: never with the library defaults used ([`crate::ErrorKind::InvalidData`]
    /// should the library refuse them).
    pub fn new(field_id: i32) -> Result<Self> {
        let sketch = ThetaSketchBuilder::default()
            .build()
            .map_err(|e| Error::invalid_data(format!("theta sketch: {e}")))?;
        Ok(Self { field_id, sketch })
    }

    /// Count `value` (a non-null value of the column). A value of no bytes (an empty
    /// string or binary) is not counted, as DataSketches' `update` of an empty buffer,
    /// which Java's sketches go through, rejects it.
    pub fn update(&mut self, value: &Literal) {
        let bytes = literal_to_bytes(value);
        if !bytes.is_empty() {
            self.sketch.update(raw_bytes::from_vec(bytes));
        }
    }

    /// The estimate of distinct values so far, rounded down.
    pub fn ndv(&self) -> u64 {
        self.sketch.estimate() as u64
    }

    /// The column's blob for `snapshot`.
    fn blob(&self, snapshot: &Snapshot) -> StatisticsBlob {
        let compact = self.sketch.compact(true);
        StatisticsBlob {
            blob_type: APACHE_DATASKETCHES_THETA_V1.to_string(),
            fields: vec![self.field_id],
            snapshot_id: snapshot.snapshot_id,
            sequence_number: snapshot.sequence_number,
            data: compact.serialize(),
            properties: HashMap::from([(
                NDV_PROPERTY.to_string(),
                (compact.estimate() as u64).to_string(),
            )]),
        }
    }
}

/// Write the sketches of `snapshot` (one per column, in order) of `table` as a statistics
/// file and commit it as the snapshot's statistics (replacing any it had); the committed
/// [`StatisticsFile`]. The file is deleted again when the commit fails.
///
/// Errors: no sketches ([`crate::ErrorKind::InvalidArgument`]); writing the file
/// ([`crate::ErrorKind::Io`]); the snapshot expired meanwhile
/// ([`crate::ErrorKind::NotFound`]); commit errors.
pub async fn commit_table_stats(
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    table: &Table,
    snapshot: &Snapshot,
    sketches: &[NdvSketch],
) -> Result<StatisticsFile> {
    if sketches.is_empty() {
        return Err(Error::invalid_argument(
            "no columns to compute statistics for",
        ));
    }
    let location = format!(
        "{}/{}-{}.stats",
        metadata_dir(table.metadata()),
        snapshot.snapshot_id,
        uuid::Uuid::new_v4()
    );
    let blobs = sketches.iter().map(|s| s.blob(snapshot)).collect();
    let file =
        write_statistics_file(table.file_io(), &location, snapshot.snapshot_id, blobs).await?;
    Transaction::new(Arc::clone(catalog), ident.clone(), table.clone())
        .add_action(UpdateStatistics::new().set_written_statistics(file.clone()))
        .commit()
        .await?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact below 4,096 distinct values; NULLs are not passed; equal values count once,
    /// values of equal bytes too (the sketch sees Appendix D's bytes); the empty string
    /// is not counted (as Java's sketches reject an empty buffer).
    #[test]
    fn sketches_count_distinct_values() {
        let mut s = NdvSketch::new(1).unwrap();
        for i in 0..1000 {
            s.update(&Literal::Long(i % 300));
        }
        assert_eq!(s.ndv(), 300);
        let mut t = NdvSketch::new(2).unwrap();
        for v in ["a", "b", "a", "", "é"] {
            t.update(&Literal::String(v.into()));
        }
        assert_eq!(t.ndv(), 3);
        let snapshot_json = r#"{"snapshot-id": 7, "sequence-number": 3, "timestamp-ms": 1,
            "manifest-list": "m", "summary": {"operation": "append"}}"#;
        let snapshot: Snapshot = serde_json::from_str(snapshot_json).unwrap();
        let blob = t.blob(&snapshot);
        assert_eq!(blob.properties[NDV_PROPERTY], "3");
        assert_eq!((blob.snapshot_id, blob.sequence_number), (7, 3));
        assert_eq!(blob.fields, [2]);
        // the serialized sketch reads back with the same estimate
        let back = datasketches::theta::CompactThetaSketch::deserialize(&blob.data).unwrap();
        assert_eq!(back.estimate(), 3.0);
    }
}
