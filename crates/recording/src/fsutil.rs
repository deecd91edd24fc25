//! Atomic file writes: every file Wraith writes goes through [`write_atomic`], so a crash or a
//! full disk never leaves a half-written file where a reader would find it. A writer killed
//! mid-write leaves its hidden temp file (`.<name>.tmp-<pid>-<n>`) behind instead;
//! [`remove_stale_temp_files`] clears those once their writer is gone.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Temp files older than this are stale wherever the writer's liveness cannot be checked (no
/// `/proc`): no single atomic write takes that long.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

/// The process id in a temp name [`temp_path_beside`] makes (`.<name>.tmp-<pid>-<n>`, with a
/// non-empty `<name>`), or `None` for any other name.
pub fn temp_name_pid(file_name: &str) -> Option<u32> {
    temp_name_parts(file_name).map(|(_, pid)| pid)
}

/// The name a temp file [`temp_path_beside`] made is written for, and its writer's process id
/// (`.000010.wrec.zst.tmp-4242-7` → `000010.wrec.zst`, 4242); `None` for any other name.
pub fn temp_name_parts(file_name: &str) -> Option<(&str, u32)> {
    let rest = file_name.strip_prefix('.')?;
    let (target, suffix) = rest.rsplit_once(".tmp-")?;
    let (pid, n) = suffix.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if target.is_empty() || !digits(pid) || !digits(n) {
        return None;
    }
    Some((target, pid.parse().ok()?))
}

/// Whether the writer of a temp file is gone: its process id is not ours and no running process
/// has it (read from `/proc`); where `/proc` is not there, whether the file is older than an
/// hour.
pub(crate) fn writer_gone(pid: u32, path: &Path) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let proc_root = Path::new("/proc");
    if proc_root.join("self").exists() {
        return !proc_root.join(pid.to_string()).exists();
    }
    fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > STALE_AFTER)
}

/// Remove, under `root` (recursively, symlinks not followed, hidden folders skipped: they are
/// other writers' staging areas), every regular file or folder whose name is a temp name of
/// [`temp_path_beside`] and whose writer is gone (see [`temp_name_pid`]): what an interrupted
/// write left behind. Files of a writer that is still running, and every other file, are kept.
/// Best effort: a folder that cannot be listed or a file that cannot be removed is skipped.
/// Returns the files removed, sorted.
pub fn remove_stale_temp_files(root: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if kind.is_dir() {
                // A folder of a temp name is a probe a killed writer made (the recorder's
                // write check): gone with its writer. Other hidden folders are skipped.
                let path = entry.path();
                if let Some(pid) = temp_name_pid(&name) {
                    if writer_gone(pid, &path) && fs::remove_dir_all(&path).is_ok() {
                        removed.push(path);
                    }
                } else if !name.starts_with('.') {
                    stack.push(path);
                }
                continue;
            }
            if !kind.is_file() {
                continue;
            }
            let path = entry.path();
            if let Some(pid) = temp_name_pid(&name)
                && writer_gone(pid, &path)
                && fs::remove_file(&path).is_ok()
            {
                removed.push(path);
            }
        }
    }
    removed.sort();
    removed
}

/// The kinds of staging folder a command builds before renaming it into place: a session
/// being recorded or imported (`.<session>.staging-<pid>`), a composite (`.<name>.compose-<pid>`)
/// and a new twin (`.<name>.init-<pid>`); and the earlier composite `compose --force` moves
/// aside until the new one is in place (`.<name>.compose-old-<pid>`).
const STAGING_KINDS: [&str; 4] = ["staging", "compose", "init", "compose-old"];

/// The process id in a staging folder's name (`.<name>.<kind>-<pid>`, see [`STAGING_KINDS`]),
/// or `None` for any other name.
pub fn staging_name_pid(dir_name: &str) -> Option<u32> {
    let rest = dir_name.strip_prefix('.')?;
    let (target, suffix) = rest.rsplit_once('.')?;
    let (kind, pid) = suffix.rsplit_once('-')?;
    if target.is_empty()
        || !STAGING_KINDS.contains(&kind)
        || pid.is_empty()
        || !pid.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    pid.parse().ok()
}

