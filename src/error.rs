//! The crate's one error type.
//!
//! Every fallible function in icefloe returns [`Result`]. An [`Error`] carries an
//! [`ErrorKind`] (what sort of failure, for callers that branch on it), a message that
//! names the file and field involved where there is one, and the underlying source error
//! when there is one. Errors convert into [`DataFusionError`]: unsupported features
//! become `NotImplemented`, everything else `External` with this error kept as source.

use std::fmt;
use std::sync::Arc;

use datafusion::error::DataFusionError;

/// What sort of failure an [`Error`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Input that does not follow the Iceberg spec: corrupt JSON, Avro or Parquet, a
    /// missing required field, a value of the wrong type.
    InvalidData,
    /// A valid table that uses a feature icefloe does not support yet.
    Unsupported,
    /// A table, snapshot, ref, file or column that does not exist.
    NotFound,
    /// Reading or writing storage failed.
    Io,
    /// A caller passed an argument that cannot be used (bad option, bad URL).
    InvalidArgument,
    /// Errors raised by DataFusion or Arrow while executing.
    DataFusion,
    /// A table, namespace or file that should be new already exists.
    AlreadyExists,
    /// A commit was rejected: the table changed since the commit's base and the
    /// commit's requirements no longer hold (spec: "Commit Conflict Resolution and
    /// Retry"). Retrying from a refreshed base may succeed.
    CommitConflict,
    /// A commit's own checks failed against the table as it now is (e.g. files that
    /// conflict with an overwrite were committed since it began; Java's
    /// `ValidationException`). Retrying the same commit cannot succeed.
    ValidationFailed,
    /// A commit may or may not have landed (the catalog did not answer); it must not be
    /// retried blindly, and files it wrote must not be removed.
    CommitStateUnknown,
    /// A catalog or store refused the credentials (HTTP 401/403, an OAuth2 token
    /// endpoint's refusal). The message names the endpoint, never the secret.
    PermissionDenied,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ErrorKind::InvalidData => "invalid data",
            ErrorKind::Unsupported => "not implemented",
            ErrorKind::NotFound => "not found",
            ErrorKind::Io => "I/O error",
            ErrorKind::InvalidArgument => "invalid argument",
            ErrorKind::DataFusion => "DataFusion error",
            ErrorKind::AlreadyExists => "already exists",
            ErrorKind::CommitConflict => "commit conflict",
            ErrorKind::CommitStateUnknown => "commit state unknown",
            ErrorKind::ValidationFailed => "commit validation failed",
            ErrorKind::PermissionDenied => "permission denied",
        };
        f.write_str(s)
    }
}

impl ErrorKind {
    /// Whether an error of this kind is a failed read: a file that is gone (`NotFound`),
    /// not what its manifest says (`InvalidData`), or storage that failed (`Io`) — what a
    /// read racing `expire_snapshots` raises (see `transaction::expired_base`), as
    /// opposed to a failed expression, a cancelled or out-of-memory query.
    pub(crate) fn is_read_failure(self) -> bool {
        matches!(
            self,
            ErrorKind::InvalidData | ErrorKind::NotFound | ErrorKind::Io
        )
    }
}

/// `e` and the errors of its `source()` chain, outermost first (what std's unstable
/// `Error::sources` gives). The wrappers of DataFusion (`External`, `Shared`, `Context`),
/// Arrow and Parquet (`ExternalError`) keep their sources, so the chain crosses them.
pub(crate) fn error_chain<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |err| err.source())
}

/// The icefloe [`Error`]s in `e`'s chain ([`error_chain`]), outermost first. The one
/// walk every check of what an error holds uses (`datafusion::error_chain` adapts it to
/// DataFusion's errors).
pub(crate) fn icefloe_errors<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a Error> {
    error_chain(e).filter_map(|err| err.downcast_ref::<Error>())
}

