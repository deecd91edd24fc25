//! Boolean echoes: a response boolean at the very JSON position the request's body set it.
//!
//! Echo detection in [`crate::unify`] looks for strings and numbers anywhere in the request;
//! a boolean matches some request boolean by chance too often for that. At the *same* JSON
//! pointer it is an update's answer reflecting what was sent (`PUT …/grants` with
//! `{"global": {"add_firewalls": false}}` answering `global.add_firewalls: false`), so a
//! position whose every recorded value equalled the request's value at its own pointer, for every
//! request that carried one, is an echo of that pointer. Requests without the field must agree
//! on one value, which becomes the default (the hole's first example), as for other echoes.
//! Positions inside variable-length lists (`*` in the pointer) have no request counterpart.
//! A request that wraps its payload in one envelope key (a form `data[alerts][poll]=1`
//! answered at `alerts.poll`) sets the same position one level down: when no request carried
//! the answer's own pointer, the one pointer that is it inside a single wrapping key is its
//! source, as long as every request wrapped it under the same key. Form booleans are spelled
//! `true`/`false` or `1`/`0`.
//!
//! The same holds for `null`: a position that was `null` in every recorded answer, where every
//! request that carried the field sent `null` at that very pointer (an update clearing a
//! setting, `default_firewall_ids.nodebalancer: null`), echoes it, so a request setting a value
//! there gets that value back rather than the recorded `null`.

use serde_json::Value;
use wraith_model::{EchoSource, Hole, HoleKind, JsonType};

use crate::unify::Ctx;

