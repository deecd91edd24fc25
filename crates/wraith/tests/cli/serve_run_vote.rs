//! `wraith serve` answering a request that several recorded runs answered differently: the
//! answer most runs gave wins, judged by its shape first, since every run minted its own ids.
//! Black-box: the real binary on three HAR runs written here, each creating the same note as
//! its first request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.notes.test";

#[tokio::test]
async fn a_create_three_runs_recorded_answers_with_the_shape_two_of_them_gave() {
    let t = Twin::init("notes", ORIGIN);
    let sent = json!({"title": "t"});
    // Run `a` starts first, so it is first in run order; its note has no tags. Runs `b` and
    // `c` each answered with their own id and one tag.
    for (run, day, answer) in [
        ("a", 1, json!({"id": "note_a0001", "title": "t"})),
        (
            "b",
            2,
            json!({"id": "note_b0001", "title": "t", "tags": ["x"]}),
        ),
        (
            "c",
            3,
            json!({"id": "note_c0001", "title": "t", "tags": ["y"]}),
        ),
    ] {
        let mut entry = har::entry(ORIGIN, "POST", "/v1/notes", Some(&sent), &answer);
        entry["startedDateTime"] = json!(format!("2026-06-0{day}T12:00:00.000Z"));
        har::import(&t, &[], &format!("{run}.har"), vec![entry]);
    }
    let s = t.serve(&[]);
    // The shape two runs of three gave, from the first of them in run order.
    for session in ["one", "two"] {
        let r = s.post("/v1/notes", Some(session), sent.clone()).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.provenance(), Some("recorded"));
        let body = r.json();
        assert_eq!(body["tags"], json!(["x"]), "{body}");
        assert_eq!(body["title"], "t");
    }
}
