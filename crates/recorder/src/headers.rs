//! Header rules of the proxy: what is forwarded upstream, what goes back to the client, and what
//! is recorded.
//!
//! - Hop-by-hop headers (RFC 9110 §7.6.1: `connection` and every name it lists, `keep-alive`,
//!   `proxy-connection`, `te`, `transfer-encoding`, `upgrade`, `proxy-authorization`,
//!   `proxy-authenticate`) describe one connection and are never forwarded in either direction.
//!   `trailer` is end to end (RFC 9110 §6.6.2): it announces the trailer fields, which reach
//!   the client and are recorded under the response's `trailers`.
//! - A response framed by `transfer-encoding` loses its `content-length` too (RFC 9112 §6.3:
//!   the encoding wins and a proxy must remove the length), both towards the client, whose
//!   body hyper frames anew, and in the recording, which holds the body de-chunked.
//! - `x-wraith-*` request headers are Wraith's own (session, replay hints): neither forwarded nor
//!   recorded; nor are `proxy-connection` and `proxy-authorization`, which a forward-proxy
//!   client sends to the recorder itself.
//! - `host` is rewritten to the upstream's (the client addressed the proxy).
//! - A request the proxy passes through unrecorded (forward and mitm modes, another origin)
//!   keeps its `host` and `accept-encoding`: only hop-by-hop and `x-wraith-*` headers go.
//! - `accept-encoding` is forced to `identity` upstream: the recording must hold plain bodies so
//!   the scrubber can see (and remove) secrets inside them and synth can read them. Clients must
//!   accept an identity response, so this is invisible to them. An upstream that compresses
//!   anyway is passed through to the client as it answered, and its body is recorded decoded,
//!   without `content-encoding` (`exchange::decode_recorded_bodies`); so is a request body the
//!   client sent compressed, which reaches the upstream as it was sent.
//! - Recorded headers are lowercase and sorted by name (deterministic files), each name with all
//!   its values in arrival order. `transfer-encoding` is not recorded because the body is stored
//!   de-chunked; everything else the client sent (or the upstream answered) is kept as it was,
//!   but for the `content-encoding` and `content-length` of a body recorded decoded.

use http::HeaderMap;
use http::header::{self, HeaderName, HeaderValue};
use wraith_recording::Headers;

/// Prefix of Wraith's own request headers.
pub const WRAITH_HEADER_PREFIX: &str = "x-wraith-";

const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "transfer-encoding",
    "upgrade",
];

fn is_wraith(name: &HeaderName) -> bool {
    name.as_str().starts_with(WRAITH_HEADER_PREFIX)
}

