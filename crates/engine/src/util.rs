//! Small pure helpers: JSON pointers, merges, request parsing, path normalization and the
//! self-URL rewrite.

use serde_json::{Map, Number, Value};

/// Unescape one JSON-pointer token (`~1` → `/`, `~0` → `~`).
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// A key as one JSON pointer token (`~` and `/` escaped).
pub(crate) fn escape_key(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `RFC 6901` lookup; `""` is the whole document.
pub(crate) fn json_pointer_get<'a>(v: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(v);
    }
    let rest = pointer.strip_prefix('/')?;
    let mut cur = v;
    for raw in rest.split('/') {
        let token = unescape(raw);
        cur = match cur {
            Value::Object(m) => m.get(&token)?,
            Value::Array(a) => a.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Mutable pointer lookup.
pub(crate) fn json_pointer_get_mut<'a>(v: &'a mut Value, pointer: &str) -> Option<&'a mut Value> {
    if pointer.is_empty() {
        return Some(v);
    }
    let rest = pointer.strip_prefix('/')?;
    let mut cur = v;
    for raw in rest.split('/') {
        let token = unescape(raw);
        cur = match cur {
            Value::Object(m) => m.get_mut(&token)?,
            Value::Array(a) => a.get_mut(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Parse a decimal string as a JSON number (integer when it is one).
pub(crate) fn parse_number(s: &str) -> Option<Value> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::Number(Number::from(i)));
    }
    if let Ok(u) = t.parse::<u64>() {
        return Some(Value::Number(Number::from(u)));
    }
    let f = t.parse::<f64>().ok()?;
    Number::from_f64(f).map(Value::Number)
}

/// A JSON number's value, or a string's that spells one (a form field's `-5`).
pub(crate) fn number_of(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => parse_number(s).and_then(|n| n.as_f64()),
        _ => None,
    }
}

/// Decode `application/x-www-form-urlencoded` fields into a nested object: `a[b]=1` is `/a/b`,
/// `tags[]=x` appends to an array. Values stay strings (holes coerce them to the recorded type).
pub(crate) fn form_to_json(body: &[u8]) -> Value {
    fields_to_json(form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())))
}

/// Named text fields (form pairs, multipart text parts) as one nested object, keys read as
/// [`form_to_json`] reads them.
fn fields_to_json(fields: impl IntoIterator<Item = (String, String)>) -> Value {
    let mut root = Map::new();
    for (k, v) in fields {
        let path = form_key_path(&k);
        insert_form(&mut root, &path, Value::String(v));
    }
    Value::Object(root)
}

/// The text parts of a `multipart/form-data` body as [`form_to_json`] reads form fields (file
/// parts and parts that are not UTF-8 left out), so a field a client sent as multipart is
/// echoed and guarded on as it would be sent as a form; synth reads such bodies the same way.
/// `None` when the body does not split on the boundary `content_type` names.
fn multipart_to_json(content_type: &str, body: &[u8]) -> Option<Value> {
    let parts = wraith_model::request_key::multipart_part_spans(content_type, body)?;
    Some(fields_to_json(parts.into_iter().filter_map(
        |(name, filename, span)| {
            let text = std::str::from_utf8(body.get(span)?).ok()?;
            filename.is_empty().then(|| (name, text.to_string()))
        },
    )))
}

/// How deep a form field name may nest (`a[b][c]…`, Rack's default limit). The brackets past
/// it stay text in the deepest key: the field is kept, and a hostile name of thousands of
/// brackets cannot build a value deep enough to exhaust the stack that walks it.
pub(crate) const MAX_FORM_DEPTH: usize = 32;

fn form_key_path(key: &str) -> Vec<String> {
    let mut parts = Vec::new();
    match key.find('[') {
        None => parts.push(key.to_string()),
        Some(i) => {
            parts.push(key[..i].to_string());
            let mut rest = &key[i..];
            while let Some(stripped) = rest.strip_prefix('[') {
                if parts.len() == MAX_FORM_DEPTH {
                    if let Some(last) = parts.last_mut() {
                        last.push_str(rest);
                    }
                    break;
                }
                match stripped.find(']') {
                    Some(j) => {
                        parts.push(stripped[..j].to_string());
                        rest = &stripped[j + 1..];
                    }
                    None => break,
                }
            }
        }
    }
    parts
}

