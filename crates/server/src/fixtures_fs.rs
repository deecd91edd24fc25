//! Reading `state/fixtures/` from disk into the engine's [`FixtureTree`]: raw file texts only; the
//! engine parses and validates them (so `check --in-memory` and `serve` load fixtures the same
//! way).
//!
//! Layout (the fixtures page): every subdirectory is one fixture set — `fixture.json` (directory
//! form), `<entity_type>.json` files at its top (legacy flat form) and `patches/<type>.patch.json`;
//! `<entity_type>.json` files directly under `state/fixtures/` are the loose legacy default set.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use wraith_engine::{FixtureSetFiles, FixtureTree};

/// Read the fixture tree under `fixtures_dir`. A missing directory is an empty tree (sessions
/// start empty); any other IO error, or a non-UTF-8 file, is an error naming the file.
pub fn read_fixture_tree(fixtures_dir: &Path) -> io::Result<FixtureTree> {
    let mut tree = FixtureTree::default();
    let entries = match std::fs::read_dir(fixtures_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(tree),
        Err(e) => return Err(with_path(e, fixtures_dir)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| with_path(e, fixtures_dir))?;
        let path = entry.path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            tree.sets.insert(name, read_set(&path)?);
        } else if let Some(stem) = name.strip_suffix(".json") {
            tree.loose.insert(stem.to_string(), read_text(&path)?);
        }
    }
    Ok(tree)
}

fn read_set(dir: &Path) -> io::Result<FixtureSetFiles> {
    let mut set = FixtureSetFiles::default();
    for entry in std::fs::read_dir(dir).map_err(|e| with_path(e, dir))? {
        let entry = entry.map_err(|e| with_path(e, dir))?;
        let path = entry.path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            if name == "patches" {
                set.patches = read_patches(&path, &mut set.ignored)?;
            } else if name.ends_with(".json") {
                // Skipping it would seed the set without the records the user meant it to hold.
                return Err(misplaced(
                    &path,
                    "is a folder, not a file: `fixture.json` and `<entity_type>.json` in a fixture set are JSON files; remove the folder or put the file in its place",
                ));
            }
            continue;
        }
        if name == "patches" {
            return Err(misplaced(
                &path,
                "is a file, not a folder: a set's `patches/` holds `<entity_type>.patch.json` files; make it a folder holding them",
            ));
        }
        if name == "fixture.json" {
            set.fixture_json = Some(read_text(&path)?);
        } else if let Some(stem) = name.strip_suffix(".json") {
            set.flat.insert(stem.to_string(), read_text(&path)?);
        } else {
            set.ignored.push(name);
        }
    }
    set.ignored.sort();
    Ok(set)
}

/// The `<entity_type>.patch.json` files of a set's `patches/`; any other file there is named in
/// `ignored` (as `patches/<name>`): a `customers.json` meant as a patch seeds nothing.
fn read_patches(dir: &Path, ignored: &mut Vec<String>) -> io::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(|e| with_path(e, dir))? {
        let entry = entry.map_err(|e| with_path(e, dir))?;
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            if name.ends_with(".patch.json") {
                return Err(misplaced(
                    &path,
                    "is a folder, not a file: a patch is one JSON document; remove the folder or put the file in its place",
                ));
            }
            continue;
        }
        if let Some(stem) = name.strip_suffix(".patch.json") {
            out.insert(stem.to_string(), read_text(&path)?);
        } else {
            ignored.push(format!("patches/{name}"));
        }
    }
    Ok(out)
}

fn read_text(path: &Path) -> io::Result<String> {
    wraith_twin::read_file_to_string(path).map_err(|e| with_path(e, path))
}

/// A fixture path of the wrong kind (a folder where a file belongs, or the other way round).
fn misplaced(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{} {what}", path.display()),
    )
}

fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn missing_fixtures_dir_is_an_empty_tree() {
        let dir = tempfile::tempdir().unwrap();
        let t = read_fixture_tree(&dir.path().join("nope")).unwrap();
        assert!(t.sets.is_empty() && t.loose.is_empty());
    }

    #[test]
    fn reads_sets_in_both_forms_patches_and_loose_files() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path();
        write(&f.join("default/fixture.json"), r#"{"entities":{}}"#);
        write(
            &f.join("default/patches/customers.patch.json"),
            r#"{"add":[]}"#,
        );
        write(&f.join("default/patches/notes.txt"), "ignored");
        write(&f.join("legacy/customers.json"), "[]");
        write(&f.join("orders.json"), "[]");
        write(&f.join("README.md"), "ignored");
        let t = read_fixture_tree(f).unwrap();
        let d = &t.sets["default"];
        assert_eq!(d.fixture_json.as_deref(), Some(r#"{"entities":{}}"#));
        assert_eq!(
            d.patches.keys().collect::<Vec<_>>(),
            vec![&"customers".to_string()]
        );
        assert!(d.flat.is_empty());
        let l = &t.sets["legacy"];
        assert!(l.fixture_json.is_none());
        assert_eq!(l.flat["customers"], "[]");
        assert_eq!(
            t.loose.keys().collect::<Vec<_>>(),
            vec![&"orders".to_string()]
        );
    }

    #[test]
    fn a_folder_where_a_fixture_file_belongs_is_an_error_naming_it() {
        for bad in [
            "default/fixture.json/x",
            "default/customers.json/x",
            "default/patches/customers.patch.json/x",
        ] {
            let dir = tempfile::tempdir().unwrap();
            write(&dir.path().join(bad), "[]");
            let err = read_fixture_tree(dir.path()).unwrap_err();
            let folder = dir.path().join(bad.trim_end_matches("/x"));
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{bad}");
            assert!(
                err.to_string()
                    .starts_with(&format!("{} is a folder, not a file", folder.display())),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn a_patches_file_where_the_folder_belongs_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("default/patches"), "{}");
        let err = read_fixture_tree(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains("patches is a file, not a folder"),
            "{err}"
        );
    }
}
