//! `CONNECT`: how a forward-proxy client asks for a tunnel (for HTTPS, mostly).
//!
//! - In reverse mode there are no tunnels: 405, naming the modes that take them.
//! - To the upstream's host, in mitm mode, the recorder answers the tunnel itself: TLS with the
//!   run's interception certificate, then HTTP served by the same handler (requests recorded as
//!   a forward-proxy client's). In forward mode such a tunnel is refused (403): its traffic is
//!   encrypted end to end, so passing it through would record nothing while seeming to work.
//! - To any other host: a blind tunnel, bytes copied both ways, nothing recorded.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt as _;

use crate::control::error_body;
use crate::proxy::{ProxyState, Via, bad_request, json_response};
use crate::upstream::CONNECT_TIMEOUT;

/// Answer one `CONNECT`; the tunnel itself runs in a task of [`ProxyState::tunnels`] once the
/// client has read the 200.
pub(crate) async fn connect(
    state: Arc<ProxyState>,
    req: Request<Incoming>,
) -> Response<Full<Bytes>> {
    if !state.mode.is_forward() {
        return json_response(
            StatusCode::METHOD_NOT_ALLOWED,
            &error_body(
                "bad_request",
                &format!(
                    "this recorder runs as a reverse proxy (--mode reverse) and opens no \
                     tunnels: point the client at {} in place of the API's base URL, or start \
                     `wraith record --mode mitm` to record HTTPS sent through a proxy",
                    state.url
                ),
            ),
        );
    }
    let Some(authority) = req.uri().authority().cloned() else {
        return bad_request("CONNECT needs a host:port target");
    };
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = match crate::upstream::explicit_port(&authority) {
        Ok(p) => p.unwrap_or(443),
        Err(p) => {
            return bad_request(&format!(
                "`{p}` in CONNECT {authority} is not a port (1 to 65535)"
            ));
        }
    };
    if state.upstream.is_origin(&host, Some(port), None) {
        return intercept(state, req, &authority);
    }
    blind(state, req, host, port).await
}

fn intercept(
    state: Arc<ProxyState>,
    req: Request<Incoming>,
    authority: &http::uri::Authority,
) -> Response<Full<Bytes>> {
    let Some(ca) = &state.intercept else {
        state
            .refused_connects
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::warn!(
            "refused CONNECT {authority}: HTTPS to the upstream through --mode forward cannot \
             be recorded; start `wraith record --mode mitm` and trust the CA certificate it \
             writes, or send plain http:// URLs through the proxy"
        );
        return json_response(
            StatusCode::FORBIDDEN,
            &error_body(
                "tunnel_refused",
                &format!(
                    "a CONNECT tunnel to {authority} would carry the upstream's traffic \
                     encrypted, so the recorder could not record it; start `wraith record \
                     --mode mitm` (and trust the CA certificate it writes) or send plain \
                     http:// URLs through the proxy"
                ),
            ),
        );
    };
    let Some(watcher) = state.watcher() else {
        return shutting_down();
    };
    let acceptor = ca.acceptor();
    let upgrade = hyper::upgrade::on(req);
    let served = state.clone();
    spawn_tunnel(&state, async move {
        let upgraded = match upgrade.await {
            Ok(u) => u,
            Err(e) => {
                tracing::debug!("intercepted CONNECT was not upgraded: {e}");
                return;
            }
        };
        let idle = served.request_idle_timeout;
        // A client that opens the tunnel and never begins its TLS handshake would hold it,
        // and the shutdown's drain, for ever.
        let mut closing = served.closing.subscribe();
        let handshake = tokio::select! {
            done = tokio::time::timeout(idle, acceptor.accept(TokioIo::new(upgraded))) => done,
            // The recorder stops: a tunnel without a handshake carries no exchange to drain.
            _ = closing.wait_for(|c| *c) => return,
        };
        let mut tls = match handshake {
            Ok(Ok(t)) => t,
            Err(_) => {
                tracing::warn!(
                    "closed an intercepted tunnel whose client did not finish its TLS handshake \
                     within {} ms ([serve.limits] request_idle_timeout_ms)",
                    idle.as_millis()
                );
                return;
            }
            Ok(Err(e)) => {
                tracing::warn!(
                    "TLS handshake with the client failed inside an intercepted tunnel: {e}; \
                     the client must trust the CA certificate `wraith record --mode mitm` wrote"
                );
                return;
            }
        };
        // hyper-util reads a connection's opening (the HTTP/2 preface whole) with no timer of
        // its own, and hyper's header timer starts only after it: a client that finished its
        // handshake and sends nothing would hold the tunnel until the recorder stops. TLS
        // cannot be peeked, so the opening is read here and put back in front of the rest.
        let opening = tokio::select! {
            read = crate::read_opening(&mut tls, idle) => read,
            _ = closing.wait_for(|c| *c) => return,
        };
        let Some(opening) = opening else {
            tracing::debug!("closed an intercepted tunnel whose client sent no request");
            return;
        };
        let (reader, writer) = tokio::io::split(tls);
        let io = tokio::io::join(std::io::Cursor::new(opening).chain(reader), writer);
        let service = hyper::service::service_fn(move |req| {
            crate::proxy::handle(served.clone(), Via::Intercepted, req)
        });
        let conn = crate::client_connections(idle)
            .serve_connection(TokioIo::new(io), service)
            .into_owned();
        if let Err(e) = watcher.watch(conn).await {
            tracing::debug!("intercepted connection ended with an error: {e}");
        }
    });
    Response::new(Full::new(Bytes::new()))
}

/// A tunnel to another host, passed through unrecorded.
async fn blind(
    state: Arc<ProxyState>,
    req: Request<Incoming>,
    host: String,
    port: u16,
) -> Response<Full<Bytes>> {
    let target = match tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await
    {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => return unreachable(&host, port, &e.to_string()),
        Err(_) => return unreachable(&host, port, "timed out"),
    };
    if state.watcher().is_none() {
        return shutting_down();
    }
    state.note_passed_through(&format!("CONNECT {host}:{port}"), "not");
    let upgrade = hyper::upgrade::on(req);
    spawn_tunnel(&state, async move {
        let mut target = target;
        match upgrade.await {
            Ok(upgraded) => {
                let mut client = TokioIo::new(upgraded);
                if let Err(e) = tokio::io::copy_bidirectional(&mut client, &mut target).await {
                    tracing::debug!("tunnel to {host}:{port} ended: {e}");
                }
            }
            Err(e) => tracing::debug!("CONNECT to {host}:{port} was not upgraded: {e}"),
        }
    });
    Response::new(Full::new(Bytes::new()))
}

/// Run a tunnel in [`ProxyState::tunnels`], first dropping the entries of tunnels already
/// closed: a recorder left running for hours opens many, and a `JoinSet` keeps every finished
/// task until it is joined.
fn spawn_tunnel(
    state: &ProxyState,
    tunnel: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let mut tunnels = state.tunnels.lock();
    while tunnels.try_join_next().is_some() {}
    tunnels.spawn(tunnel);
}

fn unreachable(host: &str, port: u16, cause: &str) -> Response<Full<Bytes>> {
    json_response(
        StatusCode::BAD_GATEWAY,
        &error_body(
            "upstream_unreachable",
            &format!("the recorder could not open a tunnel to {host}:{port}: {cause}"),
        ),
    )
}

fn shutting_down() -> Response<Full<Bytes>> {
    json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &error_body("shutting_down", "the recorder is stopping"),
    )
}
