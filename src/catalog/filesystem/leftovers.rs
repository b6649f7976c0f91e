//! What a killed writer leaves in a filesystem (Hadoop) warehouse, and how the catalog
//! tells it apart from tables and namespaces (tester X66 F1, F2, F4).
//!
//! - **A commit's staging file**: a commit writes the new metadata to
//!   `metadata/.v<N>.metadata.json.<uuid>.staging`, hard-links it to `v<N>.metadata.json`
//!   and unlinks it ([`commit_staging_name`]); a kill in between leaves it. The name is
//!   hidden on purpose, so that no reader can take it for a version: Java's
//!   `HadoopTableOperations` takes any listed `v<…>.<…>` name for version `<…>` and
//!   `HadoopCatalog` any `*.metadata.json` for a table, as icefloe's own listing does
//!   (Java's own temporary name, `<uuid>.metadata.json`, would make a killed create's
//!   directory a table there). `remove_orphan_files` lists this one hidden name
//!   ([`is_commit_staging_name`]): it is an orphan once older than `older_than`.
//! - **A killed create's directory**: a `CREATE TABLE` or CTAS writes `v1.metadata.json`
//!   through a staging file `v1.metadata.json#<n>` linked in place only if absent; killed
//!   before the link, the directory has `metadata/` with that file and no version
//!   ([`staged_first_version`]). It is no table and no namespace (its `data/` and
//!   `metadata/` are not namespaces), and nothing removes it by itself: a create still
//!   running looks the same, so `DROP NAMESPACE` names it instead ([`blocking_entries`]).
//! - **A table's data without its metadata**: a CTAS killed after it wrote data files
//!   and before any metadata file, or a `DROP TABLE` of a table whose `gc.enabled` is
//!   false (which keeps its data files), leaves a directory holding only `data/` (and
//!   a `metadata/` with no version) with data files in it ([`is_data_leftover`]). It is
//!   no table and no namespace (nor is anything in it), and nothing removes it by itself:
//!   a CTAS still running looks the same, and kept files are kept on purpose. `DROP
//!   NAMESPACE` names it. A table created there takes the directory as its own, as Java's
//!   `HadoopCatalog` (the directory is the table): the files become its orphans
//!   (`remove_orphan_files`), and its `DROP TABLE` with `gc.enabled` removes the
//!   directory whole, as `HadoopCatalog.dropTable` removes every table's directory (it
//!   keeps no data for `gc.enabled` false: those files would be gone already there).
//! - **A drop's hidden directory**: `DROP TABLE` renames the table directory to
//!   `.<name>.dropped-<uuid>` (`metadata/` to `.metadata.dropped-<uuid>` when `gc.enabled`
//!   is false) and then removes it ([`dropped_name`]); killed in between, the drop has
//!   committed (the table is gone) and the directory holds only what that drop was
//!   removing (with `gc.enabled` false, metadata and manifests only: the data files stay
//!   in `data/`). [`remove_drop_leftovers`] finishes such removals.

use std::path::{Path, PathBuf};

/// The staging name of a commit's new metadata file `name` (`v<N>.metadata.json`):
/// `.v<N>.metadata.json.<uuid>.staging`.
pub(super) fn commit_staging_name(name: &str) -> String {
    format!(".{name}.{}.staging", uuid::Uuid::new_v4())
}

/// Whether `name` is a commit's staging file ([`commit_staging_name`]):
/// `.v<digits>.metadata.json.<uuid>.staging` (or `.gz.metadata.json`).
pub(crate) fn is_commit_staging_name(name: &str) -> bool {
    let Some(rest) = name
        .strip_prefix(".v")
        .and_then(|r| r.strip_suffix(".staging"))
    else {
        return false;
    };
    let Some((version, rest)) = rest.split_once('.') else {
        return false;
    };
    let uuid = rest
        .strip_prefix("metadata.json.")
        .or_else(|| rest.strip_prefix("gz.metadata.json."));
    !version.is_empty()
        && version.bytes().all(|b| b.is_ascii_digit())
        && uuid.is_some_and(|u| uuid::Uuid::parse_str(u).is_ok())
}

