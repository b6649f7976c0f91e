//! The storage properties a session reads tables named by location with: the default
//! object store properties (`s3.endpoint`, `s3.access-key-id`, …) of
//! `iceberg_scan('s3://…/vN.metadata.json')` and `CREATE EXTERNAL TABLE … STORED AS
//! ICEBERG LOCATION '…'`, which belong to no catalog and so get no catalog's FileIO
//! properties. The CLI sets them from its `--catalog` config's storage keys. A table's
//! own `OPTIONS` win over them; they win over the `AWS_*` environment, as every FileIO's
//! properties do ([`crate::io::store_options`]), so a caller that wants the environment
//! to win leaves out the keys it sets (the CLI does).
//!
//! They ride in the session as a `SessionConfig` extension, not as a config option:
//! options show in `SHOW ALL` and `information_schema.df_settings`, and these hold
//! secrets.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::prelude::SessionConfig;

/// Object store properties (Iceberg FileIO keys) for the tables a session reads by
/// location. `Debug` shows secret values as `***`.
#[derive(Clone, Default)]
pub struct LocationStorageProperties(pub HashMap<String, String>);

impl std::fmt::Debug for LocationStorageProperties {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LocationStorageProperties")
            .field(&crate::io::redacted(&self.0))
            .finish()
    }
}

impl LocationStorageProperties {
    /// `config` with these properties for its tables read by location.
    pub fn install(self, config: SessionConfig) -> SessionConfig {
        config.with_extension(Arc::new(self))
    }

    /// The properties `config` reads tables by location with (none when unset).
    pub fn of(config: &SessionConfig) -> HashMap<String, String> {
        config
            .get_extension::<LocationStorageProperties>()
            .map(|p| p.0.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_properties_are_read_back_and_debug_hides_secrets() {
        let properties = HashMap::from([
            ("s3.endpoint".to_string(), "http://h:1".to_string()),
            ("s3.secret-access-key".to_string(), "hush-123".to_string()),
        ]);
        let config = LocationStorageProperties(properties.clone()).install(SessionConfig::new());
        assert_eq!(LocationStorageProperties::of(&config), properties);
        assert!(LocationStorageProperties::of(&SessionConfig::new()).is_empty());
        let debug = format!("{:?}", LocationStorageProperties(properties));
        assert!(
            !debug.contains("hush-123") && debug.contains("http://h:1"),
            "{debug}"
        );
    }
}
