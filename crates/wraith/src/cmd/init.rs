//! `wraith init <name> --base-url <url>`: create `twins/<name>/` with its configuration files
//! and empty folders. The folder is built beside its final place and renamed in one step, so an
//! interrupted init leaves no half twin behind.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, anyhow};
use serde_json::json;
use wraith_twin::config::validate_base_url;
use wraith_twin::dir::{TWINS_DIR, is_valid_twin_name};
use wraith_twin::{TwinDir, write_atomic};

use crate::exit::{CliError, CmdResult};
use crate::output::print_json;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  wraith init shop --base-url https://api.example.com/v1
  wraith init linode --base-url https://api.linode.com/v4beta --json

Exit codes: 0 created · 1 usage error (a bad name or --base-url, the twin exists already) · 4
the folder cannot be written.")]
pub struct Args {
    /// Name of the new twin; it is created as ./twins/<name>/.
    #[arg(required_unless_present = "name_flag", conflicts_with = "name_flag")]
    pub name: Option<String>,
    /// The twin's name, as the positional argument (the spelling some guides use).
    #[arg(long = "name", value_name = "NAME")]
    pub name_flag: Option<String>,
    /// Root URL of the real API, e.g. https://api.example.com/v1: no credentials (`user:pass@`;
    /// the client sends its own through `wraith record`), a port if any from 1 to 65535.
    #[arg(long, value_name = "URL")]
    pub base_url: String,
    /// Print what was created as JSON on stdout.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
}