fn insert_form(map: &mut Map<String, Value>, path: &[String], value: Value) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        map.insert(first.clone(), value);
        return;
    }
    if rest.len() == 1 && rest[0].is_empty() {
        let slot = map
            .entry(first.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = slot {
            a.push(value);
        }
        return;
    }
    // `a[][b]=1&a[][c]=2` is one item `{b, c}` of `a`, as Rack reads it: a field goes into
    // the last item unless that item already holds it, which starts the next one.
    if rest[0].is_empty() {
        let slot = map
            .entry(first.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if !slot.is_array() {
            *slot = Value::Array(Vec::new());
        }
        if let Value::Array(items) = slot {
            let child = &rest[1..];
            let fits = matches!(items.last(), Some(Value::Object(m)) if !holds_form_path(m, child));
            if !fits {
                items.push(Value::Object(Map::new()));
            }
            if let Some(Value::Object(m)) = items.last_mut() {
                insert_form(m, child, value);
            }
        }
        return;
    }
    let slot = map
        .entry(first.clone())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    if let Value::Object(m) = slot {
        insert_form(m, rest, value);
    }
}

/// Whether an item of a form array already holds the field `path` names (up to its next
/// `[]`, as Rack's `params_hash_has_key?` looks).
fn holds_form_path(map: &Map<String, Value>, path: &[String]) -> bool {
    let mut at = map;
    for (i, token) in path.iter().enumerate() {
        if token.is_empty() {
            return true;
        }
        match at.get(token) {
            None => return false,
            Some(Value::Object(m)) if i + 1 < path.len() => at = m,
            Some(_) => return true,
        }
    }
    true
}

/// The request body as JSON: parsed JSON, or form fields; `None` when empty or neither.
pub(crate) fn body_as_json(content_type: Option<&str>, body: &[u8]) -> Option<Value> {
    if body.is_empty() {
        return None;
    }
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    if ct.starts_with("application/x-www-form-urlencoded") {
        return Some(form_to_json(body));
    }
    if ct.starts_with("multipart/form-data") {
        return multipart_to_json(content_type.unwrap_or(""), body);
    }
    parse_json(body).ok()
}

/// Whether the engine reads a request body sent with this content type as JSON: every type
/// but a form's (urlencoded and multipart bodies are read field by field), as
/// [`body_as_json`] does. The server counts the values of such a body before it comes here.
pub fn reads_body_as_json(content_type: Option<&str>) -> bool {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    !ct.starts_with("application/x-www-form-urlencoded") && !ct.starts_with("multipart/form-data")
}

/// Whether [`body_as_json`] gives this body as plain JSON parsing gives it: no form or
/// multipart content type (those are read field by field) and no byte order mark (which only
/// the engine's parse skips).
pub(crate) fn body_parsed_as_json(content_type: Option<&str>, body: &[u8]) -> bool {
    reads_body_as_json(content_type) && !body.starts_with(b"\xEF\xBB\xBF")
}

/// Deepest nesting of arrays and objects a request body may have: what serde_json's default
/// recursion limit (128) lets through, which the engine's parse keeps (a deeper body would
/// take the stack of every walk over it).
pub(crate) const MAX_BODY_DEPTH: usize = 127;

/// A request body as one JSON value, after a UTF-8 byte order mark if the client put one
/// before it (RFC 8259 §8.1 lets a parser ignore it; `wraith import` and the recorder accept
/// it too).
fn parse_json(body: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body))
}

