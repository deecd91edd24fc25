//! Which representative of a list renders each item of a keyed template answer.
//!
//! A list whose recorded items had different field sets keeps one representative per shape
//! (`ArrayNode::List::representatives`), and a rendered list cycles through them from a
//! position the request path hashes to. When the answer shows a keyed snapshot
//! (`Variant::keyed_snapshots`: the request's value of a field decided, in every recording,
//! which optional fields the answer had), the recorded answers of that value also show which
//! item shape goes with it: an item added in a later API version carries fields older answers'
//! items lack. Here the n-th rendered item takes the representative whose field set is exactly
//! the snapshot's n-th item's (every field it always renders present, no field it does not
//! know), so a request answers its own value's item shape, not the one the path's hash picks;
//! the item's optional fields then follow the same recorded item (`ReqCtx::keyed_presence`).
//! This module does not decide lengths, tagged-union items (their tag picks the
//! representative) or lists of a snapshot that is not keyed.

use serde_json::Value;
use wraith_model::Node;

/// The index of the first representative, in the render cycle from `start`, whose field set is
/// the one `item` shows; `None` when `item` is no object or no representative fits it.
pub(crate) fn representative_for(
    representatives: &[Node],
    start: usize,
    item: &Value,
) -> Option<usize> {
    let Value::Object(map) = item else {
        return None;
    };
    let n = representatives.len();
    (0..n)
        .map(|i| (start + i) % n)
        .find(|&i| fits_exactly(&representatives[i], map))
}

/// Whether an object representative renders exactly `map`'s keys: every field it always
/// renders is there, and every key there is one of its fields.
fn fits_exactly(rep: &Node, map: &serde_json::Map<String, Value>) -> bool {
    let Node::Object { fields } = rep else {
        return false;
    };
    fields
        .iter()
        .filter(|f| !f.optional)
        .all(|f| map.contains_key(&f.key))
        && map.keys().all(|k| fields.iter().any(|f| &f.key == k))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;
    use wraith_model::Field;

    fn object(keys: &[(&str, bool)]) -> Node {
        Node::Object {
            fields: keys
                .iter()
                .map(|(k, optional)| Field {
                    key: (*k).into(),
                    value: Node::Const { value: json!(1) },
                    optional: *optional,
                    present_ratio_bp: if *optional { 5_000 } else { 10_000 },
                })
                .collect(),
        }
    }

    #[test]
    fn keyed_item_takes_the_representative_of_its_own_field_set() {
        let reps = vec![
            object(&[("id", false), ("label", false)]),
            object(&[("id", false), ("label", false), ("kind", false)]),
        ];
        // The cycle starts at the newer shape; the snapshot's item has the older one.
        assert_eq!(
            representative_for(&reps, 1, &json!({"id": 1, "label": "a"})),
            Some(0)
        );
        assert_eq!(
            representative_for(&reps, 0, &json!({"id": 1, "label": "a", "kind": "x"})),
            Some(1)
        );
    }

    #[test]
    fn optional_fields_may_be_absent_but_unknown_keys_do_not_fit() {
        let reps = vec![object(&[("id", false), ("note", true)])];
        assert_eq!(representative_for(&reps, 0, &json!({"id": 1})), Some(0));
        assert_eq!(
            representative_for(&reps, 0, &json!({"id": 1, "note": "n"})),
            Some(0)
        );
        assert_eq!(
            representative_for(&reps, 0, &json!({"id": 1, "other": 2})),
            None
        );
        assert_eq!(representative_for(&reps, 0, &json!({"note": "n"})), None);
        assert_eq!(representative_for(&reps, 0, &json!([1])), None);
    }

    #[test]
    fn of_several_fitting_representatives_the_cycle_order_decides() {
        let reps = vec![
            object(&[("id", false), ("x", true)]),
            object(&[("id", false), ("y", true)]),
        ];
        let item = json!({"id": 1});
        assert_eq!(representative_for(&reps, 0, &item), Some(0));
        assert_eq!(representative_for(&reps, 1, &item), Some(1));
    }
}
