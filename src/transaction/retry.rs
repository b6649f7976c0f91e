//! How often and how long a commit retries after losing a race (Java
//! `TableProperties.COMMIT_*`, `Tasks.exponentialBackoff`).

use std::collections::HashMap;
use std::time::Duration;

use crate::table_properties::{
    TableProperty, COMMIT_MAX_RETRY_WAIT_MS, COMMIT_MIN_RETRY_WAIT_MS, COMMIT_NUM_RETRIES,
    COMMIT_TOTAL_RETRY_TIME_MS,
};

const RETRY_PROPERTIES: [TableProperty; 4] = [
    COMMIT_NUM_RETRIES,
    COMMIT_MIN_RETRY_WAIT_MS,
    COMMIT_MAX_RETRY_WAIT_MS,
    COMMIT_TOTAL_RETRY_TIME_MS,
];

/// The retry schedule of a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// `commit.retry.num-retries` (default 4): retries after the first attempt.
    pub num_retries: u32,
    /// `commit.retry.min-wait-ms` (default 100): the first wait, ms.
    pub min_wait_ms: u64,
    /// `commit.retry.max-wait-ms` (default 60000): the longest wait, ms.
    pub max_wait_ms: u64,
    /// `commit.retry.total-timeout-ms` (default 1800000): no retry starts later, ms.
    pub total_timeout_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            num_retries: 4,
            min_wait_ms: 100,
            max_wait_ms: 60_000,
            total_timeout_ms: 1_800_000,
        }
    }
}

impl RetryPolicy {
    /// The policy set by table properties: defaults for the unset ones, and for the ones
    /// icefloe cannot use ([`Self::unusable`] names them).
    ///
    /// Never an error, by design: `SET TBLPROPERTIES` refuses such values, but another
    /// engine may have written one (PyIceberg sets any string; Java's
    /// `PropertyUtil.propertyAsInt` would throw at every commit). Failing here would fail
    /// every commit to the table, including the `UNSET` that repairs it, while the value
    /// only decides how persistently a commit retries after losing a race and never what
    /// it writes. So the default applies, and a commit that gives up after its retries
    /// names the values it could not use.
    pub fn from_properties(properties: &HashMap<String, String>) -> Self {
        let d = Self::default();
        let get = |p: TableProperty, default: u64| -> u64 {
            match p.int(properties) {
                Ok(Some(n)) => u64::try_from(n).unwrap_or(default),
                Ok(None) | Err(_) => default,
            }
        };
        Self {
            num_retries: u32::try_from(get(COMMIT_NUM_RETRIES, d.num_retries.into()))
                .unwrap_or(u32::MAX),
            min_wait_ms: get(COMMIT_MIN_RETRY_WAIT_MS, d.min_wait_ms),
            max_wait_ms: get(COMMIT_MAX_RETRY_WAIT_MS, d.max_wait_ms),
            total_timeout_ms: get(COMMIT_TOTAL_RETRY_TIME_MS, d.total_timeout_ms),
        }
    }

    /// The `commit.retry.*` values in `properties` that [`Self::from_properties`] could
    /// not use (and replaced by the default), each as its validation error's message.
    pub fn unusable(properties: &HashMap<String, String>) -> Vec<String> {
        RETRY_PROPERTIES
            .iter()
            .filter_map(|p| p.int(properties).err())
            .map(|e| e.message().to_string())
            .collect()
    }

    /// Whether retry number `retry` (1-based) may start after `elapsed`.
    pub fn may_retry(&self, retry: u32, elapsed: Duration) -> bool {
        retry <= self.num_retries && elapsed.as_millis() < u128::from(self.total_timeout_ms)
    }

    /// The wait before retry number `retry` (1-based): `min_wait_ms · 2^(retry-1)`,
    /// capped at `max_wait_ms`, with up to 10 % random jitter added so racing writers
    /// spread out.
    pub fn wait(&self, retry: u32) -> Duration {
        let exp = self
            .min_wait_ms
            .saturating_mul(1u64 << retry.saturating_sub(1).min(30))
            .min(self.max_wait_ms);
        let jitter = (uuid::Uuid::new_v4().as_u128() % 1000) as u64 * exp / 10_000;
        Duration::from_millis(exp + jitter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_properties_and_backs_off() {
        let p = RetryPolicy::from_properties(&HashMap::from([
            ("commit.retry.num-retries".to_string(), "2".to_string()),
            ("commit.retry.min-wait-ms".to_string(), "10".to_string()),
            ("commit.retry.max-wait-ms".to_string(), "30".to_string()),
        ]));
        assert!(p.may_retry(2, Duration::ZERO));
        assert!(!p.may_retry(3, Duration::ZERO));
        let w1 = p.wait(1).as_millis();
        assert!((10..=11).contains(&w1), "{w1}");
        let w3 = p.wait(3).as_millis();
        assert!((30..=33).contains(&w3), "{w3}");
    }

    #[test]
    fn unusable_values_take_the_default_and_are_named() {
        let props = HashMap::from([
            ("commit.retry.num-retries".to_string(), "-1".to_string()),
            ("commit.retry.min-wait-ms".to_string(), "soon".to_string()),
            ("commit.retry.max-wait-ms".to_string(), "30".to_string()),
        ]);
        let p = RetryPolicy::from_properties(&props);
        let d = RetryPolicy::default();
        assert_eq!(
            p,
            RetryPolicy {
                max_wait_ms: 30,
                ..d
            }
        );
        assert_eq!(
            RetryPolicy::unusable(&props),
            vec![
                "table property 'commit.retry.num-retries' is '-1' (expected an integer from 0 \
                 to 2147483647)"
                    .to_string(),
                "table property 'commit.retry.min-wait-ms' is 'soon' (expected a non-negative \
                 integer)"
                    .to_string(),
            ]
        );
    }
}