/// Whether the body parses as the content type it claims (a JSON object for JSON).
pub(crate) fn body_valid(content_type: Option<&str>, body: &[u8]) -> bool {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let claims_json = ct.contains("json")
        || (ct.is_empty()
            && body
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|b| *b == b'{' || *b == b'['));
    if claims_json {
        return matches!(parse_json(body), Ok(Value::Object(_)));
    }
    if ct.starts_with("application/x-www-form-urlencoded") {
        return std::str::from_utf8(body).is_ok();
    }
    true
}

/// Why a body that declares a JSON media type is not JSON at all (`None` when it parses, is
/// empty or declares another type). A JSON scalar or array parses: an API may take one.
pub(crate) fn malformed_json_body(content_type: Option<&str>, body: &[u8]) -> Option<String> {
    let declares_json = content_type.is_some_and(|ct| {
        let essence = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        essence == "application/json" || essence.ends_with("+json") || essence.ends_with("/json")
    });
    if !declares_json || body.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let err = parse_json(body).err()?;
    // The reasons serde_json's own message does not name plainly.
    if let Err(e) = std::str::from_utf8(body) {
        return Some(format!(
            "it is not UTF-8: the byte at offset {} starts no UTF-8 character",
            e.valid_up_to()
        ));
    }
    let why = err.to_string();
    // serde_json names a lone leading surrogate by the pair's second half it did not find.
    if why.contains("surrogate") || why.contains("unexpected end of hex escape") {
        return Some(format!(
            "a \\u escape is no character: a lone surrogate (half of a pair, as \\ud800 \
             alone) or an escape cut short ({why})"
        ));
    }
    if why.starts_with("recursion limit exceeded") {
        return Some(format!(
            "it nests arrays and objects more than {MAX_BODY_DEPTH} levels deep, {}",
            why.trim_start_matches("recursion limit exceeded ")
        ));
    }
    Some(why)
}

