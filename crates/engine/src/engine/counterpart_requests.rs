//! Counterpart requests: a request naming the session's own record (`mine`, minted by a create
//! answered from one recorded run) that only another run R recorded, where it names R's record
//! of the same create (`theirs`), is answered with R's recorded moment.
//!
//! Why: the same first write (a status post, an upload, a list create) is often recorded
//! identically by many runs, each minting its own id. Nothing tells those runs apart when the
//! session sends it, so it is answered from one of them; the session's follow-up (pin that
//! status; post with that upload) may have been recorded only in another run, under that run's
//! id. Its own request key names the session's id, so exact replay misses it, yet the
//! recordings hold its answer. `Namespace::counterparts` (filled by `Engine::note_counterparts`
//! on every replayed create) says which record of R stands for which of the session's.
//!
//! What happens: the request's whole-token mentions of such a record (path segments, query
//! values, JSON or form body leaves, multipart text parts) are replaced with R's record, the result is keyed exactly as
//! exact entries are (`Engine::exact_entry`, which calls `wraith_model::request_key`), and when
//! R recorded that request its moment is replayed through the ordinary exact-replay path
//! restricted to R's moments, so the time axis narrows to R like any replay from R and the
//! answer's R records are renamed to the session's (`crate::embedded_counterparts`). Every
//! whole-token mention of a record substituted into the request (a reference field such as
//! `config_id`, a URL) is renamed back too ([`CounterpartRun::rename_back`]), before the
//! answer's effects are applied. An action's answer that is the session's record (in R's
//! version) becomes the session's record, since R's later answers show that version.
//!
//! Counterparts are also learned through requests: a replayed create whose request names the
//! session's records (an item created under the session's list) was recorded by other runs
//! under their own records' names; what R's such create minted stands for the session's new
//! record (`Engine::note_counterpart_creates`), so R's list of the parent's items holds the
//! session's item in its place.
//!
//! The answer is `X-Wraith-Provenance: recorded` with R's `X-Wraith-Exchange` (its bytes are a
//! recorded moment's, bar the renamed identities) and never carries an `X-Wraith-Replay` claim:
//! the moment was recorded for a different request (another run's ids), so it is not provably
//! this request's own moment.
//!
//! A multipart body's text parts (`media_ids[]`, `in_reply_to_id` sent as multipart) are read
//! and rewritten as the request key splits them (`wraith_model::request_key`, which reduces
//! multipart to its sorted parts): a text part whose whole content is the session's record is
//! replaced in place, every other byte kept, so the rewritten body keys as R's recorded one
//! did whatever boundary either used. File parts are left as they are (their bytes identify the
//! upload, never a record).
//!
//! Not here: requests that exact-replay under their own key (unchanged), strict fidelity (which
//! serves only what the request's own key recorded).

use super::run_history::{RunIndex, run_of};
use super::*;

/// A recorded run whose recording of a request is served for the session's request naming
/// the session's records (`subs`: the session's record -> that run's counterpart of it).
pub(super) struct CounterpartRun<'a> {
    pub run: &'a str,
    pub subs: &'a BTreeMap<String, String>,
}

impl CounterpartRun<'_> {
    /// The run's answer as the session's: every whole-token mention of a record substituted
    /// into the request (an echoed path parameter, a reference such as `config_id`, a URL)
    /// names the session's record again, before the answer's effects are applied. Never a
    /// replay claim: the moment was recorded for another request.
    pub(super) fn rename_back(&self, out: &mut Out) {
        out.replay = None;
        if let OutBody::Raw(raw) = &out.body
            && !self
                .subs
                .values()
                .any(|theirs| memchr::memmem::find(&raw.text, theirs.as_bytes()).is_some())
        {
            return;
        }
        out.body.materialize();
        if let OutBody::Json(body) = &mut out.body {
            for (mine, theirs) in self.subs {
                embedded_counterparts::rename_tokens(body, theirs, mine);
            }
        }
    }
}

