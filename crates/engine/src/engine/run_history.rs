//! The recorded runs (recording sessions) behind the model's exact-replay moments, and each
//! run's write history: how many writes it had sent before a given exchange. A read's recorded
//! answer reflects the writes its run made before it, so among recorded runs that answered the
//! same read differently, the ones whose write history is closest to the session's own (the
//! number of writes it sent) describe its state best; when those still split evenly between
//! answers, the run where the read stands as far into it as the request stands in the session
//! decides (see `Engine::axis_pick`). A function of the model alone, built on first use.
//!
//! Runs are named by dense ids given in name order, so a set of ids iterates in the order a
//! set of names would: the replay choices stay what they were while every request compares
//! integers instead of session names.

use std::collections::BTreeMap;

use wraith_model::Model;

/// A recorded run, by its rank among the model's run names (see [`RunIndex`]).
pub(crate) type RunId = u32;

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
}
