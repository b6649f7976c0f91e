//! `CREATE SCHEMA|DATABASE|NAMESPACE` on an Iceberg catalog, with Spark's clauses.

use std::collections::HashMap;

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::resolve::{check_namespace_levels, message_namespace};
use super::tokens::Cursor;
use super::{alter_namespace, empty, property_lists, resolve_namespace};
use crate::error::{Error, ErrorKind, Result};

/// `CREATE SCHEMA|DATABASE|NAMESPACE` (`word`, echoed in messages), after those keywords.
pub(super) async fn create_schema(
    ctx: &SessionContext,
    word: &str,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let if_not_exists = c.eat_keywords(&["IF", "NOT", "EXISTS"]);
    // a statement icefloe cannot read is DataFusion's to report
    let Ok(parts) = c.object_name() else {
        return Ok(None);
    };
    let Some((target, catalog, namespace)) = resolve_namespace(ctx, &parts) else {
        return Ok(None);
    };
    // (a catalog's name before the namespace's holds no empty level either)
    check_namespace_levels(&format!("CREATE {word}"), &parts, &parts)?;
    let what = format!("CREATE {word} {}", message_namespace(&catalog, &parts));
    let properties = schema_clauses(&mut c).map_err(|e| e.context(&what))?;
    let catalog = target.catalog();
    let exists = catalog.namespace_exists(&namespace).await?;
    if !exists {
        crate::failpoint::pause("create-checked");
        match catalog.create_namespace(&namespace, &properties).await {
            // created by another writer since the check: nothing to do under IF NOT EXISTS
            Err(e) if if_not_exists && e.kind() == ErrorKind::AlreadyExists => {}
            created => created.map_err(|e| e.context(&what))?,
        }
    } else if !if_not_exists {
        return Err(Error::new(
            ErrorKind::AlreadyExists,
            format!("{what}: namespace '{namespace}' already exists"),
        ));
    }
    target.iceberg().add_namespace(&namespace)?;
    empty(ctx).map(Some)
}

/// The clauses of `CREATE SCHEMA` after the name, each at most once (Spark's
/// `visitCreateNamespace`): `COMMENT '…'`, `LOCATION '…'` (stored absolute:
/// [`alter_namespace::namespace_location`]) and `WITH DBPROPERTIES|PROPERTIES (…)` (no
/// reserved key: module `property_lists`), as the namespace's properties; the clauses
/// win over a `comment` property, as in Spark.
pub(super) fn schema_clauses(c: &mut Cursor<'_>) -> Result<HashMap<String, String>> {
    let mut clauses = property_lists::Clauses::default();
    let (mut comment, mut location) = (None, None);
    let mut properties = HashMap::new();
    loop {
        if c.eat_keyword("COMMENT") {
            clauses.once("COMMENT")?;
            comment = Some(c.string()?);
        } else if c.eat_keyword("LOCATION") {
            clauses.once("LOCATION")?;
            location = Some(alter_namespace::namespace_location(&c.string()?)?);
        } else if c.eat_keyword("WITH") {
            if !c.eat_keyword("DBPROPERTIES") {
                c.expect_keyword("PROPERTIES")?;
            }
            clauses.once("WITH DBPROPERTIES|PROPERTIES")?;
            let list = c.properties()?;
            property_lists::check_namespace_keys(list.iter().map(|(k, _)| k.as_str()))?;
            properties.extend(list);
        } else {
            break;
        }
    }
    c.expect_end()?;
    properties.extend(comment.map(|v| ("comment".to_string(), v)));
    properties.extend(location.map(|v| ("location".to_string(), v)));
    Ok(properties)
}
