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

fn wraith(t: &Twin, args: &[&str]) -> std::process::Output {
    std::process::Command::new(support::bin())
        .current_dir(t.path())
        .args(args)
        .output()
        .unwrap()
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
        let out = wraith(&t, &args);
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
