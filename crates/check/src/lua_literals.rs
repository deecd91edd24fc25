//! `wraith lint`'s look at the string literals of Lua handlers and libraries: a literal that
//! differs from a field the model knows only in letter case (`"Email"` for `email`) reads or
//! writes nothing the recordings hold, since Lua compares keys exactly.
//!
//! Only literals are read (`"…"`, `'…'`, `[[…]]`), never comments; the scan is lexical, so a
//! literal used for something else than a key is judged all the same (hence a warning).

use std::collections::BTreeMap;

use wraith_model::Model;

use crate::lint::{Finding, model_fields};

/// The string literals of a Lua source, each with its 1-based line, as written (escapes left
/// as they are: a key spelled with an escape is not a near miss anyone types).
pub fn string_literals(src: &str) -> Vec<(usize, String)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut line = 1usize;
    let mut i = 0usize;
    // `[` `=`* `[` at `at`: the level (number of `=`), or `None`.
    let long_open = |at: usize| -> Option<usize> {
        if b.get(at) != Some(&b'[') {
            return None;
        }
        let mut j = at + 1;
        while b.get(j) == Some(&b'=') {
            j += 1;
        }
        (b.get(j) == Some(&b'[')).then_some(j - at - 1)
    };
    // The end of a long bracket of `level` opened before `from`: the index past `]=*]`.
    let long_close = |from: usize, level: usize| -> usize {
        let mut j = from;
        while j < b.len() {
            if b[j] == b']' {
                let mut k = j + 1;
                while k < b.len() && b[k] == b'=' && k - j - 1 < level {
                    k += 1;
                }
                if k - j - 1 == level && b.get(k) == Some(&b']') {
                    return k + 1;
                }
            }
            j += 1;
        }
        b.len()
    };
    while i < b.len() {
        match b[i] {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                if let Some(level) = long_open(i + 2) {
                    let end = long_close(i + 4 + level, level);
                    line += src[i..end].matches('\n').count();
                    i = end;
                } else {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
            }
            b'[' if long_open(i).is_some() => {
                let level = long_open(i).unwrap_or(0);
                let start = i + level + 2;
                let end = long_close(start, level);
                let body_end = end.saturating_sub(level + 2).max(start);
                out.push((line, src[start..body_end].to_string()));
                line += src[i..end].matches('\n').count();
                i = end;
            }
            q @ (b'"' | b'\'') => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != q && b[j] != b'\n' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(b.len());
                out.push((line, src[start..end].to_string()));
                // Past the closing quote; an unclosed literal leaves its newline to be counted.
                i = if b.get(end) == Some(&q) { end + 1 } else { end };
            }
            _ => i += 1,
        }
    }
    out
}

/// Warnings (`lua-field-case`) for literals of the given files (path relative to the twin,
/// source text) that name no field of the model but one of its fields in another letter case.
pub fn literal_case_findings(files: &[(String, String)], model: &Model) -> Vec<Finding> {
    // Lowercased field → the spellings the model has, and the entity types holding each.
    let mut by_lower: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (ty, fields) in model_fields(model) {
        for f in fields {
            by_lower
                .entry(f.to_ascii_lowercase())
                .or_default()
                .entry(f)
                .or_default()
                .push(ty.clone());
        }
    }
    let mut out = Vec::new();
    for (file, src) in files {
        for (line, lit) in string_literals(src) {
            let key_like = lit.len() >= 2
                && lit
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
            if !key_like {
                continue;
            }
            let Some(spellings) = by_lower.get(&lit.to_ascii_lowercase()) else {
                continue;
            };
            if spellings.contains_key(&lit) {
                continue;
            }
            let known: Vec<String> = spellings
                .iter()
                .map(|(f, types)| format!("\"{f}\" (of {})", types.join(", ")))
                .collect();
            out.push(Finding::warning(
                "lua-field-case",
                Some(file),
                format!(
                    "line {line}: the string \"{lit}\" differs only in letter case from the \
                     model's field {}; Lua compares keys exactly, so it matches nothing the \
                     recordings hold: spell it as the model does",
                    known.join(" and ")
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_read_with_their_lines_and_comments_are_skipped() {
        let src = "local a = \"one\" -- \"not this\"\nlocal b = 'two\\'s'\n--[[ \"nor\nthis\" ]]\nlocal c = [==[three\n]]four]==]\nx = \"five\"";
        assert_eq!(
            string_literals(src),
            vec![
                (1, "one".to_string()),
                (2, "two\\'s".to_string()),
                (5, "three\n]]four".to_string()),
                (7, "five".to_string()),
            ]
        );
    }

    #[test]
    fn an_unclosed_literal_ends_at_its_line() {
        assert_eq!(
            string_literals("x = \"open\ny = 'b'"),
            vec![(1, "open".to_string()), (2, "b".to_string())]
        );
    }
}
