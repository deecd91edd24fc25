//! Handlers and authored routes: the engine side of the Lua escape hatch.
//!
//! The engine defines what a handler is ([`Handler`]) and what it may touch ([`HandlerEnv`]: the
//! namespace's entity store, counters, clock and seeded RNG); a script runtime (the
//! `wraith-script` crate) implements the trait. The engine never links a Lua VM.
//!
//! Binding: an explicit binding ([`ExplicitBinding`], a `[[binding]]` or a `handler` key in
//! `lua/routes.toml`) wins for its route; else by file name ([`binding_candidates`]): a route's
//! state operation and entity give an ordered list of handler names, and the first one that
//! exists binds. Authored routes
//! ([`AuthoredRoute`], from `lua/routes.toml`) are materialized into the router at serve time
//! only, after the model's routes, so a recorded route with the same method and path wins.
//!
//! Dispatch (see [`crate::Engine`]): a handler runs after exact replay and the fail-closed gate,
//! before variant selection and state ops. Its answer carries provenance `handler`; a failure is
//! the 500 `internal_error` envelope (`on_error = fail`) or the template answer (`fallback`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use wraith_model::{Model, StateOp};

use crate::fixtures::Schema;
use crate::namespace::{Namespace, Origin};
use crate::util;

/// One request as a handler sees it (the `req` global of a Lua handler).
#[derive(Debug, Clone, Copy)]
pub struct HandlerRequest<'a> {
    /// Name of the handler being run (its file stem).
    pub handler: &'a str,
    /// `METHOD /path` of the matched route.
    pub route: &'a str,
    /// Uppercase method.
    pub method: &'a str,
    /// Normalized path, without the query.
    pub path: &'a str,
    /// Decoded query pairs, in request order.
    pub query: &'a [(String, String)],
    /// Lowercase header names, in request order.
    pub headers: &'a [(String, String)],
    /// Path parameters, percent-decoded: by the route's names, then as the explicit binding
    /// spelled them, then `id` for the last (see [`handler_params`]).
    pub params: &'a [(String, String)],
    /// Raw request body (empty when there is none).
    pub body: &'a [u8],
    /// The body decoded (JSON, or a form-encoded body as an object), when it decodes.
    pub json: Option<&'a Value>,
}

/// The body a handler answered with.
#[derive(Debug, Clone, PartialEq)]
pub enum HandlerBody {
    Empty,
    Json(Value),
    Bytes(bytes::Bytes),
}

/// A handler's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerResponse {
    pub status: u16,
    /// Headers as emitted (names as given; the engine adds `content-type: application/json` to
    /// a JSON body that has none).
    pub headers: Vec<(String, String)>,
    pub body: HandlerBody,
}

/// A handler failed: a script error, a budget breach, an undeclared write. The message goes
/// into the 500 envelope's `"Handler execution failed: …"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HandlerError {
    pub message: String,
}

impl HandlerError {
    pub fn new(message: impl Into<String>) -> Self {
        HandlerError {
            message: message.into(),
        }
    }
}

/// What a handler may read and change: the namespace of the request, the same store the CRUD
/// engine serves synthesized routes from.
///
/// The entity view is the recorded records of the model overlaid with the namespace's own
/// (fixtures and session writes), minus what the session deleted.
pub trait HandlerEnv {
    /// The entity `id` of `ty`, or `None`.
    fn get(&self, ty: &str, id: &str) -> Option<Value>;
    /// Deep-merge `record` (an object; `null` members delete keys) into the entity, creating it
    /// when absent, and return the stored entity. Fails for a type that is neither
    /// route-derived nor declared in `state/schema.json`, for a non-object record, and for a
    /// write the session's state limits refuse (`[serve.limits]`).
    fn put(&mut self, ty: &str, id: &str, record: &Value) -> Result<Value, HandlerError>;
    /// Delete the entity; whether it existed. Fails for an undeclared type.
    fn delete(&mut self, ty: &str, id: &str) -> Result<bool, HandlerError>;
    /// Every entity of `ty`: recorded records in id order (replaced in place by the session's
    /// version), then the session's new ones in creation order.
    fn list(&self, ty: &str) -> Vec<Value>;
    /// The entities of `ty` whose `field` matches `value` (see [`query_matches`]).
    fn query(&self, ty: &str, field: &str, value: &Value) -> Vec<Value> {
        self.list(ty)
            .into_iter()
            .filter(|r| query_matches(r, field, value))
            .collect()
    }
    /// Number of entities of `ty`.
    fn count(&self, ty: &str) -> usize {
        self.list(ty).len()
    }
    /// Increment the namespace counter `name` and return its new value (the first is 1).
    fn counter(&mut self, name: &str) -> i64;
    /// One reading of the namespace clock, in unix microseconds (the deterministic clock
    /// advances one second per reading, as for templates).
    fn now_us(&mut self) -> i64;
    /// Move the namespace clock forward by `micros` (every later reading, templates included).
    /// Fails when the clock would pass [`LAST_CLOCK_SECS`], leaving it where it was.
    fn advance_us(&mut self, micros: i64) -> Result<(), HandlerError>;
    /// The next value of the namespace's seeded RNG.
    fn random_u64(&mut self) -> u64;
    /// A fresh id for a new entity of `ty`, from the namespace's seeded generator: of the
    /// shape synth learned for a route-derived type, of the declared `id_format` for a type
    /// `state/schema.json` declares. Never one of the type's stored, recorded or deleted ids.
    /// Fails for an undeclared type, or one with neither a learned shape nor an `id_format`.
    fn new_id(&mut self, ty: &str) -> Result<Value, HandlerError>;
}

/// The last instant (unix seconds, 9999-12-30T22:00:00Z) a twin's clock may show: the end of
/// `wraith_twin::CLOCK_EPOCH_RANGE`, which `--clock-epoch` and provisioning hold a clock to.
/// Past it no HTTP `Date` or RFC 3339 timestamp can spell the time.
pub const LAST_CLOCK_SECS: i64 = 253_402_207_200;

/// A runnable handler. Implementations must be deterministic given the request and the
/// [`HandlerEnv`]: time and randomness come from the environment, never from the OS.
pub trait Handler: Send + Sync {
    fn call(
        &self,
        req: &HandlerRequest<'_>,
        env: &mut dyn HandlerEnv,
    ) -> Result<HandlerResponse, HandlerError>;
}

/// `[serve.lua] on_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HandlerOnError {
    /// 500 `{"error":{"type":"internal_error","message":"Handler execution failed: …","handler":…}}`.
    #[default]
    Fail,
    /// Answer as if no handler were bound (the template, or the authored route's declaration).
    Fallback,
}

