//! The JSONPath subset scrub rules use: `$`, `.name`, `['name']`, `[N]`, `[*]`, `.*`, and `..name`
//! (any depth). Enough to name fields in API bodies; no filters or scripts.

use super::json_text::Seg;

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

    /// Whether the value at `path` (object member names and array indexes from the root) is
    /// one the path selects or lies inside one. `..name` looks at every depth, below an earlier
    /// `name` too, and a name matches every member of that name (a duplicated key included).
    pub fn selects(&self, path: &[Seg]) -> bool {
        selects_within(&self.steps, path)
    }
}

fn selects_within(steps: &[Step], path: &[Seg]) -> bool {
    let Some((step, rest)) = steps.split_first() else {
        return true;
    };
    match step {
        Step::Key(k) => {
            matches!(path.first(), Some(Seg::Key(name)) if name == k)
                && selects_within(rest, &path[1..])
        }
        Step::Index(n) => {
            matches!(path.first(), Some(Seg::Index(i)) if i == n)
                && selects_within(rest, &path[1..])
        }
        Step::Wildcard => !path.is_empty() && selects_within(rest, &path[1..]),
        Step::Descend(k) => path.iter().enumerate().any(|(i, seg)| {
            matches!(seg, Seg::Key(name) if name == k) && selects_within(rest, &path[i + 1..])
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::json_text::{Scalar, for_each_scalar};
    use super::*;
    use serde_json::{Value, json};

    /// The strings and numbers of `text` the path selects (or that lie inside what it selects).
    fn selected_in(path: &str, text: &str) -> Vec<Value> {
        let p = JsonPath::parse(path).unwrap();
        let mut out = Vec::new();
        for_each_scalar(text, &mut |at, _, s| {
            if p.selects(at) {
                out.push(match s {
                    Scalar::Str(s) => json!(s),
                    Scalar::Num(n) => serde_json::from_str(n).unwrap(),
                });
            }
        })
        .unwrap();
        out
    }

    fn selected(path: &str, v: Value) -> Vec<Value> {
        selected_in(path, &v.to_string())
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
    fn a_selected_container_selects_everything_inside_it() {
        let doc = json!({"a": {"b": [1, {"c": "x"}]}, "d": "keep"});
        assert_eq!(selected("$.a", doc.clone()), vec![json!(1), json!("x")]);
        assert_eq!(
            selected("$", doc),
            vec![json!(1), json!("x"), json!("keep")]
        );
    }

    #[test]
    fn descendants_are_found_below_an_earlier_match_and_duplicate_keys_all_match() {
        assert_eq!(
            selected_in("$..a.b", r#"{"a":{"a":{"b":"x"}}}"#),
            vec![json!("x")]
        );
        assert_eq!(
            selected_in("$.k", r#"{"k":"1","j":"2","k":"3"}"#),
            vec![json!("1"), json!("3")]
        );
    }

    #[test]
    fn rejects_malformed_paths() {
        for bad in ["a.b", "$.", "$[", "$[x]", "$..", "$a"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }
}
