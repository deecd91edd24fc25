//! Serving a recorded JSON moment as its canonical text, without parsing it.
//!
//! The model holds recorded JSON bodies as canonical text ([`wraith_model::JsonText`]). Most
//! replayed answers are that text unchanged: the outbound body passes (scrub rules, `[REDACTED]`
//! placeholders, the PII pass) find nothing to rewrite in it, it names no upstream URL for the
//! self-URL rewrite, and no list merge or session-bound substitution applies. Those answers are
//! served as the text's bytes, which skips a parse and a serialization per request.
//!
//! Whether the outbound passes leave a moment unchanged is decided once per moment, on first
//! serve, and remembered here ([`Verdict`]). It does not depend on the serving session: the
//! passes exempt positions echoed or minted for the response and values the session supplied,
//! and exemptions only ever remove rewrites — so a body the passes leave unchanged with no
//! exemptions is left unchanged under any. Anything else that needs the tree parses it then
//! ([`crate::engine`]'s `OutBody::materialize`).

use std::sync::OnceLock;

use wraith_model::Model;

/// What serving one moment's text verbatim depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The text is canonical (parsing and re-serializing with sorted keys gives it back byte for
    /// byte) and the outbound body passes change nothing in it: the verbatim text is exactly
    /// what the parsed path would serve.
    pub verbatim: bool,
    /// The text contains the recorded upstream origin (ASCII case-insensitive), so the
    /// self-URL rewrite may change it: it needs the parsed path when the rewrite is active.
    pub mentions_upstream: bool,
}

/// One lazily computed [`Verdict`] per exact-replay moment, index-aligned with
/// `model.routes[r].exact[e].moments[m]`. Memory is a few bytes per moment whether served or
/// not; nothing of a body is kept.
pub(crate) type Verdicts = PerMoment<Verdict>;

/// One lazily computed `T` per exact-replay moment, index-aligned with
/// `model.routes[r].exact[e].moments[m]`: for facts about a recorded moment that depend only on
/// its recorded text and on what is fixed for the engine's lifetime (never on a namespace), so
/// one computation serves every session and every thread.
#[derive(Debug)]
pub(crate) struct PerMoment<T> {
    cells: Vec<Vec<Vec<OnceLock<T>>>>,
}

impl<T> Default for PerMoment<T> {
    fn default() -> PerMoment<T> {
        PerMoment { cells: Vec::new() }
    }
}

impl<T> PerMoment<T> {
    pub(crate) fn new(model: &Model) -> PerMoment<T> {
        PerMoment {
            cells: model
                .routes
                .iter()
                .map(|r| {
                    r.exact
                        .iter()
                        .map(|e| e.moments.iter().map(|_| OnceLock::new()).collect())
                        .collect()
                })
                .collect(),
        }
    }

    /// The value of moment `(r, e, m)`, computed by `decide` the first time. `None` for a
    /// position the model does not have.
    pub(crate) fn get(
        &self,
        (r, e, m): (usize, usize, usize),
        decide: impl FnOnce() -> T,
    ) -> Option<&T> {
        let cell = self.cells.get(r)?.get(e)?.get(m)?;
        Some(cell.get_or_init(decide))
    }
}