/// One route declared in `lua/routes.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthoredRoute {
    /// Uppercase method.
    pub method: String,
    /// `/v3/assets/:param`.
    pub path: String,
    /// Declared status; with no `response` the answer has an empty body.
    pub status: Option<u16>,
    /// Declared JSON response body.
    pub response: Option<Value>,
    /// Explicit handler (file stem in `lua/handlers/`) from the entry's `handler` key; it wins
    /// over the file-name convention for this route.
    pub handler: Option<String>,
}

impl AuthoredRoute {
    /// `METHOD /path`.
    pub fn name(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// Whether the route declares an answer of its own (a status, a response, or both).
    pub fn declares_response(&self) -> bool {
        self.status.is_some() || self.response.is_some()
    }
}

/// What to install into an [`crate::Engine`] before serving.
#[derive(Clone, Default)]
pub struct Scripts {
    /// Loaded handlers by name (file stem), in name order.
    pub handlers: BTreeMap<String, Arc<dyn Handler>>,
    pub authored: Vec<AuthoredRoute>,
    /// The `[[binding]]` entries of `lua/routes.toml` (an authored route's own `handler` key is
    /// read from [`AuthoredRoute::handler`]).
    pub bindings: Vec<ExplicitBinding>,
    pub on_error: HandlerOnError,
}

/// An explicit `handler → route` binding declared by the twin's owner in `lua/routes.toml`
/// (`[[binding]]`, or `handler` on an authored `[[route]]`). It wins over the file-name
/// convention for the route with the same method and template (parameter names aside),
/// recorded or authored. Never written into the model, so it survives every re-synth.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ExplicitBinding {
    /// Uppercase method.
    pub method: String,
    /// Route template, parameters spelled `:name`.
    pub path: String,
    /// Handler file stem in `lua/handlers/` (`customer_view` for `customer_view.lua`).
    pub handler: String,
    /// Where it was declared, for messages: `[[binding]] #2` or `[[route]] #1`.
    pub entry: String,
}

impl ExplicitBinding {
    /// `METHOD /path`.
    pub fn route(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// Whether it names the route `method path` (same method, same template).
    pub fn targets(&self, method: &str, path: &str) -> bool {
        self.method.eq_ignore_ascii_case(method)
            && crate::router::matchit_path(&self.path) == crate::router::matchit_path(path)
    }
}

/// The explicit bindings in force: each authored route's `handler`, then the `[[binding]]`s.
pub fn explicit_bindings(
    authored: &[AuthoredRoute],
    bindings: &[ExplicitBinding],
) -> Vec<ExplicitBinding> {
    let mut out: Vec<ExplicitBinding> = authored
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            a.handler.as_ref().map(|h| ExplicitBinding {
                method: a.method.clone(),
                path: a.path.clone(),
                handler: h.clone(),
                entry: format!("[[route]] #{}", i + 1),
            })
        })
        .collect();
    out.extend(bindings.iter().cloned());
    out
}

/// An explicit binding that cannot be honoured. Serve refuses to start (exit 1) on any.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindingError {
    /// The named handler file does not exist.
    #[error(
        "lua/routes.toml {entry} ({route} → {handler}): there is no handler file \
         lua/handlers/{handler}.lua (or .luau); create it or fix the name (handlers: {})",
        list_or_none(available)
    )]
    MissingHandler {
        entry: String,
        route: String,
        handler: String,
        /// Handler stems that do exist.
        available: Vec<String>,
    },
    /// No recorded or authored route has that method and template.
    #[error(
        "lua/routes.toml {entry} ({route} → {handler}): no recorded or authored route is \
         {route}; bind a route `wraith inspect` or `wraith route list` shows (templates spell \
         parameters `:name`), or declare it with a [[route]] entry{}",
        if near.is_empty() { String::new() } else { format!("; did you mean {}?", near.join(" or ")) }
    )]
    UnknownRoute {
        entry: String,
        route: String,
        handler: String,
        /// Routes it may have meant.
        near: Vec<String>,
    },
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "(none)".to_string()
    } else {
        v.join(", ")
    }
}

/// Several [`BindingError`]s, one per line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct BindingErrors(pub Vec<BindingError>);

/// Check explicit bindings against the model's routes, the declared authored routes and the
/// loaded handler names: every binding must name an existing handler and an existing route.
pub fn validate_explicit(
    model: &Model,
    authored: &[AuthoredRoute],
    explicit: &[ExplicitBinding],
    handler_names: &[&str],
) -> Vec<BindingError> {
    let mut routes: Vec<(&str, &str)> = model
        .routes
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str()))
        .collect();
    routes.extend(
        authored
            .iter()
            .map(|a| (a.method.as_str(), a.path.as_str())),
    );
    let mut errors = Vec::new();
    for b in explicit {
        if !handler_names.contains(&b.handler.as_str()) {
            errors.push(BindingError::MissingHandler {
                entry: b.entry.clone(),
                route: b.route(),
                handler: b.handler.clone(),
                available: handler_names.iter().map(|n| (*n).to_string()).collect(),
            });
        }
        if !routes.iter().any(|(m, p)| b.targets(m, p)) {
            let mut near: Vec<String> = Vec::new();
            for (m, p) in &routes {
                let name = format!("{m} {p}");
                // The same template under another method, or a concrete path the template
                // matches (`/customers/42` for `/customers/:id`).
                let close = crate::router::matchit_path(p) == crate::router::matchit_path(&b.path)
                    || m.eq_ignore_ascii_case(&b.method) && template_matches(p, &b.path);
                if close && !near.contains(&name) && near.len() < 3 {
                    near.push(name);
                }
            }
            errors.push(BindingError::UnknownRoute {
                entry: b.entry.clone(),
                route: b.route(),
                handler: b.handler.clone(),
                near,
            });
        }
    }
    errors
}

/// Whether the template `template` matches the concrete `path` segment by segment.
fn template_matches(template: &str, path: &str) -> bool {
    let t: Vec<&str> = template.split('/').filter(|s| !s.is_empty()).collect();
    let p: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    t.len() == p.len()
        && t.iter()
            .zip(&p)
            .all(|(a, b)| (a.starts_with(':') && a.len() > 1) || a == b)
}

/// One `handler file → route` binding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HandlerBinding {
    pub handler: String,
    /// `METHOD /path`.
    pub route: String,
    /// The route is an authored one (`lua/routes.toml`).
    pub authored: bool,
    /// Bound by an explicit binding (`lua/routes.toml`), not by file name.
    pub explicit: bool,
}

/// What [`crate::Engine::install_scripts`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ScriptReport {
    pub bindings: Vec<HandlerBinding>,
    /// Handlers that bind no route.
    pub unbound: Vec<String>,
    /// Authored routes a recorded route with the same method and path shadows (inert).
    pub shadowed: Vec<String>,
    /// Authored routes served (`METHOD /path`).
    pub authored: Vec<String>,
    /// Everything worth a startup warning (also added to [`crate::Engine::warnings`]).
    pub warnings: Vec<String>,
}

