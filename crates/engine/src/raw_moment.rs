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

use sha2::{Digest, Sha256};
use wraith_model::precomputed::NO_VERDICT;
use wraith_model::{Model, MomentVerdict, Precomputed, RecordedBody};

use crate::{Engine, Fidelity, OutboundPolicy};

/// Version of the rules [`Engine::moment_verdict`] decides by (the canonical-text test and the
/// outbound body passes). Part of [`outbound_fingerprint`], so verdicts a model stores from an
/// older engine are not trusted by a newer one: bump it whenever those rules change what they
/// rewrite. The crate version is part of the fingerprint as well.
const VERDICT_RULES: u32 = 2;

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

impl Verdicts {
    /// Verdicts for an engine serving `model` under the outbound configuration named by
    /// `fingerprint`: the ones the model stores ([`Model::precomputed`]) when they were decided
    /// under that same configuration, so they are not decided again; lazily computed otherwise
    /// (no fingerprint, none stored, another configuration, or a route whose stored shape does
    /// not match its moments).
    pub(crate) fn seeded(model: &Model, fingerprint: Option<&str>) -> Verdicts {
        let stored = model
            .precomputed
            .as_ref()
            .filter(|p| fingerprint.is_some_and(|f| f == p.outbound));
        let Some(stored) = stored else {
            return Verdicts::new(model);
        };
        Verdicts {
            cells: model
                .routes
                .iter()
                .map(|r| {
                    let entries = stored.verdicts.get(&r.id).filter(|es| {
                        es.len() == r.exact.len()
                            && es
                                .iter()
                                .zip(&r.exact)
                                .all(|(s, e)| s.chars().count() == e.moments.len())
                    });
                    r.exact
                        .iter()
                        .enumerate()
                        .map(|(ei, e)| {
                            let codes = entries.and_then(|es| es.get(ei));
                            (0..e.moments.len())
                                .map(|mi| {
                                    let v = codes
                                        .and_then(|c| c.chars().nth(mi))
                                        .and_then(MomentVerdict::from_char);
                                    match v {
                                        Some(v) => OnceLock::from(Verdict {
                                            verbatim: v.verbatim,
                                            mentions_upstream: v.mentions_upstream,
                                        }),
                                        None => OnceLock::new(),
                                    }
                                })
                                .collect()
                        })
                        .collect()
                })
                .collect(),
        }
    }
}

/// The fingerprint of the outbound body configuration a moment's verdict depends on: the
/// policy's body rules, PII options and key, whether `[REDACTED]` placeholders are replaced (any
/// fidelity but `strict`), the verdict rules' version and the crate version. `None` when the
/// policy has a caller's tokenizer (a function: its answers cannot be fingerprinted), so
/// verdicts are then never taken from the model. SHA-256 hex, so the scrub key is not readable
/// from it.
pub fn outbound_fingerprint(policy: &OutboundPolicy, fidelity: Fidelity) -> Option<String> {
    if policy.tokenizer.is_some() {
        return None;
    }
    let mut h = Sha256::new();
    let text = format!(
        "wraith verdicts {VERDICT_RULES} {}\nrules {:?}\npii {:?}\nreplace_redacted {}\nkey ",
        env!("CARGO_PKG_VERSION"),
        policy.rules,
        policy.pii,
        fidelity != Fidelity::Strict,
    );
    h.update(text.as_bytes());
    h.update(&policy.key);
    let digest = h.finalize();
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}

