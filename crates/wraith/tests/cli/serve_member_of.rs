//! `wraith serve` answering a list of the records whose member list holds the record its path
//! names (`Route::member_of`): `GET /api/accounts/:id/lists` lists the lists the session's
//! `POST /api/lists/:id/accounts` put the account in, as the session holds them, where the
//! twin used to replay the lists a recorded run had made (`synth/src/member_of.rs`).
//! Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://social.test";

fn account(id: &str) -> Value {
    json!({"id": id, "username": format!("user{id}")})
}

/// Two runs: each makes a list, adds an account to it, reads the list's members and the
/// account's lists; the second also takes the account out again and reads its lists empty.
/// `foreign`: the first run's read of the account's lists also listed a list no membership
/// write of its session named.
fn lists_twin(foreign: bool) -> Twin {
    let t = Twin::init("lists", ORIGIN);
    for (run, (list, member)) in [("4", "501"), ("9", "502")].into_iter().enumerate() {
        let title = format!("list {run}");
        let record = json!({"id": list, "title": title});
        let mut entries = vec![
            har::entry(
                ORIGIN,
                "GET",
                &format!("/api/accounts/{member}"),
                None,
                &account(member),
            ),
            har::entry(
                ORIGIN,
                "POST",
                "/api/lists",
                Some(&json!({"title": title})),
                &record,
            ),
            har::entry(ORIGIN, "GET", &format!("/api/lists/{list}"), None, &record),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/api/lists/{list}/accounts"),
                None,
                &json!([]),
            ),
            har::entry(
                ORIGIN,
                "POST",
                &format!("/api/lists/{list}/accounts"),
                Some(&json!({"account_ids": [member]})),
                &json!({}),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/api/lists/{list}/accounts"),
                None,
                &json!([account(member)]),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/api/accounts/{member}/lists"),
                None,
                &if foreign && run == 0 {
                    json!([record, {"id": "77", "title": "made elsewhere"}])
                } else {
                    json!([record])
                },
            ),
        ];
        if run == 1 {
            entries.push(har::entry(
                ORIGIN,
                "DELETE",
                &format!("/api/lists/{list}/accounts"),
                Some(&json!({"account_ids": [member]})),
                &json!({}),
            ));
            entries.push(har::entry(
                ORIGIN,
                "GET",
                &format!("/api/lists/{list}/accounts"),
                None,
                &json!([]),
            ));
            entries.push(har::entry(
                ORIGIN,
                "GET",
                &format!("/api/accounts/{member}/lists"),
                None,
                &json!([]),
            ));
        }
        har::import(&t, &[], &format!("run{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn an_accounts_lists_are_the_session_lists_its_membership_writes_put_it_in() {
    let t = lists_twin(false);
    let route = har::model_route(&t, "GET", "/api/accounts/:param/lists");
    assert_eq!(
        route["member_of"],
        json!({"list_path": "/api/lists/:param/accounts"}),
        "{route}"
    );
    let server = t.serve(&[]);
    let mut made = Vec::new();
    for title in ["mine", "other"] {
        let r = server
            .post("/api/lists", Some("s1"), json!({"title": title}))
            .await;
        r.assert_status(200);
        made.push(r.json()["id"].as_str().unwrap().to_string());
    }
    for (list, member) in [(&made[0], "502"), (&made[1], "502"), (&made[1], "501")] {
        server
            .post(
                &format!("/api/lists/{list}/accounts"),
                Some("s1"),
                json!({"account_ids": [member]}),
            )
            .await
            .assert_status(200);
    }
    let lists = server.get("/api/accounts/502/lists", Some("s1")).await;
    lists.assert_status(200);
    assert_eq!(support::item_ids(&lists.json()), made, "{}", lists.json());
    assert_eq!(lists.json()[0]["title"], "mine", "{}", lists.json());
    let lists = server.get("/api/accounts/501/lists", Some("s1")).await;
    assert_eq!(
        support::item_ids(&lists.json()),
        [made[1].clone()],
        "{}",
        lists.json()
    );
    // Taken out of a list, the account is no longer listed in it.
    server
        .send(
            "DELETE",
            &format!("/api/lists/{}/accounts", made[0]),
            Some("s1"),
            &[],
            Some(json!({"account_ids": ["502"]})),
        )
        .await
        .assert_status(200);
    let lists = server.get("/api/accounts/502/lists", Some("s1")).await;
    assert_eq!(
        support::item_ids(&lists.json()),
        [made[1].clone()],
        "{}",
        lists.json()
    );
}

#[tokio::test]
async fn a_recorded_answer_listing_a_list_no_membership_write_named_learns_nothing() {
    let t = lists_twin(true);
    let route = har::model_route(&t, "GET", "/api/accounts/:param/lists");
    assert!(route["member_of"].is_null(), "{route}");
}
