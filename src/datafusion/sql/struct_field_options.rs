//! Spark's options of a struct's fields in a column type, `STRUCT<a: INT NOT NULL COMMENT
//! 'the a', b: STRING>`, which DataFusion 55's parser refuses ("Expected: >, found:
//! NOT"). `CREATE TABLE`, `REPLACE TABLE` and `ALTER TABLE … ADD COLUMN` cut them from the
//! text DataFusion plans and give them to the planned Iceberg fields: `NOT NULL` makes the
//! field required, `COMMENT` its doc (as Spark's `StructField` nullability and comment
//! become Iceberg's `required` and `doc` in `SparkSchemaUtil.convert`).
//!
//! The fields are matched by order: every struct field of the column list, at any depth,
//! in the order its declaration starts (a struct field before the fields of its own
//! type; list elements and map keys and values are not struct fields, but the fields of
//! a struct inside them are), which is the order [`declare_field_options`] visits the
//! planned fields in.

use datafusion::sql::sqlparser::tokenizer::Token;

use super::tokens::{is_keyword, Cursor};
use crate::error::{Error, Result};
use crate::spec::{NestedField, Type};

/// What the declaration says of one struct field besides its name and type.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct FieldOptions {
    /// `NOT NULL`: the field is required.
    pub required: bool,
    /// `COMMENT '…'`: the field's doc.
    pub doc: Option<String>,
}

/// One open bracket of a column type.
#[derive(Debug)]
enum Bracket {
    /// `STRUCT<`: the index (in the declared options) of the field being read, once one
    /// started.
    Struct(Option<usize>),
    /// `ARRAY<`, `MAP<`, `(`.
    Other,
}

/// Reads a column definition's tokens one at a time (see [`FieldOptionsScan::step`]).
#[derive(Debug, Default)]
pub(super) struct FieldOptionsScan {
    open: Vec<Bracket>,
    /// The previous token was `STRUCT`.
    after_struct: bool,
    /// The next token starts a struct field (it follows `STRUCT<` or a `,` between fields).
    field_starts: bool,
}

impl FieldOptionsScan {
    /// Look at the token at the cursor (every token of the column definition, in order,
    /// is given once). Returns the byte range to cut and how many tokens it spans when
    /// the cursor is at a struct field's `NOT NULL` or `COMMENT '…'` (recorded in
    /// `declared`); the caller moves past them.
    pub fn step(
        &mut self,
        c: &Cursor<'_>,
        declared: &mut Vec<FieldOptions>,
    ) -> Option<(usize, usize, usize)> {
        let t = c.peek()?;
        let after_struct = std::mem::take(&mut self.after_struct);
        if std::mem::take(&mut self.field_starts) {
            // the field's name: never an option
            if let Some(Bracket::Struct(field)) = self.open.last_mut() {
                *field = Some(declared.len());
                declared.push(FieldOptions::default());
            }
        } else if let Some(Bracket::Struct(Some(field))) = self.open.last() {
            let field = *field;
            let second = c.peek_at(1);
            if is_keyword(&t.token, "NOT") && second.is_some_and(|n| is_keyword(&n.token, "NULL")) {
                let end = second.map_or(t.end, |n| n.end);
                if let Some(options) = declared.get_mut(field) {
                    options.required = true;
                }
                return Some((t.start, end, 2));
            }
            if is_keyword(&t.token, "COMMENT") {
                if let Some((doc, end)) =
                    second.and_then(|n| Some((super::tokens::string_literal(&n.token)?, n.end)))
                {
                    if let Some(options) = declared.get_mut(field) {
                        options.doc = Some(doc.to_string());
                    }
                    return Some((t.start, end, 2));
                }
            }
        }
        match &t.token {
            Token::Word(_) if is_keyword(&t.token, "STRUCT") => self.after_struct = true,
            Token::Lt if after_struct => {
                self.open.push(Bracket::Struct(None));
                self.field_starts = true;
            }
            Token::Lt | Token::LParen => self.open.push(Bracket::Other),
            Token::Gt | Token::RParen => {
                self.open.pop();
            }
            Token::ShiftRight => {
                self.open.pop();
                self.open.pop();
            }
            Token::Comma if matches!(self.open.last(), Some(Bracket::Struct(_))) => {
                self.field_starts = true;
            }
            _ => {}
        }
        None
    }
}

/// Give the struct fields of `columns` (at any depth, in declaration order; see the
/// module docs) the options `declared` holds for them.
///
/// Errors ([`ErrorKind::Unsupported`](crate::ErrorKind)): a number of struct fields
/// other than `declared`'s (the type was not read as DataFusion read it), when one of
/// them has an option.
pub(super) fn declare_field_options(
    columns: &mut [NestedField],
    declared: &[FieldOptions],
) -> Result<()> {
    fn visit(ty: &mut Type, declared: &[FieldOptions], seen: &mut usize) {
        match ty {
            Type::Struct(s) => {
                for f in &mut s.fields {
                    if let Some(options) = declared.get(*seen) {
                        f.required |= options.required;
                        if options.doc.is_some() {
                            f.doc.clone_from(&options.doc);
                        }
                    }
                    *seen += 1;
                    visit(&mut f.field_type, declared, seen);
                }
            }
            Type::List(l) => visit(&mut l.element_field.field_type, declared, seen),
            Type::Map(m) => {
                visit(&mut m.key_field.field_type, declared, seen);
                visit(&mut m.value_field.field_type, declared, seen);
            }
            Type::Primitive(_) => {}
        }
    }
    if declared.iter().all(|o| *o == FieldOptions::default()) {
        return Ok(());
    }
    let mut seen = 0;
    for column in columns.iter_mut() {
        visit(&mut column.field_type, declared, &mut seen);
    }
    if seen != declared.len() {
        return Err(Error::unsupported(format!(
            "a column list whose {} struct fields icefloe reads are {seen} in DataFusion's \
             plan (a spelling of a nested type icefloe does not read), with NOT NULL or \
             COMMENT on a struct field",
            declared.len()
        )));
    }
    Ok(())
}
