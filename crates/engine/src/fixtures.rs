//! Fixture sets and `state/schema.json`: from the raw files of `state/fixtures/` to the records
//! every new namespace is seeded with.
//!
//! The rules are the fixtures contract page's: two forms auto-detected by `fixture.json`, strict
//! `fixture.json` keys, parent inheritance, leaf-only patches applied add → replace → remove in
//! entity-type order, the implicit default set's precedence, and the schema gate (records of
//! undeclared types are skipped; route-derived types win over declared ones).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use crate::api::{FixtureSetFiles, FixtureTree};
use crate::error::EngineError;
use crate::state_schema::{IdGenerator, StateSchema};

/// The records one namespace is seeded with: entity type → primary key → record.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SeedData {
    pub types: BTreeMap<String, IndexMap<String, Arc<Value>>>,
}

/// The entity types the store knows: name → primary-key field.
#[derive(Debug, Clone, Default)]
pub(crate) struct Schema {
    pub types: BTreeMap<String, String>,
    /// Samplers of the declared types' `id_format`.
    pub id_generators: BTreeMap<String, IdGenerator>,
}

impl Schema {
    /// Route-derived types from the model, plus the declared ones of `state/schema.json` that do
    /// not collide with them. A missing schema is silent; an unparseable one, and every part of
    /// it that is dropped or ignored, is a warning.
    pub(crate) fn build(
        route_types: impl Iterator<Item = (String, String)>,
        schema_json: Option<&str>,
        warnings: &mut Vec<String>,
    ) -> Schema {
        let mut types: BTreeMap<String, String> = route_types.collect();
        let mut id_generators = BTreeMap::new();
        if let Some(text) = schema_json {
            match StateSchema::parse(text) {
                Ok((parsed, problems)) => {
                    warnings.extend(
                        problems
                            .into_iter()
                            .map(|p| format!("state/schema.json: {}", p.message)),
                    );
                    for (name, decl) in parsed.types {
                        // A type's `id_format` samples ids even where a route derives the
                        // type: `state.new_id` prefers the shape the recordings show, and uses
                        // the format only when they show none.
                        if let Some(format) = &decl.id_format {
                            match format.generator() {
                                Ok(g) => {
                                    id_generators.insert(name.clone(), g);
                                }
                                Err(why) => warnings.push(format!(
                                    "state/schema.json: entity type `{name}`: id_format `{}` \
                                     judges ids but cannot generate them ({why}), so \
                                     state.new_id(\"{name}\") cannot use it",
                                    format.source
                                )),
                            }
                        }
                        // Route-derived definitions win on a name clash: their primary key.
                        types.entry(name).or_insert(decl.primary_key);
                    }
                }
                Err(msg) => warnings.push(format!(
                    "state/schema.json is unusable ({msg}); serving with a route-only schema, \
                     so fixtures for types no route references are skipped"
                )),
            }
        }
        Schema {
            types,
            id_generators,
        }
    }

    pub(crate) fn primary_key(&self, ty: &str) -> Option<&str> {
        self.types.get(ty).map(String::as_str)
    }
}

/// Every fixture set, resolved (parents inherited, leaf patches applied, schema gate applied).
#[derive(Debug, Clone, Default)]
pub(crate) struct FixtureSets {
    pub sets: BTreeMap<String, Arc<SeedData>>,
    /// Name of the implicit default set when one exists.
    pub default: Option<String>,
}

impl FixtureSets {
    pub(crate) fn names(&self) -> Vec<String> {
        self.sets.keys().cloned().collect()
    }

    /// Resolve a `--fixture` / provision name: exact (possibly namespaced `ns:name`) first,
    /// then the bare name after the last `:`.
    pub(crate) fn lookup(&self, name: &str) -> Option<&str> {
        if let Some((k, _)) = self.sets.get_key_value(name) {
            return Some(k.as_str());
        }
        let bare = name.rsplit_once(':').map(|(_, b)| b)?;
        self.sets.get_key_value(bare).map(|(k, _)| k.as_str())
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<SeedData>> {
        self.sets.get(name)
    }
}

impl FixtureTree {
    /// The entity types some set of the tree seeds or patches, whatever set a session picks.
    /// A file that does not parse names nothing here (loading the sets reports it).
    pub fn seeded_types(&self) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = self.loose.keys().cloned().collect();
        for set in self.sets.values() {
            out.extend(set.flat.keys().cloned());
            out.extend(set.patches.keys().cloned());
            if let Some(Ok(Value::Object(doc))) = set
                .fixture_json
                .as_deref()
                .map(serde_json::from_str::<Value>)
                && let Some(Value::Object(entities)) = doc.get("entities")
            {
                out.extend(entities.keys().cloned());
            }
        }
        out
    }
}

