//! The header allowlist (`[serve] strip_headers`): vendor and infrastructure headers of the
//! recorded upstream (its web server, CDN, cloud load balancer, tracing mesh) say nothing about
//! the API and would misdescribe the twin, so they are dropped. Standard semantic headers
//! (`content-type`, CORS, `vary`, `location`, `link`, caching, `www-authenticate`,
//! `retry-after`, rate-limit headers) and the API's own headers are kept.

/// Standard headers that are always kept, whatever family rule below might say.
const KEEP: &[&str] = &[
    "content-type",
    "content-language",
    "content-disposition",
    "content-location",
    "content-range",
    "accept-ranges",
    "allow",
    "vary",
    "location",
    "link",
    "cache-control",
    "expires",
    "last-modified",
    "etag",
    "pragma",
    "www-authenticate",
    "proxy-authenticate",
    "retry-after",
    "set-cookie",
    "date",
    "content-security-policy",
    "x-content-type-options",
    "x-frame-options",
    "idempotency-key",
    "x-request-id",
    "request-id",
];

/// Kept by prefix: CORS and rate limiting.
const KEEP_PREFIX: &[&str] = &[
    "access-control-",
    "x-ratelimit-",
    "x-rate-limit-",
    "ratelimit-",
];

/// Dropped exactly: servers, caches, edge and telemetry.
const DROP: &[&str] = &[
    "server",
    "x-powered-by",
    "x-aspnet-version",
    "x-aspnetmvc-version",
    "x-cache",
    "x-cache-hits",
    "x-cache-status",
    "x-served-by",
    "x-timer",
    "nel",
    "report-to",
    "reporting-endpoints",
    "via",
    "age",
    "alt-svc",
    "expect-ct",
    "strict-transport-security",
    "server-timing",
    "x-runtime",
    "x-varnish",
    "x-iinfo",
    "x-turbo-charged-by",
    "x-envoy-upstream-service-time",
    "x-cloud-trace-context",
    "x-backend-server",
    "x-upstream",
    "x-proxy-cache",
    "x-hw",
];

/// Dropped by prefix: vendor and platform families.
const DROP_PREFIX: &[&str] = &[
    "cf-",
    "x-amz-",
    "x-amzn-",
    "x-akamai-",
    "akamai-",
    "x-fastly-",
    "fastly-",
    "x-vercel-",
    "x-nf-",
    "x-envoy-",
    "x-kong-",
    "x-azure-",
    "x-msedge-",
    "x-cdn",
    "cdn-",
    "x-edge-",
    "x-sucuri-",
    "x-guploader-",
    "x-cache-",
    "x-datadog-",
    "x-b3-",
    "x-forwarded-",
];

/// Whether a response header survives the allowlist (`name` in any case).
pub fn keeps_header(name: &str) -> bool {
    // Compared in place (every list entry is lowercase): a lowercased copy per header per
    // response showed up in the serve allocation profile.
    let is = |k: &&str| name.eq_ignore_ascii_case(k);
    let starts = |p: &&str| {
        name.len() >= p.len() && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
    };
    if KEEP.iter().any(is) || KEEP_PREFIX.iter().any(starts) {
        return true;
    }
    !(DROP.iter().any(is) || DROP_PREFIX.iter().any(starts))
}

#[cfg(test)]
mod tests {
    use super::keeps_header;

    #[test]
    fn vendor_headers_drop_semantic_headers_stay() {
        for h in [
            "Server",
            "x-powered-by",
            "CF-Ray",
            "x-cache",
            "x-served-by",
            "nel",
            "report-to",
            "via",
            "x-amz-cf-id",
        ] {
            assert!(!keeps_header(h), "{h} must be dropped");
        }
        for h in [
            "content-type",
            "Access-Control-Allow-Origin",
            "vary",
            "location",
            "link",
            "cache-control",
            "www-authenticate",
            "retry-after",
            "x-ratelimit-remaining",
            "x-github-media-type",
            "stripe-version",
        ] {
            assert!(keeps_header(h), "{h} must be kept");
        }
    }

    #[test]
    fn every_listed_name_and_prefix_is_matched_in_any_case() {
        let all = super::KEEP
            .iter()
            .chain(super::DROP)
            .map(|n| n.to_string())
            .chain(
                super::KEEP_PREFIX
                    .iter()
                    .chain(super::DROP_PREFIX)
                    .map(|p| format!("{p}x")),
            );
        for name in all {
            let upper = name.to_ascii_uppercase();
            assert_eq!(keeps_header(&upper), keeps_header(&name), "{name}");
        }
        assert!(keeps_header("X-RATELIMIT-LIMIT"));
        assert!(!keeps_header("X-AMZ-REQUEST-ID"));
        assert!(
            keeps_header("x-am"),
            "shorter than a prefix is not that prefix"
        );
    }
}