impl Engine {
    /// Serve a request that missed exact replay under its own key from another recorded run's
    /// recording of it, when the request names records of the session that have counterparts
    /// in that run (see the module doc). `exact`: the request's own exact entry, if any; only a
    /// request with none, or whose entry holds no moment, is considered.
    pub(super) fn counterpart_replay(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        exact: Option<usize>,
    ) -> Option<Out> {
        if ns.counterparts.is_empty() {
            return None;
        }
        let route = &self.model.routes[call.m.route];
        if route.exact.is_empty() || exact.is_some_and(|ei| !route.exact[ei].moments.is_empty()) {
            return None;
        }
        let runs = counterpart_runs(self.run_index(), ns, call);
        for (run, subs) in &runs {
            let Some(ei) = self.substituted_entry(call, subs) else {
                continue;
            };
            if !route.exact[ei]
                .moments
                .iter()
                .any(|m| run_of(&m.source) == run)
            {
                continue;
            }
            let counterpart = CounterpartRun { run, subs };
            if let Some(out) = self.exact_replay_of(ns, call, ei, Some(&counterpart)) {
                self.adopt_the_runs_record(ns, call, &out);
                return Some(out);
            }
        }
        None
    }

    /// An action's answer that is the record the action names (the session's record, in the
    /// run's version, renamed) becomes the session's record: the session now replays that run
    /// (its time axis narrowed there), whose later answers (a pinned list, an embedded status)
    /// show the run's version, so the session's own reads and lists of the record (answered
    /// from its store) must show the same, as the action's answer does.
    fn adopt_the_runs_record(&self, ns: &mut Namespace, call: &Call<'_>, out: &Out) {
        let Some((action, id)) = self.acted_on(call, out.status) else {
            return;
        };
        let ty = action.entity_type.as_str();
        let Some((origin, held)) = ns.entity(ty, id).map(|e| (e.origin, e.value.clone())) else {
            return;
        };
        let pk = self.pk_of(ty);
        let Some(body) = out.body.json() else {
            return;
        };
        if let Some(Value::Object(answer)) = body.pointer(&action.at)
            && answer.get(&pk).and_then(fixtures::scalar_key).as_deref() == Some(id)
        {
            let mut record = answer.clone();
            // What the action answered without it lasting (a `resizing` status) is not the
            // record's.
            for f in &action.answered_fields {
                match held.get(f) {
                    Some(v) => record.insert(f.clone(), v.clone()),
                    None => record.remove(f),
                };
            }
            ns.put(ty, id, Value::Object(record), origin, None);
        }
    }

    /// A replayed create (answered from the moment recorded as `source`, at `position` on its
    /// time axis) whose request names records of the session that have counterparts: every
    /// other run R that recorded the same create under its own records' names (the request
    /// with the session's records replaced by R's) created R's record of it there, so that
    /// record stands for the session's new one (`Namespace::counterparts`), as for a create
    /// recorded identically by several runs (`Engine::note_counterparts`). A record created
    /// under a parent (a domain's record, a balancer's config) is then recognized in R's later
    /// answers, e.g. a list of the parent's records.
    pub(super) fn note_counterpart_creates(
        &self,
        ns: &mut Namespace,
        call: &Call<'_>,
        source: &str,
        position: usize,
        out: &Out,
    ) {
        if ns.counterparts.is_empty() {
            return;
        }
        let r = call.m.route;
        let route = &self.model.routes[r];
        let Some(ty) = route.entity_type.as_deref() else {
            return;
        };
        let runs = counterpart_runs(self.run_index(), ns, call);
        if runs.is_empty() {
            return;
        }
        let pk = self.pk_of(ty);
        let Some(mine) = out.body.json().and_then(|body| entity_key(&body, &pk)) else {
            return;
        };
        let served_run = run_of(source);
        for (run, subs) in &runs {
            if run == served_run {
                continue;
            }
            let Some(ei) = self.substituted_entry(call, subs) else {
                continue;
            };
            let moments =
                self.run_candidates(&route.exact[ei].moments, call.principal.as_deref(), run);
            let Some(&(ci, m)) = moments.get(position) else {
                continue;
            };
            let theirs = self
                .entity_keys
                .get((r, ei, ci), || match &m.body {
                    RecordedBody::Json { value } => {
                        value.parse().ok().and_then(|value| entity_key(&value, &pk))
                    }
                    _ => None,
                })
                .cloned()
                .flatten();
            if let Some(theirs) = theirs
                && theirs != mine
            {
                ns.counterparts
                    .insert((ty.to_string(), run.clone(), theirs), mine.clone());
            }
        }
    }

