//! A JSON text read in place: every string and number with the path to it and the bytes it
//! spans, so the scrubber can rewrite just the values its rules change and keep every other
//! byte as it was sent (numbers as spelled, whitespace, escapes, duplicate keys). Going through
//! `serde_json::Value` instead would respell numbers (`9.90` → `9.9`, big integers → floats)
//! and drop all but one of a duplicated key.
//!
//! Strict JSON (RFC 8259), read without recursion (a deep body costs a path, not a stack).
//! That is why this is not a crate: the span-giving parsers looked at (`jsonc-parser`'s AST,
//! for one) recurse once per nesting level with no limit and accept JSONC's comments and
//! trailing commas, and the scrubber reads hostile bodies before anything else does.
//! Two things `serde_json` refuses are accepted, so the values around them are still scrubbed:
//! a `\u` escape naming half a surrogate pair (read as U+FFFD) and a number too large for an
//! `f64` (kept as spelled).

use std::borrow::Cow;
use std::ops::Range;

/// One step of the path from the root to a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// The value of an object member with this (unescaped) name.
    Key(String),
    /// An array item.
    Index(usize),
}

/// A string or number as the text holds it (`true`, `false` and `null` are never rewritten and
/// are not reported).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar<'a> {
    /// A string's value, escapes undone.
    Str(Cow<'a, str>),
    /// A number, spelled as in the text.
    Num(&'a str),
}

/// What [`for_each_scalar`] calls: path, span, value.
pub type Visitor<'f> = dyn FnMut(&[Seg], Range<usize>, Scalar<'_>) + 'f;

/// The text is not one JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotJson;

/// Call `f` for every string and number of the JSON value `text` (whitespace around it
/// allowed), in text order, with its path and the bytes of `text` it spans (a string's span
/// includes its quotes). `f` may have been called before an error further on is found: keep
/// nothing it saw unless this returns `Ok`.
pub fn for_each_scalar(text: &str, f: &mut Visitor<'_>) -> Result<(), NotJson> {
    let mut c = Cursor {
        text,
        bytes: text.as_bytes(),
        i: 0,
    };
    read_value(&mut c, f, None)?;
    c.ws();
    if c.i == c.bytes.len() {
        Ok(())
    } else {
        Err(NotJson)
    }
}

/// Where the JSON value that starts at byte `start` of `text` (whitespace before it allowed)
/// ends, reading no further: `Ok` with the byte after it, so a text holding several values one
/// after another can be read value by value. [`Stopped`] when no JSON value starts there.
/// Every byte the reader looks at lies before where it ends or stops, or a few bytes past, so
/// one call costs time in proportion to how far it got.
pub fn value_end(text: &str, start: usize) -> Result<usize, Stopped> {
    let mut c = Cursor {
        text,
        bytes: text.as_bytes(),
        i: start.min(text.len()),
    };
    let mut closed = Vec::new();
    match read_value(&mut c, &mut |_, _, _| {}, Some(&mut closed)) {
        Ok(()) => Ok(c.i),
        Err(NotJson) => Err(Stopped { at: c.i, closed }),
    }
}

/// Where [`value_end`] found that no JSON value starts at its `start`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// The byte at which the reading stopped (the text's length when it ends inside a value).
    pub at: usize,
    /// The objects and arrays that closed before it, outermost only, in text order: whole
    /// JSON values inside what was read (an unclosed array's items).
    pub closed: Vec<Range<usize>>,
}

