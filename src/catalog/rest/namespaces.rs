//! A REST catalog's namespace calls beyond listing and creating: `dropNamespace`,
//! `loadNamespaceMetadata` and `updateProperties` (REST OpenAPI, "Catalog API").

use super::*;

impl RestCatalog {
    /// Drop an empty namespace (REST `dropNamespace`).
    ///
    /// Errors: [`ErrorKind::NotFound`] naming it; [`ErrorKind::InvalidArgument`] when it
    /// is not empty.
    pub async fn drop_namespace(&self, namespace: &Namespace) -> Result<()> {
        let url = self.namespace_url(namespace, &[]).await?;
        match self
            .client
            .send::<serde_json::Value>(Method::DELETE, url, None, &[], false)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.status == Some(StatusCode::CONFLICT) => {
                // what it holds, as the other catalogs name it (a tester's); the server's
                // answer follows
                let tables: Vec<String> = Catalog::list_tables(self, namespace)
                    .await
                    .map(|t| t.into_iter().map(|t| t.name).collect())
                    .unwrap_or_default();
                let held = match crate::catalog::check_droppable(self, namespace, &tables).await {
                    Err(held) if held.kind() == ErrorKind::InvalidArgument => {
                        held.message().to_string()
                    }
                    _ => format!("namespace '{namespace}' is not empty"),
                };
                Err(e.rekinded(ErrorKind::InvalidArgument, held))
            }
            Err(e) => Err(self.namespace_error(e, namespace)),
        }
    }

    /// A namespace's properties (REST `loadNamespaceMetadata`).
    ///
    /// Errors: [`ErrorKind::NotFound`] naming it.
    pub async fn namespace_properties(
        &self,
        namespace: &Namespace,
    ) -> Result<HashMap<String, String>> {
        let url = self.namespace_url(namespace, &[]).await?;
        let answer: Option<NamespaceResponse> = self
            .client
            .send(Method::GET, url, None, &[], true)
            .await
            .map_err(|e| self.namespace_error(e, namespace))?;
        Ok(answer.and_then(|a| a.properties).unwrap_or_default())
    }

    /// Set and remove namespace properties (REST `updateProperties`); returns the keys
    /// asked to be removed that were not set.
    ///
    /// Errors: [`ErrorKind::NotFound`] naming the namespace.
    pub async fn update_namespace_properties(
        &self,
        namespace: &Namespace,
        updates: &HashMap<String, String>,
        removals: &[String],
    ) -> Result<Vec<String>> {
        let url = self.namespace_url(namespace, &["properties"]).await?;
        let body = json!({"updates": updates, "removals": removals});
        let answer: Option<UpdateNamespacePropertiesResponse> = self
            .client
            .send(Method::POST, url, Some(&body), &[], false)
            .await
            .map_err(|e| self.namespace_error(e, namespace))?;
        Ok(answer.and_then(|a| a.missing).unwrap_or_default())
    }
}
