//! Which column metrics a data file records (Java `MetricsConfig` / `MetricsModes`).
//!
//! Table properties (Java `TableProperties` names and defaults):
//! - `write.metadata.metrics.default`: the mode of every column (default `truncate(16)`);
//! - `write.metadata.metrics.column.<column name>`: the mode of one column, named by its
//!   full dotted name (`a`, `s.b`, `l.element`, `m.key`, `m.value`);
//! - `write.metadata.metrics.max-inferred-column-defaults` (default 100): when no default
//!   is set and the schema has more top-level columns than this, only the first ones get
//!   `truncate(16)` and the rest get `none` (wide tables keep small manifests).
//!
//! Modes: `none` (no metrics), `counts` (value, null and NaN counts, column sizes),
//! `truncate(N)` (counts and bounds, string bounds cut to N code points and binary bounds
//! to N bytes), `full` (counts and exact bounds).
//!
//! The columns of the table's default sort order under an order-preserving transform
//! (identity, `truncate`, `year`/`month`/`day`/`hour`: Java
//! `SortOrderUtil.orderPreservingSortedColumns`) get `truncate(16)` where the default
//! mode is `none` or `counts`, and the default mode otherwise (Java
//! `MetricsConfig.sortedColumnDefaultMode`); a `write.metadata.metrics.column.<name>`
//! key still wins. Set by [`MetricsConfig::with_sort_order`].

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::spec::{NestedField, Schema, SortOrder, TableMetadata, Transform, Type};
use crate::table_properties as tp;

/// Property naming the default metrics mode.
pub const METRICS_DEFAULT_PROPERTY: &str = tp::METRICS_DEFAULT.name;
/// Prefix of the properties naming one column's metrics mode.
pub const METRICS_COLUMN_PREFIX: &str = tp::METRICS_COLUMN.name;
/// Property limiting how many columns get the inferred default mode.
pub const METRICS_MAX_INFERRED_PROPERTY: &str = tp::METRICS_MAX_INFERRED_COLUMN_DEFAULTS.name;
/// Java's default for [`METRICS_MAX_INFERRED_PROPERTY`].
pub const METRICS_MAX_INFERRED_DEFAULT: usize = 100;

/// The metrics kept for one column (Java `MetricsModes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsMode {
    /// No metrics at all, not even the column size.
    None,
    /// Column size, value, null and NaN counts; no bounds.
    Counts,
    /// Counts and bounds; string bounds cut to N code points, binary to N bytes (N > 0).
    Truncate(u32),
    /// Counts and exact bounds.
    Full,
}

impl MetricsMode {
    /// Java's default mode, `truncate(16)`.
    pub const DEFAULT: MetricsMode = MetricsMode::Truncate(16);

    /// Parse `none`, `counts`, `full` or `truncate(N)` with 0 < N ≤ 2147483647 (Java's
    /// `Integer.parseInt`; case-insensitive).
    ///
    /// Errors: anything else ([`crate::ErrorKind::InvalidArgument`]).
    pub fn parse(s: &str) -> Result<Self> {
        // as Java's MetricsModes.fromString: any case, no blanks
        let t = s.to_ascii_lowercase();
        let bad = || Error::invalid_argument(format!("invalid metrics mode '{s}'"));
        Ok(match t.as_str() {
            "none" => MetricsMode::None,
            "counts" => MetricsMode::Counts,
            "full" => MetricsMode::Full,
            _ => {
                let n = t
                    .strip_prefix("truncate(")
                    .and_then(|r| r.strip_suffix(')'))
                    .ok_or_else(bad)?;
                // Java's `truncate\((\d+)\)`: digits only
                if !n.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                let n: u32 = n.parse().map_err(|_| bad())?;
                // Java reads N with `Integer.parseInt`: 1 to 2147483647
                if n == 0 || n > i32::MAX as u32 {
                    return Err(bad());
                }
                MetricsMode::Truncate(n)
            }
        })
    }

    /// Whether bounds are kept.
    pub fn keeps_bounds(&self) -> bool {
        matches!(self, MetricsMode::Truncate(_) | MetricsMode::Full)
    }
}