/// Every fixture set's records as a namespace seeded from it holds them: set name → entity type
/// → (primary key, record), in seeding order.
pub type ResolvedFixtureSets = BTreeMap<String, BTreeMap<String, Vec<(String, Value)>>>;

impl FixtureTree {
    /// Resolve every set as the engine does at startup (parents inherited, leaf patches applied,
    /// records of types neither `route_types` nor `state/schema.json` know skipped), for tools
    /// that judge what a session would be seeded with (`wraith lint`). `route_types` are the
    /// model's entity types with their primary keys.
    pub fn resolve(
        &self,
        route_types: impl Iterator<Item = (String, String)>,
        schema_json: Option<&str>,
    ) -> Result<ResolvedFixtureSets, EngineError> {
        let schema = Schema::build(route_types, schema_json, &mut Vec::new());
        let sets = resolve(self, &schema, &mut Vec::new())?;
        Ok(sets
            .sets
            .into_iter()
            .map(|(name, data)| {
                let types = data
                    .types
                    .iter()
                    .map(|(ty, recs)| {
                        let recs = recs
                            .iter()
                            .map(|(pk, rec)| (pk.clone(), Value::clone(rec)))
                            .collect();
                        (ty.clone(), recs)
                    })
                    .collect();
                (name, types)
            })
            .collect())
    }
}

/// One parsed set before inheritance.
struct RawSet {
    /// Directory form (has a `fixture.json`), as opposed to legacy flat files.
    directory: bool,
    parent: Option<String>,
    /// Entity type → records (unchecked).
    entities: BTreeMap<String, Vec<Value>>,
    patches: BTreeMap<String, Patch>,
}

#[derive(Default)]
struct Patch {
    add: Vec<Value>,
    replace: Vec<(String, Value)>,
    remove: Vec<String>,
}

