//! Variants: one per recorded status (at least), each with the guard that selects it, its
//! header programs and its anti-unified body.
//!
//! The primary variant is the most frequent 2xx status (or the most frequent status when there
//! is no 2xx). Every other status looks for what distinguishes its requests from the primary's,
//! in this order, and keeps the first it finds:
//! - state membership — read/update/delete routes, and lists and creates under a parent
//!   record (`/widgets/:id/parts`), with both 2xx and 404 answers: the 2xx is guarded
//!   `StateMember{member: true}`, the 404 `StateMember{member: false}` (always added);
//! - a stranger's refusal — on a keyed read/update/delete route, a 4xx every exchange of
//!   which asked for a record its session had created as another principal, where no primary
//!   answer did: guarded `ForeignRecord{foreign: true}`, the primary `ForeignRecord{foreign:
//!   false}` (a 404 also keeps its `StateMember` variant for unknown records);
//! - a duplicate — on a create, a 400, 409 or 422 every exchange of which sent a top-level field value a
//!   record its session still held had at that field, where no primary answer did: guarded
//!   `DuplicateValue{duplicate: true}` (a name already taken), the primary `duplicate: false`;
//! - header presence — a request header present in every exchange of one and absent from every
//!   exchange of the other (`authorization` on 2xx, none on 401); both sides get the guard;
//! - body validity — every request of the status had a body that claimed JSON and did not parse;
//! - a field the answers blame — when every answer of a 4xx status holds a string naming a
//!   request field (`{"errors": [{"field": "ipv4[2].range"}]}`), that field's presence or
//!   absence, then the value it held (however plain), before any other field;
//! - body field presence — a field every request of the status sent and no other request did;
//! - body field absence — a field every other request sent and none of the status's did (a
//!   missing required field);
//! - body field value — one body field holds the same value in every request of the status and
//!   that value never appears at that field for any other status (`email = "not-an-email"`);
//! - query parameter presence.
//!
//! A status no single feature explains is split by the body field values only its exchanges
//! carried (when such a value says something: an enum value, a value several errors share, or
//! one shaped unlike every accepted value). Answers of the primary status in clearly different
//! shapes (top-level fields overlapping by less than half) become their own variant when a
//! request feature selects them (a post with `scheduled_at` answers a scheduled post).
//!
//! A status with nothing distinguishing it gets `Always` and a diagnostic (it can only be
//! served by exact replay). Variants are ordered most specific first, errors before successes
//! at equal specificity, the primary first among catch-alls, so the engine takes the first match.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use base64::Engine as _;
use rayon::prelude::*;
use serde_json::Value;
use sha2::{Digest, Sha256};
use wraith_model::{
    BodyTemplate, Diagnostic, Evidence, Guard, HeaderProgram, HeaderRule, Hole, HoleKind, IdShape,
    JsonType, Node, StateOp, UrlPart, Variant, VolatileKind,
};

use crate::observe::{Obs, ReqBody, RespBody};
use crate::routes::RouteGroup;
use crate::state::RoutePlan;
use crate::unify::{Ctx, Unifier};
use crate::values;

/// Most sources listed in a variant's evidence.
pub const MAX_EVIDENCE_SOURCES: usize = 32;

/// Request headers that never distinguish variants (transport and client noise).
const NOISE_REQUEST_HEADERS: &[&str] = &[
    "host",
    "user-agent",
    "accept",
    "accept-encoding",
    "accept-language",
    "connection",
    "content-length",
    "content-type",
    "cache-control",
    "pragma",
    "origin",
    "referer",
    "te",
    "upgrade-insecure-requests",
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-forwarded-host",
    "x-real-ip",
];

/// How synth treats a response header: `None` = keep (constant or last value).
pub fn volatile_rule(name: &str) -> Option<HeaderRule> {
    let n = name.to_ascii_lowercase();
    let drop = HeaderRule::Volatile {
        kind: VolatileKind::Drop,
    };
    match n.as_str() {
        "date" => Some(HeaderRule::Volatile {
            kind: VolatileKind::Date,
        }),
        "x-request-id" | "request-id" => Some(HeaderRule::Volatile {
            kind: VolatileKind::RequestId,
        }),
        "content-length" => Some(HeaderRule::ContentLength),
        "x-runtime" | "cf-ray" | "server" | "etag" | "age" | "via" | "set-cookie"
        | "transfer-encoding" | "connection" | "keep-alive" | "server-timing" | "retry-after" => {
            Some(drop)
        }
        _ if n.starts_with("x-ratelimit") || n.starts_with("ratelimit") => Some(drop),
        _ => None,
    }
}

