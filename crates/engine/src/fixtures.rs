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

impl FixtureTree {
    /// Every loop of `parent` references among the tree's sets, each as the sets it passes
    /// through in chain order, starting at the smallest name (`["a", "b"]`: `a`'s parent is
    /// `b`, whose parent is `a`); sorted. References resolve as when the sets are seeded
    /// (the exact, possibly namespaced, name first, then the bare name after the last `:`). Only
    /// the `parent` of each `fixture.json` is read: a file that does not parse names no parent
    /// here (seeding it reports it), and an unknown parent ends its chain.
    pub fn parent_loops(&self) -> Vec<Vec<String>> {
        let mut parents: BTreeMap<String, Option<String>> = self
            .sets
            .iter()
            .map(|(name, files)| {
                let parent = files
                    .fixture_json
                    .as_deref()
                    .and_then(|text| serde_json::from_str::<Value>(text).ok())
                    .and_then(|doc| doc.get("parent")?.as_str().map(str::to_string));
                (name.clone(), parent)
            })
            .collect();
        if !self.loose.is_empty() {
            // The loose files are the default set when no `default/` is there; it has no parent.
            parents.entry("default".to_string()).or_insert(None);
        }
        // 1: on the chain being walked; 2: its chain is known.
        let mut state: BTreeMap<&str, u8> = BTreeMap::new();
        let mut loops = BTreeSet::new();
        for start in parents.keys() {
            let mut chain: Vec<&str> = Vec::new();
            let mut cur = Some(start.as_str());
            while let Some(name) = cur {
                match state.get(name) {
                    Some(2) => break,
                    Some(_) => {
                        let at = chain.iter().position(|n| *n == name).unwrap_or(0);
                        let mut found: Vec<String> =
                            chain[at..].iter().map(|n| n.to_string()).collect();
                        let first = (0..found.len()).min_by_key(|&i| &found[i]).unwrap_or(0);
                        found.rotate_left(first);
                        loops.insert(found);
                        break;
                    }
                    None => {}
                }
                state.insert(name, 1);
                chain.push(name);
                cur = parents
                    .get(name)
                    .and_then(Option::as_deref)
                    .and_then(|reference| find_parent(reference, &parents));
            }
            for name in chain {
                state.insert(name, 2);
            }
        }
        loops.into_iter().collect()
    }
}

/// Every fixture set's records as a namespace seeded from it holds them: set name → entity type
/// → (primary key, record), in seeding order.
/// A record inherited by many sets is one shared value.
pub type ResolvedFixtureSets = BTreeMap<String, BTreeMap<String, Vec<(String, Arc<Value>)>>>;

/// What a refusal of [`FixtureTree::resolve_collecting`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixtureRefusalKind {
    /// One list of records (a set's records of a type, or a patch's `add`) names a primary key
    /// twice.
    RepeatedKey,
    /// A patch's `add` names a key the set already holds from its parents.
    AddOfHeldKey,
}

/// A record seeding refuses while the rest of its set still resolves: the startup of `serve`
/// and `check` stops at the first one with [`EngineError::Fixture`] of the same `set`, `file`
/// and `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureRefusal {
    pub kind: FixtureRefusalKind,
    /// The set, as seeding names it (`default` for the loose files too).
    pub set: String,
    /// The file within the set (`fixture.json`, `customers.json`,
    /// `patches/customers.patch.json`).
    pub file: String,
    pub message: String,
}

/// What [`resolve_set`] does with a refusal: stop there (seeding a namespace), or note it and
/// go on with the later record (judging the sets, as `wraith lint` does).
enum Refusals<'a> {
    Stop,
    Collect(&'a mut Vec<FixtureRefusal>),
}

