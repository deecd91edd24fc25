//! `wraith coverage <twin>`: which routes and state operations the recordings exercise, variants
//! per route, routes seen only once, entity types without a create, and recorded requests the
//! model has no route for.

use std::process::ExitCode;

use anyhow::anyhow;
use wraith_recording::terminal::shown;
use wraith_twin::{TwinConfig, TwinDir};

use crate::exit::{CliError, CmdResult};

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  wraith coverage shop
  wraith coverage shop --json | jq .routes_seen_once
  wraith coverage shop --openapi openapi.yaml

Exit codes: 0 coverage printed · 1 usage or configuration error (the twin not found, a broken
wraith.toml, no model or an invalid one: run `wraith synth`; an --openapi document that is
missing, a folder, not JSON or YAML, nested deeper than 128 levels, naming a key twice in one
object, or not OpenAPI) · 4 wraith.toml, the model, a recording
or the --openapi document is there but could not be read.")]
pub struct Args {
    /// Twin name under ./twins/ or path to a twin folder.
    pub twin: String,
    /// Print the coverage document as JSON.
    #[arg(long, default_value_if("format", "json", "true"))]
    pub json: bool,
    /// Output format: `text` or `pretty` (the same human-readable output, the default), or
    /// `json` (as `--json`).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<super::Format>,
    /// An OpenAPI 3 or Swagger 2 document (JSON or YAML): also count which of its operations
    /// the twin answers from recordings, and which twin routes it does not describe. Without
    /// it, the document `[service] spec` in wraith.toml names (relative to the twin folder).
    #[arg(long, value_name = "SPEC")]
    pub openapi: Option<std::path::PathBuf>,
}

/// Read and judge `--openapi` (or `[service] spec`; `from` names which, for messages): a missing file, or a document that does not parse, names a key
/// twice in one object, nests too deep or is no OpenAPI document, exits 1; a file that cannot be
/// read exits 4; each names the file.
fn spec_coverage(
    path: &std::path::Path,
    from: &str,
    model: &wraith_model::Model,
) -> Result<wraith_check::spec_coverage::SpecCoverage, CliError> {
    let bytes = wraith_twin::read_file(path).map_err(|e| {
        CliError::io(
            e.kind(),
            anyhow!("{from} {}: cannot read it: {e}", path.display()),
        )
    })?;
    // Bytes that are not UTF-8 are a document of the wrong kind, not a failed read.
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::usage(anyhow!(
            "{from} {}: not JSON or YAML: not UTF-8 text (byte {} is not part of any \
             character); give the OpenAPI document as JSON or YAML in UTF-8",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    let doc = parse_spec(&text)
        .map_err(|e| CliError::usage(anyhow!("{from} {}: {e}", path.display())))?;
    wraith_check::spec_coverage::spec_coverage(&doc, model)
        .map_err(|e| CliError::usage(anyhow!("{from} {}: {e}", path.display())))
}

/// The deepest nesting of arrays and objects an `--openapi` document may have: the YAML
/// reader's recursion limit, so a document written as JSON is read as deep as one written as
/// YAML; far past what an OpenAPI document needs.
pub(crate) const MAX_SPEC_DEPTH: usize = 128;

/// An `--openapi` document's text as JSON, or why it is none: nested past [`MAX_SPEC_DEPTH`],
/// not JSON (where the parse stopped), or not JSON or YAML.
///
/// A document written as JSON (its first character `{` or `[`) has its nesting measured on
/// the text first, byte by byte without a parse (the YAML reader takes time quadratic in the
/// depth, then refuses), and is read by the JSON parser, so an error names JSON's own fault
/// and position; one the JSON parser refuses is read as YAML's flow style (`{a: 1}`) before it
/// is called not JSON. Anything else is read as YAML, a superset of JSON.
pub(crate) fn parse_spec(text: &str) -> Result<serde_json::Value, String> {
    let json_like = text
        .trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
        .starts_with(['{', '[']);
    let mut json_error = None;
    if json_like {
        let depth = wraith_model::json_depth(text);
        if depth > MAX_SPEC_DEPTH {
            return Err(format!(
                "nested deeper than {MAX_SPEC_DEPTH} levels: arrays and objects nest {depth} \
                 levels deep, and an OpenAPI document is read to {MAX_SPEC_DEPTH}"
            ));
        }
        // Within the limit the YAML reader kept, which is one past serde_json's own.
        match json_refusing_duplicate_keys(text) {
            Ok(doc) => return Ok(doc),
            // Valid JSON syntax, but a key written twice in one object: read as YAML, or as any
            // JSON reader reads it, one value would silently win.
            Err(e) if e.classify() == serde_json::error::Category::Data => {
                return Err(format!(
                    "{e}: an object may name each key once, and a reader keeps only one of the \
                     values; remove or merge the duplicate"
                ));
            }
            Err(e) => json_error = Some(e),
        }
    }
    // YAML is a superset of JSON: one parser reads both. Keys that are numbers (`200:` under
    // `responses`) become strings, as JSON writes them.
    let e = match serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text) {
        Ok(yaml) => return Ok(yaml_to_json(yaml)),
        Err(e) => e,
    };
    Err(match json_error {
        Some(json) => format!("not JSON: {json}"),
        None if e.to_string().starts_with("recursion limit exceeded") => format!(
            "nested deeper than {MAX_SPEC_DEPTH} levels: the YAML reader stopped there ({e})"
        ),
        // Well-formed YAML naming a key twice in one mapping: say so, as for JSON above.
        None if e.to_string().contains("duplicate entry with key") => format!(
            "{e}: a mapping may name each key once, and a reader keeps only one of the values; \
             remove or merge the duplicate"
        ),
        None => format!("not JSON or YAML: {e}"),
    })
}

/// `text` as JSON, refusing an object that names a key twice (serde_json keeps the last value):
/// the error (category `Data`) names the key, the object's JSON pointer and the key's, and
/// serde_json adds the line and column. The nesting must have been measured first
/// ([`MAX_SPEC_DEPTH`]): the reader has no recursion limit.
fn json_refusing_duplicate_keys(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    use serde::de::DeserializeSeed as _;
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = UniqueKeys { at: "" }.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Reads one JSON value at the JSON pointer `at`, refusing a key written twice in an object.
struct UniqueKeys<'p> {
    at: &'p str,
}

impl<'de> serde::de::DeserializeSeed<'de> for UniqueKeys<'_> {
    type Value = serde_json::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys<'_> {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(UniqueKeys {
            at: &format!("{}/{}", self.at, items.len()),
        })? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let at = format!("{}/{}", self.at, key.replace('~', "~0").replace('/', "~1"));
            if object.contains_key(&key) {
                let object_at = if self.at.is_empty() {
                    "the top-level object".to_string()
                } else {
                    format!("the object at {}", self.at)
                };
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate key {key:?} in {object_at} (JSON pointer {at}), written again"
                )));
            }
            let value = map.next_value_seed(UniqueKeys { at: &at })?;
            object.insert(key, value);
        }
        Ok(serde_json::Value::Object(object))
    }
}

