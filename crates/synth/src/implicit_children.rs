//! Records a create makes by itself (`Route::implicit_children`).
//!
//! Some creates make child records the client never asked for: an instance created from an
//! image gets its disks and a config profile. A client lists them (`GET /instances/:id/disks`)
//! right after the create, and a twin that stores only what the session created lists none.
//! The recordings show them: in a session, the first list of a child collection under a record
//! that session had just created holds items no create of that session answered. Synth keeps
//! each such list (with the create's request) as a sample; the engine, on a create, takes the
//! sample whose request is nearest the session's and stores copies of its items as the new
//! record's children, with fresh keys. Samples listing no implicit child are kept as well: a
//! create without an image makes no disk, and the nearest request tells the two apart. A
//! sample also links each record of another type its items name that the session had created
//! before, through the request's values that record held (a profile's network, found by the
//! subnet the request sent), so the engine names the session's own record there.
//!
//! Not learned: a list after any other write on the collection (a delete, an action such as a
//! clone) in the same session, since its items no longer show what the create made; children
//! a create makes in another collection than `/<create path>/:id/<child>`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use wraith_model::{
    ChildText, EntityType, ImplicitChildren, ImplicitLink, ImplicitSample, Route, StateOp,
};

use crate::observe::{Obs, ReqBody};
use crate::routes::{RouteGroup, Seg};
use crate::values::scalar_key;

/// Samples kept per child collection (the first ones in session order).
pub const MAX_SAMPLES: usize = 32;

/// A create route and one child list route directly under its records.
struct Pair {
    create: usize,
    list: usize,
    /// Creates of the child type into the same collection.
    child_creates: Vec<usize>,
    /// The list's last literal segment (`disks`).
    child_segment: String,
}

/// A freshly created parent whose child list was not recorded yet.
struct Pending {
    request: Value,
    parent_key: String,
    /// The concrete collection path (`/instances/7/disks`).
    collection: String,
    /// Child keys the session's own creates answered in the collection.
    created: BTreeSet<String>,
    /// The create's index in the observations.
    at: usize,
}

