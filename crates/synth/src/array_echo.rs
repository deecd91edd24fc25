//! Whole-array echoes: a response array that repeats, in every recorded answer, the array the
//! request body sent at the very same JSON pointer (a firewall's `rules.inbound` answered as
//! sent).
//!
//! Echo detection in [`crate::unify`] works leaf by leaf, and a variable-length array becomes a
//! list of representatives, so an answer listing what the request sent was rendered from
//! recorded rules instead of the request's own. Here a position is an echo of the request's
//! array at its own pointer when every observation's request sent an array there (rebuilt from
//! the request's body leaves) equal to the answered one (object key order aside), and either
//! two distinct arrays among the observations or one non-empty array every observation sent
//! and got back (at lower confidence), as a scalar answered as sent once is an echo too:
//! nothing recorded contradicts it, and a constant would have to coincide with exactly what
//! each request sent. The two differ on a request the recordings lack: one sending another
//! array gets it back, one sending none gets `[]` (a cluster created without `tags`), where a
//! constant would answer the recorded requests' array. Positions inside variable-length lists
//! (`*` in the pointer) have no request counterpart. Where some requests sent no array there,
//! an optional parameter, their answers must all hold one value, the default (`tags: []`),
//! which the echo renders for a request without the array (`Hole::when_absent`). A request may
//! send `null` there instead of an array (a firewall with no outbound rules): its answer must
//! hold `null` too, and counts as one more distinct value sent and answered.

use serde_json::{Map, Value};
use wraith_model::{EchoSource, Hole, HoleKind, JsonType, WhenAbsent};

use crate::unify::Ctx;

