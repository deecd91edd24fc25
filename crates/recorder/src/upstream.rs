//! The upstream side of the proxy: where requests go (`[service] base_url`) and the HTTP client
//! that takes them there (hyper-util's legacy client over hyper-rustls with the ring provider).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Uri;
use http::uri::{Authority, PathAndQuery, Scheme};
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::RecorderError;

/// The client the proxy forwards with. Request bodies are buffered (they are recorded whole and
/// are small in API traffic); response bodies stream.
pub(crate) type UpstreamClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A parsed `[service] base_url`: scheme, authority and the path prefix every proxied path is
/// appended to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    scheme: Scheme,
    authority: Authority,
    /// Path prefix without a trailing slash: `""` for `https://api.example.com`, `"/v4"` for
    /// `https://api.example.com/v4/`.
    prefix: String,
}

impl Upstream {
    /// Parse a base URL such as `https://api.example.com/v4`. Only `http` and `https` are
    /// accepted; a query string or fragment in the base URL is refused because there is no
    /// sensible way to merge it with the client's.
    pub fn parse(base_url: &str) -> Result<Upstream, RecorderError> {
        let bad = |why: &str| RecorderError::BadBaseUrl {
            url: base_url.to_string(),
            why: why.to_string(),
        };
        let uri: Uri = base_url
            .parse()
            .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
        let scheme = uri
            .scheme()
            .cloned()
            .ok_or_else(|| bad("it has no scheme; write it as http://host or https://host"))?;
        if scheme != Scheme::HTTP && scheme != Scheme::HTTPS {
            return Err(bad("only http:// and https:// upstreams can be recorded"));
        }
        let authority = uri
            .authority()
            .cloned()
            .ok_or_else(|| bad("it has no host"))?;
        if authority.as_str().contains('@') {
            return Err(bad(
                "credentials in the base URL are not supported; send them as headers",
            ));
        }
        if uri.query().is_some() || base_url.contains('#') {
            return Err(bad("a base URL cannot carry a query string or fragment"));
        }
        let prefix = uri.path().trim_end_matches('/').to_string();
        Ok(Upstream {
            scheme,
            authority,
            prefix,
        })
    }

    /// The base URL as normalized here (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("{}://{}{}", self.scheme, self.authority, self.prefix)
    }

    /// The upstream's authority (`host[:port]`), which becomes the forwarded `Host`.
    pub fn authority(&self) -> &str {
        self.authority.as_str()
    }

    /// The path the upstream sees for a client path: the base URL's prefix followed by the
    /// client's path. This is also the path recorded in the exchange, so recordings made by the
    /// proxy and by `wraith import` (which keeps the base path prefix) agree.
    pub fn upstream_path(&self, client_path: &str) -> String {
        let mut path = String::with_capacity(self.prefix.len() + client_path.len() + 1);
        path.push_str(&self.prefix);
        if !client_path.starts_with('/') {
            path.push('/');
        }
        path.push_str(client_path);
        path
    }

    /// The upstream's host, without port or IPv6 brackets: what an intercepted `CONNECT` must
    /// name and what the interception certificate is made for.
    pub fn host(&self) -> &str {
        self.authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
    }

    /// Whether `host` and `port` (as a proxy client named them, `port` `None` meaning the
    /// default of `scheme`) are the upstream's. A port left to its scheme's default matches the
    /// upstream's default too, so a client sending plain `http://api.example.com/...` through
    /// the proxy reaches an `https://api.example.com` upstream (the proxy speaks TLS upstream).
    pub fn is_origin(&self, host: &str, port: Option<u16>, scheme: Option<&str>) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if !host.eq_ignore_ascii_case(self.host()) {
            return false;
        }
        match (port, self.authority.port_u16()) {
            (None, None) => true,
            (Some(p), Some(q)) => p == q,
            (Some(p), None) => p == default_port(self.scheme.as_str()),
            (None, Some(q)) => scheme.is_some_and(|s| q == default_port(s)),
        }
    }

    /// Whether a full request path (as a forward-proxy client sends it) lies under the base
    /// URL's path prefix: `/v4/regions` under `/v4`, not `/v40/x` nor `/other`.
    pub fn covers_path(&self, path: &str) -> bool {
        self.prefix.is_empty()
            || path == self.prefix
            || path
                .strip_prefix(&self.prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    }

    /// The absolute upstream URI for a client path and raw query string (`""` = none).
    pub fn uri_for(&self, client_path: &str, query: &str) -> Result<Uri, RecorderError> {
        self.uri_for_upstream_path(&self.upstream_path(client_path), query)
    }

    /// The absolute upstream URI for a path that already is the upstream's (a forward-proxy
    /// client's, prefix included) and a raw query string.
    pub fn uri_for_upstream_path(&self, path: &str, query: &str) -> Result<Uri, RecorderError> {
        let mut pq = path.to_string();
        if !query.is_empty() {
            pq.push('?');
            pq.push_str(query);
        }
        let path_and_query =
            PathAndQuery::try_from(pq.as_str()).map_err(|e| RecorderError::BadRequestTarget {
                target: pq.clone(),
                why: e.to_string(),
            })?;
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(path_and_query)
            .build()
            .map_err(|e| RecorderError::BadRequestTarget {
                target: pq,
                why: e.to_string(),
            })
    }
}

