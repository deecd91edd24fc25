//! The response-finishing side of the engine that the HTTP front door reads on every request:
//! the `X-Wraith-*` control headers, handed out without allocating where the value is a constant
//! of the engine or of the response. A child of the engine module so it reads the engine's
//! private fields without widening their visibility.

use super::*;

/// One `X-Wraith-*` control header of the twin response contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlHeader {
    Provenance,
    Route,
    Exchange,
    Replay,
    TwinAge,
    RecordedAt,
    ProvenanceCounts,
}

impl ControlHeader {
    /// The header name as the contract spells it (`X-Wraith-Provenance`).
    pub fn name(self) -> &'static str {
        match self {
            ControlHeader::Provenance => "X-Wraith-Provenance",
            ControlHeader::Route => "X-Wraith-Route",
            ControlHeader::Exchange => "X-Wraith-Exchange",
            ControlHeader::Replay => "X-Wraith-Replay",
            ControlHeader::TwinAge => "X-Wraith-Twin-Age",
            ControlHeader::RecordedAt => "X-Wraith-Recorded-At",
            ControlHeader::ProvenanceCounts => "X-Wraith-Provenance-Counts",
        }
    }

    /// The lowercase name HTTP/2 requires and `http::HeaderName::from_static` accepts.
    pub fn wire_name(self) -> &'static str {
        match self {
            ControlHeader::Provenance => "x-wraith-provenance",
            ControlHeader::Route => "x-wraith-route",
            ControlHeader::Exchange => "x-wraith-exchange",
            ControlHeader::Replay => "x-wraith-replay",
            ControlHeader::TwinAge => "x-wraith-twin-age",
            ControlHeader::RecordedAt => "x-wraith-recorded-at",
            ControlHeader::ProvenanceCounts => "x-wraith-provenance-counts",
        }
    }
}

/// A control header's value, tagged with how long it stays the same so a caller can reuse
/// what it built from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlValue<'a> {
    /// A compile-time constant (`recorded`, `series-moment;v=1`).
    Static(&'static str),
    /// The same on every response of this engine (twin age, recorded-at).
    Twin(&'a str),
    /// Borrowed from the response (route, exchange).
    Response(&'a str),
    /// Computed for this response (debug provenance counts).
    Owned(String),
}

impl ControlValue<'_> {
    pub fn as_str(&self) -> &str {
        match self {
            ControlValue::Static(s) => s,
            ControlValue::Twin(s) | ControlValue::Response(s) => s,
            ControlValue::Owned(s) => s.as_str(),
        }
    }
}

impl Engine {
    /// Every `X-Wraith-*` control header for `resp` to a request with `method`, per the twin
    /// response contract, in contract order. [`Engine::control_headers`] is this, collected.
    pub fn for_each_control_header<'a>(
        &'a self,
        resp: &'a Response,
        method: &str,
        mut f: impl FnMut(ControlHeader, ControlValue<'a>),
    ) {
        // Under fuzzy fidelity nothing is ever served, so no answer has a provenance ("values
        // seen: none"); the freshness headers below still describe the twin.
        if self.opts.provenance_headers && self.opts.fidelity != Fidelity::Fuzzy {
            f(
                ControlHeader::Provenance,
                ControlValue::Static(resp.provenance.as_str()),
            );
            if let Some(route) = &resp.route {
                f(ControlHeader::Route, ControlValue::Response(route));
            }
            if resp.provenance == Provenance::Recorded
                && let Some(ex) = &resp.exchange
            {
                f(
                    ControlHeader::Exchange,
                    ControlValue::Owned(wire_exchange(ex)),
                );
            }
            if let Some(class) = resp.replay
                && method != "HEAD"
                && self.opts.fidelity != Fidelity::Strict
                && resp.provenance == Provenance::Recorded
            {
                let claim = outbound::ReplayClaim {
                    class,
                    outbound_policy_applied: resp.outbound_policy_applied,
                };
                f(
                    ControlHeader::Replay,
                    ControlValue::Static(claim.header_str()),
                );
            }
        }
        f(
            ControlHeader::TwinAge,
            ControlValue::Twin(&self.twin_age_text),
        );
        if let Some(at) = &self.opts.freshness.recorded_at {
            f(ControlHeader::RecordedAt, ControlValue::Twin(at));
        }
        if self.opts.debug
            && self.opts.fidelity == Fidelity::Synth
            && let Some(c) = resp.field_counts
        {
            f(
                ControlHeader::ProvenanceCounts,
                ControlValue::Owned(format!(
                    "recorded={} template={} fixture={} handler={}",
                    c.recorded, c.template, c.fixture, c.handler
                )),
            );
        }
    }

    /// Every `X-Wraith-*` control header for `resp` to a request with `method`, per the twin
    /// response contract, as (contract-spelled name, value) pairs.
    pub fn control_headers(&self, resp: &Response, method: &str) -> Vec<(String, String)> {
        let mut h = Vec::with_capacity(6);
        self.for_each_control_header(resp, method, |name, value| {
            let value = match value {
                ControlValue::Owned(s) => s,
                other => other.as_str().to_string(),
            };
            h.push((name.name().to_string(), value));
        });
        h
    }
}

/// A moment's source (`<session_id>/<index>`) as `X-Wraith-Exchange` names it: the index as
/// the recording's file stem (`000004`), so `recordings/sessions/<value>.wrec.zst` is the file
/// the answer came from. A source of another form is passed through.
fn wire_exchange(source: &str) -> String {
    match source.rsplit_once('/') {
        Some((session, index))
            if !index.is_empty()
                && index.len() < 6
                && index.bytes().all(|b| b.is_ascii_digit()) =>
        {
            format!("{session}/{index:0>6}")
        }
        _ => source.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_header_wire_names_are_the_lowercase_contract_names() {
        for h in [
            ControlHeader::Provenance,
            ControlHeader::Route,
            ControlHeader::Exchange,
            ControlHeader::Replay,
            ControlHeader::TwinAge,
            ControlHeader::RecordedAt,
            ControlHeader::ProvenanceCounts,
        ] {
            assert_eq!(h.wire_name(), h.name().to_ascii_lowercase());
        }
    }
}