/// About how many bytes a JSON value takes in memory: its strings and keys, plus a word per
/// scalar, element and member. What `[serve.limits] max_total_state_mb` counts, so only the
/// order matters, not the exact allocator overhead.
pub(crate) fn json_size(v: &Value) -> u64 {
    const WORD: u64 = 8;
    let mut total = 0u64;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(WORD);
        match v {
            Value::String(s) => total = total.saturating_add(s.len() as u64),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                for (k, item) in map {
                    total = total.saturating_add(k.len() as u64);
                    stack.push(item);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    total
}

/// RFC 7396-style deep merge (PATCH): objects merge recursively, arrays and scalars replace,
/// `null` deletes the key.
pub(crate) fn deep_merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.shift_remove(k);
                } else if let Some(existing) = t.get_mut(k) {
                    if existing.is_object() && v.is_object() {
                        deep_merge(existing, v);
                    } else {
                        *existing = v.clone();
                    }
                } else {
                    t.insert(k.clone(), v.clone());
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// Top-level merge (PUT, POST-update): each supplied key replaces the stored one.
pub(crate) fn shallow_merge(target: &mut Value, patch: &Value) {
    if let (Value::Object(t), Value::Object(p)) = (target, patch) {
        for (k, v) in p {
            t.insert(k.clone(), v.clone());
        }
    }
}

/// Coerce form-decoded strings in `patch` to the JSON types `like` holds at the same keys.
pub(crate) fn coerce_like(patch: &mut Value, like: &Value) {
    match (patch, like) {
        (Value::Object(p), Value::Object(l)) => {
            for (k, v) in p.iter_mut() {
                if let Some(lv) = l.get(k) {
                    coerce_like(v, lv);
                }
            }
        }
        (p @ Value::String(_), Value::Number(_)) => {
            if let Some(n) = p.as_str().and_then(parse_number) {
                *p = n;
            }
        }
        (p @ Value::String(_), Value::Bool(_)) => {
            if let Some(b) = p.as_str().and_then(form_bool) {
                *p = Value::Bool(b);
            }
        }
        _ => {}
    }
}

/// A boolean as form encoders spell it: `true`/`false`, or `1`/`0` (the spelling of clients
/// that encode booleans as integers).
pub(crate) fn form_bool(s: &str) -> Option<bool> {
    match s {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// Percent-decode a path segment ([`wraith_model::request_key::decode_path_segment`]: one
/// that does not decode to UTF-8 is kept as sent).
pub(crate) fn percent_decode(s: &str) -> String {
    wraith_model::request_key::decode_path_segment(s)
}

/// Decoded query pairs in request order.
pub(crate) fn parse_query(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Why a path was refused.
pub(crate) enum PathError {
    DotSegment,
}

/// Normalize a request path: refuse `.`/`..` segments (also percent-encoded), collapse `//`,
/// drop a trailing slash (so `/v1/customers//` is the collection).
pub(crate) fn normalize_path(path: &str) -> Result<String, PathError> {
    let mut out = String::with_capacity(path.len() + 1);
    for seg in path.split('/') {
        if seg.is_empty() {
            continue;
        }
        // Compared in place: a lowercased copy of every segment cost an allocation each.
        if [".", "..", "%2e", "%2e%2e", ".%2e", "%2e."]
            .iter()
            .any(|d| seg.eq_ignore_ascii_case(d))
        {
            return Err(PathError::DotSegment);
        }
        out.push('/');
        out.push_str(seg);
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// `scheme://authority` of an absolute URL, lowercased scheme and host.
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.is_empty() {
        return None;
    }
    Some(format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        authority.to_ascii_lowercase()
    ))
}

/// Replace `from` origin prefixes with `to` inside `s`, only where the origin ends at a URL
/// boundary (so `https://api.x.com` does not rewrite `https://api.x.com.evil`). Returns whether
/// anything changed.
pub fn rewrite_origin_in(s: &mut String, from: &str, to: &str) -> bool {
    if from.is_empty() || !contains_ignore_case(s, from) {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut changed = false;
    while let Some(pos) = lower[i..].find(from) {
        let start = i + pos;
        let end = start + from.len();
        let boundary = lower[end..]
            .chars()
            .next()
            .is_none_or(|c| matches!(c, '/' | '?' | '#' | '"' | '\'' | ' ' | '>' | ')' | ','));
        out.push_str(&s[i..start]);
        if boundary {
            out.push_str(to);
            changed = true;
        } else {
            out.push_str(&s[start..end]);
        }
        i = end;
    }
    out.push_str(&s[i..]);
    if changed {
        *s = out;
    }
    changed
}

fn contains_ignore_case(hay: &str, needle: &str) -> bool {
    hay.len() >= needle.len() && hay.to_ascii_lowercase().contains(needle)
}

/// Rewrite every JSON string value; returns whether anything changed.
pub fn rewrite_origin_json(v: &mut Value, from: &str, to: &str) -> bool {
    match v {
        Value::String(s) => rewrite_origin_in(s, from, to),
        Value::Array(a) => {
            let mut changed = false;
            for item in a {
                changed |= rewrite_origin_json(item, from, to);
            }
            changed
        }
        Value::Object(m) => {
            let mut changed = false;
            for (_, item) in m.iter_mut() {
                changed |= rewrite_origin_json(item, from, to);
            }
            changed
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_merge_merges_objects_replaces_arrays_and_null_deletes() {
        let mut t = json!({"a": {"b": 1, "c": 2}, "arr": [1, 2], "gone": true});
        deep_merge(&mut t, &json!({"a": {"c": 3}, "arr": [9], "gone": null}));
        assert_eq!(t, json!({"a": {"b": 1, "c": 3}, "arr": [9]}));
    }

    #[test]
    fn multipart_text_parts_nest_like_form_fields_and_files_are_left_out() {
        let body = b"--b7\r\nContent-Disposition: form-data; name=\"fields[0][name]\"\r\n\r\nbread\r\n\
                     --b7\r\nContent-Disposition: form-data; name=\"tags[]\"\r\n\r\na\r\n\
                     --b7\r\nContent-Disposition: form-data; name=\"tags[]\"\r\n\r\nb\r\n\
                     --b7\r\nContent-Disposition: form-data; name=\"raw\"\r\n\r\n\xff\xfe\r\n\
                     --b7\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\ntext\r\n\
                     --b7--\r\n";
        let v = body_as_json(Some("multipart/form-data; boundary=b7"), body);
        assert_eq!(
            v,
            Some(json!({"fields": {"0": {"name": "bread"}}, "tags": ["a", "b"]}))
        );
        assert_eq!(
            body_as_json(Some("multipart/form-data; boundary=other"), body),
            None
        );
    }

    #[test]
    fn form_bodies_nest_brackets() {
        let v = form_to_json(b"amount=8888&metadata[order]=7&tags[]=a&tags[]=b");
        assert_eq!(
            v,
            json!({"amount": "8888", "metadata": {"order": "7"}, "tags": ["a", "b"]})
        );
    }

    #[test]
    fn form_array_items_gather_their_fields_until_one_repeats() {
        let v = form_to_json(
            b"kw[][keyword]=spam&kw[][whole_word]=true&kw[][keyword]=eggs&kw[][x][y]=1&kw[][x][y]=2\
              &kw[]=plain&kw[][keyword]=ham",
        );
        // As synth reads the same body (its `form_fields` pointers `/kw/0/keyword`, …).
        assert_eq!(
            v,
            json!({"kw": [
                {"keyword": "spam", "whole_word": "true"},
                {"keyword": "eggs", "x": {"y": "1"}},
                {"x": {"y": "2"}},
                "plain",
                {"keyword": "ham"},
            ]})
        );
    }

    #[test]
    fn form_names_nest_no_deeper_than_the_limit_and_keep_the_rest_as_text() {
        let name = format!("a{}", "[x]".repeat(10_000));
        let v = form_to_json(format!("{name}=1").as_bytes());
        let mut depth = 0;
        let mut at = &v;
        while let Some(obj) = at.as_object() {
            assert_eq!(obj.len(), 1);
            let (key, inner) = obj.iter().next().expect("one key");
            if !inner.is_object() {
                let kept = MAX_FORM_DEPTH - 2;
                assert_eq!(key.len(), "x".len() + "[x]".len() * (10_000 - kept - 1));
                assert!(key.starts_with("x[x]"));
                assert_eq!(inner, &json!("1"));
            }
            at = inner;
            depth += 1;
        }
        assert_eq!(depth, MAX_FORM_DEPTH);
        let at_limit = format!("a{}=1", "[x]".repeat(MAX_FORM_DEPTH - 1));
        let v = form_to_json(at_limit.as_bytes());
        assert_eq!(
            v.pointer(&format!("/a{}", "/x".repeat(MAX_FORM_DEPTH - 1))),
            Some(&json!("1"))
        );
    }

    #[test]
    fn json_size_counts_strings_keys_and_a_word_per_value() {
        assert_eq!(json_size(&json!(null)), 8);
        assert_eq!(json_size(&json!("abcd")), 12);
        assert_eq!(json_size(&json!({"ab": [1, "xyz"]})), 8 + 2 + 8 + 8 + 8 + 3);
    }

    #[test]
    fn dot_segments_are_refused_and_double_slashes_collapse() {
        assert!(normalize_path("/a/./b").is_err());
        assert!(normalize_path("/a/..").is_err());
        assert!(normalize_path("/a/%2E%2E/b").is_err());
        assert_eq!(
            normalize_path("/v1//customers//").ok().as_deref(),
            Some("/v1/customers")
        );
        assert_eq!(normalize_path("/").ok().as_deref(), Some("/"));
    }

    #[test]
    fn origin_rewrite_respects_boundaries() {
        let mut s = "see https://api.x.com/v1/a and https://api.x.com.evil/b".to_string();
        assert!(rewrite_origin_in(
            &mut s,
            "https://api.x.com",
            "http://127.0.0.1:9"
        ));
        assert_eq!(
            s,
            "see http://127.0.0.1:9/v1/a and https://api.x.com.evil/b"
        );
    }
}
