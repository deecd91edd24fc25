//! `Engine::probe_handler`: what the handler bound to a recorded route would answer, without
//! changing the session (what `wraith check` judges on requests exact replay answers).

use crate::support;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;
use support::*;
use wraith_engine::{
    Engine, Handler, HandlerBody, HandlerEnv, HandlerError, HandlerRequest, HandlerResponse,
    Provenance, Scripts,
};

/// Writes the entity it reads and counts its calls: any leak of a probe into the session shows.
struct Counting;

impl Handler for Counting {
    fn call(
        &self,
        req: &HandlerRequest<'_>,
        env: &mut dyn HandlerEnv,
    ) -> Result<HandlerResponse, HandlerError> {
        let id = req.path.rsplit('/').next().unwrap_or_default().to_string();
        let n = env.counter("calls");
        env.put("customers", &id, &json!({"probed": true}))?;
        Ok(HandlerResponse {
            status: 200,
            headers: Vec::new(),
            body: HandlerBody::Json(json!({"Id": id, "calls": n})),
        })
    }
}

fn with_handler() -> Engine {
    let mut e = shop();
    assert!(!e.has_recorded_route_handlers());
    let mut handlers: BTreeMap<String, Arc<dyn Handler>> = BTreeMap::new();
    handlers.insert("get_customer".to_string(), Arc::new(Counting));
    if let Err(err) = e.install_scripts(Scripts {
        handlers,
        ..Scripts::default()
    }) {
        panic!("install: {err}");
    }
    assert!(e.has_recorded_route_handlers());
    e
}

#[test]
fn a_probe_answers_from_the_handler_where_exact_replay_serves_the_recording() {
    let e = with_handler();
    let s = Some("probe");
    let probed = match e
        .probe_handler(s, &req("GET", "/v1/customers/cus_1", None))
        .expect("the session is under the namespace cap")
    {
        Some(r) => r,
        None => panic!("a handler is bound to GET /v1/customers/:id"),
    };
    assert_eq!(probed.provenance, Provenance::Handler);
    assert_eq!(body(&probed), json!({"Id": "cus_1", "calls": 1}));
    assert_eq!(probed.route.as_deref(), Some("GET /v1/customers/:id"));
    // Served, the exact recorded URL is still the recording.
    let served = get(&e, s, "/v1/customers/cus_1");
    assert_eq!(served.provenance, Provenance::Recorded);
    // No handler on the list route: nothing to probe.
    assert!(
        e.probe_handler(s, &req("GET", "/v1/customers", None))
            .expect("the session is under the namespace cap")
            .is_none()
    );
}

#[test]
fn a_probe_leaves_the_session_unchanged() {
    let e = with_handler();
    let s = Some("probe");
    for _ in 0..2 {
        let r = e
            .probe_handler(s, &req("GET", "/v1/customers/cus_new", None))
            .expect("the session is under the namespace cap");
        // The counter and the write of the probe are discarded each time.
        assert_eq!(
            r.map(|r| body(&r)),
            Some(json!({"Id": "cus_new", "calls": 1}))
        );
    }
    // The first real handler run of the session sees no earlier call.
    let served = get(&e, s, "/v1/customers/cus_new");
    assert_eq!(served.provenance, Provenance::Handler);
    assert_eq!(body(&served), json!({"Id": "cus_new", "calls": 1}));
}

#[test]
fn a_head_probe_runs_the_get_routes_handler_and_answers_without_a_body() {
    let e = with_handler();
    let probed = e
        .probe_handler(Some("probe"), &req("HEAD", "/v1/customers/cus_9", None))
        .expect("the session is under the namespace cap")
        .expect("a served HEAD of that path runs the GET route's handler");
    assert_eq!(probed.provenance, Provenance::Handler);
    assert_eq!(probed.route.as_deref(), Some("GET /v1/customers/:id"));
    assert!(probed.body.is_empty());
}
