//! Workspace integrity (`wraith lint`) over file texts the caller read: model files canonical
//! and well-formed, ids unique, `state/schema.json` and every fixture set valid against the
//! schema. Configuration files (`wraith.toml`, `scrub.toml`) are parsed by their own crates; the
//! caller turns those results into findings with [`Finding::error`].

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;
use wraith_engine::state_schema::{StateSchema, UnusableSchema};
use wraith_engine::{
    FixtureRefusal, FixtureRefusalKind, FixtureSetFiles, FixtureTree, ResolvedFixtureSets,
};
use wraith_model::{
    BodyTemplate, MODEL_SCHEMA_VERSION, Model, Node, SymbolTable, canonical::is_canonical,
    from_json_str,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    /// Worth knowing, not a problem (e.g. a Lua handler overriding a recorded route).
    Info,
}

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable rule id, e.g. `canonical_json`, `duplicate-route-id`, `fixture-missing-pk`.
    pub rule: String,
    pub severity: Severity,
    /// File the finding is about, relative to the twin folder.
    pub file: Option<String>,
    pub message: String,
}

impl Finding {
    pub fn error(rule: &str, file: Option<&str>, message: impl Into<String>) -> Finding {
        Finding {
            rule: rule.to_string(),
            severity: Severity::Error,
            file: file.map(str::to_string),
            message: message.into(),
        }
    }
    pub fn warning(rule: &str, file: Option<&str>, message: impl Into<String>) -> Finding {
        Finding {
            rule: rule.to_string(),
            severity: Severity::Warning,
            file: file.map(str::to_string),
            message: message.into(),
        }
    }
    pub fn info(rule: &str, file: Option<&str>, message: impl Into<String>) -> Finding {
        Finding {
            rule: rule.to_string(),
            severity: Severity::Info,
            file: file.map(str::to_string),
            message: message.into(),
        }
    }
}

/// What lint looks at, read from disk by the caller (`None` = the file does not exist).
#[derive(Debug, Clone, Default)]
pub struct LintInput {
    /// `model/twin.wir.json`.
    pub model: Option<String>,
    /// `model/symbols.json`.
    pub symbols: Option<String>,
    /// `state/schema.json`.
    pub schema: Option<String>,
    pub fixtures: FixtureTree,
    /// `wraith.toml`'s `[[diff.tagged_union_policy]]` entries, held against the model.
    pub tagged_union_policy: Vec<crate::union::PolicyInput>,
    /// The `route` of each `[[generate.request_keying.route]]` entry in `wraith.toml`, in file
    /// order, held against the model.
    pub request_keying_routes: Vec<String>,
    /// `wraith.toml`'s `[serve.limits] max_entities_per_type`, held against what each fixture
    /// set seeds (`None`: not checked).
    pub max_entities_per_type: Option<u64>,
}

const MODEL_FILE: &str = "model/twin.wir.json";
const SYMBOLS_FILE: &str = "model/symbols.json";
const SCHEMA_FILE: &str = "state/schema.json";
const CONFIG_FILE: &str = "wraith.toml";

/// Lint a twin's files. Findings are sorted errors first, then by file and rule.
pub fn lint(input: &LintInput) -> Vec<Finding> {
    let mut out = Vec::new();
    let model = lint_model(input.model.as_deref(), &mut out);
    lint_symbols(input.symbols.as_deref(), input.model.as_deref(), &mut out);
    let schema = lint_schema(input.schema.as_deref(), &mut out);
    if let Some(schema) = &schema {
        if let Some(m) = &model {
            lint_schema_shadowed(schema, m, &mut out);
        }
        lint_foreign_key_targets(schema, model.as_ref(), &mut out);
    }
    lint_fixtures(&input.fixtures, model.as_ref(), &schema, &mut out);
    let resolved = resolve_fixture_sets(input, model.as_ref());
    lint_fixture_chains(&resolved, &mut out);
    let sets = resolved.as_ref().ok().map(|(sets, refusals)| {
        lint_fixture_refusals(&input.fixtures, refusals, &mut out);
        sets
    });
    lint_seeded_sets(sets, model.as_ref(), schema.as_ref(), &mut out);
    lint_fixture_limits(input, sets, &mut out);
    lint_union_policies(&input.tagged_union_policy, model.as_ref(), &mut out);
    lint_request_keying(&input.request_keying_routes, model.as_ref(), &mut out);
    out.sort_by(|a, b| {
        (a.severity, &a.file, &a.rule, &a.message).cmp(&(b.severity, &b.file, &b.rule, &b.message))
    });
    out
}

