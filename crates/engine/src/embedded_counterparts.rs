//! Counterparts embedded in a replayed answer: a recorded moment of run R that embeds R's own
//! record of a create this session made (answered from another run) names that record, which
//! this session never heard of. The session's record stands in its place, as it does for the
//! items of a merged list page (`Namespace::counterparts`, `list::merge_into_moment`), but here
//! at any depth: a notification's `status`, a reblog's `reblog`, a collection in an envelope.
//!
//! Only the identity is renamed (the key and every string that embeds it as a whole token, such
//! as a `uri` ending in the key): the rest of the embedded object is the recorded one, which
//! shows what that request's answer looked like at that point of the run. A field of the
//! embedded object that names the record (a `uri` embedding its key) takes the session's
//! stored record's value of that field when that value names the session's key too: the
//! session was told that string (a `uri` under another run's account path), and a renamed copy
//! of the recorded one would be a third name for the same record. Not here: which run
//! a moment comes from, nor when counterparts are learned (the engine's `note_counterparts`).

use serde_json::Value;

/// One rename: objects whose `pk` field is `theirs` (a recorded run's record) become `mine`
/// (the session's record of the same create).
pub(crate) struct Rename<'a> {
    pub pk: &'a str,
    pub theirs: &'a str,
    pub mine: &'a str,
    /// The session's stored record of `mine`, when the session holds it: its fields that name
    /// it win over renamed recorded ones (see [`rename_embedded`]).
    pub record: Option<&'a Value>,
}

