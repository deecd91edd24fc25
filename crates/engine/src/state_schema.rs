//! `state/schema.json`, parsed: the entity types an author declares, with their primary key and
//! the optional `id_format`, `indexes` and `foreign_keys` of the fixtures contract page.
//!
//! One parser serves both readers: the engine (which takes the usable declarations and turns
//! every problem into a startup warning, because a broken schema is never fatal) and `wraith
//! lint` (which reports the same problems as findings). A malformed part of an entry is dropped
//! on its own; only an entry without a usable `primary_key` is dropped whole.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::{Map, Value};

/// The parsed declarations of `state/schema.json`, by entity type name.
#[derive(Debug, Clone, Default)]
pub struct StateSchema {
    pub types: BTreeMap<String, DeclaredType>,
}

/// One declared entity type.
#[derive(Debug, Clone)]
pub struct DeclaredType {
    /// The record field that identifies a record; its value is a string.
    pub primary_key: String,
    /// The shape of ids the twin generates for this type.
    pub id_format: Option<IdFormat>,
    pub indexes: Vec<Index>,
    pub foreign_keys: Vec<ForeignKey>,
}

/// `id_format`: a regular expression the whole of a generated id matches.
#[derive(Debug, Clone)]
pub struct IdFormat {
    /// As written in the file.
    pub source: String,
    /// The same expression anchored at both ends, so it judges whole ids.
    anchored: Regex,
}

impl IdFormat {
    /// Parse `source`; the error says why the expression is not usable.
    pub fn new(source: &str) -> Result<IdFormat, String> {
        let anchored = Regex::new(&format!("^(?:{source})$")).map_err(|e| e.to_string())?;
        Ok(IdFormat {
            source: source.to_string(),
            anchored,
        })
    }

    /// Whether the whole of `id` matches.
    pub fn matches(&self, id: &str) -> bool {
        self.anchored.is_match(id)
    }

    /// A sampler of ids the expression matches. Anchors at its ends are dropped (an id is
    /// matched whole anyway); classes are ASCII where the expression allows (`\d` is `[0-9]`),
    /// else Unicode. `Err` says why nothing can be sampled (an anchor or word boundary inside
    /// the expression).
    pub fn generator(&self) -> Result<IdGenerator, String> {
        let mut body = self.source.as_str();
        body = body
            .strip_prefix('^')
            .or_else(|| body.strip_prefix("\\A"))
            .unwrap_or(body);
        if !body.ends_with("\\$") {
            body = body
                .strip_suffix('$')
                .or_else(|| body.strip_suffix("\\z"))
                .unwrap_or(body);
        }
        let ascii = regex_syntax::ParserBuilder::new()
            .unicode(false)
            .build()
            .parse(body);
        let hir = match ascii {
            Ok(hir) => hir,
            Err(_) => regex_syntax::Parser::new()
                .parse(body)
                .map_err(|e| e.to_string())?,
        };
        let sampler = rand_regex::Regex::with_hir(hir, MAX_REPEAT).map_err(|e| match e {
            rand_regex::Error::Anchor => {
                "it holds an anchor or word boundary inside, which no sampled id can honour"
                    .to_string()
            }
            other => other.to_string(),
        })?;
        if !sampler.is_utf8() {
            return Err("it can match bytes that are not UTF-8 text".to_string());
        }
        Ok(IdGenerator { sampler })
    }
}

/// How many times an unbounded repetition (`+`, `*`, `{n,}`) repeats at most in a sampled id.
const MAX_REPEAT: u32 = 16;

/// Samples ids an `id_format` matches.
#[derive(Debug, Clone)]
pub struct IdGenerator {
    sampler: rand_regex::Regex,
}

impl IdGenerator {
    /// One id, drawn from `rng` (the namespace's seeded generator keeps it deterministic).
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> String {
        rand::distr::Distribution::<String>::sample(&self.sampler, rng)
    }
}

/// How an index compares values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    Equality,
    Range,
}

/// `indexes[]`: a field records are looked up by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    pub field: String,
    pub kind: IndexKind,
}

