//! Symbol consistency for ids the twin minted: once the twin has answered a recorded id with
//! its own value, every later answer of the session that shows that recorded id must show the
//! twin's value instead.
//!
//! The judge compares `generated` positions (a `Generated` or `Counter` hole, derived ids
//! included) by JSON type only, since a twin must mint its own ids. That alone lets a twin
//! answer a create with id Y and a later read of the same entity with id Z. The id flow
//! ([`crate::idmap`]) already knows, per replayed session, which recorded value the twin
//! answered with which value; this module holds the session's later answers to it:
//!
//! - **Where.** At the `generated` positions of the template the twin most likely rendered —
//!   the very positions the id flow learns from (`judge::generated_pairs`), with list elements
//!   paired as the judge pairs them, and from the template even when the answer carries an
//!   exactness claim (a claim says how to compare, not which fields are ids).
//! - **What.** When the recorded value X at such a position is mapped (X → Y, learned from an
//!   *earlier* answer of the session), the answer must carry Y; anything else, the recorded X
//!   included, is a `symbol_mismatch` (`expected` Y, `actual` what the twin answered). The
//!   recorded X is not accepted: the client was given Y for that entity and never heard of X.
//! - **Exactly compared positions** (`constant`, `enum`, under the same template) name ids too:
//!   a reply's parent, a marker's last read status, a collection's URL in a notification. The
//!   judge compares them with the recording, which names the entity X, where the session knows
//!   it as Y. So there, with X mapped to Y (same JSON type): an answer of Y is the recording's
//!   value under the session's name for it, and the judge's mismatch at that position (expected
//!   X, actual Y) is withdrawn; an answer still showing X is a `symbol_mismatch` (expected Y),
//!   as at a `generated` position; any other answer stays the judge's mismatch. Echoed
//!   positions are left alone: they compare with the request as sent, which already names Y.
//! - **How it counts.** A `symbol_mismatch` is a divergence like any other (the exchange
//!   fails, `[[diff.suppress]]` applies, the causes step sees it), and it fails the
//!   `symbol_consistency` dimension. Where the judge already found a divergence at the same
//!   path, no second one is added; that divergence counts in `symbol_consistency` too.
//!
//! Nothing the judge flags is removed except a mismatch whose answer is exactly the value the
//! twin gave the session for the recorded one. The replay driver's judge already compares with
//! the recording renamed into the session's names (`judge::judge_in_session`, values at least
//! `idmap::MIN_RENAMED_LEN` long): there an answer still showing the recorded X is the judge's
//! value mismatch at that path (`expected` Y), which this check names a `symbol_mismatch`, as
//! it names one the judge did not flag.

use serde_json::Value;
use wraith_recording::Exchange;

use crate::diff::{BodyDiff, Category, Divergence, json_eq};
use crate::idmap::IdMap;
use crate::judge::{
    AnswerMemo, Body, DiffOptions, ExpectedBody, ModelIndex, Observed, Verdict, echo_context,
    pick_template,
};
use crate::rules::Suppressed;

/// The value the twin answered for the recorded `recorded`, when the session mapped it for a
/// position of `kind` ([`IdMap::symbol`]).
pub(crate) fn mapped<'m>(
    ids: &'m IdMap,
    recorded: &Value,
    kind: Option<&str>,
) -> Option<&'m Value> {
    match recorded {
        Value::String(s) if !s.is_empty() => ids.symbol(s, kind),
        Value::Number(n) => ids.symbol(&n.to_string(), kind),
        _ => None,
    }
}

/// Hold the answer `obs` to the ids of `ids` (the session's map *before* this exchange) and
/// add what it got wrong to `verdict` (after `[[diff.suppress]]`). `ex` is the exchange as
/// sent (the one the judge used), `expected` its recorded body. Does nothing when the body was
/// not compared (refusal, status mismatch, `HEAD`), a side is not JSON, or no template with a
/// `generated` position can be picked.
pub fn check(
    index: &ModelIndex<'_>,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    ids: &IdMap,
    opts: &DiffOptions,
    verdict: &mut Verdict,
) {
    check_memo(
        index,
        ex,
        expected,
        obs,
        ids,
        opts,
        verdict,
        &mut AnswerMemo::default(),
    );
}

