//! The outbound policy: what every application response goes through between the engine
//! choosing its bytes and the wire, in every fidelity (strict included).
//!
//! Passes, in order: the self-URL rewrite (in the engine's output step), the header allowlist
//! (`[serve] strip_headers`), the twin's `scrub.toml` rules, `[REDACTED]` placeholder
//! substitution (not under strict fidelity), and the default PII pass, followed by a
//! consistency sweep so a value tokenized in one field is not left verbatim inside another.
//! Every body pass is value-injective: envelopes carry 128 bits of a keyed MAC of the value, so
//! two different recorded values never become one served value.
//!
//! Exempt, by provenance and never by shape: positions the renderer reports as echoed from this
//! request or minted for this response ([`Origins`]), and values this session itself supplied
//! (request bodies, queries and path parameters) or the twin minted for it earlier
//! ([`SessionValues`]), so echoes round-trip verbatim even when read back later from state.
//!
//! This module is pure: the CLI reads `scrub.toml` and `wraith.toml` and hands the engine an
//! [`OutboundPolicy`] of plain data.

pub mod claim;
mod evidence;
mod headers;
mod pii;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use regex::Regex;
use serde_json::Value;

pub use claim::ReplayClaim;
pub(crate) use evidence::{LazyEvidence, RouteEvidence, precompute as precompute_columns};
pub use headers::keeps_header;

/// A tokenizer handed in by the caller (the record-time scrubber's `tokenize`), so a secret the
/// twin tokenizes at serve time gets the same `wraith_tok_…` as it would have at record time.
pub type Tokenizer = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The twin's declared outbound policy, as plain data.
#[derive(Clone)]
pub struct OutboundPolicy {
    /// `[serve] strip_headers`: drop vendor and infrastructure headers (see [`keeps_header`]).
    pub strip_headers: bool,
    /// `scrub.toml` `[[rules]]`, in file order.
    pub rules: Vec<OutboundRule>,
    pub pii: PiiOptions,
    /// Key of the serve-time envelopes (`user_…@wraith.local`, `phone_…`, `name_…`, and
    /// `wraith_tok_…` when no [`Tokenizer`] is given). Any length.
    pub key: Vec<u8>,
    /// See [`Tokenizer`]; `None` tokenizes with `key`.
    pub tokenizer: Option<Tokenizer>,
}

impl Default for OutboundPolicy {
    /// The documented defaults: strip headers, PII detection on, no user rules, a fixed key
    /// (deterministic; `wraith serve` hands in the twin's scrub key instead).
    fn default() -> Self {
        OutboundPolicy {
            strip_headers: true,
            rules: Vec::new(),
            pii: PiiOptions::default(),
            key: b"wraith-outbound-default-key".to_vec(),
            tokenizer: None,
        }
    }
}

impl std::fmt::Debug for OutboundPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboundPolicy")
            .field("strip_headers", &self.strip_headers)
            .field("rules", &self.rules)
            .field("pii", &self.pii)
            .field("tokenizer", &self.tokenizer.as_ref().map(|_| "<fn>"))
            .finish_non_exhaustive()
    }
}

/// `scrub.toml` `[pii]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiiOptions {
    /// `detect = false` turns the default PII pass off (user rules still apply).
    pub detect: bool,
    /// Paths never tokenized by the PII pass: JSONPath-ish globs (`$.country_code`,
    /// `$.items[*].name`), `*` = one segment, matched as a suffix of the key path.
    pub allowlist: Vec<String>,
    /// `[pii.fields] always`: paths always tokenized (same glob form), whatever their shape.
    pub always: Vec<String>,
    /// `[[pii.allow]]`: reasoned acceptances of what the pass would rewrite.
    pub accepted: Vec<PiiAllow>,
}

impl Default for PiiOptions {
    fn default() -> Self {
        PiiOptions {
            detect: true,
            allowlist: Vec::new(),
            always: Vec::new(),
            accepted: Vec::new(),
        }
    }
}

/// One `[[pii.allow]]` entry: the PII pass keeps the values at `path` (the allowlist's glob
/// form) — only `value` when one is given — because `reason` says they are not personal data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiiAllow {
    pub path: String,
    pub value: Option<String>,
    pub reason: String,
}

/// One `scrub.toml` rule as the outbound scrub applies it to responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundRule {
    /// Rule id (for messages).
    pub id: String,
    pub target: RuleTarget,
    pub action: RuleAction,
}

