//! The scrubber: every exchange passes through it before any byte reaches disk.
//!
//! Layers, in order: built-in rules (always on; no configuration can disable them), then the
//! user's `scrub.toml` `[[rules]]` in file order. `tokenize` replaces a secret with
//! `wraith_tok_<base62>`, an HMAC-SHA256 of the value under the machine's or CI's key, so the
//! same secret always becomes the same token (referential integrity across exchanges and
//! sessions) and `serve` can tokenize incoming credentials the same way
//! ([`Scrubber::tokenize_credential`]). Values that already are tokens are left alone, so
//! scrubbing is idempotent and a user rule repeating a built-in does not double-tokenize.
//!
//! The only way to get a [`ScrubbedExchange`] (what `SessionWriter` accepts) is
//! [`Scrubber::scrub`]: scrub-before-persist is a type, not a convention.

use std::ops::Range;
use std::path::{Path, PathBuf};

use hmac::{KeyInit, Mac};
use regex::bytes::Regex as BytesRegex;
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::exchange::{Exchange, Headers};
use wraith_model::secret_names::{ends_in_secret_word, innermost_bracket_name, name_words};
pub use wraith_model::secret_names::{is_secret_field_name, is_secret_param_name};

mod json_text;
mod jsonpath;
mod key;
pub(crate) mod multipart;

use json_text::{NotJson, Scalar, Seg};

pub use jsonpath::{JsonPath, JsonPathError};
pub use key::{HmacKey, KeyEnv, key_file_path};

/// Version of the built-in rule set; part of every policy hash, so changing the built-ins
/// changes the hash of recordings scrubbed with them.
pub const BUILTIN_RULES_VERSION: &str = "wraith-builtin-scrub-rules/4";
/// Tokenization scheme version written into `safety.tokenization_version`.
pub const TOKENIZATION_VERSION: u32 = 1;
/// What `redact` writes.
pub const REDACTED: &str = "[REDACTED]";
/// Prefix of tokens made by `tokenize`.
pub const TOKEN_PREFIX: &str = "wraith_tok_";

/// Query parameters (and form fields, and JSON keys) that always hold secrets: examples of the
/// name family the built-in rules tokenize ([`is_secret_field_name`] for JSON member names,
/// [`is_secret_param_name`] for query parameters and form fields), which holds every one.
pub const BUILTIN_SECRET_PARAMS: &[&str] = &[
    "api_key",
    "secret",
    "password",
    "token",
    "access_token",
    "refresh_token",
    "client_secret",
];

/// Errors loading a scrub policy or resolving the HMAC key.
#[derive(Debug, thiserror::Error)]
pub enum ScrubError {
    #[error("{}", crate::error::at_line(path, *line, message))]
    Policy {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "no scrub policy at {0}: every twin needs a scrub.toml (create the twin with `wraith init`, or add the file; built-in rules apply on top of it)"
    )]
    MissingPolicy(PathBuf),
    /// `scrub.toml` is there but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Refused by policy: in CI a machine-local key would make tokens differ between runs.
    #[error(
        "CI=true but WRAITH_HMAC_KEY is not set (or is empty): set WRAITH_HMAC_KEY (a secret of your CI) so scrub tokens are stable; a machine-local key is not used in CI"
    )]
    KeyRequiredInCi,
    #[error(
        "cannot {action} HMAC key file {path}: {source}; set WRAITH_HMAC_KEY to a secret of your \
         own, or point XDG_CONFIG_HOME (or HOME) at a folder wraith may write"
    )]
    KeyFile {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "no place for the HMAC key file: set WRAITH_HMAC_KEY, or XDG_CONFIG_HOME or HOME so wraith can keep a key in <config dir>/wraith/hmac.key"
    )]
    NoKeyLocation,
}

impl ScrubError {
    /// True for refusals that the CLI reports with the policy exit code (3).
    pub fn is_policy_refusal(&self) -> bool {
        matches!(
            self,
            ScrubError::KeyRequiredInCi | ScrubError::MissingPolicy(_)
        )
    }

    /// The IO error's kind when a file could not be read (`scrub.toml`, the key file).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            ScrubError::Read { source, .. } | ScrubError::KeyFile { source, .. } => {
                Some(source.kind())
            }
            _ => None,
        }
    }
}

/// An exchange that went through [`Scrubber::scrub`]. Only the scrubber constructs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScrubbedExchange(Exchange);

impl ScrubbedExchange {
    pub fn exchange(&self) -> &Exchange {
        &self.0
    }
    pub fn into_inner(self) -> Exchange {
        self.0
    }
}

/// Where a user rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Header values whose name matches (`*` globs allowed), request and response.
    Header,
    /// Cookie values (in `cookie` and `set-cookie`) whose cookie name matches.
    Cookie,
    /// Query parameter (and form-encoded body field, request or response) values whose name matches.
    QueryParam,
    /// JSON body values at a path (`$.a.b`, `$.items[*].email`), request and response.
    Jsonpath,
    /// Every regex match in the places named by `apply_to`.
    Regex,
}

/// What a rule does to a matched value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// `wraith_tok_<base62>` (keyed HMAC): stable, one-way.
    Tokenize,
    /// Replace with the rule's `replacement` literal.
    Mask,
    /// Replace with `[REDACTED]`.
    Redact,
    /// `user_<base62>` (`user_<base62>@wraith.local` for emails): stable, one-way.
    Pseudonymize,
}

/// Where a `regex` rule applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyTo {
    HeaderValues,
    Body,
    Query,
}

/// `[defaults] tokenize_mode`: what `tokenize` rules produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenizeMode {
    #[default]
    Hmac,
    Redact,
    Mask,
}

/// One user rule from `scrub.toml`.
#[derive(Debug, Clone)]
pub struct UserRule {
    /// `id` from the file, or `<scope>:<match>`; recorded in `safety.scrub_rule_ids`.
    pub id: String,
    pub scope: Scope,
    pub pattern: String,
    pub action: Action,
    pub replacement: Option<String>,
    pub apply_to: Vec<ApplyTo>,
    /// 1-based line in scrub.toml.
    pub line: usize,
    matcher: Matcher,
}

#[derive(Debug, Clone)]
enum Matcher {
    Name(NameGlob),
    Path(JsonPath),
    Regex(BytesRegex),
}

/// Case-insensitive name pattern with `*` wildcards.
#[derive(Debug, Clone)]
struct NameGlob(String);

impl NameGlob {
    fn matches(&self, name: &str) -> bool {
        glob_match(self.0.as_bytes(), name.to_ascii_lowercase().as_bytes())
    }
}