/// Installed scripts, by route index (model routes first, then authored ones).
#[derive(Default)]
pub(crate) struct Installed {
    /// Handler per route index.
    pub by_route: Vec<Option<(String, Arc<dyn Handler>)>>,
    /// Per route index, the parameter names of the explicit binding that bound its handler
    /// (`/customers/:customer_id`), in path order; empty without one.
    pub binding_params: Vec<Vec<String>>,
    /// Authored routes; route index `model.routes.len() + i`.
    pub authored: Vec<AuthoredRoute>,
    pub on_error: HandlerOnError,
    /// Some route has a handler (asked on every request the server answers).
    pub any: bool,
}

impl Installed {
    pub(crate) fn handler(&self, route: usize) -> Option<&(String, Arc<dyn Handler>)> {
        self.by_route.get(route).and_then(Option::as_ref)
    }

    /// See [`Installed::binding_params`].
    pub(crate) fn binding_params(&self, route: usize) -> &[String] {
        self.binding_params.get(route).map_or(&[], Vec::as_slice)
    }
}

/// The parameter names of a template (`/customers/:customer_id/orders/:n` gives
/// `customer_id`, `n`), in path order.
pub fn template_param_names(path: &str) -> Vec<String> {
    path.split('/')
        .filter_map(|seg| seg.strip_prefix(':'))
        .map(str::to_string)
        .collect()
}

/// `req.params` of a handler: the route's own parameters (synth names those of a recorded
/// route `param`, `param2`, … in path order), then, under another name, each as the explicit
/// binding that bound the handler spelled it (`binding`), then `id` for the last parameter
/// when no name so far is `id`: a handler written for `GET /customers/:id` reads
/// `req.params.id` whichever template the recordings gave the route.
pub fn handler_params(route: &[(String, String)], binding: &[String]) -> Vec<(String, String)> {
    let mut out = route.to_vec();
    for (name, (_, value)) in binding.iter().zip(route) {
        if !out.iter().any(|(n, _)| n == name) {
            out.push((name.clone(), value.clone()));
        }
    }
    if let Some((_, last)) = route.last()
        && !out.iter().any(|(n, _)| n == "id")
    {
        out.push(("id".to_string(), last.clone()));
    }
    out
}

/// The authored routes a recorded route with the same method and path shadows, as
/// `METHOD /path` (for `wraith lint`'s `authored-route-shadowed` and serve's warning).
pub fn shadowed_authored(model: &Model, authored: &[AuthoredRoute]) -> Vec<String> {
    authored
        .iter()
        .filter(|a| {
            model.routes.iter().any(|r| {
                r.method.eq_ignore_ascii_case(&a.method)
                    && crate::router::matchit_path(&r.path) == crate::router::matchit_path(&a.path)
            })
        })
        .map(AuthoredRoute::name)
        .collect()
}

// ------------------------------------------------------------------------------- binding

/// Handler names that bind `method path`, in priority order (first existing one wins).
///
/// `op` is the route's state operation (the model's; `None` for authored routes and routes
/// synth left unclassified, which are classified from the method and path shape). Names follow
/// the file-name convention: Create `create_|add_|new_|post_<singular>`, Read
/// `get_|read_|show_|fetch_<singular>`, Update `update_|patch_|edit_|put_<singular>`, Delete
/// `delete_|remove_|destroy_<singular>`, List `list_<plural>`, `list_<singular>`,
/// `index_<plural>`, `<collection>`; a sub-resource (a literal segment after a parameter that is
/// not a nested collection) is `<method>_<segment>`. The entity is the collection segment
/// before the id (leading version segments skipped), singularized and snake_cased; the raw
/// spelling is accepted after the normalized one. A collection read never yields a singular
/// read name (`get_<singular>`).
pub fn binding_candidates(method: &str, path: &str, op: Option<StateOp>) -> Vec<String> {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let start = segs.iter().take_while(|s| is_version_segment(s)).count();
    let segs = &segs[start..];
    let Some(last) = segs.last() else {
        return Vec::new();
    };
    let is_param = |s: &str| s.starts_with(':') || (s.starts_with('{') && s.ends_with('}'));
    let last_is_param = is_param(last);
    let prev_is_param = segs.len() >= 2 && is_param(segs[segs.len() - 2]);
    let Some(entity_raw) = segs.iter().rev().find(|s| !is_param(s)).copied() else {
        return Vec::new();
    };
    let m = method.to_ascii_lowercase();
    let op = op.or_else(|| infer_op(&m, last_is_param, prev_is_param, segs.len()));

    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    };
    let snake = snake_case(entity_raw);
    let spellings = [
        (snake.clone(), singularize(&snake)),
        (entity_raw.to_string(), singularize(entity_raw)),
    ];
    let sub_resource = match op {
        None => true,
        Some(StateOp::Read | StateOp::Update | StateOp::Delete) => !last_is_param,
        Some(StateOp::Create | StateOp::List) => false,
    };
    if sub_resource {
        if last_is_param {
            for (_, singular) in &spellings {
                push(format!("{m}_{singular}"));
            }
        } else {
            for (plural, _) in &spellings {
                push(format!("{m}_{plural}"));
            }
        }
        return out;
    }
    let prefixes: &[&str] = match op {
        Some(StateOp::Create) => &["create", "add", "new", "post"],
        Some(StateOp::Read) => &["get", "read", "show", "fetch"],
        Some(StateOp::Update) => &["update", "patch", "edit", "put"],
        Some(StateOp::Delete) => &["delete", "remove", "destroy"],
        Some(StateOp::List) | None => &[],
    };
    for (plural, singular) in &spellings {
        if op == Some(StateOp::List) {
            push(format!("list_{plural}"));
            push(format!("list_{singular}"));
            push(format!("index_{plural}"));
            push(plural.clone());
        } else {
            for p in prefixes {
                push(format!("{p}_{singular}"));
            }
        }
    }
    out
}

/// State operation of a route nothing classified, from its method and shape.
fn infer_op(method: &str, last_is_param: bool, prev_is_param: bool, len: usize) -> Option<StateOp> {
    if last_is_param {
        return match method {
            "get" | "head" => Some(StateOp::Read),
            "put" | "patch" | "post" => Some(StateOp::Update),
            "delete" => Some(StateOp::Delete),
            _ => None,
        };
    }
    if prev_is_param || len > 1 && method != "get" && method != "post" {
        return None;
    }
    match method {
        "get" | "head" => Some(StateOp::List),
        "post" => Some(StateOp::Create),
        _ => None,
    }
}

