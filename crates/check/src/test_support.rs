//! Builders the crate's unit tests share.

use wraith_recording::Exchange;
use wraith_recording::exchange::{RecordedRequest, RecordedResponse};

/// An exchange of `request` answered `status`, with no headers, body or timing: each test sets
/// what it reads.
pub(crate) fn exchange(request: RecordedRequest, status: u16) -> Exchange {
    Exchange {
        protocol: "http".into(),
        request,
        response: RecordedResponse {
            status,
            headers: Default::default(),
            content_type: None,
            trailers: None,
        },
        frames: Vec::new(),
        timing: Default::default(),
        correlation: Default::default(),
        safety: Default::default(),
        content: Default::default(),
        truncated: false,
    }
}

/// A bodiless `GET path` with no query, headers or origin.
pub(crate) fn get(path: &str) -> RecordedRequest {
    RecordedRequest {
        method: "GET".into(),
        path: path.into(),
        query: String::new(),
        headers: Default::default(),
        body: Default::default(),
        content_type: None,
        origin: None,
    }
}
