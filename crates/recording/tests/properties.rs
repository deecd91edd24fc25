//! Invariants of the codec and the scrubber, over generated exchanges.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use wraith_recording::scrub::{HmacKey, ScrubPolicy, Scrubber};
use wraith_recording::*;

fn headers() -> impl Strategy<Value = Headers> {
    proptest::collection::vec(
        (
            prop_oneof![
                Just("authorization".to_string()),
                Just("cookie".to_string()),
                Just("set-cookie".to_string()),
                Just("x-api-key".to_string()),
                "[a-z][a-z-]{0,12}",
            ],
            proptest::collection::vec("[ -~]{0,24}", 1..3),
        ),
        0..5,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn query() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (
            prop_oneof![
                Just("token".to_string()),
                Just("api_key".to_string()),
                Just("Password".to_string()),
                "[a-z]{1,6}",
            ],
            "[A-Za-z0-9%._~-]{0,12}",
        ),
        0..5,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    })
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..64),
        ("[a-z_]{1,8}", "[ -~]{0,30}", 0u64..99_999_999_999_999_999)
            .prop_map(
                |(k, v, n)| format!(r#"{{"{k}":"{v}","n":{n},"token":"t{n}"}}"#).into_bytes()
            ),
        Just(b"pay 4111 1111 1111 1111 now".to_vec()),
    ]
}

fn exchange() -> impl Strategy<Value = Exchange> {
    (
        "[A-Z]{3,6}",
        "/[a-z0-9/_-]{0,20}",
        query(),
        headers(),
        body(),
        headers(),
        body(),
        // Any HTTP status: a recording holding another is refused as corrupt.
        100u16..=999,
        any::<u64>(),
        proptest::option::of("https://[a-z]{1,8}\\.example"),
    )
        .prop_map(
            |(method, path, query, rqh, rqb, rsh, rsb, status, t, origin)| Exchange {
                protocol: "http".into(),
                request: RecordedRequest {
                    method,
                    path,
                    query,
                    headers: rqh,
                    body: rqb.clone().into(),
                    content_type: (!rqb.is_empty()).then(|| "application/json".to_string()),
                    origin,
                },
                response: RecordedResponse {
                    status,
                    headers: rsh,
                    content_type: Some("application/json".into()),
                    trailers: None,
                },
                frames: vec![Frame {
                    direction: "server".into(),
                    timestamp_us: t,
                    body: rsb,
                    frame_type: "data".into(),
                }],
                timing: Timing {
                    request_start_us: t,
                    first_byte_us: t,
                    last_byte_us: t,
                },
                correlation: Correlation::default(),
                safety: Safety::default(),
                content: Content::default(),
                truncated: false,
            },
        )
}

fn scrubber() -> Scrubber {
    Scrubber::new(
        ScrubPolicy::builtin_only(),
        HmacKey::from_bytes(b"prop".to_vec()),
    )
}

proptest! {
    #[test]
    fn wrec_encode_then_read_is_identity(ex in exchange()) {
        let bytes = encode_exchange(&ex).unwrap();
        prop_assert_eq!(read_exchange(&bytes).unwrap(), ex);
    }

    #[test]
    fn scrubbing_twice_changes_nothing_more(ex in exchange()) {
        let s = scrubber();
        let once = s.scrub(ex).into_inner();
        let twice = s.scrub(once.clone()).into_inner();
        prop_assert_eq!(&twice.request, &once.request);
        prop_assert_eq!(&twice.response, &once.response);
        prop_assert_eq!(&twice.frames, &once.frames);
        prop_assert!(twice.safety.scrub_rule_ids.is_empty(), "{:?}", twice.safety.scrub_rule_ids);
    }

    #[test]
    fn query_scrub_keeps_every_non_secret_pair_byte_identical(q in query()) {
        let mut ex = exchange_with_query(&q);
        ex = scrubber().scrub(ex).into_inner();
        let before: Vec<&str> = q.split('&').collect();
        let after: Vec<&str> = ex.request.query.split('&').collect();
        prop_assert_eq!(before.len(), after.len());
        for (b, a) in before.iter().zip(&after) {
            let name = b.split('=').next().unwrap().to_ascii_lowercase();
            let secret = ["token", "api_key", "password"].contains(&name.as_str());
            let empty_value = b.ends_with('=');
            if secret && !empty_value {
                prop_assert!(a.starts_with(&b[..name.len() + 1]));
                prop_assert!(a.contains("wraith_tok_"));
            } else {
                prop_assert_eq!(a, b);
            }
        }
    }
}

fn exchange_with_query(q: &str) -> Exchange {
    Exchange {
        protocol: "http".into(),
        request: RecordedRequest {
            method: "GET".into(),
            path: "/".into(),
            query: q.to_string(),
            headers: Headers::new(),
            body: Vec::new().into(),
            content_type: None,
            origin: None,
        },
        response: RecordedResponse {
            status: 200,
            headers: Headers::new(),
            content_type: None,
            trailers: None,
        },
        frames: Vec::new(),
        timing: Timing::default(),
        correlation: Correlation::default(),
        safety: Safety::default(),
        content: Content::default(),
        truncated: false,
    }
}
