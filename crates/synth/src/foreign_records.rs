//! Foreign records: which exchanges of a keyed route asked for a record their recording
//! session had created as another principal. A refusal every such exchange got, and no
//! success did, is the API's answer to a stranger (`Guard::ForeignRecord`).
//!
//! Not here: whether the principals are the same user under two credentials (the recordings
//! cannot say; two credential values are two principals).

use std::collections::BTreeMap;

use crate::observe::Obs;
use crate::routes::RouteGroup;

/// For each exchange of `group` (in `group.obs` order): whether the record its `id_param`
/// value names was created earlier in the same recording session by an answered (2xx)
/// `POST`/`PUT` sent by another principal (`Some(true)`), by the same one (`Some(false)`),
/// or by no create of that session (`None`). The nearest earlier create of the key counts.
/// `qualifier` is the route's [`wraith_model::Route::key_qualifier`].
pub fn foreign_flags(
    group: &RouteGroup,
    id_param: &str,
    qualifier: Option<&str>,
    pk: &str,
    obs: &[Obs<'_>],
) -> Vec<Option<bool>> {
    if !group.params.iter().any(|p| p == id_param) {
        return vec![None; group.obs.len()];
    }
    // `obs` is sorted by session, then recorded order, and `group.obs` ascends: one forward
    // walk per session reads each earlier create once. Key → principal of its latest create.
    let mut creators: BTreeMap<String, Option<&str>> = BTreeMap::new();
    let mut cursor = crate::observe::SessionCursor::default();
    let mut flags = Vec::with_capacity(group.obs.len());
    for (k, &i) in group.obs.iter().enumerate() {
        let asking = &obs[i];
        let (fresh, earlier) = cursor.advance(obs, i);
        if fresh {
            creators.clear();
        }
        for o in &obs[earlier] {
            for key in crate::list::written_keys(o, pk) {
                creators.insert(key, o.principal.as_deref());
            }
        }
        flags.push(
            group
                .key_value(k, id_param, qualifier)
                .and_then(|key| creators.get(&key))
                .map(|creator| *creator != asking.principal.as_deref()),
        );
    }
    flags
}

/// Whether the exchanges `refused` (positions into `group.obs`) are a stranger's refusal:
/// every one asked for a foreign record and none of the `accepted` did.
pub fn is_strangers_refusal(flags: &[Option<bool>], refused: &[usize], accepted: &[usize]) -> bool {
    !refused.is_empty()
        && refused.iter().all(|k| flags.get(*k) == Some(&Some(true)))
        && accepted.iter().all(|k| flags.get(*k) != Some(&Some(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_a_strangers_only_when_every_refused_record_was_foreign() {
        let flags = [Some(true), Some(true), Some(false), None];
        assert!(is_strangers_refusal(&flags, &[0, 1], &[2, 3]));
        assert!(!is_strangers_refusal(&flags, &[0, 3], &[2]));
        assert!(!is_strangers_refusal(&flags, &[0], &[1, 2]));
        assert!(!is_strangers_refusal(&flags, &[], &[2]));
    }
}
