//! The partition and write-order clauses of `ALTER TABLE` (Spark's Iceberg SQL
//! extensions), each one commit of [`UpdatePartitionSpec`] or [`ReplaceSortOrder`]:
//!
//! - `ADD PARTITION FIELD term [AS name]`;
//! - `DROP PARTITION FIELD term|name`: a bare name that is not a column names a
//!   partition field, anything else is a term (as Spark's `DropPartitionFieldExec`);
//! - `REPLACE PARTITION FIELD term|name WITH term [AS name]`;
//! - `WRITE [LOCALLY] ORDERED BY term [ASC|DESC] [NULLS FIRST|LAST], …` and
//!   `WRITE UNORDERED` (icefloe sorts within each written file either way, so the two
//!   forms mean the same; `write.distribution-mode` is left as it is).
//!
//! A term is `col`, `bucket(N, col)`, `truncate(W, col)`, `years|months|days|hours(col)`
//! (see [`create_table::parse_term`]). `WRITE DISTRIBUTED BY PARTITION` is refused,
//! naming it.

use datafusion::sql::sqlparser::tokenizer::Token;

use super::alter_table::commit;
use super::create_table::parse_term;
use super::tokens::Cursor;
use super::ResolvedTable;
use crate::error::{Error, Result};
use crate::spec::Transform;
use crate::transaction::{
    NullOrder, PartitionFieldRef, PartitionTerm, ReplaceSortOrder, SortDirection,
    UpdatePartitionSpec,
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
        let action = write_order(c).map_err(|e| e.context(&what))?;
        commit(table, &what, action).await?;
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
    if let ([name], Transform::Identity) = (column.as_slice(), transform) {
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

/// After `WRITE`: `[LOCALLY] ORDERED BY term [ASC|DESC] [NULLS FIRST|LAST], …` or
/// `UNORDERED`.
fn write_order(c: &mut Cursor<'_>) -> Result<ReplaceSortOrder> {
    if c.eat_keyword("UNORDERED") {
        c.expect_end()?;
        return Ok(ReplaceSortOrder::new());
    }
    if c.peek_keyword("DISTRIBUTED") {
        return Err(Error::unsupported(
            "WRITE DISTRIBUTED BY PARTITION (icefloe writes each partition's rows to its own \
             files already; set 'write.distribution-mode' with SET TBLPROPERTIES)",
        ));
    }
    c.eat_keyword("LOCALLY");
    if !c.eat_keywords(&["ORDERED", "BY"]) {
        return Err(c.expected("ORDERED BY, LOCALLY ORDERED BY or UNORDERED"));
    }
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
        if c.at_end() {
            return Ok(order);
        }
        if !c.eat(&Token::Comma) {
            return Err(c.expected("',', ASC, DESC, NULLS FIRST or NULLS LAST"));
        }
    }
}