/// [`check`] after [`crate::judge::judge_with_memo`] judged the same exchange into `memo`:
/// the answer is parsed only when the judge did not parse it already, and a parse made here
/// is left in `memo` for the id-flow step ([`crate::judge::generated_pairs_memo`]).
#[allow(clippy::too_many_arguments)]
pub fn check_memo(
    index: &ModelIndex<'_>,
    ex: &Exchange,
    expected: &ExpectedBody,
    obs: &Observed,
    ids: &IdMap,
    opts: &DiffOptions,
    verdict: &mut Verdict,
    memo: &mut AnswerMemo,
) {
    if ids.is_empty() || !verdict.facets.body_compared || ex.response.status != obs.status {
        return;
    }
    let Body::Json(recorded) = &expected.body else {
        return;
    };
    // The judge scanned the same bytes for the same map when it renamed the recording.
    let mentions = memo.mentions.unwrap_or_else(|| ids.scan(&expected.bytes));
    if !mentions.any {
        return;
    }
    let answered = memo.parsed_answer(&obs.body);
    let Body::Json(answered_tree) = answered else {
        return;
    };
    let Some(template) = pick_template(index, obs, answered) else {
        return;
    };
    let echo = echo_context(ex, obs);
    let kind = crate::judge::record_kind(index, ex, obs);
    let mut d = BodyDiff::new(&echo)
        .with_enums(index.enums())
        .with_record_type(kind.as_deref())
        .with_nested_types(index.nested_types());
    d.check_symbols(ids);
    // The id-flow step walks the same answer under the same template against the same
    // recording (`generated_pairs_memo`): its pairs are collected here, on the same walk
    // (neither watch changes what the walk visits).
    d.collect_generated_pairs();
    d.run(Some(template), recorded, answered_tree);
    memo.keep_pairs(d.take_generated_pairs());
    let Some(watch) = d.take_symbol_watch() else {
        return;
    };
    let mut changed = false;
    // The judge compared these positions with the recording, which names the entity by the
    // value the session never saw; the answer names it as the twin told the session.
    for t in &watch.translated {
        if let Some(i) = verdict.divergences.iter().position(|x| {
            x.path == t.path
                && x.category == t.category
                && x.expected == t.expected
                && x.actual == t.actual
        }) {
            verdict.divergences.remove(i);
            changed = true;
        }
    }
    // At a `generated` position the judge accepted any value of the type: holding it to the
    // mapped one is a comparison it did not count. An exact position it compared already.
    let compared_already: Vec<String> = watch
        .exact_mismatches
        .iter()
        .map(|d| d.path.clone())
        .collect();
    let found: Vec<Divergence> = watch
        .mismatches
        .into_iter()
        .chain(watch.exact_mismatches)
        .collect();
    if found.is_empty() {
        if changed {
            verdict.rescore();
        }
        return;
    }
    let found = match opts.rules.as_deref() {
        Some(rules) => {
            let (kept, removed) = rules.suppress(&verdict.route, found);
            verdict
                .facets
                .suppressed
                .extend(removed.into_iter().map(|(divergence, rule)| Suppressed {
                    divergence,
                    rule: rule.number,
                    reason: rule.reason.clone(),
                }));
            kept
        }
        None => found,
    };
    let mut added = changed;
    for div in found {
        if !verdict.facets.echo_failures.contains(&div.path) {
            verdict.facets.echo_failures.push(div.path.clone());
        }
        if let Some(x) = verdict.divergences.iter_mut().find(|x| x.path == div.path) {
            // The judge compared the recording renamed into the session's names
            // (`judge::judge_in_session`), so an answer still showing the recorded value is its
            // mismatch at that path: the same finding, named as the symbol rule names it.
            if x.category == Category::ValueMismatch
                && compared_already.contains(&div.path)
                && json_eq(&x.actual, &div.actual)
            {
                *x = div;
                added = true;
            }
            continue;
        }
        if !compared_already.contains(&div.path) {
            verdict.compared += 1;
        }
        verdict.divergences.push(div);
        added = true;
    }
    if added {
        verdict.rescore();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::diff::Category;
    use crate::idmap::IdPair;
    use crate::judge::{ReplayClaim, judge};
    use serde_json::json;

    /// `GET /v1/notes/:id` → 200 `{"id": <generated>, "owner": <generated>, "object": "note"}`.
    const MODEL: &str = r#"{
 "base_url": "https://api.notes.test",
 "diagnostics": [],
 "entity_types": {},
 "recorded_at": "2026-06-05T12:00:02Z",
 "routes": [{
   "entity_type": "notes", "exact": [], "exchange_count": 1, "id": "get_v1_notes_1",
   "latency": {"p50_ms": 1, "p90_ms": 1, "p99_ms": 1, "sample_count": 1},
   "method": "GET", "params": [], "path": "/v1/notes/:param", "state_op": "read",
   "variants": [{
     "body": {"kind": "json", "root": {"node": "object", "fields": [
       {"key": "id", "present_ratio_bp": 10000, "value": {"confidence_bp": 8000, "node": "hole",
        "observed_type": "string", "source": {"kind": "generated", "shape": {"charset":
        "lower_alnum", "length": 12, "prefix": "note_", "shape": "token"}}}},
       {"key": "object", "present_ratio_bp": 10000, "value": {"node": "const", "value": "note"}},
       {"key": "owner", "present_ratio_bp": 10000, "value": {"confidence_bp": 8000, "node": "hole",
        "observed_type": "number", "source": {"kind": "counter", "name": "owners"}}}
     ]}},
     "evidence": {"confidence_bp": 10000, "exchange_count": 1, "sources": ["s/1"]},
     "guard": {"guard": "always"},
     "headers": [],
     "id": "v1", "status": 200
   }]
 }],
 "schema_version": 1, "sessions": [], "tool_version": "0.1.0", "twin": "notes"
}"#;

    fn exchange(recorded: &Value) -> Exchange {
        let mut ex = crate::test_support::exchange(
            crate::test_support::get("/v1/notes/note_aaaaaaaaaaaa"),
            200,
        );
        ex.response.content_type = Some("application/json".into());
        ex.frames = vec![wraith_recording::exchange::Frame {
            direction: "server".into(),
            timestamp_us: 0,
            body: serde_json::to_vec(recorded).unwrap(),
            frame_type: "data".into(),
        }];
        ex
    }

    /// Judge `answer` to the recorded `GET path` under `model` (JSON text), then hold it to `ids`.
    fn judged_under(
        model: &str,
        path: &str,
        recorded: &Value,
        answer: &Value,
        ids: &IdMap,
        claim: bool,
    ) -> Verdict {
        let model: wraith_model::Model = serde_json::from_str(model).unwrap();
        let index = ModelIndex::new(&model);
        let mut ex = exchange(recorded);
        ex.request.path = path.into();
        let obs = Observed {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(answer).unwrap(),
            provenance: Some(wraith_engine::Provenance::Template),
            route: Some(format!("GET {}", model.routes[0].path)),
            replay: claim.then_some(ReplayClaim {
                class: wraith_engine::ReplayClass::SeriesMoment,
                outbound_policy_applied: false,
            }),
        };
        let opts = DiffOptions::default();
        let mut v = judge(&index, "s/1", &ex, &obs, &opts);
        check(
            &index,
            &ex,
            &ExpectedBody::of(&ex),
            &obs,
            ids,
            &opts,
            &mut v,
        );
        v
    }

    /// `answer` as the twin rendered it (a 200 JSON answer of the model's first route, no
    /// replay claim).
    fn rendered(model: &wraith_model::Model, answer: &Value) -> Observed {
        Observed {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(answer).unwrap(),
            provenance: Some(wraith_engine::Provenance::Template),
            route: Some(format!("GET {}", model.routes[0].path)),
            replay: None,
        }
    }

    /// Judge `answer` to the recorded read, then hold it to `ids`.
    fn judged(answer: Value, ids: &IdMap, claim: bool) -> Verdict {
        let recorded = json!({"id": "note_aaaaaaaaaaaa", "object": "note", "owner": 1});
        judged_under(
            MODEL,
            "/v1/notes/note_aaaaaaaaaaaa",
            &recorded,
            &answer,
            ids,
            claim,
        )
    }

    /// The id-flow step after the symbol check (which collects its pairs on its own walk)
    /// learns exactly the pairs it learns without the symbol check, for an answer naming the
    /// minted id, one naming another id, and one still naming the recorded id.
    #[test]
    fn pairs_collected_by_the_symbol_check_are_the_id_flow_steps_own() {
        let model: wraith_model::Model = serde_json::from_str(MODEL).unwrap();
        let index = ModelIndex::new(&model);
        let recorded = json!({"id": "note_aaaaaaaaaaaa", "object": "note", "owner": 1});
        let ex = exchange(&recorded);
        let expected = ExpectedBody::of(&ex);
        let opts = DiffOptions::default();
        for answer in [
            json!({"id": "note_bbbbbbbbbbbb", "object": "note", "owner": 7}),
            json!({"id": "note_cccccccccccc", "object": "note", "owner": 1}),
            json!({"id": "note_aaaaaaaaaaaa", "object": "note", "owner": 2}),
        ] {
            let obs = rendered(&model, &answer);
            let fresh = crate::judge::generated_pairs(&index, &ex, &expected, &obs);
            assert!(!fresh.is_empty(), "{answer}");
            let mut memo = AnswerMemo::default();
            let mut v = crate::judge::judge_with_memo(
                &index,
                "s/1",
                &ex,
                &expected,
                &obs,
                &opts,
                None,
                Some(&mut memo),
            );
            check_memo(
                &index,
                &ex,
                &expected,
                &obs,
                &minted(),
                &opts,
                &mut v,
                &mut memo,
            );
            let mut cache = crate::judge::DiffCache::default();
            let after = crate::judge::generated_pairs_memo(
                &index, &ex, &expected, &obs, &mut cache, &mut memo,
            );
            assert_eq!(after, fresh, "{answer}");
        }
    }

    fn minted() -> IdMap {
        let mut ids = IdMap::new();
        ids.learn([(json!("note_aaaaaaaaaaaa"), json!("note_bbbbbbbbbbbb"))]);
        ids
    }

    #[test]
    fn a_read_naming_the_id_the_twin_minted_passes() {
        let v = judged(
            json!({"id": "note_bbbbbbbbbbbb", "object": "note", "owner": 7}),
            &minted(),
            false,
        );
        assert!(v.divergences.is_empty(), "{:?}", v.divergences);
    }

    #[test]
    fn a_read_answering_another_id_than_the_minted_one_is_a_symbol_mismatch() {
        let v = judged(
            json!({"id": "note_cccccccccccc", "object": "note", "owner": 1}),
            &minted(),
            false,
        );
        assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
        let d = &v.divergences[0];
        assert_eq!(d.path, "body.id");
        assert_eq!(d.category, Category::SymbolMismatch);
        assert_eq!(
            d.expected,
            json!("note_bbbbbbbbbbbb"),
            "the id the twin gave"
        );
        assert_eq!(d.actual, json!("note_cccccccccccc"));
        assert_eq!(v.facets.echo_failures, vec!["body.id".to_string()]);
        assert!(v.score_bp < 10_000);
    }

    #[test]
    fn the_recorded_id_is_not_accepted_once_the_twin_answered_another() {
        let answer = json!({"id": "note_aaaaaaaaaaaa", "object": "note", "owner": 1});
        let v = judged(answer.clone(), &minted(), false);
        assert_eq!(v.divergences.len(), 1);
        assert_eq!(v.divergences[0].category, Category::SymbolMismatch);
        assert_eq!(v.divergences[0].actual, json!("note_aaaaaaaaaaaa"));
        // Under an exactness claim the positions still come from the template.
        let v = judged(answer, &minted(), true);
        assert_eq!(v.divergences.len(), 1);
    }

    #[test]
    fn unmapped_ids_keep_the_generated_relaxation() {
        let v = judged(
            json!({"id": "note_cccccccccccc", "object": "note", "owner": 9}),
            &IdMap::new(),
            false,
        );
        assert!(v.divergences.is_empty());
    }

    /// A session that was answered `7` for the recorded short id `1` at a position of `kind`.
    fn short_id_seen_at(kind: &str) -> IdMap {
        let mut ids = IdMap::new();
        ids.learn([IdPair {
            recorded: json!(1),
            answered: json!(7),
            kind: Some(kind.into()),
        }]);
        ids
    }

    #[test]
    fn numbers_are_held_to_their_mapped_number() {
        let v = judged(
            json!({"id": "note_cccccccccccc", "object": "note", "owner": 8}),
            &short_id_seen_at("notes:owner"),
            false,
        );
        assert_eq!(v.divergences.len(), 1);
        assert_eq!(v.divergences[0].path, "body.owner");
        assert_eq!(v.divergences[0].expected, json!(7));
    }

    /// An API counting each type's records from 1: the session's issue `1` was answered as
    /// `7`, and a note's owner `1` is another entity, not that issue.
    #[test]
    fn a_short_id_answered_at_another_kind_of_position_is_not_held_there() {
        let v = judged(
            json!({"id": "note_cccccccccccc", "object": "note", "owner": 1}),
            &short_id_seen_at("issues:id"),
            false,
        );
        assert!(v.divergences.is_empty(), "{:?}", v.divergences);
        // A pair read at no known kind of position holds no short id anywhere.
        let mut ids = IdMap::new();
        ids.learn([(json!(1), json!(7))]);
        let v = judged(
            json!({"id": "note_cccccccccccc", "object": "note", "owner": 1}),
            &ids,
            false,
        );
        assert!(v.divergences.is_empty(), "{:?}", v.divergences);
    }

    /// The symbol check and the id-flow step name the kinds alike: a short id read at the top
    /// of a route's record is of the route's entity type, one inside a nested object of that
    /// object's key.
    #[test]
    fn short_ids_are_learned_with_the_kind_of_their_position() {
        let model: wraith_model::Model = serde_json::from_str(MODEL).unwrap();
        let index = ModelIndex::new(&model);
        let recorded = json!({"id": "note_aaaaaaaaaaaa", "object": "note", "owner": 1});
        let ex = exchange(&recorded);
        let answer = json!({"id": "note_bbbbbbbbbbbb", "object": "note", "owner": 7});
        let obs = rendered(&model, &answer);
        let pairs = crate::judge::generated_pairs(&index, &ex, &ExpectedBody::of(&ex), &obs);
        let kinds: Vec<(Value, Option<String>)> =
            pairs.into_iter().map(|p| (p.recorded, p.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                (json!("note_aaaaaaaaaaaa"), None),
                (json!(1), Some("notes:owner".to_string()))
            ]
        );
        assert_eq!(
            crate::diff::position_kind(
                Some("issues"),
                &[
                    crate::rules::PathSeg::Index(0),
                    crate::rules::PathSeg::Key("user"),
                    crate::rules::PathSeg::Key("id")
                ],
                None
            ),
            "user.id"
        );
        // A nested key the model says holds records of a type names that type's field.
        let nested: std::collections::BTreeMap<String, String> =
            [("labels".to_string(), "labels".to_string())].into();
        assert_eq!(
            crate::diff::position_kind(
                Some("issues"),
                &[
                    crate::rules::PathSeg::Key("labels"),
                    crate::rules::PathSeg::Index(0),
                    crate::rules::PathSeg::Key("id")
                ],
                Some(&nested)
            ),
            "labels:id"
        );
    }

    #[test]
    fn a_position_the_judge_already_flagged_is_not_flagged_twice() {
        let v = judged(
            json!({"id": 5, "object": "note", "owner": 1}),
            &minted(),
            false,
        );
        assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
        assert_eq!(v.divergences[0].category, Category::TypeMismatch);
        assert_eq!(v.facets.echo_failures, vec!["body.id".to_string()]);
    }

    /// `GET /v1/notes/:id/links` → 200 `{"parent": "note_aaaaaaaaaaaa" (a constant: one
    /// recording), "reply_to": <observed: "note_aaaaaaaaaaaa" | "note_dddddddddddd">}`.
    fn judged_links(recorded: Value, answer: Value, ids: &IdMap) -> Verdict {
        let text = MODEL
            .replace("/v1/notes/:param\"", "/v1/notes/:param/links\"")
            .replace(
                r#"{"key": "id", "present_ratio_bp": 10000, "value": {"confidence_bp": 8000, "node": "hole",
        "observed_type": "string", "source": {"kind": "generated", "shape": {"charset":
        "lower_alnum", "length": 12, "prefix": "note_", "shape": "token"}}}},
       {"key": "object", "present_ratio_bp": 10000, "value": {"node": "const", "value": "note"}},
       {"key": "owner", "present_ratio_bp": 10000, "value": {"confidence_bp": 8000, "node": "hole",
        "observed_type": "number", "source": {"kind": "counter", "name": "owners"}}}"#,
                r#"{"key": "parent", "present_ratio_bp": 10000, "value": {"node": "const", "value": "note_aaaaaaaaaaaa"}},
       {"key": "reply_to", "present_ratio_bp": 10000, "value": {"confidence_bp": 3000, "node": "hole",
        "observed_type": "string", "source": {"kind": "observed"},
        "examples": ["note_aaaaaaaaaaaa", "note_dddddddddddd"]}}"#,
            );
        assert!(
            text.contains(":param/links") && text.contains("reply_to"),
            "the links model was not derived from MODEL"
        );
        judged_under(
            &text,
            "/v1/notes/note_aaaaaaaaaaaa/links",
            &recorded,
            &answer,
            ids,
            false,
        )
    }

    #[test]
    fn an_exact_position_showing_the_id_the_twin_gave_for_the_recorded_one_passes() {
        let recorded = json!({"parent": "note_aaaaaaaaaaaa", "reply_to": "note_aaaaaaaaaaaa"});
        let answer = json!({"parent": "note_bbbbbbbbbbbb", "reply_to": "note_bbbbbbbbbbbb"});
        // Without the session's map the recording's value is the only one accepted.
        let v = judged_links(recorded.clone(), answer.clone(), &IdMap::new());
        assert_eq!(v.divergences.len(), 2, "{:?}", v.divergences);
        // The session was given note_bbbbbbbbbbbb for note_aaaaaaaaaaaa: that is its name now.
        let v = judged_links(recorded, answer, &minted());
        assert!(v.divergences.is_empty(), "{:?}", v.divergences);
        assert_eq!(v.score_bp, 10_000);
    }

    #[test]
    fn an_exact_position_still_showing_the_recorded_id_is_a_symbol_mismatch() {
        let recorded = json!({"parent": "note_aaaaaaaaaaaa", "reply_to": "note_aaaaaaaaaaaa"});
        let v = judged_links(recorded.clone(), recorded, &minted());
        assert_eq!(v.divergences.len(), 2, "{:?}", v.divergences);
        for (d, path) in v.divergences.iter().zip(["body.parent", "body.reply_to"]) {
            assert_eq!(d.path, path);
            assert_eq!(d.category, Category::SymbolMismatch);
            assert_eq!(
                d.expected,
                json!("note_bbbbbbbbbbbb"),
                "the id the twin gave"
            );
            assert_eq!(d.actual, json!("note_aaaaaaaaaaaa"));
        }
        assert!(v.score_bp < 10_000);
    }

    #[test]
    fn an_exact_position_answering_a_third_value_stays_the_judges_mismatch() {
        let recorded = json!({"parent": "note_aaaaaaaaaaaa", "reply_to": "note_dddddddddddd"});
        let answer = json!({"parent": "note_cccccccccccc", "reply_to": "note_aaaaaaaaaaaa"});
        let v = judged_links(recorded, answer, &minted());
        // `parent`: neither the recording nor the twin's id: the judge's value mismatch.
        // `reply_to`: the recorded note_dddddddddddd is unmapped, and note_aaaaaaaaaaaa is a
        // recorded example, so the enum rule accepts it; nothing maps it here.
        assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
        assert_eq!(v.divergences[0].path, "body.parent");
        assert_eq!(v.divergences[0].category, Category::ValueMismatch);
        assert_eq!(v.divergences[0].expected, json!("note_aaaaaaaaaaaa"));
    }

    #[test]
    fn the_prefilter_never_skips_a_body_holding_a_mapped_token() {
        let ids = minted();
        assert!(ids.scan(br#"{"id":"note_aaaaaaaaaaaa"}"#).any);
        assert!(!ids.scan(br#"{"id":"note_zzz"}"#).any);
        let mut escaped = IdMap::new();
        escaped.learn([(json!("a/b"), json!("c"))]);
        assert!(escaped.scan(br#"{"id":"a\/b"}"#).any);
    }

    /// The links model of [`judged_links`]: `parent` a constant, `reply_to` observed.
    fn links_model() -> wraith_model::Model {
        let text = MODEL.replace("/v1/notes/:param\"", "/v1/notes/:param/links\"");
        serde_json::from_str(&text).unwrap()
    }

    /// Judge `answer` to the recorded `GET /v1/notes/note_aaaaaaaaaaaa/links` as the replay
    /// driver does in a session whose id map is `ids`: judged in the session's names
    /// ([`crate::judge::judge_in_session`]), then held to the map, with `opts` and `cache`.
    fn judged_in_session(
        recorded: &Value,
        answer: &Value,
        ids: &IdMap,
        opts: &DiffOptions,
        cache: Option<&mut crate::judge::DiffCache>,
    ) -> Verdict {
        let model = links_model();
        let index = ModelIndex::new(&model);
        let mut ex = exchange(recorded);
        ex.request.path = "/v1/notes/note_aaaaaaaaaaaa/links".into();
        let obs = rendered(&model, answer);
        let expected = ExpectedBody::of(&ex);
        let mut memo = AnswerMemo::default();
        let mut v = crate::judge::judge_in_session(
            &index,
            "s/1",
            &ex,
            &ex,
            &expected,
            &obs,
            opts,
            cache,
            Some(&mut memo),
            Some(ids),
        );
        check_memo(&index, &ex, &expected, &obs, ids, opts, &mut v, &mut memo);
        v
    }

    fn in_session(recorded: &Value, answer: &Value, ids: &IdMap) -> Verdict {
        judged_in_session(recorded, answer, ids, &DiffOptions::default(), None)
    }

    #[test]
    fn a_url_embedding_the_recorded_id_passes_when_it_names_the_id_the_twin_gave() {
        let recorded = json!({"parent": "/v1/notes/note_aaaaaaaaaaaa?view=full"});
        let answer = json!({"parent": "/v1/notes/note_bbbbbbbbbbbb?view=full"});
        // Whole values alone: the URL is not the id, so the consistent answer failed.
        let v = judged_links(recorded.clone(), answer.clone(), &minted());
        assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
        let v = in_session(&recorded, &answer, &minted());
        assert!(v.divergences.is_empty(), "{:?}", v.divergences);
        assert_eq!(v.score_bp, 10_000);
    }

    #[test]
    fn a_url_naming_another_id_than_the_twin_gave_still_fails() {
        let recorded = json!({"parent": "/v1/notes/note_aaaaaaaaaaaa"});
        for other in ["note_cccccccccccc", "note_aaaaaaaaaaaa"] {
            let answer = json!({ "parent": format!("/v1/notes/{other}") });
            let v = in_session(&recorded, &answer, &minted());
            assert_eq!(v.divergences.len(), 1, "{other}: {:?}", v.divergences);
            let d = &v.divergences[0];
            assert_eq!(d.path, "body.parent");
            assert_eq!(d.category, Category::ValueMismatch);
            assert_eq!(
                d.expected,
                json!("/v1/notes/note_bbbbbbbbbbbb"),
                "the recording in the session's names"
            );
            assert_eq!(d.actual, answer["parent"]);
        }
    }

    #[test]
    fn a_whole_value_still_showing_the_recorded_id_stays_a_symbol_mismatch_in_session() {
        let recorded = json!({"parent": "note_aaaaaaaaaaaa", "reply_to": "note_aaaaaaaaaaaa"});
        let v = in_session(&recorded, &recorded, &minted());
        assert_eq!(v.divergences.len(), 2, "{:?}", v.divergences);
        for d in &v.divergences {
            assert_eq!(d.category, Category::SymbolMismatch, "{d:?}");
            assert_eq!(d.expected, json!("note_bbbbbbbbbbbb"));
            assert_eq!(d.actual, json!("note_aaaaaaaaaaaa"));
        }
        let answer = json!({"parent": "note_cccccccccccc", "reply_to": "note_bbbbbbbbbbbb"});
        let v = in_session(&recorded, &answer, &minted());
        assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
        assert_eq!(v.divergences[0].path, "body.parent");
        assert_eq!(v.divergences[0].category, Category::ValueMismatch);
        assert_eq!(v.divergences[0].expected, json!("note_bbbbbbbbbbbb"));
    }

    #[test]
    fn a_short_id_is_not_renamed_inside_a_url() {
        let mut ids = IdMap::new();
        ids.learn([(json!(42), json!(77))]);
        let recorded = json!({"parent": "/v1/notes/42"});
        let v = in_session(&recorded, &json!({"parent": "/v1/notes/77"}), &ids);
        assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
        assert_eq!(v.divergences[0].expected, json!("/v1/notes/42"));
    }

    /// The outbound hook of these tests: a `[REDACTED]` secret becomes a placeholder seeded
    /// by its record's `id`, as the twin's outbound policy seeds one.
    fn seeded_placeholders() -> DiffOptions {
        DiffOptions {
            outbound: Some(crate::judge::OutboundHook(std::sync::Arc::new(
                |_: &str, _: &wraith_engine::Request, _: &str, v: &mut Value| {
                    let id = v["id"].as_str().unwrap_or("").to_string();
                    if v["secret"] == "[REDACTED]" {
                        v["secret"] = json!(format!("ph-{id}"));
                    }
                },
            ))),
            ..DiffOptions::default()
        }
    }

    #[test]
    fn a_value_the_outbound_policy_derives_from_a_renamed_id_matches_the_twins() {
        let opts = seeded_placeholders();
        let recorded = json!({"id": "note_aaaaaaaaaaaa", "secret": "[REDACTED]"});
        let answer = json!({"id": "note_bbbbbbbbbbbb", "secret": "ph-note_bbbbbbbbbbbb"});
        let v = judged_in_session(&recorded, &answer, &IdMap::new(), &opts, None);
        assert_eq!(
            v.divergences.len(),
            1,
            "seeded by the recorded key: {:?}",
            v.divergences
        );
        let v = judged_in_session(&recorded, &answer, &minted(), &opts, None);
        assert!(v.divergences.is_empty(), "{:?}", v.divergences);
        // A placeholder seeded by any other key than the one the session was given fails.
        let other = json!({"id": "note_bbbbbbbbbbbb", "secret": "ph-note_cccccccccccc"});
        let v = judged_in_session(&recorded, &other, &minted(), &opts, None);
        assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
        assert_eq!(v.divergences[0].path, "body.secret");
        assert_eq!(v.divergences[0].expected, json!("ph-note_bbbbbbbbbbbb"));
    }

    /// One diff cache across sessions: a diff kept for the recording as recorded is never
    /// reused for the recording renamed into a session's names, nor the other way round.
    #[test]
    fn reused_body_diffs_follow_the_recording_in_the_sessions_names() {
        let recorded = json!({"parent": "/v1/notes/note_aaaaaaaaaaaa"});
        let answer = json!({"parent": "/v1/notes/note_bbbbbbbbbbbb"});
        let other = json!({"parent": "/v1/notes/note_cccccccccccc"});
        let opts = DiffOptions::default();
        let mut cache = crate::judge::DiffCache::default();
        for _ in 0..2 {
            let v = judged_in_session(&recorded, &answer, &IdMap::new(), &opts, Some(&mut cache));
            assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
            let v = judged_in_session(&recorded, &answer, &minted(), &opts, Some(&mut cache));
            assert!(v.divergences.is_empty(), "{:?}", v.divergences);
            let v = judged_in_session(&recorded, &other, &minted(), &opts, Some(&mut cache));
            assert_eq!(v.divergences.len(), 1, "{:?}", v.divergences);
            assert_eq!(
                v.divergences[0].expected,
                json!("/v1/notes/note_bbbbbbbbbbbb")
            );
            let v = judged_in_session(&recorded, &other, &IdMap::new(), &opts, Some(&mut cache));
            assert_eq!(v.divergences[0].expected, recorded["parent"]);
        }
        assert!(!cache.is_empty(), "the failing diffs were kept");
    }
}
