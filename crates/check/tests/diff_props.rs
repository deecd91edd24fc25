//! Invariants of the diff: a body never diverges from itself, whatever template it is judged
//! under; a `List` array is judged the same in any order; any single changed leaf is found at
//! its own path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Value, json};
use wraith_check::diff::{BodyDiff, Category, EchoContext};
use wraith_model::{ArrayNode, Node};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z]{0,6}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn diff(t: Option<&Node>, e: &Value, a: &Value) -> Vec<(String, Category)> {
    let echo = EchoContext::default();
    let mut d = BodyDiff::new(&echo);
    d.run(t, e, a);
    d.divergences
        .into_iter()
        .map(|x| (x.path, x.category))
        .collect()
}

/// Every leaf path of a value, with the leaf, in the diff's path syntax.
fn leaves(v: &Value, path: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                leaves(x, format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                leaves(x, format!("{path}[{i}]"), out);
            }
        }
        _ => out.push((path, v.clone())),
    }
}

fn set_leaf(v: &mut Value, path: &str, new: Value) {
    // Walk the same path syntax back (keys are [a-z]+, so no quoting is involved).
    let mut cur = v;
    let rest = path.strip_prefix("body").unwrap();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '.' {
            let mut key = String::new();
            while let Some(&n) = chars.peek() {
                if n == '.' || n == '[' {
                    break;
                }
                key.push(n);
                chars.next();
            }
            cur = cur.get_mut(&key).unwrap();
        } else if c == '[' {
            let mut idx = String::new();
            for n in chars.by_ref() {
                if n == ']' {
                    break;
                }
                idx.push(n);
            }
            cur = cur.get_mut(idx.parse::<usize>().unwrap()).unwrap();
        }
    }
    *cur = new;
}

proptest! {
    #[test]
    fn a_body_never_diverges_from_itself(v in value()) {
        prop_assert!(diff(None, &v, &v).is_empty());
        let list = Node::Array(ArrayNode::List { representatives: vec![], target_length: 0, discriminator: None });
        prop_assert!(diff(Some(&list), &v, &v).is_empty());
    }

    #[test]
    fn list_arrays_are_judged_in_any_order(items in prop::collection::vec(value(), 0..6), seed in any::<u64>()) {
        let mut shuffled = items.clone();
        // A deterministic shuffle from the seed.
        let n = shuffled.len();
        if n > 1 {
            let mut s = seed;
            for i in (1..n).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                shuffled.swap(i, (s >> 33) as usize % (i + 1));
            }
        }
        let list = Node::Array(ArrayNode::List { representatives: vec![], target_length: 0, discriminator: None });
        prop_assert!(diff(Some(&list), &Value::Array(items), &Value::Array(shuffled)).is_empty());
    }

    #[test]
    fn one_changed_leaf_is_reported_at_its_path(v in value(), pick in any::<prop::sample::Index>()) {
        let mut ls = Vec::new();
        leaves(&v, "body".into(), &mut ls);
        let (path, old) = pick.get(&ls).clone();
        let new = match &old {
            Value::String(s) => Value::String(format!("{s}-changed")),
            _ => Value::String("changed".into()),
        };
        let mut changed = v.clone();
        set_leaf(&mut changed, &path, new);
        let d = diff(None, &v, &changed);
        prop_assert_eq!(d.len(), 1, "{:?}", d);
        prop_assert_eq!(&d[0].0, &path);
        let cat = if old.is_string() { Category::ValueMismatch } else { Category::TypeMismatch };
        prop_assert_eq!(d[0].1, cat);
    }
}
