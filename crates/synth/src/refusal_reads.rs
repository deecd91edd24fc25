//! Refusal-only reads bound to the type whose ids they ask for.
//!
//! A read (or update, or delete) route every recorded answer of which was a refusal learns no
//! record of its own, so its collection is named from its path (`/parts/:id` → `parts`) while
//! the records it would read were created under another path (`/widgets/:id/parts` →
//! `widgets_parts`). Where every id it was asked for has the shape of one other type's minted
//! ids (that type's prefix, then its length of its characters: `prt_` and 14 base62), the
//! route reads that type: a session's own records are found, and the ids recorded as missing
//! stay missing. Nothing is bound on a shape without a prefix (plain numbers or UUIDs name
//! records of many types), on fewer than two asked ids, or when two types fit.

use std::collections::BTreeMap;

use wraith_model::{EntityType, IdCharset, IdShape, StateOp};

use crate::state::RoutePlan;

/// Ids a refusal-only type must have been asked for before it is bound.
const MIN_ASKED: usize = 2;

/// Rebind every refusal-only type's routes (and the parent parameters naming it) to the one
/// type whose minted ids its asked ids fit, moving its missing ids there.
pub fn bind(plans: &mut [RoutePlan], entity_types: &mut BTreeMap<String, EntityType>) {
    let mut moves: Vec<(String, String)> = Vec::new();
    for (name, et) in entity_types.iter() {
        if !et.known_ids.is_empty()
            || !et.records.is_empty()
            || et.id_shape.is_some()
            || et.known_missing.len() < MIN_ASKED
        {
            continue;
        }
        // Only a type its reads, updates and deletes alone name.
        let own_routes_refuse_only = plans
            .iter()
            .filter(|p| p.entity_type.as_deref() == Some(name.as_str()))
            .all(|p| {
                matches!(
                    p.state_op,
                    Some(StateOp::Read | StateOp::Update | StateOp::Delete)
                )
            });
        if !own_routes_refuse_only {
            continue;
        }
        let fits: Vec<&String> = entity_types
            .iter()
            .filter(|(other, _)| *other != name)
            .filter(|(_, o)| {
                o.id_shape
                    .as_ref()
                    .is_some_and(|shape| et.known_missing.iter().all(|id| fits_token(shape, id)))
            })
            .map(|(other, _)| other)
            .collect();
        if let [only] = fits.as_slice() {
            moves.push((name.clone(), (*only).clone()));
        }
    }
    for (from, to) in moves {
        for plan in plans.iter_mut() {
            if plan.entity_type.as_deref() == Some(from.as_str()) {
                plan.entity_type = Some(to.clone());
            }
            for parent in &mut plan.parent_params {
                if parent.entity_type == from {
                    parent.entity_type = to.clone();
                }
            }
        }
        if let Some(old) = entity_types.remove(&from)
            && let Some(target) = entity_types.get_mut(&to)
        {
            target.known_missing.extend(old.known_missing);
        }
    }
}

/// Whether `id` is a token of `shape` with a prefix: the prefix, then exactly the shape's
/// length of its characters.
fn fits_token(shape: &IdShape, id: &str) -> bool {
    let IdShape::Token {
        prefix,
        charset,
        length,
    } = shape
    else {
        return false;
    };
    if prefix.is_empty() {
        return false;
    }
    let Some(rest) = id.strip_prefix(prefix.as_str()) else {
        return false;
    };
    rest.len() == *length && rest.bytes().all(|b| in_charset(*charset, b))
}

fn in_charset(charset: IdCharset, b: u8) -> bool {
    match charset {
        IdCharset::Digits => b.is_ascii_digit(),
        IdCharset::Hex => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        IdCharset::UpperAlnum => b.is_ascii_digit() || b.is_ascii_uppercase(),
        IdCharset::LowerAlnum => b.is_ascii_digit() || b.is_ascii_lowercase(),
        IdCharset::Base62 => b.is_ascii_alphanumeric(),
        IdCharset::Base64Url => b.is_ascii_alphanumeric() || b == b'-' || b == b'_',
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_fits_only_with_its_prefix_length_and_characters() {
        let shape = IdShape::Token {
            prefix: "prt_".into(),
            charset: IdCharset::Base62,
            length: 4,
        };
        assert!(fits_token(&shape, "prt_aZ09"));
        assert!(!fits_token(&shape, "prt_aZ0"));
        assert!(!fits_token(&shape, "wid_aZ09"));
        assert!(!fits_token(&shape, "prt_aZ-9"));
        let bare = IdShape::Token {
            prefix: String::new(),
            charset: IdCharset::Digits,
            length: 4,
        };
        assert!(!fits_token(&bare, "1234"));
    }
}