/// Whether `s` matches the pattern `p`, where `*` stands for any run of bytes. One pass that
/// returns to the last `*` on a mismatch, so a pattern of many `*`s costs at most
/// `p.len() * s.len()` steps (trying every split of `s` for every `*` took time exponential
/// in their number).
fn glob_match(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    // The position after the last `*` seen, and where in `s` its run now ends.
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                pi += 1;
                star = Some((pi, si));
            }
            Some(&c) if c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((after, end)) => {
                    pi = after;
                    si = end + 1;
                    star = Some((after, end + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// A parsed `scrub.toml`.
#[derive(Debug, Clone, Default)]
pub struct ScrubPolicy {
    pub rules: Vec<UserRule>,
    pub tokenize_mode: TokenizeMode,
    /// Hex SHA-256 of the file bytes and [`BUILTIN_RULES_VERSION`].
    pub policy_hash: String,
    /// Things that load but have no effect (unknown keys, attempts to disable built-ins).
    pub warnings: Vec<String>,
}

#[derive(Deserialize)]
struct RawPolicy {
    #[serde(default)]
    defaults: Option<RawDefaults>,
    #[serde(default)]
    rules: Vec<toml::Spanned<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    #[serde(default)]
    scrub_auth_headers: Option<bool>,
    #[serde(default)]
    scrub_cookies: Option<bool>,
    #[serde(default)]
    tokenize_mode: TokenizeMode,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    #[serde(default)]
    id: Option<String>,
    scope: Scope,
    #[serde(rename = "match")]
    pattern: String,
    action: Action,
    #[serde(default)]
    replacement: Option<String>,
    #[serde(default)]
    apply_to: Option<Vec<ApplyTo>>,
}

impl ScrubPolicy {
    /// The policy in force when only the built-in rules apply (no user rules), for tests and
    /// tools; twins always have a scrub.toml.
    pub fn builtin_only() -> ScrubPolicy {
        ScrubPolicy {
            policy_hash: policy_hash(b""),
            ..ScrubPolicy::default()
        }
    }

    /// Read `scrub.toml`. A missing file is [`ScrubError::MissingPolicy`].
    pub fn load(path: &Path) -> Result<ScrubPolicy, ScrubError> {
        let bytes = match crate::fsutil::read_file(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ScrubError::MissingPolicy(path.to_path_buf()));
            }
            Err(source) => {
                return Err(ScrubError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Self::parse(&bytes, path)
    }

    /// Parse `scrub.toml` bytes; `path` is used in messages.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<ScrubPolicy, ScrubError> {
        let err = |line: usize, message: String| ScrubError::Policy {
            path: path.to_path_buf(),
            line,
            message,
        };
        let text = std::str::from_utf8(bytes).map_err(|e| err(0, format!("not UTF-8: {e}")))?;
        let table: toml::Table = toml::from_str(text).map_err(|e| {
            err(
                e.span().map(|s| line_of(text, s.start)).unwrap_or(0),
                first_line(e.message()),
            )
        })?;
        let raw: RawPolicy = toml::from_str(text).map_err(|e| {
            err(
                e.span().map(|s| line_of(text, s.start)).unwrap_or(0),
                first_line(e.message()),
            )
        })?;
        // An unknown section is refused, not skipped: a misspelled `[[rule]]` would otherwise
        // drop the user's scrub rules and write the values they name to disk.
        let sections: std::collections::BTreeMap<toml::Spanned<String>, serde::de::IgnoredAny> =
            toml::from_str(text).map_err(|e| err(0, first_line(e.message())))?;
        if let Some(key) = sections
            .keys()
            .find(|k| !matches!(k.get_ref().as_str(), "defaults" | "rules" | "pii"))
        {
            let name = key.get_ref();
            // A section sharing the first two letters is the likely intent.
            let hint = [
                ("defaults", "[defaults]"),
                ("rules", "[[rules]]"),
                ("pii", "[pii]"),
            ]
            .into_iter()
            .find(|(known, _)| name.get(..2).is_some_and(|p| known.starts_with(p)))
            .map(|(_, spelled)| format!(" (did you mean `{spelled}`?)"))
            .unwrap_or_default();
            return Err(err(
                line_of(text, key.span().start),
                format!(
                    "unknown section `{name}`{hint}: scrub.toml holds only `[defaults]`, \
                     `[[rules]]` and `[pii]`; rename or remove it"
                ),
            ));
        }
        let mut warnings = Vec::new();
        if table.contains_key("pii") {
            warnings.push(format!(
                "{}: [pii] applies when the twin serves (the outbound PII pass), not to \
                 recordings, which only the built-in rules and [[rules]] scrub: list the fields \
                 to keep off disk as [[rules]]",
                path.display()
            ));
        }
        let defaults = raw.defaults.unwrap_or(RawDefaults {
            scrub_auth_headers: None,
            scrub_cookies: None,
            tokenize_mode: TokenizeMode::Hmac,
        });
        if defaults.scrub_auth_headers == Some(false) || defaults.scrub_cookies == Some(false) {
            warnings.push(format!(
                "{}: built-in scrubbing of credentials and cookies cannot be turned off; the setting is ignored",
                path.display()
            ));
        }
        let mut rules = Vec::with_capacity(raw.rules.len());
        for spanned in raw.rules {
            let line = line_of(text, spanned.span().start);
            let r = spanned.into_inner();
            let matcher = match r.scope {
                Scope::Header | Scope::Cookie | Scope::QueryParam => {
                    if r.pattern.is_empty() {
                        return Err(err(line, "`match` must name something".to_string()));
                    }
                    Matcher::Name(NameGlob(r.pattern.to_ascii_lowercase()))
                }
                Scope::Jsonpath => Matcher::Path(
                    JsonPath::parse(&r.pattern)
                        .map_err(|e| err(line, format!("`match = {:?}`: {e}", r.pattern)))?,
                ),
                Scope::Regex => {
                    let re = BytesRegex::new(&r.pattern).map_err(|e| {
                        err(
                            line,
                            format!(
                                "`match = {:?}` is not a valid regex: {}",
                                r.pattern,
                                regex_problem(&e)
                            ),
                        )
                    })?;
                    // A pattern that can match nothing at all matches between the bytes of
                    // any value: it would write its replacement all through every value, for
                    // good. (`^$`, matching only an empty value, is fine.)
                    if re.find_iter(b"a 0-").any(|m| m.is_empty()) {
                        return Err(err(
                            line,
                            format!(
                                "`match = {:?}` matches the empty string, so it would rewrite \
                                 every value between every two characters; make it match at \
                                 least one character (`+` instead of `*`)",
                                r.pattern
                            ),
                        ));
                    }
                    Matcher::Regex(re)
                }
            };
            if r.action == Action::Mask && r.replacement.is_none() {
                return Err(err(
                    line,
                    "action `mask` needs `replacement = \"...\"` (the literal to write)"
                        .to_string(),
                ));
            }
            if r.apply_to.is_some() && r.scope != Scope::Regex {
                return Err(err(
                    line,
                    "`apply_to` only applies to scope = \"regex\"".to_string(),
                ));
            }
            let id = r.id.clone().unwrap_or_else(|| {
                let scope = match r.scope {
                    Scope::Header => "header",
                    Scope::Cookie => "cookie",
                    Scope::QueryParam => "query_param",
                    Scope::Jsonpath => "jsonpath",
                    Scope::Regex => "regex",
                };
                format!("{scope}:{}", r.pattern)
            });
            rules.push(UserRule {
                id,
                scope: r.scope,
                pattern: r.pattern,
                action: r.action,
                replacement: r.replacement,
                apply_to: r
                    .apply_to
                    .unwrap_or_else(|| vec![ApplyTo::HeaderValues, ApplyTo::Body, ApplyTo::Query]),
                line,
                matcher,
            });
        }
        Ok(ScrubPolicy {
            rules,
            tokenize_mode: defaults.tokenize_mode,
            policy_hash: policy_hash(bytes),
            warnings,
        })
    }
}

/// Hex SHA-256 over the policy file bytes and the built-in rules version.
pub fn policy_hash(scrub_toml: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(scrub_toml);
    h.update(b"\0");
    h.update(BUILTIN_RULES_VERSION.as_bytes());
    hex(&h.finalize())
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// What is wrong with a regex, in one line: a syntax error's own `error: …` line (its first
/// line only says "regex parse error:"), with the column it points at.
fn regex_problem(e: &regex::Error) -> String {
    let text = e.to_string();
    let caret = text
        .lines()
        .find_map(|l| l.trim_start().starts_with('^').then(|| l.find('^')))
        .flatten();
    let pattern_indent = text.lines().nth(1).map(|l| l.len() - l.trim_start().len());
    match text.lines().find_map(|l| l.strip_prefix("error: ")) {
        Some(problem) => match (caret, pattern_indent) {
            (Some(c), Some(indent)) if c >= indent => {
                format!("{problem} (at character {})", c - indent + 1)
            }
            _ => problem.to_string(),
        },
        None => first_line(&text),
    }
}

/// The scrubber: a policy and a key.
#[derive(Debug, Clone)]
pub struct Scrubber {
    policy: ScrubPolicy,
    key: HmacKey,
    fingerprint: String,
}

/// Rule ids that fired while scrubbing one exchange, in first-fired order, and the secrets the
/// built-in rules tokenized there, each with what it became (for [`Scrubber::sweep_secrets`]).
#[derive(Default)]
struct Fired(Vec<String>, Vec<(String, String)>);

impl Fired {
    fn add(&mut self, id: &str) {
        if !self.0.iter().any(|x| x == id) {
            self.0.push(id.to_string());
        }
    }

    /// `secret` was rewritten to `token`.
    fn note(&mut self, secret: &str, token: &str) {
        if secret != token && !self.1.iter().any(|(s, _)| s == secret) {
            self.1.push((secret.to_string(), token.to_string()));
        }
    }

    /// The rules that fired and the secrets noted in a part scrubbed on its own.
    fn absorb(&mut self, other: Fired) {
        for id in &other.0 {
            self.add(id);
        }
        for (secret, token) in &other.1 {
            self.note(secret, token);
        }
    }
}

const RULE_AUTHORIZATION: &str = "builtin:authorization";
const RULE_COOKIE: &str = "builtin:cookie";
const RULE_SET_COOKIE: &str = "builtin:set-cookie";
const RULE_API_KEY_HEADER: &str = "builtin:x-api-key";
const RULE_SECRET_HEADER: &str = "builtin:secret-header";
const RULE_SECRET_QUERY: &str = "builtin:secret-query-param";
const RULE_SECRET_FORM: &str = "builtin:secret-form-field";
const RULE_SECRET_JSON: &str = "builtin:secret-json-field";
const RULE_CARD: &str = "builtin:card-number";
const RULE_SECRET_ECHO: &str = "builtin:secret-echo";

impl Scrubber {
    pub fn new(policy: ScrubPolicy, key: HmacKey) -> Scrubber {
        let fingerprint = key.fingerprint();
        Scrubber {
            policy,
            key,
            fingerprint,
        }
    }

    /// Load `scrub_toml` and resolve the key from the process environment (see [`HmacKey::resolve`]).
    pub fn load(scrub_toml: &Path) -> Result<Scrubber, ScrubError> {
        let policy = ScrubPolicy::load(scrub_toml)?;
        let key = HmacKey::resolve()?;
        Ok(Scrubber::new(policy, key))
    }

    pub fn policy(&self) -> &ScrubPolicy {
        &self.policy
    }
    pub fn policy_hash(&self) -> &str {
        &self.policy.policy_hash
    }
    /// First 8 hex chars of SHA-256 of the key.
    pub fn key_fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn mac(&self, domain: &[u8], value: &[u8]) -> [u8; 32] {
        self.mac_parts(domain, &[value])
    }

    /// [`Self::mac`] of the concatenation of `parts`, without building it.
    fn mac_parts(&self, domain: &[u8], parts: &[&[u8]]) -> [u8; 32] {
        // Invariant: HMAC accepts keys of any length.
        #[allow(clippy::expect_used)]
        let mut m = <hmac::Hmac<Sha256> as KeyInit>::new_from_slice(self.key.bytes())
            .expect("HMAC takes any key length");
        m.update(domain);
        for part in parts {
            m.update(part);
        }
        m.finalize().into_bytes().into()
    }

    /// `wraith_tok_<base62>` for `value`; a value that already is a token is returned unchanged.
    pub fn tokenize(&self, value: &str) -> String {
        if is_envelope(value) {
            return value.to_string();
        }
        match self.policy.tokenize_mode {
            TokenizeMode::Hmac => {
                format!(
                    "{TOKEN_PREFIX}{}",
                    base62_128(&self.mac(b"tok\0", value.as_bytes()))
                )
            }
            TokenizeMode::Redact => REDACTED.to_string(),
            TokenizeMode::Mask => "****".to_string(),
        }
    }

    /// The value a credential header (`Authorization`) is recorded as: the scheme word kept
    /// (`Bearer`, `Basic`, …), the credential tokenized. `serve` uses this to recognise a client
    /// by the credential it sends.
    pub fn tokenize_credential(&self, header_value: &str) -> String {
        let trimmed = header_value.trim();
        match trimmed.split_once(' ') {
            Some((scheme, cred))
                if !scheme.is_empty()
                    && scheme
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
            {
                format!("{scheme} {}", self.tokenize(cred.trim()))
            }
            _ => self.tokenize(trimmed),
        }
    }

    /// [`Self::tokenize`], the secret noted for [`Self::sweep_secrets`].
    fn tokenize_noted(&self, value: &str, fired: &mut Fired) -> String {
        let t = self.tokenize(value);
        fired.note(value, &t);
        t
    }

    /// [`Self::tokenize_credential`], the credential (without its scheme word) noted for
    /// [`Self::sweep_secrets`].
    fn tokenize_credential_noted(&self, header_value: &str, fired: &mut Fired) -> String {
        let t = self.tokenize_credential(header_value);
        let trimmed = header_value.trim();
        match (trimmed.split_once(' '), t.split_once(' ')) {
            (Some((scheme, cred)), Some((kept, token))) if scheme == kept => {
                fired.note(cred.trim(), token);
            }
            _ => fired.note(trimmed, &t),
        }
        t
    }

    /// The value a request header `name: value` is recorded as, under every rule that reaches
    /// a header (the built-ins and the user's header rules). `serve` uses it to recognise a
    /// client by the credential header it sends (`wraith_model::principal`).
    pub fn recorded_header_value(&self, name: &str, value: &str) -> String {
        self.scrub_header(name, value, &mut Fired::default())
    }

    fn pseudonymize(&self, value: &str) -> String {
        if is_envelope(value) {
            return value.to_string();
        }
        let b62 = base62_128(&self.mac(b"pseudo\0", value.as_bytes()));
        if looks_like_email(value) {
            format!("user_{b62}@wraith.local")
        } else {
            format!("user_{b62}")
        }
    }

    fn apply(&self, rule: &UserRule, value: &str) -> String {
        match rule.action {
            Action::Tokenize => self.tokenize(value),
            Action::Mask => rule.replacement.clone().unwrap_or_default(),
            Action::Redact => REDACTED.to_string(),
            Action::Pseudonymize => self.pseudonymize(value),
        }
    }

    /// A header value as it would be recorded: built-in rules and user header/cookie/regex
    /// rules applied. `serve` can use it to compare incoming headers with recorded ones.
    pub fn scrub_header_value(&self, name: &str, value: &str) -> String {
        let mut fired = Fired::default();
        self.scrub_header(name, value, &mut fired)
    }

    fn scrub_header(&self, name: &str, value: &str, fired: &mut Fired) -> String {
        let lname = name.to_ascii_lowercase();
        let mut v = match lname.as_str() {
            "authorization" | "proxy-authorization" => {
                let t = self.tokenize_credential_noted(value, fired);
                if t != value {
                    fired.add(RULE_AUTHORIZATION);
                }
                t
            }
            "cookie" => {
                let noted = std::cell::RefCell::new(Fired::default());
                let t = map_cookie_header(value, |_, val| {
                    Some(self.tokenize_noted(val, &mut noted.borrow_mut()))
                });
                fired.absorb(noted.into_inner());
                if t != value {
                    fired.add(RULE_COOKIE);
                }
                t
            }
            "set-cookie" => {
                let noted = std::cell::RefCell::new(Fired::default());
                let t = map_set_cookie(value, |_, val| {
                    Some(self.tokenize_noted(val, &mut noted.borrow_mut()))
                });
                fired.absorb(noted.into_inner());
                if t != value {
                    fired.add(RULE_SET_COOKIE);
                }
                t
            }
            "x-api-key" => {
                let t = self.tokenize_noted(value, fired);
                if t != value {
                    fired.add(RULE_API_KEY_HEADER);
                }
                t
            }
            // A URL a header names carries its query's secrets as the request's own query does
            // (`Referer: …/cb?access_token=…`, a redirect's `Location`, a `Link` page).
            "referer" | "location" | "content-location" => self.scrub_url(value, fired),
            "link" => self.scrub_link(value, fired),
            _ if is_secret_header_name(&lname) => {
                // `X-Authorization: Bearer …` keeps its scheme word as `Authorization` does.
                let t = if is_credential_header_name(&lname) {
                    self.tokenize_credential_noted(value, fired)
                } else {
                    self.tokenize_noted(value, fired)
                };
                if t != value {
                    fired.add(RULE_SECRET_HEADER);
                }
                t
            }
            _ => value.to_string(),
        };
        for rule in &self.policy.rules {
            let before = v.clone();
            match (&rule.matcher, rule.scope) {
                (Matcher::Name(g), Scope::Header) if g.matches(&lname) => {
                    v = if is_credential_header_name(&lname) && rule.action == Action::Tokenize {
                        self.tokenize_credential(&v)
                    } else {
                        self.apply(rule, &v)
                    };
                }
                (Matcher::Name(g), Scope::Cookie) if lname == "cookie" => {
                    v = map_cookie_header(&v, |n, val| g.matches(n).then(|| self.apply(rule, val)));
                }
                (Matcher::Name(g), Scope::Cookie) if lname == "set-cookie" => {
                    v = map_set_cookie(&v, |n, val| g.matches(n).then(|| self.apply(rule, val)));
                }
                (Matcher::Regex(re), Scope::Regex)
                    if rule.apply_to.contains(&ApplyTo::HeaderValues) =>
                {
                    v = regex_replace_str(re, &v, |m| self.apply(rule, m));
                }
                _ => {}
            }
            if v != before {
                fired.add(&rule.id);
            }
        }
        v
    }

    fn scrub_headers(&self, headers: &mut Headers, fired: &mut Fired) {
        for (name, values) in headers.iter_mut() {
            for value in values.iter_mut() {
                let new = self.scrub_header(name, value, fired);
                if new != *value {
                    *value = new;
                }
            }
        }
    }

    /// A URL with the parameters of its query, and of a fragment written as one (an OAuth
    /// redirect's `#access_token=…`), scrubbed as the request's own query is
    /// ([`Self::scrub_query`]); every other byte stays as it was.
    fn scrub_url(&self, url: &str, fired: &mut Fired) -> String {
        let (head, fragment) = match url.split_once('#') {
            Some((head, fragment)) => (head, Some(fragment)),
            None => (url, None),
        };
        let scrub_after_mark = |text: &str, fired: &mut Fired| match text.split_once('?') {
            Some((before, query)) => format!("{before}?{}", self.scrub_query(query, false, fired)),
            None => text.to_string(),
        };
        let mut out = scrub_after_mark(head, fired);
        if let Some(fragment) = fragment {
            out.push('#');
            // A fragment is a query of its own (`#a=1&b=2`), or a client-side route with one
            // (`#/cb?a=1`).
            if fragment.contains('?') {
                out.push_str(&scrub_after_mark(fragment, fired));
            } else {
                out.push_str(&self.scrub_query(fragment, false, fired));
            }
        }
        out
    }

    /// A `Link` header (RFC 8288) with each `<URL>` reference scrubbed as [`Self::scrub_url`]
    /// does; the parameters after each reference are kept as they were.
    fn scrub_link(&self, value: &str, fired: &mut Fired) -> String {
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(open) = rest.find('<') {
            let Some(close) = rest[open..].find('>').map(|i| open + i) else {
                break;
            };
            out.push_str(&rest[..=open]);
            out.push_str(&self.scrub_url(&rest[open + 1..close], fired));
            out.push('>');
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        out
    }

    /// Rewrite the values of secret parameters in a query string (or form body); every other
    /// byte stays as it was. Names and values are read as a form reads them, `+` as a space
    /// (a query is `application/x-www-form-urlencoded` too, as servers read it), so a secret
    /// sent as `a+b`, `a%20b`, in a form or in a JSON body is one token.
    fn scrub_query(&self, query: &str, form: bool, fired: &mut Fired) -> String {
        if query.is_empty() {
            return String::new();
        }
        let mut out = String::with_capacity(query.len());
        for (i, part) in query.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            let Some((raw_name, raw_value)) = part.split_once('=') else {
                out.push_str(part);
                continue;
            };
            let name = decode_component(raw_name);
            let lname = name.to_ascii_lowercase();
            // `user[password]`, `token[]`: the name a bracketed name nests names the value.
            let inner = innermost_bracket_name(&lname);
            let mut value = decode_component(raw_value);
            let original = value.clone();
            // Judged as sent: `clientSecret` splits into words at its camelCase boundary.
            if is_secret_param_name(&name) && !value.is_empty() {
                let t = self.tokenize_noted(&value, fired);
                if t != value {
                    fired.add(if form {
                        RULE_SECRET_FORM
                    } else {
                        RULE_SECRET_QUERY
                    });
                    value = t;
                }
            }
            for rule in &self.policy.rules {
                let before = value.clone();
                match (&rule.matcher, rule.scope) {
                    (Matcher::Name(g), Scope::QueryParam)
                        if g.matches(&lname) || inner.is_some_and(|n| g.matches(n)) =>
                    {
                        value = self.apply(rule, &value);
                    }
                    (Matcher::Regex(re), Scope::Regex)
                        if (!form && rule.apply_to.contains(&ApplyTo::Query))
                            || (form && rule.apply_to.contains(&ApplyTo::Body)) =>
                    {
                        value = regex_replace_str(re, &value, |m| self.apply(rule, m));
                    }
                    _ => {}
                }
                if value != before {
                    fired.add(&rule.id);
                }
            }
            out.push_str(raw_name);
            out.push('=');
            if value == original {
                out.push_str(raw_value);
            } else {
                out.push_str(&encode_component(&value));
            }
        }
        out
    }

    /// Scrub a body given its content type. Returns `Some(new)` only when something changed.
    fn scrub_body(
        &self,
        body: &[u8],
        content_type: Option<&str>,
        fired: &mut Fired,
    ) -> Option<Vec<u8>> {
        if body.is_empty() {
            return None;
        }
        let ct = content_type.unwrap_or("").to_ascii_lowercase();
        if is_binary_type(&ct) {
            return None;
        }
        if let Some(kind) = LineFraming::of(&ct) {
            return self.scrub_lines(body, kind, fired);
        }
        if ct.contains("json") || ct.is_empty() {
            match self.scrub_json(body, fired) {
                Ok(scrubbed) => return scrubbed,
                // A body sent without a content type that reads as a form (`user=a&password=…`)
                // is scrubbed as one: a client that left the type out still sent the form.
                Err(NotJson) => {
                    if ct.is_empty()
                        && let Some(text) = form_like_text(body)
                    {
                        return self.scrub_form(text, fired);
                    }
                    // Claimed JSON that does not parse (cut short, or not UTF-8): its
                    // secret-named members are still found, then the byte-level rules run.
                    return self.scrub_not_json(body, fired);
                }
            }
        }
        // A form answers too: an OAuth token endpoint's `access_token=…&token_type=bearer`.
        if ct.starts_with("application/x-www-form-urlencoded")
            && let Ok(text) = std::str::from_utf8(body)
        {
            return self.scrub_form(text, fired);
        }
        // A multipart form's secret-named text fields, then the byte-level rules over it all.
        let fields = if ct.starts_with("multipart/form-data") {
            self.scrub_multipart_fields(body, content_type.unwrap_or(""), fired)
        } else {
            None
        };
        let fields_changed = fields.is_some();
        let body = fields.as_deref().unwrap_or(body);
        match self.scrub_bytes(body, fired) {
            Some(out) => Some(out),
            None if fields_changed => Some(body.to_vec()),
            None => None,
        }
    }

    /// A urlencoded form's secret-named fields (and card numbers). `None` when nothing changed.
    fn scrub_form(&self, text: &str, fired: &mut Fired) -> Option<Vec<u8>> {
        let mut local = Fired::default();
        let mut new = self.scrub_query(text, true, &mut local);
        let cards = replace_cards_str(&new);
        if cards != new {
            local.add(RULE_CARD);
            new = cards;
        }
        if local.0.is_empty() {
            return None;
        }
        fired.absorb(local);
        Some(new.into_bytes())
    }

    /// A body of JSON texts one to a line: NDJSON / JSON Lines (each line), or an SSE stream
    /// (each `data:` line's value). A line that holds JSON is scrubbed as a JSON body is, every
    /// other line (and the `data:` values that are not JSON) by the byte-level rules; line
    /// ends and field names stay as sent. An SSE event's consecutive `data:` lines are one
    /// value joined by `\n` (the SSE rules), read as the JSON documents it holds one after
    /// another: a document that takes whole lines is scrubbed as one, however many lines it
    /// spans (`event_documents`). `None` when nothing changed.
    fn scrub_lines(&self, body: &[u8], kind: LineFraming, fired: &mut Fired) -> Option<Vec<u8>> {
        let lines: Vec<FramedLine<'_>> = body
            .split_inclusive(|b| *b == b'\n')
            .map(|line| FramedLine::split(line, kind))
            .collect();
        let mut out = Vec::with_capacity(body.len());
        let mut changed = false;
        let mut i = 0;
        while i < lines.len() {
            // An SSE event: its lines up to the blank line that ends it. Its `data:` lines are
            // one value even with other fields (`id:`, `event:`) or comments between them.
            let len = if kind == LineFraming::EventStream && lines[i].is_data {
                lines[i..].iter().take_while(|l| !l.is_blank()).count()
            } else {
                0
            };
            let event_lines = &lines[i..i + len];
            let data: Vec<FramedLine<'_>> =
                event_lines.iter().filter(|l| l.is_data).copied().collect();
            if data.len() >= 2 {
                // Each data line's output, in the order the data lines come.
                let mut parts: Vec<Vec<u8>> = vec![Vec::new(); data.len()];
                let mut next = 0;
                for doc in event_documents(&data) {
                    if doc.start < next || doc.end > data.len() {
                        continue;
                    }
                    for (k, line) in data.iter().enumerate().take(doc.start).skip(next) {
                        changed |= self.scrub_line(line, kind, &mut parts[k], fired);
                    }
                    let doc_lines = &data[doc.clone()];
                    match self.scrub_split_json(doc_lines, fired) {
                        Some(scrubbed) => {
                            for (k, (line, part)) in doc_lines.iter().zip(&scrubbed).enumerate() {
                                changed |= part.is_some();
                                let to = &mut parts[doc.start + k];
                                to.extend_from_slice(line.head);
                                to.extend_from_slice(part.as_deref().unwrap_or(line.value));
                                to.extend_from_slice(line.end);
                            }
                        }
                        None => {
                            for (k, line) in doc_lines.iter().enumerate() {
                                changed |=
                                    self.scrub_line(line, kind, &mut parts[doc.start + k], fired);
                            }
                        }
                    }
                    next = doc.end;
                }
                for (k, line) in data.iter().enumerate().skip(next) {
                    changed |= self.scrub_line(line, kind, &mut parts[k], fired);
                }
                // The event's lines as they came: data lines from `parts`, the others read
                // by themselves.
                let mut parts = parts.into_iter();
                for line in event_lines {
                    if line.is_data {
                        out.extend(parts.next().unwrap_or_default());
                    } else {
                        changed |= self.scrub_line(line, kind, &mut out, fired);
                    }
                }
                i += len;
                continue;
            }
            changed |= self.scrub_line(&lines[i], kind, &mut out, fired);
            i += 1;
        }
        changed.then_some(out)
    }

    /// One line of a line-framed body read by itself, appended to `out`: its value as a JSON
    /// body when it is one, else by the byte-level rules. Whether anything changed.
    fn scrub_line(
        &self,
        line: &FramedLine<'_>,
        kind: LineFraming,
        out: &mut Vec<u8>,
        fired: &mut Fired,
    ) -> bool {
        let FramedLine {
            head, value, end, ..
        } = *line;
        let scrubbed = match self.scrub_json(value, fired) {
            Ok(json) => json,
            // Part of a document (`[{"token":"…"},`, a stream cut short): its secret-named
            // members, then the byte-level rules.
            Err(NotJson) => self.scrub_not_json(value, fired),
        };
        // A field name or comment line (`event: …`, `: …`) gets the byte-level rules too.
        let head_scrubbed = if kind == LineFraming::EventStream && value.is_empty() {
            self.scrub_bytes(head, fired)
        } else {
            None
        };
        out.extend_from_slice(head_scrubbed.as_deref().unwrap_or(head));
        out.extend_from_slice(scrubbed.as_deref().unwrap_or(value));
        out.extend_from_slice(end);
        scrubbed.is_some() || head_scrubbed.is_some()
    }

    /// The values of `lines` (an SSE event's consecutive `data:` lines) scrubbed as the one
    /// JSON document they hold when joined by `\n`: one entry a line, `None` where that line
    /// is unchanged. `None` when the joined value is not one JSON document (each line is then
    /// read by itself). The rules rewrite only strings and numbers, which hold no raw line
    /// break, so the scrubbed document splits back at the same places.
    fn scrub_split_json(
        &self,
        lines: &[FramedLine<'_>],
        fired: &mut Fired,
    ) -> Option<Vec<Option<Vec<u8>>>> {
        let joined = lines
            .iter()
            .map(|l| l.value)
            .collect::<Vec<_>>()
            .join(&b'\n');
        let mut local = Fired::default();
        let scrubbed = self.scrub_json(&joined, &mut local).ok()?;
        let parts: Vec<Option<Vec<u8>>> = match &scrubbed {
            None => vec![None; lines.len()],
            Some(doc) => {
                let parts: Vec<&[u8]> = doc.split(|b| *b == b'\n').collect();
                if parts.len() != lines.len() {
                    return None;
                }
                parts
                    .iter()
                    .zip(lines)
                    .map(|(part, line)| (*part != line.value).then(|| part.to_vec()))
                    .collect()
            }
        };
        fired.absorb(local);
        Some(parts)
    }

    /// Text that claims JSON but is no document: its secret-named members
    /// ([`Self::scrub_secret_pairs`]), then the byte-level rules. `None` when nothing changed.
    fn scrub_not_json(&self, body: &[u8], fired: &mut Fired) -> Option<Vec<u8>> {
        let pairs = self.scrub_secret_pairs(body, fired);
        let cur = pairs.as_deref().unwrap_or(body);
        self.scrub_bytes(cur, fired).or(pairs)
    }

    /// The secret-named members (`"password": "…"`, the built-in names) of text that claims
    /// JSON but does not parse as a document: a stream cut short mid-answer, an NDJSON line
    /// holding part of an array, bytes that are not UTF-8. The structure-aware rules need a
    /// document; this finds each such member where it stands, its closing quote optional (the
    /// text may end inside the value), and tokenizes the value as the JSON rule would the
    /// parsed string. `None` when nothing changed.
    fn scrub_secret_pairs(&self, body: &[u8], fired: &mut Fired) -> Option<Vec<u8>> {
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        for c in secret_pair_regex().captures_iter(body) {
            let (Some(key), Some(value)) = (c.get(1), c.get(2)) else {
                continue;
            };
            if value.is_empty() || !is_secret_field_name(&json_string_text(key.as_bytes())) {
                continue;
            }
            let text = json_string_text(value.as_bytes());
            if is_envelope(&text) {
                continue;
            }
            let token = self.tokenize_noted(&text, fired);
            // Written back as the inside of a JSON string: escaped, without its quotes.
            let quoted = Value::String(token).to_string();
            let inner = quoted[1..quoted.len() - 1].to_string();
            edits.push((value.range(), inner));
        }
        if edits.is_empty() {
            return None;
        }
        fired.add(RULE_SECRET_JSON);
        Some(splice(body, &edits))
    }

    /// The byte-level rules (card numbers, the user's body `regex` rules) over a body read as
    /// bytes. `None` when nothing changed.
    fn scrub_bytes(&self, body: &[u8], fired: &mut Fired) -> Option<Vec<u8>> {
        if body.is_empty() {
            return None;
        }
        let mut out = replace_cards_bytes(body);
        let mut changed = out.is_some();
        if changed {
            fired.add(RULE_CARD);
        }
        for rule in &self.policy.rules {
            if let (Matcher::Regex(re), Scope::Regex) = (&rule.matcher, rule.scope)
                && rule.apply_to.contains(&ApplyTo::Body)
            {
                let cur = out.as_deref().unwrap_or(body);
                let replaced = re.replace_all(cur, |c: &regex::bytes::Captures<'_>| {
                    let m = String::from_utf8_lossy(&c[0]).into_owned();
                    self.apply(rule, &m).into_bytes()
                });
                if replaced.as_ref() != cur {
                    let v = replaced.into_owned();
                    out = Some(v);
                    fired.add(&rule.id);
                    changed = true;
                }
            }
        }
        if changed { out } else { None }
    }

    /// A `multipart/form-data` body with the value of each small text field whose name is a
    /// secret's (the built-in names, a bracketed name by the name it nests, user `query_param`
    /// rules) rewritten in place; every other byte (boundaries, part headers, file parts) stays
    /// as sent. `None` when nothing changed or the body does not split as the content type's
    /// boundary says.
    fn scrub_multipart_fields(
        &self,
        body: &[u8],
        content_type: &str,
        fired: &mut Fired,
    ) -> Option<Vec<u8>> {
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        let mut local = Fired::default();
        for part in multipart::text_fields(content_type, body)? {
            let Some(value) = body
                .get(part.value.clone())
                .and_then(|v| std::str::from_utf8(v).ok())
            else {
                continue;
            };
            if value.is_empty() {
                continue;
            }
            let lname = part.name.to_ascii_lowercase();
            let inner = innermost_bracket_name(&lname);
            let mut new = value.to_string();
            if is_secret_param_name(&part.name) {
                new = self.tokenize_noted(&new, &mut local);
                if new != value {
                    local.add(RULE_SECRET_FORM);
                }
            }
            for rule in &self.policy.rules {
                if let (Matcher::Name(g), Scope::QueryParam) = (&rule.matcher, rule.scope)
                    && (g.matches(&lname) || inner.is_some_and(|n| g.matches(n)))
                {
                    let before = new.clone();
                    new = self.apply(rule, &new);
                    if new != before {
                        local.add(&rule.id);
                    }
                }
            }
            if new != value {
                edits.push((part.value, new));
            }
        }
        if edits.is_empty() {
            return None;
        }
        fired.absorb(local);
        Some(splice(body, &edits))
    }

    /// Scrub a body that is a JSON object or array (`Err` for any other body). Only the strings
    /// and numbers a rule changes are rewritten, in place; every other byte stays as it was
    /// sent. `Ok(None)` when nothing changed.
    fn scrub_json(&self, body: &[u8], fired: &mut Fired) -> Result<Option<Vec<u8>>, NotJson> {
        let whole = std::str::from_utf8(body).map_err(|_| NotJson)?;
        // A UTF-8 byte order mark is no JSON, but some clients put one before a JSON body (RFC
        // 8259 §8.1 lets a reader ignore it): the body is read after it, and stored with it,
        // as sent, like every byte no rule changes.
        let text = whole.strip_prefix('\u{feff}').unwrap_or(whole);
        let bom = whole.len() - text.len();
        if !text
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .starts_with(['{', '['])
        {
            return Err(NotJson);
        }
        let (edits, builtin, user_hits) = self.json_edits(text, &[])?;
        let edits: Vec<_> = edits
            .into_iter()
            .map(|(span, new)| (span.start + bom..span.end + bom, new))
            .collect();
        // Built-ins in the order they first fired, then the user's rules in file order.
        fired.absorb(builtin);
        for (rule, hit) in self.policy.rules.iter().zip(user_hits) {
            if hit {
                fired.add(&rule.id);
            }
        }
        if edits.is_empty() {
            return Ok(None);
        }
        Ok(Some(splice(body, &edits)))
    }

    /// The rewrites of the JSON text `text`, whose root value sits at `prefix` (empty for a
    /// body; a string's path for a JSON document held in a string), with the built-in rules
    /// and the user's rules that fired. Nothing is kept from a text that is not JSON.
    fn json_edits(&self, text: &str, prefix: &[Seg]) -> Result<JsonEdits, NotJson> {
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        let mut builtin = Fired::default();
        let mut user_hits = vec![false; self.policy.rules.len()];
        let mut full: Vec<Seg> = prefix.to_vec();
        json_text::for_each_scalar(text, &mut |path, span, scalar| {
            full.truncate(prefix.len());
            full.extend_from_slice(path);
            if let Some(new) = self.scrub_json_scalar(&full, scalar, &mut builtin, &mut user_hits) {
                edits.push((span, new));
            }
        })?;
        Ok((edits, builtin, user_hits))
    }

    /// A string at `path` that holds a JSON object or array (an event's `payload`, a
    /// serialized body), with that document scrubbed as a body is, its values' paths continuing
    /// the string's (`$.payload.password`); `None` when it is no JSON or nothing changed.
    fn scrub_embedded_json(
        &self,
        path: &[Seg],
        s: &str,
        builtin: &mut Fired,
        user_hits: &mut [bool],
    ) -> Option<String> {
        if !s
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .starts_with(['{', '['])
        {
            return None;
        }
        let (edits, inner_builtin, inner_hits) = self.json_edits(s, path).ok()?;
        if edits.is_empty() {
            return None;
        }
        builtin.absorb(inner_builtin);
        for (hit, inner) in user_hits.iter_mut().zip(inner_hits) {
            *hit |= inner;
        }
        // The spans are whole values, so the spliced bytes stay UTF-8.
        String::from_utf8(splice(s.as_bytes(), &edits)).ok()
    }

    /// The JSON text a string or number at `path` is rewritten to, or `None` when no rule
    /// changes it. Built-ins first (secret-named fields, then card numbers), then the user's
    /// `jsonpath` and body `regex` rules in file order, each on what the one before left.
    fn scrub_json_scalar(
        &self,
        path: &[Seg],
        scalar: Scalar<'_>,
        builtin: &mut Fired,
        user_hits: &mut [bool],
    ) -> Option<String> {
        let mut cur = scalar;
        let mut changed = false;
        // A secret-named field's value is secret through and through: every string inside an
        // array or object under it too. Numbers are not secrets here, only possibly cards.
        let secret_field = path
            .iter()
            .any(|seg| matches!(seg, Seg::Key(k) if is_secret_field_name(k)));
        match &cur {
            Scalar::Str(s) if secret_field => {
                if !s.is_empty() {
                    // An echoed `"Authorization": "Bearer …"` keeps its scheme word as the
                    // header does, so the credential gets the header's token.
                    let credential = matches!(path.last(), Some(Seg::Key(k))
                        if name_words(k).last().is_some_and(|w| w == "authorization"));
                    let t = if credential {
                        self.tokenize_credential_noted(s, builtin)
                    } else {
                        self.tokenize_noted(s, builtin)
                    };
                    if t != *s {
                        cur = Scalar::Str(t.into());
                        changed = true;
                        builtin.add(RULE_SECRET_JSON);
                    }
                }
            }
            Scalar::Str(s) => {
                // A JSON document held in a string is scrubbed as a body (cards included).
                if let Some(inner) = self.scrub_embedded_json(path, s, builtin, user_hits) {
                    cur = Scalar::Str(inner.into());
                    changed = true;
                } else {
                    // A URL held in a string (an echoed request URL, a callback, a next page)
                    // carries its query's secrets as a header's URL does.
                    let url = if is_url_with_parameters(s) {
                        self.scrub_url(s, builtin)
                    } else {
                        s.to_string()
                    };
                    let r = replace_cards_str(&url);
                    if r != url {
                        builtin.add(RULE_CARD);
                    }
                    if r != *s {
                        cur = Scalar::Str(r.into());
                        changed = true;
                    }
                }
            }
            Scalar::Num(n) => {
                if n.bytes().all(|b| b.is_ascii_digit()) && is_card_number(n) {
                    cur = Scalar::Str(REDACTED.into());
                    changed = true;
                    builtin.add(RULE_CARD);
                }
            }
        }
        for (rule, hit) in self.policy.rules.iter().zip(user_hits.iter_mut()) {
            match (&rule.matcher, rule.scope) {
                // A number a jsonpath rule selects becomes a string, changed or not.
                (Matcher::Path(p), Scope::Jsonpath) if p.selects(path) => {
                    let (value, is_number) = match &cur {
                        Scalar::Str(s) => (s.as_ref(), false),
                        Scalar::Num(n) => (*n, true),
                    };
                    let new = self.apply(rule, value);
                    if new != value || is_number {
                        cur = Scalar::Str(new.into());
                        changed = true;
                        *hit = true;
                    }
                }
                (Matcher::Regex(re), Scope::Regex) if rule.apply_to.contains(&ApplyTo::Body) => {
                    if let Scalar::Str(s) = &cur {
                        let r = regex_replace_str(re, s, |m| self.apply(rule, m));
                        if r != *s {
                            cur = Scalar::Str(r.into());
                            changed = true;
                            *hit = true;
                        }
                    }
                }
                _ => {}
            }
        }
        if !changed {
            return None;
        }
        Some(match cur {
            Scalar::Str(s) => Value::String(s.into_owned()).to_string(),
            Scalar::Num(n) => n.to_string(),
        })
    }

    /// Scrub an exchange and fill its `safety` and `content` metadata. Bodies are measured and
    /// digested before scrubbing (so authenticity can be checked with the key, and sizes say
    /// what was really exchanged).
    pub fn scrub(&self, mut ex: Exchange) -> ScrubbedExchange {
        // The digest is taken over the bodies in place: a recorded body can be tens of MB, and
        // a copy of it (or of both) would double what recording it holds in memory.
        let request_len = ex.request.body.len();
        let length_prefix = (request_len as u64).to_be_bytes();
        let mut parts: Vec<&[u8]> = vec![&length_prefix, &ex.request.body];
        parts.extend(
            ex.frames
                .iter()
                .filter(|f| f.direction == "server")
                .map(|f| f.body.as_slice()),
        );
        let body_size = parts[1..].iter().map(|p| p.len() as u64).sum::<u64>();
        let digest = hex(&self.mac_parts(b"body\0", &parts));
        let mut fired = Fired::default();
        self.scrub_headers(&mut ex.request.headers, &mut fired);
        self.scrub_headers(&mut ex.response.headers, &mut fired);
        if let Some(trailers) = ex.response.trailers.as_mut() {
            self.scrub_headers(trailers, &mut fired);
        }
        let scrubbed_query = self.scrub_query(&ex.request.query, false, &mut fired);
        let echoes = query_echoes(&ex.request.query, &scrubbed_query);
        ex.request.query = scrubbed_query;
        let req_ct = ex
            .request
            .content_type
            .clone()
            .or_else(|| ex.request_header("content-type").map(str::to_string));
        if let Some(new) = self.scrub_body(&ex.request.body, req_ct.as_deref(), &mut fired) {
            ex.request.body = new.into();
        }
        let resp_ct = ex
            .response
            .content_type
            .clone()
            .or_else(|| ex.response_header("content-type").map(str::to_string));
        let single_server_frame =
            ex.frames.len() == 1 && ex.frames.first().is_some_and(|f| f.direction == "server");
        if single_server_frame {
            if let Some(frame) = ex.frames.first_mut()
                && let Some(new) = self.scrub_body(&frame.body, resp_ct.as_deref(), &mut fired)
            {
                frame.body = new;
            }
        } else {
            // Streamed bodies: each chunk on its own (a JSON document never spans chunks in SSE).
            for frame in ex.frames.iter_mut() {
                if let Some(new) = self.scrub_body(&frame.body, resp_ct.as_deref(), &mut fired) {
                    frame.body = new;
                }
            }
        }
        // A secret the request's query sent, echoed back in the answer (a request path or URL
        // the API repeats): the same token there as in the query.
        if !echoes.is_empty() {
            for frame in ex.frames.iter_mut().filter(|f| f.direction == "server") {
                if let Some(new) = replace_echoes(&frame.body, &echoes) {
                    frame.body = new;
                    fired.add(RULE_SECRET_QUERY);
                }
            }
        }
        self.sweep_secrets(&mut ex, req_ct.as_deref(), resp_ct.as_deref(), &mut fired);
        ex.safety.scrub_rule_ids = fired.0;
        ex.safety.tokenization_version = TOKENIZATION_VERSION;
        ex.safety.policy_hash = self.policy.policy_hash.clone();
        ex.safety.hmac_key_fingerprint = self.fingerprint.clone();
        ex.content.body_digest_hmac_sha256 = digest;
        ex.content.body_size_bytes = body_size;
        ScrubbedExchange(ex)
    }
}

impl Scrubber {
    /// Every other occurrence, anywhere in the exchange (header values, path, query, request
    /// and response bodies), of a secret a built-in rule tokenized somewhere in it, replaced by
    /// that secret's token: an answer echoing the request's `Authorization` credential, a URL
    /// in a body repeating an `access_token`. Only secrets of at least [`MIN_SWEEP_LEN`]
    /// characters are looked for, where they stand alone (see [`replace_echoes`]), as sent and
    /// percent-encoded; a body of a binary type is left alone.
    fn sweep_secrets(
        &self,
        ex: &mut Exchange,
        req_ct: Option<&str>,
        resp_ct: Option<&str>,
        fired: &mut Fired,
    ) {
        let mut forms: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (secret, token) in &fired.1 {
            if secret.chars().count() < MIN_SWEEP_LEN || is_redaction_placeholder(secret) {
                continue;
            }
            for form in [secret.clone(), encode_component(secret)] {
                // A form a JSON string would hold escaped is not looked for: the replacement
                // must not cut an escape in two.
                let plain = form
                    .bytes()
                    .all(|b| b >= 0x20 && b != b'"' && b != b'\\' && b != 0x7f);
                if plain && !forms.iter().any(|(f, _)| *f == form.as_bytes()) {
                    forms.push((form.into_bytes(), token.clone().into_bytes()));
                }
            }
        }
        if forms.is_empty() {
            return;
        }
        forms.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        let mut changed = false;
        let mut sweep_str = |s: &mut String| {
            if let Some(new) = replace_echoes(s.as_bytes(), &forms)
                && let Ok(new) = String::from_utf8(new)
            {
                *s = new;
                changed = true;
            }
        };
        let headers = [
            Some(&mut ex.request.headers),
            Some(&mut ex.response.headers),
        ]
        .into_iter()
        .chain([ex.response.trailers.as_mut()])
        .flatten();
        for headers in headers {
            for (_, values) in headers.iter_mut() {
                values.iter_mut().for_each(&mut sweep_str);
            }
        }
        sweep_str(&mut ex.request.path);
        sweep_str(&mut ex.request.query);
        let binary =
            |ct: Option<&str>| ct.is_some_and(|ct| is_binary_type(&ct.to_ascii_lowercase()));
        if !binary(req_ct)
            && let Some(new) = replace_echoes(&ex.request.body, &forms)
        {
            ex.request.body = new.into();
            changed = true;
        }
        if !binary(resp_ct) {
            for frame in ex.frames.iter_mut() {
                if let Some(new) = replace_echoes(&frame.body, &forms) {
                    frame.body = new;
                    changed = true;
                }
            }
        }
        if changed {
            fired.add(RULE_SECRET_ECHO);
        }
    }
}

/// A value a recording tool wrote in place of a secret (`[SANITIZED]`, `<redacted>`,
/// `********`): no secret, and the same text stands in for other values, which a sweep
/// would make one record's secret (an id the tool also masked would read as the token).
fn is_redaction_placeholder(value: &str) -> bool {
    let v = value.trim();
    let inner = [('[', ']'), ('<', '>'), ('{', '}'), ('(', ')')]
        .iter()
        .find_map(|&(open, close)| v.strip_prefix(open)?.strip_suffix(close))
        .unwrap_or(v)
        .trim_matches(|c| c == '{' || c == '}');
    let words = !inner.is_empty()
        && inner
            .chars()
            .all(|c| c.is_ascii_alphabetic() || matches!(c, ' ' | '_' | '-'));
    let bracketed = inner.len() < v.len();
    let mut chars = v.chars();
    let repeated = chars.next().is_some_and(|first| chars.all(|c| c == first));
    let word = inner.to_ascii_lowercase();
    (bracketed && words)
        || repeated
        || matches!(
            word.as_str(),
            "redacted" | "sanitized" | "filtered" | "masked" | "hidden" | "removed" | "omitted"
        )
}

/// Secrets shorter than this are not swept from the rest of an exchange
/// ([`Scrubber::sweep_secrets`]): a short value is too often part of other text.
const MIN_SWEEP_LEN: usize = 8;

/// Secrets shorter than this are not looked for in the answer: a short value is too often
/// part of other text (an id, a word) to be rewritten wherever it stands.
const MIN_ECHO_LEN: usize = 5;

/// The values [`Scrubber::scrub_query`] rewrote, as (what was sent, what it became), each in the
/// forms an answer may repeat it in: as sent in the URL and decoded. Values a JSON string
/// would hold escaped, and short ones, are left out.
fn query_echoes(original: &str, scrubbed: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for (before, after) in original.split('&').zip(scrubbed.split('&')) {
        let (Some((_, raw)), Some((_, new))) = (before.split_once('='), after.split_once('='))
        else {
            continue;
        };
        if raw == new {
            continue;
        }
        let token = decode_component(new);
        // As sent, decoded as the token's value was (`+` a space), and decoded keeping `+`
        // (an answer that unescaped the URL's `%XX` only).
        let decoded = decode_component(raw);
        let kept_plus = percent_encoding::percent_decode_str(raw)
            .decode_utf8_lossy()
            .into_owned();
        for form in [raw.to_string(), decoded, kept_plus] {
            let plain = form
                .bytes()
                .all(|b| b >= 0x20 && b != b'"' && b != b'\\' && b != 0x7f);
            if form.len() >= MIN_ECHO_LEN
                && plain
                && !out.iter().any(|(f, _)| *f == form.as_bytes())
            {
                out.push((form.into_bytes(), token.clone().into_bytes()));
            }
        }
    }
    // Longest first, so a value holding another is replaced whole.
    out.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
    out
}

/// `body` with every occurrence of an echoed secret (see [`query_echoes`]) that stands alone
/// (no letter, digit, `-` or `_` right before or after it) replaced by its token. `None` when
/// none was found.
fn replace_echoes(body: &[u8], echoes: &[(Vec<u8>, Vec<u8>)]) -> Option<Vec<u8>> {
    let word =
        |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_');
    let mut cur: Option<Vec<u8>> = None;
    for (from, to) in echoes {
        let text = cur.as_deref().unwrap_or(body);
        let mut out = Vec::with_capacity(text.len());
        let mut i = 0;
        let mut found = false;
        while i < text.len() {
            let hit = text[i..].starts_with(from)
                && !word(i.checked_sub(1).and_then(|p| text.get(p)))
                && !word(text.get(i + from.len()));
            if hit {
                out.extend_from_slice(to);
                i += from.len();
                found = true;
            } else {
                out.push(text[i]);
                i += 1;
            }
        }
        if found {
            cur = Some(out);
        }
    }
    cur
}

/// The header-name family whose values are credentials (besides `authorization`, `cookie`,
/// `set-cookie` and `x-api-key`, which have rules of their own), judged by the name's last
/// word (`wraith_model::secret_names::ends_in_secret_word`): a `token`, `secret`, `password`, `passwd`,
/// `apikey`, `credential(s)` or `authorization` (`X-Auth-Token`, `Private-Token`,
/// `X-Amz-Security-Token`, `X-Client-Secret`, `Apikey`, `X-Authorization`), or a `key` after
/// a word saying whose (`Api-Key`, `X-Goog-Api-Key`, `X-Access-Key`, `Ocp-Apim-Subscription-Key`).
/// A `key` alone (`Idempotency-Key`, `Sec-WebSocket-Key`) and a word in the middle of a name
/// (`X-Token-Expires`) are not credentials, nor is a CORS header (`Access-Control-*`): the
/// Fetch standard's headers carry origins, methods, header names and flags, and a browser
/// refuses an answer whose `Access-Control-Allow-Credentials` is anything but `true`.
fn is_secret_header_name(lname: &str) -> bool {
    if lname.starts_with("access-control-") {
        return false;
    }
    ends_in_secret_word(&name_words(lname))
}

/// A header whose value is `<scheme> <credential>` (`Authorization`, `Proxy-Authorization`,
/// `X-Authorization`): the scheme word is kept when it is tokenized.
fn is_credential_header_name(lname: &str) -> bool {
    lname.rsplit(['-', '_']).next() == Some("authorization")
}

/// `body` with each span of `edits` (in order, not overlapping) replaced by its new text and
/// every other byte kept.
fn splice(body: &[u8], edits: &[(Range<usize>, String)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 32 * edits.len());
    let mut at = 0;
    for (span, new) in edits {
        out.extend_from_slice(body.get(at..span.start).unwrap_or_default());
        out.extend_from_slice(new.as_bytes());
        at = span.end;
    }
    out.extend_from_slice(body.get(at..).unwrap_or_default());
    out
}

/// A string that reads as a URL with a query or fragment (`https://…?…`, `/cb#…`): an absolute
/// `http(s)` URL or an absolute path, holding no whitespace.
fn is_url_with_parameters(s: &str) -> bool {
    let lower = s.get(..8).unwrap_or(s).to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://") || s.starts_with('/'))
        && s.contains(['?', '#'])
        && !s.contains(char::is_whitespace)
}

/// Already-scrubbed values (token envelopes) are never scrubbed again.
fn is_envelope(v: &str) -> bool {
    if v == REDACTED {
        return true;
    }
    for prefix in [TOKEN_PREFIX, "user_"] {
        if let Some(rest) = v.strip_prefix(prefix) {
            let rest = rest.strip_suffix("@wraith.local").unwrap_or(rest);
            return rest.len() == 22 && rest.bytes().all(|b| b.is_ascii_alphanumeric());
        }
    }
    false
}

fn looks_like_email(v: &str) -> bool {
    match v.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty() && domain.contains('.') && !v.contains(char::is_whitespace)
        }
        None => false,
    }
}

/// A JSON text's rewrites (span, new text), the built-in rules that fired, and which of the
/// user's rules did.
type JsonEdits = (Vec<(Range<usize>, String)>, Fired, Vec<bool>);

/// One line of a line-framed body: the field name an SSE line starts with (`data:` and the
/// space after it; the whole line when it is not a `data:` line), the value after it, and the
/// line end (`\n`, `\r\n` or nothing).
#[derive(Clone, Copy)]
struct FramedLine<'a> {
    head: &'a [u8],
    value: &'a [u8],
    end: &'a [u8],
    /// An SSE `data:` line.
    is_data: bool,
}

impl<'a> FramedLine<'a> {
    /// A blank line: in an SSE stream, the end of an event.
    fn is_blank(&self) -> bool {
        !self.is_data && self.head.is_empty()
    }

    fn split(line: &'a [u8], kind: LineFraming) -> Self {
        let content_len = line.len()
            - if line.ends_with(b"\r\n") {
                2
            } else {
                usize::from(line.ends_with(b"\n"))
            };
        let (content, end) = line.split_at(content_len);
        match kind {
            LineFraming::Json => FramedLine {
                head: b"",
                value: content,
                end,
                is_data: false,
            },
            LineFraming::EventStream => match content.strip_prefix(b"data:") {
                Some(value) => {
                    let space = usize::from(value.starts_with(b" "));
                    let (head, value) = content.split_at(5 + space);
                    FramedLine {
                        head,
                        value,
                        end,
                        is_data: true,
                    }
                }
                None => FramedLine {
                    head: content,
                    value: b"",
                    end,
                    is_data: false,
                },
            },
        }
    }
}

/// The JSON documents (objects and arrays) an SSE event's data value holds one after another
/// that span several of its lines, each as the range of `lines` it takes; the value is the
/// lines' values joined by `\n`, as the SSE rules join them. A document counts only when it
/// takes whole lines: it starts its first line (after whitespace; the event's first line may
/// start with a byte order mark, as a body may) and only whitespace follows it on its last.
/// Every other line is left to be read by itself: a value that is no JSON (`[DONE]`), a
/// document on one line, one that starts or ends mid-line.
///
/// One pass over the value, so the time stays linear in its size. After a document the next
/// one is looked for on the line after its last; where no document starts, reading goes on
/// at the line where the reader stopped (or the next line, if that is where it started), so
/// each line is read at most twice. A line the reader went past is not read again as the
/// start of a document (that would take time quadratic in the lines: an event of 40,000
/// `data: [` lines, minutes), but the objects and arrays that closed in what it read (an
/// unclosed array's items) are documents too, scrubbed with paths from their own root, when
/// they take whole lines. Empty when the value is not UTF-8.
fn event_documents(lines: &[FramedLine<'_>]) -> Vec<Range<usize>> {
    let joined = lines
        .iter()
        .map(|l| l.value)
        .collect::<Vec<_>>()
        .join(&b'\n');
    let Ok(text) = std::str::from_utf8(&joined) else {
        return Vec::new();
    };
    // Where each line's value starts in `text`; it ends at the next start less one.
    let mut starts = Vec::with_capacity(lines.len());
    let mut at = 0;
    for line in lines {
        starts.push(at);
        at += line.value.len() + 1;
    }
    let line_end = |k: usize| starts[k] + lines[k].value.len();
    // The line holding byte `pos`, looking forward from line `from`.
    let line_at = |from: usize, pos: usize| {
        let mut k = from;
        while k + 1 < lines.len() && starts[k + 1] <= pos {
            k += 1;
        }
        k
    };
    let is_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    // A line's value, after the byte order mark the event may start with.
    let value_of = |k: usize| {
        let value = lines[k].value;
        if k == 0 {
            value.strip_prefix("\u{feff}".as_bytes()).unwrap_or(value)
        } else {
            value
        }
    };
    let is_blank = |k: usize| value_of(k).iter().all(is_ws);
    let mut docs = Vec::new();
    let mut k = 0;
    // The first of the blank lines right before line `k` (`k` when there are none): they
    // belong to the document that starts there, as the blank lines after it do.
    let mut blank_from = 0;
    while k < lines.len() {
        let value = value_of(k);
        let lead = value.iter().take_while(|b| is_ws(b)).count();
        if lead == value.len() {
            k += 1;
            continue;
        }
        if !matches!(value.get(lead), Some(b'{' | b'[')) {
            k += 1;
            blank_from = k;
            continue;
        }
        let start = line_end(k) - value.len() + lead;
        k = match json_text::value_end(text, start) {
            Ok(end) => {
                let last = line_at(k, end.saturating_sub(1));
                let whole = joined
                    .get(end..line_end(last))
                    .is_some_and(|rest| rest.iter().all(is_ws));
                let mut next = last + 1;
                if whole {
                    while next < lines.len() && is_blank(next) {
                        next += 1;
                    }
                    if next - blank_from >= 2 {
                        docs.push(blank_from..next);
                    }
                }
                next
            }
            Err(stopped) => {
                let stop_line = line_at(k, stopped.at);
                let mut next = if stop_line > k { stop_line } else { k + 1 };
                // What was read is no document, but the objects and arrays that closed in it
                // are (an unclosed array's items): each that takes whole lines is one.
                let mut prev_first = None;
                let mut from = k;
                for span in stopped.closed {
                    let first = line_at(from, span.start);
                    let last = line_at(first, span.end.saturating_sub(1));
                    from = last;
                    let starts_line = prev_first != Some(first)
                        && joined
                            .get(starts[first]..span.start)
                            .is_some_and(|lead| lead.iter().all(is_ws));
                    prev_first = Some(first);
                    let ends_line = joined
                        .get(span.end..line_end(last))
                        .is_some_and(|rest| rest.iter().all(is_ws));
                    if starts_line && ends_line && last > first {
                        docs.push(first..last + 1);
                        next = next.max(last + 1);
                    }
                }
                next
            }
        };
        blank_from = k;
    }
    docs
}

/// Bodies that hold one JSON text per line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineFraming {
    /// NDJSON / JSON Lines: every line.
    Json,
    /// Server-sent events: the value of every `data:` line.
    EventStream,
}

impl LineFraming {
    /// The framing a (lowercase) content type names, if it is one of these.
    fn of(ct: &str) -> Option<LineFraming> {
        let essence = ct.split(';').next().unwrap_or("").trim();
        match essence {
            "text/event-stream" => Some(LineFraming::EventStream),
            "application/x-ndjson"
            | "application/ndjson"
            | "application/jsonl"
            | "application/x-jsonl"
            | "application/jsonlines"
            | "application/x-jsonlines" => Some(LineFraming::Json),
            _ => None,
        }
    }
}

/// The text of a body that reads as a urlencoded form (`user=a&password=…`): UTF-8, holding a
/// `=`, no whitespace or control character, not starting with `{` or `[` (JSON cut short).
fn form_like_text(body: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(body).ok()?;
    let form_like = text.contains('=')
        && !text.starts_with(['{', '['])
        && !text.chars().any(|c| c.is_whitespace() || c.is_control());
    form_like.then_some(text)
}

fn is_binary_type(ct: &str) -> bool {
    ["image/", "audio/", "video/", "font/"]
        .iter()
        .any(|p| ct.starts_with(p))
        || [
            "application/octet-stream",
            "application/zip",
            "application/pdf",
            "application/gzip",
            "application/grpc",
        ]
        .iter()
        .any(|p| ct.starts_with(p))
}

/// 128 bits of `digest` in base62, fixed width 22.
fn base62_128(digest: &[u8; 32]) -> String {
    const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut buf = [0u8; 16];
    buf.copy_from_slice(&digest[..16]);
    let mut n = u128::from_be_bytes(buf);
    let mut out = [b'0'; 22];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A query or form name or value as `application/x-www-form-urlencoded` reads it: `+` is a
/// space, then `%XX` is decoded (so `%2B` is a `+`).
fn decode_component(s: &str) -> String {
    let s = s.replace('+', " ");
    percent_encoding::percent_decode_str(&s)
        .decode_utf8_lossy()
        .into_owned()
}

fn encode_component(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
        .to_string()
        .replace("%5F", "_")
        .replace("%2D", "-")
        .replace("%2E", ".")
        .replace("%7E", "~")
}

/// Rewrite each `name=value` pair of a `Cookie` header; `f` returns the new value or `None`.
fn map_cookie_header(value: &str, f: impl Fn(&str, &str) -> Option<String>) -> String {
    value
        .split(';')
        .map(|pair| {
            let lead = pair.len() - pair.trim_start().len();
            let (ws, p) = pair.split_at(lead);
            match p.split_once('=') {
                Some((n, v)) if !v.is_empty() => match f(n.trim(), v) {
                    Some(new) => format!("{ws}{n}={new}"),
                    None => pair.to_string(),
                },
                _ => pair.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// Rewrite the value of a `Set-Cookie` header; attributes after the first `;` are kept.
fn map_set_cookie(value: &str, f: impl Fn(&str, &str) -> Option<String>) -> String {
    let (first, attrs) = match value.find(';') {
        Some(i) => value.split_at(i),
        None => (value, ""),
    };
    match first.split_once('=') {
        Some((n, v)) if !v.trim().is_empty() => match f(n.trim(), v.trim()) {
            Some(new) => format!("{n}={new}{attrs}"),
            None => value.to_string(),
        },
        _ => value.to_string(),
    }
}

fn regex_replace_str(re: &BytesRegex, s: &str, f: impl Fn(&str) -> String) -> String {
    let replaced = re.replace_all(s.as_bytes(), |c: &regex::bytes::Captures<'_>| {
        f(&String::from_utf8_lossy(&c[0])).into_bytes()
    });
    String::from_utf8_lossy(&replaced).into_owned()
}

/// A JSON member with a string value, in text that may not parse: `"name"`, a colon, then the
/// value's characters up to its closing quote or the end of the text. Byte-wise, so text that
/// is not UTF-8 is read too.
fn secret_pair_regex() -> &'static BytesRegex {
    static RE: std::sync::OnceLock<BytesRegex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        // Invariant: a constant, valid pattern.
        #[allow(clippy::expect_used)]
        BytesRegex::new(r#"(?s-u)"((?:[^"\\]|\\.)*)"[ \t\r\n]*:[ \t\r\n]*"((?:[^"\\]|\\.)*)"#)
            .expect("valid member regex")
    })
}

/// The text of a JSON string's inside (`raw`, without its quotes): unescaped when it reads as
/// one, else its bytes as they are (lossy where they are not UTF-8).
fn json_string_text(raw: &[u8]) -> String {
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice::<String>(&quoted)
        .unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned())
}

/// Card-number candidates: 13–19 digits, optionally grouped by single spaces or dashes.
fn card_regex() -> &'static BytesRegex {
    static RE: std::sync::OnceLock<BytesRegex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        // Invariant: a constant, valid pattern.
        #[allow(clippy::expect_used)]
        BytesRegex::new(r"(?-u:\b)\d(?:[ -]?\d){12,18}(?-u:\b)").expect("valid card regex")
    })
}

