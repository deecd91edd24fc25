//! Recorded text on a terminal: what a recording holds (a path, a JSON key, a method) is
//! whatever its client sent, and a control character in it would reach the terminal as a
//! command (`ESC[2J` clears the screen) or reorder the line around it (a bidi override).

use std::borrow::Cow;

/// `text` with every character a terminal would act on written as an escape (`\u{1b}`,
/// `\n`, `\u{202e}`), as `str::escape_debug` writes it; all other text as it is. One rule for
/// every printout of recorded text, so no message escapes less than another. JSON output needs
/// none of this: its strings escape control characters themselves.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts_on_terminal) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts_on_terminal(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// C0, DEL and C1 control characters, and the bidirectional embeddings, overrides and
/// isolates (U+202A to U+202E, U+2066 to U+2069), which reorder the text printed after them.
fn acts_on_terminal(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn control_and_bidi_characters_are_escaped_and_other_text_is_kept() {
        assert_eq!(shown("/v1/items/é😀 \"a\\b\""), "/v1/items/é😀 \"a\\b\"");
        assert!(matches!(shown("/v1/items"), Cow::Borrowed(_)));
        assert_eq!(shown("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(shown("a\nb\tc\rd\0"), "a\\nb\\tc\\rd\\0");
        assert_eq!(shown("\u{7f}\u{85}\u{9f}"), "\\u{7f}\\u{85}\\u{9f}");
        assert_eq!(
            shown("\u{202a}\u{202e}x\u{202c}\u{2066}\u{2069}"),
            "\\u{202a}\\u{202e}x\\u{202c}\\u{2066}\\u{2069}"
        );
    }
}