/// `foreign_keys[]`: `field` of this type names the record of `entity_type` whose `target_field`
/// holds the same value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKey {
    pub field: String,
    pub entity_type: String,
    pub target_field: String,
}

/// Something wrong with the file that did not stop it from being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// Stable id, as `wraith lint` names the finding: `schema-primary-key`, `schema-id-format`,
    /// `schema-indexes`, `schema-foreign-keys`, `schema-unknown-key`.
    pub rule: &'static str,
    /// Whether the problem drops something the author wrote (an unknown key drops nothing).
    pub drops_declaration: bool,
    pub message: String,
}

const ENTRY_KEYS: [&str; 4] = ["primary_key", "id_format", "indexes", "foreign_keys"];

/// The keys of the file's top-level object.
const TOP_KEYS: [&str; 2] = ["schema_version", "entity_types"];

/// Why nothing of a `state/schema.json` is usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnusableSchema {
    #[error("not valid JSON: {0}")]
    NotJson(String),
    #[error("the top level must be a JSON object")]
    NotObject,
    #[error("schema_version must be 1, found {0}")]
    Version(String),
    #[error("entity_types must be an object keyed by entity type")]
    EntityTypes,
}

impl UnusableSchema {
    /// The `wraith lint` rule id of the problem.
    pub fn rule(&self) -> &'static str {
        match self {
            UnusableSchema::NotJson(_) | UnusableSchema::NotObject => "schema-json",
            UnusableSchema::Version(_) => "schema_version",
            UnusableSchema::EntityTypes => "schema-entity-types",
        }
    }
}

impl StateSchema {
    /// Parse the text of `state/schema.json`. `Err` means nothing of it is usable; the problems
    /// list what was dropped or ignored from a usable file.
    pub fn parse(text: &str) -> Result<(StateSchema, Vec<SchemaProblem>), UnusableSchema> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| UnusableSchema::NotJson(e.to_string()))?;
        let obj = v.as_object().ok_or(UnusableSchema::NotObject)?;
        match obj.get("schema_version") {
            Some(Value::Number(n)) if n.as_u64() == Some(1) => {}
            Some(other) => return Err(UnusableSchema::Version(other.to_string())),
            None => return Err(UnusableSchema::Version("none".to_string())),
        }
        let mut schema = StateSchema::default();
        let mut problems = Vec::new();
        for key in obj.keys() {
            if !TOP_KEYS.contains(&key.as_str()) {
                problems.push(problem(
                    "schema-unknown-key",
                    false,
                    format!(
                        "unknown top-level key `{key}`, which is ignored (allowed: {})",
                        TOP_KEYS.join(", ")
                    ),
                ));
            }
        }
        let types = match obj.get("entity_types") {
            None => return Ok((schema, problems)),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(UnusableSchema::EntityTypes),
        };
        for (name, decl) in types {
            if let Some(t) = parse_entry(name, decl, &mut problems) {
                schema.types.insert(name.clone(), t);
            }
        }
        Ok((schema, problems))
    }
}

fn problem(rule: &'static str, drops: bool, message: String) -> SchemaProblem {
    SchemaProblem {
        rule,
        drops_declaration: drops,
        message,
    }
}

fn parse_entry(
    name: &str,
    decl: &Value,
    problems: &mut Vec<SchemaProblem>,
) -> Option<DeclaredType> {
    let Some(entry) = decl.as_object() else {
        problems.push(problem(
            "schema-primary-key",
            true,
            format!(
                "entity type `{name}` must be an object like {{\"primary_key\": \"id\"}}; it is \
                 ignored"
            ),
        ));
        return None;
    };
    let primary_key = match entry.get("primary_key") {
        Some(Value::String(pk)) if !pk.is_empty() => pk.clone(),
        _ => {
            problems.push(problem(
                "schema-primary-key",
                true,
                format!(
                    "entity type `{name}` has no string primary_key; it is ignored (add \
                     \"primary_key\": \"id\")"
                ),
            ));
            return None;
        }
    };
    for key in entry.keys() {
        if !ENTRY_KEYS.contains(&key.as_str()) {
            problems.push(problem(
                "schema-unknown-key",
                false,
                format!(
                    "entity type `{name}` has an unknown key `{key}`, which is ignored (allowed: \
                     {})",
                    ENTRY_KEYS.join(", ")
                ),
            ));
        }
    }
    Some(DeclaredType {
        primary_key,
        id_format: parse_id_format(name, entry, problems),
        indexes: parse_indexes(name, entry, problems),
        foreign_keys: parse_foreign_keys(name, entry, problems),
    })
}

