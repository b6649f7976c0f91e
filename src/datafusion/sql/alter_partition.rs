//! The partition and write-order clauses of `ALTER TABLE` (Spark's Iceberg SQL
//! extensions), each one commit of [`UpdatePartitionSpec`] or [`ReplaceSortOrder`]:
//!
//! - `ADD PARTITION FIELD term [AS name]`;
//! - `DROP PARTITION FIELD term|name`: a bare name that is not a column names a
//!   partition field, anything else is a term (as Spark's `DropPartitionFieldExec`);
//! - `REPLACE PARTITION FIELD term|name WITH term [AS name]`;
//! - `WRITE ORDERED BY terms`, `WRITE LOCALLY ORDERED BY terms`, `WRITE UNORDERED`,
//!   `WRITE DISTRIBUTED BY PARTITION [LOCALLY ORDERED BY terms]` (the ordering clause may
//!   also come first), as Spark's `SetWriteDistributionAndOrdering`: one commit that
//!   replaces the sort order (unsorted when no terms are given) and sets the table
//!   property `write.distribution-mode`: `hash` with `DISTRIBUTED BY PARTITION`, else
//!   `none` for `LOCALLY ORDERED BY` and `UNORDERED`, else `range`. icefloe's own writes
//!   sort each written file by the sort order and distribute rows by the property
//!   ([`crate::write::DistributionMode`]).
//!
//! A term is `col`, `bucket(N, col)`, `truncate(W, col)`, `years|months|days|hours(col)`
//! (see [`create_table::parse_term`]), followed by `[ASC|DESC] [NULLS FIRST|LAST]`.

use datafusion::sql::sqlparser::tokenizer::Token;

use super::alter_table::commit;
use super::create_table::parse_term;
use super::tokens::Cursor;
use super::ResolvedTable;
use crate::error::{Error, Result};
use crate::spec::Transform;
use crate::transaction::{
    NullOrder, PartitionFieldRef, PartitionTerm, ReplaceSortOrder, SortDirection, Transaction,
    UpdatePartitionSpec, UpdateProperties,
};