fn lint_model(text: Option<&str>, out: &mut Vec<Finding>) -> Option<Model> {
    let Some(text) = text else {
        out.push(Finding::warning(
            "model-missing",
            Some(MODEL_FILE),
            "no model yet: run `wraith synth <twin>`",
        ));
        return None;
    };
    if too_deep(text, MODEL_FILE, out) {
        return None;
    }
    if !is_canonical(text) {
        out.push(Finding::error(
            "canonical_json",
            Some(MODEL_FILE),
            "not canonical JSON (sorted keys, compact, one trailing newline): re-run `wraith synth` \
             instead of editing the file by hand, or re-serialize it canonically",
        ));
    }
    let model: Model = match from_json_str(text) {
        Ok(m) => m,
        Err(e) => {
            out.push(Finding::error(
                "model-parse",
                Some(MODEL_FILE),
                format!("{e}; re-run `wraith synth`"),
            ));
            return None;
        }
    };
    if model.schema_version == 0 {
        out.push(Finding::error(
            "schema_version",
            Some(MODEL_FILE),
            "schema_version is 0: the file was not written by `wraith synth`",
        ));
    } else if model.schema_version != MODEL_SCHEMA_VERSION {
        out.push(Finding::error(
            "schema_version",
            Some(MODEL_FILE),
            format!(
                "schema_version {} but this build reads {MODEL_SCHEMA_VERSION}: re-run `wraith synth`",
                model.schema_version
            ),
        ));
    }
    for r in &model.routes {
        for v in &r.variants {
            if v.evidence.sources.is_empty() {
                out.push(Finding::warning(
                    "empty-source-evidence",
                    Some(MODEL_FILE),
                    format!(
                        "variant {} of route {} ({} {}) names no source exchange",
                        v.id, r.id, r.method, r.path
                    ),
                ));
            }
        }
    }
    // Route ids, `METHOD /path` on one origin and variant ids each name one thing: the checks
    // `wraith compose` holds a composite to.
    for p in wraith_model::validate::id_problems(&model) {
        out.push(Finding::error(
            p.rule(),
            Some(MODEL_FILE),
            format!(
                "{}: re-run `wraith synth` to rebuild the model, or, in a model written by hand, \
                 keep one of them",
                p.message()
            ),
        ));
    }
    // Routes spelled differently that the router files as one (`/promos` and `/promos/`):
    // the twin still answers both spellings, from one of them, so a warning; synth writes such
    // a pair from recordings holding both spellings, and `wraith compose` refuses an overlay
    // that would bring one.
    for group in wraith_model::validate::routes_filed_as_one(&model) {
        out.push(Finding::warning(
            wraith_model::validate::FiledAsOne::RULE,
            Some(MODEL_FILE),
            format!(
                "{}; keep one spelling: remove the other's recordings and re-run `wraith synth`, \
                 or merge the routes by hand",
                group.message()
            ),
        ));
    }
    Some(model)
}

/// A model file nested past [`wraith_model::MAX_MODEL_DEPTH`]: the `model-too-deep` finding,
/// and nothing else is read of it (parsing or walking it could exhaust the stack).
fn too_deep(text: &str, file: &'static str, out: &mut Vec<Finding>) -> bool {
    match wraith_model::refuse_too_deep(text) {
        Ok(()) => false,
        Err(e) => {
            out.push(Finding::error(
                "model-too-deep",
                Some(file),
                format!("{e}; re-run `wraith synth` to rebuild it"),
            ));
            true
        }
    }
}

fn lint_symbols(text: Option<&str>, model: Option<&str>, out: &mut Vec<Finding>) {
    let Some(text) = text else {
        if model.is_some() {
            out.push(Finding::warning(
                "symbols-missing",
                Some(SYMBOLS_FILE),
                "the model has no symbols.json beside it: re-run `wraith synth`",
            ));
        }
        return;
    };
    if too_deep(text, SYMBOLS_FILE, out) {
        return;
    }
    if !is_canonical(text) {
        out.push(Finding::error(
            "canonical_json",
            Some(SYMBOLS_FILE),
            "not canonical JSON (sorted keys, compact, one trailing newline): re-run `wraith synth`",
        ));
    }
    match from_json_str::<SymbolTable>(text) {
        Ok(t) if t.schema_version == 0 => out.push(Finding::error(
            "schema_version",
            Some(SYMBOLS_FILE),
            "schema_version is 0: the file was not written by `wraith synth`; re-run it",
        )),
        Ok(t) => {
            if let (Some(recorded), Some(model)) = (&t.model_digest, model)
                && *recorded != wraith_model::model_digest(model.as_bytes())
            {
                out.push(Finding::warning(
                    "symbols-stale",
                    Some(SYMBOLS_FILE),
                    "was written beside another model/twin.wir.json than the one there now (a \
                     synth stopped between writing the two, or the model was edited by hand): \
                     re-run `wraith synth`",
                ));
            }
        }
        Err(e) => out.push(Finding::error(
            "symbols-parse",
            Some(SYMBOLS_FILE),
            format!("{e}; re-run `wraith synth`"),
        )),
    }
}

/// `state/schema.json` as the engine reads it: every problem the parser reports is a finding
/// (one that drops something the author wrote is an error, an ignored unknown key a warning);
/// `None` when the file is absent or unusable (the twin then serves a route-only schema), an
/// error however it is unusable: all its declarations are dropped.
fn lint_schema(text: Option<&str>, out: &mut Vec<Finding>) -> Option<StateSchema> {
    let text = text?;
    match StateSchema::parse(text) {
        Ok((schema, problems)) => {
            for p in problems {
                let finding = if p.drops_declaration {
                    Finding::error
                } else {
                    Finding::warning
                };
                out.push(finding(p.rule, Some(SCHEMA_FILE), p.message));
            }
            Some(schema)
        }
        Err(e @ UnusableSchema::NotJson(_)) => {
            out.push(Finding::error(
                e.rule(),
                Some(SCHEMA_FILE),
                format!(
                    "does not parse ({e}): the twin serves with a route-only schema and skips \
                     fixtures of other types"
                ),
            ));
            None
        }
        Err(e) => {
            out.push(Finding::error(
                e.rule(),
                Some(SCHEMA_FILE),
                format!(
                    "{e}: the twin serves with a route-only schema and skips fixtures of other \
                     types"
                ),
            ));
            None
        }
    }
}