    /// The exact entry of the request with every whole-token mention of a key of `subs`
    /// replaced by its value, keyed as any request is ([`Engine::exact_entry`]).
    fn substituted_entry(&self, call: &Call<'_>, subs: &BTreeMap<String, String>) -> Option<usize> {
        let ct = call.content_type();
        let req = Request {
            method: call.req.method.clone(),
            path: substitute_path(&call.req.path, subs),
            query: substitute_query(&call.req.query, subs),
            headers: call.req.headers.clone(),
            body: substitute_body(ct, &call.req.body, subs),
        };
        let sub = Call {
            req: &req,
            principal: call.principal.clone(),
            method: call.method.clone(),
            head: call.head,
            path: substitute_path(&call.path, subs),
            query: Vec::new(),
            body: None,
            m: Matched {
                route: call.m.route,
                params: Vec::new(),
            },
        };
        self.exact_entry(&sub)
    }

    /// The moments of an exact entry recorded by `run` this request may be served: the
    /// principal's own among them when there are any (as [`Engine::candidate_moments`]).
    pub(super) fn run_candidates<'m>(
        &self,
        moments: &'m [Moment],
        principal: Option<&str>,
        run: &str,
    ) -> Vec<Cand<'m>> {
        let mut own = self.candidate_moments(moments, principal);
        own.retain(|(_, m)| run_of(&m.source) == run);
        if own.is_empty() {
            own = moments
                .iter()
                .enumerate()
                .filter(|(_, m)| run_of(&m.source) == run)
                .collect();
        }
        own
    }
}

/// The runs holding counterparts of records the request names, in the order they are tried
/// (runs the session was already served answers from, then runs its requests are still
/// consistent with, then the rest; by name within each), each with its substitution
/// `mine -> theirs` (the first type's, should two types share a key).
fn counterpart_runs(
    runs: &RunIndex,
    ns: &Namespace,
    call: &Call<'_>,
) -> Vec<(String, BTreeMap<String, String>)> {
    let named = named_tokens(call);
    if named.is_empty() {
        return Vec::new();
    }
    let mut by_run: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for ((_, run, theirs), mine) in &ns.counterparts {
        if named.contains(mine.as_str()) {
            by_run
                .entry(run.as_str())
                .or_default()
                .entry(mine.as_str())
                .or_insert(theirs.as_str());
        }
    }
    let rank = |run: &str| -> u8 {
        let id = runs.id(run);
        let in_set = |set: &Option<run_history::RunSet>| {
            set.as_ref()
                .is_some_and(|s| id.is_some_and(|id| s.contains(&id)))
        };
        if in_set(&ns.answer_runs) {
            0
        } else if in_set(&ns.replay_sessions) {
            1
        } else {
            2
        }
    };
    let mut runs: Vec<(u8, String, BTreeMap<String, String>)> = by_run
        .into_iter()
        .map(|(run, subs)| {
            let subs = subs
                .into_iter()
                .map(|(m, t)| (m.to_string(), t.to_string()))
                .collect();
            (rank(run), run.to_string(), subs)
        })
        .collect();
    runs.sort();
    runs.into_iter().map(|(_, run, subs)| (run, subs)).collect()
}

/// Every value the request names that could be a record's key: path parameters, query values
/// and body leaves (strings and numbers), at least [`MIN_PROOF_ID_LEN`] long (short values are
/// far more often flags, limits and pages than ids).
fn named_tokens(call: &Call<'_>) -> BTreeSet<String> {
    fn leaves(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::String(s) => {
                out.insert(s.clone());
            }
            Value::Number(n) => {
                out.insert(n.to_string());
            }
            Value::Array(items) => items.iter().for_each(|i| leaves(i, out)),
            Value::Object(map) => map.values().for_each(|i| leaves(i, out)),
            _ => {}
        }
    }
    let mut out: BTreeSet<String> = call
        .m
        .params
        .iter()
        .chain(call.query.iter())
        .map(|(_, v)| v.clone())
        .collect();
    if let Some(body) = &call.body {
        leaves(body, &mut out);
    } else if let Some(ct) = call.content_type() {
        for (_, text) in multipart_text_parts(ct, &call.req.body).unwrap_or_default() {
            out.insert(text.to_string());
        }
    }
    out.retain(|v| v.len() >= MIN_PROOF_ID_LEN);
    out
}

