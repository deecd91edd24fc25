//! Bad input never panics: damaged WREC files and HAR documents decode to an error (or, where
//! the damage happens to leave a valid document, to a value), never to a crash.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use proptest::prelude::*;
use wraith_recording::har::{BaseUrl, parse_har};
use wraith_recording::wrec::{decode_cbor, decompress};
use wraith_recording::*;

/// A real exchange, encoded: the starting point the mutations damage.
fn valid_wrec() -> Vec<u8> {
    let ex = Exchange {
        protocol: "http".into(),
        request: RecordedRequest {
            method: "POST".into(),
            path: "/v1/customers".into(),
            query: "expand=sources&limit=3".into(),
            headers: [(
                "content-type".to_string(),
                vec!["application/json".to_string()],
            )]
            .into_iter()
            .collect(),
            content_type: Some("application/json".into()),
            body: br#"{"name":"Ada","email":"ada@example.com"}"#.to_vec().into(),
            origin: None,
        },
        response: RecordedResponse {
            status: 201,
            headers: [("x-request-id".to_string(), vec!["req_1".to_string()])]
                .into_iter()
                .collect(),
            content_type: Some("application/json".into()),
            trailers: None,
        },
        frames: vec![Frame {
            direction: "server".into(),
            timestamp_us: 2,
            body: br#"{"id":"cus_1","name":"Ada","created":1700000000}"#.to_vec(),
            frame_type: "data".into(),
        }],
        timing: Timing {
            request_start_us: 1,
            first_byte_us: 2,
            last_byte_us: 3,
        },
        correlation: Correlation::default(),
        safety: Safety::default(),
        content: Content::default(),
        truncated: false,
    };
    encode_exchange(&ex).unwrap()
}

const HAR: &str = r#"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[
{"startedDateTime":"2026-01-02T03:04:05.000Z","time":12,
 "request":{"method":"POST","url":"https://api.example.com/v1/customers?limit=2","httpVersion":"HTTP/1.1",
  "headers":[{"name":"Content-Type","value":"application/json"}],"queryString":[{"name":"limit","value":"2"}],
  "postData":{"mimeType":"application/json","text":"{\"name\":\"Ada\"}"},"headersSize":-1,"bodySize":14},
 "response":{"status":201,"statusText":"Created","httpVersion":"HTTP/1.1",
  "headers":[{"name":"Content-Type","value":"application/json"}],
  "content":{"size":22,"mimeType":"application/json","text":"eyJpZCI6ImN1c18xIn0=","encoding":"base64"},
  "redirectURL":"","headersSize":-1,"bodySize":22},
 "cache":{},"timings":{"send":1,"wait":10,"receive":1}}]}}"#;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn arbitrary_bytes_never_panic_the_wrec_reader(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = read_exchange(&bytes);
        let _ = decode_cbor(&bytes);
    }

    #[test]
    fn a_wrec_file_damaged_anywhere_never_panics_the_reader(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        // Damage the compressed file and, separately, the CBOR inside it: zstd's checksum
        // catches most damage to the first, the CBOR decoder must survive the second.
        let wrec = valid_wrec();
        let cbor = decompress(&wrec).unwrap();
        for mut bytes in [wrec, cbor.clone()] {
            for (at, value) in &edits {
                let i = at.index(bytes.len());
                bytes[i] = *value;
            }
            let _ = read_exchange(&bytes);
            let _ = decode_cbor(&bytes);
            let end = cut.index(bytes.len());
            let _ = decode_cbor(&bytes[..end]);
        }
    }

    #[test]
    fn a_har_damaged_anywhere_never_panics_the_importer(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let base = BaseUrl::parse("https://api.example.com/v1").unwrap();
        let file = Path::new("damaged.har");
        prop_assert!(parse_har(HAR.as_bytes(), file, &base).is_ok());
        let mut bytes = HAR.as_bytes().to_vec();
        for (at, value) in &edits {
            let i = at.index(bytes.len());
            bytes[i] = *value;
        }
        let _ = parse_har(&bytes, file, &base);
        let end = cut.index(bytes.len());
        let _ = parse_har(&bytes[..end], file, &base);
    }

    #[test]
    fn a_har_with_odd_field_values_never_panics_the_importer(
        method in "[A-Za-z]{0,8}|\\PC{0,6}",
        url in "https?://[a-z.]{0,12}(:[0-9]{1,6})?(/[^ ]{0,12})?|\\PC{0,16}",
        status in any::<i64>(),
        started in "\\PC{0,30}",
        encoding in "base64|gzip|\\PC{0,6}",
        text in "\\PC{0,24}",
    ) {
        let doc = serde_json::json!({"log": {"entries": [{
            "startedDateTime": started,
            "request": {"method": method, "url": url, "headers": [], "queryString": []},
            "response": {"status": status, "headers": [],
                         "content": {"mimeType": "application/json", "text": text, "encoding": encoding}},
        }]}});
        let base = BaseUrl::parse("https://api.example.com/v1").unwrap();
        let _ = parse_har(doc.to_string().as_bytes(), Path::new("odd.har"), &base);
    }
}