/// `v1`, `v2beta1`, `v3alpha`: API version prefixes.
fn is_version_segment(s: &str) -> bool {
    let Some(rest) = s.strip_prefix(['v', 'V']) else {
        return false;
    };
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && rest[digits..].chars().all(|c| c.is_ascii_alphanumeric())
}

/// `license-agreements` → `license_agreements`, `lineItems` → `line_items`.
pub fn snake_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// English singular of a collection name (`companies` → `company`, `addresses` → `address`,
/// `people` → `person`); other words are returned as they are.
pub fn singularize(word: &str) -> String {
    // The last snake/kebab part carries the number (`line_items` → `line_item`).
    let split = word
        .rfind(['_', '-'])
        .map_or(0, |i| i + 1)
        .max(last_camel_start(word));
    let (head, tail) = word.split_at(split);
    let lower = tail.to_ascii_lowercase();
    let irregular = [
        ("people", "person"),
        ("children", "child"),
        ("men", "man"),
        ("women", "woman"),
        ("mice", "mouse"),
        ("data", "data"),
        ("media", "media"),
    ];
    if let Some((_, s)) = irregular.iter().find(|(p, _)| *p == lower) {
        return format!("{head}{}", keep_case(tail, s));
    }
    let cut = |n: usize, add: &str| format!("{head}{}{add}", &tail[..tail.len() - n]);
    if lower.len() > 3 && lower.ends_with("ies") {
        return cut(3, if tail.ends_with("IES") { "Y" } else { "y" });
    }
    for suffix in ["sses", "shes", "ches", "xes", "zes"] {
        if lower.ends_with(suffix) {
            return cut(2, "");
        }
    }
    if lower.ends_with("ss") || lower.ends_with("us") || lower.ends_with("is") || lower.len() < 3 {
        return word.to_string();
    }
    if lower.ends_with('s') {
        return cut(1, "");
    }
    word.to_string()
}

/// Byte index where the last camelCase word of `s` starts (0 when there is none).
fn last_camel_start(s: &str) -> usize {
    let bytes = s.as_bytes();
    (1..bytes.len())
        .rev()
        .find(|&i| bytes[i].is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase())
        .unwrap_or(0)
}

fn keep_case(original: &str, replacement: &str) -> String {
    if original
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase())
    {
        let mut c = replacement.chars();
        c.next()
            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
            .unwrap_or_default()
    } else {
        replacement.to_string()
    }
}

/// Bind handler names to routes: for each route (in order), the first of its
/// [`binding_candidates`] that names a handler.
pub fn bind<'n>(
    handler_names: &[&'n str],
    routes: &[(String, String, Option<StateOp>)],
) -> Vec<Option<&'n str>> {
    routes
        .iter()
        .map(|(method, path, op)| {
            binding_candidates(method, path, *op)
                .iter()
                .find_map(|c| handler_names.iter().find(|n| **n == c.as_str()).copied())
        })
        .collect()
}

/// Bind handlers to routes with explicit bindings first: for each route (in order), the handler
/// of the explicit binding that targets it (when that handler exists), else what [`bind`] picks
/// by file name. The flag says the binding was explicit.
pub fn bind_with_explicit<'n>(
    handler_names: &[&'n str],
    routes: &[(String, String, Option<StateOp>)],
    explicit: &[ExplicitBinding],
) -> Vec<Option<(&'n str, bool)>> {
    bind(handler_names, routes)
        .into_iter()
        .zip(routes)
        .map(|(by_name, (method, path, _))| {
            explicit
                .iter()
                .filter(|b| b.targets(method, path))
                .find_map(|b| handler_names.iter().find(|n| **n == b.handler).copied())
                .map(|n| (n, true))
                .or(by_name.map(|n| (n, false)))
        })
        .collect()
}

/// The warning for a handler no route binds (`routes` and `bound` as given to and returned by
/// [`bind_with_explicit`]). A name that is a convention candidate of some route lost it to
/// another handler, and saying "matches no route" would send the user hunting for a typo.
pub fn unbound_warning(
    name: &str,
    routes: &[(String, String, Option<StateOp>)],
    bound: &[Option<(&str, bool)>],
) -> String {
    let displaced = routes
        .iter()
        .zip(bound)
        .find_map(|((method, path, op), b)| {
            let (other, explicit) = (*b)?;
            (other != name
                && binding_candidates(method, path, *op)
                    .iter()
                    .any(|c| c == name))
            .then_some((method, path, other, explicit))
        });
    match displaced {
        Some((method, path, other, true)) => format!(
            "Lua handler `{name}` binds no route: its file name matches {method} {path}, which a \
             [[binding]] in lua/routes.toml gives to `{other}`, so it never runs; bind it to \
             another route with a [[binding]] or remove it"
        ),
        Some((method, path, other, false)) => format!(
            "Lua handler `{name}` binds no route: its file name matches {method} {path}, which \
             `{other}` binds first by the naming convention (see lua/handlers/README.md), so it \
             never runs; bind it with a [[binding]] in lua/routes.toml or remove it"
        ),
        None => format!(
            "Lua handler `{name}` binds no route: its file name matches no route's state \
             operation and entity (see lua/handlers/README.md for the naming convention), so it \
             never runs; bind it with a [[binding]] in lua/routes.toml or remove it"
        ),
    }
}

// ------------------------------------------------------------------------------- state.query

/// Whether `record`'s `field` matches `value` for `state.query`.
///
/// A key literally named `field` is compared first; otherwise a dotted `field` walks nested
/// objects (and numeric array indexes). Scalars compare across JSON types by their text
/// (`7` matches `"7"`, `true` matches `"true"`; numbers numerically); arrays and objects must be
/// equal exactly; a `null` value matches a present JSON `null` only.
pub fn query_matches(record: &Value, field: &str, value: &Value) -> bool {
    let found = match record.get(field) {
        Some(v) => Some(v),
        None if field.contains('.') => field.split('.').try_fold(record, |cur, part| match cur {
            Value::Object(m) => m.get(part),
            Value::Array(a) => part.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        }),
        None => None,
    };
    let Some(found) = found else {
        return false;
    };
    scalar_loose_eq(found, value)
}

fn scalar_loose_eq(a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let num = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => util::parse_number(s).and_then(|n| n.as_f64()),
        _ => None,
    };
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x == y,
            _ => text(a).is_some() && text(a) == text(b),
        },
    }
}

// ------------------------------------------------------------------------------- environment

