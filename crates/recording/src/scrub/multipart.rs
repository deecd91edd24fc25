//! The text fields of a `multipart/form-data` body (RFC 7578), located in place so the scrubber
//! can rewrite a field's value and keep every other byte of the framing as it was sent.
//!
//! The body is split the way `wraith-model`'s request key splits it (the recording crate depends
//! on nothing in the workspace, so the few lines are its own): parts between `--<boundary>`
//! lines, each a header block ending in an empty line (CRLF) and its content up to the CRLF
//! before the next delimiter. A body that does not split so has no fields here.

use std::ops::Range;

/// Larger values are file contents sent without a file name, not credentials.
const MAX_FIELD_BYTES: usize = 64 * 1024;

/// A text field: its name (`Content-Disposition: form-data; name="…"`) and where its value
/// lies in the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextField {
    pub name: String,
    pub value: Range<usize>,
}

/// The small text fields of `body` in body order: parts with a name and no file name, whose
/// own `Content-Type` is absent or `text/…`, of at most 64 KiB. `None` when `content_type`
/// names no boundary or the body does not split by it.
pub fn text_fields(content_type: &str, body: &[u8]) -> Option<Vec<TextField>> {
    let at = content_type.to_ascii_lowercase().find("boundary=")?;
    let boundary = content_type.get(at + "boundary=".len()..)?;
    let boundary = boundary.split(';').next()?.trim().trim_matches('"');
    if boundary.is_empty() {
        return None;
    }
    let delim = format!("--{boundary}").into_bytes();
    let mut fields = Vec::new();
    let mut pos = find(body, &delim, 0)? + delim.len();
    loop {
        let rest = body.get(pos..)?;
        if rest.starts_with(b"--") {
            break;
        }
        if rest.starts_with(b"\r\n") {
            pos += 2;
        }
        let next = find(body, &delim, pos)?;
        let mut end = next;
        if body.get(pos..next)?.ends_with(b"\r\n") {
            end -= 2;
        }
        let part = body.get(pos..end)?;
        let header_end = find(part, b"\r\n\r\n", 0)?;
        let headers = std::str::from_utf8(part.get(..header_end)?).ok();
        let value = pos + header_end + 4..end;
        if let Some(name) = headers.and_then(field_name)
            && value.len() <= MAX_FIELD_BYTES
        {
            fields.push(TextField { name, value });
        }
        pos = next + delim.len();
    }
    Some(fields)
}

/// The field name a part's headers give, when the part is a text field (no file name, no
/// media type other than `text/…`).
fn field_name(headers: &str) -> Option<String> {
    let mut name = None;
    for line in headers.split("\r\n") {
        let (key, value) = line.split_once(':')?;
        let key = key.trim();
        if key.eq_ignore_ascii_case("content-disposition") {
            let params = value.split(';').skip(1).filter_map(|p| p.split_once('='));
            for (k, v) in params {
                let k = k.trim().to_ascii_lowercase();
                if k.starts_with("filename") {
                    return None;
                }
                if k == "name" {
                    name = Some(v.trim().trim_matches('"').to_string());
                }
            }
        } else if key.eq_ignore_ascii_case("content-type") {
            let essence = value.split(';').next().unwrap_or("").trim();
            if !essence.to_ascii_lowercase().starts_with("text/") {
                return None;
            }
        }
    }
    name
}

/// The first `needle` in `hay` at or after `from`.
fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    memchr::memmem::find(hay.get(from..)?, needle).map(|i| i + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_fields_are_located_and_file_and_typed_parts_left_out() {
        let body = b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nbob\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"password\"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nhunter2\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"token\"; filename=\"t.txt\"\r\n\r\nfile\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"secret\"\r\nContent-Type: application/octet-stream\r\n\r\nbin\r\n\
--XyZ--\r\n";
        let fields = text_fields("multipart/form-data; Boundary=\"XyZ\"", body).unwrap();
        let got: Vec<_> = fields
            .iter()
            .map(|f| (f.name.as_str(), &body[f.value.clone()]))
            .collect();
        assert_eq!(got, [("user", &b"bob"[..]), ("password", &b"hunter2"[..])]);
        assert_eq!(text_fields("multipart/form-data", body), None);
        assert_eq!(
            text_fields("multipart/form-data; boundary=other", body),
            None
        );
        // Cut short: no closing delimiter.
        assert_eq!(
            text_fields("multipart/form-data; boundary=XyZ", &body[..60]),
            None
        );
    }
}
