//! Tagged unions: heterogeneous collections modelled per discriminator value.
//!
//! A list of objects of several types (a notification feed holding `mention`, `follow` and
//! `poll` entries) clustered by key set alone gets one representative per *key set*: a type
//! whose optional field is present in some elements and absent in others is split in two, and
//! past [`crate::unify::MAX_REPRESENTATIVES`] key sets a rare type is dropped entirely. When the
//! elements carry a *discriminator* (a string field naming their type), [`detect`] finds it and
//! the list is modelled with one representative per tag value instead, so every type keeps its
//! own fields (the rare ones as optional fields of their own type).
//!
//! Detection is decided by the data, never by a key's name alone. A key is a discriminator when:
//! - every element is an object holding it as a string;
//! - its values split the elements into 2..=[`MAX_TAGS`] groups, and at least one value repeats
//!   (a key whose value is unique per element is an identifier, not a tag);
//! - every value is a short token (at most [`MAX_TAG_LEN`] characters, no whitespace): a type
//!   name, not prose;
//! - the groups have different key sets: at least one other key is *explained* by the tag (held
//!   by every element of some groups and by no element of the others);
//! - and, unless the key has a conventional tag name ([`CONVENTIONAL_KEYS`]), the recordings
//!   show it within one answer: some recorded array holds two elements of different tags, each
//!   tag seen at least twice in all, one holding an explained key the other lacks. Key sets
//!   that differ only *between* answers may be drift (an API version adding a field), which an
//!   attribute such as a region or a label can correlate with by chance; a key named like a
//!   type tag whose values explain the key sets is taken on that evidence (a feed filtered to
//!   one type per request shows its types only between answers).
//!
//! Among several such keys the one explaining the most keys wins; ties go to a conventional tag
//! name (in [`CONVENTIONAL_KEYS`] order), then to fewer groups, then to the smaller key.
//!
//! At the top level ([`detect_top_level`], [`variant_union`]) each answer is a recording of its
//! own, so key sets can only differ *between* answers, and between recordings an API may have
//! changed: a field added in a later version splits the answers by time, and an attribute
//! recorded once per version (a database's plan `type`) then seems to decide the key set. A
//! key's name alone is no evidence there. A key passing the first four tests above is a top-level
//! discriminator when
//! - no resource changes tag: the answers about one resource (those holding the value of their
//!   request's last path parameter in a top-level field) all carry one tag: a record's type is
//!   fixed, a plan or a state is not;
//! - and either one recording *session* holds two answers of different tags, each tag seen at
//!   least twice, one holding an explained key the other lacks (a session runs against one
//!   version of the API, so within it a difference is the type's, not drift's); or the key has
//!   a conventional tag name and two tags, each seen at least twice, each hold an explained key
//!   the other lacks (each type has fields of its own: drift adds or drops fields, so the key
//!   sets of answers split by drift are nested, newer ones a superset of older ones).
//!
//! The per-type templates (with how many answers each saw) are recorded on the variant
//! ([`wraith_model::Variant::union`]): the engine renders the template of the answer's type, and
//! `wraith check`'s `[diff] split_variants` judges an answer under the recording's type.
//!
//! What it is not: a schema language. The model only records the discriminator's key on the
//! `List` node ([`wraith_model::ArrayNode::List`]); each tag's schema is its representative.

use indexmap::IndexMap;
use serde_json::Value;
use wraith_model::{Node, VariantUnion};

use crate::unify::Unifier;

/// Most tag values a discriminator may take: more distinct values than this is a free-form
/// field, not a type name.
pub const MAX_TAGS: usize = 16;

/// Longest tag value: longer strings are prose or data, not type names.
pub const MAX_TAG_LEN: usize = 64;

/// Names providers commonly give a type tag. They only rank keys the data already qualifies.
pub const CONVENTIONAL_KEYS: [&str; 6] = ["type", "object", "kind", "__typename", "@type", "_type"];

/// A discriminator found in a collection of elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discriminator<'v> {
    /// The tag key.
    pub key: String,
    /// Each tag value with the indices of the elements carrying it, tags first seen first,
    /// indices in element order.
    pub groups: Vec<(&'v str, Vec<usize>)>,
}