/// True for a Luhn-valid number with a card network's prefix and one of that network's lengths,
/// written either as bare digits or in the printed groupings (4-4-4-4, 4-4-4-4-3, 4-6-5, 4-6-4)
/// with one kind of separator. The prefix and length checks keep ids, snowflakes and
/// millisecond timestamps (which mostly start with 1) from being taken for cards.
pub fn is_card_number(candidate: &str) -> bool {
    let sep = candidate.bytes().find(|b| *b == b' ' || *b == b'-');
    if let Some(sep) = sep {
        let groups: Vec<usize> = candidate.split(sep as char).map(str::len).collect();
        let printed = matches!(
            groups.as_slice(),
            [4, 4, 4, 4] | [4, 4, 4, 4, 3] | [4, 6, 5] | [4, 6, 4]
        );
        if !printed || candidate.bytes().any(|b| !b.is_ascii_digit() && b != sep) {
            return false;
        }
    }
    let digits: Vec<u8> = candidate
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    let len = digits.len();
    if !(13..=19).contains(&len) {
        return false;
    }
    let prefix2 = digits[0] as u32 * 10 + digits[1] as u32;
    let prefix4 = prefix2 * 100 + digits[2] as u32 * 10 + digits[3] as u32;
    let network = match digits[0] {
        4 => matches!(len, 13 | 16 | 19),                   // Visa
        5 => (51..=55).contains(&prefix2) && len == 16,     // Mastercard
        2 => (2221..=2720).contains(&prefix4) && len == 16, // Mastercard 2-series
        3 => match prefix2 {
            34 | 37 => len == 15,                          // Amex
            30 | 36 | 38 | 39 => (14..=16).contains(&len), // Diners
            35 => (16..=19).contains(&len),                // JCB
            _ => false,
        },
        6 => (16..=19).contains(&len) && (prefix4 == 6011 || matches!(prefix2, 62 | 64 | 65)), // Discover, UnionPay
        _ => false,
    };
    network && luhn(&digits)
}

