//! Bad input never panics the engine: a model synthesized from the bundled example twin's real
//! recordings answers any request — odd methods, paths built from its own routes with
//! segments swapped for junk, repeated and malformed query parameters, bodies that are broken
//! JSON, deep JSON or raw bytes — with some HTTP status, in any session.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use support::*;
use wraith_engine::{Engine, Request};

/// The engine over the bundled twin's model, built once for every case.
fn twin() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/twins/shop/recordings/sessions");
        let sessions = wraith_recording::read_sessions(&dir).unwrap();
        assert!(!sessions.is_empty());
        let model = synthesize(&sessions, "shop");
        engine(model, det_opts())
    })
}

/// Paths the twin's routes name (ids included), so the generator reaches deep into routing.
fn route_paths() -> Vec<String> {
    twin()
        .model()
        .routes
        .iter()
        .map(|r| r.path.clone())
        .collect()
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("..".to_string()),
        Just("%2F".to_string()),
        Just("%".to_string()),
        Just("cus_plbPwCH9lyjhzg".to_string()),
        "[a-zA-Z0-9_.~-]{1,12}",
        "\\PC{1,6}",
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        Just(b"{".to_vec()),
        Just(b"null".to_vec()),
        Just(b"[]".to_vec()),
        Just(format!("{}{}", "[".repeat(300), "]".repeat(300)).into_bytes()),
        Just(br#"{"name": 5, "email": {"a": [1, 2]}, "amount": -1e308}"#.to_vec()),
        "\\PC{0,40}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..64),
        ("[a-z_]{1,8}", "\\PC{0,10}").prop_map(|(k, v)| {
            serde_json::json!({ k: v, "metadata": { "x": [true, null] } })
                .to_string()
                .into_bytes()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn any_request_gets_an_http_status_and_never_a_panic(
        method in prop_oneof![
            Just("GET"), Just("POST"), Just("PUT"), Just("PATCH"), Just("DELETE"),
            Just("HEAD"), Just("OPTIONS"), Just("get"), Just("BREW"),
        ],
        route in any::<prop::sample::Index>(),
        swaps in proptest::collection::vec((any::<prop::sample::Index>(), segment()), 0..3),
        extra in proptest::collection::vec(segment(), 0..2),
        query in proptest::collection::vec(("[a-z_\\[\\]]{0,8}", "\\PC{0,8}"), 0..4),
        raw_query in prop_oneof![Just(String::new()), Just("&&=&a==b&%zz".to_string())],
        content_type in prop_oneof![
            Just(None),
            Just(Some("application/json")),
            Just(Some("application/x-www-form-urlencoded")),
            Just(Some("multipart/form-data; boundary=x")),
            Just(Some("text/plain")),
        ],
        body in body(),
        session in prop_oneof![Just(None), Just(Some("a")), Just(Some("b")), Just(Some(""))],
    ) {
        let paths = route_paths();
        let mut segments: Vec<String> = paths[route.index(paths.len())]
            .split('/')
            .map(str::to_string)
            .collect();
        for (at, s) in swaps {
            let i = at.index(segments.len());
            // Keep the leading empty segment: paths start with `/`.
            if i > 0 {
                segments[i] = s;
            }
        }
        segments.extend(extra);
        let path = segments.join("/");
        let mut q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if !raw_query.is_empty() {
            q.push(raw_query);
        }
        let mut headers = vec![("accept".to_string(), "application/json".to_string())];
        if let Some(ct) = content_type {
            headers.push(("content-type".to_string(), ct.to_string()));
        }
        let req = Request {
            method: method.to_string(),
            path,
            query: q.join("&"),
            headers,
            body: body.into(),
        };
        let resp = twin().handle(session, &req);
        prop_assert!((100..=599).contains(&resp.status), "{}", resp.status);
    }
}
