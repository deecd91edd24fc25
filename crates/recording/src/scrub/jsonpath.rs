//! The JSONPath subset scrub rules use: `$`, `.name`, `['name']`, `[N]`, `[*]`, `.*`, and `..name`
//! (any depth). Enough to name fields in API bodies; no filters or scripts.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
    Wildcard,
    /// `..name`: `name` at any depth below.
    Descend(String),
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "bad JSONPath at character {pos}: {message} (write paths like `$.a.b` or `$.items[*].email`)"
)]
pub struct JsonPathError {
    pub pos: usize,
    pub message: String,
}

impl JsonPath {
    pub fn parse(src: &str) -> Result<JsonPath, JsonPathError> {
        let err = |pos: usize, message: &str| JsonPathError {
            pos,
            message: message.to_string(),
        };
        let b = src.as_bytes();
        if b.first() != Some(&b'$') {
            return Err(err(0, "a path starts with `$`"));
        }
        let mut i = 1;
        let mut steps = Vec::new();
        let ident = |i: &mut usize| -> String {
            let start = *i;
            while *i < b.len() && b[*i] != b'.' && b[*i] != b'[' {
                *i += 1;
            }
            src[start..*i].to_string()
        };
        while i < b.len() {
            match b[i] {
                b'.' if b.get(i + 1) == Some(&b'.') => {
                    i += 2;
                    let name = ident(&mut i);
                    if name.is_empty() {
                        return Err(err(i, "`..` needs a field name after it"));
                    }
                    steps.push(Step::Descend(name));
                }
                b'.' => {
                    i += 1;
                    let name = ident(&mut i);
                    match name.as_str() {
                        "" => return Err(err(i, "empty field name")),
                        "*" => steps.push(Step::Wildcard),
                        _ => steps.push(Step::Key(name)),
                    }
                }
                b'[' => {
                    let close = src[i..]
                        .find(']')
                        .map(|c| c + i)
                        .ok_or_else(|| err(i, "`[` without `]`"))?;
                    let inner = src[i + 1..close].trim();
                    if inner == "*" {
                        steps.push(Step::Wildcard);
                    } else if let Ok(n) = inner.parse::<usize>() {
                        steps.push(Step::Index(n));
                    } else if inner.len() >= 2
                        && ((inner.starts_with('\'') && inner.ends_with('\''))
                            || (inner.starts_with('"') && inner.ends_with('"')))
                    {
                        steps.push(Step::Key(inner[1..inner.len() - 1].to_string()));
                    } else {
                        return Err(err(i, "inside `[]` write `*`, an index, or a quoted name"));
                    }
                    i = close + 1;
                }
                _ => return Err(err(i, "expected `.` or `[`")),
            }
        }
        Ok(JsonPath { steps })
    }

    /// Call `f` on every value the path selects in `root`.
    pub fn for_each_match(&self, root: &mut Value, f: &mut dyn FnMut(&mut Value)) {
        walk(&self.steps, root, f)
    }
}

fn walk(steps: &[Step], v: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    let Some((step, rest)) = steps.split_first() else {
        f(v);
        return;
    };
    match step {
        Step::Key(k) => {
            if let Some(child) = v.as_object_mut().and_then(|m| m.get_mut(k)) {
                walk(rest, child, f);
            }
        }
        Step::Index(n) => {
            if let Some(child) = v.as_array_mut().and_then(|a| a.get_mut(*n)) {
                walk(rest, child, f);
            }
        }
        Step::Wildcard => match v {
            Value::Object(m) => m.values_mut().for_each(|c| walk(rest, c, f)),
            Value::Array(a) => a.iter_mut().for_each(|c| walk(rest, c, f)),
            _ => {}
        },
        Step::Descend(k) => descend(k, rest, v, f),
    }
}

fn descend(k: &str, rest: &[Step], v: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    match v {
        Value::Object(m) => {
            for (key, child) in m.iter_mut() {
                if key == k {
                    walk(rest, child, f);
                } else {
                    descend(k, rest, child, f);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|c| descend(k, rest, c, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn selected(path: &str, mut v: Value) -> Vec<Value> {
        let p = JsonPath::parse(path).unwrap();
        let mut out = Vec::new();
        p.for_each_match(&mut v, &mut |x| out.push(x.clone()));
        out
    }

    #[test]
    fn selects_nested_fields_wildcards_indexes_and_descendants() {
        let doc = json!({"a": {"b": 1}, "items": [{"email": "x"}, {"email": "y"}], "c": [5, 6]});
        assert_eq!(selected("$.a.b", doc.clone()), vec![json!(1)]);
        assert_eq!(
            selected("$.items[*].email", doc.clone()),
            vec![json!("x"), json!("y")]
        );
        assert_eq!(selected("$.c[1]", doc.clone()), vec![json!(6)]);
        assert_eq!(selected("$['a']['b']", doc.clone()), vec![json!(1)]);
        assert_eq!(
            selected("$..email", doc.clone()),
            vec![json!("x"), json!("y")]
        );
        assert!(selected("$.missing.x", doc).is_empty());
    }

    #[test]
    fn rejects_malformed_paths() {
        for bad in ["a.b", "$.", "$[", "$[x]", "$..", "$a"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }
}
