//! Text tags (`Route::text_tags`): a created record's array with one object per `#name` token
//! of its sent text (a status's `tags`), derived from the text instead of replaying some
//! recording's. The items are made by the rule alone (the name, constants, the name with a
//! learned prefix and suffix); no stored record is looked up. An update that sends the text
//! again re-derives them.

use serde_json::Value;
use wraith_model::TextTags;

use super::Call;

/// Replace the array `rule.at` of a created record with one item per distinct `#name` token
/// of the request's text field, in text order. A request without the text field (or with a
/// non-string one) names no tag: synth learned the rule only where such answers were empty.
/// A record without an array at `rule.at` is left as rendered.
pub(super) fn derive_tags(call: &Call<'_>, rule: &TextTags, record: &mut Value) {
    let text = call.body_str(&rule.text_field).unwrap_or("");
    let Some(slot) = record.pointer_mut(&rule.at) else {
        return;
    };
    if !slot.is_array() {
        return;
    }
    *slot = Value::Array(rule.items(text));
}

/// For an update: re-derive the array when the request sends the text field (a new text names
/// new tags); an update that does not send it leaves the record's tags as they were.
pub(super) fn rederive_tags(call: &Call<'_>, rule: &TextTags, record: &mut Value) {
    let sends_text = call.body_str(&rule.text_field).is_some();
    if sends_text {
        derive_tags(call, rule, record);
    }
}
