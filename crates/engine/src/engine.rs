//! The [`Engine`]: shared, immutable serving data plus the namespace registry.

use crate::api::*;
use crate::error::{ControlError, EngineError};
use wraith_model::Model;

/// A loaded twin, ready to answer requests. `Send + Sync`: share it behind an `Arc`.
pub struct Engine {
    model: Model,
    opts: EngineOptions,
    warnings: Vec<String>,
}

impl Engine {
    /// Compile the model's routes, resolve the fixture sets against the schema and check the
    /// selected `--fixture`.
    pub fn new(
        model: Model,
        schema_json: Option<&str>,
        fixtures: FixtureTree,
        opts: EngineOptions,
    ) -> Result<Engine, EngineError> {
        let _ = (schema_json, fixtures);
        Ok(Engine {
            model,
            opts,
            warnings: Vec::new(),
        })
    }

    /// Startup warnings for the banner, `--ready-json` and `/__wraith/info`.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The twin's own base URL once bound (fallback origin of the self-URL rewrite).
    pub fn set_self_url(&self, url: &str) {
        let _ = url;
    }

    /// Answer one application request. `session` is the `X-Wraith-Session` value, verbatim.
    pub fn handle(&self, session: Option<&str>, req: &Request) -> Response {
        let _ = (session, req);
        unimplemented_response()
    }

    /// Every `X-Wraith-*` control header for `resp` to a request with `method`.
    pub fn control_headers(&self, resp: &Response, method: &str) -> Vec<(String, String)> {
        let _ = (resp, method);
        Vec::new()
    }

    /// `POST /__wraith/session`.
    pub fn provision(&self, p: Provision) -> Result<ProvisionInfo, ControlError> {
        let _ = p;
        Err(ControlError::new(501, "bad-request", "not yet implemented"))
    }

    /// `GET /__wraith/session`.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        Vec::new()
    }

    /// `POST /__wraith/session/{id}/reset`.
    pub fn reset_session(&self, id: &str) -> Result<SessionInfo, ControlError> {
        Err(ControlError::new(
            404,
            "session-not-found",
            format!("no session `{id}`"),
        ))
    }

    /// `DELETE /__wraith/session/{id}`.
    pub fn delete_session(&self, id: &str) -> Result<(), ControlError> {
        Err(ControlError::new(
            404,
            "session-not-found",
            format!("no session `{id}`"),
        ))
    }

    /// `POST /__wraith/reset`.
    pub fn reset_all(&self) {}

    /// Debug dump of one namespace; never creates it.
    pub fn session_state(&self, id: &str) -> Option<serde_json::Value> {
        let _ = id;
        None
    }

    /// Names of the fixture sets.
    pub fn fixture_sets(&self) -> Vec<String> {
        Vec::new()
    }

    /// `METHOD /path` of every route.
    pub fn route_names(&self) -> Vec<String> {
        self.model.route_names()
    }

    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }
}

fn unimplemented_response() -> Response {
    Response {
        status: 501,
        headers: Vec::new(),
        body: bytes::Bytes::new(),
        provenance: Provenance::Miss,
        route: None,
        exchange: None,
        replay: None,
        outbound_policy_applied: false,
        field_counts: None,
    }
}
