//! The per-field origin map of a response under `--debug` (`X-Wraith-Provenance-Counts` and the
//! trace entry's `origins`).
//!
//! While a response is shaped, each step that puts values into the body says where they came
//! from ([`Sources::set`]): the renderer for every hole, the state operations for stored,
//! fixture and recorded entities, list serving for the page items. At serialization the final
//! body is walked once ([`Sources::flatten`]) and every position gets the origin of its nearest
//! recorded ancestor, else the body's base origin. The counts header is derived from that map,
//! so the two cannot disagree.
//!
//! Not here: the outbound policy's echo/mint exemption map ([`crate::outbound::Origins`]),
//! which answers a different question (which values must stay verbatim).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::FieldSource;
use crate::engine::OutBody;

/// Origins recorded while one response is shaped. Positions are renderer paths (`/a/0/b`,
/// keys unescaped), as [`crate::render`] reports them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sources {
    /// Entries are recorded only with `--debug`: otherwise [`Sources::set`] does nothing, so
    /// serving without `--debug` pays one branch per call.
    on: bool,
    /// The origin of a position with no entry at or above it; `None` for an engine-invented
    /// body (route miss, no variant matched), which has no per-field origins.
    pub base: Option<FieldSource>,
    map: BTreeMap<String, FieldSource>,
}

/// Origins that name one value as a whole (a hole's value), even when it is an object.
fn is_atomic(s: FieldSource) -> bool {
    matches!(
        s,
        FieldSource::Echo
            | FieldSource::Generated
            | FieldSource::Clock
            | FieldSource::Counter
            | FieldSource::Observed
    )
}

impl Sources {
    pub(crate) fn new(on: bool, base: Option<FieldSource>) -> Sources {
        Sources {
            on,
            base,
            map: BTreeMap::new(),
        }
    }

    /// The origins of an earlier answer served again (idempotent replay): its flattened map
    /// (`None` when it was served without `--debug`).
    pub(crate) fn restored(flat: Option<&BTreeMap<String, FieldSource>>) -> Sources {
        let Some(flat) = flat else {
            return Sources::new(false, None);
        };
        Sources {
            on: true,
            base: None,
            map: flat
                .iter()
                .map(|(k, v)| (k.replace("~1", "/").replace("~0", "~"), *v))
                .collect(),
        }
    }

    /// The value at `path` (and everything under it) now comes from `source`.
    pub(crate) fn set(&mut self, path: &str, source: FieldSource) {
        if !self.on {
            return;
        }
        let prefix = format!("{path}/");
        self.map
            .retain(|k, _| k != path && !(path.is_empty() || k.starts_with(&prefix)));
        self.map.insert(path.to_string(), source);
    }

    /// Replace the whole origin state (the body was replaced wholesale).
    pub(crate) fn reset(&mut self, base: Option<FieldSource>) {
        self.base = base;
        self.map.clear();
    }

    /// The origin map of the final body: JSON pointers (RFC 6901) → origin.
    pub(crate) fn flatten(&self, body: &OutBody) -> BTreeMap<String, FieldSource> {
        let mut out = BTreeMap::new();
        match body {
            OutBody::Empty => {}
            OutBody::Bytes(b) => {
                if let Some(s) = self.map.get("").copied().or(self.base)
                    && !b.is_empty()
                {
                    out.insert(String::new(), s);
                }
            }
            OutBody::Json(v) => {
                self.walk(
                    v,
                    &mut String::new(),
                    &mut String::new(),
                    self.base,
                    &mut out,
                );
            }
            // Debug output only: parse the unparsed recorded text to map its positions.
            OutBody::Raw(_) => {
                if let Some(v) = body.json() {
                    self.walk(
                        &v,
                        &mut String::new(),
                        &mut String::new(),
                        self.base,
                        &mut out,
                    );
                }
            }
        }
        out
    }

    fn walk(
        &self,
        v: &Value,
        path: &mut String,
        ptr: &mut String,
        inherited: Option<FieldSource>,
        out: &mut BTreeMap<String, FieldSource>,
    ) {
        let here = self.map.get(path.as_str()).copied();
        if let Some(s) = here
            && is_atomic(s)
        {
            out.insert(ptr.clone(), s);
            return;
        }
        let src = here.or(inherited);
        let mut child = |key: &str, c: &Value, path: &mut String, ptr: &mut String| {
            let (pl, tl) = (path.len(), ptr.len());
            path.push('/');
            path.push_str(key);
            ptr.push('/');
            ptr.push_str(&key.replace('~', "~0").replace('/', "~1"));
            self.walk(c, path, ptr, src, out);
            path.truncate(pl);
            ptr.truncate(tl);
        };
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    child(k, c, path, ptr);
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    child(&i.to_string(), c, path, ptr);
                }
            }
            _ => {
                if let Some(s) = src {
                    out.insert(ptr.clone(), s);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flat(s: &Sources, v: Value) -> Vec<(String, &'static str)> {
        s.flatten(&OutBody::Json(v))
            .into_iter()
            .map(|(k, v)| (k, v.as_str()))
            .collect()
    }

    #[test]
    fn positions_inherit_the_nearest_recorded_ancestor_else_the_base() {
        let mut s = Sources::new(true, Some(FieldSource::Constant));
        s.set("/data", FieldSource::State);
        s.set("/data/id", FieldSource::Generated);
        let got = flat(
            &s,
            json!({"data": {"id": "x", "tags": ["a"]}, "object": "list", "a/b": 1}),
        );
        assert_eq!(
            got,
            vec![
                ("/a~1b".to_string(), "constant"),
                ("/data/id".to_string(), "generated"),
                ("/data/tags/0".to_string(), "state"),
                ("/object".to_string(), "constant"),
            ]
        );
    }

    #[test]
    fn a_hole_position_is_one_entry_even_when_its_value_is_an_object() {
        let mut s = Sources::new(true, Some(FieldSource::Constant));
        s.set("/meta", FieldSource::Echo);
        assert_eq!(
            flat(&s, json!({"meta": {"a": 1, "b": 2}})),
            vec![("/meta".to_string(), "echo")]
        );
    }

    #[test]
    fn setting_a_position_forgets_everything_under_it() {
        let mut s = Sources::new(true, Some(FieldSource::Constant));
        s.set("/e/id", FieldSource::Generated);
        s.set("/e", FieldSource::Fixture);
        assert_eq!(
            flat(&s, json!({"e": {"id": 1}})),
            vec![("/e/id".to_string(), "fixture")]
        );
        s.set("", FieldSource::Recorded);
        assert_eq!(
            flat(&s, json!({"e": {"id": 1}})),
            vec![("/e/id".to_string(), "recorded")]
        );
    }

    #[test]
    fn off_records_nothing_and_invented_bodies_have_no_origins() {
        let mut s = Sources::new(false, Some(FieldSource::Constant));
        s.set("/id", FieldSource::Generated);
        assert_eq!(
            flat(&s, json!({"id": 1})),
            vec![("/id".to_string(), "constant")]
        );
        let invented = Sources::new(true, None);
        assert!(flat(&invented, json!({"error": "x"})).is_empty());
        assert!(invented.flatten(&OutBody::Bytes("x".into())).is_empty());
    }
}