/// The hidden name a drop renames directory `name` to: `.<name>.dropped-<uuid>`.
pub(super) fn dropped_name(name: &str) -> String {
    format!(".{name}.dropped-{}", uuid::Uuid::new_v4())
}

/// Whether `name` is a drop's hidden directory ([`dropped_name`]).
fn is_dropped_name(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|r| r.rsplit_once(".dropped-"))
        .is_some_and(|(table, uuid)| !table.is_empty() && uuid::Uuid::parse_str(uuid).is_ok())
}

/// Remove the drops' hidden directories ([`dropped_name`]) directly in `dir`: each is a
/// drop that committed and was killed (or failed) before it removed them. Best effort:
/// one that cannot be removed stays (and is named by [`blocking_entries`]).
pub(super) fn remove_drop_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && e.file_name().to_str().is_some_and(is_dropped_name) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The extensions of the files a table writes under `data/` (data files, delete files,
/// deletion vectors).
const DATA_FILE_EXTENSIONS: &[&str] = &["parquet", "avro", "orc", "puffin"];

/// How deep under `data/` a data file is looked for (partition directories, and the
/// hashed prefixes of `write.object-storage.enabled`).
const DATA_DEPTH: usize = 16;

/// Whether the local directory `dir`, which holds no metadata version, is a table's data
/// left without its metadata (see the module docs): its visible entries are a `data/`
/// directory and at most a `metadata/` directory, no file, and `data/` holds a data file
/// ([`DATA_FILE_EXTENSIONS`]) reached without entering a directory named `data` or
/// `metadata` (those of tables in a namespace named `data`, which is a namespace).
pub(super) fn is_data_leftover(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut has_data = false;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            return false;
        };
        if name.starts_with('.') {
            continue;
        }
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        match (name, is_dir) {
            ("data", true) => has_data = true,
            ("metadata", true) => {}
            _ => return false,
        }
    }
    has_data && holds_data_file(&dir.join("data"), DATA_DEPTH)
}

/// Whether `dir` holds a data file, at most `depth` directories down, not entering hidden
/// directories nor ones named `data` or `metadata` (see [`is_data_leftover`]).
fn holds_data_file(dir: &Path, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut subdirs = vec![];
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name();
        let name = name.to_str().unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            if name != "data" && name != "metadata" {
                subdirs.push(path);
            }
        } else if path
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| DATA_FILE_EXTENSIONS.contains(&x))
        {
            return true;
        }
    }
    depth > 0 && subdirs.iter().any(|d| holds_data_file(d, depth - 1))
}

/// The uncommitted first metadata file among the names of a directory's `metadata/`,
/// when it holds no version: a `….metadata.json#<n>` an object store `put` stages (a
/// `CREATE TABLE` or CTAS killed before `v1.metadata.json` was linked in place).
/// `None` when `metadata/` holds a version (then it is a table) or no such file.
pub(super) fn staged_first_version(metadata_files: &[String]) -> Option<&String> {
    metadata_files.iter().find(|f| {
        f.rsplit_once('#').is_some_and(|(stem, n)| {
            stem.ends_with(".metadata.json")
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        })
    })
}

/// What keeps the namespace directory `dir` from being removed, with tables, namespaces
/// and drops' hidden directories gone: up to five entries, each described for the user
/// (a killed create's directory, naming the table it was for; any other file or
/// directory, naming a file in it). Empty when `dir` is empty or cannot be read.
pub(super) fn blocking_entries(dir: &Path, namespace_levels: &[String]) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    let more = paths.len().saturating_sub(5);
    let mut out: Vec<String> = paths
        .iter()
        .take(5)
        .map(|p| describe(p, namespace_levels))
        .collect();
    if more > 0 {
        out.push(format!("{more} more"));
    }
    out
}

