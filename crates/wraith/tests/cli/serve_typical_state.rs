//! The recorded state a template answer shows is the one the most recording runs showed, not
//! the one one run repeated most: a run that created three notes while its account was on one
//! plan shows that plan three times, two other runs show another plan once each, and a served
//! create shows the other plan. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "typical-state-test-key");
const ORIGIN: &str = "https://api.notes.test";

/// One recorded session creating one note per `(id, text)`, each answered with `plan`.
fn session(t: &Twin, n: usize, notes: &[(&str, &str)], plan: &str) {
    let entries = notes
        .iter()
        .map(|(id, text)| {
            har::entry(
                ORIGIN,
                "POST",
                "/v1/notes",
                Some(&json!({"text": text})),
                &json!({"id": id, "text": text, "owner_plan": plan}),
            )
        })
        .collect();
    har::import(t, &[KEY], &format!("s{n}.har"), entries);
}

#[tokio::test]
async fn a_template_answer_shows_the_state_most_recording_runs_showed() {
    let t = Twin::init("notes", ORIGIN);
    session(
        &t,
        1,
        &[("501", "first"), ("502", "second"), ("503", "third")],
        "free",
    );
    session(&t, 2, &[("504", "fourth")], "pro");
    session(&t, 3, &[("505", "fifth")], "pro");
    har::synth(&t, &[KEY]);
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post(
            "/v1/notes",
            Some("agent-1"),
            json!({"text": "never recorded"}),
        )
        .await;
    created.assert_status(200);
    let note = created.json();
    assert_eq!(note["text"], json!("never recorded"), "{note}");
    assert_eq!(note["owner_plan"], json!("pro"), "{note}");
}
