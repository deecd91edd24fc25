//! The twin's name in what `wraith check` and `wraith coverage` print (the report, its HTML
//! title) is its folder's real name, however the path was written: `.`, `..` or a path ending
//! in `..` resolve to the folder they name. Black-box: the real binary on a copy of the demo twin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::check_support;

use check_support::*;
use std::path::Path;
use std::process::{Command, Output};

fn wraith_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(dir)
        .args(args)
        .env("WRAITH_HMAC_KEY", "check-tests-key")
        .output()
        .unwrap()
}

fn twin_of(out: &Output) -> String {
    stdout_json(out)["twin"].as_str().unwrap().to_string()
}

#[test]
fn a_twin_named_by_dot_or_a_path_through_dot_dot_is_reported_by_its_folder_name() {
    let t = DemoTwin::synthesized();
    std::fs::create_dir_all(t.root.join("lua")).unwrap();
    let parent = t.root.parent().unwrap();
    let cases: [(&Path, &str); 4] = [
        (&t.root, "."),
        (&t.root.join("lua"), ".."),
        (parent, "demo/lua/.."),
        (parent, "./demo/lua/../."),
    ];
    for (dir, arg) in cases {
        let out = wraith_in(dir, &["check", arg, "--json"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{arg}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(twin_of(&out), "demo", "check {arg}");
        let html = std::fs::read_to_string(t.root.join("reports/check.html")).unwrap();
        assert!(
            html.contains("<title>wraith check — demo</title>"),
            "check {arg}: {}",
            &html[..200.min(html.len())]
        );
        let cov = wraith_in(dir, &["coverage", arg, "--json"]);
        assert_eq!(cov.status.code(), Some(0), "coverage {arg}");
        assert_eq!(twin_of(&cov), "demo", "coverage {arg}");
    }
}