/// Where a rule looks in a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleTarget {
    /// Response header values whose name matches (case-insensitive, `*` globs).
    Header { name: String },
    /// JSON body values at a path (`$.a.b`, `$.items[*].email`, `*` = any one segment).
    JsonPath { path: String },
    /// Every regex match, in header values and/or body strings.
    Regex {
        pattern: String,
        header_values: bool,
        body: bool,
    },
}

/// What a rule does to a value. Outbound, `mask` and `redact` leave a value that already is
/// their output alone and tokenize anything else: a literal replacement would merge distinct
/// values, and every outbound pass must stay value-injective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleAction {
    Tokenize,
    Pseudonymize,
    Mask { replacement: String },
    Redact,
}

/// Why a policy could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutboundError {
    #[error("scrub rule `{id}`: {message}; fix the rule in scrub.toml")]
    Rule { id: String, message: String },
    #[error("[pii] path `{path}`: {message}; fix it in scrub.toml")]
    PiiPath { path: String, message: String },
}

/// Where a body position's value came from in this response, as the renderer reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldOrigin {
    /// Copied from this request.
    Echo,
    /// Invented by the twin for this response (generated id, clock, counter).
    Minted,
}

/// Positions (JSON pointers, unescaped keys, `/a/0/b`) the renderer echoed or minted. A
/// position covers everything under it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origins(pub BTreeMap<String, FieldOrigin>);

impl Origins {
    pub(crate) fn insert(&mut self, pointer: &str, origin: FieldOrigin) {
        self.0.insert(pointer.to_string(), origin);
    }

    /// The origin of `pointer` or of its nearest reported ancestor.
    pub fn of(&self, pointer: &str) -> Option<FieldOrigin> {
        if self.0.is_empty() {
            return None;
        }
        let mut p = pointer;
        loop {
            if let Some(o) = self.0.get(p) {
                return Some(*o);
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return None,
            }
        }
    }

    /// Forget every position at or under `pointer` (its value was replaced).
    pub(crate) fn clear_under(&mut self, pointer: &str) {
        let prefix = format!("{pointer}/");
        self.0
            .retain(|k, _| k != pointer && !k.starts_with(&prefix));
    }
}

/// Values one session supplied or was minted, kept so later responses echo them verbatim.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionValues {
    /// Hashed, not ordered: only membership is ever asked, on every string leaf of every
    /// answer, and a session's ids share long prefixes that made each ordered lookup a dozen
    /// string comparisons. A fixed-key hasher: the engine reads no OS randomness, and the set
    /// is never iterated, so no output depends on its order. foldhash, not SipHash: these
    /// lookups run on every leaf, and a fixed key resists crafted collisions no better either
    /// way (the set is capped at [`MAX_SESSION_VALUES`]).
    values: HashSet<String, foldhash::fast::FixedState>,
    /// The body fields of this session's latest successful create per route:
    /// (`METHOD /template`, field pointer) → value. Session-bound reads repeat them.
    created: BTreeMap<(String, String), Value>,
}

/// Values remembered per session; past this, the oldest are not evicted but new ones are not
/// added (a session this chatty still gets every echo of its first values right).
const MAX_SESSION_VALUES: usize = 8192;

impl SessionValues {
    pub(crate) fn add(&mut self, v: &str) {
        // Looked up before copying: the same path parameters and body values arrive on
        // request after request, and an owned copy per request was allocated only to be dropped.
        if !v.is_empty() && self.values.len() < MAX_SESSION_VALUES && !self.values.contains(v) {
            self.values.insert(v.to_string());
        }
    }

