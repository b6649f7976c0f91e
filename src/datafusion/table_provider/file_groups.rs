//! How a scan's data files become DataFusion's file groups (its partitions): runs of
//! consecutive files in the order planned, of similar total size ([`split_into_groups`]).
//! The eager scan (`scan.rs`) groups data files, the deferred one (`deferred.rs`) manifests.

use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::FileGroup;

/// Split files into at most `n` groups of similar total size, each a run of consecutive
/// files in the order planned (manifest order, then entry order): group `k` ends at the
/// file boundary nearest to `(k + 1) / n` of the total bytes (earlier when each later
/// group needs one of the files left). A group's end is off its share by at most half a
/// file.
///
/// The planned order is the order the files were written in, which a table written
/// sorted or clustered (by time, by key) follows, as `ListingTable` reads its files in
/// path order (and Iceberg Java packs its scan tasks in planned order): each partition
/// then reads a contiguous part of the table, and a scan of a few large files that
/// DataFusion cuts further by byte range (flattening the groups in order) is cut as
/// `ListingTable`'s is. Largest-first packing interleaved them (TPC-H `lineitem`'s 4
/// files as `4, 1 | 3, 2`); the change moved TPC-H SF1 by less than the runs' spread
/// (`benches/README.md`, "Checked files kept per session, files in the order written").
/// One pass, no sort: a plan of a million files moves each file once.
pub(super) fn split_into_groups(files: Vec<(PartitionedFile, u64)>, n: usize) -> Vec<FileGroup> {
    let n = n.max(1).min(files.len().max(1));
    let total: u128 = files.iter().map(|(_, size)| u128::from(*size)).sum();
    let count = files.len();
    let mut groups: Vec<FileGroup> = Vec::with_capacity(n);
    let mut current = Vec::new();
    let mut bytes: u128 = 0;
    for (i, (file, size)) in files.into_iter().enumerate() {
        let size = u128::from(size);
        let closed = groups.len();
        if !current.is_empty() && closed + 1 < n {
            // the group ends before this file when the share's end lies before the
            // file's middle, or when each later group needs one of the files left
            let groups_after = n - closed - 1;
            let files_left = count - i;
            let share_end = total * (closed as u128 + 1);
            if files_left <= groups_after || (2 * bytes + size) * n as u128 > 2 * share_end {
                groups.push(FileGroup::new(std::mem::take(&mut current)));
            }
        }
        current.push(file);
        bytes += size;
    }
    if !current.is_empty() {
        groups.push(FileGroup::new(current));
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(groups: &[FileGroup]) -> Vec<Vec<String>> {
        groups
            .iter()
            .map(|g| g.iter().map(|f| f.path().to_string()).collect())
            .collect()
    }

    /// Runs of consecutive files in the order planned, cut at the file boundary nearest
    /// each group's share of the bytes; every group gets a file.
    #[test]
    fn files_split_into_runs_in_planned_order() {
        let files = |spec: &[(&str, u64)]| -> Vec<(PartitionedFile, u64)> {
            spec.iter()
                .map(|(name, size)| (PartitionedFile::new(*name, *size), *size))
                .collect()
        };
        // TPC-H lineitem's four files (nearly equal sizes, the last largest): 1, 2 | 3, 4
        let planned = files(&[("1", 58078), ("2", 58086), ("3", 58088), ("4", 58131)]);
        assert_eq!(
            names(&split_into_groups(planned, 2)),
            [vec!["1", "2"], vec!["3", "4"]]
        );
        // the cut nearest to the share's end (6 of 12 bytes): before the file whose
        // middle lies past it (`a`: 4 | 8, not 9 | 3; `b`: 5 | 7, not 8 | 4)
        let planned = files(&[("d", 1), ("c", 3), ("a", 5), ("b", 3)]);
        assert_eq!(
            names(&split_into_groups(planned, 2)),
            [vec!["d", "c"], vec!["a", "b"]]
        );
        let planned = files(&[("a", 5), ("b", 3), ("c", 3), ("d", 1)]);
        assert_eq!(
            names(&split_into_groups(planned, 2)),
            [vec!["a"], vec!["b", "c", "d"]]
        );
        // one large file last: every group still gets a file
        let planned = files(&[("a", 1), ("b", 1), ("c", 1), ("d", 100)]);
        assert_eq!(
            names(&split_into_groups(planned, 3)),
            [vec!["a", "b"], vec!["c"], vec!["d"]]
        );
        // empty files: each group gets one, the first the rest
        let planned = files(&[("a", 0), ("b", 0), ("c", 0)]);
        assert_eq!(
            names(&split_into_groups(planned, 2)),
            [vec!["a", "b"], vec!["c"]]
        );
        // many equal files: equal runs
        let many: Vec<(String, u64)> = (0..12).map(|i| (format!("f{i:02}"), 10)).collect();
        let planned: Vec<(PartitionedFile, u64)> = many
            .iter()
            .map(|(name, size)| (PartitionedFile::new(name.clone(), *size), *size))
            .collect();
        let groups = names(&split_into_groups(planned, 4));
        assert_eq!(
            groups.iter().map(Vec::len).collect::<Vec<_>>(),
            [3, 3, 3, 3]
        );
        assert_eq!(
            groups.concat(),
            many.iter().map(|f| f.0.clone()).collect::<Vec<_>>()
        );
        // more groups than files: one group per file; no files: no group
        let planned = files(&[("x", 2), ("y", 7)]);
        assert_eq!(
            names(&split_into_groups(planned, 8)),
            [vec!["x"], vec!["y"]]
        );
        assert!(split_into_groups(vec![], 4).is_empty());
    }
}
