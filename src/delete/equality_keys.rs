//! [`EqualityDeleteKeys`]: the keys of a set of equality delete files, probed by data rows.
//!
//! Spec: "Equality Delete Files" and "Scan Planning". A data row is deleted when an
//! equality delete row has the same values in the `equality_ids` columns (a NULL equals
//! NULL only), its data sequence number is strictly greater than the data file's, and the
//! delete is global (written unpartitioned) or written for the data file's spec and
//! partition (its "scope").
//!
//! Each key keeps the greatest delete sequence number, globally and per scope, so a probe
//! is one hash lookup and a comparison. A single integer key (`int`, `long`: the usual
//! row id) is hashed as an `i64`; any other key, as its Arrow row-format bytes.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int32Array, Int64Array};
use datafusion::arrow::datatypes::{DataType, Int64Type, SchemaRef};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::HashMap;

use crate::error::{Error, Result};

/// The scope of a delete that applies to every partition (written unpartitioned).
pub const GLOBAL_SCOPE: i32 = -1;

/// The greatest delete sequence numbers of one key.
#[derive(Debug, Default, Clone)]
struct KeySequences {
    global: Option<i64>,
    by_scope: Vec<(i32, i64)>,
}

impl KeySequences {
    fn record(&mut self, scope: i32, seq: i64) {
        if scope == GLOBAL_SCOPE {
            self.global = Some(self.global.map_or(seq, |s| s.max(seq)));
        } else if let Some(e) = self.by_scope.iter_mut().find(|e| e.0 == scope) {
            e.1 = e.1.max(seq);
        } else {
            self.by_scope.push((scope, seq));
        }
    }

    fn deletes(&self, scope: i32, data_seq: i64) -> bool {
        self.global.is_some_and(|s| s > data_seq)
            || self
                .by_scope
                .iter()
                .any(|(sc, s)| *sc == scope && *s > data_seq)
    }
}

#[derive(Debug)]
enum KeyIndex {
    /// One `int` or `long` column; `nulls` is the NULL key.
    Integer {
        keys: HashMap<i64, KeySequences>,
        nulls: Option<KeySequences>,
    },
    /// Anything else: the Arrow row format of the key columns.
    Rows {
        converter: RowConverter,
        keys: HashMap<Box<[u8]>, KeySequences>,
    },
}

/// The delete keys of one set of equality field ids.
#[derive(Debug)]
pub struct EqualityDeleteKeys {
    index: KeyIndex,
    /// The key types (the table's types of the equality columns).
    types: Vec<DataType>,
}

/// An `int` or `long` column as `Int64`.
fn as_longs(column: &ArrayRef) -> Result<Int64Array> {
    let column = datafusion::arrow::compute::cast(column, &DataType::Int64)?;
    Ok(column.as_primitive::<Int64Type>().clone())
}

fn no_key() -> Error {
    Error::invalid_data("equality delete probe without key columns")
}

impl EqualityDeleteKeys {
    /// An empty index for keys of `key_schema` (one field per equality id, in order).
    ///
    /// Errors when Arrow cannot hash a key type (Unsupported).
    pub fn new(key_schema: &SchemaRef) -> Result<Self> {
        let types: Vec<DataType> = key_schema
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let index = match types.as_slice() {
            [DataType::Int32 | DataType::Int64] => KeyIndex::Integer {
                keys: HashMap::default(),
                nulls: None,
            },
            _ => KeyIndex::Rows {
                converter: RowConverter::new(types.iter().cloned().map(SortField::new).collect())
                    .map_err(|e| {
                    Error::unsupported(format!("equality delete keys of types {types:?}"))
                        .with_source(e)
                })?,
                keys: HashMap::default(),
            },
        };
        Ok(Self { index, types })
    }

    /// Distinct keys held.
    pub fn len(&self) -> usize {
        match &self.index {
            KeyIndex::Integer { keys, nulls } => keys.len() + usize::from(nulls.is_some()),
            KeyIndex::Rows { keys, .. } => keys.len(),
        }
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Add the rows of one delete file's key `columns` (the key schema's types), deleting
    /// within `scope` ([`GLOBAL_SCOPE`] or a partition scope id) at data sequence number
    /// `sequence_number`.
    pub fn insert(&mut self, columns: &[ArrayRef], scope: i32, sequence_number: i64) -> Result<()> {
        match &mut self.index {
            KeyIndex::Integer { keys, nulls } => {
                let values = as_longs(columns.first().ok_or_else(no_key)?)?;
                for v in values.iter() {
                    match v {
                        Some(v) => keys.entry(v).or_default().record(scope, sequence_number),
                        None => nulls
                            .get_or_insert_with(KeySequences::default)
                            .record(scope, sequence_number),
                    }
                }
            }
            KeyIndex::Rows { converter, keys } => {
                let converted = converter.convert_columns(columns)?;
                for row in converted.iter() {
                    keys.entry(row.as_ref().into())
                        .or_default()
                        .record(scope, sequence_number);
                }
            }
        }
        Ok(())
    }