/// A declaration whose primary key differs from the one a route-derived type of the model
/// keys its records by: the route's wins, so fixture records keyed the declared way are keyed
/// otherwise than their author meant. (What a route-derived type does not define — an
/// `id_format` where the recordings show no id shape, indexes, foreign keys — the declaration
/// still adds.)
fn lint_schema_shadowed(schema: &StateSchema, model: &Model, out: &mut Vec<Finding>) {
    for (name, decl) in &schema.types {
        let Some(route) = model.entity_types.get(name) else {
            continue;
        };
        if decl.primary_key != route.primary_key {
            out.push(Finding::warning(
                "schema-shadowed",
                Some(SCHEMA_FILE),
                format!(
                    "entity type `{name}` is derived from the model's routes, which key its \
                     records by {:?}, so the declared primary_key {:?} is not used: declare \
                     {:?} or rename the declared type",
                    route.primary_key, decl.primary_key, route.primary_key
                ),
            ));
        }
    }
}

/// Foreign keys naming an entity type neither the model nor the schema knows.
fn lint_foreign_key_targets(schema: &StateSchema, model: Option<&Model>, out: &mut Vec<Finding>) {
    for (name, decl) in &schema.types {
        for fk in &decl.foreign_keys {
            let known = schema.types.contains_key(&fk.entity_type)
                || model.is_some_and(|m| m.entity_types.contains_key(&fk.entity_type));
            if !known {
                out.push(Finding::warning(
                    "schema-foreign-key-target",
                    Some(SCHEMA_FILE),
                    format!(
                        "entity type `{name}`: foreign key `{}` references `{}.{}`, but no \
                         entity type `{}` is declared here or derived from a route: declare it \
                         or fix the reference",
                        fk.field, fk.entity_type, fk.target_field, fk.entity_type
                    ),
                ));
            }
        }
    }
}

/// Field names the model shows for each entity type: from recorded records and from the root
/// objects of the entity's routes' templates.
pub(crate) fn model_fields(model: &Model) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, et) in &model.entity_types {
        let set = out.entry(name.clone()).or_default();
        for rec in et.records.values() {
            if let Value::Object(m) = rec {
                set.extend(m.keys().cloned());
            }
        }
    }
    for r in &model.routes {
        let (Some(t), Some(op)) = (&r.entity_type, r.state_op) else {
            continue;
        };
        if !matches!(
            op,
            wraith_model::StateOp::Create | wraith_model::StateOp::Read
        ) {
            continue;
        }
        for v in r.variants.iter().filter(|v| (200..300).contains(&v.status)) {
            if let BodyTemplate::Json {
                root: Node::Object { fields },
            } = &v.body
            {
                out.entry(t.clone())
                    .or_default()
                    .extend(fields.iter().map(|f| f.key.clone()));
            }
        }
    }
    out
}

/// `[[diff.tagged_union_policy]]` entries: an invalid one is an error (as `wraith check` refuses
/// it); one naming no route of the model, or only routes without a tagged union (so the policy
/// never applies), is a warning naming the route.
fn lint_union_policies(
    entries: &[crate::union::PolicyInput],
    model: Option<&Model>,
    out: &mut Vec<Finding>,
) {
    if let Err(errors) = crate::union::UnionRules::compile(entries) {
        for e in errors {
            out.push(Finding::error(
                "diff-tagged-union-policy",
                Some(CONFIG_FILE),
                e.to_string(),
            ));
        }
    }
    let Some(model) = model else {
        return;
    };
    for (i, e) in entries.iter().enumerate() {
        let pattern = e.route.trim();
        let routes: Vec<&wraith_model::Route> = model
            .routes
            .iter()
            .filter(|r| crate::rules::glob(pattern, &r.label()))
            .collect();
        if routes.is_empty() {
            out.push(Finding::warning(
                "tagged-union-route-unknown",
                Some(CONFIG_FILE),
                format!(
                    "[[diff.tagged_union_policy]] entry {} names route `{pattern}`, which the \
                     model does not have: fix the route (as `wraith check` reports it) or drop \
                     the entry",
                    i + 1
                ),
            ));
        } else if routes
            .iter()
            .all(|r| crate::union::route_discriminators(r).is_empty())
        {
            out.push(Finding::warning(
                "tagged-union-none",
                Some(CONFIG_FILE),
                format!(
                    "[[diff.tagged_union_policy]] entry {} names route `{pattern}`, whose \
                     answers synth modelled with no tagged union: the policy never applies",
                    i + 1
                ),
            ));
        }
    }
}