/// The port an authority names explicitly: `Ok(None)` when it names none, `Err(text)` when what
/// follows the host is not a port a connection can use (`:99999`, `:abc`, `:0`, `:`). The
/// `http` crate reads such a port as absent, which would send the request to the scheme's
/// default port instead.
pub(crate) fn explicit_port(authority: &Authority) -> Result<Option<u16>, String> {
    let s = authority.as_str();
    let host_port = s.rsplit_once('@').map_or(s, |(_, hp)| hp);
    let after_host = if host_port.starts_with('[') {
        host_port.find(']').map_or("", |i| &host_port[i + 1..])
    } else {
        host_port.rfind(':').map_or("", |i| &host_port[i..])
    };
    match after_host.strip_prefix(':') {
        None => Ok(None),
        Some(p) => match p.parse::<u16>() {
            Ok(port) if port > 0 => Ok(Some(port)),
            _ => Err(p.to_string()),
        },
    }
}

fn default_port(scheme: &str) -> u16 {
    if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        80
    }
}

/// How long to wait for a TCP connection to the upstream before answering 502.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Build the upstream client: webpki roots plus any extra PEM CA certificates, ring as the only
/// crypto provider (two providers in one process make rustls panic at runtime), HTTP/1.1 and
/// HTTP/2 by ALPN. No redirects are followed, nothing is decompressed: the proxy must pass the
/// upstream's answer through as it came.
pub(crate) fn build_client(extra_ca_pem: Option<&[u8]>) -> Result<UpstreamClient, RecorderError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(pem) = extra_ca_pem {
        let mut reader = pem;
        let mut added = 0usize;
        for cert in rustls_pemfile::certs(&mut reader) {
            let cert =
                cert.map_err(|e| RecorderError::UpstreamCa(format!("unreadable PEM: {e}")))?;
            roots
                .add(cert)
                .map_err(|e| RecorderError::UpstreamCa(format!("not a usable CA: {e}")))?;
            added += 1;
        }
        if added == 0 {
            return Err(RecorderError::UpstreamCa(
                "no CERTIFICATE block found; pass a PEM file holding the CA certificate".into(),
            ));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| RecorderError::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    http.set_nodelay(true);
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_all_versions()
        .wrap_connector(http);
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_path_prefix_is_kept_in_front_of_the_client_path() -> Result<(), RecorderError> {
        let up = Upstream::parse("https://api.example.com/v4/")?;
        assert_eq!(up.upstream_path("/regions"), "/v4/regions");
        assert_eq!(
            up.uri_for("/regions", "page=2")?.to_string(),
            "https://api.example.com/v4/regions?page=2"
        );
        assert_eq!(up.base_url(), "https://api.example.com/v4");
        Ok(())
    }

    #[test]
    fn base_without_path_forwards_the_client_path_unchanged() -> Result<(), RecorderError> {
        let up = Upstream::parse("http://127.0.0.1:18080")?;
        assert_eq!(up.upstream_path("/"), "/");
        assert_eq!(up.upstream_path("/customers/cus_1"), "/customers/cus_1");
        assert_eq!(up.authority(), "127.0.0.1:18080");
        Ok(())
    }

    #[test]
    fn origin_matches_host_and_port_with_scheme_defaults() -> Result<(), RecorderError> {
        let up = Upstream::parse("https://API.example.com/v4")?;
        assert!(up.is_origin("api.example.com", None, Some("https")));
        assert!(up.is_origin("api.example.com", Some(443), None));
        // Plain HTTP to the default port reaches the HTTPS upstream.
        assert!(up.is_origin("api.example.com", None, Some("http")));
        assert!(!up.is_origin("api.example.com", Some(8443), None));
        assert!(!up.is_origin("other.example.com", None, Some("https")));
        let local = Upstream::parse("http://127.0.0.1:18080")?;
        assert!(local.is_origin("127.0.0.1", Some(18080), None));
        assert!(!local.is_origin("127.0.0.1", None, Some("http")));
        assert!(!local.is_origin("127.0.0.1", Some(18081), None));
        let v6 = Upstream::parse("http://[::1]:9000")?;
        assert_eq!(v6.host(), "::1");
        assert!(v6.is_origin("[::1]", Some(9000), None));
        Ok(())
    }

    #[test]
    fn an_unusable_port_is_an_error_not_the_default() {
        let port = |a: &str| explicit_port(&a.parse::<Authority>().unwrap());
        assert_eq!(port("api.example.com"), Ok(None));
        assert_eq!(port("api.example.com:8443"), Ok(Some(8443)));
        assert_eq!(port("[::1]:9000"), Ok(Some(9000)));
        assert_eq!(port("[::1]"), Ok(None));
        assert_eq!(port("u:p@h:81"), Ok(Some(81)));
        for bad in ["h:99999", "h:65536", "h:0", "h:"] {
            if let Ok(a) = bad.parse::<Authority>() {
                assert!(explicit_port(&a).is_err(), "{bad}");
            }
        }
    }

    #[test]
    fn only_paths_under_the_base_prefix_are_covered() -> Result<(), RecorderError> {
        let up = Upstream::parse("https://api.example.com/v4/")?;
        assert!(up.covers_path("/v4/regions"));
        assert!(up.covers_path("/v4"));
        assert!(!up.covers_path("/v40/regions"));
        assert!(!up.covers_path("/health"));
        assert!(Upstream::parse("http://h")?.covers_path("/anything"));
        Ok(())
    }

    #[test]
    fn base_url_without_http_scheme_or_with_query_is_refused() {
        for bad in [
            "api.example.com",
            "ftp://example.com",
            "https://example.com/v1?x=1",
            "https://u:p@example.com",
        ] {
            assert!(
                matches!(Upstream::parse(bad), Err(RecorderError::BadBaseUrl { .. })),
                "{bad} should be refused"
            );
        }
    }
}