/// The text parts of a `multipart/form-data` body (parts without a filename whose content is
/// UTF-8), each with where its content lies in `body`, split as the request key splits them.
/// `None` when the body is not multipart or does not parse; file parts are never listed.
fn multipart_text_parts<'b>(
    content_type: &str,
    body: &'b [u8],
) -> Option<Vec<(std::ops::Range<usize>, &'b str)>> {
    if !content_type
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
    {
        return None;
    }
    let parts = wraith_model::request_key::multipart_part_spans(content_type, body)?;
    Some(
        parts
            .into_iter()
            .filter(|(_, filename, _)| filename.is_empty())
            .filter_map(|(_, _, span)| {
                let text = std::str::from_utf8(body.get(span.clone())?).ok()?;
                Some((span, text))
            })
            .collect(),
    )
}

/// A path with every segment equal to a key of `subs` replaced.
fn substitute_path(path: &str, subs: &BTreeMap<String, String>) -> String {
    path.split('/')
        .map(|seg| subs.get(seg).map_or(seg, String::as_str))
        .collect::<Vec<_>>()
        .join("/")
}

/// A query string with every value equal to a key of `subs` replaced (re-encoded; the request
/// key normalizes the encoding anyway).
fn substitute_query(query: &str, subs: &BTreeMap<String, String>) -> String {
    if query.is_empty() {
        return String::new();
    }
    let pairs = form_urlencoded::parse(query.as_bytes()).map(|(k, v)| {
        let v = subs
            .get(v.as_ref())
            .cloned()
            .unwrap_or_else(|| v.into_owned());
        (k.into_owned(), v)
    });
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// A body with every JSON leaf, form value or multipart text part equal to a key of `subs`
/// replaced. Other bodies (and a multipart body's file parts) are returned as they are.
fn substitute_body(ct: Option<&str>, body: &Bytes, subs: &BTreeMap<String, String>) -> Bytes {
    if body.is_empty() {
        return body.clone();
    }
    if let Some(parts) = ct.and_then(|ct| multipart_text_parts(ct, body)) {
        return substitute_multipart(body, &parts, subs);
    }
    let form = ct.is_some_and(|ct| {
        ct.to_ascii_lowercase()
            .starts_with("application/x-www-form-urlencoded")
    });
    if form {
        let pairs = form_urlencoded::parse(body).map(|(k, v)| {
            let v = subs
                .get(v.as_ref())
                .cloned()
                .unwrap_or_else(|| v.into_owned());
            (k.into_owned(), v)
        });
        let text = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        return Bytes::from(text);
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(mut v) => {
            substitute_leaves(&mut v, subs);
            match serde_json::to_vec(&v) {
                Ok(bytes) => Bytes::from(bytes),
                Err(_) => body.clone(),
            }
        }
        Err(_) => body.clone(),
    }
}

/// A multipart body with every text part (`parts`, in body order) whose whole content is a key
/// of `subs` replaced in place: the boundary, the part headers, the other parts and the file
/// parts keep their bytes.
fn substitute_multipart(
    body: &Bytes,
    parts: &[(std::ops::Range<usize>, &str)],
    subs: &BTreeMap<String, String>,
) -> Bytes {
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut at = 0;
    for (span, text) in parts {
        let Some(theirs) = subs.get(*text) else {
            continue;
        };
        let Some(before) = body.get(at..span.start) else {
            return body.clone();
        };
        out.extend_from_slice(before);
        out.extend_from_slice(theirs.as_bytes());
        at = span.end;
    }
    if at == 0 {
        return body.clone();
    }
    out.extend_from_slice(body.get(at..).unwrap_or_default());
    Bytes::from(out)
}

/// Replace every string or number leaf equal to a key of `subs` (a number stays a number when
/// its replacement is one).
fn substitute_leaves(v: &mut Value, subs: &BTreeMap<String, String>) {
    match v {
        Value::String(s) => {
            if let Some(t) = subs.get(s.as_str()) {
                *s = t.clone();
            }
        }
        Value::Number(n) => {
            if let Some(t) = subs.get(&n.to_string()) {
                *v = serde_json::from_str::<serde_json::Number>(t)
                    .map(Value::Number)
                    .unwrap_or_else(|_| Value::String(t.clone()));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| substitute_leaves(i, subs)),
        Value::Object(map) => map.values_mut().for_each(|i| substitute_leaves(i, subs)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subs() -> BTreeMap<String, String> {
        BTreeMap::from([("1001".to_string(), "2002".to_string())])
    }

    #[test]
    fn only_whole_path_segments_are_substituted() {
        assert_eq!(
            substitute_path("/v1/lists/1001/x10011", &subs()),
            "/v1/lists/2002/x10011"
        );
    }

    #[test]
    fn query_and_form_values_are_substituted_whole() {
        assert_eq!(
            substitute_query("media_ids%5B%5D=1001&q=10012", &subs()),
            "media_ids%5B%5D=2002&q=10012"
        );
        let form = substitute_body(
            Some("application/x-www-form-urlencoded"),
            &Bytes::from_static(b"media_ids[]=1001&status=1001x"),
            &subs(),
        );
        assert_eq!(&form[..], b"media_ids%5B%5D=2002&status=1001x");
    }

    /// A multipart body of `parts` (name, filename, content) with boundary `b`.
    fn multipart(b: &str, parts: &[(&str, &str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, filename, data) in parts {
            let file = if filename.is_empty() {
                String::new()
            } else {
                format!("; filename=\"{filename}\"\r\nContent-Type: application/octet-stream")
            };
            out.extend_from_slice(
                format!("--{b}\r\nContent-Disposition: form-data; name=\"{name}\"{file}\r\n\r\n")
                    .as_bytes(),
            );
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("--{b}--\r\n").as_bytes());
        out
    }

    #[test]
    fn multipart_text_parts_are_substituted_whole_and_file_parts_kept() {
        let sent = multipart(
            "x1",
            &[
                ("media_ids[]", "", b"1001"),
                ("status", "", b"1001x"),
                ("file", "1001.bin", b"1001"),
                ("in_reply_to_id", "", b"1001"),
            ],
        );
        let body = substitute_body(
            Some("multipart/form-data; boundary=x1"),
            &Bytes::from(sent),
            &subs(),
        );
        let want = multipart(
            "x1",
            &[
                ("media_ids[]", "", b"2002"),
                ("status", "", b"1001x"),
                ("file", "1001.bin", b"1001"),
                ("in_reply_to_id", "", b"2002"),
            ],
        );
        assert_eq!(&body[..], &want[..]);
        // Keyed as the run's recording of it, sent with another boundary, is.
        let recorded = multipart(
            "other",
            &[
                ("in_reply_to_id", "", b"2002"),
                ("file", "a.bin", b"1001"),
                ("status", "", b"1001x"),
                ("media_ids[]", "", b"2002"),
            ],
        );
        assert_eq!(
            wraith_model::request_key::body_fingerprint(
                Some("multipart/form-data; boundary=x1"),
                &body
            ),
            wraith_model::request_key::body_fingerprint(
                Some("multipart/form-data; boundary=other"),
                &recorded
            )
        );
    }

    #[test]
    fn multipart_body_naming_no_record_is_returned_as_it_is() {
        let sent = Bytes::from(multipart("x1", &[("status", "", b"hello")]));
        let ct = Some("multipart/form-data; boundary=x1");
        assert_eq!(substitute_body(ct, &sent, &subs()), sent);
        let broken = Bytes::from_static(b"--x1\r\nno headers");
        assert_eq!(substitute_body(ct, &broken, &subs()), broken);
    }

    #[test]
    fn json_leaves_keep_their_type() {
        let body = substitute_body(
            Some("application/json"),
            &Bytes::from_static(br#"{"a":1001,"b":["1001","x1001"]}"#),
            &subs(),
        );
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        assert_eq!(v, json!({"a": 2002, "b": ["2002", "x1001"]}));
    }
}
