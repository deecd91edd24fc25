//! The scrubber's in-place JSON reader (`scrub/json_text.rs`, compiled here from its source:
//! the module is private to the crate) on arbitrary text. Every span it reports must be a
//! slice of the text holding the value it reports, and every document serde_json reads must
//! read here too.
#![no_main]

#[path = "../../crates/recording/src/scrub/json_text.rs"]
#[allow(dead_code)]
mod json_text;

use json_text::{Scalar, for_each_scalar};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let read = for_each_scalar(text, &mut |_path, span, value| {
        let spelled = text
            .get(span.clone())
            .expect("a span is a slice of the text");
        match value {
            Scalar::Num(n) => assert_eq!(n, spelled),
            Scalar::Str(s) => {
                assert!(spelled.starts_with('"') && spelled.ends_with('"') && spelled.len() >= 2);
                // serde_json refuses a lone surrogate escape, which the reader takes as U+FFFD.
                if let Ok(expected) = serde_json::from_str::<String>(spelled) {
                    assert_eq!(s, expected);
                }
            }
        }
    });
    // serde_json recurses; keep to what its own limit reads.
    if wraith_model::json_depth(text) < 100
        && serde_json::from_str::<serde_json::Value>(text).is_ok()
    {
        assert!(
            read.is_ok(),
            "serde_json reads {text:?}, the scrubber's reader does not"
        );
    }
});