/// Parse and resolve every set of the tree against `schema`.
pub(crate) fn resolve(
    tree: &FixtureTree,
    schema: &Schema,
    warnings: &mut Vec<String>,
) -> Result<FixtureSets, EngineError> {
    let mut raw: BTreeMap<String, RawSet> = BTreeMap::new();
    for (name, files) in &tree.sets {
        raw.insert(name.clone(), parse_set(name, files, warnings)?);
    }
    let mut default = None;
    if raw.contains_key("default") {
        default = Some("default".to_string());
        if !tree.loose.is_empty() {
            warnings.push(format!(
                "state/fixtures/default/ exists, so the loose files directly under \
                 state/fixtures/ ({}) are ignored; move them into a set directory",
                tree.loose
                    .keys()
                    .map(|k| format!("{k}.json"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    } else if !tree.loose.is_empty() {
        let files = FixtureSetFiles {
            fixture_json: None,
            flat: tree.loose.clone(),
            patches: BTreeMap::new(),
            ignored: Vec::new(),
        };
        raw.insert(
            "default".to_string(),
            parse_set("default", &files, warnings)?,
        );
        default = Some("default".to_string());
    }

    let mut sets = BTreeMap::new();
    for name in raw.keys() {
        let data = resolve_set(name, &raw, schema)?;
        sets.insert(name.clone(), Arc::new(data));
    }
    Ok(FixtureSets { sets, default })
}

fn fixture_err(set: &str, file: &str, message: impl Into<String>) -> EngineError {
    EngineError::Fixture {
        set: set.to_string(),
        file: file.to_string(),
        message: message.into(),
    }
}

fn parse_set(
    name: &str,
    files: &FixtureSetFiles,
    warnings: &mut Vec<String>,
) -> Result<RawSet, EngineError> {
    match &files.fixture_json {
        Some(text) => {
            let mut set = parse_fixture_json(name, text)?;
            for (ty, text) in &files.patches {
                let file = format!("patches/{ty}.patch.json");
                set.patches
                    .insert(ty.clone(), parse_patch(name, &file, text)?);
            }
            Ok(set)
        }
        None => {
            if !files.patches.is_empty() {
                warnings.push(format!(
                    "fixture set `{name}` has patches/ but no fixture.json: patches apply only to \
                     directory-form sets, so they are ignored"
                ));
            }
            let mut entities = BTreeMap::new();
            for (ty, text) in &files.flat {
                let file = format!("{ty}.json");
                let v: Value = serde_json::from_str(text)
                    .map_err(|e| fixture_err(name, &file, format!("not valid JSON: {e}")))?;
                match v {
                    Value::Array(items) => {
                        entities.insert(ty.clone(), items);
                    }
                    _ => {
                        return Err(fixture_err(
                            name,
                            &file,
                            "a flat fixture file must be a top-level JSON array of records",
                        ));
                    }
                }
            }
            Ok(RawSet {
                directory: false,
                parent: None,
                entities,
                patches: BTreeMap::new(),
            })
        }
    }
}

fn parse_fixture_json(name: &str, text: &str) -> Result<RawSet, EngineError> {
    const FILE: &str = "fixture.json";
    let v: Value = serde_json::from_str(text)
        .map_err(|e| fixture_err(name, FILE, format!("not valid JSON: {e}")))?;
    let Value::Object(obj) = v else {
        return Err(fixture_err(name, FILE, "must be a JSON object"));
    };
    let mut parent = None;
    let mut entities = BTreeMap::new();
    for (key, value) in obj {
        match key.as_str() {
            "entities" => match value {
                Value::Object(m) => {
                    for (ty, records) in m {
                        match records {
                            Value::Array(items) => {
                                entities.insert(ty, items);
                            }
                            _ => {
                                return Err(fixture_err(
                                    name,
                                    FILE,
                                    format!("entities.{ty} must be an array of records"),
                                ));
                            }
                        }
                    }
                }
                Value::Null => {}
                _ => {
                    return Err(fixture_err(
                        name,
                        FILE,
                        "`entities` must be an object keyed by entity type",
                    ));
                }
            },
            "parent" => match value {
                Value::String(p) => parent = Some(p),
                Value::Null => {}
                _ => {
                    return Err(fixture_err(
                        name,
                        FILE,
                        "`parent` must be a string like \"base:default\"",
                    ));
                }
            },
            "description" => {}
            "name" => {
                return Err(fixture_err(
                    name,
                    FILE,
                    "unknown key `name`: the set name is always the directory name; remove it",
                ));
            }
            other => {
                return Err(fixture_err(
                    name,
                    FILE,
                    format!(
                        "unknown key `{other}` (allowed: entities, parent, description); remove it"
                    ),
                ));
            }
        }
    }
    Ok(RawSet {
        directory: true,
        parent,
        entities,
        patches: BTreeMap::new(),
    })
}

fn parse_patch(set: &str, file: &str, text: &str) -> Result<Patch, EngineError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| fixture_err(set, file, format!("not valid JSON: {e}")))?;
    let Value::Object(obj) = v else {
        return Err(fixture_err(
            set,
            file,
            "a patch must be a JSON object with `add`, `replace` and/or `remove`",
        ));
    };
    let mut patch = Patch::default();
    for (key, value) in obj {
        match key.as_str() {
            "add" => {
                let Value::Array(items) = value else {
                    return Err(fixture_err(set, file, "`add` must be an array of records"));
                };
                for item in items {
                    if !item.is_object() {
                        return Err(fixture_err(
                            set,
                            file,
                            "every `add` record must be an object",
                        ));
                    }
                    patch.add.push(item);
                }
            }
            "replace" => {
                let Value::Object(m) = value else {
                    return Err(fixture_err(
                        set,
                        file,
                        "`replace` must be an object mapping a primary key to a record",
                    ));
                };
                for (pk, rec) in m {
                    if !rec.is_object() {
                        return Err(fixture_err(
                            set,
                            file,
                            format!("`replace.{pk}` must be a record object"),
                        ));
                    }
                    patch.replace.push((pk, rec));
                }
            }
            "remove" => {
                let Value::Array(items) = value else {
                    return Err(fixture_err(
                        set,
                        file,
                        "`remove` must be an array of primary-key values",
                    ));
                };
                for item in items {
                    match scalar_key(&item) {
                        Some(k) => patch.remove.push(k),
                        None => {
                            return Err(fixture_err(
                                set,
                                file,
                                "`remove` entries must be strings, numbers or booleans",
                            ));
                        }
                    }
                }
            }
            other => {
                return Err(fixture_err(
                    set,
                    file,
                    format!(
                        "unknown key `{other}`: a patch takes only `add`, `replace` and `remove` \
                         (RFC 6902 op/path/value documents are not supported)"
                    ),
                ));
            }
        }
    }
    Ok(patch)
}

/// The string form of a primary-key value (a number matches its stringified key): how fixture
/// records, patches and `wraith lint`'s reference checks key a record.
pub fn scalar_key(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Find a set named by a `parent` reference: the exact (namespaced) name, then the bare one.
fn find_parent<'a>(reference: &str, raw: &'a BTreeMap<String, RawSet>) -> Option<&'a str> {
    if let Some((k, _)) = raw.get_key_value(reference) {
        return Some(k.as_str());
    }
    let bare = reference.rsplit_once(':').map(|(_, b)| b)?;
    raw.get_key_value(bare).map(|(k, _)| k.as_str())
}

/// Entity type → ordered records keyed by primary key (before the schema gate).
type Records = BTreeMap<String, IndexMap<String, Value>>;

fn resolve_set(
    name: &str,
    raw: &BTreeMap<String, RawSet>,
    schema: &Schema,
) -> Result<SeedData, EngineError> {
    // Walk up the parent chain, refusing cycles.
    let mut chain = vec![name.to_string()];
    let mut seen = BTreeSet::from([name.to_string()]);
    let mut cur = name.to_string();
    while let Some(parent_ref) = raw.get(&cur).and_then(|s| s.parent.clone()) {
        let Some(parent) = find_parent(&parent_ref, raw) else {
            return Err(fixture_err(
                &cur,
                "fixture.json",
                format!(
                    "parent `{parent_ref}` names no fixture set (available: {})",
                    raw.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        if !seen.insert(parent.to_string()) {
            return Err(fixture_err(
                &cur,
                "fixture.json",
                format!("parent chain loops back to `{parent}`"),
            ));
        }
        chain.push(parent.to_string());
        cur = parent.to_string();
    }

    let mut records: Records = BTreeMap::new();
    // Oldest ancestor first; each set overlays its own records by primary key.
    for set_name in chain.iter().rev() {
        let Some(set) = raw.get(set_name) else {
            continue;
        };
        for (ty, items) in &set.entities {
            let file = if set.directory {
                "fixture.json".to_string()
            } else {
                format!("{ty}.json")
            };
            let file = file.as_str();
            let Some(pk_field) = schema.primary_key(ty) else {
                continue; // undeclared type: silently skipped
            };
            let target = records.entry(ty.clone()).or_default();
            for (i, item) in items.iter().enumerate() {
                let pk = record_key(set_name, file, ty, Some(i), item, pk_field)?;
                target.insert(pk, item.clone());
            }
        }
    }

    // Only the leaf set's patches, sorted by entity type (BTreeMap order).
    if let Some(leaf) = raw.get(name) {
        for (ty, patch) in &leaf.patches {
            let Some(pk_field) = schema.primary_key(ty) else {
                continue;
            };
            let file = format!("patches/{ty}.patch.json");
            let target = records.entry(ty.clone()).or_default();
            for (i, item) in patch.add.iter().enumerate() {
                let pk = record_key(name, &file, ty, Some(i), item, pk_field)?;
                target.insert(pk, item.clone());
            }
            for (pk, rec) in &patch.replace {
                // A replacement is a whole record of the type, under the key it replaces: one
                // without its primary key, or naming another, would be stored unreachable.
                let at = format!("replace.{pk}");
                let own = record_key(name, &file, &at, None, rec, pk_field)?;
                if own != *pk {
                    return Err(fixture_err(
                        name,
                        &file,
                        format!(
                            "{at}: primary key `{pk_field}` is {own:?}, not the key it replaces; \
                             a replacement keeps the record's key"
                        ),
                    ));
                }
                if let Some(slot) = target.get_mut(pk) {
                    *slot = rec.clone();
                }
            }
            for pk in &patch.remove {
                target.shift_remove(pk);
            }
        }
    }

    let types = records
        .into_iter()
        .filter(|(_, m)| !m.is_empty())
        .map(|(ty, m)| {
            let m = m.into_iter().map(|(k, v)| (k, Arc::new(v))).collect();
            (ty, m)
        })
        .collect();
    Ok(SeedData { types })
}

/// The primary key of the record `item`, named in messages as `{at}[{index}]` (a record of a
/// list) or `{at}` (one keyed otherwise, `index` `None`).
fn record_key(
    set: &str,
    file: &str,
    at: &str,
    index: Option<usize>,
    item: &Value,
    pk_field: &str,
) -> Result<String, EngineError> {
    let at = match index {
        Some(i) => format!("{at}[{i}]"),
        None => at.to_string(),
    };
    let Value::Object(obj) = item else {
        return Err(fixture_err(
            set,
            file,
            format!("{at} must be a JSON object"),
        ));
    };
    match obj.get(pk_field) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(fixture_err(
            set,
            file,
            format!("{at}: primary key `{pk_field}` must be a string, found {other}; quote it"),
        )),
        None => Err(fixture_err(
            set,
            file,
            format!("{at} has no primary key field `{pk_field}`"),
        )),
    }
}
