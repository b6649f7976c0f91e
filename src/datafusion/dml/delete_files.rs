//! The delete files of a merge-on-read change: position delete files (v2; one per data
//! file or per partition, `write.delete.granularity`) or deletion vectors (v3; one per
//! data file, merged with the positions its existing deletes remove).

use std::collections::{BTreeMap, HashMap, HashSet};

use super::job::{DeleteGroup, PartitionKey, Positions};
use crate::datafusion::delete_planning::{DeletePlan, PlannedFile};
use crate::datafusion::insert::data_location;
use crate::delete::{is_deletion_vector, referenced_data_file};
use crate::error::{Error, Result};
use crate::spec::DataFile;
use crate::table::Table;
use crate::write::bounds::literal_to_bytes;
use crate::write::{
    write_deletion_vectors as write_vectors, write_position_delete_file, DataFileWriterConfig,
    DeleteGranularity,
};

/// The planned data files by location: (spec id, file).
pub(super) fn planned_files(plan: &DeletePlan) -> HashMap<&str, (i32, &DataFile)> {
    plan.files
        .iter()
        .map(|f| {
            let d = f.task.data_file();
            (d.file_path.as_str(), (f.task.entry.spec_id, d))
        })
        .collect()
}

/// Position delete files for `positions`, one per data file or per partition.
pub(super) async fn write_position_deletes(
    table: &Table,
    plan: &DeletePlan,
    positions: &Positions,
    written: &mut Vec<DataFile>,
) -> Result<Vec<(i32, DataFile)>> {
    let m = table.metadata();
    let granularity = DeleteGranularity::from_properties(&m.properties)?;
    let config = DataFileWriterConfig::from_properties(&m.properties)?;
    crate::write::check_file_format(
        &m.properties,
        crate::table_properties::DELETE_DEFAULT_FILE_FORMAT,
    )?;
    let planned = planned_files(plan);
    // (spec id, partition key, data file or "") → (partition, [(file, positions)])
    let mut groups: BTreeMap<(i32, PartitionKey, String), DeleteGroup> = BTreeMap::new();
    for (path, rows) in positions {
        let (spec_id, file) = planned.get(path.as_str()).ok_or_else(|| {
            Error::invalid_data(format!(
                "row-level scan returned rows of unplanned file '{path}'"
            ))
        })?;
        let key: Vec<Option<Vec<u8>>> = file
            .partition
            .iter()
            .map(|v| v.as_ref().map(literal_to_bytes))
            .collect();
        let split = match granularity {
            DeleteGranularity::File => path.clone(),
            DeleteGranularity::Partition => String::new(),
        };
        groups
            .entry((*spec_id, key, split))
            .or_insert_with(|| (file.partition.clone(), vec![]))
            .1
            .push((path.clone(), rows.clone()));
    }
    let mut out = vec![];
    for ((spec_id, _, _), (partition, deletes)) in groups {
        let spec = m.partition_spec_by_id(spec_id).ok_or_else(|| {
            Error::invalid_data(format!("the table has no partition spec {spec_id}"))
        })?;
        let file = write_position_delete_file(
            table.file_io(),
            &data_location(table),
            spec,
            partition,
            deletes,
            &config,
        )
        .await?;
        written.push(file.clone());
        out.push((spec_id, file));
    }
    Ok(out)
}