/// A key that passes every test but the evidence test (see the module documentation).
struct Candidate<'v> {
    key: &'v str,
    groups: Vec<(&'v str, Vec<usize>)>,
    explained: Vec<&'v str>,
    /// Position in [`CONVENTIONAL_KEYS`], or its length for any other name.
    rank: usize,
}

impl Candidate<'_> {
    fn conventional(&self) -> bool {
        self.rank < CONVENTIONAL_KEYS.len()
    }
}

/// Every key of `objects` that could be a discriminator: held by all as a short token string,
/// splitting them into 2..=[`MAX_TAGS`] groups with a value repeated, and explaining some key.
/// Keys in the first object's order.
fn candidates<'v>(objects: &[&'v serde_json::Map<String, Value>]) -> Vec<Candidate<'v>> {
    let n = objects.len();
    let Some(first) = objects.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for key in first.keys() {
        let Some(groups) = group_by(objects, key) else {
            continue;
        };
        if groups.len() < 2 || groups.len() > MAX_TAGS || groups.len() >= n {
            continue;
        }
        let explained = explained_keys(objects, key, &groups);
        if explained.is_empty() {
            continue;
        }
        let rank = CONVENTIONAL_KEYS
            .iter()
            .position(|k| k == key)
            .unwrap_or(CONVENTIONAL_KEYS.len());
        out.push(Candidate {
            key: key.as_str(),
            groups,
            explained,
            rank,
        });
    }
    out
}

/// The best of the qualified candidates: most explained keys, then best name rank, then fewest
/// groups, then the smaller key (so the choice never depends on key order).
fn best<'v>(qualified: impl Iterator<Item = Candidate<'v>>) -> Option<Discriminator<'v>> {
    let mut best: Option<((usize, usize, usize), Candidate<'v>)> = None;
    for c in qualified {
        // Larger is better.
        let score = (
            c.explained.len(),
            CONVENTIONAL_KEYS.len() - c.rank,
            MAX_TAGS - c.groups.len(),
        );
        if best
            .as_ref()
            .is_none_or(|(b, d)| score > *b || (score == *b && c.key < d.key))
        {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| Discriminator {
        key: c.key.to_string(),
        groups: c.groups,
    })
}

/// The discriminator of `elements` (each with the index of the recorded array it came from),
/// if the data shows one (see the module documentation).
pub fn detect<'v>(elements: &[(&'v Value, usize)]) -> Option<Discriminator<'v>> {
    if elements.len() < 3 {
        return None;
    }
    let objects: Vec<&serde_json::Map<String, Value>> = elements
        .iter()
        .map(|(v, _)| v.as_object())
        .collect::<Option<_>>()?;
    let arrays: Vec<usize> = elements.iter().map(|(_, a)| *a).collect();
    best(candidates(&objects).into_iter().filter(|c| {
        c.conventional() || shown_within_one_answer(&objects, &arrays, &c.groups, &c.explained)
    }))
}

/// One recorded top-level answer, as [`detect_top_level`] weighs it.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'v> {
    pub value: &'v Value,
    /// The recording session it was answered in (`None` when unknown: a session of its own).
    pub session: Option<&'v str>,
    /// The value of the request's last path parameter (the resource the path names), if any.
    pub resource: Option<&'v str>,
}

/// The discriminator of a variant's top-level answers, if the data shows one (see the module
/// documentation, "At the top level").
pub fn detect_top_level<'v>(answers: &[Answer<'v>]) -> Option<Discriminator<'v>> {
    if answers.len() < 3 {
        return None;
    }
    let objects: Vec<&serde_json::Map<String, Value>> = answers
        .iter()
        .map(|a| a.value.as_object())
        .collect::<Option<_>>()?;
    // Sessions as indices, first seen first; an unknown session is one of its own.
    let mut sessions: IndexMap<Option<&str>, ()> = IndexMap::new();
    let session_of: Vec<usize> = answers
        .iter()
        .enumerate()
        .map(|(i, a)| match a.session {
            Some(_) => sessions.insert_full(a.session, ()).0,
            None => answers.len() + i,
        })
        .collect();
    best(candidates(&objects).into_iter().filter(|c| {
        !retagged_resource(answers, &objects, &c.groups)
            && (shown_within_one_answer(&objects, &session_of, &c.groups, &c.explained)
                || (c.conventional() && types_own_fields(&objects, &c.groups, &c.explained)))
    }))
}