/// Remove, directly under `dir`, every staging folder (see [`staging_name_pid`]) whose builder
/// is gone, or only those staging `target` when it is given: what a command interrupted before
/// its final rename left behind (an interrupted import leaves one per session it was writing).
/// A running builder's folder and every other entry are kept. Best effort. Returns the folders
/// removed, sorted.
pub fn remove_stale_staging_dirs(dir: &Path, target: Option<&str>) -> Vec<PathBuf> {
    remove_stale_staging_dirs_where(dir, |staged| target.is_none_or(|t| staged == t))
}

/// [`remove_stale_staging_dirs`] for the staging folders whose target (the `<name>` of
/// `.<name>.<kind>-<pid>`) `wanted` accepts: `serve --overlay` names each temporary composite
/// anew (`wraith-composite-<pid>-<n>`), so what an interrupted one left is found by its prefix.
pub fn remove_stale_staging_dirs_where(dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return removed;
    };
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|k| k.is_dir()) {
            continue;
        }
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // `.<target>.<kind>-<pid>`: the target is what lies before the last dot.
        let target = name
            .strip_prefix('.')
            .and_then(|r| r.rsplit_once('.'))
            .map(|(t, _)| t);
        if let Some(pid) = staging_name_pid(&name)
            && target.is_some_and(&wanted)
            && writer_gone(pid, &path)
            && fs::remove_dir_all(&path).is_ok()
        {
            removed.push(path);
        }
    }
    removed.sort();
    removed
}

/// Whether process `pid` is known to be gone: not this process, and absent from `/proc`.
/// `false` where `/proc` cannot tell.
pub fn process_gone(pid: u32) -> bool {
    let proc_root = Path::new("/proc");
    pid != std::process::id()
        && proc_root.join("self").exists()
        && !proc_root.join(pid.to_string()).exists()
}

/// Remove, directly under `dir`, every file or folder named `<prefix><pid>-<anything>` whose
/// process is gone (symlinks are never followed nor removed): what a run killed outright left
/// in the temporary folder (`check --wire`'s log, `serve --overlay`'s composite). Only where
/// `/proc` tells which processes live: an age says nothing of a server that may run for days.
/// Best effort. Returns what was removed, sorted.
pub fn remove_leftovers_of_dead_runs(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    if !Path::new("/proc/self").exists() {
        return removed;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return removed;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(pid) = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !process_gone(pid) {
            continue;
        }
        let path = entry.path();
        let gone = match entry.file_type() {
            Ok(k) if k.is_dir() => fs::remove_dir_all(&path).is_ok(),
            Ok(k) if k.is_file() => fs::remove_file(&path).is_ok(),
            _ => false,
        };
        if gone {
            removed.push(path);
        }
    }
    removed.sort();
    removed
}

/// A temporary path beside `path` (same directory, so the final rename stays on one filesystem).
pub fn temp_path_beside(path: &Path) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    let tmp = format!(".{name}.tmp-{}-{n}", std::process::id());
    match path.parent() {
        Some(dir) => dir.join(tmp),
        None => PathBuf::from(tmp),
    }
}

/// Symbolic links followed before giving up, as the kernel does (`ELOOP`).
const MAX_LINKS: usize = 40;

/// Where a write to `path` lands: the end of the chain of symbolic links `path` starts (as a
/// shell's `>` would write), or `path` itself. Renaming a new file over the link would cut the
/// link from the file it names, and over `/dev/stdout` would replace a system link.
pub fn write_target(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let to = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{}: too many levels of symbolic links", path.display()),
    ))
}

/// Whether `path` is something other than a regular file or a folder: a device such as
/// `/dev/null`, a fifo or a socket. Those are written into, never replaced.
pub fn is_special_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| !m.file_type().is_file() && !m.file_type().is_dir())
}

/// Refuse to read anything but a regular file (links followed): opening a fifo blocks until
/// something writes to it, so a fifo where a twin file belongs would hang the command for ever.
fn refuse_special(path: &Path) -> io::Result<()> {
    if is_special_file(path) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is not a regular file (a fifo, socket or device); put a regular file there",
        ));
    }
    Ok(())
}

/// [`fs::read`] for a file the user owns or names: a fifo, socket or device is refused with
/// `InvalidInput` instead of blocking.
pub fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    refuse_special(path)?;
    fs::read(path)
}

/// [`fs::read_to_string`] with [`read_file`]'s refusal.
pub fn read_file_to_string(path: &Path) -> io::Result<String> {
    refuse_special(path)?;
    fs::read_to_string(path)
}

