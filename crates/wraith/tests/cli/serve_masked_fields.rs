//! Masked fields end to end: every recorded create of a device answered a freshly minted
//! pairing `pin`, and every recorded listing showed each device's pin as `"****"`. Synth learns
//! the create's minted pin and the list's constant from imported HARs; the served twin lists a
//! device the session just created with `"****"`, not the pin its create answered, and with the
//! label it was sent. Black-box: the real binary on HARs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Twin, har};

const KEY: (&str, &str) = ("WRAITH_HMAC_KEY", "masked-fields-test-key");
const ORIGIN: &str = "https://api.devices.test";

/// Six recorded sessions: create a device, then list the devices (the lab's own device and
/// the session's), each device's `field` answered as its pin by the create and as `listed` by
/// every listing.
fn devices_twin_with(field: &str, listed: &str) -> Twin {
    let t = Twin::init("devices", ORIGIN);
    let pins = [
        "4f1c9a2b7e3d",
        "9b2e7c1d4a6f",
        "1d4a6f9b2e7c",
        "7e3d4f1c9a2b",
        "2b7e3d4f1c9a",
        "6f9b2e7c1d4a",
    ];
    for (i, pin) in pins.iter().enumerate() {
        let id = 5100 + 17 * i;
        let label = format!("device-{i}");
        let sent = json!({"label": label});
        let created = json!({"id": id, "label": label, field: pin});
        // The lab's own device, there before any recording, is listed beside it.
        let listed = json!({"data": [
            {"id": 5000, "label": "lab", field: listed},
            {"id": id, "label": label, field: listed},
        ], "results": 2});
        har::import(
            &t,
            &[KEY],
            &format!("s{i}.har"),
            vec![
                har::entry(ORIGIN, "POST", "/v1/devices", Some(&sent), &created),
                har::entry(ORIGIN, "GET", "/v1/devices", None, &listed),
            ],
        );
    }
    har::synth(&t, &[KEY]);
    t
}

fn devices_twin() -> Twin {
    devices_twin_with("pin", "****")
}

#[tokio::test]
async fn a_served_list_shows_the_session_record_with_the_constant_every_listing_masked_its_minted_field_with()
 {
    let t = devices_twin();
    let server = t.serve_env(&[], &[KEY]);
    let created = server
        .post("/v1/devices", Some("agent"), json!({"label": "brand-new"}))
        .await;
    created.assert_status(200);
    let created = created.json();
    assert_ne!(created["pin"], json!("****"), "{created}");
    let page = server.get("/v1/devices", Some("agent")).await;
    assert_eq!(page.status, 200);
    let page = page.json();
    let mine = page["data"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["id"] == created["id"]))
        .unwrap_or_else(|| panic!("the session's device is listed: {page}"));
    assert_eq!(mine["pin"], json!("****"), "{page}");
    assert_eq!(mine["label"], json!("brand-new"), "{page}");
}

#[tokio::test]
async fn a_served_list_masks_a_secret_the_recordings_hold_scrubbed() {
    // Import scrubs every `secret` (each create's to a token of its own, the listings'
    // `<REDACTED>` to one token), so synth holds the creates' secrets as recorded values, not
    // minted ones; none of them is the listed token, so the list still masks.
    let t = devices_twin_with("secret", "<REDACTED>");
    let server = t.serve_env(&[], &[KEY]);
    let recorded = server.get("/v1/devices", Some("reader")).await.json();
    let masked = recorded["data"][0]["secret"].clone();
    assert!(masked.is_string(), "{recorded}");
    let created = server
        .post("/v1/devices", Some("agent"), json!({"label": "brand-new"}))
        .await;
    created.assert_status(200);
    let created = created.json();
    assert_ne!(created["secret"], masked, "{created}");
    let page = server.get("/v1/devices", Some("agent")).await.json();
    let mine = page["data"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["id"] == created["id"]))
        .unwrap_or_else(|| panic!("the session's device is listed: {page}"));
    assert_eq!(mine["secret"], masked, "{page}");
}
