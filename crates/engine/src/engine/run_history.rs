//! Write history of the recorded runs: how many writes each recorded run had sent before a
//! given exchange. A read's recorded answer reflects the writes its run made before it, so
//! among recorded runs that answered the same read differently, the ones whose write history
//! is closest to the session's own (the number of writes it sent) describe its state best;
//! when those still split evenly between answers, the run where the read stands as far into
//! it as the request stands in the session decides (see `Engine::axis_pick`). A function of
//! the model alone, built on first use.

use std::collections::BTreeMap;

use wraith_model::Model;

/// Per recorded run (session id), the sorted exchange indices of its writes (any method but
/// `GET`, `HEAD` and `OPTIONS`), gathered from every route's exact-replay moments.
#[derive(Debug, Default)]
pub(crate) struct RunWrites(BTreeMap<String, Vec<u32>>);

/// Whether a request with this method can change server state.
pub(crate) fn is_write(method: &str) -> bool {
    !matches!(method, "GET" | "HEAD" | "OPTIONS")
}

/// `<run>/<index>` → (run, index).
fn split_source(source: &str) -> Option<(&str, u32)> {
    let (run, idx) = source.rsplit_once('/')?;
    Some((run, idx.parse().ok()?))
}

impl RunWrites {
    pub(crate) fn build(model: &Model) -> RunWrites {
        let mut runs: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for route in model.routes.iter().filter(|r| is_write(&r.method)) {
            for m in route.exact.iter().flat_map(|e| e.moments.iter()) {
                if let Some((run, idx)) = split_source(&m.source) {
                    runs.entry(run.to_string()).or_default().push(idx);
                }
            }
        }
        for v in runs.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        RunWrites(runs)
    }

    /// Where moment `source` stands in its run: the writes the run recorded before it, and
    /// its exchange index; `None` when the source names no exchange index.
    pub(crate) fn position(&self, source: &str) -> Option<Position> {
        let (run, idx) = split_source(source)?;
        let writes = self
            .0
            .get(run)
            .map_or(0, |w| w.partition_point(|&i| i < idx));
        Some((writes as u64, u64::from(idx)))
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
pub(crate) fn closest_history<'a>(
    runs: &[&'a str],
    sent: Position,
    at: impl Fn(&str) -> Option<Position>,
) -> Vec<&'a str> {
    let writes = |run: &str| at(run).map(|(w, _)| w.abs_diff(sent.0));
    let Some(best) = runs.iter().filter_map(|r| writes(r)).min() else {
        return runs.to_vec();
    };
    let mut kept: Vec<&'a str> = runs
        .iter()
        .filter(|r| writes(r).is_none_or(|d| d == best))
        .copied()
        .collect();
    kept.sort_by_key(|r| at(r).map_or(u64::MAX, |(_, n)| n.abs_diff(sent.1)));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

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