/// Write `bytes` to `path` atomically: write a temp file in the same directory, fsync it, then
/// rename it over `path`. Readers see either the old file or the whole new one.
///
/// A symbolic link is followed and the file it names is replaced. A device, fifo or socket is
/// written into in place: renaming a file over `/dev/null` would replace the device for every
/// process on the machine.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = write_target(path)?;
    if is_special_file(&target) {
        return fs::OpenOptions::new()
            .write(true)
            .open(&target)?
            .write_all(bytes);
    }
    let path = target.as_path();
    let tmp = temp_path_beside(path);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        keep_mode(path, &f)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        // Leave nothing behind on failure; the original error is what matters.
        let _ = fs::remove_file(&tmp);
    }
    result?;
    sync_dir(path.parent());
    Ok(())
}

/// Write several files that only make sense together (a model and its symbols) so that a failure
/// leaves every one of them as it was: all temp files are written first, each existing file is
/// kept under a hard link beside it, and a rename that fails puts the earlier ones back. (A
/// crash between two renames can still leave a mix; an error cannot.)
///
/// Symbolic links are followed as [`write_atomic`] does; a device, fifo or socket is refused
/// before anything is written, since it could not be put back.
pub fn write_atomic_all(files: &[(&Path, &[u8])]) -> io::Result<()> {
    let mut targets: Vec<PathBuf> = Vec::with_capacity(files.len());
    for (path, _) in files {
        let target = write_target(path)?;
        if is_special_file(&target) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{}: is not a regular file; move it away so a file can be written there",
                    target.display()
                ),
            ));
        }
        targets.push(target);
    }
    let files: Vec<(&Path, &[u8])> = targets
        .iter()
        .zip(files)
        .map(|(t, (_, bytes))| (t.as_path(), *bytes))
        .collect();
    let files = files.as_slice();
    let mut temps: Vec<PathBuf> = Vec::with_capacity(files.len());
    let mut backups: Vec<Option<PathBuf>> = Vec::with_capacity(files.len());
    let cleanup = |temps: &[PathBuf], backups: &[Option<PathBuf>]| {
        for t in temps {
            let _ = fs::remove_file(t);
        }
        for b in backups.iter().flatten() {
            let _ = fs::remove_file(b);
        }
    };
    let staged = (|| -> io::Result<()> {
        for (path, bytes) in files {
            let tmp = temp_path_beside(path);
            temps.push(tmp.clone());
            let mut f = File::create(&tmp)?;
            f.write_all(bytes)?;
            keep_mode(path, &f)?;
            f.sync_all()?;
        }
        for (path, _) in files {
            let backup = match fs::symlink_metadata(path) {
                // A folder fails here, before any file has changed.
                Ok(meta) if meta.is_dir() => {
                    return Err(io::Error::new(
                        io::ErrorKind::IsADirectory,
                        format!(
                            "{}: is a folder where a file belongs; move it away",
                            path.display()
                        ),
                    ));
                }
                Ok(_) => {
                    let b = temp_path_beside(path);
                    temps.push(b.clone());
                    keep_backup(path, &b, |from, to| fs::hard_link(from, to)).map_err(|e| {
                        io::Error::new(e.kind(), format!("{}: {e}", path.display()))
                    })?;
                    temps.pop();
                    Some(b)
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            };
            backups.push(backup);
        }
        Ok(())
    })();
    if let Err(e) = staged {
        cleanup(&temps, &backups);
        return Err(e);
    }
    for (i, (path, _)) in files.iter().enumerate() {
        if let Err(e) = fs::rename(&temps[i], path) {
            // Put back what the earlier renames replaced.
            for (j, (done, _)) in files.iter().enumerate().take(i) {
                match &backups[j] {
                    Some(b) => {
                        let _ = fs::rename(b, done);
                    }
                    None => {
                        let _ = fs::remove_file(done);
                    }
                }
            }
            cleanup(&temps[i..], &backups[i..]);
            return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())));
        }
    }
    cleanup(&[], &backups);
    for (path, _) in files {
        sync_dir(path.parent());
    }
    Ok(())
}

/// Give the new file `new` (open, not yet renamed over `path`) the permissions of the file it
/// replaces: a rename would otherwise turn a model kept private (0600) or read-only (0444)
/// into the umask's default.
fn keep_mode(path: &Path, new: &File) -> io::Result<()> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_file() => new.set_permissions(meta.permissions()),
        _ => Ok(()),
    }
}