/// Learn every create route's implicit children into `built` (parallel to `groups`).
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    let pairs = pairs(groups, built);
    if pairs.is_empty() {
        return;
    }
    // Route and path-parameter values of each observation.
    let route_of = crate::routes::route_of(groups, obs.len());
    let pk_of = |r: usize| -> Option<&str> {
        let ty = built[r].entity_type.as_deref()?;
        entity_types.get(ty).map(|t| t.primary_key.as_str())
    };
    let mut samples: BTreeMap<usize, Vec<ImplicitSample>> = BTreeMap::new();
    let mut pending: BTreeMap<(usize, Vec<String>), Pending> = BTreeMap::new();
    let mut session: Option<&str> = None;
    let mut session_start = 0;
    for (i, o) in obs.iter().enumerate() {
        if session != Some(o.session) {
            session = Some(o.session);
            session_start = i;
            pending.clear();
        }
        let Some((r, j)) = route_of[i] else {
            continue;
        };
        let params = &groups[r].param_values[j];
        let ok = (200..300).contains(&o.status);
        let path = o.ex.request.path.trim_end_matches('/');
        // Any other write inside a pending collection spoils it: its list no longer shows
        // only what the create made.
        if o.method != "GET" && o.method != "HEAD" {
            pending.retain(|(p, _), pend| {
                let child_create = pairs[*p].child_creates.contains(&r) && path == pend.collection;
                child_create
                    || !(path == pend.collection
                        || path.starts_with(&format!("{}/", pend.collection)))
            });
        }
        for (p, pair) in pairs.iter().enumerate() {
            if r == pair.create && ok {
                let (Some(pk), Some(body)) = (pk_of(r), o.resp_json()) else {
                    continue;
                };
                let Some(key) = entity_key(&body, pk) else {
                    continue;
                };
                let request = match &o.req {
                    ReqBody::Json(v) => v.clone(),
                    _ => Value::Null,
                };
                let mut list_params = params.clone();
                list_params.push(key.clone());
                let collection = format!("{path}/{key}/{}", pair.child_segment);
                pending.insert(
                    (p, list_params),
                    Pending {
                        request,
                        parent_key: key,
                        collection,
                        created: BTreeSet::new(),
                        at: i,
                    },
                );
            } else if pair.child_creates.contains(&r) && ok {
                let Some(pend) = pending.get_mut(&(p, params.clone())) else {
                    continue;
                };
                if let (Some(pk), Some(body)) = (pk_of(r), o.resp_json())
                    && let Some(key) = entity_key(&body, pk)
                {
                    pend.created.insert(key);
                }
            } else if r == pair.list && o.method == "GET" {
                let Some(pend) = pending.remove(&(p, params.clone())) else {
                    continue;
                };
                if !ok {
                    continue;
                }
                let (Some(pk), Some(shape), Some(body)) =
                    (pk_of(r), built[r].list.as_ref(), o.resp_json())
                else {
                    continue;
                };
                let Some(items) = body.pointer(&shape.items_pointer).and_then(Value::as_array)
                else {
                    continue;
                };
                // A child the create made is new to the client: a listed record the session
                // met before (one it created elsewhere and named in the create, as a firewall
                // or a volume attached to an instance) is a reference, not a child. After the
                // create, an answer may name the child (a node naming the network profile its
                // balancer's create made); only a request naming it, or a create answering
                // it as its own record, says the session made or knew it otherwise.
                let before = &obs[session_start..=pend.at];
                let named_after = |k: &str| {
                    (pend.at + 1..i).any(|e| {
                        let o = &obs[e];
                        holds_token(o.ex.request.path.as_bytes(), k.as_bytes())
                            || holds_token(&o.ex.request.body, k.as_bytes())
                            || route_of[e].is_some_and(|(g, _)| {
                                built[g].state_op == Some(StateOp::Create)
                                    && (200..300).contains(&o.status)
                                    && holds_token(&o.ex.response_body(), k.as_bytes())
                                    && pk_of(g).is_some_and(|gpk| {
                                        o.resp_json()
                                            .and_then(|b| entity_key(&b, gpk))
                                            .is_some_and(|own| own == k)
                                    })
                            })
                    })
                };
                let implicit: Vec<Value> = items
                    .iter()
                    .filter(|it| {
                        it.get(pk).and_then(scalar_key).is_some_and(|k| {
                            !pend.created.contains(&k)
                                && k != pend.parent_key
                                && !before.iter().any(|e| mentions(e, &k))
                                && !named_after(&k)
                        })
                    })
                    .cloned()
                    .collect();
                let kept = samples.entry(p).or_default();
                if kept.len() < MAX_SAMPLES {
                    let earlier_creates = (session_start..i).filter_map(|e| {
                        let (g, _) = route_of[e]?;
                        let create = built[g].state_op == Some(StateOp::Create)
                            && (200..300).contains(&obs[e].status);
                        let ty = built[g].entity_type.as_deref().filter(|_| create)?;
                        Some((&obs[e], ty, pk_of(g)?))
                    });
                    let links = links(
                        &implicit,
                        pk,
                        &pend.request,
                        &pend.parent_key,
                        earlier_creates,
                    );
                    kept.push(ImplicitSample {
                        request: pend.request,
                        parent_key: pend.parent_key,
                        items: implicit,
                        links,
                    });
                }
            }
        }
    }
    for (p, samples) in samples {
        // Only a collection some create filled by itself is worth an entry.
        if samples.iter().all(|s| s.items.is_empty()) {
            continue;
        }
        let pair = &pairs[p];
        let Some(ty) = built[pair.list].entity_type.clone() else {
            continue;
        };
        let list_path = built[pair.list].path.clone();
        let texts = child_texts(&samples, entity_types);
        built[pair.create].implicit_children.push(ImplicitChildren {
            list_path,
            entity_type: ty,
            samples,
            texts,
        });
    }
}

/// Shortest text of a named record's field spelled into a child's text: a shorter one (`1`,
/// `us`) is found inside unrelated text by chance.
const MIN_SPELLED_LEN: usize = 3;