    /// Probe data `rows` (indices into the columns, ascending): the ones a delete
    /// applies to, ascending, given the rows' key `columns` (cast to the key types when
    /// they differ, e.g. `Utf8View` data against `Utf8` keys), their data files'
    /// `scopes` and data `sequence_numbers`.
    pub fn probe(
        &self,
        columns: &[ArrayRef],
        scopes: &Int32Array,
        sequence_numbers: &Int64Array,
        rows: impl IntoIterator<Item = usize>,
    ) -> Result<Vec<usize>> {
        let columns = columns
            .iter()
            .zip(&self.types)
            .map(|(c, t)| {
                if c.data_type() == t {
                    Ok(Arc::clone(c))
                } else {
                    datafusion::arrow::compute::cast(c, t)
                }
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let deletes = |found: Option<&KeySequences>, i: usize| {
            found.is_some_and(|k| k.deletes(scopes.value(i), sequence_numbers.value(i)))
        };
        let rows = rows.into_iter();
        Ok(match &self.index {
            KeyIndex::Integer { keys, nulls } => {
                let values = as_longs(columns.first().ok_or_else(no_key)?)?;
                rows.filter(|&i| {
                    let found = if values.is_valid(i) {
                        keys.get(&values.value(i))
                    } else {
                        nulls.as_ref()
                    };
                    deletes(found, i)
                })
                .collect()
            }
            KeyIndex::Rows { converter, keys } => {
                let converted = converter.convert_columns(&columns)?;
                rows.filter(|&i| deletes(keys.get(converted.row(i).as_ref()), i))
                    .collect()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::StringArray;
    use datafusion::arrow::datatypes::{Field, Schema};

    use super::*;

    fn keys(dt: DataType) -> EqualityDeleteKeys {
        EqualityDeleteKeys::new(&Arc::new(Schema::new(vec![Field::new("k", dt, true)]))).unwrap()
    }

    /// Which rows survive the probe of every row.
    fn probe(k: &EqualityDeleteKeys, column: ArrayRef, scope: i32, seq: i64) -> Vec<bool> {
        let n = column.len();
        let deleted = k
            .probe(
                &[column],
                &Int32Array::from(vec![scope; n]),
                &Int64Array::from(vec![seq; n]),
                0..n,
            )
            .unwrap();
        (0..n).map(|i| !deleted.contains(&i)).collect()
    }

    #[test]
    fn integer_keys_follow_sequence_numbers_scopes_and_nulls() {
        let mut k = keys(DataType::Int64);
        let deletes: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None]));
        k.insert(&[deletes], GLOBAL_SCOPE, 5).unwrap();
        let scoped: ArrayRef = Arc::new(Int64Array::from(vec![2]));
        k.insert(&[scoped], 7, 5).unwrap();
        assert_eq!(k.len(), 3);
        let data =
            || -> ArrayRef { Arc::new(Int64Array::from(vec![Some(1), Some(2), None, Some(3)])) };
        // older data (4 < 5) in scope 7: 1 (global), 2 (scope 7) and NULL are deleted
        assert_eq!(probe(&k, data(), 7, 4), vec![false, false, false, true]);
        // another scope: 2 survives
        assert_eq!(probe(&k, data(), 8, 4), vec![false, true, false, true]);
        // data as new as the deletes: nothing is deleted (strictly greater only)
        assert_eq!(probe(&k, data(), 7, 5), vec![true; 4]);
        // an int column probes the same long keys
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![1, 3]));
        assert_eq!(probe(&k, ints, 7, 0), vec![false, true]);
    }

    #[test]
    fn other_keys_use_the_row_format_and_cast_the_data() {
        let mut k = keys(DataType::Utf8);
        let deletes: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None]));
        k.insert(&[deletes], GLOBAL_SCOPE, 2).unwrap();
        let data: ArrayRef = Arc::new(datafusion::arrow::array::StringViewArray::from(vec![
            Some("a"),
            Some("b"),
            None,
        ]));
        assert_eq!(probe(&k, data, 0, 1), vec![false, true, false]);
    }

    #[test]
    fn rows_already_dropped_are_not_probed() {
        let mut k = keys(DataType::Int32);
        k.insert(
            &[Arc::new(Int32Array::from(vec![1])) as ArrayRef],
            GLOBAL_SCOPE,
            2,
        )
        .unwrap();
        let deleted = k
            .probe(
                &[Arc::new(Int32Array::from(vec![1, 1, 1])) as ArrayRef],
                &Int32Array::from(vec![0, 0, 0]),
                &Int64Array::from(vec![1, 1, 1]),
                [1, 2],
            )
            .unwrap();
        assert_eq!(deleted, vec![1, 2]);
    }
}