/// The echo hole for boolean `vals` at response `pointer` (each with the index of its
/// observation's request in `ctxs`), when every carrying request sent the same value there and
/// at least one did.
pub fn learn(vals: &[(&Value, usize)], ctxs: &[Ctx<'_>], pointer: &str) -> Option<Hole> {
    if pointer.is_empty() || pointer.split('/').any(|t| t == "*") {
        return None;
    }
    let source = request_pointer(vals, ctxs, pointer)?;
    let pointer = source.as_str();
    // Booleans, or `null`s (an update that cleared a field answering the `null` it sent).
    let observed_type = if vals.iter().all(|(v, _)| v.is_boolean()) {
        JsonType::Bool
    } else if vals.iter().all(|(v, _)| v.is_null()) {
        JsonType::Null
    } else {
        return None;
    };
    let mut carried = 0usize;
    let mut default: Option<&Value> = None;
    for (v, c) in vals {
        let sent = ctxs
            .get(*c)
            .and_then(|ctx| ctx.body.iter().find(|(p, _)| p == pointer))
            .map(|(_, s)| s);
        match sent {
            Some(s) => {
                if !(same_bool(s, v) || (s.is_null() && v.is_null())) {
                    return None;
                }
                carried += 1;
            }
            None => match default {
                None => default = Some(v),
                Some(d) if d == *v => {}
                Some(_) => return None,
            },
        }
    }
    if carried == 0 {
        return None;
    }
    let mut examples: Vec<Value> = default.into_iter().cloned().collect();
    for (v, _) in vals {
        if !examples.contains(v) {
            examples.push((*v).clone());
        }
    }
    Some(Hole {
        source: HoleKind::Echo {
            from: EchoSource::Body {
                pointer: pointer.to_string(),
            },
        },
        observed_type,
        examples,
        more_examples: Vec::new(),
        examples_cut: false,
        confidence_bp: if carried == vals.len() { 8_000 } else { 5_000 },
        when_absent: None,
        keyed: None,
    })
}

/// The request pointer the answer's `pointer` may echo: the same pointer when some request
/// carried it; else the one pointer, among the requests, that is `pointer` inside one wrapping
/// key (a form `data[alerts][poll]` answered at `alerts.poll`: `/data/alerts/poll`); else,
/// for an answer that wraps its record in one envelope key (`{"collection": {...}}`), the
/// pointer under that key (`/collection/sensitive` answering a request's `/sensitive`), when
/// some request carried it. `None` when no request carried any, or requests wrapped it under
/// different keys.
pub(crate) fn request_pointer(
    vals: &[(&Value, usize)],
    ctxs: &[Ctx<'_>],
    pointer: &str,
) -> Option<String> {
    let found = request_pointer_as_sent(vals, ctxs, pointer);
    if found.is_some() {
        return found;
    }
    let inner = pointer
        .strip_prefix('/')
        .and_then(|p| p.find('/').map(|at| &p[at..]))?;
    let carried = vals.iter().any(|(_, c)| {
        ctxs.get(*c)
            .is_some_and(|ctx| ctx.body.iter().any(|(p, _)| p == inner))
    });
    carried.then(|| inner.to_string())
}

/// [`request_pointer`] without the answer's envelope: the same pointer, or the one pointer
/// that is it inside one wrapping key of the request.
fn request_pointer_as_sent(
    vals: &[(&Value, usize)],
    ctxs: &[Ctx<'_>],
    pointer: &str,
) -> Option<String> {
    let mut wrapped: Option<&str> = None;
    for (_, c) in vals {
        let Some(ctx) = ctxs.get(*c) else {
            continue;
        };
        for (p, _) in ctx.body {
            if p == pointer {
                return Some(pointer.to_string());
            }
            let inside_one_key = p
                .strip_suffix(pointer)
                .and_then(|w| w.strip_prefix('/'))
                .is_some_and(|w| !w.is_empty() && !w.contains('/'));
            if inside_one_key {
                match wrapped {
                    None => wrapped = Some(p.as_str()),
                    Some(w) if w == p => {}
                    Some(_) => return None,
                }
            }
        }
    }
    wrapped.map(str::to_string)
}

/// A request value equal to a response boolean: the boolean itself, or its form spelling
/// (`true`/`false`, `1`/`0`).
fn same_bool(sent: &Value, answered: &Value) -> bool {
    match (sent, answered) {
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::String(s), Value::Bool(b)) => {
            s == if *b { "true" } else { "false" } || s == if *b { "1" } else { "0" }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

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
    fn boolean_answered_where_the_request_set_it_echoes_that_pointer() {
        let sent = vec![("/global/add_firewalls".to_string(), json!(true))];
        let ctxs = [ctx(&sent)];
        let t = json!(true);
        let hole = learn(&[(&t, 0)], &ctxs, "/global/add_firewalls").expect("echo");
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/global/add_firewalls".into()
                }
            }
        );
    }

    #[test]
    fn null_answered_where_the_request_sent_null_echoes_that_pointer() {
        let cleared = vec![("/ids/linode".to_string(), Value::Null)];
        let ctxs = [ctx(&cleared), ctx(&[])];
        let n = Value::Null;
        let hole = learn(&[(&n, 0), (&n, 1)], &ctxs, "/ids/linode").expect("echo");
        assert_eq!(hole.observed_type, JsonType::Null);
        assert_eq!(hole.examples, vec![Value::Null]);
        // A request that sent a value there and was answered null: no echo.
        let set = vec![("/ids/linode".to_string(), json!(5))];
        let ctxs = [ctx(&cleared), ctx(&set)];
        assert_eq!(learn(&[(&n, 0), (&n, 1)], &ctxs, "/ids/linode"), None);
        // Never sent at all: nothing says the position reflects the request.
        let ctxs = [ctx(&[]), ctx(&[])];
        assert_eq!(learn(&[(&n, 0), (&n, 1)], &ctxs, "/ids/linode"), None);
    }

    #[test]
    fn boolean_the_request_set_inside_one_wrapping_key_echoes_that_pointer() {
        let on = vec![("/data/alerts/poll".to_string(), json!("1"))];
        let off = vec![("/data/alerts/poll".to_string(), json!("0"))];
        let ctxs = [ctx(&on), ctx(&off), ctx(&[])];
        let (t, f) = (json!(true), json!(false));
        let hole = learn(&[(&t, 0), (&f, 1)], &ctxs, "/alerts/poll").expect("echo");
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/data/alerts/poll".into()
                }
            }
        );
        // Under two different wrapping keys nothing says which one the answer reflects.
        let other = vec![("/meta/alerts/poll".to_string(), json!("0"))];
        let ctxs = [ctx(&on), ctx(&other)];
        assert_eq!(learn(&[(&t, 0), (&f, 1)], &ctxs, "/alerts/poll"), None);
        // Deeper than one key is no wrapper.
        let deep = vec![("/a/b/alerts/poll".to_string(), json!("1"))];
        let ctxs = [ctx(&deep)];
        assert_eq!(learn(&[(&t, 0)], &ctxs, "/alerts/poll"), None);
    }

    #[test]
    fn boolean_the_request_set_elsewhere_is_no_echo() {
        let sent = vec![("/restricted".to_string(), json!(true))];
        let ctxs = [ctx(&sent)];
        let t = json!(true);
        assert_eq!(learn(&[(&t, 0)], &ctxs, "/global/add_firewalls"), None);
    }

    #[test]
    fn answer_contradicting_the_request_is_no_echo() {
        let a = vec![("/enabled".to_string(), json!("true"))];
        let b = vec![("/enabled".to_string(), json!(false))];
        let ctxs = [ctx(&a), ctx(&b)];
        let (t, f) = (json!(true), json!(true));
        assert_eq!(learn(&[(&t, 0), (&f, 1)], &ctxs, "/enabled"), None);
        // The form spelling of the same value is an echo.
        let f = json!(false);
        assert!(learn(&[(&t, 0), (&f, 1)], &ctxs, "/enabled").is_some());
    }

    #[test]
    fn boolean_an_enveloped_answer_holds_where_the_request_set_it_echoes_that_pointer() {
        // A form update `sensitive=1` answered `{"thing": {"sensitive": true}}`.
        let on = vec![("/sensitive".to_string(), json!("1"))];
        let ctxs = [ctx(&on)];
        let t = json!(true);
        let hole = learn(&[(&t, 0)], &ctxs, "/thing/sensitive").expect("echo");
        assert_eq!(
            hole.source,
            HoleKind::Echo {
                from: EchoSource::Body {
                    pointer: "/sensitive".into()
                }
            }
        );
        // A request that never sent it says nothing.
        let ctxs = [ctx(&[])];
        assert_eq!(learn(&[(&t, 0)], &ctxs, "/thing/sensitive"), None);
        // Nor does a value under the envelope the request sent otherwise.
        let off = vec![("/sensitive".to_string(), json!("0"))];
        let ctxs = [ctx(&off)];
        assert_eq!(learn(&[(&t, 0)], &ctxs, "/thing/sensitive"), None);
    }
}
