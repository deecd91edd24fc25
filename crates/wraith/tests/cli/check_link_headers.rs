//! A page answered with a `Link` naming the pages next to it: the check compares the links
//! the twin gives with the recorded ones, in the session's names, and the recordings' own
//! ceiling judges each recorded page with its links. Black-box: the real binary on HARs
//! written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.groups.test";

/// Run `i` creates group `key` (every run sends the same request) and reads its members, a
/// page linking back from its one member under the group's own path: `link(key)`.
fn groups_twin(keys: &[&str], link: impl Fn(&str) -> String) -> Twin {
    let runs = keys
        .iter()
        .map(|key| {
            let group = json!({"id": key, "name": "same"});
            let members = json!([{"id": "m_0001", "name": "ann"}]);
            vec![
                har::entry(
                    ORIGIN,
                    "POST",
                    "/v1/groups",
                    Some(&json!({"name": "same"})),
                    &group,
                ),
                har::with_response_header(
                    har::entry(
                        ORIGIN,
                        "GET",
                        &format!("/v1/groups/{key}/members"),
                        None,
                        &members,
                    ),
                    "Link",
                    &link(key),
                ),
            ]
        })
        .collect();
    har::runs_twin("groups", ORIGIN, runs)
}

fn back_link(key: &str) -> String {
    format!("<{ORIGIN}/v1/groups/{key}/members?since_id=m_0001>; rel=\"prev\"")
}

/// Recordings of one history, each linking its own group's page: a twin answering every
/// session with one run's group and that run's page passes, and the recordings agree.
#[test]
fn pages_each_linking_their_own_records_pass_and_do_not_disagree() {
    let t = groups_twin(&["g_aaa111", "g_bbb222", "g_ccc333", "g_ddd444"], back_link);
    let report = t.check_report();
    assert_eq!(report["score_bp"], 10000, "{}", report["divergences"]);
    assert_eq!(
        report["ceiling"]["score_bp"], 10000,
        "{}",
        report["ceiling"]
    );
    assert_eq!(report["ceiling"]["lost_recordings_disagree"], 0);
}

/// A run whose page links another group than its own (the recording says the API did) is
/// held to that: the twin answering the session's group fails at `headers.link`.
#[test]
fn a_link_naming_another_group_than_the_session_was_given_is_a_divergence() {
    let t = groups_twin(&["g_aaa111", "g_bbb222"], |key| {
        if key == "g_bbb222" {
            back_link("g_zzz999")
        } else {
            back_link(key)
        }
    });
    let report = t.check_report();
    let links: Vec<&Value> = report["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"] == "headers.link")
        .collect();
    assert_eq!(links.len(), 1, "{}", report["divergences"]);
    assert_eq!(links[0]["category"], "value_mismatch");
}