/// `[[generate.request_keying.route]]` entries naming a route the model does not have: synth
/// keys nothing for them (it says so in a diagnostic too), so the entry is a warning naming the
/// route. The method is compared case-insensitively, the path exactly, as synth does.
fn lint_request_keying(routes: &[String], model: Option<&Model>, out: &mut Vec<Finding>) {
    let Some(model) = model else {
        return;
    };
    for (i, route) in routes.iter().enumerate() {
        let route = route.trim();
        let known = route
            .split_once(char::is_whitespace)
            .is_some_and(|(method, path)| {
                model
                    .routes
                    .iter()
                    .any(|r| r.method.eq_ignore_ascii_case(method) && r.path == path.trim())
            });
        if !known {
            out.push(Finding::warning(
                "request-keying-route-unknown",
                Some(CONFIG_FILE),
                format!(
                    "[[generate.request_keying.route]] entry {} names route `{route}`, which the \
                     model does not have, so nothing is keyed for it: name the route as `wraith \
                     synth` does (`METHOD /path`, `:param` for a path parameter) or drop the entry",
                    i + 1
                ),
            ));
        }
    }
}

fn lint_fixtures(
    tree: &FixtureTree,
    model: Option<&Model>,
    schema: &Option<StateSchema>,
    out: &mut Vec<Finding>,
) {
    let fields = model.map(model_fields).unwrap_or_default();
    // Primary key per known type: route-derived types win over declared ones.
    let mut pks: BTreeMap<String, String> = schema
        .iter()
        .flat_map(|s| &s.types)
        .map(|(name, decl)| (name.clone(), decl.primary_key.clone()))
        .collect();
    if let Some(m) = model {
        for (name, et) in &m.entity_types {
            pks.insert(name.clone(), et.primary_key.clone());
        }
    }
    let ctx = FixtureCtx {
        pks: &pks,
        fields: &fields,
    };
    for (stem, text) in &tree.loose {
        let file = format!("state/fixtures/{stem}.json");
        ctx.flat_file(&file, stem, text, out);
    }
    if !tree.loose.is_empty() && tree.sets.contains_key("default") {
        out.push(Finding::warning(
            "fixture-default-precedence",
            Some("state/fixtures"),
            "both state/fixtures/default/ and loose <entity>.json files exist: default/ wins and the loose files are ignored",
        ));
    }
    for (set, files) in &tree.sets {
        ctx.set(set, files, tree, out);
        for name in &files.ignored {
            let message = if name.starts_with("patches/") {
                "not read: a set's patches/ holds `<entity_type>.patch.json` files, so this file \
                 patches nothing; name it `<entity_type>.patch.json` or move it out"
            } else {
                "not read: a fixture set holds `fixture.json` or `<entity_type>.json` files \
                 (JSON only), so this file seeds nothing; convert it to JSON or move it out"
            };
            out.push(Finding::warning(
                "fixture-ignored-file",
                Some(&format!("state/fixtures/{set}/{name}")),
                message,
            ));
        }
        // Beside a fixture.json the set is in the directory form: its records are the
        // `entities` of fixture.json, and a legacy `<entity_type>.json` there is never read.
        if files.fixture_json.is_some() {
            for stem in files.flat.keys() {
                out.push(Finding::warning(
                    "fixture-ignored-file",
                    Some(&format!("state/fixtures/{set}/{stem}.json")),
                    "not read: beside fixture.json the set's records are its `entities`, so this \
                     <entity_type>.json seeds nothing; move its records into fixture.json",
                ));
            }
        }
    }
}

struct FixtureCtx<'a> {
    pks: &'a BTreeMap<String, String>,
    fields: &'a BTreeMap<String, BTreeSet<String>>,
}