/// The metrics modes configured by table properties; resolve them against a schema with
/// [`MetricsConfig::modes_by_field_id`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsConfig {
    /// `write.metadata.metrics.default`, when set.
    pub default_mode: Option<MetricsMode>,
    /// `write.metadata.metrics.column.<name>`: full column name → mode.
    pub column_modes: HashMap<String, MetricsMode>,
    /// `write.metadata.metrics.max-inferred-column-defaults`.
    pub max_inferred_column_defaults: usize,
    /// The field ids of the table's sort-order columns whose mode is promoted (see the
    /// module docs; [`Self::with_sort_order`]).
    pub sorted_field_ids: Vec<i32>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        Self {
            default_mode: None,
            column_modes: HashMap::new(),
            max_inferred_column_defaults: METRICS_MAX_INFERRED_DEFAULT,
            sorted_field_ids: Vec::new(),
        }
    }
}

impl MetricsConfig {
    /// The configuration in table properties (see the module docs for the names).
    ///
    /// Errors: a mode that does not parse, or a negative or non-numeric
    /// `max-inferred-column-defaults` ([`crate::ErrorKind::InvalidArgument`] naming the
    /// property).
    pub fn from_properties(props: &HashMap<String, String>) -> Result<Self> {
        let mut config = MetricsConfig::default();
        let parse = |key: &str, value: &str| {
            tp::validate(key, value)?;
            MetricsMode::parse(value)
        };
        if let Some(v) = props.get(METRICS_DEFAULT_PROPERTY) {
            config.default_mode = Some(parse(METRICS_DEFAULT_PROPERTY, v)?);
        }
        if let Some(n) = tp::METRICS_MAX_INFERRED_COLUMN_DEFAULTS.int(props)? {
            config.max_inferred_column_defaults = usize::try_from(n).unwrap_or(usize::MAX);
        }
        for (key, value) in props {
            if let Some(column) = key.strip_prefix(METRICS_COLUMN_PREFIX) {
                config
                    .column_modes
                    .insert(column.to_string(), parse(key, value)?);
            }
        }
        Ok(config)
    }

    /// The configuration of table `m`: its properties ([`Self::from_properties`]) and its
    /// default sort order ([`Self::with_sort_order`]), as Java's `MetricsConfig.forTable`.
    ///
    /// Errors: as [`Self::from_properties`].
    pub fn for_table(m: &TableMetadata) -> Result<Self> {
        Ok(Self::from_properties(&m.properties)?.with_sort_order(default_sort_order(m)))
    }

    /// This configuration with the columns of `order` (the table's default sort order;
    /// `None`: unsorted) under an order-preserving transform promoted (see the module
    /// docs).
    pub fn with_sort_order(mut self, order: Option<&SortOrder>) -> Self {
        self.sorted_field_ids = order
            .map(|o| {
                o.fields
                    .iter()
                    .filter(|f| {
                        matches!(
                            f.transform,
                            Transform::Identity
                                | Transform::Truncate(_)
                                | Transform::Year
                                | Transform::Month
                                | Transform::Day
                                | Transform::Hour
                        )
                    })
                    .map(|f| f.source_id)
                    .collect()
            })
            .unwrap_or_default();
        self
    }

    /// The mode of every field (nested ones included) of `schema`, by field id.
    pub fn modes_by_field_id(&self, schema: &Schema) -> HashMap<i32, MetricsMode> {
        let columns = schema.columns();
        let inferred_limit = match self.default_mode {
            Some(_) => usize::MAX,
            None if columns.len() <= self.max_inferred_column_defaults => usize::MAX,
            None => self.max_inferred_column_defaults,
        };
        let mut out = HashMap::new();
        for (i, column) in columns.iter().enumerate() {
            let base = match self.default_mode {
                Some(m) => m,
                None if i < inferred_limit => MetricsMode::DEFAULT,
                None => MetricsMode::None,
            };
            let mut names = Vec::new();
            field_names(column, "", &mut names);
            for (id, name) in names {
                // Java `sortedColumnDefaultMode`: `none`/`counts` → `truncate(16)`
                let default = match base {
                    MetricsMode::None | MetricsMode::Counts
                        if self.sorted_field_ids.contains(&id) =>
                    {
                        MetricsMode::DEFAULT
                    }
                    m => m,
                };
                let mode = self.column_modes.get(&name).copied().unwrap_or(default);
                out.insert(id, mode);
            }
        }
        out
    }
}