/// `HTTPS://API.Example.com/v1` as `https://api.example.com/v1`: a URL's scheme and host are
/// case-insensitive, and `wraith.toml` holds them in lowercase. The path keeps its case.
fn lowercase_scheme_and_host(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    if !["http", "https"].contains(&scheme.to_ascii_lowercase().as_str()) {
        return url.to_string();
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    // Credentials are refused afterwards, without being repeated: leave them as written.
    if authority.contains('@') {
        return url.to_string();
    }
    format!(
        "{}://{}{tail}",
        scheme.to_ascii_lowercase(),
        authority.to_ascii_lowercase()
    )
}

pub fn run(mut args: Args) -> CmdResult {
    args.base_url = lowercase_scheme_and_host(&args.base_url);
    // clap requires exactly one of the two spellings.
    let Some(name) = args.name.take().or_else(|| args.name_flag.take()) else {
        return Err(CliError::usage(anyhow!(
            "name the twin: `wraith init <name> --base-url <url>`"
        )));
    };
    if !is_valid_twin_name(&name) {
        return Err(CliError::usage(anyhow!(
            "invalid twin name `{}`: use up to 100 letters, digits, `-`, `_` and `.` (not \
             first), e.g. `shop-api`",
            name
        )));
    }
    validate_base_url(&args.base_url)
        .map_err(|m| CliError::usage(anyhow!("invalid --base-url: {m}")))?;
    let twins = PathBuf::from(TWINS_DIR);
    let target = twins.join(&name);
    // `symlink_metadata`: a link, even to nothing, is something init would have to replace.
    if target.symlink_metadata().is_ok() {
        return Err(CliError::usage(anyhow!(
            "{} already exists; wraith init never overwrites a twin (pick another name or remove it)",
            target.display()
        )));
    }
    if twins.symlink_metadata().is_ok() && !twins.is_dir() {
        return Err(CliError::usage(anyhow!(
            "./{} exists and is not a folder; named twins live in the folder ./{}/ (move the \
             file away, or run init in another directory)",
            twins.display(),
            twins.display()
        )));
    }
    fs::create_dir_all(&twins)
        .with_context(|| format!("cannot create {}", twins.display()))
        .map_err(CliError::runtime)?;
    // An init of this name that was interrupted (its process gone) left its folder here.
    wraith_recording::fsutil::remove_stale_staging_dirs(&twins, Some(&name));
    let staging = twins.join(format!(".{}.init-{}", name, std::process::id()));
    let built = build(&staging, &name, &args.base_url);
    let placed = built.and_then(|()| {
        // Re-check: another init may have created it while we were building.
        if target.symlink_metadata().is_ok() {
            return Err(anyhow!(
                "{} appeared while initializing; not overwriting it",
                target.display()
            ));
        }
        fs::rename(&staging, &target)
            .with_context(|| format!("cannot move the new twin into {}", target.display()))
    });
    if let Err(e) = placed {
        let _ = fs::remove_dir_all(&staging);
        return Err(if target.exists() {
            CliError::usage(e)
        } else {
            CliError::runtime(e)
        });
    }
    let twin = TwinDir::at(&target);
    if args.json {
        print_json(&json!({
            "twin": name,
            "path": target.display().to_string(),
            "base_url": args.base_url,
            "created": [
                "wraith.toml", "scrub.toml", "recordings/sessions/", "model/", "state/schema.json",
                "state/fixtures/", "lua/handlers/README.md", "reports/"
            ],
        }));
    } else {
        outln!("created twin `{}` in {}", name, twin.root().display());
        outln!(
            "next: wraith record {0}   (or: wraith import {0} FILE.har)",
            name
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn build(root: &Path, name: &str, base_url: &str) -> anyhow::Result<()> {
    let twin = TwinDir::at(root);
    for dir in [
        twin.sessions_dir(),
        twin.model_dir(),
        twin.fixtures_dir(),
        twin.lua_dir().join("handlers"),
        twin.reports_dir(),
    ] {
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let files: [(PathBuf, String); 4] = [
        (twin.wraith_toml(), wraith_toml(name, base_url)),
        (twin.scrub_toml(), SCRUB_TOML.to_string()),
        (
            twin.schema_json(),
            "{\"entity_types\":{},\"schema_version\":1}\n".to_string(),
        ),
        (
            twin.lua_dir().join("handlers").join("README.md"),
            HANDLERS_README.to_string(),
        ),
    ];
    for (path, text) in files {
        write_atomic(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// `wraith.toml`: the service, then every other section with its default, commented out.
fn wraith_toml(name: &str, base_url: &str) -> String {
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    format!(
        r#"#:schema https://wraith.cx/schemas/wraith.schema.json
schema_version = 1

[service]
name = {name}
base_url = {base_url}

# Everything below is the default; uncomment a line to change it.

# [proxy]                        # wraith record
# port = 8080
# mode = "reverse"               # reverse | forward | mitm
# upstream_timeout_ms = 60000    # wait for the upstream's answer to begin, then 504

# [serve]                        # wraith serve
# port = 8081
# fidelity = "synth"             # strict | synth | fuzzy
# deterministic_seed = 42
# debug = false
# strip_headers = true
# rewrite_self_urls = true
# provenance_headers = true
# unknown_entity = "synthesize"  # synthesize | not_found

# [serve.limits]
# max_namespaces = 1000
# max_entities_per_type = 10000
# max_total_state_mb = 100
# max_twin_state_mb = 2048
# max_pending_body_mb = 256
# request_drain_timeout_ms = 5000
# request_idle_timeout_ms = 30000

# [serve.clock]
# mode = "real"                  # real | deterministic | fixed
# base_epoch = 1640995200

# [serve.idempotency]
# enabled = false
# header = "Idempotency-Key"      # a blank value in a request is no key
# ttl_seconds = 86400             # at least 1

# [serve.lua]
# on_error = "fail"              # fail | fallback
# max_memory_kb = 1024

# [diff]                         # wraith check
# required_score = 0.90
# session_pass_rate = 0.95
# ignore_headers = []

# [generate]                     # wraith synth
# run_gap = "1h"                 # a longer pause between sessions begins a new recording run

# [generate.request_keying]
# mode = "auto"                  # off | manual | auto

# [freshness]                    # wraith check: staleness SLA (unset: none)
# max_age = "30d"
# warn_age = "14d"
# max_drift = 0.2
"#,
        name = q(name),
        base_url = q(base_url),
    )
}

const SCRUB_TOML: &str = r#"#:schema https://wraith.cx/schemas/scrub.schema.json
# Scrub policy: applied to every exchange before anything is written to disk.
#
# Built-in rules (always on; nothing in this file can turn them off):
#   header authorization          keep the scheme word (Bearer, Basic, ...), tokenize the credential
#   header cookie                 tokenize every cookie value (names kept)
#   header set-cookie             tokenize the cookie value (name and attributes kept)
#   header x-api-key              tokenize
#   query_param api_key, secret, password, token, access_token, refresh_token, client_secret
#                                 tokenize the value only (rest of the query byte-identical);
#                                 the same names as form fields and JSON fields too
#   card numbers in bodies        Luhn-valid 13-19 digits with a card network prefix -> [REDACTED]
#
# Tokens look like wraith_tok_<base62>: an HMAC-SHA256 keyed by WRAITH_HMAC_KEY (or, outside CI,
# a key kept in your user config dir), so the same secret always becomes the same token.
#
# Your rules run after the built-ins, in file order. Scopes: header, cookie, query_param,
# jsonpath ($.a.b, $.items[*].email), regex (with apply_to = ["header_values", "body", "query"]).
# Actions: tokenize, mask (needs replacement = "..."), redact, pseudonymize. Example:
#
# [[rules]]
# scope = "jsonpath"
# match = "$.customer.email"
# action = "tokenize"
"#;

const HANDLERS_README: &str = r#"# Lua handlers

Put a `.lua` or `.luau` file here to take over a route from the synthesized model. A handler is
bound by its file name, built from the route's state operation and entity:

- create: `create_<entity>` (also `add_`, `new_`, `post_`)
- read: `get_<entity>` (also `read_`, `show_`, `fetch_`)
- update: `update_<entity>` (also `patch_`, `edit_`, `put_`)
- delete: `delete_<entity>` (also `remove_`, `destroy_`)
- list: `list_<entities>` (also `list_<entity>`, `index_<entities>`)

The entity is the collection segment before the id, singularized and snake_cased
(`/v1/line-items/{id}` -> `line_item`). Sub-resources use the method and the last segment
(`GET /orders/{id}/invoice` -> `get_invoice`). Routes with no matching handler use the model.

Any other name binds explicitly, and an explicit binding wins over the file name: add to
`lua/routes.toml`

    [[binding]]
    method = "GET"
    path = "/customers/:param"
    handler = "customer_view"   # lua/handlers/customer_view.lua
"#;