/// The crate's error: a kind, a message naming what failed, and the source kept.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with `message`.
    ///
    /// The user info of a URL in `message` is shown as `***` (see
    /// [`crate::io::redact_userinfo`]): messages echo locations as typed.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let message = message.into();
        let message = match crate::io::redact_userinfo(&message) {
            std::borrow::Cow::Borrowed(_) => message,
            std::borrow::Cow::Owned(redacted) => redacted,
        };
        Self {
            kind,
            message,
            source: None,
        }
    }

    /// Shorthand for [`ErrorKind::InvalidData`].
    pub fn invalid_data(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidData, message)
    }

    /// Shorthand for [`ErrorKind::Unsupported`]; the message names the feature.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, message)
    }

    /// Shorthand for [`ErrorKind::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NotFound, message)
    }

    /// Shorthand for [`ErrorKind::InvalidArgument`].
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    /// Attach the underlying error.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// Prefix the message with context, e.g. the file being read.
    /// (The user info of a URL in it is shown as `***`, as in [`Self::new`].)
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        let context = context.to_string();
        self.message = format!("{}: {}", crate::io::redact_userinfo(&context), self.message);
        self
    }

    /// Append `note` to the message (after `; `), e.g. what a missing name may have meant.
    pub(crate) fn with_note(mut self, note: impl fmt::Display) -> Self {
        self.message = format!("{}; {note}", self.message);
        self
    }

    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without the kind or source.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The message of a caught panic's payload (a `&str` or `String`; otherwise "a panic").
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)?;
        if let Some(source) = &self.source {
            // a source (an object store's error) may echo a URL as typed
            write!(f, ": {}", crate::io::redact_userinfo(&source.to_string()))?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|s| s.as_ref() as &(dyn std::error::Error + 'static))
    }
}

impl From<Error> for DataFusionError {
    /// Unsupported features become `NotImplemented` holding the message without the
    /// kind (DataFusion prints "This feature is not implemented: " before it, so the
    /// kind is not said twice); an error that only wraps a
    /// DataFusion error (made by `From<DataFusionError>`) gives that error back;
    /// anything else becomes `External`.
    fn from(e: Error) -> Self {
        if e.kind == ErrorKind::DataFusion && e.message == DATAFUSION_WRAPPER {
            if let Some(source) = e.source {
                return match source.downcast::<DataFusionError>() {
                    Ok(df) => *df,
                    Err(other) => DataFusionError::External(other),
                };
            }
            return DataFusionError::External(Box::new(e));
        }
        match e.kind {
            // DataFusion prints its own "This feature is not implemented: " before it
            ErrorKind::Unsupported => DataFusionError::NotImplemented(match &e.source {
                Some(source) => format!(
                    "{}: {}",
                    e.message,
                    crate::io::redact_userinfo(&source.to_string())
                ),
                None => e.message,
            }),
            _ => DataFusionError::External(Box::new(e)),
        }
    }
}

/// The message of an error that only wraps a DataFusion error.
const DATAFUSION_WRAPPER: &str = "query failed";

