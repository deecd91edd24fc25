//! The proxy's request handler: control plane, forwarding, teeing the answer into a recording.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Either, Full, Limited};
use hyper::body::Incoming;
use serde_json::Value;
use wraith_recording::{RecordedRequest, RecordedResponse};

use crate::control::{self, error_body, is_control_path};
use crate::exchange::PendingExchange;
use crate::headers::{
    content_type, forward_request_headers, recorded_request_headers, recorded_response_headers,
    strip_response_hop_by_hop,
};
use crate::now_us;
use crate::sessions::Sessions;
use crate::tee::TeeBody;
use crate::upstream::{Upstream, UpstreamClient};

/// What the proxy answers with: a streamed upstream body, or one it made itself.
pub(crate) type ProxyBody = Either<TeeBody, Full<Bytes>>;

/// Everything a request handler needs, shared by all connections.
pub(crate) struct ProxyState {
    pub(crate) upstream: Upstream,
    pub(crate) client: UpstreamClient,
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) port: u16,
    pub(crate) url: String,
    /// Largest request body accepted and largest response body recorded (bigger responses
    /// still stream through whole, but are recorded cut and marked truncated).
    pub(crate) max_body_bytes: usize,
    /// Requests that got no upstream answer (nothing recorded for them).
    pub(crate) transport_failures: AtomicU64,
}

/// A JSON response made by the proxy itself.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut text = body.to_string();
    text.push('\n');
    let mut resp = Response::new(Full::new(Bytes::from(text)));
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}

/// The hyper service function.
pub(crate) async fn handle(
    state: Arc<ProxyState>,
    req: Request<Incoming>,
) -> Result<Response<ProxyBody>, Infallible> {
    if is_control_path(req.uri().path()) {
        let resp = control::answer(&state, req.method(), req.uri().path()).await;
        return Ok(resp.map(Either::Right));
    }
    Ok(forward(state, req).await)
}

async fn forward(state: Arc<ProxyState>, req: Request<Incoming>) -> Response<ProxyBody> {
    let request_start_us = now_us();
    // Joining the session now (not when the body ends) pins it open while this exchange runs.
    let ticket = state.sessions.begin(request_start_us);
    let (parts, body) = req.into_parts();
    let client_path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();

    let body = match Limited::new(body, state.max_body_bytes).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let too_big = e
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some();
            let (status, kind, message) = if too_big {
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "request_too_large",
                    format!(
                        "the request body is larger than the recorder's limit of {} bytes",
                        state.max_body_bytes
                    ),
                )
            } else {
                (
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    format!("could not read the request body: {e}"),
                )
            };
            return json_response(status, &error_body(kind, &message)).map(Either::Right);
        }
    };

    let uri = match state.upstream.uri_for(&client_path, &query) {
        Ok(u) => u,
        Err(e) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                &error_body("bad_request", &e.to_string()),
            )
            .map(Either::Right);
        }
    };
    let mut upstream_req = Request::new(Full::new(body.clone()));
    *upstream_req.method_mut() = parts.method.clone();
    *upstream_req.uri_mut() = uri.clone();
    *upstream_req.headers_mut() = forward_request_headers(&parts.headers);

    let resp = match state.client.request(upstream_req).await {
        Ok(r) => r,
        Err(e) => {
            // Nothing is recorded for a transport failure: there is no upstream answer to learn
            // from. Dropping the ticket releases the session.
            state.transport_failures.fetch_add(1, Ordering::Relaxed);
            let cause = wraith_recording::error::one_line(&e);
            tracing::warn!(method = %parts.method, %uri, "upstream unreachable: {cause}");
            return json_response(
                StatusCode::BAD_GATEWAY,
                &error_body(
                    "upstream_unreachable",
                    &format!(
                        "the recorder could not reach the upstream {} for {} {}: {cause}",
                        state.upstream.base_url(),
                        parts.method,
                        client_path
                    ),
                ),
            )
            .map(Either::Right);
        }
    };
    let first_byte_us = now_us();
    let (mut rparts, rbody) = resp.into_parts();
    strip_response_hop_by_hop(&mut rparts.headers);
    // Answer in the client's protocol version, whatever the upstream spoke.
    rparts.version = parts.version;

    let request = RecordedRequest {
        method: parts.method.as_str().to_string(),
        // The full upstream path (base URL prefix included), as `wraith import` records it.
        path: state.upstream.upstream_path(&client_path),
        query,
        headers: recorded_request_headers(&parts.headers),
        content_type: if body.is_empty() {
            None
        } else {
            content_type(&parts.headers)
        },
        body: body.to_vec(),
        origin: None,
    };
    let response = RecordedResponse {
        status: rparts.status.as_u16(),
        headers: recorded_response_headers(&rparts.headers),
        content_type: content_type(&rparts.headers),
    };
    let pending = PendingExchange {
        ticket,
        request,
        response,
        request_start_us,
        first_byte_us,
    };
    let tee = TeeBody::new(rbody, pending, state.max_body_bytes);
    Response::from_parts(rparts, Either::Left(tee))
}
