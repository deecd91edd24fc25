//! Where a twin lives and what its folder holds.

use std::path::{Component, Path, PathBuf};

/// Errors about finding or reading a twin folder. Messages say what was looked for and how to fix.
#[derive(Debug, thiserror::Error)]
pub enum TwinError {
    #[error(
        "no twin `{arg}`: looked for {}; create one with `wraith init <name> --base-url <url>` or pass the path to a folder holding wraith.toml",
        looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" and ")
    )]
    NotFound { arg: String, looked: Vec<PathBuf> },
    /// The argument names a file (often the twin's own `wraith.toml`), not a twin folder.
    #[error(
        "`{arg}` is a file, not a twin folder: pass the folder holding wraith.toml (a twin name under ./twins/ or a path to its folder)"
    )]
    NotAFolder { arg: String },
    /// The twin's folder holds a `wraith.toml` that is no file (a folder, a fifo).
    #[error(
        "{} is not a file (a folder, fifo, socket or device): the twin's configuration must be a regular file; move it away and restore wraith.toml (or run `wraith init` in another folder)",
        path.display()
    )]
    ConfigNotAFile { path: PathBuf },
    /// The twin argument is empty (an unset shell variable, usually).
    #[error(
        "the twin argument is empty: pass a twin name under ./twins/ or the path to a folder holding wraith.toml"
    )]
    Empty,
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A path Wraith is about to write in the twin leads out of its folder through a symbolic
    /// link: a twin from elsewhere (a clone, an archive) could otherwise have a command
    /// overwrite any file its user may write.
    #[error(
        "{} leads outside the twin folder {} through the symbolic link {} (to {}); Wraith writes a twin's files only inside it: replace the link with a file or folder of its own, or point it inside the twin",
        path.display(), root.display(), link.display(), lands.display()
    )]
    OutsideTwin {
        path: PathBuf,
        root: PathBuf,
        link: PathBuf,
        lands: PathBuf,
    },
    #[error("{}", wraith_recording::error::at_line(path, *line, message))]
    Config {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// A twin folder: the root that holds `wraith.toml`, with accessors for every well-known path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TwinDir {
    root: PathBuf,
}

/// Where the symbolic link `link` leads, resolved as far as the file system allows: the whole
/// chain when its end exists, else the end's folder resolved and its name kept (a write would
/// create that file), else the chain's end as written.
fn link_destination(link: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(link) {
        return p;
    }
    let end = crate::write_target(link).unwrap_or_else(|_| link.to_path_buf());
    match (end.parent(), end.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir).map_or(end.clone(), |d| d.join(name)),
        _ => end,
    }
}

/// The folder under the current directory where named twins live.
pub const TWINS_DIR: &str = "twins";

impl TwinDir {
    /// Find a twin from a CLI argument: a path to a folder containing `wraith.toml`, or a name
    /// under `./twins/<name>`. The path reading wins when both exist, since it is explicit.
    pub fn resolve(arg: &str) -> Result<TwinDir, TwinError> {
        Self::resolve_in(Path::new("."), arg)
    }

    /// [`TwinDir::resolve`] relative to `base` instead of the current directory.
    pub fn resolve_in(base: &Path, arg: &str) -> Result<TwinDir, TwinError> {
        if arg.is_empty() {
            return Err(TwinError::Empty);
        }
        let mut looked = Vec::new();
        {
            // From the current directory, `./twins/shop` is kept as written: joined to `.` it
            // would show in every message as `././twins/shop`.
            let written = Path::new(arg);
            let as_path = match written.components().next() {
                Some(Component::CurDir | Component::ParentDir) if base == Path::new(".") => {
                    written.to_path_buf()
                }
                _ => base.join(arg),
            };
            if as_path.join("wraith.toml").is_file() {
                return Ok(TwinDir { root: as_path });
            }
            looked.push(as_path.join("wraith.toml"));
            if is_valid_twin_name(arg) {
                let named = base.join(TWINS_DIR).join(arg);
                if named.join("wraith.toml").is_file() {
                    return Ok(TwinDir { root: named });
                }
                looked.push(named.join("wraith.toml"));
            }
            // A `wraith.toml` that is there but no file: the twin exists, its configuration is
            // what to fix (`init` there would refuse the folder as taken).
            if let Some(path) = looked.iter().find(|p| p.exists()) {
                return Err(TwinError::ConfigNotAFile { path: path.clone() });
            }
            if as_path.is_file() {
                return Err(TwinError::NotAFolder {
                    arg: arg.to_string(),
                });
            }
        }
        Err(TwinError::NotFound {
            arg: arg.to_string(),
            looked,
        })
    }

