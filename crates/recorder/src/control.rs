//! The recorder's control plane: `/__wraith/*`, answered by the proxy itself and never forwarded
//! or recorded.
//!
//! | endpoint | method | answer |
//! | --- | --- | --- |
//! | `/__wraith/health` | GET | `{"status":"recording"}` |
//! | `/__wraith/ready` | GET | `{"ready":true}` |
//! | `/__wraith/info` | GET | upstream, port, url, tags, open and finalized sessions |
//! | `/__wraith/new-session` | POST | finalizes every open session; `{"finalized":[...],"pending":[...]}` |

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ALLOW, HeaderValue};
use http::{Method, Response, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};

use crate::proxy::{ProxyState, json_response};

/// How long `new-session` waits for the closed sessions' last exchanges to be written.
const NEW_SESSION_WAIT: Duration = Duration::from_secs(2);

/// Path prefix of the control plane.
pub const CONTROL_PREFIX: &str = "/__wraith/";

/// True when `path` belongs to the control plane (and must not be forwarded).
pub fn is_control_path(path: &str) -> bool {
    path == "/__wraith" || path.starts_with(CONTROL_PREFIX)
}

/// Answer one control-plane request.
pub(crate) async fn answer(
    state: &Arc<ProxyState>,
    method: &Method,
    path: &str,
) -> Response<Full<Bytes>> {
    let allowed = match path {
        "/__wraith/health" | "/__wraith/ready" | "/__wraith/info" => "GET, HEAD",
        "/__wraith/new-session" => "POST",
        _ => {
            return json_response(
                StatusCode::NOT_FOUND,
                &error_body(
                    "not_found",
                    &format!(
                        "unknown control endpoint {path}; the recorder answers /__wraith/health, \
                         /__wraith/ready, /__wraith/info and POST /__wraith/new-session"
                    ),
                ),
            );
        }
    };
    let get = method == Method::GET || method == Method::HEAD;
    match path {
        "/__wraith/health" if get => json_response(StatusCode::OK, &json!({"status": "recording"})),
        "/__wraith/ready" if get => json_response(StatusCode::OK, &json!({"ready": true})),
        "/__wraith/info" if get => json_response(StatusCode::OK, &info(state)),
        "/__wraith/new-session" if method == Method::POST => {
            let sessions = state.sessions.clone();
            // Finalizing writes manifests: keep that file IO off the async workers.
            let closed = match tokio::task::spawn_blocking(move || sessions.rotate()).await {
                Ok(ids) => ids,
                Err(e) => {
                    return json_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &error_body("internal_error", &format!("new-session failed: {e}")),
                    );
                }
            };
            // An exchange whose body just reached the client may still be on its way to disk;
            // wait for it so the answer (and the files) include it. Exchanges still streaming
            // keep their session open and are listed as pending.
            let (finalized, pending) = state
                .sessions
                .wait_finalized(&closed, NEW_SESSION_WAIT)
                .await;
            json_response(
                StatusCode::OK,
                &json!({"status": "ok", "finalized": finalized, "pending": pending}),
            )
        }
        _ => {
            let mut resp = json_response(
                StatusCode::METHOD_NOT_ALLOWED,
                &error_body(
                    "method_not_allowed",
                    &format!("{method} is not allowed on {path}; use {allowed}"),
                ),
            );
            resp.headers_mut()
                .insert(ALLOW, HeaderValue::from_static(allowed));
            resp
        }
    }
}

fn info(state: &ProxyState) -> Value {
    json!({
        "status": "recording",
        "proxy_mode": state.mode.as_str(),
        "upstream": state.upstream.base_url(),
        "url": state.url,
        "port": state.port,
        "tags": state.sessions.tags(),
        "in_flight": state.sessions.in_flight(),
        "active_sessions": state.sessions.open_sessions(),
        "finalized_sessions": state.sessions.finalized(),
    })
}

pub(crate) fn error_body(kind: &str, message: &str) -> Value {
    json!({"error": {"type": kind, "message": message}})
}
