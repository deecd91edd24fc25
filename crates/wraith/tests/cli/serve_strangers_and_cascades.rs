//! Who made a record decides two answers: a principal reading a record another principal
//! created gets the refusal the recordings answered strangers (`Guard::ForeignRecord`) while
//! its creator reads it, and a refusal before the owner's read is not taken for a resource
//! becoming ready; a delete takes the records created under its record's path with it
//! (`Route::cascades`). Black-box: the real binary on a widgets twin built from HARs written
//! here, each a fresh-store session with two users.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::Twin;
use support::har::{self, by};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "strangers-test-key");
const ORIGIN: &str = "https://api.widgets.test";
const ALICE: &str = "Bearer alice-token-1111";
const BOB: &str = "Bearer bob-token-2222";

/// Recorded session `n`: alice makes a widget and a part under it; bob is refused both
/// (403) around alice's reads of them; alice deletes the widget, and its part is gone too.
fn record(t: &Twin, n: u64) {
    let w = format!("wid_{n:02}Kq9Lm2Rt7x");
    let p = format!("prt_{n:02}Tq3Wn8Ke4z");
    let widget = json!({"id": w, "name": format!("widget {n}")});
    let part = json!({"id": p, "widget_id": w, "label": "bolt"});
    let forbidden = json!({"error": "forbidden"});
    let missing = json!({"error": "not_found"});
    let get = |path: &str, answer: &Value| har::entry(ORIGIN, "GET", path, None, answer);
    let wpath = format!("/v1/widgets/{w}");
    let ppath = format!("/v1/parts/{p}");
    let mut entries = vec![
        by(
            ALICE,
            201,
            har::entry(
                ORIGIN,
                "POST",
                "/v1/widgets",
                Some(&json!({"name": format!("widget {n}")})),
                &widget,
            ),
        ),
        by(
            ALICE,
            201,
            har::entry(
                ORIGIN,
                "POST",
                &format!("{wpath}/parts"),
                Some(&json!({"label": "bolt"})),
                &part,
            ),
        ),
        by(
            ALICE,
            200,
            get(&format!("{wpath}/parts"), &json!({"data": [part]})),
        ),
    ];
    // Half the sessions ask as bob first, half as alice first.
    let reads = [
        by(BOB, 403, get(&wpath, &forbidden)),
        by(ALICE, 200, get(&wpath, &widget)),
        by(BOB, 403, get(&ppath, &forbidden)),
        by(ALICE, 200, get(&ppath, &part)),
    ];
    if n.is_multiple_of(2) {
        entries.extend(reads);
    } else {
        entries.extend([&reads[1], &reads[0], &reads[3], &reads[2]].map(Clone::clone));
    }
    entries.push(by(
        ALICE,
        204,
        har::entry(ORIGIN, "DELETE", &wpath, None, &json!({})),
    ));
    entries.push(by(ALICE, 404, get(&ppath, &missing)));
    entries.push(by(ALICE, 404, get(&wpath, &missing)));
    har::import(t, &[KEY], &format!("session-{n}.har"), entries);
}

fn twin() -> Twin {
    har::synth_twin("widgets", ORIGIN, &[KEY], 4, record)
}

#[tokio::test]
async fn a_stranger_reading_anothers_record_gets_the_recorded_refusal_and_the_owner_the_record() {
    let t = twin();
    let s = t.serve_env(&[], &[KEY]);
    let as_user = |user: &'static str| [("Authorization", user)];
    let made = s
        .send(
            "POST",
            "/v1/widgets",
            Some("x"),
            &as_user(ALICE),
            Some(json!({"name": "mine"})),
        )
        .await;
    made.assert_status(201);
    let w = made.json()["id"].as_str().unwrap().to_string();
    let part = s
        .send(
            "POST",
            &format!("/v1/widgets/{w}/parts"),
            Some("x"),
            &as_user(ALICE),
            Some(json!({"label": "nut"})),
        )
        .await;
    part.assert_status(201);
    let p = part.json()["id"].as_str().unwrap().to_string();

    // The owner's first read is the record (a refusal recorded before it was bob's, not a
    // resource still getting ready); bob is refused, whichever asks first.
    let own = s
        .send(
            "GET",
            &format!("/v1/parts/{p}"),
            Some("x"),
            &as_user(ALICE),
            None,
        )
        .await;
    own.assert_status(200);
    assert_eq!(own.json()["label"], json!("nut"));
    let strange = s
        .send(
            "GET",
            &format!("/v1/parts/{p}"),
            Some("x"),
            &as_user(BOB),
            None,
        )
        .await;
    strange.assert_status(403);
    assert_eq!(strange.json(), json!({"error": "forbidden"}));
    s.send(
        "GET",
        &format!("/v1/widgets/{w}"),
        Some("x"),
        &as_user(BOB),
        None,
    )
    .await
    .assert_status(403);
    let own = s
        .send(
            "GET",
            &format!("/v1/widgets/{w}"),
            Some("x"),
            &as_user(ALICE),
            None,
        )
        .await;
    own.assert_status(200);
    assert_eq!(own.json()["name"], json!("mine"));
}

#[tokio::test]
async fn deleting_a_record_deletes_the_records_created_under_its_path() {
    let t = twin();
    let model: Value = serde_json::from_str(
        &std::fs::read_to_string(t.path().join("model/twin.wir.json")).unwrap(),
    )
    .unwrap();
    let delete = model["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["method"] == "DELETE" && r["path"] == "/v1/widgets/:param")
        .unwrap();
    assert_eq!(
        delete["cascades"],
        json!([{"entity_type": "parts", "parent_at": 0}])
    );

    let s = t.serve_env(&[], &[KEY]);
    let alice = [("Authorization", ALICE)];
    let mut parts = Vec::new();
    let mut widgets = Vec::new();
    for name in ["doomed", "kept"] {
        let w = s
            .send(
                "POST",
                "/v1/widgets",
                Some("c"),
                &alice,
                Some(json!({"name": name})),
            )
            .await
            .json()["id"]
            .as_str()
            .unwrap()
            .to_string();
        let p = s
            .send(
                "POST",
                &format!("/v1/widgets/{w}/parts"),
                Some("c"),
                &alice,
                Some(json!({"label": name})),
            )
            .await
            .json()["id"]
            .as_str()
            .unwrap()
            .to_string();
        widgets.push(w);
        parts.push(p);
    }
    s.send(
        "DELETE",
        &format!("/v1/widgets/{}", widgets[0]),
        Some("c"),
        &alice,
        None,
    )
    .await
    .assert_status(204);
    let gone = s
        .send(
            "GET",
            &format!("/v1/parts/{}", parts[0]),
            Some("c"),
            &alice,
            None,
        )
        .await;
    gone.assert_status(404);
    assert_eq!(gone.json(), json!({"error": "not_found"}));
    // The other widget's part stays.
    let kept = s
        .send(
            "GET",
            &format!("/v1/parts/{}", parts[1]),
            Some("c"),
            &alice,
            None,
        )
        .await;
    kept.assert_status(200);
    assert_eq!(kept.json()["label"], json!("kept"));
}