fn yaml_to_json(v: serde_yaml_ng::Value) -> serde_json::Value {
    use serde_json::Value as J;
    use serde_yaml_ng::Value as Y;
    match v {
        Y::Null => J::Null,
        Y::Bool(b) => J::Bool(b),
        Y::Number(n) => n
            .as_i64()
            .map(J::from)
            .or_else(|| n.as_u64().map(J::from))
            .or_else(|| {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map(J::Number)
            })
            .unwrap_or(J::Null),
        Y::String(s) => J::String(s),
        Y::Sequence(items) => J::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(m) => J::Object(
            m.into_iter()
                .map(|(k, v)| {
                    let key = match yaml_to_json(k) {
                        J::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Y::Tagged(t) => yaml_to_json(t.value),
    }
}

pub fn run(args: Args) -> CmdResult {
    let twin = TwinDir::resolve(&args.twin).map_err(CliError::usage)?;
    // As inspect, synth, check and lint do: a broken or unreadable wraith.toml is a
    // configuration error (exit 1), not something to read past.
    let config = TwinConfig::load(&twin).map_err(CliError::twin)?;
    for w in &config.warnings {
        eprintln!("warning: {w}");
    }
    let model = super::check::load_model(&twin.model_dir().join("twin.wir.json"))?;
    let sessions =
        wraith_recording::read_sessions(&twin.sessions_dir()).map_err(CliError::recording)?;
    // Sessions that read but do not hold together (exchange files missing), as inspect says.
    super::synth::warn_session_problems(&twin);
    let mut c = wraith_check::coverage::coverage(&twin.name(), &model, &sessions);
    // `--openapi` wins; else the document `[service] spec` names (relative to the twin).
    let spec = match (&args.openapi, &config.service.spec) {
        (Some(path), _) => Some((path.clone(), "--openapi")),
        (None, Some(spec)) if !spec.trim().is_empty() => {
            Some((twin.root().join(spec), "[service] spec"))
        }
        _ => None,
    };
    if let Some((path, from)) = spec {
        c.spec_coverage = Some(spec_coverage(&path, from, &model)?);
    }
    if args.json {
        crate::output::print_json(&c);
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "coverage  {}  routes {}/{} exercised ({}.{:02}%)  {}  {}",
        c.twin,
        c.routes_exercised,
        c.routes_total,
        c.route_coverage_bp / 100,
        c.route_coverage_bp % 100,
        crate::output::count(c.sessions, "session"),
        crate::output::count(c.exchanges, "exchange")
    );
    for (op, s) in &c.state_ops {
        outln!(
            "  {op:<7} {} route(s), {} exercised, {} exchange(s)",
            s.routes,
            s.routes_exercised,
            s.exchanges
        );
    }
    outln!("  routes (exchanges / variants / statuses):");
    for r in &c.routes {
        let statuses: Vec<String> = r.statuses.iter().map(u16::to_string).collect();
        outln!(
            "    {:>5}  {:>3}  {:<12} {}{}",
            r.exchanges,
            r.variants,
            statuses.join(","),
            shown(&r.route),
            r.state_op
                .map(|o| format!("  [{}]", o.as_str()))
                .unwrap_or_default()
        );
    }
    if !c.routes_seen_once.is_empty() {
        outln!("  seen only once ({}):", c.routes_seen_once.len());
        for r in &c.routes_seen_once {
            outln!("    {}", shown(r));
        }
    }
    if !c.entity_types_without_create.is_empty() {
        outln!(
            "  entity types without a create: {}",
            shown(&c.entity_types_without_create.join(", "))
        );
    }
    if !c.drifted_routes.is_empty() {
        outln!(
            "  drifted between recording runs ({}):",
            c.drifted_routes.len()
        );
        for d in &c.drifted_routes {
            let findings: Vec<String> = d
                .drift
                .iter()
                .map(|f| format!("{} at {:?} since {}", f.kind.as_str(), f.at, f.since))
                .collect();
            outln!("    {}: {}", shown(&d.route), shown(&findings.join("; ")));
        }
    }
    if c.uncovered_requests > 0 {
        outln!(
            "  {} recorded request(s) match no route (re-run `wraith synth`):",
            c.uncovered_requests
        );
        for e in &c.uncovered_examples {
            outln!("    {}", shown(e));
        }
    }
    if let Some(spec) = &c.spec_coverage {
        outln!(
            "  openapi  {} {}: {}/{} operation(s) answered from recordings ({:.2}%)",
            if spec.api_title.is_empty() {
                "(untitled)".into()
            } else {
                shown(&spec.api_title)
            },
            shown(&spec.api_version),
            spec.covered_count,
            spec.total_count,
            spec.percentage
        );
        if !spec.uncovered_operations.is_empty() {
            outln!("    not recorded ({}):", spec.uncovered_operations.len());
            for op in &spec.uncovered_operations {
                outln!("      {} {}", shown(&op.method), shown(&op.path));
            }
        }
        if !spec.routes_not_in_spec.is_empty() {
            outln!(
                "    twin routes the document does not describe ({}):",
                spec.routes_not_in_spec.len()
            );
            for r in &spec.routes_not_in_spec {
                outln!("      {}", shown(r));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `wraith inspect <twin> --provenance`: static per-route provenance of the model, without
/// serving (`wraith_check::provenance`).
pub fn static_provenance(twin: &TwinDir, json: bool) -> CmdResult {
    let model = super::check::load_model(&twin.model_dir().join("twin.wir.json"))?;
    let fixtures = super::check::read_fixtures(&twin.fixtures_dir())?;
    // Entity types the default set seeds at least one record of, as a session is seeded from
    // it (parents inherited, patches applied): a type the set lists with no record leaves the
    // reads of that type to the recordings and templates.
    let mut warnings = Vec::new();
    let schema = super::check::read_schema_json(&twin.schema_json(), &mut warnings)?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let route_types = model
        .entity_types
        .iter()
        .map(|(name, t)| (name.clone(), t.primary_key.clone()));
    let mut fixture_types: Vec<String> = match fixtures.resolve(route_types, schema.as_deref()) {
        Ok(sets) => sets
            .get("default")
            .into_iter()
            .flatten()
            .filter(|(_, records)| !records.is_empty())
            .map(|(ty, _)| ty.clone())
            .collect(),
        Err(e) => {
            // The file named as the twin holds it, as the other warnings name theirs.
            let what = match &e {
                wraith_engine::EngineError::Fixture { set, file, message } => {
                    let dir = twin.fixtures_dir();
                    let path = if fixtures.sets.contains_key(set) {
                        dir.join(set).join(file)
                    } else {
                        dir.join(file)
                    };
                    format!("{}: {message}", path.display())
                }
                other => other.to_string(),
            };
            eprintln!(
                "warning: {what}: no route is listed as answering from a fixture; `wraith lint` \
                 names every fixture problem"
            );
            Vec::new()
        }
    };
    fixture_types.sort();
    // Routes a Lua handler in lua/handlers/ binds by file name.
    let handler_routes = super::route::handler_route_names(twin, &model);
    let routes =
        wraith_check::provenance::static_provenance(&model, &fixture_types, &handler_routes);
    if json {
        crate::output::print_json(&serde_json::json!({
            "twin": twin.name(),
            "routes": routes,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    outln!("provenance  {}  {} routes", twin.name(), routes.len());
    for r in &routes {
        let leaves: Vec<String> = r.leaves.iter().map(|(k, n)| format!("{k} {n}")).collect();
        outln!(
            "  {:<48} can answer: {:<32} exact {:>4} ({})  variants {}  leaves: {}",
            shown(&r.route),
            r.can_answer.join(", "),
            r.exact_requests,
            crate::output::count(r.moments, "moment"),
            r.variants,
            if leaves.is_empty() {
                "none".to_string()
            } else {
                leaves.join(", ")
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