/// The per-type templates of a variant whose answers (`vals`, each with the index of its
/// observation's request context in `unifier.ctxs`) are a tagged union at the top level, if
/// they are one ([`detect_top_level`]).
pub fn variant_union(unifier: &Unifier<'_>, vals: &[(&Value, usize)]) -> Option<VariantUnion> {
    let answers: Vec<Answer<'_>> = vals
        .iter()
        .map(|(v, k)| {
            let ctx = unifier.ctxs.get(*k);
            Answer {
                value: v,
                session: ctx.map(|c| c.session),
                resource: ctx.and_then(|c| c.params.last()).map(|(_, v)| v.as_str()),
            }
        })
        .collect();
    let found = detect_top_level(&answers)?;
    // Every answer's evidence, for the request-driven values a type's fewer answers miss.
    let merged = unifier.unify(vals, None, "");
    let templates = found
        .groups
        .iter()
        .map(|(tag, members)| {
            let group: Vec<(&Value, usize)> = members.iter().map(|&i| vals[i]).collect();
            let mut template = unifier.unify(&group, None, "");
            adopt_dynamic(&mut template, &merged);
            hold_tag(&mut template, &found.key, tag);
            template
        })
        .collect();
    let counts = found
        .groups
        .iter()
        .map(|(_, members)| members.len() as u64)
        .collect();
    Some(VariantUnion {
        discriminator: found.key,
        templates,
        counts,
    })
}