impl FixtureCtx<'_> {
    fn set(&self, set: &str, files: &FixtureSetFiles, tree: &FixtureTree, out: &mut Vec<Finding>) {
        if let Some(text) = &files.fixture_json {
            let file = format!("state/fixtures/{set}/fixture.json");
            let v: Value = match serde_json::from_str(text) {
                Ok(v) => v,
                Err(e) => {
                    out.push(Finding::error(
                        "fixture-json",
                        Some(&file),
                        format!("does not parse: {e}"),
                    ));
                    return;
                }
            };
            let Value::Object(top) = v else {
                out.push(Finding::error(
                    "fixture-json",
                    Some(&file),
                    "must be a JSON object",
                ));
                return;
            };
            for k in top.keys() {
                if !matches!(k.as_str(), "entities" | "parent" | "description") {
                    let hint = if k == "name" {
                        " (the set name is always the directory name)"
                    } else {
                        ""
                    };
                    out.push(Finding::error(
                        "fixture-json-keys",
                        Some(&file),
                        format!("unknown top-level key {k:?}{hint}; allowed: entities, parent, description"),
                    ));
                }
            }
            // `null` is the key left out, as serve reads it.
            if let Some(parent) = top.get("parent").filter(|v| !v.is_null()) {
                match parent.as_str() {
                    Some(p) => {
                        let bare = p.rsplit_once(':').map_or(p, |(_, b)| b);
                        if !tree.sets.contains_key(p) && !tree.sets.contains_key(bare) {
                            out.push(Finding::error(
                                "fixture-parent-unknown",
                                Some(&file),
                                format!(
                                    "parent {p:?} names no fixture set; available: {}",
                                    tree.sets.keys().cloned().collect::<Vec<_>>().join(", ")
                                ),
                            ));
                        }
                    }
                    None => out.push(Finding::error(
                        "fixture-json",
                        Some(&file),
                        "\"parent\" must be a string",
                    )),
                }
            }
            match top.get("entities") {
                None | Some(Value::Null) => {}
                Some(Value::Object(ents)) => {
                    for (t, recs) in ents {
                        match recs {
                            Value::Array(items) => self.records(&file, t, items, out),
                            _ => out.push(Finding::error(
                                "fixture-json",
                                Some(&file),
                                format!("entities.{t} must be an array of records"),
                            )),
                        }
                    }
                }
                Some(_) => out.push(Finding::error(
                    "fixture-json",
                    Some(&file),
                    "\"entities\" must be an object keyed by entity type",
                )),
            }
            for (t, text) in &files.patches {
                let pfile = format!("state/fixtures/{set}/patches/{t}.patch.json");
                self.patch(&pfile, t, text, out);
            }
        } else {
            for (stem, text) in &files.flat {
                let file = format!("state/fixtures/{set}/{stem}.json");
                self.flat_file(&file, stem, text, out);
            }
            if !files.patches.is_empty() {
                out.push(Finding::warning(
                    "fixture-patches-ignored",
                    Some(&format!("state/fixtures/{set}/patches")),
                    "patches apply only to directory-form sets (with a fixture.json); these are ignored",
                ));
            }
        }
    }

    fn flat_file(&self, file: &str, entity: &str, text: &str, out: &mut Vec<Finding>) {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => self.records(file, entity, &items, out),
            Ok(_) => out.push(Finding::error(
                "fixture-flat-not-array",
                Some(file),
                "a flat fixture file must be a top-level JSON array of records",
            )),
            Err(e) => out.push(Finding::error(
                "fixture-json",
                Some(file),
                format!("does not parse: {e}"),
            )),
        }
    }

    fn records(&self, file: &str, entity: &str, items: &[Value], out: &mut Vec<Finding>) {
        let labelled: Vec<(String, &Value)> = items
            .iter()
            .enumerate()
            .map(|(i, rec)| (format!("{entity}[{i}]"), rec))
            .collect();
        self.records_at(file, entity, &labelled, out);
    }

    /// [`Self::records`] of records each named by its label in the findings (`customers[0]`,
    /// `replace.cus_1`).
    fn records_at(
        &self,
        file: &str,
        entity: &str,
        items: &[(String, &Value)],
        out: &mut Vec<Finding>,
    ) {
        let Some(pk) = self.pks.get(entity) else {
            out.push(Finding::warning(
                "fixture-undeclared-type",
                Some(file),
                format!(
                    "entity type {entity:?} is neither declared in state/schema.json nor derived from a route: its {} record(s) are skipped",
                    items.len()
                ),
            ));
            return;
        };
        let known = self.fields.get(entity).filter(|f| !f.is_empty());
        let mut unknown: BTreeSet<&str> = BTreeSet::new();
        for (at, rec) in items {
            let Value::Object(m) = rec else {
                out.push(Finding::error(
                    "fixture-record",
                    Some(file),
                    format!("{at} must be a JSON object"),
                ));
                continue;
            };
            match m.get(pk) {
                None => out.push(Finding::error(
                    "fixture-missing-pk",
                    Some(file),
                    format!("{at} has no primary key field {pk:?}"),
                )),
                // A key repeated is judged on the resolved sets: `lint_fixture_refusals`.
                Some(Value::String(_)) => {}
                Some(_) => out.push(Finding::error(
                    "fixture-pk-type",
                    Some(file),
                    format!(
                        "{at}.{pk} must be a string: write it in quotes (the twin keys every \
                         record by a string)"
                    ),
                )),
            }
            if let Some(known) = known {
                for k in m.keys() {
                    if known.contains(k) {
                        continue;
                    }
                    if let Some(model_key) = known.iter().find(|f| f.eq_ignore_ascii_case(k)) {
                        out.push(Finding::error(
                            "fixture-field-case",
                            Some(file),
                            format!(
                                "{at}.{k} differs only in case from the model's field {model_key:?}"
                            ),
                        ));
                    } else {
                        unknown.insert(k);
                    }
                }
            }
        }
        for k in unknown {
            out.push(Finding::warning(
                "fixture-unknown-field",
                Some(file),
                format!("field {k:?} of {entity} appears in no recording of that entity type"),
            ));
        }
    }

    fn patch(&self, file: &str, entity: &str, text: &str, out: &mut Vec<Finding>) {
        let v: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                out.push(Finding::error(
                    "fixture-patch",
                    Some(file),
                    format!("does not parse: {e}"),
                ));
                return;
            }
        };
        let Value::Object(top) = v else {
            out.push(Finding::error(
                "fixture-patch",
                Some(file),
                "must be a JSON object",
            ));
            return;
        };
        for k in top.keys() {
            if !matches!(k.as_str(), "add" | "replace" | "remove") {
                out.push(Finding::error(
                    "fixture-patch-keys",
                    Some(file),
                    format!("unknown key {k:?}: a patch has only add, replace and remove (no RFC 6902 op/path/value)"),
                ));
            }
        }
        match top.get("add") {
            None => {}
            Some(Value::Array(items)) => self.records(file, entity, items, out),
            Some(_) => out.push(Finding::error(
                "fixture-patch",
                Some(file),
                "\"add\" must be an array of records",
            )),
        }
        match top.get("replace") {
            None => {}
            Some(Value::Object(m)) => {
                let items: Vec<(String, &Value)> = m
                    .iter()
                    .map(|(k, rec)| (format!("replace.{k}"), rec))
                    .collect();
                self.records_at(file, entity, &items, out);
                // A replacement keeps the record's key: one naming another key would be
                // stored where no read finds it (serve refuses it).
                if let Some(pk) = self.pks.get(entity) {
                    for (k, rec) in m {
                        if let Some(Value::String(own)) = rec.get(pk.as_str())
                            && own != k
                        {
                            out.push(Finding::error(
                                "fixture-replace-key",
                                Some(file),
                                format!(
                                    "replace.{k}.{pk} is {own:?}, not the key it replaces; a \
                                     replacement keeps the record's key"
                                ),
                            ));
                        }
                    }
                }
            }
            Some(_) => out.push(Finding::error(
                "fixture-patch",
                Some(file),
                "\"replace\" must be an object mapping primary keys to records",
            )),
        }
        match top.get("remove") {
            None => {}
            Some(Value::Array(keys))
                if keys.iter().any(|k| {
                    !matches!(k, Value::String(_) | Value::Number(_) | Value::Bool(_))
                }) =>
            {
                out.push(Finding::error(
                    "fixture-patch",
                    Some(file),
                    "\"remove\" must list primary-key values (string, number or bool)",
                ));
            }
            Some(Value::Array(_)) => {}
            Some(_) => out.push(Finding::error(
                "fixture-patch",
                Some(file),
                "\"remove\" must be an array",
            )),
        }
    }
}