/// v3: a deletion vector per data file in `positions`, holding its new positions and
/// those its existing position deletes and deletion vector already delete (spec: at
/// most one deletion vector per data file per snapshot). Returns the new vectors and
/// the file-scoped delete files they replace — deletion vectors, and v2 position delete
/// files whose `referenced_data_file` is the data file — removed in the same commit.
pub(super) async fn write_deletion_vectors(
    table: &Table,
    plan: &DeletePlan,
    positions: &Positions,
    written: &mut Vec<DataFile>,
) -> Result<(Vec<(i32, DataFile)>, Vec<DataFile>)> {
    let m = table.metadata();
    // every planned entry of each location (more than one when a file was added again)
    let mut planned: HashMap<&str, Vec<&PlannedFile>> = HashMap::new();
    for f in &plan.files {
        planned
            .entry(f.task.data_file().file_path.as_str())
            .or_default()
            .push(f);
    }
    let fully_deleted: HashSet<&str> = plan
        .fully_deleted
        .iter()
        .map(|t| t.data_file().file_path.as_str())
        .collect();
    let mut groups: BTreeMap<(i32, PartitionKey), DeleteGroup> = BTreeMap::new();
    let mut replaced = vec![];
    for (path, rows) in positions {
        let entries = planned.get(path.as_str()).map_or(&[][..], Vec::as_slice);
        let file = check_same_deletes(path, entries, fully_deleted.contains(path.as_str()))?;
        let mut all = rows.clone();
        // the positions its existing deletes delete, loaded when the files were planned
        if let Some(existing) = &file.position {
            all |= existing.deleted.as_ref();
        }
        // the file-scoped deletes of the file are all in the new vector: its deletion
        // vector, and position delete files of it alone (a table upgraded from v2);
        // partition-scoped ones still apply to other files and stay (Java
        // `ContentFileUtil.isFileScoped`, the deletes a DV rewrite removes)
        replaced.extend(
            file.position_deletes
                .iter()
                .filter(|d| {
                    is_deletion_vector(&d.data_file)
                        || referenced_data_file(&d.data_file).as_deref() == Some(path.as_str())
                })
                .map(|d| d.data_file.clone()),
        );
        let data = file.task.data_file();
        let key = data
            .partition
            .iter()
            .map(|v| v.as_ref().map(literal_to_bytes))
            .collect();
        groups
            .entry((file.task.entry.spec_id, key))
            .or_insert_with(|| (data.partition.clone(), vec![]))
            .1
            .push((path.clone(), all));
    }
    // each file-scoped delete once, though several entries of a data file name it
    replaced
        .sort_by(|a, b| (&a.file_path, a.content_offset).cmp(&(&b.file_path, b.content_offset)));
    replaced.dedup_by(|a, b| (&a.file_path, a.content_offset) == (&b.file_path, b.content_offset));
    let mut out = vec![];
    for ((spec_id, _), (partition, vectors)) in groups {
        let spec = m.partition_spec_by_id(spec_id).ok_or_else(|| {
            Error::invalid_data(format!("the table has no partition spec {spec_id}"))
        })?;
        let files = write_vectors(
            table.file_io(),
            &data_location(table),
            spec,
            partition,
            vectors,
        )
        .await?;
        written.extend(files.iter().take(1).cloned());
        out.extend(files.into_iter().map(|f| (spec_id, f)));
    }
    Ok((out, replaced))
}

/// A data file referenced by more than one live manifest entry (added again, e.g. by
/// `add_files` with `check_duplicate_files => false`) gets one deletion vector, which
/// applies to every entry of it (spec: "Scan Planning", deletes matched by location): it
/// can only hold the positions of all of them when they had the same positions deleted
/// before. Refused otherwise — merging one entry's deletes would delete rows of, or bring
/// back rows to, the other.
///
/// `entries`: the planned entries of `path`; `fully_deleted`: another entry of it has
/// every row deleted. Returns the first entry.
///
/// Errors: [`crate::ErrorKind::InvalidData`] when no entry of `path` was planned;
/// [`crate::ErrorKind::Unsupported`] naming the file, when its entries have different
/// positions deleted (or one has every row deleted).
fn check_same_deletes<'p>(
    path: &str,
    entries: &[&'p PlannedFile],
    fully_deleted: bool,
) -> Result<&'p PlannedFile> {
    let Some(first) = entries.first().copied() else {
        return Err(Error::invalid_data(format!(
            "row-level scan returned rows of unplanned file '{path}'"
        )));
    };
    let deleted = |f: &PlannedFile| f.position.as_ref().map(|p| p.deleted.clone());
    if fully_deleted || entries.iter().any(|e| deleted(e) != deleted(first)) {
        return Err(Error::unsupported(format!(
            "a deletion vector for data file '{path}', which is referenced by more than one \
             live manifest entry with different rows deleted (one deletion vector applies to \
             every entry of a file); rewrite the table's data files first \
             (rewrite_data_files), or use write.delete.mode=copy-on-write"
        )));
    }
    Ok(first)
}
