//! A recording made quickly: three creates inside one second all answered the same `created`,
//! the moment each was answered. That agreement is the clock, not a constant: the twin stamps
//! a new record with its own clock instead of freezing every record at the recording's
//! second. A timestamp the answers repeat from long before (a parent's creation time) stays a
//! constant. Black-box: the real binary on a HAR run written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.notes.test";
/// 2026-06-01T12:00:00Z, when the run was recorded.
const RECORDED: u64 = 1_780_315_200;
/// A year before the run.
const BOOK_CREATED: u64 = RECORDED - 365 * 86_400;

fn notes_twin() -> Twin {
    let t = Twin::init("notes", ORIGIN);
    let entries: Vec<_> = (1..=3)
        .map(|i| {
            let mut e = har::entry(
                ORIGIN,
                "POST",
                "/v1/notes",
                Some(&json!({"text": format!("note {i}")})),
                &json!({
                    "id": format!("n_{i}"),
                    "text": format!("note {i}"),
                    "created": RECORDED,
                    "book_created": BOOK_CREATED,
                }),
            );
            e["startedDateTime"] = json!(format!("2026-06-01T12:00:00.{}00Z", i * 2));
            e
        })
        .collect();
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn creates_recorded_inside_one_second_are_stamped_by_the_twin_clock() {
    let t = notes_twin();
    let server = t.serve(&["--clock", "fixed", "--clock-epoch", "1700000000"]);
    let made = server
        .post("/v1/notes", Some("s"), json!({"text": "mine"}))
        .await;
    made.assert_status(200);
    let body = made.json();
    assert_eq!(body["created"], json!(1_700_000_000), "{body}");
    assert_eq!(body["book_created"], json!(BOOK_CREATED), "{body}");
}