    /// Every string leaf (and number, as text) of a request body.
    pub(crate) fn add_json(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.add(s),
            Value::Array(a) => a.iter().for_each(|x| self.add_json(x)),
            Value::Object(m) => m.values().for_each(|x| self.add_json(x)),
            _ => {}
        }
    }

    pub(crate) fn contains(&self, v: &str) -> bool {
        self.values.contains(v)
    }

    /// Remember a successful create's body leaves (see [`SessionValues::created_value`]).
    /// The leaves are taken as the walk reaches them, never collected first: a create body of
    /// millions of leaves (a 16 MiB JSON array) was once copied whole, more than a gigabyte,
    /// for all but the first few thousand to be dropped. Past the cap only a field this route
    /// already holds is updated, only a route that holds one is looked up at all, and of one
    /// body only as many leaves as the cap are looked at.
    pub(crate) fn record_create(&mut self, route: &str, body: &Value) {
        let created = &mut self.created;
        let route = route.to_string();
        let mut route_held = created
            .range((route.clone(), String::new())..)
            .next()
            .is_some_and(|((r, _), _)| *r == route);
        // Leaves past the cap's count in one body are not looked at: the walk cannot stop.
        let mut seen = 0usize;
        wraith_model::pointer::for_each_leaf(body, &mut |ptr, leaf| {
            seen += 1;
            if seen > MAX_SESSION_VALUES {
                return;
            }
            if created.len() < MAX_SESSION_VALUES {
                created.insert((route.clone(), ptr.to_string()), leaf.clone());
                route_held = true;
            } else if route_held && let Some(v) = created.get_mut(&(route.clone(), ptr.to_string()))
            {
                *v = leaf.clone();
            }
        });
    }

    /// The value this session last supplied at `field` in a successful create on `route`.
    pub(crate) fn created_value(&self, route: &str, field: &str) -> Option<&Value> {
        self.created.get(&(route.to_string(), field.to_string()))
    }
}

/// The text values of a `multipart/form-data` body (file parts included only when they are
/// UTF-8), so echoes of fields a client sent as multipart stay verbatim too. `None` when the
/// content type is not multipart or names no boundary.
pub(crate) fn multipart_values(content_type: &str, body: &[u8]) -> Option<Vec<String>> {
    let ct = content_type.to_ascii_lowercase();
    if !ct.starts_with("multipart/form-data") {
        return None;
    }
    let boundary = content_type
        .split(';')
        .filter_map(|p| p.trim().split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("boundary"))
        .map(|(_, v)| v.trim().trim_matches('"').to_string())?;
    // Split the raw bytes: an upload is mostly file content, and decoding all of it (as this
    // once did) cost milliseconds per request. Only a part's value is checked for UTF-8.
    let delim = format!("--{boundary}");
    let mut starts = memchr::memmem::find_iter(body, delim.as_bytes()).map(|i| i + delim.len());
    let mut out = Vec::new();
    let Some(mut start) = starts.next() else {
        return Some(out);
    };
    loop {
        let next = starts.next();
        let end = next.map_or(body.len(), |n| n - delim.len());
        let part = &body[start..end];
        if part.starts_with(b"--") {
            break;
        }
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        if let Some(sep) = memchr::memmem::find(part, b"\r\n\r\n") {
            let value = &part[sep + 4..];
            let value = value.strip_suffix(b"\r\n").unwrap_or(value);
            if let Ok(value) = std::str::from_utf8(value)
                && !value.is_empty()
                && !value.contains('\u{FFFD}')
            {
                out.push(value.to_string());
            }
        }
        match next {
            Some(n) => start = n,
            None => break,
        }
    }
    Some(out)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    /// `*` or `[*]`: any one segment.
    Any,
    Index(usize),
}

fn parse_path(p: &str) -> Result<Vec<Seg>, String> {
    let s = p.trim();
    let s = s.strip_prefix('$').unwrap_or(s);
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let name = &r[..end];
            if name.is_empty() {
                return Err("empty segment (recursive `..` is not supported)".to_string());
            }
            out.push(if name == "*" {
                Seg::Any
            } else {
                Seg::Key(name.to_string())
            });
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').ok_or("unclosed `[`")?;
            let inner = r[..end].trim();
            out.push(if inner == "*" {
                Seg::Any
            } else if let Ok(i) = inner.parse::<usize>() {
                Seg::Index(i)
            } else {
                Seg::Key(inner.trim_matches(['\'', '"']).to_string())
            });
            rest = &r[end + 1..];
        } else if out.is_empty() {
            // `country_code` without `$.`: a bare first segment.
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            let name = &rest[..end];
            out.push(if name == "*" {
                Seg::Any
            } else {
                Seg::Key(name.to_string())
            });
            rest = &rest[end..];
        } else {
            return Err(format!("unexpected `{rest}`"));
        }
    }
    if out.is_empty() {
        return Err("the path names no field".to_string());
    }
    Ok(out)
}

fn seg_matches(p: &Seg, s: &Seg) -> bool {
    match (p, s) {
        (Seg::Any, _) => true,
        (Seg::Key(a), Seg::Key(b)) => a == b,
        (Seg::Index(a), Seg::Index(b)) => a == b,
        _ => false,
    }
}

/// Full match from the root (user JSONPath rules).
fn path_matches(pattern: &[Seg], path: &[Seg]) -> bool {
    pattern.len() == path.len() && pattern.iter().zip(path).all(|(p, s)| seg_matches(p, s))
}