/// The [`HandlerEnv`] of one request: its namespace, the schema and the model's records.
pub(crate) struct NsEnv<'a> {
    pub ns: &'a mut Namespace,
    pub schema: &'a Schema,
    pub model: &'a Model,
    pub wall: &'a crate::api::WallClock,
    /// Recorded records deleted in their own recordings: the recorded routes answer them 404,
    /// so the handler's view of the recorded world leaves them out too.
    pub gone: &'a crate::list::GoneRecords,
    /// The namespace as it was before the handler's first write (store, counters, clock or
    /// RNG), so a handler that fails leaves the session as it found it.
    pub before: Option<Namespace>,
    /// `[serve.limits] max_entities_per_type` and `max_total_state_mb` (in bytes): a handler's
    /// `state.put` is held to them as a recorded route's write is.
    pub max_entities_per_type: usize,
    pub max_state_bytes: u64,
    /// `[serve.limits] max_twin_state_mb` (in bytes): every session's records together.
    pub max_twin_state_bytes: u64,
    /// The message of the last `state.put` the limits refused: a handler failing with it
    /// answers `507 state-limit-exceeded`, as the refused write would on a recorded route.
    pub limit_refusal: Option<String>,
}

impl NsEnv<'_> {
    /// Keep the namespace as the handler found it, once, before its first change.
    fn will_change(&mut self) {
        if self.before.is_none() {
            self.before = Some(self.ns.clone());
        }
    }

    /// Undo every change the handler made: it failed, so its writes (and the clock readings,
    /// counters and random draws it took) must not outlive it. How far a handler got before a
    /// time budget stopped it depends on the machine, so keeping them would also make
    /// the session's later answers depend on the machine.
    pub(crate) fn roll_back(&mut self) {
        if let Some(before) = self.before.take() {
            *self.ns = before;
            // The copy counts nothing until it is the session again.
            self.ns.resync_tally(None);
        }
    }

    fn declared(&self, op: &str, ty: &str) -> Result<(), HandlerError> {
        if self.schema.types.contains_key(ty) {
            return Ok(());
        }
        let known: Vec<&str> = self.schema.types.keys().map(String::as_str).collect();
        Err(HandlerError::new(format!(
            "state.{op}: entity type `{ty}` is not declared (not route-derived and not in \
             state/schema.json); known types: {}",
            if known.is_empty() {
                "(none)".to_string()
            } else {
                known.join(", ")
            }
        )))
    }

    fn pk_of(&self, ty: &str) -> &str {
        self.schema.primary_key(ty).unwrap_or("id")
    }

    /// A recorded record this session's world holds: neither deleted by the session nor in
    /// its own recording.
    fn recorded_live(&self, ty: &str, id: &str) -> bool {
        self.ns.is_deleted(ty, id).is_none() && !self.gone.get(ty).is_some_and(|g| g.contains(id))
    }

    /// Why storing `entity` under `id` would take the session past its state limits: a key
    /// the session does not hold when it holds `max_entities_per_type` records of the type, or
    /// a record that grows the session's state past `max_state_bytes`. `None` when it fits.
    fn over_limits(&self, ty: &str, id: &str, entity: &Value) -> Option<String> {
        let store = self.ns.type_store(ty);
        let old = store.and_then(|s| s.live.get(id)).map(|e| e.bytes);
        let held = store.map_or(0, |s| s.live.len());
        if old.is_none() && held >= self.max_entities_per_type {
            return Some(format!(
                "state.put(`{ty}`, `{id}`): this session holds {held} `{ty}` records, the \
                 twin's limit ([serve.limits] max_entities_per_type); delete some or reset the \
                 session"
            ));
        }
        let new = util::json_size(entity);
        let after = self
            .ns
            .state_bytes
            .saturating_sub(old.unwrap_or(0))
            .saturating_add(new);
        if new <= old.unwrap_or(0) {
            return None;
        }
        if after > self.max_state_bytes {
            return Some(format!(
                "state.put(`{ty}`, `{id}`): the record would take this session's records to \
                 {after} bytes, over the twin's limit of {} ([serve.limits] \
                 max_total_state_mb); delete records or reset the session",
                self.max_state_bytes
            ));
        }
        let twin = self
            .ns
            .tally
            .twin_total()
            .saturating_add(new - old.unwrap_or(0));
        (twin > self.max_twin_state_bytes).then(|| {
            format!(
                "state.put(`{ty}`, `{id}`): the record would take the twin's sessions together \
                 to {twin} bytes of records, over the twin's limit of {} ([serve.limits] \
                 max_twin_state_mb); delete records, or delete or reset sessions",
                self.max_twin_state_bytes
            )
        })
    }
}