/// The default sort order of `m`, when it has one other than unsorted.
pub(crate) fn default_sort_order(m: &TableMetadata) -> Option<&SortOrder> {
    m.sort_orders
        .iter()
        .find(|o| o.order_id == m.default_sort_order_id && !o.fields.is_empty())
}

/// Check that every `write.metadata.metrics.column.<name>` key of `properties` for which
/// `changed` is true names a field of `schema` by its full dotted name, case-sensitively
/// (Java `MetricsConfig.from`: `schema.findField(name)`, else `ValidationException`
/// "Invalid metrics config, could not find column"), so that a misspelt column does not
/// silently keep the default mode.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the key and the column.
pub fn check_metrics_columns(
    properties: &HashMap<String, String>,
    schema: &Schema,
    changed: impl Fn(&str) -> bool,
) -> Result<()> {
    let mut keys: Vec<&String> = properties
        .keys()
        .filter(|k| k.starts_with(METRICS_COLUMN_PREFIX) && changed(k))
        .collect();
    if keys.is_empty() {
        return Ok(());
    }
    keys.sort();
    let mut names = Vec::new();
    for column in schema.columns() {
        field_names(column, "", &mut names);
    }
    for key in keys {
        let column = &key[METRICS_COLUMN_PREFIX.len()..];
        if !names.iter().any(|(_, name)| name == column) {
            return Err(Error::invalid_argument(format!(
                "table property '{key}': no column '{column}' in the table schema (column \
                 names are case-sensitive; nested fields are named by their full dotted \
                 name, e.g. 's.b', 'l.element', 'm.value')"
            )));
        }
    }
    Ok(())
}