/// Whether one resource was answered under two tags: a record's type never changes, an
/// attribute (a plan, a state) may. An answer is about the resource its request's last path
/// parameter names when it holds that value in a top-level field (`{"id": 7, ...}` for
/// `/things/7`), so a parent's id (`/accounts/1/note`) is not taken for the answer's own.
fn retagged_resource(
    answers: &[Answer<'_>],
    objects: &[&serde_json::Map<String, Value>],
    groups: &[(&str, Vec<usize>)],
) -> bool {
    let mut tag_of: IndexMap<&str, usize> = IndexMap::new();
    for (g, (_, members)) in groups.iter().enumerate() {
        for &i in members {
            let Some(r) = answers[i].resource else {
                continue;
            };
            let names_it = objects[i].values().any(|v| match v {
                Value::String(s) => s == r,
                Value::Number(n) => n.to_string() == r,
                _ => false,
            });
            if names_it && *tag_of.entry(r).or_insert(g) != g {
                return true;
            }
        }
    }
    false
}

/// Whether two tags, each seen at least twice, each hold an explained key the other lacks:
/// each type has fields of its own. API drift adds (or drops) fields from one version to the
/// next, so answers split by drift have nested key sets (the newer ones a superset of the older
/// ones), which an attribute recorded once per version can correlate with by chance.
fn types_own_fields(
    objects: &[&serde_json::Map<String, Value>],
    groups: &[(&str, Vec<usize>)],
    explained: &[&str],
) -> bool {
    // A group's explained keys are held by all its members or by none: its first stands for all.
    let holds: Vec<Vec<bool>> = groups
        .iter()
        .filter(|(_, members)| members.len() >= 2)
        .map(|(_, members)| {
            explained
                .iter()
                .map(|k| objects[members[0]].contains_key(*k))
                .collect()
        })
        .collect();
    holds.iter().enumerate().any(|(x, a)| {
        holds[x + 1..].iter().any(|b| {
            let a_only = a.iter().zip(b).any(|(p, q)| *p && !*q);
            let b_only = a.iter().zip(b).any(|(p, q)| !*p && *q);
            a_only && b_only
        })
    })
}

/// Where every answer of the variant shows a value the request or the twin makes (an echo of
/// a request field, a fresh id, the clock, a counter) and a type's own answers show less (a
/// reply's `in_reply_to_id` echoed by all posts, but constant `null` among the few of one
/// visibility), the type's template takes the better-evidenced hole: it held for every answer,
/// this type's included. Likewise an observed value every answer showed a request field to
/// decide (`keyed`, a post's `spoiler_text` by the warning sent) keys the type's observed hole
/// there, which its own few answers could not (request keying needs more carriers). Only at
/// keys the type has, so its key set stays its own.
fn adopt_dynamic(template: &mut Node, merged: &Node) {
    fn dynamic(n: &Node) -> bool {
        matches!(
            n,
            Node::Hole(h) if !matches!(h.source, wraith_model::HoleKind::Observed)
        )
    }
    let (Node::Object { fields }, Node::Object { fields: all }) = (template, merged) else {
        return;
    };
    for f in fields.iter_mut() {
        let Some(m) = all.iter().find(|m| m.key == f.key) else {
            continue;
        };
        if dynamic(&m.value) && !dynamic(&f.value) {
            f.value = m.value.clone();
        } else if let (Node::Hole(own), Node::Hole(every)) = (&mut f.value, &m.value) {
            if matches!(own.source, wraith_model::HoleKind::Observed)
                && own.keyed.is_none()
                && every.keyed.is_some()
            {
                own.keyed = every.keyed.clone();
            }
        } else {
            adopt_dynamic(&mut f.value, &m.value);
        }
    }
}

/// Make the field `key` of a per-type template the constant `tag`: the tag names the type,
/// it is never a request echo, so the judge and a reader find each type by it.
pub(crate) fn hold_tag(template: &mut Node, key: &str, tag: &str) {
    if let Node::Object { fields } = template {
        for f in fields.iter_mut().filter(|f| f.key == key) {
            f.value = Node::Const {
                value: Value::String(tag.to_string()),
            };
        }
    }
}

/// The elements grouped by their string value at `key` (tags first seen first), or `None` when
/// some element lacks the key or holds another type there.
fn group_by<'v>(
    objects: &[&'v serde_json::Map<String, Value>],
    key: &str,
) -> Option<Vec<(&'v str, Vec<usize>)>> {
    let mut groups: IndexMap<&'v str, Vec<usize>> = IndexMap::new();
    for (i, o) in objects.iter().enumerate() {
        let tag = o.get(key)?.as_str()?;
        if tag.is_empty() || tag.chars().count() > MAX_TAG_LEN || tag.contains(char::is_whitespace)
        {
            return None;
        }
        groups.entry(tag).or_default().push(i);
        if groups.len() > MAX_TAGS {
            return None;
        }
    }
    Some(groups.into_iter().collect())
}

/// Keys other than `tag_key` whose presence the tag decides: in each group held by every
/// element or by none, and not held by every group.
fn explained_keys<'v>(
    objects: &[&'v serde_json::Map<String, Value>],
    tag_key: &str,
    groups: &[(&str, Vec<usize>)],
) -> Vec<&'v str> {
    let mut keys: IndexMap<&'v str, ()> = IndexMap::new();
    for o in objects {
        for k in o.keys() {
            keys.insert(k.as_str(), ());
        }
    }
    keys.keys()
        .filter(|k| **k != tag_key)
        .filter(|k| {
            let mut held_somewhere = false;
            let mut missing_somewhere = false;
            for (_, members) in groups {
                let holding = members
                    .iter()
                    .filter(|&&i| objects[i].contains_key(**k))
                    .count();
                if holding == members.len() {
                    held_somewhere = true;
                } else if holding == 0 {
                    missing_somewhere = true;
                } else {
                    return false;
                }
            }
            held_somewhere && missing_somewhere
        })
        .copied()
        .collect()
}