impl From<DataFusionError> for Error {
    /// An icefloe error that crossed DataFusion (a sink's or provider's) comes back as
    /// itself, kind and message; DataFusion's `NotImplemented` keeps the `Unsupported`
    /// kind; anything else is wrapped (and unwraps again on the way back to DataFusion).
    fn from(e: DataFusionError) -> Self {
        let wrap = |e| Error::new(ErrorKind::DataFusion, DATAFUSION_WRAPPER).with_source(e);
        match e {
            DataFusionError::External(inner) => match inner.downcast::<Error>() {
                Ok(ours) => *ours,
                Err(other) => wrap(DataFusionError::External(other)),
            },
            // an icefloe error raised under DataFusion's Parquet reader (e.g. a data file
            // that is not what its manifest says) comes back as itself too
            DataFusionError::ParquetError(inner) => match *inner {
                datafusion::parquet::errors::ParquetError::External(source) => {
                    match source.downcast::<Error>() {
                        Ok(ours) => *ours,
                        Err(other) => wrap(DataFusionError::ParquetError(Box::new(
                            datafusion::parquet::errors::ParquetError::External(other),
                        ))),
                    }
                }
                other => wrap(DataFusionError::ParquetError(Box::new(other))),
            },
            // an error several consumers hold (a hash join's build side): the icefloe
            // error in it, as itself when this is the last holder, else copied
            DataFusionError::Shared(shared) => match Arc::try_unwrap(shared) {
                Ok(inner) => Error::from(inner),
                Err(shared) => match SharedSource::icefloe_error(&shared) {
                    Some(ours) => {
                        let copy = Error::new(ours.kind, ours.message.clone());
                        match ours.source.is_some() {
                            true => copy.with_source(SharedSource(Arc::clone(&shared))),
                            false => copy,
                        }
                    }
                    None => wrap(DataFusionError::Shared(shared)),
                },
            },
            // an icefloe error that crossed an Arrow stream
            DataFusionError::ArrowError(inner, backtrace) => match *inner {
                datafusion::arrow::error::ArrowError::ExternalError(source) => {
                    match source.downcast::<Error>() {
                        Ok(ours) => *ours,
                        Err(other) => match other.downcast::<DataFusionError>() {
                            Ok(df) => Error::from(*df),
                            Err(other) => wrap(DataFusionError::ArrowError(
                                Box::new(datafusion::arrow::error::ArrowError::ExternalError(
                                    other,
                                )),
                                backtrace,
                            )),
                        },
                    }
                }
                other => wrap(DataFusionError::ArrowError(Box::new(other), backtrace)),
            },
            DataFusionError::NotImplemented(message) => {
                let kind_prefix = format!("{}: ", ErrorKind::Unsupported);
                let message = message
                    .strip_prefix(&kind_prefix)
                    .unwrap_or(&message)
                    .to_string();
                Error::unsupported(message)
            }
            // DataFusion names the optimizer or analyzer rule an error came from;
            // icefloe's rules (`icefloe_…`) raise messages for the user, which stand alone
            DataFusionError::Context(context, inner)
                if context.starts_with("Optimizer rule 'icefloe_")
                    || context.starts_with("icefloe_") =>
            {
                Error::from(*inner)
            }
            other => wrap(other),
        }
    }
}

/// The source of an icefloe error copied out of a `DataFusionError::Shared` that other
/// consumers still hold: shown as the original's source, whose chain it continues.
#[derive(Debug)]
struct SharedSource(Arc<DataFusionError>);

impl SharedSource {
    /// The first icefloe error in `e`'s chain.
    fn icefloe_error(e: &DataFusionError) -> Option<&Error> {
        icefloe_errors(e).next()
    }

    /// The copied error's own source.
    fn original(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Self::icefloe_error(&self.0)
            .and_then(|ours| ours.source.as_deref())
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

impl fmt::Display for SharedSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.original() {
            Some(source) => fmt::Display::fmt(source, f),
            None => Ok(()),
        }
    }
}

impl std::error::Error for SharedSource {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // the original source itself (shown already), so that walks of the chain find
        // what it records (e.g. `transaction::expired_base`'s expired read)
        self.original()
    }
}

impl From<datafusion::arrow::error::ArrowError> for Error {
    fn from(e: datafusion::arrow::error::ArrowError) -> Self {
        Error::new(ErrorKind::DataFusion, "arrow error").with_source(e)
    }
}

/// Build an error of the given kind with a formatted message.
#[macro_export]
#[doc(hidden)]
macro_rules! err {
    ($kind:ident, $($arg:tt)*) => {
        $crate::error::Error::new($crate::error::ErrorKind::$kind, format!($($arg)*))
    };
}

/// `e`'s message followed by those of its causes (`source()` chain), joined by `": "`,
/// each shown once: a cause whose text an earlier message holds already is left out (some
/// errors repeat their cause in their own message).
pub(crate) fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut shown: Vec<String> = vec![];
    for e in error_chain(e) {
        let text = e.to_string();
        if !shown.iter().any(|s| s.contains(&text)) {
            shown.push(text);
        }
    }
    shown.join(": ")
}

/// An error shown with its causes ([`with_causes`]): a store's "error sending request"
/// says why only in its causes (`Connection refused (os error 111)`). `source()` is the
/// error's own, so the chain stays walkable.
#[derive(Debug)]
pub(crate) struct WithCauses<E>(pub(crate) E);

impl<E: std::error::Error + 'static> fmt::Display for WithCauses<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&with_causes(&self.0))
    }
}