impl Engine {
    /// The facts synth stores in the model ([`Model::precomputed`]) for this engine's model
    /// under its outbound configuration: every exact-replay JSON moment's verdict, every
    /// variant's render snapshot positions and every route's outbound column facts (those two do
    /// not depend on the configuration). `None` when
    /// the configuration has no fingerprint. Decides every moment, served or not (the verdicts
    /// it decides stay in this engine too).
    pub fn precompute(&self) -> Option<Precomputed> {
        let outbound = outbound_fingerprint(self.outbound_policy(), self.options().fidelity)?;
        let model = self.model();
        let verdicts = model
            .routes
            .iter()
            .enumerate()
            .map(|(r, route)| {
                let entries = route
                    .exact
                    .iter()
                    .enumerate()
                    .map(|(e, entry)| {
                        entry
                            .moments
                            .iter()
                            .enumerate()
                            .map(|(m, moment)| match &moment.body {
                                RecordedBody::Json { value } => self
                                    .cached_verdict((r, e, m), value)
                                    .map_or(NO_VERDICT, |v| {
                                        MomentVerdict {
                                            verbatim: v.verbatim,
                                            mentions_upstream: v.mentions_upstream,
                                        }
                                        .to_char()
                                    }),
                                _ => NO_VERDICT,
                            })
                            .collect::<String>()
                    })
                    .collect();
                (route.id.clone(), entries)
            })
            .collect();
        let snapshots = model
            .routes
            .iter()
            .map(|route| {
                let per_variant = (0..route.variants.len())
                    .map(|vi| crate::engine::snapshot_positions(route, vi))
                    .collect();
                (route.id.clone(), per_variant)
            })
            .collect();
        Some(Precomputed {
            outbound,
            verdicts,
            snapshots,
            columns: crate::outbound::precompute_columns(model),
        })
    }
}

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