/// Run the clause at `c` when it is one of this module's; `Ok(false)` when it is not.
pub(super) async fn alter_partition(
    table: &ResolvedTable,
    base: &str,
    c: &mut Cursor<'_>,
) -> Result<bool> {
    if c.eat_keywords(&["ADD", "PARTITION", "FIELD"]) {
        let what = format!("{base} ADD PARTITION FIELD");
        let parse = |c: &mut Cursor<'_>| -> Result<UpdatePartitionSpec> {
            let (term, name) = new_field(c)?;
            c.expect_end()?;
            Ok(UpdatePartitionSpec::new().add_field(term, name))
        };
        let action = parse(c).map_err(|e| e.context(&what))?;
        commit(table, &what, action).await?;
    } else if c.eat_keywords(&["DROP", "PARTITION", "FIELD"]) {
        let what = format!("{base} DROP PARTITION FIELD");
        let action = async {
            let field = field_ref(c, table).await?;
            c.expect_end()?;
            Ok::<_, Error>(UpdatePartitionSpec::new().remove_field(field))
        }
        .await
        .map_err(|e| e.context(&what))?;
        commit(table, &what, action).await?;
    } else if c.eat_keywords(&["REPLACE", "PARTITION", "FIELD"]) {
        let what = format!("{base} REPLACE PARTITION FIELD");
        let action = async {
            let field = field_ref(c, table).await?;
            c.expect_keyword("WITH")?;
            let (term, name) = new_field(c)?;
            c.expect_end()?;
            Ok::<_, Error>(UpdatePartitionSpec::new().replace_field(field, term, name))
        }
        .await
        .map_err(|e| e.context(&what))?;
        commit(table, &what, action).await?;
    } else if c.peek_keyword("WRITE") {
        c.advance();
        let what = format!("{base} WRITE");
        let (order, mode) = write_order(c).map_err(|e| e.context(&what))?;
        let catalog = table.target.catalog().clone();
        let loaded = catalog
            .load_table(&table.ident)
            .await
            .map_err(|e| e.context(&what))?;
        // a property already set is not set again (a repeated clause commits nothing)
        let unchanged = loaded
            .metadata()
            .properties
            .get(WRITE_DISTRIBUTION_MODE)
            .map(String::as_str)
            == Some(mode);
        let mut txn = Transaction::new(catalog, table.ident.clone(), loaded).add_action(order);
        if !unchanged {
            txn = txn.add_action(
                UpdateProperties::new()
                    .set(WRITE_DISTRIBUTION_MODE, mode)
                    .map_err(|e| e.context(&what))?,
            );
        }
        txn.commit().await.map_err(|e| e.context(&what))?;
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// `term [AS name]`.
fn new_field(c: &mut Cursor<'_>) -> Result<(PartitionTerm, Option<String>)> {
    let (transform, column, _) = parse_term(c, "partition field")?;
    let name = if c.eat_keyword("AS") {
        Some(c.identifier()?)
    } else {
        None
    };
    Ok((PartitionTerm::new(transform, column.join(".")), name))
}

/// The field a `DROP`/`REPLACE` names: a bare name that is not a column of the
/// table's current schema is a partition field name, anything else a term.
async fn field_ref(c: &mut Cursor<'_>, table: &ResolvedTable) -> Result<PartitionFieldRef> {
    let (transform, column, _) = parse_term(c, "partition field")?;
    if let ([name], Transform::Identity) = (column.as_slice(), &transform) {
        let current = table.target.catalog().load_table(&table.ident).await?;
        if current
            .metadata()
            .current_schema()
            .field_by_name(name)
            .is_none()
        {
            return Ok(PartitionFieldRef::Name(name.clone()));
        }
    }
    Ok(PartitionFieldRef::Term(PartitionTerm::new(
        transform,
        column.join("."),
    )))
}

/// Table property: how Spark distributes rows to writers (`none`, `hash`, `range`).
pub(super) const WRITE_DISTRIBUTION_MODE: &str = "write.distribution-mode";

/// After `WRITE`: an ordering clause (`ORDERED BY terms`, `LOCALLY ORDERED BY terms`,
/// `UNORDERED`) and/or `DISTRIBUTED BY PARTITION`, in either order; the sort order and
/// the distribution mode they set (see the module docs).
fn write_order(c: &mut Cursor<'_>) -> Result<(ReplaceSortOrder, &'static str)> {
    let mut distributed = false;
    // (locally, terms) of the ordering clause; `UNORDERED` is local with no terms
    let mut ordering: Option<(bool, ReplaceSortOrder)> = None;
    while !c.at_end() {
        if c.eat_keywords(&["DISTRIBUTED", "BY"]) {
            if distributed {
                return Err(Error::invalid_argument("DISTRIBUTED BY is given twice"));
            }
            if !c.eat_keyword("PARTITION") {
                return Err(c.expected("PARTITION (rows are distributed by partition only)"));
            }
            distributed = true;
            continue;
        }
        if ordering.is_some() {
            return Err(c.expected("DISTRIBUTED BY PARTITION or the end (one ordering clause)"));
        }
        if c.eat_keyword("UNORDERED") {
            ordering = Some((true, ReplaceSortOrder::new()));
            continue;
        }
        let locally = c.eat_keyword("LOCALLY");
        if !c.eat_keywords(&["ORDERED", "BY"]) {
            return Err(c.expected(
                "ORDERED BY, LOCALLY ORDERED BY, UNORDERED or DISTRIBUTED BY PARTITION",
            ));
        }
        ordering = Some((locally, sort_terms(c)?));
    }
    let mode = match (&ordering, distributed) {
        (None, false) => {
            return Err(
                c.expected("ORDERED BY, LOCALLY ORDERED BY, UNORDERED or DISTRIBUTED BY PARTITION")
            )
        }
        (_, true) => "hash",
        (Some((true, _)), false) => "none",
        (Some((false, _)), false) => "range",
    };
    Ok((ordering.map(|(_, o)| o).unwrap_or_default(), mode))
}

/// `term [ASC|DESC] [NULLS FIRST|LAST], …` up to the end: the terms of a sort order
/// (also Spark's `sort_order` argument of `rewrite_data_files`).
pub(super) fn sort_terms(c: &mut Cursor<'_>) -> Result<ReplaceSortOrder> {
    let mut order = ReplaceSortOrder::new();
    loop {
        let (transform, column, _) = parse_term(c, "ORDERED BY")?;
        let direction = if c.eat_keyword("DESC") {
            SortDirection::Desc
        } else {
            c.eat_keyword("ASC");
            SortDirection::Asc
        };
        let nulls = if c.eat_keywords(&["NULLS", "FIRST"]) {
            Some(NullOrder::First)
        } else if c.eat_keywords(&["NULLS", "LAST"]) {
            Some(NullOrder::Last)
        } else {
            None
        };
        order = order.sort_by(
            PartitionTerm::new(transform, column.join(".")),
            direction,
            nulls,
        );
        if c.at_end() || c.peek_keyword("DISTRIBUTED") {
            return Ok(order);
        }
        if !c.eat(&Token::Comma) {
            return Err(c.expected("',', ASC, DESC, NULLS FIRST or NULLS LAST"));
        }
    }
}
