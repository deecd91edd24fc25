//! `wraith serve` answering a replacing update with the fields its request left out reset to
//! the value every recorded replace answered (`Route::update_resets`), and a later read
//! showing the record as the replace left it. Black-box: the real binary on HAR runs written
//! here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const ORIGIN: &str = "https://api.widgets.test";

/// Three runs, each creating a widget with a color and a size, replacing it with its name
/// only (the answer resets `color` to `null` and `size` to `0`) and reading it.
fn widgets_twin() -> Twin {
    let t = Twin::init("widgets", ORIGIN);
    for (run, id, color, size) in [
        ("a", "w1", "red", 3),
        ("b", "w2", "green", 5),
        ("c", "w3", "blue", 8),
    ] {
        let replaced = json!({"id": id, "name": "renamed", "color": null, "size": 0});
        let entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/v1/widgets",
                Some(&json!({"name": run, "color": color, "size": size})),
                &json!({"id": id, "name": run, "color": color, "size": size}),
            ),
            har::entry(
                ORIGIN,
                "PUT",
                &format!("/v1/widgets/{id}"),
                Some(&json!({"name": "renamed"})),
                &replaced,
            ),
            har::entry(ORIGIN, "GET", &format!("/v1/widgets/{id}"), None, &replaced),
        ];
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_replace_resets_the_fields_its_request_left_out() {
    let t = widgets_twin();
    let server = t.serve(&[]);
    let s = Some("agent");
    let created = server
        .post(
            "/v1/widgets",
            s,
            json!({"name": "mine", "color": "amber", "size": 13}),
        )
        .await;
    created.assert_status(200);
    let id = created.json()["id"].as_str().unwrap().to_string();
    let path = format!("/v1/widgets/{id}");
    let replaced = server
        .send(
            "PUT",
            &path,
            s,
            &[],
            Some(json!({"name": "mine-2", "size": 21})),
        )
        .await;
    replaced.assert_status(200);
    let replaced = replaced.json();
    assert_eq!(replaced["name"], "mine-2", "{replaced}");
    // Sent: the request's value. Left out: the value every recorded replace answered.
    assert_eq!(replaced["size"], 21, "{replaced}");
    assert_eq!(replaced["color"], json!(null), "{replaced}");
    let read = server.get(&path, s).await.json();
    assert_eq!(read["color"], json!(null), "{read}");
    assert_eq!(read["size"], 21, "{read}");
    assert_eq!(read["name"], "mine-2", "{read}");
}
