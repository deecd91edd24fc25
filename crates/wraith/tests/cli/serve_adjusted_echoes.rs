//! `wraith serve` answering a value as the request sent it where the recorded API did for all
//! but one request in ten: a disk created with any size answers that size, though one
//! recorded create (from an image) was answered a smaller one. The one exception no longer
//! turns the field into recorded values picked by another request field (`synth/src/unify.rs`,
//! `MAX_MISSED_ECHO_SHARE`). Black-box: the real binary on a HAR written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.disks.test";

#[tokio::test]
async fn a_size_answered_as_sent_by_nine_creates_in_ten_is_answered_as_sent() {
    let t = Twin::init("disks", ORIGIN);
    let sizes = [512, 512, 18, 1024, 2000, 2000, 2000, 2000, 2000, 2000];
    let entries = sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            let mut sent = json!({"label": format!("disk-{i}"), "size": size});
            // The API answered the one create from a private image a smaller size.
            let answered = if i == 5 {
                sent["image"] = json!("private/1");
                1778
            } else {
                if i % 2 == 0 {
                    sent["image"] = json!("linode/debian12");
                }
                size
            };
            let answer = json!({"id": 100 + i, "label": format!("disk-{i}"), "size": answered});
            har::entry(ORIGIN, "POST", "/v1/disks", Some(&sent), &answer)
        })
        .collect();
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    let server = t.serve(&[]);
    for (sent, image) in [(4321, None), (2500, Some("linode/debian12"))] {
        let mut body = json!({"label": "mine", "size": sent});
        if let Some(image) = image {
            body["image"] = json!(image);
        }
        let made = server.post("/v1/disks", Some("s1"), body).await;
        made.assert_status(200);
        assert_eq!(made.json()["size"], json!(sent), "{}", made.json());
    }
}