/// Build the variants of a route.
pub fn build_variants(
    group: &RouteGroup,
    plan: &RoutePlan,
    obs: &[Obs<'_>],
    keying: &crate::request_keying::RouteKeying,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Variant> {
    let route_name = group.label();
    let ctxs: Vec<Ctx<'_>> = group
        .obs
        .iter()
        .zip(&group.param_values)
        .map(|(i, vals)| Ctx::new(&obs[*i], &group.params, vals))
        .collect();
    let list_items = match (&plan.state_op, &plan.items_pointer, &plan.primary_key) {
        (Some(StateOp::List), Some(items), Some(pk)) => Some((items.as_str(), pk.as_str())),
        _ => None,
    };
    let unifier = Unifier {
        ctxs: &ctxs,
        counter_prefix: group.id.clone(),
        keying,
        list_items,
    };

    // Positions (into group.obs) per status.
    let mut by_status: BTreeMap<u16, Vec<usize>> = BTreeMap::new();
    for (k, i) in group.obs.iter().enumerate() {
        by_status.entry(obs[*i].status).or_default().push(k);
    }
    let primary = by_status
        .iter()
        .max_by_key(|(status, ks)| (values::is_2xx(**status), ks.len(), Reverse(**status)))
        .map(|(s, _)| *s)
        .unwrap_or(200);

    // A list or a create under a parent (`/widgets/:id/parts`) answers 404 for a parent the
    // store does not hold, as a read does for its record: the engine's membership check reads
    // the last path parameter as that parent.
    let under_parent = matches!(plan.state_op, Some(StateOp::List | StateOp::Create))
        && plan.id_param.is_none()
        && group
            .params
            .last()
            .is_some_and(|last| plan.parent_params.iter().any(|p| &p.param == last));
    let stateful = (matches!(
        plan.state_op,
        Some(StateOp::Read | StateOp::Update | StateOp::Delete)
    ) && plan.id_param.is_some())
        || under_parent;
    let has_404 = by_status.contains_key(&404);
    let has_2xx = by_status.keys().any(|s| values::is_2xx(*s));
    let state_guarded = stateful && has_404 && has_2xx;

    let at = |k: usize| -> &Obs<'_> { &obs[group.obs[k]] };
    let primary_ks = by_status.get(&primary).cloned().unwrap_or_default();
    // (status, exchanges, guards) of each variant to build; the primary's guards may grow
    // while the other statuses are examined.
    let mut parts: Vec<(u16, Vec<usize>, Vec<Guard>)> = Vec::new();
    let mut primary_extra: Vec<Guard> = Vec::new();
    // A keyed route refusing some records: which exchanges asked for a record another
    // principal had created (a stranger reading another user's record).
    let refuses = by_status
        .keys()
        .any(|s| (400..500).contains(s) && *s != primary);
    let foreign = match (&plan.id_param, &plan.primary_key) {
        (Some(id_param), Some(pk))
            if refuses
                && values::is_2xx(primary)
                && matches!(
                    plan.state_op,
                    Some(StateOp::Read | StateOp::Update | StateOp::Delete)
                ) =>
        {
            crate::foreign_records::foreign_flags(
                group,
                id_param,
                plan.key_qualifier.as_deref(),
                pk,
                obs,
            )
        }
        _ => Vec::new(),
    };
    // A create refusing some requests: which top-level fields repeated a record the session
    // still held (a name already taken), and which one the same principal had created (a
    // name taken by its owner, which another user may take too).
    let (duplicates, own_duplicates) = match &plan.primary_key {
        Some(pk)
            if refuses && values::is_2xx(primary) && plan.state_op == Some(StateOp::Create) =>
        {
            (
                crate::duplicate_values::duplicate_fields(group, pk, obs, false),
                crate::duplicate_values::duplicate_fields(group, pk, obs, true),
            )
        }
        _ => (Vec::new(), Vec::new()),
    };
    for (status, ks) in &by_status {
        // The statuses an API refuses a duplicate with (a 404 or a 403 says something else).
        let duplicate_refusal =
            matches!(status, 400 | 409 | 422) && *status != primary && !duplicates.is_empty();
        let mentions = |k: usize, f: &str| crate::duplicate_values::answer_mentions(at(k), f);
        // Every refusal repeated the field, or some did and the rest refused something else:
        // of any record the session held, else of the acting principal's own.
        let split_by = |dups: &[BTreeSet<String>]| match crate::duplicate_values::refused_duplicate(
            dups,
            ks,
            &primary_ks,
            &mentions,
        ) {
            Some(field) => Some((field, ks.clone(), Vec::new())),
            None => crate::duplicate_values::refused_duplicate_part(
                dups,
                ks,
                &primary_ks,
                &mentions,
                &|k, f| at(k).sends(&format!("/{}", wraith_model::pointer::escape_token(f))),
            ),
        };
        let split = if duplicate_refusal {
            split_by(&duplicates)
                .map(|s| (s, false))
                .or_else(|| split_by(&own_duplicates).map(|s| (s, true)))
        } else {
            None
        };
        let rest_of_refusals;
        let ks = match split {
            Some(((field, part, rest), per_principal)) => {
                let pointer = format!("/{}", wraith_model::pointer::escape_token(&field));
                parts.push((
                    *status,
                    part,
                    vec![Guard::DuplicateValue {
                        pointer: pointer.clone(),
                        duplicate: true,
                        per_principal,
                    }],
                ));
                let fresh = Guard::DuplicateValue {
                    pointer,
                    duplicate: false,
                    per_principal,
                };
                if !primary_extra.contains(&fresh) {
                    primary_extra.push(fresh);
                }
                if rest.is_empty() {
                    continue;
                }
                rest_of_refusals = rest;
                &rest_of_refusals
            }
            None => ks,
        };
        if (400..500).contains(status) && *status != primary && !foreign.is_empty() {
            let strangers: Vec<usize> = ks
                .iter()
                .copied()
                .filter(|k| foreign[*k] == Some(true))
                .collect();
            // A 404 may be both the unknown-record refusal and the one hiding another user's
            // record: the strangers' part gets a variant of its own, the 404 keeps them all.
            let whole = strangers.len() == ks.len();
            if (whole || *status == 404)
                && crate::foreign_records::is_strangers_refusal(&foreign, &strangers, &primary_ks)
            {
                parts.push((
                    *status,
                    strangers,
                    vec![Guard::ForeignRecord { foreign: true }],
                ));
                let owner = Guard::ForeignRecord { foreign: false };
                if !primary_extra.contains(&owner) {
                    primary_extra.push(owner);
                }
                if whole && *status != 404 {
                    continue;
                }
            }
        }
        let mut base = Vec::new();
        if state_guarded && (values::is_2xx(*status) || *status == 404) {
            base.push(Guard::StateMember {
                member: values::is_2xx(*status),
            });
        }
        if *status == primary {
            // Answers of one status in clearly different shapes (a scheduled post among posts)
            // become their own variant when a request feature selects them.
            let mut clusters = split_by_shape(ks, &at).into_iter();
            let mut keep = clusters.next().unwrap_or_default();
            let majority = keep.clone();
            for minority in clusters {
                match discriminate(&minority, &majority, &majority, &at) {
                    Some((guard, _)) => {
                        let mut g = base.clone();
                        g.push(guard);
                        parts.push((*status, minority, g));
                    }
                    None => keep.extend(minority),
                }
            }
            keep.sort_unstable();
            parts.push((*status, keep, base));
            continue;
        }
        let others: Vec<usize> = by_status
            .iter()
            .filter(|(s, _)| **s != *status)
            .flat_map(|(_, v)| v.iter().copied())
            .collect();
        if let Some((mine, theirs)) = discriminate(ks, &primary_ks, &others, &at) {
            if let Some(theirs) = theirs
                && !primary_extra.contains(&theirs)
            {
                primary_extra.push(theirs);
            }
            let mut g = base;
            g.push(mine);
            parts.push((*status, ks.clone(), g));
            continue;
        }
        // No one feature covers the whole status (validation errors caused by different bad
        // inputs): split it by the body field value each exchange alone among the statuses
        // carried; what remains is indistinguishable.
        let (split, rest) = split_by_field_value(ks, &by_status, *status, &at);
        for (guard, sub) in split {
            let mut g = base.clone();
            g.push(guard);
            parts.push((*status, sub, g));
        }
        if !rest.is_empty() {
            if base.is_empty() {
                diagnostics.push(Diagnostic {
                    severity: "warning".into(),
                    code: "indistinguishable-variant".into(),
                    route: Some(route_name.clone()),
                    message: format!(
                        "status {status} ({} exchange(s)) has no request feature that tells it \
                         from status {primary}; it is served only by exact replay",
                        rest.len()
                    ),
                });
            }
            parts.push((*status, rest, base));
        }
    }

    let mut variants: Vec<(Variant, bool)> = Vec::new();
    for (status, ks, mut gs) in parts {
        if status == primary {
            gs.extend(primary_extra.iter().cloned());
        }
        gs.dedup();
        let guard = match gs.len() {
            0 => Guard::Always,
            1 => gs.remove(0),
            _ => Guard::All { all: gs },
        };
        let status = &status;
        let ks = &ks;
        let mut union = None;
        let body = body_template(
            ks,
            &unifier,
            &at,
            &route_name,
            *status,
            diagnostics,
            &mut union,
        );
        let headers = header_programs(ks, &at);
        let sources: Vec<String> = ks
            .iter()
            .take(MAX_EVIDENCE_SOURCES)
            .map(|k| at(*k).source.clone())
            .collect();
        let evidence = Evidence {
            exchange_count: ks.len() as u64,
            confidence_bp: (ks.len() as u32).saturating_mul(2_500).min(10_000),
            sources,
        };
        let id = variant_id(&group.id, *status, &guard);
        variants.push((
            Variant {
                id,
                status: *status,
                guard,
                headers,
                body,
                evidence,
                union,
                keyed_snapshots: None,
                record_type: None,
            },
            *status == primary,
        ));
    }
    variants.sort_by_key(|(v, is_primary)| {
        let spec = v.guard.specificity();
        (
            Reverse(spec),
            if spec == 0 && !*is_primary { 1u8 } else { 0 },
            values::is_2xx(v.status),
            v.status,
        )
    });
    variants.into_iter().map(|(v, _)| v).collect()
}

/// A create answers with a fresh id: in every 2xx variant, the primary-key field of the record
/// at the JSON pointer `at` (`""`: the answer itself, the top level) becomes a generated hole
/// of the entity's learned id shape, whatever the recordings showed (a single recorded create
/// would otherwise replay its one id forever). An integer key a variant (or a tagged union's
/// type) already mints from its own recorded keys is minted above every key of the type, so
/// every variant mints from one sequence.
pub fn mint_primary_key(variants: &mut [Variant], pk: &str, shape: &IdShape, at: &str) {
    for v in variants.iter_mut().filter(|v| values::is_2xx(v.status)) {
        let BodyTemplate::Json { root } = &mut v.body else {
            continue;
        };
        mint_key_in(root, pk, shape, at);
        // A tagged union's types each render from their own template: each mints too.
        for t in v.union.iter_mut().flat_map(|u| u.templates.iter_mut()) {
            mint_key_in(t, pk, shape, at);
        }
    }
}

/// [`mint_primary_key`] in one answer template.
fn mint_key_in(root: &mut Node, pk: &str, shape: &IdShape, at: &str) {
    let Some(Node::Object { fields }) = object_at(root, at) else {
        return;
    };
    for f in fields.iter_mut().filter(|f| f.key == pk) {
        if let Some(above) = minted_integer_above(&mut f.value)
            && let IdShape::Integer { above: all, .. } = shape
        {
            raise_to_type(above, *all);
            continue;
        }
        let keep = matches!(
            &f.value,
            Node::Hole(Hole {
                source: HoleKind::Generated { .. } | HoleKind::Echo { .. },
                ..
            })
        );
        if keep {
            continue;
        }
        let (observed_type, examples) = match &f.value {
            Node::Const { value } => (JsonType::of(value), vec![value.clone()]),
            Node::Hole(h) => (h.observed_type, h.examples.clone()),
            _ => (JsonType::Mixed, Vec::new()),
        };
        f.value = Node::Hole(Hole {
            source: HoleKind::Generated {
                shape: shape.clone(),
            },
            observed_type,
            examples,
            more_examples: Vec::new(),
            examples_cut: false,
            confidence_bp: 7_000,
            when_absent: None,
            keyed: None,
        });
    }
}

/// The `above` of a node minting integer keys (a generated hole of the integer shape).
fn minted_integer_above(node: &mut Node) -> Option<&mut u64> {
    match node {
        Node::Hole(Hole {
            source:
                HoleKind::Generated {
                    shape: IdShape::Integer { above, .. },
                },
            ..
        }) => Some(above),
        _ => None,
    }
}

/// A minted integer key `above` a variant's own recorded keys, counted in its type's sequence
/// (`all`: above every key of the type). A variant's own keys are some of the type's: minted
/// above only those, the session's new record would sort below records made before it and,
/// counted on, reach keys other records recorded. Keys more than ten times below the type's (a
/// scheduled post's `2` beside posts' snowflakes) count a sequence of their own.
fn raise_to_type(above: &mut u64, all: u64) {
    if above.saturating_mul(10) >= all {
        *above = (*above).max(all);
    }
}

/// An action answering the record it acts on inside a record of the same type (`at`: a
/// reblog is a status wrapping the status; mostly the same fields, like the engine's test of
/// a wrapper) answers a new record of the type: the wrapper's minted integer key counts in the
/// type's sequence, as a create's does ([`mint_primary_key`]), not above only the wrappers the
/// action recorded, which other records of the type outnumber.
pub fn mint_wrapper_key(variants: &mut [Variant], at: &str, pk: &str, shape: &IdShape) {
    let IdShape::Integer { above: all, .. } = shape else {
        return;
    };
    if at.is_empty() {
        return;
    }
    for v in variants.iter_mut().filter(|v| values::is_2xx(v.status)) {
        let BodyTemplate::Json { root } = &mut v.body else {
            continue;
        };
        let wrapped_keys: Vec<String> = match object_at(root, at) {
            Some(Node::Object { fields }) => fields.iter().map(|f| f.key.clone()).collect(),
            _ => continue,
        };
        let Node::Object { fields } = root else {
            continue;
        };
        let common = fields
            .iter()
            .filter(|f| wrapped_keys.contains(&f.key))
            .count();
        if common * 10 < (fields.len() + wrapped_keys.len() - common) * 6 {
            continue;
        }
        for f in fields.iter_mut().filter(|f| f.key == pk) {
            if let Some(above) = minted_integer_above(&mut f.value) {
                raise_to_type(above, *all);
            }
        }
    }
}

/// The member names of the JSON pointer `at`, unescaped (none for `""`, the root); `None`
/// for text that is no pointer.
fn pointer_keys(at: &str) -> Option<Vec<String>> {
    if at.is_empty() {
        return Some(Vec::new());
    }
    Some(
        at.strip_prefix('/')?
            .split('/')
            .map(|token| token.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

/// [`object_at`], read only.
pub(crate) fn node_at<'n>(root: &'n Node, at: &str) -> Option<&'n Node> {
    let mut node = root;
    for key in pointer_keys(at)? {
        let Node::Object { fields } = node else {
            return None;
        };
        node = &fields.iter().find(|f| f.key == key)?.value;
    }
    Some(node)
}

/// The template node at the JSON pointer `at` (`""` for the root), following object members
/// only.
fn object_at<'n>(root: &'n mut Node, at: &str) -> Option<&'n mut Node> {
    let mut node = root;
    for key in pointer_keys(at)? {
        let Node::Object { fields } = node else {
            return None;
        };
        node = &mut fields.iter_mut().find(|f| f.key == key)?.value;
    }
    Some(node)
}

/// Find what tells the exchanges `mine` (status `status`) from the primary's `theirs`.
/// Returns this status's guard and, for header presence, the primary's opposite guard.
/// `others` are every exchange the guard must reject (for a status: all other statuses).
fn discriminate<'a>(
    mine: &[usize],
    theirs: &[usize],
    others: &[usize],
    at: &dyn Fn(usize) -> &'a Obs<'a>,
) -> Option<(Guard, Option<Guard>)> {
    if mine.is_empty() || theirs.is_empty() {
        return None;
    }

    // Header presence.
    let mut names: Vec<String> = Vec::new();
    for k in mine.iter().chain(theirs) {
        for name in at(*k).ex.request.headers.keys() {
            let lower = name.to_ascii_lowercase();
            if !NOISE_REQUEST_HEADERS.contains(&lower.as_str()) && !names.contains(&lower) {
                names.push(lower);
            }
        }
    }
    names.sort();
    let has = |k: usize, name: &str| at(k).ex.request_header(name).is_some();
    for name in &names {
        let mine_all = mine.iter().all(|k| has(*k, name));
        let mine_none = mine.iter().all(|k| !has(*k, name));
        let theirs_all = theirs.iter().all(|k| has(*k, name));
        let theirs_none = theirs.iter().all(|k| !has(*k, name));
        if (mine_all && theirs_none) || (mine_none && theirs_all) {
            return Some((
                Guard::HeaderPresent {
                    name: name.clone(),
                    present: mine_all,
                },
                Some(Guard::HeaderPresent {
                    name: name.clone(),
                    present: theirs_all,
                }),
            ));
        }
    }

    // Body validity.
    if mine.iter().all(|k| at(*k).req == ReqBody::InvalidJson)
        && others.iter().all(|k| at(*k).req != ReqBody::InvalidJson)
    {
        return Some((Guard::BodyValid { valid: false }, None));
    }

    // The fields an error answer names (`{"errors": [{"field": "label"}]}`) first: what the
    // server says it refused explains the status better than whatever else happened to be sent
    // (a description only the refused update carried, when the answer blames its label).
    let named = named_fields(mine, at);
    if !named.is_empty() {
        let blamed = |pointer: &str| pointer_names(pointer).iter().any(|n| named.contains(n));
        if let Some(guard) = presence_guard(mine, others, at, &blamed)
            .or_else(|| closed_set_guard(mine, others, at, &blamed))
            .or_else(|| value_guard(mine, others, at, &blamed, true))
            .or_else(|| bound_guard(mine, others, at, &blamed))
        {
            return Some((guard, None));
        }
    }
    if let Some(guard) = presence_guard(mine, others, at, &|_| true) {
        return Some((guard, None));
    }

    // The media type of a file part (a video answered 202 while it is processed, an image
    // 200): every one of these uploads declared it and no other request did. Before a body
    // field's value: what kind of file was sent explains an answer better than the words
    // that happened to accompany it (a description every recorded video upload repeated).
    let uploads: Vec<Vec<(String, String)>> =
        mine.iter().map(|k| at(*k).upload_media_types()).collect();
    for upload in uploads.first().into_iter().flatten() {
        let all_mine = uploads.iter().all(|u| u.contains(upload));
        let none_elsewhere = others
            .iter()
            .all(|k| !at(*k).upload_media_types().contains(upload));
        if all_mine && none_elsewhere {
            return Some((
                Guard::UploadType {
                    part: upload.0.clone(),
                    media_type: upload.1.clone(),
                },
                None,
            ));
        }
    }

    if let Some(guard) = value_guard(mine, others, at, &|_| true, false) {
        return Some((guard, None));
    }

    // Query presence.
    for (name, _) in &at(mine[0]).query {
        let all_mine = mine.iter().all(|k| at(*k).query_value(name).is_some());
        let none_elsewhere = others.iter().all(|k| at(*k).query_value(name).is_none());
        if all_mine && none_elsewhere {
            return Some((
                Guard::QueryPresent {
                    name: name.clone(),
                    present: true,
                },
                None,
            ));
        }
    }

    None
}