/// The fixture sets resolved as `serve` and `check` seed sessions from them, going on past
/// the records seeding refuses (each noted). `Err`: a set that does not resolve at all; the
/// per-file rules above name why.
fn resolve_fixture_sets(
    input: &LintInput,
    model: Option<&Model>,
) -> Result<(ResolvedFixtureSets, Vec<FixtureRefusal>), wraith_engine::EngineError> {
    let pks = model
        .into_iter()
        .flat_map(|m| &m.entity_types)
        .map(|(k, t)| (k.clone(), t.primary_key.clone()));
    input
        .fixtures
        .resolve_collecting(pks, input.schema.as_deref())
}

/// A parent chain that comes back to a set it started from: every session would be seeded
/// from a set that never resolves, so `serve` and `check` refuse the twin. Resolved as they
/// resolve it; the other resolution errors are each set's own findings above.
fn lint_fixture_chains(
    resolved: &Result<(ResolvedFixtureSets, Vec<FixtureRefusal>), wraith_engine::EngineError>,
    out: &mut Vec<Finding>,
) {
    if let Err(wraith_engine::EngineError::Fixture { set, file, message }) = resolved
        && message.starts_with("parent chain loops back")
    {
        out.push(Finding::error(
            "fixture-parent-cycle",
            Some(&format!("state/fixtures/{set}/{file}")),
            format!("{message}: each set's \"parent\" must lead to a set without one"),
        ));
    }
}

/// Every record seeding refuses, in serve's words, each an error (`serve` and `check` refuse
/// the twin at startup): a primary key one list of records names twice (`fixture-duplicate-pk`),
/// and a patch's `add` of a key the set already holds from its parents
/// (`fixture-patch-add-held`).
fn lint_fixture_refusals(tree: &FixtureTree, refusals: &[FixtureRefusal], out: &mut Vec<Finding>) {
    for r in refusals {
        let rule = match r.kind {
            FixtureRefusalKind::RepeatedKey => "fixture-duplicate-pk",
            FixtureRefusalKind::AddOfHeldKey => "fixture-patch-add-held",
        };
        out.push(Finding::error(
            rule,
            Some(&set_file(tree, &r.set, &r.file)),
            r.message.clone(),
        ));
    }
}

/// A set's file as the twin holds it: under the set's folder, or directly under
/// state/fixtures/ for the implicit default set of loose files.
fn set_file(tree: &FixtureTree, set: &str, file: &str) -> String {
    if tree.sets.contains_key(set) {
        format!("state/fixtures/{set}/{file}")
    } else {
        format!("state/fixtures/{file}")
    }
}

