//! `GET /__wraith/trace/{id}` under `--debug --trace`: the per-field origin map of that
//! response (`origins`), absent without `--debug` and after a partial fault cut the body.
//! Black-box: the real binary on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::model;
use support::{Server, Twin};

fn shop() -> Twin {
    let t = Twin::init("shop", "https://api.shop.test");
    t.write_model(&model::shop("shop"));
    t
}

/// The newest trace entry, fetched by its id.
async fn newest_entry(s: &Server) -> Value {
    let log = s.get("/__wraith/trace/log?last=1", None).await;
    assert_eq!(log.status, 200);
    let id = log.json()["entries"][0]["id"].as_u64().expect("an entry");
    let r = s.get(&format!("/__wraith/trace/{id}"), None).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

#[tokio::test]
async fn debug_trace_entry_maps_every_field_of_a_create_to_its_origin() {
    let t = shop();
    let s = t.serve(&["--debug", "--trace"]);
    let r = s
        .post("/v1/customers", Some("o1"), json!({"name": "Ann"}))
        .await;
    assert_eq!(r.status, 200);
    let counts = r.header("x-wraith-provenance-counts").unwrap().to_string();
    let e = newest_entry(&s).await;
    let origins = &e["origins"];
    assert_eq!(origins["/id"], "generated", "{e}");
    assert_eq!(origins["/name"], "echo", "{e}");
    assert_eq!(origins["/object"], "constant", "{e}");
    assert_eq!(origins["/created"], "clock", "{e}");
    // The header counts the same map: constants are recorded values, the rest template.
    assert_eq!(counts, "recorded=1 template=3 fixture=0 handler=0");
    assert_eq!(
        e["field_counts"],
        json!({"recorded": 1, "template": 3, "fixture": 0, "handler": 0})
    );

    // A recorded moment: every field is recorded.
    s.get("/v1/customers/cus_1", Some("o2")).await;
    let e = newest_entry(&s).await;
    let origins = e["origins"].as_object().expect("origins object");
    assert!(!origins.is_empty(), "{e}");
    assert!(origins.values().all(|w| w == "recorded"), "{e}");
}

#[tokio::test]
async fn without_debug_trace_entries_carry_no_origins() {
    let t = shop();
    let s = t.serve(&["--trace"]);
    s.post("/v1/customers", None, json!({"name": "Ann"})).await;
    let e = newest_entry(&s).await;
    assert!(e.get("origins").is_none(), "{e}");
    assert!(e.get("field_counts").is_none(), "{e}");
}

#[tokio::test]
async fn a_partial_fault_that_cut_the_body_leaves_no_origins_in_the_trace() {
    let t = shop();
    t.write(
        "faults.toml",
        "[[rules]]\nroute = \"GET /v1/customers/:id\"\n[rules.fault_type]\ntype = \"partial\"\nbytes = 7\n",
    );
    let profile = t.path().join("faults.toml");
    let s = t.serve(&[
        "--debug",
        "--trace",
        "--fault-profile",
        profile.to_str().unwrap(),
    ]);
    let r = s.get("/v1/customers/cus_1", None).await;
    assert_eq!(r.body.len(), 7);
    let e = newest_entry(&s).await;
    assert_eq!(e["fault"], "partial", "{e}");
    assert!(e.get("origins").is_none(), "{e}");
    assert!(e.get("field_counts").is_none(), "{e}");
    // An uncut answer of another route in the same run still carries its map.
    s.post("/v1/customers", None, json!({"name": "Ann"})).await;
    assert!(newest_entry(&s).await["origins"].is_object());
}
