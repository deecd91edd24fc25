//! Fields a record moves through by itself after its create (`Route::read_progressions`).
//!
//! A Linode instance is created `provisioning`; a client then polls it, and the recorded reads
//! show `provisioning`, `booting`, `running`. The session's store holds the record as the create
//! answered it, so without this a twin's instance stayed `provisioning` however long a client
//! polled, and a client waiting for `running` never got it.
//!
//! Per read route of an entity type, walking each session in recorded order: for every record a
//! 2xx create of the type answered, the sequence of values the route's 2xx reads of it showed at
//! a top-level field, from the create up to the first other write whose path names the record
//! (an update, a `boot` action: what follows is that write's doing). A field is learned when
//! every recorded 2xx create of the type answered one and the same string there, no update of
//! the type echoes the field from its request (the client sets it), and at least
//! [`MIN_SAMPLES`] sequences show it change. The states kept are the most common of the changing
//! sequences (ties: the shorter, then the first in JSON text order).
//!
//! Not here: applying them (the engine counts a record's reads and shows the state at that
//! count).

use std::collections::BTreeMap;

use serde_json::Value;
use wraith_model::{
    BodyTemplate, EntityType, Hole, HoleKind, Node, ReadProgression, Route, StateOp,
};

use crate::observe::Obs;
use crate::routes::{RecordKey, RouteGroup, create_answers};
use crate::values::{self, scalar_key};

/// Fewest recorded sequences, each showing the field change, that may teach a progression.
const MIN_SAMPLES: usize = 2;

/// Learn every read route's progressions into `built` (same order as `groups`).
pub fn learn(
    groups: &[RouteGroup],
    built: &mut [Route],
    entity_types: &BTreeMap<String, EntityType>,
    obs: &[Obs<'_>],
) {
    // Every 2xx create answer per type, and the create of each record.
    let mut created: BTreeMap<&str, Vec<serde_json::Map<String, Value>>> = BTreeMap::new();
    let mut creates: BTreeMap<RecordKey<'_>, usize> = BTreeMap::new();
    for (ty, pk, i) in create_answers(groups, built, entity_types, obs) {
        // Top-level fields are all this stage reads: the rest is skimmed.
        let Some(Value::Object(body)) = obs[i].resp_json_levels(1) else {
            continue;
        };
        if let Some(key) = body.get(pk).and_then(scalar_key) {
            creates.entry((obs[i].session, ty, key)).or_insert(i);
        }
        created.entry(ty).or_default().push(body);
    }
    if creates.is_empty() {
        return;
    }
    let mut learned: Vec<Vec<ReadProgression>> = vec![Vec::new(); built.len()];
    for ((g, route), out) in groups.iter().zip(built.iter()).zip(learned.iter_mut()) {
        if route.state_op != Some(StateOp::Read) {
            continue;
        }
        let (Some(ty), Some(param)) = (route.entity_type.as_deref(), route.id_param.as_deref())
        else {
            continue;
        };
        let Some(pk) = entity_types.get(ty).map(|t| t.primary_key.as_str()) else {
            continue;
        };
        let Some(pi) = g.params.iter().position(|n| n == param) else {
            continue;
        };
        // Per record, the read answers in recorded order, up to another write naming it.
        let mut reads: BTreeMap<RecordKey<'_>, Vec<serde_json::Map<String, Value>>> =
            BTreeMap::new();
        for (&i, vals) in g.obs.iter().zip(&g.param_values) {
            if !values::is_2xx(obs[i].status) {
                continue;
            }
            let Some(id) = vals.get(pi) else { continue };
            let key = (obs[i].session, ty, values::decode_segment(id));
            let Some(&c) = creates.get(&key) else {
                continue;
            };
            if c > i || written_between(obs, c, i, &key.2) {
                continue;
            }
            let Some(Value::Object(answer)) = obs[i].resp_json_levels(1) else {
                continue;
            };
            if answer.get(pk).and_then(scalar_key).as_deref() != Some(key.2.as_str()) {
                continue;
            }
            reads.entry(key).or_default().push(answer);
        }
        let Some(answers) = created.get(ty) else {
            continue;
        };
        for (field, from) in created_states(answers, pk) {
            if client_set(built, ty, &field) {
                continue;
            }
            let changing: Vec<Vec<Value>> = reads
                .values()
                .map(|seq| {
                    seq.iter()
                        .map_while(|a| a.get(&field).filter(|v| v.is_string()).cloned())
                        .collect::<Vec<_>>()
                })
                .filter(|seq| seq.iter().any(|v| *v != from))
                .collect();
            if changing.len() < MIN_SAMPLES {
                continue;
            }
            if let Some(states) = most_common(changing) {
                out.push(ReadProgression {
                    field,
                    from,
                    states,
                });
            }
        }
    }
    for (route, progressions) in built.iter_mut().zip(learned) {
        route.read_progressions = progressions;
    }
}

/// Whether a request between observations `from` and `to` (exclusive) of the same session,
/// other than a read, names the record `key` as a path segment.
fn written_between(obs: &[Obs<'_>], from: usize, to: usize, key: &str) -> bool {
    let session = obs[from].session;
    obs[from + 1..to].iter().any(|o| {
        o.session == session
            && !matches!(o.method.as_str(), "GET" | "HEAD" | "OPTIONS")
            && o.segments.iter().any(|s| values::decode_segment(s) == key)
    })
}

/// The top-level fields (besides the key) where every create answer held one and the same
/// string: (field, that string).
fn created_states(answers: &[serde_json::Map<String, Value>], pk: &str) -> Vec<(String, Value)> {
    let Some((first, rest)) = answers.split_first() else {
        return Vec::new();
    };
    first
        .iter()
        .filter(|(k, v)| k.as_str() != pk && v.is_string())
        .filter(|(k, v)| rest.iter().all(|a| a.get(k.as_str()) == Some(v)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Whether a 2xx answer of an update of `ty` echoes `field` from its request.
fn client_set(built: &[Route], ty: &str, field: &str) -> bool {
    built
        .iter()
        .filter(|r| r.state_op == Some(StateOp::Update) && r.entity_type.as_deref() == Some(ty))
        .flat_map(|r| r.variants.iter())
        .filter(|v| values::is_2xx(v.status))
        .any(|v| {
            let BodyTemplate::Json {
                root: Node::Object { fields },
            } = &v.body
            else {
                return false;
            };
            fields.iter().any(|f| {
                f.key == field
                    && matches!(
                        &f.value,
                        Node::Hole(Hole {
                            source: HoleKind::Echo { .. },
                            ..
                        })
                    )
            })
        })
}

/// The most common sequence; ties go to the shorter, then to the first in JSON text order.
fn most_common(seqs: Vec<Vec<Value>>) -> Option<Vec<Value>> {
    let mut counts: BTreeMap<String, (usize, Vec<Value>)> = BTreeMap::new();
    for seq in seqs {
        let text = Value::Array(seq.clone()).to_string();
        counts.entry(text).or_insert((0, seq)).0 += 1;
    }
    counts
        .into_iter()
        .min_by(|(ta, (na, a)), (tb, (nb, b))| {
            nb.cmp(na).then(a.len().cmp(&b.len())).then(ta.cmp(tb))
        })
        .map(|(_, (_, seq))| seq)
}