impl<E: std::error::Error + 'static> std::error::Error for WithCauses<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An icefloe error reaching the user through a hash join's shared build side or an
    /// Arrow stream is shown as itself: a DELETE racing `DROP TABLE … PURGE` printed
    /// "External error: not found: manifest listed in …" (tester O64 F2).
    #[test]
    fn icefloe_errors_under_shared_and_arrow_errors_come_back_as_themselves() {
        let gone = || {
            Error::not_found("manifest listed in 'snap-1.avro'")
                .with_source(Error::not_found("file 'm1.avro' does not exist"))
        };
        let shared = Arc::new(DataFusionError::from(gone()));
        let held = Arc::clone(&shared);
        let back = Error::from(DataFusionError::Shared(shared));
        assert_eq!(back.kind(), ErrorKind::NotFound);
        assert_eq!(back.to_string(), gone().to_string());
        drop(held);
        let last = Error::from(DataFusionError::Shared(Arc::new(gone().into())));
        assert_eq!(last.to_string(), gone().to_string());
        let arrow = DataFusionError::ArrowError(
            Box::new(datafusion::arrow::error::ArrowError::ExternalError(
                Box::new(DataFusionError::from(gone())),
            )),
            None,
        );
        let back = Error::from(arrow);
        assert_eq!(back.kind(), ErrorKind::NotFound);
        assert!(!back.to_string().contains("External error"), "{back}");
    }

    /// The walk finds every icefloe error of the chain, outermost first, across
    /// DataFusion's and Arrow's wrappers.
    #[test]
    fn icefloe_errors_are_found_along_the_whole_chain() {
        let inner = Error::not_found("data file 'd.parquet' does not exist");
        let outer = Error::new(ErrorKind::ValidationFailed, "lost race").with_source(
            DataFusionError::ArrowError(
                Box::new(datafusion::arrow::error::ArrowError::ExternalError(
                    Box::new(DataFusionError::from(inner)),
                )),
                None,
            ),
        );
        let kinds: Vec<ErrorKind> = icefloe_errors(&outer).map(Error::kind).collect();
        assert_eq!(kinds, [ErrorKind::ValidationFailed, ErrorKind::NotFound]);
        let io = std::io::Error::other("refused");
        assert_eq!(icefloe_errors(&io).count(), 0);
    }

    #[test]
    fn unsupported_becomes_not_implemented() {
        let e: DataFusionError = Error::unsupported("row-level deletes").into();
        assert!(matches!(e, DataFusionError::NotImplemented(_)));
        assert!(e.to_string().contains("row-level deletes"));
    }

    /// An unsupported feature says "not implemented" once, whether DataFusion prints it
    /// (as its `NotImplemented`, inside other errors too) or it comes back as icefloe's
    /// error; it read "This feature is not implemented: not implemented: …".
    #[test]
    fn unsupported_says_not_implemented_once() {
        let message = "data file 'x' is in object store 's3://b'";
        let e = DataFusionError::from(Error::unsupported(message));
        assert_eq!(
            e.to_string(),
            format!("This feature is not implemented: {message}")
        );
        let arrow = DataFusionError::ArrowError(
            Box::new(datafusion::arrow::error::ArrowError::ExternalError(
                Box::new(DataFusionError::from(Error::unsupported(message))),
            )),
            None,
        );
        assert_eq!(
            arrow.to_string().matches("not implemented").count(),
            1,
            "{arrow}"
        );
        let back = Error::from(e);
        assert_eq!(back.kind(), ErrorKind::Unsupported);
        assert_eq!(back.to_string(), format!("not implemented: {message}"));
        // the source is kept in the message
        let io = std::io::Error::other("refused");
        let e = DataFusionError::from(Error::unsupported("reading x").with_source(io));
        assert_eq!(
            e.to_string(),
            "This feature is not implemented: reading x: refused"
        );
    }

    #[test]
    fn wrapped_datafusion_error_converts_back() {
        let e: Error = DataFusionError::Plan("table 'x' not found".into()).into();
        let back: DataFusionError = e.into();
        assert!(matches!(back, DataFusionError::Plan(ref m) if m == "table 'x' not found"));
        let e = Error::from(DataFusionError::Plan("p".into())).context("CREATE TABLE t");
        assert!(matches!(
            DataFusionError::from(e),
            DataFusionError::External(_)
        ));
    }

    #[test]
    fn display_keeps_source() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = Error::not_found("data file /x.parquet").with_source(io);
        assert_eq!(e.to_string(), "not found: data file /x.parquet: gone");
    }
}