/// Keep `path`'s bytes at `backup` until the new file is in place. A hard link costs no copy;
/// the kernel refuses one to a file another user owns (`protected_hardlinks`), which a rename
/// may still replace, so the bytes are copied then.
fn keep_backup(
    path: &Path,
    backup: &Path,
    link: impl Fn(&Path, &Path) -> io::Result<()>,
) -> io::Result<()> {
    if link(path, backup).is_ok() {
        return Ok(());
    }
    let _ = fs::remove_file(backup);
    fs::copy(path, backup).map(|_| ())
}

/// Best-effort fsync of a directory so a rename survives a crash (not supported everywhere).
pub fn sync_dir(dir: Option<&Path>) {
    if let Some(dir) = dir {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_staging_folders_of_a_gone_builder_are_removed_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let stale = [
            format!(".20260101T000000Z-abc123.staging-{gone}"),
            format!(".composite.compose-{gone}"),
            format!(".shop.init-{gone}"),
            format!(".composite.compose-old-{gone}"),
        ];
        let kept = [
            format!(".s1.staging-{me}"),
            format!(".composite.compose-new-{gone}"),
            format!(".s1.other-{gone}"),
            format!("s1.staging-{gone}"),
            "20260101T000000Z-abc123".to_string(),
        ];
        for name in stale.iter().chain(&kept) {
            fs::create_dir_all(tmp.path().join(name).join("inner")).unwrap();
        }
        assert_eq!(
            remove_stale_staging_dirs(tmp.path(), Some("other")),
            Vec::<PathBuf>::new(),
            "another target's folders are not touched"
        );
        let removed = remove_stale_staging_dirs(tmp.path(), None);
        let mut expected: Vec<PathBuf> = stale.iter().map(|n| tmp.path().join(n)).collect();
        expected.sort();
        assert_eq!(removed, expected);
        for name in &kept {
            assert!(tmp.path().join(name).is_dir(), "{name} kept");
        }
        assert_eq!(staging_name_pid(".x.staging-12"), Some(12));
        assert_eq!(staging_name_pid(".x.compose-old-12"), Some(12));
        assert_eq!(staging_name_pid(".staging-12"), None);
    }

    #[test]
    fn stale_staging_folders_are_found_by_a_predicate_on_their_target() {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let stale = format!(".wraith-composite-{gone}-17.compose-{gone}");
        let other = format!(".x.compose-{gone}");
        for name in [&stale, &other] {
            fs::create_dir_all(tmp.path().join(name)).unwrap();
        }
        let removed =
            remove_stale_staging_dirs_where(tmp.path(), |t| t.starts_with("wraith-composite-"));
        assert_eq!(removed, vec![tmp.path().join(&stale)]);
        assert!(tmp.path().join(&other).is_dir(), "another target is kept");
    }

    #[test]
    fn write_atomic_all_changes_no_file_when_one_cannot_be_written() {
        let dir = std::env::temp_dir().join(format!("wraith-fsutil-all-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let (model, symbols) = (dir.join("model.json"), dir.join("symbols.json"));
        write_atomic_all(&[(&model, b"m1"), (&symbols, b"s1")]).unwrap();
        assert_eq!(fs::read(&model).unwrap(), b"m1");
        assert_eq!(fs::read(&symbols).unwrap(), b"s1");
        write_atomic_all(&[(&model, b"m2"), (&symbols, b"s2")]).unwrap();
        assert_eq!(fs::read(&model).unwrap(), b"m2");

        // A folder where the second file goes: the first keeps its old bytes.
        fs::remove_file(&symbols).unwrap();
        fs::create_dir(&symbols).unwrap();
        assert!(write_atomic_all(&[(&model, b"m3"), (&symbols, b"s3")]).is_err());
        assert_eq!(fs::read(&model).unwrap(), b"m2");
        let mut names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["model.json", "symbols.json"],
            "no temp or backup left"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_backup_the_kernel_will_not_link_is_copied() {
        let dir = std::env::temp_dir().join(format!("wraith-fsutil-keep-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let (path, backup) = (dir.join("model.json"), dir.join(".model.json.bak"));
        fs::write(&path, b"old").unwrap();
        let refused = |_: &Path, _: &Path| -> io::Result<()> {
            Err(io::Error::from(io::ErrorKind::PermissionDenied))
        };
        keep_backup(&path, &backup, refused).unwrap();
        assert_eq!(fs::read(&backup).unwrap(), b"old");
        // A folder is refused by name before anything is written.
        fs::remove_file(&path).unwrap();
        fs::create_dir(&path).unwrap();
        let err = write_atomic_all(&[(&path, b"new")]).unwrap_err();
        assert!(
            err.to_string().contains("is a folder where a file belongs"),
            "{err}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn write_atomic_through_a_link_replaces_the_file_it_names_and_keeps_the_link() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real.json");
        fs::write(&real, "old").unwrap();
        let link = tmp.path().join("link.json");
        let chain = tmp.path().join("chain.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        std::os::unix::fs::symlink(&link, &chain).unwrap();
        write_atomic(&chain, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            fs::symlink_metadata(&chain)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        // A link to nothing yet: the file is created where it points.
        let dangling = tmp.path().join("dangling.json");
        std::os::unix::fs::symlink("later.json", &dangling).unwrap();
        write_atomic(&dangling, b"made").unwrap();
        assert_eq!(
            fs::read_to_string(tmp.path().join("later.json")).unwrap(),
            "made"
        );
        write_atomic_all(&[(&chain, b"both")]).unwrap();
        assert!(
            fs::symlink_metadata(&chain)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "both");
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 5, "no temp file left: {names:?}");
        // A loop is an error, not a hang.
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", &b).unwrap();
        let e = write_atomic(&a, b"x").unwrap_err();
        assert!(
            e.to_string().contains("too many levels of symbolic links"),
            "{e}"
        );
    }

    /// A fifo stands for any file that is not a regular one (`/dev/null`, `/dev/stdout`): it is
    /// written into, never replaced by a regular file.
    #[cfg(unix)]
    #[test]
    fn write_atomic_writes_into_a_fifo_and_leaves_it_a_fifo() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("ready.fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                File::open(&fifo)
                    .unwrap()
                    .read_to_string(&mut text)
                    .unwrap();
                text
            })
        };
        write_atomic(&fifo, b"ready").unwrap();
        // Checked before joining: a fifo replaced by a file would leave the reader waiting.
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), "ready");
        let e = write_atomic_all(&[(&fifo, b"x")]).unwrap_err();
        assert!(e.to_string().contains("is not a regular file"), "{e}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(
            fs::read_dir(tmp.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let (one, two) = (
            tmp.path().join("model.json"),
            tmp.path().join("symbols.json"),
        );
        for (p, mode) in [(&one, 0o600), (&two, 0o444)] {
            fs::write(p, "old").unwrap();
            fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
        }
        write_atomic(&one, b"new").unwrap();
        write_atomic_all(&[(&one, b"m"), (&two, b"s")]).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&one), mode(&two)), (0o600, 0o444));
        assert_eq!(fs::read_to_string(&two).unwrap(), "s");
    }

    #[test]
    fn write_atomic_replaces_whole_file_and_leaves_no_temp() {
        let dir = std::env::temp_dir().join(format!("wraith-fsutil-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two!").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two!");
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Names in `dir`, sorted.
    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A write whose rename fails (a folder holding files where the file goes) removes the temp
    /// file it wrote beside the destination: a failed write leaves the folder as it was.
    #[test]
    fn write_atomic_leaves_no_temp_file_when_the_rename_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("model.json");
        fs::create_dir(&dest).unwrap();
        fs::write(dest.join("kept"), b"x").unwrap();
        assert!(write_atomic(&dest, b"new").is_err());
        assert_eq!(names_in(tmp.path()), ["model.json"], "no temp left");
        assert_eq!(names_in(&dest), ["kept"]);
    }

    /// When a later file's rename fails after earlier ones took their place, the earlier
    /// files are put back: an existing one to its previous bytes, a new one removed. (A
    /// destination spelled with a trailing slash, naming no folder, passes the checks before
    /// the renames and fails its own rename.)
    #[cfg(unix)]
    #[test]
    fn write_atomic_all_puts_earlier_files_back_when_a_later_rename_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let (model, fresh) = (tmp.path().join("model.json"), tmp.path().join("fresh.json"));
        fs::write(&model, b"old").unwrap();
        let unrenamable = tmp.path().join("missing/");
        let err = write_atomic_all(&[
            (&model, b"new"),
            (&fresh, b"fresh"),
            (&unrenamable, b"never"),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
        assert_eq!(fs::read(&model).unwrap(), b"old");
        assert_eq!(
            names_in(tmp.path()),
            ["model.json"],
            "the new file removed, no temp or backup left"
        );
    }

    #[test]
    fn temp_names_are_recognized_only_in_the_writers_own_pattern() {
        let made = temp_path_beside(Path::new("model/twin.wir.json"));
        let made = made.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(temp_name_pid(&made), Some(std::process::id()));
        assert_eq!(temp_name_pid(".000010.wrec.zst.tmp-4242-7"), Some(4242));
        for other in [
            "000010.wrec.zst",
            ".000010.wrec.zst.tmp-",
            ".000010.wrec.zst.tmp-42",
            ".000010.wrec.zst.tmp-42-",
            ".000010.wrec.zst.tmp-x-1",
            "..tmp-1-2",
            "notes.tmp-1-2",
            ".s1.staging-42",
        ] {
            assert_eq!(temp_name_pid(other), None, "{other}");
        }
    }

    #[test]
    fn stale_temp_files_of_a_gone_writer_are_removed_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let session = tmp.path().join("recordings/sessions/s1");
        fs::create_dir_all(&session).unwrap();
        let staging = tmp.path().join("recordings/sessions/.s2.staging-1");
        fs::create_dir_all(&staging).unwrap();
        // A process that has exited: its id names no running process (until reused).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let stale = session.join(format!(".000003.wrec.zst.tmp-{gone}-0"));
        let mine = session.join(format!(".000004.wrec.zst.tmp-{}-0", std::process::id()));
        let kept = [
            mine.clone(),
            session.join("000000.wrec.zst"),
            session.join(format!(".notes.tmp-{gone}")),
            staging.join(format!(".000000.wrec.zst.tmp-{gone}-0")),
        ];
        for p in kept.iter().chain([&stale]) {
            fs::write(p, b"x").unwrap();
        }
        // The recorder's write-check folder, of a killed recorder and of this process.
        let sessions = tmp.path().join("recordings/sessions");
        let probe = sessions.join(format!(".write-check.tmp-{gone}-0"));
        let live_probe = sessions.join(format!(".write-check.tmp-{}-1", std::process::id()));
        for dir in [&probe, &live_probe] {
            fs::create_dir_all(dir).unwrap();
            fs::write(dir.join("probe"), b"x").unwrap();
        }
        assert_eq!(
            remove_stale_temp_files(tmp.path()),
            vec![probe.clone(), stale.clone()]
        );
        assert!(!stale.exists() && !probe.exists());
        assert!(live_probe.exists());
        for p in &kept {
            assert!(p.exists(), "{} was removed", p.display());
        }
    }

    #[test]
    fn leftovers_of_dead_runs_are_removed_and_live_runs_links_and_others_kept() {
        if !Path::new("/proc/self").exists() {
            return; // nothing is removed where liveness cannot be told
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // No process has an id this large (Linux caps them far below).
        let dead = 4_000_000_000u32;
        let me = std::process::id();
        std::fs::write(d.join(format!("wraith-wire-{dead}-1.log")), "x").unwrap();
        std::fs::create_dir_all(d.join(format!("wraith-wire-{dead}-2/inner"))).unwrap();
        std::fs::write(d.join(format!("wraith-wire-{me}-3.log")), "x").unwrap();
        std::fs::write(d.join("wraith-wire-notapid-4.log"), "x").unwrap();
        std::fs::write(d.join(format!("other-{dead}-5.log")), "x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(d.join("nowhere"), d.join(format!("wraith-wire-{dead}-6")))
            .unwrap();
        let removed = remove_leftovers_of_dead_runs(d, "wraith-wire-");
        let names: Vec<String> = removed
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                format!("wraith-wire-{dead}-1.log"),
                format!("wraith-wire-{dead}-2")
            ]
        );
        let mut left: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = vec![
            format!("other-{dead}-5.log"),
            "wraith-wire-notapid-4.log".to_string(),
            format!("wraith-wire-{me}-3.log"),
        ];
        #[cfg(unix)]
        want.push(format!("wraith-wire-{dead}-6"));
        want.sort();
        assert_eq!(left, want);
    }
}
