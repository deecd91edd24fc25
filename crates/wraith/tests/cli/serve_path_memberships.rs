//! `wraith serve` adding a record to a list by a bodiless write on a path naming it
//! (`PUT /user/starred/:owner/:name` answered `204`, then `GET /user/starred` lists the
//! repository) and removing it by `DELETE` on the same path. Synth plans such a write as an
//! update of a type no route creates; it keeps nothing, so its member effects are learned as
//! for a write with no state operation. Black-box: the real binary on HAR runs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.stars.test";

fn repo(id: u64, name: &str) -> Value {
    json!({"id": id, "name": name, "full_name": format!("alice/{name}"), "owner": {"login": "alice"}})
}

/// Three runs, each creating two repositories, reading one by its name, starring it, listing
/// the stars, unstarring it (`unstars` times in a row) and listing them again; with `probes`,
/// asking whether the repository is starred (`GET` on the star's path: `404`, then `204`)
/// before and after the star.
fn stars_twin(probes: bool, unstars: usize) -> Twin {
    let t = Twin::init("stars", ORIGIN);
    for (run, id, name, other) in [
        ("a", 11, "amber-compass", "dusty-ledger"),
        ("b", 21, "frozen-quill", "tidy-otter"),
        ("c", 31, "ivory-falcon", "proud-harbor"),
    ] {
        let star = format!("/user/starred/alice/{name}");
        let mut entries = vec![
            har::entry(
                ORIGIN,
                "POST",
                "/repos",
                Some(&json!({"name": name})),
                &repo(id, name),
            ),
            har::entry(
                ORIGIN,
                "POST",
                "/repos",
                Some(&json!({"name": other})),
                &repo(id + 1, other),
            ),
            har::entry(
                ORIGIN,
                "GET",
                &format!("/repos/alice/{name}"),
                None,
                &repo(id, name),
            ),
            har::no_content(har::entry(ORIGIN, "PUT", &star, None, &json!({}))),
            har::entry(
                ORIGIN,
                "GET",
                "/user/starred",
                None,
                &json!([repo(id, name)]),
            ),
        ];
        let unstar = har::no_content(har::entry(ORIGIN, "DELETE", &star, None, &json!({})));
        entries.extend(std::iter::repeat_n(unstar, unstars));
        entries.push(har::entry(ORIGIN, "GET", "/user/starred", None, &json!([])));
        if probes {
            let mut unstarred = har::entry(ORIGIN, "GET", &star, None, &json!({"message": "x"}));
            unstarred["response"]["status"] = json!(404);
            let starred = har::no_content(har::entry(ORIGIN, "GET", &star, None, &json!({})));
            entries.insert(4, starred);
            entries.insert(3, unstarred);
        }
        har::import(&t, &[], &format!("{run}.har"), entries);
    }
    har::synth(&t, &[]);
    t
}

#[tokio::test]
async fn a_bodiless_put_on_a_path_naming_a_record_adds_it_to_the_list_and_delete_removes_it() {
    star_list_and_unstar(stars_twin(false, 1)).await;
}

#[tokio::test]
async fn an_unstar_recorded_twice_in_a_row_still_removes_the_record() {
    // No list read sits between the two recorded unstars: their effect shows across both.
    star_list_and_unstar(stars_twin(false, 2)).await;
}

/// In a session of `t` served, star a new repository, list the stars, unstar it, list again.
async fn star_list_and_unstar(t: Twin) {
    let server = t.serve(&[]);
    let s = Some("agent");
    for name in ["new-harbor", "old-harbor"] {
        server
            .post("/repos", s, json!({"name": name}))
            .await
            .assert_status(200);
    }
    let path = "/user/starred/alice/new-harbor";
    server
        .send("PUT", path, s, &[], None)
        .await
        .assert_status(204);
    let listed = server.get("/user/starred", s).await;
    listed.assert_status(200);
    assert_eq!(har::names(&listed), ["new-harbor"], "{}", listed.json());
    server.delete(path, s).await.assert_status(204);
    let listed = server.get("/user/starred", s).await;
    assert_eq!(
        har::names(&listed),
        Vec::<String>::new(),
        "{}",
        listed.json()
    );
}

/// The probed stars twin, served, with session `agent`'s new repository `new-harbor`.
async fn serving_a_new_repository() -> (Twin, support::Server) {
    let t = stars_twin(true, 1);
    let server = t.serve(&[]);
    server
        .post("/repos", Some("agent"), json!({"name": "new-harbor"}))
        .await
        .assert_status(200);
    (t, server)
}

#[tokio::test]
async fn a_read_on_the_path_of_a_bodiless_put_answers_whether_the_session_added_the_record() {
    let (_twin, server) = serving_a_new_repository().await;
    let (s, path) = (Some("agent"), "/user/starred/alice/new-harbor");
    server.get(path, s).await.assert_status(404);
    server
        .send("PUT", path, s, &[], None)
        .await
        .assert_status(204);
    server.get(path, s).await.assert_status(204);
    server.delete(path, s).await.assert_status(204);
    server.get(path, s).await.assert_status(404);
}

#[tokio::test]
async fn a_record_another_principal_added_is_no_member_for_this_one() {
    let (_twin, server) = serving_a_new_repository().await;
    let (s, path) = (Some("agent"), "/user/starred/alice/new-harbor");
    let bob = [("authorization", "token bob-token")];
    let carol = [("authorization", "token carol-token")];
    server
        .send("PUT", path, s, &bob, None)
        .await
        .assert_status(204);
    server
        .send("GET", path, s, &bob, None)
        .await
        .assert_status(204);
    server
        .send("GET", path, s, &carol, None)
        .await
        .assert_status(404);
}

#[tokio::test]
async fn a_list_without_path_parameters_is_each_principals_own() {
    let (_twin, server) = serving_a_new_repository().await;
    let (s, path) = (Some("agent"), "/user/starred/alice/new-harbor");
    const BOB: &[(&str, &str)] = &[("authorization", "token bob-token")];
    const CAROL: &[(&str, &str)] = &[("authorization", "token carol-token")];
    let stars = |who: &'static [(&'static str, &'static str)]| {
        let server = &server;
        async move {
            let listed = server.send("GET", "/user/starred", s, who, None).await;
            listed.assert_status(200);
            har::names(&listed)
        }
    };
    server
        .send("PUT", path, s, BOB, None)
        .await
        .assert_status(204);
    assert_eq!(stars(BOB).await, ["new-harbor"]);
    assert_eq!(stars(CAROL).await, Vec::<String>::new());
    server
        .send("PUT", path, s, CAROL, None)
        .await
        .assert_status(204);
    // bob takes his star back; carol's still holds the repository in her list.
    server
        .send("DELETE", path, s, BOB, None)
        .await
        .assert_status(204);
    assert_eq!(stars(BOB).await, Vec::<String>::new());
    assert_eq!(stars(CAROL).await, ["new-harbor"]);
}
