//! `wraith import <twin> FILE.har...`: each HAR file becomes one recording session, scrubbed
//! exactly as `wraith record` scrubs. Every file is parsed and validated before anything is
//! written, and each session is staged and moved into place whole, so a bad file never leaves a
//! half-written session behind.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::anyhow;
use serde::Serialize;
use sha2::{Digest, Sha256};
use wraith_recording::har::{BaseUrl, HarSession, parse_har};
use wraith_recording::scrub::Scrubber;
use wraith_recording::session::{
    SessionMeta, SessionWriter, StagedSession, commit_staged, is_valid_session_id,
};
use wraith_recording::terminal::shown;
use wraith_twin::{TwinConfig, TwinDir};

use crate::exit::{CliError, CmdResult};
use crate::output::{print_json, progress};

#[derive(clap::Args)]
#[command(after_help = "Examples:
  wraith import shop traffic.har
  wraith import linode corpora/linode/*.har --tag linodego --json
  wraith import mastodon corpora/mastodon/        # every .har file in the folder

Each HAR file becomes one session tagged with the file's stem (plus every --tag). A file
imported before (same name, same bytes), or the same traffic under another file name, is
skipped with a notice naming its session.

Every file is read and checked before anything is written: when any is malformed or cannot be
read, each such file is named with its reason and nothing is imported.

Exit codes: 0 imported (or every file skipped as imported before) · 1 usage or configuration
error (a malformed HAR, named by file and JSON path, nothing written; an unknown twin; a bad
--tag or scrub.toml) · 3 policy refusal (no scrub.toml, or CI=true without WRAITH_HMAC_KEY) ·
4 a file cannot be read (also when other files are malformed) or the twin cannot be written.")]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: String,
    /// HAR files (or folders of .har files) to import.
    #[arg(required = true, value_name = "FILE.har")]
    pub files: Vec<PathBuf>,
    /// Extra tag for every imported session (repeatable).
    #[arg(long = "tag", value_name = "T")]
    pub tags: Vec<String>,
    /// Print a summary as JSON on stdout.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
}

#[derive(Serialize)]
struct FileSummary {
    file: String,
    /// `null` when the file held no importable entries.
    session_id: Option<String>,
    exchanges: usize,
    skipped_entries: Vec<String>,
    /// Entries on the twin's host outside its base URL's path, left out (not the twin's API):
    /// `log.entries[i]: METHOD scheme://host/path`.
    outside_base_path: Vec<String>,
    /// What was imported other than as written (a lone surrogate escape read as U+FFFD),
    /// as printed on stderr.
    warnings: Vec<String>,
    /// The file was imported before (same name, same bytes), or its exchanges are those of a
    /// session imported from another file name (or another file of this import with the same
    /// bytes): `session_id` names that session and nothing was written for it.
    already_imported: bool,
}

#[derive(Serialize)]
struct Summary {
    twin: String,
    sessions: usize,
    exchanges: usize,
    files: Vec<FileSummary>,
    skipped_files: Vec<String>,
    /// How many entries of all files were left out for lying outside the base URL's path.
    skipped_outside_base_path: usize,
}

pub fn run(args: Args) -> CmdResult {
    let twin = TwinDir::resolve(&args.twin).map_err(CliError::usage)?;
    let config = TwinConfig::load(&twin).map_err(CliError::twin)?;
    super::synth::remove_interrupted_writes(&twin);
    for w in &config.warnings {
        eprintln!("warning: {w}");
    }
    let base = BaseUrl::parse(&config.service.base_url).map_err(|m| {
        CliError::usage(anyhow!(
            "{}: [service] base_url: {m}",
            twin.wraith_toml().display()
        ))
    })?;
    let scrubber = Scrubber::load(&twin.scrub_toml()).map_err(CliError::scrub)?;
    for w in &scrubber.policy().warnings {
        eprintln!("warning: {w}");
    }
    for tag in &args.tags {
        check_tag(tag)?;
    }
    let (files, skipped_files) = expand_inputs(&args.files)?;
    if files.is_empty() {
        let skipped = if skipped_files.is_empty() {
            String::new()
        } else {
            format!(
                "; skipped for not ending in .har: {} (rename a HAR document to end in .har)",
                skipped_files.join(", ")
            )
        };
        return Err(CliError::usage(anyhow!(
            "no .har files among the inputs (a folder is searched one level deep){skipped}"
        )));
    }

    // 1. Parse and validate everything before writing anything. Every file is read, so one
    // run names every file to fix, not only the first.
    let bar = progress(files.len() as u64, "parse");
    let mut parsed: Vec<(PathBuf, Vec<u8>, HarSession)> = Vec::with_capacity(files.len());
    let mut failures: Vec<CliError> = Vec::new();
    for file in &files {
        bar.inc(1);
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(e) => {
                failures.push(CliError::io(
                    e.kind(),
                    anyhow!("cannot read {}: {e}", file.display()),
                ));
                continue;
            }
        };
        match parse_har(&bytes, file, &base) {
            Ok(session) => {
                for w in &session.warnings {
                    eprintln!("warning: {}: {w}", file.display());
                }
                // Nothing is imported once a file failed: keep no more in memory.
                if failures.is_empty() {
                    parsed.push((file.clone(), bytes, session));
                }
            }
            Err(e) => {
                parsed.clear();
                failures.push(CliError::usage(e));
            }
        }
    }
    bar.finish_and_clear();
    if let Some(failure) = refuse_all(failures, files.len()) {
        return Err(failure);
    }
    warn_if_all_foreign(&parsed, &config.service.base_url);
    let outside_base_path = warn_of_outside_base_path(&parsed, &base);

    // 2. Scrub and write, one staged session per file.
    let sessions_dir = twin.sessions_dir();
    if sessions_dir.exists() && !sessions_dir.is_dir() {
        return Err(CliError::usage(anyhow!(
            "{} is a file where the folder of recording sessions belongs; move it away and \
             import again",
            sessions_dir.display()
        )));
    }
    super::create_folder(&sessions_dir)?;
    // Imports into one twin take turns from here: each looks for what is imported already,
    // then writes; two at once would both miss the other's sessions (and a file imported
    // twice at once would fail one of them).
    let _lock = super::exclusive_lock(&twin.recordings_dir().join(".import.lock"))?;
    let bar = progress(parsed.len() as u64, "import");
    let mut summary = Summary {
        twin: twin.name(),
        sessions: 0,
        exchanges: 0,
        files: Vec::with_capacity(parsed.len()),
        skipped_files,
        skipped_outside_base_path: outside_base_path,
    };
    let mut staged: Vec<StagedSession> = Vec::with_capacity(parsed.len());
    let mut used_ids = std::collections::BTreeSet::new();
    let mut seen_bytes: std::collections::BTreeMap<[u8; 32], String> =
        std::collections::BTreeMap::new();
    for (file, bytes, har) in parsed {
        // The file's name is the session's first tag, printed by `inspect`: a control
        // character in it (an escape sequence) would reach the terminal as a command.
        let mut tags = vec![har.stem.replace(char::is_control, "\u{FFFD}")];
        for t in &args.tags {
            if !tags.contains(t) {
                tags.push(t.clone());
            }
        }
        let count = har.exchanges.len();
        // Imported before: this very file (same name, same bytes), or the same traffic under
        // another name (the same bytes as another file of this import, or the same exchanges
        // as a session on disk). Either way it is not imported twice.
        let earlier = har
            .exchanges
            .first()
            .and_then(|first| {
                already_imported(
                    &sessions_dir,
                    &used_ids,
                    first.timing.request_start_us,
                    &bytes,
                    &har.stem,
                    count,
                )
            })
            .map(|id| {
                let note = format!(
                    "is already imported as session {id}; skipped (remove \
                     recordings/sessions/{id}/ to import it again)"
                );
                (id, note)
            });
        let digest: [u8; 32] = Sha256::digest(&bytes).into();
        let start = har.exchanges.first().map(|e| e.timing.request_start_us);
        let scrubbed: Vec<_> = match earlier {
            Some(_) => Vec::new(),
            None => har
                .exchanges
                .into_iter()
                .map(|ex| scrubber.scrub(ex))
                .collect(),
        };
        let earlier = earlier.or_else(|| {
            let id = match (seen_bytes.get(&digest), start) {
                (Some(id), _) => Some(id.clone()),
                (None, Some(start)) => same_content(&sessions_dir, start, &scrubbed),
                (None, None) => None,
            }?;
            let note = format!(
                "holds the same exchanges as session {id}, imported already under another \
                 file name; skipped"
            );
            Some((id, note))
        });
        if let Some((id, note)) = earlier {
            eprintln!("wraith import: {} {note}", file.display());
            summary.files.push(FileSummary {
                file: file.display().to_string(),
                session_id: Some(id),
                exchanges: 0,
                skipped_entries: har.skipped,
                outside_base_path: har.outside_base_path,
                warnings: har.warnings,
                already_imported: true,
            });
            bar.inc(1);
            continue;
        }
        let session_id = if count == 0 {
            None
        } else {
            let start = start.unwrap_or_default();
            let id = session_id_for(&sessions_dir, &mut used_ids, start, &bytes, &har.stem);
            seen_bytes.insert(digest, id.clone());
            let meta = SessionMeta {
                session_id: id.clone(),
                tags,
                proxy_mode: "import".to_string(),
                policy_hash: scrubber.policy_hash().to_string(),
            };
            let mut writer =
                SessionWriter::staged(&sessions_dir, meta).map_err(CliError::runtime)?;
            for ex in scrubbed {
                // An entry parse_har let through whose scrubbed recording grew past the file
                // limit: refused as the entry itself is (1), and nothing is imported.
                writer.append(ex).map_err(|e| match e {
                    e @ wraith_recording::RecordingError::ExchangeTooLarge { .. } => {
                        CliError::usage(anyhow!("{}: {e}; nothing was imported", file.display()))
                    }
                    e => CliError::runtime(e),
                })?;
            }
            if let Some(done) = writer.finish_staged().map_err(CliError::runtime)? {
                staged.push(done);
            }
            summary.sessions += 1;
            summary.exchanges += count;
            Some(id)
        };
        summary.files.push(FileSummary {
            file: file.display().to_string(),
            session_id,
            exchanges: count,
            skipped_entries: har.skipped,
            outside_base_path: har.outside_base_path,
            warnings: har.warnings,
            already_imported: false,
        });
        bar.inc(1);
    }
    // 3. Make every session durable, then move them all into place.
    commit_staged(staged).map_err(CliError::runtime)?;
    bar.finish_and_clear();

    if args.json {
        print_json(&summary);
    } else {
        outln!(
            "imported {} exchange(s) into {} session(s) of twin `{}`",
            summary.exchanges,
            summary.sessions,
            summary.twin
        );
        for f in summary.files.iter().filter(|f| !f.already_imported) {
            if f.session_id.is_none() {
                outln!("  {}: no entries, no session", f.file);
            }
            // The JSON summary keeps the recorded text whole; the terminal gets it escaped.
            for s in &f.skipped_entries {
                outln!("  {}: skipped {}", f.file, shown(s));
            }
            if let Some(first) = f.outside_base_path.first() {
                outln!(
                    "  {}: skipped {} entr{} outside the base URL's path (first: {})",
                    f.file,
                    f.outside_base_path.len(),
                    if f.outside_base_path.len() == 1 {
                        "y"
                    } else {
                        "ies"
                    },
                    shown(first)
                );
            }
        }
        for s in &summary.skipped_files {
            outln!("  skipped {s} (not a .har file)");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The error ending an import in which files failed to read or parse (`None` when none did):
/// a single failure as it is, several as one error listing each on its own line. The exit code
/// is the gravest of theirs: 4 when a file could not be read, else 1.
fn refuse_all(mut failures: Vec<CliError>, files: usize) -> Option<CliError> {
    if failures.len() <= 1 {
        return failures.pop();
    }
    let code = failures
        .iter()
        .map(|f| f.code)
        .max_by_key(|c| *c as u8)
        .unwrap_or(crate::exit::Code::Usage);
    let mut message = format!(
        "{} of {files} HAR files cannot be imported, so nothing was imported (fix or leave out \
         each, then import again):",
        failures.len()
    );
    for f in &failures {
        message.push_str("\n  ");
        message.push_str(&crate::exit::chain(f.error.as_ref()));
    }
    Some(CliError {
        code,
        error: anyhow!(message),
    })
}

/// Warn once of the entries left out for lying on the twin's host outside its base URL's path,
/// naming the first with its file and how to import them; returns how many there are.
fn warn_of_outside_base_path(parsed: &[(PathBuf, Vec<u8>, HarSession)], base: &BaseUrl) -> usize {
    let count = parsed
        .iter()
        .map(|(_, _, s)| s.outside_base_path.len())
        .sum();
    let first = parsed.iter().find_map(|(file, _, s)| {
        s.outside_base_path
            .first()
            .map(|e| format!("{} {}", file.display(), shown(e)))
    });
    if let Some(first) = first {
        eprintln!(
            "warning: skipped {count} entr{} on the twin's host outside its base URL's path \
             `{}` (first: {first}): they are not the API the twin answers, and `wraith record` \
             passes such requests through unrecorded too. To import them, set [service] \
             base_url in wraith.toml to a path that covers them (`{}`)",
            if count == 1 { "y" } else { "ies" },
            base.path_prefix,
            base.origin()
        );
    }
    count
}

/// Warn when none of the exchanges this import reads is for the twin's own origin: traffic of
/// another API imported into this twin by mistake. (A file or two for another host among the
/// twin's own is normal: an API's object storage or monitoring host beside it.)
fn warn_if_all_foreign(parsed: &[(PathBuf, Vec<u8>, HarSession)], base_url: &str) {
    let mut origins: Vec<&str> = Vec::new();
    for (_, _, session) in parsed {
        for e in &session.exchanges {
            match e.request.origin.as_deref() {
                None => return,
                Some(o) if !origins.contains(&o) => origins.push(o),
                Some(_) => {}
            }
        }
    }
    let Some(first) = origins.first() else {
        return;
    };
    let shown = origins
        .iter()
        .take(3)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    let more = origins.len().saturating_sub(3);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    eprintln!(
        "warning: none of the exchanges imported is for the twin's base URL {base_url} (they \
         are for {shown}{more}); they are imported under their own origin. If this traffic is \
         another API's, import it into that API's twin (`wraith init <name> --base-url \
         {first}`)"
    );
}

/// A `--tag` label: not blank, and no control character (tags are printed by `inspect` and
/// `coverage`, where an escape sequence would reach the terminal).
pub(crate) fn check_tag(tag: &str) -> Result<(), CliError> {
    if tag.trim().is_empty() {
        return Err(CliError::usage(anyhow!("--tag needs a non-empty label")));
    }
    if let Some(c) = tag.chars().find(|c| c.is_control()) {
        return Err(CliError::usage(anyhow!(
            "--tag `{}` holds the control character {c:?}; use printable text",
            tag.escape_debug()
        )));
    }
    Ok(())
}

/// Files to import, in argument order (folder contents sorted); non-`.har` files are skipped.
fn expand_inputs(inputs: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<String>), CliError> {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let is_har = |p: &Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("har"));
    for input in inputs {
        if input.is_dir() {
            let mut inside = Vec::new();
            let listing = std::fs::read_dir(input).map_err(|e| {
                CliError::io(e.kind(), anyhow!("cannot list {}: {e}", input.display()))
            })?;
            for entry in listing {
                let entry = entry.map_err(|e| {
                    CliError::io(e.kind(), anyhow!("cannot list {}: {e}", input.display()))
                })?;
                let p = entry.path();
                if p.is_file() && is_har(&p) {
                    inside.push(p);
                }
            }
            inside.sort();
            files.extend(inside);
        } else if !input.exists() {
            return Err(CliError::usage(anyhow!(
                "no such file: {}",
                input.display()
            )));
        } else if is_har(input) {
            // A FIFO or a device would block the read or never end: only regular files (a
            // symlink to one included) are HAR documents.
            if !input.is_file() {
                return Err(CliError::usage(anyhow!(
                    "{} is not a regular file; give a .har file or a folder of them",
                    input.display()
                )));
            }
            files.push(input.clone());
        } else {
            skipped.push(input.display().to_string());
        }
    }
    Ok((files, skipped))
}

/// `<UTC stamp of the first entry>-<6 hex>`, the hex taken from the file's content so the same
/// file gets the same id on every machine; bumped if that id is already taken (on disk or by
/// another file of this import).
fn session_id_for(
    sessions_dir: &Path,
    used: &mut std::collections::BTreeSet<String>,
    start_us: u64,
    bytes: &[u8],
    stem: &str,
) -> String {
    let mut attempt: u32 = 0;
    loop {
        let id = candidate_id(start_us, bytes, stem, attempt);
        if is_valid_session_id(&id) && !sessions_dir.join(&id).exists() && !used.contains(&id) {
            used.insert(id.clone());
            return id;
        }
        attempt += 1;
    }
}

/// The session id the `attempt`-th try gives a file (see [`session_id_for`]).
fn candidate_id(start_us: u64, bytes: &[u8], stem: &str, attempt: u32) -> String {
    let stamp = stamp_of(start_us);
    let mut h = Sha256::new();
    h.update(bytes);
    h.update(stem.as_bytes());
    h.update(attempt.to_be_bytes());
    let d = h.finalize();
    format!("{stamp}-{:02x}{:02x}{:02x}", d[0], d[1], d[2])
}

/// The UTC stamp a session id starts with: the first entry's start, to the second.
fn stamp_of(start_us: u64) -> String {
    jiff::Timestamp::from_microsecond(start_us as i64)
        .map(|t| t.strftime("%Y%m%dT%H%M%SZ").to_string())
        .unwrap_or_else(|_| "19700101T000000Z".to_string())
}

/// An import session on disk that holds exactly these exchanges: the same file under another
/// name (imported again it would count every exchange twice, and tip synth's votes). Candidates
/// share the first entry's stamp and the exchange count; every exchange must be equal but for
/// its correlation (its tags name the file). Only sessions scrubbed with the same key can be
/// equal, which is what a twin's stable `WRAITH_HMAC_KEY` gives.
fn same_content(
    sessions_dir: &Path,
    start_us: u64,
    exchanges: &[wraith_recording::ScrubbedExchange],
) -> Option<String> {
    let prefix = format!("{}-", stamp_of(start_us));
    let mut ids: Vec<String> = std::fs::read_dir(sessions_dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    ids.sort();
    ids.into_iter().find(|id| {
        let dir = sessions_dir.join(id);
        let manifest = wraith_twin::read_file(&dir.join(wraith_recording::session::MANIFEST_FILE))
            .ok()
            .and_then(|t| serde_json::from_slice::<wraith_recording::Manifest>(&t).ok());
        let Some(m) = manifest else { return false };
        if !(m.complete
            && m.proxy_mode == "import"
            && usize::try_from(m.exchange_count).ok() == Some(exchanges.len()))
        {
            return false;
        }
        wraith_recording::read_session(&dir, id).is_ok_and(|s| {
            s.exchanges.len() == exchanges.len()
                && s.exchanges.iter().zip(exchanges).all(|(a, b)| {
                    let b = b.exchange();
                    a.protocol == b.protocol
                        && a.request == b.request
                        && a.response == b.response
                        && a.frames == b.frames
                        && a.timing == b.timing
                        && a.content == b.content
                        && a.truncated == b.truncated
                })
        })
    })
}

/// The session this file was already imported as, if any. The first id a file is given is a
/// function of its name and bytes, so the same file imported before (or earlier in this
/// import) finds its session under that id: a finished import session of the same name
/// (its first tag) and the same number of exchanges. Only the manifest is read.
fn already_imported(
    sessions_dir: &Path,
    used: &std::collections::BTreeSet<String>,
    start_us: u64,
    bytes: &[u8],
    stem: &str,
    exchanges: usize,
) -> Option<String> {
    let id = candidate_id(start_us, bytes, stem, 0);
    if used.contains(&id) {
        return Some(id);
    }
    let text = wraith_twin::read_file(
        &sessions_dir
            .join(&id)
            .join(wraith_recording::session::MANIFEST_FILE),
    )
    .ok()?;
    let m: wraith_recording::Manifest = serde_json::from_slice(&text).ok()?;
    let same = m.complete
        && m.proxy_mode == "import"
        && m.tags.first().map(String::as_str) == Some(stem)
        && usize::try_from(m.exchange_count).ok() == Some(exchanges);
    same.then_some(id)
}
