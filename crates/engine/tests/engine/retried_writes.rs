//! Retried writes: recorded runs that sent one write several times as the identical request
//! and were refused until it was accepted (a migration answered 400 "busy" twice, then 200)
//! are a status series, as polled reads are: an unrecorded URL of the route answers the
//! median series, counted per URL and body. When some recorded run had the write accepted at
//! its first attempt, the refusals were that run's circumstance and no series applies.

use crate::support;

use serde_json::json;
use support::*;
use wraith_engine::Engine;
use wraith_model::*;

fn moments(run: &str, statuses: &[u16]) -> Vec<Moment> {
    statuses
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let body = if *st == 200 {
                json!({})
            } else {
                json!({"errors": [{"reason": "busy"}]})
            };
            moment(&format!("{run}/{i}"), *st, body)
        })
        .collect()
}

/// `POST /v1/servers/:id/migrate`, recorded by `runs` (URL id, statuses in order).
fn migrate_engine(runs: &[(u32, &[u16])]) -> Engine {
    let mut route = R::new("POST", "/v1/servers/:id/migrate")
        .variant(200, Guard::Always, obj(vec![]))
        .variant(
            400,
            Guard::Always,
            obj(vec![("errors", c(json!([{"reason": "busy"}])))]),
        );
    for (i, (id, statuses)) in runs.iter().enumerate() {
        let sent = json!({"region": format!("recorded-{i}")});
        route = route.exact(
            &format!("/v1/servers/{id}/migrate"),
            "",
            Some(&sent),
            moments(&format!("run{i}"), statuses),
        );
    }
    engine(model(vec![route.build()], vec![]), det_opts())
}

fn migrate(e: &Engine, session: &str, id: u32, region: &str) -> u16 {
    send(
        e,
        Some(session),
        "POST",
        &format!("/v1/servers/{id}/migrate"),
        json!({"region": region}),
    )
    .status
}

#[test]
fn a_write_every_run_retried_until_accepted_follows_the_recorded_status_series() {
    let e = migrate_engine(&[(1, &[400, 400, 200]), (2, &[400, 200])]);
    let statuses: Vec<u16> = (0..3).map(|_| migrate(&e, "s", 9, "west")).collect();
    // The median series by length: [400, 200] (the shorter of two), its last once past it.
    assert_eq!(statuses, vec![400, 200, 200]);
    // Another body to the same URL is another request; another namespace starts over.
    assert_eq!(migrate(&e, "s", 9, "east"), 400);
    assert_eq!(migrate(&e, "t", 9, "west"), 400);
}

#[test]
fn a_write_some_run_had_accepted_at_once_is_no_series() {
    let e = migrate_engine(&[(1, &[400, 400, 200]), (2, &[200])]);
    for _ in 0..3 {
        assert_eq!(migrate(&e, "s", 9, "west"), 200);
    }
}
