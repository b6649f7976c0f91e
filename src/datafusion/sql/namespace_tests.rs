//! Namespace DDL (`CREATE SCHEMA`, `ALTER NAMESPACE`) on a SQLite catalog in a temporary
//! directory: what is stored, and what is refused (tester M64's faults).

use super::tests::{fails, ok, session};
use crate::catalog::Namespace;
use crate::ErrorKind;

/// Tester M64 fault 4: namespace locations were stored as typed, so a relative one meant
/// each engine's own working directory. A blank location is refused (Spark's
/// `INVALID_EMPTY_LOCATION`), a relative one stored as the `file:` URL of its absolute
/// path, as a table's `LOCATION` is, and a URL kept.
#[tokio::test]
async fn namespace_locations_are_stored_absolute_and_never_blank() {
    let (ctx, catalog, _dir) = session().await;
    let cwd = std::env::current_dir().expect("cwd");
    let location = |ns: &'static str| {
        let catalog = catalog.clone();
        async move {
            catalog
                .load_namespace_metadata(&Namespace::parse(ns))
                .await
                .expect("namespace")
                .get("location")
                .cloned()
        }
    };
    ok(&ctx, "CREATE SCHEMA rel LOCATION 'rel/ns'").await;
    assert_eq!(
        location("rel").await,
        Some(format!("file://{}/rel/ns", cwd.display()))
    );
    ok(&ctx, "CREATE SCHEMA s3 LOCATION 's3://bucket/a/'").await;
    assert_eq!(location("s3").await.as_deref(), Some("s3://bucket/a"));
    ok(&ctx, "ALTER NAMESPACE s3 SET LOCATION './x/../y'").await;
    assert_eq!(
        location("s3").await,
        Some(format!("file://{}/y", cwd.display()))
    );
    ok(&ctx, "ALTER NAMESPACE s3 SET LOCATION '/abs/z'").await;
    assert_eq!(location("s3").await.as_deref(), Some("file:///abs/z"));
    for (sql, needle) in [
        (
            "CREATE SCHEMA blank LOCATION ''",
            "CREATE SCHEMA cat.blank: LOCATION '': the location name cannot be empty",
        ),
        (
            "CREATE SCHEMA blank LOCATION '  '",
            "CREATE SCHEMA cat.blank: LOCATION '  ': the location name cannot be empty",
        ),
        (
            "ALTER NAMESPACE s3 SET LOCATION ''",
            "ALTER NAMESPACE cat.s3: LOCATION '': the location name cannot be empty",
        ),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
    }
    assert!(!catalog
        .namespace_exists(&Namespace::parse("blank"))
        .await
        .expect("exists"));
    assert_eq!(location("s3").await.as_deref(), Some("file:///abs/z"));
}