/// Whether one recorded array holds two elements of different tags, each tag seen at least
/// twice, one holding an `explained` key the other lacks (see the module documentation).
fn shown_within_one_answer(
    objects: &[&serde_json::Map<String, Value>],
    arrays: &[usize],
    groups: &[(&str, Vec<usize>)],
    explained: &[&str],
) -> bool {
    // The group of each element, for the tags seen at least twice.
    let mut group_of: Vec<Option<usize>> = vec![None; objects.len()];
    for (g, (_, members)) in groups.iter().enumerate() {
        if members.len() >= 2 {
            for &i in members {
                group_of[i] = Some(g);
            }
        }
    }
    // Per array: the first element of each such group (a group's elements share the explained
    // keys' presence, so one stands for all).
    let mut firsts: IndexMap<usize, IndexMap<usize, usize>> = IndexMap::new();
    for (i, g) in group_of.iter().enumerate() {
        if let Some(g) = g {
            firsts.entry(arrays[i]).or_default().entry(*g).or_insert(i);
        }
    }
    firsts.values().any(|by_group| {
        let reps: Vec<usize> = by_group.values().copied().collect();
        reps.iter().enumerate().any(|(x, &i)| {
            reps[x + 1..].iter().any(|&j| {
                explained
                    .iter()
                    .any(|k| objects[i].contains_key(*k) != objects[j].contains_key(*k))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A discriminator's key and its groups (tag, element indices), owned.
    type Found = (String, Vec<(String, Vec<usize>)>);

    /// Detection over `values`, all from one recorded array.
    fn detect_in(values: &[Value]) -> Option<Found> {
        let refs: Vec<(&Value, usize)> = values.iter().map(|v| (v, 0)).collect();
        detect(&refs).map(|d| {
            (
                d.key,
                d.groups
                    .into_iter()
                    .map(|(t, m)| (t.to_string(), m))
                    .collect(),
            )
        })
    }

    fn feed() -> Vec<Value> {
        vec![
            json!({"id": "1", "type": "mention", "status": {"id": "s1"}, "account": "a"}),
            json!({"id": "2", "type": "follow", "account": "b"}),
            json!({"id": "3", "type": "mention", "status": {"id": "s2"}, "account": "c"}),
            json!({"id": "4", "type": "poll", "status": {"id": "s3"}, "poll": {"votes": 3}, "account": "d"}),
            json!({"id": "5", "type": "follow", "account": "e"}),
        ]
    }

    #[test]
    fn a_string_key_that_decides_the_key_sets_is_the_discriminator() {
        let (key, groups) = detect_in(&feed()).expect("a union");
        assert_eq!(key, "type");
        assert_eq!(
            groups,
            vec![
                ("mention".to_string(), vec![0, 2]),
                ("follow".to_string(), vec![1, 4]),
                ("poll".to_string(), vec![3]),
            ]
        );
    }

    #[test]
    fn a_unique_per_element_key_is_an_id_not_a_tag() {
        // `code` splits the key sets perfectly, but no value repeats: an identifier.
        let values = vec![
            json!({"code": "a1", "x": 1}),
            json!({"code": "b2", "y": 1}),
            json!({"code": "c3", "z": 1}),
        ];
        assert_eq!(detect_in(&values), None);
    }

    #[test]
    fn a_key_that_explains_no_key_set_is_not_a_tag() {
        // `visibility` repeats but every element has the same keys: an enum, not a type.
        let values = vec![
            json!({"id": "1", "visibility": "public"}),
            json!({"id": "2", "visibility": "private"}),
            json!({"id": "3", "visibility": "public"}),
        ];
        assert_eq!(detect_in(&values), None);
    }

    #[test]
    fn the_data_decides_over_a_conventional_name() {
        // `type` is present but explains nothing; `shape` explains the key sets.
        let values = vec![
            json!({"type": "t", "shape": "circle", "radius": 1}),
            json!({"type": "t", "shape": "square", "side": 2}),
            json!({"type": "u", "shape": "circle", "radius": 3}),
            json!({"type": "u", "shape": "square", "side": 4}),
        ];
        let (key, _) = detect_in(&values).expect("a union");
        assert_eq!(key, "shape");
    }

    #[test]
    fn key_sets_that_differ_only_between_answers_are_drift_not_a_union() {
        // Two answers: the later API added `encryption`, and each answer's volumes happen to
        // sit in one region. Within either answer the key sets agree.
        let older = [
            json!({"id": 1, "region": "us-east"}),
            json!({"id": 2, "region": "us-east"}),
        ];
        let newer = [
            json!({"id": 3, "region": "eu-west", "encryption": "enabled"}),
            json!({"id": 4, "region": "eu-west", "encryption": "enabled"}),
        ];
        let refs: Vec<(&Value, usize)> = older
            .iter()
            .map(|v| (v, 0))
            .chain(newer.iter().map(|v| (v, 1)))
            .collect();
        assert_eq!(detect(&refs), None);
        // Under a conventional tag name the same evidence between answers is enough.
        let typed: Vec<Value> = older
            .iter()
            .chain(newer.iter())
            .map(|v| {
                let mut v = v.clone();
                if let Some(m) = v.as_object_mut()
                    && let Some(r) = m.remove("region")
                {
                    m.insert("type".into(), r);
                }
                v
            })
            .collect();
        let typed_refs: Vec<(&Value, usize)> =
            typed.iter().enumerate().map(|(i, v)| (v, i / 2)).collect();
        assert_eq!(detect(&typed_refs).map(|d| d.key), Some("type".to_string()));
        // The same elements in one answer show the region deciding the key set.
        let one: Vec<(&Value, usize)> = refs.iter().map(|(v, _)| (*v, 0)).collect();
        assert_eq!(detect(&one).map(|d| d.key), Some("region".to_string()));
    }

    #[test]
    fn prose_values_are_no_tags() {
        let values = vec![
            json!({"content": "<p>hello there</p>", "poll": {}}),
            json!({"content": "<p>hello there</p>", "poll": {}}),
            json!({"content": "<p>bye now</p>"}),
            json!({"content": "<p>bye now</p>"}),
        ];
        assert_eq!(detect_in(&values), None);
    }

    #[test]
    fn a_variant_of_typed_answers_gets_one_template_per_type() {
        let answers = [
            json!({"id": "it_1", "type": "book", "title": "A", "pages": 100}),
            json!({"id": "it_2", "type": "song", "title": "B", "seconds": 180}),
            json!({"id": "it_3", "type": "book", "title": "C", "pages": 200}),
            json!({"id": "it_4", "type": "song", "title": "D", "seconds": 240}),
        ];
        let vals: Vec<(&Value, usize)> = answers.iter().enumerate().map(|(i, v)| (v, i)).collect();
        let u = Unifier {
            ctxs: &[],
            counter_prefix: "r".into(),
            keying: &crate::request_keying::RouteKeying::AUTO,
            list_items: None,
        };
        let union = variant_union(&u, &vals).expect("a union");
        assert_eq!(union.discriminator, "type");
        let tags: Vec<Option<&str>> = union
            .templates
            .iter()
            .map(|t| wraith_model::ArrayNode::tag_of(t, "type"))
            .collect();
        assert_eq!(tags, [Some("book"), Some("song")]);
        let keys = |t: &Node| -> Vec<String> {
            match t {
                Node::Object { fields } => fields.iter().map(|f| f.key.clone()).collect(),
                _ => Vec::new(),
            }
        };
        assert_eq!(keys(&union.templates[0]), ["id", "type", "title", "pages"]);
        assert_eq!(
            keys(&union.templates[1]),
            ["id", "type", "title", "seconds"]
        );
        assert_eq!(union.counts, [2, 2]);
        // Under a key not named like a tag, answers of unknown sessions (each its own
        // recording) never show a difference within one session: no union.
        let renamed: Vec<Value> = answers
            .iter()
            .map(|v| {
                let mut v = v.clone();
                if let Some(m) = v.as_object_mut()
                    && let Some(t) = m.remove("type")
                {
                    m.insert("format".into(), t);
                }
                v
            })
            .collect();
        let vals: Vec<(&Value, usize)> = renamed.iter().enumerate().map(|(i, v)| (v, i)).collect();
        assert_eq!(variant_union(&u, &vals), None);
    }

    /// Top-level answers from (value, session, resource) triples.
    fn top(answers: &[(Value, &'static str, Option<&'static str>)]) -> Option<Found> {
        let refs: Vec<Answer<'_>> = answers
            .iter()
            .map(|(v, s, r)| Answer {
                value: v,
                session: Some(s),
                resource: *r,
            })
            .collect();
        detect_top_level(&refs).map(|d| {
            (
                d.key,
                d.groups
                    .into_iter()
                    .map(|(t, m)| (t.to_string(), m))
                    .collect(),
            )
        })
    }

    /// Database answers: older sessions of one plan lack `engine_config`, which the API added
    /// later, and the later sessions happen to use another plan.
    fn drifted_databases() -> Vec<(Value, &'static str, Option<&'static str>)> {
        vec![
            (
                json!({"id": 1, "type": "small", "status": "active"}),
                "old_a",
                Some("1"),
            ),
            (
                json!({"id": 1, "type": "small", "status": "active"}),
                "old_a",
                Some("1"),
            ),
            (
                json!({"id": 2, "type": "small", "status": "resizing"}),
                "old_b",
                Some("2"),
            ),
            (
                json!({"id": 3, "type": "large", "status": "active", "engine_config": {}}),
                "new_a",
                Some("3"),
            ),
            (
                json!({"id": 3, "type": "large", "status": "active", "engine_config": {}}),
                "new_a",
                Some("3"),
            ),
            (
                json!({"id": 4, "type": "large", "status": "active", "engine_config": {}}),
                "new_b",
                Some("4"),
            ),
        ]
    }

    #[test]
    fn a_field_added_between_recordings_of_one_plan_each_is_drift_not_a_union() {
        // `type` explains `engine_config` perfectly, but only between sessions and with nested
        // key sets: what an API adding a field looks like.
        assert_eq!(top(&drifted_databases()), None);
    }

    #[test]
    fn a_field_appearing_in_later_answers_of_every_tag_is_no_union() {
        let answers = vec![
            (json!({"id": 1, "type": "small"}), "s1", None),
            (json!({"id": 2, "type": "large"}), "s1", None),
            (
                json!({"id": 3, "type": "small", "engine_config": {}}),
                "s2",
                None,
            ),
            (
                json!({"id": 4, "type": "large", "engine_config": {}}),
                "s2",
                None,
            ),
        ];
        assert_eq!(top(&answers), None);
    }

    #[test]
    fn types_with_fields_of_their_own_are_a_top_level_union_across_sessions() {
        let answers = vec![
            (
                json!({"id": "7", "type": "added", "collection": {}}),
                "a",
                Some("7"),
            ),
            (
                json!({"id": "7", "type": "added", "collection": {}}),
                "a",
                Some("7"),
            ),
            (
                json!({"id": "20", "type": "mention", "status": {}}),
                "b",
                Some("20"),
            ),
            (
                json!({"id": "21", "type": "mention", "status": {}}),
                "c",
                Some("21"),
            ),
        ];
        let (key, groups) = top(&answers).expect("a union");
        assert_eq!(key, "type");
        assert_eq!(
            groups,
            vec![
                ("added".to_string(), vec![0, 1]),
                ("mention".to_string(), vec![2, 3])
            ]
        );
        // The same answers under a key not named like a tag: between sessions only, no union.
        let renamed: Vec<(Value, &'static str, Option<&'static str>)> = answers
            .iter()
            .map(|(v, s, r)| {
                let mut v = v.clone();
                if let Some(m) = v.as_object_mut()
                    && let Some(t) = m.remove("type")
                {
                    m.insert("category".into(), t);
                }
                (v, *s, *r)
            })
            .collect();
        assert_eq!(top(&renamed), None);
    }

    #[test]
    fn nested_key_sets_within_one_session_are_a_union_under_any_name() {
        // One session answered both kinds, so one API version: the difference is the type's.
        let answers = vec![
            (
                json!({"id": 1, "kind_of": "follow", "account": {}}),
                "s",
                None,
            ),
            (
                json!({"id": 2, "kind_of": "mention", "account": {}, "status": {}}),
                "s",
                None,
            ),
            (
                json!({"id": 3, "kind_of": "follow", "account": {}}),
                "s",
                None,
            ),
            (
                json!({"id": 4, "kind_of": "mention", "account": {}, "status": {}}),
                "t",
                None,
            ),
        ];
        assert_eq!(top(&answers).map(|f| f.0), Some("kind_of".to_string()));
        // The drifted databases recorded in one session would be a union too: the evidence is
        // the session, not the shape.
        let one: Vec<_> = drifted_databases()
            .into_iter()
            .map(|(v, _, r)| (v, "one", r))
            .collect();
        assert_eq!(top(&one).map(|f| f.0), Some("type".to_string()));
    }

    #[test]
    fn a_resource_answered_under_two_tags_is_an_attribute_not_a_type() {
        // Resource 7 was a book, then a song: a plan or a state changes, a type does not.
        let answers = vec![
            (json!({"id": 7, "type": "book", "pages": 1}), "s", Some("7")),
            (json!({"id": 8, "type": "book", "pages": 2}), "s", Some("8")),
            (
                json!({"id": 7, "type": "song", "seconds": 3}),
                "s",
                Some("7"),
            ),
            (
                json!({"id": 9, "type": "song", "seconds": 4}),
                "s",
                Some("9"),
            ),
        ];
        assert_eq!(top(&answers), None);
        // A path parameter the answer does not hold names a parent, not the answer.
        let parented: Vec<_> = answers
            .into_iter()
            .map(|(v, s, _)| (v, s, Some("parent-1")))
            .collect();
        assert_eq!(top(&parented).map(|f| f.0), Some("type".to_string()));
    }

    #[test]
    fn top_level_detection_is_deterministic() {
        let answers = drifted_databases()
            .into_iter()
            .map(|(v, _, r)| (v, "one", r))
            .collect::<Vec<_>>();
        let first = top(&answers);
        assert!(first.is_some());
        for _ in 0..10 {
            assert_eq!(top(&answers), first);
        }
    }

    #[test]
    fn a_type_takes_every_answers_request_driven_hole_at_its_own_keys_only() {
        use wraith_model::{EchoSource, Field, HoleKind, JsonType};
        let field = |key: &str, value: Node| Field {
            key: key.into(),
            value,
            optional: false,
            present_ratio_bp: 10_000,
        };
        let hole = |source: HoleKind| Node::hole(source, JsonType::String, vec![json!("x")], 9_000);
        let echo = || {
            hole(HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/reply_to".into(),
                },
            })
        };
        let null = || Node::Const { value: Value::Null };
        let merged = Node::Object {
            fields: vec![
                field("reply_to", echo()),
                field("title", hole(HoleKind::Observed)),
                field(
                    "owner",
                    Node::Object {
                        fields: vec![field("ref", echo())],
                    },
                ),
                field("pages", echo()),
            ],
        };
        let mut song = Node::Object {
            fields: vec![
                field("reply_to", null()),
                field("title", Node::Const { value: json!("B") }),
                field(
                    "owner",
                    Node::Object {
                        fields: vec![field("ref", null())],
                    },
                ),
                field("seconds", null()),
            ],
        };
        adopt_dynamic(&mut song, &merged);
        let Node::Object { fields } = &song else {
            panic!("an object");
        };
        let keys: Vec<&str> = fields.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            ["reply_to", "title", "owner", "seconds"],
            "its own keys"
        );
        assert_eq!(fields[0].value, echo(), "the echo every answer showed");
        assert_eq!(
            fields[1].value,
            Node::Const { value: json!("B") },
            "observed stays the type's"
        );
        assert_eq!(
            fields[2].value,
            Node::Object {
                fields: vec![field("ref", echo())]
            }
        );
        assert_eq!(fields[3].value, null());
    }

    #[test]
    fn detection_is_deterministic() {
        let values = feed();
        let refs: Vec<(&Value, usize)> = values.iter().map(|v| (v, 0)).collect();
        let first = detect(&refs);
        for _ in 0..10 {
            assert_eq!(detect(&refs), first);
        }
    }

    #[test]
    fn non_objects_or_a_missing_tag_are_no_union() {
        let mut values = feed();
        values.push(json!("text"));
        assert_eq!(detect_in(&values), None);
        let mut values = feed();
        values.push(json!({"id": "6", "account": "f"}));
        assert_eq!(detect_in(&values), None);
    }

    #[test]
    fn detection_does_not_depend_on_key_order_within_elements() {
        let a = detect_in(&feed());
        let reordered: Vec<Value> = feed()
            .into_iter()
            .map(|v| {
                let mut m: Vec<(String, Value)> = v
                    .as_object()
                    .map(|o| o.clone().into_iter().collect())
                    .unwrap_or_default();
                m.reverse();
                Value::Object(m.into_iter().collect())
            })
            .collect();
        assert_eq!(a, detect_in(&reordered));
    }
}
