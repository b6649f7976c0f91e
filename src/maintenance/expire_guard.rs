//! Which files `expire_snapshots` may delete: only the table's own. A file the expired
//! snapshots reach is kept (not deleted, and reported) when it lies
//!
//! - outside every directory the table writes under: its location, `write.data.path`,
//!   `write.object-storage.path`, `write.folder-storage.path`, `write.metadata.path`, and
//!   the directory of its current metadata file (the directories
//!   `remove_orphan_files` guards, module `orphan_neighbours`); or
//! - under another table of the catalog: inside that table's location or one of its file
//!   directories, when no directory of this table that holds the file lies deeper (a
//!   table at the warehouse root does not claim the tables nested in it; a location two
//!   tables share is claimed by both, so its files are kept).
//!
//! Java's `ExpireSnapshotsSparkAction` deletes every file the expired snapshots alone
//! reach, wherever it is: metadata pointing at another table's files (a damaged or
//! hand-edited manifest, tester W67 F9) then deletes that table's data. icefloe refuses to
//! delete what may belong to another table; files `add_files` imported from elsewhere
//! are kept by the same rule (they were never written by this table).
//!
//! Cost: when there is something to delete, one listing of the catalog's namespaces and
//! tables and one metadata read per other table (as `remove_orphan_files`).

use super::expire::ExpireSnapshotsResult;
use super::orphan_neighbours::{file_directories, neighbours};
use crate::catalog::{Catalog, TableIdent};
use crate::io::{normalize_location, FileIO};
use crate::table::Table;

/// A directory and whether it is this table's (else another table's, named).
struct Claim {
    directory: String,
    other: Option<TableIdent>,
}

/// `location` remapped and normalised as a file's key is, without a trailing `/`.
fn key(io: &FileIO, location: &str) -> String {
    let k = io
        .remap(location)
        .or_else(|_| normalize_location(location))
        .unwrap_or_else(|_| location.to_string());
    k.trim_end_matches('/').to_string()
}

fn holds(directory: &str, file: &str) -> bool {
    file.strip_prefix(directory)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Why the file at `file_key` is not this table's to delete, if it is not.
fn foreign(claims: &[Claim], file_key: &str) -> Option<String> {
    let deepest = claims
        .iter()
        .filter(|c| holds(&c.directory, file_key))
        .map(|c| c.directory.len())
        .max();
    let Some(depth) = deepest else {
        return Some("outside the table's directories".to_string());
    };
    claims
        .iter()
        .filter(|c| c.directory.len() == depth && holds(&c.directory, file_key))
        .find_map(|c| c.other.as_ref())
        .map(|other| format!("under table '{other}'"))
}

/// Move the files of `result` (of `table`, table `ident` of `catalog`) that are not the
/// table's own (see the module docs) out of its `deleted_*` lists into
/// [`ExpireSnapshotsResult::kept_files`], each with why. When the catalog's other tables
/// cannot be listed or loaded, every file is kept and the reason goes to
/// [`ExpireSnapshotsResult::cleanup_error`].
pub(super) async fn keep_foreign_files(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    table: &Table,
    result: &mut ExpireSnapshotsResult,
) {
    let io = table.file_io();
    let lists = [
        &mut result.deleted_data_files,
        &mut result.deleted_position_delete_files,
        &mut result.deleted_equality_delete_files,
        &mut result.deleted_manifests,
        &mut result.deleted_manifest_lists,
        &mut result.deleted_statistics_files,
    ];
    if lists.iter().all(|l| l.is_empty()) {
        return;
    }
    let m = table.metadata();
    let mut claims: Vec<Claim> = std::iter::once(m.location.clone())
        .chain(file_directories(m, table.metadata_location()))
        .map(|d| Claim {
            directory: key(io, &d),
            other: None,
        })
        .collect();
    let mut kept = vec![];
    match neighbours(catalog, ident).await {
        Ok(n) => {
            for t in n.tables {
                for d in std::iter::once(&t.location).chain(&t.directories) {
                    claims.push(Claim {
                        directory: key(io, d),
                        other: Some(t.ident.clone()),
                    });
                }
            }
        }
        Err(e) => {
            for list in lists {
                kept.append(list);
            }
            result.cleanup_error = Some(format!(
                "cannot tell which files other tables of catalog '{}' own: {e}",
                catalog.name()
            ));
            kept.sort();
            result.kept_files = kept;
            return;
        }
    }
    for list in lists {
        list.retain(|f| match foreign(&claims, &key(io, f)) {
            Some(why) => {
                kept.push(format!("{f} ({why})"));
                false
            }
            None => true,
        });
    }
    kept.sort();
    result.kept_files = kept;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(directory: &str, other: Option<&str>) -> Claim {
        Claim {
            directory: directory.to_string(),
            other: other.map(|o| TableIdent::parse(&format!("ns.{o}"))),
        }
    }

    /// The deepest directory holding a file decides whose it is; a file in no directory
    /// of the table is kept; a location two tables share is the other's too.
    #[test]
    fn the_deepest_directory_holding_a_file_owns_it() {
        let claims = [
            claim("file:///wh/ns/t", None),
            claim("file:///wh/ns/t/data", None),
            claim("file:///wh", Some("root")),
            claim("file:///wh/ns/t/nested", Some("nested")),
            claim("file:///wh/ns/u", Some("u")),
        ];
        assert_eq!(foreign(&claims, "file:///wh/ns/t/data/a.parquet"), None);
        assert_eq!(
            foreign(&claims, "file:///wh/ns/t/nested/data/a.parquet").as_deref(),
            Some("under table 'ns.nested'")
        );
        assert_eq!(
            foreign(&claims, "file:///wh/ns/u/data/a.parquet").as_deref(),
            Some("under table 'ns.u'")
        );
        assert_eq!(
            foreign(&claims, "file:///elsewhere/a.parquet").as_deref(),
            Some("outside the table's directories")
        );
        // `/wh/ns/tt` is not inside `/wh/ns/t`
        assert_eq!(
            foreign(&claims, "file:///wh/ns/tt/a.parquet").as_deref(),
            Some("under table 'ns.root'")
        );
        let shared = [claim("s3://b/t", None), claim("s3://b/t", Some("twin"))];
        assert_eq!(
            foreign(&shared, "s3://b/t/data/a.parquet").as_deref(),
            Some("under table 'ns.twin'")
        );
    }
}