/// A body field's presence that tells `mine` from `others`: a field every one of `mine` sent
/// and no other request did, or one every other request sent and none of `mine` did (a missing
/// required field is what a validation error usually answers). Only pointers `keep` accepts.
fn presence_guard<'a>(
    mine: &[usize],
    others: &[usize],
    at: &dyn Fn(usize) -> &'a Obs<'a>,
    keep: &dyn Fn(&str) -> bool,
) -> Option<Guard> {
    let first = at(mine[0]);
    let present_only_here = |pointer: &str| {
        keep(pointer)
            && mine.iter().all(|k| at(*k).req_field(pointer).is_some())
            && others.iter().all(|k| !at(*k).sends(pointer))
    };
    if let Some((pointer, _)) = first
        .req_fields
        .iter()
        .find(|(pointer, _)| present_only_here(pointer))
    {
        // Of the items of one array that all qualify (`/fields/0/name` … `/fields/4/name` on a
        // "too many fields" error), the last: it holds only where the others do, so a request
        // with fewer items is not refused for the one item every request may send.
        let shape = index_shape(pointer);
        let pointer = first
            .req_fields
            .iter()
            .map(|(p, _)| p)
            .filter(|p| index_shape(p) == shape && present_only_here(p))
            .max_by_key(|p| array_indexes(p))
            .unwrap_or(pointer);
        return Some(Guard::BodyFieldPresent {
            pointer: pointer.clone(),
            present: true,
        });
    }
    let o0 = *others.first()?;
    at(o0)
        .req_fields
        .iter()
        .find(|(pointer, _)| {
            keep(pointer)
                && mine.iter().all(|k| !at(*k).sends(pointer))
                && others.iter().all(|k| at(*k).req_field(pointer).is_some())
        })
        .map(|(pointer, _)| Guard::BodyFieldPresent {
            pointer: pointer.clone(),
            present: false,
        })
}