/// Whether any rename's recorded key occurs in `text` at all: a cheap test before a body is
/// parsed for [`rename_embedded`].
pub(crate) fn mentions_any(text: &[u8], renames: &[Rename<'_>]) -> bool {
    renames.iter().any(|r| {
        let needle = r.theirs.as_bytes();
        !needle.is_empty() && memchr::memmem::find(text, needle).is_some()
    })
}

/// Rename every object in `body` (at any depth, the top level included) whose primary key is a
/// rename's recorded key: inside that object, the key itself and each whole-token occurrence of
/// it in a string become the session's key, except that a top-level string field embedding the
/// recorded key takes the session's stored record's value of that field when that value embeds
/// the session's key (the name the session was given). Elsewhere a string whose whole value is such a key
/// (at least [`MIN_REFERENCE_LEN`] long) references the record and is renamed too. Returns
/// whether the body changed.
pub(crate) fn rename_embedded(body: &mut Value, renames: &[Rename<'_>]) -> bool {
    match body {
        Value::Object(map) => {
            let hit = renames.iter().find(|r| {
                map.get(r.pk).is_some_and(|v| match v {
                    Value::String(s) => s == r.theirs,
                    Value::Number(n) => n.to_string() == r.theirs,
                    _ => false,
                })
            });
            if let Some(r) = hit {
                // Fields naming the record as the session was told (its stored record's).
                let told = r
                    .record
                    .map_or_else(Vec::new, |rec| told_names(map, rec, r));
                // The embedded record keeps its shape; only what names it changes.
                rename_tokens(body, r.theirs, r.mine);
                if let Value::Object(map) = body {
                    for (k, v) in told {
                        map.insert(k, v);
                    }
                }
                // Objects inside it may embed other renamed records.
                if let Value::Object(map) = body {
                    for v in map.values_mut() {
                        rename_embedded(v, renames);
                    }
                }
                return true;
            }
            let mut changed = false;
            for v in map.values_mut() {
                changed |= rename_embedded(v, renames);
            }
            changed
        }
        Value::Array(items) => {
            let mut changed = false;
            for v in items {
                changed |= rename_embedded(v, renames);
            }
            changed
        }
        // A reference to the recorded record (`in_reply_to_id`, an id in a list of ids):
        // a whole string value equal to a long enough recorded key names that record too.
        Value::String(s) => match renames
            .iter()
            .find(|r| r.theirs.len() >= MIN_REFERENCE_LEN && s == r.theirs)
        {
            Some(r) => {
                *s = r.mine.to_string();
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// The top-level string fields of the embedded object `map` that embed the recorded key as a
/// whole token and whose value in the session's `record` embeds the session's key: those
/// fields with the record's values.
fn told_names(
    map: &serde_json::Map<String, Value>,
    record: &Value,
    r: &Rename<'_>,
) -> Vec<(String, Value)> {
    map.iter()
        .filter(|(k, v)| k.as_str() != r.pk && v.as_str().is_some_and(|s| has_token(s, r.theirs)))
        .filter_map(|(k, _)| match record.get(k) {
            Some(Value::String(mine)) if has_token(mine, r.mine) => {
                Some((k.clone(), Value::String(mine.clone())))
            }
            _ => None,
        })
        .collect()
}

/// Whether `s` holds `token` not adjacent to another ASCII letter or digit.
fn has_token(s: &str, token: &str) -> bool {
    replace_token(s, token, "").is_some()
}

/// Shortest recorded key a bare string value is taken to reference: shorter values (`"1"`,
/// `"111"`) are as likely counts, codes or another type's keys.
const MIN_REFERENCE_LEN: usize = 6;

/// Replace `theirs` by `mine` throughout `v`: equal strings, numbers equal to it (kept numbers
/// when `mine` is one), and whole-token occurrences inside strings (`…/statuses/<id>`), never
/// inside a longer token (`<id>7`) nor in keys.
pub(crate) fn rename_tokens(v: &mut Value, theirs: &str, mine: &str) {
    match v {
        Value::String(s) => {
            if let Some(new) = replace_token(s, theirs, mine) {
                *s = new;
            }
        }
        Value::Number(n) => {
            if n.to_string() == theirs
                && let Ok(m) = mine.parse::<serde_json::Number>()
            {
                *n = m;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|x| rename_tokens(x, theirs, mine)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|x| rename_tokens(x, theirs, mine)),
        Value::Bool(_) | Value::Null => {}
    }
}

/// The headers of an answer naming URLs (a page's `Link`, a create's `Location`), whose
/// recorded values name the recorded run's records as its body does.
const URL_HEADERS: [&str; 3] = ["link", "location", "content-location"];

/// Rename in the URL headers ([`URL_HEADERS`]) of `headers` every whole-token mention of each
/// `(theirs, mine)` of `renames` to `mine`. Returns whether a header changed.
pub(crate) fn rename_url_headers<'r>(
    headers: &mut [(String, String)],
    renames: impl Iterator<Item = (&'r str, &'r str)> + Clone,
) -> bool {
    let mut changed = false;
    for (name, value) in headers.iter_mut() {
        if !URL_HEADERS.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            continue;
        }
        for (theirs, mine) in renames.clone() {
            if let Some(v) = replace_token(value, theirs, mine) {
                *value = v;
                changed = true;
            }
        }
    }
    changed
}

/// `s` with every occurrence of `theirs` not adjacent to another ASCII letter or digit replaced
/// by `mine`; `None` when there is none.
fn replace_token(s: &str, theirs: &str, mine: &str) -> Option<String> {
    replace_bounded(s, theirs, mine, |b| b.is_ascii_alphanumeric())
}

/// `s` with every occurrence of the number `theirs` not adjacent to another ASCII digit
/// replaced by `mine` (`linode82373877` names the record `82373877`); `None` when there is
/// none.
pub(crate) fn replace_number(s: &str, theirs: &str, mine: &str) -> Option<String> {
    replace_bounded(s, theirs, mine, |b| b.is_ascii_digit())
}

/// `s` with every occurrence of `theirs` whose neighbours are not `joins` replaced by `mine`.
fn replace_bounded(
    s: &str,
    theirs: &str,
    mine: &str,
    joins: impl Fn(u8) -> bool,
) -> Option<String> {
    if theirs.is_empty() || !s.contains(theirs) {
        return None;
    }
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    let mut changed = false;
    for (at, _) in s.match_indices(theirs) {
        if at < last {
            continue;
        }
        let end = at + theirs.len();
        let before_ok = at == 0 || !joins(bytes[at - 1]);
        let after_ok = end == bytes.len() || !joins(bytes[end]);
        if before_ok && after_ok {
            out.push_str(&s[last..at]);
            out.push_str(mine);
            last = end;
            changed = true;
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&s[last..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn renames() -> Vec<Rename<'static>> {
        vec![Rename {
            pk: "id",
            theirs: "111",
            mine: "222",
            record: None,
        }]
    }

    #[test]
    fn an_embedded_counterpart_is_renamed_with_the_urls_that_embed_its_key() {
        let mut body = json!([{
            "id": "9",
            "type": "mention",
            "status": {
                "id": "111",
                "uri": "http://x/statuses/111",
                "url": "http://x/@a/111",
                "content": "id 1110 stays",
                "account": {"id": "5"}
            }
        }]);
        assert!(rename_embedded(&mut body, &renames()));
        assert_eq!(
            body,
            json!([{
                "id": "9",
                "type": "mention",
                "status": {
                    "id": "222",
                    "uri": "http://x/statuses/222",
                    "url": "http://x/@a/222",
                    "content": "id 1110 stays",
                    "account": {"id": "5"}
                }
            }])
        );
    }

    #[test]
    fn an_embedded_counterparts_names_come_from_the_sessions_stored_record() {
        // The session was told its record's uri under another account path; the recorded run
        // embeds its own record under its account.
        let record = json!({
            "id": "222",
            "uri": "http://x/users/7/things/222",
            "url": "http://x/things/222",
            "title": "kept as recorded"
        });
        let r = vec![Rename {
            pk: "id",
            theirs: "111",
            mine: "222",
            record: Some(&record),
        }];
        let mut body = json!({
            "id": "9",
            "thing": {
                "id": "111",
                "uri": "http://x/users/5/things/111",
                "url": "http://x/things/111",
                "title": "recorded title",
                "owner": "http://x/users/5"
            }
        });
        assert!(rename_embedded(&mut body, &r));
        assert_eq!(
            body["thing"],
            json!({
                "id": "222",
                "uri": "http://x/users/7/things/222",
                "url": "http://x/things/222",
                "title": "recorded title",
                "owner": "http://x/users/5"
            })
        );
    }

    #[test]
    fn a_stored_value_not_naming_the_sessions_key_leaves_the_renamed_recorded_one() {
        let record = json!({"id": "222", "uri": "http://x/elsewhere"});
        let r = vec![Rename {
            pk: "id",
            theirs: "111",
            mine: "222",
            record: Some(&record),
        }];
        let mut body = json!({"thing": {"id": "111", "uri": "http://x/users/5/things/111"}});
        assert!(rename_embedded(&mut body, &r));
        assert_eq!(body["thing"]["uri"], json!("http://x/users/5/things/222"));
    }

    #[test]
    fn a_key_outside_an_object_whose_primary_key_it_is_is_left_alone() {
        let mut body = json!({"id": "9", "in_reply_to_id": "111", "note": "111"});
        assert!(!rename_embedded(&mut body, &renames()));
        assert_eq!(body["in_reply_to_id"], json!("111"));
    }

    #[test]
    fn a_reference_to_a_long_recorded_key_names_the_sessions_record() {
        let r = vec![Rename {
            pk: "id",
            theirs: "117440817375559057",
            mine: "117440813461137764",
            record: None,
        }];
        let mut body = json!({
            "id": "117440817380451450",
            "in_reply_to_id": "117440817375559057",
            "media_ids": ["117440817375559057", "5"],
            "content": "not 117440817375559057 as a whole value"
        });
        assert!(rename_embedded(&mut body, &r));
        assert_eq!(body["in_reply_to_id"], json!("117440813461137764"));
        assert_eq!(body["media_ids"], json!(["117440813461137764", "5"]));
        assert_eq!(
            body["content"],
            json!("not 117440817375559057 as a whole value")
        );
        assert_eq!(body["id"], json!("117440817380451450"));
    }

    #[test]
    fn a_numeric_key_stays_a_number() {
        let r = vec![Rename {
            pk: "id",
            theirs: "111",
            mine: "222",
            record: None,
        }];
        let mut body = json!({"item": {"id": 111, "parent": 111}});
        assert!(rename_embedded(&mut body, &r));
        assert_eq!(body, json!({"item": {"id": 222, "parent": 222}}));
    }

    #[test]
    fn a_number_beside_letters_is_renamed_but_not_inside_a_longer_number() {
        assert_eq!(
            replace_number("linode82373877", "82373877", "101623969").as_deref(),
            Some("linode101623969")
        );
        assert_eq!(replace_number("x182373877", "82373877", "9"), None);
        assert_eq!(replace_token("linode82373877", "82373877", "9"), None);
    }

    #[test]
    fn mentions_any_finds_a_recorded_key_in_the_text() {
        assert!(mentions_any(br#"{"status":{"id":"111"}}"#, &renames()));
        assert!(!mentions_any(br#"{"status":{"id":"333"}}"#, &renames()));
    }
}
