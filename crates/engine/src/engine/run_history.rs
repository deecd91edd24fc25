//! The recorded runs (recording sessions) behind the model's exact-replay moments, and each
//! run's write history: how many writes it had sent before a given exchange. A read's recorded
//! answer reflects the writes its run made before it, so among recorded runs that answered the
//! same read differently, the ones whose write history is closest to the session's own (the
//! number of writes it sent) describe its state best. Those runs vote ([`majority_run`]): the
//! answer's shape ([`answer_shape`]) first, since runs mint their own ids and timestamps and so
//! rarely agree byte for byte, then the answer itself among the runs of the winning shape; when
//! they still split evenly, the run where the read stands as far into it as the request
//! stands in the session decides (see `Engine::axis_pick`). A function of the model alone,
//! built on first use.
//!
//! Runs are named by dense ids given in name order, so a set of ids iterates in the order a
//! set of names would: the replay choices stay what they were while every request compares
//! integers instead of session names.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use wraith_model::{Model, Moment, RecordedBody};

/// A recorded run, by its rank among the model's run names (see [`RunIndex`]).
pub(crate) type RunId = u32;

/// A set of recorded runs a namespace holds (`Namespace::replay_sessions`, `answer_runs`):
/// shared, not copied, between the namespaces a remembered time-axis choice is given to.
pub(crate) type RunSet = std::sync::Arc<std::collections::BTreeSet<RunId>>;

/// A moment's run, and where it stands in that run when its source names an exchange index.
pub(crate) type MomentRun = (RunId, Option<Position>);

/// Every recorded run the model's exact-replay moments name, and per moment its run and
/// where it stands in that run.
#[derive(Debug, Default)]
pub(crate) struct RunIndex {
    /// Run names, sorted; a [`RunId`] indexes this.
    names: Vec<String>,
    /// Route → exact entry → moment → (its run, its [`Position`] when its source names an
    /// exchange index).
    moments: Vec<Vec<Vec<MomentRun>>>,
}

/// Whether a request with this method can change server state.
pub(crate) fn is_write(method: &str) -> bool {
    !matches!(method, "GET" | "HEAD" | "OPTIONS")
}

/// `<run>/<index>` → (run, index).
fn split_source(source: &str) -> Option<(&str, u32)> {
    let (run, idx) = source.rsplit_once('/')?;
    Some((run, idx.parse().ok()?))
}

/// The recorded run (recording session) a moment's `source` (`<run>/<index>`) belongs to:
/// the part before its last `/` (empty without one).
pub(crate) fn run_of(source: &str) -> &str {
    source.rsplit_once('/').map_or("", |(run, _)| run)
}

