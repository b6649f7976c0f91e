//! Values of the procedures' Spark `options` maps (`map('key', 'value', …)`), shared by
//! `rewrite_data_files` and `rewrite_position_delete_files`.

use crate::error::{Error, Result};

/// Option `key`'s value `v` as a number.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the option and the value.
pub(crate) fn option_number<T: std::str::FromStr>(key: &str, v: &str) -> Result<T> {
    v.trim().parse().map_err(|_| {
        // a number the option's type does not hold: say which numbers it takes
        let unsigned = std::any::type_name::<T>().starts_with('u');
        let why = match v.trim().parse::<f64>() {
            Err(_) => "not a valid number",
            Ok(x) if x.fract() != 0.0 => "not a whole number",
            // `1.0`: whole, but not written as an integer (Java's `propertyAsInt` refuses
            // it too)
            Ok(_) if v.contains('.') => "not written as an integer",
            Ok(x) if x < 0.0 && unsigned => "less than 0",
            Ok(_) => "out of the option's range",
        };
        Error::invalid_argument(format!("option '{key}' is '{v}', {why}"))
    })
}

/// Option `key`'s value `v` as a count from 1 to 2,147,483,647 (Java reads these
/// options with `propertyAsInt` and checks them positive: `max-concurrent-file-group-rewrites`,
/// `partial-progress.max-commits`).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the option and the value.
pub(crate) fn option_count(key: &str, v: &str) -> Result<usize> {
    let n: i64 = option_number(key, v)?;
    match usize::try_from(n) {
        Ok(n) if n >= 1 && n <= i32::MAX as usize => Ok(n),
        _ => Err(Error::invalid_argument(format!(
            "option '{key}' is '{v}': it must be at least 1 (and at most {})",
            i32::MAX
        ))),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A negative or fractional value of a count is named as such, not as "not a valid
    /// number" (a tester's `map('min-input-files', '-1')`).
    #[test]
    fn numbers_out_of_an_options_range_say_which_numbers_it_takes() {
        let e = option_number::<usize>("min-input-files", "-1").unwrap_err();
        assert!(e.to_string().contains("'-1', less than 0"), "{e}");
        let e = option_number::<u64>("target-file-size-bytes", "2.5").unwrap_err();
        assert!(e.to_string().contains("'2.5', not a whole number"), "{e}");
        // a whole number, too large (a second tester's)
        let e = option_number::<usize>("min-input-files", "99999999999999999999").unwrap_err();
        assert!(e.to_string().contains("out of the option's range"), "{e}");
        let e = option_number::<i32>("max-file-group-size", "1e20").unwrap_err();
        assert!(e.to_string().contains("out of the option's range"), "{e}");
        let e = option_number::<usize>("min-input-files", "two").unwrap_err();
        assert!(e.to_string().contains("'two', not a valid number"), "{e}");
        assert_eq!(option_number::<usize>("min-input-files", " 3 ").unwrap(), 3);
        let e = option_number::<usize>("min-input-files", "1.0").unwrap_err();
        assert!(e.to_string().contains("not written as an integer"), "{e}");
        // a count of 0 (a tester's `max-concurrent-file-group-rewrites` of 0)
        let e = option_count("max-concurrent-file-group-rewrites", "0").unwrap_err();
        assert!(e.to_string().contains("must be at least 1"), "{e}");
        // below 1, not "less than 0"; beyond Java's int
        for v in ["-1", "2147483648"] {
            let e = option_count("partial-progress.max-commits", v).unwrap_err();
            assert!(e.to_string().contains("must be at least 1"), "{v}: {e}");
        }
        assert_eq!(
            option_count("partial-progress.max-commits", "2").unwrap(),
            2
        );
    }
}