/// A body field's value that tells `mine` from `others`: one value every one of `mine` sent
/// there and no other request did. Unless the answers `blamed` the field, the value must also
/// say something ([`meaningful`]); where they did, the refused value itself is the reason.
fn value_guard<'a>(
    mine: &[usize],
    others: &[usize],
    at: &dyn Fn(usize) -> &'a Obs<'a>,
    keep: &dyn Fn(&str) -> bool,
    blamed: bool,
) -> Option<Guard> {
    for (pointer, value) in &at(mine[0]).req_fields {
        if !keep(pointer) {
            continue;
        }
        let same_in_mine = mine
            .iter()
            .all(|k| at(*k).req_field(pointer) == Some(value));
        // A field the others never sent is a presence guard, not a value guard.
        let absent_elsewhere = others.iter().all(|k| at(*k).req_field(pointer).is_none());
        if !same_in_mine || absent_elsewhere {
            continue;
        }
        let never_elsewhere = others
            .iter()
            .all(|k| at(*k).req_field(pointer) != Some(value));
        if never_elsewhere && (blamed || meaningful(pointer, value, mine.len(), others, at)) {
            return Some(Guard::BodyFieldEquals {
                pointer: pointer.clone(),
                value: value.clone(),
            });
        }
    }
    None
}

/// Fewest and most distinct values a closed set of accepted values holds
/// ([`closed_set_guard`]): one accepted value says nothing of the others an API accepts.
const MIN_CLOSED_SET: usize = 2;
const MAX_CLOSED_SET: usize = 8;

/// A closed set of values that tells `mine` from `others` at a field the answers blamed
/// (`keep`): every other request that sent the field sent a string from a set of
/// [`MIN_CLOSED_SET`] to [`MAX_CLOSED_SET`] values, sent twice as often as there are values (an
/// enum, not names or texts, which differ request by request), and none of `mine` sent one of
/// them. The API then refuses
/// any value outside the set, not only the ones the recordings refused (`state: "done"` as
/// `merged` was).
fn closed_set_guard<'a>(
    mine: &[usize],
    others: &[usize],
    at: &dyn Fn(usize) -> &'a Obs<'a>,
    keep: &dyn Fn(&str) -> bool,
) -> Option<Guard> {
    for (pointer, _) in &at(mine[0]).req_fields {
        if !keep(pointer) {
            continue;
        }
        let mut counts: Vec<(&Value, usize)> = Vec::new();
        let mut closed = true;
        for k in others {
            match at(*k).req_field(pointer) {
                Some(v @ Value::String(_)) => match counts.iter_mut().find(|(c, _)| *c == v) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((v, 1)),
                },
                Some(_) => closed = false,
                None => {}
            }
        }
        let sends: usize = counts.iter().map(|(_, n)| n).sum();
        if !closed
            || counts.len() < MIN_CLOSED_SET
            || counts.len() > MAX_CLOSED_SET
            || sends < 2 * counts.len()
        {
            continue;
        }
        let outside = mine.iter().all(|k| {
            at(*k)
                .req_field(pointer)
                .is_some_and(|v| v.is_string() && counts.iter().all(|(c, _)| *c != v))
        });
        if !outside {
            continue;
        }
        let mut values: Vec<Value> = counts.into_iter().map(|(v, _)| v.clone()).collect();
        values.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        return Some(Guard::BodyFieldNotIn {
            pointer: pointer.clone(),
            values,
        });
    }
    None
}

