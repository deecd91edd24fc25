//! `wraith serve` giving a record an action brings into the session (one no recording held,
//! answered by the action's template) the next number where the type's records each hold
//! their own: every recording followed one tag, so the follow's template answers that tag's
//! `id`, which a new tag must not share (`engine/src/engine/unique_fields.rs`). Black-box: the
//! real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "unique-fields-test-key");
const ORIGIN: &str = "https://api.tags.test";

fn tag(id: &str, name: &str, following: bool) -> Value {
    json!({"id": id, "name": name, "uses": "0", "following": following})
}

/// Every run reads the tags `ringtones` (id `"1"`) and `heeho` (id `"3"`), then follows and
/// unfollows `heeho`.
fn tags_twin() -> Twin {
    har::synth_twin("tags", ORIGIN, &[KEY], 3, |t, n| {
        let e = |method: &str, p: &str, answer: &Value| har::entry(ORIGIN, method, p, None, answer);
        let entries = vec![
            e("GET", "/v1/tags/ringtones", &tag("1", "ringtones", false)),
            e("GET", "/v1/tags/heeho", &tag("3", "heeho", false)),
            e("POST", "/v1/tags/heeho/follow", &tag("3", "heeho", true)),
            e("POST", "/v1/tags/heeho/unfollow", &tag("3", "heeho", false)),
        ];
        har::import(t, &[KEY], &format!("s{n}.har"), entries);
    })
}

#[tokio::test]
async fn a_followed_tag_no_run_recorded_gets_the_next_id_not_the_recorded_tags() {
    let t = tags_twin();
    let server = t.serve_env(&[], &[KEY]);
    let s = Some("agent-1");
    let follow = |name: &str| format!("/v1/tags/{name}/follow");

    let new = server.post(&follow("knitting"), s, json!({})).await;
    new.assert_status(200);
    let new = new.json();
    assert_eq!(new["name"], json!("knitting"), "{new}");
    assert_eq!(
        new["id"],
        json!("4"),
        "above every recorded tag's id: {new}"
    );
    // A field every record holds alike is no number of its own: as the template has it.
    assert_eq!(new["uses"], json!("0"), "{new}");
    let read = server.get("/v1/tags/knitting", s).await.json();
    assert_eq!(read["id"], json!("4"), "the session keeps it: {read}");

    let next = server.post(&follow("baking"), s, json!({})).await.json();
    assert_eq!(next["id"], json!("5"), "and the one after: {next}");
    let recorded = server.post(&follow("heeho"), s, json!({})).await.json();
    assert_eq!(
        recorded["id"],
        json!("3"),
        "a recorded tag keeps its own: {recorded}"
    );
    let other = server
        .post(&follow("knitting"), Some("agent-2"), json!({}))
        .await;
    assert_eq!(
        other.json()["id"],
        json!("4"),
        "each session counts its own"
    );
}
