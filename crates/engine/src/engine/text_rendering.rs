//! Text rendering (`Route::text_rendering`): a created record's string field rendered from
//! its sent text (a status's `content`), instead of some recording's text. An update that
//! sends the text again renders it again; one that does not leaves the field as stored.

use serde_json::Value;
use wraith_model::TextRendering;

use super::Call;
use crate::api::FieldSource;

/// Set the field `rule.at` of a created record to the rendering of the request's text field.
/// A request without the text field (or with a non-string one) leaves the field as rendered
/// from the template, as does a record without a string at `rule.at`.
pub(super) fn render_text(call: &Call<'_>, rule: &TextRendering, record: &mut Value) -> bool {
    let Some(text) = call.body_str(&rule.text_field) else {
        return false;
    };
    let Some(slot) = record.pointer_mut(&rule.at) else {
        return false;
    };
    if !slot.is_string() {
        return false;
    }
    *slot = Value::String(rule.render(text));
    true
}

/// The field source a rendered text reports: it is made from the request.
pub(super) const SOURCE: FieldSource = FieldSource::Echo;
