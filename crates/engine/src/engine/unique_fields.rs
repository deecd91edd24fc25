//! A record an action brings into the session (one neither the session nor the recordings
//! held, answered by the action's template) does not take another record's unique number.
//!
//! The template of such an answer is some recorded record's: a followed tag no run recorded
//! answers with the recorded tag's name and url echoed from the path, but with its `id`, a
//! constant because every recording followed that one tag. Where the type's records each hold
//! their own integer at a field (the recorded tags `"1"` and `"3"`), a new record showing
//! another's is two records under one number; it gets the next number above every record the
//! twin knows of the type instead, spelled as the others are (a string of digits or a number).

use serde_json::Value;

use super::Engine;
use crate::namespace::Namespace;

/// An integer a field holds, and whether it was spelled as a string.
fn integer(v: &Value) -> Option<(u64, bool)> {
    match v {
        Value::String(s)
            if !s.is_empty() && s.len() < 20 && s.bytes().all(|b| b.is_ascii_digit()) =>
        {
            s.parse().ok().map(|n| (n, true))
        }
        Value::Number(n) => n.as_u64().map(|n| (n, false)),
        _ => None,
    }
}

impl Engine {
    /// Give `record` (the new record `id` of `ty`) the next number at each top-level field
    /// where it shows another record's unique number (see the module doc).
    pub(super) fn mint_unique_fields(
        &self,
        ns: &Namespace,
        ty: &str,
        id: &str,
        record: &mut Value,
    ) {
        let Some(entity_type) = self.model.entity_types.get(ty) else {
            return;
        };
        let pk = self.pk_of(ty);
        let session = ns.store.get(ty).into_iter().flat_map(|s| s.live.iter());
        // Every record of the type the twin knows, other than this one: the recorded ones as
        // the session holds them where it does.
        let others: Vec<&Value> = entity_type
            .records
            .iter()
            .filter(|(k, _)| k.as_str() != id && ns.entity(ty, k).is_none())
            .map(|(_, v)| v)
            .chain(
                session
                    .filter(|(k, _)| k.as_str() != id)
                    .map(|(_, e)| e.value.as_ref()),
            )
            .collect();
        let Value::Object(fields) = record else {
            return;
        };
        for (field, value) in fields.iter_mut() {
            if *field == pk {
                continue;
            }
            let Some((_, as_string)) = integer(value) else {
                continue;
            };
            let mut seen: Vec<u64> = Vec::with_capacity(others.len());
            let mut unique = true;
            for other in &others {
                match other.get(field).and_then(integer) {
                    Some((n, s)) if s == as_string => {
                        unique &= !seen.contains(&n);
                        seen.push(n);
                    }
                    // A record without the number, or spelling it otherwise: no sequence.
                    _ => unique = false,
                }
            }
            if !unique || seen.len() < 2 || !others.iter().any(|o| o.get(field) == Some(value)) {
                continue;
            }
            let next = seen.iter().max().copied().unwrap_or(0).saturating_add(1);
            *value = if as_string {
                Value::String(next.to_string())
            } else {
                Value::from(next)
            };
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::integer;
    use serde_json::json;

    #[test]
    fn a_unique_number_is_digits_in_a_string_or_a_whole_number() {
        assert_eq!(integer(&json!("42")), Some((42, true)));
        assert_eq!(integer(&json!(42)), Some((42, false)));
        for not in [
            json!(""),
            json!("4a"),
            json!("-4"),
            json!(4.5),
            json!(-4),
            json!(null),
        ] {
            assert_eq!(integer(&not), None, "{not}");
        }
        // Past u64 (a snowflake's digits are fine, a 20-digit text is not a number we count).
        assert_eq!(integer(&json!("99999999999999999999")), None);
    }
}
