//! Recording sessions on disk: `recordings/sessions/<session_id>/NNNNNN.wrec.zst` + `manifest.json`.
//!
//! Reading is strict (a corrupt file is an error naming it); writing is atomic per file, and a
//! session with no exchanges leaves nothing behind.

use std::fs;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::RecordingError;
use crate::exchange::{Exchange, RecordedSession};
use crate::fsutil::{sync_dir, write_atomic};
use crate::manifest::Manifest;
use crate::scrub::ScrubbedExchange;
use crate::wrec::{encode_exchange_limited, read_exchange};

/// Version written into new manifests' `tool_version`.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
/// `schema_version` of manifests this crate writes.
pub const MANIFEST_SCHEMA_VERSION: u32 = 1;
/// File name of a session's manifest.
pub const MANIFEST_FILE: &str = "manifest.json";
/// Suffix of exchange files.
pub const WREC_SUFFIX: &str = ".wrec.zst";

/// A new session id: `<UTC yyyymmddThhmmssZ>-<6 hex>`, e.g. `20260706T235828Z-a23ed7`.
/// The time comes from the caller (`now_us`, unix microseconds) so ids are testable.
pub fn new_session_id<R: rand::Rng + ?Sized>(now_us: u64, rng: &mut R) -> String {
    let secs = (now_us / 1_000_000) as i64;
    let stamp = jiff::Timestamp::from_second(secs)
        .map(|t| t.strftime("%Y%m%dT%H%M%SZ").to_string())
        .unwrap_or_else(|_| "19700101T000000Z".to_string());
    let suffix = rng.next_u32() & 0x00ff_ffff;
    format!("{stamp}-{suffix:06x}")
}

/// True when `id` has the shape of a session id (it becomes a directory name).
pub fn is_valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// File name of exchange `index`: six zero-padded digits.
pub fn exchange_file_name(index: u64) -> String {
    format!("{index:06}{WREC_SUFFIX}")
}