/// Every fixture set as a session seeded from it holds it, held against the declared types'
/// `id_format` and `foreign_keys` (route-derived types included: their routes define neither).
/// A record is keyed by its type's primary key as the engine keys it. A reference resolves to
/// a record the set seeds or one the recordings hold (sessions see both). Sets that do not
/// resolve (`None`) are left to the per-file rules above.
fn lint_seeded_sets(
    sets: Option<&ResolvedFixtureSets>,
    model: Option<&Model>,
    schema: Option<&StateSchema>,
    out: &mut Vec<Finding>,
) {
    let Some(schema) = schema else {
        return;
    };
    let route_types = model.map(|m| &m.entity_types);
    let declared = &schema.types;
    if declared
        .values()
        .all(|d| d.id_format.is_none() && d.foreign_keys.is_empty())
    {
        return;
    }
    let Some(sets) = sets else {
        return;
    };
    let empty = Vec::new();
    for (set, types) in sets {
        let file = format!("state/fixtures/{set}");
        for (ty, decl) in declared {
            let records = types.get(ty).unwrap_or(&empty);
            let pk_field = route_types
                .and_then(|t| t.get(ty))
                .map_or(decl.primary_key.as_str(), |t| t.primary_key.as_str());
            if let Some(format) = &decl.id_format {
                for (pk, _) in records.iter().filter(|(pk, _)| !format.matches(pk)) {
                    out.push(Finding::warning(
                        "fixture-id-format",
                        Some(&file),
                        format!(
                            "set `{set}`: {ty} record {pk:?} has a {} that does not match the \
                             id_format `{}` state/schema.json declares; the twin serves it as \
                             written, but ids it generates for {ty} look otherwise",
                            pk_field, format.source
                        ),
                    ));
                }
            }
            for fk in &decl.foreign_keys {
                for (pk, rec) in records {
                    let values: Vec<&Value> = match rec.get(&fk.field) {
                        None | Some(Value::Null) => continue,
                        Some(Value::Array(items)) => items.iter().collect(),
                        Some(v) => vec![v],
                    };
                    for v in values {
                        let Some(wanted) = wraith_engine::scalar_key(v) else {
                            continue;
                        };
                        if !reference_resolves(
                            types,
                            model,
                            &fk.entity_type,
                            &fk.target_field,
                            &wanted,
                        ) {
                            out.push(Finding::warning(
                                "fixture-foreign-key",
                                Some(&file),
                                format!(
                                    "set `{set}`: {ty} record {pk:?} has {} = {v}, but no {} \
                                     record the set seeds or the recordings hold has {} = {v}: \
                                     add that record to the set or fix the value",
                                    fk.field, fk.entity_type, fk.target_field
                                ),
                            ));
                        }
                    }
                }
            }
        }
    }
}

/// A set that seeds as many records of one type as `[serve.limits] max_entities_per_type`
/// allows, or more: a session seeded from it holds them all (seeding is never cut), so every
/// create of that type in it is refused 507, as is a Lua `state.put` of a new key. Counted as
/// sessions are seeded: parents inherited, patches applied, undeclared types skipped.
fn lint_fixture_limits(
    input: &LintInput,
    sets: Option<&ResolvedFixtureSets>,
    out: &mut Vec<Finding>,
) {
    let Some(limit) = input.max_entities_per_type else {
        return;
    };
    // A set that does not resolve has its own findings.
    let Some(sets) = sets else {
        return;
    };
    for (set, types) in sets {
        // The implicit default set of loose files lives directly under state/fixtures/.
        let file = if input.fixtures.sets.contains_key(set) {
            format!("state/fixtures/{set}")
        } else {
            "state/fixtures".to_string()
        };
        for (ty, records) in types {
            let n = records.len() as u64;
            if n < limit {
                continue;
            }
            let over = if n > limit {
                format!("{} more than", n - limit)
            } else {
                "as many as".to_string()
            };
            out.push(Finding::warning(
                "fixture-entity-limit",
                Some(&file),
                format!(
                    "set `{set}` seeds {n} `{ty}` records (its parents' included), {over} \
                     [serve.limits] max_entities_per_type = {limit} in wraith.toml allows: a \
                     session seeded from it holds them all, and every create of `{ty}` in it \
                     (or a Lua state.put of a new key) is refused 507 state-limit-exceeded; \
                     seed fewer than {limit} `{ty}` records or raise the limit"
                ),
            ));
        }
    }
}

/// Whether a record of `ty` whose `field` holds `wanted` is seeded by the set or recorded.
fn reference_resolves(
    seeded: &BTreeMap<String, Vec<(String, std::sync::Arc<Value>)>>,
    model: Option<&Model>,
    ty: &str,
    field: &str,
    wanted: &str,
) -> bool {
    let holds = |rec: &Value| {
        rec.get(field)
            .and_then(wraith_engine::scalar_key)
            .as_deref()
            == Some(wanted)
    };
    if seeded
        .get(ty)
        .is_some_and(|recs| recs.iter().any(|(_, r)| holds(r)))
    {
        return true;
    }
    let Some(et) = model.and_then(|m| m.entity_types.get(ty)) else {
        return false;
    };
    if field == et.primary_key && et.known_ids.contains(wanted) {
        return true;
    }
    et.records.values().any(holds)
}

