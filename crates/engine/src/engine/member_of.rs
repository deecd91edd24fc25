//! A list of the records whose member list holds the record its path names
//! (`Route::member_of`): `GET /accounts/:id/lists` answers the lists the session's membership
//! actions (`POST /lists/:id/accounts`) left the account in, each as the session holds it. A
//! replayed answer listed the lists a recorded run had made.
//!
//! Not here: a session that never wrote the member list keeps the recorded answers (they show
//! memberships made outside any session), and memberships a fixture or a recording made are
//! not read back this way.

use super::{Call, Engine, Out};
use crate::namespace::Namespace;

impl Engine {
    /// The answer of a [`wraith_model::MemberOf`] list once the session's membership actions
    /// wrote its member list; `None` otherwise.
    pub(super) fn member_of_list(&self, ns: &mut Namespace, call: &Call<'_>) -> Option<Out> {
        if call.method != "GET" && !call.head {
            return None;
        }
        let route = &self.model.routes[call.m.route];
        let rule = route.member_of.as_ref()?;
        let ty = route.entity_type.as_deref()?;
        let (_, named) = call.m.params.first()?;
        let mut written = false;
        let mut parents: Vec<String> = Vec::new();
        for ((path, params), members) in &ns.members {
            if *path != rule.list_path {
                continue;
            }
            written = true;
            if let [parent] = params.as_slice()
                && members.contains(named)
            {
                parents.push(parent.clone());
            }
        }
        if !written {
            return None;
        }
        // Keys in their natural order: integer keys by value (`9` before `10`).
        parents.sort_by(|a, b| {
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
            if digits(a) && digits(b) {
                a.len().cmp(&b.len()).then_with(|| a.cmp(b))
            } else {
                a.cmp(b)
            }
        });
        let items = self.member_items(ns, route, &call.path, ty, &parents);
        Some(self.listed_items_out(ns, call, items))
    }
}