impl Refusals<'_> {
    fn refuse(
        &mut self,
        kind: FixtureRefusalKind,
        set: &str,
        file: &str,
        message: String,
    ) -> Result<(), EngineError> {
        match self {
            Refusals::Stop => Err(fixture_err(set, file, message)),
            Refusals::Collect(out) => {
                out.push(FixtureRefusal {
                    kind,
                    set: set.to_string(),
                    file: file.to_string(),
                    message,
                });
                Ok(())
            }
        }
    }
}

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
        Ok(shared_records(sets))
    }

    /// [`Self::resolve`], going on past the records seeding refuses ([`FixtureRefusal`]), each
    /// noted: a repeated key keeps the later record, as does an `add` of a key the set holds.
    /// The error is the first problem that stops resolution (a file that does not parse, a
    /// record without its key, a parent that loops or names no set).
    pub fn resolve_collecting(
        &self,
        route_types: impl Iterator<Item = (String, String)>,
        schema_json: Option<&str>,
    ) -> Result<(ResolvedFixtureSets, Vec<FixtureRefusal>), EngineError> {
        let schema = Schema::build(route_types, schema_json, &mut Vec::new());
        let mut refusals = Vec::new();
        let sets = resolve_with(
            self,
            &schema,
            &mut Vec::new(),
            &mut Refusals::Collect(&mut refusals),
        )?;
        Ok((shared_records(sets), refusals))
    }
}

