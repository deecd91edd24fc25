//! `wraith serve` answering a name the way the API spells it after dropping its leading marks:
//! a tag featured as `#coolfree` is answered `coolfree`, and its URL names `coolfree`. A
//! session's own tag is answered so, where the twin used to answer a recorded tag
//! (`synth/src/unify.rs`, `EchoSource::Trimmed`). Black-box: the real binary on a HAR run
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://social.test";

#[tokio::test]
async fn a_tag_sent_with_or_without_its_mark_is_answered_without_it_in_its_name_and_url() {
    let t = Twin::init("tags", ORIGIN);
    let entries = [("1", "ringtones"), ("2", "#coolfree"), ("3", "#fossil")]
        .into_iter()
        .map(|(id, sent)| {
            let name = sent.trim_start_matches('#');
            har::entry(
                ORIGIN,
                "POST",
                "/api/v1/featured_tags",
                Some(&json!({"name": sent})),
                &json!({"id": id, "name": name,
                        "url": format!("{ORIGIN}/@me/tagged/{name}"), "statuses_count": "0"}),
            )
        })
        .collect();
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    for (sent, name) in [("#rustlang", "rustlang"), ("zig", "zig")] {
        let featured = server
            .post("/api/v1/featured_tags", Some("s1"), json!({"name": sent}))
            .await;
        featured.assert_status(200);
        let body = featured.json();
        assert_eq!(body["name"], name, "{body}");
        assert!(
            body["url"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/@me/tagged/{name}")),
            "{body}"
        );
    }
}