/// Every field under `field` with its full dotted column name (Java
/// `Schema.findColumnName`: list elements `.element`, map keys and values `.key`/`.value`).
pub(crate) fn field_names(field: &NestedField, prefix: &str, out: &mut Vec<(i32, String)>) {
    let name = if prefix.is_empty() {
        field.name.clone()
    } else {
        format!("{prefix}.{}", field.name)
    };
    match field.field_type.as_ref() {
        Type::Struct(s) => {
            for f in &s.fields {
                field_names(f, &name, out);
            }
        }
        Type::List(l) => field_names(&l.element_field, &name, out),
        Type::Map(m) => {
            field_names(&m.key_field, &name, out);
            field_names(&m.value_field, &name, out);
        }
        Type::Primitive(_) => {}
    }
    out.push((field.id, name));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{PrimitiveType, StructType};

    #[test]
    fn parses_modes() {
        assert_eq!(MetricsMode::parse("None").unwrap(), MetricsMode::None);
        assert_eq!(MetricsMode::parse("counts").unwrap(), MetricsMode::Counts);
        assert_eq!(MetricsMode::parse("FULL").unwrap(), MetricsMode::Full);
        assert_eq!(
            MetricsMode::parse("truncate(4)").unwrap(),
            MetricsMode::Truncate(4)
        );
        assert_eq!(
            MetricsMode::parse("truncate(2147483647)").unwrap(),
            MetricsMode::Truncate(2147483647)
        );
        for bad in [
            "truncate(0)",
            "truncate(x)",
            "truncate",
            "some",
            " full",
            "none ",
            "truncate( 4)",
            "truncate(+4)",
            "truncate(2147483648)",
            "truncate(4294967296)",
        ] {
            assert!(MetricsMode::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolves_per_column() {
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "a", Type::Primitive(PrimitiveType::Long)),
                NestedField::optional(
                    2,
                    "s",
                    Type::Struct(StructType::new(vec![NestedField::optional(
                        3,
                        "b",
                        Type::Primitive(PrimitiveType::String),
                    )])),
                ),
            ],
        );
        let props = HashMap::from([
            (METRICS_DEFAULT_PROPERTY.to_string(), "counts".to_string()),
            (format!("{METRICS_COLUMN_PREFIX}s.b"), "full".to_string()),
        ]);
        let modes = MetricsConfig::from_properties(&props)
            .unwrap()
            .modes_by_field_id(&schema);
        assert_eq!(modes[&1], MetricsMode::Counts);
        assert_eq!(modes[&2], MetricsMode::Counts);
        assert_eq!(modes[&3], MetricsMode::Full);

        // no default: the first `max-inferred` columns get truncate(16), the rest none
        let props = HashMap::from([(METRICS_MAX_INFERRED_PROPERTY.to_string(), "1".to_string())]);
        let modes = MetricsConfig::from_properties(&props)
            .unwrap()
            .modes_by_field_id(&schema);
        assert_eq!(modes[&1], MetricsMode::Truncate(16));
        assert_eq!(modes[&3], MetricsMode::None);

        // sort-order columns: none/counts promoted to truncate(16), an override wins
        let order = |id: i32, transform: Transform| SortOrder {
            order_id: 1,
            fields: vec![crate::spec::SortField {
                transform,
                source_id: id,
                direction: crate::spec::SortDirection::Asc,
                null_order: crate::spec::NullOrder::First,
            }],
        };
        for (default, expected) in [
            ("none", MetricsMode::Truncate(16)),
            ("counts", MetricsMode::Truncate(16)),
            ("full", MetricsMode::Full),
            ("truncate(4)", MetricsMode::Truncate(4)),
        ] {
            let props =
                HashMap::from([(METRICS_DEFAULT_PROPERTY.to_string(), default.to_string())]);
            let config = MetricsConfig::from_properties(&props).unwrap();
            let base = config.modes_by_field_id(&schema)[&1];
            let sorted = config
                .clone()
                .with_sort_order(Some(&order(3, Transform::Truncate(2))));
            let modes = sorted.modes_by_field_id(&schema);
            assert_eq!(modes[&3], expected, "{default}");
            assert_eq!(
                modes[&1], base,
                "{default}: an unsorted column keeps the default"
            );
            // a bucket does not preserve order
            let bucketed = config.with_sort_order(Some(&order(3, Transform::Bucket(4))));
            assert_eq!(bucketed.modes_by_field_id(&schema)[&3], base, "{default}");
        }
        let props = HashMap::from([
            (METRICS_DEFAULT_PROPERTY.to_string(), "none".to_string()),
            (format!("{METRICS_COLUMN_PREFIX}a"), "counts".to_string()),
        ]);
        let modes = MetricsConfig::from_properties(&props)
            .unwrap()
            .with_sort_order(Some(&order(1, Transform::Identity)))
            .modes_by_field_id(&schema);
        assert_eq!(modes[&1], MetricsMode::Counts);

        // keys naming no field are refused, case-sensitively; nested names are dotted
        let ok = HashMap::from([
            (format!("{METRICS_COLUMN_PREFIX}a"), "full".to_string()),
            (format!("{METRICS_COLUMN_PREFIX}s.b"), "full".to_string()),
        ]);
        check_metrics_columns(&ok, &schema, |_| true).unwrap();
        for column in ["A", "b", "s.B", "nmae"] {
            let key = format!("{METRICS_COLUMN_PREFIX}{column}");
            let props = HashMap::from([(key.clone(), "full".to_string())]);
            let err = check_metrics_columns(&props, &schema, |_| true).unwrap_err();
            assert!(err.to_string().contains(&key), "{err}");
            // an unchanged key is not checked (a table holding one keeps working)
            check_metrics_columns(&props, &schema, |_| false).unwrap();
        }

        let bad = HashMap::from([(format!("{METRICS_COLUMN_PREFIX}a"), "most".to_string())]);
        let err = MetricsConfig::from_properties(&bad).unwrap_err();
        assert!(
            err.to_string().contains("write.metadata.metrics.column.a"),
            "{err}"
        );
    }
}
