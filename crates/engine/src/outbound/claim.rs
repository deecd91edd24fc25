//! The `X-Wraith-Replay` value: how the twin writes it and how a reader must read it.
//!
//! Grammar: `<class>;v=<n>[;<parameter>]`. A reader splits on `;` and matches every token
//! exactly; anything it does not know (a class, a version, a parameter) makes the whole value
//! "no claim" — never a weaker claim — because a skipped parameter may be the one saying the
//! bytes are not what the reader is about to compare.

use crate::api::ReplayClass;

/// A recognized exactness claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayClaim {
    pub class: ReplayClass,
    /// `;outbound-policy=applied`: compare against the recording put through the twin's
    /// outbound policy, not against the raw recorded bytes.
    pub outbound_policy_applied: bool,
}

impl ReplayClaim {
    /// The header value the twin emits.
    pub fn header_value(&self) -> String {
        self.header_str().to_string()
    }

    /// [`ReplayClaim::header_value`] without the allocation: every claim is one of four
    /// constants.
    pub fn header_str(&self) -> &'static str {
        match (self.class, self.outbound_policy_applied) {
            (ReplayClass::SeriesMoment, false) => "series-moment;v=1",
            (ReplayClass::SeriesMoment, true) => "series-moment;v=1;outbound-policy=applied",
            (ReplayClass::SessionBoundMoment, false) => "session-bound-moment;v=1",
            (ReplayClass::SessionBoundMoment, true) => {
                "session-bound-moment;v=1;outbound-policy=applied"
            }
        }
    }

    /// Read a header value fail-closed: `None` unless every token is known.
    pub fn parse(value: &str) -> Option<ReplayClaim> {
        let mut tokens = value.split(';');
        let class = match tokens.next()? {
            "series-moment" => ReplayClass::SeriesMoment,
            "session-bound-moment" => ReplayClass::SessionBoundMoment,
            _ => return None,
        };
        if tokens.next()? != "v=1" {
            return None;
        }
        let mut outbound_policy_applied = false;
        for t in tokens {
            match t {
                "outbound-policy=applied" if !outbound_policy_applied => {
                    outbound_policy_applied = true;
                }
                _ => return None,
            }
        }
        Some(ReplayClaim {
            class,
            outbound_policy_applied,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emitted_values_read_back_as_the_same_claim() {
        for class in [ReplayClass::SeriesMoment, ReplayClass::SessionBoundMoment] {
            for applied in [false, true] {
                let c = ReplayClaim {
                    class,
                    outbound_policy_applied: applied,
                };
                assert_eq!(ReplayClaim::parse(&c.header_value()), Some(c));
            }
        }
    }

    #[test]
    fn unknown_versions_classes_and_parameters_are_no_claim() {
        for v in [
            "series-moment;v=2",
            "series-moment",
            "series-moment;v=1;outbound-policy=partial",
            "series-moment;v=1;future=1",
            "series-moment;v=1;outbound-policy=applied;outbound-policy=applied",
            "chunk-moment;v=1",
            "Series-Moment;v=1",
            "series-moment; v=1",
            "",
        ] {
            assert_eq!(ReplayClaim::parse(v), None, "{v:?} must read as no claim");
        }
    }
}
