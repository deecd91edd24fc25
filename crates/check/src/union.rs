//! Tagged unions in `wraith check`: the `[[diff.tagged_union_policy]]` entries, validated and
//! compiled, and which routes of a model have a tagged union at all.
//!
//! The judging itself is in [`crate::diff`] (an element of a tagged-union list is judged under
//! the representative of its own tag; an unrecorded tag by the route's [`UnknownTagPolicy`]).
//! What this is not: synth's detection of a discriminator (`wraith_synth::union`).

use wraith_model::{ArrayNode, BodyTemplate, Node, Route};

pub use crate::diff::UnknownTagPolicy;

/// One `[[diff.tagged_union_policy]]` entry as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyInput {
    /// `METHOD /path` as the report names routes (globs `*` allowed).
    pub route: String,
    pub policy: String,
}

/// A bad `[[diff.tagged_union_policy]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[[diff.tagged_union_policy]] entry {number} (route `{route}`): {message}")]
pub struct PolicyError {
    /// 1-based position of the entry in the file.
    pub number: usize,
    pub route: String,
    pub message: String,
}

/// The compiled `[[diff.tagged_union_policy]]` entries and `[diff] split_variants`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnionRules {
    /// (route pattern, policy) in file order; the first entry matching a route wins.
    pub policies: Vec<(String, UnknownTagPolicy)>,
    /// `[diff] split_variants`: judge an answer of a variant whose top-level answers are a
    /// tagged union under the per-type template of the recording's tag.
    pub split_variants: bool,
}

impl UnionRules {
    /// Validate every entry: the route must be `METHOD /path` and the policy one of
    /// [`UnknownTagPolicy::ALL`]. All problems are returned, in file order.
    pub fn compile(entries: &[PolicyInput]) -> Result<UnionRules, Vec<PolicyError>> {
        let mut errors = Vec::new();
        let mut policies = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let err = |message: String| PolicyError {
                number: i + 1,
                route: e.route.clone(),
                message,
            };
            let route = e.route.trim();
            let route_ok = route
                .split_once(' ')
                .is_some_and(|(m, p)| !m.is_empty() && (p.starts_with('/') || p.starts_with('*')));
            if !route_ok {
                errors.push(err(
                    "`route` must be `METHOD /path` as the report names routes, e.g. \
                     `GET /api/v1/notifications`"
                        .to_string(),
                ));
            }
            match UnknownTagPolicy::parse(e.policy.trim()) {
                Some(p) if route_ok => policies.push((route.to_string(), p)),
                Some(_) => {}
                None => errors.push(err(format!(
                    "`policy = \"{}\"` is not a policy; write one of {}",
                    e.policy,
                    UnknownTagPolicy::ALL.map(|p| p.as_str()).join(", ")
                ))),
            }
        }
        if errors.is_empty() {
            Ok(UnionRules {
                policies,
                split_variants: false,
            })
        } else {
            Err(errors)
        }
    }

    /// The policy for an unrecorded tag in the answers of `route` (`METHOD /path`, the route
    /// whose template is judged): the first matching entry's, else `reject_unknown`.
    pub fn policy(&self, route: Option<&str>) -> UnknownTagPolicy {
        let Some(route) = route else {
            return UnknownTagPolicy::default();
        };
        self.policies
            .iter()
            .find(|(pattern, _)| crate::rules::glob(pattern, route))
            .map(|(_, p)| *p)
            .unwrap_or_default()
    }
}

/// The discriminator keys of a route's tagged unions (its variants' top-level unions and every
/// tagged-union list in its JSON templates), distinct, in template order (empty when the route
/// has none).
pub fn route_discriminators(route: &Route) -> Vec<String> {
    fn walk(node: &Node, out: &mut Vec<String>) {
        match node {
            Node::Object { fields } => fields.iter().for_each(|f| walk(&f.value, out)),
            Node::Array(ArrayNode::Tuple { items }) => items.iter().for_each(|n| walk(n, out)),
            Node::Array(ArrayNode::List {
                representatives,
                discriminator,
                ..
            }) => {
                if let Some(d) = discriminator
                    && !out.contains(d)
                {
                    out.push(d.clone());
                }
                representatives.iter().for_each(|n| walk(n, out));
            }
            Node::Const { .. } | Node::Hole(_) => {}
        }
    }
    let mut out = Vec::new();
    for v in &route.variants {
        if let Some(u) = &v.union
            && !out.contains(&u.discriminator)
        {
            out.push(u.discriminator.clone());
        }
        if let BodyTemplate::Json { root } = &v.body {
            walk(root, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(route: &str, policy: &str) -> PolicyInput {
        PolicyInput {
            route: route.into(),
            policy: policy.into(),
        }
    }

    #[test]
    fn the_first_matching_entry_decides_and_reject_unknown_is_the_default() {
        let rules = UnionRules::compile(&[
            entry("GET /feed", "fallback_common_schema"),
            entry("GET /*", "replay_representative"),
        ])
        .expect("valid");
        assert_eq!(
            rules.policy(Some("GET /feed")),
            UnknownTagPolicy::FallbackCommonSchema
        );
        assert_eq!(
            rules.policy(Some("GET /other")),
            UnknownTagPolicy::ReplayRepresentative
        );
        assert_eq!(
            rules.policy(Some("POST /feed")),
            UnknownTagPolicy::RejectUnknown
        );
        assert_eq!(rules.policy(None), UnknownTagPolicy::RejectUnknown);
    }

    #[test]
    fn a_bad_policy_or_route_is_named_with_its_entry() {
        let errors = UnionRules::compile(&[
            entry("GET /feed", "reject_unknown"),
            entry("GET /feed", "be_lenient"),
            entry("/feed", "reject_unknown"),
        ])
        .expect_err("invalid");
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].number, 2);
        assert!(
            errors[0].to_string().contains("be_lenient"),
            "{}",
            errors[0]
        );
        assert!(errors[0].to_string().contains("fallback_common_schema"));
        assert_eq!(errors[1].number, 3);
    }
}
