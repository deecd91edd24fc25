//! Synth never panics on odd traffic and stays deterministic on it: arbitrary methods, paths
//! (empty segments, percent escapes, non-ASCII), queries, bodies that claim JSON and are not,
//! binary bodies, any status.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use proptest::prelude::*;
use wraith_recording::{
    Content, Correlation, Exchange, Frame, Headers, RecordedRequest, RecordedResponse,
    RecordedSession, Safety, Timing,
};
use wraith_synth::{SynthOptions, synthesize};

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z]{1,8}",
        "[0-9]{1,20}",
        "[a-z]{2,4}_[A-Za-z0-9]{6,14}",
        "%2F[a-z0-9]{1,5}",
        "é[a-z]{0,3}",
        Just("v1".to_string()),
        Just("search".to_string()),
    ]
}

fn json_body() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        "[a-z0-9_\\-]{0,12}".prop_map(serde_json::Value::from),
        Just(serde_json::Value::from("2026-10-14T19:06:41.274Z")),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::btree_map("[a-z]{1,4}|id|name", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    });
    prop_oneof![
        value.prop_map(|v| serde_json::to_vec(&v).unwrap()),
        Just(b"{not json".to_vec()),
        prop::collection::vec(any::<u8>(), 0..16),
        Just(Vec::new()),
    ]
}

prop_compose! {
    fn exchange()(
        method in prop_oneof![Just("GET"), Just("POST"), Just("PUT"), Just("PATCH"), Just("DELETE"), Just("get")],
        segs in prop::collection::vec(segment(), 0..5),
        query in prop_oneof![Just(String::new()), "[a-z]{1,5}=[a-z0-9]{0,5}(&[a-z]{1,5}=[0-9]{1,3}){0,2}"],
        req in json_body(),
        req_ct in prop_oneof![Just("application/json"), Just("application/x-www-form-urlencoded"), Just("multipart/form-data; boundary=x"), Just("")],
        status in prop_oneof![Just(200u16), Just(201), Just(204), Just(400), Just(401), Just(404), Just(500), 100u16..600],
        resp in json_body(),
        auth in any::<bool>(),
    ) -> Exchange {
        let mut headers = Headers::new();
        if auth {
            headers.insert("authorization".into(), vec!["Bearer t".into()]);
        }
        let mut resp_headers = Headers::new();
        resp_headers.insert("content-type".into(), vec!["application/json".into()]);
        Exchange {
            protocol: "http".into(),
            request: RecordedRequest {
                method: method.to_string(),
                path: format!("/{}", segs.join("/")),
                query,
                headers,
                body: req.into(),
                content_type: (!req_ct.is_empty()).then(|| req_ct.to_string()),
                origin: None,
            },
            response: RecordedResponse { status, headers: resp_headers, content_type: Some("application/json".into()), trailers: None },
            frames: vec![Frame { direction: "server".into(), timestamp_us: 0, body: resp, frame_type: "data".into() }],
            timing: Timing::default(),
            correlation: Correlation::default(),
            safety: Safety::default(),
            content: Content::default(),
            truncated: false,
        }
    }
}

fn sessions(exchanges: Vec<Exchange>) -> Vec<RecordedSession> {
    exchanges
        .chunks(4)
        .enumerate()
        .map(|(n, chunk)| common::session(&format!("s{n:03}"), 0, chunk.to_vec()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn odd_traffic_never_panics_and_synthesizes_deterministically(
        exchanges in prop::collection::vec(exchange(), 1..24)
    ) {
        let input = sessions(exchanges);
        let opts = SynthOptions::default();
        let a = synthesize(&input, &opts);
        let mut reversed = input.clone();
        reversed.reverse();
        let b = synthesize(&reversed, &opts);
        prop_assert_eq!(
            wraith_model::to_canonical_json(&a.model).unwrap(),
            wraith_model::to_canonical_json(&b.model).unwrap()
        );
        prop_assert_eq!(a.summary.exchanges, input.iter().map(|s| s.exchanges.len()).sum::<usize>());
        // Every exchange is in exactly one route's exact index.
        let moments: usize = a.model.routes.iter().flat_map(|r| &r.exact).map(|e| e.moments.len()).sum();
        prop_assert_eq!(moments, a.summary.exchanges);
    }
}
