//! Column names an action addresses, pinned by field id across retries.
//!
//! [`UpdateSchema`](super::UpdateSchema), [`UpdatePartitionSpec`](super::UpdatePartitionSpec)
//! and [`ReplaceSortOrder`](super::ReplaceSortOrder) name columns, and when their commit
//! loses a race they are applied again to the refreshed table. A name may then mean
//! another field: a concurrent commit renamed column `a` to `old_a` and added a new `a`,
//! and a `DROP COLUMN a` planned before would drop the new column and its values (a
//! dropped field id never comes back), an `ADD PARTITION FIELD a` would partition by it.
//! Iceberg Java never re-applies these: their commit on a stale base fails. Here a retry
//! goes on only when every name the action addresses means the same field id, or no
//! field, in the refreshed schema as in the schema it was first applied to; otherwise
//! the commit fails with [`ErrorKind::ValidationFailed`] naming the column, and nothing
//! is committed. Concurrent changes to other columns are still built on.

use crate::error::{Error, ErrorKind, Result};

/// Each column name an action addresses (dotted: `st.a`), with the field id it resolves
/// to in one schema (`None`: no field of that name).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PinnedNames(Vec<(String, Option<i32>)>);

impl PinnedNames {
    /// Names with the field ids they resolve to.
    pub(crate) fn from_pairs(pairs: Vec<(String, Option<i32>)>) -> Self {
        Self(pairs)
    }

    /// Keep `now` in `first` when it is empty (the first application); otherwise check
    /// that `now` (the same names resolved in a refreshed schema) names the same fields.
    ///
    /// Errors: [`ErrorKind::ValidationFailed`] naming the first column whose name now
    /// means another field, or none, and `what` ("schema change").
    pub(crate) fn hold(first: &mut Option<Self>, now: Self, what: &str) -> Result<()> {
        let Some(first) = first else {
            *first = Some(now);
            return Ok(());
        };
        for ((name, before), (_, after)) in first.0.iter().zip(&now.0) {
            if before != after {
                let describe = |id: &Option<i32>| match id {
                    Some(id) => format!("field id {id}"),
                    None => "no field".to_string(),
                };
                return Err(Error::new(
                    ErrorKind::ValidationFailed,
                    format!(
                        "column '{name}' was changed by a concurrent commit since this {what} \
                         was planned (it named {}, now {}); nothing was committed",
                        describe(before),
                        describe(after)
                    ),
                ));
            }
        }
        Ok(())
    }
}