/// Suffix match over key segments only (`[pii]` globs: array positions are ignored).
fn glob_suffix_matches(pattern: &[Seg], path: &[Seg]) -> bool {
    // Walked from the end without collecting: this runs for every glob on every served leaf.
    let mut keys = path.iter().rev().filter(|s| matches!(s, Seg::Key(_)));
    pattern
        .iter()
        .rev()
        .filter(|s| !matches!(s, Seg::Index(_)))
        .all(|p| keys.next().is_some_and(|s| seg_matches(p, s)))
}

fn glob_name(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..])),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(
        pattern.to_ascii_lowercase().as_bytes(),
        name.to_ascii_lowercase().as_bytes(),
    )
}

enum Target {
    Header(String),
    Path(Vec<Seg>),
    Regex {
        re: Regex,
        header_values: bool,
        body: bool,
    },
}

struct Rule {
    target: Target,
    action: RuleAction,
}

/// An [`OutboundPolicy`] ready to run.
pub(crate) struct Compiled {
    policy: OutboundPolicy,
    rules: Vec<Rule>,
    allow: Vec<Vec<Seg>>,
    /// `[[pii.allow]]` paths, each with the one value it accepts (`None`: every value).
    accepted: Vec<(Vec<Seg>, Option<String>)>,
    always: Vec<Vec<Seg>>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.policy.fmt(f)
    }
}

/// What the body passes may read about this response.
pub(crate) struct BodyCtx<'a> {
    pub origins: &'a Origins,
    pub session: Option<&'a SessionValues>,
    /// The route's column evidence, built only when a leaf's outcome depends on it.
    pub evidence: Option<LazyEvidence<'a>>,
    /// Substitute `[REDACTED]` placeholders (not under strict fidelity).
    pub replace_redacted: bool,
    /// Seeds placeholder substitutes (the route name), so they are stable per position.
    pub seed: &'a str,
    /// When set, every session lookup the walk makes is noted here with its answer (the
    /// engine's replay-bytes cache reuses a walk's output only for a session that answers
    /// the same).
    pub probe: Option<&'a SessionProbe>,
}

/// The session lookups of one body walk: value → whether the session held it.
#[derive(Debug, Default)]
pub(crate) struct SessionProbe {
    asked: std::cell::RefCell<BTreeMap<String, bool>>,
}

impl SessionProbe {
    fn note(&self, v: &str, has: bool) {
        let mut asked = self.asked.borrow_mut();
        if !asked.contains_key(v) {
            asked.insert(v.to_string(), has);
        }
    }

    /// Every value looked up, with its answer, in value order.
    pub(crate) fn into_answers(self) -> Vec<(String, bool)> {
        self.asked.into_inner().into_iter().collect()
    }
}

impl Compiled {
    /// The default policy ([`OutboundPolicy::default`]), which has nothing to fail on.
    pub(crate) fn defaults() -> Compiled {
        Compiled {
            policy: OutboundPolicy::default(),
            rules: Vec::new(),
            allow: Vec::new(),
            accepted: Vec::new(),
            always: Vec::new(),
        }
    }

    pub(crate) fn new(policy: OutboundPolicy) -> Result<Compiled, OutboundError> {
        let mut rules = Vec::with_capacity(policy.rules.len());
        for r in &policy.rules {
            let err = |message: String| OutboundError::Rule {
                id: r.id.clone(),
                message,
            };
            let target = match &r.target {
                RuleTarget::Header { name } => Target::Header(name.to_ascii_lowercase()),
                RuleTarget::JsonPath { path } => Target::Path(parse_path(path).map_err(err)?),
                RuleTarget::Regex {
                    pattern,
                    header_values,
                    body,
                } => Target::Regex {
                    re: Regex::new(pattern).map_err(|e| err(format!("bad regex: {e}")))?,
                    header_values: *header_values,
                    body: *body,
                },
            };
            rules.push(Rule {
                target,
                action: r.action.clone(),
            });
        }
        let globs = |list: &[String]| -> Result<Vec<Vec<Seg>>, OutboundError> {
            list.iter()
                .map(|p| {
                    parse_path(p).map_err(|message| OutboundError::PiiPath {
                        path: p.clone(),
                        message,
                    })
                })
                .collect()
        };
        let allow = globs(&policy.pii.allowlist)?;
        let always = globs(&policy.pii.always)?;
        let accepted_paths: Vec<String> =
            policy.pii.accepted.iter().map(|a| a.path.clone()).collect();
        let accepted = globs(&accepted_paths)?
            .into_iter()
            .zip(policy.pii.accepted.iter().map(|a| a.value.clone()))
            .collect();
        Ok(Compiled {
            policy,
            rules,
            allow,
            accepted,
            always,
        })
    }

