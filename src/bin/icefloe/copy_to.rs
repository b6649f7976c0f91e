//! `COPY … TO` a local file: written under a temporary name next to it and renamed into
//! place when the statement succeeds, removed when it fails.
//!
//! DataFusion's file sinks finish the files they were writing even when the query
//! feeding them fails (`stateless_serialize_and_write_files` shuts every writer down,
//! then returns the error), so a `COPY` that failed half-way left a partial file under
//! the target's name, and replaced a file that was there before. DuckDB writes to a
//! temporary file first; so does this. A directory output (`PARTITIONED BY`, a path
//! ending in `/` or without an extension) and a remote store are written as DataFusion
//! writes them.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use datafusion::dataframe::DataFrame;
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::logical_expr::{dml::CopyTo, LogicalPlan};

/// The option DataFusion reads to choose between one file and a directory.
const SINGLE_FILE_OUTPUT: &str = "single_file_output";

/// Where a staged `COPY` writes, and where its file goes when it succeeds.
pub struct StagedCopy {
    staged: PathBuf,
    target: PathBuf,
}

/// `df` with its output redirected to a temporary sibling of the target when it is a
/// `COPY` to one local file; `None` for every other statement (run as it is).
pub fn stage(df: &DataFrame) -> Option<(DataFrame, StagedCopy)> {
    let LogicalPlan::Copy(copy) = df.logical_plan() else {
        return None;
    };
    let target = single_local_file(copy)?;
    // not named after the target: a name near the file system's 255 bytes would not fit
    // with more around it
    static STAGED: AtomicUsize = AtomicUsize::new(0);
    let staged = target.with_file_name(format!(
        ".icefloe-copy-{}-{}.tmp",
        std::process::id(),
        STAGED.fetch_add(1, Ordering::Relaxed)
    ));
    let mut options = copy.options.clone();
    // the temporary name must not turn one file into a directory
    options.insert(SINGLE_FILE_OUTPUT.to_string(), "true".to_string());
    let staged_copy = CopyTo::new(
        Arc::clone(&copy.input),
        staged.to_str()?.to_string(),
        copy.partition_by.clone(),
        Arc::clone(&copy.file_type),
        options,
    );
    let (state, _) = df.clone().into_parts();
    Some((
        DataFrame::new(state, LogicalPlan::Copy(staged_copy)),
        StagedCopy { staged, target },
    ))
}

impl StagedCopy {
    /// After the statement ran: on success the file is renamed to the target (replacing
    /// a file there); on failure it is removed. Returns an error when the rename fails.
    pub fn finish(self, succeeded: bool) -> std::io::Result<()> {
        if succeeded {
            std::fs::rename(&self.staged, &self.target).map_err(|e| {
                let _ = std::fs::remove_file(&self.staged);
                std::io::Error::new(
                    e.kind(),
                    format!(
                        "COPY wrote its output but could not move it to '{}': {e}",
                        self.target.display()
                    ),
                )
            })
        } else {
            // nothing may have been written
            let _ = std::fs::remove_file(&self.staged);
            Ok(())
        }
    }
}

/// The local file a `COPY` writes, when it writes one file on the local file system
/// (not a directory, not partitioned, not to an existing directory).
fn single_local_file(copy: &CopyTo) -> Option<PathBuf> {
    if !copy.partition_by.is_empty() {
        return None;
    }
    let url = ListingTableUrl::parse(&copy.output_url).ok()?;
    if url.scheme() != "file" {
        return None;
    }
    // SQL's `OPTIONS ('single_file_output' …)` arrives as `format.single_file_output`
    let option = [SINGLE_FILE_OUTPUT, "format.single_file_output"]
        .iter()
        .find_map(|key| copy.options.get(*key));
    let single = match option.map(|v| v.trim()) {
        Some("true") => true,
        Some(_) => false,
        // DataFusion's `FileOutputMode::Automatic`
        None => !url.is_collection() && url.file_extension().is_some(),
    };
    if !single {
        return None;
    }
    let url: &url::Url = url.as_ref();
    let path = url.to_file_path().ok()?;
    (!path.is_dir() && path.file_name().is_some()).then_some(path)
}

/// Whether `path` is a temporary file of a `COPY` ([`stage`]'s name).
#[cfg(test)]
fn is_staged(path: &std::path::Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(".icefloe-copy-") && n.ends_with(".tmp"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::SessionContext;

    async fn copy_df(ctx: &SessionContext, sql: &str) -> DataFrame {
        ctx.sql(sql).await.unwrap()
    }

    #[tokio::test]
    async fn only_single_local_files_are_staged() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let ctx = SessionContext::new();
        let staged = copy_df(&ctx, &format!("COPY (SELECT 1 AS a) TO '{d}/out.csv'")).await;
        let (_, staged) = stage(&staged).expect("a single CSV file is staged");
        assert!(is_staged(&staged.staged), "{}", staged.staged.display());
        assert_eq!(staged.staged.parent(), Some(dir.path()));
        assert_eq!(staged.target, dir.path().join("out.csv"));
        for sql in [
            format!("COPY (SELECT 1 AS a) TO '{d}/out/' STORED AS CSV"),
            format!("COPY (SELECT 1 AS a) TO '{d}/out' STORED AS CSV"),
            format!("COPY (SELECT 1 AS a, 2 AS b) TO '{d}/p.csv' PARTITIONED BY (b)"),
            format!("COPY (SELECT 1 AS a) TO '{d}/x.csv' OPTIONS ('single_file_output' 'false')"),
        ] {
            assert!(stage(&copy_df(&ctx, &sql).await).is_none(), "{sql}");
        }
        assert!(stage(&copy_df(&ctx, "SELECT 1").await).is_none());
        // an existing directory named like a file is left to DataFusion
        std::fs::create_dir(dir.path().join("d.csv")).unwrap();
        let sql = format!("COPY (SELECT 1 AS a) TO '{d}/d.csv'");
        assert!(stage(&copy_df(&ctx, &sql).await).is_none());
    }
}
