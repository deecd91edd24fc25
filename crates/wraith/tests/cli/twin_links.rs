//! A twin from elsewhere (a clone, an archive) may hold symbolic links. A command never
//! overwrites a twin file through a link that leads out of the twin's folder: `synth` (the
//! model) and `check` (its reports) refuse with exit 3, naming the link, and leave the file it
//! names alone. A link that stays inside the twin is followed. (`route add` edits a
//! `lua/routes.toml` linked anywhere, as `route_cli` pins: it only writes a file that parses as
//! a routes file.)
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use crate::support;

/// The example twin, and a file outside it that a link in the twin will name.
fn twin_and_victim() -> (support::Twin, PathBuf) {
    let t = support::example_shop_twin();
    let victim = t.tmp.path().join("victim.txt");
    std::fs::write(&victim, "not the twin's\n").unwrap();
    (t, victim)
}

fn assert_refused_untouched(out: &std::process::Output, link: &str, victim: &PathBuf) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("leads outside the twin folder"), "{err}");
    assert!(err.contains(link), "{err}");
    assert_eq!(
        std::fs::read_to_string(victim).unwrap(),
        "not the twin's\n",
        "the file outside the twin was written"
    );
}

#[test]
fn synth_refuses_a_model_file_linked_outside_the_twin() {
    let (t, victim) = twin_and_victim();
    std::fs::create_dir_all(t.path().join("model")).unwrap();
    symlink(&victim, t.path().join("model/twin.wir.json")).unwrap();
    let out = t.wraith(&["synth", &t.path_str()]);
    assert_refused_untouched(&out, "twin.wir.json", &victim);
    assert!(
        !t.path().join("model/symbols.json").exists(),
        "half a model written"
    );
}

#[test]
fn synth_refuses_a_model_folder_linked_outside_the_twin_and_makes_nothing_there() {
    let (t, victim) = twin_and_victim();
    let outside = t.tmp.path().join("elsewhere");
    symlink(&outside, t.path().join("model")).unwrap();
    let out = t.wraith(&["synth", &t.path_str()]);
    assert_refused_untouched(&out, "model", &victim);
    assert!(
        !outside.exists(),
        "the linked folder was made outside the twin"
    );
}

#[test]
fn check_refuses_a_report_file_linked_outside_the_twin() {
    let (t, victim) = twin_and_victim();
    let synth = t.wraith(&["synth", &t.path_str()]);
    assert!(synth.status.success());
    std::fs::create_dir_all(t.path().join("reports")).unwrap();
    symlink(&victim, t.path().join("reports/check.html")).unwrap();
    let out = t.wraith(&["check", &t.path_str()]);
    assert_refused_untouched(&out, "check.html", &victim);
}

#[test]
fn a_model_file_linked_inside_the_twin_is_written_through_the_link() {
    let t = support::example_shop_twin();
    std::fs::create_dir_all(t.path().join("model")).unwrap();
    std::fs::create_dir_all(t.path().join("kept")).unwrap();
    symlink("../kept/model.json", t.path().join("model/twin.wir.json")).unwrap();
    let out = t.wraith(&["synth", &t.path_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept = std::fs::read_to_string(t.path().join("kept/model.json")).unwrap();
    assert!(
        kept.contains("\"schema_version\""),
        "{}",
        &kept[..kept.len().min(200)]
    );
    assert!(
        std::fs::symlink_metadata(t.path().join("model/twin.wir.json"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced"
    );
}
