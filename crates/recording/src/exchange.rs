//! The recorded exchange: one HTTP request/response pair, exactly as a WREC file holds it.
//!
//! Field order in these structs is the key order on disk: the reader must reproduce
//! the bytes of `corpora/wraith-demo` exactly when it re-encodes them, so do not reorder.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// Header map: lowercase name → every value, in the order they were seen.
pub type Headers = IndexMap<String, Vec<String>>;

/// One recorded exchange (one `NNNNNN.wrec.zst` file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    /// `"http"` for plain HTTP exchanges.
    pub protocol: String,
    pub request: RecordedRequest,
    pub response: RecordedResponse,
    /// Response body chunks; a unary response is one `data` frame.
    pub frames: Vec<Frame>,
    pub timing: Timing,
    pub correlation: Correlation,
    pub safety: Safety,
    pub content: Content,
    /// The stream was cut before completion.
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedRequest {
    pub method: String,
    /// Path without the query string, e.g. `/v1/customers/cus_1`.
    pub path: String,
    /// Raw query string without `?`, `""` when there is none.
    pub query: String,
    pub headers: Headers,
    /// Shared, not copied, by every request built from it (uploads run to megabytes).
    pub body: bytes::Bytes,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Scheme and authority (`https://other.example.com`) when the request went to a host other
    /// than the twin's base URL; absent for requests to the twin's own upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedResponse {
    pub status: u16,
    pub headers: Headers,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Trailer fields sent after the body (chunked HTTP/1.1, HTTP/2), as `headers`; absent
    /// when the upstream sent none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trailers: Option<Headers>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// `"server"` for response data.
    pub direction: String,
    pub timestamp_us: u64,
    #[serde(with = "serde_bytes")]
    pub body: Vec<u8>,
    /// `"data"`.
    pub frame_type: String,
}

/// Unix microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Timing {
    pub request_start_us: u64,
    pub first_byte_us: u64,
    pub last_byte_us: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Correlation {
    pub exchange_index: u64,
    pub tags: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Safety {
    /// Ids of the scrub rules that changed something in this exchange.
    pub scrub_rule_ids: Vec<String>,
    pub tokenization_version: u32,
    /// Hex SHA-256 of the scrub policy in force.
    pub policy_hash: String,
    /// First 8 hex chars identifying the HMAC key.
    pub hmac_key_fingerprint: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Content {
    /// Keyed digest of the pre-scrub request and response bodies.
    pub body_digest_hmac_sha256: String,
    /// Pre-scrub request body size + response body size.
    pub body_size_bytes: u64,
}

impl Exchange {
    /// The whole response body: the concatenation of the server data frames.
    pub fn response_body(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for f in &self.frames {
            if f.direction == "server" {
                out.extend_from_slice(&f.body);
            }
        }
        out
    }

    /// First value of a request header (name matched case-insensitively).
    pub fn request_header(&self, name: &str) -> Option<&str> {
        header_value(&self.request.headers, name)
    }

    /// First value of a response header (name matched case-insensitively).
    pub fn response_header(&self, name: &str) -> Option<&str> {
        header_value(&self.response.headers, name)
    }
}

/// First value of `name` in `headers`, matching the name case-insensitively.
pub fn header_value<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v.first())
        .map(String::as_str)
}

/// A recording session as read from disk: its manifest and its exchanges in index order.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedSession {
    pub manifest: crate::manifest::Manifest,
    pub exchanges: Vec<Exchange>,
}