impl HandlerEnv for NsEnv<'_> {
    fn get(&self, ty: &str, id: &str) -> Option<Value> {
        if let Some(e) = self.ns.entity(ty, id) {
            return Some((*e.value).clone());
        }
        if !self.recorded_live(ty, id) {
            return None;
        }
        self.model
            .entity_types
            .get(ty)
            .and_then(|t| t.records.get(id))
            .cloned()
    }

    fn put(&mut self, ty: &str, id: &str, record: &Value) -> Result<Value, HandlerError> {
        self.declared("put", ty)?;
        self.will_change();
        if !record.is_object() {
            return Err(HandlerError::new(format!(
                "state.put(`{ty}`, `{id}`): the record must be a table of fields (a JSON object)"
            )));
        }
        let pk = self.pk_of(ty).to_string();
        // A record is stored under its own key: one naming another would be read back under
        // a key its body contradicts.
        if let Some(named) = record.get(&pk).filter(|v| !v.is_null())
            && crate::fixtures::scalar_key(named).as_deref() != Some(id)
        {
            return Err(HandlerError::new(format!(
                "state.put(`{ty}`, `{id}`): the record's `{pk}` is {named}, not `{id}`; pass \
                 the same key or leave `{pk}` out"
            )));
        }
        let mut entity = self
            .get(ty, id)
            .filter(Value::is_object)
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
        util::deep_merge(&mut entity, record);
        if let Value::Object(map) = &mut entity
            && !map.contains_key(&pk)
        {
            map.insert(pk, Value::String(id.to_string()));
        }
        if let Some(message) = self.over_limits(ty, id, &entity) {
            self.limit_refusal = Some(message.clone());
            return Err(HandlerError::new(message));
        }
        self.ns
            .put(ty, id, entity.clone(), Origin::Synthesized, None);
        Ok(entity)
    }

    fn delete(&mut self, ty: &str, id: &str) -> Result<bool, HandlerError> {
        self.declared("delete", ty)?;
        self.will_change();
        let existed = self.get(ty, id).is_some();
        if existed {
            self.ns.tombstone(ty, id, Origin::Synthesized);
        }
        Ok(existed)
    }

    fn list(&self, ty: &str) -> Vec<Value> {
        let store = self.ns.type_store(ty);
        let mut out: Vec<Value> = Vec::new();
        // Recorded records in id order, the session's version in place of the recorded one.
        if let Some(t) = self.model.entity_types.get(ty) {
            for (id, rec) in &t.records {
                let live = store.and_then(|s| s.live.get(id));
                if live.is_none() && !self.recorded_live(ty, id) {
                    continue;
                }
                match live {
                    Some(e) => out.push((*e.value).clone()),
                    None => out.push(rec.clone()),
                }
            }
        }
        // Then the session's own entities (fixtures and writes) the recordings do not hold.
        if let Some(store) = store {
            let recorded = self.model.entity_types.get(ty).map(|t| &t.records);
            for (id, e) in &store.live {
                if !recorded.is_some_and(|r| r.contains_key(id)) {
                    out.push((*e.value).clone());
                }
            }
        }
        out
    }

    fn count(&self, ty: &str) -> usize {
        let store = self.ns.type_store(ty);
        let recorded = self.model.entity_types.get(ty).map(|t| &t.records);
        let from_records = recorded.map_or(0, |r| {
            r.keys()
                .filter(|id| {
                    store.is_some_and(|s| s.live.contains_key(*id)) || self.recorded_live(ty, id)
                })
                .count()
        });
        let own = store.map_or(0, |s| {
            s.live
                .keys()
                .filter(|id| !recorded.is_some_and(|r| r.contains_key(*id)))
                .count()
        });
        from_records + own
    }

    fn counter(&mut self, name: &str) -> i64 {
        self.will_change();
        let c = self.ns.counters.entry(format!("lua:{name}")).or_insert(0);
        *c += 1;
        *c
    }

    fn now_us(&mut self) -> i64 {
        self.will_change();
        self.ns.now_us(self.wall)
    }

    fn advance_us(&mut self, micros: i64) -> Result<(), HandlerError> {
        let micros = micros.max(0);
        let after = self.ns.peek_us(self.wall).saturating_add(micros);
        if after > LAST_CLOCK_SECS.saturating_mul(1_000_000) {
            return Err(HandlerError::new(format!(
                "clock.advance: {} s would take the session's clock past \
                 9999-12-30T22:00:00Z, the last time a date can show",
                micros / 1_000_000
            )));
        }
        self.will_change();
        self.ns.clock_offset_us = self.ns.clock_offset_us.saturating_add(micros);
        Ok(())
    }

    fn random_u64(&mut self) -> u64 {
        self.will_change();
        use rand::Rng;
        self.ns.rng.next_u64()
    }

    fn new_id(&mut self, ty: &str) -> Result<Value, HandlerError> {
        self.declared("new_id", ty)?;
        self.will_change();
        let recorded = self.model.entity_types.get(ty);
        // A route-derived type's learned shape wins, as its definition does.
        let shape = recorded.and_then(|t| t.id_shape.as_ref());
        let generator = self.schema.id_generators.get(ty);
        let mint = |ns: &mut Namespace| match (shape, generator) {
            (Some(shape), _) => Some(crate::render::generate_id(shape, ns)),
            (None, Some(g)) => Some(Value::String(g.sample(&mut ns.rng))),
            (None, None) => None,
        };
        if shape.is_none() && generator.is_none() {
            let why = if recorded.is_some() {
                "the recordings show no consistent id shape for it"
            } else {
                "state/schema.json declares no id_format for it"
            };
            return Err(HandlerError::new(format!(
                "state.new_id(`{ty}`): cannot mint an id: {why}; add an id_format to the type \
                 in state/schema.json, or build ids with state.counter"
            )));
        }
        // A sampled id can repeat one already taken; a bounded number of draws finds a fresh
        // one unless the format allows few ids.
        for _ in 0..NEW_ID_ATTEMPTS {
            let Some(id) = mint(self.ns) else {
                break;
            };
            let Some(key) = crate::fixtures::scalar_key(&id) else {
                continue;
            };
            let taken = self.ns.entity(ty, &key).is_some()
                || self.ns.is_deleted(ty, &key).is_some()
                || recorded.is_some_and(|t| {
                    t.records.contains_key(&key)
                        || t.known_ids.contains(&key)
                        || t.known_missing.contains(&key)
                });
            if !taken {
                return Ok(id);
            }
        }
        Err(HandlerError::new(format!(
            "state.new_id(`{ty}`): {NEW_ID_ATTEMPTS} ids drawn in a row were all taken: the \
             type's id format allows too few ids; widen its id_format"
        )))
    }
}

