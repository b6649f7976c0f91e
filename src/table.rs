//! STUB: being written.
use crate::error::{Error, Result};

#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    pub remap: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub struct Table {}

impl Table {
    pub async fn open(location: &str) -> Result<Table> {
        Self::open_with(location, OpenOptions::default()).await
    }
    pub async fn open_with(_location: &str, _options: OpenOptions) -> Result<Table> {
        Err(Error::unsupported("stub"))
    }
}
