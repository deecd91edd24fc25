//! `wraith serve` answering a request that several recorded runs answered differently: the
//! answer most runs gave wins, judged by its shape first, since every run minted its own ids.
//! Black-box: the real binary on a twin imported from `testdata/serve/vote-*.har`, three runs
//! that each created the same note as their first request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::json;
use support::Twin;

#[tokio::test]
async fn a_create_three_runs_recorded_answers_with_the_shape_two_of_them_gave() {
    let t = Twin::init("notes", "https://api.notes.test");
    for run in ["a", "b", "c"] {
        let har = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../testdata/serve/vote-{run}.har"));
        let out = Command::new(support::bin())
            .current_dir(t.tmp.path())
            .args(["import", &t.path_str()])
            .arg(&har)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "import failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let s = t.serve(&[]);
    // Run `a` is first in run order, but its note has no tags; `b` and `c` each answered with
    // their own id and one tag: the shape two runs of three gave, from the first of them.
    for session in ["one", "two"] {
        let r = s
            .post("/v1/notes", Some(session), json!({"title": "t"}))
            .await;
        assert_eq!(r.status, 201);
        assert_eq!(r.provenance(), Some("recorded"));
        let body = r.json();
        assert_eq!(body["tags"], json!(["x"]), "{body}");
        assert_eq!(body["title"], "t");
    }
}