/// The echo hole for the arrays `vals` at response `pointer` (each with the index of its
/// observation's request in `ctxs`), when every request sent that very array there.
pub fn learn(vals: &[(&Value, usize)], ctxs: &[Ctx<'_>], pointer: &str) -> Option<Hole> {
    if pointer.is_empty() || pointer.split('/').any(|t| t == "*") || vals.is_empty() {
        return None;
    }
    let mut distinct: Vec<&Value> = Vec::new();
    let mut senders = 0usize;
    // What the answers to requests that sent nothing there held: one value, the default.
    let mut default: Option<&Value> = None;
    for (v, c) in vals {
        let ctx = ctxs.get(*c)?;
        if v.is_null() {
            // A `null` answered where the request sent `null` (no rules that way) is the same
            // echo; any other `null` is not.
            if !sent_null_at(ctx.body, pointer) {
                return None;
            }
            senders += 1;
            if !distinct.contains(v) {
                distinct.push(v);
            }
            continue;
        }
        if !v.is_array() {
            return None;
        }
        match sent_at(ctx.body, pointer) {
            Some(sent) => {
                if sent != **v {
                    return None;
                }
                senders += 1;
                if !distinct.contains(v) {
                    distinct.push(v);
                }
            }
            None => match default {
                None => default = Some(v),
                Some(d) if d == *v => {}
                Some(_) => return None,
            },
        }
    }
    if senders == 0 || distinct.iter().all(|v| v.is_null()) {
        return None;
    }
    if let Some(default) = default {
        return optional_echo(pointer, default, distinct, senders);
    }
    // One non-empty array, sent and answered by every request (once or more).
    let once = distinct.len() == 1
        && distinct
            .iter()
            .all(|v| v.as_array().is_some_and(|a| !a.is_empty()));
    if distinct.len() < 2 && !once {
        return None;
    }
    Some(Hole {
        source: HoleKind::Echo {
            from: EchoSource::Body {
                pointer: pointer.to_string(),
            },
        },
        observed_type: type_of(&distinct),
        examples: distinct.into_iter().take(8).cloned().collect(),
        more_examples: Vec::new(),
        examples_cut: false,
        confidence_bp: if once { 6_000 } else { 8_000 },
        when_absent: None,
        keyed: None,
    })
}

/// An array answered as sent where the request sent one, and as one constant `default` where it
/// did not (`tags: []` unless the create named some): an echo whose default is recorded as the
/// hole's `when_absent`. The arrays sent must show something the default does not explain (a
/// non-empty array other than it).
fn optional_echo(
    pointer: &str,
    default: &Value,
    sent: Vec<&Value>,
    senders: usize,
) -> Option<Hole> {
    let sent_null = sent.iter().any(|v| v.is_null());
    let telling: Vec<&Value> = sent
        .into_iter()
        .filter(|v| *v != default && v.as_array().is_some_and(|a| !a.is_empty()))
        .collect();
    if telling.is_empty() {
        return None;
    }
    let from = EchoSource::Body {
        pointer: pointer.to_string(),
    };
    // The engine renders `examples[0]` for a request without the source.
    let mut examples = vec![default.clone()];
    let observed_type = if default.is_null() || sent_null {
        JsonType::Mixed
    } else {
        JsonType::Array
    };
    examples.extend(telling.into_iter().take(7).cloned());
    Some(Hole {
        source: HoleKind::Echo { from: from.clone() },
        observed_type,
        examples,
        more_examples: Vec::new(),
        examples_cut: false,
        confidence_bp: if senders == 1 { 6_000 } else { 8_000 },
        when_absent: Some(Box::new(WhenAbsent {
            field: from,
            value: default.clone(),
            embeds: None,
        })),
        keyed: None,
    })
}

/// `array`, or `mixed` when `null` is among the values.
fn type_of(values: &[&Value]) -> JsonType {
    if values.iter().any(|v| v.is_null()) {
        JsonType::Mixed
    } else {
        JsonType::Array
    }
}

/// Whether a request body sent `null` at `pointer` itself.
fn sent_null_at(body: &[(String, Value)], pointer: &str) -> bool {
    body.iter().any(|(p, v)| p == pointer && v.is_null())
}

/// The array a request body held at `pointer`, rebuilt from its flattened leaves (`None` when
/// it sent no leaf under it, or the leaves do not form an array).
fn sent_at(body: &[(String, Value)], pointer: &str) -> Option<Value> {
    let prefix = format!("{pointer}/");
    let mut root = Value::Null;
    let mut any = false;
    for (p, v) in body {
        if p == pointer && v.is_array() {
            // An empty array is a leaf of its own.
            root = v.clone();
            any = true;
            continue;
        }
        let Some(rest) = p.strip_prefix(&prefix) else {
            continue;
        };
        any = true;
        insert(&mut root, rest.split('/'), v.clone())?;
    }
    (any && root.is_array()).then_some(root)
}

/// Put `value` at the path `tokens` under `node`, making arrays of numeric tokens (in order:
/// an index past the end must be the next one) and objects of the others.
fn insert<'t>(
    node: &mut Value,
    mut tokens: impl Iterator<Item = &'t str>,
    value: Value,
) -> Option<()> {
    let Some(token) = tokens.next() else {
        *node = value;
        return Some(());
    };
    let token = token.replace("~1", "/").replace("~0", "~");
    if let Ok(i) = token.parse::<usize>() {
        if node.is_null() {
            *node = Value::Array(Vec::new());
        }
        let items = node.as_array_mut()?;
        if i == items.len() {
            items.push(Value::Null);
        }
        insert(items.get_mut(i)?, tokens, value)
    } else {
        if node.is_null() {
            *node = Value::Object(Map::new());
        }
        let map = node.as_object_mut()?;
        insert(map.entry(token).or_insert(Value::Null), tokens, value)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn leaves(v: &Value) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        crate::observe::flatten_json(v, &mut String::new(), &mut out);
        out
    }

    fn ctx(body: &[(String, Value)]) -> Ctx<'_> {
        Ctx {
            params: Vec::new(),
            query: &[],
            body,
            session: "s",
            answered: None,
            obs: None,
        }
    }

    #[test]
    fn array_answered_as_the_request_sent_it_echoes_that_pointer() {
        let a = json!({"rules": {"inbound": [{"ports": "22", "protocol": "TCP"}]}});
        let b = json!({"rules": {"inbound": [{"protocol": "ICMP"}, {"protocol": "50"}]}});
        let (la, lb) = (leaves(&a), leaves(&b));
        let ctxs = [ctx(&la), ctx(&lb)];
        let (ra, rb) = (a["rules"]["inbound"].clone(), b["rules"]["inbound"].clone());
        let hole = learn(&[(&ra, 0), (&rb, 1)], &ctxs, "/rules/inbound").expect("echo");
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/rules/inbound".into()
                }
            }
        );
    }

    #[test]
    fn non_empty_array_its_only_request_sent_is_an_echo_at_lower_confidence() {
        let a = json!({"context": ["home", "public"]});
        let la = leaves(&a);
        let ctxs = [ctx(&la)];
        let ra = a["context"].clone();
        let hole = learn(&[(&ra, 0)], &ctxs, "/context").expect("echo");
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/context".into()
                }
            }
        );
        assert_eq!(hole.confidence_bp, 6_000);
        // An empty array sent and answered once says nothing about where it came from.
        let e = json!({"context": []});
        let le = leaves(&e);
        let ctxs = [ctx(&le)];
        assert!(learn(&[(&e["context"], 0)], &ctxs, "/context").is_none());
    }

    #[test]
    fn array_sent_by_some_requests_and_one_default_for_the_rest_is_an_optional_echo() {
        let a = json!({"label": "a", "tags": ["web", "db"]});
        let b = json!({"label": "b"});
        let (la, lb) = (leaves(&a), leaves(&b));
        let ctxs = [ctx(&la), ctx(&lb), ctx(&lb)];
        let (ra, empty) = (a["tags"].clone(), json!([]));
        let hole = learn(&[(&ra, 0), (&empty, 1), (&empty, 2)], &ctxs, "/tags").expect("echo");
        let from = EchoSource::Body {
            pointer: "/tags".into(),
        };
        assert_eq!(hole.source, HoleKind::Echo { from: from.clone() });
        assert_eq!(
            hole.examples[0], empty,
            "the default is rendered without the source"
        );
        let when_absent = hole.when_absent.expect("a default");
        assert_eq!(
            (when_absent.field, when_absent.value),
            (from, empty.clone())
        );
        // Requests without the array answered two different values: nothing is a default.
        let other = json!(["kept"]);
        assert!(learn(&[(&ra, 0), (&empty, 1), (&other, 2)], &ctxs, "/tags").is_none());
        // Every request that sent one sent the default itself: nothing tells an echo apart.
        let e = json!({"label": "e", "tags": []});
        let le = leaves(&e);
        let ctxs = [ctx(&le), ctx(&lb)];
        assert!(learn(&[(&empty, 0), (&empty, 1)], &ctxs, "/tags").is_none());
    }

    #[test]
    fn null_answered_where_the_request_sent_null_is_the_same_echo_as_the_arrays() {
        let a = json!({"outbound": [{"action": "ACCEPT"}]});
        let b = json!({"outbound": null});
        let (la, lb) = (leaves(&a), leaves(&b));
        let ctxs = [ctx(&la), ctx(&lb)];
        let (ra, rb) = (a["outbound"].clone(), Value::Null);
        let hole = learn(&[(&ra, 0), (&rb, 1)], &ctxs, "/outbound").expect("an echo");
        assert_eq!(hole.observed_type, JsonType::Mixed);
        assert!(matches!(hole.source, HoleKind::Echo { .. }));
        // A `null` answered to a request that sent rules is no echo.
        let ctxs = [ctx(&la), ctx(&la)];
        assert!(learn(&[(&ra, 0), (&rb, 1)], &ctxs, "/outbound").is_none());
        // Only `null`s, sent and answered: nothing tells an echo from a constant.
        let ctxs = [ctx(&lb), ctx(&lb)];
        assert!(learn(&[(&rb, 0), (&rb, 1)], &ctxs, "/outbound").is_none());
    }

    #[test]
    fn array_differing_from_the_request_is_no_echo() {
        let a = json!({"rules": [{"protocol": "TCP"}]});
        let b = json!({"rules": [{"protocol": "UDP"}]});
        let (la, lb) = (leaves(&a), leaves(&b));
        let ctxs = [ctx(&la), ctx(&lb)];
        // The second answer added a field the request did not send.
        let rb = json!([{"protocol": "UDP", "ports": "1"}]);
        let ra = a["rules"].clone();
        assert!(learn(&[(&ra, 0), (&rb, 1)], &ctxs, "/rules").is_none());
    }

    #[test]
    fn non_empty_array_every_request_sent_alike_is_an_echo_at_lower_confidence() {
        let a = json!({"tags": ["testing"]});
        let la = leaves(&a);
        let ctxs = [ctx(&la), ctx(&la), ctx(&la)];
        let ra = a["tags"].clone();
        let hole = learn(&[(&ra, 0), (&ra, 1), (&ra, 2)], &ctxs, "/tags").expect("an echo");
        assert_eq!(hole.confidence_bp, 6_000);
        assert_eq!(hole.examples, vec![ra.clone()]);
        assert!(hole.when_absent.is_none());
        // The same empty array every time says nothing about where it came from.
        let e = json!({"tags": []});
        let le = leaves(&e);
        let ctxs = [ctx(&le), ctx(&le)];
        let re = e["tags"].clone();
        assert!(learn(&[(&re, 0), (&re, 1)], &ctxs, "/tags").is_none());
    }
}