/// Names listed in `Connection` headers (they are hop-by-hop for this message too).
fn connection_listed(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

fn is_hop_by_hop(name: &HeaderName, listed: &[String]) -> bool {
    HOP_BY_HOP.contains(&name.as_str()) || listed.iter().any(|l| l == name.as_str())
}

/// The headers to send on for a request the proxy passes through unrecorded (another origin
/// than the upstream): everything but hop-by-hop and `X-Wraith-*` headers, `Host` and
/// `Accept-Encoding` as the client sent them.
pub fn passthrough_request_headers(client: &HeaderMap) -> HeaderMap {
    let listed = connection_listed(client);
    let mut out = HeaderMap::with_capacity(client.len());
    for (name, value) in client {
        if is_hop_by_hop(name, &listed) || is_wraith(name) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// The headers to send upstream for a client's request headers.
pub fn forward_request_headers(client: &HeaderMap) -> HeaderMap {
    let listed = connection_listed(client);
    let mut out = HeaderMap::with_capacity(client.len());
    for (name, value) in client {
        if is_hop_by_hop(name, &listed)
            || is_wraith(name)
            || name == header::HOST
            || name == header::ACCEPT_ENCODING
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    // The client sets `Host` from the upstream URI (the legacy client adds it for HTTP/1.1 and
    // uses `:authority` for HTTP/2), so removing the client's value is the rewrite.
    out.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    out
}

/// Remove hop-by-hop headers from an upstream response before it goes to the client. hyper
/// frames the body for the client itself (content-length or chunked).
pub fn strip_response_hop_by_hop(headers: &mut HeaderMap) {
    let listed = connection_listed(headers);
    if headers.contains_key(header::TRANSFER_ENCODING) {
        headers.remove(header::CONTENT_LENGTH);
    }
    let names: Vec<HeaderName> = headers
        .keys()
        .filter(|n| is_hop_by_hop(n, &listed))
        .cloned()
        .collect();
    for n in names {
        headers.remove(n);
    }
}

/// The request headers to record: as the client sent them, minus `x-wraith-*` and
/// `transfer-encoding`.
pub fn recorded_request_headers(client: &HeaderMap) -> Headers {
    // `proxy-*` headers speak to the recorder as the client's proxy (forward and mitm modes):
    // they are not part of the API's traffic, and a `proxy-authorization` has no place on disk.
    to_recorded(client, |n| {
        is_wraith(n)
            || n == header::TRANSFER_ENCODING
            || n == header::PROXY_AUTHORIZATION
            || n.as_str() == "proxy-connection"
    })
}

/// The response headers to record: as forwarded to the client (hop-by-hop already removed).
pub fn recorded_response_headers(forwarded: &HeaderMap) -> Headers {
    to_recorded(forwarded, |n| n == header::TRANSFER_ENCODING)
}

fn to_recorded(headers: &HeaderMap, skip: impl Fn(&HeaderName) -> bool) -> Headers {
    let mut names: Vec<&HeaderName> = headers.keys().filter(|n| !skip(n)).collect();
    names.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    let mut out = Headers::with_capacity(names.len());
    for name in names {
        let values = headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        out.insert(name.as_str().to_string(), values);
    }
    out
}

/// Trailer fields to record, as response headers are.
pub fn recorded_trailers(trailers: &HeaderMap) -> Headers {
    to_recorded(trailers, |_| false)
}

/// The first `content-type` value as text, if any.
pub fn content_type(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(HeaderName::from_static(k), HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn wraith_and_hop_by_hop_request_headers_are_not_forwarded() {
        let client = map(&[
            ("host", "127.0.0.1:8080"),
            ("x-wraith-session", "s1"),
            ("connection", "keep-alive, x-trace"),
            ("x-trace", "1"),
            ("te", "trailers"),
            ("accept-encoding", "gzip"),
            ("authorization", "Bearer abc"),
            ("accept", "application/json"),
        ]);
        let fwd = forward_request_headers(&client);
        let mut names: Vec<&str> = fwd.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["accept", "accept-encoding", "authorization"]);
        assert_eq!(fwd[header::ACCEPT_ENCODING], "identity");
    }

    #[test]
    fn recorded_request_headers_are_sorted_and_keep_every_value_but_wraith_ones() {
        let client = map(&[
            ("user-agent", "t"),
            ("accept", "a"),
            ("accept", "b"),
            ("x-wraith-session", "s1"),
            ("transfer-encoding", "chunked"),
            ("host", "127.0.0.1:8080"),
        ]);
        let rec = recorded_request_headers(&client);
        let names: Vec<&str> = rec.keys().map(String::as_str).collect();
        assert_eq!(names, ["accept", "host", "user-agent"]);
        assert_eq!(rec["accept"], ["a", "b"]);
    }

    #[test]
    fn response_hop_by_hop_headers_are_removed() {
        let mut h = map(&[
            ("content-type", "application/json"),
            ("connection", "close"),
            ("transfer-encoding", "chunked"),
            ("keep-alive", "timeout=5"),
        ]);
        strip_response_hop_by_hop(&mut h);
        let names: Vec<&str> = h.keys().map(HeaderName::as_str).collect();
        assert_eq!(names, ["content-type"]);
    }
}