/// Whether two texts are equal, known without reading them when they are one buffer: a
/// replayed moment's text shares the model's ([`wraith_model::JsonText::to_bytes`]), so the
/// same moment served again compares in constant time instead of byte by byte.
pub(crate) fn same_text(a: &[u8], b: &[u8]) -> bool {
    (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || a == b
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

    #[test]
    fn same_text_is_byte_equality_whether_or_not_the_buffers_are_one() {
        let shared = b"{\"a\":1}".to_vec();
        let copy = shared.clone();
        assert!(same_text(&shared, &shared));
        assert!(same_text(&shared, &copy));
        assert!(!same_text(&shared, b"{\"a\":2}"));
        // One buffer, another length: a prefix is not the text.
        assert!(!same_text(&shared[..3], &shared));
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
            params: vec!["id".to_string()],
            exchange_count: 1,
            ..wraith_model::Route::default()
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
            precomputed: None,
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

    /// A model of one route with one exact entry whose two moments are `bodies`.
    fn model_with_moments(bodies: &[serde_json::Value]) -> Model {
        let mut model = engine().model().clone();
        model.routes[0].exact.push(wraith_model::ExactEntry {
            key: wraith_model::RequestKey {
                path: "/v1/items/1".to_string(),
                query: String::new(),
                body: None,
            },
            moments: bodies
                .iter()
                .enumerate()
                .map(|(i, b)| wraith_model::Moment {
                    source: format!("s/{i}"),
                    principal: None,
                    respelled: false,
                    status: 200,
                    headers: Vec::new(),
                    body: RecordedBody::json(b.clone()),
                })
                .collect(),
            session_bound: Vec::new(),
        });
        model
    }

    fn engine_of(model: Model) -> Engine {
        Engine::new(
            model,
            None,
            crate::FixtureTree::default(),
            crate::EngineOptions::default(),
        )
        .expect("engine")
    }

    fn served_verdicts(e: &Engine) -> Vec<Option<Verdict>> {
        let route = &e.model().routes[0];
        route.exact[0]
            .moments
            .iter()
            .enumerate()
            .map(|(m, moment)| match &moment.body {
                RecordedBody::Json { value } => e.cached_verdict((0, 0, m), value),
                _ => None,
            })
            .collect()
    }

    const PLAIN: Verdict = Verdict {
        verbatim: true,
        mentions_upstream: false,
    };
    const NEEDS_PASSES: Verdict = Verdict {
        verbatim: false,
        mentions_upstream: false,
    };

    #[test]
    fn precomputed_verdicts_are_the_ones_an_engine_decides() {
        let model = model_with_moments(&[
            serde_json::json!({"a": "plain words"}),
            serde_json::json!({"email": "jane.doe@example.com"}),
        ]);
        let e = engine_of(model);
        let p = e
            .precompute()
            .expect("the default policy has a fingerprint");
        assert_eq!(p.verdicts.get("get_items"), Some(&vec!["vp".to_string()]));
        assert_eq!(served_verdicts(&e), vec![Some(PLAIN), Some(NEEDS_PASSES)]);
    }

    #[test]
    fn stored_verdicts_are_read_only_under_the_configuration_they_were_decided_in() {
        let mut model = model_with_moments(&[
            serde_json::json!({"a": "plain words"}),
            serde_json::json!({"email": "jane.doe@example.com"}),
        ]);
        let mut stored = engine_of(model.clone()).precompute().expect("fingerprint");
        // Swapped on purpose: an engine that reads them serves what they say.
        stored
            .verdicts
            .insert("get_items".into(), vec!["pv".into()]);
        model.precomputed = Some(stored);
        let swapped = vec![Some(NEEDS_PASSES), Some(PLAIN)];
        assert_eq!(served_verdicts(&engine_of(model.clone())), swapped);

        // Another policy decides for itself.
        let mut other = engine_of(model.clone());
        other
            .set_outbound_policy(OutboundPolicy {
                key: b"another key".to_vec(),
                ..OutboundPolicy::default()
            })
            .expect("policy");
        assert_eq!(
            served_verdicts(&other),
            vec![Some(PLAIN), Some(NEEDS_PASSES)]
        );
        // The default policy installed again reads them again.
        other
            .set_outbound_policy(OutboundPolicy::default())
            .expect("policy");
        assert_eq!(served_verdicts(&other), swapped);

        // Another fidelity has another fingerprint.
        let strict = Engine::new(
            model,
            None,
            crate::FixtureTree::default(),
            crate::EngineOptions {
                fidelity: Fidelity::Strict,
                ..crate::EngineOptions::default()
            },
        )
        .expect("engine");
        assert_eq!(
            served_verdicts(&strict),
            vec![Some(PLAIN), Some(NEEDS_PASSES)]
        );
    }

    #[test]
    fn stored_verdicts_of_another_shape_are_ignored() {
        let mut model = model_with_moments(&[
            serde_json::json!({"a": "plain words"}),
            serde_json::json!({"email": "jane.doe@example.com"}),
        ]);
        let mut stored = engine_of(model.clone()).precompute().expect("fingerprint");
        // One character for two moments: the route's stored verdicts are not trusted.
        stored.verdicts.insert("get_items".into(), vec!["p".into()]);
        model.precomputed = Some(stored);
        assert_eq!(
            served_verdicts(&engine_of(model)),
            vec![Some(PLAIN), Some(NEEDS_PASSES)]
        );
    }

    #[test]
    fn the_fingerprint_names_key_rules_and_placeholder_replacement() {
        let base = OutboundPolicy::default();
        let f = |p: &OutboundPolicy, fid| outbound_fingerprint(p, fid);
        let d = f(&base, Fidelity::Synth);
        assert!(d.is_some());
        assert_eq!(
            d,
            f(&base, Fidelity::Fuzzy),
            "only strict keeps placeholders"
        );
        assert_ne!(d, f(&base, Fidelity::Strict));
        let keyed = OutboundPolicy {
            key: b"k".to_vec(),
            ..OutboundPolicy::default()
        };
        assert_ne!(d, f(&keyed, Fidelity::Synth));
        let no_pii = OutboundPolicy {
            pii: crate::PiiOptions {
                detect: false,
                ..crate::PiiOptions::default()
            },
            ..OutboundPolicy::default()
        };
        assert_ne!(d, f(&no_pii, Fidelity::Synth));
        let headers_only = OutboundPolicy {
            strip_headers: false,
            ..OutboundPolicy::default()
        };
        assert_eq!(
            d,
            f(&headers_only, Fidelity::Synth),
            "headers are not bodies"
        );
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
