//! Which per-type template renders an answer of a variant whose top-level answers are a tagged
//! union ([`wraith_model::Variant::union`]).
//!
//! Synth keeps one template per recorded type next to the variant's merged `body`, which
//! anti-unifies every type's answers (each type's own fields optional there, a book's `pages`
//! beside a song's `seconds`). Rendering the merged body would answer a mix of types, so the
//! engine renders one type's template, decided from what it knows, in this order:
//!
//! 1. **the tag the request sent** at the discriminator's place (a top-level body field of
//!    that name: a create naming its `type` gets that type back), when it is a recorded tag;
//! 2. **the tag of the stored record** the answer is about (the entity the route's path names,
//!    as this session's store holds it, else as recorded): a read or an update of a record of a
//!    known type answers in that type;
//! 3. else **the most recorded type** (most answers; the first recorded among equals, and the
//!    first template for a model that did not count them).
//!
//! A sent or stored tag no template has is not guessed at: the next rule decides. Never a mix
//! of types' keys. Exact replays never get here (they replay recorded bytes).
//!
//! Lists need nothing of this: a tagged-union list ([`wraith_model::ArrayNode::List`] with a
//! discriminator) has one representative per tag, and the renderer builds each element from
//! one representative, so every element is one type's; stored records in list pages are whole
//! records, never overlaid on a representative.
//!
//! What this is not: the detection of a union (synth's `union` module) or the judging of one
//! (check's `diff`).

use serde_json::Value;
use wraith_model::{ArrayNode, Node, VariantUnion};

/// Why a union's template was chosen (rules 1–3 of the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChosenBy {
    /// The request sent the tag.
    Sent,
    /// The stored or recorded record the answer is about holds the tag.
    Stored,
    /// Neither named a recorded tag: the most recorded type.
    MostRecorded,
}

/// The template of `union` an answer renders, given the request body (`sent`) and the record
/// the answer is about (`stored`); `None` only when the union holds no template.
pub(crate) fn choose<'u>(
    union: &'u VariantUnion,
    sent: Option<&Value>,
    stored: Option<&Value>,
) -> Option<(&'u Node, ChosenBy)> {
    let by_tag = |v: Option<&Value>| {
        let tag = v?.get(&union.discriminator)?.as_str()?;
        union
            .templates
            .iter()
            .find(|t| ArrayNode::tag_of(t, &union.discriminator) == Some(tag))
    };
    if let Some(t) = by_tag(sent) {
        return Some((t, ChosenBy::Sent));
    }
    if let Some(t) = by_tag(stored) {
        return Some((t, ChosenBy::Stored));
    }
    most_recorded(union).map(|t| (t, ChosenBy::MostRecorded))
}

/// The template of the type with the most recorded answers (the first among equals).
fn most_recorded(union: &VariantUnion) -> Option<&Node> {
    let mut best: Option<(u64, &Node)> = None;
    for (i, t) in union.templates.iter().enumerate() {
        let n = union.counts.get(i).copied().unwrap_or(0);
        if best.is_none_or(|(b, _)| n > b) {
            best = Some((n, t));
        }
    }
    best.map(|(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use wraith_model::Field;

    fn typed(tag: &str, own: &str) -> Node {
        let field = |key: &str, value: Node| Field {
            key: key.into(),
            value,
            optional: false,
            present_ratio_bp: 10_000,
        };
        Node::Object {
            fields: vec![
                field("type", Node::Const { value: json!(tag) }),
                field(own, Node::Const { value: json!(1) }),
            ],
        }
    }

    fn books_and_songs(counts: Vec<u64>) -> VariantUnion {
        VariantUnion {
            discriminator: "type".into(),
            templates: vec![typed("book", "pages"), typed("song", "seconds")],
            counts,
        }
    }

    fn tag(n: Option<(&Node, ChosenBy)>) -> Option<(&str, ChosenBy)> {
        n.and_then(|(t, by)| ArrayNode::tag_of(t, "type").map(|s| (s, by)))
    }

    #[test]
    fn the_sent_tag_decides_over_the_stored_record() {
        let u = books_and_songs(vec![5, 1]);
        let sent = json!({"type": "song"});
        let stored = json!({"id": 1, "type": "book"});
        assert_eq!(
            tag(choose(&u, Some(&sent), Some(&stored))),
            Some(("song", ChosenBy::Sent))
        );
    }

    #[test]
    fn a_stored_record_of_a_known_type_answers_in_its_type() {
        let u = books_and_songs(vec![5, 1]);
        let stored = json!({"id": 1, "type": "song"});
        assert_eq!(
            tag(choose(&u, Some(&json!({"title": "x"})), Some(&stored))),
            Some(("song", ChosenBy::Stored))
        );
    }

    #[test]
    fn an_unrecorded_tag_falls_to_the_most_recorded_type() {
        let u = books_and_songs(vec![1, 3]);
        let sent = json!({"type": "film"});
        let stored = json!({"type": 7});
        assert_eq!(
            tag(choose(&u, Some(&sent), Some(&stored))),
            Some(("song", ChosenBy::MostRecorded))
        );
        // Uncounted (an older model) or equal counts: the first recorded type.
        assert_eq!(
            tag(choose(&books_and_songs(Vec::new()), None, None)),
            Some(("book", ChosenBy::MostRecorded))
        );
        assert_eq!(
            tag(choose(&books_and_songs(vec![2, 2]), None, None)),
            Some(("book", ChosenBy::MostRecorded))
        );
    }
}
