//! How often and how long a commit retries after losing a race (Java
//! `TableProperties.COMMIT_*`, `Tasks.exponentialBackoff`).

use std::collections::HashMap;
use std::time::Duration;

use crate::error::{Error, Result};

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
    /// The policy set by table properties (defaults for the unset ones).
    ///
    /// Errors: a value that is not a non-negative number, naming the property.
    pub fn from_properties(properties: &HashMap<String, String>) -> Result<Self> {
        let d = Self::default();
        let get = |key: &str, default: u64| -> Result<u64> {
            match properties.get(key) {
                None => Ok(default),
                Some(v) => v.trim().parse::<u64>().map_err(|_| {
                    Error::invalid_argument(format!(
                        "table property '{key}' is '{v}', not a non-negative number"
                    ))
                }),
            }
        };
        Ok(Self {
            num_retries: get("commit.retry.num-retries", d.num_retries.into())?.min(u32::MAX.into())
                as u32,
            min_wait_ms: get("commit.retry.min-wait-ms", d.min_wait_ms)?,
            max_wait_ms: get("commit.retry.max-wait-ms", d.max_wait_ms)?,
            total_timeout_ms: get("commit.retry.total-timeout-ms", d.total_timeout_ms)?,
        })
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
        ]))
        .unwrap();
        assert!(p.may_retry(2, Duration::ZERO));
        assert!(!p.may_retry(3, Duration::ZERO));
        let w1 = p.wait(1).as_millis();
        assert!((10..=11).contains(&w1), "{w1}");
        let w3 = p.wait(3).as_millis();
        assert!((30..=33).contains(&w3), "{w3}");
        let err = RetryPolicy::from_properties(&HashMap::from([(
            "commit.retry.num-retries".to_string(),
            "many".to_string(),
        )]))
        .unwrap_err();
        assert!(
            err.to_string().contains("commit.retry.num-retries"),
            "{err}"
        );
    }
}