/// The children's text fields spelled from a record the create's request named
/// ([`ChildText`]): for every sample item's top-level string, every top-level request string
/// that is the key of a recorded record, and every string field of that record (at least
/// [`MIN_SPELLED_LEN`] long) the text holds, the text around it. Kept when samples spelled it
/// so with at least two different values of the record's field, and every sample naming such a
/// record has an item spelling it so: one value inside a text may be chance (every image made
/// by `linode`, every kernel `linode/grub2`), two are a rule.
fn child_texts(
    samples: &[ImplicitSample],
    entity_types: &BTreeMap<String, EntityType>,
) -> Vec<ChildText> {
    // Per candidate rule: the record values the samples spelled it with.
    let mut spelled: BTreeMap<ChildText, BTreeSet<String>> = BTreeMap::new();
    for sample in samples {
        let Some(request) = sample.request.as_object() else {
            continue;
        };
        for (sent_field, sent) in request {
            let Some(named) = sent.as_str() else {
                continue;
            };
            for (ty, et) in entity_types {
                let Some(Value::Object(record)) = et.records.get(named) else {
                    continue;
                };
                for item in &sample.items {
                    let Some(item) = item.as_object() else {
                        continue;
                    };
                    for (field, text) in item {
                        let Some(text) = text.as_str() else {
                            continue;
                        };
                        for (from, value) in record {
                            let Some(value) = value.as_str().filter(|v| v.len() >= MIN_SPELLED_LEN)
                            else {
                                continue;
                            };
                            let Some(at) = text.find(value) else {
                                continue;
                            };
                            let pointer = format!("/{}", crate::observe::escape_token(sent_field));
                            spelled
                                .entry(ChildText {
                                    field: field.clone(),
                                    request_pointer: pointer,
                                    entity_type: ty.clone(),
                                    from: from.clone(),
                                    prefix: text[..at].to_string(),
                                    suffix: text[at + value.len()..].to_string(),
                                })
                                .or_default()
                                .insert(value.to_string());
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (rule, values) in spelled {
        if values.len() < 2 {
            continue;
        }
        let ChildText {
            field,
            request_pointer,
            entity_type,
            from,
            prefix,
            suffix,
        } = &rule;
        // Every sample naming a record of the type has an item spelling its field so.
        let holds = samples.iter().all(|sample| {
            let Some(record) = sample
                .request
                .pointer(request_pointer)
                .and_then(Value::as_str)
                .and_then(|k| entity_types.get(entity_type)?.records.get(k))
            else {
                return true;
            };
            let Some(value) = record.get(from).and_then(Value::as_str) else {
                return true;
            };
            let text = format!("{prefix}{value}{suffix}");
            sample.items.is_empty()
                || sample
                    .items
                    .iter()
                    .any(|i| i.get(field).and_then(Value::as_str) == Some(text.as_str()))
        });
        if holds {
            out.push(rule);
        }
    }
    out
}

/// The records of another type the implicit `items` name that the session had created
/// before (`creates`: its earlier 2xx creates, with their entity type and primary key), each
/// with the pointers of the create request's values its create answer held: the request named
/// the record only through them (an interface's subnet, inside the network the item names).
/// Values shorter than three characters, the parent's key, a listed item's key and values the
/// request sent itself are no candidates (the last are renamed as echoes of the request).
pub(crate) fn links<'a, 'b: 'a>(
    items: &[Value],
    child_pk: &str,
    request: &Value,
    parent_key: &str,
    creates: impl Iterator<Item = (&'a Obs<'b>, &'a str, &'a str)>,
) -> Vec<ImplicitLink> {
    let mut sent = Vec::new();
    leaves(request, &mut sent);
    let sent: Vec<(String, String)> = sent
        .into_iter()
        .filter(|(_, t)| t.chars().count() >= 3)
        .collect();
    if sent.is_empty() {
        return Vec::new();
    }
    let mut named = Vec::new();
    for item in items {
        leaves(item, &mut named);
    }
    let own: BTreeSet<String> = items
        .iter()
        .filter_map(|it| it.get(child_pk).and_then(scalar_key))
        .collect();
    let mut candidates: BTreeSet<String> = named
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| {
            t.chars().count() >= 3
                && t != parent_key
                && !sent.iter().any(|(_, s)| s == t)
                && !own.contains(t)
        })
        .collect();
    let mut out = Vec::new();
    for (o, ty, pk) in creates {
        if candidates.is_empty() {
            break;
        }
        // Cheap first: an answer whose bytes hold no candidate as a token is not parsed.
        let body = o.ex.response_body();
        if !candidates.iter().any(|c| holds_token(&body, c.as_bytes())) {
            continue;
        }
        let Some(answer) = o.resp_json() else {
            continue;
        };
        let Some(key) = entity_key(&answer, pk).filter(|k| candidates.contains(k)) else {
            continue;
        };
        let mut held = Vec::new();
        leaves(&answer, &mut held);
        let request_pointers: Vec<String> = sent
            .iter()
            .filter(|(_, s)| held.iter().any(|(_, h)| h == s))
            .map(|(p, _)| p.clone())
            .collect();
        candidates.remove(&key);
        if !request_pointers.is_empty() {
            out.push(ImplicitLink {
                value: key,
                entity_type: ty.to_string(),
                request_pointers,
            });
        }
    }
    out.sort_by(|a, b| a.value.cmp(&b.value));
    out
}

/// Every string or number leaf under `v` with its JSON pointer and its text.
fn leaves(v: &Value, out: &mut Vec<(String, String)>) {
    wraith_model::pointer::for_each_leaf(v, &mut |at, leaf| {
        if let Some(t) = scalar_key(leaf) {
            out.push((at.to_string(), t));
        }
    });
}

/// Every (create route, child list route) pair: the list is `GET <create path>/:param/<lit>`
/// on the same origin, both with an entity type.
fn pairs(groups: &[RouteGroup], built: &[Route]) -> Vec<Pair> {
    let mut out = Vec::new();
    for (l, lg) in groups.iter().enumerate() {
        let list = &built[l];
        if lg.method != "GET" || list.state_op != Some(StateOp::List) || list.list.is_none() {
            continue;
        }
        let Some(child_ty) = list.entity_type.as_deref() else {
            continue;
        };
        let n = lg.segs.len();
        let (Some(Seg::Param(_)), Some(Seg::Lit(child_segment))) =
            (n.checked_sub(2).map(|k| &lg.segs[k]), lg.segs.last())
        else {
            continue;
        };
        let parent_segs = &lg.segs[..n - 2];
        for (c, cg) in groups.iter().enumerate() {
            let create = &built[c];
            if cg.method != "POST"
                || create.state_op != Some(StateOp::Create)
                || create.entity_type.is_none()
                // A list of the record's own type under it (its history) holds no children.
                || create.entity_type.as_deref() == Some(child_ty)
                || cg.origin != lg.origin
                || !same_shape(&cg.segs, parent_segs)
            {
                continue;
            }
            let child_creates = groups
                .iter()
                .enumerate()
                .filter(|(k, g)| {
                    g.method == "POST"
                        && built[*k].state_op == Some(StateOp::Create)
                        && built[*k].entity_type.as_deref() == Some(child_ty)
                        && g.origin == lg.origin
                        && same_shape(&g.segs, &lg.segs)
                })
                .map(|(k, _)| k)
                .collect();
            out.push(Pair {
                create: c,
                list: l,
                child_creates,
                child_segment: child_segment.clone(),
            });
        }
    }
    out
}

/// Same literals at the same positions, parameters where the other has parameters.
pub(crate) fn same_shape(a: &[Seg], b: &[Seg]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Seg::Lit(x), Seg::Lit(y)) => x == y,
            (Seg::Param(_), Seg::Param(_)) => true,
            _ => false,
        })
}

/// The key of the record a create answered: at the root, else in the first top-level object
/// holding the key (`/data`).
fn entity_key(body: &Value, pk: &str) -> Option<String> {
    let obj = body.as_object()?;
    if let Some(k) = obj.get(pk) {
        return scalar_key(k);
    }
    obj.values()
        .find_map(|v| v.as_object().and_then(|o| o.get(pk)))
        .and_then(scalar_key)
}

/// Whether an exchange's request path, request body or response body holds `key` as a whole
/// token (not inside a longer run of letters, digits, `-` or `_`).
fn mentions(o: &Obs<'_>, key: &str) -> bool {
    let k = key.as_bytes();
    holds_token(o.ex.request.path.as_bytes(), k)
        || holds_token(&o.ex.request.body, k)
        || holds_token(&o.ex.response_body(), k)
}

fn holds_token(hay: &[u8], key: &[u8]) -> bool {
    if key.is_empty() || hay.len() < key.len() {
        return false;
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    (0..=hay.len() - key.len()).any(|at| {
        hay[at..at + key.len()] == *key
            && (at == 0 || !word(hay[at - 1]))
            && hay.get(at + key.len()).is_none_or(|b| !word(*b))
    })
}
