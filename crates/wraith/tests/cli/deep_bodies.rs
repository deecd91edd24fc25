//! A recorded body nested a hundred levels deep (a comment thread, a tree) is well within what
//! a JSON parser reads, but its body template nests several model levels per body level: the
//! model synth writes for it must load in every command, and serve must answer it. Black-box:
//! the real binary on a HAR written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::{Twin, har};

const ORIGIN: &str = "https://api.trees.test";

/// `{"child": {"child": … {"leaf": depth} … }}`, `depth` objects deep.
fn nested(depth: usize) -> Value {
    let mut v = json!({"leaf": depth});
    for _ in 1..depth {
        v = json!({"child": v});
    }
    v
}

fn deep_twin() -> Twin {
    let t = Twin::init("trees", ORIGIN);
    let entries = vec![
        har::entry(ORIGIN, "GET", "/v1/trees/t_1", None, &nested(100)),
        har::entry(ORIGIN, "GET", "/v1/trees/t_2", None, &nested(100)),
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

#[test]
fn a_model_of_deeply_nested_bodies_loads_in_check_lint_and_inspect() {
    let t = deep_twin();
    let twin = t.path_str();
    for args in [
        vec!["check", twin.as_str()],
        vec!["lint", twin.as_str()],
        vec!["inspect", twin.as_str(), "--provenance"],
        vec!["coverage", twin.as_str()],
    ] {
        let out = t.wraith(&args);
        assert!(
            out.status.success(),
            "wraith {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[tokio::test]
async fn serve_answers_a_deeply_nested_recorded_body() {
    let t = deep_twin();
    let server = t.serve(&[]);
    let r = server.get("/v1/trees/t_1", Some("s")).await;
    r.assert_status(200);
    assert_eq!(r.json(), nested(100));
}

/// A form field name of ten thousand brackets (about 30 KB, well under the body cap) once
/// nested the parsed body that deep and overflowed a worker's stack, aborting the whole twin.
/// Form and multipart names now nest no deeper than Rack's limit; the server keeps answering.
#[tokio::test]
async fn a_form_field_name_nested_thousands_deep_does_not_take_the_twin_down() {
    let t = support::example_shop_twin();
    let server = t.serve(&[]);
    let name = format!("name{}", "[x]".repeat(10_000));
    for (content_type, body) in [
        (
            "application/x-www-form-urlencoded".to_string(),
            format!("{name}=1"),
        ),
        (
            "multipart/form-data; boundary=b7".to_string(),
            format!(
                "--b7\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n1\r\n--b7--\r\n"
            ),
        ),
    ] {
        for (method, path) in [
            (reqwest::Method::POST, "/customers"),
            (reqwest::Method::PATCH, "/customers/cus_deep"),
        ] {
            let r = server
                .client
                .request(method.clone(), format!("{}{path}", server.url))
                .header("X-Wraith-Session", "deep")
                .header("content-type", content_type.as_str())
                .body(body.clone())
                .send()
                .await
                .unwrap_or_else(|e| panic!("{method} {content_type}: no answer: {e}"));
            assert!(
                r.status().as_u16() < 500,
                "{method} {content_type}: {}",
                r.status()
            );
        }
    }
    server
        .get("/customers", Some("deep"))
        .await
        .assert_status(200);
}

/// A twin whose two recorded trees differ at their leaf, `depth` objects down: its body
/// template nests an object node per level down to the leaf's hole, as deep as synth nests
/// any model.
fn leaf_twin(depth: usize) -> Twin {
    let t = Twin::init("trees", ORIGIN);
    let mut other = nested(depth);
    let mut at = &mut other;
    while at.get("child").is_some() {
        at = &mut at["child"];
    }
    at["leaf"] = json!(depth + 1);
    let entries = vec![
        har::entry(ORIGIN, "GET", "/v1/trees/t_1", None, &nested(depth)),
        har::entry(ORIGIN, "GET", "/v1/trees/t_1", None, &other),
    ];
    har::import(&t, &[], "run.har", entries);
    har::synth(&t, &[]);
    t
}

/// How deeply a JSON text nests arrays and objects.
fn depth_of(text: &str) -> usize {
    let (mut d, mut max, mut s, mut esc) = (0usize, 0usize, false, false);
    for c in text.chars() {
        match (s, esc, c) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (true, false, '"') => s = false,
            (true, ..) => {}
            (false, _, '"') => s = true,
            (false, _, '[' | '{') => {
                d += 1;
                max = max.max(d);
            }
            (false, _, ']' | '}') => d -= 1,
            _ => {}
        }
    }
    max
}

#[test]
fn the_deepest_body_synth_reads_makes_a_model_well_within_the_model_depth_limit() {
    // serde_json reads a body to 127 levels; a deeper one is kept as text.
    let t = leaf_twin(127);
    let model = std::fs::read_to_string(t.path().join("model/twin.wir.json")).unwrap();
    let depth = depth_of(&model);
    assert!(depth > 300, "the template nests per body level: {depth}");
    assert!(
        depth <= 3 * 128 + 12,
        "deeper than synth is documented to write: {depth}"
    );
    let out = t.wraith(&["check", t.path_str().as_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_hand_edited_model_nested_past_the_limit_is_refused_at_load_by_every_command() {
    let t = leaf_twin(20);
    let path = t.path().join("model/twin.wir.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let n = 10_000;
    let deep = format!("{}1{}", "[".repeat(n), "]".repeat(n));
    let edited = text.replacen("\"examples\":[", &format!("\"examples\":[{deep},"), 1);
    assert_ne!(edited, text, "the model has an examples list to edit");
    std::fs::write(&path, edited).unwrap();
    let twin = t.path_str();
    for args in [
        vec!["check", twin.as_str()],
        vec!["inspect", twin.as_str(), "--provenance"],
    ] {
        let out = t.wraith(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "wraith {args:?}: {err}");
        for needle in ["twin.wir.json", "levels deep", "1024", "wraith synth"] {
            assert!(err.contains(needle), "wraith {args:?}: {needle}: {err}");
        }
    }
    let (code, err) = t.serve_expect_exit(&[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("levels deep"), "{err}");
    // lint reports it as a finding, and lints the rest.
    let out = t.wraith(&["lint", twin.as_str(), "--json"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.code().is_some_and(|c| c < 100), "{out:?}");
    assert!(report.contains("model-too-deep"), "{report}");
}

#[test]
fn lint_reports_a_symbols_file_nested_past_the_limit_as_a_finding() {
    let t = leaf_twin(3);
    let n = 100_000;
    let deep = format!("{{\"x\":{}{}}}\n", "[".repeat(n), "]".repeat(n));
    std::fs::write(t.path().join("model/symbols.json"), deep).unwrap();
    let out = t.wraith(&["lint", t.path_str().as_str(), "--json"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.code().is_some_and(|c| c < 100), "{out:?}");
    assert!(report.contains("model-too-deep"), "{report}");
    assert!(report.contains("symbols.json"), "{report}");
}
