//! Recordings made before `wraith record` decoded compressed answers hold the upstream's gzip
//! bytes with their `content-encoding`: synth reads them decoded, so the model learns the JSON
//! (and serving it answers JSON, not gzip labelled JSON).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::Write as _;

use serde_json::{Value, json};
use wraith_model::template::BodyTemplate;
use wraith_model::{Model, RecordedBody};
use wraith_recording::scrub::{HmacKey, ScrubPolicy, Scrubber};
use wraith_recording::session::{SessionMeta, SessionWriter};
use wraith_recording::{Exchange, Headers};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn widget(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "qty": 3})
}

/// A `GET /widgets/<id>` answered with `answer` gzip-compressed, the way the recorder stored
/// such an answer before it decoded them: the gzip bytes, `content-encoding: gzip` and the
/// compressed `content-length`.
fn gzipped_read(id: &str, answer: &Value) -> Exchange {
    let mut ex = common::ok_json("GET", &format!("/widgets/{id}"), None, answer);
    let body = gzip(answer.to_string().as_bytes());
    let headers: &mut Headers = &mut ex.response.headers;
    headers.insert("content-encoding".into(), vec!["gzip".into()]);
    headers.insert("content-length".into(), vec![body.len().to_string()]);
    ex.frames[0].body = body;
    ex
}

/// The exchanges written as WREC files with the recording library's writer and read back.
fn written_and_read(exchanges: Vec<Exchange>) -> Vec<wraith_recording::RecordedSession> {
    let tmp = tempfile::tempdir().unwrap();
    let scrubber = Scrubber::new(
        ScrubPolicy::builtin_only(),
        HmacKey::from_bytes(b"k".to_vec()),
    );
    let mut writer = SessionWriter::new(
        tmp.path(),
        SessionMeta {
            session_id: "20260101T000000Z-000001".into(),
            tags: Vec::new(),
            proxy_mode: "reverse".into(),
            policy_hash: scrubber.policy_hash().to_string(),
        },
    )
    .unwrap();
    for ex in exchanges {
        writer.append(scrubber.scrub(ex)).unwrap();
    }
    writer.finish().unwrap();
    let sessions = wraith_recording::read_sessions(tmp.path()).unwrap();
    // What was written is the compressed answer, as an older recorder left it.
    let ex = &sessions[0].exchanges[0];
    assert_eq!(ex.response_header("content-encoding"), Some("gzip"));
    assert_eq!(&ex.response_body()[..2], b"\x1f\x8b");
    sessions
}

fn synth(sessions: &[wraith_recording::RecordedSession]) -> Model {
    common::synth_model("gz", "http://api.test", sessions)
}

#[test]
fn a_recorded_gzip_answer_is_learned_as_its_json() {
    let a = widget("w_1", "sprocket");
    let b = widget("w_2", "cog");
    let sessions = written_and_read(vec![gzipped_read("w_1", &a), gzipped_read("w_2", &b)]);
    let model = synth(&sessions);
    let route = common::route(&model, "GET", "/widgets/:param");

    // The exact-replay index holds the JSON, without the encoding header.
    assert_eq!(route.exact.len(), 2);
    for (entry, want) in route.exact.iter().zip([&a, &b]) {
        let moment = &entry.moments[0];
        match &moment.body {
            RecordedBody::Json { value } => {
                assert_eq!(
                    serde_json::from_str::<Value>(value.as_str()).unwrap(),
                    *want
                );
            }
            other => panic!("{}: not JSON: {other:?}", entry.key.path),
        }
        assert!(
            moment.headers.iter().all(|(k, _)| k != "content-encoding"),
            "{:?}",
            moment.headers
        );
    }

    // The route's template is a JSON template learned from both answers.
    let variant = &route.variants[0];
    assert!(
        matches!(variant.body, BodyTemplate::Json { .. }),
        "{:?}",
        variant.body
    );
    assert!(
        variant.headers.iter().all(|h| h.name != "content-encoding"),
        "{:?}",
        variant.headers
    );
}