impl RunIndex {
    pub(crate) fn build(model: &Model) -> RunIndex {
        // Per run, the sorted exchange indices of its writes (any method but `GET`, `HEAD`
        // and `OPTIONS`), gathered from every route's exact-replay moments.
        let mut writes: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
        let mut names: Vec<&str> = Vec::new();
        for route in &model.routes {
            for m in route.exact.iter().flat_map(|e| e.moments.iter()) {
                names.push(run_of(&m.source));
                if is_write(&route.method)
                    && let Some((run, idx)) = split_source(&m.source)
                {
                    writes.entry(run).or_default().push(idx);
                }
            }
        }
        for v in writes.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        names.sort_unstable();
        names.dedup();
        let id_of = |run: &str| {
            names
                .binary_search(&run)
                .map_or(0, |i| RunId::try_from(i).unwrap_or(RunId::MAX))
        };
        let position = |source: &str| {
            let (run, idx) = split_source(source)?;
            let before = writes
                .get(run)
                .map_or(0, |w| w.partition_point(|&i| i < idx));
            Some((before as u64, u64::from(idx)))
        };
        let moments = model
            .routes
            .iter()
            .map(|route| {
                route
                    .exact
                    .iter()
                    .map(|e| {
                        e.moments
                            .iter()
                            .map(|m| (id_of(run_of(&m.source)), position(&m.source)))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        RunIndex {
            names: names.into_iter().map(str::to_string).collect(),
            moments,
        }
    }

    /// The name of run `id` (empty for an id this index never gave).
    pub(crate) fn name(&self, id: RunId) -> &str {
        self.names.get(id as usize).map_or("", String::as_str)
    }

    /// The id of the run named `name`, when some moment names it.
    pub(crate) fn id(&self, name: &str) -> Option<RunId> {
        let i = self.names.binary_search_by(|n| n.as_str().cmp(name)).ok()?;
        RunId::try_from(i).ok()
    }

    /// Per moment of exact entry `ei` of route `r`: its run and where it stands in it.
    pub(crate) fn moments(&self, r: usize, ei: usize) -> &[MomentRun] {
        self.moments
            .get(r)
            .and_then(|e| e.get(ei))
            .map_or(&[], Vec::as_slice)
    }
}

/// Where a moment or a request stands in its run or session: the writes before it, then
/// all requests before it.
pub(crate) type Position = (u64, u64);

/// Of `runs`, the ones whose candidate moment's write count (`at`, first) is closest to the
/// session's (`sent.0`), ordered by how close the moment's request position is to the
/// session's (`sent.1`; a stable sort, so equally close runs keep their order): the caller's
/// majority vote stays a majority vote, and its ties go to the nearest position. Every run,
/// in order, when none has a position.
pub(crate) fn closest_history<R: Copy>(
    runs: &[R],
    sent: Position,
    at: impl Fn(R) -> Option<Position>,
) -> Vec<R> {
    let writes = |run: R| at(run).map(|(w, _)| w.abs_diff(sent.0));
    let Some(best) = runs.iter().filter_map(|r| writes(*r)).min() else {
        return runs.to_vec();
    };
    let mut kept: Vec<R> = runs
        .iter()
        .filter(|r| writes(**r).is_none_or(|d| d == best))
        .copied()
        .collect();
    kept.sort_by_cached_key(|r| at(*r).map_or(u64::MAX, |(_, n)| n.abs_diff(sent.1)));
    kept
}

/// Of `pool` (in order), the run whose answer most of them gave: first the answer's shape
/// (`shape`, see [`answer_shape`]) most of them had, then, among the runs of that shape, the
/// answer (`fp`, its fingerprint) most of them gave; each tie goes to the earliest run. Answers
/// that mint values (ids, timestamps) differ in every run, so a vote on the bytes alone would
/// rarely find a majority. `shape` is asked only when it can change the choice: for three runs
/// or more (two tie whatever their shapes) whose answers differ. `None` for an empty pool.
pub(crate) fn majority_run<R: Copy>(
    pool: &[R],
    fp: impl Fn(R) -> u64,
    shape: impl Fn(R) -> u64,
) -> Option<R> {
    let first = *pool.first()?;
    let same_answer = pool.iter().all(|run| fp(*run) == fp(first));
    let winners: Vec<R> = if pool.len() < 3 || same_answer {
        pool.to_vec()
    } else {
        let shapes: Vec<u64> = pool.iter().map(|run| shape(*run)).collect();
        let most = vote(&shapes, |s| s);
        pool.iter()
            .zip(&shapes)
            .filter(|(_, s)| **s == most)
            .map(|(run, _)| *run)
            .collect()
    };
    let best = vote(&winners, &fp);
    winners.into_iter().find(|run| fp(*run) == best)
}

/// Of `runs` (in order), the key most of them have (`key_of`); ties go to the key of the
/// earliest run.
fn vote<R: Copy>(runs: &[R], key_of: impl Fn(R) -> u64) -> u64 {
    let mut tally: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    for (order, run) in runs.iter().enumerate() {
        let slot = tally.entry(key_of(*run)).or_insert((0, order));
        slot.0 += 1;
    }
    tally
        .iter()
        .max_by(|a, b| a.1.0.cmp(&b.1.0).then(b.1.1.cmp(&a.1.1)))
        .map_or(0, |(key, _)| *key)
}

/// A recorded answer's shape, as a client tells answers apart: its status, then for a JSON
/// body the object keys, the value types and the array lengths, never a scalar's value (runs
/// mint their own ids and timestamps, and counters drift between runs, so values would set
/// every run apart). An array's items count as a multiset: lists differ in their items'
/// shapes, not in their order. A text or binary body counts whole. Compared only with shapes
/// of the same engine.
pub(crate) fn answer_shape(m: &Moment) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    m.status.hash(&mut h);
    match &m.body {
        RecordedBody::Empty => 0u8.hash(&mut h),
        RecordedBody::Json { value } => {
            1u8.hash(&mut h);
            let mut de = serde_json::Deserializer::from_str(value.as_str());
            match ShapeSeed.deserialize(&mut de) {
                Ok(shape) => shape.hash(&mut h),
                Err(_) => value.as_str().hash(&mut h),
            }
        }
        RecordedBody::Text { text } => (2u8, text).hash(&mut h),
        RecordedBody::Binary { base64 } => (3u8, base64).hash(&mut h),
    }
    h.finish()
}

/// Hashes a JSON value's shape while it is parsed: no tree is built (a vote may shape every
/// moment of a much-recorded read).
struct ShapeSeed;

fn shape_hash(tag: u8, parts: impl Hash) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    (tag, parts).hash(&mut h);
    h.finish()
}

impl<'de> DeserializeSeed<'de> for ShapeSeed {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<u64, D::Error> {
        deserializer.deserialize_any(ShapeSeed)
    }
}

impl<'de> Visitor<'de> for ShapeSeed {
    type Value = u64;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<u64, E> {
        Ok(shape_hash(0, ()))
    }
    fn visit_none<E>(self) -> Result<u64, E> {
        Ok(shape_hash(0, ()))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_any(ShapeSeed)
    }
    fn visit_bool<E>(self, _: bool) -> Result<u64, E> {
        Ok(shape_hash(1, ()))
    }
    fn visit_i64<E>(self, _: i64) -> Result<u64, E> {
        Ok(shape_hash(2, ()))
    }
    fn visit_u64<E>(self, _: u64) -> Result<u64, E> {
        Ok(shape_hash(2, ()))
    }
    fn visit_f64<E>(self, _: f64) -> Result<u64, E> {
        Ok(shape_hash(2, ()))
    }
    fn visit_str<E>(self, _: &str) -> Result<u64, E> {
        Ok(shape_hash(3, ()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        // A list's items as a multiset: lists differ in their items' shapes, not their order.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ShapeSeed)? {
            items.push(item);
        }
        items.sort_unstable();
        Ok(shape_hash(4, items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        // Keys in sorted order (of their hashes): the recorded order is the provider's.
        let mut fields = Vec::new();
        while let Some(key) = map.next_key_seed(KeyHash)? {
            fields.push((key, map.next_value_seed(ShapeSeed)?));
        }
        fields.sort_unstable();
        Ok(shape_hash(5, fields))
    }
}

/// An object key, hashed where it is parsed.
struct KeyHash;

impl<'de> DeserializeSeed<'de> for KeyHash {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<u64, D::Error> {
        deserializer.deserialize_str(KeyHash)
    }
}

impl<'de> Visitor<'de> for KeyHash {
    type Value = u64;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E>(self, key: &str) -> Result<u64, E> {
        Ok(shape_hash(6, key))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::test_models::demo_model;

    #[test]
    fn run_ids_follow_run_names_so_id_sets_iterate_as_name_sets_do() {
        let mut model = demo_model();
        // Two more runs recorded the first exact request, named to sort around the demo's.
        let entry = model
            .routes
            .iter_mut()
            .find_map(|r| r.exact.first_mut())
            .expect("the demo has an exact entry");
        let mut first = entry.moments[0].clone();
        first.source = "0-first/3".into();
        let mut last = first.clone();
        last.source = "zz-last/0".into();
        entry.moments.extend([first, last]);
        let index = RunIndex::build(&model);
        assert!(index.names.len() >= 3);
        assert_eq!(index.names.first().map(String::as_str), Some("0-first"));
        assert_eq!(index.names.last().map(String::as_str), Some("zz-last"));
        assert!(index.names.windows(2).all(|w| w[0] < w[1]));
        for (i, name) in index.names.iter().enumerate() {
            assert_eq!(index.id(name), Some(i as RunId));
            assert_eq!(index.name(i as RunId), name);
        }
        assert_eq!(index.id("no such run"), None);
        for (r, route) in model.routes.iter().enumerate() {
            for (ei, entry) in route.exact.iter().enumerate() {
                let at = index.moments(r, ei);
                assert_eq!(at.len(), entry.moments.len());
                for (m, (run, _)) in entry.moments.iter().zip(at) {
                    assert_eq!(index.name(*run), run_of(&m.source));
                }
            }
        }
    }

    #[test]
    fn a_moments_position_counts_the_writes_its_run_sent_before_it() {
        let model = demo_model();
        let index = RunIndex::build(&model);
        // Every (run, exchange index) the model recorded a write at.
        let writes: Vec<(&str, u32)> = model
            .routes
            .iter()
            .filter(|r| is_write(&r.method))
            .flat_map(|r| r.exact.iter().flat_map(|e| e.moments.iter()))
            .filter_map(|m| split_source(&m.source))
            .collect();
        let mut checked = 0;
        for (r, route) in model.routes.iter().enumerate() {
            for (ei, entry) in route.exact.iter().enumerate() {
                for (m, (_, position)) in entry.moments.iter().zip(index.moments(r, ei)) {
                    let (run, idx) = split_source(&m.source).expect("demo sources are indexed");
                    let mut before: Vec<u32> = writes
                        .iter()
                        .filter(|(w, i)| *w == run && *i < idx)
                        .map(|(_, i)| *i)
                        .collect();
                    before.sort_unstable();
                    before.dedup();
                    assert_eq!(*position, Some((before.len() as u64, u64::from(idx))));
                    checked += 1;
                }
            }
        }
        assert!(checked > 0);
        assert_eq!(index.moments(usize::MAX, 0), &[]);
    }

    #[test]
    fn closest_history_keeps_the_runs_whose_prior_writes_match_the_sessions() {
        let at = |run: &str| match run {
            "a" => Some((1, 2)),
            "b" => Some((1, 2)),
            "c" => Some((0, 2)),
            _ => None,
        };
        assert_eq!(closest_history(&["a", "b", "c"], (0, 2), at), vec!["c"]);
        assert_eq!(
            closest_history(&["a", "b", "c"], (1, 2), at),
            vec!["a", "b"]
        );
        // A session that sent more writes than any run: the nearest ones.
        assert_eq!(closest_history(&["a", "c"], (5, 9), at), vec!["a"]);
        assert_eq!(closest_history(&["x"], (3, 3), at), vec!["x"]);
    }

    #[test]
    fn closest_history_orders_a_write_tie_by_the_requests_before() {
        let at = |run: &str| match run {
            "early" => Some((0, 0)),
            "late" => Some((0, 2)),
            "later" => Some((0, 5)),
            _ => None,
        };
        assert_eq!(
            closest_history(&["late", "early", "later"], (0, 0), at),
            vec!["early", "late", "later"]
        );
        assert_eq!(
            closest_history(&["late", "early", "later"], (0, 4), at),
            vec!["later", "late", "early"]
        );
    }

    fn json_moment(status: u16, body: serde_json::Value) -> Moment {
        Moment {
            source: "r/0".into(),
            principal: None,
            respelled: false,
            status,
            headers: Vec::new(),
            body: RecordedBody::json(body),
        }
    }

    #[test]
    fn answer_shape_ignores_scalar_values_and_key_order_but_not_fields_types_or_lengths() {
        use serde_json::json;
        let shape = |status, body| answer_shape(&json_moment(status, body));
        let base = shape(200, json!({"id": "1", "n": 3, "tags": ["a"], "ok": true}));
        // Other ids, counters and list items of the same types; another key order.
        assert_eq!(
            base,
            shape(200, json!({"ok": false, "tags": ["b"], "n": 4, "id": "2"}))
        );
        for other in [
            json!({"id": "1", "n": 3, "tags": [], "ok": true}),
            json!({"id": "1", "n": 3, "tags": ["a", "b"], "ok": true}),
            json!({"id": "1", "n": "3", "tags": ["a"], "ok": true}),
            json!({"id": "1", "n": null, "tags": ["a"], "ok": true}),
            json!({"id": "1", "n": 3, "tags": ["a"]}),
            json!({"id": "1", "n": 3, "tags": ["a"], "ok": true, "extra": 1}),
        ] {
            assert_ne!(base, shape(200, other.clone()), "{other}");
        }
        assert_ne!(
            base,
            shape(201, json!({"id": "1", "n": 3, "tags": ["a"], "ok": true}))
        );
        // A list's items are a multiset: the same item shapes in another order are one shape.
        assert_eq!(
            shape(200, json!([{"a": 1}, "x"])),
            shape(200, json!(["y", {"a": 2}]))
        );
    }

    #[test]
    fn vote_takes_the_most_common_key_and_breaks_ties_by_run_order() {
        assert_eq!(vote(&[1u64, 2, 2, 3], |k| k), 2);
        assert_eq!(vote(&[3u64, 1, 1, 3], |k| k), 3);
        assert_eq!(vote(&[5u64], |k| k), 5);
        assert_eq!(vote::<u64>(&[], |k| k), 0);
    }

    proptest::proptest! {
        /// The chosen run gave a most common shape, and among the runs of that shape a most
        /// common answer; no earlier run of the same shape gave an answer as common.
        #[test]
        fn majority_run_takes_the_most_common_shape_then_answer(
            runs in proptest::collection::vec((0u64..3, 0u64..4), 0..9)
        ) {
            // A run: (shape, answer); an answer always has one shape.
            let runs: Vec<(u64, u64)> = runs.into_iter().map(|(s, a)| (s, s * 10 + a)).collect();
            let got = majority_run(&runs, |r| r.1, |r| r.0);
            if runs.is_empty() {
                proptest::prop_assert!(got.is_none());
                return Ok(());
            }
            let got = got.unwrap();
            let count = |f: &dyn Fn(&(u64, u64)) -> bool| runs.iter().filter(|r| f(r)).count();
            if runs.len() < 3 {
                proptest::prop_assert_eq!(got, runs[0]);
                return Ok(());
            }
            let shape_n = count(&|r| r.0 == got.0);
            proptest::prop_assert!(runs.iter().all(|x| count(&|r| r.0 == x.0) <= shape_n));
            // A shape as common as the chosen one starts no earlier.
            let first_of_shape = runs.iter().position(|r| r.0 == got.0).unwrap();
            for (i, x) in runs.iter().enumerate() {
                if count(&|r| r.0 == x.0) == shape_n {
                    proptest::prop_assert!(first_of_shape <= i);
                }
            }
            let answer_n = count(&|r| r.1 == got.1);
            for (i, x) in runs.iter().enumerate().filter(|(_, x)| x.0 == got.0) {
                let n = count(&|r| r.1 == x.1);
                proptest::prop_assert!(n <= answer_n);
                let first_of_got = runs.iter().position(|r| r.1 == got.1).unwrap();
                if n == answer_n {
                    proptest::prop_assert!(first_of_got <= i);
                }
            }
        }
    }
}