/// Read the JSON value at the cursor (whitespace before it allowed), calling `f` for each of
/// its strings and numbers; the cursor stops right after it, or where the value went wrong.
/// With `closed`, each object or array that closes is noted there, replacing those inside it.
fn read_value(
    c: &mut Cursor<'_>,
    f: &mut Visitor<'_>,
    mut closed: Option<&mut Vec<Range<usize>>>,
) -> Result<(), NotJson> {
    // Where each open container starts, innermost last (kept only for `closed`).
    let mut open_at: Vec<usize> = Vec::new();
    // Open containers, innermost last: true for an object.
    let mut open: Vec<bool> = Vec::new();
    let mut path: Vec<Seg> = Vec::new();
    loop {
        // A value is due at `path`.
        c.ws();
        let start = c.i;
        match c.peek().ok_or(NotJson)? {
            b'{' => {
                c.i += 1;
                c.ws();
                if c.peek() == Some(b'}') {
                    c.i += 1;
                } else {
                    open.push(true);
                    if closed.is_some() {
                        open_at.push(start);
                    }
                    path.push(Seg::Key(c.member_name()?));
                    continue;
                }
            }
            b'[' => {
                c.i += 1;
                c.ws();
                if c.peek() == Some(b']') {
                    c.i += 1;
                } else {
                    open.push(false);
                    if closed.is_some() {
                        open_at.push(start);
                    }
                    path.push(Seg::Index(0));
                    continue;
                }
            }
            b'"' => {
                let s = c.string()?;
                f(&path, start..c.i, Scalar::Str(s));
            }
            b'-' | b'0'..=b'9' => {
                let n = c.number()?;
                f(&path, start..c.i, Scalar::Num(n));
            }
            b't' => c.literal(b"true")?,
            b'f' => c.literal(b"false")?,
            b'n' => c.literal(b"null")?,
            _ => return Err(NotJson),
        }
        // The value ended: close every container that ends with it, then go to the next value.
        loop {
            let Some(&is_object) = open.last() else {
                return Ok(());
            };
            c.ws();
            match (c.peek(), is_object) {
                (Some(b','), true) => {
                    c.i += 1;
                    c.ws();
                    let name = c.member_name()?;
                    if let Some(last) = path.last_mut() {
                        *last = Seg::Key(name);
                    }
                    break;
                }
                (Some(b','), false) => {
                    c.i += 1;
                    if let Some(Seg::Index(n)) = path.last_mut() {
                        *n += 1;
                    }
                    break;
                }
                (Some(b'}'), true) | (Some(b']'), false) => {
                    c.i += 1;
                    open.pop();
                    path.pop();
                    if let (Some(closed), Some(at)) = (closed.as_deref_mut(), open_at.pop()) {
                        while closed.last().is_some_and(|inner| inner.start >= at) {
                            closed.pop();
                        }
                        closed.push(at..c.i);
                    }
                }
                _ => return Err(NotJson),
            }
        }
    }
}

struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), NotJson> {
        if self.bytes.get(self.i..self.i + word.len()) == Some(word) {
            self.i += word.len();
            Ok(())
        } else {
            Err(NotJson)
        }
    }

    /// `"name"` and the `:` after it (whitespace around allowed); the cursor stops before the
    /// member's value.
    fn member_name(&mut self) -> Result<String, NotJson> {
        if self.peek() != Some(b'"') {
            return Err(NotJson);
        }
        let name = self.string()?.into_owned();
        self.ws();
        if self.peek() != Some(b':') {
            return Err(NotJson);
        }
        self.i += 1;
        Ok(name)
    }

    fn slice(&self, range: Range<usize>) -> Result<&'a str, NotJson> {
        self.text.get(range).ok_or(NotJson)
    }

    /// A string starting at the cursor's `"`, escapes undone.
    fn string(&mut self) -> Result<Cow<'a, str>, NotJson> {
        self.i += 1;
        let start = self.i;
        let plain_end = self.plain_run();
        match self.peek() {
            Some(b'"') => {
                self.i += 1;
                return Ok(Cow::Borrowed(self.slice(start..plain_end)?));
            }
            Some(b'\\') => {}
            _ => return Err(NotJson),
        }
        let mut out = String::from(self.slice(start..plain_end)?);
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.i += 1;
                    let escape = self.peek().ok_or(NotJson)?;
                    self.i += 1;
                    out.push(match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(NotJson),
                    });
                }
                Some(_) => {
                    let from = self.i;
                    let to = self.plain_run();
                    if to == from {
                        // A control character, which JSON strings must escape.
                        return Err(NotJson);
                    }
                    out.push_str(self.slice(from..to)?);
                }
                None => return Err(NotJson),
            }
        }
    }

    /// Advance over characters that stand for themselves in a string; returns where they end.
    fn plain_run(&mut self) -> usize {
        while let Some(b) = self.peek() {
            if b == b'"' || b == b'\\' || b < 0x20 {
                break;
            }
            self.i += 1;
        }
        self.i
    }

    /// The character of a `\uXXXX` escape (the `\u` already read), pairing surrogates; half a
    /// pair is U+FFFD.
    fn unicode_escape(&mut self) -> Result<char, NotJson> {
        let hi = self.hex4()?;
        if !(0xD800..0xDC00).contains(&hi) {
            return Ok(char::from_u32(hi).unwrap_or('\u{FFFD}'));
        }
        if self.bytes.get(self.i..self.i + 2) == Some(b"\\u") {
            let back = self.i;
            self.i += 2;
            let lo = self.hex4()?;
            if (0xDC00..0xE000).contains(&lo) {
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                return Ok(char::from_u32(c).unwrap_or('\u{FFFD}'));
            }
            // Not the second half: read that escape on its own.
            self.i = back;
        }
        Ok('\u{FFFD}')
    }

    fn hex4(&mut self) -> Result<u32, NotJson> {
        let digits = self.slice(self.i..self.i + 4)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(NotJson);
        }
        self.i += 4;
        u32::from_str_radix(digits, 16).map_err(|_| NotJson)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` at the cursor, as spelled.
    fn number(&mut self) -> Result<&'a str, NotJson> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(NotJson),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.required_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.required_digits()?;
        }
        self.slice(start..self.i)
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
    }

    fn required_digits(&mut self) -> Result<(), NotJson> {
        let from = self.i;
        self.digits();
        if self.i == from { Err(NotJson) } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Every scalar as (path, spanned text, value).
    fn scalars(text: &str) -> Result<Vec<(Vec<Seg>, String, String)>, NotJson> {
        let mut out = Vec::new();
        for_each_scalar(text, &mut |path, span, s| {
            let value = match s {
                Scalar::Str(s) => s.into_owned(),
                Scalar::Num(n) => n.to_string(),
            };
            out.push((path.to_vec(), text[span].to_string(), value));
        })?;
        Ok(out)
    }

    fn key(k: &str) -> Seg {
        Seg::Key(k.to_string())
    }

    #[test]
    fn reports_strings_and_numbers_with_their_paths_and_spans_as_spelled() {
        let got =
            scalars(" {\"a\" : [1.50, {\"b\":\"x\\u00e9\\n\"}], \"n\":null, \"a\":-0e+1 } \n")
                .unwrap();
        assert_eq!(
            got,
            vec![
                (
                    vec![key("a"), Seg::Index(0)],
                    "1.50".to_string(),
                    "1.50".to_string()
                ),
                (
                    vec![key("a"), Seg::Index(1), key("b")],
                    "\"x\\u00e9\\n\"".to_string(),
                    "xé\n".to_string()
                ),
                (vec![key("a")], "-0e+1".to_string(), "-0e+1".to_string()),
            ]
        );
    }

    #[test]
    fn pairs_surrogate_escapes_and_reads_half_a_pair_as_a_replacement_character() {
        let got = scalars(r#"["\ud83d\ude00", "\ud83dx", "\ude00", "\ud83d\u0041"]"#).unwrap();
        let values: Vec<_> = got.into_iter().map(|(_, _, v)| v).collect();
        assert_eq!(values, ["😀", "\u{FFFD}x", "\u{FFFD}", "\u{FFFD}A"]);
    }

    #[test]
    fn refuses_what_is_not_one_json_value() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a:1}",
            "[01]",
            "[1.]",
            "[-]",
            "[1e]",
            "[\"a\nb\"]",
            "[\"\\x\"]",
            "[\"\\u12\"]",
            "[tru]",
            "[1] [2]",
            "[1]x",
            "\"unterminated",
            "[1}",
            "{\"a\":1]",
        ] {
            assert_eq!(scalars(bad), Err(NotJson), "{bad:?}");
        }
    }

    #[test]
    fn value_end_reads_one_value_and_says_where_it_ended_or_stopped() {
        let text = "[1, {\"a\": [2]}]\n {\"b\":\n 3} [DONE]";
        let first = value_end(text, 0).unwrap();
        assert_eq!(&text[..first], "[1, {\"a\": [2]}]");
        let second = value_end(text, first).unwrap();
        assert_eq!(&text[first..second], "\n {\"b\":\n 3}");
        // `[DONE]` is no value: the reader stops at the `D`.
        let stopped = value_end(text, second).unwrap_err();
        assert_eq!(stopped.at, second + 2);
        assert!(stopped.closed.is_empty());
        // An unclosed array: the outermost values that closed inside it, in order.
        let text = "[ [1, [2]], {\"c\": {}}, [";
        let stopped = value_end(text, 0).unwrap_err();
        assert_eq!(stopped.at, text.len());
        let closed: Vec<&str> = stopped.closed.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(closed, ["[1, [2]]", "{\"c\": {}}"]);
        assert_eq!(value_end("", 0).unwrap_err().at, 0);
        assert_eq!(value_end("[1]", 9).unwrap_err().at, 3);
    }

    #[test]
    fn reads_a_deep_body_without_recursing() {
        let depth = 200_000;
        let text = format!("{}\"x\"{}", "[".repeat(depth), "]".repeat(depth));
        let got = scalars(&text).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0.len(), depth);
    }
}
