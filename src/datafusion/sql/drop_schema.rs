//! `DROP SCHEMA|DATABASE|NAMESPACE [IF EXISTS] [cat.]ns [RESTRICT|CASCADE]` against an
//! Iceberg catalog (see the parent module's docs): [`Catalog::drop_namespace`], which
//! refuses a namespace holding tables or namespaces, as Spark does without `CASCADE`.
//! `CASCADE` drops an empty namespace; on one that holds tables it is refused as not
//! supported (icefloe does not drop tables as a side effect).
//!
//! [`Catalog::drop_namespace`]: crate::catalog::Catalog::drop_namespace

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::resolve::message_namespace;
use super::tokens::Cursor;
use super::{empty, resolve_namespace};
use crate::error::{Error, ErrorKind, Result};

/// `DROP SCHEMA|DATABASE|NAMESPACE` (`word`, echoed in messages), after those keywords;
/// `None` when the name is not an Iceberg catalog's namespace (DataFusion's to run or
/// report).
pub(super) async fn drop_schema(
    ctx: &SessionContext,
    word: &str,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let if_exists = c.eat_keywords(&["IF", "EXISTS"]);
    let Ok(parts) = c.object_name() else {
        return Ok(None);
    };
    let Some((target, catalog, namespace)) = resolve_namespace(ctx, &parts) else {
        return Ok(None);
    };
    let what = format!("DROP {word} {}", message_namespace(&catalog, &parts));
    let cascade = c.eat_keyword("CASCADE");
    if !cascade {
        c.eat_keyword("RESTRICT");
    }
    c.expect_end().map_err(|e| e.context(&what))?;
    let iceberg = target.catalog();
    if namespace.is_root() || !iceberg.namespace_exists(&namespace).await? {
        if if_exists {
            return empty(ctx).map(Some);
        }
        return Err(Error::not_found(format!(
            "{what}: namespace '{namespace}' in catalog '{catalog}'"
        )));
    }
    match iceberg.drop_namespace(&namespace).await {
        Ok(()) => {}
        Err(e) if cascade && e.kind() == ErrorKind::InvalidArgument => {
            return Err(Error::unsupported(format!(
                "{what} CASCADE: dropping the tables of a namespace with it; drop them first \
                 ({e})"
            )))
        }
        Err(e) => return Err(e.context(&what)),
    }
    target.iceberg().remove_namespace(&namespace)?;
    empty(ctx).map(Some)
}