/// A digit run glued to an identifier (`tf-test-4111…`, `log_4111…`, `/4111…`) is part of a
/// name, not a card number written on its own.
fn embedded_in_identifier(before: Option<u8>, after: Option<u8>) -> bool {
    let glue = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'/' | b'.');
    before.is_some_and(glue)
        || after.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'/'))
}

fn luhn(digits: &[u8]) -> bool {
    let mut sum = 0u32;
    for (i, d) in digits.iter().rev().enumerate() {
        let mut d = *d as u32;
        if i % 2 == 1 {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
    }
    sum.is_multiple_of(10)
}

fn replace_cards_str(s: &str) -> String {
    match replace_cards_bytes(s.as_bytes()) {
        Some(b) => String::from_utf8_lossy(&b).into_owned(),
        None => s.to_string(),
    }
}

fn replace_cards_bytes(body: &[u8]) -> Option<Vec<u8>> {
    let re = card_regex();
    let mut hit = false;
    let out = re.replace_all(body, |c: &regex::bytes::Captures<'_>| {
        let whole = c.get(0).map(|m| (m.start(), m.end())).unwrap_or((0, 0));
        let before = whole.0.checked_sub(1).map(|i| body[i]);
        let after = body.get(whole.1).copied();
        let m = String::from_utf8_lossy(&c[0]).into_owned();
        if !embedded_in_identifier(before, after) && is_card_number(&m) {
            hit = true;
            REDACTED.as_bytes().to_vec()
        } else {
            c[0].to_vec()
        }
    });
    if hit { Some(out.into_owned()) } else { None }
}

#[cfg(test)]
mod tests;
