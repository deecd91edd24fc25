//! JSON pointers (RFC 6901) of a document's leaves, the way the model addresses body positions.

use serde_json::Value;

/// Escape one object key as a pointer token (`~` → `~0`, `/` → `~1`).
pub fn escape_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Call `f` with the pointer and value of every scalar leaf of `v` (anything that is not an
/// object or array), in document order. Empty objects and arrays have no leaves.
pub fn for_each_leaf<'v>(v: &'v Value, f: &mut dyn FnMut(&str, &'v Value)) {
    fn walk<'v>(v: &'v Value, ptr: &mut String, f: &mut dyn FnMut(&str, &'v Value)) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    let len = ptr.len();
                    ptr.push('/');
                    ptr.push_str(&escape_token(k));
                    walk(child, ptr, f);
                    ptr.truncate(len);
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    let len = ptr.len();
                    ptr.push('/');
                    ptr.push_str(&i.to_string());
                    walk(child, ptr, f);
                    ptr.truncate(len);
                }
            }
            leaf => f(ptr, leaf),
        }
    }
    walk(v, &mut String::new(), f);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_are_visited_with_escaped_pointers_in_document_order() {
        let doc = json!({"a/b": [1, {"c~d": "x"}], "e": {}, "f": null});
        let mut seen = Vec::new();
        for_each_leaf(&doc, &mut |p, v| seen.push((p.to_string(), v.clone())));
        assert_eq!(
            seen,
            vec![
                ("/a~1b/0".to_string(), json!(1)),
                ("/a~1b/1/c~0d".to_string(), json!("x")),
                ("/f".to_string(), json!(null)),
            ]
        );
    }
}