/// One entry of [`blocking_entries`].
fn describe(path: &Path, namespace_levels: &[String]) -> String {
    let shown = path.display();
    if !path.is_dir() {
        return format!("the file '{shown}'");
    }
    let staged = std::fs::read_dir(path.join("metadata"))
        .ok()
        .and_then(|entries| {
            let names: Vec<String> = entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect();
            staged_first_version(&names).cloned()
        });
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if staged.is_none() && is_data_leftover(path) {
        let mut table = namespace_levels.to_vec();
        table.push(name.to_string());
        return format!(
            "'{shown}', data files of a table '{}' left without its metadata (by a DROP \
             TABLE with gc.enabled false, which keeps them, or a CTAS killed before it \
             committed); move or remove them unless that CTAS is still running",
            table.join(".")
        );
    }
    match staged {
        Some(file) => {
            let mut table = namespace_levels.to_vec();
            table.push(name.to_string());
            format!(
                "'{shown}', left by a CREATE TABLE or CTAS of '{}' that was killed before it \
                 committed (its metadata/ holds the uncommitted '{file}' and no version); \
                 unless that statement is still running, remove the directory",
                table.join(".")
            )
        }
        None => match first_file(path) {
            Some(file) => format!(
                "the directory '{shown}', which is no table or namespace (it holds the file \
                 '{}')",
                file.display()
            ),
            None => format!("the directory '{shown}', which is no table or namespace"),
        },
    }
}

/// A file somewhere under `dir` (depth first, names in order), if any.
fn first_file(dir: &Path) -> Option<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    for p in paths {
        if !p.is_dir() {
            return Some(p);
        }
        if let Some(f) = first_file(&p) {
            return Some(f);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_staging_names_are_told_from_others() {
        let made = commit_staging_name("v12.metadata.json");
        assert!(is_commit_staging_name(&made), "{made}");
        for other in [
            "v12.metadata.json",
            ".v12.metadata.json",
            ".v.metadata.json.3d7164b9-8728-4623-9da8-feeba4d48bfe.staging",
            ".vx.metadata.json.3d7164b9-8728-4623-9da8-feeba4d48bfe.staging",
            ".v1.metadata.json.not-a-uuid.staging",
            ".v1.json.3d7164b9-8728-4623-9da8-feeba4d48bfe.staging",
            ".x.staging",
            ".part-0.crc",
        ] {
            assert!(!is_commit_staging_name(other), "{other}");
        }
        assert!(is_commit_staging_name(
            ".v3.gz.metadata.json.3d7164b9-8728-4623-9da8-feeba4d48bfe.staging"
        ));
    }

    #[test]
    fn dropped_names_are_told_from_others() {
        for made in [
            dropped_name("t"),
            dropped_name("metadata"),
            dropped_name("a.b"),
        ] {
            assert!(is_dropped_name(&made), "{made}");
        }
        for other in [
            "t",
            ".t",
            ".t.dropped-",
            ".t.dropped-123",
            "t.dropped-3d7164b9-8728-4623-9da8-feeba4d48bfe",
            "..dropped-3d7164b9-8728-4623-9da8-feeba4d48bfe",
        ] {
            assert!(!is_dropped_name(other), "{other}");
        }
    }

    #[test]
    fn a_staged_first_version_is_found_only_as_an_object_store_staging_file() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let staged = names(&["snap-1.avro", "v1.metadata.json#1"]);
        assert_eq!(
            staged_first_version(&staged).map(String::as_str),
            Some("v1.metadata.json#1")
        );
        let gz = names(&["v1.gz.metadata.json#12"]);
        assert!(staged_first_version(&gz).is_some());
        for none in [
            &["version-hint.text#1"][..],
            &["v1.metadata.json#"],
            &["x.avro"],
            &[],
        ] {
            assert_eq!(staged_first_version(&names(none)), None, "{none:?}");
        }
    }
}