    pub(crate) fn policy(&self) -> &OutboundPolicy {
        &self.policy
    }

    fn token(&self, v: &str) -> String {
        match &self.policy.tokenizer {
            Some(t) => {
                let out = t(v);
                // A tokenizer in redact/mask mode would merge values: keep injectivity.
                if pii::is_envelope(&out) && out != "[REDACTED]" {
                    out
                } else {
                    pii::envelope(&self.policy.key, pii::Class::Credential, v)
                }
            }
            None => pii::envelope(&self.policy.key, pii::Class::Credential, v),
        }
    }

    fn apply_action(&self, action: &RuleAction, v: &str) -> String {
        if pii::is_envelope(v) {
            return v.to_string();
        }
        match action {
            RuleAction::Tokenize => self.token(v),
            RuleAction::Pseudonymize => {
                if pii::is_email(v) {
                    pii::envelope(&self.policy.key, pii::Class::Email, v)
                } else {
                    format!(
                        "user_{}",
                        pii::base62_128(&pii::mac(&self.policy.key, b"pseudo\0", v.as_bytes()))
                    )
                }
            }
            RuleAction::Mask { replacement } if v == replacement => v.to_string(),
            RuleAction::Mask { .. } | RuleAction::Redact => self.token(v),
        }
    }

    /// Header allowlist and header-scoped rules. Returns whether any kept header's value
    /// changed.
    pub(crate) fn apply_headers(&self, headers: &mut Vec<(String, String)>) -> bool {
        if self.policy.strip_headers {
            headers.retain(|(k, _)| keeps_header(k));
        }
        let mut changed = false;
        for (name, value) in headers.iter_mut() {
            for rule in &self.rules {
                let new = match &rule.target {
                    Target::Header(glob) if glob_name(glob, name) => {
                        self.apply_action(&rule.action, value)
                    }
                    Target::Regex {
                        re,
                        header_values: true,
                        ..
                    } => re
                        .replace_all(value, |c: &regex::Captures<'_>| {
                            self.apply_action(&rule.action, &c[0])
                        })
                        .into_owned(),
                    _ => continue,
                };
                if &new != value {
                    *value = new;
                    changed = true;
                }
            }
        }
        changed
    }

    /// The body passes. Returns whether any byte changed.
    pub(crate) fn apply_body(&self, body: &mut Value, ctx: &BodyCtx<'_>) -> bool {
        let mut w = Walk {
            c: self,
            ctx,
            path: Vec::new(),
            pointer: String::new(),
            column: String::new(),
            carrier: None,
            replaced: BTreeMap::new(),
            changed: false,
        };
        w.visit(body, None);
        // Consistency sweep: a value tokenized at one field is not left verbatim inside another.
        let replaced: Vec<(String, String)> = {
            let mut v: Vec<(String, String)> = std::mem::take(&mut w.replaced)
                .into_iter()
                .filter(|(raw, _)| raw.chars().count() >= 6)
                .collect();
            v.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
            v
        };
        if !replaced.is_empty() {
            w.sweep(body, &replaced);
        }
        w.changed
    }
}

struct Walk<'a> {
    c: &'a Compiled,
    ctx: &'a BodyCtx<'a>,
    path: Vec<Seg>,
    pointer: String,
    column: String,
    /// `id` of the nearest enclosing object, for placeholder seeds.
    carrier: Option<String>,
    /// Raw value → envelope, for the consistency sweep.
    replaced: BTreeMap<String, String>,
    changed: bool,
}