    /// A twin folder at `root`, without checking that it exists (for `init`, tests).
    pub fn at(root: impl Into<PathBuf>) -> TwinDir {
        TwinDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Refuse a write to `path` (a path under the twin's root) that a symbolic link, at the
    /// path itself or at a folder on the way to it, would carry outside the twin's folder
    /// ([`TwinError::OutsideTwin`]). Links that stay inside are fine, and so is a root that is
    /// itself a link: the user named it. What does not exist yet is created inside, so the
    /// walk stops there; what cannot be looked at is left to the write to report.
    pub fn check_writable(&self, path: &Path) -> Result<(), TwinError> {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return Ok(());
        };
        let Ok(root) = std::fs::canonicalize(&self.root) else {
            return Ok(());
        };
        let mut at = self.root.clone();
        for part in rel.components() {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    let lands = link_destination(&at);
                    if !lands.starts_with(&root) {
                        return Err(TwinError::OutsideTwin {
                            path: path.to_path_buf(),
                            root: self.root.clone(),
                            link: at,
                            lands,
                        });
                    }
                }
                Ok(_) => {}
                Err(_) => return Ok(()),
            }
        }
        Ok(())
    }
    /// The folder's name (the twin name when it lives under `twins/`): the path's last
    /// component as written, or, when the path ends in `.` or `..` (`wraith check .`,
    /// `shop/lua/..`), the name of the folder it resolves to. Only a path naming no folder
    /// (the file system's root, or one that cannot be resolved) is shown as written.
    pub fn name(&self) -> String {
        match self.root.components().next_back() {
            Some(Component::Normal(n)) => n.to_string_lossy().into_owned(),
            _ => std::fs::canonicalize(&self.root)
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| self.root.display().to_string()),
        }
    }
    pub fn wraith_toml(&self) -> PathBuf {
        self.root.join("wraith.toml")
    }
    pub fn scrub_toml(&self) -> PathBuf {
        self.root.join("scrub.toml")
    }
    pub fn recordings_dir(&self) -> PathBuf {
        self.root.join("recordings")
    }
    /// `recordings/sessions/`: one folder per recording session.
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("recordings").join("sessions")
    }
    pub fn model_dir(&self) -> PathBuf {
        self.root.join("model")
    }
    pub fn state_dir(&self) -> PathBuf {
        self.root.join("state")
    }
    /// `state/fixtures/`: FixtureSets.
    pub fn fixtures_dir(&self) -> PathBuf {
        self.root.join("state").join("fixtures")
    }
    pub fn schema_json(&self) -> PathBuf {
        self.root.join("state").join("schema.json")
    }
    pub fn lua_dir(&self) -> PathBuf {
        self.root.join("lua")
    }
    pub fn reports_dir(&self) -> PathBuf {
        self.root.join("reports")
    }
}

