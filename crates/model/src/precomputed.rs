//! Facts about a model that synth computes once, so that an engine built from the model does not
//! compute them again on every start (`wraith check` builds one engine per run and used to pay
//! for them inside the replay).
//!
//! What is stored is a pure function of the model and of the twin's outbound configuration. The
//! configuration part is named by a fingerprint ([`Precomputed::outbound`]); an engine whose
//! configuration has another fingerprint ignores the stored facts and computes them itself, as an
//! engine does for a model written before this field existed. So the stored facts can make an
//! engine faster, never make it answer differently.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `Model::precomputed`: facts an engine would otherwise compute per moment on first serve.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Precomputed {
    /// Fingerprint of the outbound body configuration (the outbound policy and whether
    /// `[REDACTED]` placeholders are replaced, plus a version of the engine's verdict rules) the
    /// verdicts below were decided under: `wraith_engine`'s `outbound_fingerprint`. Opaque hex.
    pub outbound: String,
    /// Per route id: per exact-replay entry (in the route's `exact` order) one string with one
    /// [`MomentVerdict`] character per moment (in the entry's `moments` order). A route whose
    /// shape does not match (other entry or moment counts) is ignored.
    pub verdicts: BTreeMap<String, Vec<String>>,
    /// Per route id: per variant (in the route's `variants` order) the exact-replay moments,
    /// as `[entry index, moment index]` in the route's `exact`, that the engine renders the
    /// variant's observed holes and lists from (its "snapshot"), one per recorded principal, in
    /// principal order (no principal first). Empty for a variant whose template reads none. A
    /// pure function of the model, so independent of `outbound`; a route whose variant count
    /// does not match, or whose positions do not name JSON moments, is ignored.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub snapshots: BTreeMap<String, Vec<Vec<[usize; 2]>>>,
    /// Per route id: what the outbound PII pass reads from the route's column evidence (every
    /// string the route's recorded bodies and entity records hold, by column), reduced to the
    /// two answers it asks for. A pure function of the model, so independent of `outbound`.
    /// Every route of the model has an entry (most are empty); a route without one has its
    /// evidence gathered from the recordings on first need, as for a model written before this
    /// field existed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, RouteColumns>,
}

/// The column facts of one route ([`Precomputed::columns`]). A column is a body path with every
/// key prefixed by `/` and array indices folded to `/*` (`/data/*/kind`). A column named in
/// neither field answers "no" to both questions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteColumns {
    /// Column → its recorded enum values, sorted: in a column with at most 8 distinct recorded
    /// values, each value recorded on two or more different
    /// carriers (the enclosing object's `id`, else the recorded exchange). The PII pass keeps
    /// such a value verbatim. Columns without one are left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub enum_values: BTreeMap<String, Vec<String>>,
    /// Columns, sorted, that name their carriers: at least two distinct values on distinct
    /// carriers and no value shared between carriers (a one-word name there reads as a
    /// person's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names_carriers: Vec<String>,
}

/// Whether a recorded moment can be served as its stored text, as one character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MomentVerdict {
    /// The stored JSON text is canonical and the outbound body passes change nothing in it.
    pub verbatim: bool,
    /// The stored text names the recorded upstream origin (ASCII case-insensitive).
    pub mentions_upstream: bool,
}

impl MomentVerdict {
    /// `v`: verbatim; `p`: needs the outbound passes; upper case (`V`, `P`): the text also names
    /// the upstream origin.
    pub fn to_char(self) -> char {
        match (self.verbatim, self.mentions_upstream) {
            (true, false) => 'v',
            (false, false) => 'p',
            (true, true) => 'V',
            (false, true) => 'P',
        }
    }

    /// The verdict a character stands for; `None` for `-` (no JSON body) or anything else.
    pub fn from_char(c: char) -> Option<MomentVerdict> {
        let (verbatim, mentions_upstream) = match c {
            'v' => (true, false),
            'p' => (false, false),
            'V' => (true, true),
            'P' => (false, true),
            _ => return None,
        };
        Some(MomentVerdict {
            verbatim,
            mentions_upstream,
        })
    }
}

/// The character of a moment without a JSON body (it has no verdict).
pub const NO_VERDICT: char = '-';

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_round_trips_through_its_character() {
        for verbatim in [false, true] {
            for mentions_upstream in [false, true] {
                let v = MomentVerdict {
                    verbatim,
                    mentions_upstream,
                };
                assert_eq!(MomentVerdict::from_char(v.to_char()), Some(v));
            }
        }
        assert_eq!(MomentVerdict::from_char(NO_VERDICT), None);
        assert_eq!(MomentVerdict::from_char('x'), None);
    }
}