/// The resolved sets as [`ResolvedFixtureSets`].
fn shared_records(sets: FixtureSets) -> ResolvedFixtureSets {
    sets.sets
        .into_iter()
        .map(|(name, data)| {
            let types = data
                .types
                .iter()
                .map(|(ty, recs)| {
                    let recs = recs
                        .iter()
                        .map(|(pk, rec)| (pk.clone(), Arc::clone(rec)))
                        .collect();
                    (ty.clone(), recs)
                })
                .collect();
            (name, types)
        })
        .collect()
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

/// Parse and resolve every set of the tree against `schema`, refusing the first record seeding
/// refuses.
pub(crate) fn resolve(
    tree: &FixtureTree,
    schema: &Schema,
    warnings: &mut Vec<String>,
) -> Result<FixtureSets, EngineError> {
    resolve_with(tree, schema, warnings, &mut Refusals::Stop)
}

fn resolve_with(
    tree: &FixtureTree,
    schema: &Schema,
    warnings: &mut Vec<String>,
    refusals: &mut Refusals<'_>,
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

    // Each set's inherited records (its chain's, before its own patches), built once and
    // reused by every set below it: a chain of sets is resolved in one pass, not once per set.
    let mut inherited: BTreeMap<String, Records> = BTreeMap::new();
    let mut sets = BTreeMap::new();
    for name in raw.keys() {
        let data = resolve_set(name, &raw, schema, &mut inherited, refusals)?;
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
fn find_parent<'a, T>(reference: &str, raw: &'a BTreeMap<String, T>) -> Option<&'a str> {
    if let Some((k, _)) = raw.get_key_value(reference) {
        return Some(k.as_str());
    }
    let bare = reference.rsplit_once(':').map(|(_, b)| b)?;
    raw.get_key_value(bare).map(|(k, _)| k.as_str())
}

/// Entity type → ordered records keyed by primary key (before the schema gate). Records are
/// shared, not copied, between a set and the sets that inherit them.
type Records = BTreeMap<String, IndexMap<String, Arc<Value>>>;

/// Set `name`'s records: its chain's, oldest ancestor first, then its own patches.
/// `inherited` holds the records (before patches) of every set resolved so far; the chain is
/// walked only up to the first of them, so each set's own records are read once however many
/// sets inherit them. The walk and its errors are those of a walk to the chain's root: a set
/// already resolved has a chain that ends without a loop or an unknown parent, and holds no
/// set of the part walked (that part would then loop through it).
fn resolve_set(
    name: &str,
    raw: &BTreeMap<String, RawSet>,
    schema: &Schema,
    inherited: &mut BTreeMap<String, Records>,
    refusals: &mut Refusals<'_>,
) -> Result<SeedData, EngineError> {
    // Walk up the parent chain to a resolved set or the root, refusing cycles.
    let mut chain = vec![name.to_string()];
    let mut seen = BTreeSet::from([name.to_string()]);
    let mut cur = name.to_string();
    let mut base: Option<String> = None;
    while !inherited.contains_key(&cur)
        && let Some(parent_ref) = raw.get(&cur).and_then(|s| s.parent.clone())
    {
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
        if inherited.contains_key(parent) {
            base = Some(parent.to_string());
            break;
        }
        chain.push(parent.to_string());
        cur = parent.to_string();
    }

    if !inherited.contains_key(name) {
        let mut records: Records = base
            .as_deref()
            .and_then(|b| inherited.get(b))
            .cloned()
            .unwrap_or_default();
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
                // A set's records overlay its parent's by key; within the set a key is one
                // record, so a repeat is a mistake that would silently keep the last.
                let mut own: BTreeMap<String, usize> = BTreeMap::new();
                for (i, item) in items.iter().enumerate() {
                    let pk = record_key(set_name, file, ty, Some(i), item, pk_field)?;
                    if let Some(first) = own.insert(pk.clone(), i) {
                        refusals.refuse(
                            FixtureRefusalKind::RepeatedKey,
                            set_name,
                            file,
                            format!(
                                "{ty}[{i}] repeats primary key {pk:?} of {ty}[{first}]; a set \
                                 holds one record per key: merge them or remove one"
                            ),
                        )?;
                    }
                    target.insert(pk, Arc::new(item.clone()));
                }
            }
            inherited.insert(set_name.clone(), records.clone());
        }
    }
    let mut records = inherited.get(name).cloned().unwrap_or_default();

    // Only the leaf set's patches, sorted by entity type (BTreeMap order).
    if let Some(leaf) = raw.get(name) {
        for (ty, patch) in &leaf.patches {
            let Some(pk_field) = schema.primary_key(ty) else {
                continue;
            };
            let file = format!("patches/{ty}.patch.json");
            let target = records.entry(ty.clone()).or_default();
            let mut added: BTreeSet<String> = BTreeSet::new();
            for (i, item) in patch.add.iter().enumerate() {
                let pk = record_key(name, &file, "add", Some(i), item, pk_field)?;
                // `add` appends: a key the set already holds (from its parent, or added above)
                // would replace a record instead, which is `replace`'s to say.
                if target.contains_key(&pk) {
                    let kind = if added.contains(&pk) {
                        FixtureRefusalKind::RepeatedKey
                    } else {
                        FixtureRefusalKind::AddOfHeldKey
                    };
                    refusals.refuse(
                        kind,
                        name,
                        &file,
                        format!(
                            "add[{i}]: the set already holds a `{ty}` record keyed {pk:?}; \
                             `add` appends new records: change it under `replace` instead"
                        ),
                    )?;
                }
                added.insert(pk.clone());
                target.insert(pk, Arc::new(item.clone()));
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
                    *slot = Arc::new(rec.clone());
                }
            }
            for pk in &patch.remove {
                target.shift_remove(pk);
            }
        }
    }

    let types = records.into_iter().filter(|(_, m)| !m.is_empty()).collect();
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// A tree of directory-form sets: (name, parent, record ids of type `item`).
    fn tree(sets: &[(String, Option<String>, Vec<String>)]) -> FixtureTree {
        let mut tree = FixtureTree::default();
        for (name, parent, ids) in sets {
            let items: Vec<Value> = ids
                .iter()
                .map(|id| serde_json::json!({"id": id, "from": name}))
                .collect();
            let mut doc = serde_json::json!({"entities": {"item": items}});
            if let Some(p) = parent {
                doc["parent"] = Value::String(p.clone());
            }
            tree.sets.insert(
                name.clone(),
                FixtureSetFiles {
                    fixture_json: Some(doc.to_string()),
                    ..FixtureSetFiles::default()
                },
            );
        }
        tree
    }

    fn item_schema() -> Schema {
        Schema::build(
            [("item".to_string(), "id".to_string())].into_iter(),
            None,
            &mut Vec::new(),
        )
    }

    /// Every set resolved by walking its whole chain to the root, as before sets shared their
    /// chains' records: the reference the shared resolution must equal.
    fn resolve_by_walks(tree: &FixtureTree, schema: &Schema) -> Result<FixtureSets, EngineError> {
        let mut raw: BTreeMap<String, RawSet> = BTreeMap::new();
        for (name, files) in &tree.sets {
            raw.insert(name.clone(), parse_set(name, files, &mut Vec::new())?);
        }
        let mut sets = BTreeMap::new();
        for name in raw.keys() {
            let data = resolve_set(
                name,
                &raw,
                schema,
                &mut BTreeMap::new(),
                &mut Refusals::Stop,
            )?;
            sets.insert(name.clone(), Arc::new(data));
        }
        Ok(FixtureSets {
            sets,
            default: None,
        })
    }

    fn outcome(r: Result<FixtureSets, EngineError>) -> Result<Vec<(String, SeedData)>, String> {
        r.map(|s| {
            s.sets
                .into_iter()
                .map(|(k, v)| (k, SeedData::clone(&v)))
                .collect()
        })
        .map_err(|e| e.to_string())
    }

    #[test]
    fn a_chain_of_sets_shares_its_records_instead_of_copying_them_per_set() {
        // 2,000 sets, each naming the one before as its parent: resolved by walking every
        // set's chain, this copied each record once per set below it.
        let sets: Vec<(String, Option<String>, Vec<String>)> = (0..2000)
            .map(|i| {
                let parent = (i > 0).then(|| format!("s{:04}", i - 1));
                (format!("s{i:04}"), parent, vec![format!("r{i}")])
            })
            .collect();
        let resolved = resolve(&tree(&sets), &item_schema(), &mut Vec::new()).unwrap();
        let first = &resolved.sets["s0000"].types["item"]["r0"];
        let last = &resolved.sets["s1999"].types["item"];
        assert_eq!(last.len(), 2000);
        assert_eq!(last.keys().next().map(String::as_str), Some("r0"));
        assert_eq!(last.keys().last().map(String::as_str), Some("r1999"));
        // The root's record is one value, shared by every set that inherits it.
        assert!(Arc::ptr_eq(first, &last["r0"]));
        assert!(Arc::ptr_eq(
            &resolved.sets["s1000"].types["item"]["r500"],
            &last["r500"]
        ));
    }

    #[test]
    fn cycles_and_unknown_parents_are_reported_as_a_walk_from_the_first_set_reports_them() {
        let s = |n: &str, p: Option<&str>| (n.to_string(), p.map(str::to_string), vec![]);
        // `a` is resolved first and walks into the loop b → c → b.
        let looped = tree(&[s("a", Some("b")), s("b", Some("c")), s("c", Some("b"))]);
        let err = resolve(&looped, &item_schema(), &mut Vec::new()).unwrap_err();
        assert_eq!(
            err.to_string(),
            resolve_by_walks(&looped, &item_schema())
                .unwrap_err()
                .to_string()
        );
        assert!(err.to_string().contains("parent chain loops back to `b`"));
        // A set below a resolved one names a parent that does not exist further down.
        let unknown = tree(&[s("a", None), s("b", Some("a")), s("c", Some("nope"))]);
        let err = resolve(&unknown, &item_schema(), &mut Vec::new()).unwrap_err();
        assert!(
            err.to_string()
                .contains("parent `nope` names no fixture set")
        );
    }

    #[test]
    fn parent_loops_name_each_loop_once_as_seeding_resolves_the_references() {
        let s = |n: &str, p: Option<&str>| (n.to_string(), p.map(str::to_string), vec![]);
        let looped = tree(&[s("a", Some("b")), s("b", Some("c")), s("c", Some("b"))]);
        assert_eq!(
            looped.parent_loops(),
            vec![vec!["b".to_string(), "c".to_string()]]
        );
        // A namespaced reference resolves exactly first, then by its bare name.
        let across = tree(&[
            s("default", Some("promos:vip")),
            s("promos:vip", Some("shop:default")),
            s("vip", None),
        ]);
        assert_eq!(
            across.parent_loops(),
            vec![vec!["default".to_string(), "promos:vip".to_string()]]
        );
        let own = tree(&[s("a", Some("a"))]);
        assert_eq!(own.parent_loops(), vec![vec!["a".to_string()]]);
        // Unknown parents and chains that end are no loop.
        let fine = tree(&[s("a", None), s("b", Some("a")), s("c", Some("nope"))]);
        assert!(fine.parent_loops().is_empty());
    }

    proptest::proptest! {
        /// Sets with random parents (chains, shared ancestors, loops, unknown names,
        /// overriding records): sharing resolved chains gives every set the records, and the
        /// first error, that walking each set's chain to its root gives.
        #[test]
        fn shared_chains_resolve_as_walking_every_chain(
            spec in proptest::collection::vec(
                (proptest::option::of(0usize..12), proptest::collection::vec(0u8..4, 0..3)),
                1..10,
            )
        ) {
            let sets: Vec<(String, Option<String>, Vec<String>)> = spec
                .iter()
                .enumerate()
                .map(|(i, (parent, ids))| {
                    // Parents past the last set name no set.
                    let parent = parent.map(|p| format!("s{p}"));
                    let ids = ids.iter().map(|k| format!("r{k}")).collect();
                    (format!("s{i}"), parent, ids)
                })
                .collect();
            let t = tree(&sets);
            let schema = item_schema();
            let shared = outcome(resolve(&t, &schema, &mut Vec::new()));
            let walked = outcome(resolve_by_walks(&t, &schema));
            proptest::prop_assert_eq!(shared, walked);
        }
    }

    /// Seeding stops at the first record it refuses; resolving for a lint notes each one, keeps
    /// the later record and goes on, with the messages seeding gives.
    #[test]
    fn collecting_resolution_notes_every_refusal_seeding_stops_at() {
        let mut t = tree(&[
            (
                "base".into(),
                None,
                vec!["x".into(), "y".into(), "x".into()],
            ),
            ("leaf".into(), Some("base".into()), vec![]),
        ]);
        t.sets.get_mut("leaf").unwrap().patches.insert(
            "item".into(),
            r#"{"add":[{"id":"y"},{"id":"z"},{"id":"z","n":2}]}"#.into(),
        );
        let types = || [("item".to_string(), "id".to_string())].into_iter();
        let stopped = t.resolve(types(), None).unwrap_err().to_string();
        let (sets, refusals) = t.resolve_collecting(types(), None).unwrap();
        let got: Vec<(FixtureRefusalKind, &str, &str)> = refusals
            .iter()
            .map(|r| (r.kind, r.set.as_str(), r.file.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (FixtureRefusalKind::RepeatedKey, "base", "fixture.json"),
                (
                    FixtureRefusalKind::AddOfHeldKey,
                    "leaf",
                    "patches/item.patch.json"
                ),
                (
                    FixtureRefusalKind::RepeatedKey,
                    "leaf",
                    "patches/item.patch.json"
                ),
            ]
        );
        assert!(stopped.contains(&refusals[0].message), "{stopped}");
        let leaf: Vec<&str> = sets["leaf"]["item"]
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(leaf, ["x", "y", "z"]);
        assert_eq!(
            sets["leaf"]["item"][2].1["n"], 2,
            "the later record is kept"
        );
    }
}