/// ASCII case-insensitive substring test without lowercasing a copy of `hay`. Candidate
/// starts are found with `memchr2` on the needle's first byte in both cases, so a body is
/// scanned at memchr speed rather than compared window by window (every moment's verdict
/// asks this of its whole text).
pub(crate) fn contains_ignore_ascii_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = n.split_first() else {
        return true;
    };
    let Some(last_start) = h.len().checked_sub(n.len()) else {
        return false;
    };
    let starts = h.get(..=last_start).unwrap_or_default();
    memchr::memchr2_iter(
        first.to_ascii_lowercase(),
        first.to_ascii_uppercase(),
        starts,
    )
    .any(|i| {
        h.get(i + 1..i + n.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(rest))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_search_ignores_ascii_case() {
        assert!(contains_ignore_ascii_case(
            r#"{"url":"HTTPS://API.Example.com/v1"}"#,
            "https://api.example.com"
        ));
        assert!(!contains_ignore_ascii_case(
            r#"{"url":"https://api.example.org"}"#,
            "https://api.example.com"
        ));
        assert!(!contains_ignore_ascii_case("short", "longer needle"));
        assert!(contains_ignore_ascii_case("anything", ""));
        assert!(contains_ignore_ascii_case("exact", "EXACT"));
        assert!(!contains_ignore_ascii_case("", "x"));
    }

    /// The window-by-window search the memchr version replaced.
    fn contains_ignore_ascii_case_windows(hay: &str, needle: &str) -> bool {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        if n.is_empty() {
            return true;
        }
        h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
    }

    proptest::proptest! {
        #[test]
        fn origin_search_answers_as_the_window_search(
            hay in "[aAbB:/.\\-é]{0,40}",
            needle in "[aAbB:/.\\-é]{0,5}",
        ) {
            proptest::prop_assert_eq!(
                contains_ignore_ascii_case(&hay, &needle),
                contains_ignore_ascii_case_windows(&hay, &needle)
            );
        }
    }

    fn engine() -> crate::Engine {
        let route = wraith_model::Route {
            id: "get_items".to_string(),
            method: "GET".to_string(),
            path: "/v1/items/:id".to_string(),
            origin: None,
            params: vec!["id".to_string()],
            state_op: None,
            entity_type: None,
            id_param: None,
            parent_params: Vec::new(),
            list: None,
            variants: Vec::new(),
            exact: Vec::new(),
            known_param_tuples: Vec::new(),
            action: None,
            latency: wraith_model::LatencyProfile::default(),
            exchange_count: 1,
        };
        let model = Model {
            schema_version: wraith_model::MODEL_SCHEMA_VERSION,
            tool_version: "test".to_string(),
            twin: "t".to_string(),
            base_url: "https://api.example.com".to_string(),
            recorded_at: None,
            sessions: Vec::new(),
            routes: vec![route],
            entity_types: Default::default(),
            diagnostics: Vec::new(),
        };
        crate::Engine::new(
            model,
            None,
            crate::FixtureTree::default(),
            crate::EngineOptions::default(),
        )
        .expect("engine")
    }

    fn verdict_of(body: serde_json::Value) -> Verdict {
        let e = engine();
        e.moment_verdict(0, &wraith_model::JsonText::from_value(body))
    }

    #[test]
    fn a_body_the_outbound_passes_leave_alone_is_verbatim() {
        let v = verdict_of(serde_json::json!({"b": [1, {"z": true}], "a": "plain words"}));
        assert!(v.verbatim);
        assert!(!v.mentions_upstream);
    }

    #[test]
    fn a_body_with_recorded_pii_or_a_placeholder_is_not_verbatim() {
        assert!(!verdict_of(serde_json::json!({"email": "jane.doe@example.com"})).verbatim);
        assert!(!verdict_of(serde_json::json!({"name": "[REDACTED]"})).verbatim);
    }

    #[test]
    fn a_body_naming_the_upstream_is_flagged_for_the_self_url_rewrite() {
        let v = verdict_of(serde_json::json!({"self": "https://API.example.com/v1/items/1"}));
        assert!(v.mentions_upstream);
    }

    #[test]
    fn a_verdict_is_decided_once_per_moment() {
        let v: Verdicts = PerMoment {
            cells: vec![vec![vec![OnceLock::new()]]],
        };
        let first = Verdict {
            verbatim: true,
            mentions_upstream: false,
        };
        assert_eq!(v.get((0, 0, 0), || first), Some(&first));
        let other = Verdict {
            verbatim: false,
            mentions_upstream: true,
        };
        assert_eq!(v.get((0, 0, 0), || other), Some(&first));
        assert_eq!(v.get((0, 1, 0), || other), None);
    }
}
