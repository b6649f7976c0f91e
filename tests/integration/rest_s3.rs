//! Iceberg on S3 behind a REST catalog: icefloe, PyIceberg and DuckDB against one real
//! SeaweedFS `weed mini` server on loopback ([`crate::seaweed`]).

use crate::seaweed;

/// The server answers the REST `GET /v1/config` for the warehouse with its prefix, and
/// listens on loopback only.
#[test]
fn server_starts_on_loopback() {
    let Some(server) = seaweed::server() else {
        return;
    };
    assert!(server.rest_uri.starts_with("http://127.0.0.1:"));
    assert!(server.s3_endpoint.starts_with("http://127.0.0.1:"));
}
