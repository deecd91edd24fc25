//! The scrubber on an exchange with fuzzed bodies, query, headers and content types, under a
//! policy with a rule of every scope (and, when the input asks, one more rule it spells). The
//! scrubbed exchange must still be one WREC can write and read back.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use wraith_recording::wrec::{encode_exchange, read_exchange};
use wraith_recording::{
    Content, Correlation, Exchange, Frame, Headers, HmacKey, RecordedRequest, RecordedResponse,
    Safety, ScrubPolicy, Scrubber, Timing,
};

/// Rules of every scope, so every part of the scrubber runs on every input.
const POLICY: &str = r#"
[[rules]]
scope = "jsonpath"
match = "$.customer.email"
action = "tokenize"

[[rules]]
scope = "jsonpath"
match = "$.items[*].card"
action = "redact"

[[rules]]
scope = "jsonpath"
match = "$..secret"
action = "pseudonymize"

[[rules]]
scope = "header"
match = "x-*-token"
action = "mask"
replacement = "***"

[[rules]]
scope = "cookie"
match = "sess*"
action = "tokenize"

[[rules]]
scope = "query_param"
match = "email"
action = "pseudonymize"

[[rules]]
scope = "regex"
match = "sk_(live|test)_[A-Za-z0-9]+"
action = "redact"
"#;

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/json; charset=utf-8",
    "application/problem+json",
    "text/event-stream",
    "application/x-ndjson",
    "multipart/form-data; boundary=X",
    "multipart/form-data; boundary=\"a b\"",
    "multipart/form-data",
    "application/x-www-form-urlencoded",
    "text/plain",
    "application/octet-stream",
];

fn scrubber() -> &'static Scrubber {
    static S: OnceLock<Scrubber> = OnceLock::new();
    S.get_or_init(|| {
        let policy = ScrubPolicy::parse(POLICY.as_bytes(), Path::new("scrub.toml"))
            .expect("the fuzz policy parses");
        Scrubber::new(policy, HmacKey::from_bytes(b"fuzz-key".to_vec()))
    })
}

#[derive(Debug, Arbitrary)]
enum ContentType {
    Known(u8),
    Spelled(String),
    Absent,
}

impl ContentType {
    fn value(&self) -> Option<String> {
        match self {
            ContentType::Known(i) => Some(CONTENT_TYPES[*i as usize % CONTENT_TYPES.len()].into()),
            ContentType::Spelled(s) => Some(s.clone()),
            ContentType::Absent => None,
        }
    }
}

#[derive(Debug, Arbitrary)]
struct Input {
    /// One extra rule: scope index, `match`, action index.
    extra_rule: Option<(u8, String, u8)>,
    method: String,
    path: String,
    query: String,
    request_headers: Vec<(String, String)>,
    request_type: ContentType,
    request_body: Vec<u8>,
    response_headers: Vec<(String, String)>,
    response_type: ContentType,
    frames: Vec<Vec<u8>>,
    status: u16,
}

fn headers(list: &[(String, String)], content_type: Option<&str>) -> Headers {
    let mut h = Headers::new();
    for (k, v) in list {
        h.entry(k.to_ascii_lowercase()).or_default().push(v.clone());
    }
    if let Some(ct) = content_type {
        h.entry("content-type".into()).or_default().push(ct.into());
    }
    h
}

fn extra_scrubber((scope, pattern, action): &(u8, String, u8)) -> Option<Scrubber> {
    let scope = ["header", "cookie", "query_param", "jsonpath", "regex"][*scope as usize % 5];
    let action = ["tokenize", "redact", "pseudonymize"][*action as usize % 3];
    // A JSON string is a TOML basic string for every character TOML allows in one.
    let pattern = serde_json::to_string(pattern).ok()?;
    let text = format!(
        "{POLICY}\n[[rules]]\nscope = \"{scope}\"\nmatch = {pattern}\naction = \"{action}\"\n"
    );
    let policy = ScrubPolicy::parse(text.as_bytes(), Path::new("scrub.toml")).ok()?;
    Some(Scrubber::new(
        policy,
        HmacKey::from_bytes(b"fuzz-key".to_vec()),
    ))
}

fuzz_target!(|input: Input| {
    let request_type = input.request_type.value();
    let response_type = input.response_type.value();
    let ex = Exchange {
        protocol: "http".into(),
        request: RecordedRequest {
            method: input.method,
            path: input.path,
            query: input.query,
            headers: headers(&input.request_headers, request_type.as_deref()),
            body: input.request_body,
            content_type: request_type,
            origin: None,
        },
        response: RecordedResponse {
            status: 100 + input.status % 900,
            headers: headers(&input.response_headers, response_type.as_deref()),
            content_type: response_type,
            trailers: None,
        },
        frames: input
            .frames
            .into_iter()
            .map(|body| Frame {
                direction: "server".into(),
                timestamp_us: 0,
                body,
                frame_type: "data".into(),
            })
            .collect(),
        timing: Timing::default(),
        correlation: Correlation::default(),
        safety: Safety::default(),
        content: Content::default(),
        truncated: false,
    };
    let extra = input.extra_rule.as_ref().and_then(extra_scrubber);
    let scrubbed = extra.as_ref().unwrap_or_else(|| scrubber()).scrub(ex);
    let bytes =
        encode_exchange(scrubbed.exchange()).expect("a fuzz input is far below the file limit");
    let back = read_exchange(&bytes).expect("a scrubbed exchange reads back");
    assert_eq!(&back, scrubbed.exchange());
});
