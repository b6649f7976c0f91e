//! Values of the procedures' Spark `options` maps (`map('key', 'value', …)`), shared by
//! `rewrite_data_files` and `rewrite_position_delete_files`.

use crate::error::{Error, Result};

/// Option `key`'s value `v` as a number.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the option and the value.
pub(crate) fn option_number<T: std::str::FromStr>(key: &str, v: &str) -> Result<T> {
    v.trim().parse().map_err(|_| {
        Error::invalid_argument(format!("option '{key}' is '{v}', not a valid number"))
    })
}

/// Option `key`'s value `v` as `true` or `false` (any case).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the option and the value.
pub(crate) fn option_flag(key: &str, v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Error::invalid_argument(format!(
            "option '{key}' is '{v}', not true or false"
        ))),
    }
}