/// A body field's numeric range that tells `mine` from `others`: every one of `mine` sent a
/// number there below every number the others sent (or above every one), and every other
/// request that sent the field sent a number. Only for fields the answers blamed (`keep`): a
/// range a few values happen to fall into says nothing unless the API named the field. The
/// bound is the others' nearest value, so a value between the two sides is refused too.
fn bound_guard<'a>(
    mine: &[usize],
    others: &[usize],
    at: &dyn Fn(usize) -> &'a Obs<'a>,
    keep: &dyn Fn(&str) -> bool,
) -> Option<Guard> {
    let number = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    };
    for (pointer, _) in &at(mine[0]).req_fields {
        if !keep(pointer) {
            continue;
        }
        let Some(sent) = mine
            .iter()
            .map(|k| at(*k).req_field(pointer).and_then(number))
            .collect::<Option<Vec<f64>>>()
        else {
            continue;
        };
        let mut theirs: Vec<(f64, &Value)> = Vec::new();
        let mut numeric = true;
        for k in others {
            if let Some(v) = at(*k).req_field(pointer) {
                match number(v) {
                    Some(n) => theirs.push((n, v)),
                    None => numeric = false,
                }
            }
        }
        if !numeric || theirs.is_empty() {
            continue;
        }
        let lowest = theirs.iter().min_by(|a, b| a.0.total_cmp(&b.0))?;
        let highest = theirs.iter().max_by(|a, b| a.0.total_cmp(&b.0))?;
        let (bound, below) = if sent.iter().all(|v| *v < lowest.0) {
            (lowest, true)
        } else if sent.iter().all(|v| *v > highest.0) {
            (highest, false)
        } else {
            continue;
        };
        let bound = match bound.1 {
            Value::Number(_) => bound.1.clone(),
            _ => serde_json::Number::from_f64(bound.0).map(Value::Number)?,
        };
        return Some(Guard::BodyFieldBound {
            pointer: pointer.clone(),
            bound,
            below,
        });
    }
    None
}

/// The strings every one of `mine`'s answers holds, when all of them are client errors
/// (4xx) with JSON bodies: among them, the names of the request fields they refused.
fn named_fields<'a>(
    mine: &[usize],
    at: &dyn Fn(usize) -> &'a Obs<'a>,
) -> std::collections::BTreeSet<String> {
    let mut named: Option<std::collections::BTreeSet<String>> = None;
    for k in mine {
        let o = at(*k);
        if !(400..500).contains(&o.status) {
            return Default::default();
        }
        let Some(body) = o.resp_json() else {
            return Default::default();
        };
        let mut strings = std::collections::BTreeSet::new();
        string_leaves(&body, &mut strings);
        named = Some(match named {
            None => strings,
            Some(n) => n.intersection(&strings).cloned().collect(),
        });
    }
    named.unwrap_or_default()
}

fn string_leaves(v: &Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::String(s) if s.len() <= 128 => {
            out.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|i| string_leaves(i, out)),
        Value::Object(map) => map.values().for_each(|i| string_leaves(i, out)),
        _ => {}
    }
}

/// How an error answer may name the request field at `pointer` (`/ipv4/2/range`):
/// `ipv4[2].range`, `ipv4[2][range]`, `ipv4.2.range`, its top-level field `ipv4` and its own
/// name `range`.
fn pointer_names(pointer: &str) -> Vec<String> {
    let tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    let Some(top) = tokens.first() else {
        return Vec::new();
    };
    let is_index = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mut dotted = top.clone();
    let mut bracketed = top.clone();
    for t in &tokens[1..] {
        if is_index(t) {
            dotted.push_str(&format!("[{t}]"));
        } else {
            dotted.push_str(&format!(".{t}"));
        }
        bracketed.push_str(&format!("[{t}]"));
    }
    let mut names = vec![dotted, bracketed, tokens.join("."), top.clone()];
    if let Some(own) = tokens.iter().rev().find(|t| !is_index(t)) {
        names.push(own.clone());
    }
    names.dedup();
    names
}

/// Cluster the exchanges `ks` by the top-level field names of their JSON answers (Jaccard
/// ≥ 0.5 to a cluster's first member joins it; non-object answers cluster by kind). The largest
/// cluster comes first, then the others in first-seen order; each keeps exchange order.
fn split_by_shape<'a>(ks: &[usize], at: &dyn Fn(usize) -> &'a Obs<'a>) -> Vec<Vec<usize>> {
    // Only the top-level names are read: the values are skipped, not built.
    let shapes: Vec<Option<BTreeSet<String>>> =
        ks.iter().map(|k| at(*k).resp_top_level_keys()).collect();
    order_clusters(cluster_shapes(&shapes), ks)
}

