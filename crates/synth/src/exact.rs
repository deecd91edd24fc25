//! The exact-replay index: every recorded exchange becomes a [`Moment`] under the
//! [`RequestKey`] of its request, built with [`wraith_model::request_key::request_key_with`]
//! and the route's literal upload names (the engine computes the same key at serve time).
//! Moments keep (session id, index) order, so the last one is the "last wins" answer and
//! successive requests can walk the time axis.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use rayon::prelude::*;
use wraith_model::{ExactEntry, Moment, RecordedBody, RequestKey};

use crate::observe::{Obs, RespBody};
use crate::routes::RouteGroup;
use crate::variants::volatile_rule;

/// The exact-replay entries of every route (in route order), each sorted by key, built on the
/// cores. Moves each observation's response body into its moment (the observation keeps an
/// empty body): call it last.
/// `upload_names`: each route's literal upload names ([`upload_names`]), in route order.
pub fn exact_indexes(
    groups: &[RouteGroup],
    obs: &mut [Obs<'_>],
    upload_names: &[BTreeSet<String>],
) -> Vec<Vec<ExactEntry>> {
    let taken: Vec<Vec<RespBody>> = groups
        .iter()
        .map(|g| {
            g.obs
                .iter()
                .map(|i| std::mem::replace(&mut obs[*i].resp, RespBody::Empty))
                .collect()
        })
        .collect();
    let obs: &[Obs<'_>] = obs;
    groups
        .par_iter()
        .zip(taken)
        .zip(upload_names)
        .map(|((group, bodies), names)| exact_index(group, obs, bodies, names))
        .collect()
}

/// The route's literal upload names (`Route::upload_names`): the file-name stems of its
/// recorded uploads that two sessions or more sent. A client that generates its upload names
/// never sends one twice; a name sent again is the client's own choice, and tells its uploads
/// of the same bytes apart.
pub fn upload_names(group: &RouteGroup, obs: &[Obs<'_>]) -> BTreeSet<String> {
    let mut sessions: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for &i in &group.obs {
        let o = &obs[i];
        for stem in
            wraith_model::request_key::upload_stems(o.request_content_type(), &o.ex.request.body)
        {
            sessions.entry(stem).or_default().insert(o.session);
        }
    }
    sessions
        .into_iter()
        .filter(|(_, s)| s.len() >= 2)
        .map(|(stem, _)| stem)
        .collect()
}

/// The exact-replay entries of one route, sorted by key: `bodies` are its observations'
/// response bodies, in the order of `group.obs`.
fn exact_index(
    group: &RouteGroup,
    obs: &[Obs<'_>],
    bodies: Vec<RespBody>,
    upload_names: &BTreeSet<String>,
) -> Vec<ExactEntry> {
    let mut entries: BTreeMap<RequestKey, Vec<Moment>> = BTreeMap::new();
    for (i, body) in group.obs.iter().zip(bodies) {
        let o = &obs[*i];
        entries
            .entry(o.request_key(upload_names))
            .or_default()
            .push(moment(o, body));
    }
    entries
        .into_iter()
        .map(|(key, moments)| ExactEntry {
            key,
            moments,
            session_bound: Vec::new(),
        })
        .collect()
}

/// One recorded answer (with its response body `resp`), volatile headers removed. An answer
/// to `HEAD` keeps its `content-length`: the length of the body a `GET` would carry, which it
/// states and which no body of its own gives back.
pub fn moment(o: &Obs<'_>, resp: RespBody) -> Moment {
    let mut headers = Vec::new();
    let head = o.ex.request.method.eq_ignore_ascii_case("HEAD");
    for (name, values) in &o.ex.response.headers {
        let lower = name.to_ascii_lowercase();
        if volatile_rule(&lower).is_some() && !(head && lower == "content-length") {
            continue;
        }
        for v in values {
            headers.push((lower.clone(), v.clone()));
        }
    }
    let mut respelled = false;
    let body = match resp {
        RespBody::Empty => RecordedBody::Empty,
        RespBody::Json => match o.parse_response() {
            Some(value) => {
                respelled =
                    wraith_model::respelling::respelling(&o.response_bytes(), &value).is_some();
                RecordedBody::json(value)
            }
            None => raw_body(o.ex.response_body()),
        },
        RespBody::Text(text) => RecordedBody::Text { text },
        RespBody::Binary(b) | RespBody::BadJson(b) => raw_body(b),
    };
    Moment {
        source: o.source.clone(),
        principal: o.principal.clone(),
        status: o.status,
        headers,
        body,
        respelled,
    }
}

/// A body kept as recorded: text when it is UTF-8, else base64.
fn raw_body(b: Vec<u8>) -> RecordedBody {
    match String::from_utf8(b) {
        Ok(text) => RecordedBody::Text { text },
        Err(e) => RecordedBody::Binary {
            base64: base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
        },
    }
}