impl Walk<'_> {
    fn exempt(&self, v: &str) -> bool {
        self.ctx.origins.of(&self.pointer).is_some()
            || self.ctx.session.is_some_and(|s| {
                let has = s.contains(v);
                if let Some(p) = self.ctx.probe {
                    p.note(v, has);
                }
                has
            })
            || pii::is_envelope(v) && v != "[REDACTED]"
    }

    fn visit(&mut self, v: &mut Value, key: Option<&str>) {
        match v {
            Value::Object(m) => {
                let saved = self.carrier.clone();
                if let Some(id) = m.get("id").and_then(|id| match id {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                }) {
                    self.carrier = Some(id);
                }
                for (k, child) in m.iter_mut() {
                    let (pl, cl) = (self.pointer.len(), self.column.len());
                    self.pointer.push('/');
                    self.pointer.push_str(k);
                    self.column.push('/');
                    self.column.push_str(k);
                    self.path.push(Seg::Key(k.clone()));
                    self.visit(child, Some(k));
                    self.path.pop();
                    self.pointer.truncate(pl);
                    self.column.truncate(cl);
                }
                self.carrier = saved;
            }
            Value::Array(a) => {
                for (i, child) in a.iter_mut().enumerate() {
                    let (pl, cl) = (self.pointer.len(), self.column.len());
                    self.pointer.push('/');
                    self.pointer.push_str(&i.to_string());
                    self.column.push_str("/*");
                    self.path.push(Seg::Index(i));
                    self.visit(child, key);
                    self.path.pop();
                    self.pointer.truncate(pl);
                    self.column.truncate(cl);
                }
            }
            Value::String(s) => {
                if let Some(new) = self.leaf(s, key.unwrap_or(""))
                    && new != *s
                {
                    if s.chars().count() >= 4 && !pii::is_envelope(s) {
                        self.replaced.insert(s.clone(), new.clone());
                    }
                    *s = new;
                    self.changed = true;
                }
            }
            _ => {}
        }
    }

    /// The outbound value of one string leaf, `None` when it is exempt or untouched.
    fn leaf(&self, s: &str, key: &str) -> Option<String> {
        if self.exempt(s) {
            return None;
        }
        let c = self.c;
        // Borrowed until a rule rewrites it: most leaves match no rule, and cloning each one
        // per request showed up in the serve profile.
        let mut v = std::borrow::Cow::Borrowed(s);
        for rule in &c.rules {
            match &rule.target {
                Target::Path(p) if path_matches(p, &self.path) => {
                    v = std::borrow::Cow::Owned(c.apply_action(&rule.action, &v));
                }
                Target::Regex { re, body: true, .. } => {
                    let replaced = re.replace_all(&v, |m: &regex::Captures<'_>| {
                        c.apply_action(&rule.action, &m[0])
                    });
                    if let std::borrow::Cow::Owned(new) = replaced {
                        v = std::borrow::Cow::Owned(new);
                    }
                }
                _ => {}
            }
        }
        if v != s {
            return Some(v.into_owned());
        }
        if s == "[REDACTED]" {
            return self.ctx.replace_redacted.then(|| self.placeholder(key));
        }
        if !c.policy.pii.detect {
            return None;
        }
        let key_class = || {
            if pii::is_email(s) {
                pii::Class::Email
            } else if pii::is_e164(s) {
                pii::Class::Phone
            } else if pii::is_ssn(s) {
                pii::Class::Ssn
            } else if pii::is_name_key(key) {
                pii::Class::Name
            } else {
                pii::Class::Credential
            }
        };
        if c.always.iter().any(|g| glob_suffix_matches(g, &self.path)) {
            return Some(pii::envelope(&c.policy.key, key_class(), s));
        }
        if c.allow.iter().any(|g| glob_suffix_matches(g, &self.path)) {
            return None;
        }
        if c.accepted.iter().any(|(g, value)| {
            value.as_deref().is_none_or(|v| v == s) && glob_suffix_matches(g, &self.path)
        }) {
            return None;
        }
        // The column is looked up only where its answer matters: a recorded enum value is
        // kept, but only a leaf the checks below would rewrite can be kept by it, and most
        // leaves are none (so most routes never build their evidence).
        let evidence = || self.ctx.evidence.map(|e| e.get());
        // The rewrite is made only after the enum check, as before: a caller's tokenizer is
        // never asked about a value that is kept.
        let unless_enum = |rewrite: &dyn Fn() -> String| {
            (!evidence().is_some_and(|ev| ev.is_enum_value(&self.column, s))).then(rewrite)
        };
        if pii::is_email(s) {
            return unless_enum(&|| pii::envelope(&c.policy.key, pii::Class::Email, s));
        }
        if pii::is_e164(s) {
            return unless_enum(&|| pii::envelope(&c.policy.key, pii::Class::Phone, s));
        }
        if pii::is_ssn(s) {
            return unless_enum(&|| pii::envelope(&c.policy.key, pii::Class::Ssn, s));
        }
        if let Some((name, email, when)) = pii::git_author(s) {
            return unless_enum(&|| {
                format!(
                    "{} <{}> {when}",
                    pii::envelope(&c.policy.key, pii::Class::Name, name),
                    pii::envelope(&c.policy.key, pii::Class::Email, email)
                )
            });
        }
        if pii::is_credential(key, s) {
            return unless_enum(&|| c.token(s));
        }
        if pii::is_name_key(key) {
            let words = pii::person_name_words(s);
            // A bare `name` names languages, roles, plans and tags as often as people: it is
            // a person's only inside a person container (`author`, `user`, `customers`…) or
            // on a person route. Then two or more capitalized words read as a person's name
            // on their own; one word only when the recordings show the column naming its
            // carriers.
            let person_scope = key != "name" || self.in_person_container();
            if person_scope
                && (words >= 2
                    || (words == 1 && evidence().is_some_and(|ev| ev.names_carriers(&self.column))))
            {
                return unless_enum(&|| pii::envelope(&c.policy.key, pii::Class::Name, s));
            }
        }
        None
    }

    /// The leaf sits in an object held under a person-like key, or at the top of a route
    /// whose path names people. A list envelope's key (`data`, `items`, `results`…) names no
    /// kind of thing, so it is looked past: `GET /customers` answering `{"data": [{"name":…}]}`
    /// holds customers as surely as `GET /customers/:id` holds one.
    fn in_person_container(&self) -> bool {
        let mut keys = self.path.iter().rev().filter_map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            _ => None,
        });
        keys.next();
        match keys.find(|k| !pii::is_list_envelope_key(k)) {
            Some(container) => pii::is_person_word(container),
            None => self
                .ctx
                .seed
                .split(['/', ' '])
                .filter(|seg| !seg.starts_with(':'))
                .any(pii::is_person_word),
        }
    }

    /// A deterministic, plausible stand-in for a `[REDACTED]` placeholder: a UUID for id-like
    /// keys, 32 hex digits otherwise.
    fn placeholder(&self, key: &str) -> String {
        let seed = format!(
            "{}\0{}\0{}",
            self.ctx.seed,
            self.column,
            self.carrier.as_deref().unwrap_or(&self.pointer)
        );
        let d = pii::mac(&self.c.policy.key, b"placeholder\0", seed.as_bytes());
        let words = pii::key_words(key);
        let id_like = words
            .last()
            .is_some_and(|w| matches!(w.as_str(), "id" | "uuid" | "guid"));
        if id_like {
            let mut b = [0u8; 16];
            b.copy_from_slice(&d[..16]);
            uuid::Builder::from_random_bytes(b)
                .into_uuid()
                .hyphenated()
                .to_string()
        } else {
            d[..16].iter().map(|b| format!("{b:02x}")).collect()
        }
    }

    fn sweep(&mut self, v: &mut Value, replaced: &[(String, String)]) {
        match v {
            Value::Object(m) => {
                for (k, child) in m.iter_mut() {
                    let pl = self.pointer.len();
                    self.pointer.push('/');
                    self.pointer.push_str(k);
                    self.sweep(child, replaced);
                    self.pointer.truncate(pl);
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter_mut().enumerate() {
                    let pl = self.pointer.len();
                    self.pointer.push('/');
                    self.pointer.push_str(&i.to_string());
                    self.sweep(child, replaced);
                    self.pointer.truncate(pl);
                }
            }
            Value::String(s) => {
                if self.exempt(s) {
                    return;
                }
                let mut out = s.clone();
                for (raw, tok) in replaced {
                    if out.contains(raw.as_str()) {
                        out = out.replace(raw.as_str(), tok);
                    }
                }
                if out != *s {
                    *s = out;
                    self.changed = true;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_create_remembers_its_fields_up_to_the_cap_and_updates_held_ones_past_it() {
        let mut v = SessionValues::default();
        v.record_create("POST /a", &serde_json::json!({"name": "first", "n": 1}));
        // A body of more leaves than the cap fills it and leaves the rest unread.
        let many: Vec<u32> = (0..3 * MAX_SESSION_VALUES as u32).collect();
        v.record_create("POST /b", &serde_json::json!({ "items": many }));
        assert_eq!(v.created.len(), MAX_SESSION_VALUES);
        assert_eq!(
            v.created_value("POST /b", "/items/0"),
            Some(&serde_json::json!(0))
        );
        assert_eq!(
            v.created_value("POST /b", &format!("/items/{}", 2 * MAX_SESSION_VALUES)),
            None
        );
        // Full: a route's held field still takes its latest value; a new one is not added.
        v.record_create(
            "POST /a",
            &serde_json::json!({"name": "second", "extra": true}),
        );
        assert_eq!(
            v.created_value("POST /a", "/name"),
            Some(&serde_json::json!("second"))
        );
        assert_eq!(v.created_value("POST /a", "/extra"), None);
        assert_eq!(v.created.len(), MAX_SESSION_VALUES);
    }

    #[test]
    fn multipart_text_fields_are_read() {
        let body = b"--b1\r\nContent-Disposition: form-data; name=\"display_name\"\r\n\r\nJohn Lennon\r\n--b1\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nI walk funny\r\n--b1--\r\n";
        assert_eq!(
            multipart_values("multipart/form-data; boundary=b1", body),
            Some(vec!["John Lennon".to_string(), "I walk funny".to_string()])
        );
        assert_eq!(multipart_values("application/json", body), None);
    }

    /// The text-level reading the byte-level split replaced: decode the whole body lossily,
    /// split on the delimiter, keep values without a replacement character.
    fn multipart_values_by_text(boundary: &str, body: &[u8]) -> Vec<String> {
        let text = String::from_utf8_lossy(body);
        let delim = format!("--{boundary}");
        let mut out = Vec::new();
        for part in text.split(delim.as_str()).skip(1) {
            if part.starts_with("--") {
                break;
            }
            let part = part.strip_prefix("\r\n").unwrap_or(part);
            let Some((_, value)) = part.split_once("\r\n\r\n") else {
                continue;
            };
            let value = value.strip_suffix("\r\n").unwrap_or(value);
            if !value.is_empty() && !value.contains('\u{FFFD}') {
                out.push(value.to_string());
            }
        }
        out
    }

    proptest::proptest! {
        /// Splitting the raw bytes reads exactly the values the whole-text reading did, for
        /// bodies built from delimiters, CRLFs, text and invalid UTF-8 in any order.
        #[test]
        fn multipart_values_split_on_bytes_equal_the_text_reading(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(b"--b1".to_vec()),
                    proptest::strategy::Just(b"--b1--".to_vec()),
                    proptest::strategy::Just(b"\r\n".to_vec()),
                    proptest::strategy::Just(b"\r\n\r\n".to_vec()),
                    proptest::strategy::Just(b"Content-Disposition: form-data; name=\"x\"".to_vec()),
                    proptest::strategy::Just(vec![0xff, 0xfe, b'a']),
                    proptest::strategy::Just("caf\u{e9} \u{FFFD}".as_bytes().to_vec()),
                    proptest::strategy::Strategy::prop_map("[a-z -]{0,6}", String::into_bytes),
                ],
                0..24,
            )
        ) {
            let body: Vec<u8> = pieces.concat();
            proptest::prop_assert_eq!(
                multipart_values("multipart/form-data; boundary=b1", &body),
                Some(multipart_values_by_text("b1", &body))
            );
        }
    }

    #[test]
    fn paths_parse_and_match() {
        let p = parse_path("$.items[*].email").unwrap_or_default();
        assert!(path_matches(
            &p,
            &[
                Seg::Key("items".into()),
                Seg::Index(3),
                Seg::Key("email".into())
            ]
        ));
        let g = parse_path("$.country_code").unwrap_or_default();
        assert!(glob_suffix_matches(
            &g,
            &[
                Seg::Key("a".into()),
                Seg::Index(0),
                Seg::Key("country_code".into())
            ]
        ));
        assert!(parse_path("$..x").is_err());
    }

    #[test]
    fn glob_suffix_ignores_positions_and_needs_every_pattern_key() {
        let path = [
            Seg::Key("user".into()),
            Seg::Index(2),
            Seg::Key("profile".into()),
            Seg::Key("phone".into()),
        ];
        let glob = |g: &str| parse_path(g).unwrap_or_default();
        assert!(glob_suffix_matches(&glob("$.profile.phone"), &path));
        assert!(glob_suffix_matches(&glob("$.user[0].profile.phone"), &path));
        assert!(glob_suffix_matches(&glob("$.*.phone"), &path));
        assert!(!glob_suffix_matches(&glob("$.user.phone"), &path));
        assert!(!glob_suffix_matches(
            &glob("$.root.user.profile.phone"),
            &path
        ));
        assert!(!glob_suffix_matches(&glob("$.email"), &path));
    }
}