/// Read and decode one `.wrec.zst` file; errors name the file.
pub fn read_exchange_file(path: &Path) -> Result<Exchange, RecordingError> {
    let bytes = crate::fsutil::read_file(path).map_err(|e| RecordingError::io("read", path, e))?;
    read_exchange(&bytes).map_err(|e| RecordingError::CorruptFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Put in place every exchange file a recorder killed outright (SIGKILL) had written whole but
/// not yet renamed: in each session folder under `sessions_dir`, a temp file
/// `.NNNNNN.wrec.zst.tmp-<pid>-<n>` whose writer is gone, whose exchange file is absent, and
/// which decodes to exchange `NNNNNN`. The recorder answers its client before that rename, so
/// without this the next command's sweep of temp files would lose an answered exchange. A temp
/// file that does not decode (cut mid-write) is left for that sweep. Best effort. Returns the
/// exchange files recovered, sorted.
pub fn recover_written_exchanges(sessions_dir: &Path) -> Vec<PathBuf> {
    let mut recovered = Vec::new();
    let Ok(sessions) = fs::read_dir(sessions_dir) else {
        return recovered;
    };
    for session in sessions.flatten() {
        if session.file_name().to_string_lossy().starts_with('.')
            || !session.file_type().is_ok_and(|k| k.is_dir())
        {
            continue;
        }
        let Ok(files) = fs::read_dir(session.path()) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            // `.<target>.tmp-<pid>-<n>`: the target is an exchange file's name.
            let Some((target, pid)) = crate::fsutil::temp_name_parts(&name) else {
                continue;
            };
            let Some(index) = target
                .strip_suffix(WREC_SUFFIX)
                .filter(|digits| digits.len() == 6)
                .and_then(|digits| digits.parse::<u64>().ok())
            else {
                continue;
            };
            let (from, to) = (file.path(), session.path().join(target));
            if !file.file_type().is_ok_and(|k| k.is_file())
                || to.symlink_metadata().is_ok()
                || !crate::fsutil::writer_gone(pid, &from)
                || read_indexed_exchange_file(&from, index).is_err()
            {
                continue;
            }
            if fs::rename(&from, &to).is_ok() {
                recovered.push(to);
            }
        }
    }
    recovered.sort();
    recovered
}

/// [`read_exchange_file`] for the file of exchange `index` of its session: an exchange whose
/// `correlation.exchange_index` is another is refused as corrupt, naming the file.
fn read_indexed_exchange_file(path: &Path, index: u64) -> Result<Exchange, RecordingError> {
    let ex = read_exchange_file(path)?;
    index_matches(&ex, index).map_err(|reason| RecordingError::CorruptFile {
        path: path.to_path_buf(),
        reason,
    })?;
    Ok(ex)
}

/// Whether the exchange holds the index its file name gives (a file renamed, or copied from
/// another place in the session, does not).
fn index_matches(ex: &Exchange, index: u64) -> Result<(), String> {
    if ex.correlation.exchange_index == index {
        return Ok(());
    }
    Err(format!(
        "correlation.exchange_index is {}, not {index}, the index its file name gives (a file \
         renamed, or copied from another place)",
        ex.correlation.exchange_index
    ))
}

/// Every session under `sessions_dir`, sorted by session id, each with its exchanges in index
/// order. A missing `sessions_dir` means no recordings yet (empty list). Hidden entries (names
/// starting with `.`) are staging areas of writers in progress and are skipped. A session folder
/// without `manifest.json` (a recorder that crashed) is read with a manifest rebuilt from its
/// exchanges and `complete: false`.
pub fn read_sessions(sessions_dir: &Path) -> Result<Vec<RecordedSession>, RecordingError> {
    let entries = match fs::read_dir(sessions_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(RecordingError::io("list", sessions_dir, e)),
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| RecordingError::io("list", sessions_dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !entry.path().is_dir() {
            continue;
        }
        dirs.push((name, entry.path()));
    }
    dirs.sort();
    // Decoding is CPU-bound (zstd + CBOR): sessions are spread over rayon's pool (the one the
    // caller runs in, else the global one). Results come back in id order, and the error is
    // that of the first failing session in id order, whatever thread met it first.
    if dirs.len() < 2 || rayon::current_num_threads() == 1 {
        return dirs
            .iter()
            .map(|(name, dir)| read_session(dir, name))
            .collect();
    }
    let read: Vec<Result<RecordedSession, RecordingError>> = dirs
        .par_iter()
        .map(|(name, dir)| read_session(dir, name))
        .collect();
    read.into_iter().collect()
}

/// Read one session folder (see [`read_sessions`]).
pub fn read_session(dir: &Path, session_id: &str) -> Result<RecordedSession, RecordingError> {
    let mut files = Vec::new();
    let listing = fs::read_dir(dir).map_err(|e| RecordingError::io("list", dir, e))?;
    for entry in listing {
        let entry = entry.map_err(|e| RecordingError::io("list", dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if let Some(stem) = name.strip_suffix(WREC_SUFFIX) {
            let index: u64 = stem.parse().map_err(|_| RecordingError::CorruptFile {
                path: entry.path(),
                reason: "exchange file names are a zero-padded index like 000000.wrec.zst"
                    .to_string(),
            })?;
            files.push((index, entry.path()));
        }
    }
    files.sort();
    let mut exchanges = Vec::with_capacity(files.len());
    for (index, path) in &files {
        exchanges.push(read_indexed_exchange_file(path, *index)?);
    }
    let manifest_path = dir.join(MANIFEST_FILE);
    let manifest = match crate::fsutil::read_file(&manifest_path) {
        Ok(bytes) => parse_manifest(&bytes).map_err(|e| RecordingError::Manifest {
            path: manifest_path.clone(),
            reason: format!(
                "{e}; fix the JSON, or delete the file: a session without a manifest is read \
                 with one rebuilt from its exchanges"
            ),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            rebuilt_manifest(session_id, &exchanges)
        }
        Err(e) => return Err(RecordingError::io("read", &manifest_path, e)),
    };
    Ok(RecordedSession {
        manifest,
        exchanges,
    })
}

/// A session folder that reads without error but does not hold together: what
/// [`check_sessions`] finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionProblem {
    /// Exchange files are missing: indexes below the manifest's `exchange_count` (or below the
    /// highest index present) that have no `NNNNNN.wrec.zst`. `missing` holds inclusive ranges
    /// of indexes, in order.
    MissingExchanges {
        folder: String,
        /// The manifest's `exchange_count`; `None` without a (readable) manifest.
        manifest_count: Option<u64>,
        present: u64,
        missing: Vec<(u64, u64)>,
    },
    /// `manifest.json` names another session than its folder.
    IdMismatch { folder: String, session_id: String },
    /// `manifest.json` is there but cannot be read or is not a manifest (damaged JSON, a
    /// field of the wrong type): reading the session refuses it.
    BadManifest {
        folder: String,
        reason: String,
        /// The IO error's kind when the file could not be read at all.
        io_kind: Option<std::io::ErrorKind>,
    },
    /// An exchange file is there but cannot be read or decoded (truncated, damaged, not a
    /// WREC file): reading the session refuses it.
    BadExchange {
        folder: String,
        file: String,
        reason: String,
        /// The IO error's kind when the file could not be read at all.
        io_kind: Option<std::io::ErrorKind>,
    },
    /// The session folder is there but cannot be listed (its permissions): reading the
    /// recordings stops on it.
    UnreadableFolder { folder: String, reason: String },
    /// `manifest.json` counts fewer exchanges than the folder holds, without a gap: every file
    /// present is used, the count is wrong.
    CountBelowFiles {
        folder: String,
        manifest_count: u64,
        present: u64,
    },
    /// `manifest.json` says the session ended before it started: one of the two times was
    /// edited or written by another tool. Synth orders recorded runs by the start time, so
    /// which one is wrong matters.
    EndBeforeStart {
        folder: String,
        start_time_us: u64,
        end_time_us: u64,
    },
}

impl SessionProblem {
    /// The session folder's name.
    pub fn folder(&self) -> &str {
        match self {
            SessionProblem::MissingExchanges { folder, .. }
            | SessionProblem::IdMismatch { folder, .. }
            | SessionProblem::BadManifest { folder, .. }
            | SessionProblem::BadExchange { folder, .. }
            | SessionProblem::UnreadableFolder { folder, .. }
            | SessionProblem::CountBelowFiles { folder, .. }
            | SessionProblem::EndBeforeStart { folder, .. } => folder,
        }
    }

    /// Number of missing exchange files (0 for other problems).
    pub fn missing_count(&self) -> u64 {
        match self {
            SessionProblem::MissingExchanges { missing, .. } => missing
                .iter()
                .map(|(a, b)| b.saturating_sub(*a).saturating_add(1))
                .fold(0, u64::saturating_add),
            SessionProblem::IdMismatch { .. }
            | SessionProblem::BadManifest { .. }
            | SessionProblem::BadExchange { .. }
            | SessionProblem::UnreadableFolder { .. }
            | SessionProblem::CountBelowFiles { .. }
            | SessionProblem::EndBeforeStart { .. } => 0,
        }
    }
}

impl std::fmt::Display for SessionProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionProblem::MissingExchanges {
                folder,
                manifest_count,
                present,
                missing,
            } => {
                const SHOWN: usize = 10;
                let mut list: Vec<String> = missing
                    .iter()
                    .take(SHOWN)
                    .map(|&(a, b)| {
                        if a == b {
                            exchange_file_name(a)
                        } else {
                            format!("{} to {}", exchange_file_name(a), exchange_file_name(b))
                        }
                    })
                    .collect();
                if missing.len() > SHOWN {
                    list.push(format!("and {} more range(s)", missing.len() - SHOWN));
                }
                // Every file the manifest counts is there and more lie past them: the gap is
                // between the session's last exchange and files that may not belong to it.
                if let Some(n) = *manifest_count
                    && missing.iter().all(|&(a, _)| a >= n)
                {
                    return write!(
                        f,
                        "session {folder}: manifest.json says {n} exchange(s) and they are all \
                         there, but {} more file(s) lie past them after a gap ({} missing); \
                         remove the files that do not belong to this session, or restore the \
                         missing ones and fix exchange_count (until then every exchange \
                         present is used)",
                        present.saturating_sub(n),
                        list.join(", ")
                    );
                }
                let says = match manifest_count {
                    Some(n) => format!("manifest.json says {n} exchange(s), "),
                    None => String::new(),
                };
                write!(
                    f,
                    "session {folder}: {says}{} exchange file(s) missing ({}), {present} present; \
                     restore the missing files, or move the session folder out of \
                     recordings/sessions/ and record it again (until then only the exchanges \
                     present are used)",
                    self.missing_count(),
                    list.join(", ")
                )
            }
            SessionProblem::IdMismatch { folder, session_id } => write!(
                f,
                "session {folder}: its manifest.json says session_id `{session_id}`, not the \
                 folder's name (a copied session folder keeps its original's id, and two sessions \
                 with one id are mixed up); rename the folder to `{session_id}` or set \
                 `session_id` to `{folder}`"
            ),
            SessionProblem::BadManifest { folder, reason, .. } => write!(
                f,
                "session {folder}: manifest.json is not a readable manifest ({reason}), so every \
                 command that reads the recordings stops on it; fix the JSON, or delete the file: \
                 a session without a manifest is read with one rebuilt from its exchanges"
            ),
            SessionProblem::BadExchange {
                folder,
                file,
                reason,
                ..
            } => write!(
                f,
                "session {folder}: {file} cannot be read ({reason}), so every command that \
                 reads the recordings stops on it; restore the file from a copy, or move the \
                 session folder out of recordings/sessions/ and record it again"
            ),
            SessionProblem::CountBelowFiles {
                folder,
                manifest_count,
                present,
            } => write!(
                f,
                "session {folder}: manifest.json says {manifest_count} exchange(s), but the \
                 folder holds {present} exchange files, {} to {}; every file present is used: \
                 set exchange_count to {present}, or move out the files that do not belong to \
                 this session",
                exchange_file_name(0),
                exchange_file_name(present.saturating_sub(1))
            ),
            SessionProblem::EndBeforeStart {
                folder,
                start_time_us,
                end_time_us,
            } => write!(
                f,
                "session {folder}: manifest.json says the session ended (end_time_us \
                 {end_time_us}) before it started (start_time_us {start_time_us}); set them to \
                 the earliest and the latest timing.request_start_us of its exchanges, or \
                 delete manifest.json to have it rebuilt from the exchanges"
            ),
            SessionProblem::UnreadableFolder { folder, reason } => write!(
                f,
                "session {folder}: the folder cannot be listed ({reason}), so every command \
                 that reads the recordings stops on it; give it read and search permission, or \
                 move it out of recordings/sessions/"
            ),
        }
    }
}

/// The session folders under `sessions_dir` (name, path), by name; hidden ones (writers'
/// staging areas) left out, and none when the folder cannot be listed. A symbolic link to a
/// folder counts, as [`read_sessions`] reads it: the checks see every session the readers use.
fn session_dirs(sessions_dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(sessions_dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| !name.starts_with('.'))
        .collect();
    dirs.sort();
    dirs
}

/// Read and decode every exchange file of every session folder under `sessions_dir`, as
/// reading the sessions does, and report each that fails, in folder and file order (the
/// integrity check `wraith lint` runs; the commands that read sessions stop on the first).
/// Folders and files that cannot be listed are left out.
pub fn check_exchange_files(sessions_dir: &Path) -> Vec<SessionProblem> {
    let mut problems = Vec::new();
    for (folder, dir) in session_dirs(sessions_dir) {
        // A folder that cannot be listed is reported by `check_sessions`.
        let Ok(listing) = fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<(String, PathBuf)> = listing
            .flatten()
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .filter(|(name, _)| name.ends_with(WREC_SUFFIX) && !name.starts_with('.'))
            .collect();
        files.sort();
        for (file, path) in files {
            let index = file
                .strip_suffix(WREC_SUFFIX)
                .and_then(|stem| stem.parse::<u64>().ok());
            let (reason, io_kind) = match crate::fsutil::read_file(&path) {
                Ok(bytes) => match read_exchange(&bytes) {
                    Ok(ex) => match index.map(|i| index_matches(&ex, i)) {
                        Some(Err(reason)) => (reason, None),
                        _ => continue,
                    },
                    Err(e) => (e.to_string(), None),
                },
                Err(e) => (format!("cannot read it: {e}"), Some(e.kind())),
            };
            problems.push(SessionProblem::BadExchange {
                folder: folder.clone(),
                file,
                reason,
                io_kind,
            });
        }
    }
    problems
}

/// A `manifest.json` of the version this crate reads. Another version is refused, not read as
/// if its fields meant what this version's do.
fn parse_manifest(bytes: &[u8]) -> Result<Manifest, String> {
    let m = serde_json::from_slice::<Manifest>(bytes).map_err(|e| e.to_string())?;
    if m.schema_version != MANIFEST_SCHEMA_VERSION {
        return Err(format!(
            "schema_version {} is not one this wraith reads ({MANIFEST_SCHEMA_VERSION})",
            m.schema_version
        ));
    }
    Ok(m)
}

/// Check every session folder under `sessions_dir` for what reading does not catch: exchange
/// files missing below the manifest's `exchange_count` (or between the ones present), a
/// manifest counting fewer exchanges than the folder holds, one naming another session than its
/// folder, one that says the session ended before it started, and a manifest that cannot be
/// read or parsed or a folder that cannot be listed (both of which [`read_sessions`] refuses).
/// Reads folder listings and manifests only, never an exchange. Problems come in folder order.
pub fn check_sessions(sessions_dir: &Path) -> Vec<SessionProblem> {
    let mut problems = Vec::new();
    for (folder, dir) in session_dirs(sessions_dir) {
        let listing = match fs::read_dir(&dir) {
            Ok(listing) => listing,
            Err(e) => {
                problems.push(SessionProblem::UnreadableFolder {
                    folder,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let mut present: Vec<u64> = listing
            .flatten()
            .filter_map(|e| {
                let name = e.file_name();
                let stem = name.to_str()?.strip_suffix(WREC_SUFFIX)?.to_string();
                if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                stem.parse().ok()
            })
            .collect();
        present.sort_unstable();
        present.dedup();
        let manifest = match crate::fsutil::read_file(&dir.join(MANIFEST_FILE)) {
            Ok(bytes) => match parse_manifest(&bytes) {
                Ok(m) => Some(m),
                Err(reason) => {
                    problems.push(SessionProblem::BadManifest {
                        folder: folder.clone(),
                        reason,
                        io_kind: None,
                    });
                    None
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                problems.push(SessionProblem::BadManifest {
                    folder: folder.clone(),
                    reason: format!("cannot read it: {e}"),
                    io_kind: Some(e.kind()),
                });
                None
            }
        };
        if let Some(m) = &manifest
            && m.session_id != folder
        {
            problems.push(SessionProblem::IdMismatch {
                folder: folder.clone(),
                session_id: m.session_id.clone(),
            });
        }
        if let Some(m) = &manifest
            && m.end_time_us < m.start_time_us
        {
            problems.push(SessionProblem::EndBeforeStart {
                folder: folder.clone(),
                start_time_us: m.start_time_us,
                end_time_us: m.end_time_us,
            });
        }
        // Every index below `end` should have its file.
        let end = manifest
            .as_ref()
            .map(|m| m.exchange_count)
            .unwrap_or(0)
            .max(present.last().map_or(0, |&i| i.saturating_add(1)));
        let mut missing = Vec::new();
        let mut next = 0u64;
        for &i in present.iter().chain(std::iter::once(&end)) {
            if i > next {
                missing.push((next, i - 1));
            }
            next = next.max(i.saturating_add(1));
        }
        if !missing.is_empty() {
            problems.push(SessionProblem::MissingExchanges {
                folder,
                manifest_count: manifest.map(|m| m.exchange_count),
                present: present.len() as u64,
                missing,
            });
        } else if let Some(m) = &manifest
            && m.exchange_count < present.len() as u64
        {
            problems.push(SessionProblem::CountBelowFiles {
                folder,
                manifest_count: m.exchange_count,
                present: present.len() as u64,
            });
        }
    }
    problems
}

fn rebuilt_manifest(session_id: &str, exchanges: &[Exchange]) -> Manifest {
    let first = exchanges.first();
    let starts = exchanges.iter().map(|e| e.timing.request_start_us);
    Manifest {
        complete: false,
        end_time_us: starts.clone().max().unwrap_or(0),
        exchange_count: exchanges.len() as u64,
        policy_hash: first
            .map(|e| e.safety.policy_hash.clone())
            .unwrap_or_default(),
        proxy_mode: "unknown".to_string(),
        schema_version: MANIFEST_SCHEMA_VERSION,
        session_id: session_id.to_string(),
        start_time_us: starts.min().unwrap_or(0),
        tags: first
            .map(|e| e.correlation.tags.clone())
            .unwrap_or_default(),
        tool_version: String::new(),
    }
}

/// Manifest JSON as written to disk: sorted keys, one line, trailing newline.
pub fn manifest_json(m: &Manifest) -> Vec<u8> {
    // Manifest's fields are declared in sorted order, so plain serialization is canonical.
    let mut v = serde_json::to_vec(m).unwrap_or_default();
    v.push(b'\n');
    v
}

/// What a session records about itself besides its exchanges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionMeta {
    pub session_id: String,
    pub tags: Vec<String>,
    /// `"reverse"` for the recording proxy, `"import"` for HAR import.
    pub proxy_mode: String,
    /// Hash of the scrub policy the exchanges were scrubbed with.
    pub policy_hash: String,
}

/// Writes one recording session. Exchanges are appended one file each (atomically); the folder
/// is created with the first exchange, so an abandoned session with no exchanges leaves nothing.
///
/// In staged mode ([`SessionWriter::staged`]) everything is written into a hidden folder beside
/// the final one and renamed into place by [`SessionWriter::finish`], so readers never see a
/// half-written session (HAR import uses this).
#[derive(Debug)]
pub struct SessionWriter {
    final_dir: PathBuf,
    write_dir: PathBuf,
    staged: bool,
    meta: SessionMeta,
    count: u64,
    start_us: u64,
    end_us: u64,
    created: bool,
    finished: bool,
    /// Files written into the staging folder, synced to disk by `finish`.
    staged_files: Vec<PathBuf>,
    /// A smaller limit than [`crate::wrec::MAX_EXCHANGE_BYTES`], for a test.
    #[cfg(test)]
    max_exchange_bytes: u64,
}

impl SessionWriter {
    /// A writer for `sessions_dir/<meta.session_id>/`, writing in place.
    pub fn new(sessions_dir: &Path, meta: SessionMeta) -> Result<SessionWriter, RecordingError> {
        Self::build(sessions_dir, meta, false)
    }

    /// A writer that stages the session in a hidden folder until [`SessionWriter::finish`].
    pub fn staged(sessions_dir: &Path, meta: SessionMeta) -> Result<SessionWriter, RecordingError> {
        Self::build(sessions_dir, meta, true)
    }

    fn build(
        sessions_dir: &Path,
        meta: SessionMeta,
        staged: bool,
    ) -> Result<SessionWriter, RecordingError> {
        if !is_valid_session_id(&meta.session_id) {
            return Err(RecordingError::Manifest {
                path: sessions_dir.join(&meta.session_id),
                reason: "a session id may hold only letters, digits, `-` and `_`".to_string(),
            });
        }
        let final_dir = sessions_dir.join(&meta.session_id);
        if final_dir.exists() {
            return Err(RecordingError::Manifest {
                path: final_dir,
                reason: "a session with this id already exists".to_string(),
            });
        }
        let write_dir = if staged {
            sessions_dir.join(format!(
                ".{}.staging-{}",
                meta.session_id,
                std::process::id()
            ))
        } else {
            final_dir.clone()
        };
        Ok(SessionWriter {
            final_dir,
            write_dir,
            staged,
            meta,
            count: 0,
            start_us: 0,
            end_us: 0,
            created: false,
            finished: false,
            staged_files: Vec::new(),
            #[cfg(test)]
            max_exchange_bytes: crate::wrec::MAX_EXCHANGE_BYTES,
        })
    }

    pub fn session_id(&self) -> &str {
        &self.meta.session_id
    }

    /// The session's folder once finished.
    pub fn dir(&self) -> &Path {
        &self.final_dir
    }

    /// Exchanges written so far.
    pub fn exchange_count(&self) -> u64 {
        self.count
    }

    /// Append one scrubbed exchange as the next `NNNNNN.wrec.zst`. The writer sets
    /// `correlation.exchange_index` (the file's index) and `correlation.tags` (the session's tags).
    /// Returns the index. An exchange whose CBOR payload is larger than
    /// [`crate::wrec::MAX_EXCHANGE_BYTES`] is refused ([`RecordingError::ExchangeTooLarge`],
    /// naming it) and nothing is written for it.
    pub fn append(&mut self, exchange: ScrubbedExchange) -> Result<u64, RecordingError> {
        let index = self.count;
        let mut ex = exchange.into_inner();
        ex.correlation.exchange_index = index;
        ex.correlation.tags = self.meta.tags.clone();
        let path = self.write_dir.join(exchange_file_name(index));
        // An exchange past `MAX_EXCHANGE_BYTES` is refused before anything is written (the
        // folder included): its file would be one no reader takes back. The index stays free
        // for the next exchange, so the session has no gap.
        #[cfg(test)]
        let limit = self.max_exchange_bytes;
        #[cfg(not(test))]
        let limit = crate::wrec::MAX_EXCHANGE_BYTES;
        let bytes = encode_exchange_limited(&ex, limit).map_err(|e| match e {
            RecordingError::ExchangeTooLarge { size, limit, .. } => {
                RecordingError::ExchangeTooLarge {
                    what: format!(
                        "exchange {index} of session {} ({} {})",
                        self.meta.session_id, ex.request.method, ex.request.path
                    ),
                    size,
                    limit,
                }
            }
            e => e,
        })?;
        if !self.created {
            fs::create_dir_all(&self.write_dir)
                .map_err(|e| RecordingError::io("create", &self.write_dir, e))?;
            self.created = true;
        }
        if self.staged {
            // The staging folder is hidden and moved into place whole, so a plain write is
            // already all-or-nothing for readers; durability is settled once in `finish`.
            fs::write(&path, bytes).map_err(|e| RecordingError::io("write", &path, e))?;
            self.staged_files.push(path);
        } else {
            write_atomic(&path, &bytes).map_err(|e| RecordingError::io("write", &path, e))?;
        }
        // Exchanges are written as they complete, so under concurrent traffic a later one can
        // have started first: the session spans the earliest and the latest start.
        let start = ex.timing.request_start_us;
        if index == 0 {
            (self.start_us, self.end_us) = (start, start);
        } else {
            self.start_us = self.start_us.min(start);
            self.end_us = self.end_us.max(start);
        }
        self.count += 1;
        Ok(index)
    }

    /// The manifest as it would be written now.
    pub fn manifest(&self, complete: bool) -> Manifest {
        Manifest {
            complete,
            end_time_us: self.end_us,
            exchange_count: self.count,
            policy_hash: self.meta.policy_hash.clone(),
            proxy_mode: self.meta.proxy_mode.clone(),
            schema_version: MANIFEST_SCHEMA_VERSION,
            session_id: self.meta.session_id.clone(),
            start_time_us: self.start_us,
            tags: self.meta.tags.clone(),
            tool_version: TOOL_VERSION.to_string(),
        }
    }

    /// Write `manifest.json` with `complete: true` (and move a staged session into place).
    /// Returns `None`, and leaves nothing on disk, when no exchange was appended.
    pub fn finish(self) -> Result<Option<Manifest>, RecordingError> {
        if self.staged {
            return match self.finish_staged()? {
                Some(staged) => {
                    let mut done = commit_staged(vec![staged])?;
                    Ok(done.pop())
                }
                None => Ok(None),
            };
        }
        let mut this = self;
        this.finished = true;
        if this.count == 0 {
            return Ok(None);
        }
        let manifest = this.manifest(true);
        let path = this.write_dir.join(MANIFEST_FILE);
        write_atomic(&path, &manifest_json(&manifest))
            .map_err(|e| RecordingError::io("write", &path, e))?;
        Ok(Some(manifest))
    }

    /// End an in-place session some of whose exchanges could not be written (a full disk):
    /// write `manifest.json` with `complete: false` over what was written, so readers use those
    /// exchanges and `wraith lint` warns that the session is not whole. Returns `None` (and
    /// removes the session's folder when it holds nothing) when no exchange was appended; a
    /// staged session is thrown away, as [`SessionWriter::abandon`] does.
    pub fn finish_incomplete(mut self) -> Result<Option<Manifest>, RecordingError> {
        self.finished = true;
        if self.staged {
            self.cleanup_unfinished();
            return Ok(None);
        }
        if self.count == 0 {
            if self.created {
                // Only an empty folder goes: a file in it is not this writer's.
                let _ = fs::remove_dir(&self.write_dir);
            }
            return Ok(None);
        }
        let manifest = self.manifest(false);
        let path = self.write_dir.join(MANIFEST_FILE);
        write_atomic(&path, &manifest_json(&manifest))
            .map_err(|e| RecordingError::io("write", &path, e))?;
        Ok(Some(manifest))
    }

    /// Staged mode: write the complete manifest into the staging folder but do not move it into
    /// place yet; hand the result to [`commit_staged`], which can settle many sessions with one
    /// round of disk syncs (HAR import of hundreds of files). `None` for an empty session.
    pub fn finish_staged(mut self) -> Result<Option<StagedSession>, RecordingError> {
        self.finished = true;
        if !self.staged {
            return Err(RecordingError::io(
                "stage",
                &self.final_dir,
                std::io::Error::other("finish_staged needs a writer made by SessionWriter::staged"),
            ));
        }
        if self.count == 0 {
            return Ok(None);
        }
        let manifest = self.manifest(true);
        let path = self.write_dir.join(MANIFEST_FILE);
        fs::write(&path, manifest_json(&manifest))
            .map_err(|e| RecordingError::io("write", &path, e))?;
        let mut files = std::mem::take(&mut self.staged_files);
        files.push(path);
        Ok(Some(StagedSession {
            staging_dir: self.write_dir.clone(),
            final_dir: self.final_dir.clone(),
            files,
            manifest,
            committed: false,
        }))
    }

    /// Throw the session away: remove a staged folder; an in-place session keeps what was
    /// written (with an incomplete manifest), since those exchanges were really recorded.
    pub fn abandon(mut self) {
        self.finished = true;
        self.cleanup_unfinished();
    }

    fn cleanup_unfinished(&mut self) {
        if !self.created {
            return;
        }
        if self.staged || self.count == 0 {
            let _ = fs::remove_dir_all(&self.write_dir);
        } else {
            let manifest = self.manifest(false);
            let _ = write_atomic(
                &self.write_dir.join(MANIFEST_FILE),
                &manifest_json(&manifest),
            );
        }
    }
}

/// A finished session still in its hidden staging folder (see [`SessionWriter::finish_staged`]).
/// Dropped without [`commit_staged`], its folder is removed.
#[derive(Debug)]
pub struct StagedSession {
    staging_dir: PathBuf,
    final_dir: PathBuf,
    files: Vec<PathBuf>,
    manifest: Manifest,
    committed: bool,
}

impl StagedSession {
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
}

impl Drop for StagedSession {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.staging_dir);
        }
    }
}

/// Make staged sessions durable and visible: sync every file and staging folder (concurrently),
/// then rename each folder into place, then sync the parent folders once. Each session appears
/// whole or not at all.
pub fn commit_staged(mut staged: Vec<StagedSession>) -> Result<Vec<Manifest>, RecordingError> {
    let mut to_sync: Vec<PathBuf> = Vec::new();
    for s in &staged {
        to_sync.extend(s.files.iter().cloned());
        to_sync.push(s.staging_dir.clone());
    }
    sync_files(&to_sync)?;
    let mut parents: Vec<PathBuf> = Vec::new();
    let mut manifests = Vec::with_capacity(staged.len());
    for s in staged.iter_mut() {
        if s.final_dir.exists() {
            return Err(RecordingError::Manifest {
                path: s.final_dir.clone(),
                reason: "a session with this id appeared while importing; not replacing it"
                    .to_string(),
            });
        }
        fs::rename(&s.staging_dir, &s.final_dir)
            .map_err(|e| RecordingError::io("move into place", &s.final_dir, e))?;
        s.committed = true;
        if let Some(p) = s.final_dir.parent()
            && !parents.iter().any(|x| x == p)
        {
            parents.push(p.to_path_buf());
        }
        manifests.push(s.manifest.clone());
    }
    for p in &parents {
        sync_dir(Some(p));
    }
    Ok(manifests)
}

/// fsync many files; a few threads at once, since each fsync mostly waits on the disk and the
/// filesystem can commit concurrent syncs together. The threads are a pool of their own: they
/// wait on the disk, and must not hold the cores' pool meanwhile. The error is that of the
/// first failing file in order.
fn sync_files(files: &[PathBuf]) -> Result<(), RecordingError> {
    const THREADS: usize = 16;
    // Folders open read-only too; fsync on them settles their entries.
    let sync = |p: &PathBuf| {
        fs::File::open(p)
            .and_then(|f| f.sync_all())
            .map_err(|e| RecordingError::io("sync", p, e))
    };
    if files.len() < 2 {
        return files.iter().try_for_each(sync);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS.min(files.len()))
        .build()
        .map_err(|e| {
            RecordingError::io(
                "sync",
                files[0].parent().unwrap_or(Path::new(".")),
                std::io::Error::other(e),
            )
        })?;
    let synced: Vec<Result<(), RecordingError>> =
        pool.install(|| files.par_iter().map(sync).collect());
    synced.into_iter().collect()
}

impl Drop for SessionWriter {
    fn drop(&mut self) {
        if !self.finished {
            self.cleanup_unfinished();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::*;
    use crate::scrub::{HmacKey, ScrubPolicy, Scrubber};

    fn scrubbed(start_us: u64) -> ScrubbedExchange {
        let ex = Exchange {
            protocol: "http".into(),
            request: RecordedRequest {
                method: "GET".into(),
                path: "/a".into(),
                query: String::new(),
                headers: Headers::new(),
                body: Vec::new().into(),
                content_type: None,
                origin: None,
            },
            response: RecordedResponse {
                status: 200,
                headers: Headers::new(),
                content_type: None,
                trailers: None,
            },
            frames: Vec::new(),
            timing: Timing {
                request_start_us: start_us,
                first_byte_us: start_us,
                last_byte_us: start_us,
            },
            correlation: Correlation::default(),
            safety: Safety::default(),
            content: Content::default(),
            truncated: false,
        };
        Scrubber::new(
            ScrubPolicy::builtin_only(),
            HmacKey::from_bytes(b"k".to_vec()),
        )
        .scrub(ex)
    }

    fn meta(id: &str) -> SessionMeta {
        SessionMeta {
            session_id: id.into(),
            tags: vec!["t".into()],
            proxy_mode: "reverse".into(),
            policy_hash: "ph".into(),
        }
    }

    #[test]
    fn session_id_is_utc_stamp_and_six_hex() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let id = new_session_id(1_783_382_308_735_386, &mut rng);
        assert!(id.starts_with("20260706T235828Z-"), "{id}");
        let hex = &id["20260706T235828Z-".len()..];
        assert_eq!(hex.len(), 6);
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert!(is_valid_session_id(&id));
    }

    use rand::SeedableRng;

    #[test]
    fn writer_appends_indexed_files_and_finishes_with_manifest() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::new(tmp.path(), meta("s1")).unwrap();
        assert_eq!(w.append(scrubbed(10)).unwrap(), 0);
        assert_eq!(w.append(scrubbed(20)).unwrap(), 1);
        let m = w.finish().unwrap().unwrap();
        assert!(m.complete);
        assert_eq!(
            (m.start_time_us, m.end_time_us, m.exchange_count),
            (10, 20, 2)
        );
        let sessions = read_sessions(tmp.path()).unwrap();
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].manifest, m);
        assert_eq!(sessions[0].exchanges[1].correlation.exchange_index, 1);
        assert_eq!(sessions[0].exchanges[1].correlation.tags, ["t"]);
        assert!(tmp.path().join("s1/000001.wrec.zst").is_file());
        let text = std::fs::read_to_string(tmp.path().join("s1/manifest.json")).unwrap();
        assert!(
            text.starts_with("{\"complete\":true,") && text.ends_with("}\n"),
            "{text}"
        );
    }

    #[test]
    fn exchanges_written_out_of_start_order_span_the_earliest_to_the_latest_start() {
        // Concurrent exchanges are written as they complete: a slow one that started first
        // comes last.
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::new(tmp.path(), meta("s1")).unwrap();
        for start in [30, 50, 10, 40] {
            w.append(scrubbed(start)).unwrap();
        }
        let m = w.finish().unwrap().unwrap();
        assert_eq!((m.start_time_us, m.end_time_us), (10, 50));
        // A session whose manifest is lost is rebuilt with the same span.
        std::fs::remove_file(tmp.path().join("s1/manifest.json")).unwrap();
        let rebuilt = read_session(&tmp.path().join("s1"), "s1").unwrap().manifest;
        assert!(!rebuilt.complete);
        assert_eq!((rebuilt.start_time_us, rebuilt.end_time_us), (10, 50));
    }

    #[test]
    fn an_exchange_written_whole_by_a_killed_recorder_is_recovered_and_a_cut_one_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::new(tmp.path(), meta("s1")).unwrap();
        for start in [10, 20, 30, 40] {
            w.append(scrubbed(start)).unwrap();
        }
        drop(w); // killed: no manifest
        let dir = tmp.path().join("s1");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        // 000001: written whole, not renamed. 000002: cut mid-write. 000003: of a live writer.
        let whole = dir.join(format!(".000001.wrec.zst.tmp-{gone}-7"));
        std::fs::rename(dir.join("000001.wrec.zst"), &whole).unwrap();
        let cut = dir.join(format!(".000002.wrec.zst.tmp-{gone}-8"));
        let bytes = std::fs::read(dir.join("000002.wrec.zst")).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        std::fs::remove_file(dir.join("000002.wrec.zst")).unwrap();
        let live = dir.join(format!(".000003.wrec.zst.tmp-{me}-9"));
        std::fs::rename(dir.join("000003.wrec.zst"), &live).unwrap();
        // A whole file whose exchange is already in place is not put over it.
        let twice = dir.join(format!(".000000.wrec.zst.tmp-{gone}-6"));
        std::fs::copy(dir.join("000000.wrec.zst"), &twice).unwrap();

        let recovered = recover_written_exchanges(tmp.path());
        assert_eq!(recovered, vec![dir.join("000001.wrec.zst")]);
        assert!(!whole.exists());
        assert!(cut.exists() && live.exists() && twice.exists());
        let session = read_session(&dir, "s1").unwrap();
        assert_eq!(session.exchanges.len(), 2, "000000 and 000001");
    }

    #[test]
    fn empty_session_leaves_no_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let w = SessionWriter::new(tmp.path(), meta("s1")).unwrap();
        assert!(w.finish().unwrap().is_none());
        drop(SessionWriter::new(tmp.path(), meta("s2")).unwrap());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_exchange_past_the_limit_is_refused_naming_it_and_nothing_is_written_for_it() {
        let tmp = tempfile::tempdir().unwrap();
        // A start time of u64::MAX takes 24 bytes more CBOR than one of 1 (three 9-byte
        // integers for three 1-byte ones): that exchange is past the limit, the others not.
        let limit = crate::wrec::cbor_len(scrubbed(1).exchange()) + 16;
        for staged in [false, true] {
            let id = if staged { "staged" } else { "in-place" };
            let mut w = if staged {
                SessionWriter::staged(tmp.path(), meta(id)).unwrap()
            } else {
                SessionWriter::new(tmp.path(), meta(id)).unwrap()
            };
            w.max_exchange_bytes = limit;
            // First exchange too large: refused, naming it, and no folder is made for it.
            let e = w.append(scrubbed(u64::MAX)).unwrap_err();
            let text = e.to_string();
            assert!(
                matches!(e, RecordingError::ExchangeTooLarge { limit: l, .. } if l == limit),
                "{e:?}"
            );
            assert!(
                text.starts_with(&format!("exchange 0 of session {id} (GET /a) is ")),
                "{text}"
            );
            assert!(
                text.contains(&format!("({limit} bytes) one exchange file")),
                "{text}"
            );
            assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
            // The next exchange takes its place: the session has no gap.
            assert_eq!(w.append(scrubbed(1)).unwrap(), 0);
            assert!(w.append(scrubbed(u64::MAX)).is_err());
            assert_eq!(w.append(scrubbed(2)).unwrap(), 1);
            assert_eq!(w.finish().unwrap().unwrap().exchange_count, 2);
            let session = read_session(&tmp.path().join(id), id).unwrap();
            assert_eq!(session.exchanges.len(), 2);
            std::fs::remove_dir_all(tmp.path().join(id)).unwrap();
        }
    }

    #[test]
    fn a_session_finished_incomplete_keeps_its_exchanges_under_a_manifest_saying_so() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::new(tmp.path(), meta("20260101T000000Z-000001")).unwrap();
        w.append(scrubbed(5)).unwrap();
        let m = w.finish_incomplete().unwrap().unwrap();
        assert!(!m.complete);
        assert_eq!(m.exchange_count, 1);
        let s = read_sessions(tmp.path()).unwrap();
        assert_eq!(s.len(), 1);
        assert!(!s[0].manifest.complete);
        assert_eq!(s[0].manifest.proxy_mode, m.proxy_mode);

        let empty = SessionWriter::new(tmp.path(), meta("20260101T000000Z-000002")).unwrap();
        assert!(empty.finish_incomplete().unwrap().is_none());
        assert!(!tmp.path().join("20260101T000000Z-000002").exists());
    }

    #[test]
    fn dropped_session_with_exchanges_keeps_them_marked_incomplete() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::new(tmp.path(), meta("s1")).unwrap();
        w.append(scrubbed(1)).unwrap();
        drop(w);
        let s = read_sessions(tmp.path()).unwrap();
        assert!(!s[0].manifest.complete);
        assert_eq!(s[0].manifest.exchange_count, 1);
    }

    #[test]
    fn staged_session_is_invisible_until_finished_and_gone_if_abandoned() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::staged(tmp.path(), meta("s1")).unwrap();
        w.append(scrubbed(1)).unwrap();
        assert!(read_sessions(tmp.path()).unwrap().is_empty());
        w.finish().unwrap();
        assert_eq!(read_sessions(tmp.path()).unwrap().len(), 1);
        let mut w = SessionWriter::staged(tmp.path(), meta("s2")).unwrap();
        w.append(scrubbed(1)).unwrap();
        w.abandon();
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["s1"]);
    }

    /// Two files swapped: each holds the other's `correlation.exchange_index`. The readers
    /// refuse the session naming the first, and the lint check names both.
    #[test]
    fn an_exchange_whose_index_is_not_its_file_names_is_refused_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::new(tmp.path(), meta("s1")).unwrap();
        w.append(scrubbed(10)).unwrap();
        w.append(scrubbed(20)).unwrap();
        w.finish().unwrap();
        let (a, b) = (
            tmp.path().join("s1/000000.wrec.zst"),
            tmp.path().join("s1/000001.wrec.zst"),
        );
        let (bytes_a, bytes_b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        std::fs::write(&a, bytes_b).unwrap();
        std::fs::write(&b, bytes_a).unwrap();
        let err = read_sessions(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("000000.wrec.zst"), "{err}");
        assert!(
            err.contains("correlation.exchange_index is 1, not 0, the index its file name gives"),
            "{err}"
        );
        let problems = check_exchange_files(tmp.path());
        assert_eq!(problems.len(), 2, "{problems:?}");
        // A single file read alone has no index to hold it to.
        assert!(read_exchange_file(&a).is_ok());
    }

    #[test]
    fn corrupt_exchange_file_error_names_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("s1")).unwrap();
        std::fs::write(tmp.path().join("s1/000000.wrec.zst"), b"garbage").unwrap();
        let err = read_sessions(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("000000.wrec.zst"), "{err}");
    }

    /// Sessions come back in id order however many threads decode them.
    #[test]
    fn sessions_are_read_in_id_order_on_any_number_of_threads() {
        let tmp = tempfile::tempdir().unwrap();
        let ids: Vec<String> = [7, 3, 11, 0, 9, 5, 1, 10, 4, 8, 2, 6]
            .iter()
            .map(|i| format!("s{i:02}"))
            .collect();
        for (k, id) in ids.iter().enumerate() {
            let mut w = SessionWriter::new(tmp.path(), meta(id)).unwrap();
            w.append(scrubbed(k as u64)).unwrap();
            w.finish().unwrap();
        }
        let mut want = ids.clone();
        want.sort();
        for threads in [1, 2, 5] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let got: Vec<String> = pool
                .install(|| read_sessions(tmp.path()))
                .unwrap()
                .into_iter()
                .map(|s| s.manifest.session_id)
                .collect();
            assert_eq!(got, want, "{threads} threads");
        }
    }

    /// With several corrupt sessions, the error names the first one in id order, whichever
    /// thread came to which first.
    #[test]
    fn read_error_is_the_first_corrupt_session_in_id_order() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..24 {
            let id = format!("s{i:02}");
            if i % 3 == 2 {
                std::fs::create_dir_all(tmp.path().join(&id)).unwrap();
                std::fs::write(tmp.path().join(&id).join("000000.wrec.zst"), b"garbage").unwrap();
            } else {
                let mut w = SessionWriter::new(tmp.path(), meta(&id)).unwrap();
                w.append(scrubbed(i)).unwrap();
                w.finish().unwrap();
            }
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for _ in 0..20 {
            let err = pool
                .install(|| read_sessions(tmp.path()))
                .unwrap_err()
                .to_string();
            assert!(err.contains("s02"), "{err}");
        }
    }

    /// Many staged sessions (their files synced on several threads) are all moved into place.
    #[test]
    fn staged_sessions_commit_together() {
        let tmp = tempfile::tempdir().unwrap();
        let staged: Vec<StagedSession> = (0..6)
            .map(|i| {
                let mut w = SessionWriter::staged(tmp.path(), meta(&format!("s{i}"))).unwrap();
                for k in 0..4 {
                    w.append(scrubbed(k)).unwrap();
                }
                w.finish_staged().unwrap().unwrap()
            })
            .collect();
        assert!(read_sessions(tmp.path()).unwrap().is_empty());
        let manifests = commit_staged(staged).unwrap();
        assert_eq!(manifests.len(), 6);
        let read = read_sessions(tmp.path()).unwrap();
        assert_eq!(read.len(), 6);
        assert!(read.iter().all(|s| s.exchanges.len() == 4));
    }

    #[test]
    fn missing_exchange_files_and_a_foreign_session_id_are_found() {
        let tmp = tempfile::tempdir().unwrap();
        for id in ["s1", "s2", "s3"] {
            let mut w = SessionWriter::new(tmp.path(), meta(id)).unwrap();
            for k in 0..14 {
                w.append(scrubbed(k)).unwrap();
            }
            w.finish().unwrap();
        }
        // s1 whole; s2 without 3, 10 and 11, and without its last (13); s3 copied as s4.
        for i in [3, 10, 11, 13] {
            std::fs::remove_file(tmp.path().join("s2").join(exchange_file_name(i))).unwrap();
        }
        std::fs::rename(tmp.path().join("s3"), tmp.path().join("s4")).unwrap();
        let problems = check_sessions(tmp.path());
        assert_eq!(
            problems,
            [
                SessionProblem::MissingExchanges {
                    folder: "s2".into(),
                    manifest_count: Some(14),
                    present: 10,
                    missing: vec![(3, 3), (10, 11), (13, 13)],
                },
                SessionProblem::IdMismatch {
                    folder: "s4".into(),
                    session_id: "s3".into(),
                },
            ]
        );
        assert_eq!(problems[0].missing_count(), 4);
        let text = problems[0].to_string();
        assert!(
            text.contains("000003.wrec.zst, 000010.wrec.zst to 000011.wrec.zst, 000013.wrec.zst"),
            "{text}"
        );
        assert!(text.contains("4 exchange file(s) missing"), "{text}");
        // Without a manifest, a gap between the files present is still found.
        std::fs::remove_file(tmp.path().join("s2").join(MANIFEST_FILE)).unwrap();
        assert_eq!(
            check_sessions(tmp.path())[0],
            SessionProblem::MissingExchanges {
                folder: "s2".into(),
                manifest_count: None,
                present: 10,
                missing: vec![(3, 3), (10, 11)],
            }
        );
        assert!(check_sessions(&tmp.path().join("nope")).is_empty());
    }

    #[test]
    fn a_manifest_counting_fewer_exchanges_than_the_folder_holds_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::new(tmp.path(), meta("s1")).unwrap();
        for k in 0..9 {
            w.append(scrubbed(k)).unwrap();
        }
        w.finish().unwrap();
        assert!(check_sessions(tmp.path()).is_empty());
        let path = tmp.path().join("s1").join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace("\"exchange_count\":9", "\"exchange_count\":2"),
        )
        .unwrap();
        let problems = check_sessions(tmp.path());
        assert_eq!(
            problems,
            [SessionProblem::CountBelowFiles {
                folder: "s1".into(),
                manifest_count: 2,
                present: 9,
            }]
        );
        let text = problems[0].to_string();
        assert!(text.contains("says 2 exchange(s)") && text.contains("set exchange_count to 9"));
        // Every file present is still read.
        assert_eq!(read_sessions(tmp.path()).unwrap()[0].exchanges.len(), 9);
    }

    #[test]
    fn a_session_folder_reached_through_a_link_is_checked_as_it_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::new(elsewhere.path(), meta("s1")).unwrap();
        w.append(scrubbed(1)).unwrap();
        w.finish().unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("s1"), tmp.path().join("s2")).unwrap();
        // Read as session `s2`, its manifest naming `s1`: the check says so.
        assert_eq!(read_sessions(tmp.path()).unwrap().len(), 1);
        assert_eq!(
            check_sessions(tmp.path()),
            [SessionProblem::IdMismatch {
                folder: "s2".into(),
                session_id: "s1".into(),
            }]
        );
    }

    #[test]
    fn a_manifest_ending_before_it_starts_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let mut w = SessionWriter::new(tmp.path(), meta("s1")).unwrap();
        for k in 0..3 {
            w.append(scrubbed(1_000 + k)).unwrap();
        }
        w.finish().unwrap();
        assert!(check_sessions(tmp.path()).is_empty());
        let path = tmp.path().join("s1").join(MANIFEST_FILE);
        let mut m: Manifest = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert!(m.start_time_us <= m.end_time_us, "{m:?}");
        m.end_time_us = m.start_time_us - 1;
        std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
        let problems = check_sessions(tmp.path());
        assert_eq!(
            problems,
            [SessionProblem::EndBeforeStart {
                folder: "s1".into(),
                start_time_us: m.start_time_us,
                end_time_us: m.end_time_us,
            }]
        );
        let text = problems[0].to_string();
        assert!(
            text.contains("ended (end_time_us 999) before it started (start_time_us 1000)"),
            "{text}"
        );
        // The session still reads.
        assert_eq!(read_sessions(tmp.path()).unwrap()[0].exchanges.len(), 3);
    }

    #[test]
    fn files_past_a_complete_manifest_are_named_as_extra_not_the_manifest_as_short() {
        let p = SessionProblem::MissingExchanges {
            folder: "s".into(),
            manifest_count: Some(4),
            present: 5,
            missing: vec![(4, 8)],
        };
        let text = p.to_string();
        assert!(
            text.contains(
                "manifest.json says 4 exchange(s) and they are all there, but 1 more file(s) \
                 lie past them after a gap (000004.wrec.zst to 000008.wrec.zst missing)"
            ),
            "{text}"
        );
        // A gap inside the counted exchanges keeps the missing-files wording.
        let inside = SessionProblem::MissingExchanges {
            folder: "s".into(),
            manifest_count: Some(4),
            present: 3,
            missing: vec![(1, 1)],
        };
        assert!(inside.to_string().contains("1 exchange file(s) missing"));
    }

    #[test]
    fn existing_session_id_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("s1")).unwrap();
        assert!(SessionWriter::new(tmp.path(), meta("s1")).is_err());
        assert!(SessionWriter::new(tmp.path(), meta("../x")).is_err());
    }
}