/// Draws `state.new_id` makes before it gives up on finding an id not yet taken.
const NEW_ID_ATTEMPTS: usize = 64;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn c(method: &str, path: &str, op: Option<StateOp>) -> Vec<String> {
        binding_candidates(method, path, op)
    }

    #[test]
    fn create_read_update_delete_names_use_the_singular_entity() {
        assert_eq!(
            c("POST", "/v1/customers", Some(StateOp::Create))[..4],
            [
                "create_customer",
                "add_customer",
                "new_customer",
                "post_customer"
            ]
        );
        assert_eq!(
            c("GET", "/v1/customers/:id", Some(StateOp::Read))[..4],
            [
                "get_customer",
                "read_customer",
                "show_customer",
                "fetch_customer"
            ]
        );
        assert_eq!(
            c("PATCH", "/customers/:id", Some(StateOp::Update))[..4],
            [
                "update_customer",
                "patch_customer",
                "edit_customer",
                "put_customer"
            ]
        );
        assert_eq!(
            c("DELETE", "/customers/:id", Some(StateOp::Delete))[..3],
            ["delete_customer", "remove_customer", "destroy_customer"]
        );
    }

    #[test]
    fn list_names_accept_plural_singular_index_and_bare_collection() {
        assert_eq!(
            c("GET", "/v2/customers", Some(StateOp::List)),
            [
                "list_customers",
                "list_customer",
                "index_customers",
                "customers"
            ]
        );
    }

    #[test]
    fn a_collection_read_never_binds_a_singular_read_handler() {
        let names = c("GET", "/customers", Some(StateOp::List));
        assert!(!names.iter().any(|n| n.starts_with("get_")), "{names:?}");
        assert_eq!(
            bind(
                &["get_customer"],
                &[("GET".into(), "/customers".into(), None)]
            ),
            [None]
        );
    }

    #[test]
    fn entity_is_snake_cased_and_singularized_with_raw_spelling_as_fallback() {
        let names = c("GET", "/v1/license-agreements/:id", Some(StateOp::Read));
        assert_eq!(names[0], "get_license_agreement");
        assert!(names.contains(&"get_license-agreement".to_string()));
        let names = c("GET", "/lineItems/:id", Some(StateOp::Read));
        assert_eq!(names[0], "get_line_item");
        assert!(names.contains(&"get_lineItem".to_string()));
    }

    #[test]
    fn sub_resources_bind_by_method_and_last_segment() {
        assert_eq!(c("GET", "/orders/:id/invoice", None)[0], "get_invoice");
        assert_eq!(
            c("GET", "/orders/:id/invoice", Some(StateOp::Read))[0],
            "get_invoice"
        );
        assert_eq!(
            c("POST", "/v1/payment_intents/:id/confirm", None)[0],
            "post_confirm"
        );
    }

    #[test]
    fn nested_collections_bind_as_collections_of_their_last_segment() {
        assert_eq!(
            c("GET", "/orgs/:org/repos", Some(StateOp::List))[0],
            "list_repos"
        );
        assert_eq!(
            c("POST", "/orgs/:org/repos", Some(StateOp::Create))[0],
            "create_repo"
        );
        assert_eq!(
            c("GET", "/orgs/:org/repos/:repo", Some(StateOp::Read))[0],
            "get_repo"
        );
    }

    #[test]
    fn unclassified_routes_are_classified_from_method_and_shape() {
        assert_eq!(c("GET", "/widgets", None)[0], "list_widgets");
        assert_eq!(c("POST", "/widgets", None)[0], "create_widget");
        assert_eq!(c("GET", "/widgets/:id", None)[0], "get_widget");
        assert_eq!(c("PUT", "/widgets/:id", None)[0], "update_widget");
        assert_eq!(c("DELETE", "/widgets/:id", None)[0], "delete_widget");
        assert_eq!(c("PUT", "/widgets", None), ["put_widgets"]);
    }

    #[test]
    fn version_prefixes_are_skipped_and_the_root_binds_nothing() {
        assert!(c("GET", "/", None).is_empty());
        assert!(c("GET", "/v1", None).is_empty());
        assert_eq!(c("GET", "/v1beta2/items", None)[0], "list_items");
    }

    #[test]
    fn first_matching_name_wins() {
        let routes = vec![
            ("GET".to_string(), "/customers/:id".to_string(), None),
            ("GET".to_string(), "/customers".to_string(), None),
        ];
        assert_eq!(
            bind(&["fetch_customer", "get_customer", "customers"], &routes),
            [Some("get_customer"), Some("customers")]
        );
    }

    fn explicit(method: &str, path: &str, handler: &str) -> ExplicitBinding {
        ExplicitBinding {
            method: method.into(),
            path: path.into(),
            handler: handler.into(),
            entry: "[[binding]] #1".into(),
        }
    }

    #[test]
    fn an_explicit_binding_beats_the_file_name_convention_for_its_route_only() {
        let routes = vec![
            ("GET".to_string(), "/customers/:param".to_string(), None),
            ("GET".to_string(), "/customers".to_string(), None),
            ("DELETE".to_string(), "/customers/:param".to_string(), None),
        ];
        let names = [
            "customer_view",
            "delete_customer",
            "get_customer",
            "list_customers",
        ];
        // Parameter names aside, `/customers/:id` is the same template.
        let bound = bind_with_explicit(
            &names,
            &routes,
            &[explicit("get", "/customers/:id", "customer_view")],
        );
        assert_eq!(
            bound,
            [
                Some(("customer_view", true)),
                Some(("list_customers", false)),
                Some(("delete_customer", false)),
            ]
        );
        // Without it, the convention binds.
        assert_eq!(
            bind_with_explicit(&names, &routes, &[])[0],
            Some(("get_customer", false))
        );
        // An explicit binding may name a handler the convention would put elsewhere.
        let bound = bind_with_explicit(
            &names,
            &routes,
            &[explicit("GET", "/customers", "get_customer")],
        );
        assert_eq!(
            bound[..2],
            [Some(("get_customer", false)), Some(("get_customer", true))]
        );
    }

    #[test]
    fn unbound_warning_names_what_displaced_a_handler_whose_name_matches_a_route() {
        let routes = vec![
            ("GET".to_string(), "/customers/:param".to_string(), None),
            ("DELETE".to_string(), "/customers/:param".to_string(), None),
        ];
        let names = [
            "customer_view",
            "get_customer",
            "read_customer",
            "get_widget",
        ];
        let bound = bind_with_explicit(
            &names,
            &routes,
            &[explicit("GET", "/customers/:id", "customer_view")],
        );
        let by_binding = unbound_warning("get_customer", &routes, &bound);
        assert!(
            by_binding.contains(
                "matches GET /customers/:param, which a [[binding]] in lua/routes.toml gives to \
                 `customer_view`"
            ),
            "{by_binding}"
        );
        // Without the binding, `get_customer` comes first of the convention's names.
        let bound = bind_with_explicit(&names, &routes, &[]);
        let by_convention = unbound_warning("read_customer", &routes, &bound);
        assert!(
            by_convention.contains(
                "matches GET /customers/:param, which `get_customer` binds first by the naming \
                 convention"
            ),
            "{by_convention}"
        );
        let typo = unbound_warning("get_widget", &routes, &bound);
        assert!(
            typo.contains("matches no route's state operation and entity"),
            "{typo}"
        );
    }

    #[test]
    fn explicit_bindings_merge_authored_handler_keys_before_binding_entries() {
        let authored = AuthoredRoute {
            method: "GET".into(),
            path: "/health".into(),
            status: None,
            response: None,
            handler: Some("probe".into()),
        };
        let merged = explicit_bindings(
            &[authored],
            &[explicit("GET", "/customers/:id", "customer_view")],
        );
        assert_eq!(merged.len(), 2);
        assert_eq!(
            (
                merged[0].route(),
                merged[0].handler.as_str(),
                merged[0].entry.as_str()
            ),
            ("GET /health".to_string(), "probe", "[[route]] #1")
        );
        assert_eq!(merged[1].handler, "customer_view");
    }

    #[test]
    fn handler_params_add_the_bindings_names_and_id_for_the_last_parameter() {
        let route = vec![
            ("param".to_string(), "acme".to_string()),
            ("param2".to_string(), "42".to_string()),
        ];
        let by_binding = template_param_names("/orgs/:org/repos/:repo_id");
        assert_eq!(by_binding, ["org", "repo_id"]);
        let params = handler_params(&route, &by_binding);
        let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("param"), Some("acme"));
        assert_eq!(get("org"), Some("acme"));
        assert_eq!(get("repo_id"), Some("42"));
        assert_eq!(get("id"), Some("42"));
        // A route that names a parameter `id` keeps it; no parameter, no `id`.
        let own = vec![("id".to_string(), "cus_1".to_string())];
        assert_eq!(handler_params(&own, &[]), own);
        assert!(handler_params(&[], &[]).is_empty());
    }

    #[test]
    fn a_binding_naming_a_missing_handler_or_an_unknown_route_is_an_error() {
        let model: Model = serde_json::from_value(json!({
            "schema_version": wraith_model::MODEL_SCHEMA_VERSION, "tool_version": "t",
            "twin": "t", "base_url": "http://x", "recorded_at": null, "sessions": [],
            "routes": [], "diagnostics": [], "entity_types": {}
        }))
        .unwrap();
        let authored = [AuthoredRoute {
            method: "GET".into(),
            path: "/customers/:id".into(),
            status: None,
            response: None,
            handler: None,
        }];
        let ok = validate_explicit(
            &model,
            &authored,
            &[explicit("GET", "/customers/:x", "customer_view")],
            &["customer_view"],
        );
        assert!(ok.is_empty(), "{ok:?}");
        let errs = validate_explicit(
            &model,
            &authored,
            &[explicit("GET", "/customers/:x", "nope")],
            &["customer_view"],
        );
        let msg = errs[0].to_string();
        assert!(
            msg.contains("lua/routes.toml [[binding]] #1")
                && msg.contains("lua/handlers/nope.lua")
                && msg.contains("customer_view"),
            "{msg}"
        );
        let errs = validate_explicit(
            &model,
            &authored,
            &[explicit("GET", "/customers/42", "customer_view")],
            &["customer_view"],
        );
        let msg = errs[0].to_string();
        assert!(
            matches!(errs[0], BindingError::UnknownRoute { .. })
                && msg.contains("no recorded or authored route is GET /customers/42")
                && msg.contains("did you mean GET /customers/:id"),
            "{msg}"
        );
        let errs = validate_explicit(
            &model,
            &authored,
            &[explicit("POST", "/orders", "missing")],
            &[],
        );
        assert_eq!(errs.len(), 2, "both problems are reported: {errs:?}");
    }

    #[test]
    fn singularize_and_snake_case_cover_common_spellings() {
        for (p, s) in [
            ("customers", "customer"),
            ("companies", "company"),
            ("addresses", "address"),
            ("boxes", "box"),
            ("matches", "match"),
            ("people", "person"),
            ("status", "status"),
            ("line_items", "line_item"),
            ("lineItems", "lineItem"),
            ("data", "data"),
        ] {
            assert_eq!(singularize(p), s, "{p}");
        }
        assert_eq!(snake_case("license-agreements"), "license_agreements");
        assert_eq!(snake_case("lineItems"), "line_items");
        assert_eq!(snake_case("payment_intents"), "payment_intents");
    }

    fn env_fixture() -> (Model, Schema, Namespace) {
        let model: Model = serde_json::from_value(json!({
            "schema_version": wraith_model::MODEL_SCHEMA_VERSION, "tool_version": "t",
            "twin": "t", "base_url": "http://x", "recorded_at": null, "sessions": [],
            "routes": [], "diagnostics": [],
            "entity_types": {"customers": {"primary_key": "id", "known_ids": [],
                "known_missing": [], "records": {"c1": {"id": "c1", "n": 1},
                "c2": {"id": "c2", "n": 2}}}}
        }))
        .unwrap();
        let schema = Schema {
            types: BTreeMap::from([("customers".to_string(), "id".to_string())]),
            id_generators: BTreeMap::new(),
        };
        let settings = crate::namespace::Settings {
            fixture: None,
            seed: 1,
            clock: crate::api::ClockConfig {
                mode: crate::api::ClockMode::Deterministic,
                base_epoch: 100,
            },
            provisioned: false,
        };
        let ns = Namespace::new(crate::namespace::NsKey::Default, settings, None);
        (model, schema, ns)
    }

    #[test]
    fn the_handler_view_overlays_session_writes_on_recorded_records() {
        let (model, schema, mut ns) = env_fixture();
        let wall: crate::api::WallClock = Arc::new(|| 0);
        let mut env = NsEnv {
            ns: &mut ns,
            schema: &schema,
            model: &model,
            wall: &wall,
            gone: &Default::default(),
            before: None,
            max_entities_per_type: usize::MAX,
            max_state_bytes: u64::MAX,
            max_twin_state_bytes: u64::MAX,
            limit_refusal: None,
        };
        assert_eq!(
            env.get("customers", "c1"),
            Some(json!({"id": "c1", "n": 1}))
        );
        let stored = env
            .put("customers", "c1", &json!({"n": 10, "tag": {"a": 1}}))
            .unwrap();
        assert_eq!(stored, json!({"id": "c1", "n": 10, "tag": {"a": 1}}));
        env.put("customers", "c3", &json!({"n": 3})).unwrap();
        assert!(env.delete("customers", "c2").unwrap());
        assert!(!env.delete("customers", "c2").unwrap());
        assert_eq!(
            env.list("customers"),
            [
                json!({"id": "c1", "n": 10, "tag": {"a": 1}}),
                json!({"id": "c3", "n": 3})
            ]
        );
        assert_eq!(env.count("customers"), 2);
        assert_eq!(env.query("customers", "tag.a", &json!("1")).len(), 1);
        assert!(env.put("widgets", "w", &json!({})).is_err());
        assert!(env.put("customers", "x", &json!([1])).is_err());
        // A record naming another key than the one it is stored under is refused; the same
        // key (or none) is not.
        let e = env
            .put("customers", "c4", &json!({"id": "c5"}))
            .unwrap_err();
        assert!(
            e.message.contains("`id` is \"c5\", not `c4`"),
            "{}",
            e.message
        );
        assert!(env.get("customers", "c4").is_none() && env.get("customers", "c5").is_none());
        assert!(env.put("customers", "c4", &json!({"id": "c4"})).is_ok());
        assert_eq!((env.counter("a"), env.counter("a")), (1, 2));
        assert_eq!(env.now_us(), 100_000_000);
        env.advance_us(5_000_000).unwrap();
        assert_eq!(env.now_us(), 106_000_000, "advanced, and one reading later");
        // The session store itself changed: the CRUD engine sees the same entities.
        assert!(ns.entity("customers", "c3").is_some());
        assert!(ns.is_deleted("customers", "c2").is_some());
    }

    #[test]
    fn query_compares_scalars_across_types_and_walks_dotted_paths() {
        let r = json!({"n": 7, "s": "7", "flag": true, "a": {"b": "x"}, "a.b": "literal",
                       "nil": null, "arr": [1, 2]});
        assert!(query_matches(&r, "n", &json!("7")));
        assert!(query_matches(&r, "s", &json!(7)));
        assert!(query_matches(&r, "flag", &json!("true")));
        assert!(
            query_matches(&r, "a.b", &json!("literal")),
            "literal key wins"
        );
        assert!(!query_matches(&r, "a.b", &json!("x")));
        assert!(query_matches(&json!({"a": {"b": "x"}}), "a.b", &json!("x")));
        assert!(query_matches(&r, "nil", &Value::Null));
        assert!(!query_matches(&r, "missing", &Value::Null));
        assert!(query_matches(&r, "arr", &json!([1, 2])));
        assert!(!query_matches(&r, "arr", &json!([2, 1])));
        assert!(!query_matches(&r, "n", &json!(8)));
    }
}