/// True when any finding is an error (`wraith lint` exits 1).
pub fn has_errors(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::Error)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A canonical model text of one route `GET /v1/notes` with a variant per entry of
    /// `sources` (variant `v<i>` naming those source exchanges).
    fn model_text(sources: &[&[&str]]) -> String {
        let variants: Vec<Value> = sources
            .iter()
            .enumerate()
            .map(|(i, s)| {
                json!({
                    "body": {"kind": "json", "root": {"node": "const", "value": "ok"}},
                    "evidence": {"confidence_bp": 10000, "exchange_count": 1, "sources": s},
                    "guard": {"guard": "always"},
                    "headers": [],
                    "id": format!("v{i}"), "status": 200 + i,
                })
            })
            .collect();
        let model: Model = serde_json::from_value(json!({
            "base_url": "https://api.test",
            "diagnostics": [],
            "entity_types": {},
            "recorded_at": "2026-01-01T00:00:00Z",
            "routes": [{
                "id": "r0", "method": "GET", "path": "/v1/notes", "params": [],
                "exact": [], "exchange_count": 1,
                "latency": {"p50_ms": 1, "p90_ms": 1, "p99_ms": 1, "sample_count": 1},
                "variants": variants,
            }],
            "schema_version": MODEL_SCHEMA_VERSION,
            "sessions": [], "tool_version": "0.1.0", "twin": "t",
        }))
        .unwrap();
        wraith_model::canonical::to_canonical_json(&model).unwrap()
    }

    /// A canonical symbols text of `schema_version` for `model`.
    fn symbols_text(schema_version: u32, model: &str) -> String {
        let t = SymbolTable {
            schema_version,
            symbols: BTreeMap::new(),
            model_digest: Some(wraith_model::model_digest(model.as_bytes())),
        };
        wraith_model::canonical::to_canonical_json(&t).unwrap()
    }

    fn lint_of(model: Option<String>, symbols: Option<String>) -> Vec<Finding> {
        lint(&LintInput {
            model,
            symbols,
            ..Default::default()
        })
    }

    /// Findings of `rule` about `file`.
    fn of<'f>(findings: &'f [Finding], rule: &str, file: &str) -> Vec<&'f Finding> {
        findings
            .iter()
            .filter(|f| f.rule == rule && f.file.as_deref() == Some(file))
            .collect()
    }

    /// The model and a canonical symbols table beside it lint clean: the baseline the
    /// findings below stand out against.
    #[test]
    fn a_model_with_canonical_symbols_lints_without_errors() {
        let model = model_text(&[&["s/1"]]);
        let symbols = symbols_text(1, &model);
        let findings = lint_of(Some(model), Some(symbols));
        assert!(!has_errors(&findings), "{findings:?}");
        assert!(of(&findings, "symbols-missing", SYMBOLS_FILE).is_empty());
    }

    /// A model with no `symbols.json` beside it is named (`symbols-missing`, a warning); a
    /// twin with no model yet is not told its symbols are missing too.
    #[test]
    fn lint_warns_of_a_model_without_symbols_json() {
        let findings = lint_of(Some(model_text(&[&["s/1"]])), None);
        let missing = of(&findings, "symbols-missing", SYMBOLS_FILE);
        assert_eq!(missing.len(), 1, "{findings:?}");
        assert_eq!(missing[0].severity, Severity::Warning);

        let findings = lint_of(None, None);
        assert!(of(&findings, "symbols-missing", SYMBOLS_FILE).is_empty());
    }

    /// A variant whose evidence names no source exchange cannot be traced back to a recording:
    /// `empty-source-evidence` names it, and only it.
    #[test]
    fn lint_warns_of_a_variant_naming_no_source_exchange() {
        let model = model_text(&[&["s/1"], &[]]);
        let symbols = symbols_text(1, &model);
        let findings = lint_of(Some(model), Some(symbols));
        let empty = of(&findings, "empty-source-evidence", MODEL_FILE);
        assert_eq!(empty.len(), 1, "{findings:?}");
        assert_eq!(empty[0].severity, Severity::Warning);
        assert!(
            empty[0].message.contains("variant v1 of route r0"),
            "{}",
            empty[0].message
        );
    }

    /// A `symbols.json` that is not canonical JSON was edited by hand: an error (lint exits 1),
    /// not a warning.
    #[test]
    fn non_canonical_symbols_json_is_an_error() {
        let model = model_text(&[&["s/1"]]);
        let canonical = symbols_text(1, &model);
        let pretty =
            serde_json::to_string_pretty(&serde_json::from_str::<Value>(&canonical).unwrap())
                .unwrap();
        let findings = lint_of(Some(model), Some(pretty));
        let found = of(&findings, "canonical_json", SYMBOLS_FILE);
        assert_eq!(found.len(), 1, "{findings:?}");
        assert_eq!(found[0].severity, Severity::Error);
        assert!(has_errors(&findings));
    }

    /// A `symbols.json` of `schema_version` 0 was not written by synth: an error.
    #[test]
    fn symbols_json_of_schema_version_zero_is_an_error() {
        let model = model_text(&[&["s/1"]]);
        let symbols = symbols_text(0, &model);
        let findings = lint_of(Some(model), Some(symbols));
        let found = of(&findings, "schema_version", SYMBOLS_FILE);
        assert_eq!(found.len(), 1, "{findings:?}");
        assert_eq!(found[0].severity, Severity::Error);
        assert!(has_errors(&findings));
    }
}