/// Each shape's cluster (clusters numbered in first-seen order): the first cluster, in that
/// order, whose first member's shape it is similar to ([`similar_shapes`]), else a new one.
///
/// Comparing a shape with every cluster's first member was quadratic when most answers share
/// few names (a route answering objects keyed by ids). Prefix filtering finds the candidates
/// instead. Names are ordered rarest first over the whole route. Two sets `r`, `x` of Jaccard
/// ≥ 0.5 share `o ≥ (|r| + |x|) / 3` names, and `o ≥ |x| / 2`, so when `|r| ≤ |x|`, their
/// rarest common name lies within the first `|r| - ⌈2|r|/3⌉ + 1` names of `r` (its short
/// prefix) and within the first `|x| - ⌈|x|/2⌉ + 1` of `x` (its long prefix). Each cluster's
/// first member is indexed under both prefixes, and a shape probes the short index with its
/// long prefix and the long index with its short one, which finds every similar first member
/// of either size. Candidates are then checked in cluster order, so the cluster picked is the
/// one the scan picked.
fn cluster_shapes(shapes: &[Option<BTreeSet<String>>]) -> Vec<usize> {
    // Names interned, then ranked rarest first (ties by name, for determinism).
    let mut frequency: BTreeMap<&str, usize> = BTreeMap::new();
    for shape in shapes.iter().flatten() {
        for name in shape {
            *frequency.entry(name.as_str()).or_default() += 1;
        }
    }
    let mut ranked: Vec<(&str, usize)> = frequency.into_iter().collect();
    ranked.sort_by_key(|&(name, n)| (n, name));
    let rank: HashMap<&str, u32> = ranked
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (*name, u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    let ids: Vec<Option<Vec<u32>>> = shapes
        .iter()
        .map(|shape| {
            shape.as_ref().map(|names| {
                let mut v: Vec<u32> = names
                    .iter()
                    .filter_map(|n| rank.get(n.as_str()).copied())
                    .collect();
                v.sort_unstable();
                v
            })
        })
        .collect();
    let long = |v: &[u32]| v.len() - v.len().div_ceil(2) + 1;
    let short = |v: &[u32]| v.len() - (2 * v.len()).div_ceil(3) + 1;

    // Clusters by their first member's shape; `by_short`/`by_long` list the clusters whose
    // first member holds a name in that prefix.
    let mut reps: Vec<Option<&[u32]>> = Vec::new();
    let mut by_short: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut by_long: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut no_names: Option<usize> = None;
    let mut not_object: Option<usize> = None;
    let mut out = Vec::with_capacity(ids.len());
    for shape in &ids {
        let joined = match shape {
            None => not_object,
            Some(v) if v.is_empty() => no_names,
            Some(v) => {
                let mut candidates: Vec<usize> = v[..long(v)]
                    .iter()
                    .filter_map(|id| by_short.get(id))
                    .chain(v[..short(v)].iter().filter_map(|id| by_long.get(id)))
                    .flatten()
                    .copied()
                    .collect();
                candidates.sort_unstable();
                candidates.dedup();
                candidates
                    .into_iter()
                    .find(|&c| reps[c].is_some_and(|rep| similar_shapes(rep, v)))
            }
        };
        let c = match joined {
            Some(c) => c,
            None => {
                let c = reps.len();
                reps.push(shape.as_deref());
                match shape {
                    None => not_object = Some(c),
                    Some(v) if v.is_empty() => no_names = Some(c),
                    Some(v) => {
                        for id in &v[..short(v)] {
                            by_short.entry(*id).or_default().push(c);
                        }
                        for id in &v[..long(v)] {
                            by_long.entry(*id).or_default().push(c);
                        }
                    }
                }
                c
            }
        };
        out.push(c);
    }
    out
}

/// Jaccard similarity of two sorted name sets is at least 0.5 (two empty sets are similar).
fn similar_shapes(a: &[u32], b: &[u32]) -> bool {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    union == 0 || common * 2 >= union
}

/// The members of each cluster (`cluster[i]` is `ks[i]`'s), the largest first (the earliest
/// of equals), then the others in first-seen order.
fn order_clusters(cluster: Vec<usize>, ks: &[usize]) -> Vec<Vec<usize>> {
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for (c, k) in cluster.into_iter().zip(ks) {
        if c == clusters.len() {
            clusters.push(Vec::new());
        }
        if let Some(members) = clusters.get_mut(c) {
            members.push(*k);
        }
    }
    let largest = clusters
        .iter()
        .enumerate()
        .max_by_key(|(i, m)| (m.len(), Reverse(*i)))
        .map(|(i, _)| i)
        .unwrap_or(0);
    let mut out: Vec<Vec<usize>> = Vec::with_capacity(clusters.len());
    if !clusters.is_empty() {
        out.push(std::mem::take(&mut clusters[largest]));
    }
    for (i, members) in clusters.into_iter().enumerate() {
        if i != largest {
            out.push(members);
        }
    }
    out
}

/// Coarse shape of a request value: its JSON type and the character classes of a string.
fn value_shape(v: &Value) -> (u8, u16) {
    match v {
        Value::String(s) => {
            let mut classes = 0u16;
            for c in s.chars() {
                classes |= match c {
                    'a'..='z' => 1,
                    'A'..='Z' => 2,
                    '0'..='9' => 4,
                    '@' => 8,
                    '.' => 16,
                    '-' => 32,
                    '_' => 64,
                    ' ' => 128,
                    '/' | ':' => 256,
                    _ => 512,
                };
            }
            (3, classes)
        }
        Value::Number(_) => (2, 0),
        Value::Bool(_) => (1, 0),
        _ => (0, 0),
    }
}

/// A JSON pointer with its array indexes (all-digit tokens) replaced by `*`: the pointers of
/// one field of every item of an array share it.
fn index_shape(pointer: &str) -> String {
    pointer
        .split('/')
        .map(|t| {
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else {
                t
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The array indexes of a JSON pointer, outermost first (tokens too long for a number count as
/// the largest).
fn array_indexes(pointer: &str) -> Vec<u64> {
    pointer
        .split('/')
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .map(|t| t.parse().unwrap_or(u64::MAX))
        .collect()
}

/// Whether `pointer = value` says something about the request rather than naming it: the
/// field takes few values elsewhere (an enum, a flag), or several exchanges of this status
/// share the value, or the value is shaped differently from every value the field held
/// elsewhere (`"not-an-email"` among addresses). A unique label that merely differs from other
/// unique labels is not a reason for a status.
fn meaningful<'a>(
    pointer: &str,
    value: &Value,
    sharing: usize,
    others: &[usize],
    at: &dyn Fn(usize) -> &'a Obs<'a>,
) -> bool {
    if sharing >= 2 {
        return true;
    }
    let elsewhere: Vec<&Value> = others
        .iter()
        .filter_map(|o| at(*o).req_field(pointer))
        .collect();
    if elsewhere.is_empty() {
        return true;
    }
    let mut distinct: Vec<&Value> = Vec::new();
    for v in &elsewhere {
        if !distinct.contains(v) {
            distinct.push(v);
        }
    }
    if distinct.len() <= 2.max(elsewhere.len() / 2) {
        return true;
    }
    let shape = value_shape(value);
    elsewhere.iter().all(|v| value_shape(v) != shape)
}

/// Split the exchanges `ks` of `status` by a body field value that, among all the route's
/// exchanges, only exchanges of this status carried at that field. Returns the guarded parts (in
/// first-exchange order) and the exchanges no such value distinguishes.
fn split_by_field_value<'a>(
    ks: &[usize],
    by_status: &BTreeMap<u16, Vec<usize>>,
    status: u16,
    at: &dyn Fn(usize) -> &'a Obs<'a>,
) -> (Vec<(Guard, Vec<usize>)>, Vec<usize>) {
    let others: Vec<usize> = by_status
        .iter()
        .filter(|(s, _)| **s != status)
        .flat_map(|(_, v)| v.iter().copied())
        .collect();
    let mut parts: Vec<(String, Value, Vec<usize>)> = Vec::new();
    let mut rest = Vec::new();
    for k in ks {
        let fields = &at(*k).req_fields;
        // A field this exchange shares with an existing part first, so parts stay few.
        let joined = parts
            .iter_mut()
            .find(|(p, v, _)| at(*k).req_field(p) == Some(v));
        if let Some((_, _, members)) = joined {
            members.push(*k);
            continue;
        }
        let found = fields.iter().find(|(pointer, value)| {
            let sharing = ks
                .iter()
                .filter(|j| at(**j).req_field(pointer) == Some(value))
                .count();
            others
                .iter()
                .all(|o| at(*o).req_field(pointer) != Some(value))
                && meaningful(pointer, value, sharing, &others, at)
        });
        match found {
            Some((pointer, value)) => parts.push((pointer.clone(), value.clone(), vec![*k])),
            None => rest.push(*k),
        }
    }
    let parts = parts
        .into_iter()
        .map(|(pointer, value, members)| {
            // A field no other status sent selects by presence; otherwise by value.
            let guard = if others.iter().all(|o| !at(*o).sends(&pointer)) {
                Guard::BodyFieldPresent {
                    pointer,
                    present: true,
                }
            } else {
                Guard::BodyFieldEquals { pointer, value }
            };
            (guard, members)
        })
        .collect();
    (parts, rest)
}

/// Gives the route's one unguarded variant of each refused status the guard its record's state
/// learned ([`crate::state_refusals`]), with the id that guard makes, and puts it before the
/// variants it is more specific than: a refusal the recordings only replayed now answers every
/// session whose record is in that state. A status with none or several unguarded variants
/// stays as it is.
pub fn guard_refusals(route: &mut wraith_model::Route, refusals: Vec<(u16, Guard)>) {
    if refusals.is_empty() {
        return;
    }
    for (status, guard) in refusals {
        let mut open = route
            .variants
            .iter_mut()
            .filter(|v| v.status == status && v.guard == Guard::Always);
        let (Some(v), None) = (open.next(), open.next()) else {
            continue;
        };
        v.id = variant_id(&route.id, status, &guard);
        v.guard = guard;
    }
    route
        .variants
        .sort_by_key(|v| Reverse(v.guard.specificity()));
}

/// 16 hex of sha256(route id, status, guard).
pub fn variant_id(route_id: &str, status: u16, guard: &Guard) -> String {
    let guard_json = wraith_model::to_canonical_json(guard).unwrap_or_default();
    let digest = Sha256::digest(format!("{route_id}\n{status}\n{guard_json}").as_bytes());
    wraith_model::request_key::hex(&digest[..8])
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Empty,
    Json,
    Text,
    Binary,
}

fn body_template<'a>(
    ks: &[usize],
    unifier: &Unifier<'_>,
    at: &dyn Fn(usize) -> &'a Obs<'a>,
    route_name: &str,
    status: u16,
    diagnostics: &mut Vec<Diagnostic>,
    // Set to the per-type templates when the JSON answers are a tagged union.
    union: &mut Option<wraith_model::VariantUnion>,
) -> BodyTemplate {
    let mut counts: BTreeMap<Kind, usize> = BTreeMap::new();
    let mut bad_json = 0usize;
    let mut first_bad: Option<String> = None;
    let mut truncated = 0usize;
    for k in ks {
        let o = at(*k);
        if o.ex.truncated {
            truncated += 1;
        }
        let kind = match &o.resp {
            RespBody::Empty => Kind::Empty,
            RespBody::Json => Kind::Json,
            RespBody::Text(_) => Kind::Text,
            RespBody::Binary(_) => Kind::Binary,
            RespBody::BadJson(b) => {
                bad_json += 1;
                // Why it does not parse, so a reader can tell a cut body from valid JSON the
                // parser cannot hold (a number past a 64-bit float, `1e400`).
                first_bad.get_or_insert_with(|| {
                    match serde_json::from_slice::<serde_json::Value>(b) {
                        Err(e) => format!("{}: {e}", o.source),
                        Ok(_) => o.source.clone(),
                    }
                });
                Kind::Text
            }
        };
        *counts.entry(kind).or_insert(0) += 1;
    }
    if bad_json > 0 {
        diagnostics.push(Diagnostic {
            severity: "warning".into(),
            code: "unparseable-body".into(),
            route: Some(route_name.to_string()),
            message: format!(
                "{bad_json} response(s) with status {status} claim JSON but do not parse (first: \
                 {}); served as recorded text",
                first_bad.unwrap_or_default()
            ),
        });
    }
    if truncated > 0 {
        diagnostics.push(Diagnostic {
            severity: "warning".into(),
            code: "truncated-exchange".into(),
            route: Some(route_name.to_string()),
            message: format!(
                "{truncated} response(s) with status {status} were cut before completion; their \
                 bodies are partial"
            ),
        });
    }
    let kind = counts
        .iter()
        .max_by_key(|(kind, n)| (**n, Reverse(**kind)))
        .map(|(k, _)| *k)
        .unwrap_or(Kind::Empty);
    if counts.len() > 1 {
        let list: Vec<String> = counts.iter().map(|(k, n)| format!("{k:?}={n}")).collect();
        diagnostics.push(Diagnostic {
            severity: "warning".into(),
            code: "mixed-body-kinds".into(),
            route: Some(route_name.to_string()),
            message: format!(
                "status {status} answered with different body kinds ({}); the template follows \
                 the most common, {kind:?}",
                list.join(", ")
            ),
        });
    }
    match kind {
        Kind::Empty => BodyTemplate::Empty,
        Kind::Json => {
            // This route's trees only, parsed for the unifier and dropped after it.
            // Each distinct answer is parsed once, on the cores, and shared by every
            // observation that recorded it (a catalogue read again and again): the unifier
            // sees the same values, and a route holding most of a run's answers does not hold
            // a tree for each of them.
            let bodies: Vec<(std::borrow::Cow<'_, [u8]>, usize)> = ks
                .iter()
                .map(|k| (at(*k), *k))
                .filter(|(o, _)| o.resp == RespBody::Json)
                .map(|(o, k)| (o.response_bytes(), k))
                .collect();
            let mut slot_of: HashMap<&[u8], usize> = HashMap::new();
            let mut firsts: Vec<usize> = Vec::new();
            let slots: Vec<usize> = bodies
                .iter()
                .enumerate()
                .map(|(b, (bytes, _))| {
                    *slot_of.entry(bytes.as_ref()).or_insert_with(|| {
                        firsts.push(b);
                        firsts.len() - 1
                    })
                })
                .collect();
            let trees: Vec<Option<Value>> = firsts
                .par_iter()
                .map(|b| serde_json::from_slice(&bodies[*b].0).ok())
                .collect();
            let vals: Vec<(&Value, usize)> = bodies
                .iter()
                .zip(&slots)
                .filter_map(|((_, k), slot)| trees[*slot].as_ref().map(|v| (v, *k)))
                .collect();
            *union = crate::union::variant_union(unifier, &vals);
            BodyTemplate::Json {
                root: unifier.unify(&vals, None, ""),
            }
        }
        Kind::Text => {
            let last = ks.iter().rev().find_map(|k| match &at(*k).resp {
                RespBody::Text(t) => Some(t.clone()),
                RespBody::BadJson(b) => Some(String::from_utf8_lossy(b).into_owned()),
                _ => None,
            });
            BodyTemplate::Text {
                text: last.unwrap_or_default(),
            }
        }
        Kind::Binary => {
            let last = ks.iter().rev().find_map(|k| match &at(*k).resp {
                RespBody::Binary(b) => Some(base64::engine::general_purpose::STANDARD.encode(b)),
                _ => None,
            });
            BodyTemplate::Binary {
                base64: last.unwrap_or_default(),
            }
        }
    }
}

/// Header programs of a variant, in the order the first exchange had them.
fn header_programs<'a>(ks: &[usize], at: &dyn Fn(usize) -> &'a Obs<'a>) -> Vec<HeaderProgram> {
    let mut order: Vec<String> = Vec::new();
    // The last recorded values of each header (borrowed: only those are replayed).
    let mut last: BTreeMap<String, &'a Vec<String>> = BTreeMap::new();
    for k in ks {
        for (name, values) in &at(*k).ex.response.headers {
            let lower = name.to_ascii_lowercase();
            if !last.contains_key(&lower) {
                order.push(lower.clone());
            }
            last.insert(lower, values);
        }
    }
    order
        .into_iter()
        .map(|name| {
            let values = || last.get(&name).map(|v| (*v).clone()).unwrap_or_default();
            let program = volatile_rule(&name)
                .or_else(|| {
                    URL_HEADERS
                        .contains(&name.as_str())
                        .then(|| body_value_rule(&name, ks, at, values()))
                        .flatten()
                })
                // Constant when all agree, else the last recorded values.
                .unwrap_or_else(|| HeaderRule::Constant { values: values() });
            HeaderProgram { name, program }
        })
        .collect()
}

/// Headers that name a resource by its URL (RFC 9110 §10.2.2, §8.7): a create's `Location`
/// names the record its answer holds, so it follows the key the twin gives that record.
const URL_HEADERS: &[&str] = &["location", "content-location"];

/// [`HeaderRule::BodyValue`] for header `name` of the exchanges `ks`, when every one of them
/// that has the header has one value of it and a JSON body, and the first one's value, its
/// whole URL tokens that are scalars of its body made pointers ([`wraith_model::url_parts`]),
/// renders every one's value from its own body. A pointer is trusted only where it is more than
/// a coincidence: its key names an identifier (`id`, `slug`, `*_id`), or its token is not the
/// same in every value; an untrusted one stays text. `None` without a trusted pointer.
fn body_value_rule<'a>(
    name: &str,
    ks: &[usize],
    at: &dyn Fn(usize) -> &'a Obs<'a>,
    values: Vec<String>,
) -> Option<HeaderRule> {
    let mut samples: Vec<(&str, Value)> = Vec::new();
    for k in ks {
        let o = at(*k);
        let mut recorded =
            o.ex.response
                .headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .flat_map(|(_, v)| v.iter());
        let Some(value) = recorded.next() else {
            continue;
        };
        if recorded.next().is_some() || o.resp != RespBody::Json {
            return None;
        }
        samples.push((value.as_str(), o.parse_response()?));
    }
    let (first_value, first_body) = samples.first()?;
    let names_identifier = crate::values::is_identifier_key;
    let parts: Vec<UrlPart> = wraith_model::url_parts(first_value, first_body, names_identifier)
        .into_iter()
        .map(|part| match part {
            UrlPart::Body { pointer } => {
                let token = |b: &Value| b.pointer(&pointer).and_then(wraith_model::url_token);
                let first = token(first_body);
                let trusted = pointer.rsplit('/').next().is_some_and(names_identifier)
                    || samples.iter().any(|(_, b)| token(b) != first);
                match (trusted, first) {
                    (false, Some(text)) => UrlPart::Text { text },
                    _ => UrlPart::Body { pointer },
                }
            }
            text => text,
        })
        .fold(Vec::new(), |mut parts: Vec<UrlPart>, part| {
            // Text next to text (a pointer left as text) is one piece.
            match (parts.last_mut(), part) {
                (Some(UrlPart::Text { text }), UrlPart::Text { text: more }) => {
                    text.push_str(&more)
                }
                (_, part) => parts.push(part),
            }
            parts
        });
    if !parts.iter().any(|p| matches!(p, UrlPart::Body { .. })) {
        return None;
    }
    samples
        .iter()
        .all(|(value, body)| wraith_model::render_url(&parts, body).as_deref() == Some(*value))
        .then_some(HeaderRule::BodyValue { parts, values })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn minted_key(above: u64) -> Node {
        Node::Object {
            fields: vec![wraith_model::template::Field {
                key: "id".into(),
                value: Node::Hole(Hole {
                    source: HoleKind::Generated {
                        shape: IdShape::Integer {
                            above,
                            as_string: true,
                        },
                    },
                    observed_type: JsonType::String,
                    examples: Vec::new(),
                    more_examples: Vec::new(),
                    examples_cut: false,
                    confidence_bp: 7_000,
                    when_absent: None,
                    keyed: None,
                }),
                optional: false,
                present_ratio_bp: 10_000,
            }],
        }
    }

    fn above_of(node: &Node) -> u64 {
        match node {
            Node::Object { fields } => match &fields[0].value {
                Node::Hole(Hole {
                    source:
                        HoleKind::Generated {
                            shape: IdShape::Integer { above, .. },
                        },
                    ..
                }) => *above,
                other => panic!("a minted key: {other:?}"),
            },
            other => panic!("an object: {other:?}"),
        }
    }

    #[test]
    fn a_minted_key_counts_on_from_the_types_largest_key_unless_it_is_far_below() {
        let shape = IdShape::Integer {
            above: 117_457_746_681_381_186,
            as_string: true,
        };
        let mut near = minted_key(117_440_831_286_600_298);
        mint_key_in(&mut near, "id", &shape, "");
        assert_eq!(above_of(&near), 117_457_746_681_381_186);
        // A scheduled post's `2` beside posts' snowflakes: a sequence of its own.
        let mut far = minted_key(2);
        mint_key_in(&mut far, "id", &shape, "");
        assert_eq!(above_of(&far), 2);
    }

    /// A 200 variant answering `wrapper_keys` (its `id` minted above `above`) around an object
    /// of `wrapped_keys` at `/inner`.
    fn wrapper_variant(above: u64, wrapper_keys: &[&str], wrapped_keys: &[&str]) -> Variant {
        let field = |key: &str, value: Node| wraith_model::template::Field {
            key: key.into(),
            value,
            optional: false,
            present_ratio_bp: 10_000,
        };
        let leaf = || Node::Const {
            value: serde_json::Value::Null,
        };
        let inner = Node::Object {
            fields: wrapped_keys.iter().map(|k| field(k, leaf())).collect(),
        };
        let Node::Object { fields: mut root } = minted_key(above) else {
            unreachable!()
        };
        root.extend(wrapper_keys.iter().map(|k| field(k, leaf())));
        root.push(field("inner", inner));
        Variant {
            id: "v".into(),
            status: 200,
            guard: Guard::Always,
            headers: Vec::new(),
            body: BodyTemplate::Json {
                root: Node::Object { fields: root },
            },
            evidence: wraith_model::Evidence {
                exchange_count: 1,
                confidence_bp: 10_000,
                sources: Vec::new(),
            },
            union: None,
            keyed_snapshots: None,
            record_type: None,
        }
    }

    fn wrapper_above(v: &Variant) -> u64 {
        let BodyTemplate::Json { root } = &v.body else {
            panic!("a JSON template")
        };
        above_of(root)
    }

    #[test]
    fn a_wrapper_of_the_records_own_fields_mints_in_the_types_sequence_and_another_does_not() {
        let shape = IdShape::Integer {
            above: 5_002,
            as_string: true,
        };
        // `id`, `text`, `count` and `inner` around `id`, `text`, `count`: the same type.
        let mut same = [wrapper_variant(
            1_021,
            &["text", "count"],
            &["id", "text", "count"],
        )];
        mint_wrapper_key(&mut same, "/inner", "id", &shape);
        assert_eq!(wrapper_above(&same[0]), 5_002);
        // A job record around the record: its own sequence.
        let mut other = [wrapper_variant(
            1_021,
            &["state", "progress", "queued_at"],
            &["id", "text", "count"],
        )];
        mint_wrapper_key(&mut other, "/inner", "id", &shape);
        assert_eq!(wrapper_above(&other[0]), 1_021);
    }

    /// The scan `cluster_shapes` replaced: each shape against every cluster's first member.
    fn scanned(shapes: &[Option<BTreeSet<String>>]) -> Vec<usize> {
        let mut reps: Vec<&Option<BTreeSet<String>>> = Vec::new();
        let mut out = Vec::new();
        for keys in shapes {
            let joined = reps.iter().position(|rep| match (rep, keys) {
                (Some(a), Some(b)) => {
                    let common = a.intersection(b).count();
                    let union = a.union(b).count();
                    union == 0 || common * 2 >= union
                }
                (None, None) => true,
                _ => false,
            });
            out.push(joined.unwrap_or_else(|| {
                reps.push(keys);
                reps.len() - 1
            }));
        }
        out
    }

    fn shape() -> impl Strategy<Value = Option<BTreeSet<String>>> {
        proptest::option::weighted(0.9, proptest::collection::btree_set("[a-j]", 0..9))
    }

    proptest! {
        #[test]
        fn prefix_filtered_clusters_are_the_scanned_clusters(
            shapes in proptest::collection::vec(shape(), 0..40)
        ) {
            prop_assert_eq!(cluster_shapes(&shapes), scanned(&shapes));
        }
    }

    #[test]
    fn answers_keyed_by_ids_each_make_their_own_cluster() {
        let shapes: Vec<Option<BTreeSet<String>>> = (0..3000)
            .map(|i| Some([format!("key{i}"), "id".to_string()].into_iter().collect()))
            .chain([Some(BTreeSet::new()), None, Some(BTreeSet::new()), None])
            .collect();
        let clusters = cluster_shapes(&shapes);
        assert_eq!(clusters, scanned(&shapes));
        assert_eq!(clusters[3000..], [3000, 3001, 3000, 3001]);
    }
}
