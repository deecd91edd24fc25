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
//! The same detection runs over a variant's top-level answers ([`variant_union`]), where only a
//! conventionally named key can qualify (each answer is its own recording, so nothing can show
//! a difference within one answer); the per-type templates are recorded on the variant
//! ([`wraith_model::Variant::union`]) for `wraith check`'s `[diff] split_variants`.
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

/// The discriminator of `elements` (each with the index of the recorded array it came from),
/// if the data shows one (see the module documentation).
pub fn detect<'v>(elements: &[(&'v Value, usize)]) -> Option<Discriminator<'v>> {
    let n = elements.len();
    if n < 3 {
        return None;
    }
    let objects: Vec<&serde_json::Map<String, Value>> = elements
        .iter()
        .map(|(v, _)| v.as_object())
        .collect::<Option<_>>()?;
    let arrays: Vec<usize> = elements.iter().map(|(_, a)| *a).collect();
    let first = objects.first()?;
    // (explained keys, name rank, groups, candidate)
    let mut best: Option<((usize, usize, usize), Discriminator<'v>)> = None;
    for key in first.keys() {
        let Some(groups) = group_by(&objects, key) else {
            continue;
        };
        if groups.len() < 2 || groups.len() > MAX_TAGS || groups.len() >= n {
            continue;
        }
        let explained = explained_keys(&objects, key, &groups);
        let rank = CONVENTIONAL_KEYS
            .iter()
            .position(|k| k == key)
            .unwrap_or(CONVENTIONAL_KEYS.len());
        let conventional = rank < CONVENTIONAL_KEYS.len();
        if explained.is_empty()
            || !(conventional || shown_within_one_answer(&objects, &arrays, &groups, &explained))
        {
            continue;
        }
        let explained = explained.len();
        // Larger is better: most explained keys, then best name rank, then fewest groups.
        let score = (
            explained,
            CONVENTIONAL_KEYS.len() - rank,
            MAX_TAGS - groups.len(),
        );
        // Equal scores: the smaller key name, so the choice never depends on key order.
        if best
            .as_ref()
            .is_none_or(|(b, d)| score > *b || (score == *b && key.as_str() < d.key.as_str()))
        {
            best = Some((
                score,
                Discriminator {
                    key: key.clone(),
                    groups,
                },
            ));
        }
    }
    best.map(|(_, d)| d)
}

/// The per-type templates of a variant whose answers (`vals`, each with the index of its
/// observation's request context) are a tagged union at the top level, if they are one. Each
/// answer is a recorded answer of its own, so key sets can only differ *between* answers: only
/// a key with a conventional tag name ([`CONVENTIONAL_KEYS`]) can qualify here.
pub fn variant_union(unifier: &Unifier<'_>, vals: &[(&Value, usize)]) -> Option<VariantUnion> {
    let located: Vec<(&Value, usize)> =
        vals.iter().enumerate().map(|(i, (v, _))| (*v, i)).collect();
    let found = detect(&located)?;
    let templates = found
        .groups
        .iter()
        .map(|(tag, members)| {
            let group: Vec<(&Value, usize)> = members.iter().map(|&i| vals[i]).collect();
            let mut template = unifier.unify(&group, None, "");
            hold_tag(&mut template, &found.key, tag);
            template
        })
        .collect();
    Some(VariantUnion {
        discriminator: found.key,
        templates,
    })
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
        // Under a key not named like a tag, answers alone (each its own recording) never show a
        // difference within one answer: no union.
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
