//! Text mentions (`Route::text_mentions`): a created record's array of the records its sent
//! text names as `@key` (a status's `mentions`), derived from the text instead of replaying
//! some recording's. A named record is looked up as this session has seen it (any stored
//! record or object embedded in one, latest first), else among the recorded records of the
//! rule's entity type; a name matching neither is left out.

use serde_json::{Map, Value};
use wraith_model::TextMentions;

use super::{Call, Engine};
use crate::namespace::Namespace;

/// The `@name` tokens of `text`, in order, without repeats: a name is letters, digits and `_`,
/// optionally followed by `@domain` (letters, digits, `.`, `-`; a trailing `.` is punctuation).
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '@' || (i > 0 && (word(chars[i - 1]) || chars[i - 1] == '@')) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < chars.len() && word(chars[j]) {
            j += 1;
        }
        if j == i + 1 {
            i += 1;
            continue;
        }
        let mut end = j;
        if j < chars.len() && chars[j] == '@' {
            let mut k = j + 1;
            while k < chars.len() && (word(chars[k]) || chars[k] == '.' || chars[k] == '-') {
                k += 1;
            }
            while k > j + 1 && matches!(chars[k - 1], '.' | '-') {
                k -= 1;
            }
            if k > j + 1 {
                end = k;
            }
        }
        let name: String = chars[i + 1..end].iter().collect();
        if !out.contains(&name) {
            out.push(name);
        }
        i = end;
    }
    out
}

/// The first object (depth first) in `v` whose `key` is `name` and that has a primary key `pk`.
fn find_named<'v>(v: &'v Value, key: &str, name: &str, pk: &str) -> Option<&'v Map<String, Value>> {
    match v {
        Value::Object(map) => {
            if map.get(key).and_then(Value::as_str) == Some(name) && map.contains_key(pk) {
                return Some(map);
            }
            map.values().find_map(|c| find_named(c, key, name, pk))
        }
        Value::Array(items) => items.iter().find_map(|c| find_named(c, key, name, pk)),
        _ => None,
    }
}

impl Engine {
    /// Replace the array `rule.at` of a created record with the records its sent text names.
    pub(super) fn derive_mentions(
        &self,
        ns: &Namespace,
        call: &Call<'_>,
        rule: &TextMentions,
        record: &mut Value,
    ) {
        let Some(text) = call.body_str(&rule.text_field) else {
            return;
        };
        let Some(slot) = record.pointer_mut(&rule.at) else {
            return;
        };
        if !slot.is_array() {
            return;
        }
        let pk = self.pk_of(&rule.entity_type);
        let mut items = Vec::new();
        for name in tokens(text) {
            let seen = ns.store.values().rev().find_map(|store| {
                store
                    .live
                    .values()
                    .rev()
                    .find_map(|e| find_named(&e.value, &rule.key, &name, &pk))
            });
            let recorded = || {
                self.model
                    .entity_types
                    .get(&rule.entity_type)
                    .and_then(|t| {
                        t.records
                            .values()
                            .find(|r| r.get(&rule.key).and_then(Value::as_str) == Some(&name))
                    })
                    .and_then(Value::as_object)
            };
            let Some(found) = seen.or_else(recorded) else {
                continue;
            };
            let item: Map<String, Value> = rule
                .item_keys
                .iter()
                .filter_map(|k| found.get(k).map(|v| (k.clone(), v.clone())))
                .collect();
            items.push(Value::Object(item));
        }
        *slot = Value::Array(items);
    }
}

#[cfg(test)]
mod tests {
    use super::tokens;

    #[test]
    fn tokens_are_the_at_names_of_the_text_with_their_domains() {
        assert_eq!(
            tokens("@alice hi @bob@example.org. and mail@host, @alice again @"),
            vec!["alice".to_string(), "bob@example.org".to_string()]
        );
    }
}
