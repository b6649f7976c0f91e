//! How a file read through [`FileIO`](super::FileIO) is named in errors: by the location
//! the metadata stores and, for a moved table, also where it was read (the remapped
//! location), so a damaged file can be found.

/// Error context naming a file by its stored path and, when remapped, where it was read.
pub(crate) fn file_context(kind: &str, file_io: &crate::io::FileIO, location: &str) -> String {
    match file_io.remap(location) {
        Ok(actual)
            if super::normalize_location(location).ok().as_deref() != Some(actual.as_str()) =>
        {
            format!("{kind} '{location}' (read at '{actual}')")
        }
        _ => format!("{kind} '{location}'"),
    }
}

/// `e`, an error decoding the file at `location`, with [`file_context`] before it when the
/// file was read elsewhere (a moved table's remapped location): the decoders name the
/// stored path only, which for a moved table is not where the damaged file is.
pub(crate) fn when_moved(
    e: crate::Error,
    kind: &str,
    file_io: &crate::io::FileIO,
    location: &str,
) -> crate::Error {
    match file_io.remap(location) {
        Ok(actual)
            if super::normalize_location(location).ok().as_deref() != Some(actual.as_str()) =>
        {
            e.context(file_context(kind, file_io, location))
        }
        _ => e,
    }
}