/// A twin name is one path segment of letters, digits, `-`, `_` and `.`, not starting with `.`
/// or `-` (so it can never escape `twins/` or look like a flag).
pub fn is_valid_twin_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_write_a_link_carries_outside_the_twin_is_refused_and_one_inside_is_not() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let twin = TwinDir::at(tmp.path().join("shop"));
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(twin.model_dir()).unwrap();
        std::fs::create_dir_all(twin.root().join("elsewhere")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let model = twin.model_dir().join("twin.wir.json");
        // Nothing there yet, no link: fine.
        twin.check_writable(&model).unwrap();
        // The file itself linked outside, to a file that exists and to one that does not.
        for end in ["victim.txt", "missing.txt"] {
            if end == "victim.txt" {
                std::fs::write(outside.join(end), "keep").unwrap();
            }
            let _ = std::fs::remove_file(&model);
            symlink(outside.join(end), &model).unwrap();
            let err = twin.check_writable(&model).unwrap_err();
            assert!(matches!(err, TwinError::OutsideTwin { .. }), "{err}");
            let msg = err.to_string();
            assert!(msg.contains("twin.wir.json") && msg.contains(end), "{msg}");
        }
        // Linked inside (relatively): fine.
        std::fs::remove_file(&model).unwrap();
        symlink("../elsewhere/model.json", &model).unwrap();
        twin.check_writable(&model).unwrap();
        // A folder on the way linked outside.
        std::fs::remove_file(&model).unwrap();
        std::fs::remove_dir(twin.model_dir()).unwrap();
        symlink(&outside, twin.model_dir()).unwrap();
        let err = twin.check_writable(&model).unwrap_err();
        assert!(
            matches!(err, TwinError::OutsideTwin { ref link, .. } if *link == twin.model_dir())
        );
        // A path outside the root is not this check's business.
        twin.check_writable(&outside.join("x")).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_twin_root_that_is_itself_a_link_is_the_users_choice() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir_all(real.join("model")).unwrap();
        symlink(&real, tmp.path().join("shop")).unwrap();
        let twin = TwinDir::at(tmp.path().join("shop"));
        twin.check_writable(&twin.model_dir().join("twin.wir.json"))
            .unwrap();
    }

    #[test]
    fn resolve_finds_name_under_twins_and_path() {
        let tmp = tempfile::tempdir().unwrap();
        let twin = tmp.path().join("twins").join("shop");
        std::fs::create_dir_all(&twin).unwrap();
        std::fs::write(twin.join("wraith.toml"), "").unwrap();
        let by_name = TwinDir::resolve_in(tmp.path(), "shop").unwrap();
        assert_eq!(by_name.root(), twin);
        let by_path = TwinDir::resolve_in(tmp.path(), "twins/shop").unwrap();
        assert_eq!(by_path.root(), tmp.path().join("twins/shop"));
        assert_eq!(by_path.sessions_dir(), twin.join("recordings/sessions"));
        assert_eq!(by_path.fixtures_dir(), twin.join("state/fixtures"));
    }

    #[test]
    fn resolve_missing_twin_lists_places_looked() {
        let tmp = tempfile::tempdir().unwrap();
        let err = TwinDir::resolve_in(tmp.path(), "nope")
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope/wraith.toml"), "{err}");
        assert!(err.contains("twins/nope/wraith.toml"), "{err}");
        assert!(err.contains("wraith init"), "{err}");
    }

    #[test]
    fn resolve_a_file_says_it_is_not_a_twin_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let twin = tmp.path().join("shop");
        std::fs::create_dir_all(&twin).unwrap();
        std::fs::write(twin.join("wraith.toml"), "").unwrap();
        let err = TwinDir::resolve_in(tmp.path(), "shop/wraith.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is a file, not a twin folder"), "{err}");
        assert!(err.contains("shop/wraith.toml"), "{err}");
    }

    #[test]
    fn resolve_a_twin_whose_wraith_toml_is_a_folder_names_the_file_to_fix() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("twins/shop/wraith.toml")).unwrap();
        let err = TwinDir::resolve_in(tmp.path(), "shop").unwrap_err();
        assert!(matches!(err, TwinError::ConfigNotAFile { .. }), "{err}");
        let err = err.to_string();
        assert!(
            err.contains("twins/shop/wraith.toml is not a file"),
            "{err}"
        );
        assert!(!err.contains("create one with"), "{err}");
    }

    #[test]
    fn a_twin_named_by_dot_or_dot_dot_takes_its_folders_real_name() {
        let tmp = tempfile::tempdir().unwrap();
        let twin = tmp.path().join("twins").join("shop");
        std::fs::create_dir_all(twin.join("lua")).unwrap();
        for path in [
            twin.clone(),
            twin.join("."),
            twin.join("lua").join(".."),
            twin.join("lua").join("..").join("."),
            tmp.path()
                .join("twins")
                .join("..")
                .join("twins")
                .join("shop"),
        ] {
            assert_eq!(TwinDir::at(&path).name(), "shop", "{}", path.display());
        }
    }

    #[test]
    fn twin_names_cannot_escape_twins_dir() {
        assert!(is_valid_twin_name("shop-api_v2.1"));
        for bad in ["", "..", "../x", "a/b", ".hidden", "-x", "a b"] {
            assert!(!is_valid_twin_name(bad), "{bad}");
        }
    }
}
