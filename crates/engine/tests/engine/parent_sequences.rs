//! Fields counted within each parent (`Route::parent_sequences`) and paths naming a record by
//! one (`EntityType::alternate_key`), through the engine: an issue's `number` counts from 1 in
//! its repository, whatever the session does under other repositories or in other sessions,
//! and `/repos/:repo/issues/:n` finds the repository's `n`-th issue.

use crate::support;

use proptest::prelude::*;
use serde_json::json;
use support::*;
use wraith_model::*;

/// Open issues under `/repos/:repo/issues` (an integer `id` minted above `above`, the
/// `number` counted per repository, the sent `title`), read one at `/repos/:repo/issues/:n`.
fn issues(above: u64) -> wraith_engine::Engine {
    let number = hole(HoleKind::Observed, JsonType::Number, vec![json!(1)]);
    let mut create = R::new("POST", "/repos/:repo/issues")
        .op(StateOp::Create, "issues")
        .parent("repo", "repos")
        .variant(
            201,
            Guard::Always,
            obj(vec![
                (
                    "id",
                    hole(
                        HoleKind::Generated {
                            shape: IdShape::Integer {
                                above,
                                as_string: false,
                            },
                        },
                        JsonType::Number,
                        vec![json!(1)],
                    ),
                ),
                ("number", number.clone()),
                ("title", echo_body("/title", JsonType::String)),
            ]),
        )
        .build();
    create.parent_sequences = vec!["number".to_string()];
    let read = R::new("GET", "/repos/:repo/issues/:n")
        .op(StateOp::Read, "issues")
        .parent("repo", "repos")
        .variant(
            404,
            member(false),
            obj(vec![("message", c(json!("Not Found")))]),
        )
        .variant(
            200,
            Guard::Always,
            obj(vec![
                ("id", echo_path("n")),
                ("number", number),
                ("title", c(json!("recorded"))),
            ]),
        )
        .build();
    let mut ty = entity_type(&[], &[], Vec::new());
    ty.id_shape = Some(IdShape::Integer {
        above,
        as_string: false,
    });
    ty.alternate_key = Some("number".to_string());
    engine(model(vec![create, read], vec![("issues", ty)]), det_opts())
}

fn open(e: &wraith_engine::Engine, s: &str, repo: &str, title: &str) -> serde_json::Value {
    let r = send(
        e,
        Some(s),
        "POST",
        &format!("/repos/{repo}/issues"),
        json!({"title": title}),
    );
    assert_eq!(r.status, 201);
    body(&r)
}

#[test]
fn a_count_under_the_paths_parent_names_its_record_before_a_key_equal_to_it() {
    // Ids from 1: web's first issue is `id` 1, docs' first and second are `id` 2 and 3.
    let e = issues(0);
    let ids: Vec<serde_json::Value> = [("web", "one"), ("docs", "two"), ("docs", "three")]
        .iter()
        .map(|(repo, title)| open(&e, "s", repo, title)["id"].clone())
        .collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3)]);
    let title = |path: &str| body(&get(&e, Some("s"), path))["title"].clone();
    // docs' number 2 is its second issue, not the issue whose `id` is 2.
    assert_eq!(title("/repos/docs/issues/2"), "three");
    // A value no issue there is counted with names the record whose key it is.
    assert_eq!(title("/repos/docs/issues/3"), "three");
    assert_eq!(title("/repos/web/issues/1"), "one");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// However creates interleave across repositories and sessions, each repository's issues in
    /// each session are numbered 1, 2, 3… in the order opened, and each number reads back the
    /// issue that got it.
    #[test]
    fn each_repository_counts_its_own_issues_in_each_session(
        opens in prop::collection::vec((0usize..2, 0usize..3), 1..20)
    ) {
        let e = issues(100);
        let repos = ["web", "api", "docs"];
        let sessions = ["left", "right"];
        let mut counts = [[0u64; 3]; 2];
        let mut titles = Vec::new();
        for (k, (s, r)) in opens.iter().enumerate() {
            let title = format!("t{k}");
            let answer = open(&e, sessions[*s], repos[*r], &title);
            counts[*s][*r] += 1;
            prop_assert_eq!(&answer["number"], &json!(counts[*s][*r]));
            titles.push((*s, *r, counts[*s][*r], title));
        }
        for (s, r, n, title) in titles {
            let read = get(&e, Some(sessions[s]), &format!("/repos/{}/issues/{n}", repos[r]));
            prop_assert_eq!(read.status, 200);
            prop_assert_eq!(&body(&read)["title"], &json!(title));
        }
    }
}
