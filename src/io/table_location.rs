//! What a location that a table writes under may be: checks made where a location is
//! set (a new table's location, `SET LOCATION`, `REPLACE TABLE … LOCATION`, the
//! path-valued table properties), so that other engines find the files icefloe writes.
//!
//! * An object store location holding `#` or `?` is refused. Other engines take a table's
//!   locations as URLs: Iceberg Java's `S3URI` cuts a location at `?` and `#` (query and
//!   fragment), PyIceberg's and DuckDB's file systems read them so too. They would look
//!   for other keys than the ones icefloe wrote, so the table would be unreadable to them.
//!   On local disk both characters are kept: Java's Hadoop `Path` and DuckDB read such
//!   paths as written (PyIceberg alone cuts a local path at `#`), and local warehouses and
//!   Spark's tables already hold such names.
//! * An `az://` table location is refused: Java's `ResolvingFileIO` and `ADLSFileIO` take
//!   only `abfs://`, `abfss://`, `wasb://` and `wasbs://`, and PyIceberg does not know the
//!   scheme. Files are still read by `az://` URL.
//! * A path-valued table property (`write.data.path`, `write.metadata.path`,
//!   `write.object-storage.path`, `write.folder-storage.path`) must be absolute: a URL or an
//!   absolute local path. A relative one is refused rather than made absolute: the table
//!   stores the property's text, and every engine (Java and PyIceberg as icefloe) writes
//!   paths joined from it as they are, so a relative one resolved against each writer's
//!   and reader's working directory; the table read only from where it was written.

use crate::error::{Error, Result};

/// The characters refused in an object store location, and what other engines read them
/// as.
const URL_DELIMITERS: [(char, &str); 2] = [('#', "a fragment"), ('?', "a query")];

/// The schemes other engines take for Azure table locations (Java's `ADLSFileIO`).
const AZURE_SCHEMES: &str = "abfs://, abfss://, wasb:// or wasbs://";

/// The scheme of an object store location (`s3` of `s3://b/k`); `None` for a local path
/// or `file:` URL.
fn object_store_scheme(location: &str) -> Option<&str> {
    let trimmed = location.trim_start();
    if trimmed.starts_with("file:") {
        return None;
    }
    trimmed.split_once("://").map(|(scheme, _)| scheme)
}

/// Check `location` as a location a table writes under; `what` names it in the error
/// ("table location", "table property 'write.data.path'").
///
/// Errors ([`crate::ErrorKind::InvalidArgument`], naming `what`, the location and why): an
/// object store location holding `#` or `?`, an `az://` location (module docs).
pub fn check_table_location(what: &str, location: &str) -> Result<()> {
    let Some(scheme) = object_store_scheme(location) else {
        return Ok(());
    };
    if scheme.eq_ignore_ascii_case("az") {
        return Err(Error::invalid_argument(format!(
            "{what} '{location}': other engines (Iceberg Java's ADLSFileIO, PyIceberg) \
             do not read az:// table locations; give the same place as {AZURE_SCHEMES} \
             (abfss://<container>@<account>.dfs.core.windows.net/<path>)"
        )));
    }
    for (c, part) in URL_DELIMITERS {
        if location.contains(c) {
            return Err(Error::invalid_argument(format!(
                "{what} '{location}' holds '{c}': other engines (Iceberg Java's S3URI, \
                 PyIceberg, DuckDB) read an object store location as a URL, where '{c}' \
                 begins {part}, and would look for other files than the ones written; \
                 choose a location (and namespace and table names) without '#' and '?'"
            )));
        }
    }
    Ok(())
}

/// Check the value of a path-valued table property `key`: an absolute location (a URL, a
/// `file:` URL or an absolute local path) that [`check_table_location`] takes.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`], naming the property and the value): an
/// empty or relative path; those of [`check_table_location`].
pub fn check_location_property(key: &str, value: &str) -> Result<()> {
    let what = format!("table property '{key}'");
    let v = value.trim();
    let absolute = v.contains("://") || v.starts_with("file:") || v.starts_with('/');
    if !absolute {
        return Err(Error::invalid_argument(format!(
            "{what} is '{value}', not an absolute location: a relative path is stored as \
             given and every engine resolves it against its own working directory, so the \
             table would read only from where it was written; give a URL or an absolute \
             path"
        )));
    }
    check_table_location(&what, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_store_locations_without_url_delimiters_nor_az() {
        for ok in [
            "s3://b/wh/ns/t",
            "s3://b/wh/a b%20+=é",
            "abfss://c@a.dfs.core.windows.net/t",
            "/tmp/a#b?c",
            "file:///tmp/a#b",
            "relative#dir",
        ] {
            check_table_location("table location", ok).expect(ok);
        }
        for (bad, needle) in [
            ("s3://b/wh/T#1", "holds '#'"),
            ("s3://b/wh/T?x", "holds '?'"),
            ("gs://b/a?b#c", "holds '#'"),
            ("abfss://c@a.dfs.core.windows.net/t#1", "begins a fragment"),
            ("az://cont/t", "do not read az:// table locations"),
            ("AZ://cont/t", "abfss://<container>"),
        ] {
            let e = check_table_location("table location", bad).expect_err(bad);
            assert!(e.to_string().contains(needle), "{bad}: {e}");
            assert!(e.to_string().contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn location_properties_must_be_absolute() {
        for ok in ["/data/t", "file:/data/t", "file:///data/t", "s3://b/d"] {
            check_location_property("write.data.path", ok).expect(ok);
        }
        for bad in ["reldata", "./d", "../d", "", "  "] {
            let e = check_location_property("write.data.path", bad).expect_err(bad);
            assert!(
                e.to_string()
                    .contains("table property 'write.data.path' is"),
                "{e}"
            );
            assert!(e.to_string().contains("not an absolute location"), "{e}");
        }
        let e = check_location_property("write.metadata.path", "s3://b/m#1").expect_err("#");
        assert!(
            e.to_string()
                .contains("table property 'write.metadata.path' 's3://b/m#1' holds '#'"),
            "{e}"
        );
    }
}
