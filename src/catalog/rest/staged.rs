//! Staged creates on a REST catalog (`open-api/rest-catalog-open-api.yaml`): `createTable`
//! with `stage-create: true` answers the new table's metadata (and its storage
//! credentials) without creating anything; the commit is `updateTable` with the one
//! requirement `assert-create` and the updates that build the table from nothing —
//! the staged metadata's own (`assign-uuid`, `upgrade-format-version`, `add-schema`,
//! `set-current-schema`, `add-spec`, `set-default-spec`, `add-sort-order`,
//! `set-default-sort-order`, `set-location`, `set-properties`, as Java's
//! `TableMetadata.changes()` of a new table) followed by the transaction's
//! (`add-snapshot`, `set-snapshot-ref`). The server creates the table at that commit.

use reqwest::{Method, StatusCode};
use serde_json::json;

use super::types::{CommitTableResponse, LoadTableResult, TableIdentifier};
use super::{RestCatalog, DELEGATION};
use crate::catalog::{table_not_found, Catalog, TableCreation, TableIdent};
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{TableCommit, TableMetadata, TableRequirement, TableUpdate};
use crate::table::Table;

impl RestCatalog {
    /// `createTable` with `stage-create: true`; the table's metadata location is a
    /// placeholder under its metadata directory (the server names the file it writes
    /// at the commit).
    ///
    /// Errors: as `create_table`; a server that refuses to stage (an answer other than
    /// 404 and 409) is [`ErrorKind::Unsupported`], so that CTAS falls back to create,
    /// then insert.
    pub(super) async fn stage_create(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
    ) -> Result<Table> {
        super::check_creation(&creation)
            .map_err(|e| e.context(format!("stage the create of table '{ident}'")))?;
        if self.table_exists(ident).await? {
            return Err(self.exists(ident));
        }
        let url = self.namespace_url(&ident.namespace, &["tables"]).await?;
        let body = super::create_table_request(ident, &creation, true);
        let mut answer: LoadTableResult = match self
            .client
            .send(Method::POST, url, Some(&body), &[DELEGATION], false)
            .await
        {
            Ok(Some(answer)) => answer,
            Ok(None) => {
                return Err(Error::invalid_data(
                    "REST createTable (stage-create) answered without a table",
                ))
            }
            // staging creates nothing: any other refusal falls back safely
            Err(e)
                if e.status.is_some()
                    && !matches!(e.status, Some(StatusCode::CONFLICT | StatusCode::NOT_FOUND)) =>
            {
                return Err(Error::unsupported(format!(
                    "staging the create of table '{ident}' in REST catalog '{}' (the server \
                     refused stage-create: {})",
                    self.config.name, e.error
                )))
            }
            Err(e) => return Err(self.already_exists_or(e, ident)),
        };
        let metadata = TableMetadata::from_json(&answer.metadata.to_string())
            .map_err(|e| e.context(format!("staged table '{ident}' from the REST catalog")))?;
        answer.metadata_location = Some(format!(
            "{}/staged.metadata.json",
            crate::catalog::metadata_dir(&metadata)
        ));
        self.table_from(ident, answer).await
    }

    /// `updateTable` with `assert-create` (see the module docs); then the table as a
    /// fresh load gives it.
    ///
    /// Errors: 409 is [`ErrorKind::AlreadyExists`] naming the table (another writer
    /// created it first); the other answers as a commit's.
    pub(super) async fn commit_staged(
        &self,
        ident: &TableIdent,
        staged: &Table,
        commit: &TableCommit,
    ) -> Result<Table> {
        let mut updates = creation_updates(staged.metadata());
        updates.extend(commit.updates.iter().cloned());
        let mut requirements = vec![TableRequirement::AssertCreate];
        requirements.extend(
            commit
                .requirements
                .iter()
                .filter(|r| **r != TableRequirement::AssertCreate)
                .cloned(),
        );
        let url = self.table_url(ident).await?;
        let body = json!({
            "identifier": TableIdentifier {
                namespace: ident.namespace.levels().to_vec(),
                name: ident.name.clone(),
            },
            "requirements": requirements,
            "updates": updates,
        });
        crate::failpoint::pause("commit-loaded");
        let answer: Option<CommitTableResponse> = self
            .client
            .send(Method::POST, url, Some(&body), &[], false)
            .await
            .map_err(|e| match e.status {
                Some(StatusCode::CONFLICT) => self.exists(ident).with_source(e.error),
                _ => self.commit_error(e, ident),
            })?;
        let landed = |what: String| {
            Error::new(
                ErrorKind::CommitStateUnknown,
                format!("create of table '{ident}' committed, but {what}"),
            )
        };
        if answer.is_none() {
            return Err(landed("the REST catalog answered without metadata".into()));
        }
        match self.load_table(ident).await {
            Ok(t) => Ok(t),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(landed(format!(
                "it is not found ({})",
                table_not_found(&self.config.name, ident)
            ))),
            Err(e) => Err(landed(format!("reloading it failed ({e})"))),
        }
    }

    /// [`ErrorKind::AlreadyExists`] naming table `ident`.
    fn exists(&self, ident: &TableIdent) -> Error {
        Error::new(
            ErrorKind::AlreadyExists,
            format!(
                "table '{ident}' already exists in catalog '{}'",
                self.config.name
            ),
        )
    }
}

/// The updates that build `m` (a new table's metadata, no snapshot) from nothing, in
/// the order Java's `TableMetadata.changes()` lists them for a new table; `-1` names the
/// schema, spec and sort order just added.
fn creation_updates(m: &TableMetadata) -> Vec<TableUpdate> {
    let mut out = vec![];
    if let Some(uuid) = &m.table_uuid {
        out.push(TableUpdate::AssignUuid { uuid: uuid.clone() });
    }
    out.push(TableUpdate::UpgradeFormatVersion {
        format_version: m.format_version as i32,
    });
    out.push(TableUpdate::AddSchema {
        schema: m.current_schema().clone(),
    });
    out.push(TableUpdate::SetCurrentSchema { schema_id: -1 });
    if let Some(spec) = m.default_partition_spec() {
        out.push(TableUpdate::AddSpec { spec: spec.clone() });
        out.push(TableUpdate::SetDefaultSpec { spec_id: -1 });
    }
    if let Some(order) = m
        .sort_orders
        .iter()
        .find(|o| o.order_id == m.default_sort_order_id)
    {
        out.push(TableUpdate::AddSortOrder {
            sort_order: order.clone(),
        });
        out.push(TableUpdate::SetDefaultSortOrder { sort_order_id: -1 });
    }
    out.push(TableUpdate::SetLocation {
        location: m.location.clone(),
    });
    if !m.properties.is_empty() {
        out.push(TableUpdate::SetProperties {
            updates: m.properties.clone(),
        });
    }
    out
}