fn parse_id_format(
    name: &str,
    entry: &Map<String, Value>,
    problems: &mut Vec<SchemaProblem>,
) -> Option<IdFormat> {
    match entry.get("id_format")? {
        Value::Null => None,
        Value::String(s) => match IdFormat::new(s) {
            Ok(f) => Some(f),
            Err(e) => {
                problems.push(problem(
                    "schema-id-format",
                    true,
                    format!(
                        "entity type `{name}`: id_format `{s}` is not a valid regular expression \
                         ({}); it is ignored",
                        e.lines().last().unwrap_or("").trim()
                    ),
                ));
                None
            }
        },
        other => {
            problems.push(problem(
                "schema-id-format",
                true,
                format!(
                    "entity type `{name}`: id_format must be a string holding a regular \
                     expression, found {other}; it is ignored"
                ),
            ));
            None
        }
    }
}

/// The non-empty string at `key` of an array item, or `None`.
fn item_str<'a>(item: &'a Value, key: &str) -> Option<&'a str> {
    item.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The items of the array at `key` of an entry, each parsed by `item` (which describes what
/// it wants when it gets something else); a malformed array or item is a problem under `rule`
/// and is dropped.
fn parse_array<T>(
    name: &str,
    entry: &Map<String, Value>,
    (key, rule, shape): (&str, &'static str, &str),
    item: impl Fn(&Value) -> Option<T>,
    problems: &mut Vec<SchemaProblem>,
) -> Vec<T> {
    let items = match entry.get(key) {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            problems.push(problem(
                rule,
                true,
                format!(
                    "entity type `{name}`: {key} must be an array of {shape} objects; it is \
                     ignored"
                ),
            ));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (i, v) in items.iter().enumerate() {
        match item(v) {
            Some(t) => out.push(t),
            None => problems.push(problem(
                rule,
                true,
                format!(
                    "entity type `{name}`: {key}[{i}] must be {shape}, found {v}; it is ignored"
                ),
            )),
        }
    }
    out
}

fn parse_indexes(
    name: &str,
    entry: &Map<String, Value>,
    problems: &mut Vec<SchemaProblem>,
) -> Vec<Index> {
    let shape = "{\"field\": \"<name>\", \"type\": \"equality\" | \"range\"}";
    parse_array(
        name,
        entry,
        ("indexes", "schema-indexes", shape),
        |item| {
            let kind = match item.get("type").and_then(Value::as_str)? {
                "equality" => IndexKind::Equality,
                "range" => IndexKind::Range,
                _ => return None,
            };
            Some(Index {
                field: item_str(item, "field")?.to_string(),
                kind,
            })
        },
        problems,
    )
}

fn parse_foreign_keys(
    name: &str,
    entry: &Map<String, Value>,
    problems: &mut Vec<SchemaProblem>,
) -> Vec<ForeignKey> {
    let shape = "{\"field\": \"<name>\", \"references\": \"<entity_type>.<field>\"}";
    parse_array(
        name,
        entry,
        ("foreign_keys", "schema-foreign-keys", shape),
        |item| {
            let (entity_type, target_field) = item_str(item, "references")?
                .split_once('.')
                .filter(|(t, f)| !t.is_empty() && !f.is_empty())?;
            Some(ForeignKey {
                field: item_str(item, "field")?.to_string(),
                entity_type: entity_type.to_string(),
                target_field: target_field.to_string(),
            })
        },
        problems,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (StateSchema, Vec<SchemaProblem>) {
        StateSchema::parse(text).expect("usable")
    }

    #[test]
    fn the_contract_pages_example_parses_whole() {
        let (s, problems) = parse(
            r#"{"schema_version":1,"entity_types":{"customers":{"primary_key":"id",
            "id_format":"cus_[a-zA-Z0-9]{14}","indexes":[{"field":"email","type":"equality"}],
            "foreign_keys":[{"field":"default_source","references":"cards.id"}]}}}"#,
        );
        assert!(problems.is_empty(), "{problems:?}");
        let c = &s.types["customers"];
        assert_eq!(c.primary_key, "id");
        let f = c.id_format.as_ref().unwrap();
        assert!(f.matches("cus_ABCdef01234567"));
        assert!(!f.matches("cus_short"), "the whole id must match");
        assert!(
            !f.matches("xcus_ABCdef01234567"),
            "anchored at the start too"
        );
        assert_eq!(
            c.indexes,
            vec![Index {
                field: "email".into(),
                kind: IndexKind::Equality
            }]
        );
        assert_eq!(
            c.foreign_keys,
            vec![ForeignKey {
                field: "default_source".into(),
                entity_type: "cards".into(),
                target_field: "id".into()
            }]
        );
    }

    #[test]
    fn a_malformed_part_is_dropped_alone_and_named() {
        let (s, problems) = parse(
            r#"{"schema_version":1,"entity_types":{"customers":{"primary_key":"id",
            "id_format":"cus_[a-z","indexes":[{"field":"email","type":"hash"},{"field":"n","type":"range"}],
            "foreign_keys":[{"field":"src","references":"cards"}],"primarykey":"x"}}}"#,
        );
        let c = &s.types["customers"];
        assert!(c.id_format.is_none());
        assert_eq!(c.indexes.len(), 1);
        assert!(c.foreign_keys.is_empty());
        let rules: Vec<&str> = problems.iter().map(|p| p.rule).collect();
        assert_eq!(
            rules,
            [
                "schema-unknown-key",
                "schema-id-format",
                "schema-indexes",
                "schema-foreign-keys"
            ]
        );
        assert!(problems[2].message.contains("indexes[0]"), "{problems:?}");
        assert!(!problems[0].drops_declaration);
    }

    #[test]
    fn an_unknown_top_level_key_is_named_and_ignored() {
        let (s, problems) = parse(
            r#"{"schema_version":1,"entitytypes":{},"entity_types":{"a":{"primary_key":"id"}}}"#,
        );
        assert_eq!(s.types.len(), 1);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].rule, "schema-unknown-key");
        assert!(
            problems[0].message.contains("`entitytypes`"),
            "{problems:?}"
        );
        assert!(!problems[0].drops_declaration);
    }

    #[test]
    fn an_entry_without_a_primary_key_is_dropped_whole() {
        let (s, problems) = parse(r#"{"schema_version":1,"entity_types":{"a":{},"b":"id"}}"#);
        assert!(s.types.is_empty());
        assert_eq!(problems.len(), 2);
        assert!(problems.iter().all(|p| p.rule == "schema-primary-key"));
    }

    #[test]
    fn a_generator_samples_whole_ascii_ids_the_format_matches_deterministically() {
        use rand::SeedableRng;
        for source in [r"^cus_\d{6}$", r"\Aord-[A-Z]{2}\w+\z", "(ab|cd)[0-9a-f]{4}"] {
            let format = IdFormat::new(source).unwrap();
            let g = format.generator().unwrap();
            let draw = |seed| {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                (0..20).map(|_| g.sample(&mut rng)).collect::<Vec<_>>()
            };
            let ids = draw(7);
            assert_eq!(ids, draw(7), "same seed, same ids");
            for id in &ids {
                assert!(format.matches(id), "{source}: {id}");
                assert!(id.is_ascii(), "{source}: {id}");
            }
        }
    }

    #[test]
    fn a_format_with_an_anchor_inside_judges_ids_but_cannot_generate_them() {
        let format = IdFormat::new(r"a\bb|c").unwrap();
        let why = format.generator().unwrap_err();
        assert!(why.contains("anchor or word boundary"), "{why}");
    }

    #[test]
    fn an_unusable_file_is_an_error() {
        assert!(StateSchema::parse("{").is_err());
        assert!(StateSchema::parse(r#"{"schema_version":2}"#).is_err());
        assert!(StateSchema::parse(r#"{"schema_version":1,"entity_types":[]}"#).is_err());
    }
}
